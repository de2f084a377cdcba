"""Figures drawn from tidy result tables only (the output of the experiment runner).

matplotlib is an optional dependency (``pip install "kernelmaps[plot]"``), imported when a
figure is drawn; the figures are rendered with the Agg canvas, so no display is needed.

* :func:`plot_error_curves` -- the figure of the kernel approximation study: error against
  the number of features, one panel per data set, one curve per method (mean over seeds,
  with a band from the smallest to the largest seed), log-log axes.
* :func:`plot_score_curves` -- test accuracy (or RMSE) against the number of features.
* :func:`plot_cv_curve` -- the cross-validation curves of a search (``cv_results_``).
"""

from __future__ import annotations

import importlib.util
import math
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["matplotlib_available", "plot_cv_curve", "plot_error_curves", "plot_score_curves"]

_INSTALL_HINT = 'Plotting needs matplotlib: pip install "kernelmaps[plot]"'


def matplotlib_available() -> bool:
    """Whether matplotlib can be imported (it is imported to find out).

    Returns
    -------
    bool

    Examples
    --------
    >>> from kernelmaps.plotting import matplotlib_available
    >>> isinstance(matplotlib_available(), bool)
    True
    """
    if importlib.util.find_spec("matplotlib") is None:
        return False
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _figure_class() -> Any:
    if not matplotlib_available():
        raise ImportError(_INSTALL_HINT)
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    return Figure, FigureCanvasAgg


def _rows(results: Any) -> list[dict[str, Any]]:
    if isinstance(results, (str, os.PathLike)):
        from .experiments import read_results

        return read_results(results)
    rows = getattr(results, "rows", results)
    return list(rows)


def _panels(
    rows: Sequence[dict[str, Any]], metric: str
) -> dict[str, dict[str, list[tuple[int, float, float, float]]]]:
    from .experiments import summarize

    panels: dict[str, dict[str, list[tuple[int, float, float, float]]]] = {}
    for s in summarize(rows, metric):
        curve = panels.setdefault(s["dataset"], {}).setdefault(s["method"], [])
        curve.append((s["n_components"], s["mean"], s["min"], s["max"]))
    for curves in panels.values():
        for points in curves.values():
            points.sort()
    return panels


def _method_styles(rows: Sequence[dict[str, Any]], metric: str) -> dict[str, tuple[Any, str]]:
    """Colour and marker of each method, in the order of first appearance in ``rows``."""
    from matplotlib import colormaps

    method_order: list[str] = []
    for r in rows:
        if r["metric"] == metric and r["method"] not in method_order:
            method_order.append(r["method"])
    cmap = colormaps["tab20" if len(method_order) > 10 else "tab10"]
    markers = "osD^v<>pPXh*"
    return {m: (cmap(i % cmap.N), markers[i % len(markers)]) for i, m in enumerate(method_order)}


def _draw_panel(
    ax: Any,
    dataset: str,
    curves: dict[str, list[tuple[int, float, float, float]]],
    style: dict[str, tuple[Any, str]],
    ylabel: str,
    log_y: bool,
) -> None:
    """One data set: the mean curve of each method with its min-max band."""
    for method, (color, marker) in style.items():
        if method not in curves:
            continue
        pts = curves[method]
        xs = [p[0] for p in pts]
        ax.plot(xs, [p[1] for p in pts], marker=marker, ms=4, color=color, label=method)
        if any(p[2] != p[3] for p in pts):
            ax.fill_between(xs, [p[2] for p in pts], [p[3] for p in pts], color=color,
                            alpha=0.15, linewidth=0)  # fmt: skip
    ax.set_xscale("log", base=2)
    if log_y:
        ax.set_yscale("log")
    ax.set_title(dataset)
    ax.set_xlabel("number of features D (landmarks m)")
    ax.set_ylabel(ylabel)
    ax.grid(True, which="major", alpha=0.3)


def _add_legend(fig: Any, axes: Any, n: int, ncols: int) -> None:
    """One legend for the figure, with every method shown in any of the ``n`` panels."""
    handles, labels = axes.flat[0].get_legend_handles_labels()
    seen = set(labels)
    for ax in list(axes.flat)[1:n]:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            if lab not in seen:
                handles.append(h)
                labels.append(lab)
                seen.add(lab)
    if ncols == 1:
        fig.legend(handles, labels, loc="outside right center", fontsize="small", frameon=False)
    else:
        fig.legend(handles, labels, loc="outside lower center", frameon=False,
                   ncols=min(len(labels), 2 * ncols), fontsize="small")  # fmt: skip


def _plot_panels(
    rows: Sequence[dict[str, Any]],
    metric: str,
    title: str | None,
    path: str | os.PathLike[str] | None,
    log_y: bool,
    ncols: int | None,
    methods: Iterable[str] | None,
) -> Any:
    """The figure of :func:`plot_error_curves` and :func:`plot_score_curves`."""
    from .experiments import metric_title

    Figure, FigureCanvasAgg = _figure_class()
    if methods is not None:
        wanted = list(methods)
        rows = [r for r in rows if r["method"] in wanted]
    panels = _panels(rows, metric)
    if not panels:
        raise ValueError(f"The results hold no {metric!r} rows to plot.")
    n = len(panels)
    ncols = ncols or min(n, 3)
    nrows = math.ceil(n / ncols)
    width = 4.2 * ncols + (1.8 if ncols == 1 else 0.0)
    fig = Figure(figsize=(width, 3.4 * nrows + 0.9), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, squeeze=False)
    style = _method_styles(rows, metric)
    for ax, (dataset, curves) in zip(axes.flat, panels.items(), strict=False):
        _draw_panel(ax, dataset, curves, style, metric_title(metric), log_y)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    _add_legend(fig, axes, n, ncols)
    if title:
        fig.suptitle(title)
    if path is not None:
        _save(fig, path)
    return fig


def _save(fig: Any, path: str | os.PathLike[str]) -> None:
    """Write ``fig`` to ``path`` whole or not at all; its format from the suffix (PNG
    without one).  A folder that cannot be made or written, or a full disk, is one
    :class:`~kernelmaps.exceptions.OutputWriteError`; the previous file stays intact."""
    from ._atomic import atomic_write, describe_os_error
    from .exceptions import OutputWriteError

    target = Path(path)
    fmt = target.suffix.lstrip(".").lower() or "png"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputWriteError(exc.errno, describe_os_error(exc, target.parent)) from None
    with atomic_write(target, "wb") as fh:
        fig.savefig(fh, format=fmt, dpi=110)


def plot_error_curves(
    results: Any,
    metric: str = "fro_error",
    *,
    path: str | os.PathLike[str] | None = None,
    title: str | None = None,
    methods: Iterable[str] | None = None,
    ncols: int | None = None,
) -> Any:
    """Approximation error against the number of features.

    Parameters
    ----------
    results : list of dict, ExperimentResult, or path
        A tidy result table (rows), a runner result, or a ``results.csv`` / ``.json`` path.
    metric : str, default="fro_error"
        The error metric to plot (``"fro_error"``, ``"spectral_error"``, ``"max_error"``).
    path : str or path-like, default=None
        Save the figure there (PNG, PDF or SVG by the suffix), replacing the file whole
        or not at all.
    title : str, default=None
    methods : iterable of str, default=None
        Only these methods (default: all, in the order of the table).
    ncols : int, default=None
        Panels per row (default: up to 3).

    Returns
    -------
    matplotlib.figure.Figure
        One panel per data set, one curve per method (mean over seeds, band from the
        smallest to the largest value), log-log axes.

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
    ...     {"dataset": "toy", "method": m, "n_components": D, "seed": s,
    ...      "metric": "fro_error", "value": c / D**0.5 * (1 + 0.1 * s)}
    ...     for m, c in (("rff-mc", 1.0), ("nystroem-uniform", 0.3))
    ...     for D in (16, 64) for s in (0, 1)
    ... ]
    >>> fig = plot_error_curves(rows, title="toy")
    >>> len(fig.axes), fig.axes[0].get_title(), fig.axes[0].get_yscale()
    (1, 'toy', 'log')
    """
    return _plot_panels(_rows(results), metric, title, path, True, ncols, methods)


def plot_score_curves(
    results: Any, metric: str = "accuracy", *, path: str | os.PathLike[str] | None = None,
    title: str | None = None, methods: Iterable[str] | None = None, ncols: int | None = None,
) -> Any:  # fmt: skip
    """Downstream score (``"accuracy"`` or ``"rmse"``) against the number of features.

    Same layout as :func:`plot_error_curves`, with a linear score axis (logarithmic for
    ``"rmse"``).

    Parameters
    ----------
    results : list of dict, ExperimentResult, or path
        The runner's rows with downstream metrics, its result, or its saved results file.
    metric : {"accuracy", "rmse"}, default="accuracy"
        The score to plot.
    path : str or path-like, default=None
        File the figure is written to; its suffix picks the format (PNG, PDF, SVG).
    title : str, default=None
        Title above the panels.
    methods : iterable of str, default=None
        Methods to draw (default: every method of the table, in its order).
    ncols : int, default=None
        Number of panel columns (default: as many as panels, at most 3).

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
    return _plot_panels(_rows(results), metric, title, path, metric == "rmse", ncols, methods)


def _best_per(cv_results: dict[str, Any], key: str, group: str | None) -> dict[Any, Any]:
    """``{group value: [(key value, best mean score over the rest), ...]}``."""
    means = cv_results["mean_test_score"]
    keys = [p.get(key) for p in cv_results["params"]]
    groups = [p.get(group) if group else None for p in cv_results["params"]]
    best: dict[Any, dict[Any, float]] = {}
    for k, g, m in zip(keys, groups, means, strict=True):
        if k is None or not math.isfinite(float(m)):
            continue
        curve = best.setdefault(g, {})
        curve[k] = max(curve.get(k, -math.inf), float(m))
    return {g: sorted(curve.items()) for g, curve in best.items()}


def plot_cv_curve(
    cv_results: dict[str, Any],
    path: str | os.PathLike[str],
    *,
    title: str | None = None,
    score_name: str = "mean test score",
) -> Path:
    """The cross-validation curves of a search: the best score against ``gamma`` (one
    curve per number of features) and against ``alpha`` (at the best ``gamma`` and
    number of features), from ``cv_results_`` of :class:`~kernelmaps.FeatureRidgeCV`.
    Scores that are minus an error (GCV, leave-one-out, negative squared errors) are
    drawn as the error, on a log axis.

    Parameters
    ----------
    cv_results : dict
        ``cv_results_`` (``params`` and ``mean_test_score``).
    path : str or path-like
        The PNG written (whole, or not at all).
    title : str, optional
    score_name : str, default="mean test score"
        The label of the score axis.

    Returns
    -------
    Path
        ``path``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from kernelmaps.plotting import matplotlib_available, plot_cv_curve
    >>> results = {"params": [{"gamma": g, "alpha": a, "n_components": 8}
    ...                       for g in (0.1, 1.0) for a in (1e-3, 1.0)],
    ...            "mean_test_score": [0.1, 0.2, 0.5, 0.4]}
    >>> if matplotlib_available():
    ...     out = plot_cv_curve(results, pathlib.Path(tempfile.mkdtemp()) / "cv.png")
    """
    Figure, Canvas = _figure_class()
    finite = [float(m) for m in cv_results["mean_test_score"] if math.isfinite(float(m))]
    errors = bool(finite) and max(finite) < 0  # minus an error: drawn as the error, log axis
    sign = -1.0 if errors else 1.0
    label = f"{score_name} (minus)" if errors else score_name
    fig = Figure(figsize=(9.0, 3.6))
    Canvas(fig)
    left, right = fig.subplots(1, 2)
    for width, points in sorted(_best_per(cv_results, "gamma", "n_components").items()):
        xs, ys = zip(*points, strict=True)
        left.plot(xs, [sign * v for v in ys], marker="o", markersize=3, label=f"D = {width}")
    left.set_xscale("log")
    left.set_xlabel("gamma")
    left.set_ylabel(label)
    if left.lines:
        left.legend(fontsize=8)
    means = [float(m) for m in cv_results["mean_test_score"]]
    best = cv_results["params"][max(range(len(means)), key=lambda i: means[i])]
    same = [
        (p["alpha"], m)
        for p, m in zip(cv_results["params"], means, strict=True)
        if p.get("gamma") == best.get("gamma") and p["n_components"] == best["n_components"]
    ]
    xs, ys = zip(*sorted(same), strict=True)
    right.plot(xs, [sign * v for v in ys], marker="o", markersize=3)
    right.set_xscale("log")
    right.set_xlabel(
        f"alpha (gamma = {best['gamma']:.3g}, D = {best['n_components']})"
        if best.get("gamma") is not None
        else f"alpha (D = {best['n_components']})"
    )
    right.set_ylabel(label)
    if errors:
        left.set_yscale("log")
        right.set_yscale("log")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    _save(fig, path)
    return Path(path)
