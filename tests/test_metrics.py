"""Kernel approximation error metrics, and their block-wise evaluation."""

from __future__ import annotations

import numpy as np
import pytest

from kernelmaps import RandomFourierFeatures, feature_map_error, kernel_approximation_error
from kernelmaps.kernels import Gaussian

RNG = np.random.default_rng(0)
X = RNG.normal(size=(300, 5))
Y = RNG.normal(size=(40, 5))


def _direct(rff, A, B, norm):
    K = Gaussian(0.2)(A, B)
    E = K - rff.transform(A) @ rff.transform(B).T
    if norm == "fro":
        return np.linalg.norm(E) / np.linalg.norm(K)
    if norm == "max":
        return np.abs(E).max() / np.abs(K).max()
    return np.linalg.norm(E, 2) / np.linalg.norm(K, 2)


@pytest.mark.parametrize("norm", ["fro", "max", "spectral"])
@pytest.mark.parametrize("block_rows", [None, 32])
def test_feature_map_error_matches_direct_computation(norm, block_rows) -> None:
    rff = RandomFourierFeatures(gamma=0.2, n_components=64, random_state=0).fit(X)
    direct = _direct(rff, X, X, norm)
    blocked = feature_map_error(rff, X, norm=norm, block_rows=block_rows)
    np.testing.assert_allclose(blocked, direct, rtol=1e-5 if norm == "spectral" else 1e-10)
    rect = feature_map_error(rff, X, Y, norm=norm, block_rows=block_rows)
    rtol = 1e-5 if norm == "spectral" else 1e-10
    np.testing.assert_allclose(rect, _direct(rff, X, Y, norm), rtol=rtol)


def test_absolute_errors_and_explicit_kernel() -> None:
    rff = RandomFourierFeatures(gamma=0.2, n_components=32, random_state=0).fit(X)
    K = Gaussian(0.2)(X[:50])
    Z = rff.transform(X[:50])
    absolute = feature_map_error(rff, X[:50], relative=False, kernel=Gaussian(0.2))
    np.testing.assert_allclose(absolute, np.linalg.norm(K - Z @ Z.T))
    np.testing.assert_allclose(kernel_approximation_error(K, Z @ Z.T, relative=False), absolute)


def test_kernel_approximation_error_norms() -> None:
    K = np.array([[2.0, 1.0], [1.0, 2.0]])
    A = np.array([[2.0, 0.0], [0.0, 2.0]])
    assert kernel_approximation_error(K, A, norm="max") == pytest.approx(0.5)
    assert kernel_approximation_error(K, A, norm="fro") == pytest.approx(np.sqrt(2) / np.sqrt(10))
    assert kernel_approximation_error(K, A, norm="spectral") == pytest.approx(1 / 3)
    assert kernel_approximation_error(K, K) == 0.0


def test_metric_errors() -> None:
    K = np.eye(3)
    with pytest.raises(ValueError, match=r"norm must be one of"):
        kernel_approximation_error(K, K, norm="nuclear")
    with pytest.raises(ValueError, match=r"K has shape"):
        kernel_approximation_error(K, np.eye(2))
    with pytest.raises(ValueError, match=r"use relative=False"):
        kernel_approximation_error(np.zeros((2, 2)), np.eye(2))
    with pytest.raises(ValueError, match=r"K_approx contains NaN"):
        kernel_approximation_error(K, np.full((3, 3), np.nan))

    class NoKernel:
        def transform(self, X):
            return X

    with pytest.raises(ValueError, match=r"no fitted kernel_; pass kernel="):
        feature_map_error(NoKernel(), X[:5])


@pytest.mark.parametrize("block_rows", [None, 7, 32])
@pytest.mark.parametrize("rectangular", [False, True])
@pytest.mark.parametrize("relative", [True, False])
def test_errors_from_features_equal_feature_map_error_exactly(block_rows, rectangular, relative):
    from kernelmaps.metrics import kernel_errors_from_features

    A = X[:60]
    B = Y if rectangular else None
    rff = RandomFourierFeatures(gamma=0.2, n_components=32, random_state=0).fit(A)
    Zb = None if B is None else rff.transform(B)
    norms = ("max", "spectral", "fro")
    errors = kernel_errors_from_features(
        rff.kernel_, A, rff.transform(A), B, Zb, norms=norms, relative=relative,
        block_rows=block_rows,
    )  # fmt: skip
    assert list(errors) == list(norms)
    for norm in norms:
        one = feature_map_error(rff, A, B, norm=norm, relative=relative, block_rows=block_rows)
        assert errors[norm] == one  # the same arithmetic, not merely close


def test_errors_from_features_input_errors():
    from kernelmaps.metrics import kernel_errors_from_features

    rff = RandomFourierFeatures(gamma=0.2, n_components=8, random_state=0).fit(X[:10])
    Z = rff.transform(X[:10])
    with pytest.raises(ValueError, match="without its features Z_y"):
        kernel_errors_from_features(rff.kernel_, X[:10], Z, Y[:5])
    with pytest.raises(ValueError, match="without its rows Y"):
        kernel_errors_from_features(rff.kernel_, X[:10], Z, Z_y=Z)
    with pytest.raises(ValueError, match="norm must be one of"):
        kernel_errors_from_features(rff.kernel_, X[:10], Z, norms=("fro", "nuclear"))
