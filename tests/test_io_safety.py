"""Atomic writes, the memory check, the one-line command-line errors, the lazy import."""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from kernelmaps import _memory
from kernelmaps._atomic import atomic_write, describe_os_error
from kernelmaps.exceptions import InsufficientMemoryError, OutputWriteError


def test_atomic_write_replaces_whole_file(tmp_path: Path) -> None:
    target = tmp_path / "out.csv"
    target.write_text("old\n")
    with atomic_write(target) as fh:
        fh.write("new\n")
        assert target.read_text() == "old\n"  # not visible before the rename
    assert target.read_text() == "new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]


def test_atomic_write_binary_and_permissions(tmp_path: Path) -> None:
    target = tmp_path / "out.bin"
    with atomic_write(target, "wb") as fh:
        fh.write(b"\x00\x01")
    assert target.read_bytes() == b"\x00\x01"
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask


def test_atomic_write_exception_keeps_previous_file(tmp_path: Path) -> None:
    target = tmp_path / "model.skops"
    target.write_text("good model")
    with pytest.raises(RuntimeError, match="boom"), atomic_write(target) as fh:
        fh.write("half a mod")
        raise RuntimeError("boom")
    assert target.read_text() == "good model"
    assert [p.name for p in tmp_path.iterdir()] == ["model.skops"]


def test_atomic_write_full_disk_is_one_line(tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "model.skops"
    target.write_text("good model")

    def no_space(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", no_space)
    with pytest.raises(OutputWriteError) as info, atomic_write(target) as fh:
        fh.write("x" * 1000)
    assert info.value.errno == errno.ENOSPC
    message = str(info.value)
    assert "\n" not in message
    assert message == f"{target}: no space left on the device; free some space or write elsewhere."
    assert target.read_text() == "good model"
    assert [p.name for p in tmp_path.iterdir()] == ["model.skops"]


def test_atomic_write_missing_folder(tmp_path: Path) -> None:
    with (
        pytest.raises(OutputWriteError, match="no such folder; create the folder first"),
        atomic_write(tmp_path / "nope" / "out.csv") as fh,
    ):
        fh.write("x")


def test_atomic_write_concurrent_writers_never_collide(tmp_path: Path) -> None:
    target = tmp_path / "results.json"
    errors: list[BaseException] = []

    def write(i: int) -> None:
        try:
            for _ in range(20):
                with atomic_write(target) as fh:
                    fh.write(str(i) * 100)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    content = target.read_text()
    assert len(content) == 100 and len(set(content)) == 1  # one whole write
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"]


@pytest.mark.parametrize(
    ("code", "cause"),
    [
        (errno.EROFS, "read-only file system; write to a writable folder"),
        (errno.EACCES, "permission denied; write to a folder you may write to"),
        (errno.EISDIR, "is a folder; give a file name"),
    ],
)
def test_describe_os_error(code: int, cause: str) -> None:
    assert describe_os_error(OSError(code, os.strerror(code)), "out") == f"out: {cause}."


def test_check_memory_refuses_with_both_numbers(monkeypatch) -> None:
    monkeypatch.setattr(_memory, "available_memory", lambda: 2 * 2**30)
    _memory.check_memory(2**30, "a fitting array", "nothing")
    with pytest.raises(InsufficientMemoryError) as info:
        _memory.check_memory(80e9, "the 100000 x 100000 Gram matrix", "lower n_components")
    assert str(info.value) == (
        "the 100000 x 100000 Gram matrix needs 74.5 GiB but 2.0 GiB of memory is available; "
        "lower n_components."
    )


def test_check_memory_unknown_available_allows(monkeypatch) -> None:
    monkeypatch.setattr(_memory, "available_memory", lambda: None)
    _memory.check_memory(2.0**80, "anything", "nothing")


def test_available_memory_is_positive_on_linux() -> None:
    available = _memory.available_memory()
    if sys.platform.startswith("linux"):
        assert available is not None and available > 0


def test_cli_interrupt_during_start_up(monkeypatch, capsys) -> None:
    import kernelmaps.cli as cli

    def interrupted() -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", interrupted)
    assert cli.main(["compare"]) == 130
    err = capsys.readouterr().err
    assert err.strip() == "kernelmaps: interrupted."


@pytest.mark.parametrize(
    ("exc", "status"),
    [
        (OSError(errno.EROFS, "Read-only file system", "/ro/out"), 1),
        (InsufficientMemoryError("x needs 9 GiB but 1 GiB of memory is available; lower D."), 2),
        (ValueError("first line\n  second line"), 2),
    ],
)
def test_cli_errors_are_one_line(monkeypatch, capsys, exc: BaseException, status: int) -> None:
    import kernelmaps.cli as cli

    real_build = cli.build_parser

    def failing_parser():
        parser = real_build()
        parse = parser.parse_args

        def parse_args(argv):
            args = parse(argv)
            args.run = lambda args: (_ for _ in ()).throw(exc)
            return args

        parser.parse_args = parse_args
        return parser

    monkeypatch.setattr(cli, "build_parser", failing_parser)
    assert cli.main(["methods"]) == status
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("kernelmaps methods: error: ")
    assert "Traceback" not in err


@pytest.mark.slow
def test_import_kernelmaps_cli_is_light() -> None:
    code = (
        "import sys, kernelmaps, kernelmaps.cli; "
        "print(sorted(m for m in ('sklearn', 'scipy', 'dask', 'matplotlib') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_lazy_public_names() -> None:
    import kernelmaps

    for name in kernelmaps.__all__:
        assert getattr(kernelmaps, name) is not None
    assert set(kernelmaps.__all__) <= set(dir(kernelmaps))
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        kernelmaps.Nope
