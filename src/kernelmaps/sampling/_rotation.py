"""The principal axes of the data, onto which rotation-invariant frequencies are turned.

A low-discrepancy net stratifies its leading coordinates best.  For a kernel whose spectral
measure is rotation-invariant (Gaussian, Matérn), the frequencies ``w = V m`` with ``m``
drawn from the measure and ``V`` any fixed orthogonal matrix have the measure's law, so the
features stay unbiased; with ``V`` the principal directions of the data, sorted by
decreasing variance, the net's leading coordinates then carry the variance of ``x - y``
(whose covariance is twice that of ``x``).  Used by
:class:`~kernelmaps.feature_maps.RandomFourierFeatures` with quasi-Monte Carlo samplers.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from .._memory import check_memory
from ._arguments import check_count, check_generator

__all__ = ["ROTATION_SAMPLE_SIZE", "principal_axes", "rotation_sample"]

#: Rows the principal axes are computed from: larger data is replaced by this many
#: distinct rows drawn uniformly (the axes of a sample of 10 000 rows are close to those
#: of the data; the rotation is exact whatever the axes, it only orders the net's
#: coordinates).
ROTATION_SAMPLE_SIZE = 10_000


def rotation_sample(
    n_samples: int, rng: np.random.Generator, max_rows: int = ROTATION_SAMPLE_SIZE
) -> np.ndarray | None:
    """Rows (sorted indices) the principal axes are computed from; None means every row.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.sampling import rotation_sample
    >>> rotation_sample(50, np.random.default_rng(0)) is None
    True
    >>> rotation_sample(50, np.random.default_rng(0), max_rows=10).shape
    (10,)
    """
    n_samples = check_count(n_samples, "n_samples", minimum=0)
    max_rows = check_count(max_rows, "max_rows")
    check_generator(rng)
    if n_samples <= max_rows:
        return None
    return np.sort(rng.choice(n_samples, size=max_rows, replace=False))


def principal_axes(X: Any) -> np.ndarray:
    """Orthogonal matrix of the principal directions of the rows of ``X``, as columns.

    ``V`` holds the eigenvectors of the covariance
    ``C = (1/n) sum_i (x_i - mean)(x_i - mean)^T`` sorted by decreasing eigenvalue (the
    variance along them), each with its largest entry positive.  A full orthonormal basis
    of ``R^d`` even when ``n < d`` (directions of zero variance last).

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        Finite rows (float32 or float64; computed in float64).  Scaled by its largest
        magnitude first, which leaves the directions unchanged and keeps the products from
        overflowing.

    Returns
    -------
    ndarray of shape (n_features, n_features)

    Notes
    -----
    Cost: ``O(n d^2)`` for the covariance and ``O(d^3)`` for its eigenvectors, ``d^2``
    float64 memory (three such matrices at the peak).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.sampling import principal_axes
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((500, 3)) * [0.1, 3.0, 1.0]
    >>> V = principal_axes(X)
    >>> np.allclose(V.T @ V, np.eye(3)), np.abs(V).argmax(axis=0).tolist()
    (True, [1, 2, 0])
    """
    if not (sp.issparse(X) or isinstance(X, np.ndarray)) or X.ndim != 2 or X.shape[0] == 0:
        raise ValueError(
            f"principal_axes needs a 2D array or sparse matrix with at least one row; "
            f"got {type(X).__name__} of shape {getattr(X, 'shape', None)}."
        )
    n, d = X.shape
    check_memory(
        3.0 * 8.0 * d * d + (0.0 if sp.issparse(X) else 8.0 * n * d),
        f"principal_axes: the {d} x {d} covariance of the rows and its eigenvectors",
        "reduce the number of features (e.g. with PCA) or switch the rotation off "
        "(RandomFourierFeatures(rotate=False))",
    )
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        top = float(abs(X).max()) if X.nnz else 0.0
        if top > 0:
            X = X * (1.0 / top)
        mean = np.asarray(X.mean(axis=0)).ravel()
        C = np.asarray((X.T @ X).todense()) / n - np.outer(mean, mean)
    else:
        A = np.asarray(X, dtype=np.float64)
        top = float(np.max(np.abs(A), initial=0.0))
        A = A / top if top > 0 else A.copy()
        A -= A.mean(axis=0)
        C = A.T @ A / n
    C = (C + C.T) / 2.0
    values, vectors = np.linalg.eigh(C)
    V = vectors[:, np.argsort(-values, kind="stable")]
    # a fixed sign for each direction: its largest entry positive (first one on ties)
    pivots = np.abs(V).argmax(axis=0)
    V *= np.where(V[pivots, np.arange(d)] < 0, -1.0, 1.0)
    return np.ascontiguousarray(V)
