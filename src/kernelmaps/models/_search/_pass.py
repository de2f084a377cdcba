"""The passes of a ridge search over the parts of the training rows.

A search evaluates many feature maps at once, one :class:`Candidate` each (a bandwidth
``gamma``, a fitted map, the numbers of features it serves), on the same rows.  One pass
(:meth:`SearchWork.statistics`) maps every row block through every candidate and adds the
features to the :class:`~kernelmaps.models.RidgeStatistics` of the row's fold; the
statistics of every candidate and fold are merged in the fixed tree of the rows
(``kernelmaps._rows.Rows.map_reduce``), so that a Dask array's chunks are reduced
where they live.  The numbers of features a candidate serves are column subsets of its
output (:class:`Width`): the statistics of the leading features of a map are a block of
its statistics (:meth:`RidgeStatistics.restricted`), so they need no pass of their own.

Two more passes read the rows again when a score needs each row: exact leave-one-out
(:meth:`SearchWork.loo_sums`) and the held-out class predictions of K-fold accuracy
(:meth:`SearchWork.class_counts`).

Folds are given per row (the labels of a scikit-learn splitter, aligned as the targets
are) or computed from the global row index (:func:`hashed_folds`), which does not depend
on how the rows are chunked.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..._array_api import get_namespace, is_numpy, placed, to_namespace, to_numpy
from .._ridge._pass import RowWork, feature_row_blocks, map_features
from .._ridge._solvers import LooTerms, loo_block_sums
from .._ridge_statistics import RidgeStatistics

__all__ = ["Candidate", "SearchWork", "Width", "fold_of_rows", "hashed_folds", "merge_nested"]


@dataclasses.dataclass(frozen=True)
class Width:
    """A number of features a candidate serves: the columns of its output kept, weighted.

    Attributes
    ----------
    n_components : int
    columns : ndarray of int or None
        The output columns that make the features of the smaller map (None: all).
    scale : float
        Their weight (``sqrt(D / D')`` for maps whose features are weighted
        ``1 / sqrt(D)``).
    """

    n_components: int
    columns: np.ndarray | None = None
    scale: float = 1.0

    def select(self, Z: Any) -> Any:
        """The features of this width from the candidate's output ``Z``."""
        if self.columns is None:
            return Z
        xp, device = get_namespace(Z)
        if is_numpy(xp):  # NumPy's fancy indexing, sparse blocks too
            return Z[:, self.columns] * self.scale
        return xp.take(Z, placed(self.columns, xp, device), axis=1) * self.scale


@dataclasses.dataclass(frozen=True)
class Candidate:
    """A fitted feature map of the search and the widths it serves.

    Attributes
    ----------
    gamma : float or None
        The bandwidth the map was fitted with (None: the map has none).
    feature_map : transformer or None
        The fitted map (None: the rows themselves).
    width : int
        Its number of output features.
    widths : tuple of Width
    """

    gamma: float | None
    feature_map: Any
    width: int
    widths: tuple[Width, ...]


def hashed_folds(start: int, n_rows: int, n_folds: int) -> np.ndarray:
    """The folds of the rows ``start .. start + n_rows - 1`` from a hash of their index.

    splitmix64 (Steele, Lea & Flood 2014) of the global row index, modulo ``n_folds``:
    each row's fold depends on its index alone, not on how the rows are chunked.

    Examples
    --------
    >>> from kernelmaps.models._search._pass import hashed_folds
    >>> import numpy as np
    >>> bool(np.array_equal(hashed_folds(3, 4, 5), hashed_folds(0, 7, 5)[3:]))
    True
    """
    return fold_of_rows(np.arange(start, start + n_rows), n_folds)


def fold_of_rows(index: np.ndarray, n_folds: int) -> np.ndarray:
    """The folds of the rows of global indices ``index`` (:func:`hashed_folds`).

    Examples
    --------
    >>> from kernelmaps.models._search._pass import fold_of_rows, hashed_folds
    >>> import numpy as np
    >>> bool(np.array_equal(fold_of_rows(np.array([2, 5]), 3), hashed_folds(0, 6, 3)[[2, 5]]))
    True
    """
    z = np.asarray(index).astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return (z % np.uint64(n_folds)).astype(np.intp)


def merge_nested(a: Any, b: Any) -> Any:
    """Two results of parts merged element by element: statistics by their exact merge,
    arrays added, flags or-ed, lists and tuples element-wise."""
    if isinstance(a, RidgeStatistics):
        return a.merge(b)
    if isinstance(a, (list, tuple)):
        return type(a)(merge_nested(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, bool):
        return a or b
    return a + b


def _take(A: Any, index: np.ndarray) -> Any:
    """The rows ``index`` of ``A`` (NumPy, sparse, or an array of another library)."""
    xp, device = get_namespace(A)
    if is_numpy(xp):  # NumPy's fancy indexing, sparse blocks too
        return A[index]
    return xp.take(A, placed(index, xp, device), axis=0)


@dataclasses.dataclass(frozen=True)
class SearchWork:
    """What a part of the rows needs of a search (a small object, sent to workers).

    Attributes
    ----------
    row_work : RowWork
        The rows' targets and checks (its map is not used).
    candidates : tuple of Candidate
    n_folds : int
        1: every row in one group (the criteria of one fit).
    hashed : bool
        Folds from the global row index (:func:`hashed_folds`) instead of given labels.
    features : dict or None
        Where the statistics pass leaves the features of each block and candidate for
        the pass that reads the rows again (leave-one-out, held-out predictions), which
        takes them instead of mapping the rows again; None: every pass maps the rows.
        Only for rows worked on in this process.
    """

    row_work: RowWork
    candidates: tuple[Candidate, ...]
    n_folds: int
    hashed: bool = False
    features: dict[tuple[int, int], Any] | None = None

    def _features(self, c: int, Xb: Any, block: int, *, keep: bool = False) -> Any:
        """The features of candidate ``c`` on the block ``Xb`` starting at row ``block``:
        those the statistics pass kept, or mapped (and kept when ``keep``)."""
        key = (block, c)
        if self.features is not None and not keep and key in self.features:
            return self.features.pop(key)
        Z = map_features(self.candidates[c].feature_map, Xb)
        if self.features is not None and keep:
            self.features[key] = Z
        return Z

    def _blocks(self, X: Any, y: Any, w: Any, folds: Any, start: int) -> Iterator[Any]:
        """``(X_b, Y_b, w_b, folds_b, first row)`` over the row blocks of a part."""
        X, Y, w = self.row_work.rows(X, y, w, start)
        n, d = X.shape
        if self.n_folds == 1:
            labels = np.zeros(n, dtype=np.intp)
        elif self.hashed:
            labels = hashed_folds(start, n, self.n_folds)
        else:
            labels = np.asarray(to_numpy(folds))
        width = max(c.width for c in self.candidates)
        for rows in feature_row_blocks(n, d, width, self.row_work.n_targets):
            yield X[rows, ...], Y[rows, ...], w[rows], labels[rows], start + rows.start
            self.row_work._done(rows.stop - rows.start)

    def _by_fold(self, labels: np.ndarray) -> Iterator[tuple[int, np.ndarray | None]]:
        """``(k, rows of fold k)`` for the folds present (None: the whole block)."""
        if self.n_folds == 1:
            yield 0, None
            return
        for k in np.unique(labels):
            yield int(k), np.flatnonzero(labels == k)

    def statistics(self, X: Any, y: Any, w: Any, folds: Any, start: int) -> Any:
        """``([[stats of candidate c, fold k]], any nonzero weight)`` of a part."""
        xp, device = get_namespace(X)
        t, centre = self.row_work.n_targets, self.row_work.centre
        stats = [
            [
                RidgeStatistics(c.width, t, centre=centre, xp=xp, device=device)
                for _ in range(self.n_folds)
            ]
            for c in self.candidates
        ]
        nonzero = False
        for Xb, Yb, wb, labels, block in self._blocks(X, y, w, folds, start):
            nonzero = nonzero or bool(xp.any(wb != 0))
            for c in range(len(self.candidates)):
                Z = self._features(c, Xb, block, keep=True)
                for k, index in self._by_fold(labels):
                    if index is None:
                        stats[c][k].update(Z, Yb, wb)
                    else:
                        stats[c][k].update(_take(Z, index), _take(Yb, index), _take(wb, index))
        return stats, nonzero

    def loo_sums(
        self, X: Any, y: Any, w: Any, folds: Any, start: int, *, terms: Any, per_target: bool
    ) -> list[list[Any]]:
        """Leave-one-out partial sums, ``[[sums of candidate c, width j]]``, of a part;
        ``terms[c][j]`` the :class:`LooTerms` of that width (where the rows are); the
        targets apart with ``per_target`` (:func:`loo_block_sums`)."""
        totals: list[list[Any]] = [[0.0 for _ in c.widths] for c in self.candidates]
        for Xb, Yb, wb, _, block in self._blocks(X, y, w, folds, start):
            for c, candidate in enumerate(self.candidates):
                Z = self._features(c, Xb, block)
                for j, width in enumerate(candidate.widths):
                    held: LooTerms = terms[c][j]
                    sums = loo_block_sums(held, width.select(Z), Yb, wb, per_target)
                    totals[c][j] = totals[c][j] + sums
        return totals

    def class_counts(
        self, X: Any, y: Any, w: Any, folds: Any, start: int, *, weights: Any
    ) -> list[list[np.ndarray]]:
        """Held-out class counts, ``[[counts of candidate c, width j]]`` of a part.

        ``weights[c][j][k]`` is ``(W, b)`` of
        :func:`~kernelmaps.models._ridge._path.fold_weights` for split ``k``; the counts are
        an array of shape ``(n_folds, n_alphas + 1, n_classes)``: the weight of the rows of
        each class predicted right for each penalty, then the weight of the rows of each
        class.
        """
        n_classes = max(self.row_work.n_targets, 2)
        counts: list[list[Any]] = [[0.0 for _ in c.widths] for c in self.candidates]
        for Xb, Yb, wb, labels, block in self._blocks(X, y, w, folds, start):
            truth = _class_index(to_numpy(Yb))
            w_host = np.asarray(to_numpy(wb), dtype=np.float64)
            for c, candidate in enumerate(self.candidates):
                Z = self._features(c, Xb, block)
                for j, width in enumerate(candidate.widths):
                    part = _held_out_counts(
                        width.select(Z), truth, w_host, labels, weights[c][j], n_classes
                    )
                    counts[c][j] = counts[c][j] + part
        return counts


def _class_index(Y: np.ndarray) -> np.ndarray:
    """The class of each row from its {-1, 1} encoding (one column for two classes)."""
    if Y.shape[1] == 1:
        return (Y[:, 0] > 0).astype(np.intp)
    return np.argmax(Y, axis=1)


def _held_out_counts(
    Z: Any,
    truth: np.ndarray,
    w: np.ndarray,
    labels: np.ndarray,
    fold_weights: list[tuple[np.ndarray, np.ndarray]],
    n_classes: int,
) -> np.ndarray:
    """The counts of :meth:`SearchWork.class_counts` for one block and width."""
    n_folds = len(fold_weights)
    n_alphas = fold_weights[0][1].shape[0] // (1 if n_classes == 2 else n_classes)
    out = np.zeros((n_folds, n_alphas + 1, n_classes))
    onehot = np.zeros((truth.shape[0], n_classes))
    onehot[np.arange(truth.shape[0]), truth] = w
    for k in range(n_folds):
        index = np.flatnonzero(labels == k) if n_folds > 1 else np.arange(truth.shape[0])
        if index.size == 0:
            continue
        W, b = fold_weights[k]
        Zk = _take(Z, index)
        xp, device = get_namespace(Zk)
        if not is_numpy(xp):  # the scores on the device, in its dtype
            Wd = to_namespace(W, xp, device, dtype=Zk.dtype)
            scores = to_numpy(Zk @ Wd).astype(np.float64) + b
        elif sp.issparse(Zk):
            scores = np.asarray(Zk @ W) + b
        else:
            scores = Zk @ W + b
        scores = scores.reshape(index.size, n_alphas, -1)
        predicted = (scores[:, :, 0] > 0).astype(np.intp) if scores.shape[2] == 1 else None
        if predicted is None:
            predicted = np.argmax(scores, axis=2)
        right = predicted == truth[index, None]  # (rows, n_alphas)
        out[k, :n_alphas] = right.T.astype(np.float64) @ onehot[index]
        out[k, n_alphas] = onehot[index].sum(axis=0)
    return out
