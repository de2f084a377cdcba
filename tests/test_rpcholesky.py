"""Randomly pivoted Cholesky (Chen, Epperly, Tropp & Webber 2024) and its blocked form.

Exact facts are checked exactly or to a round-off bound; the laws of the pivots by
Hoeffding's inequality at the failure probability ``DELTA`` of tests/_bounds.py, each with a
planted bug that the same check rejects.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.stats import hypergeom

from kernelmaps import IKA, Nystroem
from kernelmaps.kernels import Gaussian
from kernelmaps.models import NystroemKernelRidge
from kernelmaps.sampling import LANDMARK_METHODS, rpcholesky, select_landmarks
from kernelmaps.sampling._rpcholesky import RESIDUAL_RTOL, rpcholesky_indices
from tests._bounds import DELTA, hoeffding_radius

EPS = float(np.finfo(np.float64).eps)


class LinearKernel:
    """``k(a, b) = a . b`` with its diagonal: a kernel whose diagonal is not constant."""

    def __call__(self, A, B):
        return np.asarray(A, dtype=np.float64) @ np.asarray(B, dtype=np.float64).T

    def diag(self, A):
        A = np.asarray(A, dtype=np.float64)
        return np.einsum("ij,ij->i", A, A)


class CountingKernel:
    """A Gaussian kernel that records the shape of every block it evaluates."""

    def __init__(self, gamma: float) -> None:
        self.inner = Gaussian(gamma=gamma)
        self.shapes: list[tuple[int, int]] = []

    def __call__(self, A, B):
        self.shapes.append((A.shape[0], B.shape[0]))
        return self.inner(A, B)

    def diag(self, A):
        return self.inner.diag(A)


def _data(seed: int, n: int = 150, d: int = 3) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(n, d))


def _dense_reference(K: np.ndarray, m: int, rng: np.random.Generator):
    """Algorithm 1 of Chen et al. on the dense matrix ``K``, drawing as the library does.

    One uniform per pivot, inverted on the cumulative residual diagonal; a pivot whose
    residual is round-off is discarded (its residual set to zero) and drawn again.
    """
    n = K.shape[0]
    diag = np.diagonal(K).copy()
    floor = RESIDUAL_RTOL * np.abs(diag)
    d = np.where(diag > floor, diag, 0.0)
    F = np.zeros((n, m))
    S: list[int] = []
    while len(S) < m and d.sum() > 0:
        c = np.cumsum(d)
        s = int(min(np.searchsorted(c, rng.random(1)[0] * c[-1], side="right"), n - 1))
        k = len(S)
        g = K[:, s] - F[:, :k] @ F[s, :k]
        if not g[s] > floor[s]:
            d[s] = 0.0
            continue
        F[:, k] = g / math.sqrt(g[s])
        S.append(s)
        d = np.maximum(d - F[:, k] ** 2, 0.0)
        d[S] = 0.0
        d[d <= floor] = 0.0
    return np.array(S, dtype=np.intp), F[:, : len(S)]


# ---------------------------------------------------------------------------------------
# correctness against a dense reference


def test_unblocked_equals_the_dense_reference(seed):
    X = _data(seed)
    kernel = Gaussian(gamma=0.4)
    m = 25
    idx, F = rpcholesky(X, m, kernel, np.random.default_rng(seed), block_size=1)
    ref_idx, ref_F = _dense_reference(kernel(X, X), m, np.random.default_rng(seed))
    assert np.array_equal(idx, ref_idx)
    # the same operations on the same kernel values up to the order of the sums:
    # |F - F_ref| <= m * eps * (growth of F, at most 1 per column since |F_ij| <= 1) * m
    assert np.max(np.abs(F - ref_F)) <= 16 * m * m * EPS


@pytest.mark.parametrize("block_size", [1, 4, 100])
def test_factor_is_the_nystroem_approximation_of_the_pivots(seed, block_size):
    X = _data(seed)
    kernel = Gaussian(gamma=0.4)
    idx, F = rpcholesky(X, 20, kernel, np.random.default_rng(seed), block_size=block_size)
    assert idx.shape == (20,) and len(set(idx.tolist())) == 20
    K = kernel(X, X)
    K_SS = K[np.ix_(idx, idx)]
    nystroem = K[:, idx] @ np.linalg.solve(K_SS, K[idx, :])
    # Cholesky of K_SS is backward stable (error m eps |K_SS| relative); the Nystroem
    # product amplifies it by at most cond(K_SS); entries of K are at most 1.
    tol = 16 * 20 * EPS * np.linalg.cond(K_SS)
    assert np.max(np.abs(F @ F.T - nystroem)) <= tol
    # and the factor interpolates the pivot columns exactly (up to round-off)
    assert np.max(np.abs((F @ F[idx].T) - K[:, idx])) <= tol


def test_the_kernel_is_evaluated_on_n_m_entries_never_n_by_n(seed):
    X = _data(seed, n=300)
    m = 30
    for block_size in (1, 8):
        kernel = CountingKernel(0.4)
        rpcholesky(X, m, kernel, np.random.default_rng(seed), block_size=block_size)
        columns = sum(r * c for r, c in kernel.shapes if r == X.shape[0])
        blocks = [(r, c) for r, c in kernel.shapes if r != X.shape[0]]
        assert columns == X.shape[0] * m
        assert all(r == c and r <= block_size for r, c in blocks)
        assert (X.shape[0], X.shape[0]) not in kernel.shapes
        if block_size == 1:
            assert not blocks


# ---------------------------------------------------------------------------------------
# the law of the pivots

# Rows whose squared norms are the weights of the first pivot under the linear kernel;
# rows 0 and 1 are nearly parallel, so that the second pivot's law after row 0 differs
# much from the first's.
ROWS = np.array([[1.0, 0.0], [0.99, 0.141], [0.0, 1.0], [0.0, 0.5]])
N_DRAWS = 4000


def _first_two_law() -> np.ndarray:
    """``P(s1 = i, s2 = j)`` of RPCholesky on ``ROWS`` under the linear kernel."""
    K = LinearKernel()(ROWS, ROWS)
    d = np.diagonal(K)
    P = np.zeros((4, 4))
    for i in range(4):
        residual = np.diagonal(K - np.outer(K[:, i], K[:, i]) / K[i, i]).copy()
        residual[i] = 0.0
        P[i] = d[i] / d.sum() * residual / residual.sum()
    return P


def _law_holds(pairs: np.ndarray) -> bool:
    """Every joint frequency of (first, second) pivot within Hoeffding's radius of the law.

    The indicator of each of the 16 events is in [0, 1]; with a union bound over them,
    the check fails with probability at most DELTA for correct pivots.
    """
    freq = np.zeros((4, 4))
    np.add.at(freq, (pairs[:, 0], pairs[:, 1]), 1.0)
    freq /= pairs.shape[0]
    radius = hoeffding_radius(pairs.shape[0], 1.0, n_events=16)
    return bool(np.max(np.abs(freq - _first_two_law())) <= radius)


def _first_law_holds(first: np.ndarray) -> bool:
    """The frequency of each first pivot within Hoeffding's radius of ``d_i / sum d``."""
    d = LinearKernel().diag(ROWS)
    freq = np.bincount(first, minlength=4) / first.shape[0]
    radius = hoeffding_radius(first.shape[0], 1.0, n_events=4)
    return bool(np.max(np.abs(freq - d / d.sum())) <= radius)


@pytest.mark.parametrize("block_size", [1, 3])
def test_the_pivots_have_the_law_of_rpcholesky(seed, block_size):
    rng = np.random.default_rng(seed)
    kernel = LinearKernel()
    pairs = np.array(
        [rpcholesky(ROWS, 2, kernel, rng, block_size=block_size).indices for _ in range(N_DRAWS)]
    )
    assert _first_law_holds(pairs[:, 0])
    assert _law_holds(pairs)


def test_planted_bugs_fail_the_law_checks():
    """Uniform pivots fail the first-pivot check; a block that accepts every distinct
    proposal (no rejection) fails the joint check.  The gaps are far beyond the radii:
    the first law is (0.31, 0.31, 0.31, 0.08) against 1/4, and P(s1 = 0, s2 = 1) is 0.005
    for RPCholesky against 0.14 without rejection: gaps of 0.17 and 0.13, more than twice
    the radii (0.045 and 0.047 at 4000 draws), so that the bugs fail with probability at
    least 1 - DELTA."""
    rng = np.random.default_rng(0)
    assert 2 * hoeffding_radius(N_DRAWS, 1.0, n_events=16) < 0.13
    assert 2 * hoeffding_radius(N_DRAWS, 1.0, n_events=4) < 0.17
    assert not _first_law_holds(rng.integers(0, 4, size=N_DRAWS))
    d = LinearKernel().diag(ROWS)
    no_rejection = []
    for _ in range(N_DRAWS):
        first = rng.choice(4, p=d / d.sum())
        rest = np.delete(np.arange(4), first)
        second = rng.choice(rest, p=d[rest] / d[rest].sum())
        no_rejection.append((first, second))
    assert _first_law_holds(np.array(no_rejection)[:, 0])  # the first pivot is right
    assert not _law_holds(np.array(no_rejection))


# ---------------------------------------------------------------------------------------
# trace error on clustered data: RPCholesky against uniform landmarks

SIZES = (160, 10, 10, 10, 10)
GAMMA, RADIUS = 1.0, 2e-5


def _clusters(seed: int) -> np.ndarray:
    """Five clusters 100 apart (their kernel exp(-10^4) is 0 in float64), each within
    RADIUS of its centre."""
    rng = np.random.default_rng(seed)
    parts = []
    for j, size in enumerate(SIZES):
        offsets = rng.normal(size=(size, 2))
        offsets *= RADIUS * rng.random((size, 1)) / np.linalg.norm(offsets, axis=1)[:, None]
        parts.append(np.array([100.0 * j, 0.0]) + offsets)
    return np.concatenate(parts)


def _trace_error(K: np.ndarray, idx: np.ndarray) -> float:
    K_SS = K[np.ix_(idx, idx)]
    approx = K[:, idx] @ np.linalg.pinv(K_SS, hermitian=True) @ K[idx, :]
    return float(np.trace(K - approx))


def test_trace_error_below_uniform_on_clustered_data(seed):
    """With one landmark per cluster, each point's residual is at most
    1 - exp(-2 gamma (2 r)^2) <= 8 gamma r^2, so the trace error is at most
    n 8 gamma r^2.  RPCholesky draws a second pivot in a covered cluster with
    probability at most n 8 gamma r^2 / 10 per pivot (an uncovered cluster keeps a
    residual mass of 10), below DELTA over the five pivots.  Uniform landmarks miss a
    cluster of 10 with probability C(190, 5) / C(200, 5) = 0.77: in expectation their
    trace error is at least 30, while RPCholesky's is at most the bound plus
    P(failure) tr(K)."""
    X = _clusters(seed)
    n, m = X.shape[0], len(SIZES)
    kernel = Gaussian(gamma=GAMMA)
    K = kernel(X, X)
    bound = n * 8 * GAMMA * RADIUS**2
    p_fail = m * bound / min(SIZES)
    assert p_fail <= DELTA
    miss = hypergeom(n, 10, m).pmf(0)
    uniform_expected = 4 * 10 * miss * (1 - 8 * GAMMA * RADIUS**2)
    assert bound + p_fail * n < uniform_expected
    for block_size in (1, 100):
        idx = rpcholesky(X, m, kernel, np.random.default_rng(seed), block_size=block_size)[0]
        assert _trace_error(K, idx) <= bound + 1e3 * n * EPS


def test_planted_uniform_landmarks_fail_the_clustered_check():
    X = _clusters(0)
    K = Gaussian(gamma=GAMMA)(X, X)
    bound = X.shape[0] * 8 * GAMMA * RADIUS**2
    idx = select_landmarks(X, len(SIZES), "uniform", rng=np.random.default_rng(0))[1]
    assert idx is not None and _trace_error(K, idx) > bound + 1e3 * X.shape[0] * EPS


# ---------------------------------------------------------------------------------------
# duplicate rows, dtypes, sparse input, the estimators


def test_duplicate_rows_stop_early_and_fill_with_a_warning(seed):
    base = _data(seed, n=5)
    X = np.repeat(base, 8, axis=0)
    kernel = Gaussian(gamma=0.5)
    for block_size in (1, 100):
        idx, F = rpcholesky(X, 8, kernel, np.random.default_rng(seed), block_size=block_size)
        assert idx.shape == (5,) and F.shape == (40, 5)
        assert len({tuple(row) for row in X[idx]}) == 5  # one copy of every distinct row
    with pytest.warns(UserWarning, match="found only 5 of 8 landmarks"):
        L, idx = select_landmarks(X, 8, "rpcholesky", kernel=kernel, rng=np.random.default_rng(0))
    assert idx is not None and len(set(idx.tolist())) == 8
    assert len({tuple(row) for row in L}) == 5
    with pytest.warns(UserWarning, match="found only 5 of 8"):
        Z = Nystroem(gamma=0.5, n_components=8, landmarks="rpcholesky", random_state=0).fit(X)
    assert Z.n_components_ == 8 and Z.rank_ == 5
    assert np.all(np.isfinite(Z.transform(X)))


def test_every_row_when_m_is_n():
    X = _data(0, n=12)
    idx = rpcholesky_indices(X, 12, Gaussian(gamma=0.4), seed=0)
    assert np.array_equal(idx, np.arange(12))


def test_float32_kept_and_landmarks_are_rows():
    X = _data(1).astype(np.float32)
    Z = Nystroem(gamma=0.4, n_components=15, landmarks="rpcholesky", random_state=0).fit(X)
    assert Z.components_.dtype == np.float32 and Z.transform(X).dtype == np.float32
    assert np.array_equal(Z.components_, X[Z.component_indices_])


def test_sparse_input_gives_the_dense_landmarks(seed):
    X = _data(seed)
    X[np.abs(X) < 0.8] = 0.0
    kernel = Gaussian(gamma=0.4)
    for block_size in (1, 100):
        dense = rpcholesky(X, 12, kernel, np.random.default_rng(seed), block_size=block_size)
        sparse = rpcholesky(
            sp.csr_matrix(X), 12, kernel, np.random.default_rng(seed), block_size=block_size
        )
        assert np.array_equal(dense.indices, sparse.indices)
    make = lambda: Nystroem(gamma=0.4, n_components=12, landmarks="rpcholesky", random_state=3)  # noqa: E731
    assert np.array_equal(
        make().fit(sp.csr_matrix(X)).component_indices_, make().fit(X).component_indices_
    )


def test_estimators_take_rpcholesky():
    X = _data(2, n=200)
    y = np.sin(X[:, 0])
    assert "rpcholesky" in LANDMARK_METHODS
    model = NystroemKernelRidge(
        gamma=0.4, n_components=20, landmarks="rpcholesky", random_state=0
    ).fit(X, y)
    assert model.landmarks_.shape == (20, 3)
    assert np.array_equal(model.landmarks_, X[model.landmark_indices_])
    ika = IKA(gamma=0.4, n_components=5, n_basis=20, centers="rpcholesky", random_state=0)
    centres = ika.fit(X).centers_
    assert centres is not None and centres.shape == (20, 3)
    assert all(any(np.array_equal(c, x) for x in X) for c in centres)
    blocked = Nystroem(gamma=0.4, n_components=20, landmarks="rpcholesky", random_state=0)
    assert blocked.fit(X).rank_ == 20


def test_block_size_option_and_errors():
    X = _data(0)
    kernel = Gaussian(gamma=0.4)
    L1, idx1 = select_landmarks(
        X, 10, "rpcholesky", kernel=kernel, rng=np.random.default_rng(0), block_size=1
    )
    assert idx1 is not None and np.array_equal(L1, X[idx1])
    with pytest.raises(ValueError, match="block_size"):
        select_landmarks(
            X, 10, "rpcholesky", kernel=kernel, rng=np.random.default_rng(0), block_size=0
        )
    with pytest.raises(TypeError, match="block_size"):
        select_landmarks(
            X, 10, "rpcholesky", kernel=kernel, rng=np.random.default_rng(0), accelerated=True
        )
    with pytest.raises(ValueError, match="needs the kernel"):
        select_landmarks(X, 10, "rpcholesky", rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="landmarks"):
        Nystroem(landmarks="rp-cholesky").fit(X)


def test_experiment_method_is_registered():
    from kernelmaps.experiments import get_method

    spec = get_method("nystroem-rpcholesky")
    assert "Cholesky" in spec.description


def test_precomputed_kernel_gives_the_same_pivots():
    """With kernel='precomputed' the pivots are looked up in the given matrix: the same
    landmarks as from the feature vectors (it used to fail, asking for the kernel)."""
    X = np.random.default_rng(0).random((50, 3))
    K = Gaussian(gamma=1.0)(X)
    given = Nystroem(kernel="precomputed", landmarks="rpcholesky", n_components=10,
                     random_state=0).fit(K)  # fmt: skip
    direct = Nystroem(kernel="rbf", gamma=1.0, landmarks="rpcholesky", n_components=10,
                      random_state=0).fit(X)  # fmt: skip
    np.testing.assert_array_equal(given.component_indices_, direct.component_indices_)
