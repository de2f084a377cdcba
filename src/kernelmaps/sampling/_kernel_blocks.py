"""Kernel evaluations shared by the landmark samplers (leverage scores, RPCholesky).

Blocks of the kernel matrix, its diagonal and the refusal of an overflowing kernel, for
checked rows (:func:`kernelmaps.sampling._arguments.check_rows`): NaN and inf in a result
are left to the callers, which refuse them by name with :func:`refuse_non_finite_kernel`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..exceptions import NonFiniteOutputError
from ..kernels import check_kernel_matrix

__all__ = [
    "KERNEL_BLOCK_ROWS",
    "dense",
    "finite_kernel_diagonal",
    "kernel_block",
    "quiet_kernel_overflow",
    "raw_kernel_diagonal",
    "refuse_non_finite_kernel",
    "require_finite",
]

#: Row-block length of the kernel evaluations against the landmarks or pivots.
KERNEL_BLOCK_ROWS = 4096


def dense(rows: Any) -> np.ndarray:
    """``rows`` as a dense array (a sparse matrix densified)."""
    return rows.toarray() if sp.issparse(rows) else np.asarray(rows)


def kernel_block(kernel: Callable[..., Any], X: Any, Y: Any) -> np.ndarray:
    """``kernel(X, Y)``, its shape checked; NaN and inf left to the caller."""
    return check_kernel_matrix(kernel(X, Y), X.shape[0], Y.shape[0], finite=False)


def raw_kernel_diagonal(kernel: Callable[..., Any], X: Any) -> np.ndarray:
    """``k(x, x)`` of the rows of ``X`` in float64 (``kernel.diag`` when it has one)."""
    diag = getattr(kernel, "diag", None)
    if diag is not None:
        return np.asarray(diag(X), dtype=np.float64).reshape(-1)
    n = X.shape[0]
    return np.array(
        [float(kernel_block(kernel, X[i : i + 1], X[i : i + 1])[0, 0]) for i in range(n)],
        dtype=np.float64,
    )


def finite_kernel_diagonal(kernel: Callable[..., Any], X: Any, method: str) -> np.ndarray:
    """:func:`raw_kernel_diagonal`, refused by :func:`require_finite` when not finite."""
    diag = raw_kernel_diagonal(kernel, X)
    require_finite(diag, method, X, "k(x, x)")
    return diag


def quiet_kernel_overflow() -> np.errstate:
    """numpy's overflow, invalid and divide warnings off: the samplers refuse non-finite
    results by name (:func:`require_finite`) instead of warning about them."""
    return np.errstate(over="ignore", invalid="ignore", divide="ignore")


def require_finite(values: np.ndarray, method: str, X: Any, what: str) -> None:
    """:func:`refuse_non_finite_kernel` unless every one of ``values`` is finite."""
    if not np.all(np.isfinite(values)):
        refuse_non_finite_kernel(method, X, what)


def refuse_non_finite_kernel(method: str, X: Any, what: str) -> None:
    """Raise :class:`~kernelmaps.exceptions.NonFiniteOutputError`: ``what`` overflowed."""
    values = X.data if sp.issparse(X) else np.asarray(X)
    largest = float(max(values.max(), -values.min())) if values.size else 0.0
    raise NonFiniteOutputError(
        f"landmarks={method!r}: {what} has non-finite values, the kernel overflowed for "
        f"this data (largest |x| = {largest:.3g}); rescale the data or use a smaller gamma, "
        "or landmarks='uniform' (limits: docs/LIMITS.md)."
    )
