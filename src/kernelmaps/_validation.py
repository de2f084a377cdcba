"""Input checks shared by every layer: scikit-learn's multi-line validation errors made one
line (:func:`one_line_errors`), its ``Interval`` refusing booleans (:class:`StrictInterval`),
and the domain checks of non-negative data and data above a bound (the chi-squared kernels
and samplers: :func:`check_non_negative`, :func:`check_above`), for arrays of any library.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval

from ._array_api import get_namespace

__all__ = ["StrictInterval", "check_above", "check_non_negative", "one_line_errors"]


@contextmanager
def one_line_errors(owner: str | None = None) -> Iterator[None]:
    """Re-raise scikit-learn's multi-line ``ValueError`` of input validation as one line.

    ``check_array`` explains NaN input and 1D input over several lines (the second one
    printing the whole array); every bad input of kernelmaps gets one line naming the
    problem and the fix.  ``owner`` names the estimator in the NaN message.  numpy's
    floating-point warnings are silenced inside (the finiteness check sums the input
    first, and ``inf + -inf`` warns before the input is refused with its message).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.utils import check_array
    >>> from kernelmaps._validation import one_line_errors
    >>> with one_line_errors():
    ...     check_array(np.arange(3.0))
    Traceback (most recent call last):
    ...
    ValueError: Expected 2D array, got 1D array instead. Reshape your data either ...
    """
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            yield
    except ValueError as error:
        message = str(error)
        if type(error) is not ValueError or "\n" not in message.strip():
            raise
        lines = [line.strip() for line in message.strip().splitlines()]
        first = lines[0].rstrip(".:")
        if "contains NaN" in first:
            who = f"{owner} does" if owner else "kernelmaps does"
            text = (
                f"{first}: {who} not accept missing values; impute them (e.g. with "
                "sklearn.impute.SimpleImputer) or drop those rows."
            )
        else:
            rest = [line for line in lines[1:] if line and not line.startswith("array=")]
            text = ". ".join([first, " ".join(rest)]) if rest else f"{first}."
        raise ValueError(text) from None


class StrictInterval(Interval):
    """scikit-learn's ``Interval``, refusing booleans.

    ``True`` is an ``Integral`` (and a ``Real``) to Python, so scikit-learn's interval
    accepts ``n_components=True`` as 1; every estimator of kernelmaps refuses it with the
    usual "must be an int in the range ..." message.

    Examples
    --------
    >>> from numbers import Integral
    >>> from kernelmaps._validation import StrictInterval
    >>> constraint = StrictInterval(Integral, 1, None, closed="left")
    >>> constraint.is_satisfied_by(3), constraint.is_satisfied_by(True)
    (True, False)
    """

    def is_satisfied_by(self, val: Any) -> bool:
        if isinstance(val, (bool, np.bool_)):
            return False
        return bool(super().is_satisfied_by(val))


def _min_value(X: Any) -> float:
    """The smallest entry of ``X`` (dense or sparse, any library); 0 when empty."""
    if sp.issparse(X):
        data_min = float(X.data.min()) if X.nnz else 0.0
        has_zero = X.nnz < X.shape[0] * X.shape[1]
        return min(data_min, 0.0) if has_zero else data_min
    xp, _ = get_namespace(X)
    return float(xp.min(X)) if math.prod(X.shape) else 0.0


def check_non_negative(X: Any, owner: str) -> None:
    """Refuse negative entries, naming the problem and the fix.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._validation import check_non_negative
    >>> check_non_negative(np.array([[0.0, 1.0]]), "AdditiveChi2")  # passes silently
    """
    lowest = _min_value(X)
    if not lowest >= 0:  # also catches NaN
        raise ValueError(
            f"Negative values in data passed to {owner}, which is defined on non-negative "
            f"data (histograms): X has a value of {lowest:g}. Shift or rescale the data to "
            "be non-negative, e.g. with sklearn.preprocessing.MinMaxScaler."
        )


def check_above(X: Any, bound: float, owner: str, name: str) -> None:
    """Refuse entries ``<= bound`` (the skewed chi-squared kernel needs ``x > -c``).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._validation import check_above
    >>> check_above(np.array([[-0.5, 1.0]]), -1.0, "SkewedChi2", "skewedness")  # passes
    """
    lowest = _min_value(X)
    if not lowest > bound:
        raise ValueError(
            f"Negative values in data passed to {owner} reach {lowest:g}; X may not contain "
            f"entries smaller than -{name} (nor equal to it): every value of X must be "
            f"greater than -{name} = {bound:g}. Increase {name} or shift the data."
        )
