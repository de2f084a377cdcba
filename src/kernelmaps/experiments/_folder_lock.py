"""The output folder of a run: created if needed, and locked for the whole run.

An output folder is locked for the whole run (``run.lock`` in it: an ``flock`` where the
system has one, else a file created exclusively, holding the PID, host and start time of
the run): a second run on the same folder is refused at once, naming the run that holds
it.  A run that ends removes ``run.lock``.  The lock of a killed run does not block: the
system releases an ``flock`` when its process ends, and an exclusive lock file whose
process is gone is removed.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import json
import os
import socket
import sys
import time
from pathlib import Path
from typing import Any

from .._atomic import describe_os_error
from ..exceptions import OutputWriteError

try:
    import fcntl as _fcntl
except ImportError:  # pragma: no cover - Windows
    _fcntl = None  # type: ignore[assignment]

__all__ = ["LOCK_FILE", "OutputFolderInUseError", "output_folder"]

LOCK_FILE = "run.lock"

#: An exclusive lock file with no readable holder is taken as abandoned after this long
#: (seconds): the time its creator has to write itself into it.
_UNREADABLE_LOCK_AGE = 10.0


class OutputFolderInUseError(RuntimeError):
    """Another run holds the output folder (its lock file names the run).

    Examples
    --------
    >>> from kernelmaps.experiments._folder_lock import OutputFolderInUseError
    >>> issubclass(OutputFolderInUseError, RuntimeError)
    True
    """


def output_folder(output_dir: str | os.PathLike[str]) -> Path:
    """The output folder, created if needed; a file there is refused."""
    out_dir = Path(output_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise ValueError(
            f"{out_dir}: the output folder is a file; give the name of a folder (it is "
            "created if needed)."
        )
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputWriteError(exc.errno, describe_os_error(exc, out_dir)) from None
    return out_dir


class _FolderLock:
    """The lock of an output folder for one run (a context manager).

    Where the system has ``fcntl``, an ``flock`` on ``run.lock``: the system releases the
    lock when its process ends, however it ends (the file of a killed run stays, and the
    next run takes it); a run that ends removes the file while it still holds the lock,
    and a run that locked a file removed meanwhile (by the run ending then) locks the
    new one instead.  Elsewhere, or on a file system without ``flock``, ``run.lock`` is
    created exclusively and removed at the end; a lock file whose process is gone (same
    host, PID not alive) is taken over.  The file holds the PID, host and start time of
    the run that holds it, for the message of a refused run.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path = folder / LOCK_FILE
        self.fd: int | None = None
        self.exclusive = False
        self.holder = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        }

    def __enter__(self) -> _FolderLock:
        if _fcntl is None or not self._flock():
            self._exclusive()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def _write_error(self, exc: OSError) -> OutputWriteError:
        return OutputWriteError(exc.errno, describe_os_error(exc, self.path))

    def _flock(self) -> bool:
        """Take the ``flock``; False when the file system has none."""
        for _ in range(3):
            taken = self._flock_file()
            if taken is not None:
                return taken
        raise self._in_use(self._read_holder(), abandoned_hint=False)

    def _flock_file(self) -> bool | None:
        """Take the ``flock`` of the file at ``path`` now; False when the file system has
        none, None when the file locked was removed meanwhile (the path to lock again)."""
        assert _fcntl is not None
        created = True
        try:
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o666)
            except FileExistsError:
                created = False
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as exc:
            raise self._write_error(exc) from None
        try:
            _fcntl.flock(fd, _fcntl.LOCK_EX | _fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise self._in_use(self._read_holder(), abandoned_hint=False) from None
            if exc.errno in (errno.ENOLCK, errno.EINVAL, errno.EOPNOTSUPP):
                if created:  # the exclusive lock file is created again by the fallback
                    with contextlib.suppress(OSError):
                        os.unlink(self.path)
                return False
            raise self._write_error(exc) from None
        if not _same_file(fd, self.path):  # removed by the run that held it, as it ended
            os.close(fd)
            return None
        try:
            os.ftruncate(fd, 0)
            os.write(fd, self._holder_bytes())
        except OSError as exc:
            os.close(fd)
            raise self._write_error(exc) from None
        self.fd = fd
        return True

    def _exclusive(self) -> None:
        """Create the lock file exclusively, taking over one whose run is gone."""
        for _ in range(3):
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o666)
            except FileExistsError:
                holder = self._read_holder()
                if not self._abandoned(holder):
                    raise self._in_use(holder, abandoned_hint=True) from None
                self._remove_abandoned(holder)
                continue
            except OSError as exc:
                raise self._write_error(exc) from None
            try:
                os.write(fd, self._holder_bytes())
            except OSError as exc:
                os.close(fd)
                with contextlib.suppress(OSError):
                    os.unlink(self.path)
                raise self._write_error(exc) from None
            os.close(fd)
            self.exclusive = True
            return
        raise self._in_use(self._read_holder(), abandoned_hint=True)

    def _holder_bytes(self) -> bytes:
        return (json.dumps(self.holder) + "\n").encode()

    def _read_holder(self) -> dict[str, Any] | None:
        try:
            holder = json.loads(self.path.read_bytes().decode("utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(holder, dict) or not isinstance(holder.get("pid"), int):
            return None
        return holder

    def _abandoned(self, holder: dict[str, Any] | None) -> bool:
        """Whether an exclusive lock file was left by a run that is gone."""
        if holder is None:  # unreadable: abandoned unless just being written
            try:
                age = time.time() - self.path.stat().st_mtime
            except OSError:
                return True  # removed meanwhile
            return age > _UNREADABLE_LOCK_AGE
        if holder.get("host") != socket.gethostname():
            return False  # another machine's process: it cannot be checked from here
        return not _pid_alive(int(holder["pid"]))

    def _remove_abandoned(self, holder: dict[str, Any] | None) -> None:
        """Remove an abandoned lock file, unless another run took it over meanwhile."""
        aside = self.path.with_name(f"{LOCK_FILE}.{os.getpid()}.{os.urandom(4).hex()}")
        try:
            os.replace(self.path, aside)
        except OSError:
            return  # removed by another run meanwhile
        try:
            moved = json.loads(aside.read_bytes().decode("utf-8"))
        except (OSError, ValueError):
            moved = None
        if moved != holder and isinstance(moved, dict):
            # Another run took the lock over between our reading and our move: put it
            # back (unless a third one holds it now).
            with contextlib.suppress(OSError):
                os.link(aside, self.path)
        with contextlib.suppress(OSError):
            os.unlink(aside)

    def _in_use(
        self, holder: dict[str, Any] | None, abandoned_hint: bool
    ) -> OutputFolderInUseError:
        if holder is None:
            who = "another run (its lock file gives no details)"
        else:
            who = (
                f"another run (PID {holder.get('pid')} on {holder.get('host')}, started "
                f"{holder.get('started')})"
            )
        remove = f"; if no run is using the folder, delete {self.path}" if abandoned_hint else ""
        return OutputFolderInUseError(
            f"{self.folder}: the output folder is in use by {who}; wait for that run to end, "
            f"or write to another output folder (-o/--output){remove}."
        )

    def release(self) -> None:
        """Release the lock (an exclusive lock file is removed if it is still ours)."""
        if self.fd is not None:
            fd, self.fd = self.fd, None
            if _same_file(fd, self.path):  # removed while locked: no run takes it half-way
                with contextlib.suppress(OSError):
                    os.unlink(self.path)
            with contextlib.suppress(OSError):
                _fcntl.flock(fd, _fcntl.LOCK_UN)
            os.close(fd)
        if self.exclusive:
            self.exclusive = False
            if self._read_holder() == self.holder:
                with contextlib.suppress(OSError):
                    os.unlink(self.path)


def _same_file(fd: int, path: Path) -> bool:
    """Whether the open file ``fd`` is the file at ``path`` (not one removed since)."""
    try:
        opened, named = os.fstat(fd), os.stat(path)
    except OSError:
        return False
    return (opened.st_dev, opened.st_ino) == (named.st_dev, named.st_ino)


def _pid_alive(pid: int) -> bool:
    """Whether process ``pid`` of this machine exists (when unsure: yes)."""
    if pid <= 0:
        return False
    if sys.platform == "win32":  # pragma: no cover - os.kill would end the process there
        import ctypes

        kernel32 = ctypes.windll.kernel32  # type: ignore[attr-defined]
        handle = kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
        if not handle:
            return bool(kernel32.GetLastError() == 5)  # ERROR_ACCESS_DENIED: it exists
        code = ctypes.c_ulong()
        try:
            if not kernel32.GetExitCodeProcess(handle, ctypes.byref(code)):
                return True
            return code.value == 259  # STILL_ACTIVE
        finally:
            kernel32.CloseHandle(handle)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: another user's process
        return True
    return True
