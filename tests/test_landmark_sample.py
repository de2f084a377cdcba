"""k-means, leverage and rpcholesky landmarks on a uniform sample of the rows of large data.

Above ``landmark_sample_size(m) = max(LANDMARK_SAMPLE_SIZE, 20 m)`` rows, ``"kmeans"``,
``"leverage"`` and ``"rpcholesky"`` run on that many distinct rows drawn uniformly by global
row index (the same rows for numpy and Dask input); at or below it they use every row, with
the draws they made before the sample existed.  Exact facts, no tolerance.
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
from kernelmaps.sampling._rpcholesky import rpcholesky_indices

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
    # rpcholesky: a seed drawn before the data is read, then the pivots on every row
    L, idx = select_landmarks(X, 8, "rpcholesky", kernel=kernel, rng=np.random.default_rng(7))
    assert np.array_equal(idx, rpcholesky_indices(X, 8, kernel, seed))
    assert np.array_equal(L, X[idx])


@pytest.mark.parametrize("method", ["kmeans", "leverage", "rpcholesky"])
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
    if method != "kmeans":
        assert np.all(np.isin(idx, draw.rows)) and np.array_equal(idx, idx2)


@pytest.mark.dask
@pytest.mark.parametrize("kind", ["dense", "sparse"])
@pytest.mark.parametrize("sampled", [False, True])
def test_rpcholesky_landmarks_equal_on_dask(monkeypatch, kind, sampled):
    """The same rows and the same seed on the client: the landmarks of a Dask array are
    those of the numpy array, bit for bit, for every chunking (on every row, and on the
    sample above landmark_sample_size(m))."""
    pytest.importorskip("dask.array")
    import scipy.sparse as sp

    from kernelmaps import Nystroem
    from kernelmaps.sampling import resolve_landmarks
    from tests._dask import CHUNKINGS, as_dask

    if sampled:
        monkeypatch.setattr(landmarks_module, "LANDMARK_SAMPLE_SIZE", 40)
        monkeypatch.setattr(landmarks_module, "_SAMPLE_ROWS_PER_LANDMARK", 2)
    X = _data()
    X[np.abs(X) < 0.5] = 0.0
    Xk = sp.csr_matrix(X) if kind == "sparse" else X
    kernel = Gaussian(gamma=0.3)
    for block_size in (1, 100):
        want = select_landmarks(
            Xk, 8, "rpcholesky", kernel=kernel, rng=np.random.default_rng(6), block_size=block_size
        )
        for chunking in CHUNKINGS:
            got = select_landmarks(
                as_dask(Xk, chunking),
                8,
                "rpcholesky",
                kernel=kernel,
                rng=np.random.default_rng(6),
                block_size=block_size,
            )
            assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    for unique in (False, True):
        want = resolve_landmarks(
            Xk, "rpcholesky", 9, kernel=kernel, rng=np.random.default_rng(4), unique=unique
        )
        got = resolve_landmarks(
            as_dask(Xk, "rows-37"),
            "rpcholesky",
            9,
            kernel=kernel,
            rng=np.random.default_rng(4),
            unique=unique,
        )
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    make = lambda: Nystroem(gamma=0.3, n_components=8, landmarks="rpcholesky", random_state=6)  # noqa: E731
    fitted, reference = make().fit(as_dask(Xk, "rows-37")), make().fit(Xk)
    assert np.array_equal(fitted.component_indices_, reference.component_indices_)
    assert np.array_equal(fitted.normalization_, reference.normalization_)
