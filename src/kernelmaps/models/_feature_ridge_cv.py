"""Ridge on a feature map with the bandwidth, the penalty and the number of features
chosen in one pass over the rows per batch of bandwidths.

:class:`FeatureRidgeCV` and :class:`FeatureRidgeClassifierCV` search ``gamma x
n_components x alpha`` with :class:`~._search._batches.RidgeSearch`: every bandwidth of a
batch is one fitted map whose features go to the statistics of one pass; every number of
features is a block of those statistics; every penalty comes from one eigendecomposition;
K-fold splits are statistics per fold.  The final model is solved from the statistics of
the best candidate (``best_estimator_``, a :class:`FeatureRidge` or
:class:`FeatureRidgeClassifier`), with no refit.
"""

from __future__ import annotations

from numbers import Integral, Number, Real
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin, clone, is_classifier
from sklearn.model_selection import check_cv
from sklearn.utils import get_tags
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._array_api import to_numpy
from .._array_types import is_dask_array
from .._estimator_repr import CompactArrayReprMixin
from .._progress import Progress
from .._rows import Rows
from ..bandwidth import gamma_from_data
from ..feature_maps import RandomFourierFeatures
from ._base import regression_rows
from ._feature_ridge import FeatureRidge
from ._ridge._pass import RowWork, checked_weights, sample_rows, weighted_sample_rows
from ._ridge._path import REGRESSION_SCORINGS
from ._search._batches import RidgeSearch, SearchSpec
from ._search._conformal import SearchUncertaintyMixin
from ._search._gamma import GammaPlan, scan
from ._search._halving import successive_halving
from ._search._pass import SearchWork
from ._search._results import cv_results
from ._uncertainty import _renamed

__all__ = ["FeatureRidgeCV"]

#: The ``"auto"`` bandwidths: the data's rule times these factors (two decades each way).
AUTO_GAMMA_FACTORS = 10.0 ** np.linspace(-2.0, 2.0, 9)

CLASSIFICATION_SCORINGS = ("accuracy", "balanced_accuracy")


class _RidgeSearchCV(CompactArrayReprMixin, BaseEstimator):
    """The parameters, the search and the fitted attributes shared by the two estimators."""

    _parameter_constraints: ClassVar[dict[str, list[Any] | str]] = {
        "feature_map": [HasMethods(["fit", "transform"]), StrOptions({"passthrough"}), None],
        "gammas": [StrOptions({"auto"}), "array-like", None],
        "alphas": [StrOptions({"auto"}), "array-like", Interval(Real, 0, None, closed="neither")],
        "n_components_grid": ["array-like", None],
        "cv": ["cv_object"],
        "criterion": [StrOptions({"loo", "gcv", "evidence"})],
        "scoring": [str, None],
        "refine_gamma": [Interval(Integral, 0, None, closed="left")],
        "search": [StrOptions({"halving", "exhaustive"})],
        "fit_intercept": ["boolean"],
        "keep_statistics": ["boolean"],
        "random_state": ["random_state", np.random.Generator, np.random.SeedSequence],
        "verbose": [Interval(Integral, 0, None, closed="left"), "boolean"],
    }

    def __init__(
        self,
        feature_map: Any = None,
        *,
        gammas: Any = "auto",
        alphas: Any = "auto",
        n_components_grid: Any = None,
        cv: Any = None,
        criterion: str = "loo",
        scoring: str | None = None,
        refine_gamma: int = 3,
        search: str = "halving",
        fit_intercept: bool = True,
        keep_statistics: bool = True,
        random_state: Any = None,
        verbose: int = 0,
    ) -> None:
        self.feature_map = feature_map
        self.gammas = gammas
        self.alphas = alphas
        self.n_components_grid = n_components_grid
        self.cv = cv
        self.criterion = criterion
        self.scoring = scoring
        self.refine_gamma = refine_gamma
        self.search = search
        self.fit_intercept = fit_intercept
        self.keep_statistics = keep_statistics
        self.random_state = random_state
        self.verbose = verbose

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Give each estimator its own copy of ``__init__`` (the same signature), so that
        a keyword it does not take names it (``FeatureRidgeCV.__init__() got an
        unexpected keyword argument 'alpha_per_target'``), not this class."""
        super().__init_subclass__(**kwargs)
        if "__init__" not in cls.__dict__:
            cls.__init__ = _renamed(cls.__init__, cls.__name__)  # type: ignore[method-assign]

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        if self.feature_map is None or self.feature_map == "passthrough":
            tags.input_tags.sparse = True
        else:
            tags.input_tags.sparse = get_tags(self.feature_map).input_tags.sparse
        if isinstance(self, RegressorMixin):
            tags.target_tags.multi_output = True
        return tags

    # -- parameters ---------------------------------------------------------------------

    def _base_map(self) -> Any:
        if self.feature_map is None:
            return RandomFourierFeatures(random_state=self.random_state)
        if isinstance(self.feature_map, str):
            return None
        return clone(self.feature_map)

    def _positive(self, name: str, fix: str) -> np.ndarray:
        value = getattr(self, name)
        try:
            values = np.asarray(value, dtype=np.float64).reshape(-1)
        except (TypeError, ValueError):
            values = np.empty(0)
        if values.size == 0 or not np.all(np.isfinite(values)) or np.any(values <= 0):
            raise ValueError(
                f"{name} must be 'auto' or a non-empty list of positive finite numbers; got "
                f"{value!r}. {fix}"
            )
        return values

    def _grid(self, base: Any) -> tuple[int, ...] | None:
        if self.n_components_grid is None:
            return None
        if base is None or "n_components" not in base.get_params():
            raise ValueError(
                "n_components_grid needs a feature map with an n_components parameter; "
                f"got {self.feature_map!r}. Leave n_components_grid=None for it."
            )
        grid = np.asarray(self.n_components_grid).reshape(-1)
        if grid.size == 0 or grid.dtype.kind not in "iu" or np.any(grid < 1):
            raise ValueError(
                "n_components_grid must be a non-empty list of positive integers; got "
                f"{self.n_components_grid!r}, e.g. [512, 1024, 2048, 4096]."
            )
        return tuple(int(D) for D in np.unique(grid))

    def _n_splits_and_scoring(self) -> tuple[int, str]:
        allowed = CLASSIFICATION_SCORINGS if is_classifier(self) else REGRESSION_SCORINGS
        if self.cv is None:
            if self.scoring is None:
                return 0, self.criterion
            self._check_loo_scoring(allowed)
            return 0, self.scoring
        scoring = self.scoring or allowed[0]
        if scoring not in allowed:
            raise ValueError(
                f"scoring={scoring!r} is not computed by {type(self).__name__}; use one of "
                f"{list(allowed)}."
            )
        return -1, scoring

    def _check_loo_scoring(self, allowed: tuple[str, ...]) -> None:
        """``scoring`` with ``cv=None``: a regression scoring of the leave-one-out
        predictions (as RidgeCV's), so only with ``criterion="loo"``."""
        if is_classifier(self):
            raise ValueError(
                f"scoring={self.scoring!r} with cv=None: {type(self).__name__} scores the "
                "leave-one-out fit by criterion only; give cv=5 (say) for K-fold accuracy."
            )
        if self.scoring not in allowed:
            raise ValueError(
                f"scoring={self.scoring!r} is not computed by {type(self).__name__}; use one "
                f"of {list(allowed)}."
            )
        if self.criterion != "loo":
            raise ValueError(
                f"scoring={self.scoring!r} with cv=None scores the leave-one-out "
                f"predictions, not criterion={self.criterion!r}; give criterion='loo' (or "
                "scoring=None)."
            )

    def _spec(self, base: Any) -> SearchSpec:
        n_splits, scoring = self._n_splits_and_scoring()
        alphas = None
        if not (isinstance(self.alphas, str) and self.alphas == "auto"):
            fix = "Give penalties such as np.logspace(-6, 2, 13)."
            alphas = np.sort(self._positive("alphas", fix))
        return SearchSpec(
            base_map=base,
            grid=self._grid(base),
            alphas=alphas,
            n_splits=n_splits,
            criterion=self.criterion,
            scoring=scoring,
            fit_intercept=bool(self.fit_intercept),
        )

    # -- folds --------------------------------------------------------------------------

    def _folds(self, rows: Rows, y: Any, groups: Any) -> tuple[int, int, Any, bool]:
        """``(n_splits, n_groups, labels, hashed)``: the splits of ``cv`` as a fold label
        per row (rows in no test set form one more group, always trained on); a Dask
        array's folds come from a hash of the row index."""
        if self.cv is None:
            return 0, 1, None, False
        if not rows.in_memory:
            if not isinstance(self.cv, Integral):
                raise ValueError(
                    "cv: the rows of a Dask array are split by a hash of their index; give "
                    f"the number of folds as an integer (cv=5), not {self.cv!r}."
                )
            return int(self.cv), int(self.cv), None, True
        n = rows.n_rows
        y_host = np.asarray(to_numpy(y))
        splitter = check_cv(self.cv, y_host, classifier=is_classifier(self))
        labels = np.full(n, -1, dtype=np.intp)
        X = rows.array() if rows.array() is not None and not rows.sparse else np.empty((n, 0))
        k = -1
        for k, (_, test) in enumerate(splitter.split(X, y_host, groups)):
            if np.any(labels[test] >= 0):
                raise ValueError(
                    f"cv={self.cv!r} gives test sets that overlap; the exact K-fold needs "
                    "each row in at most one test set (KFold, StratifiedKFold, GroupKFold)."
                )
            labels[test] = k
        n_splits = k + 1
        rest = labels < 0
        labels[rest] = n_splits
        return n_splits, n_splits + int(np.any(rest)), labels, False

    # -- fit ----------------------------------------------------------------------------

    def _search(
        self, rows: Rows, y: Any, sample_weight: Any, groups: Any, encoder: Any
    ) -> tuple[RidgeSearch, float | None]:
        """Run the search on the validated rows; the search and the largest weight."""
        if rows.n_rows < 2:
            raise ValueError(
                f"{type(self).__name__} needs at least 2 rows to choose its parameters; got "
                f"n_samples={rows.n_rows}."
            )
        base = self._base_map()
        spec = self._spec(base)
        n_splits, n_groups, labels, hashed = self._folds(rows, y, groups)
        if n_splits:
            spec = SearchSpec(**{**spec.__dict__, "n_splits": n_splits})
        w, largest_weight = checked_weights(rows, sample_weight)
        y_aligned = rows.align(y)
        n_targets = self._n_targets(y)
        row_work = RowWork(
            feature_map=None,
            width=rows.n_features,
            n_targets=n_targets,
            centre=bool(self.fit_intercept),
            estimator_name=type(self).__name__,
            encoder=encoder,
            checked=rows.checked,
        )
        work = SearchWork(row_work, (), n_groups, hashed)
        folds = None if labels is None else rows.align(labels, "folds")
        progress = Progress(type(self).__name__, int(self.verbose))
        search = RidgeSearch(spec, rows, work, (y_aligned, w, folds), progress, largest_weight)
        self._run_gammas(search, rows, base)
        if search.best is None:
            raise ValueError(
                "Every candidate has an undefined score (rows fitted exactly or too few rows "
                "per fold); give more rows, fewer splits or larger alphas."
            )
        return search, largest_weight

    def _gamma_grid(self, rows: Rows, base: Any, w: Any = None) -> tuple[list[float | None], bool]:
        """The bandwidths of the first pass, and whether they are ``"auto"`` (extended at
        an edge, then refined; centred on the rule of the rows weighted by ``w``)."""
        has_gamma = base is not None and "gamma" in base.get_params()
        if self.gammas is None or not has_gamma:
            if self.gammas is not None and not (
                isinstance(self.gammas, str) and self.gammas == "auto"
            ):
                raise ValueError(
                    f"gammas: the feature map {self.feature_map!r} has no gamma parameter; "
                    "give gammas=None to tune alpha and n_components only."
                )
            return [None], False
        if isinstance(self.gammas, str):
            g0 = self._rule_gamma(rows, base, w)
            return [float(g) for g in g0 * AUTO_GAMMA_FACTORS], True
        given = np.sort(self._positive("gammas", "Give e.g. [0.01, 0.1, 1]."))
        return [float(g) for g in given], False

    def _rule_gamma(self, rows: Rows, base: Any, w: Any = None) -> float:
        """The data's bandwidth (:func:`kernelmaps.bandwidth.gamma_from_data`) on a sample
        of at most 2000 rows: uniform, or with weights ``w`` (not all 1) the weighted
        rule on a sample drawn in proportion to them (:func:`weighted_sample_rows`), so
        that integer weights give the bandwidth of the rows repeated."""
        weights = _host_weights(w)
        if weights is None:
            index, counts = sample_rows(rows.n_rows, 2000), None
        else:
            index, counts = weighted_sample_rows(weights, 2000)
        (sample,) = rows.read([index])
        sample = to_numpy(sample) if not hasattr(sample, "toarray") else sample.toarray()
        kernel = base.get_params().get("kernel", "rbf")
        return gamma_from_data(
            np.asarray(sample),
            kernel=kernel if isinstance(kernel, str) else "rbf",
            sample_weight=counts,
        )

    def _run_gammas(self, search: RidgeSearch, rows: Rows, base: Any) -> None:
        """The bandwidths, by successive halving over rows and features
        (:func:`~._search._halving.successive_halving`) or all at full size: the grid in
        batches that fit in memory, then for ``"auto"`` the extension at an edge and the
        golden-section refinement in ``log gamma`` about the best."""
        gammas, auto = self._gamma_grid(rows, base, search.aligned[1])
        ratio = float(AUTO_GAMMA_FACTORS[1] / AUTO_GAMMA_FACTORS[0])
        plan = GammaPlan(gammas, auto, ratio, self.refine_gamma if auto else 0)
        if self.search == "halving":
            successive_halving(search, plan)
        else:
            scan(search, plan)

    def _finish(self, search: RidgeSearch, rows: Rows, largest_weight: float | None) -> None:
        best = search.best
        assert best is not None
        self.cv_results_ = cv_results(search)
        self.best_index_ = best.index
        self.best_score_ = best.score
        self.best_params_ = dict(self.cv_results_["params"][best.index])
        self.gamma_ = best.gamma if best.gamma is not None else _map_gamma(best.feature_map)
        self.alpha_, self.n_components_ = best.alpha, best.width
        if self.gamma_ is not None:  # the map's own (gammas=None): not searched
            self.best_params_.setdefault("gamma", self.gamma_)
        self.n_splits_ = search.spec.n_splits
        self.scoring_ = search.spec.scoring
        model = self._final_estimator(best)
        model.n_features_in_ = self.n_features_in_
        if hasattr(self, "feature_names_in_"):
            model.feature_names_in_ = self.feature_names_in_
        y, w = search.aligned[:2]
        model._adopt(best.feature_map, best.statistics, rows, self._y_1d, largest_weight, (y, w))
        self.best_estimator_ = model
        self.feature_map_ = model.feature_map_
        self.coef_, self.intercept_ = model.coef_, model.intercept_
        if hasattr(model, "noise_variance_"):
            self.noise_variance_ = model.noise_variance_

    #: The model the search ends with (``best_estimator_``).
    _model_class: ClassVar[type] = FeatureRidge

    def _final_estimator(self, best: Any) -> Any:
        """The unfitted final model of the best candidate (its statistics come next)."""
        return self._model_class(
            best.feature_map if best.feature_map is not None else "passthrough",
            alpha=best.alpha,
            fit_intercept=self.fit_intercept,
            keep_statistics=self.keep_statistics,
        )

    def _n_targets(self, y: Any) -> int:
        raise NotImplementedError

    # -- prediction ---------------------------------------------------------------------

    def _best(self, method: str, X: Any) -> Any:
        """``best_estimator_.method(X)``."""
        check_is_fitted(self, "best_estimator_")
        return getattr(self.best_estimator_, method)(X)


def _map_gamma(feature_map: Any) -> float | None:
    """The bandwidth a fitted map used (``gammas=None``): its kernel's, resolved at the
    fit (``kernel_.gamma``, e.g. of ``gamma="scale"``), else its ``gamma_``, else its
    ``gamma`` parameter; None for a map without one."""
    if feature_map is None or "gamma" not in feature_map.get_params():
        return None
    kernel = getattr(feature_map, "kernel_", None)
    for value in (
        getattr(kernel, "gamma", None),
        getattr(feature_map, "gamma_", None),
        feature_map.get_params()["gamma"],
    ):
        if isinstance(value, Real) and not isinstance(value, bool):
            return float(value)
    return None


def _host_weights(w: Any) -> np.ndarray | None:
    """The aligned weights ``w`` on the host (one read of a Dask array), None for no
    weights, a number or weights all 1 (the unweighted rule)."""
    if w is None or isinstance(w, Number):
        return None
    host = np.asarray(to_numpy(w.compute() if is_dask_array(w) else w), dtype=np.float64)
    return None if np.all(host == 1.0) else host


class FeatureRidgeCV(SearchUncertaintyMixin, RegressorMixin, _RidgeSearchCV):
    """Ridge regression on a feature map with ``gamma``, ``alpha`` and ``n_components``
    chosen by cross-validation in one pass over the rows per batch of bandwidths.

    For every bandwidth ``gamma`` (a clone of the map fitted with it), every number of
    features ``D'`` and every penalty ``alpha``, the model ``f(x) = w^T z(x) + b`` of
    :class:`FeatureRidge` is scored, and the best is kept:

    * the features of a batch of bandwidths go, row block by row block, to the
      statistics of the ridge fit (:class:`RidgeStatistics`) of each bandwidth, one set
      per fold: one pass over the rows for the batch (the batch as large as the memory
      holds their ``D x D`` matrices);
    * the ``D'`` leading features of random Fourier features are a map of ``D'``
      features (the first frequencies of the draw, weighted ``sqrt(D / D')``), whose
      statistics are a block of those of the largest map: every number of features of
      ``n_components_grid`` comes from the same pass (other maps: one map per number, in
      the same pass);
    * every penalty comes from one eigendecomposition ``G = V diag(l) V^T`` of the
      (training) Gram matrix: generalized cross-validation, the log evidence, exact
      leave-one-out (one more pass), or, with ``cv``, the exact K-fold score, the held-out
      squared error of split ``k`` being a quadratic form in the statistics of fold
      ``k`` and the model solved from those of the other folds (no pass at all);
    * with ``gammas="auto"`` the bandwidths are nine, two decades either side of the
      data's bandwidth rule (:func:`kernelmaps.bandwidth.gamma_from_data`, weighted by
      ``sample_weight``), then
      ``refine_gamma`` passes of golden-section search in ``log gamma`` between the
      neighbours of the best;
    * ``search="halving"`` (successive halving, Jamieson & Talwalkar 2016; Li et al.
      2018) scores the bandwidths at low fidelity first: every bandwidth on
      ``n / 9`` rows drawn uniformly with a map of ``D / 3`` features, the best third
      on ``n / 3`` rows and ``D / sqrt(3)`` features, where the golden-section steps
      are taken, and only the best one on every row with the full map (and every
      number of features of ``n_components_grid``), where the penalty is chosen and the
      final model's statistics are kept.  A rung costs ``(n_r / n) (D_r / D)^2`` of a
      pass per bandwidth, so the search costs a few fits instead of one pass (two with
      leave-one-out) per bandwidth.  Rungs keep at least 1000 rows (and twice their
      features) and 512 features, and data of fewer than 9000 rows are searched
      exhaustively (docs/TUNING.md says where the rungs' choice was measured not to
      hold up, and why).  ``search="exhaustive"`` scores every bandwidth at full size.

    The final model is solved from the statistics of the best candidate (no refit) and
    is ``best_estimator_``, a :class:`FeatureRidge`.

    Parameters
    ----------
    feature_map : transformer, "passthrough" or None, default=None
        The map, cloned for every candidate with ``set_params(gamma=...,
        n_components=...)``: any kernelmaps map or scikit-learn transformer with those
        parameters.  None: ``RandomFourierFeatures(random_state=random_state)``.
    gammas : "auto", array-like or None, default="auto"
        The bandwidths; None (or a map without ``gamma``): the map's own.
    alphas : "auto", array-like or float, default="auto"
        The penalties (a number: that one); ``"auto"``: ``l_max 10^k``, ``k = -12, ...,
        0``, relative to the largest eigenvalue ``l_max`` of each candidate's Gram matrix.
    n_components_grid : array-like of int or None, default=None
        The numbers of features; None: the map's ``n_components``.
    cv : int, cross-validation generator, iterable or None, default=None
        None: rank by ``criterion`` (one fit on all the rows).  An int or a splitter:
        exact K-fold (the test sets must not overlap); a Dask array takes an int, its
        folds made from a hash of the row index.
    criterion : {"loo", "gcv", "evidence"}, default="loo"
        With ``cv=None``: exact leave-one-out mean squared error (one more pass),
        generalized cross-validation, or the log evidence of the Bayesian ridge model.
        ``mean_test_score`` is minus the error, or the log evidence per row.  GCV uses
        the mean leverage for every row, so it does not see rows far out in feature
        space that a nearly unpenalized model fits exactly: on data with such rows
        (California housing) it can choose a penalty far too small; leave-one-out sees
        them (docs/TUNING.md).
    scoring : {"r2", "neg_mean_squared_error", "neg_root_mean_squared_error"} or None
        With ``cv``: the score of a split, as GridSearchCV's (default ``"r2"``).  With
        ``cv=None`` and ``criterion="loo"``: the score of the exact leave-one-out
        predictions, as RidgeCV's (None: minus their mean squared error).
    refine_gamma : int, default=3
        Golden-section passes after the grid of ``gammas="auto"`` (0: none).
    search : {"halving", "exhaustive"}, default="halving"
        Successive halving over rows and features (above), or every bandwidth scored on
        every row with the full map.  Both choose the penalty and the number of
        features at full size; only the bandwidths differ.
    fit_intercept : bool, default=True
    keep_statistics : bool, default=True
        Keep the final model's statistics (``best_estimator_.statistics_``, ``D x D``)
        for ``partial_fit``.
    random_state : int, Generator, SeedSequence, RandomState or None, default=None
        Seed of the default map only.
    verbose : int, default=0
        Report each pass (1) and the rows within it (2): the time of the landmark
        selection made once per search, of each batch of bandwidths, and each rung of
        the halving search (its rows, features, bandwidths and those kept).

    Attributes
    ----------
    best_estimator_ : FeatureRidge
    best_params_ : dict
        ``{"gamma", "alpha", "n_components"}`` of the best candidate; with
        ``gammas=None``, ``"gamma"`` is the map's own as fitted (``gamma_``; not in
        ``cv_results_``, which lists what was searched), absent for a map without one.
    best_score_ : float
        ``mean_test_score`` of the best candidate: with ``cv=None`` and
        ``criterion="loo"``, minus the weighted mean squared leave-one-out residual
        ``-sum_i s_i r_i^2 / sum_i s_i`` (averaged over the targets; ``s_i`` the sample
        weights, 1 without), where RidgeCV reports ``-mean_i(s_i r_i^2)``, that is
        ``sum_i s_i / n`` times ours (see Notes).
    best_index_ : int
    cv_results_ : dict of ndarray
        As GridSearchCV's: ``param_gamma``, ``param_alpha``, ``param_n_components``,
        ``params``, ``split{k}_test_score`` (with ``cv``), ``mean_test_score`` (with
        sample weights, the weighted mean of Notes), ``std_test_score`` (0 with
        ``cv=None``), ``rank_test_score``; ``pandas.DataFrame(cv_results_)`` is the
        table.  Always kept (RidgeCV's ``store_cv_results`` is not a parameter: its
        per-row values are not kept).  With ``search="halving"`` also ``rung`` (0, 1,
        ...; the last is the full size), ``param_n_rows`` (the rows scored) and
        ``fidelity`` (the rung's cost per bandwidth as a share of a full pass,
        ``(n_r / n) (D_r / D)^2``); a later rung ranks before an earlier one, as in
        scikit-learn's ``HalvingGridSearchCV``, and the best is of the last.
    gamma_, alpha_, n_components_ : float, float, int
        The best candidate's parameters (``gamma_`` None for a map without one; with
        ``gammas=None``, the map's own as its fit resolved it, e.g. ``gamma="scale"``).
    feature_map_ : transformer or None
        The fitted map of the best candidate (of ``n_components_`` features).
    coef_, intercept_
        The final model's.
    noise_variance_ : float or ndarray of shape (n_targets,)
        The final model's noise variance (:class:`FeatureRidge`'s ``noise_variance_``).
    n_splits_ : int
        Splits of ``cv`` (0 with ``cv=None``).
    scoring_ : str
        The criterion or scoring used.
    n_features_in_ : int
    feature_names_in_ : ndarray of str

    Notes
    -----
    Exactness.  For a map that does not learn from the data (random Fourier features),
    the K-fold scores equal those of ``GridSearchCV(FeatureRidge(map, alpha=...), ...,
    cv=...)`` on the same splits, and the criteria those of :class:`FeatureRidge`, to
    rounding: the same models, from statistics instead of refits.  A map fitted on the
    data (Nyström landmarks) is fitted once on all the rows, which lets the held-out rows
    of a split shape the features a little.  With ``sample_weight``, the K-fold scores
    are weighted by it (GridSearchCV's scorers are unweighted unless the weights are
    routed to them).

    Weights.  A score with ``sample_weight`` is a weighted mean over the rows: the
    leave-one-out criterion is

    .. math:: \\mathrm{LOO} = -\\frac{1}{t} \\sum_{j=1}^{t}
              \\frac{\\sum_i s_i r_{ij}^2}{\\sum_i s_i},
              \\qquad r_{ij} = \\frac{y_{ij} - \\hat y_{ij}}{1 - h_i}

    (Allen 1974), and the K-fold scores and the scorings of the leave-one-out predictions
    weight their rows by ``s_i`` (``r2``: ``1 - sum_i s_i r_i^2 / sum_i s_i (y_i -
    ybar)^2``, ``ybar`` the weighted mean).  scikit-learn's ``RidgeCV`` reports
    ``-mean_i(s_i r_i^2)`` (``sum_i s_i / n`` times the criterion above) and scores its
    predictions unweighted.  The weighted mean is on the scale of the unweighted score
    whatever the weights (with integer weights its denominator is the number of rows
    repeated; a row of weight 2 is still left out whole, where the rows repeated leave
    out one of two copies), and the automatic bandwidths are those of the rows repeated
    (the rule's sample drawn in proportion to the weights).  Not taken:
    RidgeCV's ``alpha_per_target`` (one penalty for all the targets, the best mean
    score) and ``store_cv_results`` (``cv_results_`` is always kept),
    RidgeClassifierCV's ``class_weight`` (give the weights as ``sample_weight``).

    Cost.  Per batch of bandwidths: one pass over the rows, ``O(n D^2)`` per bandwidth
    for the statistics (``n`` rows, ``D`` the largest number of features), then per
    bandwidth and number of features ``O(D'^3)`` for each split's eigendecomposition;
    exact leave-one-out adds a pass.  A grid search refits the map and the model for
    every candidate and split: ``n_alphas x n_splits`` times the statistics' cost per
    bandwidth and number of features.  Landmarks that do not depend on the kernel
    (:class:`~kernelmaps.Nystroem`'s uniform, k-means or given landmarks) are chosen once
    per search, at the first bandwidth, and the other bandwidths refit only ``K_mm`` and
    its normalization on them: the maps that a clone fitted per bandwidth with the same
    ``random_state`` gives, without k-means at every bandwidth.  Exact leave-one-out and
    K-fold accuracy take the features of the statistics pass for their second pass
    where the rows are NumPy rows and the features fit in a quarter of the available
    memory.

    References
    ----------
    Golub, G. H., Heath, M. and Wahba, G. (1979). Generalized cross-validation as a method
    for choosing a good ridge parameter. Technometrics 21(2).
    Allen, D. M. (1974). The relationship between variable selection and data
    augmentation and a method for prediction. Technometrics 16(1).
    MacKay, D. J. C. (1992). Bayesian interpolation. Neural Computation 4(3).
    Kiefer, J. (1953). Sequential minimax search for a maximum. Proc. AMS 4(3).
    Jamieson, K. and Talwalkar, A. (2016). Non-stochastic best arm identification and
    hyperparameter optimization. AISTATS.
    Li, L., Jamieson, K., DeSalvo, G., Rostamizadeh, A. and Talwalkar, A. (2018).
    Hyperband: a novel bandit-based approach to hyperparameter optimization. JMLR 18.

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from kernelmaps import FeatureRidgeCV, RandomFourierFeatures
    >>> X, y = load_diabetes(return_X_y=True)
    >>> cv = FeatureRidgeCV(RandomFourierFeatures(n_components=256, random_state=0),
    ...                     n_components_grid=[64, 128, 256], cv=5).fit(X, y)
    >>> sorted(cv.best_params_)
    ['alpha', 'gamma', 'n_components']
    >>> cv.predict(X[:3]).shape
    (3,)
    """

    def fit(self, X: Any, y: Any, sample_weight: Any = None, groups: Any = None) -> FeatureRidgeCV:
        """Search, then solve the best candidate's model from its statistics.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : array-like of shape (n_samples,), default=None
        groups : array-like of shape (n_samples,), default=None
            Group labels for a group splitter (``cv=GroupKFold(5)``).

        Returns
        -------
        self : FeatureRidgeCV
        """
        self._validate_params()
        rows, y = regression_rows(self, X, y, reset=True)
        self._y_1d, self._weighted = y.ndim == 1, sample_weight is not None
        search, largest_weight = self._search(rows, y, sample_weight, groups, None)
        self._finish(search, rows, largest_weight)
        return self

    def _n_targets(self, y: Any) -> int:
        return 1 if y.ndim == 1 else int(y.shape[1])

    def _finish(self, search: RidgeSearch, rows: Rows, largest_weight: float | None) -> None:
        super()._finish(search, rows, largest_weight)
        self._conformal = self._search_scores(search, rows)

    def _final_estimator(self, best: Any) -> Any:
        model = super()._final_estimator(best)
        model._exchangeable = not getattr(self, "_weighted", False)
        return model
