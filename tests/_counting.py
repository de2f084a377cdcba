"""Counting the calls of a module's function within a test."""

from __future__ import annotations

from types import ModuleType
from typing import Any


def count_calls(monkeypatch: Any, module: ModuleType, name: str) -> list[int]:
    """Replace ``module.name`` for the test by a wrapper that appends 1 to the returned
    list at every call, then calls the function."""
    calls: list[int] = []
    function = getattr(module, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return function(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls
