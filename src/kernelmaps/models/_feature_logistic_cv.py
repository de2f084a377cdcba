"""Logistic regression on a feature map with the bandwidth, ``C`` and the number of
features chosen by exact K-fold log-loss.

:class:`FeatureLogisticRegressionCV` computes the features of every bandwidth and number
of features once, fits :class:`FeatureLogisticRegression` on them per fold (the held-out
rows weighted zero) along the increasing ``Cs``, each fit warm-started from the previous
``C``'s, and refits the best candidate on every row.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import TYPE_CHECKING, Any, ClassVar, cast

import numpy as np
from sklearn.base import ClassifierMixin, clone
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions

from .._array_api import to_numpy
from .._array_types import is_dask_array
from .._progress import Progress
from .._rows import Rows, as_rows, pick_rows
from .._validation import StrictInterval
from ._base import classification_rows
from ._feature_logistic import FeatureLogisticRegression
from ._feature_ridge_cv import _RidgeSearchCV
from ._ridge._pass import checked_weights, map_features
from ._search._halving import Rung, log_rung, promoted, rung_plan, rung_rows
from ._search._results import cv_results

if TYPE_CHECKING:
    from ._search._batches import RidgeSearch

__all__ = ["FeatureLogisticRegressionCV"]


class FeatureLogisticRegressionCV(ClassifierMixin, _RidgeSearchCV):
    r"""Logistic regression on a feature map with ``gamma``, ``C`` and ``n_components``
    chosen by exact K-fold log-loss.

    Every candidate ``(gamma, D, C)`` is the model of :class:`FeatureLogisticRegression`
    (scikit-learn's ``LogisticRegression`` objective, penalty ``"l2"``)

    .. math::

        \min_{W, b} \; \frac{1}{2} \|W\|_F^2 + C \sum_i s_i \, l_i(W z(x_i) + b),

    and the score of split ``k`` is minus the weighted log-loss of its held-out rows
    ``T_k`` under the exact minimizer on the other rows:

    .. math::

        \mathrm{score}_k = \frac{\sum_{i \in T_k} s_i \log p_{\hat W_{-k}}(y_i \mid x_i)}
        {\sum_{i \in T_k} s_i}.

    The search, for every bandwidth ``gamma`` and number of features ``D`` (a clone of
    the map fitted once on every row with ``set_params(gamma=..., n_components=...)``):

    * the features ``z(x_i)`` of every row are computed once;
    * for every split, the fit on the other folds is the fit on every row with the
      held-out rows weighted zero (the same objective), along ``Cs`` in increasing
      order, each fit warm-started from the previous ``C``'s solution;
    * one prediction pass over the rows scores the held-out rows of that fit.

    The best candidate (largest mean score) is refitted on every row:
    ``best_estimator_``, a :class:`FeatureLogisticRegression`.

    Parameters
    ----------
    feature_map : transformer, "passthrough" or None, default=None
        As :class:`FeatureRidgeCV`'s; a map whose ``random_state`` is None or a generator
        is given one integer seed per search, so that every candidate and the final
        model draw the same features.
    Cs : int or array-like, default=10
        The values of ``C``; an int ``m``: ``np.logspace(-4, 4, m)``, as scikit-learn's
        ``LogisticRegressionCV``.
    gammas : "auto", array-like or None, default=None
        The bandwidths; None (or a map without ``gamma``): the map's own; ``"auto"``:
        nine, two decades either side of the data's bandwidth rule
        (:func:`kernelmaps.bandwidth.gamma_from_data`), with no refinement.  Every
        bandwidth costs ``n_splits x len(Cs)`` fits, so the default searches ``C`` only
        (the cost of scikit-learn's ``LogisticRegressionCV``: 10 values of ``C`` on 5
        folds); :class:`FeatureRidgeClassifierCV`, whose bandwidths cost one pass over
        the rows each, is the cheap way to choose ``gamma``.
    n_components_grid : array-like of int or None, default=None
        The numbers of features; None: the map's ``n_components``.
    search : {"halving", "exhaustive"}, default="halving"
        With more than one bandwidth: successive halving (:class:`FeatureRidgeCV`'s
        rungs: every bandwidth on a uniform sample of the rows with fewer features, the
        best third on more, the best one on every row with every number of features
        and every ``C``), or every bandwidth on every row.  ``cv_results_`` then also
        has ``rung``, ``param_n_rows`` and ``fidelity``, and the best is of the last
        rung.
    cv : int, cross-validation generator or iterable, default=5
        The splits (an int: ``StratifiedKFold(cv)``); test sets must not overlap, rows in
        no test set are always trained on.  A Dask array's labels are gathered to the
        host (one vector) to make the splits.
    fit_intercept, class_weight, tol, max_iter, cache_size
        As :class:`FeatureLogisticRegression`'s, for every fit.
    random_state : int, Generator, SeedSequence, RandomState or None, default=None
        Seed of the default map and of the map's draws in the search.
    verbose : int, default=0
        Passed to every fit.

    Attributes
    ----------
    best_estimator_ : FeatureLogisticRegression
    best_params_ : dict
        ``{"gamma", "C", "n_components"}`` of the best candidate (no ``gamma`` for a map
        without one).
    best_score_ : float
        Its mean score, minus the log-loss.
    best_index_ : int
    cv_results_ : dict of ndarray
        As GridSearchCV's: ``param_gamma``, ``param_C``, ``param_n_components``,
        ``params``, ``split{k}_test_score``, ``mean_test_score``, ``std_test_score``,
        ``rank_test_score``.
    C_, gamma_, n_components_ : float, float, int
        The best candidate's parameters (``gamma_`` None for a map without one).
    classes_, feature_map_, coef_, intercept_, n_iter_
        The final model's.
    n_splits_ : int
    scoring_ : str
        ``"neg_log_loss"``.
    n_features_in_ : int
    feature_names_in_ : ndarray of str

    Notes
    -----
    Exactness.  Each split's model is the minimizer of the objective on the other folds'
    rows (to the solver's ``tol``): a zero weight removes a row from the objective.  The
    scores therefore equal those of ``LogisticRegression`` fitted on the same features of
    the training folds, to the solvers' tolerance.  A map fitted on the data (Nyström
    landmarks) is fitted once on every row, which lets the held-out rows shape the
    features a little.

    Cost.  Per bandwidth and number of features ``D``: one map fit and one computation of
    the features (held in memory: ``n D`` numbers, a persisted Dask array for Dask rows),
    then ``n_splits x n_Cs`` Newton fits of :class:`FeatureLogisticRegression` on them,
    each warm-started from the previous ``C`` (a few passes of ``O(n D K)`` each), and one
    prediction pass per fit; then one fit on every row for the best candidate.  The
    ``"auto"`` bandwidths are not refined (each bandwidth costs ``n_splits x n_Cs``
    fits, not one pass as in :class:`FeatureRidgeClassifierCV`).

    References
    ----------
    Böhning, D. (1992). Multinomial logistic regression algorithm. Annals of the Institute
    of Statistical Mathematics 44(1), 197-200.
    Lin, C.-J., Weng, R. C. and Keerthi, S. S. (2008). Trust region Newton method for
    large-scale logistic regression. JMLR 9, 627-650.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from kernelmaps import FeatureLogisticRegressionCV, RandomFourierFeatures
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = FeatureLogisticRegressionCV(RandomFourierFeatures(n_components=64, random_state=0),
    ...                                   Cs=[0.1, 1.0, 10.0], gammas=[0.1, 1.0], cv=3).fit(X, y)
    >>> sorted(clf.best_params_)
    ['C', 'gamma', 'n_components']
    >>> clf.predict_proba(X[:2]).shape
    (2, 3)
    """

    _parameter_constraints: ClassVar[dict[str, list[Any] | str]] = {
        "feature_map": [HasMethods(["fit", "transform"]), StrOptions({"passthrough"}), None],
        "Cs": [StrictInterval(Integral, 1, None, closed="left"), "array-like"],
        "gammas": [StrOptions({"auto"}), "array-like", None],
        "n_components_grid": ["array-like", None],
        "search": [StrOptions({"halving", "exhaustive"})],
        "cv": ["cv_object"],
        "fit_intercept": ["boolean"],
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "tol": [Interval(Real, 0.0, None, closed="left")],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "cache_size": [Interval(Real, 0.0, None, closed="left")],
        "random_state": ["random_state", np.random.Generator, np.random.SeedSequence],
        "verbose": [Interval(Integral, 0, None, closed="left"), "boolean"],
    }

    def __init__(
        self,
        feature_map: Any = None,
        *,
        Cs: Any = 10,
        gammas: Any = None,
        n_components_grid: Any = None,
        search: str = "halving",
        cv: Any = 5,
        fit_intercept: bool = True,
        class_weight: Any = None,
        tol: float = 1e-4,
        max_iter: int = 100,
        cache_size: float = 1024,
        random_state: Any = None,
        verbose: int = 0,
    ) -> None:
        self.feature_map = feature_map
        self.Cs = Cs
        self.gammas = gammas
        self.n_components_grid = n_components_grid
        self.search = search
        self.cv = cv
        self.fit_intercept = fit_intercept
        self.class_weight = class_weight
        self.tol = tol
        self.max_iter = max_iter
        self.cache_size = cache_size
        self.random_state = random_state
        self.verbose = verbose

    def fit(
        self, X: Any, y: Any, sample_weight: Any = None, groups: Any = None
    ) -> FeatureLogisticRegressionCV:
        """Score every candidate by exact K-fold log-loss, then refit the best on every
        row.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features)
        y : array-like or dask array of shape (n_samples,)
        sample_weight : array-like or dask array of shape (n_samples,), default=None
        groups : array-like of shape (n_samples,), default=None
            Group labels for a group splitter (``cv=GroupKFold(5)``).

        Returns
        -------
        self : FeatureLogisticRegressionCV
        """
        self._validate_params()
        rows, y = classification_rows(self, X, y, reset=True)
        if rows.n_rows < 2:
            raise ValueError(
                f"{type(self).__name__} needs at least 2 rows to choose its parameters; got "
                f"n_samples={rows.n_rows}."
            )
        base = self._seeded(self._base_map())
        Cs = self._Cs()
        n_splits, labels = self._split(rows, y, groups)
        w = checked_weights(rows, sample_weight)[0]
        X_rows = rows.array() if rows.in_memory else X
        results = self._run_rungs(rows, base, (X_rows, y, w, labels), (n_splits, Cs))
        self._finish_search(results, n_splits, base, X, y, sample_weight)
        return self

    def _run_rungs(self, rows: Rows, base: Any, data: tuple, splits: tuple) -> list[dict[str, Any]]:
        """The result rows of every rung (:meth:`_rungs`): each scores its bandwidths on
        its rows of ``data = (X, y, w, labels)`` and keeps the best for the next."""
        gammas = self._gamma_grid(rows, base)[0]
        rungs = self._rungs(rows.n_rows, base, len(gammas))
        results: list[dict[str, Any]] = []
        for r, rung in enumerate(rungs):
            last = r == len(rungs) - 1
            index = None if last else rung_rows(rows.n_rows, rung)
            widths = (self._grid(base) or (None,)) if last else (rung.n_components,)
            found = self._score_rung(gammas, widths, _subset(data, index), splits, base)
            results += found
            if len(rungs) == 1:
                break
            share = rung.fidelity(rows.n_rows, rungs[-1].n_components)
            for row in found:
                row.update(rung=r, n_rows=rung.n_rows, fidelity=share)
            if not last:
                scores = _gamma_scores(found)
                gammas = promoted(scores, r == len(rungs) - 2)
                progress = Progress(type(self).__name__, int(self.verbose))
                log_rung(progress, (r, len(rungs)), (rung, share), scores, gammas)
        return results

    def _rungs(self, n_rows: int, base: Any, n_gammas: int) -> list[Rung]:
        """The fidelities of the search: successive halving's rungs
        (:func:`~._search._halving.rung_plan`) for more than one bandwidth, else the
        full size alone."""
        width = None
        if base is not None and "n_components" in base.get_params():
            width = max(self._grid(base) or (int(base.get_params()["n_components"]),))
        if self.search == "halving" and n_gammas > 1:
            return rung_plan(n_rows, width)
        return [Rung(n_rows, width)]

    def _score_rung(
        self, gammas: list[Any], widths: tuple, data: tuple, splits: tuple, base: Any
    ) -> list[dict[str, Any]]:
        """The result rows of every bandwidth and number of features on the rows of
        ``data = (X, y, w, labels)``, each map fitted on those rows."""
        X, y, w, labels = data
        n_splits, Cs = splits
        results = []
        for gamma in gammas:
            for D in widths:
                Z, width = _features(_candidate_map(base, gamma, D), X)
                scores = self._split_scores(Z, y, w, labels, n_splits, Cs)
                for C, split in zip(Cs, scores, strict=True):
                    results.append(
                        {"gamma": gamma, "alpha": float(C), "n_components": width, "splits": split}
                    )
        return results

    # -- the grid -----------------------------------------------------------------------

    def _Cs(self) -> np.ndarray:
        """The values of ``C``, increasing (the order of the warm starts)."""
        if isinstance(self.Cs, Integral):
            return np.logspace(-4.0, 4.0, int(self.Cs))
        return np.unique(self._positive("Cs", "Give e.g. Cs=[0.01, 1, 100] or Cs=10."))

    def _seeded(self, base: Any) -> Any:
        """The map with one integer seed for the whole search (None stays None)."""
        if base is None or "random_state" not in base.get_params():
            return base
        seed = base.get_params()["random_state"]
        if seed is None or not isinstance(seed, Integral):
            seed = int(check_random_state(seed).randint(np.iinfo(np.int32).max))
        return base.set_params(random_state=seed)

    def _split(self, rows: Rows, y: Any, groups: Any) -> tuple[int, Any]:
        """The number of splits and the fold label of every row (aligned with the rows;
        rows in no test set are labelled ``n_splits``), from the labels on the host."""
        if rows.in_memory:
            n_splits, _, labels, _ = self._folds(rows, y, groups)
            return n_splits, labels
        y_host = np.asarray(to_numpy(y.compute() if is_dask_array(y) else y))
        host = as_rows(np.empty((y_host.shape[0], 0)))  # the labels' rows, on the host
        n_splits, _, labels, _ = self._folds(host, y_host, groups)
        return n_splits, rows.align(labels, "folds")

    # -- the scores ---------------------------------------------------------------------

    def _split_scores(
        self, Z: Any, y: Any, w: Any, labels: Any, n_splits: int, Cs: np.ndarray
    ) -> list[list[float]]:
        """``scores[c][k]``: minus the held-out log-loss of split ``k`` at ``Cs[c]``."""
        scores: list[list[float]] = [[] for _ in Cs]
        for k in range(n_splits):
            held_out = labels == k
            base_w = 1.0 if w is None else w
            train_w = base_w * (~held_out)
            test_w = base_w * held_out
            held = (Z, y, test_w)
            if not is_dask_array(Z):  # in memory: predict the held-out rows only
                test = np.flatnonzero(to_numpy(held_out))
                held = (Z[test], y[test], test_w[test] if np.ndim(test_w) else test_w)
            model = self._inner(C=float(Cs[0]), warm_start=True)
            for c, C in enumerate(Cs):
                model.set_params(C=float(C)).fit(Z, y, sample_weight=train_w)
                scores[c].append(_held_out_score(model, *held))
        return scores

    def _inner(self, feature_map: Any = "passthrough", **params: Any) -> Any:
        """A :class:`FeatureLogisticRegression` with this search's settings."""
        return FeatureLogisticRegression(
            feature_map if feature_map is not None else "passthrough",
            fit_intercept=self.fit_intercept,
            class_weight=self.class_weight,
            tol=self.tol,
            max_iter=self.max_iter,
            cache_size=self.cache_size,
            verbose=self.verbose,
            **params,
        )

    # -- the final model ----------------------------------------------------------------

    def _finish_search(
        self, results: list[dict[str, Any]], n_splits: int, base: Any, X: Any, y: Any, w: Any
    ) -> None:
        """``cv_results_``, the best candidate and its model refitted on every row."""
        table = cv_results(cast("RidgeSearch", _Results(results, n_splits)))
        self.cv_results_ = _renamed(table, "alpha", "C")
        means = np.where(np.isfinite(table["mean_test_score"]), table["mean_test_score"], -np.inf)
        if "rung" in table:  # successive halving: the best of the full size
            means = np.where(table["rung"] == table["rung"].max(), means, -np.inf)
        if not np.isfinite(means).any():
            raise ValueError(
                "Every candidate has an undefined score (a split whose held-out rows all "
                "weigh zero); give those rows positive weights or use fewer splits."
            )
        self.best_index_ = int(np.argmax(means))
        best = results[self.best_index_]
        self.best_score_ = float(table["mean_test_score"][self.best_index_])
        self.best_params_ = dict(self.cv_results_["params"][self.best_index_])
        self.gamma_, self.C_ = best["gamma"], float(best["alpha"])
        self.n_splits_, self.scoring_ = n_splits, "neg_log_loss"
        n_components = best["n_components"] if self._grid(base) else None
        feature_map = _candidate_map(base, best["gamma"], n_components)
        model = self._inner(feature_map, C=self.C_).fit(X, y, sample_weight=w)
        self.best_estimator_ = model
        self.n_components_ = int(model.n_features_out_)
        self.classes_, self.feature_map_ = model.classes_, model.feature_map_
        self.coef_, self.intercept_ = model.coef_, model.intercept_
        self.n_iter_ = model.n_iter_

    # -- prediction ---------------------------------------------------------------------

    def predict(self, X: Any) -> Any:
        """The best model's class labels for rows ``X`` of shape (n_samples, n_features)."""
        return self._best("predict", X)

    def predict_proba(self, X: Any) -> Any:
        """The best model's class probabilities
        (:meth:`FeatureLogisticRegression.predict_proba`) for rows ``X`` of shape
        (n_samples, n_features); one column per class of ``classes_``."""
        return self._best("predict_proba", X)

    def predict_log_proba(self, X: Any) -> Any:
        """The logarithms of :meth:`predict_proba`, computed without overflow."""
        return self._best("predict_log_proba", X)

    def decision_function(self, X: Any) -> Any:
        """The best model's scores, ``W z(x) + b``, for rows ``X`` of shape (n_samples,
        n_features); one column per class, one for two classes."""
        return self._best("decision_function", X)


def _candidate_map(base: Any, gamma: float | None, n_components: int | None) -> Any:
    """An unfitted clone of ``base`` with the candidate's parameters (None: the map's)."""
    if base is None:
        return None
    params = {"gamma": gamma, "n_components": n_components}
    return clone(base).set_params(**{k: v for k, v in params.items() if v is not None})


def _features(feature_map: Any, X: Any) -> tuple[Any, int]:
    """The features of every row under ``feature_map`` fitted on ``X`` (``X`` itself
    for None), computed once (a Dask array persisted), and their number."""
    if feature_map is None:
        return X, int(X.shape[1])
    Z = map_features(feature_map.fit(X), X)
    if is_dask_array(Z):
        Z = Z.persist()
    return Z, int(Z.shape[1])


def _subset(data: tuple, index: np.ndarray | None) -> tuple:
    """The rows ``index`` of each row-aligned array of ``data`` (all of them for None;
    numbers and None as they are)."""
    if index is None:
        return data
    return tuple(v[index] if is_dask_array(v) else pick_rows(v, index) for v in data)


def _gamma_scores(results: list[dict[str, Any]]) -> dict[Any, float]:
    """The best mean score of each bandwidth of ``results`` (-inf where undefined)."""
    best: dict[Any, float] = {}
    for row in results:
        score = float(np.mean(row["splits"]))
        score = score if np.isfinite(score) else -np.inf
        best[row["gamma"]] = max(best.get(row["gamma"], -np.inf), score)
    return best


def _held_out_score(model: Any, Z: Any, y: Any, test_w: Any) -> float:
    """Minus the ``test_w``-weighted log-loss of ``model`` on the rows ``Z``, one
    prediction pass (NaN for a split with no held-out weight)."""
    log_proba = model.predict_log_proba(Z)
    index = np.searchsorted(to_numpy(model.classes_), y) if not is_dask_array(y) else None
    if index is None:  # a Dask array: the class index of each row, part by part
        classes = to_numpy(model.classes_)
        index = y.map_blocks(lambda part: np.searchsorted(classes, part), dtype=np.intp)
        picked = (log_proba * (index[:, None] == np.arange(len(classes)))).sum(axis=1)
        total, weight = (picked * test_w).sum().compute(), test_w.sum().compute()
    else:
        log_proba = to_numpy(log_proba)
        picked = np.take_along_axis(log_proba, index[:, None], axis=1)[:, 0]
        test_w = np.asarray(to_numpy(test_w), dtype=np.float64)
        total, weight = float(picked @ test_w), float(test_w.sum())
    return float(total) / float(weight) if weight > 0 else float("nan")


class _Results:
    """The result rows and splits that :func:`cv_results` reads of a search (all it
    reads of a :class:`RidgeSearch`)."""

    def __init__(self, results: list[dict[str, Any]], n_splits: int) -> None:
        self.results = results
        self.spec = type("Spec", (), {"n_splits": n_splits})()


def _renamed(table: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    """``table`` with the parameter ``old`` called ``new`` (keys in the same order)."""
    out = {(f"param_{new}" if key == f"param_{old}" else key): v for key, v in table.items()}
    out["params"] = [{(new if k == old else k): v for k, v in p.items()} for p in table["params"]]
    return out
