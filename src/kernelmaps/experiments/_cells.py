"""One cell of an experiment: what identifies it, and how its metrics are measured.

Every *cell* (data set x method x n_components x seed, with the experiment's shared
settings: a :class:`Cell`) fits one feature map on the fit rows of the data set and
records each asked metric.  The map is fitted once and each set of rows transformed once;
every kernel error comes from one set of features of the measured rows, and the
downstream score from a linear model trained on the features of the fit rows.

A cell whose method raises any exception (an error of the method, a memory refusal) is
recorded as failed, with the error on one line, and the run goes on;
``KeyboardInterrupt`` and ``SystemExit`` stop it.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
import time
import tracemalloc
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..bandwidth import gamma_from_data
from ._config import DatasetConfig, ExperimentConfig, MethodConfig
from ._isolation import capture_warnings, limit_threads
from ._prepare import PreparedData
from ._registry import BANDWIDTH_KERNELS, MethodSpec

__all__ = ["Cell", "compute", "failed", "method_kernel", "plan"]

#: Longest failure message kept in a cell's record (characters).
_MESSAGE_CHARS = 1000


@dataclasses.dataclass(frozen=True)
class Cell:
    """One cell of an experiment: a data set, a method, a number of features and a seed.

    Parameters
    ----------
    config : ExperimentConfig
        The experiment: its shared settings (bandwidth, downstream model, metrics).
    dataset : DatasetConfig
    method : MethodConfig
    n_components : int
    seed : int

    Examples
    --------
    >>> from kernelmaps.experiments import ExperimentConfig
    >>> from kernelmaps.experiments._cells import plan
    >>> config = ExperimentConfig(["letter"], ["rff-mc"], n_components=[8, 16], seeds=1)
    >>> [cell.label for cell in plan(config)]
    ['letter rff-mc D=8 seed=0', 'letter rff-mc D=16 seed=0']
    """

    config: ExperimentConfig
    dataset: DatasetConfig
    method: MethodConfig
    n_components: int
    seed: int

    @functools.cached_property
    def key(self) -> str:
        """What identifies the cell in the log: the settings that change its results."""
        return "|".join(
            [
                self.dataset.key(),
                self.method.key(),
                str(self.n_components),
                str(self.seed),
                self.config.settings_key(),
                self.dataset.display,
                self.method.display,
            ]
        )

    @property
    def label(self) -> str:
        """The cell in words, for the progress bar."""
        return (
            f"{self.dataset.display} {self.method.display} D={self.n_components} seed={self.seed}"
        )

    def record(self, kernel_params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The start of the cell's record: which cell it is and, once its kernel is
        chosen (``kernel_params``), the kernel and its ``gamma``."""
        record: dict[str, Any] = {
            "key": self.key,
            "dataset": self.dataset.display,
            "method": self.method.display,
            "n_components": self.n_components,
            "seed": self.seed,
        }
        if kernel_params is not None:
            record["kernel"] = kernel_params["kernel"]
            record["gamma"] = kernel_params.get("gamma")
        return record


def plan(config: ExperimentConfig) -> list[Cell]:
    """The cells of ``config``, in the order of its tables."""
    return [
        Cell(config, d, m, n_components, seed)
        for d in config.datasets
        for m in config.methods
        for n_components in config.n_components
        for seed in config.seeds
    ]


def method_kernel(
    cell: Cell,
    spec: MethodSpec,
    data: PreparedData,
    gamma_cache: dict[tuple[str, str], float],
) -> dict[str, Any]:
    """The kernel parameters of the cell's map (``kernel`` among them), with ``gamma``
    chosen by the experiment's bandwidth rule once per data set and kernel."""
    config, m = cell.config, cell.method
    kernel = m.kernel or spec.kernel
    if not spec.supports(kernel):
        raise ValueError(
            f"method {spec.name!r} cannot approximate the {kernel!r} kernel; it handles "
            f"{', '.join(spec.supported_kernels())}."
        )
    params = dict(spec.kernel_params) if kernel == spec.kernel else {}
    params.update(m.kernel_params)
    if kernel in BANDWIDTH_KERNELS and "gamma" not in params:
        if isinstance(config.bandwidth, str):
            key = (data.name, kernel)
            if key not in gamma_cache:
                gamma_cache[key] = gamma_from_data(
                    data.X_fit, config.bandwidth, kernel=kernel, q=config.bandwidth_q
                )
            params["gamma"] = gamma_cache[key]
        else:
            params["gamma"] = float(config.bandwidth)
    params["kernel"] = kernel
    return params


def compute(
    cell: Cell,
    data: PreparedData,
    spec: MethodSpec,
    kernel_params: dict[str, Any],
    threads: int | None,
    blas: bool = True,
) -> dict[str, Any]:
    """The record of the cell: its metrics and warnings, or the error of its method.

    Every ``Exception`` of the cell (an error of the method, a memory refusal) makes a
    failed record; ``KeyboardInterrupt`` and ``SystemExit`` are raised.
    """
    record = cell.record(kernel_params)
    try:
        with capture_warnings() as caught, limit_threads(threads, blas):
            record["metrics"] = _metrics(cell, data, spec, kernel_params)
        if caught:
            record["warnings"] = sorted(set(caught))
        record["status"] = "ok"
    except Exception as exc:  # any error of the cell: recorded, the run goes on
        failed(record, exc, spec.kernel)  # (the record names its kernel already)
    return record


def failed(record: dict[str, Any], exc: BaseException, kernel: str) -> None:
    """Make ``record`` the record of a cell that failed with ``exc``."""
    record.pop("metrics", None)
    record.pop("warnings", None)
    record["status"] = "failed"
    record["message"] = _one_line_error(exc)
    record.setdefault("kernel", kernel)


def _one_line_error(exc: BaseException) -> str:
    """``Type: message`` on one line, at most ``_MESSAGE_CHARS`` characters.

    Examples
    --------
    >>> from kernelmaps.experiments._cells import _one_line_error
    >>> _one_line_error(ValueError("bad\\n  value")), _one_line_error(NotImplementedError())
    ('ValueError: bad value', 'NotImplementedError')
    """
    text = " ".join(str(exc).split())
    message = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    if len(message) > _MESSAGE_CHARS:
        message = message[: _MESSAGE_CHARS - 1] + "…"
    return message


def _metrics(
    cell: Cell, data: PreparedData, spec: MethodSpec, kernel_params: dict[str, Any]
) -> dict[str, float]:
    """Fit one map, transform each set of rows once, and compute every asked metric."""

    def build() -> Any:
        est = spec.factory(cell.n_components, dict(kernel_params), cell.seed)
        if cell.method.params:
            est.set_params(**cell.method.params)
        return est

    metrics = cell.config.metrics
    out: dict[str, float] = {}
    est = build()
    t0 = time.perf_counter()
    est.fit(data.X_fit)
    t1 = time.perf_counter()
    Z_eval = est.transform(data.X_eval)
    t2 = time.perf_counter()
    if "fit_time" in metrics:
        out["fit_time"] = t1 - t0
    if "transform_time" in metrics:
        out["transform_time"] = t2 - t1
    if "n_features_out" in metrics:
        out["n_features_out"] = float(Z_eval.shape[1])
    features = _LazyFitFeatures(est, data.X_fit)
    out.update(_kernel_errors(est, data, Z_eval, features, metrics))
    if {"accuracy", "rmse", "downstream"} & set(metrics):
        scored = _downstream(cell.config, data, features.get(), Z_eval)
        if scored is not None and ("downstream" in metrics or scored[0] in metrics):
            out[scored[0]] = scored[1]
    if "peak_memory" in metrics:
        out["peak_memory"] = _peak_memory(build(), data)
    return out


class _LazyFitFeatures:
    """The features of the fit rows, computed at the first request only."""

    def __init__(self, est: Any, X_fit: np.ndarray) -> None:
        self.est, self.X_fit = est, X_fit
        self.Z: Any = None

    def get(self) -> Any:
        if self.Z is None:
            self.Z = self.est.transform(self.X_fit)
        return self.Z


def _kernel_errors(
    est: Any, data: PreparedData, Z_eval: Any, features: _LazyFitFeatures, metrics: list[str]
) -> dict[str, float]:
    """The asked ``*_error`` metrics, all from one set of features of the measured rows."""
    from ..metrics import NORMS, kernel_errors_from_features

    norms = [norm for norm in NORMS if f"{norm}_error" in metrics]
    if not norms:
        return {}
    kernel = getattr(est, "kernel_", None)  # every map of the registry has one
    if kernel is None:
        raise ValueError(f"{type(est).__name__} has no fitted kernel_ to measure errors against.")
    rows, Z = (data.X_fit, features.get()) if data.in_sample else (data.X_eval, Z_eval)
    errors = kernel_errors_from_features(kernel, rows, Z, norms=norms, random_state=0)
    return {f"{norm}_error": value for norm, value in errors.items()}


#: One tracemalloc measurement at a time in a process (tracing is process-wide).
_TRACEMALLOC_LOCK = threading.Lock()


def _peak_memory(est: Any, data: PreparedData) -> float:
    """Peak bytes allocated by Python while a fresh map is fitted and transforms.

    tracemalloc traces every thread of the process: in a worker process that runs one
    task at a time (a process pool, a Dask worker with one thread) the peak is the cell's
    own, plus what the worker's communication allocates meanwhile (little); where several
    cells run in threads of one process, the peaks of concurrent cells include each
    other's allocations.  Measurements are serialised within a process so that one
    cell's ``tracemalloc.stop()`` cannot end another's measurement.
    """
    with _TRACEMALLOC_LOCK:
        tracemalloc.start()
        try:
            est.fit(data.X_fit)
            est.transform(data.X_eval)
            return float(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()


def _downstream(
    config: ExperimentConfig, data: PreparedData, Z_fit: Any, Z_eval: Any
) -> tuple[str, float] | None:
    if data.y_fit is None or data.y_eval is None:
        return None
    if data.task == "classification":
        if config.downstream_model == "linear_svc":
            from sklearn.svm import LinearSVC

            clf: Any = LinearSVC(C=1.0 / config.alpha)
        else:
            from sklearn.linear_model import RidgeClassifier

            clf = RidgeClassifier(alpha=config.alpha)
        clf.fit(Z_fit, data.y_fit)
        return "accuracy", float(np.mean(clf.predict(Z_eval) == data.y_eval))
    from sklearn.linear_model import Ridge

    reg = Ridge(alpha=config.alpha).fit(Z_fit, data.y_fit.astype(np.float64))
    residual = reg.predict(Z_eval) - data.y_eval.astype(np.float64)
    return "rmse", float(np.sqrt(np.mean(residual**2)))
