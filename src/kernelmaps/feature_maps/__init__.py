"""Explicit feature maps ``z(x)`` with ``z(x) . z(y) ~ k(x, y)``, as scikit-learn transformers."""

from ._base import BaseFeatureMap, maps_supporting, row_blocks
from ._binning import RandomBinningFeatures
from ._fourier import RandomFourierFeatures

__all__ = [
    "BaseFeatureMap",
    "RandomBinningFeatures",
    "RandomFourierFeatures",
    "maps_supporting",
    "row_blocks",
]
