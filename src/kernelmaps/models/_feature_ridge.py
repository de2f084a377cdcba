"""Ridge regression on explicit features, solved in the primal or in the dual.

``FeatureRidge`` maps the rows of ``X`` block by block through a feature map ``z``.  With
at least as many rows as features (``n >= D``) it adds each block to the sufficient
statistics of the fit (:class:`RidgeStatistics`: weight sum, means, centred ``Z^T W Z``
and ``Z^T W y``); the ``n x D`` feature matrix ``Z`` is never held whole, so the memory is
``O(D^2 + block * D)`` whatever ``n`` is.  With fewer rows than features it holds ``Z``
and solves the same problem through the ``n x n`` kernel matrix ``Z Z^T`` (the dual),
memory ``O(n D + n^2)``.  The solves are pure functions of the statistics or of the
kernel matrix (``kernelmaps.models._ridge._solvers``).

Where the rows are.  With scikit-learn's ``array_api_dispatch`` on, an ``X`` of another
library (PyTorch, CuPy, ...) is fitted on its device: the map, the statistics and the
leave-one-out sums there, the ``D x D`` solve on the host from the merged statistics, and
the fitted arrays moved back to ``X``'s device (everything follows ``X``).  With
``device=``, NumPy (or Dask) rows are streamed through a device block by block
(:mod:`kernelmaps._streamed_rows`): the statistics are reduced there and the fitted
attributes are NumPy, as ``X`` is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import RegressorMixin

from .._array_api import check_place, get_namespace, is_numpy, to_namespace, to_numpy
from .._rows import Rows, rowwise
from .._streamed_rows import stream_rows
from ._base import regression_rows
from ._calibration import calibration_size
from ._posterior_functions import FeatureFunctions
from ._ridge._pass import RowWork, checked_weights, row_sample, sample_rows
from ._ridge._posterior import FeaturePosterior, weight_draws
from ._ridge._solvers import loo_values, penalty_terms
from ._streaming_ridge import _StreamingRidgeMixin
from ._uncertainty import ConformalScores, UncertaintyMixin, evidence_noise_variance

__all__ = ["FeatureRidge"]


class FeatureRidge(UncertaintyMixin, RegressorMixin, _StreamingRidgeMixin):
    """Ridge regression on the outputs of a feature map, in the primal or in the dual.

    Fits ``f(x) = w^T z(x) + b`` minimizing
    ``sum_i s_i (y_i - w^T z(x_i) - b)^2 + alpha |w|^2`` (``s_i`` the sample weights, ``b``
    not penalized).  With ``Z_c`` and ``y_c`` centred by their weighted means (not
    centred when ``fit_intercept=False``), ``S = diag(s)``:

    * primal, when ``n >= D``: the normal equations ``(Z_c^T S Z_c + alpha I) w =
      Z_c^T S y_c``.  ``Z^T S Z`` and ``Z^T S y`` are accumulated over row blocks (sized by
      scikit-learn's ``working_memory``), so the ``n x D`` matrix ``Z`` is never held in
      memory; the weighted means come from the same pass.
    * dual, when ``fit`` sees fewer rows than features (``n < D``): the same ``w`` from
      the ``n x n`` kernel matrix ``K = S^{1/2} Z_c Z_c^T S^{1/2}``,

      .. math:: w = Z_c^T S^{1/2} (K + \\alpha I)^{-1} S^{1/2} y_c,

      i.e. ``w = Z_c^T (Z_c Z_c^T + alpha S^{-1})^{-1} y_c`` when every weight is
      positive (the push-through identity; Saunders, Gammerman & Vovk 1998).  The
      penalty is chosen among ``alphas`` by the same GCV or exact leave-one-out errors,
      from the eigendecomposition of ``K``.  The result equals the primal one to
      rounding; ``solver_`` tells which was used.

    Parameters
    ----------
    feature_map : transformer, "passthrough" or None, default=None
        Any scikit-learn transformer (an object with ``fit`` and ``transform``), e.g.
        :class:`~kernelmaps.RandomFourierFeatures`, :class:`~kernelmaps.RandomBinningFeatures`
        (sparse output is handled as such) or :class:`sklearn.kernel_approximation.Nystroem`.
        It is cloned and fitted on the first data seen: all of ``X`` in ``fit``, the first
        block in ``partial_fit``.  Data-independent maps (random Fourier features) use only
        the number of columns; data-dependent ones (Nyström landmarks, binning grids) learn
        from that first data, so give ``partial_fit`` a representative first block.
        ``"passthrough"`` uses ``X`` itself (linear ridge); ``None`` means
        ``RandomFourierFeatures(random_state=random_state)``.
    alpha : float, default=1.0
        Ridge penalty ``alpha > 0`` (used when ``alphas`` is None).
    alphas : array-like of float, default=None
        Candidate penalties.  The one with the smallest leave-one-out (or GCV) error is
        chosen from one eigendecomposition of the centred Gram matrix, without refitting.
    alpha_selection : {"auto", "loo", "gcv"}, default="auto"
        How ``alphas`` are compared.  ``"loo"``: exact leave-one-out mean squared error (one
        more pass over ``X`` in ``fit``).  ``"gcv"``: generalized cross-validation, from the
        accumulated statistics alone.  ``"auto"``: ``"loo"`` in ``fit``, ``"gcv"`` in
        ``partial_fit`` (the rows are gone by then).
    fit_intercept : bool, default=True
        Fit the unpenalized intercept ``b``.
    keep_statistics : bool, default=True
        Keep after ``fit`` what ``partial_fit`` continues from: the statistics
        ``statistics_`` (``D x D``) after a primal fit, a copy of the training rows
        ``X``, ``y`` and ``sample_weight`` after a dual one (the statistics are built from
        them when ``partial_fit`` first needs them).  ``False`` keeps only what
        ``predict`` needs (the map, ``coef_``, ``intercept_``), so that a saved model is
        small; ``partial_fit`` after such a fit raises an error naming this parameter.
        To stream and still save a small model, call ``partial_fit`` with
        ``keep_statistics=True`` and the last block after
        ``set_params(keep_statistics=False)``.
    random_state : int, Generator, SeedSequence, RandomState or None, default=None
        Seed of the default map (``feature_map=None``) only: a given ``feature_map``
        keeps its own ``random_state``, and ``"passthrough"`` draws nothing.
    device : str, device or None, default=None
        A device to stream NumPy (or Dask) rows through: ``"cuda"``, ``"cuda:1"``,
        ``"mps"``, ``"cpu"`` or a ``torch.device`` (PyTorch's; CuPy's for ``"cuda..."``
        where PyTorch is not installed), a CuPy ``Device`` or an
        ``array_api_strict.Device``.  The rows are copied there block by block (a block
        takes at most an eighth of the device's free memory, or of ``working_memory``
        where the library does not report it, and the copy of the next block overlaps the
        work on the current one); each block's features and statistics are computed there
        (the products in the features' dtype, the sums in float64 where the device holds
        it) and merged there, and the ``D x D`` solve runs on the host.  So the device
        holds a few blocks and the ``D x D`` sums whatever ``n`` is, and the fit is
        always primal (exact leave-one-out streams the rows a second time).  A map with an
        array API path (random Fourier features) runs on the device, any other on the
        host with its features copied there.  The fitted attributes are NumPy, as ``X``
        is, and ``predict`` runs on the host.  None: the fit runs where ``X`` is (an
        ``X`` of another library runs on its own device, which ``device``, if given,
        must name).
    verbose : int, default=0
        Reports of the fit, printed on standard output (flushed), each line starting
        with ``[FeatureRidge]``.  0: nothing.  1: the feature map's fit; each pass over
        the rows when it ends (``statistics``, ``leave-one-out``, or ``features`` for
        the dual), with its rows, seconds and rows per second; the solve (``D``, the
        penalty and how it was chosen, seconds).  2: also the rows done within a pass,
        with the percentage and the rate (at most about one line a second, and the
        last).  A Dask fit reports each pass when its computation ends.

    Attributes
    ----------
    feature_map_ : transformer or None
        The fitted feature map (None for ``"passthrough"``).
    coef_ : ndarray of shape (n_features_out,) or (n_targets, n_features_out)
        The weights ``w`` (float64; an array of ``X``'s namespace on its device after a
        fit on the arrays of another library, see the Notes).
    intercept_ : float or ndarray of shape (n_targets,)
    alpha_ : float
        The penalty used (the chosen one with ``alphas``).
    cv_errors_ : ndarray of shape (n_alphas,)
        With ``alphas``: the leave-one-out or GCV error of each candidate (mean over targets);
        ``inf`` where it is undefined (a row fitted exactly, or as many effective
        parameters as rows).  If it is undefined for every candidate, ``fit`` raises.
    alpha_selection_ : str
        With ``alphas``: ``"loo"`` or ``"gcv"``, what was used.
    n_features_out_ : int
        Number of features ``D`` produced by the map.
    noise_variance_ : float or ndarray of shape (n_targets,)
        ``sigma^2``, the noise variance of the Bayesian model whose posterior mean is the
        fit (see the Notes): the evidence's maximum at the fitted penalty,
        ``(sum_i s_i (y_i - f(x_i))^2 + alpha |w|^2) / (S_w - 1)`` (``S_w`` without an
        intercept).  NaN after a fit on one observation.
    solver_ : {"primal", "dual"}
        How the last fit was solved.
    statistics_ : RidgeStatistics or None
        The sufficient statistics of every row seen (weight sum, weighted means, centred
        ``Z^T W Z``, ``Z^T W y`` and ``y^T W y``, float64; held on ``X``'s device after a
        fit on the arrays of another library); ``partial_fit`` updates them,
        and statistics of other rows can be merged in exactly
        (:meth:`RidgeStatistics.merge`).  None after a dual fit (until ``partial_fit``
        builds them from the kept rows) and with ``keep_statistics=False``.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined when ``X`` has string column names.

    Notes
    -----
    Cost of the primal: one pass of the map over ``X`` plus ``O(n D^2)`` for the Gram
    matrix, then ``O(D^3)`` for the Cholesky solve (or the eigendecomposition with
    ``alphas``; exact leave-one-out adds a second pass,
    ``O(n D (D + n_alphas n_targets))``); memory ``O(D^2 + block D)``.  Cost of the dual:
    one pass of the map, ``O(n^2 D)`` for ``K``, ``O(n^3)`` for the Cholesky solve or the
    eigendecomposition (leave-one-out needs no second pass: ``O(n^2 n_targets)`` per
    candidate); memory ``O(n D + n^2)`` (``Z`` is held, sparse when the map's output
    is).  ``fit`` takes the dual when ``n < D``, unless its memory is not available and
    the primal's is; either way the memory needed is checked against what is available
    before the large arrays are allocated (else
    :class:`~kernelmaps.exceptions.InsufficientMemoryError`, with both numbers).
    ``partial_fit`` always updates the primal statistics.  Computations are in float64
    whatever the input dtype, and float32 input gives float32 predictions.

    Numerical limits.  When the penalty is below the rounding level of the Gram (or
    kernel) matrix (``alpha`` near 0 with collinear features or duplicate rows), the
    directions the data do not resolve (eigenvalues under ``dim * eps * l_max``) are
    left out of ``w``: the minimum-norm limit instead of rounding noise divided by
    ``alpha``.  Sums that overflow float64 (features, targets or sample weights near
    ``1e154`` and beyond) raise :class:`~kernelmaps.exceptions.NonFiniteOutputError`
    naming what to rescale, as do non-finite coefficients after the solve and
    non-finite predictions (each block of rows is checked).

    The primal solution equals kernel ridge regression with the approximate kernel
    ``z(x)^T z(y)`` (push-through identity ``(Z^T Z + alpha I)^{-1} Z^T = Z^T (Z Z^T +
    alpha I)^{-1}``).  With random Fourier features, every entry of ``Z Z^T`` is within
    ``eps = 2 sqrt(log(2 N / delta) / D)`` of ``K`` for ``N`` pairs with probability
    ``1 - delta`` (Hoeffding; Rahimi & Recht 2007), and then a prediction of the
    ``n``-sample model is within ``eps sqrt(n) (|c_hat| + n |c| / alpha)`` of exact kernel
    ridge regression's (``c``, ``c_hat`` the dual coefficients), so the two agree as ``D``
    grows.

    Dask arrays.  ``fit`` and ``partial_fit`` accept a :class:`dask.array.Array` ``X``
    (dense or with scipy.sparse chunks), with ``y`` and ``sample_weight`` as Dask arrays
    or in memory (they are aligned on the row chunks of ``X``).  The map is fitted on the
    Dask array (the maps of kernelmaps from its shape and dtype, or from the rows they
    sample; a foreign transformer's ``fit`` receives the Dask array as is, and
    scikit-learn's convert it to numpy), then one task per chunk computes the chunk's
    statistics in row blocks bounded by ``working_memory``, under the caller's settings,
    and they are merged in a fixed pairwise tree: one ``dask.compute`` for the pass,
    another for exact leave-one-out, on whichever scheduler is active.  ``Z`` is never
    held whole nor persisted, so a Dask fit is always primal (the dual would need all of
    ``Z`` in one place); the fitted attributes are numpy and equal those of the numpy
    fit up to the rounding of the regrouped sums.

    Arrays of other libraries.  With ``sklearn.set_config(array_api_dispatch=True)``, an
    ``X`` of PyTorch, CuPy or another array API library is fitted where it lives
    (everything follows ``X``; the map needs an array API path, as
    :class:`~kernelmaps.RandomFourierFeatures` and ``"passthrough"`` have): ``y`` and
    ``sample_weight`` are moved there (the weights checked on the host), the map is fitted
    there, the statistics and the exact leave-one-out sums are accumulated on the device
    block by block (products in ``X``'s dtype, sums in float64 where the device holds it)
    and only the merged ``D x D`` statistics come to the host, where the same solver as
    for NumPy runs.  ``coef_``, an array ``intercept_``, ``cv_errors_`` and
    ``statistics_`` then live on ``X``'s device (float64 where it holds it, as the NumPy
    fit's), and ``predict`` takes arrays of that namespace and device and returns one, in
    ``X``'s dtype; other places are refused (move the model with
    :func:`kernelmaps.move_to`).  A dual fit (``n < D``) copies the features to the host.
    ``partial_fit`` accumulates on the device too.  The result equals the NumPy fit's up
    to the rounding of the device's products.

    Uncertainty.  The fit is the posterior mean of Bayesian linear regression on the
    features, with the prior ``w ~ N(0, (sigma^2 / alpha) I)``, a flat prior on ``b`` and
    noise ``N(0, sigma^2 / s_i)``: the posterior of ``w`` has covariance ``sigma^2 (Z_c^T S
    Z_c + alpha I)^{-1}``, the inverse of the matrix the solve factorizes, so that
    ``predict(X, return_std=True)`` returns ``sqrt(Var f(x) + sigma^2)``, the standard
    deviation of a new observation (as :class:`sklearn.linear_model.BayesianRidge`), with

    .. math:: \\operatorname{Var} f(x) = \\sigma^2 \\big((z(x) - \\bar z)^T (Z_c^T S Z_c +
              \\alpha I)^{-1} (z(x) - \\bar z) + 1 / S_w\\big)

    (``O(D^2)`` per row, from one Cholesky factorization of the statistics made when
    first needed; ``statistics_`` must be kept).  With random Fourier features of a
    kernel ``k`` this is the predictive variance of the Gaussian process of covariance
    ``(sigma^2 / alpha) k`` as ``D`` grows (Rasmussen & Williams 2006, section 2.1).
    ``sample_y`` and ``sample_functions`` draw from the same posterior (weight-space
    draws: each function is ``w_s^T z(x) + b_s``).  ``predict_interval`` returns
    jackknife+ intervals (Barber et al. 2021) from the exact leave-one-out residuals of
    a sample of the training rows (every row up to 1024, else a tenth within [1024,
    4096]), which the fit keeps with their targets (one more read of those rows on Dask)
    and whose residuals are computed from the posterior when first needed
    (``O(m D^2)``); then ``O(D^2 + m D)`` a row.  None after a fit with
    ``sample_weight`` (weighted rows are not exchangeable).

    References
    ----------
    Rahimi, A. and Recht, B. (2007). Random features for large-scale kernel machines. NIPS.
    Barber, R. F., Candès, E. J., Ramdas, A. and Tibshirani, R. J. (2021). Predictive
    inference with the jackknife+. Annals of Statistics 49(1).
    Rasmussen, C. E. and Williams, C. K. I. (2006). Gaussian Processes for Machine
    Learning. MIT Press.
    Golub, G. H., Heath, M. and Wahba, G. (1979). Generalized cross-validation as a method
    for choosing a good ridge parameter. Technometrics 21(2).
    Allen, D. M. (1974). The relationship between variable selection and data augmentation
    and a method for prediction. Technometrics 16(1).
    Saunders, C., Gammerman, A. and Vovk, V. (1998). Ridge regression learning algorithm
    in dual variables. ICML.

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from kernelmaps import FeatureRidge, RandomFourierFeatures
    >>> X, y = load_diabetes(return_X_y=True)
    >>> rff = RandomFourierFeatures(gamma=0.5, n_components=200, random_state=0)
    >>> model = FeatureRidge(rff, alphas=[1e-3, 1e-2, 1e-1, 1.0]).fit(X, y)
    >>> model.predict(X[:3]).shape
    (3,)
    """

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> FeatureRidge:
        """Fit the feature map on ``X``, then the ridge weights (primal or dual).

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features)
            A Dask array is fitted chunk by chunk, an array of another library on its
            device (see the Notes of the class); with ``device``, NumPy or Dask rows are
            streamed through that device.
        y : array-like or dask array of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : array-like or dask array of shape (n_samples,), default=None

        Returns
        -------
        self : FeatureRidge
            The fitted model.
        """
        self._validate_params()
        rows, y = regression_rows(self, X, y, reset=True)
        rows = stream_rows(rows, self.device)
        head = self._start(rows, 1 if y.ndim == 1 else y.shape[1], y.ndim == 1)
        self._exchangeable = sample_weight is None
        self._fit_rows(rows, rows.align(y), checked_weights(rows, sample_weight), head)
        return self

    def partial_fit(self, X: Any, y: Any, sample_weight: Any = None) -> FeatureRidge:
        """Add a block of rows to the accumulated statistics and re-solve (primal).

        The first call fits the feature map on this block.  The result after several calls
        equals ``fit`` on the rows concatenated (for a map that does not depend on the
        data, or the same fitted map), up to rounding.  After ``fit``, the rows are added
        to those of the fit: after a dual fit, the statistics of the fit's rows are first
        built from the kept rows (``O(n D^2)``, once); after a fit with
        ``keep_statistics=False`` a ``ValueError`` says so.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_rows, n_features)
            The new block of rows; a Dask array has its statistics gathered chunk by
            chunk in one compute and merged into ``statistics_``.  After the first call,
            ``X`` must be where the model was fitted (NumPy, or the same namespace and
            device), else a ``ValueError`` says so.
        y : array-like or dask array of shape (n_rows,) or (n_rows, n_targets)
        sample_weight : array-like or dask array of shape (n_rows,), default=None

        Returns
        -------
        self : FeatureRidge
            The model updated with the block.
        """
        first = not self._started()
        if first:
            self._validate_params()
        else:
            check_place(self, X, "partial_fit")
        rows, y = regression_rows(self, X, y, reset=first)
        rows = stream_rows(rows, self.device)
        n_targets = 1 if y.ndim == 1 else int(y.shape[1])
        head = None
        if first:
            head = self._start(rows, n_targets, y.ndim == 1)
        else:
            self._check_same_targets(n_targets, y.ndim == 1)
        weights = checked_weights(rows, sample_weight)
        exchangeable = first or getattr(self, "_exchangeable", True)
        self._exchangeable = exchangeable and sample_weight is None
        self._partial_fit_rows(rows, rows.align(y), weights, first, head)
        return self

    @rowwise
    def _mean(self, X: Any) -> np.ndarray:
        """``w^T z(x) + b``, mapping ``X`` in row blocks (``X`` validated once, not again
        by the map); float32 input gives float32 predictions, an array of ``X``'s
        namespace on its device for a model fitted there."""
        return self._decision(X)

    # -- the posterior ------------------------------------------------------------------

    def _store(self, solution: Any, solver: str) -> None:
        super()._store(solution, solver)
        self.__dict__.pop("_posterior_state", None)
        noise = evidence_noise_variance(
            solution.objective, solution.weight_sum - int(self.fit_intercept)
        )
        self.noise_variance_ = float(noise[0]) if self._y_1d else noise

    def _calibrate_primal(
        self, rows: Rows, work: RowWork | None, targets: tuple[Any, Any], solution: Any, stats: Any
    ) -> None:
        """Keep the rows scored for conformal intervals (:meth:`_calibrate`), read in one
        pass; their leave-one-out residuals are computed when first needed."""
        work = work if work is not None else self._row_work(rows)
        self._calibrate(rows.n_rows, lambda index: (None, *row_sample(rows, work, *targets, index)))

    def _calibrate(
        self, n_rows: int, sample: Callable[[np.ndarray], tuple[np.ndarray, ...]]
    ) -> None:
        """Keep the rows scored for conformal intervals: every row up to 1024, else a
        tenth of them within [1024, 4096] (a fixed uniform sample), with their targets;
        none after a fit with sample weights (the rows are not exchangeable)."""
        self._scored = None
        if not getattr(self, "_exchangeable", True):
            return
        index = sample_rows(n_rows, calibration_size(n_rows))
        _, targets, weights, rows = sample(index)
        if np.all(weights == 1.0):
            self._scored = (index, rows, targets)

    def _scores(self) -> ConformalScores | None:
        """The jackknife+ scores: the leave-one-out residuals of the scored rows under
        the fitted model (:func:`loo_values` from the posterior's terms, ``O(m D^2)``),
        computed when first needed and kept with the posterior."""
        scored = getattr(self, "_scored", None)
        if scored is None:
            return None
        posterior = self._posterior()
        if posterior.scores is None:
            index, rows, targets = scored
            held = self._placed(rows)
            Z = self._features(held)
            ones = np.ones(targets.shape[0])
            terms = posterior.terms_for(Z)
            xp, device = get_namespace(Z)
            Y, w = targets, ones
            if not is_numpy(xp):
                Y, w = (to_namespace(a, xp, device) for a in (targets, ones))
            values = np.asarray(to_numpy(loo_values(terms, Z, Y, w)), dtype=np.float64)
            posterior.scores = ConformalScores(rows, targets - values, index=index, targets=targets)
        return posterior.scores

    def _placed(self, rows: Any) -> Any:
        """Host rows moved where the model lives (as ``X`` of its fit)."""
        coef = self.coef_
        xp, device = get_namespace(coef)
        if is_numpy(xp) or sp.issparse(rows):
            return rows
        return to_namespace(rows, xp, device)

    def _posterior(self) -> FeaturePosterior:
        """The weight posterior of the fitted penalty, formed from ``statistics_`` (one
        Cholesky factorization, ``D^3 / 3``) when first needed and kept."""
        state = self.__dict__.get("_posterior_state")
        if state is not None:
            return state
        if getattr(self, "statistics_", None) is None and self._training_rows is None:
            raise ValueError(
                f"{type(self).__name__} was fitted with keep_statistics=False, which drops "
                "the statistics its posterior is formed from; refit with "
                "keep_statistics=True (the default) for return_std, return_cov, "
                "predict_interval, sample_y and sample_functions."
            )
        self._resume_statistics()
        stats = self.statistics_
        assert stats is not None  # built from the kept rows after a dual fit
        terms = penalty_terms(stats.to_host(), self.alpha_, self.fit_intercept)
        state = FeaturePosterior(terms, self._features, self._block_rows)
        self._posterior_state = state
        return state

    def _held_out(self, X: Any) -> Callable[[Any], Any]:
        """Jackknife+: ``mu_{-j}(x) = mu(x) - s(x, x_j) r_j`` for the scored rows ``x_j``,
        with ``s = R(x) R(x_j)^T`` (:class:`FeaturePosterior`) and ``r_j`` the
        leave-one-out residual (the Sherman-Morrison update of the fit without row
        ``j``)."""
        posterior, scores = self._posterior(), self._scores()
        assert scores is not None  # checked by predict_interval
        xp, device = get_namespace(X)
        rows = (
            scores.rows
            if sp.issparse(scores.rows) or is_numpy(xp)
            else (to_namespace(scores.rows, xp, device, dtype=X.dtype))
        )
        scored = posterior.root(rows)
        residuals = to_namespace(scores.residuals, xp, device, dtype=scored.dtype)
        coef = self.coef_ if self.coef_.ndim == 2 else self.coef_[None, :]
        mean = self._predictor(coef, X)

        def block(Xb: Any) -> Any:
            smoother = posterior.root(Xb) @ scored.T
            mu = xp.astype(mean(Xb), smoother.dtype, copy=False)
            return mu[:, None, :] - smoother[:, :, None] * residuals[None, :, :]

        return block

    def _sample_functions(self, n_samples: int, rng: np.random.Generator) -> FeatureFunctions:
        """Weight-space draws (:func:`weight_draws`)."""
        terms = self._posterior().terms
        coef = np.atleast_2d(np.asarray(to_numpy(self.coef_), dtype=np.float64))
        intercept = np.atleast_1d(np.asarray(to_numpy(self.intercept_), dtype=np.float64))
        coefs, intercepts = weight_draws(terms, coef, intercept, self._noise(), n_samples, rng)
        return FeatureFunctions(
            self.feature_map_, coefs, intercepts, self.n_features_in_, self._y_1d
        )
