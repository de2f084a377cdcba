"""The normalization ``K_mm^{+1/2}`` of Nyström features, on any array library.

One symmetric eigendecomposition of the landmarks' kernel matrix ``K_mm``, its eigenvalues
cut off relative to the largest, and the kept eigenvectors scaled by ``w^{-1/2}`` with
deterministic signs (:func:`symmetric_normalization`: LAPACK ``?syevd`` for NumPy arrays,
the namespace's ``linalg.eigh`` for the others).  The checks of ``K_mm`` (finite,
symmetric: :func:`check_symmetric`, IKA's too) and the warnings of a kernel that is not
positive semidefinite are here, and so are the order and the signs of eigenvectors that
IKA shares (:func:`decreasing_eigenvalues`, :func:`leading_vectors`, :func:`column_signs`).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import scipy.linalg

from .._array_api import (
    accumulator_dtype,
    get_namespace,
    host_dtype,
    is_numpy,
    to_namespace,
    to_numpy,
)
from ..exceptions import NonFiniteOutputError

__all__ = [
    "EIGH_DRIVER",
    "check_symmetric",
    "column_signs",
    "decreasing_eigenvalues",
    "leading_vectors",
    "symmetric_normalization",
]

#: LAPACK driver of the eigendecomposition of ``K_mm`` (divide and conquer, ``?syevd``):
#: at ``m = 4096`` the fastest of ``evd``/``evr``/``ev`` here and the most accurate
#: after ``ev`` (benchmarks/nystroem_speed.py, ``--drivers``).
EIGH_DRIVER = "evd"


def symmetric_normalization(
    K_mm: Any,
    eigen_cutoff: float | None,
    dtype: Any = None,
    *,
    owner: str = "Nystroem",
    stacklevel: int = 4,
) -> tuple[Any, Any, int]:
    """``K_mm^{+1/2}`` restricted to eigenvalues above the cut-off, for ``K_mm`` of any
    array library, in its namespace and on its device.

    Returns ``(normalization, eigenvalues, rank)`` where ``normalization`` has shape
    ``(m, m)`` and the NumPy dtype ``dtype`` (default: that of ``K_mm``; float32 or
    float64): its first ``rank`` columns are ``v_i / sqrt(w_i)`` for the eigenpairs of
    ``K_mm`` in decreasing order with ``w_i > cutoff * w_max``, the others are zero.
    ``eigenvalues`` is float64 (float32 on a device without float64), decreasing.

    One symmetric eigendecomposition in the dtype of ``K_mm`` (LAPACK ``?syevd`` on
    NumPy, the namespace's ``linalg.eigh`` otherwise), no other ``O(m^3)`` work:
    ``V diag(w^{-1/2})`` is a valid ``K_mm^{+1/2}`` for the features (``Z Z^T`` does not
    depend on the rotation), so the symmetric square root ``V diag(w^{-1/2}) V^T``
    (another ``2 m^3`` GEMM) is not formed.  ``cutoff=None`` means ``max(m * eps_64,
    eps)`` with ``eps_64`` the float64 and ``eps`` the machine epsilon of ``dtype``:
    ``m * eps_64`` in float64 (the rank tolerance of :func:`numpy.linalg.matrix_rank`),
    ``eps_32 = 1.2e-7`` in float32, the size of the rounding noise of a float32
    eigendecomposition relative to ``w_max``.  The eigenvalues (``m`` numbers) are
    ordered and cut off on the host.  The warnings (no positive eigenvalue, negative
    eigenvalues) are issued with ``stacklevel``.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.feature_maps._nystroem_normalization import symmetric_normalization
    >>> N, w, rank = symmetric_normalization(np.diag([4.0, 1.0, 0.0]), None)
    >>> np.abs(N).round(3).tolist(), rank
    ([[0.5, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]], 2)
    """
    xp, device = get_namespace(K_mm)
    m = int(K_mm.shape[0])
    dtype = host_dtype(K_mm.dtype if dtype is None else dtype)
    if dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
        dtype = np.dtype(np.float64)
    if is_numpy(xp) and K_mm.dtype != dtype:
        K_mm = K_mm.astype(dtype)
    eps = float(np.finfo(dtype).eps)
    w, V = _symmetric_eigh(K_mm, eps, owner)
    w, order = decreasing_eigenvalues(w, V)
    keep = _kept_eigenvalues(w, eps, eigen_cutoff, owner=owner, stacklevel=stacklevel + 1)
    rank = int(np.count_nonzero(keep))
    out_dtype = getattr(xp, dtype.name)
    normalization = xp.zeros((m, m), dtype=out_dtype, device=device)
    if rank:
        V_top = leading_vectors(V, order, rank)
        # deterministic signs (largest-magnitude entry positive) folded into the scaling
        col_scale = column_signs(V_top) / np.sqrt(w[:rank])
        if is_numpy(xp):
            np.multiply(V_top, col_scale.astype(dtype), out=normalization[:, :rank])
        else:
            scaled = V_top * to_namespace(col_scale, xp, device, dtype=V_top.dtype)
            normalization[:, :rank] = xp.astype(scaled, out_dtype)
        if not bool(xp.all(xp.isfinite(normalization))):
            raise NonFiniteOutputError(
                f"{owner}.fit: the eigendecomposition of the kernel matrix of the landmarks "
                "returned non-finite values; pass float64 input or use fewer landmarks."
            )
    return normalization, to_namespace(w, xp, device, dtype=accumulator_dtype(xp, device)), rank


def _symmetric_eigh(K_mm: Any, eps: float, owner: str) -> tuple[Any, Any]:
    """The eigenpairs of ``(K_mm + K_mm^T) / 2`` once ``K_mm`` is checked finite and
    symmetric to ``eps``: LAPACK's ``?syevd`` in place on NumPy (ascending), the
    namespace's ``linalg.eigh`` otherwise (in an order of its own)."""
    xp, _ = get_namespace(K_mm)
    if not bool(xp.all(xp.isfinite(K_mm))):
        raise ValueError(
            f"{owner}: the kernel matrix of the landmarks has non-finite entries; check the "
            "kernel and its parameters."
        )
    K_t = xp.matrix_transpose(K_mm)
    m = int(K_mm.shape[0])
    scale = float(xp.max(xp.abs(K_mm))) if m else 0.0
    asym = float(xp.max(xp.abs(K_mm - K_t))) if m else 0.0
    check_symmetric(asym, scale, eps, f"{owner}: the kernel matrix of the landmarks")
    if is_numpy(xp):
        K_sym = K_mm + K_t
        K_sym *= 0.5
        return scipy.linalg.eigh(K_sym, driver=EIGH_DRIVER, overwrite_a=True, check_finite=False)
    return xp.linalg.eigh(0.5 * (K_mm + K_t))


def check_symmetric(asym: float, scale: float, eps: float, what: str) -> None:
    """Refuse a kernel matrix (``what`` names it) with ``max |K - K^T| = asym`` beyond
    rounding: ``max(1e-7, 100 eps)`` relative to ``max |K| = scale``, ``eps`` the machine
    epsilon of its dtype (Nystroem's ``K_mm``, IKA's sample matrix).

    Examples
    --------
    >>> from kernelmaps.feature_maps._nystroem_normalization import check_symmetric
    >>> check_symmetric(1e-3, 1.0, 2.2e-16, "IKA: the kernel matrix of the sample")
    Traceback (most recent call last):
    ...
    ValueError: IKA: the kernel matrix of the sample is not symmetric (max |K - K^T| = 0.001, ...
    """
    if asym > max(1e-7, 100 * eps) * max(scale, np.finfo(np.float64).tiny):
        raise ValueError(
            f"{what} is not symmetric (max |K - K^T| = {asym:.3g}, max |K| = {scale:.3g}); "
            "the kernel must be a symmetric positive semidefinite function k(x, y) = k(y, x)."
        )


def decreasing_eigenvalues(w: Any, V: Any) -> tuple[np.ndarray, np.ndarray | None]:
    """The eigenvalues ``w`` of the eigenvectors ``V`` (an ``eigh`` of any library) in
    decreasing order, float64 on the host, and their positions for
    :func:`leading_vectors`: None for LAPACK's ascending order (NumPy: reversed), a
    stable sort otherwise (the array API leaves the order to the library)."""
    xp, _ = get_namespace(V)
    if is_numpy(xp):
        return np.asarray(w[::-1], dtype=np.float64), None
    w_all = to_numpy(w).astype(np.float64)
    order = np.argsort(w_all, kind="stable")[::-1].copy()
    return w_all[order], order


def leading_vectors(V: Any, order: np.ndarray | None, k: int) -> Any:
    """The columns of ``V`` of the ``k`` largest eigenvalues, decreasing, by the ``order``
    of :func:`decreasing_eigenvalues` (a view on NumPy)."""
    if order is None:
        return V[:, V.shape[1] - k :][:, ::-1]
    xp, device = get_namespace(V)
    return xp.take(V, to_namespace(order[:k], xp, device), axis=1)


def column_signs(V: Any) -> np.ndarray:
    """``±1.0`` per column of ``V`` (any library), on the host: the sign of its entry of
    largest magnitude (the first of equal ones).  ``V * signs`` are the eigenvectors with
    the deterministic signs of Nystroem and IKA.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.feature_maps._nystroem_normalization import column_signs
    >>> column_signs(np.array([[0.6, 0.1], [-0.8, 0.2]])).tolist()
    [-1.0, 1.0]
    """
    xp, device = get_namespace(V)
    n_rows, n_columns = int(V.shape[0]), int(V.shape[1])
    if not n_rows * n_columns:
        return np.ones(n_columns)
    if is_numpy(xp):
        pivots = V[np.argmax(np.abs(V), axis=0), np.arange(n_columns)]
    else:
        largest = to_numpy(xp.argmax(xp.abs(V), axis=0)).astype(np.int64)
        flat = to_namespace(largest * n_columns + np.arange(n_columns), xp, device)
        pivots = to_numpy(xp.take(xp.reshape(V, (-1,)), flat))
    return np.where(pivots < 0, -1.0, 1.0)


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
