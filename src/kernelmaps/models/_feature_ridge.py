"""Ridge regression on explicit features, with the Gram matrix accumulated over row blocks.

``FeatureRidge`` maps the rows of ``X`` block by block through a feature map ``z`` and
adds each block's contribution to ``Z^T W Z`` and ``Z^T W y``; the ``n x D`` feature matrix
``Z`` is never held whole, so the memory is ``O(D^2 + block * D)`` whatever ``n`` is.
"""

from __future__ import annotations

from numbers import Real
from typing import Any, ClassVar

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.utils import get_tags
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from ..feature_maps import RandomFourierFeatures, row_blocks
from ._base import FLOAT_DTYPES, as_row_sliceable, output_dtype, validate_regression_data

__all__ = ["FeatureRidge"]


def _as_float64(Z: Any) -> Any:
    if sp.issparse(Z):
        return Z.tocsr().astype(np.float64, copy=False)
    return np.asarray(Z, dtype=np.float64)


class _StreamingRidgeMixin(BaseEstimator):
    """Streaming ridge machinery shared by :class:`FeatureRidge` and its classifier."""

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "feature_map": [HasMethods(["fit", "transform"]), StrOptions({"passthrough"}), None],
        "alpha": [Interval(Real, 0.0, None, closed="neither")],
        "alphas": ["array-like", None],
        "alpha_selection": [StrOptions({"auto", "loo", "gcv"})],
        "fit_intercept": ["boolean"],
    }

    feature_map: Any
    alpha: float
    alphas: Any
    alpha_selection: str
    fit_intercept: bool

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

    def _check_alphas(self) -> np.ndarray | None:
        if self.alphas is None:
            return None
        alphas = np.asarray(self.alphas, dtype=np.float64).reshape(-1)
        if alphas.size == 0 or not np.all(np.isfinite(alphas)) or np.any(alphas <= 0):
            raise ValueError(
                f"alphas must be a non-empty list of positive finite numbers; got "
                f"{self.alphas!r}. Give candidate penalties such as np.logspace(-3, 3, 13)."
            )
        return alphas

    def _new_feature_map(self) -> Any:
        if self.feature_map is None:
            return RandomFourierFeatures()
        if isinstance(self.feature_map, str):  # "passthrough"
            return None
        return clone(self.feature_map)

    def _features(self, X: Any) -> Any:
        if self.feature_map_ is None:
            return X
        return self.feature_map_.transform(X)

    def _block_rows(self, X: Any) -> Any:
        n_targets = 1 if getattr(self, "_gram", None) is None else self._zty.shape[1]
        per_row = 8.0 * (3 * self.n_features_out_ + X.shape[1] + n_targets)
        return row_blocks(X.shape[0], per_row)

    # -- accumulation -------------------------------------------------------------------

    def _reset_statistics(self) -> None:
        for name in ("_gram", "_zty", "_sum_z", "_sum_y", "_yty", "_shift_z", "_shift_y"):
            if hasattr(self, name):
                delattr(self, name)
        self._sw_sum = 0.0
        self._n_seen = 0

    def _start(self, X: Any, n_targets: int) -> None:
        """Fit the feature map on ``X`` (the first data seen) and allocate the statistics."""
        self.feature_map_ = self._new_feature_map()
        if self.feature_map_ is not None:
            self.feature_map_.fit(X)
            D = int(self.feature_map_.transform(X[:1]).shape[1])
        else:
            D = int(X.shape[1])
        self.n_features_out_ = D
        self._reset_statistics()
        self._gram = np.zeros((D, D))
        self._zty = np.zeros((D, n_targets))
        self._sum_z = np.zeros(D)
        self._sum_y = np.zeros(n_targets)
        self._yty = np.zeros(n_targets)
        self._shift_z = np.zeros(D)
        self._shift_y = np.zeros(n_targets)
        self._shift_set = not self.fit_intercept

    def _accumulate(self, Z: Any, Y: np.ndarray, w: np.ndarray) -> None:
        """Add the block ``(Z, Y)`` with weights ``w`` to the sufficient statistics.

        With an intercept, dense features and targets are shifted by the weighted means of
        the first block before the products are summed, which keeps the centred Gram
        matrix ``Z^T W Z - S_w zbar zbar^T`` free of cancellation when the features have
        a large common offset.
        """
        Z = _as_float64(Z)
        sparse = sp.issparse(Z)
        if not self._shift_set:
            total = w.sum()
            if total > 0:
                self._shift_y = (w @ Y) / total
                if not sparse:
                    self._shift_z = (w @ Z) / total
                self._shift_set = True
        Yc = Y - self._shift_y
        if sparse:
            Zw = sp.diags(w) @ Z
            self._gram += (Z.T @ Zw).toarray()
            self._zty += np.asarray(Zw.T @ Yc)
            self._sum_z += np.asarray(Zw.sum(axis=0)).ravel()
        else:
            Zc = Z - self._shift_z
            Zw = Zc * w[:, None]
            self._gram += Zc.T @ Zw
            self._zty += Zw.T @ Yc
            self._sum_z += Zw.sum(axis=0)
        self._sum_y += w @ Yc
        self._yty += w @ (Yc * Yc)
        self._sw_sum += float(w.sum())
        self._n_seen += Z.shape[0]

    def _centred_statistics(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``G_c``, ``C_c`` and ``sum w (y - ybar)^2`` (uncentred without an intercept)."""
        G, C, yy = self._gram.copy(), self._zty.copy(), self._yty.copy()
        if self.fit_intercept and self._sw_sum > 0:
            a, b = self._sum_z, self._sum_y
            G -= np.outer(a, a) / self._sw_sum
            C -= np.outer(a, b) / self._sw_sum
            yy -= b * b / self._sw_sum
        return G, C, yy

    def _means(self) -> tuple[np.ndarray, np.ndarray]:
        if not self.fit_intercept or self._sw_sum <= 0:
            return np.zeros_like(self._sum_z), np.zeros_like(self._sum_y)
        return (
            self._shift_z + self._sum_z / self._sw_sum,
            self._shift_y + self._sum_y / self._sw_sum,
        )

    # -- solving ------------------------------------------------------------------------

    def _solve(self, X: Any = None, sample_weight: np.ndarray | None = None) -> None:
        """Solve for the coefficients; with ``alphas``, choose alpha first.

        ``X`` (with its weights) is given by ``fit`` for exact leave-one-out, which needs a
        second pass over the rows; ``partial_fit`` passes ``None`` and uses GCV.
        """
        G, C, yy = self._centred_statistics()
        z_mean, y_mean = self._means()
        alphas = self._check_alphas()
        D = G.shape[0]
        if alphas is None:
            self.alpha_ = float(self.alpha)
            A = G.copy()
            A[np.diag_indices(D)] += self.alpha_
            try:
                W = scipy.linalg.cho_solve(scipy.linalg.cho_factor(A, lower=True), C)
            except scipy.linalg.LinAlgError:  # pragma: no cover - alpha > 0 makes A SPD
                W = scipy.linalg.solve(A, C, assume_a="sym")
        else:
            evals, V = scipy.linalg.eigh(G)
            evals = np.clip(evals, 0.0, None)
            Q = V.T @ C
            selection = self.alpha_selection
            if selection == "auto":
                selection = "loo" if X is not None else "gcv"
            if selection == "loo":
                if X is None:
                    raise ValueError(
                        "alpha_selection='loo' needs every row again, but partial_fit keeps "
                        "only Z^T Z and Z^T y; use alpha_selection='gcv' (or 'auto') with "
                        "partial_fit, or call fit on the whole data."
                    )
                errors = self._loo_errors(X, sample_weight, evals, V, Q, z_mean, y_mean, alphas)
            else:
                errors = self._gcv_errors(evals, Q, yy, alphas)
            best = int(np.argmin(errors))
            self.alpha_ = float(alphas[best])
            self.cv_errors_ = errors
            self.alpha_selection_ = selection
            W = V @ (Q / (evals + self.alpha_)[:, None])
        coef = W.T  # (n_targets, D)
        intercept = y_mean - coef @ z_mean
        if self._y_1d:
            self.coef_ = coef[0]
            self.intercept_ = float(intercept[0])
        else:
            self.coef_ = coef
            self.intercept_ = intercept

    def _gcv_errors(
        self, evals: np.ndarray, Q: np.ndarray, yy: np.ndarray, alphas: np.ndarray
    ) -> np.ndarray:
        """Generalized cross-validation (Golub, Heath & Wahba 1979) for every alpha.

        ``GCV(alpha) = (RSS(alpha) / S_w) / (1 - df(alpha) / n)^2`` with
        ``RSS = sum w (y - yhat)^2 = S_yy - sum_k q_k^2 (l_k + 2 alpha) / (l_k + alpha)^2``
        and ``df = [intercept] + sum_k l_k / (l_k + alpha)``, from the eigenpairs
        ``(l_k, v_k)`` of the centred Gram matrix and ``q = V^T Z_c^T W y``.
        """
        n = float(self._n_seen)
        errors = np.empty(alphas.shape[0])
        q2 = Q * Q
        for j, a in enumerate(alphas):
            rss = yy - ((evals + 2 * a) / (evals + a) ** 2) @ q2
            df = float(self.fit_intercept) + float(np.sum(evals / (evals + a)))
            denom = (1.0 - df / n) ** 2 if df < n else 0.0
            mse = float(np.mean(np.clip(rss, 0.0, None))) / max(self._sw_sum, 1e-300)
            errors[j] = mse / denom if denom > 0 else np.inf
        return errors

    def _loo_errors(
        self,
        X: Any,
        sample_weight: np.ndarray | None,
        evals: np.ndarray,
        V: np.ndarray,
        Q: np.ndarray,
        z_mean: np.ndarray,
        y_mean: np.ndarray,
        alphas: np.ndarray,
    ) -> np.ndarray:
        """Exact leave-one-out mean squared error for every alpha, in one more pass.

        With the unpenalized intercept the hat matrix of the weighted problem splits, because
        the intercept column is orthogonal to the weighted-centred features:
        ``h_i = w_i / S_w + w_i p_i^T diag(1 / (l + alpha)) p_i`` with
        ``p_i = V^T (z_i - zbar)``, and the leave-one-out residual is
        ``(y_i - yhat_i) / (1 - h_i)`` (Allen 1974; the identity RidgeCV uses), so no refit is
        needed for any alpha.  The error is ``sum_i w_i r_i^2 / S_w``, averaged over targets.
        """
        Y_all = self._y_fit
        n = X.shape[0]
        w_all = np.ones(n) if sample_weight is None else sample_weight
        totals = np.zeros(alphas.shape[0])
        inv = 1.0 / (evals[:, None] + alphas[None, :])  # (D, n_alphas)
        shift = z_mean @ V
        for rows in self._block_rows(X):
            Z = _as_float64(self._features(X[rows]))
            P = np.asarray(Z @ V) - shift
            w = w_all[rows]
            Yc = Y_all[rows] - y_mean
            h = (P * P) @ inv * w[:, None]
            if self.fit_intercept:
                h += (w / self._sw_sum)[:, None]
            for j in range(alphas.shape[0]):
                fitted = P @ (Q * inv[:, j : j + 1])
                resid = (Yc - fitted) / (1.0 - h[:, j : j + 1])
                totals[j] += float(w @ (resid * resid).sum(axis=1))
        return totals / (max(self._sw_sum, 1e-300) * Y_all.shape[1])

    # -- fitting entry points -----------------------------------------------------------

    def _fit_targets(self, X: Any, Y: np.ndarray, sample_weight: Any) -> None:
        X = as_row_sliceable(X)
        sw = None if sample_weight is None else _check_sample_weight(sample_weight, X)
        self._y_1d = Y.ndim == 1
        Y2 = Y.reshape(Y.shape[0], -1).astype(np.float64, copy=False)
        self._start(X, Y2.shape[1])
        w_all = np.ones(X.shape[0]) if sw is None else np.asarray(sw, dtype=np.float64)
        for rows in self._block_rows(X):
            self._accumulate(self._features(X[rows]), Y2[rows], w_all[rows])
        self._y_fit = Y2
        try:
            self._solve(X, None if sw is None else w_all)
        finally:
            del self._y_fit

    def _partial_fit_targets(self, X: Any, Y: np.ndarray, sample_weight: Any) -> None:
        X = as_row_sliceable(X)
        sw = None if sample_weight is None else _check_sample_weight(sample_weight, X)
        Y2 = Y.reshape(Y.shape[0], -1).astype(np.float64, copy=False)
        if getattr(self, "_gram", None) is None:
            self._y_1d = Y.ndim == 1
            self._start(X, Y2.shape[1])
        elif Y2.shape[1] != self._zty.shape[1] or (Y.ndim == 1) != self._y_1d:
            raise ValueError(
                f"y has {Y2.shape[1]} target(s) but the model was started with "
                f"{self._zty.shape[1]}; every call to partial_fit must give the same targets."
            )
        w_all = np.ones(X.shape[0]) if sw is None else np.asarray(sw, dtype=np.float64)
        for rows in self._block_rows(X):
            self._accumulate(self._features(X[rows]), Y2[rows], w_all[rows])
        self._solve(None, None)

    def _decision(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, accept_sparse=("csr", "csc"), dtype=FLOAT_DTYPES, reset=False)
        X = as_row_sliceable(X)
        coef = np.atleast_2d(self.coef_)
        out = np.empty((X.shape[0], coef.shape[0]), dtype=output_dtype(X))
        for rows in self._block_rows(X):
            out[rows] = np.asarray(self._features(X[rows]) @ coef.T) + self.intercept_
        return out[:, 0] if self._y_1d else out


class FeatureRidge(RegressorMixin, _StreamingRidgeMixin):
    """Ridge regression on the outputs of a feature map, streamed over row blocks.

    Fits ``f(x) = w^T z(x) + b`` minimizing
    ``sum_i s_i (y_i - w^T z(x_i) - b)^2 + alpha |w|^2`` (``s_i`` the sample weights, ``b``
    not penalized) through the primal normal equations ``(Z_c^T S Z_c + alpha I) w =
    Z_c^T S y_c``, where ``Z_c`` is ``Z`` centred by its weighted column means.  ``Z^T S Z``
    and ``Z^T S y`` are accumulated over row blocks (sized by scikit-learn's
    ``working_memory``), so the ``n x D`` matrix ``Z`` is never held in memory; the weighted
    means come from the same pass.

    Parameters
    ----------
    feature_map : transformer, "passthrough" or None, default=None
        Any scikit-learn transformer (an object with ``fit`` and ``transform``), e.g.
        :class:`~kernelmaps.RandomFourierFeatures`, :class:`~kernelmaps.RandomBinningFeatures`
        (sparse output is handled as such) or :class:`sklearn.kernel_approximation.Nystroem`.
        It is cloned and fitted on the first data seen: all of ``X`` in ``fit``, the first
        block in ``partial_fit``.  Data-independent maps (random Fourier features) use only
        the number of columns; data-dependent ones (Nyström landmarks, binning grids) learn
        from that first data, so give ``partial_fit`` a representative first block.
        ``"passthrough"`` uses ``X`` itself (linear ridge); ``None`` means
        ``RandomFourierFeatures()``.
    alpha : float, default=1.0
        Ridge penalty ``alpha > 0`` (used when ``alphas`` is None).
    alphas : array-like of float, default=None
        Candidate penalties.  The one with the smallest leave-one-out (or GCV) error is
        chosen from one eigendecomposition of the centred Gram matrix, without refitting.
    alpha_selection : {"auto", "loo", "gcv"}, default="auto"
        How ``alphas`` are compared.  ``"loo"``: exact leave-one-out mean squared error (one
        more pass over ``X`` in ``fit``).  ``"gcv"``: generalized cross-validation, from the
        accumulated statistics alone.  ``"auto"``: ``"loo"`` in ``fit``, ``"gcv"`` in
        ``partial_fit`` (the rows are gone by then).
    fit_intercept : bool, default=True
        Fit the unpenalized intercept ``b``.

    Attributes
    ----------
    feature_map_ : transformer or None
        The fitted feature map (None for ``"passthrough"``).
    coef_ : ndarray of shape (n_features_out_,) or (n_targets, n_features_out_)
        The weights ``w`` (float64).
    intercept_ : float or ndarray of shape (n_targets,)
    alpha_ : float
        The penalty used (the chosen one with ``alphas``).
    cv_errors_ : ndarray of shape (n_alphas,)
        With ``alphas``: the leave-one-out or GCV error of each candidate (mean over targets).
    alpha_selection_ : str
        With ``alphas``: ``"loo"`` or ``"gcv"``, what was used.
    n_features_out_ : int
        Number of features ``D`` produced by the map.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Defined when ``X`` has string column names.

    Notes
    -----
    Cost: one pass of the map over ``X`` plus ``O(n D^2)`` for the Gram matrix, then
    ``O(D^3)`` for the Cholesky solve (or the eigendecomposition with ``alphas``; exact
    leave-one-out adds a second pass, ``O(n D (D + n_alphas n_targets))``).  Memory
    ``O(D^2 + block D)``; accumulation is in float64 whatever the input dtype, and float32
    input gives float32 predictions.

    The primal solution equals kernel ridge regression with the approximate kernel
    ``z(x)^T z(y)`` (push-through identity ``(Z^T Z + alpha I)^{-1} Z^T = Z^T (Z Z^T +
    alpha I)^{-1}``).  With random Fourier features, every entry of ``Z Z^T`` is within
    ``eps = 2 sqrt(log(2 N / delta) / D)`` of ``K`` for ``N`` pairs with probability
    ``1 - delta`` (Hoeffding; Rahimi & Recht 2007), and then a prediction of the
    ``n``-sample model is within ``eps sqrt(n) (|c_hat| + n |c| / alpha)`` of exact kernel
    ridge regression's (``c``, ``c_hat`` the dual coefficients), so the two agree as ``D``
    grows.

    References
    ----------
    Rahimi, A. and Recht, B. (2007). Random features for large-scale kernel machines. NIPS.
    Golub, G. H., Heath, M. and Wahba, G. (1979). Generalized cross-validation as a method
    for choosing a good ridge parameter. Technometrics 21(2).
    Allen, D. M. (1974). The relationship between variable selection and data augmentation
    and a method for prediction. Technometrics 16(1).

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from kernelmaps import FeatureRidge, RandomFourierFeatures
    >>> X, y = load_diabetes(return_X_y=True)
    >>> rff = RandomFourierFeatures(gamma=0.5, n_components=200, random_state=0)
    >>> model = FeatureRidge(rff, alphas=[1e-3, 1e-2, 1e-1, 1.0]).fit(X, y)
    >>> model.predict(X[:3]).shape
    (3,)
    """

    def __init__(
        self,
        feature_map: Any = None,
        *,
        alpha: float = 1.0,
        alphas: Any = None,
        alpha_selection: str = "auto",
        fit_intercept: bool = True,
    ) -> None:
        self.feature_map = feature_map
        self.alpha = alpha
        self.alphas = alphas
        self.alpha_selection = alpha_selection
        self.fit_intercept = fit_intercept

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> FeatureRidge:
        """Fit the feature map on ``X``, then the ridge weights, in row blocks.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self
        """
        self._validate_params()
        X, y = validate_regression_data(self, X, y)
        self._fit_targets(X, np.asarray(y), sample_weight)
        return self

    def partial_fit(self, X: Any, y: Any, sample_weight: Any = None) -> FeatureRidge:
        """Add a block of rows to the accumulated statistics and re-solve.

        The first call fits the feature map on this block.  The result after several calls
        equals ``fit`` on the rows concatenated (for a map that does not depend on the
        data, or the same fitted map), up to rounding.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,) or (n_samples, n_targets)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self
        """
        first = getattr(self, "_gram", None) is None
        if first:
            self._validate_params()
        X, y = validate_regression_data(self, X, y, reset=first)
        self._partial_fit_targets(X, np.asarray(y), sample_weight)
        return self

    def predict(self, X: Any) -> np.ndarray:
        """Predict ``w^T z(x) + b``, mapping ``X`` in row blocks.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_targets)
            float32 for float32 input.
        """
        return self._decision(X)
