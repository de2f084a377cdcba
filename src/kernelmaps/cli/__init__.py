"""The ``kernelmaps`` command line.

``kernelmaps compare``
    Compare feature maps by kernel approximation error on real data (bundled data sets by
    default), print a table, write tidy results, provenance and a figure.
``kernelmaps fit`` / ``kernelmaps predict``
    Fit ridge regression or classification on a feature map from a data file, save it,
    and predict new rows with it.
``kernelmaps budget``
    How many features a data set needs: its statistical dimension, the bounds and the
    measured count (:func:`kernelmaps.models.feature_budget`).
``kernelmaps datasets`` / ``kernelmaps methods``
    What is bundled, what the data home holds, and the registered methods.

Each command is a module holding its parser and its run function; the work is done by
the library (:mod:`kernelmaps.experiments`).

Exit status: 0 on success, 1 when the work itself failed (every cell failed, a file could
not be written), 2 for a usage or input error (bad option, unreadable or mismatched data, a request
larger than the available memory),
130 when interrupted.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence
from typing import Any

from .._atomic import describe_os_error
from ..exceptions import InsufficientMemoryError, OutputWriteError
from . import budget, compare, datasets, fit, methods, predict
from ._common import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    Parser,
    UserError,
    formatter,
)

__all__ = ["DEFAULT_DATASETS", "DEFAULT_METHODS", "main"]

EXAMPLES = """examples:
  kernelmaps compare                          # the default study, about a minute
  kernelmaps compare --datasets letter cpu_act --methods rff-mc rff-sobol --seeds 5
  kernelmaps fit train.csv --target price -o model.skops
  kernelmaps predict model.skops new.csv -o predictions.csv
  kernelmaps budget cpu_act                   # how many features the data needs
  kernelmaps datasets

Run "kernelmaps COMMAND --help" for the options of a command.
"""

_COMMANDS = (compare, fit, predict, budget, datasets, methods)


def __getattr__(name: str) -> Any:
    """``DEFAULT_DATASETS`` and ``DEFAULT_METHODS``: the names of the default study."""
    if name in ("DEFAULT_DATASETS", "DEFAULT_METHODS"):
        from ..experiments import default_study

        study = default_study(registered_only=False)
        entries = study.datasets if name == "DEFAULT_DATASETS" else study.methods
        return tuple(entry.name for entry in entries)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``kernelmaps`` and its subcommands (each adds its own).

    Examples
    --------
    >>> from kernelmaps.cli import build_parser
    >>> args = build_parser().parse_args(["fit", "train.csv", "--target", "y", "-o", "m.skops"])
    >>> args.command, args.target, args.run.__module__
    ('fit', 'y', 'kernelmaps.cli.fit')
    """
    from .. import __version__

    parser = Parser(
        prog="kernelmaps",
        description=(
            "Explicit kernel feature maps: compare their approximation error on real data, "
            "fit and apply models built on them."
        ),
        epilog=EXAMPLES,
        formatter_class=formatter,
    )
    parser.add_argument("--version", action="version", version=f"kernelmaps {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for command in _COMMANDS:
        command.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``kernelmaps`` command.

    Parameters
    ----------
    argv : sequence of str, default=None
        The arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit status: 0 success, 1 failed work, 2 usage or input error, 130 interrupted.

    Examples
    --------
    >>> from kernelmaps.cli import main
    >>> main(["methods"])  # doctest: +ELLIPSIS
      rff-mc ...
    0
    """
    prog = "kernelmaps"
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return EXIT_OK
        prog = f"kernelmaps {args.command}"
        status: int = args.run(args)
        return status
    except KeyboardInterrupt:
        print(f"\n{prog}: interrupted.", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader of standard output stopped early (``| head``): nothing to report.
        # Keep Python from reporting the pipe again when it flushes standard output at exit.
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FAILED
    except (UserError, ValueError, FileNotFoundError, InsufficientMemoryError) as exc:
        print(f"{prog}: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except OutputWriteError as exc:
        print(f"{prog}: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_FAILED
    except OSError as exc:
        print(f"{prog}: error: {describe_os_error(exc)}", file=sys.stderr)
        return EXIT_FAILED
    except ImportError as exc:
        print(f"{prog}: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_FAILED


def _one_line(exc: BaseException) -> str:
    """The message of ``exc`` on one line (a multi-line message is joined)."""
    return " ".join(part.strip() for part in str(exc).splitlines() if part.strip())
