"""``kernelmaps fit --tune``: the search of :class:`~kernelmaps.FeatureRidgeCV` in the
pipeline of ``fit``, its report (the chosen values and the curve as a table) and figure."""

from __future__ import annotations

import argparse
import math
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
#: search's passes cost ``O(n D^2)`` per bandwidth, and with 1024 a newcomer's 20 000 rows
#: are searched in well under a minute on two cores (the curve shows whether more helps).
N_COMPONENTS, TUNE_N_COMPONENTS = 2048, 1024


def check_options(args: argparse.Namespace) -> None:
    """Refuse the search options without ``--tune``, and a ``--cv`` below 2; set the
    default number of features."""
    if args.n_components is None:
        args.n_components = TUNE_N_COMPONENTS if args.tune else N_COMPONENTS
    if not args.tune and (args.cv is not None or args.plot is not None):
        raise UserError("--cv and --plot shape the search of --tune; add --tune.")
    if args.cv is not None and args.cv < 2:
        raise UserError(f"--cv {args.cv}: K-fold needs at least 2 folds; give --cv 5, say.")


def tuned_pipeline(pipeline: Any, args: argparse.Namespace, task: str) -> Any:
    """``pipeline`` (scaler, ridge on a map) with the ridge replaced by its search over
    ``gamma``, ``alpha`` and ``D / 8, D / 4, D / 2, D`` features (for a map that has
    ``n_components``)."""
    from ..models import FeatureRidgeClassifierCV, FeatureRidgeCV

    ridge = pipeline.steps[-1][1]
    feature_map = ridge.feature_map
    D = args.n_components
    grid = None
    if "n_components" in feature_map.get_params():
        grid = sorted({max(D // 8, 1), max(D // 4, 1), max(D // 2, 1), D})
    search_class = FeatureRidgeClassifierCV if task == "classification" else FeatureRidgeCV
    gammas = "auto" if "gamma" in feature_map.get_params() else None
    search = search_class(
        feature_map,
        gammas=gammas,
        n_components_grid=grid,
        cv=args.cv,
    )
    pipeline.steps[-1] = (type(search).__name__.lower(), search)
    return pipeline


def report(search: Any, args: argparse.Namespace) -> str:
    """The chosen values and the curve (best score per gamma and number of features)."""
    how = f"{search.n_splits_}-fold {search.scoring_}" if search.n_splits_ else "leave-one-out"
    gamma = "-" if search.gamma_ is None else f"{search.gamma_:.4g}"
    lines = [
        f"chosen: gamma = {gamma}, alpha = {search.alpha_:.3g}, "
        f"n_components = {search.n_components_} ({how} score {search.best_score_:.4g})",
        _curve_table(search.cv_results_),
    ]
    if args.plot:
        from ..plotting import matplotlib_available, plot_cv_curve

        if not matplotlib_available():
            raise UserError('--plot needs matplotlib: pip install "kernelmaps[plot]".')
        plot_cv_curve(search.cv_results_, args.plot, score_name=f"{how} score")
        lines.append(f"curve drawn in {args.plot}")
    return "\n".join(lines)


def _curve_table(cv_results: dict[str, Any]) -> str:
    """The best score over alpha for each gamma (rows) and number of features (columns)."""
    params, means = cv_results["params"], cv_results["mean_test_score"]
    widths = sorted({p["n_components"] for p in params})
    gammas = sorted({p.get("gamma") for p in params}, key=lambda g: -1.0 if g is None else g)
    best: dict[tuple[Any, int], float] = {}
    for p, m in zip(params, means, strict=True):
        key = (p.get("gamma"), p["n_components"])
        if math.isfinite(float(m)):
            best[key] = max(best.get(key, -math.inf), float(m))
    header = "gamma       " + "".join(f"{f'D={D}':>12}" for D in widths)
    rows = [header]
    for g in gammas:
        cells = [best.get((g, D), np.nan) for D in widths]
        name = "-" if g is None else f"{g:<10.4g}"
        rows.append(f"{name:<12}" + "".join(f"{c:>12.4g}" for c in cells))
    return "\n".join(rows)
