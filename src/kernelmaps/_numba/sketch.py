"""Compiled direct TensorSketch: the circular convolution of sparse count sketches (numba).

The TensorSketch of ``x'`` is the count sketch of its tensor power,
``z[(h_1(i_1) + ... + h_p(i_p)) mod D] += s_1(i_1) ... s_p(i_p) x'_{i_1} ... x'_{i_p}``,
summed over all ``nnz(x')^p`` index tuples.  When that number is small against the
``(p + 1) D log D`` of the FFT route (e.g. ``d = 64``, ``p = 2``, ``D = 4096``), the sum
is cheaper done directly: each row builds the ``nnz^(p - 1)`` partial products with their
partial buckets, then scatters ``nnz`` terms per partial product into the output row.
Zero coordinates are skipped, so sparse rows cost ``nnz^p``.  The kernels are serial and
release the GIL; the caller runs row ranges on one thread per core
(:mod:`kernelmaps._parallel`), as for the other compiled kernels.

The numpy counterpart (the same sum through ``np.bincount``) and the FFT route live in
:mod:`kernelmaps.feature_maps._sketch`; the tests check all three agree.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import types

from ._jit import array, flat_rows, jit, kernel, scalar

__all__ = ["tensor_sketch_csr", "tensor_sketch_dense"]

_OPTIONS = {"nogil": True}
_FLOATS = ("float32", "float64")
_INDICES = ("int32", "int64")


@jit(inline="always", **_OPTIONS)
def _row_buffers(width, p, dtype):  # type: ignore[no-untyped-def]
    """Scratch of one row: its non-zeros, the partial products and the last factor."""
    return (
        np.empty(width, dtype=dtype),
        np.empty(width, dtype=np.int64),
        np.empty(width ** (p - 1), dtype=dtype),
        np.empty(width ** (p - 1), dtype=np.int64),
        np.empty(width, dtype=dtype),
        np.empty(width, dtype=np.int64),
    )


@jit(**_OPTIONS)
def _sketch_row(count, constant, d, hashes, signs, row, scratch):  # type: ignore[no-untyped-def]
    """Write the sketch of one row, given by its ``count`` non-zeros, into ``row``.

    ``scratch`` is :func:`_row_buffers`: the non-zeros' values and coordinates come
    first; the constant coordinate (index ``d``) is appended when ``constant`` is not 0.
    """
    values, coords, vals, cols, last_vals, last_cols = scratch
    if constant != 0:
        values[count] = constant
        coords[count] = d
        count += 1
    p = hashes.shape[0]
    D = row.shape[0]
    row[:] = 0.0
    if count == 0:
        return
    vals[0] = 1.0
    cols[0] = 0
    length = 1
    for k in range(p - 1):
        # Expand every partial product by one factor, in place from the end.
        for q in range(length - 1, -1, -1):
            v = vals[q]
            c = cols[q]
            base = q * count
            for t in range(count):
                j = coords[t]
                cc = c + hashes[k, j]
                if cc >= D:
                    cc -= D
                vals[base + t] = v * (signs[k, j] * values[t])
                cols[base + t] = cc
        length *= count
    k = p - 1
    for t in range(count):
        j = coords[t]
        last_vals[t] = signs[k, j] * values[t]
        last_cols[t] = hashes[k, j]
    for q in range(length):
        v = vals[q]
        c = cols[q]
        for t in range(count):
            cc = c + last_cols[t]
            if cc >= D:
                cc -= D
            row[cc] += v * last_vals[t]


@jit(inline="always", **_OPTIONS)
def _gather(values, positions, scale, scratch):  # type: ignore[no-untyped-def]
    """Copy the non-zeros of one row (``values`` at ``positions``) into ``scratch``.

    Returns their number; the values are multiplied by ``scale``.
    """
    nonzero_values, nonzero_coords = scratch[0], scratch[1]
    count = np.int64(0)
    for t in range(values.shape[0]):
        v = values[t]
        if v != 0:
            nonzero_values[count] = scale * v
            nonzero_coords[count] = positions[t]
            count += 1
    return count


# The output arrives as a flat C-contiguous buffer with a row stride (``flat_rows``),
# which serves whole outputs and the column slices of the FFT route's count sketches
# with one compiled version (a 2-d 'A' output runs 15% slower).
def _dense_signature(t: str) -> types.Type:
    return types.void(
        array(t, 2, readonly=True),
        scalar(t),
        scalar(t),
        array("int64", 2, readonly=True),
        array(t, 2, readonly=True),
        array(t, 1),
        types.int64,
        types.int64,
    )


def _csr_signature(t: str, i: str) -> types.Type:
    return types.void(
        array(t, 1, readonly=True),
        array(i, 1, readonly=True),
        array(i, 1, readonly=True),
        types.int64,
        scalar(t),
        scalar(t),
        array("int64", 2, readonly=True),
        array(t, 2, readonly=True),
        array(t, 1),
        types.int64,
        types.int64,
    )


@kernel({t: _dense_signature(t) for t in _FLOATS}, **_OPTIONS)
def _tensor_sketch_dense(X, scale, constant, hashes, signs, out, stride, D):  # type: ignore[no-untyped-def]
    """Direct TensorSketch of the dense rows ``X`` (n, d) into the rows of ``out``.

    ``x' = (scale x, constant)``: the constant coordinate has index ``d`` in ``hashes``
    and ``signs`` (shape (p, d + 1)) and is skipped when ``constant == 0``.  Row ``r``
    of the output is ``out[r * stride : r * stride + D]``.
    """
    d = X.shape[1]
    columns = np.arange(d)
    scratch = _row_buffers(d + 1, hashes.shape[0], out.dtype)
    for r in range(X.shape[0]):
        count = _gather(X[r], columns, scale, scratch)
        row = out[r * stride : r * stride + D]
        _sketch_row(count, constant, d, hashes, signs, row, scratch)


@kernel({(t, i): _csr_signature(t, i) for t in _FLOATS for i in _INDICES}, **_OPTIONS)
def _tensor_sketch_csr(  # type: ignore[no-untyped-def]
    data, indices, indptr, n_features, scale, constant, hashes, signs, out, stride, D
):
    """Direct TensorSketch of the CSR rows ``(data, indices, indptr)`` into ``out``."""
    scratch = _row_buffers(n_features + 1, hashes.shape[0], out.dtype)
    for r in range(indptr.shape[0] - 1):
        start, stop = indptr[r], indptr[r + 1]
        count = _gather(data[start:stop], indices[start:stop], scale, scratch)
        row = out[r * stride : r * stride + D]
        _sketch_row(count, constant, n_features, hashes, signs, row, scratch)


def _run(compiled: Any, args: tuple[Any, ...], out: np.ndarray) -> None:
    """``compiled(*args, *flat_rows(out))``, through a C buffer for other layouts."""
    D = out.shape[1]
    rows = flat_rows(out, D) if out.flags.writeable else None
    if rows is not None:
        compiled(*args, rows[0], rows[1], D)
        return
    buffer = np.empty(out.shape, dtype=out.dtype)
    compiled(*args, buffer.reshape(-1), D, D)
    out[...] = buffer


def tensor_sketch_dense(
    X: np.ndarray,
    scale: float,
    constant: float,
    hashes: np.ndarray,
    signs: np.ndarray,
    out: np.ndarray,
) -> None:
    """Direct TensorSketch of the dense rows ``X`` (n, d) into ``out`` (n, D).

    The compiled version of the dtype of ``out`` (float32 or float64); the other
    arguments are brought to it (no copy when they already are).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._numba.sketch import tensor_sketch_dense
    >>> out = np.empty((1, 4))
    >>> h, s = np.array([[1, 2, 0]]), np.array([[1.0, -1.0, 1.0]])
    >>> tensor_sketch_dense(np.array([[3.0, 5.0]]), 1.0, 0.0, h, s, out)
    >>> out
    array([[ 0.,  3., -5.,  0.]])
    """
    dtype = out.dtype
    args = (
        np.ascontiguousarray(X, dtype=dtype),
        dtype.type(scale),
        dtype.type(constant),
        np.ascontiguousarray(hashes, dtype=np.int64),
        np.ascontiguousarray(signs, dtype=dtype),
    )
    _run(_tensor_sketch_dense[dtype.name], args, out)


def tensor_sketch_csr(
    data: np.ndarray,
    indices: np.ndarray,
    indptr: np.ndarray,
    n_features: int,
    scale: float,
    constant: float,
    hashes: np.ndarray,
    signs: np.ndarray,
    out: np.ndarray,
) -> None:
    """Direct TensorSketch of the CSR rows ``(data, indices, indptr)`` into ``out``.

    The compiled version of the dtype of ``out`` and of the index arrays (int32 or
    int64, the two of scipy's CSR matrices; other index types are converted).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._numba.sketch import tensor_sketch_csr
    >>> out = np.empty((1, 4))
    >>> h, s = np.array([[1, 2, 0]]), np.array([[1.0, -1.0, 1.0]])
    >>> data, indices, indptr = np.array([5.0]), np.array([1]), np.array([0, 1])
    >>> tensor_sketch_csr(data, indices, indptr, 2, 1.0, 0.0, h, s, out)
    >>> out
    array([[ 0.,  0., -5.,  0.]])
    """
    dtype = out.dtype
    index = np.result_type(indices.dtype, indptr.dtype)
    index = np.dtype(np.int32) if index == np.int32 else np.dtype(np.int64)
    args = (
        np.ascontiguousarray(data, dtype=dtype),
        np.ascontiguousarray(indices, dtype=index),
        np.ascontiguousarray(indptr, dtype=index),
        int(n_features),
        dtype.type(scale),
        dtype.type(constant),
        np.ascontiguousarray(hashes, dtype=np.int64),
        np.ascontiguousarray(signs, dtype=dtype),
    )
    _run(_tensor_sketch_csr[dtype.name, index.name], args, out)
