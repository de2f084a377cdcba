"""IKA, the Independent Kernel Approximator: leading kernel eigenfunctions in a chosen basis."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from numbers import Integral
from typing import Any, ClassVar

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from scipy.special import expit
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.extmath import safe_sparse_dot

from .._array_api import (
    accumulator_dtype,
    get_namespace,
    host_dtype,
    is_numpy,
    on_host,
    placed,
    to_namespace,
    to_numpy,
)
from .._numerics import is_finite, largest_magnitude
from .._row_blocks import row_blocks
from .._rows import Rows
from .._validation import StrictInterval
from ..exceptions import NonFiniteOutputError
from ..kernels import (
    Kernel,
    ShiftInvariantKernel,
    check_kernel_matrix,
    kernel_parameter_constraints,
    resolve_estimator_kernel,
)
from ..sampling import (
    PREDRAWN_LANDMARK_METHODS,
    LandmarkDraw,
    draw_landmarks,
    finish_landmarks,
    kernel_block,
)
from ._base import BaseFeatureMap, register_feature_map
from ._nystroem_kernels import landmark_kernel
from ._nystroem_normalization import (
    check_symmetric,
    column_signs,
    decreasing_eigenvalues,
    leading_vectors,
)

__all__ = ["IKA"]

#: Relative eigenvalue threshold of ``P`` below which the basis is reduced (see Notes).
_P_RCOND = 1e-10


@register_feature_map
class IKA(BaseFeatureMap):
    """IKA (Independent Kernel Approximator): the leading eigenfunctions of the kernel
    operator projected on the span of chosen basis functions.

    Approximates ``k(x, y)`` by ``psi(x) . psi(y)`` with
    ``psi(x) = (sqrt(lambda_i) sum_j v_j^(i) b_j(x))_{i <= m}``, where
    ``(lambda_i, v^(i))`` are the leading solutions of the generalized eigenproblem
    ``M v = lambda P v`` on a sample (Ronchetti 2018, Algorithm 1).

    Parameters
    ----------
    kernel : str, Kernel or callable, default="rbf"
        A kernel name of :mod:`kernelmaps.kernels`, a
        :class:`~kernelmaps.kernels.Kernel` object or a callable
        ``k(X, Y, **kernel_params)`` returning the kernel matrix.
    gamma : float or "scale", default=None
        ``> 0``; ``None`` means the kernel's default (``1 / n_features`` for the kernels
        that take a ``gamma``).  ``"scale"`` means ``1 / (n_features * X.var())`` on the
        training data, as in scikit-learn's ``RBFSampler`` and ``SVC`` (not for Dask
        arrays).
    degree : int, default=None
        Integer degree ``>= 1`` of the polynomial kernels (``None``: the kernel's default).
    coef0 : float, default=None
        Constant term ``>= 0`` of the polynomial kernel (``None``: the kernel's default).
    kernel_params : dict, default=None
        Other kernel parameters; for a callable, keyword arguments passed to it.
    n_components : int, default=100
        Number ``m`` of eigenfunctions kept (output width); at most ``n_basis``.  With
        centres drawn from the data (every basis but ``"fourier"`` and callables), more
        than ``n_samples`` is not possible: every sample is then a centre,
        ``n_components_ = n_samples`` and a warning says so (as :class:`Nystroem` does).
    basis : {"kernel", "relu", "sigmoid", "fourier"} or callable, default="kernel"
        The basis functions ``b_j``: ``"kernel"``: ``k(x, c_j)``, kernel functions at the
        centres (the paper's filters; IKA and :class:`Nystroem` then span the same
        functions and differ only in how the coefficients are fitted); ``"relu"``:
        ``max(0, c_j . x)``; ``"sigmoid"``: ``1 / (1 + exp(-c_j . x))``; ``"fourier"``:
        ``cos(w_j . x + u_j)`` with ``w_j`` drawn from the kernel's spectral measure and
        ``u_j ~ U[0, 2 pi)`` (shift-invariant kernels only); a callable ``f(X)`` returning
        the ``(n_samples, n_basis)`` matrix of basis values (``n_basis`` and ``centers``
        are then ignored).
    n_basis : int, default=None
        Number ``n`` of basis functions; ``None`` means ``n_components``.  With centres
        drawn from the data, at most ``n_samples`` (more: all samples, with a warning).
    centers : {"uniform", "kmeans", "rpcholesky"}, default="uniform"
        Centres ``c_j`` (filters) of the ``"kernel"``, ``"relu"`` and ``"sigmoid"`` bases:
        training rows drawn uniformly, k-means centres (Zhang, Tsang & Kwok 2008), or
        training rows chosen by randomly pivoted Cholesky on the kernel (Chen, Epperly,
        Tropp & Webber 2024), the last two of ``max(100 000, 20 n_basis)`` training rows
        drawn uniformly when there are more.
    sample_size : int, default=None
        Number ``S`` of training rows sampled (uniformly, without replacement) to estimate
        ``P`` and ``M``; ``None`` means ``max(2000, 10 n_basis)``.  Capped at
        ``n_samples``.  The paper asks for ``S >> n``.
    random_state : int, Generator, SeedSequence, RandomState or None, default=None
        Source of the sample, the centres and the Fourier frequencies.

    Attributes
    ----------
    kernel_ : Kernel or callable
        The resolved kernel.
    centers_ : ndarray of shape (n_basis, n_features_in) or None
        Centres of the basis functions (``None`` for ``"fourier"`` and callables).
    frequencies_, offsets_ : ndarray or None
        ``w_j`` (as columns) and ``u_j`` of the ``"fourier"`` basis.
    sample_indices_ : ndarray of int
        Training rows used to estimate ``P`` and ``M``.
    eigenvalues_ : ndarray of shape (n_components,)
        ``lambda_1 >= ... >= lambda_m``: estimated eigenvalues of the kernel operator
        ``(K f)(x) = int k(x, y) f(y) p(y) dy`` (zero beyond the rank of the reduced
        problem; negative values from a non-PSD kernel are clipped to zero).
    coefficients_ : ndarray of shape (n_basis, n_components)
        ``sqrt(lambda_i) v^(i)`` as columns: ``psi(x) = b(x) @ coefficients_``.
    n_components_ : int
        Number of eigenfunctions kept, the output width (``n_components`` capped at
        ``n_samples`` when the centres are training rows).
    basis_rank_ : int
        Numerical rank of ``P`` (``n_basis_`` unless the basis was reduced).
    n_basis_ : int
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined when ``X`` has string column names.

    Notes
    -----
    With ``G_ij = k(y_i, y_j)`` on the sample and ``B_ij = b_j(y_i)``,
    ``P = B^T B / S`` estimates ``<b_i, b_j>`` in ``L2(p)`` and ``M = B^T G B / S^2``
    estimates ``<K b_i, b_j>``; the Rayleigh quotient ``<Kf, f> / <f, f>`` of
    ``f = sum_j v_j b_j`` is ``v^T M v / v^T P v``, so the generalized eigenproblem
    ``M v = lambda P v`` (:func:`scipy.linalg.eigh`, ``v^T P v = 1``) gives the best
    approximations of the leading eigenfunctions in the span, and
    ``psi = (sqrt(lambda_i) phi_i)`` is the truncated Mercer expansion, which minimizes
    ``E[(k(x, y) - psi(x) . psi(y))^2]`` among rank-``m`` maps (Bengio et al. 2003).
    On the sample this is Rayleigh-Ritz for the empirical operator ``G / S`` on the
    range of ``B``, so ``lambda_i`` never exceeds the ``i``-th eigenvalue of ``G / S``.

    ``P`` is singular when the basis is linearly dependent on the sample (``S`` too
    small, duplicate centres).  If its smallest eigenvalue is below ``1e-10`` times its
    largest, the problem is reduced to the eigenvectors of ``P`` above that threshold
    (Rayleigh-Ritz on the remaining directions, which loses only functions of norm
    ``< 1e-5 |b|`` in ``L2(p)``) and a warning says so; the output is always finite.

    Cost: fit ``O(S^2)`` kernel evaluations and ``O(S^2 n)`` operations for ``B^T G B``
    (``G`` is never stored whole: it is built in row blocks), ``O(n^3)`` for the
    eigenproblem; transform ``O(n)`` basis evaluations and ``O(n m)`` operations per row.

    On a Dask array, ``fit`` draws the centres' rows (or k-means' sample and seed) and
    the sample on the client from global row indices, gathers those rows in one compute,
    and gives the map fitted on the same data in numpy with the same seed, whatever the
    chunking (``kernelmaps._rows``).

    With scikit-learn's ``array_api_dispatch`` on, an array of another library (PyTorch,
    CuPy, ...) makes the work run on its device: the sample, the centres and the
    frequencies are drawn on the host with the same generator (the same rows and values
    as the NumPy fit), the basis values, ``P``, ``M`` and the eigenproblem (reduced by the
    eigendecomposition of ``P``, the array API having no generalized eigensolver) are
    computed on the device in float64 where it has it, and ``transform`` in the input's
    dtype.  A basis or kernel callable runs on host copies of the rows.

    The estimates of ``P`` and ``M`` converge at the Monte Carlo rate ``O(S^{-1/2})``:
    for a kernel bounded by 1 the eigenvalues of ``G / S`` are within
    ``||T_S - T||_HS <= 4 log(2/delta) / S + sqrt(2 (1 - sum lambda_i^2) log(2/delta)
    / S)`` of those of the operator with probability ``1 - delta`` (Bernstein's inequality
    in Hilbert space; Rosasco, Belkin & De Vito 2010).

    Numerical limits: those of the kernel and the basis; with a shift-invariant kernel
    and the ``"kernel"`` basis the features are finite at any magnitude, with the
    ``"relu"`` basis the Gram matrix ``B^T B`` overflows for data beyond about 1e76
    (``fit`` refuses it).  See docs/LIMITS.md.

    References
    ----------
    Ronchetti, M. (2018). IKA: Independent Kernel Approximator. arXiv:1809.01353.
    Bengio, Y., Vincent, P. and Paiement, J.-F. (2003). Spectral clustering and kernel
    PCA are learning eigenfunctions. CIRANO.
    Rosasco, L., Belkin, M. and De Vito, E. (2010). On learning with integral operators.
    JMLR 11.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from kernelmaps import IKA
    >>> X, _ = load_digits(return_X_y=True)
    >>> Z = IKA(gamma=1e-3, n_components=64, n_basis=128, random_state=0).fit_transform(X)
    >>> Z.shape
    (1797, 64)
    """

    _kernel_requirement: ClassVar[str] = "a positive semidefinite kernel"
    _array_api: ClassVar[bool] = True

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **kernel_parameter_constraints(
            named=("gamma", "degree", "coef0"), callable_ok=True, gamma_scale=True
        ),
        "n_components": [StrictInterval(Integral, 1, None, closed="left")],
        "basis": [StrOptions({"kernel", "relu", "sigmoid", "fourier"}), callable],
        "n_basis": [StrictInterval(Integral, 1, None, closed="left"), None],
        "centers": [StrOptions(set(PREDRAWN_LANDMARK_METHODS))],
        "sample_size": [StrictInterval(Integral, 1, None, closed="left"), None],
        "random_state": ["random_state", np.random.Generator, np.random.SeedSequence],
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
        basis: str | Callable[..., Any] = "kernel",
        n_basis: int | None = None,
        centers: str = "uniform",
        sample_size: int | None = None,
        random_state: Any = None,
    ) -> None:
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.n_components = n_components
        self.basis = basis
        self.n_basis = n_basis
        self.centers = centers
        self.sample_size = sample_size
        self.random_state = random_state

    # -- basis -------------------------------------------------------------------------

    def _basis_values(self, X: Any, dtype: Any = np.float64) -> Any:
        """``B_ij = b_j(x_i)`` in ``X``'s namespace: float64 for NumPy rows (sparse ones
        too), in ``dtype`` (of ``X``'s namespace) for the rows of another library.

        A basis callable is written for NumPy arrays: it runs on host copies and its
        values are moved; the ``"kernel"`` basis of another library is
        :func:`~kernelmaps.feature_maps._nystroem_kernels.landmark_kernel`.
        """
        xp, device = get_namespace(X)
        numpy = is_numpy(xp)
        if callable(self.basis):
            return on_host(self._basis_callable, X, dtype=dtype)
        if self.basis == "fourier":
            proj = _product(X, _here(self.frequencies_, xp, device, dtype), dtype)
            proj += _here(self.offsets_, xp, device, dtype)
            return np.cos(proj, out=proj) if numpy else xp.cos(proj)
        assert self.centers_ is not None
        C = _here(self.centers_, xp, device, dtype)
        if self.basis == "kernel" and numpy:
            Cx: Any = sp.csr_matrix(C) if sp.issparse(X) else C
            return check_kernel_matrix(self.kernel_(X, Cx), X.shape[0], C.shape[0])
        if self.basis == "kernel":
            return landmark_kernel(self.kernel_, xp.astype(X, dtype, copy=False), C)
        proj = _product(X, xp.matrix_transpose(C), dtype)
        if self.basis == "relu":
            return np.maximum(proj, 0.0, out=proj) if numpy else xp.clip(proj, min=0.0)
        if numpy:
            return expit(proj, out=proj)
        e = xp.exp(-xp.abs(proj))  # the logistic function without overflow
        return xp.where(proj >= 0.0, 1.0 / (1.0 + e), e / (1.0 + e))

    def _basis_callable(self, X: np.ndarray) -> np.ndarray:
        """The values of the basis callable on NumPy rows, checked (float64)."""
        return check_kernel_matrix(
            self.basis(X),  # type: ignore[operator]
            X.shape[0],
            getattr(self, "n_basis_", None),
            source="The basis callable",
            what="basis values b_j(x_i)",
        )

    # -- fit ---------------------------------------------------------------------------

    def _fit_rows(self, rows: Rows, rng: np.random.Generator) -> None:
        """The fit from the shape and dtype of the rows, reading the rows it needs once
        (the rows in memory, not a Dask array's, set ``gamma="scale"``).

        Every random quantity is drawn before the rows are read (the centres' rows, or the
        sample and the seed of their k-means, then the sample of ``P`` and ``M``), and the
        rows of the centres and of the sample are read in one request, so that a Dask
        array is read in one compute.
        """
        stacklevel = 2  # the user's frame, counted from the caller (fit), for the warnings
        data = rows.X if rows.in_memory else None
        kernel = resolve_estimator_kernel(self, rows.n_features, data)
        self.kernel_ = kernel
        self.centers_: np.ndarray | None = None
        self.frequencies_: np.ndarray | None = None
        self.offsets_: np.ndarray | None = None
        m = int(self.n_components)
        centre_draw = None
        if callable(self.basis):
            self.n_basis_ = None
        else:
            self.n_basis_, centre_draw, m = self._draw_basis(
                rows.n_rows, rows.n_features, rows.dtype, kernel, m, rng, stacklevel=stacklevel + 1
            )
        Y = self._read_sample(rows, centre_draw, rng)
        self.n_components_ = m
        self._n_features_out = m
        self._fit_sample(kernel, Y, m, stacklevel=stacklevel + 2)

    def _fit_sample(self, kernel: Callable[..., Any], Y: Any, m: int, *, stacklevel: int) -> None:
        """The fit's linear algebra on the sample ``Y``, where its rows are, in float64
        (float32 on a device without float64): ``B``, ``P``, ``M`` and the generalized
        eigenproblem (:func:`_generalized_top_eigh`)."""
        xp, device = get_namespace(Y)
        work = accumulator_dtype(xp, device)
        B = self._basis_values(Y, work)
        self._check_basis_width(int(B.shape[1]), m)
        P, M = self._basis_grams(kernel, Y, B)
        eigenvalues, vectors, rank = _generalized_top_eigh(M, P, m, stacklevel=stacklevel + 1)
        self.basis_rank_ = rank
        lam = np.maximum(eigenvalues, 0.0)
        self.eigenvalues_ = to_namespace(lam, xp, device, dtype=work)
        self.coefficients_ = vectors * to_namespace(np.sqrt(lam), xp, device, dtype=work)

    def _check_basis_width(self, n_basis: int, m: int) -> None:
        """Set ``n_basis_`` from a basis callable's output, refusing fewer than ``m``."""
        if self.n_basis_ is None:
            self.n_basis_ = n_basis
            if m > self.n_basis_:
                raise ValueError(
                    f"n_components={m} cannot exceed the {self.n_basis_} basis functions "
                    "returned by the basis callable."
                )

    def _read_sample(
        self, rows: Rows, centre_draw: LandmarkDraw | None, rng: np.random.Generator
    ) -> Any:
        """Draw the sample of ``sample_size`` rows and read it, with the centres' rows
        (which set ``centers_``) in the same request; returns the sample's rows."""
        S = self.sample_size
        if S is None:
            S = 2000 if self.n_basis_ is None else max(2000, 10 * self.n_basis_)
        S = min(int(S), rows.n_rows)
        if self.n_basis_ is not None:
            n = self.n_basis_
            # P, M and the eigenproblem's matrices (n x n), B and G B (S x n), float64
            self._check_memory(
                8.0 * (8.0 * n * n + 3.0 * S * n),
                f"the {n} basis functions on a sample of {S} rows (n_basis^2 and "
                "sample_size x n_basis matrices)",
                "lower n_basis (or n_components) or sample_size",
            )
        sample = np.sort(rng.choice(rows.n_rows, size=S, replace=False))
        self.sample_indices_ = sample
        if centre_draw is None:
            (Y,) = rows.read([sample])
            return Y
        # Read with the sample, the centres draw nothing more from rng once read (only
        # "leverage" would, and IKA's centres are "uniform" or "kmeans").
        assert centre_draw.method != "leverage"
        centre_rows, Y = rows.read([centre_draw.rows, sample])
        self.centers_, _ = finish_landmarks(centre_draw, centre_rows, rng)
        return Y

    def _basis_grams(self, kernel: Callable[..., Any], Y: Any, B: Any) -> tuple[Any, Any]:
        """``P = B^T B / S`` and ``M = B^T K B / S^2`` on the sample ``Y``, checked finite."""
        xp, _ = get_namespace(B)
        dtype = host_dtype(Y.dtype)
        if not is_finite(B, xp):
            raise NonFiniteOutputError(
                f"IKA.fit: the basis functions have non-finite values on the training sample "
                f"(largest |x| = {largest_magnitude(to_numpy(Y)):.3g}): the basis overflowed "
                f"or returned NaN. Check the basis, or "
                f"{self._overflow_fix(dtype, capitalize=False)}."
            )
        S = int(Y.shape[0])
        P = (xp.matrix_transpose(B) @ B) / S
        M = self._project_gram(kernel, Y, B) / S**2
        if not (is_finite(P, xp) and is_finite(M, xp)):
            raise NonFiniteOutputError(
                f"IKA.fit: the Gram matrices of the basis (B^T B and B^T K B) overflow "
                f"{host_dtype(B.dtype).name} for this data (largest basis value "
                f"{largest_magnitude(to_numpy(B)):.3g}). {self._overflow_fix(dtype)}."
            )
        return P, M

    def _draw_basis(
        self,
        n_samples: int,
        n_features: int,
        dtype: Any,
        kernel: Callable[..., Any],
        m: int,
        rng: np.random.Generator,
        *,
        stacklevel: int,
    ) -> tuple[int, LandmarkDraw | None, int]:
        """Draw the Fourier frequencies, or the centres' draw (their rows are read later);
        returns the number of basis functions, the centres' draw (None for Fourier) and
        the number of eigenfunctions kept (``n_components`` capped at ``n_samples`` for
        centres drawn from the data, with a warning)."""
        if self.basis != "fourier" and m > n_samples:
            # as Nystroem: the centres are training rows, so at most n_samples
            # eigenfunctions; every sample becomes a centre
            warnings.warn(
                f"n_components={m} is larger than n_samples={n_samples}: every sample is "
                f"used as a centre and n_components_={n_samples} eigenfunctions are kept. "
                "Give a smaller n_components or more samples.",
                UserWarning,
                stacklevel=stacklevel + 1,
            )
            m = int(n_samples)
        n_basis = m if self.n_basis is None else int(self.n_basis)
        if self.basis == "fourier":
            self._check_memory(
                8.0 * 3.0 * n_basis * n_features,
                f"the {n_features} x {n_basis} frequencies of the Fourier basis",
                "lower n_basis (or n_components)",
            )
        if m > n_basis:
            raise ValueError(
                f"n_components={m} cannot exceed n_basis={n_basis}: IKA finds at most "
                "as many eigenfunctions as it has basis functions. Increase n_basis or "
                "lower n_components."
            )
        if self.basis == "fourier":
            if not isinstance(kernel, ShiftInvariantKernel):
                raise ValueError(
                    f"basis='fourier' draws frequencies from the kernel's spectral "
                    f"measure and needs a shift-invariant kernel; got {kernel!r}. Use "
                    "basis='kernel', 'relu' or 'sigmoid' for it."
                )
            W = kernel.sample_frequencies(n_basis, n_features, rng)
            self.frequencies_ = np.ascontiguousarray(W.T)
            self.offsets_ = rng.uniform(0.0, 2.0 * np.pi, size=n_basis)
            return n_basis, None, m
        draw = draw_landmarks(
            n_samples,
            n_features,
            dtype,
            self.centers,
            n_basis,
            kernel=kernel,
            rng=rng,
            name="n_basis",
            noun="centre",
            stacklevel=stacklevel + 1,
        )
        if m > draw.n_landmarks:
            raise ValueError(
                f"n_components={m} cannot exceed the number of basis functions "
                f"{draw.n_landmarks} (= n_samples); lower n_components or give more samples."
            )
        return draw.n_landmarks, draw, m

    def _project_gram(self, kernel: Callable[..., Any], Y: Any, B: Any) -> Any:
        """``B^T G B`` with ``G = k(Y, Y)`` built in row blocks, never whole (on another
        library by :func:`~kernelmaps.sampling.kernel_block`, the values NumPy sees).

        Symmetry is checked on a corner of each diagonal block (cheap, and enough to catch
        a kernel with ``k(x, y) != k(y, x)``), to the rounding of ``B``'s dtype.
        """
        xp, device = get_namespace(B)
        S, n = int(B.shape[0]), int(B.shape[1])
        out = xp.zeros((n, n), dtype=B.dtype, device=device)
        asym = scale = 0.0
        for rows in row_blocks(S, 8.0 * (S + n), max_rows=1024):
            G = kernel_block(kernel, Y[rows, :], Y)
            if not is_finite(G, xp):
                raise NonFiniteOutputError(
                    "IKA.fit: the kernel has non-finite values on the training sample "
                    f"(largest |x| = {largest_magnitude(to_numpy(Y)):.3g}). "
                    f"{self._overflow_fix(host_dtype(Y.dtype))}."
                )
            c = min(256, rows.stop - rows.start)
            corner = G[:c, rows.start : rows.start + c]
            asym = max(asym, float(xp.max(xp.abs(corner - xp.matrix_transpose(corner)))))
            scale = max(scale, float(xp.max(xp.abs(corner))))
            out += xp.matrix_transpose(B[rows, :]) @ (G @ B)
        eps = float(np.finfo(host_dtype(B.dtype)).eps)
        check_symmetric(asym, scale, eps, "IKA: the kernel matrix of the sample")
        return 0.5 * (out + xp.matrix_transpose(out))

    def _block_bytes_per_row(self, X: Any) -> float:
        return float(16 * (self.n_basis_ or 1)) + super()._block_bytes_per_row(X)

    def _transform_block(self, X: Any, out: Any, constants: Any) -> None:
        """``out = B(X) @ coefficients``: the basis in float64 on NumPy (cast once on the
        way out), in ``X``'s dtype on its device for another library."""
        xp, _ = get_namespace(X)
        work = None if is_numpy(xp) else X.dtype
        coefficients = self.coefficients_
        coefficients = coefficients if work is None else xp.astype(coefficients, work, copy=False)
        out[...] = self._basis_values(X, work) @ coefficients


def _product(X: Any, W: Any, dtype: Any) -> Any:
    """``X @ W`` in ``X``'s namespace: float64 for NumPy rows (sparse ones too), in
    ``dtype`` for the rows of another library."""
    xp, _ = get_namespace(X)
    if is_numpy(xp):
        return np.asarray(safe_sparse_dot(X, W, dense_output=True), dtype=np.float64)
    return xp.astype(X, dtype, copy=False) @ W


def _here(a: Any, xp: Any, device: Any, dtype: Any) -> Any:
    """The fitted array ``a`` (on the host during the fit) in ``dtype`` where ``xp`` and
    ``device`` are, without a copy when it is there already."""
    return xp.astype(placed(a, xp, device), dtype, copy=False)


def _generalized_top_eigh(
    M: Any, P: Any, m: int, *, stacklevel: int = 4
) -> tuple[np.ndarray, Any, int]:
    """Top ``m`` solutions of ``M v = lambda P v`` with ``v^T P v = 1``, decreasing, for
    ``M`` and ``P`` of any library, in their namespace.

    ``P = U diag(p) U^T``; when ``P`` is numerically singular (relative eigenvalue below
    ``_P_RCOND``) the problem is reduced to the well-conditioned eigenvectors of ``P``
    with a warning: ``T = U_k diag(p_k^{-1/2})`` and the top eigenpairs ``(w, u)`` of
    ``T^T M T`` give ``v = T u`` (Rayleigh-Ritz on the span of ``T``).  At full rank NumPy
    solves the generalized problem itself (:func:`scipy.linalg.eigh`); the array API has
    no generalized eigensolver, so the other libraries always take the reduced problem
    (the same solutions at full rank).  The missing solutions (beyond the reduced rank)
    are zero vectors with eigenvalue 0; the signs are those of
    :func:`~kernelmaps.feature_maps._nystroem_normalization.column_signs`.  The warnings
    are issued with ``stacklevel``.

    Returns
    -------
    eigenvalues : ndarray of shape (m,)
        float64, decreasing, on the host (zeros past the rank).
    vectors : array of shape (n, m)
        In the namespace of ``P``, zero columns past the rank.
    rank : int
    """
    xp, device = get_namespace(P)
    n = int(P.shape[0])
    p, U = scipy.linalg.eigh(P) if is_numpy(xp) else xp.linalg.eigh(P)
    p_host = to_numpy(p).astype(np.float64, copy=False)
    p_max = float(np.max(p_host))
    if p_max <= 0.0:
        _warn_vanishing_basis(stacklevel + 1)
        return np.zeros(m), xp.zeros((n, m), dtype=P.dtype, device=device), 0
    kept = np.flatnonzero(p_host > _P_RCOND * p_max)
    rank = int(kept.shape[0])
    k = min(m, rank)
    if rank == n and is_numpy(xp):
        w, V = scipy.linalg.eigh(M, P, subset_by_index=[n - k, n - 1])
    else:
        if rank < n:
            _warn_singular_basis(rank, n, stacklevel + 1)
        if is_numpy(xp):  # LAPACK's layout of the kept columns (Fortran order)
            T = U[:, kept] / np.sqrt(p[kept])
        else:
            kept_here = to_namespace(kept, xp, device)
            T = xp.take(U, kept_here, axis=1) / xp.sqrt(xp.take(p, kept_here))
        Mr = xp.matrix_transpose(T) @ M @ T
        w, Vr = _top_eigh(0.5 * (Mr + xp.matrix_transpose(Mr)), k)
        V = T @ Vr
    w, order = decreasing_eigenvalues(w, V)
    w, V = w[:k], leading_vectors(V, order, k)
    V = V * to_namespace(column_signs(V), xp, device, dtype=V.dtype)
    if k < m:
        w = np.concatenate([w, np.zeros(m - k)])
        V = xp.concat([V, xp.zeros((n, m - k), dtype=V.dtype, device=device)], axis=1)
    return w, V, rank


def _top_eigh(A: Any, k: int) -> tuple[Any, Any]:
    """Eigenpairs of the symmetric ``A`` including its ``k`` largest: those alone on
    NumPy (LAPACK's ``?syevr``, ascending), all of them otherwise."""
    xp, _ = get_namespace(A)
    if is_numpy(xp):
        r = A.shape[0]
        return scipy.linalg.eigh(A, subset_by_index=[r - k, r - 1])
    return xp.linalg.eigh(A)


def _warn_vanishing_basis(stacklevel: int) -> None:
    warnings.warn(
        "IKA: every basis function vanishes on the training sample; the map is zero.",
        UserWarning,
        stacklevel=stacklevel,
    )


def _warn_singular_basis(rank: int, n: int, stacklevel: int) -> None:
    warnings.warn(
        f"IKA: the basis Gram matrix P = B^T B / S is numerically singular (rank {rank} "
        f"of {n}: basis functions are linearly dependent on the sample, e.g. duplicate "
        "centres or too small a sample); the eigenproblem is reduced to its "
        f"{rank} well-conditioned directions. Use fewer basis functions or a larger "
        "sample_size.",
        UserWarning,
        stacklevel=stacklevel,
    )
