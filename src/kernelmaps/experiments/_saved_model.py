"""A fitted model saved by ``kernelmaps fit`` and used by ``kernelmaps predict``.

:class:`SavedModel` holds the fitted scikit-learn pipeline (standardisation, feature map,
linear model) with what is needed to check new data: the feature names and their order,
the target's name, the task and the classes.  Its predictions are finite or refused
(:class:`NonFinitePredictionError`, naming the rows).  Model files are written and read by
:func:`kernelmaps.experiments.save_model` and :func:`kernelmaps.experiments.load_model`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from ..datasets import Dataset
from ..exceptions import NonFiniteOutputError
from ._pipeline import ALPHAS, build_pipeline

__all__ = [
    "ALPHAS",
    "ColumnMismatchError",
    "NonFinitePredictionError",
    "SavedModel",
    "build_pipeline",
]

#: At most this many offending rows are located and named.
_ROWS_SHOWN = 10


class ColumnMismatchError(ValueError):
    """New data whose columns do not match those the model was fitted on.

    Examples
    --------
    >>> from kernelmaps.experiments._saved_model import ColumnMismatchError
    >>> issubclass(ColumnMismatchError, ValueError)
    True
    """


class NonFinitePredictionError(NonFiniteOutputError):
    """Rows whose prediction overflowed: the model gives them no finite value.

    Attributes
    ----------
    rows : list of int
        The offending rows (counting from 0), at most ten of them.
    n_rows : int or None
        How many rows are affected, when known (``None``: at least ``len(rows)``).
    magnitude : float
        The largest absolute value among those rows' features.

    Examples
    --------
    >>> from kernelmaps.experiments import NonFinitePredictionError
    >>> err = NonFinitePredictionError([3], 1, 1e308)
    >>> err.rows, issubclass(NonFinitePredictionError, ValueError)
    ([3], True)
    """

    def __init__(self, rows: list[int], n_rows: int | None, magnitude: float) -> None:
        self.rows, self.n_rows, self.magnitude = list(rows), n_rows, float(magnitude)
        count = f"{n_rows}" if n_rows is not None else f"{len(self.rows)} or more"
        more = ", ..." if n_rows is None or n_rows > len(self.rows) else ""
        super().__init__(
            f"the prediction overflows float64 for {count} row(s) (rows "
            f"{', '.join(map(str, self.rows))}{more}, counting from 0): their values reach "
            f"{self.magnitude:.3g} in magnitude, far outside the rows the model was fitted "
            "on; rescale these rows as the training rows were, or drop them."
        )


@dataclasses.dataclass
class SavedModel:
    """A fitted pipeline with the description of the data it was fitted on.

    Attributes
    ----------
    pipeline : sklearn Pipeline
        ``StandardScaler -> FeatureRidge / FeatureRidgeClassifier(feature_map)``.
    feature_names : list of str
        The columns, in order, that new data must provide.
    target : str or None
        Name of the target column (ignored when present in new data).
    task : {"classification", "regression"}
    data_format : str
        Format of the training file (``"csv"``, ``"svmlight"``, ...).
    info : dict
        Method, n_components, kernel, gamma and its rule, alpha, training rows, versions.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.datasets import Dataset
    >>> from kernelmaps.experiments import make_model
    >>> from kernelmaps.experiments._saved_model import SavedModel
    >>> X = np.random.default_rng(0).random((50, 2))
    >>> model = make_model("rff", n_components=16, gamma=1.0).fit(X, X.sum(axis=1))
    >>> saved = SavedModel(model, ["a", "b"], "y", "regression", "csv")
    >>> new = Dataset("new", X[:3, ::-1], None, "unlabelled", feature_names=["b", "a"])
    >>> saved.predict(saved.check_columns(new, by_name=True)).shape
    (3,)
    """

    pipeline: Any
    feature_names: list[str]
    target: str | None
    task: str
    data_format: str
    info: dict[str, Any] = dataclasses.field(default_factory=dict)

    def check_columns(self, ds: Dataset, by_name: bool) -> np.ndarray:
        """The columns of ``ds`` in the order of training, or an error naming the mismatch.

        With ``by_name`` (CSV files), columns are matched by name: missing ones are an
        error, extra ones (the target among them) are ignored.  Otherwise the number of
        columns must match.
        """
        X = ds.X.toarray() if hasattr(ds.X, "toarray") else np.asarray(ds.X)
        if by_name and self.data_format == "csv":
            names = list(ds.feature_names)
            repeated = sorted({c for c in names if names.count(c) > 1} & set(self.feature_names))
            if repeated:
                raise ColumnMismatchError(
                    f"the data has several columns named {', '.join(map(repr, repeated))}; "
                    "give each column a distinct name, as in the training file."
                )
            missing = [c for c in self.feature_names if c not in names]
            if missing:
                shown = ", ".join(missing[:10]) + (", ..." if len(missing) > 10 else "")
                raise ColumnMismatchError(
                    f"the data lacks {len(missing)} column(s) the model was fitted on: {shown}. "
                    "Give a file with the same column names as the training file."
                )
            order = [names.index(c) for c in self.feature_names]
            return X[:, order]
        if X.shape[1] != len(self.feature_names):
            raise ColumnMismatchError(
                f"the data has {X.shape[1]} feature columns but the model was fitted on "
                f"{len(self.feature_names)}."
            )
        return X

    def predict(self, X: Any) -> np.ndarray:
        """Predictions of the pipeline for rows already checked by :meth:`check_columns`.

        The same values as ``pipeline.predict(X)``, but never NaN or infinite: the
        regression values (the decision values of a classifier) are checked.

        Raises
        ------
        NonFinitePredictionError
            When the prediction of some rows overflows (finite inputs far outside the
            training rows), naming those rows.
        """
        if self.task != "classification":
            return self._finite(self.pipeline.predict, X)
        scores = self._finite(self.pipeline.decision_function, X)
        classes = self.pipeline.classes_
        # The rule of FeatureRidgeClassifier.predict, applied to the checked scores.
        if scores.ndim == 1:
            return np.asarray(classes[(scores > 0).astype(int)])
        return np.asarray(classes[np.argmax(scores, axis=1)])

    def predict_proba(self, X: Any) -> np.ndarray:
        """The class probabilities of a classifier's pipeline for rows already checked by
        :meth:`check_columns`: one column per class, in the order of ``classes_``; the
        rows whose values overflow are refused as by :meth:`predict`.

        Raises
        ------
        NonFinitePredictionError
            When the probabilities of some rows are not finite, naming those rows.
        """
        return self._finite(self.pipeline.predict_proba, X)

    def predict_std(self, X: Any) -> np.ndarray:
        """A regression pipeline's prediction and the standard deviation of a new
        observation (``predict(X, return_std=True)`` of its model), shape (n, 2), for rows
        checked by :meth:`check_columns`; refused rows as by :meth:`predict`."""
        return self._finite(lambda X: np.column_stack(self.pipeline.predict(X, return_std=True)), X)

    def predict_interval(self, X: Any, coverage: float) -> np.ndarray:
        """A regression pipeline's prediction and its model's conformal interval
        (``predict_interval``), shape (n, 3): prediction, lower, upper."""

        def compute(X: Any) -> np.ndarray:
            head, model = self.pipeline[:-1], self.pipeline[-1]
            Xt = head.transform(X)
            bounds = model.predict_interval(Xt, coverage=coverage)
            return np.column_stack([model.predict(Xt), *bounds])

        return self._finite(compute, X)

    def _finite(self, compute: Callable[[Any], Any], X: Any) -> np.ndarray:
        """``compute(X)`` when every row's value is finite; else the rows, in an error."""
        try:
            with np.errstate(over="ignore", invalid="ignore"):  # checked below
                values = np.asarray(compute(X))
        except NonFiniteOutputError:
            rows = _failing_rows(compute, X)
            if not rows:  # no single row overflows: the error is not about rows
                raise
            n_rows = len(rows) if len(rows) < _ROWS_SHOWN else None
        else:
            finite = np.isfinite(values)
            if finite.all():
                return values
            bad = np.flatnonzero(~finite.reshape(finite.shape[0], -1).all(axis=1))
            rows, n_rows = bad[:_ROWS_SHOWN].tolist(), int(bad.size)
        block = X[rows]
        block = block.toarray() if hasattr(block, "toarray") else np.asarray(block)
        raise NonFinitePredictionError(rows, n_rows, float(np.max(np.abs(block))))


def _failing_rows(compute: Callable[[Any], Any], X: Any) -> list[int]:
    """The first rows (at most ten) whose ``compute`` raises or is not finite (bisection)."""
    found: list[int] = []

    def search(lo: int, hi: int) -> None:
        if len(found) >= _ROWS_SHOWN or lo >= hi:
            return
        try:
            with np.errstate(over="ignore", invalid="ignore"):
                values = np.asarray(compute(X[lo:hi]))
        except NonFiniteOutputError:
            if hi - lo == 1:
                found.append(lo)
                return
            mid = (lo + hi) // 2
            search(lo, mid)
            search(mid, hi)
            return
        finite = np.isfinite(values).reshape(hi - lo, -1).all(axis=1)
        found.extend(lo + int(j) for j in np.flatnonzero(~finite))

    search(0, X.shape[0])
    return found[:_ROWS_SHOWN]
