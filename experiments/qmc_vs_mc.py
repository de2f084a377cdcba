"""Quasi-Monte Carlo vs Monte Carlo random Fourier features: relative spectral error of the
Gaussian kernel matrix against the number of features, on two real data sets.

Yang, Sindhwani, Avron and Mahoney (2014) report that Halton / Sobol' frequencies give
smaller errors than Monte Carlo ones at the same number of features; orthogonal random
features (Yu et al. 2016) are shown alongside.  The error is measured on 1000 held-out
rows (the maps are data-independent; 200 other rows give the bandwidth by the
mean-distance rule), features standardised, 5 seeds (scrambling seeds for QMC).  The
configuration is ``experiments/qmc_vs_mc.toml``.  Run from the repository root::

    python experiments/qmc_vs_mc.py

Writes docs/results/qmc_vs_mc/{results.csv,results.json,figure.png,table.md}.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from run_study import run_study

from kernelmaps.experiments import ExperimentConfig, ExperimentResult, format_table


def draw(results: Any, out: Path) -> None:
    """The spectral error figure, from a result or a saved ``results.json`` (whose
    configuration tells the methods behind the labels MC, QMC Halton, ...)."""
    from kernelmaps import plotting

    plotting.plot_error_curves(
        results,
        metric="spectral_error",
        path=out / "figure.png",
        title="Random Fourier features: relative spectral error",
    )


def report(result: ExperimentResult, config: ExperimentConfig, out: Path) -> str:
    """The spectral error figure (:func:`draw`); spectral and Frobenius tables."""
    draw(result, out)
    text = format_table(result.rows, "spectral_error")
    text += "\n\n" + format_table(result.rows, "fro_error")
    (out / "table.md").write_text("```\n" + text + "\n```\n", encoding="utf-8")
    return text


if __name__ == "__main__":
    sys.exit(run_study(name="qmc_vs_mc", report=report))
