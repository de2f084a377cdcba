"""Nyström kernel ridge regression solved by FALKON's preconditioned conjugate gradient."""

from __future__ import annotations

import functools
import time
import warnings
from collections.abc import Callable
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._array_api import get_namespace, host_dtype, is_numpy, to_numpy
from .._estimator_repr import CompactArrayReprMixin
from .._memory import available_memory, check_memory
from .._progress import Progress
from .._random import check_random_state
from .._row_blocks import row_blocks
from .._rows import Rows, pick_rows, rowwise, stacked_pairs
from .._streamed_rows import stream_rows
from .._validation import StrictInterval
from ..kernels import (
    Gaussian,
    Kernel,
    LandmarkKernel,
    kernel_parameter_constraints,
    resolve_estimator_kernel,
)
from ..sampling import LANDMARK_METHODS, resolve_landmarks
from ._base import (
    KernelLike,
    KernelRegressorMixin,
    as_row_sliceable,
    predict_in_blocks,
    regression_rows,
)
from ._calibration import calibration_size
from ._checks import check_solution
from ._device import Placement, array_kernel_matrix
from ._falkon._solver import (
    FalkonPreconditioner,
    FalkonSolver,
    RowsMatvec,
    landmark_gram,
)
from ._kernel_posterior import DTCPosterior, draw_functions, gram_factor, held_out_block
from ._ridge._pass import host_rows, sample_rows
from ._uncertainty import ConformalScores, UncertaintyMixin, evidence_noise_variance

__all__ = ["NystroemKernelRidge"]


#: ``cache_size="auto"``'s budget in MiB on a device, or where the free memory is unknown.
_DEFAULT_CACHE_MIB = 2048

#: Largest row block of a kernel evaluation (fewer rows if ``working_memory`` demands).
_MAX_BLOCK_ROWS = 2048


def _work_dtype(kernel: Any, X: Any) -> np.dtype:
    """float32 for dense float32 input (an array or ``Rows``) and
    the Gaussian kernel (evaluated in float32 by :class:`LandmarkKernel`), float64
    otherwise; on a device, the dtype of the rows whatever the kernel."""
    if Placement.of(X).on_device:
        return host_dtype(X.dtype)
    sparse = X.sparse if isinstance(getattr(X, "sparse", None), bool) else sp.issparse(X)
    if isinstance(kernel, Gaussian) and getattr(X, "dtype", None) == np.float32 and not sparse:
        return np.dtype(np.float32)
    return np.dtype(np.float64)


def _kernel_against(kernel: Any, L: Any, Xb: Any) -> Any:
    return array_kernel_matrix(kernel, Xb, L)


def _landmark_kernel(kernel: Any, L: Any, dtype: np.dtype) -> Any:
    """``X_block -> k(X_block, L)`` in ``dtype`` (fused Gaussian for kernel objects);
    picklable whenever the kernel is (it is sent to the Dask workers).  Landmarks on a
    device (in ``dtype``) give the kernel's evaluation there."""
    if isinstance(kernel, Kernel) and is_numpy(get_namespace(L)[0]):
        return LandmarkKernel(kernel, L, dtype)
    return functools.partial(_kernel_against, kernel, L)


def _cache_bytes(cache_size: float | str, on_device: bool) -> float:
    """Bytes of the ``K_nm`` cache: ``cache_size`` MiB, or for ``"auto"`` half of the
    memory available now on the host (:data:`_DEFAULT_CACHE_MIB` on a device, or where
    the available memory is unknown)."""
    if cache_size != "auto":
        return float(cache_size) * 2**20
    available = None if on_device else available_memory()
    return _DEFAULT_CACHE_MIB * 2**20 if available is None else 0.5 * available


def _block_bytes_per_row(m: int, n_features: int, n_targets: int) -> float:
    """Bytes of the temporaries of one row of a ``K_nm`` block (the block, its products,
    the row itself and its targets), for :func:`row_blocks`."""
    return 8.0 * (3 * m + n_features + n_targets)


class NystroemKernelRidge(
    UncertaintyMixin, KernelRegressorMixin, RegressorMixin, CompactArrayReprMixin, BaseEstimator
):
    """Nyström kernel ridge regression, solved by preconditioned conjugate gradient (FALKON).

    The model ``f(x) = sum_j c_j k(x, l_j)`` lives on ``m`` landmarks ``l_j``; ``c`` solves
    the Nyström normal equations

    .. math:: (K_{nm}^T K_{nm} + \\alpha K_{mm})\\, c = K_{nm}^T y,

    the minimizer of ``|y - K_nm c|^2 + alpha c^T K_mm c``.  With every training point a
    landmark this is exact kernel ridge regression, ``(K + alpha I) c = y``.

    Parameters
    ----------
    kernel : str, Kernel or callable, default="rbf"
        As in :class:`KernelRidge`.
    gamma : float, default=None
        ``> 0``; ``None`` means the kernel's default (``1 / n_features`` for the kernels
        that take a ``gamma``).
    degree : int, default=None
        Integer degree ``>= 1`` of the polynomial kernels (``None``: the kernel's default).
    coef0 : float, default=None
        Constant term ``>= 0`` of the polynomial kernel (``None``: the kernel's default).
    kernel_params : dict, default=None
    n_components : int, default=100
        Number of landmarks ``m`` (at most ``n_samples``; ignored for array landmarks).
    landmarks : {"uniform", "kmeans", "leverage", "rpcholesky"} or array-like, default="uniform"
        How the landmarks are chosen (see :func:`kernelmaps.sampling.resolve_landmarks`:
        uniform rows, k-means centres, rows drawn by approximate ridge leverage scores,
        or rows chosen by randomly pivoted Cholesky), or the landmarks themselves, shape
        (m, n_features).  Repeated rows are kept once.
    alpha : float, default=1.0
        Ridge penalty ``alpha > 0`` on the scale of :class:`KernelRidge`'s (FALKON's
        ``lambda`` is ``alpha / n``).
    max_iter : int, default=100
        Largest number of conjugate-gradient iterations.
    tol : float, default=1e-6
        Stop when the relative residual of the preconditioned system is ``<= tol``.
    cache_size : float or "auto", default="auto"
        Memory budget in MiB for keeping ``K_nm`` between conjugate-gradient iterations;
        ``"auto"`` is half of the memory available when ``fit`` starts (2048 MiB for rows
        on a device, or where the available memory is unknown): ``K_nm`` takes as much
        memory as scikit-learn's ``Nystroem`` features, and when it is all kept each
        iteration reads it once instead of evaluating the kernel again.
        Row blocks of ``K_nm`` (``m`` values of the working dtype per row) are kept while
        they fit in the budget, the others are recomputed at every iteration; ``0``
        recomputes every block (memory ``O(m^2 + block m)`` only).  The solution is the
        same either way.  For a Dask array ``X`` this is the total over the cluster:
        the blocks of the first ``cache_size / (m * itemsize)`` rows are persisted on
        the workers that hold those rows, and with a ``distributed`` client at most
        half of the workers' total ``memory_limit``, less the size of ``X``, is used
        (``"auto"``: that share, within half of the memory available here).
        For an array of another library the cache is in its device's memory; with
        ``device`` (streamed rows) there is no cache: every block is formed at every
        iteration.
    random_state : int, Generator, SeedSequence, RandomState or None, default=None
        Source of randomness for the landmark selection.
    device : str or device object, default=None
        Fit NumPy (or SciPy, or Dask) rows on this device: ``"cuda"``, ``"cuda:1"``,
        ``"mps"``, ``"cpu"`` or a ``torch.device`` (PyTorch), a CuPy ``Device``, an
        ``array_api_strict.Device`` (see ``kernelmaps._array_api.resolve_device``).
        The rows are streamed through the device block by block at every
        conjugate-gradient iteration (one pass each): a block holds at most an eighth of
        the device's free memory (scikit-learn's ``working_memory`` where the library
        does not report it), and the next block's copy overlaps the work on the current
        one, so the device's memory is a few blocks and the ``m x m`` matrices whatever
        ``n`` is.  The landmarks are chosen from the host rows (as without ``device``);
        ``K_mm`` and the preconditioner are formed once, on the device where it holds
        float64 (on the host otherwise); the ``K_nm`` blocks are formed on the device in
        the rows' dtype.  ``cache_size`` is not used (nothing is kept on the device
        between iterations).  The fitted attributes are NumPy arrays, equal to the
        in-memory fit's to rounding.  None (default) fits where the rows are; arrays of
        another library with array API dispatch on are fitted on their own device and
        ``device`` is ignored.
    posterior : bool, default=False
        Also form ``K_nm^T K_nm`` in the fit (one more pass over the rows, ``O(n m^2)``,
        through the cached ``K_nm`` blocks where they are kept), for the posterior of the
        model: ``predict(X, return_std=True)``, ``return_cov``, :meth:`predict_interval`,
        :meth:`sample_y` and :meth:`sample_functions` (see Notes).  Without it those raise
        a ``ValueError`` that names this parameter.
    verbose : int, default=0
        Reports of the fit, printed on standard output (flushed), each line starting
        with ``[NystroemKernelRidge]``.  0: nothing.  1: the landmark selection and the
        preconditioner (seconds); the first pass over the rows (``K_nm products``,
        forming ``K_nm^T y`` and the cache: rows, seconds, rows per second); the
        conjugate-gradient iterations (each one pass over the rows: the relative
        residual and the seconds since the solve began), at most about one line a
        second and always the last; why it stopped (converged, ``max_iter``, or no
        progress left in rounding).  2: every iteration, and the rows done within every
        pass with the percentage and the rate (at most about one line a second, and
        the last).  A Dask fit reports each pass when its computation ends.

    Attributes
    ----------
    kernel_ : Kernel or callable
    landmarks_ : ndarray of shape (m, n_features)
        In ``X``'s dtype.
    landmark_indices_ : ndarray of int or None
        Rows of ``X`` chosen as landmarks (None for k-means centres or given landmarks).
    dual_coef_ : ndarray of shape (m,) or (m, n_targets)
        The coefficients ``c`` (float64; float32 on a device without float64).
    n_iter_ : int
        Conjugate-gradient iterations performed (one pass over the data each).
    residual_ : float
        Final relative residual of the preconditioned system (largest over targets).
    converged_ : bool
    n_cached_rows_ : int
        Rows of ``K_nm`` kept in memory during the solve (``n_samples`` when all fit in
        ``cache_size``); for a Dask array, the rows whose blocks were persisted on the
        workers; 0 with ``device`` (streamed rows).
    noise_variance_ : float or ndarray of shape (n_targets,) or None
        With ``posterior=True``, the noise variance ``sigma^2`` at the evidence's maximum
        (see Notes); None otherwise.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined when ``X`` has string column names.

    Notes
    -----
    FALKON (Rudi, Carratino & Rosasco 2017).  With ``K_mm = T^T T`` (Cholesky, with a tiny
    jitter if ``K_mm`` is singular) and ``(n/m) T T^T + alpha I = A^T A``, the matrix
    ``T^T A^T A T = (n/m) K_mm^2 + alpha K_mm`` approximates the system matrix ``H`` (since
    ``K_nm^T K_nm ~ (n/m) K_mm^2`` for uniform landmarks), so conjugate gradient runs on the
    well-conditioned ``A^{-T} T^{-T} H T^{-1} A^{-1}`` with ``c = T^{-1} A^{-1} beta``; the
    number of iterations needed is ``O(log(1/tol))`` for ``m`` of the order of the
    statistical dimension.  Each iteration computes ``K_nm^T (K_nm v)`` block by block of
    rows: blocks within ``cache_size`` are computed once (in the same pass as
    ``K_nm^T y``) and kept, the others are recomputed.  Jitter only changes the
    preconditioner, never the solution.  The pieces are objects of
    ``kernelmaps.models._falkon._solver``: ``FalkonPreconditioner`` (``T``, ``A``),
    ``NystroemMatvec`` (the ``K_nm`` blocks and ``K_nm^T K_nm V``) and ``FalkonSolver``
    (their composition for :func:`~kernelmaps.models.conjugate_gradient`).

    Cost: ``O(n m d)`` kernel evaluations once for the cached rows and per iteration for
    the others, plus ``O(n m t)`` per iteration (``t`` targets) and ``O(m^3)`` for the
    factorizations; memory ``O(m^2 + block m)`` plus the cache, with the block bounded by
    scikit-learn's ``working_memory`` and 2048 rows.  ``K_mm``, the preconditioner and
    the conjugate-gradient vectors are float64; with dense float32 input and a Gaussian
    kernel the ``K_nm`` blocks and their products are float32 (sums over blocks in
    float64; the kernel is evaluated in float32 directly, see
    :class:`~kernelmaps.kernels._landmark_block.LandmarkKernel`), which is about three
    times faster and halves the cache, but limits the attainable relative residual to
    about ``1e-5``: use ``tol >= 1e-5`` there.
    float32 input gives float32 predictions.  If the tolerance is not reached within
    ``max_iter`` iterations, a :class:`~sklearn.exceptions.ConvergenceWarning` gives the
    residual.  The memory of the ``m x m`` matrices is checked against what is available
    before they are formed (:class:`~kernelmaps.exceptions.InsufficientMemoryError`
    otherwise); a kernel matrix, right-hand side ``K_nm^T y``, coefficients or
    predictions holding inf or NaN (inputs or targets near the limits of float64) raise
    :class:`~kernelmaps.exceptions.NonFiniteOutputError` naming what to rescale.

    On a Dask array ``X`` (and ``y``, Dask or numpy) the rows stay on the workers: they
    are persisted there, one object per row chunk holding its validated rows, the
    landmark kernel (sent once per worker for the whole fit) and its cached ``K_nm``
    blocks (within ``cache_size`` over the whole cluster), built in one pass over the
    data that also forms ``K_nm^T y``.  Each CG iteration is then one computation:
    ``v`` is sent once, every chunk adds its ``K_b^T (K_b v)`` row block by row block
    (on a worker holding the chunk), and the ``m x t`` partial products are summed
    pairwise in chunk order (a fixed tree).  The landmarks (drawn on the client from
    global row indices), ``K_mm``, the preconditioner and the CG stay on the client; the
    fitted attributes are numpy, equal to the numpy fit's to rounding (the sums over
    rows are grouped by chunk), and ``predict`` on a Dask array is lazy.  Any Dask
    scheduler works: the local ones, or a ``distributed.Client``.

    With scikit-learn's ``array_api_dispatch`` on, an array of another library (a
    PyTorch tensor, a CuPy array) is fitted on its device: the ``K_nm`` blocks and their
    products there, in ``X``'s dtype (float32 kept, whatever the kernel; a user callable
    kernel is evaluated on the host and its blocks moved), ``K_mm``, the preconditioner's
    factorizations and the sums over blocks there in float64 where the device holds it
    (on the host otherwise), and the conjugate gradient on the host on the ``m x t``
    iterates (two copies of ``m x t`` values per iteration).  The fitted arrays live on
    that device and ``predict`` runs there.  With ``device``, NumPy rows are streamed to
    a device (see ``device``).

    Posterior (``posterior=True``).  The model is the posterior mean of ``f ~ GP(0,
    (sigma^2 / alpha) k)`` with noise ``N(0, sigma^2)`` under the deterministic training
    conditional (DTC: the training values replaced by their projection on the landmarks,
    Seeger, Williams & Lawrence 2003).  Its latent variance, with ``k_x = k(L, x)`` and
    ``H = K_nm^T K_nm + alpha K_mm`` (factorized once, ``O(m^3)``),

    .. math:: \\operatorname{Var} f(x) = \\sigma^2 \\big(\\tfrac{1}{\\alpha}(k(x, x) - k_x^T
              K_{mm}^{-1} k_x) + k_x^T H^{-1} k_x\\big) \\ge 0,

    is never below the subset of regressors' (the second term alone, which vanishes far
    from the landmarks: it is overconfident there) and tends to the prior's ``sigma^2
    k(x, x) / alpha`` far from them; with every training row a landmark it is the exact
    Gaussian process posterior of :class:`KernelRidge`.  With fewer landmarks it is
    neither above nor below the exact posterior's variance (same ``alpha`` and
    ``sigma^2``): the likelihood sees only the projection of ``f`` on the landmarks, as
    if the rest were not there, which understates the variance of that projection (the
    data look more informative than they are; FITC would add ``diag(K - Q)`` to the
    noise), while the rest of the prior is not reduced by the data at all, which
    overstates it near training rows far from the landmarks.  Its mean is the Nyström
    mean.  The noise variance maximizes the DTC evidence, ``y ~ N(0,
    sigma^2 (Q_nn / alpha + I))`` with ``Q_nn = K_nm K_mm^{-1} K_mn``:

    .. math:: \\hat\\sigma^2 = \\frac{\\alpha\\, y^T (Q_{nn} + \\alpha I)^{-1} y}{n}
              = \\frac{|y - K_{nm} c|^2 + \\alpha c^T K_{mm} c}{n},

    the objective at its minimum (by the matrix inversion lemma), computed as ``(y^T y -
    2 c^T K_nm^T y + c^T H c) / n``.  Jackknife+ (:meth:`predict_interval`) uses the exact
    leave-one-out residuals ``r_j = e_j / (1 - k_j^T H^{-1} k_j)`` of a sample of the rows
    (the landmarks fixed), read in one more pass; the posterior functions are pathwise
    draws at the landmarks (Wilson et al. 2020).

    References
    ----------
    Rudi, A., Carratino, L. and Rosasco, L. (2017). FALKON: An optimal large scale kernel
    method. NIPS.
    Williams, C. K. I. and Seeger, M. (2001). Using the Nyström method to speed up kernel
    machines. NIPS.
    Seeger, M., Williams, C. K. I. and Lawrence, N. D. (2003). Fast forward selection to
    speed up sparse Gaussian process regression. AISTATS.
    Quiñonero-Candela, J. and Rasmussen, C. E. (2005). A unifying view of sparse
    approximate Gaussian process regression. JMLR 6.
    Wilson, J. T. et al. (2020). Efficiently sampling functions from Gaussian process
    posteriors. ICML.

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from kernelmaps import NystroemKernelRidge
    >>> X, y = load_diabetes(return_X_y=True)
    >>> model = NystroemKernelRidge(gamma=0.5, n_components=100, alpha=0.1, random_state=0)
    >>> model.fit(X, y - y.mean()).predict(X[:2]).shape
    (2,)
    """

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **kernel_parameter_constraints(named=("gamma", "degree", "coef0"), callable_ok=True),
        "n_components": [StrictInterval(Integral, 1, None, closed="left")],
        "landmarks": [StrOptions(set(LANDMARK_METHODS)), "array-like"],
        "alpha": [StrictInterval(Real, 0.0, None, closed="neither")],
        "max_iter": [StrictInterval(Integral, 1, None, closed="left")],
        "tol": [StrictInterval(Real, 0.0, None, closed="neither")],
        "cache_size": [StrictInterval(Real, 0.0, None, closed="left"), StrOptions({"auto"})],
        "random_state": ["random_state", np.random.Generator, np.random.SeedSequence],
        # a device's name or a library's device object, resolved by resolve_device at fit
        "device": [None, str, object],
        "posterior": ["boolean"],
        "verbose": [Interval(Integral, 0, None, closed="left"), "boolean"],
    }

    def __init__(
        self,
        kernel: KernelLike = "rbf",
        *,
        gamma: float | None = None,
        degree: int | None = None,
        coef0: float | None = None,
        kernel_params: dict[str, Any] | None = None,
        n_components: int = 100,
        landmarks: Any = "uniform",
        alpha: float = 1.0,
        max_iter: int = 100,
        tol: float = 1e-6,
        cache_size: float | str = "auto",
        random_state: Any = None,
        device: Any = None,
        posterior: bool = False,
        verbose: int = 0,
    ) -> None:
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.n_components = n_components
        self.landmarks = landmarks
        self.alpha = alpha
        self.max_iter = max_iter
        self.tol = tol
        self.cache_size = cache_size
        self.random_state = random_state
        self.device = device
        self.posterior = posterior
        self.verbose = verbose

    # -- pieces -------------------------------------------------------------------------

    def _select_landmarks(self, rows: Rows, kernel: Any) -> tuple[np.ndarray, np.ndarray | None]:
        """The landmarks, repeated rows dropped (they make ``K_mm`` singular); those of
        streamed rows are chosen from the host rows, as without ``device``."""
        return resolve_landmarks(
            rows.held,
            self.landmarks,
            self.n_components,
            kernel=kernel,
            rng=check_random_state(self.random_state),
            unique=True,
            stacklevel=3,
        )

    def _block_rows(self, X: Any, m: int, n_targets: int) -> Any:
        return row_blocks(
            X.shape[0], _block_bytes_per_row(m, X.shape[1], n_targets), max_rows=_MAX_BLOCK_ROWS
        )

    def _solver(
        self, rows: Rows, kernel: Any, L: Any, n_targets: int, progress: Progress | None = None
    ) -> FalkonSolver:
        """FALKON's solver on the rows: preconditioner from ``K_mm`` (here, or on the
        rows' device with landmarks ``L`` there), ``K_nm`` blocks cached within
        ``cache_size`` (and within the share of a cluster's memory) where the rows are
        held; reporting to ``progress`` (default: at the estimator's ``verbose``)."""
        n, m = rows.n_rows, L.shape[0]
        progress = progress or Progress(type(self).__name__, self.verbose)
        check_memory(
            8.0 * 5 * m * m,
            f"{type(self).__name__}'s {m} x {m} landmark kernel matrix and preconditioner",
            "lower n_components (the number of landmarks)",
        )
        start = time.perf_counter()
        K_mm = landmark_gram(kernel, L)
        preconditioner = FalkonPreconditioner(K_mm, n, self.alpha)
        if progress.enabled:
            seconds = time.perf_counter() - start
            progress.log(f"preconditioner: K_mm ({m} x {m}) and its factors in {seconds:.2f} s")
        work = _work_dtype(kernel, rows)
        # at most every row (a huge cache_size means all of them); Python floats do not
        # overflow to a warning
        budget = _cache_bytes(self.cache_size, Placement.of(rows).on_device)
        cache_rows = int(min(budget / (m * work.itemsize), n))
        room = rows.cache_budget()
        if room is not None:
            cache_rows = min(cache_rows, room // (m * work.itemsize))
        matvec = RowsMatvec(
            rows,
            _landmark_kernel(kernel, L, work),
            work,
            cache_rows,
            (_block_bytes_per_row(m, rows.n_features, n_targets), _MAX_BLOCK_ROWS),
            type(self).__name__,
            progress,
        )
        return FalkonSolver(
            K_mm, self.alpha, preconditioner, matvec, name=type(self).__name__, progress=progress
        )

    # -- fit / predict ------------------------------------------------------------------

    def _fit_targets(
        self, rows: Rows, y: Any, after: Callable[[FalkonSolver], None] | None = None
    ) -> Any:
        """Choose the landmarks and solve the Nyström system for the targets ``y`` (1-D
        or 2-D, not yet aligned on ``rows``); sets every fitted attribute but
        ``dual_coef_`` and returns ``c`` of shape (m, t), where ``X`` is.  ``after`` is
        called with the solver after the solve, while its ``K_nm`` blocks are kept."""
        # the blocks are formed where the rows are; the fitted arrays go where X is
        where, home = Placement.of(rows), Placement(*rows.fitted_place())
        kernel = resolve_estimator_kernel(self, rows.n_features)
        progress = Progress(type(self).__name__, self.verbose)
        start = time.perf_counter()
        L, idx = self._select_landmarks(rows, kernel)
        if progress.enabled:
            how = self.landmarks if isinstance(self.landmarks, str) else "given"
            seconds = time.perf_counter() - start
            progress.log(f"landmarks: m = {L.shape[0]:,} ({how}) in {seconds:.2f} s")
        n_targets = 1 if y.ndim == 1 else int(y.shape[1])
        solver = self._solver(rows, kernel, where.data(L), n_targets, progress)
        try:
            coef, result = solver.solve(rows.align(y), tol=self.tol, max_iter=self.max_iter)
            if after is not None:
                after(solver)
        finally:
            solver.matvec.release()
        check_solution(type(self).__name__, float(self.alpha), to_numpy(coef))
        self.kernel_ = kernel
        self.landmarks_ = home.data(L)
        self.landmark_indices_ = None if idx is None else home.data(idx)
        self.n_iter_ = result.n_iter
        self.residual_ = float(np.max(result.residual))
        self.converged_ = result.converged
        self.n_cached_rows_ = solver.matvec.n_cached_rows
        if not result.converged:
            warnings.warn(
                f"{type(self).__name__} did not converge: relative residual "
                f"{self.residual_:.3g} > tol={self.tol:g} after max_iter={self.max_iter} "
                "conjugate-gradient iterations. Increase max_iter, raise alpha or tol, or use "
                "more landmarks.",
                ConvergenceWarning,
                stacklevel=3,
            )
        return home.fitted(coef)

    def fit(self, X: Any, y: Any) -> NystroemKernelRidge:
        """Choose the landmarks and solve the Nyström system by preconditioned CG.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask.array.Array} of shape (n_samples, n_features)
            Training inputs; the landmarks are drawn from them (unless given).  A Dask
            array stays on the workers (see Notes); an array of another library (array
            API dispatch on) is fitted on its device, and NumPy rows are streamed to
            ``device`` when it is set.
        y : array-like or dask.array.Array of shape (n_samples,) or (n_samples, n_targets)
            Targets, solved for together (one CG run with one column per target); moved
            to ``X``'s namespace and device for an array of another library.

        Returns
        -------
        self : NystroemKernelRidge
            The fitted model.
        """
        self._validate_params()
        rows, y = regression_rows(self, X, y, reset=True)
        rows = stream_rows(rows, self.device)
        kept: dict[str, Any] = {}

        def keep(solver: FalkonSolver) -> None:  # H while the K_nm blocks are cached
            kept.update(H=_system_matrix(solver), rhs=solver.rhs, T=solver.preconditioner.T)

        coef = self._fit_targets(rows, y, keep if self.posterior else None)
        self.dual_coef_ = coef[:, 0] if y.ndim == 1 else coef
        self.__dict__.pop("_posterior_state", None)
        self._posterior_factors: tuple[Any, Any] | None = None
        self._conformal: ConformalScores | None = None
        self.noise_variance_: Any = None
        if self.posterior:
            self._fit_posterior(rows, rows.align(y), **kept)
        return self

    def _fit_posterior(self, rows: Rows, y: Any, H: Any, rhs: Any, T: Any) -> None:
        """The factors of the posterior (``T`` of ``K_mm``, ``R`` of ``H``), the noise
        variance at the evidence's maximum and the leave-one-out residuals of a sample of
        the rows (one pass that reads them and their targets)."""
        R = gram_factor(H)
        self._posterior_factors = (T, R)
        n = rows.n_rows
        index = sample_rows(n, calibration_size(n))
        squares, X_scored, y_scored = rows.map_reduce(
            functools.partial(_posterior_part, index=index), _merge_parts, y
        )
        coef = to_numpy(self.dual_coef_).reshape(H.shape[0], -1)
        H_host, rhs_host = to_numpy(H), to_numpy(rhs).reshape(coef.shape)
        with np.errstate(over="ignore", invalid="ignore"):  # inf for y near float64's limit
            fit = np.sum(coef * (H_host @ coef - 2.0 * rhs_host), axis=0)
            noise = evidence_noise_variance(squares + fit, n)
            residuals = self._posterior().loo_residuals(X_scored, y_scored, coef)
        home = Placement(*rows.fitted_place())
        self.noise_variance_ = float(noise[0]) if self.dual_coef_.ndim == 1 else home.fitted(noise)
        self._conformal = ConformalScores(X_scored, residuals)

    @rowwise
    def _mean(self, X: Any) -> np.ndarray:
        """``f(x) = sum_j c_j k(x, l_j)`` over the ``m`` landmarks, in row blocks (``O(m d)``
        kernel evaluations per row); float32 for float32 ``X`` (the kernel block too, for
        the Gaussian kernel), an array of ``X``'s library on its device for such an ``X``."""
        check_is_fitted(self)
        return predict_in_blocks(
            self, X, self.dual_coef_.shape[1:], self._landmark_blocks, self._predictor
        )

    def _landmark_blocks(self, X: Any) -> Any:
        return self._block_rows(X, self.landmarks_.shape[0], 1)

    def _predictor(self, X: Any) -> Callable[[Any], Any]:
        """What the mean does to a block of rows of ``X``: ``k(X_b, L) c`` in the working
        dtype."""
        L, coef = self.landmarks_, self.dual_coef_
        work, place = _work_dtype(self.kernel_, X), Placement.of(X)
        landmarks = L if not place.on_device else place.work(L, work, copy=False)
        block_kernel = _landmark_kernel(self.kernel_, landmarks, work)
        coef_work = place.work(coef, work, copy=True)
        return lambda Xb: block_kernel(Xb) @ coef_work

    # -- the posterior ------------------------------------------------------------------

    def _posterior(self) -> DTCPosterior:
        """The DTC posterior from the factors the fit formed (``posterior=True``)."""
        state = self.__dict__.get("_posterior_state")
        if state is not None:
            return state
        check_is_fitted(self, "dual_coef_")
        factors = getattr(self, "_posterior_factors", None)
        if factors is None:
            raise ValueError(
                f"{type(self).__name__} was fitted with posterior=False; refit with "
                "posterior=True (one more pass over the rows, O(n m^2)) for return_std, "
                "return_cov, predict_interval, sample_y and sample_functions."
            )
        place = Placement.of(self.landmarks_)
        L = place.widened(self.landmarks_)
        T, R = factors
        state = DTCPosterior(self.kernel_, L, float(self.alpha), T, R, self._landmark_blocks)
        self._posterior_state = state
        return state

    def _held_out(self, X: Any) -> Callable[[Any], Any]:
        """Jackknife+ (:func:`~._kernel_posterior.held_out_block`), the smoother the
        subset-of-regressors part ``k_x^T H^{-1} k_j`` (the mean is the SoR mean)."""
        return held_out_block(self._posterior(), self._conformal, self._predictor(X), X)

    def _sample_functions(self, n_samples: int, rng: np.random.Generator) -> Any:
        """Pathwise draws at the landmarks (:meth:`DTCPosterior.update`)."""
        posterior = self._posterior()
        L = to_numpy(self.landmarks_)
        return draw_functions(self, posterior, L, self.dual_coef_, n_samples, rng)


def _system_matrix(solver: FalkonSolver) -> Any:
    """``H = K_nm^T K_nm + alpha K_mm`` (symmetrized), where ``K_mm`` is: one pass over the
    rows through the solver's cached blocks."""
    K_mm = solver.K_mm
    m = K_mm.shape[0]
    check_memory(
        8.0 * 3 * m * m,
        f"{solver.name}'s posterior: H ({m} x {m}), its factor and a part's product",
        "lower n_components (the number of landmarks), or fit with posterior=False",
    )
    H = solver.matvec.gram() + solver.alpha * K_mm
    return 0.5 * (H + H.T)


def _posterior_part(
    X: Any, y: Any, start: int, *, index: np.ndarray
) -> tuple[np.ndarray, Any, np.ndarray]:
    """Of a part: ``sum_i y_i^2`` per target (float64, on the host), and its rows of
    ``index`` (sorted global indices) on the host with their targets as float64 columns."""
    xp = get_namespace(y)[0]
    Y = xp.reshape(xp.astype(y, xp.float64) if not is_numpy(xp) else y, (y.shape[0], -1))
    with np.errstate(over="ignore"):  # inf for y near float64's limit
        squares = np.asarray(to_numpy(xp.sum(Y * Y, axis=0)), dtype=np.float64)
    local = index[(index >= start) & (index < start + X.shape[0])] - start
    picked = pick_rows(as_row_sliceable(X), local)
    targets = np.asarray(to_numpy(pick_rows(Y, local)), dtype=np.float64)
    return squares, host_rows(picked), targets


def _merge_parts(
    a: tuple[np.ndarray, Any, np.ndarray], b: tuple[np.ndarray, Any, np.ndarray]
) -> tuple[np.ndarray, Any, np.ndarray]:
    return (a[0] + b[0], *stacked_pairs(a[1:], b[1:]))
