"""The compiled kernels are compiled once per machine, not once per process.

numba's statistics say whether a kernel was loaded from the on-disk cache (a hit) or
compiled (a miss); no test here measures time.  Before, a lazily dispatched kernel
compiled one version per argument type it met (read-only input, a Fortran-ordered or
sliced array, a column range of the output), so a later process meeting another layout
compiled again, for seconds; and with no writable cache folder, building the kernels
raised numba's ``RuntimeError: cannot cache function ...: no locator available``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("numba")

import numba.core.caching

import kernelmaps
from kernelmaps._numba import _jit, binning, hadamard, sketch, trig

#: The folder holding the kernelmaps under test, for the child processes.
PACKAGE_ROOT = str(Path(kernelmaps.__file__).resolve().parents[1])

#: Runs every map with compiled kernels on one kind of input; prints the kernels' cache
#: statistics (hits, misses, signatures) as JSON.
CHILD = textwrap.dedent(
    """
    import json, sys
    import numpy as np, scipy.sparse as sp
    import kernelmaps as km
    from kernelmaps._numba import _jit

    kind = sys.argv[1]
    rng = np.random.default_rng(0)
    X = np.abs(rng.standard_normal((40, 6)))
    if kind == "other layouts":
        X = np.asfortranarray(X)
        X.setflags(write=False)
    maps = [
        km.RandomFourierFeatures(n_components=16, random_state=0),
        km.Fastfood(n_components=16, random_state=0),
        km.StructuredOrthogonalFeatures(n_components=16, random_state=0),
        km.TensorSketch(n_components=16, random_state=0),
        km.RandomBinningFeatures(n_grids=4, random_state=0),
        km.SkewedChi2Sampler(n_components=16, random_state=0),
        km.AdditiveChi2Sampler(),
    ]
    if kind == "other layouts":  # the cos+phase layouts slice the projections
        maps += [
            km.RandomFourierFeatures(n_components=15, variant="cos_phase", random_state=0),
            km.Fastfood(n_components=15, variant="cos_phase", random_state=0),
            km.StructuredOrthogonalFeatures(n_components=15, variant="cos_phase", random_state=0),
        ]
    for m in maps:
        m.fit(X).transform(X)
    km.TensorSketch(n_components=16, random_state=0).fit(X).transform(sp.csr_matrix(X))
    stats = {}
    for k in _jit.kernels():
        for key, d in k.dispatchers().items():
            stats[f"{k.__name__}[{key}]"] = [
                sum(d.stats.cache_hits.values()),
                sum(d.stats.cache_misses.values()),
                len(d.signatures),
            ]
    print(json.dumps(stats))
    """
)


def _run_child(kind: str) -> dict[str, list[int]]:
    path = os.pathsep.join([PACKAGE_ROOT, os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path}
    env.pop("KERNELMAPS_ENGINE", None)
    done = subprocess.run(
        [sys.executable, "-c", CHILD, kind], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_a_later_process_loads_every_kernel_from_the_cache() -> None:
    """The second process compiles nothing, even on read-only, Fortran-ordered input."""
    first = _run_child("C arrays")  # compiles, or loads what an earlier run compiled
    later = _run_child("other layouts")
    assert set(first) <= set(later)
    expected = {
        "_cos_sin_into[float64]",
        "_cos_shifted_into[float64]",
        "_fastfood_rows[float64]",
        "_sorf_rows[float64]",
        "_tensor_sketch_dense[float64]",
        "_tensor_sketch_csr[('float64', 'int32')]",
        "_grid_keys[float64]",
    }
    assert expected <= set(later), sorted(later)
    for name, (hits, misses, n_signatures) in later.items():
        assert (hits, misses, n_signatures) == (1, 0, 1), (name, hits, misses, n_signatures)


def _c_and_other_layouts(a: np.ndarray) -> list[np.ndarray]:
    """``a`` read-only, Fortran-ordered, and as a column slice of a wider array."""
    readonly = a.copy()
    readonly.setflags(write=False)
    wide = np.zeros((a.shape[0], 2 * a.shape[1]), dtype=a.dtype)
    wide[:, ::2] = a
    return [readonly, np.asfortranarray(a), wide[:, ::2]]


def _single_version(kernel: _jit.Kernel) -> None:
    for dispatcher in kernel.dispatchers().values():
        assert len(dispatcher.signatures) == 1


def test_every_layout_runs_the_one_compiled_version() -> None:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((5, 3))
    d, n_blocks = 4, 2
    signs = rng.choice([-1.0, 1.0], size=(n_blocks, d))
    perms = np.array([rng.permutation(d) for _ in range(n_blocks)])
    gauss, scales = rng.standard_normal((n_blocks, d)), rng.standard_normal((n_blocks, d))
    expected = np.empty((5, n_blocks * d))
    hadamard.fastfood_rows(X, signs, perms, gauss, scales, expected)
    for X_other in _c_and_other_layouts(X):
        wide = np.zeros((5, 3 * n_blocks * d))
        out = wide[:, : n_blocks * d]  # not contiguous: written through a buffer
        hadamard.fastfood_rows(X_other, signs, perms.astype(np.int32), gauss, scales, out)
        np.testing.assert_array_equal(out, expected)
    _single_version(hadamard._fastfood_rows)

    signs3 = rng.choice([-1.0, 1.0], size=(n_blocks, 3, d))
    expected = np.empty((5, n_blocks * d))
    hadamard.sorf_rows(X, signs3, scales, expected)
    for X_other in _c_and_other_layouts(X):
        out = np.empty((5, n_blocks * d), order="F")
        hadamard.sorf_rows(X_other, signs3, scales, out)
        np.testing.assert_array_equal(out, expected)
    _single_version(hadamard._sorf_rows)

    rows = rng.standard_normal((3, 8))
    expected = rows.copy()
    hadamard.fwht_rows(expected)
    strided = np.zeros((3, 16))
    strided[:, ::2] = rows
    hadamard.fwht_rows(strided[:, ::2])
    np.testing.assert_array_equal(strided[:, ::2], expected)
    _single_version(hadamard._fwht_rows)

    P = rng.standard_normal((4, 6)) * 10
    expected = np.empty((4, 12))
    trig.cos_sin_into(P, expected, 0.5)
    for P_other in _c_and_other_layouts(P):
        wide = np.zeros((4, 30))
        trig.cos_sin_into(P_other, wide[:, 3:15], 0.5)
        np.testing.assert_array_equal(wide[:, 3:15], expected)
    _single_version(trig._cos_sin_into)

    offsets = rng.uniform(0, 6, size=6)
    expected = P.copy()
    trig.cos_shifted_into(expected, offsets, 0.5)
    strided = np.zeros((4, 12))
    strided[:, ::2] = P
    trig.cos_shifted_into(strided[:, ::2], np.repeat(offsets, 2)[::2], 0.5)
    np.testing.assert_array_equal(strided[:, ::2], expected)
    _single_version(trig._cos_shifted_into)

    hashes = rng.integers(0, 8, size=(2, 4))
    sk_signs = rng.choice([-1.0, 1.0], size=(2, 4))
    expected = np.empty((5, 8))
    sketch.tensor_sketch_dense(X, 1.5, 1.0, hashes, sk_signs, expected)
    for X_other in _c_and_other_layouts(X):
        # a slice, as in the FFT route's count sketches; Fortran order (through a buffer)
        for out in (np.empty((5, 2, 8))[:, 1], np.empty((5, 8), order="F")):
            sketch.tensor_sketch_dense(X_other, 1.5, 1.0, hashes, sk_signs, out)
            np.testing.assert_array_equal(out, expected)
    indptr = np.arange(0, 16, 3)  # every row: 3 non-zeros
    data, indices = X.ravel(), np.tile(np.arange(3), 5)
    for index in (np.int32, np.int64):
        out = np.empty((5, 2, 8))[:, 0]
        sketch.tensor_sketch_csr(
            data, indices.astype(index), indptr.astype(index), 3, 1.5, 1.0, hashes, sk_signs, out
        )
        np.testing.assert_array_equal(out, expected)
    _single_version(sketch._tensor_sketch_csr)
    _single_version(sketch._tensor_sketch_dense)

    keys_expected = np.empty((2, 5), dtype=np.uint64)
    shifts_t, pitches_t = rng.uniform(0, 1, (3, 2)), rng.uniform(0.5, 1, (3, 2))
    binning.grid_keys(X, shifts_t, pitches_t, keys_expected)
    for X_other in _c_and_other_layouts(X):
        keys = np.zeros((2, 10), dtype=np.uint64)
        binning.grid_keys(X_other, shifts_t.T.copy().T, pitches_t, keys[:, 3:8])
        np.testing.assert_array_equal(keys[:, 3:8], keys_expected)
        keys = np.zeros((2, 5), dtype=np.uint64, order="F")
        binning.grid_keys(X_other, shifts_t, pitches_t, keys)
        np.testing.assert_array_equal(keys, keys_expected)
    _single_version(binning._grid_keys)


def test_an_argument_type_outside_the_table_is_refused_not_compiled() -> None:
    dispatcher = hadamard._fwht_rows["float64"]
    with pytest.raises(TypeError):
        dispatcher(np.zeros((2, 4), dtype=np.int64))
    assert len(dispatcher.signatures) == 1
    with pytest.raises(TypeError, match="no compiled version for 'float16'"):
        hadamard.fwht_rows(np.zeros((2, 4), dtype=np.float16))


# -- where the cache goes -----------------------------------------------------------------

TINY = "def add_one(a):\n    for i in range(a.shape[0]):\n        a[i] += 1.0\n"


@pytest.fixture
def tiny_function(tmp_path, monkeypatch):
    """A function in a real source file (numba caches only those), not yet compiled."""
    folder = tmp_path / "source"
    folder.mkdir()
    (folder / "kernelmaps_tiny_kernel.py").write_text(TINY)
    monkeypatch.syspath_prepend(str(folder))
    sys.modules.pop("kernelmaps_tiny_kernel", None)
    import kernelmaps_tiny_kernel

    yield kernelmaps_tiny_kernel.add_one
    sys.modules.pop("kernelmaps_tiny_kernel", None)


@pytest.fixture
def no_writable_folder(tmp_path, monkeypatch):
    """numba finds no writable cache folder (a read-only install, no writable home)."""
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setattr(numba.config, "CACHE_DIR", "")
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setattr(_jit.tempfile, "gettempdir", lambda: str(temporary))
    monkeypatch.setattr(_jit, "_NO_CACHE_WARNED", False)
    ensure = numba.core.caching._CacheLocator.ensure_cache_path

    def refuse_outside_temporary(self):  # type: ignore[no-untyped-def]
        if not self.get_cache_path().startswith(str(temporary)):
            raise PermissionError(13, "Permission denied", self.get_cache_path())
        ensure(self)

    monkeypatch.setattr(
        numba.core.caching._CacheLocator, "ensure_cache_path", refuse_outside_temporary
    )
    return temporary


def test_no_writable_folder_caches_in_a_private_temporary_folder(
    no_writable_folder, tiny_function
) -> None:
    with pytest.raises(RuntimeError, match="no locator available"):  # numba alone: refused
        numba.njit(cache=True)(tiny_function)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dispatcher = _jit.jit()(tiny_function)
    folder = _jit.cache_folder(dispatcher)
    private = no_writable_folder / f"kernelmaps-numba-cache-{os.getuid()}"
    assert folder is not None and folder.startswith(str(private))
    assert (private.stat().st_mode & 0o777) == 0o700
    a = np.zeros(3)
    dispatcher(a)
    np.testing.assert_array_equal(a, 1.0)
    assert any(name.endswith(".nbi") for name in os.listdir(folder))  # the index was written


def test_an_unsafe_temporary_folder_is_not_used(no_writable_folder, tiny_function) -> None:
    """A folder others can write to could hold planted pickles: compile without a cache."""
    private = no_writable_folder / f"kernelmaps-numba-cache-{os.getuid()}"
    private.mkdir()
    private.chmod(0o777)
    with pytest.warns(RuntimeWarning, match="set NUMBA_CACHE_DIR to a writable folder"):
        dispatcher = _jit.jit()(tiny_function)
    assert _jit.cache_folder(dispatcher) is None
    a = np.zeros(2)
    dispatcher(a)
    np.testing.assert_array_equal(a, 1.0)
    assert os.listdir(private) == []


def test_compile_ahead_lists_every_signature(monkeypatch, capsys, tiny_function) -> None:
    from numba import types

    from kernelmaps._numba import __main__ as ahead

    tiny = _jit.Kernel(tiny_function, {"float64": types.void(_jit.array("float64", 1))}, {})
    monkeypatch.setattr(_jit, "kernels", lambda: [tiny])
    assert ahead.main() == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("add_one[float64]: ")
    assert " compiled in " in line or " loaded in " in line
