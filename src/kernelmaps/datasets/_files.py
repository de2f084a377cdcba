"""Loading user data files: CSV, svmlight/libsvm, ``.npy`` and ``.npz``.

Every loader returns a :class:`Dataset` whose features are finite float64 numbers.  Text
files and ``.npy`` arrays may be compressed (``.gz``, ``.bz2``, ``.xz``), recognised by
their last suffix; a UTF-8 byte order mark (Excel's "CSV UTF-8") is skipped.  Bad input
raises :class:`DataFileError`, a ``ValueError`` whose one-line message names the file, the
line (1-based, counting the header) or the array row, what is wrong and the fix: damaged or
truncated compressed streams, archives and arrays, text that is not UTF-8, empty files,
ragged rows, duplicate column names, cells that are not numbers, NaN, infinite values and
numbers beyond the float64 range (about 1.8e308 in absolute value).  Arrays of Python
objects are never loaded (``allow_pickle=False``: unpickling a file can run code).  A file
whose dense feature matrix would not fit in the available memory raises
:class:`~kernelmaps.exceptions.InsufficientMemoryError` before anything is allocated.
"""

from __future__ import annotations

import bz2
import codecs
import contextlib
import csv
import dataclasses
import errno
import gzip
import io
import lzma
import math
import numbers
import os
import tokenize
import zipfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import numpy as np
import scipy.sparse as sp

from .._memory import check_memory, format_bytes

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
_COMPRESSION_NAMES = {".gz": "gzip", ".bz2": "bzip2", ".xz": "xz"}

_NPY_MAGIC = b"\x93NUMPY"
_ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")
#: Signatures of binary formats, to say what a file that is not text really is.
_SIGNATURES = (
    (b"\x1f\x8b", "gzip-compressed; add .gz to its name"),
    (b"BZh", "bzip2-compressed; add .bz2 to its name"),
    (b"\xfd7zXZ\x00", "xz-compressed; add .xz to its name"),
    (_NPY_MAGIC, "a NumPy .npy array; name it .npy"),
    (b"PK\x03\x04", "a zip archive (an .npz archive, or an Excel workbook: export it as CSV)"),
)
_RANGE = "beyond the float64 range (about 1.8e308 in absolute value)"


def _cause(exc: BaseException, limit: int = 200) -> str:
    """The text of a reader's exception for a one-line message: whitespace collapsed, cut
    to ``limit`` characters (zipfile quotes whole damaged headers, raw bytes included)."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


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


def _open_binary(path: Path) -> IO[bytes]:
    """``path`` opened for reading bytes, decompressed by its suffix."""
    _, compression = _suffixes(path)
    if compression is None:
        return open(path, "rb")
    opened: IO[bytes] = _COMPRESSED[compression](path, "rb")
    return opened


def _open_text(path: Path) -> IO[str]:
    """``path`` as UTF-8 text, decompressed, without a byte order mark, newlines kept."""
    return io.TextIOWrapper(_open_binary(path), encoding="utf-8-sig", newline="")


def _shown(text: str, limit: int = 40) -> str:
    """``repr(text)``, shortened to about ``limit`` characters."""
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _stream_problem(path: Path, exc: BaseException) -> str:
    """What a damaged or cut-short file is, and the fix."""
    _, compression = _suffixes(path)
    if isinstance(exc, EOFError):
        if compression is None:
            return "ends early: the file is cut short (an incomplete copy?); copy it again."
        return (
            f"ends early: the {_COMPRESSION_NAMES[compression]} stream is cut short (an "
            "incomplete download or copy?); copy the file again."
        )
    if compression is None:
        return f"could not be read ({_cause(exc)}); the file is damaged: copy it again."
    kind = _COMPRESSION_NAMES[compression]
    return (
        f"is not a valid {kind} file ({_cause(exc)}); copy it again, or drop the {compression} "
        f"suffix if the file is not {kind}-compressed."
    )


@contextlib.contextmanager
def _reading(path: Path) -> Iterator[None]:
    """Report a damaged or truncated file read in the block as a :class:`DataFileError`.

    Decompression errors (``gzip.BadGzipFile``, ``OSError("Invalid data stream")`` of bz2,
    ``lzma.LZMAError``, ``zlib.error``) and ``EOFError`` become one line naming the file;
    operating-system errors (they carry an ``errno``: permission denied, I/O error) pass.
    """
    try:
        yield
    except (EOFError, zlib.error, lzma.LZMAError) as exc:
        raise DataFileError(path, _stream_problem(path, exc)) from None
    except OSError as exc:
        if exc.errno is not None:
            raise
        raise DataFileError(path, _stream_problem(path, exc)) from None


def _not_text(path: Path) -> DataFileError:
    """The error for a file that is not UTF-8 text: the line and byte, or its real format."""
    with _reading(path), _open_binary(path) as fh:
        head = fh.read(8)
        for signature, what in _SIGNATURES:
            if head.startswith(signature):
                return DataFileError(path, f"is not text but {what}.")
        fh.seek(0)
        decoder = codecs.getincrementaldecoder("utf-8")()
        line = 1
        while chunk := fh.read(1 << 16):
            nul = chunk.find(b"\x00")
            try:
                decoder.decode(chunk[: nul if nul >= 0 else len(chunk)])
            except UnicodeDecodeError as exc:
                line += exc.object[: exc.start].count(b"\n")
                byte = exc.object[exc.start]
                return DataFileError(
                    path,
                    f"byte 0x{byte:02x} is not UTF-8 text; save the file as UTF-8 (in Excel: "
                    "CSV UTF-8), or check that it is a text file of this format.",
                    line,
                )
            if nul >= 0:
                return DataFileError(
                    path,
                    "holds NUL bytes: it is a binary file, not text; give a text file, or name "
                    "the file by its real format.",
                    line + chunk[:nul].count(b"\n"),
                )
            line += chunk.count(b"\n")
    return DataFileError(path, "is not UTF-8 text; save the file as UTF-8.")


def _non_finite(text: str) -> tuple[str, str]:
    """What the number ``text`` (parsed to NaN or infinity) is, and the fix."""
    word = text.strip().lower().lstrip("+-")
    if "nan" in word:
        return "NaN (a missing value)", "fill in missing values first"
    if word in ("inf", "infinity"):
        return "infinite", "replace it by a finite number"
    return _RANGE, "rescale it (for example, change its unit)"


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
    first = fh.readline()
    if not first.strip():
        raise DataFileError(path, "is empty; a header line naming the columns is expected.", 1)
    if "\x00" in first:
        raise _not_text(path)
    sep = delimiter or _sniff_delimiter(path, first)
    try:
        names = next(csv.reader([first], delimiter=sep))
    except csv.Error as exc:
        raise DataFileError(path, f"the header is not valid CSV ({_cause(exc)}).", 1) from None
    header = [h.strip() for h in names]
    _check_unique(path, header)
    return header, sep


def _check_unique(path: Path, header: list[str]) -> None:
    """Refuse a header naming a column twice: columns are told apart by their names."""
    positions: dict[str, list[int]] = {}
    for j, h in enumerate(header):
        positions.setdefault(h, []).append(j + 1)
    repeated = {h: cols for h, cols in positions.items() if len(cols) > 1}
    if repeated:
        shown = "; ".join(
            f"{h!r} (columns {', '.join(map(str, cols))})" for h, cols in list(repeated.items())[:5]
        )
        raise DataFileError(
            path,
            f"the header names a column more than once: {shown}. Columns are matched by name, "
            "so give every column a distinct name.",
            1,
        )


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
    if len(header) == 1:
        raise DataFileError(
            path,
            f"the target {target!r} is the only column, so there are no feature columns; "
            "give a file with the features beside the target.",
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
        raise DataFileError(
            path,
            f"not valid CSV ({_cause(exc)}); check the quoting of that line.",
            reader.line_num + 1,
        ) from None
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
    """The feature cells as finite float64; the first bad cell is reported."""
    cells = [[row[j] for j in feature_cols] for row in rows]
    try:
        X = np.array(cells, dtype=np.float64)
    except ValueError:
        _raise_first_bad_cell(path, header, cells, line_numbers, feature_cols, has_target)
        raise DataFileError(path, "a feature cell is not a number.") from None
    finite = np.isfinite(X)
    if not finite.all():
        i, k = (int(v) for v in np.argwhere(~finite)[0])
        what, fix = _non_finite(cells[i][k])
        raise DataFileError(
            path,
            f"the value {_shown(cells[i][k])} in column {header[feature_cols[k]]!r} is {what}; "
            f"{fix}. Feature columns must hold finite numbers.",
            line_numbers[i],
        )
    return X


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
                what = f"the non-numeric value {_shown(cell)}"
                if not cell.strip():
                    what = "an empty cell"
                hint = "" if has_target else ", or name the label column with the target option"
                comma = " (a decimal comma? write 1.5, not 1,5)" if _decimal_comma(cell) else ""
                raise DataFileError(
                    path,
                    f"{what} in column {header[j]!r}{comma}. Feature columns must be numbers; "
                    f"fill in missing values and encode categories as numbers first{hint}.",
                    line_numbers[i],
                ) from None


def _decimal_comma(cell: str) -> bool:
    """Whether ``cell`` reads as a number once a decimal comma becomes a point."""
    if cell.count(",") != 1:
        return False
    try:
        _to_float(cell.replace(",", "."))
    except ValueError:
        return False
    return True


def _target_vector(
    path: Path, rows: list[list[str]], line_numbers: list[int], t_idx: int, target: str
) -> np.ndarray:
    """The target cells: finite float64 when every one is a number, else the text labels."""
    values = [row[t_idx].strip() for row in rows]
    for i, v in enumerate(values):
        if not v:
            raise DataFileError(
                path,
                f"an empty cell in the target column {target!r}. Every row needs a target.",
                line_numbers[i],
            )
    y = _numeric_target(values)
    if y.dtype.kind == "f" and not np.isfinite(y).all():
        i = int(np.argmin(np.isfinite(y)))
        what, fix = _non_finite(values[i])
        raise DataFileError(
            path,
            f"the target {_shown(values[i])} in column {target!r} is {what}; {fix}. A numeric "
            "target must hold finite numbers.",
            line_numbers[i],
        )
    return y


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
        The file, UTF-8 text (a byte order mark is skipped); ``.gz``, ``.bz2`` and ``.xz``
        files are decompressed.
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
        For an empty file, a header naming a column twice, a missing target column, rows
        whose number of cells differs from the header (ragged rows), empty, non-numeric,
        NaN or infinite feature cells and numbers beyond the float64 range, text that is
        not UTF-8 and damaged or truncated compressed files; the message names the file,
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
    try:
        with _reading(path), _open_text(path) as fh:
            header, sep = _read_header(path, fh, delimiter)
            t_idx = _target_index(path, header, target)
            rows, line_numbers = _read_rows(path, fh, sep, len(header))
    except UnicodeDecodeError:
        raise _not_text(path) from None
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
    path = Path(path)
    _check_exists(path)
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
    return Dataset(
        name=name or path.name,
        X=out,
        y=y,
        task=infer_task(y),
        description=f"{path} ({n_rows} rows, {n_cols} features, svmlight)",
        feature_names=[f"x{j + 1}" for j in range(n_cols)],
        target_name="label",
    )


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
    if fmt == "npy" and not head.startswith(_NPY_MAGIC):
        if head.startswith(_ZIP_MAGICS):
            raise DataFileError(path, "is a zip (.npz) archive, not a .npy array; name it .npz.")
        raise DataFileError(
            path,
            "is not a .npy array (it does not start with the .npy signature); save arrays "
            "with numpy.save, or name the file by its real format.",
        )
    if fmt == "npz" and not head.startswith(_ZIP_MAGICS):
        if head.startswith(_NPY_MAGIC):
            raise DataFileError(path, "is a single .npy array, not an .npz archive; name it .npy.")
        raise DataFileError(
            path,
            "is not an .npz archive (a zip file of .npy arrays); save it with "
            "numpy.savez(path, X=X, y=y), or name the file by its real format.",
        )


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
    path = Path(path)
    _check_exists(path)
    _, compression = _suffixes(path)
    with _reading(path), _open_binary(path) as fh:
        _check_signature(path, fh, "npy")
        size = None if compression is not None else os.fstat(fh.fileno()).st_size
        A = _as_2d_float(path, _read_array(path, fh, "the array", size), "the array")
    _check_finite(path, A, "the array")
    X, y = _target_column(path, A, target)
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
    path = Path(path)
    _check_exists(path)
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
            A = _as_2d_float(path, array(keys[0]), repr(keys[0]))
            _check_finite(path, A, repr(keys[0]))
            X, y = _target_column(path, A, target)
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
            f"no array named {target!r} in the archive; it holds {keys}. Give the key of the "
            "target array.",
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
        if target is not None:
            raise DataFileError(
                Path(path),
                f"a svmlight file carries its target (the first value of each line), so "
                f"target={target!r} does not apply; drop it.",
            )
        return load_svmlight(path)
    if fmt == "npy":
        return load_npy(path, target)
    if fmt == "npz":
        return load_npz(path, target)
    raise ValueError(f"format must be one of {tuple(FILE_FORMATS)}; got {format!r}.")
