"""One path for every array library in :mod:`kernelmaps.sampling`.

``kernel_block``, ``kernel_diagonal``, ``rpcholesky``, ``rpcholesky_indices`` and
``finish_landmarks`` are one function each over the rows' namespace: every check they make
(the rows' shape and dtype, the counts, the generator, the finiteness of the rows and of
the kernel's values, the round-off of the residual) refuses NumPy rows and rows of another
library with the very same message, and their results are arrays of the rows' library on
its device, with the pivots NumPy picks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import kernelmaps.sampling as sampling
from kernelmaps.exceptions import NonFiniteOutputError
from kernelmaps.kernels import Gaussian
from kernelmaps.sampling import (
    draw_landmarks,
    finish_landmarks,
    kernel_block,
    kernel_diagonal,
    resolve_landmarks,
    rpcholesky,
    rpcholesky_indices,
)
from kernelmaps.sampling._kernel_blocks import require_finite
from tests._array_api import PLACES, Place, assert_at, assert_close, dispatch, host


def _data(n: int = 120, d: int = 3) -> np.ndarray:
    return np.random.default_rng(0).normal(size=(n, d))


def _same_refusal(
    call: Callable[[Any], Any], X: np.ndarray, place: Place, error: type[Exception], match: str
) -> None:
    """``call(X)`` raises ``error`` with the same message for NumPy rows and for the rows
    on ``place`` (``match`` in it)."""
    with pytest.raises(error, match=match) as on_numpy:
        call(X)
    with dispatch(), pytest.raises(error, match=match) as on_place:
        call(place.asarray(X))
    assert str(on_place.value) == str(on_numpy.value)


def _rpcholesky(X: Any, **kwargs: Any) -> Any:
    args = {"n_landmarks": 5, "kernel": Gaussian(gamma=0.5), "rng": np.random.default_rng(0)}
    return rpcholesky(X, **{**args, **kwargs})


@pytest.mark.parametrize("place", PLACES)
def test_rows_checked_alike(place: Place) -> None:
    _same_refusal(_rpcholesky, np.ones(4), place, ValueError, "Expected a 2D array of rows")
    _same_refusal(_rpcholesky, np.ones((0, 2)), place, ValueError, "at least one row")
    _same_refusal(
        lambda X: kernel_diagonal(Gaussian(), X), np.ones(3), place, ValueError, "2D array"
    )


@pytest.mark.parametrize("place", PLACES)
def test_counts_and_generator_checked_alike(place: Place) -> None:
    X = _data()
    _same_refusal(
        lambda A: _rpcholesky(A, n_landmarks=0), X, place, ValueError, "n_landmarks must be"
    )
    _same_refusal(
        lambda A: _rpcholesky(A, block_size=0), X, place, ValueError, "block_size must be"
    )
    legacy = np.random.RandomState(0)
    _same_refusal(lambda A: _rpcholesky(A, rng=legacy), X, place, TypeError, "rng must")
    _same_refusal(
        lambda A: rpcholesky_indices(A, 0, Gaussian(), 0), X, place, ValueError, "n_landmarks"
    )


def _exp_kernel(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """A callable without ``diag`` (run on the host for every library) that overflows."""
    return np.exp(A @ B.T)


@pytest.mark.parametrize("place", PLACES)
def test_kernel_overflow_refused_alike(place: Place) -> None:
    """A kernel whose ``k(x, x)`` overflows: the same message naming the largest value."""
    X = _data()
    X[3] = 1e3
    _same_refusal(
        lambda A: rpcholesky(A, 5, _exp_kernel, np.random.default_rng(0)),
        X,
        place,
        NonFiniteOutputError,
        r"landmarks='rpcholesky': k\(x, x\) has non-finite values",
    )
    _same_refusal(
        lambda A: kernel_diagonal(_exp_kernel, A),
        X,
        place,
        NonFiniteOutputError,
        r"kernel_diagonal: k\(x, x\) of row 3 is not finite",
    )


@pytest.mark.parametrize("place", PLACES)
def test_non_finite_values_refused_alike(place: Place) -> None:
    """The finiteness check of the kernel blocks and of the factor, on the values where
    they live (host or device): the same message for the same rows."""
    X, values = _data(), np.ones((4, 2))
    values[1, 1] = np.inf
    match = "landmarks='rpcholesky': the Cholesky factor has non-finite values"
    with pytest.raises(NonFiniteOutputError, match=match) as on_numpy:
        require_finite(values, "rpcholesky", X, "the Cholesky factor")
    with pytest.raises(NonFiniteOutputError, match=match) as on_place:
        require_finite(place.asarray(values), "rpcholesky", place.asarray(X), "the Cholesky factor")
    assert str(on_place.value) == str(on_numpy.value)
    require_finite(place.asarray(X), "rpcholesky", place.asarray(X), "X")  # finite: passes


@pytest.mark.parametrize("method", ["uniform", "kmeans", "leverage", "rpcholesky"])
@pytest.mark.parametrize("place", PLACES)
def test_non_finite_rows_refused_alike(place: Place, method: str) -> None:
    X = _data()
    X[:, 1] = np.nan
    draw = draw_landmarks(120, 3, np.float64, method, 5, kernel=Gaussian(), rng=_rng())
    _same_refusal(
        lambda rows: finish_landmarks(draw, rows, _rng()),
        X if draw.rows is None else X[draw.rows],
        place,
        ValueError,
        "The rows the landmarks are drawn from contain NaN or infinity",
    )


def _rng() -> np.random.Generator:
    return np.random.default_rng(4)


@pytest.mark.parametrize("block_size", [1, 100])
@pytest.mark.parametrize("place", PLACES)
def test_rpcholesky_one_path(place: Place, block_size: int) -> None:
    """The factor in the rows' library on their device, NumPy's pivots, the factor
    within rounding (float64 work on the device, as on NumPy)."""
    X = _data().astype(place.dtype)
    kernel = Gaussian(gamma=0.5)
    expected = rpcholesky(X, 12, kernel, np.random.default_rng(1), block_size=block_size)
    with dispatch():
        got = rpcholesky(
            place.asarray(X), 12, kernel, np.random.default_rng(1), block_size=block_size
        )
    assert isinstance(got.indices, np.ndarray)
    np.testing.assert_array_equal(got.indices, expected.indices)
    assert_at(got.factor, place)
    assert_close(got.factor, expected.factor, 1e-10, "factor")


@pytest.mark.parametrize("place", PLACES)
def test_round_off_residual_alike(place: Place) -> None:
    """Duplicate rows: the residual vanishes after the same pivots (one round-off
    tolerance), with the same warning and the same completion."""
    X = np.repeat(_data(6), 20, axis=0).astype(place.dtype)
    with pytest.warns(UserWarning, match="found only 6 of 10") as on_numpy:
        expected = rpcholesky_indices(X, 10, Gaussian(gamma=0.5), 2)
    with dispatch(), pytest.warns(UserWarning, match="found only 6 of 10") as on_place:
        got = rpcholesky_indices(place.asarray(X), 10, Gaussian(gamma=0.5), 2)
    np.testing.assert_array_equal(got, expected)
    assert str(on_place[0].message) == str(on_numpy[0].message)


@pytest.mark.parametrize("place", PLACES)
def test_kernel_block_and_diagonal_one_path(place: Place) -> None:
    """Arrays of another library give arrays of theirs in the working dtype (float64),
    with the values NumPy gives (rounded to the rows' dtype); a plain callable runs on
    the host."""
    X = _data(10).astype(place.dtype)
    kernel = Gaussian(gamma=0.5)
    with dispatch():
        K = kernel_block(kernel, place.asarray(X), place.asarray(X))
        D = kernel_diagonal(kernel, place.asarray(X))
        C = kernel_block(lambda A, B: A @ B.T, place.asarray(X), place.asarray(X))
    for result in (K, D, C):
        assert_at(result, place)
        assert result.dtype == place.xp.float64
    # the device's float64 kernel differs from NumPy's in the last bits only
    eps = float(np.finfo(place.dtype).eps) if place.dtype == "float32" else 0.0
    assert_close(K, kernel_block(kernel, X, X), 4 * eps + 1e-15, "kernel block")
    assert_close(D, kernel_diagonal(kernel, X), 1e-15, "diagonal")
    XXt = (X @ X.T).astype(np.float64)  # the callable's product, on the host either way
    tol = 4 * float(np.finfo(X.dtype).eps) * float(np.max(np.abs(XXt)))
    np.testing.assert_allclose(host(C), XXt, rtol=0, atol=tol)


@pytest.mark.parametrize("unique", [False, True])
@pytest.mark.parametrize("method", ["uniform", "kmeans", "leverage", "rpcholesky"])
@pytest.mark.parametrize("place", PLACES)
def test_finish_landmarks_one_path(place: Place, method: str, unique: bool) -> None:
    X = np.repeat(_data(60), 2, axis=0).astype(place.dtype)
    kernel = Gaussian(gamma=0.5)
    draw = draw_landmarks(120, 3, X.dtype, method, 8, kernel=kernel, rng=_rng(), unique=unique)
    rows = X if draw.rows is None else X[draw.rows]
    L, idx = finish_landmarks(draw, rows, _rng())
    with dispatch():
        L_place, idx_place = finish_landmarks(draw, place.asarray(rows), _rng())
    assert_at(L_place, place)
    assert L_place.dtype == getattr(place.xp, place.dtype)
    # rows of X (copies), or k-means centres computed on the host from the same rows
    tol = 4 * float(np.finfo(place.dtype).eps) * float(np.max(np.abs(X)))
    np.testing.assert_allclose(host(L_place), L, rtol=0, atol=tol)
    assert (idx is None and idx_place is None) or np.array_equal(idx, idx_place)


@pytest.mark.parametrize("place", PLACES)
def test_given_landmarks_of_another_library(place: Place) -> None:
    """Landmarks given as an array of another library are checked on the host, switch
    on or off, and come back to the rows' place."""
    X = _data()
    given = X[:4]
    L, _ = resolve_landmarks(X, place.asarray(given, "float64"), 4, rng=_rng())
    np.testing.assert_array_equal(L, given)
    with dispatch():
        L_place, _ = resolve_landmarks(
            place.asarray(X, "float64"), place.asarray(given, "float64"), 4, rng=_rng()
        )
    np.testing.assert_array_equal(host(L_place), L)


def test_the_array_twins_are_gone() -> None:
    for name in ("kernel_block_array", "rpcholesky_array", "rpcholesky_indices_array"):
        assert name not in sampling.__all__
        assert not hasattr(sampling, name)
    for name in ("kernel_block", "rpcholesky_indices"):
        assert name in sampling.__all__


@pytest.mark.parametrize("place", PLACES)
def test_integer_rows_taken_as_floats_alike(place: Place) -> None:
    X = np.arange(12).reshape(6, 2)
    expected = kernel_diagonal(Gaussian(gamma=0.1), X)
    with dispatch():
        got = kernel_diagonal(Gaussian(gamma=0.1), place.asarray(X))
    assert_at(got, place)
    np.testing.assert_array_equal(host(got), expected)
