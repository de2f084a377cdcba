"""What ``print`` shows of a kernelmaps estimator: scikit-learn's repr, with the NumPy
arrays among its parameters shown by their shape and dtype.

A map built on given points (``Nystroem(landmarks=X[:1024])``), or a model around one,
would otherwise print the array's values: lines of numbers that say less than its shape.
:class:`CompactArrayReprMixin` gives ``str`` (what ``print`` and f-strings show)
scikit-learn's layout with every NumPy array, at any depth of nesting, written as
``array(shape=(1024, 8), dtype=float64)``, through NumPy's public print options.
``repr`` stays scikit-learn's own (the full values, as ``repr`` of an array gives), and
``get_params``, ``clone`` and equality are untouched: only the text differs.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

__all__ = ["CompactArrayReprMixin", "array_summary", "compact_arrays"]


def array_summary(value: Any) -> str | None:
    """``array(shape=(2, 3), dtype=float64)`` for an array-valued ``value`` (a NumPy
    array, sparse matrix, tensor or Dask array: anything with a shape and a dtype that is
    not a scalar); None for anything else.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._estimator_repr import array_summary
    >>> array_summary(np.zeros((1024, 8)))
    'array(shape=(1024, 8), dtype=float64)'
    >>> array_summary(np.float64(1.0)) is None, array_summary([1.0, 2.0]) is None
    (True, True)
    """
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if shape is None or dtype is None or isinstance(value, np.generic):
        return None
    try:
        dims = tuple(int(n) for n in shape)
    except (TypeError, ValueError):  # a lazy array of unknown length (NaN)
        dims = tuple(shape)
    name = "array" if isinstance(value, np.ndarray) else type(value).__name__
    return f"{name}(shape={dims}, dtype={dtype})"


@contextlib.contextmanager
def compact_arrays() -> Iterator[None]:
    """NumPy arrays written by :func:`array_summary` inside the block (NumPy 2's
    ``override_repr`` print option; with an older NumPy, their first and last values).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._estimator_repr import compact_arrays
    >>> with compact_arrays():
    ...     print([np.zeros((3, 2))])
    [array(shape=(3, 2), dtype=float64)]
    """
    if "override_repr" in np.get_printoptions():
        options: dict[str, Any] = {"override_repr": array_summary}
    else:  # pragma: no cover - NumPy < 2
        options = {"threshold": 0, "edgeitems": 1}
    with np.printoptions(**options):
        yield


class CompactArrayReprMixin:
    """``str`` of an estimator: scikit-learn's repr with NumPy array parameters shown
    by shape and dtype (:func:`array_summary`).  Put it before ``BaseEstimator`` among
    the bases; ``repr`` stays scikit-learn's.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import FeatureRidge, Nystroem
    >>> print(FeatureRidge(Nystroem(landmarks=np.zeros((1024, 8)))))
    FeatureRidge(feature_map=Nystroem(landmarks=array(shape=(1024, 8), dtype=float64)))
    """

    def __str__(self) -> str:
        with compact_arrays():
            return repr(self)
