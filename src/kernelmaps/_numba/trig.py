"""Vectorized sine and cosine of projections, compiled with numba.

numpy's float64 ``cos`` and ``sin`` call the C library once per element (about 20 ns
each on x86-64); random Fourier features spend most of their time there.  The kernels
below evaluate both with the classical fdlibm scheme in straight-line arithmetic that
the compiler vectorizes.  They are serial and release the GIL: the maps run their row
blocks on one thread per core.  The scheme:

* Cody-Waite reduction ``r = t - k pi/2`` with ``k = rint(2t/pi)`` and pi/2 split in
  three parts (33 + 33 + 53 bits), exact in its first step while ``|k| < 2^20``;
* fdlibm's minimax polynomials for ``sin`` (degree 13) and ``cos`` (degree 14) on
  ``|r| <= pi/4``, with fdlibm's compensated last step for ``cos``;
* the quadrant ``k mod 4`` picks ``(+-sin, +-cos)`` by selects, without branches.

Rows holding an argument beyond ``_LIMIT`` (``2^19 pi/2``, far outside what a
kernel feature map produces for sensible bandwidths) fall back to the C library, so the
result is correct for every finite input.  The absolute error is at most ``2^-53`` plus
one rounding of the final scaling; against numpy's ``cos`` and ``sin`` the measured
maximum difference is 2 ulp of the result (see the tests).

float32 input is evaluated in float64 and rounded once, so it is correctly rounded in
all but rare halfway cases.
"""

from __future__ import annotations

import math

import numpy as np
from numba import types

from ._jit import array, flat_rows, jit, kernel

# pi/2 = _PIO2_1 + _PIO2_2 + _PIO2_3 (fdlibm's pio2_1, pio2_2, pio2_2t)
_PIO2_1 = 1.57079632673412561417e00
_PIO2_2 = 6.07710050630396597660e-11
_PIO2_3 = 2.02226624879595063154e-21
_INV_PIO2 = 6.36619772367581382433e-01
# Adding then subtracting 1.5 * 2^52 rounds a double of magnitude < 2^51 to an integer.
_ROUND = 6755399441055744.0
_LIMIT = 8.0e5

_S1 = -1.66666666666666324348e-01
_S2 = 8.33333333332248946124e-03
_S3 = -1.98412698298579493134e-04
_S4 = 2.75573137070700676789e-06
_S5 = -2.50507602534068634195e-08
_S6 = 1.58969099521155010221e-10
_C1 = 4.16666666666666019037e-02
_C2 = -1.38888888888741095749e-03
_C3 = 2.48015872894767294178e-05
_C4 = -2.75573143513906633035e-07
_C5 = 2.08757232129817482790e-09
_C6 = -1.13596475577881948265e-11

_OPTIONS = {"nogil": True, "fastmath": {"contract"}}

__all__ = ["cos_shifted_into", "cos_sin_into"]


@jit(inline="always", **_OPTIONS)
def _row_is_small(row: np.ndarray, n: int) -> bool:
    small = True
    for j in range(n):
        small &= abs(row[j]) <= _LIMIT
    return small


# The reduction and polynomials are inlined into each loop (``inline="always"`` works on
# numba's IR, so LLVM sees one loop body with no call): that is the form LLVM's loop
# vectorizer turns into SIMD code.


@jit(inline="always", **_OPTIONS)
def _sin_cos(t: float) -> tuple[float, float]:
    """``(sin t, cos t)`` for ``|t| <= _LIMIT``: reduction, polynomials, quadrant."""
    k = (t * _INV_PIO2 + _ROUND) - _ROUND
    r = ((t - k * _PIO2_1) - k * _PIO2_2) - k * _PIO2_3
    z = r * r
    s = r + (z * r) * (_S1 + z * (_S2 + z * (_S3 + z * (_S4 + z * (_S5 + z * _S6)))))
    poly = z * (_C1 + z * (_C2 + z * (_C3 + z * (_C4 + z * (_C5 + z * _C6)))))
    hz = 0.5 * z
    w = 1.0 - hz
    c = w + (((1.0 - w) - hz) + z * poly)
    q = np.int64(k)
    odd = (q & 1) == 1
    flip = (q & 2) == 2
    sin_t = c if odd else s
    cos_t = -s if odd else c
    sin_t = -sin_t if flip else sin_t
    cos_t = -cos_t if flip else cos_t
    return sin_t, cos_t


# float64 only: float32 projections use numpy's own float32 sin and cos.
#
# The arrays arrive as flat C-contiguous buffers with a row stride (``flat_rows``):
# row i is ``buffer[i * stride : i * stride + width]``, a unit-stride slice that the
# loops vectorize.  One compiled version then serves whole arrays and their column ranges
# alike (the cos/sin pairs of a wider projection, the column blocks of an output),
# without copies; a 2-d 'A' (any layout) version runs the loops 6x slower, and a
# version per layout would compile again for each.
_INT = types.int64
_IN = array("float64", 1, readonly=True)
_OUT = array("float64", 1)


@kernel({"float64": types.void(_IN, _INT, _INT, _INT, _OUT, _INT, types.float64)}, **_OPTIONS)
def _cos_sin_into(
    projection: np.ndarray,
    p_stride: int,
    n_rows: int,
    L: int,
    out: np.ndarray,
    o_stride: int,
    scale: float,
) -> None:
    """``out[:, :L] = scale cos(P)``, ``out[:, L:2L] = scale sin(P)`` for P of shape (b, L)."""
    for i in range(n_rows):
        p_row = projection[i * p_stride : i * p_stride + L]
        cos_part = out[i * o_stride : i * o_stride + L]
        sin_part = out[i * o_stride + L : i * o_stride + 2 * L]
        if not _row_is_small(p_row, L):
            for j in range(L):
                t = np.float64(p_row[j])
                cos_part[j] = scale * math.cos(t)
                sin_part[j] = scale * math.sin(t)
            continue
        # The arguments are first copied into the sine half of the output row, so that
        # the loop reads and writes one array (two arrays defeat the vectorizer, which
        # cannot rule out their overlap).
        sin_part[:] = p_row
        for j in range(L):
            sin_t, cos_t = _sin_cos(np.float64(sin_part[j]))
            cos_part[j] = scale * cos_t
            sin_part[j] = scale * sin_t


@kernel({"float64": types.void(_OUT, _INT, _INT, _INT, _IN, types.float64)}, **_OPTIONS)
def _cos_shifted_into(
    projection: np.ndarray, stride: int, n_rows: int, L: int, offsets: np.ndarray, scale: float
) -> None:
    """``P[:] = scale cos(P + offsets)`` in place, for P of shape (b, L)."""
    for i in range(n_rows):
        row = projection[i * stride : i * stride + L]
        for j in range(L):
            row[j] = row[j] + offsets[j]
        if not _row_is_small(row, L):
            for j in range(L):
                row[j] = scale * math.cos(np.float64(row[j]))
            continue
        for j in range(L):
            row[j] = scale * _sin_cos(np.float64(row[j]))[1]


def cos_sin_into(projection: np.ndarray, out: np.ndarray, scale: float) -> None:
    """``out[:, :L] = scale cos(P)``, ``out[:, L:2L] = scale sin(P)``, float64 (b, L) ``P``.

    Any layout: arrays whose rows are unit-stride (C order, column ranges) are used in
    place; others go through a contiguous copy.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._numba.trig import cos_sin_into
    >>> out = np.empty((1, 4))
    >>> cos_sin_into(np.array([[0.0, np.pi / 2]]), out, 2.0)
    >>> out.round(12)
    array([[2., 0., 0., 2.]])
    """
    compiled = _cos_sin_into["float64"]
    n_rows, L = projection.shape
    source = flat_rows(projection, L) if projection.dtype == np.float64 else None
    if source is None:
        source = flat_rows(np.ascontiguousarray(projection, dtype=np.float64), L)
        assert source is not None
    target = flat_rows(out, 2 * L) if out.flags.writeable else None
    if target is None:
        buffer = np.empty((n_rows, 2 * L))
        compiled(*source, n_rows, L, buffer.reshape(-1), 2 * L, float(scale))
        out[:, : 2 * L] = buffer
        return
    compiled(*source, n_rows, L, *target, float(scale))


def cos_shifted_into(projection: np.ndarray, offsets: np.ndarray, scale: float) -> None:
    """``P[:] = scale cos(P + offsets)`` in place, for a float64 ``P`` of shape (b, L).

    Any layout (rows that are not unit-stride are computed in a contiguous copy).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._numba.trig import cos_shifted_into
    >>> P = np.array([[0.0, np.pi]])
    >>> cos_shifted_into(P, np.array([0.0, np.pi]), 0.5)
    >>> P.round(12)
    array([[0.5, 0.5]])
    """
    compiled = _cos_shifted_into["float64"]
    n_rows, L = projection.shape
    offsets = np.ascontiguousarray(offsets, dtype=np.float64)
    rows = flat_rows(projection, L) if projection.flags.writeable else None
    if rows is None or projection.dtype != np.float64:
        buffer = np.array(projection, dtype=np.float64, order="C")
        compiled(buffer.reshape(-1), L, n_rows, L, offsets, float(scale))
        projection[...] = buffer
        return
    flat, stride = rows
    compiled(flat, stride, n_rows, L, offsets, float(scale))
