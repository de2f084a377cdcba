"""Reductions of per-chunk results in a fixed binary tree.

Neighbours ``(0, 1), (2, 3), ...`` are combined in chunk order, level after level (an odd
last item goes up unchanged), so the shape of the tree, and with it the order of the
floating-point operations, depends only on the number of chunks: a reduction gives the
same result on any scheduler and any number of workers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["tree_reduce", "tree_sum"]


def tree_reduce(items: Sequence[Any], combine: Callable[[Any, Any], Any]) -> Any:
    """``items`` combined pairwise in the fixed binary tree (``combine`` a
    :func:`dask.delayed` function for a graph, or any function)."""
    level = list(items)
    if not level:
        raise ValueError("Nothing to reduce: no chunks.")
    while len(level) > 1:
        paired = [combine(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            paired.append(level[-1])
        level = paired
    return level[0]


def _add(a: Any, b: Any) -> Any:
    return a + b


def tree_sum(parts: Sequence[Any]) -> Any:
    """The sum of the Delayed ``parts`` in the fixed binary tree."""
    import dask

    return tree_reduce(parts, dask.delayed(_add, pure=True))
