"""Compiled bin keys of random binning features, parallel over rows (numba).

The same splitmix64-style mixing of the integer bin coordinates as the numpy
implementation in :mod:`kernelmaps.feature_maps._binning`, in one pass per row (the grids
in the vectorized inner loop) instead of a dozen array passes per grid and coordinate;
the keys agree bit for bit.  Serial and releasing the GIL: the caller runs row ranges on
one thread per core (:mod:`kernelmaps._parallel`).
"""

from __future__ import annotations

import numba
import numpy as np

_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)


@numba.njit(cache=True, nogil=True)
def grid_keys(X, shifts_t, pitches_t, keys):  # type: ignore[no-untyped-def]
    """``keys[p, r]``: key of the bin of row ``r`` of ``X`` (float64) in grid ``p``.

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
        for p in range(n_grids):
            keys[p, r] = h[p]
