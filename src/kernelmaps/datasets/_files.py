"""Loading a user data file: the reader is picked by the file kind.

:func:`load_file` reads CSV (:mod:`._csv`), svmlight/libsvm (:mod:`._svmlight`), ``.npy``
and ``.npz`` (:mod:`._numpy_files`) files, choosing by ``format`` or by the file suffix
(``FILE_FORMATS``), a compression suffix (``.gz``, ``.bz2``, ``.xz``) looked through.
Every loader returns a :class:`Dataset` whose features are finite float64 numbers, and
raises :class:`DataFileError` for bad input (see :mod:`._file_checks`).
"""

from __future__ import annotations

import os
from pathlib import Path

from ._csv import load_csv
from ._dataset import Dataset, infer_task
from ._file_checks import DataFileError, _suffixes
from ._numpy_files import load_npy, load_npz
from ._svmlight import load_svmlight

# Dataset, DataFileError, infer_task and the loaders stay importable from this module,
# where they were defined before each reader had a module of its own.
__all__ = [
    "FILE_FORMATS",
    "DataFileError",
    "Dataset",
    "file_format",
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


def file_format(path: str | os.PathLike[str]) -> str | None:
    """The format (a key of ``FILE_FORMATS``) of ``path`` by its suffix, or None.

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
