"""Kernel matrices of arrays of other libraries, coordinate by coordinate, in bounded blocks.

The kernels that are not a function of a matrix product (the Laplacian's L1 distance, the
Cauchy product, the chi-squared sums) sum a term over the coordinates,

.. math:: S[a, b] = \\sum_i t(x_{ai}, y_{bi}),

which in the array API standard is a broadcast ``t(X[:, None, :], Y[None, :, :])``
summed over its last axis.  :func:`coordinatewise_sum_array` evaluates it in blocks of
rows of ``X`` and of coordinates whose ``rows x m x coordinates`` temporaries hold at most
:data:`ARRAY_BLOCK_ELEMENTS` values, so that the memory stays that of the output plus a
block whatever ``n``, ``m`` and ``d``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._array_api import device_of

__all__ = ["ARRAY_BLOCK_ELEMENTS", "coordinatewise_sum_array"]

#: Values of the three-dimensional temporaries of one block (32 MiB in float64).
ARRAY_BLOCK_ELEMENTS = 1 << 22


def coordinatewise_sum_array(xp: Any, X: Any, Y: Any, term: Callable[[Any, Any], Any]) -> Any:
    """``S[a, b] = sum_i term(X[a, i], Y[b, i])`` for arrays of ``xp``, in their dtype.

    ``term`` takes broadcast arrays (``(rows, 1, c)`` and ``(1, m, c)``) and is applied to
    blocks of ``rows x m x c <= ARRAY_BLOCK_ELEMENTS`` values (``c`` coordinates of
    ``rows`` rows of ``X`` against every row of ``Y``; one row and one coordinate at least).

    Examples
    --------
    >>> import array_api_strict as xp
    >>> from kernelmaps.kernels._array_blocks import coordinatewise_sum_array
    >>> X = xp.asarray([[0.0, 1.0], [2.0, 2.0]])
    >>> S = coordinatewise_sum_array(xp, X, X, lambda x, y: xp.abs(x - y))
    >>> [[float(v) for v in row] for row in (S[0, :], S[1, :])]
    [[0.0, 3.0], [3.0, 0.0]]
    """
    n, d = int(X.shape[0]), int(X.shape[1])
    m = int(Y.shape[0])
    width = max(1, min(d, ARRAY_BLOCK_ELEMENTS // max(m, 1)))
    step = max(1, ARRAY_BLOCK_ELEMENTS // (max(m, 1) * width))
    out = xp.empty((n, m), dtype=X.dtype, device=device_of(X))
    for start in range(0, n, step):
        stop = min(start + step, n)
        Xb = X[start:stop, :]
        total = None
        for j in range(0, d, width):
            part = xp.sum(term(Xb[:, None, j : j + width], Y[None, :, j : j + width]), axis=2)
            total = part if total is None else total + part
        out[start:stop, :] = total
    return out
