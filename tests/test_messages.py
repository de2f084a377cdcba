"""What the messages and reprs of the public API show: suggestions for misspelt names, no
private class names, compact arrays in what print shows of an estimator."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

from kernelmaps import RandomFourierFeatures
from kernelmaps.experiments import METHOD_ALIASES, get_method, resolve_method
from kernelmaps.kernels import get_kernel_class


def test_unknown_alias_is_suggested_and_aliases_listed() -> None:
    with pytest.raises(ValueError, match="Unknown method 'nystrom'") as info:
        resolve_method("nystrom")
    message = str(info.value)
    assert message.endswith(" Did you mean 'nystroem'?")
    for alias, name in METHOD_ALIASES.items():
        assert f"{alias} (= {name})" in message
    assert "\n" not in message


def test_unknown_registered_name_is_suggested() -> None:
    with pytest.raises(ValueError, match=r"Did you mean 'rff-orthogonal'\?$"):
        get_method("rff-orthogonl")
    with pytest.raises(ValueError, match=r"Known methods: rff-mc.*\.$"):
        get_method("zzzzzz")


@pytest.mark.parametrize(
    ("build", "wanted"),
    [
        (lambda: get_kernel_class("gausian"), "gaussian"),
        (lambda: RandomFourierFeatures("laplacain").fit(np.ones((3, 2))), "laplacian"),
    ],
)
def test_unknown_kernel_is_suggested(build, wanted) -> None:
    with pytest.raises(ValueError, match=rf"Did you mean '{wanted}'\?$"):
        build()


def test_compare_kernel_option_is_suggested() -> None:
    from kernelmaps.experiments import default_study

    with pytest.raises(ValueError, match=r"Did you mean 'laplacian'\?$"):
        default_study().with_options(kernel="laplacan")


#: a private name of the package: ``_RidgeSearchCV``, ``_StreamingRidgeMixin``, ...
_PRIVATE_CLASS = re.compile(r"(?<![\w.])_[A-Z]\w*")

_METHODS = ("fit", "predict", "transform", "decision_function", "predict_proba", "score")


def _fitted(estimator):
    from sklearn.base import is_classifier

    rng = np.random.default_rng(0)
    X = rng.random((30, 3))
    y = (X[:, 0] > 0.5).astype(int) if is_classifier(estimator) else X.sum(axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # tiny data: conditioning warnings
        return estimator.fit(X, y), X, y


def _each_public_estimator():
    from ._instances import CHECK_PARAMS, check_instances

    names = [name for name, sets in CHECK_PARAMS.items() for _ in sets]
    return pytest.mark.parametrize("estimator", check_instances(), ids=names)


@_each_public_estimator()
def test_wrong_keyword_names_no_private_class(estimator) -> None:
    fitted, X, y = _fitted(estimator)
    called = 0
    for method in _METHODS:
        if not hasattr(fitted, method):
            continue
        arguments = (X, y) if method in ("fit", "score") else (X,)
        with pytest.raises(TypeError) as info:  # a keyword no method takes
            getattr(fitted, method)(*arguments, return_var=True)
        called += 1
        assert "return_var" in str(info.value)
        assert not _PRIVATE_CLASS.search(str(info.value)), str(info.value)
    assert called >= 2


def test_feature_ridge_cv_predict_wrong_keyword_names_the_public_class() -> None:
    from kernelmaps import FeatureRidgeCV

    search, X, _ = _fitted(FeatureRidgeCV(RandomFourierFeatures(n_components=8), gammas=[1.0]))
    with pytest.raises(TypeError, match=r"^FeatureRidgeCV\.predict\(\) got an unexpected"):
        search.predict(X, return_var=True)


@_each_public_estimator()
def test_repr_is_scikit_learns(estimator) -> None:
    from sklearn.base import BaseEstimator

    assert repr(estimator) == BaseEstimator.__repr__(estimator)
    assert str(estimator) == BaseEstimator.__repr__(estimator)  # no array parameter


def test_array_parameter_is_printed_by_shape_and_dtype() -> None:
    from sklearn.base import clone

    from kernelmaps import FeatureRidge, FeatureRidgeCV, Nystroem

    rng = np.random.default_rng(0)
    X = rng.random((200, 8))
    landmarks = X[:64].astype(np.float32)
    compact = "landmarks=array(shape=(64, 8), dtype=float32)"
    nystroem = Nystroem(landmarks=landmarks, n_components=64)
    assert str(nystroem) == f"Nystroem({compact}, n_components=64)"
    assert "[[" in repr(nystroem)  # repr is scikit-learn's: the values
    assert nystroem.get_params()["landmarks"] is landmarks
    assert clone(nystroem).get_params()["landmarks"].shape == (64, 8)
    nested = FeatureRidge(nystroem, alpha=0.5)
    assert compact in str(nested) and "[[" not in str(nested)
    search = FeatureRidgeCV(nystroem, gammas=[1.0], alphas=[0.1]).fit(X, X.sum(axis=1))
    for text in (str(search), str(search.best_estimator_), f"{search.best_estimator_}"):
        assert compact in " ".join(text.split()) and "[[" not in text
    assert np.get_printoptions()["threshold"] == 1000  # the print options restored


def test_sparse_and_scalar_parameters() -> None:
    import scipy.sparse as sp

    from kernelmaps._estimator_repr import array_summary

    assert array_summary(sp.eye(3, format="csr")) == "csr_matrix(shape=(3, 3), dtype=float64)"
    assert array_summary(np.float32(2.0)) is None
    assert array_summary("rbf") is None
