"""
Every feature map against the number of features
================================================

One data set, every randomized feature map of the library, each against the kernel it
approximates: the relative Frobenius error ``|K - Z Z^T|_F / |K|_F`` of the kernel
matrix of 1000 rows of the letter data (scaled to the unit hypercube), against the
number of features ``D`` (landmarks ``m`` for Nyström and IKA), over three seeds.

The Gaussian kernel ``exp(-gamma |x - y|^2)`` (``gamma`` by the mean-distance rule) has
the most maps; the others approximate the Laplacian kernel (random binning), the
polynomial kernel ``(x . y)^2`` (random Maclaurin, compact random features,
TensorSketch) and the skewed chi-squared kernel (its random Fourier features). The
additive chi-squared map, :class:`~kernelmaps.AdditiveChi2Sampler`, is deterministic and
its size is set by a number of sample steps, not ``D``: it is not on this axis.
"""

import matplotlib.pyplot as plt

from kernelmaps.experiments import (
    DatasetConfig,
    ExperimentConfig,
    MethodConfig,
    run_experiment,
    summarize,
)
from kernelmaps.plotting import plot_error_curves

# %%
# Two experiments, one per panel
# ------------------------------
# The figure has one panel per data set of the result table, so each group of maps runs
# with its own label for the same rows (the same ``data_seed``, hence the same 1000
# rows).
gaussian = [
    ("rff-mc", "RFF, Monte Carlo (Gaussian)"),
    ("rff-orthogonal", "RFF, orthogonal (Gaussian)"),
    ("rff-sobol", "RFF, QMC Sobol' (Gaussian)"),
    ("fastfood", "Fastfood (Gaussian)"),
    ("sorf", "SORF (Gaussian)"),
    ("nystroem-uniform", "Nyström, uniform (Gaussian)"),
    ("nystroem-kmeans", "Nyström, k-means (Gaussian)"),
    ("nystroem-leverage", "Nyström, leverage scores (Gaussian)"),
    ("nystroem-rpcholesky", "Nyström, RPCholesky (Gaussian)"),
    ("ika", "IKA (Gaussian)"),
]
others = [
    ("binning", "random binning (Laplacian)"),
    ("rmfm", "RMFM ((x . y)^2)"),
    ("crfm", "CRFM ((x . y)^2)"),
    ("tensorsketch", "TensorSketch ((x . y)^2)"),
    ("skewed-chi2", "skewed chi2 RFF (skewed chi2, c = 1)"),
]


def experiment(panel, methods):
    """The study of ``methods`` on the letter rows, labelled ``panel``."""
    return ExperimentConfig(
        datasets=[DatasetConfig("letter", label=panel, n_fit=1000, in_sample=True)],
        methods=[MethodConfig(name, label=label) for name, label in methods],
        n_components=[16, 32, 64, 128, 256, 512],
        seeds=3,
        metrics=["fro_error"],
    )


rows = []
for panel, methods in [("Gaussian kernel", gaussian), ("other kernels", others)]:
    result = run_experiment(experiment(panel, methods))
    print(f"{panel}: {result.n_cells} cells, {len(result.failures)} failed")
    rows += result.rows

# %%
# The table
# ---------
# ``kernelmaps.experiments.summarize`` gives the mean over the seeds of each (panel,
# method, ``D``); here at the smallest and the largest ``D``, with each map's kernel as
# the table records it.
summary = {(s["method"], s["n_components"]): s for s in summarize(rows, "fro_error")}
print(f"{'map (kernel)':<38}{'kernel':<13}{'D = 16':>9}{'D = 512':>9}")
for _, label in gaussian + others:
    first, last = summary[label, 16], summary[label, 512]
    print(f"{label:<38}{first['kernel']:<13}{first['mean']:>9.4f}{last['mean']:>9.4f}")

# %%
# The figure
# ----------
# :func:`~kernelmaps.plotting.plot_error_curves` returns a
# ``matplotlib.figure.Figure``; ``plt.figure(fig)`` hands it to pyplot (matplotlib
# 3.11 or later), which shows it here.
fig = plot_error_curves(rows, "fro_error", title="letter, 1000 rows", ncols=1)
plt.figure(fig)

# %%
# On the Gaussian kernel the maps fall into two groups. The data-independent ones (random
# Fourier features and their structured forms, Fastfood and SORF) decrease about as
# ``D^{-1/2}``; orthogonal, quasi-Monte Carlo and SORF frequencies lower the curve, and
# Fastfood gives up a little accuracy for its ``O(D log d)`` transform. The maps fitted
# on the data (Nyström, IKA) are better at every ``m`` and fall much faster, because the
# spectrum of this kernel matrix decays fast, so the gap grows with ``m``; k-means
# landmarks lead throughout. The errors of maps of different kernels measure different
# approximations and are not comparable with each other.
