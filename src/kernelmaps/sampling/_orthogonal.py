"""Blocks of orthonormal random directions (orthogonal random features, Yu et al. 2016)."""

from __future__ import annotations

import numpy as np

__all__ = ["orthogonal_directions"]


def orthogonal_directions(
    n_directions: int, dimension: int, rng: np.random.Generator
) -> np.ndarray:
    """Unit vectors, orthonormal within consecutive blocks of ``dimension`` rows.

    Each block is a Haar-distributed orthogonal matrix (QR of a Gaussian matrix with the
    signs of ``R``'s diagonal moved into ``Q``), so every row on its own is uniform on the
    sphere, and rows of different blocks are independent.

    Returns
    -------
    ndarray of shape (n_directions, dimension)

    References
    ----------
    Yu, F. X., Suresh, A. T., Choromanski, K., Holtmann-Rice, D. and Kumar, S. (2016).
    Orthogonal random features. NIPS.
    Mezzadri, F. (2007). How to generate random matrices from the classical compact groups.
    Notices of the AMS 54(5).
    """
    n_blocks = -(-n_directions // dimension)
    blocks = []
    for _ in range(n_blocks):
        q, r = np.linalg.qr(rng.standard_normal((dimension, dimension)))
        q *= np.where(np.diag(r) < 0.0, -1.0, 1.0)
        blocks.append(q.T)
    return np.concatenate(blocks, axis=0)[:n_directions]
