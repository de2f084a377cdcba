"""FeatureLogisticRegressionCV against a brute-force search with scikit-learn's
LogisticRegression on the same features.

Tolerances.  Every split score is minus the weighted held-out log-loss of the minimizer
of a strongly convex objective on the training folds.  Our fit stops when the largest
gradient entry divided by ``C sum s_i`` is at most ``tol`` (so its gradient has norm at
most ``sqrt(K (D + 1)) tol C sum s_i``); scikit-learn's gradient is computed exactly.
The two solutions are within ``(|g_1| + |g_2|) / mu`` of each other (``mu`` half the
smallest eigenvalue of the Hessian at scikit-learn's solution, as in
``tests/test_logistic.py``), and the held-out log-loss moves by at most ``sqrt(2)
|a_i|`` per unit of that distance on row ``i`` (``a_i = [z_i, 1]``; the gradient of
``log p_y`` in the scores is ``e_y - p``, of norm at most ``sqrt(2)``).  No tolerance
comes from a seed.
"""

from __future__ import annotations

import pickle
import warnings
from typing import Any

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss
from sklearn.model_selection import GroupKFold, StratifiedKFold

from kernelmaps import FeatureLogisticRegression, FeatureLogisticRegressionCV, RandomFourierFeatures
from tests.test_logistic import EPS, Problem, _data

TOL = 1e-10


def _search(**params: Any) -> FeatureLogisticRegressionCV:
    defaults: dict[str, Any] = {
        "feature_map": RandomFourierFeatures(n_components=24, random_state=0),
        "Cs": [0.1, 1.0, 10.0],
        "gammas": [0.1, 0.3],
        "n_components_grid": [12, 24],
        "cv": 3,
        "tol": TOL,
    }
    return FeatureLogisticRegressionCV(**{**defaults, **params})


def _score_bound(problem: Problem, theirs: Any, A_test: np.ndarray, s_test: np.ndarray) -> float:
    """How far our held-out score may be from scikit-learn's (module docstring)."""
    theta = problem.centred(problem.theta(theirs))
    Q = problem.free()
    g_theirs = float(np.linalg.norm(problem.gradient(theta).ravel() @ Q))
    g_ours = np.sqrt(theta.size) * TOL * problem.C * float(problem.s.sum())
    mu = float(np.linalg.eigvalsh(Q.T @ problem.hessian(theta) @ Q)[0]) / 2
    terms = problem.C * float(problem.s @ np.abs(problem.A).sum(axis=1)) + np.abs(theta).sum()
    rounding = 4 * problem.A.shape[0] * EPS * terms
    distance = (g_ours + g_theirs + 2 * rounding) / mu
    cubic = problem.C * float(problem.s @ np.linalg.norm(problem.A, axis=1) ** 3) / 4
    assert cubic * distance <= mu  # the Hessian holds within that distance
    lipschitz = np.sqrt(2) * float(s_test @ np.linalg.norm(A_test, axis=1)) / float(s_test.sum())
    scores = np.abs(A_test @ theta.T).max()
    return lipschitz * distance + 8 * A_test.shape[1] * EPS * (scores + 1)


def assert_brute_force(search: Any, X: np.ndarray, y: np.ndarray, w: np.ndarray) -> None:
    """Every split score of ``search.cv_results_`` is the held-out log-loss of
    ``LogisticRegression`` fitted on the training folds' features."""
    results = search.cv_results_
    folds = list(StratifiedKFold(search.n_splits_).split(X, y))
    for index, params in enumerate(results["params"]):
        feature_map = RandomFourierFeatures(
            gamma=params["gamma"], n_components=params["n_components"], random_state=0
        )
        Z = feature_map.fit(X).transform(X)
        A = np.hstack([Z, np.ones((Z.shape[0], 1))])
        for k, (train, test) in enumerate(folds):
            theirs = LogisticRegression(
                C=params["C"], solver="newton-cg", tol=1e-12, max_iter=10_000
            )
            with warnings.catch_warnings():
                # newton-cg's line search may stop at rounding short of tol: the bound
                # takes the gradient of the point it reached, computed exactly
                warnings.filterwarnings("ignore", "(?i).*line search")
                warnings.simplefilter("ignore", ConvergenceWarning)
                theirs.fit(Z[train], y[train], sample_weight=w[train])
            expected = -log_loss(
                y[test], theirs.predict_proba(Z[test]), sample_weight=w[test], labels=np.unique(y)
            )
            problem = Problem(Z[train], y[train], w[train], params["C"], True)
            bound = _score_bound(problem, theirs, A[test], w[test])
            got = results[f"split{k}_test_score"][index]
            assert abs(got - expected) <= bound, (params, k, got, expected, bound)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_scores_equal_brute_force(seed: int, n_classes: int) -> None:
    X, y, w = _data(seed, n_classes)
    search = _search().fit(X, y, sample_weight=w)
    assert len(search.cv_results_["params"]) == 2 * 2 * 3
    assert_brute_force(search, X, y, w)


def test_best_is_argmax_and_refit(seed: int) -> None:
    X, y, _ = _data(seed, 3)
    search = _search().fit(X, y)
    means = search.cv_results_["mean_test_score"]
    assert search.best_index_ == int(np.argmax(means))
    assert search.best_score_ == means.max()
    assert search.cv_results_["rank_test_score"][search.best_index_] == 1
    best = search.cv_results_["params"][search.best_index_]
    assert search.best_params_ == best
    assert (search.gamma_, search.C_, search.n_components_) == (
        best["gamma"],
        best["C"],
        best["n_components"],
    )
    feature_map = RandomFourierFeatures(
        gamma=best["gamma"], n_components=best["n_components"], random_state=0
    )
    model = FeatureLogisticRegression(feature_map, C=best["C"], tol=TOL).fit(X, y)
    assert isinstance(search.best_estimator_, FeatureLogisticRegression)
    np.testing.assert_array_equal(search.coef_, model.coef_)
    np.testing.assert_array_equal(search.intercept_, model.intercept_)
    for method in ("predict", "predict_proba", "predict_log_proba", "decision_function"):
        np.testing.assert_array_equal(getattr(search, method)(X), getattr(model, method)(X))
    assert search.score(X, y) == model.score(X, y)
    np.testing.assert_array_equal(search.classes_, np.unique(y))
    assert search.scoring_ == "neg_log_loss"


def test_int_cs_and_unseeded_map(seed: int) -> None:
    X, y, _ = _data(seed, 2)
    search = FeatureLogisticRegressionCV(
        RandomFourierFeatures(gamma=0.3, n_components=8), Cs=3, gammas=None, cv=2
    ).fit(X, y)
    np.testing.assert_allclose(search.cv_results_["param_C"], [1e-4, 1.0, 1e4])
    assert "param_gamma" not in search.cv_results_
    # one seed for the whole search: the final model's map is the one searched
    assert isinstance(search.feature_map_.random_state, int)


def test_float32_kept_and_pickled() -> None:
    X, y, _ = _data(0, 3)
    X32 = X.astype(np.float32)
    search = _search(Cs=[1.0], gammas=[0.3], n_components_grid=None).fit(X32, y)
    for method in ("decision_function", "predict_proba", "predict_log_proba"):
        assert getattr(search, method)(X32).dtype == np.float32
    again = pickle.loads(pickle.dumps(search))
    np.testing.assert_array_equal(again.predict_proba(X32), search.predict_proba(X32))


def test_groups(seed: int) -> None:
    X, y, _ = _data(seed, 2)
    groups = np.arange(X.shape[0]) % 6
    search = _search(Cs=[1.0], gammas=[0.3], n_components_grid=None, cv=GroupKFold(3))
    search.fit(X, y, groups=groups)
    assert search.n_splits_ == 3
    assert np.isfinite([search.cv_results_[f"split{k}_test_score"][0] for k in range(3)]).all()


def test_errors() -> None:
    X, y, _ = _data(0, 2)
    with pytest.raises(ValueError, match="Cs must be"):
        _search(Cs=[1.0, -1.0]).fit(X, y)
    with pytest.raises(ValueError, match="at least 2 rows"):
        _search().fit(X[:1], y[:1])


@pytest.mark.dask
def test_dask_equals_numpy(seed: int) -> None:
    da = pytest.importorskip("dask.array")
    from tests._dask import as_dask

    X, y, w = _data(seed, 3)
    lazy = as_dask(X, "rows-37")
    chunks = lazy.chunks[0]
    params = {"Cs": [0.1, 10.0], "gammas": [0.3], "n_components_grid": None}
    search = _search(**params).fit(
        lazy, da.from_array(y, chunks=chunks), sample_weight=da.from_array(w, chunks=chunks)
    )
    assert_brute_force(search, X, y, w)
    ref = _search(**params).fit(X, y, sample_weight=w)
    assert search.best_params_ == ref.best_params_


def test_auto_gammas_are_nine_about_the_data_rule(seed: int) -> None:
    from kernelmaps.bandwidth import gamma_from_data

    X, y, _ = _data(seed, 2)
    search = _search(Cs=[1.0], gammas="auto", n_components_grid=None, cv=2, tol=1e-4).fit(X, y)
    gammas = np.unique(np.asarray(search.cv_results_["param_gamma"], dtype=float))
    rule = gamma_from_data(X)
    np.testing.assert_allclose(gammas, rule * 10.0 ** np.linspace(-2.0, 2.0, 9), rtol=1e-12)
    assert search.gamma_ in gammas


def test_default_searches_C_only(seed: int) -> None:
    X, y, _ = _data(seed, 2)
    search = FeatureLogisticRegressionCV(random_state=seed, cv=2).fit(X, y)
    assert "param_gamma" not in search.cv_results_
    assert len(search.cv_results_["params"]) == 10
