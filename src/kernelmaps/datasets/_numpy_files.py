"""Reading NumPy files: a 2-D ``.npy`` array, or an ``.npz`` archive of ``X`` and ``y``.

Each array header is checked before its data is read: arrays of Python objects are never
loaded (``allow_pickle=False``: unpickling a file can run code), a file shorter than its
header declares is reported as cut short, and an array whose float64 copy would not fit in
the available memory raises :class:`~kernelmaps.exceptions.InsufficientMemoryError` before
anything is allocated.  Features must be finite numbers.
"""

from __future__ import annotations

import errno
import math
import os
import tokenize
import zipfile
from pathlib import Path
from typing import IO, Any

import numpy as np

from .._memory import check_memory, format_bytes
from .._suggest import did_you_mean
from ._dataset import Dataset, _file_dataset
from ._file_checks import (
    _COMPRESSION_NAMES,
    _NPY_MAGIC,
    _ZIP_MAGICS,
    DataFileError,
    _cause,
    _existing_file,
    _open_binary,
    _reading,
    _suffixes,
)

__all__ = ["load_npy", "load_npz"]

#: Per file kind: its signatures, those of the other kind and what a file starting with
#: them is, and what a file starting with neither is.
_KIND_SIGNATURES = {
    "npy": (
        (_NPY_MAGIC,),
        _ZIP_MAGICS,
        "is a zip (.npz) archive, not a .npy array; name it .npz.",
        "is not a .npy array (it does not start with the .npy signature); save arrays "
        "with numpy.save, or name the file by its real format.",
    ),
    "npz": (
        _ZIP_MAGICS,
        (_NPY_MAGIC,),
        "is a single .npy array, not an .npz archive; name it .npy.",
        "is not an .npz archive (a zip file of .npy arrays); save it with "
        "numpy.savez(path, X=X, y=y), or name the file by its real format.",
    ),
}


def _as_2d_float(path: Path, X: Any, key: str) -> np.ndarray:
    X = np.asarray(X)
    _check_array_kind(path, X.shape, X.dtype, key)
    return X.astype(np.float64, copy=False)


def _check_array_kind(
    path: Path, shape: tuple[int, ...], dtype: np.dtype[Any], key: str, target: bool = False
) -> None:
    """Refuse arrays of Python objects, and features that are not a 2-D array of numbers."""
    if dtype.hasobject:
        raise DataFileError(
            path,
            f"{key} holds Python objects (dtype {dtype}), which are never loaded: unpickling "
            "a file can run code (allow_pickle=False). Save numeric arrays instead, for "
            "example X.astype(float).",
        )
    if target:
        if dtype.kind not in "biufUS":
            raise DataFileError(
                path, f"{key} holds {dtype} values; a target holds numbers or text labels."
            )
        return
    if dtype.kind not in "biuf":
        raise DataFileError(
            path, f"{key} holds {dtype} values; numbers are needed (save a numeric array)."
        )
    if len(shape) != 2:
        raise DataFileError(
            path,
            f"{key} has shape {shape}; a 2-D array (n_samples, n_features) is needed "
            "(X.reshape(-1, 1) makes one column).",
        )


def _check_signature(path: Path, fh: IO[bytes], fmt: str) -> None:
    """Refuse an empty file, or one that is not a .npy array / .npz archive, by its start."""
    head = fh.read(8)
    fh.seek(0)
    if not head:
        how = "numpy.save(path, X)" if fmt == "npy" else "numpy.savez(path, X=X, y=y)"
        raise DataFileError(path, f"is empty; save the data with {how}.")
    own, other, other_message, message = _KIND_SIGNATURES[fmt]
    if not head.startswith(own):
        raise DataFileError(path, other_message if head.startswith(other) else message)


def _read_array(
    path: Path, fh: IO[bytes], key: str, size: int | None, target: bool = False
) -> np.ndarray:
    """One .npy array from ``fh``, its header checked before reading the data.

    Features must be a 2-D array of numbers, a ``target`` numbers or text.  ``size`` is the
    number of bytes of the stream when known: a file shorter than its header declares is
    reported as cut short, without allocating the declared array.
    """
    start = fh.tell()
    fmt = np.lib.format
    try:
        version = fmt.read_magic(fh)
        read_header = {(1, 0): fmt.read_array_header_1_0, (2, 0): fmt.read_array_header_2_0}
        if version in read_header:
            shape, _, dtype = read_header[version](fh)
            _check_array_kind(path, shape, dtype, key, target)
            count = math.prod(shape)
            n_bytes = count * dtype.itemsize
            dims = " x ".join(map(str, shape)) or "0-d"
            if size is not None and size - (fh.tell() - start) < n_bytes:
                raise DataFileError(
                    path,
                    f"{key} is cut short: its header declares a {dims} "
                    f"{dtype} array ({format_bytes(n_bytes)}) but the file holds "
                    f"{format_bytes(size - (fh.tell() - start))} of data (an incomplete copy?); "
                    "save or copy it again.",
                )
            check_memory(
                n_bytes + (8 * count if dtype != np.float64 else 0),
                f"{path}: {key}, a {dims} {dtype} array read as float64",
                "load a part of the rows, or use a machine with more memory",
            )
        fh.seek(start)
        return fmt.read_array(fh, allow_pickle=False)
    except (ValueError, SyntaxError, tokenize.TokenError, EOFError) as exc:
        # a corrupt header fails in numpy's parser (literal_eval, tokenize)
        if isinstance(exc, DataFileError):
            raise
        raise DataFileError(
            path,
            f"{key} is not a readable .npy array ({_cause(exc)}); save it again with numpy.save.",
        ) from None


def _check_shape(path: Path, X: np.ndarray, key: str) -> None:
    """Refuse features without rows or without columns."""
    if X.shape[0] == 0:
        raise DataFileError(path, f"{key} has no rows; a data file needs at least one.")
    if X.shape[1] == 0:
        raise DataFileError(
            path, f"{key} has no feature columns; give the features beside the target."
        )


def _check_finite(path: Path, values: np.ndarray | None, key: str) -> None:
    """Refuse NaN or infinite numbers in an array read from ``path``, naming the first."""
    if values is None or values.dtype.kind != "f":
        return
    finite = np.isfinite(values)
    if finite.all():
        return
    place = tuple(int(v) for v in np.argwhere(~finite)[0])
    where = f"row {place[0]}" + (f", column {place[1]}" if len(place) > 1 else "")
    value = float(values[place])
    fix = "fill in missing values first" if math.isnan(value) else "replace it by a finite number"
    raise DataFileError(
        path, f"{key} holds {value} at {where} (counting from 0); {fix}: the data must be finite."
    )


def _target_column(
    path: Path, A: np.ndarray, key: str, target: str | int | None
) -> tuple[Any, Any]:
    """The features and target of the single array ``A``, checked to be finite numbers.

    The features are the columns of ``A`` but ``target``; the target is that column
    (``None`` without a target).
    """
    A = _as_2d_float(path, A, key)
    _check_finite(path, A, key)
    if target is None:
        return A, None
    try:
        col = int(target)
    except (TypeError, ValueError):
        raise DataFileError(
            path,
            f"target {target!r} is not a column number; an array file has no column names, "
            "so give the target as a column index (0-based, -1 for the last).",
        ) from None
    if not -A.shape[1] <= col < A.shape[1]:
        raise DataFileError(
            path,
            f"target column {col} is out of range for {A.shape[1]} columns; give an index "
            f"from {-A.shape[1]} to {A.shape[1] - 1}.",
        )
    col %= A.shape[1]
    return np.delete(A, col, axis=1), A[:, col]


def _array_dataset(
    path: Path, X: np.ndarray, y: Any, name: str | None, target_name: str | None, key: str
) -> Dataset:
    """A :class:`Dataset` of arrays read from ``path``, with columns named ``x0, x1, ...``."""
    _check_shape(path, X, key)
    return _file_dataset(path, X, y, name, [f"x{j}" for j in range(X.shape[1])], target_name)


def load_npy(
    path: str | os.PathLike[str], target: str | int | None = None, *, name: str | None = None
) -> Dataset:
    """Load a 2-D ``.npy`` array; ``target`` is a column index (``-1``: the last).

    Parameters
    ----------
    path : str or path-like
        The ``.npy`` file, optionally compressed (``.gz``, ``.bz2``, ``.xz``).  Arrays of
        Python objects are refused, never unpickled.
    target : int, default=None
        Column of the target (0-based, negative from the end); ``None``: unlabelled.
    name : str, default=None
        Name of the returned data set (default: the file name).

    Returns
    -------
    Dataset
        The columns of the array but the target one as ``X``; that column as ``y``.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> import numpy as np
    >>> from kernelmaps.datasets import load_npy
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "toy.npy"
    >>> np.save(path, np.array([[0.1, 0.2, 0.0], [0.3, 0.4, 1.0], [0.5, 0.6, 1.0]]))
    >>> data = load_npy(path, target=-1)
    >>> data.shape, data.y.tolist()
    ((3, 2), [0.0, 1.0, 1.0])
    """
    path = _existing_file(path)
    _, compression = _suffixes(path)
    with _reading(path), _open_binary(path) as fh:
        _check_signature(path, fh, "npy")
        size = None if compression is not None else os.fstat(fh.fileno()).st_size
        A = _read_array(path, fh, "the array", size)
    X, y = _target_column(path, A, "the array", target)
    return _array_dataset(path, X, y, name, None if y is None else str(target), "the array")


def load_npz(
    path: str | os.PathLike[str], target: str | int | None = None, *, name: str | None = None
) -> Dataset:
    """Load an ``.npz`` archive holding ``X`` (and ``y``), or one 2-D array.

    The features are read from the key ``X`` (or ``data``), the target from ``y`` (or
    ``target``); ``target`` may name another key of the archive, or be a column index
    when the archive holds a single array.

    Parameters
    ----------
    path : str or path-like
        The ``.npz`` archive, not compressed itself (``numpy.savez_compressed``
        compresses inside).  Arrays of Python objects are refused, never unpickled.
    target : str or int, default=None
        Key of the target array, or a column index for a single-array archive.
    name : str, default=None
        Name given to the data set (the file name when omitted).

    Returns
    -------
    Dataset
        ``X`` from the key ``X`` (or ``data``), ``y`` from the target key.

    Examples
    --------
    >>> import numpy as np
    >>> import pathlib, tempfile
    >>> from kernelmaps.datasets import load_npz
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "toy.npz"
    >>> np.savez(path, X=np.eye(4), y=np.array([0.5, 1.5, 2.5, 3.5]))
    >>> data = load_npz(path)
    >>> data.shape, data.target_name
    ((4, 4), 'y')
    """
    path = _existing_file(path)
    _, compression = _suffixes(path)
    if compression is not None:
        raise DataFileError(
            path,
            f"an .npz archive is read as it is, not {_COMPRESSION_NAMES[compression]}-"
            f"compressed; decompress it first (numpy.savez_compressed compresses inside).",
        )
    with _reading(path), open(path, "rb") as fh:
        _check_signature(path, fh, "npz")
        try:
            with zipfile.ZipFile(fh) as archive:
                return _npz_dataset(path, archive, target, name)
        except (zipfile.BadZipFile, NotImplementedError, RuntimeError, OSError) as exc:
            # a damaged directory can send zipfile to seek before the start (EINVAL)
            if isinstance(exc, OSError) and exc.errno != errno.EINVAL:
                raise
            raise DataFileError(
                path,
                f"is not a readable .npz archive ({_cause(exc)}); the file is damaged or cut "
                "short: save or copy it again.",
            ) from None


def _npz_dataset(
    path: Path, archive: zipfile.ZipFile, target: str | int | None, name: str | None
) -> Dataset:
    """The :class:`Dataset` of an open .npz ``archive`` (see :func:`load_npz`)."""
    members = {
        info.filename[: -len(".npy")]: info
        for info in archive.infolist()
        if info.filename.endswith(".npy")
    }
    keys = list(members)

    def array(key: str, is_target: bool = False) -> np.ndarray:
        info = members[key]
        with archive.open(info) as fh:
            return _read_array(path, fh, repr(key), info.file_size, is_target)

    x_key = next((k for k in ("X", "data") if k in keys), None)
    if x_key is None:
        if len(keys) == 1:
            X, y = _target_column(path, array(keys[0]), repr(keys[0]), target)
            return _array_dataset(path, X, y, name, None, repr(keys[0]))
        raise DataFileError(
            path,
            f"no array named 'X' (or 'data'); the archive holds {keys}. "
            "Save it with np.savez(path, X=X, y=y).",
        )
    X = _as_2d_float(path, array(x_key), repr(x_key))
    _check_finite(path, X, repr(x_key))
    if target is not None and not isinstance(target, int) and str(target) in keys:
        y_key: str | None = str(target)
    elif target is not None:
        raise DataFileError(
            path,
            f"no array named {target!r} in the archive; it holds {keys}."
            f"{did_you_mean(str(target), keys)} Give the key of the target array.",
        )
    else:
        y_key = next((k for k in ("y", "target") if k in keys), None)
    y = None if y_key is None else array(y_key, is_target=True).ravel()
    _check_finite(path, y, repr(y_key))
    if y is not None and y.shape[0] != X.shape[0]:
        raise DataFileError(
            path,
            f"{x_key!r} has {X.shape[0]} rows but {y_key!r} has {y.shape[0]} values; "
            "give one target value per row.",
        )
    return _array_dataset(path, X, y, name, y_key, repr(x_key))
