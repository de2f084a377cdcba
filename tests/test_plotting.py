"""Figures drawn from result tables (skipped only when matplotlib is not installed)."""

from __future__ import annotations

import csv
import errno
import os

import numpy as np
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
        assert [line.get_label() for line in ax.get_lines()] == [
            "RFF, Monte Carlo · Gaussian",  # families in the registry's order
            "Nyström, k-means · Gaussian",
        ]
        xs, ys = ax.get_lines()[0].get_data()
        assert list(xs) == [8, 32, 128]
        assert ys[0] == pytest.approx(1.05 / 8**0.5)  # the median of the two seeds
        assert len(ax.collections) == 2  # the spread band of each curve
    assert fig._suptitle.get_text() == (
        "study\nline: median over 2 seeds, band: interquartile range (25th to 75th percentile)"
    )


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


# --- the look of the figure: families, pairs, kernels, ticks, centre and band, dpi ---


def _registered_styles():
    """The style of each built-in method (other test modules register methods of no family)."""
    from kernelmaps.experiments import get_method, method_names

    return {
        name: (get_method(name).family, plotting.method_style(name))
        for name in method_names()
        if not name.startswith("test-")
    }


def test_one_colour_per_family_and_distinct_colours_across_families():
    colours: dict[str, set[str]] = {}
    for family, style in _registered_styles().values():
        assert family, "every built-in method has a family"
        colours.setdefault(family, set()).add(style["color"])
    assert all(len(c) == 1 for c in colours.values()), colours
    assert len({next(iter(c)) for c in colours.values()}) == len(colours)
    # an alias is drawn as the method it names
    assert plotting.method_style("rff") == plotting.method_style("rff-mc")
    assert plotting.method_style("nystroem") == plotting.method_style("nystroem-kmeans")


def test_the_members_of_a_family_and_the_study_pairs_are_told_apart():
    from kernelmaps.experiments import STUDY_PAIRS, method_names

    styles = _registered_styles()
    looks: dict[str, set[tuple[str, str]]] = {}
    for family, style in styles.values():
        key = (str(style["linestyle"]), style["marker"])
        assert key not in looks.setdefault(family, set())
        looks[family].add(key)
    pairs = [(a, b) for a, b, _ in STUDY_PAIRS if {a, b} <= set(method_names())]
    assert len(pairs) >= 8
    for a, b in pairs:
        (fa, sa), (fb, sb) = styles[a], styles[b]
        if fa == fb:  # one colour: told apart by line style and marker
            assert sa["linestyle"] != sb["linestyle"] and sa["marker"] != sb["marker"], (a, b)
        else:  # uniform Nyström vs IKA
            assert sa["color"] != sb["color"], (a, b)
        assert sa["label"] != sb["label"]


def test_legend_labels_name_the_kernel():
    assert plotting.method_style("rff-mc")["label"] == "RFF, Monte Carlo · Gaussian"
    assert plotting.method_style("tensorsketch")["label"] == "TensorSketch · polynomial"
    assert plotting.method_style("binning")["label"] == "random binning · Laplacian"
    rows = [
        {**r, "method": m, "kernel": k}
        for r in _rows()
        for m, k in (("rmfm", "polynomial"), ("binning", "laplacian"), ("ika", "laplacian"))
        if r["method"] == "rff-mc"
    ]
    fig = plotting.plot_error_curves(_rows() + rows)
    (legend,) = fig.legends
    entries = [t.get_text() for t in legend.get_texts() if t.get_text()]
    assert {
        "RFF, Monte Carlo · Gaussian",
        "Nyström, k-means · Gaussian",
        "IKA · Laplacian",  # the kernel of the table, not the method's default
        "RMFM · polynomial",
        "random binning · Laplacian",
    } <= set(entries)
    # one column per family, headed by its name
    assert {"Fourier features", "Nyström", "IKA", "dot-product maps", "random binning"} <= set(
        entries
    )
    assert "each method against its own kernel" in fig._suptitle.get_text()


def test_x_ticks_are_the_measured_numbers_of_features():
    rows = [r for r in _rows() if r["dataset"] == "letter"]
    rows += [{**r, "dataset": "covtype", "n_components": 3 * r["n_components"]} for r in rows]
    fig = plotting.plot_error_curves(rows)
    letter, covtype = (ax for ax in fig.axes if ax.get_visible())
    assert list(letter.get_xticks()) == [8, 32, 128]
    assert [t.get_text() for t in letter.get_xticklabels()] == ["8", "32", "128"]
    assert list(covtype.get_xticks()) == [24, 96, 384]
    assert list(letter.get_xticks(minor=True)) == []


def _band_edges(collection):
    """The low and high edge of a band, as {x: (low, high)}."""
    edges: dict[float, list[float]] = {}
    for path in collection.get_paths():
        for x, y in path.vertices:
            edges.setdefault(round(float(x), 9), []).append(float(y))
    return {x: (min(ys), max(ys)) for x, ys in edges.items()}


def test_the_line_is_the_median_and_the_band_the_quartiles():
    values = {16: [1.0, 2.0, 4.0, 8.0, 100.0], 64: [0.5, 0.1, 0.3, 0.2, 0.4]}
    rows = [
        {"dataset": "toy", "method": "rff-mc", "kernel": "rbf", "n_components": D, "seed": s,
         "metric": "fro_error", "value": v}
        for D, vs in values.items() for s, v in enumerate(vs)
    ]  # fmt: skip
    fig = plotting.plot_error_curves(rows)
    ax = fig.axes[0]
    (line,) = ax.get_lines()
    assert list(line.get_xdata()) == [16, 64]
    assert list(line.get_ydata()) == pytest.approx([4.0, 0.3], rel=1e-12)
    edges = _band_edges(ax.collections[0])
    assert edges[16] == pytest.approx((2.0, 8.0), rel=1e-12)  # quartiles of 1, 2, 4, 8, 100
    assert edges[64] == pytest.approx((0.2, 0.4), rel=1e-12)
    assert "median over 5 seeds" in fig._suptitle.get_text()
    assert "interquartile range" in fig._suptitle.get_text()

    fig = plotting.plot_error_curves(rows, center="mean")
    ax = fig.axes[0]
    assert list(ax.get_lines()[0].get_ydata()) == pytest.approx([23.0, 0.3], rel=1e-12)
    se = np.std(values[64], ddof=1) / np.sqrt(5)
    assert _band_edges(ax.collections[0])[64] == pytest.approx((0.3 - se, 0.3 + se), rel=1e-12)
    assert "mean over 5 seeds" in fig._suptitle.get_text()
    with pytest.raises(ValueError, match="center must be one of"):
        plotting.plot_error_curves(rows, center="mode")


def test_png_at_200_dpi_and_vector_formats(tmp_path):
    from PIL import Image

    fig = plotting.plot_error_curves(_rows(), path=tmp_path / "fig.png")
    with Image.open(tmp_path / "fig.png") as image:
        assert image.info["dpi"] == pytest.approx((200, 200), abs=0.5)
        width, height = fig.get_size_inches()
        assert image.size == (round(width * 200), round(height * 200))
    plotting.plot_error_curves(_rows(), path=tmp_path / "fig.svg")
    assert b"<svg" in (tmp_path / "fig.svg").read_bytes()[:1000]
    cv = {"params": [{"gamma": g, "alpha": 1.0, "n_components": 8} for g in (0.1, 1.0)],
          "mean_test_score": [0.1, 0.2]}  # fmt: skip
    plotting.plot_cv_curve(cv, tmp_path / "cv.png")
    with Image.open(tmp_path / "cv.png") as image:
        assert image.info["dpi"] == pytest.approx((200, 200), abs=0.5)


def test_labelled_and_unknown_methods(tmp_path):
    from kernelmaps.experiments import ExperimentResult

    rows = [{**r, "method": {"rff-mc": "MC", "nystroem-kmeans": "mine"}[r["method"]]}
            for r in _rows()]  # fmt: skip
    methods = [{"name": "rff-mc", "label": "MC"}, {"name": "my-map", "label": "mine"}]
    result = ExperimentResult(rows, {"config": {"methods": methods}}, 1, 1, [])
    fig = plotting.plot_error_curves(result)
    mc, mine = fig.axes[0].get_lines()
    assert mc.get_label() == "MC · Gaussian"  # the study's label, the kernel of the table
    assert mc.get_color() == plotting.method_style("rff-mc")["color"]
    assert mine.get_label() == "mine · Gaussian"
    assert mine.get_color() not in {s["color"] for _, s in _registered_styles().values()}
    # without the configuration, "MC" is a name the registry does not know
    fig = plotting.plot_error_curves(rows + [{**r, "method": "yours"} for r in rows])
    other = fig.axes[0].get_lines()
    assert len({line.get_color() for line in other}) == 1
    assert len({(str(line.get_linestyle()), line.get_marker()) for line in other}) == 3
    style = plotting.method_style("not-registered")
    assert style["label"] == "not-registered" and set(style) == {
        "color", "linestyle", "marker", "label"
    }  # fmt: skip


def test_reliability_diagram_curve_counts_and_ece(tmp_path):
    from kernelmaps.metrics import expected_calibration_error, reliability_bins

    rng = np.random.default_rng(0)
    P = rng.dirichlet([1.0, 1.0, 1.0], size=600)
    y = rng.integers(0, 3, size=600)
    path = tmp_path / "reliability.png"
    fig = plotting.plot_reliability_diagram(y, P, n_bins=10, label="toy", title="t", path=path)
    assert path.stat().st_size > 1000
    curve, counts = fig.axes
    diagonal, line = curve.get_lines()
    assert list(diagonal.get_xdata()) == [0, 1] and list(diagonal.get_ydata()) == [0, 1]
    bins = reliability_bins(y, P, n_bins=10)
    full = bins.weight > 0
    np.testing.assert_array_equal(line.get_xdata(), bins.confidence[full])
    np.testing.assert_array_equal(line.get_ydata(), bins.accuracy[full])
    np.testing.assert_array_equal([bar.get_height() for bar in counts.patches], bins.weight)
    ece = expected_calibration_error(y, P, n_bins=10)
    legend = [t.get_text() for t in curve.get_legend().get_texts()]
    assert legend == ["perfectly calibrated", f"toy (ECE {ece:.3f})"]
    assert curve.get_title() == "t"


def test_reliability_diagrams_of_two_models_on_one_axes():
    from matplotlib.figure import Figure

    rng = np.random.default_rng(1)
    p = rng.random(400)
    y = (rng.random(400) < p).astype(int)
    ax = Figure().add_subplot()
    plotting.plot_reliability_diagram(y, p, column=1, ax=ax, label="calibrated")
    fig = plotting.plot_reliability_diagram(y, p**3, column=1, ax=ax, label="too low")
    assert fig is ax.figure
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[0] == "perfectly calibrated" and len(labels) == 3  # one diagonal
    assert labels[1].startswith("calibrated (ECE") and labels[2].startswith("too low (ECE")
    with pytest.raises(ValueError, match="column must be a column index"):
        plotting.plot_reliability_diagram(y, p, column=2)
