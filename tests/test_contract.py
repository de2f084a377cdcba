"""One statistical contract for every feature map (the table is ``tests/_contract.py``).

For each row: the maps are unbiased for the kernel they declare (the average over
independent draws is within a bound-derived radius of ``k``), and one map of ``D``
features is within its concentration radius of ``K`` on every pair of points.  Every
radius holds with probability at least ``1 - DELTA`` (``tests/_bounds.py``) for each seed
of ``KERNELMAPS_TEST_SEEDS``; where a row declares a kernel with a parameter off by a
factor two, the radius is shown small enough to tell that kernel from ``k``.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import kernelmaps
from kernelmaps.feature_maps import BaseFeatureMap

from ._bounds import DELTA, empirical_bernstein_radius, median_of_means, median_of_means_radius
from ._contract import ROWS, Row

UNBIASED = [
    pytest.param(row, id=row.id, marks=[pytest.mark.slow] if row.slow_draws else [])
    for row in ROWS
    if row.unbiased is None
]
CONCENTRATED = [row for row in ROWS if row.radius is not None]


def _ids(rows: list[Row]) -> list[str]:
    return [row.id for row in rows]


def _gram(est, X: np.ndarray) -> np.ndarray:
    Z = est.transform(X)
    Z = Z.toarray() if sp.issparse(Z) else np.asarray(Z)
    return Z @ Z.T, Z


def test_every_feature_map_has_a_contract_row() -> None:
    maps = {
        name
        for name in kernelmaps.__all__
        if isinstance(getattr(kernelmaps, name), type)
        and issubclass(getattr(kernelmaps, name), BaseFeatureMap)
    }
    assert maps == {row.cls.__name__ for row in ROWS}
    assert len({row.id for row in ROWS}) == len(ROWS)
    for row in ROWS:
        # every row is in both tests or says why it is not
        assert (row.unbiased is None) == (row.draw_D > 0), row.id
        assert row.unbiased is None or row.unbiased.strip(), row.id
        assert (row.radius is None) != (row.no_concentration is None), row.id
        if row.unbiased is None:
            assert (row.draw_range is None) != (row.draw_variance is None), row.id


@pytest.mark.statistical
@pytest.mark.parametrize("row", UNBIASED)
def test_unbiased(row: Row, seed: int) -> None:
    """The mean of ``draw_R`` independent estimates is within the radius of ``k``.

    One draw's estimate within an interval of length ``draw_range``: the empirical
    Bernstein bound over the draws; otherwise median of means with the declared variance
    bound of one draw.  Union bound over the pairs ``i <= j``.
    """
    X = row.X
    iu = np.triu_indices(len(X))
    n_events = len(iu[0])
    K = row.kernel(X)[iu]
    seeds = np.random.default_rng(seed).integers(2**32, size=row.draw_R)
    estimates = np.empty((row.draw_R, n_events))
    est = None
    for r, s in enumerate(seeds):
        est = row.make(row.draw_D, int(s)).fit(X)
        estimates[r] = _gram(est, X)[0][iu]
    if row.draw_range is not None:
        mean = estimates.mean(axis=0)
        radius = np.full(n_events, empirical_bernstein_radius(estimates, row.draw_range, n_events))
    else:
        delta = DELTA / n_events
        variance = row.draw_variance(est, X)[iu]
        mean = np.array([median_of_means(estimates[:, p], delta)[0] for p in range(n_events)])
        radius = np.array([median_of_means_radius(row.draw_R, v, delta) for v in variance])
    error = np.abs(mean - K)
    assert np.all(error <= radius), (row.id, error.max(), radius[error.argmax()])
    if row.wrong is not None:
        assert np.any(np.abs(row.wrong(X)[iu] - K) > 2 * radius), row.id


@pytest.mark.statistical
@pytest.mark.parametrize("row", CONCENTRATED, ids=_ids(CONCENTRATED))
def test_concentration(row: Row, seed: int) -> None:
    """One map of ``concentration_D`` features: ``|Z Z^T - K| <= radius`` on every pair."""
    X = row.X
    iu = np.triu_indices(len(X))
    n_events = len(iu[0])
    est = row.make(row.concentration_D, seed).fit(X)
    G, Z = _gram(est, X)
    K = row.kernel(X)
    radius = np.broadcast_to(row.radius(row, est, Z, K, n_events), K.shape)[iu]
    error = np.abs(G - K)[iu]
    assert np.all(error <= radius), (row.id, error.max(), radius[error.argmax()])
    if row.wrong is not None and row.concentration_teeth:
        assert np.any(np.abs(row.wrong(X)[iu] - K[iu]) > 2 * radius), row.id
