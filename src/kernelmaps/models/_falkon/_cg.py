"""Conjugate gradient on a symmetric positive-definite operator that is only a matvec.

The solver knows nothing of kernels or preconditioners: the caller composes them into the
``matvec`` it hands over (FALKON's split between ``optim/conjgrad.py`` and its
preconditioners).  Several right-hand sides are solved at once, each column with its own
step sizes, so a multi-output regression costs one operator application per iteration.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["CGResult", "conjugate_gradient"]


@dataclasses.dataclass(frozen=True)
class CGResult:
    """Outcome of :func:`conjugate_gradient`.

    Attributes
    ----------
    x : ndarray of shape (n, k)
        The approximate solutions, one column per right-hand side.
    n_iter : int
        Operator applications (iterations) performed.
    residual : ndarray of shape (k,)
        Relative residual ``|b - A x| / |b|`` of each column (from the CG recurrence), for
        the returned iterate: the one with the smallest residual.
    converged : bool
        Whether every column reached ``residual <= tol``.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models import conjugate_gradient
    >>> conjugate_gradient(lambda V: 2.0 * V, np.ones(3)).residual.tolist()
    [0.0]
    """

    x: np.ndarray
    n_iter: int
    residual: np.ndarray
    converged: bool


def conjugate_gradient(
    matvec: Callable[[np.ndarray], np.ndarray],
    b: np.ndarray,
    *,
    tol: float = 1e-6,
    max_iter: int = 100,
    x0: np.ndarray | None = None,
    callback: Callable[[int, np.ndarray], None] | None = None,
) -> CGResult:
    """Solve ``A x = b`` for a symmetric positive-definite ``A`` given as ``matvec``.

    Parameters
    ----------
    matvec : callable
        ``matvec(V)`` returns ``A @ V`` for ``V`` of shape (n, k).
    b : ndarray of shape (n,) or (n, k)
        Right-hand sides.
    tol : float, default=1e-6
        Stop a column once ``|b - A x| <= tol |b|``.
    max_iter : int, default=100
        Largest number of iterations (operator applications).
    x0 : ndarray, optional
        Starting point (zero by default; a nonzero one costs one more matvec).
    callback : callable, optional
        ``callback(iteration, residual)`` after each iteration: the iterations so far
        and the relative residual of every column, shape (k,) (for progress reports).

    Returns
    -------
    CGResult

    Notes
    -----
    Hestenes & Stiefel (1952).  In exact arithmetic the error in the ``A``-norm shrinks at
    least by ``2 ((sqrt(kappa) - 1) / (sqrt(kappa) + 1))^t`` after ``t`` iterations, with
    ``kappa`` the condition number of ``A``, which is why a good preconditioner (folded
    into ``matvec`` by the caller) makes the iteration count small.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models import conjugate_gradient
    >>> A = np.array([[4.0, 1.0], [1.0, 3.0]])
    >>> result = conjugate_gradient(lambda V: A @ V, np.array([1.0, 2.0]), tol=1e-12)
    >>> result.x.round(6).tolist(), result.n_iter, result.converged
    ([0.090909, 0.636364], 2, True)
    """
    B, unit, scale = _unit_columns(b)
    n, k = B.shape
    if x0 is None:
        X = np.zeros((n, k))
        R = B.copy()
        n_iter = 0
    else:
        X = np.array(x0, dtype=np.float64).reshape(n, k) / unit
        R = B - matvec(X)
        n_iter = 1
    best_X, residual, iterations = _iterate(matvec, X, R, scale, tol, max_iter, callback)
    with np.errstate(over="ignore"):
        X = best_X * unit
    x = X[:, 0] if np.ndim(b) == 1 else X
    return CGResult(
        x=x,
        n_iter=n_iter + iterations,
        residual=residual,
        converged=bool(np.all(residual <= tol)),
    )


def _unit_columns(b: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``b`` as columns (checked finite) divided by their units, the units, and the norms
    of the scaled columns (1 for a zero column).

    The iteration is linear in ``b``: each column is solved divided by a power of 2 close
    to its largest entry (exact; the entries are then below 2 in magnitude) so that the
    squared norms cannot overflow, then multiplied back.
    """
    B = np.asarray(b, dtype=np.float64)
    if B.ndim == 1:
        B = B[:, None]
    if not np.all(np.isfinite(B)):
        raise ValueError(
            "conjugate_gradient: the right-hand side b holds inf or NaN; give finite values."
        )
    n, k = B.shape
    top = np.max(np.abs(B), axis=0) if n else np.zeros(k)
    unit = np.where(top > 0, np.ldexp(1.0, np.frexp(top)[1] - 1), 1.0)
    B = B / unit
    b_norm = np.linalg.norm(B, axis=0)
    return B, unit, np.where(b_norm > 0, b_norm, 1.0)


def _iterate(
    matvec: Callable[[np.ndarray], np.ndarray],
    X: np.ndarray,
    R: np.ndarray,
    scale: np.ndarray,
    tol: float,
    max_iter: int,
    callback: Callable[[int, np.ndarray], None] | None = None,
) -> tuple[np.ndarray, np.ndarray, int]:
    """The conjugate-gradient iterations from ``X`` with residual ``R`` (updated in
    place), each column until its relative residual is below ``tol``; returns the iterate
    with the smallest residual of each column, those residuals, and the iterations run.
    ``callback(iterations, residual)`` is called after each iteration.

    Rounding can make the recurrence drift once the attainable accuracy is reached; the
    iterate with the smallest residual is the one returned, column by column.
    """
    P = R.copy()
    rr = np.einsum("ij,ij->j", R, R)
    residual = np.sqrt(rr) / scale
    best_X = X.copy()
    best = residual.copy()
    active = residual > tol
    iterations = 0
    while active.any() and iterations < max_iter:
        AP = matvec(P[:, active])
        iterations += 1
        pap = np.einsum("ij,ij->j", P[:, active], AP)
        # A positive-definite operator has pAp > 0; a column with pAp <= 0 has stalled.
        step = np.divide(rr[active], pap, out=np.zeros_like(pap), where=pap > 0)
        X[:, active] += P[:, active] * step
        R[:, active] -= AP * step
        rr_new = np.einsum("ij,ij->j", R[:, active], R[:, active])
        beta = np.divide(rr_new, rr[active], out=np.zeros_like(rr_new), where=rr[active] > 0)
        P[:, active] = R[:, active] + P[:, active] * beta
        rr[active] = rr_new
        residual = np.sqrt(rr) / scale
        improved = residual < best
        best[improved] = residual[improved]
        best_X[:, improved] = X[:, improved]
        stalled = np.zeros_like(active)
        stalled[active] = pap <= 0
        active = (residual > tol) & ~stalled
        if callback is not None:
            callback(iterations, residual)
    return best_X, best, iterations
