"""FeatureRidge and FeatureRidgeClassifier fitted on Dask arrays.

The Dask fit maps the same rows through the same fitted map and accumulates the same
statistics; only the grouping of the sums differs (row blocks within chunks, then chunks
merged pairwise by the Chan-Golub-LeVeque update, instead of one running sum).  Hence the
tolerances, all from the rounding of a regrouped sum:

* a sum of ``n`` terms regrouped changes by at most about ``n u`` times the sum of the
  terms' magnitudes (``u`` the unit roundoff); for the centred Gram matrix, by Cauchy-
  Schwarz, that is ``n u sqrt(G_ii G_jj)`` entrywise.  ``ROUNDING = 10 n u`` (a margin of
  10 for the few operations per term) bounds the relative change of the statistics;
* the weights solve ``(G + alpha I) W = C``: a relative perturbation ``r`` of ``G`` and
  ``C`` moves ``W`` by at most ``2 kappa r`` relatively (norm-wise), ``kappa`` the
  condition number of ``G + alpha I``; the leave-one-out and GCV errors are smooth
  functions of the same resolvent ``(G + alpha I)^{-1}`` and get the same bound (times 2
  for the ``1 / (1 - h_i)`` factors, ``h_i <= 1/2`` here).

The chosen penalty, the classes and the predicted labels must be equal.
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
import dask  # noqa: E402
import dask.threaded  # noqa: E402
import scipy.sparse as sp  # noqa: E402
import sklearn  # noqa: E402
from sklearn.exceptions import DataConversionWarning  # noqa: E402
from sklearn.kernel_approximation import RBFSampler  # noqa: E402
from sklearn.preprocessing import FunctionTransformer  # noqa: E402

import kernelmaps  # noqa: E402
from kernelmaps import (  # noqa: E402
    FeatureRidge,
    FeatureRidgeClassifier,
    Nystroem,
    RandomBinningFeatures,
    RandomFourierFeatures,
    _memory,
)
from kernelmaps._parallel import n_threads  # noqa: E402
from kernelmaps._rows import tree_reduce  # noqa: E402
from kernelmaps.exceptions import InsufficientMemoryError, NonFiniteOutputError  # noqa: E402
from tests._dask import CHUNKINGS, as_dask, nothing_computed  # noqa: E402

pytestmark = pytest.mark.dask

N, D_IN, D_OUT = 150, 4, 30
ALPHAS = [1e-2, 1e-1, 1.0, 10.0]
U64 = np.finfo(np.float64).eps / 2
ROUNDING = 10 * N * U64


@pytest.fixture(scope="module")
def data() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((N, D_IN))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.standard_normal(N)
    Y = np.column_stack([y, X[:, 2] * X[:, 3]])
    w = rng.uniform(0.2, 3.0, N)
    labels = np.array(["low", "mid", "high"])[(X[:, 0] > -0.4).astype(int) + (X[:, 0] > 0.4)]
    return {"X": X, "y": y, "Y": Y, "w": w, "labels": labels}


def _rff() -> RandomFourierFeatures:
    return RandomFourierFeatures(gamma=0.3, n_components=D_OUT, random_state=0)


def _kappa(model, alpha: float) -> float:
    """Condition number of ``G + alpha I`` of a fitted model (its own statistics)."""
    G = model.statistics_.centred()[0] if model.fit_intercept else model.statistics_.uncentred()[0]
    evals = np.clip(np.linalg.eigvalsh(G), 0.0, None)
    return float((evals.max() + alpha) / (evals.min() + alpha))


def assert_within(got: np.ndarray, ref: np.ndarray, atol: np.ndarray) -> None:
    """``|got - ref| <= atol`` entrywise (``atol`` an array, which assert_allclose refuses)."""
    excess = np.abs(got - ref) - atol
    assert np.all(excess <= 0), f"{np.sum(excess > 0)} entries off, worst by {excess.max():.3g}"


def assert_same_statistics(got, ref, rtol: float = ROUNDING) -> None:
    """The statistics of the same rows (shift-independent contents) to rounding."""
    assert got.n_samples == ref.n_samples
    assert (got.n_features, got.n_targets) == (ref.n_features, ref.n_targets)
    np.testing.assert_allclose(got.weight_sum, ref.weight_sum, rtol=rtol)
    for g, r in zip(got.means(), ref.means(), strict=True):
        np.testing.assert_allclose(g, r, rtol=0, atol=rtol * np.abs(r).max())
    for g, r in zip(got.centred(), ref.centred(), strict=True):
        scale = np.sqrt(np.abs(np.diag(r))) if r.ndim == 2 and r.shape[0] == r.shape[1] else None
        if scale is None:  # cross products and target sums of squares: by the largest
            np.testing.assert_allclose(g, r, rtol=0, atol=rtol * np.abs(r).max())
        else:
            assert_within(g, r, rtol * np.outer(scale, scale))


def assert_same_fit(got, ref) -> None:
    """A Dask fit equal to the numpy fit ``ref`` to the rounding of the regrouped sums."""
    assert_same_statistics(got.statistics_, ref.statistics_)
    assert got.alpha_ == ref.alpha_
    tol = 2 * _kappa(ref, ref.alpha_) * ROUNDING
    for name in ("coef_", "intercept_"):
        assert isinstance(getattr(got, name), np.ndarray | float)
    coef = np.atleast_2d(ref.coef_)
    np.testing.assert_allclose(got.coef_, ref.coef_, rtol=0, atol=tol * np.linalg.norm(coef))
    z_mean, y_mean = ref.statistics_.means()
    intercept_atol = (
        tol * np.linalg.norm(coef) * np.linalg.norm(z_mean) + ROUNDING * np.abs(y_mean).max()
    )
    np.testing.assert_allclose(got.intercept_, ref.intercept_, rtol=0, atol=intercept_atol)
    if hasattr(ref, "cv_errors_"):
        assert got.alpha_selection_ == ref.alpha_selection_
        np.testing.assert_allclose(got.cv_errors_, ref.cv_errors_, rtol=2 * tol)
    assert got.n_features_out_ == ref.n_features_out_
    assert got.n_features_in_ == ref.n_features_in_


def _dask_vector(v: np.ndarray, chunk: int = 50):
    """A Dask vector whose chunks are not those of X (the fit aligns them)."""
    return da.from_array(v, chunks=(chunk, *v.shape[1:]))


class CountingScheduler:
    """The threaded scheduler, counting how many graphs it is asked to compute."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, dsk, keys, **kwargs):
        self.calls += 1
        return dask.threaded.get(dsk, keys, **kwargs)


# -- FeatureRidge: equality with numpy ---------------------------------------------------


@pytest.mark.parametrize("chunking", list(CHUNKINGS))
@pytest.mark.parametrize("selection", ["fixed", "loo", "gcv"])
@pytest.mark.parametrize("targets", ["1-D", "2-D"])
@pytest.mark.parametrize("weighted", [False, True])
def test_fit_equals_numpy(data, chunking, selection, targets, weighted) -> None:
    y = data["y"] if targets == "1-D" else data["Y"]
    w = data["w"] if weighted else None
    params = {"alpha": 0.3} if selection == "fixed" else {"alphas": ALPHAS}
    if selection != "fixed":
        params["alpha_selection"] = "auto" if selection == "loo" else "gcv"
    ref = FeatureRidge(_rff(), **params).fit(data["X"], y, sample_weight=w)
    got = FeatureRidge(_rff(), **params).fit(
        as_dask(data["X"], chunking),
        _dask_vector(y),
        sample_weight=None if w is None else _dask_vector(w, 40),
    )
    assert_same_fit(got, ref)
    if selection != "fixed":
        assert got.alpha_selection_ == selection
    np.testing.assert_allclose(got.predict(data["X"]), ref.predict(data["X"]), rtol=1e-9)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_in_memory_targets_and_weights(data, fit_intercept) -> None:
    """numpy y and sample_weight (checked on the client, chunked like X), a scalar weight."""
    X = as_dask(data["X"], "rows-37")
    for w in (data["w"], list(data["w"]), 2.5):
        ref = FeatureRidge(_rff(), alphas=ALPHAS, fit_intercept=fit_intercept).fit(
            data["X"], data["Y"], sample_weight=w
        )
        got = FeatureRidge(_rff(), alphas=ALPHAS, fit_intercept=fit_intercept).fit(
            X, data["Y"], sample_weight=w
        )
        assert_same_fit(got, ref)


def test_passthrough_and_sparse_chunks(data) -> None:
    """The "passthrough" map on dense and on CSR-chunked X, and a map fed CSR chunks."""
    rng = np.random.default_rng(1)
    X = sp.random(N, 12, density=0.3, format="csr", random_state=rng)
    y, w = data["y"], data["w"]
    for chunking in ("rows-37", "column-chunked"):
        for feature_map in ("passthrough", _rff()):
            ref = FeatureRidge(feature_map, alphas=ALPHAS).fit(X, y, sample_weight=w)
            got = FeatureRidge(feature_map, alphas=ALPHAS).fit(
                as_dask(X, chunking), y, sample_weight=w
            )
            assert_same_fit(got, ref)
    ref = FeatureRidge("passthrough", alphas=ALPHAS).fit(data["X"], y)
    got = FeatureRidge("passthrough", alphas=ALPHAS).fit(as_dask(data["X"], "uneven-with-1-row"), y)
    assert_same_fit(got, ref)
    assert got.feature_map_ is None


def test_integer_input_is_converted(data) -> None:
    X = np.round(data["X"] * 10).astype(np.int64)
    ref = FeatureRidge(_rff(), alpha=0.5).fit(X, data["y"])
    got = FeatureRidge(_rff(), alpha=0.5).fit(as_dask(X, "rows-37"), data["y"])
    assert_same_fit(got, ref)


def test_foreign_transformer_receives_the_dask_array(data) -> None:
    """scikit-learn's RBFSampler: its fit gets the Dask array (and converts it itself)."""
    sampler = RBFSampler(gamma=0.3, n_components=D_OUT, random_state=0)
    ref = FeatureRidge(sampler, alphas=ALPHAS).fit(data["X"], data["y"])
    got = FeatureRidge(sampler, alphas=ALPHAS).fit(as_dask(data["X"], "rows-37"), data["y"])
    assert_same_fit(got, ref)
    assert isinstance(got.feature_map_.random_weights_, np.ndarray)


def test_map_without_width_is_probed_on_first_rows(data) -> None:
    """A transformer that does not state its width has its first rows mapped once."""
    square = FunctionTransformer(lambda X: np.hstack([X, X**2]))
    ref = FeatureRidge(square, alphas=ALPHAS).fit(data["X"], data["y"])
    counter = CountingScheduler()
    with dask.config.set(scheduler=counter):
        got = FeatureRidge(square, alphas=ALPHAS, alpha_selection="gcv").fit(
            as_dask(data["X"], "uneven-with-1-row"), data["y"]
        )
    # the probe of the first rows, the pass, the read of the rows scored for intervals
    assert counter.calls == 3
    assert got.n_features_out_ == 2 * D_IN
    ref_gcv = FeatureRidge(square, alphas=ALPHAS, alpha_selection="gcv").fit(data["X"], data["y"])
    assert_same_fit(got, ref_gcv)
    assert ref.n_features_out_ == got.n_features_out_


@pytest.mark.parametrize(
    "feature_map",
    [
        Nystroem(gamma=0.3, n_components=20, random_state=0),
        RandomBinningFeatures(n_grids=8, random_state=0),  # sparse features
    ],
    ids=["nystroem", "random-binning"],
)
def test_data_dependent_map_when_available(data, feature_map) -> None:
    """Maps fitted from the rows (read through the Dask rows)."""
    ref = FeatureRidge(feature_map, alphas=ALPHAS).fit(data["X"], data["y"])
    for chunking in CHUNKINGS:
        got = FeatureRidge(feature_map, alphas=ALPHAS).fit(as_dask(data["X"], chunking), data["y"])
        assert_same_fit(got, ref)


# -- the passes: computes, laziness, memory ----------------------------------------------


@pytest.mark.parametrize(
    ("params", "computes"),
    [
        ({"alpha": 0.3}, 1),
        ({"alphas": ALPHAS, "alpha_selection": "gcv"}, 1),
        ({"alphas": ALPHAS}, 2),  # "auto" in fit: exact leave-one-out, a second pass
    ],
)
def test_number_of_computes(data, params, computes) -> None:
    X, y, w = as_dask(data["X"], "rows-37"), _dask_vector(data["Y"]), _dask_vector(data["w"])
    counter = CountingScheduler()
    with dask.config.set(scheduler=counter):
        FeatureRidge(_rff(), **params).fit(X, y, sample_weight=w)
    assert counter.calls == computes
    # unweighted rows are exchangeable: one read more, of the rows scored for intervals
    counter = CountingScheduler()
    with dask.config.set(scheduler=counter):
        FeatureRidge(_rff(), **params).fit(X, y)
    assert counter.calls == computes + 1


def test_validation_computes_nothing(data) -> None:
    """Metadata errors are raised before any compute."""
    X = as_dask(data["X"], "rows-37")
    with nothing_computed():
        with pytest.raises(ValueError, match=r"inconsistent numbers of samples: \[150, 149\]"):
            FeatureRidge(_rff()).fit(X, _dask_vector(data["y"][:-1]))
        with pytest.raises(ValueError, match="dim 3, while dim <= 2 is required by FeatureRidge"):
            FeatureRidge(_rff()).fit(X, da.zeros((N, 2, 2), chunks=50))
        with pytest.raises(ValueError, match=r"sample_weight.shape == \(149,\), expected \(150,\)"):
            FeatureRidge(_rff()).fit(X, data["y"], sample_weight=_dask_vector(data["w"][:-1]))
        with pytest.raises(ValueError, match="Sample weights must be 1D array or scalar"):
            FeatureRidge(_rff()).fit(X, data["y"], sample_weight=da.ones((N, 2), chunks=50))
        with pytest.raises(ValueError, match="at least one non-zero"):
            FeatureRidge(_rff()).fit(X, data["y"], sample_weight=0.0)
        with pytest.raises(ValueError, match="y should be a 1d array"):
            FeatureRidgeClassifier(_rff()).fit(X, da.zeros((N, 2), chunks=50))
        with pytest.raises(ValueError, match="X has 3 features"):
            model = FeatureRidge(_rff(), alpha=1.0).fit(data["X"], data["y"])
            model.partial_fit(X[:, :3], data["y"])
        unknown = X[X[:, 0] > 10]  # a filter: unknown row chunk sizes
        with pytest.raises(ValueError, match="compute_chunk_sizes"):
            FeatureRidge(_rff()).fit(unknown, da.zeros(N, chunks=50))


def test_row_blocks_within_a_chunk_follow_working_memory(data) -> None:
    """A chunk's rows are mapped block by block (its whole Z never held), as in numpy."""
    seen: list[int] = []

    def identity(X):
        seen.append(X.shape[0])
        return X

    mapping = FunctionTransformer(identity, feature_names_out="one-to-one")
    per_row = 8.0 * (3 * D_IN + D_IN + 1)  # the ridge pass's bytes per row
    budget = 16 * per_row / 2**20  # 16 rows per block
    with sklearn.config_context(working_memory=budget):
        ref = FeatureRidge(mapping, alphas=ALPHAS).fit(data["X"], data["y"])
        seen.clear()
        with dask.config.set(scheduler="threads"):
            got = FeatureRidge(mapping, alphas=ALPHAS).fit(
                as_dask(data["X"], "one-chunk"), data["y"]
            )
    assert seen and max(seen) == 16  # the 150-row chunk in blocks of 16 rows, both passes
    assert sum(seen) == 2 * N
    assert_same_fit(got, ref)


def test_fitted_attributes_are_numpy(data) -> None:
    model = FeatureRidge(_rff(), alphas=ALPHAS).fit(as_dask(data["X"], "rows-37"), data["y"])
    stats = model.statistics_
    for value in (model.coef_, model.cv_errors_, stats.gram, stats.cross, stats.sum_yy):
        assert type(value) is np.ndarray
    assert type(model.intercept_) is float and type(model.alpha_) is float
    assert type(model.feature_map_.frequencies_) is np.ndarray
    with nothing_computed():
        lazy = [model.predict(as_dask(data["X"], chunking)) for chunking in CHUNKINGS]
    computed = dask.compute(*lazy)
    for prediction in computed:  # bitwise independent of the chunking
        np.testing.assert_array_equal(prediction, computed[0])
    # numpy predicts in other row blocks: a dot product of D terms, rounded differently
    np.testing.assert_allclose(computed[0], model.predict(data["X"]), rtol=10 * D_OUT * U64)


@pytest.mark.parametrize("targets", ["y", "Y"])
def test_uncertainty_on_dask_rows_is_lazy_and_equals_numpy(data, targets) -> None:
    """``return_std`` and ``predict_interval`` of Dask rows: lazy arrays, each chunk's
    (n, 2, t) bounds a new trailing axis; equal to the NumPy rows' to the rounding of
    their dot products of ``D + 1`` terms in other row blocks (``10 (D + 1) u`` of the
    largest value)."""
    model = FeatureRidge(_rff(), alphas=ALPHAS).fit(data["X"], data[targets])
    X = data["X"]
    with nothing_computed():
        _, std = model.predict(as_dask(X, "rows-37"), return_std=True)
        lower, upper = model.predict_interval(as_dask(X, "uneven-with-1-row"), coverage=0.8)
    ref_std = model.predict(X, return_std=True)[1]
    ref = (*model.predict_interval(X, coverage=0.8), ref_std)
    for got, want in zip(dask.compute(lower, upper, std), ref, strict=True):
        assert type(got) is np.ndarray and got.shape == want.shape
        atol = 10 * (D_OUT + 1) * U64 * np.abs(want).max()
        np.testing.assert_allclose(got, want, rtol=0, atol=atol)


def test_tree_reduce_pairs_neighbours_in_order() -> None:
    def join(a, b):
        return f"({a}{b})"

    assert tree_reduce(list("abcde"), join) == "(((ab)(cd))e)"
    assert tree_reduce(list("abcdef"), join) == "(((ab)(cd))(ef))"
    assert tree_reduce(["a"], join) == "a"
    with pytest.raises(ValueError, match="no parts"):
        tree_reduce([], join)


# -- values checked inside the chunk tasks -----------------------------------------------


def _numpy_error(fit, *args, **kwargs) -> str:
    with pytest.raises(ValueError) as info:
        fit(*args, **kwargs)
    return str(info.value)


def test_bad_values_raise_the_numpy_messages(data) -> None:
    X, y, w = data["X"].copy(), data["y"].copy(), data["w"].copy()
    X[100, 2] = np.nan
    y_inf = y.copy()
    y_inf[120] = np.inf
    w_nan = w.copy()
    w_nan[7] = np.nan
    cases = [
        (X, y, None),
        (data["X"], y_inf, None),
        (data["X"], y, w_nan),
        (data["X"], y, np.zeros(N)),
    ]
    for X_, y_, w_ in cases:
        expected = _numpy_error(FeatureRidge(_rff()).fit, X_, y_, sample_weight=w_)
        with pytest.raises(ValueError) as info:
            FeatureRidge(_rff()).fit(
                as_dask(X_, "rows-37"),
                _dask_vector(y_),
                sample_weight=None if w_ is None else _dask_vector(w_),
            )
        assert str(info.value) == expected
    # in-memory y: scikit-learn's checks on the client, same message
    expected = _numpy_error(FeatureRidge(_rff()).fit, data["X"], y_inf)
    with pytest.raises(ValueError) as info:
        FeatureRidge(_rff()).fit(as_dask(data["X"], "rows-37"), y_inf)
    assert str(info.value) == expected
    # the classifier's labels
    labels = np.where(data["X"][:, 0] > 0, 1.0, 0.0)
    labels[3] = np.nan
    expected = _numpy_error(FeatureRidgeClassifier(_rff()).fit, data["X"], labels)
    with pytest.raises(ValueError) as info:
        FeatureRidgeClassifier(_rff()).fit(as_dask(data["X"], "rows-37"), _dask_vector(labels))
    assert str(info.value) == expected


def test_assume_finite_skips_the_chunk_checks(data) -> None:
    """scikit-learn's assume_finite reaches the tasks: no scan for NaN, as in numpy."""
    y = data["y"].copy()
    y[5] = np.nan
    with sklearn.config_context(assume_finite=True):
        for X in (data["X"], as_dask(data["X"], "rows-37")):
            model = FeatureRidge(_rff(), alpha=1.0)
            # the sums meet the NaN instead, checked before the solve
            with pytest.raises(NonFiniteOutputError, match=r"unchecked under .*assume_finite"):
                model.fit(X, y)


def test_weights_are_checked_as_in_numpy(data) -> None:
    X = as_dask(data["X"], "rows-37")
    w = data["w"].copy()
    w[40] = -1.0
    expected = _numpy_error(FeatureRidge(_rff()).fit, data["X"], data["y"], sample_weight=w)
    assert "negative values (the smallest, -1, at row 40)" in expected
    for weights in (w, _dask_vector(w)):  # on the client; in the task of rows 37-73
        with pytest.raises(ValueError) as info:
            FeatureRidge(_rff()).fit(X, data["y"], sample_weight=weights)
        assert str(info.value) == expected
    with pytest.raises(ValueError, match="negative values"):
        FeatureRidge(_rff()).fit(X, data["y"], sample_weight=-1.0)
    # weighted sums that overflow: a clear error before the solve, not scipy's
    huge = np.full(N, 1e300)
    with pytest.raises(NonFiniteOutputError, match=r"Gram matrix Z\^T W Z .*rescale X"):
        FeatureRidge("passthrough").fit(as_dask(1e10 * data["X"], "rows-37"), data["y"], huge)


def test_memory_of_the_statistics_is_checked_before_any_compute(data, monkeypatch) -> None:
    monkeypatch.setattr(_memory, "available_memory", lambda: 1000)
    X = as_dask(data["X"], "rows-37")
    with nothing_computed(), pytest.raises(InsufficientMemoryError, match="30 x 30 Gram"):
        FeatureRidge(_rff()).fit(X, data["y"])
    with nothing_computed(), pytest.raises(InsufficientMemoryError, match="30 x 30 Gram"):
        FeatureRidge(_rff()).partial_fit(X, data["y"])


# -- partial_fit -------------------------------------------------------------------------


@pytest.mark.parametrize("chunking", list(CHUNKINGS))
def test_partial_fit_two_batches_equals_fit(data, chunking) -> None:
    X, Y, w = data["X"], data["Y"], data["w"]
    half = 70
    ref = FeatureRidge(_rff(), alphas=ALPHAS).fit(X, Y, sample_weight=w)
    ref_gcv = FeatureRidge(_rff(), alphas=ALPHAS, alpha_selection="gcv").fit(X, Y, sample_weight=w)
    model = FeatureRidge(_rff(), alphas=ALPHAS)
    for rows in (slice(0, half), slice(half, N)):
        model.partial_fit(
            as_dask(X[rows], chunking), _dask_vector(Y[rows], 30), sample_weight=w[rows]
        )
    assert model.alpha_selection_ == "gcv"  # "auto" in partial_fit
    assert_same_statistics(model.statistics_, ref.statistics_)
    assert_same_fit(model, ref_gcv)
    # a numpy batch after Dask batches: the same statistics, updated in place
    mixed = FeatureRidge(_rff(), alphas=ALPHAS, alpha_selection="gcv")
    mixed.partial_fit(as_dask(X[:half], chunking), Y[:half], sample_weight=w[:half])
    mixed.partial_fit(X[half:], Y[half:], sample_weight=w[half:])
    assert_same_fit(mixed, ref_gcv)


def test_partial_fit_checks(data) -> None:
    X = as_dask(data["X"], "rows-37")
    model = FeatureRidge(_rff(), alphas=ALPHAS).partial_fit(X, data["Y"])
    with pytest.raises(ValueError, match="y has 1 target"):
        model.partial_fit(X, data["y"])
    with pytest.raises(ValueError, match="needs every row again"):
        FeatureRidge(_rff(), alphas=ALPHAS, alpha_selection="loo").partial_fit(X, data["y"])
    counter = CountingScheduler()
    with dask.config.set(scheduler=counter):
        FeatureRidge(_rff(), alphas=ALPHAS).partial_fit(X, data["y"])
    assert counter.calls == 2  # the pass, and the read of the rows scored for intervals


def test_keep_statistics_and_partial_fit_after_a_dual_fit(data) -> None:
    X = as_dask(data["X"], "rows-37")
    lean = FeatureRidge(_rff(), keep_statistics=False).fit(X, data["y"])
    assert lean.statistics_ is None and lean.solver_ == "primal"
    ref = FeatureRidge(_rff()).fit(data["X"], data["y"])
    np.testing.assert_allclose(lean.coef_, ref.coef_, rtol=0, atol=1e-8 * np.abs(ref.coef_).max())
    with nothing_computed(), pytest.raises(ValueError, match="keep_statistics=False"):
        lean.partial_fit(X, data["y"])
    # a numpy fit on fewer rows than features (dual), then a Dask batch: the statistics
    # of the fit's rows are built from the kept rows, then merged with the batch's
    wide = RandomFourierFeatures(gamma=0.3, n_components=60, random_state=0)
    model = FeatureRidge(wide).fit(data["X"][:40], data["y"][:40])
    assert model.solver_ == "dual"
    model.partial_fit(as_dask(data["X"][40:], "rows-37"), data["y"][40:])
    assert model.solver_ == "primal"
    assert_same_fit(model, FeatureRidge(wide).partial_fit(data["X"], data["y"]))


# -- FeatureRidgeClassifier --------------------------------------------------------------


@pytest.mark.parametrize("chunking", list(CHUNKINGS))
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("selection", ["fixed", "loo"])
def test_classifier_equals_numpy(data, chunking, n_classes, selection) -> None:
    labels = data["labels"] if n_classes == 3 else np.where(data["labels"] == "low", "a", "b")
    params = {"alpha": 0.3} if selection == "fixed" else {"alphas": ALPHAS}
    ref = FeatureRidgeClassifier(_rff(), **params).fit(data["X"], labels, sample_weight=data["w"])
    got = FeatureRidgeClassifier(_rff(), **params).fit(
        as_dask(data["X"], chunking), _dask_vector(labels), sample_weight=data["w"]
    )
    np.testing.assert_array_equal(got.classes_, ref.classes_)
    assert_same_fit(got, ref)
    np.testing.assert_array_equal(got.predict(data["X"]), ref.predict(data["X"]))


def test_classifier_computes_and_in_memory_labels(data) -> None:
    """Dask labels: one small compute of the unique labels more; numpy labels: none.  The
    calibration reads its sample of rows in one compute more."""
    X = as_dask(data["X"], "rows-37")
    for labels, computes in ((_dask_vector(data["labels"]), 3), (data["labels"], 2)):
        counter = CountingScheduler()
        with dask.config.set(scheduler=counter):
            model = FeatureRidgeClassifier(_rff(), alpha=0.3).fit(X, labels)
        assert counter.calls == computes
        np.testing.assert_array_equal(model.classes_, ["high", "low", "mid"])
    column = _dask_vector(data["labels"][:, None])
    with pytest.warns(DataConversionWarning, match="column-vector y"):
        FeatureRidgeClassifier(_rff(), alpha=0.3).fit(X, column)
    expected = _numpy_error(FeatureRidgeClassifier(_rff()).fit, data["X"], np.zeros(N))
    with pytest.raises(ValueError) as info:
        FeatureRidgeClassifier(_rff()).fit(X, da.zeros(N, chunks=50))
    assert str(info.value) == expected
    expected = _numpy_error(FeatureRidgeClassifier(_rff()).fit, data["X"], data["y"])
    with pytest.raises(ValueError) as info:
        FeatureRidgeClassifier(_rff()).fit(X, _dask_vector(data["y"]))
    assert str(info.value) == expected


def test_classifier_partial_fit(data) -> None:
    X, labels = data["X"], data["labels"]
    classes = ["high", "low", "mid"]
    ref = FeatureRidgeClassifier(_rff(), alphas=ALPHAS, alpha_selection="gcv").fit(X, labels)
    model = FeatureRidgeClassifier(_rff(), alphas=ALPHAS)
    with pytest.raises(ValueError, match="classes must be given"):
        model.partial_fit(as_dask(X, "rows-37"), labels)
    model.partial_fit(as_dask(X[:60], "rows-37"), _dask_vector(labels[:60]), classes=classes)
    model.partial_fit(as_dask(X[60:], "rows-37"), labels[60:])
    assert_same_fit(model, ref)
    np.testing.assert_array_equal(model.predict(X), ref.predict(X))
    stray = labels[60:].copy()
    stray[50] = "odd"
    with pytest.raises(ValueError, match=r"y holds classes \['odd'\] not in classes="):
        model.partial_fit(as_dask(X[60:], "rows-37"), _dask_vector(stray))


# -- a real LocalCluster (the estimators pickled to worker processes) --------------------
# Kept last: the module's Client becomes the default scheduler once created.


@pytest.mark.slow
def test_fit_on_cluster_equals_local(data, dask_client) -> None:
    X, Y, w = as_dask(data["X"], "rows-37"), _dask_vector(data["Y"]), _dask_vector(data["w"])
    ref = FeatureRidge(_rff(), alphas=ALPHAS).fit(data["X"], data["Y"], sample_weight=data["w"])
    with dask.config.set(scheduler="threads"):
        local = FeatureRidge(_rff(), alphas=ALPHAS).fit(X, Y, sample_weight=w)
    remote = FeatureRidge(_rff(), alphas=ALPHAS).fit(X, Y, sample_weight=w)
    assert_same_fit(remote, ref)
    assert_same_fit(remote, local)
    labels = data["labels"]
    clf = FeatureRidgeClassifier(_rff(), alphas=ALPHAS).fit(X, _dask_vector(labels))
    ref_clf = FeatureRidgeClassifier(_rff(), alphas=ALPHAS).fit(data["X"], labels)
    assert_same_fit(clf, ref_clf)
    np.testing.assert_array_equal(clf.predict(data["X"]), ref_clf.predict(data["X"]))


@pytest.mark.slow
def test_settings_reach_the_workers(data, dask_client) -> None:
    """Each row's features carry the settings and the process its task ran in."""
    client_pid = os.getpid()

    def probe(X):  # pickled by value to the workers (a closure)
        n = X.shape[0]
        marks = [
            sklearn.get_config()["working_memory"],
            float(kernelmaps.get_config()["engine"] == "numpy"),
            float(n_threads()),
            float(os.getpid() == client_pid),
        ]
        return np.hstack([X, np.tile(marks, (n, 1))])

    mapping = FunctionTransformer(probe)
    with sklearn.config_context(working_memory=37), kernelmaps.config_context(engine="numpy"):
        model = FeatureRidge(mapping, alpha=1.0).fit(as_dask(data["X"], "rows-37"), data["y"])
    marks = model.statistics_.means()[0][D_IN:]
    # working_memory, engine, one block thread per task, every row mapped off the client
    np.testing.assert_allclose(marks, [37.0, 1.0, 1.0, 0.0], rtol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert model.n_features_out_ == D_IN + 4
