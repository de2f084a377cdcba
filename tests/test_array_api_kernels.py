"""The kernels on the arrays of other libraries: ``k(X, Y)`` and ``k.diag(X)`` on X's device.

Each kernel evaluated on a place of ``tests/_array_api.py`` is compared with the NumPy
kernel on the same values.  The device computes in the dtype of ``X``; NumPy computes in
float64 (and rounds float32 results once), so the two differ by the device's rounding:
``tol = c eps M``, with ``eps`` the dtype's machine epsilon, ``M`` the magnitude the
rounding scales with (stated per kernel below: a distance, a sum of the terms, a Gram
entry times the slope of ``f``) and ``c = d + 4``: ``d`` roundings in a sum over the
``d`` coordinates (or in a dot product), plus at most four in the elementwise functions
and the final cast.  The kernels without an array API form (Matérn of another ``nu``, a
Maclaurin kernel without ``function``) compute on the host in float64 and round once.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from kernelmaps.exceptions import NonFiniteOutputError
from kernelmaps.kernels import (
    AdditiveChi2,
    Cauchy,
    Cosine,
    ExponentialDotProduct,
    ExponentiatedChi2,
    Gaussian,
    HistogramIntersection,
    HomogeneousPolynomial,
    Kernel,
    Laplacian,
    Linear,
    MaclaurinKernel,
    Matern,
    NegativeChi2,
    Polynomial,
    Sigmoid,
    SkewedChi2,
    _base,
)
from tests._array_api import PLACES, Place, assert_at, assert_close, dispatch, host

D = 6


def _data() -> tuple[np.ndarray, np.ndarray]:
    """Non-negative rows (the chi-squared kernels' domain) with zeros in places, so that
    terms with ``x + y = 0`` occur, and one row of ``Y`` equal to a row of ``X``."""
    rng = np.random.default_rng(0)
    X = rng.uniform(0.0, 1.5, size=(23, D))
    Y = rng.uniform(0.0, 1.5, size=(17, D))
    X[:, 0] = 0.0
    Y[:5, 0] = 0.0
    X[3, 2:] = 0.0
    Y[4] = X[7]
    return X, Y


def _sq(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    return ((X[:, None, :] - Y[None, :, :]) ** 2).sum(axis=2)


def _l1(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    return np.abs(X[:, None, :] - Y[None, :, :]).sum(axis=2)


def _centred_size(X: np.ndarray, Y: np.ndarray) -> float:
    mu = Y.mean(axis=0)
    return float(np.max(((X - mu) ** 2).sum(1)) + np.max(((Y - mu) ** 2).sum(1)))


def _norms(X: np.ndarray, Y: np.ndarray) -> float:
    return float(np.max(np.linalg.norm(X, axis=1)) * np.max(np.linalg.norm(Y, axis=1)))


def _sums(X: np.ndarray, Y: np.ndarray) -> float:
    return float(np.max(X.sum(1)) + np.max(Y.sum(1)))


#: (kernel, M(X, Y, K)): the magnitude of the rounding of each kernel's device form.
CASES: list[tuple[Kernel, Callable[[np.ndarray, np.ndarray, np.ndarray], float]]] = [
    # exp(-gamma D): gamma times the (uncentred) expansion's size, as in test_array_api_core
    (Gaussian(gamma=0.2), lambda X, Y, K: 0.2 * _centred_size(X, 0 * Y) + 1.0),
    # exp(-gamma |x - y|_1): gamma times the L1 distance
    (Laplacian(gamma=0.3), lambda X, Y, K: 0.3 * float(_l1(X, Y).max()) + 1.0),
    # exp(-sum log1p(gamma (x - y)^2)): the sum of the logarithms
    (Cauchy(gamma=0.7), lambda X, Y, K: float(np.log1p(0.7 * _sq(X, Y)).max()) + 1.0),
    # exp(-r / l), r summed from the differences: r / l
    (Matern(nu=0.5, gamma=0.4), lambda X, Y, K: math.sqrt(0.8 * float(_sq(X, Y).max())) + 1.0),
    # smooth in r^2: nu / l^2 times the centred expansion's size (l^2 = 1 / (2 gamma))
    (Matern(nu=1.5, gamma=0.4), lambda X, Y, K: 1.5 * 0.8 * _centred_size(X, Y) + 1.0),
    (Matern(nu=2.5, length_scale=1.3), lambda X, Y, K: 2.5 / 1.69 * _centred_size(X, Y) + 1.0),
    # host fallback: one rounding of the float64 result
    (Matern(nu=1.2, gamma=0.4), lambda X, Y, K: 1.0),
    # f(x . y): the Gram entry's size |x| |y| times the slope of f, and f's own rounding
    (
        Polynomial(degree=3, gamma=0.5, coef0=1.0),
        lambda X, Y, K: 3 * 0.5 * float(np.max(K)) ** (2 / 3) * _norms(X, Y) + float(np.max(K)),
    ),
    (
        Polynomial(degree=2.5, gamma=0.5, coef0=1.0),
        lambda X, Y, K: 2.5 * 0.5 * float(np.max(K)) ** 0.6 * _norms(X, Y) + float(np.max(K)),
    ),
    (
        HomogeneousPolynomial(degree=2),
        lambda X, Y, K: 2 * float(np.max(K)) ** 0.5 * _norms(X, Y) + float(np.max(K)),
    ),
    (
        ExponentialDotProduct(gamma=0.2),
        lambda X, Y, K: float(np.max(K)) * (0.2 * _norms(X, Y) + 1.0),
    ),
    # a closed form f written with operators runs on the device; the series on the host
    (
        MaclaurinKernel(lambda n: 0.05**n, function=lambda t: 1.0 / (1.0 - t / 20.0), radius=20.0),
        lambda X, Y, K: float(np.max(K)) ** 2 * _norms(X, Y) / 20.0 + float(np.max(K)),
    ),
    (MaclaurinKernel(lambda n: 0.05**n, radius=20.0), lambda X, Y, K: float(np.max(K))),
    (Linear(), lambda X, Y, K: _norms(X, Y)),
    (Sigmoid(gamma=0.1, coef0=-0.3), lambda X, Y, K: 0.1 * _norms(X, Y) + 1.0),
    (Cosine(), lambda X, Y, K: 2.0),
    # the chi-squared sums: the sum of the terms' magnitudes, x + y
    (AdditiveChi2(), lambda X, Y, K: _sums(X, Y)),
    (ExponentiatedChi2(gamma=0.6), lambda X, Y, K: 0.6 * _sums(X, Y) + 1.0),
    (NegativeChi2(), lambda X, Y, K: _sums(X, Y)),
    (HistogramIntersection(), lambda X, Y, K: _sums(X, Y)),
    # sum of three logarithms of size log(x + c) per coordinate
    (SkewedChi2(skewedness=0.5), lambda X, Y, K: 3.0 * D * math.log(2.0 / 0.5) + 1.0),
]


def _ids(case: tuple[Kernel, Any]) -> str:
    kernel = case[0]
    extra = f"-nu{kernel.nu}" if isinstance(kernel, Matern) else ""
    extra += "-f" if isinstance(kernel, MaclaurinKernel) and kernel.function else ""
    return type(kernel).__name__ + extra


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_kernel_matrix_follows_x(place: Place, case: tuple[Kernel, Any]) -> None:
    kernel, magnitude = case
    X, Y = (a.astype(place.dtype) for a in _data())
    expected = kernel(X, Y).astype(np.float64)
    with dispatch():
        K = kernel(place.asarray(X), place.asarray(Y))
        K_xx = kernel(place.asarray(X))
    assert_at(K, place)
    assert K.dtype == place.asarray(X).dtype
    X64, Y64 = X.astype(np.float64), Y.astype(np.float64)
    tol = (D + 4) * place.eps * magnitude(X64, Y64, expected)
    assert_close(K, expected, tol, repr(kernel))
    expected_xx = kernel(X).astype(np.float64)
    tol_xx = (D + 4) * place.eps * magnitude(X64, X64, expected_xx)
    assert_close(K_xx, expected_xx, tol_xx, f"{kernel!r} on X alone")


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_kernel_diagonal_follows_x(place: Place, case: tuple[Kernel, Any]) -> None:
    kernel, magnitude = case
    X = _data()[0].astype(place.dtype)
    expected = kernel.diag(X)
    with dispatch():
        out = kernel.diag(place.asarray(X))
    assert_at(out, place)
    assert out.dtype == place.asarray(X).dtype
    X64 = X.astype(np.float64)
    K = kernel(X64)
    assert_close(out, expected, (D + 4) * place.eps * magnitude(X64, X64, K), repr(kernel))


@pytest.mark.parametrize("place", PLACES)
def test_coordinate_blocks_give_the_same_sums(
    place: Place, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Blocks of one row and one coordinate (the bound on the temporaries at its
    smallest) sum the same terms as one block: equal up to the order of the sums."""
    X, Y = (place.asarray(a) for a in _data())
    kernels = [Laplacian(gamma=0.3), Cauchy(gamma=0.7), AdditiveChi2(), Matern(nu=0.5)]
    with dispatch():
        whole = [k(X, Y) for k in kernels]
        monkeypatch.setattr(_base, "ARRAY_BLOCK_ELEMENTS", 5)
        blocked = [k(X, Y) for k in kernels]
    for kernel, a, b in zip(kernels, whole, blocked, strict=True):
        assert_close(a, host(b).astype(np.float64), 4 * D * place.eps, repr(kernel))


@pytest.mark.parametrize("place", PLACES)
def test_the_domain_checks_run_on_the_device(place: Place) -> None:
    X, Y = _data()
    negative = X.copy()
    negative[2, 3] = -0.5
    with dispatch():
        for kernel in (AdditiveChi2(), ExponentiatedChi2(), HistogramIntersection()):
            with pytest.raises(ValueError, match="Negative values"):
                kernel(place.asarray(negative), place.asarray(Y))
            with pytest.raises(ValueError, match="Negative values"):
                kernel.diag(place.asarray(negative))
        with pytest.raises(ValueError, match="greater than -skewedness"):
            SkewedChi2(skewedness=0.4)(place.asarray(negative), place.asarray(Y))
        with pytest.raises(ValueError, match="non-integer degree has no real power"):
            Polynomial(degree=2.5, coef0=0.0)(place.asarray(X - 1.0), place.asarray(Y))


@pytest.mark.parametrize("place", PLACES)
def test_an_overflow_is_refused_on_the_device(place: Place) -> None:
    X = np.full((3, 2), 30.0)
    with dispatch(), pytest.raises(NonFiniteOutputError, match="overflowed"):
        ExponentialDotProduct(gamma=1.0)(place.asarray(X))
    with dispatch(), pytest.raises(NonFiniteOutputError, match="overflowed"):
        ExponentialDotProduct(gamma=1.0).diag(place.asarray(X))
