"""Predictive uncertainty of the regressors: posterior standard deviations and covariances,
conformal intervals without refits, and posterior samples.

Every regressor here is the posterior mean of a Gaussian model: ridge regression on features
``z`` is Bayesian linear regression with prior ``w ~ N(0, (sigma^2 / alpha) I)`` and noise
``N(0, sigma^2)``; kernel ridge regression is the posterior mean of a Gaussian process with
covariance ``(sigma^2 / alpha) k`` and the same noise.  A model states its posterior by a
:class:`Posterior` (the latent covariance in units of ``sigma^2``) and its conformal scores
by :class:`ConformalScores`; :class:`UncertaintyMixin` turns them into ``predict(...,
return_std=True)``, ``predict_interval``, ``sample_y`` and ``sample_functions``, the same
for every model and array library.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import types
from collections.abc import Callable, Iterable
from typing import Any, Protocol

import numpy as np
from sklearn.base import is_classifier
from sklearn.utils.validation import check_is_fitted

from .._array_api import get_namespace, is_numpy, to_namespace, to_numpy
from .._random import check_random_state
from .._rows import rowwise
from ._base import predict_in_blocks

__all__ = [
    "ConformalScores",
    "Posterior",
    "UncertaintyMixin",
    "conformal_bounds",
    "evidence_noise_variance",
]


class Posterior(Protocol):
    """The latent posterior of a fitted model, in units of the noise variance ``sigma^2``.

    ``covariance(A, B)[i, j] = Cov(f(a_i), f(b_j)) / sigma^2`` for blocks of validated
    rows ``A`` and ``B`` (arrays of one library, on one device); ``variance(A)`` is its
    diagonal for ``B = A``; ``smoother(A, B)`` is how a training row ``b_j`` moves the
    posterior mean at ``a_i`` (``dmu(a_i) / dy_j`` up to the row's leverage: the
    covariance for the exact posteriors, the subset-of-regressors part of it for
    Nyström's); ``block_rows(X)`` the row blocks of ``X`` a pass takes.
    """

    def variance(self, A: Any) -> Any: ...

    def covariance(self, A: Any, B: Any) -> Any: ...

    def smoother(self, A: Any, B: Any) -> Any: ...

    def block_rows(self, X: Any) -> Iterable[slice]: ...


@dataclasses.dataclass(frozen=True)
class ConformalScores:
    """The held-out predictions a fit leaves for conformal intervals.

    Attributes
    ----------
    rows : array of shape (m, n_features)
        The training rows scored (all of them, or a uniform sample without replacement),
        NumPy or sparse.
    residuals : ndarray of shape (m, t)
        ``y_i - mu_{-i}(x_i)``: each row's residual under the model fitted without it
        (jackknife+), or without its fold (CV+).
    folds : ndarray of shape (m,) or None
        CV+: the fold of each row, whose model is ``fold_models[fold]``; None for
        leave-one-out.
    fold_models : tuple of ndarray or None
        CV+: ``(coef (D, K t), intercept (K t,))``, the models fitted without each fold,
        fold after fold.
    index, targets : ndarray of shape (m,) and (m, t), or None
        The global indices of the scored rows (sorted) and their targets.
    """

    rows: Any
    residuals: np.ndarray
    folds: np.ndarray | None = None
    fold_models: tuple[np.ndarray, np.ndarray] | None = None
    index: np.ndarray | None = None
    targets: np.ndarray | None = None


def evidence_noise_variance(residual: np.ndarray, count: float) -> np.ndarray:
    """The noise variance that maximizes the evidence at a fixed penalty.

    For ``y ~ N(0, sigma^2 (S^{-1} + Z Z^T / alpha))`` (the prior ``w ~ N(0, (sigma^2 /
    alpha) I)``, weights ``S`` counting observations), the maximum over ``sigma^2`` is

    .. math:: \\hat\\sigma^2 = \\frac{\\sum_i s_i (y_i - \\hat f(x_i))^2
              + \\alpha |\\hat w|^2}{\\sum_i s_i - p},

    the ridge objective at its minimum (``residual``, per target) over the observations
    less ``p``, one for the flat prior of an intercept (the restricted likelihood)
    (MacKay 1992; Bishop 2006, section 3.5).  Clipped at 0 (a noiseless fit); NaN when
    ``count <= 0`` (too few observations: the methods that need it say so).

    Why this rule: it is the noise of the model whose posterior mean the fit is, so the
    standard deviations are those of a coherent Bayesian model (at ``D -> infinity`` the
    Gaussian process's with the same penalty); it comes from the sums the solve already
    has (no pass over the rows, the same after ``partial_fit`` and on Dask).  The mean
    squared leave-one-out residual would instead estimate ``sigma^2`` plus the posterior
    variance at the rows, counting the latter twice in ``Var f(x) + sigma^2``.
    """
    residual = np.clip(np.asarray(residual, dtype=np.float64), 0.0, None)
    if count <= 0:
        return np.full_like(residual, math.nan)
    return residual / count


def conformal_bounds(mean_out: Any, residuals: Any, coverage: float, xp: Any) -> tuple[Any, Any]:
    """Jackknife+ (or CV+) bounds of every row from the held-out predictions.

    ``mean_out[i, j, k]`` is ``mu_{-j}(x_i)`` for target ``k`` (the model without
    training row ``j``, or without its fold), ``residuals[j, k] = |y_j - mu_{-j}(x_j)|``
    of the ``m`` scored rows.  With ``a = 1 - coverage``, the bounds are the
    ``floor(a (m + 1))``-th smallest of ``mu_{-j}(x) - R_j`` and the ``ceil((1 - a)
    (m + 1))``-th smallest of ``mu_{-j}(x) + R_j`` (``-inf`` and ``inf`` where that rank
    is 0 or beyond ``m``) (Barber, Candès, Ramdas & Tibshirani 2021, eq. 6).
    """
    m = residuals.shape[0]
    a = 1.0 - coverage
    low_rank = math.floor(a * (m + 1))
    high_rank = math.ceil((1.0 - a) * (m + 1))
    lower = _kth(xp, mean_out - residuals[None, :, :], low_rank, -math.inf)
    upper = _kth(xp, mean_out + residuals[None, :, :], high_rank, math.inf)
    return lower, upper


def _kth(xp: Any, values: Any, rank: int, outside: float) -> Any:
    """The ``rank``-th smallest (1-based) along axis 1; ``outside`` when out of range."""
    n, m, t = values.shape
    if rank < 1 or rank > m:
        return xp.full((n, t), outside, dtype=values.dtype, device=_device_of(values))
    if is_numpy(xp):
        return np.partition(values, rank - 1, axis=1)[:, rank - 1, :]
    return xp.sort(values, axis=1)[:, rank - 1, :]


def _device_of(a: Any) -> Any:
    return get_namespace(a)[1]


class UncertaintyMixin:
    """``return_std``/``return_cov``, ``predict_interval``, ``sample_y`` and
    ``sample_functions`` from a model's :class:`Posterior` and :class:`ConformalScores`.

    A model defines ``_mean(X)`` (its predictions, row-wise), ``_posterior()`` (its
    :class:`Posterior`), ``_held_out(X)`` (for the validated rows ``X``, the function
    from a block of them to its held-out predictions of :func:`conformal_bounds`, shape
    (n, m, t)), ``_sample_functions(n, rng)`` and the
    fitted ``noise_variance_`` (float, or one per target) and ``_conformal``
    (:class:`ConformalScores` or None).
    """

    noise_variance_: Any
    _conformal: ConformalScores | None

    #: The internal types of the fitted state (a model file may hold them).
    _state_types: tuple[type, ...] = (ConformalScores,)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Give each estimator its own copy of the public methods, so that a wrong call
        names the estimator (``FeatureRidge.predict() got an unexpected keyword``), not
        this mixin."""
        super().__init_subclass__(**kwargs)
        for name in _PUBLIC_METHODS:
            if name not in cls.__dict__:
                setattr(cls, name, _renamed(getattr(UncertaintyMixin, name), cls.__name__))

    def _mean(self, X: Any) -> Any:
        raise NotImplementedError

    def _posterior(self) -> Posterior:
        raise NotImplementedError

    def _scores(self) -> ConformalScores | None:
        """The conformal scores of the fit (None: no intervals, e.g. weighted rows)."""
        return getattr(self, "_conformal", None)

    def _held_out(self, X: Any) -> Callable[[Any], Any]:
        raise NotImplementedError

    def _sample_functions(self, n_samples: int, rng: np.random.Generator) -> Any:
        raise NotImplementedError

    def _noise(self) -> np.ndarray:
        """``sigma^2`` per target, shape (t,)."""
        check_is_fitted(self, "noise_variance_")
        noise = np.atleast_1d(np.asarray(to_numpy(self.noise_variance_), dtype=np.float64))
        if not np.all(np.isfinite(noise)):
            raise ValueError(
                f"{type(self).__name__}'s noise variance is undefined: the fit saw one "
                "observation or fewer (the sample weights sum to at most 1, plus 1 with an "
                "intercept); fit on more rows for uncertainty."
            )
        return noise

    def __getstate__(self) -> dict[str, Any]:
        state = dict(super().__getstate__())  # type: ignore[misc]
        state.pop("_posterior_state", None)  # formed again when first needed
        return state

    def _one_target(self) -> bool:
        return bool(np.ndim(to_numpy(self.noise_variance_)) == 0)

    def predict(self, X: Any, return_std: bool = False, return_cov: bool = False) -> Any:
        """Predict the posterior mean, with the standard deviation or covariance of a new
        observation.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features)
        return_std : bool, default=False
            Also return the standard deviation of a new observation ``y`` at each row,
            ``sqrt(Var f(x) + sigma^2)`` (as :class:`sklearn.linear_model.BayesianRidge`
            and a Gaussian process with a white-noise term return it); the latent
            function's is ``sqrt(std^2 - noise_variance_)``.
        return_cov : bool, default=False
            Also return the covariance of new observations at the rows of ``X`` (in memory,
            ``n_samples^2`` values): ``Cov(f(X)) + sigma^2 I``.

        Returns
        -------
        y_mean : array of shape (n_samples,) or (n_samples, n_targets)
        y_std : array of shape (n_samples,) or (n_samples, n_targets), optional
        y_cov : array of shape (n_samples, n_samples) or (n_samples, n_samples, n_targets),
            optional
        """
        if return_std and return_cov:
            raise ValueError(
                "At most one of return_std or return_cov can be requested; ask for the "
                "covariance alone (its diagonal is the variance)."
            )
        mean = self._mean(X)
        if not (return_std or return_cov):
            return mean
        if return_std:
            return mean, self._std(X, self._unit_variance(X))
        return mean, self._cov(X)

    @rowwise
    def _unit_variance(self, X: Any) -> Any:
        """``Var f(x) / sigma^2`` of every row of ``X``, shape (n,)."""
        check_is_fitted(self, "noise_variance_")
        posterior = self._posterior()
        return predict_in_blocks(self, X, (), posterior.block_rows, lambda X: posterior.variance)

    def _std(self, X: Any, unit: Any) -> Any:
        noise = self._noise()
        if is_numpy(get_namespace(unit)[0]) or _is_dask(unit):
            noise_x: Any = noise.astype(unit.dtype)
        else:
            xp, device = get_namespace(unit)
            noise_x = to_namespace(noise, xp, device, dtype=unit.dtype)
        xp = get_namespace(unit)[0] if not _is_dask(unit) else np
        std = (unit[:, None] + 1.0) * noise_x[None, :]
        std = np.sqrt(std) if xp is np else xp.sqrt(std)
        return std[:, 0] if self._one_target() else std

    def _validated(self, X: Any, what: str) -> Any:
        if _is_dask(X):
            raise TypeError(f"{what} needs the rows in memory; compute the Dask array first.")
        out: list[Any] = []

        def keep(Xv: Any) -> Callable[[Any], Any]:
            out.append(Xv)
            return lambda Xb: Xb[:, 0]

        predict_in_blocks(self, X, (), lambda Xv: [slice(0, Xv.shape[0])], keep)
        return out[0]

    def _cov(self, X: Any) -> Any:
        """``Cov(f(X)) + sigma^2 I`` of the rows of ``X`` (in memory)."""
        Xv = self._validated(X, "return_cov")
        xp, device = get_namespace(Xv)
        unit = self._posterior().covariance(Xv, Xv)
        n = Xv.shape[0]
        unit = unit + xp.eye(n, dtype=unit.dtype, device=device)
        noise = to_namespace(self._noise(), xp, device, dtype=unit.dtype)
        cov = unit[:, :, None] * noise[None, None, :]
        return cov[:, :, 0] if self._one_target() else cov

    def predict_interval(self, X: Any, coverage: float = 0.9) -> tuple[Any, Any]:
        """Conformal prediction intervals from the fit's held-out residuals, without refits.

        Jackknife+ (Barber, Candès, Ramdas & Tibshirani 2021) from the exact leave-one-out
        models of the scored training rows (every row up to 1024, else a fixed uniform
        sample of a tenth of them, between 1024 and 4096), or CV+ from the fold models of a
        K-fold search.  For exchangeable rows (no sample weights) and ``m`` scored rows,
        the interval of a new row covers its ``y`` with probability at least
        ``1 - 2 (1 - coverage)`` whatever the data and the model (the theorem's bound; in
        practice the coverage is close to ``coverage``).  It is marginal over new rows, not
        conditional on ``x``; it is infinite when ``coverage`` needs a rank beyond ``m``
        (``coverage > 1 - 1 / (m + 1)``).

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features)
        coverage : float in (0, 1), default=0.9
            The nominal coverage ``1 - a``.

        Returns
        -------
        lower, upper : arrays of shape (n_samples,) or (n_samples, n_targets)
        """
        if not (isinstance(coverage, numbers.Real) and 0.0 < float(coverage) < 1.0):
            raise ValueError(
                f"coverage must be a number in (0, 1), got {coverage!r}; e.g. coverage=0.9."
            )
        check_is_fitted(self, "noise_variance_")
        self._posterior()  # a model fitted without one says why
        scores = self._scores()
        if scores is None:
            raise ValueError(
                f"{type(self).__name__} has no held-out residuals for conformal intervals: "
                "they need exchangeable rows, so fit without sample_weight (or with unit "
                "weights)."
            )
        m = scores.residuals.shape[0]
        if math.ceil(float(coverage) * (m + 1)) > m:
            least = math.ceil(coverage / (1 - coverage) - 1e-9)
            raise ValueError(
                f"coverage={coverage:g} needs at least {least} "
                f"scored rows for a finite interval, but the fit scored {m}; lower the "
                "coverage or fit on more rows."
            )
        bounds = self._bounds(X, coverage=float(coverage))
        t = scores.residuals.shape[1]
        if self._one_target():
            return bounds[:, 0], bounds[:, 1]
        return bounds[:, :t], bounds[:, t:]

    @rowwise
    def _bounds(self, X: Any, coverage: float = 0.9) -> Any:
        """The lower bounds of the rows of ``X`` for each target, then the upper ones,
        shape (n, 2 t)."""
        scores = self._scores()
        assert scores is not None  # checked by predict_interval
        t = scores.residuals.shape[1]

        def predictor(Xv: Any) -> Callable[[Any], Any]:
            xp, device = get_namespace(Xv)
            residuals = to_namespace(np.abs(scores.residuals), xp, device, dtype=Xv.dtype)

            held_out = self._held_out(Xv)

            def block(Xb: Any) -> Any:
                held = xp.astype(held_out(Xb), Xb.dtype, copy=False)
                lower, upper = conformal_bounds(held, residuals, coverage, xp)
                return xp.concat([lower, upper], axis=1)

            return block

        return predict_in_blocks(self, X, (2 * t,), self._posterior().block_rows, predictor)

    def sample_y(self, X: Any, n_samples: int = 1, random_state: Any = 0) -> Any:
        """Draw joint samples of new observations at the rows of ``X`` from the posterior.

        ``y = mean + chol(Cov(f(X)) / sigma^2 + I) xi sigma`` with ``xi`` standard normal,
        drawn on the host from ``random_state`` (owned: an int gives the same draws) and
        moved to ``X``'s device; the samples of the covariance ``predict(X,
        return_cov=True)`` returns, with the signature and shapes of
        :meth:`sklearn.gaussian_process.GaussianProcessRegressor.sample_y`.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples_X, n_features)
        n_samples : int, default=1
        random_state : int, RandomState, Generator or None, default=0

        Returns
        -------
        y_samples : array of shape (n_samples_X, n_samples) or (n_samples_X, n_targets,
            n_samples)
        """
        _check_n_samples(n_samples)
        Xv = self._validated(X, "sample_y")
        xp, device = get_namespace(Xv)
        mean = self._mean(Xv)
        unit = to_numpy(self._posterior().covariance(Xv, Xv)).astype(np.float64)
        n = unit.shape[0]
        unit[np.diag_indices(n)] += 1.0
        root = np.linalg.cholesky(unit)  # positive definite: at least I
        noise = self._noise()
        xi = check_random_state(random_state).standard_normal((noise.size, n, n_samples))
        draws = np.einsum("ij,tjs->its", root, xi) * np.sqrt(noise)[None, :, None]
        mean_np = to_numpy(mean).reshape(n, -1).astype(np.float64)
        out = to_namespace(mean_np[:, :, None] + draws, xp, device, dtype=Xv.dtype)
        return out[:, 0, :] if self._one_target() else out

    def sample_functions(self, n_samples: int = 1, random_state: Any = None) -> Any:
        """Draw functions from the posterior: a fitted object that evaluates them at any rows.

        Each draw is a whole function ``f_s`` (the latent function, without the noise),
        consistent across every call of the returned object: ``paths(X)`` and
        ``paths(X2)`` are the same ``n_samples`` functions at two sets of rows, so it can
        be maximized by an optimizer (Thompson sampling).  Drawn on the host from
        ``random_state`` (owned) and moved where the model lives.

        Parameters
        ----------
        n_samples : int, default=1
        random_state : int, RandomState, Generator or None, default=None

        Returns
        -------
        paths : PosteriorFunctions
            Picklable; ``paths(X)`` has shape (n_rows, n_samples), or (n_rows, n_targets,
            n_samples) for several targets, evaluated in row blocks.
        """
        _check_n_samples(n_samples)
        check_is_fitted(self, "noise_variance_")
        self._posterior()  # a model fitted without one says why
        return self._sample_functions(n_samples, check_random_state(random_state))


_PUBLIC_METHODS = ("predict", "predict_interval", "sample_y", "sample_functions")


def _renamed(function: Any, owner: str) -> Any:
    """A copy of ``function`` whose qualified name (and code's) is ``owner.name``."""
    code = function.__code__
    if hasattr(code, "co_qualname"):  # Python 3.11+: what the TypeError messages name
        code = code.replace(co_qualname=f"{owner}.{function.__name__}")
    copy = types.FunctionType(
        code,
        function.__globals__,
        function.__name__,
        function.__defaults__,
        function.__closure__,
    )
    copy.__kwdefaults__ = function.__kwdefaults__
    copy.__doc__, copy.__module__ = function.__doc__, function.__module__
    copy.__qualname__ = f"{owner}.{function.__name__}"
    copy.__annotations__ = dict(function.__annotations__)
    return copy


def _check_n_samples(n_samples: Any) -> None:
    if isinstance(n_samples, bool) or not isinstance(n_samples, numbers.Integral) or n_samples < 1:
        raise ValueError(f"n_samples must be a positive integer, got {n_samples!r}.")


def _is_dask(a: Any) -> bool:
    from .._array_types import is_dask_array

    return bool(is_dask_array(a))


def regressor_only(estimator: Any) -> bool:
    """For ``available_if``: the uncertainty methods of a regressor, not of a classifier."""
    return not is_classifier(estimator)
