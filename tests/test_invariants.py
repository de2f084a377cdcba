"""Invariants every feature map keeps, checked over the whole table of estimators.

Same seed -> identical output; rows are independent (``transform(X)[a:b] ==
transform(X[a:b])`` up to rounding, what makes block-wise and distributed transforms
exact); sparse input
gives the dense result; float32 is kept and close to float64; the memory budget only
changes the blocking, not the result.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn
from sklearn.base import clone

from ._instances import check_instances


def _maps():
    return [e for e in check_instances() if hasattr(e, "transform")]


def _dense(Z):
    return Z.toarray() if sp.issparse(Z) else np.asarray(Z)


def _data(positive: bool, seed: int = 7) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, 1.0, size=(60, 5)) if positive else rng.normal(size=(60, 5))
    X[rng.uniform(size=X.shape) < 0.3] = 0.0  # some zeros, for the sparse comparison
    return X


def _positive_only(estimator) -> bool:
    return bool(estimator.__sklearn_tags__().input_tags.positive_only)


MAPS = _maps()


@pytest.mark.parametrize("estimator", MAPS, ids=repr)
def test_same_seed_same_output(estimator) -> None:
    X = _data(_positive_only(estimator))
    params = {"random_state": 3} if "random_state" in estimator.get_params() else {}
    a = clone(estimator).set_params(**params).fit(X).transform(X)
    b = clone(estimator).set_params(**params).fit(X).transform(X)
    np.testing.assert_array_equal(_dense(a), _dense(b))


@pytest.mark.parametrize("estimator", MAPS, ids=repr)
def test_rows_are_independent(estimator) -> None:
    X = _data(_positive_only(estimator))
    fitted = clone(estimator).fit(X)
    full = _dense(fitted.transform(X))
    # Equal up to rounding: BLAS may pick other kernels for other block shapes (a few ulp).
    tol = {"rtol": 1e-12, "atol": 1e-14 * max(1.0, float(np.max(np.abs(full))))}
    np.testing.assert_allclose(_dense(fitted.transform(X[17:41])), full[17:41], **tol)
    # a tiny working-memory budget forces one-row blocks: same result
    with sklearn.config_context(working_memory=1e-6):
        np.testing.assert_allclose(_dense(fitted.transform(X)), full, **tol)


@pytest.mark.parametrize("estimator", MAPS, ids=repr)
def test_sparse_input_equals_dense(estimator) -> None:
    if not estimator.__sklearn_tags__().input_tags.sparse:
        pytest.skip("this map refuses sparse input")
    X = _data(_positive_only(estimator))
    fitted = clone(estimator).fit(X)
    dense = _dense(fitted.transform(X))
    for fmt in (sp.csr_matrix, sp.csc_matrix):
        np.testing.assert_allclose(_dense(fitted.transform(fmt(X))), dense, rtol=1e-10, atol=1e-12)
        refit = clone(estimator).fit(fmt(X))
        np.testing.assert_allclose(_dense(refit.transform(X)), dense, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("estimator", MAPS, ids=repr)
def test_float32_kept_and_close_to_float64(estimator) -> None:
    X = _data(_positive_only(estimator))
    fitted = clone(estimator).fit(X)
    Z64 = fitted.transform(X)
    Z32 = fitted.transform(X.astype(np.float32))
    assert Z32.dtype == np.float32
    assert Z64.dtype == np.float64
    scale = max(1.0, float(np.max(np.abs(_dense(Z64)))))
    np.testing.assert_allclose(_dense(Z32), _dense(Z64), atol=1e-4 * scale, rtol=1e-3)
    assert clone(estimator).fit(X.astype(np.float32)).transform(X).dtype == np.float64
