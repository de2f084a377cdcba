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

__all__ = ["dense", "kernel_block", "raw_kernel_diagonal", "refuse_non_finite_kernel"]


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


def refuse_non_finite_kernel(method: str, X: Any, what: str) -> None:
    """Raise :class:`~kernelmaps.exceptions.NonFiniteOutputError`: ``what`` overflowed."""
    values = X.data if sp.issparse(X) else np.asarray(X)
    largest = float(max(values.max(), -values.min())) if values.size else 0.0
    raise NonFiniteOutputError(
        f"landmarks={method!r}: {what} has non-finite values, the kernel overflowed for "
        f"this data (largest |x| = {largest:.3g}); rescale the data or use a smaller gamma, "
        "or landmarks='uniform' (limits: docs/LIMITS.md)."
    )
