"""Checks of the arguments of the public sampling functions.

The estimators call :mod:`kernelmaps.sampling` with validated data and parameters; these
checks give a direct caller the same one-line errors (a count that is not a positive
int, a random source that is not a :class:`numpy.random.Generator`, rows that are not a
2D numeric array) instead of an exception from deep inside numpy or scipy.  Each check
is ``O(1)`` or a dtype conversion that the computation would make anyway: the values'
finiteness is checked on the rows the landmarks are actually drawn from.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._array_api import accumulator_dtype, get_namespace, host_dtype, is_numpy

__all__ = [
    "check_count",
    "check_generator",
    "check_kernel",
    "check_rows",
    "check_sampler_arguments",
]


def check_count(value: Any, name: str, minimum: int = 1) -> int:
    """``value`` as an int ``>= minimum``, or a clear error (bools are refused).

    Examples
    --------
    >>> from kernelmaps.sampling._arguments import check_count
    >>> check_count(3, "n_points")
    3
    >>> check_count(0, "n_points")
    Traceback (most recent call last):
    ...
    ValueError: n_points must be an int >= 1; got 0.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(
            f"{name} must be an int >= {minimum}; got {value!r} of type {type(value).__name__}."
        )
    if value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}; got {value!r}.")
    return int(value)


def check_generator(rng: Any, *, optional: bool = False) -> Any:
    """``rng`` itself when it is a :class:`numpy.random.Generator` (or None when
    ``optional``), else a clear error naming the fix.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.sampling._arguments import check_generator
    >>> check_generator(np.random.RandomState(0))
    Traceback (most recent call last):
    ...
    TypeError: rng must be a numpy.random.Generator, e.g. np.random.default_rng(0); got ...
    """
    if isinstance(rng, np.random.Generator) or (optional and rng is None):
        return rng
    allowed = " or None" if optional else ""
    raise TypeError(
        f"rng must be a numpy.random.Generator, e.g. np.random.default_rng(0){allowed}; "
        f"got {rng!r} of type {type(rng).__name__}."
    )


def check_kernel(kernel: Any) -> Any:
    """``kernel`` when callable as ``kernel(A, B)``, else a clear error."""
    if not callable(kernel):
        raise TypeError(
            "kernel must be callable as kernel(A, B) -> kernel matrix (e.g. a "
            f"kernelmaps.kernels.Kernel); got {kernel!r} of type {type(kernel).__name__}."
        )
    return kernel


def check_rows(X: Any, name: str = "X") -> Any:
    """``X`` as rows that can be indexed: a 2D numeric array (float32 and float64 kept,
    other numbers as float64, or float32 on a device without float64), or a CSR/CSC
    matrix, with at least one row and column.  An array of another library stays one.

    Examples
    --------
    >>> from kernelmaps.sampling._arguments import check_rows
    >>> check_rows([[1, 2], [3, 4]]).dtype
    dtype('float64')
    >>> check_rows([1.0, 2.0])
    Traceback (most recent call last):
    ...
    ValueError: Expected a 2D array of rows (n_samples, n_features), got shape (2,); ...
    """
    xp, device = get_namespace(X)
    if sp.issparse(X):
        X = X if X.format in ("csr", "csc") else X.tocsr()
    else:
        X = np.asarray(X) if is_numpy(xp) else X
        if X.ndim != 2:
            raise ValueError(
                f"Expected a 2D array of rows (n_samples, n_features), got shape "
                f"{tuple(X.shape)}; reshape your data, e.g. with array.reshape(-1, 1) for a "
                "single feature."
            )
    dtype = host_dtype(X.dtype)
    if dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
        if dtype.kind not in "biuf" and dtype != np.dtype(object):
            raise ValueError(f"{name} must hold numbers; got an array of dtype {dtype}.")
        try:
            host = is_numpy(xp)
            X = X.astype(np.float64) if host else xp.astype(X, accumulator_dtype(xp, device))
        except (TypeError, ValueError):
            raise ValueError(
                f"{name} must hold numbers; its values of dtype {dtype} do not convert to float64."
            ) from None
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(
            f"{name} has shape {tuple(X.shape)}; at least one row and one column are needed."
        )
    return X


def check_sampler_arguments(X: Any, n_landmarks: Any, kernel: Any, rng: Any) -> tuple[Any, int]:
    """The checked ``(X, n_landmarks)`` of a kernel-based landmark sampler.

    ``X`` by :func:`check_rows`, ``n_landmarks`` by :func:`check_count`, ``kernel`` by
    :func:`check_kernel` and ``rng`` by :func:`check_generator`, in that order.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import Gaussian
    >>> from kernelmaps.sampling._arguments import check_sampler_arguments
    >>> X, m = check_sampler_arguments([[0, 1]], 3, Gaussian(), np.random.default_rng(0))
    >>> X.dtype, m
    (dtype('float64'), 3)
    """
    X = check_rows(X)
    m = check_count(n_landmarks, "n_landmarks")
    check_kernel(kernel)
    check_generator(rng)
    return X, m
