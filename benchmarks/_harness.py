"""What every benchmark script measures with: machine report, timing, memory, kernel error.

* :func:`machine_info` / :func:`machine_line` -- CPU, cores, library versions, the engine,
  the thread pools and BLAS (threadpoolctl) and the BLAS environment variables
  (``OPENBLAS_CORETYPE`` may pin a slower kernel than the CPU allows).
* :func:`time_alternating` -- the calls to compare, alternated in one process (A, B, A,
  B, ...) after one untimed warm-up call each, timed with ``time.perf_counter``;
  :class:`Timing` holds the times of one call with their median and spread.  Speed claims
  are ratios of medians measured side by side in one run.
  :func:`best_time` is the fastest of a few runs: a rate of the machine.
* :func:`peak_memory` -- peak of the memory traced by ``tracemalloc`` (numpy reports its
  buffers to it) during one call; :func:`peak_rss` / :func:`reset_peak_rss` -- the peak
  resident set of the process (``VmHWM`` on Linux), for calls made in a subprocess.
* :func:`kernel_error` -- ``|K - Z Z^T| / |K|`` of a fitted map through
  :func:`kernelmaps.metrics.feature_map_error`, the exact kernel evaluated in float64.
* :func:`transform_chunked` -- ``transform`` on row chunks written into one output (for
  maps that cannot transform all rows at once).
"""

from __future__ import annotations

import gc
import os
import platform
import resource
import statistics
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

import kernelmaps
from kernelmaps.metrics import feature_map_error

BLAS_VARIABLES = ("OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")


# -- machine ---------------------------------------------------------------------------


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def thread_pools() -> dict[str, str]:
    """One entry per thread pool (BLAS, OpenMP) that threadpoolctl finds."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:  # pragma: no cover - a dependency of scikit-learn
        return {"blas": "threadpoolctl not installed"}
    return {
        f"{pool.get('internal_api')} ({pool.get('prefix')})": (
            f"{pool.get('version')}, {pool.get('num_threads')} threads, "
            f"architecture {pool.get('architecture')}, {pool.get('threading_layer')}"
        )
        for pool in threadpool_info()
    }


def machine_info() -> dict[str, str]:
    """CPU, cores, library versions, engine, thread pools and BLAS environment variables."""
    import scipy
    import sklearn

    info = {
        "cpu": _cpu_name(),
        "cores available": str(len(os.sched_getaffinity(0))),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "scikit-learn": sklearn.__version__,
        "kernelmaps": kernelmaps.__version__,
        "engine": kernelmaps.get_config()["engine"],
    }
    try:
        import numba

        info["numba"] = f"{numba.__version__} ({numba.get_num_threads()} threads)"
    except ImportError:
        info["numba"] = "not installed"
    info.update(thread_pools())
    info.update({var: os.environ[var] for var in BLAS_VARIABLES if var in os.environ})
    return info


def machine_line() -> str:
    """:func:`machine_info` on one line, for the head of a script's output."""
    return "; ".join(f"{key}: {value}" for key, value in machine_info().items())


# -- time ------------------------------------------------------------------------------


@dataclass
class Timing:
    """The times (seconds) of the repeats of one call."""

    times: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def min(self) -> float:
        return min(self.times)

    @property
    def max(self) -> float:
        return max(self.times)

    @property
    def spread(self) -> float:
        """Max minus min."""
        return self.max - self.min


def timed(func: Callable[[], Any]) -> tuple[float, Any]:
    """Seconds taken by one call of ``func``, and its result."""
    start = time.perf_counter()
    result = func()
    return time.perf_counter() - start, result


def best_time(func: Callable[[], Any], repeats: int = 3, number: int = 1) -> float:
    """Seconds per call of the fastest of ``repeats`` runs of ``number`` calls.

    After one untimed call.  The best, not the median: a rate of the machine (what it can
    do), not of a comparison (which :func:`time_alternating` makes).
    """
    func()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            func()
        best = min(best, (time.perf_counter() - start) / number)
    return best


def time_alternating(
    calls: dict[str, Callable[[], Any]], repeats: int, *, warm_up: bool = True
) -> dict[str, Timing]:
    """Time the calls alternated, ``repeats`` rounds of one call each, in one process.

    Alternating spreads the load of other processes over every call alike.  Each call
    is first made once untimed (compilation, caches, first touch of memory) unless
    ``warm_up`` is false (when the caller made that call already).  Results are dropped
    as soon as they are timed.
    """
    if warm_up:
        for call in calls.values():
            call()
    timings = {name: Timing() for name in calls}
    for _ in range(repeats):
        for name, call in calls.items():
            seconds, result = timed(call)
            del result
            timings[name].times.append(seconds)
    return timings


# -- memory ----------------------------------------------------------------------------


def peak_memory(func: Callable[[], Any]) -> tuple[int, float]:
    """Peak traced memory (bytes) of one call of ``func``, and its (indicative) seconds."""
    gc.collect()
    tracemalloc.start()
    try:
        seconds, result = timed(func)
        del result
        return tracemalloc.get_traced_memory()[1], seconds
    finally:
        tracemalloc.stop()


def peak_rss() -> int:
    """Peak resident set of this process in bytes (``VmHWM`` on Linux, else ``ru_maxrss``)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:  # pragma: no cover - not Linux
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def reset_peak_rss() -> None:
    """Reset ``VmHWM`` to the current resident set (Linux ``clear_refs`` 5); else nothing."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:  # pragma: no cover - not Linux
        pass


def limit_address_space(gigabytes: float) -> None:
    """Make allocations beyond ``gigabytes`` fail with ``MemoryError`` in this process."""
    limit = int(gigabytes * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def nbytes(X: Any) -> int:
    """Bytes held by a dense array or a sparse matrix."""
    if sp.issparse(X):
        return int(X.data.nbytes + X.indices.nbytes + X.indptr.nbytes)
    return int(X.nbytes)


# -- error -----------------------------------------------------------------------------


def _dense64(X: Any) -> np.ndarray:
    return np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)


def kernel_error(
    est: Any,
    X: Any,
    kernel: Callable[..., np.ndarray],
    *,
    rows: int | None = None,
    norm: str = "fro",
) -> float:
    """Relative error ``|K - Z Z^T| / |K|`` of the fitted map ``est`` on ``X[:rows]``.

    ``kernel(A, B)`` is the exact kernel, evaluated on float64 (dense) copies of the rows;
    the features are those of ``est.transform`` on the rows as given (their dtype kept).
    """

    def exact(A: Any, B: Any) -> np.ndarray:
        return np.asarray(kernel(_dense64(A), _dense64(B)), dtype=np.float64)

    return feature_map_error(est, X[:rows], kernel=exact, norm=norm)


# -- transforms ------------------------------------------------------------------------


def transform_chunked(est: Any, X: Any, chunk: int | None) -> Any:
    """``est.transform(X)``, made on row chunks of ``chunk`` rows when ``chunk`` is set."""
    if chunk is None or X.shape[0] <= chunk:
        return est.transform(X)
    first = est.transform(X[:chunk])
    out = np.empty((X.shape[0], first.shape[1]), dtype=first.dtype)
    out[:chunk] = first
    for start in range(chunk, X.shape[0], chunk):
        out[start : start + chunk] = est.transform(X[start : start + chunk])
    return out
