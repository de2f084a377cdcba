"""One path for every library: each merged check of the projection maps raises the same
message on NumPy and on array-api-strict (the block loop of ``BaseFeatureMap``, the cast
of the fitted arrays, the value and norm checks of the maps)."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
import sklearn

from kernelmaps import (
    AdditiveChi2Sampler,
    CompactRandomFeatures,
    Fastfood,
    RandomFourierFeatures,
    RandomMaclaurinFeatures,
    SkewedChi2Sampler,
    StructuredOrthogonalFeatures,
    TensorSketch,
)
from kernelmaps.exceptions import NonFiniteOutputError
from kernelmaps.feature_maps._hadamard import fastfood_projection, sorf_projection
from kernelmaps.feature_maps._sketch_kernels import count_sketches
from kernelmaps.kernels import MaclaurinKernel

xps = pytest.importorskip("array_api_strict")


def _strict(X: np.ndarray) -> Any:
    return xps.asarray(X)


def _message(error: type[Exception], action: Any, X: np.ndarray) -> str:
    """The message ``action(X)`` raises on NumPy."""
    with pytest.raises(error) as raised:
        action(X)
    return str(raised.value)


def _same_message(error: type[Exception], make: Any, fit_X: np.ndarray, X: np.ndarray) -> None:
    """``make().fit(fit_X).transform(X)`` raises ``error`` with the same text on NumPy and
    on array-api-strict (fitted there, array API dispatch on)."""
    expected = _message(error, lambda X: make().fit(fit_X).transform(X), X)
    with sklearn.config_context(array_api_dispatch=True):
        fitted = make().fit(_strict(fit_X))
        with pytest.raises(error, match=re.escape(expected)):
            fitted.transform(_strict(X))


def _data(n: int = 12, d: int = 5) -> np.ndarray:
    return np.random.default_rng(0).normal(size=(n, d)) / 2.0


def test_a_fitted_cast_that_overflows_is_refused_with_one_message() -> None:
    # frequencies of about 1e40 are finite in float64, not in float32
    X = _data()
    expected = _message(
        NonFiniteOutputError,
        lambda X: RandomFourierFeatures(gamma=1e80, random_state=0).fit(X).transform(X),
        X.astype(np.float32),
    )
    assert "exceed the float32 range" in expected
    with sklearn.config_context(array_api_dispatch=True):
        fitted = RandomFourierFeatures(gamma=1e80, random_state=0).fit(_strict(X))
        with pytest.raises(NonFiniteOutputError, match=re.escape(expected)):
            fitted.transform(_strict(X.astype(np.float32)))


def test_a_block_that_overflows_names_its_rows_with_one_message() -> None:
    # the per-block check of the one loop: rows 5 and 9 overflow, named in the input
    X = _data(d=3)
    X[[5, 9]] = 1e120
    _same_message(
        NonFiniteOutputError, lambda: TensorSketch(n_components=16, degree=3), _data(d=3), X
    )


def test_rows_of_rounding_noise_are_refused_with_one_message() -> None:
    X = _data()
    X[3] = 1e200
    _same_message(NonFiniteOutputError, lambda: RandomFourierFeatures(random_state=0), _data(), X)


@pytest.mark.parametrize("cls", [Fastfood, StructuredOrthogonalFeatures])
def test_structured_maps_overflow_with_one_message(cls: type) -> None:
    X = _data()
    X[2] = 1.5e308  # the first Hadamard sums overflow
    _same_message(NonFiniteOutputError, lambda: cls(n_components=16, random_state=0), _data(), X)


def test_negative_values_are_refused_by_the_additive_sampler_with_one_message() -> None:
    X = np.abs(_data())
    bad = X.copy()
    bad[4, 2] = -1.5
    _same_message(ValueError, AdditiveChi2Sampler, X, bad)


def test_values_below_minus_skewedness_are_refused_with_one_message() -> None:
    X = np.abs(_data())
    bad = X.copy()
    bad[1, 0] = -3.0
    _same_message(ValueError, lambda: SkewedChi2Sampler(skewedness=1.0, random_state=0), X, bad)


@pytest.mark.parametrize("cls", [RandomMaclaurinFeatures, CompactRandomFeatures])
def test_rows_beyond_the_radius_are_refused_with_one_message(cls: type) -> None:
    kernel = MaclaurinKernel(lambda n: 0.5**n, function=lambda t: 1 / (1 - t / 2), radius=2.0)
    params = {"kernel": kernel, "n_components": 8, "random_state": 0}
    X = _data() / 4.0
    far = X.copy()
    far[6] = 3.0
    _same_message(ValueError, lambda: cls(**params), X, far)


def test_the_merged_kernels_agree_with_numpy() -> None:
    # fastfood_projection, sorf_projection and count_sketches: one function, any library
    rng = np.random.default_rng(1)
    X = rng.normal(size=(5, 3))
    signs = np.sign(rng.normal(size=(2, 4)))
    permutations = np.stack([rng.permutation(4) for _ in range(2)])
    gaussians, scales = rng.normal(size=(2, 4)), rng.normal(size=(2, 4))
    expected = fastfood_projection(X, signs, permutations, gaussians, scales)
    got = fastfood_projection(
        *(_strict(a) for a in (X, signs, permutations, gaussians, scales)), xp=xps
    )
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-12, atol=1e-12)
    signs3 = np.sign(rng.normal(size=(2, 3, 4)))
    expected = sorf_projection(X, signs3, scales)
    got = sorf_projection(_strict(X), _strict(signs3), _strict(scales), xp=xps)
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-12, atol=1e-12)
    hashes, hsigns = rng.integers(0, 8, size=(2, 4)), 2 * rng.integers(0, 2, size=(2, 4)) - 1
    expected = count_sketches(X, hashes, hsigns, 0.5, 1.0, 8, np.dtype(np.float64))
    got = count_sketches(
        _strict(X), _strict(hashes), _strict(hsigns), 0.5, 1.0, 8, xps.float64, xp=xps
    )
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-12, atol=1e-12)
