"""TensorSketch against scikit-learn's PolynomialCountSketch: time, peak memory, accuracy.

Both maps get the same data (``n`` rows of scikit-learn's 64-pixel digits drawn with
replacement, normalized to unit length) and the polynomial kernel ``(x . y)^degree``
(PolynomialCountSketch's defaults gamma=1, coef0=0), at output dimension ``D``, in
float32 and float64:

* time: ``transform`` of all ``n`` rows, median of ``--repeats`` runs, the two libraries
  alternated in one process (``time.perf_counter``).  scikit-learn's transform of all
  rows at once needs ``n * degree * D`` complex128 values (13 GB for the defaults), so
  it is timed on row chunks of ``--chunk`` rows written into one output array, which
  is only faster for it;
* peak memory: each configuration in its own subprocess, with ``tracemalloc`` (numpy
  reports its buffers to it) around the transform, and the peak resident set
  (``VmHWM``, reset just before the transform); scikit-learn's single call on all
  rows runs under an address-space limit of ``--memory-limit-gb`` so that it fails
  cleanly instead of exhausting the machine;
* accuracy: relative Frobenius error ``|K - Z Z^T|_F / |K|_F`` on the first 2000 rows,
  mean ± std over ``--error-seeds`` seeds.

Usage: python benchmarks/tensor_sketch_vs_sklearn.py [--n-samples 100000]
    [--n-features 64] [--n-components 4096] [--degree 2] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from typing import Any

import numpy as np
from _harness import (
    kernel_error,
    limit_address_space,
    machine_line,
    peak_memory,
    peak_rss,
    reset_peak_rss,
    time_alternating,
    transform_chunked,
)
from sklearn.datasets import load_digits
from sklearn.kernel_approximation import PolynomialCountSketch

from kernelmaps import TensorSketch
from kernelmaps.kernels import HomogeneousPolynomial

DTYPES = {"float32": np.float32, "float64": np.float64}


def make_data(n: int, d: int, dtype: str) -> np.ndarray:
    """``n`` rows of scikit-learn's digits (64 pixels), drawn with replacement, normalized.

    Other dimensions ``d`` get standard normal rows instead.
    """
    rng = np.random.default_rng(0)
    if d == 64:
        digits = load_digits().data
        X = digits[rng.integers(0, digits.shape[0], size=n)]
    else:
        X = rng.standard_normal((n, d))
    X = X / np.linalg.norm(X, axis=1, keepdims=True)
    return X.astype(DTYPES[dtype])


def make_map(method: str, degree: int, D: int) -> Any:
    if method == "kernelmaps":
        return TensorSketch(degree=degree, gamma=1.0, coef0=0.0, n_components=D, random_state=0)
    return PolynomialCountSketch(degree=degree, n_components=D, random_state=0)


def probe(args: argparse.Namespace) -> None:
    """Subprocess: peak memory of one transform, printed as JSON."""
    method, dtype, mode = args.probe
    X = make_data(args.n_samples, args.n_features, dtype)
    est = make_map(method, args.degree, args.n_components).fit(X)
    chunk = args.chunk if mode == "chunked" else None
    if mode == "full" and method == "sklearn":
        limit_address_space(args.memory_limit_gb)
    reset_peak_rss()
    result: dict[str, Any] = {"rss_before": peak_rss()}
    try:
        result["traced_peak"], _ = peak_memory(lambda: transform_chunked(est, X, chunk))
    except MemoryError as exc:
        result["error"] = f"MemoryError: {exc}"
    else:
        out_dtype = est.transform(X[:1]).dtype
        result["out_dtype"] = str(out_dtype)
        result["out_bytes"] = X.shape[0] * args.n_components * out_dtype.itemsize
    result["rss_peak"] = peak_rss()
    print(json.dumps(result))


def run_probe(args: argparse.Namespace, method: str, dtype: str, mode: str) -> dict[str, Any]:
    cmd = [
        sys.executable,
        __file__,
        "--probe",
        method,
        dtype,
        mode,
        "--n-samples",
        str(args.n_samples),
        "--n-features",
        str(args.n_features),
        "--n-components",
        str(args.n_components),
        "--degree",
        str(args.degree),
        "--chunk",
        str(args.chunk),
        "--memory-limit-gb",
        str(args.memory_limit_gb),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        tail = done.stderr.strip().splitlines()[-1:] or [f"exit code {done.returncode}"]
        return {"error": tail[0]}
    return dict(json.loads(lines[-1]))


def gib(n_bytes: float) -> str:
    return f"{n_bytes / 2**30:.2f} GiB"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--n-samples", type=int, default=100_000)
    parser.add_argument("--n-features", type=int, default=64)
    parser.add_argument("--n-components", type=int, default=4096)
    parser.add_argument("--degree", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--chunk", type=int, default=10_000)
    parser.add_argument("--memory-limit-gb", type=float, default=10.0)
    parser.add_argument("--error-seeds", type=int, default=5)
    parser.add_argument("--probe", nargs=3, help=argparse.SUPPRESS)
    return parser.parse_args()


def compare_in_process(args: argparse.Namespace, dtype: str) -> None:
    """Print the time, output dtype and kernel error rows of the table of ``dtype``."""
    p, D = args.degree, args.n_components
    X = make_data(args.n_samples, args.n_features, dtype)
    maps = {m: make_map(m, p, D).fit(X) for m in ("kernelmaps", "sklearn")}
    chunks = {"kernelmaps": None, "sklearn": args.chunk}
    calls = {
        m: (lambda est=est, chunk=chunks[m]: transform_chunked(est, X, chunk))
        for m, est in maps.items()
    }
    med = {m: t.median for m, t in time_alternating(calls, args.repeats).items()}
    out_dtypes = {m: est.transform(X[:1]).dtype for m, est in maps.items()}
    print(
        f"| transform time (median of {args.repeats}) | {med['kernelmaps']:.2f} s | "
        f"{med['sklearn']:.2f} s (in chunks of {args.chunk} rows) |"
    )
    print(f"| speed-up | {med['sklearn'] / med['kernelmaps']:.1f}x | 1 |")
    print(f"| output dtype | {out_dtypes['kernelmaps']} | {out_dtypes['sklearn']} |")
    kernel = HomogeneousPolynomial(p)
    errs: dict[str, list[float]] = {m: [] for m in maps}
    for seed in range(args.error_seeds):  # the error varies much from seed to seed
        for m in maps:
            est = make_map(m, p, D).set_params(random_state=seed).fit(X[:2000])
            errs[m].append(kernel_error(est, X, kernel, rows=2000))
    print(
        f"| rel. Frobenius error (2000 rows, mean ± std over {args.error_seeds} seeds) | "
        + " | ".join(f"{np.mean(errs[m]):.4f} ± {np.std(errs[m]):.4f}" for m in maps)
        + " |"
    )


def _memory_cell(r: dict[str, Any]) -> str:
    if "error" in r:
        return str(r["error"])[:90]
    return (
        f"traced {gib(r['traced_peak'])}; peak RSS {gib(r['rss_peak'])} "
        f"(before the transform {gib(r['rss_before'])})"
    )


def report_memory(args: argparse.Namespace, dtype: str) -> None:
    """Print the peak memory rows of the table of ``dtype``, each call in a subprocess."""
    ours = run_probe(args, "kernelmaps", dtype, "full")
    theirs_chunked = run_probe(args, "sklearn", dtype, "chunked")
    theirs_full = run_probe(args, "sklearn", dtype, "full")
    print(
        f"| peak memory, all rows in one call | {_memory_cell(ours)} | "
        f"{_memory_cell(theirs_full)} |"
    )
    print(f"| peak memory, sklearn in chunks | - | {_memory_cell(theirs_chunked)} |")
    if "out_bytes" in ours:
        print(f"| (output array itself) | {gib(ours['out_bytes'])} | |")


def main() -> None:
    args = parse_args()
    if args.probe:
        probe(args)
        return
    n, d, D, p = args.n_samples, args.n_features, args.n_components, args.degree
    print(f"n = {n}, d = {d}, D = {D}, degree = {p}; machine: {machine_line()}")
    for dtype in DTYPES:
        print(f"\n### {dtype} input\n")
        print("| | kernelmaps TensorSketch | sklearn PolynomialCountSketch |")
        print("|---|---|---|")
        compare_in_process(args, dtype)
        report_memory(args, dtype)


if __name__ == "__main__":
    main()
