"""Dot-product kernels ``k(x, y) = f(<x, y>)`` and their Maclaurin coefficients.

A function ``f`` gives a positive-definite kernel ``f(<x, y>)`` on the unit sphere of every
dimension exactly when ``f(t) = sum_n a_n t^n`` with every ``a_n >= 0`` (Schoenberg 1942;
Theorem 2 of the report's section 3.1).  Random Maclaurin features (Kar & Karnick 2012)
need the coefficients ``a_n`` and the radius of convergence ``R`` of the series; the
estimate they give is unbiased wherever the series converges absolutely, that is for
``|x| |y| < R``.

======================  ========================  =======================================
kernel                  f(t)                      a_n
======================  ========================  =======================================
Polynomial              (gamma t + coef0)^degree  C(degree, n) gamma^n coef0^(degree - n)
HomogeneousPolynomial   t^degree                  1 if n = degree else 0
ExponentialDotProduct   exp(gamma t)              gamma^n / n!
MaclaurinKernel         sum_n a_n t^n             given
======================  ========================  =======================================

References
----------
Schoenberg, I. J. (1942). Positive definite functions on spheres. Duke Math. J. 9.
Kar, P. and Karnick, H. (2012). Random feature maps for dot product kernels. AISTATS.
"""

from __future__ import annotations

import dataclasses
import math
from abc import abstractmethod
from collections.abc import Callable
from numbers import Integral, Real
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils.extmath import safe_sparse_dot

from .._array_api import get_namespace, is_numpy, numpy_namespace, on_host
from .._numerics import is_finite
from ..exceptions import NonFiniteOutputError
from ._base import (
    Kernel,
    _check_positive,
    _diag_input,
    _finite_number,
    _finite_real,
    register_kernel,
)

__all__ = [
    "DotProductKernel",
    "ExponentialDotProduct",
    "HomogeneousPolynomial",
    "MaclaurinKernel",
    "Polynomial",
]

#: Number of leading coefficients checked for sign when a MaclaurinKernel is built.
_N_CHECKED_COEFFICIENTS = 64


def _check_degree(owner: str, degree: Any) -> None:
    if isinstance(degree, bool) or not isinstance(degree, Integral) or degree < 1:
        raise ValueError(
            f"{owner}: degree must be an integer >= 1; got {degree!r}. A degree-0 "
            "polynomial kernel is a constant; use an integer degree of at least 1."
        )


def _check_real_degree(owner: str, degree: Any) -> None:
    if (
        isinstance(degree, (bool, np.bool_))
        or not isinstance(degree, Real)
        or not _finite_number(degree)
        or not float(degree) > 0.0
    ):
        raise ValueError(
            f"{owner}: degree must be a finite real number > 0; got {degree!r}. A degree-0 "
            "polynomial kernel is a constant; use a positive degree (e.g. 3)."
        )


def _is_integer(degree: Any) -> bool:
    """Whether ``degree`` (a finite real) is an integer (``3`` and ``3.0`` are)."""
    return isinstance(degree, Integral) or float(degree).is_integer()


def squared_row_norms(X: Any) -> np.ndarray:
    """``|x|^2`` of every row of a dense or sparse ``X``, in float64.

    ``X`` must be 2D with finite values; a row whose squared norm overflows float64
    (``|x|`` beyond about 1.3e154) raises
    :class:`~kernelmaps.exceptions.NonFiniteOutputError`.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import squared_row_norms
    >>> squared_row_norms(np.array([[0.0, 1.0], [1.0, 1.0]])).tolist()
    [1.0, 2.0]
    """
    out = raw_squared_row_norms(_diag_input(numpy_namespace(), X))
    if not is_finite(out):
        row = int(np.flatnonzero(~np.isfinite(out))[0])
        raise NonFiniteOutputError(
            f"The squared norm of row {row} of X overflows float64 (|x|^2 beyond "
            f"{np.finfo(np.float64).max:.3g}); rescale the data (limits: docs/LIMITS.md)."
        )
    return out


def raw_squared_row_norms(X: Any) -> np.ndarray:
    """``|x|^2`` of every row of a float64 ``X`` (dense or sparse), unchecked: inf where
    it overflows (for the maps' own checks, which name the fix).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import raw_squared_row_norms
    >>> raw_squared_row_norms(np.array([[3.0, 4.0], [1e200, 0.0]])).tolist()
    [25.0, inf]
    """
    with np.errstate(over="ignore"):
        if sp.issparse(X):
            return np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel()
        Xd = np.asarray(X, dtype=np.float64)
        return np.einsum("ij,ij->i", Xd, Xd)


def _finite_coefficient(kernel: Kernel, n: int, log_value: float) -> float:
    """``exp(log_value)``, the Maclaurin coefficient ``a_n``, or a clear error if it
    overflows float64 (a very large gamma)."""
    if log_value > math.log(np.finfo(np.float64).max):
        exponent = log_value / math.log(10.0)
        raise NonFiniteOutputError(
            f"{kernel!r}: the Maclaurin coefficient a_{n} is about 1e{exponent:.0f}, "
            "beyond float64; use a smaller gamma (the kernel depends on gamma x . y only: "
            "rescale X by sqrt(gamma) instead) (limits: docs/LIMITS.md)."
        )
    return math.exp(log_value)


def gram(xp: Any, X: Any, Y: Any) -> Any:
    """The dot products ``X Y^T`` of validated inputs of ``xp`` (float64 on NumPy, dense
    or sparse; in their dtype, on their device, otherwise): a fresh array, which the
    kernels may overwrite."""
    if is_numpy(xp):
        return np.asarray(safe_sparse_dot(X, Y.T, dense_output=True), dtype=np.float64)
    return X @ xp.matrix_transpose(Y)


def squared_norms(xp: Any, X: Any) -> Any:
    """``|x|^2`` of the validated rows ``X`` of ``xp`` (:func:`raw_squared_row_norms` on
    NumPy), unchecked."""
    return raw_squared_row_norms(X) if is_numpy(xp) else xp.sum(X * X, axis=1)


class DotProductKernel(Kernel):
    """A kernel ``k(x, y) = f(<x, y>)`` with ``f(t) = sum_n a_n t^n``, every ``a_n >= 0``.

    Subclasses give the coefficients (:meth:`maclaurin_coefficient`), the radius of
    convergence of the series (:meth:`radius_of_convergence`, ``inf`` for entire
    functions) and, for finite polynomials, :meth:`polynomial_degree`.  Random
    Maclaurin and compact random features accept any such kernel; TensorSketch accepts
    the polynomial ones.

    Examples
    --------
    >>> from kernelmaps.kernels import Polynomial
    >>> k = Polynomial(degree=2, gamma=1.0, coef0=1.0)
    >>> [k.maclaurin_coefficient(n) for n in range(4)], k.polynomial_degree()
    ([1.0, 2.0, 1.0, 0.0], 2)
    """

    def radius_of_convergence(self) -> float:
        """Radius of convergence ``R`` of ``sum_n a_n t^n`` (``inf`` by default)."""
        return math.inf

    def polynomial_degree(self) -> int | None:
        """Largest ``n`` with ``a_n != 0`` for a polynomial ``f``; ``None`` for a series."""
        return None

    def has_maclaurin_series(self) -> bool:
        """Whether ``f(t) = sum_n a_n t^n`` with every ``a_n >= 0`` (the random Maclaurin
        maps and TensorSketch need it): True but for a :class:`Polynomial` of non-integer
        degree, whose binomial series has coefficients of both signs."""
        return True

    @abstractmethod
    def maclaurin_coefficient(self, n: int) -> float:
        """The coefficient ``a_n = f^(n)(0) / n!`` (``>= 0``)."""

    @abstractmethod
    def _f(self, xp: Any, t: Any) -> Any:
        """``f`` applied elementwise to dot products ``t``, an array of ``xp`` that it may
        overwrite, in its dtype and on its device (float64 on NumPy)."""

    def _evaluate(self, xp: Any, X: Any, Y: Any) -> Any:
        return self._f(xp, gram(xp, X, Y))

    def _diag(self, xp: Any, X: Any) -> Any:
        return self._f(xp, squared_norms(xp, X))

    def check_norms(self, squared_norms: np.ndarray, owner: str) -> None:
        """Refuse data on which the Maclaurin series diverges.

        The series ``sum_n a_n |x . y|^n`` is bounded by ``sum_n a_n (|x| |y|)^n``, which
        converges for every pair of rows when ``max |x|^2 < R``; at or beyond the radius
        ``k(x, x)`` itself is not given by a convergent series and a random Maclaurin
        estimate has no finite mean.  Such data is refused (not only warned about).
        """
        R = self.radius_of_convergence()
        if not math.isfinite(R) or squared_norms.size == 0:
            return
        worst = float(np.max(squared_norms))
        if worst >= R:
            raise ValueError(
                f"{owner}: the Maclaurin series of {self!r} has radius of convergence "
                f"{R:g}, but the data has a row with squared norm {worst:g} >= {R:g}, "
                "where the series diverges. Rescale X so that every row has squared norm "
                f"below {R:g} (e.g. sklearn.preprocessing.normalize and a factor < 1)."
            )


@register_kernel("polynomial", "poly")
@dataclasses.dataclass(frozen=True)
class Polynomial(DotProductKernel):
    """Polynomial kernel ``k(x, y) = (gamma <x, y> + coef0)^degree``.

    The same kernel and defaults as :func:`sklearn.metrics.pairwise.polynomial_kernel`.

    Parameters
    ----------
    degree : float, default=3
        Degree ``p > 0``: an integer for a positive definite kernel and for the random
        Maclaurin maps and TensorSketch; a non-integer degree is accepted, as by
        scikit-learn, by the maps and models that only evaluate the kernel (Nystroem,
        IKA, the ridge models).
    gamma : float, default=None
        Scale of the dot product, > 0; ``None`` means ``1 / n_features``.
    coef0 : float, default=1.0
        Constant term, >= 0 (a negative ``coef0`` gives negative Maclaurin coefficients
        and, for even degrees, a kernel that is not positive definite).

    Notes
    -----
    ``a_n = C(degree, n) gamma^n coef0^(degree - n)`` for ``n <= degree``, 0 beyond.

    A non-integer degree ``p``: ``(gamma x . y + coef0)^p`` is computed as scikit-learn's
    :func:`~sklearn.metrics.pairwise.polynomial_kernel` computes it, and is real only
    where the base ``gamma x . y + coef0`` is nonnegative (for every pair when the data
    is nonnegative, or when ``coef0 >= gamma max|x| max|y|``).  Where the base is
    negative scikit-learn returns NaN; this kernel raises a ``ValueError`` naming the
    fix.  Such a kernel is not positive definite in general: its binomial series
    ``sum_n C(p, n) gamma^n coef0^(p - n) t^n`` has coefficients of both signs
    (Schoenberg 1942), so it has no random Maclaurin map or TensorSketch, and Nystroem's
    eigenvalue cut-off drops the negative part of its landmark kernel matrix.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import Polynomial
    >>> X = np.array([[0.0, 1.0], [1.0, 1.0]])
    >>> np.round(Polynomial(degree=2, gamma=1.0, coef0=1.0)(X), 4).tolist()
    [[4.0, 4.0], [4.0, 9.0]]
    """

    degree: float = 3
    gamma: float | None = None
    coef0: float = 1.0

    def __post_init__(self) -> None:
        _check_real_degree("Polynomial", self.degree)
        _check_positive("Polynomial", "gamma", self.gamma)
        if not _finite_real(self.coef0) or self.coef0 < 0:
            raise ValueError(
                f"Polynomial: coef0 must be a finite number >= 0; got {self.coef0!r}. A "
                "negative coef0 gives negative Maclaurin coefficients (no valid kernel)."
            )

    def has_maclaurin_series(self) -> bool:
        return _is_integer(self.degree)

    def _integer_degree(self) -> int:
        """The degree as an int, or a clear error for a non-integer degree."""
        if not _is_integer(self.degree):
            raise ValueError(
                f"{self!r}: a non-integer degree has no Maclaurin series with nonnegative "
                "coefficients (its binomial series alternates in sign); use an integer "
                "degree, or Nystroem for this kernel."
            )
        return int(self.degree)

    def polynomial_degree(self) -> int:
        return self._integer_degree()

    def maclaurin_coefficient(self, n: int) -> float:
        degree = self._integer_degree()
        if n < 0 or n > degree:
            return 0.0
        gamma, coef0 = float(self.gamma), float(self.coef0)  # type: ignore[arg-type]
        if coef0 == 0.0 and n < degree:
            return 0.0
        log_value = math.log(math.comb(degree, n)) + n * math.log(gamma)
        if n < degree:
            log_value += (degree - n) * math.log(coef0)
        return _finite_coefficient(self, n, log_value)

    def _f(self, xp: Any, t: Any) -> Any:
        t *= self._g
        t += float(self.coef0)
        if not _is_integer(self.degree) and bool(xp.any(t < 0.0)):
            self._refuse_negative_base(float(xp.min(t)))
        return np.power(t, self.degree, out=t) if is_numpy(xp) else t ** float(self.degree)

    def _refuse_negative_base(self, lowest: float) -> None:
        """Refuse a negative ``gamma x . y + coef0`` (down to ``lowest``) for a
        non-integer degree."""
        raise ValueError(
            f"{self!r}: gamma x . y + coef0 is negative (down to {lowest:.3g}) "
            "for some pairs of rows, where a non-integer degree has no real power "
            "(scikit-learn's polynomial_kernel gives NaN there); use an integer degree, "
            "nonnegative data, or coef0 >= gamma max|x| max|y|."
        )


@register_kernel("homogeneous_polynomial")
@dataclasses.dataclass(frozen=True)
class HomogeneousPolynomial(DotProductKernel):
    """Homogeneous polynomial kernel ``k(x, y) = <x, y>^degree``.

    Parameters
    ----------
    degree : int, default=2
        Integer degree ``p >= 1``.

    Notes
    -----
    ``a_degree = 1``, every other coefficient 0; ``Polynomial(degree, gamma=1, coef0=0)``.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import HomogeneousPolynomial
    >>> X = np.array([[0.0, 1.0], [1.0, 1.0]])
    >>> np.round(HomogeneousPolynomial(degree=2)(X), 4).tolist()
    [[1.0, 1.0], [1.0, 4.0]]
    """

    degree: int = 2

    def __post_init__(self) -> None:
        _check_degree("HomogeneousPolynomial", self.degree)

    def polynomial_degree(self) -> int:
        return int(self.degree)

    def maclaurin_coefficient(self, n: int) -> float:
        return 1.0 if n == self.degree else 0.0

    def _f(self, xp: Any, t: Any) -> Any:
        return np.power(t, self.degree, out=t) if is_numpy(xp) else t ** float(self.degree)


@register_kernel("exponential_dot_product", "exp_dot")
@dataclasses.dataclass(frozen=True)
class ExponentialDotProduct(DotProductKernel):
    """Exponential dot-product kernel ``k(x, y) = exp(gamma <x, y>)``.

    Parameters
    ----------
    gamma : float, default=None
        Scale, > 0; ``None`` means ``1 / n_features``.

    Notes
    -----
    ``a_n = gamma^n / n!``; the series converges everywhere (``R = inf``).  On the unit
    sphere, ``exp(-gamma |x - y|^2 / 2) = exp(-gamma) exp(gamma x . y)``.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import ExponentialDotProduct
    >>> X = np.array([[0.0, 1.0], [1.0, 1.0]])
    >>> np.round(ExponentialDotProduct(gamma=1.0)(X), 4).tolist()
    [[2.7183, 2.7183], [2.7183, 7.3891]]
    """

    gamma: float | None = None

    def __post_init__(self) -> None:
        _check_positive("ExponentialDotProduct", "gamma", self.gamma)

    def maclaurin_coefficient(self, n: int) -> float:
        if n < 0:
            return 0.0
        log_value = n * math.log(float(self.gamma)) - math.lgamma(n + 1)  # type: ignore[arg-type]
        return _finite_coefficient(self, n, log_value)

    def _f(self, xp: Any, t: Any) -> Any:
        t *= self._g
        return np.exp(t, out=t) if is_numpy(xp) else xp.exp(t)


@register_kernel("maclaurin")
@dataclasses.dataclass(frozen=True)
class MaclaurinKernel(DotProductKernel):
    """Any dot-product kernel ``f(<x, y>)`` given by its Maclaurin coefficients.

    Parameters
    ----------
    coefficients : callable
        ``n -> a_n``, non-negative for every ``n >= 0``.  The first 64 (or up to
        ``max_degree``) are checked when the kernel is built, and every coefficient a
        feature map uses is checked again when it is drawn.
    function : callable, default=None
        ``f`` itself, applied elementwise to an array of dot products, for exact
        evaluation.  Without it the kernel sums the series until the terms fall below
        ``1e-16`` of the running sum (at most 10 000 terms).
    radius : float, default=inf
        Radius of convergence of the series; data with a row of squared norm
        ``>= radius`` is refused by the random Maclaurin maps.
    max_degree : int, default=None
        For a polynomial ``f``: the largest ``n`` with ``a_n != 0``.

    Notes
    -----
    On the arrays of another library (a tensor, a CuPy array) the dot products are one
    matrix product on their device; ``function`` is applied there when, called on that
    array, it returns an array of the same library and device (a closed form written
    with operators and array API functions, ``lambda t: 1 / (1 - t / 2)``); otherwise
    (a function written for NumPy, or no function: the series) ``f`` is applied on the
    host in float64 and the result moved.

    Examples
    --------
    ``f(t) = 1 / (1 - t / 2)`` (radius 2):

    >>> from kernelmaps.kernels import MaclaurinKernel
    >>> k = MaclaurinKernel(lambda n: 0.5**n, function=lambda t: 1 / (1 - t / 2), radius=2.0)
    """

    coefficients: Callable[[int], float]
    function: Callable[[np.ndarray], np.ndarray] | None = None
    radius: float = math.inf
    max_degree: int | None = None

    def __post_init__(self) -> None:
        if not callable(self.coefficients):
            raise TypeError(
                "MaclaurinKernel: coefficients must be a callable n -> a_n; got "
                f"{self.coefficients!r}."
            )
        if self.function is not None and not callable(self.function):
            raise TypeError(f"MaclaurinKernel: function must be callable; got {self.function!r}.")
        if self.radius != math.inf:
            _check_positive("MaclaurinKernel", "radius", self.radius, allow_none=False)
        if self.max_degree is not None and (
            isinstance(self.max_degree, bool)
            or not isinstance(self.max_degree, Integral)
            or self.max_degree < 0
        ):
            raise ValueError(
                f"MaclaurinKernel: max_degree must be None or an integer >= 0; got "
                f"{self.max_degree!r}."
            )
        n_checked = _N_CHECKED_COEFFICIENTS if self.max_degree is None else int(self.max_degree) + 1
        for n in range(n_checked):
            self.maclaurin_coefficient(n)

    def radius_of_convergence(self) -> float:
        return float(self.radius)

    def polynomial_degree(self) -> int | None:
        return None if self.max_degree is None else int(self.max_degree)

    def maclaurin_coefficient(self, n: int) -> float:
        if self.max_degree is not None and n > self.max_degree:
            return 0.0
        value = self.coefficients(n)
        try:
            a = float(value)
        except (TypeError, ValueError):
            raise ValueError(
                f"MaclaurinKernel: coefficients({n}) returned {value!r}, not a number."
            ) from None
        if not np.isfinite(a) or a < 0:
            raise ValueError(
                f"MaclaurinKernel: coefficients({n}) = {a!r}; every Maclaurin coefficient "
                "must be finite and >= 0 for f(x . y) to be a positive-definite kernel "
                "(Schoenberg 1942). Check the coefficient callable."
            )
        return a

    def _f(self, xp: Any, t: Any) -> Any:
        """``function(t)`` where ``function`` is given and, called on an array ``t`` of
        another library, returns an array of ``xp`` on the device of ``t`` of ``t``'s shape
        (a closed form written with operators and array API functions); else ``f(t)`` on
        the host in float64 (``function`` written for NumPy, or the series sum), moved
        back."""
        if self.function is not None and not is_numpy(xp):
            try:
                out = self.function(t)
                same = get_namespace(out)[0] is xp and get_namespace(out, t)[0] is xp
            except Exception:  # a function written for NumPy arrays only
                same = False
            if same and tuple(out.shape) == tuple(t.shape):
                return xp.astype(out, t.dtype)
        return on_host(self._f_host, t)

    def _f_host(self, t: np.ndarray) -> np.ndarray:
        """``f(t)`` of a NumPy array, in float64: ``function`` or the series."""
        t = t.astype(np.float64, copy=False)
        if self.function is not None:
            return np.asarray(self.function(t), dtype=np.float64)
        if math.isfinite(self.radius) and t.size and np.max(np.abs(t)) >= self.radius:
            raise ValueError(
                f"MaclaurinKernel: a dot product reaches {np.max(np.abs(t)):g}, at or beyond "
                f"the radius of convergence {self.radius:g}; the series diverges there."
            )
        total = np.zeros_like(t)
        power = np.ones_like(t)
        n_max = 10_000 if self.max_degree is None else int(self.max_degree)
        for n in range(n_max + 1):
            a = self.maclaurin_coefficient(n)
            if a:
                term = a * power
                total += term
                if (
                    self.max_degree is None
                    and n > 8
                    and np.all(np.abs(term) <= 1e-16 * np.abs(total))
                ):
                    break
            power = power * t
        return total
