"""Run a study of this folder: its TOML configuration through the experiment runner.

Each study is an experiment configuration, ``experiments/<name>.toml`` (data sets, methods,
grid, seeds, metrics, bandwidth rule; see :class:`kernelmaps.experiments.ExperimentConfig`),
run by :func:`kernelmaps.experiments.run_experiment` into ``--output`` (default
``docs/results/<name>``): ``results.csv`` and ``results.json`` (rows, configuration,
provenance), ``cells.jsonl`` (finished cells: an interrupted run resumes), and here also
``figure.png`` and ``table.md`` (mean ± std over the seeds of each metric), and the
study's verdicts (:data:`kernelmaps.experiments.STUDY_PAIRS` whose two methods ran: at how
many points the second wins, and at how many by more than two standard errors) in
``verdicts.md`` and under the ``verdicts`` key of ``results.json``.  Run from the
repository root::

    python experiments/run_study.py NAME [--seeds N] [--output DIR] [--data-home DIR]
        [--n-fit N] [--n-eval N] [--n-components D ...]

What a configuration file cannot hold is added here: data sets prepared in Python
(:data:`PREPARED`: a TOML data set of that name is written to ``<output>/data/<name>.npz``
first and read from there).  The studies with figures and tables of their own
(``seed_study.py``, ``qmc_vs_mc.py``, ``ika_vs_nystroem.py``) call :func:`run_study` with
their report.  A configuration without prepared data also runs as it is with
``kernelmaps compare --config experiments/<name>.toml``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

from kernelmaps.experiments import (
    ExperimentConfig,
    ExperimentResult,
    format_table,
    format_verdicts,
    load_config,
    run_experiment,
    study_verdicts,
    write_verdicts,
)

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEFAULT_DATA_HOME = REPO.parent / "shared" / "data"

Report = Callable[[ExperimentResult, ExperimentConfig, Path], str]


# -- data sets prepared in Python ------------------------------------------------------


def _digits(data_home: Path) -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's 1797 digits, pixels / 16."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    return digits.data / 16.0, digits.target.astype(np.float64)


def _usps_unit_rows(data_home: Path) -> tuple[np.ndarray, np.ndarray]:
    """The 7291 USPS training digits, each row scaled to unit length."""
    with np.load(data_home / "usps" / "usps.npz") as f:
        X = np.asarray(f["X_train"], dtype=np.float64)
        y = np.asarray(f["y_train"], dtype=np.float64)
    return X / np.linalg.norm(X, axis=1, keepdims=True), y


#: Data sets a study names that the runner cannot read as they are: name -> builder.
PREPARED: dict[str, Callable[[Path], tuple[np.ndarray, np.ndarray]]] = {
    "digits": _digits,
    "usps_unit_rows": _usps_unit_rows,
}


def _use_prepared(config: ExperimentConfig, out: Path) -> None:
    """Write the prepared data sets of ``config`` to ``out/data`` and point it at them."""
    for d in config.datasets:
        if d.name in PREPARED:
            X, y = PREPARED[d.name](Path(config.data_home or DEFAULT_DATA_HOME))
            path = out / "data" / f"{d.name}.npz"
            path.parent.mkdir(parents=True, exist_ok=True)
            np.savez(path, X=X, y=y)
            d.label = d.label or d.name
            d.name = str(path)


# -- running ---------------------------------------------------------------------------


def parse_args(argv: list[str] | None, name: str | None = None) -> argparse.Namespace:
    """The options of every study; ``name`` given by a study's own script."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    if name is None:
        parser.add_argument("name", help="a study: the stem of a TOML file of experiments/")
    parser.add_argument("--output", help="output folder (default: docs/results/<name>)")
    parser.add_argument("--seeds", type=int, help="seeds 0 .. N-1 (default: the study's)")
    parser.add_argument("--data-home", default=str(DEFAULT_DATA_HOME))
    parser.add_argument("--n-fit", type=int, help="fit rows of every data set (a small run)")
    parser.add_argument("--n-eval", type=int, help="held-out rows of every data set")
    parser.add_argument("--n-components", type=int, nargs="+", help="the grid of D")
    args = parser.parse_args(argv)
    if name is not None:
        args.name = name
    args.output = Path(args.output or REPO / "docs" / "results" / args.name)
    return args


def load_study(args: argparse.Namespace) -> ExperimentConfig:
    """The study's configuration with the command-line overrides applied."""
    config = load_config(HERE / f"{args.name}.toml")
    config.data_home = args.data_home
    if args.seeds:
        config.seeds = list(range(args.seeds))
    if args.n_components:
        config.n_components = list(args.n_components)
    for d in config.datasets:
        d.n_fit = args.n_fit or d.n_fit
        d.n_eval = args.n_eval or d.n_eval
    config.__post_init__()  # validate the overrides
    _use_prepared(config, args.output)
    return config


def tables(result: ExperimentResult, config: ExperimentConfig, out: Path) -> str:
    """The default report: the first metric's figure, and a table of every metric."""
    from kernelmaps import plotting

    metric = config.metrics[0]
    plotting.plot_error_curves(result, metric, path=out / "figure.png", title=config.name)
    text = "\n\n".join(format_table(result.rows, m) for m in config.metrics)
    (out / "table.md").write_text("```\n" + text + "\n```\n", encoding="utf-8")
    return text


def verdicts(result: ExperimentResult, config: ExperimentConfig, out: Path) -> str:
    """The study's verdicts on its error and accuracy metrics (not its times).

    Written into ``results.json`` (its ``verdicts`` key, every metric with a direction)
    and ``verdicts.md``; returns the text, empty when no pair of the study ran.
    """
    write_verdicts(out)
    names = {m.display: m.name for m in config.methods}
    found = [
        v
        for metric in config.metrics
        if not metric.endswith("_time")
        for v in study_verdicts(result.rows, metric, names)
    ]
    if not found:
        return ""
    text = format_verdicts(found)
    (out / "verdicts.md").write_text("```\n" + text + "\n```\n", encoding="utf-8")
    return text


def run_study(
    argv: list[str] | None = None, name: str | None = None, report: Report = tables
) -> int:
    """Run a study (its configuration, then its report) and print the report."""
    args = parse_args(argv, name)
    config = load_study(args)
    result = run_experiment(config, args.output)
    for failure in result.failures:
        print(f"failed: {failure}", file=sys.stderr)
    print(report(result, config, args.output))
    text = verdicts(result, config, args.output)
    if text:
        print()
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(run_study())
