"""What the commands share: exit statuses, the user error, argument types, the parser."""

from __future__ import annotations

import argparse
import math
import sys
import textwrap
from pathlib import Path
from typing import Any

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


class UserError(Exception):
    """An error the user can fix; printed without a traceback (exit status 2)."""


class Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line naming the fix (exit status 2)."""

    def error(self, message: str) -> Any:
        sys.stderr.write(
            f"{self.prog}: error: {message}; run '{self.prog} --help' for the options.\n"
        )
        raise SystemExit(EXIT_USAGE)


def formatter(prog: str) -> argparse.HelpFormatter:
    """Help laid out as written (the examples keep their lines)."""
    return argparse.RawDescriptionHelpFormatter(prog, max_help_position=32)


def add_command(
    sub: Any, name: str, help: str, description: str, epilog: str, run: Any
) -> argparse.ArgumentParser:
    """A subcommand's parser, laid out like the others, that calls ``run(args)``."""
    parser: argparse.ArgumentParser = sub.add_parser(
        name, help=help, description=description, epilog=epilog, formatter_class=formatter
    )
    parser.set_defaults(run=run)
    return parser


def add_data_home(parser: argparse.ArgumentParser) -> None:
    """The ``--data-home`` option."""
    parser.add_argument(
        "--data-home", metavar="DIR", help="folder of the larger data sets ($KERNELMAPS_DATA)"
    )


def _number(text: str, kind: type, what: str) -> Any:
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
    if kind is float and not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}: not a finite number")
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected {what}, got {value if kind is int else text}")
    return value


def positive_int(text: str) -> int:
    """An argument type: an integer >= 1.

    Examples
    --------
    >>> from kernelmaps.cli._common import positive_int
    >>> positive_int("16")
    16
    """
    return int(_number(text, int, "a positive integer"))


def random_seed(text: str) -> int:
    """An argument type: a random seed, an integer in ``[0, 2**32 - 1]`` (what
    scikit-learn's ``random_state`` accepts).

    Examples
    --------
    >>> from kernelmaps.cli._common import random_seed
    >>> random_seed("0"), random_seed("4294967295")
    (0, 4294967295)
    """
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer seed, got {text!r}") from None
    if not 0 <= value <= 2**32 - 1:
        raise argparse.ArgumentTypeError(f"expected a seed between 0 and 4294967295, got {value}")
    return value


def positive_float(text: str) -> float:
    """An argument type: a finite number > 0.

    Examples
    --------
    >>> from kernelmaps.cli._common import positive_float
    >>> positive_float("0.5")
    0.5
    >>> positive_float("inf")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected a positive number, got 'inf': not a finite number
    """
    return float(_number(text, float, "a positive number"))


def bandwidth(text: str) -> str | float:
    """An argument type: a bandwidth rule's name or a finite positive gamma.

    Examples
    --------
    >>> from kernelmaps.cli._common import bandwidth
    >>> bandwidth("median"), bandwidth("0.25")
    ('median', 0.25)
    """
    from ..bandwidth import BANDWIDTH_RULES

    if text in BANDWIDTH_RULES:
        return text
    rules = ", ".join(BANDWIDTH_RULES)
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected one of {rules} or a positive gamma, got {text!r}"
        ) from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(
            f"gamma must be a finite positive number, got {text!r}; give a number such as 0.1 "
            f"or one of {rules}"
        )
    return value


def output_file(path: str, name_for: str, folder_for: str) -> Path:
    """The file ``path`` a command will write, checked before the work: not a folder, in
    a folder that exists.

    ``name_for`` and ``folder_for`` end the messages: "give a file name for
    {name_for}", "no such folder for {folder_for}".

    Examples
    --------
    >>> from kernelmaps.cli._common import output_file
    >>> output_file(".", "the model", "the model file")
    Traceback (most recent call last):
    ...
    kernelmaps.cli._common.UserError: .: is a folder; give a file name for the model.
    """
    out = Path(path)
    if out.is_dir():
        raise UserError(f"{out}: is a folder; give a file name for {name_for}.")
    if out.parent and not out.parent.exists():
        raise UserError(f"{out.parent}: no such folder for {folder_for}; create it first.")
    return out


def data_text(default_subset: str) -> str:
    """The epilog paragraph on how DATA is found, for a command whose sets with a split
    use the part ``default_subset`` unless ``--subset`` says otherwise."""
    from ..datasets import BUNDLED, DATA_HOME_SETS

    split = [n for n, i in BUNDLED.items() if i.split is not None]
    split += [n for n, h in DATA_HOME_SETS.items() if h.split is not None]
    part = {"train": "training part", "test": "test part", "all": "training and test parts"}
    text = (
        "DATA is found in this order: a name written as a path (with a folder separator, "
        "or a suffix such as .csv) is a file; else a bundled name (" + ", ".join(BUNDLED) + "), "
        "then a name of the data home (--data-home or $KERNELMAPS_DATA; 'kernelmaps "
        "datasets' lists both), then any other file.  A bare name that is also a file in "
        "the current folder is refused: write ./NAME for the file.  The sets with a "
        f"standard train/test split ({', '.join(split)}) give their "
        f"{part[default_subset]} unless --subset says otherwise; a file is read whole."
    )
    return textwrap.fill(text, width=88) + "\n"


def add_data_options(parser: argparse.ArgumentParser, default_subset: str) -> None:
    """The ``--data-home`` and ``--subset`` options of a command that reads DATA."""
    add_data_home(parser)
    parser.add_argument(
        "--subset",
        choices=("train", "test", "all"),
        help="the part of a set with a standard train/test split (letter, usps): train, "
        f"test or all (default: {default_subset})",
    )


def load_user_data(
    name: str,
    target: str | None,
    *,
    data_home: str | None,
    subset: str | None,
    default_subset: str,
    for_fit: bool,
) -> Any:
    """The data a command-line argument names, resolved by
    :func:`kernelmaps.datasets.resolve_dataset` (the rows are read on first use of
    ``.dataset``).

    A set with a standard split gives its part ``subset``, else ``default_subset``; a
    file read for a fit must name its target where it does not carry one.
    """
    from ..datasets import resolve_dataset

    found = resolve_dataset(name, target=target, data_home=data_home, subset=subset or "all")
    if subset is None and found.has_split and default_subset != "all":
        found = resolve_dataset(name, data_home=data_home, subset=default_subset)
    if found.format == "svmlight" and target is not None:
        raise UserError(
            f"{name}: a svmlight file carries its target (the first value of each line), so "
            f"--target {target} does not apply; drop --target."
        )
    if found.format == "csv" and for_fit and target is None:
        raise UserError(
            f"{name}: give the target column with --target NAME (the column to predict)."
        )
    if found.format == "npy" and for_fit and target is None:
        raise UserError(f"{name}: give the target column index with --target (e.g. -1).")
    return found
