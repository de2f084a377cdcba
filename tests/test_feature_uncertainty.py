"""The posterior of ridge regression on features: closed forms, brute force and bounds.

* ``return_std`` / ``return_cov`` and ``noise_variance_`` against Bayesian linear regression
  written out (the augmented design with a flat prior on the intercept) and a numerical
  maximization of the (restricted) evidence;
* ``predict_interval`` against jackknife+ from refits without each row;
* ``sample_y`` and ``sample_functions`` against the covariance they sample, by exact
  chi-squared and normal quantiles at a stated failure probability;
* random Fourier features against the exact Gaussian process, within a bound in ``D``;
* Dask and the arrays of other libraries against NumPy.

Rounding tolerances are ``c eps`` times the magnitude compared, ``c`` a count of the
operations (stated where used).
"""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
import scipy.optimize
import scipy.stats

from kernelmaps import FeatureRidge, FeatureRidgeCV, RandomFourierFeatures
from tests._array_api import PLACES, Place, assert_at, assert_close, dispatch

EPS = float(np.finfo(np.float64).eps)
#: The failure probability of every randomized assertion here.
DELTA = 1e-6


def _data(seed: int, n: int = 40, d: int = 3) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.3 * rng.normal(size=n)
    return X, y


def _augmented(X: np.ndarray, alpha: float, intercept: bool) -> tuple[np.ndarray, np.ndarray]:
    """The design with a column of ones and its penalty matrix (0 on the intercept)."""
    if not intercept:
        return X, alpha * np.eye(X.shape[1])
    penalty = alpha * np.eye(X.shape[1] + 1)
    penalty[0, 0] = 0.0
    return np.c_[np.ones(X.shape[0]), X], penalty


def _restricted_noise(X: np.ndarray, y: np.ndarray, alpha: float, intercept: bool) -> float:
    """The maximum of the (restricted) evidence over sigma^2, found numerically: the
    contrasts ``Q^T y`` (``Q`` an orthonormal basis orthogonal to the ones with an
    intercept) are ``N(0, sigma^2 Q^T (I + X X^T / alpha) Q)``."""
    n = X.shape[0]
    Q = np.linalg.qr(np.c_[np.ones(n), np.eye(n)[:, : n - 1]])[0][:, 1:] if intercept else None
    C = np.eye(n) + X @ X.T / alpha
    u = y if Q is None else Q.T @ y
    M = C if Q is None else Q.T @ C @ Q
    _, logdet = np.linalg.slogdet(M)
    quad = float(u @ np.linalg.solve(M, u))

    def minus_log_evidence(log_s2: float) -> float:
        s2 = math.exp(log_s2)
        return 0.5 * (u.size * log_s2 + logdet + quad / s2)

    result = scipy.optimize.minimize_scalar(
        minus_log_evidence, bounds=(-20, 10), method="bounded", options={"xatol": 1e-10}
    )
    return math.exp(result.x)


@pytest.mark.parametrize("intercept", [True, False])
def test_posterior_is_bayesian_linear_regression(seed: int, intercept: bool) -> None:
    X, y = _data(seed)
    alpha = 2.0
    model = FeatureRidge("passthrough", alpha=alpha, fit_intercept=intercept).fit(X, y)
    # the evidence's maximum, found numerically to ~1e-9 relative (xatol on log sigma^2)
    assert model.noise_variance_ == pytest.approx(
        _restricted_noise(X, y, alpha, intercept), rel=1e-7
    )
    s2 = model.noise_variance_
    A, P = _augmented(X, alpha, intercept)
    cov_w = s2 * np.linalg.inv(A.T @ A + P)
    Xt = _data(seed + 1, n=5)[0]
    At = _augmented(Xt, alpha, intercept)[0]
    expected_cov = At @ cov_w @ At.T + s2 * np.eye(5)
    mean, cov = model.predict(Xt, return_cov=True)
    _, std = model.predict(Xt, return_std=True)
    # rounding of the D x D solves: c = 100 (dimension 4, a few factorizations), times
    # the condition number of A^T A + P, on the magnitude of the covariance
    cond = np.linalg.cond(A.T @ A + P)
    tol = 100 * EPS * cond * float(np.max(np.abs(expected_cov)))
    np.testing.assert_allclose(cov, expected_cov, rtol=0, atol=tol)
    np.testing.assert_allclose(std**2, np.diag(expected_cov), rtol=0, atol=tol)
    np.testing.assert_allclose(mean, model.predict(Xt), rtol=0, atol=0)


def test_weights_count_observations(seed: int) -> None:
    """A row of weight 2 is two copies of it: the same noise variance and std."""
    X, y = _data(seed, n=20)
    w = np.r_[np.full(10, 2.0), np.ones(10)]
    Xr, yr = np.r_[X, X[:10]], np.r_[y, y[:10]]
    model = FeatureRidge("passthrough", alpha=1.0).fit(X, y, sample_weight=w)
    repeated = FeatureRidge("passthrough", alpha=1.0).fit(Xr, yr)
    assert model.noise_variance_ == pytest.approx(repeated.noise_variance_, rel=1e-10)
    np.testing.assert_allclose(
        model.predict(X, return_std=True)[1],
        repeated.predict(X, return_std=True)[1],
        rtol=1e-10,
    )
    # weighted rows are not exchangeable: no conformal intervals
    with pytest.raises(ValueError, match="sample_weight"):
        model.predict_interval(X)


def _jackknife_plus(make, X, y, Xt, coverage):
    """Jackknife+ by refitting without each row (Barber et al. 2021, eq. 6)."""
    n = X.shape[0]
    held, residuals = np.empty((Xt.shape[0], n)), np.empty(n)
    for i in range(n):
        keep = np.arange(n) != i
        model = make().fit(X[keep], y[keep])
        held[:, i] = model.predict(Xt)
        residuals[i] = abs(y[i] - model.predict(X[i : i + 1])[0])
    a = 1 - coverage
    lower = np.sort(held - residuals, axis=1)[:, math.floor(a * (n + 1)) - 1]
    upper = np.sort(held + residuals, axis=1)[:, math.ceil((1 - a) * (n + 1)) - 1]
    return lower, upper


@pytest.mark.parametrize("solver", ["primal", "dual"])
def test_intervals_are_jackknife_plus(seed: int, solver: str) -> None:
    X, y = _data(seed, n=30)
    Xt = _data(seed + 1, n=7)[0]
    D = 10 if solver == "primal" else 60

    def make() -> FeatureRidge:
        rff = RandomFourierFeatures(gamma=0.5, n_components=D, random_state=seed)
        return FeatureRidge(rff, alpha=0.5)

    model = make().fit(X, y)
    assert model.solver_ == solver
    lower, upper = model.predict_interval(Xt, coverage=0.8)
    expected = _jackknife_plus(make, X, y, Xt, 0.8)
    # each held-out prediction is a rank-one update of the full fit: rounding c = 1000
    # (the updates and refits of dimension D + 1, conditioned by alpha) on |y|
    tol = 1e3 * D * EPS * float(np.max(np.abs(y)))
    np.testing.assert_allclose(lower, expected[0], rtol=0, atol=tol)
    np.testing.assert_allclose(upper, expected[1], rtol=0, atol=tol)
    assert np.all(lower < model.predict(Xt)) and np.all(model.predict(Xt) < upper)


def test_intervals_refused_beyond_the_scored_rows() -> None:
    X, y = _data(0, n=9)
    model = FeatureRidge("passthrough").fit(X, y)
    with pytest.raises(ValueError, match="needs at least 19 scored rows"):
        model.predict_interval(X[:2], coverage=0.95)  # rank 10 > 9 rows: infinite
    assert np.all(np.isfinite(model.predict_interval(X[:2], coverage=0.8)))
    with pytest.raises(ValueError, match="coverage"):
        model.predict_interval(X, coverage=1.0)


def _chi2_whitened(samples: np.ndarray, mean: np.ndarray, cov: np.ndarray) -> None:
    """``samples`` (n, S) against N(mean, cov): the whitened draws' squared norm is
    chi-squared with ``n S`` degrees of freedom and their mean normal; both within
    their quantiles at ``DELTA`` (two-sided, split between the two tests)."""
    n, S = samples.shape
    white = np.linalg.solve(np.linalg.cholesky(cov), samples - mean[:, None])
    total = float(np.sum(white**2))
    low, high = scipy.stats.chi2.ppf([DELTA / 4, 1 - DELTA / 4], n * S)
    assert low <= total <= high
    z = scipy.stats.norm.ppf(1 - DELTA / (4 * n))
    assert np.all(np.abs(white.mean(axis=1)) <= z / math.sqrt(S))


def test_sample_y_draws_from_the_predictive_covariance(seed: int) -> None:
    X, y = _data(seed)
    model = FeatureRidge(
        RandomFourierFeatures(gamma=0.5, n_components=30, random_state=seed), alpha=0.3
    ).fit(X, y)
    Xt = _data(seed + 1, n=6)[0]
    mean, cov = model.predict(Xt, return_cov=True)
    draws = model.sample_y(Xt, n_samples=2000, random_state=seed)
    assert draws.shape == (6, 2000)
    _chi2_whitened(draws, mean, cov)
    np.testing.assert_array_equal(draws, model.sample_y(Xt, n_samples=2000, random_state=seed))


def test_sample_functions_draw_from_the_latent_posterior(seed: int) -> None:
    X, y = _data(seed)
    model = FeatureRidge(
        RandomFourierFeatures(gamma=0.5, n_components=30, random_state=seed), alpha=0.3
    ).fit(X, y)
    Xt = _data(seed + 1, n=6)[0]
    mean, cov = model.predict(Xt, return_cov=True)
    latent = cov - model.noise_variance_ * np.eye(6)
    paths = model.sample_functions(n_samples=3000, random_state=seed)
    values = paths(Xt)
    assert values.shape == (6, 3000)
    _chi2_whitened(values, mean, latent)
    # the same functions at every call, and after pickling
    np.testing.assert_array_equal(paths(Xt), values)
    # on fewer rows, the same sums of D + 1 products in another grouping: rounding of
    # c = 4 (D + 1) eps times the sums of the products' magnitudes
    Z = np.abs(model.feature_map_.transform(Xt[:2]))
    W = np.abs(paths.coefs[:, 0, :])
    tol = 4 * 31 * EPS * (Z @ W + np.abs(paths.intercepts[0]))
    assert np.all(np.abs(paths(Xt[:2]) - values[:2]) <= tol)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(paths))(Xt), values)


def test_two_targets_have_their_own_noise(seed: int) -> None:
    X, y = _data(seed)
    Y = np.c_[y, 3 * y + np.random.default_rng(seed).normal(size=y.size)]
    model = FeatureRidge("passthrough", alpha=1.0).fit(X, Y)
    single = [FeatureRidge("passthrough", alpha=1.0).fit(X, Y[:, k]) for k in range(2)]
    np.testing.assert_allclose(
        model.noise_variance_, [m.noise_variance_ for m in single], rtol=1e-10
    )
    std = model.predict(X[:4], return_std=True)[1]
    assert std.shape == (4, 2)
    for k in range(2):
        np.testing.assert_allclose(
            std[:, k], single[k].predict(X[:4], return_std=True)[1], rtol=1e-10
        )
    lower, upper = model.predict_interval(X[:4])
    assert lower.shape == upper.shape == (4, 2)
    assert model.sample_y(X[:4], n_samples=3).shape == (4, 2, 3)
    assert model.sample_functions(5)(X[:4]).shape == (4, 2, 5)
    assert model.predict(X[:4], return_cov=True)[1].shape == (4, 4, 2)


def _exact_latent(X: np.ndarray, Xt: np.ndarray, gamma: float, alpha: float) -> np.ndarray:
    """``(1/alpha)(k(x, x) - k_x^T (K + alpha I)^{-1} k_x)``, the exact GP's latent
    variance over sigma^2 for the covariance ``(sigma^2 / alpha) k``."""

    def k(A, B):
        return np.exp(-gamma * ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1))

    Kt = k(Xt, X)
    solved = np.linalg.solve(k(X, X) + alpha * np.eye(X.shape[0]), Kt.T)
    return (1.0 - np.einsum("ij,ji->i", Kt, solved)) / alpha


def test_random_features_approach_the_exact_posterior(seed: int) -> None:
    """With every entry of Z Z^T within eps of K (Hoeffding over the N pairs of rows:
    each feature product is in [-2, 2], so eps = sqrt(8 log(2 N / delta) / D)), the
    latent variance over sigma^2 differs from the exact GP's by at most
    (1/alpha) (eps + 2 n eps / alpha + n eps^2 / alpha + n^2 eps / alpha^2) (the
    perturbation of k_x^T (K + alpha I)^{-1} k_x, with |k| <= 1, |(K + alpha I)^{-1}| <=
    1 / alpha and |E| <= n eps)."""
    n, n_test, D, gamma, alpha = 20, 8, 3000, 0.5, 80.0
    X = _data(seed, n=n)[0]
    y = _data(seed, n=n)[1]
    Xt = _data(seed + 1, n=n_test)[0]
    rff = RandomFourierFeatures(gamma=gamma, n_components=D, random_state=seed)
    model = FeatureRidge(rff, alpha=alpha, fit_intercept=False).fit(X, y)
    _, std = model.predict(Xt, return_std=True)
    unit = std**2 / model.noise_variance_ - 1.0
    N = (n + n_test) ** 2
    eps = math.sqrt(8 * math.log(2 * N / DELTA) / D)
    bound = (eps + 2 * n * eps / alpha + n * eps**2 / alpha + n**2 * eps / alpha**2) / alpha
    exact = _exact_latent(X, Xt, gamma, alpha)
    assert bound < 0.5 / alpha  # the bound says something: the prior variance is 1 / alpha
    assert np.all(np.abs(unit - exact) <= bound)


def test_keep_statistics_false_says_what_to_do() -> None:
    X, y = _data(0)
    model = FeatureRidge("passthrough", keep_statistics=False).fit(X, y)
    with pytest.raises(ValueError, match="keep_statistics=True"):
        model.predict(X, return_std=True)
    with pytest.raises(ValueError, match="At most one"):
        model.predict(X, return_std=True, return_cov=True)


def test_posterior_follows_partial_fit(seed: int) -> None:
    X, y = _data(seed, n=60)
    streamed = FeatureRidge("passthrough", alpha=1.0)
    streamed.partial_fit(X[:30], y[:30])
    first = streamed.predict(X[:3], return_std=True)[1]
    streamed.partial_fit(X[30:], y[30:])
    whole = FeatureRidge("passthrough", alpha=1.0).fit(X, y)
    assert not np.allclose(first, whole.predict(X[:3], return_std=True)[1])
    np.testing.assert_allclose(
        streamed.predict(X[:3], return_std=True)[1],
        whole.predict(X[:3], return_std=True)[1],
        rtol=1e-10,
    )
    assert streamed.noise_variance_ == pytest.approx(whole.noise_variance_, rel=1e-10)


def test_search_delegates_to_its_best_model(seed: int) -> None:
    X, y = _data(seed, n=80)
    rff = RandomFourierFeatures(n_components=40, random_state=seed)
    search = FeatureRidgeCV(rff, gammas=[0.1, 1.0], alphas=[0.1, 1.0]).fit(X, y)
    best = search.best_estimator_
    assert search.noise_variance_ == best.noise_variance_
    for method, args in [("predict_interval", ()), ("sample_y", (3,))]:
        np.testing.assert_array_equal(
            getattr(search, method)(X[:4], *args), getattr(best, method)(X[:4], *args)
        )
    np.testing.assert_array_equal(
        search.predict(X[:4], return_std=True)[1], best.predict(X[:4], return_std=True)[1]
    )
    np.testing.assert_array_equal(
        search.sample_functions(2, random_state=0)(X[:4]),
        best.sample_functions(2, random_state=0)(X[:4]),
    )


def test_pickled_model_forms_its_posterior_again(seed: int) -> None:
    X, y = _data(seed)
    model = FeatureRidge("passthrough").fit(X, y)
    std = model.predict(X[:3], return_std=True)[1]
    assert "_posterior_state" in model.__dict__
    copy = pickle.loads(pickle.dumps(model))
    assert "_posterior_state" not in copy.__dict__
    np.testing.assert_array_equal(copy.predict(X[:3], return_std=True)[1], std)


def test_float32_rows_give_float32_outputs() -> None:
    X, y = _data(0)
    model = FeatureRidge(RandomFourierFeatures(n_components=20, random_state=0)).fit(
        X.astype(np.float32), y
    )
    X32 = X[:5].astype(np.float32)
    assert model.predict(X32, return_std=True)[1].dtype == np.float32
    assert all(b.dtype == np.float32 for b in model.predict_interval(X32))
    assert model.sample_y(X32).dtype == np.float32
    assert model.sample_functions(2)(X32).dtype == np.float32


def test_dask_rows_give_the_in_memory_results(seed: int) -> None:
    da = pytest.importorskip("dask.array")
    X, y = _data(seed, n=200)
    rff = RandomFourierFeatures(gamma=0.5, n_components=30, random_state=seed)
    ref = FeatureRidge(rff, alpha=0.5).fit(X, y)
    model = FeatureRidge(rff, alpha=0.5).fit(da.from_array(X, chunks=70), da.from_array(y, 70))
    Xd = da.from_array(X[:50], chunks=20)
    mean, std = model.predict(Xd, return_std=True)
    lower, upper = model.predict_interval(Xd, coverage=0.9)
    # rounding of the regrouped sums: c = 1000 (D = 30, a few solves) on the magnitudes
    tol = 1e3 * EPS * float(np.max(np.abs(y)))
    np.testing.assert_allclose(std.compute(), ref.predict(X[:50], return_std=True)[1], atol=tol)
    ref_lower, ref_upper = ref.predict_interval(X[:50], coverage=0.9)
    np.testing.assert_allclose(lower.compute(), ref_lower, atol=tol)
    np.testing.assert_allclose(upper.compute(), ref_upper, atol=tol)
    np.testing.assert_allclose(mean.compute(), ref.predict(X[:50]), atol=tol)


@pytest.mark.parametrize("place", PLACES)
def test_arrays_of_other_libraries_stay_where_they_are(place: Place) -> None:
    X, y = _data(0, n=120)
    rff = RandomFourierFeatures(gamma=0.5, n_components=24, random_state=0)
    ref = FeatureRidge(rff, alpha=0.5).fit(X, y)
    Xt = X[:10].astype(place.dtype)
    with dispatch():
        model = FeatureRidge(rff, alpha=0.5).fit(place.asarray(X), place.asarray(y, "float64"))
        at = place.asarray(Xt)
        std = model.predict(at, return_std=True)[1]
        lower, upper = model.predict_interval(at, coverage=0.8)
        draws = model.sample_y(at, n_samples=4, random_state=0)
        paths = model.sample_functions(3, random_state=0)(at)
    for result in (std, lower, upper, draws, paths):
        assert_at(result, place)
    # the features and their products in X's dtype: c = 4 (D + d) operations a value, on
    # the magnitude of the variance (|z|^2 <= 2 and the basis scaled by at most 1/alpha)
    unit_tol = 4 * (24 + 3) * place.eps * (2.0 / 0.5 + 1.0)
    s2 = ref.noise_variance_
    ref_std = ref.predict(Xt, return_std=True)[1]
    assert_close(std, ref_std, s2 * unit_tol / (2 * float(np.min(ref_std))), "std")
    ref_lower, ref_upper = ref.predict_interval(Xt, coverage=0.8)
    span = float(np.max(np.abs(y))) * 4 * (24 + 3) * place.eps * 120
    assert_close(lower, ref_lower, span, "lower")
    assert_close(upper, ref_upper, span, "upper")


def test_kfold_search_gives_cv_plus(seed: int) -> None:
    """CV+ (Barber et al. 2021, section 4) from refits without each fold."""
    from sklearn.model_selection import KFold

    X, y = _data(seed, n=60)
    Xt = _data(seed + 1, n=5)[0]
    splits = KFold(5, shuffle=True, random_state=seed)
    rff = RandomFourierFeatures(gamma=0.5, n_components=12, random_state=seed)
    search = FeatureRidgeCV(rff, gammas=[0.5], alphas=[0.3], cv=splits).fit(X, y)
    held, residuals = np.empty((5, 60)), np.empty(60)
    for train, test in splits.split(X):
        model = FeatureRidge(rff, alpha=0.3).fit(X[train], y[train])
        held[:, test] = model.predict(Xt)[:, None]
        residuals[test] = np.abs(y[test] - model.predict(X[test]))
    lower, upper = search.predict_interval(Xt, coverage=0.8)
    expected_lower = np.sort(held - residuals, axis=1)[:, math.floor(0.2 * 61) - 1]
    expected_upper = np.sort(held + residuals, axis=1)[:, math.ceil(0.8 * 61) - 1]
    # fold models from statistics instead of refits: rounding c = 1000 D on |y|
    tol = 1e3 * 12 * EPS * float(np.max(np.abs(y)))
    np.testing.assert_allclose(lower, expected_lower, rtol=0, atol=tol)
    np.testing.assert_allclose(upper, expected_upper, rtol=0, atol=tol)
    assert search._conformal.folds is not None


def test_kfold_search_on_dask_gives_cv_plus_of_its_hashed_folds(seed: int) -> None:
    da = pytest.importorskip("dask.array")
    from kernelmaps.models._search._pass import hashed_folds

    X, y = _data(seed, n=80)
    Xt = _data(seed + 1, n=5)[0]
    rff = RandomFourierFeatures(gamma=0.5, n_components=12, random_state=seed)
    search = FeatureRidgeCV(rff, gammas=[0.5], alphas=[0.3], cv=4).fit(
        da.from_array(X, chunks=30), da.from_array(y, chunks=30)
    )
    labels = hashed_folds(0, 80, 4)
    held, residuals = np.empty((5, 80)), np.empty(80)
    for k in range(4):
        test = labels == k
        model = FeatureRidge(rff, alpha=0.3).fit(X[~test], y[~test])
        held[:, test] = model.predict(Xt)[:, None]
        residuals[test] = np.abs(y[test] - model.predict(X[test]))
    lower, upper = search.predict_interval(da.from_array(Xt, chunks=2), coverage=0.8)
    tol = 1e3 * 12 * EPS * float(np.max(np.abs(y)))
    np.testing.assert_allclose(
        lower.compute(), np.sort(held - residuals, axis=1)[:, math.floor(0.2 * 81) - 1], atol=tol
    )
    np.testing.assert_allclose(
        upper.compute(), np.sort(held + residuals, axis=1)[:, math.ceil(0.8 * 81) - 1], atol=tol
    )


def test_nystroem_search_says_how_to_get_a_posterior() -> None:
    from kernelmaps import NystroemKernelRidgeCV

    X, y = _data(0, n=100)
    search = NystroemKernelRidgeCV(n_components_grid=[10, 20]).fit(X, y)
    for call in (
        lambda: search.predict(X, return_std=True),
        lambda: search.predict_interval(X),
        lambda: search.sample_y(X),
        lambda: search.sample_functions(2),
    ):
        with pytest.raises(ValueError, match=r"NystroemKernelRidge\(posterior=True\)"):
            call()
