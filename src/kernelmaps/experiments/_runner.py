"""Running an :class:`ExperimentConfig`: tidy results, provenance, resumable.

:func:`run_experiment` puts the pieces of a run together: the output folder is created
and locked (``_folder_lock``), the cells already in its log are taken from it
(``_cell_log``), the data sets with a cell left to compute are loaded first
(``_prepare``), the remaining cells (``_cells.Cell``) are computed here or on an
executor (``_schedule``), and the tidy table is written with the run's provenance
(``_tables``, ``_provenance``).

A cell that fails is recorded as failed and the run goes on; ``KeyboardInterrupt`` and
``SystemExit`` stop it, the finished cells staying in the log.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import dataclasses
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from ._cell_log import covers, open_log
from ._cells import Cell, plan
from ._config import ExperimentConfig
from ._dimension import statistical_dimensions
from ._folder_lock import _FolderLock, output_folder
from ._isolation import limit_threads
from ._provenance import now, provenance
from ._schedule import CellRunner, Outlet, Progress, run_on_executor, run_sequentially
from ._tables import tidy, write_tables

__all__ = ["ExperimentResult", "run_experiment"]


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
    started = now()
    out_dir = output_folder(output_dir) if output_dir is not None else None
    cells = plan(config)
    runner = CellRunner(config, threads)
    with contextlib.ExitStack() as stack:
        if out_dir is not None:
            stack.enter_context(_FolderLock(out_dir))
        log, done = open_log(out_dir, resume)
        if log is not None:
            stack.callback(log.close)
        done = {key: record for key, record in done.items() if covers(record, config.metrics)}
        _load_data(runner, cells, done)  # a data set that cannot be read stops the run at once
        bar = Progress(len(cells), progress, stream)
        stack.callback(bar.close)
        outlet = Outlet(log, bar, on_cell)
        if executor is not None:
            with limit_threads(threads):  # for the cells in threads of this process
                records = run_on_executor(executor, runner, cells, done, outlet)
        else:
            records = run_sequentially(runner, cells, done, outlet)
        bar.close()
        rows, failures = tidy(config.name, records)
        info = provenance(
            config,
            started=started,
            executor=executor,
            n_cells=len(cells),
            n_computed=runner.n_computed,
            gammas=runner.gamma_cache,
            threads=threads,
            dimensions=statistical_dimensions(config, runner.prepared, runner.gamma_cache, threads),
        )
        if out_dir is not None:
            write_tables(out_dir, rows, info, failures)
    return ExperimentResult(rows, info, len(cells), runner.n_computed, failures, out_dir)


def _load_data(runner: CellRunner, cells: list[Cell], done: dict[str, Any]) -> None:
    """Load, in the order of the experiment, each data set with a cell left to compute."""
    needed = {cell.dataset.display for cell in cells if cell.key not in done}
    for d in runner.config.datasets:
        if d.display in needed:
            runner.prepare(d)
