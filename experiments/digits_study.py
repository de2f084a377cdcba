"""Reproduction of the digits study: RBF SVC, linear SVC, and random Fourier features /
Nyström + linear SVC on scikit-learn's ``load_digits(n_class=9)``.

The protocol is that of the study (scikit-learn's kernel approximation example): pixels
divided by 16 and centred, the first half of the 1617 images for training and the second
half for testing, ``gamma = 0.2``, D = 30, 60, ..., 270 features, a linear SVC on the
features.  Random Fourier features are the cos + phase map of the study (Monte Carlo), with
the QMC (Sobol') and orthogonal variants alongside; 5 seeds each.  Run from the
repository root::

    python experiments/digits_study.py

Writes docs/results/digits_study/{results.csv,figure.png,table.md}.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.datasets import load_digits
from sklearn.pipeline import make_pipeline
from sklearn.svm import SVC, LinearSVC
from threadpoolctl import threadpool_limits

from kernelmaps import Nystroem, RandomFourierFeatures
from kernelmaps.experiments import RESULT_COLUMNS, summarize

REPO = Path(__file__).resolve().parents[1]
GAMMA = 0.2
GRID = [30 * k for k in range(1, 10)]


def _maps(D: int, seed: int) -> dict[str, object]:
    rff = {"gamma": GAMMA, "n_components": D, "random_state": seed}
    return {
        "RFF (cos+phase, MC)": RandomFourierFeatures(variant="cos_phase", **rff),
        "RFF (cos/sin, Sobol')": RandomFourierFeatures(sampler="sobol", **rff),
        "RFF (cos/sin, orthogonal)": RandomFourierFeatures(sampler="orthogonal", **rff),
        "Nyström (uniform)": Nystroem(gamma=GAMMA, n_components=D, random_state=seed),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default=str(REPO / "docs" / "results" / "digits_study"))
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args(argv)
    with threadpool_limits(1):  # small problems: threaded BLAS only adds contention
        return _run(args)


def _row(method: str, D: int, seed: int, metric: str, value: float, kernel: str = "rbf",
         gamma: float | str = GAMMA) -> dict:  # fmt: skip
    return {"experiment": "digits-study", "dataset": "digits (9 classes)", "method": method,
            "kernel": kernel, "gamma": gamma, "n_components": D, "seed": seed,
            "metric": metric, "value": value}  # fmt: skip


def _split() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The study's data: pixels / 16, centred; the first half trains, the second tests."""
    digits = load_digits(n_class=9)
    data = digits.data / 16.0
    data -= data.mean(axis=0)
    n = len(data)
    return data[: n // 2], digits.target[: n // 2], data[n // 2 :], digits.target[n // 2 :]


def _fit_and_score(model: Any, split: tuple[np.ndarray, ...]) -> tuple[float, float]:
    """Test accuracy and fit seconds of ``model``."""
    X_train, y_train, X_test, y_test = split
    t0 = time.perf_counter()
    model.fit(X_train, y_train)
    seconds = time.perf_counter() - t0
    return float(model.score(X_test, y_test)), seconds


def _feature_rows(split: tuple[np.ndarray, ...], seeds: int) -> list[dict]:
    """Accuracy and fit time of every map + linear SVC, for every D and seed."""
    rows = []
    for D in GRID:
        for seed in range(seeds):
            for method, fmap in _maps(D, seed).items():
                model = make_pipeline(fmap, LinearSVC(random_state=42))
                score, seconds = _fit_and_score(model, split)
                rows.append(_row(method, D, seed, "fit_time", seconds))
                rows.append(_row(method, D, seed, "accuracy", score))
    return rows


def _write_csv(path: Path, rows: list[dict], baselines: dict[str, tuple[float, float]]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(RESULT_COLUMNS))
        writer.writeheader()
        writer.writerows(rows)
        for name, (score, seconds) in baselines.items():
            rbf = "RBF" in name
            for metric, value in (("accuracy", score), ("fit_time", seconds)):
                writer.writerow(_row(name, 0, 0, metric, value, "rbf" if rbf else "linear",
                                     GAMMA if rbf else ""))  # fmt: skip


def _write_figure(path: Path, rows: list[dict], baselines: dict[str, tuple[float, float]]) -> None:
    from kernelmaps import plotting

    fig = plotting.plot_score_curves(rows, title="digits, n_class=9: test accuracy")
    ax = fig.axes[0]
    ax.set_xscale("linear")
    for (name, (score, _)), style in zip(baselines.items(), ("--", ":"), strict=True):
        ax.axhline(score, color="black", linestyle=style, linewidth=1, label=name)
    ax.legend(fontsize="small", loc="lower right")
    for legend in fig.legends:
        legend.remove()
    fig.savefig(path, dpi=110)


def _table(rows: list[dict], baselines: dict[str, tuple[float, float]], seeds: int) -> str:
    summary = {(s["method"], s["n_components"]): s for s in summarize(rows, "accuracy")}
    times = {(s["method"], s["n_components"]): s for s in summarize(rows, "fit_time")}
    methods = list(_maps(30, 0))
    lines = [
        f"Test accuracy, mean ± std over {seeds} seeds (fit time in seconds below).",
        "",
        f"RBF SVC: {baselines['RBF SVC'][0]:.4f} ({baselines['RBF SVC'][1]:.3f} s); "
        f"linear SVC: {baselines['linear SVC'][0]:.4f} ({baselines['linear SVC'][1]:.3f} s)",
        "",
        "| D | " + " | ".join(methods) + " |",
        "|---|" + "---|" * len(methods),
    ]
    for D in GRID:
        cells = [
            f"{summary[(m, D)]['mean']:.4f} ± {summary[(m, D)]['std']:.4f} "
            f"({times[(m, D)]['mean']:.3f} s)"
            for m in methods
        ]
        lines.append(f"| {D} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _run(args: argparse.Namespace) -> int:
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    split = _split()
    baselines = {
        name: _fit_and_score(model, split)
        for name, model in [
            ("RBF SVC", SVC(gamma=GAMMA)),
            ("linear SVC", LinearSVC(random_state=42)),
        ]
    }
    rows = _feature_rows(split, args.seeds)
    _write_csv(out / "results.csv", rows, baselines)
    _write_figure(out / "figure.png", rows, baselines)
    text = _table(rows, baselines, args.seeds)
    (out / "table.md").write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
