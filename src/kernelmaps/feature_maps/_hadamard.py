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
:func:`fastfood_projection` and :func:`sorf_projection` are the frequency products of
the structured maps, fused per row by numba or done in batched passes by numpy; the
choice between the two is made here, by :func:`kernelmaps.config_context`.

References
----------
Fino, B. J. and Algazi, V. R. (1976). Unified matrix treatment of the fast Walsh-Hadamard
transform. IEEE Transactions on Computers C-25(11), 1142-1146.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._array_api import device_of, is_numpy, numpy_namespace
from .._config import numba_enabled

__all__ = [
    "fastfood_projection",
    "fwht",
    "fwht_numpy",
    "next_power_of_two",
    "sorf_projection",
]


def next_power_of_two(n: int) -> int:
    """Smallest power of two ``>= n`` (1 for ``n <= 1``).

    Examples
    --------
    >>> from kernelmaps.feature_maps._hadamard import next_power_of_two
    >>> [next_power_of_two(n) for n in (0, 1, 5, 8, 9)]
    [1, 1, 8, 8, 16]
    """
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

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.feature_maps._hadamard import fwht_numpy
    >>> fwht_numpy(np.array([[1.0, 2.0, 3.0, 4.0]]))
    array([[10., -2., -4.,  0.]])
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


def fwht(a: Any, xp: Any = None) -> Any:
    """Unnormalized Walsh-Hadamard transform of every row of ``a``.

    ``a <- a H_n`` with ``H_n`` the Sylvester-ordered Hadamard matrix
    (:func:`scipy.linalg.hadamard`), in ``O(n log n)`` per row.  On NumPy (``xp`` None or
    NumPy's namespace) in place, with numba when it is enabled
    (:func:`kernelmaps._config.numba_enabled`), else :func:`fwht_numpy`; on another
    library the same butterflies in array API operations, in a new array on ``a``'s
    device: stage ``h = 1, 2, ..., n/2`` views each row as ``(n / 2h, 2, h)`` and
    replaces the pairs ``(x, y)`` of the middle axis by ``(x + y, x - y)``, the same
    additions in the same order as :func:`fwht_numpy`.

    Parameters
    ----------
    a : array of shape (b, n)
        ``n`` a power of two; on NumPy float32 or float64 and C-contiguous.
    xp : namespace, optional
        The array API namespace of ``a`` (default: NumPy's).

    Returns
    -------
    array of shape (b, n)
        ``a`` itself on NumPy, transformed (compiled and numpy paths agree to the last
        bit); a new array on other libraries.

    Examples
    --------
    >>> from numpy import arange, array_equal
    >>> from scipy.linalg import hadamard
    >>> from kernelmaps.feature_maps._hadamard import fwht
    >>> a = arange(8.0).reshape(1, 8)
    >>> bool(array_equal(fwht(a.copy()), a @ hadamard(8)))
    True
    >>> import array_api_strict as xps
    >>> fwht(xps.asarray([[1.0, 2.0, 3.0, 4.0]]), xps)
    Array([[10., -2., -4.,  0.]], dtype=array_api_strict.float64)
    """
    if xp is not None and not is_numpy(xp):
        b, n = a.shape
        h = 1
        while h < n:
            view = xp.reshape(a, (b, n // (2 * h), 2, h))
            x, y = view[:, :, 0, :], view[:, :, 1, :]
            a = xp.reshape(xp.stack((x + y, x - y), axis=2), (b, n))
            h *= 2
        return a
    if numba_enabled():
        _check(a)
        from .._numba.hadamard import fwht_rows

        fwht_rows(a)
        return a
    return fwht_numpy(a)


def _padded_signed(X: Any, first_signs: Any, xp: Any) -> Any:
    """``first_signs_j * x`` zero-padded to ``d``, shape (b, n_blocks, d), in ``xp``
    (on NumPy written into one buffer, in place)."""
    b, n_features = X.shape
    n_blocks, d = first_signs.shape
    if is_numpy(xp):
        buffer = np.empty((b, n_blocks, d), dtype=X.dtype)
        np.multiply(X[:, None, :], first_signs[None, :, :n_features], out=buffer[:, :, :n_features])
        buffer[:, :, n_features:] = 0.0
        return buffer
    signed = xp.expand_dims(X, axis=1) * xp.expand_dims(first_signs[:, :n_features], axis=0)
    if d > n_features:
        zeros = xp.zeros((b, n_blocks, d - n_features), dtype=X.dtype, device=device_of(X))
        signed = xp.concat((signed, zeros), axis=2)
    return signed


def fastfood_projection(
    X: Any, signs: Any, permutations: Any, gaussians: Any, row_scales: Any, xp: Any = None
) -> Any:
    """Fastfood projections ``s_j * H G_j Pi_j H B_j x`` of every row, block by block.

    Parameters
    ----------
    X : array of shape (b, n_features), C-contiguous on NumPy
        The rows, in the dtype of the parameters.
    signs, gaussians, row_scales : array of shape (n_blocks, d)
        ``diag(B_j)``, ``diag(G_j)`` and ``s_j``, in the dtype of ``X``.
    permutations : array of int of shape (n_blocks, d)
        ``Pi_j`` as index arrays.
    xp : namespace, optional
        The namespace of the arrays (default: NumPy's).  NumPy fuses the products per
        row with numba when it is enabled, else runs them in place in batched passes;
        other libraries run the same passes in new arrays (``xp.take`` for ``Pi_j``).

    Returns
    -------
    array of shape (b, n_blocks * d)

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.feature_maps._hadamard import fastfood_projection
    >>> ones = np.ones((1, 2))
    >>> fastfood_projection(np.array([[1.0, 0.0]]), ones, np.array([[1, 0]]), ones, ones)
    array([[2., 0.]])
    """
    xp = numpy_namespace() if xp is None else xp
    b = X.shape[0]
    n_blocks, d = signs.shape
    if is_numpy(xp) and numba_enabled():
        from .._numba.hadamard import fastfood_rows

        out = np.empty((b, n_blocks * d), dtype=X.dtype)
        fastfood_rows(X, signs, permutations, gaussians, row_scales, out)
        return out
    buffer = _padded_signed(X, signs, xp)
    projected = fwht(xp.reshape(buffer, (b * n_blocks, d)), xp)  # H B x
    offsets = d * xp.arange(n_blocks, dtype=permutations.dtype, device=device_of(X))
    index = xp.reshape(permutations + xp.expand_dims(offsets, axis=1), (n_blocks * d,))
    out = xp.take(xp.reshape(projected, (b, n_blocks * d)), index, axis=1)  # Pi H B x
    if is_numpy(xp):
        out *= gaussians.reshape(-1)  # G Pi H B x
        fwht(out.reshape(b * n_blocks, d))  # H G Pi H B x
        out *= row_scales.reshape(-1)
        return out
    out = out * xp.reshape(gaussians, (n_blocks * d,))  # G Pi H B x
    out = fwht(xp.reshape(out, (b * n_blocks, d)), xp)  # H G Pi H B x
    return xp.reshape(out, (b, n_blocks * d)) * xp.reshape(row_scales, (n_blocks * d,))


def sorf_projection(X: Any, signs: Any, row_scales: Any, xp: Any = None) -> Any:
    """SORF projections ``s_j * H D_j1 H D_j2 H D_j3 x`` of every row, block by block.

    Parameters
    ----------
    X : array of shape (b, n_features), C-contiguous on NumPy
        The rows, in the dtype of the parameters.
    signs : array of shape (n_blocks, 3, d)
        ``diag(D_j1), diag(D_j2), diag(D_j3)`` (``D_j3`` applied first).
    row_scales : array of shape (n_blocks, d)
        ``s_j``.
    xp : namespace, optional
        The namespace of the arrays (default: NumPy's): numba or in-place passes on
        NumPy, new arrays on the other libraries.

    Returns
    -------
    array of shape (b, n_blocks * d)
        Block ``j`` of the projections in columns ``j d`` to ``(j + 1) d``.

    Examples
    --------
    >>> from numpy import array, ones
    >>> from kernelmaps.feature_maps._hadamard import sorf_projection
    >>> sorf_projection(array([[1.0, 0.0]]), ones((1, 3, 2)), ones((1, 2)))
    array([[2., 2.]])
    """
    xp = numpy_namespace() if xp is None else xp
    b = X.shape[0]
    n_blocks, _, d = signs.shape
    if is_numpy(xp) and numba_enabled():
        from .._numba.hadamard import sorf_rows

        out = np.empty((b, n_blocks * d), dtype=X.dtype)
        sorf_rows(X, signs, row_scales, out)
        return out
    buffer = _padded_signed(X, signs[:, 2, :], xp)
    if is_numpy(xp):
        flat = buffer.reshape(b * n_blocks, d)
        fwht(flat)  # H D3 x
        buffer *= signs[:, 1]
        fwht(flat)  # H D2 H D3 x
        buffer *= signs[:, 0]
        fwht(flat)  # H D1 H D2 H D3 x
        buffer *= row_scales
        return buffer.reshape(b, n_blocks * d)
    flat = fwht(xp.reshape(buffer, (b * n_blocks, d)), xp)  # H D3 x
    for m in (1, 0):  # H D2 H D3 x, then H D1 H D2 H D3 x
        blocks = xp.reshape(flat, (b, n_blocks, d)) * signs[:, m, :]
        flat = fwht(xp.reshape(blocks, (b * n_blocks, d)), xp)
    return xp.reshape(xp.reshape(flat, (b, n_blocks, d)) * row_scales, (b, n_blocks * d))
