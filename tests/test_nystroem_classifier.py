"""NystroemKernelRidgeClassifier: FALKON's classification and its calibration.

The tolerances are bounds.  Conjugate gradient stopped at a relative residual ``r`` of a
system with condition number ``kappa`` is within ``kappa r |x*|`` of the solution ``x*``,
so two runs that both stopped are within ``kappa (r_1 + r_2) |x*|`` of each other; runs
that perform the same floating-point operations are equal.  The temperature is the
minimizer of a convex function of one variable, so a grid's best point is within one
grid step of it (the calibrator itself is tested in tests/test_calibration.py).
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from scipy.special import logsumexp
from sklearn.datasets import make_classification

from kernelmaps import NystroemKernelRidge, NystroemKernelRidgeClassifier
from kernelmaps.kernels import Gaussian
from kernelmaps.models import conjugate_gradient
from kernelmaps.models._calibration import fit_calibrator
from kernelmaps.models._falkon._solver import FalkonPreconditioner, landmark_gram
from kernelmaps.models._nystroem_ridge import _DEFAULT_CACHE_MIB, _cache_bytes
from tests._array_api import PLACES, Place, assert_at, assert_close, dispatch, host
from tests.test_array_api_falkon import _kernel_error, nystroem_bound

PARAMS = {"gamma": 0.2, "n_components": 30, "alpha": 1.0, "tol": 1e-10, "random_state": 0}


def _data(n_classes: int, seed: int, n: int = 240) -> tuple[np.ndarray, np.ndarray]:
    X, y = make_classification(
        n_samples=n,
        n_features=5,
        n_informative=4,
        n_redundant=0,
        n_classes=n_classes,
        n_clusters_per_class=1,
        flip_y=0.05,
        random_state=seed,
    )
    return X, y


def _indicator(y: np.ndarray, classes: np.ndarray) -> np.ndarray:
    return (y[:, None] == classes[None, :]).astype(np.float64)


def test_several_right_hand_sides_equal_each_alone(seed) -> None:
    rng = np.random.default_rng(seed)
    Q = np.linalg.qr(rng.standard_normal((40, 40)))[0]
    A = (Q * np.linspace(1.0, 50.0, 40)) @ Q.T
    B = rng.standard_normal((40, 3))
    tol = 1e-12
    together = conjugate_gradient(lambda V: A @ V, B, tol=tol, max_iter=200)
    kappa = 50.0
    for k in range(3):
        alone = conjugate_gradient(lambda V: A @ V, B[:, k], tol=tol, max_iter=200)
        exact = np.linalg.solve(A, B[:, k])
        bound = kappa * (together.residual[k] + alone.residual[0]) * np.linalg.norm(exact)
        assert np.linalg.norm(together.x[:, k] - alone.x) <= bound
    assert together.converged


@pytest.mark.parametrize("n_classes", [2, 3])
def test_decision_values_are_the_ridge_on_the_class_targets(n_classes, seed):
    X, y = _data(n_classes, seed)
    clf = NystroemKernelRidgeClassifier(**PARAMS).fit(X, y)
    Y = _indicator(y, clf.classes_)
    targets = 2.0 * Y[:, 1] - 1.0 if n_classes == 2 else Y
    ridge = NystroemKernelRidge(**PARAMS).fit(X, targets)
    # the same landmarks, the same conjugate gradient on the same right-hand sides
    np.testing.assert_array_equal(clf.landmarks_, ridge.landmarks_)
    np.testing.assert_array_equal(clf.dual_coef_, ridge.dual_coef_)
    np.testing.assert_array_equal(clf.decision_function(X), ridge.predict(X))
    assert clf.n_iter_ == ridge.n_iter_ and clf.converged_


@pytest.mark.parametrize("n_classes", [2, 3])
def test_probabilities_follow_the_decision_values(n_classes, seed) -> None:
    X, y = _data(n_classes, seed)
    labels = np.array(["ant", "bee", "cat"])[y]  # labels that are not numbers
    clf = NystroemKernelRidgeClassifier(**PARAMS).fit(X, labels)
    proba = clf.predict_proba(X)
    scores = clf.decision_function(X)
    assert proba.shape == (X.shape[0], n_classes)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=8 * np.finfo(float).eps)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[np.argmax(proba, axis=1)])
    if n_classes == 2:
        np.testing.assert_array_equal(clf.predict(X), clf.classes_[(scores > 0).astype(int)])
        expected = 1.0 / (1.0 + np.exp(-scores * clf.calibrator_.slope[0]))
        np.testing.assert_allclose(proba[:, 1], expected, rtol=1e-12)
    np.testing.assert_allclose(np.exp(clf.predict_log_proba(X)), proba, rtol=1e-12)
    assert clf.calibrator_.method == "temperature" and 0.0 < clf.calibrator_.slope[0] < np.inf
    again = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(again.predict_proba(X), proba)


def _fit_on(scores: np.ndarray, y: np.ndarray, classes: np.ndarray, method: str = "auto"):
    """``fit_calibrator`` on decision values ``scores`` of rows labelled ``y``."""
    S = np.reshape(scores, (scores.shape[0], -1))
    targets = 2.0 * _indicator(y, classes) - 1.0
    targets = targets[:, 1:] if targets.shape[1] == 2 else targets
    return fit_calibrator(method, S, targets, np.ones(S.shape[0]))


def _log_loss(scores: np.ndarray, Y: np.ndarray, a: float) -> float:
    """The mean negative log-likelihood of ``softmax(a s)``."""
    t = a * scores
    return float(np.mean(logsumexp(t, axis=1) - np.sum(Y * t, axis=1)))


def test_temperature_minimizes_the_log_loss(seed) -> None:
    X, y = _data(3, seed)
    clf = NystroemKernelRidgeClassifier(**PARAMS).fit(X, y)
    scores, Y = clf.decision_function(X), _indicator(y, clf.classes_)
    beta = clf.calibrator_.slope[0]
    # fitted in-sample, on the training rows' decision values
    np.testing.assert_array_equal(clf.calibrator_.slope, _fit_on(scores, y, clf.classes_).slope)
    # convex in beta: the best point of a grid of step h is within h of the minimizer
    grid = np.linspace(0.0, 3.0 * beta, 3001)
    losses = [_log_loss(scores, Y, b) for b in grid]
    assert abs(grid[int(np.argmin(losses))] - beta) <= grid[1] - grid[0]
    # and the fitted temperature's probabilities are those of the log-loss there
    loss = -np.mean(np.sum(Y * clf.predict_log_proba(X), axis=1))
    assert loss == pytest.approx(_log_loss(scores, Y, beta), rel=1e-12)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_calibration_parameter(n_classes, seed) -> None:
    X, y = _data(n_classes, seed)
    sigmoid = NystroemKernelRidgeClassifier(**PARAMS, calibration="sigmoid").fit(X, y)
    scores = sigmoid.decision_function(X)
    expected = _fit_on(scores, y, sigmoid.classes_, "sigmoid")
    assert sigmoid.calibrator_.method == "sigmoid"
    np.testing.assert_array_equal(sigmoid.calibrator_.slope, expected.slope)
    np.testing.assert_array_equal(sigmoid.predict_proba(X), expected.proba(scores))
    none = NystroemKernelRidgeClassifier(**PARAMS, calibration=None).fit(X, y)
    assert none.calibrator_ is None and not hasattr(none, "predict_proba")
    with pytest.raises(AttributeError) as error:
        none.predict_proba(X)
    assert "calibration=None" in str(error.value.__cause__)
    with pytest.raises(ValueError, match="calibration"):
        NystroemKernelRidgeClassifier(calibration="isotonic").fit(X, y)


def test_float32_is_kept(seed) -> None:
    X, y = _data(3, seed)
    clf = NystroemKernelRidgeClassifier(**{**PARAMS, "tol": 1e-5}).fit(X.astype(np.float32), y)
    assert clf.decision_function(X.astype(np.float32)).dtype == np.float32
    assert clf.predict_proba(X.astype(np.float32)).dtype == np.float32


def test_calibration_rows_are_drawn_above_the_limit(monkeypatch, seed) -> None:
    from kernelmaps.models import _nystroem_classifier

    X, y = _data(2, seed)
    monkeypatch.setattr(_nystroem_classifier, "_CALIBRATION_ROWS", 100)
    clf = NystroemKernelRidgeClassifier(**PARAMS).fit(X, y)
    picked = np.sort(np.random.default_rng(0).choice(X.shape[0], 100, replace=False))
    expected = _fit_on(clf.decision_function(X[picked]), y[picked], clf.classes_)
    np.testing.assert_array_equal(clf.calibrator_.slope, expected.slope)


def test_cache_auto_keeps_every_row() -> None:
    X, y = _data(2, 0)
    assert NystroemKernelRidge(**PARAMS).fit(X, y).n_cached_rows_ == X.shape[0]
    assert _cache_bytes(64, False) == 64 * 2**20
    assert _cache_bytes("auto", True) == _DEFAULT_CACHE_MIB * 2**20


@pytest.mark.dask
@pytest.mark.parametrize("n_classes", [2, 3])
def test_dask_equals_numpy(n_classes, seed) -> None:
    da = pytest.importorskip("dask.array")
    X, y = _data(n_classes, seed)
    local = NystroemKernelRidgeClassifier(**PARAMS).fit(X, y)
    fitted = NystroemKernelRidgeClassifier(**PARAMS).fit(
        da.from_array(X, chunks=(70, -1)), da.from_array(y, chunks=50)
    )
    np.testing.assert_array_equal(fitted.classes_, local.classes_)
    np.testing.assert_array_equal(fitted.landmarks_, local.landmarks_)
    # both stopped at their residuals: |beta_a - beta_b| <= kappa (r_a + r_b) |beta*|
    # on the preconditioned unknowns beta = A T c
    AT, kappa = _preconditioned(X, local.landmarks_)
    beta_local, beta_dask = AT @ local.dual_coef_, AT @ fitted.dual_coef_
    gap = np.linalg.norm(beta_local - beta_dask) / np.linalg.norm(beta_local)
    assert gap <= kappa * (local.residual_ + fitted.residual_)
    proba = fitted.predict_proba(da.from_array(X, chunks=(70, -1)))
    assert isinstance(proba, da.Array)
    np.testing.assert_allclose(proba.compute().sum(axis=1), 1.0, atol=8 * np.finfo(float).eps)
    assert np.mean(fitted.predict(X) == local.predict(X)) >= 0.95


def _preconditioned(X: np.ndarray, L: np.ndarray) -> tuple[np.ndarray, float]:
    """``A T`` (``beta = A T c``) and the condition number of FALKON's preconditioned
    system matrix."""
    kernel = Gaussian(gamma=PARAMS["gamma"])
    K_nm = kernel(X, L)
    H = K_nm.T @ K_nm + PARAMS["alpha"] * kernel(L, L)
    pre = FalkonPreconditioner(landmark_gram(kernel, L), X.shape[0], PARAMS["alpha"])
    AT = pre.A @ pre.T
    S = np.linalg.inv(AT)
    eig = np.linalg.eigvalsh(S.T @ H @ S)
    return AT, float(eig[-1] / eig[0])


@pytest.mark.parametrize("place", [p for p in PLACES if "strict" in p.id])
def test_array_api_equals_numpy(place: Place, seed) -> None:
    X, y = _data(3, seed, n=80)
    X = X.astype(place.dtype)
    params = {**PARAMS, "n_components": 10, "tol": 1e-5 if place.dtype == "float32" else 1e-12}
    expected = NystroemKernelRidgeClassifier(**params).fit(X, y)
    with dispatch():
        model = NystroemKernelRidgeClassifier(**params).fit(place.asarray(X), place.asarray(y))
        proba = model.predict_proba(place.asarray(X))
        labels = model.predict(place.asarray(X))
    assert_at(proba, place)
    assert_at(labels, place)
    assert_close(model.landmarks_, expected.landmarks_.astype(np.float64), 0.0, "landmarks_")
    kernel = Gaussian(gamma=PARAMS["gamma"])
    X64, L64 = X.astype(np.float64), expected.landmarks_.astype(np.float64)
    bound = nystroem_bound(kernel, X64, _indicator(y, np.arange(3)), L64)
    e_k = _kernel_error(kernel, X64, L64, place.eps)
    coef_tol = bound.coef(model.residual_, model.n_iter_, place.eps, e_k) + bound.coef(
        expected.residual_, expected.n_iter_, place.eps, e_k
    )
    assert_close(model.dual_coef_, expected.dual_coef_, coef_tol, "dual_coef_")
    assert np.mean(host(labels) == expected.predict(X)) >= 0.95


def test_streamed_rows_and_sparse_rows_equal_numpy(seed) -> None:
    """Rows streamed to a device, and sparse rows: the same classifier to the bound of
    the solutions (both stopped at their residuals)."""
    import scipy.sparse as sp

    array_api_strict = pytest.importorskip("array_api_strict")
    X, y = _data(3, seed, n=80)
    params = {**PARAMS, "n_components": 10, "tol": 1e-12}
    expected = NystroemKernelRidgeClassifier(**params).fit(X, y)
    kernel = Gaussian(gamma=PARAMS["gamma"])
    bound = nystroem_bound(kernel, X, _indicator(y, np.arange(3)), expected.landmarks_)
    eps = float(np.finfo(np.float64).eps)
    e_k = _kernel_error(kernel, X, expected.landmarks_, eps)
    device = array_api_strict.Device("device1")
    for model in (
        NystroemKernelRidgeClassifier(**params, device=device).fit(X, y),
        NystroemKernelRidgeClassifier(**params).fit(sp.csr_matrix(X), y),
    ):
        np.testing.assert_array_equal(model.landmarks_, expected.landmarks_)
        coef_tol = bound.coef(model.residual_, model.n_iter_, eps, e_k) + bound.coef(
            expected.residual_, expected.n_iter_, eps, e_k
        )
        assert_close(model.dual_coef_, expected.dual_coef_, coef_tol, "dual_coef_")
        assert isinstance(model.predict_proba(X), np.ndarray)


def test_works_with_scikit_learn_tools(seed) -> None:
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import cross_val_predict

    X, y = _data(2, seed)
    clf = NystroemKernelRidgeClassifier(**PARAMS)
    proba = cross_val_predict(clf, X, y, cv=3, method="predict_proba")
    assert proba.shape == (X.shape[0], 2) and roc_auc_score(y, proba[:, 1]) > 0.8
    calibrated = CalibratedClassifierCV(clf, cv=3).fit(X, y)
    assert calibrated.predict_proba(X).shape == (X.shape[0], 2)
    # the ranking of predict_proba is that of the decision values
    fitted = clf.fit(X, y)
    auc = roc_auc_score(y, fitted.decision_function(X))
    assert roc_auc_score(y, fitted.predict_proba(X)[:, 1]) == auc
