"""The successive-halving search of FeatureRidgeCV, FeatureRidgeClassifierCV and
NystroemKernelRidgeCV (``search="halving"``, the default).

Each rung scores its bandwidths on a uniform sample of the rows with a map of fewer
features, so every score in ``cv_results_`` is that of a plain search on those rows with
that map: the tests compare each rung with that direct computation (bit for bit where it
is the same code on the same rows, to rounding against brute-force leave-one-out), and
the exhaustive option with the search it was before.  The rung sizes are lowered here
(``MIN_ROWS``, ``MIN_COMPONENTS``) so that small data have three rungs.

Rounding of a brute-force comparison: both solve ``(G + alpha P) w = Z^T y`` with a
condition number ``cond``; the forward error is ``c D eps cond`` relative (Higham 2002,
section 7.1), ``c = 64`` for the accumulated sums of the ``n`` rows.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_digits, make_friedman1
from sklearn.model_selection import KFold, PredefinedSplit

from kernelmaps import (
    FeatureLogisticRegressionCV,
    FeatureRidgeClassifierCV,
    FeatureRidgeCV,
    NystroemKernelRidgeCV,
    RandomFourierFeatures,
)
from kernelmaps.models._search import _halving
from kernelmaps.models._search._batches import RidgeSearch
from kernelmaps.models._search._gamma import extend_at_edge, golden_refine
from kernelmaps.models._search._pass import hashed_folds
from tests._array_api import PLACES, Place, assert_at, assert_fitted_at, dispatch

EPS = float(np.finfo(np.float64).eps)
D = 48


@pytest.fixture(autouse=True)
def _small_rungs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_halving, "MIN_ROWS", 60)
    monkeypatch.setattr(_halving, "FULL_SIZE_BELOW", 200)
    monkeypatch.setattr(_halving, "MIN_COMPONENTS", 8)


def _data(n: int = 540, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    return make_friedman1(n_samples=n, noise=0.5, random_state=seed)


def _rff(n_components: int = D) -> RandomFourierFeatures:
    return RandomFourierFeatures(n_components=n_components, random_state=0)


def _rung_rows(n: int, n_rows: int) -> np.ndarray:
    """The rows of a rung: the first ``n_rows`` of the search's seeded permutation."""
    return np.sort(np.random.default_rng(0).permutation(n)[:n_rows])


def _rungs(results: dict) -> list[np.ndarray]:
    return [np.flatnonzero(results["rung"] == r) for r in np.unique(results["rung"])]


def test_rung_plan_grows_to_the_full_size() -> None:
    for n, width in [(20000, 2048), (10**6, 4096), (3000, 256), (150, 48), (50000, None)]:
        plan = _halving.rung_plan(n, width)
        assert plan[-1] == _halving.Rung(n, width)
        costs = [r.fidelity(n, width) for r in plan]
        assert costs == sorted(costs) and len(set(costs)) == len(costs)
        assert all(r.n_rows >= min(n, _halving.MIN_ROWS) for r in plan)


def test_each_rung_equals_a_plain_search_on_its_rows_and_map() -> None:
    X, y = _data()
    search = FeatureRidgeCV(_rff(), alphas=[1e-2, 1.0]).fit(X, y)
    results = search.cv_results_
    rungs = _rungs(results)
    assert len(rungs) == 3
    for index in rungs:
        n_rows, width = (
            int(results["param_n_rows"][index[0]]),
            int(results["param_n_components"][index[0]]),
        )
        rows = _rung_rows(X.shape[0], n_rows)
        gammas = sorted(set(results["param_gamma"][index]))
        plain = FeatureRidgeCV(
            _rff(width), gammas=gammas, alphas=[1e-2, 1.0], search="exhaustive"
        ).fit(X[rows], y[rows])
        mine = {(g, a): s for g, a, s in zip(*(results[k][index] for k in _KEYS), strict=True)}
        theirs = plain.cv_results_
        for g, a, s in zip(*(theirs[k] for k in _KEYS), strict=True):
            assert mine[g, a] == s  # the same code on the same rows: bit for bit
        assert np.all(results["fidelity"][index] <= 1.0)
    final = rungs[-1]
    assert set(results["param_n_rows"][final]) == {X.shape[0]}
    assert results["rank_test_score"][search.best_index_] == 1
    assert search.best_index_ in final
    assert sorted(search.best_params_) == ["alpha", "gamma", "n_components"]


_KEYS = ("param_gamma", "param_alpha", "mean_test_score")


def test_a_rung_equals_brute_force_leave_one_out() -> None:
    X, y = _data(300)
    alphas = [1e-2, 1.0]
    search = FeatureRidgeCV(_rff(), alphas=alphas).fit(X, y)
    results = search.cv_results_
    index = _rungs(results)[0]
    n_rows, width = (
        int(results["param_n_rows"][index[0]]),
        int(results["param_n_components"][index[0]]),
    )
    rows = _rung_rows(X.shape[0], n_rows)
    for i in index[:4]:
        gamma, alpha = float(results["param_gamma"][i]), float(results["param_alpha"][i])
        Z = _rff(width).set_params(gamma=gamma).fit_transform(X[rows])
        A = np.hstack([Z, np.ones((Z.shape[0], 1))])
        penalty = np.diag(np.r_[np.full(width, alpha), 0.0])
        M = A.T @ A + penalty
        H = A @ np.linalg.solve(M, A.T)
        residual = (y[rows] - H @ y[rows]) / (1.0 - np.diag(H))
        errors = float(np.mean(residual**2))
        cond = float(np.linalg.cond(M))
        tol = 64 * width * EPS * cond * errors
        assert abs(-results["mean_test_score"][i] - errors) <= tol


def test_exhaustive_is_the_grid_extension_and_refinement_of_before() -> None:
    X, y = _data()
    exhaustive = FeatureRidgeCV(_rff(), search="exhaustive").fit(X, y)
    # the search written out: the auto grid in one batch, the extension at an edge, the
    # three golden-section passes, every candidate at full size
    probe = FeatureRidgeCV(_rff(), search="exhaustive", refine_gamma=0)
    rows, searched = _driven(probe, X, y)
    ratio = 10.0**0.5
    gammas = extend_at_edge(searched, _auto_gammas(probe, rows), ratio)
    golden_refine(searched, gammas, 3)
    theirs = [(r["gamma"], r["alpha"], float(np.mean(r["splits"]))) for r in searched.results]
    mine = list(zip(*(exhaustive.cv_results_[k] for k in _KEYS), strict=True))
    assert [tuple(map(float, m)) for m in mine] == theirs  # bit for bit
    assert "rung" not in exhaustive.cv_results_


def _auto_gammas(estimator, rows):
    gammas, _ = estimator._gamma_grid(rows, estimator._base_map())
    return gammas


def _driven(estimator, X, y):
    """A RidgeSearch made as ``fit`` makes it, its grid evaluated in one batch."""
    from kernelmaps.models._base import regression_rows

    seen = {}

    def keep(search, rows, base):
        seen["search"], seen["rows"] = search, rows
        search.evaluate(_auto_gammas(estimator, rows))

    estimator._run_gammas = keep
    estimator._validate_params()
    rows, y = regression_rows(estimator, X, y, reset=True)
    estimator._y_1d, estimator._weighted = True, False
    estimator._search(rows, y, None, None, None)
    assert isinstance(seen["search"], RidgeSearch)
    return seen["rows"], seen["search"]


def test_the_final_rung_equals_the_exhaustive_search_at_its_bandwidth() -> None:
    X, y = _data()
    search = FeatureRidgeCV(_rff(), cv=KFold(3)).fit(X, y)
    final = _rungs(search.cv_results_)[-1]
    gammas = sorted(set(search.cv_results_["param_gamma"][final]))
    assert len(gammas) == 1
    plain = FeatureRidgeCV(_rff(), gammas=gammas, cv=KFold(3), search="exhaustive").fit(X, y)
    np.testing.assert_array_equal(
        search.cv_results_["mean_test_score"][final], plain.cv_results_["mean_test_score"]
    )
    np.testing.assert_array_equal(search.coef_, plain.coef_)
    assert search.best_params_ == plain.best_params_


def test_given_folds_are_those_of_the_rung_rows() -> None:
    X, y = _data()
    labels = np.arange(X.shape[0]) % 3
    search = FeatureRidgeCV(_rff(), gammas=[0.05, 0.2, 1.0], cv=PredefinedSplit(labels))
    results = search.fit(X, y).cv_results_
    index = _rungs(results)[0]
    rows = _rung_rows(X.shape[0], int(results["param_n_rows"][index[0]]))
    width = int(results["param_n_components"][index[0]])
    plain = FeatureRidgeCV(
        _rff(width), gammas=[0.05, 0.2, 1.0], cv=PredefinedSplit(labels[rows]), search="exhaustive"
    ).fit(X[rows], y[rows])
    np.testing.assert_array_equal(
        results["split1_test_score"][index], plain.cv_results_["split1_test_score"]
    )


def test_classifier_rungs_count_held_out_accuracy() -> None:
    X, y = load_digits(return_X_y=True)
    X, y = X[:540] / 16.0, y[:540]
    search = FeatureRidgeClassifierCV(_rff(), gammas=[0.005, 0.02, 0.08], cv=3).fit(X, y)
    results = search.cv_results_
    index = _rungs(results)[0]
    rows = _rung_rows(X.shape[0], int(results["param_n_rows"][index[0]]))
    # the rung's folds are those of StratifiedKFold(3) on every row, restricted
    from sklearn.model_selection import StratifiedKFold

    labels = np.empty(X.shape[0], dtype=int)
    for k, (_, test) in enumerate(StratifiedKFold(3).split(X, y)):
        labels[test] = k
    width = int(results["param_n_components"][index[0]])
    plain = FeatureRidgeClassifierCV(
        _rff(width),
        gammas=[0.005, 0.02, 0.08],
        cv=PredefinedSplit(labels[rows]),
        search="exhaustive",
    ).fit(X[rows], y[rows])
    np.testing.assert_array_equal(
        results["mean_test_score"][index], plain.cv_results_["mean_test_score"]
    )
    assert search.predict_proba(X[:3]).shape == (3, 10)


@pytest.mark.dask
def test_dask_rungs_use_the_hashed_folds_of_their_rows() -> None:
    da = pytest.importorskip("dask.array")
    import dask

    X, y = _data()
    labels = hashed_folds(0, X.shape[0], 3)
    alphas = [1e-2, 1.0]
    reference = FeatureRidgeCV(_rff(), alphas=alphas, cv=PredefinedSplit(labels)).fit(X, y)
    with dask.config.set(scheduler="synchronous"):
        lazy = FeatureRidgeCV(_rff(), alphas=alphas, cv=3).fit(
            da.from_array(X, chunks=(97, 10)), da.from_array(y, chunks=97)
        )
    ours, theirs = lazy.cv_results_, reference.cv_results_
    np.testing.assert_array_equal(ours["param_gamma"], theirs["param_gamma"])
    np.testing.assert_array_equal(ours["param_n_rows"], theirs["param_n_rows"])
    # the statistics are merged in another order: the rounding of the solves (module
    # docstring), |z|^2 = 1 a row so cond <= (n + alpha) / alpha, on r2's scale
    # sum(y^2) / sum((y - mean)^2)
    cond = (X.shape[0] + min(alphas)) / min(alphas)
    scale = float(np.sum(y**2) / np.sum((y - y.mean()) ** 2))
    worst = float(np.max(np.abs(ours["mean_test_score"] - theirs["mean_test_score"])))
    assert worst <= 64 * D * EPS * cond * scale
    assert lazy.best_params_ == reference.best_params_


def test_nystroem_search_halves_rows_with_its_landmark_grid() -> None:
    X, y = _data()
    search = NystroemKernelRidgeCV(n_components=32, n_components_grid=[16, 32], random_state=0)
    results = search.fit(X, y).cv_results_
    rungs = _rungs(results)
    assert len(rungs) >= 2
    assert set(results["param_n_rows"][rungs[-1]]) == {X.shape[0]}
    assert set(results["param_n_components"][rungs[-1]]) == {16, 32}
    assert search.best_index_ in rungs[-1]
    np.testing.assert_allclose(search.predict(X[:5]), search.best_estimator_.predict(X[:5]))


def test_verbose_reports_each_rung(capsys: pytest.CaptureFixture) -> None:
    X, y = _data()
    FeatureRidgeCV(_rff(), verbose=1).fit(X, y)
    out = capsys.readouterr().out
    assert "rung 1 of 3 (" in out and "rung 2 of 3 (" in out
    assert "best gamma" in out and "kept" in out and "of a pass per bandwidth" in out


@pytest.mark.parametrize("place", PLACES)
def test_rungs_on_a_device_equal_numpy(place: Place) -> None:
    X, y = _data()
    X = X.astype(place.dtype)
    alphas = [1e-2, 1.0]
    reference = FeatureRidgeCV(_rff(), alphas=alphas).fit(X, y)
    with dispatch():
        search = FeatureRidgeCV(_rff(), alphas=alphas).fit(place.asarray(X), place.asarray(y))
        prediction = search.predict(place.asarray(X[:5]))
    assert_at(prediction, place)
    assert_fitted_at(search.best_estimator_, place)
    ours, theirs = search.cv_results_, reference.cv_results_
    np.testing.assert_array_equal(ours["param_n_rows"], theirs["param_n_rows"])
    assert np.all(np.isfinite(ours["mean_test_score"]))
    if place.dtype == "float64":  # float32's rounding would make this vacuous
        np.testing.assert_array_equal(ours["param_gamma"], theirs["param_gamma"])
        cond = (X.shape[0] + min(alphas)) / min(alphas)
        scale = float(np.mean(y**2))
        worst = float(np.max(np.abs(ours["mean_test_score"] - theirs["mean_test_score"])))
        assert worst <= 64 * D * EPS * cond * scale
        assert search.best_params_ == reference.best_params_


def test_logistic_rungs_equal_a_plain_search_on_their_rows() -> None:
    X, y = load_digits(return_X_y=True)
    X, y = X[:540] / 16.0, y[:540]
    labels = np.arange(X.shape[0]) % 3
    params = {"Cs": [0.1, 10.0], "gammas": [0.005, 0.02, 0.08]}
    search = FeatureLogisticRegressionCV(_rff(), cv=PredefinedSplit(labels), **params).fit(X, y)
    results = search.cv_results_
    rungs = _rungs(results)
    assert len(rungs) == 3 and search.best_index_ in rungs[-1]
    assert len(set(results["param_gamma"][rungs[-1]])) == 1
    index = rungs[0]
    rows = _rung_rows(X.shape[0], int(results["param_n_rows"][index[0]]))
    width = int(results["param_n_components"][index[0]])
    plain = FeatureLogisticRegressionCV(
        _rff(width), cv=PredefinedSplit(labels[rows]), search="exhaustive", **params
    ).fit(X[rows], y[rows])
    np.testing.assert_array_equal(
        results["mean_test_score"][index], plain.cv_results_["mean_test_score"]
    )
    assert "rung" not in plain.cv_results_


def test_take_rows_of_every_kind_of_rows() -> None:
    xp = pytest.importorskip("array_api_strict")
    from kernelmaps._rows import as_rows
    from kernelmaps._streamed_rows import StreamedRows

    X, y = _data(50)
    index = np.array([1, 7, 20, 49])
    kinds = [as_rows(X), StreamedRows(as_rows(X), xp, None, block_rows=7)]
    for rows in kinds:
        taken, (picked_y, w) = rows.take_rows(index, (y, 2.0))
        assert taken.n_rows == 4 and w == 2.0
        np.testing.assert_array_equal(np.asarray(taken.held.X), X[index])
        np.testing.assert_array_equal(picked_y, y[index])
        assert type(taken) is type(rows)
