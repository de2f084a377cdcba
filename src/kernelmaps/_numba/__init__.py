"""Compiled kernels built with numba (optional dependency, ``kernelmaps[fast]``).

Modules of this package import numba at import time; they are imported only when
:func:`kernelmaps._config.numba_enabled` is true.  Every kernel here has a pure-numpy
counterpart next to the code that calls it, and the tests run both.

Each kernel has a fixed table of signatures, compiled on first use and kept in numba's
on-disk cache, so that a machine compiles each at most once (:mod:`._jit`);
``python -m kernelmaps._numba`` compiles them all ahead.
"""
