"""Compiled fast Walsh-Hadamard transforms (numba), serial and GIL-free.

The maps run their row blocks on one thread per core (:mod:`kernelmaps._parallel`).
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["fastfood_rows", "fwht_rows", "sorf_rows"]


@numba.njit(cache=True, inline="always")
def _fwht_row(row: np.ndarray) -> None:  # pragma: no cover - compiled
    """Unnormalized Walsh-Hadamard transform of one contiguous row, in place.

    The same butterflies ``(x, y) -> (x + y, x - y)`` as
    :func:`kernelmaps.feature_maps._hadamard.fwht_numpy`, so the same results: the first
    three stages (``h = 1, 2, 4``) are fused into one 8-point pass held in registers,
    the later stages run over contiguous halves (vectorized by the compiler).
    """
    n = row.shape[0]
    h = 1
    if n >= 8:
        for s in range(0, n, 8):
            x0 = row[s]
            x1 = row[s + 1]
            x2 = row[s + 2]
            x3 = row[s + 3]
            x4 = row[s + 4]
            x5 = row[s + 5]
            x6 = row[s + 6]
            x7 = row[s + 7]
            y0 = x0 + x1
            y1 = x0 - x1
            y2 = x2 + x3
            y3 = x2 - x3
            y4 = x4 + x5
            y5 = x4 - x5
            y6 = x6 + x7
            y7 = x6 - x7
            z0 = y0 + y2
            z1 = y1 + y3
            z2 = y0 - y2
            z3 = y1 - y3
            z4 = y4 + y6
            z5 = y5 + y7
            z6 = y4 - y6
            z7 = y5 - y7
            row[s] = z0 + z4
            row[s + 1] = z1 + z5
            row[s + 2] = z2 + z6
            row[s + 3] = z3 + z7
            row[s + 4] = z0 - z4
            row[s + 5] = z1 - z5
            row[s + 6] = z2 - z6
            row[s + 7] = z3 - z7
        h = 8
    while h < n:
        for start in range(0, n, 2 * h):
            lo = row[start : start + h]
            hi = row[start + h : start + 2 * h]
            for j in range(h):
                x = lo[j]
                y = hi[j]
                lo[j] = x + y
                hi[j] = x - y
        h *= 2


@numba.njit(cache=True, nogil=True)
def fwht_rows(a: np.ndarray) -> None:  # pragma: no cover - compiled
    """In-place unnormalized Walsh-Hadamard transform of every row of ``a`` (b, 2^k)."""
    for i in range(a.shape[0]):
        _fwht_row(a[i])


@numba.njit(cache=True, nogil=True)
def fastfood_rows(
    X: np.ndarray,
    signs: np.ndarray,
    permutations: np.ndarray,
    gaussians: np.ndarray,
    scales: np.ndarray,
    out: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """Fastfood projections ``out[i, block j] = s_j * H G_j Pi_j H B_j x_i``, row by row.

    ``X`` (b, n_features), the parameters (n_blocks, d), ``out`` (b, n_blocks * d); the
    same operations in the same order as the numpy path of
    :class:`kernelmaps.feature_maps.Fastfood`, fused so that each block stays in cache.
    """
    n_rows, n_features = X.shape
    n_blocks, d = signs.shape
    for i in range(n_rows):
        tmp = np.empty(d, dtype=out.dtype)
        for j in range(n_blocks):
            for k in range(n_features):
                tmp[k] = X[i, k] * signs[j, k]
            for k in range(n_features, d):
                tmp[k] = 0.0
            _fwht_row(tmp)
            row = out[i, j * d : (j + 1) * d]
            for k in range(d):
                row[k] = tmp[permutations[j, k]] * gaussians[j, k]
            _fwht_row(row)
            for k in range(d):
                row[k] *= scales[j, k]


@numba.njit(cache=True, nogil=True)
def sorf_rows(
    X: np.ndarray, signs: np.ndarray, scales: np.ndarray, out: np.ndarray
) -> None:  # pragma: no cover - compiled
    """SORF projections ``out[i, block j] = s_j * H D_j1 H D_j2 H D_j3 x_i``, row by row.

    ``signs`` (n_blocks, 3, d) holds ``D_j1, D_j2, D_j3``; the same operations in the
    same order as the numpy path of
    :class:`kernelmaps.feature_maps.StructuredOrthogonalFeatures`.
    """
    n_rows, n_features = X.shape
    n_blocks = signs.shape[0]
    d = signs.shape[2]
    for i in range(n_rows):
        for j in range(n_blocks):
            row = out[i, j * d : (j + 1) * d]
            for k in range(n_features):
                row[k] = X[i, k] * signs[j, 2, k]
            for k in range(n_features, d):
                row[k] = 0.0
            _fwht_row(row)
            for k in range(d):
                row[k] *= signs[j, 1, k]
            _fwht_row(row)
            for k in range(d):
                row[k] *= signs[j, 0, k]
            _fwht_row(row)
            for k in range(d):
                row[k] *= scales[j, k]
