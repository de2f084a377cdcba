"""The posterior of ridge regression on features: Bayesian linear regression.

With prior ``w ~ N(0, (sigma^2 / alpha) I)``, a flat prior on the intercept and noise
``N(0, sigma^2 / s_i)`` (``s_i`` the sample weights), the posterior of the weights is
Gaussian with the ridge solution as its mean and covariance ``sigma^2 (G_c + alpha I)^{-1}``
(``G_c = Z_c^T S Z_c`` the centred Gram matrix), and the intercept's ``ybar`` is independent
of ``w`` with variance ``sigma^2 / S_w`` (Bishop 2006, section 3.3).  So the latent variance
at ``x`` is

.. math:: \\operatorname{Var} f(x) = \\sigma^2 \\big(|B^T (z(x) - \\bar z)|^2_{D} + 1 / S_w\\big),

with ``B`` the basis of :func:`~._solvers.penalty_terms` (``L^{-T}`` for the Cholesky factor
``L L^T = G_c + alpha I``, or the eigenvectors scaled by ``(l + alpha)^{-1/2}``): the leverage
of a new row.  :class:`FeaturePosterior` evaluates it from the rows' square root
``R(x) = [B^T (z(x) - zbar) (l + alpha)^{-1/2}, S_w^{-1/2}]``: ``Cov(f(a), f(b)) = sigma^2
R(a) R(b)^T``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..._array_api import get_namespace, is_numpy
from ._solvers import LooTerms, project_rows

__all__ = ["FeaturePosterior", "weight_draws"]


@dataclasses.dataclass
class FeaturePosterior:
    """The :class:`~kernelmaps.models._uncertainty.Posterior` of a ridge fit on features.

    Attributes
    ----------
    terms : LooTerms
        Of the fitted penalty (:func:`~._solvers.penalty_terms`), on the host.
    features : callable
        ``z(X)`` of validated rows, where they are.
    block_rows : callable
        The row blocks of a pass over ``X``.
    """

    terms: LooTerms
    features: Callable[[Any], Any]
    block_rows: Callable[[Any], Iterable[slice]]
    #: the conformal scores of the fit, computed from ``terms`` when first needed
    scores: Any = None
    _moved: dict[str, LooTerms] = dataclasses.field(default_factory=dict)

    def terms_for(self, Z: Any) -> LooTerms:
        """``terms`` where the rows ``Z`` are (moved once per namespace and device)."""
        xp, device = get_namespace(Z)
        if is_numpy(xp):
            return self.terms
        key = f"{xp.__name__}:{device}"
        if key not in self._moved:
            self._moved[key] = self.terms.to_device(xp, device)
        return self._moved[key]

    def root(self, X: Any) -> Any:
        """``R(X)`` of shape (n, D [+ 1]): ``Cov(f(a), f(b)) / sigma^2 = R(a) R(b)^T``."""
        terms = self.terms_for(X)
        xp, P = project_rows(terms, self.features(X))
        scale = xp.sqrt(terms.inv[:, 0]) if not is_numpy(xp) else np.sqrt(terms.inv[:, 0])
        R = P * xp.astype(scale, P.dtype, copy=False) if not is_numpy(xp) else P * scale
        if not terms.fit_intercept:
            return R
        device = None if is_numpy(xp) else get_namespace(R)[1]
        column = xp.full(
            (R.shape[0], 1), 1.0 / math.sqrt(terms.weight_sum), dtype=R.dtype, device=device
        )
        return xp.concat([R, column], axis=1) if not is_numpy(xp) else np.hstack([R, column])

    def variance(self, A: Any) -> Any:
        R = self.root(A)
        xp = get_namespace(R)[0]
        return xp.sum(R * R, axis=1)

    def covariance(self, A: Any, B: Any) -> Any:
        return self.root(A) @ self.root(B).T

    smoother = covariance


def weight_draws(
    terms: LooTerms,
    coef: np.ndarray,
    intercept: np.ndarray,
    noise: np.ndarray,
    n_samples: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """Weights and intercepts of ``n_samples`` functions drawn from the posterior.

    ``w_s = w + sigma B diag((l + alpha)^{-1/2}) xi`` and ``ybar_s = ybar + sigma S_w^{-1/2}
    xi_0`` (``xi`` standard normal), so ``b_s = b + (ybar_s - ybar) - (w_s - w)^T zbar``.

    Parameters
    ----------
    terms : LooTerms
        Of the fitted penalty, on the host.
    coef : ndarray of shape (t, D)
    intercept : ndarray of shape (t,)
    noise : ndarray of shape (t,)
        ``sigma^2`` per target.
    n_samples : int
    rng : numpy.random.Generator

    Returns
    -------
    coefs : ndarray of shape (D, t, n_samples)
    intercepts : ndarray of shape (t, n_samples)
    """
    D, t = coef.shape[1], coef.shape[0]
    sigma = np.sqrt(noise)
    xi = rng.standard_normal((D, t * n_samples)) * np.sqrt(terms.inv[:, :1])
    delta = terms.eig.lift(xi).reshape(D, t, n_samples) * sigma[None, :, None]
    coefs = coef.T[:, :, None] + delta
    shift = np.einsum("dts,d->ts", delta, terms.eig.z_mean)
    intercepts = intercept[:, None] - shift
    if terms.fit_intercept:
        ybar = rng.standard_normal((t, n_samples)) * (sigma / math.sqrt(terms.weight_sum))[:, None]
        intercepts = intercepts + ybar
    return coefs, intercepts
