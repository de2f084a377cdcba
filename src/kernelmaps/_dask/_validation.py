"""Validation of Dask array input from its metadata alone (nothing is computed).

scikit-learn's ``check_array`` would convert a Dask array to numpy, pulling all of it to
the client.  Here the dimensions, the column count and the dtype are checked from the
array's metadata; the values (finiteness, ranges such as non-negativity for the χ²
kernels) are checked inside each chunk by the numpy path, when the chunk is computed,
with the same messages.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.sparse as sp
from dask.array.utils import meta_from_array

__all__ = ["FLOAT_DTYPES", "check_dask_array", "is_sparse_array", "zero_rows"]

FLOAT_DTYPES = (np.dtype(np.float64), np.dtype(np.float32))


def is_sparse_array(X: Any) -> bool:
    """Whether the chunks of the Dask array ``X`` are scipy.sparse matrices."""
    return bool(sp.issparse(meta_from_array(X)))


def zero_rows(X: Any, n_rows: int = 0) -> Any:
    """``n_rows`` rows of zeros of the kind of ``X``'s chunks (dense or CSR), same dtype."""
    shape = (n_rows, int(X.shape[1]))
    if is_sparse_array(X):
        return sp.csr_matrix(shape, dtype=X.dtype)
    return np.zeros(shape, dtype=X.dtype)


def check_dask_array(
    estimator: Any, X: Any, *, reset: bool, accept_sparse: bool = True, ensure_float: bool = True
) -> Any:
    """``X`` checked from its metadata, converted to float64 unless float32, and with its
    columns in one chunk (rechunked lazily when they are split).

    With ``reset`` the estimator's ``n_features_in_`` is set, otherwise ``X`` must have as
    many columns as in ``fit``.  Raises with the messages of the numpy path (empty
    input, a wrong column count, sparse input refused, a non-numeric dtype); an unknown
    column count (``nan`` in ``X.shape``) is refused with its fix.
    """
    name = type(estimator).__name__
    if X.ndim != 2:
        raise ValueError(
            f"Expected a 2D array, got a {X.ndim}D Dask array of shape {X.shape} instead. "
            "Reshape your data with X.reshape(-1, 1) for a single feature or "
            "X.reshape(1, -1) for a single sample."
        )
    n_rows, n_columns = X.shape
    if math.isnan(n_columns):
        raise ValueError(
            f"{name} needs the number of columns of X, which this Dask array does not know "
            "(shape has nan); call X.compute_chunk_sizes() or give the chunks explicitly."
        )
    if n_rows == 0 or n_columns == 0:
        raise ValueError(
            f"Found array with {n_rows} sample(s) and {n_columns} feature(s) "
            f"(shape={X.shape}) while a minimum of 1 is required by {name}."
        )
    if not accept_sparse and is_sparse_array(X):
        raise TypeError(
            f"{name} does not accept sparse input: this Dask array has scipy.sparse chunks. "
            "Densify them with X.map_blocks(lambda b: b.toarray())."
        )
    if X.dtype.kind not in "biuf":
        raise ValueError(
            f"{name} needs numeric input; this Dask array has dtype {X.dtype}. Convert it "
            "with X.astype(float)."
        )
    if ensure_float and X.dtype not in FLOAT_DTYPES:
        X = X.astype(np.float64)
    if reset:
        estimator.n_features_in_ = int(n_columns)
        if hasattr(estimator, "feature_names_in_"):
            del estimator.feature_names_in_
    elif int(n_columns) != estimator.n_features_in_:
        raise ValueError(
            f"X has {n_columns} features, but {name} is expecting "
            f"{estimator.n_features_in_} features as input."
        )
    if X.numblocks[1] > 1:
        X = X.rechunk({1: -1})
    return X
