"""Kernel evaluations shared by the landmark samplers (leverage scores, RPCholesky).

Blocks of the kernel matrix, its diagonal and the refusal of an overflowing kernel, for
checked rows (:func:`kernelmaps.sampling._arguments.check_rows`) of any array library:
NaN and inf in a result are left to the callers, which refuse them by name with
:func:`refuse_non_finite_kernel`.  :func:`kernel_diagonal` is the public diagonal: it
checks its arguments and refuses an overflow itself.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._array_api import (
    get_namespace,
    is_numpy,
    on_host,
    supports_float64,
    to_namespace,
    to_numpy,
)
from ..exceptions import NonFiniteOutputError
from ..kernels import Kernel, check_kernel_matrix
from ._arguments import check_kernel, check_rows

__all__ = [
    "KERNEL_BLOCK_ROWS",
    "dense",
    "finite_kernel_diagonal",
    "kernel_block",
    "kernel_diagonal",
    "quiet_kernel_overflow",
    "raw_kernel_diagonal",
    "refuse_non_finite_kernel",
    "require_finite",
    "take_rows",
    "work_dtype",
]

#: Row-block length of the kernel evaluations against the landmarks or pivots.
KERNEL_BLOCK_ROWS = 4096


def dense(rows: Any) -> Any:
    """``rows`` as a dense array: a sparse matrix densified, an array of another library
    as it is."""
    if sp.issparse(rows):
        return rows.toarray()
    return np.asarray(rows) if is_numpy(get_namespace(rows)[0]) else rows


def take_rows(X: Any, indices: np.ndarray) -> Any:
    """The rows ``indices`` (host ints) of ``X``, dense, in ``X``'s namespace and device."""
    xp, device = get_namespace(X)
    if is_numpy(xp):
        return dense(X[indices])
    return xp.take(X, to_namespace(indices, xp, device), axis=0)


def _checked_block(kernel: Callable[..., Any], X: Any, Y: Any) -> np.ndarray:
    return check_kernel_matrix(kernel(X, Y), X.shape[0], Y.shape[0], finite=False)


def kernel_block(kernel: Callable[..., Any], A: Any, B: Any) -> Any:
    """``kernel(A, B)`` in :func:`work_dtype`, with the values the NumPy kernels give.

    NaN and inf are left to the caller.  Arrays of another library give arrays of theirs,
    on their device: a :class:`~kernelmaps.kernels.Kernel` runs there on the rows cast to
    the working dtype, and its values are rounded once to the rows' dtype, as the NumPy
    kernels round their float64 result for float32 rows (a no-op for float64 rows).  Any
    other callable is written for NumPy arrays: it is called on the host (its shape
    checked), and its result moved.

    Examples
    --------
    >>> import array_api_strict as xp
    >>> import sklearn
    >>> from kernelmaps.kernels import Gaussian
    >>> from kernelmaps.sampling import kernel_block
    >>> A = xp.asarray([[0.0, 1.0], [1.0, 1.0]], dtype=xp.float32)
    >>> with sklearn.config_context(array_api_dispatch=True):
    ...     K = kernel_block(Gaussian(gamma=0.5), A, A)
    >>> K.dtype, round(float(K[0, 1]), 4)
    (array_api_strict.float64, 0.6065)
    """
    xp, _ = get_namespace(A, B)
    work = work_dtype(A)
    if is_numpy(xp) or not isinstance(kernel, Kernel):
        return on_host(functools.partial(_checked_block, kernel), A, B, dtype=work)
    K = kernel(xp.astype(A, work, copy=False), xp.astype(B, work, copy=False))
    rounded = xp.astype(K, xp.result_type(A.dtype, B.dtype), copy=False)
    return xp.astype(rounded, work, copy=False)


def work_dtype(X: Any) -> Any:
    """The dtype the samplers compute in for the rows ``X`` (any library), in ``X``'s
    namespace: float64 where its device has it, else float32.

    Examples
    --------
    >>> import array_api_strict as xp
    >>> from kernelmaps.sampling import work_dtype
    >>> work_dtype(xp.asarray([[1.0]], dtype=xp.float32))
    array_api_strict.float64
    """
    xp, device = get_namespace(X)
    return xp.float64 if supports_float64(xp, device) else xp.float32


def raw_kernel_diagonal(kernel: Callable[..., Any], X: Any) -> np.ndarray:
    """``k(x, x)`` of the rows of ``X`` (any library) as a float64 host array
    (``kernel.diag`` when it has one): a :class:`~kernelmaps.kernels.Kernel` on the rows'
    device in :func:`work_dtype`, any other callable on the host."""
    xp, _ = get_namespace(X)
    if not is_numpy(xp):
        X = xp.astype(X, work_dtype(X), copy=False) if isinstance(kernel, Kernel) else to_numpy(X)
    diag = getattr(kernel, "diag", None)
    if diag is not None:
        return np.asarray(to_numpy(diag(X)), dtype=np.float64).reshape(-1)
    n = X.shape[0]
    return np.array(
        [float(kernel_block(kernel, X[i : i + 1], X[i : i + 1])[0, 0]) for i in range(n)],
        dtype=np.float64,
    )


def kernel_diagonal(kernel: Callable[..., Any], X: Any) -> Any:
    """``k(x, x)`` for every row of ``X`` in :func:`work_dtype` (float64 for NumPy rows),
    without the ``n x n`` matrix.

    Uses ``kernel.diag`` when the kernel has one, else evaluates ``k`` on single rows.
    Arrays of another library give arrays of theirs, on their device.

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
    xp, device = get_namespace(X)
    return out if is_numpy(xp) else to_namespace(out, xp, device, dtype=work_dtype(X))


def finite_kernel_diagonal(kernel: Callable[..., Any], X: Any, method: str) -> np.ndarray:
    """:func:`raw_kernel_diagonal`, refused by :func:`require_finite` when not finite."""
    diag = raw_kernel_diagonal(kernel, X)
    require_finite(diag, method, X, "k(x, x)")
    return diag


def quiet_kernel_overflow() -> np.errstate:
    """numpy's overflow, invalid and divide warnings off: the samplers refuse non-finite
    results by name (:func:`require_finite`) instead of warning about them."""
    return np.errstate(over="ignore", invalid="ignore", divide="ignore")


def require_finite(values: Any, method: str, X: Any, what: str) -> None:
    """:func:`refuse_non_finite_kernel` unless every one of ``values`` (any library) is
    finite."""
    xp, _ = get_namespace(values)
    if not bool(xp.all(xp.isfinite(values))):
        refuse_non_finite_kernel(method, X, what)


def refuse_non_finite_kernel(method: str, X: Any, what: str) -> None:
    """Raise :class:`~kernelmaps.exceptions.NonFiniteOutputError`: ``what`` overflowed
    for the rows ``X`` (any library)."""
    values = X.data if sp.issparse(X) else np.asarray(to_numpy(X))
    largest = float(max(values.max(), -values.min())) if values.size else 0.0
    raise NonFiniteOutputError(
        f"landmarks={method!r}: {what} has non-finite values, the kernel overflowed for "
        f"this data (largest |x| = {largest:.3g}); rescale the data or use a smaller gamma, "
        "or landmarks='uniform' (limits: docs/LIMITS.md)."
    )
