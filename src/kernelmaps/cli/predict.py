"""``kernelmaps predict``: predict new rows with a model saved by ``kernelmaps fit``."""

from __future__ import annotations

import argparse
import contextlib
import csv
import sys
from pathlib import Path
from typing import Any

import numpy as np

from ._common import EXIT_OK, UserError, add_command, load_user_data

EXAMPLES = """examples:
  kernelmaps predict model.joblib new.csv -o predictions.csv
  kernelmaps predict model.joblib new.csv            # predictions to standard output

CSV columns are matched by name to those of the training file (missing ones are an
error, extra ones are ignored); when the target column is present, the score on those
rows is printed as well.
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
    >>> args = parser.parse_args(["model.joblib", "new.csv"])
    >>> args.model, args.output
    ('model.joblib', None)
    """
    parser = add_command(sub, "predict", HELP, DESCRIPTION, EXAMPLES, run)
    parser.add_argument("model", metavar="MODEL", help="a file written by 'kernelmaps fit'")
    parser.add_argument("data", metavar="DATA", help="the rows to predict")
    parser.add_argument(
        "-o", "--output", metavar="FILE", help="CSV of predictions (default: standard output)"
    )
    return parser


def _load_model(path: str) -> Any:
    """The :class:`~kernelmaps.experiments.SavedModel` in ``path``."""
    import joblib

    from ..experiments import SavedModel

    model_path = Path(path)
    if not model_path.is_file():
        raise FileNotFoundError(f"{model_path}: no such model file.")
    try:
        saved = joblib.load(model_path)
    except Exception as exc:
        raise UserError(
            f"{model_path}: not a model file written by 'kernelmaps fit' ({type(exc).__name__})."
        ) from None
    if not isinstance(saved, SavedModel):
        raise UserError(f"{model_path}: not a model file written by 'kernelmaps fit'.")
    return saved


def _load_rows(saved: Any, path: str) -> tuple[np.ndarray, Any]:
    """The rows of ``path`` in the model's column order, and their target if present."""
    from ..datasets import file_format, load_csv

    by_name = file_format(path) == "csv" and saved.data_format == "csv"
    if not by_name:
        ds, _ = load_user_data(path, None, for_fit=False)
        return saved.check_columns(ds, by_name=False), ds.y
    try:
        ds = load_csv(path, saved.target)
        y_true = ds.y
    except ValueError as exc:
        if saved.target is None or f"no column named {saved.target!r}" not in str(exc):
            raise
        ds, y_true = load_csv(path, None), None
    return saved.check_columns(ds, by_name=True), y_true


def run(args: argparse.Namespace) -> int:
    """Run ``kernelmaps predict``: check the columns, predict, write and score.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import joblib
    >>> import numpy as np
    >>> from kernelmaps.cli import build_parser, predict
    >>> from kernelmaps.experiments import make_model
    >>> from kernelmaps.experiments import SavedModel
    >>> folder = Path(tempfile.mkdtemp())
    >>> X = np.random.default_rng(0).random((40, 2))
    >>> np.save(folder / "rows.npy", X[:5])
    >>> model = make_model("rff", n_components=16, gamma=1.0).fit(X, X.sum(axis=1))
    >>> saved = SavedModel(model, ["a", "b"], None, "regression", "npy", {"method": "rff-mc"})
    >>> _ = joblib.dump(saved, folder / "model.joblib")
    >>> args = build_parser().parse_args(["predict", str(folder / "model.joblib"),
    ...                                   str(folder / "rows.npy"), "-o", str(folder / "p.csv")])
    >>> predict.run(args)  # doctest: +ELLIPSIS
    predicted 5 rows with rff-mc (regression); wrote ...p.csv
    0
    """
    saved = _load_model(args.model)
    X, y_true = _load_rows(saved, args.data)
    pred = saved.predict(X)
    name = f"predicted_{saved.target}" if saved.target else "prediction"
    target: Any = (
        open(Path(args.output), "w", newline="", encoding="utf-8")  # noqa: SIM115
        if args.output
        else contextlib.nullcontext(sys.stdout)
    )
    with target as fh:
        writer = csv.writer(fh)
        writer.writerow([name])
        for value in pred:
            writer.writerow([value if not isinstance(value, float) else f"{value:.10g}"])
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
    """Print the score on rows whose target is present."""
    if task == "classification":
        acc = float(np.mean(np.asarray(pred).astype(str) == np.asarray(y_true).astype(str)))
        print(f"accuracy on these rows (their target is present): {acc:.4f}", file=report)
        return
    try:
        resid = np.asarray(pred, dtype=float) - np.asarray(y_true, dtype=float)
    except (TypeError, ValueError):
        return
    rmse = float(np.sqrt(np.mean(resid**2)))
    print(f"RMSE on these rows (their target is present): {rmse:.6g}", file=report)
