"""Where the kernel models' arrays live when the data is an array of another library.

:class:`KernelRidge` and :class:`NystroemKernelRidge` run on the device of their data
(scikit-learn's ``array_api_dispatch`` with a tensor or a CuPy array ``X``, or the blocks
of ``NystroemKernelRidge(device=...)``): the kernel blocks are formed there, in the data's
dtype, and the float64 work (the factorizations, the sums over blocks) runs there too where
the device holds float64, on the host otherwise.  :class:`Placement` names those two
places and moves arrays between them.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import numpy as np

from .._array_api import (
    get_namespace,
    is_numpy,
    numpy_namespace,
    on_host,
    placed,
    supports_float64,
    to_namespace,
)
from .._array_extras import add_to_diagonal
from ..kernels import Kernel
from ._base import kernel_matrix

__all__ = ["Placement", "array_kernel_matrix", "diagonal", "plus_diagonal"]


def array_kernel_matrix(kernel: Any, X: Any, Y: Any) -> Any:
    """``k(X, Y)`` for two arrays of one library (NumPy or another, on one device), there
    in ``X``'s dtype: a kernel object's own evaluation on a device, a user callable's (and
    every kernel's on NumPy) on the host, in float64, checked (:func:`kernel_matrix`),
    the result moved back."""
    xp = get_namespace(X, Y)[0]
    if isinstance(kernel, Kernel) and not is_numpy(xp):
        return kernel(X, Y)
    return on_host(functools.partial(kernel_matrix, kernel), X, Y)


def diagonal(A: Any) -> Any:
    """The diagonal of a square matrix of any library (a view where the library has
    them)."""
    return get_namespace(A)[0].linalg.diagonal(A)


def plus_diagonal(A: Any, value: float, *, copy: bool = True) -> Any:
    """``A + value I``: in a copy of ``A``, or in ``A`` itself with ``copy=False`` where
    its library can."""
    xp = get_namespace(A)[0]
    if is_numpy(xp):
        M = A.copy() if copy else A
        M[np.diag_indices_from(M)] += value
        return M
    return add_to_diagonal(xp, xp.asarray(A, copy=True) if copy else A, value)


@dataclasses.dataclass(frozen=True)
class Placement:
    """Where a kernel model's data lives, and where its float64 work runs.

    Parameters
    ----------
    xp : namespace, default=NumPy's
        The array namespace of the data (NumPy's, ``array_api_compat.numpy``, for NumPy,
        SciPy or Dask data on the host).
    device : device, default="cpu"
        The data's device, in ``xp``'s terms.

    Notes
    -----
    The float64 work runs on the data's device where it holds float64
    (:func:`kernelmaps._array_api.supports_float64`), on the host otherwise (PyTorch's
    MPS); with the data on the host, every method is the NumPy operation of the host path.
    A host placement pickles (the Dask workers receive it) as one made anew there.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models._device import Placement
    >>> host = Placement.of(np.ones((2, 2)))
    >>> host.on_device, host.zeros((1, 2)).tolist()
    (False, [[0.0, 0.0]])
    """

    xp: Any = dataclasses.field(default_factory=numpy_namespace)
    device: Any = "cpu"

    @classmethod
    def of(cls, X: Any) -> Placement:
        """The placement of ``X``: validated data (an array of another library is on its
        device, any other on the host), or ``kernelmaps._rows.Rows`` (on their ``xp`` and
        ``device``: those of an array of another library, or of rows streamed to one)."""
        if hasattr(X, "read") and hasattr(X, "in_memory"):
            return cls(X.xp, X.device)
        return cls(*get_namespace(X))

    def __reduce__(self) -> Any:
        return (Placement, ()) if not self.on_device else (Placement, (self.xp, self.device))

    @functools.cached_property
    def on_device(self) -> bool:
        """Whether the data is an array of another library (on its device)."""
        return not is_numpy(self.xp)

    @property
    def float64_there(self) -> bool:
        """Whether the float64 work runs where the data is (always on the host)."""
        return supports_float64(self.xp, self.device)

    def _float_place(self) -> tuple[Any, Any]:
        """``(xp, device)`` of the float64 work: the data's, or NumPy's on the host."""
        if not self.float64_there:
            return numpy_namespace(), "cpu"
        return self.xp, self.device

    def zeros(self, shape: tuple[int, ...]) -> Any:
        """float64 zeros where the float64 work runs."""
        xp, device = self._float_place()
        return xp.zeros(shape, dtype=xp.float64, device=device)

    def to_float_place(self, a: Any) -> Any:
        """``a`` (on the host or the data's device) where the float64 work runs, its
        dtype kept (a sum into a float64 array promotes it)."""
        return placed(a, *self._float_place())

    def float64(self, a: Any) -> Any:
        """``a`` in float64 where the float64 work runs (``a`` itself when it is)."""
        xp, device = self._float_place()
        return xp.astype(placed(a, xp, device), xp.float64, copy=False)

    def widened(self, X: Any) -> Any:
        """The data ``X`` in float64 where the data's device holds it, else as it is (on
        the host: as it is): what the float64 kernel matrices are computed from."""
        if not self.on_device or not self.float64_there:
            return X
        return self.xp.astype(X, self.xp.float64, copy=False)

    def work(self, V: Any, dtype: Any, *, copy: bool) -> Any:
        """``V`` (on the host or a device) on the data's device in ``dtype`` (a NumPy
        dtype: the working dtype of the kernel blocks)."""
        if not self.on_device:
            return V.astype(dtype, copy=copy)
        xp_dtype = getattr(self.xp, np.dtype(dtype).name)
        if is_numpy(get_namespace(V)[0]):  # a host array: one copy to the device
            return to_namespace(V, self.xp, self.device, dtype=xp_dtype)
        return self.xp.astype(V, xp_dtype, copy=copy)

    def data(self, a: Any) -> Any:
        """``a`` (on the host or the data's device) where the data is, dtype kept: a
        fitted array (NumPy for data on the host)."""
        return placed(a, self.xp, self.device)

    def fitted(self, a: Any) -> Any:
        """A float64 result (coefficients) where the data is: float64 on the host or on a
        device that holds it, float32 on one that does not."""
        if self.float64_there:
            return self.data(a)
        return to_namespace(a, self.xp, self.device, dtype=self.xp.float32)
