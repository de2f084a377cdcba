"""Temperature scaling: class probabilities from decision values, ``p = softmax(s / T)``.

Two functions with one interface for every classifier that calibrates its scores:
:func:`fit_temperature` (scores of shape (n, K), the class indicator, optional weights ->
the inverse temperature) and :func:`apply_temperature` (scores, inverse temperature ->
probabilities, in the scores' array namespace and on their device).  Dividing by a
positive temperature keeps the order of the scores within a row, so the class of the
largest score keeps the largest probability (``predict == argmax(predict_proba)`` by
construction).

References
----------
Guo, C., Pleiss, G., Sun, Y. and Weinberger, K. Q. (2017). On calibration of modern
neural networks. ICML.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._array_api import get_namespace, to_numpy

__all__ = ["apply_temperature", "fit_temperature", "temperature_loss"]

#: Largest ``beta * (spread of a row's scores)``: beyond it every probability is 0 or 1 to
#: rounding (``exp(-50) < 2e-22``), so separable scores stop there instead of at infinity.
_SATURATION = 50.0

#: Newton (or bisection) steps at most; the bracket halves at least every other step.
_MAX_STEPS = 200


def _log_softmax(S: np.ndarray) -> np.ndarray:
    shifted = S - S.max(axis=1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


def temperature_loss(
    beta: float, scores: np.ndarray, indicator: np.ndarray, weights: np.ndarray
) -> tuple[float, float, float]:
    """The weighted mean negative log-likelihood of ``softmax(beta s)`` and its first two
    derivatives in ``beta``.

    .. math:: L(\\beta) = \\frac{1}{\\sum_i w_i} \\sum_i w_i \\left(\\log \\sum_k
              e^{\\beta s_{ik}} - \\beta \\sum_k y_{ik} s_{ik}\\right),

    ``L'(beta) = E_p[s] - s_y`` and ``L''(beta) = Var_p(s)`` averaged over rows (``p`` the
    softmax probabilities at ``beta``): ``L`` is convex in ``beta``.
    """
    log_p = _log_softmax(beta * scores)
    p = np.exp(log_p)
    w = weights / weights.sum()
    mean = (p * scores).sum(axis=1)
    second = (p * scores * scores).sum(axis=1)
    observed = (indicator * scores).sum(axis=1)
    loss = -float(w @ (indicator * log_p).sum(axis=1))
    return loss, float(w @ (mean - observed)), float(w @ np.maximum(second - mean**2, 0.0))


def fit_temperature(scores: Any, indicator: Any, weights: Any = None) -> float:
    """The inverse temperature ``beta = 1 / T >= 0`` minimizing the log-loss of
    ``softmax(beta s)`` (see :func:`temperature_loss`).

    Parameters
    ----------
    scores : array of shape (n, K)
        Decision values, one column per class (any array namespace; moved to the host).
    indicator : array of shape (n, K)
        1 in the column of each row's class, 0 elsewhere.
    weights : array of shape (n,), default=None
        Row weights (default: all 1).

    Returns
    -------
    beta : float
        0 when the scores carry no information about the classes (``L'(0) >= 0``: the
        uniform probabilities are best); the point where ``L' = 0`` otherwise, found by
        Newton's method safeguarded by bisection on a bracket; for scores that separate
        the classes (``L' < 0`` everywhere) the point where ``L'`` vanishes to rounding
        (the probabilities are 0 and 1 to rounding), at most where they saturate,
        ``beta * max_i (max_k s_ik - min_k s_ik) = 50``.

    Notes
    -----
    ``L`` is convex in ``beta`` (its second derivative is a variance), so the root of
    ``L'`` is its minimum, and the bracket ``[lo, hi]`` with ``L'(lo) < 0 <= L'(hi)`` shrinks
    at every step: the search stops at a step or width of ``1e-12`` relative.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models._temperature import fit_temperature
    >>> scores = np.array([[1.0, -1.0], [-1.0, 1.0], [0.5, -0.5], [0.5, -0.5]])
    >>> indicator = np.array([[1, 0], [0, 1], [1, 0], [0, 1]])
    >>> round(fit_temperature(scores, indicator), 4)
    1.012
    """
    S = np.asarray(to_numpy(scores), dtype=np.float64)
    Y = np.asarray(to_numpy(indicator), dtype=np.float64)
    w = np.ones(S.shape[0]) if weights is None else np.asarray(to_numpy(weights), np.float64)
    spread = float(np.max(S.max(axis=1) - S.min(axis=1), initial=0.0))
    if spread == 0.0 or temperature_loss(0.0, S, Y, w)[1] >= 0.0:
        return 0.0
    hi = _SATURATION / spread
    if temperature_loss(hi, S, Y, w)[1] < 0.0:
        return hi
    lo, beta = 0.0, 0.5 * hi
    for _ in range(_MAX_STEPS):
        _, slope, curvature = temperature_loss(beta, S, Y, w)
        lo, hi = (beta, hi) if slope < 0.0 else (lo, beta)
        newton = beta - slope / curvature if curvature > 0.0 else -1.0
        step = newton if lo < newton < hi else 0.5 * (lo + hi)
        if abs(step - beta) <= 1e-12 * beta or hi - lo <= 1e-12 * hi:
            return float(step)
        beta = step
    return float(beta)


def apply_temperature(scores: Any, beta: float) -> Any:
    """``softmax(beta s)`` row by row, in the namespace, device and dtype of ``scores``.

    Parameters
    ----------
    scores : array of shape (n, K)
    beta : float
        The inverse temperature of :func:`fit_temperature`.

    Returns
    -------
    probabilities : array of shape (n, K)
        Rows summing to one; the order of each row's scores is kept.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models._temperature import apply_temperature
    >>> apply_temperature(np.array([[0.0, np.log(3.0)]]), 1.0).tolist()
    [[0.25, 0.75]]
    """
    xp = get_namespace(scores)[0]
    shifted = beta * (scores - xp.max(scores, axis=1, keepdims=True))
    e = xp.exp(shifted)
    return e / xp.sum(e, axis=1, keepdims=True)
