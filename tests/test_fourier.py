"""Random Fourier features: exact variance, convergence rate, comparisons and layout.

Unbiasedness and concentration of every sampler are in the shared contract
(``tests/test_contract.py``).  Every tolerance here comes from a concentration bound at
failure probability ``DELTA`` (``tests/_bounds.py``); the derivations are next to each test.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.decomposition import PCA

from kernelmaps import RandomFourierFeatures
from kernelmaps.bandwidth import gamma_from_data
from kernelmaps.kernels import Gaussian, Matern

from ._bounds import (
    empirical_bernstein_radius,
    median_of_means,
    median_of_means_radius,
)
from ._points import IU, POINTS

KERNELS = {"rbf": Gaussian(gamma=0.5), "matern1.5": Matern(nu=1.5, gamma=0.2)}


def _pair_values(Z: np.ndarray) -> np.ndarray:
    return (Z @ Z.T)[IU]


def _exact(kernel) -> np.ndarray:
    return kernel(POINTS)[IU]


def _k_at_double_offset(kernel) -> np.ndarray:
    """k(2 delta) for every pair: the kernel between 2 (x - y) and the origin."""
    diffs = 2.0 * (POINTS[IU[0]] - POINTS[IU[1]])
    return kernel(diffs, np.zeros((1, POINTS.shape[1])))[:, 0]


def _blockwise_estimates(Z: np.ndarray, n_groups: int, group: int) -> np.ndarray:
    """Pair estimates of each group of ``group`` frequencies of a cos_sin map."""
    L = n_groups * group
    C = Z[:, :L].reshape(len(POINTS), n_groups, group)
    S = Z[:, L : 2 * L].reshape(len(POINTS), n_groups, group)
    gram = np.einsum("irl,jrl->rij", C, C) + np.einsum("irl,jrl->rij", S, S)
    return gram[:, IU[0], IU[1]] * n_groups  # undo the 1/L weight of the whole map


def test_unscrambled_qmc_is_deterministic_and_finite() -> None:
    a = RandomFourierFeatures(n_components=64, sampler="sobol", scramble=False, random_state=0)
    b = RandomFourierFeatures(n_components=64, sampler="sobol", scramble=False, random_state=1)
    a.fit(POINTS)
    b.fit(POINTS)
    np.testing.assert_array_equal(a.frequencies_, b.frequencies_)
    assert np.all(np.isfinite(a.frequencies_))
    # the first point of the sequence (the origin, an infinite inverse CDF) is skipped
    assert np.all(np.abs(a.frequencies_) < 10.0)


# Convergence rate.  For Monte Carlo features the squared Frobenius error over the pairs
# has the exact mean E|K - ZZ^T|^2 = sum_p v_p / D, with v_p = 1 + k(2 delta) - 2 k^2
# (cos_sin) or 1 + k(2 delta)/2 - k^2 (cos_phase), so D E|err|^2 is constant in D: the error
# falls like D^-1/2.  Each replicate is a disjoint group of i.i.d. frequencies of one big
# map.  Writing err^2 = |mean of L i.i.d. vectors A_l|^2 (A_l the centred per-frequency
# contributions, E|A|^2 = s2, |A|^2 <= M2), E err^4 <= 3 s2^2 / L^2 + M2 s2 / L^3, so
# Var(D err^2) <= (D/L)^2 (3 s2^2 + M2 s2 / L): median of means then gives the radius.
RATE_REPLICATES = 12_000
RATE_GRID = (8, 32, 128)  # frequencies per replicate


def _rate_statistics(kernel, variant: str, L: int, seed: int) -> np.ndarray:
    """D |K - Z Z^T|^2 over the pairs, for RATE_REPLICATES independent maps of L freqs."""
    exact = _exact(kernel)
    out = []
    chunk = 1000
    for c, child in enumerate(np.random.SeedSequence(seed).spawn(RATE_REPLICATES // chunk)):
        n_components = 2 * L * chunk if variant == "cos_sin" else L * chunk
        Z = (
            RandomFourierFeatures(
                kernel, n_components=n_components, variant=variant, random_state=child
            )
            .fit(POINTS)
            .transform(POINTS)
        )
        if variant == "cos_sin":
            est = _blockwise_estimates(Z, chunk, L)
            D = 2 * L
        else:
            G = Z.reshape(len(POINTS), chunk, L)
            est = np.einsum("irl,jrl->rij", G, G)[:, IU[0], IU[1]] * chunk
            D = L
        out.append(D * ((est - exact) ** 2).sum(axis=1))
        del c
    return np.concatenate(out)


@pytest.mark.statistical
@pytest.mark.parametrize("variant", ["cos_sin", "cos_phase"])
def test_monte_carlo_error_falls_like_inverse_sqrt_d(variant: str, seed: int) -> None:
    kernel = KERNELS["rbf"]
    k = _exact(kernel)
    k2 = _k_at_double_offset(kernel)
    if variant == "cos_sin":
        per_freq_var = (1.0 + k2) / 2.0 - k**2  # Var cos(w.delta)
        spread = 1.0 + np.abs(k)  # |cos - k|
        D_over_L = 2.0
    else:
        per_freq_var = 1.0 + k2 / 2.0 - k**2  # Var 2 cos(w.x+b) cos(w.y+b)
        spread = 2.0 + np.abs(k)
        D_over_L = 1.0
    s2 = per_freq_var.sum()
    M2 = (spread**2).sum()
    expected = D_over_L * s2  # = D E|err|^2, the same for every D
    for L in RATE_GRID:
        stats = _rate_statistics(kernel, variant, L, seed)
        var_bound = D_over_L**2 * (3 * s2**2 + M2 * s2 / L)
        estimate, _ = median_of_means(stats)
        radius = median_of_means_radius(len(stats), var_bound)
        assert abs(estimate - expected) < radius, (L, estimate, expected, radius)
        # the check has teeth: an error falling like D^-1/4 would move D E|err|^2 by a
        # factor 4 over the grid, far outside the radius
        assert radius < 0.45 * expected


# Orthogonal and quasi-Monte Carlo frequencies beat Monte Carlo at equal D on real data.
# Data: digits projected on their top principal components (QMC gains most in few
# dimensions), bandwidth by the mean-distance rule; MC's mean squared error over the pairs
# is known exactly (sum_p v_p / (D m)), the other sampler's is bounded above by the
# empirical Bernstein bound over independent replicates of
# mean_p (z(x).z(y) - k)^2 in [0, mean_p (1 + |k_p|)^2].


def _digits_points(n_dims: int, n_points: int):
    X = load_digits().data / 16.0
    Xp = PCA(n_dims, random_state=0).fit_transform(X)
    gamma = gamma_from_data(Xp)
    P = Xp[:: len(Xp) // n_points][:n_points]
    return P, Gaussian(gamma=gamma)


def _mc_mse(kernel, P: np.ndarray, D: int) -> tuple[float, np.ndarray, tuple[np.ndarray, ...]]:
    iu = np.triu_indices(len(P), k=1)
    k = kernel(P)[iu]
    k2 = kernel(2.0 * (P[iu[0]] - P[iu[1]]), np.zeros((1, P.shape[1])))[:, 0]
    return float(np.mean(1.0 + k2 - 2.0 * k**2) / D), k, iu


@pytest.mark.statistical
def test_orthogonal_beats_monte_carlo_on_digits(seed: int) -> None:
    P, kernel = _digits_points(8, 10)
    d = P.shape[1]
    mse_mc, k, iu = _mc_mse(kernel, P, 2 * d)
    n_blocks = 20000
    Z = (
        RandomFourierFeatures(
            kernel, n_components=2 * d * n_blocks, sampler="orthogonal", random_state=seed
        )
        .fit(P)
        .transform(P)
    )
    L = n_blocks * d
    C = Z[:, :L].reshape(len(P), n_blocks, d)
    S = Z[:, L:].reshape(len(P), n_blocks, d)
    est = (np.einsum("irl,jrl->rij", C, C) + np.einsum("irl,jrl->rij", S, S))[:, iu[0], iu[1]]
    sq_err = ((est * n_blocks - k) ** 2).mean(axis=1)
    upper = sq_err.mean() + empirical_bernstein_radius(sq_err, float(np.mean((1 + k) ** 2)))
    assert upper < mse_mc, (upper, sq_err.mean(), mse_mc)


@pytest.mark.statistical
@pytest.mark.slow
def test_scrambled_sobol_beats_monte_carlo_on_digits(seed: int) -> None:
    """Scrambled Sobol' features on digits' two leading principal components, D = 16.

    The upper confidence bound needs about 3 700 replicates to fall below Monte Carlo's
    exact mean squared error (measured: MC 0.039, Sobol' 0.013); 5 000 are used.
    """
    P, kernel = _digits_points(2, 12)
    D = 16
    mse_mc, k, iu = _mc_mse(kernel, P, D)
    sq_err = np.empty(5000)
    for r, child in enumerate(np.random.SeedSequence(seed).spawn(len(sq_err))):
        Z = RandomFourierFeatures(kernel, n_components=D, sampler="sobol", random_state=child)
        Z = Z.fit(P).transform(P)
        sq_err[r] = np.mean(((Z @ Z.T)[iu] - k) ** 2)
    upper = sq_err.mean() + empirical_bernstein_radius(sq_err, float(np.mean((1 + k) ** 2)))
    assert upper < mse_mc, (upper, sq_err.mean(), mse_mc)


@pytest.mark.parametrize("sampler", ["mc", "orthogonal", "halton", "sobol"])
@pytest.mark.parametrize("name", ["rbf", "matern1.5"])
def test_cos_sin_rows_have_unit_norm(sampler: str, name: str) -> None:
    X = np.random.default_rng(0).normal(size=(30, 3)) * 5.0
    Z = RandomFourierFeatures(
        KERNELS[name], n_components=64, sampler=sampler, random_state=0
    ).fit_transform(X)
    np.testing.assert_allclose(np.einsum("ij,ij->i", Z, Z), 1.0, rtol=1e-13)
    Z32 = (
        RandomFourierFeatures(KERNELS[name], n_components=64, sampler=sampler, random_state=0)
        .fit(X)
        .transform(X.astype(np.float32))
    )
    np.testing.assert_allclose(np.einsum("ij,ij->i", Z32, Z32), 1.0, rtol=1e-5)


def test_odd_n_components_layout() -> None:
    """Odd D with cos_sin: D // 2 cos/sin pairs and one cos + phase feature, all weighted
    sqrt(2 / D), so that E[z(x).z(y)] = (2/D) (D//2 + 1/2) k = k."""
    X = np.random.default_rng(0).normal(size=(7, 3))
    rff = RandomFourierFeatures(n_components=5, random_state=0).fit(X)
    assert rff.n_pairs_ == 2
    assert rff.frequencies_.shape == (3, 3)
    assert rff.offsets_.shape == (1,)
    P = X @ rff.frequencies_
    expected = np.sqrt(2 / 5) * np.hstack(
        [np.cos(P[:, :2]), np.sin(P[:, :2]), np.cos(P[:, 2:] + rff.offsets_)]
    )
    np.testing.assert_allclose(rff.transform(X), expected, rtol=1e-12)
    single = RandomFourierFeatures(n_components=1, random_state=0).fit(X)
    assert single.transform(X).shape == (7, 1)
    assert single.n_pairs_ == 0
