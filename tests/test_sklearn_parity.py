"""scikit-learn's tests of its kernel-approximation transformers, run on kernelmaps.

This is ``sklearn/tests/test_kernel_approximation.py`` of scikit-learn 1.9, adapted only in
names and parameters: ``RBFSampler`` -> ``RandomFourierFeatures``,
``PolynomialCountSketch`` -> ``TensorSketch``, and ``Nystroem``, ``AdditiveChi2Sampler``,
``SkewedChi2Sampler`` -> kernelmaps' classes of the same names.  Every other change is a
deliberate difference listed in docs/MIGRATION.md and marked below with a comment
``# DIFFERENCE <n>: ...`` naming it.  The array API test (``array_api_dispatch``) is not
carried over: kernelmaps' own array API tests (``tests/test_array_api_*.py``) run every map
on array-api-strict and PyTorch (docs/GPU.md).

The assertions and their tolerances are scikit-learn's, with its fixed seeds
(``random_state=42``): these tests check that code ported from scikit-learn runs and
gives results of the same quality, they are not statistical tests of kernelmaps' maps
(those are in the other test files, with derived tolerances) and do not use the ``seed``
fixture.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification
from sklearn.metrics.pairwise import (
    chi2_kernel,
    kernel_metrics,
    polynomial_kernel,
    rbf_kernel,
)
from sklearn.utils._testing import (
    assert_allclose,
    assert_array_almost_equal,
    assert_array_equal,
)

from kernelmaps import (
    AdditiveChi2Sampler,
    Nystroem,
    SkewedChi2Sampler,
)
from kernelmaps import (
    RandomFourierFeatures as RBFSampler,
)
from kernelmaps import (
    TensorSketch as PolynomialCountSketch,
)

CSR_CONTAINERS = [sp.csr_matrix, sp.csr_array]

# scikit-learn's kernel names (its Nystroem takes them) -> kernelmaps' names for the same
# kernels.  DIFFERENCE 1: the ambiguous name "additive_chi2" is refused; scikit-learn's
# pairwise additive_chi2 is "sklearn_additive_chi2" here.
SKLEARN_KERNEL_NAMES = {"additive_chi2": "sklearn_additive_chi2"}

# DIFFERENCE 5: the random streams differ from scikit-learn's.  scikit-learn's
# test_polynomial_count_sketch asserts, for the one seed random_state=42, that
# |mean error| <= 0.05, max |error| <= 0.1 and mean |error| <= 0.05 with 500 components
# and coef0 = 2.5: scikit-learn's own PolynomialCountSketch fails these assertions for
# 4 to 7 of the seeds 0..39 at the five settings below (TensorSketch: 6 to 13 of 40;
# measured with the same data, `python tests/test_sklearn_parity.py`), and kernelmaps'
# stream at seed 42 fails them at these five (gamma, degree, coef0).
SEED_SPECIFIC = {(1, 1, 2.5), (2.5, 1, 2.5), (2.5, 2, 2.5), (1, 2, 2.5), (0.1, 2, 2.5)}

# generate data
rng = np.random.RandomState(0)
X = rng.random_sample(size=(300, 50))
Y = rng.random_sample(size=(300, 50))
X /= X.sum(axis=1)[:, np.newaxis]
Y /= Y.sum(axis=1)[:, np.newaxis]

# Make sure X and Y are not writable to avoid introducing dependencies between
# tests.
X.flags.writeable = False
Y.flags.writeable = False


@pytest.fixture(params=[np.float32, np.float64], ids=["float32", "float64"])
def global_dtype(request):
    """scikit-learn's ``global_dtype`` fixture, with both dtypes."""
    return request.param


@pytest.mark.parametrize("gamma", [0.1, 1, 2.5])
@pytest.mark.parametrize("degree, n_components", [(1, 500), (2, 500), (3, 5000)])
@pytest.mark.parametrize("coef0", [0, 2.5])
def test_polynomial_count_sketch(gamma, degree, coef0, n_components, request):
    # test that PolynomialCountSketch approximates polynomial
    # kernel on random data
    if (gamma, degree, coef0) in SEED_SPECIFIC:
        # DIFFERENCE 5: another random stream; these assertions hold for random_state=42
        # of scikit-learn's stream, not for every seed (see SEED_SPECIFIC)
        request.applymarker(
            pytest.mark.xfail(strict=True, raises=AssertionError, reason="DIFFERENCE 5")
        )

    # compute exact kernel
    kernel = polynomial_kernel(X, Y, gamma=gamma, degree=degree, coef0=coef0)

    # approximate kernel mapping
    ps_transform = PolynomialCountSketch(
        n_components=n_components,
        gamma=gamma,
        coef0=coef0,
        degree=degree,
        random_state=42,
    )
    X_trans = ps_transform.fit_transform(X)
    Y_trans = ps_transform.transform(Y)
    kernel_approx = np.dot(X_trans, Y_trans.T)

    error = kernel - kernel_approx
    assert np.abs(np.mean(error)) <= 0.05  # close to unbiased
    np.abs(error, out=error)
    assert np.max(error) <= 0.1  # nothing too far off
    assert np.mean(error) <= 0.05  # mean is fairly close


@pytest.mark.parametrize("csr_container", CSR_CONTAINERS)
@pytest.mark.parametrize("gamma", [0.1, 1.0])
@pytest.mark.parametrize("degree", [1, 2, 3])
@pytest.mark.parametrize("coef0", [0, 2.5])
def test_polynomial_count_sketch_dense_sparse(gamma, degree, coef0, csr_container):
    """Check that PolynomialCountSketch results are the same for dense and sparse
    input.
    """
    ps_dense = PolynomialCountSketch(
        n_components=500, gamma=gamma, degree=degree, coef0=coef0, random_state=42
    )
    Xt_dense = ps_dense.fit_transform(X)
    Yt_dense = ps_dense.transform(Y)

    ps_sparse = PolynomialCountSketch(
        n_components=500, gamma=gamma, degree=degree, coef0=coef0, random_state=42
    )
    Xt_sparse = ps_sparse.fit_transform(csr_container(X))
    Yt_sparse = ps_sparse.transform(csr_container(Y))

    assert_allclose(Xt_dense, Xt_sparse)
    assert_allclose(Yt_dense, Yt_sparse)


def _linear_kernel(x, y):
    return x @ y


@pytest.mark.parametrize("csr_container", CSR_CONTAINERS)
def test_additive_chi2_sampler(csr_container):
    # test that AdditiveChi2Sampler approximates kernel on random data

    # compute exact kernel
    # abbreviations for easier formula
    X_ = X[:, np.newaxis, :].copy()
    Y_ = Y[np.newaxis, :, :].copy()

    large_kernel = 2 * X_ * Y_ / (X_ + Y_)

    # reduce to n_samples_x x n_samples_y by summing over features
    kernel = large_kernel.sum(axis=2)

    # approximate kernel mapping
    transform = AdditiveChi2Sampler(sample_steps=3)
    X_trans = transform.fit_transform(X)
    Y_trans = transform.transform(Y)

    kernel_approx = np.dot(X_trans, Y_trans.T)

    assert_array_almost_equal(kernel, kernel_approx, 1)

    X_sp_trans = transform.fit_transform(csr_container(X))
    Y_sp_trans = transform.transform(csr_container(Y))

    assert_array_equal(X_trans, X_sp_trans.toarray())
    assert_array_equal(Y_trans, Y_sp_trans.toarray())

    # test error is raised on negative input
    Y_neg = Y.copy()
    Y_neg[0, 0] = -1
    msg = "Negative values in data passed to"
    with pytest.raises(ValueError, match=msg):
        transform.fit(Y_neg)


@pytest.mark.parametrize("method", ["fit", "fit_transform", "transform"])
@pytest.mark.parametrize("sample_steps", range(1, 4))
def test_additive_chi2_sampler_sample_steps(method, sample_steps):
    """Check that the input sample step doesn't raise an error
    and that sample interval doesn't change after fit.
    """
    transformer = AdditiveChi2Sampler(sample_steps=sample_steps)
    getattr(transformer, method)(X)

    sample_interval = 0.5
    transformer = AdditiveChi2Sampler(
        sample_steps=sample_steps,
        sample_interval=sample_interval,
    )
    getattr(transformer, method)(X)
    assert transformer.sample_interval == sample_interval


@pytest.mark.parametrize("method", ["fit", "fit_transform", "transform"])
def test_additive_chi2_sampler_wrong_sample_steps(method):
    """Check that we raise a ValueError on invalid sample_steps"""
    transformer = AdditiveChi2Sampler(sample_steps=4)
    msg = re.escape("If sample_steps is not in [1, 2, 3], you need to provide sample_interval")
    with pytest.raises(ValueError, match=msg):
        getattr(transformer, method)(X)


def test_skewed_chi2_sampler():
    # test that RBFSampler approximates kernel on random data

    # compute exact kernel
    c = 0.03
    # set on negative component but greater than c to ensure that the kernel
    # approximation is valid on the group (-c; +\infty) endowed with the skewed
    # multiplication.
    Y_ = Y.copy()
    Y_[0, 0] = -c / 2.0

    # abbreviations for easier formula
    X_c = (X + c)[:, np.newaxis, :]
    Y_c = (Y_ + c)[np.newaxis, :, :]

    # we do it in log-space in the hope that it's more stable
    # this array is n_samples_x x n_samples_y big x n_features
    log_kernel = (np.log(X_c) / 2.0) + (np.log(Y_c) / 2.0) + np.log(2.0) - np.log(X_c + Y_c)
    # reduce to n_samples_x x n_samples_y by summing over features in log-space
    kernel = np.exp(log_kernel.sum(axis=2))

    # approximate kernel mapping
    transform = SkewedChi2Sampler(skewedness=c, n_components=1000, random_state=42)
    X_trans = transform.fit_transform(X)
    Y_trans = transform.transform(Y_)

    kernel_approx = np.dot(X_trans, Y_trans.T)
    assert_array_almost_equal(kernel, kernel_approx, 1)
    assert np.isfinite(kernel).all(), "NaNs found in the Gram matrix"
    assert np.isfinite(kernel_approx).all(), "NaNs found in the approximate Gram matrix"

    # test error is raised on when inputs contains values smaller than -c
    Y_neg = Y_.copy()
    Y_neg[0, 0] = -c * 2.0
    msg = "X may not contain entries smaller than -skewedness"
    with pytest.raises(ValueError, match=msg):
        transform.transform(Y_neg)


def test_additive_chi2_sampler_exceptions():
    """Ensures correct error message"""
    transformer = AdditiveChi2Sampler()
    X_neg = X.copy()
    X_neg[0, 0] = -1
    with pytest.raises(ValueError, match="X in AdditiveChi2Sampler"):
        transformer.fit(X_neg)
    with pytest.raises(ValueError, match="X in AdditiveChi2Sampler"):
        transformer.fit(X)
        transformer.transform(X_neg)


def test_rbf_sampler():
    # test that RBFSampler approximates kernel on random data
    # compute exact kernel
    gamma = 10.0
    kernel = rbf_kernel(X, Y, gamma=gamma)

    # approximate kernel mapping
    rbf_transform = RBFSampler(gamma=gamma, n_components=1000, random_state=42)
    X_trans = rbf_transform.fit_transform(X)
    Y_trans = rbf_transform.transform(Y)
    kernel_approx = np.dot(X_trans, Y_trans.T)

    error = kernel - kernel_approx
    assert np.abs(np.mean(error)) <= 0.01  # close to unbiased
    np.abs(error, out=error)
    assert np.max(error) <= 0.1  # nothing too far off
    assert np.mean(error) <= 0.05  # mean is fairly close


# DIFFERENCE 2: RandomFourierFeatures keeps its frequencies in float64 for float32 input
# (cast to float32 once per transform; the features are float32), so its fitted
# attributes are float64 whatever the input.  Names: random_weights_ -> frequencies_,
# random_offset_ -> offsets_ (the offsets exist for variant="cos_phase", the variant of
# RBFSampler; the default "cos_sin" has none).
@pytest.mark.xfail(strict=True, raises=AssertionError, reason="DIFFERENCE 2: float64 frequencies")
def test_rbf_sampler_fitted_attributes_dtype():
    """Check that the fitted attributes are stored accordingly to the
    data type of X."""
    global_dtype = np.float32
    rbf = RBFSampler(variant="cos_phase")

    X = np.array([[1, 2], [3, 4], [5, 6]], dtype=global_dtype)

    rbf.fit(X)

    assert rbf.offsets_.dtype == global_dtype
    assert rbf.frequencies_.dtype == global_dtype


def test_rbf_sampler_fitted_attributes_dtype_float64():
    """The float64 half of scikit-learn's test (its ``global_dtype`` fixture)."""
    rbf = RBFSampler(variant="cos_phase")
    X = np.array([[1, 2], [3, 4], [5, 6]], dtype=np.float64)
    rbf.fit(X)
    assert rbf.offsets_.dtype == np.float64
    assert rbf.frequencies_.dtype == np.float64


def test_rbf_sampler_dtype_equivalence():
    """Check the equivalence of the results with 32 and 64 bits input."""
    # names: random_weights_ -> frequencies_, random_offset_ -> offsets_ (cos_phase)
    rbf32 = RBFSampler(variant="cos_phase", random_state=42)
    X32 = np.array([[1, 2], [3, 4], [5, 6]], dtype=np.float32)
    rbf32.fit(X32)

    rbf64 = RBFSampler(variant="cos_phase", random_state=42)
    X64 = np.array([[1, 2], [3, 4], [5, 6]], dtype=np.float64)
    rbf64.fit(X64)

    assert_allclose(rbf32.offsets_, rbf64.offsets_)
    assert_allclose(rbf32.frequencies_, rbf64.frequencies_)


def test_rbf_sampler_gamma_scale():
    """Check the inner value computed when `gamma='scale'`."""
    X, y = [[0.0], [1.0]], [0, 1]
    rbf = RBFSampler(gamma="scale")
    rbf.fit(X, y)
    # name: the private _gamma is the resolved kernel's gamma here
    assert rbf.kernel_.gamma == pytest.approx(4)


def test_skewed_chi2_sampler_fitted_attributes_dtype(global_dtype):
    """Check that the fitted attributes are stored accordingly to the
    data type of X."""
    skewed_chi2_sampler = SkewedChi2Sampler()

    X = np.array([[1, 2], [3, 4], [5, 6]], dtype=global_dtype)

    skewed_chi2_sampler.fit(X)

    assert skewed_chi2_sampler.random_offset_.dtype == global_dtype
    assert skewed_chi2_sampler.random_weights_.dtype == global_dtype


def test_skewed_chi2_sampler_dtype_equivalence():
    """Check the equivalence of the results with 32 and 64 bits input."""
    skewed_chi2_sampler_32 = SkewedChi2Sampler(random_state=42)
    X_32 = np.array([[1, 2], [3, 4], [5, 6]], dtype=np.float32)
    skewed_chi2_sampler_32.fit(X_32)

    skewed_chi2_sampler_64 = SkewedChi2Sampler(random_state=42)
    X_64 = np.array([[1, 2], [3, 4], [5, 6]], dtype=np.float64)
    skewed_chi2_sampler_64.fit(X_64)

    assert_allclose(skewed_chi2_sampler_32.random_offset_, skewed_chi2_sampler_64.random_offset_)
    assert_allclose(skewed_chi2_sampler_32.random_weights_, skewed_chi2_sampler_64.random_weights_)


@pytest.mark.parametrize("csr_container", CSR_CONTAINERS)
def test_input_validation(csr_container):
    # Regression test: kernel approx. transformers should work on lists
    # No assertions; the old versions would simply crash
    X = [[1, 2], [3, 4], [5, 6]]
    AdditiveChi2Sampler().fit(X).transform(X)
    SkewedChi2Sampler().fit(X).transform(X)
    RBFSampler().fit(X).transform(X)

    X = csr_container(X)
    RBFSampler().fit(X).transform(X)


def test_nystroem_approximation():
    # some basic tests
    rnd = np.random.RandomState(0)
    X = rnd.uniform(size=(10, 4))

    # With n_components = n_samples this is exact
    X_transformed = Nystroem(n_components=X.shape[0]).fit_transform(X)
    K = rbf_kernel(X)
    assert_array_almost_equal(np.dot(X_transformed, X_transformed.T), K)

    trans = Nystroem(n_components=2, random_state=rnd)
    X_transformed = trans.fit(X).transform(X)
    assert X_transformed.shape == (X.shape[0], 2)

    # test callable kernel
    # DIFFERENCE 3: a per-pair callable is opt-in (kernel_call="pair")
    trans = Nystroem(n_components=2, kernel=_linear_kernel, random_state=rnd, kernel_call="pair")
    X_transformed = trans.fit(X).transform(X)
    assert X_transformed.shape == (X.shape[0], 2)

    # test that available kernels fit and transform
    kernels_available = kernel_metrics()
    for kern in kernels_available:
        kern = SKLEARN_KERNEL_NAMES.get(kern, kern)  # DIFFERENCE 1
        trans = Nystroem(n_components=2, kernel=kern, random_state=rnd)
        X_transformed = trans.fit(X).transform(X)
        assert X_transformed.shape == (X.shape[0], 2)


def test_nystroem_default_parameters():
    rnd = np.random.RandomState(42)
    X = rnd.uniform(size=(10, 4))

    # rbf kernel should behave as gamma=None by default
    # aka gamma = 1 / n_features
    nystroem = Nystroem(n_components=10)
    X_transformed = nystroem.fit_transform(X)
    K = rbf_kernel(X, gamma=None)
    K2 = np.dot(X_transformed, X_transformed.T)
    assert_array_almost_equal(K, K2)

    # chi2 kernel should behave as gamma=1 by default
    nystroem = Nystroem(kernel="chi2", n_components=10)
    X_transformed = nystroem.fit_transform(X)
    K = chi2_kernel(X, gamma=1)
    K2 = np.dot(X_transformed, X_transformed.T)
    assert_array_almost_equal(K, K2)


def test_nystroem_singular_kernel():
    # test that nystroem works with singular kernel matrix
    rng = np.random.RandomState(0)
    X = rng.rand(10, 20)
    X = np.vstack([X] * 2)  # duplicate samples

    gamma = 100
    N = Nystroem(gamma=gamma, n_components=X.shape[0]).fit(X)
    X_transformed = N.transform(X)

    K = rbf_kernel(X, gamma=gamma)

    assert_array_almost_equal(K, np.dot(X_transformed, X_transformed.T))
    assert np.all(np.isfinite(Y))


def test_nystroem_poly_kernel_params():
    # Non-regression: Nystroem should pass other parameters beside gamma.
    rnd = np.random.RandomState(37)
    X = rnd.uniform(size=(10, 4))

    K = polynomial_kernel(X, degree=3.1, coef0=0.1)
    nystroem = Nystroem(kernel="polynomial", n_components=X.shape[0], degree=3.1, coef0=0.1)
    X_transformed = nystroem.fit_transform(X)
    assert_array_almost_equal(np.dot(X_transformed, X_transformed.T), K)


def test_nystroem_callable():
    # Test Nystroem on a callable.
    rnd = np.random.RandomState(42)
    n_samples = 10
    X = rnd.uniform(size=(n_samples, 4))

    def logging_histogram_kernel(x, y, log):
        """Histogram kernel that writes to a log."""
        log.append(1)
        return np.minimum(x, y).sum()

    kernel_log = []
    X = list(X)  # test input validation
    Nystroem(
        kernel=logging_histogram_kernel,
        n_components=(n_samples - 1),
        kernel_params={"log": kernel_log},
        kernel_call="pair",  # DIFFERENCE 3: a per-pair callable is opt-in
    ).fit(X)
    assert len(kernel_log) == n_samples * (n_samples - 1) / 2

    # if degree, gamma or coef0 is passed, we raise a ValueError
    msg = "Don't pass gamma, coef0 or degree to Nystroem"
    params = ({"gamma": 1}, {"coef0": 1}, {"degree": 2})
    for param in params:
        ny = Nystroem(
            kernel=_linear_kernel,
            n_components=(n_samples - 1),
            kernel_call="pair",  # DIFFERENCE 3
            **param,
        )
        with pytest.raises(ValueError, match=msg):
            ny.fit(X)


def test_nystroem_precomputed_kernel():
    # Non-regression: test Nystroem on precomputed kernel.
    # PR - 14706
    rnd = np.random.RandomState(12)
    X = rnd.uniform(size=(10, 4))

    K = polynomial_kernel(X, degree=2, coef0=0.1)
    nystroem = Nystroem(kernel="precomputed", n_components=X.shape[0])
    X_transformed = nystroem.fit_transform(K)
    assert_array_almost_equal(np.dot(X_transformed, X_transformed.T), K)

    # if degree, gamma or coef0 is passed, we raise a ValueError
    msg = "Don't pass gamma, coef0 or degree to Nystroem"
    params = ({"gamma": 1}, {"coef0": 1}, {"degree": 2})
    for param in params:
        ny = Nystroem(kernel="precomputed", n_components=X.shape[0], **param)
        with pytest.raises(ValueError, match=msg):
            ny.fit(K)


def test_nystroem_component_indices():
    """Check that `component_indices_` corresponds to the subset of
    training points used to construct the feature map.
    Non-regression test for:
    https://github.com/scikit-learn/scikit-learn/issues/20474
    """
    X, _ = make_classification(n_samples=100, n_features=20, random_state=0)
    feature_map_nystroem = Nystroem(
        n_components=10,
        random_state=0,
    )
    feature_map_nystroem.fit(X)
    assert feature_map_nystroem.component_indices_.shape == (10,)


@pytest.mark.parametrize(
    "Estimator", [PolynomialCountSketch, RBFSampler, SkewedChi2Sampler, Nystroem]
)
def test_get_feature_names_out(Estimator):
    """Check get_feature_names_out"""
    est = Estimator().fit(X)
    X_trans = est.transform(X)

    names_out = est.get_feature_names_out()
    class_name = Estimator.__name__.lower()
    expected_names = [f"{class_name}{i}" for i in range(X_trans.shape[1])]
    assert_array_equal(names_out, expected_names)


def test_additivechi2sampler_get_feature_names_out():
    """Check get_feature_names_out for AdditiveChi2Sampler."""
    rng = np.random.RandomState(0)
    X = rng.random_sample(size=(300, 3))

    chi2_sampler = AdditiveChi2Sampler(sample_steps=3).fit(X)
    input_names = ["f0", "f1", "f2"]
    suffixes = [
        "f0_sqrt",
        "f1_sqrt",
        "f2_sqrt",
        "f0_cos1",
        "f1_cos1",
        "f2_cos1",
        "f0_sin1",
        "f1_sin1",
        "f2_sin1",
        "f0_cos2",
        "f1_cos2",
        "f2_cos2",
        "f0_sin2",
        "f1_sin2",
        "f2_sin2",
    ]

    names_out = chi2_sampler.get_feature_names_out(input_features=input_names)
    expected_names = [f"additivechi2sampler_{suffix}" for suffix in suffixes]
    assert_array_equal(names_out, expected_names)


def _seed_study(n_seeds: int = 40) -> None:  # pragma: no cover - run by hand
    """How often scikit-learn's one-seed assertions of test_polynomial_count_sketch fail,
    over seeds, for scikit-learn's PolynomialCountSketch and kernelmaps' TensorSketch."""
    from sklearn.kernel_approximation import PolynomialCountSketch as Theirs

    for gamma, degree, coef0 in sorted(SEED_SPECIFIC):
        kernel = polynomial_kernel(X, Y, gamma=gamma, degree=degree, coef0=coef0)
        counts = {}
        for name, cls in (("scikit-learn", Theirs), ("kernelmaps", PolynomialCountSketch)):
            fails = 0
            for seed in range(n_seeds):
                sketch = cls(
                    n_components=500, gamma=gamma, degree=degree, coef0=coef0, random_state=seed
                )
                error = kernel - sketch.fit_transform(X) @ sketch.transform(Y).T
                fails += not (
                    abs(np.mean(error)) <= 0.05
                    and np.abs(error).max() <= 0.1
                    and np.abs(error).mean() <= 0.05
                )
            counts[name] = fails
        print(f"gamma={gamma} degree={degree} coef0={coef0}: failing seeds of {n_seeds}", counts)


if __name__ == "__main__":  # pragma: no cover
    import sys

    _seed_study(int(sys.argv[1]) if len(sys.argv) > 1 else 40)


# -- kernelmaps' own checks of the parity features (not part of scikit-learn's file) -----

from sklearn.metrics.pairwise import PAIRWISE_KERNEL_FUNCTIONS, pairwise_kernels  # noqa: E402
from sklearn.utils._param_validation import InvalidParameterError  # noqa: E402

import kernelmaps  # noqa: E402
from kernelmaps import kernels  # noqa: E402


def _parity_data(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    generator = np.random.default_rng(seed)
    return generator.random((12, 5)), generator.random((7, 5))


@pytest.mark.parametrize("name", sorted(PAIRWISE_KERNEL_FUNCTIONS))
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_every_sklearn_kernel_name_has_the_same_kernel(name, sparse) -> None:
    A, B = _parity_data()
    A[0] = 0.0  # a zero row (cosine: 0, as scikit-learn's)
    expected = pairwise_kernels(A, B, metric=name)
    ours = SKLEARN_KERNEL_NAMES.get(name, name)
    if sparse:
        A, B = sp.csr_matrix(A), sp.csr_matrix(B)
    K = kernels.make_kernel(ours)(A, B)
    # the same formula: equal to rounding (a few ulps of the largest entry)
    assert_allclose(K, expected, rtol=1e-12, atol=1e-14 * np.abs(expected).max())


@pytest.mark.parametrize(
    "name, params",
    [
        ("sigmoid", {"gamma": 0.3, "coef0": -1.5}),
        ("sigmoid", {"gamma": 2.0, "coef0": 0.0}),
        ("polynomial", {"gamma": 0.5, "coef0": 2.0, "degree": 2}),
        ("chi2", {"gamma": 0.7}),
        ("rbf", {"gamma": 3.0}),
    ],
)
def test_sklearn_kernel_parameters_mean_the_same(name, params) -> None:
    A, B = _parity_data(1)
    expected = pairwise_kernels(A, B, metric=name, **params)
    assert_allclose(kernels.make_kernel(name, **params)(A, B), expected, rtol=1e-12)
    # through an estimator's named parameters too
    nystroem = Nystroem(name, n_components=A.shape[0], random_state=0, **params).fit(A)
    assert nystroem.kernel_ == kernels.make_kernel(name, **params)


@pytest.mark.parametrize("name", ["linear", "cosine"])
def test_nystroem_on_all_samples_is_exact_for_the_new_psd_kernels(name) -> None:
    A, _ = _parity_data(2)
    Z = Nystroem(name, n_components=A.shape[0], random_state=0).fit_transform(A)
    K = pairwise_kernels(A, metric=name)
    # Z Z^T = K up to the eigenvalue cut-off (rank of K) and rounding
    assert_allclose(Z @ Z.T, K, atol=1e-10 * np.abs(K).max())


def test_sigmoid_takes_a_negative_coef0_other_kernels_refuse_it() -> None:
    A, _ = _parity_data()
    with pytest.warns(UserWarning, match="negative eigenvalues"):
        Nystroem("sigmoid", coef0=-2.0, gamma=5.0, n_components=12, random_state=0).fit(A)
    for cls in (Nystroem, kernelmaps.KernelRidge):
        with pytest.raises(InvalidParameterError, match=r"'coef0' parameter.*>= 0"):
            cls(kernel="polynomial", coef0=-1.0).fit(A, A[:, 0])
    with pytest.raises(InvalidParameterError, match="'coef0' parameter"):
        Nystroem("sigmoid", coef0=np.inf).fit(A)


def test_additive_chi2_name_is_refused_naming_both_kernels() -> None:
    A, _ = _parity_data()
    for call in (
        lambda: kernels.make_kernel("additive_chi2"),
        lambda: Nystroem("additive_chi2").fit(A),
        lambda: kernelmaps.KernelRidge(kernel="Additive_Chi2").fit(A, A[:, 0]),
    ):
        with pytest.raises(ValueError) as info:
            call()
        message = str(info.value)
        assert "ambiguous" in message and "\n" not in message
        assert "'sklearn_additive_chi2'" in message and "'additive_chi2_pd'" in message
    assert "additive_chi2" not in kernels.kernel_names()
    # the two kernels under their names: 2 x y / (x + y) summed, and scikit-learn's
    from sklearn.metrics.pairwise import additive_chi2_kernel

    A, B = _parity_data(3)
    pd = kernels.make_kernel("additive_chi2_pd")(A, B)
    sums = A.sum(axis=1)[:, None] + B.sum(axis=1)[None, :]
    assert_allclose(2.0 * pd - sums, additive_chi2_kernel(A, B), rtol=1e-12, atol=1e-12)
    assert_allclose(
        kernels.make_kernel("sklearn_additive_chi2")(A, B), additive_chi2_kernel(A, B), rtol=1e-12
    )
    with pytest.raises(ValueError, match="reserved"):
        kernels.register_kernel("additive_chi2")(kernels.Gaussian)


@pytest.mark.parametrize("param", [{"gamma": 1.0}, {"coef0": 1.0}, {"degree": 2}])
def test_precomputed_refuses_kernel_parameters(param) -> None:
    A, _ = _parity_data()
    K = rbf_kernel(A)
    with pytest.raises(ValueError, match=f"\\['{next(iter(param))}'\\] cannot be used with"):
        Nystroem("precomputed", n_components=5, **param).fit(K)
    Nystroem("precomputed", n_components=5).fit(K)  # without them: fitted


def test_gamma_scale_is_sklearns_formula() -> None:
    A, _ = _parity_data(4)
    A = A * 3.0 + 1.0
    expected = 1.0 / (A.shape[1] * A.var())
    assert kernels.scale_gamma(A) == pytest.approx(expected, rel=1e-12)
    assert kernels.scale_gamma(sp.csr_matrix(A)) == pytest.approx(expected, rel=1e-12)
    assert kernels.scale_gamma(np.ones((4, 3))) == 1.0  # zero variance, as scikit-learn
    for cls in (RBFSampler, Nystroem, kernelmaps.RandomBinningFeatures, kernelmaps.IKA):
        estimator = cls(gamma="scale", random_state=0)
        if cls is kernelmaps.IKA:
            estimator.set_params(n_components=5)
        with np.errstate(all="ignore"):
            fitted = estimator.fit(A)
        assert fitted.kernel_.gamma == pytest.approx(expected, rel=1e-12)
    # where gamma is not a bandwidth to scale (or the fit does not see the data): refused
    with pytest.raises(InvalidParameterError, match="'gamma' parameter"):
        kernelmaps.Fastfood(gamma="scale").fit(A)
    # far data: the variance does not overflow; a gamma below float64's range is refused
    assert kernels.scale_gamma(A * 1e100) == pytest.approx(expected * 1e-200, rel=1e-12)
    with pytest.raises(ValueError, match=r"rescale the data .* or give gamma explicitly"):
        kernels.scale_gamma(A * 1e200)


def test_gamma_scale_refused_when_the_fit_does_not_read_the_data() -> None:
    class _NoData:
        kernel = "rbf"
        gamma = "scale"

    with pytest.raises(ValueError, match="gamma='scale' needs the training data"):
        kernels.resolve_estimator_kernel(_NoData(), 3)
    with pytest.raises(ValueError, match="gamma='scale' needs the training data"):
        kernels.resolve_estimator_kernel(_NoData(), 3, np.empty((0, 3)))


def test_pair_callable_matches_the_matrix_callable_and_counts_calls() -> None:
    A, B = _parity_data(5)
    calls = []

    def pair(x, y, scale):
        calls.append(1)
        assert x.ndim == 1 and y.ndim == 1
        return float(np.exp(-scale * np.sum((x - y) ** 2)))

    def matrix(P, Q, scale):
        return rbf_kernel(P, Q, gamma=scale)

    m = 6
    ours = Nystroem(
        pair, n_components=m, kernel_params={"scale": 0.5}, kernel_call="pair", random_state=0
    ).fit(A)
    assert len(calls) == m * (m + 1) // 2  # the triangle of K_mm, as scikit-learn
    ref = Nystroem(matrix, n_components=m, kernel_params={"scale": 0.5}, random_state=0).fit(A)
    calls.clear()
    Z = ours.transform(B)
    assert len(calls) == B.shape[0] * m  # n m calls
    assert_allclose(Z, ref.transform(B), rtol=1e-10, atol=1e-12)
    assert_allclose(ours.transform(sp.csr_matrix(B)), Z, rtol=1e-12, atol=1e-14)


def test_pair_callable_errors_are_one_line_with_the_fix() -> None:
    A, _ = _parity_data()
    with pytest.raises(ValueError, match="kernel_call='pair' it must return one number"):
        Nystroem(lambda x, y: np.outer(x, y), n_components=3, kernel_call="pair").fit(A)
    with pytest.raises(ValueError, match="pass kernel_call='pair'"):
        Nystroem(lambda x, y: np.minimum(x, y).sum(), n_components=3).fit(A)
    with pytest.raises(ValueError, match="pass kernel_call='pair'"):
        Nystroem(_linear_kernel, n_components=3).fit(A)
    with pytest.raises(ValueError, match="applies to a callable kernel only"):
        Nystroem("rbf", n_components=3, kernel_call="pair").fit(A)


def test_nystroem_n_jobs_is_accepted_and_changes_nothing() -> None:
    A, B = _parity_data(6)
    base = Nystroem(n_components=5, random_state=0).fit(A).transform(B)
    for n_jobs in (None, 1, 2, -1):
        Z = Nystroem(n_components=5, random_state=0, n_jobs=n_jobs).fit(A).transform(B)
        assert_array_equal(Z, base)


def test_skewed_chi2_float32_weights_are_the_float64_draw_rounded() -> None:
    A, _ = _parity_data(7)
    s64 = SkewedChi2Sampler(n_components=30, random_state=0).fit(A)
    s32 = SkewedChi2Sampler(n_components=30, random_state=0).fit(A.astype(np.float32))
    # the same random stream for either dtype: float32 weights are the float64 ones rounded
    assert_array_equal(s32.random_weights_, s64.random_weights_.astype(np.float32))
    assert_array_equal(s32.random_offset_, s64.random_offset_.astype(np.float32))
    Z32 = s32.transform(A.astype(np.float32))
    assert Z32.dtype == np.float32
    # float32 rounding of the weights, the logs and the product: |error| <= a few
    # float32 ulps of the phase (<= 1e3 eps32 for these small phases) times sqrt(2 / D)
    phase_bound = 1e3 * np.finfo(np.float32).eps * np.sqrt(2.0 / 30)
    assert np.abs(Z32 - s64.transform(A)).max() <= phase_bound


def test_additive_chi2_sampler_transforms_without_fit() -> None:
    A, _ = _parity_data(8)
    sampler = AdditiveChi2Sampler(sample_steps=3)
    Z = sampler.transform(A)
    fitted = AdditiveChi2Sampler(sample_steps=3).fit(A)
    assert_array_equal(Z, fitted.transform(A))
    # the map depends on the parameters and the width only: the state is that of a fit
    assert sampler.sample_interval_ == fitted.sample_interval_
    assert sampler.error_bound_ == fitted.error_bound_
    assert_array_equal(sampler.get_feature_names_out(), fitted.get_feature_names_out())
    Zs = AdditiveChi2Sampler(sample_steps=3).transform(sp.csr_matrix(A))
    assert sp.issparse(Zs)
    assert_array_equal(Zs.toarray(), Z)


def test_ika_caps_n_components_at_n_samples_with_a_warning() -> None:
    A, _ = _parity_data(9)
    with pytest.warns(UserWarning, match="n_components=100 is larger than n_samples=12"):
        ika = kernelmaps.IKA(random_state=0).fit(A)
    assert ika.n_components_ == 12 and ika.transform(A).shape == (12, 12)
    # a smaller n_components keeps its value, no warning
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        small = kernelmaps.IKA(n_components=4, n_basis=8, random_state=0).fit(A)
    assert small.n_components_ == 4
    # an explicit n_basis below n_components is still refused
    with pytest.raises(ValueError, match="cannot exceed n_basis"):
        kernelmaps.IKA(n_components=6, n_basis=4).fit(A)


def test_feature_ridge_random_state_seeds_only_the_default_map() -> None:
    A, B = _parity_data(10)
    y = A[:, 0] - A[:, 1]
    for cls in (kernelmaps.FeatureRidge, kernelmaps.FeatureRidgeClassifier):
        target = y if cls is kernelmaps.FeatureRidge else (y > 0).astype(int)
        seeded = cls(random_state=3).fit(A, target)
        explicit = cls(RBFSampler(random_state=3)).fit(A, target)
        assert_array_equal(seeded.predict(B), explicit.predict(B))
        # a given map is unchanged by random_state
        a = cls(RBFSampler(random_state=1), random_state=5).fit(A, target)
        b = cls(RBFSampler(random_state=1)).fit(A, target)
        assert_array_equal(a.predict(B), b.predict(B))


def test_binning_dense_output_is_the_csr_output_and_works_with_pandas() -> None:
    pytest.importorskip("pandas")
    A, B = _parity_data(11)
    sparse = kernelmaps.RandomBinningFeatures(n_grids=8, random_state=0).fit(A)
    dense = kernelmaps.RandomBinningFeatures(n_grids=8, random_state=0, dense_output=True)
    frame = dense.set_output(transform="pandas").fit(A).transform(B)
    assert_array_equal(frame.to_numpy(), sparse.transform(B).toarray())
    assert list(frame.columns) == list(sparse.get_feature_names_out())
