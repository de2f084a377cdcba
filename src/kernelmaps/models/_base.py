"""Helpers shared by the models: kernel arguments, validation and row-block prediction."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import DataConversionWarning
from sklearn.utils.validation import _check_y, validate_data

from .._array_api import (
    check_place,
    float_dtypes,
    get_namespace,
    is_foreign,
    is_numpy,
    to_namespace,
    to_numpy,
)
from .._array_types import is_dask_array
from .._rows import Rows, validated_rows
from .._validation import one_line_errors
from ..exceptions import NonFiniteOutputError
from ..kernels import Kernel, check_kernel_matrix

__all__ = [
    "FLOAT_DTYPES",
    "KernelRegressorMixin",
    "as_row_sliceable",
    "check_finite_block",
    "classification_rows",
    "kernel_matrix",
    "predict_in_blocks",
    "regression_rows",
    "validate_model_data",
    "validate_regression_data",
]

FLOAT_DTYPES = (np.float64, np.float32)

KernelLike = str | Kernel | Callable[..., Any]


class KernelRegressorMixin:
    """Estimator tags of the regressors evaluating a kernel (``self.kernel``): several
    targets, sparse input unless the kernel is a user callable (which may not take it),
    and arrays of other libraries (array API dispatch).
    """

    kernel: KernelLike

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()  # type: ignore[misc]  # a mixin before BaseEstimator
        tags.input_tags.sparse = isinstance(self.kernel, (str, Kernel))
        tags.target_tags.multi_output = True
        tags.array_api_support = True
        return tags


def validate_regression_data(estimator: Any, X: Any, y: Any, *, reset: bool = True) -> Any:
    """``(X, y)`` checked as the regressors need them: ``X`` dense, CSR or CSC in float64
    or float32, ``y`` numeric with one or several targets (scikit-learn's messages); sparse
    ``X`` is returned as row-sliceable CSR (:func:`as_row_sliceable`).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import FeatureRidge
    >>> from kernelmaps.models._base import validate_regression_data
    >>> X, y = validate_regression_data(FeatureRidge(), [[1, 2], [3, 4]], [1, 2])
    >>> X.dtype, y.shape
    (dtype('float64'), (2,))
    """
    X, y = validate_model_data(
        estimator,
        X,
        y,
        accept_sparse=("csr", "csc"),
        dtype=float_dtypes(X),
        multi_output=True,
        y_numeric=True,
        reset=reset,
    )
    return as_row_sliceable(X), y


def _fit_rows(
    estimator: Any, X: Any, y: Any, reset: bool, validate: Callable[[Any, Any], Any]
) -> tuple[Rows, Any]:
    """The rows of ``X`` and ``y``: ``validate(X, y)`` in memory; for a Dask ``X`` its
    metadata, and ``y`` as given (checked by the caller).  For an array of another
    library (array API dispatch), ``y`` is moved to its namespace and device first
    (everything follows ``X``), unless it holds labels that are not numbers (strings),
    which stay NumPy."""
    checked: dict[str, Any] = {}
    if is_foreign(X) and y is not None and not isinstance(y, str):
        y = y if hasattr(y, "shape") else np.asarray(y)
        if not (isinstance(y, np.ndarray) and y.dtype.kind not in "biuf"):  # labels stay
            y = to_namespace(y, *get_namespace(X))

    def validate_both(X: Any) -> Any:
        X, checked["y"] = validate(X, y)
        return as_row_sliceable(X)

    rows = validated_rows(estimator, X, reset=reset, validate=validate_both)
    return rows, checked.get("y", y)


def _check_lazy_y(estimator: Any, y: Any) -> None:
    """The metadata of targets held elsewhere (a Dask array): their values are checked
    part by part where they are read."""
    if y.ndim not in (1, 2):
        raise ValueError(
            f"Found array with dim {y.ndim}, while dim <= 2 is required by "
            f"{type(estimator).__name__}."
        )
    if y.ndim == 2 and math.isnan(y.shape[1]):
        raise ValueError(
            "The number of targets (columns of y) is unknown; give y's chunks explicitly."
        )
    if y.dtype.kind not in "biuf":
        raise ValueError(
            f"y must be numeric; this array has dtype {y.dtype}. Convert it with y.astype(float)."
        )


def regression_rows(estimator: Any, X: Any, y: Any, *, reset: bool = True) -> tuple[Rows, Any]:
    """The training rows of a regressor (``kernelmaps._rows.Rows``) and its targets
    ``y``, 1-D or 2-D, checked with scikit-learn's messages.

    In memory: :func:`validate_regression_data`.  For a Dask ``X``: its metadata; a Dask
    ``y`` from its metadata (its values part by part, where they are read), an in-memory
    ``y`` by scikit-learn's checks.  ``y`` is then aligned on the rows by the caller
    (:meth:`Rows.align <kernelmaps._rows.Rows.align>`, which checks its length).
    """
    rows, y = _fit_rows(
        estimator,
        X,
        y,
        reset,
        lambda X, y: validate_regression_data(estimator, X, y, reset=reset),
    )
    if rows.in_memory:
        return rows, y if not is_numpy(get_namespace(y)[0]) else np.asarray(y)
    if is_dask_array(y):
        _check_lazy_y(estimator, y)
        return rows, y
    with one_line_errors(type(estimator).__name__):
        y = _check_y(y, multi_output=True, y_numeric=True, estimator=estimator)
    return rows, np.asarray(y)


def classification_rows(estimator: Any, X: Any, y: Any, *, reset: bool = True) -> tuple[Rows, Any]:
    """The training rows of a classifier and its labels ``y`` (1-D: a column vector is
    raveled with scikit-learn's warning), as :func:`regression_rows` checks them."""
    rows, y = _fit_rows(
        estimator,
        X,
        y,
        reset,
        lambda X, y: validate_model_data(
            estimator, X, y, accept_sparse=("csr", "csc"), dtype=float_dtypes(X), reset=reset
        ),
    )
    if rows.in_memory:
        return rows, y
    if not is_dask_array(y):
        return rows, np.asarray(_check_y(y, multi_output=False, estimator=estimator))
    if y.ndim == 2 and y.shape[1] == 1:
        warnings.warn(
            "A column-vector y was passed when a 1d array was expected. Please change "
            "the shape of y to (n_samples, ), for example using ravel().",
            DataConversionWarning,
            stacklevel=3,
        )
        y = y[:, 0]
    elif y.ndim != 1:
        raise ValueError(f"y should be a 1d array, got an array of shape {y.shape} instead.")
    return rows, y


def validate_model_data(estimator: Any, *args: Any, **kwargs: Any) -> Any:
    """scikit-learn's ``validate_data`` with its multi-line messages (NaN input, 1D
    input) re-raised as one line naming the estimator and the fix
    (:func:`~kernelmaps.kernels.one_line_errors`).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import FeatureRidge
    >>> from kernelmaps.models._base import validate_model_data
    >>> validate_model_data(FeatureRidge(), np.array([[np.nan]]))
    Traceback (most recent call last):
    ...
    ValueError: Input X contains NaN: FeatureRidge does not accept missing values; ...
    """
    with one_line_errors(type(estimator).__name__):
        return validate_data(estimator, *args, **kwargs)


def kernel_matrix(kernel: Callable[..., Any], X: Any, Y: Any) -> np.ndarray:
    """``kernel(X, Y)`` as a dense float64 array, with its shape checked."""
    return check_kernel_matrix(kernel(X, Y), X.shape[0], Y.shape[0])


def as_row_sliceable(X: Any) -> Any:
    """CSR for sparse input (row blocks slice cheaply), with 32-bit indices when they fit.

    Some of scikit-learn's pairwise routines (Manhattan distances) accept only 32-bit
    sparse indices; the values are unchanged.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from kernelmaps.models._base import as_row_sliceable
    >>> X = as_row_sliceable(sp.csc_matrix([[1.0, 0.0], [0.0, 2.0]]))
    >>> X.format, X.indices.dtype
    ('csr', dtype('int32'))
    """
    if not sp.issparse(X):
        return X
    X = X.tocsr()
    if X.indices.dtype != np.int32 and X.nnz < np.iinfo(np.int32).max:
        X = sp.csr_matrix(
            (X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32)), shape=X.shape
        )
    return X


def predict_in_blocks(
    estimator: Any,
    X: Any,
    out_shape: tuple[int, ...],
    block_rows: Callable[[Any], Iterable[slice]],
    predictor: Callable[[Any], Callable[[Any], np.ndarray]],
) -> np.ndarray:
    """The predictions of a fitted regressor on ``X``, block by block of rows.

    The caller has checked that ``estimator`` is fitted.  ``X`` is validated once (dense,
    CSR or CSC, float32 or float64, as many columns as in ``fit``) and made row-sliceable;
    ``predictor(X)``, prepared once for the whole call, maps each block ``X[rows]`` to its
    rows of the output, of shape ``(n_samples, *out_shape)`` in the dtype of the validated
    ``X`` (float32 stays float32).

    The blocks are computed where ``X`` is (an array of another library: in its namespace,
    on its device, in its dtype).  The output is checked to be finite once, whatever the
    library (a cheap check of the small output): a row whose prediction overflowed raises
    :class:`~kernelmaps.exceptions.NonFiniteOutputError` naming it (the first five), instead
    of NaN or inf in the result.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import FeatureRidge
    >>> from kernelmaps.models._base import predict_in_blocks
    >>> model = FeatureRidge("passthrough").fit(np.eye(3), [1.0, 2.0, 3.0])
    >>> blocks = lambda X: [slice(0, 1), slice(1, X.shape[0])]
    >>> predict_in_blocks(model, np.eye(3), (), blocks, lambda X: lambda Xb: Xb.sum(axis=1))
    array([1., 1., 1.])
    """
    check_place(estimator, X, "predict")
    X = validate_model_data(
        estimator, X, accept_sparse=("csr", "csc"), dtype=float_dtypes(X), reset=False
    )
    X = as_row_sliceable(X)
    xp, device = get_namespace(X)
    out = xp.empty((X.shape[0], *out_shape), dtype=X.dtype, device=device)
    predict_block = predictor(X)
    for rows in block_rows(X):
        with np.errstate(over="ignore", invalid="ignore"):  # checked below, once
            out[rows, ...] = predict_block(X[rows, ...])
    if not bool(xp.all(xp.isfinite(out))):
        check_finite_block(estimator, to_numpy(out), 0)
    return out


def check_finite_block(estimator: Any, block: np.ndarray, start: int) -> None:
    """Raise :class:`~kernelmaps.exceptions.NonFiniteOutputError` if a row of predictions
    ``block`` (rows ``start, start + 1, ...`` of the input) is not finite.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import KernelRidge
    >>> from kernelmaps.models._base import check_finite_block
    >>> check_finite_block(KernelRidge(), np.array([1.0, np.inf]), 10)
    Traceback (most recent call last):
    ...
    kernelmaps.exceptions.NonFiniteOutputError: KernelRidge: the prediction for row 11 ...
    """
    finite = np.isfinite(block)
    if finite.all():
        return
    bad = np.flatnonzero(~finite.reshape(block.shape[0], -1).all(axis=1))
    rows = ", ".join(str(start + int(i)) for i in bad[:5]) + (", ..." if bad.size > 5 else "")
    which = f"row {rows}" if bad.size == 1 else f"rows {rows}"
    float32 = " or give float64 input" if block.dtype == np.float32 else ""
    raise NonFiniteOutputError(
        f"{type(estimator).__name__}: the prediction for {which} is not finite (it "
        f"overflowed {block.dtype}: the row holds values far outside the scale of the "
        f"training data); rescale the rows as the training data was{float32}, or drop them."
    )
