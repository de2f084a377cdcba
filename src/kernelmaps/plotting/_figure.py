"""matplotlib on demand, and figures written whole or not at all."""

from __future__ import annotations

import importlib.util
import io
import os
from pathlib import Path
from typing import Any

__all__ = ["DPI", "figure_class", "matplotlib_available", "save"]

_INSTALL_HINT = 'Plotting needs matplotlib: pip install "kernelmaps[plot]"'

#: Resolution of the raster (PNG) figures: sharp on a high-density screen, when zoomed
#: in, and in print.  Vector formats (PDF, SVG) have none.
DPI = 200


def matplotlib_available() -> bool:
    """Whether matplotlib can be imported (it is imported to find out).

    Returns
    -------
    bool

    Examples
    --------
    >>> from kernelmaps.plotting import matplotlib_available
    >>> isinstance(matplotlib_available(), bool)
    True
    """
    if importlib.util.find_spec("matplotlib") is None:
        return False
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def figure_class() -> Any:
    """``(Figure, FigureCanvasAgg)``, or :class:`ImportError` saying how to install them."""
    if not matplotlib_available():
        raise ImportError(_INSTALL_HINT)
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    return Figure, FigureCanvasAgg


def _png(fig: Any) -> bytes:
    """``fig`` as a PNG at :data:`DPI` on a palette of 256 colours.

    A figure of lines and bands has far fewer colours than that: the palette (median
    cut, which keeps the colours of the lines exact, no dithering) makes the file about
    three times smaller than a full-colour one, with no visible change.
    """
    from PIL import Image  # a dependency of matplotlib

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI)
    buffer.seek(0)
    # The enums of Pillow >= 9.1, the same numbers as the constants of the older ones.
    median_cut = getattr(getattr(Image, "Quantize", None), "MEDIANCUT", 0)
    no_dither = getattr(getattr(Image, "Dither", None), "NONE", 0)
    with Image.open(buffer) as image:
        palette = image.convert("RGB").quantize(256, method=median_cut, dither=no_dither)
    out = io.BytesIO()
    palette.save(out, format="png", optimize=True, dpi=(DPI, DPI))
    return out.getvalue()


def save(fig: Any, path: str | os.PathLike[str]) -> None:
    """Write ``fig`` to ``path`` whole or not at all; its format from the suffix (PNG
    without one), PNG at :data:`DPI` dots per inch (:func:`_png`).  A folder that cannot
    be made or written, or a full disk, is one
    :class:`~kernelmaps.exceptions.OutputWriteError`; the previous file stays intact."""
    from .._atomic import atomic_write, describe_os_error
    from ..exceptions import OutputWriteError

    target = Path(path)
    fmt = target.suffix.lstrip(".").lower() or "png"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputWriteError(exc.errno, describe_os_error(exc, target.parent)) from None
    with atomic_write(target, "wb") as fh:
        if fmt == "png":
            fh.write(_png(fig))
        else:
            fig.savefig(fh, format=fmt, dpi=DPI)
