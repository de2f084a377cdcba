"""Where the cells of a run are computed: one after the other here, or on an executor.

Cells can run in parallel on any :class:`concurrent.futures.Executor` (a thread or process
pool, or a Dask client's ``client.get_executor()``): each remaining cell is a task, and
the caller alone appends the finished cells to the log, as they come, so resuming and the
provenance work as in a sequential run.  A task carries the caller's kernelmaps and
scikit-learn settings (:class:`~kernelmaps._task_settings.TaskSettings`); the prepared rows
of a data set go to a worker process with its first few tasks and are kept there (a
process keeps the last four data sets it received), so they are not pickled again for
every cell.

Either way, each data set is loaded and each bandwidth chosen once (:class:`CellRunner`),
a progress bar shows the finished cells on a terminal, and the records come back in the
order of the plan.
"""

from __future__ import annotations

import collections
import concurrent.futures as cf
import dataclasses
import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

from ._cell_log import append_cell
from ._cells import Cell, compute, failed, method_kernel
from ._config import DatasetConfig, ExperimentConfig
from ._executor import PENDING_PER_SLOT, data_token, executor_slots, forget_task_data, task_data
from ._prepare import PreparedData, prepare_data
from ._registry import MethodSpec, get_method

if TYPE_CHECKING:
    from .._task_settings import TaskSettings

__all__ = ["CellRunner", "Outlet", "Progress", "run_on_executor", "run_sequentially"]


class Progress:
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


@dataclasses.dataclass(frozen=True)
class _CellTask:
    """What a task needs to compute one cell, but the rows (see :func:`_cell_task`)."""

    cell: Cell
    method: MethodSpec | str  # a name when every process registers it on import
    kernel_params: dict[str, Any]
    threads: int | None
    data_token: str
    run: str  # this run's own: a task of an earlier, cancelled run is another task
    caller_pid: int  # the process that holds the BLAS limit for the run

    def failed(self, exc: BaseException) -> dict[str, Any]:
        """The record of the cell when the task itself failed (a worker lost, ...)."""
        record = self.cell.record(self.kernel_params)
        failed(record, exc, self.kernel_params["kernel"])
        return record


class CellRunner:
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

    def start(self, cell: Cell) -> tuple[PreparedData, MethodSpec, dict[str, Any]] | dict[str, Any]:
        """The cell's rows, its method and its kernel parameters; or, when the method
        cannot run (a kernel it cannot approximate, ...), the cell's failed record."""
        data = self.prepare(cell.dataset)
        spec = self.specs[cell.method.display]
        try:
            return data, spec, method_kernel(cell, spec, data, self.gamma_cache)
        except Exception as exc:  # any error of the cell: recorded, the run goes on
            record = cell.record()
            failed(record, exc, cell.method.kernel or spec.kernel)
            return record

    def run(self, cell: Cell) -> dict[str, Any]:
        """The record of one cell: its metrics, or the error that made it fail."""
        started = self.start(cell)
        record = started if isinstance(started, dict) else compute(cell, *started, self.threads)
        self.n_computed += 1
        return record

    def task(self, cell: Cell) -> tuple[_CellTask, PreparedData] | dict[str, Any]:
        """A task computing the cell elsewhere, with its rows; or the cell's record when
        it failed already."""
        started = self.start(cell)
        if isinstance(started, dict):
            return started
        data, spec, kernel_params = started
        if cell.dataset.display not in self.tokens:
            self.tokens[cell.dataset.display] = data_token(data)
        method: MethodSpec | str = spec
        if getattr(spec.factory, "__module__", "").startswith("kernelmaps."):
            method = spec.name  # registered by kernelmaps on import, in every process
        task = _CellTask(
            cell, method, kernel_params, self.threads, self.tokens[cell.dataset.display],
            self.run_id, os.getpid(),
        )  # fmt: skip
        return task, data


@dataclasses.dataclass
class Outlet:
    """Where each newly finished cell goes: the log, the progress bar, the callback."""

    log: TextIO | None
    bar: Progress
    on_cell: Callable[[dict[str, Any]], None] | None

    def finished(self, record: dict[str, Any], n_finished: int, label: str) -> None:
        """Append the record to the log, move the bar on, and call the callback."""
        if self.log is not None:
            append_cell(self.log, record)
        self.bar.update(n_finished, label)
        if self.on_cell is not None:
            self.on_cell(record)


def run_sequentially(
    cells: CellRunner, plan: list[Cell], done: dict[str, dict[str, Any]], outlet: Outlet
) -> list[dict[str, Any]]:
    """Run the cells not in ``done`` here, one after the other; the records in plan order."""
    records = []
    for i, cell in enumerate(plan):
        if cell.key in done:
            records.append(done[cell.key])
            outlet.bar.update(i + 1, cell.label)
        else:
            records.append(cells.run(cell))
            outlet.finished(records[-1], i + 1, cell.label)
    return records


def _cell_task(
    settings: TaskSettings, task: _CellTask, data: PreparedData | None
) -> dict[str, Any] | None:
    """Compute one cell in a task: its record, or None when this process has not the rows
    (the caller then sends the task again, with them)."""
    rows = task_data(task.data_token, data)
    if rows is None:
        return None
    spec = get_method(task.method) if isinstance(task.method, str) else task.method
    blas = os.getpid() != task.caller_pid
    return settings.call(compute, task.cell, rows, spec, task.kernel_params, task.threads, blas)


def run_on_executor(
    executor: cf.Executor,
    cells: CellRunner,
    plan: list[Cell],
    done: dict[str, dict[str, Any]],
    outlet: Outlet,
) -> list[dict[str, Any]]:
    """Run the cells not in ``done`` as tasks of ``executor``; the records in plan order.

    At most two tasks per worker are pending at once (which bounds the rows held for
    them), and the rows of a data set travel with its first tasks only, one per worker;
    a task that lands on a process without them returns None and is sent again with them.
    """
    run = _ExecutorRun(executor, cells, plan, done, outlet)
    try:
        run.all()
    except BaseException:
        for future in run.pending:
            future.cancel()
        raise
    finally:
        forget_task_data(cells.tokens.values())  # those a thread pool kept here
    return [r for r in run.records if r is not None]


class _ExecutorRun:
    """The state of :func:`run_on_executor`: the tasks pending, the records so far."""

    def __init__(
        self,
        executor: cf.Executor,
        cells: CellRunner,
        plan: list[Cell],
        done: dict[str, dict[str, Any]],
        outlet: Outlet,
    ) -> None:
        from .._task_settings import TaskSettings

        self.executor, self.cells, self.plan, self.outlet = executor, cells, plan, outlet
        self.records: list[dict[str, Any] | None] = [done.get(cell.key) for cell in plan]
        self.waiting = collections.deque(i for i, r in enumerate(self.records) if r is None)
        self.n_finished = len(plan) - len(self.waiting)
        if self.n_finished:
            outlet.bar.update(self.n_finished, "(finished earlier)")
        self.settings = TaskSettings.capture(block_threads=1)
        self.slots = executor_slots(executor)
        self.shipped: collections.Counter[str] = collections.Counter()
        self.pending: dict[cf.Future[Any], tuple[int, _CellTask, PreparedData]] = {}

    def all(self) -> None:
        """Run every waiting cell, keeping at most ``PENDING_PER_SLOT`` tasks per slot."""
        while self.waiting or self.pending:
            while self.waiting and len(self.pending) < PENDING_PER_SLOT * self.slots:
                i = self.waiting.popleft()
                started = self.cells.task(self.plan[i])
                if isinstance(started, dict):  # failed before it could start
                    self.finish(i, started)
                else:
                    self.submit(i, *started, resend=False)
            if self.pending:
                self.collect()

    def submit(self, i: int, task: _CellTask, data: PreparedData, resend: bool) -> None:
        send = resend or self.shipped[task.data_token] < self.slots
        if send:
            self.shipped[task.data_token] += 1
        future = self.executor.submit(_cell_task, self.settings, task, data if send else None)
        self.pending[future] = (i, task, data)

    def collect(self) -> None:
        """Wait for a task to end; record its cell, or send it again with the rows."""
        ready, _ = cf.wait(self.pending, return_when=cf.FIRST_COMPLETED)
        for future in sorted(ready, key=lambda f: self.pending[f][0]):
            i, task, data = self.pending.pop(future)
            try:
                record = future.result()
            except Exception as exc:  # the task itself failed (a worker lost, ...)
                record = task.failed(exc)
            if record is None:  # that process had not the rows
                self.submit(i, task, data, resend=True)
            else:
                self.finish(i, record)

    def finish(self, i: int, record: dict[str, Any]) -> None:
        self.cells.n_computed += 1
        self.records[i] = record
        self.n_finished += 1
        self.outlet.finished(record, self.n_finished, self.plan[i].label)
