"""Nyström landmarks: uniform, k-means, leverage and randomly pivoted Cholesky, side by side.

Accuracy (the default): the relative kernel approximation error of the Nyström map with
``m`` landmarks chosen by each method, on the kernel matrix ``K`` of the fitted rows
themselves (in-sample, as in the kernel approximation study),

* Frobenius: ``|K - Z Z^T|_F / |K|_F``;
* spectral: ``|K - Z Z^T|_2 / |K|_2`` (``K - Z Z^T`` is positive semidefinite, so its norm
  is its largest eigenvalue, found by Lanczos, ``scipy.sparse.linalg.eigsh``),

as mean and standard error over the seeds.  Methods: ``uniform``, ``kmeans`` (centres,
not data points), ``leverage`` (recursive ridge leverage scores), ``rpcholesky`` (the
blocked, accelerated form, the default of ``landmarks="rpcholesky"``) and
``rpcholesky-1`` (one pivot at a time, ``block_size=1``).  Every method chooses its
landmarks by :func:`kernelmaps.sampling.select_landmarks`, then one
:class:`kernelmaps.Nystroem` with those landmarks gives ``Z``.

Data:

* the six data sets of the kernel approximation study in its protocol (docs/RESULTS.md,
  section 1): ``n`` points (1000; covtype 2000; USPS 400) scaled to the unit hypercube,
  the Gaussian kernel with ``sigma`` the mean distance of the points to their mean
  (``gamma = 1 / (2 sigma^2)``), ``m = 16 ... 256``;
* German credit (UCI Statlog, 1000 x 24, ``german/german_fixed.csv`` in the data home)
  in the setting of Zhang, Tsang & Kwok (2008) as this script reads it: every row, each
  feature scaled to ``[0, 1]``, ``k(x, y) = exp(-|x - y|^2 / s)`` with ``s`` the mean
  squared distance of the points to their mean, ``m`` from 1 % to 10 % of ``n``.

``--time`` adds the fit time (landmark selection plus the Nyström fit; the median of
``--repeats`` rounds, each round fitting every method once, in turn) per cell: run it on
an idle machine.  ``--time-only`` measures the fit times without the errors (no ``n x n``
kernel matrix, no eigensolver).

Run from the repository root (a few minutes per seed on 2 cores)::

    python benchmarks/landmarks.py --data-home ../shared/data --seeds 10 \\
        --output docs/results/landmarks
    python benchmarks/landmarks.py --quick            # a smoke test (seconds)
    python benchmarks/landmarks.py --time --repeats 5 # adds fit times (idle machine!)
    python benchmarks/landmarks.py --time-only --seeds 3 --repeats 5 --output DIR
    python benchmarks/landmarks.py --time-only --datasets covtype --n-fit 100000 \\
        --m 256 1024 --no-german --seeds 1 --repeats 3   # how the fit times scale

Writes ``results.csv`` (one row per data set, method, m and seed) and ``table.md``
(means and standard errors; the significance rule: a method is ahead of another at a
point when their means differ by more than two standard errors of the difference).
"""

from __future__ import annotations

import argparse
import csv
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse.linalg

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import machine_line

from kernelmaps import Nystroem
from kernelmaps.bandwidth import gamma_from_data
from kernelmaps.experiments import DatasetConfig, prepare_data
from kernelmaps.kernels import Gaussian
from kernelmaps.sampling import select_landmarks

#: (name, select_landmarks method, options)
METHODS: list[tuple[str, str, dict[str, Any]]] = [
    ("uniform", "uniform", {}),
    ("kmeans", "kmeans", {}),
    ("leverage", "leverage", {}),
    ("rpcholesky", "rpcholesky", {}),
    ("rpcholesky-1", "rpcholesky", {"block_size": 1}),
]

#: The study's data sets: (name, n points, label)
STUDY = [
    ("flow_cytometry", 1000, "flow cytometry*"),
    ("covtype", 2000, "covtype"),
    ("ijcnn1", 1000, "ijcnn1"),
    ("letter", 1000, "letter"),
    ("fsdd_mfcc39", 1000, "TIMIT* (FSDD MFCC)"),
    ("usps", 400, "usps"),
]
STUDY_M = [16, 32, 64, 128, 256]
GERMAN_M = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]


def study_data(name: str, n: int, data_home: str | None) -> tuple[np.ndarray, float]:
    data = prepare_data(DatasetConfig(name, n_fit=n, n_eval=200, in_sample=True), data_home)
    X = data.X_fit
    return X, gamma_from_data(X, "mean_distance")


def german_data(data_home: str) -> tuple[np.ndarray, float]:
    path = Path(data_home) / "german" / "german_fixed.csv"
    X = np.loadtxt(path, delimiter=",", skiprows=1)[:, :-1]
    lo, hi = X.min(axis=0), X.max(axis=0)
    X = (X - lo) / np.where(hi > lo, hi - lo, 1.0)
    s = float(np.mean(np.sum((X - X.mean(axis=0)) ** 2, axis=1)))
    return X, 1.0 / s


def fit_map(
    X: np.ndarray, kernel: Gaussian, method: str, options: dict[str, Any], m: int, seed: int
) -> Nystroem:
    rng = np.random.default_rng(seed)
    L, _ = select_landmarks(X, m, method, kernel=kernel, rng=rng, **options)
    return Nystroem(kernel, landmarks=L).fit(X)


def errors(K: np.ndarray, Z: np.ndarray, K_norm2: float) -> tuple[float, float]:
    R = K - Z @ Z.T
    fro = float(np.linalg.norm(R) / np.linalg.norm(K))
    top = scipy.sparse.linalg.eigsh(R, k=1, which="LA", tol=1e-8, return_eigenvectors=False)
    return fro, float(max(top[0], 0.0)) / K_norm2


def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    sets: list[tuple[str, np.ndarray, float, list[int]]] = []
    study = STUDY[:2] if args.quick else STUDY
    if args.datasets:
        study = [s for s in study if s[0] in args.datasets]
    grid = args.m or (STUDY_M[:2] if args.quick else STUDY_M)
    for name, n_study, label in study:
        n = 300 if args.quick else args.n_fit or n_study
        X, gamma = study_data(name, n, args.data_home)
        sets.append((label if n == n_study else f"{label} n={n}", X, gamma, grid))
    if not args.no_german:
        X, gamma = german_data(args.data_home)
        sets.append(("German credit (ZTK)", X, gamma, GERMAN_M[:2] if args.quick else GERMAN_M))
    rows: list[dict[str, Any]] = []
    for label, X, gamma, grid in sets:
        kernel = Gaussian(gamma=gamma)
        if not args.time_only:
            K = kernel(X, X)
            K_norm2 = float(np.linalg.eigvalsh(K)[-1])
        for m in grid:
            for seed in range(args.seeds):
                times = fit_times(X, kernel, m, seed, args.repeats) if args.timed else {}
                for name, method, options in METHODS:
                    row: dict[str, Any] = {
                        "dataset": label, "method": name, "m": m, "seed": seed, "gamma": gamma,
                        "n": X.shape[0],
                    }  # fmt: skip
                    if not args.time_only:
                        nys = fit_map(X, kernel, method, options, m, seed)
                        row["fro_error"], row["spectral_error"] = errors(
                            K, nys.transform(X), K_norm2
                        )
                    if times:
                        row["fit_time"] = times[name]
                    rows.append(row)
            print(f"{label} m={m} done", file=sys.stderr, flush=True)
    return rows


def fit_times(X: np.ndarray, kernel: Gaussian, m: int, seed: int, repeats: int) -> dict[str, float]:
    """The median fit time of each method over ``repeats`` rounds, the methods in turn."""
    times: dict[str, list[float]] = {name: [] for name, _, _ in METHODS}
    for _ in range(repeats):
        for name, method, options in METHODS:
            start = time.perf_counter()
            fit_map(X, kernel, method, options, m, seed)
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def summarise(rows: list[dict[str, Any]], metrics: list[str]) -> str:
    names = [name for name, _, _ in METHODS]
    out = []
    for metric in metrics:
        out.append(f"\n### {metric} (mean ± standard error over seeds)\n")
        out.append(
            "| data set | m | " + " | ".join(names) + " | rpcholesky vs uniform / leverage |"
        )
        out.append("|---|---|" + "---|" * len(names) + "---|")
        keys = sorted({(r["dataset"], r["m"]) for r in rows}, key=lambda k: (_order(k[0]), k[1]))
        for dataset, m in keys:
            cells, stats = [], {}
            for name in names:
                values = [
                    r[metric]
                    for r in rows
                    if r["dataset"] == dataset and r["m"] == m and r["method"] == name
                ]
                mean = statistics.fmean(values)
                se = statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else 0
                stats[name] = (mean, se)
                cells.append(f"{mean:.3g} ± {se:.1g}")
            verdict = " / ".join(
                _verdict(stats["rpcholesky"], stats[b]) for b in ("uniform", "leverage")
            )
            out.append(f"| {dataset} | {m} | " + " | ".join(cells) + f" | {verdict} |")
    return "\n".join(out) + "\n"


def _order(dataset: str) -> int:
    labels = [label for _, _, label in STUDY]
    return labels.index(dataset) if dataset in labels else len(labels)


def _verdict(a: tuple[float, float], b: tuple[float, float]) -> str:
    """'better' / 'worse' when the means differ by more than two standard errors."""
    diff, se = a[0] - b[0], math.hypot(a[1], b[1])
    if diff < -2 * se:
        return "better"
    if diff > 2 * se:
        return "worse"
    return "tie"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-home", default="../shared/data")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--output", default=None, help="folder for results.csv and table.md")
    parser.add_argument("--quick", action="store_true", help="two data sets, two m, a smoke test")
    parser.add_argument("--no-german", action="store_true")
    parser.add_argument("--time", action="store_true", help="add fit times (idle machine)")
    parser.add_argument(
        "--time-only", action="store_true", help="fit times without the errors (idle machine)"
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--datasets", nargs="+", help="only these study data sets (by name)")
    parser.add_argument("--n-fit", type=int, help="rows of each study data set (scaling runs)")
    parser.add_argument("--m", type=int, nargs="+", help="landmark counts of the study data sets")
    args = parser.parse_args(argv)
    args.timed = args.time or args.time_only
    if args.quick:
        args.seeds = min(args.seeds, 2)
    rows = run(args)
    metrics = [] if args.time_only else ["fro_error", "spectral_error"]
    metrics += ["fit_time"] if args.timed else []
    table = summarise(rows, metrics)
    header = f"Machine: {machine_line()}\nSeeds: {args.seeds}\n"
    print(header + table)
    if args.output:
        folder = Path(args.output)
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / "results.csv", "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        (folder / "table.md").write_text(
            "# Nyström landmarks: uniform, k-means, leverage, RPCholesky\n\n"
            "`python benchmarks/landmarks.py` (see its docstring for the protocol).\n\n"
            + header
            + table
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
