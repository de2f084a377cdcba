"""The bandwidths of a search: its grid in batches that fit in memory, extended while its
best is at an edge, then a golden-section refinement of ``log gamma`` about the best."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ._batches import RidgeSearch

__all__ = ["GammaPlan", "extend_at_edge", "golden_refine", "scan"]

_INVERSE_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


@dataclasses.dataclass(frozen=True)
class GammaPlan:
    """The bandwidths to score and what follows them.

    Attributes
    ----------
    gammas : list of float or None
        The grid (``[None]``: the map's own bandwidth).
    extend : bool
        Extend the grid while its best is at an edge (``gammas="auto"``).
    ratio : float
        The grid's spacing, for the extension.
    refine : int
        Golden-section passes about the best (0: none).
    """

    gammas: list[float | None]
    extend: bool = False
    ratio: float = 1.0
    refine: int = 0


def scan(search: RidgeSearch, plan: GammaPlan) -> list[float | None]:
    """Score the grid of ``plan`` on ``search``'s rows in batches that fit in memory,
    extend it at an edge and refine it as the plan says; the grid as extended."""
    gammas = list(plan.gammas)
    size = search.batch_size(search.candidates(gammas[0]))
    for start in range(0, len(gammas), size):
        search.evaluate(gammas[start : start + size])
    if plan.extend:
        gammas = extend_at_edge(search, gammas, plan.ratio)
    if plan.refine > 0:
        golden_refine(search, gammas, plan.refine)
    return gammas


def extend_at_edge(
    search: RidgeSearch, gammas: list[float | None], ratio: float
) -> list[float | None]:
    """The grid of ``gammas="auto"`` extended while its best is at an end: two more
    bandwidths beyond it, spaced by the grid's ``ratio``, one pass each time, at most
    twice."""
    for _ in range(2):
        i = int(np.argmax([search.gamma_scores[g] for g in gammas]))
        if 0 < i < len(gammas) - 1:
            break
        edge = float(gammas[i])  # type: ignore[arg-type]
        step = ratio if i else 1.0 / ratio
        more = [edge * step, edge * step * step]
        search.evaluate(more)
        gammas = sorted([*gammas, *more])  # type: ignore[type-var]
    return gammas


def golden_refine(search: RidgeSearch, gammas: list[float | None], steps: int) -> None:
    """Golden-section search for the best ``log gamma`` between the neighbours of the
    grid's best, ``steps`` more passes (the first evaluates the two inner points)."""
    scores = [search.gamma_scores[g] for g in gammas]
    i = int(np.argmax(scores))
    if i == 0 or i == len(gammas) - 1:
        return  # at the edge of the grid: nothing to bracket
    a, b = math.log(gammas[i - 1]), math.log(gammas[i + 1])  # type: ignore[arg-type]
    c, d = b - _INVERSE_GOLDEN * (b - a), a + _INVERSE_GOLDEN * (b - a)
    found = search.evaluate([math.exp(c), math.exp(d)])
    fc, fd = found[math.exp(c)], found[math.exp(d)]
    for _ in range(steps - 1):
        if fc >= fd:
            b, d, fd = d, c, fc
            c = b - _INVERSE_GOLDEN * (b - a)
            fc = search.evaluate([math.exp(c)])[math.exp(c)]
        else:
            a, c, fc = c, d, fd
            d = a + _INVERSE_GOLDEN * (b - a)
            fd = search.evaluate([math.exp(d)])[math.exp(d)]
