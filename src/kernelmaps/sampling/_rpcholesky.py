"""Randomly pivoted Cholesky: landmarks sampled by the diagonal of the residual kernel matrix.

RPCholesky (Chen, Epperly, Tropp & Webber 2024, Algorithm 1) builds a rank-``k``
factor ``F`` (``n x k``) of the kernel matrix ``K`` of the rows of ``X`` one column at a
time, choosing each pivot ``s`` at random with probability proportional to the diagonal of
the residual, ``d = diag(K) - rowsum(F * F)``::

    s ~ d / sum(d)
    g = K[:, s] - F F[s]^T              (a column of the residual K - F F^T)
    F[:, k] = g / sqrt(g[s]),   d = d - F[:, k]^2

Only ``n`` kernel entries are evaluated per pivot: ``O(n m)`` evaluations, ``O(n m^2)``
arithmetic and ``O(n m)`` memory for ``m`` pivots; the ``n x n`` matrix is never formed.
``F F^T`` is the Nyström approximation ``K[:, S] K[S, S]^+ K[S, :]`` of the pivots ``S``,
so the pivots are the landmarks of a column-subset Nyström approximation.  Its guarantee
(Chen et al., Theorem 5.1): with ``m >= r / eps + r log(1 / (eps eta))`` pivots,
``eta = tr(K - [[K]]_r) / tr(K)`` the relative error of the best rank-``r``
approximation, ``E tr(K - F F^T) <= (1 + eps) tr(K - [[K]]_r)``: near-optimal in the
trace norm, within a logarithm of what the best column subsets achieve.

The blocked, accelerated form (Epperly, Tropp & Webber 2024, "Embrace rejection") makes
the same draws in blocks: ``b`` proposals are drawn at once, independently, with
replacement, from ``d``; the ``b x b`` residual block ``H`` of the proposals is factored
by a Cholesky that accepts proposal ``j`` with probability ``H'_jj / H_jj``, ``H'`` the
block after elimination of the proposals accepted before ``j`` (rejection sampling: the
accepted pivots have exactly the law of the pivots of Algorithm 1); then only the columns
of the accepted pivots are evaluated, ``F_new = (K[:, T] - F F[T]^T) L^{-T}`` with ``L``
the Cholesky factor of the accepted block.  The kernel is evaluated on ``n`` entries per
accepted pivot plus ``b^2`` per block, and the work is done by matrix-matrix products.
Repeated proposals are evaluated once (and rejected: a pivot already eliminated has a
zero residual).

A residual below ``RESIDUAL_RTOL * k(x, x)`` is taken as zero (round-off: after ``k``
rank-one updates the float64 error of ``d_i`` is about ``k eps k(x, x)``, below
``1e-12 k(x, x)`` for ``k <= 5000``).  When every residual is zero (duplicate rows, or
more pivots than the numerical rank of ``K``) the factorization stops early with fewer
pivots.

References
----------
.. [1] Y. Chen, E. N. Epperly, J. A. Tropp and R. J. Webber, "Randomly pivoted Cholesky:
   practical approximation of a kernel matrix with few entry evaluations", Comm. Pure
   Appl. Math. 78 (2025) 995-1041 (online 2024), arXiv:2207.06503.
.. [2] E. N. Epperly, J. A. Tropp and R. J. Webber, "Embrace rejection: kernel matrix
   approximation by accelerated randomly pivoted Cholesky", arXiv:2410.03969 (2024).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from .._array_api import get_namespace, is_numpy, to_namespace, to_numpy
from ._arguments import check_count, check_sampler_arguments
from ._kernel_blocks import (
    KERNEL_BLOCK_ROWS,
    dense,
    finite_kernel_diagonal,
    kernel_block,
    quiet_kernel_overflow,
    require_finite,
    take_rows,
    work_dtype,
)

__all__ = [
    "RESIDUAL_RTOL",
    "RPCHOLESKY_BLOCK_SIZE",
    "RPCholeskyResult",
    "rpcholesky",
    "rpcholesky_indices",
]

#: Default number of proposals per block of the accelerated form.
RPCHOLESKY_BLOCK_SIZE = 100

#: Residuals below this fraction of ``k(x, x)`` are round-off, taken as zero.
RESIDUAL_RTOL = 1e-12


class RPCholeskyResult(NamedTuple):
    """The pivots of :func:`rpcholesky` in the order chosen and the factor ``F``.

    ``F F^T`` approximates the kernel matrix; ``F[:, j]`` is the column of pivot
    ``indices[j]``; ``F`` has ``len(indices)`` columns (fewer than asked for when every
    residual became zero).  ``indices`` is a NumPy array; ``F`` is an array of the rows'
    library, on their device.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import Gaussian
    >>> from kernelmaps.sampling import rpcholesky
    >>> X = np.repeat(np.eye(3), 2, axis=0)  # three distinct rows, each twice
    >>> result = rpcholesky(X, 5, Gaussian(gamma=1.0), np.random.default_rng(0))
    >>> result.factor.shape  # the residual vanishes after one pivot per distinct row
    (6, 3)
    """

    indices: np.ndarray
    factor: Any


def _sample(d: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Indices drawn with probabilities ``d / sum(d)`` by inversion of the uniforms ``u``.

    ``searchsorted(..., side="right")`` never returns an index of zero weight: the first
    cumulative sum above ``u * total`` is reached at a positive entry.
    """
    c = np.cumsum(d)
    return np.minimum(np.searchsorted(c, u * c[-1], side="right"), d.shape[0] - 1)


def _zero_small(d: np.ndarray, floor: np.ndarray) -> None:
    np.maximum(d, 0.0, out=d)
    d[d <= floor] = 0.0


def rpcholesky(
    X: Any,
    n_landmarks: int,
    kernel: Callable[..., Any],
    rng: np.random.Generator,
    *,
    block_size: int = RPCHOLESKY_BLOCK_SIZE,
) -> RPCholeskyResult:
    """Randomly pivoted Cholesky of the kernel matrix of the rows of ``X``.

    Chooses up to ``n_landmarks`` distinct rows (pivots) by sampling each with
    probability proportional to the diagonal of the current residual
    ``d = diag(K) - rowsum(F * F)`` and returns them with the factor ``F`` of the
    Nyström approximation ``F F^T = K[:, S] K[S, S]^+ K[S, :]`` they define.  See
    ``kernelmaps.sampling._rpcholesky`` for the algorithm and its guarantee.

    Parameters
    ----------
    X : {ndarray, sparse matrix} or array of another library, of shape (n_samples, n_features)
        Finite rows (float32 rows are evaluated by the kernel and the factor is float64).
        Arrays of another library give arrays of theirs, on their device (see Notes).
    n_landmarks : int
        Number of pivots ``m >= 1`` (at most ``n_samples`` are chosen).
    kernel : callable
        ``kernel(A, B)`` returns the kernel matrix between the rows of ``A`` and ``B``
        (positive semidefinite); ``kernel.diag(A)`` is used when present.
    rng : numpy.random.Generator
        Source of the pivots.  ``block_size=1`` draws one uniform per pivot (inversion
        of the cumulative residual); a block draws ``b`` proposals and ``b`` acceptance
        uniforms.
    block_size : int, default=100
        Proposals per block of the accelerated form (Epperly, Tropp & Webber 2024);
        ``1`` is Algorithm 1 of Chen et al. (one pivot at a time).  Every block size
        gives pivots of the same law; larger blocks do more of the work by matrix
        products, at the cost of ``b^2`` kernel entries per block and of rejected
        proposals.

    Returns
    -------
    RPCholeskyResult
        ``indices`` (NumPy int array, the pivots in the order chosen) and ``factor``
        (float64 array of shape ``(n_samples, len(indices))``, in ``X``'s namespace and
        on its device).  Fewer than ``n_landmarks``
        pivots when every residual is zero (below ``RESIDUAL_RTOL * k(x, x)``): the
        kernel matrix has lower numerical rank, e.g. through duplicate rows.

    Notes
    -----
    Cost: ``O(n m)`` kernel evaluations (plus ``b^2`` per block), ``O(n m^2)``
    arithmetic, ``O(n m)`` memory (the factor), the kernel evaluated in blocks of at
    most 4096 rows.

    Rows of another library (PyTorch, CuPy, ...): the factor and the kernel evaluations
    live on ``X``'s device, the residual diagonal ``d`` (``n`` values) on the host, where
    the pivots are drawn from ``rng`` as for NumPy rows.  Each pivot (``block_size=1``)
    or block copies ``n`` values from the device (the squared norms of the new columns)
    and the ``b x b`` residual block of the proposals, accepted or rejected on the host.
    The device computes in float64 where it has it, with the kernel's values rounded to
    the rows' dtype as the NumPy kernels round them (:func:`kernel_block`): the pivots
    are those of NumPy rows unless a draw falls within rounding (``~1e-16`` relative) of
    the boundary between two rows.  On a device without float64, round-off residuals
    are those below ``m eps_32 k(x, x)`` (``eps_32`` of float32) instead of
    ``RESIDUAL_RTOL k(x, x)``.

    References
    ----------
    .. [1] Y. Chen, E. N. Epperly, J. A. Tropp and R. J. Webber, "Randomly pivoted
       Cholesky: practical approximation of a kernel matrix with few entry
       evaluations", Comm. Pure Appl. Math. 78 (2025), Algorithm 1.
    .. [2] E. N. Epperly, J. A. Tropp and R. J. Webber, "Embrace rejection: kernel
       matrix approximation by accelerated randomly pivoted Cholesky",
       arXiv:2410.03969 (2024).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import Gaussian
    >>> from kernelmaps.sampling import rpcholesky
    >>> X = np.random.default_rng(0).normal(size=(200, 3))
    >>> idx, F = rpcholesky(X, 10, Gaussian(gamma=0.5), np.random.default_rng(0))
    >>> idx.shape, F.shape, len(set(idx.tolist()))
    ((10,), (200, 10), 10)
    """
    X, m = check_sampler_arguments(X, n_landmarks, kernel, rng)
    b = check_count(block_size, "block_size")
    with quiet_kernel_overflow():
        return _rpcholesky(X, min(m, int(X.shape[0])), kernel, rng, b)


def _rpcholesky(
    X: Any, m: int, kernel: Callable[..., Any], rng: np.random.Generator, b: int
) -> RPCholeskyResult:
    factor = _Factor(X, kernel, m)
    diag = finite_kernel_diagonal(kernel, X, "rpcholesky")
    floor = factor.round_off(m) * np.abs(diag)
    d = diag.copy()
    _zero_small(d, floor)
    pivots = np.empty(m, dtype=np.intp)
    k = 0
    while k < m and d.sum() > 0.0:
        if b == 1:
            (s,) = _sample(d, rng.random(1))
            accepted = np.array([s])
            g = factor.residual_columns(accepted, k)
            gs = float(g[int(s), 0])
            if not gs > floor[s]:  # round-off: the residual there is zero
                d[s] = 0.0
                continue
            factor.F[:, k : k + 1] = g / math.sqrt(gs)
        else:
            proposals = _sample(d, rng.random(min(b, m - k)))
            distinct, inverse = np.unique(proposals, return_inverse=True)
            Hd = factor.residual_block(distinct, k)
            accepted, L = _accept_proposals(Hd, proposals, inverse, d, floor, rng)
            if not accepted.size:
                continue
            # G L^{-T} by one matrix product with the inverse of the small a x a factor
            # (numpy's BLAS and LAPACK only: alternating with scipy's own OpenBLAS, whose
            # threads keep spinning after a call, costs several times the work at n = 1000)
            factor.set_columns(k, factor.residual_columns(accepted, k), np.linalg.inv(L).T)
        a = accepted.shape[0]
        d -= factor.new_norms(k, a)
        pivots[k : k + a] = accepted
        k += a
        d[pivots[:k]] = 0.0
        _zero_small(d, floor)
    return factor.result(pivots, k, m)


def _accept_proposals(
    Hd: np.ndarray,
    proposals: np.ndarray,
    inverse: np.ndarray,
    d: np.ndarray,
    floor: np.ndarray,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """The accepted proposals of one block and the Cholesky factor of their residual.

    ``Hd`` is the residual block ``K[P, P] - F[P] F[P]^T`` of the distinct proposals
    ``P`` (float64, on the host), ``inverse`` maps the proposals to them.  Going through
    the proposals in order, proposal ``j`` is accepted when ``u_j H_jj < H'_jj`` and
    ``H'_jj`` is above round-off, ``H'`` the block after elimination of the proposals
    accepted before ``j``; the accepted columns are eliminated (a Cholesky step).  A
    proposal whose residual is round-off already has its ``d`` set to zero so that it is
    not proposed again.
    """
    Hd = 0.5 * (Hd + Hd.T)
    H = Hd[np.ix_(inverse, inverse)]
    p = proposals.shape[0]
    original = np.diagonal(H).copy()
    u = rng.random((p,))
    L = np.zeros((p, p))
    accepted: list[int] = []
    for j in range(p):
        s = proposals[j]
        if not original[j] > floor[s]:
            d[s] = 0.0
            continue
        if H[j, j] > floor[s] and u[j] * original[j] < H[j, j]:
            L[j:, j] = H[j:, j] / math.sqrt(H[j, j])
            H[j + 1 :, j + 1 :] -= np.outer(L[j + 1 :, j], L[j + 1 :, j])
            accepted.append(j)
    acc = np.asarray(accepted, dtype=np.intp)
    return proposals[acc], L[np.ix_(acc, acc)]


class _Factor:
    """The factor ``F`` of :func:`rpcholesky` in the namespace and on the device of the
    rows ``X`` (in :func:`work_dtype`), and the kernel evaluations against it."""

    def __init__(self, X: Any, kernel: Callable[..., Any], m: int) -> None:
        self.X, self.kernel = X, kernel
        self.xp, self.device = get_namespace(X)
        self.numpy, self.work = is_numpy(self.xp), work_dtype(X)
        self.F = self.xp.zeros((int(X.shape[0]), m), dtype=self.work, device=self.device)

    def round_off(self, m: int) -> float:
        """The relative residual below which a residual is round-off."""
        float64 = self.work == self.xp.float64
        return RESIDUAL_RTOL if float64 else m * float(np.finfo(np.float32).eps)

    def factor_rows(self, indices: np.ndarray, k: int) -> Any:
        """``F[indices, :k]``."""
        if self.numpy:
            return self.F[indices, :k]
        return take_rows(self.F, indices)[:, :k]

    def kernel_block(self, A: Any, B: Any, what: str) -> Any:
        K = kernel_block(self.kernel, A, B)
        require_finite(K, "rpcholesky", self.X, what)
        return K

    def residual_block(self, distinct: np.ndarray, k: int) -> np.ndarray:
        """``K[P, P] - F[P] F[P]^T`` of the distinct proposals ``P``, on the host."""
        P = take_rows(self.X, distinct)
        Hd = self.kernel_block(P, P, "the kernel matrix of the proposed pivots")
        if k:
            FP = self.factor_rows(distinct, k)
            Hd -= FP @ self.xp.matrix_transpose(FP)
        return np.asarray(to_numpy(Hd), dtype=np.float64)

    def residual_columns(self, pivots: np.ndarray, k: int) -> Any:
        """``K[:, pivots] - F[:, :k] F[pivots, :k]^T``, the kernel evaluated in row blocks."""
        xp, X, n = self.xp, self.X, int(self.X.shape[0])
        P = take_rows(X, pivots)
        FP_T = xp.matrix_transpose(self.factor_rows(pivots, k))
        out = xp.empty((n, pivots.shape[0]), dtype=self.work, device=self.device)
        for start in range(0, n, KERNEL_BLOCK_ROWS):
            stop = min(start + KERNEL_BLOCK_ROWS, n)
            what = "the kernel between the rows and the pivots"
            block = self.kernel_block(dense(X[start:stop, :]), P, what)
            if k:
                block -= self.F[start:stop, :k] @ FP_T
            out[start:stop, :] = block
        return out

    def set_columns(self, k: int, G: Any, right: np.ndarray) -> None:
        """``F[:, k:k+a] = G right`` (``right`` the host ``a x a`` inverse factor)."""
        right = to_namespace(right, self.xp, self.device, dtype=self.work)
        if self.numpy:  # straight into F, no temporary
            np.matmul(G, right, out=self.F[:, k : k + right.shape[1]])
        else:
            self.F[:, k : k + right.shape[1]] = G @ right

    def new_norms(self, k: int, a: int) -> np.ndarray:
        """The squared row norms of the new columns ``F[:, k:k+a]`` (host, float64),
        refused when the columns are not finite."""
        new = self.F[:, k : k + a]
        require_finite(new, "rpcholesky", self.X, "the Cholesky factor")
        if self.numpy:
            return np.einsum("ij,ij->i", new, new)
        return np.asarray(to_numpy(self.xp.sum(new * new, axis=1)), dtype=np.float64)

    def result(self, pivots: np.ndarray, k: int, m: int) -> RPCholeskyResult:
        F = self.F if k == m else self.xp.asarray(self.F[:, :k], copy=True)
        return RPCholeskyResult(pivots[:k].copy(), F)


def rpcholesky_indices(
    X: Any,
    n_landmarks: int,
    kernel: Callable[..., Any],
    seed: int,
    *,
    block_size: int = RPCHOLESKY_BLOCK_SIZE,
) -> np.ndarray:
    """Sorted indices of ``n_landmarks`` distinct rows of ``X`` chosen by RPCholesky.

    The pivots of :func:`~kernelmaps.sampling.rpcholesky` with the generator
    ``numpy.random.default_rng(seed)``.  When the residual vanishes after ``k < m``
    pivots (the kernel matrix of the rows has numerical rank ``k``, e.g. through
    duplicate rows), a ``UserWarning`` says so and the other ``m - k`` rows are drawn
    uniformly (from the same generator) among the rows not chosen: they add nothing to
    the approximation but keep the number of landmarks.  ``X`` may be an array of another
    library (the indices are NumPy's, the same as for NumPy rows up to rounding, see
    :func:`~kernelmaps.sampling.rpcholesky`).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import Gaussian
    >>> from kernelmaps.sampling import rpcholesky_indices
    >>> X = np.random.default_rng(0).normal(size=(100, 2))
    >>> rpcholesky_indices(X, 5, Gaussian(gamma=1.0), seed=3).shape
    (5,)
    """
    rng = np.random.default_rng(seed)
    m = min(check_count(n_landmarks, "n_landmarks"), int(X.shape[0]))
    pivots, _ = rpcholesky(X, m, kernel, rng, block_size=block_size)
    return _complete_pivots(pivots, m, int(X.shape[0]), rng)


def _complete_pivots(pivots: np.ndarray, m: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """The pivots, sorted, completed to ``m`` by rows drawn uniformly among the ``n``
    rows not chosen (with a warning) when the residual vanished before."""
    k = pivots.shape[0]
    if k < m:
        warnings.warn(
            f"landmarks='rpcholesky' found only {k} of {m} landmarks: the residual kernel "
            f"matrix vanished after {k} pivots (the kernel matrix of the rows has "
            f"numerical rank {k}, e.g. through duplicate rows); the other {m - k} landmarks "
            "are drawn uniformly among the remaining rows. Fewer landmarks suffice here.",
            UserWarning,
            stacklevel=3,
        )
        rest = np.setdiff1d(np.arange(n), pivots)
        pivots = np.concatenate([pivots, rng.choice(rest, size=m - k, replace=False)])
    return np.sort(pivots)
