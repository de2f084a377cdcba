"""L2-penalized logistic regression on the outputs of a feature map.

:class:`FeatureLogisticRegression` minimizes scikit-learn's ``LogisticRegression``
objective on ``z(x)`` by Newton's method with conjugate gradients preconditioned by
Böhning's bound (``kernelmaps.models._logistic``), one pass over the rows per gradient and
per Hessian-vector product.
"""

from __future__ import annotations

import functools
import warnings
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import LabelBinarizer
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.validation import check_is_fitted

from .._array_api import check_place, get_namespace, to_numpy
from .._array_types import is_dask_array
from .._rows import Rows, rowwise
from .._validation import StrictInterval
from ._base import classification_rows
from ._checks import check_statistics
from ._classifiers import LinearClassifierMixin
from ._logistic._newton import BoundPreconditioner, newton_cg
from ._logistic._passes import (
    add_sums,
    build_part,
    hessp,
    merge_statistics,
    statistics,
    to_host,
    to_rows,
    value_grad,
)
from ._ridge._pass import ZERO_WEIGHTS, checked_weights
from ._streaming_ridge import _StreamingRidgeMixin

__all__ = ["FeatureLogisticRegression"]


#: Bytes in a MiB (``cache_size``).
_MIB = 2**20


class FeatureLogisticRegression(LinearClassifierMixin, ClassifierMixin, _StreamingRidgeMixin):
    r"""L2-penalized logistic regression on the outputs of a feature map.

    With ``z(x)`` the features, ``s_i`` the sample weight times the class weight of row
    ``i`` and ``l_i`` its log-loss, ``fit`` minimizes scikit-learn's
    :class:`~sklearn.linear_model.LogisticRegression` objective (penalty ``"l2"``, the same
    scaling of ``C``; the intercept is not penalized):

    .. math::

        \min_{W, b} \; \frac{1}{2} \|W\|_F^2 + C \sum_i s_i \, l_i(W z(x_i) + b),

    binomial for two classes (one score, ``p = 1 / (1 + e^{-u})`` for ``classes_[1]``),
    multinomial (softmax over ``K`` scores) for more, so that the two agree on the same
    features.

    The solver is Newton's method with conjugate gradients (Lin, Weng & Keerthi 2008) and
    a line search, the conjugate gradients preconditioned by the Cholesky factor of
    Böhning's (1992) bound of the Hessian, ``I + C c_K [Z 1]^T S [Z 1]`` (``c_K = 1/4``
    for two classes, ``1/2`` on the class-centred directions for more; formed again with
    each row's own curvature bound at the current point after a Newton step of more than
    ``D / (8 K)`` conjugate-gradient steps), as LogisticFalkon does for Nyström features
    (Meanti et al. 2020).  The features are never all held
    unless they fit in ``cache_size``: each gradient and each Hessian-vector product is
    one pass over the rows, its sums merged in a fixed tree (one tree reduction per pass
    on a Dask array).

    Parameters
    ----------
    feature_map : transformer, "passthrough" or None, default=None
        As in :class:`FeatureRidge`: fitted on ``X`` by ``fit`` (a clone), None for
        :class:`RandomFourierFeatures` with default settings seeded by ``random_state``,
        ``"passthrough"`` for the rows themselves.
    C : float, default=1.0
        Inverse of the penalty strength, ``C > 0``, as in scikit-learn.
    fit_intercept : bool, default=True
        Fit unpenalized intercepts ``b``.
    class_weight : dict, "balanced" or None, default=None
        Weights of the classes, multiplied into the sample weights (scikit-learn's
        :func:`~sklearn.utils.class_weight.compute_class_weight`).
    warm_start : bool, default=False
        Start from the previous fit's coefficients, on its fitted feature map (which is
        not fitted again), when ``X`` has as many columns and ``y`` as many classes;
        otherwise a cold start.
    tol : float, default=1e-4
        Stop when the largest entry of the gradient divided by ``C sum_i s_i`` (the
        gradient of scikit-learn's objective) is at most ``tol``.
    max_iter : int, default=100
        Newton steps at most (a :class:`~sklearn.exceptions.ConvergenceWarning` when
        reached before ``tol``).
    cache_size : float, default=1024
        MiB the features of every row may take to be kept for the passes (in the dtype
        the map gives them); above it each pass maps the rows again.
    random_state : int, Generator, SeedSequence, RandomState or None, default=None
        Seed of the default map (``feature_map=None``) only.
    verbose : int, default=0
        1 prints a line per Newton step (objective, step length, conjugate-gradient
        steps, gradient).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    feature_map_ : transformer or None
    coef_ : ndarray of shape (1, D) for two classes, else (n_classes, D)
    intercept_ : ndarray of shape (1,) or (n_classes,)
    n_iter_ : ndarray of shape (1,)
        Newton steps of the last fit.
    objective_ : float
        The objective above at the solution.
    n_features_out_ : int
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined when ``X`` has string column names.

    Notes
    -----
    Cost: one pass of ``O(n D^2)`` for the bound's Gram matrix and ``O(D^3)`` for its
    factor (each time it is formed), then ``O(n D K)`` per gradient and per
    conjugate-gradient step, with few Newton steps (each ending in a line search, usually
    of one pass).  Memory: ``O(D^2 + K D)`` and a block of rows, plus the cached features
    (``n D`` in their dtype) where they fit ``cache_size``.  Dask arrays are fitted part
    by part (the features of a part cached on its worker where the cluster's memory
    allows); arrays of other libraries (array API dispatch on) on their device, the
    solver on the host in float64, and the fitted arrays moved to ``X``'s device.

    References
    ----------
    Böhning, D. (1992). Multinomial logistic regression algorithm. Annals of the Institute
    of Statistical Mathematics 44(1), 197-200.
    Lin, C.-J., Weng, R. C. and Keerthi, S. S. (2008). Trust region Newton method for
    large-scale logistic regression. JMLR 9, 627-650.
    Meanti, G., Carratino, L., Rosasco, L. and Rudi, A. (2020). Kernel methods through
    the roof: handling billions of points efficiently. NeurIPS.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from kernelmaps import FeatureLogisticRegression, RandomFourierFeatures
    >>> X, y = load_digits(return_X_y=True)
    >>> rff = RandomFourierFeatures(gamma=1e-3, n_components=300, random_state=0)
    >>> clf = FeatureLogisticRegression(rff, C=10.0).fit(X, y)
    >>> clf.predict_proba(X[:2]).shape
    (2, 10)
    """

    _parameter_constraints: ClassVar[dict[str, list[Any] | str]] = {
        "feature_map": [HasMethods(["fit", "transform"]), StrOptions({"passthrough"}), None],
        "C": [StrictInterval(Real, 0.0, None, closed="neither")],
        "fit_intercept": ["boolean"],
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "warm_start": ["boolean"],
        "tol": [Interval(Real, 0.0, None, closed="left")],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "cache_size": [Interval(Real, 0.0, None, closed="left")],
        "random_state": ["random_state", np.random.Generator, np.random.SeedSequence],
        "verbose": [Interval(Integral, 0, None, closed="left"), "boolean"],
    }

    intercept_: Any

    _follows_x: ClassVar[tuple[str, ...]] = ("coef_", "intercept_", "classes_", "n_iter_")

    def __init__(
        self,
        feature_map: Any = None,
        *,
        C: float = 1.0,
        fit_intercept: bool = True,
        class_weight: Any = None,
        warm_start: bool = False,
        tol: float = 1e-4,
        max_iter: int = 100,
        cache_size: float = 1024,
        random_state: Any = None,
        verbose: int = 0,
    ) -> None:
        self.feature_map = feature_map
        self.C = C
        self.fit_intercept = fit_intercept
        self.class_weight = class_weight
        self.warm_start = warm_start
        self.tol = tol
        self.max_iter = max_iter
        self.cache_size = cache_size
        self.random_state = random_state
        self.verbose = verbose

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> FeatureLogisticRegression:
        """Fit the feature map on ``X`` (unless warm-started), then the logistic
        regression on its features.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features)
        y : array-like or dask array of shape (n_samples,)
        sample_weight : array-like or dask array of shape (n_samples,), default=None

        Returns
        -------
        self
        """
        self._validate_params()
        start = self._warm_start_point()
        n_features_in = getattr(self, "n_features_in_", None)
        rows, y = classification_rows(self, X, y, reset=True)
        self._set_classes(rows.distinct(y), rows.n_rows)
        y = rows.align(y)
        K = self._class_targets()
        if start is not None and (start[1].shape[0] != K or n_features_in != rows.n_features):
            start = None  # another problem: a cold start
        if start is None:
            self._start(rows, K, False)
        weights = checked_weights(rows, sample_weight)
        theta0 = self._theta(*start) if start is not None else None
        self._solve_rows(rows, y, weights, theta0)
        self._follow_x(rows)
        return self

    def _warm_start_point(self) -> tuple[Any, np.ndarray, np.ndarray] | None:
        """``(feature_map_, coef_, intercept_)`` of the previous fit to start from, or
        None."""
        if not (self.warm_start and hasattr(self, "coef_")):
            return None
        return self.feature_map_, to_numpy(self.coef_), to_numpy(self.intercept_)

    def _theta(self, feature_map: Any, coef: np.ndarray, intercept: np.ndarray) -> Any:
        """The solver's ``(K, D [+ 1])`` start from a previous fit's arrays."""
        self.feature_map_ = feature_map
        self._n_targets = coef.shape[0]
        self._y_1d = False
        if coef.shape[1] != self.n_features_out_:
            return None
        columns = [coef, intercept[:, None]] if self.fit_intercept else [coef]
        return np.hstack(columns).astype(np.float64)

    def _class_weights(self, y: Any, w: Any) -> np.ndarray | None:
        """One weight per class of ``class_weight`` (None without it), from the labels
        and sample weights (gathered to the host: one vector each)."""
        if self.class_weight is None:
            return None
        labels = y.compute() if is_dask_array(y) else y
        if w is not None and np.ndim(w):
            w = to_numpy(w.compute() if is_dask_array(w) else w)
        else:
            w = None
        classes = to_numpy(self.classes_)
        with np.errstate(divide="ignore"):
            weights = compute_class_weight(
                self.class_weight, classes=classes, y=np.asarray(to_numpy(labels)), sample_weight=w
            )
        empty = classes[~np.isfinite(weights)]
        if empty.size:
            raise ValueError(
                f"class_weight='balanced' cannot weigh the classes {empty.tolist()}: their "
                "sample weights sum to 0; give their rows positive weights or drop them."
            )
        return weights

    def _cached(self, rows: Rows) -> bool:
        """Whether the features of every row fit in ``cache_size`` (and the cluster's
        memory)."""
        budget = float(self.cache_size) * _MIB
        room = rows.cache_budget()
        if room is not None:
            budget = min(budget, room)
        return rows.n_rows * self.n_features_out_ * rows.dtype.itemsize <= budget

    def _solve_rows(
        self, rows: Rows, y: Any, weights: tuple[Any, float | None], theta0: Any
    ) -> None:
        """Persist the parts of ``rows``, then Newton-CG over them (module
        ``kernelmaps.models._logistic``); sets the fitted attributes."""
        w, largest_weight = weights
        self._check_primal_memory()
        encoder = LabelBinarizer(neg_label=0, pos_label=1).fit(to_numpy(self.classes_))
        build = functools.partial(
            build_part,
            work=self._row_work(rows, encoder),
            class_weight=self._class_weights(y, w),
            cache=self._cached(rows),
        )
        parts = rows.persist(build, y, w)
        try:
            result = self._newton(parts, rows, theta0, largest_weight)
        finally:
            parts.release()
        self._store_theta(result.theta)
        self.n_iter_ = np.array([result.n_iter], dtype=np.int32)
        self.objective_ = float(result.objective)
        if not result.converged:
            warnings.warn(
                f"{type(self).__name__} did not reach tol={self.tol:g} in "
                f"{result.n_iter} Newton steps (max_iter={self.max_iter}); increase "
                "max_iter, or scale the features.",
                ConvergenceWarning,
                stacklevel=3,
            )

    def _newton(self, parts: Any, rows: Rows, theta0: Any, largest_weight: Any) -> Any:
        """Newton-CG from ``theta0`` (zeros when None), each evaluation one pass."""
        K, D, C = self._n_targets, self.n_features_out_, float(self.C)
        intercept = bool(self.fit_intercept)
        xp, device = rows.xp, rows.device
        weight_sum = [0.0]

        def split(theta: np.ndarray) -> tuple[Any, Any]:
            b = theta[:, D] if intercept else np.zeros(K)
            return to_rows(theta[:, :D], xp, device), to_rows(np.ascontiguousarray(b), xp, device)

        def joined(W_part: np.ndarray, b_part: np.ndarray) -> np.ndarray:
            return np.hstack([W_part, b_part[:, None]]) if intercept else W_part

        # the point of the passes so far and its number, which the parts' kept
        # probabilities are named by (newton_cg evaluates a point, then takes the
        # Hessian's products at that very array)
        point: list[Any] = [None, 0]

        def number(theta: np.ndarray) -> int:
            if theta is not point[0]:
                point[:] = [theta, point[1] + 1]
            return int(point[1])

        def evaluate(theta: np.ndarray) -> tuple[float, np.ndarray]:
            loss, grad_W, grad_b = parts.map_reduce(
                value_grad, add_sums, *split(theta), number(theta)
            )
            W = theta[:, :D]
            f = 0.5 * float(np.vdot(W, W)) + C * float(to_host(loss))
            return f, joined(W + C * to_host(grad_W), C * to_host(grad_b))

        def product(theta: np.ndarray, V: np.ndarray) -> np.ndarray:
            out_W, out_b = parts.map_reduce(
                hessp, add_sums, *split(theta), *split(V), number(theta)
            )
            return joined(V[:, :D] + C * to_host(out_W), C * to_host(out_b))

        def preconditioner(theta: np.ndarray) -> BoundPreconditioner:
            stats, weight_sum[0] = parts.map_reduce(statistics, merge_statistics, *split(theta))
            if not weight_sum[0] > 0:
                raise ValueError(ZERO_WEIGHTS)
            stats = stats.to_host()
            check_statistics(type(self).__name__, stats, largest_weight=largest_weight)
            return BoundPreconditioner(stats, C, K, intercept)

        progress = self._progress()
        theta = np.zeros((K, D + intercept)) if theta0 is None else theta0
        precondition = preconditioner(theta)
        return newton_cg(
            evaluate,
            product,
            lambda at: precondition if at is theta else preconditioner(at),
            theta,
            gradient_scale=C * weight_sum[0],
            tol=float(self.tol),
            max_iter=int(self.max_iter),
            refresh_steps=max(3, D // (8 * K)),
            log=progress.log if progress.enabled else None,
        )

    def _store_theta(self, theta: np.ndarray) -> None:
        D = self.n_features_out_
        self.coef_ = np.ascontiguousarray(theta[:, :D])
        self.intercept_ = theta[:, D].copy() if self.fit_intercept else np.zeros(theta.shape[0])

    @rowwise
    def predict_log_proba(self, X: Any) -> Any:
        """Log-probabilities of the classes, ``log p(c | x)``, without overflow.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``.
        """
        check_is_fitted(self, "coef_")
        check_place(self, X, "predict_log_proba")
        scores = self._decision(X)
        xp = get_namespace(scores)[0]
        if scores.shape[1] == 1:
            both = xp.concat([-scores, scores], axis=1)
            return -xp.logaddexp(xp.zeros_like(both), -both)
        top = xp.max(scores, axis=1, keepdims=True)
        return scores - top - xp.log(xp.sum(xp.exp(scores - top), axis=1, keepdims=True))

    @rowwise
    def predict_proba(self, X: Any) -> Any:
        """Probabilities of the classes: the sigmoid of the score for two classes, the
        softmax of the scores for more.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``; each row sums to 1.
        """
        check_is_fitted(self, "coef_")
        check_place(self, X, "predict_proba")
        log_proba = self.predict_log_proba(X)
        return get_namespace(log_proba)[0].exp(log_proba)

    def _reset(self) -> None:
        super()._reset()
        for name in ("n_iter_", "objective_"):
            self.__dict__.pop(name, None)
