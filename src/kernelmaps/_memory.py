"""Memory a request needs, checked against what the machine has before allocating.

:func:`check_memory` refuses a request larger than the memory available now (Linux:
``MemAvailable`` of ``/proc/meminfo``, bounded by the cgroup limit of a container; other
systems: the free physical pages), with both numbers and the parameter to lower, instead of
letting the allocation fail late or push the machine into swap.  Where the available memory
cannot be read, nothing is refused.  :func:`check_device_memory` does the same for a
device's memory (what its library reports free, :func:`kernelmaps._devices.free_device_memory`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .exceptions import InsufficientMemoryError

__all__ = ["available_memory", "check_device_memory", "check_memory", "format_bytes"]


def _meminfo_available() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _cgroup_available() -> int | None:
    root = Path("/sys/fs/cgroup")
    try:
        limit = (root / "memory.max").read_text().strip()
        if limit == "max":
            return None
        used = int((root / "memory.current").read_text().strip())
        return max(int(limit) - used, 0)
    except (OSError, ValueError):
        return None


def available_memory() -> int | None:
    """Bytes of memory available to this process now, or None when unknown.

    Examples
    --------
    >>> from kernelmaps._memory import available_memory
    >>> available = available_memory()
    >>> available is None or available > 0
    True
    """
    found = [n for n in (_meminfo_available(), _cgroup_available()) if n is not None]
    if not found:
        try:
            found.append(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
        except (AttributeError, ValueError, OSError):
            return None
    return min(found)


def format_bytes(n: float) -> str:
    """``n`` bytes in a readable unit (binary prefixes).

    Examples
    --------
    >>> from kernelmaps._memory import format_bytes
    >>> format_bytes(80_000_000_000), format_bytes(512)
    ('74.5 GiB', '512 B')
    """
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if value < 1024 or unit == "PiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def check_memory(n_bytes: float, what: str, fix: str) -> None:
    """Refuse a request of ``n_bytes`` when more than the available memory.

    Parameters
    ----------
    n_bytes : float
        What the request would allocate (an estimate of its largest arrays).
    what : str
        What needs it, e.g. ``"FeatureRidge: the 100000 x 100000 Gram matrix"``.
    fix : str
        What to change, e.g. ``"lower n_components"``.

    Raises
    ------
    kernelmaps.exceptions.InsufficientMemoryError
        With both numbers, before anything is allocated.

    Examples
    --------
    >>> from kernelmaps._memory import check_memory
    >>> check_memory(1024, "a small array", "nothing")  # fits: returns None
    >>> check_memory(2.0**80, "a huge array", "lower n_components")
    Traceback (most recent call last):
    ...
    kernelmaps.exceptions.InsufficientMemoryError: a huge array needs 1073741824.0 PiB ...
    """
    available = available_memory()
    if available is None or n_bytes <= available:
        return
    raise InsufficientMemoryError(
        f"{what} needs {format_bytes(n_bytes)} but {format_bytes(available)} of memory is "
        f"available; {fix}."
    )


def check_device_memory(xp: Any, device: Any, n_bytes: float, what: str, fix: str) -> None:
    """Refuse a request of ``n_bytes`` on ``device`` (of namespace ``xp``) when more than
    the memory its library reports free; nothing is refused where it reports none.

    Examples
    --------
    >>> import array_api_strict as xp
    >>> from kernelmaps._memory import check_device_memory
    >>> check_device_memory(xp, xp.Device("device1"), 2.0**80, "a huge array", "nothing")
    """
    from ._devices import free_device_memory

    free = free_device_memory(xp, device)
    if free is None or n_bytes <= free:
        return
    raise InsufficientMemoryError(
        f"{what} need {format_bytes(n_bytes)} on device {device} but {format_bytes(free)} "
        f"of its memory is free; {fix}."
    )
