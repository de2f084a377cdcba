"""User callables as kernels, and the resolution of an estimator's ``kernel=`` argument
when a callable is allowed (Nyström, IKA, the kernel ridge models)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import scipy.sparse as sp

from ._base import Kernel, resolve_kernel

__all__ = ["CallableKernel", "kernel_from_params"]


class CallableKernel:
    """A user callable ``k(X, Y, **params)``, checked to return a matrix of the right shape.

    Picklable whenever ``func`` is (a module-level function, not a lambda).
    """

    def __init__(self, func: Callable[..., Any], params: Mapping[str, Any] | None) -> None:
        self.func = func
        self.params = dict(params or {})

    def __call__(self, X: Any, Y: Any) -> np.ndarray:
        K = self.func(X, Y, **self.params)
        if sp.issparse(K):
            K = K.toarray()
        K = np.asarray(K, dtype=np.float64)
        if K.shape != (X.shape[0], Y.shape[0]):
            raise ValueError(
                f"The kernel callable returned an array of shape {K.shape} for inputs with "
                f"{X.shape[0]} and {Y.shape[0]} rows; it must return the "
                f"{X.shape[0]} x {Y.shape[0]} kernel matrix k(X, Y)."
            )
        return K

    def __repr__(self) -> str:
        return f"callable kernel {getattr(self.func, '__name__', self.func)!r}"


def kernel_from_params(
    owner: str,
    kernel: str | Kernel | Callable[..., Any],
    n_features: int,
    kernel_params: Mapping[str, Any] | None,
    **named: Any,
) -> Kernel | CallableKernel:
    """The kernel an estimator evaluates: a resolved :class:`Kernel` or the user's callable.

    A callable that is not a :class:`Kernel` must take two 2D arrays and return their kernel
    matrix; ``kernel_params`` are passed to it as keyword arguments, and the named
    parameters (``gamma``, ``degree``, ``coef0``) are refused with it.
    """
    if isinstance(kernel, (str, Kernel)):
        return resolve_kernel(kernel, n_features, kernel_params, **named)
    if callable(kernel):
        given = sorted(key for key, value in named.items() if value is not None)
        if given:
            raise ValueError(
                f"{owner}: {given} cannot be used with a callable kernel; pass the "
                "callable's own arguments in kernel_params instead."
            )
        return CallableKernel(kernel, kernel_params)
    raise TypeError(
        f"{owner}: kernel must be a kernel name, a kernelmaps.kernels.Kernel object or a "
        f"callable returning the kernel matrix; got {kernel!r}."
    )
