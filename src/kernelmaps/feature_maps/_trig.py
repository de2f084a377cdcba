"""Scaled cosines and sines of projections, the elementwise half of Fourier-type maps.

Two implementations give the same values within a few units in the last place:

* numba (``kernelmaps[fast]``): one vectorized, multithreaded pass that writes the
  output directly (:mod:`kernelmaps._numba.trig`);
* numpy: ``np.cos`` / ``np.sin`` in place, split over the available cores by rows
  (numpy's ufuncs release the GIL).

float32 projections use numpy's own vectorized float32 ``cos`` and ``sin`` under both
engines, which are faster than any float64 evaluation and accurate to about 1 ulp.
Which engine runs is chosen by :func:`kernelmaps.set_config`.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import cache

import numpy as np

from .._config import numba_enabled

__all__ = ["cos_shifted_into", "cos_sin_into", "n_threads", "parallel_rows"]

# Below this many elements, one thread does the work (thread hand-off costs ~10 us).
_MIN_PARALLEL_ELEMENTS = 1 << 15


def n_threads() -> int:
    """Number of cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - platforms without affinity
        return os.cpu_count() or 1


@cache
def _executor(workers: int) -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=workers, thread_name_prefix="kernelmaps")


def parallel_rows(func: Callable[[slice], None], n_rows: int, n_elements: int) -> None:
    """Run ``func(rows)`` over contiguous row ranges, one per core, and wait for all.

    ``func`` must release the GIL for this to pay (numpy ufuncs and BLAS do).
    """
    workers = min(n_threads(), n_rows)
    if workers <= 1 or n_elements < _MIN_PARALLEL_ELEMENTS:
        func(slice(0, n_rows))
        return
    bounds = np.linspace(0, n_rows, workers + 1).astype(int)
    pool = _executor(workers)
    futures = [pool.submit(func, slice(a, b)) for a, b in itertools.pairwise(bounds)]
    for future in futures:
        future.result()


def _use_numba(dtype: np.dtype) -> bool:
    return dtype == np.float64 and numba_enabled()


def cos_sin_into(projection: np.ndarray, out: np.ndarray, scale: float) -> None:
    """Write ``[scale cos(P), scale sin(P)]`` into ``out[:, :2L]`` for P of shape (b, L).

    ``P`` may be overwritten.  ``out`` and ``P`` share the dtype.
    """
    L = projection.shape[1]
    if _use_numba(out.dtype):
        from .._numba import trig

        trig.cos_sin_into(projection, out, float(scale))
        return
    factor = out.dtype.type(scale)

    def work(rows: slice) -> None:
        block = out[rows]
        np.cos(projection[rows], out=block[:, :L])
        np.sin(projection[rows], out=block[:, L : 2 * L])
        block[:, : 2 * L] *= factor

    parallel_rows(work, projection.shape[0], projection.size)


def cos_shifted_into(projection: np.ndarray, offsets: np.ndarray, scale: float) -> None:
    """Replace ``P`` (b, L) in place by ``scale cos(P + offsets)``."""
    offsets = offsets.astype(projection.dtype, copy=False)
    if _use_numba(projection.dtype):
        from .._numba import trig

        trig.cos_shifted_into(projection, offsets, float(scale))
        return
    factor = projection.dtype.type(scale)

    def work(rows: slice) -> None:
        block = projection[rows]
        block += offsets
        np.cos(block, out=block)
        block *= factor

    parallel_rows(work, projection.shape[0], projection.size)
