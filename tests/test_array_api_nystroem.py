"""Nystroem and IKA on the arrays of other libraries: the same landmarks, features to rounding.

The random choices (uniform rows, k-means' sample and seed, leverage's recursion,
rpcholesky's pivots, IKA's sample, centres and frequencies) are drawn on the host with
the estimator's NumPy generator, so the landmarks are the rows the NumPy fit picks: the
tests ask for the same indices and the same landmark values, exactly.  The features
differ by rounding, bounded from the conditioning of the problem:

* Nystroem, ``z(x) = diag(w)^{-1/2} V^T k_m(x)``.  An eigensolver returns the eigenpairs
  of ``K_mm + E`` with ``|E|_2 <= m eps w_max`` (its backward error, ``p(m) = m``); to
  first order ``|dw_i| <= |E|`` and ``|dv_i| <= |E| / gap_i`` (``gap_i`` the distance
  from ``w_i`` to the other kept eigenvalues), so with ``|k_m(x)|_2 <= sqrt(m) k_max``

  .. math:: |dz_i| \\le 4 \\epsilon \\sqrt{m}\\, k_{max}\\, w_i^{-1/2}
            \\left(\\frac{m w_{max}}{gap_i} + \\frac{m w_{max}}{2 w_i} + 1\\right),

  the last term for the rounding of the kernel block itself; ``eps`` is the input
  dtype's (NumPy decomposes a float32 ``K_mm`` in float32).  The eigenvalues agree to
  ``|E| + m eps k_max`` (Weyl).
* IKA, ``psi(x) = b(x)^T C``.  The transform rounds ``b(x)`` in the input dtype,
  ``(n + 4) eps b_max`` per value, so ``|d psi| <= (n + 4) eps sqrt(n) b_max max|C_i| +
  eps |psi|``; the fit runs in float64 on both sides and adds the first-order error of
  the generalized eigenproblem, ``n eps_64 kappa(P) (lambda_max / gap + 1) |psi|``.
"""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np
import pytest
from sklearn.base import clone

from kernelmaps import IKA, Nystroem
from kernelmaps.exceptions import NonFiniteOutputError
from kernelmaps.kernels import Gaussian
from kernelmaps.sampling import rpcholesky_indices
from tests._array_api import (
    PLACES,
    Place,
    assert_at,
    assert_close,
    assert_fitted_at,
    dispatch,
    host,
)

M = 12


def _data(n: int = 240, d: int = 5) -> np.ndarray:
    return np.random.default_rng(0).normal(size=(n, d))


def _nystroem_tolerance(K_mm: np.ndarray, rank: int, k_max: float, eps: float) -> float:
    """The bound of the module docstring on ``|dz|`` from the float64 ``K_mm``."""
    w = np.linalg.eigvalsh(0.5 * (K_mm + K_mm.T))[::-1][:rank]
    m, w_max = K_mm.shape[0], float(w[0])
    gaps = np.array([np.min(np.abs(np.delete(w, i) - w[i]), initial=w_max) for i in range(rank)])
    per = w**-0.5 * (m * w_max / gaps + m * w_max / (2 * w) + 1.0)
    return 4.0 * eps * np.sqrt(m) * k_max * float(np.max(per))


def _ids(params: dict[str, Any]) -> str:
    landmarks = params.get("landmarks", "uniform")
    name = landmarks if isinstance(landmarks, str) else "given"
    return f"{name}-{params.get('kernel', 'rbf')}" + ("-scale" if "gamma" in params else "")


NYSTROEM_CASES: list[dict[str, Any]] = [
    {},
    {"gamma": "scale"},
    {"landmarks": "kmeans", "kernel": "laplacian"},
    {"landmarks": "leverage", "kernel": "matern", "kernel_params": {"nu": 2.5}},
    {"landmarks": "rpcholesky"},
    {"landmarks": "rpcholesky", "kernel": "cauchy"},
    {"landmarks": _data()[:7] + 0.1, "kernel": "poly", "degree": 2},
]


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("params", NYSTROEM_CASES, ids=_ids)
def test_nystroem_follows_x(place: Place, params: dict[str, Any]) -> None:
    X = _data().astype(place.dtype)
    ref = Nystroem(n_components=M, random_state=0, **params).fit(X)
    expected = ref.transform(X).astype(np.float64)
    with dispatch():
        est = Nystroem(n_components=M, random_state=0, **params).fit(place.asarray(X))
        Z = est.transform(place.asarray(X))
    assert_at(Z, place)
    assert Z.dtype == place.asarray(X).dtype
    assert_fitted_at(est, place)
    # the same landmarks: the same rows (indices), or the same centres (k-means on the host)
    if ref.component_indices_ is None:
        assert est.component_indices_ is None
    else:
        np.testing.assert_array_equal(host(est.component_indices_), ref.component_indices_)
    np.testing.assert_array_equal(host(est.components_), ref.components_)
    assert est.rank_ == ref.rank_
    L = ref.components_.astype(np.float64)
    K_mm, k_max = ref.kernel_(L), float(np.max(np.abs(ref.kernel_(X.astype(np.float64), L))))
    w_max = float(ref.eigenvalues_[0])
    assert_close(est.eigenvalues_, ref.eigenvalues_, 2 * M * place.eps * (w_max + k_max), "w")
    tol = _nystroem_tolerance(K_mm, ref.rank_, k_max, place.eps)
    assert_close(Z, expected, tol, "features")


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("landmarks", ["uniform", "leverage", "rpcholesky"])
def test_nystroem_precomputed_follows_x(place: Place, landmarks: str) -> None:
    X = _data()
    K = Gaussian(gamma=0.2)(X).astype(place.dtype)
    K_new = Gaussian(gamma=0.2)(X[:30] + 0.1, X).astype(place.dtype)
    ref = Nystroem("precomputed", n_components=M, landmarks=landmarks, random_state=0).fit(K)
    expected = ref.transform(K_new).astype(np.float64)
    with dispatch():
        est = Nystroem("precomputed", n_components=M, landmarks=landmarks, random_state=0)
        est.fit(place.asarray(K))
        Z = est.transform(place.asarray(K_new))
    assert_at(Z, place)
    assert_fitted_at(est, place)
    idx = ref.component_indices_
    np.testing.assert_array_equal(host(est.component_indices_), idx)
    K_mm = K[np.ix_(idx, idx)].astype(np.float64)
    tol = _nystroem_tolerance(K_mm, ref.rank_, 1.0, place.eps)
    assert_close(Z, expected, tol, "features")


@pytest.mark.parametrize("place", PLACES)
def test_nystroem_callable_kernel_runs_on_the_host(place: Place) -> None:
    """A kernel callable is written for NumPy arrays: it is called on host copies and its
    values moved to the device (the rest of the fit and the product stay there)."""
    X = _data()

    def kernel(A: np.ndarray, B: np.ndarray) -> np.ndarray:
        assert isinstance(A, np.ndarray) and isinstance(B, np.ndarray)
        return np.exp(-0.2 * ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1))

    ref = Nystroem(kernel, n_components=M, random_state=0).fit(X.astype(place.dtype))
    expected = ref.transform(X.astype(place.dtype)).astype(np.float64)
    with dispatch():
        est = Nystroem(kernel, n_components=M, random_state=0).fit(place.asarray(X))
        Z = est.transform(place.asarray(X))
    assert_at(Z, place)
    K_mm = kernel(ref.components_.astype(np.float64), ref.components_.astype(np.float64))
    assert_close(Z, expected, _nystroem_tolerance(K_mm, ref.rank_, 1.0, place.eps), "features")


@pytest.mark.parametrize("place", PLACES)
def test_nystroem_warns_on_the_device_as_on_the_host(place: Place) -> None:
    X = _data()
    with dispatch(), pytest.warns(UserWarning, match="negative eigenvalues"):
        Nystroem("sigmoid", gamma=0.5, coef0=-2.0, n_components=M, random_state=0).fit(
            place.asarray(X)
        )


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("block_size", [1, 7, 100])
@pytest.mark.parametrize("duplicated", [False, True], ids=["distinct", "duplicated"])
def test_rpcholesky_picks_numpys_pivots(place: Place, block_size: int, duplicated: bool) -> None:
    """The pivots are drawn on the host from the residual diagonal copied from the device;
    the device's float64 arithmetic differs from NumPy's in the last bits only, and its
    kernel values are rounded to the rows' dtype as NumPy's are, so the pivots are the
    same (exactly, for this data, in float32 too); rows repeated make the residual vanish
    early, with the same warning and the same uniform completion."""
    X = _data(300, 3).astype(place.dtype)
    if duplicated:
        X = np.repeat(X[:8], 30, axis=0)
    kernel = Gaussian(gamma=0.5)

    def warned() -> Any:
        return (
            pytest.warns(UserWarning, match="found only")
            if duplicated
            else contextlib.nullcontext()
        )

    with warned():
        expected = rpcholesky_indices(X, 20, kernel, 3, block_size=block_size)
    with dispatch(), warned():
        got = rpcholesky_indices(place.asarray(X), 20, kernel, 3, block_size=block_size)
    np.testing.assert_array_equal(got, expected)


IKA_CASES: list[dict[str, Any]] = [
    {},
    {"basis": "fourier"},
    {"basis": "relu", "centers": "kmeans", "kernel": "laplacian"},
    {"basis": "sigmoid", "centers": "rpcholesky"},
    {"gamma": "scale", "centers": "rpcholesky"},
]


def _ika_tolerance(
    ref: IKA, X: np.ndarray, eps: float, fit_eps: float = float(np.finfo(np.float64).eps)
) -> float:
    """The bound of the module docstring on ``|d psi|`` (``fit_eps``: the fit's dtype's)."""
    Y = X[ref.sample_indices_].astype(np.float64)
    B = ref._basis_values(Y)
    p = np.linalg.eigvalsh(B.T @ B / Y.shape[0])
    lam, n = ref.eigenvalues_, B.shape[1]
    gap = float(np.min(np.abs(np.diff(lam)), initial=lam[0]))
    Bx = ref._basis_values(X.astype(np.float64))
    psi = float(np.max(np.abs(Bx @ ref.coefficients_)))
    c_max = float(np.max(np.linalg.norm(ref.coefficients_, axis=0)))
    transform = (n + 4) * eps * np.sqrt(n) * float(np.max(np.abs(Bx))) * c_max + eps * psi
    fit = n * fit_eps * p[-1] / p[0] * (lam[0] / gap + 1) * psi
    return transform + fit


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize(
    "params", IKA_CASES, ids=lambda p: "-".join(map(str, p.values())) or "kernel"
)
def test_ika_follows_x(place: Place, params: dict[str, Any]) -> None:
    X = _data(300).astype(place.dtype)
    settings = {"n_components": 5, "n_basis": M, "random_state": 0, **params}
    ref = IKA(**settings).fit(X)
    expected = ref.transform(X).astype(np.float64)
    with dispatch():
        est = IKA(**settings).fit(place.asarray(X))
        Z = est.transform(place.asarray(X))
    assert_at(Z, place)
    assert Z.dtype == place.asarray(X).dtype
    assert_fitted_at(est, place)
    np.testing.assert_array_equal(host(est.sample_indices_), ref.sample_indices_)
    for name in ("centers_", "frequencies_", "offsets_"):
        if getattr(ref, name) is None:
            assert getattr(est, name) is None
        else:
            np.testing.assert_array_equal(host(getattr(est, name)), getattr(ref, name))
    assert est.basis_rank_ == ref.basis_rank_
    assert_close(Z, expected, _ika_tolerance(ref, X, place.eps), "features")


@pytest.mark.parametrize("place", PLACES)
def test_ika_basis_callable_runs_on_the_host(place: Place) -> None:
    X = _data(300)
    W = np.random.default_rng(1).normal(size=(X.shape[1], M))

    def basis(A: np.ndarray) -> np.ndarray:
        assert isinstance(A, np.ndarray)
        return np.tanh(A @ W)

    ref = IKA(n_components=5, basis=basis, random_state=0).fit(X.astype(place.dtype))
    expected = ref.transform(X.astype(place.dtype)).astype(np.float64)
    with dispatch():
        est = IKA(n_components=5, basis=basis, random_state=0).fit(place.asarray(X))
        Z = est.transform(place.asarray(X))
    assert_at(Z, place)
    assert_close(Z, expected, _ika_tolerance(ref, X.astype(place.dtype), place.eps), "features")


@pytest.mark.parametrize("place", PLACES)
def test_an_overflow_is_refused_on_the_device(place: Place) -> None:
    X = np.full((50, 3), 30.0) + _data(50, 3)
    for est in (
        Nystroem("exponential_dot_product", gamma=1.0, n_components=5, random_state=0),
        IKA("exponential_dot_product", gamma=1.0, n_components=3, n_basis=5, random_state=0),
    ):
        with dispatch(), pytest.raises(NonFiniteOutputError, match="overflowed"):
            est.fit(place.asarray(X))


@pytest.mark.parametrize("place", PLACES)
def test_nystroem_landmarks_given_on_the_device(place: Place) -> None:
    """Landmarks given as an array of X's library are checked on a host copy and used
    as the NumPy fit uses the same values."""
    X = _data().astype(place.dtype)
    L = X[:7] + 0.1
    ref = Nystroem(landmarks=L, random_state=0).fit(X)
    with dispatch():
        est = Nystroem(landmarks=place.asarray(L), random_state=0).fit(place.asarray(X))
        Z = est.transform(place.asarray(X))
    assert_fitted_at(est, place)
    np.testing.assert_array_equal(host(est.components_), ref.components_)
    K_mm = ref.kernel_(L.astype(np.float64))
    tol = _nystroem_tolerance(K_mm, ref.rank_, 1.0, place.eps)
    assert_close(Z, ref.transform(X).astype(np.float64), tol, "features")


def test_a_device_without_float64(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a device without float64 (Apple's MPS), simulated on array-api-strict: the fits
    compute in float32 and keep their float64 attributes in float32, with the same
    landmarks for this data and features within the bound of float32."""
    import kernelmaps._array_api
    import kernelmaps.kernels._argument
    import kernelmaps.sampling._kernel_blocks

    for module in (
        kernelmaps._array_api,
        kernelmaps.kernels._argument,
        kernelmaps.sampling._kernel_blocks,
    ):
        monkeypatch.setattr(module, "supports_float64", lambda xp, device: False)
    place = Place("array_api_strict", "float32")
    X = _data(300).astype(np.float32)
    for est in (
        Nystroem(n_components=M, landmarks="rpcholesky", gamma="scale", random_state=0),
        IKA(n_components=5, n_basis=M, centers="rpcholesky", random_state=0),
    ):
        ref = clone(est).fit(X)
        with dispatch():
            est.fit(place.asarray(X))
            Z = est.transform(place.asarray(X))
        assert est.eigenvalues_.dtype == place.xp.float32
        assert_fitted_at(est, place)
        if isinstance(est, Nystroem):
            np.testing.assert_array_equal(host(est.component_indices_), ref.component_indices_)
            L = ref.components_.astype(np.float64)
            tol = _nystroem_tolerance(ref.kernel_(L), ref.rank_, 1.0, place.eps)
        else:
            np.testing.assert_array_equal(host(est.centers_), ref.centers_)
            tol = _ika_tolerance(ref, X, place.eps, fit_eps=place.eps)  # a float32 fit
        assert_close(Z, ref.transform(X).astype(np.float64), tol, type(est).__name__)
