"""Sufficient statistics of a weighted primal ridge fit, accumulated by blocks and mergeable.

A primal ridge fit on features ``Z`` (``n x D``), targets ``Y`` (``n x t``) and weights
``w`` needs only the weight sum ``S_w``, the weighted means ``zbar`` and ``ybar`` and the
centred products ``Z_c^T W Z_c``, ``Z_c^T W Y_c`` and ``diag(Y_c^T W Y_c)``.
:class:`RidgeStatistics` holds them: :meth:`~RidgeStatistics.update` adds a block of rows
and :meth:`~RidgeStatistics.merge` combines the statistics of two disjoint sets of rows
exactly, so one fit over row blocks, threads or data chunks is the same computation.

The sums are NumPy arrays by default; statistics made with ``xp`` and ``device`` hold
them in that array namespace, on that device (the fits on the arrays of other libraries
and the streamed fits accumulate there), in float64 where the device holds it; the same
methods work on either, and :meth:`RidgeStatistics.to_host` gives the NumPy copy the
solvers take.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._array_api import accumulator_dtype, get_namespace, is_numpy, to_numpy

__all__ = ["RidgeStatistics"]


def _outer(a: Any, b: Any) -> Any:
    """``a b^T`` of two vectors (any namespace; NumPy's ``outer`` computes the same)."""
    return a[:, None] * b[None, :]


def _copy(value: Any) -> Any:
    """A copy of an array of any namespace; other values as they are."""
    if isinstance(value, (bool, int, float)) or value is None:
        return value
    return get_namespace(value)[0].asarray(value, copy=True)


def as_float64(Z: Any) -> Any:
    """``Z`` in float64, CSR when sparse.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models._ridge_statistics import as_float64
    >>> as_float64(np.ones((2, 2), dtype=np.float32)).dtype
    dtype('float64')
    """
    if sp.issparse(Z):
        return Z.tocsr().astype(np.float64, copy=False)
    return np.asarray(Z, dtype=np.float64)


class RidgeStatistics:
    """Weighted sums of a ridge fit, kept about a shift ``(s_z, s_y)`` for accuracy.

    With ``z_i`` the feature rows, ``y_i`` the target rows and ``w_i >= 0`` the weights
    seen so far, the object holds ``S_w = sum w_i``, the row count ``n``, and

    * ``a = sum w_i (z_i - s_z)``, ``b = sum w_i (y_i - s_y)``,
    * ``G = sum w_i (z_i - s_z)(z_i - s_z)^T``, ``C = sum w_i (z_i - s_z)(y_i - s_y)^T``,
    * ``q = sum w_i (y_i - s_y)^2`` (one entry per target).

    With ``centre=True`` the shift is set to the weighted means of the first block of
    positive weight (dense features; sparse features keep ``s_z = 0`` so that they stay
    sparse), which keeps the centred Gram matrix ``G - a a^T / S_w`` free of cancellation
    when the features have a large common offset; with ``centre=False`` the shift stays
    zero and ``G``, ``C``, ``q`` are the products about the origin.  Everything is float64
    whatever the dtype of the blocks.

    On a device (``xp`` and ``device`` given) the sums are arrays of ``xp`` there, float64
    where the device holds it (else float32), and the blocks are arrays of ``xp`` on it:
    each block's products are computed in the dtype of its features (float32 features
    stay float32, about the shift rounded to float32, the products then moved to the
    shift exactly as sparse blocks' are) and added to the sums.

    Parameters
    ----------
    n_features : int
        Width ``D`` of the feature rows.
    n_targets : int
        Number ``t`` of targets.
    centre : bool, default=True
        Shift the sums by the means of the first block (for a fit with an intercept).
    xp : array namespace, optional
        Where the sums are held (default: NumPy).
    device : device, optional
        The device of ``xp`` the sums are held on.

    Attributes
    ----------
    weight_sum : float
        ``S_w``.
    n_samples : int
        Rows seen.
    shift_z, shift_y : ndarray of shape (D,) and (t,)
        The shift ``(s_z, s_y)``.
    sum_z, sum_y : ndarray of shape (D,) and (t,)
        ``a`` and ``b``.
    gram, cross : ndarray of shape (D, D) and (D, t)
        ``G`` and ``C``.
    sum_yy : ndarray of shape (t,)
        ``q``.

    Notes
    -----
    :meth:`merge` is the pairwise update of Chan, Golub & LeVeque (1979, 1983): for
    disjoint row sets ``A`` and ``B`` with weight sums ``w_a``, ``w_b``, means
    ``mu_a``, ``mu_b`` and centred products ``M_a``, ``M_b``,

    .. math:: M = M_a + M_b + \\frac{w_a w_b}{w_a + w_b} \\delta \\delta^T,
              \\quad \\delta = \\mu_b - \\mu_a, \\quad
              \\mu = \\mu_a + \\frac{w_b}{w_a + w_b} \\delta,

    likewise for the cross products ``Z^T W Y`` (``delta_z delta_y^T``) and the target
    sums of squares.  The formula is exact in exact arithmetic and, unlike subtracting
    ``S_w mu mu^T`` from uncentred sums, adds only nonnegative terms to ``M``.  When both
    objects have the same shift (e.g. ``centre=False``) their sums are simply added.

    References
    ----------
    Chan, T. F., Golub, G. H. and LeVeque, R. J. (1983). Algorithms for computing the
    sample variance: analysis and recommendations. The American Statistician 37(3).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models import RidgeStatistics
    >>> rng = np.random.default_rng(0)
    >>> Z, Y, w = rng.normal(size=(100, 3)), rng.normal(size=(100, 1)), np.ones(100)
    >>> whole = RidgeStatistics(3, 1).update(Z, Y, w)
    >>> a = RidgeStatistics(3, 1).update(Z[:40], Y[:40], w[:40])
    >>> b = RidgeStatistics(3, 1).update(Z[40:], Y[40:], w[40:])
    >>> merged = a.merge(b)
    >>> bool(np.allclose(merged.centred()[0], whole.centred()[0], rtol=1e-12))
    True
    """

    #: The sums move with the estimator holding them (:func:`kernelmaps.move_to`).
    _moves_with_estimator = True

    def __init__(
        self,
        n_features: int,
        n_targets: int,
        *,
        centre: bool = True,
        xp: Any = None,
        device: Any = None,
    ) -> None:
        D, t = int(n_features), int(n_targets)
        zeros: Any = np.zeros
        if xp is not None and not is_numpy(xp):
            zeros = functools.partial(xp.zeros, dtype=accumulator_dtype(xp, device), device=device)
        self.centre = bool(centre)
        self.weight_sum = 0.0
        self.n_samples = 0
        self.shift_z = zeros(D)
        self.shift_y = zeros(t)
        self.sum_z = zeros(D)
        self.sum_y = zeros(t)
        self.gram = zeros((D, D))
        self.cross = zeros((D, t))
        self.sum_yy = zeros(t)
        self._shift_set = not self.centre

    @property
    def n_features(self) -> int:
        """Width ``D`` of the feature rows."""
        return int(self.gram.shape[0])

    @property
    def n_targets(self) -> int:
        """Number ``t`` of targets."""
        return int(self.cross.shape[1])

    def copy(self) -> RidgeStatistics:
        """An independent copy (its sums where these are)."""
        out = RidgeStatistics.__new__(RidgeStatistics)
        out.__dict__.update({k: _copy(v) for k, v in self.__dict__.items()})
        return out

    def to_host(self) -> RidgeStatistics:
        """The statistics with NumPy float64 sums (``self`` when they are NumPy's)."""
        if is_numpy(get_namespace(self.gram)[0]):
            return self
        out = RidgeStatistics.__new__(RidgeStatistics)
        out.__dict__.update(
            {
                k: v if isinstance(v, (bool, int, float)) else to_numpy(v).astype(np.float64)
                for k, v in self.__dict__.items()
            }
        )
        return out

    def update(self, Z: Any, Y: Any, w: Any) -> RidgeStatistics:
        """Add the rows ``(Z, Y)`` with weights ``w``; returns ``self``.

        Parameters
        ----------
        Z : {ndarray, sparse matrix} of shape (n_rows, D)
            An array of the statistics' namespace, on their device, for statistics held
            there.
        Y : ndarray of shape (n_rows, t)
        w : ndarray of shape (n_rows,)
        """
        # overflow leaves inf or NaN in the sums, which the estimators check (and report
        # with the fix) before solving: no RuntimeWarning on the way
        with np.errstate(over="ignore", invalid="ignore"):
            if is_numpy(get_namespace(self.gram)[0]):
                Z = as_float64(Z)
            return self._update(Z, Y, w)

    def _update(self, Z: Any, Y: Any, w: Any) -> RidgeStatistics:
        xp = get_namespace(self.gram)[0]
        Y = xp.asarray(Y, dtype=self.gram.dtype)
        w = xp.asarray(w, dtype=self.gram.dtype)
        sparse = sp.issparse(Z)
        if not self._shift_set:
            total = xp.sum(w)
            if total > 0:
                self.shift_y = (w @ Y) / total
                if not sparse:
                    mean = (xp.astype(w, Z.dtype, copy=False) @ Z) / total
                    self.shift_z = xp.astype(mean, self.gram.dtype, copy=False)
                self._shift_set = True
        Yc = Y - self.shift_y
        if sparse:
            self._add_sparse(Z, Yc, w)
        else:
            self._add_dense(xp, Z, Yc, w)
        self.sum_y += w @ Yc
        self.sum_yy += w @ (Yc * Yc)
        self.weight_sum += float(xp.sum(w))
        self.n_samples += Z.shape[0]
        return self

    def _add_dense(self, xp: Any, Z: Any, Yc: Any, w: Any) -> None:
        """Dense rows: the products about ``s_z``, in the dtype of the sums; narrower
        rows (float32 on a device) in their dtype about ``s_z`` rounded to it, moved."""
        dtype = self.gram.dtype
        if Z.dtype == dtype:
            Zc = Z - self.shift_z
            # (sqrt(w) Z_c)^T (sqrt(w) Z_c): one operand twice, which NumPy multiplies as
            # a symmetric rank-k update (a third faster than two operands)
            Zs = Zc if bool(xp.all(w == 1.0)) else Zc * xp.sqrt(w)[:, None]
            self.gram += Zs.T @ Zs
            del Zs
            self.cross += Zc.T @ (Yc * w[:, None])
            self.sum_z += w @ Zc
            return
        rounded = xp.astype(self.shift_z, Z.dtype)
        Zc = Z - rounded
        Zw = Zc * xp.astype(w, Z.dtype)[:, None]
        self._add_moved(
            xp.astype(Zc.T @ Zw, dtype),
            xp.astype(Zw.T @ xp.astype(Yc, Z.dtype), dtype),
            xp.astype(xp.sum(Zw, axis=0), dtype),
            self.shift_z - xp.astype(rounded, dtype),
            Yc,
            w,
        )

    def _add_sparse(self, Z: Any, Yc: np.ndarray, w: np.ndarray) -> None:
        """Sparse rows: the products about the origin, moved to ``s_z`` when it is not 0."""
        Zw = sp.diags(w) @ Z
        gram = (Z.T @ Zw).toarray()
        cross = np.asarray(Zw.T @ Yc)
        sum_z = np.asarray(Zw.sum(axis=0)).ravel()
        if np.any(self.shift_z):  # only after a merge with dense statistics
            self._add_moved(gram, cross, sum_z, self.shift_z, Yc, w)
            return
        self.gram += gram
        self.cross += cross
        self.sum_z += sum_z

    def _add_moved(self, gram: Any, cross: Any, sum_z: Any, s: Any, Yc: Any, w: Any) -> None:
        """Add the products of rows about ``s_z - s`` (``gram``, ``cross``, ``sum_z``),
        moved to the shift ``s_z``: ``z - s_z = (z - (s_z - s)) - s``."""
        total = get_namespace(w)[0].sum(w)
        gram += total * _outer(s, s) - _outer(s, sum_z) - _outer(sum_z, s)
        cross -= _outer(s, w @ Yc)
        sum_z -= total * s
        self.gram += gram
        self.cross += cross
        self.sum_z += sum_z

    def means(self) -> tuple[Any, Any]:
        """Weighted means ``(zbar, ybar)`` (zeros before any positive weight)."""
        if self.weight_sum <= 0:
            xp = get_namespace(self.sum_z)[0]
            return xp.zeros_like(self.sum_z), xp.zeros_like(self.sum_y)
        return (
            self.shift_z + self.sum_z / self.weight_sum,
            self.shift_y + self.sum_y / self.weight_sum,
        )

    def centred(self) -> tuple[Any, Any, Any]:
        """``(Z_c^T W Z_c, Z_c^T W Y_c, diag(Y_c^T W Y_c))`` about the weighted means."""
        G, C, yy = _copy(self.gram), _copy(self.cross), _copy(self.sum_yy)
        if self.weight_sum > 0:
            # (a / S_w) a^T rather than a a^T / S_w: the product of two sums of weighted
            # values would overflow long before the centred sums do
            a, b = self.sum_z, self.sum_y
            mz, my = a / self.weight_sum, b / self.weight_sum
            G -= _outer(mz, a)
            C -= _outer(mz, b)
            yy -= my * b
        return G, C, yy

    def target_energy(self, centred: bool) -> Any:
        """``diag(Y_c^T W Y_c)`` (``centred``) or ``diag(Y^T W Y)``, without the ``D x D``
        sums."""
        yy = _copy(self.sum_yy)
        if centred and self.weight_sum > 0:
            return yy - self.sum_y / self.weight_sum * self.sum_y
        u = self.shift_y
        return yy + 2 * u * self.sum_y + self.weight_sum * u * u

    def uncentred(self) -> tuple[Any, Any, Any]:
        """``(Z^T W Z, Z^T W Y, diag(Y^T W Y))`` about the origin."""
        G, C, yy = _copy(self.gram), _copy(self.cross), _copy(self.sum_yy)
        s, u = self.shift_z, self.shift_y
        xp = get_namespace(s)[0]
        if bool(xp.any(s != 0)) or bool(xp.any(u != 0)):
            a, b, W = self.sum_z, self.sum_y, self.weight_sum
            G += _outer(s, a) + _outer(a, s) + W * _outer(s, s)
            C += _outer(s, b) + _outer(a, u) + W * _outer(s, u)
            yy += 2 * u * b + W * u * u
        return G, C, yy

    def restricted(self, columns: Any, scale: float = 1.0) -> RidgeStatistics:
        """The statistics of the features ``scale * z[columns]`` of the same rows.

        The Gram matrix of a subset of the features is the submatrix of the Gram matrix,
        so every leading block of a feature map's output (the ``D'`` features of a map of
        ``D' < D`` components, weighted ``sqrt(D / D')`` more) has its statistics without
        another pass.  NumPy statistics only (:meth:`to_host` first).

        Parameters
        ----------
        columns : ndarray of int or slice
            The features kept, in their order.
        scale : float, default=1.0
            The weight every kept feature is multiplied by.

        Returns
        -------
        RidgeStatistics

        Examples
        --------
        >>> import numpy as np
        >>> from kernelmaps.models import RidgeStatistics
        >>> Z = np.random.default_rng(0).normal(size=(10, 3))
        >>> whole = RidgeStatistics(3, 1).update(Z, np.ones((10, 1)), np.ones(10))
        >>> part = RidgeStatistics(2, 1).update(2.0 * Z[:, [2, 0]], np.ones((10, 1)), np.ones(10))
        >>> sub = whole.restricted(np.array([2, 0]), 2.0)
        >>> bool(np.allclose(sub.centred()[0], part.centred()[0], rtol=1e-12))
        True
        """
        index = np.arange(self.n_features)[columns]
        out = self.copy()
        out.gram = (scale * scale) * self.gram[np.ix_(index, index)]
        out.cross = scale * self.cross[index]
        out.sum_z = scale * self.sum_z[index]
        out.shift_z = scale * self.shift_z[index]
        return out

    def about(self, z: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(G, C, q)`` about the point ``(z, y)`` instead of the weighted means:
        ``sum w (z_i - z)(z_i - z)^T``, ``sum w (z_i - z)(y_i - y)^T`` and
        ``sum w (y_i - y)^2``, from the centred sums and the means (no cancellation of
        large offsets).  NumPy statistics only.

        Examples
        --------
        >>> import numpy as np
        >>> from kernelmaps.models import RidgeStatistics
        >>> Z, Y = np.array([[1.0], [3.0]]), np.array([[0.0], [2.0]])
        >>> G, C, q = RidgeStatistics(1, 1).update(Z, Y, np.ones(2)).about(np.zeros(1), np.ones(1))
        >>> G.tolist(), C.tolist(), q.tolist()
        ([[10.0]], [[2.0]], [2.0])
        """
        G, C, q = self.centred()
        mz, my = self.means()
        dz, dy = mz - z, my - y
        W = self.weight_sum
        return G + W * np.outer(dz, dz), C + W * np.outer(dz, dy), q + W * dy * dy

    def merge(self, other: RidgeStatistics) -> RidgeStatistics:
        """The statistics of the rows of ``self`` and ``other`` together (a new object).

        Parameters
        ----------
        other : RidgeStatistics
            Statistics of a disjoint set of rows, same ``D`` and ``t``.

        Returns
        -------
        RidgeStatistics
        """
        # sums that overflowed stay inf or NaN, for the estimators' check before the solve
        with np.errstate(over="ignore", invalid="ignore"):
            return self._merge(other)

    def _merge(self, other: RidgeStatistics) -> RidgeStatistics:
        if (other.n_features, other.n_targets) != (self.n_features, self.n_targets):
            raise ValueError(
                f"Cannot merge statistics of {other.n_features} features and "
                f"{other.n_targets} targets into statistics of {self.n_features} features "
                f"and {self.n_targets} targets; both must come from the same feature map "
                "and targets."
            )
        if other.n_samples == 0 and other.weight_sum == 0:
            return self.copy()
        if self.n_samples == 0 and self.weight_sum == 0:
            return other.copy()
        out = self.copy()
        out.n_samples = self.n_samples + other.n_samples
        xp = get_namespace(self.gram)[0]
        same_shift = bool(xp.all(self.shift_z == other.shift_z)) and bool(
            xp.all(self.shift_y == other.shift_y)
        )
        if same_shift or other.weight_sum <= 0 or self.weight_sum <= 0:
            return out._add_sums(other, same_shift)
        wa, wb = self.weight_sum, other.weight_sum
        (mza, mya), (mzb, myb) = self.means(), other.means()
        (Ga, Ca, qa), (Gb, Cb, qb) = self.centred(), other.centred()
        dz, dy = mzb - mza, myb - mya
        f = wa * (wb / (wa + wb))
        out.weight_sum = wa + wb
        out.shift_z, out.shift_y = mza + (wb / (wa + wb)) * dz, mya + (wb / (wa + wb)) * dy
        out.sum_z, out.sum_y = xp.zeros_like(dz), xp.zeros_like(dy)
        out.gram = Ga + Gb + f * _outer(dz, dz)
        out.cross = Ca + Cb + f * _outer(dz, dy)
        out.sum_yy = qa + qb + f * dy * dy
        out._shift_set = True
        return out

    def _add_sums(self, other: RidgeStatistics, same_shift: bool) -> RidgeStatistics:
        """Add ``other``'s sums (same shift), or take the side that carries all the weight."""
        if not same_shift:
            heavy = self if self.weight_sum > 0 else other
            merged = heavy.copy()
            merged.n_samples = self.n_samples
            return merged
        self.weight_sum += other.weight_sum
        self.gram += other.gram
        self.cross += other.cross
        self.sum_z += other.sum_z
        self.sum_y += other.sum_y
        self.sum_yy += other.sum_yy
        self._shift_set = self._shift_set or other._shift_set
        return self
