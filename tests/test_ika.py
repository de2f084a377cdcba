"""IKA: eigenvalues against the Mehler expansion, optimality, invariants, bad input."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_digits

from kernelmaps import IKA, Nystroem
from kernelmaps.kernels import Gaussian, Laplacian

from ._bounds import DELTA


def _mehler_eigenvalues(sigma2: float, ell: float, k: int) -> np.ndarray:
    """Eigenvalues of exp(-(x-y)^2 / (2 ell^2)) under N(0, sigma2) (Rasmussen & Williams
    2006, section 4.3.1): lambda_j = sqrt(2a/A) B^j, a = 1/(4 sigma2), b = 1/(2 ell^2),
    c = sqrt(a^2 + 2ab), A = a + b + c, B = b / A."""
    a, b = 1.0 / (4.0 * sigma2), 1.0 / (2.0 * ell**2)
    c = math.sqrt(a * a + 2.0 * a * b)
    A = a + b + c
    return math.sqrt(2.0 * a / A) * (b / A) ** np.arange(k)


def _fit_quietly(model, X):
    with warnings.catch_warnings():
        # Kernel functions at nearby centres are nearly collinear: the reduction of P is
        # expected here and covered by its own test.
        warnings.simplefilter("ignore", UserWarning)
        return model.fit(X)


def test_eigenvalues_match_mehler_expansion(seed):
    """IKA's lambda_i against the closed form, with a derived tolerance.

    S = 4000 draws of N(0, 1), Gaussian kernel with ell = 1 (gamma = 1/2), 40 kernel
    basis functions.  The eigenvalues of G / S are those of the empirical integral
    operator T_S on the RKHS, a mean of S i.i.d. rank-one operators k_x (x) k_x with
    HS norm k(x, x) = 1 and variance E|k_x (x) k_x|^2 - |T|^2 = 1 - sum lambda_j^2.
    Bernstein's inequality in Hilbert space (Pinelis; Rosasco, Belkin & De Vito 2010)
    gives |T_S - T|_HS <= 4 log(2/DELTA) / S + sqrt(2 (1 - sum lambda^2) log(2/DELTA) / S)
    (= 0.078) with probability 1 - DELTA, and by Weyl's inequality every eigenvalue of
    G / S is that close to the operator's.  IKA is Rayleigh-Ritz for G / S on the span of
    its basis, so its lambda_i are at most those of G / S and, with 40 kernel functions in
    1-D, below them by at most 1e-4 (the basis and the reduction of a nearly singular P
    lose up to 5e-5 on lambda_5: test_ritz_values_equal_sample_eigenvalues).
    Planted bug: gamma off by a factor 2 moves lambda_1 from 0.618 to 0.5, beyond 0.078.
    """
    S, m = 4000, 5
    X = np.random.default_rng(seed).normal(size=(S, 1))
    lam = _mehler_eigenvalues(1.0, 1.0, 40)
    log_term = math.log(2.0 / DELTA)
    variance = 1.0 - float(np.sum(lam**2))
    eps = 4.0 * log_term / S + math.sqrt(2.0 * variance * log_term / S)
    model = _fit_quietly(
        IKA(gamma=0.5, n_components=m, n_basis=40, sample_size=S, random_state=seed), X
    )
    np.testing.assert_array_less(np.abs(model.eigenvalues_ - lam[:m]), eps + 1e-4)
    if seed == 0:  # the planted bug is caught
        wrong = _fit_quietly(
            IKA(gamma=1.0, n_components=m, n_basis=40, sample_size=S, random_state=seed), X
        )
        assert np.max(np.abs(wrong.eigenvalues_ - lam[:m])) > eps + 1e-4


def test_ritz_values_equal_sample_eigenvalues(seed):
    """With S = n the eigenvalues are Ritz values of G / S: never above its eigenvalues
    (Cauchy interlacing, exact up to round-off), and close to them when the basis nearly
    spans the leading eigenvectors.  The gap is not random noise but the approximation
    error of 40 kernel functions (after the reduction of a nearly singular P): at most
    5e-5 over seeds 0-59, so 1e-4 is allowed; a wrong gamma moves lambda_1 by 0.1."""
    X = np.random.default_rng(seed).normal(size=(500, 1))
    G = Gaussian(gamma=0.5)(X)
    top = np.linalg.eigvalsh(G / 500)[::-1][:5]
    model = _fit_quietly(
        IKA(gamma=0.5, n_components=5, n_basis=40, sample_size=500, random_state=seed), X
    )
    assert np.all(model.eigenvalues_ <= top * (1 + 1e-9))
    np.testing.assert_allclose(model.eigenvalues_, top, rtol=0, atol=1e-4)


@pytest.fixture(scope="module")
def digits_small():
    X, _ = load_digits(return_X_y=True)
    X = X[:150] / 16.0
    kernel = Gaussian(gamma=0.05)
    return X, kernel, kernel(X)


def test_error_approaches_best_rank_m(seed, digits_small):
    """On the sample, IKA's error is never below the best rank-m error (Eckart-Young),
    and equals it when every sample point is a basis centre: then P = K^2/S, M = K^3/S^2
    and psi psi^T is the truncated eigendecomposition of K."""
    X, kernel, K = digits_small
    n = X.shape[0]
    w = np.linalg.eigvalsh(K)
    errors = {}
    for n_basis in (20, 60, n):
        m = 10
        model = _fit_quietly(
            IKA(kernel, n_components=m, n_basis=n_basis, sample_size=n, random_state=seed), X
        )
        Z = model.transform(X)
        errors[n_basis] = float(np.linalg.norm(K - Z @ Z.T))
        best = math.sqrt(float(np.sum(w[:-m] ** 2)))
        assert errors[n_basis] >= best * (1 - 1e-9)
    assert errors[n] <= best * (1 + 1e-6)


def test_ika_coefficients_beat_nystroem_on_the_same_span(seed, digits_small):
    """Same centres, m = n_basis, S = n: both maps give K ~ B C B^T with B = K_nc;
    IKA's C = B^+ K B^+T is the Frobenius-optimal one, so its error is at most
    Nystroem's (C = K_cc^+), deterministically."""
    X, kernel, K = digits_small
    ika = _fit_quietly(
        IKA(kernel, n_components=25, n_basis=25, sample_size=X.shape[0], random_state=seed), X
    )
    nys = Nystroem(kernel, landmarks=ika.centers_).fit(X)
    Zi, Zn = ika.transform(X), nys.transform(X)
    assert np.linalg.norm(K - Zi @ Zi.T) <= np.linalg.norm(K - Zn @ Zn.T) * (1 + 1e-6)


@pytest.mark.parametrize(
    "params",
    [
        {"basis": "kernel"},
        {"basis": "kernel", "centers": "kmeans"},
        {"basis": "relu"},
        {"basis": "sigmoid"},
        {"basis": "fourier"},
        {
            "basis": lambda X: np.hstack(
                [np.ones((X.shape[0], 1)), np.asarray(X), np.asarray(X) ** 2]
            )
        },
    ],
    ids=["kernel", "kmeans", "relu", "sigmoid", "fourier", "callable"],
)
def test_bases_invariants(seed, params):
    X = np.random.default_rng(seed).normal(size=(200, 3))
    m = 4
    model = IKA(Gaussian(gamma=0.3), n_components=m, n_basis=12, random_state=seed, **params)
    Z = _fit_quietly(model, X).transform(X)
    assert Z.shape == (200, m) and np.all(np.isfinite(Z))
    again = _fit_quietly(
        IKA(Gaussian(gamma=0.3), n_components=m, n_basis=12, random_state=seed, **params), X
    )
    np.testing.assert_array_equal(again.transform(X), Z)  # same seed, same map
    np.testing.assert_allclose(model.transform(X[20:50]), Z[20:50], atol=1e-12)
    assert np.all(np.diff(model.eigenvalues_) <= 0) and np.all(model.eigenvalues_ >= 0)
    Z32 = model.transform(X.astype(np.float32))
    assert Z32.dtype == np.float32


def test_sparse_equals_dense(seed):
    X = np.random.default_rng(seed).normal(size=(120, 5))
    X[np.abs(X) < 0.8] = 0.0
    model = _fit_quietly(
        IKA(Laplacian(gamma=0.3), n_components=5, n_basis=15, random_state=seed), X
    )
    np.testing.assert_allclose(model.transform(sp.csr_matrix(X)), model.transform(X), atol=1e-10)


def test_singular_basis_warns_and_stays_finite():
    X = np.random.default_rng(0).normal(size=(50, 2))

    def duplicated(Xb):
        Xb = np.asarray(Xb)
        return np.hstack([Xb, Xb, Xb[:, :1]])

    with pytest.warns(UserWarning, match="numerically singular"):
        model = IKA(gamma=0.5, n_components=4, basis=duplicated, random_state=0).fit(X)
    assert model.basis_rank_ == 2
    Z = model.transform(X)
    assert np.all(np.isfinite(Z)) and np.all(Z[:, 2:] == 0)


def test_bad_input_errors():
    X = np.random.default_rng(0).normal(size=(40, 3))
    with pytest.raises(ValueError, match="n_components=10 cannot exceed n_basis=5"):
        IKA(n_components=10, n_basis=5).fit(X)
    with pytest.raises(ValueError, match="shift-invariant kernel"):
        IKA(lambda A, B: (A @ B.T + 1.0) ** 2, n_components=3, basis="fourier").fit(X)
    with pytest.raises(ValueError, match="precomputed"):
        IKA("precomputed", n_components=3).fit(X)
    with pytest.raises(ValueError, match="basis callable returned"):
        IKA(n_components=3, basis=lambda A: np.ones(A.shape[0])).fit(X)
    with pytest.raises(ValueError, match="not symmetric"):
        IKA(lambda A, B: A @ (B + 1.0).T, n_components=3, n_basis=5).fit(X)
    with pytest.raises(ValueError, match=r"shape .* it must return"):
        IKA(lambda A, B: np.ones((2, 2)), n_components=3, n_basis=5).fit(X)
    with pytest.warns(UserWarning, match="n_basis=60 is larger than n_samples=40"):
        model = _fit_quietly_keep_size_warning(X)
    assert model.n_basis_ == 40


def _fit_quietly_keep_size_warning(X):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*numerically singular.*")
        return IKA(gamma=0.5, n_components=3, n_basis=60, random_state=0).fit(X)
