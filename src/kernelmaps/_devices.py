"""The devices of the streamed fits: naming one, its free memory, copies to it, waiting.

``FeatureRidge(device=...)`` and ``NystroemKernelRidge(device=...)`` stream host rows through
a device (:mod:`kernelmaps._streamed_rows`); this module turns their ``device=`` into an array
namespace and a device (:func:`resolve_device`), reads how much of its memory is free, and
copies a host block there so that the copy overlaps the work already queued
(:func:`copy_to_device`).  Each has a path for PyTorch and CuPy and a generic one.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._array_api import compat_module, to_namespace

__all__ = ["copy_to_device", "free_device_memory", "resolve_device", "synchronize"]


def _installed(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def resolve_device(device: Any) -> tuple[Any, Any]:
    """``(xp, device)`` of the ``device=`` parameter of the streamed fits.

    A ``torch.device`` or a string (``"cuda"``, ``"cuda:1"``, ``"mps"``, ``"cpu"``) names
    a PyTorch device (CuPy's for ``"cuda..."`` where PyTorch is not installed); a CuPy
    ``Device`` or an ``array_api_strict.Device`` names theirs.
    """
    compat = compat_module()
    module = type(device).__module__.partition(".")[0]
    if module == "cupy":
        import cupy

        return compat.array_namespace(cupy.empty(0)), device
    if module == "array_api_strict":
        import array_api_strict

        return array_api_strict, device
    if _installed("torch"):
        import torch

        if not isinstance(device, (str, torch.device)):
            raise ValueError(f"device={device!r} is not a device name or object.")
        try:
            return compat.array_namespace(torch.empty(0)), torch.device(device)
        except RuntimeError as error:
            raise ValueError(f"device={device!r} is not a PyTorch device: {error}") from error
    if isinstance(device, str) and device.startswith("cuda") and _installed("cupy"):
        import cupy

        index = int(device.partition(":")[2] or 0)
        return compat.array_namespace(cupy.empty(0)), cupy.cuda.Device(index)
    raise ValueError(
        f"device={device!r} names no device of an installed array library: install PyTorch "
        "(pip install torch) or CuPy, or leave device=None."
    )


def free_device_memory(xp: Any, device: Any) -> int | None:
    """Free bytes on ``device`` as its library reports them; None where it does not."""
    compat = compat_module()
    if compat.is_torch_namespace(xp) and getattr(device, "type", "") == "cuda":
        import torch

        return int(torch.cuda.mem_get_info(device)[0])
    if compat.is_cupy_namespace(xp):
        import cupy

        with cupy.cuda.Device(getattr(device, "id", 0)):
            return int(cupy.cuda.runtime.memGetInfo()[0])
    return None


def copy_to_device(block: np.ndarray, xp: Any, device: Any) -> Any:
    """A host block as an array of ``xp`` on ``device``, ready to use.

    On CUDA with PyTorch the copy goes through pinned memory on a stream of its own, and
    the consumer's stream waits for it, so that a copy made in a background thread
    overlaps the work queued on the device.
    """
    compat = compat_module()
    if compat.is_torch_namespace(xp) and getattr(device, "type", "") == "cuda":
        import torch

        stream = torch.cuda.Stream(device)
        with torch.cuda.stream(stream):
            pinned = torch.from_numpy(np.ascontiguousarray(block)).pin_memory()
            out = pinned.to(device, non_blocking=True)
        stream.synchronize()
        return out
    return to_namespace(block, xp, device)


def synchronize(X: Any) -> None:
    """Wait for the work queued on ``X``'s device (for timings)."""
    compat = compat_module()
    if compat.is_torch_array(X) and X.device.type == "cuda":
        import torch

        torch.cuda.synchronize(X.device)
    elif compat.is_cupy_array(X):
        import cupy

        cupy.cuda.get_current_stream().synchronize()
