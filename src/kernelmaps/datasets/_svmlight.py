"""Reading svmlight/libsvm files: ``target index:value index:value ...`` lines.

scikit-learn parses the file; when it refuses one, the first offending line is found and
reported with its number and the fix.  A file whose dense feature matrix would not fit in
the available memory raises :class:`~kernelmaps.exceptions.InsufficientMemoryError` before
anything is allocated.
"""

from __future__ import annotations

import codecs
import math
import numbers
import os
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._memory import check_memory
from ._dataset import Dataset, _file_dataset
from ._file_checks import (
    DataFileError,
    _cause,
    _existing_file,
    _non_finite,
    _not_text,
    _open_binary,
    _open_text,
    _reading,
    _shown,
)

__all__ = ["load_svmlight"]

_MAX_INDEX = 2**62  # far beyond any matrix that fits in memory; within a C long
_SYNTAX = "; a line is 'target index:value index:value ...' with increasing integer indices"
_NAME_BYTES = 80  # memory of one generated feature name ("x123"), with its list slot


def _svmlight_line_problem(raw: str, n_features: int | None, zero_based: bool | str) -> str | None:
    """Why one line of a svmlight file is invalid, or None when it is valid."""
    line = raw.split("#", 1)[0].strip()
    if not line:
        return None
    parts = line.split()
    try:
        label = float(parts[0])
    except ValueError:
        if ":" in parts[0]:
            return f"the line starts with {_shown(parts[0])}, not a target value" + _SYNTAX
        return f"the target {_shown(parts[0])} is not a number" + _SYNTAX
    if not math.isfinite(label):
        what, fix = _non_finite(parts[0])
        return f"the target {_shown(parts[0])} is {what}; {fix}"
    previous = -1
    for item in parts[1:]:
        if item.startswith("qid:"):
            continue
        index, sep, value = item.partition(":")
        if not sep:
            return f"{_shown(item)} is not an index:value pair" + _SYNTAX
        try:
            idx = int(index)
        except ValueError:
            return f"the feature index {_shown(index)} is not an integer" + _SYNTAX
        if idx < 0:
            return (
                f"the feature index {idx} is negative; feature indices start at 1 "
                "(at 0 in a zero-based file)"
            )
        if idx == 0 and zero_based is False:
            return (
                "the feature index 0 in a file read as one-based; read it with "
                "zero_based=True (or 'auto')"
            )
        if idx > _MAX_INDEX:
            return f"the feature index {idx} is too large; check the indices of that line"
        if idx <= previous:
            return (
                f"feature indices must increase along a line ({idx} follows {previous}); "
                "sort the pairs by index and give each index once"
            )
        limit = n_features - 1 if n_features is not None and zero_based is True else n_features
        if limit is not None and idx > limit:
            return f"feature index {idx} exceeds n_features={n_features}"
        try:
            number = float(value)
        except ValueError:
            return f"the value {_shown(value)} of feature {index} is not a number" + _SYNTAX
        if not math.isfinite(number):
            what, fix = _non_finite(value)
            return f"the value {_shown(value)} of feature {index} is {what}; {fix}"
        previous = idx
    return None


def _find_bad_svmlight_line(
    path: Path, n_features: int | None, zero_based: bool | str = "auto"
) -> tuple[int | None, str]:
    """The first line of ``path`` that is not valid svmlight, and why."""
    try:
        with _open_text(path) as fh:
            for number, raw in enumerate(fh, start=1):
                why = _svmlight_line_problem(raw, n_features, zero_based)
                if why is not None:
                    return number, why
    except UnicodeDecodeError:
        error = _not_text(path)
        return error.line, str(error).split(": ", 1)[1].rstrip(".")
    return None, "not a valid svmlight/libsvm file"


def _read_svmlight(
    path: Path, n_features: int | None, zero_based: bool | str
) -> tuple[sp.csr_matrix, np.ndarray]:
    """scikit-learn's parse of ``path`` (decompressed, without a byte order mark)."""
    from sklearn.datasets import load_svmlight_file

    with _open_binary(path) as fh:
        if fh.read(3) != codecs.BOM_UTF8:
            fh.seek(0)
        X, y = load_svmlight_file(fh, n_features=n_features, zero_based=zero_based)
    return X, y


def load_svmlight(
    path: str | os.PathLike[str],
    *,
    n_features: int | None = None,
    dense: bool = True,
    zero_based: bool | str = "auto",
    name: str | None = None,
) -> Dataset:
    """Load a svmlight/libsvm file (``label index:value ...``).

    Parameters
    ----------
    path : str or path-like
        The file; ``.gz``, ``.bz2`` and ``.xz`` files are decompressed.
    n_features : int, default=None
        Number of features (default: the largest index found).
    dense : bool, default=True
        Return ``X`` as a dense array (``False``: CSR matrix).  The dense size is checked
        against the available memory first.
    zero_based : bool or "auto", default="auto"
        Whether the feature indices start at 0; ``"auto"`` takes 1-based indices unless an
        index 0 occurs (scikit-learn's rule).
    name : str, default=None
        Name of the returned data set (default: the file name).

    Returns
    -------
    Dataset

    Raises
    ------
    DataFileError
        With the first offending line when the file is not valid svmlight (a negative
        index, indices out of order, a value that is not a finite number, text that is not
        UTF-8), and for damaged or truncated compressed files.
    kernelmaps.exceptions.InsufficientMemoryError
        When ``dense=True`` and the dense matrix would not fit in the available memory (a
        stray huge feature index, for example); nothing is allocated.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from kernelmaps.datasets import load_svmlight
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "toy.svm"
    >>> _ = path.write_text("1 1:0.5 3:2.0\\n-1 2:1.0\\n1 1:1.5 2:0.25\\n")
    >>> data = load_svmlight(path)
    >>> data.shape, data.y.tolist()
    ((3, 3), [1.0, -1.0, 1.0])
    """
    if n_features is not None and (
        isinstance(n_features, bool)
        or not isinstance(n_features, numbers.Integral)
        or n_features < 1
    ):
        raise ValueError(f"n_features must be None or an int >= 1; got {n_features!r}.")
    if zero_based != "auto" and not isinstance(zero_based, (bool, np.bool_)):
        raise ValueError(f"zero_based must be True, False or 'auto'; got {zero_based!r}.")
    if not isinstance(dense, (bool, np.bool_)):
        raise TypeError(f"dense must be True or False; got {dense!r}.")
    path = _existing_file(path)
    with _reading(path):
        try:
            X, y = _read_svmlight(path, n_features, zero_based)
        except (ValueError, RuntimeError, OverflowError, UnicodeDecodeError) as exc:
            line, why = _find_bad_svmlight_line(path, n_features, zero_based)
            if line is None:
                why = f"{why} ({_cause(exc)})"
            raise DataFileError(path, why + ".", line) from None
        if X.shape[0] == 0:
            raise DataFileError(
                path, "holds no data rows; a line is 'target index:value index:value ...'."
            )
        if X.nnz == 0:
            raise DataFileError(
                path, "holds no features (no index:value pair on any line)" + _SYNTAX + "."
            )
        if not (np.isfinite(X.data).all() and np.isfinite(y).all()):
            line, why = _find_bad_svmlight_line(path, n_features, zero_based)
            raise DataFileError(path, why + ".", line)
    n_rows, n_cols = X.shape
    what = f"{n_cols} feature names"
    if dense:
        what = f"the dense {n_rows} x {n_cols} feature matrix and its {what}"
    check_memory(
        (8.0 * n_rows * n_cols if dense else 0.0) + _NAME_BYTES * n_cols,
        f"{path}: {what} (the largest feature index sets {n_cols} columns)",
        "check the feature indices of the file"
        + (", or keep it sparse with load_svmlight(path, dense=False)" if dense else ""),
    )
    X = X.astype(np.float64)
    out: Any = X.toarray() if dense else sp.csr_matrix(X)
    names = [f"x{j + 1}" for j in range(n_cols)]
    return _file_dataset(path, out, y, name, names, "label", kind=", svmlight")
