"""Calibrated probabilities of the ridge classifiers: the exact leave-one-out decision values
they are fitted on (against refits without each observation), the calibrator, and the same
probabilities on every path (K-fold search, ``partial_fit``, Dask, array-api-strict).

Tolerances.
* Leave-one-out values against refits: both solve ``(G_c + alpha I) W = C`` in float64 (a
  rank-one downdate against a new factorization), so they agree to ``c (n + D) eps kappa
  max|Y|`` with ``kappa = (l_max + alpha) / alpha`` the condition number of the system
  (Higham, ch. 10: a backward-stable solve moves ``W`` by ``kappa`` times the relative
  rounding of its data) and ``c = 10`` for the few operations per term.
* Probabilities of two fits whose leave-one-out values ``s`` differ by at most ``delta``:
  the temperature's slope ``a`` minimizes the convex ``f(a) = mean w (logsumexp(a s) -
  a s_y)``; ``|f'|`` moves by at most ``(2 + a R) delta`` (``R`` the range of ``s``), so
  the minimizer by that over ``f''(a) = mean w Var_{softmax(a s)}(s)``; Brent's search
  adds ````4 (sqrt(eps) |log a| + xatol / 3)`` in ``log a`` for each fit (scipy's stopping
  rule of ``fminbound``).
  A probability moves by at most half the largest change of the logits ``a s``
  (``|dp_c / dl_k|`` sums to ``2 p_c (1 - p_c) <= 1/2`` over ``k``).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import logsumexp
from sklearn.calibration import CalibratedClassifierCV
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import cross_val_predict
from sklearn.utils._testing import assert_allclose

from kernelmaps import FeatureRidgeClassifier, FeatureRidgeClassifierCV, RandomFourierFeatures
from kernelmaps._array_api import to_numpy
from kernelmaps.models import RidgeStatistics, _classifiers
from kernelmaps.models._calibration import fit_calibrator
from kernelmaps.models._ridge._dual import dual_problem, solve_dual
from kernelmaps.models._ridge._pass import sample_rows
from kernelmaps.models._ridge._solvers import (
    eigen_ridge,
    loo_values,
    penalty_terms,
    solve_ridge,
)

EPS = float(np.finfo(np.float64).eps)


def _problem(seed: int, n: int, D: int, t: int, weights: str):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, D))
    Y = np.sign(rng.normal(size=(n, t)) + Z[:, :1])
    w = {
        "none": np.ones(n),
        "integer": rng.integers(0, 4, size=n).astype(float),
        "fractional": rng.uniform(0.2, 3.0, size=n),
    }[weights]
    w[0] = 2.0  # a row of weight above 1 and one below in every case
    w[1] = 0.5
    return Z, Y, w


def _slope_accuracy(values, targets, w, delta: float) -> float:
    """How far ``log a`` of two calibrators may be apart when fitted on these
    leave-one-out values and on values within ``delta`` of them (module docstring): the
    derivative ``f'`` moves by ``(2 + a R) delta`` plus its own rounding ``10 n eps R (1 +
    a R)``, the root by that over ``f''``, and ``log a`` by that over ``a``."""
    calibrator = fit_calibrator("auto", values, targets, w)
    keep = np.all(np.isfinite(values), axis=1) & (w > 0)
    S, share = values[keep], w[keep] / w[keep].sum()
    logits = np.concatenate([np.zeros_like(S), S], axis=1) if S.shape[1] == 1 else S
    a = float(calibrator.slope[0])
    p = np.exp(a * logits - logsumexp(a * logits, axis=1, keepdims=True))
    curvature = float(share @ (np.sum(p * logits**2, 1) - np.sum(p * logits, 1) ** 2))
    R = float(np.ptp(logits))
    moved = (2 + a * R) * delta + 10 * S.shape[0] * EPS * R * (1 + a * R)
    return moved / (a * curvature)


def _refit_values(Z, Y, w, alpha, fit_intercept) -> np.ndarray:
    """The value of each row under the ridge fit without one observation of it (its
    weight lowered by ``min(w_i, 1)``), by a new solve each."""
    values = np.empty_like(Y)
    for i in range(Z.shape[0]):
        left = w.copy()
        left[i] -= min(w[i], 1.0)
        stats = RidgeStatistics(Z.shape[1], Y.shape[1]).update(Z, Y, left)
        solution = solve_ridge(stats, alpha=alpha, fit_intercept=fit_intercept)
        values[i] = Z[i] @ solution.coef.T + solution.intercept
    return values


def _refit_tolerance(Z, w, alpha, Y) -> float:
    G = (Z * w[:, None]).T @ Z
    kappa = (np.linalg.eigvalsh(G).max() + alpha) / alpha
    return 10 * (Z.shape[0] + Z.shape[1]) * EPS * kappa * np.abs(Y).max()


@pytest.mark.parametrize("shape", ["primal", "dual"])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("weights", ["none", "integer", "fractional"])
@pytest.mark.parametrize("t", [1, 3])
def test_loo_values_equal_refits(seed, shape, fit_intercept, weights, t) -> None:
    n, D = (40, 6) if shape == "primal" else (12, 30)
    Z, Y, w = _problem(seed, n, D, t, weights)
    alpha = 0.7
    expected = _refit_values(Z, Y, w, alpha, fit_intercept)
    tol = _refit_tolerance(Z, w, alpha, Y)
    counted = w > 0
    stats = RidgeStatistics(D, t).update(Z, Y, w)
    eig = eigen_ridge(stats, fit_intercept)
    got = [
        loo_values(penalty_terms(stats, alpha, fit_intercept), Z, Y, w),  # Cholesky
        loo_values(penalty_terms(stats, alpha, fit_intercept, eig), Z, Y, w),
    ]
    dual = solve_dual(
        dual_problem(Z.copy(), Y, w, fit_intercept=fit_intercept), alpha=alpha, loo_values=True
    )
    got.append(dual.loo)
    for values in got:
        assert_allclose(values[counted], expected[counted], rtol=0, atol=tol)
    assert np.all(np.isnan(dual.loo[~counted]))


def test_loo_values_of_the_chosen_penalty(seed) -> None:
    """After a choice among penalties (primal by leave-one-out, dual), the values are
    those at the chosen one."""
    Z, Y, w = _problem(seed, 40, 6, 2, "integer")
    alphas = np.array([0.1, 1.0, 10.0])
    stats = RidgeStatistics(6, 2).update(Z, Y, w)
    solution = solve_ridge(stats, alpha=1.0, alphas=alphas, blocks=[(Z, Y, w)])
    expected = _refit_values(Z, Y, w, solution.alpha, True)
    tol = _refit_tolerance(Z, w, solution.alpha, Y)
    got = loo_values(penalty_terms(stats, solution.alpha, True, solution.eig), Z, Y, w)
    assert_allclose(got[w > 0], expected[w > 0], rtol=0, atol=tol)


# -- the estimators ----------------------------------------------------------------------


def _classes(seed: int, n: int, n_classes: int):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    score = X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.7 * rng.normal(size=n)
    edges = np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1])
    return X, np.searchsorted(edges, score)


def _rff(D: int = 40) -> RandomFourierFeatures:
    return RandomFourierFeatures(gamma=0.3, n_components=D, random_state=0)


def _brute_calibrator(X, y, w, params, rows):
    """The calibrator fitted on the values of ``rows`` under refits without one
    observation of each."""
    full = FeatureRidgeClassifier(_rff(), calibration=None, **params).fit(X, y, sample_weight=w)
    values = []
    for i in rows:
        left = w.copy()
        left[i] -= min(w[i], 1.0)
        model = FeatureRidgeClassifier(_rff(), calibration=None, **params)
        scores = model.fit(X, y, sample_weight=left).decision_function(X[i : i + 1])
        values.append(np.reshape(scores, (1, -1)))
    targets = full._binarizer.transform(y[rows]).astype(float)
    values = np.concatenate(values)
    delta = _rounding(full, X, w) * max(1.0, float(np.abs(values).max()))
    return fit_calibrator("auto", values, targets, w[rows]), (values, targets, w[rows], delta)


@pytest.mark.parametrize("n", [120, 25], ids=["primal", "dual"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_calibrator_is_fitted_on_the_loo_values(seed, n, n_classes) -> None:
    X, y = _classes(seed, n, n_classes)
    w = np.random.default_rng(seed).integers(1, 3, size=n).astype(float)
    params = {"alpha": 0.5}
    clf = FeatureRidgeClassifier(_rff(), **params).fit(X, y, sample_weight=w)
    assert clf.solver_ == ("primal" if n > 40 else "dual")
    expected, sample = _brute_calibrator(X, y, w, params, np.arange(n))
    log_a = np.log(expected.slope[0])
    assert_allclose(np.log(clf.calibrator_.slope), log_a, rtol=0, atol=_slope_accuracy(*sample))


def test_weights_count_observations() -> None:
    """A row of weight 2 calibrates as two copies of it (scikit-learn's convention)."""
    X, y = _classes(0, 60, 3)
    w = np.where(np.arange(60) % 3 == 0, 2.0, 1.0)
    weighted = FeatureRidgeClassifier(_rff(), alpha=0.5).fit(X, y, sample_weight=w)
    repeat = np.repeat(np.arange(60), w.astype(int))
    repeated = FeatureRidgeClassifier(_rff(), alpha=0.5).fit(X[repeat], y[repeat])
    _assert_same_probabilities(repeated, weighted, X, y=y, w=w)


def _rounding(ref, X, w) -> float:
    """The bound ``10 (n + D) eps kappa`` on the relative rounding of the leave-one-out
    values of ``ref`` fitted on ``X`` with weights ``w`` (module docstring)."""
    Z = ref.feature_map_.transform(X)
    return _refit_tolerance(Z, w, ref.alpha_, np.ones(1))


def _assert_same_probabilities(got, ref, X, y, w=None, X_got=None) -> None:
    """The probabilities of ``got`` (on ``X_got``, default ``X``) equal those of ``ref``
    (a primal fit on ``X``, ``y``, ``w``) when their leave-one-out values differ by
    rounding (module docstring)."""
    w = np.ones(X.shape[0]) if w is None else w
    rows = sample_rows(X.shape[0], _classifiers.calibration_size(X.shape[0]))
    stats = ref.statistics_.to_host()
    terms = penalty_terms(stats, ref.alpha_, ref.fit_intercept)
    Y = ref._binarizer.transform(y[rows]).astype(float)
    values = loo_values(terms, ref.feature_map_.transform(X[rows]), Y, w[rows])
    delta = _rounding(ref, X, w) * max(1.0, float(np.abs(values).max()))
    accuracy = _slope_accuracy(values, Y, w[rows], delta)
    log_a = float(np.log(ref.calibrator_.slope[0]))
    assert_allclose(np.log(to_numpy(got.calibrator_.slope)), log_a, rtol=0, atol=accuracy)
    S = np.reshape(ref.decision_function(X), (X.shape[0], -1))
    a = np.exp(log_a)
    dl = a * np.expm1(accuracy) * np.abs(S).max() + a * delta
    P = got.predict_proba(X if X_got is None else X_got)
    assert_allclose(to_numpy(P), ref.predict_proba(X), rtol=0, atol=dl / 2)


@pytest.mark.parametrize("n_classes", [2, 4])
def test_probabilities_follow_the_decision_values(seed, n_classes) -> None:
    X, y = _classes(seed, 200, n_classes)
    clf = FeatureRidgeClassifier(_rff(), alpha=0.3).fit(X, y)
    P = clf.predict_proba(X)
    assert P.shape == (200, n_classes)
    assert_allclose(P.sum(axis=1), 1.0, rtol=0, atol=10 * n_classes * EPS)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[np.argmax(P, axis=1)])
    assert_allclose(clf.predict_log_proba(X), np.log(P), rtol=0, atol=1e-12)
    if n_classes == 2:
        scores = clf.decision_function(X)
        order = np.argsort(scores, kind="stable")
        assert np.all(np.diff(P[order, 1]) >= 0)


def test_sigmoid_calibration_is_platt_per_class(seed) -> None:
    X, y = _classes(seed, 200, 3)
    clf = FeatureRidgeClassifier(_rff(), alpha=0.3, calibration="sigmoid").fit(X, y)
    assert clf.calibrator_.method == "sigmoid"
    q = 1 / (
        1 + np.exp(-(clf.calibrator_.slope * clf.decision_function(X) + clf.calibrator_.offset))
    )
    assert_allclose(clf.predict_proba(X), q / q.sum(axis=1, keepdims=True), rtol=1e-12)


def test_no_probabilities_without_calibration() -> None:
    X, y = _classes(0, 60, 2)
    for clf in (
        FeatureRidgeClassifier(_rff(), calibration=None),
        FeatureRidgeClassifierCV(_rff(), calibration=None, refine_gamma=0),
    ):
        clf.fit(X, y)
        assert not hasattr(clf, "predict_proba")
        with pytest.raises(AttributeError) as error:
            clf.predict_proba(X)
        assert "calibration=None" in str(error.value.__cause__)


def test_kfold_search_keep_statistics_and_partial_fit(seed) -> None:
    X, y = _classes(seed, 150, 3)
    search = FeatureRidgeClassifierCV(_rff(), gammas=[0.3], cv=3).fit(X, y)
    ref = FeatureRidgeClassifier(_rff(), alpha=search.alpha_).fit(X, y)
    _assert_same_probabilities(search, ref, X, y)
    lean = FeatureRidgeClassifier(_rff(), alpha=0.3, keep_statistics=False).fit(X, y)
    kept = FeatureRidgeClassifier(_rff(), alpha=0.3).fit(X, y)
    np.testing.assert_array_equal(lean.predict_proba(X), kept.predict_proba(X))


def test_partial_fit_calibrates_on_its_latest_block(seed) -> None:
    X, y = _classes(seed, 150, 3)
    clf = FeatureRidgeClassifier(_rff(), alpha=0.5)
    clf.partial_fit(X[:100], y[:100], classes=[0, 1, 2]).partial_fit(X[100:], y[100:])
    w = np.ones(150)
    expected, sample = _brute_calibrator(X, y, w, {"alpha": 0.5}, np.arange(100, 150))
    log_a = np.log(expected.slope[0])
    assert_allclose(np.log(clf.calibrator_.slope), log_a, rtol=0, atol=_slope_accuracy(*sample))


def test_a_sample_beyond_the_cap(monkeypatch) -> None:
    """Beyond ``calibration_size`` rows a fixed uniform sample: the same probabilities twice,
    the calibrator of those rows' values."""
    monkeypatch.setattr(_classifiers, "calibration_size", lambda n: min(n, 40))
    X, y = _classes(0, 150, 3)
    a = FeatureRidgeClassifier(_rff(), alpha=0.5).fit(X, y)
    b = FeatureRidgeClassifier(_rff(), alpha=0.5).fit(X, y)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    rows = sample_rows(150, 40)
    assert rows.shape == (40,) and np.all(np.diff(rows) > 0)
    expected, sample = _brute_calibrator(X, y, np.ones(150), {"alpha": 0.5}, rows)
    log_a = np.log(expected.slope[0])
    assert_allclose(np.log(a.calibrator_.slope), log_a, rtol=0, atol=_slope_accuracy(*sample))


def test_scikit_learn_tools(seed) -> None:
    X, y = _classes(seed, 150, 2)
    clf = FeatureRidgeClassifier(_rff(), alpha=0.5)
    P = cross_val_predict(clf, X, y, cv=3, method="predict_proba")
    assert P.shape == (150, 2)
    assert roc_auc_score(y, clf.fit(X, y).predict_proba(X)[:, 1]) > 0.5
    calibrated = CalibratedClassifierCV(clf, cv=3).fit(X, y)
    assert calibrated.predict_proba(X).shape == (150, 2)
    X3, y3 = _classes(seed, 150, 3)
    assert roc_auc_score(y3, clf.fit(X3, y3).predict_proba(X3), multi_class="ovr") > 0.5


def test_float32_kept() -> None:
    X, y = _classes(0, 80, 3)
    clf = FeatureRidgeClassifier("passthrough", alpha=0.5).fit(X.astype(np.float32), y)
    scores = clf.decision_function(X.astype(np.float32))
    assert clf.predict_proba(X.astype(np.float32)).dtype == scores.dtype


# -- Dask and array-api-strict -----------------------------------------------------------


@pytest.mark.dask
@pytest.mark.parametrize("chunking", ["rows-37", "uneven-with-1-row"])
def test_dask_equals_numpy(monkeypatch, chunking) -> None:
    da = pytest.importorskip("dask.array")
    from tests._dask import as_dask

    # a sample across the chunks
    monkeypatch.setattr(_classifiers, "calibration_size", lambda n: min(n, 60))
    X, y = _classes(0, 150, 3)
    w = np.random.default_rng(0).integers(1, 3, size=150).astype(float)
    for params in ({"alpha": 0.5}, {"alphas": [0.1, 1.0]}):
        ref = FeatureRidgeClassifier(_rff(), **params).fit(X, y, sample_weight=w)
        got = FeatureRidgeClassifier(_rff(), **params).fit(
            as_dask(X, chunking), da.from_array(y, chunks=50), sample_weight=da.from_array(w, 40)
        )
        _assert_same_probabilities(got, ref, X, y, w)
        lazy = got.predict_proba(as_dask(X, chunking))
        assert_allclose(np.asarray(lazy.compute()), got.predict_proba(X), rtol=0, atol=1e-12)


def test_array_api_strict_equals_numpy(monkeypatch) -> None:
    xp = pytest.importorskip("array_api_strict")
    import sklearn

    monkeypatch.setattr(_classifiers, "calibration_size", lambda n: min(n, 60))
    X, y = _classes(0, 150, 3)
    ref = FeatureRidgeClassifier(_rff(), alpha=0.5).fit(X, y)
    with sklearn.config_context(array_api_dispatch=True):
        got = FeatureRidgeClassifier(_rff(), alpha=0.5).fit(xp.asarray(X), xp.asarray(y))
        P = got.predict_proba(xp.asarray(X))
        assert type(P).__module__.startswith("array_api_strict")
        _assert_same_probabilities(got, ref, X, y, X_got=xp.asarray(X))


def test_temperature_of_weighted_rows_is_that_of_repeated_rows(seed) -> None:
    """Integer weights count copies: the same objective, both minimized to rounding by
    Newton's steps (``1e-10`` relative covers the different summation orders)."""
    rng = np.random.default_rng(seed)
    scores = rng.standard_normal((50, 3))
    labels = np.argmax(scores + rng.standard_normal((50, 3)), axis=1)
    targets = np.where(labels[:, None] == np.arange(3), 1.0, -1.0)
    counts = rng.integers(1, 4, size=50)
    weighted = fit_calibrator("temperature", scores, targets, counts.astype(float))
    repeat = np.repeat(np.arange(50), counts)
    repeated = fit_calibrator("temperature", scores[repeat], targets[repeat], np.ones(repeat.size))
    assert_allclose(weighted.slope, repeated.slope, rtol=1e-10)
