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
        {"n_components": 20, "sampler": "sobol", "kernel": "laplacian", "random_state": 0},
        {"n_components": 21, "variant": "cos_phase", "sampler": "halton", "kernel": "matern",
         "random_state": 0},
    ],
    "RandomBinningFeatures": [{"n_grids": 10, "random_state": 0}],
}


def check_instances() -> list[Any]:
    """One estimator per entry of :data:`CHECK_PARAMS`."""
    out = []
    for name, param_sets in CHECK_PARAMS.items():
        cls = getattr(kernelmaps, name)
        out.extend(cls(**params) for params in param_sets)
    return out
