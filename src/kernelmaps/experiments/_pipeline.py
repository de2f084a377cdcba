"""Models built on a registered feature map: ``StandardScaler -> map -> ridge``.

:func:`make_model` builds the unfitted pipeline that ``kernelmaps fit`` fits and saves;
:func:`choose_gamma` picks its bandwidth from the training rows.  The ridge penalty is
chosen among ``ALPHAS`` by the exact leave-one-out error of
:class:`kernelmaps.models.FeatureRidge` (or ``FeatureRidgeClassifier``).

The standardisation is :class:`FiniteStandardScaler`, scikit-learn's ``StandardScaler``
that refuses training rows whose mean or variance overflows float64 (values beyond about
1e154 in magnitude) instead of returning NaN or zeroing the column.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.preprocessing import StandardScaler

from ..exceptions import NonFiniteOutputError
from ._registry import BANDWIDTH_KERNELS, MethodSpec, get_method, method_names, unknown_method

__all__ = [
    "ALPHAS",
    "METHOD_ALIASES",
    "FiniteStandardScaler",
    "build_pipeline",
    "choose_gamma",
    "make_model",
    "resolve_method",
]

#: Candidate ridge penalties; the one with the smallest leave-one-out error is kept.
ALPHAS = tuple(float(a) for a in np.logspace(-6, 2, 9))

#: Short names accepted for ``method`` (and by ``kernelmaps fit --method``).
METHOD_ALIASES = {"rff": "rff-mc", "qmc-rff": "rff-sobol", "nystroem": "nystroem-kmeans"}

TASKS = ("regression", "classification")


class FiniteStandardScaler(StandardScaler):
    """``StandardScaler`` whose fit refuses rows whose mean or variance overflows.

    scikit-learn's scaler sums the values and their squares in float64: finite values
    beyond about 1e154 in magnitude (1e308 for the sum itself) make the mean or the
    variance infinite, and the standardised column NaN or silently zero.  This scaler
    computes the same statistics and raises
    :class:`~kernelmaps.exceptions.NonFiniteOutputError` naming the columns instead.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.experiments import FiniteStandardScaler
    >>> FiniteStandardScaler().fit([[1.0, 2.0], [3.0, 6.0]]).scale_.tolist()
    [1.0, 2.0]
    >>> FiniteStandardScaler().fit([[1.0, -1e300], [3.0, 1e300]])
    Traceback (most recent call last):
    ...
    kernelmaps.exceptions.NonFiniteOutputError: standardising the training rows overflows ...
    """

    def partial_fit(self, X: Any, y: Any = None, sample_weight: Any = None) -> Any:
        """Update the mean and variance with the rows ``X``; refuse an overflow.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : None
            Ignored.
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self

        Raises
        ------
        kernelmaps.exceptions.NonFiniteOutputError
            When the mean or the variance of a column is not finite although its values
            are: the column's values are too large for float64 arithmetic.
        """
        with np.errstate(over="ignore", invalid="ignore"):
            super().partial_fit(X, y, sample_weight)
        stats = [s for s in (self.mean_, self.var_, self.scale_) if s is not None]
        if all(np.isfinite(s).all() for s in stats):
            return self
        bad = np.zeros(self.n_features_in_, dtype=bool)
        for s in stats:
            bad |= ~np.isfinite(s)
        raise NonFiniteOutputError(_overflow_message(np.flatnonzero(bad), self))

    def transform(self, X: Any, copy: bool | None = None) -> Any:
        """Standardise ``X``; refuse values that overflow once standardised.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        copy : bool, default=None
            Copy the input (default: the ``copy`` parameter).

        Returns
        -------
        X_tr : {ndarray, sparse matrix} of shape (n_samples, n_features)

        Raises
        ------
        kernelmaps.exceptions.NonFiniteOutputError
            When a finite value becomes infinite: it is too far from the training
            mean, in training standard deviations, for float64.
        """
        with np.errstate(over="ignore", invalid="ignore"):
            out = super().transform(X, copy=copy)
        values = out.data if hasattr(out, "toarray") else np.asarray(out)
        if np.isfinite(values).all():
            return out
        dense_out = out.toarray() if hasattr(out, "toarray") else np.asarray(out)
        dense_in = X.toarray() if hasattr(X, "toarray") else np.asarray(X, dtype=np.float64)
        overflow = np.isinf(dense_out) & ~np.isinf(dense_in)
        if not overflow.any():  # NaN and infinite inputs stay so, as in StandardScaler
            return out
        rows = np.flatnonzero(overflow.any(axis=1))
        peak = float(np.max(np.abs(dense_in[rows])))
        raise NonFiniteOutputError(
            f"standardising the rows overflows float64 in {rows.size} row(s) (the first: "
            f"row {rows[0]}, counting from 0): values up to {peak:.3g} in magnitude, divided "
            "by the training standard deviation, exceed the largest float64; rescale these "
            "rows as the training rows were, or drop them."
        )


def _overflow_message(columns: np.ndarray, scaler: Any) -> str:
    """The error of :class:`FiniteStandardScaler` for the overflowing ``columns``."""
    names = getattr(scaler, "feature_names_in_", None)
    shown = [repr(str(names[j])) if names is not None else str(j) for j in columns[:10]]
    more = ", ..." if len(columns) > 10 else ""
    which = "column" if names is not None else "column index"
    which += "s" if len(columns) > 1 else ""
    return (
        f"standardising the training rows overflows float64 in {which} "
        f"{', '.join(shown)}{more}: their values are too large for their mean and variance "
        "(squares beyond about 1e308) to be computed; rescale these columns (divide them by "
        "a power of ten) so that their values stay well below 1e150 in magnitude, and fit "
        "again."
    )


def resolve_method(method: str) -> MethodSpec:
    """The registered method named ``method`` or one of its :data:`METHOD_ALIASES`.

    Examples
    --------
    >>> from kernelmaps.experiments import resolve_method
    >>> resolve_method("nystroem").name
    'nystroem-kmeans'
    """
    name = METHOD_ALIASES.get(method, method)
    if name not in method_names():
        raise unknown_method(method, METHOD_ALIASES)
    return get_method(name)


def build_pipeline(feature_map: Any, task: str) -> Any:
    """``StandardScaler -> ridge on feature_map``, the penalty chosen by leave-one-out.

    Uses :class:`kernelmaps.models.FeatureRidge` / ``FeatureRidgeClassifier`` (streamed
    Gram matrix, exact leave-one-out over ``ALPHAS``); the scaler is a
    :class:`FiniteStandardScaler` (step ``"standardscaler"``).

    Examples
    --------
    >>> from kernelmaps import RandomFourierFeatures
    >>> from kernelmaps.experiments import build_pipeline
    >>> pipe = build_pipeline(RandomFourierFeatures("rbf", n_components=64), "regression")
    >>> [name for name, _ in pipe.steps]
    ['standardscaler', 'featureridge']
    """
    from sklearn.pipeline import Pipeline

    from ..models import FeatureRidge, FeatureRidgeClassifier

    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}; got {task!r}.")
    model: Any
    if task == "classification":
        model = FeatureRidgeClassifier(feature_map=feature_map, alphas=list(ALPHAS))
    else:
        model = FeatureRidge(feature_map=feature_map, alphas=list(ALPHAS))
    return Pipeline(
        [("standardscaler", FiniteStandardScaler()), (type(model).__name__.lower(), model)]
    )


def make_model(
    method: str = "rff",
    task: str = "regression",
    *,
    n_components: int = 2048,
    kernel: str | None = None,
    gamma: float | None = None,
    random_state: Any = 0,
) -> Any:
    """The unfitted pipeline ``StandardScaler -> feature map -> ridge`` of a method.

    The ridge (regression) or ridge classifier picks its penalty among ``ALPHAS`` by
    exact leave-one-out error on the features (Rifkin & Lippert, 2007).

    Parameters
    ----------
    method : str, default="rff"
        A registered method (:func:`kernelmaps.experiments.method_names`) or an alias
        (:data:`METHOD_ALIASES`).
    task : {"regression", "classification"}, default="regression"
    n_components : int, default=2048
        Number of features.
    kernel : str, default=None
        Kernel to approximate (default: the method's own); the method must support it.
    gamma : float, default=None
        Kernel bandwidth on the standardised features (default: the method's;
        :func:`choose_gamma` picks one from data).
    random_state : int, default=0
        Seed of the feature map.

    Returns
    -------
    sklearn.pipeline.Pipeline

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.experiments import make_model
    >>> X = np.random.default_rng(0).random((80, 3))
    >>> y = np.sin(3 * X[:, 0])
    >>> model = make_model("rff", "regression", n_components=64, gamma=0.5).fit(X, y)
    >>> bool(model.score(X, y) > 0.9)
    True
    """
    spec = resolve_method(method)
    kernel = kernel or spec.kernel
    if not spec.supports(kernel):
        raise ValueError(f"method {spec.name!r} cannot approximate the {kernel!r} kernel.")
    kernel_params = dict(spec.kernel_params) if kernel == spec.kernel else {}
    if gamma is not None:
        kernel_params["gamma"] = gamma
    kernel_params["kernel"] = kernel
    return build_pipeline(spec.factory(n_components, kernel_params, random_state), task)


def choose_gamma(
    method: str, X: Any, *, gamma: float | None = None, kernel: str | None = None
) -> tuple[float | None, str]:
    """The bandwidth :func:`make_model` should get for training rows ``X``, and its rule.

    ``gamma`` when given; for a shift-invariant kernel, the median heuristic on the
    standardised rows (:func:`kernelmaps.bandwidth.gamma_from_data`); otherwise the
    method's default (possibly ``None``).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.experiments import choose_gamma
    >>> X = np.random.default_rng(0).random((50, 4))
    >>> gamma, rule = choose_gamma("rff", X)
    >>> round(gamma, 3) > 0, rule
    (True, 'median heuristic on the standardised training rows')
    """
    spec = resolve_method(method)
    kernel = kernel or spec.kernel
    if gamma is not None:
        return gamma, "given"
    if kernel in BANDWIDTH_KERNELS:
        from ..bandwidth import gamma_from_data

        standardised = FiniteStandardScaler().fit_transform(X)
        median = gamma_from_data(standardised, "median", kernel=kernel)
        return median, "median heuristic on the standardised training rows"
    default = spec.kernel_params.get("gamma") if kernel == spec.kernel else None
    return default, "the method's default"
