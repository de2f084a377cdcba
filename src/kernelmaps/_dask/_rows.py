"""The rows of a fit on a Dask array: :class:`DaskRows`, the Dask implementation of
``kernelmaps._rows.Rows``.

One part per row chunk (its columns in one chunk).  Every operation is one
:func:`dask.compute` on whichever scheduler is active (the local threads or a
``distributed.Client``), built only from ``dask.delayed`` and ``dask.array``:

* :meth:`DaskRows.read` gathers the union of the requested rows in one compute (one task
  per chunk holding some of them, taking only those), checks them for NaN and infinity
  with scikit-learn's message, and hands each request its rows in its order.  Global row
  indices need the row-chunk sizes: unknown ones (``nan``, e.g. after boolean indexing)
  are computed first (:meth:`dask.array.Array.compute_chunk_sizes`, a pass over ``X``).
* :meth:`DaskRows.map_reduce` runs the function on every chunk (with the chunk of each
  aligned companion and the chunk's first global row), the chunk checked for NaN and
  infinity first, then merges the results pairwise in chunk order
  (:func:`kernelmaps._rows.tree_reduce`): the result depends only on the chunking, never
  on the scheduler or the number of workers.  The function, the merge and the caller's
  settings (:class:`~kernelmaps._task_settings.TaskSettings`, re-entered by every task)
  are single keys of the graph, sent to each worker once.
* :meth:`DaskRows.persist` builds one object per chunk and keeps it where it was built
  (:class:`DaskParts`); every later pass is one compute, each task placed on a worker
  holding its part.

Companions (targets, weights) are aligned lazily on the row chunks of ``X``
(:meth:`DaskRows.align`): a Dask array is checked from its metadata and rechunked, an
in-memory one wrapped with the same chunks.
"""

from __future__ import annotations

import functools
import math
import operator
import sys
import uuid
from collections.abc import Callable, Sequence
from numbers import Number
from typing import Any

import numpy as np
from sklearn.utils import assert_all_finite

from .._array_api import numpy_namespace
from .._array_types import is_dask_array
from .._rows import (
    InMemoryRows,
    Parts,
    RowwiseWork,
    _stack,
    picked_parts,
    stacked_pairs,
    tree_reduce,
)
from .._task_settings import TaskSettings
from .._validation import one_line_errors
from ._output import map_rows, shared
from ._validation import is_sparse_array, zero_rows

__all__ = [
    "CLUSTER_MEMORY_FRACTION",
    "DaskParts",
    "DaskRows",
    "active_client",
    "cluster_memory_limit",
    "gather_rows",
    "with_known_rows",
]

#: Fraction of the workers' total ``memory_limit`` that persisted parts may take (the rest
#: is left to the tasks' temporaries and to Dask).
CLUSTER_MEMORY_FRACTION = 0.5


def with_known_rows(X: Any) -> Any:
    """``X`` with the sizes of its row chunks known.

    Unknown sizes (``nan``) are computed (one compute, a pass over ``X``) on a new array
    object; the caller's is left as it was.  Known sizes cost nothing.
    """
    if not any(math.isnan(size) for size in X.chunks[0]):
        return X
    return X.copy().compute_chunk_sizes()


def _row_bounds(X: Any) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(X.chunks[0])]).astype(np.intp)


def gather_rows(
    X: Any, requests: Sequence[np.ndarray | None], *, estimator_name: str | None = None
) -> list[Any]:
    """The rows of the Dask array ``X`` (known row chunks) named by each request (global
    indices in any order, repeats allowed, or None for every row), in one compute.

    The union of the requests is gathered once, one task per chunk holding some of its
    rows (the whole chunk when every row is asked for), checked for NaN and infinity with
    scikit-learn's message naming ``estimator_name``.  Nothing is computed when no row is
    asked for.
    """
    import dask

    wanted = [None if rows is None else np.asarray(rows, dtype=np.intp) for rows in requests]
    named = [rows for rows in wanted if rows is not None]
    union = None
    if len(named) == len(wanted):
        union = np.unique(np.concatenate(named)) if named else np.empty(0, dtype=np.intp)
        if union.size == 0:
            return [zero_rows(X, 0) for _ in wanted]
        n = int(sum(X.chunks[0]))
        if union[0] < 0 or union[-1] >= n:
            raise IndexError(f"row indices out of range for a Dask array of {n} rows")
    bounds = _row_bounds(X)
    tasks = []
    for i, block in enumerate(X.to_delayed().reshape(-1)):
        if union is None:
            tasks.append(block)
            continue
        first, stop = np.searchsorted(union, bounds[i : i + 2])
        if stop > first:
            # operator.getitem: the task needs no import of kernelmaps on the worker
            tasks.append(
                dask.delayed(operator.getitem, pure=True)(block, union[first:stop] - bounds[i])
            )
    gathered = _stack(dask.compute(*tasks))
    assert_all_finite(gathered, estimator_name=estimator_name, input_name="X")
    if union is None:
        return [gathered if rows is None else gathered[rows] for rows in wanted]
    return [gathered[np.searchsorted(union, rows)] for rows in wanted]  # type: ignore[arg-type]


def _check_length(n: int, values: Any, what: str) -> None:
    m = values.shape[0]
    if isinstance(m, float) and math.isnan(m):
        raise ValueError(
            f"The length of {what} is unknown (nan in its shape); call "
            f"{what}.compute_chunk_sizes() or give its chunks explicitly."
        )
    if int(m) != n:
        raise ValueError(
            f"Found input variables with inconsistent numbers of samples: [{n}, {int(m)}]"
        )


def _apply(
    function: Callable[..., Any],
    settings: TaskSettings,
    name: str | None,
    X: Any,
    *rest: Any,
) -> Any:
    """One chunk's task: its rows checked finite, then ``function`` under the settings."""
    with settings.applied():
        with one_line_errors(name):
            assert_all_finite(X, estimator_name=name, input_name="X")
        return function(X, *rest)


def _reduced(tasks: list[Any], merge: Callable[[Any, Any], Any]) -> Any:
    """The Delayed ``tasks`` merged in the fixed tree, computed (one ``dask.compute``)."""
    import dask

    (result,) = dask.compute(tree_reduce(tasks, dask.delayed(merge, pure=True)))
    return result


def _pieces(values: Any, n_chunks: int) -> list[Any]:
    """The row chunks of an aligned companion (itself for None or a number)."""
    if is_dask_array(values):
        return list(values.to_delayed().ravel())
    return [values] * n_chunks


class DaskRows:
    """``kernelmaps._rows.Rows`` of a validated Dask array (columns in one chunk).

    Parameters
    ----------
    X : dask.array.Array of shape (n_samples, n_features)
    name : str, optional
        The estimator, named in the messages of the value checks.
    """

    in_memory = False
    local = False
    checked = False
    rebuilt = False
    device: Any = "cpu"

    def __init__(self, X: Any, name: str | None = None) -> None:
        if X.numblocks[1] > 1:
            X = X.rechunk({1: -1})
        self.X = X
        self.name = name
        self.xp = numpy_namespace()

    @property
    def held(self) -> DaskRows:
        return self

    def fitted_place(self) -> tuple[Any, Any]:
        return self.xp, self.device

    def _known(self) -> Any:
        self.X = with_known_rows(self.X)
        return self.X

    @property
    def n_rows(self) -> int:
        return int(self._known().shape[0])

    @property
    def n_features(self) -> int:
        return int(self.X.shape[1])

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(self.X.dtype)

    @property
    def sparse(self) -> bool:
        return is_sparse_array(self.X)

    def array(self) -> Any:
        return None

    def empty(self, n_rows: int = 0) -> Any:
        return zero_rows(self.X, n_rows)

    def cache_budget(self) -> int | None:
        """Bytes persisted parts may take beyond the rows (None: no known limit)."""
        limit = cluster_memory_limit()
        return None if limit is None else max(0, limit - int(self.X.nbytes))

    def read(self, requests: Sequence[np.ndarray | None]) -> list[Any]:
        return gather_rows(self._known(), requests, estimator_name=self.name)

    def _row_chunks(self) -> tuple[int, ...]:
        chunks = self.X.chunks[0]
        if any(math.isnan(c) for c in chunks):
            raise ValueError(
                f"{self.name or 'The estimator'} needs the row chunk sizes of X to align y "
                "and sample_weight with it, and this Dask array does not know them (nan in "
                "X.chunks); call X.compute_chunk_sizes() or give the chunks explicitly."
            )
        return tuple(int(c) for c in chunks)

    def align(self, values: Any, what: str = "y") -> Any:
        import dask.array as da

        if values is None or isinstance(values, Number):
            return values
        chunks = self._row_chunks()
        _check_length(sum(chunks), values, what)
        if is_dask_array(values):
            if values.ndim == 2 and math.isnan(values.shape[1]):
                raise ValueError(
                    "The number of columns of y is unknown; give y's chunks explicitly."
                )
            return values.rechunk({0: chunks, 1: -1} if values.ndim == 2 else {0: chunks})
        values = np.asarray(values)
        return da.from_array(values, chunks=(chunks, -1) if values.ndim == 2 else (chunks,))

    def distinct(self, values: Any) -> np.ndarray:
        import dask
        import dask.array as da

        if not is_dask_array(values):
            return np.unique(values)
        (labels,) = dask.compute(da.unique(values))
        assert_all_finite(labels, input_name="y", estimator_name=self.name)
        return np.asarray(labels)

    def _starts(self) -> list[int | None]:
        if any(math.isnan(c) for c in self.X.chunks[0]):
            return [None] * self.X.numblocks[0]
        return [int(s) for s in _row_bounds(self.X)[:-1]]

    def _tasks(
        self, function: Callable[..., Any], aligned: tuple[Any, ...], token: str | None = None
    ) -> list[Any]:
        """One task per chunk: ``function(block, *aligned_blocks, start)``, checked and
        under the caller's settings (keys named after ``token`` when given)."""
        import dask

        blocks = list(self.X.to_delayed().ravel())
        pieces = [_pieces(values, len(blocks)) for values in aligned]
        task = dask.delayed(_apply, pure=True)
        settings, key = shared(TaskSettings.capture()), shared(function)
        named: dict[str, str] = {}
        tasks = []
        for i, (block, start) in enumerate(zip(blocks, self._starts(), strict=True)):
            if token is not None:
                named["dask_key_name"] = f"row-part-{token}-{i}"
            tasks.append(
                task(key, settings, self.name, block, *(p[i] for p in pieces), start, **named)
            )
        return tasks

    def take_rows(self, index: np.ndarray, aligned: Sequence[Any]) -> tuple[Any, tuple]:
        X, *picked = self.map_reduce(picked_parts(index), stacked_pairs, *aligned)
        return InMemoryRows(X, checked=False), tuple(picked)

    def map_reduce(
        self, function: Callable[..., Any], merge: Callable[[Any, Any], Any], *aligned: Any
    ) -> Any:
        return _reduced(self._tasks(function, aligned), merge)

    def persist(self, build: Callable[..., Any], *aligned: Any) -> Parts:
        import dask

        # keys of this fit only: a later fit on the same data must not meet this one's
        # tasks still known to the scheduler (with their worker restrictions)
        held = functools.partial(_hold, TaskSettings.capture(), build)
        tasks = self._tasks(held, aligned, token=uuid.uuid4().hex)
        kept = [task for task, rows in zip(tasks, self.X.chunks[0], strict=True) if rows > 0]
        return DaskParts(list(dask.persist(*kept)))

    def map_rows(self, work: RowwiseWork) -> Any:
        return map_rows(work, self.X)


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
    """Bytes persisted data may take on the cluster of the active ``distributed`` client:
    :data:`CLUSTER_MEMORY_FRACTION` of its workers' total ``memory_limit``; None when no
    client is the active scheduler or a worker has no memory limit."""
    client = active_client()
    if client is None:
        return None
    workers = client.scheduler_info(n_workers=-1).get("workers", {})
    limits = [info.get("memory_limit") for info in workers.values()]
    if not limits or not all(limits):
        return None
    return int(CLUSTER_MEMORY_FRACTION * sum(limits))


class _Held:
    """A persisted part with the settings of the fit that made it (re-entered by every
    task on it, so that a pass sends no settings)."""

    __slots__ = ("settings", "value")

    def __init__(self, value: Any, settings: TaskSettings) -> None:
        self.value = value
        self.settings = settings

    def __sizeof__(self) -> int:
        return sys.getsizeof(self.value)


def _hold(settings: TaskSettings, build: Callable[..., Any], *args: Any) -> _Held:
    return _Held(build(*args), settings)


def _call_held(function: Callable[..., Any], part: _Held, *args: Any) -> Any:
    with part.settings.applied():
        return function(part.value, *args)


class DaskParts:
    """Objects persisted one per row chunk (:meth:`DaskRows.persist`).

    Every :meth:`map_reduce` is one computation: its arguments are single keys (sent once
    to each worker that needs them), one task per part, the results merged pairwise in
    part order.  With a ``distributed`` client each task is placed on a worker holding its
    part (a loose restriction: any worker if those are gone; one query to the scheduler),
    so that a pass moves its small arguments and results only, never the parts.

    Attributes
    ----------
    n_computations : int
        Passes run (one per :meth:`map_reduce`).
    """

    def __init__(self, parts: list[Any]) -> None:
        self.parts = parts
        self.n_computations = 0

    def _tasks(self, function: Callable[..., Any], args: tuple[Any, ...]) -> list[Any]:
        """``function(part, *args)`` per part; ``function`` travels in the task itself."""
        import dask

        task = dask.delayed(_call_held, pure=True)
        keys = [shared(arg) for arg in args]
        client = active_client()
        if client is None:
            return [task(function, part, *keys) for part in self.parts]
        from distributed import futures_of, wait

        wait(futures_of(self.parts))
        who_has = client.who_has(self.parts)
        tasks = []
        for part in self.parts:
            home = list(who_has.get(part.key, ()))
            if not home:  # lost with its worker: the scheduler recomputes it anywhere
                tasks.append(task(function, part, *keys))
                continue
            with dask.annotate(workers=home, allow_other_workers=True):
                tasks.append(task(function, part, *keys))
        return tasks

    def map_reduce(
        self, function: Callable[..., Any], merge: Callable[[Any, Any], Any], *args: Any
    ) -> Any:
        self.n_computations += 1
        return _reduced(self._tasks(function, args), merge)

    def release(self) -> None:
        self.parts = []
