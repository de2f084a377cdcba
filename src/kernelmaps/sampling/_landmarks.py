"""Landmark selection for the data-dependent maps and models (Nyström, IKA, FALKON).

:func:`resolve_landmarks` is the one routine every estimator calls: it takes the
estimator's ``landmarks`` parameter (a method name or the landmarks themselves), caps the
number at ``n_samples`` with a warning, checks given landmarks (shape, finiteness, sparse
input), and optionally drops repeated rows.  :func:`select_landmarks` draws them by one of
three methods, among (or summarising) the rows of ``X``:

``"uniform"``
    ``m`` distinct rows drawn uniformly without replacement (Williams & Seeger 2001).
``"kmeans"``
    The ``m`` k-means centres (Zhang, Tsang & Kwok 2008), from
    :class:`sklearn.cluster.KMeans`, or :class:`sklearn.cluster.MiniBatchKMeans` when
    ``n_samples > KMEANS_MINIBATCH_THRESHOLD``.  The centres are not rows of ``X``.
``"leverage"``
    ``m`` distinct rows drawn by approximate ridge leverage scores with the recursive
    scheme of Musco & Musco (2017), Algorithm 3 (``RecursiveRLS-Nyström``, in the form
    of their reference implementation): the leverage scores of a uniform half of the
    data are estimated from landmarks sampled recursively on a further half, so the
    ``n x n`` kernel matrix is never formed.  Cost ``O(n m)`` kernel evaluations and
    ``O(n m^2)`` arithmetic, memory ``O(n m)`` at most (evaluated in row blocks).

The references are in :func:`select_landmarks`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from sklearn import config_context
from sklearn.exceptions import ConvergenceWarning

from ..kernels import check_kernel_matrix

__all__ = [
    "KMEANS_MINIBATCH_THRESHOLD",
    "LANDMARK_METHODS",
    "kernel_diagonal",
    "recursive_rls_indices",
    "resolve_landmarks",
    "select_landmarks",
]

#: Above this many samples, ``"kmeans"`` uses :class:`~sklearn.cluster.MiniBatchKMeans`.
KMEANS_MINIBATCH_THRESHOLD = 20_000

#: The landmark selection methods understood by :func:`select_landmarks`.
LANDMARK_METHODS = ("uniform", "kmeans", "leverage")

#: Row-block length for kernel evaluations against the current landmarks.
_BLOCK_ROWS = 4096


def _dense_rows(X: Any, rows: Any) -> np.ndarray:
    sub = X[rows]
    if sp.issparse(sub):
        sub = sub.toarray()
    return np.asarray(sub)


def _float_dtype(X: Any) -> np.dtype:
    dtype = np.dtype(getattr(X, "dtype", np.float64))
    return dtype if dtype in (np.dtype(np.float32), np.dtype(np.float64)) else np.dtype(np.float64)


def kernel_diagonal(kernel: Callable[..., Any], X: Any) -> np.ndarray:
    """``k(x, x)`` for every row of ``X`` in float64, without the ``n x n`` matrix.

    Uses ``kernel.diag`` when the kernel has one, else evaluates ``k`` on single rows.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import Gaussian
    >>> from kernelmaps.sampling import kernel_diagonal
    >>> kernel_diagonal(Gaussian(gamma=1.0), np.zeros((3, 2))).tolist()
    [1.0, 1.0, 1.0]
    """
    diag = getattr(kernel, "diag", None)
    if diag is not None:
        return np.asarray(diag(X), dtype=np.float64).reshape(-1)
    n = X.shape[0]
    return np.array(
        [float(np.asarray(kernel(X[i : i + 1], X[i : i + 1]))[0, 0]) for i in range(n)],
        dtype=np.float64,
    )


def _kernel_block(kernel: Callable[..., Any], X: Any, Y: Any) -> np.ndarray:
    return check_kernel_matrix(kernel(X, Y), X.shape[0], Y.shape[0])


def select_landmarks(
    X: Any,
    n_landmarks: int,
    method: str,
    *,
    kernel: Callable[..., Any] | None = None,
    rng: np.random.Generator,
    **options: Any,
) -> tuple[np.ndarray, np.ndarray | None]:
    """Choose ``n_landmarks`` landmarks for a data-dependent kernel approximation.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        Validated data (float32 or float64).
    n_landmarks : int
        Number of landmarks ``m``, ``1 <= m <= n_samples``.
    method : {"uniform", "kmeans", "leverage"}
        See the module docstring.
    kernel : callable, optional
        ``kernel(A, B)`` returns the kernel matrix between the rows of ``A`` and ``B``
        (a :class:`kernelmaps.kernels.Kernel` or any callable); ``kernel.diag(A)`` is used
        when present.  Needed by ``"leverage"`` only.
    rng : numpy.random.Generator
        Source of randomness.
    **options
        ``"kmeans"``: ``max_iter`` (default 100), ``n_init`` (default 1), ``batch_size``
        (mini-batch only, default 1024), ``minibatch`` (True/False to force a variant).
        ``"leverage"``: ``accelerated`` (default False; True takes intermediate samples
        of ``sqrt(n m + m^3) / (2 sqrt(n))`` points, Musco & Musco's accelerated variant:
        cheaper, but its estimates are poor for small ``m``).

    Returns
    -------
    landmarks : ndarray of shape (n_landmarks, n_features)
        Dense, in X's float dtype.
    indices : ndarray of int or None
        Rows of ``X`` the landmarks are (``None`` for k-means centres).

    References
    ----------
    .. [1] C. K. I. Williams and M. Seeger, "Using the Nyström method to speed up kernel
       machines", NIPS 2001 (``"uniform"``).
    .. [2] K. Zhang, I. W. Tsang and J. T. Kwok, "Improved Nyström low-rank approximation
       and error analysis", ICML 2008 (``"kmeans"``).
    .. [3] C. Musco and C. Musco, "Recursive sampling for the Nyström method", NIPS 2017
       (``"leverage"``).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.sampling import select_landmarks
    >>> X = np.arange(20.0).reshape(10, 2)
    >>> L, idx = select_landmarks(X, 3, "uniform", rng=np.random.default_rng(0))
    >>> L.shape, idx.shape
    ((3, 2), (3,))
    """
    n = X.shape[0]
    if not 1 <= n_landmarks <= n:
        raise ValueError(
            f"n_landmarks={n_landmarks} must be between 1 and n_samples={n}; "
            "choose fewer landmarks or give more samples."
        )
    dtype = _float_dtype(X)
    if method == "uniform":
        unknown = sorted(options)
        if unknown:
            raise TypeError(f"landmark method 'uniform' takes no options; got {unknown}.")
        idx = np.sort(rng.choice(n, size=n_landmarks, replace=False))
        return _dense_rows(X, idx).astype(dtype, copy=False), idx
    if method == "kmeans":
        return _kmeans_centres(X, n_landmarks, rng, dtype, **options), None
    if method == "leverage":
        if kernel is None:
            raise ValueError("landmark method 'leverage' needs the kernel; pass kernel=.")
        idx = recursive_rls_indices(X, n_landmarks, kernel, rng, **options)
        return _dense_rows(X, idx).astype(dtype, copy=False), idx
    raise ValueError(
        f"Unknown landmark selection method {method!r}; use one of {list(LANDMARK_METHODS)}."
    )


def _kmeans_centres(
    X: Any,
    n_landmarks: int,
    rng: np.random.Generator,
    dtype: np.dtype,
    *,
    max_iter: int = 100,
    n_init: int = 1,
    batch_size: int = 1024,
    minibatch: bool | None = None,
) -> np.ndarray:
    from sklearn.cluster import KMeans, MiniBatchKMeans

    n = X.shape[0]
    seed = int(rng.integers(0, 2**31 - 1))
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
    # X was validated by the estimator: k-means need not scan it for NaN/inf again.
    with warnings.catch_warnings(), config_context(assume_finite=True):
        # Fewer distinct points than clusters: duplicate centres are handled by the
        # eigenvalue cut-off of the maps, no need to alarm the user here.
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X)
    return np.ascontiguousarray(model.cluster_centers_, dtype=dtype)


def _ridge_leverage(
    kernel: Callable[..., Any],
    X: Any,
    rows: np.ndarray,
    diag: np.ndarray,
    S: np.ndarray,
    R: np.ndarray,
) -> np.ndarray:
    """``(k(x,x) - k_xS R k_Sx)`` for the rows ``rows`` of ``X``, in blocks."""
    out = np.empty(rows.shape[0])
    for start in range(0, rows.shape[0], _BLOCK_ROWS):
        block = rows[start : start + _BLOCK_ROWS]
        KS = _kernel_block(kernel, _dense_rows(X, block), S)
        out[start : start + block.shape[0]] = diag[block] - np.einsum("ij,ij->i", KS @ R, KS)
    return out


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
    without replacement with probabilities proportional to the estimated scores.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import Gaussian
    >>> from kernelmaps.sampling import recursive_rls_indices
    >>> X = np.random.default_rng(0).normal(size=(200, 3))
    >>> recursive_rls_indices(X, 10, Gaussian(gamma=0.5), np.random.default_rng(0)).shape
    (10,)
    """
    n = X.shape[0]
    s = n_landmarks
    if s >= n:
        return np.arange(n)
    s_level = math.ceil(math.sqrt((n * s + s**3) / (4 * n))) if accelerated else s
    s_level = max(s_level, 1)
    oversample = max(math.log(s_level), 1.0)
    k = max(1, math.ceil(s_level / (4 * oversample)))
    n_levels = max(0, math.ceil(math.log(n / s_level) / math.log(2)))
    perm = rng.permutation(n)
    sizes = [n]
    for _ in range(n_levels):
        sizes.append(math.ceil(sizes[-1] / 2))
    diag = kernel_diagonal(kernel, X)

    samp = np.arange(min(sizes[-1], n))
    weights = np.ones(samp.shape[0])
    for level in range(max(n_levels - 1, 0), -1, -1):
        current = perm[: sizes[level]]
        chosen = perm[samp]
        S = _dense_rows(X, chosen)
        SKS = _kernel_block(kernel, S, S)
        SKS = 0.5 * (SKS + SKS.T)
        m_s = SKS.shape[0]
        WKW = SKS * weights[:, None] * weights[None, :]
        if k >= m_s:
            # Too few columns to leave k out: tr(K) / lambda <= k bounds the effective
            # dimension by k, with tr(K) estimated from the weighted sample.
            lam = max(float(np.trace(WKW)) / k, np.finfo(float).tiny)
        else:
            top = scipy.linalg.eigh(WKW, eigvals_only=True, subset_by_index=[m_s - k, m_s - 1])
            lam = (float(np.trace(WKW)) - float(np.sum(np.abs(top)))) / k
            lam = max(lam, 1e-6 * float(np.trace(WKW)) / m_s, np.finfo(float).tiny)
        A = SKS + np.diag(lam / weights**2)
        R = scipy.linalg.pinvh(A)
        residual = np.maximum(_ridge_leverage(kernel, X, current, diag, S, R), 0.0)
        if level > 0:
            levs = np.minimum(1.0, oversample * residual / lam)
            samp = np.flatnonzero(rng.random(current.shape[0]) < levs)
            if samp.size == 0:
                levs[:] = min(1.0, s_level / current.shape[0])
                samp = rng.choice(
                    current.shape[0], size=min(s_level, current.shape[0]), replace=False
                )
            weights = np.sqrt(1.0 / levs[samp])
        else:
            levs = np.minimum(1.0, residual / lam)
            # Every row keeps a tiny chance so that m distinct rows can always be drawn.
            p = levs + 1e-12 * max(float(levs.max()), 1e-300)
            p /= p.sum()
            samp = rng.choice(current.shape[0], size=s, replace=False, p=p)
    return np.sort(perm[samp])


def _given_landmarks(landmarks: Any, X: Any) -> np.ndarray:
    """Landmarks given as an array: dense, in X's float dtype, shape and values checked."""
    L = landmarks.toarray() if sp.issparse(landmarks) else landmarks
    L = np.asarray(L, dtype=np.float64)
    d = X.shape[1]
    if L.ndim != 2 or L.shape[1] != d or L.shape[0] < 1:
        detail = (
            f" (landmarks has {L.shape[1]} features, but X has {d} features)"
            if L.ndim == 2 and L.shape[1] != d
            else ""
        )
        raise ValueError(
            f"landmarks given as an array must have shape (m, {d}) with m >= 1 to match X; "
            f"got shape {L.shape}{detail}. The landmarks live in the input space."
        )
    if not np.all(np.isfinite(L)):
        raise ValueError("landmarks contain NaN or infinity; give finite landmarks.")
    return L.astype(_float_dtype(X), copy=False)


def _drop_repeated(L: np.ndarray, idx: np.ndarray | None) -> tuple[np.ndarray, np.ndarray | None]:
    """The first of each group of equal rows, in their original order."""
    _, first = np.unique(L, axis=0, return_index=True)
    if first.shape[0] == L.shape[0]:
        return L, idx
    first = np.sort(first)
    return L[first], None if idx is None else np.asarray(idx)[first]


def resolve_landmarks(
    X: Any,
    landmarks: Any,
    n_landmarks: int,
    *,
    kernel: Callable[..., Any] | None = None,
    rng: np.random.Generator,
    unique: bool = False,
    name: str = "n_components",
    noun: str = "landmark",
    stacklevel: int = 1,
    **options: Any,
) -> tuple[np.ndarray, np.ndarray | None]:
    """The landmarks an estimator's ``landmarks`` parameter asks for.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        Validated data (finite, float32 or float64).
    landmarks : {"uniform", "kmeans", "leverage"} or array-like of shape (m, n_features)
        A method of :func:`select_landmarks`, or the landmarks themselves (dense or
        sparse; checked for shape and finiteness, returned dense in X's dtype).
    n_landmarks : int
        Number wanted for a method; more than ``n_samples`` uses ``n_samples`` with a
        ``UserWarning`` naming the parameter ``name``.  Ignored for given landmarks.
    kernel : callable, optional
        Needed by ``"leverage"``.
    rng : numpy.random.Generator
        Used only by the methods (given landmarks draw nothing).
    unique : bool, default=False
        Keep only the first of repeated rows (they make the landmark kernel matrix
        singular and add nothing to a model on the landmarks).  The feature maps keep them
        (their eigenvalue cut-off handles them and their width stays ``n_components``).
    name, noun : str
        The parameter and the word used in the warning (``"n_basis"``, ``"centre"``).
    stacklevel : int, default=1
        Frame of the warning, counted from the caller of this function (1: the caller).
    **options
        Passed to :func:`select_landmarks`.

    Returns
    -------
    landmarks : ndarray of shape (m, n_features)
    indices : ndarray of int or None
        Rows of ``X`` the landmarks are (None for k-means centres and given landmarks).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.sampling import resolve_landmarks
    >>> X = np.repeat(np.arange(5.0)[:, None], 2, axis=0)  # every row twice
    >>> rng = np.random.default_rng(0)
    >>> L, idx = resolve_landmarks(X, "uniform", 10, rng=rng, unique=True, stacklevel=2)
    >>> L.ravel().tolist()
    [0.0, 1.0, 2.0, 3.0, 4.0]
    """
    if not isinstance(landmarks, str):
        L, idx = _given_landmarks(landmarks, X), None
    else:
        n = X.shape[0]
        m = int(n_landmarks)
        if m > n:
            warnings.warn(
                f"{name}={m} is larger than n_samples={n}: every sample is used as a "
                f"{noun} ({n} {noun}s). Give a smaller {name} or more samples.",
                UserWarning,
                stacklevel=stacklevel + 1,
            )
            m = n
        L, idx = select_landmarks(X, m, landmarks, kernel=kernel, rng=rng, **options)
    return _drop_repeated(L, idx) if unique else (L, idx)
