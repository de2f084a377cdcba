"""Nyström features: landmarks drawn uniformly, by k-means, by ridge leverage scores or given.

The estimator :class:`Nystroem`: its fit (the landmarks and their kernel matrix ``K_mm``)
and its transform in row blocks.  The normalization ``K_mm^{+1/2}`` is in
:mod:`kernelmaps.feature_maps._nystroem_normalization`, the kernel evaluations other than
:class:`~kernelmaps.kernels.LandmarkKernel`'s in :mod:`kernelmaps.feature_maps._nystroem_kernels`.
"""

from __future__ import annotations

import copy
import functools
import threading
from collections.abc import Callable
from numbers import Integral, Real
from typing import Any, ClassVar, NamedTuple

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted

from .._array_api import (
    accumulator_dtype,
    get_namespace,
    is_numpy,
    on_host,
    to_namespace,
    to_numpy,
)
from .._numerics import ignore_fp_warnings
from .._rows import Rows, as_rows
from .._validation import StrictInterval, one_line_errors
from ..kernels import (
    Kernel,
    LandmarkKernel,
    check_kernel_matrix,
    kernel_parameter_constraints,
    refuse_named_with_precomputed,
    resolve_estimator_kernel,
)
from ..sampling import (
    LANDMARK_METHODS,
    draw_landmarks,
    finish_landmarks,
    kernel_free_landmarks,
)
from ._base import BaseFeatureMap, register_feature_map
from ._nystroem_kernels import _callable_gram, _PrecomputedIndexKernel, landmark_kernel
from ._nystroem_normalization import symmetric_normalization

__all__ = ["Nystroem"]


#: Largest row block of a transform: ``(block, m) @ (m, m)`` GEMMs of 2048 rows run at the
#: GEMM's full speed, and a ``2048 x m`` block (64 MiB in float64 at m = 4096) stays small
#: next to the output.
TRANSFORM_BLOCK_ROWS = 2048


@register_feature_map
class Nystroem(BaseFeatureMap):
    """Nyström features from landmarks chosen uniformly, by k-means, by leverage or given.

    Approximates ``k(x, y)`` by ``z(x) . z(y)`` with ``z(x) = K_mm^{+1/2} k_m(x)``, where
    ``k_m(x) = (k(x, c_1), ..., k(x, c_m))`` for landmarks ``c_1..c_m``.

    Parameters
    ----------
    kernel : str, Kernel, callable or "precomputed", default="rbf"
        A kernel name of :mod:`kernelmaps.kernels` (``"rbf"``, ``"laplacian"``, ...; every
        name of scikit-learn's pairwise kernels means the same kernel here, except the
        ambiguous ``"additive_chi2"``, see docs/MIGRATION.md), a
        :class:`~kernelmaps.kernels.Kernel` object, a callable ``k(X, Y, **kernel_params)``
        returning the kernel matrix (or ``k(x, y)`` on one pair of rows with
        ``kernel_call="pair"``), or ``"precomputed"``: ``fit`` then takes the
        ``n x n`` training kernel matrix ``K`` and ``transform`` takes
        ``K(X_new, X_train)`` of shape ``(n_new, n_train)``.
    gamma : float or "scale", default=None
        ``> 0``; ``None`` means the kernel's default (``1 / n_features`` for the kernels
        that take a ``gamma``).
        ``"scale"`` means ``1 / (n_features * X.var())`` on the training data, as in
        scikit-learn's ``RBFSampler`` and ``SVC`` (not for Dask arrays).
    degree : int, default=None
        Integer degree ``>= 1`` of the polynomial kernels (``None``: the kernel's default).
    coef0 : float, default=None
        Constant term ``>= 0`` of the polynomial kernel (``None``: the kernel's default).
    kernel_params : dict, default=None
        Other kernel parameters; for a callable, keyword arguments passed to it.
    n_components : int, default=100
        Number of landmarks ``m`` (the output width).  More than ``n_samples`` is not
        possible: every sample is then a landmark (``m = n_samples``, the exact kernel
        on the training points) and a warning says so.  Ignored when ``landmarks`` is
        an array.
    landmarks : {"uniform", "kmeans", "leverage", "rpcholesky"} or array-like, default="uniform"
        ``"uniform"``: ``m`` distinct training rows drawn uniformly (Williams & Seeger
        2001).  ``"kmeans"``: the k-means centres (Zhang, Tsang & Kwok 2008; mini-batch
        k-means above 20 000 samples).  ``"leverage"``: ``m`` distinct rows sampled by
        approximate ridge leverage scores, recursive scheme of Musco & Musco (2017),
        without forming the ``n x n`` matrix.  ``"rpcholesky"``: ``m`` distinct rows
        chosen by randomly pivoted Cholesky (Chen, Epperly, Tropp & Webber 2024), in the
        blocked, accelerated form (Epperly, Tropp & Webber 2024): each pivot drawn with
        probability proportional to the diagonal of the residual kernel matrix,
        ``O(n m)`` kernel evaluations (:func:`kernelmaps.sampling.rpcholesky`).  The
        methods other than ``"uniform"`` run on ``max(100 000, 20 m)`` training rows
        drawn uniformly when there are more (on all of them otherwise; see
        :mod:`kernelmaps.sampling`).  An array of shape ``(m, n_features)``: the
        landmarks themselves.  With ``kernel="precomputed"``
        only ``"uniform"`` and ``"leverage"`` apply (only ``"uniform"`` on a Dask array).
    eigen_cutoff : float, default=None
        Relative cut-off for the eigenvalues of ``K_mm``: directions with
        ``w_i <= eigen_cutoff * w_max`` are dropped (their output columns are zero).
        ``None`` means ``m * eps`` with ``eps`` the float64 machine epsilon, the rank
        tolerance of :func:`numpy.linalg.matrix_rank`, for float64 data, and the float32
        machine epsilon ``1.2e-7`` for float32 data (whose eigendecomposition is done in
        float32).  Duplicate or nearly duplicate landmarks make ``K_mm`` singular; the
        cut-off keeps the output finite.
    random_state : int, Generator, SeedSequence, RandomState or None, default=None
        Source of the landmark choice.
    kernel_call : {"matrix", "pair"}, default="matrix"
        How a callable ``kernel`` is called.  ``"matrix"``: on two 2D arrays, returning
        their kernel matrix (one call per row block: fast).  ``"pair"``: scikit-learn's
        convention, ``kernel(x, y, **kernel_params) -> float`` on one pair of 1D rows
        (:class:`~kernelmaps.kernels.PairCallableKernel`): ``m (m + 1) / 2`` Python calls
        at fit and ``n m`` at transform, about a microsecond each at best, so prefer a
        matrix callable beyond a few thousand rows.  Not guessed from the callable: a
        per-pair function such as ``x @ y`` can return a matrix of the right shape on
        matrices (see docs/MIGRATION.md).  Only for a callable ``kernel``.
    n_jobs : int, default=None
        Accepted for compatibility with scikit-learn's ``Nystroem``, and has no effect:
        the kernel blocks and the projection run as BLAS calls on every core (limit them
        with ``threadpoolctl.threadpool_limits``), and a Dask array is spread by its
        scheduler.  The result never depends on it.

    Attributes
    ----------
    kernel_ : Kernel or callable or None
        The resolved kernel (``None`` for ``"precomputed"``).
    components_ : ndarray of shape (n_components, n_features_in)
        The landmarks, dense, in the training dtype (for ``"precomputed"``, the rows of
        the training kernel matrix at the landmark indices).
    component_indices_ : ndarray of int or None
        Training rows used as landmarks (``None`` for k-means or given landmarks).
    normalization_ : ndarray of shape (n_components, n_components)
        ``K_mm^{+1/2}``: column ``i < rank_`` is ``v_i / sqrt(w_i)`` for the ``i``-th
        largest eigenpair of ``K_mm``, the other columns are zero.  In the training
        dtype (float32 for float32 data).
    eigenvalues_ : ndarray of shape (n_components,)
        Eigenvalues of ``K_mm`` in decreasing order.
    rank_ : int
        Effective rank: number of eigenvalues above the cut-off (non-zero columns).
    n_components_ : int
        Number of landmarks and output features.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined when ``X`` has string column names.

    Notes
    -----
    With ``C = K_nm`` (kernel between the data and the landmarks), the features
    ``Z = C K_mm^{+1/2}`` give ``Z Z^T = C P_r K_mm^+ P_r C^T``, the Nyström
    approximation (Williams & Seeger 2001) restricted to the top ``rank_`` eigenvectors
    ``P_r`` of ``K_mm`` (the ``K_11^{-1/2}`` normalization of the scikit-learn user
    guide, section 6.7.1, here with a cut-off instead of a floor on the eigenvalues).
    Because it is the kernel of an
    orthogonal projection in the feature space, ``K - Z Z^T`` is positive semidefinite
    for any landmarks and any cut-off, and ``|z(x)|^2 <= k(x, x)``; with every training
    point as a landmark and no eigenvalue cut, ``Z Z^T = K`` on the training set.

    Cost: fit ``O(m^2)`` kernel evaluations and one symmetric eigendecomposition of
    ``K_mm`` (LAPACK ``?syevd``, ``O(m^3)``; no SVD and no ``m x m`` product) (plus
    k-means, or ``O(n m)`` kernel evaluations and ``O(n m^2)`` operations for
    ``"leverage"``); transform ``O(n m)`` kernel evaluations and one ``(n, m) @ (m, m)``
    GEMM, in row blocks of at most 2048 rows whose kernel block stays within
    scikit-learn's ``working_memory``: memory of a transform is the output plus one
    block.  For the Gaussian kernel the block is a single GEMM with the squared norms of
    the (centred) landmarks precomputed, then ``exp`` in place.

    On a Dask array, ``fit`` draws the landmarks on the client from global row indices
    and gathers their rows in one compute (at most ``max(100 000, 20 m)`` rows for
    ``"kmeans"`` and ``"leverage"``), and gives the map fitted on the same data in numpy
    with the same seed, whatever the chunking (``kernelmaps._rows``).

    With scikit-learn's ``array_api_dispatch`` on, an array of another library (PyTorch,
    CuPy, ...) makes the work run on its device: the landmarks are drawn on the host with
    the same generator and are the rows the NumPy fit picks (``"rpcholesky"`` evaluates
    its factor on the device and copies the residual diagonal to the host to draw each
    block; ``"kmeans"`` and ``"leverage"`` run on a host copy of their sample), ``K_mm``
    and its eigendecomposition (the namespace's ``linalg.eigh``) are float64 where the
    device has it, and ``transform`` is the kernel block on the device times the
    normalization, in the input's dtype.  The fitted arrays live on that device; a kernel
    callable runs on host copies of the rows.

    float32 data stays float32: ``K_mm``, its eigendecomposition, the kernel blocks and
    the GEMM are float32 (about twice as fast, half the memory).  The eigendecomposition
    is then accurate to about ``2e-5`` relative (``|K_mm - V diag(w) V^T|_F / |K_mm|_F``
    measured at ``m = 4096``, against ``5e-15`` in float64; the a-priori bound is
    ``m * eps32``), and the kernel approximation error on held-out rows is that of
    float64 to three digits in benchmarks/nystroem_speed.py (``1.02e-3`` both at
    ``n = 100 000``, ``m = 4096``): the float32 rounding is far below the Nyström error.

    Bounds: with ``m = O(d_eff(lambda) log(d_eff / delta))`` leverage landmarks,
    ``K - Z Z^T <= lambda I`` with probability ``1 - delta`` (Musco & Musco 2017,
    Theorem 3), ``d_eff`` the effective dimension ``tr(K (K + lambda I)^{-1})``.  For
    k-means landmarks the error is bounded by the quantization error of the k-means
    partition (Zhang, Tsang & Kwok 2008).  For any landmarks the Frobenius error is at
    least the best rank-``m`` error (the SVD of ``K``).

    Numerical limits: those of the kernel.  The Gaussian, Laplacian and Matérn kernels
    are finite at any magnitude (far rows get zero features); kernel values beyond the
    float range (a polynomial kernel on large data) raise ``NonFiniteOutputError``.  See
    docs/LIMITS.md.

    References
    ----------
    Williams, C. K. I. and Seeger, M. (2001). Using the Nyström method to speed up kernel
    machines. NIPS.
    Zhang, K., Tsang, I. W. and Kwok, J. T. (2008). Improved Nyström low-rank approximation
    and error analysis. ICML.
    Musco, C. and Musco, C. (2017). Recursive sampling for the Nyström method. NIPS.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from kernelmaps import Nystroem
    >>> X, _ = load_digits(return_X_y=True)
    >>> Z = Nystroem(gamma=1e-3, n_components=100, landmarks="kmeans",
    ...              random_state=0).fit_transform(X)
    >>> Z.shape
    (1797, 100)
    """

    _kernel_requirement: ClassVar[str] = "a positive semidefinite kernel"
    _array_api: ClassVar[bool] = True

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **kernel_parameter_constraints(
            named=("gamma", "degree", "coef0"),
            callable_ok=True,
            precomputed_ok=True,
            gamma_scale=True,
        ),
        "n_components": [StrictInterval(Integral, 1, None, closed="left")],
        "landmarks": [StrOptions(set(LANDMARK_METHODS)), "array-like"],
        "eigen_cutoff": [StrictInterval(Real, 0.0, 1.0, closed="left"), None],
        "random_state": ["random_state", np.random.Generator, np.random.SeedSequence],
        "kernel_call": [StrOptions({"matrix", "pair"})],
        "n_jobs": [Integral, None],
    }

    def __init__(
        self,
        kernel: str | Kernel | Callable[..., Any] = "rbf",
        *,
        gamma: float | str | None = None,
        degree: int | None = None,
        coef0: float | None = None,
        kernel_params: dict[str, Any] | None = None,
        n_components: int = 100,
        landmarks: str | Any = "uniform",
        eigen_cutoff: float | None = None,
        random_state: Any = None,
        kernel_call: str = "matrix",
        n_jobs: int | None = None,
    ) -> None:
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.n_components = n_components
        self.landmarks = landmarks
        self.eigen_cutoff = eigen_cutoff
        self.random_state = random_state
        self.kernel_call = kernel_call
        self.n_jobs = n_jobs

    def _fit_rows(self, rows: Rows, rng: np.random.Generator) -> None:
        """The fit from the shape and dtype of the rows, reading the rows it needs once.

        The rows are read for those the landmark selection names (every row for k-means
        or leverage on data of at most ``landmark_sample_size(m)`` rows, and for a
        precomputed kernel with leverage or rpcholesky), so that a Dask array is read in
        one compute; the rows in memory, not a Dask array's, set ``gamma="scale"``.
        """
        stacklevel = 2  # the user's frame, counted from the caller (fit), for the warnings
        n_samples = rows.n_rows
        given = not isinstance(self.landmarks, str)
        m = min(int(self.n_components), n_samples)
        if given:  # an array of any library (its shape), or a list
            shape = getattr(self.landmarks, "shape", None)
            m = int(shape[0]) if shape is not None else len(self.landmarks)
        # K_mm and its evaluation's temporaries, the normalization, the eigenvectors and
        # LAPACK's workspace (float64)
        self._check_memory(
            8.0 * 8.0 * m * m,
            f"the {m} x {m} kernel matrix of the landmarks and its eigendecomposition",
            "lower n_components" if not given else "give fewer landmarks",
        )
        if self._precomputed:
            K_mm = self._fit_precomputed(rows, rng, stacklevel=stacklevel + 1)
        else:
            K_mm = self._fit_landmarks(rows, rng, stacklevel=stacklevel + 1)
        self._normalize(K_mm, rows, stacklevel=stacklevel + 2)

    def _normalize(self, K_mm: Any, rows: Rows, *, stacklevel: int) -> None:
        """The normalization ``K_mm^{+1/2}`` and its eigenvalues, in the dtype of ``rows``
        (where ``K_mm`` is); ``stacklevel`` counts the frames from the caller."""
        normalization, eigenvalues, rank = symmetric_normalization(
            K_mm, self.eigen_cutoff, rows.dtype, stacklevel=stacklevel + 1
        )
        self.normalization_ = normalization
        self.eigenvalues_ = eigenvalues
        self.rank_ = rank
        self.n_components_ = normalization.shape[0]
        self._n_features_out = self.n_components_

    @property
    def _precomputed(self) -> bool:
        return isinstance(self.kernel, str) and self.kernel == "precomputed"

    def _check_precomputed(self, shape: tuple[int, int]) -> None:
        """Refuse a non-square kernel matrix and the landmarks that need feature vectors."""
        if shape[0] != shape[1]:
            raise ValueError(
                f"With kernel='precomputed', fit takes the square n x n kernel matrix of "
                f"the training data; got an array of shape {shape}."
            )
        if not isinstance(self.landmarks, str) or self.landmarks == "kmeans":
            given = not isinstance(self.landmarks, str)
            raise ValueError(
                f"landmarks={'an array' if given else repr(self.landmarks)} needs "
                "feature vectors; with kernel='precomputed' use landmarks='uniform', "
                "'leverage' or 'rpcholesky'."
            )

    def _fit_precomputed(
        self, rows: Rows, rng: np.random.Generator, *, stacklevel: int
    ) -> np.ndarray:
        """Landmark rows of the training kernel matrix ``X``; returns ``K_mm``.

        The landmarks are drawn among the row positions; ``"leverage"`` looks the kernel
        up in the whole matrix (read whole), ``"uniform"`` reads only the ``m`` landmark
        rows, and ``K_mm`` is their columns at the landmark positions.
        """
        refuse_named_with_precomputed(self)
        n_samples = rows.n_rows
        self._check_precomputed((n_samples, rows.n_features))
        index_kernel = None
        if self.landmarks != "uniform":  # leverage and rpcholesky look the kernel up
            if not rows.in_memory:
                raise ValueError(
                    f"{type(self).__name__}(kernel='precomputed', "
                    f"landmarks={self.landmarks!r}) looks the kernel up in the whole n x n "
                    "matrix, in memory; on a Dask array use landmarks='uniform'."
                )
            (K,) = rows.read([None])
            index_kernel = _PrecomputedIndexKernel(to_numpy(K))
        draw = draw_landmarks(
            n_samples,
            1,
            np.float64,
            self.landmarks,
            self.n_components,
            kernel=index_kernel,
            rng=rng,
            stacklevel=stacklevel + 1,
        )
        if draw.method == "uniform":
            idx_f = draw.rows
        else:
            positions = np.arange(n_samples, dtype=np.float64)[:, None]
            sampled = positions if draw.rows is None else positions[draw.rows]
            _, idx_f = finish_landmarks(draw, sampled, rng)
        assert idx_f is not None
        idx = np.asarray(idx_f, dtype=np.intp)
        (landmark_rows,) = rows.read([idx])
        self.kernel_: Callable[..., Any] | None = None
        self.component_indices_ = idx
        if sp.issparse(landmark_rows):
            landmark_rows = landmark_rows.toarray()
        if is_numpy(rows.xp):
            landmark_rows = np.asarray(landmark_rows, dtype=rows.dtype)
        self.components_ = landmark_rows
        # K_mm: the landmark columns, where the rows are
        return rows.xp.take(landmark_rows, to_namespace(idx, rows.xp, rows.device), axis=1)

    def _fit_landmarks(
        self, rows: Rows, rng: np.random.Generator, *, stacklevel: int
    ) -> np.ndarray:
        """Landmarks in the input space (drawn or given); returns ``K_mm``.

        For the rows of an array of another library, the landmarks are the rows the same
        draws name (:func:`~kernelmaps.sampling.finish_landmarks`) and ``K_mm`` is
        evaluated on its device, in float64 where the device has it.
        """
        data = rows.X if rows.in_memory else None
        kernel = resolve_estimator_kernel(self, rows.n_features, data)
        dtype = rows.dtype
        draw = draw_landmarks(
            rows.n_rows,
            rows.n_features,
            dtype,
            self.landmarks,
            self.n_components,
            kernel=kernel,
            rng=rng,
            stacklevel=stacklevel + 1,
        )
        (drawn,) = rows.read([draw.rows])
        components, idx = finish_landmarks(draw, drawn, rng)
        self.kernel_ = kernel
        self.components_ = components
        self.component_indices_ = idx  # type: ignore[assignment]
        return _landmark_gram(kernel, components, rows)

    # -- the kernel parameters on the same landmarks -------------------------------------

    def _kernel_free_state(self) -> bool:
        """Whether the fitted landmarks do not depend on the kernel's parameters (drawn
        uniformly, by k-means or given, with a kernel evaluated on feature vectors): then
        :meth:`_with_kernel_params` refits the map for other parameters on them."""
        return not self._precomputed and kernel_free_landmarks(self.landmarks)

    def _with_kernel_params(self, **params: Any) -> Nystroem:
        """A copy of the fitted map with the kernel parameters ``params`` (``gamma=...``),
        on the same landmarks (the same array): the kernel, ``K_mm`` and its
        normalization refitted, what :meth:`fit` with ``params`` and the same
        ``random_state`` would give where :meth:`_kernel_free_state` holds, without
        choosing the landmarks again.

        The search of :class:`~kernelmaps.FeatureRidgeCV` calls it for every bandwidth
        after the first: k-means landmarks are found once per search.
        """
        check_is_fitted(self, "normalization_")
        if not self._kernel_free_state():
            raise ValueError(
                f"{type(self).__name__}(landmarks={self.landmarks!r}) chooses its landmarks "
                "with the kernel; fit a clone with the new parameters instead."
            )
        if isinstance(params.get("gamma"), str):
            raise ValueError(
                f"gamma={params['gamma']!r} is computed from the training rows; give a "
                "number, or fit a clone."
            )
        refitted = copy.copy(self)
        refitted.set_params(**params)
        refitted._validate_params()
        rows = as_rows(self.components_)
        with ignore_fp_warnings(), one_line_errors(type(self).__name__):
            refitted.kernel_ = resolve_estimator_kernel(refitted, rows.n_features)
            K_mm = _landmark_gram(refitted.kernel_, self.components_, rows)
            refitted._normalize(K_mm, rows, stacklevel=3)
        refitted._check_fitted_state(rows.dtype)
        return refitted

    def _landmark_kernel(self, X: Any) -> Callable[[Any], Any]:
        """``X_block -> k(X_block, landmarks)`` in the dtype of the rows ``X``, prepared
        once per transform: on NumPy the blocked landmark kernel (or the landmark columns
        of a precomputed kernel, or a callable's block); on another library
        :func:`landmark_kernel` on ``X``'s device."""
        xp, _ = get_namespace(X)
        if not is_numpy(xp):
            if self.kernel_ is None:
                idx = self.component_indices_
                return lambda block: xp.take(block, idx, axis=1)
            return functools.partial(landmark_kernel, self.kernel_, L=self.components_)
        dtype = np.dtype(X.dtype)
        m = self.n_components_
        if self.kernel_ is None:
            idx = self.component_indices_

            def precomputed(X: Any) -> np.ndarray:
                block = X[:, idx]
                block = block.toarray() if sp.issparse(block) else block
                return np.ascontiguousarray(block, dtype=dtype)

            return precomputed
        if isinstance(self.kernel_, Kernel):
            return LandmarkKernel(self.kernel_, self.components_, dtype)
        kernel = self.kernel_
        L64 = self.components_.astype(np.float64)
        L_sparse = sp.csr_matrix(L64)

        def generic(X: Any) -> np.ndarray:
            K = check_kernel_matrix(kernel(X, L_sparse if sp.issparse(X) else L64), X.shape[0], m)
            return np.ascontiguousarray(K, dtype=dtype)

        return generic

    def _block_bytes_per_row(self, X: Any) -> float:
        # the kernel block (counted by the base class as one output-wide row) plus the
        # augmented, centred input row of the Gaussian GEMM
        itemsize = np.dtype(X.dtype).itemsize
        return super()._block_bytes_per_row(X) + float(itemsize * (X.shape[1] + 2))

    def _project_into(self, K: np.ndarray, normalization: np.ndarray, out: np.ndarray) -> None:
        """``out = K @ normalization`` without temporaries on NumPy (zero columns past the
        rank); one product into ``out`` on another library."""
        if not is_numpy(get_namespace(K)[0]):
            out[...] = K @ normalization
            return
        rank = self.rank_
        if rank == normalization.shape[1]:
            np.matmul(K, normalization, out=out)
        else:
            np.matmul(K, normalization[:, :rank], out=out[:, :rank])
            out[:, rank:] = 0.0

    # Row blocks of at most TRANSFORM_BLOCK_ROWS rows, fewer if the kernel block
    # (block_rows * n_components_ values of the input dtype) would exceed scikit-learn's
    # working_memory: the memory of a transform is the output plus one kernel block (plus
    # the n_components_^2 normalization when the input dtype differs from the fit's).
    _max_block_rows: ClassVar[int | None] = TRANSFORM_BLOCK_ROWS

    def _validate_transform_input(self, X: Any) -> Any:
        """Feature rows, or with ``kernel="precomputed"`` the kernel rows ``K(X, X_train)``."""
        shape: tuple[int, ...] = getattr(X, "shape", ())
        if self.kernel_ is None and len(shape) == 2 and shape[1] != self.n_features_in_:
            raise ValueError(
                f"With kernel='precomputed', transform takes the kernel rows "
                f"K(X_new, X_train) of shape (n_new, {self.n_features_in_}), one column per "
                f"training sample; got {shape[1]} columns."
            )
        return super()._validate_transform_input(X)

    def _transform_constants(self, X: Any) -> _NystroemConstants:
        """The landmark kernel and the normalization in the dtype of ``X``, prepared once."""
        normalization = self._cast_fitted(self.normalization_, X.dtype, "normalization")
        return _NystroemConstants(self._landmark_kernel(X), normalization, _KernelBuffer())

    def _transform_block(self, X: Any, out: np.ndarray, constants: _NystroemConstants) -> None:
        kernel_block = constants.kernel_block
        if isinstance(kernel_block, LandmarkKernel):
            K = kernel_block(X, out=constants.buffer.get(X.shape[0], self.n_components_, out.dtype))
        else:
            K = kernel_block(X)
        self._project_into(K, constants.normalization, out)


def _landmark_gram(kernel: Any, components: Any, rows: Rows) -> Any:
    """``K_mm`` of the landmarks ``components`` where ``rows`` are: on NumPy in their
    training dtype (float32 stays float32), on another library in float64 where the
    device has it; a kernel callable (written for NumPy arrays) on float64 host copies."""
    xp, device = rows.xp, rows.device
    work = rows.dtype if is_numpy(xp) else accumulator_dtype(xp, device)
    if not isinstance(kernel, Kernel):
        gram = on_host(
            lambda L: _callable_gram(kernel, L.astype(np.float64)), components, dtype=work
        )
        return xp.astype(gram, work, copy=False)
    if is_numpy(xp):  # the blocked GEMM of the transform, centred
        return LandmarkKernel(kernel, components, work)(components)
    L_work = xp.astype(components, work)
    return landmark_kernel(kernel, L_work, L_work)


class _KernelBuffer(threading.local):
    """One kernel block per thread, reused from block to block (no page faults)."""

    array: np.ndarray | None = None

    def get(self, n_rows: int, n_columns: int, dtype: np.dtype) -> np.ndarray:
        """A ``(n_rows, n_columns)`` array of ``dtype``, the first rows of the buffer."""
        array = self.array
        if array is None or array.shape[0] < n_rows or array.dtype != dtype:
            array = self.array = np.empty((n_rows, n_columns), dtype=dtype)
        return array[:n_rows]


class _NystroemConstants(NamedTuple):
    """Per-transform constants of :class:`Nystroem`."""

    kernel_block: Callable[..., np.ndarray]
    normalization: np.ndarray
    buffer: _KernelBuffer
