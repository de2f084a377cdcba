"""Numerics of the ridge models: the dual solve, keep_statistics, memory checks, sample
weights, overflow, alpha -> 0, and the small and degenerate shapes.

Tolerances of the primal/dual comparisons come from the conditioning of the problem.  Both
solves are backward stable on a Gram (``D x D``) or kernel (``n x n``) matrix whose entries
carry a relative rounding of at most ``m u`` (``m = max(n, D)`` terms per entry, ``u`` the
unit roundoff), so each weight vector is within ``c m u kappa`` of the exact one, norm-wise,
``kappa = (l_max + alpha) / alpha`` the condition number of ``G_c + alpha I`` (the nonzero
eigenvalues ``l`` of ``G_c = A^T A`` and ``K = A A^T`` are the same).  ``c = 10`` covers the
few operations per entry, and the two solutions differ by at most twice that.  The
leave-one-out errors are smooth in the same resolvent, with the factor ``1 / (1 - h_i)^2``
at most ``1 / (1 - h_max)^2`` (computed below) and 2 for the square.
"""

from __future__ import annotations

import pickle
import re

import numpy as np
import pytest
import scipy.sparse as sp

from kernelmaps import (
    FeatureRidge,
    FeatureRidgeClassifier,
    KernelRidge,
    NystroemKernelRidge,
    RandomBinningFeatures,
    RandomFourierFeatures,
    _memory,
)
from kernelmaps.exceptions import InsufficientMemoryError, NonFiniteOutputError
from kernelmaps.models import RidgeStatistics, conjugate_gradient
from kernelmaps.models._ridge._solvers import solve_cholesky

U64 = np.finfo(np.float64).eps / 2
ALPHAS = np.array([1e-2, 1e-1, 1.0, 10.0])


def _primal(monkeypatch) -> None:
    """Make ``fit`` take the primal solve whatever the shape (the reference)."""
    for cls in (FeatureRidge, FeatureRidgeClassifier):
        monkeypatch.setattr(cls, "_choose_solver", lambda self, rows, head: ("primal", None))


def _weighted_centred(Z, w, fit_intercept):
    Z = Z.toarray() if sp.issparse(Z) else np.asarray(Z)
    if fit_intercept:
        Z = Z - (w @ Z) / w.sum()
    return Z * np.sqrt(w)[:, None]


def _tolerance(A: np.ndarray, alpha: float) -> float:
    """``20 m u kappa``: twice the bound ``c m u kappa`` of the module docstring."""
    l_max = np.linalg.norm(A, 2) ** 2
    return 20 * max(A.shape) * U64 * (l_max + alpha) / alpha


def _h_max(A: np.ndarray, alpha: float, w: np.ndarray, fit_intercept: bool) -> float:
    H = A @ np.linalg.solve(A.T @ A + alpha * np.eye(A.shape[1]), A.T)
    return float(np.max(np.diag(H) + (w / w.sum() if fit_intercept else 0.0)))


@pytest.fixture(scope="module")
def problem() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    Y = np.column_stack([np.sin(X[:, 0]), X[:, 1] ** 2]) + 0.1 * rng.normal(size=(40, 2))
    w = rng.uniform(0.2, 2.0, size=40)
    w[3] = 0.0  # a row of zero weight
    return X, Y, w


# -- the dual equals the primal ------------------------------------------------------------


@pytest.mark.parametrize("sparse_map", [False, True])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("selection", [None, "loo", "gcv"])
def test_dual_equals_primal(problem, monkeypatch, sparse_map, fit_intercept, selection) -> None:
    X, Y, w = problem
    fm = (
        RandomBinningFeatures(n_grids=20, random_state=0)
        if sparse_map
        else RandomFourierFeatures(gamma=0.5, n_components=300, random_state=0)
    )
    params = {"alpha": 0.1, "fit_intercept": fit_intercept}
    if selection is not None:
        params.update(alphas=ALPHAS, alpha_selection=selection)
    dual = FeatureRidge(fm, **params).fit(X, Y, w)
    assert dual.solver_ == "dual" and dual.statistics_ is None
    with monkeypatch.context() as m:
        _primal(m)
        primal = FeatureRidge(fm, **params).fit(X, Y, w)
    assert primal.solver_ == "primal"
    assert dual.alpha_ == primal.alpha_
    A = _weighted_centred(dual.feature_map_.transform(X), w, fit_intercept)
    tol = _tolerance(A, dual.alpha_)
    scale = np.max(np.abs(primal.coef_))
    np.testing.assert_allclose(dual.coef_, primal.coef_, rtol=0, atol=tol * scale)
    np.testing.assert_allclose(
        dual.intercept_, primal.intercept_, rtol=0, atol=tol * (1 + np.max(np.abs(Y)))
    )
    if selection is not None:
        assert dual.alpha_selection_ == primal.alpha_selection_ == selection
        cv_tol = 4 * _tolerance(A, ALPHAS[0]) / (1 - _h_max(A, ALPHAS[0], w, fit_intercept)) ** 2
        np.testing.assert_allclose(dual.cv_errors_, primal.cv_errors_, rtol=cv_tol)


def test_dual_classifier_equals_primal(problem, monkeypatch) -> None:
    X, _, w = problem
    labels = np.array(["a", "b", "c"])[np.arange(40) % 3]
    rff = RandomFourierFeatures(gamma=0.5, n_components=200, random_state=0)
    dual = FeatureRidgeClassifier(rff, alphas=ALPHAS).fit(X, labels, w)
    with monkeypatch.context() as m:
        _primal(m)
        primal = FeatureRidgeClassifier(rff, alphas=ALPHAS).fit(X, labels, w)
    assert (dual.solver_, primal.solver_) == ("dual", "primal")
    assert dual.alpha_ == primal.alpha_
    A = _weighted_centred(dual.feature_map_.transform(X), w, True)
    tol = _tolerance(A, dual.alpha_)
    np.testing.assert_allclose(
        dual.coef_, primal.coef_, rtol=0, atol=tol * np.abs(primal.coef_).max()
    )
    np.testing.assert_array_equal(dual.predict(X), primal.predict(X))
    lean = FeatureRidgeClassifier(rff, keep_statistics=False).fit(X, labels, w)
    assert lean.solver_ == "dual" and getattr(lean, "_training_rows", None) is None
    with pytest.raises(ValueError, match="FeatureRidgeClassifier was fitted with keep_stat"):
        lean.partial_fit(X, labels)
    # after a dual fit with the rows kept, partial_fit continues with the same labels
    kept = FeatureRidgeClassifier(rff).fit(X[:30], labels[:30], w[:30])
    kept.partial_fit(X[30:], labels[30:], sample_weight=w[30:])
    streamed = FeatureRidgeClassifier(rff).partial_fit(
        X[:30], labels[:30], np.unique(labels), sample_weight=w[:30]
    )
    streamed.partial_fit(X[30:], labels[30:], sample_weight=w[30:])
    np.testing.assert_allclose(kept.coef_, streamed.coef_, rtol=1e-10, atol=1e-12)


def test_solver_choice_follows_shape_and_memory(problem, monkeypatch) -> None:
    X, Y, _ = problem
    rff = RandomFourierFeatures(n_components=60, random_state=0)
    assert FeatureRidge(rff).fit(X, Y).solver_ == "dual"  # 40 rows < 60 features
    assert FeatureRidge(rff).fit(np.vstack([X, X]), np.vstack([Y, Y])).solver_ == "primal"
    # the dual's 40 x 60 features and 40 x 40 matrices (about 58 KiB) do not fit, the
    # primal's 60 x 60 ones (about 89 KiB) would not either: the dual is refused ...
    monkeypatch.setattr(_memory, "available_memory", lambda: 40_000)
    with pytest.raises(InsufficientMemoryError, match=r"dual solve \(the 40 x 60 features"):
        FeatureRidge(rff).fit(X, Y)
    # ... and with a wide sparse map whose dense estimate is large, a primal that fits wins
    wide = RandomFourierFeatures(n_components=42, random_state=0)
    monkeypatch.setattr(_memory, "available_memory", lambda: 50_000)
    assert FeatureRidge(wide).fit(X, Y).solver_ == "primal"


def test_float32_stays_float32_in_the_dual(problem) -> None:
    X, Y, _ = problem
    rff = RandomFourierFeatures(gamma=0.5, n_components=100, random_state=0)
    m64 = FeatureRidge(rff).fit(X, Y)
    m32 = FeatureRidge(rff).fit(X.astype(np.float32), Y)
    assert m32.solver_ == "dual" and m32.coef_.dtype == np.float64
    p32 = m32.predict(X.astype(np.float32))
    assert p32.dtype == np.float32
    # float32 features: relative rounding 2^-24 per feature, amplified by kappa
    A = _weighted_centred(m64.feature_map_.transform(X), np.ones(40), True)
    np.testing.assert_allclose(p32, m64.predict(X), atol=20 * 2**-24 * _tolerance(A, 1.0) / U64)


# -- keep_statistics and partial_fit after a dual fit --------------------------------------


def test_partial_fit_after_dual_fit_equals_streaming(problem) -> None:
    X, Y, w = problem
    rff = RandomFourierFeatures(gamma=0.5, n_components=80, random_state=0)
    model = FeatureRidge(rff, alpha=0.3).fit(X[:30], Y[:30], w[:30])
    assert model.solver_ == "dual" and model.statistics_ is None
    model.partial_fit(X[30:], Y[30:], w[30:])
    assert model.solver_ == "primal" and model.statistics_.n_samples == 40
    streamed = FeatureRidge(rff, alpha=0.3).partial_fit(X[:30], Y[:30], w[:30])
    streamed.partial_fit(X[30:], Y[30:], w[30:])
    np.testing.assert_allclose(model.coef_, streamed.coef_, rtol=1e-12, atol=1e-14)
    # the kept rows are copies: changing the caller's array changes nothing
    X2 = X.copy()
    again = FeatureRidge(rff, alpha=0.3).fit(X2[:30], Y[:30], w[:30])
    X2[:] = 0.0
    again.partial_fit(X[30:], Y[30:], w[30:])
    np.testing.assert_allclose(again.coef_, streamed.coef_, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("n_rows", [30, 200])  # dual, then primal
def test_keep_statistics_false_keeps_only_what_predict_needs(problem, n_rows) -> None:
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(n_rows, 3)), rng.normal(size=n_rows)
    rff = RandomFourierFeatures(gamma=0.5, n_components=100, random_state=0)
    kept = FeatureRidge(rff).fit(X, y)
    lean = FeatureRidge(rff, keep_statistics=False).fit(X, y)
    assert lean.statistics_ is None and getattr(lean, "_training_rows", None) is None
    np.testing.assert_array_equal(lean.predict(X), kept.predict(X))
    size_lean, size_kept = len(pickle.dumps(lean)), len(pickle.dumps(kept))
    # what was dropped: the 100 x 100 statistics (primal) or the 30 x 3 rows, y and w (dual)
    dropped = 100 * 100 * 8 if n_rows >= 100 else 30 * 5 * 8
    assert size_kept - size_lean >= dropped
    with pytest.raises(ValueError, match=r"fitted with keep_statistics=False.*partial_fit"):
        lean.partial_fit(X, y)


def test_stream_then_drop_the_statistics_with_the_last_block(problem) -> None:
    X, Y, _ = problem
    rff = RandomFourierFeatures(gamma=0.5, n_components=20, random_state=0)
    model = FeatureRidge(rff).partial_fit(X[:20], Y[:20])
    model.set_params(keep_statistics=False).partial_fit(X[20:], Y[20:])
    assert model.statistics_ is None
    whole = FeatureRidge(rff).fit(X, Y)
    np.testing.assert_allclose(model.predict(X), whole.predict(X), rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="keep_statistics"):
        model.partial_fit(X, Y)


def test_refit_forgets_the_previous_fit(problem) -> None:
    X, Y, _ = problem
    model = FeatureRidge("passthrough", alphas=ALPHAS).fit(X, Y)
    assert hasattr(model, "cv_errors_")
    model.set_params(alphas=None).fit(X, Y)
    assert not hasattr(model, "cv_errors_") and model.statistics_ is not None


# -- memory is checked before the large arrays -----------------------------------------------


def test_memory_refused_with_both_numbers(monkeypatch) -> None:
    rng = np.random.default_rng(2)
    X, y = rng.normal(size=(50, 10)), rng.normal(size=50)
    monkeypatch.setattr(_memory, "available_memory", lambda: 1000)
    primal = re.escape("primal solve (the 10 x 10 Gram matrix") + r".*needs 2\.\d KiB but 1000 B"
    with pytest.raises(InsufficientMemoryError, match=primal):
        FeatureRidge("passthrough").fit(X, y)
    with pytest.raises(InsufficientMemoryError, match=primal):
        FeatureRidge("passthrough").partial_fit(X, y)
    with pytest.raises(InsufficientMemoryError, match=r"50 x 50 kernel matrix needs.*1000 B"):
        KernelRidge().fit(X, y)
    with pytest.raises(InsufficientMemoryError, match=r"20 x 20 landmark kernel matrix"):
        NystroemKernelRidge(n_components=20, random_state=0).fit(X, y)


def test_cli_fit_with_100000_components_is_refused(tmp_path, monkeypatch, capsys) -> None:
    from kernelmaps.cli import main

    rng = np.random.default_rng(3)
    data = rng.normal(size=(8192, 4))
    path = tmp_path / "train.csv"
    np.savetxt(path, data, delimiter=",", header="a,b,c,y", comments="")
    monkeypatch.setattr(_memory, "available_memory", lambda: 2**30)
    argv = ["fit", str(path), "--target", "y", "--n-components", "100000"]
    status = main([*argv, "-o", str(tmp_path / "model.skops")])
    err = capsys.readouterr().err.strip()
    assert status == 2, err
    assert len(err.splitlines()) == 1
    # the dual's 8192 x 100000 features (6.1 GiB) and 8192 x 8192 matrices (1.5 GiB),
    # not the primal's 74.5 GiB Gram matrix
    assert re.search(r"8192 x 100000 features.*needs 7\.6 GiB but 1\.0 GiB", err), err
    assert not (tmp_path / "model.skops").exists()


# -- sample weights ----------------------------------------------------------------------


@pytest.mark.parametrize("estimator", [FeatureRidge("passthrough"), FeatureRidge()])
def test_bad_sample_weights(problem, estimator) -> None:
    X, Y, _ = problem
    w = np.ones(40)
    w[7] = -2.0
    with pytest.raises(ValueError, match=r"negative values \(the smallest, -2, at row 7\)"):
        estimator.fit(X, Y, w)
    with pytest.raises(ValueError, match=r"sums to more than float64 can hold.*alpha / c"):
        estimator.fit(X, Y, np.full(40, 1e307))
    with pytest.raises(ValueError, match="Input sample_weight contains NaN"):
        estimator.fit(X, Y, np.where(np.arange(40) == 5, np.nan, 1.0))
    with pytest.raises(ValueError, match="at least one non-zero"):
        estimator.fit(X, Y, np.zeros(40))


@pytest.mark.parametrize("n_rows", [40, 8])  # primal (3 columns), dual (8 < 20 features)
def test_huge_weights_give_the_rescaled_model(problem, n_rows) -> None:
    X, Y, _ = problem
    X, Y = X[:n_rows], Y[:n_rows]
    rff = RandomFourierFeatures(gamma=0.5, n_components=20, random_state=0)
    for fm in ("passthrough", rff):
        # weights 1e300 with alpha 1e290 are weights 1 with alpha 1e-10: the same model
        big = FeatureRidge(fm, alpha=1e290).fit(X, Y, np.full(n_rows, 1e300))
        unit = FeatureRidge(fm, alpha=1e-10).fit(X, Y)
        assert big.solver_ == unit.solver_
        np.testing.assert_allclose(big.predict(X), unit.predict(X), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("n_rows", [40, 2])  # primal, dual
def test_overflowing_weighted_sums_name_the_fix(problem, n_rows) -> None:
    X, Y, _ = problem
    Xb = 1e10 * X[:n_rows]
    with pytest.raises(NonFiniteOutputError, match=r"overflowed float64.*sample_weight is 1e"):
        FeatureRidge("passthrough").fit(Xb, Y[:n_rows], np.full(n_rows, 1e300))
    with pytest.raises(NonFiniteOutputError, match=r"target sums.*rescale y"):
        FeatureRidge("passthrough").fit(X[:n_rows], 1e160 * Y[:n_rows])


# -- finite outputs --------------------------------------------------------------------


def test_predictions_that_overflow_name_the_row(problem) -> None:
    X, Y, _ = problem
    # targets times 100: weights of tens, so that 1e308 times one of them overflows
    model = FeatureRidge("passthrough").fit(X, 100 * Y[:, 0])
    assert np.abs(model.coef_).max() > 2
    rows = X[:4].copy()
    rows[2] = 1e308
    with pytest.raises(NonFiniteOutputError, match=r"prediction for row 2 is not finite"):
        model.predict(rows)
    # finite in float64 (|sum| > 3.4e38 = float32's largest), not in float32
    aligned = np.sign(model.coef_) * 1e38
    with pytest.raises(NonFiniteOutputError, match=r"overflowed float32.*float64 input"):
        model.predict(np.vstack([aligned, aligned]).astype(np.float32))
    # inputs divided by 1000: the classifier's weights are 1000 times larger
    clf = FeatureRidgeClassifier("passthrough", alpha=1e-9).fit(X / 1000, X[:, 0] > 0)
    assert np.abs(clf.coef_).max() > 2
    with pytest.raises(NonFiniteOutputError, match="row 2"):
        clf.predict(rows)
    poly = KernelRidge("polynomial", degree=2, coef0=1.0, gamma=1.0).fit(X, Y)
    with pytest.raises(NonFiniteOutputError):
        poly.predict(np.full((1, 3), 1e200))


def test_kernel_ridge_refuses_a_non_finite_kernel_matrix(problem) -> None:
    X, Y, _ = problem
    with pytest.raises(NonFiniteOutputError, match=r"callable returned NaN or infinite"):
        KernelRidge(lambda A, B: np.full((A.shape[0], B.shape[0]), np.inf)).fit(X, Y)
    with pytest.raises(NonFiniteOutputError, match=r"overflowed .* smaller gamma"):
        KernelRidge(kernel="poly", degree=3, gamma=1.0).fit(X * 1e200, Y)


def test_kernel_ridge_coefficients_that_overflow_are_refused() -> None:
    # two rows 1e-7 apart: K has an eigenvalue of about 1e-14, above its rounding level
    # (4e-16), so it is kept and c = (y_1 - y_2) / 2e-14 along it overflows
    X = np.array([[0.0], [1e-7]])
    with pytest.raises(NonFiniteOutputError, match="coefficients are not finite"):
        KernelRidge(gamma=1.0, alpha=1e-300).fit(X, np.array([1e300, -1e300]))


def test_nystroem_with_huge_targets_scales_exactly(problem) -> None:
    X, Y, _ = problem
    params = {"n_components": 15, "alpha": 1e-3, "tol": 1e-10, "random_state": 0}
    small = NystroemKernelRidge(**params).fit(X, Y)
    # targets of 2^996 (about 7e299): every step is linear in them and a power of 2
    # scales floating-point numbers exactly, so the solution is exactly scaled (before,
    # the conjugate gradient's squared norms overflowed and it returned zeros)
    huge = NystroemKernelRidge(**params).fit(X, 2.0**996 * Y)
    np.testing.assert_array_equal(huge.dual_coef_, 2.0**996 * small.dual_coef_)
    with pytest.raises(NonFiniteOutputError, match=r"K_nm\^T y.*holds inf or NaN"):
        NystroemKernelRidge(**params).fit(X, np.full(40, 1.7e308))


def test_conjugate_gradient_scales_large_right_hand_sides() -> None:
    A = np.array([[4.0, 1.0], [1.0, 3.0]])
    b = np.array([1.0, 2.0])
    x = conjugate_gradient(lambda V: A @ V, b, tol=1e-14).x
    xb = conjugate_gradient(lambda V: A @ V, 1e300 * b, tol=1e-14).x
    np.testing.assert_allclose(xb, 1e300 * x, rtol=1e-14)
    with pytest.raises(ValueError, match="right-hand side b holds inf or NaN"):
        conjugate_gradient(lambda V: A @ V, np.array([np.nan, 1.0]))


def test_statistics_centre_huge_weighted_sums_without_overflow() -> None:
    Z, Y = np.array([[1.0], [3.0]]), np.array([[0.0], [2.0]])
    stats = RidgeStatistics(1, 1).update(Z, Y, np.full(2, 1e300))
    G, C, yy = stats.centred()
    np.testing.assert_allclose([G[0, 0], C[0, 0], yy[0]], [2e300, 2e300, 2e300], rtol=1e-14)


# -- alpha -> 0 ----------------------------------------------------------------------------


@pytest.mark.parametrize("alpha", [1e-300, 5e-324])
def test_kernel_ridge_duplicate_rows_and_tiny_alpha(alpha) -> None:
    rng = np.random.default_rng(4)
    X = rng.normal(size=(20, 3))
    X = np.vstack([X, X[:5]])
    y = rng.normal(size=25)
    model = KernelRidge(gamma=0.5, alpha=alpha).fit(X, y)  # was numpy's LinAlgError
    # the limit: y projected on the range of K, i.e. each pair of duplicates fitted by
    # the mean of its targets, the other rows exactly
    fitted = np.concatenate([(y[:5] + y[20:]) / 2, y[5:20], (y[:5] + y[20:]) / 2])
    K = KernelRidge(gamma=0.5).fit(X, y).kernel_(X, X)
    evals = np.linalg.eigvalsh(K)
    resolved = evals[evals > 25 * 2 * U64 * evals.max()]
    # backward-stable eigensolver: error n u kappa |y| on the resolved subspace, c = 10
    tol = 10 * 25 * U64 * resolved.max() / resolved.min() * np.linalg.norm(y)
    np.testing.assert_allclose(model.predict(X), fitted, rtol=0, atol=tol)
    assert np.all(np.isfinite(model.dual_coef_))


@pytest.mark.parametrize("n_rows", [40, 3])  # primal, dual
def test_feature_ridge_collinear_features_and_tiny_alpha(problem, n_rows) -> None:
    X, Y, _ = problem
    Z = np.hstack([X[:n_rows], X[:n_rows], X[:n_rows, :1]])  # rank 3, 7 columns
    y = Y[:n_rows, 0]
    model = FeatureRidge("passthrough", alpha=1e-300).fit(Z, y)
    assert model.solver_ == ("primal" if n_rows > 7 else "dual")
    # the limit is the minimum-norm least-squares solution on the centred data
    Zc, yc = Z - Z.mean(axis=0), y - y.mean()
    ref = np.linalg.lstsq(Zc, yc, rcond=None)[0]
    s = np.linalg.svd(Zc, compute_uv=False)
    s = s[s > max(Zc.shape) * 2 * U64 * s[0]]
    # normal equations square the condition number: (s_max / s_min)^2, c = 10
    tol = 10 * max(Zc.shape) * U64 * (s[0] / s[-1]) ** 2 * np.abs(ref).max()
    np.testing.assert_allclose(model.coef_, ref, rtol=0, atol=tol)
    tuned = FeatureRidge("passthrough", alphas=[1e-300, 1e-3, 1.0]).fit(Z, y)
    assert np.all(np.isfinite(tuned.coef_)) and np.all(np.isfinite(tuned.cv_errors_))
    if n_rows == 3:
        # alpha = 1e-300 interpolates the rows: 1 - h_i and the residual share the
        # factor alpha, and the leave-one-out error is that of the minimum-norm
        # interpolants of the other rows
        loo = []
        for i in range(n_rows):
            rest = np.arange(n_rows) != i
            Zr, yr = Z[rest] - Z[rest].mean(axis=0), y[rest] - y[rest].mean()
            w_min_norm = np.linalg.lstsq(Zr, yr, rcond=None)[0]
            predicted = y[rest].mean() + (Z[i] - Z[rest].mean(axis=0)) @ w_min_norm
            loo.append((y[i] - predicted) ** 2)
        np.testing.assert_allclose(tuned.cv_errors_[0], np.mean(loo), rtol=tol / np.abs(ref).max())
    np.testing.assert_allclose(solve_cholesky(np.ones((2, 2)), np.ones((2, 1)), 5e-324), 0.5)


def test_alpha_choice_undefined_for_every_candidate_is_an_error() -> None:
    X, y = np.array([[1.0, 2.0]]), np.array([3.0])
    for selection in ("loo", "gcv"):
        with pytest.raises(ValueError, match="undefined for every candidate"):
            FeatureRidge("passthrough", alphas=[0.1, 1.0], alpha_selection=selection).fit(X, y)


# -- small and degenerate shapes -----------------------------------------------------------


def _estimators():
    rff = RandomFourierFeatures(gamma=0.5, n_components=30, random_state=0)
    return [
        FeatureRidge("passthrough"),
        FeatureRidge(rff),
        FeatureRidge(rff, alphas=[0.1, 1.0], keep_statistics=False),
        FeatureRidge(RandomBinningFeatures(n_grids=5, random_state=0)),
        KernelRidge(),
        NystroemKernelRidge(n_components=5, random_state=0),
    ]


@pytest.mark.filterwarnings("ignore:n_components=5 is larger than n_samples")
@pytest.mark.parametrize("shape", [(1, 3), (2, 3), (6, 1), (9, 2)])
@pytest.mark.parametrize("target", ["constant", "random"])
@pytest.mark.parametrize("duplicated", [False, True])
def test_small_shapes_give_finite_models(shape, target, duplicated) -> None:
    rng = np.random.default_rng(5)
    X = rng.uniform(size=shape)
    if duplicated:
        X[-1] = X[0]
    y = np.full(shape[0], 2.5) if target == "constant" else rng.normal(size=shape[0])
    for estimator in _estimators():
        if "alphas" in estimator.get_params() and estimator.alphas is not None and shape[0] < 3:
            continue  # leave-one-out needs 3 rows with an intercept (tested above)
        for dtype in (np.float64, np.float32):
            Xd = X.astype(dtype)
            model = estimator.fit(Xd, y)
            predicted = model.predict(Xd)
            assert predicted.dtype == dtype and np.all(np.isfinite(predicted))
            if target == "constant" and not isinstance(model, (KernelRidge, NystroemKernelRidge)):
                np.testing.assert_allclose(predicted, 2.5, rtol=1e-5)
