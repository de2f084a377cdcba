"""Where the kernel models' arrays live when the data is an array of another library.

:class:`KernelRidge` and :class:`NystroemKernelRidge` run on the device of their data
(scikit-learn's ``array_api_dispatch`` with a tensor or a CuPy array ``X``, or the blocks
of ``NystroemKernelRidge(device=...)``): the kernel blocks are formed there, in the data's
dtype, and the float64 work (the factorizations, the sums over blocks) runs there too where
the device holds float64, on the host otherwise.  :class:`Placement` names those two
places and moves arrays between them; with data on the host every method is the NumPy
path's own operation (or the array itself), so that path is unchanged.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from .._array_api import (
    device_of,
    is_foreign,
    namespace_of,
    supports_float64,
    to_namespace,
    to_numpy,
)
from .._array_extras import add_to_diagonal
from ..kernels import Kernel
from ._base import kernel_matrix

__all__ = ["Placement", "array_kernel_matrix", "diagonal", "plus_diagonal"]


def array_kernel_matrix(kernel: Any, X: Any, Y: Any) -> Any:
    """``k(X, Y)`` for two arrays of another library on one device, on that device in
    ``X``'s dtype: a kernel object's own evaluation there, a user callable's on the host
    (in float64, checked as on NumPy) with the result moved."""
    if isinstance(kernel, Kernel):
        return kernel._call_array(X, Y)
    K = kernel_matrix(kernel, to_numpy(X), to_numpy(Y))
    return to_namespace(K, namespace_of(X), device_of(X), dtype=X.dtype)


def diagonal(A: Any) -> Any:
    """The diagonal of a square matrix of any library."""
    if isinstance(A, np.ndarray):
        return np.diag(A)
    return namespace_of(A).linalg.diagonal(A)


def plus_diagonal(A: Any, value: float, *, copy: bool = True) -> Any:
    """``A + value I``: in a copy of ``A``, or in ``A`` itself with ``copy=False`` where
    its library can."""
    if isinstance(A, np.ndarray):
        M = A.copy() if copy else A
        M[np.diag_indices_from(M)] += value
        return M
    xp = namespace_of(A)
    return add_to_diagonal(xp, xp.asarray(A, copy=True) if copy else A, value)


@dataclasses.dataclass(frozen=True)
class Placement:
    """Where a kernel model's data lives, and where its float64 work runs.

    Parameters
    ----------
    xp : namespace or None
        The array namespace of the data; None for NumPy (or SciPy, or Dask) on the host.
    device : device or None
        The data's device, in ``xp``'s terms.

    Notes
    -----
    The float64 work runs on the data's device where it holds float64
    (:func:`kernelmaps._array_api.supports_float64`), on the host otherwise (PyTorch's
    MPS); with the data on the host, every method is the NumPy operation of the host path.
    A host placement holds no module and pickles (the Dask workers receive it).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models._device import Placement
    >>> host = Placement.of(np.ones((2, 2)))
    >>> host.on_device, host.zeros((1, 2)).tolist()
    (False, [[0.0, 0.0]])
    """

    xp: Any = None
    device: Any = None

    @classmethod
    def of(cls, X: Any) -> Placement:
        """The placement of ``X``: an array (another library's, with dispatch on, is on
        its device; any other is on the host), or ``kernelmaps._rows.Rows`` (on
        their ``xp`` and ``device`` where they have them: arrays of another library,
        streamed rows)."""
        if hasattr(X, "read") and hasattr(X, "in_memory"):
            xp = getattr(X, "xp", None)
            return cls() if xp is None else cls(xp, X.device)
        if is_foreign(X):
            return cls(namespace_of(X), device_of(X))
        return cls()

    @property
    def on_device(self) -> bool:
        """Whether the data is an array of another library (on its device)."""
        return self.xp is not None

    @property
    def float64_there(self) -> bool:
        """Whether the float64 work runs where the data is (always on the host)."""
        return self.xp is None or supports_float64(self.xp, self.device)

    def _float_place(self) -> tuple[Any, Any]:
        if self.xp is None or not supports_float64(self.xp, self.device):
            return None, None
        return self.xp, self.device

    def zeros(self, shape: tuple[int, ...]) -> Any:
        """float64 zeros where the float64 work runs."""
        xp, device = self._float_place()
        if xp is None:
            return np.zeros(shape)
        return xp.zeros(shape, dtype=xp.float64, device=device)

    def to_float_place(self, a: Any) -> Any:
        """``a`` (on the host or the data's device) where the float64 work runs, its
        dtype kept (a sum into a float64 array promotes it)."""
        xp, device = self._float_place()
        if xp is None:
            return to_numpy(a)
        return to_namespace(a, xp, device) if isinstance(a, np.ndarray) else a

    def float64(self, a: Any) -> Any:
        """``a`` in float64 where the float64 work runs (``a`` itself when it is)."""
        xp, device = self._float_place()
        if xp is None:
            return np.asarray(to_numpy(a), dtype=np.float64)
        a = to_namespace(a, xp, device) if isinstance(a, np.ndarray) else a
        return xp.astype(a, xp.float64, copy=False)

    def widened(self, X: Any) -> Any:
        """The data ``X`` (on its device) in float64 where the device holds it, else as it
        is: what the float64 kernel matrices are computed from."""
        if self.xp is None or not self.float64_there:
            return X
        return self.xp.astype(X, self.xp.float64, copy=False)

    def work(self, V: Any, dtype: Any, *, copy: bool) -> Any:
        """``V`` (on the host or a device) on the data's device in ``dtype`` (a NumPy
        dtype: the working dtype of the kernel blocks)."""
        if self.xp is None:
            return V.astype(dtype, copy=copy)
        xp_dtype = getattr(self.xp, np.dtype(dtype).name)
        if isinstance(V, np.ndarray):
            return to_namespace(V, self.xp, self.device, dtype=xp_dtype)
        return self.xp.astype(V, xp_dtype, copy=copy)

    def data(self, a: Any) -> Any:
        """``a`` (on the host or the data's device) where the data is, dtype kept: a
        fitted array (NumPy for data on the host)."""
        if self.xp is None:
            return to_numpy(a)
        return to_namespace(a, self.xp, self.device) if isinstance(a, np.ndarray) else a

    def fitted(self, a: Any) -> Any:
        """A float64 result (coefficients) where the data is: float64 on the host or on a
        device that holds it, float32 on one that does not."""
        if self.xp is None or self.float64_there:
            return self.data(a)
        return to_namespace(a, self.xp, self.device, dtype=self.xp.float32)
