"""The settings a task carries into another thread or process.

A task sent to a pool of processes or to a Dask worker runs with that worker's defaults,
not with the caller's :func:`kernelmaps.config_context` (the engine) nor its
:func:`sklearn.config_context` (``working_memory``, ``assume_finite``, ...).
:meth:`TaskSettings.capture` records both where the task is built, and
:meth:`TaskSettings.applied` re-enters them where it runs, with the row-block threads of
kernelmaps capped (the scheduler already runs one task per worker thread, so more threads
per task would oversubscribe the cores; the BLAS keeps the threads the worker gives it).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import sklearn

from ._config import config_context, get_config
from ._parallel import block_threads

__all__ = ["TaskSettings"]


def _sklearn_settings() -> dict[str, Any]:
    """scikit-learn's current configuration, restricted to what ``config_context`` takes."""
    accepted = inspect.signature(sklearn.config_context).parameters
    return {key: value for key, value in sklearn.get_config().items() if key in accepted}


@dataclass(frozen=True)
class TaskSettings:
    """kernelmaps' and scikit-learn's settings of the caller, picklable, to re-enter in a task.

    Parameters
    ----------
    kernelmaps : dict
        :func:`kernelmaps.get_config` of the caller.
    sklearn : dict
        :func:`sklearn.get_config` of the caller (the keys ``config_context`` accepts).
    block_threads : int or None, default=1
        Row-block threads a task may use (None: one per core).

    Examples
    --------
    >>> import sklearn
    >>> import kernelmaps
    >>> from kernelmaps._task_settings import TaskSettings
    >>> with kernelmaps.config_context(engine="numpy"), sklearn.config_context(working_memory=64):
    ...     settings = TaskSettings.capture()
    >>> with settings.applied():  # e.g. in a worker process
    ...     kernelmaps.get_config()["engine"], sklearn.get_config()["working_memory"]
    ('numpy', 64)
    """

    kernelmaps: dict[str, Any] = field(default_factory=get_config)
    sklearn: dict[str, Any] = field(default_factory=_sklearn_settings)
    block_threads: int | None = 1

    @classmethod
    def capture(cls, block_threads: int | None = 1) -> TaskSettings:
        """The settings of the current context."""
        return cls(get_config(), _sklearn_settings(), block_threads)

    @contextmanager
    def applied(self) -> Iterator[None]:
        """Run the enclosed code under these settings (restored on exit)."""
        with (
            config_context(**self.kernelmaps),
            sklearn.config_context(**self.sklearn),
            block_threads(self.block_threads),
        ):
            yield

    def call(self, func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``func(*args, **kwargs)`` under these settings."""
        with self.applied():
            return func(*args, **kwargs)
