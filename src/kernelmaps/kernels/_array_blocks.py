"""Kernel matrices summed coordinate by coordinate, in bounded blocks.

The kernels that are not a function of a matrix product (the Laplacian's L1 distance, the
Cauchy product, the chi-squared sums) sum a term over the coordinates,

.. math:: S[a, b] = \\sum_i t(x_{ai}, y_{bi}).

:func:`coordinatewise_sum` evaluates it for any array namespace.  On NumPy (dense or
sparse input) it adds one coordinate at a time into row blocks of the output, in place.
In the array API standard it is a broadcast ``t(X[:, None, :], Y[None, :, :])`` summed
over its last axis, in blocks of rows of ``X`` and of coordinates whose
``rows x m x coordinates`` temporaries hold at most :data:`ARRAY_BLOCK_ELEMENTS` values,
so that the memory stays that of the output plus a block whatever ``n``, ``m`` and ``d``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils import gen_batches

from .._array_api import device_of, is_numpy

__all__ = ["ARRAY_BLOCK_ELEMENTS", "coordinatewise_sum"]

#: Values of the three-dimensional temporaries of one block (32 MiB in float64).
ARRAY_BLOCK_ELEMENTS = 1 << 22

#: Rows of X per block of the NumPy route (temporaries of block x n_Y floats).
_BLOCK = 256


def coordinatewise_sum(xp: Any, X: Any, Y: Any, term: Callable[[Any, Any], Any]) -> Any:
    """``S[a, b] = sum_i term(X[a, i], Y[b, i])`` for arrays of ``xp``, in their dtype.

    On NumPy (``X`` and ``Y`` dense or sparse float64) ``term`` takes a column of a row
    block of ``X`` (``(rows, 1)``) and a row of ``Y``'s column (``(1, m)``), and the
    coordinates are added one after the other.  Otherwise ``term`` takes broadcast arrays
    (``(rows, 1, c)`` and ``(1, m, c)``) and is applied to blocks of
    ``rows x m x c <= ARRAY_BLOCK_ELEMENTS`` values (``c`` coordinates of ``rows`` rows of
    ``X`` against every row of ``Y``; one row and one coordinate at least).

    Examples
    --------
    >>> import array_api_strict as xp
    >>> from kernelmaps.kernels._array_blocks import coordinatewise_sum
    >>> X = xp.asarray([[0.0, 1.0], [2.0, 2.0]])
    >>> S = coordinatewise_sum(xp, X, X, lambda x, y: xp.abs(x - y))
    >>> [[float(v) for v in row] for row in (S[0, :], S[1, :])]
    [[0.0, 3.0], [3.0, 0.0]]
    """
    if is_numpy(xp):
        Yd = Y.toarray() if sp.issparse(Y) else np.asarray(Y)
        K = np.zeros((X.shape[0], Yd.shape[0]))
        for rows in gen_batches(X.shape[0], _BLOCK):
            Xb = X[rows].toarray() if sp.issparse(X) else X[rows]
            acc = K[rows]
            for j in range(Xb.shape[1]):
                acc += term(Xb[:, j][:, None], Yd[:, j][None, :])
        return K
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
