"""``kernelmaps compare`` under faults: kills, Ctrl-C, concurrent runs, unwritable output,
a hand-edited results log, and requests too large to run.

The rule: an interrupted run resumes to exactly the tables of an uninterrupted one; a
fault is one line on stderr with the right exit status, never a traceback; a file is
replaced whole or not at all.

The kill points are fixed (after the N-th cell line of the log, or a fixed delay at
start-up), and the cells of the killed runs are slowed down by a sleep, so that each
signal lands inside a run while it computes a cell: the tests are deterministic.
"""

from __future__ import annotations

import csv
import errno
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import kernelmaps
from kernelmaps import RandomFourierFeatures
from kernelmaps.exceptions import InsufficientMemoryError, OutputWriteError
from kernelmaps.experiments import (
    DatasetConfig,
    ExperimentConfig,
    MethodConfig,
    MethodSpec,
    _folder_lock,
    method_names,
    register_method,
    run_experiment,
)

#: What the killed runs execute: the command line, with the method ``test-slow-rff``
#: registered (random Fourier features after a sleep of $KM_CELL_DELAY seconds).
CHILD = r"""
import os, signal, sys, time
# Ctrl-C as in a terminal, even where the suite runs as a background job (which starts
# its processes with SIGINT ignored)
signal.signal(signal.SIGINT, signal.default_int_handler)
from kernelmaps import RandomFourierFeatures
from kernelmaps.experiments import MethodSpec, register_method

def slow(n_components, kernel_params, random_state):
    time.sleep(float(os.environ.get("KM_CELL_DELAY", "0")))
    params = dict(kernel_params)
    params.pop("kernel", None)
    return RandomFourierFeatures("rbf", kernel_params=params, n_components=n_components,
                                 random_state=random_state)

register_method(MethodSpec("test-slow-rff", "rbf", slow, "RFF after a sleep"))
from kernelmaps.cli import main
raise SystemExit(main(sys.argv[1:]))
"""

#: The run of every test: 6 cells, metrics without timings (equal from run to run).
ARGS = [
    "compare", "--datasets", "cpu_act", "--methods", "test-slow-rff", "--n-components", "8",
    "16", "32", "--seeds", "2", "--n-fit", "50", "--n-eval", "30", "--metrics", "fro_error",
    "max_error", "--no-plot", "-q",
]  # fmt: skip
N_CELLS = 6

#: Seconds each cell of a killed run sleeps: the signal sent after the N-th log line
#: lands while cell N + 1 computes.
CELL_DELAY = 0.4


def _rff(n_components: int, kernel_params: dict[str, Any], random_state: Any):
    params = dict(kernel_params)
    params.pop("kernel", None)
    return RandomFourierFeatures(
        "rbf", kernel_params=params, n_components=n_components, random_state=random_state
    )


def _refusing(n_components: int, kernel_params: dict[str, Any], random_state: Any):
    """A map whose memory check refuses every request above 1 GiB (as the maps do)."""
    from kernelmaps._memory import check_memory

    check_memory(n_components * 8.0 * 100, "test map: its features", "lower n_components")
    return _rff(n_components, kernel_params, random_state)


for _spec in (
    MethodSpec("test-slow-rff", "rbf", _rff, "RFF (in this process: no sleep)"),
    MethodSpec("test-refusing", "rbf", _refusing, "refuses large n_components"),
):
    if _spec.name not in method_names():
        register_method(_spec)


def _main(capsys, *args: str) -> subprocess.CompletedProcess:
    from kernelmaps.cli import main

    try:
        code = main(list(args))
    except SystemExit as exc:
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return subprocess.CompletedProcess(list(args), code, out.out, out.err)


def _one_line_error(proc: subprocess.CompletedProcess, status: int, *fragments: str) -> None:
    assert proc.returncode == status, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1, proc.stderr
    for fragment in fragments:
        assert fragment in errors[0], proc.stderr


def _start(out: Path, delay: float = CELL_DELAY) -> subprocess.Popen:
    src = str(Path(kernelmaps.__file__).resolve().parents[1])
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]),
        "KM_CELL_DELAY": str(delay),
        "PYTHONWARNINGS": "ignore",
    }
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, *ARGS, "-o", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _log_lines(out: Path) -> int:
    try:
        return (out / "cells.jsonl").read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def _wait_for_lines(proc: subprocess.Popen, out: Path, n: int, timeout: float = 240) -> None:
    """Wait until the log of ``out`` has ``n`` lines (0: until the run holds the folder)."""
    deadline = time.monotonic() + timeout
    while not ((out / "run.lock").exists() if n == 0 else _log_lines(out) >= n):
        if proc.poll() is not None:
            pytest.fail(f"the run ended before {n} cells: {proc.communicate()[1]}")
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"no {n} cells after {timeout} s")
        time.sleep(0.01)


def _interrupt(out: Path, sig: int, after_lines: int):
    """Start a run on ``out``, send ``sig`` after ``after_lines`` log lines (0: as soon
    as it holds the folder, before its first cell), return its exit status and stderr."""
    proc = _start(out)
    _wait_for_lines(proc, out, after_lines)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=240)
    return proc.returncode, err


def _table(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _assert_whole_log(out: Path) -> None:
    """Every line of the log a complete record; no temporary file left behind."""
    data = (out / "cells.jsonl").read_bytes() if (out / "cells.jsonl").exists() else b""
    assert data == b"" or data.endswith(b"\n")  # a torn tail is cut on the next resume
    for line in data.splitlines():
        assert "status" in json.loads(line)
    assert not [p.name for p in out.iterdir() if p.name.endswith(".tmp")]


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> list[dict[str, str]]:
    """The table of an uninterrupted run (in this process: the same cells, no sleep)."""
    from kernelmaps.cli import main

    out = tmp_path_factory.mktemp("reference")
    assert main([*ARGS, "-o", str(out)]) == 0
    table = _table(out / "results.csv")
    assert len(table) == 2 * N_CELLS
    return table


# --- Kills and Ctrl-C, then a resume ----------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    "faults",
    [
        # (signal, after this many log lines; 0: before the first cell)
        [(signal.SIGKILL, 1), (signal.SIGINT, 3)],
        [(signal.SIGINT, 0), (signal.SIGKILL, 4)],
    ],
    ids=["kill-then-ctrl-c", "ctrl-c-before-the-first-cell-then-kill"],
)
def test_interrupted_runs_resume_to_the_uninterrupted_table(tmp_path, capsys, reference, faults):
    out = tmp_path / "out"
    for sig, after in faults:
        status, err = _interrupt(out, sig, after)
        if sig == signal.SIGKILL:
            assert status == -signal.SIGKILL
        else:
            assert status == 130, err
            assert "Traceback" not in err, err
            assert "interrupted" in err
        if out.exists():
            _assert_whole_log(out)
            assert not (out / "results.csv").exists()
    logged = _log_lines(out)
    assert 0 < logged < N_CELLS
    with open(out / "cells.jsonl", "ab") as fh:
        fh.write(b'{"key": "a line cut sh')  # as a kill in the middle of a write leaves it
    proc = _main(capsys, *ARGS, "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""  # the torn line is dropped silently: it was never a record
    assert _table(out / "results.csv") == reference
    assert _log_lines(out) == N_CELLS  # each cell logged once; the torn line cut away
    _assert_whole_log(out)


# --- Concurrent runs ----------------------------------------------------------------------


@pytest.mark.slow
def test_a_second_run_on_a_folder_in_use_is_refused_and_a_killed_holder_does_not_block(
    tmp_path, capsys, reference
):
    out = tmp_path / "out"
    first = _start(out)
    try:
        _wait_for_lines(first, out, 1)
        refused = _main(capsys, *ARGS, "-o", str(out))
        _one_line_error(
            refused, 2, f"{out}: the output folder is in use", f"PID {first.pid} on "
            f"{socket.gethostname()}", "another output folder (-o/--output)"
        )  # fmt: skip
    finally:
        first.kill()
        first.communicate(timeout=240)
    assert (out / "run.lock").exists()  # left by the killed run: the lock itself is gone
    proc = _main(capsys, *ARGS, "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert _table(out / "results.csv") == reference


def test_a_run_in_this_process_holding_the_folder_refuses_another(tmp_path):
    config = _small_config()
    with (
        _folder_lock._FolderLock(tmp_path),
        pytest.raises(_folder_lock.OutputFolderInUseError) as info,
    ):
        run_experiment(config, tmp_path)
    assert f"PID {os.getpid()} on {socket.gethostname()}" in str(info.value)
    assert not (tmp_path / "cells.jsonl").exists()  # refused before any work
    run_experiment(config, tmp_path)  # released


@pytest.mark.skipif(_folder_lock._fcntl is None, reason="needs fcntl.flock")
def test_a_finished_run_removes_its_lock_file(tmp_path):
    lock = tmp_path / "run.lock"
    with _folder_lock._FolderLock(tmp_path) as held:
        assert held.fd is not None and json.loads(lock.read_text())["pid"] == os.getpid()
    assert not lock.exists()
    assert run_experiment(_small_config(), tmp_path).n_computed == 2
    assert not lock.exists()  # the run's lock, removed as it ended
    assert (tmp_path / "cells.jsonl").exists()  # what a resumed run reads is kept


@pytest.mark.skipif(_folder_lock._fcntl is None, reason="needs fcntl.flock")
def test_a_lock_file_removed_before_its_flock_is_taken_again(tmp_path, monkeypatch):
    """A run that opened run.lock as the run holding it ended (and removed it) locks the
    file the path names, so that no third run can lock a file of its own beside it."""
    first = _folder_lock._FolderLock(tmp_path).__enter__()
    real = _folder_lock._fcntl
    calls = []

    class FirstEndsMeanwhile:
        LOCK_EX, LOCK_NB, LOCK_UN = real.LOCK_EX, real.LOCK_NB, real.LOCK_UN

        @staticmethod
        def flock(fd: int, operation: int) -> None:
            if not calls and operation != real.LOCK_UN:
                first.release()  # between the second run's open and its flock
            calls.append(operation)
            real.flock(fd, operation)

    monkeypatch.setattr(_folder_lock, "_fcntl", FirstEndsMeanwhile)
    with _folder_lock._FolderLock(tmp_path) as second:
        taken = [op for op in calls if op != real.LOCK_UN]
        assert len(taken) == 2  # the removed file, then the file at the path
        assert _folder_lock._same_file(second.fd, second.path)
        with pytest.raises(_folder_lock.OutputFolderInUseError):
            _folder_lock._FolderLock(tmp_path).__enter__()
    assert not (tmp_path / "run.lock").exists()


def _small_config(**kw: Any) -> ExperimentConfig:
    base: dict[str, Any] = {
        "datasets": [DatasetConfig("cpu_act", n_fit=40, n_eval=20)],
        "methods": [MethodConfig("test-slow-rff")],
        "n_components": [8],
        "seeds": [0, 1],
        "metrics": ["fro_error"],
    }
    base.update(kw)
    return ExperimentConfig(**base)


def _exited_pid() -> int:
    """The PID of a process of this machine that has ended."""
    proc = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(proc.stdout)


@pytest.mark.slow
def test_lock_file_without_flock(tmp_path, monkeypatch):
    """Where fcntl is missing: an exclusive lock file, taken over when its run is gone."""
    monkeypatch.setattr(_folder_lock, "_fcntl", None)
    lock = tmp_path / "run.lock"
    config = _small_config()

    def holder(pid: int, host: str | None = None) -> None:
        host = host or socket.gethostname()
        lock.write_text(json.dumps({"pid": pid, "host": host, "started": "2024-01-01"}))

    holder(os.getpid())  # a live run of this host
    with pytest.raises(_folder_lock.OutputFolderInUseError) as info:
        run_experiment(config, tmp_path)
    message = str(info.value)
    assert f"PID {os.getpid()}" in message and f"delete {lock}" in message
    assert "\n" not in message
    holder(os.getpid(), host="another-host")  # cannot be checked from here: held
    with pytest.raises(_folder_lock.OutputFolderInUseError, match="another-host"):
        run_experiment(config, tmp_path)
    lock.write_text("")  # being written by a run that has just created it
    with pytest.raises(_folder_lock.OutputFolderInUseError, match="gives no details"):
        run_experiment(config, tmp_path)
    old = time.time() - 60
    os.utime(lock, (old, old))  # ... or left empty by a run killed long ago
    assert run_experiment(config, tmp_path).n_computed == 2
    assert not lock.exists()  # removed at the end of the run
    holder(_exited_pid())  # left by a killed run
    assert run_experiment(config, tmp_path, resume=False).n_computed == 2
    assert not lock.exists()
    with _folder_lock._FolderLock(tmp_path):  # held: the file names this run
        assert json.loads(lock.read_text())["pid"] == os.getpid()
        with pytest.raises(_folder_lock.OutputFolderInUseError):
            _folder_lock._FolderLock(tmp_path).__enter__()
    assert not lock.exists()


def test_flock_unsupported_by_the_file_system_falls_back_to_a_lock_file(tmp_path, monkeypatch):
    class NoLocks:
        LOCK_EX, LOCK_NB, LOCK_UN = 2, 4, 8

        @staticmethod
        def flock(fd: int, operation: int) -> None:
            raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(_folder_lock, "_fcntl", NoLocks)
    with _folder_lock._FolderLock(tmp_path) as lock:
        assert lock.exclusive and lock.fd is None
        with pytest.raises(_folder_lock.OutputFolderInUseError, match=f"delete {lock.path}"):
            _folder_lock._FolderLock(tmp_path).__enter__()
    assert not lock.path.exists()


# --- Output that cannot be written --------------------------------------------------------


def _fail_writes_under(monkeypatch, folder: Path, error: int) -> None:
    """Every attempt to create or write a file in ``folder`` fails with ``error``, as on
    a read-only file system (reading still works)."""
    real_open, real_mkdir = os.open, os.mkdir
    writes = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC

    def inside(path: Any) -> bool:
        return Path(os.fsdecode(path)).resolve().is_relative_to(folder.resolve())

    def fake_open(path: Any, flags: int, *args: Any, **kw: Any) -> int:
        if flags & writes and inside(path):
            raise OSError(error, os.strerror(error), os.fsdecode(path))
        return real_open(path, flags, *args, **kw)

    def fake_mkdir(path: Any, *args: Any, **kw: Any) -> None:
        if inside(path):
            raise OSError(error, os.strerror(error), os.fsdecode(path))
        real_mkdir(path, *args, **kw)

    monkeypatch.setattr(os, "open", fake_open)
    monkeypatch.setattr(os, "mkdir", fake_mkdir)


def test_read_only_output_is_one_line_and_leaves_the_tables(tmp_path, capsys, monkeypatch):
    out = tmp_path / "out"
    assert _main(capsys, *ARGS, "-o", str(out)).returncode == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    _fail_writes_under(monkeypatch, tmp_path, errno.EROFS)
    proc = _main(capsys, *ARGS, "--n-components", "8", "64", "-o", str(out))
    _one_line_error(proc, 1, "read-only file system", "write to a writable folder")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    proc = _main(capsys, *ARGS, "-o", str(tmp_path / "new" / "folder"))
    _one_line_error(proc, 1, str(tmp_path / "new"), "read-only file system")


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0, reason="permissions do not bind root"
)
def test_unwritable_output_folder(tmp_path, capsys):  # pragma: no cover - not as root
    out = tmp_path / "out"
    out.mkdir()
    out.chmod(0o555)
    try:
        _one_line_error(_main(capsys, *ARGS, "-o", str(out)), 1, "permission denied")
    finally:
        out.chmod(0o755)


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc/self/fd")
def test_full_disk_while_writing_the_tables_keeps_the_previous_ones(tmp_path, capsys, monkeypatch):
    out = tmp_path / "out"
    args = [*ARGS, "-o", str(out)]
    assert _main(capsys, *args).returncode == 0
    before = {name: (out / name).read_bytes() for name in ("results.csv", "results.json")}
    real_fsync = os.fsync

    def fsync(fd: int) -> None:  # the disk fills up while a table is written
        if os.readlink(f"/proc/self/fd/{fd}").endswith(".tmp"):
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    proc = _main(capsys, *args, "--n-components", "8", "16", "32", "64")
    _one_line_error(proc, 1, "results.csv: no space left on the device", "free some space")
    assert {name: (out / name).read_bytes() for name in before} == before
    assert not [p.name for p in out.iterdir() if p.name.endswith(".tmp")]
    assert _log_lines(out) == N_CELLS + 2  # the new cells are kept for the next run


def test_full_disk_while_logging_a_cell_then_resume(tmp_path, capsys, monkeypatch, reference):
    out = tmp_path / "out"

    def fsync(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr(os, "fsync", fsync)
        proc = _main(capsys, *ARGS, "-o", str(out))
    _one_line_error(proc, 1, "cells.jsonl: no space left on the device")
    assert not (out / "results.csv").exists()
    assert _main(capsys, *ARGS, "-o", str(out)).returncode == 0
    assert _table(out / "results.csv") == reference


def test_figure_written_whole_or_not_at_all(tmp_path, capsys, monkeypatch):
    pytest.importorskip("matplotlib")
    out = tmp_path / "out"
    args = [a for a in ARGS if a != "--no-plot"]
    assert _main(capsys, *args, "-o", str(out)).returncode == 0
    figure = (out / "figure.png").read_bytes()
    assert figure.startswith(b"\x89PNG")
    real_replace = os.replace

    def replace(src: Any, dst: Any) -> None:  # the disk is full when the figure is renamed
        if str(dst).endswith("figure.png"):
            raise OSError(errno.ENOSPC, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    proc = _main(capsys, *args, "-o", str(out))
    _one_line_error(proc, 1, "figure.png: no space left on the device")
    assert (out / "figure.png").read_bytes() == figure


# --- Bad requests: one line each; a cell's error does not stop the run --------------------


def test_output_naming_a_file_is_a_user_error(tmp_path, capsys):
    path = tmp_path / "results"
    path.write_text("not a folder")
    proc = _main(capsys, *ARGS, "-o", str(path))
    _one_line_error(proc, 2, f"-o/--output {path}: is a file, not a folder")
    assert path.read_text() == "not a folder"
    with pytest.raises(ValueError, match="the output folder is a file"):
        run_experiment(_small_config(), path)


def test_huge_n_components_fails_its_cells_only(tmp_path, capsys):
    out = tmp_path / "out"
    proc = _main(
        capsys, *ARGS[:5], "--n-components", "8", "10000000000000", "--seeds", "1",
        *ARGS[11:], "-o", str(out),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    failed = [line for line in proc.stderr.splitlines() if line.startswith("warning:")]
    assert len(failed) == 1 and "D=10000000000000 / seed 0 failed: " in failed[0]
    assert "MemoryError" in failed[0]  # numpy's, or the map's own memory check
    assert {r["n_components"] for r in _table(out / "results.csv")} == {"8"}


def test_a_memory_refusal_is_a_failed_cell(tmp_path, monkeypatch):
    monkeypatch.setattr("kernelmaps._memory.available_memory", lambda: 2**30)
    config = _small_config(methods=["test-refusing"], n_components=[8, 2**21], seeds=[0])
    result = run_experiment(config, tmp_path)
    assert len(result.failures) == 1
    message = result.failures[0]["message"]
    assert message.startswith(f"{InsufficientMemoryError.__name__}: test map: its features")
    assert "1.0 GiB of memory is available; lower n_components." in message
    assert result.values(metric="fro_error")  # the small cell ran


def test_an_unexpected_error_of_a_cell_is_recorded_on_one_line(tmp_path):
    def broken(n_components: int, kernel_params: dict[str, Any], random_state: Any):
        raise IndexError("index 3 is out of bounds\n  for axis 0")

    if "test-broken" not in method_names():
        register_method(MethodSpec("test-broken", "rbf", broken, "raises IndexError"))
    result = run_experiment(_small_config(methods=["test-broken", "test-slow-rff"]), tmp_path)
    assert [f["message"] for f in result.failures] == [
        "IndexError: index 3 is out of bounds for axis 0"
    ] * 2
    assert len(result.values(metric="fro_error")) == 2


def test_bandwidth_inf_is_refused_before_any_work(tmp_path, capsys):
    out = tmp_path / "out"
    proc = _main(capsys, *ARGS, "--bandwidth", "inf", "-o", str(out))
    _one_line_error(proc, 2, "argument --bandwidth: gamma must be a finite positive number")
    assert not out.exists()


def _limit_memory() -> None:  # pragma: no cover - runs in the child process
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (4 * 2**30, 4 * 2**30))


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS bounds the child on Linux")
@pytest.mark.slow
def test_a_billion_seeds_is_refused_before_the_plan_is_made(tmp_path):
    """Once, a list of 10^9 seeds was made (36 GB): the child runs with 4 GiB of address
    space, so that such a regression fails here with a MemoryError, not the machine."""
    out = tmp_path / "out"
    src = str(Path(kernelmaps.__file__).resolve().parents[1])
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, *ARGS[:9], "--seeds", "1000000000",
         *ARGS[11:], "-o", str(out)],
        capture_output=True, text=True, timeout=300, preexec_fn=_limit_memory,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])},
    )  # fmt: skip
    _one_line_error(
        proc, 2, "the experiment has 3000000000 cells", "more than the limit of 100000",
        "use fewer seeds",
    )  # fmt: skip
    assert not out.exists()


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("n_components = [8\n", "not valid TOML"),
        ("n_components = [8]\ndatasets = ['cpu_act']\nmethods = ['rff-mc']\nspeed = 1\n",
         "unknown key(s) 'speed'"),
        ("n_components = 8\ndatasets = ['cpu_act']\nmethods = ['rff-mc']\n",
         "n_components must be a non-empty list of positive integers; got 8"),
        ("n_components = [8]\ndatasets = ['cpu_act']\nmethods = ['rff-mc']\nseeds = [0, 0]\n",
         "seeds lists 0 twice"),
        ("n_components = [8]\nmethods = ['rff-mc']\n[[datasets]]\nname = 'cpu_act'\n"
         "data_seed = 'zero'\n", "data_seed must be an integer >= 0; got 'zero'"),
        ("n_components = [8]\ndatasets = ['cpu_act']\n[[methods]]\nname = 'rff-mc'\n"
         "params = 3\n", "params must be a table"),
        ("n_components = [8]\ndatasets = ['cpu_act']\nmethods = ['rff-mc']\nalpha = 'x'\n",
         "alpha must be a positive finite number"),
        ("\xff", "not a text file in UTF-8"),
    ],
)  # fmt: skip
def test_config_file_errors_are_one_line(tmp_path, capsys, text, fragment):
    path = tmp_path / "study.toml"
    path.write_bytes(text.encode("latin-1"))
    proc = _main(capsys, "compare", "--config", str(path), "-o", str(tmp_path / "out"))
    _one_line_error(proc, 2, str(path), fragment)


# --- A hand-edited results log ------------------------------------------------------------


def test_bad_log_lines_are_skipped_with_one_warning_each(tmp_path, capsys, reference):
    out = tmp_path / "out"
    assert _main(capsys, *ARGS, "-o", str(out)).returncode == 0
    lines = (out / "cells.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    edits = {
        0: {k: v for k, v in records[0].items() if k != "metrics"},  # a key removed
        1: {**records[1], "seed": "1"},  # a value of the wrong type
        2: "{this is not json",
        3: {**records[3], "n_components": 999},  # no longer the cell of its key
        4: {**records[4], "metrics": {"fro_error": "small"}},
    }
    for i, edit in edits.items():
        lines[i] = edit if isinstance(edit, str) else json.dumps(edit)
    (out / "cells.jsonl").write_text("\n".join(lines) + "\n\n")
    proc = _main(capsys, *ARGS, "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    warned = proc.stderr.splitlines()
    assert len(warned) == len(edits), proc.stderr
    for i, line in zip(edits, warned, strict=True):
        assert line.startswith(f"warning: {out / 'cells.jsonl'} line {i + 1}: "), line
        assert line.endswith("; the line is skipped and its cell computed again."), line
    assert "the record has no 'metrics'" in warned[0] and "'seed' is '1'" in warned[1]
    assert "not valid JSON" in warned[2] and "does not match its key" in warned[3]
    assert "metric 'fro_error' is 'small'" in warned[4]
    assert _table(out / "results.csv") == reference


def test_a_record_without_an_asked_metric_is_computed_again(tmp_path):
    config = _small_config()
    run_experiment(config, tmp_path)
    more = _small_config(metrics=["fro_error", "max_error"])
    result = run_experiment(more, tmp_path)
    assert result.n_computed == 2 and len(result.values(metric="max_error")) == 2
    assert run_experiment(config, tmp_path).n_computed == 0  # a record may hold more


def test_results_tables_that_are_not_tables_are_one_line_errors(tmp_path):
    from kernelmaps.experiments import read_results

    bad_json = tmp_path / "results.json"
    for text, fragment in [("{", "invalid JSON"), ('{"rows": []}', "no list of 'results'")]:
        bad_json.write_text(text)
        with pytest.raises(ValueError, match=fragment):
            read_results(bad_json)
    bad_csv = tmp_path / "results.csv"
    bad_csv.write_text("dataset,method,n_components,metric,value\nd,m,8,fro_error,x\n")
    with pytest.raises(ValueError, match=r"line 2: value 'x' is not a number"):
        read_results(bad_csv)


def test_write_errors_are_output_write_errors(tmp_path, monkeypatch):
    """The library raises OutputWriteError (one line naming the file) for the log."""

    def fsync(fd: int) -> None:
        raise OSError(errno.EDQUOT, "Disk quota exceeded")

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(OutputWriteError, match=r"cells\.jsonl: disk quota exceeded"):
        run_experiment(_small_config(), tmp_path)
