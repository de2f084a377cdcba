"""Helpers shared by the models: kernel arguments, targets and row-block prediction."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import validate_data

from ..kernels import Kernel, check_kernel_matrix

__all__ = [
    "FLOAT_DTYPES",
    "as_row_sliceable",
    "kernel_matrix",
    "output_dtype",
    "validate_regression_data",
]

FLOAT_DTYPES = (np.float64, np.float32)

KernelLike = str | Kernel | Callable[..., Any]


def validate_regression_data(estimator: Any, X: Any, y: Any, *, reset: bool = True) -> Any:
    """``(X, y)`` checked as the regressors need them: ``X`` dense, CSR or CSC in float64
    or float32, ``y`` numeric with one or several targets (scikit-learn's messages)."""
    return validate_data(
        estimator,
        X,
        y,
        accept_sparse=("csr", "csc"),
        dtype=FLOAT_DTYPES,
        multi_output=True,
        y_numeric=True,
        reset=reset,
    )


def kernel_matrix(kernel: Callable[..., Any], X: Any, Y: Any) -> np.ndarray:
    """``kernel(X, Y)`` as a dense float64 array, with its shape checked."""
    return check_kernel_matrix(kernel(X, Y), X.shape[0], Y.shape[0])


def output_dtype(X: Any) -> np.dtype:
    """float32 for float32 input, float64 otherwise."""
    return np.dtype(np.float32) if getattr(X, "dtype", None) == np.float32 else np.dtype(np.float64)


def as_row_sliceable(X: Any) -> Any:
    """CSR for sparse input (row blocks slice cheaply), with 32-bit indices when they fit.

    Some of scikit-learn's pairwise routines (Manhattan distances) accept only 32-bit
    sparse indices; the values are unchanged.
    """
    if not sp.issparse(X):
        return X
    X = X.tocsr()
    if X.indices.dtype != np.int32 and X.nnz < np.iinfo(np.int32).max:
        X = sp.csr_matrix(
            (X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32)), shape=X.shape
        )
    return X
