"""Scaled cosines and sines of projections, the elementwise half of Fourier-type maps.

Two implementations give the same values within a few units in the last place:

* numba (``kernelmaps[fast]``): one vectorized pass that writes the output directly
  (:mod:`kernelmaps._numba.trig`);
* numpy: ``np.cos`` / ``np.sin`` in place.

Both are serial and release the GIL: the maps run their row blocks on one thread per
core (:mod:`kernelmaps._parallel`).

float32 projections use numpy's own vectorized float32 ``cos`` and ``sin`` under both
engines, which are faster than any float64 evaluation and accurate to about 1 ulp.
Which engine runs is chosen by :func:`kernelmaps.set_config`.
"""

from __future__ import annotations

import numpy as np

from .._config import numba_enabled

__all__ = ["cos_shifted_into", "cos_sin_into"]


def _use_numba(dtype: np.dtype) -> bool:
    return dtype == np.float64 and numba_enabled()


def cos_sin_into(projection: np.ndarray, out: np.ndarray, scale: float) -> None:
    """Write ``[scale cos(P), scale sin(P)]`` into ``out[:, :2L]`` for P of shape (b, L).

    ``P`` may be overwritten.  ``out`` and ``P`` share the dtype.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.feature_maps._trig import cos_sin_into
    >>> out = np.empty((1, 4))
    >>> cos_sin_into(np.array([[0.0, np.pi / 2]]), out, 2.0)
    >>> out.round(12)
    array([[2., 0., 0., 2.]])
    """
    L = projection.shape[1]
    if _use_numba(out.dtype):
        from .._numba import trig

        trig.cos_sin_into(projection, out, float(scale))
        return
    np.cos(projection, out=out[:, :L])
    np.sin(projection, out=out[:, L : 2 * L])
    out[:, : 2 * L] *= out.dtype.type(scale)


def cos_shifted_into(projection: np.ndarray, offsets: np.ndarray, scale: float) -> None:
    """Replace ``P`` (b, L) in place by ``scale cos(P + offsets)``.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.feature_maps._trig import cos_shifted_into
    >>> P = np.array([[0.0, np.pi]])
    >>> cos_shifted_into(P, np.array([0.0, np.pi]), 0.5)
    >>> P.round(12)
    array([[0.5, 0.5]])
    """
    offsets = offsets.astype(projection.dtype, copy=False)
    if _use_numba(projection.dtype):
        from .._numba import trig

        trig.cos_shifted_into(projection, offsets, float(scale))
        return
    projection += offsets
    np.cos(projection, out=projection)
    projection *= projection.dtype.type(scale)
