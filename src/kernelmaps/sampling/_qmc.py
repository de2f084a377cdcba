"""Low-discrepancy points of the unit cube, guarded away from its faces.

A thin layer over :mod:`scipy.stats.qmc`: the engines themselves are scipy's.  Points are
meant to be pushed through inverse CDFs, which are infinite at 0 and 1, so every point is
kept inside ``[2**-53, 1 - 2**-53]`` and, for unscrambled sequences (whose first point is
the origin), the first point is skipped.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.stats import qmc

__all__ = ["QMC_METHODS", "uniform_points"]

QMC_METHODS = ("halton", "sobol")

#: Points are clipped into [EDGE, 1 - EDGE]; both ends are exactly representable, and the
#: standard normal inverse CDF there is about -/+ 8.2.
EDGE = 2.0**-53


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
    if method not in QMC_METHODS:
        raise ValueError(f"method must be one of {QMC_METHODS}; got {method!r}.")
    engine_cls = qmc.Halton if method == "halton" else qmc.Sobol
    engine = engine_cls(d=dimension, scramble=scramble, rng=rng)
    if not scramble:
        engine.fast_forward(1)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*balance properties.*", category=UserWarning)
        points = engine.random(n_points)
    return np.clip(points, EDGE, 1.0 - EDGE, out=points)
