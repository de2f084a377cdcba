"""``kernelmaps methods``: the registered methods and the kernels each supports."""

from __future__ import annotations

import argparse
from typing import Any

from ._common import EXIT_OK, add_command

HELP = "list the registered methods"
DESCRIPTION = "List the methods that compare and fit accept."
EXAMPLES = "examples:\n  kernelmaps methods\n"


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add ``methods`` to the subcommands ``sub``.

    Examples
    --------
    >>> import argparse
    >>> from kernelmaps.cli import methods
    >>> parser = methods.add_parser(argparse.ArgumentParser().add_subparsers())
    >>> args = parser.parse_args([])
    >>> args.run is methods.run
    True
    """
    return add_command(sub, "methods", HELP, DESCRIPTION, EXAMPLES, run)


def run(args: argparse.Namespace) -> int:
    """Run ``kernelmaps methods``: each registered method and the kernels it supports.

    Examples
    --------
    >>> from kernelmaps.cli import build_parser, methods
    >>> methods.run(build_parser().parse_args(["methods"]))  # doctest: +ELLIPSIS
      rff-mc               ... [default kernel rbf; ...]
    ...
    aliases for 'kernelmaps fit --method': rff = rff-mc, ...
    0
    """
    from ..experiments import METHOD_ALIASES, get_method, method_names
    from ..kernels import kernel_names

    every = tuple(kernel_names())
    for name in method_names():
        spec = get_method(name)
        supported = spec.supported_kernels()
        kernels = "any kernel" if supported == every else ", ".join(supported)
        print(f"  {name:<20} {spec.description} [default kernel {spec.kernel}; {kernels}]")
    aliases = ", ".join(f"{k} = {v}" for k, v in METHOD_ALIASES.items())
    print(f"\naliases for 'kernelmaps fit --method': {aliases}")
    return EXIT_OK
