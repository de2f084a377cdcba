"""The occupied bins of random binning features on a Dask array: one task per chunk.

:class:`~kernelmaps.feature_maps.RandomBinningFeatures` draws its grids from the width
of ``X`` alone, then lists, for each grid, the bins the training rows occupy (the
columns of its output).  That list is the union over the rows, so it can be made chunk
by chunk and merged: each chunk's task computes the sorted distinct keys of its rows in
every grid (the map's own numpy or numba code, under the caller's settings), and the
per-chunk lists are merged (sorted union) in a tree of tasks of fan-in ``FAN_IN``, the
last merge's result being the only thing sent to the client.  A union does not depend
on the order or grouping of its parts, so the result equals the numpy fit's exactly,
whatever the chunking and the scheduler.  The map is one key of the graph
(:func:`~kernelmaps._dask._rows.shared`), sent to each worker once.

Each task also checks its chunk for NaN and infinity with scikit-learn's message (the
numpy fit checks the whole of ``X``).  The row chunk sizes need not be known.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._task_settings import TaskSettings
from ._rows import shared

__all__ = ["FAN_IN", "occupied_bin_keys"]

#: Parts merged by one task of the merge tree.
FAN_IN = 8


def _chunk_keys(block: Any, estimator: Any, settings: TaskSettings) -> list[np.ndarray]:
    """Sorted distinct bin keys of the rows of one chunk, per grid (checked finite)."""
    from sklearn.utils import assert_all_finite

    with settings.applied():
        assert_all_finite(block, estimator_name=type(estimator).__name__, input_name="X")
        return estimator._occupied_keys(block)


def _merge(*parts: list[np.ndarray]) -> list[np.ndarray]:
    from ..feature_maps._binning import merge_bin_keys

    return merge_bin_keys(list(parts))


def occupied_bin_keys(estimator: Any, X: Any) -> list[np.ndarray]:
    """For each grid of ``estimator`` (its grids drawn), the sorted distinct keys of the
    bins the rows of the Dask array ``X`` (validated, columns in one chunk) occupy.

    One compute: one task per row chunk, then the merge tree.
    """
    import dask

    settings = TaskSettings.capture()
    fitted = shared(estimator)
    parts = [
        dask.delayed(_chunk_keys, pure=True)(block, fitted, settings)
        for block in X.to_delayed().reshape(-1)
    ]
    while len(parts) > 1:
        parts = [
            dask.delayed(_merge, pure=True)(*parts[start : start + FAN_IN])
            for start in range(0, len(parts), FAN_IN)
        ]
    (keys,) = dask.compute(parts[0])
    return keys
