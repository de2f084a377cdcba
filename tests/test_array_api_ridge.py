"""FeatureRidge and FeatureRidgeClassifier on the arrays of other libraries, and NumPy rows
streamed through a device (``device=``), compared with the NumPy fit.

Tolerances.  The device fit and the NumPy fit solve the same problem in float64 on the
host (one solver); they differ only by what the device computed in the dtype ``eps`` of
the features: the statistics ``G = sum w (z - s)(z - s)^T``, ``c = sum w (z - s)(y -
u)^T``, the means, the features themselves, and (for exact leave-one-out) the per-row
sums.  :class:`Rounding` bounds each (Higham's ``gamma_b = b eps`` for a ``b``-term sum):

* a block of ``b`` rows (the centring, the weighting and the ``b``-term products) has
  entries within ``gamma = (b + 4) eps`` of exact, relative to ``M = sum w |z - s| |z -
  s|^T`` (``s`` the shift the device used: the weighted mean of a row group, so ``|z -
  s| <= |z - zbar| + max_group |mean_group - zbar|``, computed on the data); the blocks
  are added in float64, and the NumPy fit adds its own ``(n + 4) eps64``.  Features
  computed on the device differ by ``e`` (the phases' rounding of
  ``tests/test_array_api_core.py``, times the features' scale), which moves ``G_jk`` by
  ``2 e (u_j + u_k) + 4 e^2 S_w`` (``u = sum w |z - s|``).  Centring ``G - a a^T / S_w``
  at most triples both: ``|dG|_2 <= |dG|_F <= 3 (gamma |M|_F + 4 e sqrt(D) |u| + 4 e^2 D
  S_w)``, and likewise ``|dc|``.
* The solve ``W = (G + alpha I)^{-1} c`` with ``G >= 0``: ``|dW| <= (|dc| + |dG| |W|) /
  alpha`` to first order (``|(G + alpha I)^{-1}| <= 1 / alpha``), plus the float64
  solve's own ``4 D eps64 kappa |W|``, ``kappa = (l_max + alpha) / alpha``.  The data are
  kept well conditioned by ``alpha`` a fixed share of ``S_w``, so these bounds are tight
  enough to mean something in float32.
* A prediction ``z^T w + b``, ``b = ybar - zbar^T w``: ``|z| |dW| + e |w|_1 + |db|`` plus
  the product's own ``(D + 2) eps (|z|^T |w| + |b|)``, ``|db| <= |dybar| + |zbar| |dW| +
  |dzbar| |w|``.
* Generalized cross-validation from the statistics: ``RSS = yy - 2 c^T w + w^T G w``
  moves by ``gamma sum w |y - u|^2 + 2 |dc| |W| + |dG| |W|^2 + 2 alpha |W| |dW|``, the
  degrees of freedom ``sum l / (l + alpha)`` by ``D |dG| / alpha``.  Exact leave-one-out:
  ``q_i = r_i / (1 - h_i)`` moves by ``|df_i| / (1 - h_i) + |r_i| |dh_i| / (1 - h_i)^2``
  with ``|dh_i| <= w_i (2 |p_i| |dp| + |p_i|^2 |dG| / alpha) / alpha + (D + 3) eps h_i``,
  and the error ``sum w q^2 / (S_w t)`` by ``sum w (2 |q| |dq| + dq^2) / (S_w t)``.

These are first-order worst cases on the reference data (no seed enters them); the
candidate penalties differ by a factor 10^3 and the tests check on the NumPy fit that
their errors are far apart, so the device chooses the same one.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pytest

import kernelmaps._streamed_rows as streamed_rows
from kernelmaps import FeatureRidge, FeatureRidgeClassifier, RandomFourierFeatures
from kernelmaps.models._ridge import _pass as _ridge_pass
from tests._array_api import (
    HAS_TORCH,
    PLACES,
    Place,
    assert_at,
    assert_close,
    assert_fitted_at,
    dispatch,
    host,
    torch_test_device,
)

EPS64 = float(np.finfo(np.float64).eps)
N, D_IN, D = 300, 4, 32
#: Rows of a block on the device (a fit in several blocks), and of a streamed block.
BLOCK = 64
STREAMED_BLOCK = 50


def _data(dtype: str, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, D_IN)).astype(dtype)
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.normal(size=N)
    w = rng.uniform(0.5, 1.5, size=N)
    w[::17] = 0.0
    return X, y, w


def _rff() -> RandomFourierFeatures:
    return RandomFourierFeatures(n_components=D, gamma=0.3, random_state=0)


@pytest.fixture(autouse=True)
def _small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fits in several row blocks on the device, and streamed in several blocks."""
    monkeypatch.setattr(_ridge_pass, "RIDGE_BLOCK_ROWS", BLOCK)
    monkeypatch.setattr(streamed_rows, "_MAX_BLOCK_ROWS", STREAMED_BLOCK)


# -- the bounds of the module docstring ----------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Rounding:
    """Bounds on what the device's rounding changes in the statistics of a fit."""

    dG: float
    dc: float
    dmean: float
    dymean: float
    dyy: float
    e: float
    eps: float
    S: float


def _features(feature_map: Any, X: np.ndarray) -> tuple[np.ndarray, float]:
    """The NumPy fit's features (float64) and the bound ``e`` on the device's difference."""
    if feature_map == "passthrough":
        return X.astype(np.float64), 0.0
    fitted = feature_map.fit(X)
    Z = fitted.transform(X).astype(np.float64)
    eps = float(np.finfo(X.dtype).eps)
    reach = float(np.max(np.abs(X.astype(np.float64) @ fitted.frequencies_)))
    return Z, float(np.max(np.abs(Z))) * (X.shape[1] + 4) * eps * (reach + 1.0)


def _about_shifts(A: np.ndarray, w: np.ndarray, parts: list[slice]) -> np.ndarray:
    """``|A - s|`` bounded for every shift ``s`` the fit may use (the weighted mean of one
    of the row groups ``parts``): ``|A - abar| + max_part |mean_part - abar|``."""
    mean = np.average(A, axis=0, weights=w)
    far = [np.abs(np.average(A[p], axis=0, weights=w[p]) - mean) for p in parts if w[p].sum() > 0]
    return np.abs(A - mean) + np.max(far, axis=0)


def rounding(
    Z: np.ndarray,
    Y: np.ndarray,
    w: np.ndarray,
    eps: float,
    e: float,
    *,
    centre: bool,
    block: int,
    parts: list[slice] | None = None,
) -> Rounding:
    """:class:`Rounding` for features ``Z``, targets ``Y`` (n, t) and weights ``w``, the
    device's products in blocks of ``block`` rows, shifted by the means of ``parts``
    (default: the blocks)."""
    n, dim = Z.shape
    S = float(w.sum())
    gamma = (block + 4) * eps + (n + 4) * EPS64
    if centre:
        parts = parts or [slice(i, i + block) for i in range(0, n, block)]
        A, B = _about_shifts(Z, w, parts), _about_shifts(Y, w, parts)
    else:
        A, B = np.abs(Z), np.abs(Y)
    Aw, u, v = A * w[:, None], w @ A, w @ B
    root = math.sqrt(dim)
    dG = 3 * (
        gamma * np.linalg.norm(A.T @ Aw) + 4 * e * root * np.linalg.norm(u) + 4 * e * e * dim * S
    )
    dc = 3 * (gamma * np.linalg.norm(Aw.T @ B) + 2 * e * root * np.linalg.norm(v))
    dmean = gamma * np.linalg.norm(u) / S + root * e if centre else 0.0
    dymean = gamma * np.linalg.norm(v) / S if centre else 0.0
    dyy = gamma * float(np.sum(w[:, None] * B * B))
    return Rounding(dG, dc, dmean, dymean, dyy, e, eps, S)


def coef_bound(rd: Rounding, G: np.ndarray, W: np.ndarray, alpha: float) -> float:
    """``|dW|_F`` for the coefficients ``W`` (t, D) at ``alpha`` of the Gram matrix ``G``."""
    lam = float(np.linalg.eigvalsh(G)[-1])
    norm = float(np.linalg.norm(W))
    solve = 4 * G.shape[0] * EPS64 * (lam + alpha) / alpha * norm
    return (rd.dc + rd.dG * norm) / alpha + solve


def prediction_bound(
    rd: Rounding, Z: np.ndarray, W: np.ndarray, b: np.ndarray, dW: float
) -> np.ndarray:
    """Per row, ``|df|`` of the predictions of ``(W, b)`` on the rows ``Z``."""
    zbar = np.linalg.norm(Z.mean(axis=0))
    w_norm, w_l1 = float(np.linalg.norm(W)), float(np.max(np.sum(np.abs(W), axis=1)))
    db = rd.dymean + zbar * dW + rd.dmean * w_norm
    products = (Z.shape[1] + 2) * rd.eps * (np.abs(Z) @ np.abs(W).T + np.abs(b)).max(axis=1)
    return np.linalg.norm(Z, axis=1) * dW + rd.e * w_l1 + db + products


def _problem(model: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(G, W, b)`` of a NumPy primal fit: its Gram matrix, coefficients (t, D), intercept."""
    stats = model.statistics_
    G = stats.centred()[0] if model.fit_intercept else stats.uncentred()[0]
    return G, np.atleast_2d(model.coef_), np.atleast_1d(model.intercept_)


def gcv_bound(rd: Rounding, G: np.ndarray, W: np.ndarray, alpha: float, cv: float, n: int) -> float:
    """``|d GCV(alpha)|`` (the module docstring), for the NumPy fit's ``W`` at ``alpha``."""
    dW = coef_bound(rd, G, W, alpha)
    norm = float(np.linalg.norm(W))
    lam = np.clip(np.linalg.eigvalsh(G), 0.0, None)
    df = 1.0 + float(np.sum(lam / (lam + alpha)))
    d_rss = rd.dyy + 2 * rd.dc * norm + rd.dG * norm**2 + 2 * alpha * norm * dW
    d_df = G.shape[0] * rd.dG / alpha
    return d_rss / W.shape[0] / rd.S / (1 - df / n) ** 2 + cv * 2 * d_df / (n - df)


def loo_bound(
    rd: Rounding, Z: np.ndarray, Y: np.ndarray, w: np.ndarray, fit: Any, G: np.ndarray
) -> float:
    """``|d LOO(alpha)|`` for the NumPy fit ``fit`` at its alpha (intercept fitted)."""
    _, W, b = _problem(fit)
    alpha = float(fit.alpha_)
    dW = coef_bound(rd, G, W, alpha)
    P = Z - np.average(Z, axis=0, weights=w)
    p2 = np.sum(P * np.linalg.solve(G + alpha * np.eye(G.shape[0]), P.T).T, axis=1)
    h = w * p2 + w / rd.S
    p = np.linalg.norm(P, axis=1)
    dp = rd.dmean + math.sqrt(Z.shape[1]) * rd.e + (Z.shape[1] + 2) * rd.eps * (p + 1.0)
    dh = w * (2 * p * dp + p * p * rd.dG / alpha) / alpha + (Z.shape[1] + 3) * rd.eps * h
    assert np.max(h + dh) < 1, "a row is nearly fitted exactly: the bound does not apply"
    R = Y - (Z @ W.T + b)
    df = prediction_bound(rd, Z, W, b, dW)[:, None]
    q = R / (1 - h)[:, None]
    dq = df / (1 - h)[:, None] + np.abs(R) * (dh / (1 - h) ** 2)[:, None]
    return float(np.sum(w[:, None] * (2 * np.abs(q) * dq + dq * dq))) / (rd.S * Y.shape[1])


# -- FeatureRidge on X's device ----------------------------------------------------------

CASES = {
    "rff": {"feature_map": "rff", "alpha": 0.05},
    "rff-no-intercept": {"feature_map": "rff", "alpha": 0.05, "fit_intercept": False},
    "passthrough-two-targets": {"feature_map": "passthrough", "alpha": 0.01, "targets": 2},
}


def _model(params: dict[str, Any], S: float, cls: type = FeatureRidge, **extra: Any) -> Any:
    """The estimator of a case: penalties given as shares of the weight sum ``S``."""
    kwargs = {k: v for k, v in params.items() if k not in ("feature_map", "targets")}
    if "alpha" in kwargs:
        kwargs["alpha"] = kwargs["alpha"] * S
    if "alphas" in kwargs:
        kwargs["alphas"] = [a * S for a in kwargs["alphas"]]
    feature_map = params["feature_map"]
    return cls(_rff() if feature_map == "rff" else feature_map, **kwargs, **extra)


def _targets(y: np.ndarray, X: np.ndarray, params: dict[str, Any]) -> np.ndarray:
    return np.c_[y, X[:, 2] ** 2] if params.get("targets", 1) == 2 else y


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("case", list(CASES))
def test_feature_ridge_follows_x(place: Place, case: str) -> None:
    params = CASES[case]
    X, y, w = _data(place.dtype)
    y = _targets(y, X, params)
    ref = _model(params, w.sum()).fit(X, y, sample_weight=w)
    with dispatch():
        model = _model(params, w.sum()).fit(
            place.asarray(X), place.asarray(y, "float64"), sample_weight=place.asarray(w)
        )
        predictions = model.predict(place.asarray(X))
    assert_fitted_at(model, place)
    assert_at(predictions, place)
    assert_at(model.statistics_.gram, place)
    assert model.solver_ == ref.solver_ == "primal"
    Z, e = _features(_rff() if params["feature_map"] == "rff" else "passthrough", X)
    Y = np.reshape(y, (N, -1))
    rd = rounding(Z, Y, w, place.eps, e, centre=ref.fit_intercept, block=BLOCK)
    G, W, b = _problem(ref)
    dW = coef_bound(rd, G, W, float(ref.alpha_))
    assert_close(model.coef_, ref.coef_, dW, "coef_")
    bound = float(np.max(prediction_bound(rd, Z, W, b, dW)))
    assert_close(predictions, ref.predict(X), bound, "predictions")


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("selection", ["loo", "gcv"])
def test_penalty_chosen_on_the_device(place: Place, selection: str) -> None:
    X, y, w = _data(place.dtype)
    S = float(w.sum())
    alphas = [0.01 * S, 10.0 * S]
    ref = FeatureRidge(_rff(), alphas=alphas, alpha_selection=selection).fit(X, y, sample_weight=w)
    errors = np.sort(ref.cv_errors_)
    assert errors[1] > 2 * errors[0]  # the premise: the candidates are far apart
    with dispatch():
        model = FeatureRidge(_rff(), alphas=alphas, alpha_selection=selection).fit(
            place.asarray(X), place.asarray(y, "float64"), sample_weight=place.asarray(w)
        )
    assert_fitted_at(model, place)
    assert model.alpha_ == ref.alpha_ and model.alpha_selection_ == selection
    Z, e = _features(_rff(), X)
    rd = rounding(Z, y[:, None], w, place.eps, e, centre=True, block=BLOCK)
    G = _problem(ref)[0]
    for a, got, expected in zip(alphas, host(model.cv_errors_), ref.cv_errors_, strict=True):
        fit = FeatureRidge(_rff(), alpha=a).fit(X, y, sample_weight=w)
        if selection == "gcv":
            bound = gcv_bound(rd, G, _problem(fit)[1], a, float(expected), N)
        else:
            bound = loo_bound(rd, Z, y[:, None], w, fit, G)
        assert abs(got - expected) <= bound, (a, got, expected, bound)
    W = _problem(ref)[1]
    assert_close(model.coef_, ref.coef_, coef_bound(rd, G, W, float(ref.alpha_)), "coef_")


# -- partial_fit, the dual, the classifier -----------------------------------------------


@pytest.mark.parametrize("place", PLACES)
def test_partial_fit_on_the_device_and_a_mixed_place_refused(place: Place) -> None:
    X, y, w = _data(place.dtype)
    S = float(w.sum())
    ref = FeatureRidge(_rff(), alpha=0.05 * S)
    model = FeatureRidge(_rff(), alpha=0.05 * S)
    for part in np.array_split(np.arange(N), 3):
        ref.partial_fit(X[part], y[part], sample_weight=w[part])
        with dispatch():
            model.partial_fit(
                place.asarray(X[part]), place.asarray(y[part]), sample_weight=place.asarray(w[part])
            )
    assert_fitted_at(model, place)
    assert_at(model.statistics_.gram, place)
    Z, e = _features(_rff(), X)
    firsts = [slice(p[0], p[0] + BLOCK) for p in np.array_split(np.arange(N), 3)]
    rd = rounding(Z, y[:, None], w, place.eps, e, centre=True, block=BLOCK, parts=firsts)
    G, W, _ = _problem(ref)
    assert_close(model.coef_, ref.coef_, coef_bound(rd, G, W, 0.05 * S), "coef_")
    with dispatch(), pytest.raises(ValueError, match=r"partial_fit\(\): X must use the same"):
        model.partial_fit(X[:10], y[:10])


@pytest.mark.parametrize("place", PLACES)
def test_dual_on_the_device_then_partial_fit(place: Place) -> None:
    """Fewer rows than features: the features come to the host for the dual (which
    differs from the NumPy fit by the features' rounding alone, its products in float64);
    partial_fit then builds the statistics on the device from the kept rows."""
    X, y, _ = _data(place.dtype)
    n = 20
    wide = RandomFourierFeatures(n_components=64, gamma=0.3, random_state=0)
    alphas = [0.05 * n, 50.0 * n]
    ref = FeatureRidge(wide, alphas=alphas).fit(X[:n], y[:n])
    with dispatch():
        model = FeatureRidge(wide, alphas=alphas).fit(place.asarray(X[:n]), place.asarray(y[:n]))
    assert model.solver_ == ref.solver_ == "dual" and model.alpha_ == ref.alpha_
    assert_fitted_at(model, place)
    Z, e = _features(wide, X[:n])
    rd = rounding(Z, y[:n, None], np.ones(n), EPS64, e, centre=True, block=n)
    G = (Z - Z.mean(0)).T @ (Z - Z.mean(0))
    W = np.atleast_2d(ref.coef_)
    assert_close(model.coef_, ref.coef_, coef_bound(rd, G, W, float(ref.alpha_)), "coef_")
    ref.partial_fit(X[n:N], y[n:N])
    with dispatch():
        model.partial_fit(place.asarray(X[n:N]), place.asarray(y[n:N]))
        assert_at(model.statistics_.gram, place)
    Z, e = _features(wide, X)
    parts = [slice(0, n), slice(n, n + BLOCK)]
    rd = rounding(Z, y[:, None], np.ones(N), place.eps, e, centre=True, block=BLOCK, parts=parts)
    G, W, _ = _problem(ref)
    assert_close(model.coef_, ref.coef_, coef_bound(rd, G, W, float(ref.alpha_)), "coef_")


def _labels_agree(got: np.ndarray, expected: np.ndarray, scores: np.ndarray, bound: float) -> None:
    """Labels equal wherever the NumPy fit's decision is farther than the bound from a
    tie (a closer row may flip legitimately)."""
    if scores.ndim == 1:
        clear = np.abs(scores) > bound
    else:
        top = np.sort(scores, axis=1)
        clear = top[:, -1] - top[:, -2] > 2 * bound
    assert clear.mean() > 0.5
    np.testing.assert_array_equal(got[clear], expected[clear])


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_classifier_follows_x(place: Place, n_classes: int) -> None:
    X, _, w = _data(place.dtype)
    labels = np.digitize(X[:, 0] + 0.5 * X[:, 1], [-0.5, 0.5][: n_classes - 1]) * 10
    S = float(w.sum())
    ref = FeatureRidgeClassifier(_rff(), alpha=0.05 * S).fit(X, labels, sample_weight=w)
    with dispatch():
        model = FeatureRidgeClassifier(_rff(), alpha=0.05 * S).fit(
            place.asarray(X), place.asarray(labels), sample_weight=place.asarray(w)
        )
        scores = model.decision_function(place.asarray(X))
        predicted = model.predict(place.asarray(X))
    assert_fitted_at(model, place)
    assert_at(scores, place)
    assert_at(predicted, place)
    np.testing.assert_array_equal(host(model.classes_), ref.classes_)
    Z, e = _features(_rff(), X)
    targets = ref._binarizer.transform(labels).astype(np.float64)
    rd = rounding(Z, targets, w, place.eps, e, centre=True, block=BLOCK)
    G, W, b = _problem(ref)
    dW = coef_bound(rd, G, W, 0.05 * S)
    assert_close(model.coef_, ref.coef_, dW, "coef_")
    bound = float(np.max(prediction_bound(rd, Z, W, b, dW)))
    expected = ref.decision_function(X)
    assert_close(scores, expected, bound, "decision_function")
    _labels_agree(host(predicted), ref.predict(X), expected, bound)


@pytest.mark.parametrize("place", PLACES)
def test_classifier_string_labels_stay_numpy(place: Place) -> None:
    X, _, _ = _data(place.dtype)
    labels = np.array(["low", "mid", "high"])[np.digitize(X[:, 0], [-0.5, 0.5])]
    alpha = 0.05 * N
    ref = FeatureRidgeClassifier(_rff(), alpha=alpha).fit(X, labels)
    with dispatch():
        model = FeatureRidgeClassifier(_rff(), alpha=alpha).fit(place.asarray(X), labels)
        predicted = model.predict(place.asarray(X))
    assert isinstance(model.classes_, np.ndarray) and model.classes_.dtype.kind == "U"
    assert isinstance(predicted, np.ndarray)
    assert_at(model.coef_, place)
    scores = ref.decision_function(X)
    Z, e = _features(_rff(), X)
    targets = ref._binarizer.transform(labels).astype(np.float64)
    rd = rounding(Z, targets, np.ones(N), place.eps, e, centre=True, block=BLOCK)
    G, W, b = _problem(ref)
    bound = float(np.max(prediction_bound(rd, Z, W, b, coef_bound(rd, G, W, alpha))))
    _labels_agree(predicted, ref.predict(X), scores, bound)


# -- NumPy rows streamed through a device (device=) -----------------------------------


def _strict_device() -> Any:
    import array_api_strict

    return array_api_strict.Device("device1")


DEVICES = [
    pytest.param(_strict_device, id="strict-device1"),
    pytest.param(
        torch_test_device,  # $KERNELMAPS_TEST_TORCH_DEVICE, cpu by default
        id="torch-cpu",
        marks=[pytest.mark.torch, pytest.mark.skipif(not HAS_TORCH, reason="needs torch")],
    ),
]


def _assert_numpy_fit(model: Any) -> None:
    """Everything follows X, which was NumPy: the fitted arrays and statistics too."""
    for name in ("coef_", "cv_errors_", "classes_"):
        if hasattr(model, name):
            assert isinstance(getattr(model, name), np.ndarray), name
    if not isinstance(model.intercept_, float):
        assert isinstance(model.intercept_, np.ndarray)
    assert isinstance(model.statistics_.gram, np.ndarray)
    assert isinstance(model.feature_map_.frequencies_, np.ndarray)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_streamed_fit_equals_the_numpy_fit(device: Any, dtype: str) -> None:
    X, y, w = _data(dtype)
    S = float(w.sum())
    alphas = [0.01 * S, 10.0 * S]
    ref = FeatureRidge(_rff(), alphas=alphas).fit(X, y, sample_weight=w)
    model = FeatureRidge(_rff(), alphas=alphas, device=device()).fit(X, y, sample_weight=w)
    _assert_numpy_fit(model)
    assert model.alpha_ == ref.alpha_ and model.statistics_.n_samples == N
    eps = float(np.finfo(dtype).eps)
    Z, e = _features(_rff(), X)
    rd = rounding(Z, y[:, None], w, eps, e, centre=True, block=STREAMED_BLOCK)
    G, W, b = _problem(ref)
    dW = coef_bound(rd, G, W, float(ref.alpha_))
    assert_close(model.coef_, ref.coef_, dW, "coef_")
    predictions = model.predict(X)
    assert isinstance(predictions, np.ndarray) and predictions.dtype == dtype
    bound = float(np.max(prediction_bound(rd, Z, W, b, dW)))
    assert_close(predictions, ref.predict(X), bound + 4 * eps, "predictions")


@pytest.mark.parametrize("device", DEVICES)
def test_streamed_classifier_and_partial_fit(device: Any) -> None:
    X, _, w = _data("float64")
    labels = np.array(["a", "b", "c"])[np.digitize(X[:, 0], [-0.5, 0.5])]
    alpha = 0.05 * float(w.sum())
    ref = FeatureRidgeClassifier(_rff(), alpha=alpha).fit(X, labels, sample_weight=w)
    model = FeatureRidgeClassifier(_rff(), alpha=alpha, device=device())
    model.fit(X, labels, sample_weight=w)
    _assert_numpy_fit(model)
    Z, e = _features(_rff(), X)
    targets = ref._binarizer.transform(labels).astype(np.float64)
    rd = rounding(Z, targets, w, EPS64, e, centre=True, block=STREAMED_BLOCK)
    G, W, _ = _problem(ref)
    assert_close(model.coef_, ref.coef_, coef_bound(rd, G, W, alpha), "coef_")
    y = X[:, 1]
    ref = FeatureRidge("passthrough", alpha=alpha)
    model = FeatureRidge("passthrough", alpha=alpha, device=device())
    for part in np.array_split(np.arange(N), 3):
        ref.partial_fit(X[part], y[part], sample_weight=w[part])
        model.partial_fit(X[part], y[part], sample_weight=w[part])
    assert isinstance(model.coef_, np.ndarray) and model.statistics_.n_samples == N
    rd = rounding(X, y[:, None], w, EPS64, 0.0, centre=True, block=STREAMED_BLOCK)
    G, W, _ = _problem(ref)
    assert_close(model.coef_, ref.coef_, coef_bound(rd, G, W, alpha), "coef_")


def test_streamed_map_without_an_array_path_maps_on_the_host() -> None:
    """A map without an array API path (binning) is fitted and applied on the host, its
    features copied to the device for the statistics: the NumPy fit's, to rounding."""
    from kernelmaps import RandomBinningFeatures

    X, y, _ = _data("float64")
    binning = RandomBinningFeatures(n_grids=4, dense_output=True, random_state=0)
    ref = FeatureRidge(binning, alpha=0.05 * N).fit(X, y)
    model = FeatureRidge(binning, alpha=0.05 * N, device=_strict_device()).fit(X, y)
    assert isinstance(model.coef_, np.ndarray)
    Z = ref.feature_map_.transform(X)
    rd = rounding(Z, y[:, None], np.ones(N), EPS64, 0.0, centre=True, block=STREAMED_BLOCK)
    G, W, _ = _problem(ref)
    assert_close(model.coef_, ref.coef_, coef_bound(rd, G, W, 0.05 * N), "coef_")


@pytest.mark.dask
def test_streamed_dask_rows() -> None:
    da = pytest.importorskip("dask.array")
    X, y, w = _data("float64")
    S = float(w.sum())
    ref = FeatureRidge(_rff(), alphas=[0.01 * S, 10.0 * S]).fit(X, y, sample_weight=w)
    model = FeatureRidge(_rff(), alphas=[0.01 * S, 10.0 * S], device=_strict_device()).fit(
        da.from_array(X, chunks=70), da.from_array(y, chunks=70), sample_weight=w
    )
    _assert_numpy_fit(model)
    assert model.alpha_ == ref.alpha_
    Z, e = _features(_rff(), X)
    rd = rounding(Z, y[:, None], w, EPS64, e, centre=True, block=STREAMED_BLOCK)
    G, W, _ = _problem(ref)
    assert_close(model.coef_, ref.coef_, coef_bound(rd, G, W, float(ref.alpha_)), "coef_")
    bad = X.copy()
    bad[123, 1] = np.nan
    with pytest.raises(ValueError, match="Input X contains NaN"):
        FeatureRidge(_rff(), device=_strict_device()).fit(da.from_array(bad, chunks=70), y)


def test_device_parameter() -> None:
    X, y, _ = _data("float64")
    assert FeatureRidge().get_params()["device"] is None
    assert FeatureRidgeClassifier(device="cpu").get_params()["device"] == "cpu"
    with pytest.raises(ValueError, match="device=3"):
        FeatureRidge(_rff(), device=3).fit(X, y)
    place = Place("array_api_strict", "float64")
    with dispatch():  # X on the device named: X's place wins, the fit follows X
        model = FeatureRidge(_rff(), device=_strict_device()).fit(place.asarray(X), y)
    assert_fitted_at(model, place)


def test_device_name_without_its_library(monkeypatch: pytest.MonkeyPatch) -> None:
    """A device name that no installed library knows: the error says what to install."""
    import kernelmaps._devices as devices

    X, y, _ = _data("float64")
    monkeypatch.setattr(devices, "_installed", lambda module: False)
    with pytest.raises(ValueError, match=r"^device='cpu' names no device .* install PyTorch"):
        FeatureRidge(_rff(), device="cpu").fit(X, y)


@pytest.mark.torch
@pytest.mark.skipif(not HAS_TORCH, reason="needs torch")
def test_device_parameter_not_where_X_is() -> None:
    """A device named by PyTorch's name, with X on array-api-strict's: the mismatch is named."""
    X, y, _ = _data("float64")
    with dispatch(), pytest.raises(ValueError, match=r"^device='cpu' does not match where X is"):
        FeatureRidge(_rff(), device="cpu").fit(Place("array_api_strict", "float64").asarray(X), y)


@pytest.mark.parametrize("place", PLACES)
def test_a_moved_model_continues_on_the_host(place: Place) -> None:
    """``move_to(model, "numpy")`` moves the statistics too: partial_fit goes on there."""
    from kernelmaps import move_to

    X, y, _ = _data(place.dtype)
    alpha = 0.05 * N
    with dispatch():
        model = FeatureRidge(_rff(), alpha=alpha).fit(
            place.asarray(X[:200]), place.asarray(y[:200])
        )
    moved = move_to(model, "numpy")
    assert isinstance(moved.statistics_.gram, np.ndarray)
    moved.partial_fit(X[200:], y[200:])
    ref = FeatureRidge(_rff(), alpha=alpha).fit(X[:200], y[:200]).partial_fit(X[200:], y[200:])
    Z, e = _features(_rff(), X)
    parts = [slice(0, BLOCK), slice(200, 200 + BLOCK)]
    rd = rounding(Z, y[:, None], np.ones(N), place.eps, e, centre=True, block=BLOCK, parts=parts)
    G, W, _ = _problem(ref)
    assert_close(moved.coef_, ref.coef_, coef_bound(rd, G, W, alpha), "coef_")
