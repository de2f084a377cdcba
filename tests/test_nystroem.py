"""Nyström features: exactness, PSD-consistency, optimality bound, landmark choices, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.stats import binom
from sklearn.datasets import load_digits

from kernelmaps import Nystroem
from kernelmaps.kernels import Cauchy, Gaussian, Laplacian, Matern
from kernelmaps.sampling import select_landmarks

from ._bounds import DELTA

KERNELS = [Gaussian(gamma=0.3), Laplacian(gamma=0.2), Cauchy(gamma=0.5), Matern(nu=1.5)]


def _data(seed: int, n: int = 60, d: int = 4) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(n, d))


def _digits(n: int = 300) -> np.ndarray:
    X, _ = load_digits(return_X_y=True)
    return X[:n] / 16.0


def _callable_rbf(X, Y, gamma=0.3):
    return Gaussian(gamma=gamma)(X, Y)


# ---------------------------------------------------------------------------------------
# exactness and PSD-consistency


@pytest.mark.parametrize("kernel", [*KERNELS, _callable_rbf], ids=repr)
def test_every_point_as_landmark_reproduces_K(kernel):
    X = _data(0, n=40)
    K = (Gaussian(gamma=0.3) if kernel is _callable_rbf else kernel)(X)
    for model in (
        Nystroem(kernel, n_components=40, eigen_cutoff=0.0, random_state=0),
        Nystroem(kernel, landmarks=X, eigen_cutoff=0.0),
    ):
        Z = model.fit_transform(X)
        # float64 round-off of K_nm K_mm^+ K_mn with cond(K_mm) up to ~1e8 here.
        np.testing.assert_allclose(Z @ Z.T, K, atol=1e-6)
    Zp = Nystroem("precomputed", n_components=40, eigen_cutoff=0.0, random_state=0).fit_transform(K)
    np.testing.assert_allclose(Zp @ Zp.T, K, atol=1e-6)


def _check_psd_consistent(K: np.ndarray, Z: np.ndarray) -> None:
    # Exact arithmetic gives K - Z Z^T >= 0 and |z(x)|^2 <= k(x, x); the slack is the
    # float64 round-off of the eigendecomposition, relative to |K|.
    tol = 1e-8 * max(1.0, float(np.abs(K).max())) * K.shape[0]
    E = K - Z @ Z.T
    assert np.linalg.eigvalsh(0.5 * (E + E.T))[0] >= -tol
    assert np.all(np.einsum("ij,ij->i", Z, Z) <= np.diag(K) + tol)


@pytest.mark.parametrize("landmarks", ["uniform", "kmeans", "leverage", "array", "duplicates"])
def test_residual_is_psd_for_any_landmarks(seed, landmarks):
    X = _data(seed)
    kernel = Gaussian(gamma=0.3)
    K = kernel(X)
    rng = np.random.default_rng(seed + 1000)
    if landmarks == "array":
        spec = rng.normal(size=(12, X.shape[1]))
    elif landmarks == "duplicates":
        spec = np.vstack([X[:6], X[:6], X[:6] + 1e-12])
    else:
        spec = landmarks
    model = Nystroem(kernel, n_components=12, landmarks=spec, random_state=seed)
    Z = model.fit_transform(X)
    assert np.all(np.isfinite(Z))
    _check_psd_consistent(K, Z)
    if landmarks == "duplicates":
        assert model.rank_ <= 6
        assert np.all(model.normalization_[:, model.rank_ :] == 0)


@pytest.mark.parametrize("landmarks", ["uniform", "kmeans", "leverage"])
def test_error_never_below_best_rank_m(seed, landmarks):
    X = _digits(200)
    kernel = Gaussian(gamma=0.02)
    K = kernel(X)
    w = np.linalg.eigvalsh(K)
    for m in (5, 20):
        Z = Nystroem(kernel, n_components=m, landmarks=landmarks, random_state=seed).fit_transform(
            X
        )
        best = math.sqrt(float(np.sum(w[:-m] ** 2)))  # Eckart-Young
        assert np.linalg.norm(K - Z @ Z.T) >= best * (1 - 1e-9)


# ---------------------------------------------------------------------------------------
# landmark choices on real data


def _relative_error(K: np.ndarray, Z: np.ndarray) -> float:
    return float(np.linalg.norm(K - Z @ Z.T) / np.linalg.norm(K))


@pytest.fixture(scope="module")
def digits_kernel():
    X = _digits(300)
    D2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    gamma = 1.0 / (2.0 * np.percentile(D2[np.triu_indices(300, 1)], 10))
    return X, Gaussian(gamma=gamma), Gaussian(gamma=gamma)(X)


def _median_confidence_bounds(samples: np.ndarray, delta: float = DELTA) -> tuple[float, float]:
    """Distribution-free bounds on the median from order statistics.

    With ``N`` i.i.d. draws, ``#{X_i < median} ~ Binomial(N, 1/2)``, so
    ``X_(a) <= median <= X_(N + 1 - a)`` with probability ``>= 1 - delta`` for the largest
    ``a`` with ``P(Binomial(N, 1/2) <= a - 1) <= delta / 2``.  No range or variance needed.
    """
    n = samples.shape[0]
    a = int(binom.ppf(delta / 2.0, n, 0.5))  # P(Bin <= a - 1) <= delta / 2
    while a > 0 and binom.cdf(a - 1, n, 0.5) > delta / 2.0:
        a -= 1
    if a < 1:
        raise ValueError(f"{n} draws are too few for a median bound at delta={delta}.")
    ordered = np.sort(samples)
    return float(ordered[a - 1]), float(ordered[n - a])


def test_kmeans_and_leverage_against_uniform_on_digits(seed, digits_kernel):
    """k-means landmarks beat uniform ones by a margin; leverage ones are not worse.

    300 digits, Gaussian kernel with sigma^2 the 10th percentile of squared distances (a
    decaying spectrum), m = 15.  The median relative Frobenius error of uniform (and of
    leverage-score) landmarks is bracketed from 100 draws by order statistics (binomial
    bound, failure probability DELTA each).  The k-means error (its only randomness is
    the initialisation) must be below 75 % of the lower bound of the uniform median
    (measured: ~0.06 against ~0.14; every seed 0-99 passes).  Leverage-score landmarks
    must not be worse than uniform ones: the lower bound of their median must not exceed
    the upper bound of the uniform median.  On these data the two medians agree to about
    1 % (the ridge leverage scores of a Gaussian kernel on digits are nearly uniform), so
    no gain of leverage sampling is asserted here; the gain is tested on California
    housing below (and measured in experiments/nystroem_landmarks.toml).
    """
    X, kernel, K = digits_kernel
    m, draws = 15, 100
    rng = np.random.default_rng(seed)

    def errors(landmarks: str) -> np.ndarray:
        return np.array(
            [
                _relative_error(
                    K,
                    Nystroem(
                        "precomputed", n_components=m, landmarks=landmarks, random_state=rng
                    ).fit_transform(K),
                )
                for _ in range(draws)
            ]
        )

    u_low, u_high = _median_confidence_bounds(errors("uniform"))
    l_low, _ = _median_confidence_bounds(errors("leverage"))
    kmeans = _relative_error(
        K, Nystroem(kernel, n_components=m, landmarks="kmeans", random_state=seed).fit_transform(X)
    )
    assert kmeans <= 0.75 * u_low
    assert l_low <= u_high


@pytest.mark.statistical
@pytest.mark.slow
def test_leverage_beats_uniform_on_california_housing(seed):
    """Ridge-leverage landmarks beat uniform ones where the density is uneven.

    400 rows of the bundled California housing data (a fixed random subset), standardized,
    Gaussian kernel with the median-distance bandwidth, m = 60.  The medians of the
    relative Frobenius error of 200 uniform and 200 leverage-score draws are bracketed by
    order statistics (binomial bound, failure probability DELTA each, no range or variance
    needed); the leverage bracket must lie entirely below the uniform one.  Measured: the
    leverage median is about 0.4 of the uniform one (0.0041 against 0.0098), and the
    upper end of its bracket about 0.6 of the lower end of the uniform bracket.
    """
    from kernelmaps.bandwidth import gamma_from_data
    from kernelmaps.datasets import load_dataset

    X = np.asarray(load_dataset("california_housing").X, dtype=np.float64)
    X = X[np.random.default_rng(0).choice(X.shape[0], 400, replace=False)]
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    K = Gaussian(gamma=gamma_from_data(X, "median"))(X)
    rng = np.random.default_rng(seed)

    def errors(landmarks: str) -> np.ndarray:
        return np.array(
            [
                _relative_error(
                    K,
                    Nystroem(
                        "precomputed", n_components=60, landmarks=landmarks, random_state=rng
                    ).fit_transform(K),
                )
                for _ in range(200)
            ]
        )

    u_low, _ = _median_confidence_bounds(errors("uniform"))
    _, l_high = _median_confidence_bounds(errors("leverage"))
    assert l_high < u_low, (l_high, u_low)


def test_precomputed_matches_feature_input(seed):
    """With m < n (where scikit-learn's precomputed Nystroem fails), same landmarks."""
    X = _data(seed, n=50)
    X_new = _data(seed + 1, n=7)
    kernel = Gaussian(gamma=0.3)
    a = Nystroem(kernel, n_components=10, random_state=seed).fit(X)
    b = Nystroem("precomputed", n_components=10, random_state=seed).fit(kernel(X))
    np.testing.assert_array_equal(a.component_indices_, b.component_indices_)
    np.testing.assert_allclose(a.transform(X_new), b.transform(kernel(X_new, X)), atol=1e-10)
    Zl = Nystroem("precomputed", n_components=10, landmarks="leverage", random_state=seed)
    assert Zl.fit_transform(kernel(X)).shape == (50, 10)


def test_select_landmarks_contract(seed):
    X = _data(seed, n=80).astype(np.float32)
    rng = np.random.default_rng(seed)
    for method in ("uniform", "kmeans", "leverage"):
        for data in (X, sp.csr_matrix(X)):
            L, idx = select_landmarks(data, 10, method, kernel=Gaussian(gamma=0.3), rng=rng)
            assert L.shape == (10, 4) and L.dtype == np.float32
            if method == "kmeans":
                assert idx is None
            else:
                assert idx is not None and np.unique(idx).size == 10
                np.testing.assert_array_equal(L, X[idx])
    with pytest.raises(ValueError, match="n_landmarks=81"):
        select_landmarks(X, 81, "uniform", rng=rng)
    with pytest.raises(ValueError, match="Unknown landmark"):
        select_landmarks(X, 5, "random", rng=rng)


def test_leverage_sampling_favours_isolated_points(seed):
    """Ridge leverage scores of isolated points are ~1, those of a dense cloud ~1/200.

    200 points in a tight cloud (numerically rank one for this kernel) plus 5 isolated
    points, m = 20.  Uniform sampling picks 20 * 5 / 205 = 0.49 isolated points on average
    (hypergeometric); leverage sampling picks 4.8 on average (measured over 400 draws).
    The count lies in [0, 5], so by Hoeffding's inequality the mean over R = 50
    independent draws is within 5 sqrt(log(1/DELTA) / (2 R)) = 1.86 of its expectation
    with probability >= 1 - DELTA, one-sided: at least 4.8 - 1.86 = 2.94 for leverage
    sampling, at most 0.49 + 1.86 = 2.35 for uniform sampling.  The threshold 2.5 between
    them passes for a correct implementation and fails for uniform probabilities (planted
    bug, checked below), each with probability >= 1 - DELTA.
    """
    n_draws = 50
    slack = 5.0 * math.sqrt(math.log(1.0 / DELTA) / (2.0 * n_draws))
    threshold = 2.5
    assert 4.8 - slack > threshold > 20 * 5 / 205 + slack

    def mean_isolated(method: str) -> float:
        counts = []
        for child in np.random.SeedSequence(seed).spawn(n_draws):
            rng = np.random.default_rng(child)
            cloud = 0.01 * rng.normal(size=(200, 2))
            X = np.vstack([cloud, 10.0 * np.arange(1, 6)[:, None] * [1, 0]])
            _, idx = select_landmarks(X, 20, method, kernel=Gaussian(gamma=1.0), rng=rng)
            assert idx is not None and np.unique(idx).size == 20
            counts.append(np.count_nonzero(idx >= 200))
        return float(np.mean(counts))

    assert mean_isolated("leverage") >= threshold
    assert mean_isolated("uniform") < threshold


# ---------------------------------------------------------------------------------------
# invariants


def test_determinism_blocks_sparse_and_float32(seed):
    X = _data(seed, n=70)
    model = Nystroem(Laplacian(gamma=0.2), n_components=15, random_state=seed).fit(X)
    Z = model.transform(X)
    np.testing.assert_array_equal(
        Z, Nystroem(Laplacian(gamma=0.2), n_components=15, random_state=seed).fit_transform(X)
    )
    np.testing.assert_allclose(model.transform(X[10:30]), Z[10:30], rtol=0, atol=1e-12)
    Xs = X.copy()
    Xs[np.abs(Xs) < 0.7] = 0.0
    dense = Nystroem(Gaussian(gamma=0.3), n_components=15, random_state=seed).fit(Xs)
    sparse = Nystroem(Gaussian(gamma=0.3), n_components=15, random_state=seed).fit(
        sp.csr_matrix(Xs)
    )
    np.testing.assert_allclose(dense.transform(Xs), sparse.transform(sp.csr_matrix(Xs)), atol=1e-10)
    Z32 = Nystroem(Gaussian(gamma=0.3), n_components=15, random_state=seed).fit_transform(
        X.astype(np.float32)
    )
    assert Z32.dtype == np.float32
    Z64 = dense.fit(X).transform(X)
    # float32 input: K_nm is rounded to float32 (relative 6e-8) before the float64
    # normalization; the Gram matrices agree to that accuracy times |K_mm^{-1}|.
    np.testing.assert_allclose(Z32 @ Z32.T, Z64 @ Z64.T, atol=1e-4)


def test_more_components_than_samples_uses_all_samples():
    X = _data(0, n=12)
    with pytest.warns(UserWarning, match="n_components=30 is larger than n_samples=12"):
        model = Nystroem(Gaussian(gamma=0.3), n_components=30, random_state=0).fit(X)
    assert model.n_components_ == 12 and model.transform(X).shape == (12, 12)
    np.testing.assert_allclose(
        model.transform(X) @ model.transform(X).T, Gaussian(gamma=0.3)(X), atol=1e-8
    )
    assert model.get_feature_names_out().shape == (12,)


# ---------------------------------------------------------------------------------------
# bad input


def test_bad_input_errors():
    X = _data(0, n=30)
    with pytest.raises(ValueError, match="landmarks has 3 features, but X has 4 features"):
        Nystroem(landmarks=np.zeros((5, 3))).fit(X)
    with pytest.raises(ValueError, match=r"shape .* it must return"):
        Nystroem(lambda A, B: np.ones((A.shape[0], 2)), n_components=5, random_state=0).fit(X)
    with pytest.raises(ValueError, match="not symmetric"):
        Nystroem(lambda A, B: A @ (B + 1.0).T, n_components=5, random_state=0).fit(X)
    with pytest.raises(ValueError, match="square n x n kernel matrix"):
        Nystroem("precomputed", n_components=5).fit(np.ones((30, 20)))
    with pytest.raises(ValueError, match="needs feature vectors"):
        Nystroem("precomputed", landmarks="kmeans", n_components=5).fit(np.eye(30))
    with pytest.raises(ValueError, match="Unknown kernel"):
        Nystroem("nope").fit(X)
    with pytest.raises(ValueError, match="callable kernel"):
        Nystroem(_callable_rbf, gamma=0.1).fit(X)
    model = Nystroem(Gaussian(gamma=0.3), n_components=5, random_state=0).fit(X)
    with pytest.raises(ValueError, match="features"):
        model.transform(np.zeros((3, 5)))


def test_non_psd_kernel_warns_and_stays_finite():
    X = _data(0, n=30)

    def sigmoid(A, B):
        return np.tanh(A @ B.T + 1.0)

    with pytest.warns(UserWarning, match="negative eigenvalues"):
        Z = Nystroem(sigmoid, n_components=20, random_state=0).fit_transform(X)
    assert np.all(np.isfinite(Z))
    with pytest.warns(UserWarning, match="no positive eigenvalue"):
        Z = Nystroem(lambda A, B: -Gaussian(gamma=0.3)(A, B), n_components=8).fit_transform(X)
    assert np.all(Z == 0)


def test_check_errors_margin_catches_planted_bug(digits_kernel):
    """Without the eigenvalue cut-off normalization (K_mm^{-1} instead of K_mm^{-1/2}),
    the PSD check fails: the check is not vacuous."""
    X, kernel, K = digits_kernel
    model = Nystroem(kernel, n_components=15, random_state=0).fit(X)
    C = kernel(X, model.components_)
    Z_bug = C @ np.linalg.pinv(kernel(model.components_))  # wrong power
    with pytest.raises(AssertionError):
        _check_psd_consistent(K, Z_bug)
    _check_psd_consistent(K, model.transform(X))
    assert DELTA > 0


# ---------------------------------------------------------------------------------------
# fast paths: the landmark kernel block and the float32 eigendecomposition


def test_landmark_kernel_block_matches_the_kernel(seed):
    from kernelmaps.kernels._landmark_block import LandmarkKernel

    rng = np.random.default_rng(seed)
    # far from the origin: |x|^2 ~ 4e4 while |x - l|^2 ~ 8
    X = rng.normal(size=(50, 4)) + 100.0
    L = rng.normal(size=(7, 4)) + 100.0
    kernel = Gaussian(gamma=0.3)

    def direct(A, B):  # from the differences: no cancellation
        return np.exp(-0.3 * ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1))

    # The exponent -gamma |x - l|^2 is formed from landmark-centred rows, with an absolute
    # rounding error of at most about 4 eps gamma (|x - mu| + |l - mu|)^2 (+ 2 eps for
    # exp and the centring, relative to k), eps of the working dtype.
    mu = L.mean(axis=0)
    nx = np.linalg.norm(X - mu, axis=1)[:, None]
    nl = np.linalg.norm(L - mu, axis=1)[None, :]
    for dtype in (np.float64, np.float32):
        eps = float(np.finfo(dtype).eps)
        Xd, Ld = X.astype(dtype), L.astype(dtype)
        reference = direct(Xd.astype(np.float64), Ld.astype(np.float64))  # rounded inputs
        bound = 4 * eps * 0.3 * (nx + nl) ** 2 + 2 * eps
        K = LandmarkKernel(kernel, Ld, dtype)(Xd)
        assert K.dtype == dtype
        assert np.all(np.abs(K / reference - 1.0) <= bound)
    exact = direct(X, L)
    eps = float(np.finfo(np.float32).eps)
    X32, L32 = X.astype(np.float32), L.astype(np.float32)
    # Planted bug: the same expansion without centring loses everything to cancellation.
    sq = (X32 * X32).sum(1)[:, None] + (L32 * L32).sum(1)[None, :] - 2 * X32 @ L32.T
    uncentred = np.exp(-np.float32(0.3) * np.maximum(sq, 0))
    assert np.any(np.abs(uncentred / reference - 1.0) > bound)
    # other kernels and sparse input go through the kernel itself
    lap = Laplacian(gamma=0.2)
    np.testing.assert_array_equal(LandmarkKernel(lap, L, np.float64)(X), lap(X, L))
    np.testing.assert_allclose(
        LandmarkKernel(kernel, L - 100.0, np.float64)(sp.csr_matrix(X - 100.0)),
        exact,
        rtol=1e-12,
    )


def test_float32_fit_keeps_float32_and_the_accuracy(seed):
    X = _digits(600)
    fit_rows, held_out = X[:500], X[500:]
    # a smooth kernel and many landmarks: K_mm is ill-conditioned, the Nyström error small
    kernel = Gaussian(gamma=0.02)
    K = kernel(held_out)
    m = 300
    models = {
        dtype: Nystroem(kernel, n_components=m, random_state=seed).fit(fit_rows.astype(dtype))
        for dtype in (np.float64, np.float32)
    }
    m32, m64 = models[np.float32], models[np.float64]
    np.testing.assert_array_equal(m32.component_indices_, m64.component_indices_)
    assert m32.normalization_.dtype == np.float32 and m32.components_.dtype == np.float32
    # The float32 eigendecomposition is backward stable: K_mm - V diag(w) V^T is within
    # m * eps32 |K_mm| (the a-priori bound of LAPACK's symmetric eigensolvers, p(m) = m).
    K_mm = kernel(m64.components_)
    r = m32.rank_
    N = m32.normalization_[:, :r].astype(np.float64)
    V = N * np.sqrt(m32.eigenvalues_[:r])
    recon = (V * m32.eigenvalues_[:r]) @ V.T
    assert np.linalg.norm(K_mm - recon) <= m * np.finfo(np.float32).eps * np.linalg.norm(K_mm)
    # Held-out kernel error: float32 rounding (relative 1e-7 on k, amplified by at most
    # 1 / sqrt(eps32 w_max) on the kept directions) stays far below the Nyström error;
    # the check allows 5 % of it.
    errors = {}
    for dtype, model in models.items():
        Z = model.transform(held_out.astype(dtype))
        assert Z.dtype == dtype
        errors[dtype] = _relative_error(K, Z.astype(np.float64))
    assert abs(errors[np.float32] - errors[np.float64]) <= 0.05 * errors[np.float64]
    # Planted bug: a float32 cut-off of m * eps32 (too coarse) drops useful directions.
    coarse = Nystroem(
        kernel, n_components=m, eigen_cutoff=m * float(np.finfo(np.float32).eps), random_state=seed
    ).fit(fit_rows.astype(np.float32))
    Zc = coarse.transform(held_out.astype(np.float32)).astype(np.float64)
    assert _relative_error(K, Zc) - errors[np.float64] > 0.05 * errors[np.float64]


def test_leverage_scores_survive_a_lapack_internal_error(monkeypatch):
    """LAPACK's syevr can stop with 'Internal Error' on a numerically low-rank kernel
    matrix (the clustered data above, seed 10); the top eigenvalues then come from all of
    them, and the sampling goes on with the same values."""
    import scipy.linalg

    from kernelmaps.sampling import _leverage

    A = Gaussian(gamma=1.0)(*(2 * [np.random.default_rng(0).normal(size=(30, 2))]))
    want = np.linalg.eigvalsh(A)[-5:]
    np.testing.assert_allclose(_leverage._top_eigenvalues(A, 5), want, rtol=1e-10)

    def internal_error(*args, **kwargs):
        raise np.linalg.LinAlgError("Internal Error.")

    monkeypatch.setattr(scipy.linalg, "eigh", internal_error)
    np.testing.assert_array_equal(_leverage._top_eigenvalues(A, 5), want)
    X = np.random.default_rng(1).normal(size=(200, 2))
    _, idx = select_landmarks(
        X, 20, "leverage", kernel=Gaussian(gamma=1.0), rng=np.random.default_rng(2)
    )
    assert idx is not None and np.unique(idx).size == 20


@pytest.mark.parametrize("landmarks", ["uniform", "kmeans", "given"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_new_gamma_on_the_same_landmarks_equals_a_fit(seed, landmarks, dtype):
    """``_with_kernel_params(gamma=g)`` keeps the landmark array and gives the map that
    ``fit`` with ``gamma=g`` and the same seed gives (the landmarks do not depend on
    gamma): the same kernel evaluations and eigendecomposition, equal to rounding,
    ``m eps |Z|_max`` (they are the same operations on the same numbers)."""
    X = _data(seed, n=80).astype(dtype)
    given = X[::4] + 0.01
    params = {
        "landmarks": given if landmarks == "given" else landmarks,
        "n_components": 20,
        "random_state": seed,
    }
    fitted = Nystroem(gamma=0.05, **params).fit(X)
    assert fitted._kernel_free_state()
    refitted = fitted._with_kernel_params(gamma=0.7)
    direct = Nystroem(gamma=0.7, **params).fit(X)
    assert refitted.components_ is fitted.components_
    assert refitted.gamma == 0.7 and fitted.gamma == 0.05  # the fitted map is unchanged
    eps = float(np.finfo(dtype).eps)
    np.testing.assert_allclose(
        refitted.components_, direct.components_, rtol=0, atol=eps * np.abs(X).max()
    )
    Z, Z_direct = refitted.transform(X), direct.transform(X)
    assert Z.dtype == Z_direct.dtype == dtype and refitted.rank_ == direct.rank_
    m = refitted.n_components_
    np.testing.assert_allclose(Z, Z_direct, rtol=0, atol=m * eps * np.abs(Z_direct).max())


def test_landmarks_chosen_with_the_kernel_are_not_reused():
    X = _data(0)
    fitted = Nystroem(landmarks="leverage", n_components=10, random_state=0).fit(X)
    assert not fitted._kernel_free_state()
    with pytest.raises(ValueError, match="fit a clone"):
        fitted._with_kernel_params(gamma=0.3)
    uniform = Nystroem(n_components=10, random_state=0).fit(X)
    with pytest.raises(ValueError, match="give a number"):
        uniform._with_kernel_params(gamma="scale")
