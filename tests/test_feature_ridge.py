"""FeatureRidge: closed form, streaming, alpha selection, sparse features, bad input, and
the convergence of random-Fourier-feature ridge to exact kernel ridge regression."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
import scipy.linalg
import scipy.sparse as sp
from sklearn import config_context, get_config
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.datasets import load_diabetes
from sklearn.kernel_approximation import Nystroem
from sklearn.linear_model import Ridge
from sklearn.preprocessing import PolynomialFeatures

from kernelmaps import FeatureRidge, KernelRidge, RandomBinningFeatures, RandomFourierFeatures

from ._bounds import DELTA


@pytest.fixture(scope="module")
def diabetes() -> tuple[np.ndarray, np.ndarray]:
    X, y = load_diabetes(return_X_y=True)
    X = X / X.std(axis=0)
    return X[:120, :4], (y[:120] - y.mean()) / y.std()


def _closed_form(Z, Y, alpha, w=None, fit_intercept=True):
    """Weighted ridge with an unpenalized intercept by the augmented normal equations."""
    n = Z.shape[0]
    w = np.ones(n) if w is None else w
    A = np.hstack([np.ones((n, 1)), Z]) if fit_intercept else Z
    P = np.eye(A.shape[1]) * alpha
    if fit_intercept:
        P[0, 0] = 0.0
    theta = np.linalg.solve(A.T @ (A * w[:, None]) + P, A.T @ (w[:, None] * Y))
    return (theta[0], theta[1:]) if fit_intercept else (np.zeros(Y.shape[1]), theta)


class _Densify(TransformerMixin, BaseEstimator):
    """A feature map wrapper returning dense features (to compare with the sparse path)."""

    def __init__(self, inner=None):
        self.inner = inner

    def fit(self, X, y=None):
        self.inner_ = self.inner.fit(X)
        return self

    def transform(self, X):
        return self.inner_.transform(X).toarray()


# -- exactness ---------------------------------------------------------------------------


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_exact_finite_map_equals_closed_form_ridge(diabetes, fit_intercept) -> None:
    X, y = diabetes
    rng = np.random.default_rng(0)
    Y = np.column_stack([y, rng.normal(size=y.shape[0])])
    w = rng.uniform(0.2, 3.0, size=y.shape[0])
    poly = PolynomialFeatures(degree=2, include_bias=False)
    model = FeatureRidge(poly, alpha=0.7, fit_intercept=fit_intercept).fit(X, Y, sample_weight=w)
    Z = poly.fit_transform(X)
    b, W = _closed_form(Z, Y, 0.7, w, fit_intercept)
    np.testing.assert_allclose(model.coef_, W.T, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(model.intercept_, b, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(model.predict(X), Z @ W + b, rtol=1e-9, atol=1e-10)
    # and scikit-learn's Ridge on the same features
    ref = Ridge(alpha=0.7, fit_intercept=fit_intercept, solver="cholesky").fit(Z, Y, w)
    np.testing.assert_allclose(model.predict(X), ref.predict(Z), rtol=1e-8, atol=1e-9)


def test_single_target_shapes(diabetes) -> None:
    X, y = diabetes
    model = FeatureRidge("passthrough", alpha=1.0).fit(X, y)
    assert model.coef_.shape == (X.shape[1],)
    assert isinstance(model.intercept_, float)
    assert model.predict(X).shape == (X.shape[0],)
    two = FeatureRidge("passthrough", alpha=1.0).fit(X, y[:, None])
    assert two.predict(X).shape == (X.shape[0], 1)


def test_large_feature_offset_keeps_centring_accurate() -> None:
    # Features with a common offset of 1e6: Z^T Z - n zbar zbar^T would cancel all digits
    # without the shift by the first block's means.
    rng = np.random.default_rng(1)
    X = rng.normal(size=(500, 3))
    y = X @ np.array([1.0, -2.0, 0.5]) + rng.normal(scale=0.1, size=500)
    model = FeatureRidge("passthrough", alpha=1e-3)
    with config_context(working_memory=0.01):  # many blocks
        model.fit(X + 1e6, y)
    _, W = _closed_form(X, y[:, None], 1e-3)
    np.testing.assert_allclose(model.coef_, W[:, 0], rtol=1e-6)


def test_row_blocks_and_partial_fit_equal_one_pass(diabetes) -> None:
    X, y = diabetes
    rff = RandomFourierFeatures(gamma=0.1, n_components=64, random_state=0)
    whole = FeatureRidge(rff, alpha=0.3).fit(X, y)
    with config_context(working_memory=0.05):  # blocks of a few rows
        blocked = FeatureRidge(rff, alpha=0.3).fit(X, y)
    np.testing.assert_allclose(blocked.predict(X), whole.predict(X), rtol=1e-10, atol=1e-12)
    streamed = FeatureRidge(rff, alpha=0.3)
    for part in np.array_split(np.arange(X.shape[0]), 5):
        streamed.partial_fit(X[part], y[part])
    np.testing.assert_allclose(streamed.predict(X), whole.predict(X), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(streamed.coef_, whole.coef_, rtol=1e-9, atol=1e-12)


def test_data_dependent_map_is_fitted_on_first_data(diabetes) -> None:
    X, y = diabetes
    nys = Nystroem(gamma=0.1, n_components=30, random_state=0)
    model = FeatureRidge(nys, alpha=0.1)
    model.partial_fit(X[:60], y[:60])
    first_components = model.feature_map_.components_.copy()
    model.partial_fit(X[60:], y[60:])
    np.testing.assert_array_equal(model.feature_map_.components_, first_components)
    ref_map = Nystroem(gamma=0.1, n_components=30, random_state=0).fit(X[:60])
    Z = ref_map.transform(X)
    b, W = _closed_form(Z, y[:, None], 0.1)
    np.testing.assert_allclose(model.predict(X), (Z @ W)[:, 0] + b, rtol=1e-8, atol=1e-9)


def test_sparse_features_equal_dense_features(diabetes) -> None:
    X, y = diabetes
    rbf = RandomBinningFeatures(kernel="laplacian", gamma=0.5, n_grids=20, random_state=0)
    sparse_model = FeatureRidge(rbf, alpha=0.5).fit(X, y)
    assert sp.issparse(sparse_model.feature_map_.transform(X[:3]))
    dense_model = FeatureRidge(_Densify(rbf), alpha=0.5).fit(X, y)
    np.testing.assert_allclose(sparse_model.predict(X), dense_model.predict(X), atol=1e-10)
    # sparse input X through a linear map
    Xs = sp.csr_matrix(np.where(np.abs(X) > 0.5, X, 0.0))
    a = FeatureRidge("passthrough", alpha=0.5).fit(Xs, y).predict(Xs)
    b = FeatureRidge("passthrough", alpha=0.5).fit(Xs.toarray(), y).predict(Xs.toarray())
    np.testing.assert_allclose(a, b, atol=1e-10)


def test_float32_kept_and_pickle(diabetes) -> None:
    X, y = diabetes
    rff = RandomFourierFeatures(gamma=0.1, n_components=64, random_state=0)
    m64 = FeatureRidge(rff, alpha=0.3).fit(X, y)
    m32 = FeatureRidge(rff, alpha=0.3).fit(X.astype(np.float32), y)
    p32 = m32.predict(X.astype(np.float32))
    assert p32.dtype == np.float32
    np.testing.assert_allclose(p32, m64.predict(X), atol=1e-4)
    restored = pickle.loads(pickle.dumps(m32))
    np.testing.assert_array_equal(restored.predict(X.astype(np.float32)), p32)


# -- choice of alpha ---------------------------------------------------------------------


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
def test_loo_alpha_equals_brute_force(fit_intercept, weighted) -> None:
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 3))
    Y = np.column_stack([np.sin(X[:, 0]) + 0.3 * rng.normal(size=30), X[:, 1] ** 2])
    w = rng.uniform(0.5, 2.0, size=30) if weighted else None
    poly = PolynomialFeatures(degree=2, include_bias=False)
    alphas = np.logspace(-3, 2, 11)
    model = FeatureRidge(poly, alphas=alphas, fit_intercept=fit_intercept).fit(X, Y, w)
    assert model.alpha_selection_ == "loo"
    ww = np.ones(30) if w is None else w
    brute = np.zeros(alphas.shape[0])
    for j, a in enumerate(alphas):
        for i in range(30):
            keep = np.arange(30) != i
            fit = FeatureRidge(poly, alpha=a, fit_intercept=fit_intercept)
            fit.fit(X[keep], Y[keep], None if w is None else w[keep])
            brute[j] += ww[i] * np.sum((Y[i] - fit.predict(X[i : i + 1])[0]) ** 2)
    brute /= ww.sum() * Y.shape[1]
    np.testing.assert_allclose(model.cv_errors_, brute, rtol=1e-7)
    assert model.alpha_ == alphas[np.argmin(brute)]
    np.testing.assert_allclose(
        model.predict(X),
        FeatureRidge(poly, alpha=model.alpha_, fit_intercept=fit_intercept).fit(X, Y, w).predict(X),
        rtol=1e-9,
        atol=1e-10,
    )


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_gcv_equals_hat_matrix_formula(fit_intercept) -> None:
    rng = np.random.default_rng(4)
    X = rng.normal(size=(40, 3))
    y = np.cos(X[:, 0]) + 0.2 * rng.normal(size=40)
    alphas = np.logspace(-3, 2, 8)
    model = FeatureRidge(
        "passthrough", alphas=alphas, alpha_selection="gcv", fit_intercept=fit_intercept
    ).fit(X, y)
    A = np.hstack([np.ones((40, 1)), X]) if fit_intercept else X
    expected = []
    for a in alphas:
        P = a * np.eye(A.shape[1])
        if fit_intercept:
            P[0, 0] = 0.0
        H = A @ np.linalg.solve(A.T @ A + P, A.T)
        rss = np.sum((y - H @ y) ** 2)
        expected.append((rss / 40) / (1 - np.trace(H) / 40) ** 2)
    np.testing.assert_allclose(model.cv_errors_, expected, rtol=1e-8)
    assert model.alpha_ == alphas[np.argmin(expected)]


@pytest.mark.parametrize("criterion", ["loo", "gcv"])
@pytest.mark.parametrize("n_features", [20, 21, 40])
def test_criteria_finite_where_the_rows_are_interpolated(criterion, n_features) -> None:
    """As many features as rows (less the intercept) or more: at a penalty far below the
    spectrum every row is nearly fitted exactly, ``1 - h_i`` and ``n - df`` are tiny and
    a difference would round them to 0 or below (an infinite score).  Taken without
    cancellation they stay positive: every criterion finite, and equal to the dual
    formula ``e = alpha (K_c + alpha I)^{-1} y_c`` on the complement of the constant."""
    rng = np.random.default_rng(5)
    n = 21
    X = rng.normal(size=(n, n_features))
    y = X[:, 0] + rng.normal(size=n)
    Xc, yc = X - X.mean(axis=0), y - y.mean()
    top = np.linalg.eigvalsh(Xc.T @ Xc)[-1]
    alphas = top * np.logspace(-16, 0, 17)
    model = FeatureRidge(
        "passthrough", alphas=alphas, alpha_selection=criterion, fit_intercept=True
    ).fit(X, y)
    assert np.all(np.isfinite(model.cv_errors_)) and np.all(model.cv_errors_ > 0)
    # the dual reference, in the basis B of the rows' complement of the constant
    B = scipy.linalg.null_space(np.ones((1, n)))
    s, U = np.linalg.eigh(B.T @ Xc @ Xc.T @ B)
    BU, s = B @ U, np.clip(s, 0.0, None)
    for a, got in zip(alphas, model.cv_errors_, strict=True):
        if a < 1e-8 * top:  # below, the reference itself is rounding noise
            continue
        shrink = a / (s + a)
        residual = BU @ (shrink * (BU.T @ yc))  # (I - H) y
        if criterion == "loo":
            expected = np.mean((residual / ((BU * BU) @ shrink)) ** 2)
        else:
            expected = np.mean(residual**2) / (np.sum(shrink) / n) ** 2
        # rounding of both: eps times the condition number top / a of the solves
        tol = 64 * n * np.finfo(np.float64).eps * top / a
        np.testing.assert_allclose(got, expected, rtol=tol)


def test_partial_fit_selects_alpha_by_gcv(diabetes) -> None:
    X, y = diabetes
    alphas = [0.01, 0.1, 1.0, 10.0]
    streamed = FeatureRidge("passthrough", alphas=alphas)
    for part in np.array_split(np.arange(X.shape[0]), 3):
        streamed.partial_fit(X[part], y[part])
    whole = FeatureRidge("passthrough", alphas=alphas, alpha_selection="gcv").fit(X, y)
    assert streamed.alpha_selection_ == "gcv"
    np.testing.assert_allclose(streamed.cv_errors_, whole.cv_errors_, rtol=1e-9)


# -- random Fourier features approach exact kernel ridge regression -----------------------


def _bernstein_radius(n_draws: int, variance: float, deviation: float, n_events: int) -> float:
    """Bernstein: ``P(|mean - mu| >= t) <= 2 exp(-n t^2 / (2 s2 + 2 b t / 3))`` for draws with
    variance ``s2`` and ``|X - mu| <= b``; with a union bound over ``n_events`` the radius
    ``sqrt(2 s2 l / n) + 2 b l / (3 n)``, ``l = log(2 n_events / DELTA)``, holds for all."""
    log_term = math.log(2.0 * n_events / DELTA)
    return math.sqrt(2.0 * variance * log_term / n_draws) + 2.0 * deviation * log_term / (
        3.0 * n_draws
    )


def _rff_ridge_problem(gamma: float = 1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    # Three training points on a circle around the test point, at gamma r^2 = log 2, where a
    # factor of two in gamma changes k(test, train) most (0.5 -> 0.25 or 0.71).
    r = math.sqrt(math.log(2.0) / gamma)
    angles = np.array([0.0, 2.0, 4.0]) * math.pi / 3.0
    X = r * np.column_stack([np.cos(angles), np.sin(angles)])
    X_test = np.array([[0.0, 0.0], [0.3 * r, -0.2 * r]])
    return X, np.ones(3), X_test


def _kernel_ridge_bound(X, X_test, y, gamma, alpha, D) -> tuple[np.ndarray, np.ndarray]:
    """Exact kernel ridge predictions and the radius within which RFF ridge's must lie.

    Derivation.  With ``L = D/2`` frequencies, ``cos_sin`` features give the kernel estimate
    ``khat(x, x') = (1/L) sum_i cos(w_i . (x - x'))`` (exact on the diagonal), a mean of ``L``
    i.i.d. draws with mean ``k = exp(-gamma |x - x'|^2)``, variance
    ``s2 = (1 + k(2 delta))/2 - k^2`` and ``|draw - k| <= 1 + k``, so Bernstein's inequality
    with a union bound over the off-diagonal training pairs and the test-training pairs
    gives, with probability ``1 - DELTA``, ``|E_ij| <= eps_ij`` for ``E = Khat - K``.
    The FeatureRidge prediction (no intercept) is ``fhat = Khat_t chat`` with
    ``chat = (Khat + alpha I)^{-1} y`` (push-through identity); exact is ``f = K_t c``.
    Since ``c - chat = A^{-1} E chat`` with ``A = K + alpha I``,
    ``fhat - f = E_t chat - G E chat`` with ``G = K_t A^{-1}`` (deterministic), hence
    ``|fhat(x) - f(x)| <= (max_j eps_xj + |G_x|_1 max_ij eps_ij) |chat|_1``.  Finally
    ``chat - c = (Khat + alpha I)^{-1} (-E) c`` gives
    ``|chat|_1 <= |c|_1 + sqrt(n) |chat - c|_2 <= |c|_1 (1 + n eps / alpha)``.
    """
    n = X.shape[0]
    L = D // 2

    def k(sq):
        return np.exp(-gamma * sq)

    sq = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    sq_t = ((X_test[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    K, K_t = k(sq), k(sq_t)
    n_events = n * (n - 1) // 2 + K_t.size
    off = ~np.eye(n, dtype=bool)
    var_tr = ((1 + k(4 * sq)) / 2 - K**2)[off].max()
    var_t = ((1 + k(4 * sq_t)) / 2 - K_t**2).max()
    eps_tr = _bernstein_radius(L, var_tr, 1.0 + K[off].max(), n_events)
    eps_t = _bernstein_radius(L, var_t, 1.0 + K_t.max(), n_events)
    A_inv = np.linalg.inv(K + alpha * np.eye(n))
    c = A_inv @ y
    G = K_t @ A_inv
    chat_l1 = np.abs(c).sum() * (1.0 + n * eps_tr / alpha)
    bound = (eps_t + np.abs(G).sum(axis=1) * eps_tr) * chat_l1
    return K_t @ c, bound


@pytest.mark.statistical
def test_rff_ridge_approaches_exact_kernel_ridge(seed) -> None:
    gamma, alpha = 1.0, 10.0
    X, y, X_test = _rff_ridge_problem(gamma)
    exact = KernelRidge(gamma=gamma, alpha=alpha).fit(X, y).predict(X_test)
    bounds = []
    for D in (256, 1024, 2048):
        f, bound = _kernel_ridge_bound(X, X_test, y, gamma, alpha, D)
        np.testing.assert_allclose(exact, f, rtol=1e-12)
        rff = RandomFourierFeatures(gamma=gamma, n_components=D, random_state=seed)
        approx = FeatureRidge(rff, alpha=alpha, fit_intercept=False).fit(X, y).predict(X_test)
        assert np.all(np.abs(approx - exact) <= bound), (D, np.abs(approx - exact), bound)
        bounds.append(bound)
    # the radius shrinks like 1/sqrt(D)
    assert np.all(bounds[-1] < bounds[0] / 2.5)


@pytest.mark.parametrize("bug", ["gamma_doubled", "alpha_doubled", "alpha_halved"])
def test_rff_ridge_bound_catches_planted_bug(bug) -> None:
    gamma, alpha, D = 1.0, 10.0, 4096
    X, y, X_test = _rff_ridge_problem(gamma)
    exact, bound = _kernel_ridge_bound(X, X_test, y, gamma, alpha, D)
    g_bug = 2 * gamma if bug == "gamma_doubled" else gamma
    a_bug = {"alpha_doubled": 2 * alpha, "alpha_halved": alpha / 2}.get(bug, alpha)
    buggy_exact, buggy_bound = _kernel_ridge_bound(X, X_test, y, g_bug, a_bug, D)
    # The proof that the tolerance catches the bug, for every seed: a buggy model lies within
    # buggy_bound of buggy_exact (w.p. 1 - DELTA), and buggy_exact is farther than
    # bound + buggy_bound from exact, so the check of the test above must fail on it (a
    # factor of two in gamma moves k(test, train) from 0.5 to 0.25 in this geometry).
    gap = np.abs(buggy_exact - exact)[0]
    assert gap > bound[0] + buggy_bound[0]
    # and one draw showing it (a fixed random_state: this part is a demonstration, the
    # inequality above is what holds for every seed; one D = 4096 fit costs a few seconds)
    if bug != "gamma_doubled":
        return
    rff = RandomFourierFeatures(gamma=g_bug, n_components=D, random_state=0)
    buggy = FeatureRidge(rff, alpha=a_bug, fit_intercept=False).fit(X, y).predict(X_test)
    assert np.abs(buggy - exact)[0] > bound[0]


# -- bad input ---------------------------------------------------------------------------


def test_bad_input_messages(diabetes) -> None:
    X, y = diabetes
    rff = RandomFourierFeatures(n_components=10, random_state=0)
    y_nan = y.copy()
    y_nan[3] = np.nan
    with pytest.raises(ValueError, match="Input y contains NaN"):
        FeatureRidge(rff).fit(X, y_nan)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        FeatureRidge(rff).fit(X, y[:-1])
    for alpha in (0.0, -1.0):
        with pytest.raises(ValueError, match="'alpha' parameter of FeatureRidge"):
            FeatureRidge(rff, alpha=alpha).fit(X, y)
    with pytest.raises(ValueError, match="alphas must be a non-empty list of positive"):
        FeatureRidge(rff, alphas=[1.0, 0.0]).fit(X, y)
    with pytest.raises(ValueError, match="alphas must be a non-empty list of positive"):
        FeatureRidge(rff, alphas=[]).fit(X, y)
    with pytest.raises(
        ValueError,
        match="'feature_map' parameter of FeatureRidge must be an "
        "object implementing 'fit' and 'transform'",
    ):
        FeatureRidge(feature_map=Ridge()).fit(X, y)
    with pytest.raises(ValueError, match="alpha_selection='loo' needs every row again"):
        FeatureRidge(rff, alphas=[1.0, 2.0], alpha_selection="loo").partial_fit(X, y)
    model = FeatureRidge(rff).partial_fit(X, y)
    with pytest.raises(ValueError, match="every call to partial_fit must give the same targets"):
        model.partial_fit(X, np.column_stack([y, y]))
    with pytest.raises(ValueError, match="X has 3 features, but FeatureRidge is expecting 4"):
        model.partial_fit(X[:, :3], y)


class _CountingMap(TransformerMixin, BaseEstimator):
    """Random Fourier features that record how many rows each transform maps."""

    def __init__(self, state_width: bool = True) -> None:
        self.state_width = state_width

    def fit(self, X, y=None):
        self.inner_ = RandomFourierFeatures(gamma=0.5, n_components=30, random_state=0).fit(X)
        self.rows_ = []
        if self.state_width:
            self._n_features_out = 30
        return self

    def transform(self, X):
        self.rows_.append(X.shape[0])
        return self.inner_.transform(X)


@pytest.mark.parametrize("state_width", [True, False])
def test_fit_maps_each_row_once_and_scans_x_once(monkeypatch, state_width) -> None:
    import sklearn.utils.validation as validation

    X, y = load_diabetes(return_X_y=True)
    scans = []
    original = validation._assert_all_finite

    def counting(Xc, *args, **kwargs):
        scanned = not get_config()["assume_finite"]
        if scanned and np.ndim(Xc) == 2 and Xc.shape[1] == X.shape[1]:
            scans.append(Xc.shape)
        return original(Xc, *args, **kwargs)

    monkeypatch.setattr(validation, "_assert_all_finite", counting)
    model = FeatureRidge(_CountingMap(state_width)).fit(X, y)
    # one pass of the map over X (no extra transform to learn the width) ...
    assert sum(model.feature_map_.rows_) == X.shape[0]
    # ... and one NaN/inf scan of X (of any of its rows), by FeatureRidge itself
    assert scans == [X.shape]
    loo = FeatureRidge(_CountingMap(state_width), alphas=[0.1, 1.0]).fit(X, y)
    assert sum(loo.feature_map_.rows_) == 2 * X.shape[0]  # exact leave-one-out: two passes
