"""Cells running side by side in one process: their warnings and thread limits apart.

Cells of an experiment may run as threads of one process (a thread pool, a Dask worker
with several threads).  The warnings filters and the BLAS thread pool belong to the
process, so entering and leaving them per cell would restore them in whatever order the
cells finish: :func:`capture_warnings` routes each warning to the cell whose context
issued it, and :func:`limit_threads` limits the thread pools in the way that is safe for
where the cell runs.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
import warnings
from collections.abc import Callable, Iterator
from typing import TextIO

from .._parallel import threadpool_controller

__all__ = ["capture_warnings", "limit_threads"]


class _ProcessWide:
    """A process-wide setting entered by the first of the cells running at once in this
    process and left by the last.

    The warnings filters (and ``warnings.showwarning``) belong to the process: cells
    running in threads of one process (a thread pool, a Dask worker with several
    threads) that each entered and left ``warnings.catch_warnings`` would restore them
    in whatever order they finish, leaving a stale state behind (and one cell's record
    receiving another's warnings).
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.depth = 0
        self.stack: contextlib.ExitStack | None = None

    @contextlib.contextmanager
    def held(self, enter: Callable[[contextlib.ExitStack], None]) -> Iterator[None]:
        with self.lock:
            if self.depth == 0:
                stack = contextlib.ExitStack()
                try:
                    enter(stack)
                except BaseException:
                    stack.close()
                    raise
                self.stack = stack
            self.depth += 1
        try:
            yield
        finally:
            with self.lock:
                self.depth -= 1
                if self.depth == 0 and self.stack is not None:
                    stack, self.stack = self.stack, None
                    stack.close()


_WARNING_CAPTURE = _ProcessWide()

#: The warnings of the cell running in the current context (None: not in a cell).
_CAUGHT: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar(
    "kernelmaps_cell_warnings", default=None
)


@contextlib.contextmanager
def limit_threads(threads: int | None, blas: bool = True) -> Iterator[None]:
    """BLAS and OpenMP pools limited to ``threads`` threads while inside.

    OpenMP's limit is the calling thread's.  The BLAS pool (OpenBLAS with pthreads) is
    the process's, and threadpoolctl lets one thread at a time set it.  A run on an
    executor therefore holds the BLAS limit in the calling thread for the whole run, and
    its cells that run in threads of the calling process (a thread pool) limit only
    their own OpenMP (``blas=False``): a limiter entered in one of those threads would,
    on leaving, restore the number of threads it saw on entering, which may be stale.
    Cells in other processes set both.
    """
    if threads is None:
        yield
        return
    controller = threadpool_controller()
    if not blas:
        # A controller of the OpenMP libraries only: a limiter restores every library
        # of its controller on leaving.
        controller = controller.select(user_api="openmp")
    with controller.limit(limits=threads):
        yield


def _route_warnings(stack: contextlib.ExitStack) -> None:
    """Show every warning ("always"), each to the cell whose context issued it."""
    stack.enter_context(warnings.catch_warnings())
    warnings.simplefilter("always")
    previous = warnings.showwarning

    def show(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        caught = _CAUGHT.get()
        if caught is None:  # another thread of the process, outside any cell
            previous(message, category, filename, lineno, file, line)
        else:
            caught.append(str(message))

    warnings.showwarning = show


@contextlib.contextmanager
def capture_warnings() -> Iterator[list[str]]:
    """The messages of the warnings issued in the current context (and the row-block
    threads it starts) while inside; cells in other threads keep theirs."""
    caught: list[str] = []
    token = _CAUGHT.set(caught)
    try:
        with _WARNING_CAPTURE.held(_route_warnings):
            yield caught
    finally:
        _CAUGHT.reset(token)
