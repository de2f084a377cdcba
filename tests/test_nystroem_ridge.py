"""NystroemKernelRidge: the Nyström system solved by FALKON's preconditioned CG."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
import scipy.linalg
from sklearn import config_context
from sklearn.datasets import load_diabetes
from sklearn.exceptions import ConvergenceWarning

from kernelmaps import KernelRidge, NystroemKernelRidge
from kernelmaps.kernels import Gaussian
from kernelmaps.models import conjugate_gradient
from kernelmaps.models._falkon._solver import FalkonPreconditioner, landmark_gram


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    X, y = load_diabetes(return_X_y=True)
    X = X / X.std(axis=0)
    return X[:150], (y[:150] - y.mean()) / y.std(), X[150:190]


def _direct(model: NystroemKernelRidge, X, y):
    """The Nyström system solved directly, and what CG's tolerance implies about the gap.

    CG stops when the relative residual of the preconditioned system ``M beta = b`` is at most
    ``tol``, with ``M = A^{-T} T^{-T} H T^{-1} A^{-1}``, ``beta = A T c``.  Then
    ``|beta - beta*| <= |M^{-1}| |r| <= kappa(M) tol |beta*|``, and a prediction
    ``k_x^T c = (k_x^T T^{-1} A^{-1}) beta`` is off by at most ``|k_x^T T^{-1} A^{-1}| |beta -
    beta*|``.  The test recomputes the true residual (the CG recurrence may drift by rounding).
    """
    kernel, L, alpha = model.kernel_, model.landmarks_, model.alpha
    K_nm, K_mm = kernel(X, L), kernel(L, L)
    H = K_nm.T @ K_nm + alpha * K_mm
    rhs = K_nm.T @ y
    c_star = scipy.linalg.lstsq(H, rhs)[0]
    pre = FalkonPreconditioner(landmark_gram(kernel, L), X.shape[0], alpha)
    T, A = pre.T, pre.A
    S = np.linalg.inv(A @ T)  # c = S beta
    M = S.T @ H @ S
    b = S.T @ rhs
    beta = A @ T @ model.dual_coef_
    beta_star = A @ T @ c_star
    true_residual = np.linalg.norm(b - M @ beta) / np.linalg.norm(b)
    eig = np.linalg.eigvalsh(0.5 * (M + M.T))
    return c_star, S, beta, beta_star, true_residual, eig[-1] / eig[0]


@pytest.mark.parametrize("landmarks", ["uniform", "kmeans", "leverage"])
def test_equals_direct_solve_of_nystroem_system(data, landmarks) -> None:
    X, y, X_test = data
    tol = 1e-8
    model = NystroemKernelRidge(
        gamma=0.05, n_components=40, landmarks=landmarks, alpha=0.5, tol=tol, random_state=0
    ).fit(X, y)
    assert model.converged_ and model.residual_ <= tol
    c_star, S, beta, beta_star, true_residual, kappa = _direct(model, X, y)
    assert true_residual <= 10 * tol  # recurrence vs true residual: rounding only
    gap = np.linalg.norm(beta - beta_star)
    assert gap <= kappa * true_residual * np.linalg.norm(beta_star) * (1 + 1e-6)
    P = model.kernel_(X_test, model.landmarks_) @ S
    radius = np.linalg.norm(P, axis=1) * gap
    expected = model.kernel_(X_test, model.landmarks_) @ c_star
    assert np.all(np.abs(model.predict(X_test) - expected) <= radius + 1e-12)
    # the preconditioner makes the system well conditioned: few iterations
    assert kappa < 100 and model.n_iter_ <= 40


def test_every_point_a_landmark_equals_exact_kernel_ridge(data) -> None:
    X, y, X_test = data
    X, y = X[:80], y[:80]
    tol = 1e-10
    model = NystroemKernelRidge(gamma=0.05, landmarks=X, alpha=0.5, tol=tol).fit(X, y)
    exact = KernelRidge(gamma=0.05, alpha=0.5).fit(X, y)
    assert model.landmark_indices_ is None and model.landmarks_.shape == X.shape
    # With m = n, K_nm = K and H = K (K + alpha I): the Nyström solution is exact kernel
    # ridge regression's; CG's tolerance bounds the gap as in the direct-solve test.
    c_star, S, beta, beta_star, true_residual, kappa = _direct(model, X, y)
    gap = np.linalg.norm(beta - beta_star)
    K_t = Gaussian(gamma=0.05)(X_test, X)
    radius = np.linalg.norm(K_t @ S, axis=1) * kappa * true_residual * np.linalg.norm(beta_star)
    assert np.all(np.abs(K_t @ c_star - exact.predict(X_test)) <= 1e-9)
    assert np.all(np.abs(model.predict(X_test) - exact.predict(X_test)) <= radius + 1e-9)
    assert gap <= kappa * true_residual * np.linalg.norm(beta_star) * (1 + 1e-6)


def test_row_blocks_bound_the_kernel_blocks(data) -> None:
    X, y, _ = data
    shapes: list[tuple[int, int]] = []
    rbf = Gaussian(gamma=0.05)

    def recording_kernel(A, B):
        shapes.append((A.shape[0], B.shape[0]))
        return rbf(A, B)

    with config_context(working_memory=0.02):  # ~20 KiB: blocks of a few rows
        blocked = NystroemKernelRidge(
            recording_kernel, n_components=30, alpha=0.5, tol=1e-10, random_state=0
        ).fit(X, y)
    m = blocked.landmarks_.shape[0]
    block = int(0.02 * 2**20 // (8 * (3 * m + X.shape[1] + 1)))  # the working_memory budget
    assert block < X.shape[0] // 4
    assert max(rows for rows, cols in shapes if cols == m and rows != m) <= block
    whole = NystroemKernelRidge(
        gamma=0.05, n_components=30, alpha=0.5, tol=1e-10, random_state=0
    ).fit(X, y)
    np.testing.assert_allclose(blocked.dual_coef_, whole.dual_coef_, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_cached_and_recomputed_kernel_blocks_give_the_same_solution(data, dtype) -> None:
    X, y, X_test = data
    X = X.astype(dtype)
    Y = np.column_stack([y, np.cos(X[:, 1])])
    m = 30
    itemsize = np.dtype(dtype).itemsize
    fits = {}
    # working_memory 0.02 MiB: blocks of 8 rows; cache_size for 64 rows: part cached
    with config_context(working_memory=0.02):
        for name, cache_size in (("all", 2048), ("part", 64 * m * itemsize / 2**20), ("none", 0)):
            fits[name] = NystroemKernelRidge(
                gamma=0.05,
                n_components=m,
                alpha=0.5,
                tol=1e-10,
                cache_size=cache_size,
                random_state=0,
            ).fit(X, Y)
    assert fits["all"].n_cached_rows_ == X.shape[0]
    assert 0 < fits["part"].n_cached_rows_ <= 64
    assert fits["none"].n_cached_rows_ == 0
    # Cached or recomputed, every block is the same array and goes through the same
    # products in the same order: the solutions agree to the last bit, up to BLAS kernels
    # that may depend on memory alignment (a few ulp of the coefficients).
    for name in ("part", "none"):
        assert fits[name].n_iter_ == fits["all"].n_iter_
        np.testing.assert_allclose(fits[name].dual_coef_, fits["all"].dual_coef_, rtol=1e-12)
        np.testing.assert_allclose(
            fits[name].predict(X_test.astype(dtype)),
            fits["all"].predict(X_test.astype(dtype)),
            rtol=1e-6 if dtype == np.float32 else 1e-12,
        )


def test_multi_output_float32_and_pickle(data) -> None:
    X, y, X_test = data
    Y = np.column_stack([y, np.sin(X[:, 0])])
    model = NystroemKernelRidge(gamma=0.05, n_components=30, alpha=0.5, random_state=0)
    multi = model.fit(X, Y)
    assert multi.dual_coef_.shape == (30, 2)
    single = NystroemKernelRidge(gamma=0.05, n_components=30, alpha=0.5, random_state=0)
    np.testing.assert_allclose(
        single.fit(X, y).predict(X_test), multi.predict(X_test)[:, 0], rtol=1e-5, atol=1e-6
    )
    p32 = multi.predict(X_test.astype(np.float32))
    assert p32.dtype == np.float32
    m32 = NystroemKernelRidge(gamma=0.05, n_components=30, alpha=0.5, random_state=0)
    m32.fit(X.astype(np.float32), Y)
    assert m32.predict(X_test.astype(np.float32)).dtype == np.float32
    np.testing.assert_allclose(m32.predict(X_test), multi.predict(X_test), atol=1e-4)
    restored = pickle.loads(pickle.dumps(multi))
    np.testing.assert_array_equal(restored.predict(X_test), multi.predict(X_test))


def test_same_seed_same_landmarks(data) -> None:
    X, y, _ = data
    a = NystroemKernelRidge(n_components=20, random_state=7).fit(X, y)
    b = NystroemKernelRidge(n_components=20, random_state=7).fit(X, y)
    np.testing.assert_array_equal(a.landmark_indices_, b.landmark_indices_)
    np.testing.assert_array_equal(a.dual_coef_, b.dual_coef_)


def test_duplicate_rows_do_not_break_the_solver() -> None:
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(40, 3))
    X[X < 0.6] = 0  # many identical rows, so repeated landmarks
    y = rng.randint(0, 3, size=40).astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = NystroemKernelRidge(
            kernel="laplacian", n_components=20, alpha=0.1, tol=1e-8, random_state=0
        ).fit(X, y)
    assert len(np.unique(model.landmarks_, axis=0)) == model.landmarks_.shape[0]


def test_non_convergence_warns_with_the_residual(data) -> None:
    X, y, _ = data
    with pytest.warns(
        ConvergenceWarning,
        match=r"did not converge: relative residual [0-9.e-]+ "
        r"> tol=1e-12 after max_iter=2",
    ):
        model = NystroemKernelRidge(
            gamma=0.05, n_components=40, alpha=1e-6, max_iter=2, tol=1e-12, random_state=0
        ).fit(X, y)
    assert not model.converged_ and model.n_iter_ == 2 and model.residual_ > 1e-12


def test_conjugate_gradient_solves_spd_systems() -> None:
    rng = np.random.default_rng(0)
    Q = rng.normal(size=(30, 30))
    A = Q @ Q.T + 30 * np.eye(30)
    B = rng.normal(size=(30, 3))
    result = conjugate_gradient(lambda V: A @ V, B, tol=1e-12, max_iter=200)
    assert result.converged and result.n_iter <= 60
    np.testing.assert_allclose(result.x, np.linalg.solve(A, B), rtol=1e-9, atol=1e-11)
    one = conjugate_gradient(lambda V: A @ V, B[:, 0], tol=1e-12, max_iter=200)
    assert one.x.shape == (30,)
    np.testing.assert_allclose(one.x, result.x[:, 0], rtol=1e-8)
    zero = conjugate_gradient(lambda V: A @ V, np.zeros(30))
    assert zero.converged and zero.n_iter == 0 and np.all(zero.x == 0)


def test_bad_input_messages(data) -> None:
    X, y, _ = data
    y_nan = y.copy()
    y_nan[0] = np.nan
    with pytest.raises(ValueError, match="Input y contains NaN"):
        NystroemKernelRidge(n_components=10).fit(X, y_nan)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        NystroemKernelRidge(n_components=10).fit(X, y[:-2])
    for alpha in (0.0, -0.5):
        with pytest.raises(ValueError, match="'alpha' parameter of NystroemKernelRidge"):
            NystroemKernelRidge(alpha=alpha).fit(X, y)
    with pytest.raises(ValueError, match=r"landmarks given as an array must have shape \(m, 10\)"):
        NystroemKernelRidge(landmarks=X[:5, :3]).fit(X, y)
    with pytest.raises(ValueError, match="'landmarks' parameter of NystroemKernelRidge"):
        NystroemKernelRidge(landmarks="random").fit(X, y)
    with pytest.raises(ValueError, match="cannot be used with a callable kernel"):
        NystroemKernelRidge(Gaussian(0.1).__call__, gamma=0.1).fit(X, y)
    with pytest.warns(UserWarning, match="n_components=500 is larger than n_samples=150"):
        NystroemKernelRidge(n_components=500, random_state=0).fit(X, y)
