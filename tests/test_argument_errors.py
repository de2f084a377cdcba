"""Bad arguments of the public functions and estimators give one-line errors naming the
problem: each case here is a class of failure the fuzz suite (``tests/test_fuzz_*.py``)
found, pinned by its smallest input.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from kernelmaps import (
    CompactRandomFeatures,
    FeatureRidge,
    FeatureRidgeClassifier,
    KernelRidge,
    Nystroem,
    NystroemKernelRidge,
    RandomFourierFeatures,
    RandomMaclaurinFeatures,
    TensorSketch,
)
from kernelmaps.datasets import load_file, load_npy, load_npz, load_svmlight
from kernelmaps.exceptions import InsufficientMemoryError, NonFiniteOutputError
from kernelmaps.experiments import DatasetConfig, prepare_data
from kernelmaps.kernels import (
    AdditiveChi2,
    Gaussian,
    HistogramIntersection,
    MaclaurinKernel,
    Matern,
    SkewedChi2,
    check_kernel_matrix,
    make_kernel,
    resolve_kernel,
    squared_row_norms,
)
from kernelmaps.sampling import (
    kernel_diagonal,
    landmark_sample_size,
    orthogonal_directions,
    recursive_rls_indices,
    resolve_landmarks,
    select_landmarks,
    uniform_points,
)
from kernelmaps.sampling._qmc import _halton_scramble_bytes

RNG = np.random.default_rng


def _one_line(info: pytest.ExceptionInfo[BaseException]) -> str:
    message = str(info.value)
    assert "\n" not in message.strip(), message
    return message


@pytest.mark.parametrize(
    "model",
    [
        KernelRidge(kernel="laplacian", alpha=0.1),
        FeatureRidge(RandomFourierFeatures(n_components=8, random_state=0)),
        NystroemKernelRidge(n_components=4, random_state=0),
        FeatureRidgeClassifier(RandomFourierFeatures(n_components=8, random_state=0)),
    ],
    ids=lambda m: type(m).__name__,
)
def test_models_refuse_nan_in_one_line(model) -> None:
    X = RNG(0).random((12, 3))
    y = np.arange(12) % 2
    bad = X.copy()
    bad[4, 1] = np.nan
    with pytest.raises(ValueError, match="contains NaN") as info:
        model.fit(bad, y)
    assert type(model).__name__ in _one_line(info)
    model.fit(X, y)
    with pytest.raises(ValueError, match="contains NaN") as info:
        model.predict(bad)
    _one_line(info)


@pytest.mark.parametrize(
    ("model", "name"),
    [
        (NystroemKernelRidge(cache_size=False), "cache_size"),
        (NystroemKernelRidge(n_components=True), "n_components"),
        (NystroemKernelRidge(max_iter=True), "max_iter"),
        (KernelRidge(alpha=True), "alpha"),
        (FeatureRidge(alpha=True), "alpha"),
    ],
)
def test_model_parameters_refuse_bools(model, name) -> None:
    with pytest.raises(ValueError, match=name):
        model.fit(RNG(0).random((10, 2)), np.arange(10.0))


def test_kernel_parameters_beyond_int64_and_missing_ones() -> None:
    # 2**64 is a valid (huge) gamma; 10**400 does not fit a float and is refused.
    rff = RandomFourierFeatures(n_components=4, kernel="chi2", gamma=2**64, random_state=0)
    with pytest.raises(ValueError, match="shift-invariant"):
        rff.fit(np.ones((2, 2)))
    with pytest.raises(ValueError, match="positive finite number") as info:
        make_kernel("rbf", gamma=10**400)
    _one_line(info)
    with pytest.raises(ValueError, match=r"needs parameter\(s\) \['coefficients'\]"):
        RandomMaclaurinFeatures(kernel="maclaurin", random_state=0).fit(np.ones((3, 2)))
    with pytest.raises(ValueError, match="coefficients"):
        NystroemKernelRidge(kernel="maclaurin", random_state=0).fit(np.ones((3, 2)), [1, 2, 3])


@pytest.mark.parametrize(
    "kernel", [AdditiveChi2(), SkewedChi2(), HistogramIntersection(), Gaussian(gamma=1.0)]
)
def test_kernels_refuse_empty_and_non_finite_input(kernel) -> None:
    with pytest.raises(ValueError, match="at least one row"):
        kernel(np.zeros((0, 2)))
    with pytest.raises(ValueError, match="at least one row"):
        kernel(np.ones((2, 2)), np.zeros((0, 2)))
    for value, word in ((np.nan, "NaN"), (np.inf, "infinity")):
        X = np.ones((2, 2))
        X[1, 0] = value
        with pytest.raises(ValueError, match=f"Input X contains {word}") as info:
            kernel(X)
        _one_line(info)
        with pytest.raises(ValueError, match=f"Input Y contains {word}"):
            kernel(np.ones((1, 2)), X)
        with pytest.raises(ValueError, match=f"Input X contains {word}"):
            kernel.diag(X)
        with pytest.raises(ValueError, match=f"Input X contains {word}"):
            kernel(sp.csr_matrix(X))


def test_squared_row_norms_checks_its_input_and_its_result() -> None:
    assert squared_row_norms([[1, 2], [0, 0]]).tolist() == [5.0, 0.0]
    assert squared_row_norms(sp.coo_matrix([[3.0, 4.0]])).tolist() == [25.0]
    with pytest.raises(ValueError, match="contains NaN"):
        squared_row_norms([[np.nan, 1.0]])
    with pytest.raises(NonFiniteOutputError, match="row 1"):
        squared_row_norms([[1.0, 1.0], [1e200, 0.0]])
    with pytest.raises(ValueError, match="2D"):
        squared_row_norms([1.0, 2.0])
    # the maps keep the unchecked norms: a series that diverges is named as such
    kernel = MaclaurinKernel(lambda n: 1.0, radius=1.0)  # 1 / (1 - t)
    with pytest.raises(ValueError, match="radius of convergence"):
        RandomMaclaurinFeatures(kernel=kernel, random_state=0).fit(np.array([[1e200, 0.0]]))


GOOD_X = np.arange(24.0).reshape(12, 2)


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: uniform_points(4, 2, "sobol", rng=np.random.RandomState(0)), TypeError,
         "numpy.random.Generator"),
        (lambda: uniform_points(-1, 2, "halton"), ValueError, "n_points must be an int >= 0"),
        (lambda: uniform_points(4, 0, "halton"), ValueError, "dimension must be an int >= 1"),
        (lambda: uniform_points(4, True, "halton"), TypeError, "dimension must be an int"),
        (lambda: uniform_points(4, 2.0, "halton"), TypeError, "dimension must be an int"),
        (lambda: uniform_points(4, 2, ["sobol"]), ValueError, "method must be one of"),
        (lambda: uniform_points(4, 2, "sobol", scramble="yes"), TypeError, "scramble"),
        (lambda: uniform_points(4, 21202, "sobol"), ValueError, "up to dimension 21201"),
        (lambda: uniform_points(3, 10**12, "sobol"), ValueError, "up to dimension 21201"),
        (
            lambda: uniform_points(0, 10**6, "halton", scramble=False),
            ValueError,
            "up to dimension 100000",
        ),
        (lambda: uniform_points(10**12, 3, "sobol"), InsufficientMemoryError, "points"),
        (lambda: uniform_points(64, 50_000, "halton"), InsufficientMemoryError, "permutations"),
        (lambda: orthogonal_directions(3, 2, None), TypeError, "numpy.random.Generator"),
        (lambda: orthogonal_directions(0, 2, RNG(0)), ValueError, "n_directions"),
        (lambda: orthogonal_directions(10**7, 10**6, RNG(0)), InsufficientMemoryError,
         "Gaussian"),
        (lambda: select_landmarks(GOOD_X, None, "uniform", rng=RNG(0)), TypeError,
         "n_landmarks must be an int"),
        (lambda: select_landmarks(GOOD_X, 2, "uniform", rng=None), TypeError,
         "numpy.random.Generator"),
        (lambda: select_landmarks(GOOD_X, 2, "leverage", kernel="rbf", rng=RNG(0)), TypeError,
         "kernel must be callable"),
        (lambda: select_landmarks(GOOD_X[0], 2, "uniform", rng=RNG(0)), ValueError, "2D"),
        (lambda: select_landmarks(np.zeros((0, 2)), 2, "uniform", rng=RNG(0)), ValueError,
         "at least one row"),
        (lambda: select_landmarks(np.array([["a", "b"]]), 1, "uniform", rng=RNG(0)),
         ValueError, "must hold numbers"),
        (lambda: recursive_rls_indices(GOOD_X, "3", Gaussian(gamma=1.0), RNG(0)), TypeError,
         "n_landmarks must be an int"),
        (lambda: recursive_rls_indices(GOOD_X.tolist(), 0, Gaussian(gamma=1.0), RNG(0)),
         ValueError, "n_landmarks must be an int >= 1"),
        (lambda: resolve_landmarks(GOOD_X, "kmeans", 2, rng=np.random.RandomState(0)),
         TypeError, "numpy.random.Generator"),
        (lambda: resolve_landmarks(GOOD_X, "uniform", -1, rng=RNG(0)), ValueError,
         "n_components must be an int >= 1"),
        (lambda: kernel_diagonal(None, GOOD_X), TypeError, "kernel must be callable"),
        (lambda: landmark_sample_size(True), TypeError, "n_landmarks"),
    ],
)  # fmt: skip
def test_sampling_functions_check_their_arguments(call, error, match) -> None:
    with pytest.raises(error, match=match) as info:
        call()
    _one_line(info)


def test_sampling_functions_accept_array_likes() -> None:
    rows = GOOD_X.astype(int).tolist()
    L, idx = select_landmarks(rows, 3, "uniform", rng=RNG(0))
    assert L.shape == (3, 2) and L.dtype == np.float64 and idx.shape == (3,)
    kernel = Gaussian(gamma=0.1)
    assert recursive_rls_indices(rows, 4, kernel, RNG(0)).shape == (4,)
    assert kernel_diagonal(lambda A, B: A @ B.T, rows)[1] == 2.0**2 + 3.0**2
    L, _ = resolve_landmarks(sp.coo_matrix(GOOD_X), "uniform", 2, rng=RNG(0))
    assert L.shape == (2, 2)
    assert uniform_points(0, 3, "sobol").shape == (0, 3)


def test_halton_scramble_bytes_is_scipys_allocation() -> None:
    """The estimate counts scipy's permutations exactly: ceil(54 / log2 p) - 1 int64
    permutations of p digits for each of the first ``d`` primes."""
    primes = [2, 3, 5, 7, 11]
    expected = sum(8 * p * (int(np.ceil(54 / np.log2(p))) - 1) for p in primes)
    assert _halton_scramble_bytes(5) == expected
    assert _halton_scramble_bytes(10**6) >= 4.0 * 10**12


def test_svmlight_loader_arguments(tmp_path) -> None:
    path = tmp_path / "d.svm"
    path.write_text("1 1:0.5 2:1.0\n-1 2:2.0\n")
    for kwargs, match in (
        ({"n_features": -1}, "n_features must be None or an int >= 1"),
        ({"n_features": True}, "n_features"),
        ({"n_features": 2.5}, "n_features"),
        ({"zero_based": "yes"}, "zero_based must be True, False or 'auto'"),
        ({"dense": "no"}, "dense must be True or False"),
    ):
        with pytest.raises((ValueError, TypeError), match=match):
            load_svmlight(path, **kwargs)
    assert load_svmlight(path, n_features=3).X.shape == (2, 3)


def test_npy_with_a_corrupt_header_is_named(tmp_path) -> None:
    path = tmp_path / "bad.npy"
    np.save(path, np.ones((3, 2)))
    raw = bytearray(path.read_bytes())
    start = raw.index(b"{")
    raw[start : start + 24] = b"{'descr': nonsense, 'sh"
    path.write_bytes(bytes(raw))
    with pytest.raises(ValueError, match=r"bad\.npy") as info:
        load_npy(path)
    assert "not a readable .npy array" in _one_line(info)


def test_kernel_matrices_are_checked_finite() -> None:
    with pytest.raises(NonFiniteOutputError, match="NaN or infinite"):
        check_kernel_matrix(np.array([[1.0, -np.inf], [0.0, 1.0]], dtype=np.float16), 2, None)
    K = check_kernel_matrix([[1, 0], [0, 1]], 2, 2)
    assert K.dtype == np.float64
    with pytest.raises(NonFiniteOutputError, match="callable returned NaN"):
        Nystroem(kernel=lambda A, B: np.full((len(A), len(B)), np.nan), n_components=3,
                 random_state=0).fit(GOOD_X)  # fmt: skip
    with pytest.raises(NonFiniteOutputError, match="k\\(x, x\\) of row 0"):
        kernel_diagonal(lambda A, B: np.full((len(A), len(B)), np.inf), GOOD_X)


@pytest.mark.parametrize("kernel", ["polynomial", "rbf", "matern", "laplacian"])
@pytest.mark.parametrize("n_features", [0, -1, True, 2.0])
def test_kernels_resolve_for_a_positive_number_of_columns(kernel, n_features) -> None:
    with pytest.raises(ValueError, match="n_features must be an int >= 1"):
        resolve_kernel(kernel, n_features)


def test_orthogonal_directions_of_small_blocks_are_batched_exactly() -> None:
    """The batched QR of many small blocks gives the loop's directions, bit for bit."""
    import scipy.linalg

    for d, n in ((1, 7), (3, 10), (8, 64), (64, 130)):
        W = orthogonal_directions(n, d, RNG(5))
        G = RNG(5).standard_normal((-(-n // d) * d, d))
        for b in range(-(-n // d)):
            k = min(d, n - b * d)
            q, r = scipy.linalg.qr(G[b * d : (b + 1) * d, :k], mode="economic")
            expected = q.T * np.where(np.diag(r) < 0.0, -1.0, 1.0)[:, None]
            np.testing.assert_array_equal(W[b * d : b * d + k], expected)


def test_tensor_sketch_huge_degrees() -> None:
    X = RNG(0).random((4, 3))
    with pytest.raises(InsufficientMemoryError, match="count sketches"):
        TensorSketch(n_components=16, degree=10**12, coef0=0.0, random_state=0).fit(X)
    # d'^p overflows a float: the FFT route, no OverflowError
    model = TensorSketch(n_components=16, degree=2000, gamma=0.1, random_state=0).fit(X)
    assert model._route() == "fft"


def test_falkon_cache_and_targets_at_the_float_limit() -> None:
    X = RNG(0).random((30, 2))
    y = X.sum(axis=1)
    plain = NystroemKernelRidge(n_components=8, random_state=0).fit(X, y).predict(X)
    for cache in (1e308, np.float32(1e38), 0.0):
        model = NystroemKernelRidge(n_components=8, cache_size=cache, random_state=0)
        np.testing.assert_array_equal(model.fit(X, y).predict(X), plain)
    # the CG scales each target column by a power of two below it (2^1024 overflowed):
    # one row, one landmark, k = 1: (1 + alpha) c = y
    for target in (1e308, -1.7e308):
        model = NystroemKernelRidge(n_components=1, alpha=0.5, kernel="laplacian", tol=1e-12)
        pred = model.fit(np.ones((1, 1)), [target]).predict(np.ones((1, 1)))
        np.testing.assert_allclose(pred, [target / 1.5], rtol=1e-9)


def test_parameters_of_the_wrong_type() -> None:
    X = RNG(0).random((10, 2))
    with pytest.raises(ValueError, match="alphas must be a non-empty list"):
        FeatureRidge(alphas={}).fit(X, X.sum(axis=1))
    with pytest.raises(ValueError, match="landmarks must be a method name"):
        Nystroem(landmarks={}, n_components=3).fit(X)
    with pytest.raises(ValueError, match="beyond the range of X's dtype float32"):
        NystroemKernelRidge(landmarks=np.full((2, 2), 1e200)).fit(X.astype(np.float32), X[:, 0])


def test_load_file_refuses_a_target_for_svmlight(tmp_path) -> None:
    path = tmp_path / "d.svm"
    path.write_text("1 1:0.5 2:1.0\n-1 2:2.0\n")
    with pytest.raises(ValueError, match="carries its target") as info:
        load_file(path, target="y")
    assert "d.svm" in _one_line(info)


def test_compare_scaling_is_overflow_safe(tmp_path) -> None:
    X = np.clip(RNG(0).normal(size=(40, 3)), -4.0, 4.0) * (1.7e308 / 4.0)
    path = tmp_path / "huge.csv"
    np.savetxt(path, np.column_stack([X, X[:, 0] > 0]), delimiter=",", header="a,b,c,y",
               comments="", fmt="%.17g")  # fmt: skip
    for how, bound in (("minmax", 1.0), ("standard", 5.0)):
        data = prepare_data(DatasetConfig(str(path), target="y", n_fit=30, n_eval=10,
                                          preprocess=how))  # fmt: skip
        assert np.abs(data.X_fit).max() <= bound * (1 + 1e-12)
        assert np.all(np.isfinite(data.X_eval))
    # the ordinary case is computed as written, bit for bit
    small = tmp_path / "small.csv"
    np.savetxt(small, np.column_stack([X / 1e307, X[:, 0] > 0]), delimiter=",",
               header="a,b,c,y", comments="", fmt="%.17g")  # fmt: skip
    data = prepare_data(DatasetConfig(str(small), target="y", n_fit=30, n_eval=10))
    raw = np.loadtxt(small, delimiter=",", skiprows=1)[:, :3]
    order = np.random.default_rng(0).permutation(40)
    fit = raw[order[:30]]
    lo, hi = fit.min(axis=0), fit.max(axis=0)
    np.testing.assert_array_equal(data.X_fit, (fit - lo) / (hi - lo))


def test_compare_refusals(tmp_path, capsys) -> None:
    from kernelmaps.cli import main

    path = tmp_path / "good.csv"
    X = RNG(0).normal(size=(60, 3))
    np.savetxt(path, np.column_stack([X, X.sum(axis=1)]), delimiter=",", header="a,b,c,y",
               comments="")  # fmt: skip
    base = ["compare", "--datasets", str(path), "--target", "y", "--methods", "rff-mc",
            "--n-components", "8", "--seeds", "1", "--n-fit", "20", "--n-eval", "10",
            "--no-plot", "-q"]  # fmt: skip
    assert main([*base, "-o", ""]) == 2
    assert "-o/--output is empty" in capsys.readouterr().err
    # every cell refusing its input: one error line naming the data set and the first error
    # (a study without scaling, on values near the float limit: every map overflows)
    huge = tmp_path / "huge.csv"
    np.savetxt(huge, np.column_stack([X * 1e307, X.sum(axis=1)]), delimiter=",",
               header="a,b,c,y", comments="", fmt="%.17g")  # fmt: skip
    study = tmp_path / "study.toml"
    study.write_text(
        'name = "huge"\nn_components = [8]\nseeds = 1\n[[datasets]]\n'
        f'name = "{huge}"\ntarget = "y"\npreprocess = "none"\nn_fit = 20\nn_eval = 10\n'
        '[[methods]]\nname = "rff-mc"\n'
    )
    assert main(["compare", "--config", str(study), "-o", str(tmp_path / "h"), "-q",
                 "--no-plot"]) == 1  # fmt: skip
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("kernelmaps compare: error: every cell failed")
    assert "the first, huge / rff-mc / D=8 / seed 0: NonFiniteOutputError:" in last
    assert main([*base, "--metrics", "accuracy", "-o", str(tmp_path / "a")]) == 2
    err = capsys.readouterr().err
    assert "do not apply to these data sets" in err and "every cell failed" not in err
    # a NaN metric in the log (json reads NaN) is skipped and its cell computed again
    out = tmp_path / "r"
    assert main([*base, "-o", str(out)]) == 0
    log = out / "cells.jsonl"
    record = json.loads(log.read_text().splitlines()[0])
    record["metrics"] = {name: float("nan") for name in record["metrics"]}
    log.write_text(json.dumps(record) + "\n")
    assert main([*base, "-o", str(out)]) == 0
    assert "not a finite number; the line is skipped" in capsys.readouterr().err
    with open(out / "results.csv") as fh:
        assert "nan" not in fh.read().lower()


@pytest.mark.parametrize("xor", [0xFF, 0x01])
def test_npz_with_any_byte_flipped_loads_or_is_named(tmp_path, xor) -> None:
    """Every single-byte corruption of an archive gives a data set or a DataFileError
    (a damaged directory made zipfile seek before the start: a leaked OSError)."""
    from kernelmaps.datasets import DataFileError

    good = tmp_path / "good.npz"
    np.savez(good, X=np.arange(12.0).reshape(4, 3), y=np.arange(4.0))
    data = good.read_bytes()
    path = tmp_path / "flipped.npz"
    for i in range(len(data)):
        path.write_bytes(data[:i] + bytes([data[i] ^ xor]) + data[i + 1 :])
        for target in (None, "y"):
            try:
                loaded = load_npz(path, target=target)
            except DataFileError as exc:
                message = str(exc)
                # one line, naming the file, quoting at most a short part of zipfile's text
                assert "flipped.npz" in message and "\n" not in message and len(message) < 600
            else:
                assert np.all(np.isfinite(loaded.X))
                assert loaded.y is None or loaded.X.shape[0] == loaded.y.shape[0]


def test_tensor_sketch_direct_route_bounds_its_scratch() -> None:
    """The compiled direct sum keeps (d + 1)^(p - 1) partial products per row, also
    without the constant coordinate: one column at degree 30 took 2^29 of them."""
    X = RNG(0).random((5, 1)) * 0.5
    model = TensorSketch(n_components=16, degree=30, coef0=0.0, gamma=1.0, random_state=0)
    assert model.fit(X)._route() == "fft"
    assert np.all(np.isfinite(model.transform(X)))
    low = TensorSketch(n_components=16, degree=3, coef0=0.0, gamma=1.0, random_state=0)
    assert low.fit(X)._route() == "direct"


def test_huge_sizes_and_gammas_are_refused_or_computed() -> None:
    X = RNG(1).random((6, 3))
    with pytest.raises(InsufficientMemoryError, match="projection"):
        CompactRandomFeatures(n_components=2**64, up_factor=np.int64(7), random_state=0).fit(X)
    # gamma = 1e308 with one landmark: 2 gamma overflows, the exact route is used
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # n_components capped at n_samples
        model = NystroemKernelRidge(n_components=4, gamma=1e308, random_state=0)
        pred = model.fit(X[:1], [1.0]).predict(X)
    assert np.all(np.isfinite(pred))


def test_transform_blocks_fit_the_available_memory(monkeypatch) -> None:
    """Rows of large temporaries are transformed in blocks that fit half the available
    memory (here 256 MiB): TensorSketch at degree 10^6 holds 3 * 10^6 sketches per row."""
    import kernelmaps._memory

    X = RNG(0).random((6, 1)).astype(np.float32) * 0.5
    model = TensorSketch(n_components=16, degree=10**6, coef0=0.0, gamma=1.0, random_state=0)
    model.fit(X)
    monkeypatch.setattr(kernelmaps._memory, "available_memory", lambda: 256 * 2**20)
    assert model._memory_block_rows(model._block_bytes_per_row(X)) == 1
    assert np.all(np.isfinite(model.transform(X)))
    monkeypatch.setattr(kernelmaps._memory, "available_memory", lambda: 64 * 2**20)
    with pytest.raises(InsufficientMemoryError, match="a single row"):
        model.transform(X)


def test_matern_at_the_largest_gammas() -> None:
    X = np.array([[0.0], [1.0], [2.0]])
    np.testing.assert_array_equal(Matern(gamma=1e308)(X), np.eye(3))
    assert Matern(gamma=0.5).scale == 1.0  # the ordinary formula, bit for bit


def test_user_kernels_that_overflow_are_refused_without_warnings() -> None:
    def linear(A, B):
        return np.asarray(A) @ np.asarray(B).T

    X = np.full((4, 3), 1e200)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(NonFiniteOutputError, match="k\\(x, x\\) of row 0"):
            kernel_diagonal(linear, X)
        with pytest.raises(NonFiniteOutputError, match="landmarks='leverage'"):
            recursive_rls_indices(X, 2, linear, RNG(0))


def test_spectral_error_of_an_exact_approximation_is_zero() -> None:
    """A constant kernel matrix is approximated exactly by RFF on constant rows: the error
    operator is 0 (up to float32 rounding), where ARPACK stopped with "starting vector is
    zero"."""
    from kernelmaps import feature_map_error

    X = np.full((6, 3), 0.5, dtype=np.float32, order="F")
    model = RandomFourierFeatures(random_state=0).fit(X)
    # Exactly 0 in exact arithmetic; in float32 only up to rounding.  K is the all-ones
    # n x m matrix (distance 0), and every row z of Z is the same, |z|^2 = 1 up to the
    # rounding of the D cosines, sines and weights (a few units u = eps / 2 in all).  Each
    # entry of Z Z^T is a dot product of D float32 terms, within gamma_D |z|^2 ~ D u of the
    # exact one whatever the summation order (Higham 2002, section 3.1), hence whatever
    # BLAS kernel runs it.  So |K - Z Z^T| <= (D + 4) u entrywise, and with
    # |E|_2 <= sqrt(n m) max|E_ij| = |K|_2 max|E_ij| the relative spectral error is at
    # most (D + 4) u.
    tol = (model.n_components + 4) * np.finfo(np.float32).eps / 2
    for Y in (None, X[:4].copy()):
        error = feature_map_error(model, X, Y, norm="spectral", relative=True, block_rows=2)
        assert 0.0 <= error <= tol


def test_gaussian_landmark_block_at_the_float_limit() -> None:
    X = sp.coo_matrix(np.array([[1.7e308, -1.7e308], [-1.7e308, 1.7e308], [1.7e308, 1.7e308]]))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        warnings.simplefilter("ignore", UserWarning)  # n_components capped at n_samples
        model = NystroemKernelRidge(n_components=3, random_state=0).fit(X, [1.0, 2.0, 3.0])
    assert np.all(np.isfinite(model.predict(X)))
