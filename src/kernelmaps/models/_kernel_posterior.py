"""The posteriors of the kernel models: the exact Gaussian process of kernel ridge
regression, and the deterministic training conditional of Nyström kernel ridge regression.

Both models are posterior means of the Gaussian process prior ``f ~ GP(0, (sigma^2 /
alpha) k)`` with noise ``N(0, sigma^2)``.  In units of ``sigma^2``:

* exact (:class:`ExactPosterior`, :class:`~kernelmaps.KernelRidge`):

  .. math:: \\operatorname{Cov}(f(a), f(b)) / \\sigma^2 = \\tfrac{1}{\\alpha}\\big(k(a, b)
            - k_a^T (K + \\alpha I)^{-1} k_b\\big)

  (Rasmussen & Williams 2006, eq. 2.24), from the Cholesky factor of ``K + alpha I``
  (the eigendecomposition of ``K`` where it is numerically singular);
* DTC (:class:`DTCPosterior`, :class:`~kernelmaps.NystroemKernelRidge`): with landmarks
  ``L``, ``k_a = k(L, a)`` and ``H = K_nm^T K_nm + alpha K_mm``,

  .. math:: \\operatorname{Cov}(f(a), f(b)) / \\sigma^2 = \\tfrac{1}{\\alpha}\\big(k(a, b)
            - k_a^T K_{mm}^{-1} k_b\\big) + k_a^T H^{-1} k_b

  (Seeger, Williams & Lawrence 2003; Quiñonero-Candela & Rasmussen 2005, JMLR 6, eq. 20b).
  The second term alone is the subset of regressors (SoR), whose variance vanishes away
  from the landmarks; the first is the prior's variance that the landmarks do not
  explain, so the DTC variance tends to the prior's ``sigma^2 k(x, x) / alpha`` far from
  the data.  With every training row a landmark both equal the exact posterior.

Posterior functions (:class:`KernelFunctions`) follow the pathwise update of Wilson et
al. (2020): ``f_s = f_prior + k(., Z)^T v_s``, with the prior drawn from random Fourier
features of the kernel.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from .._array_api import get_namespace, is_numpy, placed, to_namespace, to_numpy
from .._array_extras import cholesky, solve_triangular
from .._memory import check_memory
from ..kernels import Kernel, ShiftInvariantKernel
from ._device import Placement, array_kernel_matrix, diagonal, plus_diagonal
from ._posterior_functions import PosteriorFunctions
from ._ridge._pass import map_features
from ._ridge._solvers import _cholesky_clear, ridge_inverse, rounding_level

__all__ = [
    "PRIOR_FEATURES",
    "DTCPosterior",
    "ExactPosterior",
    "KernelFunctions",
    "draw_functions",
    "eigen_inverse",
    "gram_factor",
    "held_out_block",
    "lower_factor",
    "prior_at",
    "prior_draws",
    "prior_features",
]

#: Random Fourier features of the prior of the posterior functions (``sample_functions``).
PRIOR_FEATURES = 2048

_EPS = float(np.finfo(np.float64).eps)


def lower_factor(A: Any, level: float) -> Any:
    """The lower Cholesky factor of the symmetric ``A`` (overwritten on the host; its
    upper triangle is not read), or None when the factorization fails or a squared pivot
    is at or below ``level``, on any library."""
    xp = get_namespace(A)[0]
    if is_numpy(xp):
        return _cholesky_clear(A, level)
    try:
        L = cholesky(xp, A, "K + alpha I")
    except np.linalg.LinAlgError:
        return None
    return None if float(xp.min(diagonal(L))) ** 2 <= level else L


def factor_solve(L: Any, B: Any) -> Any:
    """``(L L^T)^{-1} B`` for a lower-triangular ``L``, on ``L``'s library."""
    xp = get_namespace(L)[0]
    B2 = xp.reshape(B, (L.shape[0], -1))
    Z = solve_triangular(xp, L, B2, lower=True)
    return xp.reshape(solve_triangular(xp, L, Z, lower=True, transpose=True), B.shape)


def eigen_inverse(
    K: np.ndarray, alpha: float, stacklevel: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(U, inv, evals)`` with ``(K + alpha I)^{-1} = U diag(inv) U^T`` and ``K = U
    diag(evals) U^T``, ``K`` on the host (overwritten): the directions of ``K``'s
    numerical null space are left out where ``alpha`` is at the rounding level
    (:func:`~._ridge._solvers.ridge_inverse`); an indefinite ``K`` (a callable that is
    not a positive-definite kernel) warns and leaves
    out the eigenvalues of ``K + alpha I`` at the rounding level."""
    n = K.shape[0]
    check_memory(
        16.0 * n * n,
        f"KernelRidge's eigendecomposition of the {n} x {n} kernel matrix (K + alpha I "
        "is numerically singular)",
        "fit on fewer rows, or use NystroemKernelRidge (memory O(m^2) for m landmarks) or "
        "FeatureRidge with RandomFourierFeatures",
    )
    evals, U = scipy.linalg.eigh(K, overwrite_a=True, check_finite=False)
    cutoff = n * _EPS * float(np.max(np.abs(evals)))
    if float(np.min(evals)) >= -cutoff:
        inv = ridge_inverse(evals, np.array([alpha]), rounding_level(evals))[:, 0]
        return U, inv, evals
    warnings.warn(
        "K has negative eigenvalues and K + alpha I is numerically singular or not "
        "positive definite (is the kernel positive definite?); solving it by its "
        "eigendecomposition instead, without the eigenvalues at the rounding level.",
        UserWarning,
        stacklevel=stacklevel + 1,
    )
    shifted = evals + alpha
    inv = np.divide(1.0, shifted, out=np.zeros_like(shifted), where=np.abs(shifted) > cutoff)
    return U, inv, evals


def kernel_diag(kernel: Any, A: Any) -> Any:
    """``k(a, a)`` of every row of ``A`` (float64 on the host): the kernel's own diagonal,
    or that of the kernel matrix for a callable."""
    if isinstance(kernel, Kernel):
        return kernel.diag(A)
    return diagonal(array_kernel_matrix(kernel, A, A))


def _like(M: Any, A: Any) -> Any:
    """The matrix ``M`` where ``A`` is, in ``A``'s dtype."""
    xp, device = get_namespace(A)
    return xp.astype(placed(M, xp, device), A.dtype, copy=False)


def _col_sq(P: Any) -> Any:
    return get_namespace(P)[0].sum(P * P, axis=0)


@dataclasses.dataclass
class ExactPosterior:
    """The Gaussian process posterior of :class:`~kernelmaps.KernelRidge`.

    Attributes
    ----------
    kernel : Kernel or callable
    X_fit : array of shape (n, d)
        The training rows, in float64 where they are (or as they are, sparse).
    alpha : float
    factor : array of shape (n, n)
        The lower Cholesky factor of ``K + alpha I`` (where the rows are), or ``U``, the
        eigenvectors of ``K`` (host), with ``scale = inv ** 0.5``.
    scale : ndarray of shape (n,) or None
        None for the Cholesky factor.
    block_rows : callable
        The row blocks of a pass over ``X``.
    evals : ndarray of shape (n,) or None
        The eigenvalues of ``K`` with ``U`` (None for the Cholesky factor).
    conformal : ConformalScores or None
        The leave-one-out scores, once formed.
    columns : tuple or None
        ``(index, (K + alpha I)^{-1} E_index)`` of the scored rows, once formed
        (Cholesky factor only).
    """

    kernel: Any
    X_fit: Any
    alpha: float
    factor: Any
    scale: np.ndarray | None
    block_rows: Callable[[Any], Iterable[slice]]
    evals: np.ndarray | None = None
    conformal: Any = None
    columns: Any = None

    def cross(self, A: Any) -> Any:
        """``k(X_fit, A)`` of shape (n, b), in float64 where ``A`` is."""
        place = Placement.of(A)
        return place.float64(array_kernel_matrix(self.kernel, place.widened(A), self.X_fit)).T

    def whiten(self, B: Any) -> Any:
        """``P`` with ``P^T P = B^T (K + alpha I)^{-1} B``, shape (n, b)."""
        xp = get_namespace(B)[0]
        if self.scale is None:
            return solve_triangular(xp, _like(self.factor, B), B, lower=True)
        U, scale = _like(self.factor, B), _like(np.sqrt(np.clip(self.scale, 0, None)), B)
        return (U.T @ B) * scale[:, None]

    def solve(self, B: np.ndarray) -> np.ndarray:
        """``(K + alpha I)^{-1} B`` of a host ``B`` (n, k), on the host."""
        if self.scale is None:
            return np.asarray(to_numpy(factor_solve(self.factor, _like(B, self.factor))))
        U = self.factor
        return U @ (self.scale[:, None] * (U.T @ B))

    def variance(self, A: Any) -> Any:
        P = self.whiten(self.cross(A))
        xp = get_namespace(P)[0]
        prior = xp.astype(_placed_as(kernel_diag(self.kernel, A), P), P.dtype, copy=False)
        return xp.astype(xp.clip(prior - _col_sq(P), 0.0, None) / self.alpha, A.dtype)

    def covariance(self, A: Any, B: Any) -> Any:
        return self.smoother_to(B)(A)

    smoother = covariance

    def smoother_to(self, B: Any) -> Callable[[Any], Any]:
        """``A -> covariance(A, B)``, ``B``'s side formed once (the scored rows of
        jackknife+, met by every block)."""
        PB, wide_B = self.whiten(self.cross(B)), _wide(B)

        def against(A: Any) -> Any:
            PA, place = self.whiten(self.cross(A)), Placement.of(A)
            prior = place.float64(array_kernel_matrix(self.kernel, place.widened(A), wide_B))
            return (_like(prior, PA) - PA.T @ _like(PB, PA)) / self.alpha

        return against

    def update(self, coef: np.ndarray, prior: np.ndarray, noise_draws: np.ndarray) -> np.ndarray:
        """The pathwise update ``v_s = c - (K + alpha I)^{-1} (f_prior(X) + e_s)`` of shape
        (n, t, s), from the prior draws at the training rows and the noise draws ``e_s``
        (Wilson et al. 2020, eq. 13; ``c = (K + alpha I)^{-1} y``)."""
        n, t, s = prior.shape
        shifted = (prior + noise_draws).reshape(n, t * s)
        return coef.reshape(n, t, 1) - self.solve(shifted).reshape(n, t, s)

    def inverse_diagonal(self, index: np.ndarray) -> np.ndarray:
        """``[(K + alpha I)^{-1}]_jj`` of the rows ``index``, on the host (``O(n^2)`` each).

        From the eigendecomposition every direction counts, ``1 / (max(l, 0) + alpha)``,
        those of the numerical null space too (left out of the fit's solution, where they
        change no prediction): a row with a duplicate has a null direction whose ``1 /
        alpha`` makes its leave-one-out residual vanish, as the duplicate still fits it."""
        if self.evals is not None:
            full = 1.0 / (np.clip(self.evals, 0.0, None) + self.alpha)
            return np.asarray((self.factor[index] ** 2) @ full)
        columns = self.inverse_columns(index)
        return np.asarray(to_numpy(columns[:, :]))[index, np.arange(index.shape[0])]

    def inverse_columns(self, index: np.ndarray) -> Any:
        """``(K + alpha I)^{-1} E_index`` (n, len(index)) where the factor is, formed once
        (``O(n^2)`` a row; Cholesky factor only)."""
        if self.columns is None or not np.array_equal(self.columns[0], index):
            E = np.zeros((self.factor.shape[0], index.shape[0]))
            E[index, np.arange(index.shape[0])] = 1.0
            self.columns = (index, factor_solve(self.factor, _like(E, self.factor)))
        return self.columns[1]

    def training_smoother(self, index: np.ndarray) -> Callable[[Any], Any] | None:
        """``A -> covariance(A, X_fit[index])`` in one product a block: for a training row
        ``x_j``, ``(k(a, x_j) - k_a^T (K + alpha I)^{-1} k_j) / alpha = k_a^T (K + alpha
        I)^{-1} e_j`` (as ``(K + alpha I)^{-1} K = I - alpha (K + alpha I)^{-1}``); None
        for the eigendecomposition (its solution leaves out the null space)."""
        if self.evals is not None:
            return None
        columns = self.inverse_columns(index)

        def against(A: Any) -> Any:
            KA = self.cross(A)
            return KA.T @ _like(columns, KA)

        return against


def _placed_as(a: Any, like: Any) -> Any:
    return placed(a, *get_namespace(like))


def _wide(X: Any) -> Any:
    return Placement.of(X).widened(X)


def gram_factor(H: Any) -> Any:
    """The lower Cholesky factor of the symmetric positive semi-definite ``H`` (``m x m``),
    with a jitter from ``m eps max H_ii`` raised a hundredfold while rounding makes it
    fail (as FALKON's preconditioner does for ``K_mm``)."""
    xp = get_namespace(H)[0]
    m = H.shape[0]
    scale = max(float(xp.max(xp.abs(diagonal(H)))), np.finfo(np.float64).tiny)
    jitter = 0.0
    for _ in range(8):
        try:
            if is_numpy(xp):
                return scipy.linalg.cholesky(plus_diagonal(H, jitter), lower=True)
            return cholesky(xp, plus_diagonal(H, jitter), "H")
        except np.linalg.LinAlgError:
            jitter = m * _EPS * scale if jitter == 0.0 else 100.0 * jitter
    raise ValueError(
        "The posterior's matrix K_nm^T K_nm + alpha K_mm could not be factorized; is the "
        "kernel positive definite? Use a positive-definite kernel or a larger alpha."
    )


@dataclasses.dataclass
class DTCPosterior:
    """The deterministic training conditional of :class:`~kernelmaps.NystroemKernelRidge`.

    Attributes
    ----------
    kernel : Kernel or callable
    landmarks : array of shape (m, d)
        Where the model lives, in float64 where it holds it.
    alpha : float
    T : array of shape (m, m)
        The upper Cholesky factor of ``K_mm`` (with FALKON's jitter): ``K_mm = T^T T``.
    R : array of shape (m, m)
        The lower Cholesky factor of ``H = K_nm^T K_nm + alpha K_mm``.
    block_rows : callable
    """

    kernel: Any
    landmarks: Any
    alpha: float
    T: Any
    R: Any
    block_rows: Callable[[Any], Iterable[slice]]

    def cross(self, A: Any) -> Any:
        """``k(L, A)`` of shape (m, b), in float64 where ``A`` is."""
        place = Placement.of(A)
        L = _like(self.landmarks, place.widened(A))
        return place.float64(array_kernel_matrix(self.kernel, place.widened(A), L)).T

    def sor(self, KA: Any) -> Any:
        """``R^{-1} k_A``: ``sor(k_a)^T sor(k_b) = k_a^T H^{-1} k_b``."""
        return solve_triangular(get_namespace(KA)[0], _like(self.R, KA), KA, lower=True)

    def nystroem(self, KA: Any) -> Any:
        """``T^{-T} k_A``: ``nystroem(k_a)^T nystroem(k_b) = k_a^T K_mm^{-1} k_b``."""
        xp = get_namespace(KA)[0]
        return solve_triangular(xp, _like(self.T, KA), KA, lower=False, transpose=True)

    def variance(self, A: Any) -> Any:
        KA = self.cross(A)
        xp = get_namespace(KA)[0]
        prior = xp.astype(_placed_as(kernel_diag(self.kernel, A), KA), KA.dtype, copy=False)
        rest = xp.clip(prior - _col_sq(self.nystroem(KA)), 0.0, None) / self.alpha
        return xp.astype(rest + _col_sq(self.sor(KA)), A.dtype)

    def covariance(self, A: Any, B: Any) -> Any:
        KA, KB = self.cross(A), self.cross(B)
        place = Placement.of(A)
        prior = _like(place.float64(array_kernel_matrix(self.kernel, _wide(A), _wide(B))), KA)
        rest = (prior - self.nystroem(KA).T @ self.nystroem(KB)) / self.alpha
        return rest + self.sor(KA).T @ self.sor(KB)

    def smoother(self, A: Any, B: Any) -> Any:
        """The SoR part, ``k_a^T H^{-1} k_b``: how training row ``b`` moves the mean."""
        return self.smoother_to(B)(A)

    def smoother_to(self, B: Any) -> Callable[[Any], Any]:
        """``A -> smoother(A, B)``, ``B``'s side formed once."""
        SB = self.sor(self.cross(B))

        def against(A: Any) -> Any:
            SA = self.sor(self.cross(A))
            return SA.T @ _like(SB, SA)

        return against

    def update(self, coef: np.ndarray, prior: np.ndarray, noise_draws: np.ndarray) -> np.ndarray:
        """The pathwise update at the landmarks, ``v_s = c + sigma R^{-T} xi_s - K_mm^{-1}
        f_prior(L)``, shape (m, t, s): ``u_s = K_mm (c + sigma R^{-T} xi_s)`` is a draw of
        the DTC posterior of ``f(L)``, ``N(K_mm c, sigma^2 K_mm H^{-1} K_mm)``, and
        ``f_prior + k(., L)^T K_mm^{-1} (u_s - f_prior(L))`` the matching draw of ``f``
        (Wilson et al. 2020, eq. 15).  ``noise_draws`` are ``sigma_t xi_s``, host arrays."""
        m, t, s = prior.shape
        T, R = (np.asarray(to_numpy(a), dtype=np.float64) for a in (self.T, self.R))
        solve = scipy.linalg.solve_triangular
        spread = solve(R, noise_draws.reshape(m, t * s), lower=True, trans="T")
        inner = solve(T, prior.reshape(m, t * s), lower=False, trans="T")
        interp = solve(T, inner, lower=False)
        return coef.reshape(m, t, 1) + (spread - interp).reshape(m, t, s)

    def loo_residuals(self, X: np.ndarray, Y: np.ndarray, coef: np.ndarray) -> np.ndarray:
        """The exact leave-one-out residuals ``r_j = e_j / (1 - h_j)`` of training rows
        ``X`` (host) with targets ``Y`` (n, t), ``h_j = k_j^T H^{-1} k_j`` the leverage of
        the row in the Nyström fit (its landmarks fixed)."""
        K = self.cross(X)
        fitted = K.T @ coef.reshape(K.shape[0], -1)
        return (Y - fitted) / (1.0 - _col_sq(self.sor(K)))[:, None]


def held_out_block(
    posterior: Any,
    scores: Any,
    mean: Callable[[Any], Any],
    X: Any,
    smoother_of: Callable[[Any], Any] | None = None,
) -> Any:
    """Jackknife+ for a kernel model: the function from a block of the validated rows
    ``X`` to ``mu_{-j}(x) = mu(x) - s(x, x_j) r_j`` (shape (b, m, t)) of the scored rows
    ``x_j`` with leave-one-out residuals ``r_j``, ``s`` the posterior's smoother (the
    Sherman-Morrison update of the fit without row ``j``; ``smoother_of``, the block's
    ``s`` to the scored rows, when the model has a faster one) and ``mean`` the model's
    block predictor."""
    xp, device = get_namespace(X)
    if smoother_of is None:
        rows = scores.rows
        if not sp.issparse(rows):
            rows = to_namespace(rows, xp, device, dtype=X.dtype)
        smoother_of = posterior.smoother_to(rows)

    def block(Xb: Any) -> Any:
        smoother = smoother_of(Xb)
        residuals = to_namespace(scores.residuals, xp, device, dtype=smoother.dtype)
        mu = xp.reshape(xp.astype(mean(Xb), smoother.dtype, copy=False), (Xb.shape[0], -1))
        return mu[:, None, :] - smoother[:, :, None] * residuals[None, :, :]

    return block


def draw_functions(
    model: Any, posterior: Any, centres: Any, coef: Any, n_samples: int, rng: np.random.Generator
) -> KernelFunctions:
    """``n_samples`` pathwise posterior functions of a fitted kernel model whose posterior
    has ``update`` (:class:`ExactPosterior` with the training rows as ``centres``,
    :class:`DTCPosterior` with the landmarks): the prior from :func:`prior_features`,
    noise draws ``sigma_t xi``, all on the host from ``rng``."""
    noise = model._noise()
    X = centres if sp.issparse(centres) else np.asarray(to_numpy(centres))
    name = type(model).__name__
    features = prior_features(model.kernel_, X.shape[1], name, rng)
    weights = prior_draws(features, noise, float(model.alpha), n_samples, rng)
    prior = prior_at(features, weights, X)
    noise_draws = rng.standard_normal(prior.shape) * np.sqrt(noise)[None, :, None]
    host_coef = np.asarray(to_numpy(coef), dtype=np.float64)
    update = posterior.update(host_coef, prior, noise_draws)
    one = model._one_target()
    return KernelFunctions(features, weights, model.kernel_, X, update, X.shape[1], one)


def prior_features(kernel: Any, n_features: int, name: str, rng: np.random.Generator) -> Any:
    """Random Fourier features ``z`` of ``kernel`` (:data:`PRIOR_FEATURES` of them, fitted
    for rows of ``n_features`` columns): ``z(a)^T z(b)`` estimates ``k(a, b)`` within
    ``sqrt(4 log(2 N / delta) / D)`` at ``N`` pairs of points with probability ``1 -
    delta`` (Hoeffding's inequality for the mean of ``D / 2`` cosines in ``[-1, 1]``)."""
    from ..feature_maps import RandomFourierFeatures

    if not isinstance(kernel, ShiftInvariantKernel):
        raise ValueError(
            f"{name}.sample_functions draws the prior from random Fourier features, which "
            f"exist for shift-invariant kernels only, not {kernel!r}; use a Gaussian, "
            "Laplacian, Cauchy or Matern kernel, or sample_y at the rows you need."
        )
    features = RandomFourierFeatures(kernel, n_components=PRIOR_FEATURES, random_state=rng)
    return features.fit(np.zeros((1, n_features)))


class KernelFunctions(PosteriorFunctions):
    """Functions ``f_s(x) = s_t z(x)^T w_s + k(x, Z)^T v_s`` drawn from a kernel model's
    posterior by the pathwise update (Wilson et al. 2020, eq. 13).

    ``z`` are random Fourier features of the kernel, ``w_s`` standard normal and ``s_t =
    (sigma_t^2 / alpha)^{1/2}``, so ``s_t z^T w_s`` is a draw of the prior (its covariance
    ``s_t^2 z(a)^T z(b)`` is within ``s_t^2 sqrt(4 log(2 N / delta) / D)`` of the prior's,
    see :func:`prior_features`); ``v_s`` updates it to the posterior at the centres ``Z``
    (the training rows, or the landmarks).

    Parameters
    ----------
    prior_map : RandomFourierFeatures
    prior_weights : ndarray of shape (D, t, n_samples)
        ``s_t w_s``.
    kernel : Kernel or callable
    centres : {ndarray, sparse matrix} of shape (p, n_features)
    update : ndarray of shape (p, t, n_samples)
    n_features_in : int
    one_target : bool
    """

    def __init__(
        self,
        prior_map: Any,
        prior_weights: np.ndarray,
        kernel: Any,
        centres: Any,
        update: np.ndarray,
        n_features_in: int,
        one_target: bool,
    ) -> None:
        self.prior_map = prior_map
        self.prior_weights = prior_weights
        self.kernel = kernel
        self.centres = centres
        self.update = update
        self.n_samples = int(update.shape[2])
        self.n_features_in_ = int(n_features_in)
        self._one_target = bool(one_target)

    def _n_targets(self) -> int:
        return int(self.update.shape[1])

    def _row_cost(self) -> int:
        return int(self.prior_weights.shape[0] + self.update.shape[0])

    def _evaluator(self, X: Any) -> Callable[[Any], Any]:
        xp, device = get_namespace(X)
        D, t, s = self.prior_weights.shape
        W, V = self.prior_weights.reshape(D, t * s), self.update.reshape(-1, t * s)
        Z = self.centres
        if not is_numpy(xp):
            W, V = (to_namespace(a, xp, device, dtype=X.dtype) for a in (W, V))
            Z = to_namespace(Z.toarray() if sp.issparse(Z) else Z, xp, device, dtype=X.dtype)

        def block(Xb: Any) -> Any:
            prior = map_features(self.prior_map, Xb)
            K = array_kernel_matrix(self.kernel, Xb, Z)
            W_, V_ = (a if is_numpy(xp) else xp.astype(a, K.dtype, copy=False) for a in (W, V))
            values = xp.astype(prior, K.dtype, copy=False) @ W_ + K @ V_
            return xp.reshape(values, (Xb.shape[0], t, s))

        return block


def prior_draws(
    features: Any, noise: np.ndarray, alpha: float, n_samples: int, rng: np.random.Generator
) -> np.ndarray:
    """``s_t w_s`` of shape (D, t, n_samples): standard normal weights scaled by the prior's
    standard deviation ``(sigma_t^2 / alpha)^{1/2}`` per target."""
    scale = np.sqrt(noise / alpha)
    w = rng.standard_normal((features.n_components, noise.size, n_samples))
    return np.asarray(w * scale[None, :, None])


def prior_at(features: Any, weights: np.ndarray, X: Any) -> np.ndarray:
    """The prior draws at the rows ``X`` (host), shape (n, t, n_samples), in float64."""
    D, t, s = weights.shape
    Z = np.asarray(to_numpy(map_features(features, X)), dtype=np.float64)
    return (Z @ weights.reshape(D, t * s)).reshape(-1, t, s)
