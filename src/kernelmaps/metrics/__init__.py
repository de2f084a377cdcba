"""Measures of an approximation and of a model's probabilities.

Kernel approximation error (relative Frobenius, spectral and max-abs norms):
:func:`kernel_approximation_error` compares two given matrices;
:func:`kernel_errors_from_features` measures features already computed against the exact
kernel in several norms at once, forming at most ``block_rows`` rows of the kernel matrix
at a time, so it runs on data whose kernel matrix would not fit in memory;
:func:`feature_map_error` does the same for a fitted feature map and one norm.

Calibration of predicted probabilities: :func:`expected_calibration_error` (top-label or
classwise, equal-width or equal-mass bins) and :func:`reliability_bins` (the bins of a
reliability diagram, drawn by :func:`kernelmaps.plotting.plot_reliability_diagram`).  The
proper scoring rules are scikit-learn's, not repeated here: :func:`sklearn.metrics.log_loss`
and :func:`sklearn.metrics.brier_score_loss`.
"""

from __future__ import annotations

from ._calibration import (
    BIN_STRATEGIES,
    CALIBRATION_KINDS,
    ReliabilityBins,
    expected_calibration_error,
    reliability_bins,
)
from ._kernel_errors import (
    NORMS,
    feature_map_error,
    kernel_approximation_error,
    kernel_errors_from_features,
)

__all__ = [
    "BIN_STRATEGIES",
    "CALIBRATION_KINDS",
    "NORMS",
    "ReliabilityBins",
    "expected_calibration_error",
    "feature_map_error",
    "kernel_approximation_error",
    "kernel_errors_from_features",
    "reliability_bins",
]
