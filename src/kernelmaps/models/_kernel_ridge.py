"""Exact kernel ridge regression in the dual, solved by a Cholesky factorization."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from numbers import Real
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from .._array_api import get_namespace, to_numpy
from .._estimator_repr import CompactArrayReprMixin
from .._memory import check_memory
from .._row_blocks import row_blocks
from .._rows import as_rows, pick_rows, rowwise
from .._validation import StrictInterval
from ..kernels import kernel_parameter_constraints, resolve_estimator_kernel
from ._base import (
    KernelLike,
    KernelRegressorMixin,
    predict_in_blocks,
    regression_rows,
)
from ._calibration import calibration_size
from ._checks import check_solution
from ._device import Placement, array_kernel_matrix, diagonal, plus_diagonal
from ._kernel_posterior import (
    ExactPosterior,
    KernelFunctions,
    draw_functions,
    eigen_inverse,
    factor_solve,
    held_out_block,
    lower_factor,
)
from ._ridge._pass import host_rows, sample_rows
from ._uncertainty import ConformalScores, UncertaintyMixin, evidence_noise_variance

__all__ = ["EXACT_MEMORY_WARNING_BYTES", "KernelRidge"]

#: KernelRidge warns when its ``n x n`` float64 kernel matrix would exceed this many bytes.
EXACT_MEMORY_WARNING_BYTES = 2 * 2**30

_EPS = float(np.finfo(np.float64).eps)

_FEWER_ROWS = (
    "fit on fewer rows, or use NystroemKernelRidge (memory O(m^2) for m landmarks) or "
    "FeatureRidge with RandomFourierFeatures"
)


def _part_and_targets(X: Any, y: Any, start: Any) -> tuple[Any, Any]:
    return X, y


def _stack_pairs(a: tuple[Any, Any], b: tuple[Any, Any]) -> tuple[Any, Any]:
    X = sp.vstack([a[0], b[0]], format="csr") if sp.issparse(a[0]) else np.vstack([a[0], b[0]])
    return X, np.concatenate([np.asarray(a[1]), np.asarray(b[1])])


class KernelRidge(
    UncertaintyMixin, KernelRegressorMixin, RegressorMixin, CompactArrayReprMixin, BaseEstimator
):
    """Exact kernel ridge regression (the reference the approximations are measured against).

    Solves the dual problem ``(K + alpha I) c = y`` with ``K[i, j] = k(x_i, x_j)`` by a
    Cholesky factorization and predicts ``f(x) = sum_i c_i k(x, x_i)``.  There is no
    intercept (as in :class:`sklearn.kernel_ridge.KernelRidge`): centre ``y`` first when its
    mean is far from zero.

    Parameters
    ----------
    kernel : str, Kernel or callable, default="rbf"
        A kernel name (see :func:`kernelmaps.kernels.kernel_names`), a kernel object from
        :mod:`kernelmaps.kernels`, or a callable ``kernel(X, Y, **kernel_params)`` returning
        the kernel matrix between the rows of ``X`` and ``Y``.
    gamma : float, default=None
        ``> 0``; ``None`` means the kernel's default (``1 / n_features`` for the kernels
        that take a ``gamma``).
    degree : int, default=None
        Integer degree ``>= 1`` of the polynomial kernels (``None``: the kernel's default).
    coef0 : float, default=None
        Constant term ``>= 0`` of the polynomial kernel (``None``: the kernel's default).
    kernel_params : dict, default=None
        Other kernel parameters, e.g. ``{"nu": 2.5}`` for Matérn.
    alpha : float, default=1.0
        Ridge penalty ``alpha > 0``, on the scale of ``K`` (``alpha = n * lambda`` for the
        risk ``(1/n) sum (y_i - f(x_i))^2 + lambda |f|_H^2``).

    Attributes
    ----------
    kernel_ : Kernel or callable
        The kernel evaluated, with its parameters resolved.
    dual_coef_ : ndarray of shape (n_samples,) or (n_samples, n_targets)
        The dual coefficients ``c`` (float64; float32 on a device without float64).
    X_fit_ : ndarray or sparse matrix of shape (n_samples, n_features)
        The training inputs, needed for prediction.
    noise_variance_ : float or ndarray of shape (n_targets,)
        The noise variance ``sigma^2`` at the evidence's maximum (see Notes).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined when ``X`` has string column names.

    Notes
    -----
    Cost: ``O(n^2 d)`` to form ``K``, ``O(n^3 / 3)`` for the factorization, memory
    ``O(n^2)``; prediction ``O(n d)`` per point, evaluated in row blocks bounded by
    scikit-learn's ``working_memory``.  Past ``EXACT_MEMORY_WARNING_BYTES`` (2 GiB, about
    16,000 samples) a ``UserWarning`` points to :class:`NystroemKernelRidge` (memory
    ``O(m^2)``) and :class:`FeatureRidge` with random features (memory ``O(D^2)``).
    Computations are in float64; float32 input gives float32 predictions.  A Dask array
    ``X`` (or ``y``) is gathered whole to the client in one computation and fitted as
    numpy: the ``n x n`` kernel matrix is needed whole anyway (for large ``n`` use
    :class:`NystroemKernelRidge`, whose fit keeps the rows on the workers); ``X_fit_`` is
    then an ndarray, and ``predict`` on a Dask array is lazy.  The memory of ``K`` is
    checked against what is available before it is formed
    (:class:`~kernelmaps.exceptions.InsufficientMemoryError` otherwise, with both
    numbers).

    With scikit-learn's ``array_api_dispatch`` on, an array of another library (a
    PyTorch tensor, a CuPy array) is fitted on its device: ``K`` is computed there from
    ``X`` in float64 and factorized there (on the host, from the device's float32
    ``K``, where the device has no float64), ``X_fit_`` and ``dual_coef_`` live there
    and ``predict`` runs there.  The eigendecomposition of the numerically singular case
    below runs on the host.

    Numerical limits.  When ``K + alpha I`` is numerically singular (duplicate or
    near-duplicate rows with ``alpha`` below the rounding level ``n eps max K_ii``), ``c``
    is taken from the eigendecomposition of ``K`` without the directions of its
    numerical null space (eigenvalues under ``n eps l_max``): those components of ``c``
    change no prediction, and would otherwise be rounding noise divided by ``alpha``.  If
    ``K + alpha I`` is not positive definite (a callable that is not a positive-definite
    kernel), it is solved by its eigendecomposition with a warning.  A kernel matrix,
    coefficients or predictions holding inf or NaN (inputs or targets near the limits of
    float64) raise :class:`~kernelmaps.exceptions.NonFiniteOutputError` naming what to
    rescale.

    Posterior.  The model is the posterior mean of the Gaussian process ``f ~ GP(0,
    (sigma^2 / alpha) k)`` with noise ``N(0, sigma^2)``, whose latent covariance is

    .. math:: \\operatorname{Cov}(f(a), f(b)) = \\frac{\\sigma^2}{\\alpha}\\big(k(a, b)
              - k_a^T (K + \\alpha I)^{-1} k_b\\big),

    what ``predict(X, return_std=True)``, ``return_cov``, :meth:`sample_y` and
    :meth:`sample_functions` give (the std of a new observation adds ``sigma^2``): the
    posterior of :class:`sklearn.gaussian_process.GaussianProcessRegressor` with the
    kernel ``ConstantKernel(sigma^2 / alpha) * k + WhiteKernel(sigma^2)``.  The Cholesky
    factor of ``K + alpha I`` is formed from ``X_fit_`` when first needed (``O(n^3 / 3)``,
    memory ``n^2``) and kept, but not pickled.  The noise variance maximizes the evidence
    ``y ~ N(0, (sigma^2 / alpha) (K + alpha I))`` over ``sigma^2`` at the fitted
    ``alpha``: setting the derivative of ``-(alpha / (2 sigma^2)) y^T (K + alpha I)^{-1} y
    - (n / 2) log sigma^2`` to zero,

    .. math:: \\hat\\sigma^2 = \\frac{\\alpha\\, y^T c}{n}
              = \\frac{|y - K c|^2 + \\alpha c^T K c}{n},

    the ridge objective at its minimum over ``n`` (``y = (K + alpha I) c``; MacKay 1992).
    :meth:`predict_interval` is jackknife+ from the exact leave-one-out residuals ``r_j =
    c_j / [(K + alpha I)^{-1}]_jj`` of a sample of the rows (``O(n^2)`` each, when first
    needed); :meth:`sample_functions` draws pathwise functions (Wilson et al. 2020) on a
    random Fourier prior of the kernel (shift-invariant kernels).

    References
    ----------
    Saunders, C., Gammerman, A. and Vovk, V. (1998). Ridge regression learning algorithm in
    dual variables. ICML.
    Rasmussen, C. E. and Williams, C. K. I. (2006). Gaussian Processes for Machine
    Learning, section 2.2. MIT Press.
    Wilson, J. T. et al. (2020). Efficiently sampling functions from Gaussian process
    posteriors. ICML.

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from kernelmaps import KernelRidge
    >>> X, y = load_diabetes(return_X_y=True)
    >>> model = KernelRidge(gamma=0.5, alpha=0.1).fit(X, y - y.mean())
    >>> model.predict(X[:2]).shape
    (2,)
    """

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **kernel_parameter_constraints(named=("gamma", "degree", "coef0"), callable_ok=True),
        "alpha": [StrictInterval(Real, 0.0, None, closed="neither")],
    }

    def __init__(
        self,
        kernel: KernelLike = "rbf",
        *,
        gamma: float | None = None,
        degree: int | None = None,
        coef0: float | None = None,
        kernel_params: dict[str, Any] | None = None,
        alpha: float = 1.0,
    ) -> None:
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.alpha = alpha

    def _make_kernel(self, n_features: int) -> Any:
        return resolve_estimator_kernel(self, n_features)

    def fit(self, X: Any, y: Any) -> KernelRidge:
        """Fit on ``X`` and targets ``y``.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask.array.Array} of shape (n_samples, n_features)
            Training inputs, all kept (``X_fit_``) for prediction; a Dask array is gathered
            (with a Dask ``y``, in the same computation); an array of another library
            (array API dispatch on) is fitted on its device, ``y`` moved there.
        y : array-like or dask.array.Array of shape (n_samples,) or (n_samples, n_targets)
            Targets; centre them first when their mean is far from zero (no intercept).

        Returns
        -------
        self : KernelRidge
            The fitted model.
        """
        self._validate_params()
        rows = as_rows(X, name=type(self).__name__)
        if not rows.in_memory:  # gathered, with y, in one pass (the n x n matrix is local)
            X, y = rows.map_reduce(_part_and_targets, _stack_pairs, rows.align(y))
        rows, y = regression_rows(self, X, y)
        X, place = rows.X, Placement.of(rows)
        n = X.shape[0]
        if n * n * 8 > EXACT_MEMORY_WARNING_BYTES:
            warnings.warn(
                f"KernelRidge forms the {n} x {n} kernel matrix ({n * n * 8 / 2**30:.1f} GiB "
                "in float64) and factorizes it in O(n^3). For this many samples use "
                "NystroemKernelRidge (memory O(m^2) for m landmarks) or FeatureRidge with "
                "RandomFourierFeatures (memory O(D^2)), or fit on a subsample.",
                UserWarning,
                stacklevel=2,
            )
        check_memory(
            8.0 * n * n,
            f"KernelRidge's {n} x {n} kernel matrix",
            _FEWER_ROWS,
        )
        kernel = self._make_kernel(X.shape[1])
        K = self._kernel_matrix(kernel, X)
        Y = place.float64(y)
        coef = self._solve(K, lambda: self._kernel_matrix(kernel, X), Y)
        check_solution(type(self).__name__, float(self.alpha), to_numpy(coef))
        self.kernel_ = kernel
        self.X_fit_ = X
        self.dual_coef_ = place.fitted(coef)
        self.__dict__.pop("_posterior_state", None)
        with np.errstate(over="ignore", invalid="ignore"):  # inf for y near float64's limit
            fit_term = float(self.alpha) * np.sum(
                to_numpy(Y).reshape(n, -1) * to_numpy(coef).reshape(n, -1), axis=0
            )
            noise = evidence_noise_variance(fit_term, n)
        self.noise_variance_ = float(noise[0]) if Y.ndim == 1 else place.fitted(noise)
        return self

    def _kernel_matrix(self, kernel: Any, X: Any) -> Any:
        """``k(X, X)`` in float64; inf or NaN is refused with a clear error by the kernels
        (an overflow) and by :func:`~kernelmaps.kernels.check_kernel_matrix` (a callable).
        On a device: from ``X`` in float64 where the device holds it, kept there."""
        place = Placement.of(X)
        wide = place.widened(X)
        return place.float64(array_kernel_matrix(kernel, wide, wide))

    def _solve(self, K: Any, remake: Callable[[], Any], Y: Any) -> Any:
        """``(K + alpha I)^{-1} Y``: Cholesky (overwriting ``K``), else the eigen solution.

        When ``K + alpha I`` is numerically singular (the factorization fails, or a pivot
        is at the rounding level ``n eps max K_ii``: duplicate rows with a tiny alpha),
        ``K`` is made again by ``remake`` and decomposed, and the directions of its
        numerical null space are left out (they change no prediction).  An indefinite
        ``K`` (a callable that is not a positive-definite kernel) is solved by its
        eigendecomposition with a warning, leaving out the eigenvalues of ``K + alpha I``
        at the rounding level (:func:`~._kernel_posterior.eigen_inverse`).
        """
        L = self._factor(K)
        if L is not None:
            return factor_solve(L, Y)
        del K
        U, inv, _ = eigen_inverse(to_numpy(remake()), float(self.alpha), stacklevel=3)
        Y2 = to_numpy(Y).reshape(U.shape[0], -1)
        return (U @ (inv[:, None] * (U.T @ Y2))).reshape(Y.shape)

    def _factor(self, K: Any) -> Any:
        """The lower Cholesky factor of ``K + alpha I`` (in ``K``'s memory on the host), or
        None when it is numerically singular (a pivot at ``n eps max K_ii``)."""
        xp = get_namespace(K)[0]
        level = K.shape[0] * _EPS * max(float(xp.max(diagonal(K))), 0.0)
        return lower_factor(plus_diagonal(K, float(self.alpha), copy=False), level)

    @rowwise
    def _mean(self, X: Any) -> np.ndarray:
        """``f(x) = sum_i c_i k(x, x_i)``, in row blocks (each block of rows meets all ``n``
        training rows in one kernel evaluation); float32 stays float32, an array of
        another library where the model was fitted gives one there."""
        check_is_fitted(self)
        return predict_in_blocks(
            self, X, tuple(self.dual_coef_.shape[1:]), self._block_rows, self._predictor
        )

    def _block_rows(self, X: Any) -> Any:
        return row_blocks(X.shape[0], 3.0 * 8 * self.X_fit_.shape[0])

    def _predictor(self, X: Any) -> Callable[[Any], Any]:
        """What :meth:`predict` does to a block of rows of ``X``: on a device, the kernel
        from the rows in float64 where it holds it, the output in ``X``'s dtype."""
        coef, X_fit, place = self.dual_coef_, self.X_fit_, Placement.of(X)
        xp, dtype, fit_wide = place.xp, X.dtype, place.widened(X_fit)

        def block(Xb: Any) -> Any:
            K = array_kernel_matrix(self.kernel_, place.widened(Xb), fit_wide)
            return xp.astype(K @ coef, dtype, copy=False)

        return block

    # -- the posterior ------------------------------------------------------------------

    def _posterior(self) -> ExactPosterior:
        """The Gaussian process posterior, from the Cholesky factor of ``K + alpha I``
        formed from ``X_fit_`` when first needed (``O(n^2 d + n^3 / 3)``, memory ``n^2``)
        and kept (not pickled); from the eigendecomposition of ``K`` where ``K + alpha I``
        is numerically singular, as in the fit."""
        state = self.__dict__.get("_posterior_state")
        if state is not None:
            return state
        check_is_fitted(self, "noise_variance_")
        X = self.X_fit_
        check_memory(8.0 * X.shape[0] ** 2, f"KernelRidge's {X.shape[0]}^2 factor", _FEWER_ROWS)
        place = Placement.of(X)
        factor, scale, evals = self._factor(self._kernel_matrix(self.kernel_, X)), None, None
        if factor is None:
            K = to_numpy(self._kernel_matrix(self.kernel_, X))
            factor, scale, evals = eigen_inverse(K, float(self.alpha), stacklevel=4)
        state = ExactPosterior(
            self.kernel_,
            place.widened(X),
            float(self.alpha),
            factor,
            scale,
            self._block_rows,
            evals,
        )
        self._posterior_state = state
        return state

    def _scores(self) -> ConformalScores:
        """The exact leave-one-out residuals ``r_j = c_j / [(K + alpha I)^{-1}]_jj`` of a
        sample of the training rows (every row up to 1024, else a tenth of them within
        [1024, 4096]), from the posterior's factor (``O(n^2)`` a row) when first needed."""
        posterior = self._posterior()
        if posterior.conformal is None:
            n = self.X_fit_.shape[0]
            index = sample_rows(n, calibration_size(n))
            coef = to_numpy(self.dual_coef_).reshape(n, -1)[index]
            residuals = coef / posterior.inverse_diagonal(index)[:, None]
            posterior.conformal = ConformalScores(
                host_rows(pick_rows(self.X_fit_, index)), residuals
            )
        return posterior.conformal

    def _held_out(self, X: Any) -> Callable[[Any], Any]:
        """Jackknife+ (:func:`~._kernel_posterior.held_out_block`), the smoother the
        posterior covariance in units of ``sigma^2`` (removing an observation from a
        Gaussian process): to a training row, one product a block
        (:meth:`ExactPosterior.training_smoother`)."""
        posterior, scores = self._posterior(), self._scores()
        n = self.X_fit_.shape[0]
        smoother_of = posterior.training_smoother(sample_rows(n, calibration_size(n)))
        return held_out_block(posterior, scores, self._predictor(X), X, smoother_of)

    def _sample_functions(self, n_samples: int, rng: np.random.Generator) -> KernelFunctions:
        """Pathwise draws: ``v_s = (K + alpha I)^{-1} (y - f_prior(X) - e_s)`` with ``e_s ~
        N(0, sigma^2 I)`` (Wilson et al. 2020, eq. 13)."""
        posterior = self._posterior()
        return draw_functions(self, posterior, self.X_fit_, self.dual_coef_, n_samples, rng)
