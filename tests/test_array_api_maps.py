"""The feature maps on the arrays of other libraries: Fastfood, SORF, the random Maclaurin
maps, TensorSketch and the chi-squared samplers equal their NumPy path to rounding.

Each test fits and transforms on every place of ``tests/_array_api.py`` (array-api-strict
on its second device, PyTorch on the CPU; float64 and float32) and compares with the NumPy
path on the same data: the random quantities are drawn on the host with the same
generator, so the two differ by rounding only.  The tolerances are ``c eps`` times the
magnitude of what is compared, the count ``c`` stated next to each.  The value checks of
the NumPy path (non-negative input, the Maclaurin norm check, float32 casts, non-finite
features) raise the same errors there; RandomBinningFeatures refuses such arrays.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn

import kernelmaps
from kernelmaps import (
    AdditiveChi2Sampler,
    CompactRandomFeatures,
    Fastfood,
    RandomBinningFeatures,
    RandomMaclaurinFeatures,
    SkewedChi2Sampler,
    StructuredOrthogonalFeatures,
    TensorSketch,
    move_to,
)
from kernelmaps._array_extras import fft_pair
from kernelmaps.exceptions import NonFiniteOutputError
from kernelmaps.feature_maps import _sketch
from kernelmaps.feature_maps._hadamard import fwht, fwht_numpy
from kernelmaps.kernels import MaclaurinKernel
from tests._array_api import (
    HAS_TORCH,
    PLACES,
    Place,
    assert_at,
    assert_close,
    assert_fitted_at,
    assert_refused_as_on_numpy,
    assert_transform_refused_as_on_numpy,
    dispatch,
    host,
)


def _data(n: int = 12, d: int = 5, *, positive: bool = False) -> np.ndarray:
    X = np.random.default_rng(0).normal(size=(n, d)) / 2.0
    if positive:
        X = np.abs(X)
        X[0, 1] = 0.0  # a zero entry: features 0, no log(0)
    return X


def _both(
    cls: type, params: dict[str, Any], X: np.ndarray, place: Place
) -> tuple[Any, np.ndarray, Any, Any]:
    """The map fitted on NumPy and its features (float64), the map fitted on ``place``
    and its features, checked to live there in the dtype of ``X``."""
    numpy_map = cls(**params).fit(X)
    expected = numpy_map.transform(X)
    with dispatch():
        fitted = cls(**params).fit(place.asarray(X))
        Z = fitted.transform(place.asarray(X))
    assert_at(Z, place)
    assert_fitted_at(fitted, place)
    assert host(Z).dtype == np.dtype(place.dtype)
    return numpy_map, np.asarray(expected, dtype=np.float64), fitted, Z


# -- Walsh-Hadamard transform, Fastfood and SORF ---------------------------------------------


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("n", [1, 2, 8, 64])
def test_fwht_of_any_library_is_the_numpy_butterflies(place: Place, n: int) -> None:
    a = np.random.default_rng(1).normal(size=(3, n)).astype(place.dtype)
    result = fwht(place.asarray(a), place.xp)
    assert_at(result, place)
    # the same additions in the same order as fwht_numpy: equal to the last bit
    np.testing.assert_array_equal(host(result), fwht_numpy(a.copy()))


STRUCTURED = [
    pytest.param(Fastfood, {}, id="fastfood"),
    pytest.param(Fastfood, {"variant": "cos_phase", "kernel": "matern"}, id="fastfood-phase"),
    pytest.param(StructuredOrthogonalFeatures, {}, id="sorf"),
    pytest.param(StructuredOrthogonalFeatures, {"norms": "fixed"}, id="sorf-fixed"),
    pytest.param(
        StructuredOrthogonalFeatures, {"variant": "cos_phase", "kernel": "matern"}, id="sorf-phase"
    ),
]


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize(("cls", "extra"), STRUCTURED)
@pytest.mark.parametrize("n_components", [16, 21])
@pytest.mark.parametrize("d", [4, 5])
def test_structured_maps_follow_x(
    place: Place, cls: type, extra: dict[str, Any], n_components: int, d: int
) -> None:
    X = _data(d=d).astype(place.dtype)
    params = {"gamma": 0.3, "n_components": n_components, "random_state": 0, **extra}
    numpy_map, expected, _, Z = _both(cls, params, X, place)
    # Every intermediate of the product is at most gain * max|x| (_projection_gain); each
    # projection goes through 2 (Fastfood) or 3 (SORF) transforms of log2 d rounded
    # additions, 3 or 4 products (signs, Gaussians, scales) and the phase: c = k log2 d + 5
    # rounding errors of that size, then the cosine's own (2 eps), all times sqrt(2/D).
    transforms = 2 if cls is Fastfood else 3
    c = transforms * math.log2(numpy_map.padded_dim_) + 5
    reach = numpy_map._projection_gain(np) * float(np.max(np.abs(X)))
    scale = math.sqrt(2.0 / n_components)
    assert_close(Z, expected, scale * place.eps * (c * reach + 2.0), "features")


FLOAT32_PLACES = [param for param in PLACES if param.values[0].dtype == "float32"]


@pytest.mark.parametrize("place", FLOAT32_PLACES)
@pytest.mark.parametrize("cls", [Fastfood, StructuredOrthogonalFeatures])
def test_structured_float32_overflowing_norms_are_refused_as_on_numpy(
    place: Place, cls: type
) -> None:
    X = _data(d=4).astype(np.float32)
    params = {"gamma": 1e80, "n_components": 8, "random_state": 0}
    assert_transform_refused_as_on_numpy(
        lambda: cls(**params), X, place, NonFiniteOutputError, "frequency norm values up to"
    )


# -- random Maclaurin and compact random features -------------------------------------------


MACLAURIN = [
    pytest.param({"degree": 3, "gamma": 0.5, "coef0": 1.0}, id="poly3"),
    pytest.param({"kernel": "homogeneous_polynomial", "degree": 2}, id="homogeneous2"),
    pytest.param({"degree": 1, "gamma": 1.0, "coef0": 0.5}, id="poly1"),
    pytest.param({"kernel": "exponential_dot_product", "gamma": 0.5, "p": 3.0}, id="exp-p3"),
    pytest.param({"degree": 2, "gamma": 0.5, "h01": True}, id="poly2-h01"),
    pytest.param({"kernel": "exponential_dot_product", "h01": True, "p": 1.5}, id="exp-h01"),
]


def _maclaurin_reach(fitted: Any, X: np.ndarray) -> np.ndarray:
    """Per up-projection column, a bound on the feature and the terms of its products:
    ``sqrt(a_0)``, ``sqrt(a_1) max|x|``, then ``weight max|x|_1^N`` (``|w . x| <= |x|_1``)."""
    norm1 = float(np.max(np.sum(np.abs(X), axis=1)))
    exact = []
    if fitted.exact_constant_ is not None:
        exact.append(fitted.exact_constant_)
    if fitted.exact_linear_ is not None:
        exact += [fitted.exact_linear_ * float(np.max(np.abs(X)))] * X.shape[1]
    weights = fitted.weights_ / math.sqrt(max(fitted.n_random_, 1))
    random = np.abs(weights) * norm1 ** fitted.orders_.astype(np.float64)
    return np.concatenate([np.asarray(exact, dtype=np.float64), random])


def _maclaurin_rounding(fitted: Any, d: int) -> float:
    """``c``: each projection ``w . x`` rounds ``d`` additions, the product of ``N`` of
    them ``N`` more roundings, the weight and its cast 2: ``N (d + 1) + 2``."""
    return float(int(np.max(fitted.orders_, initial=0)) * (d + 1) + 2)


def _assert_rademacher_at(fitted: Any, place: Place) -> None:
    for _, cols, W in fitted.rademacher_:
        assert_at(cols, place)
        assert_at(W, place)


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("params", MACLAURIN)
@pytest.mark.parametrize("d", [3, 4])
def test_random_maclaurin_features_follow_x(place: Place, params: dict[str, Any], d: int) -> None:
    X = _data(d=d).astype(place.dtype)
    params = {"n_components": 24, "random_state": 0, **params}
    numpy_map, expected, fitted, Z = _both(RandomMaclaurinFeatures, params, X, place)
    _assert_rademacher_at(fitted, place)
    reach = float(np.max(_maclaurin_reach(numpy_map, X)))
    c = _maclaurin_rounding(numpy_map, d)
    assert_close(Z, expected, c * place.eps * reach, "features")


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("params", MACLAURIN[:4])
@pytest.mark.parametrize("projection", ["gaussian", "rademacher", "sparse"])
def test_compact_random_features_follow_x(
    place: Place, params: dict[str, Any], projection: str
) -> None:
    X = _data(d=4).astype(place.dtype)
    params = {"n_components": 9, "up_factor": 3, "projection": projection, **params}
    numpy_map, expected, fitted, Z = _both(
        CompactRandomFeatures, {**params, "random_state": 0}, X, place
    )
    _assert_rademacher_at(fitted, place)
    R = numpy_map.projection_
    R = np.abs(R.toarray() if sp.issparse(R) else R)
    # the up-projection's rounding (c of the Maclaurin features) carried through |R|, and
    # the product with R rounding L more additions of |up| |R|
    reach = _maclaurin_reach(numpy_map, X) @ R
    c = _maclaurin_rounding(numpy_map, 4) + numpy_map.n_up_ + 1
    assert_close(Z, expected, c * place.eps * float(np.max(reach)), "features")


@pytest.mark.parametrize("place", PLACES)
def test_a_sparse_projection_fitted_on_numpy_moves_to_x(place: Place) -> None:
    X = _data(d=4).astype(place.dtype)
    crf = CompactRandomFeatures(n_components=9, projection="sparse", random_state=0).fit(X)
    expected = crf.transform(X).astype(np.float64)
    with dispatch():
        moved = move_to(crf, place.asarray(X))
        Z = moved.transform(place.asarray(X))
    assert sp.issparse(moved.projection_)  # move_to leaves it; the block makes it dense
    assert_at(Z, place)
    reach = _maclaurin_reach(crf, X) @ np.abs(crf.projection_.toarray())
    c = _maclaurin_rounding(crf, 4) + crf.n_up_ + 1
    assert_close(Z, expected, c * place.eps * float(np.max(reach)), "features")


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("cls", [RandomMaclaurinFeatures, CompactRandomFeatures])
def test_the_norm_check_holds_on_the_device(place: Place, cls: type) -> None:
    kernel = MaclaurinKernel(lambda n: 0.5**n, function=lambda t: 1 / (1 - t / 2), radius=2.0)
    X = _data(d=3).astype(place.dtype) / 4.0
    far = X.copy()
    far[5] = 1.0  # squared norm 3 >= 2
    params = {"kernel": kernel, "n_components": 8, "random_state": 0}
    assert_refused_as_on_numpy(lambda: cls(**params), X, far, place, "radius of convergence")


# -- TensorSketch ----------------------------------------------------------------------------


SKETCH = [
    pytest.param({"degree": 1}, id="degree1"),
    pytest.param({"degree": 2, "gamma": 0.5, "coef0": 1.0}, id="poly2"),
    pytest.param({"degree": 3, "gamma": 0.3, "coef0": 0.5}, id="poly3"),
    pytest.param({"kernel": "homogeneous_polynomial", "degree": 2}, id="homogeneous2"),
]


def _sketch_tolerance(fitted: Any, X: np.ndarray, eps: float) -> float:
    """Every feature and spectrum value is at most ``M = |x'|_1^p`` (``x' = (sqrt(gamma)
    x, sqrt(coef0))``); the count sketches round ``d + 1`` additions of values up to
    ``M^(1/p)`` each, and the ``p + 1`` real FFTs of ``log2 D`` stages each round to about
    ``2 eps sqrt(D)`` times ``M`` per stage (the 2-norm of a length-``D`` vector at most
    ``sqrt(D)`` times its largest value): ``c = p (d + 1) + 2 (p + 1)(log2 D + 1) sqrt(D)``."""
    p, D, d = fitted._degree, fitted.n_components, X.shape[1]
    norm1 = fitted._scale * float(np.max(np.sum(np.abs(X), axis=1))) + fitted._constant
    c = p * (d + 1) + 2 * (p + 1) * (math.log2(D) + 1) * math.sqrt(D)
    return c * eps * max(norm1, 1.0) ** p


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("params", SKETCH)
@pytest.mark.parametrize("n_components", [16, 15])
def test_tensor_sketch_follows_x(place: Place, params: dict[str, Any], n_components: int) -> None:
    X = _data(d=5).astype(place.dtype)
    params = {"n_components": n_components, "random_state": 0, **params}
    numpy_map, expected, _, Z = _both(TensorSketch, params, X, place)
    assert_close(Z, expected, _sketch_tolerance(numpy_map, X, place.eps), "features")


class _WithoutFFT:
    """The namespace ``xp`` without its ``fft`` extension."""

    def __init__(self, xp: Any) -> None:
        self._xp = xp

    def __getattr__(self, name: str) -> Any:
        if name == "fft":
            raise AttributeError(name)
        return getattr(self._xp, name)


@pytest.mark.parametrize("place", PLACES)
def test_fft_pair_falls_back_to_the_host(place: Place) -> None:
    xp = place.xp
    rfft, irfft = fft_pair(_WithoutFFT(xp))
    assert rfft is not xp.fft.rfft
    x = place.asarray(np.random.default_rng(2).normal(size=(3, 2, 10)))
    spectrum = rfft(x, axis=-1)
    assert_at(spectrum, place)
    extension = xp.fft.rfft(x, axis=-1)
    # one FFT of length 10 (4 stages): c = 2 (log2 10 + 1) sqrt(10) eps |x|_1
    size = float(np.max(np.sum(np.abs(host(x)), axis=-1)))
    atol = 2 * (math.log2(10) + 1) * math.sqrt(10) * place.eps * size
    np.testing.assert_allclose(host(spectrum), host(extension), rtol=0, atol=atol)
    back = irfft(spectrum, n=10, axis=-1)
    assert_at(back, place)
    assert host(back).dtype == np.dtype(place.dtype)
    assert_close(back, host(x).astype(np.float64), 2 * atol, "irfft(rfft(x))")


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("params", SKETCH[1:])
def test_tensor_sketch_with_the_host_fft(monkeypatch, place: Place, params: dict) -> None:
    calls = []

    def host_fft_pair(xp: Any) -> Any:
        calls.append(xp)
        return fft_pair(_WithoutFFT(xp))

    monkeypatch.setattr(_sketch, "fft_pair", host_fft_pair)
    X = _data(d=5).astype(place.dtype)
    params = {"n_components": 16, "random_state": 0, **params}
    numpy_map, expected, _, Z = _both(TensorSketch, params, X, place)
    assert calls
    assert_close(Z, expected, _sketch_tolerance(numpy_map, X, place.eps), "features")


# -- the chi-squared samplers ----------------------------------------------------------------


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("sample_steps", [1, 2, 3])
@pytest.mark.parametrize("d", [4, 5])
def test_additive_chi2_follows_x(place: Place, sample_steps: int, d: int) -> None:
    X = _data(d=d, positive=True).astype(place.dtype)
    params = {"sample_steps": sample_steps}
    numpy_map, expected, _, Z = _both(AdditiveChi2Sampler, params, X, place)
    # phase j L log x rounded to (|log x| j L + 2) eps, then cos/sin, the weight and the
    # root: c = (n L max|log x| + 6) eps times the largest sqrt(2 L x)
    L = numpy_map.sample_interval_
    positive = X[X > 0].astype(np.float64)
    c = sample_steps * L * float(np.max(np.abs(np.log(positive)))) + 6.0
    atol = c * place.eps * math.sqrt(2.0 * L * float(np.max(X)))
    assert_close(Z, expected, atol, "features")
    # without a fit, as on NumPy (stateless): the map is not placed by it
    with dispatch():
        unfitted = AdditiveChi2Sampler(**params)
        assert_close(unfitted.transform(place.asarray(X)), expected, atol, "features")
    assert not hasattr(unfitted, "spectrum_weights_")
    np.testing.assert_array_equal(unfitted.transform(X), numpy_map.transform(X))


@pytest.mark.parametrize("place", PLACES)
def test_additive_chi2_fitted_on_x_refuses_numpy_input(place: Place) -> None:
    X = _data(positive=True).astype(place.dtype)
    with dispatch():
        chi2 = AdditiveChi2Sampler().fit(place.asarray(X))
        with pytest.raises(ValueError, match="same namespace"):
            chi2.transform(X)
    chi2.fit(X)  # refitted on NumPy: nothing left on the device
    assert not hasattr(chi2, "spectrum_weights_")
    chi2.transform(X)


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("skewedness", [1.0, 0.3])
@pytest.mark.parametrize("n_components", [16, 17])
def test_skewed_chi2_follows_x(place: Place, skewedness: float, n_components: int) -> None:
    X = _data(d=5, positive=True).astype(place.dtype)
    params = {"skewedness": skewedness, "n_components": n_components, "random_state": 0}
    numpy_map, expected, _, Z = _both(SkewedChi2Sampler, params, X, place)
    # the phase log1p(x / c) . w + b: d + 2 roundings of values up to |log1p(x/c)| . |w|
    # (and the offset's), then the cosine's own, times sqrt(2 / D)
    W = np.abs(numpy_map.random_weights_.astype(np.float64))
    reach = float(np.max(np.log1p(X / skewedness) @ W)) + 2 * math.pi
    reach += abs(math.log(skewedness)) * float(np.max(np.sum(W, axis=0)))
    atol = math.sqrt(2.0 / n_components) * place.eps * ((X.shape[1] + 3) * reach + 2)
    assert_close(Z, expected, atol, "features")


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("cls", [AdditiveChi2Sampler, SkewedChi2Sampler])
def test_chi2_value_checks_hold_on_the_device(place: Place, cls: type) -> None:
    X = _data(positive=True).astype(place.dtype)
    bad = X.copy()
    bad[3, 2] = -2.0  # below 0 and below -skewedness
    params = {"random_state": 0} if cls is SkewedChi2Sampler else {}
    assert_refused_as_on_numpy(lambda: cls(**params), X, bad, place, "Negative values")


# -- non-finite features ---------------------------------------------------------------------


OVERFLOWING = [
    pytest.param(Fastfood, {"n_components": 8}, id="fastfood"),
    pytest.param(StructuredOrthogonalFeatures, {"n_components": 8}, id="sorf"),
    pytest.param(RandomMaclaurinFeatures, {"n_components": 8, "p": 1.5}, id="maclaurin"),
    pytest.param(CompactRandomFeatures, {"n_components": 4, "p": 1.5}, id="compact"),
    pytest.param(TensorSketch, {"n_components": 8}, id="tensor-sketch"),
]


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize(("cls", "params"), OVERFLOWING)
def test_overflowing_rows_are_named_as_on_numpy(place: Place, cls: type, params: dict) -> None:
    X = _data(d=4).astype(place.dtype)
    X[[2, 7]] = np.finfo(place.dtype).max  # x + y or x - y of any signs overflows
    params = {**params, "random_state": 0}
    assert_transform_refused_as_on_numpy(
        lambda: cls(**params), X, place, NonFiniteOutputError, "the features of row"
    )


# -- RandomBinningFeatures refuses them -------------------------------------------------------


REFUSAL = "its features are a scipy.sparse matrix, which holds NumPy arrays only"


@pytest.mark.parametrize("place", PLACES)
def test_random_binning_refuses_the_arrays_of_other_libraries(place: Place) -> None:
    X = _data().astype(place.dtype)
    fitted = RandomBinningFeatures(n_grids=4, random_state=0).fit(X)
    with dispatch():
        with pytest.raises(TypeError, match=REFUSAL):
            RandomBinningFeatures(n_grids=4, random_state=0).fit(place.asarray(X))
        with pytest.raises(TypeError, match=REFUSAL):
            fitted.transform(place.asarray(X))
    assert not RandomBinningFeatures().__sklearn_tags__().array_api_support


@pytest.mark.torch
@pytest.mark.skipif(not HAS_TORCH, reason="needs torch")
def test_random_binning_takes_torch_cpu_input_with_dispatch_off() -> None:
    import torch

    X = _data()
    expected = RandomBinningFeatures(n_grids=4, random_state=0).fit(X).transform(X)
    binning = RandomBinningFeatures(n_grids=4, random_state=0).fit(torch.asarray(X))
    Z = binning.transform(torch.asarray(X))
    assert sp.issparse(Z)
    assert (expected != Z).nnz == 0


def test_every_enabled_map_says_so_in_its_tags() -> None:
    enabled = {
        Fastfood,
        StructuredOrthogonalFeatures,
        RandomMaclaurinFeatures,
        CompactRandomFeatures,
        TensorSketch,
        AdditiveChi2Sampler,
        SkewedChi2Sampler,
    }
    for cls in enabled:
        assert cls().__sklearn_tags__().array_api_support, cls.__name__
    assert kernelmaps.RandomFourierFeatures().__sklearn_tags__().array_api_support


BLOCKED = [
    pytest.param(Fastfood, {"n_components": 12}, id="fastfood"),
    pytest.param(StructuredOrthogonalFeatures, {"n_components": 12}, id="sorf"),
    pytest.param(RandomMaclaurinFeatures, {"n_components": 12}, id="maclaurin"),
    pytest.param(CompactRandomFeatures, {"n_components": 6}, id="compact"),
    pytest.param(TensorSketch, {"n_components": 8}, id="tensor-sketch"),
    pytest.param(AdditiveChi2Sampler, {}, id="additive-chi2"),
    pytest.param(SkewedChi2Sampler, {"n_components": 12}, id="skewed-chi2"),
]


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize(("cls", "params"), BLOCKED)
def test_row_blocks_give_the_rows_of_one_block(place: Place, cls: type, params: dict) -> None:
    X = place.asarray(_data(n=7, d=4, positive=True))
    if cls is not AdditiveChi2Sampler:
        params = {**params, "random_state": 0}
    with dispatch():
        fitted = cls(**params).fit(X)
        whole = fitted.transform(X)
        with sklearn.config_context(working_memory=1e-4):  # about 100 bytes: a row a block
            blocked = fitted.transform(X)
    assert_at(blocked, place)
    # The features of a row do not depend on the rows transformed with it, but a matrix
    # product or an FFT of another number of rows may group its sums otherwise: the
    # inner sums here have at most 16 terms (d = 4, L = 12, 3 FFT stages), each
    # regrouping moving a feature by an ulp of the values summed, at most max|Z| for
    # these inputs (c = 16).
    scale = max(float(np.max(np.abs(host(whole)))), 1.0)
    assert_close(blocked, host(whole).astype(np.float64), 16 * place.eps * scale, "blocks")
