"""Running an :class:`ExperimentConfig`: tidy results, provenance, resumable.

Every *cell* (data set x method x n_components x seed) fits one feature map on the fit rows
of the data set and records each asked metric as one row of a tidy table::

    experiment, dataset, method, kernel, gamma, n_components, seed, metric, value

With an output folder, each finished cell is appended at once to ``cells.jsonl`` there
(one JSON line per cell, flushed and synced), so a run that is interrupted (Ctrl-C, a
killed process) and started again with the same folder redoes no finished cell.  A cell is
identified by the data set's settings, the method's settings, ``n_components``, the seed
and the shared settings (bandwidth, downstream model); changing the grid, the seeds or the
list of methods reuses every cell already computed.  At the end ``results.csv`` and
``results.json`` (the rows with the configuration and provenance: package versions,
machine, seeds, times) are written.

Cells can run in parallel on any :class:`concurrent.futures.Executor` (a thread or process
pool, or a Dask client's ``client.get_executor()``): each remaining cell is a task, and
the caller alone appends the finished cells to the log, as they come, so resuming and the
provenance work as in a sequential run.  A task carries the caller's kernelmaps and
scikit-learn settings (:class:`~kernelmaps._task_settings.TaskSettings`); the prepared rows
of a data set go to a worker process with its first few tasks and are kept there (a
process keeps the last four data sets it received), so they are not pickled again for
every cell.
"""

from __future__ import annotations

import collections
import concurrent.futures as cf
import csv
import dataclasses
import datetime as _dt
import json
import os
import platform
import sys
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import numpy as np

from ..bandwidth import gamma_from_data
from ._config import DatasetConfig, ExperimentConfig, MethodConfig
from ._executor import (
    PENDING_PER_SLOT,
    data_token,
    describe_executor,
    executor_slots,
    forget_task_data,
    is_dask,
    task_data,
)
from ._isolation import capture_warnings, limit_threads
from ._registry import BANDWIDTH_KERNELS, MethodSpec, get_method

if TYPE_CHECKING:
    from .._task_settings import TaskSettings

__all__ = [
    "RESULT_COLUMNS",
    "ExperimentResult",
    "PreparedData",
    "prepare_data",
    "read_results",
    "run_experiment",
]

#: Columns of the tidy result table, in order.
RESULT_COLUMNS = (
    "experiment",
    "dataset",
    "method",
    "kernel",
    "gamma",
    "n_components",
    "seed",
    "metric",
    "value",
)

CELLS_FILE = "cells.jsonl"


@dataclasses.dataclass
class PreparedData:
    """The rows of one data set as an experiment uses them."""

    name: str
    X_fit: np.ndarray
    X_eval: np.ndarray
    y_fit: np.ndarray | None
    y_eval: np.ndarray | None
    task: str
    in_sample: bool
    n_rows: int
    n_features: int


def prepare_data(config: DatasetConfig, data_home: str | None = None) -> PreparedData:
    """Load a data set, draw its fit and held-out rows and scale them.

    The rows are a random choice (``config.data_seed``) of ``n_fit`` fit rows and
    ``n_eval`` held-out rows, disjoint; when the data set is smaller, the held-out rows
    are a third of it.  The scaling (``config.preprocess``) is learned on the fit rows.

    Examples
    --------
    >>> from kernelmaps.experiments import DatasetConfig, prepare_data
    >>> data = prepare_data(DatasetConfig("cpu_act", n_fit=100, n_eval=40))
    >>> data.X_fit.shape, data.X_eval.shape, data.task
    ((100, 21), (40, 21), 'regression')
    """
    from ..datasets import load_dataset

    ds = load_dataset(config.name, target=config.target, data_home=data_home)
    X = ds.X.toarray() if hasattr(ds.X, "toarray") else np.asarray(ds.X, dtype=np.float64)
    n = X.shape[0]
    if n < 4:
        raise ValueError(f"{config.display}: {n} rows; at least 4 are needed.")
    n_eval = min(config.n_eval, n // 3) if config.n_fit + config.n_eval > n else config.n_eval
    n_fit = min(config.n_fit, n - n_eval)
    rng = np.random.default_rng(config.data_seed)
    order = rng.permutation(n)
    fit_rows, eval_rows = order[:n_fit], order[n_fit : n_fit + n_eval]
    X_fit, X_eval = X[fit_rows], X[eval_rows]
    if config.preprocess == "minmax":
        lo, hi = X_fit.min(axis=0), X_fit.max(axis=0)
        span = np.where(hi > lo, hi - lo, 1.0)
        X_fit, X_eval = (X_fit - lo) / span, (X_eval - lo) / span
    elif config.preprocess == "standard":
        mu, sd = X_fit.mean(axis=0), X_fit.std(axis=0)
        sd = np.where(sd > 0, sd, 1.0)
        X_fit, X_eval = (X_fit - mu) / sd, (X_eval - mu) / sd
    y = None if ds.y is None else np.asarray(ds.y)
    return PreparedData(
        name=config.display,
        X_fit=np.ascontiguousarray(X_fit),
        X_eval=np.ascontiguousarray(X_eval),
        y_fit=None if y is None else y[fit_rows],
        y_eval=None if y is None else y[eval_rows],
        task=ds.task,
        in_sample=config.in_sample,
        n_rows=n,
        n_features=X.shape[1],
    )


@dataclasses.dataclass
class ExperimentResult:
    """What :func:`run_experiment` returns.

    Attributes
    ----------
    rows : list of dict
        The tidy table (columns :data:`RESULT_COLUMNS`).
    provenance : dict
        Package versions, machine, times, the configuration.
    n_cells : int
        Cells of the experiment.
    n_computed : int
        Cells computed by this call (the rest came from an earlier, interrupted run).
    failures : list of dict
        Cells whose method raised an error, with the message.
    output_dir : Path or None
        Where the files were written.

    Examples
    --------
    >>> from kernelmaps.experiments import ExperimentResult
    >>> result = ExperimentResult([{"method": "a", "value": 0.5}], {}, n_cells=1, n_computed=1,
    ...                           failures=[])
    >>> result.n_cells - result.n_computed, result.values(method="a")
    (0, [0.5])
    """

    rows: list[dict[str, Any]]
    provenance: dict[str, Any]
    n_cells: int
    n_computed: int
    failures: list[dict[str, Any]]
    output_dir: Path | None = None

    def values(self, **where: Any) -> list[float]:
        """Values of the rows matching every ``column=value`` given.

        Examples
        --------
        >>> from kernelmaps.experiments import ExperimentResult
        >>> rows = [{"method": "a", "value": 0.5}, {"method": "b", "value": 0.25}]
        >>> ExperimentResult(rows, {}, 2, 2, []).values(method="b")
        [0.25]
        """
        return [
            float(r["value"]) for r in self.rows if all(r.get(k) == v for k, v in where.items())
        ]


class _Progress:
    """A one-line progress bar on a terminal; silent elsewhere."""

    def __init__(self, total: int, enabled: bool, stream: TextIO) -> None:
        self.total, self.enabled, self.stream = total, enabled, stream
        self.done = 0
        self.start = time.perf_counter()

    def update(self, done: int, label: str) -> None:
        self.done = done
        if not self.enabled:
            return
        width = 24
        filled = int(width * done / max(self.total, 1))
        elapsed = time.perf_counter() - self.start
        eta = ""
        if 0 < done < self.total:
            eta = f" ETA {elapsed / done * (self.total - done):4.0f}s"
        line = f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{self.total} {label}{eta}"
        self.stream.write(line[:119].ljust(119))
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\r" + " " * 119 + "\r")
            self.stream.flush()


def _versions(extra: Iterable[str] = ()) -> dict[str, str]:
    from importlib import metadata

    out = {"python": platform.python_version()}
    for pkg in ("kernelmaps", "numpy", "scipy", "scikit-learn", "matplotlib", *extra):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = "not installed"
    return out


def _machine() -> dict[str, Any]:
    info: dict[str, Any] = {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": platform.processor(),
        "cpu_count": os.cpu_count(),
        "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"),
    }
    try:
        from threadpoolctl import threadpool_info

        info["blas"] = [
            {k: p.get(k) for k in ("internal_api", "version", "num_threads", "architecture")}
            for p in threadpool_info()
        ]
    except Exception:  # pragma: no cover - threadpoolctl ships with scikit-learn
        pass
    return info


def _cell_key(
    config: ExperimentConfig, d: DatasetConfig, m: MethodConfig, n_components: int, seed: int
) -> str:
    return "|".join(
        [
            d.key(),
            m.key(),
            str(n_components),
            str(seed),
            config.settings_key(),
            d.display,
            m.display,
        ]
    )


def _read_cells(path: Path) -> dict[str, dict[str, Any]]:
    done: dict[str, dict[str, Any]] = {}
    if not path.is_file():
        return done
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut short by an interruption
            if isinstance(record, dict) and "key" in record:
                done[record["key"]] = record
    return done


def _downstream(
    config: ExperimentConfig, data: PreparedData, Z_fit: Any, Z_eval: Any
) -> tuple[str, float] | None:
    if data.y_fit is None or data.y_eval is None:
        return None
    if data.task == "classification":
        if config.downstream_model == "linear_svc":
            from sklearn.svm import LinearSVC

            clf: Any = LinearSVC(C=1.0 / config.alpha)
        else:
            from sklearn.linear_model import RidgeClassifier

            clf = RidgeClassifier(alpha=config.alpha)
        clf.fit(Z_fit, data.y_fit)
        return "accuracy", float(np.mean(clf.predict(Z_eval) == data.y_eval))
    from sklearn.linear_model import Ridge

    reg = Ridge(alpha=config.alpha).fit(Z_fit, data.y_fit.astype(np.float64))
    residual = reg.predict(Z_eval) - data.y_eval.astype(np.float64)
    return "rmse", float(np.sqrt(np.mean(residual**2)))


def _run_cell(
    config: ExperimentConfig,
    data: PreparedData,
    spec: MethodSpec,
    kernel_params: dict[str, Any],
    extra_params: dict[str, Any],
    n_components: int,
    seed: int,
) -> dict[str, float]:
    """Fit one map, transform each set of rows once, and compute every asked metric."""

    def build() -> Any:
        est = spec.factory(n_components, dict(kernel_params), seed)
        if extra_params:
            est.set_params(**extra_params)
        return est

    metrics = config.metrics
    out: dict[str, float] = {}
    est = build()
    t0 = time.perf_counter()
    est.fit(data.X_fit)
    t1 = time.perf_counter()
    Z_eval = est.transform(data.X_eval)
    t2 = time.perf_counter()
    if "fit_time" in metrics:
        out["fit_time"] = t1 - t0
    if "transform_time" in metrics:
        out["transform_time"] = t2 - t1
    if "n_features_out" in metrics:
        out["n_features_out"] = float(Z_eval.shape[1])
    features = _LazyFitFeatures(est, data.X_fit)
    out.update(_kernel_errors(est, data, Z_eval, features, metrics))
    if {"accuracy", "rmse", "downstream"} & set(metrics):
        scored = _downstream(config, data, features.get(), Z_eval)
        if scored is not None and ("downstream" in metrics or scored[0] in metrics):
            out[scored[0]] = scored[1]
    if "peak_memory" in metrics:
        out["peak_memory"] = _peak_memory(build(), data)
    return out


class _LazyFitFeatures:
    """The features of the fit rows, computed at the first request only."""

    def __init__(self, est: Any, X_fit: np.ndarray) -> None:
        self.est, self.X_fit = est, X_fit
        self.Z: Any = None

    def get(self) -> Any:
        if self.Z is None:
            self.Z = self.est.transform(self.X_fit)
        return self.Z


def _kernel_errors(
    est: Any, data: PreparedData, Z_eval: Any, features: _LazyFitFeatures, metrics: list[str]
) -> dict[str, float]:
    """The asked ``*_error`` metrics, all from one set of features of the measured rows."""
    from ..metrics import NORMS, _fitted_kernel, kernel_errors_from_features

    norms = [norm for norm in NORMS if f"{norm}_error" in metrics]
    if not norms:
        return {}
    kernel = _fitted_kernel(est)
    rows, Z = (data.X_fit, features.get()) if data.in_sample else (data.X_eval, Z_eval)
    errors = kernel_errors_from_features(kernel, rows, Z, norms=norms, random_state=0)
    return {f"{norm}_error": value for norm, value in errors.items()}


#: One tracemalloc measurement at a time in a process (tracing is process-wide).
_TRACEMALLOC_LOCK = threading.Lock()


def _peak_memory(est: Any, data: PreparedData) -> float:
    """Peak bytes allocated by Python while a fresh map is fitted and transforms.

    tracemalloc traces every thread of the process: in a worker process that runs one
    task at a time (a process pool, a Dask worker with one thread) the peak is the cell's
    own, plus what the worker's communication allocates meanwhile (little); where several
    cells run in threads of one process, the peaks of concurrent cells include each
    other's allocations.  Measurements are serialised within a process so that one
    cell's ``tracemalloc.stop()`` cannot end another's measurement.
    """
    with _TRACEMALLOC_LOCK:
        tracemalloc.start()
        try:
            est.fit(data.X_fit)
            est.transform(data.X_eval)
            return float(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()


def _method_kernel(
    config: ExperimentConfig,
    spec: MethodSpec,
    m: MethodConfig,
    data: PreparedData,
    gamma_cache: dict[tuple[str, str], float],
) -> tuple[str, dict[str, Any]]:
    kernel = m.kernel or spec.kernel
    if not spec.supports(kernel):
        raise ValueError(
            f"method {spec.name!r} cannot approximate the {kernel!r} kernel; it handles "
            f"{', '.join(spec.supported_kernels())}."
        )
    params = dict(spec.kernel_params) if kernel == spec.kernel else {}
    params.update(m.kernel_params)
    if kernel in BANDWIDTH_KERNELS and "gamma" not in params:
        if isinstance(config.bandwidth, str):
            key = (data.name, kernel)
            if key not in gamma_cache:
                gamma_cache[key] = gamma_from_data(
                    data.X_fit, config.bandwidth, kernel=kernel, q=config.bandwidth_q
                )
            params["gamma"] = gamma_cache[key]
        else:
            params["gamma"] = float(config.bandwidth)
    params["kernel"] = kernel
    return kernel, params


def _write_tables(
    out_dir: Path, rows: list[dict[str, Any]], provenance: dict[str, Any], failures: list[Any]
) -> None:
    tmp = out_dir / "results.csv.tmp"
    with open(tmp, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(RESULT_COLUMNS))
        writer.writeheader()
        writer.writerows(rows)
    tmp.replace(out_dir / "results.csv")
    tmp = out_dir / "results.json.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(
            {"provenance": provenance, "failures": failures, "results": rows},
            fh,
            indent=1,
            default=str,
        )
    tmp.replace(out_dir / "results.json")


def run_experiment(
    config: ExperimentConfig,
    output_dir: str | os.PathLike[str] | None = None,
    *,
    resume: bool = True,
    progress: bool | None = None,
    stream: TextIO | None = None,
    on_cell: Callable[[dict[str, Any]], None] | None = None,
    threads: int | None = 1,
    executor: cf.Executor | None = None,
) -> ExperimentResult:
    """Run every cell of ``config`` and collect a tidy table of results.

    Parameters
    ----------
    config : ExperimentConfig
    output_dir : str or path-like, default=None
        Folder for ``cells.jsonl`` (the resumable log), ``results.csv`` and
        ``results.json``; created if needed.  ``None`` keeps everything in memory.
    resume : bool, default=True
        Reuse the finished cells recorded in ``output_dir`` (``False`` starts afresh).
    progress : bool, default=None
        Show a progress bar (finished cells out of all); by default only when ``stream``
        is a terminal.
    stream : file, default=sys.stderr
        Where the progress bar goes.
    on_cell : callable, default=None
        Called with each newly finished cell's record (used to observe or stop a run).
    threads : int or None, default=1
        Threads of the BLAS and OpenMP pools inside a cell (``None``: leave them as they
        are).  One thread by default: the cells are small, and threaded BLAS on small
        matrices is slower, much slower when the cores are busy with other work.
    executor : concurrent.futures.Executor, default=None
        Where the cells run: ``None`` runs them one after the other in this thread; a
        thread or process pool, or a Dask client's ``client.get_executor()``, runs each
        remaining cell as a task.  The tasks carry the caller's kernelmaps and
        scikit-learn settings (``config_context``) and run their row blocks on one
        thread.  This process alone writes the log, cell by cell as tasks finish, so an
        interrupted run resumes as a sequential one does; the results are the same, in
        the same order.  A cell whose method raises an error is recorded as failed, as
        in a sequential run; any other error, or Ctrl-C, cancels the cells not started
        and is raised, the finished cells staying in the log.  ``peak_memory`` is
        measured in the process that runs the cell (see the module's notes).

    Returns
    -------
    ExperimentResult

    Examples
    --------
    >>> from kernelmaps.experiments import ExperimentConfig, DatasetConfig, run_experiment
    >>> config = ExperimentConfig(datasets=[DatasetConfig("cpu_act", n_fit=60, n_eval=30)],
    ...                           methods=["rff-mc"], n_components=[8, 32], seeds=2,
    ...                           metrics=["fro_error"])
    >>> result = run_experiment(config)
    >>> result.n_cells, len(result.rows), all(0 < v < 1 for v in result.values())
    (4, 4, True)

    The same cells on two threads give the same rows:

    >>> from concurrent.futures import ThreadPoolExecutor
    >>> with ThreadPoolExecutor(2) as pool:
    ...     again = run_experiment(config, executor=pool)
    >>> again.rows == result.rows, again.provenance["executor"]
    (True, 'ThreadPoolExecutor: 2 workers')
    """
    stream = stream if stream is not None else sys.stderr
    if progress is None:
        progress = bool(getattr(stream, "isatty", lambda: False)())
    started = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    out_dir = Path(output_dir) if output_dir is not None else None
    plan = [
        (d, m, n_components, seed)
        for d in config.datasets
        for m in config.methods
        for n_components in config.n_components
        for seed in config.seeds
    ]
    cells = _CellRunner(config, threads)
    bar = _Progress(len(plan), progress, stream)
    log, done = _open_log(out_dir, resume)
    records: list[dict[str, Any]] = []
    try:
        if executor is not None:
            with limit_threads(threads):  # for the cells in threads of this process
                records = _run_on_executor(executor, cells, plan, done, log, bar, on_cell)
        else:
            for i, (d, m, n_components, seed) in enumerate(plan):
                key = _cell_key(config, d, m, n_components, seed)
                if key in done:
                    records.append(done[key])
                else:
                    record = cells.run(key, d, m, n_components, seed)
                    if log is not None:
                        _append(log, record)
                    records.append(record)
                bar.update(i + 1, _label(d, m, n_components, seed))
                if key not in done and on_cell is not None:
                    on_cell(records[-1])
    finally:
        bar.close()
        if log is not None:
            log.close()
    rows, failures = _tidy(config.name, records)
    provenance = {
        "experiment": config.name,
        "started": started,
        "finished": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "versions": _versions(("dask", "distributed") if is_dask(executor) else ()),
        "machine": _machine(),
        "executor": describe_executor(executor),
        "seeds": list(config.seeds),
        "config": config.to_dict(),
        "n_cells": len(plan),
        "n_computed": cells.n_computed,
        "n_reused": len(plan) - cells.n_computed,
        "gamma": {f"{k[0]}/{k[1]}": v for k, v in cells.gamma_cache.items()},
        "threads_per_cell": threads,
    }
    if out_dir is not None:
        _write_tables(out_dir, rows, provenance, failures)
    return ExperimentResult(rows, provenance, len(plan), cells.n_computed, failures, out_dir)


def _label(d: DatasetConfig, m: MethodConfig, n_components: int, seed: int) -> str:
    return f"{d.display} {m.display} D={n_components} seed={seed}"


def _append(log: TextIO, record: dict[str, Any]) -> None:
    """Append one finished cell to the log, at once (flushed and synced)."""
    log.write(json.dumps(record, default=float) + "\n")
    log.flush()
    os.fsync(log.fileno())


def _open_log(
    out_dir: Path | None, resume: bool
) -> tuple[TextIO | None, dict[str, dict[str, Any]]]:
    """The cell log of ``out_dir`` opened for appending, and the cells it already holds."""
    if out_dir is None:
        return None, {}
    out_dir.mkdir(parents=True, exist_ok=True)
    cells_path = out_dir / CELLS_FILE
    done: dict[str, dict[str, Any]] = {}
    if resume:
        done = _read_cells(cells_path)
    elif cells_path.exists():
        cells_path.unlink()
    needs_newline = False
    if cells_path.is_file() and cells_path.stat().st_size > 0:
        with open(cells_path, "rb") as fh:
            fh.seek(-1, os.SEEK_END)
            needs_newline = fh.read(1) != b"\n"
    log = open(cells_path, "a", encoding="utf-8")  # noqa: SIM115 - closed by the caller
    if needs_newline:  # the last line was cut short by an interruption
        log.write("\n")
    return log, done


@dataclasses.dataclass(frozen=True)
class _CellTask:
    """What a task needs to compute one cell, but the rows (see :func:`_cell_task`)."""

    record: dict[str, Any]
    config: ExperimentConfig
    method: MethodSpec | str  # a name when every process registers it on import
    kernel_params: dict[str, Any]
    extra_params: dict[str, Any]
    n_components: int
    seed: int
    threads: int | None
    data_token: str
    run: str  # this run's own: a task of an earlier, cancelled run is another task
    caller_pid: int  # the process that holds the BLAS limit for the run


class _CellRunner:
    """Computes cells, loading each data set and choosing each bandwidth once."""

    def __init__(self, config: ExperimentConfig, threads: int | None) -> None:
        self.config, self.threads = config, threads
        self.specs = {m.display: get_method(m.name) for m in config.methods}
        self.prepared: dict[str, PreparedData] = {}
        self.tokens: dict[str, str] = {}
        self.run_id = os.urandom(8).hex()
        self.gamma_cache: dict[tuple[str, str], float] = {}
        self.n_computed = 0

    def start(
        self, key: str, d: DatasetConfig, m: MethodConfig, n_components: int, seed: int
    ) -> tuple[dict[str, Any], PreparedData, MethodSpec, dict[str, Any] | None]:
        """The cell's record so far, its rows, its method and kernel parameters (None
        when the method cannot run: the record then says why)."""
        if d.display not in self.prepared:
            self.prepared[d.display] = prepare_data(d, self.config.data_home)
        data = self.prepared[d.display]
        spec = self.specs[m.display]
        record: dict[str, Any] = {
            "key": key,
            "dataset": d.display,
            "method": m.display,
            "n_components": n_components,
            "seed": seed,
        }
        try:
            kernel, kparams = _method_kernel(self.config, spec, m, data, self.gamma_cache)
        except (ValueError, TypeError, np.linalg.LinAlgError) as exc:
            _failed(record, exc, m.kernel or spec.kernel)
            return record, data, spec, None
        record["kernel"] = kernel
        record["gamma"] = kparams.get("gamma")
        return record, data, spec, kparams

    def run(
        self, key: str, d: DatasetConfig, m: MethodConfig, n_components: int, seed: int
    ) -> dict[str, Any]:
        """The record of one cell: its metrics, or the error that made it fail."""
        record, data, spec, kparams = self.start(key, d, m, n_components, seed)
        if kparams is not None:
            _compute(
                record, self.config, data, spec, kparams, m.params, n_components, seed,
                self.threads,
            )  # fmt: skip
        self.n_computed += 1
        return record

    def task(
        self, key: str, d: DatasetConfig, m: MethodConfig, n_components: int, seed: int
    ) -> tuple[dict[str, Any] | _CellTask, PreparedData]:
        """A task computing the cell elsewhere, or its record when it failed already."""
        record, data, spec, kparams = self.start(key, d, m, n_components, seed)
        if kparams is None:
            return record, data
        if d.display not in self.tokens:
            self.tokens[d.display] = data_token(data)
        method: MethodSpec | str = spec
        if getattr(spec.factory, "__module__", "").startswith("kernelmaps."):
            method = spec.name  # registered by kernelmaps on import, in every process
        task = _CellTask(
            record, self.config, method, kparams, m.params, n_components, seed, self.threads,
            self.tokens[d.display], self.run_id, os.getpid(),
        )  # fmt: skip
        return task, data


def _failed(record: dict[str, Any], exc: BaseException, kernel: str) -> None:
    record["status"] = "failed"
    record["message"] = f"{type(exc).__name__}: {exc}"
    record.setdefault("kernel", kernel)


def _compute(
    record: dict[str, Any],
    config: ExperimentConfig,
    data: PreparedData,
    spec: MethodSpec,
    kparams: dict[str, Any],
    extra_params: dict[str, Any],
    n_components: int,
    seed: int,
    threads: int | None,
    blas: bool = True,
) -> dict[str, Any]:
    """Complete ``record`` with the cell's metrics and warnings, or the error of its method."""
    try:
        with capture_warnings() as caught, limit_threads(threads, blas):
            record["metrics"] = _run_cell(
                config, data, spec, kparams, extra_params, n_components, seed
            )
        if caught:
            record["warnings"] = sorted(set(caught))
        record["status"] = "ok"
    except (ValueError, TypeError, np.linalg.LinAlgError) as exc:
        _failed(record, exc, spec.kernel)  # (the record names its kernel already)
    return record


# --- Cells as tasks of an executor ------------------------------------------------------


def _cell_task(
    settings: TaskSettings, task: _CellTask, data: PreparedData | None
) -> dict[str, Any] | None:
    """Compute one cell in a task: its record, or None when this process has not the rows
    (the caller then sends the task again, with them)."""
    rows = task_data(task.data_token, data)
    if rows is None:
        return None
    spec = get_method(task.method) if isinstance(task.method, str) else task.method
    record = dict(task.record)
    return settings.call(
        _compute, record, task.config, rows, spec, task.kernel_params, task.extra_params,
        task.n_components, task.seed, task.threads, os.getpid() != task.caller_pid,
    )  # fmt: skip


def _run_on_executor(
    executor: cf.Executor,
    cells: _CellRunner,
    plan: list[tuple[DatasetConfig, MethodConfig, int, int]],
    done: dict[str, dict[str, Any]],
    log: TextIO | None,
    bar: _Progress,
    on_cell: Callable[[dict[str, Any]], None] | None,
) -> list[dict[str, Any]]:
    """Run the cells not in ``done`` as tasks of ``executor``; the records in plan order.

    At most two tasks per worker are pending at once (which bounds the rows held for
    them), and the rows of a data set travel with its first tasks only, one per worker;
    a task that lands on a process without them returns None and is sent again with them.
    """
    from .._task_settings import TaskSettings

    config = cells.config
    keys = [_cell_key(config, *cell) for cell in plan]
    records: list[dict[str, Any] | None] = [done.get(key) for key in keys]
    waiting = collections.deque(i for i, key in enumerate(keys) if key not in done)
    finished = len(plan) - len(waiting)
    if finished:
        bar.update(finished, "(finished earlier)")
    settings = TaskSettings.capture(block_threads=1)
    slots = executor_slots(executor)
    shipped: collections.Counter[str] = collections.Counter()
    pending: dict[cf.Future[Any], tuple[int, _CellTask, PreparedData]] = {}

    def submit(i: int, task: _CellTask, data: PreparedData, resend: bool) -> None:
        send = resend or shipped[task.data_token] < slots
        if send:
            shipped[task.data_token] += 1
        future = executor.submit(_cell_task, settings, task, data if send else None)
        pending[future] = (i, task, data)

    def finish(i: int, record: dict[str, Any]) -> None:
        nonlocal finished
        cells.n_computed += 1
        if log is not None:
            _append(log, record)
        records[i] = record
        finished += 1
        bar.update(finished, _label(*plan[i]))
        if on_cell is not None:
            on_cell(record)

    try:
        while waiting or pending:
            while waiting and len(pending) < PENDING_PER_SLOT * slots:
                i = waiting.popleft()
                task, data = cells.task(keys[i], *plan[i])
                if isinstance(task, dict):  # failed before it could start
                    finish(i, task)
                else:
                    submit(i, task, data, resend=False)
            if not pending:
                continue
            ready, _ = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
            for future in sorted(ready, key=lambda f: pending[f][0]):
                i, task, data = pending.pop(future)
                record = future.result()
                if record is None:  # that process had not the rows
                    submit(i, task, data, resend=True)
                else:
                    finish(i, record)
    except BaseException:
        for future in pending:
            future.cancel()
        raise
    finally:
        forget_task_data(cells.tokens.values())  # those a thread pool kept here
    return [r for r in records if r is not None]


def _tidy(
    experiment: str, records: Iterable[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rows: list[dict[str, Any]] = []
    failures: list[dict[str, Any]] = []
    for rec in records:
        if rec.get("status") != "ok":
            failures.append(
                {k: rec.get(k) for k in ("dataset", "method", "n_components", "seed", "message")}
            )
            continue
        for metric, value in rec["metrics"].items():
            rows.append(
                {
                    "experiment": experiment,
                    "dataset": rec["dataset"],
                    "method": rec["method"],
                    "kernel": rec.get("kernel"),
                    "gamma": rec.get("gamma"),
                    "n_components": rec["n_components"],
                    "seed": rec["seed"],
                    "metric": metric,
                    "value": value,
                }
            )
    return rows, failures


def read_results(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Read a tidy result table written by :func:`run_experiment` (CSV or JSON).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from kernelmaps.experiments import read_results
    >>> path = Path(tempfile.mkdtemp()) / "results.csv"
    >>> _ = path.write_text("experiment,dataset,method,kernel,gamma,n_components,seed,metric,"
    ...                     "value\\ns,letter,rff-mc,rbf,0.5,8,0,fro_error,0.25\\n")
    >>> [(r["method"], r["n_components"], r["metric"], r["value"]) for r in read_results(path)]
    [('rff-mc', 8, 'fro_error', 0.25)]
    """
    path = Path(path)
    if path.is_dir():
        path = path / "results.csv"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such result table.")
    if path.suffix == ".json":
        rows: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["results"]
        return rows
    out = []
    with open(path, newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            missing = [
                c for c in ("dataset", "method", "n_components", "metric", "value") if c not in row
            ]
            if missing:
                raise ValueError(f"{path}: not a result table; columns {missing} are missing.")
            rec: dict[str, Any] = dict(row)
            rec["n_components"] = int(row["n_components"])
            rec["seed"] = int(row["seed"]) if row.get("seed") not in (None, "") else 0
            rec["value"] = float(row["value"])
            rec["gamma"] = float(row["gamma"]) if row.get("gamma") not in (None, "") else None
            out.append(rec)
    return out
