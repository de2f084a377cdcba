"""Malformed and corrupt data files of every supported format: one clear line each.

Every case of :data:`CASES` is a file that cannot be loaded.  Through the library it raises
:class:`~kernelmaps.datasets.DataFileError` (a ``ValueError``) whose message is one line
naming the file and the problem; through ``kernelmaps fit`` it exits with status 2 and
prints that one line, without a traceback.  The other tests pin the fixes for files that
were read wrongly (a byte order mark, duplicate column names, numbers near the float64
limit, huge svmlight indices, pickled arrays) and the command-line argument checks.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import re
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import kernelmaps._memory
from kernelmaps.cli import main
from kernelmaps.cli._common import bandwidth, positive_float, positive_int
from kernelmaps.datasets import (
    DataFileError,
    file_format,
    load_csv,
    load_file,
    load_npy,
    load_npz,
    load_svmlight,
)
from kernelmaps.exceptions import InsufficientMemoryError

GOOD_CSV = b"a,b,y\n1,2,3\n4,5,6\n7,8,9\n" * 40
GOOD_SVM = b"1 1:0.5 3:2\n-1 2:1\n1 1:1 2:1 3:1\n" * 40


def npy(array: np.ndarray, **kwargs: object) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array, **kwargs)  # type: ignore[arg-type]
    return buf.getvalue()


def npz(**arrays: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def bad_crc_npz() -> bytes:
    """An .npz archive whose 'X' member has one byte changed (its CRC no longer matches)."""
    data = bytearray(npz(X=np.full((4, 3), 7.0), y=np.arange(4.0)))
    seven = np.float64(7.0).tobytes()
    at = bytes(data).index(seven)
    data[at] ^= 0xFF
    return bytes(data)


def object_npy() -> bytes:
    return npy(np.array([[{"a": 1}]], dtype=object), allow_pickle=True)


def big_header_npy() -> bytes:
    """A .npy header declaring a 10^6 x 10^6 array, followed by 16 bytes of data."""
    buf = io.BytesIO()
    header = {"descr": "<f8", "fortran_order": False, "shape": (10**6, 10**6)}
    np.lib.format.write_array_header_1_0(buf, header)
    return buf.getvalue() + bytes(16)


#: (file name, content, regular expression the message must match).
CASES: list[tuple[str, bytes | Callable[[], bytes], str]] = [
    # CSV
    ("empty.csv", b"", r"line 1: is empty"),
    ("header_only.csv", b"a,b,y\n", r"line 2: holds a header but no data rows"),
    ("ragged.csv", b"a,b,y\n1,2,3\n4,5\n", r"line 3: 2 cells where the header has 3"),
    ("dup.csv", b"a,a,b,y\n1,2,3,4\n5,6,7,8\n", r"line 1: .*more than once: 'a' \(columns 1, 2\)"),
    ("dup_target.csv", b"y,x2,x3,y\n1,2,3,4\n", r"more than once: 'y' \(columns 1, 4\)"),
    (
        "text.csv",
        b"a,b,y\n1,2,3\n4,oops,5\n",
        r"line 3: the non-numeric value 'oops' in column 'b'",
    ),
    ("empty_cell.csv", b"a,b,y\n1,,3\n", r"line 2: an empty cell in column 'b'"),
    ("decimal_comma.csv", b"a;b;y\n1;2,5;3\n", r"line 2: .*'2,5'.*decimal comma"),
    (
        "overflow.csv",
        b"a,b,y\n1,2,3\n4,1e400,6\n",
        r"line 3: the value '1e400' in column 'b' is beyond",
    ),
    ("inf.csv", b"a,b,y\n1,-inf,3\n", r"line 2: the value '-inf' in column 'b' is infinite"),
    ("nan.csv", b"a,b,y\n1,2,3\nNaN,5,6\n", r"line 3: the value 'NaN' in column 'a' is NaN"),
    (
        "nan_target.csv",
        b"a,b,y\n1,2,3\n4,5,nan\n",
        r"line 3: the target 'nan' in column 'y' is NaN",
    ),
    ("overflow_target.csv", b"a,y\n1,2\n4,-1e999\n", r"line 3: the target '-1e999'.*beyond"),
    ("latin1.csv", "a,b,y\n1,2,3\né,5,6\n".encode("latin-1"), r"line 3: byte 0xe9 is not UTF-8"),
    ("binary.csv", bytes(range(256)) * 4, r"NUL bytes: it is a binary file"),
    ("gzipped.csv", lambda: gzip.compress(GOOD_CSV), r"gzip-compressed; add \.gz"),
    ("npy_inside.csv", lambda: npy(np.eye(2)), r"not text but a NumPy \.npy array"),
    ("long_field.csv", b'a,y\n"' + b"1" * 200_000 + b'",1\n', r"line 2: not valid CSV"),
    ("only_target.csv", b"y\n1\n2\n", r"line 1: the target 'y' is the only column"),
    ("no_target.csv", b"a,b\n1,2\n", r"line 1: no column named 'y'"),
    ("ragged.tsv", b"a\tb\ty\n1\t2\n", r"line 2: 2 cells where the header has 3"),
    # compressed CSV
    ("garbage.csv.gz", b"this is not gzip", r"is not a valid gzip file"),
    ("plain.csv.gz", GOOD_CSV, r"is not a valid gzip file.*drop the \.gz suffix"),
    ("truncated.csv.gz", lambda: gzip.compress(GOOD_CSV)[:40], r"the gzip stream is cut short"),
    ("empty.csv.gz", lambda: gzip.compress(b""), r"line 1: is empty"),
    ("latin1.csv.gz", lambda: gzip.compress("a,y\n1,2\né,3\n".encode("latin-1")), r"line 3: byte"),
    ("dup.csv.gz", lambda: gzip.compress(b"a,a,y\n1,2,3\n"), r"more than once"),
    ("garbage.csv.bz2", b"BZh9 not bzip2", r"is not a valid bzip2 file"),
    ("truncated.csv.bz2", lambda: bz2.compress(GOOD_CSV)[:40], r"bzip2 stream is cut short"),
    ("garbage.csv.xz", b"not xz", r"is not a valid xz file"),
    ("truncated.csv.xz", lambda: lzma.compress(GOOD_CSV)[:40], r"xz stream is cut short"),
    # svmlight
    ("empty.svm", b"", r"holds no data rows"),
    ("comment_only.svm", b"# nothing here\n", r"holds no data rows"),
    ("negative.svm", b"1 1:2\n1 -1:0.5\n", r"line 2: the feature index -1 is negative"),
    ("unsorted.svm", b"1 3:1 2:1\n", r"line 1: feature indices must increase.*\(2 follows 3\)"),
    ("repeated.svm", b"1 2:1 2:1\n", r"line 1: feature indices must increase"),
    ("bad_value.svm", b"1 1:0.5\n1 2:x\n", r"line 2: the value 'x' of feature 2 is not a number"),
    ("bad_target.svm", b"1 1:0.5\nabc 2:1\n", r"line 2: the target 'abc' is not a number"),
    ("no_target.svm", b"1:0.5 2:1\n", r"line 1: the line starts with '1:0.5', not a target"),
    ("no_colon.svm", b"1 1:0.5 7\n", r"line 1: '7' is not an index:value pair"),
    ("float_index.svm", b"1 1.5:2\n", r"line 1: the feature index '1.5' is not an integer"),
    ("huge_index.svm", b"1 99999999999999999999:1\n", r"line 1: the feature index .* is too large"),
    ("overflow.svm", b"1 1:1\n1 3:1e400\n", r"line 2: the value '1e400' of feature 3 is beyond"),
    ("nan.svm", b"1 1:nan\n", r"line 1: the value 'nan' of feature 1 is NaN"),
    ("inf_target.svm", b"1 1:1\ninf 1:2\n", r"line 2: the target 'inf' is infinite"),
    ("latin1.svm", b"1 1:1\n1 1:\xe9\n", r"line 2: byte 0xe9 is not UTF-8"),
    ("binary.svm", bytes(range(256)) * 4, r"NUL bytes"),
    ("no_features.svm", b"1\n-1\n", r"holds no features"),
    ("garbage.svm.gz", b"not gzip", r"is not a valid gzip file"),
    ("truncated.svm.gz", lambda: gzip.compress(GOOD_SVM)[:40], r"gzip stream is cut short"),
    ("negative.svm.gz", lambda: gzip.compress(b"1 -3:1\n"), r"line 1: the feature index -3"),
    ("garbage.libsvm.bz2", b"not bzip2", r"is not a valid bzip2 file"),
    ("truncated.t.xz", lambda: lzma.compress(GOOD_SVM)[:40], r"xz stream is cut short"),
    # .npy
    ("empty.npy", b"", r"is empty; save the data with numpy\.save"),
    ("garbage.npy", b"garbage, not an array", r"is not a \.npy array"),
    ("zip.npy", lambda: npz(X=np.eye(3)), r"is a zip \(\.npz\) archive.*name it \.npz"),
    ("truncated.npy", lambda: npy(np.eye(30))[:300], r"the array is cut short: .*30 x 30 float64"),
    ("truncated_header.npy", lambda: npy(np.eye(30))[:20], r"not a readable \.npy array"),
    ("huge_header.npy", big_header_npy, r"cut short: its header declares a 1000000 x 1000000"),
    ("bad_version.npy", b"\x93NUMPY\x09\x00" + bytes(64), r"not a readable \.npy array"),
    ("objects.npy", object_npy, r"Python objects .*never loaded.*allow_pickle=False"),
    ("vector.npy", lambda: npy(np.zeros(3)), r"has shape \(3,\); a 2-D array"),
    ("strings.npy", lambda: npy(np.array([["a", "b"]])), r"holds <U1 values; numbers are needed"),
    ("complex.npy", lambda: npy(np.ones((2, 2), complex)), r"complex128 values"),
    ("no_rows.npy", lambda: npy(np.zeros((0, 3))), r"has no rows"),
    ("one_column.npy", lambda: npy(np.ones((3, 1))), r"has no feature columns"),
    ("nan.npy", lambda: npy(np.array([[1.0, 2.0], [np.nan, 3.0]])), r"nan at row 1, column 0"),
    ("inf.npy", lambda: npy(np.array([[1.0, np.inf]], np.float32)), r"inf at row 0, column 1"),
    ("garbage.npy.gz", b"not gzip", r"is not a valid gzip file"),
    ("truncated.npy.gz", lambda: gzip.compress(npy(np.eye(30)))[:60], r"cut short"),
    ("objects.npy.bz2", lambda: bz2.compress(object_npy()), r"allow_pickle=False"),
    # .npz
    ("empty.npz", b"", r"is empty; save the data with numpy\.savez"),
    ("garbage.npz", b"garbage, not a zip", r"is not an \.npz archive"),
    ("npy.npz", lambda: npy(np.eye(3)), r"is a single \.npy array.*name it \.npy"),
    ("truncated.npz", lambda: npz(X=np.eye(3), y=np.ones(3))[:100], r"not a readable \.npz"),
    ("bad_crc.npz", bad_crc_npz, r"not a readable \.npz archive \(Bad CRC-32"),
    ("no_arrays.npz", lambda: npz(), r"no array named 'X' \(or 'data'\); the archive holds \[\]"),
    ("objects.npz", lambda: npz(X=np.array([[{"a": 1}]], dtype=object)), r"'X' holds Python"),
    ("object_target.npz", lambda: npz(X=np.eye(2), y=np.array([None, 1])), r"'y' holds Python"),
    ("mismatch.npz", lambda: npz(X=np.eye(4), y=np.zeros(3)), r"'X' has 4 rows but 'y' has 3"),
    ("vector.npz", lambda: npz(X=np.zeros(4)), r"'X' has shape \(4,\)"),
    ("nan.npz", lambda: npz(X=np.array([[1.0, np.nan]])), r"'X' holds nan at row 0, column 1"),
    ("nan_target.npz", lambda: npz(X=np.eye(2), y=np.array([1.0, np.inf])), r"'y' holds inf"),
    ("big_member.npz", lambda: _zip({"X.npy": big_header_npy()}), r"'X' is cut short"),
    ("compressed.npz.gz", lambda: gzip.compress(npz(X=np.eye(3))), r"decompress it first"),
]


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buf.getvalue()


def _target(name: str) -> str | None:
    """The target a caller gives for the file ``name``: a name for CSV, an index for .npy."""
    fmt = file_format(name)
    return {"csv": "y", "npy": "-1"}.get(fmt or "")


@pytest.fixture(params=CASES, ids=[case[0] for case in CASES])
def bad_file(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, str]:
    name, content, pattern = request.param
    path = tmp_path / name
    path.write_bytes(content() if callable(content) else content)
    return path, pattern


def test_every_supported_format_is_covered():
    formats = {file_format(name) for name, _, _ in CASES}
    assert formats == {"csv", "svmlight", "npy", "npz"}
    suffixes = {Path(name).suffix for name, _, _ in CASES}
    assert {".gz", ".bz2", ".xz", ".csv", ".tsv", ".svm", ".npy", ".npz"} <= suffixes


def test_malformed_file_gives_one_line_naming_it(bad_file):
    path, pattern = bad_file
    with pytest.raises(DataFileError) as info:
        load_file(path, _target(path.name))
    message = str(info.value)
    assert isinstance(info.value, ValueError)
    assert message.startswith(str(path)), message
    assert "\n" not in message
    assert info.value.path == str(path)
    assert len(message) < 400, message
    assert re.search(pattern, message), message


def test_malformed_file_at_the_command_line(bad_file, tmp_path, capsys):
    path, _ = bad_file
    target = _target(path.name)
    argv = ["fit", str(path), "-o", str(tmp_path / "model.joblib")]
    if target is not None:
        argv += ["--target", target]
    status = main(argv)
    out, err = capsys.readouterr()
    assert status == 2
    assert out == ""
    assert err.startswith(f"kernelmaps fit: error: {path}"), err
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert "Traceback" not in err
    assert not (tmp_path / "model.joblib").exists()


# ----------------------------------------------------------------------------------------
# Files read wrongly before: byte order mark, duplicate names, numbers near the limits.


@pytest.mark.parametrize("suffix", [".csv", ".csv.gz", ".csv.bz2", ".csv.xz"])
def test_utf8_byte_order_mark_is_skipped(tmp_path, suffix):
    # Excel's "CSV UTF-8" starts with a byte order mark; the first column name is "y".
    text = "\ufeffy,x\r\n1,2\r\n3,4\r\n5,6\r\n".encode()
    compress = {".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress}
    data = compress[suffix[4:]](text) if suffix != ".csv" else text
    path = tmp_path / f"excel{suffix}"
    path.write_bytes(data)
    ds = load_csv(path, "y")
    assert ds.feature_names == ["x"] and ds.target_name == "y"
    np.testing.assert_array_equal(ds.y, [1, 3, 5])
    np.testing.assert_array_equal(ds.X, [[2], [4], [6]])


def test_utf8_byte_order_mark_in_svmlight(tmp_path):
    path = tmp_path / "bom.svm"
    path.write_bytes(b"\xef\xbb\xbf1 1:0.5\n-1 2:1\n")
    ds = load_svmlight(path)
    np.testing.assert_array_equal(ds.y, [1, -1])
    np.testing.assert_array_equal(ds.X, [[0.5, 0], [0, 1]])


def test_duplicate_column_names_are_refused_with_the_fix(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("y,x2,x3,y\n1,2,3,4\n5,6,7,8\n")
    with pytest.raises(DataFileError, match=r"'y' \(columns 1, 4\).*distinct name"):
        load_csv(path, "y")
    path.write_text("a, a ,b,b,y\n1,2,3,4,5\n")  # names are compared stripped
    with pytest.raises(DataFileError, match=r"'a' \(columns 1, 2\); 'b' \(columns 3, 4\)"):
        load_csv(path)


def test_largest_finite_numbers_are_read_exactly(tmp_path):
    big = float(np.finfo(np.float64).max)
    path = tmp_path / "big.csv"
    path.write_text(f"a,b,y\n1e308,-1e308,1\n{big!r},-{big!r},2\n1e-400,0,3\n")
    ds = load_csv(path, "y")
    np.testing.assert_array_equal(ds.X, [[1e308, -1e308], [big, -big], [0.0, 0.0]])
    assert np.all(np.isfinite(ds.X))
    svm = tmp_path / "big.svm"
    svm.write_text(f"1e308 1:{big!r} 2:-1e308\n")
    ds = load_svmlight(svm)
    np.testing.assert_array_equal(ds.X, [[big, -1e308]])
    np.testing.assert_array_equal(ds.y, [1e308])


def test_number_beyond_float64_names_file_line_and_column(tmp_path):
    path = tmp_path / "over.csv"
    path.write_text("a,b,y\n1,2,3\n4,5,6\n7,1.8e308,9\n")
    with pytest.raises(
        DataFileError, match=r"over\.csv, line 4: the value '1\.8e308' in column 'b'"
    ):
        load_csv(path, "y")


# ----------------------------------------------------------------------------------------
# Memory: sizes are checked before anything large is allocated.


@pytest.fixture
def one_gib(monkeypatch):
    monkeypatch.setattr(kernelmaps._memory, "available_memory", lambda: 2**30)


def test_huge_svmlight_index_is_refused_before_densifying(tmp_path, one_gib):
    path = tmp_path / "huge.svm"
    path.write_text("1 1:0.5\n-1 2000000000:1\n")
    with pytest.raises(InsufficientMemoryError) as info:
        load_svmlight(path)
    message = str(info.value)
    assert str(path) in message and "2 x 2000000000" in message
    assert re.search(r"needs \d+\.\d (GiB|TiB) but 1\.0 GiB of memory is available", message)
    assert "dense=False" in message
    with pytest.raises(InsufficientMemoryError, match="2000000000 feature names"):
        load_svmlight(path, dense=False)  # the generated names alone are 149 GiB


def test_svmlight_kept_sparse_when_asked(tmp_path, one_gib):
    path = tmp_path / "wide.svm"
    path.write_text("1 1:0.5\n-1 100000:1\n")
    ds = load_svmlight(path, dense=False)
    assert ds.X.format == "csr" and ds.shape == (2, 100000) and ds.X.nnz == 2


def test_huge_svmlight_index_at_the_command_line(tmp_path, one_gib, capsys):
    path = tmp_path / "huge.svm"
    path.write_text("1 1:0.5\n-1 2000000000:1\n1 3:1\n")
    assert main(["fit", str(path), "-o", str(tmp_path / "m.joblib")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "but 1.0 GiB of memory is available" in err, err
    assert str(path) in err and "Traceback" not in err


def test_compressed_npy_header_is_checked_before_allocating(tmp_path, one_gib):
    # The size of a compressed stream is unknown: the memory check refuses the declared array.
    path = tmp_path / "huge.npy.gz"
    path.write_bytes(gzip.compress(big_header_npy()))
    with pytest.raises(InsufficientMemoryError, match=r"huge\.npy\.gz: the array, a 1000000 x"):
        load_npy(path)


# ----------------------------------------------------------------------------------------
# Arrays: compressed .npy works; pickled objects never run.


def test_compressed_npy_loads(tmp_path):
    A = np.arange(12.0).reshape(4, 3)
    for suffix, compress in (
        (".gz", gzip.compress),
        (".bz2", bz2.compress),
        (".xz", lzma.compress),
    ):
        path = tmp_path / f"a.npy{suffix}"
        path.write_bytes(compress(npy(A.astype(np.float32))))
        ds = load_file(path, -1)
        np.testing.assert_array_equal(ds.X, A[:, :2])
        np.testing.assert_array_equal(ds.y, A[:, 2])


class _Payload:
    """Unpickling this object would create the file named by ``marker``."""

    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (Path(self.marker),))


def test_pickled_array_payload_never_runs(tmp_path):
    marker = tmp_path / "payload_ran"
    objects = np.empty((1, 1), dtype=object)
    objects[0, 0] = _Payload(str(marker))
    np.save(tmp_path / "evil.npy", objects, allow_pickle=True)
    np.savez(tmp_path / "evil.npz", X=objects)
    with pytest.raises(DataFileError, match="allow_pickle=False"):
        load_npy(tmp_path / "evil.npy")
    with pytest.raises(DataFileError, match="allow_pickle=False"):
        load_npz(tmp_path / "evil.npz")
    out = str(tmp_path / "m.joblib")
    assert main(["fit", str(tmp_path / "evil.npy"), "--target", "0", "-o", out]) == 2
    assert not marker.exists()


# ----------------------------------------------------------------------------------------
# svmlight indices and the target option.


def test_negative_svmlight_index_is_named(tmp_path):
    path = tmp_path / "neg.svm"
    path.write_text("1 -1:0.5 2:1\n")
    with pytest.raises(
        DataFileError, match=r"line 1: the feature index -1 is negative; .*start at 1"
    ):
        load_svmlight(path)


def test_index_zero_in_a_one_based_file(tmp_path):
    path = tmp_path / "zero.svm"
    path.write_text("1 1:0.5\n1 0:1\n")
    with pytest.raises(DataFileError, match=r"line 2: the feature index 0 .*zero_based=True"):
        load_svmlight(path, zero_based=False)
    assert load_svmlight(path).shape == (2, 2)  # "auto" reads it as zero-based


def test_svmlight_with_target_option_is_refused(tmp_path, capsys):
    path = tmp_path / "data.svm"
    path.write_bytes(GOOD_SVM)
    assert main(["fit", str(path), "--target", "foo", "-o", str(tmp_path / "m.joblib")]) == 2
    err = capsys.readouterr().err
    assert "carries its target" in err and "drop --target" in err and err.count("\n") == 1


# ----------------------------------------------------------------------------------------
# Numbers on the command line.


@pytest.mark.parametrize("text", ["inf", "-inf", "nan", "1e400", "Infinity"])
def test_non_finite_numbers_are_refused(text):
    import argparse

    with pytest.raises(argparse.ArgumentTypeError, match="finite"):
        positive_float(text)
    with pytest.raises(argparse.ArgumentTypeError, match=r"finite positive number.*median"):
        bandwidth(text)
    with pytest.raises(argparse.ArgumentTypeError, match="positive integer"):
        positive_int(text)


def test_huge_integer_argument_is_not_an_overflow():
    assert positive_int("1" + "0" * 400) == 10**400


@pytest.mark.parametrize(
    "argv",
    [
        ["compare", "--bandwidth", "inf"],
        ["compare", "--bandwidth", "nan"],
        ["fit", "cpu_act", "--gamma", "inf", "-o", "m.joblib"],
    ],
)
def test_non_finite_option_exits_with_usage_error(argv, capsys):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "not a finite number" in err or "finite positive number" in err
    assert "Traceback" not in err


def test_directory_or_unknown_suffix_at_the_command_line(tmp_path, capsys):
    folder = tmp_path / "data.csv"
    folder.mkdir()
    unknown = tmp_path / "data.xlsx"
    unknown.write_bytes(b"PK\x03\x04")
    for path, expected in ((folder, "is a folder; give a data file"), (unknown, "cannot tell")):
        assert main(["fit", str(path), "--target", "y", "-o", str(tmp_path / "m.joblib")]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"kernelmaps fit: error: {path}") and expected in err
        assert err.count("\n") == 1
