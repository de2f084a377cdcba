"""kernelmaps: explicit kernel feature maps for scalable kernel methods.

Feature maps ``z(x)`` with ``z(x) . z(y) ~ k(x, y)`` let linear models stand in for
kernel machines on data too large for an n x n kernel matrix.  Every map is a
scikit-learn transformer; the exact kernels live in :mod:`kernelmaps.kernels` and the
approximation error metrics in :mod:`kernelmaps.metrics`.
"""

from . import kernels
from ._config import config_context, get_config, set_config
from .feature_maps import (
    IKA,
    AdditiveChi2Sampler,
    CompactRandomFeatures,
    Fastfood,
    Nystroem,
    RandomBinningFeatures,
    RandomFourierFeatures,
    RandomMaclaurinFeatures,
    SkewedChi2Sampler,
    StructuredOrthogonalFeatures,
    TensorSketch,
)
from .metrics import feature_map_error, kernel_approximation_error
from .models import FeatureRidge, FeatureRidgeClassifier, KernelRidge, NystroemKernelRidge

__version__ = "0.1.0.dev0"

__all__ = [
    "IKA",
    "AdditiveChi2Sampler",
    "CompactRandomFeatures",
    "Fastfood",
    "FeatureRidge",
    "FeatureRidgeClassifier",
    "KernelRidge",
    "Nystroem",
    "NystroemKernelRidge",
    "RandomBinningFeatures",
    "RandomFourierFeatures",
    "RandomMaclaurinFeatures",
    "SkewedChi2Sampler",
    "StructuredOrthogonalFeatures",
    "TensorSketch",
    "__version__",
    "config_context",
    "feature_map_error",
    "get_config",
    "kernel_approximation_error",
    "kernels",
    "set_config",
]
