"""
Every feature map against the number of features
================================================

One data set, every randomized feature map of the library, each against the kernel it
approximates: the relative Frobenius error ``|K - Z Z^T|_F / |K|_F`` of the kernel
matrix of 1000 rows of the letter data (scaled to the unit hypercube), against the
number of features ``D`` (landmarks ``m`` for Nyström and IKA), over four seeds.

The Gaussian kernel ``exp(-gamma |x - y|^2)`` (``gamma`` by the mean-distance rule) has
the most maps; the others approximate the Laplacian kernel (random binning), the
polynomial kernel ``(x . y)^2`` (random Maclaurin, compact random features,
TensorSketch) and the skewed chi-squared kernel (its random Fourier features). The
additive chi-squared map, :class:`~kernelmaps.AdditiveChi2Sampler`, is deterministic and
its size is set by a number of sample steps, not ``D``: it is not on this axis.
"""

from kernelmaps.experiments import DatasetConfig, ExperimentConfig, format_table, run_experiment
from kernelmaps.plotting import plot_error_curves

# %%
# Two experiments, one per panel
# ------------------------------
# The figure has one panel per data set of the result table, so each group of maps runs
# with its own label for the same rows (the same ``data_seed``, hence the same 1000
# rows). Each method is named as in ``kernelmaps methods``; its legend entry gives the
# kernel it approximates.
gaussian = [
    "rff-mc",
    "rff-orthogonal",
    "rff-sobol",
    "fastfood",
    "sorf",
    "nystroem-uniform",
    "nystroem-kmeans",
    "nystroem-leverage",
    "nystroem-rpcholesky",
    "ika",
]
others = ["binning", "rmfm", "crfm", "tensorsketch", "skewed-chi2"]


def experiment(panel, methods):
    """The study of ``methods`` on the letter rows, labelled ``panel``."""
    return ExperimentConfig(
        datasets=[DatasetConfig("letter", label=panel, n_fit=1000, in_sample=True)],
        methods=methods,
        n_components=[16, 32, 64, 128, 256, 512],
        seeds=4,
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
# :func:`~kernelmaps.experiments.format_table` gives the median and the quartiles over
# the seeds of each (panel, method, ``D``), here at the smallest and the largest ``D``,
# with the kernel each map approximates.
print(format_table([r for r in rows if r["n_components"] in (16, 512)], center="median"))

# %%
# The figure
# ----------
# :func:`~kernelmaps.plotting.plot_error_curves` returns a
# :class:`matplotlib.figure.Figure`; ``fig.savefig("errors.png")`` (or ``path=``) writes it.
fig = plot_error_curves(rows, "fro_error", title="letter, 1000 rows", ncols=1)

# %%
# On the Gaussian kernel the maps fall into two groups. The data-independent ones (random
# Fourier features and their structured forms, Fastfood and SORF) decrease about as
# ``D^{-1/2}``; orthogonal, quasi-Monte Carlo and SORF frequencies lower the curve, and
# Fastfood gives up a little accuracy for its ``O(D log d)`` transform. The maps fitted
# on the data (Nyström, IKA) are better at every ``m`` and fall much faster, because the
# spectrum of this kernel matrix decays fast, so the gap grows with ``m``; k-means
# landmarks lead throughout. The errors of maps of different kernels measure different
# approximations and are not comparable with each other.
