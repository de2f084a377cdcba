"""Kernel evaluations shared by the landmark samplers (leverage scores, RPCholesky).

Blocks of the kernel matrix, its diagonal and the refusal of an overflowing kernel, for
checked rows (:func:`kernelmaps.sampling._arguments.check_rows`): NaN and inf in a result
are left to the callers, which refuse them by name with :func:`refuse_non_finite_kernel`.
:func:`kernel_diagonal` is the public diagonal: it checks its arguments and refuses an
overflow itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._array_api import device_of, namespace_of, supports_float64, to_namespace, to_numpy
from ..exceptions import NonFiniteOutputError
from ..kernels import Kernel, check_kernel_matrix
from ._arguments import check_kernel, check_rows

__all__ = [
    "KERNEL_BLOCK_ROWS",
    "dense",
    "finite_kernel_diagonal",
    "kernel_block",
    "kernel_block_array",
    "kernel_diagonal",
    "kernel_diagonal_array",
    "quiet_kernel_overflow",
    "raw_kernel_diagonal",
    "refuse_non_finite_kernel",
    "require_finite",
    "work_dtype",
]

#: Row-block length of the kernel evaluations against the landmarks or pivots.
KERNEL_BLOCK_ROWS = 4096


def dense(rows: Any) -> np.ndarray:
    """``rows`` as a dense array (a sparse matrix densified)."""
    return rows.toarray() if sp.issparse(rows) else np.asarray(rows)


def kernel_block(kernel: Callable[..., Any], X: Any, Y: Any) -> np.ndarray:
    """``kernel(X, Y)``, its shape checked; NaN and inf left to the caller."""
    return check_kernel_matrix(kernel(X, Y), X.shape[0], Y.shape[0], finite=False)


def work_dtype(X: Any) -> Any:
    """The dtype the samplers compute in for ``X``, an array of another library: float64
    where its device has it (as the NumPy samplers), else float32.

    Examples
    --------
    >>> import array_api_strict as xp
    >>> from kernelmaps.sampling import work_dtype
    >>> work_dtype(xp.asarray([[1.0]], dtype=xp.float32))
    array_api_strict.float64
    """
    xp = namespace_of(X)
    return xp.float64 if supports_float64(xp, device_of(X)) else xp.float32


def kernel_block_array(kernel: Callable[..., Any], A: Any, B: Any) -> Any:
    """``kernel(A, B)`` for rows ``A``, ``B`` of an array of another library, in
    :func:`work_dtype`, on their device, with the values the NumPy samplers see.

    A :class:`~kernelmaps.kernels.Kernel` runs on the device on the rows cast to the
    working dtype, and its values are rounded once to the dtype of the rows, as the NumPy
    kernels round their float64 result for float32 rows (a no-op for float64 rows).  Any
    other callable is written for NumPy arrays: it is called on the host, and its result
    moved.  NaN and inf are left to the caller.

    Examples
    --------
    >>> import array_api_strict as xp
    >>> import sklearn
    >>> from kernelmaps.kernels import Gaussian
    >>> from kernelmaps.sampling import kernel_block_array
    >>> A = xp.asarray([[0.0, 1.0], [1.0, 1.0]], dtype=xp.float32)
    >>> with sklearn.config_context(array_api_dispatch=True):
    ...     K = kernel_block_array(Gaussian(gamma=0.5), A, A)
    >>> K.dtype, round(float(K[0, 1]), 4)
    (array_api_strict.float64, 0.6065)
    """
    xp, work = namespace_of(A), work_dtype(A)
    if not isinstance(kernel, Kernel):
        K = np.asarray(kernel_block(kernel, to_numpy(A), to_numpy(B)), dtype=np.float64)
        return to_namespace(K, xp, device_of(A), dtype=work)
    K = kernel(xp.astype(A, work), xp.astype(B, work))
    if A.dtype != work:
        K = xp.astype(xp.astype(K, A.dtype), work)
    return K


def kernel_diagonal_array(kernel: Callable[..., Any], X: Any) -> np.ndarray:
    """``k(x, x)`` of the rows of ``X`` (an array of another library) as a float64 host
    array, as :func:`raw_kernel_diagonal` gives it for the same rows: ``kernel.diag`` on
    the device in :func:`work_dtype`, a callable without one on the host."""
    if isinstance(kernel, Kernel):
        xp = namespace_of(X)
        return to_numpy(kernel.diag(xp.astype(X, work_dtype(X)))).astype(np.float64)
    return raw_kernel_diagonal(kernel, to_numpy(X))


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


def kernel_diagonal(kernel: Callable[..., Any], X: Any) -> np.ndarray:
    """``k(x, x)`` for every row of ``X`` in float64, without the ``n x n`` matrix.

    Uses ``kernel.diag`` when the kernel has one, else evaluates ``k`` on single rows.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import Gaussian
    >>> from kernelmaps.sampling import kernel_diagonal
    >>> kernel_diagonal(Gaussian(gamma=1.0), np.zeros((3, 2))).tolist()
    [1.0, 1.0, 1.0]
    """
    check_kernel(kernel)
    X = check_rows(X)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused just below
        out = raw_kernel_diagonal(kernel, X)
    if not np.all(np.isfinite(out)):
        row = int(np.flatnonzero(~np.isfinite(out))[0])
        raise NonFiniteOutputError(
            f"kernel_diagonal: k(x, x) of row {row} is not finite, the kernel overflowed for "
            "this data; rescale the data or the kernel's parameters (limits: docs/LIMITS.md)."
        )
    return out


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
