"""The layer order of ``docs/ARCHITECTURE.md``, checked on the imports of the source tree.

Every import of ``src/kernelmaps`` (at module level or inside a function, absolute or
relative) is read from the syntax tree, and three rules are checked:

* a module imports nothing from a later layer (the one exception: the dispatch of
  ``_rows.py`` to the Dask implementation in ``_dask/``);
* a module imports no private module of another subpackage (``kernels._argument`` from
  ``feature_maps``, say), only its public names; the top-level shared internals
  (``kernelmaps._config``, ...) are for every layer, and the compiled kernels of
  ``_numba/`` for the compute-kernel modules of ``feature_maps/``;
* Dask and ``distributed`` are imported only inside ``_dask/`` and by ``cli/_cluster.py``;

and the two axes of docs/ARCHITECTURE.md are kept apart: no ``isinstance`` test of a
``Rows`` class outside the rows layer, no test of an array library (``is_foreign``,
``is_device_array``, ``np if isinstance(A, np.ndarray) else ...``) outside the namespace
helpers and the named entry points, no function ``f_array`` beside ``f``, no public
``*_array`` name.
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
            "_validation",
            "_numerics",
            "_row_blocks",
            "_array_extras",
            "_devices",
            "_rows",
            "_streamed_rows",
            "_progress",
            "_progress_bar",
            "_suggest",
            "_numba",
            "exceptions",
            "datasets",
        ],
        0,
    ),
    "kernels": 1,
    # beside the layers: the Dask implementation of the rows and of row-wise output, which
    # knows no estimator (it may use the kernels' public names, nothing later)
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


#: The rows layer: the modules that may tell one kind of rows from another.
ROWS_MODULES = ("kernelmaps._rows", "kernelmaps._streamed_rows", "kernelmaps._dask")

#: The namespace helpers: the modules that may tell one array library from another.
NAMESPACE_MODULES = (
    "kernelmaps._array_api",
    "kernelmaps._array_extras",
    "kernelmaps._devices",
    "kernelmaps._rows",
)

#: The entry points that may ask whether the ``array_api_dispatch`` switch takes a user's
#: array as an array of its library (every other function asks ``get_namespace``).
SWITCH_ENTRY_POINTS: dict[str, str] = {
    "kernelmaps.feature_maps._base": "a map without an array path refuses a user's tensor",
    "kernelmaps.models._base": "a user's y follows the tensor X the switch takes as such",
}

ROWS_CLASSES = {"Rows", "InMemoryRows", "ArrayRows", "StreamedRows", "DaskRows"}
LIBRARY_TESTS = {"is_foreign", "is_device_array"}


def _modules() -> list[tuple[str, ast.Module]]:
    return [
        (_module_name(path)[0], ast.parse(path.read_text(encoding="utf-8")))
        for path in sorted(SOURCE.rglob("*.py"))
    ]


MODULES = _modules()


def _names(node: ast.AST) -> set[str]:
    """The names (``A``, ``x.A``) in a type argument of ``isinstance``: a name, an
    attribute, a tuple or a ``|`` union of them."""
    if isinstance(node, ast.Name):
        return {node.id}
    if isinstance(node, ast.Attribute):
        return {node.attr}
    if isinstance(node, ast.Tuple):
        return set().union(*(_names(e) for e in node.elts))
    if isinstance(node, ast.BinOp):
        return _names(node.left) | _names(node.right)
    return set()


def _calls(tree: ast.AST) -> list[ast.Call]:
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call)]


def _called(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")


Modules = list[tuple[str, ast.Module]]


def _rows_class_tests(modules: Modules) -> list[str]:
    """``isinstance(x, <a Rows class>)`` outside the rows layer."""
    return [
        f"{module}:{call.lineno}"
        for module, tree in modules
        if not module.startswith(ROWS_MODULES)
        for call in _calls(tree)
        if _called(call) == "isinstance"
        and len(call.args) == 2
        and _names(call.args[1]) & ROWS_CLASSES
    ]


def _library_tests(modules: Modules) -> list[str]:
    """Calls of ``is_foreign`` / ``is_device_array`` outside the namespace helpers and
    the named entry points."""
    return [
        f"{module}:{call.lineno} {_called(call)}"
        for module, tree in modules
        if not module.startswith(NAMESPACE_MODULES) and module not in SWITCH_ENTRY_POINTS
        for call in _calls(tree)
        if _called(call) in LIBRARY_TESTS
    ]


#: The modules where ``isinstance(x, np.ndarray)`` asks what a value is, not which library
#: computes (every other one asks ``is_numpy(get_namespace(x)[0])``).
NDARRAY_TYPE_CHECKS: dict[str, str] = {
    "kernelmaps._estimator_repr": "how print shows a parameter",
    "kernelmaps._rows": "labels that are not numbers stay NumPy arrays",
    "kernelmaps.models._base": "labels that are not numbers stay NumPy arrays",
    "kernelmaps.models._streaming_ridge": "labels that are not numbers stay NumPy arrays",
    "kernelmaps.feature_maps._base": "which fitted attributes are arrays, to check them",
    "kernelmaps.feature_maps._hadamard": "fwht's check of its argument",
    "kernelmaps.sampling._rotation": "the check of the rows' type",
}


def _ndarray_paths(modules: Modules) -> list[str]:
    """``isinstance(x, np.ndarray)`` outside the namespace helpers and the modules of
    :data:`NDARRAY_TYPE_CHECKS`."""
    return [
        f"{module}:{call.lineno}"
        for module, tree in modules
        if not module.startswith(NAMESPACE_MODULES) and module not in NDARRAY_TYPE_CHECKS
        for call in _calls(tree)
        if _called(call) == "isinstance" and len(call.args) == 2
        if "ndarray" in _names(call.args[1])
    ]


def _twins(modules: Modules) -> list[str]:
    """Functions ``f_array``, ``f_foreign`` or ``f_on_device`` beside ``f`` (or ``_f``)
    in one module or class."""
    twins = []
    for module, tree in modules:
        scopes = [tree, *(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef))]
        for scope in scopes:
            names = {n.name for n in scope.body if isinstance(n, ast.FunctionDef)}
            for name in names:
                for suffix in ("_array", "_foreign", "_on_device"):
                    base = name.removesuffix(suffix)
                    if base != name and (base in names or base.lstrip("_") in names):
                        twins.append(f"{module}.{name}")
    return twins


def test_no_rows_class_is_tested_outside_the_rows_layer() -> None:
    """A fit asks its rows (``xp``, ``device``, ``held``, ``rebuilt``, ``fitted_place``),
    never which class they are."""
    assert _rows_class_tests(MODULES) == []


def test_no_array_library_is_tested_outside_the_namespace_helpers() -> None:
    """Past the entry points, ``get_namespace`` says where the work runs and ``is_numpy``
    takes NumPy's fast routes; nothing else asks which library an array is of."""
    assert _library_tests(MODULES) == []


def test_numpy_does_not_choose_a_path_by_its_class() -> None:
    """Choosing NumPy's route by ``isinstance(A, np.ndarray)`` is ``is_numpy(xp)``."""
    assert _ndarray_paths(MODULES) == []


def test_no_twin_functions() -> None:
    """One function over ``xp`` serves every library: no ``f_array`` beside ``f``."""
    assert _twins(MODULES) == []


def test_the_guards_see_what_they_forbid() -> None:
    """Each guard flags its pattern in a module of a fit (so that they can fail)."""
    source = """
class Map:
    def _fit(self, rows):
        if isinstance(rows, ArrayRows | StreamedRows):
            pass
        xp = np if isinstance(X, np.ndarray) else namespace_of(X)
        if is_foreign(X):
            pass

    def _transform(self, X): ...

    def _transform_array(self, X): ...
"""
    fake = [("kernelmaps.feature_maps._fake", ast.parse(source))]
    assert _rows_class_tests(fake) == ["kernelmaps.feature_maps._fake:4"]
    assert _library_tests(fake) == ["kernelmaps.feature_maps._fake:7 is_foreign"]
    assert _ndarray_paths(fake) == ["kernelmaps.feature_maps._fake:6"]
    assert _twins(fake) == ["kernelmaps.feature_maps._fake._transform_array"]


def test_no_public_twin() -> None:
    """No public name ends in ``_array`` (an array-library twin of another function)."""
    import importlib

    twins = []
    for module, _ in MODULES:
        if any(part.startswith("_") for part in module.split(".")[1:]):
            continue
        names = getattr(importlib.import_module(module), "__all__", [])
        twins += [f"{module}.{name}" for name in names if name.endswith("_array")]
    assert twins == []
