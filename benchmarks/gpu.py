"""kernelmaps on a GPU: correctness first, then timings beside the host, a peer and the roofline.

One command on a machine with a CUDA GPU and PyTorch::

    SCIPY_ARRAY_API=1 python benchmarks/gpu.py --out gpu-results

(about 6 minutes on one H100); ``--device cpu --quick`` runs the same script on PyTorch's
CPU in seconds, as a smoke test of the script itself.  It writes ``gpu.md`` into
``--out``, again after each section (a section that fails is recorded with its traceback
and the run goes on; the exit status is 1 if any failed): the device, driver and library
versions, then

1. **correctness**: every estimator fitted and applied on the device (float32 and
   float64), and NumPy rows streamed through it in many small blocks (``device=``),
   against the NumPy path's float64 result on the same data: the largest difference
   beside the NumPy float32 path's own and the tolerance (``c eps`` times the magnitude
   compared, the count ``c`` per estimator; ``c cond(K_mm) eps`` for Nyström); checks
   only a device shows (FALKON's factors made in place, a failed Cholesky raising); the
   array API tests of ``tests/`` with PyTorch on the device (``-m torch``), judged by
   pytest's exit status, where pytest is installed;
2. **the roofline** measured here: the float32 matrix-product rate (TF32 off) and the
   memory bandwidth (a device-to-device copy);
3. **timings**, each synchronized on the device (``torch.cuda.synchronize``), median of
   ``--repeats``:

   * ``RandomFourierFeatures.transform``, n = 10^6, d = 64, D = 8192, float32: the time, its
     ratio to the bandwidth limit of writing ``Z`` (``4 n D`` bytes), the host's NumPy path
     on the same work (per row, timed on ``--host-rows`` rows), and GPyTorch's RFF kernel
     where it is installed;
   * ``Nystroem`` (m = 2000) fit + transform beside scikit-learn's ``Nystroem`` with
     array API dispatch on the same torch arrays;
   * ``FeatureRidge(RandomFourierFeatures(D=8192))`` fit on n = 10^7 rows streamed from host
     memory with ``device="cuda"``;
   * ``NystroemKernelRidge``, n = 10^7, d = 28 (HIGGS-sized), m = 20 000 and 50 000 (the
     larger lowered to what the device's free memory holds, :func:`falkon_sizes`),
     float32, 10 conjugate-gradient iterations, streamed; and in device memory where it
     fits.

``--scale`` multiplies every n (``--quick`` is ``--scale 1e-4`` with small D and m);
``--skip-timings`` stops after the correctness section.
"""

from __future__ import annotations

import argparse
import importlib
import math
import os
import platform
import statistics
import subprocess
import sys
import time
import traceback
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("SCIPY_ARRAY_API", "1")

import numpy as np
import sklearn
from sklearn.exceptions import ConvergenceWarning

import kernelmaps
from kernelmaps import (
    FeatureRidge,
    KernelRidge,
    Nystroem,
    NystroemKernelRidge,
    RandomFourierFeatures,
)

ROOT = Path(__file__).resolve().parents[1]


# -- measuring on the device ----------------------------------------------------------------


def sync(device: Any) -> None:
    """Wait for the work queued on ``device``."""
    import torch

    if torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)


def device_time(func: Callable[[], Any], device: Any, repeats: int) -> tuple[float, float, Any]:
    """Median and spread (max - min) of ``repeats`` synchronized runs, and the last result."""
    times, result = [], None
    for _ in range(repeats):
        sync(device)
        start = time.perf_counter()
        result = func()
        sync(device)
        times.append(time.perf_counter() - start)
        if _ < repeats - 1:
            result = None
    return statistics.median(times), max(times) - min(times), result


def versions(device: Any) -> dict[str, str]:
    """The device, its driver and the libraries."""
    import torch

    info = {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scikit-learn": sklearn.__version__,
        "torch": torch.__version__,
        "kernelmaps": kernelmaps.__version__,
        "device": str(device),
    }
    if torch.device(device).type == "cuda":
        info["gpu"] = torch.cuda.get_device_name(device)
        info["cuda (torch)"] = str(torch.version.cuda)
        try:
            smi = subprocess.run(
                ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                capture_output=True,
                text=True,
                check=False,
            )
            info["driver"] = smi.stdout.strip() or "unknown"
        except OSError:
            info["driver"] = "unknown (no nvidia-smi)"
    for name in ("cupy", "array_api_compat", "gpytorch"):
        try:
            info[name] = importlib.import_module(name).__version__
        except ImportError:
            info[name] = "not installed"
    return info


def row(*cells: str) -> str:
    """A row of the timings' table (five columns, the missing ones empty)."""
    cells = (*cells, *[""] * (5 - len(cells)))
    return "| " + " | ".join(cells) + " |"


# -- 1. correctness -------------------------------------------------------------------------

#: Rows per streamed block in the correctness checks: many small blocks.
STREAMED_BLOCK_ROWS = 37


def _cases(quick: bool) -> list[tuple[str, Callable[[], Any], float]]:
    """``(name, estimator factory, operation count c)`` of the correctness checks."""
    D = 64 if quick else 512

    def rff() -> RandomFourierFeatures:
        return RandomFourierFeatures(gamma=0.1, n_components=D, random_state=0)

    def nkr(**device: Any) -> NystroemKernelRidge:
        return NystroemKernelRidge(gamma=0.1, n_components=32, alpha=1e-2, random_state=0, **device)

    return [
        ("RandomFourierFeatures", rff, 64),
        # c multiplies cond(K_mm) here (see _tolerance)
        ("Nystroem", lambda: Nystroem(gamma=0.1, n_components=D // 4, random_state=0), 10),
        ("FeatureRidge(RFF)", lambda: FeatureRidge(rff(), alphas=[1.0]), 1e4),
        # conjugate gradients stop at a residual of 100 eps: the two solutions differ by
        # up to the condition number (below 1e3 here) times that
        ("NystroemKernelRidge", nkr, 1e5),
        ("KernelRidge", lambda: KernelRidge(gamma=0.1, alpha=1.0), 1e4),
        # NumPy rows streamed to the device in blocks of STREAMED_BLOCK_ROWS rows
        ("FeatureRidge(RFF) streamed", lambda: FeatureRidge(rff(), alphas=[1.0]), 1e4),
        ("NystroemKernelRidge streamed", nkr, 1e5),
    ]


def _apply(est: Any, X: Any, y: Any) -> Any:
    """``predict(X)`` of a model fitted on ``(X, y)``, or ``transform(X)`` of a map."""
    if hasattr(est, "predict"):
        return est.fit(X, y).predict(X)
    return est.fit(X).transform(X)


def _tolerance(name: str, count: float, eps: float, fitted: Any, expected: np.ndarray) -> float:
    """``c eps |expected|``; for Nyström ``c cond(K_mm) eps |expected|``: the features are
    ``K_nm K_mm^{-1/2}``, and a relative rounding ``eps`` of ``K_mm`` moves its smallest
    eigenvalue ``s`` by up to ``eps |K_mm|``, so ``s^{-1/2}`` by ``cond(K_mm) eps / 2``
    relatively (the float32 path on the host is off the float64 result by as much)."""
    scale = max(1.0, float(np.max(np.abs(expected))))
    if name == "Nystroem":
        from sklearn.metrics.pairwise import rbf_kernel

        L = np.asarray(fitted.components_, dtype=np.float64)
        count *= float(np.linalg.cond(rbf_kernel(L, L, gamma=0.1)))
    return count * eps * scale


def _on_device(name: str, estimator: Any, X: np.ndarray, y: np.ndarray, device: Any) -> Any:
    """The estimator's result on the device, as a float64 NumPy array."""
    import torch

    import kernelmaps._streamed_rows as streamed

    if name.endswith("streamed"):  # NumPy rows, many small blocks through the device
        block = streamed._MAX_BLOCK_ROWS
        streamed._MAX_BLOCK_ROWS = STREAMED_BLOCK_ROWS
        try:
            got = _apply(estimator.set_params(device=device), X, y)
        finally:
            streamed._MAX_BLOCK_ROWS = block
        return np.asarray(got, dtype=np.float64)
    with sklearn.config_context(array_api_dispatch=True):
        Xt, yt = torch.asarray(X, device=device), torch.asarray(y, device=device)
        got = _apply(estimator, Xt, yt)
    return got.detach().cpu().numpy().astype(np.float64)


def correctness(device: Any, quick: bool) -> list[str]:
    """Every estimator on the device against the NumPy path's float64 result, in float32
    and float64: the host's float32 error beside the device's, the tolerance ``c eps``
    times the magnitude (``c cond(K_mm) eps`` for Nyström, see :func:`_tolerance`)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 8))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=300)
    lines = [
        "| estimator | dtype | device vs NumPy float64 | NumPy's own | tolerance | |",
        "|---|---|---|---|---|---|",
    ]
    for name, make, count in _cases(quick):
        # iterative solvers stop at a residual of about 100 eps, within the tolerance
        reference = make()
        tol = {"tol": 1e-12} if "tol" in reference.get_params() else {}
        expected = _apply(reference.set_params(**tol), X, y)
        for dtype in (np.float32, np.float64):
            Xd, yd = X.astype(dtype), y.astype(dtype)
            eps = float(np.finfo(dtype).eps)
            tol = {"tol": max(1e-12, 100 * eps)} if "tol" in make().get_params() else {}
            own = _apply(make().set_params(**tol), Xd, yd).astype(np.float64)
            got = _on_device(name, make().set_params(**tol), Xd, yd, device)
            error = float(np.max(np.abs(got - expected)))
            own_error = float(np.max(np.abs(own - expected)))
            bound = _tolerance(name, count, eps, reference, expected)
            verdict = "ok" if error <= bound else "**FAILED**"
            lines.append(
                f"| {name} | {np.dtype(dtype).name} | {error:.2e} | {own_error:.2e} | "
                f"{bound:.2e} | {verdict} |"
            )
    return lines


def device_checks(device: Any) -> list[str]:
    """What only a device shows: FALKON's factors made in place (the device memory they
    take: the two results, ``2 x 8 m^2`` bytes, and cuSOLVER's workspace), a failed
    Cholesky raising on PyTorch (in place) and CuPy (where installed)."""
    import array_api_compat.torch as xp
    import torch

    from kernelmaps._array_extras import DeviceLinAlgError, cholesky
    from kernelmaps.models._falkon._solver import FalkonPreconditioner

    lines = ["| check | measured | expected | |", "|---|---|---|---|"]
    m = 2000
    G = np.random.default_rng(4).normal(size=(m, m))
    K = torch.asarray(G @ G.T / m + np.eye(m), device=device)
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)
        before = torch.cuda.memory_allocated(device)
        torch.cuda.reset_peak_memory_stats(device)
        FalkonPreconditioner(K, 10 * m, 1e-3)
        peak = (torch.cuda.max_memory_allocated(device) - before) / (8.0 * m * m)
        verdict = "ok" if peak <= 2.25 else "**FAILED**"
        lines.append(f"| FALKON factors' peak, m={m} | {peak:.2f} m x m | <= 2.25 | {verdict} |")
    for library, namespace, A in _indefinite(xp, device):
        try:
            cholesky(namespace, A, "A", overwrite=True)
            verdict, got = "**FAILED**", "a factor"
        except DeviceLinAlgError:
            verdict, got = "ok", "DeviceLinAlgError"
        lines.append(f"| {library} Cholesky of an indefinite matrix | {got} | raises | {verdict} |")
    return lines


def _indefinite(xp: Any, device: Any) -> list[tuple[str, Any, Any]]:
    """An indefinite symmetric matrix on the device: PyTorch's, and CuPy's if installed."""
    A = np.eye(50)
    A[17, 17] = -1.0
    found = [("PyTorch", xp, xp.asarray(A, device=device))]
    if importlib.util.find_spec("cupy") is not None and str(device).startswith("cuda"):
        import array_api_compat.cupy as cxp

        found.append(("CuPy", cxp, cxp.asarray(A)))
    return found


def array_api_tests(device: Any) -> list[str]:
    """The array API tests of the repository with PyTorch on ``device`` (the streamed
    fits too): pytest's verdict from its return code, and its summary."""
    if importlib.util.find_spec("pytest") is None or not (ROOT / "tests").is_dir():
        return ["(pytest or the tests are not here: skipped)"]
    env = {
        **os.environ,
        "KERNELMAPS_TEST_TORCH_DEVICE": str(device),
        "PYTHONPATH": str(ROOT / "src"),
    }
    files = sorted(str(p) for p in (ROOT / "tests").glob("test_array_api_*.py"))
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "torch", *files],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        check=False,
    )
    verdict = "ok" if run.returncode == 0 else f"**FAILED** (pytest exit code {run.returncode})"
    failed = [line for line in run.stdout.splitlines() if line.startswith("FAILED ")]
    summary = run.stdout.strip().splitlines()[-1:] if run.stdout.strip() else []
    return [verdict, "", "```", *failed[:50], *summary, run.stderr[-500:].strip(), "```"]


# -- 2. roofline ----------------------------------------------------------------------------


def tf32_off() -> None:
    """float32 matrix products in float32 (no TF32): PyTorch's ``fp32_precision`` where it
    has it (setting the legacy flags there makes its legacy getters refuse), else those."""
    import torch

    if hasattr(torch.backends.cuda.matmul, "fp32_precision"):
        torch.backends.cuda.matmul.fp32_precision = "ieee"
    else:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.set_float32_matmul_precision("highest")


def roofline(device: Any, quick: bool) -> tuple[float, float]:
    """``(float32 matmul flop/s with TF32 off, copy bandwidth in bytes/s)`` measured here."""
    import torch

    tf32_off()
    n = 1024 if quick else 8192
    A = torch.randn(n, n, device=device)
    B = torch.randn(n, n, device=device)
    seconds, _, _ = device_time(lambda: A @ B, device, 3)
    flops = 2.0 * n**3 / seconds
    size = (1 << 22) if quick else (1 << 30)  # float32 values: 4 GiB on a GPU
    src = torch.empty(size, device=device)
    dst = torch.empty_like(src)
    seconds, _, _ = device_time(lambda: dst.copy_(src), device, 3)
    return flops, 2.0 * 4 * size / seconds


# -- 3. timings -----------------------------------------------------------------------------


def _host_rate(make: Callable[[], Any], X: np.ndarray) -> float:
    """Rows per second of the host's NumPy path (``make().fit(X).transform(X)``'s transform)."""
    est = make().fit(X)
    start = time.perf_counter()
    est.transform(X)
    return X.shape[0] / (time.perf_counter() - start)


def rff_transform(device: Any, scale: float, D: int, bandwidth: float, args: Any) -> list[str]:
    """RFF transform, n = 10^6 x scale, d = 64, float32, beside the host, GPyTorch, the limit."""
    import torch

    n, d = max(1000, int(1e6 * scale)), 64
    X = np.random.default_rng(0).normal(size=(n, d)).astype(np.float32)

    def make() -> RandomFourierFeatures:
        return RandomFourierFeatures(gamma=0.1, n_components=D, random_state=0)

    with sklearn.config_context(array_api_dispatch=True):
        Xt = torch.asarray(X, device=device)
        rff = make().fit(Xt)
        seconds, spread, Z = device_time(lambda: rff.transform(Xt), device, args.repeats)
    del Z
    limit = 4.0 * n * D / bandwidth
    host = _host_rate(make, X[: min(n, args.host_rows)])
    lines = [
        f"| RFF transform n={n} d={d} D={D} float32 | {seconds:.4f} s (±{spread:.4f}) | "
        f"{n / seconds:.3g} rows/s | bandwidth limit {limit:.4f} s: {limit / seconds:.0%} "
        f"of it | host NumPy path {host:.3g} rows/s: device {n / seconds / host:.1f}x |"
    ]
    lines.append(_gpytorch_rff(device, X, D, args.repeats))
    return lines


def _gpytorch_rff(device: Any, X: np.ndarray, D: int, repeats: int) -> str:
    """GPyTorch's RFF kernel features on the same data, where GPyTorch is installed."""
    if importlib.util.find_spec("gpytorch") is None:
        return "| GPyTorch RFFKernel | not installed | | | |"
    import gpytorch
    import torch

    kernel = gpytorch.kernels.RFFKernel(num_samples=D // 2, num_dims=X.shape[1]).to(device)
    Xt = torch.asarray(X, device=device)
    with torch.no_grad():
        seconds, spread, _ = device_time(lambda: kernel._featurize(Xt), device, repeats)
    rate = f"{X.shape[0] / seconds:.3g} rows/s"
    return row(
        "GPyTorch RFFKernel._featurize, same shapes", f"{seconds:.4f} s (±{spread:.4f})", rate
    )


def nystroem_vs_sklearn(device: Any, scale: float, m: int, repeats: int) -> list[str]:
    """Nystroem fit + transform beside scikit-learn's, both on the same torch arrays."""
    import torch
    from sklearn.kernel_approximation import Nystroem as SkNystroem

    n = max(1000, int(1e6 * scale))
    X = np.random.default_rng(1).normal(size=(n, 28)).astype(np.float32)
    with sklearn.config_context(array_api_dispatch=True):
        Xt = torch.asarray(X, device=device)
        ours, ours_spread, _ = device_time(
            lambda: Nystroem(gamma=0.05, n_components=m, random_state=0).fit_transform(Xt),
            device,
            repeats,
        )
        try:
            theirs, theirs_spread, _ = device_time(
                lambda: SkNystroem(gamma=0.05, n_components=m, random_state=0).fit_transform(Xt),
                device,
                repeats,
            )
            peer = f"{theirs:.3f} s (±{theirs_spread:.3f}): ratio {theirs / ours:.2f}"
        except Exception as error:  # the peer may not support this namespace
            peer = f"failed: {type(error).__name__}: {str(error)[:80]}"
    work = f"Nystroem m={m} fit+transform n={n}"
    return [row(work, f"{ours:.3f} s (±{ours_spread:.3f})", "", f"scikit-learn: {peer}")]


def streamed_ridge(device: Any, scale: float, D: int) -> list[str]:
    """FeatureRidge(RFF) fit on n = 10^7 x scale host rows streamed to the device."""
    n, d = max(2000, int(1e7 * scale)), 64
    rng = np.random.default_rng(2)
    X = rng.normal(size=(n, d)).astype(np.float32)
    y = np.sin(X[:, 0]).astype(np.float32)
    model = FeatureRidge(
        RandomFourierFeatures(gamma=0.05, n_components=D, random_state=0),
        alphas=[1e-3, 1e-2],
        device=device,
    )
    sync(device)
    start = time.perf_counter()
    model.fit(X, y)
    sync(device)
    seconds = time.perf_counter() - start
    work = f"FeatureRidge(RFF D={D}) fit, n={n} streamed"
    return [row(work, f"{seconds:.2f} s", f"{n / seconds:.3g} rows/s")]


def falkon(device: Any, scale: float, m: int, in_memory: bool) -> list[str]:
    """NystroemKernelRidge, 10 CG iterations, n = 10^7 x scale, d = 28, float32."""
    import torch

    n, d = max(2000, int(1e7 * scale)), 28
    rng = np.random.default_rng(3)
    X = rng.normal(size=(n, d)).astype(np.float32)
    y = (X[:, 0] > 0).astype(np.float32)
    params = {"gamma": 0.05, "n_components": m, "alpha": 1e-6, "max_iter": 10, "tol": 1e-30}
    params["random_state"] = 0
    lines = []
    warnings.filterwarnings("ignore", category=ConvergenceWarning)  # 10 iterations, on purpose
    start = time.perf_counter()
    NystroemKernelRidge(**params, device=device).fit(X, y)
    sync(device)
    work = f"NystroemKernelRidge m={m} n={n}"
    lines.append(row(f"{work} streamed, 10 iterations", f"{time.perf_counter() - start:.2f} s"))
    if in_memory:
        try:
            with sklearn.config_context(array_api_dispatch=True):
                Xt, yt = torch.asarray(X, device=device), torch.asarray(y, device=device)
                sync(device)
                start = time.perf_counter()
                NystroemKernelRidge(**params).fit(Xt, yt)
                sync(device)
            seconds = time.perf_counter() - start
            lines.append(row(f"{work} in device memory", f"{seconds:.2f} s"))
        except (RuntimeError, MemoryError) as error:  # out of device memory
            lines.append(row(f"{work} in device memory", f"did not fit: {str(error)[:60]}"))
    return lines


def falkon_sizes(device: Any, quick: bool, n: int) -> list[int]:
    """The landmark counts of the FALKON timings: 20 000 and 50 000, the larger lowered to
    what the device holds: ``K_mm``, its two factors and the temporaries of forming
    ``K_mm`` (five ``m x m`` float64 at most) in 90% of the free memory."""
    if quick:
        return [64, 128]
    from kernelmaps._devices import free_device_memory, resolve_device
    from kernelmaps._memory import available_memory

    free = free_device_memory(*resolve_device(device)) or available_memory() or 2**34
    largest = int(math.sqrt(0.9 * free / (5 * 8)) // 1000 * 1000)
    return sorted({min(m, largest, n) for m in (20_000, 50_000)})


class Report:
    """The sections of ``gpu.md``, the file written again (atomically) after each one; a
    section that raises is recorded with its traceback, and the run goes on."""

    def __init__(self, path: Path) -> None:
        self.path, self.lines, self.failed = path, [], []
        path.parent.mkdir(parents=True, exist_ok=True)

    def add(self, lines: list[str]) -> None:
        self.lines += lines
        partial = self.path.with_name(self.path.name + ".partial")
        partial.write_text("\n".join(self.lines) + "\n")
        os.replace(partial, self.path)

    def section(self, title: str, work: Callable[[], list[str]]) -> None:
        """``work()``'s lines under ``title`` (none for an empty title)."""
        try:
            lines = work()
        except Exception:
            lines = ["**FAILED**:", "", "```", traceback.format_exc().strip(), "```"]
        if any("**FAILED**" in line for line in lines):
            self.failed.append(title or lines[0])
        self.add(([f"## {title}", ""] if title else []) + lines + [""])
        print("\n".join(lines), flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda", help="a PyTorch device (default cuda)")
    parser.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test")
    parser.add_argument("--scale", type=float, default=None, help="multiplier of every n")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--host-rows", type=int, default=100_000)
    parser.add_argument("--out", type=Path, default=Path("gpu-results"))
    parser.add_argument("--skip-tests", action="store_true", help="no pytest run")
    parser.add_argument("--skip-timings", action="store_true", help="correctness only")
    args = parser.parse_args(argv)
    import torch

    device = torch.device(args.device)
    scale = args.scale if args.scale is not None else (1e-4 if args.quick else 1.0)
    D = 256 if args.quick else 8192
    report = Report(args.out / "gpu.md")
    started = time.perf_counter()
    report.section("", lambda: ["# kernelmaps on a GPU", "", *versions_lines(device)])
    report.section("1. Correctness against the NumPy path", lambda: correctness(device, args.quick))
    report.section("Device checks", lambda: device_checks(device))
    if not args.skip_tests:
        report.section("Array API tests (torch on this device)", lambda: array_api_tests(device))
    if not args.skip_timings:
        timings(report, device, scale, D, args)
    report.add([f"Total: {time.perf_counter() - started:.0f} s."])
    if report.failed:
        print(f"failed: {', '.join(report.failed)}", file=sys.stderr)
    return 1 if report.failed else 0


def versions_lines(device: Any) -> list[str]:
    return [f"- {k}: {v}" for k, v in versions(device).items()]


def timings(report: Report, device: Any, scale: float, D: int, args: Any) -> None:
    """Sections 2 and 3: the roofline, then the timings, a row each (guarded apart)."""
    bandwidth: list[float] = []

    def measured() -> list[str]:
        flops, copy = roofline(device, args.quick)
        bandwidth.append(copy)
        return [
            f"- float32 matmul (TF32 off): {flops / 1e12:.1f} TFLOP/s",
            f"- copy bandwidth: {copy / 1e9:.0f} GB/s",
        ]

    report.section("2. Roofline measured here", measured)
    header = ["| work | time | rate | limit / peer | host |", "|---|---|---|---|---|"]
    report.section("3. Timings (synchronized, median)", lambda: header)
    n_falkon = max(2000, int(1e7 * scale))
    rows: list[tuple[str, Callable[[], list[str]]]] = [
        ("RFF", lambda: rff_transform(device, scale, D, bandwidth[0] if bandwidth else 1e12, args)),
        (
            "Nystroem",
            lambda: nystroem_vs_sklearn(device, scale, 64 if args.quick else 2000, args.repeats),
        ),
        ("streamed FeatureRidge", lambda: streamed_ridge(device, scale, D)),
    ]
    for i, m in enumerate(falkon_sizes(device, args.quick, n_falkon)):
        rows.append((f"FALKON m={m}", lambda m=m, i=i: falkon(device, scale, m, in_memory=i == 0)))
    for name, work in rows:
        report.section("", lambda name=name, work=work: _row_guard(name, work))


def _row_guard(name: str, work: Callable[[], list[str]]) -> list[str]:
    """A timing row, or the row of its failure (with the last line of the error)."""
    try:
        return work()
    except Exception as error:
        print(traceback.format_exc(), file=sys.stderr)
        return [row(name, f"**FAILED**: {type(error).__name__}: {str(error)[:200]}")]


if __name__ == "__main__":
    sys.exit(main())
