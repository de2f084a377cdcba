"""NystroemKernelRidgeCV: the search of FeatureRidgeCV on nested Nyström features.

Every test is deterministic (fixed data and landmark seeds): the claims are identities
(the same model computed two ways), compared with tolerances derived from rounding.

Tolerances.  Two computations of the same ridge model differ by the rounding of their
solves.  A backward-stable solve of a system of condition ``kappa`` in dimension ``m``
has a relative error of at most about ``m eps kappa`` (Higham, *Accuracy and Stability
of Numerical Algorithms*, section 7.1); :func:`_tolerance` takes ten times that, of the
worse-conditioned of the two systems (``K_mm`` for the change of basis between the
Cholesky and symmetric Nyström features, ``K_nm^T K_nm + alpha K_mm`` for the direct
solves), relative to the size of what is compared.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
from sklearn.model_selection import KFold

import kernelmaps.models._nystroem_ridge_cv as nkrcv_module
from kernelmaps import FeatureRidgeCV, Nystroem, NystroemKernelRidge, NystroemKernelRidgeCV
from kernelmaps._random import check_random_state
from kernelmaps._rows import as_rows
from kernelmaps.kernels import Gaussian
from kernelmaps.models import RidgeStatistics
from kernelmaps.models._search._nested_nystroem import (
    NestedNystroem,
    ordered_cholesky,
    ordered_landmarks,
)
from kernelmaps.sampling import draw_landmarks, resolve_landmarks, rpcholesky

from ._counting import count_calls

EPS = np.finfo(np.float64).eps


def _tolerance(m: int, kappa: float, scale: float) -> float:
    """``10 m eps kappa`` relative to ``scale`` (see the module docstring)."""
    return 10.0 * m * EPS * kappa * max(scale, 1.0)


def _data(n: int = 80, n_targets: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 3))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] ** 2 + 0.1 * rng.normal(size=n)
    if n_targets is not None:
        y = np.column_stack([y, X[:, 2] - y][:n_targets])
    return X, y - y.mean(axis=0)


def _solve(K_nm: np.ndarray, K_mm: np.ndarray, y: np.ndarray, alpha: float):
    """The minimizer of ``|y - K_nm c|^2 + alpha c^T K_mm c`` and its system's condition."""
    H = K_nm.T @ K_nm + alpha * K_mm
    return np.linalg.solve(H, K_nm.T @ y), float(np.linalg.cond(H))


# -- the exact path is FeatureRidgeCV on Nyström features ---------------------------------


@pytest.mark.parametrize("landmarks, gammas", [("uniform", [0.1, 0.5]), ("rpcholesky", [0.3])])
@pytest.mark.parametrize("cv", [None, KFold(4, shuffle=True, random_state=0)])
def test_exact_path_equals_feature_ridge_cv_on_the_same_landmarks(landmarks, gammas, cv) -> None:
    """Same scores, same choice and same predictions as FeatureRidgeCV on
    ``Nystroem(landmarks=...)`` (symmetric features, no intercept): the Cholesky features
    are the symmetric ones times an orthogonal matrix.  (Uniform landmarks are the same
    for every gamma with one seed; rpcholesky's depend on gamma, hence one.)"""
    X, y = _data()
    search = {"gammas": gammas, "alphas": [1e-3, 1e-1, 10.0], "cv": cv}
    ours = NystroemKernelRidgeCV(n_components=15, landmarks=landmarks, random_state=0, **search)
    ours.fit(X, y)
    L = ours.landmarks_
    assert L.shape == (15, 3)  # no landmark skipped as round-off here
    theirs = FeatureRidgeCV(Nystroem(landmarks=L), fit_intercept=False, **search).fit(X, y)
    kappa = max(np.linalg.cond(Gaussian(gamma=g)(L, L)) for g in gammas)
    for key in ("mean_test_score", "param_gamma", "param_alpha"):
        a, b = np.asarray(ours.cv_results_[key]), np.asarray(theirs.cv_results_[key])
        np.testing.assert_allclose(a, b, rtol=0, atol=_tolerance(15, kappa, np.abs(b).max()))
    assert ours.best_params_ == theirs.best_params_
    assert ours.solver_ == "statistics" and isinstance(ours.best_estimator_, NystroemKernelRidge)
    expected = theirs.predict(X)
    np.testing.assert_allclose(
        ours.predict(X), expected, rtol=0, atol=_tolerance(15, kappa, np.abs(expected).max())
    )


# -- the criteria are those of refits of the Nyström model --------------------------------


def _fixed_landmarks(X: np.ndarray, y: np.ndarray, gamma: float, **search):
    model = NystroemKernelRidgeCV(n_components=12, gammas=[gamma], random_state=0, **search)
    model.fit(X, y)
    kernel = Gaussian(gamma=gamma)
    L = model.landmarks_
    return model, kernel(X, L), kernel(L, L)


def test_kfold_scores_equal_refits_on_each_split() -> None:
    X, y = _data()
    alphas = [1e-2, 1.0, 30.0]
    splitter = KFold(4, shuffle=True, random_state=1)
    model, K_nm, K_mm = _fixed_landmarks(X, y, 0.4, alphas=alphas, cv=splitter)
    results = model.cv_results_
    for k, (train, test) in enumerate(splitter.split(X)):
        for j, alpha in enumerate(alphas):
            c, kappa = _solve(K_nm[train], K_mm, y[train], alpha)
            residual = y[test] - K_nm[test] @ c
            r2 = 1.0 - residual @ residual / np.sum((y[test] - y[test].mean()) ** 2)
            got = results[f"split{k}_test_score"][j]
            assert abs(got - r2) <= _tolerance(12, kappa, abs(r2)), (k, alpha, got, r2)


@pytest.mark.parametrize("criterion", ["loo", "gcv"])
def test_criteria_equal_brute_force(criterion) -> None:
    """Leave-one-out: a refit without each row; GCV: ``(RSS / n) / (1 - tr(H) / n)^2``
    from the hat matrix ``H = K_nm (K_nm^T K_nm + alpha K_mm)^{-1} K_nm^T``."""
    X, y = _data(n=40)
    alphas = [1e-2, 1.0, 30.0]
    model, K_nm, K_mm = _fixed_landmarks(X, y, 0.4, alphas=alphas, criterion=criterion)
    n = X.shape[0]
    for j, alpha in enumerate(alphas):
        if criterion == "loo":
            errors, kappa = np.empty(n), 0.0
            for i in range(n):
                keep = np.arange(n) != i
                c, cond = _solve(K_nm[keep], K_mm, y[keep], alpha)
                errors[i], kappa = y[i] - K_nm[i] @ c, max(kappa, cond)
            expected = -np.mean(errors**2)
        else:
            H = K_nm.T @ K_nm + alpha * K_mm
            hat = K_nm @ np.linalg.solve(H, K_nm.T)
            residual = y - hat @ y
            kappa = float(np.linalg.cond(H))
            expected = -(residual @ residual / n) / (1.0 - np.trace(hat) / n) ** 2
        got = model.cv_results_["mean_test_score"][j]
        assert abs(got - expected) <= _tolerance(12, kappa, abs(expected)), (alpha, got)


def test_final_model_is_the_nystroem_solution_for_every_target() -> None:
    """``best_estimator_`` holds ``c`` of the Nyström normal equations (no intercept, the
    alpha of NystroemKernelRidge), one column per target; ``clone`` keeps its landmarks."""
    X, Y = _data(n_targets=2)
    model, K_nm, K_mm = _fixed_landmarks(X, Y, 0.4, alphas=[1e-2, 1.0], cv=3)
    c, kappa = _solve(K_nm, K_mm, Y, model.alpha_)
    assert model.dual_coef_.shape == (12, 2)
    tol = _tolerance(12, kappa, np.abs(Y).max())
    np.testing.assert_allclose(model.predict(X), K_nm @ c, rtol=0, atol=tol)
    params = model.best_estimator_.get_params()
    assert params["gamma"] == model.gamma_ and params["alpha"] == model.alpha_
    np.testing.assert_array_equal(params["landmarks"], model.landmarks_)


# -- above max_exact_components: FALKON's refit --------------------------------------------


def test_refit_above_the_exact_bound() -> None:
    X, y = _data()
    common = {"tol": 1e-8, "max_iter": 300, "random_state": 0}
    model = NystroemKernelRidgeCV(
        n_components=40,
        max_exact_components=20,
        gammas=[0.1, 0.5],
        alphas=[1e-2, 1.0],
        cv=3,
        **common,
    ).fit(X, y)
    assert set(model.cv_results_["param_n_components"]) == {20}
    best = model.best_estimator_
    assert isinstance(best, NystroemKernelRidge) and model.solver_ == "falkon"
    assert model.best_params_["n_components"] == best.n_components == 40 == model.n_components_
    assert best.gamma == model.best_params_["gamma"] and best.alpha == model.best_params_["alpha"]
    alone = NystroemKernelRidge(gamma=best.gamma, alpha=best.alpha, n_components=40, **common)
    alone.fit(X, y)
    np.testing.assert_array_equal(best.landmarks_, alone.landmarks_)
    # the same computation twice: equal to the rounding of the BLAS's sums
    np.testing.assert_allclose(best.predict(X), alone.predict(X), rtol=1e-12, atol=0)


def test_memory_bounds_the_exact_search(monkeypatch) -> None:
    """Half the available memory holds 8 (groups + 7) m^2 bytes: 12800 bytes with one
    group give m = 10, below max_exact_components."""
    monkeypatch.setattr(nkrcv_module, "available_memory", lambda: 12800)
    X, y = _data()
    model = NystroemKernelRidgeCV(
        n_components=30, n_components_grid=[5, 30], gammas=[0.3], alphas=[0.1], random_state=0
    ).fit(X, y)
    assert sorted(set(model.cv_results_["param_n_components"])) == [5, 10]
    expected = 30 if model.cv_results_["param_n_components"][model.best_index_] == 10 else 5
    assert model.n_components_ == expected


# -- nested numbers of landmarks ------------------------------------------------------------


@pytest.mark.parametrize("landmarks", ["uniform", "rpcholesky"])
def test_nested_statistics_are_those_of_the_leading_landmarks(landmarks) -> None:
    """The block of the statistics of m landmarks that the search scores for m' equals
    the statistics of the features ``K_nm' L'^{-T}`` of the first m' landmarks built from
    scratch, whose kernel is that of ``Nystroem`` on them."""
    X, y = _data(n=60)
    gamma, m, m_small = 0.5, 12, 5
    big = NestedNystroem(gamma=gamma, n_components=m, landmarks=landmarks, random_state=0)
    big.fit(X)
    columns, scale, small = big._leading(m_small)
    w = np.ones(X.shape[0])
    nested = RidgeStatistics(m, 1, centre=False).update(big.transform(X), y[:, None], w)
    nested = nested.restricted(columns, scale)
    kernel, L = Gaussian(gamma=gamma), big.components_[:m_small]
    factor = np.linalg.cholesky(kernel(L, L))
    Z = scipy.linalg.solve_triangular(factor, kernel(X, L).T, lower=True).T
    alone = RidgeStatistics(m_small, 1, centre=False).update(Z, y[:, None], w)
    kappa = np.linalg.cond(kernel(L, L))
    tol = _tolerance(m_small, kappa, np.abs(Z).max())
    np.testing.assert_allclose(small.transform(X), Z, rtol=0, atol=tol)
    n = X.shape[0]
    for a, b in ((nested.gram, alone.gram), (nested.cross, alone.cross)):
        np.testing.assert_allclose(
            a, b, rtol=0, atol=n * tol * max(np.abs(Z).max(), np.abs(y).max())
        )
    symmetric = Nystroem(gamma=gamma, landmarks=L).fit(X).transform(X)
    np.testing.assert_allclose(Z @ Z.T, symmetric @ symmetric.T, rtol=0, atol=m_small * tol)


def test_ordered_landmarks_are_the_chosen_set_in_the_order_chosen() -> None:
    X, _ = _data(n=200)
    kernel = Gaussian(gamma=0.5)
    for method in ("uniform", "rpcholesky"):
        L, idx = ordered_landmarks(as_rows(X), method, 20, kernel, check_random_state(3))
        _, expected = resolve_landmarks(
            X, method, 20, kernel=kernel, rng=check_random_state(3), unique=True
        )
        np.testing.assert_array_equal(np.sort(idx), expected)
        np.testing.assert_array_equal(L, X[idx])
    rng = check_random_state(3)
    draw = draw_landmarks(200, 3, np.float64, "rpcholesky", 20, kernel=kernel, rng=rng)
    pivots = rpcholesky(X, 20, kernel, np.random.default_rng(draw.seed), **draw.options)
    np.testing.assert_array_equal(idx, pivots.indices)


def test_ordered_cholesky_skips_round_off_pivots_and_nests() -> None:
    """A repeated landmark (index 100 repeats 70) has a zero residual: its column is
    zero, the kept block is LAPACK's Cholesky factor, and any prefix factors alone the
    same way (panels of 64 crossed)."""
    rng = np.random.default_rng(0)
    P = rng.normal(size=(150, 3))
    P[100] = P[70]
    K = Gaussian(gamma=1.0)(P, P)
    L = ordered_cholesky(K)
    assert not np.any(L[:, 100])
    kept = np.flatnonzero(np.diagonal(L) > 0)
    assert kept.size == 149
    expected = np.linalg.cholesky(K[np.ix_(kept, kept)])
    kappa = np.linalg.cond(K[np.ix_(kept, kept)])
    tol = _tolerance(150, kappa, np.abs(expected).max())
    np.testing.assert_allclose(L[np.ix_(kept, kept)], expected, rtol=0, atol=tol)
    np.testing.assert_allclose(ordered_cholesky(K[:80, :80]), L[:80, :80], rtol=0, atol=tol)


# -- kernels without a bandwidth, and the errors -------------------------------------------


def test_kernel_without_gamma_tunes_alpha_and_landmarks() -> None:
    X, y = _data()
    model = NystroemKernelRidgeCV(
        "linear", n_components=3, n_components_grid=[2, 3], alphas=[0.1, 1.0], random_state=0
    ).fit(X, y)
    assert model.gamma_ is None and model.best_estimator_.gamma is None
    assert model.best_params_["n_components"] in (2, 3)


@pytest.mark.parametrize(
    "params, fit, match",
    [
        ({"kernel": "linear", "n_components": 3, "gammas": [0.1]}, {}, "give gammas=None"),
        (
            {"n_components_grid": [30, 40], "max_exact_components": 20},
            {},
            "keep the largest, or raise max_exact_components",
        ),
        (
            {"n_components": 30, "max_exact_components": 20},
            {"sample_weight": np.ones(80)},
            "drop sample_weight or raise max_exact_components",
        ),
        ({"n_components_grid": [0, 5]}, {}, "positive integers"),
        ({"landmarks": "everything"}, {}, "landmarks"),
    ],
)
def test_parameter_errors_are_one_line_naming_the_fix(params, fit, match) -> None:
    X, y = _data()
    model = NystroemKernelRidgeCV(gammas=params.pop("gammas", [0.3]), alphas=[0.1], **params)
    with pytest.raises(ValueError, match=match) as error:
        model.fit(X, y, **fit)
    assert "\n" not in str(error.value)


def test_given_landmarks_are_searched_by_their_prefixes() -> None:
    X, y = _data()
    L = X[::8][:10]
    model = NystroemKernelRidgeCV(
        landmarks=L, n_components_grid=[4, 10], gammas=[0.3], alphas=[0.1], cv=3
    ).fit(X, y)
    assert sorted(set(model.cv_results_["param_n_components"])) == [4, 10]
    np.testing.assert_array_equal(model.landmarks_, L[: model.n_components_])


@pytest.mark.parametrize("criterion", ["loo", "gcv"])
def test_every_candidate_scored_when_the_landmarks_are_the_rows(criterion) -> None:
    """scikit-learn's 21-row blobs with the default 100 landmarks: every row a landmark,
    the small penalties interpolate the rows, and every candidate still has a finite
    score and spread (``1 - h_i`` and ``n - df`` taken without cancellation)."""
    from sklearn.datasets import make_blobs

    X, y = make_blobs(n_samples=21, centers=3, random_state=0, n_features=2)
    with pytest.warns(UserWarning, match="21 landmarks are used"):
        model = NystroemKernelRidgeCV(criterion=criterion).fit(X, y)
    results = model.cv_results_
    assert np.all(np.isfinite(results["mean_test_score"]))
    assert np.all(np.isfinite(results["std_test_score"]))


# -- landmarks chosen once per search -------------------------------------------------------


@pytest.mark.parametrize("landmarks, selections", [("kmeans", 1), ("rpcholesky", 3)])
def test_landmarks_that_do_not_depend_on_gamma_are_chosen_once(
    monkeypatch, landmarks, selections
) -> None:
    import kernelmaps.models._search._nested_nystroem as nested_module

    calls = count_calls(monkeypatch, nested_module, "ordered_landmarks")
    X, y = _data()
    NystroemKernelRidgeCV(
        n_components=12, landmarks=landmarks, gammas=[0.1, 0.3, 1.0], random_state=0
    ).fit(X, y)
    assert len(calls) == selections


def test_search_on_shared_landmarks_equals_the_map_fitted_with_the_chosen_gamma() -> None:
    """The k-means landmarks chosen once serve every bandwidth: the final model is the
    ridge model on ``NestedNystroem(gamma=gamma_)`` fitted directly with the same seed
    (same landmarks, to rounding), to ``10 m eps kappa``."""
    X, y = _data()
    search = NystroemKernelRidgeCV(
        n_components=12, landmarks="kmeans", gammas=[0.1, 0.3, 1.0], random_state=0
    ).fit(X, y)
    direct = NestedNystroem(
        gamma=search.gamma_, n_components=12, landmarks="kmeans", random_state=0
    ).fit(X)
    scale = np.abs(X).max()
    np.testing.assert_allclose(search.landmarks_, direct.components_, rtol=0, atol=EPS * scale)
    Z = direct.transform(X)
    H = Z.T @ Z + search.alpha_ * np.eye(12)
    expected = Z @ np.linalg.solve(H, Z.T @ y)
    L = direct.components_
    kappa = max(np.linalg.cond(H), np.linalg.cond(Gaussian(gamma=search.gamma_)(L, L)))
    tol = _tolerance(12, kappa, np.abs(expected).max())
    np.testing.assert_allclose(search.predict(X), expected, rtol=0, atol=tol)
