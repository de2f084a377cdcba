"""Shared helpers of the Dask tests: chunkings, a scheduler that refuses to compute, a cluster.

Every test module of the Dask support starts with ``pytest.importorskip("dask.array")``
(and ``"distributed"`` where it needs a cluster), and marks its tests ``pytest.mark.dask``,
so that the rest of the suite runs where Dask is not installed.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, ClassVar

import numpy as np
import sklearn

import kernelmaps
from kernelmaps._parallel import n_threads
from kernelmaps.feature_maps import BaseFeatureMap

#: The chunkings every estimator is checked over, as functions of (n_rows, n_columns):
#: one chunk; 37-row chunks; uneven chunks with a 1-row chunk; columns split in two.
CHUNKINGS = {
    "one-chunk": lambda n, d: (n, d),
    "rows-37": lambda n, d: (37, d),
    "uneven-with-1-row": lambda n, d: ((1, n // 3, n - 1 - n // 3), (d,)),
    "column-chunked": lambda n, d: (n // 2 + 1, max(1, d // 2)),
}


def as_dask(X: Any, chunking: str) -> Any:
    """``X`` (numpy or scipy.sparse) as a Dask array with the named chunking."""
    import dask.array as da

    n, d = X.shape
    return da.from_array(X, chunks=CHUNKINGS[chunking](n, d), asarray=False)


def _refuse(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("a Dask graph was computed where the call had to stay lazy")


@contextmanager
def nothing_computed() -> Iterator[None]:
    """A Dask scheduler that raises if anything is computed, for the enclosed code."""
    import dask

    with dask.config.set(scheduler=_refuse):
        yield


def start_cluster() -> tuple[Any, Any]:
    """A real ``LocalCluster`` (2 worker processes, 1 thread each) and its client."""
    from distributed import Client, LocalCluster

    cluster = LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=":0",
        silence_logs=40,
    )
    return cluster, Client(cluster)


def dense(Z: Any) -> np.ndarray:
    """A computed result as a dense ndarray (CSR densified)."""
    return Z.toarray() if hasattr(Z, "toarray") else np.asarray(Z)


class SettingsProbe(BaseFeatureMap):
    """A map whose three features are the settings seen where its blocks run: 1 if the
    engine is numpy, scikit-learn's ``working_memory``, and the row-block threads allowed."""

    _parameter_constraints: ClassVar[dict[str, Any]] = {}

    def _fit(self, X: Any, rng: Any) -> None:
        self._n_features_out = 3

    def _transform_block(self, X: Any, out: Any, constants: Any) -> None:
        out[:, 0] = kernelmaps.get_config()["engine"] == "numpy"
        out[:, 1] = sklearn.get_config()["working_memory"]
        out[:, 2] = n_threads()
