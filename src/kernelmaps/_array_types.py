"""Dispatch on the type of an input array without importing the libraries that define it.

kernelmaps never imports Dask itself: an input can be a Dask array only if
``dask.array`` has been imported already (by the caller who made it), so the check looks
it up in :data:`sys.modules`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["is_dask_array"]

_Method = TypeVar("_Method", bound=Callable[..., Any])


def is_dask_array(X: Any) -> bool:
    """Whether ``X`` is a :class:`dask.array.Array` (False when Dask was never imported).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._array_types import is_dask_array
    >>> is_dask_array(np.ones(3))
    False
    """
    module = sys.modules.get("dask.array")
    return module is not None and isinstance(X, module.Array)
