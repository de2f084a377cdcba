"""Bad input gets a clear error naming the problem, in scikit-learn's message style."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone

from kernelmaps import RandomBinningFeatures, RandomFourierFeatures
from kernelmaps.feature_maps._base import _MAP_CLASSES
from kernelmaps.kernels import Cauchy, Gaussian, Laplacian

from ._instances import check_instances

ESTIMATORS = check_instances()


def _X() -> np.ndarray:
    return np.random.default_rng(0).uniform(0.1, 1.0, size=(20, 4))


def _fit(estimator, X):
    return clone(estimator).fit(X, np.arange(len(X)) % 2)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=repr)
@pytest.mark.parametrize(
    "value,message", [(np.nan, "Input X contains NaN"), (np.inf, "Input X contains infinity")]
)
def test_nan_and_inf_refused(estimator, value, message) -> None:
    X = _X()
    X[3, 2] = value
    with pytest.raises(ValueError, match=message):
        _fit(estimator, X)
    fitted = _fit(estimator, _X())
    if hasattr(fitted, "transform"):
        with pytest.raises(ValueError, match=message):
            fitted.transform(X)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=repr)
def test_shape_errors(estimator) -> None:
    with pytest.raises(ValueError, match=r"Expected 2D array, got 1D array"):
        _fit(estimator, _X()[0])
    with pytest.raises(ValueError, match=r"Found array with 0 sample"):
        _fit(estimator, np.empty((0, 4)))
    fitted = _fit(estimator, _X())
    method = fitted.transform if hasattr(fitted, "transform") else fitted.predict
    with pytest.raises(ValueError, match=r"X has 3 features, but .* is expecting 4 features"):
        method(_X()[:, :3])


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=repr)
def test_complex_and_object_refused(estimator) -> None:
    with pytest.raises(ValueError, match=r"Complex data not supported"):
        _fit(estimator, _X() + 1j)
    strings = np.array([["a", "b", "c", "d"]] * 20, dtype=object)
    with pytest.raises(ValueError, match=r"could not convert string to float|Unable to convert"):
        _fit(estimator, strings)


@pytest.mark.parametrize(
    "params,message",
    [
        ({"gamma": 0.0}, "The 'gamma' parameter of RandomFourierFeatures must be"),
        ({"gamma": -1.0}, "The 'gamma' parameter"),
        ({"n_components": 0}, "The 'n_components' parameter"),
        ({"variant": "cos"}, "The 'variant' parameter"),
        ({"sampler": "lhs"}, "The 'sampler' parameter"),
        ({"kernel": "foo"}, "Unknown kernel 'foo'"),
        ({"kernel": "rbf", "kernel_params": {"degree": 2}}, "does not take parameter"),
        ({"kernel": Gaussian(1.0), "gamma": 0.5}, "given together with the kernel object"),
    ],
)
def test_rff_parameter_errors(params, message) -> None:
    with pytest.raises(ValueError, match=message):
        RandomFourierFeatures(**params).fit(_X())


def test_unsupported_kernel_names_the_maps_that_can() -> None:
    with pytest.raises(ValueError, match=r"sampler='orthogonal' needs .* radial .*Laplacian"):
        RandomFourierFeatures(kernel="laplacian", sampler="orthogonal").fit(_X())
    with pytest.raises(
        ValueError, match=r"RandomBinningFeatures needs .*Cauchy.* Use RandomFourierFeatures"
    ):
        RandomBinningFeatures(kernel=Cauchy(1.0)).fit(_X())
    # the Laplacian kernel is handled by both families
    RandomBinningFeatures(kernel=Laplacian(1.0), n_grids=3).fit(_X())


def test_transform_before_fit() -> None:
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError, match=r"not fitted yet"):
        RandomFourierFeatures().transform(_X())


@pytest.mark.parametrize("cls", _MAP_CLASSES, ids=lambda cls: cls.__name__)
def test_validation_errors_of_the_maps_are_one_line(cls) -> None:
    """scikit-learn explains NaN and 1D input over several lines (printing the array)."""
    X = _X()
    X[3, 2] = np.nan
    with pytest.raises(ValueError, match=rf"contains NaN: {cls.__name__} does not accept") as nan:
        cls().fit(X)
    with pytest.raises(ValueError, match=r"got 1D array instead. Reshape your data") as flat:
        cls().fit(_X()[0])
    for error in (nan, flat):
        assert "\n" not in str(error.value) and "array=[" not in str(error.value)
