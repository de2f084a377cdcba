"""The exceptions kernelmaps raises for problems a user can fix.

Each names the problem and the fix in its message.  They derive from the built-in class a
caller would already catch (``ValueError``, ``MemoryError``, ``OSError``), so code written
against scikit-learn's conventions keeps working.
"""

from __future__ import annotations

__all__ = ["InsufficientMemoryError", "NonFiniteOutputError", "OutputWriteError"]


class NonFiniteOutputError(ValueError):
    """A result would hold NaN or infinity: the computation overflowed for this input.

    Raised instead of returning non-finite values, with the step that overflowed and the
    fix (rescale the data, a smaller ``gamma``, float64 input).

    Examples
    --------
    >>> from kernelmaps.exceptions import NonFiniteOutputError
    >>> issubclass(NonFiniteOutputError, ValueError)
    True
    """


class InsufficientMemoryError(MemoryError):
    """A request needs more memory than the machine has available; nothing was allocated.

    The message gives both numbers and the parameter to lower.

    Examples
    --------
    >>> from kernelmaps.exceptions import InsufficientMemoryError
    >>> issubclass(InsufficientMemoryError, MemoryError)
    True
    """


class OutputWriteError(OSError):
    """A file could not be written (full disk, read-only file system, no permission).

    The previous content of the file, if any, is unchanged (see
    ``kernelmaps._atomic.atomic_write``).  ``errno`` is that of the failure.

    Examples
    --------
    >>> import errno
    >>> from kernelmaps.exceptions import OutputWriteError
    >>> OutputWriteError(errno.ENOSPC, "out.csv: no space left on the device").errno == errno.ENOSPC
    True
    """

    def __str__(self) -> str:
        return str(self.strerror)
