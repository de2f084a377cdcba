"""Structured random features (Fastfood, SORF) and the fast Walsh-Hadamard transform.

Exact facts are checked exactly (the transform against scipy's Hadamard matrix, the
Hadamard path against the explicit dense frequency matrix, orthogonal rows with the
stated norms, both engines agreeing); every randomized assertion takes its tolerance from
a bound at failure probability ``DELTA`` (``tests/_bounds.py``), derived next to the
test, and planted bugs show that the tolerances still catch real mistakes.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import integrate, special
from scipy.linalg import hadamard
from sklearn.datasets import load_digits

import kernelmaps
from kernelmaps import Fastfood, StructuredOrthogonalFeatures
from kernelmaps.feature_maps._hadamard import fwht, fwht_numpy, next_power_of_two
from kernelmaps.kernels import Gaussian, Laplacian, Matern

from ._bounds import empirical_bernstein_radius, hoeffding_radius
from ._points import IU, N_PAIRS, POINTS

ENGINES = ["numpy", "numba"]


RADIAL_KERNELS = {
    "rbf": Gaussian(gamma=0.5),
    "matern0.5": Matern(nu=0.5, gamma=0.2),
    "matern1.5": Matern(nu=1.5, gamma=0.2),
    "matern2.5": Matern(nu=2.5, gamma=0.2),
}


@pytest.fixture(params=ENGINES)
def engine(request):
    with kernelmaps.config_context(engine=request.param):
        yield request.param


# -- the fast Walsh-Hadamard transform ------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 4, 8, 16, 64, 512])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fwht_equals_hadamard_matrix(n, dtype, engine) -> None:
    a = np.random.default_rng(n).standard_normal((7, n)).astype(dtype)
    expected = a.astype(np.float64) @ hadamard(n).astype(np.float64)
    got = fwht(a.copy())
    assert got.dtype == dtype
    # Each output is a signed sum of the n inputs over log2(n) rounded stages: error at
    # most log2(n) eps sum_k |a_k| (standard bound for recursive summation).
    eps = np.finfo(dtype).eps
    bound = max(1, int(math.log2(n))) * eps * np.abs(a).astype(np.float64).sum(axis=1)
    assert np.all(np.abs(got - expected) <= bound[:, None] + 1e-30)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fwht_engines_agree(dtype) -> None:
    a = np.random.default_rng(1).standard_normal((33, 1024)).astype(dtype)
    with kernelmaps.config_context(engine="numba"):
        compiled = fwht(a.copy())
    plain = fwht_numpy(a.copy())
    # Same butterflies in the same order: equal within 4 ulp of the largest entry (in
    # practice bit for bit).
    scale = float(np.abs(plain).max())
    np.testing.assert_allclose(compiled, plain, rtol=0, atol=4 * np.finfo(dtype).eps * scale)


def test_fwht_refuses_bad_arrays() -> None:
    with pytest.raises(ValueError, match="power of two"):
        fwht_numpy(np.zeros((2, 6)))
    with pytest.raises(ValueError, match="C-contiguous"):
        fwht_numpy(np.zeros((8, 4)).T)
    with pytest.raises(ValueError, match="float32 or float64"):
        fwht_numpy(np.zeros((2, 8), dtype=np.int64))
    assert [next_power_of_two(n) for n in (1, 2, 3, 784, 1024)] == [1, 2, 4, 1024, 1024]


# -- the Hadamard path equals the explicit dense matrix -------------------------------------


def _fastfood_dense(ff: Fastfood) -> np.ndarray:
    """The stacked V_j = diag(r / (sqrt(d) |G|)) H G Pi H B built as dense matrices."""
    d = ff.padded_dim_
    H = hadamard(d).astype(np.float64)
    blocks = []
    for j in range(ff.n_blocks_):
        Pi = np.eye(d)[ff.permutations_[j]]  # (Pi v)_k = v[perm[k]]
        g = ff.gaussians_[j]
        S = ff.norms_[j] / (math.sqrt(d) * np.linalg.norm(g))
        blocks.append(S[:, None] * (H @ np.diag(g) @ Pi @ H @ np.diag(ff.signs_[j])))
    return np.concatenate(blocks)


def _sorf_dense(sorf: StructuredOrthogonalFeatures) -> np.ndarray:
    """The stacked W_j = diag(r) (H/sqrt d) D1 (H/sqrt d) D2 (H/sqrt d) D3, dense."""
    d = sorf.padded_dim_
    Hn = hadamard(d) / math.sqrt(d)
    blocks = []
    for j in range(sorf.n_blocks_):
        D1, D2, D3 = (np.diag(s) for s in sorf.signs_[j])
        blocks.append(sorf.norms_[j][:, None] * (Hn @ D1 @ Hn @ D2 @ Hn @ D3))
    return np.concatenate(blocks)


DENSE = {Fastfood: _fastfood_dense, StructuredOrthogonalFeatures: _sorf_dense}


@pytest.mark.parametrize("cls", [Fastfood, StructuredOrthogonalFeatures])
@pytest.mark.parametrize("n_features", [1, 5, 16, 20])
def test_hadamard_path_equals_dense_matrix(cls, n_features, engine) -> None:
    X = np.random.default_rng(n_features).normal(size=(13, n_features))
    est = cls(gamma=0.3, n_components=3 * next_power_of_two(n_features) + 1, random_state=0)
    est.fit(X)
    W = DENSE[cls](est)[:, :n_features]  # padding coordinates meet zeros
    expected = X @ W.T
    tol = {"rtol": 1e-10, "atol": 1e-12 * float(np.abs(expected).max())}
    np.testing.assert_allclose(est._project(X, np.dtype(np.float64)), expected, **tol)
    np.testing.assert_allclose(
        est._project(sp.csr_matrix(X), np.dtype(np.float64)), expected, **tol
    )
    # and the features are the RandomFourierFeatures ones for these frequencies
    L, F, D = est.n_pairs_, est.n_frequencies_, est.n_components
    P = expected[:, :F]
    offsets = 0.0 if est.offsets_ is None else est.offsets_
    Z = np.hstack([np.cos(P[:, :L]), np.sin(P[:, :L]), np.cos(P[:, L:F] + offsets)])
    np.testing.assert_allclose(est.transform(X), Z * math.sqrt(2.0 / D), rtol=1e-9, atol=1e-12)


def test_sorf_rows_are_orthogonal_with_the_stated_norms() -> None:
    X = np.zeros((2, 30))  # d = 32
    for norms in ("radial", "fixed"):
        sorf = StructuredOrthogonalFeatures(gamma=0.7, n_components=200, norms=norms)
        sorf.set_params(random_state=0).fit(X)
        W = _sorf_dense(sorf)
        d = sorf.padded_dim_
        for j in range(sorf.n_blocks_):
            block = W[j * d : (j + 1) * d]
            np.testing.assert_allclose(
                block @ block.T, np.diag(sorf.norms_[j] ** 2), atol=1e-12 * d * 0.7 * 2
            )
        if norms == "fixed":
            np.testing.assert_allclose(sorf.norms_, math.sqrt(2 * 0.7 * d))


def test_fastfood_rows_have_the_stated_norms() -> None:
    # Row i of H G Pi H B has norm sqrt(d) |G| exactly, so |v_ji| = r_ji exactly.
    ff = Fastfood(gamma=0.7, n_components=200, random_state=0).fit(np.zeros((2, 30)))
    np.testing.assert_allclose(
        np.linalg.norm(_fastfood_dense(ff), axis=1), ff.norms_.ravel(), rtol=1e-12
    )


@pytest.mark.parametrize("cls", [Fastfood, StructuredOrthogonalFeatures])
@pytest.mark.parametrize("variant", ["cos_sin", "cos_phase"])
def test_engines_agree_and_float32_is_kept(cls, variant) -> None:
    X = np.random.default_rng(3).normal(size=(40, 100)) * 0.2  # d = 128
    est = cls(n_components=301, variant=variant, random_state=0).fit(X)
    out = {}
    for eng in ENGINES:
        with kernelmaps.config_context(engine=eng):
            out[eng, 64] = est.transform(X)
            out[eng, 32] = est.transform(X.astype(np.float32))
    assert out["numpy", 32].dtype == out["numba", 32].dtype == np.float32
    # Same operations in the same order: a few ulp of the features' scale sqrt(2/D).
    scale = math.sqrt(2.0 / 301)
    for bits in (64, 32):
        eps = np.finfo(np.float64 if bits == 64 else np.float32).eps
        np.testing.assert_allclose(out["numba", bits], out["numpy", bits], atol=8 * eps * scale)
    # float32 against float64: projections of size |w| |x| ~ 10 rounded to float32
    np.testing.assert_allclose(out["numba", 32], out["numba", 64], atol=1e-4 * scale * 10)


def _documented_attributes(cls) -> set[str]:
    """Names listed in the numpydoc ``Attributes`` section of ``cls``'s docstring."""
    lines = (cls.__doc__ or "").splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "Attributes") + 2
    names = set()
    for line in lines[start:]:
        stripped = line.strip()
        if stripped and set(stripped) == {"-"}:
            break  # the underline of the next section
        if line.startswith("    ") and not line.startswith("     ") and stripped:
            names.add(stripped.split(" :")[0])
    return names


def test_attributes_are_documented() -> None:
    X = np.random.default_rng(0).normal(size=(10, 5))
    for cls in (Fastfood, StructuredOrthogonalFeatures):
        documented = _documented_attributes(cls)
        fitted = {k for k in vars(cls(n_components=9).fit(X)) if k.endswith("_")}
        assert fitted <= documented, sorted(fitted - documented)


@pytest.mark.parametrize("cls", [Fastfood, StructuredOrthogonalFeatures])
def test_non_radial_kernels_are_refused_naming_the_maps_that_can(cls) -> None:
    with pytest.raises(
        ValueError,
        match=r"needs a shift-invariant kernel with a radial .*"
        r"Use .*RandomFourierFeatures",
    ):
        cls(kernel=Laplacian(gamma=0.5)).fit(POINTS)
    with pytest.raises(ValueError, match="needs a shift-invariant kernel with a radial"):
        cls(kernel="cauchy").fit(POINTS)


def test_fixed_norms_need_the_gaussian_kernel() -> None:
    with pytest.raises(ValueError, match=r"norms='fixed' .* Gaussian .* Use norms='radial'"):
        StructuredOrthogonalFeatures(kernel="matern", norms="fixed").fit(POINTS)


# -- Fastfood: the contract's check (tests/test_contract.py) has teeth --------------------

N_BLOCKS = 50_000


def _fastfood_estimates(est: Fastfood) -> np.ndarray:
    Z = est.fit(POINTS).transform(POINTS)
    return (Z @ Z.T)[IU]


def _fastfood_radius(variant: str) -> float:
    """Hoeffding radius over the N_BLOCKS independent blocks, union over the pairs.

    With ``D = 2 d N_BLOCKS`` (cos_sin) z(x).z(y) is the mean of N_BLOCKS independent
    block means of ``cos(v.(x - y))``, each in [-1, 1] (range 2); with ``D = d N_BLOCKS``
    (cos_phase) of block means of ``2 cos(v.x + b) cos(v.y + b)`` in [-2, 2] (range 4).
    Blocks are independent (fresh B, Pi, G, r and phases), and each has mean k(x - y)
    because every frequency has exactly the spectral law.
    """
    return hoeffding_radius(N_BLOCKS, 2.0 if variant == "cos_sin" else 4.0, N_PAIRS)


def _n_components(variant: str, d: int = 4) -> int:
    return (2 if variant == "cos_sin" else 1) * d * N_BLOCKS


def _chi_norm_bug_mean(gamma: float, n_dims: int, d: int) -> np.ndarray:
    """E cos(v.delta) when |v| ~ sqrt(2 gamma) chi_{n_dims} (instead of chi_d) and the
    direction is uniform on S^{d-1}: E_r[Omega_d(r |delta|)] with
    Omega_d(t) = Gamma(d/2) (2/t)^(d/2-1) J_{d/2-1}(t), by quadrature."""
    diffs = np.linalg.norm(POINTS[IU[0]] - POINTS[IU[1]], axis=1)
    s = math.sqrt(2.0 * gamma)
    nu = d / 2.0 - 1.0

    def omega(t: float) -> float:
        if t < 1e-12:
            return 1.0
        return math.gamma(d / 2.0) * (2.0 / t) ** nu * special.jv(nu, t)

    def chi_pdf(r: float) -> float:
        log_c = (1 - n_dims / 2) * math.log(2) - math.lgamma(n_dims / 2)
        return math.exp(log_c + (n_dims - 1) * math.log(max(r, 1e-300)) - r * r / 2)

    return np.array(
        [
            integrate.quad(lambda r, a=a: omega(s * r * a) * chi_pdf(r), 0, 40, limit=200)[0]
            for a in diffs
        ]
    )


class _NormsInInputDimension(Fastfood):
    """Planted bug: frequency norms drawn in the input dimension (3), not the padded d."""

    def _draw(self, kernel, n_blocks, d, rng):
        super()._draw(kernel, n_blocks, d, rng)
        self.norms_ = kernel.sample_frequency_norms(n_blocks * d, 3, rng).reshape(n_blocks, d)


class _GammaOffByTwo(Fastfood):
    """Planted bug: the norms scaled for 2 gamma."""

    def _draw(self, kernel, n_blocks, d, rng):
        super()._draw(kernel, n_blocks, d, rng)
        self.norms_ = self.norms_ * math.sqrt(2.0)


def test_fastfood_tolerance_catches_planted_bugs(seed) -> None:
    kernel = RADIAL_KERNELS["rbf"]
    exact = kernel(POINTS)[IU]
    radius = _fastfood_radius("cos_sin")
    D = _n_components("cos_sin")
    # The buggy maps have other means (exactly known); each bias exceeds 2 radii at some
    # pair, so the contract's concentration test (tests/test_contract.py: the same D and
    # radius) fails for them with probability >= 1 - DELTA.
    doubled = Gaussian(gamma=1.0)(POINTS)[IU]
    chi3 = _chi_norm_bug_mean(0.5, 3, 4)
    assert np.allclose(_chi_norm_bug_mean(0.5, 4, 4), exact, atol=1e-8)  # quadrature check
    for bug, mean in ((_GammaOffByTwo, doubled), (_NormsInInputDimension, chi3)):
        assert np.abs(mean - exact).max() > 2 * radius
        error = np.abs(_fastfood_estimates(bug(kernel, n_components=D, random_state=seed)) - exact)
        assert error.max() > radius


# -- SORF: only asymptotically unbiased, lower variance than Monte Carlo ---------------------


def _digit_pairs() -> tuple[np.ndarray, float]:
    """Differences of fixed pairs of digits images (d = 64) at z = |delta| / sigma in
    [1.25, 1.5], with gamma the inverse median squared distance of 8 fixed images.

    There the kernel values are mid-range (about 0.3 to 0.45) and SORF's bias (below
    1e-3 with radial norms, Yu et al. 2016) is negligible next to its variance.
    """
    X = load_digits().data / 16.0
    P = X[np.random.default_rng(0).choice(len(X), 8, replace=False)]
    iu = np.triu_indices(8, k=1)
    delta = P[iu[0]] - P[iu[1]]
    sq = np.einsum("ij,ij->i", delta, delta)
    gamma = 1.0 / float(np.median(sq))
    z = np.sqrt(2.0 * gamma * sq)
    keep = (z >= 1.25) & (z <= 1.5)
    return delta[keep][:6], gamma


SORF_BLOCKS = 80_000


def _block_estimates(est, delta: np.ndarray, n_blocks: int) -> np.ndarray:
    """Per-block estimates ``mean_i cos(w_i.delta)`` over each block's d frequencies.

    With cos_sin features z(x).z(y) = mean_i cos(w_i.(x - y)); the projections are
    linear, so W x - W y = W delta.  Shape (n_pairs, n_blocks).
    """
    d = est.padded_dim_
    P = est._project(delta, np.dtype(np.float64))[:, : n_blocks * d]
    return np.cos(P).reshape(len(delta), n_blocks, d).mean(axis=2)


class _IidFrequencies(StructuredOrthogonalFeatures):
    """Planted bug: Monte Carlo frequencies (no orthogonality) behind the same interface.

    Only each pair's own projections matter to the assertion, and for i.i.d.
    ``w ~ N(0, 2 gamma I)`` those are i.i.d. ``N(0, 2 gamma |delta|^2)``: drawn directly.
    """

    def _project(self, X, dtype):
        rng = np.random.default_rng(self.signs_[:64, 0, 0].clip(0).astype(int).tolist())
        n = self.n_blocks_ * self.padded_dim_
        sd = np.sqrt(2.0 * self.kernel_.gamma * np.einsum("ij,ij->i", X, X))
        return (rng.standard_normal((X.shape[0], n)) * sd[:, None]).astype(dtype)


def _sorf_mse_assertion(est, delta: np.ndarray, gamma: float) -> bool:
    """Whether the block mean squared error of ``est`` is provably below Monte Carlo's.

    For i.i.d. frequencies the mean of d cosines has exactly the variance
    v / d, v = (1 + k(2 delta)) / 2 - k(delta)^2 (and no bias).  The squared errors
    (Y_b - k)^2 of independent blocks lie in [0, (1 + k)^2]; the empirical Bernstein
    bound (union over the pairs) gives, with probability >= 1 - DELTA, E <= mean + r.
    So "mean + r < v / d" holds with probability >= 1 - DELTA whenever the true SORF
    block MSE is below v / d - 2 r, and fails with probability >= 1 - DELTA when the
    block MSE is v / d or more (Monte Carlo frequencies: the planted bug).
    """
    d = est.padded_dim_
    sq = np.einsum("ij,ij->i", delta, delta)
    k = np.exp(-gamma * sq)
    v = 0.5 * (1.0 + np.exp(-4.0 * gamma * sq)) - k**2
    Y = _block_estimates(est, delta, SORF_BLOCKS)
    ok = True
    for p in range(len(delta)):
        squared = (Y[p] - k[p]) ** 2
        r = empirical_bernstein_radius(squared, (1.0 + k[p]) ** 2, n_events=len(delta))
        ok &= bool(squared.mean() + r < v[p] / d)
    return ok


@pytest.mark.slow
def test_sorf_has_lower_error_than_monte_carlo_on_digits(seed) -> None:
    delta, gamma = _digit_pairs()
    assert len(delta) == 6
    D = 2 * 64 * SORF_BLOCKS
    sorf = StructuredOrthogonalFeatures(gamma=gamma, n_components=D, random_state=seed)
    assert _sorf_mse_assertion(sorf.fit(delta), delta, gamma)
    bug = _IidFrequencies(gamma=gamma, n_components=D, random_state=seed).fit(delta)
    assert not _sorf_mse_assertion(bug, delta, gamma)


def test_sorf_bias_within_the_papers_bound(seed) -> None:
    """|mean of block estimates - k| <= Hoeffding radius + 6 z / sqrt(d) (Yu et al. 2016,
    Theorem 3, Gaussian kernel, norms sqrt(d) / sigma): what the paper guarantees."""
    delta, gamma = _digit_pairs()
    n_blocks = 20_000
    sorf = StructuredOrthogonalFeatures(
        gamma=gamma, n_components=2 * 64 * n_blocks, norms="fixed", random_state=seed
    ).fit(delta)
    sq = np.einsum("ij,ij->i", delta, delta)
    k = np.exp(-gamma * sq)
    z = np.sqrt(2.0 * gamma * sq)
    mean = _block_estimates(sorf, delta, n_blocks).mean(axis=1)
    radius = hoeffding_radius(n_blocks, 2.0, len(delta))
    assert np.all(np.abs(mean - k) <= radius + 6.0 * z / math.sqrt(64))
