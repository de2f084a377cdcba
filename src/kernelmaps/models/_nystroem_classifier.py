"""Nyström kernel ridge classification: FALKON's way of classifying, with probabilities."""

from __future__ import annotations

import warnings
from typing import Any, ClassVar

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from .._array_api import check_place, get_namespace, is_numpy, placed, to_numpy
from .._array_types import is_dask_array
from .._random import check_random_state
from .._rows import Rows, rowwise
from .._streamed_rows import stream_rows
from ._base import classification_rows
from ._calibration import CALIBRATIONS, CalibratedProbaMixin, Calibrator, fit_calibrator
from ._classifiers import labels_of
from ._nystroem_ridge import NystroemKernelRidge
from ._uncertainty import UncertaintyMixin, regressor_only

__all__ = ["NystroemKernelRidgeClassifier"]

#: Training rows whose decision values fit the calibrator (all of them below this).
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


class NystroemKernelRidgeClassifier(CalibratedProbaMixin, ClassifierMixin, NystroemKernelRidge):
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
        fit the calibration when there are more than 20 000.
    calibration : {"auto", "temperature", "sigmoid"} or None, default="auto"
        How :meth:`predict_proba` turns decision values into probabilities, fitted on
        the training rows' decision values (see Notes); the same maps as
        :class:`FeatureRidgeClassifier`'s ``calibration``.  ``"temperature"``
        (``"auto"``): ``softmax(s / T)``, one parameter, order-preserving (``predict`` is
        the class of largest probability).  ``"sigmoid"``: Platt's
        ``sigmoid(a_k s_k + b_k)`` per class, normalized; it may move the threshold, and
        ``predict`` follows the decision values.  None: no probabilities (no
        ``predict_proba``).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        After a fit on the arrays of another library, an array of ``X``'s namespace on
        its device when the labels are numbers (NumPy for other labels, e.g. strings).
    kernel_ : Kernel or callable
    landmarks_ : ndarray of shape (m, n_features)
    landmark_indices_ : ndarray of int or None
    dual_coef_ : ndarray of shape (m,) for two classes, else (m, n_classes)
    calibrator_ : Calibrator or None
        The map from decision values to probabilities (None with ``calibration=None``):
        its ``method``, ``slope`` and ``offset`` (``1 / T`` and 0 for the temperature).
    n_iter_, residual_, converged_, n_cached_rows_, n_features_in_, feature_names_in_
        As in :class:`NystroemKernelRidge`.

    Notes
    -----
    Probabilities come, by default, from temperature scaling (Guo et al. 2017) of the
    decision values: ``p(x) = softmax(s(x) / T)`` over the classes, with the scores
    ``(0, s(x))`` for two classes (so ``p(classes_[1] | x) = 1 / (1 + exp(-s(x) / T))``,
    Platt scaling without an intercept); ``calibration`` picks another map of
    :class:`FeatureRidgeClassifier`'s, fitted the same way.  The map is fitted by
    maximum likelihood on the training rows' decision values, in-sample (at most 20 000
    rows, drawn with ``random_state``; one pass over them with the fitted model): a FALKON
    fit has no leave-one-out values.  The temperature is one parameter that keeps the order
    of the scores: ``predict`` is the ``argmax`` of ``predict_proba`` by construction, and
    the ranking (ROC AUC) is that of the decision values.  The decision values are those
    of a model with at most ``m`` parameters per class fitted on ``n`` rows: with ``n``
    much larger than ``m`` the training rows' scores are close to held-out ones, and the
    small optimism left makes ``T`` slightly low (probabilities slightly confident).

    Cost and memory are those of :class:`NystroemKernelRidge` with ``n_classes`` targets
    (one for two classes): the kernel blocks are formed once per iteration for all classes,
    and the products cost ``O(n m n_classes)`` per iteration.  Dask arrays, arrays of
    other libraries and ``device`` work as in :class:`NystroemKernelRidge`; the labels are
    encoded where ``y`` is (in each chunk's task for a Dask ``y``, whose classes come
    from one small compute of its distinct labels), and the calibrator is fitted on the
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

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **NystroemKernelRidge._parameter_constraints,
        "calibration": [StrOptions(set(CALIBRATIONS)), None],
    }

    def __init__(
        self,
        kernel: Any = "rbf",
        *,
        gamma: float | None = None,
        degree: int | None = None,
        coef0: float | None = None,
        kernel_params: dict[str, Any] | None = None,
        n_components: int = 100,
        landmarks: Any = "uniform",
        alpha: float = 1.0,
        max_iter: int = 100,
        tol: float = 1e-6,
        cache_size: float | str = "auto",
        random_state: Any = None,
        device: Any = None,
        calibration: str | None = "auto",
        verbose: int = 0,
    ) -> None:
        super().__init__(
            kernel,
            gamma=gamma,
            degree=degree,
            coef0=coef0,
            kernel_params=kernel_params,
            n_components=n_components,
            landmarks=landmarks,
            alpha=alpha,
            max_iter=max_iter,
            tol=tol,
            cache_size=cache_size,
            random_state=random_state,
            device=device,
            verbose=verbose,
        )
        self.calibration = calibration

    # the posterior of the regression is not offered by the classifier
    predict_interval = available_if(regressor_only)(UncertaintyMixin.predict_interval)
    sample_y = available_if(regressor_only)(UncertaintyMixin.sample_y)
    sample_functions = available_if(regressor_only)(UncertaintyMixin.sample_functions)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.regressor_tags = None
        tags.target_tags.multi_output = False
        return tags

    def fit(self, X: Any, y: Any) -> NystroemKernelRidgeClassifier:
        """Choose the landmarks, solve one Nyström system per class together, and fit the
        calibration of the probabilities.

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
        method = self.calibration
        self.calibrator_ = None if method is None else self._calibrate(rows, y, method)
        return self

    def _calibrate(self, rows: Rows, y: Any, method: str) -> Calibrator:
        """The calibrator ``method`` fitted on the decision values of (at most
        :data:`_CALIBRATION_ROWS`) training rows, drawn with ``random_state``."""
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
            scores = np.asarray(to_numpy(self.decision_function(X_picked)), np.float64)
        indicator = _class_indicator(to_numpy(y_picked), to_numpy(self.classes_))
        targets = 2.0 * indicator - 1.0  # the {-1, 1} encoding, one column for two classes
        targets = targets[:, 1:] if targets.shape[1] == 2 else targets
        S = np.reshape(scores, (scores.shape[0], -1))
        return fit_calibrator(method, S, targets, np.ones(S.shape[0]))

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
        return NystroemKernelRidge._mean(self, X)

    @rowwise
    def predict(self, X: Any) -> Any:  # type: ignore[override]  # a classifier's
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
        return labels_of(self.classes_, self.decision_function(X))
