"""Models built on a registered feature map: ``StandardScaler -> map -> ridge``.

:func:`make_model` builds the unfitted pipeline that ``kernelmaps fit`` fits and saves;
:func:`choose_gamma` picks its bandwidth from the training rows.  The ridge penalty is
chosen among :data:`ALPHAS` by the exact leave-one-out error of
:class:`kernelmaps.models.FeatureRidge` (or ``FeatureRidgeClassifier``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._registry import BANDWIDTH_KERNELS, MethodSpec, get_method

__all__ = [
    "ALPHAS",
    "METHOD_ALIASES",
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


def resolve_method(method: str) -> MethodSpec:
    """The registered method named ``method`` or one of its :data:`METHOD_ALIASES`.

    Examples
    --------
    >>> from kernelmaps.experiments import resolve_method
    >>> resolve_method("nystroem").name
    'nystroem-kmeans'
    """
    return get_method(METHOD_ALIASES.get(method, method))


def build_pipeline(feature_map: Any, task: str) -> Any:
    """``StandardScaler -> ridge on feature_map``, the penalty chosen by leave-one-out.

    Uses :class:`kernelmaps.models.FeatureRidge` / ``FeatureRidgeClassifier`` (streamed
    Gram matrix, exact leave-one-out over :data:`ALPHAS`).

    Examples
    --------
    >>> from kernelmaps import RandomFourierFeatures
    >>> from kernelmaps.experiments import build_pipeline
    >>> pipe = build_pipeline(RandomFourierFeatures("rbf", n_components=64), "regression")
    >>> [name for name, _ in pipe.steps]
    ['standardscaler', 'featureridge']
    """
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from ..models import FeatureRidge, FeatureRidgeClassifier

    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}; got {task!r}.")
    model: Any
    if task == "classification":
        model = FeatureRidgeClassifier(feature_map=feature_map, alphas=list(ALPHAS))
    else:
        model = FeatureRidge(feature_map=feature_map, alphas=list(ALPHAS))
    return make_pipeline(StandardScaler(), model)


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

    The ridge (regression) or ridge classifier picks its penalty among :data:`ALPHAS` by
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
        from sklearn.preprocessing import StandardScaler

        from ..bandwidth import gamma_from_data

        median = gamma_from_data(StandardScaler().fit_transform(X), "median", kernel=kernel)
        return median, "median heuristic on the standardised training rows"
    default = spec.kernel_params.get("gamma") if kernel == spec.kernel else None
    return default, "the method's default"
