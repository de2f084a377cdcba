"""Random Maclaurin (Kar & Karnick 2012) and compact random features (Hamid et al. 2013)."""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.extmath import safe_sparse_dot

from .._array_api import (
    device_of,
    float_dtypes,
    get_namespace,
    is_numpy,
    to_namespace,
    to_numpy,
    warn_if_tf32,
)
from .._validation import StrictInterval
from ..exceptions import NonFiniteOutputError
from ..kernels import (
    DotProductKernel,
    Kernel,
    kernel_parameter_constraints,
    raw_squared_row_norms,
    resolve_estimator_kernel,
)
from ._base import BaseFeatureMap, register_feature_map

__all__ = ["CompactRandomFeatures", "RandomMaclaurinFeatures"]

_KERNEL_PARAM_CONSTRAINTS = kernel_parameter_constraints(
    named=("degree", "gamma", "coef0"), integer_degree=True
)


def _order_probability(n: np.ndarray | int, p: float, min_order: int) -> np.ndarray:
    """``P[N = n]`` of the order law ``(p - 1) p^-(n - min_order + 1)``, ``n >= min_order``."""
    return (p - 1.0) * np.power(p, -(np.asarray(n, dtype=np.float64) - min_order + 1.0))


def _largest_squared_norm(X: Any, xp: Any) -> np.ndarray:
    """``max |x|^2`` over the rows of ``X`` (an array of ``xp``), summed in the widest
    float of its device (float64 as :func:`~kernelmaps.kernels.raw_squared_row_norms`
    where it has one), as a host array of one value: what the norm check reads."""
    wide = xp.astype(X, float_dtypes(X)[0])
    return to_numpy(xp.reshape(xp.max(xp.sum(wide * wide, axis=1)), (1,)))


class _MaclaurinFeatureMap(BaseFeatureMap):
    """Shared drawing and evaluation of random Maclaurin features.

    Fitted attributes: ``kernel_``, ``orders_`` (order ``N_i`` of each random feature),
    ``weights_`` (``sqrt(a_N / P[N])``), ``rademacher_`` (per order ``n`` with some
    ``a_n > 0``: the column indices of its features and a ``(d, n * count)`` matrix of
    +-1, the ``n`` vectors of each feature side by side) and the exact H0/1 columns.
    """

    # Row blocks (products and elementwise products, GIL-free) run on one thread per core.
    _parallel_blocks: ClassVar[bool] = True
    _max_block_rows: ClassVar[int | None] = 1024
    _kernel_requirement: ClassVar[str] = (
        "a dot-product kernel f(x . y) with non-negative Maclaurin coefficients"
    )

    kernel: Any
    degree: Any
    gamma: Any
    coef0: Any
    kernel_params: Any
    p: float
    h01: bool

    def _resolve_dot_product_kernel(self, X: Any) -> DotProductKernel:
        kernel = resolve_estimator_kernel(self, X.shape[1])
        assert isinstance(kernel, DotProductKernel)
        kernel.check_norms(raw_squared_row_norms(X), type(self).__name__)
        return kernel

    def _draw_maclaurin(
        self, kernel: DotProductKernel, n_features: int, n_out: int, rng: np.random.Generator
    ) -> None:
        p = float(self.p)
        a0 = kernel.maclaurin_coefficient(0)
        a1 = kernel.maclaurin_coefficient(1)
        exact_constant = bool(self.h01 and a0 > 0)
        exact_linear = bool(self.h01 and a1 > 0)
        n_exact = int(exact_constant) + (n_features if exact_linear else 0)
        min_order = 2 if self.h01 else 0
        max_degree = kernel.polynomial_degree()
        needs_random = max_degree is None or max_degree >= min_order
        n_random = n_out - n_exact
        if (needs_random and n_random < 1) or n_random < 0:
            raise ValueError(
                f"{type(self).__name__}: h01=True computes {n_exact} columns exactly (the "
                f"constant and the {n_features} linear terms) and needs at least one more "
                f"for the random higher-order features; got n_components={n_out}. Use "
                f"n_components >= {n_exact + int(needs_random)} or h01=False."
            )
        # the orders and weights, and the expected Rademacher columns (E[N] of each)
        mean_order = min_order + 1.0 / (p - 1.0)
        self._check_memory(
            8.0 * n_random * (2.0 + n_features * mean_order),
            f"{n_random} random features with {mean_order:.3g} Rademacher vectors of "
            f"{n_features} values each on average (p={p!r})",
            "lower n_components or use a larger p",
        )
        # numpy's geometric counts trials to the first success (>= 1): with success
        # probability 1 - 1/p, N - min_order = trials - 1 has P = (p - 1) p^-(k + 1).
        orders = rng.geometric(1.0 - 1.0 / p, size=n_random) - 1 + min_order
        coefficients_needed = np.unique(orders)
        # the Rademacher vectors, as float64 once a transform casts them
        self._check_memory(
            8.0 * n_features * float(np.sum(orders, dtype=np.float64)),
            f"the Rademacher vectors of the {n_random} random features (orders up to "
            f"{int(orders.max(initial=0))}, p={p!r})",
            "lower n_components or use a larger p",
        )
        try:
            coefficients = {
                int(n): kernel.maclaurin_coefficient(int(n)) for n in coefficients_needed
            }
        except NonFiniteOutputError as error:
            raise NonFiniteOutputError(f"{type(self).__name__}.fit: {error}") from None
        a = np.array([coefficients[int(n)] for n in orders], dtype=np.float64)
        weights = np.sqrt(a / _order_probability(orders, p, min_order))
        groups = []
        for n in sorted(coefficients):
            if coefficients[n] == 0.0:
                continue
            cols = np.flatnonzero(orders == n)
            W = rng.integers(0, 2, size=(n_features, n * cols.size), dtype=np.int8)
            W = (2 * W - 1).astype(np.int8)
            groups.append((n, cols, W))
        self.kernel_ = kernel
        self.orders_ = orders
        self.weights_ = weights
        self.rademacher_ = groups
        self.exact_constant_ = math.sqrt(a0) if exact_constant else None
        self.exact_linear_ = math.sqrt(a1) if exact_linear else None
        self.n_exact_ = n_exact
        self.n_random_ = n_random

    @classmethod
    def _supports_kernel(cls, kernel: Kernel) -> bool:
        return isinstance(kernel, DotProductKernel) and kernel.has_maclaurin_series()

    def _rademacher_columns(self) -> int:
        """Columns of the products ``X W`` of one block: the Rademacher vectors."""
        return int(sum(W.shape[1] for _, _, W in self.rademacher_))

    def _block_bytes_per_row(self, X: Any) -> float:
        itemsize = np.dtype(X.dtype).itemsize
        return float(self._rademacher_columns() * itemsize) + super()._block_bytes_per_row(X)

    def _maclaurin_constants(self, X: Any) -> tuple[Any, list[Any], Any]:
        """The namespace of ``X``, the Rademacher matrices in its dtype and the column
        weights, once per call."""
        xp, _ = get_namespace(X)
        groups = [(n, cols, xp.astype(W, X.dtype)) for n, cols, W in self.rademacher_]
        weights = self._cast_fitted(
            self.weights_ / math.sqrt(max(self.n_random_, 1)), X.dtype, "feature weight"
        )
        return xp, groups, weights

    def _check_norms(self, kernel: DotProductKernel, X: Any, xp: Any) -> None:
        """``kernel.check_norms`` of the rows ``X`` of ``xp`` (none for an entire series,
        which converges everywhere): every row's on NumPy, the largest, from one
        reduction on their device, on the other libraries."""
        if not math.isfinite(kernel.radius_of_convergence()):
            return
        norms = raw_squared_row_norms(X) if is_numpy(xp) else _largest_squared_norm(X, xp)
        kernel.check_norms(norms, type(self).__name__)

    def _maclaurin_block(self, X: Any, out: Any, constants: tuple[Any, list[Any], Any]) -> None:
        """Write the (unprojected) random Maclaurin features of the rows ``X`` into ``out``."""
        xp, groups, weights = constants
        self._check_norms(self.kernel_, X, xp)
        col = 0
        if self.exact_constant_ is not None:
            out[:, 0] = float(self.exact_constant_)
            col = 1
        if self.exact_linear_ is not None:
            d = X.shape[1]
            if is_numpy(xp):
                out[:, col : col + d] = X.toarray() if sp.issparse(X) else X
                out[:, col : col + d] *= out.dtype.type(self.exact_linear_)
            else:
                out[:, col : col + d] = X * float(self.exact_linear_)
            col += d
        if not is_numpy(xp):
            out[:, col:] = self._random_features(X, groups, weights, xp)
            return
        random_part = out[:, col:]
        random_part[:] = 0.0
        if self.n_random_ == 0:
            return
        for n, cols, W in groups:
            if n == 0:
                random_part[:, cols] = 1.0
                continue
            P = safe_sparse_dot(X, W, dense_output=True)
            P = P.reshape(X.shape[0], n, cols.size)
            random_part[:, cols] = np.prod(P, axis=1)
        random_part *= weights

    _array_api: ClassVar[bool] = True

    def _check_array_values(self, X: Any, xp: Any) -> None:
        kernel = resolve_estimator_kernel(self, X.shape[1])
        assert isinstance(kernel, DotProductKernel)
        self._check_norms(kernel, X, xp)

    def _random_features(self, X: Any, groups: list[Any], weights: Any, xp: Any) -> Any:
        """The weighted random features ``sqrt(a_N / P[N]) prod_j w_j . x`` (Kar & Karnick
        2012) of the rows ``X`` of another library than NumPy (which has no scatter into
        columns): one product per order, the columns put in place by one ``take``
        (:meth:`_column_positions`)."""
        warn_if_tf32(X, "the random Maclaurin projections w . x")
        n = X.shape[0]
        values = []
        for order, cols, W in groups:
            if order == 0:
                values.append(xp.ones((n, cols.shape[0]), dtype=X.dtype, device=X.device))
                continue
            values.append(xp.prod(xp.reshape(X @ W, (n, order, cols.shape[0])), axis=1))
        n_kept = sum(int(v.shape[1]) for v in values)
        values.append(xp.zeros((n, 1), dtype=X.dtype, device=X.device))  # orders with a_N = 0
        features = xp.take(xp.concat(values, axis=1), self._column_positions(xp, n_kept), axis=1)
        return features * weights

    def _column_positions(self, xp: Any, n_kept: int) -> Any:
        """For each random feature, its column in the groups' columns side by side (the
        order of ``rademacher_``), ``n_kept`` for the features of orders with ``a_N = 0``.

        A stable sort of the orders, those of no group last, lists the groups' columns in
        that order: the rank of a column in it is its position.
        """
        orders = self.orders_
        kept = xp.zeros(orders.shape, dtype=xp.bool, device=orders.device)
        for order, _, _ in self.rademacher_:
            kept = kept | (orders == order)
        key = xp.where(kept, orders, xp.full_like(orders, np.iinfo(np.int32).max))
        rank = xp.argsort(xp.argsort(key, stable=True), stable=True)
        return xp.where(rank < n_kept, rank, xp.full_like(rank, n_kept))


_MACLAURIN_NOTES = """
    The kernel ``k(x, y) = f(x . y) = sum_n a_n (x . y)^n`` (all ``a_n >= 0``).  Each
    random feature draws an order ``N`` with ``P[N = n] = (p - 1) / p^(n + 1)`` (for
    ``p = 2`` the law ``1 / 2^(n + 1)`` of Kar & Karnick) and ``N`` Rademacher vectors
    ``w_j``, and is ``sqrt(a_N / P[N = N]) prod_j w_j . x``.  As
    ``E[(w . x)(w . y)] = x . y``, the product of a feature at ``x`` and at ``y`` has mean
    ``sum_n a_n (x . y)^n = k(x, y)`` wherever the series converges absolutely, i.e. for
    ``|x| |y| < R``, the radius of convergence (the report's Theorem 2 is stated on the
    unit sphere, ``|x| = |y| = 1``).  Data with a row of squared norm ``>= R`` is refused
    with a ValueError (not merely warned about): the estimate has no finite mean there.
"""


@register_feature_map
class RandomMaclaurinFeatures(_MaclaurinFeatureMap):
    """Random Maclaurin features for dot-product kernels (Kar & Karnick 2012).

    Parameters
    ----------
    kernel : str or DotProductKernel, default="polynomial"
        ``"polynomial"`` (``(gamma x . y + coef0)^degree``), ``"homogeneous_polynomial"``,
        ``"exponential_dot_product"`` (``exp(gamma x . y)``), or any
        :class:`~kernelmaps.kernels.DotProductKernel`, e.g. a
        :class:`~kernelmaps.kernels.MaclaurinKernel` built from its coefficients.
    degree, gamma, coef0 : optional
        Kernel parameters given by keyword (``None``: the kernel's default, for the
        polynomial kernel those of :func:`sklearn.metrics.pairwise.polynomial_kernel`:
        ``degree=3``, ``gamma=1/n_features``, ``coef0=1``).
    kernel_params : dict, default=None
        Other kernel parameters.
    n_components : int, default=100
        Output dimension ``D``.
    p : float, default=2.0
        Parameter ``p > 1`` of the order law ``P[N = n] = (p - 1) / p^(n + 1)``.
    h01 : bool, default=False
        The H0/1 heuristic of Hamid et al. (2013): the constant and linear terms are
        computed exactly, as the columns ``sqrt(a_0)`` and ``sqrt(a_1) x`` (when those
        coefficients are non-zero), and the remaining ``D - 1 - d`` columns are random
        features of order ``N >= 2`` with ``P[N = n] = (p - 1) / p^(n - 1)``.
    random_state : int, Generator, SeedSequence, RandomState or None, default=None
        Source of the orders and Rademacher vectors.

    Attributes
    ----------
    kernel_ : DotProductKernel
        The kernel with its parameters resolved.
    orders_ : ndarray of shape (n_random,)
        The order ``N`` of each random feature.
    weights_ : ndarray of shape (n_random,)
        ``sqrt(a_N / P[N])``; zero where ``a_N = 0`` (such a feature is identically 0).
    rademacher_ : list of (int, ndarray, ndarray)
        For each order ``n`` with ``a_n > 0``: ``n``, the indices of its features and the
        int8 matrix of shape ``(n_features_in_, n * count)`` of their Rademacher vectors.
    n_exact_, n_random_ : int
        Numbers of exact (H0/1) and random columns; the random ones come last and are
        scaled by ``1 / sqrt(n_random_)``.
    n_features_in_ : int

    Notes
    -----
    {notes}
    Variance: one feature's product has variance
    ``V(x, y) = sum_n a_n^2 / P[N = n] m^n - k(x, y)^2`` with
    ``m = |x|^2 |y|^2 + 2 (x . y)^2 - 2 sum_i x_i^2 y_i^2`` (the fourth moment
    ``E[(w . x)^2 (w . y)^2]`` of a Rademacher projection); the map averages ``D``
    independent ones, so ``Var[z(x) . z(y)] = V / D``.  For a polynomial kernel most
    features have ``a_N = 0`` (with ``p = 2`` and ``(x . y)^2``, 7 in 8), which is what
    :class:`CompactRandomFeatures` improves on.

    Cost: drawing ``sum_i N_i`` Rademacher vectors (``E[N] = 1 / (p - 1)``), transform
    ``O(n d sum_i N_i)`` by one matrix product per order, in row blocks.

    Numerical limits: the features are products of ``N`` projections and overflow when
    ``(d max|x|)^N a_N / P[N]`` passes the float range (about ``|x| > 1e102`` in float64,
    ``1e12`` in float32 for a cubic kernel); ``transform`` then raises
    ``NonFiniteOutputError``.  A ``gamma`` whose Maclaurin coefficients overflow (about
    ``1e200``) is refused at ``fit``.  See docs/LIMITS.md.

    References
    ----------
    Kar, P. and Karnick, H. (2012). Random feature maps for dot product kernels. AISTATS.
    Hamid, R., Xiao, Y., Gittens, A. and DeCoste, D. (2014). Compact random feature maps.
    ICML (arXiv:1312.4626, 2013).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import load_digits
    >>> from sklearn.preprocessing import normalize
    >>> from kernelmaps import RandomMaclaurinFeatures
    >>> X = normalize(load_digits().data)
    >>> rm = RandomMaclaurinFeatures(degree=2, gamma=1.0, coef0=0.0, n_components=512,
    ...                              random_state=0)
    >>> rm.fit_transform(X).shape
    (1797, 512)
    """

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **_KERNEL_PARAM_CONSTRAINTS,
        "n_components": [StrictInterval(Integral, 1, None, closed="left")],
        "p": [StrictInterval(Real, 1.0, None, closed="neither")],
        "h01": ["boolean"],
        "random_state": ["random_state", np.random.Generator, np.random.SeedSequence],
    }

    def __init__(
        self,
        kernel: str | Kernel = "polynomial",
        *,
        degree: int | None = None,
        gamma: float | None = None,
        coef0: float | None = None,
        kernel_params: dict[str, Any] | None = None,
        n_components: int = 100,
        p: float = 2.0,
        h01: bool = False,
        random_state: Any = None,
    ) -> None:
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.n_components = n_components
        self.p = p
        self.h01 = h01
        self.random_state = random_state

    def _fit(self, X: Any, rng: np.random.Generator) -> None:
        kernel = self._resolve_dot_product_kernel(X)
        self._draw_maclaurin(kernel, X.shape[1], self.n_components, rng)
        self._n_features_out = self.n_components

    def _transform_constants(self, X: Any) -> tuple[Any, list[Any], Any]:
        return self._maclaurin_constants(X)

    def _transform_block(self, X: Any, out: Any, constants: tuple[Any, list[Any], Any]) -> None:
        self._maclaurin_block(X, out, constants)


@register_feature_map
class CompactRandomFeatures(_MaclaurinFeatureMap):
    """Compact random feature maps for dot-product kernels (Hamid et al. 2013).

    Random Maclaurin features of a larger dimension ``L = up_factor * D`` (the
    up-projection) followed by a Johnson-Lindenstrauss projection to ``D``:
    ``z(x) = R^T z_L(x)`` with ``R`` of shape ``(L, D)`` and ``E[R R^T] = I_L``.

    Parameters
    ----------
    kernel : str or DotProductKernel, default="polynomial"
        As for :class:`RandomMaclaurinFeatures`.
    degree, gamma, coef0, kernel_params : optional
        Kernel parameters, as for :class:`RandomMaclaurinFeatures`.
    n_components : int, default=100
        Output dimension ``D``.
    up_factor : int, default=4
        ``L / D`` (the paper and the report use 4).
    projection : {"gaussian", "rademacher", "sparse"}, default="gaussian"
        Entries of ``sqrt(D) R``: standard normal; +-1; or Achlioptas' sparse
        ``sqrt(3) * {+1, 0, -1}`` with probabilities ``1/6, 2/3, 1/6`` (stored as a sparse
        matrix, a third of the work).
    p : float, default=2.0
        Order law parameter of the up-projection.
    h01 : bool, default=False
        H0/1 heuristic in the up-projection (see :class:`RandomMaclaurinFeatures`).
    random_state : int, Generator, SeedSequence, RandomState or None, default=None

    Attributes
    ----------
    kernel_, orders_, weights_, rademacher_, n_exact_, n_random_
        The up-projection, as for :class:`RandomMaclaurinFeatures` with ``L`` columns.
    projection_ : ndarray or scipy.sparse.csr_matrix of shape (L, D)
        The matrix ``R`` (scaled by ``1 / sqrt(D)``); dense when fitted on the arrays of
        another library (an array of theirs, on their device).
    n_features_in_ : int

    Notes
    -----
    {notes}
    The projection keeps the estimate unbiased: ``E[z_L(x)^T R R^T z_L(y)] = E[z_L(x) .
    z_L(y)] = k(x, y)``.  With Gaussian ``R`` its variance is
    ``V / L + (1 / D) E[(z_L(x) . z_L(y))^2 + |z_L(x)|^2 |z_L(y)|^2]``, with ``V`` the
    one-feature variance of :class:`RandomMaclaurinFeatures`: the up-projection spends
    ``L`` features on the (mostly zero, high-variance) Maclaurin draws, and the
    projection only adds a kernel-sized term, hence the lower error at equal ``D`` (the
    report: "CRFM performs better than RMFM almost all the time").

    Cost: the up-projection ``O(n d sum_i N_i)`` plus ``O(n L D)`` for the projection (a
    third of it with ``"sparse"``), in row blocks; memory ``L + D`` floats per row.

    Numerical limits: those of :class:`RandomMaclaurinFeatures` (the projection adds
    none).  See docs/LIMITS.md.

    References
    ----------
    Hamid, R., Xiao, Y., Gittens, A. and DeCoste, D. (2014). Compact random feature maps.
    ICML (arXiv:1312.4626, 2013).
    Kar, P. and Karnick, H. (2012). Random feature maps for dot product kernels. AISTATS.
    Achlioptas, D. (2003). Database-friendly random projections. JCSS 66(4).

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from sklearn.preprocessing import normalize
    >>> from kernelmaps import CompactRandomFeatures
    >>> X = normalize(load_digits().data)
    >>> crf = CompactRandomFeatures(degree=2, gamma=1.0, coef0=0.0, n_components=128,
    ...                             random_state=0)
    >>> crf.fit_transform(X).shape
    (1797, 128)
    """

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **_KERNEL_PARAM_CONSTRAINTS,
        "n_components": [StrictInterval(Integral, 1, None, closed="left")],
        "up_factor": [StrictInterval(Integral, 1, None, closed="left")],
        "projection": [StrOptions({"gaussian", "rademacher", "sparse"})],
        "p": [StrictInterval(Real, 1.0, None, closed="neither")],
        "h01": ["boolean"],
        "random_state": ["random_state", np.random.Generator, np.random.SeedSequence],
    }

    def __init__(
        self,
        kernel: str | Kernel = "polynomial",
        *,
        degree: int | None = None,
        gamma: float | None = None,
        coef0: float | None = None,
        kernel_params: dict[str, Any] | None = None,
        n_components: int = 100,
        up_factor: int = 4,
        projection: str = "gaussian",
        p: float = 2.0,
        h01: bool = False,
        random_state: Any = None,
    ) -> None:
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.n_components = n_components
        self.up_factor = up_factor
        self.projection = projection
        self.p = p
        self.h01 = h01
        self.random_state = random_state

    def _fit(self, X: Any, rng: np.random.Generator) -> None:
        kernel = self._resolve_dot_product_kernel(X)
        D = int(self.n_components)
        L = int(self.up_factor) * D  # Python ints: no overflow before the memory check
        self._check_memory(
            (2.0 if self.projection != "sparse" else 5.0) * 8.0 * L * D,
            f"the {L} x {D} projection (up_factor * n_components rows)",
            "lower n_components or up_factor",
        )
        self._draw_maclaurin(kernel, X.shape[1], L, rng)
        scale = 1.0 / math.sqrt(D)
        R: Any
        if self.projection == "gaussian":
            R = rng.standard_normal((L, D)) * scale
        elif self.projection == "rademacher":
            R = (2.0 * rng.integers(0, 2, size=(L, D)) - 1.0) * scale
        else:
            u = rng.random((L, D))
            values = np.where(u < 1.0 / 6.0, 1.0, np.where(u < 1.0 / 3.0, -1.0, 0.0))
            R = sp.csr_matrix(values * (math.sqrt(3.0) * scale))
        self.projection_ = R
        self.n_up_ = L
        self._n_features_out = D

    def _block_bytes_per_row(self, X: Any) -> float:
        itemsize = np.dtype(X.dtype).itemsize
        return float(self.n_up_ * itemsize) + super()._block_bytes_per_row(X)

    def _transform_constants(self, X: Any) -> tuple[Any, ...]:
        # the projection in the dtype of X: no copy in float64, one per call in float32;
        # a sparse one (fitted on NumPy, moved by move_to) goes dense to another library
        xp, groups, weights = self._maclaurin_constants(X)
        R = self.projection_
        if is_numpy(xp):
            R = R.astype(X.dtype, copy=False)
        else:
            R = to_namespace(R.toarray() if sp.issparse(R) else R, xp, X.device, dtype=X.dtype)
        return xp, groups, weights, R

    def _transform_block(self, X: Any, out: Any, constants: tuple[Any, ...]) -> None:
        xp, groups, weights, R = constants
        up = xp.empty((X.shape[0], self.n_up_), dtype=out.dtype, device=device_of(out))
        self._maclaurin_block(X, up, (xp, groups, weights))
        out[...] = safe_sparse_dot(up, R, dense_output=True) if is_numpy(xp) else up @ R

    def _place_fitted(self, xp: Any, device: Any) -> None:
        # the array API has no sparse arrays: a sparse projection goes there dense
        if not is_numpy(xp) and sp.issparse(self.projection_):
            self.projection_ = self.projection_.toarray()
        super()._place_fitted(xp, device)


for _cls in (RandomMaclaurinFeatures, CompactRandomFeatures):
    _cls.__doc__ = (_cls.__doc__ or "").replace("{notes}", _MACLAURIN_NOTES.strip())
