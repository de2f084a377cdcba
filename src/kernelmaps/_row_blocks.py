"""Row blocks of the transforms: their length under the memory budget and the cache, and
the stacking of sparse blocks."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import scipy.sparse as sp
from sklearn import get_config
from sklearn.utils import gen_batches

__all__ = ["cache_block_rows", "row_blocks", "stack_csr_rows"]

_CACHE_BLOCK_BYTES = 1 << 22


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

    Examples
    --------
    >>> from kernelmaps._row_blocks import row_blocks
    >>> list(row_blocks(5, bytes_per_row=8.0, max_rows=2))
    [slice(0, 2, None), slice(2, 4, None), slice(4, 5, None)]
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

    Examples
    --------
    >>> from kernelmaps._row_blocks import cache_block_rows
    >>> cache_block_rows(4096), cache_block_rows(64, n_features=784)
    (128, 8192)
    """
    return max(16, _CACHE_BLOCK_BYTES // (8 * max(n_columns, 1)), min(n_features, 1024))


def stack_csr_rows(parts: list[sp.csr_matrix], n_columns: int) -> sp.csr_matrix:
    """The CSR matrix whose consecutive row blocks are ``parts``, in one concatenation.

    The index arrays are concatenated (row pointers shifted by the non-zeros before each
    part, in int64) and the constructor chooses the index dtype, as it does for a matrix
    built in one piece.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from kernelmaps._row_blocks import stack_csr_rows
    >>> parts = [sp.csr_matrix([[1.0, 0.0]]), sp.csr_matrix([[0.0, 2.0], [3.0, 0.0]])]
    >>> stack_csr_rows(parts, 2).toarray()
    array([[1., 0.],
           [0., 2.],
           [3., 0.]])
    """
    indptr = [np.zeros(1, dtype=np.int64)]
    n_stored = 0
    for part in parts:
        indptr.append(part.indptr[1:].astype(np.int64) + n_stored)
        n_stored += int(part.indptr[-1])
    data = [part.data[: part.indptr[-1]] for part in parts]
    indices = [part.indices[: part.indptr[-1]] for part in parts]
    n_rows = sum(part.shape[0] for part in parts)
    return sp.csr_matrix(
        (
            np.concatenate(data) if data else np.zeros(0),
            np.concatenate(indices) if indices else np.zeros(0, dtype=np.int64),
            np.concatenate(indptr),
        ),
        shape=(n_rows, n_columns),
    )
