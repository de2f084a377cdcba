"""First-use latency of every feature map: the first call of a fresh process.

With the ``fast`` extra, several maps run kernels compiled by numba (the sines and
cosines, the Walsh-Hadamard transforms, the bin keys, the direct TensorSketch).  numba
compiles a kernel the first time it runs it, which costs seconds, and keeps the machine
code in its on-disk cache for the next processes.  This script measures what a user
waits for, in fresh subprocesses (``time.perf_counter``):

* **first process**: the first ``fit`` + ``transform`` of the map in a process started
  with an empty cache (``NUMBA_CACHE_DIR`` set to a new temporary folder for each map,
  so that each map pays for every kernel it uses);
* **later processes**: the same call in ``--later`` new processes on that cache (median);
* **warm**: a second ``fit`` + ``transform`` in the same process, the work itself;
* **import**: ``import kernelmaps`` (lazy: the maps' modules load on first use), median
  over the processes;
* the kernels the later processes loaded from the cache (hits) and compiled (misses),
  from numba's dispatcher statistics; ``-`` for maps that run no compiled kernel.

Every map of ``kernelmaps.feature_maps`` is measured, those without compiled kernels as
a comparison, on dense float64 and float32 input and, for the maps with compiled
kernels, CSR input (``--quick``: float64 dense only, one later process).

``--default-cache`` leaves ``NUMBA_CACHE_DIR`` alone: numba then caches next to the
installed package (``__pycache__``) or in the user's cache folder, as after
``pip install "kernelmaps[fast]"``; the first process is then cold only on a fresh
install.  ``--python`` runs the processes with another interpreter (e.g. a fresh venv).

Usage::

    python benchmarks/first_call.py [--quick] [--later 3] [--only Fastfood ...]
        [--default-cache] [--python /tmp/venv/bin/python] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

#: map -> constructor arguments (besides random_state); data is non-negative for the chi2 maps
PARAMS: dict[str, dict[str, Any]] = {
    "RandomFourierFeatures": {"n_components": 512},
    "Fastfood": {"n_components": 512},
    "StructuredOrthogonalFeatures": {"n_components": 512},
    "TensorSketch": {"n_components": 512},
    "RandomBinningFeatures": {"n_grids": 64},
    "SkewedChi2Sampler": {"n_components": 512},
    "AdditiveChi2Sampler": {},
    "RandomMaclaurinFeatures": {"n_components": 512},
    "CompactRandomFeatures": {"n_components": 512},
    "Nystroem": {"n_components": 256},
    "IKA": {"n_components": 64},
}


# -- the child process -------------------------------------------------------------------


def _numba_stats() -> dict[str, dict[str, int]]:
    """``kernel -> {"hits": ..., "misses": ...}`` over the compiled kernels loaded so far."""
    stats: dict[str, dict[str, int]] = {}
    for name, module in list(sys.modules.items()):
        if not name.startswith("kernelmaps._numba.") or module is None:
            continue
        for attr, value in vars(module).items():
            dispatchers = getattr(value, "dispatchers", None)
            if callable(dispatchers):  # a kernel of fixed signatures (kernelmaps._numba._jit)
                items = [(f"{attr}[{key}]", d) for key, d in dispatchers().items()]
            elif hasattr(value, "stats") and hasattr(value, "py_func"):  # a numba dispatcher
                items = [(attr, value)]
            else:
                continue
            for label, dispatcher in items:
                hits = sum(dispatcher.stats.cache_hits.values())
                misses = sum(dispatcher.stats.cache_misses.values())
                if hits or misses:
                    stats[f"{name.rsplit('.', 1)[-1]}.{label}"] = {"hits": hits, "misses": misses}
    return stats


def child(name: str, dtype: str, layout: str, n_rows: int) -> dict[str, Any]:
    """One process: import, first fit + transform, a second one; times and cache statistics."""
    import time

    start = time.perf_counter()
    import kernelmaps

    imported = time.perf_counter()
    import numpy as np
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    X = np.abs(rng.standard_normal((n_rows, 20))).astype(dtype)
    if layout == "csr":
        X = sp.csr_matrix(np.where(X > 1.0, X, 0.0))

    def call() -> float:
        t = time.perf_counter()
        cls = getattr(kernelmaps, name)
        seed = {"random_state": 0} if "random_state" in cls().get_params() else {}
        cls(**seed, **PARAMS[name]).fit(X).transform(X)
        return time.perf_counter() - t

    first = call()
    warm = call()
    return {
        "import": imported - start,
        "first": first,
        "warm": warm,
        "numba": _numba_stats(),
    }


# -- the parent ---------------------------------------------------------------------------


def _run(python: str, case: tuple[str, str, str], n_rows: int, env: dict[str, str]) -> dict:
    name, dtype, layout = case
    command = [python, str(Path(__file__).resolve()), "--child", name, dtype, layout, str(n_rows)]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise SystemExit(f"{name} {dtype} {layout}: the process failed: {tail}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _counts(stats: dict[str, dict[str, int]]) -> str:
    if not stats:
        return "-"
    hits = sum(s["hits"] for s in stats.values())
    misses = sum(s["misses"] for s in stats.values())
    return f"{hits}/{misses}"


def measure(case: tuple[str, str, str], args: argparse.Namespace) -> dict[str, Any]:
    """First process on an empty cache, then ``args.later`` processes on that cache."""
    env = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="kernelmaps-first-call-") as cache:
        if not args.default_cache:
            env["NUMBA_CACHE_DIR"] = cache
        runs = [_run(args.python, case, args.rows, env) for _ in range(1 + args.later)]
    first, later = runs[0], runs[1:]
    return {
        "map": case[0],
        "dtype": case[1],
        "input": case[2],
        "first process": first["first"],
        "later processes": statistics.median(r["first"] for r in later) if later else None,
        "warm": statistics.median(r["warm"] for r in runs),
        "import": statistics.median(r["import"] for r in runs),
        "kernels": sorted(first["numba"]),
        "first process hits/misses": _counts(first["numba"]),
        "later hits/misses": _counts(later[-1]["numba"]) if later else "-",
    }


def _cases(args: argparse.Namespace) -> list[tuple[str, str, str]]:
    names = args.only or list(PARAMS)
    dtypes = ["float64"] if args.quick else ["float64", "float32"]
    cases = [(name, dtype, "dense") for name in names for dtype in dtypes]
    if not args.quick:
        sparse = ("RandomFourierFeatures", "TensorSketch", "RandomBinningFeatures")
        cases += [(name, "float64", "csr") for name in names if name in sparse]
    return cases


def _table(rows: list[dict[str, Any]]) -> str:
    head = (
        "| map | dtype | input | first process (s) | later processes (s) | warm (s) "
        "| import (s) | cache hits/misses, later |\n|---|---|---|---:|---:|---:|---:|---|"
    )
    lines = [head]
    for r in rows:
        later = "-" if r["later processes"] is None else f"{r['later processes']:.2f}"
        lines.append(
            f"| {r['map']} | {r['dtype']} | {r['input']} | {r['first process']:.2f} | {later} "
            f"| {r['warm']:.2f} | {r['import']:.2f} | {r['later hits/misses']} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="float64 dense only, 1 later process")
    parser.add_argument("--later", type=int, default=None, help="later processes (default 3)")
    parser.add_argument("--rows", type=int, default=2000, help="rows of the data (default 2000)")
    parser.add_argument("--only", nargs="+", metavar="MAP", choices=list(PARAMS))
    parser.add_argument("--python", default=sys.executable, help="interpreter of the processes")
    parser.add_argument(
        "--default-cache", action="store_true", help="leave NUMBA_CACHE_DIR to the environment"
    )
    parser.add_argument("--json", type=Path, help="also write the rows to this JSON file")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        name, dtype, layout, n_rows = args.child
        print(json.dumps(child(name, dtype, layout, int(n_rows))))
        return 0
    if args.later is None:
        args.later = 1 if args.quick else 3
    version = subprocess.run(
        [args.python, "-c", "import numba; print('numba', numba.__version__)"],
        capture_output=True,
        text=True,
        check=False,
    )
    print(f"# {version.stdout.strip() or 'numba not installed'}; {os.cpu_count()} cores")
    rows = []
    for case in _cases(args):
        row = measure(case, args)
        rows.append(row)
        print(
            f"{row['map']:30s} {row['dtype']:8s} {row['input']:6s}"
            f"  first {row['first process']:6.2f} s"
            f"  later {row['later processes'] or 0:5.2f} s  warm {row['warm']:5.2f} s"
            f"  cache {row['later hits/misses']}  {' '.join(row['kernels'])}",
            flush=True,
        )
    print()
    print(_table(rows))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
