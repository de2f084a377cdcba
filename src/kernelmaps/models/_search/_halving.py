"""Successive halving over rows and features: the bandwidths scored on a sample of the rows
and fewer features, the best of them on more, the last at full size.

A ridge search's cost per bandwidth is a pass over the rows, ``O(n D^2)`` (twice with exact
leave-one-out), and most bandwidths of a grid are far from the best.  The error curve in
``log gamma`` is smooth, and where its minimum lies moves little with the number of rows
and of features.  :func:`successive_halving` therefore scores every bandwidth at a low
*fidelity* -- ``n_r`` rows drawn uniformly, a map of ``D_r`` features -- keeps the best
third for the next rung, refines the bandwidth by golden section on the rung before the
last, and scores only the best one on every row at full size, where the penalty (and the
number of features of ``n_components_grid``) is chosen and the final model's statistics
are kept.  The rungs' fidelities grow by ``ETA = 3`` in the cost of a pass:
``n_r = n / 3^k`` rows and ``D_r = D / 3^(k/2)`` features, ``k = 2, 1, 0``.

References
----------
Jamieson, K. and Talwalkar, A. (2016). Non-stochastic best arm identification and
hyperparameter optimization. AISTATS.
Li, L., Jamieson, K., DeSalvo, G., Rostamizadeh, A. and Talwalkar, A. (2018). Hyperband:
a novel bandit-based approach to hyperparameter optimization. JMLR 18(185).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
from sklearn.base import clone

from ._batches import RidgeSearch, _short
from ._gamma import GammaPlan, scan
from ._pass import fold_of_rows

__all__ = [
    "ETA",
    "Rung",
    "log_rung",
    "promoted",
    "rung_plan",
    "rung_rows",
    "successive_halving",
]

#: The factor by which each rung's cost per bandwidth grows, and its candidates shrink.
ETA = 3
#: The fewest rows a rung below the last scores (and at least twice its features).
MIN_ROWS = 1000
#: Data of fewer rows are searched at full size only: a sample of them need not keep the
#: shape of the error curve (measured in docs/TUNING.md, "The default search"), and their
#: exhaustive search is short.
FULL_SIZE_BELOW = 9000
#: The fewest features a rung below the last maps: with fewer random features the
#: approximation of the narrower kernels is poor enough to move the error curve's minimum
#: to a smoother kernel (y = sum sin(x_j) on 20 000 rows, D = 512: a rung of 171 features
#: chose gamma 0.0085 where the full search's is 0.038).
MIN_COMPONENTS = 512


@dataclasses.dataclass(frozen=True)
class Rung:
    """One fidelity of a search: ``n_rows`` rows and a map of ``n_components`` features
    (None: the map's own, or the rows themselves)."""

    n_rows: int
    n_components: int | None

    def fidelity(self, n_rows: int, n_components: int | None) -> float:
        """The rung's cost per bandwidth as a share of a full pass, ``(n_r / n)
        (D_r / D)^2``."""
        share = self.n_rows / n_rows
        if n_components and self.n_components:
            share *= (self.n_components / n_components) ** 2
        return share


def rung_plan(n_rows: int, n_components: int | None, n_rungs: int = 3) -> list[Rung]:
    """The rungs of a search of ``n_rows`` rows and maps of ``n_components`` features:
    ``n / ETA^k`` rows (at least :data:`MIN_ROWS` and twice the features) and
    ``D / ETA^(k/2)`` features (at least :data:`MIN_COMPONENTS`) for
    ``k = n_rungs - 1, ..., 0``, rungs equal to a later one dropped; data of fewer than
    :data:`FULL_SIZE_BELOW` rows are searched at full size only.

    Examples
    --------
    >>> from kernelmaps.models._search._halving import rung_plan
    >>> [(r.n_rows, r.n_components) for r in rung_plan(20000, 2048)]
    [(2223, 683), (6667, 1182), (20000, 2048)]
    >>> [(r.n_rows, r.n_components) for r in rung_plan(20000, 512)]
    [(2223, 512), (6667, 512), (20000, 512)]
    >>> [(r.n_rows, r.n_components) for r in rung_plan(5000, 1024)]
    [(5000, 1024)]
    """
    full = Rung(n_rows, n_components)
    if n_rows < FULL_SIZE_BELOW:
        return [full]
    rungs: list[Rung] = []
    for k in range(n_rungs - 1, 0, -1):
        D = None
        if n_components is not None:
            D = min(n_components, max(MIN_COMPONENTS, round(n_components / ETA ** (k / 2))))
        n = min(n_rows, max(MIN_ROWS, 2 * (D or 0), math.ceil(n_rows / ETA**k)))
        if Rung(n, D) not in (full, *rungs):
            rungs.append(Rung(n, D))
    return [*rungs, full]


def rung_rows(n_rows: int, rung: Rung, seed: int = 0) -> np.ndarray:
    """The rows of ``rung`` (sorted global indices): the first ``rung.n_rows`` of one
    uniform permutation of the ``n_rows`` rows, seeded by ``seed``, so that each rung's
    rows hold the previous rung's."""
    order = np.random.default_rng(seed).permutation(n_rows)
    return np.sort(order[: rung.n_rows])


def promoted(scores: dict[Any, float], last: bool, bracket: bool = False) -> list[Any]:
    """The bandwidths of ``scores`` (the best score of each) kept for the next rung, in
    increasing order: the best one for the last rung; with ``bracket``, the best and its
    neighbours among the bandwidths scored (the interval a golden-section search refines
    next); else the best ``ceil(k / ETA)`` of ``k``.

    Examples
    --------
    >>> from kernelmaps.models._search._halving import promoted
    >>> scores = {0.01: -3.0, 0.1: -1.0, 1.0: -2.0, 10.0: -0.5, 100.0: -4.0}
    >>> promoted(scores, False), promoted(scores, False, bracket=True), promoted(scores, True)
    ([0.1, 10.0], [1.0, 10.0, 100.0], [10.0])
    """
    ranked = sorted(scores, key=scores.__getitem__, reverse=True)
    if last:
        return ranked[:1]
    if bracket:
        ordered = sorted(scores)
        i = ordered.index(ranked[0])
        return ordered[max(i - 1, 0) : i + 2]
    return sorted(ranked[: math.ceil(len(scores) / ETA)])


def _rung_search(search: RidgeSearch, rung: Rung, index: np.ndarray) -> RidgeSearch:
    """The search of one rung below the last: the rows ``index``, the map at ``D_r``
    features (a clone with ``n_components=D_r``, fitted on those rows) and no grid of
    numbers of features (the rungs choose the bandwidth; the full size, the rest)."""
    spec, work = search.spec, search.work
    rows, aligned = search.rows.take_rows(index, search.aligned)
    if work.hashed:  # a Dask array's folds: those of the rows' global index
        aligned = (*aligned[:2], fold_of_rows(index, work.n_folds))
        work = dataclasses.replace(work, hashed=False)
    base = spec.base_map
    if base is not None and rung.n_components is not None:
        base = clone(base).set_params(n_components=rung.n_components)
    spec = dataclasses.replace(spec, base_map=base, grid=None)
    row_work = dataclasses.replace(work.row_work, checked=rows.checked)
    work = dataclasses.replace(work, row_work=row_work)
    return RidgeSearch(spec, rows, work, aligned, search.progress, search.largest_weight)


def log_rung(
    progress: Any,
    position: tuple[int, int],
    rung: tuple[Rung, float],
    scores: dict[Any, float],
    kept: list[Any],
) -> None:
    """Report rung ``position = (r, n_rungs)`` of fidelity ``rung = (Rung, share of a
    pass)``: its rows and features, the bandwidths scored and their best, those kept."""
    (r, n_rungs), (fidelity, share) = position, rung
    best = max(scores, key=scores.__getitem__)
    progress.log(
        f"rung {r + 1} of {n_rungs} ({fidelity.n_rows:,} rows, D = "
        f"{fidelity.n_components or '-'}, {share:.3g} of a pass per bandwidth): "
        f"{len(scores)} bandwidths, best gamma = {_short(best)} (score {scores[best]:.6g}); "
        f"kept {', '.join(_short(g) for g in kept)}"
    )


def _map_width(search: RidgeSearch) -> int | None:
    """The features of the search's largest map (None: the rows, or no ``n_components``)."""
    base = search.spec.base_map
    if base is None or "n_components" not in base.get_params():
        return None
    if search.spec.grid is not None:
        return max(search.spec.grid)
    return int(base.get_params()["n_components"])


def successive_halving(search: RidgeSearch, plan: GammaPlan, seed: int = 0) -> None:
    """Score the bandwidths of ``plan`` rung by rung; the last rung is ``search`` itself.

    Rung 0 scores every bandwidth (the ``"auto"`` grid extended at an edge), each rung
    keeps the best ``ceil(k / ETA)`` of its ``k`` for the next, the rung before the last
    refines the best by golden section between its neighbours (``"auto"``: it is given
    the best and its neighbours, extended first if its best is at an edge), and the
    last scores the best one on every row with the full map.  The rows of a rung are
    the first ``n_r`` of one uniform permutation (seeded by ``seed``), so each rung's
    rows hold the previous rung's.
    Every candidate's result row records its rung, rows and fidelity (``rung``, ``n_rows``,
    ``fidelity``: :meth:`Rung.fidelity`).
    """
    n = search.rows.n_rows
    rungs = rung_plan(n, _map_width(search))
    if len(rungs) == 1 or len(plan.gammas) < 2:
        scan(search, plan)
        return
    gammas: list[float | None] = list(plan.gammas)
    for r, rung in enumerate(rungs[:-1]):
        sub = _rung_search(search, rung, rung_rows(n, rung, seed))
        sub.stage = (
            f" (rung {r + 1} of {len(rungs)}: {rung.n_rows:,} rows, D = {rung.n_components})"
        )
        last = r == len(rungs) - 2
        step = dataclasses.replace(
            plan, gammas=gammas, extend=plan.extend and (r == 0 or last), refine=plan.refine * last
        )
        scan(sub, step)
        share = rung.fidelity(n, _map_width(search))
        # the rung before the last refines the best: it takes the bracket of the best
        gammas = promoted(sub.gamma_scores, last, plan.refine > 0 and r == len(rungs) - 3)
        for row in sub.results:
            row.update(rung=r, n_rows=rung.n_rows, fidelity=share)
        search.results.extend(sub.results)
        log_rung(search.progress, (r, len(rungs)), (rung, share), sub.gamma_scores, gammas)
    start = len(search.results)
    scan(search, dataclasses.replace(plan, gammas=gammas, extend=False, refine=0))
    for row in search.results[start:]:
        row.update(rung=len(rungs) - 1, n_rows=n, fidelity=1.0)
