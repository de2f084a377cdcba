"""Benchmark suite: every feature map of kernelmaps against scikit-learn, side by side.

For each case (a row of :data:`CASES`) x dtype the suite reports, from one process:

* our time and scikit-learn's time for the same work on the same data (median of
  ``--repeats`` runs, the two alternated, ``time.perf_counter``), their ratio and the
  spread (min-max) of each;
* a machine-limit estimate for the same work and the fraction of it we reach, where
  the work is a matrix product plus elementwise functions: the products at the GEMM
  peak measured here (square 2048 and 4096 products, best of 3) plus the elementwise
  work at the best vectorized rate measured here on cache-resident blocks, all cores;
* peak memory of one call of each (``tracemalloc``, which numpy reports its buffers to),
  next to the size of the input and of the output;
* the kernel approximation error of both, ``|K - Z Z^T|_F / |K|_F`` on the first
  ``--error-rows`` rows (:func:`kernelmaps.metrics.feature_map_error`).

The measuring is that of ``benchmarks/_harness.py``, shared by every benchmark script.
It writes ``performance.md`` and ``performance.csv`` into ``--out`` and prints the
table.  ``--quick`` runs tiny shapes in seconds, as a smoke test of the suite itself.

Usage::

    python benchmarks/suite.py [--quick] [--out DIR] [--repeats 3] [--only NAME ...]
        [--data-home ../shared/data]

scikit-learn's PolynomialCountSketch needs ``n * degree * D`` complex128 values for one
call, so it is run on row chunks of 10 000 rows, which only helps it.  Cases on sparse
input (CSR) have scikit-learn's counterpart only where it accepts sparse input.
"""

from __future__ import annotations

import argparse
import csv
import functools
import inspect
import math
import os
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
import sklearn.kernel_approximation as ska
from _harness import (
    best_time,
    kernel_error,
    machine_info,
    nbytes,
    peak_memory,
    time_alternating,
    timed,
    transform_chunked,
)

import kernelmaps
from kernelmaps import kernels
from kernelmaps._parallel import n_threads, parallel_rows
from kernelmaps.feature_maps._trig import cos_shifted_into, cos_sin_into

REPO = Path(__file__).resolve().parent.parent


# -- machine rates ---------------------------------------------------------------------


@dataclass
class Rates:
    """Best measured rates of this machine for one dtype."""

    gemm_flops: float  # flop/s
    sincos_pair: float  # s per (sin, cos) pair
    cos: float  # s per cosine
    exp: float  # s per exp
    log: float  # s per log
    first_touch: float  # s per byte of newly allocated memory written once


def _first_touch(size_bytes: int) -> float:
    """Seconds per byte to write memory the process has not touched yet (median of 3)."""

    def fill() -> None:
        np.empty(size_bytes // 8).fill(1.0)

    return statistics.median(timed(fill)[0] / size_bytes for _ in range(3))


def measure_rates(dtype: type, quick: bool) -> Rates:
    rng = np.random.default_rng(0)
    gemm = 0.0
    for size in (256, 512) if quick else (2048, 4096):  # the peak: best over two sizes
        A = rng.standard_normal((size, size)).astype(dtype)
        gemm = max(gemm, 2.0 * size**3 / best_time(lambda A=A: A @ A))
    cores = n_threads()
    rows, cols = 256 * cores, 2048  # 4 MiB per core in float64: cache-resident
    P = rng.normal(scale=10.0, size=(rows, cols)).astype(dtype)
    out = np.empty((rows, 2 * cols), dtype=dtype)
    work = P.copy()
    zeros = np.zeros(cols)
    neg = -np.abs(P)
    pos = np.abs(P) + 1
    number = 2 if quick else 20

    def on_all_cores(func: Callable[[slice], None]) -> float:
        return best_time(lambda: parallel_rows(func, rows, P.size), number=number) / P.size

    sincos = on_all_cores(lambda r: cos_sin_into(P[r], out[r], 1.0))
    cos = on_all_cores(lambda r: cos_shifted_into(work[r], zeros, 1.0))
    exp = on_all_cores(lambda r: np.exp(neg[r], out=work[r]))
    log = on_all_cores(lambda r: np.log(pos[r], out=work[r]))
    # Writing memory the process has not touched yet costs page faults (and, in a virtual
    # machine, the host's backing of the pages): every transform pays it for its output.
    touch = _first_touch(1 << (26 if quick else 30))
    return Rates(gemm, sincos, cos, exp, log, touch)


# -- the cases, as data ----------------------------------------------------------------


@dataclass(frozen=True)
class Size:
    """A parameter value taken from the sizes of the run (``--n-components`` etc.)."""

    name: str


N, D, M, GAMMA, GRIDS = Size("n"), Size("D"), Size("m"), Size("gamma"), Size("grids")
D4, M4, FIT_ROWS = Size("D/4"), Size("m/4"), Size("fit_rows")

#: The work of a case in machine rates: (rates, sizes) -> seconds at the machine's limit.
Limit = Callable[[Rates, dict[str, Any]], float]


def _gemm(r: Rates, flops: float) -> float:
    return flops / r.gemm_flops


def _rff_pairs(r: Rates, s: dict[str, Any]) -> float:
    F = s["D"] // 2
    return _gemm(r, 2.0 * s["n"] * s["d"] * F) + s["n"] * F * r.sincos_pair


def _rff_phase(r: Rates, s: dict[str, Any]) -> float:
    return _gemm(r, 2.0 * s["n"] * s["d"] * s["D"]) + s["n"] * s["D"] * r.cos


def _nystroem(r: Rates, s: dict[str, Any]) -> float:
    n, d, m = s["n"], s["d"], s["m"]
    return _gemm(r, 2.0 * n * m * m + 2.0 * n * d * m) + n * m * r.exp


def _skewed(r: Rates, s: dict[str, Any]) -> float:
    n, d, D = s["n"], s["d"], s["D"]
    return _gemm(r, 2.0 * n * d * D) + n * d * r.log + n * D * r.cos


@dataclass(frozen=True)
class Case:
    """One comparison: a map of ours, its scikit-learn counterpart, their data and kernel.

    ``params`` go to both maps (``random_state=0`` is added where accepted), ``extra`` to
    ours only; a :class:`Size` value is replaced by that size of the run.
    """

    name: str
    ours: str  # a class of kernelmaps
    theirs: str | None  # a class of sklearn.kernel_approximation, or None
    params: dict[str, Any]
    kernel: tuple[str, dict[str, Any]] | None
    data: str = "gaussian"  # a key of DATA
    shape: str = "n={n} d={d} D={D}"
    stage: str = "transform"  # or "fit"
    extra: dict[str, Any] = field(default_factory=dict)
    limit: Limit | None = None
    theirs_chunk: int | None = None
    fit_rows: Size | None = None


_RBF = ("rbf", {"gamma": GAMMA})
_POLY3 = ("polynomial", {"degree": 3, "gamma": 1.0, "coef0": 1.0})
_SKEWED = ("skewed_chi2", {"skewedness": 0.01})
_NYSTROEM = {"gamma": GAMMA, "n_components": M}

CASES: list[Case] = [
    Case("RandomFourierFeatures cos_sin", "RandomFourierFeatures", "RBFSampler",
         {"gamma": GAMMA, "n_components": D}, _RBF, limit=_rff_pairs),
    Case("RandomFourierFeatures cos_phase", "RandomFourierFeatures", "RBFSampler",
         {"gamma": GAMMA, "n_components": D}, _RBF, extra={"variant": "cos_phase"},
         limit=_rff_phase),
    Case("Nystroem", "Nystroem", "Nystroem", _NYSTROEM, _RBF, shape="n={n} d={d} m={m}",
         stage="fit"),
    Case("Nystroem", "Nystroem", "Nystroem", _NYSTROEM, _RBF, shape="n={n} d={d} m={m}",
         limit=_nystroem),
    Case("TensorSketch degree 2", "TensorSketch", "PolynomialCountSketch",
         {"degree": 2, "gamma": 1.0, "coef0": 0.0, "n_components": D},
         ("polynomial", {"degree": 2, "gamma": 1.0, "coef0": 0.0}), data="unit_rows",
         theirs_chunk=10_000),
    Case("SkewedChi2Sampler", "SkewedChi2Sampler", "SkewedChi2Sampler",
         {"skewedness": 0.01, "n_components": D}, _SKEWED, data="histograms", limit=_skewed),
    Case("SkewedChi2Sampler (sparse input)", "SkewedChi2Sampler", None,
         {"skewedness": 0.01, "n_components": D}, _SKEWED, data="sparse_histograms"),
    Case("AdditiveChi2Sampler steps=2", "AdditiveChi2Sampler", "AdditiveChi2Sampler",
         {"sample_steps": 2}, ("additive_chi2_pd", {}), data="histograms", shape="n={n} d={d}"),
    Case("AdditiveChi2Sampler steps=2 (sparse input)", "AdditiveChi2Sampler",
         "AdditiveChi2Sampler", {"sample_steps": 2}, ("additive_chi2_pd", {}),
         data="sparse_histograms", shape="n={n} d={d}"),
    Case("AdditiveChi2Sampler steps=3", "AdditiveChi2Sampler", "AdditiveChi2Sampler",
         {"sample_steps": 3}, ("additive_chi2_pd", {}), data="histograms", shape="n={n} d={d}"),
    Case("RandomMaclaurinFeatures (1+x.y)^3", "RandomMaclaurinFeatures", None,
         {"degree": 3, "gamma": 1.0, "coef0": 1.0, "n_components": D}, _POLY3,
         data="unit_rows"),
    # D / 4 outputs: its up-projection has 4x as many columns, and the
    # Johnson-Lindenstrauss product (n x 4D) @ (4D x D) would dominate the suite.
    Case("CompactRandomFeatures (1+x.y)^3", "CompactRandomFeatures", None,
         {"degree": 3, "gamma": 1.0, "coef0": 1.0, "n_components": D4}, _POLY3,
         data="unit_rows", shape="n={n} d={d} D={D/4}"),
    Case("RandomBinningFeatures", "RandomBinningFeatures", None,
         {"gamma": GAMMA, "n_grids": GRIDS}, ("laplacian", {"gamma": GAMMA}),
         shape="n={n} d={d} grids={grids}"),
    Case("IKA", "IKA", None, {"gamma": GAMMA, "n_components": M4}, _RBF,
         shape="n={n} d={d} m={m/4}", fit_rows=FIT_ROWS),
] + [
    Case(f"{name} (wide)", name, "RBFSampler", {"gamma": GAMMA, "n_components": D}, _RBF,
         data="wide", shape="{source} n={n} d={d} D={D}")
    for name in ("RandomFourierFeatures", "Fastfood", "StructuredOrthogonalFeatures")
    if hasattr(kernelmaps, name)
]  # fmt: skip


# -- data ------------------------------------------------------------------------------


def gaussian(n: int, d: int) -> np.ndarray:
    return np.random.default_rng(0).standard_normal((n, d))


def unit_rows(n: int, d: int) -> np.ndarray:
    X = gaussian(n, d)
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def histograms(n: int, d: int) -> np.ndarray:
    X = np.random.default_rng(0).exponential(size=(n, d))
    return X / X.sum(axis=1, keepdims=True)


def sparse_histograms(n: int, d: int) -> sp.csr_matrix:
    """Histograms with the entries below the row's 90th percentile set to zero, CSR."""
    X = histograms(n, d)
    X[np.quantile(X, 0.9, axis=1, keepdims=True) > X] = 0.0
    return sp.csr_matrix(X)


DATA: dict[str, Callable[[int, int], Any]] = {
    "gaussian": gaussian,
    "unit_rows": unit_rows,
    "histograms": histograms,
    "sparse_histograms": sparse_histograms,
}


@functools.lru_cache(maxsize=1)
def _mnist(data_home: str | None) -> np.ndarray | None:
    if data_home is None:
        return None
    try:
        from kernelmaps.datasets import load_dataset

        return np.asarray(load_dataset("mnist", data_home=data_home).X)
    except (OSError, ValueError):
        return None


def mnist_or_gaussian(n: int, data_home: str | None) -> tuple[np.ndarray, str]:
    """MNIST rows from the data home when available (d = 784), else Gaussian rows."""
    X = _mnist(data_home)
    return (gaussian(n, 784), "Gaussian") if X is None else (X[:n], "MNIST")


def run_sizes(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """The sizes of the run: one set for the narrow cases, one for the wide ones."""
    n, d, D, m = args.n_samples, args.n_features, args.n_components, args.landmarks
    narrow = {"n": n, "d": d, "D": D, "m": m, "gamma": 1.0 / d, "grids": args.grids,
              "D/4": D // 4, "m/4": m // 4, "fit_rows": min(n, 20_000)}  # fmt: skip
    _, source = mnist_or_gaussian(1, args.data_home)
    wide_gamma = 1.0 / (784 * (0.1 if source == "MNIST" else 1.0))
    wide = {"n": args.wide_samples, "d": 784, "D": args.wide_components, "gamma": wide_gamma,
            "source": source}  # fmt: skip
    return {"narrow": narrow, "wide": wide}


# -- running ---------------------------------------------------------------------------


def _resolve(params: dict[str, Any], sizes: dict[str, Any]) -> dict[str, Any]:
    return {k: sizes[v.name] if isinstance(v, Size) else v for k, v in params.items()}


def _build(cls: type, params: dict[str, Any]) -> Any:
    if "random_state" in inspect.signature(cls).parameters:
        params = {**params, "random_state": 0}
    return cls(**params)


def make_estimators(case: Case, sizes: dict[str, Any]) -> dict[str, Any]:
    """``{"ours": ..., "sklearn": ...}`` (the latter when the case has a counterpart)."""
    params = _resolve(case.params, sizes)
    sides = {"ours": _build(getattr(kernelmaps, case.ours), {**params, **case.extra})}
    if case.theirs is not None:
        sides["sklearn"] = _build(getattr(ska, case.theirs), params)
    return sides


def case_data(case: Case, dtype: Any, sizes: dict[str, Any], data_home: str | None) -> Any:
    if case.data == "wide":
        X: Any = mnist_or_gaussian(sizes["n"], data_home)[0]
    else:
        X = DATA[case.data](sizes["n"], sizes["d"])
    return X.astype(dtype)


def _calls(case: Case, sides: dict[str, Any], X: Any) -> dict[str, Callable[[], Any]]:
    if case.stage == "fit":
        return {side: (lambda est=est: est.fit(X)) for side, est in sides.items()}
    chunks = {"ours": None, "sklearn": case.theirs_chunk}
    return {
        side: (lambda est=est, chunk=chunks[side]: transform_chunked(est, X, chunk))
        for side, est in sides.items()
    }


def _summary(prefix: str, times: list[float], peak: int) -> dict[str, float]:
    return {
        f"{prefix}_s": statistics.median(times),
        f"{prefix}_min_s": min(times),
        f"{prefix}_max_s": max(times),
        f"{prefix}_peak_mib": peak / 2**20,
    }


def run_case(case: Case, dtype: Any, args: argparse.Namespace, rates: Rates) -> dict[str, Any]:
    sizes = args.sizes["wide" if case.data == "wide" else "narrow"]
    X = case_data(case, dtype, sizes, args.data_home)
    X_fit = X[: sizes[case.fit_rows.name]] if case.fit_rows else X
    sides = make_estimators(case, sizes)
    if case.stage == "transform":
        for est in sides.values():
            est.fit(X_fit)
    calls = _calls(case, sides, X)
    # The first call of each is the warm-up (compilation, caches); it measures peak memory.
    warm = {side: peak_memory(call) for side, call in calls.items()}
    # Repeats: --repeats, fewer for calls so slow that the repeats would pass a minute.
    slowest = max(seconds for _, seconds in warm.values())
    repeats = max(1, min(args.repeats, int(args.max_seconds // max(slowest, 1e-9))))
    timings = time_alternating(calls, repeats, warm_up=False)
    errors = {}
    if case.kernel is not None:
        name, kernel_params = case.kernel
        kernel = kernels.make_kernel(name, **_resolve(kernel_params, sizes))
        for side, est in sides.items():
            errors[side] = kernel_error(est, X, kernel, rows=args.error_rows)
    n_out = sides["ours"].transform(X[:2]).shape[1] if case.stage == "transform" else 0
    row: dict[str, Any] = {
        "map": case.name,
        "stage": case.stage,
        "dtype": np.dtype(dtype).name,
        "shape": case.shape.format(**sizes),
        **_summary("ours", timings["ours"].times, warm["ours"][0]),
        "input_mib": nbytes(X) / 2**20,
        "output_mib": X.shape[0] * n_out * np.dtype(dtype).itemsize / 2**20,
        "ours_error": errors.get("ours", math.nan),
    }
    if "sklearn" in timings:
        row.update(_summary("sklearn", timings["sklearn"].times, warm["sklearn"][0]))
        row["sklearn_error"] = errors.get("sklearn", math.nan)
        row["speedup"] = row["sklearn_s"] / row["ours_s"]
    if case.limit is not None:
        row["limit_s"] = case.limit(rates, sizes)
        row["fraction_of_limit"] = row["limit_s"] / row["ours_s"]
    return row


COLUMNS = [
    ("map", "map"),
    ("stage", "stage"),
    ("dtype", "dtype"),
    ("shape", "shape"),
    ("ours_s", "ours (s)"),
    ("sklearn_s", "scikit-learn (s)"),
    ("speedup", "speed-up"),
    ("limit_s", "limit (s)"),
    ("fraction_of_limit", "of limit"),
    ("ours_peak_mib", "our peak (MiB)"),
    ("sklearn_peak_mib", "sklearn peak (MiB)"),
    ("input_mib", "input (MiB)"),
    ("output_mib", "output (MiB)"),
    ("ours_error", "our error"),
    ("sklearn_error", "sklearn error"),
]


#: How a column is shown, by the end of its key (the times have their own format).
_FORMATS: dict[str, Callable[[float], str]] = {
    "speedup": lambda v: f"{v:.2f}×",
    "fraction_of_limit": lambda v: f"{100 * v:.0f} %",
    "_mib": lambda v: f"{v:.0f}",
    "error": lambda v: f"{v:.4f}",
}


def _fmt(key: str, row: dict[str, Any]) -> str:
    value = row.get(key)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if key in ("ours_s", "sklearn_s"):
        spread = (row[key.replace("_s", "_max_s")] - row[key.replace("_s", "_min_s")]) / 2
        return f"{value:.3g} ± {spread:.2g}"
    form = next((f for end, f in _FORMATS.items() if key.endswith(end)), None)
    if form is not None:
        return form(value)
    return f"{value:.3g}" if isinstance(value, float) else str(value)


def markdown(rows: list[dict[str, Any]], info: dict[str, str], rates: dict[str, Rates]) -> str:
    lines = ["| " + " | ".join(title for _, title in COLUMNS) + " |"]
    lines.append("|" + "---|" * len(COLUMNS))
    for row in rows:
        lines.append("| " + " | ".join(_fmt(key, row) for key, _ in COLUMNS) + " |")
    lines += ["", "Times: median ± half the min-max spread of the repeats.", "", "Machine:", ""]
    lines += [f"- {key}: {value}" for key, value in info.items()]
    lines += [
        "",
        "Measured limits (best of 3; GEMM: square 2048 and 4096; elementwise: cache-resident",
    ]
    lines += ["blocks, all cores):"]
    lines += [""]
    for name, r in rates.items():
        lines.append(
            f"- {name}: GEMM {r.gemm_flops / 1e9:.0f} GFLOP/s; sin+cos pair "
            f"{r.sincos_pair * 1e9:.2f} ns; cos {r.cos * 1e9:.2f} ns; exp {r.exp * 1e9:.2f} ns; "
            f"log {r.log * 1e9:.2f} ns; first write of new memory {1e-9 / r.first_touch:.2f} GB/s"
        )
    return "\n".join(lines) + "\n"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny shapes: a smoke test")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "results" / "performance")
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument(
        "--max-seconds",
        type=float,
        default=60.0,
        help="cut the repeats of a case whose single call is so slow they would pass this",
    )
    parser.add_argument("--only", nargs="*", default=None, help="run maps whose name has these")
    parser.add_argument("--dtypes", nargs="*", default=["float64", "float32"])
    parser.add_argument("--n-samples", type=int, default=None)
    parser.add_argument("--n-features", type=int, default=64)
    parser.add_argument("--n-components", type=int, default=None)
    parser.add_argument("--landmarks", type=int, default=None)
    parser.add_argument("--grids", type=int, default=None)
    parser.add_argument("--wide-samples", type=int, default=None)
    parser.add_argument("--wide-components", type=int, default=None)
    parser.add_argument("--error-rows", type=int, default=None)
    parser.add_argument(
        "--data-home",
        default=os.environ.get("KERNELMAPS_DATA", str(REPO.parent / "shared" / "data")),
        help="data home holding mnist/ (default: $KERNELMAPS_DATA or ../shared/data)",
    )
    args = parser.parse_args(argv)
    full = {
        "repeats": 3,
        "n_samples": 100_000,
        "n_components": 4096,
        "landmarks": 4096,
        "grids": 64,
        "wide_samples": 20_000,
        "wide_components": 8192,
        "error_rows": 2000,
    }
    quick = {
        "repeats": 1,
        "n_samples": 2000,
        "n_components": 256,
        "landmarks": 128,
        "grids": 8,
        "wide_samples": 500,
        "wide_components": 1024,
        "error_rows": 300,
    }
    for key, value in (quick if args.quick else full).items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    if args.data_home is not None and not Path(args.data_home).is_dir():
        args.data_home = None
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    info = machine_info()
    rates = {name: measure_rates(np.dtype(name).type, args.quick) for name in args.dtypes}
    rows = []
    args.sizes = run_sizes(args)
    for case in CASES:
        if args.only and not any(word.lower() in case.name.lower() for word in args.only):
            continue
        for name in args.dtypes:
            row = run_case(case, np.dtype(name).type, args, rates[name])
            rows.append(row)
            print(" | ".join(_fmt(key, row) for key, _ in COLUMNS), flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "performance.md").write_text(markdown(rows, info, rates))
    with open(args.out / "performance.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=sorted({key for row in rows for key in row}))
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {args.out / 'performance.md'} and performance.csv", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
