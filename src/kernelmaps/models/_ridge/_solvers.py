"""Ridge solves as pure functions of :class:`RidgeStatistics` (the primal; the dual, from the
``n x n`` kernel matrix of the rows, is in :mod:`._dual`).

Primal.  :func:`solve_ridge` solves for given penalties (Cholesky) or chooses one among
candidates (eigendecomposition of the centred Gram matrix, then GCV or exact leave-one-out
errors for every candidate without refitting); :func:`loo_errors` is the second pass over
the rows that exact leave-one-out needs, made of a per-block step (:func:`loo_block_sums`)
and a combine step (:func:`loo_combine`) so that the blocks can be summed wherever the
rows are (the chunks of a Dask array).

Both guard the limit ``alpha -> 0``: when ``alpha`` is below the rounding level
``dim * eps * l_max`` of ``G`` (or ``K``), the directions of eigenvalues below that level
are those of the numerical null space (the data cannot resolve them) and are left out of
the solution, which is then the minimum-norm one on the resolved directions, instead of
rounding noise divided by ``alpha`` (:func:`solve_cholesky`, :func:`ridge_inverse`).
The estimators only gather the rows or the statistics and store the result.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import scipy.linalg
import scipy.sparse

from ..._array_api import accumulator_dtype, get_namespace, is_numpy, to_namespace
from .._ridge_statistics import RidgeStatistics, as_float64

__all__ = [
    "EigenRidge",
    "LooTerms",
    "RidgeSolution",
    "choose_alpha",
    "eigen_ridge",
    "gcv_errors",
    "loo_block_rows",
    "loo_block_sums",
    "loo_combine",
    "loo_errors",
    "loo_terms",
    "loo_values",
    "penalty_terms",
    "project_rows",
    "ridge_inverse",
    "rounding_level",
    "solve_cholesky",
    "solve_ridge",
    "unit_loo_values",
]

_EPS = float(np.finfo(np.float64).eps)


@dataclasses.dataclass(frozen=True)
class RidgeSolution:
    """Weights, intercept and penalty of a ridge fit (primal or dual).

    Attributes
    ----------
    coef : ndarray of shape (t, D)
    intercept : ndarray of shape (t,)
    alpha : float
        The penalty used.
    cv_errors : ndarray of shape (n_alphas,) or None
        The error of each candidate penalty when one was chosen.
    selection : str or None
        ``"loo"`` or ``"gcv"`` when a penalty was chosen.
    loo : ndarray of shape (n, t) or None
        The leave-one-out fitted values of the rows at ``alpha`` (a dual solve asked
        for them: :func:`~kernelmaps.models._ridge._dual.dual_loo_values`).
    eig : EigenRidge or None
        The eigendecomposition a primal choice of penalty made (for :func:`penalty_terms`).
    factor : ndarray or None
        The lower Cholesky factor of ``G_c + alpha I`` a primal solve at a given penalty
        made (for :func:`penalty_terms`).
    objective : ndarray of shape (t,) or None
        The minimum of the objective per target, ``sum_i w_i |y_i - f(x_i)|^2 + alpha
        |W|^2`` (for the evidence's noise variance).
    weight_sum : float
        ``S_w``, the sum of the weights of the rows.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models import RidgeStatistics
    >>> from kernelmaps.models._ridge._solvers import solve_ridge
    >>> stats = RidgeStatistics(1, 1).update(np.ones((3, 1)), np.ones((3, 1)), np.ones(3))
    >>> solve_ridge(stats, alpha=1.0, fit_intercept=False).coef.tolist()
    [[0.75]]
    """

    coef: np.ndarray
    intercept: np.ndarray
    alpha: float
    cv_errors: np.ndarray | None = None
    selection: str | None = None
    loo: np.ndarray | None = None
    eig: EigenRidge | None = dataclasses.field(default=None, repr=False)
    factor: np.ndarray | None = dataclasses.field(default=None, repr=False)
    objective: np.ndarray | None = dataclasses.field(default=None, repr=False)
    weight_sum: float = 0.0


def rounding_level(evals: np.ndarray) -> float:
    """``dim * eps * l_max``: the rounding level of a symmetric positive semidefinite
    matrix of eigenvalues ``evals`` and of its eigendecomposition (numpy's
    ``matrix_rank`` uses the same threshold).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models._ridge._solvers import rounding_level
    >>> bool(rounding_level(np.array([0.0, 1.0])) == 2 * np.finfo(float).eps)
    True
    """
    evals = np.asarray(evals, dtype=np.float64)
    top = float(np.max(evals)) if evals.size else 0.0
    return max(top, 0.0) * max(evals.shape[0], 1) * _EPS


def ridge_inverse(evals: np.ndarray, alphas: np.ndarray, level: float) -> np.ndarray:
    """``1 / (l_k + alpha_j)`` of shape (len(evals), len(alphas)), ``l`` clipped at 0.

    0 where both ``l_k`` and ``alpha_j`` are at or below the rounding level ``level``
    (:func:`rounding_level`): that direction belongs to the numerical null space, and
    the penalty is too small to damp the rounding noise along it.  A penalty above the
    level keeps every direction (the exact ridge solution).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models._ridge._solvers import ridge_inverse
    >>> ridge_inverse(np.array([1e-20, 1.0]), np.array([1e-300, 1.0]), 1e-15).tolist()
    [[0.0, 1.0], [1.0, 0.5]]
    """
    lam = np.clip(np.asarray(evals, dtype=np.float64), 0.0, None)[:, None]
    alphas = np.asarray(alphas, dtype=np.float64)[None, :]
    shifted = lam + alphas
    keep = ((lam > level) | (alphas > level)) & (shifted >= np.finfo(np.float64).tiny)
    return np.divide(1.0, shifted, out=np.zeros_like(shifted), where=keep)


def _eigen_solve(A: np.ndarray, C: np.ndarray, alpha: float) -> np.ndarray:
    """``(A + alpha I)^{-1} C`` from the eigendecomposition of ``A`` (PSD), without the
    unresolved directions when ``alpha`` is below the rounding level."""
    evals, V = scipy.linalg.eigh(A, check_finite=False)
    inv = ridge_inverse(evals, np.array([alpha]), rounding_level(evals))
    return V @ (inv * (V.T @ C))


def solve_cholesky(G: np.ndarray, C: np.ndarray, alpha: float) -> np.ndarray:
    """``(G + alpha I)^{-1} C`` by a Cholesky factorization, robust to ``alpha -> 0``.

    When ``G + alpha I`` is numerically singular (the factorization fails, or a pivot
    ``L_jj^2`` is at the rounding level ``dim * eps * max G_jj``: duplicate or collinear
    rows with ``alpha`` below that level), the solution is taken from the
    eigendecomposition of ``G`` instead, without the directions of its numerical null
    space when ``alpha`` is below the rounding level (:func:`ridge_inverse`): the limit
    of the ridge solution as ``alpha`` shrinks, restricted to what the data resolve,
    instead of rounding noise divided by ``alpha``.

    Parameters
    ----------
    G : ndarray of shape (D, D)
        Symmetric positive semidefinite (a Gram matrix); not modified.
    C : ndarray of shape (D, t)
    alpha : float
        ``alpha > 0``.

    Returns
    -------
    ndarray of shape (D, t)

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models._ridge._solvers import solve_cholesky
    >>> solve_cholesky(np.eye(2), np.ones((2, 1)), 1.0).ravel().round(6).tolist()
    [0.5, 0.5]
    >>> # a singular G and alpha below its rounding level: the minimum-norm solution
    >>> solve_cholesky(np.ones((2, 2)), np.ones((2, 1)), 1e-300).ravel().round(6).tolist()
    [0.5, 0.5]
    """
    return cholesky_ridge(G, C, alpha)[0]


def cholesky_ridge(G: np.ndarray, C: np.ndarray, alpha: float) -> tuple[np.ndarray, Any]:
    """:func:`solve_cholesky`, with the lower Cholesky factor of ``G + alpha I`` (its
    upper triangle not zeroed), or None where the eigendecomposition solved instead."""
    dim = G.shape[0]
    if dim == 0:
        return np.zeros_like(C, dtype=np.float64), None
    level = dim * _EPS * max(float(np.max(np.diag(G))), 0.0)
    A = G.copy()
    A[np.diag_indices(dim)] += alpha
    L = _cholesky_clear(A, level)
    if L is not None:
        return scipy.linalg.cho_solve((L, True), C, check_finite=False), L
    del A
    return _eigen_solve(G, C, alpha), None


def cholesky_solve_clear(A: np.ndarray, C: np.ndarray, level: float) -> np.ndarray | None:
    """``A^-1 C`` by Cholesky (``A`` overwritten), or None when ``A`` is near singular.

    None when the factorisation fails or a squared pivot of the factor is at or below
    ``level`` (the rounding level ``n eps max A_ii`` of the caller): the caller then
    solves by an eigendecomposition.
    """
    L = _cholesky_clear(A, level)
    if L is None:
        return None
    return scipy.linalg.cho_solve((L, True), C, check_finite=False)


def _cholesky_clear(A: np.ndarray, level: float) -> np.ndarray | None:
    """The lower Cholesky factor of ``A`` (overwritten; its upper triangle is not
    zeroed), or None when the factorisation fails or a squared pivot is at or below
    ``level`` (:func:`cholesky_solve_clear`)."""
    try:
        L, _ = scipy.linalg.cho_factor(A, lower=True, overwrite_a=True, check_finite=False)
    except scipy.linalg.LinAlgError:
        return None
    if float(np.min(np.diag(L))) ** 2 > level:
        return L
    return None


@dataclasses.dataclass(frozen=True)
class EigenRidge:
    """The centred problem in the eigenbasis of ``G_c = V diag(l) V^T``.

    Attributes
    ----------
    evals : ndarray of shape (D,)
        ``l``, clipped at 0.
    V : ndarray of shape (D, D)
    Q : ndarray of shape (D, t)
        ``V^T C_c``.
    z_mean, y_mean : ndarray of shape (D,) and (t,)
        Means removed before the products (zeros without an intercept).
    level : float, default=0.0
        The rounding level of ``G_c`` (:func:`rounding_level`); directions of
        eigenvalues below it are left out for penalties below it (:func:`ridge_inverse`).
    triangular : bool, default=False
        ``V`` holds the lower Cholesky factor ``L`` of ``G_c + alpha I`` (its upper
        triangle unread) and the basis is ``L^{-T}``, applied by triangular solves
        (:func:`penalty_terms`).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models._ridge._solvers import EigenRidge
    >>> eig = EigenRidge(np.array([3.0]), np.eye(1), np.array([[3.0]]), np.zeros(1),
    ...                  np.zeros(1))
    >>> eig.weights(1.0).tolist()
    [[0.75]]
    """

    evals: np.ndarray
    V: np.ndarray
    Q: np.ndarray
    z_mean: np.ndarray
    y_mean: np.ndarray
    level: float = 0.0
    triangular: bool = False

    def project(self, A: Any) -> np.ndarray:
        """``A`` (rows of features, NumPy or sparse) in the basis: ``A V``, or
        ``A L^{-T}`` by a triangular solve (half the product's work)."""
        if not self.triangular:
            return np.asarray(A @ self.V)
        dense = A.toarray() if scipy.sparse.issparse(A) else np.asarray(A)
        solved = scipy.linalg.solve_triangular(self.V, dense.T, lower=True, check_finite=False)
        return np.asarray(solved.T)

    def basis(self) -> np.ndarray:
        """The basis as a matrix: ``V``, or ``L^{-T}`` formed (``D^3 / 3``)."""
        if not self.triangular:
            return self.V
        inverse, info = scipy.linalg.lapack.dtrtri(self.V, lower=1)
        if info != 0:
            raise np.linalg.LinAlgError("the Cholesky factor of a ridge problem is singular")
        return np.asarray(np.tril(inverse).T)

    def inverse(self, alphas: np.ndarray) -> np.ndarray:
        """``1 / (l_k + alpha_j)``, shape (D, n_alphas) (:func:`ridge_inverse`)."""
        return ridge_inverse(self.evals, alphas, self.level)

    def weights(self, alpha: float) -> np.ndarray:
        """``W = V diag(1 / (l + alpha)) Q``, shape (D, t)."""
        return self.lift(self.Q * self.inverse(np.array([alpha])))

    def lift(self, coords: np.ndarray) -> np.ndarray:
        """Coordinates in the basis back to features: ``V c``, or ``L^{-T} c``."""
        if self.triangular:
            return scipy.linalg.solve_triangular(self.V, coords, lower=True, trans="T")
        return self.V @ coords


def _problem(
    stats: RidgeStatistics, fit_intercept: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(G, C, yy, zbar, ybar)``: centred with an intercept, about the origin without."""
    if fit_intercept:
        return (*stats.centred(), *stats.means())
    G, C, yy = stats.uncentred()
    return G, C, yy, np.zeros(stats.n_features), np.zeros(stats.n_targets)


def eigen_ridge(stats: RidgeStatistics, fit_intercept: bool) -> EigenRidge:
    """The eigendecomposition of the (centred) Gram matrix and ``Q = V^T C``.

    Eigenvalues are clipped at 0; those below the rounding level are left out of the
    solves for penalties below it (:func:`ridge_inverse`; in exact arithmetic ``C`` has no
    component along the null space of ``G``, the computed one only rounding noise).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models import RidgeStatistics
    >>> from kernelmaps.models._ridge._solvers import eigen_ridge
    >>> rng = np.random.default_rng(0)
    >>> stats = RidgeStatistics(3, 1).update(rng.normal(size=(20, 3)), np.ones((20, 1)),
    ...                                      np.ones(20))
    >>> eigen_ridge(stats, True).Q.shape
    (3, 1)
    """
    G, C, _, z_mean, y_mean = _problem(stats, fit_intercept)
    # divide and conquer is a quarter faster than the default (MRRR) from D ~ 512
    driver = "evd" if G.shape[0] >= 512 else None
    evals, V = scipy.linalg.eigh(G, overwrite_a=True, check_finite=False, driver=driver)
    level = rounding_level(evals)
    return EigenRidge(np.clip(evals, 0.0, None), V, V.T @ C, z_mean, y_mean, level)


def _gcv(rss: np.ndarray, residual_df: float, n: int, weight_sum: float) -> float:
    """``(mean RSS / S_w) / (residual_df / n)^2``, infinite when ``residual_df <= 0``."""
    denom = (residual_df / n) ** 2 if residual_df > 0 else 0.0
    mse = float(np.mean(np.clip(rss, 0.0, None))) / max(weight_sum, 1e-300)
    return mse / denom if denom > 0 else np.inf


def gcv_errors(
    stats: RidgeStatistics, eig: EigenRidge, alphas: np.ndarray, fit_intercept: bool
) -> np.ndarray:
    """Generalized cross-validation (Golub, Heath & Wahba 1979) for every alpha.

    ``GCV(alpha) = (RSS(alpha) / S_w) / (1 - df(alpha) / n)^2`` with
    ``RSS = sum w (y - yhat)^2 = S_yy - sum_k q_k^2 (l_k + 2 alpha) / (l_k + alpha)^2``
    and ``df = [intercept] + sum_k l_k / (l_k + alpha)``, from the eigenpairs
    ``(l_k, v_k)`` of the centred Gram matrix and ``q = V^T Z_c^T W y``; the mean over
    targets.  Infinite when ``df >= n`` (as many parameters as rows).

    Near interpolation both differences cancel; on the directions resolved above the
    rounding level they are taken in the forms without cancellation,
    ``n - df = (n - [intercept] - r) + sum_k alpha / (l_k + alpha)`` (``r`` resolved
    directions) and ``RSS = [S_yy - sum_k q_k^2 / l_k]_+ + sum_k q_k^2 alpha^2 /
    (l_k (l_k + alpha)^2)`` (:func:`complement_terms`; ``q`` is 0 along the others in
    exact arithmetic), so that a positive penalty has a finite criterion.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models import RidgeStatistics
    >>> from kernelmaps.models._ridge._solvers import eigen_ridge, gcv_errors
    >>> Z = np.random.default_rng(0).normal(size=(50, 3))
    >>> stats = RidgeStatistics(3, 1).update(Z, Z[:, :1] + 0.1, np.ones(50))
    >>> candidates = np.array([1e-3, 1e3])
    >>> gcv_errors(stats, eigen_ridge(stats, True), candidates, True).argmin()
    np.int64(0)
    """
    yy = _problem(stats, fit_intercept)[2]
    evals, Q = np.clip(eig.evals, 0.0, None), eig.Q
    inv = eig.inverse(alphas)
    lev = resolved_inverse(evals, eig.level)
    resolved = lev > 0
    QQ = Q * Q
    free = free_directions(stats.n_samples, resolved, fit_intercept)
    least_squares = np.clip(yy - lev @ QQ, 0.0, None) if free else 0.0  # no penalty's RSS
    errors = np.empty(alphas.shape[0])
    for j, a in enumerate(alphas):
        # resolved: q^2 a^2 / (l (l + a)^2) as (a / (l + a))^2 / l, no cancellation; the
        # others add nothing (q is 0 along the null space; the computed q only rounding)
        rss = least_squares + ((a * inv[:, j]) ** 2 * lev) @ QQ
        residual_df = residual_dof(evals, resolved, inv[:, j], a, free)
        errors[j] = _gcv(rss, residual_df, stats.n_samples, stats.weight_sum)
    return errors


@dataclasses.dataclass(frozen=True)
class LooTerms:
    """What every row block needs for the exact leave-one-out sums, prepared once.

    Made by :func:`loo_terms`; :func:`loo_block_sums` maps a block of rows to its partial
    sums and :func:`loo_combine` turns the total into the errors, so the blocks can be
    summed anywhere (a loop, threads, the chunks of a Dask array) in any grouping.

    Attributes
    ----------
    eig : EigenRidge
    alphas : ndarray of shape (n_alphas,)
    inv : ndarray of shape (D, n_alphas)
        ``1 / (l_k + alpha_j)`` (:func:`ridge_inverse`).
    lev, tail : ndarray of shape (D,) and (D, n_alphas)
        The terms of ``1 - h_i`` without cancellation (:func:`complement_terms`).
    interpolates : bool
        Whether the resolved directions are as many as the rows (less the intercept):
        least squares fits every row, its leverage complement is exactly 0.
    shift : ndarray of shape (D,)
        ``V^T zbar`` (zeros without an intercept).
    weight_sum : float
        ``S_w`` of all the rows.
    n_targets : int
    fit_intercept : bool

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models import RidgeStatistics
    >>> from kernelmaps.models._ridge._solvers import eigen_ridge, loo_terms
    >>> stats = RidgeStatistics(2, 1).update(np.eye(2), np.ones((2, 1)), np.ones(2))
    >>> loo_terms(stats, eigen_ridge(stats, True), np.array([1.0, 2.0]), True).inv.shape
    (2, 2)
    """

    eig: EigenRidge
    alphas: np.ndarray
    inv: np.ndarray
    lev: np.ndarray
    tail: np.ndarray
    interpolates: bool
    shift: np.ndarray
    weight_sum: float
    n_targets: int
    fit_intercept: bool

    def to_device(self, xp: Any, device: Any) -> LooTerms:
        """The terms with the arrays the blocks need as arrays of ``xp`` on ``device``
        (float64 where it holds it), for the blocks of rows held there; ``self`` for
        NumPy's namespace."""
        if is_numpy(xp):
            return self
        dtype = accumulator_dtype(xp, device)

        def move(a: np.ndarray) -> Any:
            return to_namespace(a, xp, device, dtype=dtype)

        eig = dataclasses.replace(
            self.eig,
            V=move(self.eig.basis()),
            Q=move(self.eig.Q),
            y_mean=move(self.eig.y_mean),
            triangular=False,
        )
        return dataclasses.replace(
            self,
            eig=eig,
            inv=move(self.inv),
            lev=move(self.lev),
            tail=move(self.tail),
            shift=move(self.shift),
        )


def free_directions(n_rows: int, resolved: np.ndarray, fit_intercept: bool) -> int:
    """``n - [intercept] - r``, the rows' degrees of freedom that the ``r`` resolved
    directions (``resolved``, a mask) leave to the residual; 0 when they fit every row
    (at least 0: in exact arithmetic ``r`` is at most the rank of the centred rows)."""
    return max(n_rows - int(fit_intercept) - int(np.count_nonzero(resolved)), 0)


def residual_dof(
    evals: np.ndarray, resolved: np.ndarray, inv: np.ndarray, alpha: float, free: int
) -> float:
    """``n - df(alpha)`` without cancellation: ``free + sum_k alpha / (l_k + alpha)`` on
    the resolved directions (``resolved``, :func:`free_directions`), less
    ``l_k / (l_k + alpha)`` on the others kept (``inv`` the column of
    :func:`ridge_inverse` for ``alpha``, ``evals`` clipped at 0)."""
    return free + float(np.sum(np.where(resolved, alpha, -evals) * inv))


def complement_terms(
    evals: np.ndarray, inv: np.ndarray, alphas: np.ndarray, level: float
) -> tuple[np.ndarray, np.ndarray]:
    """``(lev, tail)``: the terms of ``1 - h_i(alpha)`` computed without cancellation.

    The leverage of a row is ``h_i = w_i sum_k p_ik^2 / (l_k + alpha) [+ w_i / S_w]``
    with ``p_i = V^T (z_i - zbar)``.  Near interpolation (as many resolved directions as
    rows, a small penalty) ``h_i`` rounds to 1 or above, and ``1 - h_i`` computed as a
    difference is rounding noise, or negative.  With ``1 / (l + alpha) = 1 / l -
    alpha / (l (l + alpha))`` on the resolved directions (``l_k`` above the rounding
    level ``level``),

    .. math:: 1 - h_i = \\Big[1 - \\frac{w_i}{S_w} - w_i \\sum_k \\frac{p_{ik}^2}{l_k}\\Big]_+
              + w_i \\sum_k p_{ik}^2\\, t_k(\\alpha),

    the bracket the complement of the least-squares leverage (in ``[0, 1]``, so clipped
    there; exactly 0 when the resolved directions are as many as the rows less the
    intercept, least squares then fitting every row) and ``t_k = alpha / (l_k (l_k +
    alpha))`` on the resolved directions, ``-1 / (l_k + alpha)`` on the others (kept
    only for penalties above the level): positive for every positive penalty, as the
    exact ``alpha (K + alpha I)^{-1}`` is
    (Golub, Heath & Wahba 1979).  ``lev`` is ``1 / l_k`` on the resolved directions, 0
    elsewhere.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models._ridge._solvers import complement_terms, ridge_inverse
    >>> evals, alphas = np.array([0.0, 2.0]), np.array([2.0])
    >>> lev, tail = complement_terms(evals, ridge_inverse(evals, alphas, 0.0), alphas, 0.0)
    >>> lev.tolist(), tail.tolist()
    ([0.0, 0.5], [[-0.5], [0.25]])
    """
    lev = resolved_inverse(evals, level)
    tail = np.where(lev[:, None] > 0, alphas[None, :] * inv * lev[:, None], -inv)
    return lev, tail


def resolved_inverse(evals: np.ndarray, level: float) -> np.ndarray:
    """``1 / l_k`` on the directions resolved above the rounding level ``level``, 0 on
    the others (``l`` clipped at 0).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models._ridge._solvers import resolved_inverse
    >>> resolved_inverse(np.array([1e-20, 4.0]), 1e-15).tolist()
    [0.0, 0.25]
    """
    lam = np.clip(np.asarray(evals, dtype=np.float64), 0.0, None)
    return np.divide(1.0, lam, out=np.zeros_like(lam), where=lam > level)


def loo_terms(
    stats: RidgeStatistics, eig: EigenRidge, alphas: np.ndarray, fit_intercept: bool
) -> LooTerms:
    """The :class:`LooTerms` of the statistics ``stats`` of all the rows.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models import RidgeStatistics
    >>> from kernelmaps.models._ridge._solvers import eigen_ridge, loo_terms
    >>> stats = RidgeStatistics(2, 1).update(np.eye(2), np.ones((2, 1)), np.ones(2))
    >>> loo_terms(stats, eigen_ridge(stats, True), np.array([1.0]), True).weight_sum
    2.0
    """
    inv = eig.inverse(alphas)
    lev, tail = complement_terms(eig.evals, inv, alphas, eig.level)
    return LooTerms(
        eig=eig,
        alphas=alphas,
        inv=inv,
        lev=lev,
        tail=tail,
        interpolates=free_directions(stats.n_samples, lev > 0, fit_intercept) == 0,
        shift=eig.project(eig.z_mean[None, :])[0],
        weight_sum=float(stats.weight_sum),
        n_targets=stats.n_targets,
        fit_intercept=bool(fit_intercept),
    )


def _loo_sum(xp: Any, residuals: Any, one_minus_h: Any, w: Any, per_target: bool = False) -> Any:
    """``sum_i w_i |e_i|^2 / (1 - h_i)^2`` over the rows of positive weight, with
    ``residuals`` the rows ``sqrt(w_i) e_i`` (so zero-weight rows add nothing); infinite
    when a row of positive weight has ``h_i >= 1`` (it is fitted exactly: its
    leave-one-out residual is undefined).  Arrays of the namespace ``xp``; the sum is a
    0-d array (no copy to the host), or one sum per target (``per_target``)."""
    counted = w > 0
    exact = one_minus_h <= 0
    denom = xp.where(counted & ~exact, one_minus_h, 1.0)
    scaled = residuals / denom[:, None]
    squares = xp.where(counted[:, None], scaled * scaled, 0.0)
    total = xp.sum(squares, axis=0) if per_target else xp.sum(squares)
    return xp.where(xp.any(counted & exact), math.inf, total)


def project_rows(terms: LooTerms, Z: Any) -> tuple[Any, Any]:
    """``(xp, P)``: the rows ``Z`` about the mean in the basis of ``terms``, ``P = (Z -
    zbar) V`` (or ``(Z - zbar) L^{-T}``), in the namespace ``xp`` of ``Z`` (NumPy for
    NumPy and sparse rows, in float64; elsewhere in ``Z``'s dtype on its device, with
    ``terms`` moved there by :meth:`LooTerms.to_device`)."""
    xp = get_namespace(Z)[0]
    if is_numpy(xp):  # NumPy's own functions (and sparse blocks) on the host
        return np, terms.eig.project(as_float64(Z)) - terms.shift
    V, shift = (xp.astype(a, Z.dtype, copy=False) for a in (terms.eig.V, terms.shift))
    return xp, Z @ V - shift


def loo_block_rows(terms: LooTerms, Z: Any, Y: Any, w: Any) -> tuple[Any, Any, Any]:
    """The leave-one-out terms of every row of one block: ``(xp, e, 1 - h)``.

    ``e`` of shape (n_rows, t, n_alphas) holds the residuals ``y_i - yhat_i`` of the fit
    on all the rows (centred targets less centred fitted values) and ``1 - h`` of shape
    (n_rows, n_alphas) the leverage complements (without cancellation,
    :func:`complement_terms`), for every alpha; the leave-one-out residual of row ``i`` is
    ``r_i = e_i / (1 - h_i)`` (:func:`loo_errors`).  Arrays of the namespace ``xp`` of
    ``Z`` (NumPy for NumPy and sparse blocks), on its device, in the features' dtype there.
    """
    eig, alphas = terms.eig, terms.alphas
    xp, P = project_rows(terms, Z)
    if is_numpy(xp):
        Q, inv, lev, tail, y_mean = eig.Q, terms.inv, terms.lev, terms.tail, eig.y_mean
    else:
        Q, inv, lev, tail, y_mean, Y, w = (
            xp.astype(a, Z.dtype, copy=False)
            for a in (eig.Q, terms.inv, terms.lev, terms.tail, eig.y_mean, Y, w)
        )
    PP = P * P
    one_minus_h = PP @ tail * w[:, None]
    if not terms.interpolates:  # the complement of the least-squares leverage
        base = 1.0 - PP @ lev * w
        if terms.fit_intercept:
            base = base - w / terms.weight_sum
        one_minus_h = one_minus_h + xp.where(base > 0, base, 0.0)[:, None]
    # the fitted values of every alpha in one product: P read once, not once per alpha
    n_alphas, t = alphas.shape[0], Q.shape[1]
    coef = xp.reshape(Q[:, :, None] * inv[:, None, :], (Q.shape[0], t * n_alphas))
    fitted = xp.reshape(P @ coef, (P.shape[0], t, n_alphas))
    return xp, (Y - y_mean)[:, :, None] - fitted, one_minus_h


def loo_block_sums(terms: LooTerms, Z: Any, Y: Any, w: Any, per_target: bool = False) -> Any:
    """``sum_i w_i |r_i(alpha)|^2`` over the rows of one block, for every alpha (and
    every target with ``per_target``).

    Parameters
    ----------
    terms : LooTerms
        On the device of ``Z`` when ``Z`` is an array of another library than NumPy
        (:meth:`LooTerms.to_device`).
    Z : {ndarray, sparse matrix} of shape (n_rows, D)
        The block's features; on a device, an array of its namespace (the sums are
        computed there, in the dtype of the features).
    Y : ndarray of shape (n_rows, t)
    w : ndarray of shape (n_rows,)

    per_target : bool, default=False
        Keep the targets apart (the sums of the scorings of each target).

    Returns
    -------
    ndarray of shape (n_alphas,) or (n_alphas, t)
        Partial sums; add those of every block and pass the total to :func:`loo_combine`.
        Infinite for an alpha at which a row is fitted exactly (``h_i >= 1``).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models import RidgeStatistics
    >>> from kernelmaps.models._ridge._solvers import eigen_ridge, loo_block_sums, loo_terms
    >>> rng = np.random.default_rng(0)
    >>> Z, Y, w = rng.normal(size=(20, 2)), rng.normal(size=(20, 1)), np.ones(20)
    >>> stats = RidgeStatistics(2, 1).update(Z, Y, w)
    >>> terms = loo_terms(stats, eigen_ridge(stats, True), np.array([0.1, 1.0]), True)
    >>> whole = loo_block_sums(terms, Z, Y, w)
    >>> halves = loo_block_sums(terms, Z[:8], Y[:8], w[:8]) + loo_block_sums(
    ...     terms, Z[8:], Y[8:], w[8:])
    >>> bool(np.allclose(whole, halves, rtol=1e-12))
    True
    """
    xp, residuals, one_minus_h = loo_block_rows(terms, Z, Y, w)
    device = None if is_numpy(xp) else get_namespace(residuals)[1]
    shape = (terms.alphas.shape[0], terms.n_targets) if per_target else terms.alphas.shape
    sums = xp.zeros(shape, dtype=residuals.dtype, device=device)
    root_w = xp.sqrt(xp.astype(w, residuals.dtype, copy=False))
    for j in range(terms.alphas.shape[0]):
        rows = residuals[:, :, j] * root_w[:, None]
        sums[j] = _loo_sum(xp, rows, one_minus_h[:, j], w, per_target)
    return sums


def loo_values(terms: LooTerms, Z: Any, Y: Any, w: Any) -> Any:
    """The leave-one-out fitted values of the rows of one block, at the one penalty of
    ``terms``: the value of each row under the model fitted without one observation of it.

    A weight counts observations (scikit-learn's convention: a row of weight 2 is two
    copies of it), so leaving one out lowers the weight ``w_i`` of row ``i`` by
    ``d_i = min(w_i, 1)`` (the whole row when ``w_i <= 1``).  By the Sherman-Morrison
    formula on the weighted normal equations the fitted value of row ``i`` is then
    ``y_i - e_i / (1 - h_i d_i / w_i)``, with the residual ``e_i`` and the leverage ``h_i``
    of the full fit (:func:`loo_block_rows`; :func:`loo_errors` for ``d_i = w_i``).  The
    complement is taken from ``1 - h_i`` without cancellation as
    ``(m_i - 1 + (1 - h_i)) / m_i``, ``m_i = max(w_i, 1)``.  NaN where the value is
    undefined (the complement is 0: the row fitted exactly).

    Parameters
    ----------
    terms : LooTerms
        Of one penalty (:func:`penalty_terms`), where ``Z`` is.
    Z : {ndarray, sparse matrix} of shape (n_rows, D)
    Y : ndarray of shape (n_rows, t)
    w : ndarray of shape (n_rows,)

    Returns
    -------
    ndarray of shape (n_rows, t)
        In the namespace of ``Z``, on its device.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models import RidgeStatistics
    >>> from kernelmaps.models._ridge._solvers import loo_values, penalty_terms
    >>> Z, Y, w = np.arange(6.0).reshape(3, 2), np.array([[1.0], [2.0], [4.0]]), np.ones(3)
    >>> terms = penalty_terms(RidgeStatistics(2, 1).update(Z, Y, w), 1e-3, True)
    >>> loo_values(terms, Z, Y, w).round(3).ravel().tolist()
    [0.001, 2.5, 3.0]
    """
    xp, residuals, one_minus_h = loo_block_rows(terms, Z, Y, w)
    return unit_loo_values(xp, Y, residuals[:, :, 0], one_minus_h[:, 0], w)


def unit_loo_values(
    xp: Any, Y: Any, residuals: Any, one_minus_h: Any, w: Any, scale: float = 1.0
) -> Any:
    """``y_i - e_i / (1 - h_i d_i / w_i)`` (:func:`loo_values`) of rows of targets ``Y``,
    residuals ``e`` of shape (n, t), leverage complements ``1 - h`` and weights ``w``,
    arrays of ``xp`` (``e`` and ``1 - h`` both divided by ``scale`` when given so); NaN
    where undefined."""
    dtype = residuals.dtype
    m = xp.astype(w, dtype, copy=False)
    m = xp.where(m > 1.0, m, 1.0)
    complement = ((m - 1.0) / scale + one_minus_h) / m
    defined = complement[:, None] > 0
    r = residuals / xp.where(defined, complement[:, None], 1.0)
    return xp.where(defined, xp.astype(Y, dtype, copy=False) - r, math.nan)


def penalty_terms(
    stats: RidgeStatistics,
    alpha: float,
    fit_intercept: bool,
    eig: EigenRidge | None = None,
    factor: np.ndarray | None = None,
) -> LooTerms:
    """The :class:`LooTerms` of the one penalty ``alpha`` (for :func:`loo_values`).

    From the eigendecomposition ``eig`` when a choice of penalty made it; else from the
    Cholesky factor ``G_c + alpha I = L L^T`` (``factor``, the solve's, or made here): in
    the basis ``B = L^{-T}``, ``B^T (G_c + alpha I) B = I``, so the problem is the ridge
    problem of eigenvalues 0 and penalty 1 (``W = B B^T C_c``, ``h_i = w_i |B^T (z_i -
    zbar)|^2 [+ w_i / S_w]``), a row projected by a triangular solve (``D^2``): no
    eigendecomposition.  A numerically singular ``G_c + alpha I`` (see
    :func:`solve_cholesky`) falls back to the eigendecomposition.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models import RidgeStatistics
    >>> from kernelmaps.models._ridge._solvers import penalty_terms
    >>> stats = RidgeStatistics(2, 1).update(np.eye(2), np.ones((2, 1)), np.ones(2))
    >>> penalty_terms(stats, 1.0, False).eig.weights(1.0).ravel().round(12).tolist()
    [0.5, 0.5]
    """
    if eig is None:
        G, C, _, z_mean, y_mean = _problem(stats, fit_intercept)
        if factor is None:
            dim = G.shape[0]
            level = dim * _EPS * max(float(np.max(np.diag(G))), 0.0) if dim else 0.0
            G[np.diag_indices(dim)] += alpha
            factor = _cholesky_clear(G, level)
        if factor is not None:
            Q = scipy.linalg.solve_triangular(factor, C, lower=True, check_finite=False)
            whitened = EigenRidge(np.zeros(C.shape[0]), factor, Q, z_mean, y_mean, triangular=True)
            return loo_terms(stats, whitened, np.array([1.0]), fit_intercept)
        eig = eigen_ridge(stats, fit_intercept)
    return loo_terms(stats, eig, np.array([float(alpha)]), fit_intercept)


def loo_combine(terms: LooTerms, totals: np.ndarray) -> np.ndarray:
    """The leave-one-out errors from the partial sums of all the rows added up.

    ``totals / (S_w t)``: the weighted mean squared leave-one-out residual, averaged
    over the ``t`` targets.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models import RidgeStatistics
    >>> from kernelmaps.models._ridge._solvers import eigen_ridge, loo_combine, loo_terms
    >>> stats = RidgeStatistics(2, 1).update(np.eye(2), np.ones((2, 1)), np.ones(2))
    >>> terms = loo_terms(stats, eigen_ridge(stats, True), np.array([1.0]), True)
    >>> loo_combine(terms, np.array([4.0])).tolist()
    [2.0]
    """
    return totals / (max(terms.weight_sum, 1e-300) * terms.n_targets)


def loo_errors(
    stats: RidgeStatistics,
    eig: EigenRidge,
    alphas: np.ndarray,
    blocks: Iterable[tuple[Any, np.ndarray, np.ndarray]],
    fit_intercept: bool,
) -> np.ndarray:
    """Exact leave-one-out mean squared error for every alpha, in one pass over the rows.

    Parameters
    ----------
    stats : RidgeStatistics
        The statistics of all the rows.
    eig : EigenRidge
        From :func:`eigen_ridge` on ``stats``.
    alphas : ndarray of shape (n_alphas,)
    blocks : iterable of (Z_block, Y_block, w_block)
        The same rows again, in any blocks: features, targets of shape (rows, t), weights.
    fit_intercept : bool

    Returns
    -------
    ndarray of shape (n_alphas,)
        ``sum_i w_i r_i^2 / S_w`` averaged over targets.

    Notes
    -----
    With the unpenalized intercept, the intercept column is orthogonal to the
    weighted-centred features, so the hat matrix of the weighted problem splits:
    ``h_i = w_i / S_w + w_i p_i^T diag(1 / (l + alpha)) p_i`` with
    ``p_i = V^T (z_i - zbar)``.  Removing row ``i`` is a rank-one downdate of the normal
    equations; by the Sherman-Morrison formula the fitted value without row ``i`` is
    ``y_i - (y_i - yhat_i) / (1 - h_i)``, so the leave-one-out residual is
    ``r_i = (y_i - yhat_i) / (1 - h_i)`` (Allen 1974; the identity scikit-learn's
    ``RidgeCV`` uses) and no refit is needed for any alpha.

    The pass is :func:`loo_block_sums` over the blocks, added in order, then
    :func:`loo_combine`; rows held elsewhere (the chunks of a Dask array) are summed
    with the same two functions.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models import RidgeStatistics
    >>> from kernelmaps.models._ridge._solvers import eigen_ridge, loo_errors
    >>> rng = np.random.default_rng(0)
    >>> Z, w = rng.normal(size=(50, 3)), np.ones(50)
    >>> Y = Z[:, :1] + 0.1 * rng.normal(size=(50, 1))
    >>> stats = RidgeStatistics(3, 1).update(Z, Y, w)
    >>> eig = eigen_ridge(stats, True)
    >>> loo_errors(stats, eig, np.array([1e-3, 1e3]), [(Z, Y, w)], True).argmin()
    np.int64(0)
    """
    terms = loo_terms(stats, eig, alphas, fit_intercept)
    totals = np.zeros(alphas.shape[0])
    for Z, Y, w in blocks:
        totals += loo_block_sums(terms, Z, Y, w)
    return loo_combine(terms, totals)


def choose_alpha(alphas: np.ndarray, cv_errors: np.ndarray, selection: str) -> float:
    """The candidate of smallest error; a clear error when no candidate has a finite one.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models._ridge._solvers import choose_alpha
    >>> choose_alpha(np.array([0.1, 1.0]), np.array([np.inf, 2.0]), "loo")
    1.0
    """
    finite = np.isfinite(cv_errors)
    if not np.any(finite):
        what = "leave-one-out" if selection == "loo" else "generalized cross-validation"
        raise ValueError(
            f"alphas: the {what} error is undefined for every candidate penalty (a row is "
            "fitted exactly: too few rows, or alphas too small for the data); give more "
            "rows, larger alphas, or a single penalty with alpha= and alphas=None."
        )
    errors = np.where(finite, cv_errors, np.inf)
    return float(alphas[int(np.argmin(errors))])


def solve_ridge(
    stats: RidgeStatistics,
    *,
    alpha: float,
    alphas: np.ndarray | None = None,
    selection: str = "auto",
    fit_intercept: bool = True,
    blocks: Iterable[tuple[Any, np.ndarray, np.ndarray]] | None = None,
    loo: Callable[[LooTerms], np.ndarray] | None = None,
) -> RidgeSolution:
    """Solve ``min sum w_i |y_i - W^T z_i - b|^2 + alpha |W|^2`` from the statistics.

    Parameters
    ----------
    stats : RidgeStatistics
    alpha : float
        The penalty when ``alphas`` is None.
    alphas : ndarray, optional
        Candidate penalties; the one with the smallest error is used.
    selection : {"auto", "loo", "gcv"}, default="auto"
        How candidates are compared; ``"auto"`` is ``"loo"`` when ``blocks`` or ``loo``
        are given, else ``"gcv"``.
    fit_intercept : bool, default=True
    blocks : iterable of (Z_block, Y_block, w_block), optional
        The rows again, for exact leave-one-out (see :func:`loo_errors`).
    loo : callable, optional
        ``loo(terms)`` returns the leave-one-out errors from the :class:`LooTerms` of
        ``stats`` (the pass over rows held elsewhere, e.g. the chunks of a Dask array:
        :func:`loo_block_sums` per block, then :func:`loo_combine`); used instead of
        ``blocks``.

    Returns
    -------
    RidgeSolution

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models import RidgeStatistics
    >>> from kernelmaps.models._ridge._solvers import solve_ridge
    >>> Z = np.random.default_rng(0).normal(size=(20, 2))
    >>> Y = Z @ np.array([[1.0], [2.0]]) + 3.0
    >>> solution = solve_ridge(RidgeStatistics(2, 1).update(Z, Y, np.ones(20)), alpha=1e-9)
    >>> solution.coef.round(6).tolist(), solution.intercept.round(6).tolist()
    ([[1.0, 2.0]], [3.0])
    """
    cv_errors, kept, factor = None, None, None
    if alphas is None:
        G, C, yy, z_mean, y_mean = _problem(stats, fit_intercept)
        W, factor = cholesky_ridge(G, C, float(alpha))
        del G
        chosen = float(alpha)
        explained = np.einsum("dt,dt->t", C, W)
    else:
        if selection == "auto":
            selection = "loo" if blocks is not None or loo is not None else "gcv"
        if selection == "loo" and blocks is None and loo is None:
            raise ValueError(
                "alpha_selection='loo' needs every row again, but partial_fit keeps "
                "only Z^T Z and Z^T y; use alpha_selection='gcv' (or 'auto') with "
                "partial_fit, or call fit on the whole data."
            )
        eig = eigen_ridge(stats, fit_intercept)
        z_mean, y_mean = eig.z_mean, eig.y_mean
        if selection == "loo" and loo is not None:
            cv_errors = loo(loo_terms(stats, eig, alphas, fit_intercept))
        elif selection == "loo":
            assert blocks is not None
            cv_errors = loo_errors(stats, eig, alphas, blocks, fit_intercept)
        else:
            cv_errors = gcv_errors(stats, eig, alphas, fit_intercept)
        chosen = choose_alpha(alphas, cv_errors, selection)
        W, kept = eig.weights(chosen), eig
        explained = np.einsum("kt,kt->t", eig.Q**2, eig.inverse(np.array([chosen])))
        yy = stats.target_energy(fit_intercept)
    coef = W.T
    return RidgeSolution(
        coef,
        y_mean - coef @ z_mean,
        chosen,
        cv_errors,
        selection,
        eig=kept,
        factor=factor,
        objective=yy - explained,
        weight_sum=float(stats.weight_sum),
    )
