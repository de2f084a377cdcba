"""Compiled fast Walsh-Hadamard transforms (numba), serial and GIL-free.

The maps run their row blocks on one thread per core (:mod:`kernelmaps._parallel`).
"""

from __future__ import annotations

import numpy as np
from numba import types

from ._jit import array, jit, kernel

__all__ = ["fastfood_rows", "fwht_rows", "sorf_rows"]


@jit(inline="always")
def _butterfly8(
    row: np.ndarray, s: int, x0: float, x1: float, x2: float, x3: float,
    x4: float, x5: float, x6: float, x7: float,
) -> None:  # fmt: skip  # pragma: no cover - compiled
    """Stages ``h = 1, 2, 4`` of ``x0..x7`` in registers, stored at ``row[s:s + 8]``."""
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


@jit(inline="always")
def _fwht_radix8(row: np.ndarray) -> None:  # pragma: no cover - compiled
    """Stages ``h = 1, 2, 4`` of the transform, fused into one 8-point pass in registers."""
    for s in range(0, row.shape[0], 8):
        _butterfly8(
            row, s, row[s], row[s + 1], row[s + 2], row[s + 3],
            row[s + 4], row[s + 5], row[s + 6], row[s + 7],
        )  # fmt: skip


@jit(inline="always")
def _fwht_radix8_scaled(
    row: np.ndarray, src: np.ndarray, mult: np.ndarray
) -> None:  # pragma: no cover - compiled
    """As :func:`_fwht_radix8` on ``src * mult`` zero-padded to ``len(row)``.

    ``src`` and ``mult`` have the same length ``m <= len(row)``; ``src`` may be ``row``.
    """
    n = row.shape[0]
    m = src.shape[0]
    full = m - m % 8
    for s in range(0, full, 8):
        _butterfly8(
            row, s, src[s] * mult[s], src[s + 1] * mult[s + 1], src[s + 2] * mult[s + 2],
            src[s + 3] * mult[s + 3], src[s + 4] * mult[s + 4], src[s + 5] * mult[s + 5],
            src[s + 6] * mult[s + 6], src[s + 7] * mult[s + 7],
        )  # fmt: skip
    if full < n:
        for k in range(full, n):
            row[k] = src[k] * mult[k] if k < m else 0.0
        for s in range(full, n, 8):
            _butterfly8(
                row, s, row[s], row[s + 1], row[s + 2], row[s + 3],
                row[s + 4], row[s + 5], row[s + 6], row[s + 7],
            )  # fmt: skip


@jit(inline="always")
def _fwht_radix8_gathered(
    row: np.ndarray, src: np.ndarray, index: np.ndarray, mult: np.ndarray
) -> None:  # pragma: no cover - compiled
    """As :func:`_fwht_radix8` on ``src[index] * mult`` (all of ``len(row)``)."""
    for s in range(0, row.shape[0], 8):
        _butterfly8(
            row, s, src[index[s]] * mult[s], src[index[s + 1]] * mult[s + 1],
            src[index[s + 2]] * mult[s + 2], src[index[s + 3]] * mult[s + 3],
            src[index[s + 4]] * mult[s + 4], src[index[s + 5]] * mult[s + 5],
            src[index[s + 6]] * mult[s + 6], src[index[s + 7]] * mult[s + 7],
        )  # fmt: skip


@jit(inline="always")
def _fwht_radix4(row: np.ndarray, h: int) -> None:  # pragma: no cover - compiled
    """Stages ``h`` and ``2 h`` in one pass: 4-point butterflies over contiguous runs.

    The same additions in the same order as the two radix-2 stages, so the same results.
    """
    n = row.shape[0]
    for s in range(0, n, 4 * h):
        q0 = row[s : s + h]
        q1 = row[s + h : s + 2 * h]
        q2 = row[s + 2 * h : s + 3 * h]
        q3 = row[s + 3 * h : s + 4 * h]
        for j in range(h):
            a = q0[j]
            b = q1[j]
            c = q2[j]
            e = q3[j]
            u0 = a + b
            u1 = a - b
            u2 = c + e
            u3 = c - e
            q0[j] = u0 + u2
            q1[j] = u1 + u3
            q2[j] = u0 - u2
            q3[j] = u1 - u3


@jit(inline="always")
def _fwht_radix2(row: np.ndarray, h: int) -> None:  # pragma: no cover - compiled
    """Stage ``h``: butterflies ``(x, y) -> (x + y, x - y)`` over contiguous runs."""
    n = row.shape[0]
    for s in range(0, n, 2 * h):
        lo = row[s : s + h]
        hi = row[s + h : s + 2 * h]
        for j in range(h):
            x = lo[j]
            y = hi[j]
            lo[j] = x + y
            hi[j] = x - y


@jit(inline="always")
def _fwht_stages_from_8(row: np.ndarray) -> None:  # pragma: no cover - compiled
    """Stages ``h = 8, 16, ...`` of the transform (two at a time, then one if odd)."""
    n = row.shape[0]
    h = 8
    if 4 * h <= n:
        _fwht_radix4(row, 8)
        h = 32
    while 4 * h <= n:
        _fwht_radix4(row, h)
        h *= 4
    if h < n:
        _fwht_radix2(row, h)


@jit(inline="always")
def _fwht_small(row: np.ndarray) -> None:  # pragma: no cover - compiled
    """Every stage, one at a time (rows shorter than 8)."""
    h = 1
    while h < row.shape[0]:
        _fwht_radix2(row, h)
        h *= 2


@jit(inline="always")
def _fwht_row(row: np.ndarray) -> None:  # pragma: no cover - compiled
    """Unnormalized Walsh-Hadamard transform of one contiguous row, in place.

    The same butterflies ``(x, y) -> (x + y, x - y)`` in the same order as
    :func:`kernelmaps.feature_maps._hadamard.fwht_numpy`, so the same results.  The first
    three stages (``h = 1, 2, 4``) are fused into one 8-point pass held in registers;
    the later stages go two at a time (4-point butterflies, half the loads and stores),
    with inner loops over contiguous runs of ``h >= 8`` elements that the compiler
    vectorizes.  numba leaves LLVM's SLP vectorizer off, so the 8-point pass stays
    scalar; it is about a third of the time of a 1024-point transform.
    """
    if row.shape[0] < 8:
        _fwht_small(row)
        return
    _fwht_radix8(row)
    _fwht_stages_from_8(row)


@jit(inline="always")
def _fwht_row_scaled(
    row: np.ndarray, src: np.ndarray, mult: np.ndarray
) -> None:  # pragma: no cover - compiled
    """``row = H pad(src * mult)``: the product fused into the first pass (same results)."""
    if row.shape[0] < 8:
        m = src.shape[0]
        for k in range(row.shape[0]):
            row[k] = src[k] * mult[k] if k < m else 0.0
        _fwht_small(row)
        return
    _fwht_radix8_scaled(row, src, mult)
    _fwht_stages_from_8(row)


@jit(inline="always")
def _fwht_row_gathered(
    row: np.ndarray, src: np.ndarray, index: np.ndarray, mult: np.ndarray
) -> None:  # pragma: no cover - compiled
    """``row = H (src[index] * mult)``: the gather fused into the first pass."""
    if row.shape[0] < 8:
        for k in range(row.shape[0]):
            row[k] = src[index[k]] * mult[k]
        _fwht_small(row)
        return
    _fwht_radix8_gathered(row, src, index, mult)
    _fwht_stages_from_8(row)


#: The float types of the kernels (the maps compute in the dtype of their input).
_FLOATS = ("float32", "float64")


@kernel({t: types.void(array(t, 2)) for t in _FLOATS}, nogil=True)
def _fwht_rows(a: np.ndarray) -> None:  # pragma: no cover - compiled
    """In-place unnormalized Walsh-Hadamard transform of every row of ``a`` (b, 2^k)."""
    for i in range(a.shape[0]):
        _fwht_row(a[i])


@kernel(
    {
        t: types.void(
            array(t, 2, readonly=True),
            array(t, 2, readonly=True),
            array("int64", 2, readonly=True),
            array(t, 2, readonly=True),
            array(t, 2, readonly=True),
            array(t, 2),
        )
        for t in _FLOATS
    },
    nogil=True,
)
def _fastfood_rows(
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
    tmp = np.empty(d, dtype=out.dtype)
    for i in range(n_rows):
        x = X[i]
        for j in range(n_blocks):
            _fwht_row_scaled(tmp, x, signs[j, :n_features])
            row = out[i, j * d : (j + 1) * d]
            _fwht_row_gathered(row, tmp, permutations[j], gaussians[j])
            for k in range(d):
                row[k] *= scales[j, k]


@kernel(
    {
        t: types.void(
            array(t, 2, readonly=True),
            array(t, 3, readonly=True),
            array(t, 2, readonly=True),
            array(t, 2),
        )
        for t in _FLOATS
    },
    nogil=True,
)
def _sorf_rows(
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
        x = X[i]
        for j in range(n_blocks):
            row = out[i, j * d : (j + 1) * d]
            for k in range(n_features):
                row[k] = x[k] * signs[j, 2, k]
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


def _contiguous(a: np.ndarray, dtype: np.dtype) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=dtype)


def _writable_contiguous(out: np.ndarray) -> bool:
    return bool(out.flags.c_contiguous and out.flags.writeable)


def fwht_rows(a: np.ndarray) -> None:
    """In-place unnormalized Walsh-Hadamard transform of every row of ``a`` (b, 2^k).

    float32 or float64; a non-contiguous ``a`` is transformed in a contiguous copy.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._numba.hadamard import fwht_rows
    >>> a = np.array([[1.0, 0.0, 0.0, 0.0]])
    >>> fwht_rows(a)
    >>> a
    array([[1., 1., 1., 1.]])
    """
    compiled = _fwht_rows[a.dtype.name]
    if _writable_contiguous(a):
        compiled(a)
        return
    buffer = np.array(a, order="C")
    compiled(buffer)
    a[...] = buffer


def fastfood_rows(
    X: np.ndarray,
    signs: np.ndarray,
    permutations: np.ndarray,
    gaussians: np.ndarray,
    scales: np.ndarray,
    out: np.ndarray,
) -> None:
    """Fastfood projections ``out[i, block j] = s_j * H G_j Pi_j H B_j x_i``, row by row.

    The compiled version of the dtype of ``out`` (float32 or float64); the other arrays
    are brought to it and to C order (no copy when they already are).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._numba.hadamard import fastfood_rows
    >>> ones, out = np.ones((1, 2)), np.empty((1, 2))
    >>> fastfood_rows(np.array([[1.0, 0.0]]), ones, np.array([[1, 0]]), ones, ones, out)
    >>> out
    array([[2., 0.]])
    """
    dtype = out.dtype
    compiled = _fastfood_rows[dtype.name]
    args = (
        _contiguous(X, dtype),
        _contiguous(signs, dtype),
        _contiguous(permutations, np.dtype(np.int64)),
        _contiguous(gaussians, dtype),
        _contiguous(scales, dtype),
    )
    if _writable_contiguous(out):
        compiled(*args, out)
        return
    buffer = np.empty(out.shape, dtype=dtype)
    compiled(*args, buffer)
    out[...] = buffer


def sorf_rows(X: np.ndarray, signs: np.ndarray, scales: np.ndarray, out: np.ndarray) -> None:
    """SORF projections ``out[i, block j] = s_j * H D_j1 H D_j2 H D_j3 x_i``, row by row.

    The compiled version of the dtype of ``out`` (float32 or float64); the other arrays
    are brought to it and to C order (no copy when they already are).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._numba.hadamard import sorf_rows
    >>> out = np.empty((1, 2))
    >>> sorf_rows(np.array([[1.0, 0.0]]), np.ones((1, 3, 2)), np.ones((1, 2)), out)
    >>> out
    array([[2., 2.]])
    """
    dtype = out.dtype
    compiled = _sorf_rows[dtype.name]
    args = (_contiguous(X, dtype), _contiguous(signs, dtype), _contiguous(scales, dtype))
    if _writable_contiguous(out):
        compiled(*args, out)
        return
    buffer = np.empty(out.shape, dtype=dtype)
    compiled(*args, buffer)
    out[...] = buffer
