"""Property-based fuzzing of every public estimator and public function.

Each example is a generated input (shape, dtype, layout, sparse format, NaN/inf, extreme
magnitudes) or parameter value; the only acceptable outcomes are a correct result
(finite, right shape and dtype) or a clear error (see ``tests/_fuzz.py`` and
docs/FUZZING.md).  ``KERNELMAPS_FUZZ=long`` runs 2000 examples per test.
"""

from __future__ import annotations

import dataclasses
import math
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import strategies as st
from sklearn.base import clone

import kernelmaps
from kernelmaps import datasets, kernels, metrics, sampling
from kernelmaps.bandwidth import BANDWIDTH_RULES, gamma_from_data

from . import _fuzz
from ._fuzz import (
    CORRECT,
    FAILURE,
    ArraySpec,
    Failures,
    Outcome,
    array_specs,
    check,
    check_finite_array,
    check_finite_scalar,
    expected_dtypes,
    fuzz,
    judged_call,
    normal_spec,
)
from ._instances import CHECK_PARAMS

REGRESSORS = (
    "KernelRidge",
    "FeatureRidge",
    "NystroemKernelRidge",
    "FeatureRidgeCV",
    "NystroemKernelRidgeCV",
)
CLASSIFIERS = (
    "FeatureRidgeClassifier",
    "FeatureRidgeClassifierCV",
    "FeatureLogisticRegression",
    "FeatureLogisticRegressionCV",
    "NystroemKernelRidgeClassifier",
)
MODELS = REGRESSORS + CLASSIFIERS
#: Maps whose kernel is defined for non-negative inputs (they must refuse negatives).
NONNEG_MAPS = ("AdditiveChi2Sampler", "SkewedChi2Sampler")
ESTIMATORS = tuple(CHECK_PARAMS)
FEATURE_MAPS = tuple(name for name in ESTIMATORS if name not in MODELS)


def test_every_public_estimator_is_fuzzed() -> None:
    public = {
        name
        for name in kernelmaps.__all__
        if isinstance(getattr(kernelmaps, name), type)
        and hasattr(getattr(kernelmaps, name), "get_params")
    }
    assert public == set(ESTIMATORS)


@pytest.fixture(scope="module", autouse=True)
def _compiled() -> None:
    _fuzz.warm_up()


# -- estimators: inputs --------------------------------------------------------------------

Y_REGRESSION = ("normal", "constant", "big", "huge", "nan", "inf", "two_targets", "int", "short")
Y_CLASSES = ("binary", "strings", "one_class", "three", "float_labels", "bool", "short")


def make_y(kind: str, n: int, seed: int) -> Any:
    """A target of ``n`` values of the given kind."""
    rng = np.random.default_rng(seed)
    if kind == "normal":
        return rng.normal(size=n)
    if kind == "constant":
        return np.full(n, 2.5)
    if kind == "big":
        return rng.normal(size=n) * 1e200
    if kind == "huge":
        return np.where(rng.random(n) < 0.5, -1.7e308, 1.7e308)
    if kind in ("nan", "inf"):
        y = rng.normal(size=n)
        if n:
            y[0] = np.nan if kind == "nan" else np.inf
        return y
    if kind == "two_targets":
        return rng.normal(size=(n, 2))
    if kind == "int":
        return rng.integers(0, 100, size=n)
    if kind == "short":
        return rng.normal(size=max(n - 1, 0))
    if kind == "binary":
        return np.arange(n) % 2
    if kind == "strings":
        return np.array(["yes", "no"] * n)[:n]
    if kind == "one_class":
        return np.zeros(n, dtype=int)
    if kind == "three":
        return np.arange(n) % 3
    if kind == "float_labels":
        return (np.arange(n) % 2) * 0.5
    if kind == "bool":
        return np.arange(n) % 2 == 0
    raise AssertionError(kind)


@dataclasses.dataclass(frozen=True)
class EstimatorCase:
    """One example: an estimator of the table, a scenario, an input, a target."""

    name: str
    index: int
    scenario: str  # "fit" on X; "transform" X after a fit on normal data; "columns"
    X: ArraySpec
    y_kind: str | None

    def estimator(self) -> Any:
        return clone(getattr(kernelmaps, self.name)(**CHECK_PARAMS[self.name][self.index]))

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in CHECK_PARAMS[self.name][self.index].items())
        return f"{self.name}({params}) {self.scenario} X={self.X!r} y={self.y_kind}"


@st.composite
def estimator_cases(draw: Any, name: str) -> EstimatorCase:
    index = draw(st.integers(0, len(CHECK_PARAMS[name]) - 1))
    scenario = draw(st.sampled_from(("fit", "transform", "fit", "transform", "columns")))
    X = draw(array_specs(nonneg=True if name in NONNEG_MAPS and draw(st.booleans()) else None))
    y_kind = None
    if name in REGRESSORS:
        y_kind = draw(st.sampled_from(Y_REGRESSION))
    elif name in CLASSIFIERS:
        y_kind = draw(st.sampled_from(Y_CLASSES))
    return EstimatorCase(name, index, scenario, X, y_kind)


def _apply(fitted: Any, X: Any) -> dict[str, Any]:
    """The outputs of a fitted estimator on ``X``."""
    if hasattr(fitted, "transform"):
        return {"transform": fitted.transform(X)}
    out = {"predict": fitted.predict(X)}
    if hasattr(fitted, "decision_function"):
        out["decision_function"] = fitted.decision_function(X)
    return out


def _n_features_out(fitted: Any) -> int | None:
    n = getattr(fitted, "_n_features_out", None)
    if isinstance(n, (int, np.integer)):
        return int(n)
    try:
        return len(fitted.get_feature_names_out())
    except Exception:
        return None


def check_outputs(fitted: Any, X: Any, n_rows: int, outputs: dict[str, Any]) -> Outcome:
    """Whether the outputs of ``fitted`` on ``X`` (``n_rows`` rows) are correct."""
    for method, out in outputs.items():
        if method == "transform":
            outcome = check_finite_array(
                out,
                n_rows=n_rows,
                n_cols=_n_features_out(fitted),
                dtypes=expected_dtypes(X, fitted),
                allow_sparse=True,
                what="transform output",
            )
        elif method == "predict" and hasattr(fitted, "classes_"):
            labels = np.asarray(out)
            if labels.shape != (n_rows,):
                return Outcome(FAILURE, "predict: wrong shape", f"{labels.shape}")
            if not np.all(np.isin(labels, fitted.classes_)):
                return Outcome(FAILURE, "predict: labels outside classes_", repr(labels[:5]))
            continue
        else:
            outcome = check_finite_array(
                out,
                n_rows=n_rows,
                ndim=(1, 2),
                dtypes=("float64", "float32"),
                what=f"{method} output",
            )
        if outcome.kind != CORRECT:
            return outcome
    return Outcome(CORRECT)


def run_estimator_case(case: EstimatorCase) -> Outcome:
    """Fit and apply the estimator of ``case``; the outcome."""
    estimator = case.estimator()
    X = case.X.build()
    n_rows = case.X.n_rows
    nonneg = case.name in NONNEG_MAPS or case.X.nonneg
    X_fit = normal_spec(8, case.X.n_cols, nonneg=True, seed=case.X.seed).build()
    y_fit = make_y(case.y_kind, 8, case.X.seed) if case.y_kind else None
    if case.y_kind in ("short", "nan", "inf", "huge", "big", "one_class"):
        y_fit = make_y("binary" if case.name in CLASSIFIERS else "normal", 8, case.X.seed)
    if case.scenario == "fit":
        y = make_y(case.y_kind, n_rows, case.X.seed) if case.y_kind else None

        def run() -> Any:
            fitted = estimator.fit(X, y)
            return fitted, _apply(fitted, X)

    elif case.scenario == "transform":

        def run() -> Any:
            fitted = estimator.fit(X_fit, y_fit)
            return fitted, _apply(fitted, X)

    else:
        other = case.X.n_cols + (1 if case.X.seed % 2 or case.X.n_cols == 1 else -1)
        X = dataclasses.replace(case.X, n_cols=other, nonneg=nonneg).build()

        def run() -> Any:
            fitted = estimator.fit(X_fit, y_fit)
            return fitted, _apply(fitted, X)

    def judge(result: Any) -> Outcome:
        fitted, outputs = result
        if case.scenario == "columns":
            return Outcome(
                FAILURE,
                "accepted an input with a different number of columns",
                f"fitted on {case.X.n_cols}",
            )
        return check_outputs(fitted, X, n_rows, outputs)

    return judged_call(run, judge)


@pytest.mark.parametrize("name", ESTIMATORS)
def test_estimator_inputs(name: str) -> None:
    def execute(case: EstimatorCase, failures: Failures) -> None:
        check(f"estimator:{name}", repr(case), run_estimator_case(case), failures)

    fuzz(estimator_cases(name), execute, ci_examples=60)


# -- estimators: parameters ----------------------------------------------------------------


# The user kernels take keyword parameters: estimators pass ``kernel_params`` to them.


def _dense(X: Any) -> np.ndarray:
    return X.toarray() if sp.issparse(X) else np.asarray(X, dtype=float)


def kernel_linear(X: Any, Y: Any = None, **params: Any) -> np.ndarray:
    """A valid user kernel (of dense or sparse input)."""
    X = _dense(X)
    Y = X if Y is None else _dense(Y)
    return X @ Y.T


def kernel_wrong_shape(X: Any, Y: Any = None, **params: Any) -> np.ndarray:
    """A user kernel returning a matrix of the wrong shape."""
    return np.ones((2, 2))


def kernel_nan(X: Any, Y: Any = None, **params: Any) -> np.ndarray:
    """A user kernel returning NaN."""
    Y = X if Y is None else Y
    return np.full((np.shape(X)[0], np.shape(Y)[0]), np.nan)


def kernel_one_d(X: Any, Y: Any = None, **params: Any) -> np.ndarray:
    """A user kernel returning a vector."""
    return np.ones(np.shape(X)[0])


def basis_wrong_shape(X: Any) -> np.ndarray:
    """An IKA basis returning the wrong number of rows."""
    return np.ones((1, 3))


def basis_ok(X: Any) -> np.ndarray:
    """A valid IKA basis (three functions)."""
    X = np.asarray(X)
    return np.column_stack([np.cos(X[:, 0]), np.sin(X[:, 0]), np.ones(len(X))])


#: Values tried for every parameter.
GENERIC_VALUES: tuple[Any, ...] = (
    -1,
    0,
    1,
    2,
    True,
    False,
    None,
    0.5,
    -0.5,
    -0.0,
    1e-300,
    1e-12,
    1e80,
    1e200,
    1e308,
    math.nan,
    math.inf,
    -math.inf,
    10**6,
    10**12,
    2**63,
    2**64,
    np.int64(7),
    np.float32(1e38),
    "abc",
    "",
    [1, 2],
    {},
)

#: Values tried for parameters of that name, beside the generic ones and the options of
#: their string constraints.
SPECIFIC_VALUES: dict[str, tuple[Any, ...]] = {
    "kernel": (
        kernel_linear,
        kernel_wrong_shape,
        kernel_nan,
        kernel_one_d,
        kernels.Gaussian(gamma=1e300),
        kernels.Laplacian(gamma=1e-300),
        kernels.Polynomial(degree=30, coef0=1e100),
    ),
    "kernel_params": (
        {"gamma": -1.0},
        {"nope": 1},
        {"degree": 2.5},
        {"gamma": math.nan},
        {"nu": 0.0},
        {"length_scale": 1e-300},
        {"coef0": math.inf},
    ),
    "landmarks": (
        np.ones((2, 3)),
        np.ones((2, 5)),
        np.empty((0, 3)),
        np.full((2, 3), np.nan),
        [[0.5, 0.5, 0.5]],
        np.ones(3),
        np.full((2, 3), 1e200),
    ),
    "feature_map": (
        "passthrough",
        "bogus",
        kernelmaps.RandomFourierFeatures(n_components=0),
        kernelmaps.Nystroem(n_components=4, random_state=0),
        kernelmaps.AdditiveChi2Sampler(),
        kernelmaps.RandomFourierFeatures(n_components=8, gamma=1e200, random_state=0),
        3,
    ),
    "alphas": (
        [],
        [-1.0],
        [math.nan],
        [0.0],
        [1e300],
        [1e-300],
        [[1.0, 2.0]],
        np.array([1.0, 10.0]),
        "abc",
    ),
    "basis": (basis_ok, basis_wrong_shape),
    "random_state": (
        np.random.RandomState(0),
        np.random.default_rng(0),
        np.random.SeedSequence(0),
        2**32,
        1.5,
    ),
}


def _string_options(cls: type, param: str) -> tuple[Any, ...]:
    found: list[Any] = []
    for constraint in getattr(cls, "_parameter_constraints", {}).get(param, []):
        options = getattr(constraint, "options", None)
        if options:
            found.extend(sorted(options))
    return tuple(found)


def _value_label(value: Any) -> str:
    if callable(value) and hasattr(value, "__name__"):
        return value.__name__
    if isinstance(value, np.ndarray):
        return f"array(shape={value.shape}, first={value.ravel()[:1].tolist()})"
    return repr(value)


@dataclasses.dataclass(frozen=True)
class ParamCase:
    """One or two parameters of a table estimator set to values of their pools."""

    name: str
    index: int
    settings: tuple[tuple[str, int], ...]  # (parameter, index in its pool of values)
    X: ArraySpec

    def values(self) -> dict[str, Any]:
        cls = getattr(kernelmaps, self.name)
        given = {}
        for param, i in self.settings:
            value = parameter_values(cls, param)[i]
            if isinstance(value, (list, dict)):
                value = type(value)(value)
            elif isinstance(value, np.ndarray):
                value = value.copy()
            given[param] = value
        return given

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in CHECK_PARAMS[self.name][self.index].items())
        given = ", ".join(f"{k}={_value_label(v)}" for k, v in self.values().items())
        return f"{self.name}({params}).set_params({given}) X={self.X!r}"


#: Parameters whose cost has a Python-level term per unit (per grid, per sample step) of
#: 5-30 microseconds, whatever the data: a million of them take 15-30 s even on one row,
#: which the time guard would report as a hang.  The cost is linear and documented
#: (docs/LIMITS.md, "Cost per grid and per step"); values of 10^6 are not tried for them,
#: 10^12 still is (it must be refused by the memory check, at once).
LINEAR_PYTHON_COST: dict[tuple[str, str], int] = {
    ("RandomBinningFeatures", "n_grids"): 10**5,
    ("AdditiveChi2Sampler", "sample_steps"): 10**5,
}


def parameter_values(cls: type, param: str) -> tuple[Any, ...]:
    values = _string_options(cls, param) + SPECIFIC_VALUES.get(param, ()) + GENERIC_VALUES
    limit = LINEAR_PYTHON_COST.get((cls.__name__, param))
    if limit is not None:
        values = tuple(
            v
            for v in values
            if not (isinstance(v, int) and not isinstance(v, bool) and limit < v < 10**9)
        )
    return values


def _numeric_parameter(cls: type, param: str) -> bool:
    """Whether ``param`` is a number constrained by an interval, and not also a boolean."""
    constraints = getattr(cls, "_parameter_constraints", {}).get(param, [])
    numeric = any(type(c).__name__ == "Interval" for c in constraints)
    boolean = any(c == "boolean" or c is bool for c in constraints)
    return numeric and not boolean


@st.composite
def param_cases(draw: Any, name: str) -> ParamCase:
    cls = getattr(kernelmaps, name)
    index = draw(st.integers(0, len(CHECK_PARAMS[name]) - 1))
    params = sorted(cls(**CHECK_PARAMS[name][index]).get_params(deep=False))
    chosen = draw(st.lists(st.sampled_from(params), min_size=1, max_size=2, unique=True))
    settings = tuple(
        (param, draw(st.integers(0, len(parameter_values(cls, param)) - 1), label=param))
        for param in chosen
    )
    X = ArraySpec(
        n_rows=draw(st.sampled_from((6, 1, 12))),
        n_cols=draw(st.sampled_from((3, 1))),
        dtype=draw(st.sampled_from(("float64", "float32"))),
        values=draw(st.sampled_from(("positive", "extreme_all", "duplicates", "normal"))),
        magnitude=100.0,
        nonneg=True,
        seed=draw(st.integers(0, 2**16)),
    )
    return ParamCase(name, index, settings, X)


def run_param_case(case: ParamCase) -> Outcome:
    cls = getattr(kernelmaps, case.name)
    estimator = clone(cls(**CHECK_PARAMS[case.name][case.index]))
    X = case.X.build()
    y = make_y("binary" if case.name in CLASSIFIERS else "normal", case.X.n_rows, 0)
    given = case.values()

    def run() -> Any:
        fitted = estimator.set_params(**given).fit(X, y)
        return fitted, _apply(fitted, X)

    def judge(result: Any) -> Outcome:
        for param, value in given.items():
            if isinstance(value, (bool, np.bool_)) and _numeric_parameter(cls, param):
                return Outcome(
                    FAILURE, "accepted a bool for a numeric parameter", f"{param}={value}"
                )
        return check_outputs(result[0], X, case.X.n_rows, result[1])

    return judged_call(run, judge)


@pytest.mark.parametrize("name", ESTIMATORS)
def test_estimator_parameters(name: str) -> None:
    def execute(case: ParamCase, failures: Failures) -> None:
        check(f"estimator:{name}", repr(case), run_param_case(case), failures)

    fuzz(param_cases(name), execute, ci_examples=60)


# -- public functions ----------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Call:
    """A call of a public function with generated arguments, and how to judge its result."""

    label: str
    function: Callable[[], Any]
    judge: Callable[[Any], Outcome]
    extra_clear: tuple[type, ...] = ()

    def __repr__(self) -> str:
        return self.label


def run_call(call: Call) -> Outcome:
    return judged_call(call.function, call.judge, extra_clear=call.extra_clear)


#: Integers tried for sizes and counts.
SIZES = (1, 2, 3, 0, -1, 5, 64, True, 2.5, math.nan, 10**6, 10**12, 2**63, None, "3")
RNGS = ("generator", "int", "none", "legacy")


def _rng(kind: str, seed: int) -> Any:
    return {
        "generator": np.random.default_rng(seed),
        "int": seed,
        "none": None,
        "legacy": np.random.RandomState(seed),
    }[kind]


def _kernel_classes() -> list[type]:
    seen: list[type] = []
    for name in kernels.kernel_names():
        cls = kernels.get_kernel_class(name)
        if cls not in seen and cls is not kernels.MaclaurinKernel:
            seen.append(cls)
    return seen


KERNEL_CLASSES = _kernel_classes()
KERNEL_PARAM_VALUES: tuple[Any, ...] = (
    "default",
    0.5,
    1e-300,
    1e300,
    0,
    -1,
    math.nan,
    math.inf,
    True,
    "abc",
    2.5,
    3,
    10**6,
)


def _exp_coefficient(n: int) -> float:
    return 1.0 / math.factorial(n)


def _kernel_matrix_judge(n_x: int, n_y: int, dtypes: tuple[str, ...]) -> Callable[[Any], Outcome]:
    def judge(result: Any) -> Outcome:
        K, diag = result
        outcome = check_finite_array(K, n_rows=n_x, n_cols=n_y, dtypes=dtypes, what="kernel")
        if outcome.kind != CORRECT:
            return outcome
        return check_finite_array(diag, n_rows=n_x, ndim=1, what="kernel diagonal")

    return judge


@st.composite
def kernel_calls(draw: Any) -> Call:
    """``k(X, Y)`` and ``k.diag(X)`` of every registered kernel, parameters fuzzed."""
    cls = draw(st.sampled_from([*KERNEL_CLASSES, kernels.MaclaurinKernel]))
    params: dict[str, Any] = {}
    if cls is kernels.MaclaurinKernel:
        params = {"coefficients": _exp_coefficient, "function": np.exp}
    else:
        for field in dataclasses.fields(cls):
            value = draw(st.sampled_from(KERNEL_PARAM_VALUES), label=field.name)
            if value != "default":
                params[field.name] = value
    X = draw(array_specs(rows=(0, 1, 3, 5), cols=(1, 2, 3)), label="X")
    y_kind = draw(st.sampled_from(("none", "same_cols", "other_cols")))
    Y = None
    if y_kind != "none":
        n_cols = X.n_cols if y_kind == "same_cols" else X.n_cols + 1
        Y = draw(array_specs(rows=(1, 2, 4), cols=(n_cols,)), label="Y")
    n_y = X.n_rows if Y is None else Y.n_rows
    float32 = X.dtype == "float32" and (Y is None or Y.dtype == "float32")
    if X.container == "list" or (Y is not None and Y.container == "list"):
        float32 = False

    def function() -> Any:
        k = cls(**params)
        Xa = X.build()
        K = k(Xa, None if Y is None else Y.build())
        return K, k.diag(Xa)

    label = f"{cls.__name__}(**{params}) X={X!r} Y={Y!r}"
    return Call(
        label,
        function,
        _kernel_matrix_judge(X.n_rows, n_y, ("float32",) if float32 else ("float64",)),
    )


@st.composite
def kernel_helper_calls(draw: Any) -> Call:
    """squared_row_norms, check_kernel_matrix, make_kernel, resolve_kernel."""
    which = draw(st.sampled_from(("squared_row_norms", "check_kernel_matrix", "make_kernel")))
    if which == "squared_row_norms":
        X = draw(array_specs())
        return Call(
            f"squared_row_norms(X={X!r})",
            lambda: kernels.squared_row_norms(X.build()),
            lambda r: check_finite_array(r, n_rows=X.n_rows, ndim=1),
        )
    if which == "check_kernel_matrix":
        K = draw(array_specs(rows=(0, 2, 3), cols=(2, 3)))
        n_rows = draw(st.sampled_from((K.n_rows, 3, 0, -1)))
        n_cols = draw(st.sampled_from((K.n_cols, None, 4)))
        return Call(
            f"check_kernel_matrix(K={K!r}, n_rows={n_rows}, n_cols={n_cols})",
            lambda: kernels.check_kernel_matrix(K.build(), n_rows, n_cols),
            lambda r: check_finite_array(r, n_rows=n_rows, n_cols=n_cols, dtypes=("float64",)),
        )
    name = draw(st.sampled_from([*kernels.kernel_names(), "bogus", ""]))
    key = draw(st.sampled_from(("gamma", "degree", "coef0", "nu", "skewedness", "nope")))
    value = draw(st.sampled_from(KERNEL_PARAM_VALUES[1:]))
    n_features = draw(st.sampled_from((3, 1, 0, -2, 2.5, True)))
    via = draw(st.sampled_from(("make_kernel", "resolve_kernel")))
    X = normal_spec(4, 3)

    def function() -> Any:
        if via == "make_kernel":
            k = kernels.make_kernel(name, **{key: value})
        else:
            k = kernels.resolve_kernel(name, n_features, {key: value})
        return k(X.build()), k.diag(X.build())

    return Call(
        f"{via}({name!r}, {key}={value!r}, n_features={n_features!r})",
        function,
        _kernel_matrix_judge(4, 4, ("float64",)),
    )


def _fitted_map(name: str, index: int) -> Any:
    X = normal_spec(10, 3).build()
    return clone(getattr(kernelmaps, name)(**CHECK_PARAMS[name][index])).fit(X)


@st.composite
def metric_calls(draw: Any) -> Call:
    """feature_map_error, kernel_approximation_error, kernel_errors_from_features."""
    which = draw(st.sampled_from(("feature_map_error", "kernel_approximation_error", "errors")))
    norm = draw(st.sampled_from((*metrics.NORMS, "bogus", "")))
    relative = draw(st.sampled_from((True, False, 1, "yes")))
    if which == "feature_map_error":
        name = draw(st.sampled_from(FEATURE_MAPS))
        index = draw(st.integers(0, len(CHECK_PARAMS[name]) - 1))
        X = draw(array_specs(rows=(0, 1, 3, 6), cols=(3, 2)))
        Y = draw(st.one_of(st.none(), array_specs(rows=(1, 4), cols=(3,))))
        block_rows = draw(st.sampled_from((None, 1, 2, 0, -1, 10**9, 2.5)))

        def function() -> Any:
            return metrics.feature_map_error(
                _fitted_map(name, index),
                X.build(),
                None if Y is None else Y.build(),
                norm=norm,
                relative=relative,
                block_rows=block_rows,
            )

        label = (
            f"feature_map_error({name}#{index}, X={X!r}, Y={Y!r}, norm={norm!r}, "
            f"relative={relative!r}, block_rows={block_rows!r})"
        )
        return Call(label, function, check_finite_scalar)
    if which == "kernel_approximation_error":
        n = draw(st.sampled_from((3, 1, 0)))
        K = draw(array_specs(rows=(n,), cols=(n,)))
        K_approx = draw(array_specs(rows=(n, n + 1), cols=(n,)))
        return Call(
            f"kernel_approximation_error(K={K!r}, K_approx={K_approx!r}, norm={norm!r}, "
            f"relative={relative!r})",
            lambda: metrics.kernel_approximation_error(
                K.build(), K_approx.build(), norm=norm, relative=relative
            ),
            check_finite_scalar,
        )
    X = draw(array_specs(rows=(3, 1, 0), cols=(2,)))
    Z = draw(array_specs(rows=(X.n_rows, X.n_rows + 1), cols=(4, 1)))
    norms = draw(st.sampled_from((("fro",), ("fro", "spectral", "max"), (), ("bogus",))))

    def errors() -> Any:
        return metrics.kernel_errors_from_features(
            kernels.Gaussian(gamma=0.5), X.build(), Z.build(), norms=norms, relative=relative
        )

    def judge(result: Any) -> Outcome:
        if not isinstance(result, dict):
            return Outcome(FAILURE, "not a dict", type(result).__name__)
        for value in result.values():
            outcome = check_finite_scalar(value)
            if outcome.kind != CORRECT:
                return outcome
        return Outcome(CORRECT)

    return Call(
        f"kernel_errors_from_features(Gaussian(0.5), X={X!r}, Z_x={Z!r}, norms={norms}, "
        f"relative={relative!r})",
        errors,
        judge,
    )


@st.composite
def bandwidth_calls(draw: Any) -> Call:
    X = draw(array_specs(rows=(0, 1, 2, 5), cols=(1, 3)))
    rule = draw(st.sampled_from((*BANDWIDTH_RULES, "bogus")))
    kernel = draw(st.sampled_from(("rbf", "laplacian", "matern", "cauchy", "poly", "bogus")))
    q = draw(st.sampled_from((10.0, 0.0, 100.0, -1.0, 50.5, math.nan, 1e-300)))
    max_samples = draw(st.sampled_from((2000, 1, 2, 0, -1, 2**40, 2.5)))
    seed = draw(st.sampled_from((0, None, -1, "abc")))
    return Call(
        f"gamma_from_data(X={X!r}, rule={rule!r}, kernel={kernel!r}, q={q!r}, "
        f"max_samples={max_samples!r}, random_state={seed!r})",
        lambda: gamma_from_data(
            X.build(), rule, kernel=kernel, q=q, max_samples=max_samples, random_state=seed
        ),
        lambda r: check_finite_scalar(r, what="gamma", positive=True),
    )


@st.composite
def sampling_calls(draw: Any) -> Call:
    which = draw(
        st.sampled_from(
            (
                "uniform_points",
                "orthogonal_directions",
                "select_landmarks",
                "kernel_diagonal",
                "landmark_sample_size",
                "recursive_rls_indices",
                "resolve_landmarks",
            )
        )
    )
    seed = draw(st.integers(0, 2**16))
    rng_kind = draw(st.sampled_from(RNGS))
    kernel = draw(
        st.sampled_from(
            (
                kernels.Gaussian(gamma=0.5),
                kernels.Laplacian(gamma=1e300),
                kernels.Polynomial(degree=3),
                kernel_linear,
                kernel_wrong_shape,
                kernel_nan,
                None,
            )
        )
    )
    kernel_label = getattr(kernel, "__name__", repr(kernel))
    if which in ("uniform_points", "orthogonal_directions"):
        n = draw(st.sampled_from(SIZES))
        d = draw(st.sampled_from(SIZES))
        if which == "uniform_points":
            method = draw(st.sampled_from((*sampling.QMC_METHODS, "mc", "bogus")))
            scramble = draw(st.booleans())
            return Call(
                f"uniform_points({n!r}, {d!r}, {method!r}, scramble={scramble}, rng={rng_kind})",
                lambda: sampling.uniform_points(
                    n, d, method, scramble=scramble, rng=_rng(rng_kind, seed)
                ),
                lambda r: check_finite_array(r, n_rows=n, n_cols=d),
            )
        return Call(
            f"orthogonal_directions({n!r}, {d!r}, rng={rng_kind})",
            lambda: sampling.orthogonal_directions(n, d, _rng(rng_kind, seed)),
            lambda r: check_finite_array(r, n_rows=n, n_cols=d),
        )
    if which == "landmark_sample_size":
        n = draw(st.sampled_from(SIZES))
        return Call(
            f"landmark_sample_size({n!r})",
            lambda: sampling.landmark_sample_size(n),
            lambda r: check_finite_scalar(r, what="sample size", positive=True),
        )
    X = draw(array_specs(rows=(0, 1, 3, 8), cols=(1, 3)))
    if which == "kernel_diagonal":
        return Call(
            f"kernel_diagonal({kernel_label}, X={X!r})",
            lambda: sampling.kernel_diagonal(kernel, X.build()),
            lambda r: check_finite_array(r, n_rows=X.n_rows, ndim=1),
        )
    m = draw(st.sampled_from(SIZES))
    if which == "recursive_rls_indices":

        def judge_indices(r: Any) -> Outcome:
            outcome = check_finite_array(r, ndim=1, what="indices")
            if (
                outcome.kind == CORRECT
                and np.size(r)
                and not (0 <= np.min(r) <= np.max(r) < X.n_rows)
            ):
                return Outcome(FAILURE, "indices out of range", repr(np.asarray(r)[:5]))
            return outcome

        return Call(
            f"recursive_rls_indices(X={X!r}, {m!r}, {kernel_label}, rng={rng_kind})",
            lambda: sampling.recursive_rls_indices(X.build(), m, kernel, _rng(rng_kind, seed)),
            judge_indices,
        )

    def judge_landmarks(r: Any) -> Outcome:
        if not (isinstance(r, tuple) and len(r) == 2):
            return Outcome(FAILURE, "not a (landmarks, indices) pair", type(r).__name__)
        return check_finite_array(r[0], n_cols=X.n_cols, what="landmarks")

    if which == "select_landmarks":
        method = draw(st.sampled_from((*sampling.LANDMARK_METHODS, "bogus")))
        return Call(
            f"select_landmarks(X={X!r}, {m!r}, {method!r}, kernel={kernel_label}, rng={rng_kind})",
            lambda: sampling.select_landmarks(
                X.build(), m, method, kernel=kernel, rng=_rng(rng_kind, seed)
            ),
            judge_landmarks,
        )
    landmarks = draw(st.sampled_from((*sampling.LANDMARK_METHODS, "bogus", "array", "wrong_cols")))

    def resolve() -> Any:
        given_landmarks: Any = landmarks
        if landmarks in ("array", "wrong_cols"):
            n_cols = X.n_cols if landmarks == "array" else X.n_cols + 1
            given_landmarks = np.ones((2, n_cols))
        return sampling.resolve_landmarks(
            X.build(), given_landmarks, m, kernel=kernel, rng=_rng(rng_kind, seed)
        )

    return Call(
        f"resolve_landmarks(X={X!r}, {landmarks!r}, {m!r}, kernel={kernel_label}, rng={rng_kind})",
        resolve,
        judge_landmarks,
    )


@st.composite
def infer_task_calls(draw: Any) -> Call:
    kind = draw(
        st.sampled_from(
            ("floats", "ints", "strings", "bools", "nan", "empty", "object", "two_d", "inf")
        )
    )
    n = draw(st.sampled_from((6, 1, 100)))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    y: Any = {
        "floats": rng.normal(size=n),
        "ints": rng.integers(0, 3, size=n),
        "strings": np.array(["a", "b"] * n)[:n],
        "bools": rng.random(n) < 0.5,
        "nan": np.full(n, np.nan),
        "empty": np.array([]),
        "object": np.array([1, "a", None] * n, dtype=object)[:n],
        "two_d": rng.normal(size=(n, 2)),
        "inf": np.full(n, np.inf),
    }[kind]

    def judge(r: Any) -> Outcome:
        if r in ("classification", "regression"):
            return Outcome(CORRECT)
        return Outcome(FAILURE, "infer_task: unknown task", repr(r))

    return Call(f"infer_task({kind}, n={n})", lambda: datasets.infer_task(y), judge)


FUNCTIONS: dict[str, Callable[[], st.SearchStrategy[Call]]] = {
    "kernels": kernel_calls,
    "kernel_helpers": kernel_helper_calls,
    "metrics": metric_calls,
    "bandwidth": bandwidth_calls,
    "sampling": sampling_calls,
    "infer_task": infer_task_calls,
}


@pytest.mark.parametrize("group", FUNCTIONS)
def test_public_functions(group: str) -> None:
    def execute(call: Call, failures: Failures) -> None:
        subject = "function:" + call.label.split("(", 1)[0]
        check(subject, repr(call), run_call(call), failures)

    fuzz(FUNCTIONS[group](), execute, ci_examples=60)


# -- data loaders --------------------------------------------------------------------------


def judge_dataset(spec: _fuzz.FileSpec, dense: bool = True) -> Callable[[Any], Outcome]:
    def judge(ds: Any) -> Outcome:
        if not isinstance(ds, datasets.Dataset):
            return Outcome(FAILURE, "not a Dataset", type(ds).__name__)
        X = ds.X
        if sp.issparse(X) and dense:
            return Outcome(FAILURE, "sparse X where dense was asked", type(X).__name__)
        if spec.explicit_nonfinite:
            values = X.data if sp.issparse(X) else np.asarray(X)
            outcome = (
                Outcome(CORRECT)
                if values.ndim == 2 or sp.issparse(X)
                else Outcome(FAILURE, "X: not 2-D", repr(values.shape))
            )
        else:
            outcome = check_finite_array(
                X, dtypes=("float64",), allow_sparse=not dense, what="loaded X"
            )
        if outcome.kind != CORRECT:
            return outcome
        n_rows, n_cols = X.shape
        if n_rows == 0:
            return Outcome(FAILURE, "loaded zero rows without an error", repr(X.shape))
        if len(ds.feature_names) != n_cols:
            return Outcome(FAILURE, "feature_names do not match the columns", f"{ds.feature_names}")
        if ds.y is not None:
            y = np.asarray(ds.y)
            if y.shape[0] != n_rows:
                return Outcome(FAILURE, "y and X lengths differ", f"{y.shape} {X.shape}")
            if y.dtype.kind == "f" and not np.all(np.isfinite(y)) and not spec.explicit_nonfinite:
                return Outcome(FAILURE, "non-finite loaded y", repr(y[:5]))
        return Outcome(CORRECT)

    return judge


LOADERS: dict[str, Callable[[], st.SearchStrategy[_fuzz.FileSpec]]] = {
    "load_file": _fuzz.data_files,
    "load_csv": _fuzz.csv_files,
    "load_svmlight": _fuzz.svmlight_files,
    "load_npy": _fuzz.npy_files,
    "load_npz": _fuzz.npz_files,
}


@st.composite
def loader_cases(draw: Any, loader: str) -> tuple[_fuzz.FileSpec, dict[str, Any]]:
    spec = draw(LOADERS[loader](), label="file")
    kwargs: dict[str, Any] = {}
    if loader in ("load_file", "load_csv", "load_npy", "load_npz"):
        kwargs["target"] = draw(st.sampled_from((spec.target, None)), label="target")
    if loader == "load_csv":
        kwargs["delimiter"] = draw(st.sampled_from((None, ",", ";", "", "ab")))
    if loader == "load_svmlight":
        kwargs["n_features"] = draw(st.sampled_from((None, 3, 1, 0, -1, 10**10)))
        kwargs["dense"] = draw(st.booleans())
        kwargs["zero_based"] = draw(st.sampled_from(("auto", True, False)))
    return spec, kwargs


@pytest.mark.parametrize("loader", LOADERS)
def test_data_loaders(loader: str) -> None:
    function = getattr(datasets, loader)

    def execute(case: tuple[_fuzz.FileSpec, dict[str, Any]], failures: Failures) -> None:
        spec, kwargs = case
        with tempfile.TemporaryDirectory() as folder:
            path = spec.write(Path(folder))
            call = Call(
                f"{loader}({spec!r}, **{kwargs})",
                lambda: function(path, **kwargs),
                judge_dataset(spec, kwargs.get("dense", True)),
                extra_clear=(FileNotFoundError,) if spec.kind == "missing" else (),
            )
            outcome = _fuzz.file_expectations(spec, run_call(call))
            leftovers = _fuzz.leftover_temporaries(Path(folder))
        if outcome.kind != FAILURE and leftovers:
            outcome = Outcome(FAILURE, "temporary files left", repr(leftovers))
        check(f"loader:{loader}", repr(call), outcome, failures)

    fuzz(loader_cases(loader), execute, ci_examples=60)
