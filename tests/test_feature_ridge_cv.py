"""FeatureRidgeCV and FeatureRidgeClassifierCV: the search equals the refits it replaces.

The scores come from statistics instead of refits, so every test compares them with the
refits (GridSearchCV on the same splits, FeatureRidge's criteria, brute-force
leave-one-out, the Gaussian likelihood) to rounding: the tolerance of a score is
``c D eps cond`` times its scale, ``cond`` the condition number of the penalized Gram
matrix the two computations solve with (the forward error of a solve is ``eps cond``
relative, Higham 2002, section 7.1), ``D`` for the accumulated sums.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_digits, make_friedman1
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV, KFold, ShuffleSplit, StratifiedKFold

from kernelmaps import (
    FeatureRidge,
    FeatureRidgeClassifier,
    FeatureRidgeClassifierCV,
    FeatureRidgeCV,
    Nystroem,
    RandomFourierFeatures,
)
from kernelmaps.models import RidgeStatistics

from ._counting import count_calls

EPS = float(np.finfo(np.float64).eps)
GAMMAS = [0.05, 0.5]
ALPHAS = [1e-3, 1e-1, 10.0]


def _data(n: int = 240, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    X, y = make_friedman1(n_samples=n, noise=0.5, random_state=seed)
    return X, y


def _rff(D: int = 40) -> RandomFourierFeatures:
    return RandomFourierFeatures(n_components=D, random_state=0)


def _condition(X: np.ndarray, gamma: float, D: int, alpha: float) -> float:
    """The condition number of ``G_c + alpha I`` for the map at ``gamma`` on ``X``."""
    Z = _rff(D).set_params(gamma=gamma).fit_transform(X)
    evals = np.linalg.eigvalsh(np.cov(Z, rowvar=False, bias=True) * X.shape[0])
    return float((max(evals[-1], 0.0) + alpha) / (max(evals[0], 0.0) + alpha))


def _by_params(results: dict, keys: tuple[str, ...]) -> dict:
    return {tuple(round(float(p[k]), 12) for k in keys): i for i, p in enumerate(results["params"])}


@pytest.mark.parametrize("scoring", ["r2", "neg_mean_squared_error"])
def test_kfold_scores_equal_grid_search(scoring: str) -> None:
    X, y = _data()
    D, cv = 40, KFold(5)
    search = FeatureRidgeCV(_rff(D), gammas=GAMMAS, alphas=ALPHAS, cv=cv, scoring=scoring)
    search.fit(X, y)
    grid = GridSearchCV(
        FeatureRidge(_rff(D)),
        {"feature_map__gamma": GAMMAS, "alpha": ALPHAS},
        cv=cv,
        scoring=scoring,
    ).fit(X, y)
    ours = _by_params(search.cv_results_, ("gamma", "alpha"))
    theirs = {
        (round(p["feature_map__gamma"], 12), round(p["alpha"], 12)): i
        for i, p in enumerate(grid.cv_results_["params"])
    }
    assert set(ours) == set(theirs)
    for key, i in ours.items():
        j = theirs[key]
        cond = _condition(X, key[0], D, key[1])
        scale = 1.0 if scoring == "r2" else float(np.var(y)) + float(np.mean(y) ** 2)
        tol = (
            64 * D * EPS * cond * scale * (float(np.sum(y**2)) / float(np.sum((y - y.mean()) ** 2)))
        )
        for k in range(5):
            a = search.cv_results_[f"split{k}_test_score"][i]
            b = grid.cv_results_[f"split{k}_test_score"][j]
            assert abs(a - b) <= tol, (key, k, a, b, tol)
    assert search.best_params_["alpha"] == grid.best_params_["alpha"]
    assert search.best_params_["gamma"] == grid.best_params_["feature_map__gamma"]


def test_classifier_kfold_accuracy_equals_grid_search() -> None:
    X, y = load_digits(return_X_y=True)
    keep = y < 4
    X, y = X[keep][:300] / 16.0, y[keep][:300]
    cv, D = StratifiedKFold(3), 60
    gammas, alphas = [0.01, 0.05], [1e-2, 1.0, 30.0]
    for scoring in ("accuracy", "balanced_accuracy"):
        search = FeatureRidgeClassifierCV(
            _rff(D), gammas=gammas, alphas=alphas, cv=cv, scoring=scoring
        ).fit(X, y)
        grid = GridSearchCV(
            FeatureRidgeClassifier(_rff(D)),
            {"feature_map__gamma": gammas, "alpha": alphas},
            cv=cv,
            scoring=scoring,
        ).fit(X, y)
        ours = _by_params(search.cv_results_, ("gamma", "alpha"))
        for j, p in enumerate(grid.cv_results_["params"]):
            i = ours[(round(p["feature_map__gamma"], 12), round(p["alpha"], 12))]
            for k, (train, test) in enumerate(cv.split(X, y)):
                # a count of rows: equal but for the rows whose two best decision values
                # are within rounding of a tie (either computation may pick either class)
                model = FeatureRidgeClassifier(
                    _rff(D).set_params(gamma=p["feature_map__gamma"]), alpha=p["alpha"]
                ).fit(X[train], y[train])
                top = np.sort(model.decision_function(X[test]), axis=1)
                margin = top[:, -1] - top[:, -2]
                cond = _condition(X[train], p["feature_map__gamma"], D, p["alpha"])
                ties = np.sum(margin <= 64 * D * EPS * cond * np.abs(top).max())
                a = search.cv_results_[f"split{k}_test_score"][i]
                b = grid.cv_results_[f"split{k}_test_score"][j]
                smallest = len(test) if scoring == "accuracy" else np.bincount(y[test]).min()
                assert abs(a - b) <= ties / smallest


@pytest.mark.parametrize("criterion", ["loo", "gcv"])
def test_criteria_equal_feature_ridge(criterion: str) -> None:
    X, y = _data()
    D = 40
    search = FeatureRidgeCV(_rff(D), gammas=GAMMAS, alphas=ALPHAS, criterion=criterion).fit(X, y)
    ours = _by_params(search.cv_results_, ("gamma", "alpha"))
    for gamma in GAMMAS:
        model = FeatureRidge(
            _rff(D).set_params(gamma=gamma), alphas=ALPHAS, alpha_selection=criterion
        ).fit(X, y)
        for alpha, error in zip(ALPHAS, model.cv_errors_, strict=True):
            score = search.cv_results_["mean_test_score"][ours[(gamma, alpha)]]
            tol = 64 * D * EPS * _condition(X, gamma, D, alpha) * float(np.mean(y**2))
            assert abs(score + error) <= tol


def test_loo_equals_brute_force_refits() -> None:
    X, y = _data(n=40)
    D, gamma, alpha = 12, 0.3, 0.05
    search = FeatureRidgeCV(_rff(D), gammas=[gamma], alphas=[alpha], criterion="loo").fit(X, y)
    residuals = []
    for i in range(X.shape[0]):
        keep = np.arange(X.shape[0]) != i
        model = FeatureRidge(_rff(D).set_params(gamma=gamma), alpha=alpha).fit(X[keep], y[keep])
        residuals.append(y[i] - model.predict(X[i : i + 1])[0])
    brute = -float(np.mean(np.square(residuals)))
    tol = 64 * D * EPS * _condition(X, gamma, D, alpha) * float(np.mean(y**2)) * X.shape[0]
    assert abs(search.best_score_ - brute) <= tol


def test_evidence_equals_gaussian_likelihood() -> None:
    X, y = _data(n=60)
    D, gamma, alphas = 10, 0.3, [0.01, 1.0, 100.0]
    search = FeatureRidgeCV(
        _rff(D), gammas=[gamma], alphas=alphas, criterion="evidence", fit_intercept=False
    ).fit(X, y)
    Z = _rff(D).set_params(gamma=gamma).fit_transform(X)
    n = X.shape[0]
    for alpha, score in zip(alphas, search.cv_results_["mean_test_score"], strict=True):
        C = np.eye(n) + Z @ Z.T / alpha
        sigma2 = float(y @ np.linalg.solve(C, y)) / n
        logdet = np.linalg.slogdet(sigma2 * C)[1]
        direct = -0.5 * (logdet + n + n * np.log(2 * np.pi)) / n
        cond = np.linalg.cond(C)
        assert abs(score - direct) <= 64 * n * EPS * cond * max(1.0, abs(direct))


def test_nested_widths_are_the_smaller_maps() -> None:
    X, y = _data()
    big = _rff(64).set_params(gamma=0.2).fit(X)
    Zbig = big.transform(X)
    for width in (16, 32):
        columns, scale, small = big._leading(width)
        Zs = small.transform(X)
        np.testing.assert_allclose(Zs, scale * Zbig[:, columns], rtol=0, atol=8 * EPS)
        whole = RidgeStatistics(64, 1).update(Zbig, y[:, None], np.ones(len(y)))
        direct = RidgeStatistics(width, 1).update(Zs, y[:, None], np.ones(len(y)))
        restricted = whole.restricted(columns, scale)
        tol = 64 * len(y) * EPS * 2.0
        np.testing.assert_allclose(restricted.centred()[0], direct.centred()[0], atol=tol)
        np.testing.assert_allclose(restricted.centred()[1], direct.centred()[1], atol=tol * 3)


def test_best_model_is_the_refit_it_replaces() -> None:
    X, y = _data()
    search = FeatureRidgeCV(
        _rff(64), gammas=[0.2], alphas=ALPHAS, n_components_grid=[16, 32, 64], criterion="gcv"
    ).fit(X, y)
    model = search.best_estimator_
    assert model.feature_map_.n_components == search.n_components_
    Z = model.feature_map_.transform(X)
    ridge = Ridge(alpha=search.alpha_, solver="cholesky").fit(Z, y)
    cond = np.linalg.cond(
        np.cov(Z, rowvar=False, bias=True) * len(y) + search.alpha_ * np.eye(Z.shape[1])
    )
    tol = 64 * Z.shape[1] * EPS * cond * float(np.max(np.abs(y)))
    np.testing.assert_allclose(search.predict(X), ridge.predict(Z), rtol=0, atol=tol)
    assert search.gamma_ == 0.2 and search.best_params_["n_components"] == search.n_components_


def test_auto_search_brackets_and_refines() -> None:
    X, y = _data(n=300)
    search = FeatureRidgeCV(_rff(32), criterion="gcv").fit(X, y)
    gammas = np.unique(search.cv_results_["param_gamma"])
    assert gammas.size >= 9 + 3  # the grid and the refinement
    assert search.gamma_ in gammas
    scores = search.cv_results_["mean_test_score"]
    assert search.best_score_ == scores.max()
    assert search.cv_results_["rank_test_score"][search.best_index_] == 1
    assert scores[search.best_index_] == search.best_score_
    assert search.cv_results_["param_alpha"].shape == scores.shape
    assert np.all(np.isfinite(scores))


def test_results_table_keys() -> None:
    X, y = _data()
    search = FeatureRidgeCV(_rff(16), gammas=GAMMAS, alphas=ALPHAS, cv=3).fit(X, y)
    keys = set(search.cv_results_)
    assert {
        "param_gamma",
        "param_alpha",
        "param_n_components",
        "params",
        "split0_test_score",
        "split2_test_score",
        "mean_test_score",
        "std_test_score",
        "rank_test_score",
    } <= keys
    assert len(search.cv_results_["params"]) == len(GAMMAS) * len(ALPHAS)
    assert search.n_splits_ == 3 and search.scoring_ == "r2"


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"scoring": "r2", "criterion": "gcv"}, "give criterion='loo'"),
        ({"cv": 3, "scoring": "accuracy"}, "use one of"),
        ({"feature_map": "passthrough", "n_components_grid": [2]}, "n_components parameter"),
        ({"feature_map": "passthrough", "gammas": [1.0]}, "has no gamma parameter"),
        ({"alphas": [-1.0]}, "positive finite"),
        ({"n_components_grid": [0, 4]}, "positive integers"),
        ({"cv": ShuffleSplit(4, test_size=0.5, random_state=0)}, "overlap"),
    ],
)
def test_parameter_errors_name_the_fix(params: dict, message: str) -> None:
    X, y = _data(n=30)
    base = {"feature_map": _rff(8), "gammas": [0.5]} | params
    with pytest.raises(ValueError, match=message):
        FeatureRidgeCV(**base).fit(X, y)


def test_dask_results_do_not_depend_on_the_chunks() -> None:
    da = pytest.importorskip("dask.array")
    import dask

    X, y = _data(n=200)
    results = []
    with dask.config.set(scheduler="synchronous"):
        for chunks in (50, 73):
            search = FeatureRidgeCV(_rff(16), gammas=GAMMAS, alphas=ALPHAS, cv=3)
            search.fit(da.from_array(X, chunks=(chunks, -1)), da.from_array(y, chunks=chunks))
            results.append(search.cv_results_["mean_test_score"])
        loo = FeatureRidgeCV(_rff(16), gammas=GAMMAS, alphas=ALPHAS).fit(
            da.from_array(X, chunks=(64, -1)), y
        )
    tol = 64 * 16 * EPS * max(_condition(X, g, 16, ALPHAS[0]) for g in GAMMAS)
    np.testing.assert_allclose(results[0], results[1], rtol=0, atol=tol)
    memory = FeatureRidgeCV(_rff(16), gammas=GAMMAS, alphas=ALPHAS).fit(X, y)
    np.testing.assert_allclose(
        loo.cv_results_["mean_test_score"],
        memory.cv_results_["mean_test_score"],
        rtol=0,
        atol=tol * float(np.mean(y**2)),
    )


def test_float32_and_sparse_passthrough() -> None:
    X, y = _data()
    search = FeatureRidgeCV(_rff(16), gammas=GAMMAS, alphas=ALPHAS).fit(X.astype(np.float32), y)
    assert search.predict(X.astype(np.float32)).dtype == np.float32
    import scipy.sparse as sp

    linear = FeatureRidgeCV("passthrough", gammas=None, alphas=ALPHAS, cv=3)
    linear.fit(sp.csr_matrix(X), y)
    dense = FeatureRidgeCV("passthrough", gammas=None, alphas=ALPHAS, cv=3).fit(X, y)
    G = np.cov(X, rowvar=False, bias=True) * len(y)
    tol = 64 * X.shape[1] * EPS * float(np.linalg.cond(G + ALPHAS[0] * np.eye(X.shape[1])))
    np.testing.assert_allclose(
        linear.cv_results_["mean_test_score"], dense.cv_results_["mean_test_score"], atol=tol
    )


def test_weights_by_cholesky_equal_weights_by_eigendecomposition() -> None:
    from kernelmaps.models._ridge._path import EIGEN_FROM, train_weights

    X, y = _data()
    D = 40
    Z = _rff(D).set_params(gamma=0.5).fit_transform(X)
    stats = RidgeStatistics(D, 1).update(Z, y[:, None], np.ones(len(y)))
    alphas = np.logspace(-3, 3, EIGEN_FROM)  # one eigendecomposition for all of them
    by_eig = train_weights(stats, alphas, True)[0]
    by_cholesky = np.concatenate(  # a Cholesky factorization per penalty
        [train_weights(stats, part, True)[0] for part in np.array_split(alphas, 2)], axis=1
    )
    for j, alpha in enumerate(alphas):
        cond = _condition(X, 0.5, D, alpha)
        scale = float(np.abs(by_eig[:, j]).max())
        np.testing.assert_allclose(
            by_cholesky[:, j], by_eig[:, j], rtol=0, atol=64 * D * EPS * cond * scale
        )


@pytest.mark.parametrize(
    "landmarks, selections", [("uniform", 1), ("kmeans", 1), ("leverage", 3), ("rpcholesky", 3)]
)
def test_landmarks_that_do_not_depend_on_gamma_are_chosen_once(
    monkeypatch, landmarks: str, selections: int
) -> None:
    """Uniform and k-means landmarks are chosen once per search (every bandwidth refits
    ``K_mm`` on the same array); leverage and rpcholesky choose them with each kernel."""
    import kernelmaps.feature_maps._nystroem as nystroem_module

    calls = count_calls(monkeypatch, nystroem_module, "finish_landmarks")
    X, y = _data(n=120)
    nystroem = Nystroem(landmarks=landmarks, n_components=30, random_state=0)
    FeatureRidgeCV(nystroem, gammas=[0.02, 0.1, 0.5], alphas=ALPHAS, criterion="gcv").fit(X, y)
    assert len(calls) == selections


@pytest.mark.parametrize("estimator", [FeatureRidgeCV, FeatureRidgeClassifierCV])
def test_chosen_model_equals_the_map_fitted_with_the_chosen_gamma(seed, estimator) -> None:
    """The search's k-means landmarks (chosen once, at the first bandwidth) and its final
    model are those of ``Nystroem(gamma=gamma_)`` fitted directly with the same seed, and
    of the ridge model on its features: equal to the rounding of the solves, ``D eps cond``
    relative (as in :func:`test_best_model_is_the_refit_it_replaces`)."""
    X, y = _data(n=150, seed=seed)
    if estimator is FeatureRidgeClassifierCV:
        y = (y > np.median(y)).astype(int)
    nystroem = Nystroem(landmarks="kmeans", n_components=24, random_state=seed)
    search = estimator(nystroem, refine_gamma=2, cv=3).fit(X, y)
    direct = clone(nystroem).set_params(gamma=search.gamma_).fit(X)
    Z, Z_direct = search.feature_map_.transform(X), direct.transform(X)
    D = Z.shape[1]
    np.testing.assert_allclose(Z, Z_direct, rtol=0, atol=D * EPS * np.abs(Z_direct).max())
    model = FeatureRidge if estimator is FeatureRidgeCV else FeatureRidgeClassifier
    refit = model(direct, alpha=search.alpha_).fit(X, y)
    cond = np.linalg.cond(np.cov(Z, rowvar=False, bias=True) * len(y) + search.alpha_ * np.eye(D))
    scores = refit.predict(X) if estimator is FeatureRidgeCV else refit.decision_function(X)
    ours = search.predict(X) if estimator is FeatureRidgeCV else search.decision_function(X)
    tol = 64 * D * EPS * cond * max(1.0, float(np.max(np.abs(scores))))
    np.testing.assert_allclose(ours, scores, rtol=0, atol=tol)


def test_verbose_reports_the_fit_once_and_each_batch(capsys) -> None:
    X, y = _data(n=120)
    nystroem = Nystroem(landmarks="kmeans", n_components=20, random_state=0)
    FeatureRidgeCV(nystroem, gammas=[0.02, 0.1, 0.5], alphas=ALPHAS, verbose=1).fit(X, y)
    out = capsys.readouterr().out
    assert out.count("fitted once in") == 1
    assert out.count("maps fitted in") == 1 and out.count("; batch in") == 1


@pytest.mark.parametrize("cv, scoring", [(None, None), (3, "accuracy")])
def test_second_pass_takes_the_features_of_the_first(monkeypatch, cv, scoring) -> None:
    """Leave-one-out and K-fold accuracy read the rows again: they take the features the
    statistics pass kept (each map transforms the rows once) and score as if they mapped
    the rows again, to rounding (the same features: ``eps`` times the score's scale)."""
    import kernelmaps.models._search._batches as search_module
    import kernelmaps.models._search._pass as pass_module

    X, y = load_digits(return_X_y=True)
    X, y = X[:200] / 16.0, y[:200]
    calls = count_calls(monkeypatch, pass_module, "map_features")
    params = {"gammas": GAMMAS, "alphas": ALPHAS, "cv": cv, "scoring": scoring}
    kept = FeatureRidgeClassifierCV(_rff(40), **params).fit(X, y)
    assert len(calls) == len(GAMMAS)  # one block of rows, one map per bandwidth
    monkeypatch.setattr(search_module.RidgeSearch, "_kept_features", lambda self, c: None)
    again = FeatureRidgeClassifierCV(_rff(40), **params).fit(X, y)
    assert len(calls) == 3 * len(GAMMAS)
    a, b = kept.cv_results_["mean_test_score"], again.cv_results_["mean_test_score"]
    np.testing.assert_allclose(a, b, rtol=0, atol=8 * EPS * max(1.0, np.abs(b).max()))
    assert kept.best_params_ == again.best_params_
