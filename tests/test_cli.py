"""The ``kernelmaps`` command through its installed entry point (subprocesses)."""

from __future__ import annotations

import csv
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest


def _command() -> list[str]:
    script = Path(sys.executable).with_name("kernelmaps")
    if script.exists():
        return [str(script)]
    found = shutil.which("kernelmaps")
    if found:
        return [found]
    return [sys.executable, "-m", "kernelmaps.cli"]  # pragma: no cover


def run(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None):
    full_env = {**os.environ, "PYTHONWARNINGS": "ignore", **(env or {})}
    return subprocess.run(
        [*_command(), *args], capture_output=True, text=True, cwd=cwd, env=full_env, timeout=300
    )


def run_inprocess(capsys, *args: str) -> subprocess.CompletedProcess:
    """``main(args)`` in this process (no start-up cost), captured like a subprocess."""
    from kernelmaps.cli import main

    try:
        code = main(list(args))
    except SystemExit as exc:  # argparse: --help and usage errors
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return subprocess.CompletedProcess(list(args), code, out.out, out.err)


def _assert_user_error(proc, *fragments: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    for fragment in fragments:
        assert fragment in proc.stderr, proc.stderr


@pytest.mark.slow
def test_golden_small_compare(tmp_path, capsys):
    out = tmp_path / "out"
    proc = run(
        "compare", "--datasets", "letter", "--methods", "rff-mc", "nystroem-uniform",
        "--n-components", "8", "32", "128", "--seeds", "3", "--n-fit", "300", "--n-eval",
        "200", "--output", str(out), "--no-plot",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    # the median and quartiles of the figure, its kernel names
    title = lines.index("relative Frobenius error, median [quartiles] over 3 seeds")
    assert lines[title + 1].split() == ["dataset", "method", "kernel", "D=8", "D=32", "D=128"]
    assert set(lines[title + 2]) == {"-"}
    body = [line.split() for line in lines[title + 3 : title + 5]]
    assert body[0][:3] == ["letter", "rff-mc", "Gaussian"]
    assert body[1][:2] == ["nystroem-uniform", "Gaussian"]
    gamma_line = next(line for line in lines if line.startswith("gamma: "))
    assert gamma_line.startswith("gamma: letter/Gaussian = ")  # the kernel named as above
    for row in body:
        cells = row[-9:]  # three "median [q1, q3]" cells
        errors = [float(cells[i]) for i in (0, 3, 6)]
        # The squared Frobenius error of random features is a sum of independent terms
        # of variance O(1/D), so its root falls as D^{-1/2}: a factor 4 from D = 8 to
        # D = 128 (and Nyström with more landmarks does better still).  Each median is over
        # 3 seeds; requiring only a factor 2 leaves room for the spread of 3 draws.
        assert errors[2] < 0.5 * errors[0], row
        assert errors[0] > errors[1] > errors[2], row
    assert (out / "results.csv").exists() and (out / "results.json").exists()
    assert not (out / "run.lock").exists()  # removed as the run ended
    with open(out / "results.csv", newline="") as fh:
        table = list(csv.DictReader(fh))
    assert len(table) == 2 * 3 * 3 * 3  # methods x D x seeds x default metrics
    # Running again reuses every finished cell.
    again = run_inprocess(
        capsys,
        "compare", "--datasets", "letter", "--methods", "rff-mc", "--n-components", "8",
        "--seeds", "3", "--n-fit", "300", "--n-eval", "200", "--output", str(out), "--no-plot",
    )  # fmt: skip
    assert again.returncode == 0 and "(3 reused from an earlier run)" in again.stdout


@pytest.mark.slow
def test_compare_figure_and_missing_matplotlib(tmp_path, capsys):
    args = ["compare", "--datasets", "ijcnn1", "--methods", "rff-mc", "--n-components", "8",
            "16", "--seeds", "1", "--n-fit", "100", "--n-eval", "50", "--quiet"]  # fmt: skip
    proc = run_inprocess(capsys, *args, "--output", str(tmp_path / "a"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""  # --quiet
    pytest.importorskip("matplotlib")
    assert (tmp_path / "a" / "figure.png").stat().st_size > 1000
    fake = tmp_path / "fake"
    (fake / "matplotlib").mkdir(parents=True)
    (fake / "matplotlib" / "__init__.py").write_text("raise ImportError('no matplotlib')\n")
    proc = run(*args, "--output", str(tmp_path / "b"), env={"PYTHONPATH": str(fake)})
    assert proc.returncode == 0, proc.stderr
    assert "figure skipped" in proc.stderr and 'pip install "kernelmaps[plot]"' in proc.stderr
    assert (tmp_path / "b" / "results.csv").exists()
    assert not (tmp_path / "b" / "figure.png").exists()


@pytest.mark.slow
def test_compare_user_errors(tmp_path, capsys):
    _assert_user_error(run("compare", "--methods", "nope"), "Unknown method 'nope'")
    _assert_user_error(
        run("compare", "--datasets", str(tmp_path / "missing.csv"), "--target", "y",
            "--output", str(tmp_path / "o")),
        "missing.csv: no such file",
    )  # fmt: skip
    _assert_user_error(
        run_inprocess(capsys, "compare", "--n-components", "0"), "expected a positive integer"
    )
    bad = tmp_path / "bad.toml"
    bad.write_text("n_components = [8]\ndatasets = ['letter']\nmethods = ['rff-mc']\nx = 1\n")
    _assert_user_error(
        run_inprocess(capsys, "compare", "--config", str(bad)), str(bad), "unknown key(s) 'x'"
    )
    _assert_user_error(
        run_inprocess(capsys, "compare", "--kernel", "nope"), "unknown kernel 'nope'"
    )


def _regression_csv(path: Path, n: int, rng: np.random.Generator, drop: str | None = None):
    X = rng.uniform(-1, 1, size=(n, 3))
    y = np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2]
    cols = {"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "price": y}
    if drop:
        cols.pop(drop)
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(list(cols))
        writer.writerows(zip(*cols.values(), strict=True))
    return y


@pytest.mark.slow
def test_fit_and_predict_regression_and_classification(tmp_path, capsys):
    rng = np.random.default_rng(0)
    _regression_csv(tmp_path / "train.csv", 300, rng)
    y_new = _regression_csv(tmp_path / "new.csv", 50, rng)
    model = tmp_path / "model.skops"
    proc = run("fit", str(tmp_path / "train.csv"), "--target", "price", "--n-components", "256",
               "-o", str(model))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "task: regression, inferred from the target" in proc.stdout
    assert "median heuristic" in proc.stdout
    proc = run("predict", str(model), str(tmp_path / "new.csv"), "-o", str(tmp_path / "p.csv"))
    assert proc.returncode == 0, proc.stderr
    with open(tmp_path / "p.csv", newline="") as fh:
        pred = [float(r["predicted_price"]) for r in csv.DictReader(fh)]
    assert len(pred) == 50
    # The target is a smooth function of the inputs: the model must beat predicting the mean.
    assert np.mean((np.asarray(pred) - y_new) ** 2) < 0.5 * np.var(y_new)
    assert "score on these rows (their target is present): RMSE = " in proc.stdout
    assert ", R^2 = " in proc.stdout

    X = rng.normal(size=(200, 2))
    labels = np.where(X[:, 0] ** 2 + X[:, 1] ** 2 < 1.0, "inside", "outside")
    with open(tmp_path / "cls.csv", "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["u", "v", "kind"])
        writer.writerows(zip(X[:, 0], X[:, 1], labels, strict=True))
    proc = run_inprocess(
        capsys, "fit", str(tmp_path / "cls.csv"), "--target", "kind", "--method", "nystroem",
        "--n-components", "64", "-o", str(model),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "task: classification (2 classes), inferred from the target" in proc.stdout
    proc = run_inprocess(capsys, "predict", str(model), str(tmp_path / "cls.csv"))
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.splitlines()
    assert out[0] == "predicted_kind" and set(out[1:]) <= {"inside", "outside"}
    assert len(out) == 201


@pytest.mark.slow
def test_fit_and_predict_user_errors(tmp_path, capsys):
    rng = np.random.default_rng(1)
    _regression_csv(tmp_path / "train.csv", 60, rng)
    _regression_csv(tmp_path / "no_b.csv", 10, rng, drop="b")
    model = tmp_path / "m.skops"
    _assert_user_error(
        run("fit", str(tmp_path / "train.csv"), "--target", "cost", "-o", str(model)),
        "train.csv, line 1: no column named 'cost'", "a, b, c, price",
    )  # fmt: skip
    (tmp_path / "ragged.csv").write_text("a,b,y\n1,2,3\n4,5\n")
    _assert_user_error(
        run_inprocess(capsys, "fit", str(tmp_path / "ragged.csv"), "--target", "y", "-o",
                      str(model)),
        "ragged.csv, line 3", "ragged row",
    )  # fmt: skip
    _assert_user_error(
        run_inprocess(capsys, "fit", str(tmp_path / "train.csv"), "-o", str(model)), "--target"
    )
    proc = run_inprocess(capsys, "fit", str(tmp_path / "train.csv"), "--target", "price",
                         "--n-components", "32", "-o", str(model))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    _assert_user_error(
        run("predict", str(model), str(tmp_path / "no_b.csv")), "lacks 1 column", "b"
    )
    _assert_user_error(
        run_inprocess(capsys, "predict", str(tmp_path / "train.csv"), str(tmp_path / "no_b.csv")),
        "not a model file",
    )  # fmt: skip


@pytest.mark.slow
def test_datasets_methods_and_help(tmp_path, capsys, monkeypatch):
    proc = run("datasets", env={"KERNELMAPS_DATA": ""})
    assert proc.returncode == 0, proc.stderr
    for name in ("letter", "covtype", "cpu_act", "california_housing", "ijcnn1"):
        assert name in proc.stdout
    assert "data home: not set" in proc.stdout
    proc = run("--help")
    assert proc.returncode == 0 and "examples:" in proc.stdout
    proc = run_inprocess(capsys, "datasets", "--data-home", str(tmp_path))
    assert proc.returncode == 0 and "usps" in proc.stdout and "missing" in proc.stdout
    proc = run_inprocess(capsys, "methods")
    assert proc.returncode == 0 and "rff-mc" in proc.stdout
    monkeypatch.setenv("COLUMNS", "100")
    for command in (["compare"], ["fit"], ["predict"], ["datasets"], ["methods"]):
        proc = run_inprocess(capsys, *command, "--help")
        assert proc.returncode == 0 and "examples:" in proc.stdout, command


def test_compare_on_a_user_file_and_array_models(tmp_path, capsys):
    rng = np.random.default_rng(2)
    _regression_csv(tmp_path / "mine.csv", 120, rng)
    proc = run_inprocess(
        capsys, "compare", "--datasets", str(tmp_path / "mine.csv"), "--target", "price",
        "--methods", "rff-mc", "--n-components", "8", "--seeds", "1", "--n-fit", "60",
        "--n-eval", "40", "--quiet", "--no-plot", "--output", str(tmp_path / "out"),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    with open(tmp_path / "out" / "results.csv", newline="") as fh:
        assert {r["dataset"] for r in csv.DictReader(fh)} == {"mine"}

    X = rng.normal(size=(80, 4))
    np.savez(tmp_path / "train.npz", X=X, y=X[:, 0] - X[:, 1])
    model = tmp_path / "m.skops"
    proc = run_inprocess(
        capsys, "fit", str(tmp_path / "train.npz"), "--n-components", "16", "-o", str(model)
    )
    assert proc.returncode == 0, proc.stderr
    np.save(tmp_path / "new.npy", X[:5, :3])
    _assert_user_error(
        run_inprocess(capsys, "predict", str(model), str(tmp_path / "new.npy")),
        "has 3 feature columns but the model was fitted on 4",
    )
    np.save(tmp_path / "ok.npy", X[:5])
    proc = run_inprocess(capsys, "predict", str(model), str(tmp_path / "ok.npy"))
    assert proc.returncode == 0 and len(proc.stdout.splitlines()) == 6


@pytest.mark.slow
def test_module_entry_points_and_default_study_help(capsys, monkeypatch):
    from kernelmaps.experiments import default_study
    from kernelmaps.kernels import kernel_names

    for module in ("kernelmaps", "kernelmaps.cli"):
        proc = subprocess.run(
            [sys.executable, "-m", module, "--version"], capture_output=True, text=True,
            timeout=300,
        )  # fmt: skip
        assert proc.returncode == 0 and proc.stdout.startswith("kernelmaps "), proc.stderr
    monkeypatch.setenv("COLUMNS", "10000")  # one line per option
    text = run_inprocess(capsys, "compare", "--help").stdout
    study = default_study()
    assert f"data sets {', '.join(d.name for d in study.datasets)};" in text
    assert f"methods {', '.join(m.name for m in study.methods)};" in text
    kernel_help = next(line for line in text.splitlines() if line.strip().startswith("--kernel"))
    assert all(name in kernel_help for name in kernel_names())


def test_compare_kernel_leaves_out_methods_with_a_note(tmp_path, capsys):
    study = tmp_path / "study.toml"
    study.write_text(
        'n_components = [8]\nseeds = 1\n[[datasets]]\nname = "letter"\nn_fit = 60\n'
        'n_eval = 30\n[[methods]]\nname = "rff-mc"\n[[methods]]\nname = "binning"\n'
    )
    args = ("compare", "--config", str(study), "--no-plot", "-q", "-o", str(tmp_path / "o"))
    proc = run_inprocess(capsys, *args, "--kernel", "rbf")
    assert proc.returncode == 0, proc.stderr
    assert "note: leaving out binning: they cannot approximate the 'rbf' kernel." in proc.stderr
    with open(tmp_path / "o" / "results.csv", newline="") as fh:
        assert {(r["method"], r["kernel"]) for r in csv.DictReader(fh)} == {("rff-mc", "rbf")}
    _assert_user_error(
        run_inprocess(capsys, *args, "--methods", "binning", "--kernel", "rbf"),
        "none of the chosen methods can approximate the 'rbf' kernel",
    )
    _assert_user_error(
        run_inprocess(capsys, *args, "--target", "y"),
        "--target applies to data files given with --datasets",
    )


def test_compare_refuses_a_csv_file_without_its_target(tmp_path, capsys):
    # Without --target, the target column would be one of the features (and change gamma).
    _regression_csv(tmp_path / "train.csv", 40, np.random.default_rng(0))
    out = tmp_path / "out"
    args = (
        "compare", "--datasets", str(tmp_path / "train.csv"), "--methods", "rff-mc",
        "--n-components", "8", "--seeds", "1", "--quiet", "--no-plot", "--output", str(out),
    )  # fmt: skip
    proc = run_inprocess(capsys, *args)
    _assert_user_error(
        proc,
        f"{tmp_path / 'train.csv'}: give the target column with --target NAME, so that it is "
        "not taken as a feature; its columns are: a, b, c, price.",
    )
    assert proc.stderr.count("\n") == 1 and proc.stdout == ""
    assert not out.exists()
    assert run_inprocess(capsys, *args, "--target", "price").returncode == 0


def test_compare_takes_the_target_a_data_file_carries(tmp_path):
    from kernelmaps.cli import compare

    (tmp_path / "rows.svm").write_text("1 1:0.5 2:1\n0 1:1.5\n1 2:2\n0 1:3 2:1\n")
    X = np.random.default_rng(0).random((10, 3))
    np.savez(tmp_path / "rows.npz", X=X, y=X[:, 0])
    for name in ("rows.svm", "rows.npz"):
        compare._check_target(str(tmp_path / name))  # no error: the file names its target
    compare._check_target("letter")  # a bundled set has its target


def _verdict_counts(csv_path: Path, baseline: str, challenger: str) -> tuple[int, int, int]:
    """Points, wins and significant wins of ``challenger`` over ``baseline`` on fro_error,
    recomputed from results.csv (lower is better; two standard errors of the difference of
    the means, ddof=1)."""
    values: dict[tuple[str, str, int], list[float]] = {}
    with open(csv_path, newline="") as fh:
        for r in csv.DictReader(fh):
            if r["metric"] == "fro_error":
                key = (r["dataset"], r["method"], int(r["n_components"]))
                values.setdefault(key, []).append(float(r["value"]))
    points = wins = significant = 0
    for (dataset, method, d), base in values.items():
        chal = values.get((dataset, challenger, d))
        if method != baseline or chal is None:
            continue
        points += 1
        gain = np.mean(base) - np.mean(chal)
        se = np.sqrt(np.var(base, ddof=1) / len(base) + np.var(chal, ddof=1) / len(chal))
        wins += bool(gain > 0)
        significant += bool(gain > 2 * se)
    return points, wins, significant


def test_compare_prints_and_writes_the_verdicts(tmp_path, capsys):
    import json

    from kernelmaps.experiments._verdicts import ONE_SEED, RULE

    out = tmp_path / "out"
    args = ("compare", "--datasets", "letter", "--methods", "rff-mc", "rff-orthogonal",
            "nystroem-uniform", "nystroem-kmeans", "--n-components", "8", "32", "--n-fit",
            "150", "--n-eval", "80", "--no-plot")  # fmt: skip
    proc = run_inprocess(capsys, *args, "--seeds", "2", "--output", str(out))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    head = lines.index(
        "verdicts on the relative Frobenius error (lower is better), at each (data set, D) "
        "both ran:"
    )
    assert head > lines.index("relative Frobenius error, median [quartiles] over 2 seeds")
    block = lines[head + 1 : head + 3]
    assert lines[head + 3] == RULE and lines.count(RULE) == 1
    assert next(i for i, line in enumerate(lines) if " cells in " in line) > head + 3
    assert not any("QMC" in line for line in lines)  # rff-sobol did not run
    expected = {  # in the order of STUDY_PAIRS: the study's pairs, then the newer ones
        "uniform vs k-means Nyström": ("nystroem-uniform", "nystroem-kmeans"),
        "RFF vs orthogonal RFF": ("rff-mc", "rff-orthogonal"),
    }
    for line, (label, (baseline, challenger)) in zip(block, expected.items(), strict=True):
        points, wins, significant = _verdict_counts(out / "results.csv", baseline, challenger)
        assert line.split(":")[0].strip() == label
        assert (
            f"{challenger} beats {baseline} at {wins} of {points} points, "
            f"significantly at {significant}"
        ) in line, line
        assert points == 2
    data = json.loads((out / "results.json").read_text())
    assert list(data) == ["provenance", "failures", "verdicts", "results"]
    written = data["verdicts"]["by_metric"]["fro_error"]
    assert [(v["label"], v["n_points"]) for v in written] == [(k, 2) for k in expected]
    # One seed: the lines give wins only, and say why there is no significance.
    proc = run_inprocess(capsys, *args, "--seeds", "1", "--output", str(tmp_path / "one"))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert ONE_SEED in lines and RULE not in lines
    assert not any("significantly" in line for line in lines)
    # --quiet prints nothing, and results.json still holds the verdicts; labels of a study
    # are shown, the pairs found through the registry names.
    study = tmp_path / "study.toml"
    study.write_text(
        'n_components = [8]\nseeds = 2\nmetrics = ["fro_error"]\n[[datasets]]\n'
        'name = "letter"\nn_fit = 60\nn_eval = 30\n[[methods]]\nname = "rff-mc"\n'
        'label = "MC"\n[[methods]]\nname = "rff-orthogonal"\nlabel = "ORF"\n'
    )
    labelled = tmp_path / "labelled"
    proc = run_inprocess(capsys, "compare", "--config", str(study), "--no-plot", "-q",
                         "-o", str(labelled))  # fmt: skip
    assert proc.returncode == 0 and proc.stdout == "", proc.stderr
    (v,) = json.loads((labelled / "results.json").read_text())["verdicts"]["by_metric"]["fro_error"]
    assert (v["label"], v["baseline"], v["challenger"]) == ("RFF vs orthogonal RFF", "MC", "ORF")
    proc = run_inprocess(capsys, "compare", "--config", str(study), "--no-plot",
                         "-o", str(labelled))  # fmt: skip
    assert "  RFF vs orthogonal RFF: ORF beats MC at " in proc.stdout


def test_compare_goes_on_when_the_verdicts_cannot_be_written(tmp_path, capsys, monkeypatch):
    import errno

    from kernelmaps import experiments
    from kernelmaps.exceptions import OutputWriteError

    def full_disk(out_dir):
        raise OutputWriteError(errno.ENOSPC, f"{out_dir}: no space left on the device")

    monkeypatch.setattr(experiments, "write_verdicts", full_disk)
    out = tmp_path / "o"
    proc = run_inprocess(
        capsys, "compare", "--datasets", "letter", "--methods", "rff-mc", "rff-orthogonal",
        "--n-components", "8", "--seeds", "2", "--n-fit", "60", "--n-eval", "30", "--no-plot",
        "-o", str(out),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert f"warning: the verdicts are not in {out / 'results.json'} (the results are): " in (
        proc.stderr
    )
    assert "no space left on the device" in proc.stderr
    assert "RFF vs orthogonal RFF: rff-orthogonal beats rff-mc at " in proc.stdout
    assert (out / "results.csv").exists() and (out / "results.json").exists()


def test_fit_tune_prints_the_choice_and_saves_the_best_model(tmp_path, capsys):
    rng = np.random.default_rng(2)
    y_train = _regression_csv(tmp_path / "train.csv", 300, rng)
    y_new = _regression_csv(tmp_path / "new.csv", 50, rng)
    model = tmp_path / "model.skops"
    proc = run_inprocess(
        capsys, "fit", str(tmp_path / "train.csv"), "--target", "price", "--n-components",
        "64", "--tune", "--cv", "3", "-o", str(model),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "gamma searched around" in proc.stdout
    lines = proc.stdout.splitlines()
    chosen = [line for line in lines if line.startswith("chosen:")]
    found = re.search(r"\(3-fold RMSE (\S+), R\^2 (\S+)\)$", chosen[0])
    assert len(chosen) == 1 and found, chosen
    # R^2 = 1 - MSE / Var(y), to the rounding of the printed RMSE (4 digits) and R^2
    rmse, r2 = float(found[1]), float(found[2])
    mse_over_var = rmse**2 / np.var(y_train)
    assert abs(r2 - (1.0 - mse_over_var)) <= 5e-5 + 1e-3 * mse_over_var
    assert "3-fold RMSE, the best over alpha:" in lines
    assert "D=8" in proc.stdout and "D=64" in proc.stdout  # the curve: D / 8 ... D
    table = lines[lines.index("3-fold RMSE, the best over alpha:") + 2 :][:3]
    assert all(float(cell) >= 0 for row in table for cell in row.split()[1:])  # errors
    assert re.search(r"\(tuned\); training RMSE = \S+, R\^2 = \S+$", proc.stdout, re.M)
    # the best number of features of this smooth target is the largest tried
    hint = "the best D is the largest tried (64): try a larger --n-components"
    assert (hint in proc.stdout) == ("n_components = 64 " in chosen[0])
    proc = run_inprocess(capsys, "predict", str(model), str(tmp_path / "new.csv"))
    assert proc.returncode == 0, proc.stderr
    pred = np.array([float(v) for v in proc.stdout.splitlines()[1:]])
    assert np.mean((pred - y_new) ** 2) < 0.5 * np.var(y_new)
    _assert_user_error(
        run_inprocess(capsys, "fit", str(tmp_path / "train.csv"), "--target", "price",
                      "--cv", "3", "-o", str(model)),
        "add --tune",
    )  # fmt: skip


@pytest.mark.parametrize(
    ("cv", "name"), [(3, "3-fold accuracy"), (None, "leave-one-out mean squared error of the")]
)
def test_tune_report_of_a_classifier_names_its_number(cv, name):
    import argparse

    from kernelmaps import FeatureRidgeClassifierCV, RandomFourierFeatures
    from kernelmaps.cli import _tuning

    rng = np.random.default_rng(0)
    X = rng.normal(size=(90, 2))
    y = np.where(X[:, 0] ** 2 + X[:, 1] ** 2 < 1.0, "in", "out")
    search = FeatureRidgeClassifierCV(
        RandomFourierFeatures(n_components=16, random_state=0),
        gammas=[0.5, 2.0], n_components_grid=[8, 16], cv=cv, refine_gamma=0,
    ).fit(X, y)  # fmt: skip
    text = _tuning.report(search, argparse.Namespace(plot=None), y)
    lines = text.splitlines()
    assert f"({name}" in lines[0] and "R^2" not in text
    values = [float(c) for row in lines[3:5] for c in row.split()[1:]]
    assert all(0.0 <= v <= (1.0 if cv else 4.0) for v in values)  # accuracy; MSE of +-1


def _circle_csv(path: Path, n: int, rng: np.random.Generator) -> None:
    X = rng.normal(size=(n, 2))
    labels = np.where(X[:, 0] ** 2 + X[:, 1] ** 2 < 1.0, "inside", "outside")
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["u", "v", "kind"])
        writer.writerows(zip(X[:, 0], X[:, 1], labels, strict=True))


def test_fit_task_option_and_its_alias(tmp_path, capsys):
    rng = np.random.default_rng(2)
    _circle_csv(tmp_path / "cls.csv", 80, rng)
    model = tmp_path / "m.skops"
    common = [str(tmp_path / "cls.csv"), "--target", "kind", "--n-components", "16", "-o",
              str(model)]  # fmt: skip
    proc = run_inprocess(capsys, "fit", *common, "--task", "classification")
    assert proc.returncode == 0, proc.stderr
    assert "task: classification (2 classes), from --task" in proc.stdout
    proc = run_inprocess(capsys, "fit", *common, "--model", "classifier")
    assert "task: classification (2 classes), from --model" in proc.stdout
    _assert_user_error(
        run_inprocess(capsys, "fit", *common, "--task", "regression"),
        "cls.csv: the target holds text labels", "use --task classification",
    )  # fmt: skip
    _assert_user_error(
        run_inprocess(capsys, "fit", *common, "--task", "regression", "--model", "classifier"),
        "--task regression and --model classifier name different tasks; give only --task.",
    )  # fmt: skip


def test_predict_proba_of_a_regression_model_is_one_line_error(tmp_path, capsys):
    rng = np.random.default_rng(3)
    _regression_csv(tmp_path / "train.csv", 60, rng)
    model = tmp_path / "m.skops"
    proc = run_inprocess(capsys, "fit", str(tmp_path / "train.csv"), "--target", "price",
                         "--n-components", "16", "-o", str(model))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    _assert_user_error(
        run_inprocess(capsys, "predict", str(model), str(tmp_path / "train.csv"), "--proba"),
        "m.skops: a regression model has no class probabilities; drop --proba",
    )  # fmt: skip


def test_predict_proba_writes_one_column_per_class(tmp_path, capsys):
    rng = np.random.default_rng(4)
    _circle_csv(tmp_path / "cls.csv", 200, rng)
    model = tmp_path / "m.skops"
    proc = run_inprocess(capsys, "fit", str(tmp_path / "cls.csv"), "--target", "kind",
                         "--n-components", "64", "-o", str(model))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "p.csv"
    proc = run_inprocess(capsys, "predict", str(model), str(tmp_path / "cls.csv"), "--proba",
                         "-o", str(out))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "predicted probabilities of 200 rows" in proc.stdout
    assert "log-loss = " in proc.stdout and "expected calibration error = " in proc.stdout
    with open(out, newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0]) == ["proba_inside", "proba_outside"]
    P = np.array([[float(r["proba_inside"]), float(r["proba_outside"])] for r in rows])
    assert P.shape == (200, 2) and np.all((P >= 0) & (P <= 1))
    # written to 10 significant digits: each row sums to 1 within that rounding
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=2e-10)
    # the model's own predict_proba, columns in the order of its classes_, to 10 digits
    from kernelmaps.experiments import load_model

    saved = load_model(model)
    X = np.loadtxt(tmp_path / "cls.csv", delimiter=",", skiprows=1, usecols=(0, 1))
    assert list(saved.pipeline.classes_) == ["inside", "outside"]
    np.testing.assert_allclose(P, saved.pipeline.predict_proba(X), rtol=1e-9, atol=1e-12)


def test_predict_std_and_interval_of_a_regression_model(tmp_path, capsys):
    rng = np.random.default_rng(5)
    _regression_csv(tmp_path / "train.csv", 120, rng)
    model = tmp_path / "m.skops"
    fit = ["fit", str(tmp_path / "train.csv"), "--target", "price", "--n-components", "16",
           "-o", str(model)]  # fmt: skip
    assert run_inprocess(capsys, *fit).returncode == 0
    _assert_user_error(
        run_inprocess(capsys, "predict", str(model), str(tmp_path / "train.csv"), "--std"),
        "m.skops: the model file holds no posterior", "--keep-statistics",
    )  # fmt: skip
    proc = run_inprocess(capsys, *fit, "--keep-statistics")
    assert proc.returncode == 0, proc.stderr
    from kernelmaps.experiments import load_model

    saved = load_model(model)
    X = np.loadtxt(tmp_path / "train.csv", delimiter=",", skiprows=1)[:, :-1]
    steps, final = saved.pipeline[:-1], saved.pipeline[-1]
    for option, header, expected in [
        (["--std"], ["prediction", "std"], saved.pipeline.predict(X, return_std=True)),
        (["--interval", "0.8"], ["prediction", "lower", "upper"],
         (final.predict(steps.transform(X)), *final.predict_interval(steps.transform(X), 0.8))),
    ]:  # fmt: skip
        out = tmp_path / "p.csv"
        proc = run_inprocess(capsys, "predict", str(model), str(tmp_path / "train.csv"),
                             *option, "-o", str(out))  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert ("negative log predictive density" if option == ["--std"] else "coverage = ") in (
            proc.stdout
        )
        with open(out, newline="") as fh:
            rows = list(csv.reader(fh))
        assert rows[0] == header
        # written to 10 significant digits
        np.testing.assert_allclose(np.array(rows[1:], dtype=float), np.column_stack(expected),
                                   rtol=1e-9)  # fmt: skip
    _assert_user_error(
        run_inprocess(capsys, "predict", str(model), str(tmp_path / "train.csv"), "--interval",
                      "1.5"),
        "--interval: the coverage must be in (0, 1)",
    )  # fmt: skip
    _assert_user_error(
        run_inprocess(capsys, "predict", str(model), str(tmp_path / "train.csv"), "--std",
                      "--proba"),
        "give at most one of --std, --proba.",
    )  # fmt: skip
