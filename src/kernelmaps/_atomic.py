"""Files written whole or not at all.

:func:`atomic_write` writes to a temporary file in the destination's folder, flushes and
syncs it, then renames it over the destination (``os.replace``, atomic on POSIX and
Windows).  A failure at any point (full disk, read-only file system, an exception, a
Ctrl-C) removes the temporary file and leaves the previous file intact; the error is an
:class:`~kernelmaps.exceptions.OutputWriteError` whose message is one line naming the file,
the cause and the fix.  Temporary names are unique (``tempfile.mkstemp``), so two writers
of one file never collide: the last rename wins, and each rename is of a whole file.
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from .exceptions import OutputWriteError

__all__ = ["atomic_write", "describe_os_error"]

_CAUSES = {
    errno.ENOSPC: ("no space left on the device", "free some space or write elsewhere"),
    errno.EDQUOT: ("disk quota exceeded", "free some space or write elsewhere"),
    errno.EROFS: ("read-only file system", "write to a writable folder"),
    errno.EACCES: ("permission denied", "write to a folder you may write to"),
    errno.EPERM: ("operation not permitted", "write to a folder you may write to"),
    errno.ENOENT: ("no such folder", "create the folder first or fix the path"),
    errno.ENOTDIR: ("a part of the path is not a folder", "fix the path"),
    errno.EEXIST: ("a part of the path is a file, not a folder", "fix the path"),
    errno.EISDIR: ("is a folder", "give a file name"),
    errno.EFBIG: ("file too large for the file system", "write elsewhere"),
}


def describe_os_error(exc: OSError, path: str | os.PathLike[str] | None = None) -> str:
    """One line naming the file, what went wrong and the fix, for an ``OSError``.

    Examples
    --------
    >>> import errno
    >>> from kernelmaps._atomic import describe_os_error
    >>> describe_os_error(OSError(errno.ENOSPC, "No space left on device"), "model.skops")
    'model.skops: no space left on the device; free some space or write elsewhere.'
    """
    where = path if path is not None else (exc.filename or "")
    cause, fix = _CAUSES.get(exc.errno or -1, (exc.strerror or str(exc), "check the path"))
    return f"{where}: {cause}; {fix}." if where else f"{cause}; {fix}."


@contextlib.contextmanager
def atomic_write(
    path: str | os.PathLike[str],
    mode: str = "w",
    *,
    encoding: str | None = "utf-8",
    newline: str | None = None,
) -> Iterator[IO[Any]]:
    """Open ``path`` for writing so that it is replaced whole, or not at all.

    Parameters
    ----------
    path : str or path-like
        The destination; its folder must exist.
    mode : {"w", "wb"}
        Text or binary.
    encoding, newline : str, optional
        As for :func:`open` (text mode only).

    Yields
    ------
    file object
        A temporary file in the destination's folder; on a normal exit of the ``with``
        block it is flushed, synced to disk and renamed to ``path`` (with the permissions
        a new file gets under the process's umask).

    Raises
    ------
    kernelmaps.exceptions.OutputWriteError
        When the folder is missing or not writable, or the disk is full: one line with
        the cause and the fix; the previous file is unchanged.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from kernelmaps._atomic import atomic_write
    >>> target = Path(tempfile.mkdtemp()) / "table.csv"
    >>> with atomic_write(target) as fh:
    ...     _ = fh.write("a,b\\n1,2\\n")
    >>> target.read_text()
    'a,b\\n1,2\\n'
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"mode must be 'w' or 'wb', got {mode!r}.")
    target = Path(path)
    binary = mode == "wb"
    try:
        fd, tmp_name = tempfile.mkstemp(
            dir=target.parent if str(target.parent) else ".",
            prefix=f".{target.name}.",
            suffix=".tmp",
        )
    except OSError as exc:
        raise OutputWriteError(exc.errno, describe_os_error(exc, target)) from None
    tmp = Path(tmp_name)
    try:
        with os.fdopen(
            fd,
            mode,
            encoding=None if binary else encoding,
            newline=None if binary else newline,
        ) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if isinstance(exc, OutputWriteError):
            raise
        raise OutputWriteError(exc.errno, describe_os_error(exc, target)) from None
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
