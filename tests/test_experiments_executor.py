"""The experiment runner on executors (thread and process pools, Dask) and ``compare --workers``.

Every parallel run must give the records of a sequential run (the cells are seeded), write
the log from the calling process only, and resume after an interruption.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import warnings
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import sklearn

import kernelmaps
from kernelmaps import RandomFourierFeatures
from kernelmaps.experiments import (
    DatasetConfig,
    ExperimentConfig,
    MethodConfig,
    MethodSpec,
    method_names,
    register_method,
    run_experiment,
)

#: Metrics that measure time or memory: they differ from run to run.
UNSTABLE = {"fit_time", "transform_time", "peak_memory"}


def _rff(n_components: int, kernel_params: dict[str, Any], random_state: Any):
    params = dict(kernel_params)
    params.pop("kernel", None)
    return RandomFourierFeatures(
        "rbf", kernel_params=params, n_components=n_components, random_state=random_state
    )


def _warning_factory(n_components: int, kernel_params: dict[str, Any], random_state: Any):
    """RFF that warns with its cell's settings (each cell must record its own warning)."""
    warnings.warn(f"cell D={n_components} seed={random_state}", UserWarning, stacklevel=2)
    return _rff(n_components, kernel_params, random_state)


def _probe_factory(n_components: int, kernel_params: dict[str, Any], random_state: Any):
    """RFF that warns with the settings the task runs under."""
    from threadpoolctl import threadpool_info

    from kernelmaps._parallel import n_threads

    blas = sorted({p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"})
    warnings.warn(
        f"engine={kernelmaps.get_config()['engine']} "
        f"working_memory={sklearn.get_config()['working_memory']} "
        f"block_threads={n_threads()} blas={blas}",
        UserWarning,
        stacklevel=2,
    )
    return _rff(n_components, kernel_params, random_state)


def _failing_factory(n_components: int, kernel_params: dict[str, Any], random_state: Any):
    raise ValueError(f"this method fails (D={n_components})")


def _crashing_factory(n_components: int, kernel_params: dict[str, Any], random_state: Any):
    if random_state == 1:
        raise RuntimeError("an unexpected error of the method")
    return _rff(n_components, kernel_params, random_state)


def _interrupting_factory(n_components: int, kernel_params: dict[str, Any], random_state: Any):
    if random_state == 1:
        raise KeyboardInterrupt
    return _rff(n_components, kernel_params, random_state)


for _spec in (
    MethodSpec("test-exec-warning", "rbf", _warning_factory, "RFF, warns its cell"),
    MethodSpec("test-exec-probe", "rbf", _probe_factory, "RFF, warns its settings"),
    MethodSpec("test-exec-failing", "rbf", _failing_factory, "always fails"),
    MethodSpec("test-exec-crashing", "rbf", _crashing_factory, "raises RuntimeError"),
    MethodSpec("test-exec-interrupting", "rbf", _interrupting_factory, "Ctrl-C in a cell"),
):
    if _spec.name not in method_names():
        register_method(_spec)


def _config(**kw: Any) -> ExperimentConfig:
    base: dict[str, Any] = {
        "datasets": [
            DatasetConfig("cpu_act", n_fit=120, n_eval=60, preprocess="standard"),
            DatasetConfig("letter", n_fit=100, n_eval=50),
        ],
        "methods": [
            MethodConfig("test-exec-warning"),
            MethodConfig("nystroem-kmeans"),  # k-means: OpenMP threads of the cell's thread
            MethodConfig("test-exec-failing"),
            MethodConfig("binning", kernel="rbf"),  # fails before it starts
        ],
        "n_components": [8, 24],
        "seeds": [0, 1],
        "metrics": ["fro_error", "max_error", "downstream", "fit_time", "peak_memory"],
    }
    base.update(kw)
    return ExperimentConfig(**base)


def _stable(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in rows if r["metric"] not in UNSTABLE]


def _log_records(out: Path) -> set[str]:
    """The records of a results log, timings left out, as comparable strings."""
    records = set()
    for line in (out / "cells.jsonl").read_text().splitlines():
        record = json.loads(line)
        if "metrics" in record:
            record["metrics"] = {k: v for k, v in record["metrics"].items() if k not in UNSTABLE}
        records.add(json.dumps(record, sort_keys=True))
    return records


@pytest.fixture(scope="module")
def sequential(tmp_path_factory):
    out = tmp_path_factory.mktemp("sequential")
    return run_experiment(_config(), out)


def _assert_same_as_sequential(result, sequential, out: Path | None = None) -> None:
    assert _stable(result.rows) == _stable(sequential.rows)  # the same values, in order
    assert result.failures == sequential.failures
    assert result.provenance["gamma"] == sequential.provenance["gamma"]
    assert result.n_cells == result.n_computed == sequential.n_cells
    if out is not None:
        assert _log_records(out) == _log_records(sequential.output_dir)


def test_thread_pool_gives_the_sequential_records_and_restores_process_state(tmp_path, sequential):
    from threadpoolctl import threadpool_info

    filters, show = list(warnings.filters), warnings.showwarning
    blas = [p["num_threads"] for p in threadpool_info()]
    with ThreadPoolExecutor(2) as pool:
        result = run_experiment(_config(), tmp_path, executor=pool)
    _assert_same_as_sequential(result, sequential, tmp_path)
    assert result.provenance["executor"] == "ThreadPoolExecutor: 2 workers"
    # The warnings of each cell are its own (the cells ran at once in one process) ...
    for line in (tmp_path / "cells.jsonl").read_text().splitlines():
        record = json.loads(line)
        if record["method"] == "test-exec-warning":
            assert record["warnings"] == [f"cell D={record['n_components']} seed={record['seed']}"]
    # ... and the process-wide settings are back as they were.
    assert warnings.filters == filters and warnings.showwarning is show
    assert [p["num_threads"] for p in threadpool_info()] == blas


def _forgetting(func: Any, *args: Any) -> Any:
    """``func(*args)`` in a process that has kept no rows (as if new)."""
    from kernelmaps.experiments import _executor

    _executor.forget_task_data(list(_executor._TASK_DATA))
    return func(*args)


class _Counting(Executor):
    """An executor that counts the tasks sent with their rows."""

    def __init__(self, inner: Executor, forgetting: bool = False) -> None:
        self.inner, self.forgetting = inner, forgetting
        self.tasks = self.with_rows = 0
        self._max_workers = inner._max_workers

    def submit(self, fn, /, *args, **kwargs):
        self.tasks += 1
        self.with_rows += args[-1] is not None
        if self.forgetting:
            return self.inner.submit(_forgetting, fn, *args, **kwargs)
        return self.inner.submit(fn, *args, **kwargs)


def test_process_pool_gives_the_sequential_records(tmp_path, sequential):
    with ProcessPoolExecutor(2) as pool:
        executor = _Counting(pool)
        result = run_experiment(_config(), tmp_path, executor=executor)
    _assert_same_as_sequential(result, sequential, tmp_path)
    assert all(r["value"] > 0 for r in result.rows if r["metric"] == "peak_memory")
    # 24 cells run as tasks (binning fails before), 12 per data set; the rows of a data
    # set go with its first two (one per process), and again to a process without them.
    assert executor.tasks >= 24
    assert executor.with_rows <= 2 * 2 + (executor.tasks - 24) < 24


def test_a_task_on_a_process_without_the_rows_is_sent_again_with_them(tmp_path, sequential):
    with ThreadPoolExecutor(1) as pool:
        executor = _Counting(pool, forgetting=True)
        result = run_experiment(_config(), tmp_path, executor=executor)
    _assert_same_as_sequential(result, sequential, tmp_path)
    assert executor.with_rows == 24 and executor.tasks == 2 * 24 - 2  # the first: with rows


def test_interrupted_parallel_run_keeps_finished_cells_and_resumes(tmp_path, sequential):
    seen: list[dict[str, Any]] = []

    def stop_after_three(record: dict[str, Any]) -> None:
        seen.append(record)
        if len(seen) == 3:
            raise KeyboardInterrupt

    with ThreadPoolExecutor(2) as pool, pytest.raises(KeyboardInterrupt):
        run_experiment(_config(), tmp_path, executor=pool, on_cell=stop_after_three)
    logged = (tmp_path / "cells.jsonl").read_text().splitlines()
    assert len(logged) == 3 and not (tmp_path / "results.csv").exists()
    with ThreadPoolExecutor(2) as pool:
        result = run_experiment(_config(), tmp_path, executor=pool)
    assert result.n_computed == result.n_cells - 3
    assert _stable(result.rows) == _stable(sequential.rows)
    assert _log_records(tmp_path) == _log_records(sequential.output_dir)


def test_any_error_of_a_cell_is_recorded_and_the_run_goes_on(tmp_path):
    config = _config(methods=[MethodConfig("test-exec-crashing")], datasets=_config().datasets[:1])
    with ThreadPoolExecutor(2) as pool:
        result = run_experiment(config, tmp_path, executor=pool)
    assert [(f["n_components"], f["seed"]) for f in result.failures] == [(8, 1), (24, 1)]
    assert {f["message"] for f in result.failures} == {
        "RuntimeError: an unexpected error of the method"
    }
    assert len(result.values(metric="fro_error")) == 2  # the cells of seed 0


class _LostWorkers(ThreadPoolExecutor):
    """An executor whose every task is lost, as when its worker process dies."""

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        future.set_exception(RuntimeError("worker lost"))
        return future


def test_a_task_that_fails_outside_its_cell_is_a_failed_cell(tmp_path):
    config = _config(methods=[MethodConfig("nystroem-kmeans")], datasets=_config().datasets[:1])
    with _LostWorkers(2) as pool:
        result = run_experiment(config, tmp_path, executor=pool)
    assert len(result.failures) == result.n_cells == 4
    assert {f["message"] for f in result.failures} == {"RuntimeError: worker lost"}
    assert len((tmp_path / "cells.jsonl").read_text().splitlines()) == 4


def test_an_interrupt_in_a_cell_stops_the_run_keeping_whole_lines(tmp_path):
    config = _config(
        methods=[MethodConfig("test-exec-interrupting")], datasets=_config().datasets[:1]
    )
    with ThreadPoolExecutor(2) as pool, pytest.raises(KeyboardInterrupt):
        run_experiment(config, tmp_path, executor=pool)
    for line in (tmp_path / "cells.jsonl").read_text().splitlines():
        assert json.loads(line)["seed"] == 0  # only finished cells, whole lines
    assert not (tmp_path / "results.csv").exists()


# --- Dask --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dask_client():
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},  # not 8787
            silence_logs=logging.WARNING,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


@pytest.mark.dask
@pytest.mark.slow
def test_dask_executor_gives_the_sequential_records(tmp_path, sequential, dask_client):
    from kernelmaps.cli._cluster import _described

    # as kernelmaps compare makes it: the executor states its workers and scheduler
    result = run_experiment(_config(), tmp_path, executor=_described(dask_client))
    _assert_same_as_sequential(result, sequential, tmp_path)
    provenance = result.provenance
    assert provenance["executor"].startswith("dask: 2 workers, 2 threads, scheduler tcp://")
    assert {"dask", "distributed"} <= set(provenance["versions"])
    assert "dask" not in sequential.provenance["versions"]
    assert sequential.provenance["executor"] == "sequential"
    # a Dask client's executor as it is: recognised, described by what it is
    plain = run_experiment(_config(), tmp_path / "plain", executor=dask_client.get_executor())
    assert plain.provenance["executor"] == "dask"
    assert {"dask", "distributed"} <= set(plain.provenance["versions"])


@pytest.mark.dask
@pytest.mark.slow
def test_settings_reach_the_dask_workers(dask_client):
    config = _config(
        datasets=_config().datasets[:1], methods=[MethodConfig("test-exec-probe")], seeds=[0]
    )
    records: list[dict[str, Any]] = []
    with kernelmaps.config_context(engine="numpy"), sklearn.config_context(working_memory=77):
        run_experiment(config, executor=dask_client.get_executor(), on_cell=records.append)
    assert [r["warnings"] for r in records] == [
        ["engine=numpy working_memory=77 block_threads=1 blas=[1]"]
    ] * 2
    # The workers' own settings are untouched.
    worker_config = dask_client.submit(lambda: kernelmaps.get_config()["engine"]).result()
    assert worker_config == kernelmaps.get_config()["engine"]


# --- The command line ----------------------------------------------------------------------

SMALL = ("compare", "--datasets", "letter", "--methods", "rff-mc", "nystroem-uniform",
         "--n-components", "8", "32", "--seeds", "2", "--n-fit", "150", "--n-eval", "60",
         "--no-plot")  # fmt: skip


def _main(capsys, *args: str) -> subprocess.CompletedProcess:
    from kernelmaps.cli import main

    try:
        code = main(list(args))
    except SystemExit as exc:  # argparse's usage errors
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return subprocess.CompletedProcess(list(args), code, out.out, out.err)


@pytest.fixture(scope="module")
def small_sequential(tmp_path_factory):
    """The log of ``SMALL`` run without workers."""
    out = tmp_path_factory.mktemp("small_sequential")
    from kernelmaps.cli import main

    assert main([*SMALL, "--quiet", "--output", str(out)]) == 0
    return _log_records(out)


@pytest.mark.dask
@pytest.mark.slow
def test_compare_workers_equals_sequential_and_resumes(tmp_path, capsys, small_sequential):
    pytest.importorskip("distributed")
    proc = _main(capsys, *SMALL, "--workers", "2", "--output", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "cells on 2 local Dask worker(s)" in proc.stdout
    assert _log_records(tmp_path) == small_sequential
    provenance = json.loads((tmp_path / "results.json").read_text())["provenance"]
    assert provenance["executor"].startswith("dask: 2 workers")
    # An interruption: the log keeps three cells; the same command computes the others.
    lines = (tmp_path / "cells.jsonl").read_text().splitlines(keepends=True)
    (tmp_path / "cells.jsonl").write_text("".join(lines[:3]))
    proc = _main(capsys, *SMALL, "--workers", "2", "--output", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "(3 reused from an earlier run)" in proc.stdout
    assert len((tmp_path / "cells.jsonl").read_text().splitlines()) == len(lines)
    assert _log_records(tmp_path) == small_sequential


@pytest.mark.dask
@pytest.mark.slow
def test_compare_workers_interrupted_closes_its_cluster(
    tmp_path, capsys, monkeypatch, small_sequential
):
    pytest.importorskip("distributed")
    import multiprocessing

    from kernelmaps import experiments

    run = experiments.run_experiment

    def interrupted_after_three_cells(*args: Any, **kwargs: Any) -> Any:
        def stop(record: dict[str, Any]) -> None:
            if len((tmp_path / "cells.jsonl").read_text().splitlines()) == 3:
                raise KeyboardInterrupt  # as Ctrl-C would

        return run(*args, on_cell=stop, **kwargs)

    children = set(multiprocessing.active_children())
    monkeypatch.setattr(experiments, "run_experiment", interrupted_after_three_cells)
    proc = _main(capsys, *SMALL, "--workers", "2", "--output", str(tmp_path))
    assert proc.returncode == 130 and "run the same command again to resume" in proc.stderr
    assert set(multiprocessing.active_children()) <= children  # the workers are gone
    assert len((tmp_path / "cells.jsonl").read_text().splitlines()) == 3
    monkeypatch.setattr(experiments, "run_experiment", run)
    proc = _main(capsys, *SMALL, "--workers", "2", "--output", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "(3 reused from an earlier run)" in proc.stdout
    assert _log_records(tmp_path) == small_sequential


@pytest.mark.dask
@pytest.mark.slow
def test_compare_scheduler_runs_on_a_running_cluster(tmp_path, capsys, dask_client):
    address = dask_client.scheduler.address
    proc = _main(capsys, *SMALL, "--quiet", "--scheduler", address, "--output", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    provenance = json.loads((tmp_path / "results.json").read_text())["provenance"]
    assert provenance["executor"].endswith(f"scheduler {address}")
    assert provenance["n_computed"] == 8


def _assert_usage_error(proc: subprocess.CompletedProcess, *fragments: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    for fragment in fragments:
        assert fragment in proc.stderr, proc.stderr


def test_compare_parallel_option_errors(tmp_path, capsys, monkeypatch):
    out = ("--output", str(tmp_path))
    _assert_usage_error(
        _main(capsys, *SMALL, "--workers", "2", "--scheduler", "tcp://h:8786", *out),
        "argument --scheduler: not allowed with argument --workers",
    )
    _assert_usage_error(_main(capsys, *SMALL, "--workers", "0", *out), "positive integer")
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if not installed
    for option in (("--workers", "2"), ("--scheduler", "tcp://h:8786")):
        proc = _main(capsys, *SMALL, *option, *out)
        _assert_usage_error(proc, f"{option[0]} needs", 'pip install "kernelmaps[dask]"')
        assert proc.stderr.count("\n") == 1 and proc.stdout == ""
    assert not (tmp_path / "cells.jsonl").exists()


@pytest.mark.slow
def test_sequential_compare_does_not_import_dask(tmp_path):
    code = (
        "import sys\n"
        "from kernelmaps.cli import main\n"
        f"assert main({[*SMALL, '--quiet', '--output', str(tmp_path)]!r}) == 0\n"
        "assert 'dask' not in sys.modules and 'distributed' not in sys.modules\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "results.csv").exists()


def test_only_the_cluster_module_imports_dask():
    """The experiments and the command line reach Dask only through cli/_cluster.py: an
    executor is asked how many tasks it runs and what it is, without importing its library."""
    import ast

    root = Path(kernelmaps.__file__).parent
    importers = []
    for path in sorted([*(root / "experiments").rglob("*.py"), *(root / "cli").rglob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            else:
                continue
            if any(name.split(".")[0] in ("dask", "distributed") for name in names):
                importers.append(path.relative_to(root).as_posix())
    assert sorted(set(importers)) == ["cli/_cluster.py"]
