"""TensorSketch: count sketches of polynomial feature spaces through the FFT (Pham & Pagh 2013)."""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
import scipy.fft
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval

from ..kernels import HomogeneousPolynomial, Kernel, Polynomial, get_kernel_class, resolve_kernel
from ._base import BaseFeatureMap

__all__ = ["TensorSketch"]

#: scikit-learn's PolynomialCountSketch defaults, used for parameters left as None.
_SKETCH_DEFAULTS = {"degree": 2, "gamma": 1.0, "coef0": 0.0}

#: Longest row block: beyond this the FFT buffers leave the caches without any gain.
_MAX_BLOCK_ROWS = 256


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
        Degree ``>= 1``; ``None`` means 2, as in
        :class:`sklearn.kernel_approximation.PolynomialCountSketch`.
    gamma : float, default=None
        ``None`` means 1.0 (PolynomialCountSketch's default; note that
        :class:`~kernelmaps.kernels.Polynomial` alone defaults to ``1 / n_features``).
    coef0 : float, default=None
        ``None`` means 0.0 (PolynomialCountSketch's default); must be ``>= 0``.
    n_components : int, default=100
        Output dimension ``D`` (the FFT is fastest for ``D`` a power of two).
    random_state : int, Generator, SeedSequence, RandomState or None, default=None
        Source of the hashes and signs.

    Attributes
    ----------
    kernel_ : Polynomial or HomogeneousPolynomial
        The kernel with its parameters resolved.
    hashes_ : ndarray of shape (degree, n_features_in_ + 1)
        Bucket ``h_k(j)`` of every input coordinate (the last column is the constant
        coordinate ``sqrt(coef0)``, unused when ``coef0 = 0``).
    signs_ : ndarray of shape (degree, n_features_in_ + 1)
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

    Cost: ``O(n (degree d + degree D log D))`` time.  The transform works in row blocks
    of at most 256 rows (and within scikit-learn's ``working_memory``), in the input's
    precision: float32 input is sketched, transformed with a single-precision real FFT
    and returned as float32 (complex64 spectra, no complex128 temporaries).  Memory is
    the output plus ``(2 degree + 1) D`` floats per block row, where scikit-learn's
    PolynomialCountSketch holds ``degree D`` complex128 values for every row at once.

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
        "kernel": [str, Kernel],
        "degree": [Interval(Integral, 1, None, closed="left"), None],
        "gamma": [Interval(Real, 0.0, None, closed="neither"), None],
        "coef0": [Interval(Real, 0.0, None, closed="left"), None],
        "n_components": [Interval(Integral, 1, None, closed="left")],
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
        return isinstance(kernel, (Polynomial, HomogeneousPolynomial))

    def _fit(self, X: Any, rng: np.random.Generator) -> None:
        named = {"degree": self.degree, "gamma": self.gamma, "coef0": self.coef0}
        if isinstance(self.kernel, str) and get_kernel_class(self.kernel) is Polynomial:
            named = {k: _SKETCH_DEFAULTS[k] if v is None else v for k, v in named.items()}
        kernel = self._check_kernel(resolve_kernel(self.kernel, X.shape[1], None, **named))
        if isinstance(kernel, Polynomial):
            degree, gamma, coef0 = kernel.degree, float(kernel.gamma), float(kernel.coef0)  # type: ignore[arg-type]
        else:
            assert isinstance(kernel, HomogeneousPolynomial)
            degree, gamma, coef0 = kernel.degree, 1.0, 0.0
        d = X.shape[1]
        D = self.n_components
        self.kernel_ = kernel
        self.hashes_ = rng.integers(0, D, size=(degree, d + 1))
        self.signs_ = 2 * rng.integers(0, 2, size=(degree, d + 1)) - 1
        self._degree = int(degree)
        self._scale = math.sqrt(gamma)
        self._constant = math.sqrt(coef0)
        self._n_features_out = D

    def _block_bytes_per_row(self, X: Any) -> float:
        itemsize = np.dtype(X.dtype).itemsize
        D = self.n_components
        return float((3 * self._degree + 2) * (D + 2) * itemsize + X.shape[1] * itemsize)

    def _count_sketches(self, X: Any, dtype: np.dtype) -> np.ndarray:
        """The ``degree`` count sketches of the rows ``X``, shape (rows, degree, D)."""
        p, d1 = self.hashes_.shape
        d = d1 - 1
        D = self.n_components
        C = np.zeros((X.shape[0], p, D), dtype=dtype)
        signs = self.signs_.astype(dtype) * dtype.type(self._scale)
        if sp.issparse(X):
            for k in range(p):
                S_k = sp.csr_matrix(
                    (signs[k, :d], (np.arange(d), self.hashes_[k, :d])), shape=(d, D)
                )
                C[:, k] = (X @ S_k).toarray()
        else:
            # one strided axpy per input coordinate: O(rows * d * degree)
            for k in range(p):
                C_k = C[:, k]
                h_k = self.hashes_[k]
                for j in range(d):
                    C_k[:, h_k[j]] += signs[k, j] * X[:, j]
        if self._constant:
            for k in range(p):
                C[:, k, self.hashes_[k, d]] += dtype.type(self.signs_[k, d] * self._constant)
        return C

    def _transform_block(self, X: Any, out: np.ndarray) -> None:
        C = self._count_sketches(X, out.dtype)
        if self._degree == 1:
            out[:] = C[:, 0]
            return
        # rfft keeps single precision: float32 -> complex64 -> float32.
        spectra = scipy.fft.rfft(C, axis=-1)
        product = spectra[:, 0]
        for k in range(1, self._degree):
            product *= spectra[:, k]
        out[:] = scipy.fft.irfft(product, n=self.n_components, axis=-1)
