"""The scores of every ridge penalty from statistics: the criteria and exact K-fold.

For a fixed feature map, every penalty ``alpha`` comes from one eigendecomposition of the
(centred) Gram matrix ``G = V diag(l) V^T`` (:func:`~._solvers.eigen_ridge`):

* the criteria of one fit on all the rows: generalized cross-validation
  (:func:`~._solvers.gcv_errors`), the log evidence (:func:`log_evidence`) and exact
  leave-one-out (:func:`~._solvers.loo_errors`, one more pass over the rows);
* exact K-fold cross-validation from the statistics of each fold: the model of fold ``k``
  is solved from the statistics of the other folds (merged exactly,
  :meth:`RidgeStatistics.merge`) and its squared error on fold ``k`` is a quadratic form
  in the fold's own statistics (:func:`fold_squared_errors`), so no row is read again.
  The scores that need each prediction (accuracy) take the weights of every penalty at
  once (:func:`fold_weights`) to one more pass.

Every function is of NumPy statistics (``RidgeStatistics.to_host``).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import scipy.sparse.linalg

from .._ridge_statistics import RidgeStatistics
from ._solvers import EigenRidge, _problem, eigen_ridge, solve_cholesky

__all__ = [
    "REGRESSION_SCORINGS",
    "FoldErrors",
    "auto_alphas",
    "fold_squared_errors",
    "fold_weights",
    "largest_eigenvalue",
    "log_evidence",
    "merge_all",
    "regression_scores",
    "train_statistics",
    "train_weights",
]

#: The scorings of a regressor computed from the statistics of the folds alone.
REGRESSION_SCORINGS = ("r2", "neg_mean_squared_error", "neg_root_mean_squared_error")

#: The ``"auto"`` penalties: ``l_max * 10^k`` for these exponents ``k``.
AUTO_ALPHA_EXPONENTS = np.linspace(-12.0, 0.0, 13)


def largest_eigenvalue(stats: RidgeStatistics, fit_intercept: bool) -> float:
    """The largest eigenvalue of the (centred) Gram matrix, by Lanczos iteration.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models import RidgeStatistics
    >>> from kernelmaps.models._ridge._path import largest_eigenvalue
    >>> stats = RidgeStatistics(2, 1).update(np.diag([3.0, 1.0]), np.ones((2, 1)), np.ones(2))
    >>> round(largest_eigenvalue(stats, False), 9)
    9.0
    """
    G = _problem(stats, fit_intercept)[0]
    D = G.shape[0]
    if D <= 64:
        return float(max(np.linalg.eigvalsh(G)[-1], 0.0))
    value = scipy.sparse.linalg.eigsh(G, k=1, which="LA", v0=np.ones(D), tol=1e-6)[0]
    return float(max(value[0], 0.0))


def auto_alphas(
    stats: RidgeStatistics, fit_intercept: bool, top: float | None = None
) -> np.ndarray:
    """The penalties of ``alphas="auto"``: ``l_max 10^k`` for ``k = -12, -11, ..., 0``.

    Relative to the largest eigenvalue ``l_max`` of the Gram matrix, the grid spans from
    the rounding level of the solve (``D eps l_max``, about ``1e-12 l_max``) to a penalty
    that damps every direction to half or less; the scale of the features and of the
    number of rows drops out.  ``top``: ``l_max`` when it is known (an eigendecomposition
    at hand), else computed by :func:`largest_eigenvalue`.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models import RidgeStatistics
    >>> from kernelmaps.models._ridge._path import auto_alphas
    >>> stats = RidgeStatistics(1, 1).update(np.full((1, 1), 10.0), np.ones((1, 1)), np.ones(1))
    >>> auto_alphas(stats, False)[[0, -1]].tolist()
    [1e-10, 100.0]
    """
    if top is None:
        top = largest_eigenvalue(stats, fit_intercept)
    if not top > 0:
        top = 1.0  # constant features: any positive scale
    return top * 10.0**AUTO_ALPHA_EXPONENTS


def log_evidence(
    stats: RidgeStatistics, eig: EigenRidge, alphas: np.ndarray, fit_intercept: bool
) -> np.ndarray:
    """The log marginal likelihood per row of the Bayesian ridge model, for every alpha.

    With ``y = Z w + b + e``, ``e ~ N(0, sigma^2 S^{-1})``, the prior
    ``w ~ N(0, (sigma^2 / alpha) I)``, a flat prior on ``b`` and ``sigma^2`` set to its
    maximum-likelihood value, the centred targets ``B = S^{1/2} y_c`` of the
    ``N = n - [intercept]`` remaining degrees of freedom have the evidence

    .. math:: -\\frac{2}{N} \\log p(B \\mid \\alpha) = \\log \\hat\\sigma^2
              + \\frac{1}{N} \\sum_k \\log\\left(1 + \\frac{l_k}{\\alpha}\\right)
              + 1 + \\log 2\\pi,
              \\qquad N \\hat\\sigma^2 = y_c^T S y_c - \\sum_k \\frac{q_k^2}{l_k + \\alpha},

    from the eigenpairs ``(l_k, v_k)`` of the centred Gram matrix and
    ``q = V^T Z_c^T S y_c`` (Woodbury: ``(I + A A^T / alpha)^{-1} = I - A (A^T A +
    alpha I)^{-1} A^T``, ``A = S^{1/2} Z_c``).  Averaged over the targets, in nats per
    row: larger is better (MacKay 1992; Bishop 2006, section 3.5).  Directions below the
    rounding level are left out for penalties below it, as in the solves.

    References
    ----------
    MacKay, D. J. C. (1992). Bayesian interpolation. Neural Computation 4(3).
    Bishop, C. M. (2006). Pattern Recognition and Machine Learning, section 3.5.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models import RidgeStatistics
    >>> from kernelmaps.models._ridge._path import log_evidence
    >>> from kernelmaps.models._ridge._solvers import eigen_ridge
    >>> rng = np.random.default_rng(0)
    >>> Z = rng.normal(size=(200, 3))
    >>> stats = RidgeStatistics(3, 1).update(Z, Z[:, :1] + 0.1 * rng.normal(size=(200, 1)),
    ...                                      np.ones(200))
    >>> int(np.argmax(log_evidence(stats, eigen_ridge(stats, True), np.logspace(-3, 3, 7),
    ...                            True)))
    1
    """
    yy = _problem(stats, fit_intercept)[2]
    N = max(stats.n_samples - int(fit_intercept), 1)
    inv = eig.inverse(alphas)
    ratio = eig.evals[:, None] / alphas[None, :]
    log_det = np.sum(np.where(inv > 0, np.log1p(ratio), 0.0), axis=0)  # 0 where left out
    explained = (eig.Q * eig.Q).T @ inv  # (t, n_alphas)
    residual = np.clip(yy[:, None] - explained, np.finfo(np.float64).tiny, None) / N
    per_target = -0.5 * (np.log(residual) + log_det[None, :] / N + 1.0 + math.log(2 * math.pi))
    return np.mean(per_target, axis=0)


def merge_all(parts: list[RidgeStatistics]) -> RidgeStatistics:
    """The statistics of the rows of every element of ``parts`` (a pairwise tree).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models import RidgeStatistics
    >>> from kernelmaps.models._ridge._path import merge_all
    >>> one = RidgeStatistics(1, 1).update(np.ones((2, 1)), np.ones((2, 1)), np.ones(2))
    >>> merge_all([one, one.copy(), one.copy()]).n_samples
    6
    """
    while len(parts) > 1:
        pairs = [parts[i].merge(parts[i + 1]) for i in range(0, len(parts) - 1, 2)]
        parts = pairs + ([parts[-1]] if len(parts) % 2 else [])
    return parts[0]


def train_statistics(folds: list[RidgeStatistics], k: int) -> RidgeStatistics:
    """The statistics of every fold but ``k`` (the training rows of split ``k``)."""
    return merge_all([s for j, s in enumerate(folds) if j != k])


@dataclasses.dataclass(frozen=True)
class FoldErrors:
    """The held-out squared errors of one split, for every penalty.

    Attributes
    ----------
    sse : ndarray of shape (n_alphas, t)
        ``sum_{i in fold} w_i (y_i - yhat_i)^2`` per target.
    sst : ndarray of shape (t,)
        ``sum_{i in fold} w_i (y_i - ybar_fold)^2``, the fold's own spread.
    weight : float
        The fold's weight sum (its row count without sample weights).
    """

    sse: np.ndarray
    sst: np.ndarray
    weight: float


def fold_squared_errors(
    train: RidgeStatistics, test: RidgeStatistics, alphas: np.ndarray, fit_intercept: bool
) -> FoldErrors:
    """The squared errors on the rows of ``test`` of the ridge models of ``train``.

    With ``W(alpha)`` the weights of the training rows' model about their means
    ``(zbar, ybar)`` (:func:`train_weights`), a held-out residual is
    ``(y_i - ybar) - (z_i - zbar)^T W``, so

    .. math:: \\mathrm{SSE}(\\alpha) = q' - 2\\, \\mathrm{diag}(W^T C')
              + \\mathrm{diag}(W^T G' W),

    with ``(G', C', q')`` the held-out sums about the training means
    (:meth:`RidgeStatistics.about`).  ``O(D^3)`` per split plus ``O(D^2 t)`` per
    penalty, whatever the number of rows.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models import RidgeStatistics
    >>> from kernelmaps.models._ridge._path import fold_squared_errors
    >>> Z = np.arange(8.0).reshape(4, 2); y = Z @ np.array([[1.0], [-1.0]]) + Z[:, :1] ** 2
    >>> a = RidgeStatistics(2, 1).update(Z[:2], y[:2], np.ones(2))
    >>> b = RidgeStatistics(2, 1).update(Z[2:], y[2:], np.ones(2))
    >>> fold_squared_errors(a, b, np.array([1.0]), True).sse.shape
    (1, 1)
    """
    W, z_mean, y_mean = train_weights(train, alphas, fit_intercept)
    G, C, q = test.about(z_mean, y_mean)
    GW = (G @ W.reshape(W.shape[0], -1)).reshape(W.shape)
    sse = q[None, :] - 2.0 * np.sum(W * C[:, None, :], axis=0) + np.sum(W * GW, axis=0)
    sst = test.centred()[2]
    return FoldErrors(np.clip(sse, 0.0, None), sst, float(test.weight_sum))


def regression_scores(errors: FoldErrors, scoring: str) -> np.ndarray:
    """The score of each penalty on a split, as scikit-learn's scorer ``scoring``
    computes it from the predictions (uniform average over targets).

    ``"r2"``: ``1 - SSE / SST`` (1 for a perfect fit of a constant fold, 0 otherwise, as
    :func:`sklearn.metrics.r2_score`); ``"neg_mean_squared_error"``: ``-SSE / S_w``;
    ``"neg_root_mean_squared_error"``: ``-sqrt(SSE / S_w)``.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models._ridge._path import FoldErrors, regression_scores
    >>> errors = FoldErrors(np.array([[1.0], [4.0]]), np.array([8.0]), 4.0)
    >>> regression_scores(errors, "r2").tolist()
    [0.875, 0.5]
    >>> regression_scores(errors, "neg_mean_squared_error").tolist()
    [-0.25, -1.0]
    """
    sse, sst = errors.sse, errors.sst[None, :]
    if scoring == "r2":
        constant = sst <= 0
        ratio = np.divide(sse, sst, out=np.zeros_like(sse), where=~constant)
        per_target = np.where(constant, np.where(sse <= 0, 1.0, 0.0), 1.0 - ratio)
    elif scoring == "neg_mean_squared_error":
        per_target = -sse / errors.weight
    else:
        per_target = -np.sqrt(sse / errors.weight)
    return np.mean(per_target, axis=1)


def fold_weights(
    train: RidgeStatistics, alphas: np.ndarray, fit_intercept: bool
) -> tuple[np.ndarray, np.ndarray]:
    """The weights and intercepts of the ridge models of ``train`` for every penalty.

    Returns
    -------
    W : ndarray of shape (D, n_alphas * t)
        ``V diag(1 / (l + alpha)) V^T C`` for each alpha, the targets of an alpha
        side by side, so that one product ``Z W`` predicts every penalty.
    b : ndarray of shape (n_alphas * t,)
        ``ybar - W^T zbar``.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models import RidgeStatistics
    >>> from kernelmaps.models._ridge._path import fold_weights
    >>> stats = RidgeStatistics(1, 1).update(np.ones((1, 1)), np.ones((1, 1)), np.ones(1))
    >>> W, b = fold_weights(stats, np.array([1.0, 3.0]), False)
    >>> W.round(12).tolist(), b.round(12).tolist()
    ([[0.5, 0.25]], [0.0, 0.0])
    """
    weights, z_mean, y_mean = train_weights(train, alphas, fit_intercept)
    W = weights.reshape(weights.shape[0], -1)
    b = np.tile(y_mean, alphas.shape[0]) - z_mean @ W
    return W, b


#: Penalties from which one eigendecomposition (about ``9 D^3`` operations, with its
#: ``2 D^3`` products) costs less than a Cholesky factorization per penalty (``D^3 / 3``).
EIGEN_FROM = 32


def train_weights(
    train: RidgeStatistics, alphas: np.ndarray, fit_intercept: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ridge weights of the rows of ``train`` for every penalty, and their means.

    ``W[:, j, :] = (G + alpha_j I)^{-1} C`` from the (centred) statistics: a Cholesky
    factorization per penalty (:func:`~._solvers.solve_cholesky`, which falls back
    to the eigendecomposition for a penalty below the rounding level), or, for
    :data:`EIGEN_FROM` penalties or more, one eigendecomposition for all of them
    (``W = V diag(1 / (l + alpha)) V^T C``).  The same solutions to rounding.

    Returns
    -------
    W : ndarray of shape (D, n_alphas, t)
    z_mean, y_mean : ndarray of shape (D,) and (t,)
        The means the weights apply about (zeros without an intercept).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models import RidgeStatistics
    >>> from kernelmaps.models._ridge._path import train_weights
    >>> stats = RidgeStatistics(1, 1).update(np.ones((1, 1)), np.ones((1, 1)), np.ones(1))
    >>> train_weights(stats, np.array([1.0, 3.0]), False)[0].ravel().round(12).tolist()
    [0.5, 0.25]
    """
    if alphas.shape[0] >= EIGEN_FROM:
        eig = eigen_ridge(train, fit_intercept)
        U = eig.Q[:, None, :] * eig.inverse(alphas)[:, :, None]  # (D, n_alphas, t)
        W = (eig.V @ U.reshape(U.shape[0], -1)).reshape(U.shape)
        return W, eig.z_mean, eig.y_mean
    G, C, _, z_mean, y_mean = _problem(train, fit_intercept)
    W = np.stack([solve_cholesky(G, C, float(a)) for a in alphas], axis=1)
    return W, z_mean, y_mean
