"""Random binning features (Rahimi & Recht 2007, Algorithm 2)."""

from __future__ import annotations

import math
from numbers import Integral
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from .._numerics import largest_magnitude
from .._row_blocks import row_blocks
from .._rows import Rows
from .._validation import StrictInterval
from ..exceptions import NonFiniteOutputError
from ..kernels import BinnableKernel, Kernel, kernel_parameter_constraints, resolve_estimator_kernel
from ._base import BaseFeatureMap, register_feature_map
from ._binning_keys import grid_keys, out_of_range_rows

__all__ = ["RandomBinningFeatures", "merge_bin_keys"]


def _merge_two(a: list[np.ndarray], b: list[np.ndarray]) -> list[np.ndarray]:
    return merge_bin_keys([a, b])


def merge_bin_keys(parts: list[list[np.ndarray]]) -> list[np.ndarray]:
    """The occupied bins of a union of row sets, from the bins of each set.

    ``parts[i][p]`` are the sorted distinct keys of grid ``p`` of the ``i``-th set (as
    ``RandomBinningFeatures._occupied_keys`` returns them); the result is, for each grid,
    the sorted distinct keys of their union, whatever the order or grouping of the parts.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.feature_maps._binning import merge_bin_keys
    >>> a = [np.array([1, 5], dtype=np.uint64)]
    >>> b = [np.array([2, 5], dtype=np.uint64)]
    >>> merge_bin_keys([a, b])[0].tolist()
    [1, 2, 5]
    """
    return [_sorted_unique(np.concatenate(grid)) for grid in zip(*parts, strict=True)]


def _sorted_unique(keys: np.ndarray) -> np.ndarray:
    """The distinct values of ``keys``, sorted (one sort, no hashing)."""
    keys = np.sort(keys)
    keep = np.empty(keys.shape, dtype=bool)
    keep[:1] = True
    np.not_equal(keys[1:], keys[:-1], out=keep[1:])
    return keys[keep]


@register_feature_map
class RandomBinningFeatures(BaseFeatureMap):
    """Random binning features: sparse indicators of randomly shifted grids.

    Each of ``P`` grids has, in every coordinate ``j``, a pitch ``delta_j`` drawn from the
    kernel's pitch law and a shift ``u_j ~ U[0, delta_j)``; a point falls into the bin
    ``floor((x_j - u_j) / delta_j)_j``.  ``z(x)`` holds ``1 / sqrt(P)`` at the column of
    each grid's bin, so ``z(x) . z(y)`` is the fraction of grids in which ``x`` and ``y``
    share a bin, an unbiased estimate of ``k(x, y)``.

    Parameters
    ----------
    kernel : str or BinnableKernel, default="laplacian"
        A product of one-dimensional kernels convex on ``[0, inf)``: ``"laplacian"``
        (``exp(-gamma |x - y|_1)``) or a :class:`~kernelmaps.kernels.BinnableKernel`.
    gamma : float or "scale", default=None
        Kernel parameter; ``None`` means ``1 / n_features``.
        ``"scale"`` means ``1 / (n_features * X.var())`` on the training data, as in
        scikit-learn's ``RBFSampler`` and ``SVC`` (not for Dask arrays).
    kernel_params : dict, default=None
        Other kernel parameters.
    n_grids : int, default=100
        Number of grids ``P``; every row of the output has at most ``P`` non-zeros.
    random_state : int, Generator, SeedSequence, RandomState or None, default=None
        Source of the pitches and shifts.
    dense_output : bool, default=False
        Return a dense array instead of the CSR matrix (the same values).  Needed by
        ``set_output(transform="pandas")`` or ``"polars"``, which take dense output only;
        the dense output holds ``n_bins_.sum()`` values per row instead of ``n_grids``.

    Attributes
    ----------
    kernel_ : BinnableKernel
        The kernel with its parameters resolved.
    pitches_ : ndarray of shape (n_grids, n_features_in)
        Grid pitches ``delta``.
    shifts_ : ndarray of shape (n_grids, n_features_in)
        Grid shifts ``u``.
    bin_keys_ : list of ndarray of uint64
        For each grid, the sorted keys of the bins that the training data occupies.
    n_bins_ : ndarray of shape (n_grids,)
        Number of occupied bins per grid; the output has ``n_bins_.sum()`` columns.
    n_features_in_ : int

    Notes
    -----
    Pitch law: for ``k(delta) = exp(-gamma |delta|)``, ``p(delta) = delta k''(delta)`` is
    Gamma(2, 1/gamma); then ``P[same bin] = E[max(0, 1 - |x_j - y_j| / delta)] = k``.
    The estimate is a mean of ``P`` independent indicators, so Hoeffding's inequality gives
    ``P(|z(x).z(y) - k| >= eps) <= 2 exp(-2 P eps^2)`` and the variance is
    ``k (1 - k) / P``.

    Bins not seen in ``fit``: the columns are the bins occupied by the training data.  A
    point that falls, in some grid, into a bin no training point occupies gets no entry
    for that grid.  This keeps ``z(x) . z(y)`` unbiased whenever ``x`` or ``y`` is a
    training point (they cannot share an unoccupied bin), which covers every linear model
    fitted on the training features; for two new points the estimate is biased low by
    the probability that they share a bin no training point occupies.  Bins are
    identified by a 64-bit hash of their integer coordinates; two different occupied bins
    of one grid share a key with probability about ``n_bins^2 / 2^65``.

    On a Dask array, ``fit`` collects the occupied bins chunk by chunk in parallel and
    merges them (a sorted union, ``kernelmaps._rows.Rows.map_reduce``): the map equals the
    one fitted on the same data in numpy with the same seed, whatever the chunking.

    Cost: ``O(n d P)`` to bin and ``O(n P log n_bins)`` to look the bins up; the output is
    a CSR matrix with ``n P`` stored values at most.

    Numerical limits: the integer bin coordinates ``(x - u) / delta`` must fit the 64-bit
    keys (``|x| / delta < 4.6e18``, about ``gamma |x| < 1e17``): ``fit`` refuses data
    beyond, and at ``transform`` a row beyond gets no entry (it shares no bin with the
    training data).  See docs/LIMITS.md.

    References
    ----------
    Rahimi, A. and Recht, B. (2007). Random features for large-scale kernel machines. NIPS.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import RandomBinningFeatures
    >>> X = np.random.default_rng(0).random((100, 3))
    >>> Z = RandomBinningFeatures(gamma=1.0, n_grids=20, random_state=0).fit_transform(X)
    >>> Z.format, Z.shape[0], int(Z.getnnz(axis=1).max())
    ('csr', 100, 20)
    >>> round(float(Z[0].multiply(Z[0]).sum()), 6)  # z(x) . z(x) = k(x, x) = 1
    1.0
    """

    _kernel_requirement: ClassVar[str] = (
        "a product of one-dimensional kernels convex on [0, inf) with a bin-pitch law "
        "(the Laplacian kernel)"
    )
    _array_api_refusal: ClassVar[str] = (
        "its features are a scipy.sparse matrix, which holds NumPy arrays only"
    )

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **kernel_parameter_constraints(named=("gamma",), gamma_scale=True),
        "n_grids": [StrictInterval(Integral, 1, None, closed="left")],
        "random_state": ["random_state", np.random.Generator, np.random.SeedSequence],
        "dense_output": ["boolean"],
    }

    def __init__(
        self,
        kernel: str | Kernel = "laplacian",
        *,
        gamma: float | str | None = None,
        kernel_params: dict[str, Any] | None = None,
        n_grids: int = 100,
        random_state: Any = None,
        dense_output: bool = False,
    ) -> None:
        self.kernel = kernel
        self.gamma = gamma
        self.kernel_params = kernel_params
        self.n_grids = n_grids
        self.random_state = random_state
        self.dense_output = dense_output

    @classmethod
    def _supports_kernel(cls, kernel: Kernel) -> bool:
        return isinstance(kernel, BinnableKernel)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags

    #: The output holds one stored value per grid and row: CSR.
    _output: ClassVar[str] = "csr"

    def _grid_keys(self, X: Any) -> np.ndarray:
        """Bin keys of the rows of ``X`` in every grid, shape (n_grids, n_rows)."""
        return grid_keys(X, self.shifts_, self.pitches_)

    def _fit_rows(self, rows: Rows, rng: np.random.Generator) -> None:
        """Grids drawn from the width alone, then the bins the rows occupy, collected part
        by part and merged (a union: the same whatever the parts)."""
        self._draw_grids(rows.n_features, rng, rows.array())
        keys = rows.map_reduce(self._occupied_part, _merge_two)
        if not any(len(k) for k in keys):
            raise ValueError(
                f"Found array with 0 sample(s) (shape={(0, rows.n_features)}) while a "
                f"minimum of 1 is required by {type(self).__name__}."
            )
        self._set_bins(keys)

    def _occupied_part(self, X: Any, start: Any) -> list[np.ndarray]:
        """:meth:`_occupied_keys` of one part of the training rows."""
        return self._occupied_keys(X)

    def _draw_grids(self, n_features: int, rng: np.random.Generator, X: Any = None) -> None:
        """The kernel, and the pitches and shifts of the grids (from the width alone;
        ``X``, when given, sets ``gamma="scale"``)."""
        kernel = resolve_estimator_kernel(self, n_features, X)
        assert isinstance(kernel, BinnableKernel)
        self._check_memory(
            3.0 * 8.0 * self.n_grids * n_features,
            f"the pitches and shifts of {self.n_grids} grids in {n_features} dimensions",
            "lower n_grids",
        )
        self.kernel_ = kernel
        self.pitches_ = kernel.sample_bin_pitch(self.n_grids, n_features, rng)
        self.shifts_ = rng.uniform(0.0, 1.0, size=self.pitches_.shape) * self.pitches_

    def _occupied_keys(self, X: Any) -> list[np.ndarray]:
        """For each grid, the sorted distinct keys of the bins the rows of ``X`` occupy.

        The keys of a set of rows are the union of those of its parts: the keys of a
        large ``X`` can be collected part by part and merged by :func:`merge_bin_keys`.
        """
        n_rows, n_features = X.shape
        if n_rows == 0:  # e.g. an empty chunk of a Dask array
            return [np.empty(0, dtype=np.uint64) for _ in range(self.n_grids)]
        # the keys of every row in every grid (collected, then sorted), and a list per grid
        self._check_memory(
            3.0 * 8.0 * n_rows * self.n_grids + 200.0 * self.n_grids,
            f"the bins of {n_rows} rows in {self.n_grids} grids",
            "lower n_grids",
        )
        occupied: list[list[np.ndarray]] = [[] for _ in range(self.n_grids)]
        for rows in row_blocks(n_rows, 8.0 * (n_features * 2 + self.n_grids)):
            bad = out_of_range_rows(X[rows], self.shifts_, self.pitches_)
            if bad is not None:
                first = rows.start + int(np.flatnonzero(bad)[0])
                raise NonFiniteOutputError(
                    f"RandomBinningFeatures.fit: the bin coordinates (x - u) / pitch of row "
                    f"{first} (largest |x| = {largest_magnitude(X[first : first + 1]):.3g}, "
                    f"smallest pitch {float(np.min(self.pitches_)):.3g}) exceed the 64-bit "
                    f"integer range of the bin keys. {self._overflow_fix(X.dtype)}."
                )
            keys = self._grid_keys(X[rows])
            for p in range(self.n_grids):
                occupied[p].append(keys[p])
        return [_sorted_unique(np.concatenate(k)) for k in occupied]

    def _set_bins(self, bin_keys: list[np.ndarray]) -> None:
        """The columns of the output: the occupied bins ``bin_keys`` of each grid."""
        self.bin_keys_ = bin_keys
        self.n_bins_ = np.array([len(k) for k in self.bin_keys_], dtype=np.intp)
        self._column_offsets = np.concatenate([[0], np.cumsum(self.n_bins_)])
        self._n_features_out = int(self._column_offsets[-1])

    def _block_bytes_per_row(self, X: Any) -> float:
        # float64 rows and their bin coordinates, and three (n_grids,) arrays per row
        # (plus the dense copy of the block with dense_output)
        extra = self._n_features_out * np.dtype(X.dtype).itemsize if self.dense_output else 0
        return 8.0 * (X.shape[1] * 2 + 3 * self.n_grids) + extra

    def _output_format(self, X: Any) -> str:
        """CSR, or dense with ``dense_output=True``."""
        return "dense" if self.dense_output else "csr"

    def _transform_block(self, X: Any, out: np.ndarray, constants: Any) -> None:
        """The CSR block written densely into ``out`` (``dense_output=True``)."""
        out[...] = self._transform_block_csr(X, constants).toarray()

    def _transform_block_csr(self, X: Any, constants: Any) -> sp.csr_matrix:
        """``1 / sqrt(n_grids)`` at the column of each grid's bin, if a training bin."""
        keys = self._grid_keys(X)
        n_rows = keys.shape[1]
        # a row whose bins cannot be keyed lies beyond every training bin: no entries
        beyond = out_of_range_rows(X, self.shifts_, self.pitches_)
        # grid-major (n_grids, n_rows): each grid's lookups write contiguous memory
        columns = np.empty((self.n_grids, n_rows), dtype=np.int64)
        found = np.empty((self.n_grids, n_rows), dtype=bool)
        for p in range(self.n_grids):
            known = self.bin_keys_[p]
            pos = np.searchsorted(known, keys[p])
            np.minimum(pos, len(known) - 1, out=pos)
            np.equal(known[pos], keys[p], out=found[p])
            np.add(pos, self._column_offsets[p], out=columns[p])
        if beyond is not None:
            found[:, beyond] = False
        indices = columns.T[found.T]
        indptr = np.concatenate([np.zeros(1, dtype=np.int64), np.cumsum(found.sum(axis=0))])
        value = X.dtype.type(1.0 / math.sqrt(self.n_grids))
        data = np.full(indices.shape[0], value, dtype=X.dtype)
        return sp.csr_matrix((data, indices, indptr), shape=(n_rows, self._n_features_out))
