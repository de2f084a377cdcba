"""Owned randomness: every estimator draws from its own :class:`numpy.random.Generator`.

Nothing in kernelmaps touches numpy's global random state.  ``random_state`` may be
``None`` (fresh OS entropy), an ``int``, a :class:`numpy.random.SeedSequence`, a
:class:`numpy.random.Generator` or, for compatibility with scikit-learn code, a legacy
:class:`numpy.random.RandomState` (from which one 64-bit seed is drawn).
"""

from __future__ import annotations

import numbers
from typing import TypeAlias

import numpy as np

RandomStateLike: TypeAlias = (
    int | np.integer | np.random.SeedSequence | np.random.Generator | np.random.RandomState | None
)

__all__ = ["RandomStateLike", "block_generator", "check_random_state", "seed_sequence"]


def seed_sequence(random_state: RandomStateLike) -> np.random.SeedSequence:
    """Turn ``random_state`` into a :class:`numpy.random.SeedSequence`.

    A ``Generator`` or ``RandomState`` is consumed once (one 128-bit draw), so the
    result depends on, and advances, its state, as ``sklearn.utils.check_random_state``
    users expect.
    """
    if random_state is None:
        return np.random.SeedSequence()
    if isinstance(random_state, np.random.SeedSequence):
        return random_state
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if int(random_state) < 0:
            raise ValueError(
                f"random_state must be a non-negative integer, got {int(random_state)}."
            )
        return np.random.SeedSequence(int(random_state))
    if isinstance(random_state, np.random.Generator):
        return np.random.SeedSequence(random_state.integers(0, 2**63, size=2).tolist())
    if isinstance(random_state, np.random.RandomState):
        return np.random.SeedSequence(random_state.randint(0, 2**31, size=4).tolist())
    raise ValueError(
        "random_state must be None, a non-negative int, a numpy SeedSequence, Generator or "
        f"RandomState; got {random_state!r} of type {type(random_state).__name__}."
    )


def check_random_state(random_state: RandomStateLike) -> np.random.Generator:
    """Return a :class:`numpy.random.Generator` owned by the caller.

    Parameters
    ----------
    random_state : None, int, SeedSequence, Generator or RandomState
        Source of randomness.  An ``int`` or ``SeedSequence`` gives a reproducible stream;
        a ``Generator`` is returned as is (shared, advancing state).

    Returns
    -------
    numpy.random.Generator
    """
    if isinstance(random_state, np.random.Generator):
        return random_state
    return np.random.Generator(np.random.PCG64(seed_sequence(random_state)))


def block_generator(seed: np.random.SeedSequence, block: int) -> np.random.Generator:
    """Generator for block number ``block`` derived from ``seed`` alone.

    Two processes that hold the same ``seed`` draw identical numbers for the same block,
    whatever order the blocks are visited in, which is what makes a distributed or
    chunked computation equal to a local one.
    """
    if block < 0:
        raise ValueError(f"block must be >= 0, got {block}.")
    child = np.random.SeedSequence(seed.entropy, spawn_key=(*seed.spawn_key, int(block)))
    return np.random.Generator(np.random.PCG64(child))
