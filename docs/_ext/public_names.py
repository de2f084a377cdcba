"""Resolve a cross-reference to the public name under which the object is documented.

A docstring in ``kernelmaps/models/_budget/_feature_budget.py`` may write
:class:`NystroemKernelRidge` or :class:`kernelmaps.models.NystroemKernelRidge`; the page documents
the object once, as ``kernelmaps.NystroemKernelRidge``. When Sphinx finds no target, this extension
imports what the reference names (in the module of the docstring, or as a dotted path) and, when it
is the very object documented under a public name, links there. A name that resolves to nothing, or
to an object documented nowhere, stays a broken reference (an error with -W).
"""

from __future__ import annotations

import importlib
from typing import Any

from docutils import nodes
from sphinx.addnodes import pending_xref
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment

_KINDS = {"class", "function", "method", "attribute", "property", "data", "exception"}


def _lookup(dotted: str) -> Any:
    """The object at ``dotted`` (``module.attr.attr``), or ``None``."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr, None)
            if obj is None:
                return None
        return obj
    return None


def _documented(env: BuildEnvironment) -> dict[int, str]:
    """``id(object) -> public name`` of every object the py domain documents."""
    cache = getattr(env, "_public_names_cache", None)
    if cache is None:
        cache = {}
        for name, entry in env.get_domain("py").objects.items():
            if not entry.aliased and entry.objtype in _KINDS:
                obj = _lookup(name)
                if obj is not None and not isinstance(obj, (str, int, float, tuple, dict)):
                    cache.setdefault(id(obj), name)
        env._public_names_cache = cache  # type: ignore[attr-defined]
    return cache


def _by_suffix(env: BuildEnvironment, target: str) -> str | None:
    """The one documented name that ends with ``.target`` (``merge`` or
    ``RidgeStatistics.merge``), or ``None`` when none or several do."""
    if target.startswith("kernelmaps."):
        return None
    objects = env.get_domain("py").objects.items()
    found = [name for name, e in objects if not e.aliased and name.endswith(f".{target}")]
    return found[0] if len(found) == 1 else None


def _public_target(env: BuildEnvironment, target: str, module: str | None) -> str | None:
    """The documented name of what ``target`` names, seen from ``module``."""
    documented = _documented(env)
    candidates = [target] if target.startswith("kernelmaps.") else []
    if module:
        candidates.append(f"{module}.{target}")
    for dotted in candidates:
        obj = _lookup(dotted)
        if obj is not None and id(obj) in documented:
            return documented[id(obj)]
    return _by_suffix(env, target)


def _resolve(
    app: Sphinx, env: BuildEnvironment, node: pending_xref, contnode: nodes.Element
) -> nodes.Element | None:
    if node.get("refdomain") != "py":
        return None
    target = node["reftarget"]
    public = _public_target(env, target, node.get("py:module"))
    if public is None or public == target:
        return None
    node = node.deepcopy()
    node["reftarget"] = public
    return env.get_domain("py").resolve_xref(
        env, node["refdoc"], app.builder, node["reftype"], public, node, contnode
    )


def _reset(app: Sphinx, env: BuildEnvironment, *args: Any) -> None:
    env._public_names_cache = None  # type: ignore[attr-defined]


def _skip_request_setters(
    app: Sphinx, what: str, name: str, obj: Any, skip: bool, options: Any
) -> bool | None:
    """scikit-learn's generated ``set_*_request`` methods (metadata routing) are its own
    API, documented there; their docstrings refer to its user guide."""
    return True if name.startswith("set_") and name.endswith("_request") else None


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("missing-reference", _resolve)
    app.connect("autodoc-skip-member", _skip_request_setters)
    app.connect("env-updated", _reset)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
