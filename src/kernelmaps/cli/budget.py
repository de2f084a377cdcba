"""``kernelmaps budget``: how many features a data set needs.

The work is :func:`kernelmaps.models.feature_budget`; this module parses and prints.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from ._common import (
    EXIT_OK,
    UserError,
    add_command,
    add_data_options,
    data_text,
    positive_float,
    positive_int,
    random_seed,
)

EXAMPLES = """examples:
  kernelmaps budget cpu_act
  kernelmaps budget train.csv --target price --alpha 10 --epsilon 0.1
  kernelmaps budget california_housing --samples 1000 --no-measure

The features are standardised and gamma is set by the median heuristic on the
standardised rows, as 'kernelmaps fit' does, unless --gamma gives it.  alpha is the
ridge penalty of min sum (y - f)^2 + alpha |f|^2 over all the rows (lambda = alpha in
Avron et al. 2017); the statistical dimension s_alpha = tr(K (K + alpha I)^-1) grows with
the number of rows.  The bounds are computed on a uniform sample of at most --samples
rows; the measured D on at most 1000 of them.

{data}"""


HELP = "how many features a data set needs: the bounds and the measured count"
DESCRIPTION = (
    "Estimate the statistical dimension of a data set's kernel matrix, the number of "
    "features the bounds of random Fourier features and Nystrom ask for, and the number "
    "at which each map reaches the error asked on a sample of the rows."
)


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add ``budget`` and its options to the subcommands ``sub``.

    Examples
    --------
    >>> import argparse
    >>> from kernelmaps.cli import budget
    >>> parser = budget.add_parser(argparse.ArgumentParser().add_subparsers())
    >>> args = parser.parse_args(["cpu_act", "--alpha", "8"])
    >>> args.kernel, args.alpha, args.epsilon, args.samples
    ('rbf', 8.0, 0.05, 2000)
    """
    parser = add_command(
        sub, "budget", HELP, DESCRIPTION, EXAMPLES.replace("{data}", data_text("train")), run
    )
    add = parser.add_argument
    add("data", metavar="DATA", help="the data: a file, a bundled name or a data-home name")
    add(
        "--target",
        metavar="COL",
        help="target column to leave out of the features (CSV: its name; .npy: its index)",
    )
    add("--kernel", default="rbf", metavar="NAME", help="kernel name (default: rbf)")
    add(
        "--gamma",
        type=positive_float,
        metavar="G",
        help="kernel bandwidth (default: the median heuristic, as 'kernelmaps fit')",
    )
    add("--alpha", type=positive_float, default=1.0, metavar="A", help="ridge penalty (1.0)")
    add("--epsilon", type=positive_float, default=0.05, metavar="E", help="error (0.05)")
    add(
        "--delta",
        type=positive_float,
        default=0.05,
        metavar="D",
        help="failure probability of the bounds (0.05)",
    )
    add("--samples", type=positive_int, default=2000, metavar="N", help="sample size (2000)")
    add(
        "--error",
        choices=("spectral", "frobenius"),
        default="spectral",
        help="norm of the measured relative error (default: spectral)",
    )
    add("--no-measure", action="store_true", help="only the bounds, no measured D")
    add("--seed", type=random_seed, default=0, help="random seed, 0 to 2**32 - 1 (default: 0)")
    add_data_options(parser, "train")
    return parser


def _features(args: argparse.Namespace) -> tuple[np.ndarray, str]:
    """The feature rows of the data, finite, standardised as ``kernelmaps fit`` does, and
    the name of the data for messages."""
    from ..experiments import FiniteStandardScaler
    from .fit import finite_rows

    found, X = finite_rows(args, for_fit=False)
    if X.shape[0] < 2:
        raise UserError(f"{args.data}: {X.shape[0]} row; at least 2 are needed.")
    return np.asarray(FiniteStandardScaler().fit_transform(X)), found.label


def run(args: argparse.Namespace) -> int:
    """Run ``kernelmaps budget``: load and standardise the rows, print the budget.

    Examples
    --------
    >>> from kernelmaps.cli import budget, build_parser
    >>> args = build_parser().parse_args(
    ...     ["budget", "cpu_act", "--samples", "200", "--epsilon", "0.3", "--no-measure"])
    >>> budget.run(args)  # doctest: +ELLIPSIS
    data: cpu_act: 8192 rows, 21 features, standardised
    kernel: rbf, gamma = ... (median heuristic on the standardised training rows)
    feature budget: 8192 rows (a uniform sample of 200), kernel Gaussian(gamma=...), ...
    ...
    0
    """
    from ..experiments import choose_gamma
    from ..models import feature_budget

    X, label = _features(args)
    gamma, rule = choose_gamma("rff", X, gamma=args.gamma, kernel=args.kernel)
    if args.gamma is not None:
        rule = "given with --gamma"
    result = feature_budget(
        X,
        kernel=args.kernel,
        gamma=gamma,
        alpha=args.alpha,
        epsilon=args.epsilon,
        delta=args.delta,
        n_samples=args.samples,
        measure=not args.no_measure,
        error=args.error,
        random_state=args.seed,
    )
    print(f"data: {label}: {X.shape[0]} rows, {X.shape[1]} features, standardised")
    if gamma is not None:
        print(f"kernel: {args.kernel}, gamma = {gamma:.6g} ({rule})")
    print(result)
    return EXIT_OK
