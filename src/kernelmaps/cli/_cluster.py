"""Where ``kernelmaps compare`` runs its cells: here, or on a Dask cluster.

Dask is optional: ``distributed`` is imported only when ``--workers`` or ``--scheduler``
asks for it (:func:`check_options`, :func:`cell_executor`).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from concurrent.futures import Executor
from typing import Any

from ..experiments import DescribedExecutor
from ._common import UserError

INSTALL_HINT = 'pip install "kernelmaps[dask]"'


def check_options(workers: int | None = None, scheduler: str | None = None) -> Any:
    """``distributed`` if ``workers`` or ``scheduler`` asks for it (else None), or a user
    error: both given, ``workers`` below 1, distributed not installed.

    Examples
    --------
    >>> from kernelmaps.cli._cluster import check_options
    >>> check_options() is None
    True
    >>> check_options(workers=0)
    Traceback (most recent call last):
    ...
    kernelmaps.cli._common.UserError: --workers must be at least 1, got 0.
    """
    if workers is not None and scheduler is not None:
        raise UserError("--workers and --scheduler exclude each other; give one.")
    if workers is None and scheduler is None:
        return None
    if workers is not None and workers < 1:
        raise UserError(f"--workers must be at least 1, got {workers}.")
    option = "--workers" if workers is not None else "--scheduler"
    try:
        import distributed
    except ImportError:
        raise UserError(
            f"{option} needs Dask's distributed scheduler, which is not installed. "
            f"Get it with: {INSTALL_HINT}"
        ) from None
    return distributed


def dask_setup(worker: Any) -> None:
    """Preload of the local workers: Ctrl-C is for the command, not for them.

    Ctrl-C in a terminal interrupts every process of the foreground group, the worker
    processes too: they would die printing tracebacks while the command cancels the
    cells and closes the cluster.  This runs in each worker process as it starts.
    """
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


@contextlib.contextmanager
def _quiet_logs() -> Iterator[None]:
    """distributed's loggers at the warnings level (its info lines are not for us)."""
    loggers = [logging.getLogger(name) for name in ("distributed", "dask")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


def _configured_preloads() -> list[str]:
    """The worker preloads of the user's Dask configuration (kept)."""
    import dask

    preloads = dask.config.get("distributed.worker.preload", default=None) or []
    return [preloads] if isinstance(preloads, str) else list(preloads)


def _described(client: Any) -> DescribedExecutor:
    """The client's executor, stating its threads and its scheduler for the runner."""
    nthreads = client.nthreads()
    threads = sum(nthreads.values())
    address = client.scheduler_info().get("address", "?")
    return DescribedExecutor(
        client.get_executor(),
        max(1, threads),
        f"dask: {len(nthreads)} workers, {threads} threads, scheduler {address}",
        ("dask", "distributed"),
    )


@contextlib.contextmanager
def cell_executor(
    workers: int | None = None, scheduler: str | None = None
) -> Iterator[Executor | None]:
    """The executor of the cells: None (here, one after the other) or a Dask client's.

    ``workers``: start a local cluster of that many worker processes with one thread
    each (no dashboard); ``scheduler``: connect to the running scheduler at that address.
    The client, and the cluster started here, are closed on leaving, whatever happens.

    Parameters
    ----------
    workers : int, default=None
        Worker processes of a new local cluster.
    scheduler : str, default=None
        Address of a running scheduler (``tcp://host:8786``).

    Yields
    ------
    concurrent.futures.Executor or None

    Examples
    --------
    >>> from kernelmaps.cli._cluster import cell_executor
    >>> with cell_executor() as executor:  # neither option: the cells run here
    ...     executor is None
    True
    """
    distributed = check_options(workers, scheduler)
    if distributed is None:
        yield None
        return
    with contextlib.ExitStack() as stack:
        stack.enter_context(_quiet_logs())
        if workers is not None:
            cluster = stack.enter_context(
                distributed.LocalCluster(
                    n_workers=workers,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=None,
                    # No dashboard; the scheduler's HTTP server (health checks) on a free
                    # port of the loopback interface, not on 8787.
                    scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                    silence_logs=logging.WARNING,
                    preload=[*_configured_preloads(), __name__],
                )
            )
            client = stack.enter_context(distributed.Client(cluster))
        else:
            try:
                client = stack.enter_context(distributed.Client(scheduler))
            except (OSError, TimeoutError, ValueError) as exc:
                raise UserError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None
        yield _described(client)
