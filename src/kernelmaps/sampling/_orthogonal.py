"""Blocks of orthonormal random directions (orthogonal random features, Yu et al. 2016)."""

from __future__ import annotations

import numpy as np
import scipy.linalg

from .._memory import check_memory
from .._parallel import parallel_rows, single_threaded_blas
from ._arguments import check_count, check_generator

__all__ = ["orthogonal_directions"]

#: Blocks up to this dimension are factorized in one batched call.
_BATCHED_DIMENSION = 64


def orthogonal_directions(
    n_directions: int, dimension: int, rng: np.random.Generator
) -> np.ndarray:
    """Unit vectors, orthonormal within consecutive blocks of ``dimension`` rows.

    Each block is a Haar-distributed orthogonal matrix (QR of a Gaussian matrix with the
    signs of ``R``'s diagonal moved into ``Q``), so every row on its own is uniform on the
    sphere, and rows of different blocks are independent.

    The ``ceil(n_directions / dimension)`` Gaussian matrices are drawn first, in order,
    from ``rng`` (the same draws as one ``rng.standard_normal((dimension, dimension))``
    per block); their QR factorizations then run in contiguous runs of blocks, one run
    per core, each with a single-threaded BLAS.  LAPACK's QR is made largely of small
    level-2 BLAS calls (the panel factorizations), and a multithreaded BLAS synchronizes
    its threads in each of them: on a machine whose cores are busy, every
    synchronization can wait for a descheduled thread, which made a 784 x 784 QR up to
    100 times slower than on one thread.  A last, partial block of ``k < dimension``
    rows only factorizes the first ``k`` columns of its Gaussian matrix (the first ``k``
    columns of ``Q`` and the first ``k`` diagonal entries of ``R`` depend on nothing
    else).

    Cost: ``O(n_directions * dimension**2)`` time, ``n_directions * dimension`` memory
    plus one ``dimension x dimension`` matrix per thread.

    Returns
    -------
    ndarray of shape (n_directions, dimension)

    References
    ----------
    Yu, F. X., Suresh, A. T., Choromanski, K., Holtmann-Rice, D. and Kumar, S. (2016).
    Orthogonal random features. NIPS.
    Mezzadri, F. (2007). How to generate random matrices from the classical compact groups.
    Notices of the AMS 54(5).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.sampling import orthogonal_directions
    >>> W = orthogonal_directions(3, 3, np.random.default_rng(0))
    >>> bool(np.allclose(W @ W.T, np.eye(3)))
    True
    """
    n_directions = check_count(n_directions, "n_directions")
    d = check_count(dimension, "dimension")
    check_generator(rng)
    n_blocks = -(-n_directions // d)
    check_memory(
        8.0 * n_blocks * d * d,
        f"orthogonal_directions: {n_blocks} Gaussian {d} x {d} blocks",
        "draw fewer directions or reduce the dimension",
    )
    # Block b is out[b * d:(b + 1) * d], drawn exactly as rng.standard_normal((d, d)).
    out = rng.standard_normal((n_blocks * d, d))

    def factorize(blocks: slice) -> None:
        for b in range(*blocks.indices(n_blocks)):
            k = min(d, n_directions - b * d)
            block = out[b * d : (b + 1) * d]
            q, r = scipy.linalg.qr(
                np.asfortranarray(block[:, :k]),
                mode="economic",
                overwrite_a=True,
                check_finite=False,
            )
            # Rows of the block are the columns of Q Diag(sign(diag(R))).
            np.multiply(q.T, np.where(np.diag(r) < 0.0, -1.0, 1.0)[:, None], out=block[:k])

    full = n_directions // d
    if d <= _BATCHED_DIMENSION and full > 1:
        # Many small blocks: one batched QR (numpy's stacked LAPACK calls) instead of a
        # Python-level call per block, whose overhead dominates below about 64 x 64
        # (10^6 blocks of 1 x 1 took 30 s).  The factors are those of the loop, bit for
        # bit (checked for every dimension up to 64).
        stack = out[: full * d].reshape(full, d, d)
        q, r = np.linalg.qr(stack)
        signs = np.where(np.diagonal(r, axis1=1, axis2=2) < 0.0, -1.0, 1.0)
        np.multiply(np.swapaxes(q, 1, 2), signs[:, :, None], out=stack)
        if full < n_blocks:
            factorize(slice(full, n_blocks))
        return out[:n_directions]
    with single_threaded_blas():
        parallel_rows(factorize, n_blocks, n_blocks * d**3)
    return out[:n_directions]
