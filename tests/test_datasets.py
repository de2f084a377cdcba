"""Bundled data sets, the data home and the user-file loaders with their errors."""

from __future__ import annotations

import bz2
import gzip
from pathlib import Path

import numpy as np
import pytest

from kernelmaps import datasets
from kernelmaps.datasets import (
    BUNDLED,
    DataFileError,
    load_csv,
    load_dataset,
    load_file,
    load_from_home,
    load_npy,
    load_npz,
    load_svmlight,
)

DATA_DIR = Path(datasets.__file__).parent / "data"


@pytest.mark.parametrize("name", list(BUNDLED))
def test_bundled_dataset_loads_with_documented_shape(name):
    info = BUNDLED[name]
    ds = load_dataset(name)
    assert ds.shape == info.shape
    assert ds.X.dtype == np.float64
    assert np.all(np.isfinite(ds.X))
    assert ds.y is not None and ds.y.shape == (info.shape[0],)
    assert ds.task == info.task
    if info.n_classes is not None:
        assert np.unique(ds.y).size == info.n_classes
    assert len(ds.feature_names) == info.shape[1]
    assert ds.source and ds.licence and ds.description
    X, y = info.loader(return_X_y=True)
    np.testing.assert_array_equal(X, ds.X)
    np.testing.assert_array_equal(y, ds.y)


def test_bundled_files_are_small_and_compressed():
    files = [p for p in DATA_DIR.iterdir() if p.is_file()]
    assert sum(p.stat().st_size for p in files) < 3 * 2**20
    assert all(p.suffix in (".gz", ".bz2") for p in files)
    listed = {f for info in BUNDLED.values() for f in info.files}
    assert listed == {p.name for p in files}


def test_bundled_contents():
    letter = datasets.load_letter()
    assert set(np.unique(letter.y)) == set(range(26))
    assert letter.X.min() >= -1.0 and letter.X.max() <= 1.0
    ijcnn1 = datasets.load_ijcnn1()
    assert sorted(np.unique(ijcnn1.y, return_counts=True)[1]) == [971, 9029]
    cal = datasets.load_california_housing()
    # First block group of the StatLib file, as scikit-learn's fetch_california_housing.
    np.testing.assert_allclose(cal.X[0, :4], [8.3252, 41.0, 880 / 126, 129 / 126])
    assert cal.y[0] == pytest.approx(4.526)
    assert datasets.load_cpu_act().target_name == "usr"
    assert datasets.list_datasets() == list(BUNDLED)


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_csv_with_target_by_name(tmp_path):
    p = _write(tmp_path / "d.csv", "a,b,label\n1,2,x\n3,4.5,y\n5,6,x\n")
    ds = load_csv(p, "label")
    np.testing.assert_array_equal(ds.X, [[1, 2], [3, 4.5], [5, 6]])
    assert list(ds.y) == ["x", "y", "x"]
    assert ds.task == "classification"
    assert ds.feature_names == ["a", "b"]
    unlabelled = load_csv(_write(tmp_path / "u.csv", "a,b\n1,2\n3,4\n"))
    assert unlabelled.y is None and unlabelled.task == "unlabelled"


def test_csv_delimiters_and_compression(tmp_path):
    text = "a;b;t\n1;2;0.5\n3;4;1.5\n5;6;2.25\n"
    p = tmp_path / "d.csv.gz"
    with gzip.open(p, "wt") as fh:
        fh.write(text)
    ds = load_file(p, "t")
    np.testing.assert_array_equal(ds.y, [0.5, 1.5, 2.25])
    assert ds.task == "regression"
    tsv = _write(tmp_path / "d.tsv", "a\tb\n1\t2\n")
    assert load_file(tsv).shape == (1, 2)


def test_csv_missing_target_names_file_line_and_columns(tmp_path):
    p = _write(tmp_path / "d.csv", "a,b,c\n1,2,3\n")
    with pytest.raises(DataFileError, match=r"d\.csv, line 1: no column named 'y'.*a, b, c"):
        load_csv(p, "y")


def test_csv_ragged_row_names_line(tmp_path):
    p = _write(tmp_path / "d.csv", "a,b,y\n1,2,3\n4,5\n6,7,8\n")
    with pytest.raises(DataFileError, match=r"d\.csv, line 3: 2 cells where the header has 3"):
        load_csv(p, "y")


def test_csv_non_numeric_and_empty_cells_name_line_and_column(tmp_path):
    p = _write(tmp_path / "d.csv", "a,b,y\n1,2,3\n4,oops,5\n")
    with pytest.raises(DataFileError, match=r"line 3: the non-numeric value 'oops' in column 'b'"):
        load_csv(p, "y")
    p = _write(tmp_path / "e.csv", "a,b,y\n1,2,3\n4,5,6\n7,,8\n")
    with pytest.raises(DataFileError, match=r"line 4: an empty cell in column 'b'"):
        load_csv(p, "y")
    p = _write(tmp_path / "f.csv", "a,b,y\n1,2,3\n4,5,\n")
    with pytest.raises(DataFileError, match=r"line 3: an empty cell in the target column 'y'"):
        load_csv(p, "y")


def test_csv_empty_and_header_only(tmp_path):
    with pytest.raises(DataFileError, match="is empty"):
        load_csv(_write(tmp_path / "e.csv", ""))
    with pytest.raises(DataFileError, match="no data rows"):
        load_csv(_write(tmp_path / "h.csv", "a,b\n"))


def test_svmlight_and_its_errors(tmp_path):
    p = tmp_path / "d.svm.bz2"
    p.write_bytes(bz2.compress(b"1 1:0.5 3:2\n-1 2:1\n1 1:1 2:1 3:1\n"))
    ds = load_svmlight(p)
    np.testing.assert_array_equal(ds.X, [[0.5, 0, 2], [0, 1, 0], [1, 1, 1]])
    np.testing.assert_array_equal(ds.y, [1, -1, 1])
    bad = _write(tmp_path / "bad.svm", "1 1:0.5\n1 2:x\n")
    with pytest.raises(DataFileError, match=r"bad\.svm, line 2: the value 'x' of feature 2"):
        load_svmlight(bad)
    bad = _write(tmp_path / "bad2.svm", "1 1:0.5\nabc 2:1\n")
    with pytest.raises(DataFileError, match=r"line 2: the target 'abc' is not a number"):
        load_file(bad)


def test_npy_and_npz(tmp_path):
    A = np.arange(12.0).reshape(4, 3)
    np.save(tmp_path / "a.npy", A)
    ds = load_npy(tmp_path / "a.npy", -1)
    np.testing.assert_array_equal(ds.X, A[:, :2])
    np.testing.assert_array_equal(ds.y, A[:, 2])
    np.savez(tmp_path / "b.npz", X=A, y=np.array([0, 1, 0, 1]))
    ds = load_npz(tmp_path / "b.npz")
    assert ds.shape == (4, 3) and ds.task == "classification"
    np.savez(tmp_path / "c.npz", features=A, labels=np.zeros(4))
    with pytest.raises(DataFileError, match=r"no array named 'X'.*np.savez"):
        load_npz(tmp_path / "c.npz")
    np.savez(tmp_path / "d.npz", X=A, y=np.zeros(3))
    with pytest.raises(DataFileError, match="has 4 rows but 'y' has 3 values"):
        load_npz(tmp_path / "d.npz")
    np.save(tmp_path / "e.npy", np.zeros(5))
    with pytest.raises(DataFileError, match="a 2-D array"):
        load_npy(tmp_path / "e.npy")
    with pytest.raises(DataFileError, match="not a column number"):
        load_npy(tmp_path / "a.npy", "price")


def test_load_file_unknown_suffix_and_missing_file(tmp_path):
    with pytest.raises(DataFileError, match="cannot tell the format"):
        load_file(_write(tmp_path / "data.xyz", "1"))
    with pytest.raises(FileNotFoundError, match=r"nope\.csv: no such file"):
        load_file(tmp_path / "nope.csv", "y")
    with pytest.raises(ValueError, match="unknown data set 'nosuchset'"):
        load_dataset("nosuchset")


def test_data_home_argument_and_environment(tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / "german").mkdir(parents=True)
    rows = "\n".join(f"{i},{i % 3},{i % 2 + 1}" for i in range(10))
    _write(home / "german" / "german_fixed.csv", "A1,A2,CLASSIFICACAO\n" + rows + "\n")
    ds = load_from_home("german", home)
    assert ds.shape == (10, 2) and ds.task == "classification"
    monkeypatch.setenv("KERNELMAPS_DATA", str(home))
    assert load_dataset("german").shape == (10, 2)
    assert datasets.list_data_home()["german"] is True
    assert datasets.list_data_home()["usps"] is False
    with pytest.raises(FileNotFoundError, match=r"usps\.npz: missing.*nothing is downloaded"):
        load_from_home("usps")
    monkeypatch.delenv("KERNELMAPS_DATA")
    with pytest.raises(ValueError, match="KERNELMAPS_DATA"):
        load_from_home("usps")
    with pytest.raises(FileNotFoundError, match="is not a folder"):
        load_from_home("usps", tmp_path / "absent")


def test_data_home_damaged_files_name_the_file(tmp_path):
    home = tmp_path / "home"
    (home / "usps").mkdir(parents=True)
    usps = home / "usps" / "usps.npz"
    usps.write_bytes(b"not a zip archive")
    with pytest.raises(DataFileError, match=r"usps\.npz: is not a readable \.npz archive"):
        load_from_home("usps", home)
    np.savez(usps, X_train=np.zeros((2, 256)), y_train=np.zeros(2))
    with pytest.raises(DataFileError, match=r"usps\.npz: no array named 'X_test'"):
        load_from_home("usps", home)
    np.savez(usps, X_train=np.array([[{}]], dtype=object), y_train=np.zeros(1),
             X_test=np.zeros((1, 256)), y_test=np.zeros(1))  # fmt: skip
    with pytest.raises(DataFileError, match=r"usps\.npz: is not a readable .*allow_pickle"):
        load_from_home("usps", home)
    (home / "uci_regression" / "pol").mkdir(parents=True)
    pol = home / "uci_regression" / "pol" / "data.csv.gz"
    pol.write_bytes(gzip.compress(b"1,2,3\n4,5,6\n")[:20])
    with pytest.raises(DataFileError, match=r"data\.csv\.gz: ends early: the gzip stream"):
        load_from_home("pol", home)
    pol.write_bytes(gzip.compress(b"1,2,3\n4,x,6\n"))
    with pytest.raises(DataFileError, match=r"data\.csv\.gz: could not be read"):
        load_from_home("pol", home)
