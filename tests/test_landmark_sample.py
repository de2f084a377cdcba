"""k-means and leverage landmarks on a uniform sample of the rows of large data.

Above ``landmark_sample_size(m) = max(LANDMARK_SAMPLE_SIZE, 20 m)`` rows, ``"kmeans"`` and
``"leverage"`` run on that many distinct rows drawn uniformly by global row index (the same
rows for numpy and Dask input); at or below it they use every row, with the draws they
made before the sample existed.  Exact facts, no tolerance.
"""

from __future__ import annotations

import numpy as np
import pytest

from kernelmaps.kernels import Gaussian
from kernelmaps.sampling import (
    LANDMARK_SAMPLE_SIZE,
    landmark_sample_size,
    recursive_rls_indices,
    select_landmarks,
)
from kernelmaps.sampling import _landmarks as landmarks_module

N_ROWS, N_COLUMNS = 120, 5


def _data(seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((N_ROWS, N_COLUMNS)) * 0.7


def test_sample_size_rule():
    assert landmark_sample_size(8) == LANDMARK_SAMPLE_SIZE
    assert landmark_sample_size(10**5) == 20 * 10**5


def test_kmeans_and_leverage_on_all_rows_up_to_the_sample_size():
    """At or below landmark_sample_size(m), k-means and leverage run on every row, with
    the draws they made before the sample existed (the seed first, the permutation first)."""
    from sklearn.cluster import KMeans

    X = _data()
    kernel = Gaussian(gamma=0.3)
    assert landmarks_module.landmark_sample_size(8) >= N_ROWS
    L, idx = select_landmarks(X, 8, "kmeans", rng=np.random.default_rng(7))
    seed = int(np.random.default_rng(7).integers(0, 2**31 - 1))
    centres = KMeans(n_clusters=8, n_init=1, max_iter=100, random_state=seed).fit(X)
    assert idx is None and np.array_equal(L, centres.cluster_centers_)
    L, idx = select_landmarks(X, 8, "leverage", kernel=kernel, rng=np.random.default_rng(7))
    assert np.array_equal(idx, recursive_rls_indices(X, 8, kernel, np.random.default_rng(7)))


@pytest.mark.parametrize("method", ["kmeans", "leverage"])
def test_above_the_sample_size_only_the_sample_is_used(monkeypatch, method):
    monkeypatch.setattr(landmarks_module, "LANDMARK_SAMPLE_SIZE", 40)
    monkeypatch.setattr(landmarks_module, "_SAMPLE_ROWS_PER_LANDMARK", 2)
    X = _data()
    kernel = Gaussian(gamma=0.3)
    draw = landmarks_module.draw_landmarks(
        N_ROWS, N_COLUMNS, X.dtype, method, 8, kernel=kernel, rng=np.random.default_rng(6)
    )
    assert draw.rows is not None and draw.rows.shape == (40,)
    L, idx = select_landmarks(X, 8, method, kernel=kernel, rng=np.random.default_rng(6))
    # rows outside the sample cannot change the result: scramble them
    Y = X.copy()
    outside = np.setdiff1d(np.arange(N_ROWS), draw.rows)
    Y[outside] = np.random.default_rng(1).standard_normal((outside.size, N_COLUMNS))
    L2, idx2 = select_landmarks(Y, 8, method, kernel=kernel, rng=np.random.default_rng(6))
    assert np.array_equal(L, L2)
    if method == "leverage":
        assert np.all(np.isin(idx, draw.rows)) and np.array_equal(idx, idx2)
