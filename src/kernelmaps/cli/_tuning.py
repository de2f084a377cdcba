"""``kernelmaps fit --tune``: the search of :class:`~kernelmaps.FeatureRidgeCV` in the
pipeline of ``fit``, its report (the chosen values and the curve as a table) and figure.

The search ranks by minus a mean squared error (leave-one-out, or K-fold); the report
gives it in the target's units: the RMSE (its square root) and R^2 (``1 - MSE / Var(y)``)
for regression, the accuracy of K-fold classification.  ``cv_results_`` keeps the
search's scores."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ._common import UserError


def add_options(add: Any) -> None:
    """The options of ``fit`` that shape the search."""
    add(
        "--tune",
        action="store_true",
        help="choose gamma, alpha and the number of features by cross-validation in one "
        "pass over the rows per batch of gammas (prints the chosen values and the curve)",
    )
    add(
        "--cv",
        type=int,
        metavar="K",
        help="with --tune: exact K-fold cross-validation (default: exact leave-one-out)",
    )
    add(
        "--plot",
        metavar="PNG",
        help="with --tune: draw the cross-validation curves there (needs the plot extra)",
    )


#: The number of features of ``fit``, and the largest a search of ``--tune`` tries: the
#: halving search scores the bandwidths on samples of the rows with fewer features and
#: only the best at full size, so a newcomer's 20 000 rows take a few fits' time.
N_COMPONENTS = 2048


def check_options(args: argparse.Namespace) -> None:
    """Refuse the search options without ``--tune``, and a ``--cv`` below 2; set the
    default number of features."""
    if args.n_components is None:
        args.n_components = N_COMPONENTS
    if not args.tune and (args.cv is not None or args.plot is not None):
        raise UserError("--cv and --plot shape the search of --tune; add --tune.")
    if args.cv is not None and args.cv < 2:
        raise UserError(f"--cv {args.cv}: K-fold needs at least 2 folds; give --cv 5, say.")


def tuned_pipeline(pipeline: Any, args: argparse.Namespace, task: str) -> Any:
    """``pipeline`` (scaler, ridge on a map) with the ridge replaced by its search over
    ``gamma``, ``alpha`` and ``D / 8, D / 4, D / 2, D`` features (for a map that has
    ``n_components``); K-fold regression ranked by the mean squared error."""
    from ..models import FeatureRidgeClassifierCV, FeatureRidgeCV

    ridge = pipeline.steps[-1][1]
    feature_map = ridge.feature_map
    D = args.n_components
    grid = None
    if "n_components" in feature_map.get_params():
        grid = sorted({max(D // 8, 1), max(D // 4, 1), max(D // 2, 1), D})
    classify = task == "classification"
    search_class = FeatureRidgeClassifierCV if classify else FeatureRidgeCV
    gammas = "auto" if "gamma" in feature_map.get_params() else None
    search = search_class(
        feature_map,
        gammas=gammas,
        n_components_grid=grid,
        cv=args.cv,
        scoring=None if classify or args.cv is None else "neg_mean_squared_error",
    )
    pipeline.steps[-1] = (type(search).__name__.lower(), search)
    return pipeline


def report(search: Any, args: argparse.Namespace, y: Any) -> str:
    """The chosen values, the curve (the best per gamma and number of features) in the
    target's units, and a hint when the best number of features is the largest tried."""
    name, shown, _ = _units(search)
    chosen = f"{name} {shown(search.best_score_):.4g}"
    if not hasattr(search, "classes_"):
        chosen += f", R^2 {r_squared(-search.best_score_, y):.4f}"
    gamma = "-" if search.gamma_ is None else f"{search.gamma_:.4g}"
    lines = [
        f"chosen: gamma = {gamma}, alpha = {search.alpha_:.3g}, "
        f"n_components = {search.n_components_} ({chosen})",
        f"{name}, the best over alpha:",
        _curve_table(search.cv_results_, shown),
    ]
    widths = {p["n_components"] for p in search.cv_results_["params"]}
    if len(widths) > 1 and search.n_components_ == max(widths):
        lines.append(
            f"the best D is the largest tried ({search.n_components_}): try a larger "
            f"--n-components (the search tries D/8, D/4, D/2 and D)"
        )
    if args.plot:
        lines.append(_plot(search, args.plot))
    return "\n".join(lines)


def r_squared(mse: float, y: Any) -> float:
    """``1 - mse / Var(y)``: the R^2 of a model of mean squared error ``mse`` on ``y``.

    Examples
    --------
    >>> from kernelmaps.cli._tuning import r_squared
    >>> r_squared(0.5, [0.0, 2.0])
    0.5
    """
    variance = float(np.var(np.asarray(y, dtype=np.float64)))
    return 1.0 - mse / variance if variance > 0 else math.nan


def _units(search: Any) -> tuple[str, Callable[[float], float], bool]:
    """The name of the search's criterion in the target's units, the conversion of a
    score (``mean_test_score``) to it, and whether it is an error (lower is better)."""
    how = f"{search.n_splits_}-fold" if search.n_splits_ else "leave-one-out"
    if hasattr(search, "classes_"):
        if search.n_splits_:
            return f"{how} {search.scoring_.replace('_', ' ')}", float, False
        # ranked by the regression on the classes encoded as -1 / 1: no accuracy
        return f"{how} mean squared error of the -1/1 class encoding", lambda s: -s, True
    return f"{how} RMSE", lambda s: math.sqrt(max(-s, 0.0)), True


def _curve_table(cv_results: dict[str, Any], shown: Callable[[float], float]) -> str:
    """The best score over alpha for each gamma (rows) and number of features (columns;
    with the rungs of the halving search, each rung's rows and features), shown
    converted by ``shown``."""
    params, means = cv_results["params"], cv_results["mean_test_score"]
    rows_scored = cv_results.get("param_n_rows", [None] * len(params))
    columns = sorted({(n, p["n_components"]) for p, n in zip(params, rows_scored, strict=True)})
    gammas = sorted({p.get("gamma") for p in params}, key=lambda g: -1.0 if g is None else g)
    best: dict[tuple[Any, Any], float] = {}
    for p, n, m in zip(params, rows_scored, means, strict=True):
        key = (p.get("gamma"), (n, p["n_components"]))
        if math.isfinite(float(m)):
            best[key] = max(best.get(key, -math.inf), float(m))
    names = [f"D={D}" if n is None else f"{n}x{D}" for n, D in columns]
    header = "gamma       " + "".join(f"{name:>13}" for name in names)
    rows = [header]
    for g in gammas:
        cells = [shown(best[g, c]) if (g, c) in best else math.nan for c in columns]
        name = "-" if g is None else f"{g:<10.4g}"
        rows.append(f"{name:<12}" + "".join(f"{c:>13.4g}" for c in cells))
    if rows_scored[0] is not None:
        rows.append(
            "(columns: rows x features scored; the halving search scores the best "
            "gamma alone on every row)"
        )
    return "\n".join(rows)


def _plot(search: Any, path: str) -> str:
    """Draw the curves of the search in the target's units; the line saying where."""
    from ..plotting import matplotlib_available, plot_cv_curve

    if not matplotlib_available():
        raise UserError('--plot needs matplotlib: pip install "kernelmaps[plot]".')
    name, shown, error = _units(search)
    sign = -1.0 if error else 1.0  # an error is drawn as minus the score, on a log axis
    values = [sign * shown(float(m)) for m in search.cv_results_["mean_test_score"]]
    results = search.cv_results_ | {"mean_test_score": values}
    plot_cv_curve(results, path, score_name=name, error_name=name)
    return f"curve drawn in {path}"
