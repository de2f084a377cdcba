"""Additive and skewed chi-squared feature maps."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_digits
from sklearn.kernel_approximation import AdditiveChi2Sampler as SkAdditive
from sklearn.kernel_approximation import SkewedChi2Sampler as SkSkewed

import kernelmaps
from kernelmaps import AdditiveChi2Sampler, SkewedChi2Sampler
from kernelmaps.feature_maps._chi2 import additive_chi2_error_bound
from kernelmaps.kernels import AdditiveChi2


@pytest.fixture
def histograms() -> np.ndarray:
    X = load_digits().data[::20]  # 90 rows, integer counts 0..16, many zeros
    return X


@pytest.mark.parametrize(
    "params",
    [{}, {"sample_steps": 1}, {"sample_steps": 3}, {"sample_steps": 5, "sample_interval": 0.3}],
)
def test_additive_equals_sklearn(histograms, params) -> None:
    X = histograms
    ours = AdditiveChi2Sampler(**params).fit(X)
    theirs = SkAdditive(**params).fit(X)
    np.testing.assert_allclose(ours.transform(X), theirs.transform(X), rtol=1e-12, atol=1e-14)
    Zs = ours.transform(sp.csr_matrix(X))
    assert sp.issparse(Zs) and Zs.format == "csr"
    np.testing.assert_allclose(Zs.toarray(), theirs.transform(X), rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(ours.get_feature_names_out(), theirs.get_feature_names_out())


@pytest.mark.parametrize("steps", [1, 2, 3])
def test_additive_within_its_truncation_error(histograms, steps) -> None:
    """|z(x).z(y) - k(x, y)| <= eps * sum_i sqrt(x_i y_i), a deterministic bound."""
    X = histograms
    sampler = AdditiveChi2Sampler(sample_steps=steps).fit(X)
    Z = sampler.transform(X)
    K = AdditiveChi2()(X)
    weight = np.sqrt(X) @ np.sqrt(X).T
    gap = np.abs(Z @ Z.T - K)
    assert np.all(gap <= sampler.error_bound_ * weight + 1e-12)
    nonzero = X[X > 0]
    tight = additive_chi2_error_bound(
        steps, sampler.sample_interval_, math.log(nonzero.max() / nonzero.min())
    )
    assert tight < sampler.error_bound_
    assert np.all(gap <= tight * weight + 1e-12)
    # and the bound is attained up to a small factor: it is not vacuous
    assert gap.max() >= 0.1 * tight * weight[np.unravel_index(gap.argmax(), gap.shape)]


def test_additive_error_bound_shrinks_with_steps() -> None:
    bounds = [additive_chi2_error_bound(n, 0.4, math.log(16)) for n in (1, 2, 3, 4)]
    assert all(a > b for a, b in itertools.pairwise(bounds))


def test_additive_dtypes_and_blocks(histograms) -> None:
    X = histograms.astype(np.float32)
    sampler = AdditiveChi2Sampler().fit(X)
    assert sampler.transform(X).dtype == np.float32
    assert sampler.transform(sp.csr_matrix(X)).dtype == np.float32
    np.testing.assert_array_equal(sampler.transform(X[10:30]), sampler.transform(X)[10:30])


@pytest.mark.parametrize("cls", [AdditiveChi2Sampler, SkewedChi2Sampler])
def test_negative_input_refused(histograms, cls) -> None:
    X = histograms - 20.0
    with pytest.raises(ValueError, match="Negative values in data"):
        cls().fit(X)
    fitted = cls().fit(histograms)
    with pytest.raises(ValueError, match="Negative values in data"):
        fitted.transform(X)
    with pytest.raises(ValueError, match="Negative values in data"):
        fitted.transform(sp.csr_matrix(X))


def test_additive_steps_without_interval_refused(histograms) -> None:
    with pytest.raises(ValueError, match="give sample_interval"):
        AdditiveChi2Sampler(sample_steps=4).fit(histograms)


def test_skewed_equals_sklearn_with_the_same_weights(histograms) -> None:
    X = histograms / 16.0
    ours = SkewedChi2Sampler(skewedness=0.3, n_components=50, random_state=0).fit(X)
    theirs = SkSkewed(skewedness=0.3, n_components=50, random_state=0).fit(X)
    theirs.random_weights_ = ours.random_weights_
    theirs.random_offset_ = ours.random_offset_
    np.testing.assert_allclose(ours.transform(X), theirs.transform(X), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(
        ours.transform(sp.csr_matrix(X)), theirs.transform(X), rtol=1e-9, atol=1e-12
    )


def test_skewed_sparse_dtype_and_range(histograms) -> None:
    X = histograms / 16.0 - 0.2  # negative values above -c are allowed
    sampler = SkewedChi2Sampler(skewedness=0.5, n_components=64, random_state=0).fit(X)
    Z = sampler.transform(X)
    np.testing.assert_allclose(sampler.transform(sp.csr_matrix(X)), Z, rtol=1e-10, atol=1e-12)
    Z32 = sampler.transform(X.astype(np.float32))
    assert Z32.dtype == np.float32
    np.testing.assert_allclose(Z32, Z, atol=1e-4)
    with pytest.raises(ValueError, match="greater than -skewedness"):
        sampler.transform(X - 0.5)
    with pytest.raises(ValueError, match="skewedness"):
        SkewedChi2Sampler(skewedness=0.0).fit(X)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_additive_dense_and_gathered_paths_are_identical(dtype) -> None:
    """Mostly-positive and mostly-zero blocks take different paths with the same result."""
    rng = np.random.default_rng(0)
    X = rng.uniform(0.0, 2.0, (60, 5)).astype(dtype)
    X[X < 0.3] = 0.0
    sampler = AdditiveChi2Sampler(sample_steps=3).fit(X)
    dense = np.empty((60, sampler._n_features_out), dtype=dtype)
    gathered = np.empty_like(dense)
    sampler._dense_rows(X, dense)
    sampler._gathered_block(X, gathered)
    np.testing.assert_array_equal(dense, gathered)
    np.testing.assert_array_equal(sampler.transform(sp.csr_matrix(X)).toarray(), dense)


def test_additive_engines_agree() -> None:
    """Compiled and numpy sines and cosines agree within a few ulp (4e-16 relative)."""
    pytest.importorskip("numba")
    X = np.random.default_rng(1).uniform(0.0, 3.0, (40, 6))
    sampler = AdditiveChi2Sampler(sample_steps=3).fit(X)
    with kernelmaps.config_context(engine="numpy"):
        Z = sampler.transform(X)
    with kernelmaps.config_context(engine="numba"):
        np.testing.assert_allclose(sampler.transform(X), Z, rtol=0, atol=4e-16 * np.abs(Z).max())


@pytest.mark.parametrize("density", [0.005, 0.5])
def test_skewed_sparse_paths_agree_with_dense(density) -> None:
    """Very sparse blocks use the sparse product, denser ones the densified GEMM."""
    rng = np.random.default_rng(2)
    X = rng.uniform(0.0, 1.0, (300, 40))
    X[rng.uniform(size=X.shape) > density] = 0.0
    sampler = SkewedChi2Sampler(n_components=64, random_state=0).fit(X)
    np.testing.assert_allclose(
        sampler.transform(sp.csr_matrix(X)), sampler.transform(X), rtol=1e-12, atol=1e-12
    )
