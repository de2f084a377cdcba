"""NystroemKernelRidge (FALKON) and KernelRidge fitted on Dask arrays.

The Dask fit runs the same algorithm as the numpy one; only the sums over the rows of
``K_nm^T Y`` and ``K_nm^T (K_nm V)`` are grouped differently (by chunk, then pairwise).
Two kinds of comparison follow from that:

* after a fixed number ``k`` of CG steps (``tol`` tiny, ``max_iter=k``), far from
  convergence, the two fits differ by rounding only.  Each matvec of the two paths differs
  by at most about ``n u`` relatively (a sum of ``n`` rows regrouped; ``u`` the unit
  roundoff), and to first order one CG step amplifies a relative perturbation of its
  input by at most the condition number ``kappa`` of the preconditioned system (computed
  here), hence the generous ``rtol = kappa**k * n * u`` on the preconditioned unknowns
  ``beta = A T c`` (the quantities CG iterates on; about 1e-8 for ``k = 4`` here, while
  the gaps seen are about 1e-14);
* run to convergence, both meet the stopping rule: with ``M`` the preconditioned matrix
  and ``r`` the relative residual, ``|beta - beta*| <= kappa r |beta*|`` for each, so the
  two are within ``kappa (r_1 + r_2) |beta*|`` of each other, whatever the rounding (late
  CG iterates are sensitive to rounding, so no tighter bound holds there).
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
import dask  # noqa: E402
import scipy.sparse as sp  # noqa: E402
import sklearn  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.metrics.pairwise import rbf_kernel  # noqa: E402

from kernelmaps import KernelRidge, NystroemKernelRidge  # noqa: E402
from kernelmaps._dask import _rows as dask_rows  # noqa: E402
from kernelmaps._parallel import n_threads  # noqa: E402
from kernelmaps.exceptions import NonFiniteOutputError  # noqa: E402
from kernelmaps.kernels import Gaussian  # noqa: E402
from kernelmaps.models._falkon._solver import (  # noqa: E402
    FalkonPreconditioner,
    RowsMatvec,
    landmark_gram,
)
from tests._dask import CHUNKINGS, as_dask  # noqa: E402

pytestmark = pytest.mark.dask

N, D, M = 300, 5, 30
GAMMA, ALPHA = 0.2, 0.5
U64 = np.finfo(np.float64).eps / 2


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((N, D))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(N)
    L = X[rng.choice(N, M, replace=False)]
    return X, y, L


def _model(L: np.ndarray, **params) -> NystroemKernelRidge:
    return NystroemKernelRidge(gamma=GAMMA, landmarks=L, alpha=ALPHA, **params)


def _preconditioned(X: np.ndarray, L: np.ndarray) -> tuple[np.ndarray, float]:
    """``A T`` (``beta = A T c``) and the condition number of the preconditioned matrix."""
    kernel = Gaussian(gamma=GAMMA)
    K_nm = kernel(X, L)
    H = K_nm.T @ K_nm + ALPHA * kernel(L, L)
    pre = FalkonPreconditioner(landmark_gram(kernel, L), X.shape[0], ALPHA)
    AT = pre.A @ pre.T
    S = np.linalg.inv(AT)
    eig = np.linalg.eigvalsh(S.T @ H @ S)
    return AT, float(eig[-1] / eig[0])


def _fit_steps(model: NystroemKernelRidge, X, y) -> NystroemKernelRidge:
    """Fit running exactly ``max_iter`` steps (tol tiny: no convergence is expected)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(X, y)


def _beta_gap(AT: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    """``|beta_a - beta_b| / |beta_a|`` (columns together)."""
    beta_a, beta_b = AT @ a, AT @ b
    return float(np.linalg.norm(beta_a - beta_b) / np.linalg.norm(beta_a))


@pytest.mark.parametrize("cache_size", [0, 64])
@pytest.mark.parametrize("chunking", list(CHUNKINGS))
def test_fixed_steps_equal_numpy_to_rounding(data, chunking, cache_size) -> None:
    X, y, L = data
    k = 4
    AT, kappa = _preconditioned(X, L)
    params = {"tol": 1e-300, "max_iter": k, "cache_size": cache_size}
    local = _fit_steps(_model(L, **params), X, y)
    fitted = _fit_steps(_model(L, **params), as_dask(X, chunking), y)
    assert fitted.n_iter_ == local.n_iter_ == k
    assert _beta_gap(AT, local.dual_coef_, fitted.dual_coef_) <= kappa**k * N * U64
    assert fitted.n_cached_rows_ == local.n_cached_rows_ == (N if cache_size else 0)
    assert isinstance(fitted.dual_coef_, np.ndarray) and fitted.dual_coef_.shape == (M,)
    assert isinstance(fitted.landmarks_, np.ndarray) and fitted.n_features_in_ == D
    assert fitted.residual_ == pytest.approx(local.residual_, rel=kappa**k * N * U64)


@pytest.mark.parametrize("cache_size", [0, 64])
@pytest.mark.parametrize("chunking", list(CHUNKINGS))
def test_converged_fit_equals_numpy(data, chunking, cache_size) -> None:
    X, y, L = data
    tol = 1e-10
    AT, kappa = _preconditioned(X, L)
    local = _model(L, tol=tol, cache_size=cache_size).fit(X, y)
    y_dask = da.from_array(y, chunks=50)  # other chunks than X's: aligned by the fit
    fitted = _model(L, tol=tol, cache_size=cache_size).fit(as_dask(X, chunking), y_dask)
    assert fitted.converged_ and local.converged_
    assert fitted.n_iter_ == local.n_iter_
    bound = kappa * (local.residual_ + fitted.residual_)
    assert _beta_gap(AT, local.dual_coef_, fitted.dual_coef_) <= bound
    # predictions: lazy on Dask, the same model.  A prediction is a sum of m terms
    # c_j k(x, l_j), which a product of another shape may round otherwise: by at most
    # m u sum_j |c_j k(x, l_j)| for each (Higham), and the kernel values by a few u.
    pred = fitted.predict(as_dask(X[:40], chunking))
    assert isinstance(pred, da.Array)
    scale = np.abs(fitted.kernel_(X[:40], L)) @ np.abs(fitted.dual_coef_)
    assert np.all(np.abs(pred.compute() - fitted.predict(X[:40])) <= 4 * M * U64 * scale)


def test_two_targets_and_sparse_chunks(data) -> None:
    X, y, L = data
    k = 4
    AT, kappa = _preconditioned(X, L)
    Y = np.column_stack([y, np.cos(X[:, 1])])
    local = _fit_steps(_model(L, tol=1e-300, max_iter=k), X, Y)
    Y_dask = da.from_array(Y, chunks=(64, 1))
    fitted = _fit_steps(_model(L, tol=1e-300, max_iter=k), as_dask(X, "rows-37"), Y_dask)
    assert fitted.dual_coef_.shape == (M, 2)
    assert _beta_gap(AT, local.dual_coef_, fitted.dual_coef_) <= kappa**k * N * U64
    # scipy.sparse chunks: the kernel on CSR rows, as in the numpy path
    Xs = sp.csr_matrix(np.where(np.abs(X) > 0.5, X, 0.0))
    local = _fit_steps(_model(L, tol=1e-300, max_iter=k), Xs, y)
    fitted = _fit_steps(_model(L, tol=1e-300, max_iter=k), as_dask(Xs, "rows-37"), y)
    AT, kappa = _preconditioned(Xs.toarray(), L)
    assert _beta_gap(AT, local.dual_coef_, fitted.dual_coef_) <= kappa**k * N * U64


@pytest.mark.parametrize("chunking", ["rows-37", "uneven-with-1-row"])
def test_float32(data, chunking) -> None:
    """float32 X with the Gaussian kernel: ``K_nm`` blocks and their products in float32.

    The numpy path sums up to ``r`` rows in one float32 product (the rows of a 1 MiB chunk
    of ``K_nm``: all 300 here), the Dask path at most a chunk's rows, so the matvecs
    differ by up to ``2 r u32`` relatively (Higham's bound ``r u`` on a sum of ``r``
    terms, for each path); ``k`` steps amplify that by at most ``kappa**k``.
    """
    X, y, L = data
    X32, L32 = X.astype(np.float32), L.astype(np.float32)
    k = 3
    AT, kappa = _preconditioned(X, L)
    local = _fit_steps(_model(L32, tol=1e-300, max_iter=k), X32, y)
    fitted = _fit_steps(_model(L32, tol=1e-300, max_iter=k), as_dask(X32, chunking), y)
    u32 = np.finfo(np.float32).eps / 2
    assert fitted.landmarks_.dtype == np.float32 and fitted.dual_coef_.dtype == np.float64
    assert _beta_gap(AT, local.dual_coef_, fitted.dual_coef_) <= kappa**k * 2 * N * u32
    pred = fitted.predict(as_dask(X32[:10], chunking)).compute()
    assert pred.dtype == np.float32


def test_uniform_landmarks_equal_numpy(data) -> None:
    """Landmarks drawn by the fit: ``resolve_landmarks`` on a Dask ``X`` (global row
    indices on the client) must give the numpy path's landmarks."""
    X, y, _ = data
    params = {"gamma": GAMMA, "n_components": M, "alpha": ALPHA, "random_state": 0, "tol": 1e-10}
    local = NystroemKernelRidge(**params).fit(X, y)
    try:
        fitted = NystroemKernelRidge(**params).fit(as_dask(X, "rows-37"), y)
    except Exception as exc:  # pending: resolve_landmarks accepting a Dask array
        pytest.skip(f"resolve_landmarks does not take a Dask array yet: {exc!r}")
    assert isinstance(fitted.landmarks_, np.ndarray)
    np.testing.assert_array_equal(fitted.landmarks_, local.landmarks_)
    np.testing.assert_array_equal(fitted.landmark_indices_, local.landmark_indices_)
    AT, kappa = _preconditioned(X, local.landmarks_)
    assert fitted.n_iter_ == local.n_iter_
    bound = kappa * (local.residual_ + fitted.residual_)
    assert _beta_gap(AT, local.dual_coef_, fitted.dual_coef_) <= bound


def test_one_computation_per_iteration_and_x_read_once(data) -> None:
    X, y, L = data
    calls = []
    reads = []

    def counting(dsk, keys, **kwargs):
        calls.append(keys)
        return dask.threaded.get(dsk, keys, **kwargs)

    def source(block):
        reads.append(block.shape[0])
        return block

    X_dask = da.from_array(X, chunks=(37, D)).map_blocks(source, meta=np.empty((0, D)))
    with dask.config.set(scheduler=counting):
        fitted = _fit_steps(_model(L, tol=1e-300, max_iter=7, cache_size=0), X_dask, y)
    # persisting the chunks and gathering K_nm^T y: 2; then one per CG iteration
    assert fitted.n_iter_ == 7
    assert len(calls) == 2 + fitted.n_iter_
    # X persisted on the workers: each chunk computed once for the whole fit
    assert sorted(reads) == sorted(X_dask.chunks[0])


def test_cache_within_budget_and_cluster_memory(data, monkeypatch) -> None:
    X, y, L = data
    row_bytes = M * 8
    # the first 100 rows are eligible: chunks of 37 rows keep 37 + 37 (the third chunk,
    # one block of 37 rows, does not fit in its remaining 26)
    budget = (100 * row_bytes + 1) / 2**20  # MiB: 100 rows of K_nm
    model = _fit_steps(
        _model(L, tol=1e-300, max_iter=2, cache_size=budget), as_dask(X, "rows-37"), y
    )
    assert model.n_cached_rows_ == 74
    # a distributed cluster with little memory caps the cache below cache_size
    monkeypatch.setattr(dask_rows, "cluster_memory_limit", lambda: X.nbytes + 50 * row_bytes)
    model = _fit_steps(_model(L, tol=1e-300, max_iter=2), as_dask(X, "rows-37"), y)
    assert model.n_cached_rows_ == 37


def test_validation_messages(data) -> None:
    X, y, L = data
    bad = X.copy()
    bad[200, 1] = np.nan
    with pytest.raises(ValueError, match="Input X contains NaN") as numpy_error:
        _model(L).fit(bad, y)
    with pytest.raises(ValueError, match="Input X contains NaN") as dask_error:
        _model(L).fit(as_dask(bad, "rows-37"), y)
    assert str(dask_error.value) == str(numpy_error.value)
    bad_y = y.copy()
    bad_y[5] = np.inf
    with pytest.raises(ValueError, match="Input y contains infinity"):
        _model(L).fit(as_dask(X, "rows-37"), da.from_array(bad_y, chunks=100))
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        _model(L).fit(as_dask(X, "rows-37"), y[:-1])
    # unknown row-chunk sizes are computed (one more pass), then y is aligned on them
    X_unknown = as_dask(X, "rows-37")
    kept = X[:, 0] > 0
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        _model(L).fit(X_unknown[X_unknown[:, 0] > 0], y)
    k = 4  # fixed steps: both fits run the same iterations on the same rows
    fitted = _fit_steps(_model(L, tol=1e-300, max_iter=k), X_unknown[X_unknown[:, 0] > 0], y[kept])
    reference = _fit_steps(_model(L, tol=1e-300, max_iter=k), X[kept], y[kept])
    AT, kappa = _preconditioned(X[kept], L)
    assert _beta_gap(AT, reference.dual_coef_, fitted.dual_coef_) <= kappa**k * N * U64


def test_overflowing_targets_raise_a_clear_error(data) -> None:
    """K_nm^T y overflowing float64 on the workers is refused before the conjugate
    gradient (which would stop at once on NaN residuals and return zeros)."""
    X, _, L = data
    huge = np.full(N, 1.7e308)
    for X_ in (X, as_dask(X, "rows-37")):
        with pytest.raises(NonFiniteOutputError, match=r"K_nm\^T y.*rescale y"):
            _model(L).fit(X_, huge)


@pytest.mark.parametrize("chunking", ["rows-37", "column-chunked"])
def test_kernel_ridge_on_dask_equals_numpy(data, chunking) -> None:
    X, y, _ = data
    local = KernelRidge(gamma=GAMMA, alpha=ALPHA).fit(X, y)
    fitted = KernelRidge(gamma=GAMMA, alpha=ALPHA).fit(as_dask(X, chunking), da.from_array(y))
    # the data gathered whole, then the numpy fit: the same computation
    np.testing.assert_array_equal(fitted.dual_coef_, local.dual_coef_)
    assert isinstance(fitted.X_fit_, np.ndarray) and fitted.n_features_in_ == D


# -- on a real LocalCluster (2 worker processes) --------------------------------------------


def _probe_kernel(X, Y, working_memory):
    """An RBF kernel that fails unless the caller's settings reached this task (and, on a
    worker, kernelmaps' row-block threads are capped at one)."""
    from distributed import get_worker

    try:
        get_worker()
        on_worker = True
    except ValueError:
        on_worker = False
    if sklearn.get_config()["working_memory"] != working_memory or (on_worker and n_threads() != 1):
        raise AssertionError("the client's settings did not reach the worker")
    return rbf_kernel(X, Y, gamma=GAMMA)


def _keys_on_workers(client) -> list[str]:
    return sorted(
        k for keys in client.run(lambda dask_worker: list(dask_worker.data)).values() for k in keys
    )


@pytest.mark.slow
def test_fit_on_cluster_equals_local(data, dask_client) -> None:
    X, y, L = data
    k = 4
    AT, kappa = _preconditioned(X, L)
    params = {"tol": 1e-300, "max_iter": k, "cache_size": 0}
    with dask.config.set(scheduler="threads"):
        local = _fit_steps(_model(L, **params), as_dask(X, "rows-37"), y)
    on_cluster = _fit_steps(_model(L, **params), as_dask(X, "rows-37"), y)
    numpy_fit = _fit_steps(_model(L, **params), X, y)
    assert on_cluster.n_iter_ == k
    # The same chunks and tree: only the BLAS of the worker processes may round otherwise.
    assert _beta_gap(AT, local.dual_coef_, on_cluster.dual_coef_) <= kappa**k * N * U64
    assert _beta_gap(AT, numpy_fit.dual_coef_, on_cluster.dual_coef_) <= kappa**k * N * U64
    # K_nm persisted on the workers, then released with the fit's chunks
    cached = _fit_steps(_model(L, tol=1e-300, max_iter=k), as_dask(X, "rows-37"), y)
    assert cached.n_cached_rows_ == N
    assert _beta_gap(AT, numpy_fit.dual_coef_, cached.dual_coef_) <= kappa**k * N * U64
    deadline = time.monotonic() + 10.0  # releases reach the workers asynchronously
    while time.monotonic() < deadline and _keys_on_workers(dask_client):
        time.sleep(0.05)
    assert _keys_on_workers(dask_client) == []


@pytest.mark.slow
def test_settings_reach_the_workers(data, dask_client) -> None:
    X, y, L = data
    model = NystroemKernelRidge(
        kernel=_probe_kernel, kernel_params={"working_memory": 77}, landmarks=L, alpha=ALPHA
    )
    with sklearn.config_context(working_memory=77):
        _fit_steps(model.set_params(max_iter=2), as_dask(X, "rows-37"), y)
    assert model.n_iter_ == 2


async def _stop_stealing(dask_scheduler) -> None:
    await dask_scheduler.extensions["stealing"].stop()


async def _start_stealing(dask_scheduler) -> None:
    await dask_scheduler.extensions["stealing"].start()


@pytest.mark.slow
def test_landmarks_sent_once_per_worker(dask_client, monkeypatch) -> None:
    """Each iteration moves ``V`` (to each worker once) and the ``m x t`` partial products
    of the tree, never the landmark kernel nor the chunks: the landmark kernel reaches a
    worker once for the whole fit, in the computation that persists the chunks.

    Work stealing is paused here: it may move a chunk (with its landmark kernel) to an
    idle worker, a load-balancing decision of the scheduler, not traffic of the design.
    """
    rng = np.random.default_rng(1)
    X = rng.standard_normal((400, 200))  # the landmarks (200 columns) far larger than V
    y = rng.standard_normal(400)
    L = X[:16]
    n_workers = len(dask_client.nthreads())
    n_chunks = -(-400 // 37)
    V_bytes = L.shape[0] * 8  # V and each partial product: m x 1 float64

    def fetched(dask_worker):
        return [dict(entry["keys"]) for entry in dask_worker.transfer_incoming_log]

    def new_keys(before, after):
        return [kv for w in after for entry in after[w][len(before[w]) :] for kv in entry.items()]

    iterations = []
    call = RowsMatvec.__call__

    def logged(self, V, out):
        before = dask_client.run(fetched)
        result = call(self, V, out)
        iterations.append(new_keys(before, dask_client.run(fetched)))
        return result

    monkeypatch.setattr(RowsMatvec, "__call__", logged)
    dask_client.run_on_scheduler(_stop_stealing)
    try:
        start = dask_client.run(fetched)
        _fit_steps(_model(L, tol=1e-300, max_iter=4, cache_size=0), as_dask(X, "rows-37"), y)
        whole_fit = new_keys(start, dask_client.run(fetched))
    finally:
        dask_client.run_on_scheduler(_start_stealing)
    assert len(iterations) == 4
    for moved in iterations:
        kinds = {str(key).split("-")[0] for key, _ in moved}
        assert kinds <= {"ndarray", "_call_held", "_add"}, (iterations.index(moved), moved)
        # V to the workers that did not compute its key, each partial at most once
        assert sum(key.startswith("ndarray") for key, _ in moved) <= n_workers - 1
        assert sum(nbytes for _, nbytes in moved) <= (n_workers + n_chunks) * V_bytes
    landmark_fetches = [key for key, _ in whole_fit if str(key).startswith("LandmarkKernel")]
    assert len(landmark_fetches) <= n_workers - 1
