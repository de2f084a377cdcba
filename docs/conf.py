"""Sphinx configuration of the kernelmaps documentation site.

Build it (warnings are errors, as in CI)::

    pip install ".[docs]"
    sphinx-build -W --keep-going -b html docs docs/_build/html

The gallery (``examples/``) runs at build time; the intersphinx inventories are read from
``docs/_inventories`` (the build reaches no network; ``python docs/_inventories/refresh.py``
refreshes them).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

import kernelmaps  # noqa: E402

project = "kernelmaps"
author = "the kernelmaps developers"
copyright = "the kernelmaps developers"
release = kernelmaps.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
    "public_names",
    "api_sidebar",
    "sphinx-mathjax-offline",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = [
    "_build",
    "_inventories",
    "checks",
    "results/*.md",
    "results/**/*.md",
    "**/README.md",
]
templates_path = ["_templates"]
nitpicky = True

# -- API reference -----------------------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = True
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks: set[str] = set()

# -- Markdown pages ----------------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

# -- Cross-references to the libraries kernelmaps builds on ------------------------------
_INVENTORIES = HERE / "_inventories"
intersphinx_mapping = {
    "python": ("https://docs.python.org/3/", str(_INVENTORIES / "python.inv")),
    "numpy": ("https://numpy.org/doc/stable/", str(_INVENTORIES / "numpy.inv")),
    "scipy": ("https://docs.scipy.org/doc/scipy/", str(_INVENTORIES / "scipy.inv")),
    "sklearn": ("https://scikit-learn.org/stable/", str(_INVENTORIES / "sklearn.inv")),
    "dask": ("https://docs.dask.org/en/stable/", str(_INVENTORIES / "dask.inv")),
    "matplotlib": ("https://matplotlib.org/stable/", str(_INVENTORIES / "matplotlib.inv")),
}
intersphinx_timeout = 1

# -- Gallery -----------------------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": str(HERE.parent / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"__init__\.py|_style\.py",
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "matplotlib_animations": False,
    "image_scrapers": ("gallery_figures.returned_figures",),
    "reference_url": {"kernelmaps": None},
    "doc_module": ("kernelmaps",),
    "backreferences_dir": None,
    "show_memory": False,
    "abort_on_example_error": True,
    # The running times stay in each example's page; no summary page is written into
    # docs/, so a build leaves the source tree as it found it.
    "write_computation_times": False,
    # An example shows what it prints, not the value of a block's last expression (the
    # Text that fig.suptitle returns, a Legend): no stray return value on a page.
    "capture_repr": (),
}

# -- HTML --------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"kernelmaps {release}"
html_static_path = ["_static"]
html_favicon = "_static/kernelmaps.svg"
html_css_files = ["kernelmaps.css"]
html_logo = "_static/kernelmaps.svg"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "header_links_before_dropdown": 6,
    "navbar_end": ["theme-switcher", "navbar-icon-links"],
    "secondary_sidebar_items": ["page-toc"],
}
html_context = {"default_mode": "light"}
html_last_updated_fmt = None
html_copy_source = False
html_show_sourcelink = False

os.environ.setdefault("KERNELMAPS_DOCS_BUILD", "1")
