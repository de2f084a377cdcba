"""Primal ridge solves as pure functions of :class:`RidgeStatistics`.

:func:`solve_ridge` solves for given penalties (Cholesky) or chooses one among candidates
(eigendecomposition of the centred Gram matrix, then GCV or exact leave-one-out errors for
every candidate without refitting); :func:`loo_errors` is the second pass over the rows
that exact leave-one-out needs, made of a per-block step (:func:`loo_block_sums`) and a
combine step (:func:`loo_combine`) so that the blocks can be summed wherever the rows are
(the chunks of a Dask array).  The estimators only gather the statistics and store the
result.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import scipy.linalg

from ._ridge_statistics import RidgeStatistics, as_float64

__all__ = [
    "EigenRidge",
    "LooTerms",
    "RidgeSolution",
    "eigen_ridge",
    "gcv_errors",
    "loo_block_sums",
    "loo_combine",
    "loo_errors",
    "loo_terms",
    "solve_cholesky",
    "solve_ridge",
]


@dataclasses.dataclass(frozen=True)
class RidgeSolution:
    """Weights, intercept and penalty of a primal ridge fit.

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

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models import RidgeStatistics
    >>> from kernelmaps.models._ridge_solvers import solve_ridge
    >>> stats = RidgeStatistics(1, 1).update(np.ones((3, 1)), np.ones((3, 1)), np.ones(3))
    >>> solve_ridge(stats, alpha=1.0, fit_intercept=False).coef.tolist()
    [[0.75]]
    """

    coef: np.ndarray
    intercept: np.ndarray
    alpha: float
    cv_errors: np.ndarray | None = None
    selection: str | None = None


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

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models._ridge_solvers import EigenRidge
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

    def weights(self, alpha: float) -> np.ndarray:
        """``W = V diag(1 / (l + alpha)) Q``, shape (D, t)."""
        return self.V @ (self.Q / (self.evals + alpha)[:, None])


def _problem(
    stats: RidgeStatistics, fit_intercept: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(G, C, yy, zbar, ybar)``: centred with an intercept, about the origin without."""
    if fit_intercept:
        return (*stats.centred(), *stats.means())
    G, C, yy = stats.uncentred()
    return G, C, yy, np.zeros(stats.n_features), np.zeros(stats.n_targets)


def solve_cholesky(G: np.ndarray, C: np.ndarray, alpha: float) -> np.ndarray:
    """``(G + alpha I)^{-1} C`` by a Cholesky factorization.

    Parameters
    ----------
    G : ndarray of shape (D, D)
        Symmetric positive semidefinite (a Gram matrix).
    C : ndarray of shape (D, t)
    alpha : float
        ``alpha > 0``.

    Returns
    -------
    ndarray of shape (D, t)

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models._ridge_solvers import solve_cholesky
    >>> solve_cholesky(np.eye(2), np.ones((2, 1)), 1.0).ravel().round(6).tolist()
    [0.5, 0.5]
    """
    A = G.copy()
    A[np.diag_indices(G.shape[0])] += alpha
    try:
        return scipy.linalg.cho_solve(scipy.linalg.cho_factor(A, lower=True), C)
    except scipy.linalg.LinAlgError:  # pragma: no cover - alpha > 0 makes A SPD
        return scipy.linalg.solve(A, C, assume_a="sym")


def eigen_ridge(stats: RidgeStatistics, fit_intercept: bool) -> EigenRidge:
    """The eigendecomposition of the (centred) Gram matrix and ``Q = V^T C``.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models import RidgeStatistics
    >>> from kernelmaps.models._ridge_solvers import eigen_ridge
    >>> rng = np.random.default_rng(0)
    >>> stats = RidgeStatistics(3, 1).update(rng.normal(size=(20, 3)), np.ones((20, 1)),
    ...                                      np.ones(20))
    >>> eigen_ridge(stats, True).Q.shape
    (3, 1)
    """
    G, C, _, z_mean, y_mean = _problem(stats, fit_intercept)
    evals, V = scipy.linalg.eigh(G)
    return EigenRidge(np.clip(evals, 0.0, None), V, V.T @ C, z_mean, y_mean)


def gcv_errors(
    stats: RidgeStatistics, eig: EigenRidge, alphas: np.ndarray, fit_intercept: bool
) -> np.ndarray:
    """Generalized cross-validation (Golub, Heath & Wahba 1979) for every alpha.

    ``GCV(alpha) = (RSS(alpha) / S_w) / (1 - df(alpha) / n)^2`` with
    ``RSS = sum w (y - yhat)^2 = S_yy - sum_k q_k^2 (l_k + 2 alpha) / (l_k + alpha)^2``
    and ``df = [intercept] + sum_k l_k / (l_k + alpha)``, from the eigenpairs
    ``(l_k, v_k)`` of the centred Gram matrix and ``q = V^T Z_c^T W y``; the mean over
    targets.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models import RidgeStatistics
    >>> from kernelmaps.models._ridge_solvers import eigen_ridge, gcv_errors
    >>> Z = np.random.default_rng(0).normal(size=(50, 3))
    >>> stats = RidgeStatistics(3, 1).update(Z, Z[:, :1] + 0.1, np.ones(50))
    >>> candidates = np.array([1e-3, 1e3])
    >>> gcv_errors(stats, eigen_ridge(stats, True), candidates, True).argmin()
    np.int64(0)
    """
    yy = _problem(stats, fit_intercept)[2]
    evals, q2 = eig.evals, eig.Q * eig.Q
    n = float(stats.n_samples)
    errors = np.empty(alphas.shape[0])
    for j, a in enumerate(alphas):
        rss = yy - ((evals + 2 * a) / (evals + a) ** 2) @ q2
        df = float(fit_intercept) + float(np.sum(evals / (evals + a)))
        denom = (1.0 - df / n) ** 2 if df < n else 0.0
        mse = float(np.mean(np.clip(rss, 0.0, None))) / max(stats.weight_sum, 1e-300)
        errors[j] = mse / denom if denom > 0 else np.inf
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
        ``1 / (l_k + alpha_j)``.
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
    >>> from kernelmaps.models._ridge_solvers import eigen_ridge, loo_terms
    >>> stats = RidgeStatistics(2, 1).update(np.eye(2), np.ones((2, 1)), np.ones(2))
    >>> loo_terms(stats, eigen_ridge(stats, True), np.array([1.0, 2.0]), True).inv.shape
    (2, 2)
    """

    eig: EigenRidge
    alphas: np.ndarray
    inv: np.ndarray
    shift: np.ndarray
    weight_sum: float
    n_targets: int
    fit_intercept: bool


def loo_terms(
    stats: RidgeStatistics, eig: EigenRidge, alphas: np.ndarray, fit_intercept: bool
) -> LooTerms:
    """The :class:`LooTerms` of the statistics ``stats`` of all the rows.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models import RidgeStatistics
    >>> from kernelmaps.models._ridge_solvers import eigen_ridge, loo_terms
    >>> stats = RidgeStatistics(2, 1).update(np.eye(2), np.ones((2, 1)), np.ones(2))
    >>> loo_terms(stats, eigen_ridge(stats, True), np.array([1.0]), True).weight_sum
    2.0
    """
    return LooTerms(
        eig=eig,
        alphas=alphas,
        inv=1.0 / (eig.evals[:, None] + alphas[None, :]),
        shift=eig.z_mean @ eig.V,
        weight_sum=float(stats.weight_sum),
        n_targets=stats.n_targets,
        fit_intercept=bool(fit_intercept),
    )


def loo_block_sums(terms: LooTerms, Z: Any, Y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``sum_i w_i |r_i(alpha)|^2`` over the rows of one block, for every alpha.

    Parameters
    ----------
    terms : LooTerms
    Z : {ndarray, sparse matrix} of shape (n_rows, D)
        The block's features.
    Y : ndarray of shape (n_rows, t)
    w : ndarray of shape (n_rows,)

    Returns
    -------
    ndarray of shape (n_alphas,)
        Partial sums; add those of every block and pass the total to :func:`loo_combine`.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models import RidgeStatistics
    >>> from kernelmaps.models._ridge_solvers import eigen_ridge, loo_block_sums, loo_terms
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
    eig, inv, alphas = terms.eig, terms.inv, terms.alphas
    sums = np.zeros(alphas.shape[0])
    P = np.asarray(as_float64(Z) @ eig.V) - terms.shift
    Yc = Y - eig.y_mean
    h = (P * P) @ inv * w[:, None]
    if terms.fit_intercept:
        h += (w / terms.weight_sum)[:, None]
    for j in range(alphas.shape[0]):
        fitted = P @ (eig.Q * inv[:, j : j + 1])
        resid = (Yc - fitted) / (1.0 - h[:, j : j + 1])
        sums[j] = float(w @ (resid * resid).sum(axis=1))
    return sums


def loo_combine(terms: LooTerms, totals: np.ndarray) -> np.ndarray:
    """The leave-one-out errors from the partial sums of all the rows added up.

    ``totals / (S_w t)``: the weighted mean squared leave-one-out residual, averaged
    over the ``t`` targets.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models import RidgeStatistics
    >>> from kernelmaps.models._ridge_solvers import eigen_ridge, loo_combine, loo_terms
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
    >>> from kernelmaps.models._ridge_solvers import eigen_ridge, loo_errors
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
    >>> from kernelmaps.models._ridge_solvers import solve_ridge
    >>> Z = np.random.default_rng(0).normal(size=(20, 2))
    >>> Y = Z @ np.array([[1.0], [2.0]]) + 3.0
    >>> solution = solve_ridge(RidgeStatistics(2, 1).update(Z, Y, np.ones(20)), alpha=1e-9)
    >>> solution.coef.round(6).tolist(), solution.intercept.round(6).tolist()
    ([[1.0, 2.0]], [3.0])
    """
    G, C, _, z_mean, y_mean = _problem(stats, fit_intercept)
    cv_errors = None
    if alphas is None:
        W = solve_cholesky(G, C, float(alpha))
        chosen = float(alpha)
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
        if selection == "loo" and loo is not None:
            cv_errors = loo(loo_terms(stats, eig, alphas, fit_intercept))
        elif selection == "loo":
            assert blocks is not None
            cv_errors = loo_errors(stats, eig, alphas, blocks, fit_intercept)
        else:
            cv_errors = gcv_errors(stats, eig, alphas, fit_intercept)
        chosen = float(alphas[int(np.argmin(cv_errors))])
        W = eig.weights(chosen)
    coef = W.T
    return RidgeSolution(coef, y_mean - coef @ z_mean, chosen, cv_errors, selection)
