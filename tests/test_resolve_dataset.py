"""One way to name data: files, bundled sets and data-home sets, with their standard split.

The data home is a tiny fake one in ``tmp_path`` with the layout of the real USPS copy
(``usps/usps.npz`` holding ``X_train``, ``y_train``, ``X_test``, ``y_test``), so that no
test depends on a data folder outside the repository.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from kernelmaps.cli import main
from kernelmaps.datasets import (
    BUNDLED,
    DATA_HOME_SETS,
    load_dataset,
    load_from_home,
    load_letter,
    resolve_dataset,
)

N_TRAIN, N_TEST = 12, 6


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A data home holding a 12 + 6 row USPS file of the real layout."""
    folder = tmp_path / "home"
    (folder / "usps").mkdir(parents=True)
    rng = np.random.default_rng(0)
    np.savez(
        folder / "usps" / "usps.npz",
        X_train=rng.random((N_TRAIN, 256), dtype=np.float32),
        y_train=np.arange(N_TRAIN) % 3,
        X_test=rng.random((N_TEST, 256), dtype=np.float32) + 10.0,  # told apart from train
        y_test=np.arange(N_TEST) % 3,
    )
    return folder


def _run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def _one_line_error(code: int, err: str, *fragments: str) -> None:
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for fragment in fragments:
        assert fragment in err, err


def test_bundled_and_home_names_are_disjoint():
    assert not set(BUNDLED) & set(DATA_HOME_SETS)


def test_load_from_home_keeps_the_split(home):
    every = load_from_home("usps", home)
    train = load_from_home("usps", home, subset="train")
    test = load_from_home("usps", home, subset="test")
    assert every.shape == (N_TRAIN + N_TEST, 256) and every.n_train == N_TRAIN
    assert (train.shape[0], test.shape[0]) == (N_TRAIN, N_TEST)
    assert (train.subset, test.subset, every.subset) == ("train", "test", "all")
    assert train.n_train is None and test.n_train is None
    # the parts are the rows of the whole, the training part first; a copy, so equal exactly
    np.testing.assert_array_equal(every.X[:N_TRAIN], train.X)
    np.testing.assert_array_equal(every.X[N_TRAIN:], test.X)
    np.testing.assert_array_equal(every.y, np.concatenate([train.y, test.y]))
    with pytest.raises(ValueError, match=r"got 'tset'\. Did you mean 'test'\?"):
        load_from_home("usps", home, subset="tset")
    with pytest.raises(ValueError, match=r"unknown data-home set 'uspss'\. Did you mean 'usps'"):
        load_from_home("uspss", home)


def test_letter_keeps_libsvm_split():
    train, test = load_letter(subset="train"), load_letter(subset="test")
    assert (train.shape, test.shape) == ((15000, 16), (5000, 16))
    assert load_letter().n_train == 15000 and BUNDLED["letter"].split == (15000, 5000)
    with pytest.raises(ValueError, match="'cpu_act' has no standard train/test split"):
        resolve_dataset("cpu_act", subset="train")


def test_resolution_order_and_provenance(home, tmp_path, monkeypatch):
    found = resolve_dataset("usps", data_home=home, subset="train")
    assert (found.kind, found.format, found.path, found.subset) == (
        "data home", "data home", home, "train"
    )  # fmt: skip
    assert found.label == f"usps (training part; data home {home})"
    assert found.dataset.shape == (N_TRAIN, 256)
    assert resolve_dataset("cpu_act").label == "cpu_act"  # no split, no part named
    monkeypatch.setenv("KERNELMAPS_DATA", str(home))
    assert load_dataset("usps", subset="test").shape == (N_TEST, 256)
    # a path is a file, even where its last part is a data-set name
    (tmp_path / "sub").mkdir()
    rows = tmp_path / "sub" / "usps"
    rows.write_text("a,y\n1,0\n2,1\n")
    with pytest.raises(ValueError, match="cannot tell the format"):
        resolve_dataset(str(rows)).dataset
    # a bare name that is both a data-set name and a file here is ambiguous
    monkeypatch.chdir(tmp_path / "sub")
    with pytest.raises(ValueError, match=r"'usps' names both a data set and the file.*\./usps"):
        resolve_dataset("usps")
    assert resolve_dataset("./usps").kind == "file"


def test_unknown_names_and_files_suggest_the_closest(tmp_path):
    with pytest.raises(ValueError, match=r"unknown data set 'uspss'.*Did you mean 'usps'\?"):
        resolve_dataset("uspss")
    with pytest.raises(ValueError, match=r"unknown data set 'qqq'.*The names: letter, "):
        resolve_dataset("qqq")
    (tmp_path / "train.csv").write_text("a,y\n1,0\n")
    with pytest.raises(FileNotFoundError, match=r"trian\.csv: no such file\. Did you mean"):
        resolve_dataset(str(tmp_path / "trian.csv"))
    with pytest.raises(ValueError, match="has its own target; drop --target"):
        resolve_dataset("letter", target="y")
    with pytest.raises(ValueError, match="no standard train/test split"):
        resolve_dataset(str(tmp_path / "train.csv"), subset="test")


def test_fit_predict_budget_resolve_a_data_home_name(home, tmp_path, capsys):
    model = tmp_path / "usps.skops"
    code, out, err = _run(
        capsys, "fit", "usps", "--data-home", str(home), "--n-components", "16",
        "--gamma", "0.01", "-o", str(model),
    )  # fmt: skip
    assert code == 0, err
    assert f"data: usps (training part; data home {home}): {N_TRAIN} rows, 256 features" in out
    pred = tmp_path / "pred.csv"
    code, out, err = _run(
        capsys, "predict", str(model), "usps", "--data-home", str(home), "-o", str(pred)
    )
    assert code == 0, err
    assert (
        f"predicted {N_TEST} rows" in out and "score on these rows" in out and "accuracy = " in out
    )
    with open(pred, newline="") as fh:
        assert len(list(csv.reader(fh))) == N_TEST + 1  # the header, a row per test row
    args = ("predict", str(model), "usps", "--data-home", str(home), "--subset", "all")
    code, out, err = _run(capsys, *args)
    assert code == 0 and f"predicted {N_TRAIN + N_TEST} rows" in err
    code, out, err = _run(capsys, "budget", "usps", "--data-home", str(home), "--no-measure")
    assert code == 0, err
    assert out.startswith(f"data: usps (training part; data home {home}): {N_TRAIN} rows")
    code, out, err = _run(capsys, "budget", "usps", "--subset", "test", "--data-home", str(home),
                          "--no-measure")  # fmt: skip
    assert code == 0 and out.startswith(f"data: usps (test part; data home {home}): {N_TEST}")


def test_compare_resolves_a_data_home_name(home, tmp_path, capsys):
    code, _, err = _run(
        capsys, "compare", "--datasets", "usps", "--data-home", str(home), "--methods",
        "rff-mc", "--n-components", "8", "--seeds", "1", "--n-fit", "10", "--n-eval", "5",
        "--quiet", "--no-plot", "--output", str(tmp_path / "out"),
    )  # fmt: skip
    assert code == 0, err
    with open(tmp_path / "out" / "results.csv", newline="") as fh:
        assert {r["dataset"] for r in csv.DictReader(fh)} == {"usps"}


def test_command_line_errors_are_one_line_with_a_suggestion(home, tmp_path, capsys):
    out = str(tmp_path / "m.skops")
    code, _, err = _run(capsys, "fit", "uspss", "--data-home", str(home), "-o", out)
    _one_line_error(code, err, "unknown data set 'uspss'", "Did you mean 'usps'?")
    code, _, err = _run(capsys, "budget", "leter", "--no-measure")
    _one_line_error(code, err, "Did you mean 'letter'?")
    code, _, err = _run(capsys, "compare", "--datasets", "uspss", "--data-home", str(home))
    _one_line_error(code, err, "Did you mean 'usps'?")
    rows = tmp_path / "train.csv"
    rows.write_text("a,b,price\n" + "".join(f"{i},{i % 3},{i * 0.5}\n" for i in range(8)))
    code, _, err = _run(capsys, "fit", str(rows), "--target", "Price", "-o", out)
    _one_line_error(code, err, "no column named 'Price'", "Did you mean 'price'?")
    code, _, err = _run(capsys, "fit", "cpu_act", "--subset", "train", "-o", out)
    _one_line_error(code, err, "'cpu_act' has no standard train/test split", "drop --subset")
    code, _, err = _run(capsys, "fit", "usps", "-o", out, "--data-home", str(tmp_path / "no"))
    _one_line_error(code, err, "is not a folder")
