"""Small instances of every public estimator, for the shared suites.

Every estimator exported by ``kernelmaps`` must appear here (checked by
``test_every_estimator_is_listed``): the scikit-learn estimator checks and the shared
invariant suite run over this table.
"""

from __future__ import annotations

from typing import Any

import kernelmaps

#: name -> list of constructor keyword sets used by the common checks
CHECK_PARAMS: dict[str, list[dict[str, Any]]] = {
    "RandomFourierFeatures": [
        {"n_components": 20, "random_state": 0},
        {"n_components": 20, "variant": "cos_phase", "sampler": "orthogonal", "random_state": 0},
        {"n_components": 32, "sampler": "sobol", "kernel": "laplacian", "random_state": 0},
        {"n_components": 32, "sampler": "sobol", "random_state": 0},
        {
            "n_components": 21,
            "variant": "cos_phase",
            "sampler": "halton",
            "kernel": "matern",
            "random_state": 0,
        },
    ],
    "RandomBinningFeatures": [
        {"n_grids": 10, "random_state": 0},
        {"n_grids": 10, "dense_output": True, "gamma": "scale", "random_state": 0},
    ],
    "Fastfood": [
        {"n_components": 20, "random_state": 0},
        {"n_components": 21, "variant": "cos_phase", "kernel": "matern", "random_state": 0},
    ],
    "StructuredOrthogonalFeatures": [
        {"n_components": 20, "random_state": 0},
        {"n_components": 21, "norms": "fixed", "random_state": 0},
        {"n_components": 20, "variant": "cos_phase", "kernel": "matern", "random_state": 0},
    ],
    "RandomMaclaurinFeatures": [
        {"n_components": 20, "random_state": 0},
        {"n_components": 20, "kernel": "exponential_dot_product", "p": 3.0, "random_state": 0},
    ],
    "CompactRandomFeatures": [
        {"n_components": 10, "degree": 2, "random_state": 0},
        {"n_components": 10, "projection": "sparse", "up_factor": 2, "random_state": 0},
    ],
    "TensorSketch": [
        {"n_components": 16, "random_state": 0},
        {"n_components": 16, "degree": 3, "coef0": 1.0, "gamma": 0.5, "random_state": 0},
    ],
    "AdditiveChi2Sampler": [{}, {"sample_steps": 3}],
    "SkewedChi2Sampler": [{"n_components": 20, "skewedness": 0.5, "random_state": 0}],
    "KernelRidge": [{"alpha": 0.1}, {"kernel": "laplacian", "gamma": 0.5, "alpha": 0.1}],
    "FeatureRidge": [
        {
            "feature_map": kernelmaps.RandomFourierFeatures(n_components=50, random_state=0),
            "alpha": 0.1,
        },
        {"feature_map": kernelmaps.RandomBinningFeatures(n_grids=10, random_state=0), "alpha": 0.1},
        {"feature_map": "passthrough", "alpha": 0.1, "fit_intercept": False},
    ],
    "NystroemKernelRidge": [
        {"n_components": 20, "alpha": 0.1, "random_state": 0},
        {
            "n_components": 20,
            "kernel": "laplacian",
            "alpha": 0.1,
            "tol": 1e-8,
            "random_state": 0,
            "posterior": True,
        },
    ],
    "NystroemKernelRidgeClassifier": [
        {"n_components": 20, "alpha": 0.1, "random_state": 0},
        {"n_components": 20, "kernel": "laplacian", "alpha": 0.1, "tol": 1e-8, "random_state": 0},
    ],
    "FeatureRidgeClassifier": [
        {"alpha": 0.1, "random_state": 0},
        {
            "feature_map": kernelmaps.RandomFourierFeatures(n_components=50, random_state=0),
            "alpha": 0.1,
        },
    ],
    "FeatureLogisticRegression": [
        {"random_state": 0},
        {
            "feature_map": kernelmaps.RandomFourierFeatures(n_components=50, random_state=0),
            "C": 10.0,
            "class_weight": "balanced",
        },
        {"feature_map": "passthrough", "cache_size": 0},
    ],
    "FeatureLogisticRegressionCV": [
        {
            "feature_map": kernelmaps.RandomFourierFeatures(n_components=20, random_state=0),
            "Cs": [0.1, 10.0],
            "gammas": [0.1, 1.0],
            "n_components_grid": [10, 20],
            "cv": 3,
        },
        {"feature_map": "passthrough", "Cs": [0.1, 1.0], "gammas": None, "cv": 2},
    ],
    "FeatureRidgeCV": [
        {
            "feature_map": kernelmaps.RandomFourierFeatures(n_components=50, random_state=0),
            "gammas": [0.1, 1.0],
            "alphas": [0.001, 0.1],
        },
        {
            "feature_map": kernelmaps.RandomFourierFeatures(n_components=50, random_state=0),
            "gammas": [0.1, 1.0],
            "alphas": [0.001, 0.1],
            "n_components_grid": [20, 50],
            "cv": 3,
        },
        {"feature_map": "passthrough", "gammas": None, "criterion": "gcv"},
    ],
    "NystroemKernelRidgeCV": [
        {"n_components": 20, "gammas": [0.1, 1.0], "alphas": [0.01, 1.0], "random_state": 0},
        {
            "n_components": 20,
            "n_components_grid": [10, 20],
            "landmarks": "rpcholesky",
            "gammas": [0.05],
            "alphas": [0.01, 1.0],
            "cv": 3,
            "random_state": 0,
        },
    ],
    "FeatureRidgeClassifierCV": [
        {
            "feature_map": kernelmaps.RandomFourierFeatures(n_components=20, random_state=0),
            "gammas": [0.1, 1.0],
            "alphas": [0.1, 1.0],
        },
        {
            "feature_map": kernelmaps.RandomFourierFeatures(n_components=20, random_state=0),
            "gammas": [0.5],
            "alphas": [0.1, 1.0],
            "cv": 3,
        },
    ],
    "Nystroem": [
        {"n_components": 10, "random_state": 0},
        {"n_components": 10, "landmarks": "kmeans", "kernel": "laplacian", "random_state": 0},
        {"n_components": 10, "landmarks": "leverage", "kernel": "matern", "random_state": 0},
        {"n_components": 10, "kernel": "cosine", "random_state": 0},
        {"n_components": 10, "kernel": "rbf", "gamma": "scale", "random_state": 0},
    ],
    "IKA": [
        {"n_components": 5, "n_basis": 10, "random_state": 0},
        {"n_components": 5, "n_basis": 10, "basis": "fourier", "random_state": 0},
        {
            "n_components": 5,
            "n_basis": 10,
            "basis": "relu",
            "centers": "kmeans",
            "kernel": "laplacian",
            "random_state": 0,
        },
    ],
}


def default_instances() -> list[Any]:
    """Every public estimator with its default parameters (``check_estimator`` sets
    ``random_state`` where an estimator has one)."""
    return [getattr(kernelmaps, name)() for name in CHECK_PARAMS]


def check_instances() -> list[Any]:
    """One estimator per entry of :data:`CHECK_PARAMS`."""
    out = []
    for name, param_sets in CHECK_PARAMS.items():
        cls = getattr(kernelmaps, name)
        out.extend(cls(**params) for params in param_sets)
    return out
