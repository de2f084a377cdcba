"""How much choosing the landmarks from all the rows leaks into NystroemKernelRidgeCV's K-fold.

:class:`kernelmaps.NystroemKernelRidgeCV` chooses its landmarks once, from every row, and
scores the splits on the features of those landmarks: a held-out row can be a landmark
(``"uniform"``) or have shaped the choice (``"rpcholesky"``).  The honest K-fold chooses
the landmarks of each split from its training rows only, at the cost of a map per split.
This script measures the difference on cpu_act (8192 x 21, bundled; features
standardized, target centred, the same for both):

0. ``gamma`` and ``alpha`` are tuned by ``NystroemKernelRidgeCV`` on other splits with
   other landmarks (another seed): comparing at the parameters a search chose on the
   same scores would add its selection bias to the leakage;
1. ``NystroemKernelRidgeCV(n_components=m, landmarks=..., gammas=[gamma], alphas=...,
   cv=KFold(5))`` gives the R² of every split at the penalties ``alpha 10^k``,
   ``k = -2 .. 2``;
2. at that ``gamma``, brute force: for each split, the search's map (the Cholesky
   normalized Nyström features of ``kernelmaps.models._search._nested_nystroem``, so that only
   the landmarks differ) with ``m`` landmarks chosen by the same method from the training
   rows, ridge on its features (no intercept, the same penalties), R² on the held-out
   rows;
3. a check: the brute force with the public ``Nystroem(landmarks=<the search's
   landmarks>)`` (symmetric normalization) gives the search's scores, to the rounding
   ``eps cond(K_mm)`` of the two normalizations (printed beside: the largest over the
   seeds; ``cond(K_mm)`` reaches 1e13 at the tuned ``gamma``).

Reported per method, over the seeds (each a new split and new landmarks): the mean R² of
both at the chosen penalty, their difference (all rows minus per split) with its
standard error over the seeds, the largest mean difference over the five penalties, and
the spread of the R² between the splits, for scale.  Times (``time.perf_counter``) of
the search at one ``gamma`` and of the brute force are printed beside.

Run from the repository root::

    python benchmarks/nystroem_cv_leakage.py              # m = 256, 5 seeds (~ a minute)
    python benchmarks/nystroem_cv_leakage.py --quick      # a smoke test (seconds)
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.metrics import r2_score
from sklearn.model_selection import KFold
from sklearn.preprocessing import StandardScaler

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import machine_line

from kernelmaps import Nystroem, NystroemKernelRidgeCV
from kernelmaps.datasets import load_cpu_act
from kernelmaps.kernels import Gaussian
from kernelmaps.models._search._nested_nystroem import NestedNystroem


def _ridge_r2(Z_train, y_train, Z_test, y_test, alphas) -> np.ndarray:
    """R² on the held-out rows of ridge without intercept on the features, each alpha."""
    G, b = Z_train.T @ Z_train, Z_train.T @ y_train
    scores = []
    for alpha in alphas:
        w = np.linalg.solve(G + alpha * np.eye(G.shape[0]), b)
        scores.append(r2_score(y_test, Z_test @ w))
    return np.array(scores)


def _brute_force(X, y, splitter, alphas, make_map) -> np.ndarray:
    """``(n_splits, n_alphas)`` R² of the maps ``make_map(k)`` fitted on the training
    rows of each split ``k``."""
    out = []
    for k, (train, test) in enumerate(splitter.split(X)):
        feature_map = make_map(k).fit(X[train])
        out.append(
            _ridge_r2(
                feature_map.transform(X[train]),
                y[train],
                feature_map.transform(X[test]),
                y[test],
                alphas,
            )
        )
    return np.array(out)


def run_one(X, y, method: str, m: int, seed: int, n_splits: int) -> dict:
    """One seed: ``gamma`` and ``alpha`` tuned on other splits and landmarks (no
    selection bias in the comparison), then both K-folds at that ``gamma`` on the same
    splits, at the penalties ``alpha 10^k``, ``k = -2 .. 2``."""
    tuned = NystroemKernelRidgeCV(
        n_components=m,
        landmarks=method,
        cv=KFold(n_splits, shuffle=True, random_state=1000 + seed),
        random_state=1000 + seed,
    ).fit(X, y)
    gamma, alphas = tuned.gamma_, tuned.alpha_ * 10.0 ** np.arange(-2.0, 3.0)
    splitter = KFold(n_splits, shuffle=True, random_state=seed)
    start = time.perf_counter()
    search = NystroemKernelRidgeCV(
        n_components=m,
        landmarks=method,
        gammas=[gamma],
        alphas=alphas,
        cv=splitter,
        random_state=seed,
    ).fit(X, y)
    search_time = time.perf_counter() - start
    results = search.cv_results_
    searched = np.array([results[f"split{k}_test_score"] for k in range(n_splits)])
    same = _brute_force(
        X, y, splitter, alphas, lambda k: Nystroem(gamma=gamma, landmarks=search.landmarks_)
    )
    j = 2  # the tuned alpha
    check = float(np.abs(same - searched)[:, j].max())
    rounding = np.finfo(np.float64).eps * np.linalg.cond(
        Gaussian(gamma=gamma)(*[search.landmarks_] * 2)
    )
    start = time.perf_counter()
    honest = _brute_force(
        X,
        y,
        splitter,
        alphas,
        lambda k: NestedNystroem(
            gamma=gamma, n_components=m, landmarks=method, random_state=100 * seed + k
        ),
    )
    honest_time = time.perf_counter() - start
    return {
        "all": searched[:, j].mean(),
        "split": honest[:, j].mean(),
        "diff": (searched - honest)[:, j].mean(),
        "max_diff": np.abs((searched - honest).mean(axis=0)).max(),
        "spread": searched[:, j].std(),
        "check": check,
        "rounding": float(rounding),
        "search_s": search_time,
        "brute_s": honest_time,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--m", type=int, default=256)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--splits", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="2000 rows, m = 32, 1 seed")
    args = parser.parse_args(argv)
    X, y = load_cpu_act(return_X_y=True)
    X = StandardScaler().fit_transform(np.asarray(X, dtype=np.float64))
    y = np.asarray(y, dtype=np.float64)
    if args.quick:
        X, y, args.m, args.seeds = X[:2000], y[:2000], 32, 1
    y = y - y.mean()
    print(machine_line())
    print(f"cpu_act {X.shape}, m = {args.m}, {args.splits}-fold, {args.seeds} seeds\n")
    print(
        "| landmarks | R² (all rows) | R² (per split) | difference ± s.e. | max |diff| "
        "over alphas | spread between splits | check | eps cond(K_mm) | search s | "
        "brute force s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for method in ("uniform", "rpcholesky"):
        rows = [run_one(X, y, method, args.m, seed, args.splits) for seed in range(args.seeds)]
        mean = {key: float(np.mean([r[key] for r in rows])) for key in rows[0]}
        diffs = np.array([r["diff"] for r in rows])
        se = diffs.std(ddof=1) / np.sqrt(len(diffs)) if len(diffs) > 1 else float("nan")
        print(
            f"| {method} | {mean['all']:.4f} | {mean['split']:.4f} | "
            f"{mean['diff']:+.4f} ± {se:.4f} | {mean['max_diff']:.4f} | "
            f"{mean['spread']:.4f} | {max(r['check'] for r in rows):.1e} | "
            f"{max(r['rounding'] for r in rows):.1e} | "
            f"{mean['search_s']:.1f} | {mean['brute_s']:.1f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
