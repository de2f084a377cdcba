"""``cv_results_`` of a search, in GridSearchCV's form, from its result rows."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._batches import RidgeSearch

__all__ = ["cv_results"]


def cv_results(search: RidgeSearch) -> dict[str, Any]:
    """GridSearchCV's ``cv_results_`` of the search's result rows."""
    rows = search.results
    splits = np.array([r["splits"] for r in rows])
    means = splits.mean(axis=1)
    finite = np.where(np.isfinite(means), means, -np.inf)
    # successive halving: a later rung ranks before an earlier one (its scores are of
    # more rows), as scikit-learn's HalvingGridSearchCV ranks its iterations
    rungs = np.array([r.get("rung", 0) for r in rows])
    order = np.lexsort((-finite, -rungs))
    rank = np.empty(len(rows), dtype=np.int32)
    rank[order] = np.arange(1, len(rows) + 1)
    ties = np.unique(np.stack([finite, rungs]), axis=1, return_inverse=True)[1].reshape(-1)
    for value in np.unique(ties):  # equal scores share the smallest rank, as GridSearchCV
        members = ties == value
        rank[members] = rank[members].min()
    # plain arrays (GridSearchCV's are masked, which a model file cannot hold); no
    # param_gamma for a map without one, as GridSearchCV lists only what it searched
    searched = ["gamma"] if rows[0]["gamma"] is not None else []
    searched += ["alpha", "n_components"]
    out: dict[str, Any] = {f"param_{name}": np.array([r[name] for r in rows]) for name in searched}
    out["params"] = [{name: r[name] for name in searched} for r in rows]
    if "rung" in rows[0]:  # what successive halving scored at which fidelity
        out["param_n_rows"] = np.array([r["n_rows"] for r in rows])
        out["fidelity"] = np.array([r["fidelity"] for r in rows])
        out["rung"] = rungs
    if search.spec.n_splits:
        for k in range(splits.shape[1]):
            out[f"split{k}_test_score"] = splits[:, k]
    out["mean_test_score"] = means
    # a candidate with a split of no score (infinite: a row fitted exactly) has no spread
    spread = np.full(len(rows), np.nan)
    scored = np.isfinite(splits).all(axis=1)
    spread[scored] = splits[scored].std(axis=1)
    out["std_test_score"] = spread
    out["rank_test_score"] = rank
    return out
