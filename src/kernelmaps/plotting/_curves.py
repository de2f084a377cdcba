"""The study's figure: a metric against the number of features, one panel per data set.

Each curve is a method, drawn in the colour of its family with its own line style and
marker (:mod:`._style`); its line is the median over the seeds and its band the
interquartile range (or the mean and one standard error either side); the x axis has a
tick at each measured number of features, and the caption says the statistic and the
number of seeds.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ._figure import figure_class, save
from ._legend import add_legend, legend_rows
from ._style import MethodLook, looks

__all__ = ["CENTERS", "plot_error_curves", "plot_score_curves"]

#: The centre of a curve and its band: ``"median"`` (band: interquartile range) or
#: ``"mean"`` (band: one standard error either side).
CENTERS = ("median", "mean")

#: One point of a curve: (n_components, centre, band low, band high).
Point = tuple[int, float, float, float]


def _read(results: Any) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The rows of ``results``, and the registry name of each method its study labelled.

    The labels are known from a runner result (its provenance) or a ``results.json``;
    a ``results.csv`` holds only the shown names.
    """
    if isinstance(results, (str, os.PathLike)):
        from ..experiments import read_results

        rows = read_results(results)
        provenance: Any = {}
        if Path(results).suffix == ".json":
            data = json.loads(Path(results).read_text(encoding="utf-8"))
            provenance = data.get("provenance") or {}
    else:
        rows = list(getattr(results, "rows", results))
        provenance = getattr(results, "provenance", None) or {}
    methods = (provenance.get("config") or {}).get("methods") or []
    names = {
        str(m.get("label") or m["name"]): str(m["name"])
        for m in methods
        if isinstance(m, dict) and m.get("name")
    }
    return rows, names


def _band(s: dict[str, Any], center: str) -> tuple[float, float, float]:
    """The centre and band of one summary cell."""
    if center == "median":
        return s["median"], s["q1"], s["q3"]
    half = s["std"] / math.sqrt(s["n"])
    return s["mean"], s["mean"] - half, s["mean"] + half


def _panels(summary: Sequence[dict[str, Any]], center: str) -> dict[str, dict[str, list[Point]]]:
    """``{dataset: {method: [(D, centre, low, high), ...]}}``, D increasing."""
    panels: dict[str, dict[str, list[Point]]] = {}
    for s in summary:
        curve = panels.setdefault(s["dataset"], {}).setdefault(s["method"], [])
        curve.append((s["n_components"], *_band(s, center)))
    for curves in panels.values():
        for points in curves.values():
            points.sort()
    return panels


def _method_looks(
    rows: Sequence[dict[str, Any]], metric: str, names: dict[str, str]
) -> dict[str, MethodLook]:
    """The look of each method of the table, grouped by family in the registry's order.

    The kernel in a label is the one of the table's ``kernel`` column when the method
    has one there; a method's registry name is its label's name in the study.
    """
    kernels: dict[str, set[str]] = {}
    for r in rows:
        if r["metric"] == metric:
            kernel = kernels.setdefault(str(r["method"]), set())
            if r.get("kernel"):
                kernel.add(str(r["kernel"]))
    found = looks(
        (shown, names.get(shown, shown), next(iter(k)) if len(k) == 1 else None)
        for shown, k in kernels.items()
    )
    from ..experiments import METHOD_FAMILIES

    order = list(METHOD_FAMILIES)

    def rank(item: tuple[str, MethodLook]) -> tuple[int, int]:
        fam = item[1].family
        return (order.index(fam) if fam in order else len(order), item[1].index)

    return dict(sorted(found.items(), key=rank))


def _draw_panel(
    ax: Any,
    dataset: str,
    curves: dict[str, list[Point]],
    method_looks: dict[str, MethodLook],
    ylabel: str,
    log_y: bool,
) -> None:
    """One data set: the centre of each method with its band, a tick at each D."""
    for method, look in method_looks.items():
        if method not in curves:
            continue
        xs, mid, low, high = (list(col) for col in zip(*curves[method], strict=True))
        ax.plot(xs, mid, **look.style(), markersize=4.5, linewidth=1.5)
        if low != high:
            ax.fill_between(xs, low, high, color=look.color, alpha=0.13, linewidth=0)
    ax.set_xscale("log", base=2)
    ticks = sorted({p[0] for points in curves.values() for p in points})
    ax.set_xticks(ticks, labels=[str(d) for d in ticks])
    ax.set_xticks([], minor=True)
    if len(ticks) > 6:
        ax.tick_params(axis="x", labelsize="small")
    if log_y:
        ax.set_yscale("log")
    ax.set_title(dataset)
    ax.set_xlabel("number of features D (landmarks m)")
    ax.set_ylabel(ylabel)
    ax.grid(True, which="major", alpha=0.3)


def caption(summary: Sequence[dict[str, Any]], center: str) -> str:
    """What the lines and bands are, over how many seeds.

    Examples
    --------
    >>> from kernelmaps.plotting._curves import caption
    >>> caption([{"n": 5}, {"n": 5}], "median")
    'line: median over 5 seeds, band: interquartile range (25th to 75th percentile)'
    >>> caption([{"n": 3}, {"n": 2}], "mean")
    'line: mean over 2 to 3 seeds, band: one standard error either side'
    >>> caption([{"n": 1}], "median")
    'one seed'
    """
    counts = sorted({int(s["n"]) for s in summary})
    if counts[-1] == 1:
        return "one seed"
    seeds = f"{counts[0]} to {counts[-1]}" if len(counts) > 1 else f"{counts[0]}"
    if center == "median":
        return (
            f"line: median over {seeds} seeds, band: interquartile range (25th to 75th percentile)"
        )
    return f"line: mean over {seeds} seeds, band: one standard error either side"


def _plot_panels(
    results: Any,
    metric: str,
    options: dict[str, Any],
    log_y: bool,
) -> Any:
    """The figure of :func:`plot_error_curves` and :func:`plot_score_curves`."""
    from ..experiments import metric_title, summarize

    center = options["center"]
    if center not in CENTERS:
        raise ValueError(f"center must be one of {CENTERS}, not {center!r}.")
    rows, names = _read(results)
    if options["methods"] is not None:
        wanted = set(options["methods"])
        rows = [r for r in rows if r["method"] in wanted]
    summary = summarize(rows, metric)
    if not summary:
        raise ValueError(f"The results hold no {metric!r} rows to plot.")
    panels = _panels(summary, center)
    method_looks = _method_looks(rows, metric, names)
    n = len(panels)
    ncols = options["ncols"] or min(n, 3)
    nrows = math.ceil(n / ncols)
    Figure, FigureCanvasAgg = figure_class()
    height = 3.3 * nrows + 0.9 + (0.0 if ncols == 1 else 0.2 * legend_rows(method_looks))
    fig = Figure(figsize=(4.3 * ncols + (2.6 if ncols == 1 else 0.0), height), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, squeeze=False)
    for ax, (dataset, curves) in zip(axes.flat, panels.items(), strict=False):
        _draw_panel(ax, dataset, curves, method_looks, metric_title(metric), log_y)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    add_legend(fig, list(axes.flat)[:n], method_looks, beside=ncols == 1)
    text = caption(summary, center)
    if len({look.kernel for look in method_looks.values()}) > 1:
        text += "\neach method against its own kernel, named after the · in the legend"
    fig.suptitle(f"{options['title']}\n{text}" if options["title"] else text)
    if options["path"] is not None:
        save(fig, options["path"])
    return fig


def plot_error_curves(
    results: Any,
    metric: str = "fro_error",
    *,
    path: str | os.PathLike[str] | None = None,
    title: str | None = None,
    methods: Iterable[str] | None = None,
    ncols: int | None = None,
    center: str = "median",
) -> Any:
    """Approximation error against the number of features.

    One panel per data set, one curve per method: each family of methods
    (:data:`~kernelmaps.experiments.METHOD_FAMILIES`) in one colour, its members told
    apart by line style and marker, each legend entry naming the kernel the method
    approximates (:func:`method_style`).  The line is the median over the seeds and the
    band the interquartile range (``center="mean"``: the mean and one standard error
    either side); the caption under the title says which, over how many seeds.  Log-log
    axes, with a tick at each measured number of features.

    Parameters
    ----------
    results : list of dict, ExperimentResult, or path
        A tidy result table (rows), a runner result, or a ``results.csv`` / ``.json`` path.
        The methods a study labelled are drawn as their registered methods when the
        result or ``results.json`` (its configuration) says which.
    metric : str, default="fro_error"
        The error metric to plot (``"fro_error"``, ``"spectral_error"``, ``"max_error"``).
    path : str or path-like, default=None
        Save the figure there (PNG at 200 dpi; PDF or SVG, vector, by the suffix),
        replacing the file whole or not at all.
    title : str, default=None
        First line of the figure's title (the caption is the second).
    methods : iterable of str, default=None
        Only these methods (default: all).
    ncols : int, default=None
        Panels per row (default: up to 3).
    center : {"median", "mean"}, default="median"
        The line and band of each curve: the median and the interquartile range over the
        seeds (robust to a heavy-tailed error), or the mean and its standard error.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ImportError
        When matplotlib is not installed, with the command that installs it.
    kernelmaps.exceptions.OutputWriteError
        When ``path`` cannot be written (read-only or full disk); a previous file there
        is left intact.

    Examples
    --------
    >>> from kernelmaps.plotting import plot_error_curves
    >>> rows = [
    ...     {"dataset": "toy", "method": m, "kernel": "rbf", "n_components": D, "seed": s,
    ...      "metric": "fro_error", "value": c / D**0.5 * (1 + 0.1 * s)}
    ...     for m, c in (("rff-mc", 1.0), ("nystroem-uniform", 0.3))
    ...     for D in (16, 64) for s in (0, 1, 2)
    ... ]
    >>> fig = plot_error_curves(rows, title="toy")
    >>> ax = fig.axes[0]
    >>> ax.get_title(), ax.get_yscale(), [int(d) for d in ax.get_xticks()]
    ('toy', 'log', [16, 64])
    >>> [line.get_label() for line in ax.get_lines()]
    ['RFF, Monte Carlo · Gaussian', 'Nyström, uniform · Gaussian']

    The title reads ``"toy"`` over ``"line: median over 3 seeds, band: interquartile
    range (25th to 75th percentile)"``.
    """
    options = {"path": path, "title": title, "methods": methods, "ncols": ncols, "center": center}
    return _plot_panels(results, metric, options, True)


def plot_score_curves(
    results: Any, metric: str = "accuracy", *, path: str | os.PathLike[str] | None = None,
    title: str | None = None, methods: Iterable[str] | None = None, ncols: int | None = None,
    center: str = "median",
) -> Any:  # fmt: skip
    """Downstream score (``"accuracy"`` or ``"rmse"``) against the number of features.

    Same layout and styles as :func:`plot_error_curves`, with a linear score axis
    (logarithmic for ``"rmse"``).

    Parameters
    ----------
    results : list of dict, ExperimentResult, or path
        The runner's rows with downstream metrics, its result, or its saved results file.
    metric : {"accuracy", "rmse"}, default="accuracy"
        The score to plot.
    path : str or path-like, default=None
        File the figure is written to; its suffix picks the format (PNG at 200 dpi, PDF,
        SVG).
    title : str, default=None
        Title above the panels (the caption is its second line).
    methods : iterable of str, default=None
        Methods to draw (default: every method of the table).
    ncols : int, default=None
        Number of panel columns (default: as many as panels, at most 3).
    center : {"median", "mean"}, default="median"
        Median and interquartile range over the seeds, or mean and standard error.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from kernelmaps.plotting import plot_score_curves
    >>> rows = [
    ...     {"dataset": "digits", "method": "rff-mc", "n_components": D, "seed": 0,
    ...      "metric": "accuracy", "value": acc}
    ...     for D, acc in ((30, 0.79), (90, 0.90), (270, 0.95))
    ... ]
    >>> fig = plot_score_curves(rows)
    >>> fig.axes[0].get_yscale(), [round(float(y), 2) for y in fig.axes[0].lines[0].get_ydata()]
    ('linear', [0.79, 0.9, 0.95])
    """
    options = {"path": path, "title": title, "methods": methods, "ncols": ncols, "center": center}
    return _plot_panels(results, metric, options, metric == "rmse")
