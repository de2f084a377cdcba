"""When is an exact kernel machine the better choice?  Exact machines against feature models.

Side by side in one run, on a classification and a regression set, for a few training
sizes ``n`` (the first ``n`` rows of a fixed random permutation of the training rows):

Classification: USPS (7291 training x 256, the standard 2007 test rows; from the data
home, ``--data-home``), or with ``--quick`` scikit-learn's bundled digits (1797 x 64, a
random 70/30 split):

* ``SVC()`` of scikit-learn, its defaults (``gamma="scale"``, ``C=1``; no tuning);
* ``FeatureRidgeClassifierCV(Nystroem(landmarks="kmeans", n_components=m))``: the
  recommended path of docs/choosing.md, which tunes ``gamma`` (9 + refinement) and
  ``alpha`` (13) by leave-one-out;
* ``FeatureRidgeClassifier`` on the same map with the ``gamma`` and ``alpha`` the search
  chose: one fit, the cost of the model without its search.

Regression: California housing (bundled, 20640 x 8, features standardized on the training
rows, 4000 test rows), or with ``--quick`` cpu_act (bundled, 8192 x 21):

* ``KernelRidge(kernel="rbf")`` of scikit-learn (exact, ``O(n^3)``), with the ``gamma`` and
  ``alpha`` the search chose (its time has no search in it), targets centred;
* ``FeatureRidgeCV(Nystroem(landmarks="kmeans", n_components=m))``: the search;
* ``NystroemKernelRidge(n_components=m, landmarks="kmeans")`` with the search's
  ``gamma`` and ``alpha``: one fit.

``m = min(--m, n // 2)``.  Reported: the fit time (``time.perf_counter``, one run each,
the methods in turn within one process, so that other processes' load falls on every
method alike) and the test accuracy or R².  The machine and its BLAS come first.

Usage: python benchmarks/exact_vs_features.py [--quick] [--data-home ../shared/data]
    [--m 1024] [--n-usps 1000 2000 4000 7291] [--n-regression 2000 5000 10000 16000]
    [--json results.json]

``--quick`` runs the bundled sets at two small sizes in about a minute, with no data home:
a smoke test of the script.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import machine_line, timed
from sklearn.datasets import load_digits
from sklearn.kernel_ridge import KernelRidge
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split
from sklearn.svm import SVC

from kernelmaps import (
    FeatureRidgeClassifier,
    FeatureRidgeClassifierCV,
    FeatureRidgeCV,
    Nystroem,
    NystroemKernelRidge,
)
from kernelmaps.datasets import load_california_housing, load_cpu_act

DEFAULT_DATA_HOME = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"

Split = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def classification_data(quick: bool, data_home: Path) -> tuple[str, Split]:
    """USPS's standard split, or digits split 70/30 with ``--quick``."""
    if quick:
        X, y = load_digits(return_X_y=True)
        X_fit, X_test, y_fit, y_test = train_test_split(X / 16.0, y, test_size=0.3, random_state=0)
        return "digits", (X_fit, y_fit, X_test, y_test)
    data = np.load(data_home / "usps" / "usps.npz")
    split = tuple(np.asarray(data[k], dtype=np.float64) for k in ("X_train", "y_train"))
    test = tuple(np.asarray(data[k], dtype=np.float64) for k in ("X_test", "y_test"))
    return "USPS", (split[0], split[1].astype(int), test[0], test[1].astype(int))


def regression_data(quick: bool) -> tuple[str, Split]:
    """California housing (4000 test rows), or cpu_act (2000) with ``--quick``; features
    standardized on the training rows."""
    name, (X, y) = (
        ("cpu_act", load_cpu_act(return_X_y=True))
        if quick
        else ("California housing", load_california_housing(return_X_y=True))
    )
    n_test = 2000 if quick else 4000
    X_fit, X_test, y_fit, y_test = train_test_split(X, y, test_size=n_test, random_state=0)
    mean, std = X_fit.mean(axis=0), X_fit.std(axis=0)
    std = np.where(std > 0, std, 1.0)
    return name, ((X_fit - mean) / std, y_fit, (X_test - mean) / std, y_test)


def _subset(split: Split, n: int) -> tuple[np.ndarray, np.ndarray]:
    X, y = split[0], split[1]
    order = np.random.default_rng(0).permutation(X.shape[0])[:n]
    return X[order], y[order]


def classification_row(split: Split, n: int, m: int) -> dict[str, Any]:
    """SVC(), the search and its model refitted once, at ``n`` training rows."""
    X, y = _subset(split, n)
    X_test, y_test = split[2], split[3]
    row: dict[str, Any] = {"n": X.shape[0], "m": m}
    seconds, svc = timed(lambda: SVC().fit(X, y))
    row["SVC() s"], row["SVC() acc"] = seconds, svc.score(X_test, y_test)
    nystroem = Nystroem(landmarks="kmeans", n_components=m, random_state=0)
    seconds, search = timed(lambda: FeatureRidgeClassifierCV(nystroem).fit(X, y))
    row["search s"], row["search acc"] = seconds, search.score(X_test, y_test)
    row["gamma"], row["alpha"] = search.gamma_, search.alpha_
    once = FeatureRidgeClassifier(nystroem.set_params(gamma=search.gamma_), alpha=search.alpha_)
    seconds, once = timed(lambda: once.fit(X, y))
    row["one fit s"], row["one fit acc"] = seconds, once.score(X_test, y_test)
    return row


def regression_row(split: Split, n: int, m: int) -> dict[str, Any]:
    """KernelRidge and NystroemKernelRidge with the search's parameters, and the search."""
    X, y = _subset(split, n)
    X_test, y_test = split[2], split[3]
    centre = float(y.mean())
    row: dict[str, Any] = {"n": X.shape[0], "m": m}
    nystroem = Nystroem(landmarks="kmeans", n_components=m, random_state=0)
    seconds, search = timed(lambda: FeatureRidgeCV(nystroem).fit(X, y))
    row["search s"], row["search R2"] = seconds, r2_score(y_test, search.predict(X_test))
    gamma, alpha = search.gamma_, search.alpha_
    row["gamma"], row["alpha"] = gamma, alpha
    exact = KernelRidge(kernel="rbf", gamma=gamma, alpha=alpha)
    seconds, exact = timed(lambda: exact.fit(X, y - centre))
    row["KernelRidge s"] = seconds
    row["KernelRidge R2"] = r2_score(y_test, exact.predict(X_test) + centre)
    model = NystroemKernelRidge(
        gamma=gamma, alpha=alpha, n_components=m, landmarks="kmeans", random_state=0
    )
    seconds, model = timed(lambda: model.fit(X, y - centre))
    row["Nystroem KRR s"] = seconds
    row["Nystroem KRR R2"] = r2_score(y_test, model.predict(X_test) + centre)
    return row


def table(title: str, rows: list[dict[str, Any]]) -> str:
    """A markdown table of ``rows`` (times in seconds, scores to three digits)."""
    keys = [k for k in rows[0] if k not in ("gamma", "alpha")]
    out = [f"\n### {title}\n", "| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    for row in rows:
        cells = []
        for k in keys:
            value = row[k]
            if k.endswith(" s"):
                cells.append(f"{value:.2f}")
            elif isinstance(value, float):
                cells.append(f"{value:.3f}")
            else:
                cells.append(str(value))
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="bundled sets, small n")
    parser.add_argument("--data-home", type=Path, default=DEFAULT_DATA_HOME)
    parser.add_argument("--m", type=int, default=1024, help="landmarks (at most n // 2)")
    parser.add_argument("--n-usps", type=int, nargs="+", default=[1000, 2000, 4000, 7291])
    parser.add_argument("--n-regression", type=int, nargs="+", default=[2000, 5000, 10000, 16000])
    parser.add_argument("--json", type=Path, default=None, help="write the rows here")
    args = parser.parse_args()
    n_class = [300, 1200] if args.quick else args.n_usps
    n_regression = [500, 2000] if args.quick else args.n_regression
    m = 128 if args.quick else args.m
    print(machine_line(), flush=True)
    results: dict[str, list[dict[str, Any]]] = {}
    for (name, split), sizes, row, versus in (
        (classification_data(args.quick, args.data_home), n_class, classification_row,
         "SVC() against FeatureRidgeClassifierCV (accuracy)"),
        (regression_data(args.quick), n_regression, regression_row,
         "KernelRidge against FeatureRidgeCV (R²)"),
    ):  # fmt: skip
        results[name] = []
        for n in sizes:
            results[name].append(row(split, n, min(m, n // 2)))
            print(f"{name} n={n} done", file=sys.stderr, flush=True)
        print(table(f"{name}: {versus}", results[name]), flush=True)
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
