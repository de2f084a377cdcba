"""Landmarks of a Dask array: drawn on the client, their rows gathered in one compute.

The landmark selection of :mod:`kernelmaps.sampling._landmarks` is split in two: the
draws that do not depend on the data (:func:`~kernelmaps.sampling._landmarks.
draw_landmarks`: the uniform rows, the uniform sample and the seed of k-means, the
sample of leverage, the sample and the seed of rpcholesky) and the work on the rows they
name (:func:`~kernelmaps.sampling._landmarks.finish_landmarks`). On a Dask array the
draws are made on the client, from the numpy generator the numpy fit would use and with
global row indices (never with seeds local to a chunk); the rows they name are gathered
to the client in one compute (:func:`gather_rows`: one task per chunk holding some of
them, each taking its rows); and the same numpy code finishes the selection on them. The
landmarks are therefore those of the same data in numpy with the same seed, bit for bit,
whatever the chunking and the scheduler (threads or a ``distributed`` cluster), and are
numpy arrays.

``"kmeans"``, ``"leverage"`` and ``"rpcholesky"`` read at most ``landmark_sample_size(m)``
rows (100 000 for ``m <= 5000``): data with more rows is replaced, in numpy as here, by a uniform
sample of that many rows (the module docstring of :mod:`kernelmaps.sampling._landmarks`
gives the reasons and the cost); smaller data is gathered whole to the client.

The number of rows must be known to draw global indices: a Dask array with unknown chunk
sizes (``nan``, e.g. after boolean indexing) has them computed first
(:meth:`dask.array.Array.compute_chunk_sizes`, a pass over the array).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils import assert_all_finite

from ..sampling._landmarks import (
    RowReader,
    _draw_method,
    _float_dtype,
    draw_landmarks,
    finish_landmarks,
)
from ._validation import zero_rows

__all__ = [
    "dask_row_reader",
    "gather_rows",
    "resolve_landmarks_dask",
    "select_landmarks_dask",
    "with_known_rows",
]


def with_known_rows(X: Any) -> Any:
    """``X`` with the sizes of its row chunks known.

    Unknown sizes (``nan``) are computed (:meth:`dask.array.Array.compute_chunk_sizes`:
    one compute, a pass over ``X``) on a new array object; the caller's is left as it
    was.  Known sizes cost nothing.
    """
    if not any(math.isnan(size) for size in X.chunks[0]):
        return X
    return X.copy().compute_chunk_sizes()


def _stack(parts: Sequence[Any]) -> Any:
    if len(parts) == 1:
        return parts[0]
    if sp.issparse(parts[0]):
        return sp.vstack(parts, format="csr")
    return np.concatenate(parts, axis=0)


def gather_rows(
    X: Any, requests: Sequence[np.ndarray | None], *, estimator_name: str | None = None
) -> list[Any]:
    """The rows of the Dask array ``X`` named by each request, read in one compute.

    Parameters
    ----------
    X : dask.array.Array of shape (n_samples, n_features)
        With known row-chunk sizes (see :func:`with_known_rows`).
    requests : sequence of (ndarray of int or None)
        Global row indices (any order, repeats allowed), or None for every row.
    estimator_name : str, optional
        The estimator named in the error if a gathered row has NaN or infinity: the
        rows are checked with scikit-learn's message (what the numpy fit checks on the
        whole of ``X``; the other rows are checked by ``transform``, chunk by chunk).
        scikit-learn's ``assume_finite`` turns the check off.

    Returns
    -------
    list of {ndarray, scipy.sparse.csr_matrix}
        For each request, its rows in its order (of the kind of ``X``'s chunks).

    Notes
    -----
    The union of the requests is gathered once: one task per chunk that holds some of
    its rows (the whole chunk when every row is asked for), all computed by one
    :func:`dask.compute`, and stacked on the client.  Nothing is computed when no row is
    asked for.
    """
    import dask

    if X.numblocks[1] > 1:
        X = X.rechunk({1: -1})
    wanted = [None if rows is None else np.asarray(rows, dtype=np.intp) for rows in requests]
    named = [rows for rows in wanted if rows is not None]
    union = None
    if len(named) == len(wanted):
        union = np.unique(np.concatenate(named)) if named else np.empty(0, dtype=np.intp)
        if union.size == 0:
            return [zero_rows(X, 0) for _ in wanted]
        n = int(sum(X.chunks[0]))
        if union[0] < 0 or union[-1] >= n:
            raise IndexError(f"row indices out of range for a Dask array of {n} rows")
    bounds = np.concatenate([[0], np.cumsum(X.chunks[0])]).astype(np.intp)
    blocks = X.to_delayed().reshape(-1)
    tasks = []
    for i, block in enumerate(blocks):
        if union is None:
            tasks.append(block)
            continue
        first, stop = np.searchsorted(union, bounds[i : i + 2])
        if stop > first:
            local = union[first:stop] - bounds[i]
            # operator.getitem: the task needs no import of kernelmaps on the worker
            tasks.append(dask.delayed(operator.getitem, pure=True)(block, local))
    parts = dask.compute(*tasks)
    gathered = _stack(parts)
    assert_all_finite(gathered, estimator_name=estimator_name, input_name="X")
    out = []
    for rows in wanted:
        if rows is None:
            out.append(gathered)
        elif union is None:
            out.append(gathered[rows])
        else:
            out.append(gathered[np.searchsorted(union, rows)])
    return out


def dask_row_reader(X: Any, estimator_name: str | None = None) -> RowReader:
    """The :data:`~kernelmaps.sampling._landmarks.RowReader` of a Dask array ``X``.

    Each call reads all its requests in one compute (:func:`gather_rows`); ``X`` must
    have known row-chunk sizes (:func:`with_known_rows`).
    """

    def read(requests: Sequence[np.ndarray | None]) -> list[Any]:
        return gather_rows(X, requests, estimator_name=estimator_name)

    return read


def _prepared(X: Any) -> Any:
    """``X`` with known row chunks and its columns in one chunk."""
    X = with_known_rows(X)
    if X.numblocks[1] > 1:
        X = X.rechunk({1: -1})
    return X


def select_landmarks_dask(
    X: Any,
    n_landmarks: int,
    method: str,
    *,
    kernel: Callable[..., Any] | None = None,
    rng: np.random.Generator,
    **options: Any,
) -> tuple[np.ndarray, np.ndarray | None]:
    """:func:`kernelmaps.sampling.select_landmarks` for a Dask array ``X``.

    Same parameters and results: the landmarks of the same data in numpy with the same
    ``rng``, as numpy arrays, with the rows read in one compute (plus one to find the
    chunk sizes if they are unknown).
    """
    X = _prepared(X)
    draw = _draw_method(
        int(X.shape[0]),
        n_landmarks,
        method,
        kernel=kernel,
        rng=rng,
        dtype=_float_dtype(X),
        options=options,
    )
    (rows,) = gather_rows(X, [draw.rows])
    return finish_landmarks(draw, rows, rng)


def resolve_landmarks_dask(
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
    """:func:`kernelmaps.sampling.resolve_landmarks` for a Dask array ``X``.

    Same parameters and results (the landmarks of the same data in numpy with the same
    ``rng``, numpy arrays); :func:`kernelmaps.sampling.resolve_landmarks` calls it for a
    Dask array.  ``X`` (validated: float32 or float64) is read in one compute, only for
    the rows the selection needs: the ``m`` landmark rows for ``"uniform"``, at most
    ``landmark_sample_size(m)`` rows for the other methods, none for
    given landmarks; unknown chunk sizes are computed first (one more compute).  The
    gathered rows are checked for NaN and infinity (the values of a Dask array cannot be
    validated beforehand without a pass over it).
    """
    X = _prepared(X)
    draw = draw_landmarks(
        int(X.shape[0]),
        int(X.shape[1]),
        _float_dtype(X),
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
    (rows,) = gather_rows(X, [draw.rows])
    return finish_landmarks(draw, rows, rng)
