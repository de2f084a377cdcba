"""The layer order of ``docs/ARCHITECTURE.md``, checked on the imports of the source tree.

Every import of ``src/kernelmaps`` (at module level or inside a function, absolute or
relative) is read from the syntax tree, and three rules are checked:

* a module imports nothing from a later layer (the one exception: the dispatch of
  ``_rows.py`` to the Dask implementation in ``_dask/``);
* a module imports no private module of another subpackage (``kernels._argument`` from
  ``feature_maps``, say), only its public names; the top-level shared internals
  (``kernelmaps._config``, ...) are for every layer, and the compiled kernels of
  ``_numba/`` for the compute-kernel modules of ``feature_maps/``;
* Dask and ``distributed`` are imported only inside ``_dask/`` and by ``cli/_cluster.py``.
"""

from __future__ import annotations

import ast
import pathlib

SOURCE = pathlib.Path(__file__).resolve().parents[1] / "src" / "kernelmaps"

#: The rank of each top-level name of the package: a module may import from its own rank
#: and the ranks before it.  As in docs/ARCHITECTURE.md.
RANKS: dict[str, int] = {
    # shared internals (and the error types), for every layer
    **dict.fromkeys(
        [
            "_config",
            "_parallel",
            "_random",
            "_memory",
            "_atomic",
            "_estimator_repr",
            "_task_settings",
            "_array_types",
            "_array_api",
            "_array_extras",
            "_devices",
            "_rows",
            "_streamed_rows",
            "_progress",
            "_suggest",
            "_numba",
            "exceptions",
            "datasets",
        ],
        0,
    ),
    "kernels": 1,
    # beside the layers: the Dask implementation of the rows and of row-wise output, which
    # knows no estimator (it may use the kernels' one-line errors, nothing later)
    "_dask": 1,
    **dict.fromkeys(["sampling", "metrics", "bandwidth"], 2),
    "feature_maps": 3,
    "models": 4,
    "experiments": 5,
    "plotting": 6,
    "cli": 7,
    "__init__": 8,
    "__main__": 8,
}

#: Imports that run against the order, and why they may.
DISPATCH = {("_rows", "_dask")}

#: The modules of feature_maps that call the compiled kernels.
COMPUTE_KERNEL_MODULES = {
    "kernelmaps.feature_maps._trig",
    "kernelmaps.feature_maps._hadamard",
    "kernelmaps.feature_maps._binning_keys",
    "kernelmaps.feature_maps._sketch_kernels",
}

DASK_MODULES = ("dask", "distributed")


def _module_name(path: pathlib.Path) -> tuple[str, bool]:
    parts = list(path.relative_to(SOURCE.parent).with_suffix("").parts)
    package = parts[-1] == "__init__"
    if package:
        parts = parts[:-1]
    return ".".join(parts), package


def _imports() -> list[tuple[str, str, int]]:
    """``(importer, imported, line)`` for every import of the package's modules."""
    found = []
    for path in sorted(SOURCE.rglob("*.py")):
        module, package = _module_name(path)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found += [(module, alias.name, node.lineno) for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                found.append((module, str(node.module), node.lineno))
            elif isinstance(node, ast.ImportFrom):
                base = module.split(".") if package else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                if node.module:
                    found.append((module, ".".join([*base, node.module]), node.lineno))
                else:  # from . import x: x may be a module
                    found += [
                        (module, ".".join([*base, alias.name]), node.lineno) for alias in node.names
                    ]
    return found


IMPORTS = _imports()


def _top(name: str) -> str:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_the_scan_sees_the_package() -> None:
    assert len(IMPORTS) > 300
    tops = {_top(m) for m, _, _ in IMPORTS}
    assert {"kernels", "feature_maps", "models", "experiments", "cli", "_dask"} <= tops
    # every top-level name has a rank
    names = {p.stem if p.is_file() else p.name for p in SOURCE.iterdir()}
    names = {n for n in names if not n.startswith(".") and n not in {"py", "__pycache__"}}
    assert names - {"py"} <= set(RANKS) | {"py.typed"}, names - set(RANKS)


def test_no_import_from_a_later_layer() -> None:
    upward = []
    for importer, imported, line in IMPORTS:
        if not imported.startswith("kernelmaps.") or imported == "kernelmaps.__version__":
            continue
        a, b = _top(importer), _top(imported)
        if a == b or (a, b) in DISPATCH:
            continue
        if RANKS[b] > RANKS[a]:
            upward.append(f"{importer}:{line} imports {imported}")
    assert upward == []


def test_no_private_module_of_another_subpackage() -> None:
    reaching = []
    for importer, imported, line in IMPORTS:
        parts = imported.split(".")
        if parts[0] != "kernelmaps" or len(parts) < 3 or _top(importer) == parts[1]:
            continue  # top-level shared internals, and a package's own modules
        if parts[1] == "_numba" and importer in COMPUTE_KERNEL_MODULES:
            continue
        if parts[1] == "_dask" and (_top(importer), "_dask") in DISPATCH:
            continue
        if any(part.startswith("_") for part in parts[2:]) or parts[1] in {"_numba", "_dask"}:
            reaching.append(f"{importer}:{line} imports {imported}")
    assert reaching == []


def test_dask_is_imported_only_by_its_modules() -> None:
    outside = [
        f"{importer}:{line} imports {imported}"
        for importer, imported, line in IMPORTS
        if imported.split(".")[0] in DASK_MODULES
        and not importer.startswith("kernelmaps._dask")
        and importer != "kernelmaps.cli._cluster"
    ]
    assert outside == []


def test_dask_module_reads_no_private_member_of_an_estimator() -> None:
    """No ``obj._name`` attribute access in ``_dask/`` except on its own objects."""
    own = {"self", "X", "values", "sample_weight", "client", "part", "dask_worker"}
    reads = []
    for path in sorted((SOURCE / "_dask").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and not (isinstance(node.value, ast.Name) and node.value.id in own)
            ):
                reads.append(f"{path.name}:{node.lineno} .{node.attr}")
    assert reads == []
