"""The passes of a logistic regression fit over the parts of the training rows.

The rows are persisted once per part (:meth:`kernelmaps._rows.Rows.persist`) as a
:class:`LogisticPart`: the part's features, targets and weights block by block when they
fit the cache budget (the features in the dtype the map gives them), else its rows, mapped
again at every pass.  Every pass is then one :meth:`Parts.map_reduce
<kernelmaps._rows.Parts.map_reduce>`: a function of a part returning small sums (a
number, a ``K x D`` matrix, ``K`` intercept terms), added in the fixed tree, so that a fit
in memory, on a Dask array (one tree reduction per pass) or on the arrays of another
library runs the same code.

With ``u_i = W z_i + b`` the ``K`` scores of row ``i`` (``K = 1`` for two classes, the
score of ``classes_[1]``), ``y_i`` its ``{0, 1}`` class indicators and ``s_i`` its weight
(sample weight times class weight), the passes sum

* the loss ``sum_i s_i l_i``, with ``l_i = log(1 + e^{u_i}) - y_i u_i`` (binomial) or
  ``l_i = log sum_k e^{u_ik} - y_i^T u_i`` (multinomial), and its gradient
  ``R^T [Z 1]``, ``r_i = s_i (p_i - y_i)`` (:func:`value_grad`);
* the Hessian's product with a direction ``(V, c)``, ``R^T [Z 1]`` with ``r_i = s_i
  p_i (1 - p_i) d_i`` (binomial) or ``r_i = s_i (p_i * d_i - p_i (p_i^T d_i))``
  (multinomial), ``d_i = V z_i + c`` (:func:`hessp`);
* the Gram matrix of the features weighted by ``s_i c_i``, :class:`RidgeStatistics` of
  the ridge fit (:func:`statistics`), ``c_i`` a bound of row ``i``'s curvature at the
  current point (:func:`curvature_bound`), so that ``[Z 1]^T S C [Z 1]`` bounds the
  Hessian there (Böhning 1992).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..._array_api import accumulator_dtype, get_namespace, is_numpy, to_namespace, to_numpy
from .._ridge._pass import RowWork
from .._ridge_statistics import RidgeStatistics

__all__ = [
    "LogisticPart",
    "add_sums",
    "build_part",
    "curvature_bound",
    "hessp",
    "merge_statistics",
    "statistics",
    "to_host",
    "value_grad",
]


@dataclasses.dataclass
class LogisticPart:
    """A part of the training rows, kept for the passes of a fit.

    Attributes
    ----------
    work : RowWork
        The fitted map and the widths (maps the rows of an uncached part).
    blocks : list of (Z, Y, s) or None
        The cached features, ``{0, 1}`` targets and weights, block by block.
    rows : tuple of (X, Y, s) or None
        The part's rows, targets and weights, when the features are not cached.
    kept : tuple of (int, list of P) or None
        The probabilities of the rows, block by block, at the solver's point of that
        number (:func:`hessp`); kept with cached features only (``n K`` numbers, small
        against them), since rows mapped at every pass may not fit.
    """

    work: RowWork
    blocks: list[tuple[Any, Any, Any]] | None = None
    rows: tuple[Any, Any, Any] | None = None
    kept: tuple[int, list[Any]] | None = None

    def keeps(self) -> list[Any] | None:
        """A list to keep the probabilities of a pass in, or None where not kept."""
        return [] if self.blocks is not None else None

    def each(self) -> Iterator[tuple[Any, Any, Any]]:
        """``(Z_b, Y_b, s_b)`` over the part's row blocks (mapped now where not cached)."""
        if self.blocks is not None:
            yield from self.blocks
        else:
            assert self.rows is not None
            yield from self.work.blocks(*self.rows)


def build_part(
    X: Any,
    y: Any,
    w: Any,
    start: int | None,
    *,
    work: RowWork,
    class_weight: np.ndarray | None,
    cache: bool,
) -> LogisticPart:
    """A part of the rows (:meth:`Rows.persist`): its rows checked, its labels encoded,
    its weights times the class weights (``class_weight``, one per class, or None), and
    its features mapped and kept when ``cache``."""
    X, Y, s = work.rows(X, y, w, start)
    if class_weight is not None:
        xp, device = get_namespace(Y)
        cw = to_namespace(class_weight, xp, device, dtype=s.dtype)
        # two classes: Y holds the second one
        Y_all = xp.concat([1.0 - Y, Y], axis=1) if Y.shape[1] == 1 else Y
        s = s * (Y_all @ cw)
    if cache:
        return LogisticPart(work, blocks=list(work.blocks(X, Y, s)))
    return LogisticPart(work, rows=(X, Y, s))


def _scores(Z: Any, W: Any, b: Any) -> Any:
    """``Z W^T + b`` in the float dtype of ``W`` (features of any dtype or kind)."""
    xp = get_namespace(W)[0]
    if not is_numpy(xp) and Z.dtype != W.dtype:
        Z = xp.astype(Z, W.dtype)
    return Z @ W.T + b


def _back(Z: Any, R: Any) -> Any:
    """``R^T Z`` (``K x D``), for dense or sparse ``Z``."""
    xp = get_namespace(R)[0]
    if not is_numpy(xp) and Z.dtype != R.dtype:
        Z = xp.astype(Z, R.dtype)
    return (Z.T @ R).T


def _probabilities(U: Any, Y: Any) -> tuple[Any, Any]:
    """``(l, P)``: each row's loss and probabilities for its scores ``U`` (``K = 1``:
    the sigmoid of the one score; else the softmax), computed without overflow."""
    xp = get_namespace(U)[0]
    if U.shape[1] == 1:
        u = U[:, 0]
        softplus = xp.logaddexp(xp.zeros_like(u), u)
        return softplus - Y[:, 0] * u, xp.exp(U - softplus[:, None])
    top = xp.max(U, axis=1, keepdims=True)
    lse = top + xp.log(xp.sum(xp.exp(U - top), axis=1, keepdims=True))
    return lse[:, 0] - xp.sum(Y * U, axis=1), xp.exp(U - lse)


def value_grad(part: LogisticPart, W: Any, b: Any, at: int) -> tuple[Any, Any, Any]:
    """``(sum s_i l_i, R^T Z, sum_i r_i)`` of a part at ``(W, b)``, ``r_i = s_i (p_i -
    y_i)``, where its rows are; the ``p_i`` kept on the part as those of the point
    ``at`` (for :func:`hessp` there)."""
    loss, grad_W, grad_b = 0.0, 0.0, 0.0
    keep = part.keeps()
    for Z, Y, s in part.each():
        xp = get_namespace(Y)[0]
        l_rows, P = _probabilities(_scores(Z, W, b), Y)
        if keep is not None:
            keep.append(P)
        R = s[:, None] * (P - Y)
        loss = loss + xp.sum(s * l_rows)
        grad_W = grad_W + _back(Z, R)
        grad_b = grad_b + xp.sum(R, axis=0)
    if keep is not None:
        part.kept = (at, keep)
    return loss, grad_W, grad_b


def hessp(part: LogisticPart, W: Any, b: Any, V: Any, c: Any, at: int) -> tuple[Any, Any]:
    """The product of the loss's Hessian at ``(W, b)`` with the direction ``(V, c)`` over
    a part: ``(R^T Z, sum_i r_i)`` with the ``r_i`` of the module docstring.

    The probabilities ``p_i`` at ``(W, b)``, named ``at`` by the solver, are those kept
    on the part (:attr:`LogisticPart.kept`) by :func:`value_grad` or the first product
    there, so that the products at a point take the scores of ``V`` alone: a pass of
    ``K`` score columns, not ``2 K``, and no exponentials.
    """
    K = W.shape[0]
    kept = part.kept[1] if part.kept is not None and part.kept[0] == at else None
    keep = part.keeps() if kept is None else None
    out_W, out_b = 0.0, 0.0
    for i, (Z, Y, s) in enumerate(part.each()):
        xp = get_namespace(Y)[0]
        if kept is None:
            both = _scores(Z, xp.concat([W, V], axis=0), xp.concat([b, c]))
            P, d = _probabilities(both[:, :K], Y)[1], both[:, K:]
            if keep is not None:
                keep.append(P)
        else:
            P, d = kept[i], _scores(Z, V, c)
        if K == 1:
            R = (s[:, None] * P * (1.0 - P)) * d
        else:
            Pd = P * d
            R = s[:, None] * (Pd - P * xp.sum(Pd, axis=1, keepdims=True))
        out_W = out_W + _back(Z, R)
        out_b = out_b + xp.sum(R, axis=0)
    if keep is not None:
        part.kept = (at, keep)
    return out_W, out_b


def curvature_bound(P: Any) -> Any:
    """Per row, a bound ``c_i`` of the largest eigenvalue of the loss's Hessian in the
    scores: ``p_i (1 - p_i)`` (binomial: the curvature itself), ``min(1/2, 1 - |p_i|^2)``
    (multinomial: Böhning's ``1/2``, or the trace of ``diag(p_i) - p_i p_i^T``, small
    for confident rows).  At ``theta = 0`` both are Böhning's (1992) bound."""
    xp = get_namespace(P)[0]
    if P.shape[1] == 1:
        return P[:, 0] * (1.0 - P[:, 0])
    return xp.clip(1.0 - xp.sum(P * P, axis=1), max=0.5)


def statistics(part: LogisticPart, W: Any, b: Any) -> tuple[RidgeStatistics, float]:
    """The sums of the part's features weighted by ``s_i c_i`` at ``(W, b)``
    (:class:`RidgeStatistics`, the targets its class indicators; ``c_i`` from
    :func:`curvature_bound`), and the sum of the weights ``s_i``."""
    work = part.work
    stats: RidgeStatistics | None = None
    weight_sum = 0.0
    for Z, Y, s in part.each():
        xp, device = get_namespace(Y)
        if stats is None:
            stats = RidgeStatistics(
                work.width, work.n_targets, centre=work.centre, xp=xp, device=device
            )
        P = _probabilities(_scores(Z, W, b), Y)[1]
        stats.update(Z, Y, s * curvature_bound(P))
        weight_sum += float(xp.sum(s))
    if stats is None:  # a part without rows
        stats = RidgeStatistics(work.width, work.n_targets, centre=work.centre)
    return stats, weight_sum


def merge_statistics(
    a: tuple[RidgeStatistics, float], b: tuple[RidgeStatistics, float]
) -> tuple[RidgeStatistics, float]:
    """The statistics and weight sums of two neighbouring groups of parts."""
    return a[0].merge(b[0]), a[1] + b[1]


def add_sums(a: tuple[Any, ...], b: tuple[Any, ...]) -> tuple[Any, ...]:
    """Two parts' sums added, entry by entry."""
    return tuple(x + y for x, y in zip(a, b, strict=True))


def to_host(value: Any) -> np.ndarray:
    """A pass's sum (an array of any library, or a number) as NumPy float64."""
    return np.asarray(to_numpy(value), dtype=np.float64)


def to_rows(value: np.ndarray, xp: Any, device: Any) -> Any:
    """A host array of the solver sent to where the rows are, in their sums' dtype."""
    if is_numpy(xp):
        return value
    return to_namespace(value, xp, device, dtype=accumulator_dtype(xp, device))
