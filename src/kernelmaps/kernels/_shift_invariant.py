"""Shift-invariant kernels: Gaussian (RBF), Laplacian, Cauchy and Matérn.

Each evaluates ``k(X, Y)`` exactly and carries its spectral measure ``p(w)``, the
probability law whose characteristic function is ``k``:

=============  ===================================  =========================================
kernel         k(x, y)                              spectral measure p(w)
=============  ===================================  =========================================
Gaussian       exp(-gamma |x - y|_2^2)              N(0, 2 gamma I)
Laplacian      exp(-gamma |x - y|_1)                product of Cauchy(0, gamma)
Cauchy         prod_j 1 / (1 + gamma (x_j - y_j)^2)  product of Laplace(0, sqrt(gamma))
Matérn(nu)     Matérn of |x - y|_2, scale l         multivariate t, 2 nu d.o.f., scale 1/l
=============  ===================================  =========================================

References
----------
Rahimi, A. and Recht, B. (2007). Random features for large-scale kernel machines. NIPS.
Rasmussen, C. E. and Williams, C. K. I. (2006). Gaussian Processes for Machine Learning,
section 4.2.1 (the Matérn class and its spectral density).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from scipy import special, stats
from scipy.spatial.distance import cdist
from sklearn.metrics.pairwise import euclidean_distances, manhattan_distances
from sklearn.utils import gen_batches

from .._array_api import is_numpy
from .._numerics import largest_magnitude
from ._base import (
    BinnableKernel,
    ShiftInvariantKernel,
    _check_n_features,
    _check_positive,
    coordinatewise_sum,
    on_host_float64,
    register_kernel,
)

__all__ = ["Cauchy", "Gaussian", "Laplacian", "Matern"]

#: Largest ``d max|x|^2`` for which ``|x|^2 + |y|^2 - 2 x . y`` cannot overflow float64.
_SAFE_SQUARED = 1e300

#: Largest error of the expansion on the exponent ``gamma |x - y|^2`` (about
#: ``4 d eps gamma max|x|^2``) accepted: beyond it (a 1% error on k) the distances are
#: computed from the differences instead.
_EXPONENT_TOLERANCE = 0.01

#: Rows of X per block of the direct (scaled difference) distances.
_DIRECT_BLOCK_ELEMENTS = 1 << 22


def scaled_squared_distances(
    X: Any, Y: Any, gamma: float | None = None
) -> tuple[np.ndarray, float]:
    """``(D, s)`` with ``s^2 D[i, j] = |x_i - y_j|^2``, finite whatever the magnitudes.

    Usually ``s = 1`` and ``D`` is scikit-learn's ``euclidean_distances(X, Y,
    squared=True)`` (``|x|^2 + |y|^2 - 2 x . y``, one GEMM).  When that expansion could
    overflow (``4 d max|x|^2`` beyond ``1e300``, i.e. ``|x|`` above about ``1e149``), or,
    given the ``gamma`` that will scale it, when its rounding error on
    ``gamma |x - y|^2`` (about ``4 d eps gamma max|x|^2``) could exceed 0.01,
    ``s`` is a power of two within a factor 2 of the largest magnitude and ``D`` holds the
    squared distances of the rows divided by ``s`` (exact), computed from the
    differences themselves (no cancellation: equal rows are at distance 0 exactly), in
    row blocks.  ``s^2`` itself may overflow: callers combine it with their scale.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels._shift_invariant import scaled_squared_distances
    >>> D, s = scaled_squared_distances(np.array([[1e300, 0.0]]), np.array([[0.0, 0.0]]))
    >>> bool(np.isfinite(D).all()), float(np.sqrt(D[0, 0]) * s)
    (True, 1e+300)
    """
    same = X is Y
    largest = max(largest_magnitude(X), largest_magnitude(Y))
    d = max(X.shape[1], 1)
    precise = gamma is None or (
        4.0 * d * float(np.finfo(np.float64).eps) * gamma * largest * largest <= _EXPONENT_TOLERANCE
    )
    if largest == 0.0 or (4.0 * d * largest * largest < _SAFE_SQUARED and precise):
        return euclidean_distances(X, None if same else Y, squared=True), 1.0
    s = math.ldexp(1.0, math.frexp(largest)[1] - 1)  # a power of two, |x| / s <= 2
    Ys = (Y.toarray() if sp.issparse(Y) else np.asarray(Y)) / s
    D = np.empty((X.shape[0], Ys.shape[0]))
    step = max(1, _DIRECT_BLOCK_ELEMENTS // max(Ys.size, 1))
    for rows in gen_batches(X.shape[0], step):
        Xb = X[rows].toarray() if sp.issparse(X) else np.asarray(X[rows])
        D[rows] = cdist(Xb / s, Ys, "sqeuclidean")
    return D, s


def _squared_distances(xp: Any, X: Any, Y: Any) -> Any:
    """``|x_i - y_j|^2`` for arrays of ``xp``, in their dtype: ``|x|^2 + |y|^2 - 2 x . y``
    (one matrix product), clipped at 0 against the rounding of the expansion."""
    xx = xp.sum(X * X, axis=1)
    yy = xx if Y is X else xp.sum(Y * Y, axis=1)
    D = X @ xp.matrix_transpose(Y)
    D *= -2.0
    D += xx[:, None]
    D += yy[None, :]
    return xp.clip(D, min=0.0)


def _centred_squared_distances(xp: Any, X: Any, Y: Any) -> Any:
    """:func:`_squared_distances` of the rows less the mean ``mu`` of ``Y``: the
    distances do not change, and the rounding of the expansion, about
    ``(d + 3) eps (|x - mu|^2 + |y - mu|^2)``, is that of the spread of the data instead of
    its distance from the origin."""
    mu = xp.mean(Y, axis=0)
    Xc = X - mu
    return _squared_distances(xp, Xc, Xc if Y is X else Y - mu)


def _squared_difference(x: Any, y: Any) -> Any:
    diff = x - y
    return diff * diff


def _absolute_difference(xp: Any) -> Any:
    return lambda x, y: xp.abs(x - y)


def _scaled_exponent(D: np.ndarray, factor: float, s: float) -> np.ndarray:
    """``-factor s^2 D`` in place, with 0 where ``D = 0`` (``s^2`` may overflow)."""
    if s == 1.0:
        D *= -factor
        return D
    zero = D == 0.0
    D *= -(factor * s) * s
    D[zero] = 0.0
    return D


@register_kernel("rbf", "gaussian")
@dataclasses.dataclass(frozen=True)
class Gaussian(ShiftInvariantKernel):
    """Gaussian (RBF) kernel ``k(x, y) = exp(-gamma |x - y|^2)``.

    Parameters
    ----------
    gamma : float, default=None
        Inverse squared length scale, ``gamma = 1 / (2 sigma^2)``.  ``None`` means
        ``1 / n_features``, as in :func:`sklearn.metrics.pairwise.rbf_kernel`.

    Notes
    -----
    Spectral measure ``N(0, 2 gamma I)``; it is radial, with ``|w| = sqrt(2 gamma) chi_d``.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import Gaussian
    >>> X = np.array([[0.0, 1.0], [1.0, 1.0]])
    >>> np.round(Gaussian(gamma=0.5)(X), 4).tolist()
    [[1.0, 0.6065], [0.6065, 1.0]]
    """

    gamma: float | None = None
    radial: ClassVar[bool] = True

    def __post_init__(self) -> None:
        _check_positive("Gaussian", "gamma", self.gamma)

    def _evaluate(self, xp: Any, X: Any, Y: Any) -> Any:
        """``exp(-gamma |x - y|^2)``: on NumPy from :func:`scaled_squared_distances`
        (float64, finite at any magnitude), otherwise from one matrix product
        (:func:`_squared_distances`) in the dtype of ``X``."""
        if is_numpy(xp):
            D, s = scaled_squared_distances(X, Y, self._g)
            K = _scaled_exponent(D, self._g, s)
            return np.exp(K, out=K)
        return xp.exp(-self._g * _squared_distances(xp, X, Y))

    def sample_frequencies(
        self, n_frequencies: int, n_features: int, rng: np.random.Generator
    ) -> np.ndarray:
        scale = math.sqrt(2.0 * self._g)
        return rng.standard_normal((n_frequencies, n_features)) * scale

    def n_uniforms(self, n_features: int) -> int:
        return n_features

    def frequencies_from_uniform(self, U: np.ndarray, n_features: int) -> np.ndarray:
        return special.ndtri(U) * math.sqrt(2.0 * self._g)

    def sample_frequency_norms(
        self, n_frequencies: int, n_features: int, rng: np.random.Generator
    ) -> np.ndarray:
        chi = np.sqrt(rng.chisquare(n_features, size=n_frequencies))
        return chi * math.sqrt(2.0 * self._g)


@register_kernel("laplacian")
@dataclasses.dataclass(frozen=True)
class Laplacian(ShiftInvariantKernel, BinnableKernel):
    """Laplacian kernel ``k(x, y) = exp(-gamma |x - y|_1)`` (L1 distance).

    The same kernel as :func:`sklearn.metrics.pairwise.laplacian_kernel`.

    Parameters
    ----------
    gamma : float, default=None
        Inverse length scale; ``None`` means ``1 / n_features``.

    Notes
    -----
    The kernel is a product over coordinates of ``exp(-gamma |d_j|)``, whose spectral
    measure is Cauchy(0, gamma) in each coordinate.  Each factor is convex on
    ``[0, inf)``, so random binning applies with pitch density
    ``delta k''(delta) = gamma^2 delta exp(-gamma delta)``: a Gamma(2, 1/gamma) law.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import Laplacian
    >>> X = np.array([[0.0, 1.0], [1.0, 1.0]])
    >>> np.round(Laplacian(gamma=0.5)(X), 4).tolist()
    [[1.0, 0.6065], [0.6065, 1.0]]
    """

    gamma: float | None = None

    def __post_init__(self) -> None:
        _check_positive("Laplacian", "gamma", self.gamma)

    def _evaluate(self, xp: Any, X: Any, Y: Any) -> Any:
        """``exp(-gamma |x - y|_1)``: on NumPy from scikit-learn's
        ``manhattan_distances`` (dense or sparse), otherwise with the L1 distances summed
        coordinate by coordinate in bounded blocks
        (:func:`~kernelmaps.kernels._base.coordinatewise_sum`), in ``X``'s dtype."""
        if is_numpy(xp):
            K = manhattan_distances(X, Y)
            K *= -self._g
            return np.exp(K, out=K)
        return xp.exp(-self._g * coordinatewise_sum(xp, X, Y, _absolute_difference(xp)))

    def sample_frequencies(
        self, n_frequencies: int, n_features: int, rng: np.random.Generator
    ) -> np.ndarray:
        return rng.standard_cauchy((n_frequencies, n_features)) * self._g

    def n_uniforms(self, n_features: int) -> int:
        return n_features

    def frequencies_from_uniform(self, U: np.ndarray, n_features: int) -> np.ndarray:
        return np.tan(np.pi * (U - 0.5)) * self._g

    def sample_bin_pitch(
        self, n_grids: int, n_features: int, rng: np.random.Generator
    ) -> np.ndarray:
        return rng.gamma(2.0, 1.0 / self._g, size=(n_grids, n_features))


@register_kernel("cauchy")
@dataclasses.dataclass(frozen=True)
class Cauchy(ShiftInvariantKernel):
    """Cauchy kernel ``k(x, y) = prod_j 1 / (1 + gamma (x_j - y_j)^2)``.

    The product form of Rahimi & Recht (2007), Figure 1.

    Parameters
    ----------
    gamma : float, default=None
        Inverse squared length scale; ``None`` means ``1 / n_features``.

    Notes
    -----
    ``1 / (1 + gamma t^2)`` is the characteristic function of the Laplace distribution
    with scale ``sqrt(gamma)``, so the spectral measure is a product of those.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import Cauchy
    >>> X = np.array([[0.0, 1.0], [1.0, 1.0]])
    >>> np.round(Cauchy(gamma=0.5)(X), 4).tolist()
    [[1.0, 0.6667], [0.6667, 1.0]]
    """

    gamma: float | None = None

    def __post_init__(self) -> None:
        _check_positive("Cauchy", "gamma", self.gamma)

    def _evaluate(self, xp: Any, X: Any, Y: Any) -> Any:
        """``exp(-sum_j log1p(gamma (x_j - y_j)^2))``, the sum coordinate by coordinate: on
        NumPy in place in row blocks, otherwise in bounded blocks
        (:func:`~kernelmaps.kernels._base.coordinatewise_sum`) in ``X``'s dtype."""
        gamma = self._g
        if not is_numpy(xp):
            return xp.exp(
                -coordinatewise_sum(
                    xp, X, Y, lambda x, y: xp.log1p(gamma * _squared_difference(x, y))
                )
            )
        K = np.zeros((X.shape[0], Y.shape[0]))
        Yd = Y.toarray() if sp.issparse(Y) else Y
        for rows in gen_batches(X.shape[0], 1024):
            Xb = X[rows].toarray() if sp.issparse(X) else X[rows]
            acc = K[rows]
            for j in range(X.shape[1]):
                diff = np.subtract.outer(Xb[:, j], Yd[:, j])
                np.square(diff, out=diff)
                diff *= gamma
                acc += np.log1p(diff, out=diff)
        np.negative(K, out=K)
        return np.exp(K, out=K)

    def sample_frequencies(
        self, n_frequencies: int, n_features: int, rng: np.random.Generator
    ) -> np.ndarray:
        scale = math.sqrt(self._g)
        return rng.laplace(0.0, scale, size=(n_frequencies, n_features))

    def n_uniforms(self, n_features: int) -> int:
        return n_features

    def frequencies_from_uniform(self, U: np.ndarray, n_features: int) -> np.ndarray:
        return stats.laplace.ppf(U) * math.sqrt(self._g)


@register_kernel("matern")
@dataclasses.dataclass(frozen=True)
class Matern(ShiftInvariantKernel):
    """Matérn kernel of the Euclidean distance ``r = |x - y|_2``.

    .. math::
        k(r) = \\frac{2^{1-\\nu}}{\\Gamma(\\nu)} \\left(\\frac{\\sqrt{2\\nu}\\, r}{l}\\right)^\\nu
               K_\\nu\\left(\\frac{\\sqrt{2\\nu}\\, r}{l}\\right),

    in closed form for ``nu`` = 1/2 (``exp(-r/l)``), 3/2 and 5/2; the same kernel as
    :class:`sklearn.gaussian_process.kernels.Matern`.

    Parameters
    ----------
    nu : float, default=1.5
        Smoothness, > 0.  As ``nu -> inf`` the kernel tends to ``exp(-gamma r^2)``.
    gamma : float, default=None
        Scale through ``l = 1 / sqrt(2 gamma)`` (so that the ``nu -> inf`` limit is the
        Gaussian kernel with the same gamma).  ``None``, with ``length_scale`` also
        ``None``, means ``gamma = 1 / n_features``.
    length_scale : float, default=None
        The length scale ``l`` directly; give ``gamma`` or ``length_scale``, not both.

    Notes
    -----
    The spectral density is proportional to ``(2 nu / l^2 + |w|^2)^-(nu + d/2)``: a
    multivariate t distribution with ``2 nu`` degrees of freedom and scale ``1 / l``,
    ``w = z sqrt(2 nu / W) / l`` with ``z ~ N(0, I_d)``, ``W ~ chi^2_{2 nu}``.  It is radial.

    On the arrays of another library (a tensor, a CuPy array), ``nu`` = 1/2, 3/2 and 5/2 are
    evaluated on their device from their closed forms; any other ``nu`` needs the Bessel
    function ``K_nu``, outside the array API standard, and is computed on the host in
    float64 and moved.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import Matern
    >>> X = np.array([[0.0, 1.0], [1.0, 1.0]])
    >>> np.round(Matern(nu=1.5, gamma=0.5)(X), 4).tolist()
    [[1.0, 0.4834], [0.4834, 1.0]]
    """

    nu: float = 1.5
    gamma: float | None = None
    length_scale: float | None = None
    radial: ClassVar[bool] = True

    def __post_init__(self) -> None:
        _check_positive("Matern", "nu", self.nu, allow_none=False)
        _check_positive("Matern", "gamma", self.gamma)
        _check_positive("Matern", "length_scale", self.length_scale)
        if self.gamma is not None and self.length_scale is not None:
            raise ValueError("Matern: give gamma or length_scale, not both.")

    def resolve(self, n_features: int) -> Matern:
        _check_n_features(self, n_features)
        if self.gamma is None and self.length_scale is None:
            return dataclasses.replace(self, gamma=1.0 / n_features)
        return self

    @property
    def scale(self) -> float:
        """The length scale ``l`` (after :meth:`resolve`)."""
        if self.length_scale is not None:
            return float(self.length_scale)
        if self.gamma is None:
            raise ValueError("Matern: gamma is not resolved yet; call resolve(n_features).")
        g = self._g
        if 2.0 * g < math.inf:
            return 1.0 / math.sqrt(2.0 * g)
        return 1.0 / (math.sqrt(2.0) * math.sqrt(g))  # 2 gamma overflows beyond 9e307

    def _evaluate(self, xp: Any, X: Any, Y: Any) -> Any:
        """The Matérn kernel matrix.  On arrays of another library ``nu`` = 1/2, 3/2 and
        5/2 are evaluated from their closed forms in the dtype of ``X``; NumPy input, and
        any other ``nu`` (a Bessel function, outside the array API standard), are computed
        in float64 on the host (:meth:`_evaluate_host`).

        ``nu = 1/2``, ``exp(-r / l)``, has a kink at ``r = 0`` that turns a rounding error
        ``delta`` of ``r^2`` into ``sqrt(delta)`` on ``k``: its distances are summed from
        the differences, coordinate by coordinate in bounded blocks (exact for equal rows).
        ``nu`` = 3/2 and 5/2 are smooth in ``r^2`` at 0 (``k = 1 - c r^2 / l^2 + ...``), so
        their distances come from one matrix product
        (:func:`_centred_squared_distances`), whose rounding moves ``k`` by about
        ``nu (d + 3) eps (|x - mu|^2 + |y - mu|^2) / l^2``.
        """
        nu = float(self.nu)
        if is_numpy(xp) or nu not in (0.5, 1.5, 2.5):
            return on_host_float64(self._evaluate_host, X, Y)
        if nu == 0.5:
            D = coordinatewise_sum(xp, X, Y, _squared_difference)
            return xp.exp(-xp.sqrt(D) / self.scale)
        s = xp.sqrt(_centred_squared_distances(xp, X, Y)) * (math.sqrt(2.0 * nu) / self.scale)
        polynomial = 1.0 + s if nu == 1.5 else 1.0 + s + s * s / 3.0
        return polynomial * xp.exp(-s)

    def _evaluate_host(self, X: Any, Y: Any) -> np.ndarray:
        """The kernel matrix of float64 NumPy arrays or CSR matrices, finite at any
        magnitude (:func:`scaled_squared_distances`), any ``nu``."""
        D, scale = scaled_squared_distances(X, Y, 1.0 / self.scale / self.scale)
        if scale == 1.0:
            r = np.sqrt(D, out=D)
            r /= self.scale
        else:  # r = scale sqrt(D) / l, infinite beyond the float range (k = 0 there)
            r = np.sqrt(D, out=D)
            zero = D == 0.0
            r *= scale / self.scale
            r[zero] = 0.0
        nu = float(self.nu)
        if nu == 0.5:
            return np.exp(-r, out=r)
        if nu == 1.5:
            s = math.sqrt(3.0) * r
            K = (1.0 + s) * np.exp(-s)
        elif nu == 2.5:
            s = math.sqrt(5.0) * r
            K = (1.0 + s + s * s / 3.0) * np.exp(-s)
        else:
            s = math.sqrt(2.0 * nu) * r
            with np.errstate(invalid="ignore"):
                K = (2.0 ** (1.0 - nu) / special.gamma(nu)) * s**nu * special.kv(nu, s)
            K[s == 0.0] = 1.0
        # far apart (s beyond ~1500 for these nu) the terms give inf * 0: the kernel is 0
        K[np.isnan(K) & (s > 1.0)] = 0.0
        return K

    def sample_frequencies(
        self, n_frequencies: int, n_features: int, rng: np.random.Generator
    ) -> np.ndarray:
        z = rng.standard_normal((n_frequencies, n_features))
        w = rng.chisquare(2.0 * self.nu, size=n_frequencies)
        return z * (np.sqrt(2.0 * self.nu / w) / self.scale)[:, None]

    def n_uniforms(self, n_features: int) -> int:
        return n_features + 1

    def frequencies_from_uniform(self, U: np.ndarray, n_features: int) -> np.ndarray:
        z = special.ndtri(U[:, :n_features])
        w = special.chdtri(2.0 * self.nu, 1.0 - U[:, n_features])  # chi2 inverse CDF
        return z * (np.sqrt(2.0 * self.nu / w) / self.scale)[:, None]

    def sample_frequency_norms(
        self, n_frequencies: int, n_features: int, rng: np.random.Generator
    ) -> np.ndarray:
        chi2_d = rng.chisquare(n_features, size=n_frequencies)
        w = rng.chisquare(2.0 * self.nu, size=n_frequencies)
        return np.sqrt(chi2_d * 2.0 * self.nu / w) / self.scale
