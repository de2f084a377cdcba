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

import numba
import numpy as np

_OPTIONS = {"cache": True, "nogil": True}


@numba.njit(inline="always", **_OPTIONS)
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


@numba.njit(**_OPTIONS)
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


@numba.njit(inline="always", **_OPTIONS)
def _gather(values, positions, scale, scratch):  # type: ignore[no-untyped-def]
    """Copy the non-zeros of one row (``values`` at ``positions``) into ``scratch``.

    Returns their number; the values are multiplied by ``scale``.
    """
    nonzero_values, nonzero_coords = scratch[0], scratch[1]
    count = 0
    for t in range(values.shape[0]):
        v = values[t]
        if v != 0:
            nonzero_values[count] = scale * v
            nonzero_coords[count] = positions[t]
            count += 1
    return count


@numba.njit(**_OPTIONS)
def tensor_sketch_dense(X, scale, constant, hashes, signs, out):  # type: ignore[no-untyped-def]
    """Direct TensorSketch of the dense rows ``X`` (n, d) into ``out`` (n, D).

    ``x' = (scale x, constant)``: the constant coordinate has index ``d`` in ``hashes``
    and ``signs`` (shape (p, d + 1)) and is skipped when ``constant == 0``.
    """
    d = X.shape[1]
    columns = np.arange(d)
    scratch = _row_buffers(d + 1, hashes.shape[0], out.dtype)
    for r in range(X.shape[0]):
        count = _gather(X[r], columns, scale, scratch)
        _sketch_row(count, constant, d, hashes, signs, out[r], scratch)


@numba.njit(**_OPTIONS)
def tensor_sketch_csr(data, indices, indptr, n_features, scale, constant, hashes, signs, out):  # type: ignore[no-untyped-def]
    """Direct TensorSketch of the CSR rows ``(data, indices, indptr)`` into ``out``."""
    scratch = _row_buffers(n_features + 1, hashes.shape[0], out.dtype)
    for r in range(indptr.shape[0] - 1):
        start, stop = indptr[r], indptr[r + 1]
        count = _gather(data[start:stop], indices[start:stop], scale, scratch)
        _sketch_row(count, constant, n_features, hashes, signs, out[r], scratch)
