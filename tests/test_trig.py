"""The elementwise sines and cosines of Fourier-type maps: both engines, accuracy, config."""

from __future__ import annotations

import math

import numpy as np
import pytest

import kernelmaps
from kernelmaps import RandomFourierFeatures, config_context
from kernelmaps._config import numba_installed
from kernelmaps._parallel import parallel_rows
from kernelmaps.feature_maps._trig import cos_shifted_into, cos_sin_into

needs_numba = pytest.mark.skipif(not numba_installed(), reason="numba is not installed")
ENGINES = ["numpy", pytest.param("numba", marks=needs_numba)]

# Accuracy claim of the compiled kernels: within 2 ulp of the result, or 2^-53 absolute
# near the zeros of sin and cos (where an ulp of the result is far below the rounding
# error of the argument itself).  The bound is deterministic: it holds for every input.
MAX_ULP = 2.0
ABS_FLOOR = 2.0**-53


def _ulp_error(value: np.ndarray, reference: np.ndarray) -> np.ndarray:
    err = np.abs(value.astype(np.float64) - reference)
    return err / np.maximum(np.spacing(np.abs(reference).astype(value.dtype)), ABS_FLOOR)


def _arguments(rng: np.random.Generator) -> np.ndarray:
    """Typical projections, huge ones (library fallback) and near multiples of pi/2."""
    k = rng.integers(-(2**18), 2**18, size=4000)
    near_zeros = k * (math.pi / 2) + rng.normal(scale=1e-9, size=k.size)
    parts = [
        rng.normal(scale=3.0, size=20_000),
        rng.normal(scale=300.0, size=20_000),
        rng.uniform(-8e5, 8e5, size=4000),
        near_zeros,
        np.array([0.0, -0.0, 1e-300, -1e-300, math.pi, -math.pi, 8e5, -8e5]),
    ]
    P = np.concatenate(parts)
    return P[: P.size - P.size % 64].reshape(-1, 64)


@pytest.mark.parametrize("engine", ENGINES)
def test_cos_sin_matches_numpy_within_two_ulp(engine, seed):
    P = _arguments(np.random.default_rng(seed))
    P = np.vstack([P, np.full((1, 64), 3e7)])  # one row takes the library fallback
    out = np.empty((P.shape[0], 2 * P.shape[1]))
    with config_context(engine=engine):
        cos_sin_into(P.copy(), out, 1.0)
    L = P.shape[1]
    assert _ulp_error(out[:, :L], np.cos(P)).max() <= MAX_ULP
    assert _ulp_error(out[:, L:], np.sin(P)).max() <= MAX_ULP


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_cos_shifted_matches_numpy(engine, dtype, seed):
    rng = np.random.default_rng(seed)
    P = rng.normal(scale=50.0, size=(300, 37)).astype(dtype)
    offsets = rng.uniform(0, 2 * np.pi, size=37)
    expected = np.cos((P + offsets.astype(dtype)).astype(np.float64)) * 0.5
    work = P.copy()
    with config_context(engine=engine):
        cos_shifted_into(work, offsets, 0.5)
    assert work.dtype == dtype
    # float32: the sum P + b is rounded to float32 first, as numpy does; then cos within
    # 2 ulp of float32 and one rounding of the scaling.
    tol = MAX_ULP + 1.0
    assert _ulp_error(work, expected).max() <= tol


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("variant", ["cos_sin", "cos_phase"])
@pytest.mark.parametrize("n_components", [64, 65])
@needs_numba
def test_fourier_features_agree_across_engines(dtype, variant, n_components, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(500, 9)).astype(dtype)
    rff = RandomFourierFeatures(
        gamma=0.3, n_components=n_components, variant=variant, random_state=seed
    ).fit(X)
    with config_context(engine="numpy"):
        Z_numpy = rff.transform(X)
    with config_context(engine="numba"):
        Z_numba = rff.transform(X)
    assert Z_numpy.dtype == Z_numba.dtype == dtype
    # Each feature is sqrt(2/D) times a sine or cosine evaluated within 2 ulp on each side.
    scale = math.sqrt(2.0 / n_components)
    eps = np.finfo(dtype).eps
    np.testing.assert_allclose(Z_numba, Z_numpy, rtol=0, atol=4 * eps * scale)


def test_parallel_rows_covers_every_row_once():
    seen = np.zeros(100_003, dtype=int)

    def work(rows):
        seen[rows] += 1

    parallel_rows(work, seen.size, n_elements=10**7)
    assert np.all(seen == 1)
    parallel_rows(work, 1, n_elements=10**7)
    assert seen[0] == 2


def test_config_context_restores_and_validates():
    before = kernelmaps.get_config()
    with config_context(engine="numpy"):
        assert kernelmaps.get_config()["engine"] == "numpy"
    assert kernelmaps.get_config() == before
    with pytest.raises(ValueError, match="engine must be one of"):
        kernelmaps.set_config(engine="fortran")


def test_engine_numba_without_numba_names_the_extra(monkeypatch):
    import kernelmaps._config as config

    monkeypatch.setattr(config, "numba_installed", lambda: False)
    with config_context(engine="numba"), pytest.raises(ImportError, match=r"kernelmaps\[fast\]"):
        config.numba_enabled()
    with config_context(engine="auto"):
        assert not config.numba_enabled()


def test_parallel_blocks_equal_serial_blocks(monkeypatch, seed):
    import kernelmaps._parallel as parallel

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(2000, 16))
    rff = RandomFourierFeatures(gamma=0.1, n_components=2048, random_state=seed).fit(X)
    assert len(list(range(0, 2000, rff._max_block_rows))) > 1  # several blocks
    Z_parallel = rff.transform(X)
    monkeypatch.setattr(parallel, "n_threads", lambda: 1)
    Z_serial = rff.transform(X)
    # Blocks differ only in how the BLAS splits the product: a few ulp.
    np.testing.assert_allclose(Z_parallel, Z_serial, rtol=0, atol=1e-14)


def test_run_blocks_reraises_block_errors():
    from kernelmaps._parallel import run_blocks

    def work(rows):
        if rows.start == 1000:
            raise RuntimeError("block failed")

    with pytest.raises(RuntimeError, match="block failed"):
        run_blocks(work, [slice(0, 1000), slice(1000, 2000)], n_elements=10**7)


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs os.fork")
def test_transform_in_forked_child_after_parent_used_the_pool():
    import multiprocessing

    X = np.random.default_rng(0).normal(size=(2000, 16))
    rff = RandomFourierFeatures(gamma=0.1, n_components=2048, random_state=0).fit(X)
    expected = rff.transform(X)  # starts the pool in the parent
    with multiprocessing.get_context("fork").Pool(1) as pool:
        result = pool.apply_async(rff.transform, (X,)).get(timeout=120)
    np.testing.assert_allclose(result, expected, rtol=0, atol=1e-14)


def test_nested_run_blocks_runs_inline_instead_of_waiting_on_the_pool():
    from kernelmaps._parallel import run_blocks

    seen = np.zeros(4000, dtype=int)

    def inner(rows):
        seen[rows] += 1

    def outer(rows):
        run_blocks(
            inner,
            [slice(rows.start, rows.start + 500), slice(rows.start + 500, rows.stop)],
            n_elements=10**7,
        )

    run_blocks(
        outer,
        [slice(0, 1000), slice(1000, 2000), slice(2000, 3000), slice(3000, 4000)],
        n_elements=10**7,
    )
    assert np.all(seen == 1)
