"""Probabilities from the decision values of a classifier: the calibration maps and their
fit on leave-one-out decision values.

:func:`fit_calibrator` fits a :class:`Calibrator` on the host from the decision values of
rows the model did not see (the exact leave-one-out values of the ridge classifiers) by
weighted maximum likelihood; :meth:`Calibrator.log_proba` applies it to the decision values
of new rows in their own namespace, on their device.  :class:`CalibratedProbaMixin` gives
every classifier with a ``calibration`` parameter and a ``calibrator_`` its
``predict_proba`` and ``predict_log_proba``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import scipy.optimize
from scipy.special import log_expit, log_softmax
from sklearn.utils._available_if import available_if
from sklearn.utils.validation import check_is_fitted

from .._array_api import check_place, get_namespace, to_namespace
from .._rows import rowwise

__all__ = [
    "CALIBRATIONS",
    "CALIBRATION_ROWS",
    "CalibratedProbaMixin",
    "Calibrator",
    "calibration_size",
    "fit_calibrator",
]

#: The calibration methods; ``"auto"`` is ``"temperature"``.
CALIBRATIONS = ("auto", "temperature", "sigmoid")

#: The fewest and the most training rows whose leave-one-out values a calibrator is
#: fitted on (:func:`calibration_size`): one parameter fitted on 1024 rows by maximum
#: likelihood has a relative standard error of about ``1 / sqrt(1024) = 3 %``.
CALIBRATION_ROWS = (1024, 4096)


def calibration_size(n_rows: int) -> int:
    """How many of ``n_rows`` training rows calibrate: a tenth of them, between 1024 and
    4096, and every row below 1024.  The leave-one-out value of a row costs about what
    its share of the fit's statistics does (``D^2``), so the calibration costs at most a
    tenth of the pass over the rows once they number 10 240 or more.

    Examples
    --------
    >>> from kernelmaps.models._calibration import calibration_size
    >>> [calibration_size(n) for n in (500, 5000, 20000, 10**6)]
    [500, 1024, 2000, 4096]
    """
    fewest, most = CALIBRATION_ROWS
    return min(n_rows, max(fewest, min(most, n_rows // 10)))


#: The bounds of ``log a`` in the search of the temperature's slope ``a = 1 / T``, and the
#: search's tolerance on it (Newton's steps then take it to rounding).
_LOG_SLOPE_BOUNDS = (-12.0, 12.0)
_LOG_SLOPE_TOLERANCE = 1e-6
#: Newton's steps after the search, at most (quadratic convergence: a few reach rounding).
_NEWTON_STEPS = 20
_EPS = float(np.finfo(np.float64).eps)


@dataclasses.dataclass(frozen=True)
class Calibrator:
    """A map from decision values to class probabilities.

    With ``t_c = a_c s_c + b_c`` (``s`` the decision values, one column for two classes)
    the logits are ``[0, t]`` for two classes and ``t`` (``"temperature"``) or
    ``log sigmoid(t)`` (``"sigmoid"``) for more, and the probabilities their softmax.

    Attributes
    ----------
    method : {"temperature", "sigmoid"}
    slope, offset : ndarray of shape (n_columns,)
        ``a`` and ``b``; with ``"temperature"`` every ``a_c`` is ``1 / T`` and ``b`` is 0.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models._calibration import Calibrator
    >>> calibrator = Calibrator("temperature", np.array([2.0]), np.zeros(1))
    >>> calibrator.proba(np.array([0.0, np.log(3.0) / 2])).round(6).tolist()
    [[0.5, 0.5], [0.25, 0.75]]
    """

    method: str
    slope: np.ndarray
    offset: np.ndarray

    def log_proba(self, scores: Any) -> Any:
        """The log-probabilities of the decision values ``scores`` (shape (n,) for two
        classes, (n, n_classes) otherwise), in their namespace and dtype, on their device;
        shape (n, n_classes)."""
        xp, device = get_namespace(scores)
        dtype = scores.dtype if xp.isdtype(scores.dtype, "real floating") else None
        binary = scores.ndim == 1
        S = xp.reshape(scores, (-1, 1)) if binary else scores
        if dtype is None:
            dtype = xp.float64
            S = xp.astype(S, dtype)
        pair = (self.slope, self.offset)
        slope, offset = (to_namespace(a, xp, device, dtype=dtype) for a in pair)
        t = S * slope + offset
        if binary:
            t = xp.concat([xp.zeros_like(t), t], axis=1)
        elif self.method == "sigmoid":
            t = -_softplus(xp, -t)
        top = xp.max(t, axis=1, keepdims=True)
        shifted = t - top
        return shifted - xp.log(xp.sum(xp.exp(shifted), axis=1, keepdims=True))

    def proba(self, scores: Any) -> Any:
        """The probabilities of the decision values ``scores`` (:meth:`log_proba`)."""
        xp = get_namespace(scores)[0]
        return xp.exp(self.log_proba(scores))


def _softplus(xp: Any, t: Any) -> Any:
    """``log(1 + exp(t))`` without overflow."""
    return xp.where(t > 0, t, 0.0) + xp.log1p(xp.exp(-xp.abs(t)))


def _nll(logp: np.ndarray, labels: np.ndarray, w: np.ndarray) -> float:
    """The weighted mean negative log-likelihood of the labels (indices) under ``logp``."""
    return -float(w @ logp[np.arange(labels.shape[0]), labels]) / float(np.sum(w))


def _temperature(S: np.ndarray, labels: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The slope ``a = 1 / T`` of largest likelihood: Brent's bounded search over
    ``u = log a``, then Newton's steps on ``u`` to the root of the derivative (the
    negative log-likelihood ``f(a) = mean w (logsumexp(a l) - a l_y)`` of the logits
    ``l`` is convex in ``a``: ``f' = mean w (E_p l - l_y)``, ``f'' = mean w Var_p l``),
    so that the slope is the minimizer to rounding, not to the search's tolerance."""
    logits = np.concatenate([np.zeros_like(S), S], axis=1) if S.shape[1] == 1 else S
    result = scipy.optimize.minimize_scalar(
        lambda u: _nll(log_softmax(np.exp(u) * logits, axis=1), labels, w),
        bounds=_LOG_SLOPE_BOUNDS,
        method="bounded",
        options={"xatol": _LOG_SLOPE_TOLERANCE},
    )
    u, share, observed = float(result.x), w / np.sum(w), logits[np.arange(labels.shape[0]), labels]
    for _ in range(_NEWTON_STEPS):
        a = np.exp(u)
        p = np.exp(log_softmax(a * logits, axis=1))
        mean = np.sum(p * logits, axis=1)
        slope = float(share @ (mean - observed))
        curvature = float(share @ (np.sum(p * logits**2, axis=1) - mean**2))
        derivative = a * slope + a * a * curvature  # d(a f'(a)) / du
        if not derivative > 0:
            break
        step = a * slope / derivative
        u = float(np.clip(u - step, *_LOG_SLOPE_BOUNDS))
        if abs(step) <= 4 * _EPS * max(1.0, abs(u)):
            break
    return np.full(S.shape[1], float(np.exp(u)))


def _platt(s: np.ndarray, positive: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    """``(a, b)`` of the weighted logistic regression of ``positive`` on ``s`` (Platt)."""
    total = float(np.sum(w))

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        t = theta[0] * s + theta[1]
        log_p, log_q = log_expit(t), log_expit(-t)
        value = -float(w @ np.where(positive, log_p, log_q)) / total
        g = w * (np.exp(log_p) - positive) / total
        return value, np.array([g @ s, np.sum(g)])

    result = scipy.optimize.minimize(loss, np.array([1.0, 0.0]), jac=True, method="L-BFGS-B")
    return float(result.x[0]), float(result.x[1])


def fit_calibrator(
    method: str, scores: np.ndarray, targets: np.ndarray, weights: np.ndarray
) -> Calibrator:
    """Fit the calibration ``method`` by weighted maximum likelihood on held-out decision
    values.

    Parameters
    ----------
    method : {"auto", "temperature", "sigmoid"}
    scores : ndarray of shape (n, n_columns)
        Decision values of rows the model did not see (one column for two classes); rows
        with a NaN value (undefined) or a zero weight are left out (none left: the
        temperature 1).
    targets : ndarray of shape (n, n_columns)
        The ``{-1, 1}`` encoding of the rows' classes.
    weights : ndarray of shape (n,)

    Returns
    -------
    Calibrator

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models._calibration import fit_calibrator
    >>> s = np.array([[-1.0], [-0.2], [0.3], [1.0]])
    >>> fit_calibrator("auto", s, np.array([[-1.0], [1.0], [-1.0], [1.0]]), np.ones(4)).method
    'temperature'
    """
    keep = np.all(np.isfinite(scores), axis=1) & (weights > 0)
    S, Y, w = scores[keep], targets[keep], weights[keep]
    if not np.any(keep):  # no row with a defined value: the decision values unscaled
        return Calibrator("temperature", np.ones(scores.shape[1]), np.zeros(scores.shape[1]))
    labels = (Y[:, 0] > 0).astype(np.intp) if Y.shape[1] == 1 else np.argmax(Y, axis=1)
    if method == "sigmoid":
        fitted = [_platt(S[:, c], Y[:, c] > 0, w) for c in range(S.shape[1])]
        slope, offset = (np.array(v) for v in zip(*fitted, strict=True))
        return Calibrator("sigmoid", slope, offset)
    return Calibrator("temperature", _temperature(S, labels, w), np.zeros(S.shape[1]))


class CalibratedProbaMixin:
    """``predict_proba`` and ``predict_log_proba`` of a classifier from its
    ``decision_function`` through its fitted ``calibrator_`` (a :class:`Calibrator`, or None
    when fitted with ``calibration=None``: then the methods are absent).

    The classifier defines ``calibration``, ``calibrator_`` and ``decision_function``; its
    Notes say which decision values the calibrator was fitted on.
    """

    calibration: str | None
    calibrator_: Calibrator | None
    decision_function: Any

    #: The internal types of the fitted state (a model file may hold them).
    _state_types: tuple[type, ...] = (Calibrator,)

    def _check_proba(self) -> bool:
        if self.calibration is None:
            raise AttributeError(
                f"{type(self).__name__} has no probabilities with calibration=None; set "
                "calibration='auto' (the default) and fit again."
            )
        return True

    def _fitted_calibrator(self) -> Calibrator:
        """``calibrator_``; a clear error when the fit had ``calibration=None``."""
        check_is_fitted(self, "calibrator_")
        if self.calibrator_ is None:
            raise ValueError(
                f"{type(self).__name__} was fitted with calibration=None, which fits no "
                "probabilities; fit again with the calibration set."
            )
        return self.calibrator_

    @available_if(_check_proba)
    @rowwise
    def predict_log_proba(self, X: Any) -> Any:
        """Log-probabilities of the classes: the calibrator applied to the decision values
        (see the class's Notes), computed without underflow.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows to score.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            One column per class of ``classes_``, in the namespace, dtype and device of
            the decision values.
        """
        check_place(self, X, "predict_log_proba")
        return self._fitted_calibrator().log_proba(self.decision_function(X))

    @available_if(_check_proba)
    @rowwise
    def predict_proba(self, X: Any) -> Any:
        """Probabilities of the classes: the calibrator applied to the decision values
        (see the class's Notes).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows to score.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            One column per class of ``classes_``; rows sum to 1; in the namespace, dtype
            and device of the decision values.
        """
        check_place(self, X, "predict_proba")
        return self._fitted_calibrator().proba(self.decision_function(X))
