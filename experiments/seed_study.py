"""Reproduction of Deshmukh's kernel approximation study on its six data sets.

RFF vs QMC RFF, Nyström (uniform) vs Nyström (k-means), RMFM vs CRFM: the relative
Frobenius error of the kernel matrix of n points (in-sample, as in the study) against the
number of features L / landmarks m / D, Gaussian kernel with the bandwidth set by the mean
distance of the points to their mean, polynomial kernel (x.y)^2, data scaled to the unit
hypercube, 5 runs.  The later methods (orthogonal RFF, leverage-score Nyström,
TensorSketch, IKA, random binning on the Laplacian kernel) run alongside.

Stand-ins (the originals cannot be had): the flow-cytometry data of the study is replaced by
a FACSCalibur recording (6 channels); TIMIT's 39-d MFCC frames by the MFCC frames of the
Free Spoken Digit Dataset.  Run from the repository root::

    python experiments/seed_study.py [--data-home ../shared/data] [--seeds 5]

Writes docs/results/seed_study/{results.csv,results.json,figure.png,figure_all.png,table.md}.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kernelmaps.experiments import (
    DatasetConfig,
    ExperimentConfig,
    MethodConfig,
    method_names,
    run_experiment,
    summarize,
)

REPO = Path(__file__).resolve().parents[1]

# (name, n points as in the study, label in the table, stand-in?)
DATASETS = [
    ("flow_cytometry", 1000, "flow cytometry*", True),
    ("covtype", 2000, "covtype", False),
    ("ijcnn1", 1000, "ijcnn1", False),
    ("letter", 1000, "letter", False),
    ("fsdd_mfcc39", 1000, "TIMIT* (FSDD MFCC)", True),
    ("usps", 400, "usps", False),
]
SEED_PAIRS = ["rff-mc", "rff-sobol", "nystroem-uniform", "nystroem-kmeans", "rmfm", "crfm"]
EXTRA = ["rff-orthogonal", "nystroem-leverage", "tensorsketch", "ika", "binning"]
GRID = [16, 32, 64, 128, 256]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-home", default=str(REPO.parent / "shared" / "data"))
    parser.add_argument("--output", default=str(REPO / "docs" / "results" / "seed_study"))
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args(argv)

    available = set(method_names())
    methods = [MethodConfig(m) for m in SEED_PAIRS + EXTRA if m in available]
    missing = [m for m in SEED_PAIRS + EXTRA if m not in available]
    if missing:
        print(f"not registered, left out: {', '.join(missing)}", file=sys.stderr)
    config = ExperimentConfig(
        name="seed-study",
        datasets=[
            # the bundled covtype / ijcnn1 / letter are samples of the same data; the
            # study's USPS and the stand-ins come from the data home
            DatasetConfig(name, n_fit=n, n_eval=200, in_sample=True, label=label)
            for name, n, label, _ in DATASETS
        ],
        methods=methods,
        n_components=GRID,
        seeds=args.seeds,
        metrics=["fro_error", "fit_time"],
        bandwidth="mean_distance",
        data_home=args.data_home,
    )
    result = run_experiment(config, args.output)
    for f in result.failures:
        print(f"failed: {f}", file=sys.stderr)
    out = Path(args.output)
    from kernelmaps import plotting

    plotting.plot_error_curves(
        result.rows,
        path=out / "figure.png",
        methods=[m for m in SEED_PAIRS if m in available],
        title="Relative Frobenius error of the kernel matrix (mean, band: min-max over seeds)",
    )
    plotting.plot_error_curves(
        result.rows,
        path=out / "figure_all.png",
        title="All methods (same data, same rule)",
    )
    _write_table(result.rows, out / "table.md", args.seeds)
    print(f"{result.n_cells} cells ({result.n_computed} computed); wrote {out}")
    return 0


def _write_table(rows: list[dict], path: Path, n_seeds: int) -> None:
    summary = summarize(rows, "fro_error")
    lines = [
        f"Relative Frobenius error, mean ± std over {n_seeds} seeds (* = stand-in data set).",
        "",
        "| data set | method | " + " | ".join(f"D={d}" for d in GRID) + " |",
        "|---|---|" + "---|" * len(GRID),
    ]
    keys: list[tuple[str, str]] = []
    for s in summary:
        if (s["dataset"], s["method"]) not in keys:
            keys.append((s["dataset"], s["method"]))
    cells = {(s["dataset"], s["method"], s["n_components"]): s for s in summary}
    for ds, m in keys:
        vals = []
        for d in GRID:
            s = cells.get((ds, m, d))
            vals.append("–" if s is None else f"{s['mean']:.4f} ± {s['std']:.4f}")
        lines.append(f"| {ds} | {m} | " + " | ".join(vals) + " |")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
