"""The kernels of ``sklearn.metrics.pairwise`` that the other modules do not hold.

==================  =========================================  ============================
kernel              k(x, y)                                    scikit-learn
==================  =========================================  ============================
Linear              x . y                                      ``linear_kernel``
Sigmoid             tanh(gamma x . y + coef0)                  ``sigmoid_kernel``
Cosine              x . y / (|x| |y|)  (0 for a zero row)      ``cosine_similarity``
NegativeChi2        -sum_i (x_i - y_i)^2 / (x_i + y_i)         ``additive_chi2_kernel``
==================  =========================================  ============================

With these, every name of scikit-learn's ``PAIRWISE_KERNEL_FUNCTIONS`` (the kernels its
``Nystroem`` takes) has a kernel here with the same parameters and defaults, except the
name ``additive_chi2``, which is refused as ambiguous (see :data:`AMBIGUOUS_NAMES` in
``kernels/_base.py``): scikit-learn's pairwise ``additive_chi2`` is :class:`NegativeChi2`
(registered as ``"sklearn_additive_chi2"``), while its ``AdditiveChi2Sampler`` approximates
:class:`~kernelmaps.kernels.AdditiveChi2` (``"additive_chi2_pd"``).

``Sigmoid`` is not positive semidefinite in general, and ``NegativeChi2`` is only
conditionally negative definite (``K <= 0``, ``k(x, x) = 0``): :class:`~kernelmaps.Nystroem`
takes them as scikit-learn's does, and warns when the landmark kernel matrix has negative
eigenvalues (their directions are dropped).

References
----------
Schölkopf, B. and Smola, A. J. (2002). Learning with Kernels, section 2.3 (the sigmoid
kernel) and section 2.4 (conditionally positive definite kernels). MIT Press.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.preprocessing import normalize

from .._array_api import is_numpy
from .._validation import check_non_negative
from ._base import (
    Kernel,
    _check_positive,
    _finite_real,
    _per_row,
    coordinatewise_sum,
    register_kernel,
)
from ._chi2 import chi2_distance
from ._dot_product import gram, squared_norms

__all__ = ["Cosine", "Linear", "NegativeChi2", "Sigmoid"]


@register_kernel("linear")
@dataclasses.dataclass(frozen=True)
class Linear(Kernel):
    """Linear kernel ``k(x, y) = <x, y>`` (:func:`sklearn.metrics.pairwise.linear_kernel`).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import Linear
    >>> X = np.array([[0.0, 1.0], [1.0, 1.0]])
    >>> Linear()(X).tolist()
    [[1.0, 1.0], [1.0, 2.0]]
    """

    def _evaluate(self, xp: Any, X: Any, Y: Any) -> Any:
        return gram(xp, X, Y)

    def _diag(self, xp: Any, X: Any) -> Any:
        return squared_norms(xp, X)


@register_kernel("sigmoid")
@dataclasses.dataclass(frozen=True)
class Sigmoid(Kernel):
    """Sigmoid kernel ``k(x, y) = tanh(gamma <x, y> + coef0)``
    (:func:`sklearn.metrics.pairwise.sigmoid_kernel`, with its defaults).

    Not positive semidefinite in general (Schölkopf & Smola 2002, section 2.3): a
    Nyström map of it keeps the positive part of the landmark kernel matrix and warns.

    Parameters
    ----------
    gamma : float, default=None
        Scale of the dot product, > 0; ``None`` means ``1 / n_features``.
    coef0 : float, default=1.0
        Offset, any finite number (negative values are common for this kernel).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import Sigmoid
    >>> X = np.array([[0.0, 1.0], [1.0, 1.0]])
    >>> np.round(Sigmoid(gamma=1.0, coef0=0.0)(X), 4).tolist()
    [[0.7616, 0.7616], [0.7616, 0.964]]
    """

    #: ``coef0`` may be negative (checked by the estimators' ``coef0`` argument).
    negative_coef0: ClassVar[bool] = True

    gamma: float | None = None
    coef0: float = 1.0

    def __post_init__(self) -> None:
        _check_positive("Sigmoid", "gamma", self.gamma)
        if not _finite_real(self.coef0):
            raise ValueError(f"Sigmoid: coef0 must be a finite number; got {self.coef0!r}.")

    def _evaluate(self, xp: Any, X: Any, Y: Any) -> Any:
        return self._tanh(xp, gram(xp, X, Y))

    def _diag(self, xp: Any, X: Any) -> Any:
        """``tanh(gamma |x|^2 + coef0)``."""
        return self._tanh(xp, squared_norms(xp, X))

    def _tanh(self, xp: Any, t: Any) -> Any:
        """``tanh(gamma t + coef0)`` of dot products ``t``, overwritten."""
        t *= self._g
        t += float(self.coef0)
        return np.tanh(t, out=t) if is_numpy(xp) else xp.tanh(t)


@register_kernel("cosine")
@dataclasses.dataclass(frozen=True)
class Cosine(Kernel):
    """Cosine similarity ``k(x, y) = <x, y> / (|x| |y|)``, 0 when a row is zero
    (:func:`sklearn.metrics.pairwise.cosine_similarity`).

    Positive semidefinite: the linear kernel of the rows scaled to unit norm.  The rows
    are scaled by their largest entry before their norm is taken, so that no norm
    overflows.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import Cosine
    >>> X = np.array([[0.0, 1.0], [1.0, 1.0], [0.0, 0.0]])
    >>> np.round(Cosine()(X), 4).tolist()
    [[1.0, 0.7071, 0.0], [0.7071, 1.0, 0.0], [0.0, 0.0, 0.0]]
    """

    def _evaluate(self, xp: Any, X: Any, Y: Any) -> Any:
        Xn = _unit_rows(xp, X)
        Yn = Xn if Y is X else _unit_rows(xp, Y)
        K = gram(xp, Xn, Yn)
        return np.clip(K, -1.0, 1.0, out=K) if is_numpy(xp) else xp.clip(K, min=-1.0, max=1.0)

    def _diag(self, xp: Any, X: Any) -> Any:
        if sp.issparse(X):
            nonzero = np.asarray(abs(X).max(axis=1).toarray()).ravel() > 0
            return nonzero.astype(np.float64)
        return xp.astype(xp.any(X != 0.0, axis=1), X.dtype)


def _unit_rows(xp: Any, X: Any) -> Any:
    """Rows scaled to unit L2 norm (zero rows stay zero), without overflow: each row
    divided by its largest magnitude, then by its L2 norm (scikit-learn's ``normalize``,
    which takes sparse input, on NumPy)."""
    if is_numpy(xp):
        return normalize(normalize(X, norm="max", copy=True), norm="l2", copy=False)
    top = xp.max(xp.abs(X), axis=1, keepdims=True)
    Xs = X / xp.where(top == 0.0, 1.0, top)
    norms = xp.sqrt(xp.sum(Xs * Xs, axis=1, keepdims=True))
    return Xs / xp.where(norms == 0.0, 1.0, norms)


@register_kernel("sklearn_additive_chi2")
@dataclasses.dataclass(frozen=True)
class NegativeChi2(Kernel):
    """scikit-learn's pairwise ``additive_chi2``:
    ``k(x, y) = -sum_i (x_i - y_i)^2 / (x_i + y_i)``, ``x, y >= 0``
    (:func:`sklearn.metrics.pairwise.additive_chi2_kernel`).

    The negative chi-squared distance: conditionally positive definite, not positive
    semidefinite (``k(x, x) = 0`` and ``K <= 0``).  It equals
    ``2 AdditiveChi2()(x, y) - sum_i x_i - sum_i y_i``; the kernel that
    :class:`~kernelmaps.AdditiveChi2Sampler` approximates is
    :class:`~kernelmaps.kernels.AdditiveChi2` (``"additive_chi2_pd"``).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import NegativeChi2
    >>> X = np.array([[0.0, 1.0], [1.0, 1.0]])
    >>> NegativeChi2()(X).tolist()
    [[0.0, -1.0], [-1.0, 0.0]]
    """

    def _evaluate(self, xp: Any, X: Any, Y: Any) -> Any:
        check_non_negative(X, "The negative chi-squared distance (sklearn_additive_chi2)")
        check_non_negative(Y, "The negative chi-squared distance (sklearn_additive_chi2)")
        K = coordinatewise_sum(xp, X, Y, chi2_distance(xp))
        return np.subtract(0.0, K, out=K) if is_numpy(xp) else 0.0 - K  # -0.0 written as 0.0

    def _diag(self, xp: Any, X: Any) -> Any:
        check_non_negative(X, "The negative chi-squared distance (sklearn_additive_chi2)")
        return _per_row(xp, X, 0.0)
