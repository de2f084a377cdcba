"""Quasi-Monte Carlo random Fourier features: the random digital shift, the net property,
the rotation onto the principal axes, and planted bugs that their unbiasedness check
(in ``tests/test_contract.py``) catches.

Every tolerance comes from a concentration bound at failure probability ``DELTA``
(``tests/_bounds.py``); each statistical test also shows that a planted bug fails it.
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.stats import qmc

import kernelmaps.feature_maps._fourier as fourier_module
import kernelmaps.sampling._qmc as qmc_module
from kernelmaps import RandomFourierFeatures
from kernelmaps.kernels import Gaussian, Laplacian, Matern
from kernelmaps.sampling import (
    principal_axes,
    resolve_scramble,
    rotation_sample,
    sobol_balance_message,
    uniform_points,
)

from ._bounds import DELTA, empirical_bernstein_radius
from ._points import IU, N_PAIRS, POINTS

KERNELS = {"rbf": Gaussian(gamma=0.5), "matern1.5": Matern(nu=1.5, gamma=0.2)}

#: Independent randomizations per unbiasedness test; each estimate is in [-1, 1].
REPLICATES = 1500


def _pair_values(Z: np.ndarray) -> np.ndarray:
    return (Z @ Z.T)[IU]


def _estimates(kernel, seed: int, **params) -> np.ndarray:
    """Pair estimates of ``REPLICATES`` maps with independent (spawned) seeds."""
    children = np.random.SeedSequence(seed).spawn(REPLICATES)
    return np.array(
        [
            _pair_values(
                RandomFourierFeatures(kernel, n_components=16, random_state=c, **params)
                .fit(POINTS)
                .transform(POINTS)
            )
            for c in children
        ]
    )


# -- the unbiasedness check has teeth ---------------------------------------------------
#
# The unbiasedness of every construction is in the shared contract
# (``tests/test_contract.py``): the mean of R independent estimates in [-1, 1] is within
# the empirical Bernstein radius eps of k, for all pairs at once, with probability
# 1 - DELTA.  The planted bugs below, with R = REPLICATES maps of D = 16, would fail it.


@pytest.mark.statistical
@pytest.mark.slow
def test_unbiasedness_check_catches_a_rotation_that_is_not_orthogonal(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A planted bug: the principal axes stretched by ``S = diag(1, 1.5, 0.5)``.

    Then ``w = V S m`` with ``m ~ N(0, 2 gamma I)``, so the map estimates exactly the kernel
    ``exp(-gamma |S V^T (x - y)|^2)``, whose distance to ``k`` exceeds ``2 eps`` on some
    pair: the mean of the estimates is then more than ``eps`` away from ``k`` (with
    probability ``1 - DELTA``), and the contract's unbiasedness test would fail.
    """
    kernel = KERNELS["rbf"]
    stretch = np.array([1.0, 1.5, 0.5])
    V = principal_axes(POINTS)
    monkeypatch.setattr(fourier_module, "principal_axes", lambda X: principal_axes(X) * stretch)
    est = _estimates(kernel, seed, sampler="sobol")
    eps = empirical_bernstein_radius(est, 2.0, n_events=N_PAIRS)
    diffs = (POINTS[IU[0]] - POINTS[IU[1]]) @ V * stretch
    biased_k = np.exp(-kernel.gamma * np.sum(diffs**2, axis=1))
    exact = kernel(POINTS)[IU]
    assert np.max(np.abs(biased_k - exact)) > 2 * eps
    assert np.max(np.abs(est.mean(axis=0) - exact)) > eps


def test_unbiasedness_check_catches_a_shift_that_is_not_random(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A planted bug: the digital shift by zero (the unshifted net, origin included, clipped
    away from 0).  The map is then deterministic: every replicate is the same estimate, the
    empirical Bernstein radius is its variance-free term, and the estimate is far more
    than that from ``k``, so the contract's unbiasedness test would fail."""
    kernel = KERNELS["rbf"]
    monkeypatch.setattr(qmc_module, "digital_shift", lambda points, shift: points)
    Z = RandomFourierFeatures(kernel, n_components=16, sampler="sobol", random_state=0)
    est = _pair_values(Z.fit(POINTS).transform(POINTS))
    # with R replicates of one constant value the empirical variance is 0 and the radius
    # is 7 * 2 * log(4 * 15 / DELTA) / (3 (R - 1)): far below the bias
    eps = 7.0 * 2.0 * math.log(4.0 * N_PAIRS / DELTA) / (3.0 * (REPLICATES - 1))
    assert np.max(np.abs(est - kernel(POINTS)[IU])) > 2 * eps


# -- the net property of the shifted points ----------------------------------------------


def _cell_counts(U: np.ndarray, ks: tuple[int, ...]) -> list[int]:
    """Sorted numbers of points in the occupied elementary intervals of shape 2^-ks."""
    cells = np.floor(U * np.exp2(ks)).astype(np.int64)
    _, counts = np.unique(cells, axis=0, return_counts=True)
    return sorted(counts.tolist())


def _compositions(m: int, d: int):
    return (ks for ks in itertools.product(range(m + 1), repeat=d) if sum(ks) == m)


@pytest.mark.parametrize("m", [1, 2, 3, 4, 5, 6])
def test_shifted_sobol_points_are_a_net(m: int, seed: int) -> None:
    """d = 2: the first 2^m Sobol' points are a (0, m, 2)-net; so are the shifted ones:
    each elementary interval of volume 2^-m holds exactly one point."""
    U = uniform_points(2**m, 2, "sobol", scramble="shift", rng=np.random.default_rng(seed))
    for ks in _compositions(m, 2):
        assert _cell_counts(U, ks) == [1] * 2**m, ks


@pytest.mark.parametrize("d", [3, 5])
def test_shift_keeps_the_nets_balance_in_more_dimensions(d: int, seed: int) -> None:
    """Beyond two dimensions the Joe-Kuo points are (t, m, d)-nets with t > 0; the shift
    permutes the elementary intervals, so every count of points per interval is kept."""
    m = 5
    net = qmc.Sobol(d, scramble=False).random(2**m)
    U = uniform_points(2**m, d, "sobol", scramble="shift", rng=np.random.default_rng(seed))
    for ks in _compositions(m, d):
        assert _cell_counts(U, ks) == _cell_counts(net, ks), ks


def test_net_check_catches_a_sequence_without_its_origin() -> None:
    """Planted bug: the unscrambled points with the origin skipped (scramble=False) are
    not a net: some elementary interval holds two points."""
    U = uniform_points(16, 2, "sobol", scramble=False)
    assert any(_cell_counts(U, ks) != [1] * 16 for ks in _compositions(4, 2))


def test_shift_keeps_the_origin_and_is_one_vector() -> None:
    """The first point is the shift itself (origin XOR s); the differences of the shifted
    points' binary digits are those of the unshifted points (one shift for all)."""
    rng = np.random.default_rng(3)
    U = uniform_points(8, 4, "sobol", scramble="shift", rng=rng)
    s = np.random.default_rng(3).random(4)
    np.testing.assert_allclose(U[0], s, rtol=0, atol=2.0**-52)
    net = qmc.Sobol(4, scramble=False).random(8)
    a = np.floor(U * 2**30).astype(np.uint64)
    b = np.round(net * 2**30).astype(np.uint64)
    assert np.all((a ^ b) == (a[0] ^ b[0]))


def test_scramble_options() -> None:
    assert resolve_scramble("auto", "sobol") == "shift"
    assert resolve_scramble("auto", "halton") is True
    assert resolve_scramble(np.bool_(False), "sobol") is False
    with pytest.raises(ValueError, match="scramble='shift' is a random digital shift"):
        resolve_scramble("shift", "halton")
    with pytest.raises(TypeError, match="scramble must be True, False, 'auto' or 'shift'"):
        resolve_scramble("owen", "sobol")
    # True is scipy's scrambling, as before: the same points as scipy's engine
    U = uniform_points(8, 3, "sobol", scramble=True, rng=np.random.default_rng(0))
    want = qmc.Sobol(3, scramble=True, rng=np.random.default_rng(0)).random(8)
    np.testing.assert_array_equal(U, want)


def test_balance_warning_names_the_next_power_of_two() -> None:
    assert sobol_balance_message(1) is None and sobol_balance_message(32) is None
    with pytest.warns(UserWarning, match=r"use points=64 \(the next power of two\) or 32") as rec:
        uniform_points(50, 2, "sobol", rng=np.random.default_rng(0))
    assert len(rec) == 1 and rec[0].filename == __file__  # one warning, at the caller
    X = np.random.default_rng(0).random((20, 3))
    with pytest.warns(UserWarning, match=r"n_components=100\).*use n_components=128") as rec:
        RandomFourierFeatures(n_components=100, sampler="sobol", random_state=0).fit(X)
    assert len(rec) == 1  # one warning, not scipy's as well
    assert rec[0].filename == __file__  # at the user's call of fit
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        RandomFourierFeatures(n_components=128, sampler="sobol", random_state=0).fit(X)
        RandomFourierFeatures(n_components=100, sampler="halton", random_state=0).fit(X)


# -- the rotation ------------------------------------------------------------------------


def test_principal_axes_are_orthogonal_and_sorted_by_variance(seed: int) -> None:
    rng = np.random.default_rng(seed)
    A = np.linalg.qr(rng.standard_normal((6, 6)))[0]
    X = (rng.standard_normal((400, 6)) * [3.0, 0.1, 2.0, 1.0, 0.5, 0.0]) @ A.T + 5.0
    V = principal_axes(X)
    np.testing.assert_allclose(V.T @ V, np.eye(6), atol=1e-12)
    variances = np.var(X @ V, axis=0)
    assert np.all(np.diff(variances) <= 1e-12 * variances[0])
    # the variances along V are the eigenvalues of the covariance
    eig = np.sort(np.linalg.eigvalsh(np.cov(X.T, bias=True)))[::-1]
    np.testing.assert_allclose(variances, eig, rtol=1e-9, atol=1e-12)
    # sparse, float32 and scaled input give the same axes
    np.testing.assert_allclose(principal_axes(sp.csr_matrix(X)), V, atol=1e-9)
    np.testing.assert_allclose(principal_axes(X.astype(np.float32)), V, atol=1e-3)
    np.testing.assert_allclose(principal_axes(X * 1e300), V, atol=1e-9)


def test_principal_axes_of_few_rows_are_a_full_basis() -> None:
    X = np.random.default_rng(0).random((3, 10))
    V = principal_axes(X)
    assert V.shape == (10, 10)
    np.testing.assert_allclose(V.T @ V, np.eye(10), atol=1e-12)
    np.testing.assert_allclose(principal_axes(X[:1]).T @ principal_axes(X[:1]), np.eye(10))


def test_rotation_sample() -> None:
    rng = np.random.default_rng(0)
    assert rotation_sample(10, rng, max_rows=10) is None
    rows = rotation_sample(100, rng, max_rows=10)
    assert rows.shape == (10,) and len(set(rows.tolist())) == 10 and rows.max() < 100


def test_rotated_frequencies_are_the_unrotated_ones_in_the_principal_axes() -> None:
    for kernel in ("rbf", "matern"):
        a = RandomFourierFeatures(kernel, n_components=32, sampler="sobol", random_state=4)
        b = RandomFourierFeatures(
            kernel, n_components=32, sampler="sobol", rotate=False, random_state=4
        )
        a.fit(POINTS)
        b.fit(POINTS)
        assert a.rotated_ and not b.rotated_
        np.testing.assert_allclose(a.frequencies_, principal_axes(POINTS) @ b.frequencies_)


def test_rotation_defaults_and_refusals() -> None:
    X = POINTS
    fit = lambda **kw: RandomFourierFeatures(n_components=16, random_state=0, **kw).fit(X)  # noqa: E731
    assert fit(sampler="sobol").rotated_ and fit(sampler="halton").rotated_
    assert not fit(sampler="mc").rotated_ and not fit(sampler="orthogonal").rotated_
    assert not fit(sampler="sobol", kernel=Laplacian(gamma=0.5)).rotated_
    assert fit(sampler="mc", rotate=True).rotated_
    with pytest.raises(ValueError, match="rotate=True needs a kernel whose spectral measure"):
        fit(sampler="sobol", kernel="cauchy", rotate=True)
    with pytest.raises(ValueError, match="scramble='shift'"):
        fit(sampler="halton", scramble="shift")
    # float32 stays float32
    Z = RandomFourierFeatures(n_components=16, sampler="sobol", random_state=0).fit_transform(
        X.astype(np.float32)
    )
    assert Z.dtype == np.float32 and np.all(np.isfinite(Z))


@pytest.mark.parametrize("n_rows", [60, 10_050])
def test_rotation_on_a_dask_array_equals_the_numpy_fit(n_rows: int) -> None:
    """The rotation's rows (all of them up to 10 000, a sample above) are read from the
    Dask array: the frequencies equal the numpy fit's bit for bit, unknown chunk sizes
    included."""
    da = pytest.importorskip("dask.array")
    Xn = np.random.default_rng(3).random((n_rows, 4))
    X = da.from_array(Xn, chunks=(n_rows // 4 + 1, 4))
    for sampler in ("sobol", "halton"):
        a = RandomFourierFeatures(n_components=32, sampler=sampler, random_state=0).fit(X)
        b = RandomFourierFeatures(n_components=32, sampler=sampler, random_state=0).fit(Xn)
        assert a.rotated_ and b.rotated_
        np.testing.assert_array_equal(a.frequencies_, b.frequencies_)
    unknown = X[X[:, 0] >= 0]  # every row, chunk sizes unknown
    c = RandomFourierFeatures(n_components=32, sampler="halton", random_state=0).fit(unknown)
    np.testing.assert_array_equal(c.frequencies_, b.frequencies_)
    with pytest.warns(UserWarning, match="use n_components=32") as rec:
        RandomFourierFeatures(n_components=20, sampler="sobol", random_state=0).fit(X)
    assert len(rec) == 1 and rec[0].filename == __file__  # at the user's call of fit


def test_a_dask_fit_without_rotation_reads_nothing() -> None:
    da = pytest.importorskip("dask.array")

    def unreadable(block: np.ndarray) -> np.ndarray:
        raise AssertionError("the fit read the data")

    X = da.from_array(POINTS, chunks=3).map_blocks(unreadable, dtype=POINTS.dtype)
    for params in (
        {"sampler": "sobol", "rotate": False},
        {"sampler": "sobol", "kernel": "laplacian"},  # not rotation-invariant: no rotation
        {"sampler": "mc"},
    ):
        rff = RandomFourierFeatures(n_components=16, random_state=0, **params).fit(X)
        assert not rff.rotated_
