"""What the file readers share: the error they raise, opening files, and wording bad input.

Text files and ``.npy`` arrays may be compressed (``.gz``, ``.bz2``, ``.xz``), recognised
by their last suffix; a UTF-8 byte order mark (Excel's "CSV UTF-8") is skipped.  Bad input
raises :class:`DataFileError`, a ``ValueError`` whose one-line message names the file, the
line (1-based, counting the header) or the array row, what is wrong and the fix: damaged or
truncated compressed streams, archives and arrays, text that is not UTF-8, empty files,
ragged rows, duplicate column names, cells that are not numbers, NaN, infinite values and
numbers beyond the float64 range (about 1.8e308 in absolute value).
"""

from __future__ import annotations

import bz2
import codecs
import contextlib
import gzip
import io
import lzma
import os
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

__all__ = ["DataFileError"]

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


def _existing_file(path: str | os.PathLike[str]) -> Path:
    """``path`` as a :class:`~pathlib.Path`, refused unless it names an existing file."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file. Check the path and its spelling.")
    if path.is_dir():
        raise DataFileError(path, "is a directory; give the path of a data file.")
    return path
