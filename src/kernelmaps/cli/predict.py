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
  kernelmaps predict model.skops new.csv --proba -o probabilities.csv
  kernelmaps predict model.skops new.csv --interval 0.9 -o intervals.csv

{data}

CSV columns are matched by name to those of the training file (missing ones are an
error, extra ones are ignored); when the target column is present, the score on those
rows is printed as well.  With --proba, a classifier's probabilities are written instead
of its predictions: one column per class, named proba_CLASS (proba_setosa, proba_-1,
...), in the order of the sorted classes; with the target present, the log-loss and the
expected calibration error are printed too.  With --std, a regression model's prediction
and the standard deviation of a new observation are written (columns prediction, std; the
negative log predictive density is printed when the target is present); with --interval
COVERAGE, the prediction and its conformal interval (columns prediction, lower, upper; the
coverage and the mean width are printed when the target is present).  Rows with NaN or
infinite values, and rows
whose prediction overflows, are refused by number; nothing is written then.

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
        "--proba",
        action="store_true",
        help="write the probability of each class (a classifier's), one column per class "
        "named proba_CLASS, instead of the predicted class",
    )
    parser.add_argument(
        "--std",
        action="store_true",
        help="also write the standard deviation of a new observation (a regression model's)",
    )
    parser.add_argument(
        "--interval",
        metavar="COVERAGE",
        type=float,
        help="also write the conformal interval of this coverage, e.g. 0.9 (a regression model's)",
    )
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
    _check_uncertainty(saved, args)
    if args.proba:
        _check_proba(saved, args.model)
    X, y_true = _load_rows(saved, args)
    refuse_nonfinite_rows(args.data, X, "values")
    if args.std or args.interval is not None:
        return _run_uncertainty(saved, args, X, y_true, out)
    try:
        pred = saved.predict_proba(X) if args.proba else saved.predict(X)
    except NonFinitePredictionError as exc:
        where = rows_text(exc.rows, exc.n_rows if exc.n_rows is not None else len(exc.rows))
        where += ", among others" if exc.n_rows is None else ""
        raise UserError(
            f"{args.data}: {where}: the "
            f"prediction overflows float64 (values up to {exc.magnitude:.3g} in magnitude, "
            "far outside the rows the model was fitted on); rescale these rows as the "
            "training rows were, or drop them."
        ) from None
    classes = saved.pipeline.classes_ if args.proba else None
    _write(out, _header(saved, classes), pred if args.proba else pred[:, None])
    report = sys.stderr if not args.output else sys.stdout
    what = "probabilities of " if args.proba else ""
    print(
        f"predicted {what}{len(pred)} rows with {saved.info.get('method')} "
        f"({saved.task})" + (f"; wrote {args.output}" if args.output else ""),
        file=report,
    )
    if y_true is not None and args.proba:
        _score_proba(pred, classes, y_true, report)
    elif y_true is not None:
        _score(saved.task, pred, y_true, report)
    return EXIT_OK


def _check_uncertainty(saved: Any, args: argparse.Namespace) -> None:
    """Refuse ``--std`` and ``--interval`` where they do not apply, in one line."""
    asked = [
        name
        for name, on in (
            ("--std", args.std),
            ("--interval", args.interval is not None),
            ("--proba", args.proba),
        )
        if on
    ]
    if len(asked) > 1:
        raise UserError(f"give at most one of {', '.join(asked)}.")
    if args.interval is not None and not 0.0 < args.interval < 1.0:
        raise UserError(
            f"--interval: the coverage must be in (0, 1), e.g. 0.9; got {args.interval}."
        )
    if (args.std or args.interval is not None) and saved.task != "regression":
        raise UserError(
            f"{args.model}: a {saved.task} model has no predictive std or interval; drop "
            f"{asked[0]}, or use --proba for a classifier's probabilities."
        )


def _run_uncertainty(
    saved: Any, args: argparse.Namespace, X: np.ndarray, y_true: Any, out: Any
) -> int:
    """``--std`` or ``--interval``: the prediction with its std or interval, written and,
    where the target is present, scored."""
    try:
        if args.std:
            values, header = saved.predict_std(X), ["prediction", "std"]
        else:
            values = saved.predict_interval(X, args.interval)
            header = ["prediction", "lower", "upper"]
    except ValueError as exc:  # the model's one-line reason (no posterior, weighted fit)
        if "keep_statistics=False" in str(exc):
            raise UserError(
                f"{args.model}: the model file holds no posterior (fitted without "
                "--keep-statistics); fit again with 'kernelmaps fit ... --keep-statistics' "
                "for --std and --interval."
            ) from None
        raise UserError(f"{args.model}: {exc}") from None
    _write(out, header, values)
    report = sys.stderr if not args.output else sys.stdout
    print(
        f"predicted {len(values)} rows with {saved.info.get('method')} ({saved.task})"
        + (f"; wrote {args.output}" if args.output else ""),
        file=report,
    )
    if y_true is not None:
        text = _uncertainty_score(values, np.asarray(y_true, dtype=np.float64), args.interval)
        print(f"on these rows (their target is present): {text}", file=report)
    return EXIT_OK


def _uncertainty_score(values: np.ndarray, y: np.ndarray, coverage: float | None) -> str:
    """The mean Gaussian negative log predictive density of ``(prediction, std)``
    columns, or the coverage and mean width of ``(prediction, lower, upper)`` ones."""
    if coverage is None:
        z = (y - values[:, 0]) / values[:, 1]
        nlpd = np.mean(0.5 * np.log(2 * np.pi * values[:, 1] ** 2) + 0.5 * z**2)
        return f"negative log predictive density = {float(nlpd):.4f}"
    inside = float(np.mean((values[:, 1] <= y) & (y <= values[:, 2])))
    width = float(np.mean(values[:, 2] - values[:, 1]))
    return f"coverage = {inside:.4f} (nominal {coverage:g}), mean width = {width:.4g}"


def _check_proba(saved: Any, path: str) -> None:
    """Refuse ``--proba`` for a model without probabilities, in one line."""
    if saved.task != "classification":
        raise UserError(
            f"{path}: a {saved.task} model has no class probabilities; drop --proba, or fit "
            "a classifier (kernelmaps fit ... --task classification)."
        )
    if not hasattr(saved.pipeline, "predict_proba"):
        raise UserError(
            f"{path}: this classifier gives no probabilities (a model file of an earlier "
            "kernelmaps); fit it again with 'kernelmaps fit' to have them."
        )


def class_name(value: Any) -> str:
    """A class as it reads in a column name: integral numbers without ``.0``.

    Examples
    --------
    >>> from kernelmaps.cli.predict import class_name
    >>> class_name(-1.0), class_name(2.5), class_name("setosa")
    ('-1', '2.5', 'setosa')
    """
    if isinstance(value, float | np.floating) and float(value).is_integer():
        return str(int(value))
    return str(value.item() if isinstance(value, np.generic) else value)


def _header(saved: Any, classes: Any) -> list[str]:
    """The columns written: ``proba_CLASS`` per class, or the one predicted column."""
    if classes is not None:
        return [f"proba_{class_name(c)}" for c in classes]
    return [f"predicted_{saved.target}" if saved.target else "prediction"]


def _write(out: Any, header: list[str], rows: Any) -> None:
    """The CSV of ``header`` and ``rows`` to ``out`` (whole or not at all), else standard
    output; numbers to 10 significant digits."""
    target: Any = (
        atomic_write(out, "w", newline="")
        if out is not None
        else contextlib.nullcontext(sys.stdout)
    )
    with target as fh:  # a reader of standard output that stops early: main reports it
        writer = csv.writer(fh)
        writer.writerow(header)
        for row in rows:
            writer.writerow(
                [v if not isinstance(v, float | np.floating) else f"{v:.10g}" for v in row]
            )
        fh.flush()


def _score_proba(proba: np.ndarray, classes: Any, y_true: Any, report: Any) -> None:
    """Print the accuracy, the log-loss and the ECE of probabilities on rows whose target
    is present (as text, like the classes of :func:`score_text`)."""
    from sklearn.metrics import log_loss

    from ..metrics import expected_calibration_error

    names = np.asarray([class_name(c) for c in classes])
    truth = np.asarray([class_name(v) for v in np.asarray(y_true)])
    if not np.isin(truth, names).all():  # a target of other classes than the model's
        return
    accuracy = score_text("classification", names[np.argmax(proba, axis=1)], truth)
    order = np.argsort(names)  # the metrics take the columns in the sorted order of labels
    loss = log_loss(truth, proba[:, order], labels=names[order])
    ece = expected_calibration_error(truth, proba[:, order], labels=names[order])
    print(
        f"score on these rows (their target is present): {accuracy}, log-loss = {loss:.4f}, "
        f"expected calibration error = {ece:.4f}",
        file=report,
    )


def _score(task: str, pred: np.ndarray, y_true: Any, report: Any) -> None:
    """Print the score on rows whose target is present (in the units of ``fit``'s)."""
    try:
        text = score_text(task, pred, y_true)
    except (TypeError, ValueError):  # a text target given to a regression model
        return
    print(f"score on these rows (their target is present): {text}", file=report)
