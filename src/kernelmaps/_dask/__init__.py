"""Dask support: the estimators of kernelmaps on :class:`dask.array.Array` input.

Imported only when an estimator receives a Dask array (see
:func:`kernelmaps._array_types.is_dask_array`); the rest of kernelmaps never imports Dask,
which is the optional extra ``pip install "kernelmaps[dask]"``.

What runs where:

* ``transform`` / ``predict`` / ``decision_function`` / ``predict_proba`` return lazy Dask
  arrays (:mod:`._rows`): the fitted estimator is one key of the graph (sent once to each
  worker), every chunk is validated on its worker (finiteness, value ranges) with the
  numpy path's messages, and its rows are computed in tiles aligned on a global grid of
  rows, so that the result does not depend on the chunking.
* ``fit`` of a data-independent map reads only the shape and dtype (:mod:`._maps`).
"""

from ._maps import fit_feature_map
from ._rows import map_method
from ._validation import check_dask_array

__all__ = ["check_dask_array", "fit_feature_map", "map_method"]
