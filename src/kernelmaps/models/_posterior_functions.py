"""Functions drawn from a model's posterior, evaluated at any rows in blocks.

:class:`PosteriorFunctions` is what ``sample_functions`` of the regressors returns: a fitted,
picklable object whose call ``paths(X)`` evaluates every drawn function at the rows ``X``,
the same functions at every call (so that an optimizer can maximize one: Thompson sampling).
:class:`FeatureFunctions` holds the draws of the weight-space posterior of a ridge fit on
features (one weight vector per draw: ``f_s(x) = w_s^T z(x) + b_s``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.utils.validation import check_array

from .._array_api import get_namespace, is_numpy, to_namespace
from .._row_blocks import row_blocks
from ._ridge._pass import map_features

__all__ = ["FeatureFunctions", "PosteriorFunctions"]


class PosteriorFunctions:
    """Functions drawn from a posterior: ``paths(X)`` evaluates them at the rows ``X``.

    Attributes
    ----------
    n_samples : int
        The number of functions.
    n_features_in_ : int
        Columns of the rows the functions take.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import FeatureRidge, RandomFourierFeatures
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(50, 2))
    >>> model = FeatureRidge(RandomFourierFeatures(n_components=20, random_state=0))
    >>> paths = model.fit(X, np.sin(X[:, 0])).sample_functions(n_samples=4, random_state=0)
    >>> paths(X[:3]).shape
    (3, 4)
    >>> bool(np.array_equal(paths(X[:3]), paths(X[:3])))  # the same functions at every call
    True
    """

    n_samples: int
    n_features_in_: int
    _one_target: bool

    def __call__(self, X: Any) -> Any:
        """The functions at the rows ``X``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_rows, n_features)
            NumPy (or sparse) rows, or an array of the library and device the model was
            fitted on.

        Returns
        -------
        values : array of shape (n_rows, n_samples), or (n_rows, n_targets, n_samples)
            In ``X``'s float dtype (float64 for integer rows).
        """
        xp, device = get_namespace(X)
        if is_numpy(xp):
            X = check_array(X, accept_sparse=("csr", "csc"), dtype=(np.float64, np.float32))
            if hasattr(X, "tocsr"):
                X = X.tocsr()
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but the functions take {self.n_features_in_}; "
                "pass rows with the columns the model was fitted on."
            )
        evaluate = self._evaluator(X)
        t = self._n_targets()
        out = xp.empty((X.shape[0], t, self.n_samples), dtype=X.dtype, device=device)
        for rows in row_blocks(X.shape[0], 8.0 * (t * self.n_samples + self._row_cost())):
            out[rows, ...] = xp.astype(evaluate(X[rows, ...]), X.dtype, copy=False)
        return out[:, 0, :] if self._one_target else out

    def _evaluator(self, X: Any) -> Callable[[Any], Any]:
        raise NotImplementedError

    def _n_targets(self) -> int:
        raise NotImplementedError

    def _row_cost(self) -> int:
        """Values held per row while a block is evaluated (its features)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(n_samples={self.n_samples})"


class FeatureFunctions(PosteriorFunctions):
    """Functions ``f_s(x) = w_s^T z(x) + b_s`` drawn from a ridge fit's weight posterior.

    Parameters
    ----------
    feature_map : transformer or None
        The model's fitted map (None: the rows are the features).
    coefs : ndarray of shape (D, t, n_samples)
    intercepts : ndarray of shape (t, n_samples)
    n_features_in : int
    one_target : bool
        The model was fitted on a 1-D ``y``.
    """

    def __init__(
        self,
        feature_map: Any,
        coefs: np.ndarray,
        intercepts: np.ndarray,
        n_features_in: int,
        one_target: bool,
    ) -> None:
        self.feature_map = feature_map
        self.coefs = coefs
        self.intercepts = intercepts
        self.n_samples = int(coefs.shape[2])
        self.n_features_in_ = int(n_features_in)
        self._one_target = bool(one_target)

    def _n_targets(self) -> int:
        return int(self.coefs.shape[1])

    def _row_cost(self) -> int:
        return int(self.coefs.shape[0])

    def _evaluator(self, X: Any) -> Callable[[Any], Any]:
        xp, device = get_namespace(X)
        D, t, s = self.coefs.shape
        W = self.coefs.reshape(D, t * s)
        b = self.intercepts.reshape(t * s)
        if not is_numpy(xp):
            W, b = (to_namespace(a, xp, device, dtype=X.dtype) for a in (W, b))

        def block(Xb: Any) -> Any:
            Z = map_features(self.feature_map, Xb)
            values = Z @ (W if is_numpy(xp) else xp.astype(W, Z.dtype, copy=False)) + b
            return xp.reshape(values, (Xb.shape[0], t, s))

        return block
