"""The Examples sections of the package's docstrings, run as doctests.

Every public estimator and function documents its use with an example; running them here
keeps the examples true.  Modules are imported from the installed package, as a user would.
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import pkgutil

import pytest

import kernelmaps

#: Modules whose import needs an optional dependency that may be absent.
_OPTIONAL = {"kernelmaps._numba": "numba"}


def _module_names() -> list[str]:
    names = [kernelmaps.__name__]
    for info in pkgutil.walk_packages(kernelmaps.__path__, prefix="kernelmaps."):
        if not info.name.endswith("__main__"):  # running it is the command line
            names.append(info.name)
    return sorted(names)


def _tests(name: str) -> list[doctest.DocTest]:
    for prefix, requirement in _OPTIONAL.items():
        if name.startswith(prefix):
            pytest.importorskip(requirement)
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    # Only the docstrings of objects defined in this module (not re-exports).
    return [t for t in finder.find(module) if t.examples and _defined_in(t, module)]


def _defined_in(test: doctest.DocTest, module: object) -> bool:
    return test.filename is None or test.filename == getattr(module, "__file__", None)


MODULES = _module_names()


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in _tests(name):
        runner.run(test)
    results = runner.summarize(verbose=False)
    assert results.failed == 0, f"{results.failed} doctest example(s) failed in {name}"


#: The public modules: every class and function in their ``__all__`` shows its use.
PUBLIC_MODULES = [
    "kernelmaps",
    "kernelmaps.bandwidth",
    "kernelmaps.cli",
    "kernelmaps.datasets",
    "kernelmaps.experiments",
    "kernelmaps.feature_maps",
    "kernelmaps.kernels",
    "kernelmaps.metrics",
    "kernelmaps.models",
    "kernelmaps.plotting",
    "kernelmaps.sampling",
]


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_every_public_name_has_an_example(name: str) -> None:
    module = importlib.import_module(name)
    missing = [
        attr
        for attr in getattr(module, "__all__", [])
        if (inspect.isclass(obj := getattr(module, attr)) or inspect.isfunction(obj))
        and ">>>" not in (inspect.getdoc(obj) or "")
    ]
    assert not missing, f"{name}: no Examples section in the docstrings of {missing}"


def test_enough_examples() -> None:
    """Every public estimator and function has an example: at least that many run."""
    count = 0
    for name in MODULES:
        if any(name.startswith(prefix) for prefix in _OPTIONAL):
            continue
        count += len(_tests(name))
    assert count >= 20, f"only {count} docstrings with examples"
