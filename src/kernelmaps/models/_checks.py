"""Checks shared by the models: sample weights, overflow of sums and solutions, finite output.

The rule: a fit ends with finite coefficients or raises
:class:`~kernelmaps.exceptions.NonFiniteOutputError` naming what overflowed and the fix,
and a prediction is finite or raises the same.  The checks run on the small objects (the
statistics or the kernel matrix before the solve, the coefficients after it, each block of
predictions), never on another pass over the data.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn import get_config
from sklearn.utils.validation import _check_sample_weight

from ..exceptions import NonFiniteOutputError
from ._ridge_statistics import RidgeStatistics

__all__ = [
    "check_sample_weight",
    "check_solution",
    "check_statistics",
    "check_sums",
    "check_weight_values",
]

_SAME_MODEL = "dividing sample_weight by a constant c gives the same model with alpha / c"


def check_weight_values(w: np.ndarray, start: int = 0) -> None:
    """Refuse negative weights and weights whose sum overflows float64.

    ``w`` has been checked for its shape and finiteness (scikit-learn's
    ``_check_sample_weight``); they are the weights of rows ``start, start + 1, ...``
    (a chunk's), for the message.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models._checks import check_weight_values
    >>> check_weight_values(np.array([1.0, 0.0, 2.5]))  # fine: returns None
    >>> check_weight_values(np.array([1.0, -2.0]))
    Traceback (most recent call last):
    ...
    ValueError: sample_weight holds negative values (the smallest, -2, at row 1); ...
    """
    if w.size == 0:
        return
    smallest = int(np.argmin(w))
    if w[smallest] < 0:
        raise ValueError(
            f"sample_weight holds negative values (the smallest, {w[smallest]:.6g}, at row "
            f"{start + smallest}); sample weights must be >= 0: drop those rows or give them "
            "weight 0."
        )
    with np.errstate(over="ignore"):
        total = float(np.sum(w))
    if not np.isfinite(total):
        raise ValueError(
            f"sample_weight sums to more than float64 can hold (the largest weight is "
            f"{float(np.max(w)):.3g}); rescale it: {_SAME_MODEL}."
        )


def check_sample_weight(sample_weight: Any, X: Any) -> np.ndarray:
    """``sample_weight`` for the rows of ``X`` as float64: ones when None; of the right
    length, finite, not all zero (scikit-learn's messages), nonnegative, of finite sum.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models._checks import check_sample_weight
    >>> check_sample_weight([1, 2], np.zeros((2, 3))).tolist()
    [1.0, 2.0]
    """
    if sample_weight is None:
        return np.ones(X.shape[0])
    w = np.asarray(_check_sample_weight(sample_weight, X), dtype=np.float64)
    check_weight_values(w)
    return w


def _largest_weight(largest_weight: float | None) -> str:
    if largest_weight is None or largest_weight <= 1.0:
        return ""
    return f"; the largest sample_weight is {largest_weight:.3g}"


def check_sums(
    name: str,
    features: Any,
    targets: Any,
    *,
    what: tuple[str, str],
    largest_weight: float | None = None,
) -> None:
    """Raise :class:`NonFiniteOutputError` if the sums of the features (``features``) or
    of the targets (``targets``, arrays or floats) hold inf or NaN.

    ``what`` names the two, e.g. ``("the weighted Gram matrix Z^T W Z", "the target
    sums Z^T W y and y^T W y")``.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models._checks import check_sums
    >>> check_sums("FeatureRidge", [np.ones(2)], [np.ones(1)], what=("G", "C"))
    >>> check_sums("FeatureRidge", [np.array([np.inf])], [], what=("G", "C"))
    Traceback (most recent call last):
    ...
    kernelmaps.exceptions.NonFiniteOutputError: FeatureRidge: G holds inf or NaN: it overflowed ...
    """
    weights = _largest_weight(largest_weight)
    unchecked = (
        ", or X or y hold NaN or inf, unchecked under scikit-learn's assume_finite=True"
        if get_config()["assume_finite"]
        else ""
    )
    if not all(np.all(np.isfinite(a)) for a in features):
        raise NonFiniteOutputError(
            f"{name}: {what[0]} holds inf or NaN: it overflowed float64 (the features or "
            f"the sample weights are too large{weights}{unchecked}); rescale X (e.g. "
            f"standardise its columns) or the sample weights ({_SAME_MODEL})."
        )
    if not all(np.all(np.isfinite(a)) for a in targets):
        raise NonFiniteOutputError(
            f"{name}: {what[1]} holds inf or NaN: it overflowed float64 (the targets or "
            f"the sample weights are too large{weights}{unchecked}); rescale y (e.g. divide "
            f"it by its standard deviation: the predictions scale with it) or the sample "
            f"weights ({_SAME_MODEL})."
        )


def check_statistics(
    name: str, stats: RidgeStatistics, *, largest_weight: float | None = None
) -> None:
    """Refuse statistics holding inf or NaN (the sums overflowed), before any solve.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models import RidgeStatistics
    >>> from kernelmaps.models._checks import check_statistics
    >>> stats = RidgeStatistics(1, 1).update(np.ones((2, 1)), np.ones((2, 1)), np.ones(2))
    >>> check_statistics("FeatureRidge", stats)  # finite: returns None
    """
    if not np.isfinite(stats.weight_sum):
        raise ValueError(
            f"{name}: sample_weight sums to more than float64 can hold over the rows "
            f"seen; rescale it: {_SAME_MODEL}."
        )
    check_sums(
        name,
        (stats.gram, stats.sum_z, stats.shift_z),
        (stats.cross, stats.sum_y, stats.sum_yy, stats.shift_y),
        what=(
            "the weighted Gram matrix Z^T W Z of the features",
            "the target sums Z^T W y and y^T W y",
        ),
        largest_weight=largest_weight,
    )


def check_solution(name: str, alpha: float, *arrays: Any, fix: str | None = None) -> None:
    """Raise :class:`NonFiniteOutputError` unless every array of a fitted model is finite.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models._checks import check_solution
    >>> check_solution("KernelRidge", 1.0, np.ones(3))  # finite: returns None
    >>> check_solution("KernelRidge", 1e-300, np.array([np.inf]))
    Traceback (most recent call last):
    ...
    kernelmaps.exceptions.NonFiniteOutputError: KernelRidge: the fitted coefficients ...
    """
    if all(np.all(np.isfinite(a)) for a in arrays):
        return
    raise NonFiniteOutputError(
        f"{name}: the fitted coefficients are not finite (the solve overflowed float64 at "
        f"alpha={alpha:.3g}); "
        + (fix or "use a larger alpha, or rescale y (e.g. divide it by its standard deviation)")
        + "."
    )
