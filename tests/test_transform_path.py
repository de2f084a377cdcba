"""The one transform path of the feature maps and its subclassing contract."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn

import kernelmaps
import kernelmaps._parallel as parallel
from kernelmaps._row_blocks import stack_csr_rows
from kernelmaps.feature_maps import BaseFeatureMap, maps_supporting
from kernelmaps.feature_maps._base import _MAP_CLASSES
from kernelmaps.feature_maps._fourier_layout import FourierLayout, fourier_features_into
from kernelmaps.kernels import Gaussian, Laplacian

from ._instances import CHECK_PARAMS

MAPS = list(_MAP_CLASSES)
INSTANCES = [
    pytest.param(cls, params, id=f"{cls.__name__}-{i}")
    for cls in MAPS
    for i, params in enumerate(CHECK_PARAMS[cls.__name__])
]


def _data(cls: type, n: int = 300) -> np.ndarray:
    rng = np.random.default_rng(0)
    X = rng.random((n, 6))
    X[X < 0.3] = 0.0  # non-negative (histogram maps) with zeros (sparse input)
    if cls.__name__ in {"RandomMaclaurinFeatures", "CompactRandomFeatures"}:
        X /= np.linalg.norm(X, axis=1, keepdims=True).clip(1e-12)
    return X


def test_every_public_map_is_registered_and_none_overrides_transform() -> None:
    public = {
        name
        for name in kernelmaps.feature_maps.__all__
        if isinstance(getattr(kernelmaps, name, None), type)
        and issubclass(getattr(kernelmaps, name), BaseFeatureMap)
    }
    assert {cls.__name__ for cls in MAPS} == public
    for cls in MAPS:
        for klass in cls.__mro__[: cls.__mro__.index(BaseFeatureMap)]:
            assert "transform" not in vars(klass), klass
            assert "fit_transform" not in vars(klass), klass
            assert "fit" not in vars(klass), klass


def test_maps_supporting_uses_the_registry() -> None:
    gaussian = maps_supporting(Gaussian(gamma=1.0))
    assert {"RandomFourierFeatures", "Fastfood", "StructuredOrthogonalFeatures"} <= set(gaussian)
    assert {"Nystroem", "IKA"} <= set(gaussian)
    laplacian = maps_supporting(Laplacian(gamma=1.0))
    assert "RandomBinningFeatures" in laplacian
    assert "Fastfood" not in laplacian
    others = "Use RandomBinningFeatures or RandomFourierFeatures or Nystroem or IKA for it"
    with pytest.raises(ValueError, match=others):
        kernelmaps.Fastfood(kernel="laplacian").fit(np.ones((3, 2)))


@pytest.mark.filterwarnings("ignore:IKA. the basis Gram matrix")
@pytest.mark.parametrize(("cls", "params"), INSTANCES)
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_transform_rows_equal_transform_of_the_block(cls, params, sparse, dtype) -> None:
    """A block run from outside transform, with the per-call constants, gives its rows.

    Each slice is one block of ``transform(X[a:b])``, so the two are the same computation
    and agree to the last bit (``transform(X)[a:b]`` itself, cut into other blocks, is
    checked up to rounding in test_invariants.py).
    """
    X = _data(cls).astype(dtype)
    est = cls(**params).fit(X)
    Xin = sp.csr_matrix(X) if sparse else X
    Xv = est._validate_transform_input(Xin)
    constants = est._transform_constants(Xv)
    for a, b in [(0, 7), (7, 150), (150, 300)]:
        expected = est.transform(Xin[a:b])
        for part in (est._transform_rows(Xv[a:b], constants), est._transform_rows(Xv[a:b])):
            assert sp.issparse(part) == sp.issparse(expected)
            assert part.dtype == expected.dtype == dtype
            if sp.issparse(part):
                np.testing.assert_array_equal(part.toarray(), expected.toarray())
            else:
                np.testing.assert_array_equal(part, expected)


@pytest.mark.parametrize("parts_rows", [[3, 0, 2], [1], [0, 0, 4, 1]])
def test_stack_csr_rows_equals_vstack(parts_rows) -> None:
    rng = np.random.default_rng(sum(parts_rows))
    parts = [sp.random(n, 9, density=0.3, format="csr", random_state=rng) for n in parts_rows]
    merged = stack_csr_rows(parts, 9)
    expected = sp.vstack(parts, format="csr")
    assert merged.shape == expected.shape
    np.testing.assert_array_equal(merged.indptr, expected.indptr)
    np.testing.assert_array_equal(merged.indices, expected.indices)
    np.testing.assert_array_equal(merged.data, expected.data)
    assert merged.data.dtype == expected.data.dtype


class _Doubling(BaseFeatureMap):
    """A minimal map following the contract: ``z(x) = (c x, c x)`` with c from the dtype."""

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {}
    _parallel_blocks: ClassVar[bool] = True
    _max_block_rows: ClassVar[int | None] = 5
    constants_calls = 0

    def _fit(self, X: Any, rng: np.random.Generator) -> None:
        self._n_features_out = 2 * X.shape[1]

    def _transform_constants(self, X: Any) -> Any:
        type(self).constants_calls += 1
        return X.dtype.type(math.sqrt(0.5))

    def _transform_block(self, X: Any, out: np.ndarray, constants: Any) -> None:
        Xd = X.toarray() if sp.issparse(X) else X
        d = Xd.shape[1]
        np.multiply(Xd, constants, out=out[:, :d])
        out[:, d:] = out[:, :d]


class _Indicator(BaseFeatureMap):
    """A CSR map: ``z(x)`` has a 1 at column ``argmax(x)``."""

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {}
    _output: ClassVar[str] = "csr"
    _max_block_rows: ClassVar[int | None] = 4

    def _fit(self, X: Any, rng: np.random.Generator) -> None:
        self._n_features_out = X.shape[1]

    def _transform_block_csr(self, X: Any, constants: Any) -> sp.csr_matrix:
        Xd = X.toarray() if sp.issparse(X) else X
        n = Xd.shape[0]
        columns = np.argmax(Xd, axis=1)
        return sp.csr_matrix((np.ones(n, dtype=X.dtype), (np.arange(n), columns)), shape=X.shape)


def test_subclass_contract_dense_blocks_threads_and_constants_once(monkeypatch) -> None:
    monkeypatch.setattr(parallel, "n_threads", lambda: 4)
    monkeypatch.setattr(parallel, "MIN_PARALLEL_ELEMENTS", 1)
    X = np.random.default_rng(1).standard_normal((103, 3))
    est = _Doubling().fit(X)
    _Doubling.constants_calls = 0
    for Xin in (X, sp.csr_matrix(X), X.astype(np.float32)):
        Z = est.transform(Xin)
        assert Z.dtype == Xin.dtype
        expected = np.hstack([X, X]).astype(Xin.dtype) * Xin.dtype.type(math.sqrt(0.5))
        np.testing.assert_array_equal(Z, expected)
    assert _Doubling.constants_calls == 3  # once per call, not per block (21 blocks)
    assert est.get_feature_names_out().shape == (6,)


def test_subclass_contract_csr_output() -> None:
    X = np.random.default_rng(2).standard_normal((11, 5))
    est = _Indicator().fit(X)
    Z = est.transform(X)
    assert sp.isspmatrix_csr(Z) and Z.dtype == np.float64
    np.testing.assert_array_equal(Z.toarray(), np.eye(5)[np.argmax(X, axis=1)])
    np.testing.assert_array_equal(est.transform(X[3:9]).toarray(), Z[3:9].toarray())


def test_unfitted_transform_raises() -> None:
    with pytest.raises(sklearn.exceptions.NotFittedError):
        _Doubling().transform(np.ones((2, 2)))


def test_precomputed_nystroem_names_the_expected_kernel_rows() -> None:
    X = np.random.default_rng(3).standard_normal((20, 3))
    K = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1))
    ny = kernelmaps.Nystroem("precomputed", n_components=5, random_state=0).fit(K)
    assert ny.transform(K[:4]).shape == (4, 5)
    with pytest.raises(ValueError, match=r"kernel rows K\(X_new, X_train\) of shape \(n_new, 20\)"):
        ny.transform(X)


@pytest.mark.parametrize(("D", "variant"), [(8, "cos_sin"), (9, "cos_sin"), (5, "cos_phase")])
def test_fourier_layout_and_features(D, variant) -> None:
    layout = FourierLayout.of(D, variant)
    assert 2 * layout.n_pairs + layout.n_phases == D
    assert layout.n_frequencies == layout.n_pairs + layout.n_phases
    assert layout.n_phases == (D if variant == "cos_phase" else D % 2)
    rng = np.random.default_rng(D)
    P = rng.standard_normal((4, layout.n_frequencies))
    b = rng.uniform(0, 2 * np.pi, layout.n_phases)
    L = layout.n_pairs
    out = np.empty((4, D))
    fourier_features_into(
        out, P[:, :L].copy() if L else None, P[:, L:].copy() if b.size else None, b, layout.scale
    )
    s = math.sqrt(2.0 / D)
    expected = np.hstack([s * np.cos(P[:, :L]), s * np.sin(P[:, :L]), s * np.cos(P[:, L:] + b)])
    np.testing.assert_allclose(out, expected, rtol=0, atol=1e-15)
