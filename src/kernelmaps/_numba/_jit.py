"""How the compiled kernels are built: fixed signatures, compiled on first use, cached.

numba compiles a kernel the first time it runs, 1 to 10 s each (the fused Walsh-Hadamard
kernels are the slowest), and keeps the machine code in an on-disk cache
(``cache=True``) that the next processes load in a fraction of a second.  Two things
made processes pay the compilation again and again:

* **One specialization per argument type.**  A lazily dispatched kernel compiles a new
  version for every combination of types it meets: dtype, memory layout (``C``, ``F``,
  ``A`` for slices), read-only or writable.  A read-only input (a memory-mapped file,
  a Dask chunk), the column slice of a cos+phase layout or a transposed matrix each
  cost a new compilation in every process that first meets them.  Here every public
  kernel has a fixed table of signatures (:class:`Kernel`): dtype x index type,
  C-contiguous arrays (inputs typed read-only, which writable arrays convert to), and
  the Python wrappers of the kernel modules bring other layouts to those (a copy of
  the block, which costs less than numba's strided code would).  Only the signature
  actually used is compiled, and only once per machine.
* **No writable cache folder.**  numba caches next to the source (``__pycache__``), else
  in the user's cache folder; a read-only installation with no writable home (a
  container) found neither, and numba then refused to build the kernels at all
  (``RuntimeError: cannot cache function ...: no locator available``).  The kernels then
  go to a private folder of the temporary directory, and when even that is unusable
  they are compiled without a cache, with one :class:`RuntimeWarning` that names
  ``NUMBA_CACHE_DIR``.

``python -m kernelmaps._numba`` compiles (or loads) every signature ahead, e.g. while
building a container image, so that no process of the image compiles.
"""

from __future__ import annotations

import os
import stat
import tempfile
import threading
import warnings
from collections.abc import Callable, Hashable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import numba
import numpy as np
from numba import types

__all__ = ["Kernel", "array", "cache_folder", "flat_rows", "jit", "kernel", "kernels", "scalar"]

#: Serializes the building of dispatchers (and the temporary numba.config.CACHE_DIR).
_LOCK = threading.RLock()

#: Every kernel of fixed signatures, in definition order (for ``python -m kernelmaps._numba``).
_KERNELS: list[Kernel] = []

_NO_CACHE_WARNED = False


def scalar(dtype: Any) -> types.Type:
    """The numba type of a scalar of ``dtype`` (a numpy dtype or its name).

    Examples
    --------
    >>> from kernelmaps._numba._jit import scalar
    >>> scalar("float32")
    float32
    """
    return numba.from_dtype(np.dtype(dtype))


def array(dtype: Any, ndim: int, layout: str = "C", readonly: bool = False) -> types.Array:
    """The numba type of an array of ``dtype`` (a numpy dtype or its name).

    ``readonly=True`` for inputs: writable arrays convert to it, read-only ones match.

    Examples
    --------
    >>> from kernelmaps._numba._jit import array
    >>> array("float64", 2, readonly=True)
    Array(float64, 2, 'C', True, aligned=True)
    """
    return types.Array(scalar(dtype), ndim, layout, readonly=readonly)


def flat_rows(a: np.ndarray, width: int) -> tuple[np.ndarray, int] | None:
    """The first ``width`` columns of the 2-d ``a`` as ``(flat buffer, row stride)``.

    The flat buffer is a view from ``a[0, 0]`` to ``a[-1, width - 1]`` (no copy), for
    any ``a`` whose rows are unit-stride and do not overlap; None for other layouts
    (Fortran order, strided columns).  Row ``i`` is ``flat[i * stride : i * stride +
    width]``: a kernel typed for a 1-d C-contiguous buffer serves C arrays and their
    column ranges alike, with the unit stride that its loops need to vectorize (a 2-d
    'A' array, the type that covers both, runs them up to 6x slower).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._numba._jit import flat_rows
    >>> a = np.arange(12.0).reshape(3, 4)
    >>> flat, stride = flat_rows(a[:, 1:3], 2)
    >>> stride, flat
    (4, array([ 1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10.]))
    >>> flat_rows(np.asfortranarray(a), 4) is None
    True
    """
    n = a.shape[0]
    if a.flags.c_contiguous and a.shape[1] > 0:  # the common case, a cheap view
        return a.reshape(-1), a.shape[1]
    item = a.itemsize
    if n == 0 or width == 0:
        return np.empty(0, dtype=a.dtype), 0
    row_step, column_step = a.strides
    if (width > 1 and column_step != item) or row_step % item:
        return None
    stride = row_step // item if n > 1 else width
    if n > 1 and stride < width:  # rows overlap, or run backwards
        return None
    flat = np.lib.stride_tricks.as_strided(
        a, shape=((n - 1) * stride + width,), strides=(item,), writeable=a.flags.writeable
    )
    return flat, stride


def _private_folder() -> str | None:
    """A cache folder of this user in the temporary directory, or None if not safe.

    Created with mode 0700; an existing one is used only if it is a real folder owned by
    this user and writable by nobody else (numba's cache files are pickles: a folder
    others can write to would let them run code in this process).
    """
    uid = os.getuid() if hasattr(os, "getuid") else None
    name = "kernelmaps-numba-cache" + ("" if uid is None else f"-{uid}")
    path = os.path.join(tempfile.gettempdir(), name)
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return None
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return None
    if uid is not None and info.st_uid != uid:
        return None
    try:
        tempfile.TemporaryFile(dir=path).close()
    except OSError:
        return None
    return path


@contextmanager
def _numba_cache_dir(path: str) -> Iterator[None]:
    """numba's user cache folder set to ``path`` while a dispatcher is built (under _LOCK)."""
    saved = numba.config.CACHE_DIR
    numba.config.CACHE_DIR = path
    try:
        yield
    finally:
        numba.config.CACHE_DIR = saved


def _no_locator(exc: RuntimeError) -> bool:
    return "no locator available" in str(exc)


def _warn_no_cache() -> None:
    global _NO_CACHE_WARNED
    if not _NO_CACHE_WARNED:
        _NO_CACHE_WARNED = True
        warnings.warn(
            "kernelmaps: no writable folder for numba's cache (the package folder, the "
            "user's cache folder and the temporary folder were all refused), so the "
            "compiled kernels are compiled again in every process (seconds each); set "
            "NUMBA_CACHE_DIR to a writable folder.",
            RuntimeWarning,
            stacklevel=4,
        )


def _dispatcher(py_func: Callable[..., Any], options: Mapping[str, Any]) -> Any:
    """``numba.njit(cache=True, **options)(py_func)``, with a cache folder that works.

    numba's own choice first (``NUMBA_CACHE_DIR``, the package's ``__pycache__``, the
    user's cache folder); then :func:`_private_folder`; then no cache, with a warning.
    Functions without a source file (defined at a prompt) are not cached.
    """
    if not os.path.exists(py_func.__code__.co_filename):  # typed at a prompt or in a doctest
        return numba.njit(**options)(py_func)
    with _LOCK:
        try:
            return numba.njit(cache=True, **options)(py_func)
        except RuntimeError as exc:  # numba found no writable cache folder
            if not _no_locator(exc):
                raise
        folder = _private_folder()
        if folder is not None:
            try:
                with _numba_cache_dir(folder):
                    return numba.njit(cache=True, **options)(py_func)
            except RuntimeError as exc:
                if not _no_locator(exc):
                    raise
        _warn_no_cache()
        return numba.njit(cache=False, **options)(py_func)


def cache_folder(dispatcher: Any) -> str | None:
    """Where ``dispatcher`` keeps its compiled code (None: not cached).

    Examples
    --------
    >>> from kernelmaps._numba._jit import cache_folder
    >>> from kernelmaps._numba.hadamard import _fwht_radix2
    >>> isinstance(cache_folder(_fwht_radix2), str)
    True
    """
    cache = getattr(dispatcher, "_cache", None)
    return getattr(cache, "cache_path", None)


def jit(**options: Any) -> Callable[[Callable[..., Any]], Any]:
    """``numba.njit(cache=True, **options)`` for the kernels' helpers (compiled as called).

    For functions called only from compiled code (their types follow from the caller's
    fixed signature), with the cache folder chosen as in :func:`kernel`.

    Examples
    --------
    >>> from kernelmaps._numba._jit import jit
    >>> @jit(inline="always")
    ... def square(x):
    ...     return x * x
    >>> square(3.0)
    9.0
    """

    def decorate(py_func: Callable[..., Any]) -> Any:
        return _dispatcher(py_func, options)

    return decorate


class Kernel:
    """A compiled kernel with a fixed table of signatures, each built on its first use.

    ``kernel[key]`` is a numba dispatcher compiled for ``signatures[key]`` only (loaded
    from the on-disk cache when an earlier process compiled it): arguments convert to
    that signature where numba's conversions are safe (a writable array to a read-only
    one, a C-contiguous one to any layout), and any other argument type is a TypeError,
    never a new compilation.

    Parameters
    ----------
    py_func : callable
        The Python source of the kernel.
    signatures : mapping
        ``key -> numba signature``; keys are what the kernel module's wrapper knows from
        its arguments (a dtype name, a tuple of them).
    **options
        numba options (``nogil``, ``fastmath``, ...).

    Examples
    --------
    >>> import numpy as np
    >>> from numba import types
    >>> from kernelmaps._numba._jit import array, kernel
    >>> @kernel({"float64": types.void(array("float64", 1))}, nogil=True)
    ... def double(a):
    ...     for i in range(a.shape[0]):
    ...         a[i] *= 2
    >>> a = np.arange(3.0)
    >>> double["float64"](a)
    >>> a
    array([0., 2., 4.])
    """

    def __init__(
        self,
        py_func: Callable[..., Any],
        signatures: Mapping[Hashable, Any],
        options: Mapping[str, Any],
    ) -> None:
        self.py_func = py_func
        self.__name__ = py_func.__name__
        self.__doc__ = py_func.__doc__
        self.signatures = dict(signatures)
        self.options = dict(options)
        self._dispatchers: dict[Hashable, Any] = {}

    def __repr__(self) -> str:
        return f"<compiled kernel {self.__name__}: {', '.join(map(str, self.signatures))}>"

    def __getitem__(self, key: Hashable) -> Any:
        dispatcher = self._dispatchers.get(key)
        if dispatcher is None:
            dispatcher = self._build(key)
        return dispatcher

    def _build(self, key: Hashable) -> Any:
        if key not in self.signatures:
            raise TypeError(
                f"{self.__name__} has no compiled version for {key!r}; "
                f"it has {', '.join(map(repr, self.signatures))}."
            )
        with _LOCK:
            dispatcher = self._dispatchers.get(key)
            if dispatcher is None:
                dispatcher = _dispatcher(self.py_func, self.options)
                if hasattr(dispatcher, "compile"):  # not the function itself (NUMBA_DISABLE_JIT)
                    dispatcher.compile(self.signatures[key])  # or loads it from the cache
                    dispatcher.disable_compile()  # no other specialization, ever
                self._dispatchers[key] = dispatcher
        return dispatcher

    def dispatchers(self) -> dict[Hashable, Any]:
        """The dispatchers built so far, ``key -> dispatcher`` (``stats``: cache hits)."""
        return dict(self._dispatchers)

    def compile_all(self) -> dict[Hashable, Any]:
        """Build every signature (compiled, or loaded from the cache); the dispatchers."""
        for key in self.signatures:
            self[key]
        return self.dispatchers()


def kernel(
    signatures: Mapping[Hashable, Any], **options: Any
) -> Callable[[Callable[..., Any]], Kernel]:
    """Decorator: a :class:`Kernel` of ``signatures``, cached on disk.

    Examples
    --------
    >>> from numba import types
    >>> from kernelmaps._numba._jit import kernel
    >>> @kernel({"int64": types.int64(types.int64)})
    ... def next_int(i):
    ...     return i + 1
    >>> next_int["int64"](41)
    42
    """

    def decorate(py_func: Callable[..., Any]) -> Kernel:
        compiled = Kernel(py_func, signatures, options)
        _KERNELS.append(compiled)
        return compiled

    return decorate


def kernels() -> list[Kernel]:
    """Every kernel of fixed signatures of the imported kernel modules.

    Examples
    --------
    >>> import kernelmaps._numba.trig
    >>> from kernelmaps._numba._jit import kernels
    >>> "_cos_sin_into" in {k.__name__ for k in kernels()}
    True
    """
    return list(_KERNELS)
