"""Random Fourier features: Monte Carlo, orthogonal and quasi-Monte Carlo frequencies."""

from __future__ import annotations

from numbers import Integral
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.extmath import safe_sparse_dot

from .._array_api import get_namespace, host_dtype, is_numpy, to_numpy, warn_if_tf32
from .._numerics import LIMITS_PAGE, below_overflow, ignore_fp_warnings, largest_magnitude, row_list
from .._row_blocks import cache_block_rows
from .._rows import Rows
from .._validation import StrictInterval
from ..exceptions import NonFiniteOutputError
from ..kernels import (
    Kernel,
    ShiftInvariantKernel,
    kernel_parameter_constraints,
    resolve_estimator_kernel,
)
from ..sampling import (
    draw_uniform_points,
    orthogonal_directions,
    principal_axes,
    resolve_scramble,
    rotation_sample,
    sobol_balance_message,
)
from ._base import BaseFeatureMap, register_feature_map
from ._fourier_layout import FourierLayout, fourier_features_into

__all__ = ["RandomFourierFeatures"]


@register_feature_map
class RandomFourierFeatures(BaseFeatureMap):
    """Random Fourier features for shift-invariant kernels.

    Approximates ``k(x, y) = k(x - y)`` by ``z(x) . z(y)`` with frequencies ``w_i`` drawn
    from the kernel's spectral measure ``p(w)`` (Bochner's theorem).

    Parameters
    ----------
    kernel : str or ShiftInvariantKernel, default="rbf"
        ``"rbf"``/``"gaussian"``, ``"laplacian"``, ``"cauchy"``, ``"matern"``, or a kernel
        object from :mod:`kernelmaps.kernels`.
    gamma : float or "scale", default=None
        Kernel parameter (see the kernel's class); ``None`` means ``1 / n_features``.
        Must not be given with a kernel object.
        ``"scale"`` means ``1 / (n_features * X.var())`` on the training data, as in
        scikit-learn's ``RBFSampler`` and ``SVC`` (not for Dask arrays).
    kernel_params : dict, default=None
        Other kernel parameters, e.g. ``{"nu": 2.5}`` for Matérn.
    n_components : int, default=100
        Number of output features ``D``.  ``variant="cos_sin"`` uses ``D // 2``
        frequencies, each giving a cosine and a sine; when ``D`` is odd one more frequency
        gives a single ``cos(w.x + b)`` feature, and every feature is weighted
        ``sqrt(2/D)``, which keeps the estimate unbiased.
    variant : {"cos_sin", "cos_phase"}, default="cos_sin"
        ``"cos_sin"``: ``z(x) = sqrt(1/L) [cos(w_i.x), sin(w_i.x)]_{i<L}``, ``L = D/2``
        (Algorithm 1 of Deshmukh's kernel approximation report; Sutherland & Schneider
        2015 show it has the lower variance).  ``"cos_phase"``:
        ``z(x) = sqrt(2/D) [cos(w_i.x + b_i)]_{i<D}``, ``b_i ~ U[0, 2 pi)`` (Rahimi &
        Recht 2007).  Keep ``"cos_sin"`` (the default for every sampler) with the
        quasi-random samplers: ``z(x).z(y) = (1/L) sum_i cos(w_i.(x - y))`` is then a
        quasi-Monte Carlo average of a smooth function of the points, whereas each
        ``cos_phase`` product carries the term ``cos(w_i.(x + y) + 2 b_i)``, which is not a
        function of ``x - y`` and oscillates fast in the points: most of the quasi-Monte
        Carlo gain is lost.
    sampler : {"mc", "orthogonal", "halton", "sobol"}, default="mc"
        How the frequencies are drawn.  ``"mc"``: i.i.d. from ``p``.  ``"orthogonal"``:
        orthogonal random features (Yu et al. 2016): directions orthonormal within blocks
        of ``n_features`` frequencies, norms drawn from the law of ``|w|`` (radial
        measures: Gaussian, Matérn).  ``"halton"``, ``"sobol"``: quasi-random Fourier
        features (Yang et al. 2014): low-discrepancy points of the unit cube from
        :mod:`scipy.stats.qmc` pushed through the inverse CDF of ``p``; for
        ``"cos_phase"`` the phase takes one more coordinate of the points.  Sobol' points
        keep their balance when the number of frequencies is a power of two
        (``n_components`` a power of two for ``"cos_sin"``); other sizes warn, naming the
        next one.
    scramble : {"auto", "shift", True, False}, default="auto"
        Randomization of the quasi-random points (ignored by ``"mc"`` and
        ``"orthogonal"``).  ``"shift"`` (Sobol' only): a random digital shift, every point
        of the unscrambled Joe-Kuo sequence, the origin included, XOR one uniform random
        vector; it keeps the net and its optimized low-dimensional projections.
        ``True``: scipy's scrambling (linear matrix scrambling plus a digital shift for
        Sobol', random digit permutations for Halton).  ``"auto"``: ``"shift"`` for
        Sobol', ``True`` for Halton.  Randomized points are each uniform on the cube, so
        the kernel estimate stays unbiased.  ``False``: a deterministic map, the first
        point (the origin) skipped (not a net; biased).
    rotate : {"auto", True, False}, default="auto"
        Turn the frequencies onto the principal axes of the fit data:
        ``W = M V^T`` with ``M`` the frequencies from the points and ``V`` the
        eigenvectors of the covariance of ``X``, by decreasing variance
        (:func:`kernelmaps.sampling.principal_axes`), so that the leading, best stratified
        coordinates of the quasi-random points carry the variance of ``x - y``.  For a
        radial spectral measure (Gaussian, Matérn) the law of ``w`` is invariant under
        rotations, so the kernel and the unbiasedness are unchanged; not for Laplacian or
        Cauchy products (refused).  ``"auto"``: on for ``"halton"`` and ``"sobol"`` with a
        radial kernel and at most ``4096`` features (off for ``"mc"`` and
        ``"orthogonal"``, whose laws are rotation-invariant already).  ``True`` also
        rotates ``"mc"`` / ``"orthogonal"`` frequencies (no change in law).  The fit then
        reads the values of ``X`` (else only its shape): ``O(n d^2 + d^3)`` time, ``d^2``
        memory, on at most ``10 000`` rows drawn uniformly
        (:func:`kernelmaps.sampling.rotation_sample`; from a Dask array those rows are
        read in one compute, and the frequencies equal those of the numpy fit).
    random_state : int, Generator, SeedSequence, RandomState or None, default=None
        Source of the frequencies.

    Attributes
    ----------
    kernel_ : ShiftInvariantKernel
        The kernel with its parameters resolved.
    frequencies_ : ndarray of shape (n_features_in, n_frequencies)
        The frequencies ``w_i`` as columns.
    offsets_ : ndarray or None
        The phases ``b_i``: one per frequency for ``"cos_phase"``; for ``"cos_sin"``, one
        for the extra frequency of an odd ``D``, else None.
    n_pairs_ : int
        Number of cosine/sine pairs (the first ``2 n_pairs_`` output columns are the
        cosines, then the sines, of the first ``n_pairs_`` frequencies).
    rotated_ : bool
        Whether the frequencies were turned onto the principal axes of ``X``.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined when ``X`` has string column names.

    Notes
    -----
    Cost: ``O(n d L)`` for the product ``X W`` plus ``O(n D)`` cosines, in row blocks.

    For a pair at offset ``delta`` with ``k = k(delta)``, the estimate is unbiased with
    variance ``(1/D) [1 + k(2 delta) - 2 k^2]`` for ``cos_sin`` and
    ``(1/D) [1 + k(2 delta)/2 - k^2]`` for ``cos_phase`` (Monte Carlo draws), and
    Hoeffding's inequality gives ``P(|z(x).z(y) - k| >= eps) <= 2 exp(-D eps^2 / 4)``
    (``cos_sin``) or ``2 exp(-D eps^2 / 8)`` (``cos_phase``).  ``cos_sin`` features with even
    ``D`` have ``|z(x)|^2 = 1`` exactly.  Orthogonal and scrambled quasi-random frequencies keep the
    estimate unbiased and usually lower its variance.

    Numerical limits: the projections ``w . x`` overflow when ``max|x| |w|_1`` passes the
    float range (for the Gaussian kernel about ``max|x| d sqrt(2 gamma)`` beyond 1e307 in
    float64, 1e37 in float32): ``transform`` then raises ``NonFiniteOutputError`` naming
    the rows; float32 input with frequencies beyond float32 (``gamma`` above about 1e74)
    is refused, naming float64 input.  The features are noise well before, once
    ``|w . x|`` exceeds about 1e7 (float32) or 4e15 (float64).  See docs/LIMITS.md.

    References
    ----------
    Rahimi, A. and Recht, B. (2007). Random features for large-scale kernel machines. NIPS.
    Yang, J., Sindhwani, V., Avron, H. and Mahoney, M. (2014). Quasi-Monte Carlo feature
    maps for shift-invariant kernels. ICML.
    Yu, F. X. et al. (2016). Orthogonal random features. NIPS.
    Joe, S. and Kuo, F. Y. (2008). Constructing Sobol' sequences with better
    two-dimensional projections. SIAM J. Sci. Comput.
    Dick, J. and Pillichshammer, F. (2010). Digital Nets and Sequences (random digital
    shifts, section 4.4). Cambridge University Press.
    Sutherland, D. J. and Schneider, J. (2015). On the error of random Fourier features. UAI.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from kernelmaps import RandomFourierFeatures
    >>> X, _ = load_digits(return_X_y=True)
    >>> Z = RandomFourierFeatures(gamma=1e-3, n_components=256, random_state=0).fit_transform(X)
    >>> Z.shape
    (1797, 256)
    """

    _kernel_requirement: ClassVar[str] = "a shift-invariant kernel with a spectral measure"

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **kernel_parameter_constraints(named=("gamma",), gamma_scale=True),
        "n_components": [StrictInterval(Integral, 1, None, closed="left")],
        "variant": [StrOptions({"cos_sin", "cos_phase"})],
        "sampler": [StrOptions({"mc", "orthogonal", "halton", "sobol"})],
        "scramble": ["boolean", StrOptions({"auto", "shift"})],
        "rotate": ["boolean", StrOptions({"auto"})],
        "random_state": ["random_state", np.random.Generator, np.random.SeedSequence],
    }

    def __init__(
        self,
        kernel: str | Kernel = "rbf",
        *,
        gamma: float | str | None = None,
        kernel_params: dict[str, Any] | None = None,
        n_components: int = 100,
        variant: str = "cos_sin",
        sampler: str = "mc",
        scramble: bool | str = "auto",
        rotate: bool | str = "auto",
        random_state: Any = None,
    ) -> None:
        self.kernel = kernel
        self.gamma = gamma
        self.kernel_params = kernel_params
        self.n_components = n_components
        self.variant = variant
        self.sampler = sampler
        self.scramble = scramble
        self.rotate = rotate
        self.random_state = random_state

    @classmethod
    def _supports_kernel(cls, kernel: Kernel) -> bool:
        return isinstance(kernel, ShiftInvariantKernel)

    def _fit_rows(self, rows: Rows, rng: np.random.Generator) -> None:
        """The fit from the shape and dtype of the rows; the rows that
        :func:`~kernelmaps.sampling.rotation_sample` draws with ``rng`` are read only when
        the frequencies are rotated (in one pass, a Dask array in one compute)."""
        X = rows.array()
        X = rows.empty() if X is None else X
        stacklevel = 2  # the user's frame, counted from the caller (fit), for the warnings
        n_features = X.shape[1]
        kernel = resolve_estimator_kernel(self, n_features, X)
        assert isinstance(kernel, ShiftInvariantKernel)
        layout = FourierLayout.of(self.n_components, self.variant)
        n_pairs, n_frequencies, n_phases = layout.n_pairs, layout.n_frequencies, layout.n_phases
        with_phase = n_phases > 0
        # the frequencies and the draw's temporaries (orthogonal blocks, quasi-random
        # points), float64
        self._check_memory(
            4.0 * 8.0 * n_features * n_frequencies,
            f"the {n_features} x {n_frequencies} frequency matrix",
            "lower n_components",
        )

        offsets = None
        if self.sampler == "mc":
            W = kernel.sample_frequencies(n_frequencies, n_features, rng)
        elif self.sampler == "orthogonal":
            if not kernel.radial:
                raise ValueError(
                    f"sampler='orthogonal' needs a kernel with a radial spectral measure "
                    f"(Gaussian, Matern); got {kernel!r}. Use sampler='mc', 'halton' or "
                    "'sobol' for it."
                )
            directions = orthogonal_directions(n_frequencies, n_features, rng)
            norms = kernel.sample_frequency_norms(n_frequencies, n_features, rng)
            W = directions * norms[:, None]
        else:
            dim = kernel.n_uniforms(n_features)
            scramble = resolve_scramble(self.scramble, self.sampler)
            U = self._uniform_points(
                n_frequencies, dim + with_phase, scramble, rng, stacklevel=stacklevel + 1
            )
            W = kernel.frequencies_from_uniform(U[:, :dim], n_features)
            if with_phase:
                offsets = 2.0 * np.pi * U[n_pairs:, dim]
        if with_phase and self.sampler in ("mc", "orthogonal"):  # phases after the frequencies
            offsets = rng.uniform(0.0, 2.0 * np.pi, size=n_phases)
        rotated = self._rotates(kernel, n_features)
        if rotated:
            (sample,) = rows.read([rotation_sample(rows.n_rows, rng)])
            W = W @ principal_axes(to_numpy(sample)).T  # rows of W read in the principal axes
        if not np.all(np.isfinite(W)):
            raise NonFiniteOutputError(
                f"RandomFourierFeatures.fit: frequencies beyond the float64 range were drawn "
                f"for {kernel!r} (the spectral measure scales with gamma); use a smaller "
                f"gamma or rescale the input instead (limits: {LIMITS_PAGE})."
            )

        self.kernel_ = kernel
        self.frequencies_ = np.ascontiguousarray(W.T)
        self.offsets_ = offsets
        self.n_pairs_ = n_pairs
        self.rotated_ = rotated
        self._n_features_out = self.n_components

    def _leading(self, n_components: int) -> tuple[np.ndarray, float, Any] | None:
        """The map of ``n_components`` features made of this fitted map's first
        frequencies: ``(columns, scale, map)`` with ``map.transform(X)`` equal to
        ``scale * self.transform(X)[:, columns]`` (``scale = sqrt(D / D')``, the weight of
        fewer features); None where no such map exists (an odd number with cosine/sine
        pairs, or more features than this map has).

        The first ``D'`` frequencies of a draw are a draw of ``D'`` frequencies (Monte
        Carlo: independent; orthogonal: whole blocks and part of one, as the orthogonal
        sampler makes for any ``D'``; quasi-random: the first points of the sequence), so
        a search over the number of features reads the features of every smaller map
        from the output of the largest.

        Examples
        --------
        >>> import numpy as np
        >>> from kernelmaps import RandomFourierFeatures
        >>> X = np.random.default_rng(0).normal(size=(5, 3))
        >>> big = RandomFourierFeatures(n_components=8, random_state=0).fit(X)
        >>> columns, scale, small = big._leading(4)
        >>> same = np.allclose(small.transform(X), scale * big.transform(X)[:, columns])
        >>> columns.tolist(), bool(same)
        ([0, 1, 4, 5], True)
        """
        D, width = int(self.n_components), int(n_components)
        if width > D or width < 1:
            return None
        L = int(self.n_pairs_)
        if L == 0:  # cos_phase: the first D' frequencies and phases
            columns = np.arange(width)
            assert self.offsets_ is not None
            n_frequencies, pairs, offsets = width, 0, self.offsets_[:width]
        elif width % 2 == 0 and 2 * L == D:  # cos_sin pairs: the first D' / 2 of them
            half = width // 2
            columns = np.concatenate([np.arange(half), L + np.arange(half)])
            n_frequencies, pairs, offsets = half, half, None
        else:
            return None
        small = clone(self).set_params(n_components=width)
        small.__dict__.update(
            {k: v for k, v in self.__dict__.items() if k.endswith("_") or k.startswith("_n")}
        )
        small.frequencies_ = self.frequencies_[:, :n_frequencies]
        small.offsets_ = offsets
        small.n_pairs_ = pairs
        small._n_features_out = width
        return columns, float(np.sqrt(D / width)), small

    #: The largest number of features ``rotate="auto"`` rotates for (``d^3`` eigenvectors).
    _AUTO_ROTATE_MAX_FEATURES: ClassVar[int] = 4096

    def _uniform_points(
        self,
        n_points: int,
        dimension: int,
        scramble: bool | str,
        rng: np.random.Generator,
        *,
        stacklevel: int,
    ) -> np.ndarray:
        """The quasi-random points, with the balance warning in terms of ``n_components``."""
        factor = 2 if self.variant == "cos_sin" else 1
        owner = f"RandomFourierFeatures(sampler='sobol', n_components={self.n_components}): "

        def unbalanced(n: int) -> str | None:
            message = sobol_balance_message(n, "n_components", factor)
            return None if message is None else owner + message

        return draw_uniform_points(
            n_points,
            dimension,
            self.sampler,
            scramble=scramble,
            rng=rng,
            unbalanced=unbalanced,
            stacklevel=stacklevel + 1,
        )

    def _rotates(self, kernel: ShiftInvariantKernel, n_features: int) -> bool:
        """Whether the frequencies are turned onto the data's principal axes."""
        if self.rotate == "auto":
            return (
                self.sampler in ("halton", "sobol")
                and kernel.radial
                and n_features <= self._AUTO_ROTATE_MAX_FEATURES
            )
        if self.rotate and not kernel.radial:
            raise ValueError(
                f"rotate=True needs a kernel whose spectral measure is rotation-invariant "
                f"(Gaussian, Matern); got {kernel!r}, whose frequencies would change law. "
                "Use rotate=False or 'auto' with it."
            )
        return bool(self.rotate)

    _parallel_blocks: ClassVar[bool] = True
    _array_api: ClassVar[bool] = True

    @property
    def _max_block_rows(self) -> int:  # type: ignore[override]
        d, n_frequencies = self.frequencies_.shape
        return cache_block_rows(n_frequencies, n_features=d)

    def _block_bytes_per_row(self, X: Any) -> float:
        itemsize = np.dtype(X.dtype).itemsize
        return float(self.frequencies_.shape[1] * itemsize) + super()._block_bytes_per_row(X)

    def _transform_constants(self, X: Any) -> tuple[Any, Any, float, float]:
        """The namespace of ``X``, the frequencies in its dtype (one float32 copy per
        call), ``sqrt(2/D)`` and the largest L1 norm of a frequency (the bound of
        :meth:`_finite_by_bound`)."""
        xp, _ = get_namespace(X)
        warn_if_tf32(X, "the phases w . x of random Fourier features")
        W = self._cast_fitted(self.frequencies_, X.dtype, "frequency")
        w_bound = float(xp.max(xp.sum(xp.abs(self.frequencies_), axis=0)))
        return xp, W, FourierLayout.of(self.n_components, self.variant).scale, w_bound

    def _finite_by_bound(self, X: Any, constants: tuple[Any, Any, float, float]) -> bool:
        # |w . x + b| <= max|x| |w|_1 + 2 pi: finite projections have finite cosines.
        # Finite but beyond the resolution of the cosine: refused here (past the range,
        # the block's check names the rows whose features are not finite).
        bound = largest_magnitude(X, constants[0]) * constants[3]
        if not below_overflow(bound + 2.0 * np.pi, X.dtype):
            return False
        if bound * float(np.finfo(host_dtype(X.dtype)).eps) >= 2.0 * np.pi:
            self._refuse_unresolved(X, constants[3])
        return True

    def _refuse_unresolved(self, X: Any, w_bound: float) -> None:
        """Refuse rows whose projections ``w . x`` (up to ``max|x| |w|_1``) are so large
        that their rounding, about ``|w . x| eps``, exceeds a period of the cosine: their
        features would be rounding noise, which changes with the rows transformed
        together (rows near ``1e154`` with the default gamma, say)."""
        rows = X.toarray() if sp.issparse(X) else to_numpy(X)  # an error path: on the host
        eps = float(np.finfo(rows.dtype).eps)
        with ignore_fp_warnings():
            reach = np.max(np.abs(rows), axis=1, initial=0.0) * w_bound
        bad = np.flatnonzero(~(reach * eps < 2.0 * np.pi))
        raise NonFiniteOutputError(
            f"{type(self).__name__}.transform: the features of {row_list(bad, None)} would be "
            f"rounding noise: their projections w . x reach {float(np.max(reach[bad])):.3g}, "
            f"where the {rows.dtype.name} rounding exceeds a period of the cosine. "
            f"{self._overflow_fix(rows.dtype)}."
        )

    def _transform_block(self, X: Any, out: Any, constants: tuple[Any, Any, float, float]) -> None:
        xp, W, scale, _ = constants
        L = self.n_pairs_
        if not is_numpy(xp):  # one product, its parts written into the block
            P = X @ W
            tail = P[:, L:] if self.offsets_ is not None else None
            fourier_features_into(out, P[:, :L] if L else None, tail, self.offsets_, scale, xp)
            return
        if L == 0:  # cos_phase: project straight into the output block, then cos in place
            if sp.issparse(X):
                out[:] = safe_sparse_dot(X, W, dense_output=True)
            else:
                np.matmul(X, W, out=out)
            fourier_features_into(out, None, out, self.offsets_, scale)
            return
        # The pairs' features are written while their projections are still in cache,
        # before the odd D's last cos+phase feature is projected.
        fourier_features_into(
            out, safe_sparse_dot(X, W[:, :L], dense_output=True), None, None, scale
        )
        if self.offsets_ is not None:
            tail = safe_sparse_dot(X, W[:, L:], dense_output=True)
            fourier_features_into(out[:, 2 * L :], None, tail, self.offsets_, scale)
