"""The bandwidths of a search beyond its first grid: the grid extended while its best is at
an edge, then a golden-section refinement of ``log gamma`` about the best."""

from __future__ import annotations

import math

import numpy as np

from ._batches import RidgeSearch

__all__ = ["extend_at_edge", "golden_refine"]

_INVERSE_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


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
