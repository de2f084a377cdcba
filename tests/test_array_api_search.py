"""FeatureRidgeCV and FeatureRidgeClassifierCV on the arrays of other libraries.

The search runs its passes where ``X`` is (the features, the per-fold statistics, the
leave-one-out sums and the held-out predictions on the device) and its scores on the
host from the merged statistics, so in float64 a score differs from the NumPy search's
by rounding only: ``c D eps cond`` times its scale, as in ``tests/test_feature_ridge_cv.py``
(``cond`` the condition number of the penalized Gram matrix, ``D`` for the accumulated
sums).  In float32 the features and block products are float32, whose rounding relative
to these penalties (``n eps32 |G| / alpha``, percents here) would make a comparison of the
scores vacuous: the placement, finiteness and shape of the results are checked there.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_digits, make_friedman1
from sklearn.model_selection import StratifiedKFold

from kernelmaps import (
    FeatureRidgeClassifier,
    FeatureRidgeClassifierCV,
    FeatureRidgeCV,
    RandomFourierFeatures,
)
from tests._array_api import PLACES, Place, assert_at, assert_fitted_at, dispatch, host

EPS64 = float(np.finfo(np.float64).eps)
GAMMAS, ALPHAS = [0.05, 0.5], [1e-1, 10.0]


def _rff() -> RandomFourierFeatures:
    return RandomFourierFeatures(n_components=32, random_state=0)


def _search(**params) -> FeatureRidgeCV:
    return FeatureRidgeCV(
        _rff(), gammas=GAMMAS, alphas=ALPHAS, n_components_grid=[16, 32], **params
    )


def _tolerance(X: np.ndarray, y: np.ndarray) -> float:
    """The float64 rounding of a score (see the module docstring), on the data."""
    n, D, alpha = X.shape[0], 32, min(ALPHAS)
    top = float(n)  # |z|^2 = 1 per row: the Gram matrix's eigenvalues are at most n
    return 64 * D * EPS64 * (top + alpha) / alpha * (float(np.mean(y**2)) + 1.0)


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("params", [{}, {"criterion": "gcv"}, {"cv": 3}], ids=str)
def test_search_on_a_device_equals_numpy(place: Place, params: dict) -> None:
    X, y = make_friedman1(n_samples=200, noise=0.5, random_state=0)
    X = X.astype(place.dtype)
    reference = _search(**params).fit(X, y)
    with dispatch():
        search = _search(**params).fit(place.asarray(X), place.asarray(y))
        prediction = search.predict(place.asarray(X[:5]))
    assert_at(prediction, place)
    assert_fitted_at(search.best_estimator_, place)
    scores = search.cv_results_["mean_test_score"]
    assert scores.shape == reference.cv_results_["mean_test_score"].shape
    assert np.all(np.isfinite(scores))
    if place.dtype == "float64":
        tol = _tolerance(X, y)
        np.testing.assert_allclose(
            scores, reference.cv_results_["mean_test_score"], rtol=0, atol=tol
        )
        assert search.best_params_ == reference.best_params_
        np.testing.assert_allclose(
            host(prediction), reference.predict(X[:5]), rtol=0, atol=tol * np.abs(y).max()
        )


@pytest.mark.parametrize("place", PLACES)
def test_classifier_search_on_a_device(place: Place) -> None:
    X, y = load_digits(return_X_y=True)
    X, y = (X[:300] / 16.0).astype(place.dtype), y[:300]
    gamma, alpha = 0.02, 1.0
    reference = FeatureRidgeClassifierCV(_rff(), gammas=[gamma], alphas=[alpha], cv=3).fit(X, y)
    with dispatch():
        search = FeatureRidgeClassifierCV(_rff(), gammas=[gamma], alphas=[alpha], cv=3)
        search.fit(place.asarray(X), place.asarray(y, dtype=np.int64))
        labels = search.predict(place.asarray(X[:10]))
    assert_fitted_at(search.best_estimator_, place)
    assert host(labels).shape == (10,)
    # a held-out accuracy counts rows: equal but for the rows whose two best decision
    # values are within the device's rounding of a tie (either class may win there)
    for k, (train, test) in enumerate(StratifiedKFold(3).split(X, y)):
        model = FeatureRidgeClassifier(_rff().set_params(gamma=gamma), alpha=alpha)
        top = np.sort(model.fit(X[train], y[train]).decision_function(X[test]), axis=1)
        rounding = 64 * 32 * place.eps * (len(train) + alpha) / alpha * np.abs(top).max()
        ties = int(np.sum(top[:, -1] - top[:, -2] <= rounding))
        a = search.cv_results_[f"split{k}_test_score"][0]
        b = reference.cv_results_[f"split{k}_test_score"][0]
        assert abs(a - b) <= ties / len(test)
