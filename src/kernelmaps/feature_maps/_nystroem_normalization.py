"""The normalization ``K_mm^{+1/2}`` of Nyström features, on the host and on a device.

One symmetric eigendecomposition of the landmarks' kernel matrix ``K_mm``, its eigenvalues
cut off relative to the largest, and the kept eigenvectors scaled by ``w^{-1/2}`` with
deterministic signs: :func:`symmetric_normalization` for NumPy arrays (LAPACK ``?syevd``),
:func:`symmetric_normalization_array` for an array of another library (its namespace's
``linalg.eigh``, the cut-off on the host by the same code).  The checks of ``K_mm``
(finite, symmetric) and the warnings of a kernel that is not positive semidefinite are
here; IKA shares the sign convention (:func:`column_pivots_array`).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import scipy.linalg

from .._array_api import device_of, namespace_of, to_namespace, to_numpy
from ..exceptions import NonFiniteOutputError
from ..sampling import work_dtype

__all__ = [
    "EIGH_DRIVER",
    "column_pivots_array",
    "symmetric_normalization",
    "symmetric_normalization_array",
]

#: LAPACK driver of the eigendecomposition of ``K_mm`` (divide and conquer, ``?syevd``):
#: at ``m = 4096`` the fastest of ``evd``/``evr``/``ev`` here and the most accurate
#: after ``ev`` (benchmarks/nystroem_speed.py, ``--drivers``).
EIGH_DRIVER = "evd"


def symmetric_normalization(
    K_mm: np.ndarray, eigen_cutoff: float | None, *, owner: str = "Nystroem", stacklevel: int = 4
) -> tuple[np.ndarray, np.ndarray, int]:
    """``K_mm^{+1/2}`` restricted to eigenvalues above the cut-off.

    Returns ``(normalization, eigenvalues, rank)`` where ``normalization`` has shape
    ``(m, m)`` and the dtype of ``K_mm`` (float32 or float64): its first ``rank`` columns
    are ``v_i / sqrt(w_i)`` for the eigenpairs of ``K_mm`` in decreasing order with
    ``w_i > cutoff * w_max``, the others are zero.  ``eigenvalues`` is float64.

    One symmetric eigendecomposition (LAPACK ``?syevd``) in the dtype of ``K_mm``, no
    other ``O(m^3)`` work: ``V diag(w^{-1/2})`` is a valid ``K_mm^{+1/2}`` for the
    features (``Z Z^T`` does not depend on the rotation), so the symmetric square root
    ``V diag(w^{-1/2}) V^T`` (another ``2 m^3`` GEMM) is not formed.  ``cutoff=None``
    means ``max(m * eps_64, eps)`` with ``eps_64`` the float64 and ``eps`` the working
    dtype's machine epsilon: ``m * eps_64`` in float64 (the rank tolerance of
    :func:`numpy.linalg.matrix_rank`), ``eps_32 = 1.2e-7`` in float32, the size of the
    rounding noise of a float32 eigendecomposition relative to ``w_max``.  The warnings
    (no positive eigenvalue, negative eigenvalues) are issued with ``stacklevel``.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.feature_maps._nystroem_normalization import symmetric_normalization
    >>> N, w, rank = symmetric_normalization(np.diag([4.0, 1.0, 0.0]), None)
    >>> np.abs(N).round(3).tolist(), rank
    ([[0.5, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]], 2)
    """
    m = K_mm.shape[0]
    dtype = np.dtype(K_mm.dtype)
    if dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
        dtype = np.dtype(np.float64)
        K_mm = K_mm.astype(dtype)
    eps = float(np.finfo(dtype).eps)
    if not np.all(np.isfinite(K_mm)):
        _refuse_non_finite_landmark_matrix(owner)
    scale = float(np.max(np.abs(K_mm))) if m else 0.0
    asym = float(np.max(np.abs(K_mm - K_mm.T))) if m else 0.0
    _check_symmetric(asym, scale, eps, owner)
    K_sym = K_mm + K_mm.T
    K_sym *= 0.5
    w, V = scipy.linalg.eigh(K_sym, driver=EIGH_DRIVER, overwrite_a=True, check_finite=False)
    w = np.asarray(w[::-1], dtype=np.float64)
    keep = _kept_eigenvalues(w, eps, eigen_cutoff, owner=owner, stacklevel=stacklevel + 1)
    rank = int(np.count_nonzero(keep))
    normalization = np.zeros((m, m), dtype=dtype)
    if rank:
        V_top = V[:, m - rank :][:, ::-1]  # the top ``rank`` eigenvectors, decreasing
        pivots = V_top[np.argmax(np.abs(V_top), axis=0), np.arange(rank)]
        # deterministic signs (largest-magnitude entry positive) folded into the scaling
        col_scale = np.where(pivots < 0, -1.0, 1.0) / np.sqrt(w[:rank])
        np.multiply(V_top, col_scale.astype(dtype), out=normalization[:, :rank])
    return normalization, w, rank


def _refuse_non_finite_landmark_matrix(owner: str) -> None:
    raise ValueError(
        f"{owner}: the kernel matrix of the landmarks has non-finite entries; check the "
        "kernel and its parameters."
    )


def _check_symmetric(asym: float, scale: float, eps: float, owner: str) -> None:
    """Refuse a landmark kernel matrix with ``max |K - K^T| = asym`` beyond rounding."""
    if asym > max(1e-7, 100 * eps) * max(scale, np.finfo(np.float64).tiny):
        raise ValueError(
            f"{owner}: the kernel matrix of the landmarks is not symmetric (max |K - K^T| = "
            f"{asym:.3g}, max |K| = {scale:.3g}); the kernel must be a symmetric positive "
            "semidefinite function k(x, y) = k(y, x)."
        )


def _kept_eigenvalues(
    w: np.ndarray, eps: float, eigen_cutoff: float | None, *, owner: str, stacklevel: int
) -> np.ndarray:
    """Which of the eigenvalues ``w`` (float64, decreasing) are above the cut-off of
    :func:`symmetric_normalization` (``eps`` the working dtype's), with its warnings
    (``stacklevel`` counted from this function)."""
    m = w.shape[0]
    w_max = float(w[0]) if m else 0.0
    default = max(m * float(np.finfo(np.float64).eps), eps)
    cutoff = default if eigen_cutoff is None else float(eigen_cutoff)
    if w_max <= 0.0:
        warnings.warn(
            f"{owner}: the kernel matrix of the landmarks has no positive eigenvalue; the "
            "kernel is not positive semidefinite or vanishes on the landmarks, and every "
            "output feature is zero.",
            UserWarning,
            stacklevel=stacklevel,
        )
        return np.zeros(m, dtype=bool)
    if w[-1] < -np.sqrt(eps) * w_max:
        warnings.warn(
            f"{owner}: the kernel matrix of the landmarks has negative eigenvalues (down "
            f"to {w[-1]:.3g}, largest {w_max:.3g}); the kernel is not positive "
            "semidefinite. Their directions are dropped.",
            UserWarning,
            stacklevel=stacklevel,
        )
    return w > cutoff * w_max


def column_pivots_array(V: Any) -> np.ndarray:
    """The largest-magnitude entry of each column of ``V`` (an array of another library),
    on the host: ``V[argmax |V[:, j]|, j]`` (their signs fix the eigenvectors' signs)."""
    xp, device = namespace_of(V), device_of(V)
    n_columns = int(V.shape[1])
    largest = to_numpy(xp.argmax(xp.abs(V), axis=0)).astype(np.int64)
    flat = to_namespace(largest * n_columns + np.arange(n_columns), xp, device)
    return to_numpy(xp.take(xp.reshape(V, (-1,)), flat)).astype(np.float64)


def symmetric_normalization_array(
    K_mm: Any,
    eigen_cutoff: float | None,
    dtype: Any,
    *,
    owner: str = "Nystroem",
    stacklevel: int = 4,
) -> tuple[Any, np.ndarray, int]:
    """:func:`symmetric_normalization` of a ``K_mm`` that is an array of another library
    (array API dispatch on), on its device.

    The eigendecomposition is the namespace's ``linalg.eigh``, in float64 where the
    device has it (else float32); ``dtype`` is the input's dtype (NumPy's), that of the
    returned normalization and of the default cut-off's ``eps``, as on the host.  The
    eigenvalues (``m`` numbers) are ordered and cut off on the host, by the same code.

    Returns
    -------
    normalization : array of shape (m, m)
        In ``dtype``, in the namespace and on the device of ``K_mm``.
    eigenvalues : ndarray of shape (m,)
        float64, decreasing (host).
    rank : int
    """
    xp, device = namespace_of(K_mm), device_of(K_mm)
    m, dtype = int(K_mm.shape[0]), np.dtype(dtype)
    eps = float(np.finfo(dtype).eps)
    K_mm = xp.astype(K_mm, work_dtype(K_mm))
    if not bool(xp.all(xp.isfinite(K_mm))):
        _refuse_non_finite_landmark_matrix(owner)
    K_t = xp.matrix_transpose(K_mm)
    scale = float(xp.max(xp.abs(K_mm))) if m else 0.0
    asym = float(xp.max(xp.abs(K_mm - K_t))) if m else 0.0
    _check_symmetric(asym, scale, eps, owner)
    w_dev, V = xp.linalg.eigh(0.5 * (K_mm + K_t))
    w_all = to_numpy(w_dev).astype(np.float64)
    order = np.argsort(w_all, kind="stable")[::-1].copy()
    w = w_all[order]
    keep = _kept_eigenvalues(w, eps, eigen_cutoff, owner=owner, stacklevel=stacklevel + 1)
    rank = int(np.count_nonzero(keep))
    out_dtype = getattr(xp, dtype.name)
    normalization = xp.zeros((m, m), dtype=out_dtype, device=device)
    if rank:
        V_top = xp.take(V, to_namespace(order[:rank], xp, device), axis=1)
        # deterministic signs (largest-magnitude entry positive), as on the host
        pivots = column_pivots_array(V_top)
        col_scale = np.where(pivots < 0, -1.0, 1.0) / np.sqrt(w[:rank])
        scaled = V_top * to_namespace(col_scale, xp, device, dtype=V_top.dtype)
        normalization[:, :rank] = xp.astype(scaled, out_dtype)
        if not bool(xp.all(xp.isfinite(normalization))):
            raise NonFiniteOutputError(
                f"{owner}.fit: the eigendecomposition of the kernel matrix of the landmarks "
                "on this device returned non-finite values; pass float64 input or use "
                "fewer landmarks."
            )
    return normalization, w, rank
