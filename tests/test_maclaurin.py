"""Random Maclaurin and compact random features: exact reductions, expected errors, input.

Their unbiasedness and concentration, with the exact one-feature variance, are in the
shared contract (``tests/test_contract.py``, ``tests/_contract.py``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_digits
from sklearn.preprocessing import normalize

from kernelmaps import CompactRandomFeatures, RandomMaclaurinFeatures
from kernelmaps.kernels import (
    HomogeneousPolynomial,
    MaclaurinKernel,
    Polynomial,
)

N_TERMS = 120  # terms of the variance series; all series below converge geometrically


def _points(seed: int, n: int = 5, d: int = 5) -> np.ndarray:
    """Points in the unit ball (norms in [0.3, 1]), where every series below converges."""
    rng = np.random.default_rng(10_000 + seed)
    X = normalize(rng.standard_normal((n, d)))
    return X * rng.uniform(0.3, 1.0, size=(n, 1))


@pytest.mark.parametrize(
    ("kernel", "scale"),
    [(HomogeneousPolynomial(2), 1.0), (Polynomial(degree=7, gamma=1.0, coef0=1.0), 1.0)],
    ids=["(x.y)^2", "(1+x.y)^7"],
)
def test_compact_features_have_lower_expected_error_on_digits(kernel, scale) -> None:
    """The report's finding, in expectation: E|K - Z Z^T|_F^2 is lower for CRFM.

    Both expectations are exact sums of the per-entry variances (the estimates are
    unbiased), so this comparison has no randomness and needs no tolerance.
    """
    X = normalize(load_digits().data)[::9] * scale  # 200 rows, unit norm
    D, up, p = 256, 4, 2.0
    K = kernel(X)
    G = X @ X.T
    sq = np.einsum("ij,ij->i", X, X)
    m = np.outer(sq, sq) + 2 * G**2 - 2 * (X**2) @ (X**2).T
    second = sum(
        kernel.maclaurin_coefficient(n) ** 2 / ((p - 1) * p ** -(n + 1.0)) * m**n
        for n in range(N_TERMS)
    )
    V = second - K**2
    diag = np.diag(K)
    kk = np.outer(diag, diag)
    L = up * D
    rmfm = float(np.sum(V) / D)
    crfm = float(np.sum(V / L + (K**2 + V / L + kk + (V + K**2 - kk) / L) / D))
    assert crfm < rmfm
    assert crfm < 0.5 * rmfm  # by a clear margin: the report's "almost all the time"


def test_degree_one_reduces_to_a_sparse_rademacher_projection() -> None:
    X = _points(0, n=7, d=6)
    rm = RandomMaclaurinFeatures(HomogeneousPolynomial(1), n_components=50, random_state=3)
    Z = rm.fit_transform(X)
    # only order-1 features are non-zero: sqrt(a_1 / P[N = 1]) = sqrt(4) = 2 times w . x
    expected = np.zeros_like(Z)
    for n, cols, W in rm.rademacher_:
        assert n == 1
        expected[:, cols] = 2.0 * (X @ W.astype(float)) / math.sqrt(50)
    np.testing.assert_allclose(Z, expected, rtol=1e-15, atol=0)
    assert np.all(Z[:, rm.orders_ != 1] == 0)


def test_h01_puts_the_exact_terms_first() -> None:
    X = _points(0, n=4, d=3)
    kernel = Polynomial(degree=2, gamma=0.5, coef0=2.0)  # a_0 = 4, a_1 = 2
    Z = RandomMaclaurinFeatures(kernel, n_components=10, h01=True, random_state=0).fit_transform(X)
    np.testing.assert_allclose(Z[:, 0], 2.0)
    np.testing.assert_allclose(Z[:, 1:4], math.sqrt(2.0) * X)
    with pytest.raises(ValueError, match="h01=True computes 4 columns exactly"):
        RandomMaclaurinFeatures(kernel, n_components=4, h01=True).fit(X)


@pytest.mark.parametrize("cls", [RandomMaclaurinFeatures, CompactRandomFeatures])
def test_invariants(cls) -> None:
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (30, 8)) * (rng.uniform(0, 1, (30, 8)) < 0.5)
    est = cls(degree=2, n_components=24, random_state=7).fit(X)
    Z = est.transform(X)
    again = cls(degree=2, n_components=24, random_state=7).fit(X).transform(X)
    np.testing.assert_array_equal(Z, again)
    np.testing.assert_allclose(est.transform(X[5:17]), Z[5:17], rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(est.transform(sp.csr_matrix(X)), Z, rtol=1e-12, atol=1e-14)
    Z32 = cls(degree=2, n_components=24, random_state=7).fit(X.astype(np.float32))
    out32 = Z32.transform(X.astype(np.float32))
    assert out32.dtype == np.float32
    np.testing.assert_allclose(out32, Z, rtol=1e-4, atol=1e-5 * np.abs(Z).max())


@pytest.mark.parametrize("projection", ["gaussian", "rademacher", "sparse"])
def test_projection_entries(projection) -> None:
    X = _points(0, n=5, d=4)
    crf = CompactRandomFeatures(degree=2, n_components=40, projection=projection, random_state=0)
    crf.fit(X)
    R = crf.projection_.toarray() if sp.issparse(crf.projection_) else crf.projection_
    assert R.shape == (160, 40)
    if projection == "rademacher":
        np.testing.assert_allclose(np.abs(R), 1 / math.sqrt(40))
    if projection == "sparse":
        assert set(np.round(np.unique(R) * math.sqrt(40 / 3), 12)) <= {-1.0, 0.0, 1.0}


@pytest.mark.parametrize("cls", [RandomMaclaurinFeatures, CompactRandomFeatures])
def test_divergent_series_refused(cls) -> None:
    kernel = MaclaurinKernel(lambda n: 1.0, function=lambda t: 1.0 / (1.0 - t), radius=1.0)
    X = _points(0, n=5, d=4) * 0.9
    est = cls(kernel, n_components=8, random_state=0).fit(X)
    with pytest.raises(ValueError, match=r"radius of convergence 1.*squared norm 4 >= 1"):
        cls(kernel, n_components=8).fit(np.vstack([X, [2.0, 0, 0, 0]]))
    with pytest.raises(ValueError, match="where the series diverges"):
        est.transform(np.vstack([X, [0, 1.0, 0, 0]]))


def test_bad_parameters_refused() -> None:
    X = _points(0)
    with pytest.raises(ValueError, match="degree"):
        RandomMaclaurinFeatures(degree=0).fit(X)
    with pytest.raises(ValueError, match="'p' parameter"):
        RandomMaclaurinFeatures(p=1.0).fit(X)
    with pytest.raises(ValueError, match="coef0"):
        CompactRandomFeatures(coef0=-1.0).fit(X)
    with pytest.raises(ValueError, match=r"negative|>= 0"):
        RandomMaclaurinFeatures(MaclaurinKernel(lambda n: (-0.5) ** n)).fit(X)
    with pytest.raises(ValueError, match="given together with the kernel object"):
        RandomMaclaurinFeatures(Polynomial(), degree=2).fit(X)
    with pytest.raises(ValueError, match=r"needs a dot-product kernel.*RandomFourierFeatures"):
        RandomMaclaurinFeatures("rbf").fit(X)
