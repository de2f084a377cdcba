"""Fast Walsh-Hadamard transform over the last axis of a batch of rows.

The Walsh-Hadamard matrix of order ``n = 2^k`` in Sylvester's (natural) order,

.. math:: H_1 = [1], \\qquad H_{2m} = \\begin{pmatrix} H_m & H_m \\\\ H_m & -H_m \\end{pmatrix},

(the matrix of :func:`scipy.linalg.hadamard`, unnormalized: ``H H^T = n I``) is applied to
every row of a ``(b, n)`` array in place, with ``k`` butterfly passes of ``n/2``
additions and ``n/2`` subtractions each: ``n log2 n`` flops per row and no ``n x n``
matrix.  :func:`fwht` runs the compiled kernel of :mod:`kernelmaps._numba.hadamard`
(serial, GIL-free) when numba is enabled (:func:`kernelmaps.config_context`), else the
pure-numpy butterflies of :func:`fwht_numpy`; both do the same additions in the same
order, so they agree to the last bit in practice and within a few ulp by contract.

References
----------
Fino, B. J. and Algazi, V. R. (1976). Unified matrix treatment of the fast Walsh-Hadamard
transform. IEEE Transactions on Computers C-25(11), 1142-1146.
"""

from __future__ import annotations

import numpy as np

from .._config import numba_enabled

__all__ = ["fwht", "fwht_numpy", "next_power_of_two"]


def next_power_of_two(n: int) -> int:
    """Smallest power of two ``>= n`` (1 for ``n <= 1``)."""
    return 1 if n <= 1 else 1 << (int(n) - 1).bit_length()


def _check(a: np.ndarray) -> None:
    if not isinstance(a, np.ndarray) or a.ndim != 2:
        raise ValueError(f"fwht expects a 2D ndarray of shape (b, 2^k); got {type(a).__name__}.")
    n = a.shape[1]
    if n < 1 or n & (n - 1):
        raise ValueError(f"fwht needs rows whose length is a power of two; got {n}.")
    if a.dtype not in (np.float32, np.float64):
        raise ValueError(f"fwht works on float32 or float64 arrays; got {a.dtype}.")
    if not a.flags.c_contiguous or not a.flags.writeable:
        raise ValueError("fwht works in place on a writeable C-contiguous array; pass a copy.")


def fwht_numpy(a: np.ndarray) -> np.ndarray:
    """Unnormalized Walsh-Hadamard transform of every row of ``a``, in place (numpy).

    Stage ``h = 1, 2, 4, ..., n/2`` views each row as ``(n / 2h, 2, h)`` and replaces the
    pairs ``(x, y)`` of the middle axis by ``(x + y, x - y)``; one temporary of half the
    array's size is reused across stages.

    Parameters
    ----------
    a : ndarray of shape (b, n), float32 or float64, C-contiguous
        ``n`` a power of two.  Overwritten by ``a H`` (``H`` symmetric).

    Returns
    -------
    ndarray
        ``a`` itself.
    """
    _check(a)
    b, n = a.shape
    if n == 1:
        return a
    tmp = np.empty(b * (n // 2), dtype=a.dtype)
    h = 1
    while h < n:
        view = a.reshape(b, n // (2 * h), 2, h)
        x = view[:, :, 0, :]
        y = view[:, :, 1, :]
        t = tmp.reshape(b, n // (2 * h), h)
        np.subtract(x, y, out=t)
        x += y
        y[...] = t
        h *= 2
    return a


def fwht(a: np.ndarray) -> np.ndarray:
    """Unnormalized Walsh-Hadamard transform of every row of ``a``, in place.

    ``a <- a H_n`` with ``H_n`` the Sylvester-ordered Hadamard matrix
    (:func:`scipy.linalg.hadamard`), in ``O(n log n)`` per row.  Uses numba when it is
    enabled (:func:`kernelmaps._config.numba_enabled`), numpy otherwise.

    Parameters
    ----------
    a : ndarray of shape (b, n), float32 or float64, C-contiguous
        ``n`` a power of two.

    Returns
    -------
    ndarray
        ``a`` itself.
    """
    if numba_enabled():
        _check(a)
        from .._numba.hadamard import fwht_rows

        fwht_rows(a)
        return a
    return fwht_numpy(a)
