"""The tidy result table of a run: built from the cell records, written, read back.

Every cell records each asked metric as one row of a tidy table::

    experiment, dataset, method, kernel, gamma, n_components, seed, metric, value

At the end of a run ``results.csv`` and ``results.json`` (the rows with the configuration
and provenance: package versions, machine, seeds, times) are written, each whole or not
at all (a temporary file renamed over the old one), so a full disk or a kill leaves the
previous tables intact.  :func:`read_results` reads either back.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .._atomic import atomic_write

__all__ = ["RESULT_COLUMNS", "read_results", "tidy", "write_tables"]

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


def tidy(
    experiment: str, records: Iterable[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The rows of the tidy table of ``records``, and the records of the failed cells."""
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


def write_tables(
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
