"""Tolerances for randomized assertions, each derived from a concentration bound.

Every randomized assertion in the suite fails with probability at most ``DELTA`` for a
given seed (when the code under test is correct).  With about a hundred such assertions
and the 100 seeds of ``KERNELMAPS_TEST_SEEDS=all``, the chance that a correct library
fails anywhere is below ``1e4 * DELTA = 1e-2``; with the default single seed, below 1e-4.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

#: Failure probability allowed to one randomized assertion for one seed.
DELTA = 1e-6


def hoeffding_radius(
    n_draws: int, value_range: float, n_events: int = 1, delta: float = DELTA
) -> float:
    """Radius ``eps`` with ``P(max over events |mean - E| >= eps) <= delta``.

    Hoeffding's inequality for the mean of ``n_draws`` independent variables, each within
    an interval of length ``value_range``, with a union bound over ``n_events``:
    ``eps = value_range * sqrt(log(2 n_events / delta) / (2 n_draws))``.
    """
    return value_range * math.sqrt(math.log(2.0 * n_events / delta) / (2.0 * n_draws))


def empirical_bernstein_radius(
    samples: np.ndarray, value_range: float, n_events: int = 1, delta: float = DELTA
) -> float:
    """Radius from the empirical Bernstein bound (Maurer & Pontil 2009, Theorem 4).

    For ``n`` i.i.d. samples in an interval of length ``value_range`` with sample variance
    ``V`` (the unbiased one), with probability at least ``1 - delta/2`` per side,
    ``|mean - E| <= sqrt(2 V log(4/delta') / n) + 7 R log(4/delta') / (3 (n - 1))``,
    ``delta' = delta / n_events``.  Tight when the variance is small (quasi-Monte Carlo,
    orthogonal features), valid whatever it is.
    """
    samples = np.asarray(samples, dtype=np.float64)
    n = samples.shape[0]
    log_term = math.log(4.0 * n_events / delta)
    variance = float(np.var(samples, axis=0, ddof=1).max()) if n > 1 else math.inf
    return math.sqrt(2.0 * variance * log_term / n) + 7.0 * value_range * log_term / (3.0 * (n - 1))


def median_of_means(samples: np.ndarray, delta: float = DELTA) -> tuple[float, int]:
    """Median-of-means estimate of ``E[samples]`` and the number of groups used.

    With ``k = ceil(8 log(1/delta))`` groups, ``|estimate - E| <= sqrt(32 s2 log(1/delta)
    / n)`` with probability ``>= 1 - delta`` for any variables of variance at most ``s2``
    (Chebyshev in each group, Hoeffding over the groups; Lugosi & Mendelson 2019).
    """
    samples = np.asarray(samples, dtype=np.float64)
    k = math.ceil(8.0 * math.log(1.0 / delta))
    if samples.shape[0] < k:
        raise ValueError(f"median of means needs at least {k} samples; got {samples.shape[0]}.")
    groups = np.array_split(samples, k)
    return float(np.median([g.mean() for g in groups])), k


def median_of_means_radius(n: int, variance_bound: float, delta: float = DELTA) -> float:
    """The radius ``sqrt(32 s2 log(1/delta) / n)`` of :func:`median_of_means`."""
    return math.sqrt(32.0 * variance_bound * math.log(1.0 / delta) / n)


def bernstein_radius(
    n_draws: int, variance: Any, bound: Any, n_events: int = 1, delta: float = DELTA
) -> Any:
    """Radius from Bernstein's inequality for the mean of ``n_draws`` independent variables.

    Each variable deviates from its mean by at most ``bound`` and has variance at most
    ``variance``; then ``P(|mean - E| >= eps) <= 2 exp(-n eps^2 / (2 v + 2 b eps / 3))``,
    and ``eps = sqrt(2 v L / n) + 2 b L / (3 n)`` with ``L = log(2 n_events / delta)``
    makes the right-hand side at most ``delta / n_events`` (union over ``n_events``).
    Arrays of variances and bounds give one radius per event.
    """
    log_term = math.log(2.0 * n_events / delta)
    return np.sqrt(2.0 * np.asarray(variance) * log_term / n_draws) + 2.0 * np.asarray(
        bound
    ) * log_term / (3.0 * n_draws)
