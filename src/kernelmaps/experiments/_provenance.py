"""The provenance of a run: what ran, where, when, and with which package versions.

It is written with the results (``results.json``) so that a table can be traced to the
configuration, the seeds, the executor, the machine (platform, processor, BLAS) and the
versions of Python and of the packages that computed it.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
from collections.abc import Iterable
from typing import Any

from .._parallel import threadpool_controller
from ._config import ExperimentConfig
from ._executor import describe_executor, executor_libraries

__all__ = ["now", "provenance"]


def now() -> str:
    """The time in UTC, to the second, in ISO 8601."""
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def provenance(
    config: ExperimentConfig,
    *,
    started: str,
    executor: Any,
    n_cells: int,
    n_computed: int,
    gammas: dict[tuple[str, str], float],
    threads: int | None,
    dimensions: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The provenance of a run of ``config`` that ends now.

    Parameters
    ----------
    config : ExperimentConfig
    started : str
        When the run started (:func:`now`).
    executor : concurrent.futures.Executor or None
        Where the cells ran.
    n_cells, n_computed : int
        Cells of the experiment, and those computed by this run.
    gammas : dict
        The bandwidth chosen for each (data set, kernel).
    threads : int or None
        Threads of the BLAS and OpenMP pools inside a cell.
    dimensions : dict, default=None
        The statistical dimension of each data set
        (:func:`kernelmaps.experiments._dimension.statistical_dimensions`).

    Returns
    -------
    dict
    """
    return {
        "experiment": config.name,
        "started": started,
        "finished": now(),
        "versions": _versions(executor_libraries(executor)),
        "machine": _machine(),
        "executor": describe_executor(executor),
        "seeds": list(config.seeds),
        "config": config.to_dict(),
        "n_cells": n_cells,
        "n_computed": n_computed,
        "n_reused": n_cells - n_computed,
        "gamma": {f"{k[0]}/{k[1]}": v for k, v in gammas.items()},
        "threads_per_cell": threads,
        "statistical_dimension": dimensions or {},
    }


def _versions(extra: Iterable[str] = ()) -> dict[str, str]:
    """The versions of Python, of kernelmaps and its dependencies, and of ``extra``."""
    from importlib import metadata

    out = {"python": platform.python_version()}
    for pkg in ("kernelmaps", "numpy", "scipy", "scikit-learn", "matplotlib", *extra):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = "not installed"
    return out


def _machine() -> dict[str, Any]:
    """The platform, processor, cores and BLAS libraries of this machine."""
    info: dict[str, Any] = {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": platform.processor(),
        "cpu_count": os.cpu_count(),
        "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"),
    }
    info["blas"] = [
        {k: p.get(k) for k in ("internal_api", "version", "num_threads", "architecture")}
        for p in threadpool_controller().info()
    ]
    return info
