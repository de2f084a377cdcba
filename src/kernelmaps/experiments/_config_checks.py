"""Checks of the values of a configuration: types and ranges, each refused in one line
naming the key, the value and the fix.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "check_keys",
    "check_optional_str",
    "check_table",
    "distinct_ints",
    "is_int",
    "is_number",
]


def check_keys(where: str, data: Mapping[str, Any], cls: type) -> None:
    """Refuse the keys of ``data`` that are not fields of the dataclass ``cls``."""
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValueError(
            f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; "
            f"known keys are {', '.join(sorted(known))}."
        )


def is_int(value: Any) -> bool:
    """Whether ``value`` is an integer (a bool is not)."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    """Whether ``value`` is an integer or a float (a bool is not)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def check_optional_str(where: str, key: str, value: Any) -> None:
    """Refuse a ``value`` that is neither None nor a string."""
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{where}: {key} must be a string; got {value!r}.")


def check_table(where: str, key: str, value: Any) -> None:
    """Refuse a ``value`` that is not a table of name = value pairs."""
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise ValueError(
            f"{where}: {key} must be a table of name = value pairs (a dict); got {value!r}."
        )


def distinct_ints(key: str, values: Any, low: int, what: str) -> list[int]:
    """``values`` as a list of distinct integers >= ``low``, or an error saying so."""
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Sequence):
        raise ValueError(f"{key} must be a list of {what}; got {values!r}.")
    if len(values) == 0:
        raise ValueError(f"{key} must not be empty; give at least one value.")
    bad = [v for v in values if not is_int(v) or v < low]
    if bad:
        raise ValueError(f"{key} must be a list of {what}; got {bad[0]!r} in {key}.")
    seen: set[int] = set()
    for v in values:
        if v in seen:
            raise ValueError(f"{key} lists {v} twice; give each value once.")
        seen.add(v)
    return [int(v) for v in values]
