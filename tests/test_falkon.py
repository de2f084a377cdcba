"""FALKON's objects: the preconditioner, the K_nm^T K_nm matvec and their composition."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from sklearn.datasets import load_diabetes

from kernelmaps import NystroemKernelRidge
from kernelmaps._rows import as_rows
from kernelmaps.kernels import Gaussian
from kernelmaps.models._falkon._solver import (
    FalkonPreconditioner,
    FalkonSolver,
    NystroemMatvec,
    landmark_gram,
)


@pytest.fixture(scope="module")
def problem():
    X, y = load_diabetes(return_X_y=True)
    X = X / X.std(axis=0)
    kernel = Gaussian(gamma=0.05)
    L = X[:30]
    return X[:200], ((y - y.mean()) / y.std())[:200, None], kernel, L


def test_preconditioner_factors_and_transpose(problem) -> None:
    X, _, kernel, L = problem
    K_mm = landmark_gram(kernel, L)
    pre = FalkonPreconditioner(K_mm, X.shape[0], 0.3)
    m = L.shape[0]
    assert np.allclose(np.triu(pre.T), pre.T) and np.allclose(np.triu(pre.A), pre.A)
    # T^T T = K_mm + jitter (jitter 1e-13 m for a unit-diagonal kernel)
    np.testing.assert_allclose(pre.T.T @ pre.T, K_mm + 1e-13 * m * np.eye(m), atol=1e-12)
    B = pre.apply(np.eye(m))
    np.testing.assert_allclose(pre.apply_t(np.eye(m)), B.T, rtol=1e-10, atol=1e-10)
    # B^{-T} B^{-1} = (n/m) K_mm^2 + alpha K_mm (up to the jitter)
    approx = np.linalg.inv(B @ B.T)
    TT = pre.T.T @ pre.T
    expected = (X.shape[0] / m) * TT @ TT + 0.3 * TT
    np.testing.assert_allclose(approx, expected, rtol=1e-6, atol=1e-6 * np.abs(expected).max())


@pytest.mark.parametrize("cache_rows", [0, 70, 10_000])
def test_matvec_equals_dense_products(problem, cache_rows) -> None:
    X, Y, kernel, L = problem
    K_nm = kernel(X, L)
    blocks = [slice(0, 64), slice(64, 128), slice(128, 200)]
    mv = NystroemMatvec(X, blocks, lambda Xb: kernel(Xb, L), np.dtype(np.float64), cache_rows)
    np.testing.assert_allclose(mv.rhs(Y), K_nm.T @ Y, rtol=1e-12)
    # whole blocks are kept while they fit: none, the first (64 rows), all three
    assert mv.n_cached_rows == {0: 0, 70: 64, 10_000: 200}[cache_rows]
    V = np.random.default_rng(0).normal(size=(L.shape[0], 2))
    out = mv(V, np.zeros((L.shape[0], 2)))
    np.testing.assert_allclose(out, K_nm.T @ (K_nm @ V), rtol=1e-10)


def test_solver_solves_the_nystroem_system(problem) -> None:
    X, Y, kernel, L = problem
    K_mm, alpha = landmark_gram(kernel, L), 0.5
    mv = NystroemMatvec(X, [slice(0, 200)], lambda Xb: kernel(Xb, L), np.dtype(np.float64), 0)
    solver = FalkonSolver(K_mm, alpha, FalkonPreconditioner(K_mm, 200, alpha), mv)
    coef, result = solver.solve(Y, tol=1e-10, max_iter=100)
    K_nm = kernel(X, L)
    H = K_nm.T @ K_nm + alpha * K_mm
    assert result.converged
    # H is invertible here; relative residual 1e-10 of the preconditioned system bounds
    # the error of c by kappa(B^T H B) 1e-10 (kappa < 100 measured in test_nystroem_ridge)
    np.testing.assert_allclose(coef, np.linalg.solve(H, K_nm.T @ Y), rtol=1e-7, atol=1e-9)


def test_estimator_uses_the_objects_and_pickles_no_factors(problem) -> None:
    X, Y, _, _ = problem
    model = NystroemKernelRidge(gamma=0.05, n_components=30, alpha=0.5, random_state=0)
    model.fit(X, Y[:, 0])
    state = pickle.loads(pickle.dumps(model)).__dict__
    assert not any(isinstance(v, np.ndarray) and v.shape == (30, 30) for v in state.values()), (
        "the m x m preconditioner factors are not part of the fitted state"
    )
    solver = model._solver(as_rows(X), model.kernel_, model.landmarks_, 1)
    coef, result = solver.solve(Y, tol=model.tol, max_iter=model.max_iter)
    np.testing.assert_array_equal(coef[:, 0], model.dual_coef_)
    assert result.n_iter == model.n_iter_
