"""Row-wise methods on Dask arrays: lazy, equal to numpy, independent of the chunking.

``transform`` of every map and ``predict`` / ``decision_function`` of every model, on Dask
arrays over several chunkings (one chunk; 37-row chunks; uneven chunks with a 1-row
chunk; columns split), against the numpy result of the same fitted estimator.  The rows
of a chunk are computed in tiles of a global grid (``kernelmaps._dask._rows``), so the
chunkings agree bitwise; against numpy (blocks of other shapes) they agree to rounding:
``rtol=1e-12`` in float64 and ``1e-5`` in float32, a few hundred units in the last place
of the largest outputs (the maps evaluate cosines of projections whose rounding is
``O(eps |w^T x|)``; no map loses more than that).
"""

from __future__ import annotations

import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn
from numpy.testing import assert_allclose

import kernelmaps
from kernelmaps.feature_maps import BaseFeatureMap

from ._instances import CHECK_PARAMS

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

from ._dask import CHUNKINGS, SettingsProbe, as_dask, dense, nothing_computed  # noqa: E402

pytestmark = pytest.mark.dask

RTOL = {np.dtype(np.float64): 1e-12, np.dtype(np.float32): 1e-5}
N_ROWS, N_COLUMNS = 120, 5


def _instances(kind: type) -> list[tuple[str, dict]]:
    out = []
    for name, param_sets in CHECK_PARAMS.items():
        cls = getattr(kernelmaps, name)
        if issubclass(cls, BaseFeatureMap) == (kind is BaseFeatureMap):
            out.extend((name, params) for params in param_sets)
    return out


MAPS = _instances(BaseFeatureMap)
MODELS = _instances(object)


def _id(case: tuple[str, dict]) -> str:
    name, params = case
    extra = ",".join(f"{k}={v}" for k, v in params.items() if k in ("variant", "sampler", "kernel"))
    return f"{name}({extra})"


def _data(dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    X = np.abs(rng.standard_normal((N_ROWS, N_COLUMNS))) * 0.4
    y = X @ rng.standard_normal(N_COLUMNS) + 0.1 * rng.standard_normal(N_ROWS)
    return X.astype(dtype), y


def _close(got, want, dtype):
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    if got.dtype.kind == "f":
        scale = max(1.0, float(np.max(np.abs(want))))
        assert_allclose(got, want, rtol=RTOL[np.dtype(dtype)], atol=RTOL[np.dtype(dtype)] * scale)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", MAPS, ids=_id)
def test_transform_equals_numpy_for_every_chunking(case, dtype):
    name, params = case
    X, _ = _data(dtype)
    est = getattr(kernelmaps, name)(**params).fit(X)
    want = dense(est.transform(X))
    results = []
    for chunking in CHUNKINGS:
        with nothing_computed():
            Z = est.transform(as_dask(X, chunking))
        assert Z.chunks[0] == as_dask(X, chunking).chunks[0]
        assert Z.shape == want.shape and Z.dtype == want.dtype
        results.append(dense(Z.compute()))
        _close(results[-1], want, dtype)
    for other in results[1:]:
        np.testing.assert_array_equal(other, results[0])


@pytest.mark.parametrize("case", [c for c in MAPS if c[0] not in ("IKA",)], ids=_id)
def test_transform_of_sparse_chunks(case):
    name, params = case
    cls = getattr(kernelmaps, name)
    X, _ = _data()
    X[X < 0.3] = 0.0
    est = cls(**params).fit(X)
    if not est._accepts_sparse:
        with pytest.raises(TypeError, match="does not accept sparse input"):
            est.transform(as_dask(sp.csr_matrix(X), "rows-37"))
        return
    want = est.transform(sp.csr_matrix(X))
    Z = est.transform(as_dask(sp.csr_matrix(X), "rows-37"))
    assert sp.issparse(Z._meta) == sp.issparse(want)
    got = Z.compute()
    assert sp.issparse(got) == sp.issparse(want)
    _close(dense(got), dense(want), np.float64)


@pytest.mark.parametrize("case", MODELS, ids=_id)
def test_predictions_equal_numpy_for_every_chunking(case):
    name, params = case
    X, y = _data()
    model = getattr(kernelmaps, name)(**params)
    if isinstance(model, sklearn.base.ClassifierMixin):
        y = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))
    model.fit(X, y)
    methods = [m for m in ("predict", "decision_function", "predict_proba") if hasattr(model, m)]
    for method in methods:
        want = getattr(model, method)(X)
        results = []
        for chunking in CHUNKINGS:
            with nothing_computed():
                lazy = getattr(model, method)(as_dask(X, chunking))
            assert lazy.shape == want.shape and lazy.dtype == want.dtype
            results.append(lazy.compute())
            _close(results[-1], want, np.float64)
        for other in results[1:]:
            np.testing.assert_array_equal(other, results[0])


def test_float32_predictions_stay_float32():
    X, y = _data(np.float32)
    model = kernelmaps.FeatureRidge(kernelmaps.RandomFourierFeatures(random_state=0)).fit(X, y)
    pred = model.predict(as_dask(X, "rows-37"))
    assert pred.dtype == np.float32
    _close(pred.compute(), model.predict(X), np.float32)


def test_estimator_is_one_key_of_the_graph():
    X, _ = _data()
    est = kernelmaps.RandomFourierFeatures(n_components=16, random_state=0).fit(X)
    Z = est.transform(as_dask(X, "rows-37"))
    graph = dict(Z.__dask_graph__())
    # the estimator travels in one RowwiseWork, one key of the graph
    holders = [
        k
        for k, v in graph.items()
        if getattr(getattr(getattr(v, "value", v), "prepare", None), "__self__", None) is est
    ]
    assert len(holders) == 1, holders
    # every chunk task refers to that one key
    assert Z.numblocks[0] == len(as_dask(X, "rows-37").chunks[0])


def test_values_are_checked_inside_the_chunks_with_the_numpy_messages():
    X, _ = _data()
    est = kernelmaps.RandomFourierFeatures(n_components=8, random_state=0).fit(X)
    bad = X.copy()
    bad[100, 2] = np.nan
    with pytest.raises(ValueError) as numpy_error:
        est.transform(bad)
    with nothing_computed():
        lazy = est.transform(as_dask(bad, "rows-37"))
    with pytest.raises(ValueError) as dask_error:
        lazy.compute()
    assert str(dask_error.value) == str(numpy_error.value)

    chi2 = kernelmaps.AdditiveChi2Sampler().fit(X)
    negative = X.copy()
    negative[5, 0] = -1.0
    with pytest.raises(ValueError) as numpy_error:
        chi2.transform(negative)
    with pytest.raises(ValueError) as dask_error:
        chi2.transform(as_dask(negative, "rows-37")).compute()
    assert str(dask_error.value) == str(numpy_error.value)


def test_metadata_errors_are_raised_at_the_call():
    X, y = _data()
    est = kernelmaps.RandomFourierFeatures(n_components=8, random_state=0).fit(X)
    with nothing_computed():
        with pytest.raises(ValueError, match="X has 4 features, but RandomFourierFeatures is"):
            est.transform(as_dask(X[:, :4], "rows-37"))
        with pytest.raises(ValueError, match="Expected a 2D array"):
            est.transform(da.from_array(X[:, 0], chunks=10))
        with pytest.raises(ValueError, match="needs numeric input"):
            est.transform(da.from_array(X.astype(str), chunks=(37, 5)))
        with pytest.raises(ValueError, match=r"0 sample\(s\)"):
            est.transform(da.zeros((0, N_COLUMNS), chunks=(10, 5)))
    keep = da.from_array(np.array([True, True, True, False, True]))
    unknown = as_dask(X, "rows-37")[:, keep]  # columns of unknown number
    with pytest.raises(ValueError, match="compute_chunk_sizes"):
        kernelmaps.RandomFourierFeatures(n_components=8).fit(unknown)
    model = kernelmaps.FeatureRidge(kernelmaps.RandomFourierFeatures(random_state=0)).fit(X, y)
    with pytest.raises(ValueError, match="X has 4 features"):
        model.predict(as_dask(X[:, :4], "rows-37"))


def test_integer_input_gives_float64_like_numpy():
    X = np.arange(60, dtype=np.int64).reshape(12, 5) % 7
    est = kernelmaps.RandomFourierFeatures(n_components=8, random_state=0).fit(X)
    Z = est.transform(as_dask(X, "rows-37"))
    assert Z.dtype == np.float64
    _close(Z.compute(), est.transform(X), np.float64)


def test_unknown_row_chunks_still_transform():
    X, _ = _data()
    est = kernelmaps.RandomFourierFeatures(n_components=8, random_state=0).fit(X)
    Xd = as_dask(X, "rows-37")
    selected = Xd[Xd[:, 0] > 0.2]  # rows of unknown number per chunk
    got = est.transform(selected).compute()
    _close(got, est.transform(X[X[:, 0] > 0.2]), np.float64)


def test_fit_transform_of_a_data_independent_map_is_lazy():
    X, _ = _data()
    with nothing_computed():
        Z = kernelmaps.RandomFourierFeatures(n_components=8, random_state=0).fit_transform(
            as_dask(X, "rows-37")
        )
    want = kernelmaps.RandomFourierFeatures(n_components=8, random_state=0).fit_transform(X)
    _close(Z.compute(), want, np.float64)


def test_settings_reach_the_chunks_under_the_threaded_scheduler():
    X, _ = _data()
    probe = SettingsProbe().fit(X)
    with kernelmaps.config_context(engine="numpy"), sklearn.config_context(working_memory=77):
        Z = probe.transform(as_dask(X, "rows-37"))
    got = Z.compute(scheduler="threads")
    np.testing.assert_array_equal(got[:, 0], 1.0)
    np.testing.assert_array_equal(got[:, 1], 77.0)
    np.testing.assert_array_equal(got[:, 2], 1.0)  # one row-block thread per task


@pytest.mark.slow
def test_on_a_local_cluster_equal_to_local_and_settings_reach_the_workers(dask_client):
    X, y = _data()
    est = kernelmaps.Nystroem(n_components=20, random_state=0).fit(X)
    model = kernelmaps.NystroemKernelRidge(n_components=20, random_state=0).fit(X, y)
    Xd = as_dask(X, "uneven-with-1-row")
    Z, pred = dask.compute(est.transform(Xd), model.predict(Xd))  # the client's scheduler
    np.testing.assert_array_equal(Z, est.transform(Xd).compute(scheduler="sync"))
    _close(pred, model.predict(X), np.float64)
    probe = SettingsProbe().fit(X)
    with kernelmaps.config_context(engine="numpy"), sklearn.config_context(working_memory=77):
        lazy = probe.transform(Xd)
    got = lazy.compute()
    np.testing.assert_array_equal(got, np.tile([1.0, 77.0, 1.0], (N_ROWS, 1)))
    # the fitted estimators went to the worker processes by pickle
    assert pickle.loads(pickle.dumps(est)).n_features_in_ == N_COLUMNS


@pytest.mark.slow
def test_core_never_imports_dask():
    code = textwrap.dedent(
        """
        import importlib, pkgutil, sys
        import numpy as np
        import kernelmaps
        skip = ("kernelmaps._dask", "kernelmaps.cli._cluster")
        for info in pkgutil.walk_packages(kernelmaps.__path__, "kernelmaps."):
            if not info.name.startswith(skip):
                importlib.import_module(info.name)
        X = np.random.default_rng(0).random((50, 3))
        kernelmaps.FeatureRidge().fit(X, X[:, 0]).predict(X)
        kernelmaps.NystroemKernelRidge(n_components=10).fit(X, X[:, 0]).predict(X)
        assert not [m for m in sys.modules if m.split(".")[0] in ("dask", "distributed")]
        """
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.slow
def test_the_suite_runs_without_dask(tmp_path):
    blocker = tmp_path / "sitecustomize.py"
    blocker.write_text(
        textwrap.dedent(
            """
            import sys
            class _NoDask:
                def find_spec(self, name, path=None, target=None):
                    if name.split(".")[0] in ("dask", "distributed"):
                        raise ModuleNotFoundError(f"No module named {name!r}")
            sys.meta_path.insert(0, _NoDask())
            """
        )
    )
    import os

    path = os.pathsep.join(p for p in (str(tmp_path), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "PYTHONPATH": path}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/test_dask_rows.py",
            "tests/test_transform_path.py",
        ],
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "skipped" in result.stdout


def test_stateless_sampler_transforms_a_dask_array_without_fit() -> None:
    """AdditiveChi2Sampler transforms without fit (as scikit-learn's); on a Dask array a
    fitted copy goes into the graph, the caller's estimator stays unfitted."""
    X = np.random.default_rng(0).random((20, 3))
    sampler = kernelmaps.AdditiveChi2Sampler(sample_steps=2)
    Z = sampler.transform(as_dask(X, "uneven-with-1-row"))
    assert not hasattr(sampler, "n_features_in_")
    np.testing.assert_array_equal(
        Z.compute(), kernelmaps.AdditiveChi2Sampler(sample_steps=2).fit(X).transform(X)
    )
