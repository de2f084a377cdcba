"""Exact histogram kernels: additive, exponentiated and skewed chi-squared, intersection."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics.pairwise import additive_chi2_kernel, chi2_kernel

from kernelmaps.kernels import (
    AdditiveChi2,
    ExponentiatedChi2,
    HistogramIntersection,
    SkewedChi2,
    make_kernel,
)


@pytest.fixture
def data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.uniform(0.0, 1.0, (8, 6))
    Y = rng.uniform(0.0, 1.0, (5, 6))
    X[X < 0.3] = 0.0  # zeros, and pairs with x_i + y_i = 0
    Y[Y < 0.3] = 0.0
    return X, Y


def _naive(X: np.ndarray, Y: np.ndarray, term) -> np.ndarray:
    return np.array([[sum(term(a, b) for a, b in zip(x, y, strict=True)) for y in Y] for x in X])


def test_additive_chi2(data) -> None:
    X, Y = data
    K = AdditiveChi2()(X, Y)
    np.testing.assert_allclose(
        K, _naive(X, Y, lambda a, b: 2 * a * b / (a + b) if a + b > 0 else 0.0)
    )
    # scikit-learn's additive_chi2_kernel is -sum (x - y)^2 / (x + y) = 2 k - sum x - sum y
    sk = additive_chi2_kernel(X, Y)
    np.testing.assert_allclose(2 * K - X.sum(1)[:, None] - Y.sum(1)[None, :], sk, atol=1e-12)
    np.testing.assert_allclose(AdditiveChi2().diag(X), np.diag(AdditiveChi2()(X)))


@pytest.mark.parametrize("gamma", [1.0, 0.3])
def test_exponentiated_chi2_matches_sklearn(data, gamma) -> None:
    X, Y = data
    np.testing.assert_allclose(ExponentiatedChi2(gamma=gamma)(X, Y), chi2_kernel(X, Y, gamma=gamma))
    assert make_kernel("chi2") == ExponentiatedChi2(gamma=1.0)


def test_skewed_chi2(data) -> None:
    X, Y = data
    c = 0.7
    K = SkewedChi2(skewedness=c)(X, Y)
    expected = np.array(
        [[np.prod(2 * np.sqrt(x + c) * np.sqrt(y + c) / (x + y + 2 * c)) for y in Y] for x in X]
    )
    np.testing.assert_allclose(K, expected, rtol=1e-12)
    # defined for x > -c, including negative values
    np.testing.assert_allclose(SkewedChi2(c)(X - 0.5, Y - 0.5).shape, (8, 5))


def test_histogram_intersection(data) -> None:
    X, Y = data
    np.testing.assert_allclose(HistogramIntersection()(X, Y), _naive(X, Y, min))
    assert make_kernel("intersection") == HistogramIntersection()


@pytest.mark.parametrize(
    "kernel", [AdditiveChi2(), ExponentiatedChi2(), SkewedChi2(), HistogramIntersection()], ids=repr
)
def test_sparse_equals_dense_and_psd(data, kernel) -> None:
    X, Y = data
    np.testing.assert_allclose(kernel(sp.csr_matrix(X), sp.csr_matrix(Y)), kernel(X, Y))
    K = kernel(np.vstack([X, Y]))
    assert np.linalg.eigvalsh(K).min() > -1e-10 * np.abs(K).max()
    assert kernel(X.astype(np.float32), Y.astype(np.float32)).dtype == np.float32


@pytest.mark.parametrize(
    "kernel", [AdditiveChi2(), ExponentiatedChi2(), HistogramIntersection()], ids=repr
)
def test_negative_input_refused(data, kernel) -> None:
    X, Y = data
    with pytest.raises(ValueError, match=r"Negative values in data.*non-negative"):
        kernel(X - 0.5, Y)
    with pytest.raises(ValueError, match="Negative values in data"):
        kernel(X, sp.csr_matrix(Y - 0.5))


def test_skewed_values_at_or_below_minus_c_refused(data) -> None:
    X, Y = data
    with pytest.raises(ValueError, match=r"greater than -skewedness = -0.5"):
        SkewedChi2(skewedness=0.5)(X - 0.5, Y)
    with pytest.raises(ValueError, match="skewedness must be a positive"):
        SkewedChi2(skewedness=0.0)
