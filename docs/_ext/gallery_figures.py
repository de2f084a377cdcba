"""An image scraper of sphinx-gallery for the figures that kernelmaps returns.

:mod:`kernelmaps.plotting` draws on a :class:`matplotlib.figure.Figure` of its own, not
managed by pyplot (no display, no global state), and returns it; sphinx-gallery's
matplotlib scraper sees only pyplot's figures.  This scraper also shows every figure an
example holds in a variable, once, after the block that made it, then pyplot's, so an
example reads as a user would write it: ``fig = plot_error_curves(...)``.  A pyplot figure
is shown once too: pyplot's scraper closes it, and a variable that still holds it in a
later block does not show it again.
"""

from __future__ import annotations

import weakref
from typing import Any

from sphinx_gallery.scrapers import figure_rst, matplotlib_scraper

#: The figures already shown, per example file.
_SHOWN: dict[str, weakref.WeakSet[Any]] = {}


def returned_figures(
    block: Any, block_vars: dict[str, Any], gallery_conf: Any, **kwargs: Any
) -> str:
    """The reST of the figures held by the example's variables, then of pyplot's."""
    from matplotlib import pyplot as plt
    from matplotlib.figure import Figure

    shown = _SHOWN.setdefault(str(block_vars["src_file"]), weakref.WeakSet())
    managed = {
        id(manager.canvas.figure) for manager in plt._pylab_helpers.Gcf.get_all_fig_managers()
    }
    paths = []
    for value in list(block_vars["example_globals"].values()):
        if isinstance(value, Figure) and value not in shown and id(value) not in managed:
            shown.add(value)
            path = next(block_vars["image_path_iterator"])
            value.savefig(path, dpi=150)
            paths.append(path)
    for manager in plt._pylab_helpers.Gcf.get_all_fig_managers():
        shown.add(manager.canvas.figure)  # shown now by pyplot's scraper, which closes it
    own = figure_rst(paths, gallery_conf["src_dir"]) if paths else ""
    return own + matplotlib_scraper(block, block_vars, gallery_conf, **kwargs)
