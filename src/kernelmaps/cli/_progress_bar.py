"""A one-line progress bar on a terminal, drawn from the events of long work.

The estimators report their passes over the rows and their iterations through
:class:`kernelmaps._progress.Progress`; :func:`terminal_progress` installs a
:class:`ProgressBar` as the sink of those reports for the enclosed code when the stream
(standard error) is a terminal, and nothing otherwise, so that pipes, files and tests see
the output they always did.
"""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from .._progress import ProgressEvent, reporting_to

__all__ = ["ProgressBar", "terminal_progress"]

#: Cells of the bar itself.
BAR_CELLS = 20


class ProgressBar:
    """One line on ``stream``, rewritten in place (``\\r``) at each event of a pass.

    Parameters
    ----------
    stream : file-like
        A terminal (standard error).
    interval : float, default=0.1
        Seconds between two redraws of the same pass (a new pass is drawn at once).
    width : int, optional
        Characters of the line at most (default: the terminal's width, less one).

    Examples
    --------
    >>> import io
    >>> from kernelmaps._progress import ProgressEvent
    >>> from kernelmaps.cli._progress_bar import ProgressBar
    >>> out = io.StringIO()
    >>> bar = ProgressBar(out, interval=0.0, width=100)
    >>> bar(ProgressEvent("FeatureRidge", "statistics", 40_000, 100_000, 0.5))
    >>> out.getvalue()
    '\\rFeatureRidge: statistics [########------------]  40% 40,000/100,000 rows 0.5 s'
    >>> bar.close()
    """

    def __init__(self, stream: TextIO, interval: float = 0.1, width: int | None = None) -> None:
        self.stream = stream
        self.interval = interval
        self.width = width
        self.drawn = 0  # characters on the line now
        self.last = -float("inf")
        self.showing: tuple[str, str] | None = None

    def __call__(self, event: ProgressEvent) -> None:
        now = time.perf_counter()
        same = self.showing == (event.owner, event.what)
        if event.finished or (same and now - self.last < self.interval):
            return
        self.last, self.showing = now, (event.owner, event.what)
        self._draw(self.line(event))

    def line(self, event: ProgressEvent) -> str:
        """The text of the bar for ``event``."""
        text = f"{event.owner}: {event.what} "
        if event.total:
            share = min(1.0, event.done / event.total)
            filled = round(share * BAR_CELLS)
            text += f"[{'#' * filled}{'-' * (BAR_CELLS - filled)}] {100 * share:3.0f}% "
            text += f"{event.done:,}/{event.total:,} {event.unit}"
        else:
            text += f"{event.done:,} {event.unit}"
        return f"{text} {event.elapsed:.1f} s"

    def _draw(self, text: str) -> None:
        width = self.width or shutil.get_terminal_size((80, 24)).columns - 1
        text = text[:width]
        self.stream.write("\r" + text.ljust(self.drawn))
        self.stream.flush()
        self.drawn = len(text)

    def close(self) -> None:
        """Erase the line (the cursor back at its start)."""
        if self.drawn:
            self.stream.write("\r" + " " * self.drawn + "\r")
            self.stream.flush()
            self.drawn = 0
        self.showing = None


def _is_terminal(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


@contextmanager
def terminal_progress(stream: TextIO | None = None) -> Iterator[None]:
    """A :class:`ProgressBar` on ``stream`` (default: standard error) for the work of the
    enclosed code when ``stream`` is a terminal; nothing when it is not.

    Examples
    --------
    >>> import io
    >>> from kernelmaps import FeatureRidge
    >>> from kernelmaps.cli._progress_bar import terminal_progress
    >>> out = io.StringIO()  # not a terminal: nothing drawn
    >>> with terminal_progress(out):
    ...     _ = FeatureRidge("passthrough").fit([[0.0], [1.0], [2.0]], [0.0, 1.0, 2.0])
    >>> out.getvalue()
    ''
    """
    stream = sys.stderr if stream is None else stream
    if not _is_terminal(stream):
        yield
        return
    bar = ProgressBar(stream)
    try:
        with reporting_to(bar):
            yield
    finally:
        bar.close()
