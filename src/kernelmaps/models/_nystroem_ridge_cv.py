"""Nyström kernel ridge regression with the bandwidth, the penalty and the number of
landmarks chosen by the search of :class:`FeatureRidgeCV`.

:class:`NystroemKernelRidgeCV` is :class:`FeatureRidgeCV` on the nested Nyström features
of :mod:`._search._nested_nystroem` (``Z = K_nm L^{-T}``, every number of landmarks a block of
the statistics of one pass), its final model turned into the
:class:`NystroemKernelRidge` it equals (``c = L^{-T} w``), or refitted by FALKON's
conjugate gradient at more landmarks than the exact search holds.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from numbers import Integral
from typing import Any, ClassVar

import numpy as np
from sklearn.model_selection import check_cv
from sklearn.utils._param_validation import StrOptions

from .._memory import available_memory
from .._rows import Rows
from .._validation import StrictInterval
from ..kernels import get_kernel_class, kernel_parameter_constraints
from ..sampling import LANDMARK_METHODS
from ._base import regression_rows
from ._feature_ridge_cv import FeatureRidgeCV, _RidgeSearchCV
from ._nystroem_ridge import NystroemKernelRidge
from ._search._batches import Best, RidgeSearch
from ._search._nested_nystroem import NestedNystroem, n_given

__all__ = ["NystroemKernelRidgeCV"]


@dataclasses.dataclass(frozen=True)
class _Plan:
    """The numbers of landmarks the exact search scores, and the number of the
    conjugate-gradient refit the largest of them stands for (None: no refit)."""

    widths: tuple[int, ...]
    refit: int | None


def _memory_limit(n_groups: int) -> int | None:
    """The most landmarks whose exact search fits in half the available memory: the
    ``m x m`` statistics of every fold and two merges (as
    :meth:`RidgeSearch.batch_size` counts them) and the map's five ``m x m`` arrays."""
    available = available_memory()
    if available is None:
        return None
    return max(1, int(math.sqrt(0.5 * available / (8.0 * (n_groups + 7)))))


def _takes_gamma(kernel: Any) -> bool:
    """Whether ``kernel`` is a name whose kernel has a ``gamma`` (tuned by the search)."""
    if not isinstance(kernel, str):
        return False
    return any(f.name == "gamma" for f in dataclasses.fields(get_kernel_class(kernel)))


def _pick(constraints: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    return {name: constraints[name] for name in names}


class NystroemKernelRidgeCV(FeatureRidgeCV):
    """Nyström kernel ridge regression with ``gamma``, ``alpha`` and the number of
    landmarks chosen by cross-validation, one pass over the rows per batch of bandwidths.

    The model of :class:`NystroemKernelRidge`: ``f(x) = sum_j c_j k(x, l_j)`` on ``m``
    landmarks, ``c`` the minimizer of

    .. math:: \\|y - K_{nm} c\\|^2 + \\alpha\\, c^T K_{mm} c

    (no intercept: centre ``y`` first where its mean matters).  With ``K_mm = L L^T``
    (Cholesky, landmarks in the order they were chosen) and ``w = L^T c`` this is ridge
    regression ``\\|y - Z w\\|^2 + \\alpha \\|w\\|^2`` on the Nyström features
    ``Z = K_nm L^{-T}`` (Williams & Seeger 2001), the features of
    ``Nystroem(landmarks=...)`` up to an orthogonal matrix (so the same model and the
    same scores), with the same ``alpha``.  :class:`FeatureRidgeCV`'s search scores
    every ``gamma x m' x alpha`` on them:

    * the features of a batch of bandwidths go to the per-fold ridge statistics in one
      pass over the rows; the scores of every penalty come from one eigendecomposition
      (GCV, the evidence, exact leave-one-out with one more pass, or exact K-fold);
    * nested numbers of landmarks: the first ``m'`` columns of ``Z`` are the features of
      the first ``m'`` landmarks (``L^{-T}`` is upper triangular), so every value of
      ``n_components_grid`` is a block of the statistics of the largest map, from the
      same pass.  The landmarks are kept in the order chosen: randomly pivoted Cholesky's
      pivots as picked (each prefix is an RPCholesky selection, Chen et al. 2022), the
      other methods' in a random order (each prefix of ``"uniform"`` is a uniform
      sample);
    * with ``gammas="auto"`` the bandwidths are nine, two decades either side of the
      data's rule, then ``refine_gamma`` golden-section passes;
    * ``search="halving"`` (the default) scores the bandwidths on samples of the rows
      with fewer landmarks first, and only the best on every row with every number of
      landmarks of the grid (:class:`FeatureRidgeCV`'s successive halving).

    The final model, ``best_estimator_``, is a :class:`NystroemKernelRidge`: up to
    ``max_exact_components`` landmarks, the best candidate solved from its statistics
    (no refit; ``c = L^{-T} w`` on the chosen landmarks, which its ``landmarks``
    parameter holds); above, see ``max_exact_components``.

    Parameters
    ----------
    kernel : str, Kernel or callable, default="rbf"
        As in :class:`NystroemKernelRidge`.  Only a kernel name with a ``gamma`` has its
        bandwidth searched; for the others ``gammas`` must be None or ``"auto"``.
    degree, coef0, kernel_params
        As in :class:`NystroemKernelRidge`.
    n_components : int, default=100
        The number of landmarks ``m`` (with ``n_components_grid=None``); at most
        ``n_samples``.
    landmarks : {"uniform", "kmeans", "leverage", "rpcholesky"} or array-like, default="uniform"
        How the landmarks are chosen, as in :class:`NystroemKernelRidge`, from all the
        training rows (see Notes: this leaks a little into the cross-validation), or the
        landmarks themselves, shape (m, n_features), in the order their prefixes are
        searched (``n_components`` is then ignored).
    gammas : "auto", array-like or None, default="auto"
        The bandwidths (:class:`FeatureRidgeCV`'s).
    alphas : "auto", array-like or float, default="auto"
        The penalties (a number: that one), on :class:`NystroemKernelRidge`'s scale;
        ``"auto"``: ``l_max 10^k``, ``k = -12, ..., 0``, ``l_max`` the largest eigenvalue
        of ``Z^T Z``.
    n_components_grid : array-like of int or None, default=None
        The numbers of landmarks ``m'`` searched, each the first ``m'`` of the largest
        (None: ``n_components`` alone).
    cv, criterion, scoring, refine_gamma, search
        As in :class:`FeatureRidgeCV` (``scoring`` one of ``"r2"``,
        ``"neg_mean_squared_error"``, ``"neg_root_mean_squared_error"``).
    max_exact_components : int, default=2048
        The most landmarks scored exactly, also bounded by the memory the ``m x m``
        statistics of every fold take (half the available memory).  When the largest
        number asked for, ``M``, is above it, the search runs at ``m_select`` (that bound)
        and at the values of the grid below it, and if ``m_select`` wins, the model is
        refitted at ``M`` landmarks with the chosen ``gamma`` and ``alpha`` by
        :class:`NystroemKernelRidge` (FALKON's conjugate gradient, one pass per
        iteration): ``best_params_["n_components"]`` is then ``M`` and ``best_score_``
        the score at ``m_select``.  At most one value of the grid may be above it, and
        that refit takes no ``sample_weight``.
    max_iter, tol, cache_size
        Those of the conjugate-gradient refit (:class:`NystroemKernelRidge`'s).
    random_state : int, Generator, SeedSequence, RandomState or None, default=None
        Source of the landmarks; every bandwidth draws from the same state (None: a seed
        drawn once per fit).
    verbose : int, default=0

    Attributes
    ----------
    best_estimator_ : NystroemKernelRidge
        The final model (fitted; ``n_iter_ = 0`` when solved from the statistics).
    best_params_ : dict
        ``{"gamma", "alpha", "n_components"}``.
    best_score_, best_index_, cv_results_, gamma_, alpha_, n_components_, n_splits_, scoring_
        As :class:`FeatureRidgeCV`'s (``n_components_`` the landmarks the final model
        holds: fewer than ``best_params_["n_components"]`` where some were skipped as
        round-off, e.g. duplicates given).
    landmarks_ : ndarray of shape (m, n_features)
    dual_coef_ : ndarray of shape (m,) or (m, n_targets)
        The final model's (landmarks skipped as round-off, see Notes, are left out).
    solver_ : {"statistics", "falkon"}
        Solved from the search's statistics, or refitted by conjugate gradient.
    n_iter_ : int
        The bandwidths the search evaluated (the grid, its extension at an edge and the
        golden-section steps); the refit's iterations are ``best_estimator_.n_iter_``.
    n_features_in_ : int
    feature_names_in_ : ndarray of str

    Notes
    -----
    Leakage.  The landmarks are chosen once, from all the rows (a map fitted per split
    would cost a pass per split), so a held-out row can be a landmark of the model it is
    scored by (``"uniform"``), or have shaped the choice (``"rpcholesky"``).  On cpu_act
    (8192 rows, 5-fold, ``gamma`` and ``alpha`` tuned on other splits), the K-fold R² of
    this search minus that of a brute-force K-fold whose landmarks come from each
    split's training rows is ``-0.0000 +- 0.0002`` (uniform) and ``-0.0009 +- 0.0005``
    (rpcholesky) at ``m = 256``, against a spread of 0.002 between the splits; at
    ``m = 32``, rpcholesky's is ``+0.012 +- 0.006`` (``benchmarks/nystroem_cv_leakage.py``).

    Rounding.  A landmark whose residual given the landmarks before it is at most
    ``1e-12 k(l, l)`` is skipped (its feature is zero, its coefficient dropped), as
    ``Nystroem`` drops the eigenvalues of ``K_mm`` below its cut-off; the decision
    depends on the landmarks before it only, so every prefix skips the same ones.

    Cost.  Per batch of bandwidths one pass over the rows, ``O(n m d)`` kernel
    evaluations and ``O(n m^2)`` for the statistics of each bandwidth, then ``O(m'^3)``
    per split and number of landmarks; no refit up to ``max_exact_components``.

    References
    ----------
    Williams, C. K. I. and Seeger, M. (2001). Using the Nyström method to speed up kernel
    machines. NIPS.
    Rudi, A., Carratino, L. and Rosasco, L. (2017). FALKON: An optimal large scale kernel
    method. NIPS.
    Chen, Y., Epperly, E. N., Tropp, J. A. and Webber, R. J. (2022). Randomly pivoted
    Cholesky: practical approximation of a kernel matrix with few entry evaluations.
    arXiv:2207.06503 (Comm. Pure Appl. Math. 78, 2025).

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from kernelmaps import NystroemKernelRidgeCV
    >>> X, y = load_diabetes(return_X_y=True)
    >>> cv = NystroemKernelRidgeCV(n_components=100, n_components_grid=[25, 50, 100],
    ...                            cv=5, random_state=0).fit(X, y - y.mean())
    >>> sorted(cv.best_params_), type(cv.best_estimator_).__name__
    (['alpha', 'gamma', 'n_components'], 'NystroemKernelRidge')
    >>> cv.predict(X[:3]).shape
    (3,)
    """

    _parameter_constraints: ClassVar[dict[str, list[Any] | str]] = {
        **kernel_parameter_constraints(named=("degree", "coef0"), callable_ok=True),
        **_pick(
            NystroemKernelRidge._parameter_constraints,
            ("n_components", "max_iter", "tol", "cache_size", "random_state"),
        ),
        "landmarks": [StrOptions(set(LANDMARK_METHODS)), "array-like"],
        **_pick(
            _RidgeSearchCV._parameter_constraints,
            ("gammas", "alphas", "n_components_grid", "cv", "criterion", "scoring"),
        ),
        **_pick(_RidgeSearchCV._parameter_constraints, ("refine_gamma", "search", "verbose")),
        "max_exact_components": [StrictInterval(Integral, 1, None, closed="left")],
    }

    # The settings of the shared search that NystroemKernelRidge's model fixes: no
    # intercept, no statistics kept, the map built from the kernel parameters.
    fit_intercept = False
    keep_statistics = False
    feature_map = None

    def __init__(
        self,
        kernel: Any = "rbf",
        *,
        degree: int | None = None,
        coef0: float | None = None,
        kernel_params: dict[str, Any] | None = None,
        n_components: int = 100,
        landmarks: Any = "uniform",
        gammas: Any = "auto",
        alphas: Any = "auto",
        n_components_grid: Any = None,
        cv: Any = None,
        criterion: str = "loo",
        scoring: str | None = None,
        refine_gamma: int = 3,
        search: str = "halving",
        max_exact_components: int = 2048,
        max_iter: int = 100,
        tol: float = 1e-6,
        cache_size: float = 2048,
        random_state: Any = None,
        verbose: int = 0,
    ) -> None:
        self.kernel = kernel
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.n_components = n_components
        self.landmarks = landmarks
        self.gammas = gammas
        self.alphas = alphas
        self.n_components_grid = n_components_grid
        self.cv = cv
        self.criterion = criterion
        self.scoring = scoring
        self.refine_gamma = refine_gamma
        self.search = search
        self.max_exact_components = max_exact_components
        self.max_iter = max_iter
        self.tol = tol
        self.cache_size = cache_size
        self.random_state = random_state
        self.verbose = verbose

    def fit(
        self, X: Any, y: Any, sample_weight: Any = None, groups: Any = None
    ) -> NystroemKernelRidgeCV:
        """Search on the nested Nyström features, then solve (or refit) the best model.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : array-like of shape (n_samples,), default=None
            Not with the conjugate-gradient refit (see ``max_exact_components``).
        groups : array-like of shape (n_samples,), default=None
            Group labels for a group splitter.

        Returns
        -------
        self : NystroemKernelRidgeCV
        """
        self._validate_params()
        rows, y = regression_rows(self, X, y, reset=True)
        self._y_1d = y.ndim == 1
        self._seed = self.random_state
        if self._seed is None:
            self._seed = int(np.random.default_rng().integers(2**32))
        self._plan = self._exact_plan(rows, groups)
        try:
            if self._plan.refit is not None and sample_weight is not None:
                raise ValueError(
                    f"sample_weight: the refit at n_components={self._plan.refit} above "
                    f"max_exact_components={self.max_exact_components} is "
                    "NystroemKernelRidge's, which takes no weights; drop sample_weight or "
                    "raise max_exact_components."
                )
            search, largest_weight = self._search(rows, y, sample_weight, groups, None)
            self._finish(search, rows, largest_weight)
            self.n_iter_ = len(search.gamma_scores)
            if self.solver_ == "falkon":
                assert search.best is not None
                self._refit(search.best, rows.X, y)
        finally:
            del self._plan  # a fit's working state, not a fitted attribute
        return self

    # -- the plan -----------------------------------------------------------------------

    def _exact_plan(self, rows: Rows, groups: Any) -> _Plan:
        """The numbers of landmarks scored exactly, and the refit above the bound."""
        given = not isinstance(self.landmarks, str)
        most = n_given(self.landmarks) if given else rows.n_rows
        asked = _RidgeSearchCV._grid(self, NestedNystroem())
        asked = asked or (most if given else int(self.n_components),)
        if max(asked) > most:
            warnings.warn(
                f"n_components={max(asked)} is larger than "
                f"{f'the {most} landmarks given' if given else f'n_samples={most}'}: "
                f"{most} landmarks are used. Give a smaller n_components (or "
                "n_components_grid).",
                UserWarning,
                stacklevel=3,
            )
            asked = tuple(sorted({min(m, most) for m in asked}))
        bound = int(self.max_exact_components)
        limit = _memory_limit(self._n_groups(rows, groups))
        if limit is not None:
            bound = min(bound, limit)
        above = [m for m in asked if m > bound]
        if not above:
            return _Plan(asked, None)
        if len(above) > 1:
            raise ValueError(
                f"n_components_grid has {len(above)} values above the exact bound {bound} "
                f"({above}); only one can be refitted by conjugate gradient: keep the "
                "largest, or raise max_exact_components."
            )
        return _Plan(tuple(sorted({*(m for m in asked if m < bound), bound})), above[0])

    def _n_groups(self, rows: Rows, groups: Any) -> int:
        """The statistics a pass keeps per candidate: one per split and the rest."""
        if self.cv is None:
            return 1
        if isinstance(self.cv, Integral):
            return int(self.cv) + 1
        splitter = check_cv(self.cv)
        return int(splitter.get_n_splits(np.empty((rows.n_rows, 0)), None, groups)) + 1

    # -- the hooks of the search --------------------------------------------------------

    def _base_map(self) -> NestedNystroem:
        return NestedNystroem(
            self.kernel,
            degree=self.degree,
            coef0=self.coef0,
            kernel_params=self.kernel_params,
            n_components=max(self._plan.widths),
            landmarks=self.landmarks,
            random_state=self._seed,
        )

    def _grid(self, base: Any) -> tuple[int, ...]:
        return self._plan.widths

    def _gamma_grid(self, rows: Rows, base: Any, w: Any = None) -> tuple[list[float | None], bool]:
        if _takes_gamma(self.kernel):
            return super()._gamma_grid(rows, base, w)
        if self.gammas is not None and not (isinstance(self.gammas, str) and self.gammas == "auto"):
            raise ValueError(
                f"gammas: kernel={self.kernel!r} has no gamma to search; give gammas=None "
                "to tune alpha and n_components only."
            )
        return [None], False

    # -- the final model ----------------------------------------------------------------

    def _kernel_ridge(self, best: Best, n_components: int, landmarks: Any) -> NystroemKernelRidge:
        return NystroemKernelRidge(
            self.kernel,
            gamma=best.gamma,
            degree=self.degree,
            coef0=self.coef0,
            kernel_params=self.kernel_params,
            n_components=n_components,
            landmarks=landmarks,
            alpha=best.alpha,
            max_iter=self.max_iter,
            tol=self.tol,
            cache_size=self.cache_size,
            random_state=self._seed,
        )

    def _finish(self, search: RidgeSearch, rows: Rows, largest_weight: float | None) -> None:
        """The search's results and the :class:`FeatureRidge` solved from the best
        statistics, turned into the :class:`NystroemKernelRidge` it equals (unless the
        conjugate-gradient refit is to replace it)."""
        super()._finish(search, rows, largest_weight)
        ridge, best = self.best_estimator_, search.best
        assert best is not None
        del self.feature_map_, self.coef_, self.intercept_
        self.noise_variance_, self._conformal = None, None  # no posterior: see _posterior
        if self._plan.refit is not None and best.width == max(self._plan.widths):
            self.solver_ = "falkon"
            return
        L, c, indices = ridge.feature_map_.dual_coefficients(ridge.coef_)
        model = self._kernel_ridge(best, L.shape[0], L)
        model.kernel_ = ridge.feature_map_.kernel_
        model.landmarks_, model.landmark_indices_, model.dual_coef_ = L, indices, c
        model.n_iter_, model.residual_, model.converged_, model.n_cached_rows_ = 0, 0.0, True, 0
        model.n_features_in_ = self.n_features_in_
        if hasattr(self, "feature_names_in_"):
            model.feature_names_in_ = self.feature_names_in_
        self._adopt_model(model, "statistics")

    def _posterior(self) -> Any:
        """None kept: the uncertainty methods say how to get one."""
        raise ValueError(
            "NystroemKernelRidgeCV keeps no posterior; fit NystroemKernelRidge(posterior=True) "
            "with the chosen parameters (best_params_) for return_std, return_cov, "
            "predict_interval, sample_y and sample_functions."
        )

    def _refit(self, best: Best, X: Any, y: Any) -> None:
        """The model at the ``n_components`` above the exact bound, by conjugate gradient,
        with the chosen ``gamma`` and ``alpha``."""
        m = self._plan.refit
        assert m is not None
        landmarks = self.landmarks if isinstance(self.landmarks, str) else self.landmarks[:m]
        model = self._kernel_ridge(best, m, landmarks).fit(X, y)
        self.n_components_ = self.best_params_["n_components"] = m
        self._adopt_model(model, "falkon")

    def _adopt_model(self, model: NystroemKernelRidge, solver: str) -> None:
        self.best_estimator_, self.solver_ = model, solver
        # the landmarks the model holds (a duplicate given is skipped as round-off)
        self.n_components_ = int(model.landmarks_.shape[0])
        self.landmarks_, self.dual_coef_ = model.landmarks_, model.dual_coef_
