"""Loading user data files: CSV, svmlight/libsvm, ``.npy`` and ``.npz``.

Every loader returns a :class:`Dataset`.  Files may be compressed (``.gz``, ``.bz2``,
``.xz``), recognised by their last suffix.  Bad input raises :class:`DataFileError`, a
``ValueError`` whose message names the file, the line (1-based, counting the header) and
the fix.
"""

from __future__ import annotations

import bz2
import csv
import dataclasses
import gzip
import io
import lzma
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import numpy as np
import scipy.sparse as sp

__all__ = [
    "FILE_FORMATS",
    "DataFileError",
    "Dataset",
    "infer_task",
    "load_csv",
    "load_file",
    "load_npy",
    "load_npz",
    "load_svmlight",
]

#: File formats understood by :func:`load_file`, with their suffixes.
FILE_FORMATS = {
    "csv": (".csv", ".tsv", ".txt", ".data"),
    "svmlight": (".svm", ".svmlight", ".libsvm", ".scale", ".t", ".trn", ".tst"),
    "npy": (".npy",),
    "npz": (".npz",),
}

_COMPRESSED: dict[str, Callable[..., Any]] = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}


class DataFileError(ValueError):
    """A data file that cannot be read as asked; the message names the file and line.

    Examples
    --------
    >>> from kernelmaps.datasets import DataFileError
    >>> err = DataFileError("data.csv", "a ragged row.", line=3)
    >>> str(err), isinstance(err, ValueError)
    ('data.csv, line 3: a ragged row.', True)
    """

    def __init__(self, path: str | os.PathLike[str], message: str, line: int | None = None):
        self.path = str(path)
        self.line = line
        where = f"{self.path}, line {line}" if line is not None else self.path
        super().__init__(f"{where}: {message}")


@dataclasses.dataclass
class Dataset:
    """A data set: features, target and what they are.

    Attributes
    ----------
    name : str
        Short name (``"letter"``, or the file name for user data).
    X : ndarray or sparse matrix of shape (n_samples, n_features)
        Features, float64.
    y : ndarray of shape (n_samples,) or None
        Target; ``None`` for unlabelled data.
    task : {"classification", "regression", "unlabelled"}
        What ``y`` is.
    description : str
        Where the data comes from and what it holds.
    feature_names : list of str
        One name per column of ``X``.
    target_name : str or None
        Name of the target column.
    source : str
        The origin of the data (paper, archive, repository).
    licence : str
        The licence under which it is distributed.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.datasets import Dataset
    >>> data = Dataset("toy", X=np.zeros((5, 3)), y=np.arange(5.0), task="regression")
    >>> X, y = data
    >>> data.shape, y.shape
    ((5, 3), (5,))
    """

    name: str
    X: Any
    y: np.ndarray | None
    task: str
    description: str = ""
    feature_names: list[str] = dataclasses.field(default_factory=list)
    target_name: str | None = None
    source: str = ""
    licence: str = ""

    def __iter__(self) -> Iterator[Any]:
        """Unpack as ``X, y = dataset``."""
        yield self.X
        yield self.y

    @property
    def shape(self) -> tuple[int, int]:
        """``X.shape``."""
        return (int(self.X.shape[0]), int(self.X.shape[1]))


def _suffixes(path: Path) -> tuple[str, str | None]:
    """(format suffix, compression suffix) of ``path``, lower-cased."""
    suffixes = [s.lower() for s in path.suffixes]
    compression = None
    if suffixes and suffixes[-1] in _COMPRESSED:
        compression = suffixes.pop()
    return (suffixes[-1] if suffixes else ""), compression


def _open_text(path: Path) -> IO[str]:
    _, compression = _suffixes(path)
    if compression is None:
        return open(path, encoding="utf-8", newline="")
    return io.TextIOWrapper(_COMPRESSED[compression](path, "rb"), encoding="utf-8", newline="")


def _check_exists(path: Path) -> None:
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file. Check the path and its spelling.")
    if path.is_dir():
        raise DataFileError(path, "is a directory; give the path of a data file.")


def infer_task(y: np.ndarray, max_classes: int = 50) -> str:
    """``"classification"`` or ``"regression"`` for a target column.

    Text labels, booleans and integer-valued targets with at most ``max_classes`` distinct
    values (and fewer distinct values than half the rows) are classes; any other numeric
    target is a regression target.

    Examples
    --------
    >>> from kernelmaps.datasets import infer_task
    >>> infer_task([0, 1, 1, 0, 2, 2]), infer_task([0.5, 1.25, 3.0]), infer_task(["a", "b"])
    ('classification', 'regression', 'classification')
    """
    y = np.asarray(y)
    if y.dtype.kind in "OUSb":
        return "classification"
    finite = y[np.isfinite(y)]
    if finite.size == 0:
        return "regression"
    n_unique = np.unique(finite).size
    integral = bool(np.all(finite == np.round(finite)))
    if integral and n_unique <= max_classes and n_unique <= max(2, finite.size // 2):
        return "classification"
    return "regression"


def _to_float(cell: str) -> float:
    return float(cell)


def _numeric_target(values: list[str]) -> np.ndarray:
    try:
        return np.array(values, dtype=np.float64)
    except ValueError:
        return np.array(values, dtype=object)


def _sniff_delimiter(path: Path, header: str) -> str:
    if (path.suffixes and path.suffixes[0].lower() == ".tsv") or "\t" in header:
        return "\t"
    if header.count(";") > header.count(","):
        return ";"
    return ","


def _read_header(path: Path, fh: IO[str], delimiter: str | None) -> tuple[list[str], str]:
    """The column names of the first line of ``fh``, and the field separator."""
    try:
        first = fh.readline()
    except UnicodeDecodeError:
        raise DataFileError(path, "is not a UTF-8 text file; is it a CSV file?") from None
    if not first.strip():
        raise DataFileError(path, "is empty; a header line naming the columns is expected.", 1)
    sep = delimiter or _sniff_delimiter(path, first)
    return [h.strip() for h in next(csv.reader([first], delimiter=sep))], sep


def _target_index(path: Path, header: list[str], target: str | None) -> int:
    """Position of ``target`` in ``header`` (``-1`` without a target)."""
    if target is None:
        return -1
    if target not in header:
        shown = ", ".join(header[:20]) + (", ..." if len(header) > 20 else "")
        raise DataFileError(
            path,
            f"no column named {target!r} in the header. The columns are: {shown}. "
            "Pass the name of the target column as it appears there.",
            1,
        )
    return header.index(target)


def _read_rows(
    path: Path, fh: IO[str], sep: str, n_columns: int
) -> tuple[list[list[str]], list[int]]:
    """The non-blank data rows after the header, with their 1-based line numbers."""
    rows: list[list[str]] = []
    line_numbers: list[int] = []
    reader = csv.reader(fh, delimiter=sep)
    try:
        for row in reader:
            line = reader.line_num + 1
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            if len(row) != n_columns:
                raise DataFileError(
                    path,
                    f"{len(row)} cells where the header has {n_columns} (ragged row). "
                    "Every row needs one cell per column.",
                    line,
                )
            rows.append(row)
            line_numbers.append(line)
    except csv.Error as exc:
        raise DataFileError(path, f"not valid CSV ({exc}).", reader.line_num + 1) from None
    except UnicodeDecodeError:
        raise DataFileError(path, "is not a UTF-8 text file.", reader.line_num + 1) from None
    if not rows:
        raise DataFileError(path, "holds a header but no data rows.", 2)
    return rows, line_numbers


def _feature_matrix(
    path: Path,
    header: list[str],
    rows: list[list[str]],
    line_numbers: list[int],
    feature_cols: list[int],
    has_target: bool,
) -> np.ndarray:
    """The feature cells as float64; the first cell that is not a number is reported."""
    cells = [[row[j] for j in feature_cols] for row in rows]
    try:
        return np.array(cells, dtype=np.float64)
    except ValueError:
        _raise_first_bad_cell(path, header, cells, line_numbers, feature_cols, has_target)
        raise  # pragma: no cover - np.array failed but every cell converts


def _raise_first_bad_cell(
    path: Path,
    header: list[str],
    cells: list[list[str]],
    line_numbers: list[int],
    feature_cols: list[int],
    has_target: bool,
) -> None:
    """Raise a :class:`DataFileError` naming the first feature cell that is not a number."""
    for i, row in enumerate(cells):
        for j, cell in zip(feature_cols, row, strict=True):
            try:
                _to_float(cell)
            except ValueError:
                what = "an empty cell" if not cell.strip() else f"the non-numeric value {cell!r}"
                hint = "" if has_target else ", or name the label column with the target option"
                raise DataFileError(
                    path,
                    f"{what} in column {header[j]!r}. Feature columns must be numbers; "
                    f"fill in missing values and encode categories as numbers first{hint}.",
                    line_numbers[i],
                ) from None


def _target_vector(
    path: Path, rows: list[list[str]], line_numbers: list[int], t_idx: int, target: str
) -> np.ndarray:
    """The target cells: float64 when every one is a number, else the text labels."""
    values = [row[t_idx].strip() for row in rows]
    for i, v in enumerate(values):
        if not v:
            raise DataFileError(
                path,
                f"an empty cell in the target column {target!r}. Every row needs a target.",
                line_numbers[i],
            )
    return _numeric_target(values)


def load_csv(
    path: str | os.PathLike[str],
    target: str | None = None,
    *,
    delimiter: str | None = None,
    name: str | None = None,
) -> Dataset:
    """Load a delimited text file whose first line names the columns.

    Parameters
    ----------
    path : str or path-like
        The file; ``.gz``, ``.bz2`` and ``.xz`` files are decompressed.
    target : str, default=None
        Name of the target column; the other columns are the features.  ``None`` loads
        every column as a feature (unlabelled data).
    delimiter : str, default=None
        Field separator; by default a tab for ``.tsv`` files or when the header holds a
        tab, a semicolon when the header holds more of those than commas, else a comma.
    name : str, default=None
        Name of the returned data set (default: the file name).

    Returns
    -------
    Dataset
        Features as float64.  The target is float64 when every cell is a number, else
        an object array of the text labels.

    Raises
    ------
    FileNotFoundError
        When the file does not exist.
    DataFileError
        For a missing target column, rows whose number of cells differs from the header
        (ragged rows), empty or non-numeric feature cells; the message names the file,
        the line and the column.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from kernelmaps.datasets import load_csv
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "toy.csv"
    >>> _ = path.write_text("a,b,label\\n0.5,1.0,yes\\n1.5,2.0,no\\n2.5,3.0,yes\\n")
    >>> data = load_csv(path, target="label")
    >>> data.shape, data.task, data.feature_names
    ((3, 2), 'classification', ['a', 'b'])
    """
    path = Path(path)
    _check_exists(path)
    with _open_text(path) as fh:
        header, sep = _read_header(path, fh, delimiter)
        t_idx = _target_index(path, header, target)
        rows, line_numbers = _read_rows(path, fh, sep, len(header))
    feature_cols = [j for j in range(len(header)) if j != t_idx]
    X = _feature_matrix(path, header, rows, line_numbers, feature_cols, target is not None)
    y: np.ndarray | None = None
    task = "unlabelled"
    if target is not None:
        y = _target_vector(path, rows, line_numbers, t_idx, target)
        task = infer_task(y)
    return Dataset(
        name=name or path.name,
        X=X,
        y=y,
        task=task,
        description=f"{path} ({X.shape[0]} rows, {X.shape[1]} features)",
        feature_names=[header[j] for j in feature_cols],
        target_name=target,
    )


def _find_bad_svmlight_line(path: Path, n_features: int | None) -> tuple[int | None, str]:
    """The first line of ``path`` that is not valid svmlight, and why."""
    with _open_text(path) as fh:
        for number, raw in enumerate(fh, start=1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split()
            try:
                float(parts[0])
            except ValueError:
                if ":" in parts[0]:
                    return number, f"the line starts with {parts[0]!r}, not a target value"
                return number, f"the target {parts[0]!r} is not a number"
            previous = -1
            for item in parts[1:]:
                if item.startswith("qid:"):
                    continue
                index, sep, value = item.partition(":")
                if not sep:
                    return number, f"{item!r} is not an index:value pair"
                try:
                    idx = int(index)
                except ValueError:
                    return number, f"the feature index {index!r} is not an integer"
                try:
                    float(value)
                except ValueError:
                    return number, f"the value {value!r} of feature {index} is not a number"
                if idx <= previous:
                    return number, "feature indices must increase along a line"
                if idx < 0:
                    return number, f"the feature index {idx} is negative"
                if n_features is not None and idx > n_features:
                    return number, f"feature index {idx} exceeds n_features={n_features}"
                previous = idx
    return None, "not a valid svmlight/libsvm file"


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
        The file; ``.gz`` and ``.bz2`` are decompressed.
    n_features : int, default=None
        Number of features (default: the largest index found).
    dense : bool, default=True
        Return ``X`` as a dense array (``False``: CSR matrix).
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
        With the first offending line when the file is not valid svmlight.

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
    from sklearn.datasets import load_svmlight_file

    path = Path(path)
    _check_exists(path)
    _, compression = _suffixes(path)
    try:
        if compression == ".xz":
            with lzma.open(path, "rb") as fh:
                X, y = load_svmlight_file(fh, n_features=n_features, zero_based=zero_based)
        else:
            X, y = load_svmlight_file(str(path), n_features=n_features, zero_based=zero_based)
    except (ValueError, RuntimeError, UnicodeDecodeError) as exc:
        line, why = _find_bad_svmlight_line(path, n_features)
        if line is None:
            why = f"{why} ({exc})"
        raise DataFileError(path, why + ".", line) from None
    if X.shape[0] == 0:
        raise DataFileError(path, "holds no data rows.")
    X = X.astype(np.float64)
    out: Any = X.toarray() if dense else sp.csr_matrix(X)
    return Dataset(
        name=name or path.name,
        X=out,
        y=y,
        task=infer_task(y),
        description=f"{path} ({X.shape[0]} rows, {X.shape[1]} features, svmlight)",
        feature_names=[f"x{j + 1}" for j in range(X.shape[1])],
        target_name="label",
    )


def _as_2d_float(path: Path, X: Any, key: str) -> np.ndarray:
    X = np.asarray(X)
    if X.ndim != 2:
        raise DataFileError(
            path, f"{key} has shape {X.shape}; a 2-D array (n_samples, n_features) is needed."
        )
    if X.dtype.kind not in "biuf":
        raise DataFileError(path, f"{key} holds {X.dtype} values; numbers are needed.")
    return X.astype(np.float64, copy=False)


def _target_column(path: Path, A: np.ndarray, target: str | int | None) -> tuple[Any, Any]:
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
        raise DataFileError(path, f"target column {col} is out of range for {A.shape[1]} columns.")
    col %= A.shape[1]
    return np.delete(A, col, axis=1), A[:, col]


def _array_dataset(
    path: Path, X: np.ndarray, y: Any, name: str | None, target_name: str | None
) -> Dataset:
    """A :class:`Dataset` of arrays read from ``path``, with columns named ``x0, x1, ...``."""
    return Dataset(
        name=name or path.name,
        X=X,
        y=y,
        task="unlabelled" if y is None else infer_task(y),
        description=f"{path} ({X.shape[0]} rows, {X.shape[1]} features)",
        feature_names=[f"x{j}" for j in range(X.shape[1])],
        target_name=target_name,
    )


def load_npy(
    path: str | os.PathLike[str], target: str | int | None = None, *, name: str | None = None
) -> Dataset:
    """Load a 2-D ``.npy`` array; ``target`` is a column index (``-1``: the last).

    Parameters
    ----------
    path : str or path-like
        The ``.npy`` file.
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
    path = Path(path)
    _check_exists(path)
    try:
        A = np.load(path, allow_pickle=False)
    except ValueError as exc:
        raise DataFileError(path, f"not a readable .npy array ({exc}).") from None
    A = _as_2d_float(path, A, "the array")
    X, y = _target_column(path, A, target)
    return _array_dataset(path, X, y, name, None if y is None else str(target))


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
        The ``.npz`` archive.
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
    path = Path(path)
    _check_exists(path)
    try:
        archive = np.load(path, allow_pickle=False)
    except (ValueError, OSError) as exc:
        raise DataFileError(path, f"not a readable .npz archive ({exc}).") from None
    with archive:
        keys = list(archive.keys())
        x_key = next((k for k in ("X", "data") if k in keys), None)
        if x_key is None:
            if len(keys) == 1:
                A = _as_2d_float(path, archive[keys[0]], repr(keys[0]))
                X, y = _target_column(path, A, target)
                return _array_dataset(path, X, y, name, None)
            raise DataFileError(
                path,
                f"no array named 'X' (or 'data'); the archive holds {keys}. "
                "Save it with np.savez(path, X=X, y=y).",
            )
        X = _as_2d_float(path, archive[x_key], repr(x_key))
        if target is not None and not isinstance(target, int) and str(target) in keys:
            y_key: str | None = str(target)
        elif target is not None:
            raise DataFileError(path, f"no array named {target!r} in the archive; it holds {keys}.")
        else:
            y_key = next((k for k in ("y", "target") if k in keys), None)
        y = None if y_key is None else np.asarray(archive[y_key]).ravel()
    if y is not None and y.shape[0] != X.shape[0]:
        raise DataFileError(
            path, f"{x_key!r} has {X.shape[0]} rows but {y_key!r} has {y.shape[0]} values."
        )
    return _array_dataset(path, X, y, name, y_key)


def file_format(path: str | os.PathLike[str]) -> str | None:
    """The format (a key of :data:`FILE_FORMATS`) of ``path`` by its suffix, or None.

    Parameters
    ----------
    path : str or path-like
        A file name; a compression suffix (``.gz``, ``.bz2``, ``.xz``) is looked through.

    Returns
    -------
    str or None

    Examples
    --------
    >>> from kernelmaps.datasets import file_format
    >>> file_format("data.csv.gz"), file_format("train.libsvm"), file_format("notes.pdf")
    ('csv', 'svmlight', None)
    """
    suffix, _ = _suffixes(Path(path))
    for fmt, suffixes in FILE_FORMATS.items():
        if suffix in suffixes:
            return fmt
    return None


def load_file(
    path: str | os.PathLike[str],
    target: str | int | None = None,
    *,
    format: str | None = None,
) -> Dataset:
    """Load a user data file, choosing the reader by ``format`` or the file suffix.

    Parameters
    ----------
    path : str or path-like
        A CSV file (with a header line), a svmlight/libsvm file, a ``.npy`` array or an
        ``.npz`` archive, optionally compressed.
    target : str or int, default=None
        The target: a column name for CSV, a column index for ``.npy``, a key for
        ``.npz``; svmlight files always carry theirs.
    format : {"csv", "svmlight", "npy", "npz"}, default=None
        Override the suffix-based choice.

    Returns
    -------
    Dataset

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from kernelmaps.datasets import load_file
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "toy.tsv"
    >>> _ = path.write_text("x1\\tx2\\ty\\n1\\t2\\t0.5\\n3\\t4\\t1.5\\n5\\t6\\t2.5\\n")
    >>> data = load_file(path, target="y")
    >>> data.shape, data.task
    ((3, 2), 'regression')
    """
    fmt = format or file_format(path)
    if fmt is None:
        known = ", ".join(s for v in FILE_FORMATS.values() for s in v)
        raise DataFileError(
            path,
            f"cannot tell the format from the file name; use one of the suffixes {known} "
            "(optionally followed by .gz, .bz2 or .xz).",
        )
    if fmt == "csv":
        return load_csv(path, None if target is None else str(target))
    if fmt == "svmlight":
        return load_svmlight(path)
    if fmt == "npy":
        return load_npy(path, target)
    if fmt == "npz":
        return load_npz(path, target)
    raise ValueError(f"format must be one of {tuple(FILE_FORMATS)}; got {format!r}.")
