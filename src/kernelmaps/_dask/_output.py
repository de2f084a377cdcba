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
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._rows import RowwiseWork
from .._task_settings import TaskSettings

__all__ = ["map_rows", "run_tiles", "shared"]


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


def _map_chunk(X: Any, work: RowwiseWork, settings: TaskSettings, block_info: Any = None) -> Any:
    """One chunk of the row-wise method, under the caller's settings, tile by tile."""
    start = _chunk_start(block_info)
    with settings.applied():
        X, apply = work.prepare(X)
        return run_tiles(apply, X, start, work.tile)


def map_rows(work: RowwiseWork, X: Any) -> Any:
    """The lazy Dask array of ``work`` over the row chunks of the validated ``X``
    (columns in one chunk): each output chunk has the rows of its input chunk and the
    trailing shape ``work.shape`` (of any length: axes beyond the second are new), of
    ``work.dtype``, CSR blocks when ``work.sparse``."""
    import dask.array as da

    dtype = np.dtype(work.dtype)
    empty = (0, *work.shape)
    meta: Any = sp.csr_matrix(empty, dtype=dtype) if work.sparse else np.empty(empty, dtype)
    return da.map_blocks(
        _map_chunk,
        X,
        shared(work),
        TaskSettings.capture(),
        dtype=dtype,
        chunks=(X.chunks[0], *((n,) for n in work.shape)),
        meta=meta,
        drop_axis=[] if work.shape else [1],
        new_axis=list(range(2, 1 + len(work.shape))),
        name=work.name,
    )
