"""Orthogonal random directions: orthonormal blocks, Haar distribution, random stream.

Exact facts (orthonormality, agreement with the plain QR of the same Gaussian matrices)
are checked to float tolerances stated next to them; the distributional test takes its
tolerance from Hoeffding's inequality at failure probability ``DELTA`` and is shown to
catch a planted bug (the sign fix of ``R``'s diagonal left out).
"""

from __future__ import annotations

import numpy as np
import pytest

from kernelmaps.sampling import orthogonal_directions

from ._bounds import hoeffding_radius

EPS = np.finfo(np.float64).eps


def _reference(n_directions: int, dimension: int, rng: np.random.Generator) -> np.ndarray:
    """The definition: one QR of a fresh Gaussian matrix per block, signs of diag(R) fixed."""
    blocks = []
    for _ in range(-(-n_directions // dimension)):
        q, r = np.linalg.qr(rng.standard_normal((dimension, dimension)))
        blocks.append((q * np.where(np.diag(r) < 0.0, -1.0, 1.0)).T)
    return np.concatenate(blocks, axis=0)[:n_directions]


@pytest.mark.parametrize(("n_directions", "dimension"), [(1, 1), (5, 3), (40, 8), (33, 16)])
def test_blocks_are_orthonormal(n_directions: int, dimension: int, seed: int) -> None:
    W = orthogonal_directions(n_directions, dimension, np.random.default_rng(seed))
    assert W.shape == (n_directions, dimension)
    assert W.dtype == np.float64
    for start in range(0, n_directions, dimension):
        block = W[start : start + dimension]
        # Householder QR is backward stable: ||Q^T Q - I|| <= c * d * eps with no
        # dependence on the conditioning of the Gaussian matrix; c = 100 is generous.
        gram = block @ block.T
        np.testing.assert_allclose(gram, np.eye(len(block)), rtol=0, atol=100 * dimension * EPS)


@pytest.mark.parametrize(("n_directions", "dimension"), [(12, 4), (30, 7), (50, 16)])
def test_same_stream_and_values_as_the_definition(
    n_directions: int, dimension: int, seed: int
) -> None:
    """Same Gaussian draws in the same order, same QR up to rounding (partial block too)."""
    W = orthogonal_directions(n_directions, dimension, np.random.default_rng(seed))
    rng = np.random.default_rng(seed)
    expected = _reference(n_directions, dimension, rng)
    # Two backward-stable QRs of the same matrix A differ by at most about
    # cond(A) * d * eps in Q; the Gaussian matrices are drawn again to get cond(A).
    rng = np.random.default_rng(seed)
    for start in range(0, n_directions, dimension):
        cond = np.linalg.cond(rng.standard_normal((dimension, dimension)))
        stop = min(start + dimension, n_directions)
        np.testing.assert_allclose(
            W[start:stop], expected[start:stop], rtol=0, atol=1e3 * cond * dimension * EPS
        )
    # Both consumed the same number of draws: the generators continue identically.
    rest = np.random.default_rng(seed)
    orthogonal_directions(n_directions, dimension, rest)
    assert rest.standard_normal() == rng.standard_normal()


N_BLOCKS = 3000
DIM = 4


def _first_coordinate_stats(W: np.ndarray) -> tuple[float, float]:
    first = W[::DIM, 0]  # one entry per block: independent draws
    return float(first.mean()), float((first**2).mean())


def test_rows_are_uniform_on_the_sphere(seed: int) -> None:
    """Haar blocks: each entry x is symmetric with E[x] = 0 and E[x^2] = 1/d.

    One entry per block gives N_BLOCKS independent draws of x in [-1, 1] (range 2) and of
    x^2 in [0, 1] (range 1); Hoeffding with a union bound over the two means at DELTA.
    Without the sign fix, LAPACK's Householder QR gives Q[0, 0] = -|a_11| / ||a_1|| <= 0,
    whose mean is about -0.42 at d = 4, far outside the radius (about 0.1).
    """
    W = orthogonal_directions(N_BLOCKS * DIM, DIM, np.random.default_rng(seed))
    mean, second = _first_coordinate_stats(W)
    assert abs(mean) <= hoeffding_radius(N_BLOCKS, 2.0, n_events=2)
    assert abs(second - 1.0 / DIM) <= hoeffding_radius(N_BLOCKS, 1.0, n_events=2)


def test_planted_missing_sign_fix_is_caught(seed: int) -> None:
    rng = np.random.default_rng(seed)
    blocks = [np.linalg.qr(rng.standard_normal((DIM, DIM)))[0].T for _ in range(N_BLOCKS)]
    mean, _ = _first_coordinate_stats(np.concatenate(blocks, axis=0))
    assert abs(mean) > hoeffding_radius(N_BLOCKS, 2.0, n_events=2)


# ---------------------------------------------------------------------------------------
# landmarks: the one routine of Nystroem, IKA and NystroemKernelRidge


def test_resolve_landmarks_draws_what_select_landmarks_draws(seed: int) -> None:
    from kernelmaps.kernels import Gaussian
    from kernelmaps.sampling import resolve_landmarks, select_landmarks

    X = np.random.default_rng(seed).normal(size=(60, 3))
    for method in ("uniform", "kmeans", "leverage"):
        kernel = Gaussian(gamma=0.5)
        got = resolve_landmarks(X, method, 8, kernel=kernel, rng=np.random.default_rng(seed))
        ref = select_landmarks(X, 8, method, kernel=kernel, rng=np.random.default_rng(seed))
        np.testing.assert_array_equal(got[0], ref[0])
        assert (got[1] is None and ref[1] is None) or np.array_equal(got[1], ref[1])


def test_resolve_landmarks_given_arrays_dense_sparse_and_checked() -> None:
    import scipy.sparse as sp

    from kernelmaps.sampling import resolve_landmarks

    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 4)).astype(np.float32)
    given = rng.normal(size=(5, 4))
    dense, idx = resolve_landmarks(X, given, 99, rng=rng)
    sparse, _ = resolve_landmarks(sp.csr_matrix(X), sp.csr_matrix(given), 99, rng=rng)
    assert idx is None and dense.dtype == np.float32 and dense.shape == (5, 4)
    np.testing.assert_array_equal(dense, sparse)
    with pytest.raises(ValueError, match="landmarks has 3 features, but X has 4 features"):
        resolve_landmarks(X, given[:, :3], 5, rng=rng)
    with pytest.raises(ValueError, match=r"must have shape \(m, 4\)"):
        resolve_landmarks(X, given[0], 5, rng=rng)
    bad = given.copy()
    bad[1, 2] = np.nan
    with pytest.raises(ValueError, match="NaN or infinity"):
        resolve_landmarks(X, bad, 5, rng=rng)


def test_resolve_landmarks_caps_with_a_warning_and_drops_repeats_on_request() -> None:
    from kernelmaps.sampling import resolve_landmarks

    X = np.repeat(np.arange(6.0)[:, None], 2, axis=0)  # 12 rows, each value twice
    with pytest.warns(UserWarning, match="n_basis=20 is larger than n_samples=12"):
        L, idx = resolve_landmarks(X, "uniform", 20, rng=np.random.default_rng(0), name="n_basis")
    assert L.shape == (12, 1) and idx is not None
    L, idx = resolve_landmarks(X, "uniform", 12, rng=np.random.default_rng(0), unique=True)
    assert L.ravel().tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert idx is not None and np.array_equal(X[idx], L)
    given = np.array([[1.0], [1.0], [2.0]])
    assert resolve_landmarks(X, given, 3, rng=np.random.default_rng(0), unique=True)[0].shape == (
        2,
        1,
    )
