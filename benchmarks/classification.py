"""Classifiers with probabilities on random features: accuracy, calibration and fit time.

Data (``--data-home``, default ``$KERNELMAPS_DATA`` or ``../shared/data``): MNIST (the
60 000 training digits of the data home, the 10 000 test digits from its
``t10k-*-idx*.gz`` files, pixels in [0, 1]), ijcnn1 (49 990 training rows, 91 701 test
rows) and adult (a9a: 32 561 training rows, its 16 281 test rows), as given (already
scaled; not standardised).  ``--quick``: the bundled 10 000-row ijcnn1 sample, 2000
training and 2000 test rows, small sizes, a few seconds (CI's smoke test).

Features: ``RandomFourierFeatures(gamma, D, random_state=0)`` of the Gaussian kernel,
``gamma`` by the median heuristic (:func:`kernelmaps.bandwidth.gamma_from_data` on the
training rows), for each ``D`` of ``--n-components`` (1024, 2048, 4096).  Every model sees
the same features: ours take that map (same parameters, so the same frequencies) and
compute the features in their pass over the rows; scikit-learn's are fitted on the
features computed once, and their fit time is the transform's plus their own.  Models:

* ``FeatureRidgeClassifier`` (alpha by leave-one-out among ``ALPHAS``) without
  probabilities (``calibration=None``) and with them (calibrated on the leave-one-out
  decision values): their fit times are measured alternated, ``--repeats`` rounds, and
  their ratio is printed (the goal: at most 1.2);
* ``FeatureLogisticRegression(C)`` against ``LogisticRegression(C, lbfgs)`` on the same
  features: the objective ``C sum_i log-loss_i + |W|^2 / 2`` of both is printed, with
  their relative difference (goal: 1e-6) and the ratio of their fit times (goal: 3x);
* ``NystroemKernelRidgeClassifier`` with ``m = --nystroem-m`` landmarks (10 000);
* ``SGDClassifier(loss="log_loss", alpha=1 / (C n))`` (the same penalty),
  ``CalibratedClassifierCV(RidgeClassifier(alpha), cv=5)`` with the alpha our ridge chose,
  and ``SVC(probability=True)`` with the exact kernel on ``--svc-rows`` training rows.

Reported for each: test accuracy, log-loss, Brier score (scikit-learn's), top-label
expected calibration error (15 equal-width bins,
:func:`kernelmaps.metrics.expected_calibration_error`) and fit time
(``time.perf_counter``, one fit each unless said), as a Markdown table on standard output;
``--plot FILE`` draws test accuracy against fit time, one panel per data set.  Models that
this version of kernelmaps lacks are skipped with a note.

Usage: python benchmarks/classification.py [--quick] [--data-home DIR]
    [--datasets mnist ijcnn1 adult] [--n-components 1024 2048 4096] [--nystroem-m 10000]
    [--svc-rows 10000] [--C 1.0] [--repeats 3] [--plot FILE] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import struct
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from _harness import machine_line, time_alternating, timed
from sklearn.calibration import CalibratedClassifierCV
from sklearn.linear_model import LogisticRegression, RidgeClassifier, SGDClassifier
from sklearn.metrics import accuracy_score, brier_score_loss, log_loss
from sklearn.svm import SVC

import kernelmaps
from kernelmaps import RandomFourierFeatures
from kernelmaps.bandwidth import gamma_from_data
from kernelmaps.datasets import load_from_home, load_ijcnn1, load_svmlight
from kernelmaps.metrics import expected_calibration_error

DEFAULT_DATA_HOME = Path(
    os.environ.get(
        "KERNELMAPS_DATA", Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
    )
)
#: The ridge penalties searched by leave-one-out (those of ``kernelmaps fit``).
ALPHAS = tuple(float(a) for a in np.logspace(-6, 2, 9))
Split = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


# -- data ------------------------------------------------------------------------------


def _idx(path: Path) -> np.ndarray:
    """An array of an IDX file (MNIST's format), gzip-compressed."""
    with gzip.open(path, "rb") as fh:
        raw = fh.read()
    dims = raw[3]
    shape = struct.unpack(">" + "I" * dims, raw[4 : 4 + 4 * dims])
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def load_mnist(home: Path) -> Split:
    X, y = load_from_home("mnist", home, return_X_y=True)
    Xt = _idx(home / "mnist" / "t10k-images-idx3-ubyte.gz").reshape(-1, 784) / 255.0
    yt = _idx(home / "mnist" / "t10k-labels-idx1-ubyte.gz").astype(np.float64)
    return X, y, Xt, yt


def load_ijcnn1_split(home: Path) -> Split:
    X, y = load_from_home("ijcnn1_full", home, return_X_y=True)
    Xt, yt = load_from_home("ijcnn1_test", home, return_X_y=True)
    return _dense(X), y, _dense(Xt), yt


def load_adult(home: Path) -> Split:
    X, y = load_from_home("adult", home, return_X_y=True)
    test = load_svmlight(home / "adult" / "adult.tst.bz2", n_features=123, zero_based=True)
    return _dense(X), y, _dense(test.X), np.asarray(test.y)


def load_quick() -> Split:
    X, y = load_ijcnn1(return_X_y=True)
    order = np.random.default_rng(0).permutation(len(y))
    train, test = order[:2000], order[2000:4000]
    X = _dense(X)
    return X[train], y[train], X[test], y[test]


def _dense(X: Any) -> np.ndarray:
    return np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=np.float64)


LOADERS: dict[str, Callable[[Path], Split]] = {
    "mnist": load_mnist,
    "ijcnn1": load_ijcnn1_split,
    "adult": load_adult,
}


# -- models ----------------------------------------------------------------------------


def ours(name: str) -> Any:
    """kernelmaps' class ``name``, or None (with a note) where this version lacks it."""
    try:
        return getattr(kernelmaps, name)
    except AttributeError:
        print(f"  note: kernelmaps {kernelmaps.__version__} has no {name}; skipped")
        return None


def scores(model: Any, X: Any, y: np.ndarray) -> dict[str, float]:
    """Test accuracy, and where the model gives probabilities, log-loss, Brier and ECE."""
    out = {"accuracy": float(accuracy_score(y, model.predict(X)))}
    if not hasattr(model, "predict_proba"):
        return out
    try:
        P = model.predict_proba(X)
    except (AttributeError, NotImplementedError, ValueError):  # probabilities turned off
        return out
    classes = model.classes_
    out["log_loss"] = float(log_loss(y, P, labels=classes))
    Q = P[:, 1] if P.shape[1] == 2 else P
    out["brier"] = float(brier_score_loss(y, Q, labels=classes, pos_label=classes[-1]))
    out["ece"] = expected_calibration_error(y, P, labels=classes)
    return out


def objective(model: Any, Z: np.ndarray, y: np.ndarray, C: float, proba: np.ndarray) -> float:
    """``C sum_i log-loss_i + |W|^2 / 2``: scikit-learn's LogisticRegression objective."""
    loss = log_loss(y, proba, labels=model.classes_, normalize=False)
    return float(C * loss + 0.5 * np.sum(np.asarray(model.coef_, dtype=np.float64) ** 2))


class Run:
    """The rows, features and results of one data set at one number of features."""

    def __init__(self, name: str, data: Split, D: int, args: argparse.Namespace) -> None:
        self.name, self.D, self.args = name, D, args
        self.X, self.y, self.Xt, self.yt = data
        self.gamma = float(gamma_from_data(self.X, "median"))
        self.rff = RandomFourierFeatures(gamma=self.gamma, n_components=D, random_state=0)
        self.transform_s, fitted = timed(lambda: self.rff.fit(self.X))
        seconds, self.Z = timed(lambda: fitted.transform(self.X))
        self.transform_s += seconds
        self.Zt = fitted.transform(self.Xt)
        self.rows: list[dict[str, Any]] = []
        self.alpha = 1.0

    def add(self, method: str, model: Any, seconds: float, X: Any, note: str = "") -> None:
        row = {"data": self.name, "D": self.D, "method": method, "fit_seconds": seconds}
        row |= scores(model, X, self.yt) | ({"note": note} if note else {})
        self.rows.append(row)
        print("  " + json.dumps(row), flush=True)

    def fit_sklearn(self, method: str, model: Any, note: str = "") -> Any:
        seconds, _ = timed(lambda: model.fit(self.Z, self.y))
        self.add(method, model, self.transform_s + seconds, self.Zt, note)
        return model


def ridge_pair(run: Run, args: argparse.Namespace) -> None:
    """FeatureRidgeClassifier without and with probabilities, timed alternated."""
    cls = ours("FeatureRidgeClassifier")
    models = {"calibration=None": cls(run.rff, alphas=list(ALPHAS))}
    if "calibration" in cls().get_params():
        models["calibration=None"].set_params(calibration=None)
        models["calibrated (LOO)"] = cls(run.rff, alphas=list(ALPHAS))
    else:
        print("  note: FeatureRidgeClassifier has no calibration yet; no probabilities")
    calls = {k: (lambda m=m: m.fit(run.X, run.y)) for k, m in models.items()}
    # one untimed fit of each first, unless a single round is asked (--quick)
    timings = time_alternating(calls, args.repeats, warm_up=args.repeats > 1)
    for key, model in models.items():
        run.add(f"FeatureRidgeClassifier, {key}", model, timings[key].median, run.Xt)
    run.alpha = float(models["calibration=None"].alpha_)
    if len(timings) == 2:
        ratio = timings["calibrated (LOO)"].median / timings["calibration=None"].median
        print(f"  fit with probabilities / without: {ratio:.3f} (median of {args.repeats})")


def logistic_pair(run: Run, args: argparse.Namespace) -> None:
    """FeatureLogisticRegression against LogisticRegression on the same features."""
    mine = LogisticRegression(C=args.C, solver="lbfgs", max_iter=10_000, tol=1e-10)
    theirs = run.fit_sklearn("LogisticRegression (lbfgs)", mine)
    cls = ours("FeatureLogisticRegression")
    if cls is None:
        return
    model = cls(run.rff, C=args.C, tol=1e-10, max_iter=1000)
    seconds, _ = timed(lambda: model.fit(run.X, run.y))
    run.add("FeatureLogisticRegression", model, seconds, run.Xt)
    ref = objective(theirs, run.Z, run.y, args.C, theirs.predict_proba(run.Z))
    value = objective(model, run.Z, run.y, args.C, model.predict_proba(run.X))
    sklearn_s = run.rows[-2]["fit_seconds"]
    print(
        f"  objective: ours {value:.10g}, LogisticRegression {ref:.10g}, relative difference "
        f"{(value - ref) / abs(ref):.2e}; LogisticRegression's fit time / ours "
        f"{sklearn_s / seconds:.2f}"
    )


def others(run: Run, args: argparse.Namespace) -> None:
    """Nyström kernel classifier, SGD, calibrated ridge (5 refits) and the exact SVC."""
    cls = ours("NystroemKernelRidgeClassifier")
    if cls is not None:
        m = min(args.nystroem_m, run.X.shape[0])
        model = cls(kernel="rbf", gamma=run.gamma, n_components=m, random_state=0)
        seconds, _ = timed(lambda: model.fit(run.X, run.y))
        run.add(f"NystroemKernelRidgeClassifier (m={m})", model, seconds, run.Xt)
    n = run.X.shape[0]
    sgd = SGDClassifier(loss="log_loss", alpha=1.0 / (args.C * n), random_state=0)
    run.fit_sklearn("SGDClassifier (log_loss)", sgd)
    ridge = CalibratedClassifierCV(RidgeClassifier(alpha=run.alpha), cv=5)
    run.fit_sklearn(f"CalibratedClassifierCV(RidgeClassifier), alpha {run.alpha:.3g}", ridge)
    rows = min(args.svc_rows, n)
    sub = np.random.default_rng(1).choice(n, size=rows, replace=False)
    svc = SVC(gamma=run.gamma, probability=True, random_state=0)
    seconds, _ = timed(lambda: svc.fit(run.X[sub], run.y[sub]))
    run.add(f"SVC(probability=True), exact kernel, {rows} rows", svc, seconds, run.Xt)


# -- output ----------------------------------------------------------------------------


def table(rows: list[dict[str, Any]]) -> str:
    """The rows as a Markdown table."""
    head = "| data | D | method | accuracy | log-loss | Brier | ECE | fit s |"
    lines = [head, "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        cells = [f"{r[k]:.4f}" if k in r else "–" for k in ("accuracy", "log_loss", "brier", "ece")]
        lines.append(
            f"| {r['data']} | {r['D']} | {r['method']} | " + " | ".join(cells)
            + f" | {r['fit_seconds']:.2f} |"
        )  # fmt: skip
    return "\n".join(lines)


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    """Test accuracy against fit time, one panel per data set, one marker per method."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import NullFormatter

    datasets = list(dict.fromkeys(r["data"] for r in rows))
    fig = Figure(figsize=(max(6.4, 4.6 * len(datasets)), 5.6), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(datasets), squeeze=False)[0]
    for ax, name in zip(axes, datasets, strict=True):
        mine = [r for r in rows if r["data"] == name]
        for method in dict.fromkeys(r["method"] for r in mine):
            points = sorted(
                (r["fit_seconds"], r["accuracy"]) for r in mine if r["method"] == method
            )
            ax.plot(*zip(*points, strict=True), marker="o", label=method)
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())  # labelled decades only
        ax.set_xlabel("fit time (s)")
        ax.set_ylabel("test accuracy")
        ax.set_title(name)
        ax.grid(True, alpha=0.3)
    handles = {}
    for ax in axes:
        handles |= dict(zip(*reversed(ax.get_legend_handles_labels()), strict=True))
    fig.legend(
        handles.values(),
        handles.keys(),
        loc="outside lower center",
        ncols=min(len(datasets), 3),
        fontsize=7,
    )
    fig.savefig(path, dpi=150)
    print(f"wrote {path}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="bundled ijcnn1, small sizes")
    parser.add_argument("--data-home", type=Path, default=DEFAULT_DATA_HOME)
    parser.add_argument("--datasets", nargs="+", choices=list(LOADERS), default=list(LOADERS))
    parser.add_argument("--n-components", type=int, nargs="+", default=[1024, 2048, 4096])
    parser.add_argument("--nystroem-m", type=int, default=10_000)
    parser.add_argument("--svc-rows", type=int, default=10_000)
    parser.add_argument("--C", type=float, default=1.0, help="the logistic models' C")
    parser.add_argument("--repeats", type=int, default=3, help="rounds of the ridge pair")
    parser.add_argument("--plot", type=Path, default=None, help="accuracy against fit time")
    parser.add_argument("--out", type=Path, default=None, help="write the rows as JSON")
    args = parser.parse_args(argv)
    if args.quick:
        args.n_components, args.nystroem_m, args.svc_rows = [128], 200, 500
        args.repeats = 1
    print(f"machine: {machine_line()}")
    print("load average", os.getloadavg())
    warnings.filterwarnings("ignore", category=FutureWarning)  # SVC(probability=True)
    home = args.data_home.resolve()
    names = ["ijcnn1 (bundled sample)"] if args.quick else args.datasets
    rows: list[dict[str, Any]] = []
    for name in names:
        data = load_quick() if args.quick else LOADERS[name](home)
        n, d = data[0].shape
        print(f"\n{name}: {n} training rows, {data[2].shape[0]} test rows, {d} features, "
              f"{len(np.unique(data[1]))} classes", flush=True)  # fmt: skip
        for D in args.n_components:
            run = Run(name, data, D, args)
            print(f" D = {D}, gamma = {run.gamma:.4g} (median heuristic), features in "
                  f"{run.transform_s:.2f} s", flush=True)  # fmt: skip
            ridge_pair(run, args)
            logistic_pair(run, args)
            others(run, args)
            rows += run.rows
    print("\n" + table(rows))
    if args.plot:
        plot(rows, args.plot)
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
