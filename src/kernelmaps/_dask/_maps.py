"""``fit`` of the feature maps on a Dask array.

A data-independent map (random Fourier features, the Maclaurin and sketch maps, the χ²
samplers, the structured maps) draws its random quantities from the shape and dtype of
``X`` alone: it is fitted on an empty array of the same width, kind and dtype, so it
equals the map fitted on the numpy data with the same seed, and nothing is computed.
The checks of the values that such a fit would make (non-negativity, norms) are made by
``transform``, chunk by chunk.  The maps that learn from the data (``_fit_reads_data``)
are fitted by :func:`kernelmaps._dask._data_fits.fit_from_data`.
"""

from __future__ import annotations

from typing import Any

from .._random import check_random_state
from ._validation import check_dask_array, zero_rows

__all__ = ["fit_feature_map"]


def fit_feature_map(estimator: Any, X: Any) -> Any:
    """Fit the feature map ``estimator`` on the Dask array ``X``; returns the estimator."""
    estimator._validate_params()
    X = check_dask_array(estimator, X, reset=True, accept_sparse=estimator._accepts_sparse)
    rng = check_random_state(getattr(estimator, "random_state", None))
    if getattr(estimator, "_fit_reads_data", False):
        from ._data_fits import fit_from_data

        fit_from_data(estimator, X, rng)
    else:
        estimator._fit(zero_rows(X), rng)
    return estimator
