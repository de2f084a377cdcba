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
machine, seeds, times) are written, each whole or not at all (a temporary file renamed
over the old one), so a full disk or a kill leaves the previous tables intact.

The log is read back line by line: a last line cut short by a killed process is dropped
(and cut from the file), and a line that is not a valid cell record (a hand-edited log:
invalid JSON, missing keys, values of the wrong type) is skipped with one warning naming
its line number; its cell is computed again.  A cell whose method raises any exception
(an error of the method, a memory refusal) is recorded as failed, with the error on one
line, and the run goes on; ``KeyboardInterrupt`` and ``SystemExit`` stop it, the finished
cells staying in the log.

An output folder is locked for the whole run (``run.lock`` in it: an ``flock`` where the
system has one, else a file created exclusively, holding the PID, host and start time of
the run): a second run on the same folder is refused at once, naming the run that holds
it.  The lock of a killed run does not block: the system releases an ``flock`` when its
process ends, and an exclusive lock file whose process is gone is removed.

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
import contextlib
import csv
import dataclasses
import datetime as _dt
import errno
import json
import math
import os
import platform
import socket
import sys
import threading
import time
import tracemalloc
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import numpy as np

from .._atomic import atomic_write, describe_os_error
from ..bandwidth import gamma_from_data
from ..exceptions import OutputWriteError
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
    "OutputFolderInUseError",
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
LOCK_FILE = "run.lock"

#: Longest failure message kept in a cell's record (characters).
_MESSAGE_CHARS = 1000


class OutputFolderInUseError(RuntimeError):
    """Another run holds the output folder (its lock file names the run).

    Examples
    --------
    >>> from kernelmaps.experiments._runner import OutputFolderInUseError
    >>> issubclass(OutputFolderInUseError, RuntimeError)
    True
    """


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


def _scale(how: str, X_fit: np.ndarray, X_eval: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if how == "minmax":
        lo, hi = X_fit.min(axis=0), X_fit.max(axis=0)
        span = np.where(hi > lo, hi - lo, 1.0)
        return (X_fit - lo) / span, (X_eval - lo) / span
    if how == "standard":
        mu, sd = X_fit.mean(axis=0), X_fit.std(axis=0)
        sd = np.where(sd > 0, sd, 1.0)
        return (X_fit - mu) / sd, (X_eval - mu) / sd
    return X_fit, X_eval


def _scaled(
    config: DatasetConfig, X_fit: np.ndarray, X_eval: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The fit and held-out rows scaled by ``config.preprocess``, finite or a clear error.

    Both scalings are invariant under a common factor, so data whose differences or sums
    of squares overflow (values near the float64 limit) is divided first by a power of
    two (exactly) and scaled again; the ordinary case is computed as written.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        A, B = _scale(config.preprocess, X_fit, X_eval)
        if np.isfinite(A).all() and np.isfinite(B).all():
            return A, B
        if config.preprocess != "none":
            top = float(max(np.abs(X_fit).max(initial=0.0), np.abs(X_eval).max(initial=0.0)))
            unit = math.ldexp(1.0, math.frexp(top)[1] - 1) if top > 0 else 1.0
            A, B = _scale(config.preprocess, X_fit / unit, X_eval / unit)
            if np.isfinite(A).all() and np.isfinite(B).all():
                return A, B
    raise ValueError(
        f"{config.display}: the {config.preprocess} scaling of the rows overflows float64 "
        "(values near the float limit, or held-out rows far outside the fit rows); "
        "rescale the data."
    )


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
    X_fit, X_eval = _scaled(config, X[fit_rows], X[eval_rows])
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
            self.enabled = False
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
    """The valid cell records of the log at ``path``, by key (the last one of a key wins).

    A last line without its newline was cut short by an interrupted run: it is dropped
    and cut from the file (the caller holds the folder's lock), so that the next record
    starts on a line of its own.  Any other line that is not a valid record is skipped
    with a warning naming its line number.
    """
    done: dict[str, dict[str, Any]] = {}
    if not path.is_file():
        return done
    end = 0
    with open(path, "rb") as fh:
        for number, raw in enumerate(fh, 1):
            if not raw.endswith(b"\n"):
                break  # cut short by an interruption: the cell is computed again
            end += len(raw)
            if not raw.strip():
                continue
            record, problem = _parse_record(raw)
            if record is None:
                warnings.warn(
                    f"{path} line {number}: {problem}; the line is skipped and its cell "
                    "computed again.",
                    UserWarning,
                    stacklevel=3,
                )
                continue
            done[record["key"]] = record
    if path.stat().st_size > end:
        with open(path, "r+b") as fh:
            fh.truncate(end)
    return done


#: The keys of a cell record and the types their values must have.
_RECORD_TYPES: dict[str, tuple[type, ...]] = {
    "key": (str,),
    "dataset": (str,),
    "method": (str,),
    "n_components": (int,),
    "seed": (int,),
    "status": (str,),
}


def _parse_record(raw: bytes) -> tuple[dict[str, Any] | None, str]:
    """A record of the log from one line, or None and what is wrong with the line."""
    try:
        record = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None, "not valid JSON"
    if not isinstance(record, dict):
        return None, "not a JSON object"
    for key, types in _RECORD_TYPES.items():
        if key not in record:
            return None, f"the record has no {key!r}"
        value = record[key]
        if not isinstance(value, types) or isinstance(value, bool):
            return None, f"{key!r} is {value!r}, not of type {types[0].__name__}"
    parts = record["key"].split("|")
    if (
        len(parts) < 7
        or parts[2] != str(record["n_components"])
        or parts[3] != str(record["seed"])
        or "|".join(parts[5:]) != f"{record['dataset']}|{record['method']}"
    ):
        return None, "the record's cell does not match its key"
    if record.get("kernel") is not None and not isinstance(record["kernel"], str):
        return None, f"'kernel' is {record['kernel']!r}, not a name"
    gamma = record.get("gamma")
    if gamma is not None and (
        not isinstance(gamma, (int, float)) or isinstance(gamma, bool) or not math.isfinite(gamma)
    ):
        return None, f"'gamma' is {gamma!r}, not a finite number"
    if record["status"] == "failed":
        if not isinstance(record.get("message"), str):
            return None, "the failed record has no message"
        return record, ""
    if record["status"] != "ok":
        return None, f"'status' is {record['status']!r}, not 'ok' or 'failed'"
    metrics = record.get("metrics")
    if not isinstance(metrics, dict):
        return None, "the record has no 'metrics' table"
    for name, value in metrics.items():
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return None, f"metric {name!r} is {value!r}, not a number"
        if not math.isfinite(value):  # json reads NaN and Infinity; a cell never writes them
            return None, f"metric {name!r} is {value!r}, not a finite number"
    caught = record.get("warnings", [])
    if not isinstance(caught, list) or not all(isinstance(w, str) for w in caught):
        return None, "'warnings' is not a list of messages"
    return record, ""


#: Metrics a cell records only for some tasks (which of them depends on the data set).
_TASK_METRICS = frozenset({"accuracy", "rmse", "downstream"})


def _covers(record: dict[str, Any], metrics: list[str]) -> bool:
    """Whether a finished cell's record holds every asked metric (a failure: always)."""
    if record.get("status") != "ok":
        return True
    return all(m in record["metrics"] for m in metrics if m not in _TASK_METRICS)


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
    """``results.csv`` and ``results.json``, each replaced whole or not at all."""
    with atomic_write(out_dir / "results.csv", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(RESULT_COLUMNS))
        writer.writeheader()
        writer.writerows(rows)
    with atomic_write(out_dir / "results.json") as fh:
        json.dump(
            {"provenance": provenance, "failures": failures, "results": rows},
            fh,
            indent=1,
            default=str,
        )


def _output_folder(output_dir: str | os.PathLike[str]) -> Path:
    """The output folder, created if needed; a file there is refused."""
    out_dir = Path(output_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise ValueError(
            f"{out_dir}: the output folder is a file; give the name of a folder (it is "
            "created if needed)."
        )
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputWriteError(exc.errno, describe_os_error(exc, out_dir)) from None
    return out_dir


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
    out_dir = _output_folder(output_dir) if output_dir is not None else None
    plan = [
        (d, m, n_components, seed)
        for d in config.datasets
        for m in config.methods
        for n_components in config.n_components
        for seed in config.seeds
    ]
    cells = _CellRunner(config, threads)
    with contextlib.ExitStack() as stack:
        if out_dir is not None:
            stack.enter_context(_FolderLock(out_dir))
        log, done = _open_log(out_dir, resume)
        if log is not None:
            stack.callback(log.close)
        done = {key: record for key, record in done.items() if _covers(record, config.metrics)}
        keys = [_cell_key(config, *cell) for cell in plan]
        needed = {cell[0].display for cell, key in zip(plan, keys, strict=True) if key not in done}
        for d in config.datasets:
            if d.display in needed:
                cells.prepare(d)  # a data set that cannot be read stops the run at once
        bar = _Progress(len(plan), progress, stream)
        stack.callback(bar.close)
        if executor is not None:
            with limit_threads(threads):  # for the cells in threads of this process
                records = _run_on_executor(executor, cells, plan, keys, done, log, bar, on_cell)
        else:
            records = []
            for i, (cell, key) in enumerate(zip(plan, keys, strict=True)):
                if key in done:
                    records.append(done[key])
                else:
                    record = cells.run(key, *cell)
                    if log is not None:
                        _append(log, record)
                    records.append(record)
                bar.update(i + 1, _label(*cell))
                if key not in done and on_cell is not None:
                    on_cell(records[-1])
        bar.close()
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
    try:
        log.write(json.dumps(record, default=float) + "\n")
        log.flush()
        os.fsync(log.fileno())
    except OSError as exc:
        name = getattr(log, "name", CELLS_FILE)
        raise OutputWriteError(exc.errno, describe_os_error(exc, name)) from None


def _open_log(
    out_dir: Path | None, resume: bool
) -> tuple[TextIO | None, dict[str, dict[str, Any]]]:
    """The cell log of ``out_dir`` opened for appending, and the cells it already holds."""
    if out_dir is None:
        return None, {}
    cells_path = out_dir / CELLS_FILE
    done: dict[str, dict[str, Any]] = {}
    try:
        if resume:
            done = _read_cells(cells_path)
        elif cells_path.exists():
            cells_path.unlink()
        log = open(cells_path, "a", encoding="utf-8")  # noqa: SIM115 - closed by the caller
    except OSError as exc:
        raise OutputWriteError(exc.errno, describe_os_error(exc, cells_path)) from None
    return log, done


# --- The lock of an output folder -------------------------------------------------------

try:
    import fcntl as _fcntl
except ImportError:  # pragma: no cover - Windows
    _fcntl = None  # type: ignore[assignment]

#: An exclusive lock file with no readable holder is taken as abandoned after this long
#: (seconds): the time its creator has to write itself into it.
_UNREADABLE_LOCK_AGE = 10.0


class _FolderLock:
    """The lock of an output folder for one run (a context manager).

    Where the system has ``fcntl``, an ``flock`` on ``run.lock`` (kept between runs; the
    system releases the lock when its process ends, however it ends).  Elsewhere, or on a
    file system without ``flock``, ``run.lock`` is created exclusively and removed at the
    end; a lock file whose process is gone (same host, PID not alive) is taken over.  The
    file holds the PID, host and start time of the run that holds it, for the message of
    a refused run.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path = folder / LOCK_FILE
        self.fd: int | None = None
        self.exclusive = False
        self.holder = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        }

    def __enter__(self) -> _FolderLock:
        if _fcntl is None or not self._flock():
            self._exclusive()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def _write_error(self, exc: OSError) -> OutputWriteError:
        return OutputWriteError(exc.errno, describe_os_error(exc, self.path))

    def _flock(self) -> bool:
        """Take the ``flock``; False when the file system has none."""
        assert _fcntl is not None
        created = True
        try:
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o666)
            except FileExistsError:
                created = False
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as exc:
            raise self._write_error(exc) from None
        try:
            _fcntl.flock(fd, _fcntl.LOCK_EX | _fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise self._in_use(self._read_holder(), abandoned_hint=False) from None
            if exc.errno in (errno.ENOLCK, errno.EINVAL, errno.EOPNOTSUPP):
                if created:  # the exclusive lock file is created again by the fallback
                    with contextlib.suppress(OSError):
                        os.unlink(self.path)
                return False
            raise self._write_error(exc) from None
        try:
            os.ftruncate(fd, 0)
            os.write(fd, self._holder_bytes())
        except OSError as exc:
            os.close(fd)
            raise self._write_error(exc) from None
        self.fd = fd
        return True

    def _exclusive(self) -> None:
        """Create the lock file exclusively, taking over one whose run is gone."""
        for _ in range(3):
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o666)
            except FileExistsError:
                holder = self._read_holder()
                if not self._abandoned(holder):
                    raise self._in_use(holder, abandoned_hint=True) from None
                self._remove_abandoned(holder)
                continue
            except OSError as exc:
                raise self._write_error(exc) from None
            try:
                os.write(fd, self._holder_bytes())
            except OSError as exc:
                os.close(fd)
                with contextlib.suppress(OSError):
                    os.unlink(self.path)
                raise self._write_error(exc) from None
            os.close(fd)
            self.exclusive = True
            return
        raise self._in_use(self._read_holder(), abandoned_hint=True)

    def _holder_bytes(self) -> bytes:
        return (json.dumps(self.holder) + "\n").encode()

    def _read_holder(self) -> dict[str, Any] | None:
        try:
            holder = json.loads(self.path.read_bytes().decode("utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(holder, dict) or not isinstance(holder.get("pid"), int):
            return None
        return holder

    def _abandoned(self, holder: dict[str, Any] | None) -> bool:
        """Whether an exclusive lock file was left by a run that is gone."""
        if holder is None:  # unreadable: abandoned unless just being written
            try:
                age = time.time() - self.path.stat().st_mtime
            except OSError:
                return True  # removed meanwhile
            return age > _UNREADABLE_LOCK_AGE
        if holder.get("host") != socket.gethostname():
            return False  # another machine's process: it cannot be checked from here
        return not _pid_alive(int(holder["pid"]))

    def _remove_abandoned(self, holder: dict[str, Any] | None) -> None:
        """Remove an abandoned lock file, unless another run took it over meanwhile."""
        aside = self.path.with_name(f"{LOCK_FILE}.{os.getpid()}.{os.urandom(4).hex()}")
        try:
            os.replace(self.path, aside)
        except OSError:
            return  # removed by another run meanwhile
        try:
            moved = json.loads(aside.read_bytes().decode("utf-8"))
        except (OSError, ValueError):
            moved = None
        if moved != holder and isinstance(moved, dict):
            # Another run took the lock over between our reading and our move: put it
            # back (unless a third one holds it now).
            with contextlib.suppress(OSError):
                os.link(aside, self.path)
        with contextlib.suppress(OSError):
            os.unlink(aside)

    def _in_use(
        self, holder: dict[str, Any] | None, abandoned_hint: bool
    ) -> OutputFolderInUseError:
        if holder is None:
            who = "another run (its lock file gives no details)"
        else:
            who = (
                f"another run (PID {holder.get('pid')} on {holder.get('host')}, started "
                f"{holder.get('started')})"
            )
        remove = f"; if no run is using the folder, delete {self.path}" if abandoned_hint else ""
        return OutputFolderInUseError(
            f"{self.folder}: the output folder is in use by {who}; wait for that run to end, "
            f"or write to another output folder (-o/--output){remove}."
        )

    def release(self) -> None:
        """Release the lock (an exclusive lock file is removed if it is still ours)."""
        if self.fd is not None:
            fd, self.fd = self.fd, None
            with contextlib.suppress(OSError):
                _fcntl.flock(fd, _fcntl.LOCK_UN)
            os.close(fd)
        if self.exclusive:
            self.exclusive = False
            if self._read_holder() == self.holder:
                with contextlib.suppress(OSError):
                    os.unlink(self.path)


def _pid_alive(pid: int) -> bool:
    """Whether process ``pid`` of this machine exists (when unsure: yes)."""
    if pid <= 0:
        return False
    if sys.platform == "win32":  # pragma: no cover - os.kill would end the process there
        import ctypes

        kernel32 = ctypes.windll.kernel32  # type: ignore[attr-defined]
        handle = kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
        if not handle:
            return bool(kernel32.GetLastError() == 5)  # ERROR_ACCESS_DENIED: it exists
        code = ctypes.c_ulong()
        try:
            if not kernel32.GetExitCodeProcess(handle, ctypes.byref(code)):
                return True
            return code.value == 259  # STILL_ACTIVE
        finally:
            kernel32.CloseHandle(handle)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: another user's process
        return True
    return True


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

    def prepare(self, d: DatasetConfig) -> PreparedData:
        """The rows of data set ``d``, loaded once."""
        if d.display not in self.prepared:
            self.prepared[d.display] = prepare_data(d, self.config.data_home)
        return self.prepared[d.display]

    def start(
        self, key: str, d: DatasetConfig, m: MethodConfig, n_components: int, seed: int
    ) -> tuple[dict[str, Any], PreparedData, MethodSpec, dict[str, Any] | None]:
        """The cell's record so far, its rows, its method and kernel parameters (None
        when the method cannot run: the record then says why)."""
        data = self.prepare(d)
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
        except Exception as exc:  # any error of the cell: recorded, the run goes on
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
    record.pop("metrics", None)
    record.pop("warnings", None)
    record["status"] = "failed"
    record["message"] = _one_line_error(exc)
    record.setdefault("kernel", kernel)


def _one_line_error(exc: BaseException) -> str:
    """``Type: message`` on one line, at most ``_MESSAGE_CHARS`` characters.

    Examples
    --------
    >>> from kernelmaps.experiments._runner import _one_line_error
    >>> _one_line_error(ValueError("bad\\n  value")), _one_line_error(NotImplementedError())
    ('ValueError: bad value', 'NotImplementedError')
    """
    text = " ".join(str(exc).split())
    message = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    if len(message) > _MESSAGE_CHARS:
        message = message[: _MESSAGE_CHARS - 1] + "…"
    return message


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
    """Complete ``record`` with the cell's metrics and warnings, or the error of its method.

    Every ``Exception`` of the cell (an error of the method, a memory refusal) makes a
    failed record; ``KeyboardInterrupt`` and ``SystemExit`` are raised.
    """
    try:
        with capture_warnings() as caught, limit_threads(threads, blas):
            record["metrics"] = _run_cell(
                config, data, spec, kparams, extra_params, n_components, seed
            )
        if caught:
            record["warnings"] = sorted(set(caught))
        record["status"] = "ok"
    except Exception as exc:  # any error of the cell: recorded, the run goes on
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
    keys: list[str],
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
                try:
                    record = future.result()
                except Exception as exc:  # the task itself failed (a worker lost, ...)
                    record = dict(task.record)
                    _failed(record, exc, task.record.get("kernel", ""))
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
    fix = "give a results.csv or results.json written by kernelmaps compare"
    if path.suffix == ".json":
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"{path}: not a result table (invalid JSON: {exc}); {fix}.") from None
        rows = data.get("results") if isinstance(data, dict) else None
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            raise ValueError(f"{path}: not a result table (no list of 'results'); {fix}.")
        return rows
    out = []
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            for row in reader:
                out.append(_table_row(row, path, reader.line_num, fix))
    except (UnicodeDecodeError, csv.Error) as exc:
        raise ValueError(f"{path}: not a result table ({exc}); {fix}.") from None
    return out


def _table_row(row: dict[str, Any], path: Path, line: int, fix: str) -> dict[str, Any]:
    """One row of a ``results.csv`` with its numbers read, or one line saying what is wrong."""
    missing = [c for c in ("dataset", "method", "n_components", "metric", "value") if c not in row]
    if missing:
        raise ValueError(f"{path}: not a result table; columns {missing} are missing; {fix}.")
    rec: dict[str, Any] = dict(row)
    column = ""
    try:
        column = "n_components"
        rec["n_components"] = int(row["n_components"])
        column = "seed"
        rec["seed"] = int(row["seed"]) if row.get("seed") not in (None, "") else 0
        column = "value"
        rec["value"] = float(row["value"])
        column = "gamma"
        rec["gamma"] = float(row["gamma"]) if row.get("gamma") not in (None, "") else None
    except (TypeError, ValueError):
        raise ValueError(
            f"{path} line {line}: {column} {row.get(column)!r} is not a number; fix or "
            "remove the line."
        ) from None
    return rec
