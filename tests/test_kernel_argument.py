"""The one path of the ``kernel=`` argument: constraints, resolution, matrix checks."""

from __future__ import annotations

import dataclasses
import inspect
import pickle

import numpy as np
import pytest
from sklearn.utils._param_validation import InvalidParameterError

import kernelmaps
from kernelmaps.experiments._registry import (
    BANDWIDTH_KERNELS,
    MethodSpec,
    get_method,
    method_names,
)
from kernelmaps.kernels import (
    CallableKernel,
    Gaussian,
    Polynomial,
    check_kernel_matrix,
    kernel_names,
    kernel_parameter_constraints,
    make_kernel,
    register_kernel,
    resolve_estimator_kernel,
)
from kernelmaps.kernels._base import _REGISTRY

X = np.random.default_rng(0).uniform(0.0, 0.3, size=(12, 4))
y = np.arange(12.0)


def _estimators_taking(parameter: str) -> list[type]:
    """Public estimator classes of kernelmaps whose constructor takes ``parameter``."""
    out = []
    for name in kernelmaps.__all__:
        obj = getattr(kernelmaps, name)
        if inspect.isclass(obj) and parameter in inspect.signature(obj).parameters:
            out.append(obj)
    return out


KERNEL_ESTIMATORS = _estimators_taking("kernel")
CALLABLE_OK = {
    "Nystroem",
    "IKA",
    "KernelRidge",
    "NystroemKernelRidge",
    "NystroemKernelRidgeCV",
    "NystroemKernelRidgeClassifier",
}


def _fit(cls: type, **params) -> object:
    est = cls(**params)
    return est.fit(X, y) if "Ridge" in cls.__name__ else est.fit(X)


def test_every_kernel_estimator_is_covered() -> None:
    names = {cls.__name__ for cls in KERNEL_ESTIMATORS}
    assert names >= CALLABLE_OK
    assert {"RandomFourierFeatures", "TensorSketch", "RandomMaclaurinFeatures"} <= names


@pytest.mark.parametrize("cls", KERNEL_ESTIMATORS, ids=lambda c: c.__name__)
def test_unknown_name_refused_at_validation_with_the_names(cls) -> None:
    with pytest.raises(InvalidParameterError) as info:
        _fit(cls, kernel="gausian")
    message = str(info.value)
    assert "Unknown kernel 'gausian'" in message
    for name in kernel_names():
        assert name in message


@pytest.mark.parametrize("cls", KERNEL_ESTIMATORS, ids=lambda c: c.__name__)
def test_callable_accepted_only_where_documented(cls) -> None:
    def linear(A, B):
        return A @ B.T

    if cls.__name__ in CALLABLE_OK:
        assert callable in cls._parameter_constraints["kernel"]
    else:
        with pytest.raises(InvalidParameterError, match="'kernel' parameter"):
            _fit(cls, kernel=linear)


@pytest.mark.parametrize("cls", KERNEL_ESTIMATORS, ids=lambda c: c.__name__)
def test_precomputed_only_for_nystroem(cls) -> None:
    if cls.__name__ == "Nystroem":
        nystroem = cls("precomputed", n_components=5, random_state=0).fit(Gaussian(1.0)(X))
        assert nystroem.kernel_ is None
        return
    with pytest.raises(InvalidParameterError, match=r"'precomputed' is accepted by Nystroem only"):
        _fit(cls, kernel="precomputed")


def test_case_variants_accepted_as_before() -> None:
    Z = kernelmaps.RandomFourierFeatures("RBF", gamma=0.5, n_components=8, random_state=0)
    assert Z.fit(X).kernel_ == Gaussian(gamma=0.5)


def test_constraints_follow_the_registry() -> None:
    constraints = kernel_parameter_constraints()
    assert set(constraints) == {"kernel", "gamma", "kernel_params"}

    @register_kernel("test_only_kernel")
    @dataclasses.dataclass(frozen=True)
    class _TestOnly(Gaussian):
        pass

    try:
        assert constraints["kernel"][0].is_satisfied_by("test_only_kernel")
        assert "'test_only_kernel'" in str(constraints["kernel"][0])
    finally:
        del _REGISTRY["test_only_kernel"]


def test_named_parameter_constraints_are_the_kernel_classes() -> None:
    for cls in (kernelmaps.Nystroem, kernelmaps.KernelRidge, kernelmaps.TensorSketch):
        with pytest.raises(InvalidParameterError, match="'degree' parameter"):
            _fit(cls, kernel="polynomial", degree=0)
        with pytest.raises(InvalidParameterError, match="'coef0' parameter"):
            _fit(cls, kernel="polynomial", coef0=-1.0)
        with pytest.raises(InvalidParameterError, match="'gamma' parameter"):
            _fit(cls, kernel="polynomial", gamma=0.0)


POLY_ESTIMATORS = [
    cls
    for cls in KERNEL_ESTIMATORS
    if {"degree", "gamma", "coef0"} <= set(inspect.signature(cls).parameters)
]


@pytest.mark.parametrize(
    "named", [{}, {"degree": 2}, {"degree": 2, "gamma": 1.0, "coef0": 0.0}, {"gamma": 0.5}]
)
def test_polynomial_means_one_kernel_everywhere(named) -> None:
    """``kernel="polynomial"`` with the same named parameters is the same object everywhere."""
    names = {cls.__name__ for cls in POLY_ESTIMATORS}
    assert {"TensorSketch", "RandomMaclaurinFeatures", "CompactRandomFeatures", "Nystroem"} <= names
    expected = make_kernel("polynomial", **named).resolve(X.shape[1])
    for cls in POLY_ESTIMATORS:
        assert resolve_estimator_kernel(cls("polynomial", **named), X.shape[1]) == expected
    # and the fitted maps keep it
    for cls in (kernelmaps.TensorSketch, kernelmaps.RandomMaclaurinFeatures):
        assert cls("polynomial", n_components=8, random_state=0, **named).fit(X).kernel_ == expected


def test_tensor_sketch_default_is_the_polynomial_kernel() -> None:
    assert kernelmaps.TensorSketch().fit(X).kernel_ == Polynomial(gamma=1.0 / X.shape[1])


def test_refused_kernel_names_the_maps_that_can() -> None:
    with pytest.raises(ValueError, match=r"TensorSketch needs .* Use .*RandomMaclaurinFeatures"):
        resolve_estimator_kernel(kernelmaps.TensorSketch("exponential_dot_product"), 3)


def test_named_parameters_refused_with_a_callable() -> None:
    est = kernelmaps.KernelRidge(lambda A, B: A @ B.T, gamma=0.1)
    with pytest.raises(ValueError, match=r"KernelRidge: \['gamma'\] cannot be used"):
        resolve_estimator_kernel(est, 3)


def test_check_kernel_matrix_messages() -> None:
    K = check_kernel_matrix(np.ones((2, 3), dtype=np.float32), 2, 3)
    assert K.dtype == np.float64 and K.shape == (2, 3)
    with pytest.raises(
        ValueError,
        match=(
            r"^The kernel callable returned an array of shape \(2, 2\) for inputs with 2 and 3 "
            r"rows; it must return the 2 x 3 kernel matrix k\(X, Y\)\.$"
        ),
    ):
        check_kernel_matrix(np.ones((2, 2)), 2, 3)
    with pytest.raises(
        ValueError,
        match=(
            r"^The basis callable returned an array of shape \(5,\) for 5 rows; it must return "
            r"a 2D array with 5 rows, the basis values\.$"
        ),
    ):
        check_kernel_matrix(np.ones(5), 5, None, source="The basis callable", what="basis values")


def _linear(A, B, c=0.0):
    return A @ B.T + c


def test_callable_kernel_checks_and_pickles() -> None:
    k = pickle.loads(pickle.dumps(CallableKernel(_linear, {"c": 1.0})))
    np.testing.assert_allclose(k(X, X[:3]), X @ X[:3].T + 1.0)
    bad = CallableKernel(lambda A, B: np.ones((1, 1)), None)
    with pytest.raises(ValueError, match=r"shape \(1, 1\) .* it must return the 12 x 3"):
        bad(X, X[:3])


BUILT_IN_METHODS = [name for name in method_names() if not name.startswith("test-")]


@pytest.mark.parametrize("name", BUILT_IN_METHODS)
def test_registry_asks_the_maps(name) -> None:
    spec = get_method(name)
    cls = spec.map_class()
    assert cls is not None
    supported = spec.supported_kernels()
    assert spec.kernel in supported
    assert spec.supports(spec.kernel)
    # an unknown name: only the maps taking any kernel say yes (the name fails later)
    assert spec.supports("no_such_kernel") == name.startswith(("nystroem", "ika"))
    for kernel in kernel_names():
        expected = kernel == spec.kernel or kernel in supported
        assert spec.supports(kernel) == expected
        if kernel != "maclaurin":  # needs its coefficients to be built
            assert cls._supports_kernel(make_kernel(kernel)) == spec.supports(kernel)


def test_a_method_of_unknown_class_takes_any_kernel() -> None:
    spec = MethodSpec("x", "rbf", lambda n, params, rs: None, "no class known")
    assert spec.map_class() is None
    assert spec.supports("laplacian") and spec.supports("no_such_kernel")
    assert spec.supported_kernels() == tuple(kernel_names())


def test_registry_lists_as_before() -> None:
    shift_invariant = ("cauchy", "gaussian", "laplacian", "matern", "rbf")
    assert get_method("rff-mc").supported_kernels() == shift_invariant
    assert get_method("sorf").supported_kernels() == ("gaussian", "matern", "rbf")
    assert get_method("binning").supported_kernels() == ("laplacian",)
    assert get_method("tensorsketch").supported_kernels() == (
        "homogeneous_polynomial",
        "poly",
        "polynomial",
    )
    assert set(get_method("nystroem-uniform").supported_kernels()) == set(kernel_names())
    assert frozenset(shift_invariant) == BANDWIDTH_KERNELS


@pytest.mark.parametrize(
    "cls",
    [kernelmaps.Nystroem, kernelmaps.IKA, kernelmaps.KernelRidge, kernelmaps.NystroemKernelRidge],
    ids=lambda c: c.__name__,
)
def test_real_polynomial_degree_accepted_as_by_scikit_learn(cls) -> None:
    """degree=3.1 is scikit-learn's polynomial kernel (X is nonnegative: a real power)."""
    est = _fit(cls, kernel="polynomial", degree=3.1, coef0=0.1)
    assert est.kernel_ == Polynomial(degree=3.1, gamma=0.25, coef0=0.1)


def test_nystroem_real_degree_reproduces_scikit_learn_s_kernel() -> None:
    from sklearn.kernel_approximation import Nystroem as SkNystroem
    from sklearn.metrics.pairwise import polynomial_kernel

    ours = kernelmaps.Nystroem("polynomial", degree=3.1, coef0=0.1, n_components=12)
    theirs = SkNystroem(kernel="polynomial", degree=3.1, coef0=0.1, n_components=12)
    K = polynomial_kernel(X, degree=3.1, coef0=0.1)
    for est in (ours, theirs):
        Z = est.fit_transform(X)
        np.testing.assert_allclose(Z @ Z.T, K, rtol=1e-8, atol=1e-12)


def test_real_degree_on_negative_products_refused_by_name() -> None:
    """Every row is a landmark and x·(−x) < 0, so whichever sample is drawn has such a pair."""
    signed = np.vstack([X, -X])
    nystroem = kernelmaps.Nystroem(
        "polynomial", degree=2.5, coef0=0.0, n_components=len(signed), random_state=0
    )
    with pytest.raises(ValueError, match="non-integer degree has no real power"):
        nystroem.fit(signed)


@pytest.mark.parametrize(
    "cls",
    [
        kernelmaps.TensorSketch,
        kernelmaps.RandomMaclaurinFeatures,
        kernelmaps.CompactRandomFeatures,
    ],
    ids=lambda c: c.__name__,
)
def test_integer_power_maps_refuse_a_real_degree_naming_the_fix(cls) -> None:
    with pytest.raises(InvalidParameterError, match=r"integer powers; Nystroem takes a non-int"):
        _fit(cls, kernel="polynomial", degree=3.1)
    with pytest.raises(ValueError, match=r"with an integer degree|non-negative Maclaurin") as info:
        _fit(cls, kernel=Polynomial(degree=3.1))
    assert "Use Nystroem or IKA for it." in str(info.value)
    assert "\n" not in str(info.value)
