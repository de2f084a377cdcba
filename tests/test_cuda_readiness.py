"""What the first CUDA run needs, checked on the CPU where it can be.

* the tests' device is compared as a device (``cpu:0`` is ``cpu``, ``cuda`` is the
  current ``cuda:N``), not by its name;
* the TF32 check reads PyTorch's ``fp32_precision`` settings and never raises;
* the copies of streamed blocks: float64 goes as float32 to a device without float64,
  ``"cuda"`` is resolved to the caller's current device (a copy thread's is the first);
* FALKON's preconditioner holds its two factors and nothing more while it factors (in
  place), and refuses a device without the memory for them, with a one-line message.

The CUDA-only parts (the side stream, its event and ``record_stream``; CuPy's Cholesky
under ``cupyx.errstate``) run in ``benchmarks/gpu.py``'s correctness section.
"""

from __future__ import annotations

import subprocess
import sys
import tracemalloc
import warnings
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import kernelmaps._array_api as array_api
import kernelmaps._devices as devices
from kernelmaps._array_extras import DeviceLinAlgError, cholesky
from kernelmaps._devices import copy_to_device, resolve_device
from kernelmaps._memory import check_device_memory
from kernelmaps.exceptions import InsufficientMemoryError
from kernelmaps.models._falkon._solver import FalkonPreconditioner
from tests._array_api import HAS_TORCH, TORCH_DEVICE_ENV, Place, assert_at, torch_test_device

needs_torch = [pytest.mark.torch, pytest.mark.skipif(not HAS_TORCH, reason="needs torch")]


def _strict() -> Any:
    import array_api_strict

    return array_api_strict


# -- 1. the tests' device ------------------------------------------------------------------


@pytest.mark.torch
@pytest.mark.skipif(not HAS_TORCH, reason="needs torch")
def test_test_device_is_compared_as_a_device(monkeypatch: pytest.MonkeyPatch) -> None:
    """``cpu:0`` names the device tensors report as ``cpu``: the assertion holds."""
    import torch

    monkeypatch.setenv(TORCH_DEVICE_ENV, "cpu:0")
    place = Place("torch", "float64")
    assert str(place.device) == "cpu:0"
    result = place.asarray(np.ones(3))
    assert str(result.device) == "cpu"
    assert_at(result, place)
    monkeypatch.setenv(TORCH_DEVICE_ENV, "cuda")
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 1)
    assert torch_test_device() == torch.device("cuda", 1)


# -- 5. TF32 -------------------------------------------------------------------------------

_NEW_API = """
import torch
from kernelmaps._array_api import _torch_tf32
matmul = torch.backends.cuda.matmul
if not hasattr(matmul, "fp32_precision"):
    print("no new API")
    raise SystemExit
matmul.fp32_precision = "tf32"
try:
    torch.backends.cuda.matmul.allow_tf32
    print("legacy getter answered")
except RuntimeError:
    print("legacy getter refuses")
print(_torch_tf32("cuda"), _torch_tf32("cpu"))
matmul.fp32_precision = "ieee"
print(_torch_tf32("cuda"))
matmul.fp32_precision = "none"
torch.backends.fp32_precision = "tf32"
print(_torch_tf32("cuda"))
"""


@pytest.mark.torch
@pytest.mark.skipif(not HAS_TORCH, reason="needs torch")
def test_tf32_read_from_the_new_settings_without_raising() -> None:
    """TF32 enabled through ``fp32_precision`` (the legacy getters then refuse): read
    there, in a process of its own (the settings are global)."""
    run = subprocess.run(
        [sys.executable, "-c", _NEW_API], capture_output=True, text=True, check=True
    )
    lines = run.stdout.split("\n")
    if lines[0] == "no new API":
        pytest.skip("this PyTorch has only the legacy settings")
    assert lines[:4] == ["legacy getter refuses", "True False", "False", "True"], run.stdout


@pytest.mark.torch
@pytest.mark.skipif(not HAS_TORCH, reason="needs torch")
@pytest.mark.parametrize(
    ("allow_tf32", "precision", "expected"),
    [(False, "highest", False), (True, "highest", True), (False, "high", True)],
)
def test_tf32_read_from_the_legacy_settings(
    monkeypatch: pytest.MonkeyPatch, allow_tf32: bool, precision: str, expected: bool
) -> None:
    """A PyTorch without ``fp32_precision``: the legacy flag and precision decide."""
    import torch

    monkeypatch.setattr(torch.backends.cuda, "matmul", SimpleNamespace(allow_tf32=allow_tf32))
    monkeypatch.setattr(torch, "get_float32_matmul_precision", lambda: precision)
    assert array_api._torch_tf32("cuda") is expected
    assert array_api._torch_tf32("cpu") is False


@pytest.mark.torch
@pytest.mark.skipif(not HAS_TORCH, reason="needs torch")
def test_tf32_warning_once_per_product(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each product named (the phases, the kernel blocks) is warned about once; float64
    input is not."""
    import torch

    monkeypatch.setattr(array_api, "_WARNED_TF32", set())
    monkeypatch.setattr(array_api, "_torch_tf32", lambda device_type: device_type == "cpu")
    X = torch.ones(2, 2, dtype=torch.float32)
    with pytest.warns(UserWarning, match="makes the kernel blocks noise: turn it off with"):
        array_api.warn_if_tf32(X, "the kernel blocks")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        array_api.warn_if_tf32(X, "the kernel blocks")
        array_api.warn_if_tf32(X.double(), "the Gram blocks")
    with pytest.warns(UserWarning, match="makes the Gram blocks noise"):
        array_api.warn_if_tf32(X, "the Gram blocks")


# -- 7. copies to the device ---------------------------------------------------------------


def test_float64_blocks_go_as_float32_to_a_device_without_float64(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    xp = _strict()
    device = xp.Device("device1")
    assert copy_to_device(np.ones((2, 3)), xp, device).dtype == xp.float64
    monkeypatch.setattr(devices, "supports_float64", lambda xp, device: False)
    block = copy_to_device(np.ones((2, 3)), xp, device)
    assert block.dtype == xp.float32 and block.device == device
    assert copy_to_device(np.ones(3, dtype=np.int64), xp, device).dtype == xp.int64


@pytest.mark.torch
@pytest.mark.skipif(not HAS_TORCH, reason="needs torch")
def test_cuda_resolved_to_the_callers_device(monkeypatch: pytest.MonkeyPatch) -> None:
    """``"cuda"`` names the caller's current device, resolved where the fit is called
    (a copy thread's current device would be the first)."""
    import torch

    monkeypatch.setattr(torch.cuda, "current_device", lambda: 1)
    assert resolve_device("cuda")[1] == torch.device("cuda", 1)
    assert resolve_device(torch.device("cuda"))[1] == torch.device("cuda", 1)
    assert resolve_device("cuda:0")[1] == torch.device("cuda", 0)
    assert resolve_device("cpu")[1] == torch.device("cpu")
    assert devices.consumer_stream(resolve_device("cpu")[0], torch.device("cpu")) is None


@pytest.mark.torch
@pytest.mark.skipif(not HAS_TORCH, reason="needs torch")
def test_cuda_without_cuda_is_refused_at_once() -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("CUDA is here")
    with pytest.raises(ValueError, match=r"^device='cuda' is not a PyTorch device here: "):
        resolve_device("cuda")


# -- the Cholesky factor on a device -------------------------------------------------------


def _spd(m: int, shift: float = 1.0) -> np.ndarray:
    G = np.random.default_rng(0).normal(size=(m, m))
    A = G @ G.T + shift * np.eye(m)
    return 0.5 * (A + A.T)


@pytest.mark.torch
@pytest.mark.skipif(not HAS_TORCH, reason="needs torch")
def test_torch_cholesky_in_place() -> None:
    """``overwrite=True``: the factor is in ``A``'s own memory; a failure raises."""
    import array_api_compat.torch as xp
    import torch

    A = torch.asarray(_spd(40))
    expected = torch.linalg.cholesky(A)
    where = A.data_ptr()
    L = cholesky(xp, A, "A", overwrite=True)
    assert L.data_ptr() == where
    assert float(torch.max(torch.abs(L - expected))) <= 1e-12 * float(torch.max(expected))
    assert bool(torch.all(torch.triu(L, 1) == 0))
    with pytest.raises(DeviceLinAlgError, match=r"^A is not positive definite"):
        cholesky(xp, torch.asarray(-_spd(5)), "A", overwrite=True)


# -- 4. FALKON's preconditioner: memory ----------------------------------------------------


@pytest.mark.parametrize(("shift", "alpha"), [(1.0, 1e-3), (-1e-10, -1e-9)])
def test_preconditioner_holds_two_matrices_at_most(shift: float, alpha: float) -> None:
    """The factors are made in place: the peak is the two results (T and A), also when
    the jitter is raised (``shift``, ``alpha`` make both factorizations fail first)."""
    m = 400
    K = _spd(m, shift) if shift > 0 else _low_rank(m, shift)
    size = 8 * m * m
    FalkonPreconditioner(np.eye(2), 4, 1.0)  # first call: imports, LAPACK's loading
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        pre = FalkonPreconditioner(K, 10 * m, alpha)
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert np.all(np.isfinite(pre.T)) and np.all(np.isfinite(pre.A))
    assert peak <= 2 * size + size // 10, peak / size


def _low_rank(m: int, shift: float) -> np.ndarray:
    """A rank-3 Gram matrix shifted by ``shift`` (indefinite for a negative one)."""
    X = np.random.default_rng(1).normal(size=(m, 3))
    K = X @ X.T + shift * np.eye(m)
    return 0.5 * (K + K.T)


def test_preconditioner_refuses_a_device_without_the_memory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    xp = _strict()
    device = xp.Device("device1")
    K = xp.asarray(_spd(30), device=device)
    monkeypatch.setattr(devices, "free_device_memory", lambda xp, device: 10_000)
    message = (
        r"^FALKON's two 30 x 30 float64 factors need 14.1 KiB on device .*device1.* but "
        r"9.8 KiB of its memory is free; lower n_components \(the number of landmarks\)\.$"
    )
    with pytest.raises(InsufficientMemoryError, match=message):
        FalkonPreconditioner(K, 100, 1e-3)
    monkeypatch.setattr(devices, "free_device_memory", lambda xp, device: 15_000)
    FalkonPreconditioner(K, 100, 1e-3)
    monkeypatch.setattr(devices, "free_device_memory", lambda xp, device: None)
    check_device_memory(xp, device, 2.0**80, "a huge array", "nothing")  # not known: passes
