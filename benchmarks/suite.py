"""Benchmark suite: every feature map of kernelmaps against scikit-learn, side by side.

For each map x dtype x shape the suite reports, from one process:

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
  ``--error-rows`` rows.

It writes ``performance.md`` and ``performance.csv`` into ``--out`` and prints the
table.  ``--quick`` runs tiny shapes in seconds, as a smoke test of the suite itself.

Usage::

    python benchmarks/suite.py [--quick] [--out DIR] [--repeats 3] [--only NAME ...]
        [--data-home ../shared/data]

scikit-learn's PolynomialCountSketch needs ``n * degree * D`` complex128 values for one
call, so it is run on row chunks of 10 000 rows, which only helps it.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import platform
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import sklearn
import sklearn.kernel_approximation as ska

import kernelmaps
from kernelmaps import kernels
from kernelmaps._parallel import n_threads, parallel_rows
from kernelmaps.feature_maps._trig import cos_shifted_into, cos_sin_into

REPO = Path(__file__).resolve().parent.parent


# -- machine ---------------------------------------------------------------------------


def machine_info() -> dict[str, str]:
    """CPU, cores, library versions and the BLAS configuration (threadpoolctl)."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    info = {
        "cpu": cpu,
        "cores available": str(len(os.sched_getaffinity(0))),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": __import__("scipy").__version__,
        "scikit-learn": sklearn.__version__,
        "kernelmaps": kernelmaps.__version__,
        "engine": kernelmaps.get_config()["engine"],
    }
    try:
        import numba

        info["numba"] = f"{numba.__version__} ({numba.get_num_threads()} threads)"
    except ImportError:
        info["numba"] = "not installed"
    try:
        from threadpoolctl import threadpool_info

        for pool in threadpool_info():
            key = f"{pool.get('internal_api')} ({pool.get('prefix')})"
            info[key] = (
                f"{pool.get('version')}, {pool.get('num_threads')} threads, "
                f"architecture {pool.get('architecture')}, {pool.get('threading_layer')}"
            )
    except ImportError:
        info["blas"] = "threadpoolctl not installed"
    for var in ("OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        if var in os.environ:
            info[var] = os.environ[var]
    return info


def _best_time(func: Callable[[], Any], repeats: int = 3, number: int = 1) -> float:
    func()
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            func()
        best = min(best, (time.perf_counter() - start) / number)
    return best


@dataclass
class Rates:
    """Best measured rates of this machine for one dtype."""

    gemm_flops: float  # flop/s
    sincos_pair: float  # s per (sin, cos) pair
    cos: float  # s per cosine
    exp: float  # s per exp
    log: float  # s per log
    first_touch: float  # s per byte of newly allocated memory written once


def measure_rates(dtype: type, quick: bool) -> Rates:
    rng = np.random.default_rng(0)
    gemm = 0.0
    for size in (256, 512) if quick else (2048, 4096):  # the peak: best over two sizes
        A = rng.standard_normal((size, size)).astype(dtype)
        gemm = max(gemm, 2.0 * size**3 / _best_time(lambda A=A: A @ A))
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
        return _best_time(lambda: parallel_rows(func, rows, P.size), number=number) / P.size

    sincos = on_all_cores(lambda r: cos_sin_into(P[r], out[r], 1.0))
    cos = on_all_cores(lambda r: cos_shifted_into(work[r], zeros, 1.0))
    exp = on_all_cores(lambda r: np.exp(neg[r], out=work[r]))
    log = on_all_cores(lambda r: np.log(pos[r], out=work[r]))
    # Writing memory the process has not touched yet costs page faults (and, in a virtual
    # machine, the host's backing of the pages): every transform pays it for its output.
    size_bytes = 1 << (26 if quick else 30)
    touches = []
    for _ in range(3):
        start = time.perf_counter()
        fresh = np.empty(size_bytes // 8)
        fresh.fill(1.0)
        touches.append((time.perf_counter() - start) / size_bytes)
        del fresh
    return Rates(gemm, sincos, cos, exp, log, statistics.median(touches))


# -- cases -----------------------------------------------------------------------------


@dataclass
class Case:
    """One comparison: a map of ours, its scikit-learn counterpart, data and a limit."""

    name: str
    stage: str  # "transform" or "fit"
    shape: str
    data: Callable[[Any], np.ndarray]
    ours: Callable[[], Any]
    theirs: Callable[[], Any] | None
    kernel: kernels.Kernel | None
    limit: Callable[[Rates], float] | None = None
    theirs_chunk: int | None = None
    fit_rows: int | None = None
    notes: list[str] = field(default_factory=list)


def gaussian_data(n: int, d: int, seed: int = 0) -> Callable[[Any], np.ndarray]:
    def make(dtype: Any) -> np.ndarray:
        X = np.random.default_rng(seed).standard_normal((n, d))
        return X.astype(dtype)

    return make


def unit_rows(n: int, d: int) -> Callable[[Any], np.ndarray]:
    def make(dtype: Any) -> np.ndarray:
        X = np.random.default_rng(0).standard_normal((n, d))
        X /= np.linalg.norm(X, axis=1, keepdims=True)
        return X.astype(dtype)

    return make


def histograms(n: int, d: int) -> Callable[[Any], np.ndarray]:
    def make(dtype: Any) -> np.ndarray:
        X = np.random.default_rng(0).exponential(size=(n, d))
        X /= X.sum(axis=1, keepdims=True)
        return X.astype(dtype)

    return make


def mnist_or_wide(n: int, d: int, data_home: str | None) -> tuple[Callable[[Any], np.ndarray], str]:
    """MNIST rows from the data home when available (d = 784), else Gaussian rows."""
    if d == 784 and data_home is not None:
        try:
            from kernelmaps.datasets import load_dataset

            X = load_dataset("mnist", data_home=data_home).X[:n]
            return (lambda dtype: X.astype(dtype)), "MNIST"
        except (OSError, ValueError):
            pass
    return gaussian_data(n, d), "Gaussian"


def build_cases(args: argparse.Namespace) -> list[Case]:
    n, d, D, m = args.n_samples, args.n_features, args.n_components, args.landmarks
    gamma = 1.0 / d
    rbf = kernels.make_kernel("rbf", gamma=gamma)
    shape = f"n={n} d={d} D={D}"
    gemm_pairs = 2.0 * n * d * (D // 2)
    gemm_full = 2.0 * n * d * D
    cases = [
        Case(
            "RandomFourierFeatures cos_sin",
            "transform",
            shape,
            gaussian_data(n, d),
            lambda: kernelmaps.RandomFourierFeatures(gamma=gamma, n_components=D, random_state=0),
            lambda: ska.RBFSampler(gamma=gamma, n_components=D, random_state=0),
            rbf,
            lambda r: gemm_pairs / r.gemm_flops + n * (D // 2) * r.sincos_pair,
            notes=["scikit-learn's RBFSampler is cos+phase; ours is the lower-variance cos/sin"],
        ),
        Case(
            "RandomFourierFeatures cos_phase",
            "transform",
            shape,
            gaussian_data(n, d),
            lambda: kernelmaps.RandomFourierFeatures(
                gamma=gamma, n_components=D, variant="cos_phase", random_state=0
            ),
            lambda: ska.RBFSampler(gamma=gamma, n_components=D, random_state=0),
            rbf,
            lambda r: gemm_full / r.gemm_flops + n * D * r.cos,
        ),
        Case(
            "Nystroem",
            "fit",
            f"n={n} d={d} m={m}",
            gaussian_data(n, d),
            lambda: kernelmaps.Nystroem(gamma=gamma, n_components=m, random_state=0),
            lambda: ska.Nystroem(gamma=gamma, n_components=m, random_state=0),
            rbf,
        ),
        Case(
            "Nystroem",
            "transform",
            f"n={n} d={d} m={m}",
            gaussian_data(n, d),
            lambda: kernelmaps.Nystroem(gamma=gamma, n_components=m, random_state=0),
            lambda: ska.Nystroem(gamma=gamma, n_components=m, random_state=0),
            rbf,
            lambda r: (2.0 * n * m * m + 2.0 * n * d * m) / r.gemm_flops + n * m * r.exp,
        ),
        Case(
            "TensorSketch degree 2",
            "transform",
            shape,
            unit_rows(n, d),
            lambda: kernelmaps.TensorSketch(
                degree=2, gamma=1.0, coef0=0.0, n_components=D, random_state=0
            ),
            lambda: ska.PolynomialCountSketch(
                degree=2, gamma=1.0, coef0=0, n_components=D, random_state=0
            ),
            kernels.make_kernel("polynomial", degree=2, gamma=1.0, coef0=0.0),
            theirs_chunk=10_000,
        ),
        Case(
            "SkewedChi2Sampler",
            "transform",
            shape,
            histograms(n, d),
            lambda: kernelmaps.SkewedChi2Sampler(skewedness=0.01, n_components=D, random_state=0),
            lambda: ska.SkewedChi2Sampler(skewedness=0.01, n_components=D, random_state=0),
            kernels.make_kernel("skewed_chi2", skewedness=0.01),
            lambda r: gemm_full / r.gemm_flops + n * d * r.log + n * D * r.cos,
        ),
        Case(
            "AdditiveChi2Sampler steps=2",
            "transform",
            f"n={n} d={d}",
            histograms(n, d),
            lambda: kernelmaps.AdditiveChi2Sampler(sample_steps=2),
            lambda: ska.AdditiveChi2Sampler(sample_steps=2),
            kernels.make_kernel("additive_chi2"),
        ),
        Case(
            "RandomMaclaurinFeatures (1+x.y)^3",
            "transform",
            shape,
            unit_rows(n, d),
            lambda: kernelmaps.RandomMaclaurinFeatures(
                degree=3, gamma=1.0, coef0=1.0, n_components=D, random_state=0
            ),
            None,
            kernels.make_kernel("polynomial", degree=3, gamma=1.0, coef0=1.0),
        ),
        Case(
            # D / 4 outputs: its up-projection has 4x as many columns, and the
            # Johnson-Lindenstrauss product (n x 4D) @ (4D x D) would dominate the suite.
            "CompactRandomFeatures (1+x.y)^3",
            "transform",
            f"n={n} d={d} D={D // 4}",
            unit_rows(n, d),
            lambda: kernelmaps.CompactRandomFeatures(
                degree=3, gamma=1.0, coef0=1.0, n_components=D // 4, random_state=0
            ),
            None,
            kernels.make_kernel("polynomial", degree=3, gamma=1.0, coef0=1.0),
        ),
        Case(
            "RandomBinningFeatures",
            "transform",
            f"n={n} d={d} grids={args.grids}",
            gaussian_data(n, d),
            lambda: kernelmaps.RandomBinningFeatures(
                gamma=gamma, n_grids=args.grids, random_state=0
            ),
            None,
            kernels.make_kernel("laplacian", gamma=gamma),
        ),
        Case(
            "IKA",
            "transform",
            f"n={n} d={d} m={m // 4}",
            gaussian_data(n, d),
            lambda: kernelmaps.IKA(gamma=gamma, n_components=m // 4, random_state=0),
            None,
            rbf,
            fit_rows=min(n, 20_000),
        ),
    ]
    wide_data, source = mnist_or_wide(args.wide_samples, 784, args.data_home)
    wide_gamma = 1.0 / (784 * (0.1 if source == "MNIST" else 1.0))
    wide_rbf = kernels.make_kernel("rbf", gamma=wide_gamma)
    Dw = args.wide_components
    wide_shape = f"{source} n={args.wide_samples} d=784 D={Dw}"
    for name, extra in [
        ("RandomFourierFeatures", {}),
        ("Fastfood", {}),
        ("StructuredOrthogonalFeatures", {}),
    ]:
        cls = getattr(kernelmaps, name, None)
        if cls is None:
            continue

        def ours(cls: Any = cls, extra: dict[str, Any] = extra) -> Any:
            return cls(gamma=wide_gamma, n_components=Dw, random_state=0, **extra)

        cases.append(
            Case(
                f"{name} (wide)",
                "transform",
                wide_shape,
                wide_data,
                ours,
                lambda: ska.RBFSampler(gamma=wide_gamma, n_components=Dw, random_state=0),
                wide_rbf,
            )
        )
    return cases


# -- running ---------------------------------------------------------------------------


def _transform_chunked(est: Any, X: np.ndarray, chunk: int | None) -> Any:
    if chunk is None or X.shape[0] <= chunk:
        return est.transform(X)
    first = est.transform(X[:chunk])
    out = np.empty((X.shape[0], first.shape[1]), dtype=first.dtype)
    out[:chunk] = first
    for start in range(chunk, X.shape[0], chunk):
        out[start : start + chunk] = est.transform(X[start : start + chunk])
    return out


def _call(case: Case, est: Any, X: np.ndarray, chunk: int | None) -> Callable[[], Any]:
    if case.stage == "fit":
        return lambda: est.fit(X)
    return lambda: _transform_chunked(est, X, chunk)


def _peak_bytes(func: Callable[[], Any]) -> tuple[int, float]:
    """Peak traced memory of one call, and its (indicative) time."""
    tracemalloc.start()
    try:
        start = time.perf_counter()
        result = func()
        seconds = time.perf_counter() - start
        del result
        return tracemalloc.get_traced_memory()[1], seconds
    finally:
        tracemalloc.stop()


def _kernel_error(kernel: kernels.Kernel, est: Any, X: np.ndarray) -> float:
    Z = est.transform(X)
    Z = Z.toarray() if hasattr(Z, "toarray") else np.asarray(Z)
    Z = Z.astype(np.float64)
    K = kernel(X.astype(np.float64))
    return float(np.linalg.norm(K - Z @ Z.T) / np.linalg.norm(K))


def run_case(case: Case, dtype: Any, args: argparse.Namespace, rates: Rates) -> dict[str, Any]:
    X = case.data(dtype)
    X_fit = X[: case.fit_rows] if case.fit_rows else X
    sides: dict[str, Any] = {"ours": case.ours()}
    if case.theirs is not None:
        sides["sklearn"] = case.theirs()
    calls = {}
    for side, est in sides.items():
        if case.stage == "transform":
            est.fit(X_fit)
        chunk = case.theirs_chunk if side == "sklearn" else None
        calls[side] = _call(case, est, X, chunk)
    # The first call of each is a warm-up (compilation, caches) that measures peak memory.
    warm = {side: _peak_bytes(call) for side, call in calls.items()}
    peaks = {side: peak for side, (peak, _) in warm.items()}
    times: dict[str, list[float]] = {side: [] for side in calls}
    # Repeats: --repeats, fewer for calls so slow that the repeats would pass a minute.
    slowest = max(seconds for _, seconds in warm.values())
    repeats = max(1, min(args.repeats, int(args.max_seconds // max(slowest, 1e-9))))
    for _ in range(repeats):
        for side, call in calls.items():
            start = time.perf_counter()
            result = call()
            times[side].append(time.perf_counter() - start)
            del result
    rows = X[: args.error_rows]
    errors = {}
    if case.kernel is not None:
        for side, est in sides.items():
            errors[side] = _kernel_error(case.kernel, est, rows)
    out_cols = getattr(sides["ours"], "n_components", None)
    n_out = sides["ours"].transform(X[:2]).shape[1] if case.stage == "transform" else out_cols
    itemsize = np.dtype(dtype).itemsize
    row: dict[str, Any] = {
        "map": case.name,
        "stage": case.stage,
        "dtype": np.dtype(dtype).name,
        "shape": case.shape,
        "ours_s": statistics.median(times["ours"]),
        "ours_min_s": min(times["ours"]),
        "ours_max_s": max(times["ours"]),
        "ours_peak_mib": peaks["ours"] / 2**20,
        "input_mib": X.nbytes / 2**20,
        "output_mib": (X.shape[0] * n_out * itemsize / 2**20) if case.stage == "transform" else 0,
        "ours_error": errors.get("ours", math.nan),
    }
    if "sklearn" in times:
        row.update(
            sklearn_s=statistics.median(times["sklearn"]),
            sklearn_min_s=min(times["sklearn"]),
            sklearn_max_s=max(times["sklearn"]),
            sklearn_peak_mib=peaks["sklearn"] / 2**20,
            sklearn_error=errors.get("sklearn", math.nan),
        )
        row["speedup"] = row["sklearn_s"] / row["ours_s"]
    if case.limit is not None:
        row["limit_s"] = case.limit(rates)
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


def _fmt(key: str, row: dict[str, Any]) -> str:
    value = row.get(key)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if key in ("ours_s", "sklearn_s"):
        spread = (row[key.replace("_s", "_max_s")] - row[key.replace("_s", "_min_s")]) / 2
        return f"{value:.3g} ± {spread:.2g}"
    if key == "speedup":
        return f"{value:.2f}×"
    if key == "fraction_of_limit":
        return f"{100 * value:.0f} %"
    if key.endswith("_mib"):
        return f"{value:.0f}"
    if key.endswith("error"):
        return f"{value:.4f}"
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


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
    for case in build_cases(args):
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
