"""Kernel between row blocks and a fixed set of landmarks, evaluated many times.

Nyström features and Nyström kernel ridge regression evaluate ``k(X_block, L)`` for many
row blocks ``X_block`` against the same ``m`` landmarks ``L``.  :class:`LandmarkKernel`
prepares what depends on the landmarks only, once, and evaluates each block in the
working dtype (float32 stays float32).

For the Gaussian kernel ``exp(-gamma |x - l|^2)`` with dense input the block is one GEMM
with two augmented columns,

.. math::
    -\\gamma |x - l|^2 = [x - \\mu,\\; -\\gamma |x - \\mu|^2,\\; 1] \\cdot
    [2 \\gamma (l - \\mu),\\; 1,\\; -\\gamma |l - \\mu|^2],

followed by ``exp(min(0, .))`` in place, in cache-sized chunks of rows: no temporary of
the block's size besides the output.  ``mu`` is the mean of the landmarks: distances do
not change, and centring keeps the rounding error of the expansion, about
``eps * gamma (|x - mu|^2 + |l - mu|^2)`` on the exponent (relative on ``k``), small
even for data far from the origin.  Other kernels, and sparse input, go through the
kernel's own evaluation (float64 inside, cast to the working dtype).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

from ._argument import check_kernel_matrix
from ._shift_invariant import Gaussian

__all__ = ["LandmarkKernel"]

#: Bytes of a row chunk for the elementwise passes (about the L2 cache).
_CHUNK_BYTES = 1 << 19


class LandmarkKernel:
    """``k(X, landmarks)`` for row blocks ``X``, in the working dtype.

    Parameters
    ----------
    kernel : Kernel or callable
        ``kernel(A, B)`` returns the kernel matrix between the rows of ``A`` and ``B``.
    landmarks : ndarray of shape (m, n_features)
        The landmarks (dense).
    dtype : {numpy.float32, numpy.float64}
        Working dtype of the returned blocks.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import Gaussian
    >>> from kernelmaps.kernels._landmark_block import LandmarkKernel
    >>> L = np.array([[0.0, 1.0], [1.0, 1.0]])
    >>> block = LandmarkKernel(Gaussian(gamma=0.5), L, np.float64)(np.zeros((3, 2)))
    >>> np.round(block, 4).tolist()[0]
    [0.6065, 0.3679]
    """

    def __init__(self, kernel: Callable[..., Any], landmarks: np.ndarray, dtype: Any) -> None:
        self.kernel = kernel
        self.dtype = np.dtype(dtype)
        self.landmarks = np.ascontiguousarray(landmarks, dtype=self.dtype)
        self.fast = isinstance(kernel, Gaussian) and kernel.gamma is not None
        if self.fast:
            gamma = float(kernel.gamma)  # type: ignore[attr-defined]
            L64 = np.asarray(landmarks, dtype=np.float64)
            m, d = L64.shape
            right = np.empty((d + 2, m))
            # landmarks near the float limit (their mean) or a huge gamma (2 gamma = inf,
            # inf * 0 = NaN) overflow here: checked just below, the exact route then
            with np.errstate(over="ignore", invalid="ignore"):
                mu = L64.mean(axis=0) if L64.shape[0] else np.zeros(L64.shape[1])
                # the same (rounded) centre on both sides, so that x - l is unchanged
                mu = mu.astype(self.dtype).astype(np.float64)
                Lc = L64 - mu
                right[:d] = (2.0 * gamma) * Lc.T
                right[d] = 1.0
                right[d + 1] = -gamma * np.einsum("ij,ij->i", Lc, Lc)
                right_cast = np.ascontiguousarray(right, dtype=self.dtype)
                finite = bool(np.isfinite(right_cast).all())
            # landmarks (or a gamma) beyond the range of the dtype, or spread so far that
            # the expansion's rounding error on the exponent (about 4 eps gamma
            # max|l - mu|^2 for a row near a landmark) passes 1%: the exact route only
            spread = -float(np.min(right[d + 1], initial=0.0))
            error = 4.0 * float(np.finfo(self.dtype).eps) * spread
            self.fast = finite and error <= 0.01
            self._gamma = gamma
            self._mu = mu.astype(self.dtype)
            self._right = right_cast

    @property
    def n_landmarks(self) -> int:
        return int(self.landmarks.shape[0])

    def __call__(self, X: Any, out: np.ndarray | None = None) -> np.ndarray:
        """Kernel block ``K[i, j] = k(X[i], landmarks[j])``, shape ``(n_rows, m)``.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_rows, n_features)
        out : ndarray of shape (n_rows, m), optional
            C-contiguous array of the working dtype to write into.
        """
        m = self.n_landmarks
        if out is None:
            out = np.empty((X.shape[0], m), dtype=self.dtype)
        if not self.fast or sp.issparse(X):
            out[...] = check_kernel_matrix(self.kernel(X, self.landmarks), X.shape[0], m)
            return out
        n, d = X.shape
        left = np.empty((n, d + 2), dtype=self.dtype)
        Xc = left[:, :d]
        with np.errstate(over="ignore", invalid="ignore"):
            np.subtract(X, self._mu, out=Xc)
            left[:, d] = np.einsum("ij,ij->i", Xc, Xc)
            left[:, d] *= -self._gamma
            # rows whose expansion overflows (|x| beyond about 1e154, or 1e19 in float32)
            # go through the kernel's own evaluation, exact at any magnitude
            far = ~np.isfinite(left[:, d])
            if far.any():
                left[far] = 0.0
            left[:, d + 1] = 1.0
            np.matmul(left, self._right, out=out)
        step = max(1, _CHUNK_BYTES // max(1, m * self.dtype.itemsize))
        for start in range(0, n, step):
            chunk = out[start : start + step]
            np.minimum(chunk, 0.0, out=chunk)
            np.exp(chunk, out=chunk)
        if far.any():
            rows = np.flatnonzero(far)
            out[rows] = check_kernel_matrix(self.kernel(X[rows], self.landmarks), rows.size, m)
        return out
