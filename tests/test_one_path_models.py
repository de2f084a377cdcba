"""The models' one path over an array namespace: each merged check raises the very same
message on NumPy and on ``array-api-strict`` (its fake second device), and the pieces
that took the NumPy path by asking for ``None`` now take NumPy's namespace."""

from __future__ import annotations

import pickle
import re

import numpy as np
import pytest

from kernelmaps import (
    FeatureRidge,
    FeatureRidgeClassifier,
    KernelRidge,
    NystroemKernelRidge,
    RandomFourierFeatures,
)
from kernelmaps._array_api import is_numpy, numpy_namespace
from kernelmaps.exceptions import NonFiniteOutputError
from kernelmaps.models import RidgeStatistics
from kernelmaps.models._device import Placement, array_kernel_matrix
from kernelmaps.models._ridge import _pass as _ridge_pass
from kernelmaps.models._ridge._solvers import eigen_ridge, loo_terms
from tests._array_api import Place, dispatch, host

STRICT = Place("array_api_strict", "float64")


def _data(n: int = 40, d: int = 3) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d))
    return X, X @ np.arange(1.0, d + 1) + 0.1 * rng.normal(size=n)


def _raised(make, fit_args, predict_X, error):  # type: ignore[no-untyped-def]
    """The messages of ``make().fit(*fit_args).predict(predict_X)`` on NumPy and on
    ``array-api-strict`` (the same data there)."""
    with pytest.raises(error) as on_numpy:
        make().fit(*fit_args).predict(predict_X)
    with dispatch():
        fitted = make().fit(*(STRICT.asarray(a) for a in fit_args))
        with pytest.raises(error) as on_strict:
            fitted.predict(STRICT.asarray(predict_X))
    return str(on_numpy.value), str(on_strict.value)


def test_prediction_overflow_one_message_across_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows whose predictions overflow, in two row blocks: one check of the whole output
    on every library, naming every bad row (NumPy named those of the first bad block)."""
    monkeypatch.setattr(_ridge_pass, "RIDGE_BLOCK_ROWS", 4)
    X, y = _data()
    bad = X.copy()
    bad[[2, 9]] = 1e308
    expected = (
        "FeatureRidge: the prediction for rows 2, 9 is not finite (it overflowed float64: "
        "the row holds values far outside the scale of the training data); rescale the "
        "rows as the training data was, or drop them."
    )
    on_numpy, on_strict = _raised(
        lambda: FeatureRidge("passthrough", alpha=1.0), (X, y), bad, NonFiniteOutputError
    )
    assert on_numpy == on_strict == expected
    with pytest.raises(NonFiniteOutputError, match=re.escape(expected)):
        FeatureRidge("passthrough", alpha=1.0).fit(X, y).predict(bad)
    with dispatch(), pytest.raises(NonFiniteOutputError, match=re.escape(expected)):
        fitted = FeatureRidge("passthrough", alpha=1.0).fit(STRICT.asarray(X), STRICT.asarray(y))
        fitted.predict(STRICT.asarray(bad))


def test_kernel_model_prediction_overflow_same_message() -> None:
    """A kernel model's overflowing prediction: the same message on both libraries."""
    X, y = _data()
    y = 100.0 * y  # coefficients that carry the bad row's kernel values past float64
    bad = X.copy()
    bad[5] = 1e306

    def linear(A, B):  # type: ignore[no-untyped-def]
        return A @ B.T

    expected = "NystroemKernelRidge: the prediction for row 5 is not finite"
    on_numpy, on_strict = _raised(
        lambda: NystroemKernelRidge(linear, n_components=10, alpha=1.0, random_state=0),
        (X, y),
        bad,
        NonFiniteOutputError,
    )
    assert on_numpy == on_strict
    assert on_numpy.startswith(expected)
    with pytest.raises(NonFiniteOutputError, match=re.escape(expected)):
        NystroemKernelRidge(linear, n_components=10, alpha=1.0, random_state=0).fit(X, y).predict(
            bad
        )


def test_user_kernel_checked_alike() -> None:
    """A user callable is evaluated and checked on the host for every library: a
    non-finite kernel matrix raises the same error and message."""
    X, _ = _data(6)

    def broken(A, B):  # type: ignore[no-untyped-def]
        K = A @ B.T
        K[0, 0] = np.nan
        return K

    with pytest.raises(NonFiniteOutputError) as on_numpy:
        array_kernel_matrix(broken, X, X)
    with pytest.raises(NonFiniteOutputError, match=re.escape(str(on_numpy.value))):
        array_kernel_matrix(broken, STRICT.asarray(X), STRICT.asarray(X))


def test_user_kernel_block_follows_its_rows() -> None:
    """The one kernel block function: NumPy in, NumPy out (the callable's own array);
    ``array-api-strict`` in, the same values there."""
    X, _ = _data(5)
    K = array_kernel_matrix(lambda A, B: A @ B.T, X, X)
    assert isinstance(K, np.ndarray)
    K_strict = array_kernel_matrix(lambda A, B: A @ B.T, STRICT.asarray(X), STRICT.asarray(X))
    assert str(K_strict.device) == str(STRICT.device)
    # the same host product on the same values: equal to its rounding (a few eps |K|)
    tol = 4 * np.finfo(K.dtype).eps * float(np.max(np.abs(K)))
    np.testing.assert_allclose(host(K_strict), K, rtol=0, atol=tol)


def test_classifier_labels_one_path() -> None:
    """The labels of the decision values: the same classes on NumPy and on the device."""
    X, y = _data(60)
    labels = np.where(y > 0, 3, 7)
    rff = RandomFourierFeatures(n_components=20, random_state=0)
    expected = FeatureRidgeClassifier(rff).fit(X, labels).predict(X)
    with dispatch():
        model = FeatureRidgeClassifier(rff).fit(STRICT.asarray(X), STRICT.asarray(labels))
        got = model.predict(STRICT.asarray(X))
    np.testing.assert_array_equal(host(got), expected)


def test_host_placement_is_numpys_namespace() -> None:
    """A host placement holds NumPy's namespace (no ``None``), and pickles."""
    place = Placement.of(np.ones((2, 2)))
    assert place.xp is numpy_namespace() and is_numpy(place.xp)
    assert not place.on_device and place.float64_there
    assert pickle.loads(pickle.dumps(place)) == place
    A = np.ones((2, 2))
    assert place.data(A) is A and place.to_float_place(A) is A
    strict = Placement.of(STRICT.asarray(A))
    assert strict.on_device and not is_numpy(strict.xp)


def test_loo_terms_stay_for_numpy() -> None:
    """Leave-one-out terms placed in NumPy's namespace are the terms themselves."""
    Z, Y = np.eye(3), np.ones((3, 1))
    stats = RidgeStatistics(3, 1).update(Z, Y, np.ones(3))
    terms = loo_terms(stats, eigen_ridge(stats, True), np.array([1.0]), True)
    assert terms.to_device(numpy_namespace(), "cpu") is terms
    moved = terms.to_device(STRICT.xp, STRICT.device)
    assert str(moved.inv.device) == str(STRICT.device)


def test_zero_weights_one_message() -> None:
    """All-zero weights: the same message whatever the library of the rows."""
    X, y = _data()
    with pytest.raises(ValueError, match="at least one non-zero") as on_numpy:
        FeatureRidge("passthrough").fit(X, y, sample_weight=np.zeros(X.shape[0]))
    with dispatch(), pytest.raises(ValueError, match=re.escape(str(on_numpy.value))):
        FeatureRidge("passthrough").fit(
            STRICT.asarray(X), STRICT.asarray(y), sample_weight=STRICT.asarray(np.zeros(40))
        )


def test_kernel_ridge_one_path_matches_numpy() -> None:
    """KernelRidge's kernel matrix and predictions through the one path: the device's
    predictions equal NumPy's to rounding."""
    X, y = _data()
    expected = KernelRidge(alpha=1.0, kernel="rbf").fit(X, y).predict(X)
    with dispatch():
        got = KernelRidge(alpha=1.0, kernel="rbf").fit(STRICT.asarray(X), STRICT.asarray(y))
        pred = got.predict(STRICT.asarray(X))
    np.testing.assert_allclose(host(pred), expected, rtol=1e-10, atol=1e-12)
