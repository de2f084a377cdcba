"""Random binning features: unbiasedness, structure of the output, unseen bins."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

import kernelmaps
from kernelmaps import RandomBinningFeatures
from kernelmaps.kernels import Laplacian

from ._bounds import hoeffding_radius

RNG = np.random.default_rng(2024)
TRAIN = RNG.normal(scale=0.8, size=(6, 3))
TEST = RNG.normal(scale=0.8, size=(5, 3))
KERNEL = Laplacian(gamma=0.5)
N_GRIDS = 8000


def _gram(Z1, Z2) -> np.ndarray:
    return (Z1 @ Z2.T).toarray()


@pytest.mark.statistical
def test_unbiased_between_training_and_new_points(seed: int) -> None:
    """z(x).z(y) is the mean of n_grids independent indicators in [0, 1] with mean k(x, y),
    for x a training point and y any point: Hoeffding with a union over the pairs."""
    rbf = RandomBinningFeatures(KERNEL, n_grids=N_GRIDS, random_state=seed).fit(TRAIN)
    Z_train, Z_test = rbf.transform(TRAIN), rbf.transform(TEST)
    iu = np.triu_indices(len(TRAIN), k=1)
    n_events = len(iu[0]) + TRAIN.shape[0] * TEST.shape[0]
    eps = hoeffding_radius(N_GRIDS, 1.0, n_events=n_events)
    # (training pairs alone are in the shared contract, tests/test_contract.py)
    assert np.max(np.abs(_gram(Z_train, Z_test) - KERNEL(TRAIN, TEST))) < eps
    # Two new points can share a bin no training point occupies; that bin has no column,
    # so their estimate is biased low (never high): E[z(x).z(y)] <= k(x, y).
    it = np.triu_indices(len(TEST), k=1)
    assert np.all(_gram(Z_test, Z_test)[it] < KERNEL(TEST)[it] + eps)
    # the tolerance sees gamma off by a factor of two
    wrong = Laplacian(gamma=1.0)
    assert np.max(np.abs(wrong(TRAIN)[iu] - KERNEL(TRAIN)[iu])) > 2 * eps
    biased = RandomBinningFeatures(wrong, n_grids=N_GRIDS, random_state=seed).fit(TRAIN)
    Zb = biased.transform(TRAIN)
    assert np.max(np.abs(_gram(Zb, Zb)[iu] - KERNEL(TRAIN)[iu])) > eps


def test_training_rows_hold_one_entry_per_grid() -> None:
    X = np.random.default_rng(0).normal(size=(200, 4))
    rbf = RandomBinningFeatures(gamma=0.3, n_grids=25, random_state=0).fit(X)
    Z = rbf.transform(X)
    assert sp.isspmatrix_csr(Z) or isinstance(Z, sp.csr_array)
    assert Z.shape == (200, int(rbf.n_bins_.sum()))
    np.testing.assert_array_equal(np.diff(Z.indptr), 25)
    np.testing.assert_allclose(Z.data, 1.0 / math.sqrt(25))
    np.testing.assert_allclose((Z.multiply(Z)).sum(axis=1), 1.0)
    # one entry per grid: the columns of row i lie one in each grid's column range
    offsets = np.concatenate([[0], np.cumsum(rbf.n_bins_)])
    grid_of = np.searchsorted(offsets, Z.indices, side="right") - 1
    np.testing.assert_array_equal(grid_of.reshape(200, 25), np.tile(np.arange(25), (200, 1)))


def test_points_in_unseen_bins_get_no_entry() -> None:
    X = np.random.default_rng(0).normal(size=(50, 2))
    rbf = RandomBinningFeatures(gamma=5.0, n_grids=10, random_state=0).fit(X)
    far = X[:3] + 1e3
    Z = rbf.transform(far)
    assert Z.nnz == 0
    assert Z.shape == (3, rbf.n_bins_.sum())


def test_sparse_input_and_dtype() -> None:
    X = np.random.default_rng(1).uniform(size=(40, 6))
    X[X < 0.5] = 0.0
    rbf = RandomBinningFeatures(gamma=1.0, n_grids=12, random_state=3).fit(X)
    dense = rbf.transform(X).toarray()
    np.testing.assert_array_equal(rbf.transform(sp.csr_matrix(X)).toarray(), dense)
    Z32 = rbf.transform(X.astype(np.float32))
    assert Z32.dtype == np.float32


def test_n_grids_must_be_positive() -> None:
    with pytest.raises(ValueError, match=r"The 'n_grids' parameter"):
        RandomBinningFeatures(n_grids=0).fit(TRAIN)


def test_compiled_and_numpy_bin_keys_are_identical() -> None:
    """Both engines hash the same integer coordinates (negative ones included) bit for bit."""
    pytest.importorskip("numba")
    rng = np.random.default_rng(0)
    X = rng.standard_normal((500, 7)) * 5.0
    rb = RandomBinningFeatures(gamma=0.5, n_grids=12, random_state=0).fit(X)
    with kernelmaps.config_context(engine="numpy"):
        keys = rb._grid_keys(X)
        Z = rb.transform(X[:50])
    with kernelmaps.config_context(engine="numba"):
        np.testing.assert_array_equal(rb._grid_keys(X), keys)
        assert (rb.transform(X[:50]) != Z).nnz == 0
