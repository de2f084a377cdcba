"""TensorSketch: count sketches of polynomial feature spaces through the FFT (Pham & Pagh 2013)."""

from __future__ import annotations

import math
from numbers import Integral
from typing import Any, ClassVar

import numpy as np
import scipy.fft
import scipy.sparse as sp

from .._array_api import get_namespace, host_dtype, is_numpy
from .._array_extras import fft_pair
from .._memory import check_memory
from .._numerics import largest_magnitude
from .._validation import StrictInterval
from ..kernels import (
    HomogeneousPolynomial,
    Kernel,
    Polynomial,
    kernel_parameter_constraints,
    resolve_estimator_kernel,
)
from ._base import BaseFeatureMap, register_feature_map
from ._sketch_kernels import (
    count_sketches,
    direct_bytes_per_row,
    direct_cost_factor,
    direct_sketch_into,
)

__all__ = ["TensorSketch"]

#: Longest row block: beyond this the FFT buffers leave the caches without any gain.
_MAX_BLOCK_ROWS = 256

#: Cap on the terms per row of the direct sum (the numpy route holds them per block).
_MAX_DIRECT_TERMS = 2**20


@register_feature_map
class TensorSketch(BaseFeatureMap):
    """TensorSketch features for polynomial kernels (Pham & Pagh 2013).

    ``z(x)`` is the count sketch of the tensor power ``x'^(degree)`` of
    ``x' = (sqrt(gamma) x, sqrt(coef0))``, computed without forming it: the ``degree``
    count sketches ``C_k x'`` (independent hashes ``h_k: [d'] -> [D]`` and signs ``s_k``)
    are multiplied in the Fourier domain,
    ``z(x) = irfft(prod_k rfft(C_k x'))``, a circular convolution.

    Parameters
    ----------
    kernel : str or Polynomial or HomogeneousPolynomial, default="polynomial"
        ``"polynomial"`` (``(gamma x . y + coef0)^degree``) or ``"homogeneous_polynomial"``
        (``(x . y)^degree``), or such a kernel object (then ``degree``, ``gamma`` and
        ``coef0`` must be left as None).
    degree : int, default=None
        Integer degree ``>= 1``; ``None`` means the kernel's default (3 for
        ``"polynomial"``, 2 for ``"homogeneous_polynomial"``).
    gamma : float, default=None
        Scale of the dot product, ``> 0``; ``None`` means ``1 / n_features``, the default
        of :class:`~kernelmaps.kernels.Polynomial` (as in every estimator of kernelmaps).
    coef0 : float, default=None
        Constant term, ``>= 0``; ``None`` means 1.0, :class:`~kernelmaps.kernels.Polynomial`'s
        default.  :class:`sklearn.kernel_approximation.PolynomialCountSketch` uses
        ``degree=2, gamma=1, coef0=0``, i.e. ``(x . y)^2``: pass those three values to
        reproduce its kernel (scikit-learn draws its hashes from its own random stream).
    n_components : int, default=100
        Output dimension ``D`` (the FFT is fastest for ``D`` a power of two).
    random_state : int, Generator, SeedSequence, RandomState or None, default=None
        Source of the hashes and signs.

    Attributes
    ----------
    kernel_ : Polynomial or HomogeneousPolynomial
        The kernel with its parameters resolved.
    hashes_ : ndarray of shape (degree, n_features_in + 1)
        Bucket ``h_k(j)`` of every input coordinate (the last column is the constant
        coordinate ``sqrt(coef0)``, unused when ``coef0 = 0``).
    signs_ : ndarray of shape (degree, n_features_in + 1)
        Signs ``s_k(j)``, +-1.
    n_features_in_ : int

    Notes
    -----
    Estimator: ``z(x) . z(y)`` is unbiased for ``(x' . y')^degree = k(x, y)``; with
    independent uniform hashes its variance is at most
    ``(2 + 3^degree) |x'|^(2 degree) |y'|^(2 degree) / D`` (Pham & Pagh 2013; Avron,
    Nguyen & Woodruff 2014, Lemma 2), so the error falls like ``D^-1/2``.  For
    ``degree = 1`` the map is the count sketch ``C_1 x'`` itself (no FFT is done): the
    variance is then exactly ``(|x'|^2 |y'|^2 + (x' . y')^2 - 2 sum_j x'_j^2 y'_j^2) / D``
    (Charikar, Chen & Farach-Colton 2002).

    Cost: ``O(n min(nnz^degree, degree d + degree D log D))`` time.  The circular
    convolution is computed one of two ways, whichever is cheaper (``_route``): summed
    directly over the ``d'^degree`` index tuples of the non-zero coordinates (e.g.
    ``d = 64``, degree 2, ``D = 4096``: 4225 terms per row against three FFTs of length
    4096), compiled with numba or through ``np.bincount``; or through the FFT, as
    above.  Both give the same features up to rounding.  The transform works in row blocks
    of at most 256 rows (and within scikit-learn's ``working_memory``), in the input's
    precision: float32 input is sketched, transformed with a single-precision real FFT
    and returned as float32 (complex64 spectra, no complex128 temporaries).  Memory is
    the output plus ``(2 degree + 1) D`` floats per block row on the FFT route and
    almost nothing on the compiled direct one, where scikit-learn's
    PolynomialCountSketch holds ``degree D`` complex128 values for every row at once.

    Numerical limits: the features are at most ``D (sqrt(gamma) |x|_1 + sqrt(coef0))^degree``
    in magnitude; beyond the float range (about ``|x| > 1e103`` in float64 and ``1e13`` in
    float32 for degree 3 and ``d = 16``) ``transform`` raises ``NonFiniteOutputError``.
    See docs/LIMITS.md.

    References
    ----------
    Pham, N. and Pagh, R. (2013). Fast and scalable polynomial kernels via explicit
    feature maps. KDD.
    Charikar, M., Chen, K. and Farach-Colton, M. (2002). Finding frequent items in data
    streams. ICALP.
    Avron, H., Nguyen, H. and Woodruff, D. (2014). Subspace embeddings for the
    polynomial kernel. NIPS.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from kernelmaps import TensorSketch
    >>> X = load_digits().data / 16.0
    >>> TensorSketch(degree=2, n_components=256, random_state=0).fit_transform(X).shape
    (1797, 256)
    """

    _max_block_rows: ClassVar[int | None] = _MAX_BLOCK_ROWS
    _kernel_requirement: ClassVar[str] = (
        "a polynomial kernel (gamma x . y + coef0)^degree with an integer degree"
    )

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **kernel_parameter_constraints(
            named=("degree", "gamma", "coef0"), kernel_params=False, integer_degree=True
        ),
        "n_components": [StrictInterval(Integral, 1, None, closed="left")],
        "random_state": ["random_state", np.random.Generator, np.random.SeedSequence],
    }

    def __init__(
        self,
        kernel: str | Kernel = "polynomial",
        *,
        degree: int | None = None,
        gamma: float | None = None,
        coef0: float | None = None,
        n_components: int = 100,
        random_state: Any = None,
    ) -> None:
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.n_components = n_components
        self.random_state = random_state

    @classmethod
    def _supports_kernel(cls, kernel: Kernel) -> bool:
        return isinstance(kernel, HomogeneousPolynomial) or (
            isinstance(kernel, Polynomial) and kernel.has_maclaurin_series()
        )

    def _fit(self, X: Any, rng: np.random.Generator) -> None:
        kernel = resolve_estimator_kernel(self, X.shape[1])
        if isinstance(kernel, Polynomial):
            gamma = float(kernel.gamma)  # type: ignore[arg-type]
            degree, coef0 = kernel.polynomial_degree(), float(kernel.coef0)
        else:
            assert isinstance(kernel, HomogeneousPolynomial)
            degree, gamma, coef0 = kernel.degree, 1.0, 0.0
        d = X.shape[1]
        D = self.n_components
        check_memory(
            16.0 * degree * (d + 1),
            f"{type(self).__name__}: the hashes and signs of {degree} count sketches of "
            f"{d + 1} coordinates",
            "lower the degree",
        )
        self.kernel_ = kernel
        self.hashes_ = rng.integers(0, D, size=(degree, d + 1))
        self.signs_ = 2 * rng.integers(0, 2, size=(degree, d + 1)) - 1
        self._degree = int(degree)
        self._scale = math.sqrt(gamma)
        self._constant = math.sqrt(coef0)
        self._n_features_out = D

    # -- transform ----------------------------------------------------------------------

    def _n_coordinates(self) -> int:
        """Coordinates of ``x'``: the inputs, plus the constant one when ``coef0 > 0``."""
        return self.hashes_.shape[1] - (0 if self._constant else 1)

    def _route(self) -> str:
        """``"direct"`` (the convolution summed term by term) or ``"fft"``, by cost.

        The direct sum scatters ``d'^p`` terms per row (``d'`` the coordinates of ``x'``);
        the FFT route does ``p + 1`` real FFTs of length ``D``, about
        ``(p + 1) 2.5 D log2 D`` flops plus the ``p`` count sketches.  Measured at
        ``D = 4096`` (degrees 2 and 3, ``d`` from 12 to 512), the compiled direct sum is the
        faster while ``d'^p`` is below about ``0.6 (p + 1) D log2 D``, the numpy one
        (``np.bincount``) below about ``0.06 (p + 1) D log2 D``.
        """
        p = self._degree
        if p == 1:
            return "direct"
        if p * math.log(max(self._n_coordinates(), 1)) > 700.0:
            return "fft"  # d'^p would overflow a float (and is far beyond the direct limit)
        if (p - 1) * math.log(self.hashes_.shape[1]) > math.log(_MAX_DIRECT_TERMS):
            # the compiled direct sum keeps (d + 1)^(p - 1) partial products per row
            # whether or not the constant coordinate is used (1 x 1 data at degree 30:
            # 2^29 of them, 4 GiB per thread)
            return "fft"
        terms = float(self._n_coordinates()) ** p
        fft_cost = (p + 1) * self.n_components * max(math.log2(self.n_components), 1.0)
        factor = direct_cost_factor()
        if terms <= factor * fft_cost and terms <= _MAX_DIRECT_TERMS:
            return "direct"
        return "fft"

    def _block_bytes_per_row(self, X: Any) -> float:
        itemsize = np.dtype(X.dtype).itemsize
        D = self.n_components
        dense_input = X.shape[1] * itemsize if sp.issparse(X) else 0
        if self._route() == "direct":
            terms = float(self._n_coordinates()) ** self._degree
            return dense_input + direct_bytes_per_row(itemsize, terms, D)
        return float((3 * self._degree + 2) * (D + 2) * itemsize + X.shape[1] * itemsize)

    def _transform_constants(self, X: Any) -> tuple[Any, str]:
        """The namespace of ``X`` and the route, ``"direct"`` or ``"fft"``, chosen once per
        call (the FFT route on other libraries than NumPy)."""
        xp, _ = get_namespace(X)
        return xp, self._route() if is_numpy(xp) else "fft"

    def _finite_by_bound(self, X: Any, constants: tuple[Any, str]) -> bool:
        # Every term and every spectrum value is at most |x'|_1^degree, and a sum of D of
        # them stays below D |x'|_1^degree, with |x'|_1 <= sqrt(gamma) d max|x| + sqrt(coef0).
        norm = self._scale * X.shape[1] * largest_magnitude(X, constants[0]) + self._constant
        if norm == 0.0:
            return True
        log_bound = math.log(self.n_components) + self._degree * math.log(norm)
        return log_bound < math.log(0.5 * float(np.finfo(host_dtype(X.dtype)).max))

    def _transform_block(self, X: Any, out: Any, constants: tuple[Any, str]) -> None:
        xp, route = constants
        hashes, signs, D = self.hashes_, self.signs_, self.n_components
        if route == "direct":  # NumPy only
            direct_sketch_into(X, hashes, signs, self._scale, self._constant, out)
            return
        C = count_sketches(X, hashes, signs, self._scale, self._constant, D, out.dtype, xp)
        if not is_numpy(xp):  # the FFTs by the namespace's extension or on the host
            out[...] = C[:, 0, :] if self._degree == 1 else self._convolved(C, xp)
            return
        # rfft keeps single precision: float32 -> complex64 -> float32.
        spectra = scipy.fft.rfft(C, axis=-1)
        del C
        # the product of the degree spectra, in order (one reduction, not a Python loop:
        # the same products as spectra[:, 0] * spectra[:, 1] * ..., bit for bit)
        product = np.multiply.reduce(spectra, axis=1)
        del spectra
        np.fft.irfft(product, n=D, axis=-1, out=out)

    def _convolved(self, C: Any, xp: Any) -> Any:
        """``irfft(prod_k rfft(C_k x'))`` of the count sketches ``C`` of another library
        (:func:`kernelmaps._array_extras.fft_pair`), the products in order."""
        rfft, irfft = fft_pair(xp)
        spectra = rfft(C, axis=-1)
        product = spectra[:, 0, :]
        for k in range(1, self._degree):  # in order, as np.multiply.reduce
            product = product * spectra[:, k, :]
        return irfft(product, n=self.n_components, axis=-1)

    _array_api: ClassVar[bool] = True

    def _array_bytes_per_row(self, X: Any) -> float:
        # the FFT route (the buffers of _block_bytes_per_row's) and the signed coordinates
        itemsize = np.dtype(X.dtype).itemsize
        p, D = self._degree, self.n_components
        return float(((3 * p + 2) * (D + 2) + 2 * p * (X.shape[1] + 1)) * itemsize)
