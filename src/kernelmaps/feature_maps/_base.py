"""Shared machinery of the feature maps: validation, kernel checks and row-block transforms.

Every map is a scikit-learn transformer.  ``fit`` validates the parameters and the data,
draws the random quantities into attributes ending in ``_`` and records
``n_features_in_``; ``transform`` is deterministic and row-local, and works through the
rows in blocks whose temporaries stay within scikit-learn's ``working_memory`` budget
(``sklearn.set_config(working_memory=MiB)``, 1024 MiB by default), so that the memory of
a transform is the output plus one block.  Maps whose block work releases the GIL run
their blocks on one thread per core (BLAS limited to one thread meanwhile), and then
hold one block per core.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterator
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn import get_config
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils import gen_batches
from sklearn.utils.validation import check_is_fitted, validate_data

from .._parallel import run_blocks
from .._random import check_random_state
from ..kernels import Kernel

__all__ = ["BaseFeatureMap", "cache_block_rows", "maps_supporting", "row_blocks"]

_MAP_CLASSES: list[type[BaseFeatureMap]] = []

FLOAT_DTYPES = (np.float64, np.float32)

_CACHE_BLOCK_BYTES = 1 << 22


def maps_supporting(kernel: Kernel) -> list[str]:
    """Names of the feature maps of kernelmaps that can approximate ``kernel``."""
    return [cls.__name__ for cls in _MAP_CLASSES if cls._supports_kernel(kernel)]


def row_blocks(n_rows: int, bytes_per_row: float, max_rows: int | None = None) -> Iterator[slice]:
    """Consecutive row slices whose temporaries fit in scikit-learn's ``working_memory``.

    Parameters
    ----------
    n_rows : int
        Number of rows to cover.
    bytes_per_row : float
        Bytes of temporaries one row needs.
    max_rows : int, optional
        Upper bound on the block length.
    """
    budget = get_config()["working_memory"] * 2**20
    size = max(1, int(budget // max(bytes_per_row, 1.0)))
    if max_rows is not None:
        size = min(size, max_rows)
    return gen_batches(n_rows, size)


def cache_block_rows(n_columns: int, n_features: int = 0) -> int:
    """Rows of a transform block holding about 4 MiB of float64 projections.

    Such a block stays in cache from the product that makes it to the elementwise
    functions applied to it.  A map whose block comes from a product with an
    ``(n_features x n_columns)`` matrix passes ``n_features``: the block then has at least
    that many rows (up to 1024), so that the product is not dominated by the BLAS packing
    its right factor.
    """
    return max(16, _CACHE_BLOCK_BYTES // (8 * max(n_columns, 1)), min(n_features, 1024))


class BaseFeatureMap(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Base class of the explicit feature maps ``z(x)`` with ``z(x) . z(y) ~ k(x, y)``.

    Subclasses define ``_supports_kernel`` (which kernels they approximate, used to name
    the alternatives when a kernel is refused), ``_fit`` and ``_transform_block``.
    """

    #: Whether sparse input is accepted (densified row block by row block if needed).
    _accepts_sparse: ClassVar[bool] = True
    #: Upper bound on the rows of a transform block (None: the memory budget decides).
    _max_block_rows: ClassVar[int | None] = None
    #: Whether row blocks may be transformed on several threads at once: the block work
    #: must release the GIL for its heavy parts and write only its own rows of ``out``.
    _parallel_blocks: ClassVar[bool] = False
    #: Human-readable requirement on the kernel, for error messages.
    _kernel_requirement: ClassVar[str] = "a kernel"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not cls.__name__.startswith("_") and "_supports_kernel" in cls.__dict__:
            _MAP_CLASSES.append(cls)

    @classmethod
    def _supports_kernel(cls, kernel: Kernel) -> bool:
        return False

    def _check_kernel(self, kernel: Kernel) -> Kernel:
        """Refuse a kernel this map cannot approximate, naming the maps that can."""
        if not self._supports_kernel(kernel):
            others = [name for name in maps_supporting(kernel) if name != type(self).__name__]
            hint = (
                f" Use {' or '.join(others)} for it."
                if others
                else " No feature map of kernelmaps handles it."
            )
            raise ValueError(
                f"{type(self).__name__} needs {self._kernel_requirement}; got {kernel!r}.{hint}"
            )
        return kernel

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = self._accepts_sparse
        if tags.transformer_tags is not None:
            tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags

    # -- validation ---------------------------------------------------------------------

    def _validate_X(self, X: Any, *, reset: bool) -> Any:
        return validate_data(
            self,
            X,
            accept_sparse=("csr", "csc") if self._accepts_sparse else False,
            dtype=FLOAT_DTYPES,
            reset=reset,
        )

    # -- fit / transform ----------------------------------------------------------------

    def fit(self, X: Any, y: Any = None) -> BaseFeatureMap:
        """Validate the parameters and ``X``, then draw (or learn) the map.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; data-independent maps use only its shape.
        y : None
            Ignored.

        Returns
        -------
        self
        """
        self._validate_params()
        X = self._validate_X(X, reset=True)
        self._fit(X, check_random_state(getattr(self, "random_state", None)))
        return self

    @abstractmethod
    def _fit(self, X: Any, rng: np.random.Generator) -> None:
        """Draw the map's random quantities; ``X`` is validated."""

    @abstractmethod
    def _transform_block(self, X: Any, out: np.ndarray) -> None:
        """Write the features of the rows ``X`` (a block, validated) into ``out``."""

    def _block_bytes_per_row(self, X: Any) -> float:
        """Bytes of temporaries per row of a transform block (output excluded)."""
        itemsize = np.dtype(X.dtype).itemsize
        dense_input = X.shape[1] * itemsize if sp.issparse(X) else 0
        return float(dense_input + self._n_features_out * itemsize)

    def transform(self, X: Any) -> np.ndarray:
        """Map ``X`` to the explicit features ``z(X)``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_components)
            float32 for float32 input, float64 otherwise.
        """
        check_is_fitted(self)
        X = self._validate_X(X, reset=False)
        if sp.issparse(X):
            X = X.tocsr()
        out = np.empty((X.shape[0], self._n_features_out), dtype=X.dtype)
        blocks = row_blocks(X.shape[0], self._block_bytes_per_row(X), max_rows=self._max_block_rows)
        if not self._parallel_blocks:
            for rows in blocks:
                self._transform_block(X[rows], out[rows])
            return out

        def work(rows: slice) -> None:
            self._transform_block(X[rows], out[rows])

        run_blocks(work, list(blocks), out.size)
        return out
