"""Figures drawn from result tables (skipped only when matplotlib is not installed)."""

from __future__ import annotations

import csv
import errno
import os

import pytest

pytest.importorskip("matplotlib")

from kernelmaps import plotting
from kernelmaps.experiments import RESULT_COLUMNS


def _rows():
    rows = []
    for dataset in ("letter", "covtype"):
        for method, scale in (("rff-mc", 1.0), ("nystroem-kmeans", 0.2)):
            for D in (8, 32, 128):
                for seed in (0, 1):
                    for metric, value in (("fro_error", scale / D**0.5 * (1 + 0.1 * seed)),
                                          ("accuracy", 1 - scale / D**0.5)):  # fmt: skip
                        rows.append({"experiment": "t", "dataset": dataset, "method": method,
                                     "kernel": "rbf", "gamma": 0.5, "n_components": D,
                                     "seed": seed, "metric": metric, "value": value})  # fmt: skip
    return rows


def test_error_curves_one_panel_per_dataset_one_curve_per_method(tmp_path):
    path = tmp_path / "fig.png"
    fig = plotting.plot_error_curves(_rows(), path=path, title="study")
    assert path.stat().st_size > 1000
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in axes] == ["letter", "covtype"]
    for ax in axes:
        assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
        assert [line.get_label() for line in ax.get_lines()] == ["rff-mc", "nystroem-kmeans"]
        xs, ys = ax.get_lines()[0].get_data()
        assert list(xs) == [8, 32, 128]
        assert ys[0] == pytest.approx(1.05 / 8**0.5)  # the mean over the two seeds
        assert len(ax.collections) == 2  # the spread band of each curve


def test_score_curves_and_reading_a_csv(tmp_path):
    table = tmp_path / "results.csv"
    with open(table, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(RESULT_COLUMNS))
        writer.writeheader()
        writer.writerows(_rows())
    fig = plotting.plot_score_curves(table, methods=["rff-mc"], path=tmp_path / "acc.pdf")
    ax = fig.axes[0]
    assert ax.get_yscale() == "linear" and len(ax.get_lines()) == 1
    assert (tmp_path / "acc.pdf").exists()
    with pytest.raises(ValueError, match="no 'spectral_error' rows"):
        plotting.plot_error_curves(table, metric="spectral_error")


def test_a_figure_is_replaced_whole_or_not_at_all(tmp_path, monkeypatch):
    from kernelmaps.exceptions import OutputWriteError

    path = tmp_path / "fig.png"
    path.write_bytes(b"the previous figure")
    real_fsync = os.fsync

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OutputWriteError, match=r"fig\.png: no space left on the device"):
        plotting.plot_error_curves(_rows(), path=path)
    assert path.read_bytes() == b"the previous figure"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fig.png"]  # no temporary file
    monkeypatch.setattr(os, "fsync", real_fsync)
    plotting.plot_error_curves(_rows(), path=path)
    assert path.read_bytes().startswith(b"\x89PNG")
    plotting.plot_error_curves(_rows(), path=tmp_path / "sub" / "fig")  # no suffix: PNG
    assert (tmp_path / "sub" / "fig").read_bytes().startswith(b"\x89PNG")
    (tmp_path / "file").write_text("")
    with pytest.raises(OutputWriteError, match="file"):
        plotting.plot_error_curves(_rows(), path=tmp_path / "file" / "fig.png")
