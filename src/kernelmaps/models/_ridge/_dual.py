"""The ridge solve in dual form, from the ``n x n`` kernel matrix of the rows.

:func:`dual_problem` forms the weighted, centred kernel matrix
``K = S^{1/2} Z_c Z_c^T S^{1/2}`` of the ``n`` rows and :func:`solve_dual` solves the
problem of :func:`~kernelmaps.models._ridge._solvers.solve_ridge` from it, with the same
choice of penalty (GCV and exact leave-one-out from the eigendecomposition of ``K``):
``O(n^2 D + n^3)`` instead of ``O(n D^2 + D^3)``, the choice when ``n < D``.  It guards the
limit ``alpha -> 0`` as the primal solve does (the directions below the rounding level of
``K`` are left out).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from ..._row_blocks import row_blocks
from ._solvers import (
    RidgeSolution,
    _gcv,
    _loo_sum,
    choose_alpha,
    free_directions,
    residual_dof,
    ridge_inverse,
    rounding_level,
    solve_cholesky,
    unit_loo_values,
)

__all__ = ["DualRidge", "dual_loo_values", "dual_problem", "solve_dual"]


@dataclasses.dataclass(frozen=True)
class DualRidge:
    """The weighted, centred ridge problem on ``n`` rows, in dual form.

    With ``S = diag(w)``, ``Z_c`` and ``Y_c`` the rows centred by their weighted means
    (not centred without an intercept), ``A = S^{1/2} Z_c`` and ``B = S^{1/2} Y_c``, the
    weights of the primal problem ``(A^T A + alpha I) W = A^T B`` are, by the
    push-through identity ``(A^T A + alpha I)^{-1} A^T = A^T (A A^T + alpha I)^{-1}``,

    .. math:: W = Z_c^T S^{1/2} (K + \\alpha I)^{-1} B, \\qquad K = A A^T,

    i.e. ``W = Z_c^T (Z_c Z_c^T + alpha S^{-1})^{-1} Y_c`` when every weight is positive
    (Saunders, Gammerman & Vovk 1998); the symmetric form also takes zero weights.

    Attributes
    ----------
    K : ndarray of shape (n, n)
        ``S^{1/2} Z_c Z_c^T S^{1/2}``.
    B : ndarray of shape (n, t)
        ``S^{1/2} Y_c``.
    root_w : ndarray of shape (n,)
        ``sqrt(w)``.
    Z : ndarray or sparse matrix of shape (n, D)
        ``Z_c`` when dense (centred in place), ``Z`` itself when sparse.
    z_mean, y_mean : ndarray of shape (D,) and (t,)
        The weighted means (zeros without an intercept).
    weight_sum : float
    fit_intercept : bool

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models._ridge._dual import dual_problem
    >>> dual = dual_problem(np.eye(2), np.ones((2, 1)), np.ones(2), fit_intercept=False)
    >>> dual.K.tolist(), dual.coef(np.ones((2, 1))).ravel().tolist()
    ([[1.0, 0.0], [0.0, 1.0]], [1.0, 1.0])
    """

    K: np.ndarray
    B: np.ndarray
    root_w: np.ndarray
    Z: Any
    z_mean: np.ndarray
    y_mean: np.ndarray
    weight_sum: float
    fit_intercept: bool

    def coef(self, U: np.ndarray) -> np.ndarray:
        """``Z_c^T U`` of shape (D, t) for ``U`` of shape (n, t)."""
        if sp.issparse(self.Z):
            return np.asarray(self.Z.T @ U) - np.outer(self.z_mean, U.sum(axis=0))
        return np.asarray(self.Z.T @ U)


def dual_problem(Z: Any, Y: np.ndarray, w: np.ndarray, *, fit_intercept: bool) -> DualRidge:
    """The :class:`DualRidge` of the rows ``Z`` (``n x D``), targets ``Y`` and weights ``w``.

    Parameters
    ----------
    Z : ndarray of float64 or sparse matrix, shape (n, D)
        The features of every row.  A dense ``Z`` is centred in place (the caller hands
        it over); a sparse one is left as is and ``K`` is centred instead.
    Y : ndarray of shape (n, t)
    w : ndarray of shape (n,)
        Nonnegative weights, not all zero.
    fit_intercept : bool

    Returns
    -------
    DualRidge

    Notes
    -----
    Cost ``O(n^2 D)`` for ``K`` (a sparse ``Z``: row block by row block of ``Z Z^T``,
    bounded by ``working_memory``), memory ``n^2`` besides ``Z``.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models._ridge._dual import dual_problem
    >>> Z = np.array([[1.0, 0.0, 2.0], [3.0, 1.0, 0.0]])
    >>> dual = dual_problem(Z, np.ones((2, 1)), np.ones(2), fit_intercept=True)
    >>> dual.K.round(6).tolist(), dual.z_mean.tolist()
    ([[2.25, -2.25], [-2.25, 2.25]], [2.0, 0.5, 1.0])
    """
    # overflow leaves inf or NaN in K or B, which the caller checks and reports
    with np.errstate(over="ignore", invalid="ignore"):
        return _dual_problem(Z, Y, w, fit_intercept)


def _dual_problem(Z: Any, Y: np.ndarray, w: np.ndarray, fit_intercept: bool) -> DualRidge:
    n = Z.shape[0]
    w = np.asarray(w, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    weight_sum = float(w.sum())
    sparse = sp.issparse(Z)
    if fit_intercept:
        y_mean = (w @ Y) / weight_sum
        z_mean = np.asarray(Z.T @ w).ravel() / weight_sum
    else:
        y_mean, z_mean = np.zeros(Y.shape[1]), np.zeros(Z.shape[1])
    if sparse:
        Z = Z.tocsr()
        K = np.empty((n, n))
        for rows in row_blocks(n, 16.0 * n):
            K[rows] = (Z[rows] @ Z.T).toarray()
        if fit_intercept:
            m = (K @ w) / weight_sum
            K -= m[:, None]
            K -= m[None, :]
            K += float(w @ m) / weight_sum
    else:
        if fit_intercept:
            Z -= z_mean
        K = Z @ Z.T
    root_w = np.sqrt(w)
    K *= root_w[:, None]
    K *= root_w[None, :]
    B = (Y - y_mean) * root_w[:, None]
    return DualRidge(K, B, root_w, Z, z_mean, y_mean, weight_sum, bool(fit_intercept))


def _dual_gcv(
    dual: DualRidge, evals: np.ndarray, level: float, R: np.ndarray, alphas: np.ndarray
) -> np.ndarray:
    """GCV from the eigenpairs of ``K``: ``RSS = sum_k (alpha / (l_k + alpha))^2 |R_k|^2``
    (``R = U^T B``; factor 1 along left-out directions), ``df`` as in the primal."""
    n = dual.K.shape[0]
    R2 = R * R
    resolved = evals > level
    free = free_directions(n, resolved, dual.fit_intercept)
    errors = np.empty(alphas.shape[0])
    for j, a in enumerate(alphas):
        inv = ridge_inverse(evals, np.array([a]), level)[:, 0]
        rss = (np.where(inv > 0, a * inv, 1.0) ** 2) @ R2  # 1 - l / (l + a), uncancelled
        errors[j] = _gcv(rss, residual_dof(evals, resolved, inv, a, free), n, dual.weight_sum)
    return errors


def _dual_complement(dual: DualRidge, U2: np.ndarray, resolved: np.ndarray) -> np.ndarray | None:
    """The complement of the least-squares leverage of each row, ``1 - [w_i / S_w] -
    sum_k U_ik^2`` over the resolved directions (taken as the sum over the others, less
    the constant's, clipped at 0); None when the resolved directions fit every row."""
    w = dual.root_w**2
    if not free_directions(w.shape[0], resolved, dual.fit_intercept):
        return None
    base = U2 @ (~resolved).astype(np.float64)
    return np.clip(base - w / dual.weight_sum if dual.fit_intercept else base, 0.0, None)


@dataclasses.dataclass(frozen=True)
class _DualEigen:
    """The eigenpairs ``(l_k, u_k)`` of ``K`` (``l`` clipped at 0) with ``R = U^T B``,
    its rounding level and what leave-one-out needs of them for every penalty."""

    dual: DualRidge
    evals: np.ndarray
    level: float
    U: np.ndarray
    R: np.ndarray

    def loo_rows(self, alpha: float) -> tuple[np.ndarray, np.ndarray, float]:
        """``(sqrt(w_i) e_i, 1 - h_i, scale)`` of every row at the penalty ``alpha``, both
        divided by ``scale``: ``alpha`` when the resolved directions fit every row (the
        factor they share, taken out), else 1."""
        U, R, evals = self.U, self.R, self.evals
        U2 = U * U
        resolved = evals > self.level
        base = _dual_complement(self.dual, U2, resolved)
        inv = ridge_inverse(evals, np.array([alpha]), self.level)[:, 0]
        if base is None:
            # every row fitted by the resolved directions: the others are the constant's
            # (R and l are 0 there in exact arithmetic), and the residual and 1 - h_i
            # share the factor alpha, taken out (finite down to the smallest penalty)
            kept = np.where(resolved, inv, 0.0)
            return U @ (R * kept[:, None]), U2 @ kept, alpha
        residuals = U @ (R * np.where(inv > 0, alpha * inv, 1.0)[:, None])
        return residuals, base + U2 @ np.where(resolved, alpha * inv, -evals * inv), 1.0


def _dual_loo(eigen: _DualEigen, alphas: np.ndarray) -> np.ndarray:
    """Exact leave-one-out from the eigenpairs ``(l_k, u_k)`` of ``K``.

    The hat matrix of ``A`` is ``K (K + alpha I)^{-1} = U diag(l / (l + alpha)) U^T``, so
    ``h_i = [w_i / S_w] + sum_k U_ik^2 l_k / (l_k + alpha)`` (the primal ``h_i``), and
    ``sqrt(w_i) (y_i - yhat_i)`` is row ``i`` of ``U diag(alpha / (l + alpha)) R``.
    With ``1 - l / (l + alpha) = alpha / (l + alpha)`` on the resolved directions and the
    least-squares complement apart (:func:`_dual_complement`), ``1 - h_i`` is taken
    without cancellation (:func:`complement_terms` is the primal's).
    """
    dual = eigen.dual
    w = dual.root_w**2
    totals = np.empty(alphas.shape[0])
    for j, a in enumerate(alphas):
        residuals, one_minus_h, _ = eigen.loo_rows(float(a))  # the ratio has no scale
        totals[j] = _loo_sum(np, residuals, one_minus_h, w)
    return totals / (max(dual.weight_sum, 1e-300) * dual.B.shape[1])


def dual_loo_values(eigen: _DualEigen, alpha: float) -> np.ndarray:
    """The leave-one-out fitted values of every row at ``alpha``, shape (n, t)
    (:func:`~kernelmaps.models._ridge._solvers.loo_values`, one observation of each row
    left out, in the dual); NaN where undefined (the row fitted exactly, or a zero
    weight: not in the problem)."""
    dual = eigen.dual
    scaled, one_minus_h, scale = eigen.loo_rows(alpha)
    w = dual.root_w**2
    positive = dual.root_w > 0
    divisor = np.where(positive, dual.root_w, 1.0)[:, None]
    # Y - ybar = B / sqrt(w), e = sqrt(w) e / sqrt(w)
    centred = unit_loo_values(np, dual.B / divisor, scaled / divisor, one_minus_h, w, scale)
    return np.where(positive[:, None], centred + dual.y_mean, np.nan)


def solve_dual(
    dual: DualRidge,
    *,
    alpha: float,
    alphas: np.ndarray | None = None,
    selection: str = "auto",
    loo_values: bool = False,
) -> RidgeSolution:
    """Solve the ridge problem of :func:`solve_ridge` in the dual, from :func:`dual_problem`.

    The same solution as the primal to rounding, with the same choice of penalty: GCV
    and exact leave-one-out errors come from the eigendecomposition
    ``K = U diag(l) U^T`` (whose nonzero eigenvalues are those of the primal centred
    Gram matrix ``A^T A``), for every candidate without refitting.

    Parameters
    ----------
    dual : DualRidge
        Its ``K`` is overwritten when ``alphas`` are given.
    alpha : float
        The penalty when ``alphas`` is None.
    alphas : ndarray, optional
        Candidate penalties.
    selection : {"auto", "loo", "gcv"}, default="auto"
        ``"auto"`` is ``"loo"`` (the rows are at hand).
    loo_values : bool, default=False
        Also the leave-one-out fitted values of every row at the chosen penalty
        (:func:`dual_loo_values`; the solution's ``loo``).  A given ``alpha`` is then
        solved from the eigendecomposition of ``K`` instead of its Cholesky factor.

    Returns
    -------
    RidgeSolution

    Notes
    -----
    Cost ``O(n^3)`` for the factorization or the eigendecomposition, ``O(n^2 t)`` per
    candidate for leave-one-out, ``O(n D t)`` for ``W = Z_c^T S^{1/2} V``.

    References
    ----------
    Saunders, C., Gammerman, A. and Vovk, V. (1998). Ridge regression learning algorithm
    in dual variables. ICML.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models import RidgeStatistics
    >>> from kernelmaps.models._ridge._dual import dual_problem, solve_dual
    >>> from kernelmaps.models._ridge._solvers import solve_ridge
    >>> rng = np.random.default_rng(0)
    >>> Z, Y, w = rng.normal(size=(5, 8)), rng.normal(size=(5, 1)), np.ones(5)
    >>> primal = solve_ridge(RidgeStatistics(8, 1).update(Z, Y, w), alpha=0.5)
    >>> dual = solve_dual(dual_problem(Z.copy(), Y, w, fit_intercept=True), alpha=0.5)
    >>> bool(np.allclose(primal.coef, dual.coef, rtol=1e-10, atol=1e-12))
    True
    """
    cv_errors = None
    if alphas is None and not loo_values:
        chosen = float(alpha)
        V = solve_cholesky(dual.K, dual.B, chosen)
    else:
        evals, U = scipy.linalg.eigh(dual.K, overwrite_a=True, check_finite=False)
        level = rounding_level(evals)
        evals = np.clip(evals, 0.0, None)
        eigen = _DualEigen(dual, evals, level, U, U.T @ dual.B)
        if alphas is None:
            chosen = float(alpha)
        else:
            selection = "loo" if selection == "auto" else selection
            if selection == "loo":
                cv_errors = _dual_loo(eigen, alphas)
            else:
                cv_errors = _dual_gcv(dual, evals, level, eigen.R, alphas)
            chosen = choose_alpha(alphas, cv_errors, selection)
        V = U @ (eigen.R * ridge_inverse(evals, np.array([chosen]), level))
    loo = dual_loo_values(eigen, chosen) if loo_values else None
    coef = dual.coef(V * dual.root_w[:, None]).T
    intercept = dual.y_mean - coef @ dual.z_mean
    # the minimum of the objective: B^T B - B^T K V = alpha B^T (K + alpha I)^{-1} B
    objective = chosen * np.einsum("it,it->t", dual.B, V)
    return RidgeSolution(
        coef,
        intercept,
        chosen,
        cv_errors,
        selection,
        loo,
        objective=objective,
        weight_sum=dual.weight_sum,
    )
