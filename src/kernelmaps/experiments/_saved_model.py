"""A fitted model saved by ``kernelmaps fit`` and used by ``kernelmaps predict``.

:class:`SavedModel` holds the fitted scikit-learn pipeline (standardisation, feature map,
linear model) with what is needed to check new data: the feature names and their order,
the target's name, the task and the classes.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ..datasets import Dataset
from ._pipeline import ALPHAS, build_pipeline

__all__ = ["ALPHAS", "ColumnMismatchError", "SavedModel", "build_pipeline"]


class ColumnMismatchError(ValueError):
    """New data whose columns do not match those the model was fitted on.

    Examples
    --------
    >>> from kernelmaps.experiments._saved_model import ColumnMismatchError
    >>> issubclass(ColumnMismatchError, ValueError)
    True
    """


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
        """Predictions of the pipeline for rows already checked by :meth:`check_columns`."""
        return np.asarray(self.pipeline.predict(X))
