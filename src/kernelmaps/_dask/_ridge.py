"""``FeatureRidge`` and ``FeatureRidgeClassifier`` fitted on Dask arrays.

The numpy path streams the row blocks of ``X`` through the feature map into one
:class:`~kernelmaps.models.RidgeStatistics` and solves on it.  On a Dask array the same
statistics are gathered in one parallel pass:

1. ``X`` is validated from its metadata; ``y`` and ``sample_weight`` (Dask arrays, or
   in-memory arrays checked on the client with scikit-learn's own checks) are aligned
   lazily on the row chunks of ``X``.
2. The feature map is cloned and fitted on the Dask ``X``: the maps of kernelmaps fit
   from its shape and dtype (or read the data as :mod:`._data_fits` says); a foreign
   transformer's ``fit`` receives the Dask array as is (scikit-learn's transformers
   convert it to numpy, i.e. compute all of ``X`` on the client; Dask-aware ones may
   not).  A map that does not state its width has the first rows of ``X`` mapped.
3. One task per row chunk computes that chunk's statistics, row block by row block
   under ``working_memory`` as the numpy path does (a chunk never holds its whole
   ``Z``), after checking the finiteness of its rows, targets and weights with the
   numpy path's messages.  The fitted map (in :class:`RowWork`) and the caller's
   settings (:class:`~kernelmaps._task_settings.TaskSettings`) are single keys of the
   graph, sent to each worker once.
4. The per-chunk statistics are merged by :meth:`RidgeStatistics.merge` (the exact
   Chan-Golub-LeVeque update) in a fixed binary tree: pairs of neighbours in chunk
   order, level after level, so the result depends only on the chunking, never on the
   scheduler or the number of workers; the whole pass is one ``dask.compute``.
5. The solve runs on the client from the merged statistics (always primal: the dual
   solve of the numpy path, for fewer rows than features, needs every row's features
   in one place; the ``D x D`` memory is checked on the client before the pass).
   Exact leave-one-out needs the rows again: a second pass maps every chunk to its
   partial sums
   (:func:`~kernelmaps.models._ridge_solvers.loo_block_sums` over its row blocks, the
   eigendecomposition sent once), summed in the same fixed tree, one more compute.

``Z`` is never persisted: each pass maps the chunks of ``X`` again (persist ``X``
first if it is costly to produce).  Only ``dask.compute``, ``dask.delayed`` and
``dask.array`` are used, so the pass runs on whichever scheduler is active (the local
threads or a ``distributed.Client``).
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable, Iterator
from numbers import Number
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn import config_context
from sklearn.exceptions import DataConversionWarning
from sklearn.preprocessing import LabelBinarizer
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _assert_all_finite, _check_sample_weight, _check_y

from .._array_types import is_dask_array
from .._task_settings import TaskSettings
from ..kernels import one_line_errors
from ..models._base import as_row_sliceable
from ..models._checks import check_statistics, check_weight_values
from ..models._feature_ridge import (
    _WIDTH_PROBE_ROWS,
    feature_row_blocks,
    feature_width,
    map_features,
)
from ..models._ridge_solvers import LooTerms, loo_block_sums, loo_combine
from ..models._ridge_statistics import RidgeStatistics
from ._reduce import tree_reduce, tree_sum
from ._rows import shared
from ._validation import check_dask_array

__all__ = [
    "RowWork",
    "fit_classifier",
    "fit_regressor",
    "partial_fit_classifier",
    "partial_fit_regressor",
]

_ZERO_WEIGHTS = "Sample weights must contain at least one non-zero number."


# -- what a chunk task does --------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class RowWork:
    """What a chunk task needs of the model: the fitted map, the widths, the targets.

    Attributes
    ----------
    feature_map : transformer or None
        The fitted feature map (None: the rows themselves, "passthrough").
    width : int
        ``D``, the number of features.
    n_targets : int
        ``t``, the columns of the statistics' targets.
    centre : bool
        Statistics shifted by their first block's means (``fit_intercept``).
    estimator_name : str
        For the messages of the finiteness checks.
    encoder : LabelBinarizer or None
        The classifier's ``{-1, 1}`` encoding of the labels (None: numeric targets).
    check_labels : bool
        Check each chunk's labels against ``encoder.classes_`` (``partial_fit``).
    """

    feature_map: Any
    width: int
    n_targets: int
    centre: bool
    estimator_name: str
    encoder: Any = None
    check_labels: bool = False

    def targets(self, y: Any) -> np.ndarray:
        """The chunk's targets as float64 ``(rows, t)``: the values, or the encoded labels."""
        if self.encoder is None:
            Y = np.asarray(y)
            return Y.reshape(Y.shape[0], -1).astype(np.float64, copy=False)
        y = np.asarray(y)
        if self.check_labels:
            check_classification_targets(y)
            classes = self.encoder.classes_
            unseen = np.setdiff1d(np.unique(y), classes)
            if unseen.size:
                raise ValueError(
                    f"y holds classes {unseen.tolist()} not in classes={classes.tolist()}; "
                    "list every class in classes on the first call to partial_fit."
                )
        return np.asarray(self.encoder.transform(y), dtype=np.float64)

    def rows(
        self, X: Any, y: Any, w: Any, *, check: bool, start: int = 0
    ) -> tuple[Any, np.ndarray, np.ndarray]:
        """The chunk as ``(X, Y, w)``: ``X`` row-sliceable, ``Y`` float64 ``(rows, t)``,
        ``w`` float64; with ``check``, the finiteness of ``X`` and ``y`` is checked with
        the messages of the numpy path (``sample_weight`` is always checked: finite and
        nonnegative; ``start``, the chunk's first row, places a bad weight in ``X``)."""
        X = as_row_sliceable(X)
        if check:
            values = X.data if sp.issparse(X) else X
            with one_line_errors(self.estimator_name):
                _assert_all_finite(values, input_name="X", estimator_name=self.estimator_name)
                _assert_all_finite(
                    np.asarray(y), input_name="y", estimator_name=self.estimator_name
                )
        Y = self.targets(y)
        if w is None:
            weights = np.ones(X.shape[0])
        else:
            weights = np.asarray(
                _check_sample_weight(w, X, allow_all_zero_weights=True), dtype=np.float64
            )
            check_weight_values(weights, start)
        return X, Y, weights

    def blocks(self, X: Any, Y: np.ndarray, w: np.ndarray) -> Iterator[tuple[Any, Any, Any]]:
        """``(z(X_b), Y_b, w_b)`` over the row blocks of the chunk (``working_memory``)."""
        for rows in feature_row_blocks(X.shape[0], X.shape[1], self.width, self.n_targets):
            yield map_features(self.feature_map, X[rows]), Y[rows], w[rows]


def chunk_statistics(
    X: Any, y: Any, w: Any, work: RowWork, settings: TaskSettings, start: int = 0
) -> tuple[RidgeStatistics, bool]:
    """The statistics of one chunk (rows ``start, ...`` of ``X``), and whether it has a
    non-zero weight (a task)."""
    with settings.applied():
        X, Y, weights = work.rows(X, y, w, check=True, start=start)
        stats = RidgeStatistics(work.width, work.n_targets, centre=work.centre)
        for Z, Y_block, w_block in work.blocks(X, Y, weights):
            stats.update(Z, Y_block, w_block)
        return stats, bool(np.any(weights != 0))


def merge_statistics(
    a: tuple[RidgeStatistics, bool], b: tuple[RidgeStatistics, bool]
) -> tuple[RidgeStatistics, bool]:
    """The statistics of two neighbouring groups of chunks (a task of the merge tree)."""
    return a[0].merge(b[0]), a[1] or b[1]


def chunk_loo_sums(
    X: Any, y: Any, w: Any, work: RowWork, terms: LooTerms, settings: TaskSettings
) -> np.ndarray:
    """The leave-one-out partial sums of one chunk, over its row blocks (a task)."""
    with settings.applied():
        X, Y, weights = work.rows(X, y, w, check=False)
        totals = np.zeros(terms.alphas.shape[0])
        for Z, Y_block, w_block in work.blocks(X, Y, weights):
            totals += loo_block_sums(terms, Z, Y_block, w_block)
        return totals


# -- validation and alignment on the client ----------------------------------------------


def _row_chunks(estimator: Any, X: Any) -> tuple[int, ...]:
    chunks = X.chunks[0]
    if any(math.isnan(c) for c in chunks):
        raise ValueError(
            f"{type(estimator).__name__} needs the row chunk sizes of X to align y and "
            "sample_weight with it, and this Dask array does not know them (nan in "
            "X.chunks); call X.compute_chunk_sizes() or give the chunks explicitly."
        )
    return tuple(int(c) for c in chunks)


def _check_length(X: Any, v: Any, what: str) -> None:
    n, m = X.shape[0], v.shape[0]
    if isinstance(m, float) and math.isnan(m):
        raise ValueError(
            f"The length of {what} is unknown (nan in its shape); call "
            f"{what}.compute_chunk_sizes() or give its chunks explicitly."
        )
    if int(m) != int(n):
        raise ValueError(
            f"Found input variables with inconsistent numbers of samples: [{int(n)}, {int(m)}]"
        )


def _aligned(v: Any, chunks: tuple[int, ...]) -> Any:
    """``v`` (a Dask or numpy array, 1-D or 2-D) as a Dask array with the row chunks
    ``chunks`` and its columns in one chunk; lazy."""
    import dask.array as da

    if is_dask_array(v):
        return v.rechunk({0: chunks, 1: -1} if v.ndim == 2 else {0: chunks})
    return da.from_array(v, chunks=(chunks, -1) if v.ndim == 2 else (chunks,))


def _check_X(estimator: Any, X: Any, *, reset: bool) -> Any:
    """``X`` checked from its metadata (:func:`check_dask_array`), its row chunks known."""
    X = check_dask_array(estimator, X, reset=reset)
    _row_chunks(estimator, X)
    return X


def _regression_targets(estimator: Any, X: Any, y: Any) -> tuple[Any, bool, int]:
    """``y`` aligned on ``X``'s row chunks, whether it is 1-D, and the number of targets.

    A Dask ``y`` is checked from its metadata (its values in the chunk tasks); an
    in-memory ``y`` by scikit-learn's own checks on the client.
    """
    name = type(estimator).__name__
    if is_dask_array(y):
        if y.ndim not in (1, 2):
            raise ValueError(
                f"Found array with dim {y.ndim}, while dim <= 2 is required by {name}."
            )
        if y.ndim == 2 and math.isnan(y.shape[1]):
            raise ValueError(
                "The number of targets (columns of y) is unknown; give y's chunks explicitly."
            )
    else:
        y = _check_y(y, multi_output=True, y_numeric=True, estimator=estimator)
        y = np.asarray(y)
    _check_length(X, y, "y")
    n_targets = 1 if y.ndim == 1 else int(y.shape[1])
    return _aligned(y, _row_chunks(estimator, X)), y.ndim == 1, n_targets


def _labels(estimator: Any, X: Any, y: Any) -> Any:
    """The classifier's ``y``: 1-D (a column vector raveled with scikit-learn's warning),
    of the length of ``X``; an in-memory ``y`` checked on the client."""
    if is_dask_array(y):
        if y.ndim == 2 and y.shape[1] == 1:
            warnings.warn(
                "A column-vector y was passed when a 1d array was expected. Please change "
                "the shape of y to (n_samples, ), for example using ravel().",
                DataConversionWarning,
                stacklevel=4,
            )
            y = y[:, 0]
        elif y.ndim != 1:
            raise ValueError(f"y should be a 1d array, got an array of shape {y.shape} instead.")
    else:
        y = np.asarray(_check_y(y, multi_output=False, estimator=estimator))
    _check_length(X, y, "y")
    return y


def _weights(estimator: Any, X: Any, sample_weight: Any) -> Any:
    """``sample_weight`` for the chunk tasks: None, a number, or a Dask array aligned on
    ``X``'s row chunks.  In-memory weights are checked on the client by scikit-learn
    (shape, finiteness, not all zero); a Dask array's shape from its metadata, its values
    in the tasks (finiteness) and after the pass (not all zero)."""
    n = int(X.shape[0])
    if sample_weight is None:
        return None
    if isinstance(sample_weight, Number):
        if sample_weight == 0:
            raise ValueError(_ZERO_WEIGHTS)
        check_weight_values(np.array([sample_weight], dtype=np.float64))
        return sample_weight
    if is_dask_array(sample_weight):
        if sample_weight.ndim != 1:
            raise ValueError(
                f"Sample weights must be 1D array or scalar, got {sample_weight.ndim}D array. "
                f"Expected either a scalar value or a 1D array of length {n}."
            )
        m = sample_weight.shape[0]
        if math.isnan(m) or int(m) != n:
            raise ValueError(f"sample_weight.shape == {sample_weight.shape}, expected {(n,)}!")
    else:
        sample_weight = _check_sample_weight(sample_weight, np.empty((n, 0)))
        check_weight_values(np.asarray(sample_weight, dtype=np.float64))
    return _aligned(sample_weight, _row_chunks(estimator, X))


def _pieces(v: Any, n_chunks: int) -> list[Any]:
    """The row chunks of ``v`` as delayed objects (``v`` itself for None or a number)."""
    if is_dask_array(v):
        return list(v.to_delayed().ravel())
    return [v] * n_chunks


# -- the passes --------------------------------------------------------------------------


def _statistics_pass(work: RowWork, X: Any, y: Any, w: Any) -> tuple[RidgeStatistics, bool]:
    """One compute: the merged statistics of every chunk, and whether a weight is not 0."""
    import dask

    xs = list(X.to_delayed().ravel())
    work_key, settings = shared(work), shared(TaskSettings.capture())
    task = dask.delayed(chunk_statistics, pure=True)
    starts = np.concatenate([[0], np.cumsum(X.chunks[0])[:-1]]).astype(int).tolist()
    parts = [
        task(x, y_chunk, w_chunk, work_key, settings, start)
        for x, y_chunk, w_chunk, start in zip(
            xs, _pieces(y, len(xs)), _pieces(w, len(xs)), starts, strict=True
        )
    ]
    root = tree_reduce(parts, dask.delayed(merge_statistics, pure=True))
    ((stats, nonzero),) = dask.compute(root)
    return stats, nonzero


def _loo_pass(work: RowWork, X: Any, y: Any, w: Any) -> Callable[[LooTerms], np.ndarray]:
    """``loo(terms)`` for :func:`~kernelmaps.models._ridge_solvers.solve_ridge`: the
    second pass, one compute."""

    def loo(terms: LooTerms) -> np.ndarray:
        import dask

        xs = list(X.to_delayed().ravel())
        work_key, terms_key = shared(work), shared(terms)
        settings = shared(TaskSettings.capture())
        task = dask.delayed(chunk_loo_sums, pure=True)
        parts = [
            task(x, y_chunk, w_chunk, work_key, terms_key, settings)
            for x, y_chunk, w_chunk in zip(
                xs, _pieces(y, len(xs)), _pieces(w, len(xs)), strict=True
            )
        ]
        (totals,) = dask.compute(tree_sum(parts))
        return loo_combine(terms, np.asarray(totals, dtype=np.float64))

    return loo


# -- the estimators' methods -------------------------------------------------------------


def _fit_map(estimator: Any, X: Any) -> None:
    """Fit a clone of the feature map on the Dask ``X`` and set ``n_features_out_``."""
    import dask

    estimator.feature_map_ = estimator._new_feature_map()
    width: int | None
    if estimator.feature_map_ is None:
        width = int(X.shape[1])
    else:
        with config_context(assume_finite=True):
            estimator.feature_map_.fit(X)
        width = feature_width(estimator.feature_map_)
        if width is None:
            (first,) = dask.compute(X[:_WIDTH_PROBE_ROWS])
            width = int(map_features(estimator.feature_map_, as_row_sliceable(first)).shape[1])
    estimator.n_features_out_ = int(width)


def _work(
    estimator: Any, n_targets: int, encoder: Any = None, check_labels: bool = False
) -> RowWork:
    return RowWork(
        feature_map=estimator.feature_map_,
        width=int(estimator.n_features_out_),
        n_targets=int(n_targets),
        centre=bool(estimator.fit_intercept),
        estimator_name=type(estimator).__name__,
        encoder=encoder,
        check_labels=check_labels,
    )


def _start(estimator: Any, X: Any, n_targets: int) -> None:
    """Forget a previous fit, fit the map and check the memory of the statistics."""
    estimator._reset()
    estimator._n_targets = int(n_targets)
    _fit_map(estimator, X)
    estimator._check_primal_memory()


def _fit(estimator: Any, X: Any, y: Any, w: Any, n_targets: int, encoder: Any = None) -> None:
    _start(estimator, X, n_targets)
    work = _work(estimator, n_targets, encoder)
    stats, nonzero = _statistics_pass(work, X, y, w)
    if not nonzero:
        raise ValueError(_ZERO_WEIGHTS)
    check_statistics(type(estimator).__name__, stats)
    estimator.statistics_ = stats
    estimator._store(estimator._solve(None, loo=_loo_pass(work, X, y, w)), "primal")
    estimator._drop_unless_kept()


def _partial_fit(
    estimator: Any,
    X: Any,
    y: Any,
    w: Any,
    n_targets: int,
    first: bool,
    encoder: Any = None,
) -> None:
    if first:
        _start(estimator, X, n_targets)
    else:
        estimator._resume_statistics()
    work = _work(estimator, n_targets, encoder, check_labels=encoder is not None)
    stats, nonzero = _statistics_pass(work, X, y, w)
    if not nonzero:
        raise ValueError(_ZERO_WEIGHTS)
    if not first:
        stats = estimator._live_statistics().merge(stats)
    check_statistics(type(estimator).__name__, stats)
    estimator.statistics_ = stats
    estimator._store(estimator._solve(None), "primal")
    estimator._drop_unless_kept()


def fit_regressor(estimator: Any, X: Any, y: Any, sample_weight: Any) -> None:
    """``FeatureRidge.fit`` on a Dask ``X``: one pass for the statistics, one more for
    exact leave-one-out."""
    estimator._validate_params()
    X = _check_X(estimator, X, reset=True)
    y, y_1d, n_targets = _regression_targets(estimator, X, y)
    w = _weights(estimator, X, sample_weight)
    estimator._y_1d = y_1d
    _fit(estimator, X, y, w, n_targets)


def partial_fit_regressor(estimator: Any, X: Any, y: Any, sample_weight: Any) -> None:
    """``FeatureRidge.partial_fit`` on a Dask batch: its statistics in one pass, merged
    into ``statistics_``; the first call fits the map on this batch."""
    first = not estimator._started()
    if first:
        estimator._validate_params()
    X = _check_X(estimator, X, reset=first)
    y, y_1d, n_targets = _regression_targets(estimator, X, y)
    if not first:
        estimator._check_same_targets(n_targets, y_1d)
    w = _weights(estimator, X, sample_weight)
    if first:
        estimator._y_1d = y_1d
    _partial_fit(estimator, X, y, w, n_targets, first)


def _n_targets(binarizer: LabelBinarizer) -> int:
    n_classes = int(binarizer.classes_.shape[0])
    return 1 if n_classes == 2 else n_classes


def fit_classifier(estimator: Any, X: Any, y: Any, sample_weight: Any) -> None:
    """``FeatureRidgeClassifier.fit`` on a Dask ``X``: the classes of a Dask ``y`` from
    one small compute of its unique labels, then the passes of :func:`fit_regressor`
    with the labels encoded in the chunk tasks."""
    import dask
    import dask.array as da

    estimator._validate_params()
    X = _check_X(estimator, X, reset=True)
    y = _labels(estimator, X, y)
    if is_dask_array(y):
        (labels,) = dask.compute(da.unique(y))
        _assert_all_finite(labels, input_name="y", estimator_name=type(estimator).__name__)
    else:
        labels = y
    estimator._set_classes(labels)
    y = _aligned(y, _row_chunks(estimator, X))
    w = _weights(estimator, X, sample_weight)
    estimator._y_1d = False
    _fit(estimator, X, y, w, _n_targets(estimator._binarizer), estimator._binarizer)


def partial_fit_classifier(estimator: Any, X: Any, y: Any, sample_weight: Any, first: bool) -> None:
    """``FeatureRidgeClassifier.partial_fit`` on a Dask batch, the classes already set
    (from ``classes=`` on the first call); each chunk's labels are checked against them
    in its task."""
    X = _check_X(estimator, X, reset=first)
    y = _aligned(_labels(estimator, X, y), _row_chunks(estimator, X))
    w = _weights(estimator, X, sample_weight)
    if first:
        estimator._y_1d = False
    _partial_fit(estimator, X, y, w, _n_targets(estimator._binarizer), first, estimator._binarizer)
