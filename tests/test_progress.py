"""``verbose``: the reports of long fits (kernelmaps._progress), and the bar of ``fit``."""

from __future__ import annotations

import functools
import io
import pickle
import re
import subprocess
import sys

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.utils._param_validation import InvalidParameterError
from tqdm.std import tqdm

from kernelmaps import (
    FeatureRidge,
    FeatureRidgeClassifier,
    NystroemKernelRidge,
    RandomFourierFeatures,
    _progress,
)
from kernelmaps._progress import Progress, ProgressEvent, counted_pass, reporting_to
from kernelmaps._progress_bar import ProgressBars, progress_bar
from kernelmaps._rows import as_rows
from kernelmaps.models._ridge import _pass as _ridge_pass

N_ROWS = 600
BLOCK = 100


@pytest.fixture
def data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(N_ROWS, 3))
    return X, np.sin(X[:, 0]) + 0.1 * rng.normal(size=N_ROWS)


@pytest.fixture
def every_step(monkeypatch: pytest.MonkeyPatch) -> None:
    """No throttle, and short row blocks: a running line for each block."""
    import kernelmaps.models._nystroem_ridge as nystroem

    monkeypatch.setattr(_progress, "INTERVAL", 0.0)
    monkeypatch.setattr(_ridge_pass, "RIDGE_BLOCK_ROWS", BLOCK)
    monkeypatch.setattr(nystroem, "_MAX_BLOCK_ROWS", BLOCK)


def _rff(D: int = 50) -> RandomFourierFeatures:
    return RandomFourierFeatures(gamma=0.5, n_components=D, random_state=0)


def _nystroem(**params) -> NystroemKernelRidge:
    return NystroemKernelRidge(gamma=0.5, n_components=40, alpha=1e-2, random_state=0, **params)


def _lines(text: str, owner: str) -> list[str]:
    lines = text.splitlines()
    assert all(line.startswith(f"[{owner}] ") for line in lines), lines
    return [line[len(owner) + 3 :] for line in lines]


def _running(lines: list[str], what: str) -> list[str]:
    return [line for line in lines if re.match(rf"{what}: [\d,]+ / [\d,]+ rows \(\d+%\)", line)]


# -- silent by default ------------------------------------------------------------------


@pytest.mark.parametrize(
    "estimator",
    [FeatureRidge(_rff(), alphas=[0.1, 1.0]), FeatureRidgeClassifier(_rff()), _nystroem()],
    ids=lambda e: type(e).__name__,
)
def test_silent_by_default(estimator, data, capsys) -> None:
    X, y = data
    target = y > 0 if isinstance(estimator, FeatureRidgeClassifier) else y
    estimator.fit(X, target)
    assert capsys.readouterr() == ("", "")
    assert estimator.get_params()["verbose"] == 0


def test_disabled_progress_costs_nothing() -> None:
    progress = Progress("Silent")
    assert not progress.enabled
    counter = progress.rows("statistics", 10)
    assert counter.progress is None  # add() returns at once, nothing timed or formatted
    with counted_pass(progress, "statistics", as_rows(np.zeros((10, 1)))) as done:
        assert done is None  # the map functions get no callback


# -- verbose=1 ----------------------------------------------------------------------------


def test_feature_ridge_reports_passes_and_solve(data, capsys) -> None:
    X, y = data
    FeatureRidge(_rff(), alphas=[0.01, 0.1, 1.0], verbose=1).fit(X, y)
    lines = _lines(capsys.readouterr().out, "FeatureRidge")
    assert lines[0].startswith("feature map: RandomFourierFeatures fitted in ")
    assert re.fullmatch(r"statistics: 600 rows in [\d.]+ s \(\S+ rows/s\)", lines[1])
    assert re.fullmatch(r"leave-one-out: 600 rows in [\d.]+ s \(\S+ rows/s\)", lines[2])
    assert re.fullmatch(
        r"solve \(primal\): D = 50, alpha = \S+ \(chosen by leave-one-out among 3\) in [\d.]+ s",
        lines[3],
    )
    assert len(lines) == 4


def test_dual_fit_reports_the_features_pass(data, capsys) -> None:
    X, y = data
    model = FeatureRidge(_rff(200), verbose=1).fit(X[:80], y[:80])
    assert model.solver_ == "dual"
    lines = _lines(capsys.readouterr().out, "FeatureRidge")
    assert re.fullmatch(r"features: 80 rows in .*", lines[1])
    assert re.fullmatch(r"solve \(dual, n = 80\): D = 200, alpha = 1 \(given\) in .* s", lines[2])


def test_partial_fit_reports_each_block(data, capsys) -> None:
    X, y = data
    model = FeatureRidge("passthrough", verbose=1)
    model.partial_fit(X[:300], y[:300]).partial_fit(X[300:], y[300:])
    lines = _lines(capsys.readouterr().out, "FeatureRidge")
    assert [line.split(" in ")[0] for line in lines if line.startswith("statistics")] == [
        "statistics: 300 rows",
        "statistics: 300 rows",
    ]
    assert sum(line.startswith("solve (primal): D = 3,") for line in lines) == 2


def test_classifier_reports_passes_and_solve(data, capsys) -> None:
    X, y = data
    FeatureRidgeClassifier(_rff(), verbose=1).fit(X, y > 0)
    lines = _lines(capsys.readouterr().out, "FeatureRidgeClassifier")
    assert re.fullmatch(r"statistics: 600 rows in .*", lines[1])
    assert re.fullmatch(r"solve \(primal\): D = 50, alpha = 1 \(given\) in .*", lines[2])


def test_nystroem_reports_landmarks_passes_and_every_cg_iteration(data, capsys) -> None:
    X, y = data
    model = _nystroem(verbose=1, tol=1e-8).fit(X, y)
    lines = _lines(capsys.readouterr().out, "NystroemKernelRidge")
    assert re.fullmatch(r"landmarks: m = 40 \(uniform\) in [\d.]+ s", lines[0])
    assert re.fullmatch(r"preconditioner: K_mm \(40 x 40\) and its factors in .* s", lines[1])
    assert re.fullmatch(r"K_nm products: 600 rows in [\d.]+ s \(\S+ rows/s\)", lines[2])
    iterations = [
        re.fullmatch(r"CG iteration (\d+): relative residual (\S+), [\d.]+ s", line)
        for line in lines[3:-1]
    ]
    assert all(iterations), lines
    numbers = [int(m.group(1)) for m in iterations]  # type: ignore[union-attr]
    # throttled to one line a second: the first, and always the last
    assert numbers[0] == 1 and numbers[-1] == model.n_iter_
    last = float(iterations[-1].group(2))  # type: ignore[union-attr]
    assert last == pytest.approx(model.residual_, rel=1e-3)
    assert lines[-1].startswith(f"CG converged: relative residual {last:.3e} <= tol=1e-08 after")


def test_nystroem_names_why_cg_stopped(data, capsys) -> None:
    X, y = data
    with pytest.warns(Warning, match="did not converge"):
        _nystroem(verbose=1, max_iter=2, tol=1e-14).fit(X, y)
    last = capsys.readouterr().out.splitlines()[-1]
    assert "CG stopped at max_iter=2: relative residual" in last
    assert "> tol=1e-14 after 2 iterations" in last


# -- verbose=2 ----------------------------------------------------------------------------


def test_feature_ridge_reports_rows_within_a_pass(data, capsys, every_step) -> None:
    X, y = data
    FeatureRidge(_rff(), alphas=[0.1, 1.0], verbose=2).fit(X, y)
    lines = _lines(capsys.readouterr().out, "FeatureRidge")
    for what in ("statistics", "leave-one-out"):
        running = _running(lines, what)
        done = [int(line.split()[1].replace(",", "")) for line in running]
        assert done == list(range(BLOCK, N_ROWS + 1, BLOCK)), running
        assert running[-1].startswith(f"{what}: 600 / 600 rows (100%), ")
        assert running[-1].endswith(" rows/s")


def test_running_lines_are_throttled_and_the_last_kept(data, capsys, monkeypatch) -> None:
    X, y = data
    monkeypatch.setattr(_ridge_pass, "RIDGE_BLOCK_ROWS", BLOCK)
    monkeypatch.setattr(_progress, "INTERVAL", 3600.0)
    FeatureRidge(_rff(), verbose=2).fit(X, y)
    lines = _lines(capsys.readouterr().out, "FeatureRidge")
    assert [line.split(",")[0] for line in _running(lines, "statistics")] == [
        "statistics: 600 / 600 rows (100%)"
    ]


def test_nystroem_verbose_2_reports_every_iteration_and_the_rows(data, capsys, every_step) -> None:
    X, y = data
    model = _nystroem(verbose=2, cache_size=0).fit(X, y)
    lines = _lines(capsys.readouterr().out, "NystroemKernelRidge")
    iterations = [line for line in lines if line.startswith("CG iteration")]
    assert len(iterations) == model.n_iter_
    # the first pass and every iteration's pass, block by block
    assert len(_running(lines, "K_nm products")) == (model.n_iter_ + 1) * (N_ROWS // BLOCK)


def test_streamed_rows_report_their_blocks(data, capsys, every_step) -> None:
    array_api_strict = pytest.importorskip("array_api_strict")
    X, y = data
    device = array_api_strict.Device("device1")
    FeatureRidge(_rff(), verbose=2, device=device).fit(X, y)
    lines = _lines(capsys.readouterr().out, "FeatureRidge")
    assert len(_running(lines, "statistics")) == N_ROWS // BLOCK


# -- Dask ---------------------------------------------------------------------------------


@pytest.mark.dask
@pytest.mark.parametrize("scheduler", ["synchronous", "threads"])
def test_dask_fit_reports_each_pass_once(data, capsys, every_step, scheduler) -> None:
    da = pytest.importorskip("dask.array")
    import dask

    X, y = data
    with dask.config.set(scheduler=scheduler):
        FeatureRidge(_rff(), alphas=[0.1, 1.0], verbose=2).fit(da.from_array(X, chunks=37), y)
        _nystroem(verbose=1).fit(da.from_array(X, chunks=37), y)
    out = capsys.readouterr().out
    ridge = _lines("\n".join(re.findall(r"^\[FeatureRidge\].*$", out, re.M)), "FeatureRidge")
    for what in ("statistics", "leave-one-out"):
        # no line from the tasks: the pass is counted whole when its compute ends
        assert [line.split(",")[0] for line in _running(ridge, what)] == [
            f"{what}: 600 / 600 rows (100%)"
        ]
        assert sum(line.startswith(f"{what}: 600 rows in ") for line in ridge) == 1
    assert "[NystroemKernelRidge] K_nm products: 600 rows in " in out
    assert "[NystroemKernelRidge] CG converged" in out


# -- parameters ---------------------------------------------------------------------------


@pytest.mark.parametrize("cls", [FeatureRidge, FeatureRidgeClassifier, NystroemKernelRidge])
def test_verbose_is_a_plain_parameter(cls, data, capsys) -> None:
    X, y = data
    model = cls(verbose=True)
    assert clone(model).get_params()["verbose"] is True
    assert model.set_params(verbose=2).verbose == 2
    with pytest.raises(InvalidParameterError, match="verbose"):
        cls(verbose=-1).fit(X, y > 0)
    fitted = cls(verbose=1).fit(X, y > 0 if cls is FeatureRidgeClassifier else y)
    restored = pickle.loads(pickle.dumps(fitted))
    assert restored.verbose == 1
    np.testing.assert_array_equal(restored.predict(X), fitted.predict(X))


def test_verbose_is_the_last_keyword() -> None:
    import inspect

    for cls in (FeatureRidge, FeatureRidgeClassifier, NystroemKernelRidge):
        assert list(inspect.signature(cls).parameters)[-1] == "verbose"


def test_row_work_with_a_counter_pickles_small_and_silent(capsys) -> None:
    progress = Progress("FeatureRidge", verbose=2)
    with progress.rows("statistics", 10) as counter:
        work = _ridge_pass.RowWork(None, 3, 1, True, "FeatureRidge", progress=counter.add)
        sent = pickle.dumps(work)
        assert len(sent) < len(pickle.dumps(work.__class__(None, 3, 1, True, "FeatureRidge"))) + 200
        received = pickle.loads(sent)
        received.progress(5)  # a worker's copy: silent
        assert counter.done == 0
        work.progress(10)
    assert "statistics: 10 / 10 rows (100%)" in capsys.readouterr().out


# -- the sink and the bar -----------------------------------------------------------------


def test_a_sink_gets_every_step_whatever_verbose(data, capsys, monkeypatch) -> None:
    X, y = data
    monkeypatch.setattr(_ridge_pass, "RIDGE_BLOCK_ROWS", BLOCK)
    events: list[ProgressEvent] = []
    with reporting_to(events.append):
        FeatureRidge(_rff()).fit(X, y)
    assert capsys.readouterr().out == ""
    steps = [(e.what, e.done, e.total, e.finished) for e in events]
    assert steps == [("statistics", k, N_ROWS, False) for k in range(BLOCK, N_ROWS + 1, BLOCK)] + [
        ("statistics", N_ROWS, N_ROWS, True)
    ]
    assert all(e.owner == "FeatureRidge" and e.unit == "rows" for e in events)


def test_a_sink_gets_the_cg_iterations(data) -> None:
    X, y = data
    events: list[ProgressEvent] = []
    with reporting_to(events.append):
        model = _nystroem().fit(X, y)
    cg = [e for e in events if e.what == "conjugate gradient" and not e.finished]
    assert [e.done for e in cg] == list(range(1, model.n_iter_ + 1))
    assert {e.unit for e in cg} == {"iterations"} and cg[0].total == model.max_iter
    assert {e.what for e in events} == {"K_nm products", "conjugate gradient"}


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _frames(stream: io.StringIO) -> list[str]:
    """The lines a terminal showed, in order, without the erasures."""
    return [frame for frame in stream.getvalue().split("\r") if frame.strip()]


def _bars(**options) -> tuple[ProgressBars, FakeTerminal]:
    stream = FakeTerminal()
    return ProgressBars(tqdm, file=stream, ncols=120, **{"leave": False, **options}), stream


def test_bar_draws_in_place_and_erases_itself(data, every_step) -> None:
    X, y = data
    stream = FakeTerminal()
    with progress_bar(stream, delay=0.0, mininterval=0.0):
        FeatureRidge(_rff(), alphas=[0.1, 1.0]).fit(X, y)
    text = stream.getvalue()
    assert "\n" not in text  # one pass at a time: one line, rewritten
    frames = _frames(stream)
    assert frames[0].startswith("FeatureRidge: statistics: ")
    assert any(frame.startswith("FeatureRidge: leave-one-out: ") for frame in frames)
    assert f"{N_ROWS}/{N_ROWS} rows" in frames[-1]
    assert text.endswith("\r") and text.split("\r")[-2].strip() == ""  # erased


def test_bar_shows_the_pass_counts_rate_and_time_left() -> None:
    bars, stream = _bars(mininterval=0.0)
    bars(ProgressEvent("NystroemKernelRidge", "conjugate gradient", 5, 100, 1.25, "iterations"))
    # the rate is 5 / (1.25 s + the moments between the event and the drawing): <= 4.00
    assert re.fullmatch(
        r"NystroemKernelRidge: conjugate gradient:   5%\|\S*\s*\| 5/100 iterations "
        r"\[00:01<00:2\d, [34]\.\d\d iterations/s\]",
        _frames(stream)[-1].rstrip(),
    )
    bars(ProgressEvent("NystroemKernelRidge", "conjugate gradient", 5, 100, 1.25, finished=True))
    bars(ProgressEvent("X", "pass", 1234, None, 1.0))  # a pass of unknown length
    assert re.fullmatch(r"X: pass: 1,234 rows \[00:01, 1\.\d\dk rows/s\]", _frames(stream)[-1])
    bars.close()


def test_bar_is_throttled_and_each_pass_has_its_own() -> None:
    bars, stream = _bars(mininterval=3600.0)
    for done in (1, 2, 3):
        bars(ProgressEvent("FeatureRidge", "statistics", done, 10, 0.0))
    bars(ProgressEvent("FeatureRidge", "statistics", 10, 10, 0.0, finished=True))
    bars(ProgressEvent("FeatureRidge", "leave-one-out", 1, 10, 0.0))  # a new pass: drawn
    frames = [frame.split("|")[0] for frame in _frames(stream)]
    assert frames == ["FeatureRidge: statistics:   0%", "FeatureRidge: leave-one-out:   0%"]
    bars.close()


def test_short_passes_draw_nothing() -> None:
    bars, stream = _bars(mininterval=0.0, delay=0.5)
    bars(ProgressEvent("FeatureRidge", "statistics", 5, 10, 0.0))
    assert bars.bars == {}  # no bar made for it yet
    bars(ProgressEvent("FeatureRidge", "statistics", 10, 10, 0.0, finished=True))
    assert stream.getvalue() == ""
    bars(ProgressEvent("FeatureRidge", "leave-one-out", 5, 10, 1.0))  # running for a second
    frames = _frames(stream)
    assert len(frames) == 1 and frames[0].startswith("FeatureRidge: leave-one-out:  50%")
    assert "00:01<00:01" in frames[0]  # timed from the start of the pass, not of the bar
    bars.close()


def test_a_pass_that_ends_early_completes_its_bar() -> None:
    bars, stream = _bars(mininterval=0.0, leave=True)
    for done in (1, 2, 3):
        bars(ProgressEvent("X", "conjugate gradient", done, 100, 0.1, "iterations"))
    bars(ProgressEvent("X", "conjugate gradient", 3, 100, 0.1, "iterations", finished=True))
    assert bars.bars == {}
    last = _frames(stream)[-1]
    assert " 100%" in last and "3/3 iterations" in last and last.endswith("\n")


def test_bars_are_closed_when_the_work_raises() -> None:
    stream = FakeTerminal()
    with pytest.raises(KeyError), progress_bar(stream, delay=0.0):
        sink = _progress._SINK.get()
        assert isinstance(sink, ProgressBars)
        sink(ProgressEvent("X", "pass", 5, 10, 0.0))
        raise KeyError("stop")
    assert sink.bars == {} and _progress._SINK.get() is None
    assert stream.getvalue().endswith("\r")  # the half-drawn bar erased


def test_no_bar_off_a_terminal_or_when_disabled(data) -> None:
    X, y = data
    for stream, disable in [(io.StringIO(), None), (FakeTerminal(), True)]:
        with progress_bar(stream, disable=disable, delay=0.0):
            assert not Progress("X").enabled  # no sink: nothing timed, nothing drawn
            FeatureRidge(_rff()).fit(X, y)
        assert stream.getvalue() == ""


def test_the_bars_of_standard_error_are_tqdm_auto(monkeypatch) -> None:
    import tqdm.auto

    monkeypatch.setattr("sys.stderr", FakeTerminal())
    with progress_bar(disable=None):
        sink = _progress._SINK.get()
        assert isinstance(sink, ProgressBars) and sink.make_bar is tqdm.auto.tqdm


def test_tqdm_is_imported_only_to_draw() -> None:
    code = (
        "import sys, kernelmaps\n"
        "from kernelmaps.cli import fit\n"
        "with kernelmaps.progress_bar(disable=True):\n"
        "    pass\n"
        "print('tqdm' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_cli_fit_draws_the_bar_on_a_terminal_only(tmp_path, capsys, monkeypatch) -> None:
    from kernelmaps.cli import fit, main

    monkeypatch.setattr(fit, "progress_bar", functools.partial(progress_bar, delay=0.0))
    out = tmp_path / "model.skops"
    args = ["fit", "cpu_act", "--n-components", "16", "--gamma", "0.1", "-o", str(out)]
    assert main(args) == 0
    plain = capsys.readouterr()
    assert plain.err == ""
    terminal = FakeTerminal()
    monkeypatch.setattr("sys.stderr", terminal)
    assert main(args) == 0
    drawn = capsys.readouterr()
    mask = re.compile(r"\d+\.\d+ s|= \S+")  # the timings and the scores
    assert mask.sub("", drawn.out) == mask.sub("", plain.out)  # standard output unchanged
    assert "FeatureRidge: statistics: " in terminal.getvalue()
    assert terminal.getvalue().endswith("\r")  # every bar closed and erased
