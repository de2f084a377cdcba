"""Figures drawn from tidy result tables (the output of the experiment runner), and the
reliability diagram of predicted probabilities.

matplotlib is an optional dependency (``pip install "kernelmaps[plot]"``), imported when a
figure is drawn; the figures are rendered with the Agg canvas, so no display is needed.
PNG files are written at 200 dpi; a ``.pdf`` or ``.svg`` path gives a vector figure.

* :func:`plot_error_curves` -- the figure of the kernel approximation study: error against
  the number of features, one panel per data set, one curve per method (median over
  seeds, with its interquartile range as a band), log-log axes;
* :func:`plot_score_curves` -- test accuracy (or RMSE) against the number of features;
* :func:`method_style` -- the colour (one per family of methods), line style, marker and
  label (with the kernel) of a method in these figures, to draw others alike;
* :func:`plot_cv_curve` -- the cross-validation curves of a search (``cv_results_``);
* :func:`plot_reliability_diagram` -- the calibration of a classifier's probabilities:
  observed frequency against predicted probability, with the expected calibration error.
"""

from __future__ import annotations

from ._curves import plot_error_curves, plot_score_curves
from ._cv import plot_cv_curve
from ._figure import matplotlib_available
from ._reliability import plot_reliability_diagram
from ._style import method_style

__all__ = [
    "matplotlib_available",
    "method_style",
    "plot_cv_curve",
    "plot_error_curves",
    "plot_reliability_diagram",
    "plot_score_curves",
]
