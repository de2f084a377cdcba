"""Newton's method with preconditioned conjugate gradients for L2 logistic regression.

The problem, with ``theta = (W, b)`` (``W`` of shape ``(K, D)``, ``b`` of shape ``(K,)``,
held together as one ``(K, D + 1)`` array, its last column the unpenalized intercept):

    f(theta) = 1/2 ||W||_F^2 + C sum_i s_i l_i(W z_i + b),

scikit-learn's ``LogisticRegression(penalty="l2")`` objective times ``C sum_i s_i``.  Each
Newton step solves ``H d = -g`` approximately by conjugate gradients (the truncated Newton
method of Lin, Weng & Keerthi 2008, with the forcing term ``min(1/2, sqrt(|g|_inf))`` of
scikit-learn's ``newton-cg``, ``|g|_inf`` scaled as ``tol`` is: the conjugate gradients stop
at a residual of that times ``|g|``, or of ``tol / 2`` scaled, whichever is larger, since
the residual is the gradient the quadratic model predicts after the step), then takes the
longest step ``t`` in ``1, 1/2, 1/4, ...`` with Armijo's sufficient decrease.  The
conjugate gradients are preconditioned by the Cholesky factor of a bound of the Hessian,

    H <= I_0 + C (I_K - 1 1^T / K) (x) A^T S_c A,     A = [Z 1],

``S_c`` the weights ``s_i`` times a bound ``c_i`` of row ``i``'s curvature at the point it
is formed at (``kernelmaps.models._logistic._passes.curvature_bound``: at ``theta = 0``
Böhning's (1992) ``1/4`` for the binomial, one score, and ``1/2`` for the multinomial),
``I_0`` the identity with a zero for the intercept: on the class-centred part of a
direction it solves with ``I_0 + C A^T S_c A``, on the part common to the classes (where
the loss does not change) with the identity.  This is LogisticFalkon's preconditioner
(Meanti et al. 2020) for explicit features: a ``(D + 1) x (D + 1)`` factorization, after
which a conjugate-gradient step costs one pass over the rows (a Hessian-vector product,
``O(n D K)``).  It is formed at the start, and formed again at the new point (one pass of
``O(n D^2)``) after a Newton step whose conjugate gradients took ``refresh_steps`` steps
or more: as the rows become confident their curvature falls below Böhning's bound, and a
bound formed at the current point is tighter.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable

import numpy as np
import scipy.linalg

from .._ridge_statistics import RidgeStatistics

__all__ = ["BoundPreconditioner", "NewtonResult", "newton_cg"]

#: Conjugate-gradient steps of one Newton step at most.
MAX_CG = 100
#: Halvings of a Newton step at most.
MAX_HALVINGS = 40
#: Armijo's sufficient decrease.
ARMIJO = 1e-4


class BoundPreconditioner:
    """``M^{-1}`` for the bound ``M`` of the logistic Hessian (module docstring).

    Parameters
    ----------
    stats : RidgeStatistics
        The sums of the features weighted by ``s_i c_i`` (NumPy).
    C : float
        The inverse penalty.
    n_scores : int
        ``K``: 1 (binomial) or the number of classes (multinomial).
    fit_intercept : bool
        Whether the last column of the arrays is the intercept.
    """

    def __init__(
        self, stats: RidgeStatistics, C: float, n_scores: int, fit_intercept: bool
    ) -> None:
        G = stats.uncentred()[0]
        D = G.shape[0]
        if fit_intercept:
            a = stats.means()[0] * stats.weight_sum
            G = np.block([[G, a[:, None]], [a[None, :], np.array([[stats.weight_sum]])]])
        M = C * G
        M[np.arange(D), np.arange(D)] += 1.0
        self.n_scores = n_scores
        self.factor = scipy.linalg.cho_factor(M, lower=True, check_finite=False)

    def __call__(self, R: np.ndarray) -> np.ndarray:
        """``M^{-1} R`` for ``R`` of shape ``(K, D [+ 1])``."""
        if self.n_scores == 1:
            return scipy.linalg.cho_solve(self.factor, R.T, check_finite=False).T
        common = R.mean(axis=0)
        centred = scipy.linalg.cho_solve(self.factor, (R - common).T, check_finite=False).T
        return centred + common


@dataclasses.dataclass
class NewtonResult:
    """The solution ``theta``, its objective, the Newton steps taken, and whether the
    gradient reached the tolerance."""

    theta: np.ndarray
    objective: float
    n_iter: int
    converged: bool


Evaluate = Callable[[np.ndarray], tuple[float, np.ndarray]]
HessianProduct = Callable[[np.ndarray, np.ndarray], np.ndarray]


def _pcg(
    hessp: Callable[[np.ndarray], np.ndarray],
    g: np.ndarray,
    precondition: Callable[[np.ndarray], np.ndarray],
    tol: float,
) -> tuple[np.ndarray, int]:
    """``d`` with ``|H d + g| <= tol`` (or after :data:`MAX_CG` steps), and the steps."""
    d = np.zeros_like(g)
    r = -g
    z = precondition(r)
    p = z
    rz = float(np.vdot(r, z))
    for step in range(1, MAX_CG + 1):
        Hp = hessp(p)
        curvature = float(np.vdot(p, Hp))
        if curvature <= 0:  # rounding at a direction of no curvature: stop here
            return (d if step > 1 else r), step
        alpha = rz / curvature
        d += alpha * p
        r -= alpha * Hp
        if np.linalg.norm(r) <= tol:
            return d, step
        z = precondition(r)
        rz_new = float(np.vdot(r, z))
        p = z + (rz_new / rz) * p
        rz = rz_new
    return d, MAX_CG


def newton_cg(
    evaluate: Evaluate,
    hessp: HessianProduct,
    preconditioner: Callable[[np.ndarray], Callable[[np.ndarray], np.ndarray]],
    theta: np.ndarray,
    *,
    gradient_scale: float,
    tol: float,
    max_iter: int,
    refresh_steps: int,
    log: Callable[[str], None] | None = None,
) -> NewtonResult:
    """Minimize ``f`` from ``theta`` by preconditioned Newton-CG with a line search.

    Parameters
    ----------
    evaluate : callable
        ``evaluate(theta) -> (f, g)``: the objective and its gradient (one pass).
    hessp : callable
        ``hessp(theta, V) -> H(theta) V`` (one pass).  Its ``theta`` is the very array
        ``evaluate`` was last called with, so the passes may keep what they computed
        there (the rows' probabilities).
    preconditioner : callable
        ``preconditioner(theta)`` gives ``precondition(R) -> M^{-1} R`` for the bound
        formed at ``theta``.
    theta : ndarray
        The starting point.
    gradient_scale : float
        ``C sum_i s_i``: the gradient divided by it is scikit-learn's, which ``tol``
        bounds (in the max norm).
    tol : float
    max_iter : int
        Newton steps at most.
    refresh_steps : int
        Form the preconditioner again after a Newton step of this many conjugate-gradient
        steps or more.
    log : callable, optional
        Receives a line per Newton step.
    """
    precondition = preconditioner(theta)
    f, g = evaluate(theta)
    n_iter, refresh = 0, False
    while True:
        size = float(np.max(np.abs(g))) / gradient_scale
        if size <= tol:
            return NewtonResult(theta, f, n_iter, True)
        if n_iter >= max_iter:
            return NewtonResult(theta, f, n_iter, False)
        if refresh:
            precondition = preconditioner(theta)
        # the residual H d + g is the gradient the quadratic model predicts after the
        # step: no need to make it much smaller than tol asks
        forcing = min(0.5, np.sqrt(size))
        target = max(forcing * float(np.linalg.norm(g)), 0.5 * tol * gradient_scale)
        d, steps = _pcg(functools.partial(hessp, theta), g, precondition, target)
        slope = float(np.vdot(g, d))
        if slope >= 0:  # not a descent direction (rounding): the preconditioned gradient
            d = -precondition(g)
            slope = float(np.vdot(g, d))
        t = 1.0
        for _ in range(MAX_HALVINGS):
            trial = theta + t * d
            f_new, g_new = evaluate(trial)
            # rounding of f near the minimum: a change below it counts as no increase
            if f_new <= f + ARMIJO * t * slope + 16 * np.finfo(float).eps * abs(f):
                break
            t *= 0.5
        else:
            return NewtonResult(theta, f, n_iter, False)
        theta, f, g = trial, f_new, g_new
        n_iter += 1
        if log is not None:
            log(
                f"Newton step {n_iter}: objective {f:.10g}, step {t:g}, {steps} CG steps, "
                f"gradient {float(np.max(np.abs(g))) / gradient_scale:.3g}"
            )
        refresh = steps >= refresh_steps
