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
import resource
import statistics
import subprocess
import sys
import time
import tracemalloc
from typing import Any

import numpy as np
from sklearn.datasets import load_digits
from sklearn.kernel_approximation import PolynomialCountSketch

from kernelmaps import TensorSketch

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


def transform(est: Any, X: np.ndarray, chunk: int | None) -> np.ndarray:
    if chunk is None or chunk >= X.shape[0]:
        return est.transform(X)
    first = est.transform(X[:chunk])
    out = np.empty((X.shape[0], first.shape[1]), dtype=first.dtype)
    out[:chunk] = first
    for i in range(chunk, X.shape[0], chunk):
        out[i : i + chunk] = est.transform(X[i : i + chunk])
    return out


def _peak_rss() -> int:
    """Peak resident set of this process in bytes (``VmHWM``; Linux)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # pragma: no cover


def _reset_peak_rss() -> None:
    """Reset ``VmHWM`` to the current resident set (Linux ``clear_refs`` 5)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:  # pragma: no cover - not Linux
        pass


def probe(args: argparse.Namespace) -> None:
    """Subprocess: peak memory of one transform, printed as JSON."""
    method, dtype, mode = args.probe
    X = make_data(args.n_samples, args.n_features, dtype)
    est = make_map(method, args.degree, args.n_components).fit(X)
    chunk = args.chunk if mode == "chunked" else None
    if mode == "full" and method == "sklearn":
        limit = int(args.memory_limit_gb * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    _reset_peak_rss()
    rss_before = _peak_rss()
    tracemalloc.start()
    result: dict[str, Any] = {}
    try:
        Z = transform(est, X, chunk)
        result["out_dtype"] = str(Z.dtype)
        result["out_bytes"] = Z.nbytes
    except MemoryError as exc:
        result["error"] = f"MemoryError: {exc}"
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    result["traced_peak"] = peak
    result["rss_before"] = rss_before
    result["rss_peak"] = _peak_rss()
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


def main() -> None:
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
    args = parser.parse_args()
    if args.probe:
        probe(args)
        return

    try:
        from threadpoolctl import threadpool_info

        pools = [(p["internal_api"], p["num_threads"]) for p in threadpool_info()]
    except ImportError:  # pragma: no cover - optional
        pools = []
    n, d, D, p = args.n_samples, args.n_features, args.n_components, args.degree
    print(f"n = {n}, d = {d}, D = {D}, degree = {p}; thread pools: {pools}")

    for dtype in DTYPES:
        X = make_data(n, d, dtype)
        maps = {m: make_map(m, p, D).fit(X) for m in ("kernelmaps", "sklearn")}
        chunks = {"kernelmaps": None, "sklearn": args.chunk}
        times: dict[str, list[float]] = {m: [] for m in maps}
        outputs: dict[str, np.ndarray] = {}
        for _ in range(args.repeats):
            for m, est in maps.items():  # alternated A/B in one process
                start = time.perf_counter()
                Z = transform(est, X, chunks[m])
                times[m].append(time.perf_counter() - start)
                outputs[m] = Z[:2000]
                del Z
        K = (X[:2000].astype(np.float64) @ X[:2000].T.astype(np.float64)) ** p
        print(f"\n### {dtype} input\n")
        print("| | kernelmaps TensorSketch | sklearn PolynomialCountSketch |")
        print("|---|---|---|")
        med = {m: statistics.median(t) for m, t in times.items()}
        print(
            f"| transform time (median of {args.repeats}) | {med['kernelmaps']:.2f} s | "
            f"{med['sklearn']:.2f} s (in chunks of {args.chunk} rows) |"
        )
        print(f"| speed-up | {med['sklearn'] / med['kernelmaps']:.1f}x | 1 |")
        print(f"| output dtype | {outputs['kernelmaps'].dtype} | {outputs['sklearn'].dtype} |")
        errs: dict[str, list[float]] = {m: [] for m in maps}
        for seed in range(args.error_seeds):  # the error varies much from seed to seed
            for m in maps:
                est = make_map(m, p, D).set_params(random_state=seed).fit(X[:2000])
                Z = est.transform(X[:2000]).astype(np.float64)
                errs[m].append(float(np.linalg.norm(K - Z @ Z.T) / np.linalg.norm(K)))
        print(
            f"| rel. Frobenius error (2000 rows, mean ± std over {args.error_seeds} seeds) | "
            + " | ".join(f"{np.mean(errs[m]):.4f} ± {np.std(errs[m]):.4f}" for m in maps)
            + " |"
        )
        del X, maps, outputs
        ours = run_probe(args, "kernelmaps", dtype, "full")
        theirs_chunked = run_probe(args, "sklearn", dtype, "chunked")
        theirs_full = run_probe(args, "sklearn", dtype, "full")

        def cell(r: dict[str, Any]) -> str:
            if "error" in r:
                return r["error"][:90]
            return (
                f"traced {gib(r['traced_peak'])}; peak RSS {gib(r['rss_peak'])} "
                f"(before the transform {gib(r['rss_before'])})"
            )

        print(f"| peak memory, all rows in one call | {cell(ours)} | {cell(theirs_full)} |")
        print(f"| peak memory, sklearn in chunks | - | {cell(theirs_chunked)} |")
        if "out_bytes" in ours:
            print(f"| (output array itself) | {gib(ours['out_bytes'])} | |")


if __name__ == "__main__":
    main()
