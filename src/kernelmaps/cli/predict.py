"""``kernelmaps predict``: predict new rows with a model saved by ``kernelmaps fit``."""

from __future__ import annotations

import argparse
import contextlib
import csv
import sys
from typing import Any

import numpy as np

from .._atomic import atomic_write
from ._common import (
    EXIT_OK,
    UserError,
    add_command,
    add_data_options,
    data_text,
    load_user_data,
    output_file,
)
from .fit import refuse_nonfinite_rows, rows_text, score_text

EXAMPLES = """examples:
  kernelmaps predict model.skops new.csv -o predictions.csv
  kernelmaps predict model.skops new.csv             # predictions to standard output
  kernelmaps predict usps.skops usps --data-home DIR  # usps's test part, scored

{data}

CSV columns are matched by name to those of the training file (missing ones are an
error, extra ones are ignored); when the target column is present, the score on those
rows is printed as well.  Rows with NaN or infinite values, and rows whose prediction
overflows, are refused by number; nothing is written then.

Only model files written by 'kernelmaps fit' (skops format) are read, and reading one
cannot run code: pickle and joblib files are refused without being opened as such.
"""


HELP = "predict new rows with a model saved by 'kernelmaps fit'"
DESCRIPTION = "Predict the rows of a data file with a saved model."


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add ``predict`` and its options to the subcommands ``sub``.

    Examples
    --------
    >>> import argparse
    >>> from kernelmaps.cli import predict
    >>> parser = predict.add_parser(argparse.ArgumentParser().add_subparsers())
    >>> args = parser.parse_args(["model.skops", "new.csv"])
    >>> args.model, args.output
    ('model.skops', None)
    """
    parser = add_command(
        sub, "predict", HELP, DESCRIPTION, EXAMPLES.replace("{data}", data_text("test")), run
    )
    parser.add_argument(
        "model", metavar="MODEL", help="a model file written by 'kernelmaps fit' (.skops)"
    )
    parser.add_argument(
        "data",
        metavar="DATA",
        help="the rows to predict: a file, a bundled name or a data-home name (see below)",
    )
    add_data_options(parser, "test")
    parser.add_argument(
        "-o", "--output", metavar="FILE", help="CSV of predictions (default: standard output)"
    )
    return parser


def _load_model(path: str) -> Any:
    """The :class:`~kernelmaps.experiments.SavedModel` in ``path`` (one-line errors)."""
    from ..experiments import load_model

    return load_model(path)


def _load_rows(saved: Any, args: argparse.Namespace) -> tuple[np.ndarray, Any]:
    """The rows of ``args.data`` in the model's column order, and their target if present.

    A column mismatch is reported with the data's name.
    """
    from ..experiments import ColumnMismatchError

    path = args.data
    where = {"data_home": args.data_home, "subset": args.subset, "default_subset": "test"}
    found = load_user_data(path, None, **where, for_fit=False)
    by_name = found.format == "csv" and saved.data_format == "csv"
    ds = found.dataset if not by_name or saved.target is None else None
    if ds is None:  # a CSV file read by name: its target column, where present, is scored
        try:
            ds = load_user_data(path, saved.target, **where, for_fit=False).dataset
        except ValueError as exc:
            if f"no column named {saved.target!r}" not in str(exc):
                raise
            ds = found.dataset
    y_true = ds.y
    try:
        return saved.check_columns(ds, by_name=by_name), y_true
    except ColumnMismatchError as exc:
        raise UserError(f"{path}: {exc}") from None


def run(args: argparse.Namespace) -> int:
    """Run ``kernelmaps predict``: check the columns, predict, write and score.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import numpy as np
    >>> from kernelmaps.cli import build_parser, predict
    >>> from kernelmaps.experiments import SavedModel, make_model, save_model
    >>> folder = Path(tempfile.mkdtemp())
    >>> X = np.random.default_rng(0).random((40, 2))
    >>> np.save(folder / "rows.npy", X[:5])
    >>> model = make_model("rff", n_components=16, gamma=1.0).fit(X, X.sum(axis=1))
    >>> saved = SavedModel(model, ["a", "b"], None, "regression", "npy", {"method": "rff-mc"})
    >>> save_model(saved, folder / "model.skops")
    >>> args = build_parser().parse_args(["predict", str(folder / "model.skops"),
    ...                                   str(folder / "rows.npy"), "-o", str(folder / "p.csv")])
    >>> predict.run(args)  # doctest: +ELLIPSIS
    predicted 5 rows with rff-mc (regression); wrote ...p.csv
    0
    """
    from ..experiments import NonFinitePredictionError

    out = None
    if args.output is not None:  # else: to standard output
        out = output_file(args.output, "the predictions", "the predictions")
    saved = _load_model(args.model)
    X, y_true = _load_rows(saved, args)
    refuse_nonfinite_rows(args.data, X, "values")
    try:
        pred = saved.predict(X)
    except NonFinitePredictionError as exc:
        where = rows_text(exc.rows, exc.n_rows if exc.n_rows is not None else len(exc.rows))
        where += ", among others" if exc.n_rows is None else ""
        raise UserError(
            f"{args.data}: {where}: the "
            f"prediction overflows float64 (values up to {exc.magnitude:.3g} in magnitude, "
            "far outside the rows the model was fitted on); rescale these rows as the "
            "training rows were, or drop them."
        ) from None
    name = f"predicted_{saved.target}" if saved.target else "prediction"
    target: Any = (
        atomic_write(out, "w", newline="")
        if out is not None
        else contextlib.nullcontext(sys.stdout)
    )
    with target as fh:  # a reader of standard output that stops early: main reports it
        writer = csv.writer(fh)
        writer.writerow([name])
        for value in pred:
            writer.writerow([value if not isinstance(value, float) else f"{value:.10g}"])
        fh.flush()
    report = sys.stderr if not args.output else sys.stdout
    print(
        f"predicted {len(pred)} rows with {saved.info.get('method')} "
        f"({saved.task})" + (f"; wrote {args.output}" if args.output else ""),
        file=report,
    )
    if y_true is not None:
        _score(saved.task, pred, y_true, report)
    return EXIT_OK


def _score(task: str, pred: np.ndarray, y_true: Any, report: Any) -> None:
    """Print the score on rows whose target is present (in the units of ``fit``'s)."""
    try:
        text = score_text(task, pred, y_true)
    except (TypeError, ValueError):  # a text target given to a regression model
        return
    print(f"score on these rows (their target is present): {text}", file=report)
