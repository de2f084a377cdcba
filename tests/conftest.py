"""Test configuration: the seed contract.

Tests that take the ``seed`` fixture run once with seed 0 by default.  The environment
variable ``KERNELMAPS_TEST_SEEDS`` chooses others: ``all`` (0-99), a range ``3-7``, or a
comma-separated list ``0,5,42``.  The statistical tests must pass for every seed: their
tolerances come from concentration bounds at a stated failure probability
(``tests/_bounds.py``), not from what one seed gave.
"""

from __future__ import annotations

import os

# scikit-learn's array API dispatch (tests/_array_api.py) needs scipy's array API support,
# which scipy reads once, when it is first imported
os.environ.setdefault("SCIPY_ARRAY_API", "1")

import pytest


def _seeds_from_env() -> list[int]:
    spec = os.environ.get("KERNELMAPS_TEST_SEEDS", "").strip()
    if not spec:
        return [0]
    if spec == "all":
        return list(range(100))
    seeds: list[int] = []
    for part in spec.split(","):
        part = part.strip()
        if "-" in part:
            lo, hi = part.split("-")
            seeds.extend(range(int(lo), int(hi) + 1))
        elif part:
            seeds.append(int(part))
    return seeds


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "seed" in metafunc.fixturenames:
        metafunc.parametrize("seed", _seeds_from_env())


@pytest.fixture(scope="module")
def dask_client():
    """A real ``distributed.LocalCluster`` (2 worker processes x 1 thread) for one module."""
    pytest.importorskip("distributed")
    from tests._dask import start_cluster

    cluster, client = start_cluster()
    try:
        yield client
    finally:
        client.close()
        cluster.close()
