"""Declarative experiments: configuration, the tidy runner, resuming, summaries."""

from __future__ import annotations

import csv
import json
from typing import Any

import numpy as np
import pytest

from kernelmaps import RandomFourierFeatures
from kernelmaps.experiments import (
    RESULT_COLUMNS,
    DatasetConfig,
    ExperimentConfig,
    MethodConfig,
    MethodSpec,
    format_table,
    get_method,
    load_config,
    method_names,
    read_results,
    register_method,
    run_experiment,
    summarize,
)

#: Every factory call of the counting method, as (n_components, seed).
CALLS: list[tuple[int, int]] = []


def _counting_factory(n_components: int, kernel_params: dict[str, Any], random_state: Any):
    CALLS.append((n_components, random_state))
    params = dict(kernel_params)
    params.pop("kernel", None)
    return RandomFourierFeatures(
        "rbf", kernel_params=params, n_components=n_components, random_state=random_state
    )


def _failing_factory(n_components: int, kernel_params: dict[str, Any], random_state: Any):
    raise ValueError("this method always fails")


if "test-counting" not in method_names():
    register_method(MethodSpec("test-counting", "rbf", _counting_factory, "RFF, counted"))
    register_method(MethodSpec("test-failing", "rbf", _failing_factory, "always fails"))


def _small_config(**kw: Any) -> ExperimentConfig:
    base: dict[str, Any] = {
        "datasets": [DatasetConfig("letter", n_fit=120, n_eval=80)],
        "methods": [MethodConfig("test-counting")],
        "n_components": [8, 32],
        "seeds": [0, 1],
        "metrics": ["fro_error", "fit_time"],
    }
    base.update(kw)
    return ExperimentConfig(**base)


def test_config_from_toml(tmp_path):
    path = tmp_path / "study.toml"
    path.write_text(
        """
name = "study"
n_components = [8, 16]
seeds = 2
metrics = ["fro_error", "spectral_error"]
bandwidth = "median"

[[datasets]]
name = "letter"
n_fit = 100
n_eval = 50

[[methods]]
name = "rff-mc"

[[methods]]
name = "rff-sobol"
label = "QMC RFF"
""",
        encoding="utf-8",
    )
    config = load_config(path)
    assert config.seeds == [0, 1]
    assert config.datasets[0].n_fit == 100
    assert [m.display for m in config.methods] == ["rff-mc", "QMC RFF"]
    assert config.bandwidth == "median"
    again = ExperimentConfig.from_dict(config.to_dict())
    assert again == config


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("n_components = [8]\ndatasets = ['letter']\nmethods = ['rff-mc']\ncolour = 1\n",
         r"unknown key\(s\) 'colour'"),
        ("n_components = [8]\ndatasets = ['letter']\nmethods = ['rff-mc']\n"
         "metrics = ['speed']\n", r"Unknown metric\(s\) \['speed'\]"),
        ("n_components = [0]\ndatasets = ['letter']\nmethods = ['rff-mc']\n",
         "positive integers"),
        ("datasets = ['letter']\nmethods = ['rff-mc']\n", "missing key 'n_components'"),
        ("n_components = [8\n", "not valid TOML"),
        ("n_components = [8]\ndatasets = ['letter']\nmethods = ['rff-mc']\nseeds = [0, -1]\n",
         r"seeds must be a list of distinct integers >= 0 .*; got -1"),
        ("n_components = [8]\ndatasets = ['letter']\nmethods = ['rff-mc']\nmetrics = 'x'\n",
         "metrics must be a list of names; got 'x'"),
        ("n_components = [8]\ndatasets = 'letter'\nmethods = ['rff-mc']\n",
         r"datasets and methods must be lists"),
        ("n_components = [8]\nmethods = ['rff-mc']\n[[datasets]]\nname = 'letter'\n"
         "in_sample = 1\n", r"in_sample must be true or false; got 1"),
        ("n_components = [8]\ndatasets = ['letter']\n[[methods]]\nname = 'rff-mc'\n"
         "kernel = 2\n", r"methods\['rff-mc'\]: kernel must be a string; got 2"),
        ("n_components = [8]\ndatasets = ['letter']\nmethods = ['rff-mc']\n"
         "bandwidth_q = 100\n", r"bandwidth_q \(a percentile\) must be a number in \(0, 100\)"),
    ],
)  # fmt: skip
def test_config_errors_name_the_file(tmp_path, text, message):
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=message) as info:
        load_config(path)
    assert str(path) in str(info.value)
    assert "\n" not in str(info.value)


def test_config_files_that_cannot_be_read(tmp_path):
    with pytest.raises(ValueError, match="is a folder; give the configuration file"):
        load_config(tmp_path)
    path = tmp_path / "study.toml"
    path.write_bytes(b"name = '\xe9t\xe9'\n")  # Latin-1, not UTF-8
    with pytest.raises(ValueError, match=r"not a text file in UTF-8 \(byte 8\)"):
        load_config(path)
    path = tmp_path / "study.json"
    path.write_text("[1, 2]")
    with pytest.raises(ValueError, match="must be a table of keys"):
        load_config(path)
    path.write_bytes(b'\xef\xbb\xbf{"n_components": [8], "datasets": ["letter"], '
                     b'"methods": ["rff-mc"]}')  # fmt: skip
    assert load_config(path).n_components == [8]  # a byte-order mark is no error


def test_runner_writes_tidy_tables_with_provenance(tmp_path):
    config = _small_config(methods=[MethodConfig("test-counting"), MethodConfig("rff-orthogonal")])
    result = run_experiment(config, tmp_path)
    n_cells = 1 * 2 * 2 * 2
    assert result.n_cells == n_cells and result.n_computed == n_cells
    assert len(result.rows) == n_cells * 2  # one row per cell and metric
    assert all(set(r) == set(RESULT_COLUMNS) for r in result.rows)
    keys = {(r["dataset"], r["method"], r["n_components"], r["seed"], r["metric"])
            for r in result.rows}  # fmt: skip
    assert len(keys) == len(result.rows)
    errors = result.values(metric="fro_error")
    assert all(0.0 < e < 2.0 for e in errors)
    with open(tmp_path / "results.csv", newline="") as fh:
        table = list(csv.DictReader(fh))
    assert len(table) == len(result.rows) and list(table[0]) == list(RESULT_COLUMNS)
    doc = json.loads((tmp_path / "results.json").read_text())
    prov = doc["provenance"]
    assert prov["seeds"] == [0, 1]
    assert {"numpy", "scipy", "scikit-learn", "kernelmaps", "python"} <= set(prov["versions"])
    assert prov["machine"]["cpu_count"] >= 1
    assert prov["config"]["n_components"] == [8, 32]
    assert "letter/rbf" in prov["gamma"]
    assert read_results(tmp_path) == read_results(tmp_path / "results.csv")
    assert len(read_results(tmp_path / "results.json")) == len(result.rows)


def test_runner_resumes_without_redoing_finished_cells(tmp_path):
    config = _small_config()
    CALLS.clear()
    seen: list[dict[str, Any]] = []

    def stop_after_three(record: dict[str, Any]) -> None:
        seen.append(record)
        if len(seen) == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_experiment(config, tmp_path, on_cell=stop_after_three)
    assert CALLS == [(8, 0), (8, 1), (32, 0)]
    assert not (tmp_path / "results.csv").exists()
    # A line cut short by a killed process is ignored.
    with open(tmp_path / "cells.jsonl", "a") as fh:
        fh.write('{"key": "trunc')
    CALLS.clear()
    result = run_experiment(config, tmp_path)
    assert CALLS == [(32, 1)]
    assert result.n_computed == 1 and result.n_cells == 4
    assert len(result.values(metric="fro_error")) == 4
    # A larger grid reuses every finished cell; resume=False redoes them all.
    CALLS.clear()
    result = run_experiment(_small_config(n_components=[8, 32, 64]), tmp_path)
    assert sorted(CALLS) == [(64, 0), (64, 1)]
    CALLS.clear()
    run_experiment(config, tmp_path, resume=False)
    assert len(CALLS) == 4


def test_runner_changed_settings_recompute(tmp_path):
    run_experiment(_small_config(), tmp_path)
    CALLS.clear()
    run_experiment(_small_config(bandwidth="median"), tmp_path)
    assert len(CALLS) == 4


def test_runner_records_failures_and_downstream_scores(tmp_path):
    config = _small_config(
        methods=[MethodConfig("test-failing"), MethodConfig("rff-mc")],
        metrics=["fro_error", "downstream", "peak_memory", "n_features_out"],
        seeds=[0],
        n_components=[16],
        datasets=[DatasetConfig("cpu_act", n_fit=100, n_eval=50, preprocess="standard")],
    )
    result = run_experiment(config)
    assert [f["method"] for f in result.failures] == ["test-failing"]
    assert "always fails" in result.failures[0]["message"]
    metrics = {r["metric"]: r["value"] for r in result.rows}
    assert set(metrics) == {"fro_error", "rmse", "peak_memory", "n_features_out"}
    assert metrics["n_features_out"] == 16 and metrics["peak_memory"] > 0
    config.metrics = ["accuracy"]
    config.datasets = [DatasetConfig("letter", n_fit=100, n_eval=50)]
    acc = run_experiment(config).values(metric="accuracy")
    assert len(acc) == 1 and 0.0 <= acc[0] <= 1.0


def test_method_kernel_override_and_refusal():
    config = _small_config(methods=[MethodConfig("rff-mc", kernel="laplacian")], seeds=[0])
    result = run_experiment(config)
    assert {r["kernel"] for r in result.rows} == {"laplacian"}
    config = _small_config(methods=[MethodConfig("binning", kernel="rbf")], seeds=[0])
    result = run_experiment(config)
    assert not result.rows and "cannot approximate" in result.failures[0]["message"]
    assert get_method("binning").supports("laplacian")


def test_structured_methods_are_registered_but_not_default():
    from kernelmaps import Fastfood, StructuredOrthogonalFeatures
    from kernelmaps.cli import DEFAULT_METHODS

    for name, cls in [("fastfood", Fastfood), ("sorf", StructuredOrthogonalFeatures)]:
        assert name in method_names() and name not in DEFAULT_METHODS
        spec = get_method(name)
        assert spec.supports("rbf") and spec.supports("matern")
        assert not spec.supports("laplacian")  # no radial spectral measure
        est = spec.factory(16, {"gamma": 0.5}, 0)
        assert isinstance(est, cls)
        assert (est.n_components, est.kernel_params, est.random_state) == (16, {"gamma": 0.5}, 0)
    methods = [MethodConfig("fastfood"), MethodConfig("sorf", kernel="matern")]
    result = run_experiment(_small_config(methods=methods, n_components=[8], seeds=[0]))
    assert not result.failures
    assert {(r["method"], r["kernel"]) for r in result.rows} == {
        ("fastfood", "rbf"),
        ("sorf", "matern"),
    }
    assert all(np.isfinite(r["value"]) for r in result.rows)


def test_summary_and_table():
    rows = [
        {"dataset": "d", "method": m, "kernel": "rbf", "gamma": 1.0, "n_components": D,
         "seed": s, "metric": "fro_error", "value": v}
        for m, D, s, v in [("a", 8, 0, 0.4), ("a", 8, 1, 0.6), ("a", 32, 0, 0.2),
                           ("a", 32, 1, 0.2), ("b", 8, 0, 0.1)]
    ]  # fmt: skip
    summary = summarize(rows, "fro_error")
    first = summary[0]
    assert first["mean"] == pytest.approx(0.5)
    assert first["std"] == pytest.approx(np.std([0.4, 0.6], ddof=1))
    assert (first["min"], first["max"], first["n"]) == (0.4, 0.6, 2)
    table = format_table(rows).splitlines()
    assert table[0].startswith("relative Frobenius error")
    assert table[1].split() == ["dataset", "method", "kernel", "D=8", "D=32"]
    assert table[3].split() == [
        "d", "a", "Gaussian", "0.5000", "±", "0.1414", "0.2000", "±", "0.0000"
    ]  # fmt: skip
    assert table[4].split() == ["b", "Gaussian", "0.1000", "-"]  # as the figures name it


#: The number of rows of every ``transform`` call of the counting-transform method.
TRANSFORMED: list[int] = []


class _CountingTransform(RandomFourierFeatures):
    """Random Fourier features that count the rows passed to ``transform``."""

    def transform(self, X):
        TRANSFORMED.append(len(X))
        return super().transform(X)


def _counting_transform_factory(n_components, kernel_params, random_state):
    params = dict(kernel_params)
    params.pop("kernel", None)
    return _CountingTransform(
        "rbf", kernel_params=params, n_components=n_components, random_state=random_state
    )


if "test-counting-transform" not in method_names():
    register_method(
        MethodSpec("test-counting-transform", "rbf", _counting_transform_factory, "RFF, counted")
    )


@pytest.mark.parametrize("in_sample", [False, True])
def test_runner_transforms_each_set_of_rows_once(in_sample):
    metrics = ["fro_error", "spectral_error", "max_error", "downstream", "transform_time"]
    config = _small_config(
        datasets=[DatasetConfig("letter", n_fit=120, n_eval=80, in_sample=in_sample)],
        methods=[MethodConfig("test-counting-transform")],
        n_components=[8],
        seeds=[0],
        metrics=metrics,
    )
    TRANSFORMED.clear()
    result = run_experiment(config)
    assert not result.failures
    # The evaluation rows once (timed), the fit rows once (for the in-sample errors and
    # the downstream model): every error norm comes from those features.
    assert sorted(TRANSFORMED) == [80, 120]
    assert {r["metric"] for r in result.rows} == {
        "fro_error", "spectral_error", "max_error", "accuracy", "transform_time"
    }  # fmt: skip


def test_default_study_is_the_shipped_toml():
    from kernelmaps.cli import DEFAULT_DATASETS, DEFAULT_METHODS
    from kernelmaps.experiments import default_study
    from kernelmaps.experiments._config import DEFAULT_STUDY

    study = default_study()
    assert study == load_config(DEFAULT_STUDY).with_options(
        methods=[m for m in DEFAULT_METHODS if m in method_names()]
    )
    assert (
        tuple(d.name for d in study.datasets) == DEFAULT_DATASETS == ("letter", "covtype", "ijcnn1")
    )
    assert study.name == "compare" and study.n_components == [16, 64, 256]
    assert study.seeds == list(range(10))
    assert study.metrics == ["fro_error", "fit_time", "transform_time"]
    assert "rff-mc" in DEFAULT_METHODS and "binning" in DEFAULT_METHODS


def test_with_options_returns_a_new_validated_config():
    base = _small_config(methods=[MethodConfig("rff-mc"), MethodConfig("binning")])
    before = base.to_dict()
    new = base.with_options(kernel="laplacian", seeds=4, n_fit=50, n_components=[4])
    assert base.to_dict() == before  # unchanged
    assert [(m.name, m.kernel) for m in new.methods] == [
        ("rff-mc", "laplacian"), ("binning", "laplacian")
    ]  # fmt: skip
    assert new.seeds == [0, 1, 2, 3] and new.n_components == [4]
    assert new.datasets[0].n_fit == 50 and new.datasets[0].n_eval == 80
    only_rbf = base.with_options(kernel="rbf")
    assert [m.name for m in only_rbf.methods] == ["rff-mc"]  # binning cannot approximate rbf
    files = base.with_options(datasets=["a.csv", "b.csv"], target="y")
    assert [(d.name, d.target) for d in files.datasets] == [("a.csv", "y"), ("b.csv", "y")]
    assert base.with_options() == base


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"kernel": "nope"}, "unknown kernel 'nope'; known kernels: "),
        ({"methods": ["binning"], "kernel": "rbf"}, "none of the chosen methods can approximate"),
        ({"methods": ["nope"]}, "Unknown method 'nope'"),
        ({"n_fit": 1}, r"n_fit must be an integer >= 2"),
        ({"metrics": ["colour"]}, "Unknown metric"),
        ({"bandwidth": "widest"}, "bandwidth must be one of"),
        ({"target": "y"}, "target applies to the data files given with datasets"),
        ({"bandwidth": float("inf")}, "gamma must be a positive finite number; got inf"),
        ({"n_components": [8, 8]}, "n_components lists 8 twice"),
        ({"seeds": 10**9}, "has 2000000000 cells .* more than the limit of 100000"),
        ({"datasets": ["data/a.csv", "b/a.csv"]}, "Two data sets share a name"),
    ],
)
def test_with_options_errors(options, message):
    with pytest.raises(ValueError, match=message):
        _small_config().with_options(**options)


def test_make_model_is_the_fit_pipeline():
    from sklearn.base import clone

    from kernelmaps.experiments import build_pipeline, choose_gamma, make_model

    X = np.random.default_rng(0).random((60, 4))
    y = X @ np.arange(1.0, 5.0)
    model = make_model("rff", "regression", n_components=32, gamma=0.5, random_state=3)
    spec = get_method("rff-mc")
    by_hand = build_pipeline(spec.factory(32, {"gamma": 0.5, "kernel": "rbf"}, 3), "regression")
    assert repr(model) == repr(by_hand)
    assert np.array_equal(clone(model).fit(X, y).predict(X), by_hand.fit(X, y).predict(X))
    classifier = make_model("nystroem", "classification", n_components=16)
    assert type(classifier[-1]).__name__ == "FeatureRidgeClassifier"
    gamma, rule = choose_gamma("rff", X)
    assert gamma > 0 and "median" in rule
    assert choose_gamma("rff", X, gamma=2.0) == (2.0, "given")
    with pytest.raises(ValueError, match="cannot approximate"):
        make_model("binning", kernel="rbf")
    with pytest.raises(ValueError, match="task must be one of"):
        make_model("rff", "clustering")


def test_a_cell_is_one_record_of_its_settings():
    from kernelmaps.experiments._cells import plan

    config = ExperimentConfig(
        datasets=["cpu_act", "letter"], methods=["rff-mc"], n_components=[8, 16], seeds=2
    )
    cells = plan(config)
    assert [(c.dataset.name, c.n_components, c.seed) for c in cells][:3] == [
        ("cpu_act", 8, 0),
        ("cpu_act", 8, 1),
        ("cpu_act", 16, 0),
    ]
    assert len({c.key for c in cells}) == len(cells) == 8
    record = cells[0].record({"kernel": "rbf", "gamma": 0.5})
    assert record == {
        "key": cells[0].key,
        "dataset": "cpu_act",
        "method": "rff-mc",
        "n_components": 8,
        "seed": 0,
        "kernel": "rbf",
        "gamma": 0.5,
    }
    assert cells[0].label == "cpu_act rff-mc D=8 seed=0"
    changed = ExperimentConfig(
        datasets=["cpu_act"], methods=["rff-mc"], n_components=[8], seeds=1, alpha=0.5
    )
    assert plan(changed)[0].key != cells[0].key  # a shared setting changes every cell


def test_format_table_median_shows_the_quartiles_of_the_seeds() -> None:
    from kernelmaps.experiments import format_table

    values = [0.5, 0.1, 0.4, 0.2, 0.3]  # median 0.3, quartiles 0.2 and 0.4 (linear rule)
    rows = [
        {"dataset": "toy", "method": "rff-mc", "kernel": "rbf", "n_components": 8,
         "seed": s, "metric": "fro_error", "value": v}
        for s, v in enumerate(values)
    ]  # fmt: skip
    table = format_table(rows, center="median")
    assert "median [quartiles] over 5 seeds" in table
    assert "0.3000 [0.2000, 0.4000]" in table
    assert "0.3000 ± 0.1581" in format_table(rows)
    with pytest.raises(ValueError, match='center must be "mean" or "median"'):
        format_table(rows, center="mode")
