"""Exact kernels: agreement with scikit-learn, parameters, and their spectral measures."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.gaussian_process.kernels import Matern as SkMatern
from sklearn.metrics.pairwise import laplacian_kernel, rbf_kernel

from kernelmaps import kernels
from kernelmaps.kernels import Cauchy, Gaussian, Laplacian, Matern, make_kernel, resolve_kernel

from ._bounds import hoeffding_radius

RNG = np.random.default_rng(12345)
X = RNG.normal(size=(25, 4))
Y = RNG.normal(size=(13, 4))


def test_gaussian_matches_sklearn() -> None:
    np.testing.assert_allclose(Gaussian(gamma=0.3)(X, Y), rbf_kernel(X, Y, gamma=0.3), rtol=1e-12)
    # gamma=None is 1 / n_features, as in scikit-learn
    np.testing.assert_allclose(Gaussian()(X, Y), rbf_kernel(X, Y), rtol=1e-12)


def test_laplacian_matches_sklearn() -> None:
    np.testing.assert_allclose(
        Laplacian(gamma=0.7)(X, Y), laplacian_kernel(X, Y, gamma=0.7), rtol=1e-12
    )
    np.testing.assert_allclose(Laplacian()(X, Y), laplacian_kernel(X, Y), rtol=1e-12)


@pytest.mark.parametrize("nu", [0.5, 1.5, 2.5, 0.8, 3.7])
def test_matern_matches_sklearn(nu: float) -> None:
    ours = Matern(nu=nu, length_scale=1.3)(X, Y)
    theirs = SkMatern(length_scale=1.3, nu=nu)(X, Y)
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-14)
    # gamma and length_scale are two names for one scale: l = 1 / sqrt(2 gamma)
    np.testing.assert_allclose(
        Matern(nu=nu, gamma=0.2)(X, Y), Matern(nu=nu, length_scale=1 / np.sqrt(0.4))(X, Y)
    )


def test_matern_diagonal_is_one_for_general_nu() -> None:
    np.testing.assert_allclose(np.diag(Matern(nu=0.8, gamma=0.5)(X)), 1.0)


def test_cauchy_matches_its_formula() -> None:
    diff = X[:, None, :] - Y[None, :, :]
    expected = np.prod(1.0 / (1.0 + 0.4 * diff**2), axis=2)
    np.testing.assert_allclose(Cauchy(gamma=0.4)(X, Y), expected, rtol=1e-12)


@pytest.mark.parametrize(
    "kernel", [Gaussian(0.3), Laplacian(0.3), Cauchy(0.3), Matern(1.5, gamma=0.3)], ids=repr
)
def test_sparse_and_float32_inputs(kernel) -> None:
    dense = kernel(X, Y)
    np.testing.assert_allclose(kernel(sp.csr_matrix(X), sp.csr_matrix(Y)), dense, rtol=1e-12)
    K32 = kernel(X.astype(np.float32), Y.astype(np.float32))
    assert K32.dtype == np.float32
    np.testing.assert_allclose(K32, dense, rtol=1e-5, atol=1e-6)
    assert kernel(X).shape == (25, 25)
    np.testing.assert_allclose(kernel.diag(X), np.diag(kernel(X)))


def test_make_kernel_by_name_and_errors() -> None:
    assert make_kernel("rbf", gamma=0.1) == Gaussian(gamma=0.1)
    assert make_kernel("GAUSSIAN") == Gaussian()
    assert make_kernel("matern", nu=2.5) == Matern(nu=2.5)
    with pytest.raises(ValueError, match=r"Unknown kernel 'foo'. Known kernels: .*rbf"):
        make_kernel("foo")
    with pytest.raises(ValueError, match=r"does not take parameter.*'degree'"):
        make_kernel("rbf", degree=3)
    with pytest.raises(ValueError, match=r"given together with the kernel object"):
        make_kernel(Gaussian(0.1), gamma=0.2)
    with pytest.raises(TypeError, match=r"kernel must be a kernel name"):
        make_kernel(3.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"given both as a parameter"):
        resolve_kernel("rbf", 4, {"gamma": 1.0}, gamma=2.0)
    assert resolve_kernel("rbf", 4) == Gaussian(gamma=0.25)
    assert "laplacian" in kernels.kernel_names()


@pytest.mark.parametrize("bad", [0.0, -1.0, np.inf, np.nan, "1", True])
def test_invalid_kernel_parameters(bad) -> None:
    with pytest.raises(ValueError, match=r"gamma must be a positive finite number"):
        Gaussian(gamma=bad)
    with pytest.raises(ValueError, match=r"nu must be a positive finite number"):
        Matern(nu=bad)


def test_matern_scale_given_twice() -> None:
    with pytest.raises(ValueError, match=r"give gamma or length_scale, not both"):
        Matern(gamma=1.0, length_scale=1.0)


def test_kernel_shape_errors() -> None:
    with pytest.raises(ValueError, match=r"X has 4 features but Y has 3"):
        Gaussian(1.0)(X, Y[:, :3])
    with pytest.raises(ValueError, match=r"Expected 2D arrays"):
        Gaussian(1.0)(X[0], Y)


SPECTRAL = [
    Gaussian(gamma=0.3),
    Laplacian(gamma=0.5),
    Cauchy(gamma=0.7),
    Matern(nu=0.5, gamma=0.3),
    Matern(nu=1.5, gamma=0.3),
    Matern(nu=2.5, length_scale=0.9),
    Matern(nu=0.8, gamma=0.4),
]
# Offsets at which the characteristic function is checked.
DELTAS = np.array([[0.3, -0.2, 0.5], [1.0, 0.4, -0.8], [-1.5, 1.2, 0.9], [2.0, -2.5, 1.0]])


def _empirical_characteristic(W: np.ndarray) -> np.ndarray:
    return np.cos(W @ DELTAS.T).mean(axis=0)


def _exact_characteristic(kernel) -> np.ndarray:
    return np.array([kernel(d[None, :], np.zeros((1, 3)))[0, 0] for d in DELTAS])


N_DRAWS = 40_000
# E[cos(w . delta)] = k(delta); cos lies in [-1, 1] (range 2), one union bound over the offsets.
EPS = hoeffding_radius(N_DRAWS, 2.0, n_events=len(DELTAS))


@pytest.mark.statistical
@pytest.mark.parametrize("kernel", SPECTRAL, ids=repr)
def test_spectral_measure_reproduces_the_kernel(kernel, seed: int) -> None:
    rng = np.random.default_rng(seed)
    exact = _exact_characteristic(kernel)
    W = kernel.sample_frequencies(N_DRAWS, 3, rng)
    assert np.max(np.abs(_empirical_characteristic(W) - exact)) < EPS
    # The inverse-CDF transform of uniform points has the same law.
    U = rng.uniform(size=(N_DRAWS, kernel.n_uniforms(3)))
    W = kernel.frequencies_from_uniform(U, 3)
    assert np.all(np.isfinite(W))
    assert np.max(np.abs(_empirical_characteristic(W) - exact)) < EPS
    if kernel.radial:
        directions = rng.standard_normal((N_DRAWS, 3))
        directions /= np.linalg.norm(directions, axis=1, keepdims=True)
        W = directions * kernel.sample_frequency_norms(N_DRAWS, 3, rng)[:, None]
        assert np.max(np.abs(_empirical_characteristic(W) - exact)) < EPS
    else:
        with pytest.raises(NotImplementedError, match=r"not radial"):
            kernel.sample_frequency_norms(3, 3, rng)


@pytest.mark.statistical
def test_spectral_check_catches_a_wrong_scale(seed: int) -> None:
    """The tolerance above is tight enough to see gamma off by a factor of two."""
    rng = np.random.default_rng(seed)
    exact = _exact_characteristic(Gaussian(gamma=0.3))
    W = Gaussian(gamma=0.6).sample_frequencies(N_DRAWS, 3, rng)
    # the bias exceeds 2 EPS, so it shows through noise of at most EPS
    assert np.max(np.abs(_exact_characteristic(Gaussian(gamma=0.6)) - exact)) > 2 * EPS
    assert np.max(np.abs(_empirical_characteristic(W) - exact)) > EPS


@pytest.mark.statistical
def test_laplacian_bin_pitch_law(seed: int) -> None:
    """P[x and y share a randomly shifted bin] = exp(-gamma |x - y|) in one dimension."""
    rng = np.random.default_rng(seed)
    gamma = 0.8
    gaps = np.array([0.1, 0.5, 1.0, 2.0, 4.0])
    pitch = Laplacian(gamma=gamma).sample_bin_pitch(N_DRAWS, 1, rng)[:, 0]
    shift = rng.uniform(size=N_DRAWS) * pitch
    x = 0.37
    same = np.floor((x - shift[:, None]) / pitch[:, None]) == np.floor(
        (x + gaps[None, :] - shift[:, None]) / pitch[:, None]
    )
    eps = hoeffding_radius(N_DRAWS, 1.0, n_events=len(gaps))
    assert np.max(np.abs(same.mean(axis=0) - np.exp(-gamma * gaps))) < eps


def test_sparse_input_with_64_bit_indices() -> None:
    Xs = sp.csr_matrix(X)
    Xs.indices = Xs.indices.astype(np.int64)
    Xs.indptr = Xs.indptr.astype(np.int64)
    np.testing.assert_allclose(Laplacian(0.3)(Xs, Y), Laplacian(0.3)(X, Y), rtol=1e-12)
