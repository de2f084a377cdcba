"""The resumable log of an output folder: one line per finished cell, read back at a resume.

With an output folder, each finished cell is appended at once to ``cells.jsonl`` there
(one JSON line per cell, flushed and synced), so a run that is interrupted (Ctrl-C, a
killed process) and started again with the same folder redoes no finished cell.  A cell is
identified (``Cell.key``) by the data set's settings, the method's settings,
``n_components``, the seed and the shared settings (bandwidth, downstream model); changing
the grid, the seeds or the list of methods reuses every cell already computed.

The log is read back line by line: a last line cut short by a killed process is dropped
(and cut from the file), and a line that is not a valid cell record (a hand-edited log:
invalid JSON, missing keys, values of the wrong type) is skipped with one warning naming
its line number; its cell is computed again.
"""

from __future__ import annotations

import json
import math
import os
import warnings
from pathlib import Path
from typing import Any, TextIO

from .._atomic import describe_os_error
from ..exceptions import OutputWriteError

__all__ = ["CELLS_FILE", "append_cell", "covers", "open_log"]

CELLS_FILE = "cells.jsonl"


def open_log(out_dir: Path | None, resume: bool) -> tuple[TextIO | None, dict[str, dict[str, Any]]]:
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


def append_cell(log: TextIO, record: dict[str, Any]) -> None:
    """Append one finished cell to the log, at once (flushed and synced)."""
    try:
        log.write(json.dumps(record, default=float) + "\n")
        log.flush()
        os.fsync(log.fileno())
    except OSError as exc:
        name = getattr(log, "name", CELLS_FILE)
        raise OutputWriteError(exc.errno, describe_os_error(exc, name)) from None


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
    return record if (problem := _outcome_problem(record)) is None else None, problem or ""


def _outcome_problem(record: dict[str, Any]) -> str | None:
    """What is wrong with the outcome of a record (its status, metrics and warnings), or
    None."""
    if record["status"] == "failed":
        return (
            None if isinstance(record.get("message"), str) else "the failed record has no message"
        )
    if record["status"] != "ok":
        return f"'status' is {record['status']!r}, not 'ok' or 'failed'"
    metrics = record.get("metrics")
    if not isinstance(metrics, dict):
        return "the record has no 'metrics' table"
    for name, value in metrics.items():
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return f"metric {name!r} is {value!r}, not a number"
        if not math.isfinite(value):  # json reads NaN and Infinity; a cell never writes them
            return f"metric {name!r} is {value!r}, not a finite number"
    caught = record.get("warnings", [])
    if not isinstance(caught, list) or not all(isinstance(w, str) for w in caught):
        return "'warnings' is not a list of messages"
    return None


#: Metrics a cell records only for some tasks (which of them depends on the data set).
_TASK_METRICS = frozenset({"accuracy", "rmse", "downstream"})


def covers(record: dict[str, Any], metrics: list[str]) -> bool:
    """Whether a finished cell's record holds every asked metric (a failure: always)."""
    if record.get("status") != "ok":
        return True
    return all(m in record["metrics"] for m in metrics if m not in _TASK_METRICS)
