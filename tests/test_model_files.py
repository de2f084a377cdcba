"""Model files (``kernelmaps fit -o`` / ``kernelmaps predict``): safe to read, exact, atomic.

* crafted files must not run code: pickle and joblib files (plain and compressed) are
  refused without unpickling; skops files naming a type outside the allow-list are refused
  before anything is built (the payloads here create a marker file when run, and each test
  also shows that the payload does run when given the chance, so the test can fail);
* every registered method fitted by ``kernelmaps fit`` reads back with bit-identical
  predictions, and every public estimator's fitted state is on the allow-list;
* a full disk or a read-only folder leaves the previous file intact, with a one-line error;
* overflow and NaN give one-line errors naming the rows or columns, never ``nan`` output.
"""

from __future__ import annotations

import csv
import errno
import io
import json
import os
import pickle
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest

from kernelmaps.exceptions import NonFiniteOutputError
from kernelmaps.experiments import (
    FiniteStandardScaler,
    ModelFileError,
    NonFinitePredictionError,
    SavedModel,
    load_model,
    make_model,
    method_names,
    save_model,
    trusted_model_types,
)

PICKLE_MESSAGE = (
    "a pickle (joblib) file; kernelmaps reads only model files written by 'kernelmaps fit' "
    "(skops format), which cannot run code"
)


# -- helpers ---------------------------------------------------------------------------


def run_cli(capsys, *args: str) -> subprocess.CompletedProcess:
    """``kernelmaps ARGS`` in this process, captured like a subprocess."""
    from kernelmaps.cli import main

    try:
        code = main([str(a) for a in args])
    except SystemExit as exc:  # argparse usage errors
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return subprocess.CompletedProcess(list(args), code, out.out, out.err)


def assert_one_line_error(proc, status: int, *fragments: str) -> None:
    assert proc.returncode == status, (proc.returncode, proc.stderr)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    for fragment in fragments:
        assert fragment in proc.stderr, proc.stderr


def write_csv(path: Path, header: list[str], rows) -> None:
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(np.asarray(rows, dtype=object).tolist())


def training_rows(n: int = 40, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Features for every method (standardised values stay above -1 for the skewed chi2
    map: a column that is mostly near 0 with a few larger values), a smooth regression
    target and text labels."""
    rng = np.random.default_rng(seed)
    X = (rng.random((n, 3)) < 0.2) + 0.1 * rng.random((n, 3))
    y = X @ np.array([1.0, -2.0, 0.5]) + 0.1 * np.sin(5 * X[:, 0])
    labels = np.where(X[:, 0] + X[:, 1] > 0.5, "high", "low")
    return X, y, labels


@pytest.fixture
def model_file(tmp_path):
    """A small model written by ``save_model`` and its training rows."""
    X, y, _ = training_rows()
    pipeline = make_model("rff", n_components=16, gamma=0.5).fit(X, y)
    path = tmp_path / "model.skops"
    save_model(SavedModel(pipeline, ["a", "b", "c"], "y", "regression", "csv"), path)
    return path, X, pipeline


def with_schema(blob: bytes, edit) -> bytes:
    """A copy of the zip archive ``blob`` whose schema.json went through ``edit``."""
    source = zipfile.ZipFile(io.BytesIO(blob))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            content = source.read(info.filename)
            if info.filename == "schema.json":
                content = json.dumps(edit(json.loads(content))).encode()
            target.writestr(info.filename, content)
    return out.getvalue()


def add_metadata(blob: bytes, **fields) -> bytes:
    """``blob`` (a skops archive) with a valid kernelmaps-model.json member."""
    meta = {
        "format": "kernelmaps-model",
        "format_version": 1,
        "feature_names": ["a", "b", "c"],
        "target": "y",
        "task": "regression",
        "data_format": "csv",
        "info": {},
    } | fields
    buffer = io.BytesIO(blob)
    with zipfile.ZipFile(buffer, "a") as archive:
        archive.writestr("kernelmaps-model.json", json.dumps(meta))
    return buffer.getvalue()


# -- crafted files: the payload never runs ---------------------------------------------


class _OpensMarker:
    """Unpickling it calls ``open(marker, "w")``: creates the marker file."""

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _pickles(marker: Path) -> dict[str, bytes]:
    """The payload as plain pickles (protocols 0, 2, 5) and as joblib files."""
    import joblib

    payload = _OpensMarker(marker)
    out = {f"pickle-{p}": pickle.dumps(payload, protocol=p) for p in (0, 2, 5)}
    for compress in (0, ("zlib", 3), ("gzip", 3), ("bz2", 3), ("xz", 3), ("lzma", 3)):
        buffer = io.BytesIO()
        joblib.dump(payload, buffer, compress=compress)
        out[f"joblib-{compress}"] = buffer.getvalue()
    return out


def test_pickle_and_joblib_files_are_refused_without_running_them(tmp_path, capsys):
    marker = tmp_path / "marker"
    files = _pickles(marker)
    # The payload works: unpickling one creates the marker.
    pickle.loads(files["pickle-5"]).close()
    assert marker.exists()
    marker.unlink()
    write_csv(tmp_path / "new.csv", ["a", "b", "c"], [[0.1, 0.2, 0.3]])
    for kind, blob in files.items():
        path = tmp_path / f"evil-{len(kind)}-{abs(hash(kind))}.joblib"
        path.write_bytes(blob)
        with pytest.raises(ModelFileError, match=r"a pickle \(joblib\) file") as info:
            load_model(path)
        assert str(path) in str(info.value) and "Refit with kernelmaps fit" in str(info.value)
        proc = run_cli(capsys, "predict", path, tmp_path / "new.csv")
        assert_one_line_error(proc, 2, str(path), PICKLE_MESSAGE)
        assert not marker.exists(), kind


class _SetsMarker:
    """Building it from a skops file calls ``__setstate__``: creates the marker file."""

    marker = ""

    def __setstate__(self, state):
        Path(state["marker"]).touch()


def test_skops_file_with_a_type_outside_the_allow_list_is_refused(tmp_path, capsys):
    import skops.io
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    marker = tmp_path / "marker"
    evil = _SetsMarker()
    evil.marker = str(marker)
    blob = skops.io.dumps(Pipeline([("scaler", StandardScaler()), ("evil", evil)]))
    name = f"{_SetsMarker.__module__}._SetsMarker"
    # The payload works when its type is trusted: loading builds it and creates the marker.
    skops.io.loads(blob, trusted=[name])
    assert marker.exists()
    marker.unlink()

    path = tmp_path / "evil.skops"
    path.write_bytes(add_metadata(blob))
    with pytest.raises(ModelFileError, match="which kernelmaps does not load") as info:
        load_model(path)
    assert name in str(info.value) and str(path) in str(info.value)
    write_csv(tmp_path / "new.csv", ["a", "b", "c"], [[0.1, 0.2, 0.3]])
    proc = run_cli(capsys, "predict", path, tmp_path / "new.csv")
    assert_one_line_error(proc, 2, "evil.skops", name, "refit with 'kernelmaps fit'")
    assert not marker.exists()


def test_allow_list_is_stricter_than_skops_defaults(tmp_path):
    """scikit-learn's other estimators are trusted by skops by default, not by kernelmaps."""
    import skops.io
    from sklearn.linear_model import Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y, _ = training_rows()
    blob = skops.io.dumps(make_pipeline(StandardScaler(), Ridge()).fit(X, y))
    assert skops.io.get_untrusted_types(data=blob) == []
    path = tmp_path / "ridge.skops"
    path.write_bytes(add_metadata(blob))
    with pytest.raises(ModelFileError, match=r"sklearn\.linear_model\._ridge\.Ridge"):
        load_model(path)


def test_a_forged_type_name_anywhere_in_the_schema_is_refused(model_file, tmp_path):
    path, _, _ = model_file

    def forge(schema):
        # A JSON leaf (skops builds it with json.loads) renamed to os.system.
        stack = [schema]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                if node.get("__loader__") == "JsonNode":
                    node["__module__"], node["__class__"] = "os", "system"
                    return schema
                stack.extend(node.values())
            elif isinstance(node, list):
                stack.extend(node)
        raise AssertionError("no JSON leaf")

    forged = tmp_path / "forged.skops"
    forged.write_bytes(with_schema(path.read_bytes(), forge))
    with pytest.raises(ModelFileError, match=r"os\.system"):
        load_model(forged)

    def other_loader(schema):
        schema["__loader__"] = "ReduceNode"
        return schema

    forged.write_bytes(with_schema(path.read_bytes(), other_loader))
    with pytest.raises(ModelFileError, match="skops node ReduceNode"):
        load_model(forged)


def test_other_files_are_refused_in_one_line(model_file, tmp_path, capsys):
    path, X, _ = model_file
    cases = {}
    cases["folder"] = (tmp_path, "is a folder, not a model file")
    (tmp_path / "text.csv").write_text("a,b\n1,2\n")
    cases["csv"] = (tmp_path / "text.csv", "not a model file written by 'kernelmaps fit'")
    np.savez(tmp_path / "arrays.npz", X=X)
    cases["npz"] = (tmp_path / "arrays.npz", "lacks kernelmaps-model.json")
    (tmp_path / "truncated.skops").write_bytes(path.read_bytes()[:-200])
    cases["truncated"] = (tmp_path / "truncated.skops", "not a model file")
    blob = path.read_bytes()
    newer_path = tmp_path / "newer.skops"
    source = zipfile.ZipFile(io.BytesIO(blob))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for info in source.infolist():
            content = source.read(info.filename)
            if info.filename == "kernelmaps-model.json":
                content = json.dumps(json.loads(content) | {"format_version": 99}).encode()
            archive.writestr(info.filename, content)
    newer_path.write_bytes(out.getvalue())
    cases["newer"] = (newer_path, "model format 99, written by a newer kernelmaps")
    damaged = tmp_path / "damaged.skops"
    damaged.write_bytes(
        with_schema(blob, lambda s: {"__class__": "dict", "__module__": "builtins",
                                     "__loader__": "DictNode", "protocol": s["protocol"]})
    )  # fmt: skip
    cases["damaged"] = (damaged, "a damaged model file")
    import skops.io
    from sklearn.pipeline import Pipeline

    scaler_only = tmp_path / "scaler.skops"
    only = Pipeline([("standardscaler", FiniteStandardScaler())]).fit(X)
    scaler_only.write_bytes(add_metadata(skops.io.dumps(only)))
    cases["no predict"] = (scaler_only, "its pipeline has no predict")
    write_csv(tmp_path / "new.csv", ["a", "b", "c"], X[:2])
    for model, message in cases.values():
        with pytest.raises(ModelFileError, match=message):
            load_model(model)
        proc = run_cli(capsys, "predict", model, tmp_path / "new.csv")
        assert_one_line_error(proc, 2, str(model), message)
    proc = run_cli(capsys, "predict", tmp_path / "missing.skops", tmp_path / "new.csv")
    assert_one_line_error(proc, 2, "missing.skops: no such model file")


def test_save_refuses_what_a_model_file_cannot_hold(tmp_path):
    from sklearn.pipeline import Pipeline

    from kernelmaps import KernelRidge

    X, y, _ = training_rows()
    model = Pipeline([("ridge", KernelRidge(kernel=_linear_kernel, alpha=0.1))]).fit(X, y)
    path = tmp_path / "callable.skops"
    with pytest.raises(ModelFileError, match="which a model file cannot hold") as info:
        save_model(SavedModel(model, ["a", "b", "c"], "y", "regression", "csv"), path)
    assert "_linear_kernel" in str(info.value)
    assert not path.exists() and list(tmp_path.iterdir()) == []


def _linear_kernel(A, B):
    return A @ B.T


# -- round trips ------------------------------------------------------------------------


# the methods kernelmaps registers (other test modules register "test-..." methods)
@pytest.mark.parametrize("method", [m for m in method_names() if not m.startswith("test-")])
def test_every_method_fitted_by_the_command_reads_back_exactly(
    method, tmp_path, capsys, monkeypatch
):
    import kernelmaps.experiments as experiments

    X, y, labels = training_rows()
    write_csv(tmp_path / "reg.csv", ["a", "b", "c", "y"], np.column_stack([X, y]))
    write_csv(tmp_path / "cls.csv", ["a", "b", "c", "kind"], np.column_stack([X, labels]))
    saved: list[SavedModel] = []
    real_save = experiments.save_model

    def recording_save(model, path):
        saved.append(model)
        real_save(model, path)

    monkeypatch.setattr(experiments, "save_model", recording_save)
    for data, target in (("reg.csv", "y"), ("cls.csv", "kind")):
        model = tmp_path / f"{target}.skops"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # small data: IKA's singular-basis warning
            proc = run_cli(capsys, "fit", tmp_path / data, "--target", target, "--method",
                           method, "--n-components", "8", "-o", model)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        loaded = load_model(model)
        fitted = saved[-1]
        assert loaded.feature_names == fitted.feature_names == ["a", "b", "c"]
        assert (loaded.target, loaded.task) == (fitted.target, fitted.task)
        assert loaded.info == json.loads(json.dumps(fitted.info))
        expected = fitted.pipeline.predict(X)
        assert np.array_equal(loaded.pipeline.predict(X), expected)
        assert np.array_equal(loaded.predict(X), expected)
        proc = run_cli(capsys, "predict", model, tmp_path / data, "-o", tmp_path / "p.csv")
        assert proc.returncode == 0, proc.stderr


def _public_estimator_pipelines():
    from tests._instances import check_instances

    for estimator in check_instances():
        yield pytest.param(estimator, id=type(estimator).__name__)


@pytest.mark.parametrize("estimator", list(_public_estimator_pipelines()))
def test_every_public_estimator_reads_back_exactly(estimator, tmp_path):
    """Every public estimator's fitted state is on the allow-list and reads back exactly
    (a feature map followed by a ridge on its features, a model alone)."""
    from sklearn.base import is_classifier
    from sklearn.pipeline import Pipeline

    from kernelmaps import FeatureRidge

    X, y, labels = training_rows(60, seed=1)
    classifier = is_classifier(estimator)
    target = labels if classifier else y
    steps = [("model", estimator)]
    if not hasattr(estimator, "predict"):
        steps.append(("ridge", FeatureRidge(feature_map="passthrough", alpha=0.1)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipeline = Pipeline(steps).fit(X, target)
    task = "classification" if classifier else "regression"
    path = tmp_path / "model.skops"
    save_model(SavedModel(pipeline, ["a", "b", "c"], None, task, "npy"), path)
    loaded = load_model(path).pipeline
    assert np.array_equal(loaded.predict(X), pipeline.predict(X))
    if len(steps) == 2:
        expected, got = pipeline[0].transform(X), loaded[0].transform(X)
        expected = expected.toarray() if hasattr(expected, "toarray") else expected
        got = got.toarray() if hasattr(got, "toarray") else got
        assert np.array_equal(got, expected)


def test_allow_list_holds_only_what_is_needed():
    trusted = set(trusted_model_types())
    assert "sklearn.pipeline.Pipeline" in trusted
    assert "sklearn.preprocessing._data.StandardScaler" in trusted
    assert {t for t in trusted if t.startswith("sklearn.")} == {
        "sklearn.pipeline.Pipeline",
        "sklearn.preprocessing._data.StandardScaler",
        "sklearn.preprocessing._label.LabelBinarizer",
    }
    roots = {t.split(".")[0] for t in trusted}
    assert roots == {"builtins", "kernelmaps", "numpy", "scipy", "sklearn"}
    builtins = {t for t in trusted if t.startswith("builtins.")}
    assert builtins <= {
        f"builtins.{n}" for n in ("dict", "list", "tuple", "str", "int", "float", "bool")
    } | {"builtins.NoneType"}


# -- atomic writes ----------------------------------------------------------------------


def _fit_args(tmp_path: Path, model: Path) -> list:
    X, y, _ = training_rows()
    write_csv(tmp_path / "train.csv", ["a", "b", "c", "y"], np.column_stack([X, y]))
    return ["fit", tmp_path / "train.csv", "--target", "y", "--n-components", "8", "-o", model]


def _no_temporary_files(folder: Path) -> bool:
    return not [p for p in folder.iterdir() if p.name.endswith(".tmp")]


def test_full_disk_leaves_the_previous_model_and_predictions(tmp_path, capsys, monkeypatch):
    folder = tmp_path / "out"
    folder.mkdir()
    model = folder / "model.skops"
    args = _fit_args(tmp_path, model)
    assert run_cli(capsys, *args).returncode == 0
    good_model = model.read_bytes()
    predictions = folder / "p.csv"
    proc = run_cli(capsys, "predict", model, tmp_path / "train.csv", "-o", predictions)
    assert proc.returncode == 0
    good_predictions = predictions.read_bytes()

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    proc = run_cli(capsys, *args[:-2], "--seed", "7", "-o", model)
    assert_one_line_error(proc, 1, "model.skops: no space left on the device")
    assert model.read_bytes() == good_model and _no_temporary_files(folder)
    proc = run_cli(capsys, "predict", model, tmp_path / "train.csv", "-o", predictions)
    assert_one_line_error(proc, 1, "p.csv: no space left on the device")
    assert predictions.read_bytes() == good_predictions and _no_temporary_files(folder)


def test_read_only_folder_gives_one_line(tmp_path, capsys, monkeypatch):
    folder = tmp_path / "ro"
    folder.mkdir()
    model = folder / "model.skops"
    args = _fit_args(tmp_path, model)
    assert run_cli(capsys, *args).returncode == 0
    good = model.read_bytes()
    folder.chmod(0o555)
    try:
        if os.access(folder, os.W_OK):  # root ignores the mode: simulate the file system
            import kernelmaps._atomic

            def read_only(*a, **k):
                raise OSError(errno.EROFS, "Read-only file system")

            monkeypatch.setattr(kernelmaps._atomic.tempfile, "mkstemp", read_only)
            expected = "read-only file system"
        else:
            expected = "permission denied"
        proc = run_cli(capsys, *args)
        assert_one_line_error(proc, 1, f"model.skops: {expected}")
        proc = run_cli(capsys, "predict", model, tmp_path / "train.csv", "-o", folder / "p.csv")
        assert_one_line_error(proc, 1, f"p.csv: {expected}")
    finally:
        folder.chmod(0o755)
    assert model.read_bytes() == good and not (folder / "p.csv").exists()
    assert _no_temporary_files(folder)


def test_output_paths_checked_before_the_work(tmp_path, capsys):
    args = _fit_args(tmp_path, tmp_path / "m.skops")
    proc = run_cli(capsys, *args[:-1], tmp_path / "nowhere" / "m.skops")
    assert_one_line_error(proc, 2, "no such folder for the model file")
    proc = run_cli(capsys, *args[:-1], tmp_path)
    assert_one_line_error(proc, 2, "is a folder; give a file name for the model")


# -- overflow and NaN -------------------------------------------------------------------


def test_fit_on_values_too_large_to_standardise_names_the_column(tmp_path, capsys):
    X, y, _ = training_rows()
    X[3, 1], X[5, 1] = 1e308, -1e308
    write_csv(tmp_path / "huge.csv", ["a", "b", "c", "y"], np.column_stack([X, y]))
    model = tmp_path / "m.skops"
    proc = run_cli(capsys, "fit", tmp_path / "huge.csv", "--target", "y", "-o", model)
    assert_one_line_error(
        proc, 2, "huge.csv: standardising the features overflows float64 in column(s) 'b'",
        "1e+308", "rescale these columns",
    )  # fmt: skip
    assert "NaN" not in proc.stderr and not model.exists()


def test_finite_standard_scaler():
    from sklearn.preprocessing import StandardScaler

    X, _, _ = training_rows()
    ours, theirs = FiniteStandardScaler().fit(X), StandardScaler().fit(X)
    assert np.array_equal(ours.transform(X), theirs.transform(X))
    with pytest.raises(NonFiniteOutputError, match="column index 1: their values"):
        FiniteStandardScaler().fit(np.array([[0.0, 1e200], [1.0, -1e200], [2.0, 0.0]]))
    row = np.array([[0.5, 1e308, 0.5]])
    with pytest.raises(NonFiniteOutputError, match="row 0, counting from 0"):
        ours.transform(row)
    with_nan = np.array([[np.nan, 0.5, 0.5]])
    assert np.isnan(ours.transform(with_nan)[0, 0])  # missing values pass, as in sklearn


def test_predict_refuses_rows_whose_prediction_overflows(tmp_path, capsys):
    X, y, _ = training_rows()
    write_csv(tmp_path / "train.csv", ["a", "b", "c", "y"], np.column_stack([X, y]))
    new = X[:5].copy()
    new[1] = 1e308
    new[3, 2] = -1e308
    write_csv(tmp_path / "new.csv", ["a", "b", "c"], new)
    for method in ("rff", "tensorsketch", "nystroem"):
        model = tmp_path / f"{method}.skops"
        proc = run_cli(capsys, "fit", tmp_path / "train.csv", "--target", "y", "--method",
                       method, "--n-components", "8", "-o", model)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        out = tmp_path / "p.csv"
        proc = run_cli(capsys, "predict", model, tmp_path / "new.csv", "-o", out)
        assert_one_line_error(
            proc, 2, "new.csv: rows 2, 4 (counting data rows from 1)", "overflows float64",
            "rescale these rows",
        )  # fmt: skip
        assert not out.exists()
        proc = run_cli(capsys, "predict", model, tmp_path / "new.csv")
        assert proc.returncode == 2 and "nan" not in proc.stdout.lower()


def test_saved_model_never_returns_non_finite_predictions():
    X, y, labels = training_rows()
    big = X[:6].copy()
    big[4] = 1e200  # finite once standardised; the degree-2 sketch squares it: inf
    for task, target in (("regression", y), ("classification", labels)):
        pipeline = make_model("tensorsketch", task, n_components=8).fit(X, target)
        saved = SavedModel(pipeline, ["a", "b", "c"], None, task, "npy")
        with pytest.raises(NonFiniteOutputError, match="row 4"):
            pipeline.predict(big)  # the model refuses; the saved model names the file's row
        with pytest.raises(NonFinitePredictionError) as info:
            saved.predict(big)
        assert info.value.rows == [4] and info.value.n_rows == 1
        assert np.array_equal(saved.predict(big[:4]), pipeline.predict(big[:4]))


class _RaisingPipeline:
    """A pipeline whose map refuses (NonFiniteOutputError) rows above 1e100."""

    def predict(self, X):
        if np.abs(X).max() > 1e100:
            raise NonFiniteOutputError("overflow")
        return X.sum(axis=1)


def test_rows_are_located_when_the_map_raises():
    X = np.ones((40, 2))
    X[[7, 31], 0] = 1e150
    saved = SavedModel(_RaisingPipeline(), ["a", "b"], None, "regression", "npy")
    with pytest.raises(NonFinitePredictionError, match=r"rows 7, 31, counting from 0") as info:
        saved.predict(X)
    assert info.value.rows == [7, 31] and info.value.magnitude == 1e150
    assert np.array_equal(saved.predict(X[:5]), np.full(5, 2.0))


def test_nan_rows_and_duplicate_columns_at_predict(model_file, tmp_path, capsys):
    path, X, _ = model_file
    new = X[:6].astype(object)
    new[2, 0] = "nan"
    new[5, 1] = "inf"
    write_csv(tmp_path / "nan.csv", ["a", "b", "c"], new)
    proc = run_cli(capsys, "predict", path, tmp_path / "nan.csv")
    # the reader refuses the first non-finite value, naming the file, line and column
    assert_one_line_error(proc, 2, "nan.csv, line 4: the value 'nan' in column 'a' is NaN")
    write_csv(tmp_path / "dup.csv", ["a", "a", "b", "c"], np.column_stack([X[:3, :1], X[:3]]))
    proc = run_cli(capsys, "predict", path, tmp_path / "dup.csv")
    assert_one_line_error(proc, 2, "the header names a column more than once: 'a'")


@pytest.mark.slow
def test_broken_pipe_on_standard_output_is_quiet(model_file, tmp_path):
    path, _, _ = model_file
    rows = np.random.default_rng(0).random((30_000, 3))  # output beyond a pipe's buffer
    write_csv(tmp_path / "many.csv", ["a", "b", "c"], rows)
    command = [sys.executable, "-m", "kernelmaps.cli", "predict", str(path)]
    proc = subprocess.Popen(
        [*command, str(tmp_path / "many.csv")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.read(100)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 1
    assert "Broken pipe" not in err and "Traceback" not in err


def test_a_model_file_larger_than_the_memory_is_refused_before_reading(model_file, monkeypatch):
    import kernelmaps._memory
    from kernelmaps.exceptions import InsufficientMemoryError

    path, _, _ = model_file
    monkeypatch.setattr(kernelmaps._memory, "available_memory", lambda: 1000)
    with pytest.raises(InsufficientMemoryError, match="reading the model file needs"):
        load_model(path)


def test_model_file_keeps_statistics_only_when_asked(tmp_path, capsys):
    X, y, _ = training_rows(n=40)
    write_csv(tmp_path / "reg.csv", ["a", "b", "c", "y"], np.column_stack([X, y]))
    common = ["fit", tmp_path / "reg.csv", "--target", "y", "--n-components", "64"]
    lean, full = tmp_path / "lean.skops", tmp_path / "full.skops"
    assert run_cli(capsys, *common, "-o", lean).returncode == 0
    assert run_cli(capsys, *common, "--keep-statistics", "-o", full).returncode == 0
    lean_model, full_model = load_model(lean), load_model(full)
    np.testing.assert_array_equal(lean_model.predict(X), full_model.predict(X))
    assert lean.stat().st_size < full.stat().st_size
    scaler, ridge = full_model.pipeline[0], full_model.pipeline[-1]
    ridge.partial_fit(scaler.transform(X[:5]), y[:5])  # continues from the kept statistics
    with pytest.raises(ValueError, match="keep_statistics=False"):
        lean_model.pipeline[-1].partial_fit(scaler.transform(X[:5]), y[:5])
