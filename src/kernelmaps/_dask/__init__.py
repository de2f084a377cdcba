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
* ``fit`` of Nystroem and IKA draws its landmarks and samples on the client from global
  row indices and gathers the rows in one compute; random binning collects the occupied
  bins chunk by chunk (:mod:`._data_fits`, :mod:`._landmarks`, :mod:`._binning`).
* ``FeatureRidge`` / ``FeatureRidgeClassifier``: per-chunk ridge statistics merged in a
  fixed binary tree, leave-one-out as a second pass (:mod:`._ridge`).
* ``NystroemKernelRidge``: FALKON with one distributed ``K_nm^T (K_nm v)`` per conjugate
  gradient iteration (:mod:`._falkon`).
"""

from ._maps import fit_feature_map
from ._rows import map_method
from ._validation import check_dask_array

__all__ = ["check_dask_array", "fit_feature_map", "map_method"]
