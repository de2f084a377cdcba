"""Dispatch on the type of an input array without importing the libraries that define it.

kernelmaps never imports Dask itself: an input can be a Dask array only if
``dask.array`` has been imported already (by the caller who made it), so the check looks
it up in :data:`sys.modules`.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["dask_rowwise", "is_dask_array"]

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


def dask_rowwise(method: _Method) -> _Method:
    """Decorator of a row-wise method ``method(self, X)`` (``transform``, ``predict``, ...):
    for a Dask array ``X`` it returns the lazy Dask array of the method over the chunks of
    ``X`` (:func:`kernelmaps._dask.map_method`); other input goes to ``method`` itself.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._array_types import dask_rowwise
    >>> class Twice:
    ...     @dask_rowwise
    ...     def predict(self, X):
    ...         return 2 * np.asarray(X)
    >>> Twice().predict([1, 2])
    array([2, 4])
    """

    @functools.wraps(method)
    def rowwise(self: Any, X: Any, *args: Any, **kwargs: Any) -> Any:
        if is_dask_array(X):
            from ._dask import map_method

            if args or kwargs:
                raise TypeError(f"{method.__name__} takes only X for a Dask array.")
            return map_method(self, method.__name__, X)
        return method(self, X, *args, **kwargs)

    return rowwise  # type: ignore[return-value]
