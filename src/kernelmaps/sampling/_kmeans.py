"""k-means centres as landmarks (Zhang, Tsang & Kwok 2008).

The ``m`` centres minimize the within-cluster sum of squares
``sum_i min_j |x_i - c_j|^2`` (locally: Lloyd's algorithm, or mini-batch k-means on large
samples); Nyström with the centres as landmarks bounds the kernel approximation error by
that quantization error for a Lipschitz kernel (Zhang, Tsang & Kwok 2008, "Improved
Nyström low-rank approximation and error analysis", ICML).  The data are clustered at a
power-of-two scale where their squared distances would leave the float range (k-means is
equivariant under scaling).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn import config_context
from sklearn.exceptions import ConvergenceWarning

__all__ = ["KMEANS_MINIBATCH_THRESHOLD", "kmeans_centres"]

#: Above this many rows clustered, ``"kmeans"`` uses :class:`~sklearn.cluster.MiniBatchKMeans`.
KMEANS_MINIBATCH_THRESHOLD = 20_000


def kmeans_centres(
    X: Any,
    n_landmarks: int,
    seed: int,
    dtype: np.dtype,
    *,
    max_iter: int = 100,
    n_init: int = 1,
    batch_size: int = 1024,
    minibatch: bool | None = None,
) -> np.ndarray:
    """The ``n_landmarks`` centres of k-means on the rows ``X`` (seeded by ``seed``), in
    ``dtype``: Lloyd's algorithm (:class:`~sklearn.cluster.KMeans`) up to
    :data:`KMEANS_MINIBATCH_THRESHOLD` rows, mini-batch k-means beyond (Sculley 2010)
    unless ``minibatch`` says otherwise.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.sampling._kmeans import kmeans_centres
    >>> X = np.r_[np.zeros((5, 2)), np.ones((5, 2))]
    >>> np.sort(kmeans_centres(X, 2, seed=0, dtype=np.dtype(np.float64))[:, 0]).tolist()
    [0.0, 1.0]
    """
    from sklearn.cluster import KMeans, MiniBatchKMeans

    n = X.shape[0]
    if minibatch is None:
        minibatch = n > KMEANS_MINIBATCH_THRESHOLD
    model: KMeans | MiniBatchKMeans
    if minibatch:
        model = MiniBatchKMeans(
            n_clusters=n_landmarks,
            batch_size=max(batch_size, 3 * n_landmarks),
            max_iter=max_iter,
            n_init=n_init,
            random_state=seed,
        )
    else:
        model = KMeans(n_clusters=n_landmarks, max_iter=max_iter, n_init=n_init, random_state=seed)
    # k-means is equivariant under scaling: data whose squared distances would overflow
    # (or underflow) the float range is clustered at unit scale (a power of two, exact).
    scale = _kmeans_scale(X)
    if scale != 1.0:
        X = X / scale
    # X was validated by the estimator: k-means need not scan it for NaN/inf again.
    with warnings.catch_warnings(), config_context(assume_finite=True):
        # Fewer distinct points than clusters: duplicate centres are handled by the
        # eigenvalue cut-off of the maps, no need to alarm the user here.
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X)
    centres = np.asarray(model.cluster_centers_, dtype=np.float64) * scale
    return np.ascontiguousarray(centres, dtype=dtype)


def _kmeans_scale(X: Any) -> float:
    """1, or the power of two to divide ``X`` by so that k-means' squared distances
    neither overflow nor underflow ``X``'s float dtype."""
    values = X.data if sp.issparse(X) else np.asarray(X)
    if values.size == 0:
        return 1.0
    largest = float(max(values.max(), -values.min()))
    info = np.finfo(X.dtype if X.dtype in (np.float32, np.float64) else np.float64)
    d = max(X.shape[1], 1)
    if largest == 0.0 or 1e5 * math.sqrt(float(info.tiny)) < largest < math.sqrt(
        0.01 * float(info.max) / d
    ):
        return 1.0
    return math.ldexp(1.0, math.frexp(largest)[1] - 1)
