"""Array API dispatch: where the work runs, moving a fitted estimator, the mismatch error.

The per-estimator comparisons with the NumPy path are in the other ``test_array_api_*``
modules; these are the rules every estimator shares (see ``kernelmaps._array_api``).
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from kernelmaps import RandomFourierFeatures, move_to
from kernelmaps.kernels import Gaussian
from tests._array_api import PLACES, Place, assert_at, assert_close, assert_fitted_at, dispatch


def _data(n: int = 40, d: int = 5) -> np.ndarray:
    return np.random.default_rng(0).normal(size=(n, d))


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("variant", ["cos_sin", "cos_phase"])
@pytest.mark.parametrize("n_components", [16, 17])
def test_fourier_features_follow_x(place: Place, variant: str, n_components: int) -> None:
    X = _data().astype(place.dtype)
    params = {"gamma": 0.3, "n_components": n_components, "variant": variant, "random_state": 0}
    expected = RandomFourierFeatures(**params).fit_transform(X)
    with dispatch():
        rff = RandomFourierFeatures(**params).fit(place.asarray(X))
        Z = rff.transform(place.asarray(X))
    assert_at(Z, place)
    assert_fitted_at(rff, place)
    # the phases |w . x| <= |x|_2 |w|_2 are rounded to (d + 2) eps |x| |w| each
    reach = float(np.max(np.abs(X @ RandomFourierFeatures(**params).fit(X).frequencies_)))
    assert_close(Z, expected, (X.shape[1] + 4) * place.eps * (reach + 1.0), "features")


@pytest.mark.parametrize("place", PLACES)
def test_a_fitted_map_refuses_another_place_and_moves(place: Place) -> None:
    X = _data()
    with dispatch():
        rff = RandomFourierFeatures(n_components=8, random_state=0).fit(place.asarray(X))
        with pytest.raises(ValueError, match=r"same namespace .*move_to"):
            rff.transform(X)
    with pytest.raises(ValueError, match="move_to"):
        rff.transform(X)  # the switch off: NumPy input, fitted arrays elsewhere
    on_host = move_to(rff, "numpy")
    assert isinstance(on_host.frequencies_, np.ndarray)
    assert not isinstance(rff.frequencies_, np.ndarray)  # the original stays where it was
    expected = RandomFourierFeatures(n_components=8, random_state=0).fit(X).transform(X)
    np.testing.assert_allclose(on_host.transform(X), expected, rtol=0, atol=64 * place.eps)
    pickle.loads(pickle.dumps(on_host))
    with dispatch():
        back = move_to(on_host, place.asarray(X))
        assert_fitted_at(back, place)
        assert_at(back.transform(place.asarray(X)), place)


@pytest.mark.parametrize("place", PLACES)
def test_gaussian_kernel_follows_x(place: Place) -> None:
    X = _data(30, 4)
    Y = _data(20, 4) + 0.5
    expected = Gaussian(gamma=0.2)(X, Y)
    with dispatch():
        K = Gaussian(gamma=0.2)(place.asarray(X), place.asarray(Y))
    assert_at(K, place)
    # |x|^2 + |y|^2 - 2 x.y rounded to about (d + 3) eps (|x|^2 + |y|^2), times gamma
    size = float(np.max(np.sum(X * X, 1)) + np.max(np.sum(Y * Y, 1)))
    assert_close(K, expected, 0.2 * (X.shape[1] + 4) * place.eps * size + 4 * place.eps, "K")


def test_numpy_input_with_the_switch_on_is_the_numpy_path() -> None:
    X = _data()
    expected = RandomFourierFeatures(n_components=8, random_state=0).fit_transform(X)
    with dispatch():
        Z = RandomFourierFeatures(n_components=8, random_state=0).fit_transform(X)
    assert isinstance(Z, np.ndarray)
    np.testing.assert_array_equal(Z, expected)


# scikit-learn indexes the folds with NumPy integers, which array-api-strict refuses (its own
# checks leave it out for the same reason): PyTorch only
@pytest.mark.parametrize("place", [p for p in PLACES if "torch" in str(p.id)])
def test_pipeline_and_grid_search_on_arrays_of_another_library(place: Place) -> None:
    from sklearn.linear_model import Ridge
    from sklearn.model_selection import GridSearchCV, KFold
    from sklearn.pipeline import make_pipeline

    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 3))
    y = np.sin(X[:, 0])
    pipe = make_pipeline(
        RandomFourierFeatures(n_components=32, random_state=0), Ridge(1.0, solver="svd")
    )
    search = GridSearchCV(pipe, {"randomfourierfeatures__gamma": [0.1, 1.0]}, cv=KFold(3))
    expected = search.fit(X, y).predict(X)
    with dispatch():
        fitted = GridSearchCV(pipe, search.param_grid, cv=KFold(3))
        fitted.fit(place.asarray(X), place.asarray(y))
        got = fitted.predict(place.asarray(X))
    assert_at(got, place)
    assert fitted.best_params_ == search.best_params_
    # features within (d + 4) eps |w.x| (< 50 eps here) of NumPy's; the ridge solve on
    # features of unit row norm and alpha = 1 amplifies it by at most kappa <= n + 1 = 61
    assert_close(got, expected, 1e4 * place.eps * (1.0 + float(np.max(np.abs(expected)))), "pred")


@pytest.mark.parametrize("place", PLACES)
def test_fourier_phases_beyond_the_rounding_are_refused_as_on_numpy(place: Place) -> None:
    from kernelmaps.exceptions import NonFiniteOutputError

    X = _data(6, 3).astype(place.dtype)
    rff = RandomFourierFeatures(gamma=1.0, n_components=8, random_state=0).fit(X)
    far = X.copy()
    far[2] *= 1e20 if place.dtype == "float64" else 1e9  # |w.x| eps beyond 2 pi
    with pytest.raises(NonFiniteOutputError, match="rounding noise") as on_numpy:
        rff.transform(far)
    with dispatch():
        moved = move_to(rff, place.asarray(X))
        with pytest.raises(NonFiniteOutputError, match="rounding noise") as on_device:
            moved.transform(place.asarray(far))
    assert str(on_device.value) == str(on_numpy.value)


def test_the_streamed_reduction_is_the_tree_of_the_reduction_in_memory() -> None:
    from kernelmaps._rows import tree_reduce, tree_reduce_stream

    def join(a: str, b: str) -> str:
        return f"({a}{b})"

    for n in range(1, 70):
        items = [f"{i}," for i in range(n)]
        assert tree_reduce_stream(iter(items), join) == tree_reduce(items, join)
    with pytest.raises(ValueError, match="Nothing to reduce"):
        tree_reduce_stream(iter([]), join)
