"""Data-dependent fits on Dask arrays: Nyström, IKA, random binning and the landmarks.

A map fitted on a Dask array must be the map fitted on the same data in numpy with the
same seed: every fitted attribute exactly equal (``np.array_equal``) and a numpy array,
over the chunkings of ``tests/_dask.py`` (one chunk; 37-row chunks; uneven chunks with a
1-row chunk; columns split), dense and CSR chunks, float64 and float32.  The algorithm
is the same (the draws are made on the client from the same generator with global row
indices, the same numpy code runs on the same rows), so no tolerance applies.  Their
``transform`` then equals numpy's to rounding only (blocks of other shapes):
``rtol=1e-12`` in float64 and ``1e-5`` in float32 relative to the largest output, as in
``tests/test_dask_rows.py``.

The rows are gathered in one compute (counted with a scheduler that counts its calls);
a real ``LocalCluster`` gives the same fits as the local scheduler.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn
from numpy.testing import assert_allclose

import kernelmaps
from kernelmaps import IKA, Nystroem, RandomBinningFeatures, RandomFourierFeatures
from kernelmaps._parallel import n_threads
from kernelmaps.kernels import Gaussian
from kernelmaps.sampling import _landmarks as landmarks_module
from kernelmaps.sampling import resolve_landmarks, select_landmarks

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

from ._dask import CHUNKINGS, as_dask, dense, nothing_computed  # noqa: E402

pytestmark = pytest.mark.dask

N_ROWS, N_COLUMNS = 120, 5
RTOL = {np.dtype(np.float64): 1e-12, np.dtype(np.float32): 1e-5}


def _data(kind: str = "dense", dtype: Any = np.float64, seed: int = 0) -> Any:
    rng = np.random.default_rng(seed)
    if kind == "sparse":
        X = sp.random(N_ROWS, N_COLUMNS + 1, density=0.5, format="csr", random_state=seed)
        return X.astype(dtype)
    return (rng.standard_normal((N_ROWS, N_COLUMNS)) * 0.7).astype(dtype)


def _gram(dtype: Any = np.float64) -> np.ndarray:
    X = _data()
    return Gaussian(gamma=0.2)(X, X).astype(dtype)


#: name -> (factory, kinds of data it is checked on)
CASES: dict[str, tuple[Callable[[], Any], tuple[str, ...]]] = {
    "nystroem-uniform": (
        lambda: Nystroem(gamma=0.3, n_components=12, random_state=0),
        ("dense", "sparse"),
    ),
    "nystroem-kmeans": (
        lambda: Nystroem(gamma=0.3, n_components=12, landmarks="kmeans", random_state=1),
        ("dense", "sparse"),
    ),
    "nystroem-leverage": (
        lambda: Nystroem(gamma=0.3, n_components=12, landmarks="leverage", random_state=2),
        ("dense", "sparse"),
    ),
    "nystroem-rpcholesky": (
        lambda: Nystroem(gamma=0.3, n_components=12, landmarks="rpcholesky", random_state=8),
        ("dense", "sparse"),
    ),
    "nystroem-laplacian-leverage": (
        lambda: Nystroem(
            "laplacian", gamma=0.3, n_components=10, landmarks="leverage", random_state=3
        ),
        ("dense",),
    ),
    "ika-kernel-uniform": (
        lambda: IKA(gamma=0.3, n_components=6, n_basis=12, sample_size=70, random_state=4),
        ("dense", "sparse"),
    ),
    "ika-kernel-kmeans": (
        lambda: IKA(
            gamma=0.3,
            n_components=6,
            n_basis=12,
            centers="kmeans",
            sample_size=70,
            random_state=5,
        ),
        ("dense",),
    ),
    "ika-kernel-rpcholesky": (
        lambda: IKA(
            gamma=0.3,
            n_components=6,
            n_basis=12,
            centers="rpcholesky",
            sample_size=70,
            random_state=9,
        ),
        ("dense",),
    ),
    "ika-relu": (
        lambda: IKA(n_components=4, n_basis=8, basis="relu", sample_size=90, random_state=6),
        ("dense",),
    ),
    "ika-fourier": (
        lambda: IKA(gamma=0.3, n_components=5, n_basis=10, basis="fourier", random_state=7),
        ("dense",),
    ),
    "binning": (
        lambda: RandomBinningFeatures(gamma=0.8, n_grids=12, random_state=8),
        ("dense", "sparse"),
    ),
    # quasi-random frequencies turned onto the principal axes of the rows read
    "rff-sobol-rotated": (
        lambda: RandomFourierFeatures(gamma=0.3, n_components=16, sampler="sobol", random_state=10),
        ("dense", "sparse"),
    ),
    "rff-halton-rotated": (
        lambda: RandomFourierFeatures(
            "matern", gamma=0.3, n_components=16, sampler="halton", random_state=11
        ),
        ("dense",),
    ),
}

PARAMS = [
    pytest.param(name, kind, id=f"{name}-{kind}")
    for name, (_, kinds) in CASES.items()
    for kind in kinds
]


def _fitted(est: Any) -> dict[str, Any]:
    """The fitted attributes (public ``*_`` and the private ones ``transform`` reads)."""
    names = [k for k in vars(est) if k.endswith("_") and not k.startswith("__")]
    names += [k for k in ("_n_features_out", "_column_offsets") if hasattr(est, k)]
    return {k: getattr(est, k) for k in names}


def _assert_same_fit(got: Any, want: Any) -> None:
    """Every fitted attribute of ``got`` (Dask fit) equal to ``want``'s (numpy fit)."""
    a, b = _fitted(got), _fitted(want)
    assert sorted(a) == sorted(b)
    for name, value in b.items():
        mine = a[name]
        if name == "kernel_":
            assert repr(mine) == repr(value)
        elif isinstance(value, np.ndarray):
            assert type(mine) is np.ndarray, f"{name} is a {type(mine)}"
            assert mine.dtype == value.dtype, name
            assert np.array_equal(mine, value), name
        elif isinstance(value, list):  # bin_keys_
            assert len(mine) == len(value), name
            for p, (x, y) in enumerate(zip(mine, value, strict=True)):
                assert type(x) is np.ndarray and x.dtype == y.dtype, (name, p)
                assert np.array_equal(x, y), (name, p)
        else:
            assert type(mine) is type(value) and mine == value, name


def _assert_transform_close(got: Any, want: Any) -> None:
    got, want = dense(got), dense(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    rtol = RTOL[want.dtype]
    scale = max(1.0, float(np.max(np.abs(want))))
    assert_allclose(got, want, rtol=rtol, atol=rtol * scale)


@contextmanager
def counted_computes() -> Iterator[list[int]]:
    """The local threaded scheduler, counting the graphs it computes."""
    from dask.threaded import get

    calls: list[int] = []

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return get(*args, **kwargs)

    with dask.config.set(scheduler=counting):
        yield calls


# ---------------------------------------------------------------------------------------
# equal to the numpy fit, whatever the chunking


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(("name", "kind"), PARAMS)
def test_fit_equals_numpy_for_every_chunking(name, kind, dtype):
    make, _ = CASES[name]
    X = _data(kind, dtype)
    want = make().fit(X)
    Z_want = want.transform(X)
    for chunking in CHUNKINGS:
        Xd = as_dask(X, chunking)
        got = make().fit(Xd)
        _assert_same_fit(got, want)
        assert got.n_features_in_ == X.shape[1]
        _assert_transform_close(got.transform(Xd).compute(), Z_want)


@pytest.mark.parametrize("landmarks", ["uniform", "leverage", "rpcholesky"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_precomputed_nystroem_on_dask(landmarks, dtype):
    K = _gram(dtype)

    def make():
        return Nystroem("precomputed", n_components=10, landmarks=landmarks, random_state=3)

    if landmarks != "uniform":
        with pytest.raises(ValueError, match="in the whole n x n matrix, in memory"):
            make().fit(as_dask(K, "rows-37"))
        return
    want = make().fit(K)
    for chunking in CHUNKINGS:
        with counted_computes() as calls:
            got = make().fit(as_dask(K, chunking))
        assert len(calls) == 1
        _assert_same_fit(got, want)
    with pytest.raises(ValueError, match="square n x n kernel matrix"):
        make().fit(as_dask(K[:, :50], "rows-37"))


def test_given_landmarks_read_nothing():
    X = _data()
    L = X[:7] + 0.5
    want = Nystroem(gamma=0.3, landmarks=L).fit(X)
    with nothing_computed():
        got = Nystroem(gamma=0.3, landmarks=L).fit(as_dask(X, "rows-37"))
    _assert_same_fit(got, want)


def test_unknown_chunk_sizes_are_computed_and_the_callers_array_kept():
    X = _data()
    Xd = as_dask(X, "rows-37")
    Xu = Xd[Xd[:, 0] > -np.inf]  # every row, chunk sizes unknown
    assert np.isnan(Xu.shape[0])
    for make in (CASES["nystroem-uniform"][0], CASES["ika-kernel-kmeans"][0]):
        with counted_computes() as calls:
            got = make().fit(Xu)
        assert len(calls) == 2  # the chunk sizes, then the rows
        _assert_same_fit(got, make().fit(X))
    assert np.isnan(Xu.shape[0])  # the caller's array is left as it was
    got = CASES["binning"][0]().fit(Xu)  # binning needs no sizes
    _assert_same_fit(got, CASES["binning"][0]().fit(X))


@pytest.mark.parametrize("kind", ["dense", "sparse"])
def test_a_chunk_without_rows(kind):
    X = _data(kind)
    Xd = da.from_array(X, chunks=((0, 50, 70), (X.shape[1],)), asarray=False)
    for name in ("nystroem-kmeans", "ika-kernel-uniform", "binning"):
        make, _ = CASES[name]
        _assert_same_fit(make().fit(Xd), make().fit(X))


# ---------------------------------------------------------------------------------------
# one compute


@pytest.mark.parametrize(
    "name",
    [
        "nystroem-uniform",
        "nystroem-kmeans",
        "nystroem-leverage",
        "nystroem-rpcholesky",
        "ika-kernel-uniform",
        "ika-kernel-kmeans",
        "ika-fourier",
        "binning",
        "rff-sobol-rotated",
    ],
)
def test_the_rows_are_read_in_one_compute(name):
    make, _ = CASES[name]
    Xd = as_dask(_data(), "uneven-with-1-row")
    with counted_computes() as calls:
        make().fit(Xd)
    assert len(calls) == 1


def test_uniform_gather_reads_only_the_landmark_rows():
    """The gather's tasks take only the drawn rows of the chunks that hold some."""
    from kernelmaps._dask._rows import gather_rows

    X = _data()
    Xd = as_dask(X, "rows-37")
    rows = np.array([100, 3, 3, 74])
    with counted_computes() as calls:
        some, every = gather_rows(Xd, [rows, None])
    assert len(calls) == 1
    assert np.array_equal(some, X[rows]) and np.array_equal(every, X)
    with counted_computes() as calls:
        (picked,) = gather_rows(Xd, [np.array([5, 40])])
    assert len(calls) == 1 and np.array_equal(picked, X[[5, 40]])
    with nothing_computed():
        (empty,) = gather_rows(Xd, [np.empty(0, dtype=np.intp)])
    assert empty.shape == (0, N_COLUMNS)
    with pytest.raises(IndexError, match="out of range"):
        gather_rows(Xd, [np.array([N_ROWS])])


# ---------------------------------------------------------------------------------------
# the landmark functions on Dask arrays (NystroemKernelRidge's entry point)


@pytest.mark.parametrize("kind", ["dense", "sparse"])
@pytest.mark.parametrize("method", ["uniform", "kmeans", "leverage", "rpcholesky"])
def test_resolve_and_select_landmarks_on_dask_equal_numpy(method, kind):
    X = _data(kind)
    kernel = Gaussian(gamma=0.3)
    for chunking in CHUNKINGS:
        Xd = as_dask(X, chunking)
        for unique in (False, True):
            want = resolve_landmarks(
                X, method, 9, kernel=kernel, rng=np.random.default_rng(4), unique=unique
            )
            got = resolve_landmarks(
                Xd, method, 9, kernel=kernel, rng=np.random.default_rng(4), unique=unique
            )
            for x, y in zip(got, want, strict=True):
                assert (x is None) == (y is None)
                if y is not None:
                    assert type(x) is np.ndarray and x.dtype == y.dtype
                    assert np.array_equal(x, y)
        L, idx = select_landmarks(Xd, 9, method, kernel=kernel, rng=np.random.default_rng(5))
        L0, idx0 = select_landmarks(X, 9, method, kernel=kernel, rng=np.random.default_rng(5))
        assert np.array_equal(L, L0)
        assert (idx is None and idx0 is None) or np.array_equal(idx, idx0)


def test_resolve_landmarks_on_dask_warns_at_the_caller_and_checks():
    X = _data()
    Xd = as_dask(X, "rows-37")
    with pytest.warns(UserWarning, match="n_components=500 is larger than n_samples=120") as w:
        L, idx = resolve_landmarks(Xd, "uniform", 500, rng=np.random.default_rng(0))
    assert w[0].filename == __file__
    assert np.array_equal(L, X) and np.array_equal(idx, np.arange(N_ROWS))
    with pytest.warns(UserWarning, match="larger than n_samples") as w:
        Nystroem(n_components=500).fit(Xd)
    assert w[0].filename == __file__
    with pytest.raises(ValueError, match="needs the kernel"):
        select_landmarks(Xd, 3, "leverage", rng=np.random.default_rng(0))
    with pytest.raises(TypeError, match="takes the options"):
        select_landmarks(Xd, 3, "kmeans", rng=np.random.default_rng(0), accelerated=True)


def test_non_finite_rows_read_are_refused_with_the_numpy_message():
    X = _data()
    X[:, 2] = np.nan  # every row: the landmarks' too
    with pytest.raises(ValueError, match="Input X contains NaN") as want:
        Nystroem(n_components=5).fit(X)
    with pytest.raises(ValueError, match="Input X contains NaN") as got:
        Nystroem(n_components=5).fit(as_dask(X, "rows-37"))
    assert str(got.value) == str(want.value)
    X = _data()
    X[117, 0] = np.nan  # one row, in the last chunk: binning reads every chunk
    with pytest.raises(ValueError, match="RandomBinningFeatures does not accept") as want:
        RandomBinningFeatures().fit(X)
    with pytest.raises(ValueError, match="RandomBinningFeatures does not accept") as got:
        RandomBinningFeatures().fit(as_dask(X, "rows-37"))
    assert str(got.value) == str(want.value)
    X[117, 0] = np.inf
    with pytest.raises(ValueError, match="Input X contains infinity"):
        RandomBinningFeatures().fit(as_dask(X, "rows-37"))


# ---------------------------------------------------------------------------------------
# k-means and leverage on a uniform sample of the rows above landmark_sample_size(m)


@pytest.fixture
def small_sample(monkeypatch):
    """landmark_sample_size(m) = max(40, 2 m), so that 120 rows are sampled."""
    monkeypatch.setattr(landmarks_module, "LANDMARK_SAMPLE_SIZE", 40)
    monkeypatch.setattr(landmarks_module, "_SAMPLE_ROWS_PER_LANDMARK", 2)
    return 40


@pytest.mark.parametrize("kind", ["dense", "sparse"])
@pytest.mark.parametrize("method", ["kmeans", "leverage"])
def test_sampled_kmeans_and_leverage_equal_on_dask(small_sample, method, kind):
    X = _data(kind)
    kernel = Gaussian(gamma=0.3)
    draw = landmarks_module.draw_landmarks(
        N_ROWS, X.shape[1], X.dtype, method, 8, kernel=kernel, rng=np.random.default_rng(6)
    )
    assert draw.rows is not None and draw.rows.shape == (small_sample,)
    assert np.all(np.diff(draw.rows) > 0)
    want = select_landmarks(X, 8, method, kernel=kernel, rng=np.random.default_rng(6))
    if method == "leverage":  # the landmarks are rows of the sample
        assert np.all(np.isin(want[1], draw.rows))
        assert np.array_equal(want[0], dense(X[want[1]]))
    for chunking in CHUNKINGS:
        got = select_landmarks(
            as_dask(X, chunking), 8, method, kernel=kernel, rng=np.random.default_rng(6)
        )
        assert np.array_equal(got[0], want[0])
        assert (got[1] is None) == (want[1] is None)
        assert got[1] is None or np.array_equal(got[1], want[1])
    make = lambda: Nystroem(gamma=0.3, n_components=8, landmarks=method, random_state=6)  # noqa: E731
    _assert_same_fit(make().fit(as_dask(X, "rows-37")), make().fit(X))


# ---------------------------------------------------------------------------------------
# settings and a real cluster


class _SettingsProbeBinning(RandomBinningFeatures):
    """Random binning whose occupied keys, in every grid, record the settings seen where
    the keys are collected: 1000 + (engine is numpy), 2000 + working_memory, 3000 + the
    row-block threads allowed."""

    def _occupied_keys(self, X: Any) -> list[np.ndarray]:
        seen = np.array(
            [
                1000 + int(kernelmaps.get_config()["engine"] == "numpy"),
                2000 + int(sklearn.get_config()["working_memory"]),
                3000 + n_threads(),
            ],
            dtype=np.uint64,
        )
        return [seen for _ in range(self.n_grids)]


def test_settings_reach_the_chunk_tasks():
    Xd = as_dask(_data(), "rows-37")
    with (
        kernelmaps.config_context(engine="numpy"),
        sklearn.config_context(working_memory=7),
        dask.config.set(scheduler="threads"),
    ):
        est = _SettingsProbeBinning(n_grids=2).fit(Xd)
    assert est.bin_keys_[0].tolist() == [1001, 2007, 3001]


@pytest.mark.slow
def test_fits_on_a_local_cluster_equal_local(dask_client):
    """Estimators pickled to two worker processes (the client is the default scheduler)."""
    X, Xs = _data(), _data("sparse")
    for name, data, chunking in [
        ("nystroem-uniform", X, "rows-37"),
        ("nystroem-uniform", Xs, "uneven-with-1-row"),
        ("nystroem-kmeans", X, "uneven-with-1-row"),
        ("ika-kernel-uniform", X, "rows-37"),
        ("binning", X, "rows-37"),
        ("binning", Xs, "uneven-with-1-row"),
        ("rff-sobol-rotated", X, "rows-37"),
        ("rff-sobol-rotated", Xs, "uneven-with-1-row"),
    ]:
        make, _ = CASES[name]
        _assert_same_fit(make().fit(as_dask(data, chunking)), make().fit(data))
    with kernelmaps.config_context(engine="numpy"), sklearn.config_context(working_memory=7):
        est = _SettingsProbeBinning(n_grids=2).fit(as_dask(X, "rows-37"))
    assert est.bin_keys_[0].tolist() == [1001, 2007, 3001]
