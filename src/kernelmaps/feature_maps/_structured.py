"""Structured random Fourier features for wide inputs: Fastfood and SORF.

Both replace the dense ``D x d`` Gaussian matrix of random Fourier features by products
of Walsh-Hadamard matrices ``H`` and random diagonal matrices, in blocks of ``d`` rows,
``d`` being the number of input features rounded up to a power of two (the input is
zero-padded).  A projection then costs ``O(D log d)`` per row through fast
Walsh-Hadamard transforms (:mod:`._hadamard`) instead of ``O(D d)``, and the map stores
``O(D)`` numbers instead of ``O(D d)``.  The cosines and sines are those of
:class:`~kernelmaps.feature_maps.RandomFourierFeatures`, with the same conventions.
"""

from __future__ import annotations

import math
from numbers import Integral
from typing import Any, ClassVar, NamedTuple

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import StrOptions

from .._array_api import get_namespace, is_numpy
from .._numerics import below_overflow, largest_magnitude
from .._row_blocks import cache_block_rows
from .._validation import StrictInterval
from ..kernels import (
    Gaussian,
    Kernel,
    ShiftInvariantKernel,
    kernel_parameter_constraints,
    resolve_estimator_kernel,
)
from ._base import BaseFeatureMap, register_feature_map
from ._fourier_layout import FourierLayout, fourier_features_into
from ._hadamard import fastfood_projection, next_power_of_two, sorf_projection

__all__ = ["Fastfood", "StructuredOrthogonalFeatures"]


class _Projection(NamedTuple):
    """Per-transform constants: the structured product's parameters in the input dtype."""

    xp: Any  # the namespace of the input and of the fitted arrays
    project: Any  # fastfood_projection or sorf_projection
    parameters: tuple[np.ndarray, ...]
    scale: float
    gain: float  # max |projection| / max |x|, bounding every intermediate value too


class _StructuredFourierFeatures(BaseFeatureMap):
    """Shared machinery: kernel checks, frequency layout, the products and the cosines.

    Subclasses draw their matrices (``_draw``) and name the product of
    :mod:`._hadamard` with its parameters (``_projection``).
    """

    _kernel_requirement: ClassVar[str] = (
        "a shift-invariant kernel with a radial spectral measure (Gaussian, Matern)"
    )

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **kernel_parameter_constraints(named=("gamma",)),
        "n_components": [StrictInterval(Integral, 1, None, closed="left")],
        "variant": [StrOptions({"cos_sin", "cos_phase"})],
        "random_state": ["random_state", np.random.Generator, np.random.SeedSequence],
    }

    # Set by subclasses' __init__.
    kernel: str | Kernel
    gamma: float | None
    kernel_params: dict[str, Any] | None
    n_components: int
    variant: str

    @classmethod
    def _supports_kernel(cls, kernel: Kernel) -> bool:
        return isinstance(kernel, ShiftInvariantKernel) and bool(kernel.radial)

    def _fit(self, X: Any, rng: np.random.Generator) -> None:
        n_features = X.shape[1]
        kernel = resolve_estimator_kernel(self, n_features)
        assert isinstance(kernel, ShiftInvariantKernel)
        # The layout of RandomFourierFeatures (pairs, then cos+phase features).
        layout = FourierLayout.of(self.n_components, self.variant)
        d = next_power_of_two(n_features)
        n_blocks = -(-layout.n_frequencies // d)
        # at most ten (n_blocks, d) arrays of 8 bytes at once: the parameters, the draw's
        # temporaries (the tiled permutations, the chi draws) and the transform's casts
        self._check_memory(
            10.0 * 8.0 * n_blocks * d,
            f"the {n_blocks} blocks of {d} (n_features_in_ padded to a power of two) "
            "structured frequencies",
            "lower n_components",
        )

        self._draw(kernel, n_blocks, d, rng)
        n_phases = layout.n_phases
        self.offsets_ = rng.uniform(0.0, 2.0 * np.pi, size=n_phases) if n_phases else None
        self.kernel_ = kernel
        self.n_pairs_ = layout.n_pairs
        self.n_frequencies_ = layout.n_frequencies
        self.n_blocks_ = n_blocks
        self.padded_dim_ = d
        self._n_features_out = self.n_components

    def _draw(self, kernel: ShiftInvariantKernel, n_blocks: int, d: int, rng: Any) -> None:
        raise NotImplementedError

    def _projection(self, dtype: Any, xp: Any) -> tuple[Any, tuple[Any, ...]]:
        """The product of :mod:`._hadamard` and its parameters (the fitted arrays, of
        ``xp``) cast to ``dtype``."""
        raise NotImplementedError

    _parallel_blocks: ClassVar[bool] = True

    @property
    def _max_block_rows(self) -> int:  # type: ignore[override]
        # no product with a dense matrix: only the cache size matters
        return cache_block_rows(self.n_blocks_ * self.padded_dim_)

    def _block_bytes_per_row(self, X: Any) -> float:
        itemsize = np.dtype(X.dtype).itemsize
        # the projection buffer plus one temporary of the same size (gathers, FWHT)
        work = 2.0 * self.n_blocks_ * self.padded_dim_ * itemsize
        return work + super()._block_bytes_per_row(X)

    def _projection_gain(self, xp: Any) -> float:
        """Bound on ``max |v| / max |x|`` over every intermediate ``v`` of the product."""
        raise NotImplementedError

    def _transform_constants(self, X: Any) -> _Projection:
        xp, _ = get_namespace(X)
        project, parameters = self._projection(X.dtype, xp)
        return _Projection(
            xp,
            project,
            parameters,
            FourierLayout.of(self.n_components, self.variant).scale,
            self._projection_gain(xp),
        )

    def _finite_by_bound(self, X: Any, constants: _Projection) -> bool:
        # finite projections (and phases) have finite cosines and sines
        bound = largest_magnitude(X, constants.xp) * constants.gain + 2.0 * np.pi
        return below_overflow(bound, X.dtype)

    def _project(self, X: Any, dtype: Any, constants: _Projection | None = None) -> Any:
        """Projections ``x W^T`` of the rows of ``X``, shape (b, n_blocks * d), in ``dtype``
        (NumPy rows made dense and C-contiguous first)."""
        if constants is None:
            constants = self._transform_constants(np.empty(0, dtype=dtype))
        xp = constants.xp
        if is_numpy(xp):
            X = np.ascontiguousarray(X.toarray() if sp.issparse(X) else X, dtype=dtype)
        return constants.project(X, *constants.parameters, xp=xp)

    _array_api: ClassVar[bool] = True

    def _transform_block(self, X: Any, out: Any, constants: _Projection) -> None:
        projection = self._project(X, out.dtype, constants)
        L = self.n_pairs_
        tail = projection[:, L : self.n_frequencies_] if self.offsets_ is not None else None
        pairs = projection[:, :L] if L else None
        fourier_features_into(out, pairs, tail, self.offsets_, constants.scale, constants.xp)


def _random_signs(shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    return rng.integers(0, 2, size=shape).astype(np.float64) * 2.0 - 1.0


@register_feature_map
class Fastfood(_StructuredFourierFeatures):
    """Fastfood random features: Gaussian-like frequencies from Hadamard products.

    Approximates a shift-invariant kernel with a radial spectral measure ``p(w)``
    (Gaussian, Matérn) by the features of
    :class:`~kernelmaps.feature_maps.RandomFourierFeatures`, with the frequency matrix
    replaced by ``D' / d`` stacked blocks (``d`` = ``n_features_in_`` rounded up to a
    power of two, the input zero-padded to ``d``)

    .. math:: V_j = \\frac{1}{\\sqrt{d}} S_j H G_j \\Pi_j H B_j,
              \\qquad S_j = \\operatorname{diag}(r_{j1}, ..., r_{jd}) / \\|G_j\\|_2,

    with ``H`` the ``d x d`` Walsh-Hadamard matrix (entries ``+-1``), ``B_j`` a diagonal
    of random signs, ``Pi_j`` a random permutation, ``G_j`` a diagonal of standard
    normals and ``r_ji`` i.i.d. draws of the law of ``|w|`` under ``p`` in dimension
    ``d`` (``sqrt(2 gamma) chi_d`` for the Gaussian kernel).

    Parameters
    ----------
    kernel : str or ShiftInvariantKernel, default="rbf"
        ``"rbf"``/``"gaussian"``, ``"matern"``, or a kernel object of
        :mod:`kernelmaps.kernels` whose spectral measure is radial.  Others (Laplacian,
        Cauchy: product measures) are refused; use
        :class:`~kernelmaps.feature_maps.RandomFourierFeatures` for them.
    gamma : float, default=None
        Kernel parameter (see the kernel's class); ``None`` means ``1 / n_features``.
        Must not be given with a kernel object.
    kernel_params : dict, default=None
        Other kernel parameters, e.g. ``{"nu": 2.5}`` for Matérn.
    n_components : int, default=100
        Number of output features ``D``, laid out as in
        :class:`~kernelmaps.feature_maps.RandomFourierFeatures`: ``"cos_sin"`` uses
        ``D // 2`` frequencies (plus one cos+phase feature when ``D`` is odd),
        ``"cos_phase"`` ``D`` frequencies; every feature is weighted ``sqrt(2/D)``.
        ``ceil(n_frequencies / d)`` blocks are drawn and the surplus rows of the last
        block are discarded, so ``D`` need not be a multiple of ``d``.
    variant : {"cos_sin", "cos_phase"}, default="cos_sin"
        ``"cos_sin"``: ``z(x) = sqrt(2/D) [cos(v_i.x), sin(v_i.x)]``;
        ``"cos_phase"``: ``z(x) = sqrt(2/D) [cos(v_i.x + b_i)]``, ``b_i ~ U[0, 2 pi)``.
    random_state : int, Generator, SeedSequence, RandomState or None, default=None
        Source of the random matrices.

    Attributes
    ----------
    kernel_ : ShiftInvariantKernel
        The kernel with its parameters resolved.
    signs_ : ndarray of shape (n_blocks, padded_dim)
        The diagonals of ``B_j`` (``+-1``).
    permutations_ : ndarray of shape (n_blocks, padded_dim)
        ``Pi_j`` as index arrays: ``(Pi_j v)_k = v[permutations_[j, k]]``.
    gaussians_ : ndarray of shape (n_blocks, padded_dim)
        The diagonals of ``G_j``.
    norms_ : ndarray of shape (n_blocks, padded_dim)
        The frequency norms ``r_ji = |v_ji|``.
    offsets_ : ndarray or None
        The phases ``b_i`` (as in :class:`RandomFourierFeatures`).
    n_pairs_ : int
        Number of cosine/sine pairs (the first ``2 n_pairs_`` output columns).
    n_frequencies_ : int
        Number of frequencies used, the first rows of the stacked ``V_j``.
    n_blocks_ : int
        Number of blocks, ``ceil(n_frequencies_ / padded_dim_)``.
    padded_dim_ : int
        ``d``: ``n_features_in_`` rounded up to a power of two.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined when ``X`` has string column names.

    See Also
    --------
    RandomFourierFeatures : the same features with dense i.i.d. or orthogonal frequencies.
    StructuredOrthogonalFeatures : Hadamard products with orthogonal rows.

    Notes
    -----
    *Exact law of every frequency.*  Given ``B_j`` and ``Pi_j``, ``M = Pi_j H B_j`` has
    orthogonal rows of norm ``sqrt(d)``, so row ``i`` of ``H G_j M`` is
    ``sum_k (H_ik g_k) M_k``: a ``N(0, d I_d)`` vector whose norm is exactly
    ``sqrt(d) |G_j|_2`` for every ``i``.  Its direction is therefore uniform on the sphere
    and independent of ``G_j``'s norm, and ``v_ji`` = ``r_ji`` times that direction has
    exactly the law ``p`` (padded to ``d`` dimensions, whose marginal on the first
    ``n_features`` coordinates is the kernel's measure there, as the Gaussian and Matérn
    kernels are defined in every dimension).  Hence ``E[z(x).z(y)] = k(x - y)``
    exactly: the estimate is unbiased, as for Monte Carlo RFF.

    *Variance.*  Frequencies of one block share ``B, Pi, G`` and are dependent;
    different blocks are independent.  With ``D`` a multiple of ``2d`` (``cos_sin``) the
    estimate is the mean of ``n_blocks_`` independent block means, each in
    ``[-1, 1]``, so ``P(|z(x).z(y) - k| >= eps) <= 2 exp(-n_blocks eps^2 / 2)``.  Le et al.
    (2013, Theorem 8) show the variance is that of i.i.d. features plus a term that
    vanishes as ``d`` grows; in practice it is close to Monte Carlo RFF (see
    ``docs/results/structured_vs_dense.md``).

    *Cost.*  ``2`` fast Walsh-Hadamard transforms per block: ``O(D log d)`` per row
    (``2 n_blocks d log2 d`` additions, against ``2 d D`` flops for the dense product),
    plus the ``O(D)`` cosines; ``O(D)`` parameters (``4 D`` numbers) instead of
    ``O(d D)``.  Sparse input is densified one row block at a time.  The transforms
    run compiled (numba) when enabled, see :func:`kernelmaps.config_context`.

    Numerical limits: as :class:`RandomFourierFeatures`; each Hadamard product gains at
    most a factor ``d`` (about ``|x| > 1e306`` in float64, ``1e37`` in float32 for
    ``d = 16``).  See docs/LIMITS.md.

    References
    ----------
    Le, Q., Sarlós, T. and Smola, A. (2013). Fastfood - approximating kernel expansions in
    loglinear time. ICML.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from kernelmaps import Fastfood
    >>> X, _ = load_digits(return_X_y=True)
    >>> Z = Fastfood(gamma=1e-3, n_components=256, random_state=0).fit_transform(X)
    >>> Z.shape
    (1797, 256)
    """

    def __init__(
        self,
        kernel: str | Kernel = "rbf",
        *,
        gamma: float | None = None,
        kernel_params: dict[str, Any] | None = None,
        n_components: int = 100,
        variant: str = "cos_sin",
        random_state: Any = None,
    ) -> None:
        self.kernel = kernel
        self.gamma = gamma
        self.kernel_params = kernel_params
        self.n_components = n_components
        self.variant = variant
        self.random_state = random_state

    def _draw(
        self, kernel: ShiftInvariantKernel, n_blocks: int, d: int, rng: np.random.Generator
    ) -> None:
        self.signs_ = _random_signs((n_blocks, d), rng)
        self.permutations_ = rng.permuted(np.tile(np.arange(d), (n_blocks, 1)), axis=1)
        self.gaussians_ = rng.standard_normal((n_blocks, d))
        self.norms_ = kernel.sample_frequency_norms(n_blocks * d, d, rng).reshape(n_blocks, d)

    def _projection(self, dtype: Any, xp: Any) -> tuple[Any, tuple[Any, ...]]:
        parameters = (
            xp.astype(self.signs_, dtype),
            xp.astype(self.permutations_, xp.int64, copy=False),
            xp.astype(self.gaussians_, dtype),
            self._cast_fitted(self._row_scales(xp), dtype, "frequency norm"),
        )
        return fastfood_projection, parameters

    def _projection_gain(self, xp: Any) -> float:
        # |H v|_inf <= |v|_1: the first H gains n_features_in_, the second d; then G and S
        largest_g = float(xp.max(xp.abs(self.gaussians_)))
        largest_s = float(xp.max(xp.abs(self._row_scales(xp))))
        return self.n_features_in_ * max(largest_g, 1.0) * self.padded_dim_ * max(largest_s, 1.0)

    def _row_scales(self, xp: Any) -> Any:
        """``diag(S_j) / sqrt(d)``: ``r_ji / (sqrt(d) |G_j|)``, shape (n_blocks, d)."""
        g_norms = xp.sqrt(xp.sum(self.gaussians_ * self.gaussians_, axis=1, keepdims=True))
        return self.norms_ / (math.sqrt(self.padded_dim_) * g_norms)


@register_feature_map
class StructuredOrthogonalFeatures(_StructuredFourierFeatures):
    """Structured orthogonal random features (SORF): ``H D1 H D2 H D3`` frequency blocks.

    Approximates a shift-invariant kernel with a radial spectral measure (Gaussian,
    Matérn) by the features of
    :class:`~kernelmaps.feature_maps.RandomFourierFeatures` with stacked frequency
    blocks (``d`` = ``n_features_in_`` rounded up to a power of two, input zero-padded)

    .. math:: W_j = R_j \\, \\tilde H D_{j1} \\tilde H D_{j2} \\tilde H D_{j3},
              \\qquad \\tilde H = H / \\sqrt{d},

    ``D_jm`` diagonals of random signs, ``R_j = diag(r_j1, ..., r_jd)`` the frequency
    norms.  ``norms="fixed"`` is the SORF of Yu et al. (2016), ``r = sqrt(d) / sigma``
    (``sigma = 1 / sqrt(2 gamma)``, Gaussian kernel only); ``norms="radial"`` draws
    ``r_ji`` i.i.d. from the law of ``|w|`` under the kernel's spectral measure, as
    their ORF does with Haar-orthogonal directions.

    Parameters
    ----------
    kernel : str or ShiftInvariantKernel, default="rbf"
        ``"rbf"``/``"gaussian"``, ``"matern"``, or a kernel object with a radial spectral
        measure; others are refused (use
        :class:`~kernelmaps.feature_maps.RandomFourierFeatures`).
    gamma : float, default=None
        Kernel parameter; ``None`` means ``1 / n_features``.
    kernel_params : dict, default=None
        Other kernel parameters, e.g. ``{"nu": 2.5}`` for Matérn.
    n_components : int, default=100
        Number of output features ``D``, laid out and weighted as in
        :class:`~kernelmaps.feature_maps.RandomFourierFeatures`.
    variant : {"cos_sin", "cos_phase"}, default="cos_sin"
        As in :class:`~kernelmaps.feature_maps.RandomFourierFeatures`.
    norms : {"radial", "fixed"}, default="radial"
        ``"radial"``: i.i.d. norms from the kernel's radial law (any radial kernel; the
        norm contributes no bias).  ``"fixed"``: every row has norm ``sqrt(2 gamma d)``,
        the paper's SORF (Gaussian kernel only).
    random_state : int, Generator, SeedSequence, RandomState or None, default=None
        Source of the random signs and norms.

    Attributes
    ----------
    kernel_ : ShiftInvariantKernel
        The kernel with its parameters resolved.
    signs_ : ndarray of shape (n_blocks, 3, padded_dim)
        The diagonals of ``D_j1, D_j2, D_j3`` (``+-1``; ``D_j3`` is applied first).
    norms_ : ndarray of shape (n_blocks, padded_dim)
        The row norms ``r_ji = |w_ji|``.
    offsets_ : ndarray or None
        The phases ``b_i`` (as in :class:`RandomFourierFeatures`).
    n_pairs_ : int
        Number of cosine/sine pairs (the first ``2 n_pairs_`` output columns).
    n_frequencies_ : int
        Number of frequencies used, the first rows of the stacked ``W_j``.
    n_blocks_ : int
        Number of blocks, ``ceil(n_frequencies_ / padded_dim_)``.
    padded_dim_ : int
        ``d``: ``n_features_in_`` rounded up to a power of two.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined when ``X`` has string column names.

    See Also
    --------
    RandomFourierFeatures : ``sampler="orthogonal"`` gives Haar-orthogonal (ORF)
        directions, unbiased, at ``O(d D)`` per row.
    Fastfood : Hadamard products with exactly Gaussian rows (unbiased).

    Notes
    -----
    *Exact structure.*  ``tilde H D`` is orthogonal, so the rows of ``W_j`` are exactly
    orthogonal with norms ``r_ji``: ``W_j W_j^T = R_j^2``.  Blocks are independent.

    *Bias.*  SORF is only asymptotically unbiased.  Each row's direction is a
    discrete, not a uniform, random unit vector, so ``E[z(x).z(y)]`` differs from
    ``k(x - y)``; Yu et al. (2016, Theorem 3) bound the difference for the Gaussian
    kernel by ``6 |x - y| / (sigma sqrt(d))``, i.e. ``O(1 / sqrt(d))``, and observe
    it to be far smaller in practice.  The bias does not shrink with ``D``: for large
    ``D`` on narrow inputs (small ``d``) the error levels off where dense RFF keeps
    improving.  Use :class:`Fastfood` or ``RandomFourierFeatures(sampler="orthogonal")``
    when exact unbiasedness matters.

    *Variance.*  Orthogonal rows make the ``d`` frequencies of a block negatively
    correlated, which lowers the variance below that of i.i.d. features for the Gaussian
    kernel (Yu et al. 2016, Theorem 1, for Haar-orthogonal blocks; SORF matches ORF
    empirically).  With ``D`` a multiple of ``2d`` (``cos_sin``) the estimate is a mean
    of ``n_blocks_`` independent block means in ``[-1, 1]``.

    *Cost.*  Three fast Walsh-Hadamard transforms per block: ``O(D log d)`` per row
    (``3 n_blocks d log2 d`` additions), plus the ``O(D)`` cosines; ``O(D)`` parameters
    (``4 D`` numbers) instead of ``O(d D)``.  Sparse input is densified one row block at
    a time.

    Numerical limits: as :class:`RandomFourierFeatures`; each Hadamard product gains at
    most a factor ``d`` (about ``|x| > 1e306`` in float64, ``1e36`` in float32 for
    ``d = 16``).  See docs/LIMITS.md.

    References
    ----------
    Yu, F. X., Suresh, A. T., Choromanski, K., Holtmann-Rice, D. and Kumar, S. (2016).
    Orthogonal random features. NIPS.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from kernelmaps import StructuredOrthogonalFeatures
    >>> X, _ = load_digits(return_X_y=True)
    >>> sorf = StructuredOrthogonalFeatures(gamma=1e-3, n_components=256, random_state=0)
    >>> sorf.fit_transform(X).shape
    (1797, 256)
    """

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **_StructuredFourierFeatures._parameter_constraints,
        "norms": [StrOptions({"radial", "fixed"})],
    }

    def __init__(
        self,
        kernel: str | Kernel = "rbf",
        *,
        gamma: float | None = None,
        kernel_params: dict[str, Any] | None = None,
        n_components: int = 100,
        variant: str = "cos_sin",
        norms: str = "radial",
        random_state: Any = None,
    ) -> None:
        self.kernel = kernel
        self.gamma = gamma
        self.kernel_params = kernel_params
        self.n_components = n_components
        self.variant = variant
        self.norms = norms
        self.random_state = random_state

    def _draw(
        self, kernel: ShiftInvariantKernel, n_blocks: int, d: int, rng: np.random.Generator
    ) -> None:
        self.signs_ = _random_signs((n_blocks, 3, d), rng)
        if self.norms == "radial":
            norms = kernel.sample_frequency_norms(n_blocks * d, d, rng).reshape(n_blocks, d)
        else:
            if not isinstance(kernel, Gaussian):
                raise ValueError(
                    f"norms='fixed' (rows of norm sqrt(d) / sigma) is defined for the "
                    f"Gaussian kernel only; got {kernel!r}. Use norms='radial' for it."
                )
            norms = np.full((n_blocks, d), math.sqrt(2.0 * kernel._g * d))
        self.norms_ = norms

    def _projection_gain(self, xp: Any) -> float:
        # |H v|_inf <= |v|_1: the first H gains n_features_in_, the next two d each
        largest_s = float(xp.max(xp.abs(self.norms_))) / self.padded_dim_**1.5
        return self.n_features_in_ * self.padded_dim_**2 * max(largest_s, 1.0)

    def _projection(self, dtype: Any, xp: Any) -> tuple[Any, tuple[Any, ...]]:
        row_scales = self.norms_ / self.padded_dim_**1.5
        row_scales = self._cast_fitted(row_scales, dtype, "frequency norm")
        return sorf_projection, (xp.astype(self.signs_, dtype), row_scales)
