"""Landmark selection for the data-dependent maps and models (Nyström, IKA, FALKON).

:func:`resolve_landmarks` is the one routine every estimator calls: it takes the
estimator's ``landmarks`` parameter (a method name or the landmarks themselves), caps the
number at ``n_samples`` with a warning, checks given landmarks (shape, finiteness, sparse
input), and optionally drops repeated rows.  :func:`select_landmarks` draws them by one of
four methods, among (or summarising) the rows of ``X``:

``"uniform"``
    ``m`` distinct rows drawn uniformly without replacement (Williams & Seeger 2001).
``"kmeans"``
    The ``m`` k-means centres (Zhang, Tsang & Kwok 2008), from
    :class:`sklearn.cluster.KMeans`, or :class:`sklearn.cluster.MiniBatchKMeans` when
    more than ``KMEANS_MINIBATCH_THRESHOLD`` rows are clustered.  The centres are not
    rows of ``X``.
``"leverage"``
    ``m`` distinct rows drawn by approximate ridge leverage scores with the recursive
    scheme of Musco & Musco (2017), Algorithm 3 (``RecursiveRLS-Nyström``, in the form
    of their reference implementation): the leverage scores of a uniform half of the
    data are estimated from landmarks sampled recursively on a further half, so the
    ``n x n`` kernel matrix is never formed (``kernelmaps.sampling._leverage``).
    Cost ``O(n m)`` kernel evaluations and ``O(n m^2)`` arithmetic, memory ``O(n m)``
    at most (evaluated in row blocks).
``"rpcholesky"``
    ``m`` distinct rows chosen by randomly pivoted Cholesky (Chen, Epperly, Tropp &
    Webber 2024), in the blocked, accelerated form of Epperly, Tropp & Webber (2024) by
    default: each pivot is drawn with probability proportional to the diagonal of the
    residual ``K - F F^T`` of the pivots chosen before, so that rows the landmarks
    already explain are not chosen again (``kernelmaps.sampling._rpcholesky``).
    ``E tr(K - K_hat) <= (1 + eps) tr(K - [[K]]_r)`` with
    ``m >= r / eps + r log(1 / (eps eta))`` pivots.  Cost ``O(n m)`` kernel evaluations,
    ``O(n m^2)`` arithmetic, memory ``O(n m)``.  If the residual vanishes before ``m``
    pivots (duplicate rows, ``m`` above the numerical rank), a warning says how many
    were found and the others are drawn uniformly among the remaining rows.

The sample of k-means, leverage and rpcholesky.  Above ``S = landmark_sample_size(m) =
max(LANDMARK_SAMPLE_SIZE, 20 m)`` rows (100 000 rows for ``m <= 5000``), ``"kmeans"``
``"leverage"`` and ``"rpcholesky"`` run on ``S`` distinct rows drawn uniformly (by their global row
indices, sorted) instead of on all ``n``; at or below it they run on all rows, exactly
as before this sample existed.  Why a sample, and not a distributed algorithm:

* The same algorithm then runs on the same rows whether ``X`` is a numpy array or a
  Dask array (the draws name the same global indices, and the rows of a Dask array are
  gathered in one compute, ``landmark_rows``), so the landmarks are equal bit for bit, and
  do not depend on the chunking or on the workers.  A distributed Lloyd iteration or a
  distributed recursion of Musco & Musco would need one pass over the data per
  iteration or level (``log2(n / m)`` of them) and their reductions would differ from
  the numpy ones in rounding, and so in the centres, or in the rows drawn.
* Cost: k-means costs ``O(S m d)`` per iteration and leverage ``O(S m^2)`` instead of
  ``O(n m d)`` and ``O(n m^2)``; on a Dask array only ``S`` rows (``S d`` values) leave
  the workers (rpcholesky: ``O(S m)`` kernel evaluations instead of ``O(n m)``).
* Accuracy: ``S >= 20 m`` rows leave at least 20 rows per centre or landmark.  The
  k-means cost of every set of ``m`` centres on a uniform sample deviates from its cost
  on the whole data by ``O(S^{-1/2})`` relative, uniformly over the centres, for data of
  bounded kurtosis (Bachem et al. 2017), which is below the variation between k-means
  runs at ``S = 10^5``; mini-batch k-means itself sees only batches.  For leverage, the
  recursion already estimates the scores from a uniform half of the rows at every
  level; the sample is one more uniform level (and so for rpcholesky, whose pivots
  are drawn from the residual of the sample's kernel matrix).  A Nyström approximation from the
  sample's rows is accurate for the whole kernel matrix when ``S`` exceeds
  ``n max_i l_i(lambda)`` up to a log factor, ``l_i`` the ridge leverage scores
  (Alaoui & Mahoney 2015): what is lost are rows of a region holding less than about
  ``1 / S`` of the data.

This module makes the draws, from the shape of ``X`` alone (:func:`draw_landmarks`, a
:class:`LandmarkDraw`); the landmarks are made from the rows they name by
:func:`~kernelmaps.sampling._landmark_finish.finish_landmarks`.  The references are in
:func:`select_landmarks`.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._array_api import to_numpy
from .._rows import Rows, as_rows
from ._arguments import check_count, check_generator, check_kernel, check_rows
from ._landmark_finish import finish_landmarks
from ._rpcholesky import RPCHOLESKY_BLOCK_SIZE

__all__ = [
    "KERNEL_FREE_LANDMARK_METHODS",
    "LANDMARK_METHODS",
    "LANDMARK_SAMPLE_SIZE",
    "PREDRAWN_LANDMARK_METHODS",
    "LandmarkDraw",
    "draw_landmarks",
    "kernel_free_landmarks",
    "landmark_rows",
    "landmark_sample_size",
    "resolve_landmarks",
    "select_landmarks",
]

#: The landmark selection methods understood by :func:`select_landmarks`.
LANDMARK_METHODS = ("uniform", "kmeans", "leverage", "rpcholesky")

#: The methods whose random draws are all made by :func:`draw_landmarks` (their
#: :func:`finish_landmarks` draws nothing more from the generator), so that the generator
#: may serve other draws in between (IKA's centres and sample).
PREDRAWN_LANDMARK_METHODS = ("uniform", "kmeans", "rpcholesky")

#: The landmark methods whose choice does not depend on the kernel (nor on its parameters).
KERNEL_FREE_LANDMARK_METHODS = ("uniform", "kmeans")

#: Rows the methods other than uniform run on, at least (see :func:`landmark_sample_size`).
LANDMARK_SAMPLE_SIZE = 100_000

#: Rows per landmark in the sample of ``"kmeans"``, ``"leverage"`` and ``"rpcholesky"``.
_SAMPLE_ROWS_PER_LANDMARK = 20

#: The options of each method (see :func:`select_landmarks`).
_METHOD_OPTIONS: dict[str, frozenset[str]] = {
    "uniform": frozenset(),
    "kmeans": frozenset({"max_iter", "n_init", "batch_size", "minibatch"}),
    "leverage": frozenset({"accelerated"}),
    "rpcholesky": frozenset({"block_size"}),
}


def _as_float_dtype(dtype: Any) -> np.dtype:
    dtype = np.dtype(dtype)
    return dtype if dtype in (np.dtype(np.float32), np.dtype(np.float64)) else np.dtype(np.float64)


def landmark_rows(X: Any) -> Rows:
    """The ``Rows`` the landmarks are drawn from: ``X`` itself when
    it is one, else the rows of the array ``X`` (an in-memory one checked here).

    The selection reads them once, for the rows its draws name (a Dask array in one
    compute), so that the landmarks are those of the same data in memory with the same
    generator, bit for bit.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.sampling._landmarks import landmark_rows
    >>> landmark_rows(np.arange(8.0).reshape(4, 2)).read([np.array([1, 3])])[0].tolist()
    [[2.0, 3.0], [6.0, 7.0]]
    """
    if hasattr(X, "read") and hasattr(X, "in_memory"):
        return X
    rows = as_rows(X)
    return rows if not rows.in_memory else as_rows(check_rows(X))


def landmark_sample_size(n_landmarks: int) -> int:
    """Rows k-means, leverage and rpcholesky run on: ``max(LANDMARK_SAMPLE_SIZE, 20 m)``.

    Data with at most this many rows is used whole; larger data is replaced by this many
    distinct rows drawn uniformly (see the module docstring for why and what it costs).

    Examples
    --------
    >>> from kernelmaps.sampling._landmarks import landmark_sample_size
    >>> landmark_sample_size(100), landmark_sample_size(10_000)
    (100000, 200000)
    """
    return max(
        LANDMARK_SAMPLE_SIZE, _SAMPLE_ROWS_PER_LANDMARK * check_count(n_landmarks, "n_landmarks")
    )


@dataclass(frozen=True)
class LandmarkDraw:
    """The random draws of a landmark selection made before the data is read.

    :func:`draw_landmarks` (or :func:`select_landmarks`) draws what does not depend on
    the values of ``X`` and names the rows the selection reads, ``rows``; once they are
    read, :func:`finish_landmarks` makes the landmarks from them.  The split lets a
    Dask array be read in one compute, gathering the rows of several draws at once.

    Parameters
    ----------
    method : {"uniform", "kmeans", "leverage", "rpcholesky"} or None
        None for landmarks given as an array.
    n_landmarks : int
        Number of landmarks (for a method: after the cap at ``n_samples``).
    rows : ndarray of int or None
        Sorted distinct rows of ``X`` to read; None: every row (``"kmeans"``,
        ``"leverage"`` and ``"rpcholesky"`` on at most :func:`landmark_sample_size` rows).
    dtype : numpy.dtype
        Float dtype of the landmarks.
    kernel : callable, optional
        The kernel of ``"leverage"`` and ``"rpcholesky"``.
    seed : int, optional
        The seed of k-means and of rpcholesky's pivots, drawn before the data is read.
    options : dict
        The method's options.
    given : ndarray, optional
        The landmarks given as an array, checked.
    unique : bool, default=False
        Drop repeated landmarks (see :func:`resolve_landmarks`).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.sampling import draw_landmarks, finish_landmarks
    >>> X = np.arange(20.0).reshape(10, 2)
    >>> rng = np.random.default_rng(0)
    >>> draw = draw_landmarks(10, 2, X.dtype, "uniform", 3, rng=rng)
    >>> draw.rows.shape
    (3,)
    >>> L, idx = finish_landmarks(draw, X[draw.rows], rng)
    >>> bool(np.array_equal(L, X[idx]))
    True
    """

    method: str | None
    n_landmarks: int
    rows: np.ndarray | None
    dtype: np.dtype
    kernel: Callable[..., Any] | None = None
    seed: int | None = None
    options: dict[str, Any] = field(default_factory=dict)
    given: np.ndarray | None = None
    unique: bool = False


def _sample_rows(n: int, n_landmarks: int, rng: np.random.Generator) -> np.ndarray | None:
    """The uniform sample of rows of the methods other than uniform (None: every row)."""
    size = landmark_sample_size(n_landmarks)
    if n <= size:
        return None
    return np.sort(rng.choice(n, size=size, replace=False))


def _draw_method(
    n: int,
    n_landmarks: int,
    method: str,
    *,
    kernel: Callable[..., Any] | None,
    rng: np.random.Generator,
    dtype: np.dtype,
    options: dict[str, Any],
) -> LandmarkDraw:
    if not 1 <= n_landmarks <= n:
        raise ValueError(
            f"n_landmarks={n_landmarks} must be between 1 and n_samples={n}; "
            "choose fewer landmarks or give more samples."
        )
    if method not in _METHOD_OPTIONS:
        raise ValueError(
            f"Unknown landmark selection method {method!r}; use one of {list(LANDMARK_METHODS)}."
        )
    unknown = sorted(set(options) - _METHOD_OPTIONS[method])
    if unknown:
        accepted = sorted(_METHOD_OPTIONS[method])
        takes = f"takes the options {accepted}" if accepted else "takes no options"
        raise TypeError(f"landmark method {method!r} {takes}; got {unknown}.")
    if method == "uniform":
        idx = np.sort(rng.choice(n, size=n_landmarks, replace=False))
        return LandmarkDraw("uniform", n_landmarks, idx, dtype)
    if method != "kmeans" and kernel is None:
        raise ValueError(f"landmark method {method!r} needs the kernel; pass kernel=.")
    rows = _sample_rows(n, n_landmarks, rng)
    if method == "rpcholesky":
        check_count(options.get("block_size", RPCHOLESKY_BLOCK_SIZE), "block_size")
    # the seed of k-means and of rpcholesky's pivots; k-means keeps no kernel
    seed = None if method == "leverage" else int(rng.integers(0, 2**31 - 1))
    kernel = None if method == "kmeans" else kernel
    return LandmarkDraw(
        method, n_landmarks, rows, dtype, kernel=kernel, seed=seed, options=dict(options)
    )


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
    X : {ndarray, sparse matrix, dask array} of shape (n_samples, n_features)
        Validated data (float32 or float64), or its ``Rows``.  A
        Dask array is read in one compute (``landmark_rows``), and gives the
        landmarks of the same data in numpy.
    n_landmarks : int
        Number of landmarks ``m``, ``1 <= m <= n_samples``.
    method : {"uniform", "kmeans", "leverage", "rpcholesky"}
        See the module docstring.
    kernel : callable, optional
        ``kernel(A, B)`` returns the kernel matrix between the rows of ``A`` and ``B``
        (a :class:`kernelmaps.kernels.Kernel` or any callable); ``kernel.diag(A)`` is used
        when present.  Needed by ``"leverage"`` and ``"rpcholesky"``.
    rng : numpy.random.Generator
        Source of randomness.
    **options
        ``"kmeans"``: ``max_iter`` (default 100), ``n_init`` (default 1), ``batch_size``
        (mini-batch only, default 1024), ``minibatch`` (True/False to force a variant).
        ``"leverage"``: ``accelerated`` (default False; True takes intermediate samples
        of ``sqrt(n m + m^3) / (2 sqrt(n))`` points, Musco & Musco's accelerated variant:
        cheaper, but its estimates are poor for small ``m``).
        ``"rpcholesky"``: ``block_size`` (default 100; proposals per block of the
        accelerated form, ``1`` for one pivot at a time: the same law of the pivots,
        different draws).

    Returns
    -------
    landmarks : ndarray of shape (n_landmarks, n_features)
        Dense, in X's float dtype.
    indices : ndarray of int or None
        Rows of ``X`` the landmarks are (``None`` for k-means centres).

    Notes
    -----
    ``"kmeans"``, ``"leverage"`` and ``"rpcholesky"`` run on
    ``landmark_sample_size(m) = max(100 000, 20 m)`` rows drawn uniformly when ``X``
    has more rows (on every row otherwise); see the module docstring.

    References
    ----------
    .. [1] C. K. I. Williams and M. Seeger, "Using the Nyström method to speed up kernel
       machines", NIPS 2001 (``"uniform"``).
    .. [2] K. Zhang, I. W. Tsang and J. T. Kwok, "Improved Nyström low-rank approximation
       and error analysis", ICML 2008 (``"kmeans"``).
    .. [3] C. Musco and C. Musco, "Recursive sampling for the Nyström method", NIPS 2017
       (``"leverage"``).
    .. [4] O. Bachem, M. Lucic, S. H. Hassani and A. Krause, "Uniform deviation bounds for
       k-means clustering", ICML 2017 (the sample of ``"kmeans"``).
    .. [5] A. El Alaoui and M. W. Mahoney, "Fast randomized kernel ridge regression with
       statistical guarantees", NIPS 2015 (uniform column sampling, the sample of
       ``"leverage"``).
    .. [6] Y. Chen, E. N. Epperly, J. A. Tropp and R. J. Webber, "Randomly pivoted
       Cholesky: practical approximation of a kernel matrix with few entry evaluations",
       Comm. Pure Appl. Math. 78 (2025) (``"rpcholesky"``, ``block_size=1``).
    .. [7] E. N. Epperly, J. A. Tropp and R. J. Webber, "Embrace rejection: kernel
       matrix approximation by accelerated randomly pivoted Cholesky", arXiv:2410.03969
       (2024) (``"rpcholesky"``, blocked).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.sampling import select_landmarks
    >>> X = np.arange(20.0).reshape(10, 2)
    >>> L, idx = select_landmarks(X, 3, "uniform", rng=np.random.default_rng(0))
    >>> L.shape, idx.shape
    ((3, 2), (3,))
    """
    n_landmarks = check_count(n_landmarks, "n_landmarks")
    check_generator(rng)
    if kernel is not None:
        check_kernel(kernel)
    rows = landmark_rows(X)
    draw = _draw_method(
        rows.n_rows,
        n_landmarks,
        method,
        kernel=kernel,
        rng=rng,
        dtype=_as_float_dtype(rows.dtype),
        options=options,
    )
    (sample,) = rows.read([draw.rows])
    return finish_landmarks(draw, sample, rng)


def _short_repr(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _given_landmarks(landmarks: Any, n_features: int, dtype: np.dtype) -> np.ndarray:
    """Landmarks given as an array: dense, in X's float dtype, shape and values checked
    (an array of another library is checked on a copy on the host)."""
    landmarks = to_numpy(landmarks)
    L = landmarks.toarray() if sp.issparse(landmarks) else landmarks
    try:
        L = np.asarray(L, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"landmarks must be a method name ({', '.join(map(repr, LANDMARK_METHODS))}) or "
            f"an array of shape (m, {n_features}); got {type(landmarks).__name__} "
            f"{_short_repr(landmarks)}."
        ) from None
    d = n_features
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
    with np.errstate(over="ignore"):
        cast = L.astype(dtype, copy=False)
    if not np.all(np.isfinite(cast)):
        raise ValueError(
            f"landmarks hold values up to {float(np.max(np.abs(L))):.3g}, beyond the range of "
            f"X's dtype {np.dtype(dtype).name}; give landmarks on the scale of X, or pass X "
            "as float64."
        )
    return cast


def draw_landmarks(
    n_samples: int,
    n_features: int,
    dtype: Any,
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
) -> LandmarkDraw:
    """The first step of :func:`resolve_landmarks`: the draws made before reading ``X``.

    Takes the shape and float dtype of ``X`` instead of ``X`` and the other parameters
    of :func:`resolve_landmarks`; checks them, warns when ``n_landmarks`` is capped, and
    draws from ``rng`` what does not depend on the data (the uniform rows, the sample
    and the seed of k-means, the sample of leverage).  Its ``rows`` are the rows of
    ``X`` that :func:`finish_landmarks` then needs.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.sampling._landmarks import draw_landmarks
    >>> draw = draw_landmarks(1000, 3, np.float64, "uniform", 5, rng=np.random.default_rng(0))
    >>> draw.method, draw.rows.shape, bool(np.all(np.diff(draw.rows) > 0))
    ('uniform', (5,), True)
    """
    dtype = _as_float_dtype(dtype)
    if not isinstance(landmarks, str):
        L = _given_landmarks(landmarks, n_features, dtype)
        return LandmarkDraw(
            None, L.shape[0], np.empty(0, dtype=np.intp), dtype, given=L, unique=unique
        )
    n = int(n_samples)
    m = int(n_landmarks)
    if m > n:
        warnings.warn(
            f"{name}={m} is larger than n_samples={n}: every sample is used as a "
            f"{noun} ({n} {noun}s). Give a smaller {name} or more samples.",
            UserWarning,
            stacklevel=stacklevel + 1,
        )
        m = n
    draw = _draw_method(n, m, landmarks, kernel=kernel, rng=rng, dtype=dtype, options=options)
    return dataclasses.replace(draw, unique=unique)


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
    X : {ndarray, sparse matrix, dask array} of shape (n_samples, n_features)
        Validated data (finite, float32 or float64), or its ``Rows``.
        A Dask array is read in one compute and gives the landmarks of the same data in
        numpy (``landmark_rows``).
    landmarks : {"uniform", "kmeans", "leverage", "rpcholesky"} or array-like
        A method of :func:`select_landmarks`, or the landmarks themselves, of shape
        (m, n_features) (dense or sparse; checked for shape and finiteness, returned
        dense in X's dtype).
    n_landmarks : int
        Number wanted for a method; more than ``n_samples`` uses ``n_samples`` with a
        ``UserWarning`` naming the parameter ``name``.  Ignored for given landmarks.
    kernel : callable, optional
        Needed by ``"leverage"`` and ``"rpcholesky"``.
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
    n_landmarks = check_count(n_landmarks, name)
    check_generator(rng)
    if kernel is not None:
        check_kernel(kernel)
    rows = landmark_rows(X)
    draw = draw_landmarks(
        rows.n_rows,
        rows.n_features,
        rows.dtype,
        landmarks,
        n_landmarks,
        kernel=kernel,
        rng=rng,
        unique=unique,
        name=name,
        noun=noun,
        stacklevel=stacklevel + 1,
        **options,
    )
    (sample,) = rows.read([draw.rows])
    return finish_landmarks(draw, sample, rng)


def kernel_free_landmarks(landmarks: Any) -> bool:
    """Whether landmarks chosen by ``landmarks`` (a method name or the landmarks given)
    do not depend on the kernel: uniform draws, k-means centres, an array.

    Examples
    --------
    >>> from kernelmaps.sampling import kernel_free_landmarks
    >>> kernel_free_landmarks("kmeans"), kernel_free_landmarks("leverage")
    (True, False)
    """
    return not isinstance(landmarks, str) or landmarks in KERNEL_FREE_LANDMARK_METHODS
