"""The posteriors of KernelRidge (the exact Gaussian process) and NystroemKernelRidge (the
deterministic training conditional): against scikit-learn's GaussianProcessRegressor,
direct maximizations of the evidence, brute-force leave-one-out refits, and the sample
moments of the draws.

Tolerances.  Deterministic comparisons are rounding: ``c n eps kappa`` times the scale of
what is compared, ``kappa`` the condition number of the matrix solved (computed on the
data).  Random ones hold with probability ``1 - DELTA`` each (tests/_bounds.py): for ``S``
draws of a Gaussian vector with covariance ``C`` and known mean, Gaussian tails give
``|mean_i - mu_i| <= (2 C_ii log(2 p / delta) / S)^{1/2}``, and writing ``x_i x_j =
((x_i + x_j)^2 - (x_i - x_j)^2) / 4`` with Laurent & Massart's (2000) two-sided bound
``|chi2_S / S - 1| <= 2 (u / S)^{1/2} + 2 u / S`` with probability ``1 - 2 e^{-u}``, ``u =
log(4 p^2 / delta)``, gives ``|C_hat_ij - C_ij| <= (C_ii + C_jj) / 2 (2 (u / S)^{1/2} + 2 u /
S)``.  The random Fourier prior of the posterior functions has covariance ``s^2 z(a)^T
z(b)`` within ``s^2 t``, ``t = (4 log(2 N / delta) / D)^{1/2}``, of the prior's at ``N``
pairs (Hoeffding); through the update ``f - mu = (e_x - a_x)^T f_prior + ...`` it moves
the functions' covariance by at most ``s^2 t (1 + |a_x|_1) (1 + |a_x'|_1)``.
"""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
import scipy.optimize
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel

from kernelmaps import KernelRidge, NystroemKernelRidge, NystroemKernelRidgeClassifier
from kernelmaps.kernels import Gaussian
from kernelmaps.models._kernel_posterior import PRIOR_FEATURES
from kernelmaps.models._uncertainty import conformal_bounds
from tests._array_api import PLACES, Place, assert_at, assert_close, dispatch
from tests._bounds import DELTA

EPS = float(np.finfo(np.float64).eps)
GAMMA, ALPHA = 0.5, 0.3


def _data(seed: int, n: int = 40, targets: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.2 * rng.normal(size=n)
    if targets:
        y = np.column_stack([y + k * X[:, 0] for k in range(targets)])
    return X, y


def _kernel(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    return np.asarray(Gaussian(gamma=GAMMA)(A, B))


def _cond(M: np.ndarray) -> float:
    w = np.linalg.eigvalsh(M)
    return float(w[-1] / w[0])


def _mean_radius(C: np.ndarray, S: int) -> np.ndarray:
    p = C.shape[0]
    return np.sqrt(2.0 * np.diag(C) * math.log(2 * p / DELTA) / S)


def _cov_radius(C: np.ndarray, S: int) -> np.ndarray:
    p = C.shape[0]
    u = math.log(4 * p * p / DELTA)
    d = np.diag(C)
    return (d[:, None] + d[None, :]) / 2 * (2 * math.sqrt(u / S) + 2 * u / S)


# -- the noise variance ----------------------------------------------------------------


def _max_evidence(cov_unit: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """``argmax_{s2} log N(y; 0, s2 cov_unit)`` by a bounded scalar search on ``log s2``,
    and the relative precision of that search: from function values a minimum is found
    within ``(2 eps |f| / f'')^{1/2}`` in ``log s2`` (``f'' = n / 2`` there), plus its
    ``xatol``."""
    L = np.linalg.cholesky(cov_unit)
    quad = float(np.sum(np.linalg.solve(L, y) ** 2))
    logdet = 2.0 * float(np.sum(np.log(np.diag(L))))
    n = y.shape[0]

    def negative(log_s2: float) -> float:
        s2 = math.exp(log_s2)
        return 0.5 * (quad / s2 + n * log_s2 + logdet)

    found = scipy.optimize.minimize_scalar(
        negative, bounds=(-20.0, 5.0), method="bounded", options={"xatol": 1e-10}
    )
    precision = 10 * math.sqrt(4 * EPS * (abs(found.fun) + 1.0) / n) + 1e-9
    return math.exp(found.x), precision


def test_kernel_ridge_noise_variance_maximizes_the_evidence(seed: int) -> None:
    X, y = _data(seed)
    model = KernelRidge(gamma=GAMMA, alpha=ALPHA).fit(X, y)
    K = _kernel(X, X)
    expected, precision = _max_evidence(K / ALPHA + np.eye(len(y)), y)
    assert model.noise_variance_ == pytest.approx(expected, rel=precision)


def test_nystroem_noise_variance_maximizes_the_dtc_evidence(seed: int) -> None:
    X, y = _data(seed)
    model = NystroemKernelRidge(
        gamma=GAMMA, alpha=ALPHA, n_components=10, posterior=True, tol=1e-12, max_iter=500
    ).fit(X, y)
    L = model.landmarks_
    K_nm, K_mm = _kernel(X, L), _kernel(L, L)
    Q = K_nm @ np.linalg.solve(K_mm, K_nm.T)
    expected, precision = _max_evidence(Q / ALPHA + np.eye(len(y)), y)
    # the search's precision, and the CG's residual (1e-12 relative, times the condition
    # of the preconditioned system, at most 1e4 here)
    assert model.noise_variance_ == pytest.approx(expected, rel=precision + 1e-8)


# -- the exact Gaussian process --------------------------------------------------------


def _gpr(X: np.ndarray, y: np.ndarray, noise: float) -> GaussianProcessRegressor:
    kernel = ConstantKernel(noise / ALPHA, "fixed") * RBF(
        1.0 / math.sqrt(2 * GAMMA), "fixed"
    ) + WhiteKernel(noise, "fixed")
    return GaussianProcessRegressor(kernel, optimizer=None, alpha=0.0).fit(X, y)


def test_kernel_ridge_posterior_is_the_gaussian_process(seed: int) -> None:
    X, y = _data(seed)
    X_new = np.random.default_rng(seed + 1).normal(size=(9, 2)) * 2
    model = KernelRidge(gamma=GAMMA, alpha=ALPHA).fit(X, y)
    gpr = _gpr(X, y, model.noise_variance_)
    scale = model.noise_variance_ * (1.0 / ALPHA + 1.0)
    tol = 10 * len(y) * EPS * _cond(_kernel(X, X) + ALPHA * np.eye(len(y))) * scale
    mean, std = model.predict(X_new, return_std=True)
    g_mean, g_std = gpr.predict(X_new, return_std=True)
    np.testing.assert_allclose(mean, g_mean, atol=tol * np.abs(y).max())
    np.testing.assert_allclose(std**2, g_std**2, atol=tol)
    _, cov = model.predict(X_new, return_cov=True)
    np.testing.assert_allclose(cov, gpr.predict(X_new, return_cov=True)[1], atol=tol)


def test_kernel_ridge_sample_y_moments(seed: int) -> None:
    X, y = _data(seed)
    X_new = np.random.default_rng(seed + 1).normal(size=(4, 2))
    model = KernelRidge(gamma=GAMMA, alpha=ALPHA).fit(X, y)
    mean, cov = model.predict(X_new, return_cov=True)
    S = 4000
    draws = model.sample_y(X_new, n_samples=S, random_state=seed)
    assert draws.shape == (4, S)
    centred = draws - mean[:, None]
    assert np.all(np.abs(centred.mean(axis=1)) <= _mean_radius(cov, S))
    assert np.all(np.abs(centred @ centred.T / S - cov) <= _cov_radius(cov, S))


def test_kernel_ridge_several_targets_and_pickling() -> None:
    X, y = _data(0, targets=2)
    model = KernelRidge(gamma=GAMMA, alpha=ALPHA).fit(X, y)
    assert model.noise_variance_.shape == (2,)
    mean, std = model.predict(X[:5], return_std=True)
    assert mean.shape == std.shape == (5, 2)
    one = KernelRidge(gamma=GAMMA, alpha=ALPHA).fit(X, y[:, 1])
    np.testing.assert_allclose(std[:, 1], one.predict(X[:5], return_std=True)[1], rtol=1e-12)
    model.predict_interval(X[:3])
    copy = pickle.loads(pickle.dumps(model))
    assert "_posterior_state" not in vars(copy)
    np.testing.assert_allclose(copy.predict(X[:5], return_std=True)[1], std, rtol=1e-12)


# -- the deterministic training conditional --------------------------------------------


def test_nystroem_with_every_row_a_landmark_is_the_exact_posterior(seed: int) -> None:
    X, y = _data(seed, n=25)
    X_new = np.random.default_rng(seed + 1).normal(size=(6, 2)) * 2
    exact = KernelRidge(gamma=GAMMA, alpha=ALPHA).fit(X, y)
    dtc = NystroemKernelRidge(gamma=GAMMA, alpha=ALPHA, landmarks=X, posterior=True).fit(X, y)
    unit_exact = exact.predict(X_new, return_cov=True)[1] / exact.noise_variance_
    unit_dtc = dtc.predict(X_new, return_cov=True)[1] / dtc.noise_variance_
    # FALKON's jitter d = 1e-13 m mean(K_ii) on K_mm moves k^T K^{-1} k by at most
    # d |k|^2 / l_min^2; divided by alpha; plus rounding of the solves
    K = _kernel(X, X)
    l_min, l_max = np.linalg.eigvalsh(K)[[0, -1]]
    k2 = float(np.max(np.sum(_kernel(X, X_new) ** 2, axis=0)))
    jitter = 1e-13 * len(y)
    tol = (jitter / l_min**2 * k2 + 100 * len(y) * EPS * l_max / l_min**2 * k2) / ALPHA
    np.testing.assert_allclose(unit_dtc, unit_exact, atol=tol)


def test_nystroem_dtc_variance_bounds(seed: int) -> None:
    X, y = _data(seed, n=60)
    model = NystroemKernelRidge(
        gamma=GAMMA, alpha=ALPHA, n_components=8, posterior=True, random_state=seed
    ).fit(X, y)
    rng = np.random.default_rng(seed + 1)
    X_new = np.vstack([rng.normal(size=(20, 2)) * 2, [[40.0, 40.0]]])
    posterior = model._posterior()
    dtc = model.predict(X_new, return_std=True)[1] ** 2 / model.noise_variance_ - 1.0
    sor = np.diag(posterior.smoother(X_new, X_new))
    rounding = 100 * EPS * (1.0 / ALPHA)
    assert np.all(sor >= -rounding)
    assert np.all(dtc >= sor - rounding)
    # far away k(x, L) = exp(-gamma |x - l|^2) vanishes: the prior's 1 / alpha
    assert dtc[-1] == pytest.approx(1.0 / ALPHA, rel=1e-10)
    assert sor[-1] <= 1e-10


def test_nystroem_without_posterior_says_which_parameter() -> None:
    X, y = _data(0)
    model = NystroemKernelRidge(n_components=5, random_state=0).fit(X, y)
    assert model.noise_variance_ is None
    for call in (
        lambda: model.predict(X, return_std=True),
        lambda: model.predict_interval(X),
        lambda: model.sample_y(X[:3]),
        lambda: model.sample_functions(2),
    ):
        with pytest.raises(ValueError, match="posterior=True"):
            call()


def test_nystroem_classifier_offers_no_posterior() -> None:
    X, y = _data(0)
    model = NystroemKernelRidgeClassifier(n_components=5, random_state=0).fit(X, y > 0)
    for name in ("predict_interval", "sample_y", "sample_functions"):
        assert not hasattr(model, name)
    assert hasattr(NystroemKernelRidge(), "sample_y")


# -- jackknife+ from the exact leave-one-out -------------------------------------------


def _jackknife(held: np.ndarray, residuals: np.ndarray, coverage: float) -> np.ndarray:
    lower, upper = conformal_bounds(held[:, :, None], np.abs(residuals)[:, None], coverage, np)
    return np.stack([lower[:, 0], upper[:, 0]])


def test_kernel_ridge_intervals_equal_brute_force_refits(seed: int) -> None:
    X, y = _data(seed, n=30)
    X_new = np.random.default_rng(seed + 1).normal(size=(5, 2))
    model = KernelRidge(gamma=GAMMA, alpha=ALPHA).fit(X, y)
    held, residuals = [], []
    for j in range(len(y)):
        keep = np.arange(len(y)) != j
        refit = KernelRidge(gamma=GAMMA, alpha=ALPHA).fit(X[keep], y[keep])
        held.append(refit.predict(X_new))
        residuals.append(y[j] - refit.predict(X[j : j + 1])[0])
    expected = _jackknife(np.array(held).T, np.array(residuals), 0.8)
    got = np.stack(model.predict_interval(X_new, coverage=0.8))
    tol = 10 * len(y) * EPS * _cond(_kernel(X, X) + ALPHA * np.eye(len(y))) * np.abs(y).max()
    np.testing.assert_allclose(got, expected, atol=tol)


def test_nystroem_intervals_equal_brute_force_refits(seed: int) -> None:
    X, y = _data(seed, n=30)
    X_new = np.random.default_rng(seed + 1).normal(size=(5, 2))
    model = NystroemKernelRidge(
        gamma=GAMMA, alpha=ALPHA, n_components=8, posterior=True, random_state=seed
    ).fit(X, y)
    L = model.landmarks_
    K_nm, K_mm, K_new = _kernel(X, L), _kernel(L, L), _kernel(X_new, L)
    H = K_nm.T @ K_nm + ALPHA * K_mm
    exact = np.linalg.solve(H, K_nm.T @ y)
    held, residuals = [], []
    for j in range(len(y)):  # the Nystroem fit without row j, the landmarks fixed
        k = K_nm[j]
        c = np.linalg.solve(H - np.outer(k, k), K_nm.T @ y - k * y[j])
        held.append(K_new @ c)
        residuals.append(y[j] - k @ c)
    expected = _jackknife(np.array(held).T, np.array(residuals), 0.8)
    got = np.stack(model.predict_interval(X_new, coverage=0.8))
    # the CG's error on c moves every prediction by |K_x| |dc|, the residuals by
    # |k_j| |dc| / (1 - h_j), plus the rounding of the dense solves
    h = np.sum(K_nm * np.linalg.solve(H, K_nm.T).T, axis=1)
    dc = float(np.linalg.norm(model.dual_coef_ - exact))
    spread = np.sqrt(len(L)) * (1 + 1 / float(np.min(1 - h)))
    tol = 2 * spread * dc + 10 * len(y) * EPS * _cond(H) * np.abs(y).max()
    np.testing.assert_allclose(got, expected, atol=tol)


# -- posterior functions ---------------------------------------------------------------


def _check_paths(paths_at: np.ndarray, mean: np.ndarray, C_tilde: np.ndarray) -> None:
    S = paths_at.shape[1]
    centred = paths_at - mean[:, None]
    assert np.all(np.abs(centred.mean(axis=1)) <= _mean_radius(C_tilde, S))
    assert np.all(np.abs(centred @ centred.T / S - C_tilde) <= _cov_radius(C_tilde, S))


def _prior_gap(model: object, a: np.ndarray, n_points: int) -> np.ndarray:
    """``s^2 t (1 + |a_x|_1) (1 + |a_x'|_1)``: the RFF prior's effect on the covariance."""
    t = math.sqrt(4 * math.log(2 * n_points**2 / DELTA) / PRIOR_FEATURES)
    spread = 1.0 + np.abs(a).sum(axis=0)
    return model.noise_variance_ / ALPHA * t * np.outer(spread, spread)


def test_kernel_ridge_functions_have_the_posterior_moments(seed: int) -> None:
    X, y = _data(seed, n=20)
    X_new = np.random.default_rng(seed + 1).normal(size=(4, 2))
    model = KernelRidge(gamma=GAMMA, alpha=ALPHA).fit(X, y)
    S = 3000
    paths = model.sample_functions(n_samples=S, random_state=seed)
    paths = pickle.loads(pickle.dumps(paths))
    values = paths(X_new)
    assert values.shape == (4, S)
    np.testing.assert_array_equal(paths(X_new), values)  # the same functions at every call
    mean, cov = model.predict(X_new, return_cov=True)
    latent = cov - model.noise_variance_ * np.eye(4)
    # the covariance of the paths given the drawn frequencies: f - mu = s B w - G e
    A = _kernel(X, X) + ALPHA * np.eye(len(y))
    G = np.linalg.solve(A, _kernel(X, X_new)).T
    Phi_new, Phi_X = paths.prior_map.transform(X_new), paths.prior_map.transform(X)
    B = Phi_new - G @ Phi_X
    s2 = model.noise_variance_
    C_tilde = s2 / ALPHA * B @ B.T + s2 * G @ G.T
    _check_paths(values, mean, C_tilde)
    assert np.all(np.abs(C_tilde - latent) <= _prior_gap(model, G.T, len(y) + 4))


def test_nystroem_functions_have_the_posterior_moments(seed: int) -> None:
    X, y = _data(seed, n=40)
    X_new = np.random.default_rng(seed + 1).normal(size=(4, 2))
    model = NystroemKernelRidge(
        gamma=GAMMA, alpha=ALPHA, n_components=8, posterior=True, random_state=seed
    ).fit(X, y)
    S = 3000
    paths = model.sample_functions(n_samples=S, random_state=seed)
    values = paths(X_new)
    mean, cov = model.predict(X_new, return_cov=True)
    latent = cov - model.noise_variance_ * np.eye(4)
    L = model.landmarks_
    K_nm, K_mm, K_new = _kernel(X, L), _kernel(L, L), _kernel(X_new, L)
    H = K_nm.T @ K_nm + ALPHA * K_mm
    interp = np.linalg.solve(K_mm, K_new.T).T
    B = paths.prior_map.transform(X_new) - interp @ paths.prior_map.transform(L)
    s2 = model.noise_variance_
    C_tilde = s2 / ALPHA * B @ B.T + s2 * K_new @ np.linalg.solve(H, K_new.T)
    # K_mm's jitter (1e-13 m) in the model's interpolation: far below the radii
    _check_paths(values, mean, C_tilde)
    assert np.all(np.abs(C_tilde - latent) <= _prior_gap(model, interp.T, len(L) + 4))


def test_sample_functions_needs_a_spectral_sampler() -> None:
    X, y = _data(0)
    model = KernelRidge(kernel="polynomial", alpha=ALPHA).fit(X, y)
    with pytest.raises(ValueError, match="shift-invariant"):
        model.sample_functions(2, random_state=0)


# -- Dask and the array API ------------------------------------------------------------


def test_return_std_of_a_dask_array_is_lazy() -> None:
    da = pytest.importorskip("dask.array")
    X, y = _data(0)
    for model in (
        KernelRidge(gamma=GAMMA, alpha=ALPHA).fit(X, y),
        NystroemKernelRidge(n_components=10, posterior=True, random_state=0).fit(X, y),
    ):
        mean, std = model.predict(da.from_array(X, chunks=(15, 2)), return_std=True)
        assert isinstance(mean, da.Array) and isinstance(std, da.Array)
        expected_mean, expected_std = model.predict(X, return_std=True)
        np.testing.assert_allclose(std.compute(), expected_std, rtol=1e-12)
        np.testing.assert_allclose(mean.compute(), expected_mean, rtol=1e-12)


def test_nystroem_posterior_of_a_dask_fit_equals_the_numpy_fit() -> None:
    da = pytest.importorskip("dask.array")
    X, y = _data(0, n=60)
    params = {"n_components": 10, "posterior": True, "random_state": 0, "tol": 1e-12}
    local = NystroemKernelRidge(**params, max_iter=500).fit(X, y)
    lazy = NystroemKernelRidge(**params, max_iter=500)
    lazy.fit(da.from_array(X, chunks=(25, 2)), da.from_array(y))
    # the sums over rows are grouped by chunk: the two CG runs differ by rounding, their
    # solutions by the CG's tolerance (1e-12) times the preconditioned system's condition
    # (below 1e3 here)
    assert lazy.noise_variance_ == pytest.approx(local.noise_variance_, rel=1e-9)
    np.testing.assert_allclose(
        lazy.predict(X, return_std=True)[1], local.predict(X, return_std=True)[1], rtol=1e-9
    )
    np.testing.assert_allclose(lazy._conformal.residuals, local._conformal.residuals, atol=1e-9)


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("estimator", ["exact", "dtc"])
def test_return_std_on_another_library(place: Place, estimator: str) -> None:
    X, y = _data(0, n=30)
    X = X.astype(place.dtype)
    if estimator == "exact":
        make = lambda: KernelRidge(gamma=GAMMA, alpha=ALPHA)  # noqa: E731
    else:
        make = lambda: NystroemKernelRidge(  # noqa: E731
            gamma=GAMMA, alpha=ALPHA, n_components=8, posterior=True, random_state=0, tol=1e-12
        )
    reference = make().fit(X, y)
    expected_mean, expected_std = reference.predict(X[:7], return_std=True)
    expected_low, expected_high = reference.predict_interval(X[:7])
    with dispatch():
        model = make().fit(place.asarray(X), place.asarray(y))
        mean, std = model.predict(place.asarray(X[:7]), return_std=True)
        low, high = model.predict_interval(place.asarray(X[:7]))
        paths = model.sample_functions(3, random_state=0)(place.asarray(X[:7]))
    for result in (mean, std, low, high, paths):
        assert_at(result, place)
    # the same float64 computation where the device holds it, the results cast to the
    # dtype: its rounding of the values (the CG's tolerance, 1e-12 times a condition
    # below 1e3, for the Nystroem fit); the Nystroem fit forms its K_nm blocks and their
    # products in the rows' dtype (on the host too, for the Gaussian kernel): H and
    # K_nm^T y within n eps |K_nm|^2, so c within n eps kappa(H) |c|
    scale = float(np.max(np.abs(expected_high))) + 1.0
    atol = 8 * place.eps * scale + 1e-9 * scale
    if estimator == "dtc" and place.dtype == "float32":
        K_nm = _kernel(X.astype(np.float64), np.asarray(reference.landmarks_, np.float64))
        H = K_nm.T @ K_nm + ALPHA * _kernel(reference.landmarks_, reference.landmarks_)
        atol += len(y) * place.eps * _cond(H) * scale
    assert_close(std, np.asarray(expected_std, np.float64), atol, "std")
    assert_close(mean, np.asarray(expected_mean, np.float64), atol, "mean")
    assert_close(low, np.asarray(expected_low, np.float64), atol, "lower")
    assert_close(high, np.asarray(expected_high, np.float64), atol, "upper")


def test_kernel_ridge_duplicate_rows_leave_one_out() -> None:
    """``K + alpha I`` numerically singular (every row twice, alpha below the rounding
    level): the posterior from the eigendecomposition, and each row's leave-one-out
    residual vanishes, its duplicate still fitting it."""
    X, y = _data(0, n=20)
    X2, y2 = np.vstack([X, X]), np.concatenate([y, y])
    model = KernelRidge(gamma=GAMMA, alpha=1e-20).fit(X2, y2)
    posterior = model._posterior()
    assert posterior.evals is not None
    # the null space holds half of each e_j (its antisymmetric part with its twin), so
    # [(K + alpha I)^{-1}]_jj >= 1 / (2 (alpha + level)), level = n eps l_max bounding the
    # null space's eigenvalues: |r_j| = |c_j| / that <= 2 (alpha + level) |c|_inf
    level = len(y2) * EPS * float(posterior.evals.max())
    residuals = model._scores().residuals
    assert np.all(np.abs(residuals) <= 2.2 * (1e-20 + level) * np.abs(model.dual_coef_).max())
    lower, upper = model.predict_interval(X[:4], coverage=0.8)
    # every held-out mean within |s(x, x_j) r_j| of the mean, the bounds within |r_j| more
    move = np.abs(posterior.smoother(X[:4], model._scores().rows) * residuals[:, 0])
    width = 2 * move.max(axis=1) + 2 * np.abs(residuals).max()
    assert np.all(np.abs(upper - lower) <= width * (1 + 1e-9))
    assert np.all(np.isfinite(model.predict(X[:4], return_std=True)[1]))


def test_model_files_hold_the_posteriors() -> None:
    sio = pytest.importorskip("skops.io")
    from kernelmaps.experiments import trusted_model_types

    X, y = _data(0)
    for model in (
        KernelRidge(gamma=GAMMA, alpha=ALPHA).fit(X, y),
        NystroemKernelRidge(n_components=8, posterior=True, random_state=0).fit(X, y),
    ):
        expected = model.predict_interval(X[:3])
        data = sio.dumps(model)
        assert set(sio.get_untrusted_types(data=data)) <= set(trusted_model_types())
        loaded = sio.loads(data, trusted=list(trusted_model_types()))
        np.testing.assert_array_equal(np.stack(loaded.predict_interval(X[:3])), expected)
