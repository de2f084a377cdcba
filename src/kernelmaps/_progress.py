"""Reports of long work: the lines a fit prints at ``verbose >= 1``, and the events of a bar.

"A ten-minute fit that says nothing is indistinguishable from a hung one."  An estimator
with a ``verbose`` parameter (scikit-learn's convention: an int, 0 silent) makes one
:class:`Progress` per fit, ``Progress(type(self).__name__, self.verbose)``, and reports
through it:

* :meth:`Progress.log`: a line ``[owner] message`` on standard output (flushed, as
  scikit-learn prints), from ``verbose >= level``;
* :meth:`Progress.rows`: a :class:`RowCounter` over a pass (rows, iterations, ...), whose
  :meth:`RowCounter.add` prints throttled running lines (at most one a :data:`INTERVAL`,
  and always the last) and whose exit prints the pass's summary line.

A *sink*, a callable given to ``Progress(..., sink=...)`` or installed for a block of code
by :func:`reporting_to`, receives every step of every counter as a
:class:`ProgressEvent` (what, done, total, elapsed), whatever ``verbose`` is:
:func:`kernelmaps.progress_bar` draws its bars from them (the command line's, a
notebook's).  With ``verbose=0`` and no sink nothing is timed, formatted or called:
:attr:`Progress.enabled` is False, and the callers format their messages only when it is
True.

Passes whose work runs elsewhere (the tasks of a Dask computation) are counted whole when
they end (:func:`counted_pass`): no lines come from the workers.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TextIO

__all__ = [
    "INTERVAL",
    "Progress",
    "ProgressEvent",
    "RowCounter",
    "counted_pass",
    "reporting_to",
]

#: Seconds between two running lines of a pass (the last is always printed); tests set 0.
INTERVAL = 1.0


@dataclass(frozen=True)
class ProgressEvent:
    """One step of a counter, as a sink receives it.

    Attributes
    ----------
    owner : str
        Who works (the estimator's class name).
    what : str
        The pass or loop: ``"statistics"``, ``"leave-one-out"``, ``"K_nm products"``,
        ``"conjugate gradient"``, ...
    done : int
        Units done so far in this pass.
    total : int or None
        Units of the whole pass, when known.
    elapsed : float
        Seconds since the pass began.
    unit : str
        What is counted (``"rows"``, ``"iterations"``).
    finished : bool
        Whether the pass has ended (the last event of its counter).
    """

    owner: str
    what: str
    done: int
    total: int | None
    elapsed: float
    unit: str = "rows"
    finished: bool = False


Sink = Callable[[ProgressEvent], None]

_SINK: ContextVar[Sink | None] = ContextVar("kernelmaps_progress_sink", default=None)


@contextmanager
def reporting_to(sink: Sink | None) -> Iterator[None]:
    """Send the events of every :class:`Progress` made in the enclosed code to ``sink``.

    The setting is a context variable: it holds in this thread (and in the row-block
    threads, which run in the caller's context), not in Dask's workers.

    Examples
    --------
    >>> from kernelmaps._progress import Progress, reporting_to
    >>> events = []
    >>> with reporting_to(events.append):
    ...     with Progress("Demo").rows("statistics", 10) as counter:
    ...         counter.add(10)
    >>> [(e.what, e.done, e.total, e.finished) for e in events]
    [('statistics', 10, 10, False), ('statistics', 10, 10, True)]
    """
    token = _SINK.set(sink)
    try:
        yield
    finally:
        _SINK.reset(token)


def _number(value: float) -> str:
    """A rate in three significant digits: ``850``, ``1.23e5``."""
    return re.sub(r"e\+?(-?)0*(\d)", r"e\1\2", f"{value:.3g}")


class Progress:
    """Reports of long work, silent at ``verbose=0``.

    Parameters
    ----------
    owner : str
        Who works; every line starts with ``[owner]``.
    verbose : int, default=0
        Lines of level ``<= verbose`` are printed: 1 the passes and solves, 2 also the
        rows within a pass.
    stream : file-like, default=None
        Where the lines go (None: ``sys.stdout`` when a line is written).
    sink : callable, default=None
        Gets a :class:`ProgressEvent` at every step of every counter (None: the sink of
        :func:`reporting_to`, if any).

    Attributes
    ----------
    enabled : bool
        Whether anything is reported (``verbose > 0`` or a sink); format messages only
        when it is True.

    Examples
    --------
    >>> from kernelmaps._progress import Progress
    >>> progress = Progress("FeatureRidge", verbose=1)
    >>> progress.log("solve (primal): D = 100, alpha = 1 (given), 0.01 s")
    [FeatureRidge] solve (primal): D = 100, alpha = 1 (given), 0.01 s
    >>> progress.log("not shown at verbose=1", level=2)
    >>> Progress("FeatureRidge").enabled
    False
    """

    def __init__(
        self, owner: str, verbose: int = 0, stream: TextIO | None = None, sink: Sink | None = None
    ) -> None:
        self.owner = owner
        self.verbose = int(verbose)
        self.stream = stream
        self.sink = sink if sink is not None else _SINK.get()

    @property
    def enabled(self) -> bool:
        return self.verbose > 0 or self.sink is not None

    def log(self, message: str, level: int = 1) -> None:
        """Print ``[owner] message`` (flushed) when ``verbose >= level``."""
        if self.verbose >= level:
            print(f"[{self.owner}] {message}", file=self.stream or sys.stdout, flush=True)

    def rows(
        self,
        what: str,
        total: int | None,
        *,
        level: int | None = 2,
        summary: int | None = 1,
        unit: str = "rows",
    ) -> RowCounter:
        """A counter over a pass of ``total`` units (rows; None: unknown), a context manager.

        Parameters
        ----------
        what : str
            The pass, named in its lines and events.
        total : int or None
            Units in the whole pass.
        level : int or None, default=2
            Verbosity from which the running lines ``what: done / total rows (p%),
            rate rows/s`` are printed (None: never).
        summary : int or None, default=1
            Verbosity from which the summary line ``what: n rows in s (rate rows/s)`` is
            printed when the pass ends (None: never).
        unit : str, default="rows"
            What is counted, in the lines and events.

        Examples
        --------
        >>> from kernelmaps import _progress
        >>> from kernelmaps._progress import Progress
        >>> _progress.INTERVAL = 0.0  # every step a line (default: one a second)
        >>> with Progress("Demo", verbose=2).rows("statistics", 20_000) as counter:
        ...     counter.add(8_000)
        ...     counter.add(12_000)  # doctest: +ELLIPSIS
        [Demo] statistics: 8,000 / 20,000 rows (40%), ... rows/s
        [Demo] statistics: 20,000 / 20,000 rows (100%), ... rows/s
        [Demo] statistics: 20,000 rows in ... s (... rows/s)
        >>> _progress.INTERVAL = 1.0
        """
        if not self.enabled:
            return RowCounter(None, what, total)
        return RowCounter(self, what, total, level=level, summary=summary, unit=unit)


def _silent_counter() -> RowCounter:
    return RowCounter(None, "", None)


class RowCounter:
    """The units done in a pass, reported by its :class:`Progress`; made by
    :meth:`Progress.rows`.

    Used from one thread.  A counter sent to another process arrives silent (it pickles
    as a counter that reports nothing), so an object holding one stays small and
    picklable.

    Attributes
    ----------
    done : int
        Units added so far.
    elapsed : float
        Seconds since the pass began.
    """

    def __init__(
        self,
        progress: Progress | None,
        what: str,
        total: int | None,
        *,
        level: int | None = 2,
        summary: int | None = 1,
        unit: str = "rows",
    ) -> None:
        self.progress, self.what, self.total = progress, what, total
        self.level, self.summary, self.unit = level, summary, unit
        self.done = 0
        self._start = self._shown = time.perf_counter() if progress is not None else 0.0
        self._pending = False  # a step not printed yet (throttled)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_silent_counter, ())

    def __enter__(self) -> RowCounter:
        if self.progress is not None:
            self._start = self._shown = time.perf_counter()
        return self

    def __exit__(self, kind: Any, *_: Any) -> None:
        if self.progress is None:
            return
        if kind is None:
            if self._pending:
                self._running_line()
            self._summary_line()
        self._send(finished=True)

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self._start if self.progress is not None else 0.0

    def add(self, n: int) -> None:
        """``n`` more units done: an event to the sink, a running line when due."""
        if self.progress is None:
            return
        self.done += int(n)
        self._send(finished=False)
        if self.level is None or self.progress.verbose < self.level:
            return
        self._pending = True
        now = time.perf_counter()
        if now - self._shown >= INTERVAL or self.done == self.total:
            self._running_line()

    def _rate(self) -> str:
        elapsed = self.elapsed
        return f"{_number(self.done / elapsed)} {self.unit}/s" if elapsed > 0 else "-"

    def _running_line(self) -> None:
        assert self.progress is not None and self.level is not None
        self._shown, self._pending = time.perf_counter(), False
        count = f"{self.done:,}"
        if self.total:
            count += f" / {self.total:,} {self.unit} ({100 * self.done / self.total:.0f}%)"
        else:
            count += f" {self.unit}"
        self.progress.log(f"{self.what}: {count}, {self._rate()}", self.level)

    def _summary_line(self) -> None:
        assert self.progress is not None
        if self.summary is not None and self.progress.verbose >= self.summary:
            message = f"{self.what}: {self.done:,} {self.unit} in {self.elapsed:.2f} s"
            self.progress.log(f"{message} ({self._rate()})", self.summary)

    def _send(self, finished: bool) -> None:
        assert self.progress is not None
        if self.progress.sink is not None:
            event = ProgressEvent(
                self.progress.owner,
                self.what,
                self.done,
                self.total,
                self.elapsed,
                self.unit,
                finished,
            )
            self.progress.sink(event)


@contextmanager
def counted_pass(
    progress: Progress | None, what: str, rows: Any, *, summary: int | None = 1
) -> Iterator[Callable[[int], None] | None]:
    """A pass over ``rows`` (a ``kernelmaps._rows.Rows``) counted by
    ``progress.rows(what, rows.n_rows)``.

    Yields the callback that the map functions call with the rows of each block they
    finish: None where nothing is reported (no ``progress``, or not enabled), and None
    where the functions run elsewhere (``rows.local`` False: Dask's tasks), whose pass is
    counted whole when it ends.

    Examples
    --------
    >>> from kernelmaps._progress import Progress, counted_pass
    >>> from kernelmaps._rows import as_rows
    >>> import numpy as np
    >>> rows = as_rows(np.zeros((5, 2)))
    >>> with counted_pass(Progress("Demo", 1), "statistics", rows) as add:
    ...     add(5)  # doctest: +ELLIPSIS
    [Demo] statistics: 5 rows in ... s (... rows/s)
    """
    if progress is None or not progress.enabled:
        yield None
        return
    with progress.rows(what, rows.n_rows, summary=summary) as counter:
        if getattr(rows, "local", False):
            yield counter.add
        else:
            yield None
            counter.add(rows.n_rows)
