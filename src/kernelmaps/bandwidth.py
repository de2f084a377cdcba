"""Bandwidth rules: data-driven choices of a kernel's ``gamma``.

=====================  ==================================================================
rule                   gamma for the Gaussian kernel ``exp(-gamma |x - y|^2)``
=====================  ==================================================================
``"mean_distance"``    ``1 / (2 sigma^2)``, ``sigma`` = mean distance of the points to their
                       mean (the rule of Deshmukh's kernel approximation study)
``"median"``           ``1 / (2 sigma^2)``, ``sigma`` = median pairwise distance
                       (the median heuristic), on at most ``max_samples`` points
``"percentile"``       ``1 / (2 sigma^2)``, ``sigma^2`` = the ``q``-th percentile of squared
                       pairwise distances (the IKA paper: ``q = 10`` with the kernel
                       ``exp(-|x - y|^2 / (2 sigma^2))``)
=====================  ==================================================================

For the L1-distance kernels (``"laplacian"``) the same rules use L1 distances and
``gamma = 1 / sigma``.
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.metrics.pairwise import pairwise_distances
from sklearn.utils import check_array
from sklearn.utils.validation import _check_sample_weight

from ._random import check_random_state
from ._validation import one_line_errors
from .kernels import check_data_gamma

__all__ = ["BANDWIDTH_RULES", "gamma_from_data"]

BANDWIDTH_RULES = ("mean_distance", "median", "percentile")

_L1_KERNELS = {"laplacian"}


def _check_rule_arguments(rule: str, kernel: Any, weighted: bool, q: Any, max_samples: Any) -> None:
    """The one-line errors of :func:`gamma_from_data`'s arguments other than the data."""
    if rule not in BANDWIDTH_RULES:
        raise ValueError(f"rule must be one of {BANDWIDTH_RULES}; got {rule!r}.")
    if not isinstance(kernel, str):
        raise TypeError(f"kernel must be a kernel name such as 'rbf'; got {kernel!r}.")
    if weighted and rule != "mean_distance":
        raise ValueError(
            f"sample_weight is taken by rule='mean_distance' only; got rule={rule!r}. "
            "Drop sample_weight or use rule='mean_distance'."
        )
    if rule == "percentile" and not (isinstance(q, Real) and 0.0 < float(q) < 100.0):
        raise ValueError(f"q must be in (0, 100); got {q!r}.")
    if isinstance(max_samples, bool) or not isinstance(max_samples, Integral) or max_samples < 2:
        raise ValueError(f"max_samples must be an integer >= 2; got {max_samples!r}.")


def gamma_from_data(
    X: Any,
    rule: str = "mean_distance",
    *,
    kernel: str = "rbf",
    q: float = 10.0,
    max_samples: int = 2000,
    random_state: Any = 0,
    sample_weight: Any = None,
) -> float:
    """``gamma`` for ``kernel`` chosen from the data ``X`` by a bandwidth rule.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    rule : {"mean_distance", "median", "percentile"}, default="mean_distance"
        See the module docstring.
    kernel : str, default="rbf"
        Kernel name; ``"laplacian"`` uses L1 distances and ``gamma = 1 / sigma``.
    q : float, default=10.0
        Percentile for ``rule="percentile"``.
    max_samples : int, default=2000
        Pairwise rules use a random subset of at most this many points.
    random_state : int, Generator or None, default=0
        Choice of that subset.
    sample_weight : array-like of shape (n_samples,) or None, default=None
        Weights of the rows, for ``rule="mean_distance"`` only: the weighted mean
        ``xbar = sum_i s_i x_i / sum_i s_i`` and ``sigma = sum_i s_i |x_i - xbar| /
        sum_i s_i``, so that integer weights give the rule of the rows repeated.

    Returns
    -------
    float

    Raises
    ------
    NonFiniteOutputError
        The rule's ``gamma`` is not a normal number of the data's float dtype with a
        margin (data of magnitude beyond about ``1e150`` or below ``1e-150`` in float64,
        see :func:`kernelmaps.kernels.check_data_gamma`): the message names
        the fix, rescaling the data or giving ``gamma`` explicitly.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.bandwidth import gamma_from_data
    >>> X = np.array([[0.0, 0.0], [2.0, 0.0], [0.0, 2.0], [2.0, 2.0]])
    >>> round(gamma_from_data(X), 6)  # every point lies sqrt(2) from the mean: 1 / (2 * 2)
    0.25
    >>> round(gamma_from_data(X, kernel="laplacian"), 6)  # L1 distance 2: gamma = 1 / 2
    0.5
    >>> w = np.array([2, 1, 1, 3])  # integer weights: the rule of the rows repeated
    >>> bool(np.isclose(gamma_from_data(X, sample_weight=w),
    ...                 gamma_from_data(np.repeat(X, w, axis=0)), rtol=1e-14))
    True
    """
    _check_rule_arguments(rule, kernel, sample_weight is not None, q, max_samples)
    dtype = np.float32 if getattr(X, "dtype", None) == np.float32 else np.float64
    with one_line_errors():
        X = check_array(X, accept_sparse=False, dtype=np.float64)
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, ensure_non_negative=True)
    if rule != "mean_distance" and X.shape[0] < 2:
        raise ValueError(
            f"The {rule!r} bandwidth rule needs at least 2 rows (it uses pairwise "
            f"distances); got {X.shape[0]}. Use rule='mean_distance' or set gamma explicitly."
        )
    l1 = kernel.lower() in _L1_KERNELS
    metric = "manhattan" if l1 else "euclidean"
    # The rules are scale-equivariant: work at unit scale (a power of two, exact), so that
    # distances neither overflow nor underflow, and scale gamma back at the end.
    largest = float(np.max(np.abs(X))) if X.size else 0.0
    unit = math.ldexp(1.0, math.frexp(largest)[1] - 1) if largest > 0.0 else 1.0
    X = X / unit
    if rule == "mean_distance":
        centered = X - np.average(X, axis=0, weights=sample_weight)
        dist = np.abs(centered).sum(axis=1) if l1 else np.linalg.norm(centered, axis=1)
        sigma = float(np.average(dist, weights=sample_weight))
        sigma2 = sigma**2
    else:
        rng = check_random_state(random_state)
        if X.shape[0] > max_samples:
            X = X[rng.choice(X.shape[0], size=max_samples, replace=False)]
        D = pairwise_distances(X, metric=metric)
        pairs = D[np.triu_indices(X.shape[0], k=1)]
        if rule == "median":
            sigma = float(np.median(pairs))
            sigma2 = sigma**2
        else:
            sigma2 = (
                float(np.percentile(pairs**2, q)) if not l1 else float(np.percentile(pairs, q)) ** 2
            )
            sigma = float(np.sqrt(sigma2))
    if sigma <= 0.0 or sigma2 <= 0.0:
        raise ValueError(
            f"The {rule!r} bandwidth rule gives zero on this data (all points equal?); "
            "set gamma explicitly."
        )
    with np.errstate(over="ignore", under="ignore"):
        gamma = (
            float(np.float64(1.0) / (np.float64(sigma) * unit))
            if l1
            else float(np.float64(0.5) / (np.float64(sigma2) * unit) / unit)
        )
    return check_data_gamma(gamma, f"The {rule!r} bandwidth rule", largest, dtype)
