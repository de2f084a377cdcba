"""Exact kernels and what the feature maps need from them.

Kernels are frozen dataclasses: ``Gaussian(gamma=0.1)(X, Y)`` is the kernel matrix.  The
estimators of kernelmaps take a kernel either by name with its parameters as keyword
arguments (``kernel="rbf", gamma=0.1``) or as one of these objects.
"""

from ._base import (
    BinnableKernel,
    Kernel,
    ShiftInvariantKernel,
    get_kernel_class,
    kernel_names,
    make_kernel,
    register_kernel,
    resolve_kernel,
)
from ._shift_invariant import Cauchy, Gaussian, Laplacian, Matern

__all__ = [
    "BinnableKernel",
    "Cauchy",
    "Gaussian",
    "Kernel",
    "Laplacian",
    "Matern",
    "ShiftInvariantKernel",
    "get_kernel_class",
    "kernel_names",
    "make_kernel",
    "register_kernel",
    "resolve_kernel",
]
