"""Tuning gamma and alpha: FeatureRidgeCV's one-pass search against GridSearchCV.

For each data set -- California housing and cpu_act (bundled), house_16H and the Million
Song subset (data home, ``--data-home``, read with :func:`kernelmaps.datasets.load_dataset`)
-- a held-out split (``--test-size`` 20 %, seed 0; training rows capped at
``--max-train`` by a seeded subsample, the test rows kept whole), features standardized
on the training rows (``StandardScaler``), targets as they are.

The grid: ``--n-gammas`` bandwidths log-spaced two decades either side of
``gamma0 = gamma_from_data(X_train, "median")`` x ``--n-alphas`` penalties
``alpha = m * lambda``, ``lambda`` log-spaced over ``[--lambda-min, --lambda-max]`` and
``m`` the training rows of one fold (``4/5`` of the training rows): ``lambda`` is on the
scale of the mean squared error, ``alpha`` on the sum-of-squares scale of both
:class:`kernelmaps.FeatureRidge` and ``sklearn.linear_model.Ridge``; the eigenvalues of
``Z^T Z / n`` of random Fourier features lie in ``(0, 1]`` (their trace is about 1).
Splits: ``KFold(5)`` unshuffled (the training rows are already in random order), the
same for every method.  One number of features ``D`` (``--D``).

Methods (``RFF`` = ``kernelmaps.RandomFourierFeatures(n_components=D, random_state=0)``):

a. ``GridSearchCV(make_pipeline(RFF, Ridge()), {gamma, alpha}, cv=KFold(5))``;
b. ``GridSearchCV(FeatureRidge(RFF), {feature_map__gamma, alpha}, cv=KFold(5))``;
c. ``FeatureRidgeCV(RFF, gammas=grid, alphas=grid, cv=KFold(5))``: exact K-fold from
   per-fold statistics; its ``mean_test_score`` should equal b's to rounding (the max
   absolute difference over the grid is reported, and a's too);
d. ``FeatureRidgeCV(RFF, gammas="auto", alphas="auto", cv=None)``: the library's default
   search, criterion ``"loo"`` and ``"gcv"`` (scores are minus the leave-one-out / GCV
   mean squared error, not R^2).

Reported for each: seconds (``time.perf_counter``; the GridSearchCVs once, the
FeatureRidgeCVs the median of ``--repeats`` runs; every code path warmed up first on a
small slice, so Numba compilation is not timed; GridSearchCV's time includes its refit,
FeatureRidgeCV has none), speed-up ``t(a) / t`` and ``t(b) / t``, the chosen
``(gamma, alpha)``, the CV score, the R^2 on the test rows of the final model, and for
(a) the fold-to-fold standard error of the best candidate ``std_test_score / sqrt(5)``:
the column ``ok`` says whether a method's test R^2 is at least (a)'s minus that error.
GridSearchCV runs with ``n_jobs=None`` (one process; BLAS uses the cores).

Then (``--grid-set``, default California housing) ``FeatureRidgeCV`` with
``n_components_grid=[D/8, D/4, D/2, D]``, the same gammas, alphas and splits: the chosen
``D`` and its time against c's.

``--large``: the cost at ``n = 10^6`` rows, ``D = 4096`` (``--large-D``), extrapolated --
nothing is run at that size.  Data: ``x ~ N(0, I_8)``, ``y = sum_j sin(x_j) + 0.1 e``.

* GridSearchCV (b): a ``FeatureRidge`` fit timed (best of 2) at ``n2 = 4 n1`` rows
  (``n1 = --large-fit-n``) and scaled by ``n``: ``650 t(n2) (4/5 10^6) / n2 +
  t(n2) 10^6 / n2`` (130 candidates x 5 splits on 4/5 of the rows, then the refit;
  scoring the held-out rows is left out).  Scaling the whole fit also scales its
  ``D^3`` solve, which does not grow with ``n``; so the fit is also timed at ``n1`` and
  ``t(n) = a + b n`` through the two points gives a second estimate with ``a`` kept
  fixed.
* FeatureRidgeCV: one fit on ``--large-n`` rows (default 10^5), one gamma, 13 alphas,
  ``cv=5``.  The time spent scoring the statistics (merging the folds, one
  eigendecomposition per split, the per-alpha errors: independent of ``n``) is timed
  separately by wrapping the search's scoring step; the rest (the pass over the rows,
  ``O(n D^2)``, and the final solve) is scaled linearly in ``n``:
  ``T(10^6) = (T - T_eig) * 10^6 / n + T_eig`` per gamma, times the number of gammas.

``--halving``: the default search (successive halving over rows and features) against the
exhaustive one (``search="exhaustive"``), per data set and ``D`` (``--halving-D``, default
1024).  Data: the sets above and the UCI regression sets of the data home (``bike``,
``elevators``, ``pol``, ``kin40k``, ``protein``, ``keggdirected``, ``pumadyn32nm``), each
split by the same seeded 80/20 ``train_test_split`` (seed 0; not the suite's test masks),
every training row kept (``--halving-max-train`` caps them), features standardized; and
``--generated n:D[:level]``: ``n`` rows of ``x ~ N(0, I_8)``, ``y = sum_j sin(x_j) + 0.1 e``
(seed 0) with 10^4 test rows (seed 1).  ``RFF`` as above; measured, in this order in one
process (``--halving-repeats`` rounds; every code path first run once on 2000 generated
rows, so Numba compilation is not timed):

* ``t_default``: ``FeatureRidgeCV(RFF)`` (halving, ``gammas="auto"``, ``alphas="auto"``,
  ``criterion="loo"``), its fit;
* ``t_fit``: one plain ``FeatureRidge(RFF(gamma), alpha)`` fit at the default's choice, on
  all training rows, the best of 2 (one taken right after the default search, one after
  the exhaustive search); ``t_fit45`` the same on the first 4/5 of the rows (``alpha``
  scaled by 4/5);
* ``t_exhaustive``: ``FeatureRidgeCV(RFF, search="exhaustive")``, between the two fits;
* the 650-fit grid (10 gamma x 13 alpha x ``KFold(5)`` and the refit), estimated as
  ``650 t_fit45 + t_fit`` (scoring the held-out folds left out);
* one bandwidth's cost ``t_candidate``: a ``FeatureRidge(RFF(gamma), alphas=13 values)``
  fit (its own exact leave-one-out over the penalties; two passes and one
  eigendecomposition, as one bandwidth of the searches costs);
* ``GridSearchCV(FeatureRidge(RFF, alphas=13 values), {"feature_map__gamma": 9 values},
  cv=KFold(3))`` (9 bandwidths two decades either side of the median heuristic, the
  penalties ``lambda`` times the rows of a fold's training part), run where its estimate
  ``t_candidate (9 x 3 x 2/3 + 1)`` is within ``--gs-budget`` seconds, else that estimate.

Where the exhaustive search is not run (``D`` above ``--exhaustive-up-to-D``, generated
data: level ``estimate``), its time is estimated as ``k t_candidate``, ``k`` the bandwidths
it scores on the same data, counted on a run at ``D = 256`` on at most 10^4 rows; the
tables mark estimates with ``~`` (and the CSV has ``t_exhaustive_est`` beside the measured
time where both exist, a check of the estimate).  Level ``fit``: the default search and one
plain fit only, ``t_fit45 = 0.8 t_fit``.  Reported: times in units of ``t_fit`` ("fits",
goal at most 8 for the default), the full passes the default's rungs add up to (each
bandwidth scored at a rung costs its fidelity ``(n_r / n) (D_r / D)^2``), the ratios of
the exhaustive search, the grid (goal at least 50) and GridSearchCV (goal at least 3) to
the default; the held-out RMSE of the default, the exhaustive search and GridSearchCV,
their choices, and the standard error of the exhaustive search's RMSE from 1000 bootstrap
resamples of its test residuals (seed 0): ``ok`` when the default's RMSE is at most the
exhaustive's plus the larger of 1 % and that error.  Tables (Markdown) and rows (CSV) are
rewritten after each case to ``docs/results/tuning/halving.{md,csv}`` (``--halving-out``);
``--halving-from CSV ...`` renders the tables of rows written before (several runs in one).

Machine note: timings on a shared machine are noisy; read the ratios, not the seconds.

Usage::

    python benchmarks/tuning.py [--quick] [--D 256] [--max-train 8000] [--large]
        [--data-home ../shared/data] [--sets california_housing cpu_act ...] [--json FILE]
    python benchmarks/tuning.py --halving [--quick] [--halving-D 1024 4096]
        [--generated 100000:1024 1000000:1024:fit] [--sets ...] [--halving-out STEM]
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from _harness import machine_line, timed
from sklearn.base import clone
from sklearn.linear_model import Ridge
from sklearn.metrics import r2_score
from sklearn.model_selection import GridSearchCV, KFold, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from kernelmaps import FeatureRidge, FeatureRidgeCV, RandomFourierFeatures
from kernelmaps.bandwidth import gamma_from_data
from kernelmaps.datasets import load_dataset

DEFAULT_DATA_HOME = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
SETS = ("california_housing", "cpu_act", "house_16h", "msd_subset")
N_SPLITS = 5


# -- data ------------------------------------------------------------------------------


def load_split(
    name: str, home: Path, test_size: float, max_train: int | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    ds = load_dataset(name, data_home=home)
    X, y = np.asarray(ds.X, dtype=np.float64), np.asarray(ds.y, dtype=np.float64)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=test_size, random_state=0)
    if max_train is not None and X_tr.shape[0] > max_train:
        keep = np.sort(np.random.default_rng(1).choice(X_tr.shape[0], max_train, replace=False))
        X_tr, y_tr = X_tr[keep], y_tr[keep]
    scaler = StandardScaler().fit(X_tr)
    return scaler.transform(X_tr), y_tr, scaler.transform(X_te), y_te


def grids(X: np.ndarray, args: argparse.Namespace) -> tuple[float, np.ndarray, np.ndarray]:
    gamma0 = gamma_from_data(X, "median")
    gammas = gamma0 * np.logspace(-2.0, 2.0, args.n_gammas)
    m = X.shape[0] * (N_SPLITS - 1) // N_SPLITS
    return gamma0, gammas, m * lambdas(args)


def lambdas(args: argparse.Namespace) -> np.ndarray:
    """The penalties on the mean-squared-error scale."""
    return np.logspace(math.log10(args.lambda_min), math.log10(args.lambda_max), args.n_alphas)


# -- methods ---------------------------------------------------------------------------


def rff(D: int) -> RandomFourierFeatures:
    return RandomFourierFeatures(n_components=D, random_state=0)


def make_methods(D: int, gammas: np.ndarray, alphas: np.ndarray) -> dict[str, Callable[[], Any]]:
    """Each method as a maker of an unfitted estimator."""
    cv = KFold(N_SPLITS)
    return {
        "a GridSearchCV(RFF+Ridge)": lambda: GridSearchCV(
            make_pipeline(rff(D), Ridge()),
            {"randomfourierfeatures__gamma": list(gammas), "ridge__alpha": list(alphas)},
            cv=cv,
        ),
        "b GridSearchCV(FeatureRidge)": lambda: GridSearchCV(
            FeatureRidge(rff(D)), {"feature_map__gamma": list(gammas), "alpha": list(alphas)}, cv=cv
        ),
        "c FeatureRidgeCV(grid, KFold5)": lambda: FeatureRidgeCV(
            rff(D), gammas=gammas, alphas=alphas, cv=cv
        ),
        "d FeatureRidgeCV(auto, loo)": lambda: FeatureRidgeCV(
            rff(D), gammas="auto", alphas="auto", cv=None, criterion="loo"
        ),
        "d FeatureRidgeCV(auto, gcv)": lambda: FeatureRidgeCV(
            rff(D), gammas="auto", alphas="auto", cv=None, criterion="gcv"
        ),
    }


def chosen(model: Any) -> tuple[float, float]:
    p = model.best_params_
    if "randomfourierfeatures__gamma" in p:
        return p["randomfourierfeatures__gamma"], p["ridge__alpha"]
    if "feature_map__gamma" in p:
        return p["feature_map__gamma"], p["alpha"]
    return p["gamma"], p["alpha"]


def score_table(model: Any) -> dict[tuple[float, float], float]:
    """``{(gamma, alpha): mean_test_score}`` of a fitted search."""
    res = model.cv_results_
    return {
        tuple(float(v) for v in _gamma_alpha(p)): float(s)  # type: ignore[misc]
        for p, s in zip(res["params"], res["mean_test_score"], strict=True)
    }


def _gamma_alpha(p: dict[str, Any]) -> tuple[Any, Any]:
    g = p.get("randomfourierfeatures__gamma", p.get("feature_map__gamma", p.get("gamma")))
    a = p.get("ridge__alpha", p.get("alpha"))
    return g, a


def max_abs_diff(t1: dict, t2: dict) -> tuple[float, int]:
    """Max |difference| over the candidates of ``t1`` found in ``t2`` (keys matched to
    relative 1e-12), and how many were matched."""
    keys2 = np.array(list(t2.keys()))
    vals2 = np.array(list(t2.values()))
    worst, matched = 0.0, 0
    for (g, a), s in t1.items():
        same = np.isclose(keys2, [g, a], rtol=1e-12, atol=0).all(axis=1)
        hit = np.flatnonzero(same)
        if hit.size:
            matched += 1
            worst = max(worst, abs(s - vals2[hit[0]]))
    return worst, matched


def warm_up(X: np.ndarray, y: np.ndarray, D: int) -> None:
    """Every code path once on a small slice (Numba compilation, first imports)."""
    Xs, ys = X[:300], y[:300]
    g = gamma_from_data(Xs, "median")
    for make in make_methods(D, np.array([g, 2 * g]), np.array([1.0, 10.0])).values():
        make().fit(Xs, ys).predict(Xs[:10])
    widths = [D // 2, D]
    FeatureRidgeCV(rff(D), gammas=[g], alphas=[1.0], n_components_grid=widths, cv=KFold(5)).fit(
        Xs, ys
    )


def run_set(name: str, data: tuple[np.ndarray, ...], args: argparse.Namespace) -> dict[str, Any]:
    X, y, Xt, yt = data
    gamma0, gammas, alphas = grids(X, args)
    print(
        f"\n== {name}: n_train={X.shape[0]}, n_test={Xt.shape[0]}, d={X.shape[1]}, D={args.D}, "
        f"gamma0={gamma0:.4g}, {len(gammas)} gammas x {len(alphas)} alphas x {N_SPLITS} folds, "
        f"alpha in [{alphas[0]:.3g}, {alphas[-1]:.3g}] (load {os.getloadavg()[0]:.1f})",
        flush=True,
    )
    out: dict[str, Any] = {
        "data": name,
        "n_train": X.shape[0],
        "n_test": Xt.shape[0],
        "d": X.shape[1],
        "D": args.D,
        "gamma0": gamma0,
        "gammas": gammas.tolist(),
        "alphas": alphas.tolist(),
        "methods": {},
    }
    tables: dict[str, dict] = {}
    for label, make in make_methods(args.D, gammas, alphas).items():
        repeats = 1 if label.startswith(("a", "b")) else args.repeats
        times, model = [], None
        for _ in range(repeats):
            seconds, model = timed(partial(make().fit, X, y))
            times.append(seconds)
        assert model is not None
        g, a = chosen(model)
        row: dict[str, Any] = {
            "seconds": statistics.median(times),
            "times": times,
            "gamma": float(g),
            "alpha": float(a),
            "cv_score": float(model.best_score_),
            "test_r2": float(r2_score(yt, model.predict(Xt))),
            "scoring": getattr(model, "scoring_", "r2"),
        }
        res = model.cv_results_
        row["cv_se"] = float(res["std_test_score"][model.best_index_] / math.sqrt(N_SPLITS))
        row["gamma_at_edge"] = bool(label[0] in "abc" and g in (gammas[0], gammas[-1]))
        row["alpha_at_edge"] = bool(label[0] in "abc" and a in (alphas[0], alphas[-1]))
        if label[0] in "abc":
            tables[label[0]] = score_table(model)
        out["methods"][label] = row
        print(
            f"  {label:32s} {row['seconds']:8.2f} s  gamma {row['gamma']:.3g}  alpha "
            f"{row['alpha']:.3g}  cv {row['cv_score']:.4g}  test R2 {row['test_r2']:.4f}",
            flush=True,
        )
    out["max_abs_diff_c_b"], out["matched_c_b"] = max_abs_diff(tables["c"], tables["b"])
    out["max_abs_diff_a_b"], out["matched_a_b"] = max_abs_diff(tables["a"], tables["b"])
    print(
        f"  max |mean_test_score c - b| = {out['max_abs_diff_c_b']:.2e} over "
        f"{out['matched_c_b']} candidates; |a - b| = {out['max_abs_diff_a_b']:.2e}",
        flush=True,
    )
    return out


def run_width_grid(
    name: str, data: tuple[np.ndarray, ...], args: argparse.Namespace, single: dict[str, Any]
) -> dict[str, Any]:
    X, y, Xt, yt = data
    _, gammas, alphas = grids(X, args)
    D = args.D
    widths = [D // 8, D // 4, D // 2, D]
    times, model = [], None
    for _ in range(args.repeats):
        search = FeatureRidgeCV(
            rff(D), gammas=gammas, alphas=alphas, n_components_grid=widths, cv=KFold(N_SPLITS)
        )
        seconds, model = timed(partial(search.fit, X, y))
        times.append(seconds)
    assert model is not None
    c = single["methods"]["c FeatureRidgeCV(grid, KFold5)"]
    out = {
        "data": name,
        "n_components_grid": widths,
        "seconds": statistics.median(times),
        "times": times,
        "single_D_seconds": c["seconds"],
        "n_components": int(model.n_components_),
        "gamma": float(model.gamma_),
        "alpha": float(model.alpha_),
        "cv_score": float(model.best_score_),
        "test_r2": float(r2_score(yt, model.predict(Xt))),
        "single_D_cv_score": c["cv_score"],
        "single_D_test_r2": c["test_r2"],
    }
    print(
        f"\n  n_components_grid={widths} on {name}: {out['seconds']:.2f} s (single D: "
        f"{out['single_D_seconds']:.2f} s), chosen D={out['n_components']}, cv "
        f"{out['cv_score']:.4f}, test R2 {out['test_r2']:.4f}",
        flush=True,
    )
    return out


# -- large -----------------------------------------------------------------------------


def synthetic(n: int, d: int = 8, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    return X, np.sin(X).sum(axis=1) + 0.1 * rng.standard_normal(n)


def run_large(args: argparse.Namespace) -> dict[str, Any]:
    from kernelmaps.models._search import _batches as _ridge_search

    D, N, n_grid = args.large_D, args.large_target_n, args.n_gammas * args.n_alphas * N_SPLITS
    n1 = args.large_fit_n
    print(
        f"\n== large: extrapolation to n={N:,}, D={D}, d=8 ({args.n_gammas} gammas x "
        f"{args.n_alphas} alphas x {N_SPLITS} folds = {n_grid} fits) (load "
        f"{os.getloadavg()[0]:.1f})",
        flush=True,
    )
    X, y = synthetic(max(4 * n1, args.large_n))
    gamma = gamma_from_data(X[:5000], "median")
    lam = 1e-4
    # (b): FeatureRidge fits at n1 and 4 n1 rows (best of 2 each), after an untimed one.
    FeatureRidge(rff(D).set_params(gamma=gamma), alpha=lam * 1000).fit(X[:1000], y[:1000])
    n2 = 4 * n1
    fit_t = {}
    for n in (n1, n2):
        fit_t[n] = min(
            timed(
                partial(
                    FeatureRidge(rff(D).set_params(gamma=gamma), alpha=lam * n).fit, X[:n], y[:n]
                )
            )[0]
            for _ in range(2)
        )
        print(f"  FeatureRidge fit, n={n}: {fit_t[n]:.2f} s (best of 2)", flush=True)
    slope = max((fit_t[n2] - fit_t[n1]) / (n2 - n1), 0.0)
    const = max(fit_t[n1] - slope * n1, 0.0)
    m = N * (N_SPLITS - 1) // N_SPLITS
    gs_linear = n_grid * (const + slope * m) + (const + slope * N)
    gs_scaled = fit_t[n2] * (n_grid * m + N) / n2
    # FeatureRidgeCV: one gamma, cv=5, the scoring step (n-independent) timed apart.
    spent: list[float] = []
    original = _ridge_search.RidgeSearch._score

    def timed_score(self: Any, *a: Any, **k: Any) -> Any:
        start = time.perf_counter()
        try:
            return original(self, *a, **k)
        finally:
            spent.append(time.perf_counter() - start)

    n = args.large_n
    alphas = (n * (N_SPLITS - 1) // N_SPLITS) * lambdas(args)
    FeatureRidgeCV(rff(D), gammas=[gamma], alphas=alphas, cv=N_SPLITS).fit(X[:1000], y[:1000])
    _ridge_search.RidgeSearch._score = timed_score  # type: ignore[method-assign]
    try:
        search = FeatureRidgeCV(rff(D), gammas=[gamma], alphas=alphas, cv=N_SPLITS)
        total, _ = timed(partial(search.fit, X[:n], y[:n]))
    finally:
        _ridge_search.RidgeSearch._score = original  # type: ignore[method-assign]
    t_eig = sum(spent)
    per_gamma_N = (total - t_eig) * N / n + t_eig
    frcv_N = per_gamma_N * args.n_gammas
    out = {
        "D": D,
        "target_n": N,
        "fits": n_grid,
        "n_gammas": args.n_gammas,
        "feature_ridge_fit_seconds": {str(k): v for k, v in fit_t.items()},
        "fit_model": {"const_seconds": const, "seconds_per_row": slope},
        "gridsearch_estimate_seconds_linear": gs_linear,
        "gridsearch_estimate_seconds_scaled_by_n": gs_scaled,
        "frcv_n": n,
        "frcv_seconds_one_gamma": total,
        "frcv_scoring_seconds_one_gamma": t_eig,
        "frcv_pass_seconds_one_gamma": total - t_eig,
        "frcv_estimate_seconds_one_gamma": per_gamma_N,
        "frcv_estimate_seconds_grid": frcv_N,
    }
    print(
        f"  FeatureRidgeCV n={n}, one gamma, cv=5: {total:.2f} s, of which scoring "
        f"(fold merges, eigendecompositions, per-alpha errors) {t_eig:.2f} s",
        flush=True,
    )
    return out


# -- report ----------------------------------------------------------------------------


def print_table(results: list[dict[str, Any]]) -> None:
    print(
        "\n| data (n_train, D) | method | seconds | t(a)/t | t(b)/t | gamma | alpha | CV score "
        "| test R2 | ok |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        ms = r["methods"]
        a = ms["a GridSearchCV(RFF+Ridge)"]
        b = ms["b GridSearchCV(FeatureRidge)"]
        floor = a["test_r2"] - a["cv_se"]
        for label, row in ms.items():
            score = f"{row['cv_score']:.4g}"
            if row["scoring"] != "r2":
                score += f" ({row['scoring']})"
            if label.startswith("a"):
                score += f" +- {a['cv_se']:.2g} (SE)"
            edge = ("g" if row["gamma_at_edge"] else "") + ("a" if row["alpha_at_edge"] else "")
            edge = f" (edge {edge})" if edge else ""
            print(
                f"| {r['data']} ({r['n_train']}, {r['D']}) | {label} | {row['seconds']:.2f} | "
                f"{a['seconds'] / row['seconds']:.1f} | {b['seconds'] / row['seconds']:.1f} | "
                f"{row['gamma']:.3g} | {row['alpha']:.3g}{edge} | "
                f"{score} | {row['test_r2']:.4f} | {'yes' if row['test_r2'] >= floor else 'NO'} |"
            )
    print(
        "\nok: test R2 >= (a)'s test R2 minus (a)'s fold-to-fold standard error "
        "(std_test_score / sqrt(5)).  (edge g/a): the choice is at the end of the grid."
    )
    for r in results:
        print(
            f"{r['data']}: max |mean_test_score(c) - mean_test_score(b)| = "
            f"{r['max_abs_diff_c_b']:.2e} over {r['matched_c_b']} candidates "
            f"(a vs b: {r['max_abs_diff_a_b']:.2e})"
        )


def print_large(L: dict[str, Any]) -> None:
    f = L["feature_ridge_fit_seconds"]
    gs, gs_linear = (
        L["gridsearch_estimate_seconds_scaled_by_n"],
        L["gridsearch_estimate_seconds_linear"],
    )
    frcv = L["frcv_estimate_seconds_grid"]
    fit = L["fit_model"]
    print(f"\nLarge (n = {L['target_n']:,}, D = {L['D']}, d = 8), extrapolated:")
    print(
        f"  GridSearchCV(FeatureRidge): {L['fits']} fits on 4/5 n + 1 refit on n, each fit "
        f"scaled by n from the fit at n={max(f, key=int)} ({f[max(f, key=int)]:.2f} s): "
        f"{gs / 3600:.1f} h; with t(n) = {fit['const_seconds']:.2f} s + "
        f"{fit['seconds_per_row'] * 1e6:.1f} s per 10^6 rows (fits at "
        f"{', '.join(f'n={k}: {v:.2f} s' for k, v in f.items())}): {gs_linear / 3600:.1f} h"
    )
    print(
        f"  FeatureRidgeCV at n={L['frcv_n']:,}, one gamma, cv=5: "
        f"{L['frcv_seconds_one_gamma']:.1f} s "
        f"= pass and final solve {L['frcv_pass_seconds_one_gamma']:.1f} s (scaled by n) + "
        f"scoring {L['frcv_scoring_seconds_one_gamma']:.1f} s (independent of n) -> "
        f"{L['frcv_estimate_seconds_one_gamma']:.0f} s per gamma at n={L['target_n']:,}, "
        f"{frcv / 60:.1f} min for {L['n_gammas']} gammas"
    )
    print(
        f"  ratio GridSearchCV / FeatureRidgeCV at n={L['target_n']:,}: {gs / frcv:.0f}x "
        f"({gs_linear / frcv:.0f}x with the two-point fit model)"
    )


# -- the default search: successive halving against the exhaustive one -----------------

HALVING_SETS = (
    "california_housing",
    "cpu_act",
    "house_16h",
    "bike",
    "elevators",
    "pol",
    "kin40k",
    "protein",
    "keggdirected",
    "pumadyn32nm",
)
GRID_FITS = 650  # 10 gammas x 13 alphas x 5 folds
GS_GAMMAS, GS_FOLDS = 9, 3


def gs_grids(X: np.ndarray, args: argparse.Namespace) -> tuple[np.ndarray, np.ndarray]:
    """GridSearchCV's 9 bandwidths (two decades either side of the median heuristic) and
    13 penalties (``lambdas`` times the rows of one of its 3 folds' training parts)."""
    gammas = gamma_from_data(X, "median") * np.logspace(-2.0, 2.0, GS_GAMMAS)
    m = X.shape[0] * (GS_FOLDS - 1) // GS_FOLDS
    return gammas, m * lambdas(args)


def chosen_pair(model: Any) -> tuple[float, float]:
    """The chosen ``(gamma, alpha)`` of a FeatureRidgeCV or of GridSearchCV(FeatureRidge)."""
    if isinstance(model, GridSearchCV):
        best = model.best_estimator_
        return float(model.best_params_["feature_map__gamma"]), float(best.alpha_)
    return float(model.gamma_), float(model.alpha_)


def plain_fit_seconds(X: np.ndarray, y: np.ndarray, D: int, gamma: float, alpha: float) -> float:
    """Best of 2 plain ``FeatureRidge(RFF(gamma), alpha)`` fits on the rows given."""
    est = FeatureRidge(rff(D).set_params(gamma=gamma), alpha=alpha)
    return min(timed(partial(clone(est).fit, X, y))[0] for _ in range(2))


def rmse(model: Any, X: np.ndarray, y: np.ndarray) -> float:
    return float(np.sqrt(np.mean((model.predict(X) - y) ** 2)))


def kfold_rmse_se(X: np.ndarray, y: np.ndarray, D: int, gamma: float, alpha: float) -> float:
    """Fold-to-fold standard error of the RMSE of the choice ``(gamma, alpha)`` refitted
    under ``KFold(5)`` on the training rows (``alpha`` scaled by 4/5, the same penalty per
    row): ``std(fold RMSEs, ddof=1) / sqrt(5)``."""
    scores = []
    for fit_rows, test_rows in KFold(N_SPLITS).split(X):
        est = FeatureRidge(rff(D).set_params(gamma=gamma), alpha=alpha * len(fit_rows) / len(X))
        scores.append(rmse(est.fit(X[fit_rows], y[fit_rows]), X[test_rows], y[test_rows]))
    return float(np.std(scores, ddof=1) / math.sqrt(N_SPLITS))


def n_gammas_scored(model: FeatureRidgeCV) -> int:
    """The bandwidths a search scored at full size (for the exhaustive: all of them)."""
    res = model.cv_results_
    full = np.asarray(res["fidelity"]) == 1.0 if "fidelity" in res else slice(None)
    return len(np.unique(np.asarray(res["param_gamma"], dtype=float)[full]))


def bootstrap_rmse_se(residuals: np.ndarray, draws: int = 1000) -> float:
    """Standard error of a test RMSE: the spread of the RMSEs of ``draws`` bootstrap
    resamples of the test residuals (seeded)."""
    rng = np.random.default_rng(0)
    sq = residuals**2
    idx = rng.integers(0, len(sq), size=(draws, len(sq)))
    return float(np.std(np.sqrt(sq[idx].mean(axis=1)), ddof=1))


def candidate_seconds(X: np.ndarray, y: np.ndarray, D: int, gamma: float, alphas: Any) -> float:
    """One ``FeatureRidge(RFF(gamma), alphas=13 values)`` fit (exact leave-one-out over the
    penalties): what one bandwidth costs a search, and what GridSearchCV fits."""
    return timed(partial(FeatureRidge(rff(D).set_params(gamma=gamma), alphas=alphas).fit, X, y))[0]


def candidates_counted(X: np.ndarray, y: np.ndarray) -> int:
    """The bandwidths the exhaustive search scores on these data: counted on a run at
    ``D = 256`` on at most 10^4 rows (the count follows the curve in ``gamma``, not ``D``)."""
    m = min(len(X), 10_000)
    return n_gammas_scored(FeatureRidgeCV(rff(256), search="exhaustive").fit(X[:m], y[:m]))


def halving_case(
    name: str, data: tuple[np.ndarray, ...], D: int, args: argparse.Namespace, level: str
) -> dict[str, Any]:
    """One data set at one ``D``; ``level``: ``"run"`` (the exhaustive run), ``"estimate"``
    (the exhaustive and GridSearchCV estimated), ``"fit"`` (the default and one fit)."""
    X, y, Xt, yt = data
    n, m45 = X.shape[0], X.shape[0] * (N_SPLITS - 1) // N_SPLITS
    models: dict[str, Any] = {}

    def plain(rows: int) -> Any:
        g, a = chosen_pair(models["default"])
        est = FeatureRidge(rff(D).set_params(gamma=g), alpha=a * rows / n)
        return est.fit(X[:rows], y[:rows])

    calls = {"default": lambda: FeatureRidgeCV(rff(D)).fit(X, y), "fit": partial(plain, n)}
    calls["fit45"] = partial(plain, m45)
    calls["exhaustive"] = lambda: FeatureRidgeCV(rff(D), search="exhaustive").fit(X, y)
    sequence = ["default", "fit"] if level == "fit" else ["default", "fit", "fit45"]
    sequence += ["exhaustive"] if level == "run" else []
    sequence += ["fit", "fit45"] if level != "fit" else []
    times: dict[str, list[float]] = {key: [] for key in calls}
    for key in sequence * args.halving_repeats:
        seconds, models[key] = timed(calls[key])
        times[key].append(seconds)
    row = case_row(name, X, D, models, times, level)
    if level != "fit":
        row.update(gridsearch_part(X, y, D, models, args))
    if level == "estimate":
        row["k_exhaustive"] = candidates_counted(X, y)
    row["t_exhaustive_est"] = row["k_exhaustive"] * row["t_candidate"] if level != "fit" else None
    row.update(scores_part(models, Xt, yt, row))
    return row


def full_passes(model: FeatureRidgeCV) -> float:
    """A halving search's work in full passes: the fidelities of the bandwidths it scored,
    one per bandwidth and rung, summed."""
    res = model.cv_results_
    if "rung" not in res:  # searched at full size (data under 9000 rows): a pass a bandwidth
        return float(len(set(res["param_gamma"])))
    seen = {(float(g), int(r)): float(f) for g, r, f in zip(
        res["param_gamma"], res["rung"], res["fidelity"], strict=True)}  # fmt: skip
    return sum(seen.values())


def case_row(
    name: str,
    X: np.ndarray,
    D: int,
    models: dict[str, Any],
    times: dict[str, list[float]],
    level: str,
) -> dict[str, Any]:
    """Times and choices of the default search, the plain fits and the exhaustive search."""
    t_fit = min(times["fit"])
    gamma, alpha = chosen_pair(models["default"])
    row: dict[str, Any] = {
        "data": name,
        "n_train": X.shape[0],
        "d": X.shape[1],
        "D": D,
        "level": level,
        "load": os.getloadavg()[0],
        "t_default": statistics.median(times["default"]),
        "t_fit": t_fit,
        "t_fit45": min(times["fit45"]) if times["fit45"] else 0.8 * t_fit,
        "fit45_estimated": not times["fit45"],
        "passes_default": full_passes(models["default"]),
        "gamma_default": gamma,
        "alpha_default": alpha,
        "t_exhaustive": None,
        "k_exhaustive": None,
    }
    if times["exhaustive"]:
        ex = models["exhaustive"]
        row["t_exhaustive"] = statistics.median(times["exhaustive"])
        row["k_exhaustive"] = n_gammas_scored(ex)
        row["gamma_exhaustive"], row["alpha_exhaustive"] = chosen_pair(ex)
    return row


def gridsearch_part(
    X: np.ndarray, y: np.ndarray, D: int, models: dict[str, Any], args: argparse.Namespace
) -> dict[str, Any]:
    """One bandwidth's cost (a ``FeatureRidge(alphas=...)`` fit at the default's choice),
    GridSearchCV's time estimated from it (``9 x 3`` fits on 2/3 of the rows and the refit,
    linear in the rows), and GridSearchCV run where that estimate is within
    ``--gs-budget`` seconds and the exhaustive search ran."""
    gammas, alphas = gs_grids(X, args)
    t_candidate = candidate_seconds(
        X, y, D, chosen_pair(models["default"])[0], len(X) * lambdas(args)
    )
    out: dict[str, Any] = {
        "t_candidate": t_candidate,
        "t_gs_est": t_candidate * (GS_GAMMAS * GS_FOLDS * (GS_FOLDS - 1) / GS_FOLDS + 1),
        "t_gs": None,
    }
    if "exhaustive" in models and out["t_gs_est"] <= args.gs_budget:
        gs = GridSearchCV(
            FeatureRidge(rff(D), alphas=alphas), {"feature_map__gamma": list(gammas)}, cv=KFold(3)
        )
        out["t_gs"], models["gridsearch"] = timed(partial(gs.fit, X, y))
        out["gamma_gs"], out["alpha_gs"] = chosen_pair(models["gridsearch"])
    return out


def scores_part(
    models: dict[str, Any], Xt: np.ndarray, yt: np.ndarray, row: dict[str, Any]
) -> dict[str, Any]:
    """Held-out RMSEs; the exhaustive's bootstrap standard error; whether the default's
    RMSE is within 1 % of the exhaustive's or within that error."""
    out = {
        f"rmse_{key}": rmse(models[key], Xt, yt)
        for key in ("default", "exhaustive", "gridsearch")
        if key in models
    }
    if "rmse_exhaustive" in out:
        se = bootstrap_rmse_se(models["exhaustive"].predict(Xt) - yt)
        worse = out["rmse_default"] - out["rmse_exhaustive"]
        out.update(
            rmse_se=se,
            rmse_rel_diff=worse / out["rmse_exhaustive"],
            ok=bool(worse <= max(0.01 * out["rmse_exhaustive"], se)),
        )
    return out


def generated_case(spec: str, args: argparse.Namespace) -> dict[str, Any]:
    """``spec`` ``"n:D[:level]"``: ``n`` training rows of ``synthetic`` (seed 0), 10^4 test
    rows (seed 1)."""
    n, D, *level = spec.split(":")
    X, y = synthetic(int(float(n)))
    Xt, yt = synthetic(args.generated_test_rows, seed=1)
    return halving_case("sin (generated)", (X, y, Xt, yt), int(D), args, *(level or ["estimate"]))


def halving_warm_up() -> None:
    """Every code path of the section once on a small slice (Numba compilation)."""
    X, y = synthetic(2000, seed=2)
    args = argparse.Namespace(lambda_min=1e-7, lambda_max=10.0, n_alphas=13, gs_budget=1e9)
    models = {"default": FeatureRidgeCV(rff(64)).fit(X, y)}
    models["exhaustive"] = FeatureRidgeCV(rff(64), search="exhaustive").fit(X, y)
    gridsearch_part(X, y, 64, models, args)
    FeatureRidge(rff(64), alpha=1.0).fit(X, y)


# -- the default search: report --------------------------------------------------------


def _v(x: Any, spec: str, estimated: bool = False) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    return ("~" if estimated else "") + format(x, spec)


def time_table(rows: list[dict[str, Any]]) -> list[str]:
    """Times in units of one plain fit, and the ratios to the default search (``~``:
    estimated, see the module's docstring)."""
    lines = [
        "| data | n | d | D | default (s) | fit (s) | default (fits) | full passes | "
        "exhaustive (fits) | exhaustive / default | 650-fit grid / default | "
        "GridSearchCV / default |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        t_d, t_fit = r["t_default"], r["t_fit"]
        ex_est = r["t_exhaustive"] is None
        t_ex = r["t_exhaustive_est"] if ex_est else r["t_exhaustive"]
        gs_est = r.get("t_gs") is None
        t_gs = r.get("t_gs_est") if gs_est else r["t_gs"]
        grid = GRID_FITS * r["t_fit45"] + t_fit
        lines.append(
            f"| {r['data']} | {r['n_train']} | {r['d']} | {r['D']} | {t_d:.1f} | {t_fit:.2f} | "
            f"**{t_d / t_fit:.1f}** | {r['passes_default']:.1f} | "
            f"{_v(t_ex and t_ex / t_fit, '.1f', ex_est)} | "
            f"{_v(t_ex and t_ex / t_d, '.1f', ex_est)} | "
            f"{_v(grid / t_d, '.0f', r['fit45_estimated'])} | "
            f"{_v(t_gs and t_gs / t_d, '.1f', gs_est)} |"
        )
    return lines


def choice_table(rows: list[dict[str, Any]]) -> list[str]:
    """Held-out RMSEs and the choices of the default and the exhaustive search."""
    lines = [
        "| data | n | D | RMSE default | RMSE exhaustive | difference | s.e. | ok | "
        "γ default | γ exhaustive | α default | α exhaustive | RMSE GridSearchCV (γ) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ok = {True: "yes", False: "**NO**", None: "—"}[r.get("ok")]
        gs = r.get("rmse_gridsearch")
        gs_text = f"{gs:.4g} ({r['gamma_gs']:.3g})" if gs is not None else "—"
        lines.append(
            f"| {r['data']} | {r['n_train']} | {r['D']} | {r['rmse_default']:.4g} | "
            f"{_v(r.get('rmse_exhaustive'), '.4g')} | {_v(r.get('rmse_rel_diff'), '+.2%')} | "
            f"{_v(r.get('rmse_se'), '.2g')} | {ok} | {r['gamma_default']:.3g} | "
            f"{_v(r.get('gamma_exhaustive'), '.3g')} | {r['alpha_default']:.3g} | "
            f"{_v(r.get('alpha_exhaustive'), '.3g')} | {gs_text} |"
        )
    return lines


def write_halving(rows: list[dict[str, Any]], stem: Path | None) -> str:
    """The two tables as Markdown (printed, and written to ``stem.md`` with the rows as
    ``stem.csv`` when ``stem`` is given)."""
    text = "\n".join([*time_table(rows), "", *choice_table(rows)]) + "\n"
    if stem is not None:
        stem.parent.mkdir(parents=True, exist_ok=True)
        stem.with_suffix(".md").write_text(text)
        keys = list(dict.fromkeys(k for r in rows for k in r))
        with stem.with_suffix(".csv").open("w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=keys)
            writer.writeheader()
            writer.writerows(rows)
    return text


def read_rows(paths: list[Path]) -> list[dict[str, Any]]:
    """The rows of CSV files that :func:`write_halving` wrote, their values typed again."""

    def typed(text: str) -> Any:
        if text in ("", "None"):
            return None
        if text in ("True", "False"):
            return text == "True"
        for kind in (int, float):
            try:
                return kind(text)
            except ValueError:
                pass
        return text

    rows = []
    for path in paths:
        with path.open(newline="") as fh:
            rows += [{k: typed(v) for k, v in row.items()} for row in csv.DictReader(fh)]
    return rows


def run_halving(args: argparse.Namespace) -> None:
    """The section ``--halving``: every set at every ``--halving-D``, then the generated
    cases, the tables rewritten after each case (or, with ``--halving-from``, the tables of
    rows written before, in the order given)."""
    if args.halving_from:
        print(write_halving(read_rows(args.halving_from), args.halving_out))
        return
    halving_warm_up()
    rows: list[dict[str, Any]] = []
    home = args.data_home.resolve()
    cases: list[Callable[[], dict[str, Any]]] = []
    for width in args.halving_D:
        level = "run" if width <= args.exhaustive_up_to_D else "estimate"
        for name in args.sets or HALVING_SETS:
            cases.append(partial(_real_case, name, home, width, level, args))
    cases += [partial(generated_case, spec, args) for spec in args.generated]
    for case in cases:
        row = case()
        if row:
            rows.append(row)
            print(f"  {json.dumps(row, default=str)}", flush=True)
            write_halving(rows, args.halving_out)
    print("\n" + write_halving(rows, args.halving_out))


def _real_case(
    name: str, home: Path, D: int, level: str, args: argparse.Namespace
) -> dict[str, Any] | None:
    try:
        data = load_split(name, home, args.test_size, args.halving_max_train or None)
    except (FileNotFoundError, ValueError) as exc:
        print(f"skipping {name}: {exc}", flush=True)
        return None
    print(f"== {name}: n_train={len(data[0])}, D={D} (load {os.getloadavg()[0]:.1f})", flush=True)
    return halving_case(name, data, D, args, level)


# -- main ------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data-home", type=Path, default=Path(os.environ.get("KERNELMAPS_DATA", DEFAULT_DATA_HOME))
    )
    parser.add_argument(
        "--sets", nargs="+", default=None, choices=list(dict.fromkeys(SETS + HALVING_SETS))
    )
    parser.add_argument("--D", type=int, default=256)
    parser.add_argument("--max-train", type=int, default=8000, help="0: no cap")
    parser.add_argument("--test-size", type=float, default=0.2)
    parser.add_argument("--n-gammas", type=int, default=10)
    parser.add_argument("--n-alphas", type=int, default=13)
    parser.add_argument("--lambda-min", type=float, default=1e-7)
    parser.add_argument("--lambda-max", type=float, default=10.0)
    parser.add_argument("--repeats", type=int, default=3, help="runs of each FeatureRidgeCV")
    parser.add_argument("--grid-set", default="california_housing", choices=SETS)
    parser.add_argument("--large", action="store_true", help="the n = 10^6 extrapolation")
    parser.add_argument("--large-D", type=int, default=4096)
    parser.add_argument("--large-n", type=int, default=100_000)
    parser.add_argument("--large-fit-n", type=int, default=10_000)
    parser.add_argument("--large-target-n", type=int, default=1_000_000)
    parser.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test")
    parser.add_argument("--json", type=Path, default=None, help="write the numbers as JSON")
    add_halving_arguments(parser)
    args = parser.parse_args(argv)
    apply_quick(args)
    max_train = args.max_train or None

    start = time.perf_counter()
    print(f"machine: {machine_line()}")
    print(f"command: {' '.join([Path(sys.executable).name, *sys.argv])}")
    print(f"load average {os.getloadavg()}", flush=True)
    if args.halving:
        run_halving(args)
        print(f"\ntotal {(time.perf_counter() - start) / 60:.1f} min; load {os.getloadavg()}")
        return
    args.sets = args.sets or list(SETS)
    home = args.data_home.resolve()
    data = {}
    for name in args.sets:
        try:
            data[name] = load_split(name, home, args.test_size, max_train)
        except (FileNotFoundError, ValueError) as exc:
            print(f"skipping {name}: {exc}", flush=True)
    if data:
        warm_up(*next(iter(data.values()))[:2], args.D)
    results = [run_set(name, d, args) for name, d in data.items()]
    width_grid = None
    if args.grid_set in data:
        single = next(r for r in results if r["data"] == args.grid_set)
        width_grid = run_width_grid(args.grid_set, data[args.grid_set], args, single)
    large = run_large(args) if args.large else None

    report(results, width_grid, large)
    total = time.perf_counter() - start
    print(f"\ntotal {total / 60:.1f} min; load average at the end {os.getloadavg()}")
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "machine": machine_line(),
                    "args": {k: str(v) for k, v in vars(args).items()},
                    "sets": results,
                    "n_components_grid": width_grid,
                    "large": large,
                    "total_seconds": total,
                },
                indent=1,
            )
        )


def apply_quick(args: argparse.Namespace) -> None:
    """``--quick``: tiny sizes, a smoke test; without it, ``--halving`` writes its tables
    under ``docs/results/tuning/`` unless ``--halving-out`` says where."""
    if args.quick and args.halving:
        args.halving_D, args.halving_max_train, args.exhaustive_up_to_D = [64], 1200, 64
        args.sets = args.sets or ["california_housing", "cpu_act"]
        args.generated, args.generated_test_rows = ["2000:64:estimate", "2000:64:fit"], 1000
    elif not args.quick and args.halving and args.halving_out is None:
        args.halving_out = Path(__file__).resolve().parents[1] / "docs/results/tuning/halving"
    if args.quick:
        args.D, args.max_train, args.n_gammas, args.n_alphas, args.repeats = 64, 1500, 3, 4, 1
        args.large_D, args.large_n, args.large_fit_n = 256, 5000, 1000


def add_halving_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of the section ``--halving``."""
    parser.add_argument("--halving", action="store_true", help="the default search's study")
    parser.add_argument("--halving-D", type=int, nargs="*", default=[1024])
    parser.add_argument("--halving-max-train", type=int, default=0, help="0: no cap")
    parser.add_argument("--halving-repeats", type=int, default=1)
    parser.add_argument(
        "--exhaustive-up-to-D", type=int, default=1024, help="above: the exhaustive estimated"
    )
    parser.add_argument("--gs-budget", type=float, default=90.0, help="GridSearchCV run if")
    parser.add_argument("--generated", nargs="*", default=[], help="n:D[:estimate|fit]")
    parser.add_argument("--generated-test-rows", type=int, default=10_000)
    parser.add_argument(
        "--halving-out", type=Path, default=None, help="stem of the .md and .csv written"
    )
    parser.add_argument(
        "--halving-from", type=Path, nargs="+", default=None, help="tables of CSV rows"
    )


def report(
    results: list[dict[str, Any]], width_grid: dict[str, Any] | None, large: dict[str, Any] | None
) -> None:
    print_table(results)
    if width_grid:
        w = width_grid
        print(
            f"\nn_components_grid={w['n_components_grid']} on {w['data']} (same gammas, alphas, "
            f"KFold(5)): {w['seconds']:.2f} s vs {w['single_D_seconds']:.2f} s for D alone "
            f"(x{w['seconds'] / w['single_D_seconds']:.2f}); chosen D = {w['n_components']} "
            f"(gamma {w['gamma']:.3g}, alpha {w['alpha']:.3g}), CV R2 {w['cv_score']:.4f} "
            f"(D alone {w['single_D_cv_score']:.4f}), test R2 {w['test_r2']:.4f} "
            f"(D alone {w['single_D_test_r2']:.4f})"
        )
    if large:
        print_large(large)


if __name__ == "__main__":
    main()
