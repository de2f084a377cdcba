"""``kernelmaps compare``: the default study, or one read from TOML, run and reported."""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path
from typing import Any

from ..exceptions import InsufficientMemoryError
from ._common import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    UserError,
    add_command,
    add_data_home,
    bandwidth,
    positive_int,
)

DEFAULT_OUTPUT = "kernelmaps-results"

#: Errors that ``kernelmaps.cli.main`` reports in one line with their exit status.
_REPORTED_BY_MAIN = (UserError, ValueError, OSError, InsufficientMemoryError, ImportError)

EXAMPLES = """examples:
  kernelmaps compare
  kernelmaps compare --datasets letter --methods rff-mc rff-sobol rff-orthogonal \\
      --n-components 32 128 512 2048 --seeds 5 --metrics spectral_error fit_time
  kernelmaps compare --datasets my_data.csv --target label --kernel laplacian
  kernelmaps compare --config study.toml --output study-results
  kernelmaps compare --quiet --no-plot --output /tmp/run   # for scripts
  kernelmaps compare --workers 4                  # 4 local worker processes (Dask)
  kernelmaps compare --scheduler tcp://host:8786  # a running Dask cluster

The output folder receives results.csv (tidy: one row per data set, method,
n_components, seed and metric), results.json (the same with the configuration, the
provenance and the verdicts printed under the tables: for each pair of methods the
study compares, where the second wins, and where by more than two standard errors),
figure.png, and cells.jsonl, the log that lets an interrupted run resume:
run the same command again and finished cells are not redone. The tables and the
figure are replaced whole or not at all. A run locks its folder (run.lock, removed
when it ends): a second
run on the same folder is refused at once, naming the first; use another --output to
run both. A cell whose method fails is reported and the others go on. A run has at
most 100000 cells (data sets x methods x n_components x seeds).

--workers and --scheduler run the cells in parallel on Dask (pip install
"kernelmaps[dask]"); this process still writes every file, so the results, the
log and resuming are those of a run without them.
"""


def _description() -> str:
    from ..experiments import default_study

    study = default_study()
    grid = " ".join(map(str, study.n_components))
    return (
        "Fit each method on a sample of rows of each data set and measure the relative "
        "error |K - Z Z^T| / |K| of the kernel matrix on held-out rows, for each number "
        "of features and seed. The Gaussian-kernel methods take gamma from the mean "
        "distance of the points to their mean (the rule of Deshmukh's kernel "
        "approximation study); the polynomial maps approximate (x.y)^2; random binning "
        "the Laplacian kernel. Features are scaled to the unit hypercube on the fit "
        f"rows. Default: data sets {', '.join(d.name for d in study.datasets)}; methods "
        f"{', '.join(m.name for m in study.methods)}; D = {grid}; "
        f"{len(study.seeds)} seeds."
    )


HELP = "compare feature maps by kernel approximation error on real data"


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add ``compare`` and its options to the subcommands ``sub``.

    Examples
    --------
    >>> import argparse
    >>> from kernelmaps.cli import compare
    >>> parser = compare.add_parser(argparse.ArgumentParser().add_subparsers())
    >>> args = parser.parse_args(["--seeds", "2", "--kernel", "laplacian"])
    >>> args.seeds, args.kernel
    (2, 'laplacian')
    """
    from ..experiments import default_study

    parser = add_command(sub, "compare", HELP, _description(), EXAMPLES, run)
    study = default_study()
    _add_selection_options(parser)
    _add_grid_options(parser, study)
    add = parser.add_argument
    add(
        "--config",
        metavar="FILE",
        help="an experiment in TOML; the options above override its values",
    )
    add("-o", "--output", metavar="DIR", help=f"output folder (default: ./{DEFAULT_OUTPUT})")
    add_data_home(parser)
    add("--fresh", action="store_true", help="ignore finished cells; start over")
    add("--no-plot", action="store_true", help="do not draw the figure")
    add("-q", "--quiet", action="store_true", help="no progress bar and no table")
    _add_parallel_options(parser)
    return parser


def _add_parallel_options(parser: argparse.ArgumentParser) -> None:
    """Where the cells run: here, on a local Dask cluster, or on a running one."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--workers",
        type=positive_int,
        metavar="N",
        help="run the cells on N local worker processes (a Dask LocalCluster, one thread "
        "each); needs distributed",
    )
    group.add_argument(
        "--scheduler",
        metavar="ADDR",
        help="run the cells on the Dask cluster whose scheduler is at ADDR "
        "(e.g. tcp://host:8786); needs distributed",
    )


def _add_selection_options(parser: argparse.ArgumentParser) -> None:
    """The data sets, methods and kernel of the study."""
    from ..kernels import kernel_names

    add = parser.add_argument
    add(
        "--datasets",
        nargs="+",
        metavar="NAME",
        help="bundled names, data-home names or data files (see 'kernelmaps datasets')",
    )
    add(
        "--target",
        metavar="COL",
        help="target column of the data files given to --datasets (needed for CSV files)",
    )
    add(
        "--methods",
        nargs="+",
        metavar="NAME",
        help="methods to compare (see 'kernelmaps methods'); default: the study's methods",
    )
    add(
        "--kernel",
        metavar="NAME",
        help=f"approximate this kernel ({', '.join(kernel_names())}) "
        "with every chosen method that can",
    )


def _add_grid_options(parser: argparse.ArgumentParser, study: Any) -> None:
    """What is varied and measured, and on which rows; the defaults are the study's."""
    from ..experiments import METRICS

    grid = " ".join(map(str, study.n_components))
    add = parser.add_argument
    add(
        "--n-components",
        nargs="+",
        type=positive_int,
        metavar="D",
        help=f"numbers of features to try (default: {grid})",
    )
    add(
        "--seeds",
        type=positive_int,
        metavar="N",
        help=f"number of seeds, 0 .. N-1 (default: {len(study.seeds)})",
    )
    add(
        "--metrics",
        nargs="+",
        choices=METRICS,
        metavar="METRIC",
        help=f"what to record (default: {' '.join(study.metrics)}); one of: " + ", ".join(METRICS),
    )
    add(
        "--bandwidth",
        type=bandwidth,
        metavar="RULE",
        help=f"{study.bandwidth} (default), median, percentile, or a number: gamma itself",
    )
    n_fit, n_eval = study.datasets[0].n_fit, study.datasets[0].n_eval
    add("--n-fit", type=positive_int, metavar="N", help=f"rows the maps are fitted on ({n_fit})")
    add(
        "--n-eval",
        type=positive_int,
        metavar="N",
        help=f"held-out rows the error is measured on ({n_eval})",
    )


def _build_config(args: argparse.Namespace) -> Any:
    """The experiment: the default study or ``--config``, with the options applied."""
    from ..experiments import default_study, load_config

    base = load_config(args.config) if args.config else default_study()
    if args.target and not args.datasets:
        raise UserError("--target applies to data files given with --datasets.")
    config = base.with_options(
        datasets=args.datasets,
        target=args.target,
        methods=args.methods,
        kernel=args.kernel,
        n_components=args.n_components,
        seeds=args.seeds,
        metrics=args.metrics,
        bandwidth=args.bandwidth,
        n_fit=args.n_fit,
        n_eval=args.n_eval,
        data_home=args.data_home,
    )
    if args.kernel and (args.config or args.methods):
        kept = {m.display for m in config.methods}
        chosen = args.methods or [m.display for m in base.methods]
        dropped = [name for name in chosen if name not in kept]
        if dropped:
            print(
                f"note: leaving out {', '.join(dropped)}: they cannot approximate the "
                f"{args.kernel!r} kernel.",
                file=sys.stderr,
            )
    for d in config.datasets:
        _check_dataset(d.name, config.data_home)
        if args.datasets and d.target is None:
            _check_target(d.name, config.data_home)
    return config


def _check_dataset(name: str, data_home: str | None) -> None:
    """Fail early, before any work, on a data set that cannot be found (the names are
    resolved as every command resolves them, all rows of a set with a split)."""
    from ..datasets import resolve_dataset

    resolve_dataset(name, data_home=data_home)


def _check_target(name: str, data_home: str | None = None) -> None:
    """Refuse a CSV file given without ``--target``: its target column would be taken as
    a feature (a svmlight or ``.npz`` file and a named set carry their own target)."""
    from ..datasets import load_csv, resolve_dataset

    if resolve_dataset(name, data_home=data_home).format != "csv":
        return
    try:
        header = load_csv(name).feature_names or []
    except (ValueError, OSError):  # the run reports what is wrong with the file
        header = []
    shown = ", ".join(header[:20]) + (", ..." if len(header) > 20 else "")
    columns = f"; its columns are: {shown}" if shown else ""
    raise UserError(
        f"{name}: give the target column with --target NAME, so that it is not taken as "
        f"a feature{columns}."
    )


def run(args: argparse.Namespace) -> int:
    """Run ``kernelmaps compare``: build the experiment, run it, print and draw.

    Examples
    --------
    >>> import tempfile
    >>> from kernelmaps.cli import build_parser, compare
    >>> args = build_parser().parse_args([
    ...     "compare", "--datasets", "cpu_act", "--methods", "rff-mc", "--n-components", "8",
    ...     "--seeds", "1", "--n-fit", "50", "--n-eval", "20", "--no-plot", "--quiet",
    ...     "--output", tempfile.mkdtemp()])
    >>> compare.run(args)
    0
    """
    from ._cluster import check_options

    config = _build_config(args)
    out_dir = _output_dir(args.output)
    check_options(args.workers, args.scheduler)  # before any output: distributed is there
    if not args.quiet:
        _print_plan(config, out_dir, args.workers, args.scheduler)
    outcome = _run_cells(config, out_dir, args)
    if isinstance(outcome, int):
        return outcome
    result, elapsed = outcome
    if not _reportable(result, config.metrics):
        return EXIT_FAILED
    error_metric = next(
        (m for m in ("fro_error", "spectral_error", "max_error") if m in config.metrics),
        config.metrics[0],
    )
    _write_verdicts(out_dir)
    if not args.quiet:
        names = {m.display: m.name for m in config.methods}
        _report(result, error_metric, elapsed, out_dir, names)
    if not args.no_plot:
        _figure(result, error_metric, out_dir, args.quiet)
    return EXIT_OK


def _output_dir(output: str | None) -> Path:
    """The output folder of ``-o/--output`` (a file or an empty name refused)."""
    if output is not None and not output.strip():
        raise UserError("-o/--output is empty; give a folder name (it is created if needed).")
    out_dir = Path(output or DEFAULT_OUTPUT)
    if out_dir.exists() and not out_dir.is_dir():
        raise UserError(
            f"-o/--output {out_dir}: is a file, not a folder; give a folder name (it is "
            "created if needed)."
        )
    return out_dir


def _print_plan(config: Any, out_dir: Path, workers: int | None, scheduler: str | None) -> None:
    """The line that says what the run computes, and where."""
    where = ""
    if workers is not None:
        where = f"; cells on {workers} local Dask worker(s)"
    elif scheduler is not None:
        where = f"; cells on the Dask cluster at {scheduler}"
    print(
        f"kernelmaps compare: {len(config.datasets)} data set(s) x {len(config.methods)} "
        f"method(s) x D in {config.n_components} x {len(config.seeds)} seed(s); "
        f"bandwidth: {config.bandwidth}; results in {out_dir}/{where}",
        flush=True,
    )


def _run_cells(config: Any, out_dir: Path, args: argparse.Namespace) -> tuple[Any, float] | int:
    """The result of the run and its duration, or the exit status of a run that stopped.

    Ctrl-C and an error of the run itself (not of a cell: those are recorded) are
    reported in one line saying that the finished cells are kept for a resume.
    """
    from ..experiments import OutputFolderInUseError, run_experiment
    from ._cluster import cell_executor

    resume = f"Finished cells are kept in {out_dir / 'cells.jsonl'}; run the same command again"
    try:
        with warnings.catch_warnings(), cell_executor(args.workers, args.scheduler) as executor:
            warnings.showwarning = _print_warning
            start = time.perf_counter()
            result = run_experiment(
                config,
                out_dir,
                resume=not args.fresh,
                progress=None if not args.quiet else False,
                executor=executor,
            )
            return result, time.perf_counter() - start
    except KeyboardInterrupt:
        print(f"\nkernelmaps compare: interrupted. {resume} to resume.", file=sys.stderr)
        return EXIT_INTERRUPTED
    except OutputFolderInUseError as exc:
        raise UserError(str(exc)) from None
    except Exception as exc:
        if isinstance(exc, _REPORTED_BY_MAIN):
            raise
        # Not an error of a cell (those are recorded): of the run itself.
        print(
            f"kernelmaps compare: error: {type(exc).__name__}: {_one_line(exc)}. {resume} "
            "to resume.",
            file=sys.stderr,
        )
        return EXIT_FAILED


def _reportable(result: Any, metrics: list[str]) -> bool:
    """Warn of each failed cell; whether any cell gave a result (a user error when none
    could: the metrics do not apply to the data sets)."""
    for f in result.failures:
        print(f"warning: {_cell_text(f)} failed: {f['message']}", file=sys.stderr)
    if not result.rows and not result.failures:
        raise UserError(
            f"no result to report: the metrics asked for ({', '.join(metrics)}) do not "
            "apply to these data sets (accuracy is measured on classification data, rmse on "
            "regression data); ask for one that does, e.g. --metrics fro_error."
        )
    if not result.rows:
        first = result.failures[0]
        print(
            f"kernelmaps compare: error: every cell failed, nothing to report; the first, "
            f"{_cell_text(first)}: {first['message']}",
            file=sys.stderr,
        )
        return False
    return True


def _cell_text(failure: dict[str, Any]) -> str:
    """A cell of the failures table in words: data set / method / D / seed."""
    return (
        f"{failure['dataset']} / {failure['method']} / D={failure['n_components']} / seed "
        f"{failure['seed']}"
    )


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


def _print_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: Any = None,
    line: str | None = None,
) -> None:
    """A warning of the run as one line on stderr (not Python's two-line format)."""
    print(f"warning: {' '.join(str(message).split())}", file=sys.stderr)


def _write_verdicts(out_dir: Path) -> None:
    """The study's verdicts into ``results.json``.

    The results are complete without them: when the file cannot be rewritten (another run
    took the folder, the disk is full), a warning says so and the command goes on.
    """
    from ..experiments import OutputFolderInUseError, write_verdicts

    try:
        write_verdicts(out_dir)
    except (OutputFolderInUseError, OSError) as exc:
        print(
            f"warning: the verdicts are not in {out_dir / 'results.json'} (the results are): "
            f"{_one_line(exc)}",
            file=sys.stderr,
        )


def _report(
    result: Any, error_metric: str, elapsed: float, out_dir: Path, names: dict[str, str]
) -> None:
    """The tables, the study's verdicts under them, the bandwidths and what was written.

    ``names``: the registry name of each method as the table names it.
    """
    from ..experiments import format_dimensions, format_table, format_verdicts, study_verdicts

    print()
    print(format_table(result.rows, error_metric, center="median"))  # as the figure
    shown = [error_metric]
    for extra in ("accuracy", "rmse"):
        if extra != error_metric and any(r["metric"] == extra for r in result.rows):
            shown.append(extra)
            print()
            print(format_table(result.rows, extra, center="median"))
    verdicts = [v for metric in shown for v in study_verdicts(result.rows, metric, names)]
    if verdicts:
        print()
        print(format_verdicts(verdicts))
    gammas = result.provenance.get("gamma", {})
    if gammas:
        print("\ngamma: " + ", ".join(f"{_kernel_named(k)} = {v:.4g}" for k, v in gammas.items()))
    dimensions = format_dimensions(result.provenance.get("statistical_dimension", {}))
    if dimensions:
        print("\n" + dimensions)
    reused = result.n_cells - result.n_computed
    print(
        f"\n{result.n_cells} cells in {elapsed:.1f} s"
        + (f" ({reused} reused from an earlier run)" if reused else "")
    )
    print(f"wrote {out_dir / 'results.csv'} and {out_dir / 'results.json'}")


def _figure(result: Any, metric: str, out_dir: Path, quiet: bool) -> None:
    """figure.png of ``result`` (its configuration tells the methods behind its labels)."""
    from .. import plotting

    if not plotting.matplotlib_available():
        print(
            "note: figure skipped: matplotlib is not installed. "
            'Get it with: pip install "kernelmaps[plot]"',
            file=sys.stderr,
        )
        return
    from ..experiments import metric_title

    path = out_dir / "figure.png"
    title = f"kernelmaps compare: {metric_title(metric)} against the number of features"
    plotting.plot_error_curves(result, metric=metric, path=path, title=title)
    if not quiet:
        print(f"wrote {path}")


def _kernel_named(key: str) -> str:
    """``letter/rbf`` of the provenance as the tables and the figure name it:
    ``letter/Gaussian``."""
    from ..experiments import kernel_label

    dataset, _, kernel = key.rpartition("/")
    return f"{dataset}/{kernel_label(kernel)}" if dataset else key
