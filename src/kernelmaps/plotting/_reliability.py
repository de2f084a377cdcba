"""The reliability diagram of predicted probabilities."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..metrics import reliability_bins
from ._figure import figure_class, save

__all__ = ["plot_reliability_diagram"]


def _axes(ax: Any) -> tuple[Any, Any]:
    """The axes of the curve and of the counts: a new figure of two panels (the counts
    under the curve), or ``ax`` and a twin of it whose bars fill its lowest quarter."""
    if ax is None:
        Figure, Canvas = figure_class()
        fig = Figure(figsize=(4.6, 5.4), layout="constrained")
        Canvas(fig)
        curve, counts = fig.subplots(2, 1, sharex=True, height_ratios=(3, 1))
        return curve, counts
    counts = ax.twinx()
    counts.set_zorder(ax.get_zorder() - 1)  # the bars behind the curve
    ax.patch.set_visible(False)
    return ax, counts


def _draw(curve: Any, counts: Any, bins: Any, label: str, own_panel: bool) -> None:
    """The diagonal, the bins' frequency against their confidence, the counts as bars."""
    full = bins.weight > 0
    if not any(line.get_label() == "perfectly calibrated" for line in curve.get_lines()):
        curve.plot([0, 1], [0, 1], linestyle="--", color="0.5", label="perfectly calibrated")
    (line,) = curve.plot(bins.confidence[full], bins.accuracy[full], marker="o", markersize=4,
                         label=label)  # fmt: skip
    widths = np.diff(bins.edges)
    counts.bar(bins.edges[:-1], bins.weight, width=widths, align="edge", color=line.get_color(),
               alpha=0.35 if own_panel else 0.2, edgecolor=line.get_color())  # fmt: skip
    curve.set_xlim(0, 1)
    curve.set_ylim(0, 1)
    curve.set_ylabel("observed frequency")
    curve.legend(fontsize=8, loc="upper left")
    if own_panel:
        counts.set_ylabel("share of rows")
        counts.set_xlabel("confidence (mean predicted probability in the bin)")
    else:
        counts.set_ylim(0, 4 * max(float(np.max(bins.weight)), 1e-12))
        counts.set_yticks([])
        curve.set_xlabel("confidence (mean predicted probability in the bin)")


def plot_reliability_diagram(
    y_true: Any,
    y_prob: Any,
    *,
    n_bins: int = 15,
    strategy: str = "uniform",
    column: int | None = None,
    labels: Any = None,
    sample_weight: Any = None,
    ax: Any = None,
    label: str | None = None,
    title: str | None = None,
    path: str | os.PathLike[str] | None = None,
) -> Any:
    """The reliability diagram: the observed frequency of each bin of predicted
    probabilities against their mean, the diagonal (calibrated probabilities), and the
    share of the rows in each bin as bars underneath (DeGroot & Fienberg 1983; Guo et al.
    2017).  The legend gives the expected calibration error,
    ``sum_b w_b |frequency_b - confidence_b|``
    (:func:`kernelmaps.metrics.expected_calibration_error`).

    By default the diagram is top-label: each row's confidence is its largest probability
    and the frequency the accuracy of the predicted class; ``column=k`` draws the
    calibration of class ``k``'s probability (``column=1``: the positive class of a
    binary problem).  Call it again with the same ``ax`` to draw several models on one
    diagram.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        The true classes.
    y_prob : array-like of shape (n, n_classes) or (n,)
        ``predict_proba``'s output (columns in the sorted order of the classes), or
        ``P(classes[1])`` of a binary problem.
    n_bins : int, default=15
        The number of bins.
    strategy : {"uniform", "quantile"}, default="uniform"
        Equal-width bins, or equal-mass bins (about ``n / n_bins`` rows each).
    column : int, default=None
        A class's column index, for its calibration instead of the top label.
    labels : array-like, default=None
        The classes of the columns (default: the distinct values of ``y_true``).
    sample_weight : array-like of shape (n,), default=None
        Weights of the rows.
    ax : matplotlib Axes, default=None
        Draw the curve there, with the bars on a twin axis filling its lowest quarter;
        by default a new figure of two panels, the bars under the curve.
    label : str, default=None
        The curve's name in the legend (followed by its ECE); default "model".
    title : str, default=None
        The title above the diagram.
    path : str or path-like, default=None
        Save the figure there (PNG at 200 dpi; PDF or SVG, vector, by the suffix),
        replacing the file whole or not at all.

    Returns
    -------
    matplotlib.figure.Figure
        The figure drawn on (``ax``'s when given).

    Raises
    ------
    ImportError
        When matplotlib is not installed, with the command that installs it.

    References
    ----------
    DeGroot, M. H. and Fienberg, S. E. (1983). The comparison and evaluation of
    forecasters. The Statistician 32.  Guo, C., Pleiss, G., Sun, Y. and Weinberger, K. Q.
    (2017). On calibration of modern neural networks. ICML.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.plotting import matplotlib_available, plot_reliability_diagram
    >>> rng = np.random.default_rng(0)
    >>> p = rng.random(1000)
    >>> y = (rng.random(1000) < p).astype(int)
    >>> if matplotlib_available():
    ...     fig = plot_reliability_diagram(y, p, n_bins=10, column=1, label="calibrated")
    ...     print(fig.axes[0].get_legend().get_texts()[1].get_text())
    calibrated (ECE 0.031)
    """
    options = {"n_bins": n_bins, "strategy": strategy, "labels": labels}
    options["sample_weight"] = sample_weight
    bins = reliability_bins(y_true, y_prob, column=column, **options)
    ece = bins.calibration_error  # expected_calibration_error's, for the curve drawn
    curve, counts = _axes(ax)
    _draw(curve, counts, bins, f"{label or 'model'} (ECE {ece:.3f})", own_panel=ax is None)
    fig = curve.figure
    if title:
        curve.set_title(title)
    if path is not None:
        save(fig, path)
    return fig
