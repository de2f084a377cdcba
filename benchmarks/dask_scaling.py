"""Scaling out on Dask: overhead against numpy, a fit beyond memory, FALKON on a cluster.

Every part runs on a ``distributed.LocalCluster`` of ``--workers`` worker processes with one
thread each (BLAS one thread per worker, as the nanny sets it), next to the same fit on
numpy in this process (row-block threads and BLAS on every core), timed with
``time.perf_counter``.

Part 1, overhead (``overhead``): ``FeatureRidge(RandomFourierFeatures(D=2048))`` with a
fixed ``alpha`` on ``n = 10^6`` rows of ``d = 28`` (the shape of HIGGS; synthetic
``x ~ N(0, I)``, ``y = sum_j sin(x_j) + noise``), from a numpy array against a Dask array
of 20 chunks persisted on the workers; the two fits alternated, ``--repeats`` rounds; the
ratio of the medians.

Part 2, beyond memory (``beyond-memory``): the same model with ``D = 1024`` on
``n = 2 x 10^7`` rows generated lazily chunk by chunk on the workers (4.5 GB of input whose
features would be 164 GB); rows per second and the peak resident set of every worker
(``ru_maxrss`` of the worker process, read with ``client.run``).

Part 3, FALKON (``nystroem``): ``NystroemKernelRidge(m = 4096)`` on ``n = 4 x 10^6`` rows
(``--nkr-rows``), ``max_iter`` conjugate-gradient iterations (``tol`` tiny so that both run
all of them), local against the cluster: time per fit and per iteration, the peak
resident set of every worker, and the bytes the workers sent one another per iteration.

Part 4, the cost model (printed after the parts that ran): per-worker throughput of the
two passes, from which a cluster's time is estimated as in docs/SCALING.md.

Usage: python benchmarks/dask_scaling.py [--quick] [--workers 2] [--repeats 2]
    [--only overhead beyond-memory nystroem] [--out results.json]
``--quick`` runs tiny shapes in seconds, as a smoke test of the script.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import machine_line, time_alternating

import kernelmaps
from kernelmaps import FeatureRidge, NystroemKernelRidge, RandomFourierFeatures

GAMMA = 1.0 / 28.0


def _target(X: Any, rng_noise: Any) -> Any:
    return np.sin(X).sum(axis=1) + 0.1 * rng_noise


def _numpy_data(n: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    return X, _target(X, rng.standard_normal(n))


def _lazy_data(n: int, d: int, chunk: int, seed: int) -> tuple[Any, Any]:
    """X ~ N(0, I) and y generated on the workers, chunk by chunk (nothing on the client)."""
    import dask.array as da

    rng = da.random.default_rng(seed)
    X = rng.standard_normal((n, d), chunks=(chunk, d))
    noise = rng.standard_normal(n, chunks=chunk)
    return X, da.sin(X).sum(axis=1) + 0.1 * noise


def _worker_peak_rss(client: Any) -> dict[str, float]:
    """Peak resident set (GiB) of every worker process: ``VmHWM``, the high-water mark of
    the process's own memory (``ru_maxrss`` would not do: Linux keeps it across the
    ``fork`` and ``exec`` that start a worker, so it starts at its parent's peak)."""

    def vm_hwm_kib() -> int:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
        return 0

    return {addr: kib / 2**20 for addr, kib in client.run(vm_hwm_kib).items()}


def _worker_sent_bytes(client: Any) -> int:
    def sent(dask_worker: Any) -> int:
        return int(dask_worker.transfer_outgoing_bytes_total)

    return sum(client.run(sent).values())


def _restart(client: Any) -> None:
    """Fresh worker processes, so that their peak resident sets start from zero."""
    client.restart()


def overhead(client: Any, quick: bool, repeats: int) -> dict[str, Any]:
    import dask.array as da
    from distributed import wait

    n, D = (20_000, 256) if quick else (1_000_000, 2048)
    X, y = _numpy_data(n, 28, 0)
    chunk = n // 20
    Xd = da.from_array(X, chunks=(chunk, 28)).persist()
    yd = da.from_array(y, chunks=chunk).persist()
    wait([Xd, yd])

    def model() -> FeatureRidge:
        rff = RandomFourierFeatures(gamma=GAMMA, n_components=D, random_state=0)
        return FeatureRidge(rff, alpha=1.0)

    fits: dict[str, Any] = {}

    def local() -> None:
        fits["numpy"] = model().fit(X, y)

    def on_dask() -> None:
        fits["dask"] = model().fit(Xd, yd)

    # Warm-up on a small slice (imports and compilation on the workers), not timed.
    small = min(n, 20_000)
    model().fit(X[:small], y[:small])
    model().fit(Xd[:small], yd[:small])
    timings = time_alternating({"numpy": local, "dask": on_dask}, repeats, warm_up=False)
    gap = float(np.max(np.abs(fits["numpy"].coef_ - fits["dask"].coef_)))
    ratio = timings["dask"].median / timings["numpy"].median
    out = {
        "n": n,
        "D": D,
        "numpy_s": timings["numpy"].times,
        "dask_s": timings["dask"].times,
        "ratio_dask_over_numpy": ratio,
        "max_coef_difference": gap,
    }
    print(
        f"overhead: n={n} d=28 D={D}: numpy {timings['numpy'].median:.2f} s, "
        f"dask {timings['dask'].median:.2f} s, dask/numpy {ratio:.2f}x "
        f"(max |coef difference| {gap:.1e})"
    )
    return out


def beyond_memory(client: Any, quick: bool) -> dict[str, Any]:
    n, D, chunk = (200_000, 128, 20_000) if quick else (20_000_000, 1024, 250_000)
    _restart(client)
    X, y = _lazy_data(n, 28, chunk, 1)
    rff = RandomFourierFeatures(gamma=GAMMA, n_components=D, random_state=0)
    start = time.perf_counter()
    model = FeatureRidge(rff, alpha=1.0).fit(X, y)
    seconds = time.perf_counter() - start
    peaks = _worker_peak_rss(client)
    out = {
        "n": n,
        "D": D,
        "chunk_rows": chunk,
        "input_gb": n * 28 * 8 / 1e9,
        "features_gb": n * D * 8 / 1e9,
        "seconds": seconds,
        "rows_per_second": n / seconds,
        "worker_peak_rss_gib": peaks,
        "finite": bool(np.all(np.isfinite(model.coef_))),
    }
    print(
        f"beyond memory: n={n} D={D} ({out['input_gb']:.1f} GB in, features "
        f"{out['features_gb']:.0f} GB never stored): {seconds:.1f} s, "
        f"{n / seconds:,.0f} rows/s; worker peak RSS "
        + ", ".join(f"{v:.2f} GiB" for v in peaks.values())
    )
    return out


def nystroem(client: Any, quick: bool, max_iter: int, local_fit: bool = True) -> dict[str, Any]:
    import dask.array as da
    from distributed import wait

    n, m = (50_000, 256) if quick else (4_000_000, 4096)
    X, y = _numpy_data(n, 28, 2)
    params = {"gamma": GAMMA, "n_components": m, "alpha": 1e-3 * n}
    params |= {"max_iter": max_iter, "tol": 1e-14, "random_state": 0}
    local_s, local_rss, local = math.nan, math.nan, None
    if local_fit:
        start = time.perf_counter()
        local = NystroemKernelRidge(**params).fit(X, y)
        local_s = time.perf_counter() - start
        local_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20

    _restart(client)
    chunk = max(1, n // 40)
    Xd = da.from_array(X, chunks=(chunk, 28)).persist()
    yd = da.from_array(y, chunks=chunk).persist()
    wait([Xd, yd])
    sent_before = _worker_sent_bytes(client)
    start = time.perf_counter()
    remote = NystroemKernelRidge(**params).fit(Xd, yd)
    dask_s = time.perf_counter() - start
    sent = _worker_sent_bytes(client) - sent_before
    peaks = _worker_peak_rss(client)
    iterations = max(1, int(remote.n_iter_))
    gap = math.nan if local is None else float(np.max(np.abs(local.dual_coef_ - remote.dual_coef_)))
    out = {
        "n": n,
        "m": m,
        "iterations": iterations,
        "local_s": local_s,
        "dask_s": dask_s,
        "local_per_iteration_s": local_s / max_iter,
        "dask_per_iteration_s": dask_s / iterations,
        "local_process_peak_rss_gib": local_rss,
        "worker_peak_rss_gib": peaks,
        "worker_bytes_sent_per_iteration": sent / iterations,
        "vector_bytes": m * 8,
        "cached_rows_local": None if local is None else int(local.n_cached_rows_),
        "cached_rows_dask": int(remote.n_cached_rows_),
        "max_dual_coef_difference": gap,
    }
    print(
        f"nystroem: n={n} m={m}, {iterations} iterations: local {local_s:.1f} s "
        f"({out['local_per_iteration_s']:.2f} s/it), dask {dask_s:.1f} s "
        f"({out['dask_per_iteration_s']:.2f} s/it); worker peak RSS "
        + ", ".join(f"{v:.2f} GiB" for v in peaks.values())
        + f"; workers sent {sent / iterations / 1e6:.2f} MB per iteration "
        f"(one vector: {m * 8 / 1e3:.0f} kB); max |dual coef difference| {gap:.1e}"
    )
    return out


def cost_model(results: dict[str, Any], workers: int) -> dict[str, Any]:
    """Per-worker throughputs: rows per second of the ridge pass and of one FALKON pass."""
    model: dict[str, Any] = {"workers": workers}
    if "beyond-memory" in results:
        r = results["beyond-memory"]
        model["ridge_rows_per_second_per_worker"] = r["rows_per_second"] / workers
        model["ridge_D"] = r["D"]
    if "nystroem" in results:
        r = results["nystroem"]
        # one iteration: K_nm (K_nm v) for every row, two passes of the matvec
        model["falkon_rows_per_second_per_worker"] = r["n"] / r["dask_per_iteration_s"] / workers
        model["falkon_m"] = r["m"]
        model["falkon_bytes_per_iteration"] = r["worker_bytes_sent_per_iteration"]
    print("cost model: " + json.dumps(model))
    return model


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny shapes: a smoke test")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--max-iter", type=int, default=10)
    parser.add_argument(
        "--no-local-nystroem",
        action="store_true",
        help="skip FALKON's local fit (only the cluster's)",
    )
    parts = ("overhead", "beyond-memory", "nystroem")
    parser.add_argument("--only", nargs="+", choices=parts, default=list(parts))
    parser.add_argument("--out", type=Path, default=None, help="write the results as JSON")
    args = parser.parse_args(argv)

    from distributed import Client, LocalCluster

    print(machine_line())
    print(f"kernelmaps {kernelmaps.__version__}; LocalCluster({args.workers} x 1 thread)")
    results: dict[str, Any] = {}
    with (
        LocalCluster(
            n_workers=args.workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",
            silence_logs=40,
        ) as cluster,
        Client(cluster) as client,
    ):
        if "overhead" in args.only:
            results["overhead"] = overhead(client, args.quick, args.repeats)
        if "beyond-memory" in args.only:
            results["beyond-memory"] = beyond_memory(client, args.quick)
        if "nystroem" in args.only:
            local_fit = not args.no_local_nystroem
            results["nystroem"] = nystroem(client, args.quick, args.max_iter, local_fit)
        results["cost_model"] = cost_model(results, args.workers)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        tmp = args.out.with_suffix(args.out.suffix + ".tmp")
        tmp.write_text(json.dumps(results, indent=2))
        tmp.replace(args.out)


if __name__ == "__main__":
    main()
