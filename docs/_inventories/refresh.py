"""Write the intersphinx inventories that the documentation build reads.

The build reaches no network, so the inventories of the projects the documentation links
to are stored here, one ``<project>.inv`` per entry of ``intersphinx_mapping`` in
``docs/conf.py``.  Two ways to write them::

    python docs/_inventories/refresh.py            # the projects' published inventories
    python docs/_inventories/refresh.py --subset   # only the names below (no network)

The first downloads each project's ``objects.inv`` (every object it documents): run it
where the internet is reachable and commit the files.  The second writes the names the
documentation refers to, listed below with their address under the project's root, in
the same format; add a name here when the build reports it as a broken reference.
"""

from __future__ import annotations

import argparse
import urllib.request
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: Each project's documentation root (as in ``intersphinx_mapping``) and its inventory.
ROOTS = {
    "python": "https://docs.python.org/3/",
    "numpy": "https://numpy.org/doc/stable/",
    "scipy": "https://docs.scipy.org/doc/scipy/",
    "sklearn": "https://scikit-learn.org/stable/",
    "dask": "https://docs.dask.org/en/stable/",
    "matplotlib": "https://matplotlib.org/stable/",
}

_NUMPY = "reference/generated/{name}.html#{name}"
_SCIPY = "reference/generated/{name}.html#{name}"
_SKLEARN = "modules/generated/{name}.html#{name}"
_DASK = "generated/{name}.html#{name}"

#: ``project: [(name, role, address), ...]``; an address of None follows the project's
#: pattern for generated API pages.
SUBSET: dict[str, list[tuple[str, str, str | None]]] = {
    "python": [
        ("contextvars.ContextVar", "py:class", "library/contextvars.html#contextvars.ContextVar"),
        ("pathlib.Path", "py:class", "library/pathlib.html#pathlib.Path"),
        ("os.PathLike", "py:class", "library/os.html#os.PathLike"),
        (
            "concurrent.futures.Executor",
            "py:class",
            "library/concurrent.futures.html#concurrent.futures.Executor",
        ),
        (
            "concurrent.futures.Executor.shutdown",
            "py:method",
            "library/concurrent.futures.html#concurrent.futures.Executor.shutdown",
        ),
        ("ValueError", "py:exception", "library/exceptions.html#ValueError"),
        ("MemoryError", "py:exception", "library/exceptions.html#MemoryError"),
        ("OSError", "py:exception", "library/exceptions.html#OSError"),
        ("ImportError", "py:exception", "library/exceptions.html#ImportError"),
        ("UserWarning", "py:exception", "library/exceptions.html#UserWarning"),
    ],
    "numpy": [
        ("numpy.ndarray", "py:class", None),
        ("numpy.dtype", "py:class", None),
        ("numpy.linalg.matrix_rank", "py:function", None),
        ("numpy.linalg.eigh", "py:function", None),
        ("numpy.percentile", "py:function", None),
        (
            "numpy.random.Generator",
            "py:class",
            "reference/random/generator.html#numpy.random.Generator",
        ),
        (
            "numpy.random.SeedSequence",
            "py:class",
            "reference/random/bit_generators/generated/numpy.random.SeedSequence.html"
            "#numpy.random.SeedSequence",
        ),
        (
            "numpy.random.default_rng",
            "py:function",
            "reference/random/generator.html#numpy.random.default_rng",
        ),
    ],
    "scipy": [
        ("scipy.linalg.eigh", "py:function", None),
        ("scipy.linalg.cholesky", "py:function", None),
        ("scipy.linalg.solve_triangular", "py:function", None),
        ("scipy.sparse.linalg.eigsh", "py:function", None),
        ("scipy.sparse.csr_matrix", "py:class", None),
        ("scipy.sparse.csr_array", "py:class", None),
        ("scipy.stats.qmc", "py:module", "reference/stats.qmc.html#module-scipy.stats.qmc"),
        ("scipy.stats.qmc.Sobol", "py:class", None),
        ("scipy.stats.qmc.Halton", "py:class", None),
        ("scipy.fft.rfft", "py:function", None),
    ],
    "sklearn": [
        (f"sklearn.{name}", role, None)
        for name, role in [
            ("base.BaseEstimator", "py:class"),
            ("base.TransformerMixin", "py:class"),
            ("base.clone", "py:function"),
            ("calibration.CalibratedClassifierCV", "py:class"),
            ("calibration.calibration_curve", "py:function"),
            ("gaussian_process.GaussianProcessRegressor", "py:class"),
            ("exceptions.ConvergenceWarning", "py:class"),
            ("exceptions.NotFittedError", "py:class"),
            ("gaussian_process.kernels.Matern", "py:class"),
            ("kernel_approximation.AdditiveChi2Sampler", "py:class"),
            ("kernel_approximation.Nystroem", "py:class"),
            ("kernel_approximation.PolynomialCountSketch", "py:class"),
            ("kernel_approximation.RBFSampler", "py:class"),
            ("kernel_approximation.SkewedChi2Sampler", "py:class"),
            ("kernel_ridge.KernelRidge", "py:class"),
            ("linear_model.BayesianRidge", "py:class"),
            ("linear_model.LogisticRegression", "py:class"),
            ("linear_model.Ridge", "py:class"),
            ("linear_model.RidgeCV", "py:class"),
            ("linear_model.RidgeClassifier", "py:class"),
            ("linear_model.RidgeClassifierCV", "py:class"),
            ("linear_model.SGDClassifier", "py:class"),
            ("metrics.brier_score_loss", "py:function"),
            ("metrics.log_loss", "py:function"),
            ("metrics.pairwise.additive_chi2_kernel", "py:function"),
            ("metrics.pairwise.chi2_kernel", "py:function"),
            ("metrics.pairwise.cosine_similarity", "py:function"),
            ("metrics.pairwise.laplacian_kernel", "py:function"),
            ("metrics.pairwise.linear_kernel", "py:function"),
            ("metrics.pairwise.polynomial_kernel", "py:function"),
            ("metrics.pairwise.rbf_kernel", "py:function"),
            ("metrics.pairwise.sigmoid_kernel", "py:function"),
            ("model_selection.GridSearchCV", "py:class"),
            ("model_selection.KFold", "py:class"),
            ("pipeline.Pipeline", "py:class"),
            ("pipeline.make_pipeline", "py:function"),
            ("preprocessing.StandardScaler", "py:class"),
            ("set_config", "py:function"),
            ("svm.LinearSVC", "py:class"),
            ("svm.SVC", "py:class"),
            ("utils.class_weight.compute_class_weight", "py:function"),
        ]
    ]
    + [
        (
            "sklearn.gaussian_process.GaussianProcessRegressor.sample_y",
            "py:method",
            "modules/generated/sklearn.gaussian_process.GaussianProcessRegressor.html"
            "#sklearn.gaussian_process.GaussianProcessRegressor.sample_y",
        )
    ],
    "matplotlib": [
        ("matplotlib.axes.Axes.plot", "py:method", None),
        ("matplotlib.figure.Figure", "py:class", "api/figure_api.html#matplotlib.figure.Figure"),
    ],
    "dask": [
        ("dask.array.Array", "py:class", None),
        ("dask.array.from_array", "py:function", None),
    ],
}

_MATPLOTLIB = "api/_as_gen/{name}.html#{name}"
_PATTERNS = {
    "numpy": _NUMPY,
    "scipy": _SCIPY,
    "sklearn": _SKLEARN,
    "dask": _DASK,
    "matplotlib": _MATPLOTLIB,
}


def inventory(project: str, entries: list[tuple[str, str, str | None]]) -> bytes:
    """A Sphinx inventory (format version 2) of ``entries``."""
    lines = []
    for name, role, address in sorted(entries):
        uri = address or _PATTERNS[project].format(name=name)
        if uri.endswith(f"#{name}"):
            uri = uri[: -len(name)] + "$"
        lines.append(f"{name} {role} 1 {uri} -\n")
    header = (
        "# Sphinx inventory version 2\n"
        f"# Project: {project}\n# Version: \n"
        "# The remainder of this file is compressed using zlib.\n"
    )
    return header.encode() + zlib.compress("".join(lines).encode())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subset", action="store_true",
                        help="write the listed names only, without the network")  # fmt: skip
    args = parser.parse_args()
    for project, root in ROOTS.items():
        target = HERE / f"{project}.inv"
        if args.subset:
            data = inventory(project, SUBSET[project])
        else:
            with urllib.request.urlopen(root + "objects.inv", timeout=60) as response:
                data = response.read()
        target.write_bytes(data)
        print(f"{target.name}: {len(data)} bytes")


if __name__ == "__main__":
    main()
