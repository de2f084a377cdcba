"""Shared pieces of the fuzz suite: profiles, input strategies, the outcome classifier.

The fuzz tests (``tests/test_fuzz_estimators.py``, ``tests/test_fuzz_cli.py``) feed
generated inputs to every public estimator, public function and command, and accept only
two outcomes (see docs/FUZZING.md):

* a correct result: finite output of the right shape and dtype;
* a clear error: ``ValueError`` / ``TypeError`` (kernelmaps' own, scikit-learn's
  ``InvalidParameterError`` and ``NotFittedError`` included) or
  ``InsufficientMemoryError``, whose message is one line of reasonable length.

Anything else is a failure: a non-finite output, a leaked internal exception, a
``RuntimeWarning``, a multi-line message, an unchecked allocation, a hang.

Profiles.  ``KERNELMAPS_FUZZ`` chooses one: ``ci`` (default: derandomized, a few dozen
examples per test, both files in about a minute) or ``long`` (2000 examples per test,
random; run by hand).  The profiles are registered here and applied by the
:func:`fuzz_settings` decorator of each test, so that other tests keep Hypothesis'
defaults.

Tally.  With ``KERNELMAPS_FUZZ_REPORT=path.json``, the outcome of every distinct input is
counted per subject (an estimator, a function, a command) and written to that file when
the session ends: inputs tried, correct results, clear errors, failures, and for each
class of failure its count and the first failing input.
"""

from __future__ import annotations

import atexit
import bz2
import contextlib
import dataclasses
import gzip
import io
import json
import lzma
import math
import os
import re
import signal
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

# -- profiles ------------------------------------------------------------------------------

PROFILE = os.environ.get("KERNELMAPS_FUZZ", "ci").strip().lower() or "ci"
if PROFILE not in ("ci", "long"):
    raise ValueError(f"KERNELMAPS_FUZZ must be 'ci' or 'long'; got {PROFILE!r}.")

#: Time budget of one example; the examples take milliseconds.
DEADLINE_SECONDS = 10.0
#: A call still running after this long is stopped and reported as a hang; the test then
#: runs no further examples (one hang per test bounds the time of a broken run).
HANG_SECONDS = 15.0
#: Examples per test in the long profile.
LONG_EXAMPLES = 2000
#: ``KERNELMAPS_FUZZ_SHRINK=1``: stop a test at its first failure and let Hypothesis
#: shrink it to a minimal example (with Hypothesis' deadline as the time budget).  By
#: default every example of a test runs, and the test then fails listing each class of
#: failure with its count and its first input (no shrinking; the time stays bounded).
SHRINK = os.environ.get("KERNELMAPS_FUZZ_SHRINK", "").strip() not in ("", "0")

_COMMON: dict[str, Any] = {
    "deadline": timedelta(seconds=DEADLINE_SECONDS) if SHRINK else None,
    "database": None,
    "print_blob": True,
    "suppress_health_check": [
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
        HealthCheck.function_scoped_fixture,
        HealthCheck.large_base_example,
    ],
}
settings.register_profile("kernelmaps-fuzz-ci", derandomize=True, max_examples=25, **_COMMON)
settings.register_profile(
    "kernelmaps-fuzz-long", derandomize=False, max_examples=LONG_EXAMPLES, **_COMMON
)
FUZZ_PROFILE = settings.get_profile(f"kernelmaps-fuzz-{PROFILE}")


def fuzz_settings(ci_examples: int) -> settings:
    """The settings of a fuzz test: the chosen profile, ``ci_examples`` examples in CI."""
    examples = ci_examples if PROFILE == "ci" else LONG_EXAMPLES
    return settings(FUZZ_PROFILE, max_examples=examples)


# -- the outcome classifier ----------------------------------------------------------------

CORRECT, CLEAR_ERROR, FAILURE = "correct", "clear_error", "failure"

#: Longest acceptable error message (scikit-learn's parameter messages list the options).
MAX_MESSAGE = 1200

#: Messages of built-in ValueError / TypeError raised by numpy, scipy, scikit-learn or
#: Python itself from deep inside a computation: they name no parameter of the call.
INTERNAL_MESSAGES = tuple(
    re.compile(p)
    for p in (
        r"^operands could not be broadcast",
        r"could not broadcast input array",
        r"array must not contain infs or NaNs",
        r"^matmul: Input operand",
        r"shapes \(.*\) and \(.*\) not aligned",
        r"^math domain error",
        r"cannot convert float NaN to integer",
        r"object is not subscriptable",
        r"not supported between instances of",
        r"unsupported operand type",
        r"object is not callable",
        r"object is not iterable",
        r"^unhashable type",
        r"got an unexpected keyword argument",
        r"missing \d+ required positional argument",
        r"takes \d+ positional arguments? but \d+",
        r"^setting an array element with a sequence",
        r"^zero-size array to reduction operation",
        r"^need at least one array to concatenate",
        r"^(too many|not enough) values to unpack",
        r"^invalid literal for int\(\)",
        r"^The truth value of an array",
        r"^cannot reshape array",
        r"^negative dimensions are not allowed",
        r"^array is too big",
        r"^Maximum allowed size exceeded",
        r"^maximum supported dimension for an ndarray",
        r"^buffer source array is read-only",
        r"^(k|ncv) must be",
        r"^n_samples=\d+ should be >= n_clusters",
        r"^Cannot cast ufunc",
        r"^ufunc '\w+' not supported",
        r"^ufunc '\w+' did not contain a loop",
        r"^Unable to avoid copy",
        r"^object of type .* has no len\(\)",
        r"^'?\w+'? object cannot be interpreted as an integer",
        r"^only integer scalar arrays can be converted",
        r"^only length-1 arrays can be converted",
        r"^\w+\(\) argument must be",
        r"^float\(\) argument must be",
        r"^int\(\) argument must be",
        r"^Input must be 1- or 2-d",
        r"^expected square matrix",
        r"codec can't (de|en)code",
        r"you can load it unsafely",
        r"^Object arrays cannot be loaded when allow_pickle=False",
    )
)

#: Exception classes accepted as a clear error: built-in ValueError and TypeError,
#: kernelmaps' own, scikit-learn's parameter and fitted-state errors.
_CLEAR_FOREIGN = ("InvalidParameterError", "NotFittedError")


#: scikit-learn's message for an invalid parameter: acceptable for kernelmaps' own
#: estimators and functions, a leak for those it calls (KMeans, load_svmlight_file...).
_FOREIGN_PARAMETER = re.compile(r"The '\w+' parameter of (\w+) must be")


def _public_names() -> set[str]:
    import kernelmaps
    from kernelmaps import bandwidth, datasets, feature_maps, kernels, metrics, models, sampling

    modules = (kernelmaps, bandwidth, datasets, feature_maps, kernels, metrics, models, sampling)
    return {name for module in modules for name in module.__all__}


class FuzzTimeout(BaseException):
    """Raised in a call that ran longer than :data:`HANG_SECONDS` (not an ``Exception``,
    so that no ``except Exception`` in the code under test swallows it)."""


@dataclasses.dataclass
class Outcome:
    """What a call gave: ``kind`` is correct / clear_error / failure; ``what`` names the
    class of failure (``"leaked IndexError"``, ``"non-finite output"``...)."""

    kind: str
    what: str = ""
    detail: str = ""
    message: str = ""  # the whole message of a clear error

    def __str__(self) -> str:
        return f"{self.kind}: {self.what}" + (f" ({self.detail})" if self.detail else "")


def _short(text: str, limit: int = 300) -> str:
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _is_kernelmaps_exception(exc: BaseException) -> bool:
    return type(exc).__module__.split(".")[0] == "kernelmaps"


def classify_exception(exc: BaseException, *, extra_clear: tuple[type, ...] = ()) -> Outcome:
    """Whether ``exc`` is a clear error, or which kind of failure.

    ``extra_clear`` adds accepted classes (the data loaders' ``FileNotFoundError``).
    """
    from kernelmaps.exceptions import InsufficientMemoryError

    name = type(exc).__name__
    message = str(exc)
    if isinstance(exc, FuzzTimeout):
        return Outcome(FAILURE, f"hang (> {HANG_SECONDS:.0f} s)")
    if isinstance(exc, Warning):
        return Outcome(FAILURE, f"{name} raised as an error", _short(message))
    clear_class = (
        type(exc) in (ValueError, TypeError)
        or name in _CLEAR_FOREIGN
        or isinstance(exc, InsufficientMemoryError)
        or (_is_kernelmaps_exception(exc) and isinstance(exc, (ValueError, TypeError)))
        or (bool(extra_clear) and isinstance(exc, extra_clear))
    )
    if not clear_class:
        return Outcome(FAILURE, f"leaked {name}", _short(message))
    stripped = message.strip()
    foreign = _FOREIGN_PARAMETER.search(stripped)
    if foreign and foreign.group(1) not in _public_names():
        return Outcome(FAILURE, f"leaked {foreign.group(1)}'s parameter error", _short(stripped))
    if type(exc) in (ValueError, TypeError):
        for pattern in INTERNAL_MESSAGES:
            if pattern.search(stripped):
                return Outcome(FAILURE, f"leaked internal {name}", _short(stripped))
    if not stripped or len(stripped) < 12:
        return Outcome(FAILURE, "empty or terse message", f"{name}: {message!r}")
    if "\n" in stripped:
        return Outcome(FAILURE, "multi-line message", f"{name}: {_short(stripped)}")
    if len(stripped) > MAX_MESSAGE:
        return Outcome(FAILURE, "message too long", f"{name}: {len(stripped)} characters")
    if "\ufeff" in stripped:
        return Outcome(FAILURE, "invisible BOM character in the message", _short(stripped))
    return Outcome(CLEAR_ERROR, name, _short(stripped, 160), stripped)


def check_finite_array(
    out: Any,
    *,
    n_rows: int | None = None,
    n_cols: int | None = None,
    ndim: int | tuple[int, ...] = 2,
    dtypes: tuple[Any, ...] | None = None,
    allow_sparse: bool = False,
    what: str = "output",
) -> Outcome:
    """A correct result, or the failure: not an array, wrong shape or dtype, NaN or inf."""
    if sp.issparse(out):
        if not allow_sparse:
            return Outcome(FAILURE, f"{what}: sparse where dense was expected", type(out).__name__)
        values = np.asarray(out.tocsr().data)
    elif isinstance(out, np.ndarray):
        values = out
    else:
        return Outcome(FAILURE, f"{what}: not an array", type(out).__name__)
    shape = out.shape
    ndims = (ndim,) if isinstance(ndim, int) else ndim
    if len(shape) not in ndims:
        return Outcome(FAILURE, f"{what}: wrong number of dimensions", f"shape {shape}")
    if n_rows is not None and shape[0] != n_rows:
        return Outcome(FAILURE, f"{what}: wrong number of rows", f"{shape[0]} for {n_rows}")
    if n_cols is not None and len(shape) > 1 and shape[1] != n_cols:
        return Outcome(FAILURE, f"{what}: wrong number of columns", f"{shape[1]} for {n_cols}")
    if dtypes is not None and out.dtype not in [np.dtype(d) for d in dtypes]:
        expected = "/".join(np.dtype(d).name for d in dtypes)
        return Outcome(FAILURE, f"{what}: wrong dtype", f"{out.dtype} for {expected}")
    if values.dtype.kind in "fc" and values.size and not np.all(np.isfinite(values)):
        n_bad = int(np.size(values) - np.count_nonzero(np.isfinite(values)))
        return Outcome(FAILURE, f"non-finite {what}", f"{n_bad} of {values.size} values")
    return Outcome(CORRECT)


def check_finite_scalar(value: Any, *, what: str = "result", positive: bool = False) -> Outcome:
    """A finite float (``positive``: > 0, else >= 0 is not required)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return Outcome(FAILURE, f"{what}: not a number", repr(value)[:80])
    if not math.isfinite(number):
        return Outcome(FAILURE, f"non-finite {what}", repr(number))
    if positive and not number > 0:
        return Outcome(FAILURE, f"{what}: not positive", repr(number))
    return Outcome(CORRECT)


# -- guarded calls: time, memory and warnings ----------------------------------------------

#: What ``kernelmaps._memory.available_memory`` reports during a fuzzed call: requests
#: beyond it must be refused by ``check_memory`` before anything is allocated.
MEMORY_BUDGET = 256 * 2**20
#: Address space a fuzzed call may add (RLIMIT_AS): an allocation that was not checked
#: fails with MemoryError (reported as a leak) instead of taking the machine's memory.
MEMORY_HEADROOM = 512 * 2**20


def _vm_size() -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


@contextlib.contextmanager
def _address_space_limit() -> Iterator[None]:
    try:
        import resource
    except ImportError:  # pragma: no cover - not on this platform
        yield
        return
    size = _vm_size()
    if size is None:  # pragma: no cover - no /proc
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = size + MEMORY_HEADROOM
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


@contextlib.contextmanager
def _hang_alarm() -> Iterator[None]:
    def on_alarm(signum: int, frame: Any) -> None:
        raise FuzzTimeout(f"still running after {HANG_SECONDS:.0f} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, HANG_SECONDS)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def guarded() -> Iterator[None]:
    """The conditions of a fuzzed call: RuntimeWarnings raised, other warnings ignored,
    a small memory budget, a bounded address space and a hang alarm."""
    import kernelmaps._memory as memory

    real_available = memory.available_memory
    memory.available_memory = lambda: MEMORY_BUDGET  # type: ignore[assignment]
    try:
        with (
            warnings.catch_warnings(),
            np.errstate(divide="warn", over="warn", invalid="warn", under="ignore"),
        ):
            warnings.simplefilter("ignore")
            warnings.simplefilter("error", RuntimeWarning)
            with _hang_alarm(), _address_space_limit():
                yield
    finally:
        memory.available_memory = real_available  # type: ignore[assignment]


def call_guarded(function: Callable[[], Any]) -> tuple[Any, BaseException | None, float]:
    """``function()`` under :func:`guarded`: its result or exception, and the seconds."""
    start = time.perf_counter()
    try:
        with guarded():
            result = function()
    except (Exception, FuzzTimeout, MemoryError) as exc:
        return None, exc, time.perf_counter() - start
    return result, None, time.perf_counter() - start


def judged_call(
    function: Callable[[], Any],
    judge: Callable[[Any], Outcome],
    *,
    extra_clear: tuple[type, ...] = (),
) -> Outcome:
    """The outcome of ``function()`` under :func:`guarded`, its result judged by ``judge``;
    a call slower than :data:`DEADLINE_SECONDS` is a failure whatever it gave."""
    result, exc, seconds = call_guarded(function)
    outcome = judge(result) if exc is None else classify_exception(exc, extra_clear=extra_clear)
    if seconds > DEADLINE_SECONDS and outcome.kind != FAILURE:
        return Outcome(FAILURE, f"slow (> {DEADLINE_SECONDS:.0f} s)", f"{seconds:.1f} s")
    return outcome


def warm_up() -> None:
    """Fit and apply every estimator of the table once, in float64 and float32, outside the
    guards: the first call of a compiled kernel (numba) compiles it or loads it from the
    cache, which would count against an example's time budget (or be stopped as a hang)."""
    from sklearn.base import clone

    import kernelmaps

    from ._instances import CHECK_PARAMS

    X = np.random.default_rng(0).uniform(0.1, 1.0, size=(8, 3))
    y = np.arange(8) % 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, param_sets in CHECK_PARAMS.items():
            for params in param_sets:
                for dtype in (np.float64, np.float32):
                    Xd = X.astype(dtype)
                    estimator = clone(getattr(kernelmaps, name)(**params))
                    # a failure here is found again by the examples
                    with contextlib.suppress(Exception):
                        fitted = estimator.fit(Xd, y)
                        method = getattr(fitted, "transform", None) or fitted.predict
                        method(Xd)


# -- the tally -----------------------------------------------------------------------------


@dataclasses.dataclass
class _Counts:
    tried: int = 0
    correct: int = 0
    clear_error: int = 0
    failures: int = 0
    classes: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    messages: dict[str, int] = dataclasses.field(default_factory=dict)
    seen: set[str] = dataclasses.field(default_factory=set)


_TALLY: dict[str, _Counts] = {}
#: Distinct clear-error messages kept per subject in the report.
MAX_SAMPLES = 40
_REPORT_REGISTERED = False


def record(subject: str, example: str, outcome: Outcome) -> None:
    """Count ``outcome`` for ``subject`` once per distinct ``example`` (its repr)."""
    global _REPORT_REGISTERED
    if not _REPORT_REGISTERED and os.environ.get("KERNELMAPS_FUZZ_REPORT"):
        atexit.register(write_report, os.environ["KERNELMAPS_FUZZ_REPORT"])
        _REPORT_REGISTERED = True
    counts = _TALLY.setdefault(subject, _Counts())
    if example in counts.seen:
        return
    counts.seen.add(example)
    counts.tried += 1
    if outcome.kind == CORRECT:
        counts.correct += 1
    elif outcome.kind == CLEAR_ERROR:
        counts.clear_error += 1
        # the messages, numbers masked, for a reader to judge their quality
        message = re.sub(r"/(?:[^/\s]+/)+", "", f"{outcome.what}: {outcome.detail}")
        message = re.sub(r"\d+(\.\d+)?(e[-+]?\d+)?", "N", message)
        if message in counts.messages or len(counts.messages) < MAX_SAMPLES:
            counts.messages[message] = counts.messages.get(message, 0) + 1
    else:
        counts.failures += 1
        entry = counts.classes.setdefault(
            outcome.what, {"count": 0, "first": example, "detail": outcome.detail}
        )
        entry["count"] += 1


def check(subject: str, example: str, outcome: Outcome, failures: Failures | None) -> None:
    """Record ``outcome``; on a failure, add it to ``failures`` (or, when shrinking or
    ``failures`` is None, fail the example at once)."""
    record(subject, example, outcome)
    if outcome.kind != FAILURE:
        return
    if SHRINK or failures is None:
        raise AssertionError(f"{subject}: {outcome} -- input: {example}")
    failures.append((subject, outcome, example))


#: Failures collected by one test: (subject, outcome, input).
Failures = list[tuple[str, Outcome, str]]


def fuzz(
    strategy: st.SearchStrategy[Any],
    execute: Callable[[Any, Failures], None],
    *,
    ci_examples: int,
) -> None:
    """Run ``execute(example, failures)`` on the examples of ``strategy``, then fail with
    a summary of ``failures``: per class of failure, its count and its first input."""
    failures: Failures = []

    @fuzz_settings(ci_examples)
    @given(example=strategy)
    def examples(example: Any) -> None:
        if any(outcome.what.startswith("hang") for _, outcome, _ in failures):
            return
        execute(example, failures)

    examples()
    if failures:
        classes: dict[tuple[str, str], list[tuple[Outcome, str]]] = {}
        for subject, outcome, example in failures:
            classes.setdefault((subject, outcome.what), []).append((outcome, example))
        summary = [f"{len(failures)} failing input(s) in {len(classes)} class(es) of failure:"]
        for (subject, what), found in classes.items():
            outcome, example = found[0]
            summary.append(
                f"- {subject}: {what} ({len(found)}x); first: {outcome.detail} -- input: {example}"
            )
        pytest.fail("\n".join(summary), pytrace=False)


def write_report(path: str) -> None:
    """Write the tally to ``path`` (JSON): per subject and per group (prefix before ':')."""
    subjects = {}
    groups: dict[str, dict[str, int]] = {}
    for subject, c in sorted(_TALLY.items()):
        row = {
            "tried": c.tried,
            "correct": c.correct,
            "clear_error": c.clear_error,
            "failures": c.failures,
        }
        subjects[subject] = row | {"failure_classes": c.classes, "clear_errors": c.messages}
        group = groups.setdefault(subject.split(":", 1)[0], dict.fromkeys(row, 0))
        for key, value in row.items():
            group[key] += value
    report = {"profile": PROFILE, "groups": groups, "subjects": subjects}
    target = Path(path)
    fd, tmp = tempfile.mkstemp(dir=target.parent or ".", prefix=f".{target.name}.", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(report, fh, indent=1, sort_keys=False, default=str)
    os.replace(tmp, target)


# -- arrays --------------------------------------------------------------------------------

#: Dense dtypes (the floats repeated: they reach the numerics more often).
DENSE_DTYPES = (
    "float64",
    "float32",
    "float64",
    "float32",
    "int64",
    "int32",
    "uint8",
    "bool",
    "object",
    "float16",
)
SPARSE_DTYPES = ("float64", "float32", "int64", "int32", "bool")
LAYOUTS = ("C", "F", "strided", "reversed", "readonly", "list")
SPARSE_FORMATS = ("csr", "csc", "coo", "bsr", "lil", "dok", "dia")
#: Extreme magnitudes by dtype: tiny, subnormal, and large enough to overflow squares,
#: exponentials and sums.
MAGNITUDES = {
    "float64": (1e-300, 5e-324, 1e154, 1e200, 1e308, 1.7e308),
    "float32": (1e-38, 1e-45, 1e19, 1e38, 3.4e38),
    "float16": (1e-7, 6e4),
    "object": (1e-300, 1e154, 1e308),
    "int64": (2**31, 2**53, 2**62, 2**63 - 1),
    "int32": (2**15, 2**31 - 1),
}
VALUE_KINDS = (
    "normal",
    "positive",
    "zeros",
    "constant",
    "duplicates",
    "extreme_all",
    "extreme_row",
    "extreme_cell",
)
#: NaN / inf placed in a float array ("none" repeated: most examples have none).
SPECIALS = ("none", "none", "none", "none", "nan", "inf", "-inf", "nan_row")


@dataclasses.dataclass(frozen=True)
class ArraySpec:
    """A generated input array, built on demand; its repr is a reproducer."""

    n_rows: int
    n_cols: int
    dtype: str = "float64"
    container: str = "C"  # a layout, or "sparse"
    sparse_format: str = "csr"
    sparse_kind: str = "matrix"  # scipy's *_matrix or *_array
    values: str = "normal"
    magnitude: float = 1.0
    special: str = "none"
    nonneg: bool = False
    seed: int = 0

    def __repr__(self) -> str:
        parts = [f"{self.n_rows}x{self.n_cols}", self.dtype]
        if self.container == "sparse":
            parts.append(f"{self.sparse_format}_{self.sparse_kind}")
        else:
            parts.append(self.container)
        parts.append(self.values)
        if self.values.startswith("extreme"):
            parts.append(f"|x|~{self.magnitude:g}")
        if self.special != "none":
            parts.append(self.special)
        if self.nonneg:
            parts.append("nonneg")
        parts.append(f"seed={self.seed}")
        return "ArraySpec(" + ", ".join(parts) + ")"

    @property
    def float_like(self) -> bool:
        return self.dtype in ("float64", "float32", "float16", "object")

    def _base(self) -> np.ndarray:
        """The values as float64 (ints and bools are made in their own dtype later)."""
        rng = np.random.default_rng(self.seed)
        shape = (self.n_rows, self.n_cols)
        X = rng.uniform(-1.0, 1.0, size=shape)
        if self.nonneg or self.values == "positive":
            X = np.abs(X) + 0.05
        if self.values == "zeros":
            X = np.zeros(shape)
        elif self.values == "constant":
            X = np.full(shape, 0.75)
        elif self.values == "duplicates" and self.n_rows:
            X = np.repeat(X[:1], self.n_rows, axis=0)
        if self.container == "sparse" and self.values not in ("zeros", "constant"):
            X[rng.random(shape) < 0.4] = 0.0
        return X

    def build(self) -> Any:
        """The array (dense in its layout, or sparse in its format)."""
        rng = np.random.default_rng(self.seed + 1)
        shape = (self.n_rows, self.n_cols)
        if self.dtype == "bool":
            X: np.ndarray = rng.random(shape) < 0.5
        elif self.dtype in ("int64", "int32", "uint8"):
            X = self._ints(rng)
        else:
            X = self._floats(rng)
        if self.container == "sparse":
            return self._sparse(X)
        return self._layout(X)

    def _ints(self, rng: np.random.Generator) -> np.ndarray:
        dtype = np.dtype(self.dtype)
        info = np.iinfo(dtype)
        base = self._base()
        if self.values.startswith("extreme"):
            top = min(int(self.magnitude), int(info.max))
            big = rng.integers(top // 2, top, size=base.shape, endpoint=True, dtype=dtype)
            if not (self.nonneg or info.min == 0):
                big = np.where(base < 0, -big, big).astype(dtype)
            X = (base * 10).round().astype(dtype)
            return self._place_extreme(X, big)
        low = 0 if (self.nonneg or info.min == 0) else -9
        X = rng.integers(low, 10, size=base.shape, endpoint=True).astype(dtype)
        if self.values == "zeros":
            X[:] = 0
        elif self.values == "constant":
            X[:] = 3
        elif self.values == "duplicates" and self.n_rows:
            X[:] = X[:1]
        return X

    def _floats(self, rng: np.random.Generator) -> np.ndarray:
        work = "float64" if self.dtype == "object" else self.dtype
        base = self._base()
        X = base.astype(work)
        if self.values.startswith("extreme"):
            big = (base * self.magnitude).astype(work) if self.magnitude <= 1 else None
            if big is None:
                scale = np.where(base < 0, -1.0, 1.0) * rng.uniform(0.5, 1.0, size=base.shape)
                big = (scale * np.float64(self.magnitude)).astype(work)
                if self.nonneg:
                    big = np.abs(big)
            X = self._place_extreme(X, big)
        if self.special != "none" and X.size:
            value = {"nan": np.nan, "inf": np.inf, "-inf": -np.inf, "nan_row": np.nan}[self.special]
            if self.special == "nan_row":
                X[rng.integers(self.n_rows)] = value
            else:
                X[rng.integers(self.n_rows), rng.integers(self.n_cols)] = value
        return X.astype(object) if self.dtype == "object" else X

    def _place_extreme(self, X: np.ndarray, big: np.ndarray) -> np.ndarray:
        if not X.size:
            return X
        rng = np.random.default_rng(self.seed + 2)
        if self.values == "extreme_all":
            return big
        out = X.copy()
        if self.values == "extreme_row":
            i = rng.integers(self.n_rows)
            out[i] = big[i]
        else:
            i, j = rng.integers(self.n_rows), rng.integers(self.n_cols)
            out[i, j] = big[i, j]
        return out

    def _layout(self, X: np.ndarray) -> Any:
        if self.container == "F":
            return np.asfortranarray(X)
        if self.container == "strided":
            big = np.zeros((2 * self.n_rows, 2 * self.n_cols), dtype=X.dtype)
            big[::2, ::2] = X
            return big[::2, ::2]
        if self.container == "reversed":
            return np.ascontiguousarray(X[::-1])[::-1]
        if self.container == "readonly":
            X = X.copy()
            X.flags.writeable = False
            return X
        if self.container == "list":
            return X.tolist()
        return np.ascontiguousarray(X)

    def _sparse(self, X: np.ndarray) -> Any:
        suffix = "_matrix" if self.sparse_kind == "matrix" else "_array"
        cls = getattr(sp, self.sparse_format + suffix)
        if self.sparse_format == "dok":
            return cls(sp.coo_matrix(X))
        return cls(X)


def array_specs(
    *,
    rows: tuple[int, ...] = (0, 1, 2, 3, 5, 8),
    cols: tuple[int, ...] = (1, 2, 3, 5),
    nonneg: bool | None = None,
    sparse: bool = True,
    dtypes: tuple[str, ...] = DENSE_DTYPES,
    values: tuple[str, ...] = VALUE_KINDS,
    specials: tuple[str, ...] = SPECIALS,
) -> st.SearchStrategy[ArraySpec]:
    """Arrays of every shape, dtype, layout or sparse format, value range and defect.

    Each dimension shrinks towards its first choice (a plain small float64 array).
    """

    @st.composite
    def build(draw: Any) -> ArraySpec:
        container = draw(st.sampled_from(LAYOUTS + (("sparse",) if sparse else ())))
        dtype = draw(st.sampled_from(SPARSE_DTYPES if container == "sparse" else dtypes))
        value_kind = draw(st.sampled_from(values))
        magnitude = 1.0
        if value_kind.startswith("extreme"):
            if dtype in MAGNITUDES:
                magnitude = draw(st.sampled_from(MAGNITUDES[dtype]))
            else:
                value_kind = "normal"
        special = "none"
        if dtype in ("float64", "float32", "float16", "object"):
            special = draw(st.sampled_from(specials))
        return ArraySpec(
            n_rows=draw(st.sampled_from(rows)),
            n_cols=draw(st.sampled_from(cols)),
            dtype=dtype,
            container=container,
            sparse_format=draw(st.sampled_from(SPARSE_FORMATS)),
            sparse_kind=draw(st.sampled_from(("matrix", "array"))),
            values=value_kind,
            magnitude=magnitude,
            special=special,
            nonneg=draw(st.booleans()) if nonneg is None else nonneg,
            seed=draw(st.integers(0, 2**16)),
        )

    return build()


def normal_spec(n_rows: int, n_cols: int, *, nonneg: bool = True, seed: int = 0) -> ArraySpec:
    """A plain float64 array (values in [0.05, 1.05] when ``nonneg``)."""
    return ArraySpec(n_rows, n_cols, nonneg=nonneg, seed=seed)


def expected_dtypes(X: Any, estimator: Any) -> tuple[str, ...]:
    """The output dtype a transform must have for input ``X``: float32 for float32
    input when the estimator preserves it, float64 otherwise."""
    preserves: list[str] = []
    with contextlib.suppress(Exception):
        tags = estimator.__sklearn_tags__()
        if tags.transformer_tags is not None:
            preserves = list(tags.transformer_tags.preserves_dtype)
    if getattr(X, "dtype", None) == np.float32 and "float32" in preserves:
        return ("float32",)
    return ("float64",)


# -- data files ----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class FileSpec:
    """A generated data file (or a folder, or nothing) and how to name its target.

    ``content`` is None for a folder (``kind == "dir"``) and a missing file
    (``kind == "missing"``).  ``explicit_nonfinite``: the file spells NaN or infinity
    itself, so a loader may return it (overflow of a finite number, e.g. ``1e400``, is
    not explicit).
    """

    name: str
    kind: str
    content: bytes | None
    target: str | None = None
    explicit_nonfinite: bool = False
    note: str = ""
    tags: tuple[str, ...] = ()

    def __repr__(self) -> str:
        size = "-" if self.content is None else f"{len(self.content)} bytes"
        head = "" if self.content is None else repr(self.content[:60])
        return (
            f"FileSpec({self.name!r}, {self.kind}, {size}, target={self.target!r}, "
            f"{self.note}, head={head})"
        )

    def write(self, folder: Path) -> Path:
        path = folder / self.name
        if self.kind == "dir":
            path.mkdir()
        elif self.content is not None:
            path.write_bytes(self.content)
        return path


CSV_DEFECTS = (
    "none",
    "none",
    "text_cell",
    "empty_cell",
    "1e400",
    "-1e400",
    "1e308",
    "-1e308",
    "1e-400",
    "nan_cell",
    "inf_cell",
    "huge_digits",
    "hex_float",
    "ragged_short",
    "ragged_long",
    "blank_lines",
    "unbalanced_quote",
    "nul_byte",
    "empty_target",
    "text_target",
)
CSV_HEADERS = (
    "plain",
    "plain",
    "plain",
    "plain",
    "bom",
    "duplicate",
    "duplicate_target",
    "no_header",
    "no_target",
    "spaces",
    "empty_name",
    "header_only",
    "empty_file",
    "blank_file",
)
# The valid choice comes first and repeated, so that most files get through one layer
# (encoding, compression) and reach the defects of the next.
ENCODINGS = ("utf-8", "utf-8", "utf-8", "utf-8", "latin-1", "utf-16", "garbage")
COMPRESSIONS = ("", "", "", "", ".gz", ".bz2", ".xz")
COMPRESSION_DEFECTS = ("none", "none", "none", "truncated", "garbage", "wrong_codec", "empty")


def _compress(data: bytes, suffix: str) -> bytes:
    if suffix == ".gz":
        return gzip.compress(data, mtime=0)
    if suffix == ".bz2":
        return bz2.compress(data)
    if suffix == ".xz":
        return lzma.compress(data)
    return data


def _apply_compression(
    draw: Any, name: str, data: bytes, note: list[str]
) -> tuple[str, bytes, bool]:
    """Compress ``data`` (maybe), and maybe break the compressed stream."""
    suffix = draw(st.sampled_from(COMPRESSIONS))
    if not suffix:
        return name, data, True
    defect = draw(st.sampled_from(COMPRESSION_DEFECTS))
    note.append(f"{suffix[1:]}:{defect}")
    packed = _compress(data, suffix)
    if defect == "truncated":
        cut = draw(st.integers(0, max(len(packed) - 1, 0)))
        packed = packed[:cut]
    elif defect == "garbage":
        packed = draw(st.binary(min_size=1, max_size=64))
    elif defect == "wrong_codec":
        other = {".gz": ".bz2", ".bz2": ".xz", ".xz": ".gz"}[suffix]
        packed = _compress(data, other)
    elif defect == "empty":
        packed = b""
    return name + suffix, packed, defect == "none"


def _tags(*parts: str, intact: bool) -> tuple[str, ...]:
    return (*parts, *(() if intact else ("broken-compression",)))


@st.composite
def csv_files(draw: Any, *, header_names: tuple[str, ...] = ("a", "b", "y")) -> FileSpec:
    """CSV files: valid, or with one defect of header, cell, row, encoding or compression.

    The valid ones have the columns ``header_names`` (the last is the target ``y``).
    """
    rng_seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(rng_seed)
    header_kind = draw(st.sampled_from(CSV_HEADERS))
    defect = draw(st.sampled_from(CSV_DEFECTS))
    n_rows = draw(st.sampled_from((6, 1, 2, 3, 12)))
    sep = draw(st.sampled_from((",", ";", "\t")))
    newline = draw(st.sampled_from(("\n", "\r\n")))
    encoding = draw(st.sampled_from(ENCODINGS))
    names = list(header_names)
    target: str | None = names[-1]
    if header_kind == "duplicate":
        names[1] = names[0]
    elif header_kind == "duplicate_target":
        names[0] = names[-1]
    elif header_kind == "no_target":
        names[-1] = "z"
    elif header_kind == "spaces":
        names = [f" {n} " for n in names]
    elif header_kind == "empty_name":
        names[0] = ""
    n_cols = len(names)
    cells = [[f"{v:.6g}" for v in rng.uniform(-1, 1, size=n_cols)] for _ in range(n_rows)]
    explicit = False
    if cells:
        i = draw(st.integers(0, n_rows - 1))
        j = draw(st.integers(0, n_cols - 2)) if n_cols > 1 else 0
        replacement = {
            "text_cell": "abc",
            "empty_cell": "",
            "1e400": "1e400",
            "-1e400": "-1e400",
            "1e308": "1e308",
            "-1e308": "-1.7e308",
            "1e-400": "1e-400",
            "nan_cell": "nan",
            "inf_cell": "inf",
            "huge_digits": "9" * 400,
            "hex_float": "0x1p3",
            "unbalanced_quote": '"0.5',
            "nul_byte": "0.\x005",
        }.get(defect)
        if replacement is not None:
            cells[i][j] = replacement
            explicit = defect in ("nan_cell", "inf_cell")
        elif defect == "ragged_short":
            cells[i] = cells[i][:-1]
        elif defect == "ragged_long":
            cells[i] = [*cells[i], "0.5"]
        elif defect == "empty_target":
            cells[i][-1] = ""
        elif defect == "text_target":
            cells[i][-1] = "yes"
    lines = [sep.join(row) for row in cells]
    if defect == "blank_lines":
        lines = ["", *lines, "   ", ""]
    if header_kind == "header_only":
        lines = []
    if header_kind != "no_header":
        lines = [sep.join(names), *lines]
    text = newline.join(lines) + (newline if lines else "")
    if header_kind == "empty_file":
        text = ""
    elif header_kind == "blank_file":
        text = "\n\n  \n"
    if header_kind == "bom":
        text = "\ufeff" + text
    if encoding == "latin-1":
        latin = text.lstrip("\ufeff").replace(names[0] or "a", "café", 1)
        data = latin.encode("latin-1")
        if b"\xe9" not in data:
            data = b"\xe9" + data
    elif encoding == "utf-16":
        data = text.encode("utf-16")
    elif encoding == "garbage":
        data = draw(st.binary(min_size=1, max_size=200))
    else:
        data = text.encode("utf-8")
    note = [header_kind, defect, repr(sep), encoding]
    name = draw(st.sampled_from(("fuzzdata.csv", "fuzzdata.tsv", "fuzzdata.txt")))
    name, data, intact = _apply_compression(draw, name, data, note)
    tags = _tags(header_kind, defect, encoding, intact=intact)
    return FileSpec(name, "csv", data, target, explicit, " ".join(note), tags)


SVM_DEFECTS = (
    "none",
    "none",
    "zero_based",
    "negative_index",
    "huge_index",
    "decreasing",
    "duplicate_index",
    "text_index",
    "missing_value",
    "1e400",
    "nan_value",
    "text_label",
    "missing_label",
    "qid",
    "comments",
    "blank_only",
    "empty",
    "garbage",
    "float_index",
)


@st.composite
def svmlight_files(draw: Any) -> FileSpec:
    """svmlight/libsvm files, valid or with one defect, maybe compressed."""
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    defect = draw(st.sampled_from(SVM_DEFECTS))
    n_rows = draw(st.sampled_from((6, 1, 3)))
    rows = []
    for _ in range(n_rows):
        items = [f"{j}:{rng.uniform(-1, 1):.5g}" for j in (1, 2, 3) if rng.random() < 0.8]
        rows.append([f"{rng.uniform(-1, 1):.4g}", *items])
    explicit = False
    row = rows[0]
    if defect == "zero_based":
        row[1:] = ["0:0.5", *row[1:]]
    elif defect == "negative_index":
        row[1:] = ["-1:0.5", *row[1:]]
    elif defect == "huge_index":
        row.append("2000000000:1.5")
    elif defect == "decreasing":
        row[1:] = ["3:0.5", "1:0.25"]
    elif defect == "duplicate_index":
        row[1:] = ["2:0.5", "2:0.25"]
    elif defect == "text_index":
        row.append("abc:1")
    elif defect == "float_index":
        row[1:] = ["1.5:2"]
    elif defect == "missing_value":
        row[1:] = ["1:"]
    elif defect == "1e400":
        row[1:] = ["1:1e400"]
    elif defect == "nan_value":
        row[1:] = ["1:nan"]
        explicit = True
    elif defect == "text_label":
        row[0] = "yes"
    elif defect == "missing_label":
        del row[0]
    elif defect == "qid":
        row.insert(1, "qid:3")
    lines = [" ".join(r) for r in rows]
    if defect == "comments":
        lines = ["# a comment", *[line + " # trailing" for line in lines]]
    text = "\n".join(lines) + "\n"
    if defect == "blank_only":
        text = "\n \n"
    elif defect == "empty":
        text = ""
    data = text.encode()
    if defect == "garbage":
        data = draw(st.binary(min_size=1, max_size=200))
    note = [defect]
    name, data, intact = _apply_compression(
        draw, draw(st.sampled_from(("fuzzdata.svm", "fuzzdata.libsvm"))), data, note
    )
    return FileSpec(
        name, "svmlight", data, None, explicit, " ".join(note), _tags(defect, intact=intact)
    )


NPY_KINDS = (
    "valid",
    "nan",
    "1e308",
    "one_d",
    "three_d",
    "scalar",
    "zero_rows",
    "zero_cols",
    "int",
    "bool",
    "complex",
    "strings",
    "object_pickle",
    "fortran",
    "big_endian",
    "float16",
    "structured",
    "truncated",
    "bad_magic",
    "bad_header",
    "shape_lie",
    "garbage",
    "empty",
)


def _npy_bytes(A: Any, allow_pickle: bool = False) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, A, allow_pickle=allow_pickle)
    return buffer.getvalue()


def _npy_array(kind: str, rng: np.random.Generator, n_cols: int) -> tuple[Any, bool]:
    """The array of an ``.npy`` kind that ``np.save`` can write, and whether it holds
    explicit NaN / inf."""
    A: Any = rng.uniform(-1, 1, size=(6, n_cols))
    explicit = False
    if kind == "nan":
        A[2, 0] = np.nan
        explicit = True
    elif kind == "1e308":
        A[1, 0] = 1.7e308
    elif kind == "one_d":
        A = A[:, 0]
    elif kind == "three_d":
        A = A.reshape(2, 3, n_cols)
    elif kind == "scalar":
        A = np.float64(1.5)
    elif kind == "zero_rows":
        A = A[:0]
    elif kind == "zero_cols":
        A = A[:, :0]
    elif kind == "int":
        A = (A * 10).round().astype(np.int64)
    elif kind == "bool":
        A = A > 0
    elif kind == "complex":
        A = A + 1j
    elif kind == "strings":
        A = A.astype(str)
    elif kind == "object_pickle":
        A = A.astype(object)
    elif kind == "fortran":
        A = np.asfortranarray(A)
    elif kind == "big_endian":
        A = A.astype(">f8")
    elif kind == "float16":
        A = A.astype(np.float16)
    elif kind == "structured":
        A = np.zeros(6, dtype=[("a", "f8"), ("b", "i4")])
    return A, explicit


@st.composite
def npy_files(draw: Any, *, n_cols: int = 3) -> FileSpec:
    """``.npy`` files: valid, of another shape or dtype, pickled, corrupt or truncated."""
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    kind = draw(st.sampled_from(NPY_KINDS))
    A, explicit = _npy_array(kind, rng, n_cols)
    data = _npy_bytes(A, allow_pickle=kind == "object_pickle")
    if kind == "truncated":
        data = data[: draw(st.integers(0, len(data) - 1))]
    elif kind == "bad_magic":
        data = b"\x93NUMPX" + data[6:]
    elif kind == "bad_header":
        data = data[:10] + b"{'descr': nonsense, 'shape': (" + data[40:]
    elif kind == "shape_lie" and b"(6, " in data:
        # the same header length: the padding gives the room for the larger shape
        lie = data.replace(b"(6, ", b"(1000000000000, ", 1)
        end = lie.index(b"\n")
        data = lie[: end - 12] + lie[end:]
    elif kind == "garbage":
        data = draw(st.binary(min_size=1, max_size=200))
    elif kind == "empty":
        data = b""
    target = draw(st.sampled_from(("-1", "0", None, "5", "x")))
    return FileSpec("fuzzdata.npy", "npy", data, target, explicit, kind, (kind,))


NPZ_KINDS = (
    "valid",
    "x_only",
    "y_mismatch",
    "single_array",
    "no_x_many_keys",
    "x_one_d",
    "x_object",
    "x_strings",
    "y_two_d",
    "nan",
    "truncated",
    "flipped",
    "garbage",
    "empty",
    "not_npy_member",
)


@st.composite
def npz_files(draw: Any, *, n_cols: int = 3) -> FileSpec:
    """``.npz`` archives: valid, with odd keys or arrays, corrupt or truncated."""
    import zipfile

    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    kind = draw(st.sampled_from(NPZ_KINDS))
    X = rng.uniform(-1, 1, size=(6, n_cols))
    y = rng.uniform(-1, 1, size=6)
    arrays: dict[str, Any] = {"X": X, "y": y}
    explicit = False
    if kind in ("x_only", "not_npy_member"):
        arrays = {"X": X} if kind == "x_only" else {"y": y}
    elif kind == "y_mismatch":
        arrays = {"X": X, "y": y[:4]}
    elif kind == "single_array":
        arrays = {"arr": np.column_stack([X, y])}
    elif kind == "no_x_many_keys":
        arrays = {"a": X, "b": y}
    elif kind == "x_one_d":
        arrays = {"X": X[:, 0], "y": y}
    elif kind == "x_object":
        arrays = {"X": X.astype(object), "y": y}
    elif kind == "x_strings":
        arrays = {"X": X.astype(str), "y": y}
    elif kind == "y_two_d":
        arrays = {"X": X, "y": np.column_stack([y, y])}
    elif kind == "nan":
        X[0, 0] = np.nan
        explicit = True
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for key, value in arrays.items():
            zf.writestr(key + ".npy", _npy_bytes(value, allow_pickle=kind == "x_object"))
        if kind == "not_npy_member":
            zf.writestr("X.npy", b"not an array at all")
    data = buffer.getvalue()
    if kind == "truncated":
        data = data[: draw(st.integers(0, len(data) - 1))]
    elif kind == "flipped":
        i = draw(st.integers(0, len(data) - 1))
        data = data[:i] + bytes([data[i] ^ 0xFF]) + data[i + 1 :]
    elif kind == "garbage":
        data = draw(st.binary(min_size=1, max_size=200))
    elif kind == "empty":
        data = b""
    target = draw(st.sampled_from((None, "y", "X", "nope", "0")))
    return FileSpec("fuzzdata.npz", "npz", data, target, explicit, kind, (kind,))


@st.composite
def odd_paths(draw: Any) -> FileSpec:
    """A folder where a file is expected, a missing file, a file of unknown format."""
    kind = draw(st.sampled_from(("dir", "missing", "unknown_suffix", "no_suffix")))
    name = draw(
        st.sampled_from(
            ("fuzzdata.csv", "fuzzdata.npy", "fuzzdata.svm", "fuzzdata.npz", "fuzzdata.csv.gz")
        )
    )
    if kind == "unknown_suffix":
        return FileSpec("fuzzdata.pdf", kind, b"a,b,y\n1,2,3\n", "y", False, kind)
    if kind == "no_suffix":
        return FileSpec("fuzzdata", kind, b"a,b,y\n1,2,3\n", "y", False, kind)
    return FileSpec(name, kind, None, "y", False, kind)


def file_expectations(spec: FileSpec, outcome: Outcome) -> Outcome:
    """What a file's defects demand beyond a clear error: duplicate column names refused,
    a negative svmlight index reported as such (when the error is about the file: an
    invalid argument of the loader, such as ``n_features=-1``, is refused first)."""
    if outcome.kind == FAILURE or "broken-compression" in spec.tags:
        return outcome
    tags = set(spec.tags)
    if (
        outcome.kind == CORRECT
        and spec.kind == "csv"
        and tags & {"duplicate", "duplicate_target"}
        and not tags & {"garbage", "utf-16", "latin-1"}
    ):
        return Outcome(FAILURE, "duplicate column names accepted", spec.note)
    if (
        outcome.kind == CLEAR_ERROR
        and spec.kind == "svmlight"
        and "negative_index" in tags
        and spec.name in outcome.message  # an error about the file, not about an argument
        and not re.search(r"--target|target=", outcome.message)  # the target refused first
        and "negative" not in outcome.message.lower()
    ):
        return Outcome(
            FAILURE, "a negative feature index reported as another problem", outcome.detail
        )
    return outcome


def data_files(*, header_names: tuple[str, ...] = ("a", "b", "y")) -> st.SearchStrategy[FileSpec]:
    """Data files of every supported format, valid or broken, and odd paths."""
    return st.one_of(
        csv_files(header_names=header_names),
        svmlight_files(),
        npy_files(n_cols=len(header_names)),
        npz_files(n_cols=len(header_names) - 1),
        odd_paths(),
    )


def good_csv(path: Path, n_rows: int = 30, seed: int = 0) -> Path:
    """A small valid CSV file ``a,b,y`` (``y`` a smooth function of ``a`` and ``b``)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n_rows, 2))
    y = np.sin(2 * X[:, 0]) + X[:, 1]
    lines = [
        "a,b,y",
        *(f"{a:.6f},{b:.6f},{t:.6f}" for a, b, t in zip(X[:, 0], X[:, 1], y, strict=True)),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def leftover_temporaries(folder: Path) -> list[str]:
    """Temporary files left in ``folder`` (names ending in ``.tmp``, at any depth)."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*.tmp*"))
