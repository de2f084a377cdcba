"""The study's verdicts: which method of each compared pair wins, and where significantly."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from kernelmaps.experiments import method_names
from kernelmaps.experiments._folder_lock import OutputFolderInUseError, _FolderLock
from kernelmaps.experiments._summary import metric_higher_is_better
from kernelmaps.experiments._verdicts import (
    ONE_SEED,
    RULE,
    STUDY_PAIRS,
    format_verdicts,
    study_verdicts,
    verdicts_record,
    write_verdicts,
)

from ._bounds import empirical_bernstein_radius


def _rows(table, metric="fro_error", kernel="rbf"):
    """Tidy rows from ``{(dataset, method, D): [value per seed]}``."""
    return [
        {
            "dataset": dataset,
            "method": method,
            "kernel": kernel,
            "n_components": d,
            "seed": seed,
            "metric": metric,
            "value": value,
        }
        for (dataset, method, d), values in table.items()
        for seed, value in enumerate(values)
    ]


def _only(verdicts, challenger):
    (v,) = [v for v in verdicts if v.challenger == challenger]
    return v


def test_metric_directions():
    assert metric_higher_is_better("accuracy") is True
    for metric in ("fro_error", "spectral_error", "max_error", "rmse", "fit_time"):
        assert metric_higher_is_better(metric) is False
    assert metric_higher_is_better("n_features_out") is None


def test_wins_significant_wins_ties_and_losses():
    # Baseline: mean 1, sd 0.1 over 3 seeds.  se of the difference with a challenger of
    # the same spread: sqrt(2 * 0.01 / 3) = 0.0816, so 2 se = 0.163.
    base = [1.0, 1.1, 0.9]
    table = {
        ("a", "rff-mc", 8): base,
        ("a", "rff-sobol", 8): [0.5, 0.6, 0.4],  # 0.5 better: significant win
        ("a", "rff-mc", 16): base,
        ("a", "rff-sobol", 16): [0.9, 1.0, 0.8],  # 0.1 better: a win, not significant
        ("a", "rff-mc", 32): base,
        ("a", "rff-sobol", 32): list(base),  # same mean: a tie
        ("b", "rff-mc", 8): base,
        ("b", "rff-sobol", 8): [1.3, 1.4, 1.2],  # 0.3 worse: significant loss
        ("b", "rff-mc", 16): base,
        ("b", "rff-sobol", 16): [1.05, 1.15, 0.95],  # 0.05 worse: a loss
    }
    (v,) = study_verdicts(_rows(table), "fro_error")
    assert (v.baseline, v.challenger, v.label) == ("rff-mc", "rff-sobol", STUDY_PAIRS[0][2])
    assert v.n_points == 5 and v.n_tested == 5
    assert (v.wins, v.significant_wins, v.ties, v.losses, v.significant_losses) == (2, 1, 1, 2, 1)
    se = math.sqrt(2 * 0.01 / 3)
    assert v.points[0]["standard_error"] == pytest.approx(se, rel=1e-12)
    assert [p["outcome"] for p in v.points] == [
        "significant win", "win", "tie", "significant loss", "loss"
    ]  # fmt: skip
    line = format_verdicts([v]).splitlines()[1]
    assert line.endswith(
        "rff-sobol beats rff-mc at 2 of 5 points, significantly at 1; ties at 1, "
        "significantly worse at 1"
    )


def test_the_two_standard_error_threshold():
    # Differences just under and just over 2 se (se fixed by the baseline's spread alone:
    # the challenger has none), relative margin 1e-6, far above rounding.
    se = math.sqrt(0.01 / 3)
    for factor, significant in [(1 - 1e-6, False), (1 + 1e-6, True)]:
        gain = 2 * se * factor
        table = {("a", "rff-mc", 8): [1.0, 1.1, 0.9], ("a", "rff-sobol", 8): [1.0 - gain] * 3}
        (v,) = study_verdicts(_rows(table), "fro_error")
        assert (v.wins, v.significant_wins) == (1, int(significant))


def test_unequal_seed_counts_use_each_methods_own():
    # A failed cell leaves a method with fewer seeds: se = sqrt(s_b^2/n_b + s_c^2/n_c).
    table = {("a", "rff-mc", 8): [1.0, 1.2, 0.8, 1.0], ("a", "rff-sobol", 8): [0.7, 0.9]}
    (v,) = study_verdicts(_rows(table), "fro_error")
    s_b2, s_c2 = np.var([1.0, 1.2, 0.8, 1.0], ddof=1), np.var([0.7, 0.9], ddof=1)
    assert v.points[0]["standard_error"] == pytest.approx(math.sqrt(s_b2 / 4 + s_c2 / 2))
    assert v.points[0]["baseline_seeds"] == 4 and v.points[0]["challenger_seeds"] == 2


def test_one_seed_has_no_significance_and_says_so():
    table = {
        ("a", "nystroem-uniform", 8): [0.5],
        ("a", "nystroem-kmeans", 8): [0.1],
        ("a", "nystroem-uniform", 16): [0.4],
        ("a", "nystroem-kmeans", 16): [0.45],
    }
    (v,) = study_verdicts(_rows(table), "fro_error")
    assert (v.wins, v.losses, v.significant_wins, v.significant_losses, v.n_tested) == (
        1, 1, 0, 0, 0
    )  # fmt: skip
    assert all(p["standard_error"] is None for p in v.points)
    text = format_verdicts([v])
    assert text.splitlines()[-1] == ONE_SEED and "significantly" not in text
    assert "nystroem-kmeans beats nystroem-uniform at 1 of 2 points" in text
    # One point with one seed among tested ones: counted, not tested, and the line says so.
    table[("a", "nystroem-uniform", 32)] = [0.3, 0.31]
    table[("a", "nystroem-kmeans", 32)] = [0.1, 0.11]
    (v,) = study_verdicts(_rows(table), "fro_error")
    assert (v.n_points, v.n_tested, v.wins, v.significant_wins) == (3, 1, 2, 1)
    text = format_verdicts([v])
    assert "(tested at 1; the others have one seed)" in text
    assert text.splitlines()[-1] == RULE


def test_missing_methods_and_points_are_left_out():
    table = {
        ("a", "rff-mc", 8): [1.0, 1.1],
        ("a", "rff-orthogonal", 8): [0.5, 0.6],
        ("b", "rff-mc", 8): [1.0, 1.1],  # no rff-orthogonal on b: not a point
        ("a", "rff-mc", 16): [1.0, 1.1],  # nor at D = 16
        ("a", "nystroem-kmeans", 8): [0.1, 0.2],  # its baseline is absent: no pair
    }
    verdicts = study_verdicts(_rows(table), "fro_error")
    assert [(v.baseline, v.challenger) for v in verdicts] == [("rff-mc", "rff-orthogonal")]
    assert verdicts[0].n_points == 1
    assert study_verdicts([], "fro_error") == [] and format_verdicts([]) == ""


def test_points_with_different_kernels_do_not_compare():
    rows = _rows({("a", "rff-mc", 8): [1.0, 1.1]}, kernel="rbf") + _rows(
        {("a", "rff-sobol", 8): [0.1, 0.2]}, kernel="laplacian"
    )
    (v,) = study_verdicts(rows, "fro_error")
    assert v.n_points == 0 and v.wins == 0


def test_accuracy_is_better_when_higher():
    table = {
        ("a", "rmfm", 8): [0.80, 0.82, 0.78],
        ("a", "crfm", 8): [0.90, 0.92, 0.88],
        ("a", "rmfm", 16): [0.90, 0.91, 0.89],
        ("a", "crfm", 16): [0.85, 0.86, 0.84],
    }
    (v,) = study_verdicts(_rows(table, metric="accuracy"), "accuracy")
    assert v.higher_is_better
    assert [p["outcome"] for p in v.points] == ["significant win", "significant loss"]
    assert format_verdicts([v]).startswith("verdicts on the test accuracy (higher is better)")
    # The same numbers as an error (lower is better) reverse the outcomes.
    (e,) = study_verdicts(_rows(table, metric="rmse"), "rmse")
    assert [p["outcome"] for p in e.points] == ["significant loss", "significant win"]
    assert study_verdicts(_rows(table, metric="n_features_out"), "n_features_out") == []


def test_labels_are_mapped_to_registry_names():
    table = {
        ("a", "MC", 8): [1.0, 1.1],
        ("a", "QMC", 8): [0.5, 0.6],
        ("a", "QMC (Halton)", 8): [1.5, 1.6],
        ("a", "rff-sobol", 8): [0.5, 0.6],  # not named as rff-sobol by the study
    }
    names = {"MC": "rff-mc", "QMC": "rff-sobol", "QMC (Halton)": "rff-halton",
             "rff-sobol": "rff-orthogonal"}  # fmt: skip
    verdicts = study_verdicts(_rows(table), "fro_error", names)
    assert [(v.baseline, v.challenger, v.wins) for v in verdicts] == [
        ("MC", "QMC", 1), ("MC", "QMC (Halton)", 0), ("MC", "rff-sobol", 1)
    ]  # fmt: skip
    assert [v.label for v in verdicts] == [
        "RFF vs QMC RFF (Sobol')", "RFF vs QMC RFF (Halton)", "RFF vs orthogonal RFF"
    ]  # fmt: skip
    # One registry name under two labels: a verdict for each.
    names["rff-sobol"] = "rff-sobol"
    assert len(study_verdicts(_rows(table), "fro_error", names)) == 3


def test_the_pairs_name_registered_methods():
    # Every pair names methods of the registry (a misspelt name would never be
    # reported), except the RPCholesky landmarks, listed before their method exists.
    registered = set(method_names()) | {"nystroem-rpcholesky"}
    for baseline, challenger, label in STUDY_PAIRS:
        assert baseline in registered and challenger in registered, label
    assert len({(b, c) for b, c, _ in STUDY_PAIRS}) == len(STUDY_PAIRS)
    assert ("nystroem-uniform", "nystroem-rpcholesky") in {(b, c) for b, c, _ in STUDY_PAIRS}


def test_format_states_the_rule_once_for_several_metrics():
    table = {("a", "rff-mc", 8): [1.0, 1.1], ("a", "rff-orthogonal", 8): [0.5, 0.6]}
    verdicts = study_verdicts(_rows(table), "fro_error") + study_verdicts(
        _rows(table, metric="accuracy"), "accuracy"
    )
    lines = format_verdicts(verdicts).splitlines()
    assert lines.count(RULE) == 1 and lines[-1] == RULE
    assert sum(line.startswith("verdicts on the ") for line in lines) == 2


def test_the_rule_holds_its_level_under_no_difference(seed):
    # Two methods with the same law at every point: the statistic (difference of the
    # means) / se with n seeds each and se^2 = (s_b^2 + s_c^2) / n is exactly Student's t
    # with 2 (n - 1) degrees of freedom (the pooled statistic for equal n), so a point is
    # significant with probability p = P(|t| > 2).  The observed rate is within an
    # empirical Bernstein radius of p.  A standard error without the 1/n (never
    # significant) or with the spreads added instead of the variances (p ~ 0.01) fails.
    n_seeds, n_datasets, n_dims = 10, 200, 50
    rng = np.random.default_rng(seed)
    values = rng.normal(1.0, 0.1, size=(2, n_datasets, n_dims, n_seeds))
    rows = []
    for m, method in enumerate(("nystroem-uniform", "nystroem-leverage")):
        for i in range(n_datasets):
            for j in range(n_dims):
                for s in range(n_seeds):
                    rows.append(
                        {"dataset": str(i), "method": method, "kernel": "rbf",
                         "n_components": j, "seed": s, "metric": "fro_error",
                         "value": float(values[m, i, j, s])}
                    )  # fmt: skip
    (v,) = study_verdicts(rows, "fro_error")
    assert v.n_points == v.n_tested == n_datasets * n_dims
    p = 2 * stats.t.sf(2.0, df=2 * (n_seeds - 1))
    significant = np.array(
        [p_["outcome"].startswith("significant") for p_ in v.points], dtype=float
    )
    radius = empirical_bernstein_radius(significant, value_range=1.0)
    assert abs(significant.mean() - p) <= radius, (significant.mean(), p, radius)


def test_verdicts_record_and_write(tmp_path):
    table = {("a", "MC", 8): [1.0, 1.1], ("a", "ORF", 8): [0.5, 0.6]}
    rows = _rows(table) + _rows(table, metric="fit_time") + _rows(table, metric="n_features_out")
    provenance = {"config": {"methods": [{"name": "rff-mc", "label": "MC"},
                                         {"name": "rff-orthogonal", "label": "ORF"}]}}  # fmt: skip
    (tmp_path / "results.json").write_text(
        json.dumps({"provenance": provenance, "failures": [], "results": rows})
    )
    record = write_verdicts(tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    assert list(data) == ["provenance", "failures", "verdicts", "results"]
    assert data["results"] == rows and data["verdicts"] == record
    assert record["rule"] == RULE and set(record["by_metric"]) == {"fro_error", "fit_time"}
    (v,) = record["by_metric"]["fro_error"]
    assert (v["baseline"], v["challenger"], v["significant_wins"]) == ("MC", "ORF", 1)
    assert verdicts_record(rows)["by_metric"] == {}  # without the labels' names: no pair
    # Written again: replaced, not added twice.
    assert write_verdicts(tmp_path) == record
    assert list(json.loads((tmp_path / "results.json").read_text())) == list(data)
    # A folder another run holds is not touched.
    with _FolderLock(tmp_path), pytest.raises(OutputFolderInUseError):
        write_verdicts(tmp_path)
