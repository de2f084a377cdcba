"""Arrays of other libraries: where the work of an estimator runs when ``X`` is not NumPy.

With scikit-learn's switch on (``sklearn.set_config(array_api_dispatch=True)``), an input
that is an array of another library conforming to the Python array API standard (PyTorch,
CuPy, ``array-api-strict``, ...) decides where the work runs, as in scikit-learn:
*everything follows X*.  The fitted arrays of an estimator live in ``X``'s namespace and on
its device; a later call with arrays of another namespace or device is refused
(:func:`check_place`) until the estimator is moved (:func:`move_to`).  NumPy input, and any
input with the switch off, takes the NumPy path unchanged.

This module is the one place that knows the libraries apart (through ``array-api-compat``,
imported only when the switch is on or an estimator is moved): the namespace and device of
an array, the copies between the host and a device, and what the standard lacks and the
estimators need (:func:`cholesky` that reports a failure instead of returning NaN,
:func:`solve_triangular`, :func:`index_add`, :func:`rfft` / :func:`irfft`), each with a path
per library and a generic fallback.
"""

from __future__ import annotations

import copy
import functools
import os
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = [
    "accumulator_dtype",
    "check_place",
    "copy_to_device",
    "device_of",
    "dispatch_enabled",
    "fitted_array",
    "float_dtypes",
    "free_device_memory",
    "host_dtype",
    "is_device_array",
    "is_foreign",
    "move_arrays",
    "move_to",
    "namespace_of",
    "place_name",
    "resolve_device",
    "same_device",
    "supports_float64",
    "to_namespace",
    "to_numpy",
    "warn_if_tf32",
]

#: How to install what array API dispatch needs, for the messages.
INSTALL_HINT = "pip install array-api-compat"


def _compat() -> Any:
    """``array_api_compat``, imported on first use (an optional dependency)."""
    try:
        import array_api_compat
    except ImportError as error:  # pragma: no cover - the array extra installs it
        raise ImportError(
            f"Arrays of other libraries than NumPy need array-api-compat: {INSTALL_HINT}."
        ) from error
    return array_api_compat


def dispatch_enabled() -> bool:
    """Whether scikit-learn's ``array_api_dispatch`` is on.

    Examples
    --------
    >>> from kernelmaps._array_api import dispatch_enabled
    >>> dispatch_enabled()
    False
    """
    from sklearn import get_config

    return bool(get_config().get("array_api_dispatch", False))


def _is_array(X: Any) -> bool:
    """Whether ``X`` is an array of a library other than NumPy (a tensor, a CuPy array)."""
    if X is None or isinstance(X, (np.ndarray, np.generic, list, tuple, float, int)):
        return False
    module = type(X).__module__.partition(".")[0]
    if module in ("numpy", "scipy", "dask", "pandas", "builtins", "polars"):
        return False
    return bool(_compat().is_array_api_obj(X))


def is_device_array(X: Any) -> bool:
    """Whether ``X`` is an array API array of a library other than NumPy, whatever the
    switch (the rows a streamed fit reads are, with the switch off).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._array_api import is_device_array
    >>> is_device_array(np.ones(3))
    False
    """
    return _is_array(X)


def is_foreign(X: Any) -> bool:
    """Whether ``X`` makes the work run in its own namespace: the switch is on and ``X``
    is an array API array of a library other than NumPy.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._array_api import is_foreign
    >>> is_foreign(np.ones(3))
    False
    """
    return dispatch_enabled() and _is_array(X)


def namespace_of(X: Any) -> Any:
    """The array API namespace of ``X`` (``array-api-compat``'s wrapper where the library
    needs one, e.g. for PyTorch)."""
    return _compat().array_namespace(X)


def device_of(X: Any) -> Any:
    """The device of ``X`` (``"cpu"`` for NumPy)."""
    return _compat().device(X)


def place_name(X: Any) -> str:
    """``"torch arrays on cuda:0"``: where ``X`` lives, for the messages."""
    if isinstance(X, np.ndarray):
        return "numpy arrays"
    library = type(X).__module__.partition(".")[0]
    return f"{library} arrays on device {device_of(X)}"


def host_dtype(dtype: Any) -> np.dtype:
    """The NumPy dtype of the same name as the array dtype ``dtype`` (any library).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._array_api import host_dtype
    >>> host_dtype(np.float32)
    dtype('float32')
    """
    try:
        return np.dtype(dtype)
    except TypeError:
        return np.dtype(str(dtype).rpartition(".")[2])


def supports_float64(xp: Any, device: Any) -> bool:
    """Whether ``device`` holds float64 arrays (Apple's MPS does not)."""
    return not str(device).startswith("mps")


def accumulator_dtype(xp: Any, device: Any) -> Any:
    """The dtype of sums accumulated on ``device``: float64 where it holds float64,
    float32 otherwise."""
    return xp.float64 if supports_float64(xp, device) else xp.float32


def float_dtypes(X: Any) -> tuple[Any, ...]:
    """The floating dtypes an estimator keeps for ``X`` (the first one for the others),
    in ``X``'s namespace: float64 and float32, float32 alone on a device without float64.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._array_api import float_dtypes
    >>> float_dtypes(np.ones(2))
    (<class 'numpy.float64'>, <class 'numpy.float32'>)
    """
    if not is_foreign(X):
        return (np.float64, np.float32)
    xp = namespace_of(X)
    if not supports_float64(xp, device_of(X)):
        return (xp.float32,)
    return (xp.float64, xp.float32)


def to_numpy(x: Any) -> np.ndarray:
    """``x`` as a NumPy array on the host (a copy when it lives on a device); NumPy arrays
    and SciPy sparse matrices as they are."""
    if isinstance(x, np.ndarray) or not _is_array(x):
        return x
    compat = _compat()
    if compat.is_torch_array(x):
        return x.detach().cpu().numpy()
    if compat.is_cupy_array(x):
        return x.get()
    if compat.is_array_api_strict_namespace(compat.array_namespace(x)):
        import array_api_strict

        x = x.to_device(array_api_strict.Device("CPU_DEVICE"))
    return np.from_dlpack(x) if hasattr(x, "__dlpack__") else np.asarray(x)


def to_namespace(x: Any, xp: Any, device: Any = None, *, dtype: Any = None) -> Any:
    """``x`` (an array of any library) as an array of ``xp`` on ``device`` (a copy).

    NumPy as ``xp`` gives the host array itself; ``dtype`` a NumPy dtype or one of
    ``xp``'s.
    """
    if xp is np or getattr(xp, "__name__", "").endswith("numpy"):
        out = to_numpy(x)
        return out if dtype is None else out.astype(host_dtype(dtype), copy=False)
    if _is_array(x) and namespace_of(x) is not xp:
        x = to_numpy(x)
    if isinstance(x, np.ndarray):
        x = np.ascontiguousarray(x)
        if dtype is not None and not isinstance(dtype, np.dtype):
            x = x.astype(host_dtype(dtype), copy=False)
            dtype = None
        elif dtype is not None:
            x = x.astype(dtype, copy=False)
            dtype = None
    return xp.asarray(x, dtype=dtype, device=device, copy=True)


def _namespace_from(target: Any) -> tuple[Any, Any]:
    """``(xp, device)`` named by ``target``: an array, a namespace or a library's name."""
    if isinstance(target, str):
        if target == "numpy":
            return np, "cpu"
        import importlib

        target = importlib.import_module(target)
    if isinstance(target, np.ndarray):
        return np, "cpu"
    if _is_array(target):
        return namespace_of(target), device_of(target)
    if target is np:
        return np, "cpu"
    compat = _compat()
    return compat.array_namespace(target.asarray([0.0])), None


def move_arrays(value: Any, xp: Any, device: Any) -> Any:
    """``value`` with every array in it (in lists, tuples, dicts and estimators too, and
    in the objects whose class sets ``_moves_with_estimator``, such as the statistics of a
    ridge fit) made an array of ``xp`` on ``device``; strings and object arrays stay as
    they are."""
    if isinstance(value, np.ndarray) or _is_array(value):
        dtype = getattr(value, "dtype", None)
        if isinstance(value, np.ndarray) and value.dtype.kind not in "biuf":
            return value
        return to_namespace(value, xp, device) if dtype is not None else value
    if isinstance(value, list):
        return [move_arrays(item, xp, device) for item in value]
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(move_arrays(item, xp, device) for item in value)
    if isinstance(value, dict):
        return {key: move_arrays(item, xp, device) for key, item in value.items()}
    if hasattr(value, "__dict__") and (
        hasattr(value, "get_params") or getattr(value, "_moves_with_estimator", False)
    ):
        moved = copy.copy(value)
        moved.__dict__.update(
            {key: move_arrays(item, xp, device) for key, item in vars(value).items()}
        )
        return moved
    return value


def move_to(estimator: Any, target: Any, device: Any = None) -> Any:
    """A copy of the fitted ``estimator`` whose arrays live in another namespace or device.

    Fit on a GPU, then save or serve on a CPU: ``move_to(model, "numpy")``; or
    ``move_to(model, torch, device="cuda")`` to go the other way.

    Parameters
    ----------
    estimator : estimator
        A fitted kernelmaps estimator (feature map or model).
    target : array, namespace or str
        Where the arrays go: an array (its namespace and device), an array API namespace
        (``torch``, ``cupy``, ``array_api_strict``), ``numpy``, or a library's name.
    device : device, optional
        The device in ``target``'s namespace; default: ``target``'s device for an array,
        the library's default device otherwise.

    Returns
    -------
    estimator
        A new estimator (the given one is unchanged) whose fitted arrays are arrays of
        ``target``'s namespace on ``device``; its parameters are shared.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import RandomFourierFeatures, move_to
    >>> rff = RandomFourierFeatures(n_components=4, random_state=0).fit(np.ones((3, 2)))
    >>> type(move_to(rff, "numpy").frequencies_).__name__
    'ndarray'
    """
    xp, target_device = _namespace_from(target)
    if device is None:
        device = target_device
    if xp is np:
        return move_arrays(estimator, np, None)
    return move_arrays(estimator, xp, device)


def fitted_array(value: Any) -> Any:
    """The first array held in ``value`` (as :func:`move_arrays` walks it: for an
    estimator, its fitted arrays, where it was fitted), or None.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps import RandomFourierFeatures
    >>> from kernelmaps._array_api import fitted_array
    >>> rff = RandomFourierFeatures(n_components=4, random_state=0).fit(np.ones((3, 2)))
    >>> type(fitted_array(rff)).__name__
    'ndarray'
    """
    if isinstance(value, np.ndarray):
        return value if value.dtype.kind in "biuf" else None
    if _is_array(value):
        return value
    items: Any = ()
    if isinstance(value, (list, tuple)):
        items = value
    elif isinstance(value, dict):
        items = value.values()
    elif hasattr(value, "get_params") and hasattr(value, "__dict__"):
        items = [item for key, item in vars(value).items() if key.endswith("_")]
    for item in items:
        found = fitted_array(item)
        if found is not None:
            return found
    return None


def check_place(estimator: Any, X: Any, method: str) -> None:
    """Refuse ``X`` in ``estimator.method()`` when the fitted arrays of ``estimator`` live
    elsewhere (another namespace or device), naming both places and how to move it."""
    fitted = fitted_array(estimator)
    if fitted is None:
        return
    foreign_fit, foreign_x = not isinstance(fitted, np.ndarray), is_foreign(X)
    if not foreign_fit and not foreign_x:
        return
    same_namespace = foreign_fit and foreign_x and namespace_of(fitted) is namespace_of(X)
    if same_namespace and same_device(device_of(fitted), device_of(X)):
        return
    name = type(estimator).__name__
    where = place_name(X) if foreign_x else "numpy arrays (or array_api_dispatch off)"
    raise ValueError(
        f"{name}.{method}(): X must use the same namespace and device as the fitted arrays: "
        f"fitted on {place_name(fitted)}, got {where}. Move the estimator first with "
        "kernelmaps.move_to(estimator, X), or pass X where it was fitted."
    )


@functools.lru_cache(maxsize=1)
def _warned_tf32() -> list[bool]:
    return [False]


def warn_if_tf32(X: Any, what: str) -> None:
    """Warn once per process when float32 matrix products on ``X``'s device run in TF32
    (10 bits of mantissa), which corrupts the phases ``w . x`` of ``what``."""
    if _warned_tf32()[0] or host_dtype(X.dtype) != np.float32:
        return
    compat = _compat()
    reduced = False
    if compat.is_torch_array(X) and X.device.type == "cuda":
        import torch

        reduced = torch.get_float32_matmul_precision() != "highest" or bool(
            torch.backends.cuda.matmul.allow_tf32
        )
    elif compat.is_cupy_array(X):
        reduced = os.environ.get("CUPY_TF32", "0") != "0"
    if reduced:
        _warned_tf32()[0] = True
        warnings.warn(
            f"float32 matrix products on this device run in TF32 (10-bit mantissa), which "
            f"makes {what} noise: turn it off with "
            "torch.set_float32_matmul_precision('highest') (CuPy: unset CUPY_TF32), or pass "
            "float64 input.",
            UserWarning,
            stacklevel=3,
        )


# -- devices for streamed rows -----------------------------------------------------------


def _installed(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def resolve_device(device: Any) -> tuple[Any, Any]:
    """``(xp, device)`` of the ``device=`` parameter of the streamed fits.

    A ``torch.device`` or a string (``"cuda"``, ``"cuda:1"``, ``"mps"``, ``"cpu"``) names
    a PyTorch device (CuPy's for ``"cuda..."`` where PyTorch is not installed); a CuPy
    ``Device`` or an ``array_api_strict.Device`` names theirs.
    """
    compat = _compat()
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


def same_device(a: Any, b: Any) -> bool:
    """Whether the devices ``a`` and ``b`` (of one library) are the same; a device named
    without its index (``"cuda"``) is the same as any device of its type."""
    if str(a) == str(b):
        return True
    kind_a, kind_b = getattr(a, "type", None), getattr(b, "type", None)
    if kind_a is None or kind_a != kind_b:
        return False
    return getattr(a, "index", 0) is None or getattr(b, "index", 0) is None


def free_device_memory(xp: Any, device: Any) -> int | None:
    """Free bytes on ``device`` as its library reports them; None where it does not."""
    compat = _compat()
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
    compat = _compat()
    if compat.is_torch_namespace(xp) and getattr(device, "type", "") == "cuda":
        import torch

        stream = torch.cuda.Stream(device)
        with torch.cuda.stream(stream):
            pinned = torch.from_numpy(np.ascontiguousarray(block)).pin_memory()
            out = pinned.to(device, non_blocking=True)
        stream.synchronize()
        return out
    return to_namespace(block, xp, device)


# -- what the standard lacks --------------------------------------------------------------


class DeviceLinAlgError(np.linalg.LinAlgError):
    """A factorization on a device failed (the library returned NaN or raised)."""


def cholesky(xp: Any, A: Any, what: str) -> Any:
    """The lower Cholesky factor of ``A``, or :class:`numpy.linalg.LinAlgError` when ``A``
    is not positive definite, on every library (some return NaN silently on a device)."""
    try:
        L = xp.linalg.cholesky(A)
    except Exception as error:  # each library raises its own type
        raise DeviceLinAlgError(f"{what} is not positive definite ({error}).") from error
    if not bool(xp.all(xp.isfinite(L))):
        raise DeviceLinAlgError(f"{what} is not positive definite (NaN in its Cholesky factor).")
    return L


def solve_triangular(xp: Any, T: Any, B: Any, *, lower: bool, transpose: bool = False) -> Any:
    """``T^{-1} B`` (``T^{-T} B`` with ``transpose``) for a triangular ``T``: the
    library's triangular solve where it has one, a general solve otherwise."""
    compat = _compat()
    if compat.is_torch_namespace(xp):
        import torch

        M = T.mT if transpose else T
        return torch.linalg.solve_triangular(M, B, upper=lower == transpose)
    if compat.is_cupy_namespace(xp):
        import cupyx.scipy.linalg

        return cupyx.scipy.linalg.solve_triangular(T, B, lower=lower, trans=int(transpose))
    if compat.is_numpy_namespace(xp):
        import scipy.linalg

        return scipy.linalg.solve_triangular(T, B, lower=lower, trans=int(transpose))
    M = xp.matrix_transpose(T) if transpose else T
    return xp.linalg.solve(M, B)


def add_to_diagonal(xp: Any, A: Any, value: float) -> Any:
    """``A + value I`` for a square ``A``: in place where the library can (the result is
    then ``A`` itself), a new array otherwise."""
    compat = _compat()
    if compat.is_torch_namespace(xp):
        A.diagonal().add_(value)
        return A
    if compat.is_numpy_namespace(xp) or compat.is_cupy_namespace(xp):
        index = xp.arange(A.shape[0])
        A[index, index] += value
        return A
    eye = xp.eye(A.shape[0], dtype=A.dtype, device=device_of(A))
    return A + float(value) * eye


def index_add(xp: Any, target: Any, index: Any, values: Any) -> Any:
    """``target[index[i], :] += values[i, :]`` with repeated indices added (a scatter-add
    along the first axis); returns the target (updated in place where the library can)."""
    compat = _compat()
    if compat.is_torch_namespace(xp):
        return target.index_add_(0, index, values)
    if compat.is_cupy_namespace(xp):
        import cupyx

        cupyx.scatter_add(target, index, values)
        return target
    if compat.is_numpy_namespace(xp):
        np.add.at(target, index, values)
        return target
    # generic: a one-hot product (rows of target x entries of index)
    one_hot = xp.astype(
        xp.arange(target.shape[0], device=device_of(target))[:, None] == index[None, :],
        values.dtype,
    )
    return target + one_hot @ values


def fft_pair(xp: Any) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """``(rfft, irfft)`` along the last axis: the namespace's ``fft`` extension, or the
    host's NumPy FFT with the copies there and back."""
    fft = getattr(xp, "fft", None)
    if fft is not None and hasattr(fft, "rfft"):
        return fft.rfft, fft.irfft

    def rfft(x: Any, n: int | None = None, axis: int = -1) -> Any:
        return to_namespace(np.fft.rfft(to_numpy(x), n=n, axis=axis), xp, device_of(x))

    def irfft(x: Any, n: int | None = None, axis: int = -1) -> Any:
        out = np.fft.irfft(to_numpy(x), n=n, axis=axis)
        return to_namespace(out, xp, device_of(x))

    return rfft, irfft


def synchronize(X: Any) -> None:
    """Wait for the work queued on ``X``'s device (for timings)."""
    compat = _compat()
    if compat.is_torch_array(X) and X.device.type == "cuda":
        import torch

        torch.cuda.synchronize(X.device)
    elif compat.is_cupy_array(X):
        import cupy

        cupy.cuda.get_current_stream().synchronize()
