"""Cells as tasks of a :class:`concurrent.futures.Executor`: the rows kept by the
processes that run them, and what the executor is.

The prepared rows of a data set travel with the first tasks sent to a worker process and
are kept there under a digest of their contents (the last ``_TASK_DATA_KEPT`` data sets),
so that the tasks that follow need not carry them.

How many tasks an executor runs at once, and how it is described in the provenance, are
asked of the executor itself, without importing its library: an executor may state them as
``slots`` (an int), ``description`` (a str) and ``libraries`` (the packages whose versions
the provenance records), as :class:`DescribedExecutor` does for the Dask client of
``kernelmaps compare --workers / --scheduler``; otherwise the ``_max_workers`` of the
standard library's pools, and for a Dask client's ``client.get_executor()`` (recognised by
the module of its type) the cores of this machine.  This module does not import Dask.
"""

from __future__ import annotations

import collections
import concurrent.futures as cf
import hashlib
import os
import pickle
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from ._prepare import PreparedData

__all__ = [
    "PENDING_PER_SLOT",
    "DescribedExecutor",
    "data_token",
    "describe_executor",
    "executor_libraries",
    "executor_slots",
    "forget_task_data",
    "task_data",
]


#: Tasks pending at once per task an executor runs at once.
PENDING_PER_SLOT = 2

#: Data sets a process keeps for the tasks that follow (least recently used dropped).
_TASK_DATA_KEPT = 4
_TASK_DATA: collections.OrderedDict[str, PreparedData] = collections.OrderedDict()
_TASK_DATA_LOCK = threading.Lock()


def data_token(data: PreparedData) -> str:
    """A digest of the prepared rows: the name under which processes keep them."""
    h = hashlib.blake2b(digest_size=16)
    h.update(repr((data.name, data.task, data.in_sample, data.n_rows, data.n_features)).encode())
    for array in (data.X_fit, data.X_eval, data.y_fit, data.y_eval):
        if array is None:
            h.update(b"none")
            continue
        array = np.ascontiguousarray(array)
        h.update(repr((array.dtype.str, array.shape)).encode())
        h.update(pickle.dumps(array, protocol=5) if array.dtype.hasobject else array.tobytes())
    return h.hexdigest()


def task_data(token: str, data: PreparedData | None) -> PreparedData | None:
    """The rows named ``token``: kept when sent, else those this process kept (or None)."""
    with _TASK_DATA_LOCK:
        if data is not None:
            _TASK_DATA[token] = data
        else:
            data = _TASK_DATA.get(token)
            if data is None:
                return None
        _TASK_DATA.move_to_end(token)
        while len(_TASK_DATA) > _TASK_DATA_KEPT:
            _TASK_DATA.popitem(last=False)
        return data


def forget_task_data(tokens: Iterable[str]) -> None:
    with _TASK_DATA_LOCK:
        for token in tokens:
            _TASK_DATA.pop(token, None)


class DescribedExecutor(cf.Executor):
    """An executor that states how many tasks it runs at once and what it is.

    Parameters
    ----------
    executor : concurrent.futures.Executor
        The executor the tasks are submitted to.
    slots : int
        How many tasks it runs at once.
    description : str
        What it is, for the provenance (``"dask: 4 workers, 8 threads, scheduler ..."``).
    libraries : tuple of str, default=()
        The packages it runs on, whose versions the provenance records.

    Examples
    --------
    >>> from concurrent.futures import ThreadPoolExecutor
    >>> from kernelmaps.experiments._executor import DescribedExecutor, describe_executor
    >>> with DescribedExecutor(ThreadPoolExecutor(2), 2, "two threads") as executor:
    ...     executor.submit(pow, 2, 3).result(), describe_executor(executor)
    (8, 'two threads')
    """

    def __init__(
        self,
        executor: cf.Executor,
        slots: int,
        description: str,
        libraries: tuple[str, ...] = (),
    ) -> None:
        self.executor = executor
        self.slots = int(slots)
        self.description = description
        self.libraries = tuple(libraries)

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> cf.Future[Any]:
        """Run ``fn(*args, **kwargs)`` on the wrapped executor; its future."""
        return self.executor.submit(fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Shut the wrapped executor down, as :meth:`concurrent.futures.Executor.shutdown`."""
        self.executor.shutdown(wait=wait, cancel_futures=cancel_futures)


def _is_dask(executor: Any) -> bool:
    """Whether ``executor`` is a Dask client's (judged by the module of its type)."""
    return type(executor).__module__.startswith("distributed")


def executor_libraries(executor: Any) -> tuple[str, ...]:
    """The packages ``executor`` runs on, beyond the standard library's."""
    if executor is None:
        return ()
    stated = getattr(executor, "libraries", None)
    if isinstance(stated, tuple):
        return stated
    return ("dask", "distributed") if _is_dask(executor) else ()


def executor_slots(executor: cf.Executor) -> int:
    """How many tasks ``executor`` runs at once (the cores of this machine if unknown)."""
    for name in ("slots", "_max_workers"):  # a DescribedExecutor; the standard pools
        n = getattr(executor, name, None)
        if isinstance(n, int) and n > 0:
            return n
    return os.cpu_count() or 1


def describe_executor(executor: cf.Executor | None) -> str:
    """Where the cells ran, for the provenance."""
    if executor is None:
        return "sequential"
    stated = getattr(executor, "description", None)
    if isinstance(stated, str):
        return stated
    if _is_dask(executor):
        return "dask"
    n = getattr(executor, "_max_workers", None)
    name = type(executor).__name__
    return f"{name}: {n} workers" if isinstance(n, int) else name
