"""What the array API standard lacks and the estimators need, a path per library each.

:func:`cholesky` raises where a device returns NaN silently, :func:`solve_triangular`,
:func:`add_to_diagonal` (in place where the library can), :func:`index_add` (a scatter-add)
and :func:`fft_pair` (the standard's optional ``fft`` extension, or the host's FFT): each
with PyTorch's, CuPy's and NumPy's own function where they have one, and a generic fallback
in standard operations for any other library.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ._array_api import compat_module, device_of, to_namespace, to_numpy

__all__ = [
    "DeviceLinAlgError",
    "add_to_diagonal",
    "cholesky",
    "fft_pair",
    "index_add",
    "solve_triangular",
]


class DeviceLinAlgError(np.linalg.LinAlgError):
    """A factorization on a device failed (the library returned NaN or raised)."""


def cholesky(xp: Any, A: Any, what: str, *, overwrite: bool = False) -> Any:
    """The lower Cholesky factor of the symmetric ``A``, or :class:`DeviceLinAlgError` (a
    :class:`numpy.linalg.LinAlgError`) when ``A`` is not positive definite, on every
    library (PyTorch and CuPy return NaN or a finite, wrong factor silently on a device;
    CuPy checks only under ``cupyx.errstate(linalg="raise")``).

    With ``overwrite``, PyTorch factors in ``A``'s own memory (no second matrix: the
    factor is ``A``, its upper triangle zeroed); the other libraries make a copy.
    """
    compat = compat_module()
    try:
        if overwrite and compat.is_torch_namespace(xp):
            L = _torch_cholesky_in_place(A)
        elif compat.is_cupy_namespace(xp):
            import cupyx

            with cupyx.errstate(linalg="raise"):
                L = xp.linalg.cholesky(A)
        else:
            L = xp.linalg.cholesky(A)
    except Exception as error:  # each library raises its own type
        raise DeviceLinAlgError(f"{what} is not positive definite ({error}).") from error
    if not bool(xp.all(xp.isfinite(L))):
        raise DeviceLinAlgError(f"{what} is not positive definite (NaN in its Cholesky factor).")
    return L


def _torch_cholesky_in_place(A: Any) -> Any:
    """The lower factor of the symmetric tensor ``A`` in ``A``: LAPACK and cuSOLVER factor
    a column-major matrix in place, which ``A.mT`` is for a row-major ``A`` (and equal to
    ``A``); its upper factor, read through ``A``, is the lower one."""
    import torch

    info = torch.empty((), dtype=torch.int32, device=A.device)
    torch.linalg.cholesky_ex(A.mT, upper=True, out=(A.mT, info))
    if int(info) > 0:
        raise np.linalg.LinAlgError(f"its leading minor of order {int(info)} is not positive")
    return A


def solve_triangular(xp: Any, T: Any, B: Any, *, lower: bool, transpose: bool = False) -> Any:
    """``T^{-1} B`` (``T^{-T} B`` with ``transpose``) for a triangular ``T``: the
    library's triangular solve where it has one, a general solve otherwise."""
    compat = compat_module()
    if compat.is_torch_namespace(xp):
        import torch

        M = T.mT if transpose else T
        return torch.linalg.solve_triangular(M, B, upper=lower == transpose)
    if compat.is_cupy_namespace(xp):
        import cupyx.scipy.linalg

        return cupyx.scipy.linalg.solve_triangular(T, B, lower=lower, trans=int(transpose))
    if compat.is_numpy_namespace(xp):
        import scipy.linalg

        return scipy.linalg.solve_triangular(T, B, lower=lower, trans=int(transpose))
    M = xp.matrix_transpose(T) if transpose else T
    return xp.linalg.solve(M, B)


def add_to_diagonal(xp: Any, A: Any, value: float) -> Any:
    """``A + value I`` for a square ``A``: in place where the library can (the result is
    then ``A`` itself), a new array otherwise."""
    compat = compat_module()
    if compat.is_torch_namespace(xp):
        A.diagonal().add_(value)
        return A
    if compat.is_numpy_namespace(xp) or compat.is_cupy_namespace(xp):
        index = xp.arange(A.shape[0])
        A[index, index] += value
        return A
    eye = xp.eye(A.shape[0], dtype=A.dtype, device=device_of(A))
    return A + float(value) * eye


def index_add(xp: Any, target: Any, index: Any, values: Any) -> Any:
    """``target[index[i], :] += values[i, :]`` with repeated indices added (a scatter-add
    along the first axis); returns the target (updated in place where the library can)."""
    compat = compat_module()
    if compat.is_torch_namespace(xp):
        return target.index_add_(0, index, values)
    if compat.is_cupy_namespace(xp):
        import cupyx

        cupyx.scatter_add(target, index, values)
        return target
    if compat.is_numpy_namespace(xp):
        np.add.at(target, index, values)
        return target
    # generic: a one-hot product (rows of target x entries of index)
    one_hot = xp.astype(
        xp.arange(target.shape[0], device=device_of(target))[:, None] == index[None, :],
        values.dtype,
    )
    return target + one_hot @ values


def fft_pair(xp: Any) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """``(rfft, irfft)`` along the last axis: the namespace's ``fft`` extension, or the
    host's NumPy FFT with the copies there and back."""
    fft = getattr(xp, "fft", None)
    if fft is not None and hasattr(fft, "rfft"):
        return fft.rfft, fft.irfft

    def rfft(x: Any, n: int | None = None, axis: int = -1) -> Any:
        return to_namespace(np.fft.rfft(to_numpy(x), n=n, axis=axis), xp, device_of(x))

    def irfft(x: Any, n: int | None = None, axis: int = -1) -> Any:
        return to_namespace(np.fft.irfft(to_numpy(x), n=n, axis=axis), xp, device_of(x))

    return rfft, irfft
