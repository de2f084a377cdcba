"""Compiled bin keys of random binning features, parallel over rows (numba).

The same splitmix64-style mixing of the integer bin coordinates as the numpy
implementation in :mod:`kernelmaps.feature_maps._binning`, in one pass per row (the grids
in the vectorized inner loop) instead of a dozen array passes per grid and coordinate;
the keys agree bit for bit.  Serial and releasing the GIL: the caller runs row ranges on
one thread per core (:mod:`kernelmaps._parallel`).
"""

from __future__ import annotations

import numpy as np
from numba import types

from ._jit import array, flat_rows, kernel

__all__ = ["grid_keys"]

_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)


# ``keys`` arrives as a flat C-contiguous buffer with a row stride (``flat_rows``), so
# that one compiled version serves the whole array and its column ranges (the row
# ranges of the data); a 2-d 'A' array runs 5% slower.
@kernel(
    {
        "float64": types.void(
            array("float64", 2, readonly=True),
            array("float64", 2, readonly=True),
            array("float64", 2, readonly=True),
            array("uint64", 1),
            types.int64,
        )
    },
    nogil=True,
)
def _grid_keys(X, shifts_t, pitches_t, keys, stride):  # type: ignore[no-untyped-def]
    """``keys[p * stride + r]``: key of the bin of row ``r`` of ``X`` in grid ``p``.

    ``shifts_t`` and ``pitches_t`` are transposed, shape (d, n_grids), so that the inner
    loop runs over the grids with unit stride and vectorizes.
    """
    n, d = X.shape
    n_grids = shifts_t.shape[1]
    for r in range(n):
        h = np.zeros(n_grids, dtype=np.uint64)
        for j in range(d):
            x = X[r, j]
            for p in range(n_grids):
                c = np.int64(np.floor((x - shifts_t[j, p]) / pitches_t[j, p]))
                v = h[p] ^ np.uint64(c)
                v += _GOLDEN
                v ^= v >> _S30
                v *= _MIX1
                v ^= v >> _S27
                v *= _MIX2
                v ^= v >> _S31
                h[p] = v
        column = keys[r:]  # (indexing this view measured 10% faster than keys[p * stride + r])
        for p in range(n_grids):
            column[p * stride] = h[p]


def grid_keys(X: np.ndarray, shifts_t: np.ndarray, pitches_t: np.ndarray, keys: np.ndarray) -> None:
    """``keys[p, r]``: key of the bin of row ``r`` of ``X`` in grid ``p`` (float64 rows).

    ``keys`` (uint64, shape (n_grids, n)) may be any writable view, e.g. a column range.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._numba.binning import grid_keys
    >>> keys = np.empty((1, 3), dtype=np.uint64)
    >>> grid_keys(np.array([[0.2], [0.7], [1.2]]), np.zeros((1, 1)), np.ones((1, 1)), keys)
    >>> bool(keys[0, 0] == keys[0, 1]), bool(keys[0, 0] == keys[0, 2])
    (True, False)
    """
    compiled = _grid_keys["float64"]
    args = (
        np.ascontiguousarray(X, dtype=np.float64),
        np.ascontiguousarray(shifts_t, dtype=np.float64),
        np.ascontiguousarray(pitches_t, dtype=np.float64),
    )
    rows = flat_rows(keys, keys.shape[1]) if keys.flags.writeable else None
    if rows is not None:
        compiled(*args, *rows)
        return
    buffer = np.empty(keys.shape, dtype=np.uint64)
    compiled(*args, buffer.reshape(-1), keys.shape[1])
    keys[...] = buffer
