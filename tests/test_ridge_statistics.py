"""RidgeStatistics: streaming updates, exact merges, and the solves built on them."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import scipy.sparse as sp

from kernelmaps import FeatureRidge, RandomFourierFeatures
from kernelmaps.models import RidgeStatistics
from kernelmaps.models._ridge._solvers import solve_ridge

# Merging replaces sums over n rows by two partial sums and one rank-one correction, all of
# nonnegative or well-scaled terms: each entry differs from the one-pass value by a few
# units of rounding of the largest term, O(n eps) relative with eps = 2.2e-16.  For
# n = 300 rows that is below 1e-13; rtol = 1e-12 leaves a factor 10 of slack and is still
# eleven orders of magnitude below any difference a wrong formula makes.
RTOL = 1e-12


def _data(seed: int, offset: float = 5.0):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(300, 6)) + offset
    Y = np.c_[Z @ rng.normal(size=6), rng.normal(size=300)] + 3.0
    w = rng.uniform(0.2, 3.0, size=300)
    return Z, Y, w


def _assert_same(a: RidgeStatistics, b: RidgeStatistics) -> None:
    assert a.n_samples == b.n_samples
    np.testing.assert_allclose(a.weight_sum, b.weight_sum, rtol=RTOL)
    for x, y in zip(a.means(), b.means(), strict=True):
        np.testing.assert_allclose(x, y, rtol=RTOL)
    for x, y in zip(a.centred(), b.centred(), strict=True):
        np.testing.assert_allclose(x, y, rtol=RTOL, atol=RTOL * np.max(np.abs(y)))
    for x, y in zip(a.uncentred(), b.uncentred(), strict=True):
        np.testing.assert_allclose(x, y, rtol=RTOL)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("centre", [True, False])
def test_merge_of_two_halves_equals_one_pass(weighted, centre) -> None:
    Z, Y, w = _data(0)
    if not weighted:
        w = np.ones_like(w)
    whole = RidgeStatistics(6, 2, centre=centre).update(Z, Y, w)
    a = RidgeStatistics(6, 2, centre=centre).update(Z[:110], Y[:110], w[:110])
    b = RidgeStatistics(6, 2, centre=centre).update(Z[110:], Y[110:], w[110:])
    _assert_same(a.merge(b), whole)
    _assert_same(b.merge(a), whole)


def test_tree_of_merges_equals_one_pass() -> None:
    Z, Y, w = _data(1)
    parts = [
        RidgeStatistics(6, 2).update(Z[s], Y[s], w[s]) for s in np.array_split(np.arange(300), 7)
    ]
    while len(parts) > 1:
        parts = [
            parts[i].merge(parts[i + 1]) if i + 1 < len(parts) else parts[i]
            for i in range(0, len(parts), 2)
        ]
    _assert_same(parts[0], RidgeStatistics(6, 2).update(Z, Y, w))


def test_merge_with_empty_is_identity() -> None:
    Z, Y, w = _data(2)
    stats = RidgeStatistics(6, 2).update(Z, Y, w)
    empty = RidgeStatistics(6, 2)
    for merged in (stats.merge(empty), empty.merge(stats)):
        assert merged is not stats
        for name in ("gram", "cross", "sum_z", "sum_y", "sum_yy", "shift_z", "shift_y"):
            np.testing.assert_array_equal(getattr(merged, name), getattr(stats, name))
        assert merged.weight_sum == stats.weight_sum and merged.n_samples == stats.n_samples


def test_merge_rejects_other_shapes() -> None:
    with pytest.raises(ValueError, match="same feature map"):
        RidgeStatistics(3, 1).merge(RidgeStatistics(4, 1))


def test_sparse_blocks_after_a_dense_merge() -> None:
    Z, Y, w = _data(3, offset=0.0)
    Z[Z < 0.5] = 0.0
    dense = RidgeStatistics(6, 2).update(Z[:100], Y[:100], w[:100])
    merged = dense.merge(RidgeStatistics(6, 2).update(Z[100:200], Y[100:200], w[100:200]))
    merged.update(sp.csr_matrix(Z[200:]), Y[200:], w[200:])
    _assert_same(merged, RidgeStatistics(6, 2).update(Z, Y, w))


def test_pickle_round_trip() -> None:
    Z, Y, w = _data(4)
    stats = RidgeStatistics(6, 2).update(Z, Y, w)
    _assert_same(pickle.loads(pickle.dumps(stats)), stats)


@pytest.mark.parametrize("alphas", [None, [1e-3, 1e-1, 10.0]])
def test_merged_model_equals_one_pass_model(alphas) -> None:
    rng = np.random.default_rng(5)
    X = rng.normal(size=(240, 4))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=240)
    w = rng.uniform(0.5, 2.0, size=240)
    rff = RandomFourierFeatures(gamma=0.3, n_components=40, random_state=0)
    model = FeatureRidge(rff, alphas=alphas, alpha_selection="gcv").fit(X, y, sample_weight=w)
    Z = model.feature_map_.transform(X)
    parts = [
        RidgeStatistics(40, 1).update(Z[s], y[s, None], w[s])
        for s in (slice(0, 70), slice(70, 160), slice(160, 240))
    ]
    merged = parts[0].merge(parts[1]).merge(parts[2])
    alpha_arr = None if alphas is None else np.asarray(alphas)
    solution = solve_ridge(merged, alpha=1.0, alphas=alpha_arr, selection="gcv")
    # the solve amplifies the relative rounding of the statistics (<= 1e-12, see RTOL) by
    # at most the condition number of G_c + alpha I: 46 at alpha = 1 and 1.2e4 at the
    # chosen alpha = 1e-3 for this data and seed, so the weights agree to 1.2e-8 relative
    np.testing.assert_allclose(
        solution.coef[0], model.coef_, rtol=0, atol=2e-8 * np.max(np.abs(model.coef_))
    )
    np.testing.assert_allclose(solution.intercept[0], model.intercept_, rtol=2e-8)
    assert solution.alpha == model.alpha_


def test_feature_ridge_keeps_statistics() -> None:
    rng = np.random.default_rng(6)
    X, y = rng.normal(size=(50, 3)), rng.normal(size=50)
    model = FeatureRidge("passthrough").fit(X, y)
    assert isinstance(model.statistics_, RidgeStatistics)
    assert model.statistics_.n_samples == 50 and model.statistics_.n_features == 3
    model.partial_fit(X, y)
    assert model.statistics_.n_samples == 100
