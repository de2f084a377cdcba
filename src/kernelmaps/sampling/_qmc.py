"""Low-discrepancy points of the unit cube, randomized, guarded away from its faces.

A thin layer over :mod:`scipy.stats.qmc`: the engines themselves are scipy's.  Points are
meant to be pushed through inverse CDFs, which are infinite at 0 and 1, so every point is
kept inside ``[2**-53, 1 - 2**-53]``.

Randomizations (``scramble``):

* ``"shift"`` (Sobol' only; the default for Sobol'): the unscrambled Joe-Kuo points, the
  origin included, XOR one uniform random vector (a random digital shift, Dick & Pillichshammer
  2010, section 4.4).  The shift maps every elementary interval of the base-2 grid onto
  another one, so the first ``2^m`` points stay a ``(t, m, d)``-net with the t-values of the
  Joe-Kuo direction numbers, which were optimized for their two-dimensional projections;
  each shifted point is uniform on the cube, so estimates built on them are unbiased.
* ``True``: scipy's scrambling -- linear matrix scrambling plus a digital shift for Sobol'
  (the net stays a net, but with random generator matrices that lose the optimized
  projections), random digit permutations for Halton.
* ``False``: the deterministic sequence without its first point (the origin, which no
  inverse CDF can take).  Without the origin the first ``2^m`` Sobol' points are not a net.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.stats import qmc

from .._memory import check_memory
from ._arguments import check_count, check_generator

__all__ = [
    "QMC_METHODS",
    "SCRAMBLE_OPTIONS",
    "draw_uniform_points",
    "resolve_scramble",
    "sobol_balance_message",
    "uniform_points",
]

QMC_METHODS = ("halton", "sobol")

#: The values of ``scramble``: ``"auto"`` is ``"shift"`` for Sobol', ``True`` for Halton.
SCRAMBLE_OPTIONS = ("auto", "shift", True, False)

#: The largest dimension of scipy's Sobol' direction numbers (Joe & Kuo 2008).
SOBOL_MAX_DIMENSION = 21201

#: The largest dimension of the Halton points drawn.  scipy finds the first ``d`` primes
#: in time growing about as ``d^2`` (0.8 s at ``d = 10^5``, 6 s at ``3 10^5``, over a
#: minute at ``10^6``), and in such dimensions the large bases leave the points' leading
#: coordinates no better than random ones.
HALTON_MAX_DIMENSION = 100_000

#: Points are clipped into [EDGE, 1 - EDGE]; both ends are exactly representable, and the
#: standard normal inverse CDF there is about -/+ 8.2.
EDGE = 2.0**-53

#: Binary digits of scipy's Sobol' points (its default): the points are multiples of
#: 2**-SOBOL_BITS, exact in float64, and the sequence holds 2**SOBOL_BITS points.
SOBOL_BITS = 30

#: scipy's warning for a Sobol' count that is not a power of two; replaced by one that
#: names the next power of two (:func:`sobol_balance_message`).
_SCIPY_BALANCE = ".*balance properties of Sobol' points.*"


def sobol_balance_message(n_points: int, what: str = "points", factor: int = 1) -> str | None:
    """The warning for ``n_points`` Sobol' points that are not a power of two, or None.

    ``what`` names the quantity the user sets and ``factor`` converts a number of points
    into it (e.g. ``"n_components"``, 2 for cosine/sine pairs), so that the message names
    the value to use.

    Examples
    --------
    >>> from kernelmaps.sampling._qmc import sobol_balance_message
    >>> sobol_balance_message(64) is None
    True
    >>> sobol_balance_message(50, "n_components", 2).split("; ")[-1]
    'use n_components=128 (the next power of two) or 64.'
    """
    if n_points <= 1 or n_points & (n_points - 1) == 0:
        return None
    above = 1 << (n_points - 1).bit_length()
    return (
        f"{n_points} Sobol' points is not a power of two: the balance properties of Sobol' "
        "points require n to be a power of 2, and the quasi-Monte Carlo gain is partly lost; "
        f"use {what}={above * factor} (the next power of two) or {above // 2 * factor}."
    )


def resolve_scramble(scramble: Any, method: str) -> bool | str:
    """The randomization ``scramble`` means for ``method``: ``"shift"``, True or False.

    Examples
    --------
    >>> from kernelmaps.sampling import resolve_scramble
    >>> resolve_scramble("auto", "sobol"), resolve_scramble("auto", "halton")
    ('shift', True)
    """
    if isinstance(scramble, (bool, np.bool_)):
        return bool(scramble)
    if not isinstance(scramble, str) or scramble not in ("auto", "shift"):
        raise TypeError(f"scramble must be True, False, 'auto' or 'shift'; got {scramble!r}.")
    if scramble == "auto":
        return "shift" if method == "sobol" else True
    if method != "sobol":
        raise ValueError(
            f"scramble='shift' is a random digital shift in base 2, for Sobol' points; "
            f"{method} points take scramble=True (random digit permutations) or False."
        )
    return "shift"


def _halton_scramble_bytes(dimension: int) -> float:
    """Bytes of scipy's scrambled Halton permutations in ``dimension`` dimensions.

    Base ``p`` (the ``k``-th prime for dimension ``k``) keeps ``ceil(54 / log2 p) - 1``
    int64 permutations of ``p`` digits (Owen 2017), so the total grows like ``d^2 log d``
    (0.7 GB at ``d = 2000``, 2 GB at ``d = 4000``) and so does the time to shuffle them.
    Only asked for up to :data:`HALTON_MAX_DIMENSION`.
    """
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


def digital_shift(points: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """XOR the binary expansions of ``points`` with those of ``shift``, in place.

    ``points`` are multiples of ``2**-SOBOL_BITS`` in ``[0, 1)`` (scipy's Sobol' points);
    ``shift`` holds one number of ``[0, 1)`` per coordinate.  Its first ``SOBOL_BITS``
    digits are XORed with the points' digits; its further digits are copied (the points
    have none there).  If ``shift`` is uniform on ``[0, 1)^d`` every shifted point is.
    """
    scale = 2.0**SOBOL_BITS
    high = np.floor(shift * scale)
    ints = np.rint(points * scale).astype(np.uint64)
    ints ^= high.astype(np.uint64)
    np.multiply(ints, 1.0 / scale, out=points, casting="unsafe")
    points += (shift * scale - high) / scale
    return points


def uniform_points(
    n_points: int,
    dimension: int,
    method: str,
    *,
    scramble: bool | str = "auto",
    rng: np.random.Generator | None = None,
) -> np.ndarray:
    """``n_points`` quasi-random points of ``(0, 1)^dimension``.

    Parameters
    ----------
    n_points, dimension : int
        Shape of the result.
    method : {"halton", "sobol"}
        Sequence.  Sobol' points keep their balance properties when ``n_points`` is a
        power of two; other counts use the first ``n_points`` points of the sequence, with
        a ``UserWarning`` naming the next power of two.
    scramble : {"auto", "shift", True, False}, default="auto"
        Randomization.  ``"shift"`` (Sobol' only): a random digital shift,
        ``u_i = t_i XOR s`` with one ``s ~ U[0, 1)^d`` for the whole sequence ``t_0 = 0,
        t_1, ...`` (origin included), which keeps the Joe-Kuo net and its projections.
        ``True``: scipy's scrambling (linear matrix scrambling and a digital shift for
        Sobol', random digit permutations for Halton).  Each randomized point is uniform
        on the cube, so Monte Carlo estimates built on the points are unbiased.
        ``False``: the deterministic sequence, its first point (the origin) skipped.
        ``"auto"``: ``"shift"`` for Sobol', ``True`` for Halton.
    rng : numpy.random.Generator, optional
        Source of the randomization.

    Returns
    -------
    ndarray of shape (n_points, dimension)

    Notes
    -----
    A random digital shift of a digital ``(t, m, d)``-net in base 2 is a ``(t, m, d)``-net:
    XOR with a fixed vector permutes the elementary intervals ``prod_j [a_j 2^-k_j,
    (a_j + 1) 2^-k_j)`` among themselves (Dick & Pillichshammer 2010, Lemma 4.69).

    References
    ----------
    Dick, J. and Pillichshammer, F. (2010). Digital Nets and Sequences. Cambridge.
    Joe, S. and Kuo, F. Y. (2008). Constructing Sobol' sequences with better
    two-dimensional projections. SIAM J. Sci. Comput. 30, 2635-2654.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.sampling import uniform_points
    >>> U = uniform_points(8, 2, "sobol", rng=np.random.default_rng(0))
    >>> U.shape, bool(np.all((U > 0) & (U < 1)))
    ((8, 2), True)
    >>> sorted(np.floor(U[:, 0] * 8).astype(int).tolist())  # one point in each eighth
    [0, 1, 2, 3, 4, 5, 6, 7]
    """
    return draw_uniform_points(n_points, dimension, method, scramble=scramble, rng=rng)


def draw_uniform_points(
    n_points: int,
    dimension: int,
    method: str,
    *,
    scramble: bool | str = "auto",
    rng: np.random.Generator | None = None,
    unbalanced: Callable[[int], str | None] = sobol_balance_message,
    stacklevel: int = 2,
) -> np.ndarray:
    """:func:`uniform_points`, with the balance warning in the caller's terms.

    ``unbalanced(n_points)`` is the warning for Sobol' points whose count is not a power
    of two (None: no warning); it replaces scipy's.  ``stacklevel``: the user's frame,
    counted from the caller (1: the caller).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.sampling import draw_uniform_points
    >>> U = draw_uniform_points(8, 2, "sobol", rng=np.random.default_rng(0))
    >>> U.shape, bool(np.all((U >= 0) & (U < 1)))
    ((8, 2), True)
    """
    n_points = check_count(n_points, "n_points", minimum=0)
    dimension = check_count(dimension, "dimension")
    if not isinstance(method, str) or method not in QMC_METHODS:
        raise ValueError(f"method must be one of {QMC_METHODS}; got {method!r}.")
    how = resolve_scramble(scramble, method)
    check_generator(rng, optional=True)
    if method == "sobol" and dimension > SOBOL_MAX_DIMENSION:
        raise ValueError(
            f"Sobol' points exist up to dimension {SOBOL_MAX_DIMENSION} (scipy's direction "
            f"numbers); got dimension={dimension}. Use Monte Carlo or orthogonal draws for "
            "data of this many features, or reduce them first (e.g. with PCA)."
        )
    if method == "halton" and dimension > HALTON_MAX_DIMENSION:
        raise ValueError(
            f"Halton points are drawn up to dimension {HALTON_MAX_DIMENSION} (the first d "
            f"primes take scipy minutes beyond it); got dimension={dimension}. Use Monte "
            "Carlo or orthogonal draws for data of this many features, or reduce them "
            "first (e.g. with PCA)."
        )
    halton_scrambled = method == "halton" and how is True
    check_memory(
        (16.0 if how == "shift" else 8.0) * n_points * dimension
        + (_halton_scramble_bytes(dimension) if halton_scrambled else 0.0),
        f"uniform_points: {n_points} {method} points in dimension {dimension}"
        + (" and their scrambling permutations" if halton_scrambled else ""),
        "draw fewer points, reduce the dimension, or use method='sobol'",
    )
    if method == "sobol" and n_points > 2**SOBOL_BITS:
        raise ValueError(
            f"at most 2**{SOBOL_BITS} Sobol' points can be drawn; got n_points={n_points}."
        )
    if method == "halton":
        engine: Any = qmc.Halton(d=dimension, scramble=bool(how), rng=rng)
    else:
        engine = qmc.Sobol(d=dimension, scramble=how is True, bits=SOBOL_BITS, rng=rng)
        message = unbalanced(n_points)
        if message is not None:
            warnings.warn(message, UserWarning, stacklevel=stacklevel + 1)
    if how is False:
        engine.fast_forward(1)
    with warnings.catch_warnings():
        # replaced by the warning above, which names the next power of two
        warnings.filterwarnings("ignore", message=_SCIPY_BALANCE, category=UserWarning)
        points = engine.random(n_points)
    if how == "shift":
        if rng is None:
            rng = np.random.default_rng()
        digital_shift(points, rng.random(dimension))
    return np.clip(points, EDGE, 1.0 - EDGE, out=points)
