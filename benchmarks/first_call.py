"""First-use latency of every feature map: the first call of a fresh process.

With the ``fast`` extra, several maps run kernels compiled by numba (the sines and
cosines, the Walsh-Hadamard transforms, the bin keys, the direct TensorSketch).  numba
compiles a kernel the first time it runs it, which costs seconds, and keeps the machine
code in its on-disk cache for the next processes.  This script measures what a user
waits for, in fresh subprocesses (``time.perf_counter``):

* **first process**: from ``import kernelmaps`` to the end of the first ``fit`` +
  ``transform`` of the map, in a process started with an empty cache
  (``NUMBA_CACHE_DIR`` set to a new temporary folder for each map, so that each map
  pays for every kernel it uses), wall time and the CPU time of the process (which
  depends less on what else the machine runs);
* **later processes**: the same in ``--later`` new processes on that cache (median);
* **read-only input**, **Fortran-order input**: one more process each on that cache,
  whose data are read-only (as ``np.load(..., mmap_mode="r")`` gives) or in Fortran
  order (as a pandas DataFrame's ``to_numpy()`` often gives);
* **warm**: a second ``fit`` + ``transform`` in the same process, the work itself;
* **hits/misses**: the kernels a later process loaded from the cache (hits) and
  compiled (misses), from numba's dispatcher statistics; ``-`` for maps that run no
  compiled kernel.

Every map of ``kernelmaps.feature_maps`` is measured, those without compiled kernels as
a comparison, on dense float64 and float32 input and, for the maps with compiled
kernels, CSR input (``--quick``: float64 dense only, one later process).

``--default-cache`` leaves ``NUMBA_CACHE_DIR`` alone: numba then caches where it does
after ``pip install "kernelmaps[fast]"``, next to the installed package (``__pycache__``)
or in the user's cache folder; kernelmaps' compiled files there (``*.nbi``, ``*.nbc``
of its kernel modules, nothing else) are deleted before each map, so that its first
process starts cold.  ``--python`` runs the processes with another interpreter (e.g. a
fresh venv).

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
            if isinstance(value, type):
                continue
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
    """One process: first fit + transform, a second one; times and cache statistics.

    ``layout``: ``dense`` (C order), ``csr``, ``readonly`` (C order, read-only, as
    ``np.load(..., mmap_mode="r")`` gives) or ``fortran`` (as a pandas DataFrame's
    ``to_numpy()`` often gives).
    """
    import time

    start, start_cpu = time.perf_counter(), time.process_time()
    import numpy as np
    import scipy.sparse as sp

    import kernelmaps

    rng = np.random.default_rng(0)
    X = np.abs(rng.standard_normal((n_rows, 20))).astype(dtype)
    if layout == "csr":
        X = sp.csr_matrix(np.where(X > 1.0, X, 0.0))
    elif layout == "readonly":
        X.setflags(write=False)
    elif layout == "fortran":
        X = np.asfortranarray(X)

    def call() -> None:
        cls = getattr(kernelmaps, name)
        seed = {"random_state": 0} if "random_state" in cls().get_params() else {}
        cls(**seed, **PARAMS[name]).fit(X).transform(X)

    call()
    first, first_cpu = time.perf_counter() - start, time.process_time() - start_cpu
    t = time.perf_counter()
    call()
    return {
        "first": first,
        "first cpu": first_cpu,
        "warm": time.perf_counter() - t,
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


#: Prints the folder where numba caches kernelmaps' kernels for the interpreter.
_WHERE = "from kernelmaps._numba import trig; print(trig._sin_cos.stats.cache_path)"
_KERNEL_MODULES = ("binning.", "hadamard.", "sketch.", "trig.")


def _empty_default_cache(python: str) -> None:
    """Delete kernelmaps' compiled files from numba's default cache folder."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    done = subprocess.run([python, "-c", _WHERE], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"cannot find numba's cache folder: {done.stderr.strip()[-300:]}")
    folder = Path(done.stdout.strip().splitlines()[-1])
    for path in folder.glob("*.nb[ic]"):
        if path.name.startswith(_KERNEL_MODULES):
            path.unlink()


_OTHER = ("readonly", "fortran")


def measure(case: tuple[str, str, str], args: argparse.Namespace) -> dict[str, Any]:
    """First process on an empty cache, then ``args.later`` processes on that cache.

    For dense input, two more processes on that cache: read-only data, Fortran order.
    """
    env = dict(os.environ)
    name, dtype, layout = case
    with tempfile.TemporaryDirectory(prefix="kernelmaps-first-call-") as cache:
        if args.default_cache:
            env.pop("NUMBA_CACHE_DIR", None)
            _empty_default_cache(args.python)
        else:
            env["NUMBA_CACHE_DIR"] = cache
        runs = [_run(args.python, case, args.rows, env) for _ in range(1 + args.later)]
        others = {
            kind: _run(args.python, (name, dtype, kind), args.rows, env)
            for kind in (_OTHER if layout == "dense" else ())
        }
    first, later = runs[0], runs[1:]
    return {
        "map": name,
        "dtype": dtype,
        "input": layout,
        "first process": first["first"],
        "first process cpu": first["first cpu"],
        "later processes": statistics.median(r["first"] for r in later) if later else None,
        "later processes cpu": statistics.median(r["first cpu"] for r in later) if later else None,
        **{f"{kind} input": others[kind]["first"] if kind in others else None for kind in _OTHER},
        **{
            f"{kind} hits/misses": _counts(others[kind]["numba"]) if kind in others else "-"
            for kind in _OTHER
        },
        "warm": statistics.median(r["warm"] for r in runs),
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


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _table(rows: list[dict[str, Any]]) -> str:
    head = (
        "| map | dtype | input | first process (s) | CPU | later processes (s) | CPU "
        "| hits/misses | read-only input (s) | hits/misses | Fortran-order input (s) "
        "| hits/misses | warm (s) |\n"
        "|---|---|---|---:|---:|---:|---:|---|---:|---|---:|---|---:|"
    )
    lines = [head]
    for r in rows:
        lines.append(
            f"| {r['map']} | {r['dtype']} | {r['input']} | {_seconds(r['first process'])} "
            f"| {_seconds(r['first process cpu'])} | {_seconds(r['later processes'])} "
            f"| {_seconds(r['later processes cpu'])} | {r['later hits/misses']} "
            f"| {_seconds(r['readonly input'])} | {r['readonly hits/misses']} "
            f"| {_seconds(r['fortran input'])} | {r['fortran hits/misses']} "
            f"| {_seconds(r['warm'])} |"
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
        "--default-cache",
        action="store_true",
        help="numba's default cache folder (kernelmaps' files there deleted before each map)",
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
            f"  first {_seconds(row['first process'])} s"
            f"  later {_seconds(row['later processes'])} s ({row['later hits/misses']})"
            f"  read-only {_seconds(row['readonly input'])} s ({row['readonly hits/misses']})"
            f"  Fortran {_seconds(row['fortran input'])} s ({row['fortran hits/misses']})"
            f"  {' '.join(row['kernels'])}",
            flush=True,
        )
    print()
    print(_table(rows))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
