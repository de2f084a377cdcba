"""
Nyström landmarks: uniform, k-means, leverage scores, RPCholesky
================================================================

The Nyström method approximates the kernel matrix through ``m`` landmarks,
``K ~ K_nm K_mm^+ K_mn``; its error depends on where the landmarks are. This example
compares four choices of :class:`~kernelmaps.Nystroem`'s ``landmarks``:

* ``"uniform"``: rows drawn uniformly (Williams and Seeger, 2001);
* ``"kmeans"``: the centres of a k-means clustering (Zhang, Tsang and Kwok, 2008);
* ``"leverage"``: rows drawn by recursive ridge leverage scores (Musco and Musco, 2017);
* ``"rpcholesky"``: randomly pivoted Cholesky (Chen, Epperly, Tropp and Webber, 2022).

The protocol is that of the kernel approximation study: 1000 rows of each data set,
scaled to the unit hypercube, the Gaussian kernel with the mean-distance bandwidth, and
the relative Frobenius error ``|K - Z Z^T|_F / |K|_F`` of the kernel matrix of those
same rows, over five seeds.
"""

from kernelmaps.experiments import (
    DatasetConfig,
    ExperimentConfig,
    MethodConfig,
    format_table,
    run_experiment,
)
from kernelmaps.plotting import plot_error_curves

# %%
# The experiment
# --------------
config = ExperimentConfig(
    datasets=[DatasetConfig(name, n_fit=1000, in_sample=True) for name in ("letter", "covtype")],
    methods=[
        MethodConfig("nystroem-uniform", label="uniform"),
        MethodConfig("nystroem-kmeans", label="k-means"),
        MethodConfig("nystroem-leverage", label="leverage scores"),
        MethodConfig("nystroem-rpcholesky", label="RPCholesky"),
    ],
    n_components=[16, 32, 64, 128, 256],
    seeds=5,
    metrics=["fro_error", "fit_time"],
)
result = run_experiment(config)
print(f"{result.n_cells} cells, {len(result.failures)} failed")

# %%
# The errors, mean and standard deviation over the seeds
# -------------------------------------------------------
# ``kernelmaps.experiments.format_table`` prints one line per data set and method.
print(format_table(result.rows, "fro_error"))

# %%
# The price of the choice: the fit time (landmark selection and the Nyström fit), in
# seconds; single runs of small fits, so read the orders of magnitude only.
print(format_table(result.rows, "fit_time"))

# %%
# The figure
# ----------
# :func:`~kernelmaps.plotting.plot_error_curves` returns a
# :class:`matplotlib.figure.Figure`; ``fig.savefig("errors.png")`` (or ``path=``) writes it.
fig = plot_error_curves(result, "fro_error", title="Nyström landmarks, Gaussian kernel")

# %%
# k-means centres give the smallest error at every ``m`` on both data sets: a centre
# summarises a whole cluster, which no single row can. Among the choices of rows,
# randomly pivoted Cholesky is ahead of uniform sampling at every ``m``, and the gap
# grows with ``m``; leverage scores are no better than uniform sampling with few
# landmarks and fall between the two at the largest ``m``. The uniform draw is the
# cheapest fit; at these sizes every choice takes well under a second.
