"""The engine setting: process default, context-local values, block threads, processes."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import threading

import numpy as np
import pytest
import sklearn

import kernelmaps
import kernelmaps._parallel as parallel
from kernelmaps import config_context, get_config, set_config
from kernelmaps._config import numba_enabled


def test_get_config_is_a_new_plain_picklable_dict() -> None:
    cfg = get_config()
    assert type(cfg) is dict
    assert set(cfg) == {"engine"}
    cfg["engine"] = "something else"
    assert get_config()["engine"] != "something else"
    assert pickle.loads(pickle.dumps(get_config())) == get_config()


def test_set_config_changes_the_process_default() -> None:
    before = get_config()["engine"]
    try:
        set_config(engine="numpy")
        assert get_config()["engine"] == "numpy"
        assert not numba_enabled()
        set_config()  # None: unchanged
        assert get_config()["engine"] == "numpy"
        seen: list[str] = []
        thread = threading.Thread(target=lambda: seen.append(get_config()["engine"]))
        thread.start()
        thread.join()
        assert seen == ["numpy"]  # every thread without a context of its own
    finally:
        set_config(engine=before)
    assert get_config()["engine"] == before


def test_set_config_inside_a_context_applies_there() -> None:
    before = get_config()["engine"]
    try:
        with config_context(engine="numpy"):
            set_config(engine="auto")
            assert get_config()["engine"] == "auto"
        assert get_config()["engine"] == "auto"  # the process default was changed
    finally:
        set_config(engine=before)


def test_config_context_validates_restores_and_keeps_none() -> None:
    before = get_config()
    with pytest.raises(ValueError, match="engine must be one of"), config_context(engine="fortran"):
        pass
    with config_context(engine="numpy"):
        with config_context():
            assert get_config()["engine"] == "numpy"
        with config_context(engine="auto"):
            assert get_config()["engine"] == "auto"
        assert get_config()["engine"] == "numpy"
    assert get_config() == before


def test_two_threads_in_different_contexts_do_not_see_each_other() -> None:
    barrier = threading.Barrier(2)
    seen: dict[str, list[str]] = {"numpy": [], "auto": []}

    def worker(engine: str) -> None:
        with config_context(engine=engine):
            for _ in range(20):
                barrier.wait()  # both threads are inside their contexts now
                seen[engine].append(get_config()["engine"])
                barrier.wait()

    threads = [threading.Thread(target=worker, args=(e,)) for e in seen]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == {"numpy": ["numpy"] * 20, "auto": ["auto"] * 20}


def test_block_threads_run_in_the_callers_context(monkeypatch) -> None:
    monkeypatch.setattr(parallel, "n_threads", lambda: 4)
    blocks = [slice(i, i + 1) for i in range(16)]
    before = get_config()["engine"]
    seen: dict[int, tuple[str, str]] = {}

    def work(rows: slice) -> None:
        seen[rows.start] = (get_config()["engine"], threading.current_thread().name)

    for engine in ("numpy", "auto", "numpy"):
        seen.clear()
        with config_context(engine=engine):
            parallel.run_blocks(work, blocks, n_elements=1 << 30)
        assert {value[0] for value in seen.values()} == {engine}
        assert any(name.startswith("kernelmaps-block") for _, name in seen.values())
    assert get_config()["engine"] == before


def test_transform_blocks_use_the_callers_engine(monkeypatch) -> None:
    """Under config_context(engine="numpy"), no block thread runs the compiled sines."""
    pytest.importorskip("numba")
    from kernelmaps._numba import trig

    def refuse(*args: object) -> None:
        raise AssertionError("the compiled kernel ran under engine='numpy'")

    monkeypatch.setattr(parallel, "n_threads", lambda: 4)
    X = np.random.default_rng(0).standard_normal((3000, 8))
    rff = kernelmaps.RandomFourierFeatures(gamma=0.1, n_components=64, random_state=0).fit(X)
    expected = rff.transform(X)
    monkeypatch.setattr(trig, "cos_sin_into", refuse)
    with sklearn.config_context(working_memory=0.1):  # about 20 blocks, on 4 threads
        with pytest.raises(AssertionError, match="compiled kernel ran"), config_context("numba"):
            rff.transform(X)
        with config_context(engine="numpy"):
            Z = rff.transform(X)
    np.testing.assert_allclose(Z, expected, rtol=0, atol=1e-15)


def test_captured_config_reenters_in_another_thread() -> None:
    with config_context(engine="numpy"):
        cfg = get_config()
    seen: list[str] = []

    def worker() -> None:
        with config_context(**pickle.loads(pickle.dumps(cfg))):
            seen.append(get_config()["engine"])

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert seen == ["numpy"]


@pytest.mark.slow
def test_environment_variable_sets_the_initial_default_and_cfg_crosses_processes() -> None:
    code = (
        "import sys, kernelmaps\n"
        "print(kernelmaps.get_config()['engine'])\n"
        "with kernelmaps.config_context(**eval(sys.argv[1])):\n"
        "    print(kernelmaps.get_config()['engine'])\n"
    )
    env = {**os.environ, "KERNELMAPS_ENGINE": "numpy"}
    with config_context(engine="auto"):
        cfg = repr(get_config())
    result = subprocess.run(
        [sys.executable, "-c", code, cfg], env=env, capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["numpy", "auto"]
