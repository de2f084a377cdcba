"""Explicit feature maps ``z(x)`` with ``z(x) . z(y) ~ k(x, y)``, as scikit-learn transformers."""

from ._base import BaseFeatureMap, maps_supporting, register_feature_map
from ._binning import RandomBinningFeatures
from ._chi2 import AdditiveChi2Sampler, SkewedChi2Sampler
from ._fourier import RandomFourierFeatures
from ._maclaurin import CompactRandomFeatures, RandomMaclaurinFeatures
from ._sketch import TensorSketch
from ._structured import Fastfood, StructuredOrthogonalFeatures

# Import order is registration order, the order in which messages name the maps that
# handle a kernel: the data-independent maps first, then Nyström before IKA.
# isort: split
from ._nystroem import Nystroem

# isort: split
from ._ika import IKA

__all__ = [
    "IKA",
    "AdditiveChi2Sampler",
    "BaseFeatureMap",
    "CompactRandomFeatures",
    "Fastfood",
    "Nystroem",
    "RandomBinningFeatures",
    "RandomFourierFeatures",
    "RandomMaclaurinFeatures",
    "SkewedChi2Sampler",
    "StructuredOrthogonalFeatures",
    "TensorSketch",
    "maps_supporting",
    "register_feature_map",
]
