"""Exact dot-product kernels: values, Maclaurin coefficients and refused parameters."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics.pairwise import polynomial_kernel

from kernelmaps.kernels import (
    DotProductKernel,
    ExponentialDotProduct,
    HomogeneousPolynomial,
    MaclaurinKernel,
    Polynomial,
    make_kernel,
)


@pytest.fixture
def data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.standard_normal((9, 5)), rng.standard_normal((6, 5))


@pytest.mark.parametrize(
    "params",
    [{}, {"degree": 2}, {"degree": 4, "gamma": 0.3, "coef0": 2.0}, {"degree": 1, "coef0": 0.0}],
)
def test_polynomial_matches_sklearn(data, params) -> None:
    X, Y = data
    np.testing.assert_allclose(Polynomial(**params)(X, Y), polynomial_kernel(X, Y, **params))
    np.testing.assert_allclose(
        Polynomial(**params)(sp.csr_matrix(X), Y), polynomial_kernel(X, Y, **params)
    )


def test_polynomial_defaults_are_sklearns() -> None:
    assert Polynomial() == Polynomial(degree=3, gamma=None, coef0=1.0)
    assert make_kernel("polynomial") == Polynomial()
    assert make_kernel("poly", degree=2) == Polynomial(degree=2)


def test_float32_kept(data) -> None:
    X, Y = data
    K = Polynomial(degree=2)(X.astype(np.float32), Y.astype(np.float32))
    assert K.dtype == np.float32


def test_homogeneous_and_exponential(data) -> None:
    X, Y = data
    np.testing.assert_allclose(HomogeneousPolynomial(3)(X, Y), (X @ Y.T) ** 3)
    np.testing.assert_allclose(
        HomogeneousPolynomial(3)(X, Y), Polynomial(degree=3, gamma=1.0, coef0=0.0)(X, Y)
    )
    np.testing.assert_allclose(ExponentialDotProduct(gamma=0.2)(X, Y), np.exp(0.2 * X @ Y.T))
    np.testing.assert_allclose(ExponentialDotProduct()(X, Y), np.exp(X @ Y.T / 5))


@pytest.mark.parametrize(
    "kernel",
    [
        Polynomial(degree=3, gamma=0.5, coef0=2.0),
        HomogeneousPolynomial(4),
        ExponentialDotProduct(gamma=0.7),
        MaclaurinKernel(lambda n: 0.25**n, radius=4.0),
    ],
    ids=repr,
)
def test_maclaurin_series_reproduces_the_kernel(kernel: DotProductKernel) -> None:
    t = np.linspace(-0.9, 0.9, 13)
    series = sum(kernel.maclaurin_coefficient(n) * t**n for n in range(80))
    np.testing.assert_allclose(series, kernel._f(np, t.copy()), rtol=1e-12)
    assert all(kernel.maclaurin_coefficient(n) >= 0 for n in range(80))


def test_maclaurin_kernel_with_and_without_function(data) -> None:
    X, Y = data
    X, Y = X / 10, Y / 10
    exp_series = MaclaurinKernel(lambda n: 1.0 / math.factorial(n))
    np.testing.assert_allclose(exp_series(X, Y), np.exp(X @ Y.T), rtol=1e-13)
    geometric = MaclaurinKernel(
        lambda n: 0.5**n, function=lambda t: 1.0 / (1.0 - t / 2.0), radius=2.0
    )
    np.testing.assert_allclose(geometric(X, Y), 1.0 / (1.0 - X @ Y.T / 2.0))
    assert geometric.radius_of_convergence() == 2.0
    polynomial = MaclaurinKernel(lambda n: [1.0, 2.0, 1.0][n], max_degree=2)
    np.testing.assert_allclose(polynomial(X, Y), (1.0 + X @ Y.T) ** 2)
    assert polynomial.polynomial_degree() == 2


def test_diag_matches_the_matrix(data) -> None:
    X, _ = data
    for kernel in (Polynomial(degree=2), ExponentialDotProduct(gamma=0.1)):
        np.testing.assert_allclose(kernel.diag(X), np.diag(kernel(X)))
        np.testing.assert_allclose(kernel.diag(sp.csr_matrix(X)), np.diag(kernel(X)))


@pytest.mark.parametrize("degree", [0, -1, 2.5, True])
def test_bad_degree_refused(degree) -> None:
    with pytest.raises(ValueError, match="degree must be an integer >= 1"):
        HomogeneousPolynomial(degree=degree)


@pytest.mark.parametrize("degree", [0, -1, 0.0, -2.5, float("inf"), float("nan"), True, "3"])
def test_bad_polynomial_degree_refused(degree) -> None:
    with pytest.raises(ValueError, match="degree must be a finite real number > 0"):
        Polynomial(degree=degree)


@pytest.mark.parametrize("degree", [0.5, 2.5, 3.1])
def test_real_degree_polynomial_is_scikit_learn_s(degree) -> None:
    """A non-integer degree is scikit-learn's kernel where gamma x . y + coef0 >= 0."""
    rng = np.random.default_rng(1)
    X, Y = rng.uniform(size=(7, 3)), rng.uniform(size=(5, 3))
    kernel = Polynomial(degree=degree, gamma=0.4, coef0=0.1)
    want = (0.4 * X @ Y.T + 0.1) ** degree  # polynomial_kernel's formula (degree >= 1 there)
    if degree >= 1:
        np.testing.assert_allclose(
            polynomial_kernel(X, Y, degree=degree, gamma=0.4, coef0=0.1), want, rtol=1e-15
        )
    np.testing.assert_allclose(kernel(X, Y), want, rtol=1e-14)
    np.testing.assert_allclose(kernel.diag(X), np.diag(kernel(X)), rtol=1e-14)
    assert not kernel.has_maclaurin_series()
    with pytest.raises(ValueError, match="non-integer degree has no Maclaurin series"):
        kernel.maclaurin_coefficient(1)
    with pytest.raises(ValueError, match="use an integer degree, or Nystroem"):
        kernel.polynomial_degree()


def test_real_degree_on_a_negative_base_refused() -> None:
    """scikit-learn gives NaN where gamma x . y + coef0 < 0; the kernel names the fix."""
    X = np.array([[1.0, -2.0], [1.0, 1.0]])
    with pytest.warns(RuntimeWarning):
        assert np.isnan(polynomial_kernel(X, degree=2.5, gamma=1.0, coef0=0.1)).any()
    with pytest.raises(ValueError, match=r"negative \(down to -0\.9\).*no real power"):
        Polynomial(degree=2.5, gamma=1.0, coef0=0.1)(X)
    # an integer degree, even given as a float, is the polynomial of before
    K = Polynomial(degree=3.0, gamma=1.0, coef0=0.1)(X)
    np.testing.assert_array_equal(K, Polynomial(degree=3, gamma=1.0, coef0=0.1)(X))
    assert Polynomial(degree=3.0).has_maclaurin_series()
    assert Polynomial(degree=3.0).polynomial_degree() == 3


def test_bad_polynomial_parameters_refused() -> None:
    with pytest.raises(ValueError, match="coef0 must be a finite number >= 0"):
        Polynomial(coef0=-1.0)
    with pytest.raises(ValueError, match="gamma must be a positive"):
        Polynomial(gamma=0.0)
    with pytest.raises(ValueError, match="gamma must be a positive"):
        ExponentialDotProduct(gamma=-1.0)


def test_negative_coefficients_refused() -> None:
    with pytest.raises(ValueError, match=r"coefficients\(1\) = -1.0.*must be finite and >= 0"):
        MaclaurinKernel(lambda n: (-1.0) ** n)
    # a negative coefficient beyond the ones checked at construction is caught on use
    late = MaclaurinKernel(lambda n: -1.0 if n == 100 else 0.5**n)
    with pytest.raises(ValueError, match=r"coefficients\(100\)"):
        late.maclaurin_coefficient(100)
    with pytest.raises(ValueError, match="not a number"):
        MaclaurinKernel(lambda n: "a")
    with pytest.raises(TypeError, match="must be a callable"):
        MaclaurinKernel(0.5)  # type: ignore[arg-type]


def test_series_beyond_its_radius_refused(data) -> None:
    X, Y = data
    geometric = MaclaurinKernel(lambda n: 1.0, radius=1.0)
    with pytest.raises(ValueError, match="radius of convergence"):
        geometric(X, Y)
    with pytest.raises(ValueError, match=r"squared norm .* where the series diverges"):
        geometric.check_norms(np.array([0.5, 1.5]), "Map")
    geometric.check_norms(np.array([0.5, 0.99]), "Map")
