"""The devices of the streamed fits: naming one, its free memory, copies to it, waiting.

``FeatureRidge(device=...)`` and ``NystroemKernelRidge(device=...)`` stream host rows through
a device (:mod:`kernelmaps._streamed_rows`); this module turns their ``device=`` into an array
namespace and a device (:func:`resolve_device`), reads how much of its memory is free, and
copies a host block there so that the copy overlaps the work already queued
(:func:`copy_to_device`, from a background thread: the stream that uses the block is named
by :func:`consumer_stream` in the thread that queues the work).  Each has a path for
PyTorch and CuPy and a generic one.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from ._array_api import compat_module, supports_float64, to_namespace

__all__ = [
    "consumer_stream",
    "copy_to_device",
    "free_device_memory",
    "resolve_device",
    "synchronize",
]

#: The side streams of the copy threads, one per thread and device.
_COPY_STREAMS = threading.local()


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
            return compat.array_namespace(torch.empty(0)), _indexed(torch.device(device))
        except (RuntimeError, AssertionError) as error:  # no such device, or no CUDA
            raise ValueError(f"device={device!r} is not a PyTorch device here: {error}") from error
    if isinstance(device, str) and device.startswith("cuda") and _installed("cupy"):
        import cupy

        index = int(device.partition(":")[2] or 0)
        return compat.array_namespace(cupy.empty(0)), cupy.cuda.Device(index)
    raise ValueError(
        f"device={device!r} names no device of an installed array library: install PyTorch "
        "(pip install torch) or CuPy, or leave device=None."
    )


def _indexed(device: Any) -> Any:
    """A ``torch.device("cuda")`` as the caller's current CUDA device (``cuda:1`` inside
    ``torch.cuda.device(1)``): a copy thread's own current device is the first one."""
    import torch

    if device.type == "cuda" and device.index is None:
        return torch.device("cuda", torch.cuda.current_device())
    return device


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


def consumer_stream(xp: Any, device: Any) -> Any:
    """The stream of the calling thread on ``device`` that will use the copied blocks
    (PyTorch on CUDA), to pass to :func:`copy_to_device` from a copy thread; None elsewhere."""
    if compat_module().is_torch_namespace(xp) and getattr(device, "type", "") == "cuda":
        import torch

        return torch.cuda.current_stream(device)
    return None


def copy_to_device(block: np.ndarray, xp: Any, device: Any, consumer: Any = None) -> Any:
    """A host block as an array of ``xp`` on ``device``, ready to use on ``consumer``.

    float64 blocks go as float32 to a device without float64 (MPS).  On CUDA with PyTorch
    the copy goes through pinned memory on the calling thread's side stream, which
    ``consumer`` (default: the calling thread's current stream, see
    :func:`consumer_stream`) waits for through an event, so that a copy made in a
    background thread overlaps the work queued on the device; the block is recorded on
    ``consumer`` (``Tensor.record_stream``) so that its memory is not reused before the
    work queued there is done.  With CuPy the copy is finished before it is returned.
    """
    if block.dtype == np.float64 and not supports_float64(xp, device):
        block = block.astype(np.float32)
    compat = compat_module()
    if compat.is_torch_namespace(xp) and getattr(device, "type", "") == "cuda":
        import torch

        consumer = consumer if consumer is not None else torch.cuda.current_stream(device)
        side = _side_stream(device)
        with torch.cuda.stream(side):
            pinned = torch.from_numpy(np.ascontiguousarray(block)).pin_memory()
            out = pinned.to(device, non_blocking=True)
            copied = torch.cuda.Event()
            copied.record(side)
        consumer.wait_event(copied)
        out.record_stream(consumer)
        return out
    if compat.is_cupy_namespace(xp):
        import cupy

        # this thread's stream on that device: done before the block is handed over
        with cupy.cuda.Device(getattr(device, "id", 0)):
            out = to_namespace(block, xp, device)
            cupy.cuda.get_current_stream().synchronize()
        return out
    return to_namespace(block, xp, device)


def _side_stream(device: Any) -> Any:
    """The copy stream of the calling thread on ``device`` (made on first use)."""
    import torch

    streams = getattr(_COPY_STREAMS, "streams", None)
    if streams is None:
        streams = _COPY_STREAMS.streams = {}
    if device not in streams:
        streams[device] = torch.cuda.Stream(device)
    return streams[device]


def synchronize(X: Any) -> None:
    """Wait for the work queued on ``X``'s device (for timings)."""
    compat = compat_module()
    if compat.is_torch_array(X) and X.device.type == "cuda":
        import torch

        torch.cuda.synchronize(X.device)
    elif compat.is_cupy_array(X):
        import cupy

        cupy.cuda.get_current_stream().synchronize()
