"""The number of features the theory asks for against the number the CV curve needed.

For each data set (the bundled California housing and cpu_act, house_16H and the Million
Song subset from the data home), on the training rows (standardised, at most
``--max-train`` of them, seeded subsample):

1. ``FeatureRidgeCV(RandomFourierFeatures(n_components=D_max), n_components_grid=[64, ...,
   D_max], cv=5)`` (gamma and alpha searched): the CV curve's best score at each D and the
   D it *needed*: the smallest D whose best score is within one fold-to-fold standard
   error (``std_test_score / sqrt(5)`` of the best candidate) of the best score overall;
2. ``feature_budget`` at the chosen gamma and alpha (``epsilon`` 0.05, ``delta`` 0.05): the
   statistical dimension, the D of each bound and the D measured for a 5 % relative
   spectral error on a sample.

Usage::

    python benchmarks/budget_vs_cv.py [--sets california_housing cpu_act ...]
        [--max-train 8000] [--D 2048] [--data-home ../shared/data] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.preprocessing import StandardScaler

from kernelmaps import FeatureRidgeCV, RandomFourierFeatures, feature_budget
from kernelmaps.datasets import load_dataset

SETS = ("california_housing", "cpu_act", "house_16h", "msd_subset")


def _training_rows(name: str, data_home: str, max_train: int) -> tuple[np.ndarray, np.ndarray]:
    ds = load_dataset(name, data_home=data_home)
    X = ds.X.toarray() if hasattr(ds.X, "toarray") else np.asarray(ds.X, dtype=np.float64)
    y = np.asarray(ds.y, dtype=np.float64)
    rng = np.random.default_rng(0)
    keep = rng.permutation(X.shape[0])[: max_train or None]
    return StandardScaler().fit_transform(X[keep]), y[keep]


def _needed(search: Any) -> tuple[dict[int, float], int]:
    """The best score at each D, and the smallest D within one standard error of the best."""
    results = search.cv_results_
    best_by_D: dict[int, float] = {}
    for p, m in zip(results["params"], results["mean_test_score"], strict=True):
        best_by_D[p["n_components"]] = max(best_by_D.get(p["n_components"], -math.inf), m)
    se = results["std_test_score"][search.best_index_] / math.sqrt(search.n_splits_)
    needed = min(D for D, s in best_by_D.items() if s >= search.best_score_ - se)
    return dict(sorted(best_by_D.items())), needed


def run_set(name: str, args: argparse.Namespace) -> dict[str, Any]:
    X, y = _training_rows(name, args.data_home, args.max_train)
    grid = [D for D in (64, 128, 256, 512, 1024, 2048, 4096) if D <= args.D]
    t0 = time.perf_counter()
    search = FeatureRidgeCV(
        RandomFourierFeatures(n_components=args.D, random_state=0), n_components_grid=grid, cv=5
    ).fit(X, y)
    t_search = time.perf_counter() - t0
    curve, needed = _needed(search)
    t0 = time.perf_counter()
    budget = feature_budget(
        X, gamma=search.gamma_, alpha=search.alpha_, epsilon=0.05, delta=0.05, random_state=0
    )
    t_budget = time.perf_counter() - t0
    return {
        "set": name,
        "n": int(X.shape[0]),
        "gamma": search.gamma_,
        "alpha": search.alpha_,
        "best_r2": search.best_score_,
        "curve": curve,
        "cv_needed_D": needed,
        "statistical_dimension": budget.statistical_dimension,
        "budget": [
            {
                "method": r.method,
                "bound": r.bound,
                "D_bound": r.bound_features,
                "D_measured": r.measured_features,
            }
            for r in budget.rows
        ],
        "seconds_search": t_search,
        "seconds_budget": t_budget,
    }


def _print(result: dict[str, Any]) -> None:
    print(
        f"== {result['set']}: n={result['n']}, gamma={result['gamma']:.3g}, "
        f"alpha={result['alpha']:.3g}, 5-fold R2={result['best_r2']:.4f} "
        f"(search {result['seconds_search']:.1f} s, budget {result['seconds_budget']:.1f} s)"
    )
    print(
        "  CV curve (best R2 per D): "
        + ", ".join(f"{D}: {s:.4f}" for D, s in result["curve"].items())
    )
    print(f"  D the CV curve needed (within one standard error): {result['cv_needed_D']}")
    print(f"  statistical dimension s_alpha = {result['statistical_dimension']:.1f}")
    for row in result["budget"]:
        print(
            f"  {row['method']:<22} {row['bound']:<36} bound {row['D_bound']!s:>12}  "
            f"measured {row['D_measured']!s:>6}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", nargs="+", default=list(SETS), choices=SETS)
    parser.add_argument("--max-train", type=int, default=8000, help="0: every row")
    parser.add_argument("--D", type=int, default=2048)
    parser.add_argument("--data-home", default=str(Path(__file__).parents[2] / "shared" / "data"))
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    results = []
    for name in args.sets:
        result = run_set(name, args)
        _print(result)
        results.append(result)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, default=float))


if __name__ == "__main__":
    main()
