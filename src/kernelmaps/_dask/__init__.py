"""Dask support: the rows of a fit and the row-wise methods on :class:`dask.array.Array`.

Imported only when an estimator receives a Dask array (see
:func:`kernelmaps._array_types.is_dask_array`, and the dispatch of ``kernelmaps._rows``);
the rest of kernelmaps never imports Dask, which is the optional extra
``pip install "kernelmaps[dask]"``.  This package knows no estimator: the fits are written
once against ``kernelmaps._rows.Rows``, and it holds the Dask implementation of it.

* :class:`DaskRows` (:mod:`._rows`): the training rows of a fit, one part per row chunk:
  rows read by global index in one compute, maps over the chunks merged in a fixed binary
  tree, parts persisted on the workers for iterative solvers (:class:`DaskParts`);
* :func:`map_rows` (:mod:`._output`): ``transform`` / ``predict`` / ``decision_function`` /
  ``predict_proba`` as lazy Dask arrays, every chunk computed in tiles aligned on a global
  grid of rows, so that the result does not depend on the chunking;
* :func:`check_dask_array` (:mod:`._validation`): the checks of the metadata (the values
  are checked chunk by chunk where they are read).
"""

from ._output import map_rows
from ._rows import DaskParts, DaskRows
from ._validation import check_dask_array

__all__ = ["DaskParts", "DaskRows", "check_dask_array", "map_rows"]
