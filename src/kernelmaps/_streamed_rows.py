"""Rows larger than a device's memory, streamed through it block by block.

``FeatureRidge(device="cuda")`` and ``NystroemKernelRidge(device="cuda")`` fit NumPy (or
Dask) rows on a GPU: :class:`StreamedRows` wraps the host rows as a
``kernelmaps._rows.Rows`` whose parts are blocks of rows copied to the device one
after the other, so that a fit's device memory is a few blocks whatever ``n`` is.  The
fits are the ones written against ``Rows``: a map over the parts
(:meth:`StreamedRows.map_reduce`) gets each block on the device with the same block of
every aligned companion (targets, weights; labels that are not numbers stay on the host),
and merges the results in the fixed tree of
:func:`kernelmaps._rows.tree_reduce`; objects "kept" for several passes
(:meth:`StreamedRows.persist`, FALKON's matvec parts) are rebuilt from their block at
every pass, since they cannot stay on the device.

The copy of the next block overlaps the work on the current one: a background thread
copies it (on its own stream on CUDA, which the stream of the work waits for, see
:func:`kernelmaps._devices.copy_to_device`) while the device works.  Blocks hold at
most an eighth of the device's free memory (read when the rows are made; the
``working_memory`` budget where the library does not say), and the functions bound
their own temporaries by ``working_memory`` as on the host.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

from ._array_api import is_numpy, place_name, same_device, to_numpy
from ._devices import consumer_stream, copy_to_device, free_device_memory, resolve_device
from ._rows import Rows, RowwiseWork, tree_reduce_stream

__all__ = ["StreamedRows", "stream_rows"]

#: The share of the device's free memory one block of rows may take (two are in flight).
_BLOCK_SHARE = 8

#: The longest block of rows copied at once.
_MAX_BLOCK_ROWS = 1 << 20


class _StreamedParts:
    """:class:`kernelmaps._rows.Parts` rebuilt from each block at every pass."""

    def __init__(self, rows: StreamedRows, build: Callable[..., Any], aligned: tuple) -> None:
        self.rows, self.build, self.aligned = rows, build, aligned

    def map_reduce(
        self, function: Callable[..., Any], merge: Callable[[Any, Any], Any], *args: Any
    ) -> Any:
        def built(X: Any, *rest: Any) -> Any:
            return function(self.build(X, *rest), *args)

        return self.rows.map_reduce(built, merge, *self.aligned)

    def release(self) -> None:
        self.aligned = ()


class StreamedRows:
    """The host rows of a fit (NumPy, SciPy or Dask), streamed to a device block by block.

    Parameters
    ----------
    rows : Rows
        The validated host rows.
    xp : namespace
        The array namespace of the device (``array_api_compat.torch``, CuPy, ...).
    device : device
        The device, in ``xp``'s terms.
    block_rows : int, optional
        Rows per block (default: from the device's free memory).

    Examples
    --------
    >>> import numpy as np
    >>> import array_api_strict as xp
    >>> from kernelmaps._rows import as_rows
    >>> from kernelmaps._streamed_rows import StreamedRows
    >>> rows = StreamedRows(as_rows(np.arange(10.0).reshape(5, 2)), xp, None, block_rows=2)
    >>> rows.map_reduce(lambda X, start: float(xp.sum(X)), lambda a, b: a + b)
    45.0
    """

    in_memory = False
    local = True
    rebuilt = True

    def __init__(self, rows: Rows, xp: Any, device: Any, block_rows: int | None = None) -> None:
        self.inner, self.xp, self.device = rows, xp, device
        self.checked = rows.checked
        self.X = rows.X
        row_bytes = max(1, rows.n_features) * rows.dtype.itemsize
        if block_rows is None:
            free = free_device_memory(xp, device)
            if free is None:
                from sklearn import get_config

                free = _BLOCK_SHARE * get_config()["working_memory"] * 2**20
            block_rows = int(free // _BLOCK_SHARE // row_bytes)
        self.block_rows = max(1, min(int(block_rows), _MAX_BLOCK_ROWS))

    n_rows = property(lambda self: self.inner.n_rows)
    n_features = property(lambda self: self.inner.n_features)
    dtype = property(lambda self: self.inner.dtype)
    sparse = property(lambda self: False)

    def array(self) -> Any:
        return None

    @property
    def held(self) -> Rows:
        return self.inner

    def fitted_place(self) -> tuple[Any, Any]:
        return self.inner.fitted_place()

    def empty(self, n_rows: int = 0) -> Any:
        return np.zeros((n_rows, self.n_features), dtype=self.dtype)

    def cache_budget(self) -> int | None:
        return 0

    def read(self, requests: Sequence[np.ndarray | None]) -> list[Any]:
        return [self._on_device(block) for block in self.inner.read(requests)]

    def take_rows(self, index: np.ndarray, aligned: Sequence[Any]) -> tuple[Rows, tuple]:
        held, picked = self.inner.take_rows(index, aligned)
        return StreamedRows(held, self.xp, self.device, self.block_rows), picked

    def align(self, values: Any, what: str = "y") -> Any:
        return self.inner.align(values, what)

    def distinct(self, values: Any) -> np.ndarray:
        return self.inner.distinct(values)

    def _on_device(self, block: Any, consumer: Any = None) -> Any:
        if sp.issparse(block):
            block = block.toarray()
        return copy_to_device(np.asarray(block), self.xp, self.device, consumer)

    def _host_blocks(self, aligned: tuple) -> Iterator[tuple[int, Any, list[Any]]]:
        """``(start, X block, aligned blocks)`` on the host, chunk by chunk for Dask."""
        starts = range(0, self.n_rows, self.block_rows)
        for start in starts:
            rows = slice(start, min(start + self.block_rows, self.n_rows))
            block = self.X[rows]
            if hasattr(block, "compute"):
                block = block.compute()
            parts = [_slice(a, rows) for a in aligned]
            yield start, block, parts

    def _device_blocks(self, aligned: tuple) -> Iterator[tuple[int, Any, list[Any]]]:
        """The blocks on the device, the next one copied while the caller works (the
        caller's stream, read here in its thread, waits for each copy)."""
        consumer = consumer_stream(self.xp, self.device)

        def copy(item: tuple[int, Any, list[Any]]) -> tuple[int, Any, list[Any]]:
            start, block, parts = item
            moved = [self._aligned_on_device(a, consumer) for a in parts]
            return start, self._on_device(block, consumer), moved

        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            pending = None
            for item in self._host_blocks(aligned):
                future = pool.submit(copy, item)
                if pending is not None:
                    yield pending.result()
                pending = future
            if pending is not None:
                yield pending.result()

    def _aligned_on_device(self, values: Any, consumer: Any = None) -> Any:
        if values is None or np.ndim(values) == 0:
            return values
        values = np.asarray(values)
        if values.dtype.kind not in "biuf":
            return values  # labels that are not numbers (strings) stay on the host
        return copy_to_device(values, self.xp, self.device, consumer)

    def map_reduce(
        self, function: Callable[..., Any], merge: Callable[[Any, Any], Any], *aligned: Any
    ) -> Any:
        # merged as they come (O(log n) results held), in tree_reduce's tree
        results = (function(X, *parts, start) for start, X, parts in self._device_blocks(aligned))
        return tree_reduce_stream(results, merge)

    def persist(self, build: Callable[..., Any], *aligned: Any) -> _StreamedParts:
        return _StreamedParts(self, build, aligned)

    def map_rows(self, work: RowwiseWork) -> Any:
        def block(X: Any, start: int) -> list[np.ndarray]:
            X, function = work.prepare(X)
            return [to_numpy(function(X))]

        parts = self.map_reduce(block, lambda a, b: a + b)
        if work.sparse:
            return sp.vstack(parts, format="csr")
        return np.concatenate(parts, axis=0)


def _slice(values: Any, rows: slice) -> Any:
    """The rows ``rows`` of an aligned companion (None and numbers pass through)."""
    if values is None or np.ndim(values) == 0:
        return values
    part = values[rows]
    return part.compute() if hasattr(part, "compute") else part


def stream_rows(rows: Rows, device: Any) -> Rows:
    """``rows`` streamed to ``device`` (see ``kernelmaps._array_api.resolve_device``);
    the rows themselves when ``device`` is None or the rows are a device's already (an
    array of another library, which must then be on ``device``: else a ``ValueError``)."""
    if device is None:
        return rows
    xp, resolved = resolve_device(device)
    if is_numpy(rows.xp):  # host rows (every Rows has an xp: NumPy's for these)
        return StreamedRows(rows, xp, resolved)
    if rows.xp is not xp or not same_device(rows.device, resolved):
        raise ValueError(
            f"device={device!r} does not match where X is ({place_name(rows.X)}): pass "
            "device=None to work where X is, or move X to that device first."
        )
    return rows
