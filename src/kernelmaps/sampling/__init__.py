"""Monte Carlo, orthogonal and quasi-Monte Carlo draws used by the feature maps."""

from ._orthogonal import orthogonal_directions
from ._qmc import QMC_METHODS, uniform_points

__all__ = ["QMC_METHODS", "orthogonal_directions", "uniform_points"]
