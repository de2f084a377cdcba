"""``fit`` of the feature maps that learn from the data, on a Dask array.

:func:`fit_from_data` fits :class:`~kernelmaps.feature_maps.Nystroem`,
:class:`~kernelmaps.feature_maps.IKA` and
:class:`~kernelmaps.feature_maps.RandomBinningFeatures` on a validated Dask array with
the numpy generator the numpy fit would get, and gives the map fitted on the same data
in numpy with the same seed: every fitted attribute is equal bit for bit and is a numpy
array, whatever the chunking and the scheduler.

* Nyström and IKA run their numpy fit on the shape and dtype of ``X`` and read its rows
  through a reader (:func:`~kernelmaps._dask._landmarks.dask_row_reader`): every random
  draw is made on the client from global row indices before any data is read (the
  landmark rows, or the sample and the seed of k-means, the sample of leverage, IKA's
  sample of ``S`` rows), then the rows named are gathered in one compute and the numpy
  code finishes the fit on them (:mod:`kernelmaps._dask._landmarks`).  Unknown row-chunk
  sizes are computed first (one more compute: the row indices are global).
* With ``kernel="precomputed"`` Nyström reads the ``m`` landmark rows of the ``n x n``
  kernel matrix (``"uniform"``) in one compute; ``"leverage"`` and ``"rpcholesky"`` would
  need the whole matrix on the client and are refused.
* Random Fourier features with quasi-random frequencies turned onto the principal axes
  of the data (``rotate``) draw the frequencies and the sample of rows of the numpy fit,
  then read those rows (every row up to 10 000 rows) in one compute; without the
  rotation nothing is read.
* Random binning draws its grids from the width alone, then collects the occupied bins
  chunk by chunk in parallel and merges them (:mod:`kernelmaps._dask._binning`).

Only the rows read are checked for NaN and infinity here (every row, for random
binning); the others are checked by ``transform``, chunk by chunk, with the same
messages.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._landmarks import dask_row_reader, with_known_rows
from ._validation import zero_rows

__all__ = ["fit_from_data"]

#: Frames from the data-dependent fit to the user's call of ``fit``: ``_fit_nystroem``,
#: ``_fit_ika`` or ``_fit_fourier``, :func:`fit_from_data`, ``fit_feature_map``, ``fit``,
#: the user.
_USER_FRAME = 5


def _fit_nystroem(estimator: Any, X: Any, rng: np.random.Generator) -> None:
    name = type(estimator).__name__
    X = with_known_rows(X)
    if estimator._precomputed:
        estimator._check_precomputed(X.shape)
        if estimator.landmarks in ("leverage", "rpcholesky"):
            raise ValueError(
                f"{name}(kernel='precomputed', landmarks={estimator.landmarks!r}) looks the "
                "kernel up in the whole n x n matrix, in memory; on a Dask array use "
                "landmarks='uniform'."
            )
    estimator._fit_from_rows(
        int(X.shape[0]),
        int(X.shape[1]),
        X.dtype,
        dask_row_reader(X, name),
        rng,
        stacklevel=_USER_FRAME,
    )


def _fit_ika(estimator: Any, X: Any, rng: np.random.Generator) -> None:
    X = with_known_rows(X)
    estimator._fit_from_rows(
        int(X.shape[0]),
        int(X.shape[1]),
        X.dtype,
        dask_row_reader(X, type(estimator).__name__),
        rng,
        stacklevel=_USER_FRAME,
    )


def _fit_fourier(estimator: Any, X: Any, rng: np.random.Generator) -> None:
    def sample(rng: np.random.Generator) -> Any:
        from ..sampling import rotation_sample

        known = with_known_rows(X)
        rows = rotation_sample(int(known.shape[0]), rng)
        return dask_row_reader(known, type(estimator).__name__)([rows])[0]

    estimator._fit_reading(zero_rows(X), sample, rng, stacklevel=_USER_FRAME)


def _fit_binning(estimator: Any, X: Any, rng: np.random.Generator) -> None:
    from ._binning import occupied_bin_keys

    estimator._draw_grids(int(X.shape[1]), rng)
    keys = occupied_bin_keys(estimator, X)
    if not any(len(k) for k in keys):
        raise ValueError(
            f"Found array with 0 sample(s) (shape={X.shape}) while a minimum of 1 is "
            f"required by {type(estimator).__name__}."
        )
    estimator._set_bins(keys)


def fit_from_data(estimator: Any, X: Any, rng: np.random.Generator) -> None:
    """Fit the data-dependent feature map ``estimator`` on the Dask array ``X``.

    Parameters
    ----------
    estimator : Nystroem, IKA, RandomBinningFeatures or RandomFourierFeatures
        Its parameters validated and ``n_features_in_`` set.
    X : dask.array.Array of shape (n_samples, n_features)
        Validated (float32 or float64, columns in one chunk; dense or CSR chunks where
        the map accepts them).  Row-chunk sizes may be unknown: for Nyström and IKA they
        are then computed (:meth:`dask.array.Array.compute_chunk_sizes`, one more
        compute, a pass over ``X``).
    rng : numpy.random.Generator
        The generator the numpy fit would get (from ``random_state``).

    Notes
    -----
    Computes: Nyström and IKA read ``X`` in one compute (the landmark rows, at most
    ``landmark_sample_size(m)`` rows for k-means and leverage, and IKA's sample);
    random binning runs one task per chunk and a merge tree, in one compute.
    """
    from ..feature_maps import IKA, Nystroem, RandomBinningFeatures, RandomFourierFeatures

    if isinstance(estimator, RandomFourierFeatures):
        _fit_fourier(estimator, X, rng)
    elif isinstance(estimator, RandomBinningFeatures):
        _fit_binning(estimator, X, rng)
    elif isinstance(estimator, Nystroem):
        _fit_nystroem(estimator, X, rng)
    elif isinstance(estimator, IKA):
        _fit_ika(estimator, X, rng)
    else:
        raise TypeError(f"{type(estimator).__name__} has no fit from the data of a Dask array.")
