"""Summaries of tidy result tables: centre and spread over seeds, and a text table."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ._registry import kernel_label

__all__ = ["format_table", "metric_higher_is_better", "summarize"]

_METRIC_TITLES = {
    "fro_error": "relative Frobenius error",
    "spectral_error": "relative spectral error",
    "max_error": "relative max-entry error",
    "fit_time": "fit time (s)",
    "transform_time": "transform time (s)",
    "peak_memory": "peak memory (MiB)",
    "accuracy": "test accuracy",
    "rmse": "test RMSE",
    "n_features_out": "output features",
}


#: Metrics where a larger value is better; every other metric of ``METRICS`` but
#: ``n_features_out`` (a size, neither better nor worse) is better when smaller.
HIGHER_IS_BETTER = frozenset({"accuracy"})
#: Metrics with no better direction.
NO_DIRECTION = frozenset({"n_features_out"})


def metric_higher_is_better(metric: str) -> bool | None:
    """Whether a larger value of ``metric`` is better (``None``: neither is).

    Accuracy is better when higher; the errors (``fro_error``, ``spectral_error``,
    ``max_error``, ``rmse``), times and memory are better when lower; a metric name this
    module does not know is taken as an error, better when lower.

    Examples
    --------
    >>> from kernelmaps.experiments._summary import metric_higher_is_better
    >>> [metric_higher_is_better(m) for m in ("accuracy", "fro_error", "n_features_out")]
    [True, False, None]
    """
    if metric in NO_DIRECTION:
        return None
    return metric in HIGHER_IS_BETTER


def metric_title(metric: str) -> str:
    """A readable name of ``metric``.

    Examples
    --------
    >>> from kernelmaps.experiments._summary import metric_title
    >>> metric_title("fro_error"), metric_title("custom")
    ('relative Frobenius error', 'custom')
    """
    return _METRIC_TITLES.get(metric, metric)


def summarize(rows: Iterable[dict[str, Any]], metric: str) -> list[dict[str, Any]]:
    """Mean, standard deviation, median, quartiles, min, max and count over seeds of
    ``metric``.

    Returns one dict per (dataset, method, n_components), in the order of first
    appearance, with keys ``dataset, method, kernel, gamma, n_components, mean, std,
    median, q1, q3, min, max, n``.  ``std`` has ``ddof=1`` (0 for one seed); the
    quartiles ``q1`` and ``q3`` (25th and 75th percentiles) interpolate linearly between
    the sorted values, as :func:`numpy.percentile` does by default.

    Examples
    --------
    >>> from kernelmaps.experiments import summarize
    >>> rows = [{"dataset": "letter", "method": "rff-mc", "n_components": 8, "seed": s,
    ...          "metric": "fro_error", "value": v} for s, v in enumerate([0.2, 0.4, 0.3, 2.0])]
    >>> s = summarize(rows, "fro_error")[0]
    >>> [round(s[k], 3) for k in ("mean", "std", "median", "q1", "q3")], s["n"]
    ([0.725, 0.854, 0.35, 0.275, 0.8], 4)
    """
    groups: dict[tuple[str, str, int], list[float]] = {}
    meta: dict[tuple[str, str, int], dict[str, Any]] = {}
    for r in rows:
        if r["metric"] != metric:
            continue
        key = (str(r["dataset"]), str(r["method"]), int(r["n_components"]))
        groups.setdefault(key, []).append(float(r["value"]))
        meta.setdefault(key, {"kernel": r.get("kernel"), "gamma": r.get("gamma")})
    out = []
    for key, values in groups.items():
        v = np.asarray(values)
        out.append(
            {
                "dataset": key[0],
                "method": key[1],
                "n_components": key[2],
                **meta[key],
                "mean": float(v.mean()),
                "std": float(v.std(ddof=1)) if v.size > 1 else 0.0,
                "median": float(np.median(v)),
                "q1": float(np.percentile(v, 25)),
                "q3": float(np.percentile(v, 75)),
                "min": float(v.min()),
                "max": float(v.max()),
                "n": int(v.size),
            }
        )
    return out


def _fmt(value: float, metric: str) -> str:
    if metric == "peak_memory":
        return f"{value / 2**20:.1f}"
    if metric == "n_features_out":
        return f"{value:.0f}"
    if metric.endswith("_time"):
        return f"{value:.3g}"
    return f"{value:.4f}"


def _cell(v: dict[str, Any], metric: str, center: str) -> str:
    """One cell of :func:`format_table`: ``mean ± std`` or ``median [q1, q3]``."""
    if v["n"] <= 1:
        return _fmt(v["mean"], metric)
    if center == "median":
        return f"{_fmt(v['median'], metric)} [{_fmt(v['q1'], metric)}, {_fmt(v['q3'], metric)}]"
    return f"{_fmt(v['mean'], metric)} ± {_fmt(v['std'], metric)}"


def format_table(
    rows: Iterable[dict[str, Any]], metric: str = "fro_error", *, center: str = "mean"
) -> str:
    """A text table of ``metric``: one line per data set and method, one column per
    ``n_components``, each cell ``mean ± std`` over seeds (std with ``ddof=1``), or with
    ``center="median"`` the median and the quartiles, ``median [q1, q3]`` (the centre and
    band of :func:`~kernelmaps.plotting.plot_error_curves`).  Kernels are named in words,
    as in the figures' legends (:func:`~kernelmaps.experiments.kernel_label`).

    Parameters
    ----------
    rows : iterable of dict
        The runner's tidy rows.
    metric : str, default="fro_error"
        The metric tabulated.
    center : {"mean", "median"}, default="mean"
        The statistic of each cell over the seeds.

    Returns
    -------
    str

    Examples
    --------
    >>> from kernelmaps.experiments import format_table
    >>> rows = [{"dataset": "letter", "method": "rff-mc", "kernel": "rbf", "n_components": d,
    ...          "seed": 0, "metric": "fro_error", "value": 1 / d} for d in (8, 32)]
    >>> print(format_table(rows))
    relative Frobenius error
    dataset  method  kernel       D=8    D=32
    -----------------------------------------
    letter   rff-mc  Gaussian  0.1250  0.0312
    """
    summary = summarize(rows, metric)
    if not summary:
        return f"(no {metric} results)"
    grid = sorted({s["n_components"] for s in summary})
    cells = {(s["dataset"], s["method"], s["n_components"]): s for s in summary}
    lines_keys: list[tuple[str, str]] = []
    for s in summary:
        if (s["dataset"], s["method"]) not in lines_keys:
            lines_keys.append((s["dataset"], s["method"]))
    n_seeds = max(s["n"] for s in summary)
    if center not in ("mean", "median"):
        raise ValueError(f'center must be "mean" or "median"; got {center!r}.')
    texts = {k: _cell(v, metric, center) for k, v in cells.items()}
    width = max([len(t) for t in texts.values()] + [len(f"D={d}") for d in grid])
    ds_w = max(len("dataset"), *(len(k[0]) for k in lines_keys))
    me_w = max(len("method"), *(len(k[1]) for k in lines_keys))
    kernels = {s["kernel"]: kernel_label(s["kernel"]) if s["kernel"] else "" for s in summary}
    ke_w = max(len("kernel"), *(len(k) for k in kernels.values()))
    header = f"{'dataset':<{ds_w}}  {'method':<{me_w}}  {'kernel':<{ke_w}}  " + "  ".join(
        f"{'D=' + str(d):>{width}}" for d in grid
    )
    title = f"{metric_title(metric)}" + (
        f", {'mean ± std' if center == 'mean' else 'median [quartiles]'} over {n_seeds} seeds"
        if n_seeds > 1
        else ""
    )
    lines = [title, header, "-" * len(header)]
    previous = None
    for ds, method in lines_keys:
        first = next(s for s in summary if s["dataset"] == ds and s["method"] == method)
        row_cells = [texts.get((ds, method, d), "-") for d in grid]
        shown = ds if ds != previous else ""
        previous = ds
        lines.append(
            f"{shown:<{ds_w}}  {method:<{me_w}}  {kernels[first['kernel']]:<{ke_w}}  "
            + "  ".join(f"{c:>{width}}" for c in row_cells)
        )
    return "\n".join(lines)
