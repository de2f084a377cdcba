"""Bin keys of random binning features: 64-bit hashes of integer grid coordinates.

Grid ``p`` puts the point ``x`` into the bin ``floor((x - u_p) / delta_p)`` (integer
coordinates, one per input feature); the key of the bin mixes those coordinates with
the splitmix64 finalizer, one coordinate after the other.  Two implementations give the
same keys bit for bit: numpy (a dozen array passes per grid and coordinate) and numba
(:mod:`kernelmaps._numba.binning`, one pass per row, run on one thread per core); the
choice follows :func:`kernelmaps.config_context`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from .._config import numba_enabled
from .._parallel import parallel_rows

__all__ = ["bin_keys", "grid_keys", "out_of_range_rows"]

#: Bin coordinates ``(x - u) / delta`` beyond this magnitude do not fit the int64 keys.
COORDINATE_LIMIT = float(2**62)

_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def bin_keys(coords: np.ndarray) -> np.ndarray:
    """64-bit keys of integer bin coordinates, one per row (splitmix64-style mixing).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.feature_maps._binning_keys import bin_keys
    >>> keys = bin_keys(np.array([[0, 1], [0, 1], [1, 0]]))
    >>> bool(keys[0] == keys[1]), bool(keys[0] == keys[2])
    (True, False)
    """
    h = np.zeros(coords.shape[0], dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(coords.shape[1]):
            h ^= coords[:, j].view(np.uint64)
            h += _GOLDEN
            h ^= h >> np.uint64(30)
            h *= _MIX1
            h ^= h >> np.uint64(27)
            h *= _MIX2
            h ^= h >> np.uint64(31)
    return h


def out_of_range_rows(X: Any, shifts: np.ndarray, pitches: np.ndarray) -> np.ndarray | None:
    """Rows of ``X`` with a bin coordinate ``|(x_j - u_j) / delta_j| >= 2^62`` in some grid.

    Their bins cannot be keyed (the integer coordinates would overflow int64).  A bound
    from ``max |x|`` settles most calls at the cost of one pass over ``X``; only when it
    fails are the rows it does not clear checked exactly.  Returns None when no row is.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.feature_maps._binning_keys import out_of_range_rows
    >>> X = np.array([[0.5], [1e300]])
    >>> out_of_range_rows(X, np.zeros((1, 1)), np.ones((1, 1)))
    array([False,  True])
    >>> out_of_range_rows(X[:1], np.zeros((1, 1)), np.ones((1, 1))) is None
    True
    """
    Xd = X.toarray() if sp.issparse(X) else np.asarray(X)
    if Xd.size == 0 or shifts.size == 0:
        return None
    row_max = np.max(np.abs(Xd), axis=1).astype(np.float64)
    shift_max = float(np.max(np.abs(shifts)))
    pitch_min = float(np.min(pitches))
    with np.errstate(over="ignore"):
        suspect = (row_max + shift_max) / pitch_min >= COORDINATE_LIMIT
    if not suspect.any():
        return None
    bad = np.zeros(Xd.shape[0], dtype=bool)
    rows = np.flatnonzero(suspect)
    Xs = Xd[rows].astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        for p in range(shifts.shape[0]):
            coords = np.abs((Xs - shifts[p]) / pitches[p])
            bad[rows] |= ~(coords < COORDINATE_LIMIT).all(axis=1)
    return bad if bad.any() else None


def grid_keys(X: Any, shifts: np.ndarray, pitches: np.ndarray) -> np.ndarray:
    """Bin keys of the rows of ``X`` in every grid, shape (n_grids, n_rows).

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_rows, d)
        The rows (densified and evaluated in float64).
    shifts, pitches : ndarray of shape (n_grids, d)
        The grids' shifts ``u`` and pitches ``delta``.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.feature_maps._binning_keys import grid_keys
    >>> keys = grid_keys(np.array([[0.2], [0.7], [1.2]]), np.zeros((1, 1)), np.ones((1, 1)))
    >>> keys.shape, bool(keys[0, 0] == keys[0, 1]), bool(keys[0, 0] == keys[0, 2])
    ((1, 3), True, False)
    """
    Xd = X.toarray() if sp.issparse(X) else X
    Xd = np.asarray(Xd, dtype=np.float64)
    n_grids = shifts.shape[0]
    keys = np.empty((n_grids, Xd.shape[0]), dtype=np.uint64)
    if numba_enabled():
        from .._numba.binning import grid_keys as compiled_grid_keys

        shifts_t = np.ascontiguousarray(shifts.T, dtype=np.float64)
        pitches_t = np.ascontiguousarray(pitches.T, dtype=np.float64)
        Xd = np.ascontiguousarray(Xd)
        parallel_rows(
            lambda rows: compiled_grid_keys(Xd[rows], shifts_t, pitches_t, keys[:, rows]),
            Xd.shape[0],
            Xd.size * n_grids,
        )
        return keys
    for p in range(n_grids):
        coords = np.floor((Xd - shifts[p]) / pitches[p]).astype(np.int64)
        keys[p] = bin_keys(coords)
    return keys
