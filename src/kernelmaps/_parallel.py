"""Row-block parallelism: one thread per core, BLAS kept to one thread inside each.

numpy's ufuncs, BLAS and the compiled kernels release the GIL, so row blocks handed to
threads run truly in parallel.  Inside such threads a multithreaded BLAS would
oversubscribe the cores (and its idle workers spin while the elementwise work runs), so
the BLAS is limited to one thread for the duration through threadpoolctl, which
scikit-learn already depends on.  The limit is process-wide while it lasts.

Each block runs in a copy of the caller's :mod:`contextvars` context, so a block thread
sees the caller's :func:`kernelmaps.config_context` (the engine), not the settings of
whichever thread last used the pool.
"""

from __future__ import annotations

import contextvars
import itertools
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from functools import cache
from typing import Any

import numpy as np

__all__ = ["block_threads", "n_threads", "parallel_rows", "run_blocks"]

_THREAD_PREFIX = "kernelmaps-block"
# Below this many elements of work, one thread does it (a hand-off costs ~10 us).
MIN_PARALLEL_ELEMENTS = 1 << 16


#: A cap on the block threads of the current context (None: one per core).  Set inside
#: the tasks of a parallel scheduler, whose workers already run one task per thread.
_BLOCK_THREADS: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "kernelmaps_block_threads", default=None
)


@contextmanager
def block_threads(limit: int | None) -> Iterator[None]:
    """Run at most ``limit`` row-block threads in the current context (None: no cap).

    A task of a parallel scheduler (a Dask worker thread, a process of a pool) runs its
    row blocks with ``limit=1``: the scheduler already runs one task per thread, and more
    threads per task would oversubscribe the cores.

    Examples
    --------
    >>> from kernelmaps._parallel import block_threads, n_threads
    >>> with block_threads(1):
    ...     n_threads()
    1
    """
    token = _BLOCK_THREADS.set(None if limit is None else max(1, int(limit)))
    try:
        yield
    finally:
        _BLOCK_THREADS.reset(token)


def n_threads() -> int:
    """Number of block threads a transform may use: the cores this process may run on,
    capped by :func:`block_threads`.

    Examples
    --------
    >>> from kernelmaps._parallel import n_threads
    >>> n_threads() >= 1
    True
    """
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - platforms without affinity
        cores = os.cpu_count() or 1
    cap = _BLOCK_THREADS.get()
    return cores if cap is None else min(cores, cap)


@cache
def _executor(workers: int) -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=workers, thread_name_prefix=_THREAD_PREFIX)


# A forked child has none of the parent's worker threads: give it a new pool.
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_executor.cache_clear)


#: Serializes threadpoolctl's scans of the loaded libraries: scans from several threads
#: at once can crash the process (threadpoolctl issues 239 and 243).
_SCAN_LOCK = threading.Lock()


def threadpool_controller() -> Any:
    """A new :class:`threadpoolctl.ThreadpoolController` (the libraries loaded now), its
    scan made under a process-wide lock."""
    from threadpoolctl import ThreadpoolController

    with _SCAN_LOCK:
        return ThreadpoolController()


@cache
def _controller() -> Any:
    return threadpool_controller()


def single_threaded_blas() -> Any:
    """Context manager limiting the BLAS to one thread.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._parallel import single_threaded_blas
    >>> with single_threaded_blas():
    ...     float(np.ones((2, 2)) @ np.ones(2) @ np.ones(2))
    4.0
    """
    return _controller().limit(limits=1, user_api="blas")


def run_blocks(func: Callable[[slice], None], blocks: Sequence[slice], n_elements: int) -> None:
    """Run ``func(rows)`` for every block, on one thread per core when it pays.

    ``func`` must write only its own rows and release the GIL for its heavy work.
    Every block runs in a copy of the caller's context (:func:`contextvars.copy_context`).
    Exceptions are raised in the caller after every block has finished.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._parallel import run_blocks
    >>> out = np.zeros(6)
    >>> def work(rows):
    ...     out[rows] = rows.start
    >>> run_blocks(work, [slice(0, 2), slice(2, 6)], n_elements=6)
    >>> out
    array([0., 0., 2., 2., 2., 2.])
    """
    workers = min(n_threads(), len(blocks))
    # Inside a worker of the pool already (nested call): run here, never wait on the pool.
    nested = threading.current_thread().name.startswith(_THREAD_PREFIX)
    if workers <= 1 or n_elements < MIN_PARALLEL_ELEMENTS or nested:
        for rows in blocks:
            func(rows)
        return
    pool = _executor(workers)
    with single_threaded_blas():
        futures = [pool.submit(contextvars.copy_context().run, func, rows) for rows in blocks]
        errors = [f.exception() for f in futures]
    for error in errors:
        if error is not None:
            raise error


def parallel_rows(func: Callable[[slice], None], n_rows: int, n_elements: int) -> None:
    """Run ``func(rows)`` over contiguous row ranges, one per core, and wait for all.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._parallel import parallel_rows
    >>> seen = np.zeros(10, dtype=int)
    >>> def work(rows):
    ...     seen[rows] += 1
    >>> parallel_rows(work, 10, n_elements=10)
    >>> bool(np.all(seen == 1))
    True
    """
    workers = min(n_threads(), n_rows)
    bounds = np.linspace(0, n_rows, max(workers, 1) + 1).astype(int)
    run_blocks(func, [slice(a, b) for a, b in itertools.pairwise(bounds)], n_elements)
