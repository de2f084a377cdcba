"""Nyström kernel ridge classification: FALKON's way of classifying, with probabilities."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from .._array_api import check_place, get_namespace, is_numpy, placed, to_numpy
from .._array_types import is_dask_array
from .._random import check_random_state
from .._rows import Rows, rowwise
from .._streamed_rows import stream_rows
from ._base import classification_rows
from ._nystroem_ridge import NystroemKernelRidge
from ._temperature import apply_temperature, fit_temperature

__all__ = ["NystroemKernelRidgeClassifier"]

#: Training rows whose decision values fit the temperature (all of them below this).
_CALIBRATION_ROWS = 20_000


def _class_indicator(y: Any, classes: np.ndarray) -> Any:
    """``1.0`` where row ``i`` has class ``classes[k]``, ``0.0`` elsewhere, shape
    (n, n_classes), where ``y`` is (NumPy, a lazy Dask array, or an array of another
    library on its device, the classes moved there when they are numbers)."""
    if is_dask_array(y):
        return (y[:, None] == classes[None, :]).astype(np.float64)
    xp, device = get_namespace(y)
    if is_numpy(xp):
        return (np.asarray(y)[:, None] == classes[None, :]).astype(np.float64)
    equal = y[:, None] == placed(classes, xp, device)[None, :]
    return xp.astype(equal, y.dtype if xp.isdtype(y.dtype, "real floating") else xp.float32)


def _take_rows(values: Any, picked: np.ndarray) -> Any:
    """``values[picked]`` for global row indices ``picked``, in memory where ``values``
    is (computed for a Dask array)."""
    if is_dask_array(values):
        return values[picked].compute()
    xp, device = get_namespace(values)
    return values[picked] if is_numpy(xp) else xp.take(values, placed(picked, xp, device), axis=0)


def _class_targets(indicator: Any) -> Any:
    """FALKON's targets: the one-hot rows for several classes, ``+1`` (second class) /
    ``-1`` (first class) in one column for two."""
    if indicator.shape[1] == 2:
        return 2.0 * indicator[:, 1:] - 1.0
    return indicator


class NystroemKernelRidgeClassifier(ClassifierMixin, NystroemKernelRidge):
    """Nyström kernel ridge classification solved by FALKON, with calibrated probabilities.

    Each class ``k`` gets the Nyström kernel ridge regression (see
    :class:`NystroemKernelRidge`) of its indicator (one-hot targets; for two classes one
    regression of ``+1`` for ``classes_[1]``, ``-1`` for ``classes_[0]``), all solved
    together as the right-hand sides of one preconditioned conjugate gradient:

    .. math:: (K_{nm}^T K_{nm} + \\alpha K_{mm})\\, C = K_{nm}^T Y,

    so each iteration is one pass over the rows whatever the number of classes.  The
    predicted class has the largest decision value ``s_k(x) = sum_j C_jk k(x, l_j)``
    (for two classes, ``classes_[1]`` where ``s(x) > 0``).

    Parameters
    ----------
    kernel, gamma, degree, coef0, kernel_params, n_components, landmarks, alpha, max_iter, \
tol, cache_size, random_state, device, verbose
        As in :class:`NystroemKernelRidge`.  ``random_state`` also draws the rows that
        fit the temperature when there are more than 20 000.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        After a fit on the arrays of another library, an array of ``X``'s namespace on
        its device when the labels are numbers (NumPy for other labels, e.g. strings).
    kernel_ : Kernel or callable
    landmarks_ : ndarray of shape (m, n_features)
    landmark_indices_ : ndarray of int or None
    dual_coef_ : ndarray of shape (m,) for two classes, else (m, n_classes)
    temperature_ : float
        ``T`` of ``predict_proba = softmax(s / T)`` (``inf`` when the decision values
        carry no information about the classes: uniform probabilities).
    n_iter_, residual_, converged_, n_cached_rows_, n_features_in_, feature_names_in_
        As in :class:`NystroemKernelRidge`.

    Notes
    -----
    Probabilities come from temperature scaling (Guo et al. 2017) of the decision
    values: ``p(x) = softmax(s(x) / T)`` over the classes, with the scores
    ``(0, s(x))`` for two classes (so ``p(classes_[1] | x) = 1 / (1 + exp(-s(x) / T))``,
    Platt scaling without an intercept).  ``T`` minimizes the log-loss of the training
    rows' decision values (at most 20 000 rows, drawn with ``random_state``; one pass over
    them with the fitted model).  One parameter that keeps the order of the scores:
    ``predict`` is the ``argmax`` of ``predict_proba`` by construction, and the ranking
    (ROC AUC) is that of the decision values.  The decision values are those of a model
    with at most ``m`` parameters per class fitted on ``n`` rows: with ``n`` much larger
    than ``m`` the training rows' scores are close to held-out ones, and the small
    optimism left makes ``T`` slightly low (probabilities slightly confident).

    Cost and memory are those of :class:`NystroemKernelRidge` with ``n_classes`` targets
    (one for two classes): the kernel blocks are formed once per iteration for all classes,
    and the products cost ``O(n m n_classes)`` per iteration.  Dask arrays, arrays of
    other libraries and ``device`` work as in :class:`NystroemKernelRidge`; the labels are
    encoded where ``y`` is (in each chunk's task for a Dask ``y``, whose classes come
    from one small compute of its distinct labels), and the temperature is fitted on the
    host from the decision values of the drawn rows.

    References
    ----------
    Rudi, A., Carratino, L. and Rosasco, L. (2017). FALKON: An optimal large scale kernel
    method. NIPS.
    Meanti, G., Carratino, L., Rosasco, L. and Rudi, A. (2020). Kernel methods through the
    roof: handling billions of points efficiently. NeurIPS.
    Guo, C., Pleiss, G., Sun, Y. and Weinberger, K. Q. (2017). On calibration of modern
    neural networks. ICML.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from kernelmaps import NystroemKernelRidgeClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = NystroemKernelRidgeClassifier(n_components=50, alpha=1e-2, random_state=0)
    >>> clf.fit(X, y).predict_proba(X[:2]).shape
    (2, 3)
    """

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.regressor_tags = None
        tags.target_tags.multi_output = False
        return tags

    def fit(self, X: Any, y: Any) -> NystroemKernelRidgeClassifier:
        """Choose the landmarks, solve one Nyström system per class together, and fit the
        temperature of the probabilities.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask.array.Array} of shape (n_samples, n_features)
            As in :meth:`NystroemKernelRidge.fit`.
        y : array-like or dask.array.Array of shape (n_samples,)
            Class labels.

        Returns
        -------
        self : NystroemKernelRidgeClassifier
            The fitted model.
        """
        self._validate_params()
        rows, y = classification_rows(self, X, y, reset=True)
        rows = stream_rows(rows, self.device)
        classes = rows.distinct(y)
        check_classification_targets(classes)
        if classes.shape[0] < 2:
            raise ValueError(
                "The classifier needs samples of at least 2 classes in the data; got only "
                f"one class: {classes[0]!r}."
            )
        # numbers as labels follow X (the labels of a fit on another library's arrays)
        self.classes_ = (
            placed(classes, *rows.fitted_place()) if classes.dtype.kind in "biuf" else classes
        )
        y = rows.align(y)
        coef = self._fit_targets(rows, _class_targets(_class_indicator(y, classes)))
        self.dual_coef_ = coef[:, 0] if classes.shape[0] == 2 else coef
        self.temperature_ = self._fit_temperature(rows, y)
        return self

    def _fit_temperature(self, rows: Rows, y: Any) -> float:
        """``T`` fitted on the decision values of (at most :data:`_CALIBRATION_ROWS`)
        training rows."""
        n = rows.n_rows
        if n > _CALIBRATION_ROWS:
            rng = check_random_state(self.random_state)
            picked = np.sort(rng.choice(n, size=_CALIBRATION_ROWS, replace=False))
        else:
            picked = np.arange(n)
        (X_picked,) = rows.held.read([None if picked.shape[0] == n else picked])
        y_picked = y if picked.shape[0] == n and not is_dask_array(y) else _take_rows(y, picked)
        with warnings.catch_warnings():  # the rows read are validated, without their names
            warnings.filterwarnings("ignore", "X does not have valid feature names")
            scores = self._class_scores(self.decision_function(X_picked))
        indicator = _class_indicator(to_numpy(y_picked), to_numpy(self.classes_))
        beta = fit_temperature(scores, indicator)
        return float("inf") if beta == 0.0 else 1.0 / beta

    @staticmethod
    def _class_scores(scores: Any) -> Any:
        """The decision values as one column per class: ``(0, s)`` for two classes."""
        if scores.ndim == 2:
            return scores
        xp = get_namespace(scores)[0]
        return xp.stack([xp.zeros_like(scores), scores], axis=1)

    @rowwise
    def decision_function(self, X: Any) -> Any:
        """Decision values ``s_k(x) = sum_j C_jk k(x, l_j)``, in row blocks.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows to score (an array of another library where the model was fitted).

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            One column per class; one value for two classes, positive for
            ``classes_[1]``.  float32 for float32 ``X``.
        """
        check_is_fitted(self)
        check_place(self, X, "decision_function")
        return NystroemKernelRidge.predict(self, X)

    @rowwise
    def predict(self, X: Any) -> Any:
        """The class with the largest decision value.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows to classify.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            One of ``classes_`` per row.
        """
        check_is_fitted(self)
        check_place(self, X, "predict")
        scores = self.decision_function(X)
        xp = get_namespace(scores)[0]
        index = xp.astype(scores > 0, xp.int64) if scores.ndim == 1 else xp.argmax(scores, axis=1)
        if is_numpy(get_namespace(self.classes_)[0]):
            return self.classes_[to_numpy(index)]
        return xp.take(self.classes_, index, axis=0)  # numbers as labels, where X is

    @rowwise
    def predict_proba(self, X: Any) -> Any:
        """Class probabilities ``softmax(s(x) / T)`` (see Notes), columns in the order of
        ``classes_``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows to score.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Rows summing to one; float32 for float32 ``X``; an array of ``X``'s library
            on its device for such an ``X``.
        """
        check_is_fitted(self, "temperature_")
        check_place(self, X, "predict_proba")
        scores = self._class_scores(self.decision_function(X))
        return apply_temperature(scores, 1.0 / self.temperature_)

    @rowwise
    def predict_log_proba(self, X: Any) -> Any:
        """The logarithm of :meth:`predict_proba`.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows to score.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self, "temperature_")
        check_place(self, X, "predict_log_proba")
        proba = self.predict_proba(X)
        xp = get_namespace(proba)[0]
        with warnings.catch_warnings(), np.errstate(divide="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)
            return xp.log(proba)
