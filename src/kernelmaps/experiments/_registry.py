"""Registry of named methods: a name -> a factory building a feature map.

A method is a feature map with fixed settings (``"rff-sobol"`` is random Fourier features
with scrambled Sobol' frequencies).  Its factory takes the number of output features, the
kernel parameters and a random state, and returns an unfitted estimator.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from ..feature_maps import RandomBinningFeatures, RandomFourierFeatures

__all__ = ["MethodSpec", "get_method", "method_names", "register_method"]


@dataclasses.dataclass(frozen=True)
class MethodSpec:
    """A registered method.

    Attributes
    ----------
    name : str
        Registry key.
    kernel : str
        Name of the kernel the method approximates in comparisons.
    factory : callable
        ``factory(n_components, kernel_params, random_state) -> estimator``.
    description : str
        One line for tables and ``--help``.
    """

    name: str
    kernel: str
    factory: Callable[[int, dict[str, Any], Any], Any]
    description: str


_METHODS: dict[str, MethodSpec] = {}


def register_method(spec: MethodSpec) -> MethodSpec:
    """Add ``spec`` to the registry (names are unique)."""
    if spec.name in _METHODS:
        raise ValueError(f"method {spec.name!r} is already registered.")
    _METHODS[spec.name] = spec
    return spec


def get_method(name: str) -> MethodSpec:
    """The method registered as ``name``."""
    try:
        return _METHODS[name]
    except KeyError:
        raise ValueError(
            f"Unknown method {name!r}. Known methods: {', '.join(method_names())}."
        ) from None


def method_names() -> list[str]:
    """Names of the registered methods, in registration order."""
    return list(_METHODS)


def _rff(variant: str, sampler: str) -> Callable[[int, dict[str, Any], Any], Any]:
    def factory(n_components: int, kernel_params: dict[str, Any], random_state: Any) -> Any:
        return RandomFourierFeatures(
            "rbf",
            kernel_params=dict(kernel_params),
            n_components=n_components,
            variant=variant,
            sampler=sampler,
            random_state=random_state,
        )

    return factory


for _sampler, _label in [
    ("mc", "Monte Carlo"),
    ("orthogonal", "orthogonal"),
    ("halton", "scrambled Halton"),
    ("sobol", "scrambled Sobol'"),
]:
    register_method(
        MethodSpec(
            f"rff-{_sampler}",
            "rbf",
            _rff("cos_sin", _sampler),
            f"random Fourier features, cos/sin pairs, {_label} frequencies",
        )
    )
register_method(
    MethodSpec(
        "rff-cos-phase",
        "rbf",
        _rff("cos_phase", "mc"),
        "random Fourier features, cos + random phase (Rahimi & Recht)",
    )
)


def _binning(n_components: int, kernel_params: dict[str, Any], random_state: Any) -> Any:
    # The output width of random binning depends on the data; each row holds one non-zero
    # per grid, so n_grids = n_components gives the same cost per dot product as a dense
    # map of n_components features.
    return RandomBinningFeatures(
        "laplacian",
        kernel_params=dict(kernel_params),
        n_grids=n_components,
        random_state=random_state,
    )


register_method(
    MethodSpec(
        "binning",
        "laplacian",
        _binning,
        "random binning on the Laplacian kernel, n_grids = n_components",
    )
)
