"""The sidebar of the API reference: its groups, each a collapsed list of its names.

``docs/api.rst`` lists every public name in sections (the maps, the models, then one section
per module), each with an autosummary table whose pages are the section's entries.  The
theme's sidebar would list the ~160 pages flat; this extension gives the templates
``api_groups``: one entry per section of the page (its title and address, the titles and
addresses of its pages, and whether the current page is among them), which
``_templates/sidebar-nav-bs.html`` draws as the theme draws nested pages, each group
collapsed but the current page's.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx

#: The page whose sections are the groups.
API_PAGE = "api"


def _sections(app: Sphinx) -> list[tuple[str, str, list[str]]]:
    """``(title, anchor, [docname, ...])`` of each section of the API page with pages."""
    env = app.env
    cached = getattr(env, "_api_sidebar_sections", None)
    if cached is not None:
        return cached
    groups = []
    doctree = env.get_doctree(API_PAGE)
    for section in doctree.findall(nodes.section):
        if not isinstance(section.parent, nodes.section):  # the page's title
            continue
        docnames = [
            docname
            for toctree in section.findall(addnodes.toctree)
            for _, docname in toctree["entries"]
        ]
        if docnames:
            groups.append((section[0].astext(), section["ids"][0], docnames))
    env._api_sidebar_sections = groups  # type: ignore[attr-defined]
    return groups


def _page_context(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """``api_groups`` on the API page and on the pages of its names."""
    if pagename != API_PAGE and not any(pagename in docnames for _, _, docnames in _sections(app)):
        return
    uri = app.builder.get_relative_uri
    env = app.env
    context["api_groups"] = [
        {
            "title": title,
            "href": f"{uri(pagename, API_PAGE)}#{anchor}",
            "current": pagename in docnames,
            "pages": [
                {
                    "title": env.titles[docname].astext(),
                    "href": uri(pagename, docname),
                    "current": docname == pagename,
                }
                for docname in docnames
            ],
        }
        for title, anchor, docnames in _sections(app)
    ]


def _forget(app: Sphinx, env: Any) -> None:
    """A new read of the sources makes the groups anew."""
    if hasattr(env, "_api_sidebar_sections"):
        del env._api_sidebar_sections


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("html-page-context", _page_context)
    app.connect("env-updated", _forget)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
