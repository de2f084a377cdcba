"""The second step of a landmark selection: the landmarks from the rows the draw named.

:func:`~kernelmaps.sampling.draw_landmarks` makes the random draws from the shape alone
(:class:`~kernelmaps.sampling.LandmarkDraw`, :mod:`kernelmaps.sampling._landmarks`);
:func:`finish_landmarks` takes the rows it named, once read, and makes the landmarks: the
rows themselves (``"uniform"``), the k-means centres, or the rows chosen by ridge leverage
scores or randomly pivoted Cholesky, repeated rows dropped on request.  Rows of an array of
another library give the same landmarks on its device.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from .._array_api import get_namespace, host_dtype, on_host, placed, to_numpy
from ._kernel_blocks import dense, take_rows
from ._kmeans import kmeans_centres
from ._leverage import recursive_rls_indices
from ._rpcholesky import rpcholesky_indices

if TYPE_CHECKING:  # the draw's module calls this one: its type only, for the annotations
    from ._landmarks import LandmarkDraw

__all__ = ["finish_landmarks"]


def finish_landmarks(
    draw: LandmarkDraw, rows: Any, rng: np.random.Generator
) -> tuple[Any, np.ndarray | None]:
    """The landmarks of ``draw`` from the rows it asked for.

    Parameters
    ----------
    draw : LandmarkDraw
        From :func:`~kernelmaps.sampling.draw_landmarks` or
        :func:`~kernelmaps.sampling.select_landmarks`'s first step.
    rows : {ndarray, sparse matrix} or array of another library
        The rows ``draw.rows`` of ``X`` in that order (every row of ``X`` when
        ``draw.rows`` is None).  An array of another library (PyTorch, CuPy, ...) gives
        the same landmarks (rpcholesky: up to rounding, see
        :func:`~kernelmaps.sampling.rpcholesky`) as an array of its own, on its device:
        ``"kmeans"`` and ``"leverage"`` run on a host copy of the rows (their iterations
        are scikit-learn's and SciPy's), ``"rpcholesky"`` on the device.
    rng : numpy.random.Generator
        The generator the draw was made with: ``"leverage"`` goes on drawing from it
        (the other methods drew everything already, see
        :data:`~kernelmaps.sampling.PREDRAWN_LANDMARK_METHODS`).

    Returns
    -------
    landmarks : array of shape (m, n_features)
        Dense, in ``draw.dtype``, in the namespace and on the device of ``rows``.
    indices : ndarray of int or None
        Rows of ``X`` the landmarks are (None for k-means centres and given landmarks).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.sampling import draw_landmarks, finish_landmarks
    >>> X = np.arange(20.0).reshape(10, 2)
    >>> rng = np.random.default_rng(0)
    >>> draw = draw_landmarks(10, 2, X.dtype, "kmeans", 2, rng=rng)
    >>> draw.rows is None  # k-means reads every row of small data
    True
    >>> finish_landmarks(draw, X, rng)[0].shape
    (2, 2)
    """
    xp, device = get_namespace(rows)
    dtype = getattr(xp, np.dtype(draw.dtype).name)
    L: Any
    local: np.ndarray | None = None
    if draw.method is not None:
        _check_finite_rows(rows)
    if draw.method is None:
        assert draw.given is not None
        L = placed(draw.given, xp, device)
    elif draw.method == "uniform":
        L = dense(rows)
    elif draw.method == "kmeans":
        assert draw.seed is not None
        centres = functools.partial(
            kmeans_centres, n_landmarks=draw.n_landmarks, seed=draw.seed, dtype=draw.dtype
        )
        L = on_host(functools.partial(centres, **draw.options), rows, dtype=draw.dtype)
    elif draw.method == "rpcholesky":
        assert draw.kernel is not None and draw.seed is not None
        local = rpcholesky_indices(rows, draw.n_landmarks, draw.kernel, draw.seed, **draw.options)
    else:
        assert draw.kernel is not None
        # overflows are detected on the results (a clear error), not warned about
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            local = recursive_rls_indices(rows, draw.n_landmarks, draw.kernel, rng, **draw.options)
    if local is not None:
        L = take_rows(rows, local)
    L = xp.astype(L, dtype, copy=False)
    idx = draw.rows if draw.method == "uniform" else _row_indices(draw, local)
    return _drop_repeated(L, idx) if draw.unique else (L, idx)


def _row_indices(draw: LandmarkDraw, local: np.ndarray | None) -> np.ndarray | None:
    """The rows of ``X`` that the rows ``local`` of the read rows are."""
    if local is None:
        return None
    return local if draw.rows is None else draw.rows[local]


def _check_finite_rows(rows: Any) -> None:
    values = rows.data if sp.issparse(rows) else dense(rows)
    xp, _ = get_namespace(values)
    if host_dtype(values.dtype).kind in "fc" and not bool(xp.all(xp.isfinite(values))):
        raise ValueError(
            "The rows the landmarks are drawn from contain NaN or infinity; give finite "
            "data (impute or drop those rows)."
        )


def _drop_repeated(L: Any, idx: np.ndarray | None) -> tuple[Any, np.ndarray | None]:
    """The first of each group of equal rows, in their original order (found on the host)."""
    _, first = np.unique(to_numpy(L), axis=0, return_index=True)
    if first.shape[0] == L.shape[0]:
        return L, idx
    first = np.sort(first)
    return take_rows(L, first), None if idx is None else np.asarray(idx)[first]
