"""Predictive uncertainty of the regressors: interval coverage, log predictive density, time.

Data (``--data-home``, default ``$KERNELMAPS_DATA`` or ``../shared/data``): the UCI sets
bike, elevators, pol and protein of the data home (``uci_regression/<name>``: the last
column is ``y``, the first column of ``test_mask.csv.gz`` marks the held-out rows) and the
bundled California housing (a fixed random fifth held out).  The features and the target
are standardized by the training rows' means and deviations (the files are not), so the
NLPD and the widths are in units of the target's deviation.
``--quick``: California housing only, 2000 training and 1000 test rows, small sizes, a few
seconds (CI's smoke test: bundled data only).

Models (``--models``): ``FeatureRidge(RandomFourierFeatures(gamma, D), alphas=ALPHAS)``
with ``gamma`` by the median heuristic (:func:`kernelmaps.bandwidth.gamma_from_data`) and
``alpha`` by exact leave-one-out among ``ALPHAS`` (four a decade, 10^-6 to 10^2);
``FeatureRidge:evidence``, the same with the ``alpha`` of largest evidence among them
(``FeatureRidgeCV(criterion="evidence")`` at that ``gamma``; no timings of its own);
``FeatureRidgeCV`` (``gamma`` and ``alpha`` by its search; jackknife+ from its best
model) and ``FeatureRidgeCV:cv5`` (the same search by 5-fold cross-validation; CV+ from the
models without each fold); ``NystroemKernelRidge(posterior=True)`` with ``--nystroem-m``
landmarks and the same ``gamma``; ``KernelRidge`` (exact) on ``--exact-rows`` training
rows.  A model whose class in this version has no ``predict_interval`` is skipped with a
note.  For each:

* the empirical coverage of ``predict_interval`` (jackknife+ from the fit's exact
  leave-one-out residuals, or CV+) at 80, 90 and 95 % on the held-out rows, and the mean
  width, against split conformal: the same model fitted on a random half of the training
  rows, the absolute residuals of the other half giving the ``ceil((1 - a)(m + 1))``-th
  smallest as the half-width (Lei et al. 2018);
* the negative log predictive density (Gaussian, from ``predict(return_std=True)``,
  averaged over the held-out rows; lower is better) and the root mean squared error;
* the time of ``predict(return_std=True)`` and of ``predict_interval`` against a plain
  ``predict`` on the held-out rows (alternated, ``--repeats`` rounds, ratios of medians),
  and of the fit against the same fit that keeps no rows for the conformal scores (a
  subclass; alternated), with the fit's absolute seconds.

References, on the same rows: scikit-learn's ``GaussianProcessRegressor`` (exact, kernel
``ConstantKernel * RBF + WhiteKernel`` with its optimizer, ``normalize_y=True``, from the
median heuristic's length scale; its hyperparameters tuned on ``--gp-opt-rows``, 2000,
as each step of its optimizer costs ``O(n^3)``) on a random ``--gp-rows`` subset of the
training rows (5000), and ``BayesianRidge`` on the same random Fourier features (all training rows;
its fit time counts the transform).  ``--large``: a synthetic ``n = 10^6`` run of the
feature model (fit, ``predict(return_std=True)`` and ``predict_interval`` on 10 000 rows)
to show that it finishes in minutes.

Output: a Markdown table on standard output; ``--out FILE.json`` writes the rows as JSON
and ``--csv FILE.csv`` as CSV.

Usage: python benchmarks/uncertainty.py [--quick] [--large] [--data-home DIR]
    [--datasets bike elevators pol protein california] [--models FeatureRidge ...]
    [--n-components 2048] [--gp-rows 5000] [--repeats 3] [--out FILE.json] [--csv FILE.csv]
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from _harness import machine_line, time_alternating, timed
from sklearn.base import clone
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel
from sklearn.linear_model import BayesianRidge

import kernelmaps
from kernelmaps import RandomFourierFeatures
from kernelmaps.bandwidth import gamma_from_data
from kernelmaps.datasets import load_california_housing

DEFAULT_DATA_HOME = Path(
    os.environ.get(
        "KERNELMAPS_DATA", Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
    )
)
#: The ridge penalties searched (four a decade).
ALPHAS = tuple(float(a) for a in np.logspace(-6, 2, 33))
COVERAGES = (0.8, 0.9, 0.95)
UCI = ("bike", "elevators", "pol", "protein")
Split = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


# -- data ------------------------------------------------------------------------------


def load_uci(home: Path, name: str) -> Split:
    """A UCI set of the data home, split by the first column of its test mask."""
    base = home / "uci_regression" / name
    raw = np.loadtxt(base / "data.csv.gz", delimiter=",")
    mask = np.loadtxt(base / "test_mask.csv.gz", delimiter=",", ndmin=2)[:, 0].astype(bool)
    return standardized(raw[~mask, :-1], raw[~mask, -1], raw[mask, :-1], raw[mask, -1])


def load_california(n_train: int | None = None, n_test: int | None = None) -> Split:
    """California housing (bundled): a random fifth held out."""
    X, y = load_california_housing(return_X_y=True)
    order = np.random.default_rng(0).permutation(len(y))
    cut = len(y) // 5
    test, train = order[:cut][:n_test], order[cut:][:n_train]
    return standardized(X[train], y[train], X[test], y[test])


def standardized(X: np.ndarray, y: np.ndarray, Xt: np.ndarray, yt: np.ndarray) -> Split:
    """Features and target centred and scaled by the training rows' means and deviations
    (a constant column left unscaled), so that the NLPD and widths compare across sets."""
    mu, sd = X.mean(axis=0), X.std(axis=0)
    sd[sd == 0] = 1.0
    y_mu, y_sd = y.mean(), y.std()
    return (X - mu) / sd, (y - y_mu) / y_sd, (Xt - mu) / sd, (yt - y_mu) / y_sd


# -- models ----------------------------------------------------------------------------


def _features(gamma: float, D: int) -> RandomFourierFeatures:
    return RandomFourierFeatures(gamma=gamma, n_components=D, random_state=0)


def build(name: str, run: Run) -> tuple[Any, int] | None:
    """The model ``name`` and how many training rows it takes, or None (with a note)
    where this version of kernelmaps lacks it or its uncertainty methods."""
    cls = getattr(kernelmaps, name.split(":")[0], None)
    if cls is None or not hasattr(cls, "predict_interval"):
        print(f"  note: kernelmaps {kernelmaps.__version__}'s {name} has no predict_interval; "
              "skipped")  # fmt: skip
        return None
    D, n, gamma = run.args.n_components, len(run.y), run.gamma
    if name == "FeatureRidge":
        return cls(_features(gamma, D), alphas=list(ALPHAS)), n
    if name == "FeatureRidge:evidence":
        return cls(_features(gamma, D), alpha=evidence_alpha(run)), n
    if name == "FeatureRidgeCV":
        return cls(RandomFourierFeatures(n_components=D, random_state=0)), n
    if name == "FeatureRidgeCV:cv5":  # CV+ from the models without each of 5 folds
        return cls(RandomFourierFeatures(n_components=D, random_state=0), cv=5), n
    # the kernel models: their parameter names as of this version
    if name == "NystroemKernelRidge":
        m = min(run.args.nystroem_m, n)
        model = cls(kernel="rbf", gamma=gamma, n_components=m, random_state=0)
        if "posterior" in model.get_params():
            model.set_params(posterior=True)
        return model, n
    if name == "KernelRidge":
        return cls(kernel="rbf", gamma=gamma), min(run.args.exact_rows, n)
    raise ValueError(f"unknown model {name!r}; choose among {MODELS}.")


def evidence_alpha(run: Run) -> float:
    """The penalty of largest evidence among ``ALPHAS`` at the median heuristic's
    ``gamma`` (``FeatureRidgeCV(criterion="evidence")``, one pass)."""
    search = kernelmaps.FeatureRidgeCV(
        _features(run.gamma, run.args.n_components),
        gammas=None,
        alphas=list(ALPHAS),
        criterion="evidence",
        keep_statistics=False,
    )
    return float(search.fit(run.X, run.y).alpha_)


MODELS = (
    "FeatureRidge",
    "FeatureRidge:evidence",
    "FeatureRidgeCV",
    "FeatureRidgeCV:cv5",
    "NystroemKernelRidge",
    "KernelRidge",
)


def without_scores(model: Any) -> Any:
    """The same model whose fit keeps no rows for the conformal scores (for the fit's
    timing), or None where that cannot be switched off from outside."""
    if not hasattr(model, "_calibrate"):
        return None

    class Unscored(type(model)):  # type: ignore[misc]
        def _calibrate(self, n_rows: int, sample: Any) -> None:
            self._scored = None

    return Unscored(**model.get_params(deep=False))


# -- measures --------------------------------------------------------------------------


def nlpd(y: np.ndarray, mean: np.ndarray, std: np.ndarray) -> float:
    """Mean negative log density of ``y`` under ``N(mean, std^2)``."""
    var = np.asarray(std, dtype=np.float64) ** 2
    return float(np.mean(0.5 * np.log(2 * math.pi * var) + (y - mean) ** 2 / (2 * var)))


def rmse(y: np.ndarray, mean: np.ndarray) -> float:
    return float(np.sqrt(np.mean((y - mean) ** 2)))


def interval_scores(y: np.ndarray, bounds: Callable[[float], tuple[Any, Any]]) -> dict[str, float]:
    """Coverage (%) and mean width of ``bounds(coverage)`` at every nominal coverage."""
    out = {}
    for c in COVERAGES:
        lower, upper = bounds(c)
        key = f"{round(100 * c)}"
        out[f"cover{key}"] = 100.0 * float(np.mean((y >= lower) & (y <= upper)))
        out[f"width{key}"] = float(np.mean(np.asarray(upper) - np.asarray(lower)))
    return out


def split_conformal(model: Any, X: np.ndarray, y: np.ndarray, Xt: np.ndarray) -> Callable:
    """Split conformal bounds of ``Xt``: ``model`` (cloned) fitted on a random half of the
    rows, the other half's absolute residuals giving the half-width."""
    order = np.random.default_rng(1).permutation(len(y))
    fit, cal = order[: len(y) // 2], order[len(y) // 2 :]
    half = clone(model).fit(X[fit], y[fit])
    scores = np.sort(np.abs(y[cal] - half.predict(X[cal])))
    centre = half.predict(Xt)

    def bounds(coverage: float) -> tuple[np.ndarray, np.ndarray]:
        rank = math.ceil(coverage * (len(scores) + 1))
        q = scores[rank - 1] if rank <= len(scores) else math.inf
        return centre - q, centre + q

    return bounds


class Run:
    """The rows and results of one data set."""

    def __init__(self, name: str, data: Split, args: argparse.Namespace) -> None:
        self.name, self.args = name, args
        self.X, self.y, self.Xt, self.yt = data
        self.gamma = float(gamma_from_data(self.X, "median"))
        self.rows: list[dict[str, Any]] = []

    def add(self, method: str, **values: Any) -> dict[str, Any]:
        row = {"data": self.name, "method": method} | values
        self.rows.append(row)
        print("  " + json.dumps(row), flush=True)
        return row

    def subset(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """A fixed random subset of ``n`` training rows (all of them if there are fewer)."""
        if n >= len(self.y):
            return self.X, self.y
        sub = np.random.default_rng(2).choice(len(self.y), size=n, replace=False)
        return self.X[sub], self.y[sub]

    def gaussian(self, model: Any, X: np.ndarray) -> dict[str, float]:
        mean, std = model.predict(X, return_std=True)
        return {"nlpd": nlpd(self.yt, mean, std), "rmse": rmse(self.yt, mean)}


def ours(run: Run, name: str) -> None:
    """One of our models: intervals against split conformal, NLPD, and the timings."""
    built = build(name, run)
    if built is None:
        return
    model, n = built
    X, y = run.subset(n)
    fit_s, _ = timed(lambda: model.fit(X, y))
    values: dict[str, Any] = {"rows": n, "fit_s": fit_s} | run.gaussian(model, run.Xt)
    values |= interval_scores(run.yt, lambda c: model.predict_interval(run.Xt, coverage=c))
    values["noise_variance"] = float(np.mean(model.noise_variance_))
    values |= {k: float(getattr(model, k)) for k in ("alpha_", "gamma_") if hasattr(model, k)}
    if ":" not in name or name.endswith(":cv5"):  # the evidence variant's are its model's
        values |= timings(model, X, y, run.Xt, run.args.repeats)
    run.add(name, **values)
    split = split_conformal(model, X, y, run.Xt)
    run.add(f"{name}, split conformal", rows=n, **interval_scores(run.yt, split))


def timings(model: Any, X: np.ndarray, y: np.ndarray, Xt: np.ndarray, repeats: int) -> dict:
    """Ratios of medians, alternated: the uncertainty methods to ``predict``, and the fit
    to the fit without the conformal scores."""
    calls = {
        "predict": lambda: model.predict(Xt),
        "std": lambda: model.predict(Xt, return_std=True),
        "interval": lambda: model.predict_interval(Xt, coverage=0.9),
    }
    t = time_alternating(calls, repeats)
    out = {
        "predict_s": t["predict"].median,
        "std_ratio": t["std"].median / t["predict"].median,
        "interval_ratio": t["interval"].median / t["predict"].median,
    }
    unscored = without_scores(model)
    if unscored is not None:
        fits = {"fit": lambda: clone(model).fit(X, y), "unscored": lambda: unscored.fit(X, y)}
        f = time_alternating(fits, repeats, warm_up=False)
        out |= {
            "fit_median_s": f["fit"].median,
            "fit_ratio": f["fit"].median / f["unscored"].median,
        }
    return out


def gaussian_process(run: Run) -> None:
    """scikit-learn's exact GP on a random subset of the training rows: its kernel's
    hyperparameters by its optimizer on the first ``--gp-opt-rows`` of them (each step of
    the optimizer costs ``O(n^3)``), then the exact posterior on all of them."""
    X, y = run.subset(run.args.gp_rows)
    n, n_opt = len(y), min(run.args.gp_opt_rows, len(y))
    length = 1.0 / math.sqrt(2.0 * run.gamma)
    kernel = ConstantKernel(1.0) * RBF(length) + WhiteKernel(0.1)
    tuned = GaussianProcessRegressor(kernel, normalize_y=True, random_state=0)
    gp = GaussianProcessRegressor(optimizer=None, normalize_y=True)

    def fit() -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # convergence notes of the optimizer
            tuned.fit(X[:n_opt], y[:n_opt])
        gp.set_params(kernel=tuned.kernel_).fit(X, y)

    fit_s, _ = timed(fit)
    method = f"GaussianProcessRegressor (exact, {n} rows, tuned on {n_opt})"
    run.add(method, rows=n, fit_s=fit_s, kernel=str(gp.kernel_), **run.gaussian(gp, run.Xt))


def bayesian_ridge(run: Run) -> None:
    """scikit-learn's BayesianRidge on the same random Fourier features (all rows)."""
    rff = _features(run.gamma, run.args.n_components)
    model = BayesianRidge()

    def fit() -> None:
        model.fit(rff.fit(run.X).transform(run.X), run.y)

    fit_s, _ = timed(fit)
    run.add("BayesianRidge (same features)", rows=len(run.y), fit_s=fit_s,
            **run.gaussian(model, rff.transform(run.Xt)))  # fmt: skip


# -- the large run ---------------------------------------------------------------------


def large(args: argparse.Namespace) -> dict[str, Any]:
    """``FeatureRidge`` on ``n = 10^6`` synthetic rows: the fit, ``return_std`` and
    ``predict_interval`` on 10 000 rows, timed once each."""
    rng = np.random.default_rng(0)
    n, d = args.large_rows, 8
    X = rng.standard_normal((n + 10_000, d))
    y = np.sin(X[:, 0]) * np.cos(X[:, 1]) + 0.5 * X[:, 2] + 0.3 * rng.standard_normal(n + 10_000)
    X, Xt, y, yt = X[:n], X[n:], y[:n], y[n:]
    gamma = float(gamma_from_data(X[:10_000], "median"))
    model = kernelmaps.FeatureRidge(_features(gamma, args.n_components), alphas=list(ALPHAS))
    fit_s, _ = timed(lambda: model.fit(X, y))
    std_s, (mean, std) = timed(lambda: model.predict(Xt, return_std=True))
    interval_s, (lower, upper) = timed(lambda: model.predict_interval(Xt, coverage=0.9))
    row = {"data": f"synthetic, n = {n}", "method": "FeatureRidge", "rows": n, "fit_s": fit_s,
           "std_s": std_s, "interval_s": interval_s, "nlpd": nlpd(yt, mean, std),
           "cover90": 100.0 * float(np.mean((yt >= lower) & (yt <= upper)))}  # fmt: skip
    print("  " + json.dumps(row), flush=True)
    return row


# -- output ----------------------------------------------------------------------------


def _cell(row: dict[str, Any], key: str, fmt: str) -> str:
    return format(row[key], fmt) if key in row else "–"


def table(rows: list[dict[str, Any]]) -> str:
    """The rows as a Markdown table: coverage (%) and width at 80/90/95 %, NLPD, RMSE,
    fit seconds and the time ratios."""
    head = (
        "| data | method | cover 80 | width 80 | cover 90 | width 90 | cover 95 | width 95 "
        "| NLPD | RMSE | fit s | std / predict | interval / predict | fit / unscored |"
    )
    lines = [head, "|" + "---|" * 14]
    for r in rows:
        cells = []
        for c in ("80", "90", "95"):
            cells += [_cell(r, f"cover{c}", ".1f"), _cell(r, f"width{c}", ".3f")]
        cells += [_cell(r, "nlpd", ".3f"), _cell(r, "rmse", ".3f"), _cell(r, "fit_s", ".1f")]
        cells += [_cell(r, k, ".2f") for k in ("std_ratio", "interval_ratio", "fit_ratio")]
        lines.append(f"| {r['data']} | {r['method']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_csv(rows: list[dict[str, Any]], path: Path) -> None:
    keys = list(dict.fromkeys(k for r in rows for k in r))
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=keys)
        writer.writeheader()
        writer.writerows(rows)


def run_dataset(name: str, data: Split, args: argparse.Namespace) -> list[dict[str, Any]]:
    run = Run(name, data, args)
    n, d = run.X.shape
    print(f"\n{name}: {n} training rows, {len(run.yt)} test rows, {d} features, "
          f"gamma = {run.gamma:.4g} (median heuristic)", flush=True)  # fmt: skip
    for model in args.models:
        ours(run, model)
    bayesian_ridge(run)
    gaussian_process(run)
    return run.rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="bundled data, small sizes")
    parser.add_argument("--large", action="store_true", help="also the n = 10^6 synthetic run")
    parser.add_argument("--large-rows", type=int, default=1_000_000)
    parser.add_argument("--data-home", type=Path, default=DEFAULT_DATA_HOME)
    choices = [*UCI, "california"]
    parser.add_argument("--datasets", nargs="+", choices=choices, default=choices)
    parser.add_argument("--models", nargs="+", choices=MODELS, default=list(MODELS))
    parser.add_argument("--n-components", type=int, default=2048, help="D of the features")
    parser.add_argument("--nystroem-m", type=int, default=2048)
    parser.add_argument("--exact-rows", type=int, default=5000, help="KernelRidge's rows")
    parser.add_argument("--gp-rows", type=int, default=5000, help="the exact GP's rows")
    parser.add_argument("--gp-opt-rows", type=int, default=2000, help="its optimizer's rows")
    parser.add_argument("--repeats", type=int, default=3, help="rounds of the timings")
    parser.add_argument("--out", type=Path, default=None, help="write the rows as JSON")
    parser.add_argument("--csv", type=Path, default=None, help="write the rows as CSV")
    args = parser.parse_args(argv)
    if args.quick:
        args.datasets, args.n_components, args.nystroem_m = ["california"], 256, 256
        args.gp_rows, args.gp_opt_rows, args.exact_rows = 500, 300, 1000
        args.repeats, args.large_rows = 1, 20_000
    print(f"machine: {machine_line()}")
    print("load average", os.getloadavg())
    home = args.data_home.resolve()
    rows: list[dict[str, Any]] = []
    for name in args.datasets:
        if name == "california":
            data = load_california(2000, 1000) if args.quick else load_california()
        else:
            data = load_uci(home, name)
        rows += run_dataset(name, data, args)
    if args.large:
        print(f"\nsynthetic: {args.large_rows} rows, 8 features", flush=True)
        rows.append(large(args))
    print("\n" + table(rows))
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1))
    if args.csv:
        write_csv(rows, args.csv)


if __name__ == "__main__":
    main()
