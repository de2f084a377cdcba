"""Compute kernels of TensorSketch: count sketches and their direct circular convolution.

With ``x' = (scale x, constant)`` and ``p`` hash/sign pairs ``(h_k, s_k)`` on the
coordinates of ``x'`` (``hashes`` and ``signs`` of shape ``(p, d + 1)``, the last column
for the constant coordinate), the TensorSketch of ``x`` is

``z[(h_1(i_1) + ... + h_p(i_p)) mod D] += s_1(i_1) ... s_p(i_p) x'_{i_1} ... x'_{i_p}``

summed over the index tuples.  :func:`direct_sketch_into` sums it term by term (numba:
:mod:`kernelmaps._numba.sketch`, zero coordinates skipped, row ranges on one thread per
core; numpy: ``np.bincount`` over the tensor power); :func:`count_sketches` gives the
``p`` count sketches ``C_k x'`` for the FFT route.  The numba/numpy choice follows
:func:`kernelmaps.config_context` and is made here only.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils.extmath import safe_sparse_dot

from .._array_api import device_of, is_numpy
from .._array_extras import index_add
from .._config import numba_enabled
from .._parallel import parallel_rows

__all__ = [
    "count_sketches",
    "direct_bytes_per_row",
    "direct_cost_factor",
    "direct_sketch_into",
]

#: The direct sum is used while its ``d'^p`` terms per row are at most this factor times
#: ``(p + 1) D log2 D`` (the FFT route's cost, see ``TensorSketch._route``).
_DIRECT_FACTOR_NUMBA = 0.6
_DIRECT_FACTOR_NUMPY = 0.06


def direct_cost_factor() -> float:
    """Break-even of the direct sum against the FFT route, for the current engine.

    Examples
    --------
    >>> import kernelmaps
    >>> from kernelmaps.feature_maps._sketch_kernels import direct_cost_factor
    >>> with kernelmaps.config_context(engine="numpy"):
    ...     direct_cost_factor()
    0.06
    """
    return _DIRECT_FACTOR_NUMBA if numba_enabled() else _DIRECT_FACTOR_NUMPY


def direct_bytes_per_row(itemsize: int, n_terms: float, n_components: int) -> float:
    """Temporaries per row of the direct sum (input densification excluded).

    The compiled sum needs almost nothing; the numpy one holds the tensor power, its
    bucket indices (int64) and ``np.bincount``'s float64 output.

    Examples
    --------
    >>> import kernelmaps
    >>> from kernelmaps.feature_maps._sketch_kernels import direct_bytes_per_row
    >>> with kernelmaps.config_context(engine="numpy"):
    ...     direct_bytes_per_row(8, 100, 64)
    3712.0
    """
    if numba_enabled():
        return float(itemsize)
    return float((2 * itemsize + 8 + 8) * n_terms + 8 * n_components)


def direct_sketch_into(
    X: Any, hashes: np.ndarray, signs: np.ndarray, scale: float, constant: float, out: np.ndarray
) -> None:
    """The circular convolution of the ``len(hashes)`` count sketches, summed term by term.

    Parameters
    ----------
    X : {ndarray, csr_matrix} of shape (n, d)
    hashes, signs : ndarray of shape (p, d + 1)
        Buckets in ``[0, D)`` and signs ``+-1``.  With ``p = 1`` this is the count sketch.
    scale, constant : float
        ``x' = (scale x, constant)``; the constant coordinate is left out when 0.
    out : ndarray of shape (n, D)
        Written in full, in its dtype.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.feature_maps._sketch_kernels import direct_sketch_into
    >>> out = np.empty((1, 4))
    >>> h, s = np.array([[1, 2, 0]]), np.array([[1, -1, 1]])
    >>> direct_sketch_into(np.array([[3.0, 5.0]]), h, s, 1.0, 0.0, out)
    >>> out
    array([[ 0.,  3., -5.,  0.]])
    """
    if numba_enabled():
        _direct_numba(X, hashes, signs, scale, constant, out)
    else:
        _direct_numpy(X, hashes, signs, scale, constant, out)


def _direct_numba(
    X: Any, hashes: np.ndarray, signs: np.ndarray, scale: float, constant: float, out: np.ndarray
) -> None:
    from .._numba.sketch import tensor_sketch_csr, tensor_sketch_dense

    dtype = out.dtype
    hashes = np.ascontiguousarray(hashes, dtype=np.int64)
    signs = np.ascontiguousarray(signs, dtype=dtype)
    scale_, constant_ = dtype.type(scale), dtype.type(constant)
    d = X.shape[1]
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        if not X.has_canonical_format:
            X = X.copy()
            X.sum_duplicates()
        data, indices, indptr = X.data, X.indices, X.indptr

        def rows_of(rows: slice) -> None:
            start, stop = indptr[rows.start], indptr[rows.stop]
            tensor_sketch_csr(
                data[start:stop],
                indices[start:stop],
                indptr[rows.start : rows.stop + 1] - start,
                d,
                scale_,
                constant_,
                hashes,
                signs,
                out[rows],
            )
    else:
        Xd = np.asarray(X)

        def rows_of(rows: slice) -> None:
            tensor_sketch_dense(Xd[rows], scale_, constant_, hashes, signs, out[rows])

    terms = float(d + (1 if constant else 0)) ** hashes.shape[0]
    parallel_rows(rows_of, X.shape[0], int(min(X.shape[0] * terms, 2**62)))


def _direct_numpy(
    X: Any, hashes: np.ndarray, signs: np.ndarray, scale: float, constant: float, out: np.ndarray
) -> None:
    dtype = out.dtype
    D = out.shape[1]
    d = X.shape[1]
    n_coords = d + (1 if constant else 0)
    Xd = X.toarray() if sp.issparse(X) else np.asarray(X)
    x = np.empty((Xd.shape[0], n_coords), dtype=dtype)
    np.multiply(Xd, dtype.type(scale), out=x[:, :d])
    if n_coords > d:
        x[:, d] = constant
    hashes = hashes[:, :n_coords]
    signs = signs[:, :n_coords].astype(np.float64)
    power, buckets, term_signs = x, hashes[0], signs[0]
    for k in range(1, hashes.shape[0]):
        power = (power[:, :, None] * x[:, None, :]).reshape(x.shape[0], -1)
        buckets = (buckets[:, None] + hashes[k][None, :]).ravel() % D
        term_signs = (term_signs[:, None] * signs[k][None, :]).ravel()
    rows = np.arange(x.shape[0]) * D
    sums = np.bincount(
        (rows[:, None] + buckets[None, :]).ravel(),
        weights=(power * term_signs.astype(dtype)).ravel(),
        minlength=x.shape[0] * D,
    )
    out[:] = sums.reshape(x.shape[0], D)


#: Up to this many count sketches, one compiled call each; beyond, the per-call cost
#: (about 45 microseconds) outweighs it and the one sparse product below runs instead.
_NUMBA_MAX_SKETCHES = 16


def count_sketches(
    X: Any,
    hashes: Any,
    signs: Any,
    scale: float,
    constant: float,
    n_components: int,
    dtype: Any,
    xp: Any = None,
) -> Any:
    """The ``p`` count sketches ``C_k x'`` of the rows ``X``, shape (rows, p, D).

    ``(C_k x')_b = sum_{j : h_k(j) = b} s_k(j) x'_j`` (Charikar, Chen & Farach-Colton
    2002).  On NumPy (``xp`` None or NumPy's namespace): numba's direct sums, or one
    sparse product with the signed hashes.  Other libraries: one scatter-add
    (:func:`kernelmaps._array_extras.index_add`) of the ``p d'`` signed coordinates of
    every row into the ``p D`` buckets, on ``X``'s device (``hashes`` and ``signs`` there
    too), in ``X``'s dtype.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.feature_maps._sketch_kernels import count_sketches
    >>> h, s = np.array([[1, 2, 0]]), np.array([[1, -1, 1]])
    >>> count_sketches(np.array([[3.0, 5.0]]), h, s, 1.0, 0.0, 4, np.dtype("float64"))
    array([[[ 0.,  3., -5.,  0.]]])
    """
    if xp is not None and not is_numpy(xp):
        return _count_sketches_scattered(xp, X, hashes, signs, scale, constant, n_components)
    p, d1 = hashes.shape
    d = d1 - 1
    D = n_components
    if numba_enabled() and p <= _NUMBA_MAX_SKETCHES:
        C = np.empty((X.shape[0], p, D), dtype=dtype)
        for k in range(p):
            _direct_numba(X, hashes[k : k + 1], signs[k : k + 1], scale, constant, C[:, k])
        return C
    # one sparse product X @ S with S the (d, p D) matrix of the signed hashes
    signed = signs[:, :d].astype(dtype) * dtype.type(scale)
    S = sp.csr_matrix(
        (
            signed.T.ravel(),
            (np.repeat(np.arange(d), p), (hashes[:, :d] + D * np.arange(p)[:, None]).T.ravel()),
        ),
        shape=(d, p * D),
    )
    C = np.ascontiguousarray(safe_sparse_dot(X, S, dense_output=True), dtype=dtype)
    C = C.reshape(X.shape[0], p, D)
    if constant:
        # one bucket per sketch k (distinct (k, bucket) pairs): the same additions as a
        # loop over k, at once
        shift = (signs[:, d] * constant).astype(dtype)
        C[:, np.arange(p), hashes[:, d]] += shift
    return C


def _count_sketches_scattered(
    xp: Any, X: Any, hashes: Any, signs: Any, scale: float, constant: float, n_components: int
) -> Any:
    """The route of :func:`count_sketches` for the arrays of another library than NumPy
    (standard functions and ``index_add``), shape (rows, p, D)."""
    n = X.shape[0]
    p = hashes.shape[0]
    D = int(n_components)
    coordinates = X * scale
    if constant:
        ones = xp.full((n, 1), constant, dtype=X.dtype, device=device_of(X))
        coordinates = xp.concat((coordinates, ones), axis=1)
    k = coordinates.shape[1]
    shifts = D * xp.arange(p, dtype=hashes.dtype, device=device_of(X))
    buckets = xp.reshape(hashes[:, :k] + xp.expand_dims(shifts, axis=1), (p * k,))
    signed = xp.expand_dims(xp.astype(signs[:, :k], X.dtype), axis=2)
    terms = signed * xp.expand_dims(xp.matrix_transpose(coordinates), axis=0)  # (p, k, n)
    sketches = xp.zeros((p * D, n), dtype=X.dtype, device=device_of(X))
    sketches = index_add(xp, sketches, buckets, xp.reshape(terms, (p * k, n)))
    return xp.reshape(xp.matrix_transpose(sketches), (n, p, D))
