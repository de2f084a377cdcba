"""The passes of a primal ridge fit over the parts of the training rows.

:class:`FeatureRidge` and :class:`FeatureRidgeClassifier` read their rows through
``kernelmaps._rows.Rows``: one pass maps every part to the
:class:`~kernelmaps.models.RidgeStatistics` of its rows (row block by row block under
``working_memory``, so that a part never holds its whole ``Z``), merged by
:meth:`RidgeStatistics.merge` (the exact Chan-Golub-LeVeque update) in the fixed tree of
:func:`kernelmaps._rows.tree_reduce`; exact leave-one-out maps every part again to its
partial sums (:func:`~kernelmaps.models._ridge._solvers.loo_block_sums`), added in the same
tree.  In memory the rows are one part and the pass is the loop over its row blocks; on a
Dask array each chunk is a part, computed where it lives.

What a part needs of the model travels as one small object, :class:`RowWork` (the fitted
map, the widths, the label encoder), never the estimator with its statistics.  Where the
rows' values were not checked on the way in (a Dask array's), each part checks its
targets and weights with the in-memory path's messages.

Rows on a device (an array of another library, or the blocks of rows streamed to a
device) are mapped there: the features of a block come from the map's array path where
the map's arrays are on that device (else from its ``transform`` on the host, copied
there), the targets and weights are moved there, the statistics and the leave-one-out
sums are accumulated there (:class:`RidgeStatistics` held on the device) and only the
merged totals come back to the host, where the solve runs.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterator
from numbers import Integral, Number
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _assert_all_finite, _check_sample_weight

from ..._array_api import (
    accumulator_dtype,
    dispatch_enabled,
    fitted_array,
    get_namespace,
    is_numpy,
    placed,
    to_namespace,
    to_numpy,
)
from ..._array_types import is_dask_array
from ..._progress import Progress, counted_pass
from ..._row_blocks import row_blocks
from ..._rows import Rows, pick_rows, stacked_pairs
from ..._validation import one_line_errors
from .._base import as_row_sliceable
from .._checks import check_sample_weight, check_weight_values
from .._ridge_statistics import RidgeStatistics
from ._solvers import LooTerms, loo_block_sums, loo_combine, loo_values

__all__ = [
    "RIDGE_BLOCK_ROWS",
    "ZERO_WEIGHTS",
    "RowWork",
    "checked_weights",
    "feature_row_blocks",
    "feature_width",
    "loo_sample",
    "map_features",
    "merge_statistics",
    "ridge_loo",
    "ridge_statistics",
    "sample_rows",
    "weighted_sample_rows",
]

#: Longest row block of a ridge pass (see :func:`feature_row_blocks`).
RIDGE_BLOCK_ROWS: int | None = 8192

ZERO_WEIGHTS = "Sample weights must contain at least one non-zero number."


def map_features(feature_map: Any, X: Any) -> Any:
    """``z(X)`` for validated rows ``X`` (the map does not scan them again), where ``X``
    is; ``X`` itself when ``feature_map`` is None ("passthrough").

    Rows of another library (on a device) are mapped there by a map whose fitted arrays
    are there: through ``transform`` with array API dispatch on, else through the array
    path of the maps of kernelmaps (the blocks of rows streamed to a device, the switch
    off).  A map fitted on the host maps the rows on the host, and its features (dense)
    are copied to the rows' device.
    """
    if feature_map is None:
        return X
    from sklearn import config_context

    xp, device = get_namespace(X)
    with config_context(assume_finite=True):
        if is_numpy(xp):
            return feature_map.transform(X)
        fitted = fitted_array(feature_map)
        there = fitted is not None and not is_numpy(get_namespace(fitted)[0])
        if there and not dispatch_enabled() and getattr(feature_map, "_array_api", False):
            return feature_map._transform_validated(X)
        Z = feature_map.transform(X if there else to_numpy(X))
    if is_numpy(get_namespace(Z)[0]):
        Z = Z.toarray() if sp.issparse(Z) else np.asarray(Z)
    return placed(Z, xp, device)


def _float_rows(values: Any, xp: Any, device: Any) -> Any:
    """Row-aligned ``values`` (of any library) in float64 in ``xp`` on ``device`` (in the
    dtype of its sums on a device without float64)."""
    if is_numpy(xp):
        return np.asarray(values, dtype=np.float64)
    return to_namespace(values, xp, device, dtype=accumulator_dtype(xp, device))


def feature_row_blocks(
    n_rows: int, n_columns: int, width: int, n_targets: int, start: int = 0
) -> Iterator[slice]:
    """The row blocks ``[start, n_rows)`` of a ridge pass, sized by ``working_memory``
    and at most ``RIDGE_BLOCK_ROWS`` rows.

    A row of a block costs the features, their weighted and centred copies (``3 D``), the
    input row and the targets, in float64.  Longer blocks than ``RIDGE_BLOCK_ROWS`` make
    the Gram update ``Z_b^T Z_b`` no faster (its inner dimension is long enough) and only
    hold more memory.
    """
    per_row = 8.0 * (3 * width + n_columns + n_targets)
    if n_rows <= start:
        return
    for rows in row_blocks(n_rows - start, per_row, max_rows=RIDGE_BLOCK_ROWS):
        yield slice(rows.start + start, rows.stop + start)


@dataclasses.dataclass(frozen=True)
class RowWork:
    """What a part of the rows needs of the model: the fitted map, the widths, the targets.

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
        For the messages of the value checks.
    encoder : LabelBinarizer or None
        The classifier's ``{-1, 1}`` encoding of the labels (None: numeric targets).
    check_labels : bool
        Check each part's labels against ``encoder.classes_`` (``partial_fit``).
    checked : bool
        Whether the targets and weights were checked on the way in (in memory); when
        False each part checks its own.
    head : tuple of (features, int) or None
        ``(z(X[:k]), k)``: the features of the first ``k`` rows of the one part of rows in
        memory, mapped already (to learn the width of a map that does not state it), so
        that the statistics' pass maps every row once.
    progress : callable or None
        Called with the rows of each block a part finishes (a pass's
        :class:`~kernelmaps._progress.RowCounter`, set for rows that are worked on here
        only: :func:`kernelmaps._progress.counted_pass`); None reports nothing.
    """

    feature_map: Any
    width: int
    n_targets: int
    centre: bool
    estimator_name: str
    encoder: Any = None
    check_labels: bool = False
    checked: bool = True
    head: Any = None
    progress: Callable[[int], None] | None = None

    def targets(self, y: Any, X: Any = None) -> Any:
        """Targets as float64 ``(rows, t)``: the values, or the encoded labels (encoded on
        the host), in the namespace and on the device of the rows ``X``."""
        xp, device = get_namespace(X)
        if self.encoder is None:
            Y = _float_rows(y, xp, device)
            return xp.reshape(Y, (Y.shape[0], -1))
        y = np.asarray(to_numpy(y))
        if self.check_labels:
            check_classification_targets(y)
            classes = self.encoder.classes_
            unseen = np.setdiff1d(np.unique(y), classes)
            if unseen.size:
                raise ValueError(
                    f"y holds classes {unseen.tolist()} not in classes={classes.tolist()}; "
                    "list every class in classes on the first call to partial_fit."
                )
        return _float_rows(self.encoder.transform(y), xp, device)

    def rows(self, X: Any, y: Any, w: Any, start: int | None) -> tuple[Any, Any, Any]:
        """A part as ``(X, Y, w)``: ``X`` row-sliceable, ``Y`` float64 ``(rows, t)``, ``w``
        float64 (where ``X`` is); unless :attr:`checked`, ``y`` is checked finite and
        ``w`` finite and nonnegative (``start``, the part's first row, places a bad weight
        in ``X``), and rows of another library finite."""
        X = as_row_sliceable(X)
        xp, device = get_namespace(X)
        if not self.checked:
            self._check_values(X, y, xp)
        Y = self.targets(y, X)
        if w is None:
            return X, Y, _float_rows(np.ones(X.shape[0]), xp, device)
        if not self.checked:
            like = X if is_numpy(xp) else np.empty((X.shape[0], 0))
            w = np.asarray(
                _check_sample_weight(to_numpy(w), like, allow_all_zero_weights=True),
                dtype=np.float64,
            )
            check_weight_values(w, start or 0)
        return X, Y, _float_rows(w, xp, device)

    def _check_values(self, X: Any, y: Any, xp: Any) -> None:
        """The in-memory path's checks of values read unchecked: ``y``, and ``X`` of
        another library (the rows on the host are checked where they are read)."""
        name = self.estimator_name
        with one_line_errors(name):
            if not is_numpy(xp) and not bool(xp.all(xp.isfinite(X))):
                _assert_all_finite(to_numpy(X), input_name="X", estimator_name=name)
            _assert_all_finite(np.asarray(to_numpy(y)), input_name="y", estimator_name=name)

    def blocks(self, X: Any, Y: Any, w: Any, start: int = 0) -> Iterator[tuple[Any, Any, Any]]:
        """``(z(X_b), Y_b, w_b)`` over the row blocks of a part (``working_memory``), from
        its row ``start``."""
        n_rows, n_columns = X.shape
        for rows in feature_row_blocks(n_rows, n_columns, self.width, self.n_targets, start):
            yield map_features(self.feature_map, X[rows, ...]), Y[rows, ...], w[rows]

    def statistics(self, X: Any, y: Any, w: Any, start: int | None) -> tuple[Any, bool]:
        """The statistics of a part (where its rows are), and whether it has a non-zero
        weight."""
        X, Y, weights = self.rows(X, y, w, start)
        xp, device = get_namespace(X)
        stats = RidgeStatistics(
            self.width, self.n_targets, centre=self.centre, xp=xp, device=device
        )
        k = 0
        if self.head is not None:
            head, k = self.head
            stats.update(head, Y[:k, ...], weights[:k])
            self._done(k)
        for Z, Y_block, w_block in self.blocks(X, Y, weights, k):
            stats.update(Z, Y_block, w_block)
            self._done(Y_block.shape[0])
        return stats, bool(xp.any(weights != 0))

    def loo_sums(self, X: Any, y: Any, w: Any, start: int | None, *, terms: LooTerms) -> Any:
        """The leave-one-out partial sums of a part, over its row blocks (where its rows
        are, ``terms`` there too)."""
        X, Y, weights = self.rows(X, y, w, start)
        xp, device = get_namespace(X)
        totals = xp.zeros(terms.alphas.shape[0], dtype=weights.dtype, device=device)
        for Z, Y_block, w_block in self.blocks(X, Y, weights):
            totals += loo_block_sums(terms, Z, Y_block, w_block)
            self._done(Y_block.shape[0])
        return totals

    def _done(self, n_rows: int) -> None:
        """Report ``n_rows`` more rows of the part done."""
        if self.progress is not None:
            self.progress(n_rows)


def merge_statistics(
    a: tuple[RidgeStatistics, bool], b: tuple[RidgeStatistics, bool]
) -> tuple[RidgeStatistics, bool]:
    """The statistics of two neighbouring groups of parts."""
    return a[0].merge(b[0]), a[1] or b[1]


def _add(a: Any, b: Any) -> Any:
    return a + b


def ridge_statistics(
    rows: Rows, work: RowWork, Y: Any, w: Any, progress: Progress | None = None
) -> RidgeStatistics:
    """The merged statistics of every part of ``rows`` (one pass, reported to
    ``progress`` as ``"statistics"``); refuses all-zero weights.  They follow ``X``: held
    on its device for an array of another library, NumPy otherwise (rows streamed through
    a device too: merged there, then copied)."""
    with counted_pass(progress, "statistics", rows) as done:
        counted = dataclasses.replace(work, progress=done)
        stats, nonzero = rows.map_reduce(counted.statistics, merge_statistics, Y, w)
    if not nonzero:
        raise ValueError(ZERO_WEIGHTS)
    return stats.to_host() if is_numpy(rows.fitted_place()[0]) else stats


def ridge_loo(
    rows: Rows, work: RowWork, Y: Any, w: Any, progress: Progress | None = None
) -> Callable[[LooTerms], np.ndarray]:
    """``loo(terms)`` for :func:`~kernelmaps.models._ridge._solvers.solve_ridge`: the
    second pass (reported to ``progress`` as ``"leave-one-out"``), its sums added in the
    fixed tree (on the rows' device, the totals then copied to the host)."""
    import functools

    def loo(terms: LooTerms) -> np.ndarray:
        held = terms.to_device(rows.xp, rows.device)  # where the blocks are, once
        with counted_pass(progress, "leave-one-out", rows) as done:
            counted = dataclasses.replace(work, progress=done)
            sums = functools.partial(counted.loo_sums, terms=held)
            totals = rows.map_reduce(sums, _add, Y, w)
        return loo_combine(terms, np.asarray(to_numpy(totals), dtype=np.float64))

    return loo


def feature_width(feature_map: Any) -> int | None:
    """The output width of a fitted transformer, when it states it without a transform.

    ``_n_features_out`` (the maps of this package and scikit-learn's kernel
    approximations), else the length of ``get_feature_names_out()``; None otherwise.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.preprocessing import StandardScaler
    >>> from kernelmaps import RandomFourierFeatures
    >>> from kernelmaps.models._ridge._pass import feature_width
    >>> X = np.zeros((4, 3))
    >>> feature_width(RandomFourierFeatures(n_components=10).fit(X))
    10
    >>> feature_width(StandardScaler().fit(X))
    3
    """
    width = getattr(feature_map, "_n_features_out", None)
    if isinstance(width, Integral):
        return int(width)
    try:
        return len(feature_map.get_feature_names_out())
    except (AttributeError, TypeError, ValueError, NotFittedError):
        return None


def checked_weights(rows: Rows, sample_weight: Any) -> tuple[Any, float | None]:
    """``sample_weight`` for the passes over ``rows``, and the largest weight (for the
    messages of the overflow checks; None when unknown or not given).

    In-memory weights are checked here with scikit-learn's checks (length, finite, not
    all zero) and nonnegative (on the host, an array of another library copied there
    first, then aligned where the rows are); a number is checked once; weights held
    elsewhere (a Dask array) are checked from their metadata here and by value part by
    part.
    """
    if sample_weight is None:
        return None, None
    if isinstance(sample_weight, Number) and not rows.in_memory and not rows.checked:
        if sample_weight == 0:
            raise ValueError(ZERO_WEIGHTS)
        check_sample_weight(np.array([sample_weight], dtype=np.float64), np.empty((1, 0)))
        return sample_weight, None
    if is_dask_array(sample_weight):
        if sample_weight.ndim != 1:
            raise ValueError(
                f"Sample weights must be 1D array or scalar, got {sample_weight.ndim}D array. "
                f"Expected either a scalar value or a 1D array of length {rows.n_rows}."
            )
        m = sample_weight.shape[0]
        if math.isnan(m) or int(m) != rows.n_rows:
            raise ValueError(
                f"sample_weight.shape == {sample_weight.shape}, expected {(rows.n_rows,)}!"
            )
        return rows.align(sample_weight, "sample_weight"), None
    X = rows.array()
    like = np.empty((rows.n_rows, 0)) if X is None else X
    w = check_sample_weight(to_numpy(sample_weight), like)
    return rows.align(w, "sample_weight"), float(np.max(w))


def sample_rows(n_rows: int, size: int) -> np.ndarray:
    """Sorted indices of ``min(n_rows, size)`` rows: every row, else a uniform draw
    without replacement from a fixed seed (the same rows for the same ``n_rows``).

    Examples
    --------
    >>> from kernelmaps.models._ridge._pass import sample_rows
    >>> sample_rows(3, 5).tolist()
    [0, 1, 2]
    >>> bool((sample_rows(10, 4) == sample_rows(10, 4)).all())
    True
    """
    if n_rows <= size:
        return np.arange(n_rows)
    return np.sort(np.random.default_rng(0).choice(n_rows, size, replace=False))


def weighted_sample_rows(weights: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Sorted indices of rows and their weights, a sample of the weighted rows: every
    row of positive weight with its weight where there are at most ``size``, else the
    distinct rows of ``size`` draws with replacement, with probability ``s_i / sum s``
    (a fixed seed), each with its number of draws.

    Exact in distribution for integer weights as for the rows repeated: the weighted
    empirical distribution, whole or sampled (:func:`sample_rows` is for unit weights).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models._ridge._pass import weighted_sample_rows
    >>> index, counts = weighted_sample_rows(np.array([2.0, 0.0, 1.0]), 5)
    >>> index.tolist(), counts.tolist()
    ([0, 2], [2.0, 1.0])
    >>> int(weighted_sample_rows(np.arange(100.0), 50)[1].sum())
    50
    """
    w = np.where(np.isfinite(weights) & (weights > 0), weights, 0.0)
    positive = np.flatnonzero(w)
    if positive.size == 0:
        raise ValueError(ZERO_WEIGHTS)
    if positive.size <= size:
        return positive, w[positive]
    draws = np.random.default_rng(0).choice(w.shape[0], size, p=w / np.sum(w))
    index, counts = np.unique(draws, return_counts=True)
    return index, counts.astype(np.float64)


def _picked(
    work: RowWork, index: np.ndarray, X: Any, y: Any, weights: Any, start: int
) -> tuple[Any, Any, Any]:
    """The rows of ``index`` (sorted global indices) in a part of first row ``start``,
    their targets and weights, checked as a pass checks its rows (:meth:`RowWork.rows`)."""
    local = index[(index >= start) & (index < start + X.shape[0])] - start
    picked_w = None if weights is None else pick_rows(weights, local)
    picked_X = pick_rows(as_row_sliceable(X), local)
    return work.rows(picked_X, pick_rows(y, local), picked_w, start)


def _host_numbers(*arrays: Any) -> tuple[np.ndarray, ...]:
    return tuple(np.asarray(to_numpy(a), dtype=np.float64) for a in arrays)


def row_sample(rows: Rows, work: RowWork, Y: Any, w: Any, index: np.ndarray) -> tuple[Any, ...]:
    """The rows ``index`` (sorted global indices) read in one pass, with their targets
    and weights: ``(targets, weights, rows)``, NumPy (the rows by :func:`host_rows`), in
    the order of ``index``.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._rows import as_rows
    >>> from kernelmaps.models._ridge._pass import RowWork, row_sample
    >>> X, y = np.arange(8.0).reshape(4, 2), np.arange(4.0)
    >>> work = RowWork(None, width=2, n_targets=1, centre=True, estimator_name="FeatureRidge")
    >>> row_sample(as_rows(X), work, y, None, np.array([1, 3]))[2].tolist()
    [[2.0, 3.0], [6.0, 7.0]]
    """

    def part(X: Any, y: Any, weights: Any, start: int) -> tuple[Any, ...]:
        Xs, Ys, ws = _picked(work, index, X, y, weights, start)
        return (*_host_numbers(Ys, ws), host_rows(Xs))

    return rows.map_reduce(part, stacked_pairs, Y, w)


def loo_sample(
    rows: Rows, work: RowWork, Y: Any, w: Any, terms: LooTerms, index: np.ndarray
) -> tuple[Any, ...]:
    """The leave-one-out fitted values of the rows ``index`` (sorted global indices) at
    the one penalty of ``terms``
    (:func:`~kernelmaps.models._ridge._solvers.loo_values`), with their targets,
    weights and rows (:func:`host_rows`), as NumPy arrays in the order of ``index``.

    Each part maps only its rows of ``index`` (features and values where the part is,
    ``terms`` moved there once), so the cost is ``O(len(index) D^2)`` besides reading
    the rows; the same values for the rows in memory, on a device or in Dask chunks.
    """
    held = terms.to_device(rows.xp, rows.device)

    def part(X: Any, y: Any, weights: Any, start: int) -> tuple[Any, ...]:
        Xs, Ys, ws = _picked(work, index, X, y, weights, start)
        values = loo_values(held, map_features(work.feature_map, Xs), Ys, ws)
        return (*_host_numbers(values, Ys, ws), host_rows(Xs))

    return rows.map_reduce(part, stacked_pairs, Y, w)


def host_rows(X: Any) -> Any:
    """A host copy of rows ``X`` (CSR for sparse rows, NumPy otherwise)."""
    return sp.csr_matrix(X, copy=True) if sp.issparse(X) else np.array(to_numpy(X))
