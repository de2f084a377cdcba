"""``kernelmaps fit``: fit the ridge pipeline of :func:`kernelmaps.experiments.make_model`."""

from __future__ import annotations

import argparse
import math
import time
from typing import Any

import numpy as np

from .._progress_bar import progress_bar
from ..exceptions import NonFiniteOutputError
from . import _tuning
from ._common import (
    EXIT_OK,
    UserError,
    add_command,
    add_data_options,
    data_text,
    load_user_data,
    output_file,
    positive_float,
    positive_int,
    random_seed,
)

EXAMPLES = """examples:
  kernelmaps fit train.csv --target price -o model.skops
  kernelmaps fit train.csv --target species --method nystroem --n-components 512 \\
      --task classification -o model.skops
  kernelmaps fit data.svm -o model.skops           # svmlight files carry their target
  kernelmaps fit train.csv --target price --tune -o model.skops   # gamma, alpha, D chosen
  kernelmaps fit usps --data-home DIR -o usps.skops  # a data-home set: its training part

{data}

The task is inferred from the target (text labels, or at most 50 distinct integers:
classification; other numbers: regression) unless --task says it (--model ridge /
classifier is the older spelling of --task regression / classification).  A classifier
gives probabilities, calibrated on its leave-one-out decision values: 'kernelmaps predict
--proba' writes them.  The features are
standardised; gamma is set by the median heuristic on the standardised training rows
unless --gamma gives it; the ridge penalty is chosen by leave-one-out error among
1e-6 ... 1e2.  With --tune, gamma, the penalty and the number of features (D/8 ... D,
D = --n-components, 2048 by default) are chosen together by exact leave-one-out (or
--cv K folds), the gammas by successive halving over rows and features; the chosen values and the
curve (the best score per gamma and D) are printed, --plot draws it.

The model file is in the skops format (a zip of JSON and arrays), which cannot run code
when read; an existing file is replaced only once the new one is completely written.
"""


HELP = "fit ridge regression / classification on a feature map and save it"
DESCRIPTION = (
    "Fit StandardScaler -> feature map -> ridge on a data file (CSV with a header, "
    "svmlight/libsvm, .npy, .npz), a bundled data set or a data-home set, and save the model."
)


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add ``fit`` and its options to the subcommands ``sub``.

    Examples
    --------
    >>> import argparse
    >>> from kernelmaps.cli import fit
    >>> parser = fit.add_parser(argparse.ArgumentParser().add_subparsers())
    >>> args = parser.parse_args(["train.csv", "--target", "price", "-o", "model.skops"])
    >>> args.method, args.n_components  # the number of features: 2048 by default
    ('rff', None)
    """
    parser = add_command(
        sub, "fit", HELP, DESCRIPTION, EXAMPLES.replace("{data}", data_text("train")), run
    )
    add = parser.add_argument
    add(
        "data",
        metavar="DATA",
        help="training data: a file, a bundled name or a data-home name (see below)",
    )
    add(
        "--target",
        metavar="COL",
        help="target column (CSV: its name; .npy: its index); svmlight files carry theirs",
    )
    add(
        "--method",
        default="rff",
        metavar="NAME",
        help="feature map (default: rff = random Fourier features; see 'kernelmaps methods')",
    )
    add(
        "--n-components",
        type=positive_int,
        default=None,
        metavar="D",
        help="number of features (default: 2048; with --tune the largest searched)",
    )
    add(
        "--task",
        choices=("auto", "classification", "regression"),
        default="auto",
        help="classification (ridge classifier) or regression (ridge regression); default: "
        "inferred from the target",
    )
    add(
        "--model",
        choices=("auto", "ridge", "classifier"),
        default="auto",
        help="an alias of --task: ridge = regression, classifier = classification",
    )
    add(
        "--gamma",
        type=positive_float,
        metavar="G",
        help="kernel bandwidth (default: the median heuristic)",
    )
    add("--seed", type=random_seed, default=0, help="random seed, 0 to 2**32 - 1 (default: 0)")
    add(
        "--keep-statistics",
        action="store_true",
        help="keep the ridge statistics in the model file, so that partial_fit can continue "
        "the fit in Python and 'kernelmaps predict --std / --interval' have the posterior "
        "(a D x D matrix: a larger file); by default the file holds only what prediction "
        "needs",
    )
    add_data_options(parser, "train")
    _tuning.add_options(add)
    add(
        "-o",
        "--output",
        required=True,
        metavar="FILE",
        help="where to save the model (a .skops file)",
    )
    return parser


def rows_text(rows: Any, total: int | None = None) -> str:
    """``rows`` (counting from 0) for a message: "rows 4, 9 (counting data rows from 1)".

    At most ten are listed; ``total`` is how many there are (default: ``len(rows)``).

    Examples
    --------
    >>> from kernelmaps.cli.fit import rows_text
    >>> rows_text([3]), rows_text([0, 4])
    ('row 4 (counting data rows from 1)', 'rows 1, 5 (counting data rows from 1)')
    >>> rows_text(range(20))
    'rows 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 10 more (counting data rows from 1)'
    """
    listed = [int(r) + 1 for r in rows[:10]]
    count = len(rows) if total is None else total
    more = f" and {count - len(listed)} more" if count > len(listed) else ""
    word = "row" if count == 1 else "rows"
    return f"{word} {', '.join(map(str, listed))}{more} (counting data rows from 1)"


def finite_rows(args: argparse.Namespace, *, for_fit: bool) -> tuple[Any, np.ndarray]:
    """The data of ``args.data`` (:func:`load_user_data`, its training part by default) and
    its feature rows, dense; refused when a fit's data has no target, then by row where a
    feature value is not finite."""
    found = load_user_data(
        args.data,
        args.target,
        data_home=args.data_home,
        subset=args.subset,
        default_subset="train",
        for_fit=for_fit,
    )
    ds = found.dataset
    if for_fit and ds.y is None:
        raise UserError(f"{args.data}: no target; give it with --target.")
    X = ds.X.toarray() if hasattr(ds.X, "toarray") else np.asarray(ds.X, dtype=np.float64)
    refuse_nonfinite_rows(args.data, X, "feature values")
    return found, X


def refuse_nonfinite_rows(data: str, X: np.ndarray, what: str) -> None:
    """Refuse the rows of ``X`` that hold a NaN or infinite value, by number."""
    bad = np.flatnonzero(~np.isfinite(X).all(axis=1))
    if bad.size:
        raise UserError(
            f"{data}: NaN or infinite {what} in {rows_text(bad)}; fill them in or drop those rows."
        )


def asked_task(args: argparse.Namespace) -> str | None:
    """The task that ``--task`` (or its alias ``--model``) names, ``None`` for "auto"; the
    two options naming different tasks are refused.

    Examples
    --------
    >>> from argparse import Namespace
    >>> from kernelmaps.cli.fit import asked_task
    >>> asked_task(Namespace(task="auto", model="classifier"))
    'classification'
    >>> asked_task(Namespace(task="regression", model="auto"))
    'regression'
    """
    alias = {"ridge": "regression", "classifier": "classification"}.get(args.model)
    task = None if args.task == "auto" else args.task
    if task and alias and task != alias:
        raise UserError(
            f"--task {task} and --model {args.model} name different tasks; give only --task."
        )
    return task or alias


def _training_data(args: argparse.Namespace) -> tuple[Any, np.ndarray, Any, str, str]:
    """The data set, its features and target, its format and the task, checked; the name
    of the data for messages is kept as ``args.data_label``."""
    found, X = finite_rows(args, for_fit=True)
    ds, fmt, args.data_label = found.dataset, found.format, found.label
    y = ds.y
    task = asked_task(args) or ds.task
    if task == "regression":
        try:
            y = np.asarray(y, dtype=np.float64)
        except (TypeError, ValueError):
            raise UserError(
                f"{args.data}: the target holds text labels, so it cannot be a regression "
                "target; use --task classification."
            ) from None
        bad = np.flatnonzero(~np.isfinite(y))
        if bad.size:
            raise UserError(
                f"{args.data}: a NaN or infinite target in {rows_text(bad)}; fill it in or "
                "drop those rows."
            )
    elif len(np.unique(y)) < 2:
        raise UserError(f"{args.data}: the target has a single class; nothing to learn.")
    if X.shape[0] < 3:
        raise UserError(f"{args.data}: {X.shape[0]} rows; at least 3 are needed.")
    return ds, X, y, fmt, task


def run(args: argparse.Namespace) -> int:
    """Run ``kernelmaps fit``: load the data, fit :func:`make_model`'s pipeline, save it.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from kernelmaps.cli import build_parser, fit
    >>> out = Path(tempfile.mkdtemp()) / "model.skops"
    >>> args = build_parser().parse_args(
    ...     ["fit", "cpu_act", "--n-components", "16", "--gamma", "0.1", "-o", str(out)])
    >>> fit.run(args)  # doctest: +ELLIPSIS
    data: cpu_act: 8192 rows, 21 features
    task: regression, inferred from the target
    model: standardise -> rff-mc (...), n_components=16 -> ridge
    kernel: rbf, gamma = 0.1 (given with --gamma)
    fitted in ... s; ridge alpha = ... (leave-one-out); training RMSE = ..., R^2 = ...
    saved ...model.skops
    0
    """
    from ..experiments import resolve_method, save_model

    spec = resolve_method(args.method)
    _tuning.check_options(args)
    out = output_file(args.output, "the model, e.g. model.skops", "the model file")
    ds, X, y, fmt, task = _training_data(args)
    try:
        pipeline, info = _fit(args, spec, X, y, task)
    except NonFiniteOutputError as exc:
        raise UserError(_overflow_message(args.data, X, list(ds.feature_names), exc)) from None
    save_model(_saved_model(pipeline, ds, task, fmt, info | {"seed": args.seed}, args.data), out)
    print(f"saved {out}")
    return EXIT_OK


def _fit(
    args: argparse.Namespace, spec: Any, X: np.ndarray, y: Any, task: str
) -> tuple[Any, dict[str, Any]]:
    """Fit the pipeline, printing what is fitted; the pipeline and its description."""
    from ..experiments import choose_gamma, make_model

    gamma, rule = choose_gamma(spec.name, X, gamma=args.gamma)
    if args.gamma is not None:
        rule = "given with --gamma"
    how = "inferred from the target"
    if asked_task(args):
        how = "from --task" if args.task != "auto" else "from --model"
    n_classes = len(np.unique(y)) if task == "classification" else None
    what = f"classification ({n_classes} classes)" if n_classes else "regression"
    print(
        f"data: {getattr(args, 'data_label', args.data)}: {X.shape[0]} rows, {X.shape[1]} features"
    )
    print(f"task: {what}, {how}")
    print(
        f"model: standardise -> {spec.name} ({spec.description}), "
        f"n_components={args.n_components} -> ridge"
    )
    if gamma is not None and args.tune:
        print(f"kernel: {spec.kernel}, gamma searched around {gamma:.6g} ({rule})")
    elif gamma is not None:
        print(f"kernel: {spec.kernel}, gamma = {gamma:.6g} ({rule})")
    pipeline = make_model(
        spec.name,
        task,
        n_components=args.n_components,
        gamma=None if args.tune else gamma,
        random_state=args.seed,
    )
    if args.tune:
        pipeline = _tuning.tuned_pipeline(pipeline, args, task)
    pipeline[-1].set_params(keep_statistics=args.keep_statistics)
    t0 = time.perf_counter()
    with progress_bar(disable=None):  # bars on standard error when it is a terminal
        pipeline.fit(X, y)
    seconds = time.perf_counter() - t0
    how = "leave-one-out"
    if args.tune:
        search = pipeline[-1]
        print(_tuning.report(search, args, y))
        pipeline.steps[-1] = (type(search.best_estimator_).__name__.lower(), search.best_estimator_)
        gamma, how = search.gamma_, "tuned"
        args.n_components = search.n_components_
    alpha = float(pipeline[-1].alpha_)
    scores = score_text(task, pipeline.predict(X), y)
    print(f"fitted in {seconds:.1f} s; ridge alpha = {alpha:.3g} ({how}); training {scores}")
    if args.tune:
        rule = "tuned"
    info = {"method": spec.name, "n_components": args.n_components, "kernel": spec.kernel}
    info |= {"gamma": gamma, "gamma_rule": rule, "alpha": alpha, "n_train": int(X.shape[0])}
    return pipeline, info


def score_text(task: str, pred: Any, y_true: Any) -> str:
    """The score of predictions ``pred`` of targets ``y_true`` in the target's units:
    "accuracy = 0.9", or "RMSE = 3.2, R^2 = 0.81" (no R^2 for a constant target).

    Examples
    --------
    >>> from kernelmaps.cli.fit import score_text
    >>> score_text("regression", [1.0, 2.0], [1.0, 4.0])
    'RMSE = 1.414, R^2 = 0.1111'
    >>> score_text("classification", ["a", "b"], ["a", "a"])
    'accuracy = 0.5000'
    """
    from ._tuning import r_squared

    if task == "classification":
        accuracy = np.mean(np.asarray(pred).astype(str) == np.asarray(y_true).astype(str))
        return f"accuracy = {float(accuracy):.4f}"
    truth = np.asarray(y_true, dtype=np.float64)
    mse = float(np.mean((np.asarray(pred, dtype=np.float64) - truth) ** 2))
    r2 = r_squared(mse, truth)
    return f"RMSE = {math.sqrt(mse):.4g}" + ("" if math.isnan(r2) else f", R^2 = {r2:.4f}")


def _overflow_message(data: str, X: np.ndarray, names: list[str], exc: Exception) -> str:
    """One line for an overflow in the fit, naming the columns too large to standardise."""
    with np.errstate(over="ignore", invalid="ignore"):
        stats = np.vstack([X.mean(axis=0), X.var(axis=0)])
    columns = np.flatnonzero(~np.isfinite(stats).all(axis=0))
    if not columns.size:
        return f"{data}: {exc}"
    shown = ", ".join(repr(names[j]) if j < len(names) else str(j + 1) for j in columns[:10])
    peak = float(np.abs(X[:, columns]).max())
    return (
        f"{data}: standardising the features overflows float64 in column(s) {shown}"
        f"{', ...' if columns.size > 10 else ''}: their values reach {peak:.3g} in magnitude; "
        "rescale these columns (divide them by a power of ten) so that their values stay "
        "well below 1e150, and fit again."
    )


def _saved_model(
    pipeline: Any, ds: Any, task: str, fmt: str, info: dict[str, Any], data: str
) -> Any:
    from .. import __version__
    from ..experiments import SavedModel

    return SavedModel(
        pipeline=pipeline,
        feature_names=list(ds.feature_names),
        target=ds.target_name,
        task=task,
        data_format=fmt,
        info=info
        | {"kernelmaps": __version__, "training_data": str(data)}
        | ({} if ds.subset is None else {"training_subset": ds.subset}),
    )
