"""CV+ from a K-fold search: the models without each fold, solved from its statistics.

The search holds the statistics of each group of rows (:class:`~._batches.Best`'s
``folds``); the model fitted without fold ``k`` is solved from the others' (as the K-fold
scores were), at the chosen penalty, and each scored row is predicted by the model that
did not see it (Barber, Candès, Ramdas & Tibshirani 2021, section 4).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ..._array_api import get_namespace, is_numpy, to_namespace, to_numpy
from .._ridge._path import train_statistics, train_weights
from .._ridge_statistics import RidgeStatistics
from .._uncertainty import ConformalScores, UncertaintyMixin
from ._pass import hashed_folds

__all__ = ["SearchUncertaintyMixin", "cv_plus_scores", "fold_block", "fold_models", "out_of_fold"]


def fold_models(
    folds: list[RidgeStatistics], n_splits: int, alpha: float, fit_intercept: bool
) -> tuple[np.ndarray, np.ndarray]:
    """The models fitted without each fold at the penalty ``alpha``.

    Returns
    -------
    coef : ndarray of shape (D, n_splits t)
        Fold after fold, the ``t`` targets of each.
    intercept : ndarray of shape (n_splits t,)

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models import RidgeStatistics
    >>> from kernelmaps.models._search._conformal import fold_models
    >>> Z = np.arange(8.0).reshape(4, 2)
    >>> parts = [RidgeStatistics(2, 1).update(Z[k::2], Z[k::2, :1], np.ones(2)) for k in (0, 1)]
    >>> [a.shape for a in fold_models(parts, 2, 1.0, True)]
    [(2, 2), (2,)]
    """
    coefs, intercepts = [], []
    for k in range(n_splits):
        W, z_mean, y_mean = train_weights(
            train_statistics(folds, k), np.array([float(alpha)]), fit_intercept
        )
        coef = W[:, 0, :]
        coefs.append(coef)
        intercepts.append(y_mean - coef.T @ z_mean)
    return np.concatenate(coefs, axis=1), np.concatenate(intercepts)


def out_of_fold(
    Z: np.ndarray, labels: np.ndarray, models: tuple[np.ndarray, np.ndarray], n_targets: int
) -> np.ndarray:
    """Each row's prediction by the model fitted without its fold: rows ``Z`` (features,
    NumPy or sparse) of folds ``labels``, shape (n, n_targets).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models._search._conformal import out_of_fold
    >>> models = (np.array([[1.0, 2.0]]), np.array([0.0, 10.0]))
    >>> out_of_fold(np.ones((2, 1)), np.array([1, 0]), models, 1).ravel().tolist()
    [12.0, 1.0]
    """
    coef, intercept = models
    every = np.asarray(Z @ coef) + intercept  # (n, K t)
    n = every.shape[0]
    return every.reshape(n, -1, n_targets)[np.arange(n), labels, :]


def cv_plus_scores(
    model: Any, best: Any, n_splits: int, labels: Any, n_rows: int
) -> ConformalScores | None:
    """The CV+ scores of a search's final ``model`` (a fitted :class:`FeatureRidge`):
    its scored rows (``model._scored``), each predicted by the model without its fold,
    solved from ``best``'s fold statistics at the chosen penalty; the folds are
    ``labels`` (aligned on the rows), or a hash of the row index (None: a Dask array).
    None where the model kept no scored rows (weighted rows)."""
    scored = getattr(model, "_scored", None)
    if scored is None:
        return None
    index, scored_rows, scored_targets = scored
    models = fold_models(best.folds, n_splits, best.alpha, model.fit_intercept)
    if labels is None:
        fold_of = hashed_folds(0, n_rows, n_splits)[index]
    else:
        fold_of = np.asarray(to_numpy(labels))[index]
    keep = np.flatnonzero(fold_of < n_splits)  # rows in no test set have no model
    kept, targets = scored_rows[keep], scored_targets[keep]
    Z = to_numpy(model._features(model._placed(kept)))
    own = out_of_fold(Z, fold_of[keep], models, targets.shape[1])
    return ConformalScores(kept, targets - own, fold_of[keep], models, index[keep], targets)


def fold_block(
    scores: ConformalScores, features: Callable[[Any], Any], X: Any
) -> Callable[[Any], Any]:
    """For the validated rows ``X``: the function from a block of them to the CV+
    held-out predictions, every scored row's fold model at the block's rows (one
    product per fold), shape (n, m, t), where ``X`` is."""
    assert scores.fold_models is not None and scores.folds is not None
    xp, device = get_namespace(X)
    coef, intercept = scores.fold_models
    folds = scores.folds
    if not is_numpy(xp):
        coef, intercept = (to_namespace(a, xp, device, dtype=X.dtype) for a in scores.fold_models)
        folds = to_namespace(folds, xp, device)
    t = scores.residuals.shape[1]

    def block(Xb: Any) -> Any:
        Z = features(Xb)
        every = Z @ (coef if is_numpy(xp) else xp.astype(coef, Z.dtype, copy=False))
        every = xp.reshape(xp.asarray(every) + intercept, (Xb.shape[0], -1, t))
        return xp.take(every, folds, axis=1)

    return block


class SearchUncertaintyMixin(UncertaintyMixin):
    """The uncertainty of a search's best model (``best_estimator_``), with CV+ scores
    after a K-fold search (``_conformal``, set by :meth:`_search_scores` in ``fit``)."""

    best_estimator_: Any
    _best: Callable[[str, Any], Any]

    def _search_scores(self, search: Any, rows: Any) -> ConformalScores | None:
        """CV+ scores after a K-fold search (:func:`cv_plus_scores`); else None (the
        best model's jackknife+ scores serve)."""
        best = search.best
        if best is None or best.folds is None:
            return None
        return cv_plus_scores(
            self.best_estimator_, best, search.spec.n_splits, search.aligned[2], rows.n_rows
        )

    def _scores(self) -> ConformalScores | None:
        check_is_fitted(self, "best_estimator_")
        if self._conformal is not None:
            return self._conformal
        return self.best_estimator_._scores()

    def _mean(self, X: Any) -> Any:
        return self._best("predict", X)

    def _posterior(self) -> Any:
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_._posterior()

    def _sample_functions(self, n_samples: int, rng: np.random.Generator) -> Any:
        return self.best_estimator_._sample_functions(n_samples, rng)

    def _held_out(self, X: Any) -> Callable[[Any], Any]:
        """CV+: every scored row's fold model at the rows (:func:`fold_block`); else the
        best model's jackknife+."""
        scores = self._scores()
        assert scores is not None  # checked by predict_interval
        if scores.fold_models is None or scores.folds is None:
            return self.best_estimator_._held_out(X)
        return fold_block(scores, self.best_estimator_._features, X)
