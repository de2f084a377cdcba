"""NystroemKernelRidge (FALKON) and KernelRidge on the arrays of other libraries, and
NystroemKernelRidge's rows streamed to a device (``device=``).

Every fit is compared with the NumPy fit of the same data.  The tolerances are bounds on
the difference of two solutions of the same linear system, each computed with rounding
``u`` (the machine epsilon of the data's dtype) and stopped at its own residual:

* the kernel values carry a relative error ``e_k = (d + 4)(1 + s) u`` (``s`` the largest
  exponent ``gamma (|x|^2 + |l|^2)`` of the distance expansion, or ``gamma |x - l|_1``),
  sums of ``n`` nonnegative products a relative error ``n u``;
* a solve with system matrix ``H`` turns perturbations of ``H`` and of the right-hand side
  into an error ``|H^-1| (|dr| + |dH| |c|)`` (``kappa(H)`` times the relative ones);
* FALKON's conjugate gradient stops at a relative residual ``rho`` (``residual_``) of the
  preconditioned system, an ``H``-residual of at most ``kappa(B) rho |r|`` (``B`` the
  preconditioner); its recurrence drifts from the true residual by the rounding of the
  operator (and of the float64 preconditioner, ``m eps64 kappa(B)``) met at each of the
  ``n_iter`` iterations.

Every quantity is computed from the data in float64 on the host.  The data (80 rows in
a cube, 10 landmarks, ``gamma = 1``) and ``alpha = 1`` keep ``kappa(H)`` moderate (tens),
so that the bounds are small next to the solutions; they are worst cases (sums of ``n``
roundings, each met at every iteration), and the observed differences are orders of
magnitude inside them.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from kernelmaps import KernelRidge, NystroemKernelRidge
from kernelmaps.kernels import Gaussian, Laplacian
from kernelmaps.models._falkon._solver import FalkonPreconditioner, landmark_gram
from tests._array_api import (
    PLACES,
    Place,
    assert_at,
    assert_close,
    assert_fitted_at,
    dispatch,
    host,
    torch_test_device,
)

EPS64 = float(np.finfo(np.float64).eps)
ALPHA = 1.0
GAMMA = 1.0
KERNELS = {"rbf": Gaussian(gamma=GAMMA), "laplacian": Laplacian(gamma=GAMMA)}


def _data(n: int = 80, d: int = 3, targets: int = 1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.uniform(-1.5, 1.5, size=(n, d))
    Y = np.stack([np.sin(X[:, 0]) + 0.5 * np.cos(X[:, k % d]) for k in range(1, targets + 1)], 1)
    Y += 0.1 * rng.normal(size=Y.shape)
    return X, Y[:, 0] if targets == 1 else Y


def _landmarks(X: np.ndarray, m: int = 10) -> np.ndarray:
    """``m`` rows of ``X`` (a fixed draw), given as an array to every fit."""
    return X[np.sort(np.random.default_rng(1).choice(X.shape[0], m, replace=False))]


def _spread(kernel: Any, X: np.ndarray, L: np.ndarray) -> float:
    """The largest exponent whose rounding the kernel's evaluation carries."""
    if isinstance(kernel, Gaussian):
        sq = np.sum(X * X, 1)[:, None] + np.sum(L * L, 1)[None, :]
        return float(kernel.gamma * sq.max())
    return float(kernel.gamma * (np.abs(X).sum(1).max() + np.abs(L).sum(1).max()))


def _kernel_error(kernel: Any, X: np.ndarray, L: np.ndarray, u: float) -> float:
    """Relative error of one kernel value evaluated with rounding ``u``."""
    return (X.shape[1] + 4) * (1.0 + _spread(kernel, X, L)) * u


@dataclass(frozen=True)
class NystroemBound:
    """The exact Nystroem solution and what bounds a computed one's distance to it."""

    c: np.ndarray  # the exact solution, shape (m, t)
    K_nm: np.ndarray
    inv_norm: float  # |H^-1|_2
    H_norm: float
    r_norm: float  # |K_nm^T y|_2 (per target, the largest)
    abs_r_norm: float  # |K_nm^T |y||_2
    kappa_B: float

    def coef(self, residual: float, n_iter: int, u: float, e_k: float) -> float:
        """Bound on ``|c_computed - c|_2`` of a fit with that residual and rounding."""
        n, m = self.K_nm.shape
        dr = (n * u + e_k) * self.abs_r_norm + self.kappa_B * residual * self.r_norm
        dH = ((n + m) * u + 2 * e_k + m * EPS64 * self.kappa_B) * self.H_norm * (n_iter + 1)
        return self.inv_norm * (dr + 1.1 * dH * float(np.linalg.norm(self.c)))


def nystroem_bound(kernel: Any, X: np.ndarray, y: np.ndarray, L: np.ndarray) -> NystroemBound:
    K_nm, K_mm = kernel(X, L), kernel(L, L)
    Y = y.reshape(len(y), -1)
    H = K_nm.T @ K_nm + ALPHA * K_mm
    r = K_nm.T @ Y
    pre = FalkonPreconditioner(landmark_gram(kernel, L), X.shape[0], ALPHA)
    B = pre.apply(np.eye(L.shape[0]))
    return NystroemBound(
        c=np.linalg.solve(H, r),
        K_nm=K_nm,
        inv_norm=float(np.linalg.norm(np.linalg.inv(H), 2)),
        H_norm=float(np.linalg.norm(H, 2)),
        r_norm=float(np.linalg.norm(r, axis=0).max()),
        abs_r_norm=float(np.linalg.norm(K_nm.T @ np.abs(Y), axis=0).max()),
        kappa_B=float(np.linalg.cond(B)),
    )


def _prediction_tol(K_q: np.ndarray, c: np.ndarray, coef_tol: float, e_k: float, u: float) -> float:
    """Bound on the difference of two predictions ``K_q c`` whose coefficients differ by at
    most ``coef_tol`` (2-norm), each evaluated with rounding ``u``."""
    row = float(np.linalg.norm(K_q, axis=1).max())
    sizes = np.abs(K_q) @ np.abs(c.reshape(c.shape[0], -1))
    return (
        row * coef_tol
        + 2 * (e_k + K_q.shape[1] * u) * float(sizes.max())
        + u * float(np.abs(K_q @ c).max())
    )


def _fit_nystroem(X: Any, y: Any, L: np.ndarray, kernel: str, u: float, **params: Any) -> Any:
    # tol: what the working dtype attains (float32: about 1e-5, see the docstring)
    tol = 1e-5 if u > 1e-10 else 1e-12
    model = NystroemKernelRidge(
        kernel, gamma=GAMMA, landmarks=L, alpha=ALPHA, tol=tol, max_iter=200, **params
    )
    return model.fit(X, y)


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("kernel", ["rbf", "laplacian"])
def test_nystroem_ridge_follows_x(place: Place, kernel: str) -> None:
    X, y = _data()
    X = X.astype(place.dtype)
    L = _landmarks(X)
    expected = _fit_nystroem(X, y, L, kernel, place.eps)
    with dispatch():
        model = _fit_nystroem(place.asarray(X), place.asarray(y), L, kernel, place.eps)
        pred = model.predict(place.asarray(X))
    assert_fitted_at(model, place)
    assert_at(pred, place)
    assert pred.dtype == place.asarray(X).dtype and tuple(pred.shape) == (X.shape[0],)
    assert model.converged_ and expected.converged_

    k = KERNELS[kernel]
    X64, L64 = X.astype(np.float64), L.astype(np.float64)
    bound = nystroem_bound(k, X64, y, L64)
    e_k = _kernel_error(k, X64, L64, place.eps)
    coef_tol = bound.coef(model.residual_, model.n_iter_, place.eps, e_k) + bound.coef(
        expected.residual_, expected.n_iter_, place.eps, e_k
    )
    assert_close(model.dual_coef_, expected.dual_coef_, coef_tol, "dual_coef_")
    assert_close(model.landmarks_, L, 0.0, "landmarks_")
    pred_tol = _prediction_tol(bound.K_nm, bound.c, coef_tol, e_k, place.eps)
    assert_close(pred, expected.predict(X).astype(np.float64), pred_tol, "predictions")
    # the bound is meaningful: small next to the solution
    assert coef_tol < 0.1 * float(np.abs(bound.c).max())


@pytest.mark.parametrize("place", PLACES)
def test_nystroem_ridge_several_targets_and_uniform_landmarks(place: Place) -> None:
    X, Y = _data(targets=2)
    X = X.astype(place.dtype)
    params = {"n_components": 10, "gamma": GAMMA, "alpha": ALPHA, "random_state": 0}
    params["tol"] = 1e-5 if place.dtype == "float32" else 1e-12
    expected = NystroemKernelRidge(**params).fit(X, Y)
    with dispatch():
        model = NystroemKernelRidge(**params).fit(place.asarray(X), place.asarray(Y))
        pred = model.predict(place.asarray(X))
    assert_fitted_at(model, place)
    assert_at(pred, place)
    # the same draws on the host: the same landmarks
    np.testing.assert_array_equal(host(model.landmark_indices_), expected.landmark_indices_)
    assert_close(model.landmarks_, expected.landmarks_.astype(np.float64), 0.0, "landmarks_")
    X64, L64 = X.astype(np.float64), expected.landmarks_.astype(np.float64)
    k = KERNELS["rbf"]
    bound = nystroem_bound(k, X64, Y, L64)
    e_k = _kernel_error(k, X64, L64, place.eps)
    coef_tol = bound.coef(model.residual_, model.n_iter_, place.eps, e_k) + bound.coef(
        expected.residual_, expected.n_iter_, place.eps, e_k
    )
    assert_close(model.dual_coef_, expected.dual_coef_, coef_tol, "dual_coef_")
    assert tuple(pred.shape) == Y.shape


@pytest.mark.parametrize("place", PLACES)
def test_failed_device_factorization_gives_the_numpy_error(place: Place) -> None:
    X, y = _data(40)
    X = X.astype(place.dtype)

    def negative(A: Any, B: Any) -> Any:  # not positive semi-definite
        return -(A @ B.T)

    params = {"kernel": negative, "landmarks": _landmarks(X, 8), "alpha": ALPHA}
    with pytest.raises(ValueError, match="K_mm is not positive semi-definite") as on_host:
        NystroemKernelRidge(**params).fit(X, y)
    with dispatch(), pytest.raises(ValueError) as on_device:
        NystroemKernelRidge(**params).fit(place.asarray(X), place.asarray(y))
    assert str(on_device.value) == str(on_host.value)


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("kernel", ["rbf", "laplacian"])
@pytest.mark.parametrize("targets", [1, 2])
def test_kernel_ridge_follows_x(place: Place, kernel: str, targets: int) -> None:
    X, y = _data(80, targets=targets)
    X = X.astype(place.dtype)
    expected = KernelRidge(kernel, gamma=GAMMA, alpha=ALPHA).fit(X, y)
    with dispatch():
        model = KernelRidge(kernel, gamma=GAMMA, alpha=ALPHA).fit(
            place.asarray(X), place.asarray(y)
        )
        pred = model.predict(place.asarray(X))
    assert_fitted_at(model, place)
    assert_at(pred, place)
    assert pred.dtype == place.asarray(X).dtype
    assert_close(model.X_fit_, X.astype(np.float64), 0.0, "X_fit_")

    # K in float64 (from X in its dtype) on both sides: e_K relative on each entry, the
    # float32 rounding of NumPy's K for float32 input; a backward-stable Cholesky solve
    k = KERNELS[kernel]
    X64 = X.astype(np.float64)
    K = k(X64, X64)
    A = K + ALPHA * np.eye(len(X))
    c = np.linalg.solve(A, y)
    e_K = place.eps + _kernel_error(k, X64, X64, EPS64)
    dA = e_K * np.linalg.norm(K, 2) + 3 * len(X) * EPS64 * np.linalg.norm(A, 2)
    coef_tol = 2 * float(np.linalg.norm(np.linalg.inv(A), 2)) * 1.1 * dA * float(np.linalg.norm(c))
    assert_close(model.dual_coef_, expected.dual_coef_, coef_tol, "dual_coef_")
    pred_tol = _prediction_tol(K, c, coef_tol, e_K, place.eps)
    assert_close(pred, expected.predict(X).astype(np.float64), pred_tol, "predictions")
    assert coef_tol < 1e-3 * float(np.abs(c).max())


@pytest.mark.parametrize("place", PLACES)
def test_kernel_ridge_indefinite_kernel_falls_back_on_the_host(place: Place) -> None:
    X, y = _data(30)
    X = X.astype(place.dtype)

    def indefinite(A: Any, B: Any) -> Any:
        return -(A @ B.T)

    with pytest.warns(UserWarning, match="negative eigenvalues") as on_host:
        KernelRidge(indefinite, alpha=1e-3).fit(X, y)
    with dispatch(), pytest.warns(UserWarning, match="negative eigenvalues") as on_device:
        model = KernelRidge(indefinite, alpha=1e-3).fit(place.asarray(X), place.asarray(y))
        pred = model.predict(place.asarray(X))
    assert str(on_device[0].message) == str(on_host[0].message)
    assert_fitted_at(model, place)
    assert_at(pred, place)


# -- device=: NumPy rows streamed to a device ----------------------------------------------

STREAM_DEVICES = [
    pytest.param(
        "torch-cpu",
        id="torch-cpu",
        marks=pytest.mark.torch,
    ),
    pytest.param("strict-device1", id="strict-device1"),
]


def _device(name: str) -> Any:
    if name == "torch-cpu":  # the torch tests' device ($KERNELMAPS_TEST_TORCH_DEVICE)
        pytest.importorskip("torch")
        return torch_test_device()
    import array_api_strict

    return array_api_strict.Device("device1")


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Blocks of at most 25 rows; the rows of every block copied to the device."""
    import kernelmaps._streamed_rows as streamed

    copied: list[int] = []
    copy = streamed.copy_to_device

    def counted(block: Any, xp: Any, device: Any, *consumer: Any) -> Any:
        if np.ndim(block) == 2:
            copied.append(int(block.shape[0]))
        return copy(block, xp, device, *consumer)

    monkeypatch.setattr(streamed, "_MAX_BLOCK_ROWS", 25)
    monkeypatch.setattr(streamed, "copy_to_device", counted)
    return copied


def _check_streamed(model: Any, expected: Any, X: np.ndarray, y: np.ndarray, u: float) -> None:
    """The streamed fit's arrays are NumPy and equal the in-memory fit's to rounding."""
    for name in ("landmarks_", "dual_coef_", "landmark_indices_"):
        assert isinstance(getattr(model, name), np.ndarray), name
    np.testing.assert_array_equal(model.landmarks_, expected.landmarks_)
    assert model.n_cached_rows_ == 0
    k = KERNELS["rbf"]
    X64, L64 = X.astype(np.float64), expected.landmarks_.astype(np.float64)
    bound = nystroem_bound(k, X64, y, L64)
    e_k = _kernel_error(k, X64, L64, u)
    coef_tol = bound.coef(model.residual_, model.n_iter_, u, e_k) + bound.coef(
        expected.residual_, expected.n_iter_, u, e_k
    )
    assert_close(model.dual_coef_, expected.dual_coef_, coef_tol, "dual_coef_")
    pred = model.predict(X)
    assert isinstance(pred, np.ndarray) and pred.dtype == X.dtype
    pred_tol = _prediction_tol(bound.K_nm, bound.c, coef_tol, e_k, u)
    assert_close(pred, expected.predict(X).astype(np.float64), pred_tol, "predictions")


@pytest.mark.parametrize("device", STREAM_DEVICES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_streamed_fit_equals_the_in_memory_fit(
    device: str, dtype: str, small_blocks: list[int]
) -> None:
    X, y = _data()
    X = X.astype(dtype)
    u = float(np.finfo(dtype).eps)
    params = {"n_components": 10, "gamma": GAMMA, "alpha": ALPHA, "random_state": 0}
    params["tol"] = 1e-5 if dtype == "float32" else 1e-12
    expected = NystroemKernelRidge(**params).fit(X, y)
    small_blocks.clear()
    model = NystroemKernelRidge(**params, device=_device(device)).fit(X, y)
    # every pass copies the 80 rows in 4 blocks (the first pass with the targets)
    assert max(small_blocks) == 25 and len(small_blocks) == 4 * (model.n_iter_ + 1)
    _check_streamed(model, expected, X, y, u)


@pytest.mark.dask
@pytest.mark.parametrize("device", STREAM_DEVICES)
def test_streamed_dask_rows(device: str, small_blocks: list[int]) -> None:
    da = pytest.importorskip("dask.array")
    X, y = _data()
    params = {"n_components": 10, "gamma": GAMMA, "alpha": ALPHA, "tol": 1e-12, "random_state": 0}
    expected = NystroemKernelRidge(**params).fit(X, y)
    model = NystroemKernelRidge(**params, device=_device(device))
    model.fit(da.from_array(X, chunks=37), da.from_array(y, chunks=37))
    assert len(small_blocks) == 4 * (model.n_iter_ + 1)
    _check_streamed(model, expected, X, y, EPS64)


@pytest.mark.dask
def test_streamed_rows_check_their_values() -> None:
    da = pytest.importorskip("dask.array")
    X, y = _data()
    X[50, 1] = np.nan
    model = NystroemKernelRidge(n_components=10, random_state=0, device=_device("strict-device1"))
    with pytest.raises(ValueError, match="NaN") as streamed:
        model.fit(da.from_array(X, chunks=37), y)
    with pytest.raises(ValueError, match="NaN") as in_dask:
        NystroemKernelRidge(n_components=10, random_state=0).fit(da.from_array(X, chunks=37), y)
    assert str(streamed.value) == str(in_dask.value)


def test_device_none_changes_nothing_and_a_bad_device_is_refused() -> None:
    X, y = _data(40)
    params = {"n_components": 10, "random_state": 0}
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        a = NystroemKernelRidge(**params).fit(X, y)
        b = NystroemKernelRidge(**params, device=None).fit(X, y)
    np.testing.assert_array_equal(a.dual_coef_, b.dual_coef_)
    with pytest.raises(ValueError, match="device"):
        NystroemKernelRidge(**params, device="no-such-device").fit(X, y)
