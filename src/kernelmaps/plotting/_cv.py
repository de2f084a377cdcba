"""The cross-validation curves of a search (``cv_results_``)."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

from ._figure import figure_class, save

__all__ = ["plot_cv_curve"]


def _best_per(cv_results: dict[str, Any], key: str, group: str | None) -> dict[Any, Any]:
    """``{group value: [(key value, best mean score over the rest), ...]}``; the groups of
    a halving search are ``(rows scored, group value)``."""
    means = cv_results["mean_test_score"]
    keys = [p.get(key) for p in cv_results["params"]]
    groups: list[Any] = [p.get(group) if group else None for p in cv_results["params"]]
    if "param_n_rows" in cv_results:
        groups = [(int(n), g) for n, g in zip(cv_results["param_n_rows"], groups, strict=True)]
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
    error_name: str | None = None,
) -> Path:
    """The cross-validation curves of a search: the best score against ``gamma`` (one
    curve per number of features) and against ``alpha`` (at the best ``gamma`` and
    number of features), from ``cv_results_`` of :class:`~kernelmaps.FeatureRidgeCV`;
    for its halving search, one curve per rung (its rows and features), the penalties
    of the best candidate of the last rung.  Scores that are minus an error (GCV,
    leave-one-out, negative squared errors) are drawn as the error, on a log axis.

    Parameters
    ----------
    cv_results : dict
        ``cv_results_`` (``params`` and ``mean_test_score``).
    path : str or path-like
        The figure written (whole, or not at all): PNG at 200 dpi, or PDF or SVG by the
        suffix.
    title : str, optional
    score_name : str, default="mean test score"
        The label of the score axis.
    error_name : str, optional
        The label where the scores are minus an error, drawn as the error (default:
        ``score_name`` followed by "(minus)").

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
    Figure, Canvas = figure_class()
    finite = [float(m) for m in cv_results["mean_test_score"] if math.isfinite(float(m))]
    errors = bool(finite) and max(finite) < 0  # minus an error: drawn as the error, log axis
    sign = -1.0 if errors else 1.0
    label = (error_name or f"{score_name} (minus)") if errors else score_name
    fig = Figure(figsize=(9.0, 3.6))
    Canvas(fig)
    left, right = fig.subplots(1, 2)
    for width, points in sorted(_best_per(cv_results, "gamma", "n_components").items()):
        xs, ys = zip(*points, strict=True)
        name = f"{width[0]} rows, D = {width[1]}" if isinstance(width, tuple) else f"D = {width}"
        left.plot(xs, [sign * v for v in ys], marker="o", markersize=3, label=name)
    left.set_xscale("log")
    left.set_xlabel("gamma")
    left.set_ylabel(label)
    if left.lines:
        left.legend(fontsize=8)
    means = [float(m) for m in cv_results["mean_test_score"]]
    rows = cv_results.get("param_n_rows", [None] * len(means))
    top = max(range(len(means)), key=lambda i: means[i])
    if "rank_test_score" in cv_results:  # a halving search's best is of its last rung
        top = min(range(len(means)), key=lambda i: cv_results["rank_test_score"][i])
    best = cv_results["params"][top]
    same = [
        (p["alpha"], m)
        for p, m, n in zip(cv_results["params"], means, rows, strict=True)
        if p.get("gamma") == best.get("gamma")
        and p["n_components"] == best["n_components"]
        and n == rows[top]
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
    save(fig, path)
    return Path(path)
