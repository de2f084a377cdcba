"""``kernelmaps fit``: fit the ridge pipeline of :func:`kernelmaps.experiments.make_model`."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np

from ._common import EXIT_OK, UserError, add_command, load_user_data, positive_float, positive_int

EXAMPLES = """examples:
  kernelmaps fit train.csv --target price -o model.joblib
  kernelmaps fit train.csv --target species --method nystroem --n-components 512 \\
      --model classifier -o model.joblib
  kernelmaps fit data.svm -o model.joblib          # svmlight files carry their target

The task is inferred from the target (text labels, or at most 50 distinct integers:
classification; other numbers: regression) unless --model says it.  The features are
standardised; gamma is set by the median heuristic on the standardised training rows
unless --gamma gives it; the ridge penalty is chosen by leave-one-out error among
1e-6 ... 1e2.
"""

HELP = "fit ridge regression / classification on a feature map and save it"
DESCRIPTION = (
    "Fit StandardScaler -> feature map -> ridge on a data file (CSV with a header, "
    "svmlight/libsvm, .npy, .npz) or a bundled data set, and save the model."
)


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add ``fit`` and its options to the subcommands ``sub``.

    Examples
    --------
    >>> import argparse
    >>> from kernelmaps.cli import fit
    >>> parser = fit.add_parser(argparse.ArgumentParser().add_subparsers())
    >>> args = parser.parse_args(["train.csv", "--target", "price", "-o", "model.joblib"])
    >>> args.method, args.n_components
    ('rff', 2048)
    """
    parser = add_command(sub, "fit", HELP, DESCRIPTION, EXAMPLES, run)
    add = parser.add_argument
    add("data", metavar="DATA", help="training data: a file or a bundled name")
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
        default=2048,
        metavar="D",
        help="number of features (default: 2048)",
    )
    add(
        "--model",
        choices=("auto", "ridge", "classifier"),
        default="auto",
        help="ridge regression or ridge classifier (default: inferred from the target)",
    )
    add(
        "--gamma",
        type=positive_float,
        metavar="G",
        help="kernel bandwidth (default: the median heuristic)",
    )
    add("--seed", type=int, default=0, help="random seed (default: 0)")
    add("-o", "--output", required=True, metavar="FILE", help="where to save the model (.joblib)")
    return parser


def _training_data(args: argparse.Namespace) -> tuple[Any, np.ndarray, Any, str, str]:
    """The data set, its features and target, its format and the task, checked."""
    ds, fmt = load_user_data(args.data, args.target, for_fit=True)
    if ds.y is None:
        raise UserError(f"{args.data}: no target; give it with --target.")
    X = ds.X.toarray() if hasattr(ds.X, "toarray") else np.asarray(ds.X, dtype=np.float64)
    y = ds.y
    if not np.all(np.isfinite(X)):
        raise UserError(f"{args.data}: the features hold NaN or infinite values; fill them in.")
    task = {"ridge": "regression", "classifier": "classification"}.get(args.model, ds.task)
    if task == "regression":
        try:
            y = np.asarray(y, dtype=np.float64)
        except (TypeError, ValueError):
            raise UserError(
                f"{args.data}: the target holds text labels, so it cannot be a regression "
                "target; use --model classifier."
            ) from None
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
    >>> out = Path(tempfile.mkdtemp()) / "model.joblib"
    >>> args = build_parser().parse_args(
    ...     ["fit", "cpu_act", "--n-components", "16", "--gamma", "0.1", "-o", str(out)])
    >>> fit.run(args)  # doctest: +ELLIPSIS
    data: cpu_act: 8192 rows, 21 features
    task: regression, inferred from the target
    model: standardise -> rff-mc (...), n_components=16 -> ridge
    kernel: rbf, gamma = 0.1 (given with --gamma)
    fitted in ... s; ridge alpha = ... (leave-one-out); training R^2 = ...
    saved ...model.joblib
    0
    """
    import joblib

    from ..experiments import choose_gamma, make_model, resolve_method

    spec = resolve_method(args.method)
    ds, X, y, fmt, task = _training_data(args)
    gamma, rule = choose_gamma(spec.name, X, gamma=args.gamma)
    if args.gamma is not None:
        rule = "given with --gamma"
    how = "from --model" if args.model != "auto" else "inferred from the target"
    n_classes = len(np.unique(y)) if task == "classification" else None
    what = f"classification ({n_classes} classes)" if n_classes else "regression"
    print(f"data: {args.data}: {X.shape[0]} rows, {X.shape[1]} features")
    print(f"task: {what}, {how}")
    print(
        f"model: standardise -> {spec.name} ({spec.description}), "
        f"n_components={args.n_components} -> ridge"
    )
    if gamma is not None:
        print(f"kernel: {spec.kernel}, gamma = {gamma:.6g} ({rule})")
    pipeline = make_model(
        spec.name, task, n_components=args.n_components, gamma=gamma, random_state=args.seed
    )
    t0 = time.perf_counter()
    pipeline.fit(X, y)
    seconds = time.perf_counter() - t0
    alpha = float(pipeline[-1].alpha_)
    score = float(pipeline.score(X, y))
    score_name = "training accuracy" if task == "classification" else "training R^2"
    print(
        f"fitted in {seconds:.1f} s; ridge alpha = {alpha:.3g} (leave-one-out); "
        f"{score_name} = {score:.4f}"
    )
    info = {"method": spec.name, "n_components": args.n_components, "kernel": spec.kernel}
    info |= {"gamma": gamma, "gamma_rule": rule, "alpha": alpha, "n_train": int(X.shape[0])}
    saved = _saved_model(pipeline, ds, task, fmt, info | {"seed": args.seed}, args.data)
    out = Path(args.output)
    if out.parent and not out.parent.exists():
        raise UserError(f"{out.parent}: no such folder for the model file.")
    joblib.dump(saved, out)
    print(f"saved {out}")
    return EXIT_OK


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
        info=info | {"kernelmaps": __version__, "training_data": str(data)},
    )
