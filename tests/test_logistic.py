"""FeatureLogisticRegression against scikit-learn's LogisticRegression on the same features.

Tolerances.  Both fits minimize the same strongly convex objective ``f`` (the penalty
makes it ``mu``-strongly convex in the weights; in the intercepts through the loss), so
two points ``theta_1``, ``theta_2`` with gradients ``g_1``, ``g_2`` lie within
``|theta_1 - theta_2| <= (|g_1| + |g_2|) / mu`` of each other, ``mu`` the smallest
eigenvalue of the Hessian between them.  The tests compute both gradients and the
Hessian at the solution exactly (small problems, in NumPy), take ``mu`` as half the
Hessian's smallest eigenvalue there (the Hessian changes by far less than half over a
distance of that order on these data: its largest change is ``C sum s_i |z_i|^3
|theta_1 - theta_2| / 4``, checked in :func:`assert_same_solution`), and the objective
gap ``|f_1 - f_2| <= (|g_1| + |g_2|) |theta_1 - theta_2|``.  The multinomial objective
does not change when every class's intercept moves together: the intercepts are
compared centred and ``mu`` is taken on the directions orthogonal to that move.  Where
the two fits see different rounding (Dask's regrouped sums, another array library), the
bound holds unchanged: it needs only the gradients, computed here on the NumPy features.
No tolerance comes from a seed.
"""

from __future__ import annotations

import pickle
import warnings
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import logsumexp
from sklearn.calibration import CalibratedClassifierCV
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_predict
from sklearn.utils.class_weight import compute_class_weight

from kernelmaps import FeatureLogisticRegression, RandomBinningFeatures, RandomFourierFeatures
from tests._array_api import PLACES, Place, assert_at, assert_fitted_at, dispatch, host

N, D_IN, D = 240, 4, 24
EPS = float(np.finfo(np.float64).eps)


def _data(seed: int, n_classes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, D_IN))
    score = X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.7 * rng.normal(size=N)
    edges = np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1])
    y = np.digitize(score, edges)
    w = rng.uniform(0.2, 2.0, size=N)
    return X, y, w


def _rff() -> RandomFourierFeatures:
    return RandomFourierFeatures(gamma=0.3, n_components=D, random_state=0)


class Problem:
    """The objective of both estimators on fixed features, in NumPy: ``f``, its gradient
    and its Hessian in the parameters ``theta = [W, b]`` (rows: scores)."""

    def __init__(self, Z: np.ndarray, y: np.ndarray, s: np.ndarray, C: float, intercept: bool):
        self.classes = np.unique(y)
        K = self.classes.size
        self.K = 1 if K == 2 else K
        Y = (y[:, None] == self.classes[None, :]).astype(float)
        self.Y = Y[:, 1:] if K == 2 else Y
        self.A = np.hstack([Z, np.ones((Z.shape[0], 1))]) if intercept else Z
        self.s, self.C, self.D, self.intercept = s, C, Z.shape[1], intercept

    def theta(self, model: Any) -> np.ndarray:
        coef, b = np.asarray(model.coef_), np.asarray(model.intercept_, dtype=float)
        return np.hstack([coef, b.reshape(-1, 1)]) if self.intercept else coef.copy()

    def probabilities(self, theta: np.ndarray) -> np.ndarray:
        U = self.A @ theta.T
        if self.K == 1:
            return 1.0 / (1.0 + np.exp(-U))
        return np.exp(U - logsumexp(U, axis=1, keepdims=True))

    def objective(self, theta: np.ndarray) -> float:
        U = self.A @ theta.T
        if self.K == 1:
            loss = np.logaddexp(0.0, U[:, 0]) - self.Y[:, 0] * U[:, 0]
        else:
            loss = logsumexp(U, axis=1) - np.sum(self.Y * U, axis=1)
        W = theta[:, : self.D]
        return 0.5 * float(np.sum(W * W)) + self.C * float(self.s @ loss)

    def gradient(self, theta: np.ndarray) -> np.ndarray:
        R = self.s[:, None] * (self.probabilities(theta) - self.Y)
        g = self.C * R.T @ self.A
        g[:, : self.D] += theta[:, : self.D]
        return g

    def hessian(self, theta: np.ndarray) -> np.ndarray:
        """The Hessian over ``theta.ravel()`` (row-major: score by score)."""
        P = self.probabilities(theta)
        K, width = self.K, self.A.shape[1]
        if K == 1:
            curvature = (P * (1 - P))[:, :, None]
        else:
            curvature = P[:, :, None] * (np.eye(K)[None] - P[:, None, :])
        weighted = self.C * self.s[:, None, None] * curvature
        H = np.einsum("ikl,ia,ib->kalb", weighted, self.A, self.A).reshape(K * width, K * width)
        penalty = np.zeros(width)
        penalty[: self.D] = 1.0
        return H + np.diag(np.tile(penalty, K))

    def free(self) -> np.ndarray:
        """An orthonormal basis of the directions that change the objective (all but the
        common move of the multinomial intercepts)."""
        K, width = self.K, self.A.shape[1]
        if K == 1 or not self.intercept:
            return np.eye(K * width)
        common = np.zeros((K, width))
        common[:, -1] = 1.0 / np.sqrt(K)
        Q = np.linalg.qr(np.column_stack([common.ravel(), np.eye(K * width)]))[0]
        return Q[:, 1:]

    def centred(self, theta: np.ndarray) -> np.ndarray:
        out = theta.copy()
        if self.K > 1 and self.intercept:
            out[:, -1] -= out[:, -1].mean()
        return out


def assert_same_solution(problem: Problem, a: Any, b: Any) -> None:
    """The two fitted models ``a`` and ``b`` solve ``problem`` to the bound of the module
    docstring (plus the rounding of the gradients, ``eps`` times their terms' sizes)."""
    ta, tb = problem.centred(problem.theta(a)), problem.centred(problem.theta(b))
    Q = problem.free()
    ga, gb = problem.gradient(ta).ravel() @ Q, problem.gradient(tb).ravel() @ Q
    mu = float(np.linalg.eigvalsh(Q.T @ problem.hessian(ta) @ Q)[0]) / 2
    terms = problem.C * float(problem.s @ np.abs(problem.A).sum(axis=1)) + np.abs(ta).sum()
    rounding = 4 * problem.A.shape[0] * EPS * terms
    bound = (np.linalg.norm(ga) + np.linalg.norm(gb) + 2 * rounding) / mu
    distance = float(np.linalg.norm(ta - tb))
    assert distance <= bound, (distance, bound)
    # the Hessian moves by at most C sum s |a|^3 distance / 4 over that distance: far
    # less than mu, as the bound above assumes
    cubic = problem.C * float(problem.s @ np.linalg.norm(problem.A, axis=1) ** 3) / 4
    assert cubic * bound <= mu
    gap = abs(problem.objective(ta) - problem.objective(tb))
    assert gap <= (np.linalg.norm(ga) + np.linalg.norm(gb) + 2 * rounding) * bound + rounding


def _fits(
    seed: int, n_classes: int, *, C: float = 2.0, fit_intercept: bool = True, **fit: Any
) -> tuple[Problem, Any, Any]:
    X, y, _ = _data(seed, n_classes)
    params = {"C": C, "fit_intercept": fit_intercept, **fit.pop("params", {})}
    ours = FeatureLogisticRegression(_rff(), tol=1e-10, **params).fit(X, y, **fit)
    Z = ours.feature_map_.transform(X)
    theirs = LogisticRegression(tol=1e-12, max_iter=10_000, **params).fit(Z, y, **fit)
    s = np.asarray(fit.get("sample_weight", np.ones(N)), dtype=float)
    if params.get("class_weight") is not None:
        cw = compute_class_weight(
            params["class_weight"],
            classes=np.unique(y),
            y=y,
            sample_weight=fit.get("sample_weight"),
        )
        s = s * cw[np.searchsorted(np.unique(y), y)]
    return Problem(Z, y, s, C, fit_intercept), ours, theirs


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_same_solution_as_scikit_learn(seed: int, n_classes: int, fit_intercept: bool) -> None:
    problem, ours, theirs = _fits(seed, n_classes, fit_intercept=fit_intercept)
    assert ours.coef_.shape == theirs.coef_.shape == (problem.K, D)
    assert ours.intercept_.shape == theirs.intercept_.shape == (problem.K,)
    assert_same_solution(problem, ours, theirs)
    assert np.isclose(ours.objective_, problem.objective(problem.theta(ours)), rtol=1e-12)


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("class_weight", [None, "balanced", "dict"])
def test_weights_as_scikit_learn(seed: int, n_classes: int, class_weight: Any) -> None:
    w = _data(seed, n_classes)[2]
    if class_weight == "dict":
        class_weight = {c: 1.0 + c for c in range(n_classes)}
    problem, ours, theirs = _fits(
        seed, n_classes, sample_weight=w, params={"class_weight": class_weight}
    )
    assert_same_solution(problem, ours, theirs)


def test_probabilities(seed: int) -> None:
    ours = _fits(seed, 3)[1]
    X = _data(seed, 3)[0]
    proba = ours.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=4 * EPS * 3)
    np.testing.assert_allclose(np.log(proba), ours.predict_log_proba(X), rtol=1e-12, atol=1e-12)
    assert np.array_equal(ours.predict(X), ours.classes_[np.argmax(proba, axis=1)])
    binary = _fits(seed, 2)[1]
    p = binary.predict_proba(X)
    np.testing.assert_allclose(p[:, 1], 1 / (1 + np.exp(-binary.decision_function(X))), rtol=1e-12)


def test_warm_start_continues(seed: int) -> None:
    """Three Newton steps, then three more from there, are six Newton steps."""
    X, y, _ = _data(seed, 3)
    six = FeatureLogisticRegression(_rff(), tol=0.0, max_iter=6)
    three = FeatureLogisticRegression(_rff(), tol=0.0, max_iter=3, warm_start=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        six.fit(X, y)
        three.fit(X, y)
        first_map = three.feature_map_
        three.fit(X, y)
    assert three.feature_map_ is first_map
    np.testing.assert_allclose(three.coef_, six.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(three.intercept_, six.intercept_, rtol=1e-9, atol=1e-12)


def test_max_iter_warns() -> None:
    X, y, _ = _data(0, 2)
    with pytest.warns(ConvergenceWarning, match="max_iter=1"):
        FeatureLogisticRegression(_rff(), tol=0.0, max_iter=1).fit(X, y)


def test_uncached_equals_cached(seed: int) -> None:
    """cache_size=0 maps the rows at every pass: the same sums, the same fit."""
    X, y, _ = _data(seed, 3)
    cached = FeatureLogisticRegression(_rff(), tol=1e-10).fit(X, y)
    mapped = FeatureLogisticRegression(_rff(), tol=1e-10, cache_size=0).fit(X, y)
    np.testing.assert_allclose(mapped.coef_, cached.coef_, rtol=1e-10, atol=1e-12)


def test_sparse_input(seed: int) -> None:
    X, y, _ = _data(seed, 2)
    X[np.abs(X) < 0.8] = 0.0
    dense = FeatureLogisticRegression("passthrough", tol=1e-10).fit(X, y)
    sparse = FeatureLogisticRegression("passthrough", tol=1e-10).fit(sp.csr_matrix(X), y)
    problem = Problem(X, y, np.ones(N), 1.0, True)
    assert_same_solution(problem, dense, sparse)
    np.testing.assert_allclose(
        sparse.predict_proba(sp.csr_matrix(X)), dense.predict_proba(X), rtol=1e-8
    )


def test_float32_kept_and_pickled() -> None:
    X, y, _ = _data(0, 3)
    model = FeatureLogisticRegression(_rff()).fit(X.astype(np.float32), y)
    for method in ("decision_function", "predict_proba", "predict_log_proba"):
        assert getattr(model, method)(X.astype(np.float32)).dtype == np.float32
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(again.predict_proba(X), model.predict_proba(X))


def test_scikit_learn_tools(seed: int) -> None:
    X, y, _ = _data(seed, 3)
    model = FeatureLogisticRegression(_rff())
    proba = cross_val_predict(model, X, y, cv=3, method="predict_proba")
    assert proba.shape == (N, 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    calibrated = CalibratedClassifierCV(model, cv=3).fit(X, y)
    assert calibrated.predict_proba(X).shape == (N, 3)


def test_errors() -> None:
    X, y, _ = _data(0, 2)
    with pytest.raises(ValueError, match="at least one non-zero"):
        FeatureLogisticRegression(_rff()).fit(X, y, sample_weight=np.zeros(N))
    w = np.where(y == 0, 0.0, 1.0)
    with pytest.raises(ValueError, match=r"cannot weigh the classes \[0\]"):
        FeatureLogisticRegression(_rff(), class_weight="balanced").fit(X, y, sample_weight=w)
    with pytest.raises(ValueError, match="C"):
        FeatureLogisticRegression(C=0.0).fit(X, y)


# -- Dask, and the arrays of other libraries: the same solution as the NumPy fit ---------


@pytest.mark.dask
@pytest.mark.parametrize("chunking", ["one-chunk", "rows-37", "uneven-with-1-row"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_dask_equals_numpy(seed: int, chunking: str, n_classes: int) -> None:
    da = pytest.importorskip("dask.array")
    from tests._dask import as_dask

    X, y, w = _data(seed, n_classes)
    ref = FeatureLogisticRegression(_rff(), tol=1e-10, class_weight="balanced")
    ref.fit(X, y, sample_weight=w)
    lazy = as_dask(X, chunking)
    chunks = lazy.chunks[0]
    model = FeatureLogisticRegression(_rff(), tol=1e-10, class_weight="balanced").fit(
        lazy, da.from_array(y, chunks=chunks), sample_weight=da.from_array(w, chunks=chunks)
    )
    Z = ref.feature_map_.transform(X)
    cw = compute_class_weight("balanced", classes=np.unique(y), y=y, sample_weight=w)
    problem = Problem(Z, y, w * cw[y], 1.0, True)
    assert_same_solution(problem, ref, model)
    proba = model.predict_proba(lazy)
    assert isinstance(proba, da.Array)
    np.testing.assert_allclose(proba.compute(), model.predict_proba(X), rtol=1e-12)


@pytest.mark.dask
def test_dask_one_pass_per_evaluation() -> None:
    """Every evaluation of the objective and every Hessian-vector product is one Dask
    computation over the persisted parts, plus one for their statistics."""
    pytest.importorskip("dask.array")
    from kernelmaps._dask import _rows as dask_rows
    from tests._dask import as_dask

    X, y, _ = _data(0, 3)
    counted: list[Any] = []
    persist = dask_rows.DaskRows.persist

    def keep(self: Any, *args: Any) -> Any:
        parts = persist(self, *args)
        counted.append(parts)
        return parts

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(dask_rows.DaskRows, "persist", keep)
        model = FeatureLogisticRegression(_rff(), tol=1e-8, verbose=0)
        model.fit(as_dask(X, "rows-37"), y)
    assert len(counted) == 1
    assert counted[0].n_computations >= 2 + model.n_iter_[0]


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_array_api_equals_numpy(place: Place, n_classes: int) -> None:
    X, y, w = _data(0, n_classes)
    X = X.astype(place.dtype)
    ref = FeatureLogisticRegression(_rff(), tol=1e-10).fit(X, y, sample_weight=w)
    with dispatch():
        model = FeatureLogisticRegression(_rff(), tol=1e-10).fit(
            place.asarray(X), place.asarray(y), sample_weight=place.asarray(w)
        )
        proba = model.predict_proba(place.asarray(X))
        predicted = model.predict(place.asarray(X))
    assert_fitted_at(model, place)
    assert_at(proba, place)
    assert_at(predicted, place)
    assert host(proba).dtype == np.dtype(place.dtype)
    host_model = type(model)(_rff())
    host_model.coef_, host_model.intercept_ = host(model.coef_), host(model.intercept_)
    Z = ref.feature_map_.transform(X).astype(np.float64)
    assert_same_solution(Problem(Z, y, w, 1.0, True), ref, host_model)


def test_verbose_reports_each_newton_step(capsys: pytest.CaptureFixture[str]) -> None:
    X, y, _ = _data(0, 2)
    model = FeatureLogisticRegression(_rff(), tol=1e-8, verbose=1).fit(X, y)
    lines = [line for line in capsys.readouterr().out.splitlines() if "Newton step" in line]
    assert len(lines) == model.n_iter_[0]
    assert lines[0].startswith("[FeatureLogisticRegression] Newton step 1: objective")


def test_sparse_features(seed: int) -> None:
    """A map with sparse output (random binning): its CSR blocks are cached and used as
    they are."""
    X, y, _ = _data(seed, 3)
    binning = RandomBinningFeatures(n_grids=8, random_state=0)
    ours = FeatureLogisticRegression(binning, tol=1e-10).fit(X, y)
    Z = ours.feature_map_.transform(X)
    assert sp.issparse(Z)
    theirs = LogisticRegression(tol=1e-12, max_iter=10_000).fit(Z, y)
    assert_same_solution(Problem(Z.toarray(), y, np.ones(N), 1.0, True), ours, theirs)


# Kept last: the module's Client becomes the default scheduler once created.


@pytest.mark.dask
@pytest.mark.slow
def test_dask_cluster_equals_numpy(dask_client: Any) -> None:
    """The parts persisted on the workers of a real cluster, each pass run there."""
    da = pytest.importorskip("dask.array")
    from tests._dask import as_dask

    X, y, w = _data(0, 3)
    ref = FeatureLogisticRegression(_rff(), tol=1e-10).fit(X, y, sample_weight=w)
    lazy = as_dask(X, "rows-37")
    chunks = lazy.chunks[0]
    model = FeatureLogisticRegression(_rff(), tol=1e-10).fit(
        lazy, da.from_array(y, chunks=chunks), sample_weight=da.from_array(w, chunks=chunks)
    )
    Z = ref.feature_map_.transform(X)
    assert_same_solution(Problem(Z, y, w, 1.0, True), ref, model)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_hessian_products_take_the_kept_probabilities(n_classes: int) -> None:
    """Every Hessian-vector product is at a point just evaluated, and takes the
    probabilities its evaluation kept on the parts: none computes them again."""
    from kernelmaps.models import _feature_logistic
    from kernelmaps.models._logistic import _passes

    X, y, w = _data(0, n_classes)
    inside = [False]
    counts = {"products": 0, "probabilities in products": 0}
    hessp, probabilities = _passes.hessp, _passes._probabilities

    def product(*args: Any) -> Any:
        counts["products"] += 1
        inside[0] = True
        try:
            return hessp(*args)
        finally:
            inside[0] = False

    def counted(*args: Any) -> Any:
        counts["probabilities in products"] += inside[0]
        return probabilities(*args)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_feature_logistic, "hessp", product)
        patch.setattr(_passes, "_probabilities", counted)
        FeatureLogisticRegression(_rff(), tol=1e-8).fit(X, y, sample_weight=w)
    assert counts["products"] >= 2
    assert counts["probabilities in products"] == 0
