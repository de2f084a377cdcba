"""The ridge searches against scikit-learn's RidgeCV: weighted scores, the scored
leave-one-out predictions, scalar penalties, the parameters they do not take; and the
weighted automatic bandwidths, the map's own bandwidth, the landmarks held.

Scores computed two ways (statistics here, refits or RidgeCV's there) agree to rounding:
``c n eps cond`` times their scale, ``cond`` the condition number of the penalized Gram
matrix both solve with (the forward error of a solve is ``eps cond`` relative, Higham
2002, section 7.1), ``n`` for the accumulated sums.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import Ridge, RidgeCV
from sklearn.metrics import mean_squared_error, r2_score, root_mean_squared_error

from kernelmaps import (
    FeatureRidgeClassifierCV,
    FeatureRidgeCV,
    NystroemKernelRidgeCV,
    RandomFourierFeatures,
)
from kernelmaps.bandwidth import gamma_from_data

EPS = float(np.finfo(np.float64).eps)
ALPHAS = [1e-2, 1.0, 30.0]
METRICS = {
    "r2": r2_score,
    "neg_mean_squared_error": lambda y, p, **kw: -mean_squared_error(y, p, **kw),
    "neg_root_mean_squared_error": lambda y, p, **kw: -root_mean_squared_error(y, p, **kw),
}


def _data(seed: int, n: int = 40, d: int = 5, t: int = 1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    Y = np.sin(X[:, :t]) + X[:, 1:2] ** 2 + 0.3 * rng.normal(size=(n, t))
    return X, Y[:, 0] if t == 1 else Y


def _condition(X: np.ndarray, w: np.ndarray, alpha: float) -> float:
    """The condition number of the weighted centred ``G + alpha I``."""
    Xc = X - np.average(X, axis=0, weights=w)
    evals = np.linalg.eigvalsh((Xc * w[:, None]).T @ Xc)
    return float((max(evals[-1], 0.0) + alpha) / (max(evals[0], 0.0) + alpha))


def _tolerance(X: np.ndarray, w: np.ndarray, scale: float) -> float:
    cond = max(_condition(X, w, a) for a in ALPHAS)
    return 100.0 * X.shape[0] * EPS * cond * scale


# -- 1. the weighted leave-one-out criterion ------------------------------------------------


def test_weighted_loo_score_is_the_weighted_mean_of_the_refits(seed) -> None:
    """``mean_test_score = -sum_i s_i r_i^2 / sum_i s_i``, ``r_i`` the residual of row
    ``i`` under the ridge refitted without it; RidgeCV's is ``sum s / n`` times it."""
    X, y = _data(seed)
    w = np.random.default_rng(seed + 1).uniform(0.2, 3.0, size=X.shape[0])
    search = FeatureRidgeCV("passthrough", gammas=None, alphas=ALPHAS).fit(X, y, w)
    expected = []
    for alpha in ALPHAS:
        r = np.empty(X.shape[0])
        for i in range(X.shape[0]):
            keep = np.arange(X.shape[0]) != i
            model = Ridge(alpha=alpha).fit(X[keep], y[keep], sample_weight=w[keep])
            r[i] = y[i] - model.predict(X[i : i + 1])[0]
        expected.append(-np.sum(w * r**2) / np.sum(w))
    tol = _tolerance(X, w, float(np.average(y**2, weights=w)))
    np.testing.assert_allclose(search.cv_results_["mean_test_score"], expected, rtol=0, atol=tol)
    ridge_cv = RidgeCV(alphas=ALPHAS).fit(X, y, sample_weight=w)
    assert search.alpha_ == ridge_cv.alpha_
    ratio = np.sum(w) / X.shape[0]
    assert abs(search.best_score_ * ratio - ridge_cv.best_score_) <= tol * ratio


# -- 2. the automatic bandwidths of weighted rows -------------------------------------------


def test_integer_weights_give_the_bandwidths_of_repeated_rows(seed) -> None:
    X, y = _data(seed, n=60)
    w = np.random.default_rng(seed + 1).integers(0, 4, size=X.shape[0])
    w[0] = 2  # not all zero
    rff = RandomFourierFeatures(n_components=20, random_state=0)
    params = {"alphas": [0.1], "refine_gamma": 0}
    weighted = FeatureRidgeCV(rff, **params).fit(X, y, sample_weight=w)
    repeated = FeatureRidgeCV(rff, **params).fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    # a weighted mean of at most sum(w) terms: rounding of that many additions
    rtol = 4.0 * np.sum(w) * EPS
    np.testing.assert_allclose(
        weighted.cv_results_["param_gamma"][:9], repeated.cv_results_["param_gamma"][:9], rtol=rtol
    )
    rule = gamma_from_data(np.repeat(X, w, axis=0))
    np.testing.assert_allclose(np.median(weighted.cv_results_["param_gamma"][:9]), rule, rtol=rtol)


def test_unit_weights_leave_the_bandwidths_as_they_are(seed) -> None:
    X, y = _data(seed, n=60)
    rff = RandomFourierFeatures(n_components=20, random_state=0)
    params = {"alphas": [0.1], "refine_gamma": 0}
    plain = FeatureRidgeCV(rff, **params).fit(X, y)
    unit = FeatureRidgeCV(rff, **params).fit(X, y, sample_weight=np.ones(X.shape[0]))
    assert np.array_equal(plain.cv_results_["param_gamma"], unit.cv_results_["param_gamma"])


def test_dask_weights_give_the_bandwidths_of_numpy_weights(seed) -> None:
    da = pytest.importorskip("dask.array")
    import dask

    X, y = _data(seed, n=90)
    w = np.random.default_rng(seed + 1).integers(1, 4, size=X.shape[0]).astype(float)
    search = FeatureRidgeCV(
        RandomFourierFeatures(n_components=20, random_state=0), alphas=[0.1], refine_gamma=0
    )
    expected = search.fit(X, y, sample_weight=w).cv_results_["param_gamma"]
    with dask.config.set(scheduler="synchronous"):
        chunked = [da.from_array(a, chunks=30) for a in (X, y, w)]
        got = search.fit(chunked[0], chunked[1], sample_weight=chunked[2])
    # the same rows and weights read: the same rule to the last bit
    assert np.array_equal(got.cv_results_["param_gamma"][:9], expected[:9])


# -- 3. the map's own bandwidth ---------------------------------------------------------------


@pytest.mark.parametrize("gamma", ["scale", 0.3])
def test_gammas_none_reports_the_bandwidth_the_map_used(seed, gamma) -> None:
    X, y = _data(seed)
    rff = RandomFourierFeatures(n_components=20, gamma=gamma, random_state=0)
    search = FeatureRidgeCV(rff, gammas=None, alphas=ALPHAS).fit(X, y)
    used = search.feature_map_.kernel_.gamma
    expected = 1.0 / (X.shape[1] * X.var()) if gamma == "scale" else gamma
    assert search.gamma_ == used and search.best_params_["gamma"] == used
    np.testing.assert_allclose(used, expected, rtol=4.0 * X.size * EPS)
    assert "param_gamma" not in search.cv_results_  # not searched


def test_a_map_without_gamma_reports_none(seed) -> None:
    X, y = _data(seed)
    search = FeatureRidgeCV("passthrough", gammas=None, alphas=ALPHAS).fit(X, y)
    assert search.gamma_ is None and "gamma" not in search.best_params_


# -- 4. the landmarks a Nyström search holds ------------------------------------------------


def test_duplicated_landmarks_report_the_landmarks_held(seed) -> None:
    X, y = _data(seed, n=80)
    landmarks = np.vstack([X[:20], X[:20]])
    search = NystroemKernelRidgeCV(
        landmarks=landmarks, n_components=40, gammas=[0.2], alphas=ALPHAS
    ).fit(X, y)
    assert search.landmarks_.shape[0] == 20
    assert search.n_components_ == 20 == search.best_estimator_.landmarks_.shape[0]


# -- 5. RidgeCV's parameters that the searches do not take ---------------------------------


@pytest.mark.parametrize(
    ("estimator", "keyword"),
    [
        (FeatureRidgeCV, "alpha_per_target"),
        (FeatureRidgeCV, "store_cv_results"),
        (NystroemKernelRidgeCV, "alpha_per_target"),
        (FeatureRidgeClassifierCV, "class_weight"),
    ],
)
def test_a_keyword_not_taken_names_the_estimator(estimator, keyword) -> None:
    with pytest.raises(TypeError, match=rf"^{estimator.__name__}\.__init__\(\) .*'{keyword}'"):
        estimator(**{keyword: True})


def test_the_copied_init_keeps_the_parameters() -> None:
    search = FeatureRidgeCV(alphas=[1.0], cv=3)
    assert search.get_params()["alphas"] == [1.0] and search.get_params()["cv"] == 3
    assert FeatureRidgeCV.__init__.__qualname__ == "FeatureRidgeCV.__init__"


# -- 6. a scalar penalty, and the scored leave-one-out predictions --------------------------


def test_a_scalar_alpha_is_one_penalty(seed) -> None:
    X, y = _data(seed)
    one = FeatureRidgeCV("passthrough", gammas=None, alphas=1.0).fit(X, y)
    listed = FeatureRidgeCV("passthrough", gammas=None, alphas=[1.0]).fit(X, y)
    assert one.alpha_ == 1.0
    assert np.array_equal(one.cv_results_["mean_test_score"], listed.cv_results_["mean_test_score"])
    with pytest.raises(ValueError, match="alphas"):
        FeatureRidgeCV("passthrough", gammas=None, alphas=-1.0).fit(X, y)


@pytest.mark.parametrize("scoring", list(METRICS))
@pytest.mark.parametrize("n_targets", [1, 2])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_loo_scorings_equal_ridge_cv(seed, scoring, n_targets, fit_intercept) -> None:
    """RidgeCV(scoring=...) with cv=None scores its leave-one-out predictions: the same
    scores, for every penalty, from the squared errors of the leave-one-out pass."""
    X, y = _data(seed, t=n_targets)
    search = FeatureRidgeCV(
        "passthrough", gammas=None, alphas=ALPHAS, scoring=scoring, fit_intercept=fit_intercept
    ).fit(X, y)
    ridge_cv = RidgeCV(
        alphas=ALPHAS, scoring=scoring, fit_intercept=fit_intercept, store_cv_results=True
    ).fit(X, y)
    predictions = ridge_cv.cv_results_.reshape(X.shape[0], -1, len(ALPHAS))
    Y = y.reshape(X.shape[0], -1)
    expected = [METRICS[scoring](Y, predictions[:, :, j]) for j in range(len(ALPHAS))]
    scale = 1.0 if scoring == "r2" else float(np.mean(Y**2))
    tol = _tolerance(X, np.ones(X.shape[0]), scale) * (1.0 + 1.0 / max(np.var(Y), EPS))
    np.testing.assert_allclose(search.cv_results_["mean_test_score"], expected, rtol=0, atol=tol)
    assert search.alpha_ == ridge_cv.alpha_ and search.scoring_ == scoring
    assert abs(search.best_score_ - ridge_cv.best_score_) <= tol


@pytest.mark.parametrize("scoring", list(METRICS))
def test_weighted_loo_scorings_weigh_the_rows(seed, scoring) -> None:
    """With ``sample_weight``, the scorer of RidgeCV's leave-one-out predictions given the
    weights (``r2_score(y, p, sample_weight=s)``, ...)."""
    X, y = _data(seed)
    w = np.random.default_rng(seed + 1).uniform(0.2, 3.0, size=X.shape[0])
    search = FeatureRidgeCV("passthrough", gammas=None, alphas=ALPHAS, scoring=scoring)
    search.fit(X, y, sample_weight=w)
    ridge_cv = RidgeCV(alphas=ALPHAS, scoring=scoring, store_cv_results=True)
    predictions = ridge_cv.fit(X, y, sample_weight=w).cv_results_
    metric = METRICS[scoring]
    expected = [metric(y, predictions[:, j], sample_weight=w) for j in range(len(ALPHAS))]
    scale = 1.0 if scoring == "r2" else float(np.average(y**2, weights=w))
    tol = _tolerance(X, w, scale) * (1.0 + 1.0 / max(np.var(y), EPS))
    np.testing.assert_allclose(search.cv_results_["mean_test_score"], expected, rtol=0, atol=tol)


def test_classifier_scoring_without_cv_names_the_fix() -> None:
    X, y = _data(0)
    with pytest.raises(ValueError, match="give cv=5"):
        FeatureRidgeClassifierCV("passthrough", gammas=None, alphas=ALPHAS, scoring="accuracy").fit(
            X, y > np.median(y)
        )
