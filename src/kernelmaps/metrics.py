"""Kernel approximation error: relative Frobenius, spectral and max-abs norms.

:func:`kernel_approximation_error` compares two given matrices.
:func:`feature_map_error` measures a fitted feature map against its exact kernel on data,
forming at most ``block_rows`` rows of the kernel matrix at a time, so it runs on data
whose kernel matrix would not fit in memory.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, eigsh, svds
from sklearn import get_config
from sklearn.utils import check_array, gen_batches

from ._random import check_random_state

__all__ = ["NORMS", "feature_map_error", "kernel_approximation_error"]

NORMS = ("fro", "spectral", "max")


def _check_norm(norm: str) -> None:
    if norm not in NORMS:
        raise ValueError(f"norm must be one of {NORMS}; got {norm!r}.")


def _matrix_norm(A: np.ndarray, norm: str) -> float:
    if norm == "fro":
        return float(np.linalg.norm(A, "fro"))
    if norm == "max":
        return float(np.max(np.abs(A))) if A.size else 0.0
    return float(np.linalg.norm(A, 2)) if A.size else 0.0


def kernel_approximation_error(
    K: Any, K_approx: Any, *, norm: str = "fro", relative: bool = True
) -> float:
    """Error ``|K - K_approx|``, divided by ``|K|`` when ``relative``.

    Parameters
    ----------
    K : array-like of shape (n, m)
        Exact kernel matrix.
    K_approx : array-like of shape (n, m)
        Its approximation, e.g. ``Z_x @ Z_y.T``.
    norm : {"fro", "spectral", "max"}, default="fro"
        Frobenius norm, spectral norm (largest singular value) or largest absolute entry.
    relative : bool, default=True
        Divide by the same norm of ``K`` (the "normalized kernel approximation error").

    Returns
    -------
    float
    """
    _check_norm(norm)
    K = check_array(K, dtype=np.float64, input_name="K")
    K_approx = check_array(
        K_approx.toarray() if sp.issparse(K_approx) else K_approx,
        dtype=np.float64,
        input_name="K_approx",
    )
    if K.shape != K_approx.shape:
        raise ValueError(f"K has shape {K.shape} but K_approx has shape {K_approx.shape}.")
    error = _matrix_norm(K - K_approx, norm)
    if not relative:
        return error
    scale = _matrix_norm(K, norm)
    if scale == 0.0:
        raise ValueError("K is zero in the chosen norm; use relative=False.")
    return error / scale


def _default_block_rows(n_columns: int) -> int:
    budget = get_config()["working_memory"] * 2**20
    return max(1, int(budget // (3 * 8 * max(n_columns, 1))))


def feature_map_error(
    feature_map: Any,
    X: Any,
    Y: Any = None,
    *,
    kernel: Callable[[Any, Any], np.ndarray] | None = None,
    norm: str = "fro",
    relative: bool = True,
    block_rows: int | None = None,
    random_state: Any = 0,
) -> float:
    """Error of a fitted feature map: ``|K(X, Y) - z(X) z(Y)^T|`` (relative by default).

    Parameters
    ----------
    feature_map : fitted transformer
        A fitted feature map; its ``kernel_`` is the reference unless ``kernel`` is given.
    X : array-like of shape (n, d)
        Rows of the kernel matrix.
    Y : array-like of shape (m, d), default=None
        Columns; ``None`` means ``X``.
    kernel : callable, default=None
        Exact kernel ``k(X, Y) -> ndarray``; default ``feature_map.kernel_``.
    norm : {"fro", "spectral", "max"}, default="fro"
        The spectral norm is computed densely when all rows fit in one block, else by
        ARPACK's Lanczos iteration on the operator ``v -> (K - Z_x Z_y^T) v`` (``eigsh``
        when ``Y`` is None, ``svds`` otherwise), one pass over the kernel rows per product.
    relative : bool, default=True
        Divide by the same norm of ``K(X, Y)``.
    block_rows : int, default=None
        Largest number of kernel rows formed at once; by default as many as fit in
        scikit-learn's ``working_memory``.
    random_state : int, default=0
        Starting vector of the Lanczos iteration (spectral norm only).

    Returns
    -------
    float
    """
    _check_norm(norm)
    if kernel is None:
        kernel = getattr(feature_map, "kernel_", None)
        if kernel is None:
            raise ValueError(f"{type(feature_map).__name__} has no fitted kernel_; pass kernel=.")
    Zx = feature_map.transform(X)
    symmetric = Y is None
    Y_ = X if symmetric else Y
    Zy = Zx if symmetric else feature_map.transform(Y_)
    n, m = Zx.shape[0], Zy.shape[0]
    if n == 0 or m == 0:
        raise ValueError("X and Y must hold at least one row each.")
    rows_per_block = block_rows or _default_block_rows(m)
    if rows_per_block < 1:
        raise ValueError(f"block_rows must be >= 1; got {block_rows}.")

    def approx_rows(rows: slice) -> np.ndarray:
        block = Zx[rows] @ Zy.T
        return np.asarray(block.toarray() if sp.issparse(block) else block, dtype=np.float64)

    def exact_rows(rows: slice) -> np.ndarray:
        return np.asarray(kernel(X[rows], Y_), dtype=np.float64)

    if norm in ("fro", "max"):
        err_acc, ref_acc = 0.0, 0.0
        for rows in gen_batches(n, rows_per_block):
            K = exact_rows(rows)
            E = K - approx_rows(rows)
            if norm == "fro":
                err_acc += float(np.einsum("ij,ij->", E, E))
                ref_acc += float(np.einsum("ij,ij->", K, K))
            else:
                err_acc = max(err_acc, float(np.max(np.abs(E))))
                ref_acc = max(ref_acc, float(np.max(np.abs(K))))
        if norm == "fro":
            err_acc, ref_acc = np.sqrt(err_acc), np.sqrt(ref_acc)
        if not relative:
            return float(err_acc)
        if ref_acc == 0.0:
            raise ValueError("K is zero in the chosen norm; use relative=False.")
        return float(err_acc / ref_acc)

    def spectral(include_approx: bool) -> float:
        def blocks(rows: slice) -> np.ndarray:
            K = exact_rows(rows)
            return K - approx_rows(rows) if include_approx else K

        if rows_per_block >= n or min(n, m) < 3:
            dense = np.vstack([blocks(rows) for rows in gen_batches(n, rows_per_block)])
            if symmetric:
                return float(np.max(np.abs(np.linalg.eigvalsh(dense))))
            return float(np.linalg.norm(dense, 2))

        def matvec(v: np.ndarray) -> np.ndarray:
            v = np.ravel(v)
            return np.concatenate([blocks(rows) @ v for rows in gen_batches(n, rows_per_block)])

        rng = check_random_state(random_state)
        if symmetric:
            # K and K - ZZ^T are symmetric: Lanczos on the operator itself, one pass each.
            op = LinearOperator((n, n), matvec=matvec, dtype=np.float64)
            vals = eigsh(
                op, k=1, which="LM", v0=rng.standard_normal(n), tol=1e-8, return_eigenvectors=False
            )
            return float(np.abs(vals[0]))

        def rmatvec(u: np.ndarray) -> np.ndarray:
            u = np.ravel(u)
            acc = np.zeros(m)
            for rows in gen_batches(n, rows_per_block):
                acc += blocks(rows).T @ u[rows]
            return acc

        op = LinearOperator((n, m), matvec=matvec, rmatvec=rmatvec, dtype=np.float64)
        s = svds(
            op, k=1, return_singular_vectors=False, v0=rng.standard_normal(min(n, m)), tol=1e-8
        )
        return float(s[0])

    error = spectral(True)
    if not relative:
        return error
    scale = spectral(False)
    if scale == 0.0:
        raise ValueError("K is zero in the chosen norm; use relative=False.")
    return error / scale
