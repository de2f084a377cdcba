"""The kernel evaluations of Nyström besides :class:`~kernelmaps.kernels.LandmarkKernel`.

* :func:`landmark_kernel` -- ``k(X, L)`` of rows and landmarks of any array library, in
  its namespace (Nyström's transform and ``K_mm`` on a device, IKA's kernel basis);
* :func:`_callable_gram` -- ``K_mm`` of a kernel callable on the host, checked, with the
  hint about ``kernel_call='pair'`` when a matrix callable fails on its first call;
* :class:`_PrecomputedIndexKernel` -- the kernel of ``kernel="precomputed"``: row
  positions looked up in the training kernel matrix, for the landmark methods that
  evaluate the kernel (leverage, rpcholesky).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._array_api import get_namespace, on_host
from ..exceptions import NonFiniteOutputError
from ..kernels import CallableKernel, Kernel, ShiftInvariantKernel, check_kernel_matrix

__all__ = ["landmark_kernel"]


def landmark_kernel(kernel: Callable[..., Any], X: Any, L: Any) -> Any:
    """``k(X, L)`` for dense rows ``X`` and landmarks ``L`` of any array library, in the
    namespace, on the device and in the dtype of ``X``.

    A shift-invariant kernel is evaluated on the rows less the mean ``mu`` of the
    landmarks, as :class:`~kernelmaps.kernels.LandmarkKernel` centres the Gaussian's
    product: its values do not change and the rounding of the distances is that of the
    spread of the data, not of its distance from the origin.  A kernel callable is
    written for NumPy arrays: it runs on host copies (float64 landmarks), its values
    checked (float64 on NumPy, moved in the dtype of ``X`` otherwise).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import Gaussian
    >>> from kernelmaps.feature_maps._nystroem_kernels import landmark_kernel
    >>> landmark_kernel(Gaussian(gamma=1.0), np.zeros((1, 2)), np.eye(2)).round(4).tolist()
    [[0.3679, 0.3679]]
    """
    xp, _ = get_namespace(X, L)
    if not isinstance(kernel, Kernel):

        def on_rows(X: np.ndarray, L: np.ndarray) -> np.ndarray:
            K = kernel(X, L.astype(np.float64))
            return check_kernel_matrix(K, int(X.shape[0]), int(L.shape[0]))

        return on_host(on_rows, X, L, dtype=X.dtype)
    L = xp.astype(L, X.dtype, copy=False)
    if not isinstance(kernel, ShiftInvariantKernel):
        return kernel(X, L)
    mu = xp.mean(L, axis=0)
    Lc = L - mu
    return kernel(Lc if X is L else X - mu, Lc)


def _callable_gram(kernel: Callable[..., Any], L64: np.ndarray) -> np.ndarray:
    """``K_mm`` of a kernel callable on the float64 landmarks ``L64``, checked; a matrix
    callable that fails on its first call is told about ``kernel_call='pair'``."""
    if isinstance(kernel, CallableKernel):
        try:
            K_mm = kernel(L64, L64)
        except NonFiniteOutputError:
            raise
        except Exception as error:
            # the first call of a matrix callable: a per-pair kernel (scikit-learn's
            # convention) fails here, or returns the wrong shape
            hint = (
                f"{error} (Nystroem calls a callable kernel on two 2D arrays of rows "
                "and expects their kernel matrix; for a kernel on one pair of rows, "
                "scikit-learn's convention, pass kernel_call='pair'.)"
            )
            try:
                again = type(error)(hint)
            except Exception:  # an exception type with another constructor
                raise error from None
            raise again from error
    else:
        K_mm = kernel(L64, L64)
    return check_kernel_matrix(K_mm, len(L64), len(L64))


class _PrecomputedIndexKernel:
    """Kernel on row indices (stored as a float column) looked up in a precomputed K."""

    def __init__(self, K: Any) -> None:
        self.K = K

    def __call__(self, A: Any, B: Any) -> np.ndarray:
        rows = np.asarray(A, dtype=np.int64).reshape(-1)
        cols = np.asarray(B, dtype=np.int64).reshape(-1)
        sub = self.K[rows][:, cols]
        return np.asarray(sub.toarray() if sp.issparse(sub) else sub, dtype=np.float64)

    def diag(self, A: Any) -> np.ndarray:
        rows = np.asarray(A, dtype=np.int64).reshape(-1)
        d = self.K.diagonal() if sp.issparse(self.K) else np.diagonal(self.K)
        return np.asarray(d, dtype=np.float64)[rows]
