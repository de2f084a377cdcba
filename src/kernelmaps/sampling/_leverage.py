"""Recursive ridge leverage score sampling: landmarks drawn by their ridge leverage scores.

The ridge leverage score of row ``i`` of the kernel matrix ``K`` (``n x n``) at the
ridge ``lambda > 0`` is::

    l_i(lambda) = (K (K + lambda I)^{-1})_{ii},      d_eff(lambda) = sum_i l_i(lambda)

the effective dimension.  Sampling ``O(d_eff log d_eff)`` columns with probabilities
proportional to (overestimates of) the scores gives a Nyström approximation ``K_hat``
with ``K_hat <= K <= K_hat + lambda I`` with high probability (Musco & Musco 2017,
Theorem 3).  The scores are estimated without ``K`` from weighted landmarks ``S``
(weights ``W``, the inverse square roots of their sampling probabilities)::

    l_i ~ (k_ii - k_iS (K_SS + lambda W^{-2})^{-1} k_Si) / lambda

Recursive RLS-Nyström (Musco & Musco 2017, Algorithm 3, in the form of their reference
implementation) makes the estimates on nested uniform halvings ``n, n/2, n/4, ...`` of a
random permutation of the rows: the smallest set is the first sample; at each level the
scores of the larger set are estimated from the sample drawn on the smaller one, with
``lambda = (tr(W K_SS W) - sum of its top k eigenvalues) / k`` so that about ``m``
columns are kept, and every row is kept independently with probability
``min(1, log(m) l_i)``.  The last level draws exactly ``m`` distinct rows without
replacement with probabilities proportional to the estimated scores.

Cost: ``O(n m)`` kernel evaluations and ``O(n m^2)`` arithmetic over all levels, memory
``O(n m)`` at most (the kernel is evaluated in row blocks); the ``n x n`` matrix is never
formed.

References
----------
.. [1] C. Musco and C. Musco, "Recursive sampling for the Nyström method", NIPS 2017,
   arXiv:1605.07583.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.linalg

from .._array_api import to_numpy
from ._arguments import check_sampler_arguments
from ._kernel_blocks import (
    KERNEL_BLOCK_ROWS,
    dense,
    finite_kernel_diagonal,
    kernel_block,
    quiet_kernel_overflow,
    require_finite,
)

__all__ = ["recursive_rls_indices"]


@dataclass(frozen=True)
class _Schedule:
    """The sample sizes of the recursion.

    ``s_level`` rows are aimed at per intermediate level, kept with oversampling
    ``oversample``; ``k`` eigenvalues are left out of the ridge ``lambda``; ``sizes`` are
    the nested set sizes ``n, ceil(n/2), ...``, the last the first sample.
    """

    s_level: int
    oversample: float
    k: int
    sizes: tuple[int, ...]


def _schedule(n: int, s: int, accelerated: bool) -> _Schedule:
    """The :class:`_Schedule` of ``s < n`` landmarks among ``n`` rows."""
    s_level = math.ceil(math.sqrt((n * s + s**3) / (4 * n))) if accelerated else s
    s_level = max(s_level, 1)
    oversample = max(math.log(s_level), 1.0)
    k = max(1, math.ceil(s_level / (4 * oversample)))
    n_levels = max(0, math.ceil(math.log(n / s_level) / math.log(2)))
    sizes = [n]
    for _ in range(n_levels):
        sizes.append(math.ceil(sizes[-1] / 2))
    return _Schedule(s_level, oversample, k, tuple(sizes))


def _residual_diagonal(
    kernel: Callable[..., Any],
    X: Any,
    rows: np.ndarray,
    diag: np.ndarray,
    S: np.ndarray,
    R: np.ndarray,
) -> np.ndarray:
    """``k(x, x) - k_xS R k_Sx`` for the rows ``rows`` of ``X``, in row blocks."""
    out = np.empty(rows.shape[0])
    for start in range(0, rows.shape[0], KERNEL_BLOCK_ROWS):
        block = rows[start : start + KERNEL_BLOCK_ROWS]
        KS = kernel_block(kernel, dense(X[block]), S)
        out[start : start + block.shape[0]] = diag[block] - np.einsum("ij,ij->i", KS @ R, KS)
    return out


def _top_eigenvalues(A: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` largest eigenvalues of the symmetric ``A`` (``k < len(A)``).

    LAPACK's ``syevr``, which computes only those, can stop with an internal error on
    matrices of nearly repeated eigenvalues (a numerically low-rank kernel matrix); then
    all eigenvalues are computed by ``syevd`` and the largest ``k`` kept.
    """
    m = A.shape[0]
    try:
        return scipy.linalg.eigh(A, eigvals_only=True, subset_by_index=[m - k, m - 1])
    except np.linalg.LinAlgError:
        return np.linalg.eigvalsh(A)[m - k :]


def _ridge(WKW: np.ndarray, k: int) -> float:
    """The ridge ``lambda`` of a level from the weighted kernel matrix ``W K_SS W``.

    ``lambda = (tr(W K_SS W) - sum of its top k eigenvalues) / k``, at least
    ``1e-6 tr / |S|``; with ``k >= |S|``, ``tr / k`` (then ``tr(K) / lambda <= k`` bounds
    the effective dimension by ``k``, ``tr(K)`` estimated from the weighted sample).
    """
    m_s = WKW.shape[0]
    if k >= m_s:
        return max(float(np.trace(WKW)) / k, np.finfo(float).tiny)
    top = _top_eigenvalues(WKW, k)
    lam = (float(np.trace(WKW)) - float(np.sum(np.abs(top)))) / k
    return max(lam, 1e-6 * float(np.trace(WKW)) / m_s, np.finfo(float).tiny)


def _scaled_scores(
    kernel: Callable[..., Any],
    X: Any,
    current: np.ndarray,
    chosen: np.ndarray,
    weights: np.ndarray,
    diag: np.ndarray,
    k: int,
) -> tuple[np.ndarray, float]:
    """``lambda l_i`` of the rows ``current`` estimated from the weighted rows ``chosen``,
    and ``lambda``: ``max(0, k_ii - k_iS (K_SS + lambda W^{-2})^{-1} k_Si)``."""
    S = dense(X[chosen])
    SKS = kernel_block(kernel, S, S)
    require_finite(SKS, "leverage", X, "the kernel matrix of the sampled rows")
    SKS = 0.5 * (SKS + SKS.T)
    lam = _ridge(SKS * weights[:, None] * weights[None, :], k)
    A = SKS + np.diag(lam / weights**2)
    require_finite(A, "leverage", X, "the regularized kernel matrix of the sampled rows")
    R = scipy.linalg.pinvh(A, check_finite=False)
    residual = np.maximum(_residual_diagonal(kernel, X, current, diag, S, R), 0.0)
    require_finite(residual, "leverage", X, "the ridge leverage scores")
    return residual, lam


def _resample(
    residual: np.ndarray, lam: float, plan: _Schedule, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """The sample of an intermediate level and its weights ``1 / sqrt(p_i)``.

    Each row is kept independently with probability ``p_i = min(1, oversample l_i)``;
    when none is, ``s_level`` rows are drawn uniformly instead.
    """
    n_current = residual.shape[0]
    levs = np.minimum(1.0, plan.oversample * residual / lam)
    samp = np.flatnonzero(rng.random(n_current) < levs)
    if samp.size == 0:
        levs[:] = min(1.0, plan.s_level / n_current)
        samp = rng.choice(n_current, size=min(plan.s_level, n_current), replace=False)
    return samp, np.sqrt(1.0 / levs[samp])


def _final_sample(residual: np.ndarray, lam: float, s: int, rng: np.random.Generator) -> np.ndarray:
    """``s`` distinct rows drawn with probabilities proportional to ``min(1, l_i)``."""
    levs = np.minimum(1.0, residual / lam)
    # Every row keeps a tiny chance so that s distinct rows can always be drawn.
    p = levs + 1e-12 * max(float(levs.max()), 1e-300)
    p /= p.sum()
    return rng.choice(residual.shape[0], size=s, replace=False, p=p)


def recursive_rls_indices(
    X: Any,
    n_landmarks: int,
    kernel: Callable[..., Any],
    rng: np.random.Generator,
    *,
    accelerated: bool = False,
) -> np.ndarray:
    """Indices of ``n_landmarks`` distinct rows sampled by approximate ridge leverage scores.

    Recursive ridge leverage score sampling (Musco & Musco 2017): on nested uniform
    halvings ``n, n/2, n/4, ...`` of a random permutation, the leverage scores
    ``l_i(lambda) = (K (K + lambda I)^{-1})_{ii}`` of the larger set are estimated
    from the weighted landmarks ``S`` chosen on the smaller one,
    ``l_i ~ (k_ii - k_iS (K_SS + lambda W^{-2})^{-1} k_Si) / lambda``, with
    ``lambda`` set so that about ``m`` columns are kept (``lambda = (tr(K_SS) -
    sum of its top k eigenvalues) / k``).  The last level samples exactly ``m`` rows
    without replacement with probabilities proportional to the estimated scores.  See
    ``kernelmaps.sampling._leverage``.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        Finite rows (an array of another library is read on a host copy: the recursion
        is SciPy's).
    n_landmarks : int
        Number of rows ``m >= 1``; every row when ``m >= n_samples``.
    kernel : callable
        ``kernel(A, B)`` returns the kernel matrix between the rows of ``A`` and ``B``;
        ``kernel.diag(A)`` is used when present.
    rng : numpy.random.Generator
        Source of the permutation and of the samples.
    accelerated : bool, default=False
        Intermediate samples of ``sqrt(n m + m^3) / (2 sqrt(n))`` rows (Musco & Musco's
        accelerated variant): cheaper, but its estimates are poor for small ``m``.

    Returns
    -------
    ndarray of int
        Sorted distinct row indices.

    References
    ----------
    .. [1] C. Musco and C. Musco, "Recursive sampling for the Nyström method", NIPS 2017.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import Gaussian
    >>> from kernelmaps.sampling import recursive_rls_indices
    >>> X = np.random.default_rng(0).normal(size=(200, 3))
    >>> recursive_rls_indices(X, 10, Gaussian(gamma=0.5), np.random.default_rng(0)).shape
    (10,)
    """
    X, s = check_sampler_arguments(to_numpy(X), n_landmarks, kernel, rng)
    with quiet_kernel_overflow():
        return _recursive_rls_indices(X, s, kernel, rng, accelerated)


def _recursive_rls_indices(
    X: Any, s: int, kernel: Callable[..., Any], rng: np.random.Generator, accelerated: bool
) -> np.ndarray:
    """:func:`recursive_rls_indices` of checked arguments, ``s`` the number of rows."""
    n = X.shape[0]
    if s >= n:
        return np.arange(n)
    plan = _schedule(n, s, accelerated)
    perm = rng.permutation(n)
    diag = finite_kernel_diagonal(kernel, X, "leverage")
    samp = np.arange(plan.sizes[-1])
    weights = np.ones(samp.shape[0])
    for level in range(max(len(plan.sizes) - 2, 0), -1, -1):
        current = perm[: plan.sizes[level]]
        residual, lam = _scaled_scores(kernel, X, current, perm[samp], weights, diag, plan.k)
        if level > 0:
            samp, weights = _resample(residual, lam, plan, rng)
        else:
            samp = _final_sample(residual, lam, s, rng)
    return np.sort(perm[samp])
