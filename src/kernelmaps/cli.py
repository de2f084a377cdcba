"""The ``kernelmaps`` command line.

``kernelmaps compare``
    Compare feature maps by kernel approximation error on real data (bundled data sets by
    default), print a table, write tidy results, provenance and a figure.
``kernelmaps fit`` / ``kernelmaps predict``
    Fit ridge regression or classification on a feature map from a data file, save it,
    and predict new rows with it.
``kernelmaps datasets`` / ``kernelmaps methods``
    What is bundled, what the data home holds, and the registered methods.

Exit status: 0 on success, 1 when the work itself failed (every cell failed, a file could
not be written), 2 for a usage or input error (bad option, unreadable or mismatched data),
130 when interrupted.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["DEFAULT_DATASETS", "DEFAULT_METHODS", "main"]

#: The data sets of the kernel approximation study that are bundled with the package.
DEFAULT_DATASETS = ("letter", "covtype", "ijcnn1")

#: The pairs of the kernel approximation study (RFF vs QMC RFF, Nyström uniform vs
#: k-means, RMFM vs CRFM) with their successors (orthogonal RFF, leverage-score Nyström,
#: TensorSketch, IKA, random binning); those not registered are left out.
DEFAULT_METHODS = (
    "rff-mc",
    "rff-sobol",
    "rff-orthogonal",
    "nystroem-uniform",
    "nystroem-kmeans",
    "nystroem-leverage",
    "ika",
    "rmfm",
    "crfm",
    "tensorsketch",
    "binning",
)
DEFAULT_GRID = (16, 64, 256)
DEFAULT_SEEDS = 3
DEFAULT_OUTPUT = "kernelmaps-results"

#: Short names accepted by ``kernelmaps fit --method``.
METHOD_ALIASES = {"rff": "rff-mc", "qmc-rff": "rff-sobol", "nystroem": "nystroem-kmeans"}

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


class UserError(Exception):
    """An error the user can fix; printed without a traceback (exit status 2)."""


EXAMPLES_MAIN = """examples:
  kernelmaps compare                          # the default study, about a minute
  kernelmaps compare --datasets letter cpu_act --methods rff-mc rff-sobol --seeds 5
  kernelmaps fit train.csv --target price -o model.joblib
  kernelmaps predict model.joblib new.csv -o predictions.csv
  kernelmaps datasets

Run "kernelmaps COMMAND --help" for the options of a command.
"""

EXAMPLES_COMPARE = """examples:
  kernelmaps compare
  kernelmaps compare --datasets letter --methods rff-mc rff-sobol rff-orthogonal \\
      --n-components 32 128 512 2048 --seeds 5 --metrics spectral_error fit_time
  kernelmaps compare --datasets my_data.csv --target label --kernel laplacian
  kernelmaps compare --config study.toml --output study-results
  kernelmaps compare --quiet --no-plot --output /tmp/run   # for scripts

The output folder receives results.csv (tidy: one row per data set, method,
n_components, seed and metric), results.json (the same with the configuration and
provenance), figure.png, and cells.jsonl, the log that lets an interrupted run resume:
run the same command again and finished cells are not redone.
"""

EXAMPLES_FIT = """examples:
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

EXAMPLES_PREDICT = """examples:
  kernelmaps predict model.joblib new.csv -o predictions.csv
  kernelmaps predict model.joblib new.csv            # predictions to standard output

CSV columns are matched by name to those of the training file (missing ones are an
error, extra ones are ignored); when the target column is present, the score on those
rows is printed as well.
"""

EXAMPLES_DATASETS = """examples:
  kernelmaps datasets
  kernelmaps datasets --data-home ../shared/data
  KERNELMAPS_DATA=/data/kernelmaps kernelmaps datasets
"""


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors name the fix and exit with status 2."""

    def error(self, message: str) -> Any:
        self.print_usage(sys.stderr)
        sys.stderr.write(
            f"{self.prog}: error: {message}\nRun '{self.prog} --help' for the options.\n"
        )
        raise SystemExit(EXIT_USAGE)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text}")
    return value


def _bandwidth(text: str) -> str | float:
    from .experiments._config import BANDWIDTH_RULES

    if text in BANDWIDTH_RULES:
        return text
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected one of {', '.join(BANDWIDTH_RULES)} or a positive gamma, got {text!r}"
        ) from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"gamma must be positive, got {text}")
    return value


def _formatter(prog: str) -> argparse.HelpFormatter:
    return argparse.RawDescriptionHelpFormatter(prog, max_help_position=32)


def _build_parser() -> argparse.ArgumentParser:
    from .experiments import METRICS, method_names

    parser = _Parser(
        prog="kernelmaps",
        description=(
            "Explicit kernel feature maps: compare their approximation error on real data, "
            "fit and apply models built on them."
        ),
        epilog=EXAMPLES_MAIN,
        formatter_class=_formatter,
    )
    from . import __version__

    parser.add_argument("--version", action="version", version=f"kernelmaps {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    # -- compare --------------------------------------------------------------------------
    available = [m for m in DEFAULT_METHODS if m in method_names()]
    compare = sub.add_parser(
        "compare",
        help="compare feature maps by kernel approximation error on real data",
        description=(
            "Fit each method on a sample of rows of each data set and measure the relative "
            "error |K - Z Z^T| / |K| of the kernel matrix on held-out rows, for each number "
            "of features and seed. The Gaussian-kernel methods take gamma from the mean "
            "distance of the points to their mean (the rule of Deshmukh's kernel "
            "approximation study); the polynomial maps approximate (x.y)^2; random binning "
            "the Laplacian kernel. Features are scaled to the unit hypercube on the fit "
            f"rows. Default: data sets {', '.join(DEFAULT_DATASETS)}; methods "
            f"{', '.join(available)}; D = {' '.join(map(str, DEFAULT_GRID))}; "
            f"{DEFAULT_SEEDS} seeds."
        ),
        epilog=EXAMPLES_COMPARE,
        formatter_class=_formatter,
    )
    compare.add_argument(
        "--datasets",
        nargs="+",
        metavar="NAME",
        help="bundled names, data-home names or data files (see 'kernelmaps datasets')",
    )
    compare.add_argument(
        "--target", metavar="COL", help="target column of CSV files given to --datasets"
    )
    compare.add_argument(
        "--methods",
        nargs="+",
        metavar="NAME",
        help="methods to compare (see 'kernelmaps methods'); default: the study's methods",
    )
    compare.add_argument(
        "--kernel",
        metavar="NAME",
        help="approximate this kernel (rbf, laplacian, cauchy, matern, polynomial, ...) "
        "with every chosen method that can",
    )
    compare.add_argument(
        "--n-components",
        nargs="+",
        type=_positive_int,
        metavar="D",
        help=f"numbers of features to try (default: {' '.join(map(str, DEFAULT_GRID))})",
    )
    compare.add_argument(
        "--seeds",
        type=_positive_int,
        metavar="N",
        help=f"number of seeds, 0 .. N-1 (default: {DEFAULT_SEEDS})",
    )
    compare.add_argument(
        "--metrics",
        nargs="+",
        choices=METRICS,
        metavar="METRIC",
        help="what to record (default: fro_error fit_time transform_time); one of: "
        + ", ".join(METRICS),
    )
    compare.add_argument(
        "--bandwidth",
        type=_bandwidth,
        metavar="RULE",
        help="mean_distance (default), median, percentile, or a number: gamma itself",
    )
    compare.add_argument(
        "--n-fit", type=_positive_int, metavar="N", help="rows the maps are fitted on (1000)"
    )
    compare.add_argument(
        "--n-eval",
        type=_positive_int,
        metavar="N",
        help="held-out rows the error is measured on (500)",
    )
    compare.add_argument(
        "--config",
        metavar="FILE",
        help="an experiment in TOML; the options above override its values",
    )
    compare.add_argument(
        "-o",
        "--output",
        metavar="DIR",
        help=f"output folder (default: ./{DEFAULT_OUTPUT})",
    )
    compare.add_argument(
        "--data-home", metavar="DIR", help="folder of the larger data sets ($KERNELMAPS_DATA)"
    )
    compare.add_argument("--fresh", action="store_true", help="ignore finished cells; start over")
    compare.add_argument("--no-plot", action="store_true", help="do not draw the figure")
    compare.add_argument("-q", "--quiet", action="store_true", help="no progress bar and no table")

    # -- fit ------------------------------------------------------------------------------
    fit = sub.add_parser(
        "fit",
        help="fit ridge regression / classification on a feature map and save it",
        description=(
            "Fit StandardScaler -> feature map -> ridge on a data file (CSV with a header, "
            "svmlight/libsvm, .npy, .npz) or a bundled data set, and save the model."
        ),
        epilog=EXAMPLES_FIT,
        formatter_class=_formatter,
    )
    fit.add_argument("data", metavar="DATA", help="training data: a file or a bundled name")
    fit.add_argument(
        "--target",
        metavar="COL",
        help="target column (CSV: its name; .npy: its index); svmlight files carry theirs",
    )
    fit.add_argument(
        "--method",
        default="rff",
        metavar="NAME",
        help="feature map (default: rff = random Fourier features; see 'kernelmaps methods')",
    )
    fit.add_argument(
        "--n-components",
        type=_positive_int,
        default=2048,
        metavar="D",
        help="number of features (default: 2048)",
    )
    fit.add_argument(
        "--model",
        choices=("auto", "ridge", "classifier"),
        default="auto",
        help="ridge regression or ridge classifier (default: inferred from the target)",
    )
    fit.add_argument(
        "--gamma",
        type=_positive_float,
        metavar="G",
        help="kernel bandwidth (default: the median heuristic)",
    )
    fit.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    fit.add_argument(
        "-o", "--output", required=True, metavar="FILE", help="where to save the model (.joblib)"
    )

    # -- predict --------------------------------------------------------------------------
    predict = sub.add_parser(
        "predict",
        help="predict new rows with a model saved by 'kernelmaps fit'",
        description="Predict the rows of a data file with a saved model.",
        epilog=EXAMPLES_PREDICT,
        formatter_class=_formatter,
    )
    predict.add_argument("model", metavar="MODEL", help="a file written by 'kernelmaps fit'")
    predict.add_argument("data", metavar="DATA", help="the rows to predict")
    predict.add_argument(
        "-o", "--output", metavar="FILE", help="CSV of predictions (default: standard output)"
    )

    # -- datasets / methods ---------------------------------------------------------------
    datasets = sub.add_parser(
        "datasets",
        help="list the bundled data sets and those of the data home",
        description="List the bundled data sets and those the data home holds.",
        epilog=EXAMPLES_DATASETS,
        formatter_class=_formatter,
    )
    datasets.add_argument(
        "--data-home", metavar="DIR", help="folder of the larger data sets ($KERNELMAPS_DATA)"
    )
    sub.add_parser(
        "methods",
        help="list the registered methods",
        description="List the methods that compare and fit accept.",
        epilog="examples:\n  kernelmaps methods\n",
        formatter_class=_formatter,
    )
    return parser


# ---------------------------------------------------------------------------------------
# compare
# ---------------------------------------------------------------------------------------


def _compare_config(args: argparse.Namespace) -> Any:
    from .experiments import (
        DatasetConfig,
        ExperimentConfig,
        MethodConfig,
        get_method,
        load_config,
        method_names,
    )

    if args.config:
        config = load_config(args.config)
    else:
        names = [m for m in DEFAULT_METHODS if m in method_names()]
        if args.kernel:
            names = [m for m in names if get_method(m).supports(args.kernel)]
        config = ExperimentConfig(
            name="compare",
            datasets=[DatasetConfig(d) for d in DEFAULT_DATASETS],
            methods=[MethodConfig(m) for m in names],
            n_components=list(DEFAULT_GRID),
            seeds=list(range(DEFAULT_SEEDS)),
        )
    if args.datasets:
        config.datasets = [DatasetConfig(d, target=args.target) for d in args.datasets]
    elif args.target:
        raise UserError("--target applies to data files given with --datasets.")
    for d in config.datasets:
        if args.n_fit:
            d.n_fit = args.n_fit
        if args.n_eval:
            d.n_eval = args.n_eval
    if args.methods:
        for m in args.methods:
            get_method(m)  # a clear error for unknown names
        config.methods = [MethodConfig(m) for m in args.methods]
    if args.kernel:
        from .kernels import kernel_names

        if args.kernel not in kernel_names():
            raise UserError(
                f"unknown kernel {args.kernel!r}; known kernels: {', '.join(kernel_names())}."
            )
        kept = [m for m in config.methods if get_method(m.name).supports(args.kernel)]
        dropped = [m.display for m in config.methods if m not in kept]
        if not kept:
            raise UserError(
                f"none of the chosen methods can approximate the {args.kernel!r} kernel."
            )
        if dropped:
            print(
                f"note: leaving out {', '.join(dropped)}: they cannot approximate the "
                f"{args.kernel!r} kernel.",
                file=sys.stderr,
            )
        for m in kept:
            m.kernel = args.kernel
        config.methods = kept
    if args.n_components:
        config.n_components = list(args.n_components)
    if args.seeds:
        config.seeds = list(range(args.seeds))
    if args.metrics:
        config.metrics = list(args.metrics)
    if args.bandwidth is not None:
        config.bandwidth = args.bandwidth
    if args.data_home:
        config.data_home = args.data_home
    config.__post_init__()  # re-validate after the overrides
    for d in config.datasets:
        _check_dataset(d.name, config.data_home)
    return config


def _check_dataset(name: str, data_home: str | None) -> None:
    """Fail early, before any work, on a data set that cannot be found."""
    from .datasets import BUNDLED, DATA_HOME_SETS, get_data_home

    if name in BUNDLED:
        return
    if name in DATA_HOME_SETS:
        home = get_data_home(data_home)
        for f in DATA_HOME_SETS[name].files:
            if not (home / f).is_file():
                raise FileNotFoundError(
                    f"{home / f}: missing. The data set {name!r} needs it inside the data "
                    f"home {home}; copy the files there (nothing is downloaded)."
                )
        return
    if not Path(name).exists():
        if os.sep in name or "." in Path(name).name:
            raise FileNotFoundError(f"{name}: no such file. Check the path and its spelling.")
        raise UserError(
            f"unknown data set {name!r}: not a bundled set ({', '.join(BUNDLED)}), not a "
            f"data-home set ({', '.join(DATA_HOME_SETS)}) and not a file. "
            "See 'kernelmaps datasets'."
        )


def _compare(args: argparse.Namespace) -> int:
    from .experiments import format_table, run_experiment

    config = _compare_config(args)
    out_dir = Path(args.output or DEFAULT_OUTPUT)
    quiet = args.quiet
    if not quiet:
        print(
            f"kernelmaps compare: {len(config.datasets)} data set(s) x {len(config.methods)} "
            f"method(s) x D in {config.n_components} x {len(config.seeds)} seed(s); "
            f"bandwidth: {config.bandwidth}; results in {out_dir}/",
            flush=True,
        )
    start = time.perf_counter()
    try:
        result = run_experiment(
            config, out_dir, resume=not args.fresh, progress=None if not quiet else False
        )
    except KeyboardInterrupt:
        print(
            f"\nkernelmaps compare: interrupted. Finished cells are kept in "
            f"{out_dir / 'cells.jsonl'}; run the same command again to resume.",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    elapsed = time.perf_counter() - start
    for f in result.failures:
        print(
            f"warning: {f['dataset']} / {f['method']} / D={f['n_components']} / seed "
            f"{f['seed']} failed: {f['message']}",
            file=sys.stderr,
        )
    if not result.rows:
        print("kernelmaps compare: error: every cell failed; nothing to report.", file=sys.stderr)
        return EXIT_FAILED
    error_metric = next(
        (m for m in ("fro_error", "spectral_error", "max_error") if m in config.metrics),
        config.metrics[0],
    )
    if not quiet:
        print()
        print(format_table(result.rows, error_metric))
        for extra in ("accuracy", "rmse"):
            if any(r["metric"] == extra for r in result.rows):
                print()
                print(format_table(result.rows, extra))
        gammas = result.provenance.get("gamma", {})
        if gammas:
            print("\ngamma: " + ", ".join(f"{k} = {v:.4g}" for k, v in gammas.items()))
        reused = result.n_cells - result.n_computed
        print(
            f"\n{result.n_cells} cells in {elapsed:.1f} s"
            + (f" ({reused} reused from an earlier run)" if reused else "")
        )
        print(f"wrote {out_dir / 'results.csv'} and {out_dir / 'results.json'}")
    if not args.no_plot:
        _compare_figure(result.rows, error_metric, out_dir, quiet)
    return EXIT_OK


def _compare_figure(rows: list[dict[str, Any]], metric: str, out_dir: Path, quiet: bool) -> None:
    from . import plotting

    if not plotting.matplotlib_available():
        print(
            "note: figure skipped: matplotlib is not installed. "
            'Get it with: pip install "kernelmaps[plot]"',
            file=sys.stderr,
        )
        return
    path = out_dir / "figure.png"
    plotting.plot_error_curves(rows, metric=metric, path=path)
    if not quiet:
        print(f"wrote {path}")


# ---------------------------------------------------------------------------------------
# fit / predict
# ---------------------------------------------------------------------------------------


def _load_user_data(path: str, target: str | None, for_fit: bool) -> Any:
    from .datasets import BUNDLED, file_format, load_dataset, load_file

    if path in BUNDLED and not Path(path).exists():
        if target is not None:
            raise UserError(f"the bundled data set {path!r} has its own target; drop --target.")
        return load_dataset(path), "bundled"
    fmt = file_format(path)
    if not Path(path).exists():
        raise FileNotFoundError(f"{path}: no such file. Check the path and its spelling.")
    if fmt == "csv" and for_fit and target is None:
        raise UserError(
            f"{path}: give the target column with --target NAME (the column to predict)."
        )
    if fmt in ("npy",) and for_fit and target is None:
        raise UserError(f"{path}: give the target column index with --target (e.g. -1).")
    return load_file(path, target), fmt


def _fit(args: argparse.Namespace) -> int:
    import joblib
    import numpy as np

    from . import __version__
    from .bandwidth import gamma_from_data
    from .experiments import get_method
    from .experiments._saved_model import SavedModel, build_pipeline

    method = METHOD_ALIASES.get(args.method, args.method)
    spec = get_method(method)
    ds, fmt = _load_user_data(args.data, args.target, for_fit=True)
    if ds.y is None:
        raise UserError(f"{args.data}: no target; give it with --target.")
    X = ds.X.toarray() if hasattr(ds.X, "toarray") else np.asarray(ds.X, dtype=np.float64)
    y = ds.y
    if not np.all(np.isfinite(X)):
        raise UserError(f"{args.data}: the features hold NaN or infinite values; fill them in.")
    task = {"ridge": "regression", "classifier": "classification"}.get(args.model, ds.task)
    how = "from --model" if args.model != "auto" else "inferred from the target"
    if task == "regression":
        try:
            y = np.asarray(y, dtype=np.float64)
        except (TypeError, ValueError):
            raise UserError(
                f"{args.data}: the target holds text labels, so it cannot be a regression "
                "target; use --model classifier."
            ) from None
    n_classes = len(np.unique(y)) if task == "classification" else None
    if task == "classification" and n_classes is not None and n_classes < 2:
        raise UserError(f"{args.data}: the target has a single class; nothing to learn.")
    if X.shape[0] < 3:
        raise UserError(f"{args.data}: {X.shape[0]} rows; at least 3 are needed.")
    kernel = spec.kernel
    kernel_params = dict(spec.kernel_params)
    from sklearn.preprocessing import StandardScaler

    if args.gamma is not None:
        gamma, rule = args.gamma, "given with --gamma"
    elif kernel in ("rbf", "gaussian", "laplacian", "cauchy", "matern"):
        gamma = gamma_from_data(StandardScaler().fit_transform(X), "median", kernel=kernel)
        rule = "median heuristic on the standardised training rows"
    else:
        gamma, rule = kernel_params.get("gamma"), "the method's default"
    if gamma is not None:
        kernel_params["gamma"] = gamma
    kernel_params["kernel"] = kernel
    feature_map = spec.factory(args.n_components, kernel_params, args.seed)
    what = f"classification ({n_classes} classes)" if task == "classification" else "regression"
    print(f"data: {args.data}: {X.shape[0]} rows, {X.shape[1]} features")
    print(f"task: {what}, {how}")
    print(
        f"model: standardise -> {spec.name} ({spec.description}), "
        f"n_components={args.n_components} -> ridge"
    )
    if gamma is not None:
        print(f"kernel: {kernel}, gamma = {gamma:.6g} ({rule})")
    pipeline = build_pipeline(feature_map, task)
    t0 = time.perf_counter()
    pipeline.fit(X, y)
    seconds = time.perf_counter() - t0
    final = pipeline[-1]
    score = float(pipeline.score(X, y))
    score_name = "training accuracy" if task == "classification" else "training R^2"
    print(
        f"fitted in {seconds:.1f} s; ridge alpha = {final.alpha_:.3g} (leave-one-out); "
        f"{score_name} = {score:.4f}"
    )
    saved = SavedModel(
        pipeline=pipeline,
        feature_names=list(ds.feature_names),
        target=ds.target_name,
        task=task,
        data_format=fmt if fmt != "bundled" else "bundled",
        info={
            "method": spec.name,
            "n_components": args.n_components,
            "kernel": kernel,
            "gamma": gamma,
            "gamma_rule": rule,
            "alpha": float(final.alpha_),
            "n_train": int(X.shape[0]),
            "seed": args.seed,
            "kernelmaps": __version__,
            "training_data": str(args.data),
        },
    )
    out = Path(args.output)
    if out.parent and not out.parent.exists():
        raise UserError(f"{out.parent}: no such folder for the model file.")
    joblib.dump(saved, out)
    print(f"saved {out}")
    return EXIT_OK


def _predict(args: argparse.Namespace) -> int:
    import csv

    import joblib
    import numpy as np

    from .datasets import file_format, load_csv
    from .experiments._saved_model import SavedModel

    model_path = Path(args.model)
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
    fmt = file_format(args.data)
    by_name = fmt == "csv" and saved.data_format == "csv"
    y_true = None
    if by_name:
        try:
            ds = load_csv(args.data, saved.target)
            y_true = ds.y
        except ValueError as exc:
            if saved.target is not None and f"no column named {saved.target!r}" in str(exc):
                ds = load_csv(args.data, None)
            else:
                raise
    else:
        ds, _ = _load_user_data(args.data, None, for_fit=False)
        y_true = ds.y
    X = saved.check_columns(ds, by_name=by_name)
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
        if saved.task == "classification":
            acc = float(np.mean(np.asarray(pred).astype(str) == np.asarray(y_true).astype(str)))
            print(f"accuracy on these rows (their target is present): {acc:.4f}", file=report)
        else:
            try:
                resid = np.asarray(pred, dtype=float) - np.asarray(y_true, dtype=float)
                rmse = float(np.sqrt(np.mean(resid**2)))
                print(f"RMSE on these rows (their target is present): {rmse:.6g}", file=report)
            except (TypeError, ValueError):
                pass
    return EXIT_OK


# ---------------------------------------------------------------------------------------
# datasets / methods
# ---------------------------------------------------------------------------------------


def _datasets(args: argparse.Namespace) -> int:
    from .datasets import BUNDLED, DATA_HOME_SETS, list_data_home
    from .datasets._home import ENV_VAR

    print("bundled with the package:")
    for name, info in BUNDLED.items():
        shape = f"{info.shape[0]} x {info.shape[1]}"
        task = f"{info.n_classes} classes" if info.n_classes else info.task
        print(f"  {name:<20} {shape:>11}  {task:<12} {info.source}; licence: {info.licence}")
    home = args.data_home or os.environ.get(ENV_VAR)
    print()
    if not home:
        print(
            f"data home: not set (use --data-home DIR or the {ENV_VAR} environment variable); "
            f"it may hold: {', '.join(DATA_HOME_SETS)}"
        )
        return EXIT_OK
    present = list_data_home(home)
    print(f"data home {home}:")
    for name, ok in present.items():
        mark = "present" if ok else "missing"
        print(f"  {name:<20} {mark:<8} {DATA_HOME_SETS[name].description}")
    return EXIT_OK


def _methods(args: argparse.Namespace) -> int:
    from .experiments import get_method, method_names

    for name in method_names():
        spec = get_method(name)
        kernels = "any kernel" if spec.kernels is None else ", ".join(spec.kernels)
        print(f"  {name:<20} {spec.description} [default kernel {spec.kernel}; {kernels}]")
    aliases = ", ".join(f"{k} = {v}" for k, v in METHOD_ALIASES.items())
    print(f"\naliases for 'kernelmaps fit --method': {aliases}")
    return EXIT_OK


_COMMANDS = {
    "compare": _compare,
    "fit": _fit,
    "predict": _predict,
    "datasets": _datasets,
    "methods": _methods,
}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``kernelmaps`` command."""
    parser = _build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_OK
    prog = f"kernelmaps {args.command}"
    try:
        return _COMMANDS[args.command](args)
    except KeyboardInterrupt:
        print(f"\n{prog}: interrupted.", file=sys.stderr)
        return EXIT_INTERRUPTED
    except (UserError, ValueError, FileNotFoundError) as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except (PermissionError, IsADirectoryError) as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except ImportError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return EXIT_FAILED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
