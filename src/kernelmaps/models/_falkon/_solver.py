"""FALKON's pieces: the preconditioner, the ``K_nm^T K_nm`` matvec, and their composition.

Following the split of the FALKON code (``preconditioner/`` and ``optim/conjgrad.py``):
:class:`FalkonPreconditioner` owns the two ``m x m`` Cholesky factors and applies them,
:class:`NystroemMatvec` owns how the ``K_nm`` row blocks are produced (kept in a cache or
recomputed) and computes ``K_nm^T (K_nm V)``, and :class:`FalkonSolver` composes them
into the operator handed to :func:`~kernelmaps.models.conjugate_gradient`, which sees only
a matvec.  The matvec is the only piece that touches the ``n`` rows.

On rows of another library (array API dispatch) or streamed to a device, the ``K_nm``
blocks and their products are formed on the device in the rows' dtype, the ``m x m``
float64 work (``K_mm``, the two factors, their solves, the sums over blocks) runs there
where the device holds float64 (:class:`~kernelmaps.models._device.Placement`), and the
conjugate gradient runs on the host in float64 on the ``m x t`` iterates, moved each way
once per iteration.  On the host every operation is the NumPy one.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from sklearn.utils import check_array

from ... import _progress
from ..._array_api import get_namespace, is_numpy, placed, to_numpy
from ..._array_extras import cholesky, solve_triangular
from ..._memory import check_device_memory
from ..._numerics import is_finite
from ..._progress import Progress, RowCounter, counted_pass
from ..._row_blocks import row_blocks
from ..._rows import Parts, Rows
from ..._validation import one_line_errors
from ...exceptions import NonFiniteOutputError
from .._base import FLOAT_DTYPES, as_row_sliceable
from .._device import Placement, array_kernel_matrix, diagonal, plus_diagonal
from .._ridge._pass import _add
from ._cg import CGResult, conjugate_gradient

__all__ = [
    "FalkonPreconditioner",
    "FalkonSolver",
    "GramOperator",
    "MatvecPart",
    "NystroemMatvec",
    "RowsMatvec",
    "add_gram_product",
    "landmark_gram",
]

#: Bytes of the row chunks of a ``K_nm`` block on which ``K^T (K V)`` is formed: the chunk
#: is still in cache for the second product, so each pass reads ``K_nm`` from memory once.
_CHUNK_BYTES = 1 << 20


def _triangular(F: Any, V: Any, trans: str = "N") -> Any:
    """``F^{-1} V`` (``F^{-T} V`` with ``trans="T"``) for an upper-triangular ``F``."""
    xp = get_namespace(F)[0]
    if is_numpy(xp):
        return scipy.linalg.solve_triangular(F, V, trans=trans, lower=False, check_finite=False)
    return solve_triangular(xp, F, V, lower=False, transpose=trans == "T")


def _upper_cholesky(M: Any) -> Any:
    """The upper Cholesky factor of the symmetric ``M``, in ``M``'s own memory (``M`` is
    overwritten; the factor is a column-major view of it) where the library can;
    :class:`numpy.linalg.LinAlgError` (or a subclass) when ``M`` is not numerically
    positive definite, on every library."""
    xp, _ = get_namespace(M)
    if is_numpy(xp):
        # M.T is column-major and equal to M: LAPACK's potrf works in it, as it did in
        # the column-major copy of M that SciPy made before (the same factor, bit for bit)
        return scipy.linalg.cholesky(M.T, lower=False, overwrite_a=True, check_finite=False)
    return xp.matrix_transpose(cholesky(xp, M, "The matrix", overwrite=True))


def _like(V: np.ndarray, A: Any) -> Any:
    """The host array ``V`` where ``A`` is (``V`` itself for a NumPy ``A``)."""
    return placed(V, *get_namespace(A))


def add_gram_product(K: Any, V: Any, out: Any, placement: Placement | None = None) -> Any:
    """``out += K^T (K V)``, chunk by chunk of the rows of ``K`` (one read of ``K``).

    Each chunk of rows (about 1 MiB) is still in cache for the second product.  ``K`` and
    ``V`` are in the working dtype; ``out`` (float64) accumulates the chunks' products.
    On a device (``placement``) the block is one chunk, its product moved to ``out``.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models._falkon._solver import add_gram_product
    >>> add_gram_product(np.eye(3)[:, :2], np.ones((2, 1)), np.zeros((2, 1))).ravel().tolist()
    [1.0, 1.0]
    """
    if placement is not None and placement.on_device:
        out += placement.to_float_place(K.T @ (K @ V))
        return out
    step = max(1, _CHUNK_BYTES // max(1, K.shape[1] * K.itemsize))
    for start in range(0, K.shape[0], step):
        chunk = K[start : start + step]
        out += chunk.T @ (chunk @ V)
    return out


def landmark_gram(kernel: Callable[..., Any], L: Any) -> Any:
    """``K_mm = k(L, L)`` in float64, symmetrized (``(K + K^T) / 2``).

    Landmarks ``L`` on a device give ``K_mm`` computed from them in float64 where the
    device holds it, and kept there (on the host otherwise).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import Gaussian
    >>> from kernelmaps.models._falkon._solver import landmark_gram
    >>> landmark_gram(Gaussian(gamma=1.0), np.zeros((2, 3))).tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    place = Placement.of(L)
    wide = place.widened(L)
    K_mm = place.float64(array_kernel_matrix(kernel, wide, wide))
    if not is_finite(K_mm):
        raise NonFiniteOutputError(
            "The landmark kernel matrix K_mm holds inf or NaN (the kernel overflowed float64 "
            "for these inputs); rescale X (e.g. standardise its columns) or use a smaller "
            "gamma."
        )
    return 0.5 * (K_mm + K_mm.T)


def _cholesky_with_jitter(T: Any, n: int, alpha: float) -> Any:
    """The upper Cholesky factor of ``(n / m) T T^T + alpha I``, with a jitter raised a
    hundredfold while rounding makes it fail: only the preconditioner changes, never the
    solution.  One ``m x m`` array beside ``T``: the product is formed, shifted and
    factored in place, and formed again (the same, bit for bit) after a failure."""
    m = T.shape[0]
    xp, _ = get_namespace(T)
    scale, jitter = None, 0.0
    for _ in range(8):
        B = T @ T.T
        B *= n / m
        if scale is None:
            scale = max(float(xp.max(xp.abs(diagonal(B)))), np.finfo(np.float64).tiny)
        try:
            return _upper_cholesky(plus_diagonal(B, alpha + jitter, copy=False))
        except np.linalg.LinAlgError:
            jitter = 1e-13 * m * scale if jitter == 0.0 else 100.0 * jitter
        del B  # the failed factor goes before the product is formed again
    raise ValueError(
        "FALKON's preconditioner (n/m) T T^T + alpha I could not be factorized; is the "
        "kernel positive definite? Use a positive-definite kernel or a larger alpha."
    )


class FalkonPreconditioner:
    """FALKON's preconditioner ``B = T^{-1} A^{-1}`` for the Nyström normal equations.

    ``T`` is the upper Cholesky factor of ``K_mm`` (``K_mm = T^T T``, with FALKON's jitter
    ``1e-13 m`` times the mean diagonal, raised a hundredfold while ``K_mm`` is not
    numerically positive definite) and ``A`` that of ``(n / m) T T^T + alpha I``, so that
    ``B^{-T} B^{-1} = T^T A^T A T = (n/m) K_mm^2 + alpha K_mm`` approximates
    ``K_nm^T K_nm + alpha K_mm``.

    Parameters
    ----------
    K_mm : ndarray of shape (m, m)
        Symmetric kernel matrix of the landmarks (float64; an array of another library is
        factorized on its device, with ``kernelmaps._array_api.cholesky``).
    n : int
        Number of training rows.
    alpha : float
        Ridge penalty.

    Attributes
    ----------
    T, A : ndarray of shape (m, m)
        The upper-triangular factors.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models._falkon._solver import FalkonPreconditioner
    >>> pre = FalkonPreconditioner(np.eye(3), n=6, alpha=1.0)
    >>> pre.apply(np.ones(3)).round(4).tolist()
    [0.5774, 0.5774, 0.5774]
    """

    def __init__(self, K_mm: Any, n: int, alpha: float) -> None:
        m = K_mm.shape[0]
        xp, device = get_namespace(K_mm)
        if not is_numpy(xp):  # the two factors, T and A (on the host: the caller checks)
            check_device_memory(
                xp,
                device,
                2 * 8.0 * m * m,
                f"FALKON's two {m} x {m} float64 factors",
                "lower n_components (the number of landmarks)",
            )
        scale = max(float(xp.mean(diagonal(K_mm))), np.finfo(np.float64).tiny)
        jitter = 1e-13 * m * scale
        for _ in range(8):
            try:  # a copy of K_mm, factored in place (the copy goes if it fails)
                self.T = _upper_cholesky(plus_diagonal(K_mm, jitter))
                break
            except np.linalg.LinAlgError:
                jitter *= 100.0
        else:
            raise ValueError(
                "The landmark kernel matrix K_mm is not positive semi-definite; is the "
                "kernel positive definite? Use a positive-definite kernel."
            )
        self.A = _cholesky_with_jitter(self.T, n, alpha)

    def apply(self, V: Any) -> Any:
        """``B V = T^{-1} A^{-1} V``."""
        return _triangular(self.T, _triangular(self.A, V))

    def apply_t(self, V: Any) -> Any:
        """``B^T V = A^{-T} T^{-T} V``."""
        return _triangular(self.A, _triangular(self.T, V, trans="T"), trans="T")


class NystroemMatvec:
    """``K_nm^T (K_nm V)`` over row blocks of ``X``, with the blocks cached within a budget.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n, d)
        The training rows (sliceable by row); an array of another library on its device.
    blocks : sequence of slice
        The row blocks.
    block_kernel : callable
        ``X_block -> k(X_block, L)`` of shape (rows, m), in the working dtype.
    dtype : numpy dtype
        The working dtype of the blocks and their products.
    cache_rows : int
        Rows of ``K_nm`` kept between passes (the first blocks that fit); the others are
        recomputed at every pass.
    placement : Placement, optional
        Where ``X`` is and the float64 sums are (default: the host).

    Attributes
    ----------
    n_cached_rows : int
        Rows of ``K_nm`` held in the cache (after :meth:`rhs`).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models._falkon._solver import NystroemMatvec
    >>> X, L = np.eye(4), np.eye(4)[:2]
    >>> mv = NystroemMatvec(X, [slice(0, 4)], lambda Xb: Xb @ L.T, np.dtype(np.float64), 0)
    >>> mv.rhs(np.ones((4, 1))).ravel().tolist()
    [1.0, 1.0]
    """

    def __init__(
        self,
        X: Any,
        blocks: Sequence[slice],
        block_kernel: Callable[[Any], np.ndarray],
        dtype: np.dtype,
        cache_rows: int,
        placement: Placement | None = None,
    ) -> None:
        self.X = X
        self.blocks = list(blocks)
        self.block_kernel = block_kernel
        self.dtype = np.dtype(dtype)
        self.cache_rows = int(cache_rows)
        self.placement = placement or Placement()
        self._cache: list[Any] = [None] * len(self.blocks)
        self.n_cached_rows = 0

    def rhs(self, Y: Any, progress: Callable[[int], None] | None = None) -> Any:
        """``K_nm^T Y`` (float64, shape (m, t)), in one pass that fills the cache;
        ``progress`` is called with the rows of each block done."""
        rhs: Any = None
        self.n_cached_rows = 0
        where = self.placement
        for i, rows in enumerate(self.blocks):
            Kb = self.block_kernel(self.X[rows, ...])
            part = Kb.T @ where.work(Y[rows, ...], self.dtype, copy=True)
            if rhs is None:
                rhs = where.zeros((Kb.shape[1], Y.shape[1]))
            rhs += where.to_float_place(part)
            keep = self.n_cached_rows + Kb.shape[0] <= self.cache_rows
            self._cache[i] = Kb if keep else None
            self.n_cached_rows += Kb.shape[0] if keep else 0
            if progress is not None:
                progress(Kb.shape[0])
        assert rhs is not None
        return rhs

    def __call__(self, V: Any, out: Any, progress: Callable[[int], None] | None = None) -> Any:
        """``out += K_nm^T (K_nm V)``, chunk by chunk of rows (one read of each block);
        ``progress`` is called with the rows of each block done."""
        V_work = self.placement.work(V, self.dtype, copy=False)
        for rows, Kb in zip(self.blocks, self._cache, strict=True):
            K = self.block_kernel(self.X[rows, ...]) if Kb is None else Kb
            add_gram_product(K, V_work, out, self.placement)
            if progress is not None:
                progress(K.shape[0])
        return out

    def gram(self, progress: Callable[[int], None] | None = None) -> Any:
        """``K_nm^T K_nm`` (float64, shape (m, m)), one read of each block (its symmetric
        product, half a general one's work)."""
        out: Any = None
        for rows, Kb in zip(self.blocks, self._cache, strict=True):
            K = self.block_kernel(self.X[rows, ...]) if Kb is None else Kb
            part = self.placement.to_float_place(K.T @ K)
            out = part if out is None else out + part
            if progress is not None:
                progress(K.shape[0])
        return out

    def release(self) -> None:
        """Drop the cached ``K_nm`` blocks."""
        self._cache = [None] * len(self.blocks)


class MatvecPart:
    """One part of the training rows as the matvec keeps it for the whole fit.

    Parameters
    ----------
    matvec : NystroemMatvec
        The part's rows, the landmark kernel and the part's cached ``K_nm`` blocks.
    rhs : ndarray of shape (m, t) or None
        The part's ``K_b^T Y_b`` (float64); None for a part built without targets.
    """

    __slots__ = ("matvec", "rhs")

    def __init__(self, matvec: NystroemMatvec, rhs: Any) -> None:
        self.matvec = matvec
        self.rhs = rhs

    def __sizeof__(self) -> int:
        # what a cluster's memory accounting should see: the rows, the cached blocks and
        # the rhs (the landmark kernel is shared by the parts of a worker)
        X = self.matvec.X
        rows = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes if sp.issparse(X) else X.nbytes
        cached = sum(K.nbytes for K in self.matvec._cache if K is not None)
        return 64 + int(rows) + cached + (0 if self.rhs is None else self.rhs.nbytes)


def _checked_part(X: Any, Y: Any, name: str) -> tuple[Any, Any]:
    """``X`` and ``Y`` (or None) of a part, their values checked with the in-memory path's
    messages; a part on a device is checked there, and copied to the host for the
    message only when it holds NaN or inf."""
    if not is_numpy(get_namespace(X)[0]):
        if is_finite(X) and (Y is None or is_finite(Y)):
            return X, Y
        _checked_part(to_numpy(X), None if Y is None else to_numpy(Y), name)
        return X, Y
    with one_line_errors(name):
        X = check_array(
            X, accept_sparse=("csr", "csc"), dtype=FLOAT_DTYPES, input_name="X", estimator=name
        )
        if Y is not None:
            Y = check_array(Y, ensure_2d=False, dtype=np.float64, input_name="y", estimator=name)
    return X, Y


def _target_columns(Y: Any, n_rows: int) -> Any:
    """The targets of a part as columns: float64 on the host, as they are on a device
    (cast to the working dtype block by block)."""
    xp = get_namespace(Y)[0]
    if is_numpy(xp):
        return np.asarray(Y, dtype=np.float64).reshape(n_rows, -1)
    return xp.reshape(Y, (n_rows, -1))


def build_part(
    X: Any,
    Y: Any,
    start: int | None,
    *,
    block_kernel: Callable[[Any], np.ndarray],
    dtype: np.dtype,
    cache_rows: int,
    block_rows: tuple[float, int],
    name: str,
    checked: bool,
    placement: Placement | None = None,
    progress: Callable[[int], None] | None = None,
) -> MatvecPart:
    """The :class:`MatvecPart` of rows ``X`` (global rows from ``start``) with targets
    ``Y``: its ``K_b^T Y_b`` formed while its cached blocks fill (the first ``cache_rows``
    rows of the whole data are eligible); unless ``checked``, the values are checked with
    the in-memory path's messages first.  With ``Y`` None the part has no ``K_b^T Y_b``
    (streamed rows, rebuilt at every pass).  ``placement`` says where ``X`` is;
    ``progress`` is called with the rows of each block of the ``K_b^T Y_b`` pass."""
    if not checked:
        X, Y = _checked_part(X, Y, name)
    X = as_row_sliceable(X)
    bytes_per_row, max_rows = block_rows
    blocks = list(row_blocks(X.shape[0], bytes_per_row, max_rows=max_rows))
    budget = max(0, min(X.shape[0], cache_rows - (start or 0)))
    matvec = NystroemMatvec(X, blocks, block_kernel, dtype, budget, placement)
    if Y is None:
        return MatvecPart(matvec, None)
    return MatvecPart(matvec, matvec.rhs(_target_columns(Y, X.shape[0]), progress))


def _part_rhs(part: MatvecPart) -> tuple[np.ndarray, int]:
    return part.rhs, int(part.matvec.n_cached_rows)


def _add_pairs(a: tuple[np.ndarray, int], b: tuple[np.ndarray, int]) -> tuple[np.ndarray, int]:
    return a[0] + b[0], a[1] + b[1]


def _gram_product(part: MatvecPart, V: Any, progress: Callable[[int], None] | None = None) -> Any:
    return part.matvec(V, part.matvec.placement.zeros((V.shape[0], V.shape[1])), progress)


def _part_gram(part: MatvecPart, progress: Callable[[int], None] | None = None) -> Any:
    return part.matvec.gram(progress)


class RowsMatvec:
    """``K_nm^T (K_nm V)`` over the parts of the training rows (``kernelmaps._rows.Rows``).

    :meth:`rhs` builds one :class:`MatvecPart` per part where the part is held (its rows,
    the landmark kernel, its cached ``K_nm`` blocks) and returns the sum of their
    ``K_b^T Y_b``; every call then maps the parts to their ``K_b^T (K_b V)`` and adds
    them in the fixed tree of :func:`kernelmaps._rows.tree_reduce`.  In memory the rows
    are one part, a :class:`NystroemMatvec` over their row blocks; on a Dask array each
    chunk is a part, kept on a worker, and an iteration moves only ``V`` and the partial
    products.  Rows of another library are one part on their device; rows streamed to a
    device (:class:`kernelmaps._streamed_rows.StreamedRows`) rebuild each block's part
    at every pass (``K_b^T Y_b`` in the first pass only, nothing cached).  The
    preconditioner and the conjugate gradient stay with the caller.

    Parameters
    ----------
    rows : Rows
        The training rows.
    block_kernel : callable
        ``X_block -> k(X_block, L)`` of shape (rows, m), in the working dtype; picklable.
    dtype : numpy dtype
        The working dtype of the blocks and their products.
    cache_rows : int
        Rows of ``K_nm`` kept between iterations: the first ``cache_rows`` rows.
    block_rows : tuple of (float, int)
        ``(bytes_per_row, max_rows)`` of the row blocks (see
        :func:`kernelmaps.feature_maps.row_blocks`).
    name : str
        The estimator's name, for the messages of the value checks.
    progress : Progress, optional
        Reports each pass, ``"K_nm products"``: the pass of :meth:`rhs` when it ends
        (level 1), the rows within every pass (level 2).

    Attributes
    ----------
    n_cached_rows : int
        Rows of ``K_nm`` held in the caches (after :meth:`rhs`).
    """

    def __init__(
        self,
        rows: Rows,
        block_kernel: Callable[[Any], np.ndarray],
        dtype: np.dtype,
        cache_rows: int,
        block_rows: tuple[float, int],
        name: str,
        progress: Progress | None = None,
    ) -> None:
        self.rows = rows
        self.progress = progress
        self.placement = Placement.of(rows)
        self.build = functools.partial(
            build_part,
            block_kernel=block_kernel,
            dtype=np.dtype(dtype),
            cache_rows=int(cache_rows),
            block_rows=block_rows,
            name=name,
            checked=rows.checked,
            placement=self.placement,
        )
        self.n_cached_rows = 0
        self.parts: Parts | None = None

    def rhs(self, Y: Any) -> Any:
        """``K_nm^T Y`` (float64, shape (m, t)) for ``Y`` aligned on the rows; builds the
        parts."""
        with counted_pass(self.progress, "K_nm products", self.rows) as done:
            build = self.build if done is None else functools.partial(self.build, progress=done)
            self.parts = self.rows.persist(build, Y)
            rhs, self.n_cached_rows = self.parts.map_reduce(_part_rhs, _add_pairs)
        if self.rows.rebuilt:
            # the parts are rebuilt from their blocks at every pass: without the targets
            self.parts = self.rows.persist(self.build, None)
        return self.placement.float64(rhs)

    def __call__(self, V: Any, out: Any) -> Any:
        """``out += K_nm^T (K_nm V)``: one pass over the parts."""
        if self.parts is None:
            raise RuntimeError("RowsMatvec.rhs must be called first.")
        V = V if self.placement.on_device else np.ascontiguousarray(V)
        with counted_pass(self.progress, "K_nm products", self.rows, summary=None) as done:
            # no progress argument where none is reported: nothing more sent to workers
            product = (
                _gram_product if done is None else functools.partial(_gram_product, progress=done)
            )
            out += self.parts.map_reduce(product, _add, V)
        return out

    def gram(self) -> Any:
        """``K_nm^T K_nm`` (float64, shape (m, m), where the float64 work runs): one pass
        over the parts, through their cached blocks."""
        if self.parts is None:
            raise RuntimeError("RowsMatvec.rhs must be called first.")
        with counted_pass(self.progress, "K_nm^T K_nm", self.rows) as done:
            gram = _part_gram if done is None else functools.partial(_part_gram, progress=done)
            return self.placement.float64(self.parts.map_reduce(gram, _add))

    def release(self) -> None:
        """Let the parts go."""
        if self.parts is not None:
            self.parts.release()
        self.parts = None


class GramOperator(Protocol):
    """What :class:`FalkonSolver` needs of the ``K_nm`` side: :class:`RowsMatvec` (over
    any rows), or :class:`NystroemMatvec` (rows in memory)."""

    n_cached_rows: int

    def rhs(self, Y: Any) -> np.ndarray:
        """``K_nm^T Y`` (float64, shape (m, t))."""
        ...

    def __call__(self, V: np.ndarray, out: np.ndarray) -> np.ndarray:
        """``out += K_nm^T (K_nm V)``; returns ``out``."""
        ...

    def gram(self) -> Any:
        """``K_nm^T K_nm`` (float64, shape (m, m))."""
        ...

    def release(self) -> None:
        """Let what the operator keeps between calls go."""
        ...


class FalkonSolver:
    """FALKON: the Nyström normal equations by preconditioned conjugate gradient.

    Solves

    .. math:: H c = K_{nm}^T y, \\qquad H = K_{nm}^T K_{nm} + \\alpha K_{mm},

    by running :func:`~kernelmaps.models.conjugate_gradient` on the symmetric positive
    definite system ``(B^T H B) beta = B^T K_nm^T y`` with ``B = T^{-1} A^{-1}`` the
    preconditioner, then ``c = B beta`` (Rudi, Carratino & Rosasco 2017, Algorithm 1).
    The CG relative residual is that of the preconditioned system.

    Parameters
    ----------
    K_mm : ndarray of shape (m, m)
    alpha : float
    preconditioner : FalkonPreconditioner
    matvec : NystroemMatvec
        Or any ``GramOperator``: an object with ``rhs(Y)`` and ``__call__(V, out)``
        adding ``K_nm^T K_nm V`` (the Dask matvec on a Dask array).
    name : str, default="FalkonSolver"
        Who solves, for the messages.
    progress : Progress, optional
        Reports every conjugate-gradient iteration (its relative residual, the largest
        over the targets, and the seconds since the solve began) and the stop reason, at
        level 1; a sink gets the iterations as events (unit ``"iterations"``).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models._falkon._solver import (FalkonPreconditioner, FalkonSolver,
    ...                                        NystroemMatvec)
    >>> X = np.eye(3)
    >>> mv = NystroemMatvec(X, [slice(0, 3)], lambda Xb: Xb, np.dtype(np.float64), 3)
    >>> solver = FalkonSolver(X, 1.0, FalkonPreconditioner(X, 3, 1.0), mv)
    >>> coef, result = solver.solve(np.ones((3, 1)), tol=1e-10, max_iter=10)
    >>> coef.ravel().round(6).tolist()
    [0.5, 0.5, 0.5]
    """

    def __init__(
        self,
        K_mm: np.ndarray,
        alpha: float,
        preconditioner: FalkonPreconditioner,
        matvec: GramOperator,
        name: str = "FalkonSolver",
        progress: Progress | None = None,
    ) -> None:
        self.K_mm = K_mm
        self.alpha = alpha
        self.preconditioner = preconditioner
        self.matvec = matvec
        self.name = name
        self.progress = progress or Progress(name)

    def system_matvec(self, V: Any) -> Any:
        """``H V = (K_nm^T K_nm + alpha K_mm) V``, where ``K_mm`` is."""
        return self.matvec(V, self.alpha * (self.K_mm @ V))

    def preconditioned_matvec(self, V: np.ndarray) -> np.ndarray:
        """``B^T H B V`` for a host ``V`` (the conjugate gradient's), on the host."""
        pre = self.preconditioner
        return to_numpy(pre.apply_t(self.system_matvec(pre.apply(_like(V, self.K_mm)))))

    def solve(self, Y: Any, *, tol: float, max_iter: int) -> tuple[Any, CGResult]:
        """``c`` of shape (m, t) for targets ``Y`` of shape (n, t), and the CG outcome.

        ``Y`` is whatever the matvec's ``rhs`` takes (an ndarray, or a Dask array aligned
        with the rows of a Dask ``X``); everything else happens on ``m x t`` arrays.
        A right-hand side ``K_nm^T Y`` holding inf or NaN raises
        :class:`~kernelmaps.exceptions.NonFiniteOutputError` (the conjugate gradient
        would otherwise stop at once on NaN residuals).  The conjugate gradient runs on
        the host; ``c`` is where ``K_mm`` is.
        """
        with np.errstate(over="ignore", invalid="ignore"):
            rhs = self.matvec.rhs(Y)
        self.rhs = rhs  # K_nm^T Y, kept for the caller (the objective at the solution)
        if not is_finite(rhs):
            raise NonFiniteOutputError(
                f"{self.name}: K_nm^T y, the right-hand side of the Nystroem system, holds "
                "inf or NaN: it overflowed float64 (the targets or the kernel values are too "
                "large); rescale y (e.g. divide it by its standard deviation) or X."
            )
        b = to_numpy(self.preconditioner.apply_t(rhs))
        progress = self.progress
        steps = progress.rows(
            "conjugate gradient", max_iter, level=None, summary=None, unit="iterations"
        )
        with steps:
            report = _IterationLines(progress, steps)
            result = conjugate_gradient(
                self.preconditioned_matvec,
                b,
                tol=tol,
                max_iter=max_iter,
                callback=report if progress.enabled else None,
            )
        if progress.enabled:
            report.finish()
            progress.log(_stop_reason(result, tol, max_iter, steps.elapsed))
        return self.preconditioner.apply(_like(result.x, self.K_mm)), result


class _IterationLines:
    """The lines of the conjugate-gradient iterations (and their events): every one from
    ``verbose=2``; at ``verbose=1`` at most one a :data:`kernelmaps._progress.INTERVAL`,
    and the last (:meth:`finish`)."""

    def __init__(self, progress: Progress, steps: RowCounter) -> None:
        self.progress, self.steps = progress, steps
        self.shown = -math.inf
        self.pending: str | None = None

    def __call__(self, iteration: int, residual: np.ndarray) -> None:
        self.steps.add(1)
        self.pending = (
            f"CG iteration {iteration}: relative residual {float(np.max(residual)):.3e}, "
            f"{self.steps.elapsed:.2f} s"
        )
        now = time.perf_counter()
        if self.progress.verbose >= 2 or now - self.shown >= _progress.INTERVAL:
            self.shown = now
            self.finish()

    def finish(self) -> None:
        """Print the line of the last iteration, if it is not printed yet."""
        if self.pending is not None:
            self.progress.log(self.pending)
            self.pending = None


def _stop_reason(result: CGResult, tol: float, max_iter: int, seconds: float) -> str:
    """Why the conjugate gradient stopped, for the line that ends the solve."""
    residual = float(np.max(result.residual))
    done = f"{result.n_iter} iterations in {seconds:.2f} s"
    if result.converged:
        return f"CG converged: relative residual {residual:.3e} <= tol={tol:g} after {done}"
    if result.n_iter >= max_iter:
        return (
            f"CG stopped at max_iter={max_iter}: relative residual {residual:.3e} > "
            f"tol={tol:g} after {done}"
        )
    return (
        f"CG stopped: no progress left in rounding (relative residual {residual:.3e} > "
        f"tol={tol:g}) after {done}"
    )
