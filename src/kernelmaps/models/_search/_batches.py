"""The search over bandwidths, penalties and numbers of features, pass by pass.

:class:`RidgeSearch` evaluates a batch of bandwidths in one pass over the rows
(:mod:`._pass`), then scores every number of features and every penalty of each
from the statistics (:mod:`.._ridge._path`): the criteria of one fit (GCV, the evidence,
exact leave-one-out with one more pass) or exact K-fold (the squared-error scorings from
the statistics of the folds; accuracy with one more pass).  It keeps one row of results
per candidate ``(gamma, n_components, alpha)`` and the statistics of the best one, from
which the final model is solved without another pass.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn import config_context
from sklearn.base import clone

from ..._array_api import is_numpy, to_numpy
from ..._memory import available_memory
from ..._progress import Progress, counted_pass
from ..._rows import Rows
from .._checks import check_statistics
from .._ridge._pass import ZERO_WEIGHTS, feature_width, map_features
from .._ridge._path import (
    REGRESSION_SCORINGS,
    FoldErrors,
    auto_alphas,
    fold_squared_errors,
    fold_weights,
    log_evidence,
    merge_all,
    regression_scores,
    train_statistics,
)
from .._ridge._solvers import eigen_ridge, gcv_errors, loo_combine, loo_terms
from .._ridge_statistics import RidgeStatistics
from ._pass import Candidate, SearchWork, Width, merge_nested

__all__ = ["Best", "RidgeSearch", "SearchSpec"]

#: The K-fold scorings counted from held-out predictions (a second pass over the rows).
_COUNTED = ("accuracy", "balanced_accuracy")


@dataclasses.dataclass(frozen=True)
class SearchSpec:
    """What a search evaluates and how it scores.

    Attributes
    ----------
    base_map : transformer or None
        The unfitted map (None: the rows themselves); every candidate is a clone.
    grid : tuple of int or None
        The numbers of features (None: the map's own).
    alphas : ndarray or None
        The penalties (None: ``"auto"``, relative to each candidate's Gram matrix).
    n_splits : int
        0: the criterion of one fit; else the number of K-fold splits.
    criterion : str
        ``"gcv"``, ``"loo"`` or ``"evidence"`` (``n_splits == 0``).
    scoring : str
        The K-fold score (``n_splits > 0``); with ``n_splits == 0``, the criterion, or
        a regression scoring of the leave-one-out predictions (criterion ``"loo"``).
    fit_intercept : bool
    """

    base_map: Any
    grid: tuple[int, ...] | None
    alphas: np.ndarray | None
    n_splits: int
    criterion: str
    scoring: str
    fit_intercept: bool


@dataclasses.dataclass
class Best:
    """The best candidate so far: its score, parameters, map and statistics."""

    score: float
    index: int
    gamma: float | None
    alpha: float
    width: int
    feature_map: Any
    statistics: RidgeStatistics
    #: K-fold: the statistics of each group of rows (a fold, or the rows in no test set)
    folds: list[RidgeStatistics] | None = None


class RidgeSearch:
    """Bandwidth batches evaluated on ``rows``; the results of every candidate.

    Parameters
    ----------
    spec : SearchSpec
    rows : Rows
    work : SearchWork
        Without candidates (set per batch).
    Y, w, folds
        The aligned targets, weights and fold labels of the pass.
    progress : Progress
    largest_weight : float or None
        For the messages of the overflow checks (:func:`~._checks.check_statistics`).
    """

    def __init__(
        self,
        spec: SearchSpec,
        rows: Rows,
        work: SearchWork,
        aligned: tuple,
        progress: Progress,
        largest_weight: float | None = None,
    ) -> None:
        self.spec, self.rows, self.work, self.aligned = spec, rows, work, aligned
        self.progress, self.largest_weight = progress, largest_weight
        self.results: list[dict[str, Any]] = []
        self.best: Best | None = None
        self.gamma_scores: dict[float | None, float] = {}
        # the maps fitted once per number of features (see _fitted), and the candidates
        # made before their bandwidth is evaluated
        self._shared: dict[int | None, Any] = {}
        self._ready: dict[float | None, list[Candidate]] = {}
        self._features: dict | None = None  # of the statistics pass, for the next pass
        #: What the names of the passes add (a rung of successive halving: its fidelity).
        self.stage = ""

    # -- candidates -------------------------------------------------------------------

    def _fitted(self, gamma: float | None, n_components: int | None) -> Any:
        """A clone of the map with ``gamma`` and ``n_components`` set, fitted.

        A map whose fitted state does not depend on its kernel parameters
        (``_kernel_free_state()``: Nyström's uniform, k-means or given landmarks) is
        fitted once per number of features; the other bandwidths refit only their
        kernel part on its state (``_with_kernel_params(gamma=...)``), which the same
        ``random_state`` would have drawn again.
        """
        shared = self._shared.get(n_components)
        if shared is not None and gamma is not None:
            return shared._with_kernel_params(gamma=gamma)
        feature_map = clone(self.spec.base_map)
        params: dict[str, Any] = {}
        if gamma is not None:
            params["gamma"] = gamma
        if n_components is not None:
            params["n_components"] = n_components
        feature_map.set_params(**params)
        start = time.perf_counter()
        with config_context(assume_finite=True):
            feature_map.fit(self.rows.X)
        if gamma is not None and getattr(feature_map, "_kernel_free_state", _never)():
            self._shared[n_components] = feature_map
            self.progress.log(
                f"{type(feature_map).__name__}: fitted once in "
                f"{time.perf_counter() - start:.2f} s (its state does not depend on gamma; "
                "every other gamma refits the kernel part only)"
            )
        return feature_map

    def _width(self, feature_map: Any) -> int:
        if feature_map is None:
            return self.rows.n_features
        width = feature_width(feature_map)
        if width is None:
            (probe,) = self.rows.read([np.arange(1)])
            width = int(map_features(feature_map, probe).shape[1])
        return int(width)

    def candidates(self, gamma: float | None) -> list[Candidate]:
        """The fitted maps of one bandwidth: the largest map serving every number of
        features it nests (:meth:`RandomFourierFeatures._leading`), one map per other;
        kept until the bandwidth is evaluated (the first serves :meth:`batch_size`)."""
        if gamma not in self._ready:
            self._ready[gamma] = self._candidates(gamma)
        return self._ready[gamma]

    def _candidates(self, gamma: float | None) -> list[Candidate]:
        spec = self.spec
        if spec.base_map is None:
            return [Candidate(gamma, None, self.rows.n_features, (Width(self.rows.n_features),))]
        if spec.grid is None:
            fitted = self._fitted(gamma, None)
            width = self._width(fitted)
            return [Candidate(gamma, fitted, width, (Width(width),))]
        largest = self._fitted(gamma, max(spec.grid))
        nested, alone = [], []
        top = max(spec.grid)
        for D in spec.grid:
            leading = getattr(largest, "_leading", lambda D: None)(D)
            if top == D:
                nested.append(Width(D))
            elif leading is not None:
                nested.append(Width(D, leading[0], leading[1]))
            else:
                alone.append(D)
        out = [Candidate(gamma, largest, max(spec.grid), tuple(nested))]
        for D in alone:
            fitted = self._fitted(gamma, D)
            out.append(Candidate(gamma, fitted, self._width(fitted), (Width(D),)))
        return out

    def batch_size(self, candidates: Sequence[Candidate]) -> int:
        """How many bandwidths one pass holds in half the available memory: per
        bandwidth, the statistics of every candidate map and fold (``D^2`` each), and
        while scoring, those of every smaller width and fold (a block copied), its
        eigenvectors and the merges (``3 D'^2``)."""
        groups = self.work.n_folds
        maps = sum(float(c.width) ** 2 for c in candidates)
        widths = sum(float(w.n_components) ** 2 for c in candidates for w in c.widths)
        per_gamma = 8.0 * (groups * maps + (groups + 3) * widths)
        available = available_memory()
        if available is None:
            return 8
        return max(1, int(0.5 * available // max(per_gamma, 1.0)))

    # -- one batch ----------------------------------------------------------------------

    def _work(self, candidates: list[Candidate], done: Any, features: Any = None) -> SearchWork:
        """The pass's work on ``candidates``, reporting its rows to ``done``, keeping or
        taking the features of the rows in ``features``."""
        row_work = dataclasses.replace(self.work.row_work, progress=done)
        return dataclasses.replace(
            self.work, row_work=row_work, candidates=tuple(candidates), features=features
        )

    def _kept_features(self, candidates: Sequence[Candidate]) -> dict | None:
        """An empty store for the features of the statistics pass where a second pass
        reads them (exact leave-one-out, K-fold accuracy), the rows are NumPy rows of
        this process and the features (float64 at most) take at most a quarter of the
        available memory; else None (the second pass maps the rows again)."""
        spec, rows = self.spec, self.rows
        second = spec.criterion == "loo" if spec.n_splits == 0 else spec.scoring in _COUNTED
        if not second or not rows.local or not is_numpy(rows.xp) or rows.sparse:
            return None
        size = 8.0 * rows.n_rows * sum(c.width for c in candidates)
        available = available_memory()
        return {} if available is not None and size <= 0.25 * available else None

    def evaluate(self, gammas: Sequence[float | None]) -> dict[float | None, float]:
        """Evaluate the bandwidths ``gammas`` in one pass (plus the pass of a score that
        needs the rows); returns the best score of each."""
        start = time.perf_counter()
        candidates = [c for gamma in gammas for c in self.candidates(gamma)]
        for gamma in gammas:
            self._ready.pop(gamma, None)
        widths = sum(len(c.widths) for c in candidates)
        self.progress.log(
            f"gamma batch {', '.join(_short(g) for g in gammas)}: "
            f"{len(candidates)} map{'s' if len(candidates) > 1 else ''}, "
            f"{widths} number{'s' if widths > 1 else ''} of features, "
            f"maps fitted in {time.perf_counter() - start:.2f} s"
        )
        self._features = self._kept_features(candidates)
        with counted_pass(self.progress, f"statistics{self.stage}", self.rows) as done:
            work = self._work(candidates, done, self._features)
            stats, nonzero = self.rows.map_reduce(work.statistics, merge_nested, *self.aligned)
        if not nonzero:
            raise ValueError(ZERO_WEIGHTS)
        stats = [[s.to_host() for s in folds] for folds in stats]
        name = self.work.row_work.estimator_name
        for folds in stats:  # sums that overflowed: the message with the fix, before scoring
            for s in folds:
                check_statistics(name, s, largest_weight=self.largest_weight)
        del work
        try:
            scored = self._score(candidates, stats)
        finally:
            self._features = None
        best: dict[float | None, float] = {}
        for gamma, score in scored:
            best[gamma] = max(best.get(gamma, -np.inf), score)
        self.gamma_scores.update(best)
        if self.best is not None:
            b = self.best
            self.progress.log(
                f"best so far: gamma = {_short(b.gamma)}, alpha = {b.alpha:.3g}, "
                f"n_components = {b.width}, score = {b.score:.6g}; batch in "
                f"{time.perf_counter() - start:.2f} s"
            )
        return best

    def _score(
        self, candidates: list[Candidate], stats: list[list[RidgeStatistics]]
    ) -> list[tuple[float | None, float]]:
        """Score every width and penalty of every candidate; keep their result rows.
        A problem is ``(candidate, width, statistics of each fold, of all the rows)``."""
        problems = []
        for i, c in enumerate(candidates):
            for width in c.widths:
                folds = [
                    s.restricted(width.columns, width.scale) if width.columns is not None else s
                    for s in stats[i]
                ]
                problems.append((c, width, folds, merge_all(folds)))
        if self.spec.n_splits == 0:
            split_scores = self._criterion_scores(candidates, problems)
        else:
            split_scores = self._kfold_scores(candidates, problems)
        out = []
        for (candidate, width, folds, total), (alphas, scores) in zip(
            problems, split_scores, strict=True
        ):
            out.append((candidate.gamma, float(np.max(np.mean(scores, axis=0)))))
            self._record(candidate, width, (total, folds), alphas, scores)
        return out

    def _alphas(self, total: RidgeStatistics, eig: Any = None) -> np.ndarray:
        """The penalties of a candidate (``"auto"``: relative to its largest eigenvalue,
        from ``eig`` when it is at hand)."""
        if self.spec.alphas is not None:
            return self.spec.alphas
        if eig is not None:
            return auto_alphas(total, self.spec.fit_intercept, float(eig.evals[-1]))
        return auto_alphas(total, self.spec.fit_intercept)

    def _criterion_scores(
        self, candidates: list[Candidate], problems: list[Any]
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """``(alphas, scores of shape (1, n_alphas))`` of each problem by the criterion."""
        spec, fit_intercept = self.spec, self.spec.fit_intercept
        out, loo = [], []
        for _, _, _, total in problems:
            eig = eigen_ridge(total, fit_intercept)
            alphas = self._alphas(total, eig)
            if spec.criterion == "gcv":
                scores = -gcv_errors(total, eig, alphas, fit_intercept)
            elif spec.criterion == "evidence":
                scores = log_evidence(total, eig, alphas, fit_intercept)
            else:
                scores = np.zeros(alphas.shape[0])
                loo.append(loo_terms(total, eig, alphas, fit_intercept))
            out.append((alphas, scores[None, :]))
        if spec.criterion == "loo" and spec.scoring in REGRESSION_SCORINGS:
            sums = self._loo_pass(candidates, loo, per_target=True)
            return [
                (alphas, _loo_scores(problem[3], sse, spec.scoring))
                for (alphas, _), problem, sse in zip(out, problems, sums, strict=True)
            ]
        if spec.criterion == "loo":
            errors = self._loo_pass(candidates, loo)
            out = [(alphas, -e[None, :]) for (alphas, _), e in zip(out, errors, strict=True)]
        return out

    def _loo_pass(
        self, candidates: list[Candidate], flat: list[Any], per_target: bool = False
    ) -> list[np.ndarray]:
        """The leave-one-out errors of every problem, in one more pass (``per_target``:
        the sums ``sum_i s_i r_i^2`` of each target, shape (n_alphas, t))."""
        terms, it = [], iter(flat)
        for c in candidates:
            terms.append([next(it) for _ in c.widths])
        held = [[t.to_device(self.rows.xp, self.rows.device) for t in ts] for ts in terms]
        with counted_pass(self.progress, f"leave-one-out{self.stage}", self.rows) as done:
            work = self._work(candidates, done, self._features)
            sums = self.rows.map_reduce(
                functools.partial(work.loo_sums, terms=held, per_target=per_target),
                merge_nested,
                *self.aligned,
            )
        if per_target:
            return [np.asarray(to_numpy(s), dtype=np.float64) for ss in sums for s in ss]
        return [
            loo_combine(t, np.asarray(to_numpy(s), dtype=np.float64))
            for ts, ss in zip(terms, sums, strict=True)
            for t, s in zip(ts, ss, strict=True)
        ]

    def _kfold_scores(
        self, candidates: list[Candidate], problems: list[Any]
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """``(alphas, scores of shape (n_splits, n_alphas))`` of each problem by K-fold."""
        spec, fit_intercept = self.spec, self.spec.fit_intercept
        out, weights = [], []
        for _, _, folds, total in problems:
            if any(s.weight_sum <= 0 for s in folds[: spec.n_splits]):
                raise ValueError(
                    "cv: a fold has no rows of positive weight; give fewer splits or more rows."
                )
            alphas = self._alphas(total)
            trains = [train_statistics(folds, k) for k in range(spec.n_splits)]
            if spec.scoring in _COUNTED:
                weights.append([fold_weights(t, alphas, fit_intercept) for t in trains])
                out.append((alphas, np.zeros((spec.n_splits, alphas.shape[0]))))
                continue
            scores = [
                regression_scores(
                    fold_squared_errors(t, folds[k], alphas, fit_intercept), spec.scoring
                )
                for k, t in enumerate(trains)
            ]
            out.append((alphas, np.array(scores)))
        if weights:
            counts = self._class_pass(candidates, weights)
            out = [
                (a, _class_scores(n, spec.scoring)) for (a, _), n in zip(out, counts, strict=True)
            ]
        return out

    def _class_pass(self, candidates: list[Candidate], flat: list[Any]) -> list[np.ndarray]:
        """The held-out class counts of every problem, in one more pass."""
        it = iter(flat)
        weights = [[next(it) for _ in c.widths] for c in candidates]
        with counted_pass(self.progress, f"held-out predictions{self.stage}", self.rows) as done:
            work = self._work(candidates, done, self._features)
            counts = self.rows.map_reduce(
                functools.partial(work.class_counts, weights=weights), merge_nested, *self.aligned
            )
        return [np.asarray(n)[: self.spec.n_splits] for ns in counts for n in ns]

    # -- results ------------------------------------------------------------------------

    def _record(
        self,
        candidate: Candidate,
        width: Width,
        statistics: tuple[RidgeStatistics, list[RidgeStatistics]],
        alphas: np.ndarray,
        scores: np.ndarray,
    ) -> None:
        """Append a result row per penalty; keep the statistics of a new best (of all
        its rows, and of each group of rows for K-fold)."""
        total, folds = statistics
        means = np.mean(scores, axis=0)
        for j, alpha in enumerate(alphas):
            self.results.append(
                {
                    "gamma": candidate.gamma,
                    "n_components": width.n_components,
                    "alpha": float(alpha),
                    "splits": scores[:, j],
                }
            )
        j = int(np.argmax(np.where(np.isfinite(means), means, -np.inf)))
        if not np.isfinite(means[j]):
            return
        if self.best is None or means[j] > self.best.score:
            self.best = Best(
                float(means[j]),
                len(self.results) - len(alphas) + j,
                candidate.gamma,
                float(alphas[j]),
                width.n_components,
                _final_map(candidate, width),
                total,
                folds if self.spec.n_splits else None,
            )


def _loo_scores(total: RidgeStatistics, sse: np.ndarray, scoring: str) -> np.ndarray:
    """The scores ``(1, n_alphas)`` of the leave-one-out predictions by a regression
    scoring, from their squared errors ``sse`` ``(n_alphas, t)`` and the statistics of all
    the rows (:func:`regression_scores`: ``1 - SSE / SST``, ``-SSE / S_w``, ...)."""
    errors = FoldErrors(sse, total.centred()[2], float(total.weight_sum))
    return regression_scores(errors, scoring)[None, :]


def _final_map(candidate: Candidate, width: Width) -> Any:
    """The fitted map of ``width``: the candidate's, or the smaller map it nests."""
    if width.columns is None:
        return candidate.feature_map
    return candidate.feature_map._leading(width.n_components)[2]


def _class_scores(counts: np.ndarray, scoring: str) -> np.ndarray:
    """Accuracy or balanced accuracy ``(n_splits, n_alphas)`` from the class counts."""
    right, total = counts[:, :-1, :], counts[:, -1:, :]
    if scoring == "accuracy":
        return right.sum(axis=2) / np.maximum(total.sum(axis=2), 1e-300)
    present = total > 0
    recall = np.divide(right, total, out=np.zeros_like(right), where=present)
    return recall.sum(axis=2) / np.maximum(present.sum(axis=2), 1)


def _never() -> bool:
    return False


def _short(gamma: float | None) -> str:
    return "-" if gamma is None else f"{gamma:.3g}"
