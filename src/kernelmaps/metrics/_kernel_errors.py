"""Kernel approximation error: relative Frobenius, spectral and max-abs norms (see the
package's docstring)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from numbers import Integral
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import ArpackError, LinearOperator, eigsh, svds
from sklearn import get_config
from sklearn.utils import check_array, gen_batches

from .._random import check_random_state
from .._validation import one_line_errors
from ..exceptions import NonFiniteOutputError
from ..kernels import check_kernel_matrix

__all__ = [
    "NORMS",
    "feature_map_error",
    "kernel_approximation_error",
    "kernel_errors_from_features",
]

NORMS = ("fro", "spectral", "max")


def _check_norm(norm: str) -> None:
    if not isinstance(norm, str) or norm not in NORMS:
        raise ValueError(f"norm must be one of {NORMS}; got {norm!r}.")


class _SumOfSquares:
    """``sum a^2`` of the values added, kept as ``scale^2 * ssq`` (LAPACK's ``dlassq``):
    no overflow or underflow whatever their magnitudes."""

    def __init__(self) -> None:
        self.scale, self.ssq = 0.0, 1.0

    def add(self, A: np.ndarray) -> None:
        largest = float(np.max(np.abs(A))) if A.size else 0.0
        if largest == 0.0:
            return
        if largest > self.scale:
            self.ssq *= (self.scale / largest) ** 2
            self.scale = largest
        B = A / self.scale
        self.ssq += float(np.einsum("ij,ij->", B, B))

    def norm(self) -> float:
        """``sqrt(sum a^2)`` (inf only when it exceeds the float range)."""
        return self.scale * float(np.sqrt(self.ssq))

    def ratio(self, other: _SumOfSquares) -> float:
        """``norm() / other.norm()`` without overflow (nan if ``other`` is zero)."""
        if other.scale == 0.0:
            return math.nan
        return (self.scale / other.scale) * float(np.sqrt(self.ssq / other.ssq))


def _matrix_norm(A: np.ndarray, norm: str) -> float:
    if norm == "fro":
        total = _SumOfSquares()
        total.add(A)
        return total.norm()
    if norm == "max":
        return float(np.max(np.abs(A))) if A.size else 0.0
    return float(np.linalg.norm(A, 2)) if A.size else 0.0


def _rows_input(A: Any, name: str) -> Any:
    """``A`` validated (finite, 2D, float) and, if sparse in any format, as CSR."""
    with one_line_errors():
        return check_array(A, accept_sparse="csr", dtype=(np.float64, np.float32), input_name=name)


def _finite_result(error: float, what: str) -> float:
    if not np.isfinite(error):
        raise NonFiniteOutputError(
            f"The {what} is not finite: the kernel or the features overflowed the float "
            "range; rescale the data or use a smaller gamma (limits: docs/LIMITS.md)."
        )
    return float(error)


def kernel_approximation_error(
    K: Any, K_approx: Any, *, norm: str = "fro", relative: bool = True
) -> float:
    """Error ``|K - K_approx|``, divided by ``|K|`` when ``relative``.

    Parameters
    ----------
    K : array-like of shape (n, m)
        Exact kernel matrix.
    K_approx : array-like of shape (n, m)
        Its approximation, e.g. ``Z_x @ Z_y.T``.
    norm : {"fro", "spectral", "max"}, default="fro"
        Frobenius norm, spectral norm (largest singular value) or largest absolute entry.
    relative : bool, default=True
        Divide by the same norm of ``K`` (the "normalized kernel approximation error").

    Returns
    -------
    float
        ``|K - K_approx|``, over ``|K|`` when ``relative``.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import kernel_approximation_error
    >>> K = np.array([[1.0, 0.5], [0.5, 1.0]])
    >>> round(kernel_approximation_error(K, np.eye(2), norm="max"), 3)
    0.5
    """
    _check_norm(norm)
    with one_line_errors():
        K = check_array(K.toarray() if sp.issparse(K) else K, dtype=np.float64, input_name="K")
        K_approx = check_array(
            K_approx.toarray() if sp.issparse(K_approx) else K_approx,
            dtype=np.float64,
            input_name="K_approx",
        )
    if K.shape != K_approx.shape:
        raise ValueError(
            f"K has shape {K.shape} but K_approx has shape {K_approx.shape}; give two "
            "matrices of the same shape."
        )
    # both at unit scale (a power of two): no overflow in the difference or the norms
    largest = max(
        float(np.max(np.abs(K), initial=0.0)), float(np.max(np.abs(K_approx), initial=0.0))
    )
    unit = math.ldexp(1.0, math.frexp(largest)[1] - 1) if largest > 0.0 else 1.0
    error = _matrix_norm(K / unit - K_approx / unit, norm)
    if not relative:
        with np.errstate(over="ignore"):
            return _finite_result(error * unit, "kernel approximation error")
    scale = _matrix_norm(K / unit, norm)
    return _finite_result(_relative(error, scale, True), "kernel approximation error")


def _default_block_rows(n_columns: int) -> int:
    budget = get_config()["working_memory"] * 2**20
    return max(1, int(budget // (3 * 8 * max(n_columns, 1))))


def _fitted_kernel(feature_map: Any) -> Callable[[Any, Any], np.ndarray]:
    kernel = getattr(feature_map, "kernel_", None)
    if kernel is None:
        raise ValueError(f"{type(feature_map).__name__} has no fitted kernel_; pass kernel=.")
    return kernel


class _Residual:
    """``K(X, Y) - Z_x Z_y^T``, formed at most ``block_rows`` rows at a time.

    With a single block, the kernel rows and the residual are formed once and reused by
    every norm.
    """

    def __init__(
        self,
        kernel: Callable[[Any, Any], np.ndarray],
        X: Any,
        Y: Any,
        Zx: Any,
        Zy: Any,
        block_rows: int,
    ) -> None:
        self.kernel, self.X, self.Y, self.Zx, self.Zy = kernel, X, Y, Zx, Zy
        self.n, self.m = Zx.shape[0], Zy.shape[0]
        self.block_rows = block_rows
        self.single = block_rows >= self.n
        self._cache: tuple[np.ndarray, np.ndarray] | None = None

    def batches(self) -> list[slice]:
        return list(gen_batches(self.n, self.block_rows))

    def pair(self, rows: slice) -> tuple[np.ndarray, np.ndarray]:
        """The exact kernel rows ``K[rows]`` and the residual ``K[rows] - Zx[rows] Zy^T``."""
        if self.single and self._cache is not None:
            return self._cache
        Xb = self.X[rows]
        K = check_kernel_matrix(
            self.kernel(Xb, self.Y), Xb.shape[0], self.Y.shape[0], source="The kernel"
        )
        block = self.Zx[rows] @ self.Zy.T
        approx = np.asarray(block.toarray() if sp.issparse(block) else block, dtype=np.float64)
        out = (K, K - approx)
        if self.single:
            self._cache = out
        return out

    def block(self, rows: slice, include_approx: bool) -> np.ndarray:
        K, E = self.pair(rows)
        return E if include_approx else K

    def entrywise(self, norms: Sequence[str]) -> dict[str, tuple[Any, Any]]:
        """``(|E|, |K|)`` in the Frobenius and max-entry norms, in one pass over the rows."""
        fro_err, fro_ref = _SumOfSquares(), _SumOfSquares()
        max_err, max_ref = 0.0, 0.0
        for rows in self.batches():
            K, E = self.pair(rows)
            if "fro" in norms:
                fro_err.add(E)
                fro_ref.add(K)
            if "max" in norms:
                max_err = max(max_err, float(np.max(np.abs(E))))
                max_ref = max(max_ref, float(np.max(np.abs(K))))
        return {"fro": (fro_err, fro_ref), "max": (max_err, max_ref)}

    def spectral(self, include_approx: bool, symmetric: bool, random_state: Any) -> float:
        """Spectral norm of ``E`` (``include_approx``) or of ``K``: dense or by Lanczos."""
        n, m = self.n, self.m
        if self.single or min(n, m) < 3:
            dense = np.vstack([self.block(rows, include_approx) for rows in self.batches()])
            if symmetric:
                return float(np.max(np.abs(np.linalg.eigvalsh(dense))))
            return float(np.linalg.norm(dense, 2))

        def matvec(v: np.ndarray) -> np.ndarray:
            v = np.ravel(v)
            return np.concatenate([self.block(rows, include_approx) @ v for rows in self.batches()])

        rng = check_random_state(random_state)
        if symmetric:
            # K and K - ZZ^T are symmetric: Lanczos on the operator itself, one pass each.
            op = LinearOperator((n, n), matvec=matvec, dtype=np.float64)
            v0 = rng.standard_normal(n)
            try:
                vals = eigsh(op, k=1, which="LM", v0=v0, tol=1e-8, return_eigenvectors=False)
            except ArpackError:
                # ARPACK stops when the operator maps its start vector to 0 exactly: the zero
                # operator (an exact approximation of a constant kernel matrix)
                if not np.any(matvec(v0)):
                    return 0.0
                raise
            return float(np.abs(vals[0]))

        def rmatvec(u: np.ndarray) -> np.ndarray:
            u = np.ravel(u)
            acc = np.zeros(m)
            for rows in self.batches():
                acc += self.block(rows, include_approx).T @ u[rows]
            return acc

        op = LinearOperator((n, m), matvec=matvec, rmatvec=rmatvec, dtype=np.float64)
        v0 = rng.standard_normal(min(n, m))
        try:
            s = svds(op, k=1, return_singular_vectors=False, v0=v0, tol=1e-8)
        except ArpackError:
            if not np.any(matvec(rng.standard_normal(m))):
                return 0.0  # the zero operator (a random vector is mapped to 0 only by it)
            raise
        return float(s[0])


def kernel_errors_from_features(
    kernel: Callable[[Any, Any], np.ndarray],
    X: Any,
    Z_x: Any,
    Y: Any = None,
    Z_y: Any = None,
    *,
    norms: Sequence[str] = ("fro",),
    relative: bool = True,
    block_rows: int | None = None,
    random_state: Any = 0,
) -> dict[str, float]:
    """Errors ``|K(X, Y) - Z_x Z_y^T|`` in several norms from features already computed.

    The kernel rows are formed once, ``block_rows`` at a time, and shared by the
    Frobenius and max-entry norms (and, when they fit in one block, by the spectral norm).

    Parameters
    ----------
    kernel : callable
        Exact kernel ``k(X, Y) -> ndarray``, e.g. a fitted map's ``kernel_``.
    X : array-like of shape (n, d)
        Rows of the kernel matrix.
    Z_x : array-like of shape (n, D)
        Their features ``z(X)``.
    Y : array-like of shape (m, d), default=None
        Columns; ``None`` means ``X`` (and ``Z_y`` is then ``Z_x``).
    Z_y : array-like of shape (m, D), default=None
        Features of ``Y``; required when ``Y`` is given.
    norms : sequence of {"fro", "spectral", "max"}, default=("fro",)
        See :func:`feature_map_error`.
    relative : bool, default=True
        Divide each error by the same norm of ``K(X, Y)``.
    block_rows : int, default=None
        Largest number of kernel rows formed at once; by default as many as fit in
        scikit-learn's ``working_memory``.
    random_state : int, default=0
        Starting vector of the Lanczos iteration (spectral norm only).

    Returns
    -------
    dict
        ``{norm: error}`` for each norm asked, in the order asked.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import RandomFourierFeatures
    >>> from kernelmaps.metrics import kernel_errors_from_features
    >>> X = np.random.default_rng(0).random((60, 3))
    >>> rff = RandomFourierFeatures("rbf", n_components=256, random_state=0).fit(X)
    >>> errors = kernel_errors_from_features(rff.kernel_, X, rff.transform(X),
    ...                                      norms=("fro", "max"))
    >>> sorted(errors), all(0 < e < 0.5 for e in errors.values())
    (['fro', 'max'], True)
    """
    norms = (norms,) if isinstance(norms, str) else tuple(norms)
    for norm in norms:
        _check_norm(norm)
    if not callable(kernel):
        raise TypeError(
            f"kernel must be a callable k(X, Y) returning the kernel matrix (e.g. a "
            f"kernelmaps.kernels object); got {kernel!r}."
        )
    if block_rows is not None and (
        isinstance(block_rows, bool) or not isinstance(block_rows, Integral) or block_rows < 1
    ):
        raise ValueError(f"block_rows must be an integer >= 1 or None; got {block_rows!r}.")
    symmetric = Y is None
    if symmetric and Z_y is not None:
        raise ValueError("Z_y is given without its rows Y; give both or neither.")
    if not symmetric and Z_y is None:
        raise ValueError("Y is given without its features Z_y; give both or neither.")
    X, Z_x = _rows_input(X, "X"), _rows_input(Z_x, "Z_x")
    if symmetric:
        Y, Z_y = X, Z_x
    else:
        Y, Z_y = _rows_input(Y, "Y"), _rows_input(Z_y, "Z_y")
    for rows, features, a, b in (("X", "Z_x", X, Z_x), ("Y", "Z_y", Y, Z_y)):
        if a.shape[0] != b.shape[0]:
            raise ValueError(
                f"{rows} has {a.shape[0]} rows but {features} has {b.shape[0]}; give the "
                f"features of the rows of {rows}, one row each."
            )
    if Z_x.shape[1] != Z_y.shape[1]:
        raise ValueError(
            f"Z_x has {Z_x.shape[1]} features but Z_y has {Z_y.shape[1]}; transform X and Y "
            "with the same fitted map."
        )
    m = Z_y.shape[0]
    rows_per_block = block_rows or _default_block_rows(m)
    residual = _Residual(kernel, X, Y, Z_x, Z_y, rows_per_block)
    with np.errstate(over="ignore", invalid="ignore"):
        pairs = residual.entrywise(norms) if {"fro", "max"} & set(norms) else {}
        errors = {}
        for norm in norms:
            if norm == "spectral":
                error = residual.spectral(True, symmetric, random_state)
                scale = residual.spectral(False, symmetric, random_state) if relative else 1.0
            elif norm == "fro":
                fro_err, fro_ref = pairs["fro"]
                if relative and fro_ref.scale > 0.0:
                    errors[norm] = _finite_result(fro_err.ratio(fro_ref), "fro error")
                    continue
                error, scale = fro_err.norm(), fro_ref.norm()
            else:
                error, scale = pairs[norm]
            errors[norm] = _finite_result(
                _relative(error, scale, relative), f"{norm} kernel approximation error"
            )
    return errors


def _relative(error: float, scale: float, relative: bool) -> float:
    if not relative:
        return float(error)
    if scale == 0.0:
        raise ValueError("K is zero in the chosen norm; use relative=False.")
    return float(error / scale)


def feature_map_error(
    feature_map: Any,
    X: Any,
    Y: Any = None,
    *,
    kernel: Callable[[Any, Any], np.ndarray] | None = None,
    norm: str = "fro",
    relative: bool = True,
    block_rows: int | None = None,
    random_state: Any = 0,
) -> float:
    """Error of a fitted feature map: ``|K(X, Y) - z(X) z(Y)^T|`` (relative by default).

    Transforms ``X`` (and ``Y``) and calls :func:`kernel_errors_from_features`; to measure
    several norms of the same features, call that function with the features once.

    Parameters
    ----------
    feature_map : fitted transformer
        A fitted feature map; its ``kernel_`` is the reference unless ``kernel`` is given.
    X : array-like of shape (n, d)
        Rows of the kernel matrix.
    Y : array-like of shape (m, d), default=None
        Columns; ``None`` means ``X``.
    kernel : callable, default=None
        Exact kernel ``k(X, Y) -> ndarray``; default ``feature_map.kernel_``.
    norm : {"fro", "spectral", "max"}, default="fro"
        The spectral norm is computed densely when all rows fit in one block, else by
        ARPACK's Lanczos iteration on the operator ``v -> (K - Z_x Z_y^T) v`` (``eigsh``
        when ``Y`` is None, ``svds`` otherwise), one pass over the kernel rows per product.
    relative, block_rows, random_state
        As in :func:`kernel_errors_from_features`.

    Returns
    -------
    float
        The error in ``norm``.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import RandomFourierFeatures, feature_map_error
    >>> X = np.random.default_rng(0).random((60, 3))
    >>> rff = RandomFourierFeatures("rbf", n_components=256, random_state=0).fit(X)
    >>> bool(feature_map_error(rff, X) < feature_map_error(rff, X, norm="max"))
    True
    """
    _check_norm(norm)
    if kernel is None:
        kernel = _fitted_kernel(feature_map)
    Zx = feature_map.transform(X)
    Zy = None if Y is None else feature_map.transform(Y)
    errors = kernel_errors_from_features(
        kernel,
        X,
        Zx,
        Y,
        Zy,
        norms=(norm,),
        relative=relative,
        block_rows=block_rows,
        random_state=random_state,
    )
    return errors[norm]
