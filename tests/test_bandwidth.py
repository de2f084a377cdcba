"""Bandwidth rules."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics.pairwise import euclidean_distances

from kernelmaps.bandwidth import gamma_from_data

EPS = float(np.finfo(np.float64).eps)

X = np.random.default_rng(0).normal(size=(300, 4))


def test_mean_distance_rule() -> None:
    sigma = np.linalg.norm(X - X.mean(axis=0), axis=1).mean()
    assert gamma_from_data(X) == pytest.approx(1.0 / (2.0 * sigma**2))
    sigma1 = np.abs(X - X.mean(axis=0)).sum(axis=1).mean()
    assert gamma_from_data(X, kernel="laplacian") == pytest.approx(1.0 / sigma1)


def test_pairwise_rules() -> None:
    D = euclidean_distances(X)[np.triu_indices(300, k=1)]
    assert gamma_from_data(X, "median") == pytest.approx(1.0 / (2.0 * np.median(D) ** 2))
    # The IKA paper: exp(-|x - y|^2 / (2 sigma^2)) with sigma^2 the 10th percentile of |x - y|^2.
    assert gamma_from_data(X, "percentile", q=10) == pytest.approx(
        1.0 / (2.0 * np.percentile(D**2, 10))
    )
    # subsampling is reproducible
    assert gamma_from_data(X, "median", max_samples=50, random_state=1) == gamma_from_data(
        X, "median", max_samples=50, random_state=1
    )


def test_rule_errors() -> None:
    with pytest.raises(ValueError, match=r"rule must be one of"):
        gamma_from_data(X, "silverman")
    with pytest.raises(ValueError, match=r"gives zero on this data"):
        gamma_from_data(np.ones((5, 2)))
    with pytest.raises(ValueError, match=r"q must be in"):
        gamma_from_data(X, "percentile", q=100)


def test_data_driven_gamma_of_rows_near_1e154_refused() -> None:
    """Rows of magnitude ~1e154 gave a subnormal gamma (~1e-309) from gamma='scale' and
    the bandwidth rules; it is refused, naming the fix, before any map is drawn."""
    from kernelmaps import FeatureRidge, RandomFourierFeatures
    from kernelmaps.exceptions import NonFiniteOutputError
    from kernelmaps.kernels import scale_gamma

    rng = np.random.default_rng(0)
    far = rng.normal(size=(60, 3)) * 1e154
    fix = r"outside \[2\.33e-302, 1\.71e\+302\].*StandardScaler\) or give gamma explicitly\.$"
    for rule in ("mean_distance", "median", "percentile"):
        with pytest.raises(NonFiniteOutputError, match=fix):
            gamma_from_data(far, rule)
    with pytest.raises(NonFiniteOutputError, match=r"gamma='scale' .* gives gamma = 3\.57e-309"):
        scale_gamma(far)
    model = FeatureRidge(RandomFourierFeatures(gamma="scale", random_state=0))
    with pytest.raises(NonFiniteOutputError, match=fix):
        model.fit(far, rng.normal(size=60))
    # float32 data has the float32 range: 1e18 is about 2^60, squared near float32's max
    with pytest.raises(NonFiniteOutputError, match=r"float32 kernel computations"):
        scale_gamma((rng.normal(size=(20, 3)) * 1e18).astype(np.float32))


@pytest.mark.parametrize("scale", [1e-140, 1e-3, 1.0, 1e3, 1e140])
def test_data_driven_gamma_of_an_ordinary_scale_kept(scale) -> None:
    from kernelmaps import FeatureRidge, RandomFourierFeatures
    from kernelmaps.kernels import scale_gamma

    rng = np.random.default_rng(1)
    Xs = rng.normal(size=(60, 3)) * scale
    np.testing.assert_allclose(gamma_from_data(Xs), gamma_from_data(Xs / scale) / scale**2)
    np.testing.assert_allclose(scale_gamma(Xs), scale_gamma(Xs / scale) / scale**2)
    model = FeatureRidge(RandomFourierFeatures(gamma="scale", random_state=0))
    model.fit(Xs, rng.normal(size=60))
    together = model.predict(Xs[:20])
    alone = np.array([model.predict(Xs[i : i + 1])[0] for i in range(20)])
    np.testing.assert_allclose(together, alone, rtol=0, atol=1e-12)


def test_integer_weights_give_the_rule_of_repeated_rows(seed) -> None:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(50, 3))
    w = rng.integers(0, 4, size=50)
    w[0] = 1
    for kernel in ("rbf", "laplacian"):
        weighted = gamma_from_data(X, kernel=kernel, sample_weight=w)
        repeated = gamma_from_data(np.repeat(X, w, axis=0), kernel=kernel)
        # weighted means of at most sum(w) terms: rounding of that many additions
        np.testing.assert_allclose(weighted, repeated, rtol=4.0 * np.sum(w) * EPS)
    assert gamma_from_data(X, sample_weight=np.ones(50)) == gamma_from_data(X)


def test_weights_are_for_the_mean_distance_rule_only() -> None:
    X = np.random.default_rng(0).normal(size=(10, 2))
    with pytest.raises(ValueError, match="rule='mean_distance' only"):
        gamma_from_data(X, rule="median", sample_weight=np.ones(10))
    with pytest.raises(ValueError, match=r"[Nn]egative"):
        gamma_from_data(X, sample_weight=-np.ones(10))
