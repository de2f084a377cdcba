"""The namespaces and devices of the array API tests, and their assertions.

Every test of an estimator on the arrays of another library runs on

* ``array-api-strict`` on its second, fake device (``device1``), which refuses any mixing
  of devices and any function outside the standard, float64 and float32;
* PyTorch on the CPU, float64 and float32, where PyTorch is installed (the ``torch``
  marker; skipped otherwise); on the device named by ``KERNELMAPS_TEST_TORCH_DEVICE``
  where it is set (``benchmarks/gpu.py`` sets ``cuda``), the streamed fits too.

Each compares the estimator's result with the NumPy path's on the same data: the random
quantities are drawn on the host with the same generator, so the two differ by rounding
only, and the tolerances below are the rounding of the computation, ``c eps`` times the
magnitude of what is compared (``c`` a count of operations, stated where used).
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import array_api_compat
import numpy as np
import pytest
import sklearn

from kernelmaps._array_api import device_of, namespace_of, same_device, to_numpy

HAS_TORCH = importlib.util.find_spec("torch") is not None

#: The environment variable naming the PyTorch device of the tests (default ``cpu``).
TORCH_DEVICE_ENV = "KERNELMAPS_TEST_TORCH_DEVICE"


def torch_test_device() -> Any:
    """The ``torch.device`` of the torch tests: ``$KERNELMAPS_TEST_TORCH_DEVICE`` (default
    ``cpu``), a CUDA device without its index resolved to the current one (``cuda:0``),
    as the tensors made there report it."""
    import torch

    device = torch.device(os.environ.get(TORCH_DEVICE_ENV, "cpu"))
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    return device


@dataclass(frozen=True)
class Place:
    """A namespace, a device and a float dtype of the array API tests."""

    library: str
    dtype: str

    @property
    def xp(self) -> Any:
        if self.library == "torch":
            import array_api_compat.torch as xp

            return xp
        import array_api_strict

        return array_api_strict

    @property
    def device(self) -> Any:
        if self.library == "torch":
            return torch_test_device()
        import array_api_strict

        return array_api_strict.Device("device1")

    @property
    def eps(self) -> float:
        return float(np.finfo(self.dtype).eps)

    def asarray(self, a: Any, dtype: Any = None) -> Any:
        """``a`` (NumPy) as an array of this place, in its dtype for floats."""
        a = np.asarray(a)
        if dtype is None and a.dtype.kind == "f":
            dtype = self.dtype
        if dtype is not None:
            a = a.astype(dtype)
        return self.xp.asarray(a, device=self.device)

    def __str__(self) -> str:
        return f"{self.library}-{self.dtype}"


PLACES = [
    pytest.param(Place("array_api_strict", "float64"), id="strict-float64"),
    pytest.param(Place("array_api_strict", "float32"), id="strict-float32"),
    pytest.param(
        Place("torch", "float64"),
        id="torch-float64",
        marks=[pytest.mark.torch, pytest.mark.skipif(not HAS_TORCH, reason="needs torch")],
    ),
    pytest.param(
        Place("torch", "float32"),
        id="torch-float32",
        marks=[pytest.mark.torch, pytest.mark.skipif(not HAS_TORCH, reason="needs torch")],
    ),
]


@contextmanager
def dispatch() -> Iterator[None]:
    """scikit-learn's ``array_api_dispatch`` on, for the block."""
    with sklearn.config_context(array_api_dispatch=True):
        yield


def assert_at(result: Any, place: Place) -> None:
    """``result`` is an array of ``place``'s namespace, on its device."""
    assert namespace_of(result) is namespace_of(place.asarray(np.zeros(1))), type(result)
    # devices, not their names: "cpu:0" is "cpu", "cuda" is "cuda:0" (the current one)
    assert same_device(device_of(result), place.device), (device_of(result), place.device)


def assert_fitted_at(estimator: Any, place: Place) -> None:
    """Every fitted array of ``estimator`` (attributes ending in ``_``, in lists and
    nested estimators too) is an array of ``place``'s namespace on its device."""
    found = 0
    for name, value in vars(estimator).items():
        if not name.endswith("_") or name == "feature_names_in_":
            continue
        values = value if isinstance(value, (list, tuple)) else [value]
        for item in values:
            if isinstance(item, np.ndarray) and item.dtype.kind not in "biuf":
                continue
            if isinstance(item, np.ndarray):
                raise AssertionError(f"{name} stayed a NumPy array")
            if array_api_compat.is_array_api_obj(item) and not np.isscalar(item):
                assert_at(item, place)
                found += 1
            elif hasattr(item, "get_params") and hasattr(item, "n_features_in_"):
                assert_fitted_at(item, place)
    assert found or not any(name.endswith("_") for name in vars(estimator))


def host(a: Any) -> np.ndarray:
    """``a`` (any library's array) as a NumPy array on the host."""
    return to_numpy(a)


def assert_close(result: Any, expected: np.ndarray, atol: float, what: str = "") -> None:
    """``|result - expected| <= atol`` everywhere, ``result`` any library's array."""
    got = host(result).astype(np.float64)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    error = float(np.max(np.abs(got - expected), initial=0.0))
    assert error <= atol, f"{what}: largest difference {error:.3g} > {atol:.3g}"


def assert_refused_as_on_numpy(
    make: Any, good: np.ndarray, bad: np.ndarray, place: Place, match: str
) -> None:
    """``make()`` refuses ``bad`` rows at ``fit`` and at ``transform`` (after a fit on
    ``good``) on ``place`` with the very message of the NumPy path (``match`` in it)."""
    with pytest.raises(ValueError, match=match) as fit_numpy:
        make().fit(bad)
    with pytest.raises(ValueError) as transform_numpy:
        make().fit(good).transform(bad)
    with dispatch():
        with pytest.raises(ValueError) as fit_place:
            make().fit(place.asarray(bad))
        fitted = make().fit(place.asarray(good))
        with pytest.raises(ValueError) as transform_place:
            fitted.transform(place.asarray(bad))
    assert str(fit_place.value) == str(fit_numpy.value)
    assert str(transform_place.value) == str(transform_numpy.value)


def assert_transform_refused_as_on_numpy(
    make: Any, X: np.ndarray, place: Place, error: type[Exception], fragment: str
) -> None:
    """``make().fit(X).transform(X)`` raises ``error`` on ``place`` with the very message
    of the NumPy path (``fragment`` in it)."""
    with pytest.raises(error) as on_numpy:
        make().fit(X).transform(X)
    with dispatch():
        fitted = make().fit(place.asarray(X))
        with pytest.raises(error) as on_place:
            fitted.transform(place.asarray(X))
    assert fragment in str(on_place.value)
    assert str(on_place.value) == str(on_numpy.value)
