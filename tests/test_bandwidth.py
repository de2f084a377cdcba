"""Bandwidth rules."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics.pairwise import euclidean_distances

from kernelmaps.bandwidth import gamma_from_data

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
