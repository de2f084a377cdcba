"""Nyström features whose leading columns are the features of the leading landmarks.

The search of :class:`~kernelmaps.models.NystroemKernelRidgeCV` scores every number of
landmarks ``m' <= m`` from the statistics of one map of ``m`` landmarks.  The symmetric
normalization of :class:`~kernelmaps.Nystroem`, ``Z = K_nm K_mm^{-1/2}``, mixes every
landmark into every column, so the features of the first ``m'`` landmarks are a linear
transform of ``Z``, not a block of it.  The Cholesky normalization is nested: with
``K_mm = L L^T`` (``L`` lower triangular, landmarks in the order they were chosen),

.. math:: Z = K_{nm} L^{-T}, \\qquad Z_{[:, :m']} = K_{nm'} L_{m'}^{-T},

because ``L^{-T}`` is upper triangular and its leading block is the inverse of the
leading block ``L_{m'}`` of ``L``, the Cholesky factor of ``K_{m'm'}``.  ``Z`` equals
the symmetric features times an orthogonal matrix (``Z Z^T = K_nm K_mm^{-1} K_mn``
either way), so a ridge fit with an isotropic penalty (and every criterion of it) is the
same on both.

Landmarks are kept in the order they were chosen: the pivots of randomly pivoted
Cholesky as the algorithm picks them (each prefix is an RPCholesky selection of its
size), the other methods' landmarks in a random order (each prefix of a uniform sample
is a uniform sample), landmarks given as an array in their order.  A landmark whose
residual ``k(l, l) - |L_{l, <}|^2`` given the landmarks before it is at most
``PIVOT_RTOL k(l, l)`` adds nothing but round-off: it is skipped (its column of ``Z`` is
zero), a decision that depends on the landmarks before it only, so every prefix skips
the same ones.
"""

from __future__ import annotations

import copy
import math
import warnings
from typing import Any

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ..._estimator_repr import CompactArrayReprMixin
from ..._memory import check_memory
from ..._random import check_random_state
from ..._rows import Rows, as_rows
from ...kernels import resolve_estimator_kernel
from ...sampling import (
    LANDMARK_METHODS,
    draw_landmarks,
    finish_landmarks,
    kernel_free_landmarks,
    rpcholesky,
)
from .._nystroem_ridge import _landmark_kernel

__all__ = [
    "PIVOT_RTOL",
    "NestedNystroem",
    "inverse_factor",
    "n_given",
    "ordered_cholesky",
    "ordered_landmarks",
]

#: A pivot whose residual is at most this fraction of ``k(l, l)`` is round-off (the
#: threshold of randomly pivoted Cholesky: after ``k`` updates the float64 error of a
#: residual is about ``k eps k(l, l)``, below ``1e-12 k(l, l)`` for ``k <= 5000``).
PIVOT_RTOL = 1e-12

#: Columns of a panel of :func:`ordered_cholesky` (the rest is matrix products).
_PANEL = 64


def ordered_cholesky(K: np.ndarray, rtol: float = PIVOT_RTOL) -> np.ndarray:
    """The Cholesky factor of ``K`` in its given order, skipping round-off pivots.

    Column ``j`` of the lower triangular ``L`` is zero when the residual of ``j`` given
    the kept columns before it is at most ``rtol K[j, j]``; on the kept indices ``S``,
    ``L[S, S] L[S, S]^T = K[S, S]``.  Blocked: panels of 64 columns, the update of a
    panel from the columns before it one matrix product.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models._search._nested_nystroem import ordered_cholesky
    >>> K = np.array([[4.0, 2.0, 4.0], [2.0, 2.0, 2.0], [4.0, 2.0, 4.0]])  # 3rd = 1st
    >>> L = ordered_cholesky(K)
    >>> L[:, 2].tolist(), bool(np.allclose(L[:2, :2] @ L[:2, :2].T, K[:2, :2]))
    ([0.0, 0.0, 0.0], True)
    """
    m = K.shape[0]
    L = np.zeros((m, m))
    floor = rtol * np.maximum(np.diagonal(K), 0.0)
    for start in range(0, m, _PANEL):
        stop = min(start + _PANEL, m)
        width = stop - start
        P = K[start:, start:stop] - L[start:, :start] @ L[start:stop, :start].T
        for j in range(width):
            d = P[j, j]
            if not d > floor[start + j]:
                continue
            column = P[j:, j] / math.sqrt(d)
            L[start + j :, start + j] = column
            P[j + 1 :, j + 1 :] -= np.outer(column[1:], column[1 : width - j])
    return L


def inverse_factor(L: np.ndarray) -> np.ndarray:
    """``T = L^{-T}`` on the kept columns of :func:`ordered_cholesky`'s ``L``, zero on
    the skipped ones (upper triangular: ``T[:m', :m']`` is the leading block's)."""
    kept = np.flatnonzero(np.diagonal(L) > 0)
    T = np.zeros_like(L)
    if kept.size:
        block = L[np.ix_(kept, kept)]
        inverse = scipy.linalg.solve_triangular(block, np.eye(kept.size), lower=True)
        T[np.ix_(kept, kept)] = inverse.T
    return T


def ordered_landmarks(
    rows: Rows, method: Any, m: int, kernel: Any, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray | None]:
    """The landmarks of ``method`` in the order chosen, with their rows (or None).

    The draws of :func:`~kernelmaps.sampling.draw_landmarks` (repeated rows dropped),
    the rows they name read in one pass; ``"rpcholesky"``'s pivots in the order
    :func:`~kernelmaps.sampling.rpcholesky` picks them (the set of
    :func:`~kernelmaps.sampling.resolve_landmarks` with the same generator, which sorts
    it); the other methods' landmarks (those of ``resolve_landmarks``) in a random order
    drawn from ``rng`` after them; landmarks given as an array in their order.
    """
    draw = draw_landmarks(
        rows.n_rows,
        rows.n_features,
        rows.dtype,
        method,
        m,
        kernel=kernel,
        rng=rng,
        unique=True,
        stacklevel=4,
    )
    (drawn,) = rows.read([draw.rows])
    if draw.method is None:
        return finish_landmarks(draw, drawn, rng)
    if draw.method != "rpcholesky":
        L, idx = finish_landmarks(draw, drawn, rng)
        order = rng.permutation(L.shape[0])
        return L[order], None if idx is None else np.asarray(idx)[order]
    assert draw.seed is not None
    found = rpcholesky(
        drawn, draw.n_landmarks, kernel, np.random.default_rng(draw.seed), **draw.options
    )
    local = found.indices
    if local.shape[0] < draw.n_landmarks:
        warnings.warn(
            f"landmarks='rpcholesky' found only {local.shape[0]} of {draw.n_landmarks} "
            "landmarks: the residual kernel matrix vanished (its numerical rank is lower); "
            "the features of the missing landmarks are zero. Fewer landmarks suffice here.",
            UserWarning,
            stacklevel=4,
        )
    L = drawn[local]
    L = np.asarray(L.toarray() if sp.issparse(L) else L, dtype=draw.dtype)
    return L, local if draw.rows is None else np.asarray(draw.rows)[local]


def n_given(landmarks: Any) -> int:
    """The number of landmarks given as an array (dense, sparse or a list); anything else
    is refused in one line."""
    shape = getattr(landmarks, "shape", None)
    if shape is not None and len(shape) >= 1:
        return int(shape[0])
    if isinstance(landmarks, (list, tuple)):
        return len(landmarks)
    raise ValueError(
        f"landmarks must be a method name ({', '.join(map(repr, LANDMARK_METHODS))}) or an "
        f"array of shape (m, n_features); got {type(landmarks).__name__} {landmarks!r:.40}."
    )


class NestedNystroem(TransformerMixin, CompactArrayReprMixin, BaseEstimator):
    """Nyström features ``z(x) = L^{-T} k_m(x)`` of ordered landmarks (the search's map).

    A transformer of validated rows, for :class:`~kernelmaps.models.NystroemKernelRidgeCV`:
    the parameters are :class:`~kernelmaps.NystroemKernelRidge`'s that choose the
    landmarks and the kernel; :meth:`_leading` gives the map of the first ``m'``
    landmarks, whose features are the first ``m'`` columns.

    Attributes
    ----------
    kernel_ : Kernel or callable
    components_ : ndarray of shape (k, n_features)
        The landmarks in the order chosen (``k <= n_components_``: fewer where
        rpcholesky's residual vanished or rows repeat).
    component_indices_ : ndarray of int or None
    inverse_factor_ : ndarray of shape (k, k)
        ``T = L^{-T}`` (:func:`inverse_factor`), upper triangular.
    n_components_ : int
        The width of the output (columns past ``k`` are zero).
    """

    def __init__(
        self,
        kernel: Any = "rbf",
        *,
        gamma: float | None = None,
        degree: int | None = None,
        coef0: float | None = None,
        kernel_params: dict[str, Any] | None = None,
        n_components: int = 100,
        landmarks: Any = "uniform",
        random_state: Any = None,
    ) -> None:
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.n_components = n_components
        self.landmarks = landmarks
        self.random_state = random_state

    def fit(self, X: Any, y: Any = None) -> NestedNystroem:
        """Choose the ordered landmarks from the validated rows ``X`` and factor ``K_mm``."""
        rows = as_rows(X)
        landmarks = self.landmarks
        if isinstance(landmarks, str):
            m = min(int(self.n_components), rows.n_rows)
        else:  # the first n_components of the landmarks given
            m = min(int(self.n_components), n_given(landmarks))
            landmarks = landmarks[:m]
        check_memory(
            8.0 * 5 * m * m,
            f"the {m} x {m} kernel matrix of the landmarks and its Cholesky factor",
            "lower n_components or max_exact_components",
        )
        kernel = resolve_estimator_kernel(self, rows.n_features)
        rng = check_random_state(self.random_state)
        L, idx = ordered_landmarks(rows, landmarks, m, kernel, rng)
        self.components_ = L
        self.component_indices_ = idx
        self._factor(kernel)
        self.n_components_ = m
        self._n_features_out = m
        return self

    def _factor(self, kernel: Any) -> None:
        """The kernel and ``T = L^{-T}`` of ``K_mm`` on the landmarks ``components_``."""
        L = self.components_
        K_mm = _landmark_kernel(kernel, L, np.dtype(np.float64))(L)
        self.kernel_ = kernel
        self.inverse_factor_ = inverse_factor(ordered_cholesky(0.5 * (K_mm + K_mm.T)))

    def _kernel_free_state(self) -> bool:
        """Whether the landmarks do not depend on the kernel's parameters (uniform,
        k-means or given; see :meth:`kernelmaps.Nystroem._kernel_free_state`)."""
        return kernel_free_landmarks(self.landmarks)

    def _with_kernel_params(self, **params: Any) -> NestedNystroem:
        """A copy of the fitted map with the kernel parameters ``params``, on the same
        landmarks in the same order: the kernel and the factor refitted, what :meth:`fit`
        with ``params`` and the same ``random_state`` gives where
        :meth:`_kernel_free_state` holds."""
        check_is_fitted(self, "inverse_factor_")
        if not self._kernel_free_state():
            raise ValueError(
                f"NestedNystroem(landmarks={self.landmarks!r}) chooses its landmarks with "
                "the kernel; fit a clone with the new parameters instead."
            )
        refitted = copy.copy(self)
        refitted.set_params(**params)
        refitted._factor(resolve_estimator_kernel(refitted, self.components_.shape[1]))
        return refitted

    def transform(self, X: Any) -> np.ndarray:
        """``K(X, landmarks) T`` in float64, zero columns past the landmarks."""
        check_is_fitted(self, "inverse_factor_")
        k = self.components_.shape[0]
        out = np.zeros((X.shape[0], self.n_components_))
        if k:
            block = _landmark_kernel(self.kernel_, self.components_, np.dtype(np.float64))(X)
            out[:, :k] = np.asarray(block, dtype=np.float64) @ self.inverse_factor_
        return out

    def _leading(self, n_components: int) -> tuple[np.ndarray, float, NestedNystroem]:
        """The columns, weight and fitted map of the first ``n_components`` landmarks
        (the hook of :meth:`~kernelmaps.models._search._batches.RidgeSearch.candidates`)."""
        check_is_fitted(self, "inverse_factor_")
        k = min(int(n_components), self.components_.shape[0])
        leading = copy.copy(self)
        leading.n_components = int(n_components)
        leading.components_ = self.components_[:k]
        indices = self.component_indices_
        leading.component_indices_ = None if indices is None else indices[:k]
        leading.inverse_factor_ = self.inverse_factor_[:k, :k]
        leading.n_components_ = leading._n_features_out = int(n_components)
        return np.arange(int(n_components)), 1.0, leading

    def dual_coefficients(self, coef: np.ndarray) -> tuple[np.ndarray, np.ndarray, Any]:
        """The model ``f(x) = sum_j c_j k(x, l_j)`` of the feature weights ``coef``
        (``(n_components_,)`` or ``(n_targets, n_components_)``): ``c = T w`` on the
        landmarks kept; returns ``(landmarks, c, their rows)``."""
        k = self.components_.shape[0]
        W = np.asarray(coef, dtype=np.float64)
        W = W[:k] if W.ndim == 1 else W[:, :k].T
        kept = np.flatnonzero(np.diagonal(self.inverse_factor_) > 0)
        c = (self.inverse_factor_ @ W)[kept]
        indices = self.component_indices_
        return self.components_[kept], c, None if indices is None else indices[kept]
