"""KernelRidge: the exact dual solution, primal/dual agreement, size warning, bad input."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn import config_context
from sklearn.datasets import load_diabetes
from sklearn.kernel_ridge import KernelRidge as SkKernelRidge
from sklearn.preprocessing import PolynomialFeatures

from kernelmaps import FeatureRidge, KernelRidge
from kernelmaps.kernels import Gaussian, Laplacian
from kernelmaps.models import _kernel_ridge


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray]:
    X, y = load_diabetes(return_X_y=True)
    X = X / X.std(axis=0)
    return X[:100], (y[:100] - y.mean()) / y.std()


@pytest.mark.parametrize(
    ("ours", "sklearn_kernel"),
    [
        ({"kernel": "rbf", "gamma": 0.05}, {"kernel": "rbf", "gamma": 0.05}),
        ({"kernel": Gaussian(gamma=0.05)}, {"kernel": "rbf", "gamma": 0.05}),
        ({"kernel": "laplacian", "gamma": 0.1}, {"kernel": "laplacian", "gamma": 0.1}),
        ({"kernel": Laplacian(gamma=0.1)}, {"kernel": "laplacian", "gamma": 0.1}),
    ],
)
def test_equals_scikit_learn_kernel_ridge(data, ours, sklearn_kernel) -> None:
    X, y = data
    Y = np.column_stack([y, np.sin(X[:, 0])])
    model = KernelRidge(alpha=0.3, **ours).fit(X, Y)
    ref = SkKernelRidge(alpha=0.3, **sklearn_kernel).fit(X, Y)
    np.testing.assert_allclose(model.dual_coef_, ref.dual_coef_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(model.predict(X[:7]), ref.predict(X[:7]), rtol=1e-8, atol=1e-10)


def test_callable_kernel_and_kernel_params(data) -> None:
    X, y = data

    def scaled_rbf(A, B, scale=1.0):
        return scale * Gaussian(gamma=0.05)(A, B)

    model = KernelRidge(scaled_rbf, kernel_params={"scale": 2.0}, alpha=0.6).fit(X, y)
    ref = KernelRidge(gamma=0.05, alpha=0.3).fit(X, y)
    # 2K c' = K c with (2K + 0.6 I) c' = y, i.e. c' = c / 2.
    np.testing.assert_allclose(model.dual_coef_, ref.dual_coef_ / 2, rtol=1e-9)
    np.testing.assert_allclose(model.predict(X), ref.predict(X), rtol=1e-8, atol=1e-10)
    matern = KernelRidge("matern", kernel_params={"nu": 1.5}, gamma=0.5).fit(X, y)
    assert matern.kernel_.nu == 1.5


@pytest.mark.parametrize("degree", [1, 2])
def test_primal_and_dual_solutions_agree(data, degree) -> None:
    X, y = data
    poly = PolynomialFeatures(degree=degree, include_bias=False)
    Z = poly.fit_transform(X)

    def feature_kernel(A, B):
        return poly.transform(A) @ poly.transform(B).T

    dual = KernelRidge(feature_kernel, alpha=0.8).fit(X, y)
    primal = FeatureRidge(poly, alpha=0.8, fit_intercept=False).fit(X, y)
    np.testing.assert_allclose(primal.predict(X), dual.predict(X), rtol=1e-8, atol=1e-10)
    # w = Z^T c (the representer theorem)
    np.testing.assert_allclose(primal.coef_, Z.T @ dual.dual_coef_, rtol=1e-7, atol=1e-10)


def test_sparse_input_float32_and_row_blocks(data) -> None:
    X, y = data
    Xs = sp.csr_matrix(np.where(np.abs(X) > 0.7, X, 0.0))
    dense = KernelRidge(gamma=0.05).fit(Xs.toarray(), y)
    sparse = KernelRidge(gamma=0.05).fit(Xs, y)
    np.testing.assert_allclose(sparse.predict(Xs), dense.predict(Xs.toarray()), atol=1e-10)
    p32 = dense.predict(X.astype(np.float32))
    assert p32.dtype == np.float32
    with config_context(working_memory=0.01):
        blocked = dense.predict(X)
    np.testing.assert_allclose(blocked, dense.predict(X), rtol=1e-12)


def test_warns_past_memory_budget(data, monkeypatch) -> None:
    X, y = data
    monkeypatch.setattr(_kernel_ridge, "EXACT_MEMORY_WARNING_BYTES", 50 * 50 * 8)
    with pytest.warns(
        UserWarning,
        match="forms the 100 x 100 kernel matrix.*NystroemKernelRidge"
        ".*FeatureRidge with RandomFourierFeatures",
    ):
        KernelRidge().fit(X, y)
    monkeypatch.setattr(_kernel_ridge, "EXACT_MEMORY_WARNING_BYTES", 2 * 2**30)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        KernelRidge().fit(X, y)


def test_indefinite_callable_falls_back_with_warning(data) -> None:
    X, y = data

    def indefinite(A, B):
        return -Gaussian(gamma=0.05)(A, B)

    with pytest.warns(UserWarning, match="not positive definite"):
        model = KernelRidge(indefinite, alpha=0.1).fit(X, y)
    K = indefinite(X, X) + 0.1 * np.eye(X.shape[0])
    np.testing.assert_allclose(K @ model.dual_coef_, y, atol=1e-6)


def test_bad_input_messages(data) -> None:
    X, y = data
    y_nan = y.copy()
    y_nan[5] = np.nan
    with pytest.raises(ValueError, match="Input y contains NaN"):
        KernelRidge().fit(X, y_nan)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        KernelRidge().fit(X, y[:50])
    for alpha in (0, -1.0):
        with pytest.raises(ValueError, match="'alpha' parameter of KernelRidge must be a float"):
            KernelRidge(alpha=alpha).fit(X, y)
    with pytest.raises(ValueError, match="Unknown kernel 'gausian'"):
        KernelRidge("gausian").fit(X, y)
    with pytest.raises(ValueError, match="cannot be used with a callable kernel"):
        KernelRidge(lambda A, B: A @ B.T, gamma=0.1).fit(X, y)
    with pytest.raises(ValueError, match="The kernel callable returned an array of shape"):
        KernelRidge(lambda A, B: np.ones((2, 2))).fit(X, y)


def _scaled_rbf(X, Y, scale=1.0):
    return np.exp(-scale * ((X[:, None, :] - Y[None, :, :]) ** 2).sum(axis=-1))


def test_callable_kernel_with_params_pickles() -> None:
    import pickle

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 3)), rng.normal(size=30)
    model = KernelRidge(kernel=_scaled_rbf, kernel_params={"scale": 0.5}).fit(X, y)
    restored = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(restored.predict(X), model.predict(X))
