"""One-vs-rest ridge classification on a feature map with ``gamma``, ``alpha`` and
``n_components`` chosen by :class:`~kernelmaps.FeatureRidgeCV`'s search on the
``{-1, 1}`` encoding of the classes, scored by K-fold accuracy."""

from __future__ import annotations

from typing import Any, ClassVar

from sklearn.base import ClassifierMixin
from sklearn.utils._available_if import available_if
from sklearn.utils._param_validation import StrOptions

from ._base import classification_rows
from ._calibration import CALIBRATIONS, CalibratedProbaMixin
from ._classifiers import FeatureRidgeClassifier
from ._feature_ridge_cv import _RidgeSearchCV

__all__ = ["FeatureRidgeClassifierCV"]


class FeatureRidgeClassifierCV(ClassifierMixin, _RidgeSearchCV):
    """One-vs-rest ridge classification on a feature map with ``gamma``, ``alpha`` and
    ``n_components`` chosen by cross-validation in one pass per batch of bandwidths.

    The search of :class:`FeatureRidgeCV` on the ``{-1, 1}`` encoding of the classes
    (:class:`FeatureRidgeClassifier`).  With ``cv``, the score of a split is the accuracy
    (or balanced accuracy) of its held-out rows: the models of every penalty and split
    come from the statistics of the folds, and one more pass predicts every held-out
    row for all of them at once.  With ``cv=None`` the candidates are ranked by the
    criterion of the regression on the encoded classes (a proxy: K-fold accuracy is
    what matters for a classifier).

    Parameters
    ----------
    feature_map, gammas, alphas, n_components_grid, cv, criterion
        As :class:`FeatureRidgeCV`'s.
    refine_gamma, search, fit_intercept, keep_statistics, random_state, verbose
        As :class:`FeatureRidgeCV`'s.
    scoring : {"accuracy", "balanced_accuracy"} or None
        With ``cv``: the score of a split (default ``"accuracy"``); with ``cv=None``
        refused (RidgeClassifierCV's scored leave-one-out is not computed: give ``cv``).
    calibration : {"auto", "temperature", "sigmoid"} or None, default="auto"
        How the best model's :meth:`predict_proba` maps decision values to
        probabilities (:class:`FeatureRidgeClassifier`'s ``calibration``): fitted on the
        exact leave-one-out decision values, at the chosen penalty, of a sample of the
        training rows under the final model (solved from the statistics of every row,
        after a K-fold search too: no refit).  None: no probabilities.

    Attributes
    ----------
    best_estimator_ : FeatureRidgeClassifier
    classes_ : ndarray
    calibrator_ : Calibrator or None
        The best model's (:class:`FeatureRidgeClassifier`).
    best_params_, best_score_, best_index_, cv_results_
        As :class:`FeatureRidgeCV`'s.
    gamma_, alpha_, n_components_, feature_map_, coef_, intercept_
        As :class:`FeatureRidgeCV`'s.
    n_splits_, scoring_, n_features_in_
        As :class:`FeatureRidgeCV`'s.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from kernelmaps import FeatureRidgeClassifierCV, RandomFourierFeatures
    >>> X, y = load_digits(return_X_y=True)
    >>> clf = FeatureRidgeClassifierCV(RandomFourierFeatures(n_components=128, random_state=0),
    ...                                cv=3, refine_gamma=0).fit(X, y)
    >>> clf.predict(X[:2]).shape
    (2,)
    >>> clf.predict_proba(X[:2]).shape
    (2, 10)
    """

    _parameter_constraints: ClassVar[dict[str, list[Any] | str]] = {
        **_RidgeSearchCV._parameter_constraints,
        "calibration": [StrOptions(set(CALIBRATIONS)), None],
    }

    def __init__(
        self,
        feature_map: Any = None,
        *,
        gammas: Any = "auto",
        alphas: Any = "auto",
        n_components_grid: Any = None,
        cv: Any = None,
        criterion: str = "loo",
        scoring: str | None = None,
        refine_gamma: int = 3,
        search: str = "halving",
        fit_intercept: bool = True,
        keep_statistics: bool = True,
        random_state: Any = None,
        calibration: str | None = "auto",
        verbose: int = 0,
    ) -> None:
        super().__init__(
            feature_map,
            gammas=gammas,
            alphas=alphas,
            n_components_grid=n_components_grid,
            cv=cv,
            criterion=criterion,
            scoring=scoring,
            refine_gamma=refine_gamma,
            search=search,
            fit_intercept=fit_intercept,
            keep_statistics=keep_statistics,
            random_state=random_state,
            verbose=verbose,
        )
        self.calibration = calibration

    def fit(
        self, X: Any, y: Any, sample_weight: Any = None, groups: Any = None
    ) -> FeatureRidgeClassifierCV:
        """Search, then solve the best candidate's classifier from its statistics.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None
        groups : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : FeatureRidgeClassifierCV
        """
        self._validate_params()
        rows, y = classification_rows(self, X, y, reset=True)
        probe = FeatureRidgeClassifier()
        probe._set_classes(rows.distinct(y), rows.n_rows)
        self._binarizer, self.classes_ = probe._binarizer, probe.classes_
        self._y_1d = False
        search, largest_weight = self._search(rows, y, sample_weight, groups, self._binarizer)
        self._finish(search, rows, largest_weight)
        self.calibrator_ = self.best_estimator_.calibrator_
        return self

    def _n_targets(self, y: Any) -> int:
        n_classes = int(self.classes_.shape[0])
        return 1 if n_classes == 2 else n_classes

    _model_class: ClassVar[type] = FeatureRidgeClassifier

    def _final_estimator(self, best: Any) -> Any:
        model = super()._final_estimator(best)
        model.set_params(calibration=self.calibration)
        model._binarizer, model.classes_ = self._binarizer, self.classes_
        return model

    _check_proba = CalibratedProbaMixin._check_proba

    @available_if(_check_proba)
    def predict_proba(self, X: Any) -> Any:
        """The best model's calibrated class probabilities
        (:meth:`FeatureRidgeClassifier.predict_proba`) for rows ``X`` of shape
        (n_samples, n_features); one column per class of ``classes_``."""
        return self._best("predict_proba", X)

    @available_if(_check_proba)
    def predict_log_proba(self, X: Any) -> Any:
        """The logarithms of :meth:`predict_proba`, computed without underflow."""
        return self._best("predict_log_proba", X)

    def decision_function(self, X: Any) -> Any:
        """The best model's decision values, ``w_c^T z(x) + b_c``
        (:meth:`FeatureRidgeClassifier.decision_function`) for rows ``X`` of shape
        (n_samples, n_features); one column per class, one for two classes."""
        return self._best("decision_function", X)

    def predict(self, X: Any) -> Any:
        """The best model's class labels for rows ``X`` of shape (n_samples, n_features)."""
        return self._best("predict", X)
