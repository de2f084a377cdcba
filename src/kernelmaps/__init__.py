"""kernelmaps: explicit kernel feature maps for scalable kernel methods.

Feature maps ``z(x)`` with ``z(x) . z(y) ~ k(x, y)`` let linear models stand in for
kernel machines on data too large for an n x n kernel matrix.  Every map is a
scikit-learn transformer; the exact kernels live in :mod:`kernelmaps.kernels` and the
approximation error metrics in :mod:`kernelmaps.metrics`.
"""

from typing import TYPE_CHECKING, Any

from ._config import config_context, get_config, set_config

if TYPE_CHECKING:
    from . import kernels
    from ._array_api import move_to
    from ._progress_bar import progress_bar
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
    from .models import (
        FeatureLogisticRegression,
        FeatureLogisticRegressionCV,
        FeatureRidge,
        FeatureRidgeClassifier,
        FeatureRidgeClassifierCV,
        FeatureRidgeCV,
        KernelRidge,
        NystroemKernelRidge,
        NystroemKernelRidgeClassifier,
        NystroemKernelRidgeCV,
        feature_budget,
    )

#: Where each public name lives; imported on first use (PEP 562), so that ``import
#: kernelmaps`` and the command line start without loading scikit-learn and scipy.
_LAZY = {
    "kernels": ".kernels",
    **dict.fromkeys(
        (
            "IKA",
            "AdditiveChi2Sampler",
            "CompactRandomFeatures",
            "Fastfood",
            "Nystroem",
            "RandomBinningFeatures",
            "RandomFourierFeatures",
            "RandomMaclaurinFeatures",
            "SkewedChi2Sampler",
            "StructuredOrthogonalFeatures",
            "TensorSketch",
        ),
        ".feature_maps",
    ),
    "feature_map_error": ".metrics",
    "move_to": "._array_api",
    "progress_bar": "._progress_bar",
    "kernel_approximation_error": ".metrics",
    **dict.fromkeys(
        (
            "FeatureLogisticRegression",
            "FeatureLogisticRegressionCV",
            "FeatureRidge",
            "FeatureRidgeCV",
            "FeatureRidgeClassifier",
            "FeatureRidgeClassifierCV",
            "KernelRidge",
            "NystroemKernelRidge",
            "feature_budget",
            "NystroemKernelRidgeCV",
            "NystroemKernelRidgeClassifier",
        ),
        ".models",
    ),
}


def __getattr__(name: str) -> Any:
    """The public names, imported from their modules on first use."""
    if name in _LAZY:
        import importlib

        module = importlib.import_module(_LAZY[name], __name__)
        value = module if name == "kernels" else getattr(module, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__version__ = "0.1.0.dev0"

__all__ = [
    "IKA",
    "AdditiveChi2Sampler",
    "CompactRandomFeatures",
    "Fastfood",
    "FeatureLogisticRegression",
    "FeatureLogisticRegressionCV",
    "FeatureRidge",
    "FeatureRidgeCV",
    "FeatureRidgeClassifier",
    "FeatureRidgeClassifierCV",
    "KernelRidge",
    "Nystroem",
    "NystroemKernelRidge",
    "NystroemKernelRidgeCV",
    "NystroemKernelRidgeClassifier",
    "RandomBinningFeatures",
    "RandomFourierFeatures",
    "RandomMaclaurinFeatures",
    "SkewedChi2Sampler",
    "StructuredOrthogonalFeatures",
    "TensorSketch",
    "__version__",
    "config_context",
    "feature_budget",
    "feature_map_error",
    "get_config",
    "kernel_approximation_error",
    "kernels",
    "move_to",
    "progress_bar",
    "set_config",
]
