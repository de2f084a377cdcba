"""The API reference of the documentation site lists every public name.

``docs/api.rst`` is written by hand (sections, order, introductions); this test keeps it
complete: a name added to the ``__all__`` of a documented module and missing from the page
fails here, before the site is built.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

API = Path(__file__).resolve().parents[1] / "docs" / "api.rst"
MODULES = [
    "kernelmaps",
    "kernelmaps.kernels",
    "kernelmaps.models",
    "kernelmaps.sampling",
    "kernelmaps.experiments",
    "kernelmaps.metrics",
    "kernelmaps.bandwidth",
    "kernelmaps.datasets",
    "kernelmaps.plotting",
    "kernelmaps.exceptions",
]


def _listed() -> dict[str, set[str]]:
    """``module -> names`` listed under each ``.. currentmodule::`` of the page."""
    listed: dict[str, set[str]] = {}
    module = None
    for line in API.read_text(encoding="utf-8").splitlines():
        if found := re.match(r"\.\. currentmodule:: (\S+)", line):
            module = found[1]
        elif module and (found := re.match(r"(?:   |\.\. autodata:: )(\w+)$", line)):
            listed.setdefault(module, set()).add(found[1])
    return listed


def _documented_elsewhere(module: str, name: str, listed: dict[str, set[str]]) -> bool:
    """A name re-exported from another documented module is documented there once."""
    obj = getattr(importlib.import_module(module), name)
    return any(
        other != module and name in names and getattr(importlib.import_module(other), name) is obj
        for other, names in listed.items()
    )


@pytest.mark.parametrize("module", MODULES)
def test_every_public_name_is_in_the_api_reference(module: str) -> None:
    if not API.is_file():
        pytest.fail(f"{API} is missing")
    listed = _listed()
    public = set(importlib.import_module(module).__all__) - {"__version__", "kernels"}
    missing = sorted(
        name
        for name in public - listed.get(module, set())
        if not _documented_elsewhere(module, name, listed)
    )
    assert not missing, f"docs/api.rst does not list {module}.{{{', '.join(missing)}}}"
