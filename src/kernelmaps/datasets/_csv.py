"""Reading CSV files: delimited text whose first line names the columns.

The features are read as finite float64 numbers; the target column, when one is named, as
float64 when every cell is a number, else as text labels.  A bad cell is reported with
its line (1-based, counting the header) and column.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import IO

import numpy as np

from .._suggest import did_you_mean
from ._dataset import Dataset, _file_dataset
from ._file_checks import (
    DataFileError,
    _cause,
    _existing_file,
    _non_finite,
    _not_text,
    _open_text,
    _reading,
    _shown,
)

__all__ = ["load_csv"]


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
            f"no column named {target!r} in the header.{did_you_mean(target, header)} "
            f"The columns are: {shown}. "
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
    path = _existing_file(path)
    try:
        with _reading(path), _open_text(path) as fh:
            header, sep = _read_header(path, fh, delimiter)
            t_idx = _target_index(path, header, target)
            rows, line_numbers = _read_rows(path, fh, sep, len(header))
    except UnicodeDecodeError:
        raise _not_text(path) from None
    feature_cols = [j for j in range(len(header)) if j != t_idx]
    X = _feature_matrix(path, header, rows, line_numbers, feature_cols, target is not None)
    y = None if target is None else _target_vector(path, rows, line_numbers, t_idx, target)
    return _file_dataset(path, X, y, name, [header[j] for j in feature_cols], target)
