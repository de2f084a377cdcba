"""FeatureRidgeClassifier, and the recipe of feature maps with scikit-learn's linear classifiers."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_digits, make_circles
from sklearn.linear_model import LogisticRegression, SGDClassifier
from sklearn.pipeline import make_pipeline
from sklearn.svm import LinearSVC

from kernelmaps import (
    FeatureRidge,
    FeatureRidgeClassifier,
    FeatureRidgeClassifierCV,
    RandomFourierFeatures,
)


@pytest.fixture(scope="module")
def digits() -> tuple[np.ndarray, np.ndarray]:
    X, y = load_digits(return_X_y=True)
    return X[:600] / 16.0, y[:600]


def _rff(D: int = 200) -> RandomFourierFeatures:
    return RandomFourierFeatures(gamma=0.05, n_components=D, random_state=0)


def test_one_vs_rest_equals_ridge_on_signed_targets(digits) -> None:
    X, y = digits
    clf = FeatureRidgeClassifier(_rff(), alpha=0.5).fit(X, y)
    np.testing.assert_array_equal(clf.classes_, np.arange(10))
    Y = np.where(y[:, None] == np.arange(10)[None, :], 1.0, -1.0)
    reg = FeatureRidge(_rff(), alpha=0.5).fit(X, Y)
    scores = clf.decision_function(X)
    np.testing.assert_allclose(scores, reg.predict(X), rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(clf.predict(X), np.argmax(reg.predict(X), axis=1))


def test_binary_with_string_labels(digits) -> None:
    X, y = digits
    labels = np.where(y < 5, "low", "high")
    clf = FeatureRidgeClassifier(_rff(), alpha=0.5).fit(X, labels)
    np.testing.assert_array_equal(clf.classes_, ["high", "low"])
    scores = clf.decision_function(X)
    assert scores.shape == (X.shape[0],)
    reg = FeatureRidge(_rff(), alpha=0.5).fit(X, np.where(labels == "low", 1.0, -1.0))
    np.testing.assert_allclose(scores, reg.predict(X), rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(clf.predict(X), np.where(scores > 0, "low", "high"))


def test_partial_fit_equals_fit_and_checks_classes(digits) -> None:
    X, y = digits
    whole = FeatureRidgeClassifier(_rff(), alpha=0.5, alphas=None).fit(X, y)
    streamed = FeatureRidgeClassifier(_rff(), alpha=0.5)
    for part in np.array_split(np.arange(X.shape[0]), 4):
        streamed.partial_fit(X[part], y[part], classes=np.arange(10))
    np.testing.assert_allclose(
        streamed.decision_function(X), whole.decision_function(X), rtol=1e-9, atol=1e-10
    )
    with pytest.raises(ValueError, match="classes must be given on the first call"):
        FeatureRidgeClassifier(_rff()).partial_fit(X, y)
    with pytest.raises(ValueError, match=r"y holds classes \[9\] not in classes"):
        FeatureRidgeClassifier(_rff()).partial_fit(X, y, classes=np.arange(9))
    with pytest.raises(ValueError, match="at least 2 classes"):
        FeatureRidgeClassifier(_rff()).fit(X, np.zeros(X.shape[0]))


def test_alpha_chosen_by_leave_one_out(digits) -> None:
    X, y = digits
    alphas = [0.01, 0.1, 1.0, 10.0]
    clf = FeatureRidgeClassifier(_rff(100), alphas=alphas).fit(X[:200], y[:200])
    Y = np.where(y[:200, None] == np.arange(10)[None, :], 1.0, -1.0)
    reg = FeatureRidge(_rff(100), alphas=alphas).fit(X[:200], Y)
    assert clf.alpha_ == reg.alpha_
    np.testing.assert_allclose(clf.cv_errors_, reg.cv_errors_, rtol=1e-10)


# -- the recipe: maps in a Pipeline with scikit-learn's linear classifiers ----------------


@pytest.mark.parametrize(
    "linear",
    [
        LogisticRegression(max_iter=2000),
        LinearSVC(C=1.0, random_state=0),
        SGDClassifier(random_state=0),
    ],
    ids=["LogisticRegression", "LinearSVC", "SGDClassifier"],
)
def test_pipeline_recipe(digits, linear) -> None:
    X, y = digits
    pipe = make_pipeline(_rff(300), linear).fit(X, y)
    # the pipeline is the linear model on the mapped features
    rff = _rff(300).fit(X)
    direct = type(linear)(**linear.get_params()).fit(rff.transform(X), y)
    np.testing.assert_array_equal(pipe.predict(X), direct.predict(rff.transform(X)))
    np.testing.assert_allclose(
        pipe.decision_function(X), direct.decision_function(rff.transform(X))
    )


def test_incremental_recipe_with_sgd_partial_fit(digits) -> None:
    X, y = digits
    rff = _rff(300).fit(X[:1])  # data-independent: only the number of columns is used
    sgd = SGDClassifier(shuffle=False, random_state=0)
    for part in np.array_split(np.arange(X.shape[0]), 6):
        sgd.partial_fit(rff.transform(X[part]), y[part], classes=np.arange(10))
    # partial_fit over blocks continues the same learning-rate schedule: one pass over the
    # blocks equals one partial_fit pass over the rows concatenated
    one_pass = SGDClassifier(shuffle=False, random_state=0)
    one_pass.partial_fit(rff.transform(X), y, classes=np.arange(10))
    np.testing.assert_allclose(sgd.coef_, one_pass.coef_, rtol=1e-10, atol=1e-12)
    assert sgd.predict(rff.transform(X[:5])).shape == (5,)


def test_maps_make_a_nonlinear_problem_linearly_separable() -> None:
    # Concentric circles: no linear classifier beats about 50% on raw coordinates, while the
    # RBF kernel separates them.  Fixed data and map (random_state=0): a deterministic
    # check with a wide margin (the mapped classifiers reach about 100%).
    X, y = make_circles(n_samples=400, factor=0.4, noise=0.05, random_state=0)
    rff = RandomFourierFeatures(gamma=2.0, n_components=300, random_state=0)
    for linear in (
        LogisticRegression(max_iter=2000),
        LinearSVC(random_state=0),
        SGDClassifier(random_state=0),
    ):
        raw = type(linear)(**linear.get_params()).fit(X[:200], y[:200]).score(X[200:], y[200:])
        mapped = make_pipeline(rff, linear).fit(X[:200], y[:200]).score(X[200:], y[200:])
        assert raw < 0.75 and mapped > 0.9, (linear, raw, mapped)
    ridge = FeatureRidgeClassifier(rff, alpha=0.1).fit(X[:200], y[:200])
    assert ridge.score(X[200:], y[200:]) > 0.9


@pytest.mark.parametrize(
    "make", [lambda: FeatureRidgeClassifier(_rff(16)), lambda: FeatureRidgeClassifierCV(_rff(16))]
)
def test_many_classes_warn_only_when_they_outnumber_half_the_rows(make) -> None:
    """26 classes on 520 rows is classification; 100 labels on 100 rows may be regression."""
    X = np.random.default_rng(0).standard_normal((520, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        make().fit(X, np.arange(520) % 26)
    with pytest.warns(UserWarning, match=r"unique classes \(100\) is greater than 50% .* \(100\)"):
        make().fit(X[:100], np.arange(100))


def test_probabilities_survive_pickling_and_follow_the_classes(digits) -> None:
    import pickle

    X, y = digits
    labels = np.array(list("abcdefghij"))[y]
    clf = FeatureRidgeClassifier(_rff(), alpha=0.5).fit(X, labels)
    P = clf.predict_proba(X)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(clf)).predict_proba(X), P)
    np.testing.assert_array_equal(clf.classes_[np.argmax(P, axis=1)], clf.predict(X))
    search = FeatureRidgeClassifierCV(_rff(), gammas=[0.05], criterion="gcv").fit(X, labels)
    assert search.predict_proba(X).shape == (600, 10)
    assert search.calibrator_ is search.best_estimator_.calibrator_
