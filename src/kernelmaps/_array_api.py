"""Arrays of other libraries: where the work of an estimator runs when ``X`` is not NumPy.

With scikit-learn's switch on (``sklearn.set_config(array_api_dispatch=True)``), an input
that is an array of another library conforming to the Python array API standard (PyTorch,
CuPy, ``array-api-strict``, ...) decides where the work runs, as in scikit-learn:
*everything follows X*.  The fitted arrays of an estimator live in ``X``'s namespace and on
its device; a later call with arrays of another namespace or device is refused
(:func:`check_place`) until the estimator is moved (:func:`move_to`).  NumPy input, and any
input with the switch off, takes the NumPy path unchanged.  ``docs/ARCHITECTURE.md``
("Two axes") gives the rules; ``array-api-compat`` is imported only when needed.
"""

from __future__ import annotations

import copy
import functools
import os
import warnings
from typing import Any

import numpy as np

__all__ = [
    "accumulator_dtype",
    "check_place",
    "device_of",
    "dispatch_enabled",
    "fitted_array",
    "float_dtypes",
    "get_namespace",
    "host_dtype",
    "is_foreign",
    "is_numpy",
    "move_arrays",
    "move_to",
    "namespace_of",
    "numpy_namespace",
    "on_host",
    "place_name",
    "placed",
    "same_device",
    "supports_float64",
    "to_namespace",
    "to_numpy",
    "warn_if_tf32",
]

#: How to install what array API dispatch needs, for the messages.
INSTALL_HINT = "pip install array-api-compat"


def compat_module() -> Any:
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
    return bool(compat_module().is_array_api_obj(X))


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


@functools.cache
def numpy_namespace() -> Any:
    """NumPy's array API namespace (``array_api_compat.numpy``): the ``xp`` of NumPy input,
    as scikit-learn's ``get_namespace`` gives it, whatever NumPy's version."""
    compat_module()
    import array_api_compat.numpy

    return array_api_compat.numpy


def is_numpy(xp: Any) -> bool:
    """Whether ``xp`` is NumPy (the module itself or its array API wrapper): the one test
    of a library that the estimators make, to take a NumPy-only fast route (in-place
    operations, sparse input, compiled kernels) inside a function written over ``xp``.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._array_api import get_namespace, is_numpy
    >>> is_numpy(get_namespace(np.ones(2))[0])
    True
    """
    if xp is np or xp is numpy_namespace():
        return True
    return bool(compat_module().is_numpy_namespace(xp))


def get_namespace(*arrays: Any) -> tuple[Any, Any]:
    """``(xp, device)`` where the work on ``arrays`` runs: the namespace and device of the
    arrays of another library than NumPy among them (a tensor, a CuPy array), else NumPy's
    namespace (:func:`numpy_namespace`) and ``"cpu"``.

    NumPy arrays, SciPy sparse matrices, numbers, None and the host blocks of Dask arrays
    or of streamed rows give NumPy's namespace; NumPy arrays beside arrays of another
    library (host-side constants) do not change the answer.  Arrays of two other
    libraries, or of one library on two devices, are refused.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._array_api import get_namespace
    >>> xp, device = get_namespace(np.ones(2), None)
    >>> xp.__name__, device
    ('array_api_compat.numpy', 'cpu')
    """
    found: tuple[Any, Any] | None = None
    for X in arrays:
        if not _is_array(X):
            continue
        place = (namespace_of(X), device_of(X))
        if found is None:
            found = place
        elif place[0] is not found[0] or not same_device(place[1], found[1]):
            raise ValueError(
                f"Arrays of different libraries or devices in one call ({place_name(X)} "
                "and another): move them to one place first (kernelmaps.move_to for an "
                "estimator)."
            )
    return found if found is not None else (numpy_namespace(), "cpu")


def on_host(function: Any, *arrays: Any, dtype: Any = None) -> Any:
    """``function(*arrays)`` for a function of NumPy arrays only (SciPy's, scikit-learn's,
    a compiled kernel): NumPy arrays go to it as they are; arrays of another library are
    copied to the host, and the result (an array, or a tuple of arrays) goes back to their
    namespace and device, in ``dtype`` (default: the first array's).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._array_api import on_host
    >>> on_host(np.linalg.eigvalsh, np.eye(2)).tolist()
    [1.0, 1.0]
    """
    xp, device = get_namespace(*arrays)
    if is_numpy(xp):
        return function(*arrays)
    if dtype is None:
        dtype = next(a.dtype for a in arrays if _is_array(a))
    out = function(*(to_numpy(a) if _is_array(a) else a for a in arrays))
    if isinstance(out, tuple):
        return tuple(to_namespace(o, xp, device, dtype=dtype) for o in out)
    return to_namespace(out, xp, device, dtype=dtype)


def placed(value: Any, xp: Any, device: Any) -> Any:
    """``value`` (an estimator, an array, a container of them) with its arrays in ``xp``
    on ``device``: ``value`` itself where they are there already (NumPy's fitted state
    for NumPy work costs nothing), else :func:`move_arrays`'s copy.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._array_api import numpy_namespace, placed
    >>> A = np.ones(2)
    >>> placed(A, numpy_namespace(), "cpu") is A
    True
    """
    fitted = fitted_array(value)
    there = fitted is None or (
        isinstance(fitted, np.ndarray)
        if is_numpy(xp)
        else _is_array(fitted)
        and namespace_of(fitted) is xp
        and same_device(device_of(fitted), device)
    )
    return value if there else move_arrays(value, xp, device)


def namespace_of(X: Any) -> Any:
    """The array API namespace of ``X`` (``array-api-compat``'s wrapper where the library
    needs one, e.g. for PyTorch)."""
    return compat_module().array_namespace(X)


def device_of(X: Any) -> Any:
    """The device of ``X`` (``"cpu"`` for NumPy)."""
    return compat_module().device(X)


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
    xp, device = get_namespace(X)
    return (xp.float64, xp.float32) if supports_float64(xp, device) else (xp.float32,)


def to_numpy(x: Any) -> np.ndarray:
    """``x`` as a NumPy array on the host (a copy when it lives on a device); NumPy arrays
    and SciPy sparse matrices as they are."""
    if isinstance(x, np.ndarray) or not _is_array(x):
        return x
    compat = compat_module()
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
        if dtype is not None:
            x = x.astype(host_dtype(dtype), copy=False)
            dtype = None
    return xp.asarray(x, dtype=dtype, device=device, copy=True)


def _namespace_from(target: Any) -> tuple[Any, Any]:
    """``(xp, device)`` named by ``target``: an array, a namespace or a library's name."""
    if isinstance(target, str):
        import importlib

        target = importlib.import_module(target)
    if target is np or isinstance(target, np.ndarray):
        return np, "cpu"
    if _is_array(target):
        return namespace_of(target), device_of(target)
    return compat_module().array_namespace(target.asarray([0.0])), None


def move_arrays(value: Any, xp: Any, device: Any) -> Any:
    """``value`` with every array in it (in lists, tuples, dicts and estimators too, and
    in the objects whose class sets ``_moves_with_estimator``, such as the statistics of a
    ridge fit) made an array of ``xp`` on ``device``; strings and object arrays stay as
    they are."""
    if isinstance(value, np.ndarray) and value.dtype.kind not in "biuf":
        return value
    if isinstance(value, np.ndarray) or _is_array(value):
        return to_namespace(value, xp, device)
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
    return move_arrays(estimator, xp, target_device if device is None else device)


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


#: The ``what`` of the TF32 warnings given in this process (each is given once).
_WARNED_TF32: set[str] = set()


def _torch_tf32(device_type: str) -> bool:
    """Whether PyTorch runs float32 matrix products on devices of ``device_type`` in a
    reduced precision (TF32, or bfloat16 with ``set_float32_matmul_precision("medium")``).

    Reads PyTorch's ``fp32_precision`` settings where they exist (PyTorch 2.9 and later:
    ``torch.backends.cuda.matmul.fp32_precision``, ``"none"`` deferring to
    ``torch.backends.fp32_precision``), which reflect the legacy setters too; the legacy
    getters otherwise, which refuse (``RuntimeError``) once the new settings are used.
    Never raises.  Only CUDA's products are affected (PyTorch's documented scope).

    Examples
    --------
    >>> from kernelmaps._array_api import _torch_tf32
    >>> _torch_tf32("cpu")
    False
    """
    if device_type != "cuda":
        return False
    import torch

    matmul = torch.backends.cuda.matmul
    precision = getattr(matmul, "fp32_precision", None)
    if precision is not None:
        if precision == "none":
            precision = getattr(torch.backends, "fp32_precision", "none")
        return precision not in ("ieee", "none")
    try:
        return torch.get_float32_matmul_precision() != "highest" or bool(matmul.allow_tf32)
    except RuntimeError:  # pragma: no cover - PyTorch with both APIs but no new getter
        return False


def warn_if_tf32(X: Any, what: str) -> None:
    """Warn once per ``what`` and process when float32 matrix products on ``X``'s device
    run in TF32 (10 bits of mantissa), which makes ``what`` (the phases ``w . x`` of a
    map, the kernel blocks, the Gram blocks) noise at the 1e-3 level."""
    if isinstance(X, np.ndarray) or what in _WARNED_TF32 or host_dtype(X.dtype) != np.float32:
        return
    compat = compat_module()
    reduced = False
    if compat.is_torch_array(X):
        reduced = _torch_tf32(X.device.type)
    elif compat.is_cupy_array(X):
        reduced = os.environ.get("CUPY_TF32", "0") != "0"
    if reduced:
        _WARNED_TF32.add(what)
        warnings.warn(
            f"float32 matrix products on this device run in TF32 (10-bit mantissa), which "
            f"makes {what} noise: turn it off with "
            "torch.backends.cuda.matmul.fp32_precision = 'ieee' (older PyTorch: "
            "torch.set_float32_matmul_precision('highest')); CuPy: unset CUPY_TF32; or "
            "pass float64 input.",
            UserWarning,
            stacklevel=3,
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
