"""Structured random features (Fastfood, SORF) against dense random Fourier features.

At equal output dimension ``D`` on wide inputs, for the Gaussian kernel:

* maps: ``Fastfood`` and ``StructuredOrthogonalFeatures`` (each with the numba and the
  numpy engine), dense ``RandomFourierFeatures`` (``sampler="mc"`` and
  ``"orthogonal"``) and scikit-learn's ``RBFSampler``;
* time: ``transform`` of ``--n-time`` rows (``time.perf_counter``), the maps alternated
  in one process after one warm-up call each, median of ``--repeats`` runs, reported
  with the ratio to RBFSampler;
  fit time once (the orthogonal sampler's QR of ``d x d`` blocks is not free);
* accuracy: relative Frobenius error ``|K - Z Z^T|_F / |K|_F`` on ``--n-error`` rows,
  mean ± std over ``--error-seeds`` seeds;
* flops per row: dense ``2 d F`` (``F`` frequencies: ``D/2`` for cos/sin pairs,
  ``D`` for RBFSampler's cos+phase), Fastfood ``2 B d log2 d``, SORF ``3 B d log2 d``
  additions (``B = ceil(F / d)`` blocks, ``d`` the padded dimension).

Data: MNIST (``<data-home>/mnist/mnist_train_part0.npz``, pixels / 255, d = 784, padded
to 1024 by the structured maps) at ``D = --n-components`` and over a sweep of ``D``;
then synthetic Gaussian data over a sweep of ``d`` at fixed ``D``.  ``gamma`` is the
inverse median squared distance (median heuristic).

Usage: python benchmarks/structured_vs_dense.py [--data-home ../shared/data]
    [--n-time 2000] [--n-error 2000] [--n-components 8192] [--repeats 3]
    [--out docs/results/structured_vs_dense.md]
"""

from __future__ import annotations

import argparse
import csv
import math
import platform
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from _harness import kernel_error, thread_pools, time_alternating, timed
from sklearn.kernel_approximation import RBFSampler
from sklearn.metrics.pairwise import euclidean_distances

import kernelmaps
from kernelmaps import Fastfood, RandomFourierFeatures, StructuredOrthogonalFeatures
from kernelmaps.feature_maps._hadamard import next_power_of_two
from kernelmaps.kernels import Gaussian

REPO = Path(__file__).resolve().parents[1]

Factory = Callable[[float, int, int], Any]


def _factory(cls: type, **extra: Any) -> Factory:
    """``(gamma, D, seed) -> cls(gamma=gamma, n_components=D, random_state=seed, **extra)``."""
    return lambda g, D, s: cls(gamma=g, n_components=D, random_state=s, **extra)


#: name -> (factory, engine); the structured maps with each engine, the dense ones as they are
MAPS: dict[str, tuple[Factory, str | None]] = {
    f"{name} ({engine})": (_factory(cls), engine)
    for name, cls in (("Fastfood", Fastfood), ("SORF", StructuredOrthogonalFeatures))
    for engine in ("numba", "numpy")
} | {
    "RFF mc": (_factory(RandomFourierFeatures), None),
    "RFF orthogonal": (_factory(RandomFourierFeatures, sampler="orthogonal"), None),
    "sklearn RBFSampler": (_factory(RBFSampler), None),
}
# the engine only matters to the structured maps; one error row per estimator
ERROR_MAPS = ["Fastfood (numba)", "SORF (numba)", "RFF mc", "RFF orthogonal", "sklearn RBFSampler"]


def load_mnist(data_home: Path) -> np.ndarray:
    path = data_home / "mnist" / "mnist_train_part0.npz"
    if not path.exists():
        raise SystemExit(f"MNIST not found at {path}; pass --data-home (see its README.md).")
    return np.load(path)["X"].astype(np.float64) / 255.0


def median_gamma(X: np.ndarray, rng: np.random.Generator) -> float:
    S = X[rng.choice(len(X), min(len(X), 1000), replace=False)]
    sq = euclidean_distances(S, squared=True)[np.triu_indices(len(S), k=1)]
    return 1.0 / float(np.median(sq))


def flops_per_row(name: str, d_in: int, D: int) -> float:
    d = next_power_of_two(d_in)
    F = D if "RBFSampler" in name else D - D // 2
    blocks = -(-F // d)
    if name.startswith("Fastfood"):
        return 2.0 * blocks * d * math.log2(d)
    if name.startswith("SORF"):
        return 3.0 * blocks * d * math.log2(d)
    return 2.0 * d_in * F


def _engine(engine: str | None) -> Any:
    return kernelmaps.config_context(engine=engine)


def _in_engine(name: str, call: Callable[[], Any]) -> Callable[[], Any]:
    """``call`` run with the engine of map ``name``."""

    def run() -> Any:
        with _engine(MAPS[name][1]):
            return call()

    return run


def time_maps(
    X: np.ndarray, gamma: float, D: int, names: list[str], repeats: int
) -> dict[str, dict[str, float]]:
    fitted = {name: MAPS[name][0](gamma, D, 0) for name in names}
    fit_times = {
        name: timed(_in_engine(name, lambda est=est: est.fit(X[:10])))[0]
        for name, est in fitted.items()
    }
    calls = {
        name: _in_engine(name, lambda est=est: est.transform(X)) for name, est in fitted.items()
    }
    # warm-up: numba compilation, caches; then the maps alternated, A/B/A/B
    times = time_alternating(calls, repeats)
    return {
        name: {
            "fit_s": fit_times[name],
            "transform_s": times[name].median,
            "spread_s": times[name].spread,
        }
        for name in names
    }


def kernel_errors(
    X: np.ndarray, gamma: float, D: int, names: list[str], seeds: int
) -> dict[str, tuple[float, float]]:
    kernel = Gaussian(gamma=gamma)
    out = {}
    for name in names:
        factory, engine = MAPS[name]
        errs = []
        for seed in range(seeds):
            with _engine(engine):
                errs.append(kernel_error(factory(gamma, D, seed).fit(X), X, kernel))
        out[name] = (statistics.mean(errs), statistics.stdev(errs) if seeds > 1 else 0.0)
    return out


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-home", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--n-time", type=int, default=2000, help="rows transformed per timing")
    parser.add_argument("--n-error", type=int, default=2000, help="rows of the kernel error")
    parser.add_argument("--n-components", type=int, default=8192)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--error-seeds", type=int, default=3)
    parser.add_argument("--sweep-D", type=int, nargs="*", default=[1024, 4096, 16384])
    parser.add_argument("--sweep-d", type=int, nargs="*", default=[64, 256, 1024, 4096])
    parser.add_argument("--sweep-d-components", type=int, default=4096)
    parser.add_argument("--out", type=Path, default=REPO / "docs/results/structured_vs_dense.md")
    return parser.parse_args(argv)


def compare(
    args: argparse.Namespace,
    data: str,
    D: int,
    X_time: np.ndarray,
    X_err: np.ndarray,
    gamma: float,
) -> list[dict[str, Any]]:
    """One row per map: times on ``X_time``, kernel error on ``X_err``, flops per row."""
    names = list(MAPS)
    d_in = X_time.shape[1]
    timing = time_maps(X_time, gamma, D, names, args.repeats)
    errors = kernel_errors(X_err, gamma, D, ERROR_MAPS, args.error_seeds)
    base = timing["sklearn RBFSampler"]["transform_s"]
    rows = []
    for name in names:
        t = timing[name]
        err = errors.get(name) or errors.get(name.replace("(numpy)", "(numba)"))
        rows.append(
            {
                "data": data,
                "d": d_in,
                "D": D,
                "map": name,
                "fit_s": round(t["fit_s"], 4),
                "transform_s": round(t["transform_s"], 4),
                "spread_s": round(t["spread_s"], 4),
                "us_per_row": round(1e6 * t["transform_s"] / len(X_time), 1),
                "speedup_vs_RBFSampler": round(base / t["transform_s"], 2),
                "Mflop_per_row": round(flops_per_row(name, d_in, D) / 1e6, 2),
                "rel_fro_error": "" if err is None else f"{err[0]:.4f} ± {err[1]:.4f}",
            }
        )
        print(rows[-1], flush=True)
    return rows


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    rng = np.random.default_rng(0)
    mnist = load_mnist(args.data_home)
    gamma = median_gamma(mnist, rng)
    X_time = mnist[: args.n_time]
    X_err = mnist[rng.choice(len(mnist), args.n_error, replace=False)]
    rows = compare(args, "MNIST", args.n_components, X_time, X_err, gamma)
    for D in args.sweep_D:
        if args.n_components != D:
            rows += compare(args, "MNIST", D, X_time, X_err, gamma)
    for d in args.sweep_d:
        Xs = rng.standard_normal((args.n_time, d))
        # gamma = 1 / (2 d): kernel values around exp(-1), as on real data
        X_err = Xs[: min(1000, args.n_error)]
        rows += compare(args, "Gaussian", args.sweep_d_components, Xs, X_err, 1.0 / (2.0 * d))
    write(args, rows, gamma)


def write(args: argparse.Namespace, rows: list[dict[str, Any]], gamma: float) -> None:
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out.with_suffix(".csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    header = list(rows[0])
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(str(r[h]) for h in header) + " |" for r in rows),
    ]
    blas = "; ".join(f"{key}: {value}" for key, value in thread_pools().items())
    meta = (
        f"Machine: {platform.machine()} {platform.processor() or ''}, Python "
        f"{platform.python_version()}, numpy {np.__version__}; BLAS: {blas}.  "
        f"MNIST gamma (median heuristic) = {gamma:.5g}; timing rows = {args.n_time}, "
        f"error rows = {args.n_error}, error seeds = {args.error_seeds}, "
        f"repeats = {args.repeats}."
    )
    args.out.with_suffix(".table.md").write_text(meta + "\n\n" + "\n".join(lines) + "\n")
    print(meta)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
