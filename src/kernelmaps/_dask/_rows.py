"""Row-wise methods on Dask arrays: lazy, chunk by chunk, independent of the chunking.

``transform``, ``predict``, ``decision_function`` and ``predict_proba`` are row-local: the
output rows of a chunk depend only on its input rows and the fitted estimator.  Each is
mapped over the row chunks of ``X`` (its columns in one chunk) with
:func:`dask.array.map_blocks`, with explicit output chunks and meta, and nothing is
computed until the caller asks.  The fitted estimator is wrapped once in
:func:`dask.delayed`, so it is one key of the graph, sent to each worker once (not once
per task), and the caller's settings (:class:`~kernelmaps._task_settings.TaskSettings`)
travel with it.

Bitwise independence of the chunking.  An optimized BLAS picks its kernel by the shape
of the product, and the rows at the edge of a block (or the whole product of a small
one) can be summed in another order than the same rows inside a large block: the same
row could come out a few units in the last place apart under two chunkings.  The rows
of every chunk are therefore computed in tiles of ``TILE_ROWS`` rows aligned on a global
grid (tile ``k`` holds the rows ``[k T, (k + 1) T)`` of the whole array); a tile cut by a
chunk boundary is completed with copies of one of its rows, computed whole, and only its
own rows are kept.  Every row is thus computed at the same place of a product of the
same shape whatever the chunking and the number of workers.  (With unknown chunk sizes
the grid starts at each chunk: the result then equals the numpy one to rounding only.)
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._task_settings import TaskSettings
from ._validation import check_dask_array, zero_rows

__all__ = ["TILE_ROWS", "map_method", "map_row_tiles", "shared"]

#: Rows of a tile of the global grid (a multiple of every BLAS kernel's row unrolling).
TILE_ROWS = 256


def shared(obj: Any) -> Any:
    """``obj`` as one key of a Dask graph: sent to each worker once, used by many tasks."""
    import dask

    return dask.delayed(obj, pure=True, traverse=False)


def _tile_indices(start: int, n_rows: int, tile: int) -> list[tuple[int, int, int]]:
    """``(first, stop, offset)`` of each tile piece of a chunk of ``n_rows`` rows at global
    row ``start``: the chunk rows ``[first, stop)`` sit at ``offset`` in their tile."""
    pieces = []
    row = 0
    while row < n_rows:
        offset = (start + row) % tile
        stop = min(n_rows, row + tile - offset)
        pieces.append((row, stop, offset))
        row = stop
    return pieces


def run_tiles(apply: Any, X: Any, start: int, tile: int) -> Any:
    """``apply`` over the rows of ``X`` (global rows from ``start``) tile by tile of the
    global grid, the cut tiles completed by copies of their first row; the outputs
    (dense, 1-D or CSR) stacked in row order."""
    outputs = []
    for first, stop, offset in _tile_indices(start, X.shape[0], tile):
        count = stop - first
        if count == tile:
            outputs.append(apply(X[first:stop]))
            continue
        index = np.full(tile, first, dtype=np.intp)
        index[offset : offset + count] = np.arange(first, stop)
        outputs.append(apply(X[index])[offset : offset + count])
    if sp.issparse(outputs[0]):
        return sp.vstack(outputs, format="csr")
    return np.concatenate(outputs, axis=0)


def _chunk_start(block_info: Any) -> int:
    location = block_info[0]["array-location"][0][0] if block_info else 0
    return 0 if location is None or math.isnan(location) else int(location)


def _map_chunk(
    X: Any, estimator: Any, settings: TaskSettings, method: str, tile: int, block_info: Any = None
) -> Any:
    """One chunk of ``estimator.method(X)``, under the caller's settings, tile by tile."""
    start = _chunk_start(block_info)
    with settings.applied():
        if method == "transform_rows":
            X = estimator._validate_transform_input(X)
            constants = estimator._transform_constants(X)
            return run_tiles(
                lambda rows: estimator._transform_rows(rows, constants), X, start, tile
            )
        return run_tiles(getattr(estimator, method), X, start, tile)


def map_row_tiles(
    estimator: Any,
    method: str,
    X: Any,
    out_shape: tuple[int, ...],
    dtype: Any,
    *,
    sparse: bool = False,
    tile: int = TILE_ROWS,
) -> Any:
    """The lazy Dask array of ``estimator.method`` over the row chunks of ``X``.

    ``X`` is validated (columns in one chunk); each output chunk has the rows of its input
    chunk and the trailing shape ``out_shape``, of ``dtype``, CSR when ``sparse``.
    """
    import dask.array as da

    dtype = np.dtype(dtype)
    if sparse:
        meta: Any = sp.csr_matrix((0, *out_shape), dtype=dtype)
    else:
        meta = np.empty((0, *out_shape), dtype=dtype)
    chunks = (X.chunks[0], *((n,) for n in out_shape))
    return da.map_blocks(
        _map_chunk,
        X,
        shared(estimator),
        TaskSettings.capture(),
        method,
        tile,
        dtype=dtype,
        chunks=chunks,
        meta=meta,
        drop_axis=[] if out_shape else [1],
        name=f"{type(estimator).__name__.lower()}-{method.replace('_', '-')}",
    )


def _probe(estimator: Any, method: str, X: Any) -> Any:
    """``estimator.method`` on one row of zeros: the output's trailing shape and dtype."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return getattr(estimator, method)(zero_rows(X, 1))


def map_method(estimator: Any, method: str, X: Any) -> Any:
    """``estimator.method(X)`` for a Dask array ``X``, as a lazy Dask array.

    Checks that the estimator is fitted and validates ``X`` from its metadata (nothing
    is computed).  A feature map's ``transform`` states its output (width, dtype, dense
    or CSR); a model's method is run once on one row of zeros for its trailing shape and
    dtype.
    """
    from sklearn.utils.validation import check_is_fitted

    from ..feature_maps._base import BaseFeatureMap

    if (
        isinstance(estimator, BaseFeatureMap)
        and not estimator.__sklearn_tags__().requires_fit
        and not hasattr(estimator, "n_features_in_")
    ):
        # a stateless map (AdditiveChi2Sampler) transforms without fit: a fitted copy
        # (from the metadata only) goes into the graph
        from sklearn.base import clone

        estimator = clone(estimator).fit(X)
    check_is_fitted(estimator)
    if isinstance(estimator, BaseFeatureMap) and method == "transform":
        X = check_dask_array(estimator, X, reset=False, accept_sparse=estimator._accepts_sparse)
        n_out = int(estimator._n_features_out)
        sparse = estimator._output_format(zero_rows(X)) == "csr"
        tile = min(TILE_ROWS, estimator._max_block_rows or TILE_ROWS)
        return map_row_tiles(
            estimator, "transform_rows", X, (n_out,), X.dtype, sparse=sparse, tile=tile
        )
    X = check_dask_array(estimator, X, reset=False)
    probe = _probe(estimator, method, X)
    return map_row_tiles(
        estimator, method, X, tuple(probe.shape[1:]), probe.dtype, sparse=sp.issparse(probe)
    )
