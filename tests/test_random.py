"""Owned randomness: random_state handling and per-block generators."""

from __future__ import annotations

import numpy as np
import pytest

from kernelmaps._random import block_generator, check_random_state, seed_sequence


def test_int_seed_is_reproducible() -> None:
    a = check_random_state(5).standard_normal(4)
    b = check_random_state(5).standard_normal(4)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, check_random_state(6).standard_normal(4))


def test_generator_is_passed_through_and_others_accepted() -> None:
    g = np.random.default_rng(0)
    assert check_random_state(g) is g
    ss = np.random.SeedSequence(3)
    np.testing.assert_array_equal(
        check_random_state(ss).standard_normal(3), check_random_state(ss).standard_normal(3)
    )
    legacy = np.random.RandomState(0)
    assert isinstance(check_random_state(legacy), np.random.Generator)
    assert isinstance(check_random_state(None), np.random.Generator)
    assert isinstance(check_random_state(np.int64(4)), np.random.Generator)


@pytest.mark.parametrize("bad", [-1, 1.5, "0", True])
def test_bad_random_state(bad) -> None:
    with pytest.raises(ValueError, match=r"random_state must be"):
        seed_sequence(bad)


def test_global_state_untouched() -> None:
    before = np.random.get_state()[1].copy()  # noqa: NPY002 - reading it is the point
    check_random_state(0).standard_normal(10)
    check_random_state(None).standard_normal(10)
    np.testing.assert_array_equal(np.random.get_state()[1], before)  # noqa: NPY002


def test_block_generators_do_not_depend_on_visit_order() -> None:
    seed = np.random.SeedSequence(42)
    forward = [block_generator(seed, b).standard_normal(3) for b in range(4)]
    backward = [block_generator(seed, b).standard_normal(3) for b in reversed(range(4))][::-1]
    np.testing.assert_array_equal(np.array(forward), np.array(backward))
    assert not np.array_equal(forward[0], forward[1])
    with pytest.raises(ValueError, match=r"block must be >= 0"):
        block_generator(seed, -1)
