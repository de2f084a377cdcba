"""The exact kernels have one path for every array library.

``Kernel.__call__`` and ``Kernel.diag`` validate NumPy input and arrays of another library
with one set of checks: each check below runs on NumPy and on ``array-api-strict`` (its
second, fake device) and must raise the same exception with the identical message.  The
arrays decide where a kernel computes, whatever scikit-learn's ``array_api_dispatch``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import array_api_strict as xps
import numpy as np
import pytest

from kernelmaps.exceptions import NonFiniteOutputError
from kernelmaps.kernels import (
    AdditiveChi2,
    Cosine,
    ExponentialDotProduct,
    Gaussian,
    Linear,
    MaclaurinKernel,
    Matern,
    NegativeChi2,
    Polynomial,
    Sigmoid,
    SkewedChi2,
    scale_gamma,
)
from tests._array_api import dispatch, host

DEVICE = xps.Device("device1")


def _strict(a: np.ndarray) -> Any:
    return xps.asarray(a, device=DEVICE)


def _same_error(
    error: type[Exception], text: str, call: Callable[[Callable[[np.ndarray], Any]], Any]
) -> None:
    """``call(convert)`` raises ``error`` whose message starts with ``text``, the same
    message for NumPy arrays (``convert`` the identity) and for array-api-strict ones."""
    messages = []
    for convert in (np.asarray, _strict):
        with pytest.raises(error, match=re.escape(text)) as info:
            call(convert)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


X = np.array([[0.0, 1.0, 2.0], [1.0, 1.0, 0.5], [3.0, 0.0, 1.0]])


@pytest.mark.parametrize(("value", "word"), [(np.nan, "NaN"), (np.inf, "infinity")])
def test_non_finite_input_is_refused_with_one_message(value: float, word: str) -> None:
    bad = X.copy()
    bad[1, 2] = value
    text = f"Input Y contains {word}; kernels are defined on finite values only"
    _same_error(ValueError, text, lambda c: Gaussian(gamma=1.0)(c(X), c(bad)))
    text = f"Input X contains {word}; kernels are defined on finite values only"
    _same_error(ValueError, text, lambda c: Linear().diag(c(bad)))


def test_shapes_are_refused_with_one_message() -> None:
    text = "Expected 2D arrays, got X with shape (3,) and Y with shape (3,)."
    _same_error(ValueError, text, lambda c: Linear()(c(X[0])))
    text = "X has 3 features but Y has 2; they must match."
    _same_error(ValueError, text, lambda c: Linear()(c(X), c(X[:, :2])))
    text = "Linear(): X has 0 rows and Y has 3; a kernel matrix needs at least one row in each."
    _same_error(ValueError, text, lambda c: Linear()(c(X[:0]), c(X)))
    text = "Expected a 2D array of rows (n_samples, n_features), got shape (3,)"
    _same_error(ValueError, text, lambda c: Cosine().diag(c(X[0])))


def test_domain_checks_have_one_message() -> None:
    negative = X - 1.0
    text = "Negative values in data passed to The additive chi-squared kernel"
    _same_error(ValueError, text, lambda c: AdditiveChi2()(c(negative), c(X)))
    _same_error(ValueError, text, lambda c: AdditiveChi2().diag(c(negative)))
    text = "Negative values in data passed to The negative chi-squared distance"
    _same_error(ValueError, text, lambda c: NegativeChi2().diag(c(negative)))
    text = "Negative values in data passed to The skewed chi-squared kernel reach -1"
    _same_error(ValueError, text, lambda c: SkewedChi2(skewedness=0.5)(c(negative)))
    text = "gamma x . y + coef0 is negative (down to -1)"
    _same_error(
        ValueError, text, lambda c: Polynomial(degree=2.5, gamma=0.5, coef0=0.0)(c(negative))
    )


def test_an_overflow_is_refused_with_one_message() -> None:
    big = np.full((2, 2), 30.0)
    kernel = ExponentialDotProduct(gamma=1.0)
    text = "the computation overflowed float64 for inputs up to |x| = 30; rescale the data"
    _same_error(NonFiniteOutputError, text, lambda c: kernel(c(big)))
    _same_error(NonFiniteOutputError, text, lambda c: kernel.diag(c(big)))


def test_the_maclaurin_series_is_refused_beyond_its_radius_on_every_library() -> None:
    kernel = MaclaurinKernel(lambda n: 0.5**n, radius=2.0)
    text = "MaclaurinKernel: a dot product reaches 10, at or beyond the radius"
    _same_error(ValueError, text, lambda c: kernel(c(X)))


def test_arrays_of_two_libraries_are_refused() -> None:
    with pytest.raises(ValueError, match="Y is not an array of array_api_strict"):
        Linear()(_strict(X), X)
    with pytest.raises(ValueError, match="X is not an array of array_api_strict"):
        Linear()(X, _strict(X))


@pytest.mark.parametrize("switch", [False, True])
def test_the_arrays_decide_whatever_the_switch(switch: bool) -> None:
    """Matérn of a general ``nu`` (a Bessel function) computes on the host and comes back
    in the array's namespace and dtype, switch on or off."""
    kernels = [Gaussian(gamma=0.3), Matern(nu=1.2, gamma=0.3), Sigmoid(gamma=0.2)]
    for kernel in kernels:
        if switch:
            with dispatch():
                K, diag = kernel(_strict(X)), kernel.diag(_strict(X))
        else:
            K, diag = kernel(_strict(X)), kernel.diag(_strict(X))
        assert K.device == DEVICE and diag.device == DEVICE
        np.testing.assert_allclose(host(K), kernel(X), rtol=1e-14, atol=1e-15)
        np.testing.assert_allclose(host(diag), kernel.diag(X), rtol=1e-14, atol=1e-15)


def test_sigmoid_diagonal_is_that_of_its_matrix() -> None:
    kernel = Sigmoid(gamma=0.1, coef0=-0.3)
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(40, 7))
    np.testing.assert_allclose(kernel.diag(Z), np.diagonal(kernel(Z)), rtol=0, atol=1e-15)


def test_scale_gamma_is_one_formula() -> None:
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(30, 4)) * 3.0
    assert scale_gamma(_strict(Z)) == scale_gamma(Z)
    assert scale_gamma(_strict(np.zeros((3, 2)))) == scale_gamma(np.zeros((3, 2))) == 1.0
