"""Property-based fuzzing of the command line, in process (``kernelmaps.cli.main``).

Generated malformed and corrupt data files of every supported format, corrupt model
files, corrupt results logs and option values go to ``fit``, ``predict`` and
``compare``.  Acceptable: exit 0 with finite output, or exit 1/2 with exactly one stderr
line starting ``kernelmaps <command>: error:`` (besides ``warning:`` / ``note:`` lines and
argparse's usage lines), no traceback, and no temporary file left behind.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import io
import math
import os
import pickle
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import strategies as st

from kernelmaps.cli import main

from . import _fuzz
from ._fuzz import (
    CLEAR_ERROR,
    CORRECT,
    DEADLINE_SECONDS,
    FAILURE,
    INTERNAL_MESSAGES,
    MAX_MESSAGE,
    Failures,
    FileSpec,
    Outcome,
    call_guarded,
    check,
    classify_exception,
    fuzz,
)

# -- the workspace: a good data file, a model and a finished comparison --------------------

COMPARE_BASE = (
    "--methods", "rff-mc", "--n-components", "8", "--seeds", "1", "--n-fit", "20",
    "--n-eval", "10", "--no-plot", "-q",
)  # fmt: skip


@dataclasses.dataclass(frozen=True)
class Workspace:
    root: Path
    good: Path
    model: Path
    finished: Path

    def compare_args(self, output: Path) -> list[str]:
        return [
            "compare", "--datasets", str(self.good), "--target", "y", *COMPARE_BASE,
            "-o", str(output),
        ]  # fmt: skip


def _quiet_main(argv: list[str]) -> int:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return main(argv)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workspace]:
    """Files every example starts from; the working folder is a temporary one (compare's
    default output folder is relative)."""
    _fuzz.warm_up()
    root = tmp_path_factory.mktemp("fuzz-cli")
    good = _fuzz.good_csv(root / "good.csv")
    model = root / "model.skops"
    fit = ["fit", str(good), "--target", "y", "--n-components", "16", "-o", str(model)]
    assert _quiet_main(fit) == 0
    ws = Workspace(root, good, model, root / "finished")
    assert _quiet_main(ws.compare_args(ws.finished)) == 0
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(root)
        yield ws


# -- running a command and judging it ------------------------------------------------------


@dataclasses.dataclass
class CliRun:
    argv: list[str]
    code: Any = None
    out: str = ""
    err: str = ""
    exc: BaseException | None = None
    seconds: float = 0.0


def run_cli(argv: list[str]) -> CliRun:
    """``main(argv)`` under the fuzz guards, its output captured."""
    out, err = io.StringIO(), io.StringIO()

    def call() -> Any:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                return main(argv)
            except SystemExit as exc:  # argparse: usage errors
                return exc.code

    code, exc, seconds = call_guarded(call)
    return CliRun(argv, code, out.getvalue(), err.getvalue(), exc, seconds)


_NONFINITE_WORD = re.compile(r"(?<![\w.])[-+]?(nan|inf|infinity)(?![\w])", re.IGNORECASE)


def _error_lines(command: str, err: str) -> list[str]:
    """The stderr lines that are neither warnings, notes nor argparse's usage."""
    lines: list[str] = []
    in_usage = False
    for line in err.splitlines():
        if not line.strip():
            in_usage = False
            continue
        if line.startswith("usage:"):
            in_usage = True
            continue
        if in_usage and line.startswith(" "):
            continue
        in_usage = False
        if line.startswith(("warning:", "note:", f"Run 'kernelmaps {command} --help'")):
            continue
        lines.append(line)
    return lines


def judge_run(command: str, run: CliRun, folder: Path, outputs: dict[str, Path]) -> Outcome:
    """The outcome of a command run; ``outputs`` names what a success must have written."""
    if run.exc is not None:
        outcome = classify_exception(run.exc)
        if outcome.what.startswith("hang"):
            return outcome
        return Outcome(
            FAILURE, f"traceback: {type(run.exc).__name__}", _fuzz._short(str(run.exc), 200)
        )
    if "Traceback" in run.err:
        return Outcome(FAILURE, "traceback printed", _fuzz._short(run.err[-300:]))
    if run.seconds > DEADLINE_SECONDS:
        return Outcome(FAILURE, f"slow (> {DEADLINE_SECONDS:.0f} s)", f"{run.seconds:.1f} s")
    left = _fuzz.leftover_temporaries(folder)
    if left:
        return Outcome(FAILURE, "temporary files left", repr(left[:3]))
    if run.code == 0:
        return judge_success(command, run, outputs)
    if run.code not in (1, 2):
        return Outcome(FAILURE, f"exit status {run.code!r}", _fuzz._short(run.err, 200))
    lines = _error_lines(command, run.err)
    prefix = f"kernelmaps {command}: error:"
    if not lines:
        return Outcome(FAILURE, "no error line", _fuzz._short(run.err, 200))
    if len(lines) > 1:
        return Outcome(FAILURE, "error on several lines", _fuzz._short(" | ".join(lines)))
    line = lines[0]
    if not line.startswith(prefix):
        return Outcome(FAILURE, "error line without the command prefix", _fuzz._short(line))
    message = line[len(prefix) :].strip()
    if len(message) < 12 or len(message) > MAX_MESSAGE:
        return Outcome(FAILURE, "error message empty, terse or too long", _fuzz._short(message))
    for pattern in INTERNAL_MESSAGES:
        if pattern.search(message):
            return Outcome(FAILURE, "internal error text shown", _fuzz._short(message))
    if "\ufeff" in message:
        return Outcome(FAILURE, "invisible BOM character in the message", _fuzz._short(message))
    if command != "compare" and re.search(r"The '\w+' parameter of \w+ must be", message):
        return Outcome(
            FAILURE, "an estimator's parameter error shown for an option", _fuzz._short(message)
        )
    # Every cell failing is a failure of the checks before the run, unless each cell refused
    # the data itself with a clear error (above: no internal text in the line), as a chi2
    # kernel refuses held-out rows that min-max scaling made negative, or a map refuses
    # values near the float limit.
    refused = ("NonFiniteOutputError", "InsufficientMemoryError", "ValueError")
    if (
        command == "compare"
        and "every cell failed" in message
        and not re.search(rf"; the first, [^:]*: ({'|'.join(refused)}): ", message)
    ):
        return Outcome(
            FAILURE,
            "every cell failed: the input passed the checks, then no cell could run",
            _fuzz._short(run.err, 300),
        )
    return Outcome(CLEAR_ERROR, f"exit {run.code}", _fuzz._short(message, 160), message)


def _finite_cells(path: Path, column: str | None = None) -> Outcome:
    """Every number in the CSV ``path`` (or in its ``column``) is finite."""
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            rows = list(csv.reader(fh))
    except (OSError, UnicodeDecodeError) as exc:
        return Outcome(FAILURE, "output unreadable", f"{path.name}: {exc}")
    if not rows:
        return Outcome(FAILURE, "output empty", path.name)
    header, body = rows[0], rows[1:]
    index = header.index(column) if column and column in header else None
    for row in body:
        for j, cell in enumerate(row):
            if index is not None and j != index:
                continue
            try:
                value = float(cell)
            except ValueError:
                continue
            if not math.isfinite(value):
                return Outcome(FAILURE, f"non-finite value written to {path.name}", repr(row))
    return Outcome(CORRECT)


def judge_success(command: str, run: CliRun, outputs: dict[str, Path]) -> Outcome:
    """Exit 0: the outputs exist and hold finite numbers."""
    if any(line.startswith(f"kernelmaps {command}: error") for line in run.err.splitlines()):
        return Outcome(FAILURE, "exit 0 with an error line", _fuzz._short(run.err, 200))
    if _NONFINITE_WORD.search(run.out):
        return Outcome(FAILURE, "non-finite number printed", _fuzz._short(run.out[-300:]))
    if command == "fit":
        model = outputs["model"]
        if not model.is_file() or model.stat().st_size == 0:
            return Outcome(FAILURE, "exit 0 but no model file", str(model))
    elif command == "predict":
        target = outputs.get("predictions")
        if target is None:
            cells = [line.strip() for line in run.out.splitlines()[1:]]
            for cell in cells:
                with contextlib.suppress(ValueError):
                    if not math.isfinite(float(cell)):
                        return Outcome(FAILURE, "non-finite prediction printed", repr(cell))
            return Outcome(CORRECT)
        if not target.is_file():
            return Outcome(FAILURE, "exit 0 but no predictions file", str(target))
        return _finite_cells(target)
    elif command == "compare":
        results = outputs["results"] / "results.csv"
        if not results.is_file():
            return Outcome(FAILURE, "exit 0 but no results.csv", str(results))
        return _finite_cells(results, "value")
    return Outcome(CORRECT)


@contextlib.contextmanager
def example_folder(workspace: Workspace) -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(dir=workspace.root, prefix="ex-"))
    try:
        yield folder
    finally:
        with contextlib.suppress(OSError):
            for path in folder.rglob("*"):
                with contextlib.suppress(OSError):
                    path.chmod(0o755 if path.is_dir() else 0o644)
        shutil.rmtree(folder, ignore_errors=True)


# -- data files ----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class FileCase:
    command: str
    spec: FileSpec
    target: str  # "file": the file's own target option; "none"; "bogus": --target nope
    to_file: bool

    def __repr__(self) -> str:
        return f"{self.command} {self.spec!r} target={self.target} to_file={self.to_file}"


@st.composite
def file_cases(draw: Any) -> FileCase:
    return FileCase(
        command=draw(st.sampled_from(("fit", "predict", "compare"))),
        spec=draw(_fuzz.data_files()),
        target=draw(st.sampled_from(("file", "file", "file", "none", "bogus"))),
        to_file=draw(st.booleans()),
    )


def file_case_argv(
    case: FileCase, ws: Workspace, data: Path, folder: Path
) -> tuple[list[str], dict[str, Path]]:
    target: list[str] = []
    if case.target == "file" and case.spec.target:
        target = ["--target", case.spec.target]
    elif case.target == "bogus":
        target = ["--target", "nope"]
    if case.command == "fit":
        model = folder / "m.skops"
        argv = ["fit", str(data), *target, "--n-components", "16", "-o", str(model)]
        return argv, {"model": model}
    if case.command == "predict":
        out = folder / "p.csv"
        argv = ["predict", str(ws.model), str(data), *(["-o", str(out)] if case.to_file else [])]
        return argv, {"predictions": out} if case.to_file else {}
    results = folder / "results"
    argv = ["compare", "--datasets", str(data), *target, *COMPARE_BASE, "-o", str(results)]
    return argv, {"results": results}


def judge_file_case(case: FileCase, outcome: Outcome) -> Outcome:
    """What the file and the options demand beyond exit codes and one line."""
    outcome = _fuzz.file_expectations(case.spec, outcome)
    if outcome.kind == CORRECT and case.target == "bogus" and case.command != "predict":
        return Outcome(FAILURE, "--target ignored", "--target nope")
    stem = case.spec.name.split(".")[0]  # compare names a data set by its file's stem
    if outcome.kind == CLEAR_ERROR and stem not in outcome.message:
        return Outcome(FAILURE, "error does not name the data file", outcome.detail)
    return outcome


def test_data_files(workspace: Workspace) -> None:
    def execute(case: FileCase, failures: Failures) -> None:
        with example_folder(workspace) as folder:
            data = case.spec.write(folder)
            argv, outputs = file_case_argv(case, workspace, data, folder)
            outcome = judge_run(case.command, run_cli(argv), folder, outputs)
        check(f"cli:{case.command}", repr(case), judge_file_case(case, outcome), failures)

    fuzz(file_cases(), execute, ci_examples=150)


# -- model files ---------------------------------------------------------------------------


class _Payload:
    """Unpickling this creates the folder ``marker`` (a harmless stand-in for code)."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self) -> Any:
        return (os.mkdir, (self.marker,))


MODEL_KINDS = (
    "good",
    "truncated",
    "flipped",
    "garbage",
    "empty",
    "directory",
    "missing",
    "data_file",
    "pickle_payload",
    "pickle_dict",
    "npz",
)


@dataclasses.dataclass(frozen=True)
class ModelCase:
    kind: str
    cut: float
    seed: int
    to_file: bool

    def __repr__(self) -> str:
        return (
            f"predict MODEL={self.kind} cut={self.cut:.3f} seed={self.seed} to_file={self.to_file}"
        )


def write_model(case: ModelCase, ws: Workspace, folder: Path) -> tuple[Path, Path]:
    """The model file of ``case`` and the marker its payload would create."""
    path = folder / "model.skops"
    marker = folder / "payload-ran"
    good = ws.model.read_bytes() if ws.model.is_file() else b""
    rng = np.random.default_rng(case.seed)
    if case.kind == "good":
        path.write_bytes(good)
    elif case.kind == "truncated":
        path.write_bytes(good[: int(case.cut * len(good))])
    elif case.kind == "flipped" and good:
        i = int(case.cut * (len(good) - 1))
        path.write_bytes(good[:i] + bytes([good[i] ^ 0x5A]) + good[i + 1 :])
    elif case.kind == "garbage":
        path.write_bytes(rng.bytes(int(case.cut * 500) + 1))
    elif case.kind == "empty":
        path.write_bytes(b"")
    elif case.kind == "directory":
        path.mkdir()
    elif case.kind == "data_file":
        shutil.copy(ws.good, path)
    elif case.kind == "pickle_payload":
        path.write_bytes(pickle.dumps(_Payload(str(marker))))
    elif case.kind == "pickle_dict":
        path.write_bytes(pickle.dumps({"pipeline": None, "feature_names": ["a", "b"]}))
    elif case.kind == "npz":
        np.savez(folder / "model.npz", X=np.eye(2))
        (folder / "model.npz").rename(path)
    return path, marker


def test_model_files(workspace: Workspace) -> None:
    def execute(case: ModelCase, failures: Failures) -> None:
        with example_folder(workspace) as folder:
            model, marker = write_model(case, workspace, folder)
            out = folder / "p.csv"
            argv = ["predict", str(model), str(workspace.good)]
            argv += ["-o", str(out)] if case.to_file else []
            outcome = judge_run(
                "predict", run_cli(argv), folder, {"predictions": out} if case.to_file else {}
            )
            if marker.exists():
                outcome = Outcome(FAILURE, "a model file ran code", "the payload's folder exists")
            elif outcome.kind == CLEAR_ERROR and "model.skops" not in outcome.message:
                outcome = Outcome(FAILURE, "error does not name the model file", outcome.detail)
            elif (
                outcome.kind == CLEAR_ERROR
                and case.kind == "directory"
                and not re.search(r"folder|directory", outcome.message)
            ):
                outcome = Outcome(FAILURE, "a folder reported as another problem", outcome.detail)
        check("cli:predict", repr(case), outcome, failures)

    strategy = st.builds(
        ModelCase,
        kind=st.sampled_from(MODEL_KINDS),
        cut=st.floats(0.0, 1.0),
        seed=st.integers(0, 2**16),
        to_file=st.booleans(),
    )
    fuzz(strategy, execute, ci_examples=40)


# -- option values -------------------------------------------------------------------------

#: Placeholders in option values: {out} the example's folder, {good} the good CSV, {file}
#: an existing file, {dir} an existing folder, {missing} a path in a folder that does not
#: exist, {config} the generated study file.
PATHS = ("{out}/o", "{dir}", "{missing}/o", "", "{file}/o", "{file}")


def _methods() -> tuple[str, ...]:
    from kernelmaps.experiments import method_names

    return tuple(method_names())


def _kernels() -> tuple[str, ...]:
    from kernelmaps.kernels import kernel_names

    return tuple(kernel_names())


def _metrics() -> tuple[str, ...]:
    from kernelmaps.experiments import METRICS

    return tuple(METRICS)


NUMBERS = ("0", "-1", "1", "2", "1e3", "nan", "inf", "", "abc", "99999999999999999999999")

FIT_OPTIONS: dict[str, tuple[str, ...]] = {
    "--n-components": ("16", *NUMBERS, "100000", "1000000000000"),
    "--gamma": ("0.5", "0", "-1", "nan", "inf", "-inf", "1e-300", "1e300", "1e308", "", "abc"),
    "--seed": ("0", "-1", "4294967296", "18446744073709551616", "nan", "", "1.5"),
    "--method": ("rff", *_methods(), "nystroem", "bogus", ""),
    "--model": ("auto", "ridge", "classifier", "bogus"),
    "--target": ("y", "a", "nope", "", "-1"),
    "--subset": ("train", "test", "all", "bogus", ""),
    "--data-home": ("{missing}", "{file}", "{dir}"),
    "-o": PATHS,
}

PREDICT_OPTIONS: dict[str, tuple[str, ...]] = {
    "-o": PATHS,
    "--subset": ("train", "test", "all", "bogus", ""),
    "--data-home": ("{missing}", "{file}", "{dir}"),
    "DATA": ("{good}", "{missing}/x.csv", "{dir}", "{file}", "{npy}", "{extra_column}"),
}

CONFIGS = {
    "garbage": b"\x00\xff not toml \x80",
    "invalid": b"n_components = [8\n",
    "unknown_key": b"x = 1\n",
    "bad_type": b'n_components = "eight"\n',
    "negative": b"n_components = [-8]\n",
    "empty": b"",
    "seeds_zero": b"seeds = 0\n",
    "datasets_int": b"datasets = 5\n",
    "methods_bad": b"[[methods]]\nname = 5\n",
    "huge": b"n_components = [1000000000000]\nseeds = 1\n",
    "minimal": b"n_components = [8]\nseeds = 1\n",
}

COMPARE_OPTIONS: dict[str, tuple[str, ...]] = {
    "--n-components": ("8", *NUMBERS, "1000000000000"),
    "--seeds": ("1", *NUMBERS, "1000000000"),
    "--n-fit": ("20", *NUMBERS, "1000000000"),
    "--n-eval": ("10", *NUMBERS, "1000000000"),
    "--bandwidth": (
        "median",
        "inf",
        "nan",
        "-1",
        "0",
        "1e-300",
        "1e300",
        "percentile",
        "mean_distance",
        "bogus",
        "",
        "1e400",
    ),
    "--metrics": (*_metrics(), "bogus"),
    "--kernel": (*_kernels(), "bogus", ""),
    "--methods": (*_methods(), "bogus", ""),
    "--config": (*(f"{{config:{name}}}" for name in CONFIGS), "{dir}", "{missing}/s.toml"),
    "-o": PATHS,
    "--workers": ("0", "-1", "abc"),
    "--data-home": ("{missing}", "{file}", "{dir}"),
    "--datasets": ("{good}", "{missing}/x.csv", "bogusname", "{dir}", "cpu_act"),
    "--target": ("y", "a", "nope", ""),
}

OPTIONS = {"fit": FIT_OPTIONS, "predict": PREDICT_OPTIONS, "compare": COMPARE_OPTIONS}


@dataclasses.dataclass(frozen=True)
class OptionCase:
    command: str
    options: tuple[tuple[str, str], ...]
    fresh: bool

    def __repr__(self) -> str:
        given = " ".join(f"{k} {v!r}" for k, v in self.options)
        return f"{self.command} {given}" + (" --fresh" if self.fresh else "")


@st.composite
def option_cases(draw: Any) -> OptionCase:
    command = draw(st.sampled_from(("fit", "compare", "predict")))
    pool = OPTIONS[command]
    names = draw(st.lists(st.sampled_from(sorted(pool)), min_size=1, max_size=3, unique=True))
    options = tuple((name, draw(st.sampled_from(pool[name]), label=name)) for name in names)
    return OptionCase(command, options, draw(st.booleans()))


def _fill(value: str, ws: Workspace, folder: Path) -> str:
    """The option value with its placeholders replaced by paths in ``folder``."""
    if value.startswith("{config:"):
        name = value[len("{config:") : -1]
        path = folder / "study.toml"
        path.write_bytes(CONFIGS[name])
        return str(path)
    existing = folder / "existing.txt"
    if "{file}" in value:
        existing.write_text("not a folder\n")
    if "{dir}" in value:
        (folder / "adir").mkdir(exist_ok=True)
    if "{npy}" in value:
        np.save(folder / "rows.npy", np.random.default_rng(0).uniform(size=(4, 3)))
    if "{extra_column}" in value:
        (folder / "extra.csv").write_text("b,a,extra\n0.1,0.2,0.3\n0.4,0.5,0.6\n")
    return (
        value.replace("{out}", str(folder))
        .replace("{good}", str(ws.good))
        .replace("{file}", str(existing))
        .replace("{dir}", str(folder / "adir"))
        .replace("{missing}", str(folder / "no-such-folder"))
        .replace("{npy}", str(folder / "rows.npy"))
        .replace("{extra_column}", str(folder / "extra.csv"))
    )


def option_case_argv(
    case: OptionCase, ws: Workspace, folder: Path
) -> tuple[list[str], dict[str, Path]]:
    given = {name: _fill(value, ws, folder) for name, value in case.options}
    if case.command == "fit":
        out = Path(given.get("-o", str(folder / "m.skops")))
        argv = ["fit", str(ws.good), "--target", given.pop("--target", "y")]
        argv += ["--n-components", given.pop("--n-components", "16")]
        for name, value in given.items():
            argv += [name, value]
        if "-o" not in given:
            argv += ["-o", str(out)]
        return argv, {"model": out}
    if case.command == "predict":
        out_given = given.get("-o")
        argv = ["predict", str(ws.model), given.get("DATA", str(ws.good))]
        argv += ["-o", out_given] if out_given is not None else []
        return argv, {"predictions": Path(out_given)} if out_given is not None else {}
    results = Path(given.get("-o", str(folder / "results")))
    defaults = {
        "--datasets": str(ws.good),
        "--target": "y",
        "--methods": "rff-mc",
        "--n-components": "8",
        "--seeds": "1",
        "--n-fit": "20",
        "--n-eval": "10",
        "-o": str(results),
    }
    if "--config" in given:  # the study's own grid, unless an option overrides it
        for name in ("--methods", "--n-components", "--seeds"):
            defaults.pop(name)
    argv = ["compare"]
    for name, value in (defaults | given).items():
        argv += [name, value]
    argv += ["--no-plot", "-q"] + (["--fresh"] if case.fresh else [])
    return argv, {"results": results}


def test_options(workspace: Workspace) -> None:
    def execute(case: OptionCase, failures: Failures) -> None:
        with example_folder(workspace) as folder:
            argv, outputs = option_case_argv(case, workspace, folder)
            outcome = judge_run(case.command, run_cli(argv), folder, outputs)
        accepted = outcome.kind == CORRECT or outcome.what.startswith("exit 0 but no")
        if accepted and ("-o", "") in case.options:
            outcome = Outcome(FAILURE, "an empty -o accepted", "the output went elsewhere")
        check(f"cli:{case.command}", repr(case), outcome, failures)

    fuzz(option_cases(), execute, ci_examples=150)


# -- resuming from a damaged results folder ------------------------------------------------

LOG_DEFECTS = (
    "none",
    "truncated_line",
    "missing_keys",
    "garbage_line",
    "wrong_types",
    "nan_value",
    "empty",
    "binary",
    "duplicate",
    "not_an_object",
    "log_is_folder",
    "results_json_garbage",
    "results_csv_garbage",
    "output_is_file",
)


@dataclasses.dataclass(frozen=True)
class ResumeCase:
    defect: str
    key: str
    fresh: bool

    def __repr__(self) -> str:
        return f"compare resume defect={self.defect} key={self.key} fresh={self.fresh}"


def damage(case: ResumeCase, results: Path) -> None:
    """Break the finished results folder ``results`` as ``case`` says."""
    log = results / "cells.jsonl"
    text = log.read_text(encoding="utf-8")
    lines = text.splitlines()
    first = lines[0]
    if case.defect == "truncated_line":
        log.write_text(text[: len(text) - len(lines[-1]) // 2 - 1], encoding="utf-8")
    elif case.defect == "missing_keys":
        import json

        record = json.loads(first)
        record.pop(case.key, None)
        log.write_text("\n".join([json.dumps(record), *lines[1:]]) + "\n", encoding="utf-8")
    elif case.defect == "garbage_line":
        log.write_text(text + "{not json\n", encoding="utf-8")
    elif case.defect == "wrong_types":
        import json

        record = json.loads(first)
        record[case.key] = "eight" if case.key != "metrics" else [1, 2]
        log.write_text("\n".join([json.dumps(record), *lines[1:]]) + "\n", encoding="utf-8")
    elif case.defect == "nan_value":
        log.write_text(re.sub(r'"fro_error": [^,}]+', '"fro_error": NaN', text), encoding="utf-8")
    elif case.defect == "empty":
        log.write_text("", encoding="utf-8")
    elif case.defect == "binary":
        log.write_bytes(b"\x00\xff\xfe" + text.encode()[:20])
    elif case.defect == "duplicate":
        log.write_text(text + text, encoding="utf-8")
    elif case.defect == "not_an_object":
        log.write_text("[1, 2, 3]\n" + text, encoding="utf-8")
    elif case.defect == "log_is_folder":
        log.unlink()
        log.mkdir()
    elif case.defect == "results_json_garbage":
        (results / "results.json").write_text("{garbage", encoding="utf-8")
    elif case.defect == "results_csv_garbage":
        (results / "results.csv").write_bytes(b"\xff\xfe\x00garbage")
    elif case.defect == "output_is_file":
        shutil.rmtree(results)
        results.write_text("a file where the output folder should be\n")


def test_resume(workspace: Workspace) -> None:
    def execute(case: ResumeCase, failures: Failures) -> None:
        with example_folder(workspace) as folder:
            results = folder / "results"
            shutil.copytree(workspace.finished, results)
            damage(case, results)
            argv = workspace.compare_args(results) + (["--fresh"] if case.fresh else [])
            outcome = judge_run("compare", run_cli(argv), folder, {"results": results})
        check("cli:compare", repr(case), outcome, failures)

    strategy = st.builds(
        ResumeCase,
        defect=st.sampled_from(LOG_DEFECTS),
        key=st.sampled_from(
            ("metrics", "status", "key", "n_components", "seed", "method", "dataset")
        ),
        fresh=st.sampled_from((False, False, True)),
    )
    fuzz(strategy, execute, ci_examples=40)
