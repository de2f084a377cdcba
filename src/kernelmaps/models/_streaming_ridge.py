"""The machinery shared by the streaming ridge estimators (:class:`FeatureRidge` and
:class:`FeatureRidgeClassifier`): parameters, the passes over the rows, the choice between
the primal (statistics) and the dual (kernel matrix) solves, ``partial_fit``'s resumed
statistics, and where the fitted arrays live (``X``'s device, or NumPy for streamed rows).
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable, Iterator
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn import config_context
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.utils import get_tags
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .. import _memory
from .._array_api import (
    accumulator_dtype,
    get_namespace,
    is_numpy,
    placed,
    to_namespace,
    to_numpy,
)
from .._estimator_repr import CompactArrayReprMixin
from .._memory import check_memory
from .._progress import Progress, RowCounter
from .._rows import Rows, as_rows
from .._validation import StrictInterval
from ..feature_maps import RandomFourierFeatures
from ._base import as_row_sliceable, predict_in_blocks
from ._checks import check_solution, check_statistics, check_sums
from ._ridge._dual import dual_problem, solve_dual
from ._ridge._pass import (
    RowWork,
    feature_row_blocks,
    feature_width,
    host_rows,
    loo_sample,
    map_features,
    pick_rows,
    ridge_loo,
    ridge_statistics,
)
from ._ridge._solvers import penalty_terms, solve_ridge
from ._ridge_statistics import RidgeStatistics

__all__ = ["_StreamingRidgeMixin"]

#: Rows mapped first to learn the width of a feature map that does not state it.
_WIDTH_PROBE_ROWS = 256

#: What a fit sets (``fit`` and a first ``partial_fit`` start from none of it).
_FITTED_STATE = (
    "coef_",
    "intercept_",
    "alpha_",
    "cv_errors_",
    "alpha_selection_",
    "solver_",
    "statistics_",
    "_training_rows",
    "noise_variance_",
    "_conformal",
    "_scored",
    "_posterior_state",
    "calibrator_",
)


class _StreamingRidgeMixin(CompactArrayReprMixin, BaseEstimator):
    """Streaming ridge machinery shared by :class:`FeatureRidge` and its classifier.

    ``fit`` solves in the primal (the statistics, :class:`RidgeStatistics`) or, with fewer
    rows than features, in the dual (the ``n x n`` kernel matrix of the rows); the fitted
    attribute ``statistics_`` holds everything the rows contributed, and ``partial_fit``
    updates it and re-solves.  After a dual fit the statistics are built from the kept
    training rows when ``partial_fit`` first needs them; ``keep_statistics=False`` keeps
    neither.
    """

    statistics_: RidgeStatistics | None
    _training_rows: tuple[Any, np.ndarray, np.ndarray] | None

    _parameter_constraints: ClassVar[dict[str, list[Any] | str]] = {
        "feature_map": [HasMethods(["fit", "transform"]), StrOptions({"passthrough"}), None],
        "alpha": [StrictInterval(Real, 0.0, None, closed="neither")],
        "alphas": ["array-like", None],
        "alpha_selection": [StrOptions({"auto", "loo", "gcv"})],
        "fit_intercept": ["boolean"],
        "keep_statistics": ["boolean"],
        "random_state": ["random_state", np.random.Generator, np.random.SeedSequence],
        # a device of any installed library, checked by resolve_device when used
        "device": "no_validation",
        "verbose": [Interval(Integral, 0, None, closed="left"), "boolean"],
    }

    #: The fitted arrays that follow ``X`` to its device (:meth:`_follow_x`).
    _follows_x: ClassVar[tuple[str, ...]] = ("coef_", "intercept_", "cv_errors_", "noise_variance_")

    def __init__(
        self,
        feature_map: Any = None,
        *,
        alpha: float = 1.0,
        alphas: Any = None,
        alpha_selection: str = "auto",
        fit_intercept: bool = True,
        keep_statistics: bool = True,
        random_state: Any = None,
        device: Any = None,
        verbose: int = 0,
    ) -> None:
        self.feature_map = feature_map
        self.alpha = alpha
        self.alphas = alphas
        self.alpha_selection = alpha_selection
        self.fit_intercept = fit_intercept
        self.keep_statistics = keep_statistics
        self.random_state = random_state
        self.device = device
        self.verbose = verbose

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        if self.feature_map is None or self.feature_map == "passthrough":
            tags.input_tags.sparse = True
            tags.array_api_support = True
        else:
            map_tags = get_tags(self.feature_map)
            tags.input_tags.sparse = map_tags.input_tags.sparse
            tags.array_api_support = map_tags.array_api_support
        if isinstance(self, RegressorMixin):
            tags.target_tags.multi_output = True
        return tags

    # -- parameters ---------------------------------------------------------------------

    def _check_alphas(self) -> np.ndarray | None:
        if self.alphas is None:
            return None
        try:
            alphas = np.asarray(self.alphas, dtype=np.float64).reshape(-1)
        except (TypeError, ValueError):
            alphas = np.empty(0)  # refused just below, with the fix
        if alphas.size == 0 or not np.all(np.isfinite(alphas)) or np.any(alphas <= 0):
            raise ValueError(
                f"alphas must be a non-empty list of positive finite numbers; got "
                f"{self.alphas!r}. Give candidate penalties such as np.logspace(-3, 3, 13)."
            )
        return alphas

    def _new_feature_map(self) -> Any:
        if self.feature_map is None:
            # the default map is the only random part: seeded by random_state (a given
            # map keeps its own random_state, which random_state does not touch)
            return RandomFourierFeatures(random_state=self.random_state)
        if isinstance(self.feature_map, str):  # "passthrough"
            return None
        return clone(self.feature_map)

    def _progress(self) -> Progress:
        """The reports of a fit, silent at ``verbose=0`` (:mod:`kernelmaps._progress`)."""
        return Progress(type(self).__name__, self.verbose)

    def _started(self) -> bool:
        """Whether a fit or a ``partial_fit`` has completed (``partial_fit`` continues)."""
        return hasattr(self, "coef_")

    def _reset(self) -> None:
        """Forget a previous fit (``fit``, or the first ``partial_fit``)."""
        for name in _FITTED_STATE:
            self.__dict__.pop(name, None)

    # -- row blocks ---------------------------------------------------------------------

    def _features(self, X: Any) -> Any:
        """``z(X)``; ``X`` was validated by the public method, so the map does not scan it."""
        return map_features(self.feature_map_, X)

    def _block_rows(self, X: Any, start: int = 0) -> Iterator[slice]:
        n_targets = getattr(self, "_n_targets", 1)
        return feature_row_blocks(X.shape[0], X.shape[1], self.n_features_out_, n_targets, start)

    def _row_work(self, rows: Rows, encoder: Any = None, check_labels: bool = False) -> RowWork:
        """What a part of ``rows`` needs of the model (a small object, sent to workers);
        for rows streamed to a device, a map with an array path has its arrays copied
        there once."""
        feature_map = self.feature_map_
        if getattr(feature_map, "_array_api", False):
            feature_map = placed(feature_map, rows.xp, rows.device)
        return RowWork(
            feature_map=feature_map,
            width=int(self.n_features_out_),
            n_targets=int(self._n_targets),
            centre=bool(self.fit_intercept),
            estimator_name=type(self).__name__,
            encoder=encoder,
            check_labels=check_labels,
            checked=rows.checked,
        )

    # -- memory -------------------------------------------------------------------------

    def _primal_bytes(self) -> float:
        """The statistics' ``D x D`` Gram matrix, its centred copy and its factorization."""
        D = self.n_features_out_
        return 8.0 * (3 * D * D + 4 * D * self._n_targets)

    def _dual_bytes(self, n: int, first: Any) -> float:
        """The ``n x D`` features ``Z`` (estimated from the first block when sparse) and
        the ``n x n`` kernel matrix, with its factorization or eigenvectors."""
        if sp.issparse(first):
            first = first.tocsr()
            per_row = (first.data.nbytes + first.indices.nbytes) / max(first.shape[0], 1)
            features = 2 * (per_row + 8) * n  # the blocks, then stacked
        else:
            features = 8.0 * n * self.n_features_out_
        return features + 8.0 * (3 * n * n + 3 * n * self._n_targets)

    def _choose_solver(self, rows: Rows, head: Any) -> tuple[str, Any]:
        """``"dual"`` for rows in memory with fewer rows than features, unless its memory
        is not available and the primal's is; else ``"primal"``.  Also the features of
        the first rows (``head``'s, or the first block's), mapped to weigh the dual."""
        n = rows.n_rows
        if not rows.in_memory or n >= self.n_features_out_:
            return "primal", None
        X = rows.X
        if head is not None:
            first = head[0]
        else:
            first = self._features(X[next(iter(self._block_rows(X))), ...])
        available = _memory.available_memory()
        if (
            available is not None
            and self._dual_bytes(n, first) > available
            and self._primal_bytes() <= available
        ):
            return "primal", None
        return "dual", first

    def _live_statistics(self) -> RidgeStatistics:
        """``statistics_``, set by the fit under way."""
        assert self.statistics_ is not None
        return self.statistics_

    def _check_primal_memory(self) -> None:
        """Refuse a primal fit whose ``D x D`` matrices do not fit in memory."""
        D = self.n_features_out_
        check_memory(
            self._primal_bytes(),
            f"{type(self).__name__}'s primal solve (the {D} x {D} Gram matrix of the "
            "features and its factorization)",
            "lower the number of features D (the feature map's n_components)",
        )

    # -- fitting ------------------------------------------------------------------------

    def _fit_map(self, rows: Rows) -> Any:
        """Fit the map on ``rows`` (the first data seen) and set ``n_features_out_`` (from
        the map, or by mapping the first rows of a map that does not state it).  Returns
        those rows' features and count, for the pass to start after them (rows in
        memory), else None."""
        self.feature_map_ = self._new_feature_map()
        width: int | None
        if self.feature_map_ is None:
            width = rows.n_features
        else:
            start = time.perf_counter()
            with config_context(assume_finite=True):
                self.feature_map_.fit(rows.X)
            width = feature_width(self.feature_map_)
            progress = self._progress()
            if progress.enabled:
                name = type(self.feature_map_).__name__
                progress.log(f"feature map: {name} fitted in {time.perf_counter() - start:.2f} s")
        head = None
        if width is None:
            (probe,) = rows.read([np.arange(min(_WIDTH_PROBE_ROWS, rows.n_rows))])
            features = self._features(as_row_sliceable(probe))
            width = features.shape[1]
            if rows.in_memory:
                head = (features, probe.shape[0])
        self.n_features_out_ = int(width)
        return head

    def _start(self, rows: Rows, n_targets: int, y_1d: bool) -> Any:
        """Forget a previous fit and fit the map (``fit``, or the first ``partial_fit``);
        returns what :meth:`_fit_map` does."""
        self._reset()
        self._y_1d = y_1d
        self._n_targets = int(n_targets)
        return self._fit_map(rows)

    def _fit_rows(
        self,
        rows: Rows,
        y: Any,
        weights: tuple[Any, float | None],
        head: Any = None,
        encoder: Any = None,
    ) -> None:
        """The fit on the training ``rows`` with the aligned targets ``y`` (values, or the
        labels ``encoder`` encodes), ``weights`` (from :func:`checked_weights`) and the
        ``head`` of :meth:`_fit_map`."""
        w, largest_weight = weights
        work = self._row_work(rows, encoder)
        solver, first = self._choose_solver(rows, head)
        if solver == "dual":
            # rows on a device: their features come to the host, where the dual is solved
            X, Y = rows.X, work.targets(to_numpy(y))
            w = np.ones(X.shape[0]) if w is None else to_numpy(w)
            solution = self._fit_dual(X, Y, w, [first], largest_weight)
            del first
            loo = solution.loo

            def sample(index: np.ndarray) -> tuple[Any, ...]:
                values = None if loo is None else loo[index]
                return values, Y[index], w[index], host_rows(pick_rows(X, index))

            self._calibrate(X.shape[0], sample)
            self.statistics_ = None
            if self.keep_statistics:
                # partial_fit continues from the statistics of these rows: built from
                # them when it first needs them (O(n D^2)), not now
                self._training_rows = (_copied(X), Y.copy(), w.copy())
            self._store(solution, "dual")
        else:
            self._check_primal_memory()
            progress = self._progress()
            stats = ridge_statistics(rows, dataclasses.replace(work, head=head), y, w, progress)
            loo = ridge_loo(rows, work, y, w, progress)
            solution = self._checked_solve(stats, largest_weight, loo)
            self._store(solution, "primal")
            self._calibrate_primal(rows, work, (y, w), solution, stats)
        self._drop_unless_kept()
        self._follow_x(rows)

    def _partial_fit_rows(
        self,
        rows: Rows,
        y: Any,
        weights: tuple[Any, float | None],
        first: bool,
        head: Any = None,
        encoder: Any = None,
    ) -> None:
        """Add the statistics of ``rows`` to ``statistics_`` (from none on the ``first``
        call, which has fitted the map) and re-solve."""
        w, largest_weight = weights
        if first:
            self._check_primal_memory()
        else:
            self._resume_statistics()
        work = self._row_work(rows, encoder, check_labels=encoder is not None)
        head_work = dataclasses.replace(work, head=head)
        stats = ridge_statistics(rows, head_work, y, w, self._progress())
        if not first:
            stats = self._live_statistics().merge(stats)
        solution = self._checked_solve(stats, largest_weight, None)
        self._store(solution, "primal")
        self._calibrate_primal(rows, work, (y, w), solution, stats)
        self._drop_unless_kept()
        self._follow_x(rows)

    def _fit_dual(
        self, X: Any, Y: np.ndarray, w: np.ndarray, held: list[Any], largest_weight: float | None
    ) -> Any:
        """The dual solve: every row's features in one ``n x D`` matrix, then the
        ``n x n`` kernel matrix (:func:`dual_problem`, :func:`solve_dual`); ``held`` holds
        the features of the first rows."""
        first: Any = to_numpy(held.pop())
        n, D = X.shape[0], self.n_features_out_
        name = type(self).__name__
        check_memory(
            self._dual_bytes(n, first),
            f"{name}'s dual solve (the {n} x {D} features and the {n} x {n} kernel matrix)",
            "lower the number of features D (the feature map's n_components) or fit on fewer rows",
        )
        k = first.shape[0]
        progress = self._progress()
        with progress.rows("features", n) as counter:
            counter.add(k)
            blocks = _counted(self._block_rows(X, k), counter)
            if sp.issparse(first):
                parts = [first.tocsr()]
                parts += [sp.csr_matrix(self._features(X[rows])) for rows in blocks]
                Z = sp.vstack(parts, format="csr").astype(np.float64, copy=False)
            else:
                Z = np.empty((n, D))
                Z[:k] = first
                for rows in blocks:
                    Z[rows] = to_numpy(self._features(X[rows, ...]))
        del first
        start = time.perf_counter()
        dual = dual_problem(Z, Y, w, fit_intercept=self.fit_intercept)
        del Z
        check_sums(
            name,
            (dual.K, dual.z_mean),
            (dual.B, np.einsum("ij,ij->j", dual.B, dual.B), dual.y_mean),
            what=(
                "the weighted kernel matrix Z Z^T of the features",
                "the target sums y^T W y",
            ),
            largest_weight=largest_weight,
        )
        solution = solve_dual(
            dual,
            alpha=float(self.alpha),
            alphas=self._check_alphas(),
            selection=self.alpha_selection,
            loo_values=self._wants_loo(),
        )
        self._report_solve(progress, f"dual, n = {n:,}", solution, time.perf_counter() - start)
        return solution

    def _adopt(
        self,
        feature_map: Any,
        stats: RidgeStatistics,
        rows: Rows,
        y_1d: bool,
        largest_weight: float | None,
        targets: tuple[Any, Any],
    ) -> None:
        """Become the model of a fitted ``feature_map`` (None: "passthrough") solved at
        ``alpha`` from the statistics ``stats`` of its features on ``rows`` (a search's
        final model: no pass over the rows); ``targets``, the aligned targets (or labels)
        and weights of ``rows``, for a classifier's calibration."""
        self._reset()
        self._y_1d, self._n_targets = y_1d, stats.n_targets
        self.feature_map_ = feature_map
        self.n_features_out_ = stats.n_features
        solution = self._checked_solve(stats, largest_weight, None)
        self._store(solution, "primal")
        encoder = getattr(self, "_binarizer", None)
        work = self._row_work(rows, encoder) if self._wants_loo() else None
        self._calibrate_primal(rows, work, targets, solution, stats)
        self._drop_unless_kept()
        self._follow_x(rows)

    # -- leave-one-out values of the training rows ----------------------------------------

    def _wants_loo(self) -> bool:
        """Whether a fit needs the leave-one-out values of its rows (:meth:`_calibrate`)."""
        return False

    def _calibrate(
        self, n_rows: int, sample: Callable[[np.ndarray], tuple[np.ndarray, ...]]
    ) -> None:
        """What the classifier does with the leave-one-out values of the fit's ``n_rows``
        training rows: ``sample(index)`` gives those of the rows ``index`` (sorted), with
        their targets and weights (NumPy).  Nothing for a regressor."""

    def _calibrate_primal(
        self,
        rows: Rows,
        work: RowWork | None,
        targets: tuple[Any, Any],
        solution: Any,
        stats: Any,
    ) -> None:
        """:meth:`_calibrate` after a primal solve from the statistics ``stats`` of
        ``rows`` (their aligned targets and weights ``targets``): the leave-one-out
        values of a sample of them (:func:`loo_sample`) from the choice of penalty's
        eigendecomposition, else the Cholesky factor (:func:`penalty_terms`), computed
        only when asked for."""

        def sample(index: np.ndarray) -> tuple[np.ndarray, ...]:
            assert work is not None  # made whenever the values are wanted
            host = stats.to_host()
            terms = penalty_terms(
                host, solution.alpha, self.fit_intercept, solution.eig, solution.factor
            )
            return loo_sample(rows, work, *targets, terms, index)

        self._calibrate(rows.n_rows, sample)

    def _check_same_targets(self, n_targets: int, y_1d: bool) -> None:
        if n_targets != self._n_targets or y_1d != self._y_1d:
            raise ValueError(
                f"y has {n_targets} target(s) but the model was started with "
                f"{self._n_targets}; every call to partial_fit must give the same targets."
            )

    def _resume_statistics(self) -> None:
        """Make ``statistics_`` available to ``partial_fit``: as they are after a primal
        fit, built from the kept training rows after a dual one, or a clear error when
        ``keep_statistics=False`` dropped them."""
        if getattr(self, "statistics_", None) is not None:
            return
        rows = getattr(self, "_training_rows", None)
        if rows is None:
            raise ValueError(
                f"{type(self).__name__} was fitted with keep_statistics=False, which drops "
                "the statistics partial_fit continues from; refit with keep_statistics=True "
                "(the default) to add rows with partial_fit, or call fit on all the rows."
            )
        X, Y, w = rows
        self._check_primal_memory()
        training = as_rows(X)
        work = self._row_work(training)
        self.statistics_ = ridge_statistics(training, work, Y, w, self._progress())
        self._training_rows = None

    def _drop_unless_kept(self) -> None:
        """With ``keep_statistics=False``, drop what ``predict`` does not need."""
        if not self.keep_statistics:
            self.statistics_ = None
            self._training_rows = None

    def _checked_solve(
        self,
        stats: RidgeStatistics,
        largest_weight: float | None,
        loo: Callable[[Any], np.ndarray] | None,
    ) -> Any:
        """Check the statistics of the fit for overflow, keep them as ``statistics_``
        (where they are) and solve from their NumPy copy (:meth:`_solve`)."""
        host = stats.to_host()
        check_statistics(type(self).__name__, host, largest_weight=largest_weight)
        self.statistics_ = stats
        return self._solve(host, loo)

    def _solve(self, stats: RidgeStatistics, loo: Callable[[Any], np.ndarray] | None) -> Any:
        """Solve from the statistics ``stats`` (NumPy); ``loo`` (the pass over the rows
        again, from :func:`~kernelmaps.models._ridge._pass.ridge_loo`) allows exact
        leave-one-out.  The solve is reported without the time of that pass (which
        reports itself)."""
        progress = self._progress()
        start, passes = time.perf_counter(), [0.0]
        if progress.enabled and loo is not None:
            loo = _timed(loo, passes)
        solution = solve_ridge(
            stats,
            alpha=float(self.alpha),
            alphas=self._check_alphas(),
            selection=self.alpha_selection,
            fit_intercept=self.fit_intercept,
            loo=loo,
        )
        self._report_solve(progress, "primal", solution, time.perf_counter() - start - passes[0])
        return solution

    def _report_solve(self, progress: Progress, how: str, solution: Any, seconds: float) -> None:
        """The line of a solve: the width, the penalty and how it was chosen, the time."""
        if not progress.enabled:
            return
        alphas = self._check_alphas()
        chosen = "given"
        if solution.selection is not None and alphas is not None:
            rule = {"loo": "leave-one-out", "gcv": "GCV"}.get(solution.selection)
            chosen = f"chosen by {rule} among {alphas.size}"
        progress.log(
            f"solve ({how}): D = {self.n_features_out_:,}, alpha = {solution.alpha:.3g} "
            f"({chosen}) in {seconds:.2f} s"
        )

    def _store(self, solution: Any, solver: str) -> None:
        check_solution(type(self).__name__, solution.alpha, solution.coef, solution.intercept)
        self.alpha_ = solution.alpha
        self.solver_ = solver
        if solution.cv_errors is not None:
            self.cv_errors_ = solution.cv_errors
            self.alpha_selection_ = solution.selection
        else:
            self.__dict__.pop("cv_errors_", None)
            self.__dict__.pop("alpha_selection_", None)
        if self._y_1d:
            self.coef_ = solution.coef[0]
            self.intercept_ = float(solution.intercept[0])
        else:
            self.coef_ = solution.coef
            self.intercept_ = solution.intercept

    def _follow_x(self, rows: Rows) -> None:
        """After a fit on an array of another library: the fitted arrays named in
        ``_follows_x`` moved to its namespace and device (numbers in float64 where the
        device holds it, as the NumPy fit's; labels that are not numbers stay NumPy)."""
        xp, device = rows.fitted_place()
        if is_numpy(xp):
            return
        for name in self._follows_x:
            value = self.__dict__.get(name)
            if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
                dtype = accumulator_dtype(xp, device) if value.dtype.kind == "f" else None
                self.__dict__[name] = to_namespace(value, xp, device, dtype=dtype)

    def _decision(self, X: Any) -> Any:
        check_is_fitted(self, "coef_")
        coef = self.coef_ if self.coef_.ndim == 2 else self.coef_[None, :]
        out = predict_in_blocks(
            self, X, (coef.shape[0],), self._block_rows, functools.partial(self._predictor, coef)
        )
        return out[:, 0] if self._y_1d else out

    def _predictor(self, coef: Any, X: Any) -> Callable[[Any], Any]:
        """What :func:`predict_in_blocks` does to a block of the validated ``X``: on a
        device, in ``X``'s dtype there."""
        xp = get_namespace(X)[0]
        if is_numpy(xp):
            return lambda Xb: np.asarray(self._features(Xb) @ coef.T) + self.intercept_
        W = xp.astype(coef.T, X.dtype)
        b = self.intercept_
        if not isinstance(b, float):
            b = xp.astype(b, X.dtype)

        def block(Xb: Any) -> Any:
            Z = self._features(Xb)
            return Z @ xp.astype(W, Z.dtype, copy=False) + b

        return block


def _counted(blocks: Iterator[slice], counter: RowCounter) -> Iterator[slice]:
    """The row blocks ``blocks``, each added to ``counter`` once the caller is done
    with it."""
    for rows in blocks:
        yield rows
        counter.add(rows.stop - rows.start)


def _timed(function: Callable[..., Any], spent: list[float]) -> Callable[..., Any]:
    """``function``, its seconds added to ``spent[0]`` at every call."""

    def timed(*args: Any) -> Any:
        start = time.perf_counter()
        try:
            return function(*args)
        finally:
            spent[0] += time.perf_counter() - start

    return timed


def _copied(X: Any) -> Any:
    """A copy of the rows ``X`` (an array of any library, or a sparse matrix)."""
    xp = get_namespace(X)[0]
    return X.copy() if is_numpy(xp) else xp.asarray(X, copy=True)
