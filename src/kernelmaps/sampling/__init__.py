"""Monte Carlo, orthogonal and quasi-Monte Carlo draws, and landmark selection.

* :func:`uniform_points`, :func:`orthogonal_directions` -- the draws of the random maps;
  :func:`principal_axes` (with :func:`rotation_sample`) -- the rotation that turns
  rotation-invariant quasi-Monte Carlo frequencies onto the data's principal axes.
* :func:`draw_landmarks` and :func:`finish_landmarks` -- the two steps of a landmark
  selection: the random draws (from the shape alone), then the work on the rows they name,
  read by the caller in one pass.
* :func:`resolve_landmarks` -- the landmarks of Nyström, IKA and NystroemKernelRidge, from
  their ``landmarks`` parameter; :func:`select_landmarks` draws them uniformly, by k-means,
  by recursive ridge leverage scores or by randomly pivoted Cholesky (:func:`rpcholesky`).
  Above :func:`landmark_sample_size` rows, k-means, leverage and rpcholesky run on a uniform
  sample of that many rows (the same rows for numpy and Dask input).
* :func:`kernel_block`, :func:`kernel_diagonal`, :func:`rpcholesky` and
  :func:`rpcholesky_indices` take rows of any array library (PyTorch, CuPy, ...): arrays of
  another library give arrays of theirs, on their device (in :func:`work_dtype`).
"""

from ._kernel_blocks import kernel_block, kernel_diagonal, work_dtype
from ._kmeans import KMEANS_MINIBATCH_THRESHOLD
from ._landmark_finish import finish_landmarks
from ._landmarks import (
    KERNEL_FREE_LANDMARK_METHODS,
    LANDMARK_METHODS,
    LANDMARK_SAMPLE_SIZE,
    PREDRAWN_LANDMARK_METHODS,
    LandmarkDraw,
    draw_landmarks,
    kernel_free_landmarks,
    landmark_sample_size,
    resolve_landmarks,
    select_landmarks,
)
from ._leverage import recursive_rls_indices
from ._orthogonal import orthogonal_directions
from ._qmc import (
    QMC_METHODS,
    SCRAMBLE_OPTIONS,
    draw_uniform_points,
    resolve_scramble,
    sobol_balance_message,
    uniform_points,
)
from ._rotation import ROTATION_SAMPLE_SIZE, principal_axes, rotation_sample
from ._rpcholesky import (
    RPCHOLESKY_BLOCK_SIZE,
    RPCholeskyResult,
    rpcholesky,
    rpcholesky_indices,
)

__all__ = [
    "KERNEL_FREE_LANDMARK_METHODS",
    "KMEANS_MINIBATCH_THRESHOLD",
    "LANDMARK_METHODS",
    "LANDMARK_SAMPLE_SIZE",
    "PREDRAWN_LANDMARK_METHODS",
    "QMC_METHODS",
    "ROTATION_SAMPLE_SIZE",
    "RPCHOLESKY_BLOCK_SIZE",
    "SCRAMBLE_OPTIONS",
    "LandmarkDraw",
    "RPCholeskyResult",
    "draw_landmarks",
    "draw_uniform_points",
    "finish_landmarks",
    "kernel_block",
    "kernel_diagonal",
    "kernel_free_landmarks",
    "landmark_sample_size",
    "orthogonal_directions",
    "principal_axes",
    "recursive_rls_indices",
    "resolve_landmarks",
    "resolve_scramble",
    "rotation_sample",
    "rpcholesky",
    "rpcholesky_indices",
    "select_landmarks",
    "sobol_balance_message",
    "uniform_points",
    "work_dtype",
]
