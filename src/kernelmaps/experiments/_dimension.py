"""The statistical dimension of each data set of a run, for its summary.

``s_alpha = tr(K (K + alpha I)^{-1})`` of the fit rows of each data set
(:func:`kernelmaps.models.statistical_dimension`), for the Gaussian kernel at the study's
bandwidth and at the study's ridge ``alpha`` (:attr:`ExperimentConfig.alpha`, the penalty
of the downstream ridge on the features, ``min |y - Z w|^2 + alpha |w|^2``: kernel ridge
regression with ``lambda = alpha`` when ``Z Z^T = K``).  It says how many directions of
the kernel that ridge uses, so how many features a map needs before it can match it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..bandwidth import gamma_from_data
from ..models import statistical_dimension
from ._config import ExperimentConfig
from ._isolation import limit_threads
from ._prepare import PreparedData

__all__ = ["DIMENSION_SAMPLES", "format_dimensions", "statistical_dimensions"]

#: Largest sample of fit rows the statistical dimension is computed on.
DIMENSION_SAMPLES = 2000


def _rbf_gamma(
    config: ExperimentConfig, data: PreparedData, gammas: Mapping[tuple[str, str], float]
) -> float:
    """The Gaussian kernel's ``gamma`` of the run for ``data`` (the cells' own choice)."""
    if not isinstance(config.bandwidth, str):
        return float(config.bandwidth)
    if (data.name, "rbf") in gammas:
        return gammas[data.name, "rbf"]
    return gamma_from_data(data.X_fit, config.bandwidth, kernel="rbf", q=config.bandwidth_q)


def statistical_dimensions(
    config: ExperimentConfig,
    prepared: Mapping[str, PreparedData],
    gammas: Mapping[tuple[str, str], float],
    threads: int | None = 1,
) -> dict[str, dict[str, Any]]:
    """``{data set: {"kernel", "gamma", "alpha", "n_rows", "n_sample", "value",
    "interval"}}`` for each data set of ``config`` in ``prepared`` (a data set whose
    dimension cannot be computed gets ``{"error": message}``), on ``threads`` BLAS threads.

    Examples
    --------
    >>> from kernelmaps.experiments import DatasetConfig, ExperimentConfig, prepare_data
    >>> from kernelmaps.experiments._dimension import statistical_dimensions
    >>> config = ExperimentConfig(datasets=[DatasetConfig("cpu_act", n_fit=200, n_eval=50)],
    ...                           methods=["rff-mc"], n_components=[8])
    >>> data = prepare_data(config.datasets[0])
    >>> dims = statistical_dimensions(config, {"cpu_act": data}, {})
    >>> dims["cpu_act"]["n_rows"], 0 < dims["cpu_act"]["value"] <= 200
    (200, True)
    """
    out: dict[str, dict[str, Any]] = {}
    with limit_threads(threads):
        for d in config.datasets:
            data = prepared.get(d.display)
            if data is None:
                continue
            try:
                gamma = _rbf_gamma(config, data, gammas)
                s = statistical_dimension(
                    data.X_fit,
                    kernel="rbf",
                    gamma=gamma,
                    alpha=config.alpha,
                    n_samples=DIMENSION_SAMPLES,
                    random_state=d.data_seed,
                )
            except Exception as exc:  # the summary goes on without it
                out[data.name] = {"error": f"{type(exc).__name__}: {exc}"}
                continue
            out[data.name] = {
                "kernel": "rbf",
                "gamma": gamma,
                "alpha": config.alpha,
                "n_rows": s.n_rows,
                "n_sample": s.n_sample,
                "value": s.value,
                "interval": list(s.interval),
            }
    return out


def format_dimensions(dimensions: Mapping[str, Mapping[str, Any]]) -> str:
    """One line per data set of ``statistical_dimensions`` for the printed summary
    (empty when there is none).

    Examples
    --------
    >>> from kernelmaps.experiments import format_dimensions
    >>> print(format_dimensions({"letter": {"kernel": "rbf", "gamma": 1.25, "alpha": 0.001,
    ...     "n_rows": 1000, "n_sample": 1000, "value": 794.0, "interval": [794.0, 794.0]}}))
    statistical dimension tr(K (K + alpha I)^-1) of the fit rows, Gaussian kernel, alpha = 0.001:
      letter: 794.0 of 1000 rows (gamma = 1.25)
    """
    if not dimensions:
        return ""
    alphas = {v["alpha"] for v in dimensions.values() if "alpha" in v}
    alpha = f"alpha = {alphas.pop():g}" if len(alphas) == 1 else "the study's alpha"
    lines = [
        f"statistical dimension tr(K (K + alpha I)^-1) of the fit rows, Gaussian kernel, {alpha}:"
    ]
    for name, v in dimensions.items():
        if "error" in v:
            lines.append(f"  {name}: not computed ({v['error']})")
            continue
        lo, hi = v["interval"]
        bracket = f" (between {lo:.1f} and {hi:.1f})" if hi > lo else ""
        sample = f", a sample of {v['n_sample']}" if v["n_sample"] < v["n_rows"] else ""
        lines.append(
            f"  {name}: {v['value']:.1f}{bracket} of {v['n_rows']} rows{sample} "
            f"(gamma = {v['gamma']:.4g})"
        )
    return "\n".join(lines)
