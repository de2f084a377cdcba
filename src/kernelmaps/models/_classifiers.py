"""Classification on explicit features.

:class:`FeatureRidgeClassifier` is one-vs-rest ridge regression on ``{-1, 1}`` targets with
the streaming solver of :class:`FeatureRidge`: one pass over the data accumulates ``Z^T Z``
once for all classes.

Recipe: feature maps with scikit-learn's linear classifiers
----------------------------------------------------------
Every map is a transformer, so it goes in a :class:`~sklearn.pipeline.Pipeline` in front of
any linear classifier; the classifier then learns ``w^T z(x) + b``, a kernel machine with the
approximate kernel ``z(x)^T z(y)`` (Rahimi & Recht 2007), at the cost of a linear one::

    from sklearn.linear_model import LogisticRegression, SGDClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import LinearSVC
    from kernelmaps import RandomFourierFeatures

    rff = RandomFourierFeatures(gamma=0.2, n_components=1000, random_state=0)
    logistic = make_pipeline(StandardScaler(), rff, LogisticRegression(max_iter=1000))
    svm = make_pipeline(StandardScaler(), rff, LinearSVC(C=1.0))
    logistic.fit(X_train, y_train).score(X_test, y_test)

For data that arrive in pieces, fit the map once (a data-independent map such as random
Fourier features needs only the number of columns; a data-dependent one, such as Nyström,
should be fitted on a representative sample) and feed the mapped blocks to
:meth:`SGDClassifier.partial_fit <sklearn.linear_model.SGDClassifier.partial_fit>`, giving
every class on the first call (a ``Pipeline`` has no ``partial_fit``)::

    rff = RandomFourierFeatures(gamma=0.2, n_components=1000, random_state=0).fit(X_first)
    sgd = SGDClassifier(loss="hinge", alpha=1e-4)
    for X_block, y_block in blocks:
        sgd.partial_fit(rff.transform(X_block), y_block, classes=all_classes)
    predictions = sgd.predict(rff.transform(X_new))

``FeatureRidgeClassifier(feature_map=rff).partial_fit`` does the same with the exact ridge
solution of everything seen so far instead of stochastic steps.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.preprocessing import LabelBinarizer
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from .._array_api import check_place, get_namespace, is_numpy, to_numpy
from .._rows import rowwise
from .._streamed_rows import stream_rows
from ._base import classification_rows
from ._calibration import (
    CALIBRATIONS,
    CalibratedProbaMixin,
    calibration_size,
    fit_calibrator,
)
from ._ridge._pass import checked_weights, sample_rows
from ._streaming_ridge import _StreamingRidgeMixin

__all__ = ["FeatureRidgeClassifier", "LinearClassifierMixin", "labels_of"]


#: The start of scikit-learn's warning on more distinct labels than half the samples.
_MANY_CLASSES = "The number of unique classes is greater than 50%"


def labels_of(classes: Any, scores: Any) -> Any:
    """The class of the largest decision value of each row: ``classes[1]`` where a single
    column of ``scores`` (two classes) is positive, else the ``argmax`` over the columns.

    The labels are where the scores are when the classes are numbers (``classes`` there
    too), NumPy labels otherwise.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models._classifiers import labels_of
    >>> labels_of(np.array(["a", "b"]), np.array([-0.5, 2.0])).tolist()
    ['a', 'b']
    """
    xp = get_namespace(scores)[0]
    one_column = scores.ndim == 1
    index = xp.astype(scores > 0, xp.int64) if one_column else xp.argmax(scores, axis=1)
    if is_numpy(get_namespace(classes)[0]):
        return classes[to_numpy(index)]
    return xp.take(classes, index, axis=0)


class LinearClassifierMixin:
    """What the classifiers linear in a feature map share: ``classes_`` and their
    ``{-1, 1}`` encoder from the labels of a fit, one problem per class (one for two
    classes), the decision values ``w_c^T z(x) + b_c`` and the class of the largest."""

    classes_: Any
    _decision: Any

    def _set_classes(self, labels: Any, n_samples: int | None = None) -> None:
        """``classes_`` and the +1/-1 encoder from the labels ``labels`` of ``fit``
        (every label, or each distinct one once); at least two classes are needed.

        scikit-learn warns when the distinct labels outnumber half the rows (``y`` could be
        a regression target); given each label once, that ratio is judged on the
        ``n_samples`` rows they label (none for the ``classes`` of ``partial_fit``).
        """
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", _MANY_CLASSES, UserWarning)
            check_classification_targets(labels)
        n_classes = len(labels)
        if n_samples is not None and n_samples > 20 and n_classes > round(0.5 * n_samples):
            warnings.warn(
                f"The number of unique classes ({n_classes}) is greater than 50% of the number "
                f"of samples ({n_samples}). `y` could represent a regression problem, not a "
                "classification problem.",
                UserWarning,
                stacklevel=3,
            )
        self._binarizer = LabelBinarizer(neg_label=-1, pos_label=1).fit(labels)
        self.classes_ = self._binarizer.classes_
        if self.classes_.shape[0] < 2:
            raise ValueError(
                "The classifier needs samples of at least 2 classes in the data; got only "
                f"one class: {self.classes_[0]!r}."
            )

    def _class_targets(self) -> int:
        """One ridge problem per class, one for two classes."""
        n_classes = int(self.classes_.shape[0])
        return 1 if n_classes == 2 else n_classes

    @rowwise
    def decision_function(self, X: Any) -> np.ndarray:
        """Decision values ``w_c^T z(x) + b_c``, in row blocks.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows to score.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            One column per class; a single column for two classes, positive for
            ``classes_[1]``.
        """
        check_is_fitted(self, "coef_")
        check_place(self, X, "decision_function")
        scores = self._decision(X)
        if scores.ndim == 2 and scores.shape[1] == 1:
            return scores[:, 0]
        return scores

    @rowwise
    def predict(self, X: Any) -> np.ndarray:
        """Predict the class with the largest decision value.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Rows to classify.

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            One of ``classes_`` per row.
        """
        check_is_fitted(self, "classes_")
        check_place(self, X, "predict")
        return labels_of(self.classes_, self.decision_function(X))


class FeatureRidgeClassifier(
    CalibratedProbaMixin, LinearClassifierMixin, ClassifierMixin, _StreamingRidgeMixin
):
    """One-vs-rest ridge classification on the outputs of a feature map.

    Each class ``c`` gets the ridge regression of the target ``+1`` (class ``c``) / ``-1``
    (other classes) on ``z(x)`` (with two classes, one regression for the second class),
    solved together by the solvers of :class:`FeatureRidge` (primal, streamed over row
    blocks; or dual, through the ``n x n`` kernel matrix, when ``fit`` sees fewer rows than
    features); the predicted class has the largest decision value.

    Parameters
    ----------
    feature_map : transformer, "passthrough" or None, default=None
        As in :class:`FeatureRidge` (fitted on the first data seen).
    alpha : float, default=1.0
        Ridge penalty ``alpha > 0``.
    alphas : array-like of float, default=None
        Candidate penalties, compared by leave-one-out (or GCV) squared error on the
        ``{-1, 1}`` targets, averaged over classes (as
        :class:`~sklearn.linear_model.RidgeClassifierCV` does).
    alpha_selection : {"auto", "loo", "gcv"}, default="auto"
        See :class:`FeatureRidge`.
    fit_intercept : bool, default=True
    keep_statistics : bool, default=True
        Keep after ``fit`` what ``partial_fit`` continues from; ``False`` keeps only what
        prediction needs (a small saved model; ``partial_fit`` then raises an error naming
        this parameter).  See :class:`FeatureRidge`.
    random_state : int, Generator, SeedSequence, RandomState or None, default=None
        Seed of the default map (``feature_map=None``) only; see :class:`FeatureRidge`.
    device : str, device or None, default=None
        A device to stream NumPy (or Dask) rows through, block by block (blocks sized
        from the device's free memory, the copy of the next block overlapping the work on
        the current one): the statistics are computed and merged there, the solve runs on
        the host and the fitted attributes are NumPy.  See :class:`FeatureRidge`.
    calibration : {"auto", "temperature", "sigmoid"} or None, default="auto"
        How :meth:`predict_proba` turns decision values into probabilities, fitted on
        the exact leave-one-out decision values of the training rows (no refit; see
        Notes).  ``"temperature"`` (``"auto"``): ``softmax(s / T)``, one parameter,
        order-preserving (``predict`` is the class of largest probability).
        ``"sigmoid"``: Platt's ``sigmoid(a_c s_c + b_c)`` per class, normalized; it may
        move the threshold, and ``predict`` follows the decision values.  None: no
        probabilities (no ``predict_proba``).
    verbose : int, default=0
        Reports of the fit on standard output, as in :class:`FeatureRidge`: 0 silent;
        1 each pass over the rows when it ends and the solve; 2 also the rows done
        within a pass (about one line a second).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        After a fit on the arrays of another library, an array of ``X``'s namespace on
        its device when the labels are numbers (NumPy for other labels, e.g. strings).
    feature_map_ : transformer or None
    coef_ : ndarray of shape (1, D) for two classes, else (n_classes, D)
    intercept_ : ndarray of shape (1,) or (n_classes,)
    alpha_ : float
    cv_errors_ : ndarray of shape (n_alphas,)
        With ``alphas`` only.
    n_features_out_ : int
    solver_ : {"primal", "dual"}
        How the last fit was solved.
    statistics_ : RidgeStatistics or None
        The sufficient statistics of every row seen, with the ``{-1, 1}`` class
        indicators as targets (see :class:`FeatureRidge`; None after a dual fit and with
        ``keep_statistics=False``).
    calibrator_ : Calibrator or None
        The map from decision values to probabilities (None with ``calibration=None``):
        its ``method``, ``slope`` and ``offset`` (``1 / T`` and 0 for the temperature).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined when ``X`` has string column names.

    Notes
    -----
    Cost and memory are those of :class:`FeatureRidge` with ``n_classes`` targets (one
    target for two classes): in the primal ``O(n D^2 + D^3)`` time, ``O(D^2 + block D)``
    memory; in the dual ``O(n^2 D + n^3)`` time, ``O(n D + n^2)`` memory.
    Arrays of other libraries (array API dispatch on) are fitted on their device as by
    :class:`FeatureRidge`, the labels encoded on the host and moved there;
    ``decision_function`` and ``predict`` then return arrays of ``X``'s namespace on its
    device (``predict`` NumPy labels when the classes are not numbers).
    Dask arrays are fitted as by :class:`FeatureRidge` (primal), the labels encoded in
    each chunk's task; ``fit`` learns the classes of a Dask ``y`` from one small compute
    of its unique labels, ``partial_fit`` takes them from ``classes``.  See the
    module docstring for the recipe with :class:`~sklearn.linear_model.LogisticRegression`,
    :class:`~sklearn.svm.LinearSVC` and :class:`~sklearn.linear_model.SGDClassifier`.

    **Probabilities.**  The leave-one-out decision value of a training row ``i`` is that of
    the model fitted on every row but ``i``; for ridge regression it comes without a refit
    (Allen 1974): ``s_(-i) = y_i - e_i / (1 - h_i)`` with ``e_i = y_i - s_i`` the residual of
    the full fit and ``h_i = w_i (z_i - zbar)^T (Z_c^T W Z_c + alpha I)^{-1} (z_i - zbar)
    [+ w_i / S_w]`` the leverage, for every class at once.  A weight counts observations
    (a row of weight 2 is two copies of it), so one observation is left out:
    ``s_(-i) = y_i - e_i / (1 - h_i / max(w_i, 1))``, and rows count by their weight in
    the calibration's likelihood.  The calibration map is fitted
    by weighted maximum likelihood on these values of ``m`` training rows, a tenth of them
    between 1024 and 4096 (every row below 1024; a uniform draw of a fixed seed: the same
    fit gives the same probabilities), at a cost of ``O(m D^2)`` after the fit, from the
    Cholesky factor of the solve or the eigendecomposition made when ``alphas`` are
    compared (at most a tenth of the pass over the rows from 10 240 rows on); a dual fit
    has the values of every row from
    the eigendecomposition of the kernel matrix (which a given ``alpha`` then uses instead
    of its Cholesky factor).  ``partial_fit`` calibrates on the rows of its latest block,
    exactly (their leave-one-out values under the model of everything seen).
    Temperature scaling (Guo et al. 2017) is ``p = softmax(s / T)`` (for two classes
    ``p_1 = sigmoid(s / T)``): one parameter, so it keeps the order of the decision values
    and the binary threshold at 0 (scikit-learn's contract: ``predict`` is the most
    probable class).  On held-out rows of digits and of 20 000 MNIST digits (random
    Fourier features, ``D`` = 1024 and 2048) it gave a lower log-loss and calibration
    error than Platt's per-class sigmoids (Platt 1999; normalized as scikit-learn's
    ``CalibratedClassifierCV`` does), offered as ``"sigmoid"``; on the imbalanced binary
    ijcnn1 the sigmoid, which may move the threshold, did better (log-loss 0.229 against
    0.245, expected calibration error 0.010 against 0.030).

    References
    ----------
    Rifkin, R. and Klautau, A. (2004). In defense of one-vs-all classification. JMLR 5.
    Rahimi, A. and Recht, B. (2007). Random features for large-scale kernel machines. NIPS.
    Allen, D. M. (1974). The relationship between variable selection and data augmentation
    and a method for prediction. Technometrics 16(1).
    Platt, J. (1999). Probabilistic outputs for support vector machines and comparisons to
    regularized likelihood methods. Advances in Large Margin Classifiers.
    Guo, C., Pleiss, G., Sun, Y. and Weinberger, K. Q. (2017). On calibration of modern
    neural networks. ICML.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from kernelmaps import FeatureRidgeClassifier, RandomFourierFeatures
    >>> X, y = load_digits(return_X_y=True)
    >>> rff = RandomFourierFeatures(gamma=1e-3, n_components=500, random_state=0)
    >>> clf = FeatureRidgeClassifier(rff, alpha=1e-2).fit(X, y)
    >>> clf.predict(X[:2]).shape
    (2,)
    >>> clf.predict_proba(X[:2]).shape
    (2, 10)
    """

    _follows_x: ClassVar[tuple[str, ...]] = (*_StreamingRidgeMixin._follows_x, "classes_")

    _parameter_constraints: ClassVar[dict[str, list[Any] | str]] = {
        **_StreamingRidgeMixin._parameter_constraints,
        "calibration": [StrOptions(set(CALIBRATIONS)), None],
    }

    def __init__(
        self,
        feature_map: Any = None,
        *,
        alpha: float = 1.0,
        alphas: Any = None,
        alpha_selection: str = "auto",
        fit_intercept: bool = True,
        keep_statistics: bool = True,
        random_state: Any = None,
        device: Any = None,
        calibration: str | None = "auto",
        verbose: int = 0,
    ) -> None:
        super().__init__(
            feature_map,
            alpha=alpha,
            alphas=alphas,
            alpha_selection=alpha_selection,
            fit_intercept=fit_intercept,
            keep_statistics=keep_statistics,
            random_state=random_state,
            device=device,
            verbose=verbose,
        )
        self.calibration = calibration

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> FeatureRidgeClassifier:
        """Fit the feature map on ``X``, then one ridge regression per class.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features)
        y : array-like or dask array of shape (n_samples,)
        sample_weight : array-like or dask array of shape (n_samples,), default=None

        Returns
        -------
        self
        """
        self._validate_params()
        rows, y = classification_rows(self, X, y, reset=True)
        rows = stream_rows(rows, self.device)
        self._set_classes(rows.distinct(y), rows.n_rows)
        y = rows.align(y)
        head = self._start(rows, self._class_targets(), False)
        weights = checked_weights(rows, sample_weight)
        self._fit_rows(rows, y, weights, head, self._binarizer)
        return self

    def partial_fit(
        self, X: Any, y: Any, classes: Any = None, sample_weight: Any = None
    ) -> FeatureRidgeClassifier:
        """Add a block of labelled rows and re-solve (exact ridge on everything seen).

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features)
        y : array-like or dask array of shape (n_samples,)
        classes : array-like of shape (n_classes,), default=None
            Every class, required on the first call (later blocks may lack some classes).
        sample_weight : array-like or dask array of shape (n_samples,), default=None

        Returns
        -------
        self
        """
        first = not self._started()
        if first:
            self._validate_params()
            if classes is None:
                raise ValueError(
                    "classes must be given on the first call to partial_fit: pass "
                    "classes=np.unique(y_all) listing every class."
                )
            all_classes = np.unique(np.asarray(classes))
            if all_classes.shape[0] < 2:
                raise ValueError(f"classes must list at least 2 classes; got {all_classes!r}.")
            self._binarizer = LabelBinarizer(neg_label=-1, pos_label=1).fit(all_classes)
            self.classes_ = self._binarizer.classes_
        else:
            check_place(self, X, "partial_fit")
        rows, y = classification_rows(self, X, y, reset=first)
        rows = stream_rows(rows, self.device)
        head = self._start(rows, self._class_targets(), False) if first else None
        weights = checked_weights(rows, sample_weight)
        self._partial_fit_rows(rows, rows.align(y), weights, first, head, self._binarizer)
        return self

    def _wants_loo(self) -> bool:
        return self.calibration is not None

    def _calibrate(
        self, n_rows: int, sample: Callable[[np.ndarray], tuple[np.ndarray, ...]]
    ) -> None:
        """``calibrator_`` from the leave-one-out decision values of a sample of the
        ``n_rows`` training rows (:func:`calibration_size`, :func:`sample_rows`)."""
        if self.calibration is None:
            self.calibrator_ = None
            return
        values, targets, weights, _ = sample(sample_rows(n_rows, calibration_size(n_rows)))
        self.calibrator_ = fit_calibrator(self.calibration, values, targets, weights)
