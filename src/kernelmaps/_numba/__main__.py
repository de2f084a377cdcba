"""``python -m kernelmaps._numba``: compile every compiled kernel ahead, into numba's cache.

A process then never compiles: run it once after installing (e.g. in the build of a
container image, with ``NUMBA_CACHE_DIR`` pointing into the image if the package folder
is read-only at run time).  Prints one line per kernel and signature: loaded from the
cache or compiled, in how many seconds, and where the cache is.
"""

from __future__ import annotations

import sys
import time


def main() -> int:
    """Build every signature of every kernel; 0 on success."""
    from . import binning, hadamard, sketch, trig  # noqa: F401 - they define the kernels
    from ._jit import cache_folder, kernels

    for compiled in kernels():
        for key in compiled.signatures:
            start = time.perf_counter()
            dispatcher = compiled[key]
            seconds = time.perf_counter() - start
            how = "loaded" if sum(dispatcher.stats.cache_hits.values()) else "compiled"
            folder = cache_folder(dispatcher) or "not cached"
            print(f"{compiled.__name__}[{key}]: {how} in {seconds:.2f} s ({folder})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
