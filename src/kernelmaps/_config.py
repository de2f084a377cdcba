"""Global configuration of kernelmaps: the compute engine of the compiled kernels.

The elementwise work of several maps (the sines and cosines of random Fourier features,
the Walsh-Hadamard transforms of the structured maps) has a compiled implementation
built with numba, which is an optional dependency (``pip install "kernelmaps[fast]"``),
and a pure-numpy implementation that gives the same results within a few units in the
last place.  ``engine`` chooses between them:

``"auto"`` (default)
    numba when it can be imported, numpy otherwise.
``"numba"``
    numba, and an ImportError naming the extra if it is not installed.
``"numpy"``
    numpy only, whether numba is installed or not.

The environment variable ``KERNELMAPS_ENGINE`` sets the initial value.
"""

from __future__ import annotations

import functools
import importlib.util
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["config_context", "get_config", "numba_enabled", "set_config"]

_ENGINES = ("auto", "numba", "numpy")


def _check_engine(engine: Any) -> str:
    if engine not in _ENGINES:
        raise ValueError(f"engine must be one of {', '.join(map(repr, _ENGINES))}; got {engine!r}.")
    return str(engine)


_CONFIG: dict[str, Any] = {"engine": _check_engine(os.environ.get("KERNELMAPS_ENGINE", "auto"))}


def get_config() -> dict[str, Any]:
    """Current configuration of kernelmaps, as a new dict (``{"engine": ...}``)."""
    return dict(_CONFIG)


def set_config(engine: str | None = None) -> None:
    """Set the global configuration of kernelmaps.

    Parameters
    ----------
    engine : {"auto", "numba", "numpy"}, optional
        Implementation of the compiled kernels; None leaves it unchanged.
    """
    if engine is not None:
        _CONFIG["engine"] = _check_engine(engine)


@contextmanager
def config_context(engine: str | None = None) -> Iterator[None]:
    """Temporarily change the configuration, as :func:`set_config`, restoring it on exit.

    Examples
    --------
    >>> import kernelmaps
    >>> with kernelmaps.config_context(engine="numpy"):
    ...     kernelmaps.get_config()["engine"]
    'numpy'
    """
    saved = get_config()
    set_config(engine=engine)
    try:
        yield
    finally:
        _CONFIG.update(saved)


@functools.cache
def numba_installed() -> bool:
    """Whether numba can be imported (checked once, without importing it)."""
    return importlib.util.find_spec("numba") is not None


def numba_enabled() -> bool:
    """Whether the compiled kernels should run with numba under the current configuration."""
    engine = _CONFIG["engine"]
    if engine == "numpy":
        return False
    if engine == "numba" and not numba_installed():
        raise ImportError(
            'engine="numba" needs numba: install it with pip install "kernelmaps[fast]", '
            'or set kernelmaps.set_config(engine="auto").'
        )
    return numba_installed()
