"""One legend for a figure of panels, its entries grouped by family of methods.

Under the panels, each family is a column headed by its name; beside a single panel,
the families follow one another in one column.  A figure of one family lists its
methods in a row, without a heading.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._style import MethodLook

__all__ = ["add_legend", "legend_rows"]

#: Most columns of a legend of one family.
_ROW_COLUMNS = 4
#: Most columns of a legend in the type size of the axes' labels (more: a smaller type,
#: so that the columns fit the width of three panels).
_LARGE_TYPE_COLUMNS = 3


def _groups(method_looks: dict[str, MethodLook]) -> dict[str, list[str]]:
    """``{family name: [method, ...]}`` in the order of ``method_looks``."""
    groups: dict[str, list[str]] = {}
    for method, look in method_looks.items():
        groups.setdefault(look.family_name, []).append(method)
    return groups


def legend_rows(method_looks: dict[str, MethodLook]) -> int:
    """The number of rows of the legend under the panels.

    Examples
    --------
    >>> from kernelmaps.plotting._legend import legend_rows
    >>> from kernelmaps.plotting._style import look
    >>> legend_rows({m: look(m) for m in ("rff-mc", "rff-sobol", "nystroem-uniform")})
    3
    """
    groups = _groups(method_looks)
    if len(groups) == 1:
        return -(-len(method_looks) // _ROW_COLUMNS)
    return 1 + max(len(members) for members in groups.values())


def _handles(axes: Sequence[Any]) -> dict[str, Any]:
    """The first line drawn with each label, over the panels."""
    handles: dict[str, Any] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, handle)
    return handles


def add_legend(
    fig: Any, axes: Sequence[Any], method_looks: dict[str, MethodLook], *, beside: bool
) -> Any:
    """The legend of ``fig``: every method drawn in ``axes``, by family."""
    from matplotlib.lines import Line2D

    drawn = _handles(axes)
    groups = {
        name: [method_looks[m].label for m in members if method_looks[m].label in drawn]
        for name, members in _groups(method_looks).items()
    }
    groups = {name: labels for name, labels in groups.items() if labels}
    if not groups:  # every label hidden (matplotlib leaves out those starting with "_")
        return None
    blank = Line2D([], [], linestyle="none")
    handles: list[Any] = []
    labels: list[str] = []
    headers: list[str] = []
    depth = max(len(members) for members in groups.values())
    for name, members in groups.items():
        if len(groups) > 1:
            handles.append(blank)
            labels.append(name)
            headers.append(name)
        handles += [drawn[label] for label in members]
        labels += members
        if len(groups) > 1 and not beside:  # one family a column
            handles += [blank] * (depth - len(members))
            labels += [""] * (depth - len(members))
    if beside:
        ncols, loc = 1, "outside right center"
    elif len(groups) == 1:
        ncols, loc = min(len(labels), _ROW_COLUMNS), "outside lower center"
    else:
        ncols, loc = len(groups), "outside lower center"
    fontsize = "medium" if ncols <= _LARGE_TYPE_COLUMNS else "small"
    legend = fig.legend(
        handles, labels, loc=loc, ncols=ncols, frameon=False, fontsize=fontsize,
        handlelength=3.2, columnspacing=1.6,
    )  # fmt: skip
    for text in legend.get_texts():
        if text.get_text() in headers:
            text.set_fontweight("bold")
    return legend
