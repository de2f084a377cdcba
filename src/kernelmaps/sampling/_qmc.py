"""Low-discrepancy points of the unit cube, guarded away from its faces.

A thin layer over :mod:`scipy.stats.qmc`: the engines themselves are scipy's.  Points are
meant to be pushed through inverse CDFs, which are infinite at 0 and 1, so every point is
kept inside ``[2**-53, 1 - 2**-53]`` and, for unscrambled sequences (whose first point is
the origin), the first point is skipped.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy.stats import qmc

from .._memory import check_memory
from ._arguments import check_count, check_generator

__all__ = ["QMC_METHODS", "uniform_points"]

QMC_METHODS = ("halton", "sobol")

#: The largest dimension of scipy's Sobol' direction numbers (Joe & Kuo 2008).
SOBOL_MAX_DIMENSION = 21201

#: Points are clipped into [EDGE, 1 - EDGE]; both ends are exactly representable, and the
#: standard normal inverse CDF there is about -/+ 8.2.
EDGE = 2.0**-53


def _halton_scramble_bytes(dimension: int) -> float:
    """Bytes of scipy's scrambled Halton permutations in ``dimension`` dimensions.

    Base ``p`` (the ``k``-th prime for dimension ``k``) keeps ``ceil(54 / log2 p) - 1``
    int64 permutations of ``p`` digits (Owen 2017), so the total grows like ``d^2 log d``
    (0.7 GB at ``d = 2000``, 2 GB at ``d = 4000``) and so does the time to shuffle them.
    Beyond ``10^5`` dimensions the lower bound ``8 d (d + 1) / 2`` bytes (``p_k >= k``,
    at least one permutation) is returned instead of sieving the primes.
    """
    if dimension > 100_000:
        return 4.0 * dimension * (dimension + 1)
    k = max(dimension, 6)
    bound = int(k * (math.log(k) + math.log(math.log(k)))) + 3  # p_k < bound (Rosser)
    sieve = np.ones(bound, dtype=bool)
    sieve[:2] = False
    for i in range(2, math.isqrt(bound) + 1):
        if sieve[i]:
            sieve[i * i :: i] = False
    primes = np.flatnonzero(sieve)[:dimension].astype(np.float64)
    counts = np.ceil(54.0 / np.log2(primes)) - 1.0
    return float(8.0 * np.sum(primes * counts))


def uniform_points(
    n_points: int,
    dimension: int,
    method: str,
    *,
    scramble: bool = True,
    rng: np.random.Generator | None = None,
) -> np.ndarray:
    """``n_points`` quasi-random points of ``(0, 1)^dimension``.

    Parameters
    ----------
    n_points, dimension : int
        Shape of the result.
    method : {"halton", "sobol"}
        Sequence.  Sobol' points keep their balance properties when ``n_points`` is a
        power of two; other counts use the first ``n_points`` points of the sequence.
    scramble : bool, default=True
        Randomize the sequence (scipy's scrambling: LMS and digital shift for Sobol',
        random digit permutations for Halton); each scrambled point is then uniformly
        distributed and Monte Carlo estimates built on it are unbiased.
    rng : numpy.random.Generator, optional
        Source of the scrambling.

    Returns
    -------
    ndarray of shape (n_points, dimension)

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.sampling import uniform_points
    >>> U = uniform_points(8, 2, "sobol", rng=np.random.default_rng(0))
    >>> U.shape, bool(np.all((U > 0) & (U < 1)))
    ((8, 2), True)
    """
    n_points = check_count(n_points, "n_points", minimum=0)
    dimension = check_count(dimension, "dimension")
    if not isinstance(method, str) or method not in QMC_METHODS:
        raise ValueError(f"method must be one of {QMC_METHODS}; got {method!r}.")
    if not isinstance(scramble, (bool, np.bool_)):
        raise TypeError(f"scramble must be True or False; got {scramble!r}.")
    check_generator(rng, optional=True)
    if method == "sobol" and dimension > SOBOL_MAX_DIMENSION:
        raise ValueError(
            f"Sobol' points exist up to dimension {SOBOL_MAX_DIMENSION} (scipy's direction "
            f"numbers); got dimension={dimension}. Use Monte Carlo or orthogonal draws for "
            "data of this many features, or reduce them first (e.g. with PCA)."
        )
    check_memory(
        8.0 * n_points * dimension
        + (_halton_scramble_bytes(dimension) if method == "halton" and scramble else 0.0),
        f"uniform_points: {n_points} {method} points in dimension {dimension}"
        + (" and their scrambling permutations" if method == "halton" and scramble else ""),
        "draw fewer points, reduce the dimension, or use method='sobol'",
    )
    engine_cls = qmc.Halton if method == "halton" else qmc.Sobol
    engine = engine_cls(d=dimension, scramble=bool(scramble), rng=rng)
    if not scramble:
        engine.fast_forward(1)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*balance properties.*", category=UserWarning)
        points = engine.random(n_points)
    return np.clip(points, EDGE, 1.0 - EDGE, out=points)
