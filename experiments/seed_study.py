"""Reproduction of Deshmukh's kernel approximation study on its six data sets.

RFF vs QMC RFF, Nyström (uniform) vs Nyström (k-means), RMFM vs CRFM: the relative
Frobenius error of the kernel matrix of n points (in-sample, as in the study) against the
number of features L / landmarks m / D, Gaussian kernel with the bandwidth set by the mean
distance of the points to their mean, polynomial kernel (x.y)^2, data scaled to the unit
hypercube, 10 seeds (the study ran 5).  The later methods (orthogonal RFF, leverage-score Nyström,
TensorSketch, IKA, random binning on the Laplacian kernel) run alongside.

Stand-ins (the originals cannot be had): the flow-cytometry data of the study is replaced by
a FACSCalibur recording (6 channels); TIMIT's 39-d MFCC frames by the MFCC frames of the
Free Spoken Digit Dataset.  The configuration is ``experiments/seed_study.toml``.  Run from
the repository root::

    python experiments/seed_study.py [--data-home ../shared/data] [--seeds 10]

Writes docs/results/seed_study/{results.csv,results.json,figure.png,figure_all.png,table.md}.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from run_study import run_study

from kernelmaps.experiments import ExperimentConfig, ExperimentResult, summarize

#: The study's own methods, in pairs (the main figure); the others run alongside.
SEED_PAIRS = ["rff-mc", "rff-sobol", "nystroem-uniform", "nystroem-kmeans", "rmfm", "crfm"]


def draw(results: Any, out: Path) -> None:
    """The study's figure (its three pairs) and the figure of all methods, from a result
    or a saved ``results.json``: ``draw("docs/results/seed_study/results.json", out)``
    redraws them without running the study again."""
    from kernelmaps import plotting

    plotting.plot_error_curves(
        results,
        path=out / "figure.png",
        methods=SEED_PAIRS,
        title="Relative Frobenius error of the kernel matrix: the study's three pairs",
    )
    plotting.plot_error_curves(
        results, path=out / "figure_all.png", title="All methods (same data, same rule)"
    )


def report(result: ExperimentResult, config: ExperimentConfig, out: Path) -> str:
    """The study's figures (:func:`draw`), and the table of means ± std."""
    draw(result, out)
    _write_table(result.rows, out / "table.md", len(config.seeds), config.n_components)
    return f"{result.n_cells} cells ({result.n_computed} computed); wrote {out}"


def _write_table(rows: list[dict], path: Path, n_seeds: int, grid: list[int]) -> None:
    summary = summarize(rows, "fro_error")
    lines = [
        f"Relative Frobenius error, mean ± std over {n_seeds} seeds (* = stand-in data set).",
        "",
        "| data set | method | " + " | ".join(f"D={d}" for d in grid) + " |",
        "|---|---|" + "---|" * len(grid),
    ]
    keys: list[tuple[str, str]] = []
    for s in summary:
        if (s["dataset"], s["method"]) not in keys:
            keys.append((s["dataset"], s["method"]))
    cells = {(s["dataset"], s["method"], s["n_components"]): s for s in summary}
    for ds, m in keys:
        vals = []
        for d in grid:
            s = cells.get((ds, m, d))
            vals.append("–" if s is None else f"{s['mean']:.4f} ± {s['std']:.4f}")
        lines.append(f"| {ds} | {m} | " + " | ".join(vals) + " |")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(run_study(name="seed_study", report=report))
