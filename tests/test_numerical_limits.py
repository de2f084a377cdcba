"""Numerical limits: every output is finite or the call raises a clear error.

Regression tests for overflow at extreme magnitudes and parameters (silent NaN, leaked
OverflowError / scipy errors), for the memory checks before large allocations, and a
bounded sweep of every feature map over extreme inputs (the full sweep and the measured
limits are in docs/LIMITS.md).
"""

from __future__ import annotations

import inspect
import math
import re
import warnings
from numbers import Integral
from typing import ClassVar

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn
from sklearn.base import clone

import kernelmaps
import kernelmaps._memory as memory
from kernelmaps import feature_map_error, kernel_approximation_error
from kernelmaps._validation import StrictInterval
from kernelmaps.bandwidth import gamma_from_data
from kernelmaps.exceptions import InsufficientMemoryError, NonFiniteOutputError
from kernelmaps.feature_maps import BaseFeatureMap
from kernelmaps.feature_maps._base import _MAP_CLASSES
from kernelmaps.feature_maps._chi2 import _sech, additive_chi2_error_bound
from kernelmaps.kernels import (
    Cauchy,
    ExponentialDotProduct,
    Gaussian,
    Laplacian,
    Matern,
    Polynomial,
)
from kernelmaps.metrics import kernel_errors_from_features
from kernelmaps.sampling import select_landmarks

from ._instances import CHECK_PARAMS

MAP_INSTANCES = [
    pytest.param(cls, params, id=f"{cls.__name__}-{i}")
    for cls in _MAP_CLASSES
    for i, params in enumerate(CHECK_PARAMS[cls.__name__])
]

#: What a leaked internal error looks like, whatever its type.
_LEAKED = re.compile(r"operands could not be broadcast|must not contain infs or NaNs")


def _data(dtype=np.float64, n: int = 20, d: int = 4) -> np.ndarray:
    return np.random.default_rng(0).uniform(0.1, 1.0, size=(n, d)).astype(dtype)


def _dense(Z):
    return Z.toarray() if sp.issparse(Z) else np.asarray(Z)


def _finite_or_clear_error(call):
    """The result of ``call`` if finite; None if it raised a clear one-line ValueError."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # IKA's reduced basis, capped m
        warnings.simplefilter("error", RuntimeWarning)
        try:
            Z = call()
        except ValueError as error:  # NonFiniteOutputError, InvalidParameterError, ...
            message = str(error)
            assert "\n" not in message.strip(), message
            assert not _LEAKED.search(message), message
            return None
    Z = _dense(Z)
    assert np.all(np.isfinite(Z)), "non-finite output"
    return Z


# -- finding: silent NaN/inf at extreme inputs ------------------------------------------


def test_rff_float32_large_gamma_is_refused_naming_float64() -> None:
    """RandomFourierFeatures(gamma=1e80) on float32 input gave NaN features."""
    X = _data(np.float32)
    rff = kernelmaps.RandomFourierFeatures(gamma=1e80, random_state=0).fit(X)
    with pytest.raises(
        NonFiniteOutputError,
        match=r"frequency values .* exceed the float32 range.*Pass float64 input or use a smaller",
    ):
        rff.transform(X)
    # in float64 the frequencies fit, but the projections (about 1e41) are rounded far
    # beyond a period of the cosine: refused rather than rounding noise
    with pytest.raises(NonFiniteOutputError, match=r"would be rounding noise.*Rescale the input"):
        rff.transform(X.astype(np.float64))


@pytest.mark.parametrize("dtype,value", [(np.float64, 1e308), (np.float32, 3e38)])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_one_far_row_after_a_normal_fit_gives_a_clear_error(dtype, value, sign) -> None:
    """A single new row at +-1e308 after a normal fit gave NaN rows."""
    X = _data(dtype)
    rff = kernelmaps.RandomFourierFeatures(n_components=32, random_state=0).fit(X)
    Xt = X.copy()
    Xt[7] = sign * value
    with pytest.raises(NonFiniteOutputError) as info:
        rff.transform(Xt)
    message = str(info.value)
    assert message.startswith("RandomFourierFeatures.transform: the features of row 7 ")
    assert "Rescale the input" in message and "smaller gamma" in message
    assert "\n" not in message


def test_non_finite_rows_are_named_across_blocks() -> None:
    """The rows named are rows of the input, wherever the block boundaries fall."""
    X = _data(n=3000, d=8)
    X[[5, 2500]] = 1e308
    rff = kernelmaps.RandomFourierFeatures(n_components=64, random_state=0).fit(_data(d=8))
    # many blocks, run on threads
    with (
        sklearn.config_context(working_memory=1),
        pytest.raises(NonFiniteOutputError, match=r"features of row (5|2500) are"),
    ):
        rff.transform(X)


def test_tensor_sketch_float32_overflow_is_refused() -> None:
    """TensorSketch on float32 input at |x| = 1e19 gave inf/NaN (x^3 beyond float32)."""
    X = _data(np.float32) * np.float32(1e19)
    with pytest.raises(NonFiniteOutputError, match=r"TensorSketch.transform.*float64 input"):
        kernelmaps.TensorSketch(n_components=16, random_state=0).fit(X).transform(X)


class _Broken(BaseFeatureMap):
    """A map whose blocks hold NaN in its third row, or whose fitted weights are inf."""

    _parameter_constraints: ClassVar[dict] = {}

    def __init__(self, fit_inf: bool = False) -> None:
        self.fit_inf = fit_inf

    def _fit(self, X, rng):
        self.weights_ = np.array([np.inf if self.fit_inf else 1.0])
        self._n_features_out = X.shape[1]

    def _transform_block(self, X, out, constants):
        out[:] = X
        out[2:3] = np.nan


def test_every_block_and_fitted_array_is_checked() -> None:
    X = _data()
    with pytest.raises(NonFiniteOutputError, match=r"_Broken.transform: the features of row 2"):
        _Broken().fit(X).transform(X)
    with pytest.raises(NonFiniteOutputError, match=r"the features of row 2 of the block"):
        _Broken().fit(X)._transform_rows(X)  # a chunk of a Dask transform
    with pytest.raises(NonFiniteOutputError, match=r"_Broken.fit: the fitted weights_"):
        _Broken(fit_inf=True).fit(X)


@pytest.mark.parametrize(
    "cls", [kernelmaps.RandomFourierFeatures, kernelmaps.Fastfood, kernelmaps.TensorSketch]
)
def test_cheap_bounds_prove_ordinary_blocks_finite(cls) -> None:
    """Cheap maps skip the sum over their block when a bound from max|x| proves it finite
    (the check would cost 20% of an RFF transform); beyond the bound they check."""
    X = _data()
    est = cls(n_components=16, random_state=0).fit(X)
    constants = est._transform_constants(X)
    assert est._finite_by_bound(X, constants)
    assert not est._finite_by_bound(X * 1e308, constants)


@pytest.mark.parametrize("dtype,magnitude", [(np.float64, 1e200), (np.float32, 1e19)])
def test_nystroem_gaussian_at_huge_magnitudes_is_exact(dtype, magnitude) -> None:
    """Far apart points have kernel 0 and the features reproduce it (no NaN)."""
    X = _data(dtype) * dtype(magnitude)
    nys = kernelmaps.Nystroem(n_components=20, random_state=0).fit(X)
    Z = nys.transform(X).astype(np.float64)
    np.testing.assert_allclose(Z @ Z.T, np.eye(len(X)), atol=1e-6)
    # a single far row after a normal fit: k = 0 with every landmark, a zero row
    fitted = kernelmaps.Nystroem(n_components=20, random_state=0).fit(_data(dtype))
    Xt = _data(dtype)
    Xt[3] = magnitude
    Zt = fitted.transform(Xt)
    assert np.all(Zt[3] == 0.0) and np.all(np.isfinite(Zt))


def test_binning_rows_beyond_the_keys() -> None:
    """Bin coordinates beyond int64 were cast to garbage keys: all far points shared a bin."""
    X = _data()
    rbf = kernelmaps.RandomBinningFeatures(n_grids=10, random_state=0).fit(X)
    Xt = X.copy()
    Xt[[0, 1]] = [[1e300] * 4, [-1e300] * 4]
    Z = rbf.transform(Xt)
    assert Z[0].nnz == 0 and Z[1].nnz == 0  # beyond every training bin
    np.testing.assert_array_equal(Z[2:].toarray(), rbf.transform(X[2:]).toarray())
    with pytest.raises(NonFiniteOutputError, match=r"64-bit integer range.*Rescale"):
        kernelmaps.RandomBinningFeatures(n_grids=10, random_state=0).fit(X * 1e200)
    with pytest.raises(NonFiniteOutputError, match=r"smaller gamma"):
        kernelmaps.RandomBinningFeatures(gamma=1e300, n_grids=10, random_state=0).fit(X)


# -- exact kernels at extreme magnitudes ---------------------------------------------------


@pytest.mark.parametrize("scale", [2.0**500, 2.0**-500, 2.0**1000, 1e10])
def test_shift_invariant_kernels_are_scale_equivariant_at_any_magnitude(scale) -> None:
    """k_gamma(s x, s y) = k_{gamma s^2}(x, y): the scaled-difference distances used when
    the expansion |x|^2 + |y|^2 - 2 x.y would overflow (or lose every digit: 1e10 with
    gamma = 1, where it gave k(x, x) = 0) give the same matrix."""
    X, Y = _data(n=6), _data(n=5)[::-1]
    Y[0] = X[0]  # a pair at distance 0 (k = 1 exactly)
    pairs = [
        (Matern(nu=1.5, length_scale=0.8 * scale), Matern(nu=1.5, length_scale=0.8)),
        (Matern(nu=0.8, length_scale=0.8 * scale), Matern(nu=0.8, length_scale=0.8)),
        (Laplacian(gamma=0.7 / scale), Laplacian(gamma=0.7)),
    ]
    if 0.7 / scale / scale > 1e-300:
        pairs.append((Gaussian(gamma=0.7 / scale / scale), Gaussian(gamma=0.7)))
    for scaled, unit in pairs:
        K = scaled(X * scale, Y * scale)
        np.testing.assert_allclose(K, unit(X, Y), rtol=1e-10, atol=1e-300, err_msg=repr(unit))


@pytest.mark.parametrize("kernel", [Gaussian(gamma=0.5), Matern(nu=2.5), Cauchy(gamma=0.5)])
def test_shift_invariant_kernels_at_the_float_limit(kernel) -> None:
    X = np.array([[1e308, -1e308], [1e308, -1e308], [-1e308, 1e308], [0.0, 0.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        K = kernel(X)
    expected = np.eye(4)
    expected[0, 1] = expected[1, 0] = 1.0  # equal rows
    np.testing.assert_array_equal(K, expected)


@pytest.mark.parametrize(
    "kernel,X",
    [
        (Polynomial(degree=3, gamma=1.0), np.full((3, 2), 1e200)),
        (ExponentialDotProduct(gamma=1.0), np.full((3, 2), 30.0)),
        (kernelmaps.kernels.AdditiveChi2(), np.full((3, 4), 1e308)),
    ],
)
def test_kernel_values_beyond_float64_are_refused(kernel, X) -> None:
    with pytest.raises(NonFiniteOutputError, match=r"overflowed float64.*rescale the data"):
        kernel(X)
    with pytest.raises(NonFiniteOutputError):
        kernel.diag(X)


def test_chi2_terms_do_not_overflow() -> None:
    """2xy/(x+y) overflowed in x*y at 1e200 (inf), and (x-y)^2/(x+y) gave inf/inf."""
    x = np.array([[1e200, 1.7e308]])
    y = np.array([[1e200, 1e308]])
    K = kernelmaps.kernels.AdditiveChi2()(x[:, :1], y[:, :1])
    np.testing.assert_allclose(K, [[1e200]])
    chi2 = kernelmaps.kernels.ExponentiatedChi2(gamma=1e-300)(x[:, 1:], y[:, 1:])
    np.testing.assert_allclose(chi2, np.exp(-1e-300 * 0.7e308 * (0.7 / 2.7)), rtol=1e-12)


# -- finding: OverflowError for large gamma ----------------------------------------------


@pytest.mark.parametrize(
    "cls", [kernelmaps.RandomMaclaurinFeatures, kernelmaps.CompactRandomFeatures]
)
@pytest.mark.parametrize("kernel", ["polynomial", "exponential_dot_product"])
@pytest.mark.parametrize("gamma", [1e200, 1e300])
def test_maclaurin_large_gamma_is_a_clear_error(cls, kernel, gamma) -> None:
    """gamma >= 1e200 leaked OverflowError from gamma**n / math.exp."""
    with pytest.raises(NonFiniteOutputError, match=rf"{cls.__name__}.fit: .*smaller gamma"):
        cls(kernel, gamma=gamma, n_components=8, random_state=0).fit(_data())


# -- finding: parameters and memory --------------------------------------------------------


def _integer_parameters(cls) -> list[str]:
    return [
        name
        for name, constraints in cls._parameter_constraints.items()
        for c in constraints
        if isinstance(c, StrictInterval) and c.type is Integral
    ]


@pytest.mark.parametrize("cls", _MAP_CLASSES, ids=lambda c: c.__name__)
def test_booleans_are_not_integers(cls) -> None:
    """n_components=True was accepted as 1 by some maps and refused by others."""
    names = _integer_parameters(cls)
    assert names or cls is kernelmaps.AdditiveChi2Sampler
    for name in names:
        if name not in inspect.signature(cls).parameters:
            continue
        with pytest.raises(ValueError, match=rf"The '{name}' parameter .* Got True instead"):
            cls(**{name: True}).fit(_data())
    for constraints in cls._parameter_constraints.values():
        for c in constraints:
            assert not (hasattr(c, "type") and type(c).__name__ == "Interval"), cls


@pytest.fixture
def little_memory(monkeypatch):
    monkeypatch.setattr(memory, "available_memory", lambda: 2**30)


@pytest.mark.parametrize(
    "estimator,fix",
    [
        (kernelmaps.RandomFourierFeatures(n_components=10**9), "lower n_components"),
        (kernelmaps.Fastfood(n_components=10**9), "lower n_components"),
        (kernelmaps.StructuredOrthogonalFeatures(n_components=10**9), "lower n_components"),
        (kernelmaps.RandomBinningFeatures(n_grids=10**9), "lower n_grids"),
        (kernelmaps.RandomMaclaurinFeatures(n_components=10**9), "lower n_components"),
        (kernelmaps.RandomMaclaurinFeatures(n_components=100, p=1 + 1e-9), "larger p"),
        (kernelmaps.CompactRandomFeatures(n_components=10**5), "lower n_components"),
        (kernelmaps.SkewedChi2Sampler(n_components=10**9), "lower n_components"),
        (kernelmaps.IKA(n_components=4, n_basis=10**9, basis="fourier"), "lower n_basis"),
        (kernelmaps.RandomFourierFeatures(n_components=10**12), "lower n_components"),
    ],
    ids=repr,
)
def test_memory_is_checked_before_fitting(little_memory, estimator, fix) -> None:
    with pytest.raises(InsufficientMemoryError, match=rf"needs .* but 1.0 GiB .*; .*{fix}"):
        clone(estimator).fit(_data())


def test_memory_is_checked_for_landmark_matrices_and_outputs(little_memory) -> None:
    X = _data(n=20_000, d=2)
    with pytest.raises(InsufficientMemoryError, match=r"20000 x 20000 kernel matrix"):
        kernelmaps.Nystroem(n_components=20_000).fit(X)
    ts = kernelmaps.TensorSketch(n_components=10**7, random_state=0).fit(X)
    with pytest.raises(InsufficientMemoryError, match=r"output of transform for 20000 rows"):
        ts.transform(X)
    additive = kernelmaps.AdditiveChi2Sampler(sample_steps=10**7, sample_interval=1e-7)
    with pytest.raises(InsufficientMemoryError, match=r"output of transform"):
        additive.fit(X[:10]).transform(sp.csr_matrix(X[:10]))


def test_no_memory_check_when_memory_is_plenty(monkeypatch) -> None:
    monkeypatch.setattr(memory, "available_memory", lambda: 2**50)
    kernelmaps.RandomFourierFeatures(n_components=10**5).fit(_data())


# -- finding: AdditiveChi2Sampler's cost grows with its parameters ------------------------


def _gap(n: int, L: float, grid: np.ndarray) -> np.ndarray:
    g = np.full_like(grid, L)
    for j in range(1, n):
        g += 2.0 * L * _sech(np.pi * j * L) * np.cos(j * L * grid)
    return np.abs(g - _sech(grid / 2.0))


@pytest.mark.parametrize(
    "n,L,ratio",
    [
        (2, 0.5, math.inf),
        (3, 0.4, math.log(16)),
        (20, 1e-4, math.inf),  # took 40 s
        (20, 1e-10, math.inf),  # asked for 457 TiB
        (1000, 0.01, 30.0),  # too many terms for the grid: the analytic bound
        (50, 0.05, math.inf),
        (1, 5.0, math.inf),
    ],
)
def test_additive_error_bound_is_a_bound_at_bounded_cost(n, L, ratio) -> None:
    bound = additive_chi2_error_bound(n, L, ratio)
    assert math.isfinite(bound)
    # checked against the gap itself on a fine grid of [0, min(ratio, 80)] and at points
    # of the aliasing peaks 2 pi k / L beyond
    end = min(ratio, 80.0)
    grid = np.concatenate([np.linspace(0.0, end, 20_001), 2 * np.pi / L * np.arange(1, 4)])
    grid = grid[grid <= ratio]
    assert _gap(n, L, grid).max() <= bound + 1e-12


def test_additive_sampling_beyond_the_spectrum_is_refused() -> None:
    X = _data()
    with pytest.raises(ValueError, match=r"sample_steps=1000 with sample_interval=0.5 .*<= 25"):
        kernelmaps.AdditiveChi2Sampler(sample_steps=1000, sample_interval=0.5).fit(X)
    Z = kernelmaps.AdditiveChi2Sampler(sample_steps=20, sample_interval=1e-4).fit_transform(X)
    assert Z.shape == (20, 4 * 39) and np.all(np.isfinite(Z))


# -- finding: unclear errors from the Python API ---------------------------------------------


@pytest.mark.parametrize("fmt", ["coo", "bsr", "csc", "lil", "dok", "dia"])
@pytest.mark.parametrize("container", [sp.csr_matrix, sp.csr_array])
def test_feature_map_error_takes_every_sparse_format(fmt, container) -> None:
    """COO ('coo_matrix' object is not subscriptable) and BSR (NotImplementedError) failed."""
    X = _data()
    rff = kernelmaps.RandomFourierFeatures(n_components=64, random_state=0).fit(X)
    Xs = container(X).asformat(fmt)
    for norm in ("fro", "max", "spectral"):
        assert feature_map_error(rff, Xs, norm=norm) == pytest.approx(
            feature_map_error(rff, X, norm=norm), rel=1e-10
        )
    Ys = container(X[:5]).asformat(fmt)
    assert feature_map_error(rff, Xs, Ys, block_rows=7) == pytest.approx(
        feature_map_error(rff, X, X[:5]), rel=1e-10
    )


def test_user_kernel_of_the_wrong_shape_is_named() -> None:
    """A user kernel returning the wrong shape gave a numpy broadcast error."""
    X = _data()
    rff = kernelmaps.RandomFourierFeatures(n_components=16, random_state=0).fit(X)
    with pytest.raises(ValueError, match=r"shape \(20, 3\) .* the 20 x 20 kernel matrix"):
        feature_map_error(rff, X, kernel=lambda A, B: np.ones((len(A), 3)))
    with pytest.raises(ValueError, match=r"shape \(3,\) .* the 1 x 1 kernel matrix"):
        select_landmarks(
            X, 5, "leverage", kernel=lambda A, B: np.ones(3), rng=np.random.default_rng(0)
        )
    with pytest.raises(ValueError, match=r"X has 20 rows but Z_x has 5"):
        kernel_errors_from_features(Gaussian(1.0), X, rff.transform(X[:5]))


def test_error_metrics_at_the_float_limit() -> None:
    K = np.full((3, 3), 1e308)
    assert kernel_approximation_error(K, -K) == pytest.approx(2.0)
    assert kernel_approximation_error(K, -K, norm="spectral") == pytest.approx(2.0)
    with pytest.raises(NonFiniteOutputError, match=r"not finite"):
        kernel_approximation_error(K, -K, relative=False)
    Z = np.full((3, 2), 1e150)  # Z Z^T = 2e300, finite
    errors = kernel_errors_from_features(
        lambda A, B: np.full((len(A), len(B)), 1e300), np.ones((3, 1)), Z, norms=("fro", "max")
    )
    assert errors == {"fro": pytest.approx(1.0), "max": pytest.approx(1.0)}


def test_leverage_landmarks_at_extreme_inputs() -> None:
    """scipy's "array must not contain infs or NaNs" leaked from leverage sampling."""
    X = np.random.default_rng(0).normal(size=(200, 3)) * 1e200
    rng = np.random.default_rng(0)
    with pytest.raises(NonFiniteOutputError, match=r"overflowed .*rescale the data"):
        select_landmarks(X, 10, "leverage", kernel=Polynomial(degree=2, gamma=1.0), rng=rng)

    def kernel(A, B):  # a user kernel with no diag, overflowing off the diagonal
        return (np.asarray(A) @ np.asarray(B).T) ** 2 / 1e300

    with pytest.raises(NonFiniteOutputError, match=r"landmarks='leverage'.*rescale"):
        select_landmarks(X, 10, "leverage", kernel=kernel, rng=rng)
    L, _ = select_landmarks(X, 10, "leverage", kernel=Gaussian(gamma=1.0), rng=rng)
    assert L.shape == (10, 3) and np.all(np.isfinite(L))


def test_kmeans_landmarks_are_scale_equivariant() -> None:
    """k-means on data at 1e200 gave NaN centres (squared distances overflowed)."""
    X = np.random.default_rng(1).normal(size=(300, 3))
    scale = 2.0**700
    a = kernelmaps.Nystroem(n_components=8, landmarks="kmeans", gamma=1.0, random_state=0)
    b = clone(a).fit(X * scale)
    np.testing.assert_allclose(b.components_, a.fit(X).components_ * scale, rtol=1e-12)


def test_bandwidth_rules_are_scale_equivariant_or_refuse() -> None:
    X = np.random.default_rng(0).normal(size=(50, 3))
    for rule in ("mean_distance", "median", "percentile"):
        assert gamma_from_data(X * 1e150, rule) == pytest.approx(
            gamma_from_data(X, rule) * 1e-300, rel=1e-12
        )
        with pytest.raises(NonFiniteOutputError, match=r"outside \[.*or give gamma explicitly"):
            gamma_from_data(X * 1e300, rule)
    with pytest.raises(ValueError, match=r"max_samples must be"):
        gamma_from_data(X, "median", max_samples=True)


# -- the sweep, bounded ------------------------------------------------------------------


@pytest.mark.parametrize(("cls", "params"), MAP_INSTANCES)
@pytest.mark.parametrize(
    "dtype,magnitude",
    [(np.float64, 1e-300), (np.float64, 1e154), (np.float64, 1e308), (np.float32, 1e19)],
)
def test_every_map_at_extreme_magnitudes(cls, params, dtype, magnitude) -> None:
    """All rows at the magnitude, and one far row after a normal fit (both signs)."""
    X = _data(dtype)
    huge = (X.astype(np.float64) * magnitude).astype(dtype)
    _finite_or_clear_error(lambda: cls(**params).fit(huge).transform(huge))
    fitted = cls(**params).fit(X)
    for sign in (1.0, -1.0):
        Xt = X.copy()
        Xt[0] = sign * magnitude
        _finite_or_clear_error(lambda Xt=Xt: fitted.transform(Xt))
        _finite_or_clear_error(lambda Xt=Xt: fitted.transform(sp.csr_matrix(Xt)))


@pytest.mark.parametrize(("cls", "params"), MAP_INSTANCES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("gamma", [1e-300, 1e30, 1e300])
def test_every_map_at_extreme_gamma(cls, params, dtype, gamma) -> None:
    if "gamma" not in inspect.signature(cls).parameters:
        pytest.skip("no gamma")
    X = _data(dtype)
    _finite_or_clear_error(lambda: cls(**{**params, "gamma": gamma}).fit(X).transform(X))


def test_projections_beyond_the_cosine_resolution_are_refused() -> None:
    """FeatureRidge().fit on rows near 1e154 (default gamma 1 / n_features) gave features
    of rounding noise: predictions changed by up to 1 with the rows predicted together."""
    X = _data(n=300, d=5) * 1e154
    y = np.arange(300.0)
    with pytest.raises(NonFiniteOutputError, match=r"would be rounding noise.*Rescale the input"):
        kernelmaps.FeatureRidge().fit(X, y)
    # at an ordinary scale every row is predicted alone as in the batch, to rounding
    Xs = X / 1e154
    model = kernelmaps.FeatureRidge(random_state=0).fit(Xs, y)
    batch = model.predict(Xs)
    alone = np.array([model.predict(Xs[i : i + 1])[0] for i in range(20)])
    # a feature sqrt(2/D) cos(w . x + b) is rounded by at most about (d + 2) eps (|w . x| +
    # 2 pi) sqrt(2/D) in either order of the sums; a prediction sums D of them with coef_,
    # plus the rounding of that sum (D eps |coef|_1 sqrt(2/D))
    eps, rff = np.finfo(float).eps, model.feature_map_
    reach = np.max(np.abs(Xs)) * np.max(np.abs(rff.frequencies_).sum(axis=0)) + 2 * np.pi
    per_feature = (Xs.shape[1] + 2) * eps * reach * np.sqrt(2 / rff.n_components)
    bound = np.abs(model.coef_).sum() * (per_feature + rff.n_components * eps)
    np.testing.assert_allclose(alone, batch[:20], rtol=0, atol=bound)
