"""The repr of every kernelmaps estimator: scikit-learn's, with array-valued parameters
shown by their shape and dtype.

A map built on given points (``Nystroem(landmarks=X[:1024])``) or a model around it
would otherwise print the array's values, several lines of numbers that say less than
its shape.  :class:`CompactArrayReprMixin` gives an estimator scikit-learn's printer
(the changed parameters, nested estimators indented at their name) with one change:
an array, sparse matrix or tensor parameter prints as ``array(shape=(1024, 8),
dtype=float64)``, at any depth of nesting among kernelmaps estimators.
``get_params``, ``clone`` and equality are untouched: only the text differs.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import _pprint

__all__ = ["CompactArrayReprMixin", "array_summary"]

#: Elements of a list parameter shown before "...", as scikit-learn's repr.
_MAX_ELEMENTS = 30


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


class CompactArrayReprMixin:
    """scikit-learn's estimator repr with array-valued parameters shown compactly
    (:func:`array_summary`).  Put it before ``BaseEstimator`` among the bases.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import FeatureRidge, Nystroem
    >>> FeatureRidge(Nystroem(landmarks=np.zeros((1024, 8))))
    FeatureRidge(feature_map=Nystroem(landmarks=array(shape=(1024, 8), dtype=float64)))
    """

    def __repr__(self) -> str:
        printer = _CompactPrinter(
            compact=True, indent=1, indent_at_name=True, n_max_elements_to_show=_MAX_ELEMENTS
        )
        return printer.pformat(self)


class _CompactPrinter(_pprint._EstimatorPrettyPrinter):
    """scikit-learn's estimator printer that writes arrays by shape and dtype."""

    def format(self, object: Any, context: Any, maxlevels: Any, level: Any) -> Any:
        summary = array_summary(object)
        if summary is not None:
            return summary, False, False
        if isinstance(object, BaseEstimator):
            return self._estimator_line(object, context, maxlevels, level), False, False
        return super().format(object, context, maxlevels, level)

    def _estimator_line(self, estimator: Any, context: Any, maxlevels: Any, level: int) -> str:
        """``Name(a=1, b=array(...))`` on one line: the form tried before breaking lines."""
        if self._changed_only:
            params = _pprint._changed_params(estimator)
        else:
            params = estimator.get_params(deep=False)
        parts = [
            f"{name}={self.format(value, context, maxlevels, level + 1)[0]}"
            for name, value in sorted(params.items())
        ]
        return f"{type(estimator).__name__}({', '.join(parts)})"


# The printers choose how to lay out an object by its class's ``__repr__``: these
# estimators are laid out as scikit-learn's, here (``_CompactPrinter`` shares the table)
# and inside scikit-learn's own meta-estimators (a Pipeline), whose printer shows their
# arrays as it always does.
_pprint._EstimatorPrettyPrinter._dispatch[CompactArrayReprMixin.__repr__] = (
    _pprint._EstimatorPrettyPrinter._pprint_estimator
)
