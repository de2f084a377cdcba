"""Progress bars drawn by tqdm from the reports of long work (:mod:`kernelmaps._progress`).

:func:`progress_bar` installs a :class:`ProgressBars` as the sink of every
:class:`~kernelmaps._progress.Progress` made in the enclosed code (:func:`reporting_to`):
one tqdm bar for each pass over the rows (or loop of iterations) while it runs, closed
when the pass ends.  tqdm is imported only when a bar is to be drawn, so that ``import
kernelmaps`` and a command line writing to a pipe never load it.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from ._progress import ProgressEvent, reporting_to

__all__ = ["ProgressBars", "progress_bar"]

#: What a bar shows: the pass, the share done, the units done out of the total, the time
#: spent and left, the rate (tqdm's fields; the counts with thousands separators).
BAR_FORMAT = (
    "{desc}: {percentage:3.0f}%|{bar}| {n:,}/{total:,}{unit} [{elapsed}<{remaining}, {rate_fmt}]"
)
#: The same for a pass of unknown length (no share, no time left).
COUNT_FORMAT = "{desc}: {n:,}{unit} [{elapsed}, {rate_fmt}]"


class ProgressBars:
    """A sink of :class:`~kernelmaps._progress.ProgressEvent`: one bar per running pass.

    A pass is known by its owner and name (``"FeatureRidge: statistics"``); its first
    event after ``delay`` seconds opens a bar that shows the units done out of the total,
    the rate and the time left, each further event moves it, and its last event
    (``finished``) closes it.  A shorter pass costs no bar at all (no tqdm object, no
    widget).  The bar's clock starts when the pass began (``elapsed`` of its event), not
    when the bar opens.

    Parameters
    ----------
    make_bar : callable
        A tqdm class (``tqdm.auto.tqdm``, ``tqdm.std.tqdm``, ...): called with the
        keyword arguments of one bar.
    delay : float, default=0.0
        Seconds a pass runs before it gets a bar.
    **options
        Further keyword arguments of every bar (``file``, ``leave``, ``mininterval``).

    Examples
    --------
    >>> import io
    >>> from tqdm.std import tqdm
    >>> from kernelmaps._progress import ProgressEvent
    >>> from kernelmaps._progress_bar import ProgressBars
    >>> out = io.StringIO()
    >>> bars = ProgressBars(tqdm, file=out, mininterval=0.0, ncols=100)
    >>> bars(ProgressEvent("FeatureRidge", "statistics", 40_000, 100_000, 0.5))
    >>> print(out.getvalue().split("\\r")[-1])  # doctest: +ELLIPSIS
    FeatureRidge: statistics:  40%|...| 40,000/100,000 rows [00:00<00:0..., ...k rows/s]
    >>> bars(ProgressEvent("FeatureRidge", "statistics", 100_000, 100_000, 1.2, finished=True))
    >>> bars.bars
    {}
    """

    def __init__(self, make_bar: Callable[..., Any], delay: float = 0.0, **options: Any) -> None:
        self.make_bar, self.delay, self.options = make_bar, delay, options
        self.bars: dict[tuple[str, str], Any] = {}
        self._lock = threading.Lock()  # passes of threads in one fit report to one sink

    def __call__(self, event: ProgressEvent) -> None:
        key = (event.owner, event.what)
        with self._lock:
            bar = self.bars.get(key)
            if bar is None and (event.finished or event.elapsed < self.delay):
                return  # a pass that ended, or runs, within the delay: no bar
            if bar is None:
                bar = self.bars[key] = self._open(event)
            bar.update(event.done - bar.n)
            if event.finished:
                self._finish(self.bars.pop(key))

    def _open(self, event: ProgressEvent) -> Any:
        bar = self.make_bar(
            total=event.total,
            desc=f"{event.owner}: {event.what}",
            unit=f" {event.unit}",
            unit_scale=True,  # the rate in SI prefixes: 1.2M rows/s
            bar_format=BAR_FORMAT if event.total is not None else COUNT_FORMAT,
            delay=self.delay,  # drawn at the first update, not empty at its opening
            **self.options,
        )
        started = bar._time() - event.elapsed  # the pass began before its first event
        bar.start_t = bar.last_print_t = started
        return bar

    @staticmethod
    def _finish(bar: Any) -> None:
        if bar.total is not None and bar.n < bar.total:
            bar.total = bar.n  # ended before its bound (a converged solver): complete
        bar.close()

    def close(self) -> None:
        """Close the bars of passes that did not end (the enclosed code raised)."""
        with self._lock:
            for bar in self.bars.values():
                bar.close()
            self.bars.clear()


def _is_terminal(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


@contextmanager
def progress_bar(
    file: TextIO | None = None,
    *,
    disable: bool | None = False,
    leave: bool = False,
    delay: float = 0.5,
    mininterval: float = 0.1,
) -> Iterator[None]:
    """Show the progress of the fits in the enclosed code as progress bars (tqdm).

    Every estimator that reports its work (the ones with a ``verbose`` parameter, and
    the searches) sends each step of each pass over the rows, or of each iterative
    solve, to the bars, whatever its ``verbose``: one bar per running pass, named
    ``"Owner: pass"``, with the rows (or iterations) done out of the total, the rate
    and the time left, closed when the pass ends.  In a Jupyter notebook with
    ipywidgets the bars are notebook widgets (``tqdm.auto``); elsewhere they are drawn
    on standard error.  The setting is a context variable: it holds in this thread and
    the row-block threads of its fits, not in Dask's workers (whose passes are counted
    whole when they end).

    Parameters
    ----------
    file : file-like, default=None
        Where text bars are drawn (None: standard error, or the notebook's widgets).
    disable : bool or None, default=False
        True: no bars. None: bars only where the stream (``file``, or standard error)
        is a terminal, as tqdm's own ``disable=None``; where there are none nothing
        is reported, and the fits cost what they cost without a bar.
    leave : bool, default=False
        Keep each finished pass's bar on screen (False: erase it).
    delay : float, default=0.5
        Seconds a pass runs before its bar appears: shorter passes (the many small
        ones of a search or of a solver's iterations) draw nothing.
    mininterval : float, default=0.1
        Seconds between two redraws of a bar.

    Examples
    --------
    >>> import numpy as np
    >>> import kernelmaps
    >>> from kernelmaps import FeatureRidgeCV, RandomFourierFeatures
    >>> X = np.random.default_rng(0).normal(size=(200, 3))
    >>> y = np.sin(X[:, 0])
    >>> with kernelmaps.progress_bar():  # a bar for each pass, on standard error
    ...     model = FeatureRidgeCV(RandomFourierFeatures(n_components=50, random_state=0))
    ...     model = model.fit(X, y)
    """
    stream = sys.stderr if file is None else file
    if disable or (disable is None and not _is_terminal(stream)):
        yield
        return
    if file is None:
        from tqdm.auto import tqdm as make_bar  # a widget in a notebook
    else:
        from tqdm.std import tqdm as make_bar  # text on the given stream
    options: dict[str, Any] = {"leave": leave, "mininterval": mininterval}
    if file is not None:
        options["file"] = file
    bars = ProgressBars(make_bar, delay, **options)
    try:
        with reporting_to(bars):
            yield
    finally:
        bars.close()
