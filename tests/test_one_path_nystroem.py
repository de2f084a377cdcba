"""Nystroem and IKA: one function per check, the same message on every array library.

Each check of the merged fits (the landmark matrix ``K_mm`` finite and symmetric, its
eigendecomposition finite, its eigenvalues' warnings, IKA's sample matrix symmetric and
its basis Gram matrices finite) runs once on NumPy and once on array-api-strict, and the
two raise (or warn) with the identical text.  The helpers shared by the two maps (the
eigenvector signs, their order) give NumPy's answer on every library.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import array_api_strict
import numpy as np
import pytest

import kernelmaps.feature_maps._nystroem_normalization as normalization_module
from kernelmaps import IKA, Nystroem
from kernelmaps._array_api import to_numpy
from kernelmaps.exceptions import NonFiniteOutputError
from kernelmaps.feature_maps._nystroem_normalization import (
    check_symmetric,
    column_signs,
    decreasing_eigenvalues,
    leading_vectors,
    symmetric_normalization,
)
from tests._array_api import dispatch

STRICT_DEVICE = array_api_strict.Device("device1")


def _numpy(a: np.ndarray) -> np.ndarray:
    return a


def _strict(a: np.ndarray) -> Any:
    return array_api_strict.asarray(a, device=STRICT_DEVICE)


LIBRARIES = [pytest.param(_numpy, id="numpy"), pytest.param(_strict, id="strict")]


def _data(n: int = 40, d: int = 3) -> np.ndarray:
    return np.random.default_rng(0).normal(size=(n, d))


def _fit(estimator: Any, X: np.ndarray, place: Callable[[np.ndarray], Any]) -> Any:
    with dispatch():
        return estimator.fit(place(X))


@pytest.mark.parametrize("place", LIBRARIES)
def test_landmark_matrix_not_finite(place: Callable[[np.ndarray], Any]) -> None:
    K = np.eye(3)
    K[0, 1] = np.nan
    message = "Nystroem: the kernel matrix of the landmarks has non-finite entries; check"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}"):
        symmetric_normalization(place(K), None)


@pytest.mark.parametrize("place", LIBRARIES)
def test_landmark_matrix_not_symmetric(place: Callable[[np.ndarray], Any]) -> None:
    K = np.array([[1.0, 0.5], [0.4, 1.0]])
    message = (
        "Nystroem: the kernel matrix of the landmarks is not symmetric (max |K - K^T| = 0.1, "
        "max |K| = 1); the kernel must be a symmetric positive semidefinite function "
        "k(x, y) = k(y, x)."
    )
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        symmetric_normalization(place(K), None)


@pytest.mark.parametrize("place", LIBRARIES)
def test_landmark_matrix_symmetric_to_rounding(place: Callable[[np.ndarray], Any]) -> None:
    """One tolerance, ``max(1e-7, 100 eps)`` relative: 1e-7 in float64, 1.2e-5 in float32."""
    K = np.array([[1.0, 0.5], [0.5 + 5e-8, 1.0]])
    symmetric_normalization(place(K), None)
    with pytest.raises(ValueError, match="not symmetric"):
        symmetric_normalization(place(K + np.array([[0.0, 0.0], [1e-7, 0.0]])), None)
    K32 = np.array([[1.0, 0.5], [0.5 + 1e-5, 1.0]], dtype=np.float32)
    symmetric_normalization(place(K32), None)


@pytest.mark.parametrize("place", LIBRARIES)
def test_eigendecomposition_not_finite(
    place: Callable[[np.ndarray], Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The eigenvectors are checked finite on every library (one policy)."""
    real = normalization_module._symmetric_eigh

    def broken(K_mm: Any, eps: float, owner: str) -> tuple[Any, Any]:
        w, V = real(K_mm, eps, owner)
        return w, V * float("nan")

    monkeypatch.setattr(normalization_module, "_symmetric_eigh", broken)
    message = (
        "Nystroem.fit: the eigendecomposition of the kernel matrix of the landmarks "
        "returned non-finite values; pass float64 input or use fewer landmarks."
    )
    with pytest.raises(NonFiniteOutputError, match=f"^{re.escape(message)}$"):
        symmetric_normalization(place(np.diag([2.0, 1.0])), None)


@pytest.mark.parametrize("place", LIBRARIES)
def test_landmark_eigenvalue_warnings(place: Callable[[np.ndarray], Any]) -> None:
    message = (
        "Nystroem: the kernel matrix of the landmarks has negative eigenvalues (down to -1, "
        "largest 2); the kernel is not positive semidefinite. Their directions are dropped."
    )
    with pytest.warns(UserWarning, match=f"^{re.escape(message)}$"):
        _, w, rank = symmetric_normalization(place(np.diag([2.0, -1.0])), None)
    assert rank == 1
    # the eigenvalues of diag(2, -1), to the eigensolver's rounding (a few eps |K|)
    np.testing.assert_allclose(to_numpy(w), [2.0, -1.0], rtol=0, atol=8 * np.finfo(float).eps * 2)
    with pytest.warns(UserWarning, match="has no positive eigenvalue"):
        N, _, rank = symmetric_normalization(place(np.zeros((2, 2))), None)
    assert rank == 0 and not np.any(to_numpy(N))


@pytest.mark.parametrize("place", LIBRARIES)
def test_nystroem_kernel_not_symmetric(place: Callable[[np.ndarray], Any]) -> None:
    """A kernel callable with ``k(x, y) != k(y, x)``, refused by the one check."""
    estimator = Nystroem(lambda A, B: A @ (B + 1.0).T, n_components=5, random_state=0)
    with pytest.raises(ValueError, match=r"^Nystroem: the kernel matrix of the landmarks is not"):
        _fit(estimator, _data(), place)


@pytest.mark.parametrize("place", LIBRARIES)
def test_ika_sample_not_symmetric(place: Callable[[np.ndarray], Any]) -> None:
    estimator = IKA(lambda A, B: A @ (B + 1.0).T, n_components=3, n_basis=5, random_state=0)
    message = "IKA: the kernel matrix of the sample is not symmetric (max |K - K^T| = "
    with pytest.raises(ValueError, match=f"^{re.escape(message)}"):
        _fit(estimator, _data(), place)


@pytest.mark.parametrize("place", LIBRARIES)
def test_ika_basis_grams_overflow(place: Callable[[np.ndarray], Any]) -> None:
    """Finite basis values whose Gram matrix ``B^T B`` overflows: the same message."""
    estimator = IKA("linear", n_components=2, n_basis=4, basis="relu", random_state=0)
    message = (
        "IKA.fit: the Gram matrices of the basis (B^T B and B^T K B) overflow float64 for "
        "this data (largest basis value "
    )
    with pytest.raises(NonFiniteOutputError, match=f"^{re.escape(message)}"):
        _fit(estimator, np.abs(_data()) * 1e80, place)


@pytest.mark.parametrize("place", LIBRARIES)
def test_ika_kernel_overflow_on_the_sample(place: Callable[[np.ndarray], Any]) -> None:
    estimator = IKA(
        "exponential_dot_product",
        gamma=1.0,
        n_components=2,
        n_basis=4,
        basis="relu",
        random_state=0,
    )
    message = (
        "ExponentialDotProduct(gamma=1.0): the kernel matrix has non-finite values, the "
        "computation overflowed float64 for inputs up to |x| = 32; rescale the data"
    )
    with pytest.raises(NonFiniteOutputError, match=f"^{re.escape(message)}"):
        _fit(estimator, np.full((40, 3), 30.0) + _data(), place)


@pytest.mark.parametrize("place", LIBRARIES)
def test_ika_singular_basis_warns_alike(place: Callable[[np.ndarray], Any]) -> None:
    X = _data()
    W = np.random.default_rng(1).normal(size=(3, 2))

    def duplicated(A: np.ndarray) -> np.ndarray:
        B = np.tanh(A @ W)
        return np.hstack([B, B])

    message = "IKA: the basis Gram matrix P = B^T B / S is numerically singular (rank 2 of 4:"
    with pytest.warns(UserWarning, match=f"^{re.escape(message)}"):
        model = _fit(IKA(n_components=3, basis=duplicated, random_state=0), X, place)
    assert model.basis_rank_ == 2
    assert not np.any(to_numpy(model.coefficients_)[:, 2:])


@pytest.mark.parametrize("place", LIBRARIES)
def test_eigenvector_order_and_signs(place: Callable[[np.ndarray], Any]) -> None:
    """One order and one sign convention: NumPy's, whatever the library."""
    K = np.array([[2.0, 1.0, 0.0], [1.0, 2.0, 0.5], [0.0, 0.5, 1.0]])
    w, V = np.linalg.eigh(K)
    got_w, order = decreasing_eigenvalues(*(place(a) for a in (w, V)))
    np.testing.assert_array_equal(got_w, w[::-1])
    top = leading_vectors(place(V), order, 2)
    np.testing.assert_array_equal(to_numpy(top), V[:, ::-1][:, :2])
    signs = column_signs(top)
    pivots = np.take_along_axis(V[:, ::-1][:, :2], np.argmax(np.abs(V[:, ::-1][:, :2]), 0)[None], 0)
    np.testing.assert_array_equal(signs, np.sign(pivots[0]))
    assert column_signs(place(np.zeros((0, 2)))).tolist() == [1.0, 1.0]


def test_check_symmetric_tolerance() -> None:
    check_symmetric(9e-8, 1.0, float(np.finfo(np.float64).eps), "K")
    check_symmetric(1e-5, 1.0, float(np.finfo(np.float32).eps), "K")
    with pytest.raises(ValueError, match=r"^K is not symmetric"):
        check_symmetric(2e-7, 1.0, float(np.finfo(np.float64).eps), "K")
