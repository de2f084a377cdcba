"""Exact kernels and what the feature maps need from them.

Kernels are frozen dataclasses: ``Gaussian(gamma=0.1)(X, Y)`` is the kernel matrix.  The
estimators of kernelmaps take a kernel either by name with its parameters as keyword
arguments (``kernel="rbf", gamma=0.1``) or as one of these objects;
:func:`kernel_parameter_constraints` and :func:`resolve_estimator_kernel` are the one path
from those arguments to a kernel.
"""

from ._argument import (
    CallableKernel,
    PairCallableKernel,
    check_data_gamma,
    check_kernel_matrix,
    kernel_from_params,
    kernel_parameter_constraints,
    refuse_named_with_precomputed,
    resolve_estimator_kernel,
    scale_gamma,
)
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
from ._chi2 import (
    AdditiveChi2,
    ExponentiatedChi2,
    HistogramIntersection,
    SkewedChi2,
)
from ._dot_product import (
    DotProductKernel,
    ExponentialDotProduct,
    HomogeneousPolynomial,
    MaclaurinKernel,
    Polynomial,
    raw_squared_row_norms,
    squared_row_norms,
)
from ._landmark_block import LandmarkKernel
from ._pairwise import Cosine, Linear, NegativeChi2, Sigmoid
from ._shift_invariant import Cauchy, Gaussian, Laplacian, Matern

__all__ = [
    "AdditiveChi2",
    "BinnableKernel",
    "CallableKernel",
    "Cauchy",
    "Cosine",
    "DotProductKernel",
    "ExponentialDotProduct",
    "ExponentiatedChi2",
    "Gaussian",
    "HistogramIntersection",
    "HomogeneousPolynomial",
    "Kernel",
    "LandmarkKernel",
    "Laplacian",
    "Linear",
    "MaclaurinKernel",
    "Matern",
    "NegativeChi2",
    "PairCallableKernel",
    "Polynomial",
    "ShiftInvariantKernel",
    "Sigmoid",
    "SkewedChi2",
    "check_data_gamma",
    "check_kernel_matrix",
    "get_kernel_class",
    "kernel_from_params",
    "kernel_names",
    "kernel_parameter_constraints",
    "make_kernel",
    "raw_squared_row_norms",
    "refuse_named_with_precomputed",
    "register_kernel",
    "resolve_estimator_kernel",
    "resolve_kernel",
    "scale_gamma",
    "squared_row_norms",
]
