"""FALKON's ``K_nm^T (K_nm V)`` on a Dask array: the rows stay on the workers.

:class:`DaskNystroemMatvec` has the interface of
:class:`~kernelmaps.models._falkon.NystroemMatvec` (``rhs(Y)``, ``__call__(V, out)``,
``n_cached_rows``), so :class:`~kernelmaps.models._falkon.FalkonSolver` runs unchanged:
the preconditioner (the two ``m x m`` Cholesky factors) and the conjugate gradient stay
on the client, and only the products with ``K_nm`` go to the workers.

What is kept where.  :meth:`DaskNystroemMatvec.rhs` persists one object per row chunk of
``X`` (:class:`RowChunk`), each built by one task that reads the chunk's rows and
targets once and forms its ``K_b^T Y_b``: the chunk's validated rows, the landmark
kernel (``k(., L)``, holding the ``m`` landmarks), the chunk's ``K_nm`` row blocks that
fit in the cache budget, and ``K_b^T Y_b`` (gathered by a second computation).  The
chunk object holds a :class:`~kernelmaps.models._falkon.NystroemMatvec` on the chunk's
rows, so a chunk does exactly what the numpy path does on its rows: ``K`` in row blocks
bounded by ``working_memory`` (never the whole ``rows x m`` block of a chunk unless it
is cached).
The landmark kernel is one key of that first graph, fetched once by each worker and then
referenced by the worker's chunk objects: later graphs never mention it, so it is not
sent again (a persisted or scattered key alone would not do, since the scheduler's
active memory manager drops the replicas of a key that no task is waiting for, and the
workers would fetch it anew at every iteration).  ``y`` is read once, in that pass, and
not kept; ``X`` is kept only inside the chunk objects (no second copy).

One iteration is one computation: ``V`` is one key (sent once to each worker that needs
it), one task per chunk adds ``K_b^T (K_b V)`` over the chunk's row blocks, and the
``m x t`` partial products are summed pairwise in chunk order (a fixed binary tree, so
the sum does not depend on which worker finishes first).  With a ``distributed`` client
each chunk's task is placed on a worker holding the chunk (a loose restriction, from one
``who_has`` query per computation), so that an iteration moves ``V`` and the partial
products only: the scheduler would otherwise move a chunk to an idle worker now and
then.  The keys of the chunks are unique to the fit, so that a second fit on the same
data never meets the first one's tasks.  Everything uses
:func:`dask.persist` / :func:`dask.compute`, hence whichever scheduler is active: the
local threaded one (the chunk objects are then simply held in the client's memory) or a
``distributed.Client``.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._task_settings import TaskSettings
from ..feature_maps import row_blocks
from ..kernels import one_line_errors
from ..models._base import FLOAT_DTYPES, as_row_sliceable
from ..models._falkon import NystroemMatvec
from ._reduce import tree_sum
from ._rows import shared
from ._validation import check_dask_array

__all__ = [
    "CLUSTER_MEMORY_FRACTION",
    "DaskNystroemMatvec",
    "RowChunk",
    "active_client",
    "check_dask_targets",
    "cluster_memory_limit",
    "prepare_training_data",
]

#: Fraction of the workers' total ``memory_limit`` that the persisted data and ``K_nm``
#: blocks may take together (the rest is left to the tasks' temporaries and to Dask).
CLUSTER_MEMORY_FRACTION = 0.5


def active_client() -> Any:
    """The ``distributed.Client`` that is the active scheduler, or None (a local
    scheduler is active, or ``distributed`` is not installed)."""
    try:
        from distributed import get_client

        client = get_client()
    except (ImportError, ValueError):
        return None
    from dask.base import get_scheduler

    return client if getattr(get_scheduler(), "__self__", None) is client else None


def cluster_memory_limit() -> int | None:
    """Bytes the persisted data may take on the cluster of the active ``distributed``
    client: :data:`CLUSTER_MEMORY_FRACTION` of its workers' total ``memory_limit``.

    None when no client is the active scheduler (the local schedulers, or ``distributed``
    not installed) or when a worker has no memory limit.
    """
    client = active_client()
    if client is None:
        return None
    workers = client.scheduler_info(n_workers=-1).get("workers", {})
    limits = [info.get("memory_limit") for info in workers.values()]
    if not limits or not all(limits):
        return None
    return int(CLUSTER_MEMORY_FRACTION * sum(limits))


def _nbytes(X: Any) -> int:
    if sp.issparse(X):
        return int(X.data.nbytes + X.indices.nbytes + X.indptr.nbytes)
    return int(getattr(X, "nbytes", 0))


def check_dask_targets(estimator: Any, X: Any, y: Any) -> tuple[Any, int]:
    """``y`` as a 2-D float64 Dask array whose row chunks are those of ``X``, and the
    number of targets ``y.ndim`` had (1 or 2), checked from metadata.

    A Dask ``y`` is rechunked lazily to the row chunks of ``X`` (its columns in one
    chunk); a numpy (or array-like) ``y`` is validated as scikit-learn does and wrapped
    with the same chunks.  The values (finiteness) are checked in the chunk tasks.
    """
    import dask.array as da

    from .._array_types import is_dask_array

    n = X.shape[0]

    def check_length(n_y: int) -> None:
        if n_y != n:
            raise ValueError(
                f"Found input variables with inconsistent numbers of samples: [{n}, {n_y}]"
            )

    if is_dask_array(y):
        if y.ndim not in (1, 2):
            raise ValueError(f"y must be 1-D or 2-D; got a {y.ndim}-D Dask array.")
        if any(math.isnan(s) for s in y.shape):
            raise ValueError(
                f"{type(estimator).__name__} needs the length of y, which this Dask array "
                "does not know (shape has nan); call y.compute_chunk_sizes()."
            )
        if y.dtype.kind not in "biuf":
            raise ValueError(
                f"y must be numeric; this Dask array has dtype {y.dtype}. Convert it with "
                "y.astype(float)."
            )
        check_length(y.shape[0])
        ndim = y.ndim
        Y = y.reshape(y.shape[0], -1) if ndim == 1 else y
    else:
        from sklearn.utils import check_array

        with one_line_errors():
            y = check_array(y, ensure_2d=False, dtype="numeric", input_name="y")
        if y.ndim not in (1, 2):
            raise ValueError(f"y must be 1-D or 2-D; got shape {y.shape}.")
        check_length(y.shape[0])
        ndim = y.ndim
        Y = da.from_array(np.asarray(y).reshape(y.shape[0], -1), chunks=(X.chunks[0], -1))
    Y = Y.astype(np.float64).rechunk((X.chunks[0], -1))
    return Y, ndim


class RowChunk:
    """One row chunk of the training data, as a worker keeps it for the whole fit.

    Parameters
    ----------
    matvec : NystroemMatvec
        The chunk's rows, the landmark kernel and the chunk's cached ``K_nm`` blocks.
    settings : TaskSettings
        The client's settings, re-entered by every task on this chunk.
    rhs : ndarray of shape (m, t)
        The chunk's ``K_b^T Y_b`` (float64).
    """

    __slots__ = ("matvec", "rhs", "settings")

    def __init__(self, matvec: NystroemMatvec, settings: TaskSettings, rhs: np.ndarray) -> None:
        self.matvec = matvec
        self.settings = settings
        self.rhs = rhs

    @property
    def n_cached_rows(self) -> int:
        return int(self.matvec.n_cached_rows)

    def __sizeof__(self) -> int:
        # What Dask's memory accounting should see: the rows, the cached blocks, the rhs
        # (the landmark kernel is shared by the worker's chunks).
        cached = sum(K.nbytes for K in self.matvec._cache if K is not None)
        return 64 + _nbytes(self.matvec.X) + cached + self.rhs.nbytes

    def gram_product(self, V: np.ndarray) -> np.ndarray:
        """``K_b^T (K_b V)`` over this chunk's rows (float64, shape (m, t))."""
        with self.settings.applied():
            return self.matvec(V, np.zeros((V.shape[0], V.shape[1])))


def _build_chunk(
    X: Any,
    Y: np.ndarray,
    block_kernel: Callable[[Any], np.ndarray],
    settings: TaskSettings,
    dtype: np.dtype,
    cache_rows: int,
    bytes_per_row: float,
    max_rows: int,
    name: str,
) -> RowChunk:
    """The :class:`RowChunk` of one chunk: its values checked with the numpy path's
    messages, its ``K_b^T Y_b`` formed while the cached blocks are filled."""
    from sklearn.utils import check_array

    with settings.applied(), one_line_errors(name):
        X = check_array(
            X, accept_sparse=("csr", "csc"), dtype=FLOAT_DTYPES, input_name="X", estimator=name
        )
        X = as_row_sliceable(X)
        Y = check_array(Y, dtype=np.float64, input_name="y", estimator=name)
        blocks = list(row_blocks(X.shape[0], bytes_per_row, max_rows=max_rows))
        matvec = NystroemMatvec(X, blocks, block_kernel, dtype, cache_rows)
        rhs = matvec.rhs(Y)
    return RowChunk(matvec, settings, rhs)


def _chunk_rhs(chunk: RowChunk) -> np.ndarray:
    return chunk.rhs


def _chunk_cached_rows(chunk: RowChunk) -> int:
    return chunk.n_cached_rows


def _gram_product(chunk: RowChunk, V: np.ndarray) -> np.ndarray:
    return chunk.gram_product(V)


class DaskNystroemMatvec:
    """``K_nm^T (K_nm V)`` over the row chunks of a Dask array, on the workers.

    Parameters
    ----------
    X : dask.array.Array of shape (n, d)
        The training rows (validated from metadata, columns in one chunk, known row
        chunks).
    block_kernel : callable
        ``X_block -> k(X_block, L)`` of shape (rows, m), in the working dtype; picklable
        (sent to each worker once).
    dtype : numpy dtype
        The working dtype of the blocks and their products.
    cache_rows : int
        Rows of ``K_nm`` kept on the workers between iterations: the first
        ``cache_rows`` rows of ``X`` are eligible, each chunk keeping its row blocks that
        fit in its share (as :class:`~kernelmaps.models._falkon.NystroemMatvec` does).
    block_rows : tuple of (float, int)
        ``(bytes_per_row, max_rows)`` of the row blocks (see
        :func:`kernelmaps.feature_maps.row_blocks`), bounded on the workers by the
        client's ``working_memory``.
    name : str
        The estimator's name, for the messages of the value checks.

    Attributes
    ----------
    n_cached_rows : int
        Rows of ``K_nm`` persisted on the workers (after :meth:`rhs`).
    n_computations : int
        Dask computations run (one by :meth:`rhs` to persist the chunks and one to
        gather their ``K_b^T Y_b``, then one per call).
    """

    def __init__(
        self,
        X: Any,
        block_kernel: Callable[[Any], np.ndarray],
        dtype: np.dtype,
        cache_rows: int,
        block_rows: tuple[float, int],
        name: str,
    ) -> None:
        self.X = X
        self.block_kernel = block_kernel
        self.dtype = np.dtype(dtype)
        self.cache_rows = int(cache_rows)
        self.block_rows = block_rows
        self.name = name
        self.n_cached_rows = 0
        self.n_computations = 0
        self._chunks: list[Any] | None = None

    def _chunk_budgets(self) -> list[int]:
        """Rows of each chunk eligible for the cache: the first ``cache_rows`` of X."""
        budgets, start = [], 0
        for rows in self.X.chunks[0]:
            budgets.append(max(0, min(rows, self.cache_rows - start)))
            start += rows
        return budgets

    def rhs(self, Y: Any) -> np.ndarray:
        """``K_nm^T Y`` (float64, shape (m, t)) for ``Y`` a Dask array with ``X``'s row
        chunks; persists the chunks (rows, landmark kernel, cached blocks)."""
        import dask

        X = self.X
        if X.numblocks[1] != 1 or Y.numblocks[1] != 1:
            raise ValueError("X and Y must each have their columns in one chunk.")
        if tuple(Y.chunks[0]) != tuple(X.chunks[0]):
            raise ValueError("Y must have the row chunks of X.")
        # Keys of this fit only: a later fit on the same data must not meet the tasks of
        # this one still known to the scheduler (with their worker restrictions).
        fit_token = uuid.uuid4().hex
        settings = shared(TaskSettings.capture())
        block_kernel = shared(self.block_kernel)
        build = dask.delayed(_build_chunk, pure=True)
        bytes_per_row, max_rows = self.block_rows
        chunks = [
            build(
                x,
                y,
                block_kernel,
                settings,
                self.dtype,
                budget,
                bytes_per_row,
                max_rows,
                self.name,
                dask_key_name=f"nystroem-row-chunk-{fit_token}-{index}",
            )
            for index, (x, y, budget, rows) in enumerate(
                zip(
                    X.to_delayed().ravel(),
                    Y.to_delayed().ravel(),
                    self._chunk_budgets(),
                    X.chunks[0],
                    strict=True,
                )
            )
            if rows > 0
        ]
        self._chunks = list(dask.persist(*chunks))
        rhs = tree_sum(self._on_chunks(_chunk_rhs))
        rhs_value, cached_value = dask.compute(rhs, self._on_chunks(_chunk_cached_rows))
        self.n_computations += 2
        self.n_cached_rows = int(sum(cached_value))
        return np.asarray(rhs_value, dtype=np.float64)

    def _on_chunks(self, func: Callable[..., Any], *args: Any) -> list[Any]:
        """``func(chunk, *args)`` for each persisted chunk, as Delayed objects.

        With a distributed client each task is placed on a worker holding its chunk (a
        loose restriction: any worker if those are gone; one query to the scheduler,
        after waiting for the chunks), so that the tasks move only their small inputs
        and outputs, never the chunks (the scheduler would otherwise move a chunk to an
        idle worker now and then, with its rows, its cached blocks and its landmark
        kernel); the scheduler's work stealing may still move one to balance the load.
        """
        import dask

        assert self._chunks is not None
        task = dask.delayed(func, pure=True)
        client = active_client()
        if client is None:
            return [task(chunk, *args) for chunk in self._chunks]
        from distributed import futures_of, wait

        wait(futures_of(self._chunks))
        who_has = client.who_has(self._chunks)
        tasks = []
        for chunk in self._chunks:
            home = list(who_has.get(chunk.key, ()))
            if not home:  # lost with its worker: the scheduler recomputes it anywhere
                tasks.append(task(chunk, *args))
                continue
            with dask.annotate(workers=home, allow_other_workers=True):
                tasks.append(task(chunk, *args))
        return tasks

    def __call__(self, V: np.ndarray, out: np.ndarray) -> np.ndarray:
        """``out += K_nm^T (K_nm V)``: one computation, ``V`` one key of its graph, each
        chunk's task on a worker holding the chunk."""
        import dask

        if self._chunks is None:
            raise RuntimeError("DaskNystroemMatvec.rhs must be called first.")
        V_key = shared(np.ascontiguousarray(V))
        (total,) = dask.compute(tree_sum(self._on_chunks(_gram_product, V_key)))
        self.n_computations += 1
        out += total
        return out

    def release(self) -> None:
        """Let the workers drop the persisted chunks."""
        self._chunks = None


def prepare_training_data(estimator: Any, X: Any, y: Any) -> tuple[Any, Any, int]:
    """``(X, Y, y_ndim)`` for a fit on the Dask array ``X``: ``X`` validated from its
    metadata (``n_features_in_`` set), with known row chunks, and ``Y`` aligned on them
    (:func:`check_dask_targets`)."""
    X = check_dask_array(estimator, X, reset=True)
    if any(math.isnan(c) for c in X.chunks[0]):
        raise ValueError(
            f"{type(estimator).__name__} needs the row chunk sizes of X, which this Dask "
            "array does not know (shape has nan); call X.compute_chunk_sizes()."
        )
    Y, ndim = check_dask_targets(estimator, X, y)
    return X, Y, ndim
