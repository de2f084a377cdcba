"""``kernelmaps datasets``: the bundled data sets and those of the data home."""

from __future__ import annotations

import argparse
import os
from typing import Any

from ._common import EXIT_OK, add_command, add_data_home

EXAMPLES = """examples:
  kernelmaps datasets
  kernelmaps datasets --data-home ../shared/data
  KERNELMAPS_DATA=/data/kernelmaps kernelmaps datasets

fit, predict, budget and compare take these names where they take a data file.
"""

HELP = "list the bundled data sets and those of the data home"
DESCRIPTION = "List the bundled data sets and those the data home holds."


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add ``datasets`` and its options to the subcommands ``sub``.

    Examples
    --------
    >>> import argparse
    >>> from kernelmaps.cli import datasets
    >>> parser = datasets.add_parser(argparse.ArgumentParser().add_subparsers())
    >>> args = parser.parse_args(["--data-home", "data"])
    >>> args.data_home
    'data'
    """
    parser = add_command(sub, "datasets", HELP, DESCRIPTION, EXAMPLES, run)
    add_data_home(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    """Run ``kernelmaps datasets``: list the bundled sets and the data home's.

    Examples
    --------
    >>> import tempfile
    >>> from kernelmaps.cli import build_parser, datasets
    >>> datasets.run(build_parser().parse_args(["datasets", "--data-home", tempfile.mkdtemp()]))
    ... # doctest: +ELLIPSIS
    bundled with the package:
      letter ...
    data home ...:
    ...
    0
    """
    from ..datasets import BUNDLED, DATA_HOME_ENV, DATA_HOME_SETS, list_data_home

    print("bundled with the package:")
    for name, info in BUNDLED.items():
        shape = f"{info.shape[0]} x {info.shape[1]}"
        task = f"{info.n_classes} classes" if info.n_classes else info.task
        split = (
            f"; standard split {info.split[0]} train, {info.split[1]} test" if info.split else ""
        )
        print(f"  {name:<20} {shape:>11}  {task:<12} {info.source}; licence: {info.licence}{split}")
    home = args.data_home or os.environ.get(DATA_HOME_ENV)
    print()
    if not home:
        print(
            f"data home: not set (use --data-home DIR or the {DATA_HOME_ENV} environment "
            "variable); "
            f"it may hold: {', '.join(DATA_HOME_SETS)}"
        )
        return EXIT_OK
    present = list_data_home(home)
    print(f"data home {home}:")
    for name, ok in present.items():
        mark = "present" if ok else "missing"
        print(f"  {name:<20} {mark:<8} {DATA_HOME_SETS[name].description}")
    return EXIT_OK
