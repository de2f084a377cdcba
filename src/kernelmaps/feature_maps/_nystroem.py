"""Nyström features: landmarks drawn uniformly, by k-means, by ridge leverage scores or given."""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable
from numbers import Integral, Real
from typing import Any, ClassVar, NamedTuple

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from sklearn.utils._param_validation import StrOptions

from .._array_api import device_of, namespace_of, to_namespace, to_numpy
from .._rows import ArrayRows, Rows
from ..exceptions import NonFiniteOutputError
from ..kernels import (
    CallableKernel,
    Kernel,
    LandmarkKernel,
    ShiftInvariantKernel,
    StrictInterval,
    check_kernel_matrix,
    kernel_parameter_constraints,
    refuse_named_with_precomputed,
    resolve_estimator_kernel,
)
from ..sampling import (
    LANDMARK_METHODS,
    draw_landmarks,
    finish_landmarks,
    work_dtype,
)
from ._base import BaseFeatureMap, register_feature_map

__all__ = ["Nystroem"]

#: Largest row block of a transform: ``(block, m) @ (m, m)`` GEMMs of 2048 rows run at the
#: GEMM's full speed, and a ``2048 x m`` block (64 MiB in float64 at m = 4096) stays small
#: next to the output.
TRANSFORM_BLOCK_ROWS = 2048


class _PrecomputedIndexKernel:
    """Kernel on row indices (stored as a float column) looked up in a precomputed K."""

    def __init__(self, K: Any) -> None:
        self.K = K

    def __call__(self, A: Any, B: Any) -> np.ndarray:
        rows = np.asarray(A, dtype=np.int64).reshape(-1)
        cols = np.asarray(B, dtype=np.int64).reshape(-1)
        sub = self.K[rows][:, cols]
        return np.asarray(sub.toarray() if sp.issparse(sub) else sub, dtype=np.float64)

    def diag(self, A: Any) -> np.ndarray:
        rows = np.asarray(A, dtype=np.int64).reshape(-1)
        d = self.K.diagonal() if sp.issparse(self.K) else np.diagonal(self.K)
        return np.asarray(d, dtype=np.float64)[rows]


#: LAPACK driver of the eigendecomposition of ``K_mm`` (divide and conquer, ``?syevd``):
#: at ``m = 4096`` the fastest of ``evd``/``evr``/``ev`` here and the most accurate
#: after ``ev`` (benchmarks/nystroem_speed.py, ``--drivers``).
EIGH_DRIVER = "evd"


def symmetric_normalization(
    K_mm: np.ndarray, eigen_cutoff: float | None, *, owner: str = "Nystroem", stacklevel: int = 4
) -> tuple[np.ndarray, np.ndarray, int]:
    """``K_mm^{+1/2}`` restricted to eigenvalues above the cut-off.

    Returns ``(normalization, eigenvalues, rank)`` where ``normalization`` has shape
    ``(m, m)`` and the dtype of ``K_mm`` (float32 or float64): its first ``rank`` columns
    are ``v_i / sqrt(w_i)`` for the eigenpairs of ``K_mm`` in decreasing order with
    ``w_i > cutoff * w_max``, the others are zero.  ``eigenvalues`` is float64.

    One symmetric eigendecomposition (LAPACK ``?syevd``) in the dtype of ``K_mm``, no
    other ``O(m^3)`` work: ``V diag(w^{-1/2})`` is a valid ``K_mm^{+1/2}`` for the
    features (``Z Z^T`` does not depend on the rotation), so the symmetric square root
    ``V diag(w^{-1/2}) V^T`` (another ``2 m^3`` GEMM) is not formed.  ``cutoff=None``
    means ``max(m * eps_64, eps)`` with ``eps_64`` the float64 and ``eps`` the working
    dtype's machine epsilon: ``m * eps_64`` in float64 (the rank tolerance of
    :func:`numpy.linalg.matrix_rank`), ``eps_32 = 1.2e-7`` in float32, the size of the
    rounding noise of a float32 eigendecomposition relative to ``w_max``.  The warnings
    (no positive eigenvalue, negative eigenvalues) are issued with ``stacklevel``.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.feature_maps._nystroem import symmetric_normalization
    >>> N, w, rank = symmetric_normalization(np.diag([4.0, 1.0, 0.0]), None)
    >>> np.abs(N).round(3).tolist(), rank
    ([[0.5, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]], 2)
    """
    m = K_mm.shape[0]
    dtype = np.dtype(K_mm.dtype)
    if dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
        dtype = np.dtype(np.float64)
        K_mm = K_mm.astype(dtype)
    eps = float(np.finfo(dtype).eps)
    if not np.all(np.isfinite(K_mm)):
        _refuse_non_finite_landmark_matrix(owner)
    scale = float(np.max(np.abs(K_mm))) if m else 0.0
    asym = float(np.max(np.abs(K_mm - K_mm.T))) if m else 0.0
    _check_symmetric(asym, scale, eps, owner)
    K_sym = K_mm + K_mm.T
    K_sym *= 0.5
    w, V = scipy.linalg.eigh(K_sym, driver=EIGH_DRIVER, overwrite_a=True, check_finite=False)
    w = np.asarray(w[::-1], dtype=np.float64)
    keep = _kept_eigenvalues(w, eps, eigen_cutoff, owner=owner, stacklevel=stacklevel + 1)
    rank = int(np.count_nonzero(keep))
    normalization = np.zeros((m, m), dtype=dtype)
    if rank:
        V_top = V[:, m - rank :][:, ::-1]  # the top ``rank`` eigenvectors, decreasing
        pivots = V_top[np.argmax(np.abs(V_top), axis=0), np.arange(rank)]
        # deterministic signs (largest-magnitude entry positive) folded into the scaling
        col_scale = np.where(pivots < 0, -1.0, 1.0) / np.sqrt(w[:rank])
        np.multiply(V_top, col_scale.astype(dtype), out=normalization[:, :rank])
    return normalization, w, rank


def _refuse_non_finite_landmark_matrix(owner: str) -> None:
    raise ValueError(
        f"{owner}: the kernel matrix of the landmarks has non-finite entries; check the "
        "kernel and its parameters."
    )


def _check_symmetric(asym: float, scale: float, eps: float, owner: str) -> None:
    """Refuse a landmark kernel matrix with ``max |K - K^T| = asym`` beyond rounding."""
    if asym > max(1e-7, 100 * eps) * max(scale, np.finfo(np.float64).tiny):
        raise ValueError(
            f"{owner}: the kernel matrix of the landmarks is not symmetric (max |K - K^T| = "
            f"{asym:.3g}, max |K| = {scale:.3g}); the kernel must be a symmetric positive "
            "semidefinite function k(x, y) = k(y, x)."
        )


def _kept_eigenvalues(
    w: np.ndarray, eps: float, eigen_cutoff: float | None, *, owner: str, stacklevel: int
) -> np.ndarray:
    """Which of the eigenvalues ``w`` (float64, decreasing) are above the cut-off of
    :func:`symmetric_normalization` (``eps`` the working dtype's), with its warnings
    (``stacklevel`` counted from this function)."""
    m = w.shape[0]
    w_max = float(w[0]) if m else 0.0
    default = max(m * float(np.finfo(np.float64).eps), eps)
    cutoff = default if eigen_cutoff is None else float(eigen_cutoff)
    if w_max <= 0.0:
        warnings.warn(
            f"{owner}: the kernel matrix of the landmarks has no positive eigenvalue; the "
            "kernel is not positive semidefinite or vanishes on the landmarks, and every "
            "output feature is zero.",
            UserWarning,
            stacklevel=stacklevel,
        )
        return np.zeros(m, dtype=bool)
    if w[-1] < -np.sqrt(eps) * w_max:
        warnings.warn(
            f"{owner}: the kernel matrix of the landmarks has negative eigenvalues (down "
            f"to {w[-1]:.3g}, largest {w_max:.3g}); the kernel is not positive "
            "semidefinite. Their directions are dropped.",
            UserWarning,
            stacklevel=stacklevel,
        )
    return w > cutoff * w_max


def column_pivots_array(V: Any) -> np.ndarray:
    """The largest-magnitude entry of each column of ``V`` (an array of another library),
    on the host: ``V[argmax |V[:, j]|, j]`` (their signs fix the eigenvectors' signs)."""
    xp, device = namespace_of(V), device_of(V)
    n_columns = int(V.shape[1])
    largest = to_numpy(xp.argmax(xp.abs(V), axis=0)).astype(np.int64)
    flat = to_namespace(largest * n_columns + np.arange(n_columns), xp, device)
    return to_numpy(xp.take(xp.reshape(V, (-1,)), flat)).astype(np.float64)


def symmetric_normalization_array(
    K_mm: Any,
    eigen_cutoff: float | None,
    dtype: Any,
    *,
    owner: str = "Nystroem",
    stacklevel: int = 4,
) -> tuple[Any, np.ndarray, int]:
    """:func:`symmetric_normalization` of a ``K_mm`` that is an array of another library
    (array API dispatch on), on its device.

    The eigendecomposition is the namespace's ``linalg.eigh``, in float64 where the
    device has it (else float32); ``dtype`` is the input's dtype (NumPy's), that of the
    returned normalization and of the default cut-off's ``eps``, as on the host.  The
    eigenvalues (``m`` numbers) are ordered and cut off on the host, by the same code.

    Returns
    -------
    normalization : array of shape (m, m)
        In ``dtype``, in the namespace and on the device of ``K_mm``.
    eigenvalues : ndarray of shape (m,)
        float64, decreasing (host).
    rank : int
    """
    xp, device = namespace_of(K_mm), device_of(K_mm)
    m, dtype = int(K_mm.shape[0]), np.dtype(dtype)
    eps = float(np.finfo(dtype).eps)
    K_mm = xp.astype(K_mm, work_dtype(K_mm))
    if not bool(xp.all(xp.isfinite(K_mm))):
        _refuse_non_finite_landmark_matrix(owner)
    K_t = xp.matrix_transpose(K_mm)
    scale = float(xp.max(xp.abs(K_mm))) if m else 0.0
    asym = float(xp.max(xp.abs(K_mm - K_t))) if m else 0.0
    _check_symmetric(asym, scale, eps, owner)
    w_dev, V = xp.linalg.eigh(0.5 * (K_mm + K_t))
    w_all = to_numpy(w_dev).astype(np.float64)
    order = np.argsort(w_all, kind="stable")[::-1].copy()
    w = w_all[order]
    keep = _kept_eigenvalues(w, eps, eigen_cutoff, owner=owner, stacklevel=stacklevel + 1)
    rank = int(np.count_nonzero(keep))
    out_dtype = getattr(xp, dtype.name)
    normalization = xp.zeros((m, m), dtype=out_dtype, device=device)
    if rank:
        V_top = xp.take(V, to_namespace(order[:rank], xp, device), axis=1)
        # deterministic signs (largest-magnitude entry positive), as on the host
        pivots = column_pivots_array(V_top)
        col_scale = np.where(pivots < 0, -1.0, 1.0) / np.sqrt(w[:rank])
        scaled = V_top * to_namespace(col_scale, xp, device, dtype=V_top.dtype)
        normalization[:, :rank] = xp.astype(scaled, out_dtype)
        if not bool(xp.all(xp.isfinite(normalization))):
            raise NonFiniteOutputError(
                f"{owner}.fit: the eigendecomposition of the kernel matrix of the landmarks "
                "on this device returned non-finite values; pass float64 input or use "
                "fewer landmarks."
            )
    return normalization, w, rank


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
    components_ : ndarray of shape (n_components_, n_features_in_)
        The landmarks, dense, in the training dtype (for ``"precomputed"``, the rows of
        the training kernel matrix at the landmark indices).
    component_indices_ : ndarray of int or None
        Training rows used as landmarks (``None`` for k-means or given landmarks).
    normalization_ : ndarray of shape (n_components_, n_components_)
        ``K_mm^{+1/2}``: column ``i < rank_`` is ``v_i / sqrt(w_i)`` for the ``i``-th
        largest eigenpair of ``K_mm``, the other columns are zero.  In the training
        dtype (float32 for float32 data).
    eigenvalues_ : ndarray of shape (n_components_,)
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
    with the same seed, whatever the chunking (:mod:`kernelmaps._rows`).

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
        if isinstance(rows, ArrayRows):
            normalization, w, rank = symmetric_normalization_array(
                K_mm, self.eigen_cutoff, rows.dtype, stacklevel=stacklevel + 2
            )
            # float64 as on the host, where the device has it (float32 on the others)
            eigenvalues = to_namespace(w, rows.xp, rows.device, dtype=work_dtype(rows.X))
        else:
            normalization, eigenvalues, rank = symmetric_normalization(
                K_mm, self.eigen_cutoff, stacklevel=stacklevel + 2
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
            index_kernel = _PrecomputedIndexKernel(
                to_numpy(K) if isinstance(rows, ArrayRows) else K
            )
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
        if isinstance(rows, ArrayRows):  # K_mm: the landmark columns, on the device
            self.components_ = landmark_rows
            return rows.xp.take(landmark_rows, to_namespace(idx, rows.xp, rows.device), axis=1)
        if sp.issparse(landmark_rows):
            landmark_rows = landmark_rows.toarray()
        components = np.asarray(landmark_rows, dtype=rows.dtype)
        self.components_ = components
        return components[:, idx]

    def _fit_landmarks(
        self, rows: Rows, rng: np.random.Generator, *, stacklevel: int
    ) -> np.ndarray:
        """Landmarks in the input space (drawn or given); returns ``K_mm``.

        For the rows of an array of another library, the landmarks are the rows the same
        draws name (:func:`~kernelmaps.sampling.finish_landmarks`) and ``K_mm`` is
        evaluated on its device, in float64 where the device has it.
        """
        data = rows.X if isinstance(rows, ArrayRows) else rows.array()
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
        if isinstance(rows, ArrayRows):
            if not isinstance(kernel, Kernel):  # a callable for NumPy arrays: on the host
                L64 = to_numpy(components).astype(np.float64)
                return to_namespace(_callable_gram(kernel, L64), rows.xp, rows.device)
            L_work = rows.xp.astype(components, work_dtype(components))
            return landmark_kernel_array(kernel, L_work, L_work)
        if isinstance(kernel, Kernel):
            return LandmarkKernel(kernel, components, dtype)(components)
        L64 = components.astype(np.float64)
        return _callable_gram(kernel, L64).astype(dtype, copy=False)

    def _landmark_kernel(self, dtype: Any) -> Callable[[Any], np.ndarray]:
        """``X_block -> k(X_block, landmarks)`` in ``dtype``, prepared once per transform."""
        dtype = np.dtype(dtype)
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
        """``out = K @ normalization`` without temporaries (zero columns past the rank)."""
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
        dtype = np.dtype(X.dtype)
        normalization = self._cast_fitted(np.asarray(self.normalization_), dtype, "normalization")
        return _NystroemConstants(self._landmark_kernel(dtype), normalization, _KernelBuffer())

    def _array_block(self, X: Any, xp: Any) -> Any:
        """The kernel block against the landmarks on ``X``'s device
        (:func:`landmark_kernel_array`; the landmark columns for a precomputed kernel)
        times the normalization, in the dtype of ``X``."""
        if self.kernel_ is None:
            K = xp.take(X, self.component_indices_, axis=1)
        else:
            K = landmark_kernel_array(self.kernel_, X, self.components_)
        return K @ xp.astype(self.normalization_, X.dtype, copy=False)

    def _transform_block(self, X: Any, out: np.ndarray, constants: _NystroemConstants) -> None:
        kernel_block = constants.kernel_block
        if isinstance(kernel_block, LandmarkKernel):
            K = kernel_block(X, out=constants.buffer.get(X.shape[0], self.n_components_, out.dtype))
        else:
            K = kernel_block(X)
        self._project_into(K, constants.normalization, out)


def _callable_gram(kernel: Callable[..., Any], L64: np.ndarray) -> np.ndarray:
    """``K_mm`` of a kernel callable on the float64 landmarks ``L64``, checked; a matrix
    callable that fails on its first call is told about ``kernel_call='pair'``."""
    if isinstance(kernel, CallableKernel):
        try:
            K_mm = kernel(L64, L64)
        except NonFiniteOutputError:
            raise
        except Exception as error:
            # the first call of a matrix callable: a per-pair kernel (scikit-learn's
            # convention) fails here, or returns the wrong shape
            hint = (
                f"{error} (Nystroem calls a callable kernel on two 2D arrays of rows "
                "and expects their kernel matrix; for a kernel on one pair of rows, "
                "scikit-learn's convention, pass kernel_call='pair'.)"
            )
            try:
                again = type(error)(hint)
            except Exception:  # an exception type with another constructor
                raise error from None
            raise again from error
    else:
        K_mm = kernel(L64, L64)
    return check_kernel_matrix(K_mm, len(L64), len(L64))


def landmark_kernel_array(kernel: Callable[..., Any], X: Any, L: Any) -> Any:
    """``k(X, L)`` for rows ``X`` and landmarks ``L`` of another library (array API
    dispatch on), on their device, in the dtype of ``X``.

    A shift-invariant kernel is evaluated on the rows less the mean ``mu`` of the
    landmarks, as :class:`~kernelmaps.kernels.LandmarkKernel` centres the Gaussian's
    product: its values do not change and the rounding of the distances is that of the
    spread of the data, not of its distance from the origin.  A kernel callable is
    written for NumPy arrays: it runs on the host (float64 landmarks) and its result is
    moved.
    """
    xp = namespace_of(X)
    if not isinstance(kernel, Kernel):
        K = kernel(to_numpy(X), to_numpy(L).astype(np.float64))
        K = check_kernel_matrix(K, int(X.shape[0]), int(L.shape[0]))
        return to_namespace(K, xp, device_of(X), dtype=X.dtype)
    L = xp.astype(L, X.dtype, copy=False)
    if not isinstance(kernel, ShiftInvariantKernel):
        return kernel(X, L)
    mu = xp.mean(L, axis=0)
    Lc = L - mu
    return kernel(Lc if X is L else X - mu, Lc)


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
