"""The second step of a landmark selection: the landmarks from the rows the draw named.

:func:`~kernelmaps.sampling.draw_landmarks` makes the random draws from the shape alone
(:class:`~kernelmaps.sampling.LandmarkDraw`, :mod:`kernelmaps.sampling._landmarks`);
:func:`finish_landmarks` takes the rows it named, once read, and makes the landmarks: the
rows themselves (``"uniform"``), the k-means centres, or the rows chosen by ridge leverage
scores or randomly pivoted Cholesky, repeated rows dropped on request.  Rows of an array of
another library give the same landmarks on its device (``_finish_landmarks_array``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from .._array_api import device_of, is_device_array, namespace_of, to_namespace, to_numpy
from ._kernel_blocks import dense
from ._kmeans import kmeans_centres
from ._leverage import recursive_rls_indices
from ._rpcholesky import rpcholesky_indices, rpcholesky_indices_array

if TYPE_CHECKING:  # the draw's module calls this one: its type only, for the annotations
    from ._landmarks import LandmarkDraw

__all__ = ["finish_landmarks"]


def finish_landmarks(
    draw: LandmarkDraw, rows: Any, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray | None]:
    """The landmarks of ``draw`` from the rows it asked for.

    Parameters
    ----------
    draw : LandmarkDraw
        From :func:`~kernelmaps.sampling.draw_landmarks` or
        :func:`~kernelmaps.sampling.select_landmarks`'s first step.
    rows : {ndarray, sparse matrix} or array of another library
        The rows ``draw.rows`` of ``X`` in that order (every row of ``X`` when
        ``draw.rows`` is None).  An array of another library (PyTorch, CuPy, ...) gives
        the same landmarks as an array of its own, on its device (see
        ``_finish_landmarks_array``).
    rng : numpy.random.Generator
        The generator the draw was made with: ``"leverage"`` goes on drawing from it
        (the other methods drew everything already, see
        :data:`~kernelmaps.sampling.PREDRAWN_LANDMARK_METHODS`).

    Returns
    -------
    landmarks : ndarray of shape (m, n_features)
        Dense, in ``draw.dtype``.
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
    L: np.ndarray
    idx: np.ndarray | None
    if is_device_array(rows):
        return _finish_landmarks_array(draw, rows, rng)
    if draw.method is not None:
        _check_finite_rows(rows)
    if draw.method is None:
        assert draw.given is not None
        L, idx = draw.given, None
    elif draw.method == "uniform":
        L, idx = dense(rows).astype(draw.dtype, copy=False), draw.rows
    elif draw.method == "kmeans":
        assert draw.seed is not None
        L = kmeans_centres(rows, draw.n_landmarks, draw.seed, draw.dtype, **draw.options)
        idx = None
    elif draw.method == "rpcholesky":
        assert draw.kernel is not None and draw.seed is not None
        local = rpcholesky_indices(rows, draw.n_landmarks, draw.kernel, draw.seed, **draw.options)
        L = _dense_rows(rows, local).astype(draw.dtype, copy=False)
        idx = local if draw.rows is None else draw.rows[local]
    else:
        assert draw.kernel is not None
        # overflows are detected on the results (a clear error), not warned about
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            local = recursive_rls_indices(rows, draw.n_landmarks, draw.kernel, rng, **draw.options)
        L = _dense_rows(rows, local).astype(draw.dtype, copy=False)
        idx = local if draw.rows is None else draw.rows[local]
    return _drop_repeated(L, idx) if draw.unique else (L, idx)


def _finish_landmarks_array(
    draw: LandmarkDraw, rows: Any, rng: np.random.Generator
) -> tuple[Any, np.ndarray | None]:
    """:func:`finish_landmarks` for rows that are an array of another library (array API
    dispatch on): the same landmarks, as an array of its namespace on its device.

    ``"uniform"`` and given landmarks take no computation (the rows read, or the given
    array moved there); ``"rpcholesky"`` runs on the device
    (:func:`~kernelmaps.sampling._rpcholesky.rpcholesky_indices_array`, the draws on the
    host); ``"kmeans"`` and ``"leverage"`` run on the host on a copy of the rows (their
    iterations are scikit-learn's and SciPy's on NumPy arrays) and their landmarks are
    moved.  Every method picks the rows the NumPy path picks with the same generator
    (rpcholesky: up to rounding, see there).

    Returns
    -------
    landmarks : array of shape (m, n_features)
        In ``draw.dtype``, in the namespace and on the device of ``rows``.
    indices : ndarray of int or None
        As :func:`finish_landmarks` (host).

    Examples
    --------
    >>> import array_api_strict as xp
    >>> import numpy as np
    >>> import sklearn
    >>> from kernelmaps.sampling._landmark_finish import _finish_landmarks_array
    >>> X = xp.asarray(np.arange(20.0).reshape(10, 2))
    >>> rng = np.random.default_rng(0)
    >>> from kernelmaps.sampling import draw_landmarks
    >>> draw = draw_landmarks(10, 2, np.float64, "uniform", 3, rng=rng)
    >>> rows = xp.take(X, xp.asarray(draw.rows), axis=0)
    >>> with sklearn.config_context(array_api_dispatch=True):
    ...     L, idx = _finish_landmarks_array(draw, rows, rng)
    >>> L.shape, idx.tolist() == draw.rows.tolist()
    ((3, 2), True)
    """
    xp, device = namespace_of(rows), device_of(rows)
    if draw.method in ("kmeans", "leverage"):
        L_host, idx = finish_landmarks(draw, to_numpy(rows), rng)
        return to_namespace(L_host, xp, device), idx
    if draw.method is not None and not bool(xp.all(xp.isfinite(rows))):
        _check_finite_rows(np.asarray([np.nan]))  # the host path's message
    L: Any
    if draw.method is None:
        assert draw.given is not None
        L, idx = to_namespace(draw.given, xp, device), None
    elif draw.method == "uniform":
        L, idx = rows, draw.rows
    else:
        assert draw.kernel is not None and draw.seed is not None
        local = rpcholesky_indices_array(
            rows, draw.n_landmarks, draw.kernel, draw.seed, **draw.options
        )
        L = xp.take(rows, to_namespace(local, xp, device), axis=0)
        idx = local if draw.rows is None else draw.rows[local]
    L = xp.astype(L, getattr(xp, np.dtype(draw.dtype).name), copy=False)
    if draw.unique:
        L_host, idx = _drop_repeated(to_numpy(L), idx)
        L = to_namespace(L_host, xp, device)
    return L, idx


def _dense_rows(X: Any, rows: Any) -> np.ndarray:
    return dense(X[rows])


def _check_finite_rows(rows: Any) -> None:
    values = rows.data if sp.issparse(rows) else np.asarray(rows)
    if values.dtype.kind in "fc" and not np.all(np.isfinite(values)):
        raise ValueError(
            "The rows the landmarks are drawn from contain NaN or infinity; give finite "
            "data (impute or drop those rows)."
        )


def _drop_repeated(L: np.ndarray, idx: np.ndarray | None) -> tuple[np.ndarray, np.ndarray | None]:
    """The first of each group of equal rows, in their original order."""
    _, first = np.unique(L, axis=0, return_index=True)
    if first.shape[0] == L.shape[0]:
        return L, idx
    first = np.sort(first)
    return L[first], None if idx is None else np.asarray(idx)[first]
