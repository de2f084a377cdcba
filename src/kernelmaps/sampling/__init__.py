"""Monte Carlo, orthogonal and quasi-Monte Carlo draws, and landmark selection.

* :func:`uniform_points`, :func:`orthogonal_directions` -- the draws of the random maps;
  :func:`principal_axes` (with :func:`rotation_sample`) -- the rotation that turns
  rotation-invariant quasi-Monte Carlo frequencies onto the data's principal axes.
* :func:`resolve_landmarks` -- the landmarks of Nyström, IKA and NystroemKernelRidge, from
  their ``landmarks`` parameter; :func:`select_landmarks` draws them uniformly, by k-means
  or by recursive ridge leverage scores.  Above :func:`landmark_sample_size` rows, k-means
  and leverage run on a uniform sample of that many rows (the same rows for numpy and Dask
  input).
"""

from ._landmarks import (
    KMEANS_MINIBATCH_THRESHOLD,
    LANDMARK_METHODS,
    LANDMARK_SAMPLE_SIZE,
    kernel_diagonal,
    landmark_sample_size,
    recursive_rls_indices,
    resolve_landmarks,
    select_landmarks,
)
from ._orthogonal import orthogonal_directions
from ._qmc import (
    QMC_METHODS,
    SCRAMBLE_OPTIONS,
    resolve_scramble,
    sobol_balance_message,
    uniform_points,
)
from ._rotation import ROTATION_SAMPLE_SIZE, principal_axes, rotation_sample

__all__ = [
    "KMEANS_MINIBATCH_THRESHOLD",
    "LANDMARK_METHODS",
    "LANDMARK_SAMPLE_SIZE",
    "QMC_METHODS",
    "ROTATION_SAMPLE_SIZE",
    "SCRAMBLE_OPTIONS",
    "kernel_diagonal",
    "landmark_sample_size",
    "orthogonal_directions",
    "principal_axes",
    "recursive_rls_indices",
    "resolve_landmarks",
    "resolve_scramble",
    "rotation_sample",
    "select_landmarks",
    "sobol_balance_message",
    "uniform_points",
]
