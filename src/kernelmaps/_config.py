"""Configuration of kernelmaps: the compute engine of the compiled kernels.

The elementwise work of several maps (the sines and cosines of random Fourier features,
the Walsh-Hadamard transforms of the structured maps, the bin keys of random binning,
the direct TensorSketch) has a compiled implementation built with numba, which is an
optional dependency (``pip install "kernelmaps[fast]"``), and a pure-numpy implementation
that gives the same results within a few units in the last place.  ``engine`` chooses
between them:

``"auto"`` (default)
    numba when it can be imported, numpy otherwise.
``"numba"``
    numba, and an ImportError naming the extra if it is not installed.
``"numpy"``
    numpy only, whether numba is installed or not.

The environment variable ``KERNELMAPS_ENGINE`` sets the initial process default.

Scope.  :func:`set_config` changes the process default, seen by every thread that has
not entered a :func:`config_context`.  :func:`config_context` sets a value local to the
current context (a :class:`contextvars.ContextVar`): two threads in different contexts do
not see each other's settings, and the row-block threads of a transform
(:func:`kernelmaps._parallel.run_blocks`) run in the context of the call that started
them.  :func:`get_config` returns a plain, picklable dict, and ``config_context(**cfg)``
re-enters it, in another thread or in another process.

Examples
--------
>>> import kernelmaps
>>> with kernelmaps.config_context(engine="numpy"):
...     cfg = kernelmaps.get_config()  # e.g. sent to a worker process with its task
>>> cfg
{'engine': 'numpy'}
>>> with kernelmaps.config_context(**cfg):  # in the worker: the caller's settings
...     kernelmaps.get_config()["engine"]
'numpy'
"""

from __future__ import annotations

import functools
import importlib.util
import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

__all__ = ["config_context", "get_config", "numba_enabled", "set_config"]

_ENGINES = ("auto", "numba", "numpy")


def _check_engine(engine: Any) -> str:
    if engine not in _ENGINES:
        raise ValueError(f"engine must be one of {', '.join(map(repr, _ENGINES))}; got {engine!r}.")
    return str(engine)


#: The process default, changed by :func:`set_config`.
_DEFAULTS: dict[str, Any] = {"engine": _check_engine(os.environ.get("KERNELMAPS_ENGINE", "auto"))}

#: The context-local engine set by :func:`config_context` (unset: the process default).
_ENGINE: ContextVar[str | None] = ContextVar("kernelmaps_engine", default=None)


def get_config() -> dict[str, Any]:
    """Current configuration of kernelmaps, as a new plain dict (``{"engine": ...}``).

    The dict is picklable; ``config_context(**get_config())`` re-enters it elsewhere.

    Examples
    --------
    >>> import kernelmaps
    >>> sorted(kernelmaps.get_config())
    ['engine']
    """
    local = _ENGINE.get()
    return {"engine": _DEFAULTS["engine"] if local is None else local}


def set_config(engine: str | None = None) -> None:
    """Set the process-wide default configuration of kernelmaps.

    Inside a :func:`config_context` the new value also applies to the current context
    until the context exits.

    Parameters
    ----------
    engine : {"auto", "numba", "numpy"}, optional
        Implementation of the compiled kernels; None leaves it unchanged.

    Examples
    --------
    >>> import kernelmaps
    >>> previous = kernelmaps.get_config()["engine"]
    >>> kernelmaps.set_config(engine="numpy")
    >>> kernelmaps.get_config()["engine"]
    'numpy'
    >>> kernelmaps.set_config(engine=previous)
    """
    if engine is None:
        return
    engine = _check_engine(engine)
    _DEFAULTS["engine"] = engine
    if _ENGINE.get() is not None:
        _ENGINE.set(engine)


@contextmanager
def config_context(engine: str | None = None) -> Iterator[None]:
    """Change the configuration within the current context only, restoring it on exit.

    Thread-safe: the setting is a :class:`contextvars.ContextVar`, so other threads keep
    theirs; the block threads of a transform inherit it.

    Parameters
    ----------
    engine : {"auto", "numba", "numpy"}, optional
        Implementation of the compiled kernels; None keeps the current one.

    Examples
    --------
    >>> import kernelmaps
    >>> with kernelmaps.config_context(engine="numpy"):
    ...     kernelmaps.get_config()["engine"]
    'numpy'
    """
    value = get_config()["engine"] if engine is None else _check_engine(engine)
    token = _ENGINE.set(value)
    try:
        yield
    finally:
        _ENGINE.reset(token)


@functools.cache
def numba_installed() -> bool:
    """Whether numba can be imported (checked once, without importing it).

    Examples
    --------
    >>> from kernelmaps._config import numba_installed
    >>> isinstance(numba_installed(), bool)
    True
    """
    return importlib.util.find_spec("numba") is not None


def numba_enabled() -> bool:
    """Whether the compiled kernels should run with numba under the current configuration.

    Called by the compute-kernel modules (``feature_maps/_trig.py``, ``_hadamard.py``,
    ``_binning_keys.py``, ``_sketch_kernels.py``), never by the estimators.

    Examples
    --------
    >>> import kernelmaps
    >>> from kernelmaps._config import numba_enabled
    >>> with kernelmaps.config_context(engine="numpy"):
    ...     numba_enabled()
    False
    """
    engine = get_config()["engine"]
    if engine == "numpy":
        return False
    if engine == "numba" and not numba_installed():
        raise ImportError(
            'engine="numba" needs numba: install it with pip install "kernelmaps[fast]", '
            'or set kernelmaps.set_config(engine="auto").'
        )
    return numba_installed()
