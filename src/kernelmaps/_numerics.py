"""The numerical guards: finiteness, magnitudes, overflow bounds, for arrays of any library.

Every output of a kernel or a map is finite or the call raises (see :class:`BaseFeatureMap
<kernelmaps.feature_maps.BaseFeatureMap>` and ``Kernel.__call__``): these are the checks
and the bounds they use, and the words of their messages.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.sparse as sp

from ._array_api import get_namespace, host_dtype, is_numpy, to_numpy

__all__ = [
    "LIMITS_PAGE",
    "below_overflow",
    "ignore_fp_warnings",
    "is_finite",
    "largest_magnitude",
    "non_finite_rows",
    "row_list",
]

#: Where the numerical limits of every map are documented.
LIMITS_PAGE = "docs/LIMITS.md"


def ignore_fp_warnings() -> Any:
    """The floating-point error state of a fit or a transform: overflow, invalid and
    division warnings silenced, the result being checked for finiteness instead.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._numerics import ignore_fp_warnings
    >>> with ignore_fp_warnings():
    ...     float(np.float64(1e308) * 10)
    inf
    """
    return np.errstate(over="ignore", invalid="ignore", divide="ignore")


def is_finite(a: Any, xp: Any = None) -> bool:
    """Whether every value of the array (or of a sparse matrix's stored values) is finite.

    ``xp`` is the namespace of ``a`` (None: ``a``'s own).  On NumPy, one sum first (a pass that
    stays in the cache for a block just written); the element-wise check only when the
    sum is not finite, which also happens when finite values add up beyond the float
    range.  Other libraries reduce the element-wise check on their device.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._numerics import is_finite
    >>> is_finite(np.array([1e308, 1e308])), is_finite(np.array([1.0, np.nan]))
    (True, False)
    """
    if xp is None and not sp.issparse(a):
        xp = get_namespace(a)[0]
    if xp is not None and not is_numpy(xp):
        return bool(xp.all(xp.isfinite(a)))
    if sp.issparse(a):
        a = a.data
    a = np.asarray(a)
    if a.dtype.kind not in "fc" or a.size == 0:
        return True
    with ignore_fp_warnings():
        if np.isfinite(a.sum()):
            return True
        return bool(np.isfinite(a).all())


def non_finite_rows(block: Any) -> np.ndarray:
    """Indices of the rows of ``block`` (dense or CSR, of any library) holding a
    non-finite value (an error path: other libraries' blocks are read on the host)."""
    if sp.issparse(block):
        block = sp.csr_matrix(block)
        bad = ~np.isfinite(block.data)
        rows = np.repeat(np.arange(block.shape[0]), np.diff(block.indptr))
        return np.unique(rows[bad])
    return np.flatnonzero(~np.isfinite(to_numpy(block)).all(axis=1))


def largest_magnitude(X: Any, xp: Any = None) -> float:
    """``max |x|`` over the values of ``X`` (dense or sparse), 0 when empty.

    Two reductions and no temporary (no ``abs`` array), on ``X``'s device for the arrays
    of another library (``xp`` their namespace; None: ``X``'s own).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._numerics import largest_magnitude
    >>> largest_magnitude(np.array([[1.0, -3.0]]))
    3.0
    """
    if xp is None and not sp.issparse(X):
        xp = get_namespace(X)[0]
    if xp is not None and not is_numpy(xp):
        if math.prod(X.shape) == 0:
            return 0.0
        return float(max(float(xp.max(X)), -float(xp.min(X))))
    values = X.data if sp.issparse(X) else np.asarray(X)
    if values.size == 0:
        return 0.0
    return float(max(values.max(), -values.min()))


def below_overflow(bound: float, dtype: Any) -> bool:
    """Whether ``bound`` (a float64 bound on the magnitudes of a computation, maybe inf)
    stays below half the largest value of ``dtype``, leaving room for rounding.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._numerics import below_overflow
    >>> below_overflow(1e30, np.float32), below_overflow(1e39, np.float32)
    (True, False)
    """
    return bool(bound < 0.5 * float(np.finfo(host_dtype(dtype)).max))


def row_list(rows: np.ndarray, offset: int | None) -> str:
    """``"rows 3, 7 and 2 more"``: the rows of a block (``offset`` its first row in the
    input, None if unknown) for a message."""
    shown = ", ".join(str(int(r) + (offset or 0)) for r in rows[:5])
    more = f" and {rows.size - 5} more" if rows.size > 5 else ""
    where = "" if offset is not None else " of the block"
    return f"row{'s' if rows.size > 1 else ''} {shown}{more}{where}"
