"""What the messages and reprs of the public API show: suggestions for misspelt names, no
private class names, compact arrays in estimator reprs."""

from __future__ import annotations

import re

import numpy as np
import pytest

from kernelmaps import RandomFourierFeatures
from kernelmaps.experiments import METHOD_ALIASES, get_method, resolve_method
from kernelmaps.kernels import get_kernel_class


def test_unknown_alias_is_suggested_and_aliases_listed() -> None:
    with pytest.raises(ValueError, match="Unknown method 'nystrom'") as info:
        resolve_method("nystrom")
    message = str(info.value)
    assert message.endswith(" Did you mean 'nystroem'?")
    for alias, name in METHOD_ALIASES.items():
        assert f"{alias} (= {name})" in message
    assert "\n" not in message


def test_unknown_registered_name_is_suggested() -> None:
    with pytest.raises(ValueError, match=r"Did you mean 'rff-orthogonal'\?$"):
        get_method("rff-orthogonl")
    with pytest.raises(ValueError, match=r"Known methods: rff-mc.*\.$"):
        get_method("zzzzzz")


@pytest.mark.parametrize(
    ("build", "wanted"),
    [
        (lambda: get_kernel_class("gausian"), "gaussian"),
        (lambda: RandomFourierFeatures("laplacain").fit(np.ones((3, 2))), "laplacian"),
    ],
)
def test_unknown_kernel_is_suggested(build, wanted) -> None:
    with pytest.raises(ValueError, match=rf"Did you mean '{wanted}'\?$"):
        build()


def test_compare_kernel_option_is_suggested() -> None:
    from kernelmaps.experiments import default_study

    with pytest.raises(ValueError, match=r"Did you mean 'laplacian'\?$"):
        default_study().with_options(kernel="laplacan")
