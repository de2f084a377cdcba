"""TensorSketch: agreement with scikit-learn given the same hashes, the exact variance of
the count sketch and the variance bound (whose 1/D gives the D^-1/2 error), dtype and
memory.  Unbiasedness is in the shared contract (``tests/test_contract.py``)."""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn import config_context
from sklearn.kernel_approximation import PolynomialCountSketch
from sklearn.preprocessing import normalize

import kernelmaps
from kernelmaps import TensorSketch
from kernelmaps.kernels import HomogeneousPolynomial, Polynomial


def _points(seed: int, n: int = 5, d: int = 6) -> np.ndarray:
    rng = np.random.default_rng(20_000 + seed)
    return normalize(rng.standard_normal((n, d))) * rng.uniform(0.5, 1.0, size=(n, 1))


@pytest.mark.parametrize(
    "params",
    [
        {"degree": 2},
        {"degree": 3, "gamma": 0.5, "coef0": 1.5},
        {"degree": 4, "coef0": 1.0},
        {"degree": 2, "coef0": 2.0, "gamma": 2.0},
    ],
)
def test_equals_sklearn_with_the_same_hashes(params) -> None:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 7))
    params = {"gamma": 1.0, "coef0": 0.0, **params}  # PolynomialCountSketch's defaults
    ts = TensorSketch(n_components=64, random_state=0, **params).fit(X)
    sk = PolynomialCountSketch(n_components=64, random_state=0, **params).fit(X)
    cols = 8 if params.get("coef0", 0) else 7
    sk.indexHash_ = ts.hashes_[:, :cols]
    sk.bitHash_ = ts.signs_[:, :cols]
    np.testing.assert_allclose(ts.transform(X), sk.transform(X), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(
        ts.transform(sp.csr_matrix(X)), sk.transform(X), rtol=1e-10, atol=1e-12
    )


def _variance_bound(x: np.ndarray, y: np.ndarray, degree: int, D: int) -> float:
    """``(2 + 3^p) |x'|^(2p) |y'|^(2p) / D`` (Avron, Nguyen & Woodruff 2014, Lemma 2)."""
    return (2 + 3**degree) * (x @ x) ** degree * (y @ y) ** degree / D


def test_degree_one_is_the_count_sketch() -> None:
    rng = np.random.default_rng(1)
    X = rng.standard_normal((20, 9))
    for coef0 in (0.0, 2.0):
        ts = TensorSketch(degree=1, gamma=0.25, coef0=coef0, n_components=16, random_state=0)
        Z = ts.fit_transform(X)
        S = np.zeros((10, 16))
        S[np.arange(10), ts.hashes_[0]] = ts.signs_[0]
        augmented = np.hstack([0.5 * X, np.full((20, 1), math.sqrt(coef0))])
        np.testing.assert_allclose(Z, augmented @ S, rtol=1e-14, atol=1e-14)


def test_count_sketch_variance_is_exact() -> None:
    """Degree 1: the estimate's variance is exactly (|x|^2|y|^2 + (x.y)^2 - 2 sum x^2 y^2)/D.

    Averaging the squared error over every one of the D^d equally likely hash
    functions is out of reach, so this checks the formula on d = 2, D = 3 exhaustively.
    """
    x, y = np.array([0.6, -1.1]), np.array([0.4, 0.7])
    D = 3
    errors = []
    for h0 in range(D):
        for h1 in range(D):
            for s0 in (-1, 1):
                for s1 in (-1, 1):
                    cx = np.zeros(D)
                    cy = np.zeros(D)
                    cx[h0] += s0 * x[0]
                    cx[h1] += s1 * x[1]
                    cy[h0] += s0 * y[0]
                    cy[h1] += s1 * y[1]
                    errors.append(cx @ cy - x @ y)
    exact = ((x @ x) * (y @ y) + (x @ y) ** 2 - 2 * np.sum(x**2 * y**2)) / D
    assert abs(np.mean(errors)) < 1e-15
    np.testing.assert_allclose(np.mean(np.square(errors)), exact)


def test_float32_kept_and_close_to_float64() -> None:
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (50, 10))
    ts = TensorSketch(degree=3, coef0=1.0, gamma=0.1, n_components=256, random_state=0).fit(X)
    Z64 = ts.transform(X)
    Z32 = ts.transform(X.astype(np.float32))
    assert Z32.dtype == np.float32
    assert np.linalg.norm(Z32 - Z64) <= 1e-5 * np.linalg.norm(Z64)
    assert ts.transform(sp.csr_matrix(X.astype(np.float32))).dtype == np.float32


def test_row_blocks_and_memory() -> None:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((3000, 16)).astype(np.float32)
    ts = TensorSketch(degree=2, gamma=1.0, coef0=0.0, n_components=1024, random_state=0).fit(X)
    Z = ts.transform(X)
    with config_context(working_memory=1):
        np.testing.assert_array_equal(ts.transform(X), Z)
    np.testing.assert_allclose(ts.transform(X[100:900]), Z[100:900], rtol=1e-6, atol=1e-6)
    tracemalloc.start()
    ts.transform(X)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    # output (12 MB) plus one block of at most 256 rows with (3p + 2)(D + 2) floats each
    block = 256 * (3 * 2 + 2) * (1024 + 2) * 4
    assert peak <= Z.nbytes + 2 * block, (peak, Z.nbytes, block)


def test_kernel_objects_and_defaults() -> None:
    X = _points(0)
    # the polynomial kernel's own defaults, as in every estimator
    assert TensorSketch(n_components=8).fit(X).kernel_ == Polynomial(gamma=1.0 / X.shape[1])
    # PolynomialCountSketch's kernel, given explicitly
    a = TensorSketch(degree=2, gamma=1.0, coef0=0.0, n_components=32, random_state=0).fit(X)
    assert a.kernel_ == Polynomial(degree=2, gamma=1.0, coef0=0.0)
    b = TensorSketch(HomogeneousPolynomial(2), n_components=32, random_state=0).fit(X)
    np.testing.assert_array_equal(a.transform(X), b.transform(X))
    c = TensorSketch("homogeneous_polynomial", degree=3, n_components=32, random_state=0).fit(X)
    assert c.kernel_ == HomogeneousPolynomial(3)


def test_bad_input_refused() -> None:
    X = _points(0)
    with pytest.raises(ValueError, match="'degree' parameter"):
        TensorSketch(degree=0).fit(X)
    with pytest.raises(ValueError, match="'coef0' parameter"):
        TensorSketch(coef0=-1.0).fit(X)
    with pytest.raises(ValueError, match=r"needs a polynomial kernel.*RandomMaclaurinFeatures"):
        TensorSketch("exponential_dot_product").fit(X)
    with pytest.raises(ValueError, match="given together with the kernel object"):
        TensorSketch(Polynomial(), degree=2).fit(X)
    ts = TensorSketch(n_components=8).fit(X)
    with pytest.raises(ValueError, match="features"):
        ts.transform(X[:, :3])


def test_variance_bound_holds_exhaustively() -> None:
    """Degree 2, d = 2, D = 3: the exact variance over all 3^4 * 2^4 hash/sign choices.

    It is below the documented bound ``(2 + 3^2) |x|^4 |y|^4 / D`` and the mean is the
    kernel exactly, for the map as implemented (FFT included).
    """
    X = np.array([[0.6, -1.1], [0.4, 0.7]])
    ts = TensorSketch(degree=2, gamma=1.0, coef0=0.0, n_components=3, random_state=0).fit(X)
    estimates = []
    for h in np.ndindex(3, 3, 3, 3):
        for s in np.ndindex(2, 2, 2, 2):
            ts.hashes_ = np.array([[h[0], h[1], 0], [h[2], h[3], 0]])
            ts.signs_ = 2 * np.array([[s[0], s[1], 0], [s[2], s[3], 0]]) - 1
            out = ts._transform_rows(X)
            estimates.append(out[0] @ out[1])
    k = (X[0] @ X[1]) ** 2
    np.testing.assert_allclose(np.mean(estimates), k, rtol=1e-12)
    assert np.var(estimates) <= _variance_bound(X[0], X[1], 2, 3)


@pytest.mark.parametrize("engine", ["numba", "numpy"])
@pytest.mark.parametrize(
    "params",
    [{"degree": 1, "coef0": 1.0}, {"degree": 2, "coef0": 0.0}, {"degree": 3, "coef0": 1.5}],
)
def test_direct_and_fft_routes_agree(engine, params) -> None:
    """The direct sum, the FFT convolution, compiled or not, dense or sparse, agree.

    Both compute the same circular convolution; the FFT's rounding is a few ulp of the
    largest value per term, hence the tolerances (float64: 1e-12, float32: 1e-5 relative).
    """
    if engine == "numba":
        pytest.importorskip("numba")
    rng = np.random.default_rng(3)
    X = rng.standard_normal((40, 9))
    X[X < -0.8] = 0.0  # zeros are skipped by the compiled direct sum
    ts = TensorSketch(gamma=0.5, n_components=32, random_state=0, **params).fit(X)
    reference = ts.transform(X)  # default route and engine
    routes = ["direct"] if params["degree"] == 1 else ["direct", "fft"]
    with kernelmaps.config_context(engine=engine):
        for route in routes:
            ts._route = lambda route=route: route  # type: ignore[method-assign]
            for dtype, rtol in ((np.float64, 1e-12), (np.float32, 1e-5)):
                for data in (X.astype(dtype), sp.csr_matrix(X.astype(dtype))):
                    Z = ts.transform(data)
                    assert Z.dtype == dtype
                    scale = np.abs(reference).max()
                    np.testing.assert_allclose(Z, reference, rtol=0, atol=rtol * scale)
            del ts._route


def test_route_choice() -> None:
    X = np.ones((3, 64))
    assert (
        TensorSketch(degree=2, gamma=1.0, coef0=0.0, n_components=4096).fit(X)._route() == "direct"
    )
    wide = np.ones((3, 2000))
    assert (
        TensorSketch(degree=2, gamma=1.0, coef0=0.0, n_components=4096).fit(wide)._route() == "fft"
    )
    with kernelmaps.config_context(engine="numpy"):
        assert (
            TensorSketch(degree=3, gamma=1.0, coef0=0.0, n_components=4096).fit(X)._route() == "fft"
        )


def test_direct_route_memory_is_output_plus_small_blocks() -> None:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((4000, 64))
    ts = TensorSketch(degree=2, gamma=1.0, coef0=0.0, n_components=2048, random_state=0).fit(X)
    assert ts._route() == "direct"
    tracemalloc.start()
    Z = ts.transform(X)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak <= 2 * Z.nbytes, (peak, Z.nbytes)
