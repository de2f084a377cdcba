"""CV+ from a K-fold search: the models without each fold, solved from its statistics.

The search holds the statistics of each group of rows (:class:`~._batches.Best`'s
``folds``); the model fitted without fold ``k`` is solved from the others' (as the K-fold
scores were), at the chosen penalty, and each scored row is predicted by the model that
did not see it (Barber, Candès, Ramdas & Tibshirani 2021, section 4).
"""

from __future__ import annotations

import numpy as np

from .._ridge._path import train_statistics, train_weights
from .._ridge_statistics import RidgeStatistics

__all__ = ["fold_models", "out_of_fold"]


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
