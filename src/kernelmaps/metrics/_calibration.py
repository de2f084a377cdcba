"""The calibration of predicted probabilities: binned reliability and expected calibration error.

:func:`reliability_bins` groups the rows by their confidence (the largest probability of a
row, or one class's column) into equal-width or equal-mass bins and gives each bin's weight,
mean confidence and observed frequency; :func:`expected_calibration_error` is their weighted
mean gap.  The proper scoring rules (log-loss, Brier score) are scikit-learn's:
:func:`sklearn.metrics.log_loss` and :func:`sklearn.metrics.brier_score_loss`.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from sklearn.utils.validation import _check_sample_weight, column_or_1d

from .._array_api import to_numpy
from .._validation import one_line_errors

__all__ = [
    "BIN_STRATEGIES",
    "CALIBRATION_KINDS",
    "ReliabilityBins",
    "expected_calibration_error",
    "reliability_bins",
]

#: The ways of binning the confidences: equal width on [0, 1], or equal mass (quantiles).
BIN_STRATEGIES = ("uniform", "quantile")

#: The calibration errors: of the predicted class's probability (top-label), or of every
#: class's column averaged over the classes (classwise).
CALIBRATION_KINDS = ("top_label", "classwise")


class ReliabilityBins(NamedTuple):
    """The bins of a reliability diagram (top-label): one entry per bin, empty bins kept.

    Attributes
    ----------
    edges : ndarray of shape (n_bins + 1,)
        The bin edges; bin ``b`` holds the confidences in ``(edges[b], edges[b + 1]]``
        (the first bin holds ``edges[0]`` as well).
    weight : ndarray of shape (n_bins,)
        The share of the rows (of their weight) in each bin; it sums to 1.
    confidence : ndarray of shape (n_bins,)
        The mean confidence in each bin (NaN where the bin is empty).
    accuracy : ndarray of shape (n_bins,)
        The observed frequency in each bin: the accuracy of the predicted class
        (top-label), or how often the class is the true one (one class's column); NaN
        where the bin is empty.

    Examples
    --------
    >>> from kernelmaps.metrics import reliability_bins
    >>> bins = reliability_bins([0, 1, 1], [0.2, 0.9, 0.4], n_bins=2, column=1)
    >>> bins.edges.tolist(), bins.weight.round(3).tolist(), bins.accuracy.tolist()
    ([0.0, 0.5, 1.0], [0.667, 0.333], [0.5, 1.0])
    >>> round(bins.calibration_error, 4)  # (2/3) |0.5 - 0.3| + (1/3) |1 - 0.9|
    0.1667
    """

    edges: np.ndarray
    weight: np.ndarray
    confidence: np.ndarray
    accuracy: np.ndarray

    @property
    def calibration_error(self) -> float:
        """``sum_b weight_b |accuracy_b - confidence_b|`` over the bins that hold rows:
        the expected calibration error of these bins."""
        full = self.weight > 0
        gaps = np.abs(self.accuracy[full] - self.confidence[full])
        return float(np.sum(self.weight[full] * gaps))


def _check_choice(value: Any, name: str, choices: tuple[str, ...]) -> None:
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {choices}; got {value!r}.")


def _probabilities(y_prob: Any) -> np.ndarray:
    """``y_prob`` as an (n, n_classes) float64 array: a 1-D binary column ``P(classes[1])``
    becomes ``[1 - p, p]``; refused unless in [0, 1] with rows summing to 1."""
    with one_line_errors():
        P = np.asarray(to_numpy(y_prob))
    if P.ndim not in (1, 2) or P.size == 0:
        raise ValueError(
            f"y_prob has shape {P.shape}; give the probabilities of each row, of shape "
            "(n,) for P(classes[1]) of a binary problem or (n, n_classes)."
        )
    if not np.issubdtype(P.dtype, np.number) or np.iscomplexobj(P):
        raise ValueError(f"y_prob holds {P.dtype} values; give probabilities, numbers in [0, 1].")
    tolerance = float(np.sqrt(np.finfo(P.dtype).eps)) if P.dtype.kind == "f" else 0.0
    P = P.astype(np.float64)
    if not np.isfinite(P).all() or P.min() < 0.0 or P.max() > 1.0:
        raise ValueError(
            "y_prob holds values outside [0, 1] (or NaN); give probabilities, e.g. the "
            "output of predict_proba."
        )
    if P.ndim == 1:
        return np.column_stack([1.0 - P, P])
    if P.shape[1] < 2:
        raise ValueError(
            f"y_prob has {P.shape[1]} column; give one column per class (at least 2), or "
            "a 1-D array of P(classes[1]) for a binary problem."
        )
    worst = float(np.max(np.abs(P.sum(axis=1) - 1.0)))
    if worst > tolerance * P.shape[1]:
        raise ValueError(
            f"the rows of y_prob sum to 1 only within {worst:.3g}; give probabilities of "
            "all the classes, each row summing to 1 (the output of predict_proba)."
        )
    return P


def _class_indices(y_true: Any, n_classes: int, labels: Any) -> np.ndarray:
    """The column of each row's true class: the classes are ``labels`` (default: the
    distinct values of ``y_true``), sorted, as scikit-learn's ``classes_``."""
    with one_line_errors():
        y = column_or_1d(to_numpy(y_true))
    classes = np.unique(y if labels is None else column_or_1d(to_numpy(labels)))
    if labels is None and classes.size < n_classes:
        raise ValueError(
            f"y_true holds {classes.size} distinct classes but y_prob has {n_classes} "
            "columns; give every class, in the order of the columns, with labels=."
        )
    if classes.size != n_classes:
        raise ValueError(
            f"there are {classes.size} classes but y_prob has {n_classes} columns; give "
            "one column per class (labels= names the classes of the columns)."
        )
    index = np.searchsorted(classes, y)
    unknown = (index >= n_classes) | (classes[np.minimum(index, n_classes - 1)] != y)
    if unknown.any():
        raise ValueError(
            f"y_true holds the class {y[np.argmax(unknown)].item()!r}, not among labels "
            f"{classes.tolist()}; give every class of y_true in labels=."
        )
    return index


def _edges(confidence: np.ndarray, weight: np.ndarray, n_bins: int, strategy: str) -> np.ndarray:
    """Equal-width edges on [0, 1], or the weighted quantiles of the confidences (the
    smallest value whose cumulative weight reaches each ``b / n_bins``: numpy's
    ``inverted_cdf`` with unit weights)."""
    if strategy == "uniform":
        return np.linspace(0.0, 1.0, n_bins + 1)
    order = np.argsort(confidence, kind="stable")
    cumulative = np.cumsum(weight[order])
    targets = cumulative[-1] * np.arange(1, n_bins) / n_bins
    inner = confidence[order][np.searchsorted(cumulative, targets * (1 - 1e-12), side="left")]
    return np.concatenate([[confidence.min()], inner, [confidence.max()]])


def _binned(
    confidence: np.ndarray, hit: np.ndarray, weight: np.ndarray, n_bins: int, strategy: str
) -> ReliabilityBins:
    """Each bin's share of the weight, mean confidence and observed frequency."""
    edges = _edges(confidence, weight, n_bins, strategy)
    which = np.searchsorted(edges[1:-1], confidence, side="left")
    total = np.bincount(which, weights=weight, minlength=n_bins)
    confidences = np.bincount(which, weights=weight * confidence, minlength=n_bins)
    hits = np.bincount(which, weights=weight * hit, minlength=n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_confidence, frequency = confidences / total, hits / total
    return ReliabilityBins(edges, total / total.sum(), mean_confidence, frequency)


def _confidence(
    P: np.ndarray, index: np.ndarray, column: int | None
) -> tuple[np.ndarray, np.ndarray]:
    """The confidence of each row and whether it was right: the largest probability and
    whether its class is the true one (``column=None``), or column ``k`` and whether the
    true class is ``k``."""
    if column is None:
        top = np.argmax(P, axis=1)
        return P[np.arange(P.shape[0]), top], (top == index).astype(np.float64)
    return P[:, column], (index == column).astype(np.float64)


def _prepared(
    y_true: Any, y_prob: Any, n_bins: Any, strategy: str, sample_weight: Any, labels: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The probabilities, the true columns and the weights, checked."""
    if isinstance(n_bins, bool) or not isinstance(n_bins, int | np.integer) or n_bins < 1:
        raise ValueError(f"n_bins must be an integer >= 1; got {n_bins!r}.")
    _check_choice(strategy, "strategy", BIN_STRATEGIES)
    P = _probabilities(y_prob)
    index = _class_indices(y_true, P.shape[1], labels)
    if index.shape[0] != P.shape[0]:
        raise ValueError(
            f"y_true has {index.shape[0]} rows but y_prob has {P.shape[0]}; give one "
            "probability row per true label."
        )
    with one_line_errors():
        weight = _check_sample_weight(to_numpy(sample_weight), P, dtype=np.float64)
    if weight.min() < 0 or not weight.sum() > 0:
        raise ValueError("sample_weight must be non-negative with a positive sum.")
    return P, index, weight


def reliability_bins(
    y_true: Any,
    y_prob: Any,
    *,
    n_bins: int = 15,
    strategy: str = "uniform",
    sample_weight: Any = None,
    labels: Any = None,
    column: int | None = None,
) -> ReliabilityBins:
    """The bins of a reliability diagram: the rows grouped by their confidence.

    The confidence of a row is its largest probability ``max_k p_k`` and the observed
    frequency of a bin the accuracy of the predicted class ``argmax_k p_k`` on its rows
    (top-label, as in Guo et al. 2017); with ``column=k``, the confidence is ``p_k`` and
    the frequency how often ``k`` is the true class (the curve of
    :func:`sklearn.calibration.calibration_curve` for ``k = 1`` of a binary problem).
    Probabilities are calibrated where every bin's frequency equals its confidence.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        The true classes.
    y_prob : array-like of shape (n, n_classes) or (n,)
        The predicted probabilities, one column per class in the sorted order of the
        classes (``predict_proba``'s); a 1-D array is ``P(classes[1])`` of a binary problem.
    n_bins : int, default=15
        The number of bins.
    strategy : {"uniform", "quantile"}, default="uniform"
        Equal-width bins on [0, 1], or equal-mass bins (the quantiles of the confidences:
        each bin holds about ``n / n_bins`` rows; tied confidences share a bin).
    sample_weight : array-like of shape (n,), default=None
        Weights of the rows.
    labels : array-like, default=None
        The classes of the columns (default: the distinct values of ``y_true``).
    column : int, default=None
        A class's column index: the calibration of that column instead of the top label.

    Returns
    -------
    ReliabilityBins
        ``edges``, and each bin's ``weight`` (share of the rows), mean ``confidence``
        and ``accuracy`` (observed frequency), NaN for an empty bin.

    Examples
    --------
    >>> from kernelmaps.metrics import reliability_bins
    >>> bins = reliability_bins([0, 1, 1, 0], [0.1, 0.8, 0.6, 0.3], n_bins=2)
    >>> bins.weight.tolist(), bins.confidence.tolist(), bins.accuracy.tolist()
    ([0.0, 1.0], [nan, 0.75], [nan, 1.0])
    """
    P, index, weight = _prepared(y_true, y_prob, n_bins, strategy, sample_weight, labels)
    if column is not None and not (
        isinstance(column, int | np.integer) and 0 <= column < P.shape[1]
    ):
        raise ValueError(f"column must be a column index of y_prob, 0 to {P.shape[1] - 1}.")
    return _binned(*_confidence(P, index, column), weight, n_bins, strategy)


def expected_calibration_error(
    y_true: Any,
    y_prob: Any,
    *,
    n_bins: int = 15,
    strategy: str = "uniform",
    kind: str = "top_label",
    sample_weight: Any = None,
    labels: Any = None,
) -> float:
    """The expected calibration error (ECE): the weighted mean gap between the confidence
    and the observed frequency, over bins of the confidence.

    Top-label (Guo et al. 2017), over bins ``B_b`` of the largest probability of each row,

    .. math:: \\mathrm{ECE} = \\sum_b \\frac{|B_b|}{n}
              \\left| \\mathrm{acc}(B_b) - \\mathrm{conf}(B_b) \\right|,

    with ``acc`` the accuracy of the predicted class and ``conf`` the mean largest
    probability in the bin.  Classwise (Kull et al. 2019), the mean over the ``K`` classes
    of the same sum for each class's column: bins of ``p_k``, ``conf`` their mean ``p_k``
    and ``acc`` the share of rows of class ``k``.  0 for calibrated probabilities (up to
    the sampling noise of each bin, about ``sqrt(conf (1 - conf) / |B_b|)``), at most 1.
    It is a measure of calibration, not of accuracy: predicting every class's base rate
    has an ECE near 0.  Use it next to scikit-learn's proper scores,
    :func:`sklearn.metrics.log_loss` and :func:`sklearn.metrics.brier_score_loss`.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        The true classes.
    y_prob : array-like of shape (n, n_classes) or (n,)
        The predicted probabilities, columns in the sorted order of the classes
        (``predict_proba``'s); a 1-D array is ``P(classes[1])`` of a binary problem.
    n_bins : int, default=15
        The number of bins (15, as Guo et al.).
    strategy : {"uniform", "quantile"}, default="uniform"
        Equal-width bins on [0, 1] (the usual ECE), or equal-mass bins (quantiles of the
        confidence), whose every bin has about ``n / n_bins`` rows and so the same noise.
    kind : {"top_label", "classwise"}, default="top_label"
        The calibration of the predicted class's probability, or of every class's column.
    sample_weight : array-like of shape (n,), default=None
        Weights of the rows (``|B_b| / n`` becomes the bin's share of the weight).
    labels : array-like, default=None
        The classes of the columns (default: the distinct values of ``y_true``; needed
        when some class has no row).

    Returns
    -------
    float
        The ECE, in [0, 1].

    References
    ----------
    Guo, C., Pleiss, G., Sun, Y. and Weinberger, K. Q. (2017). On calibration of modern
    neural networks. ICML.  Kull, M., Perello-Nieto, M., Kängsepp, M., Silva Filho, T.,
    Song, H. and Flach, P. (2019). Beyond temperature scaling: obtaining well-calibrated
    multiclass probabilities with Dirichlet calibration. NeurIPS.  Naeini, M. P., Cooper,
    G. F. and Hauskrecht, M. (2015). Obtaining well calibrated probabilities using
    Bayesian binning. AAAI.

    Examples
    --------
    >>> from kernelmaps.metrics import expected_calibration_error
    >>> y_true = [0, 1, 1, 0]
    >>> y_prob = [[0.9, 0.1], [0.2, 0.8], [0.4, 0.6], [0.7, 0.3]]
    >>> round(expected_calibration_error(y_true, y_prob, n_bins=2), 4)
    0.25
    >>> round(expected_calibration_error(y_true, y_prob, n_bins=2, kind="classwise"), 4)
    0.25
    """
    _check_choice(kind, "kind", CALIBRATION_KINDS)
    P, index, weight = _prepared(y_true, y_prob, n_bins, strategy, sample_weight, labels)
    columns: list[int | None] = [None] if kind == "top_label" else list(range(P.shape[1]))
    gaps = [
        _binned(*_confidence(P, index, k), weight, n_bins, strategy).calibration_error
        for k in columns
    ]
    return float(np.mean(gaps))
