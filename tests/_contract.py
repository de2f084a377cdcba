"""The statistical contract of every feature map: the kernel it approximates and its bound.

Each :class:`Row` is one map configuration.  It names the exact kernel ``k`` the map
approximates (a :mod:`kernelmaps.kernels` object) and the guarantee it comes with:

* ``unbiased``: ``None`` when ``E[z(x) . z(y)] = k(x, y)`` over the map's randomness,
  otherwise the reason the map is out of the unbiasedness test.  The test averages the
  estimates of ``draw_R`` independent maps of ``draw_D`` features; the radius is the
  empirical Bernstein bound when one draw's estimate lies in an interval of length
  ``draw_range``, else median of means with the per-draw variance bound
  ``draw_variance``.
* ``radius``: the concentration radius of one map of ``concentration_D`` features, from
  a bound at failure probability ``DELTA`` (Hoeffding or Bernstein over independent
  units, or a deterministic or spectral guarantee), per pair of points; or
  ``no_concentration``, the reason there is none.
* ``wrong``: a kernel with a parameter off by a factor two (or a degree off by one),
  where the radius must be small enough to tell it from ``k`` on some pair: then a map
  computing that kernel would fail the test (the bound has teeth).

``tests/test_contract.py`` runs both tests over :data:`ROWS` and checks that every public
feature map has a row.  Every event is a pair ``i <= j`` of the row's points (diagonal
included), with a union bound over the pairs.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.linalg import hadamard
from scipy.special import hyp1f1

from kernelmaps import (
    IKA,
    AdditiveChi2Sampler,
    CompactRandomFeatures,
    Fastfood,
    Nystroem,
    RandomBinningFeatures,
    RandomFourierFeatures,
    RandomMaclaurinFeatures,
    SkewedChi2Sampler,
    StructuredOrthogonalFeatures,
    TensorSketch,
)
from kernelmaps.kernels import (
    AdditiveChi2,
    Cauchy,
    DotProductKernel,
    ExponentialDotProduct,
    Gaussian,
    HomogeneousPolynomial,
    Laplacian,
    MaclaurinKernel,
    Matern,
    Polynomial,
    SkewedChi2,
)

from ._bounds import DELTA, bernstein_radius, hoeffding_radius
from ._points import POINTS

#: Points in the ball of radius 0.66 (every Maclaurin series below converges there).
BALL = POINTS / 4.0
#: Non-negative points (histograms) for the chi-squared maps.
HIST = np.abs(POINTS)

Radius = Callable[["Row", Any, np.ndarray, np.ndarray, int], Any]


@dataclass(frozen=True)
class Row:
    id: str
    cls: type
    params: dict[str, Any]
    kernel: Callable[..., np.ndarray]
    X: np.ndarray
    size: str | None = "n_components"
    unbiased: str | None = None
    draw_D: int = 0
    draw_R: int = 1500
    draw_range: float | None = None
    draw_variance: Callable[[Any, np.ndarray], np.ndarray] | None = None
    concentration_D: int = 0
    radius: Radius | None = None
    no_concentration: str | None = None
    wrong: Callable[..., np.ndarray] | None = None
    #: whether the concentration radius, too, must tell ``wrong`` from ``k``
    concentration_teeth: bool = True
    #: whether the unbiasedness test of this row takes more than about 3 s (marked slow)
    slow_draws: bool = False

    def make(self, D: int, random_state: int) -> Any:
        params = dict(self.params)
        if self.size is not None:
            params[self.size] = D
        if "random_state" in self.cls().get_params():
            params["random_state"] = random_state
        return self.cls(**params)


# -- radii over independent units ------------------------------------------------------------


def hoeffding_units(unit_range: float, units: Callable[[int], int]) -> Radius:
    """``z(x) . z(y)`` is the mean of ``units(D)`` independent unit estimates, each of mean
    ``k(x, y)`` in an interval of length ``unit_range``: Hoeffding."""

    def radius(row: Row, est: Any, Z: np.ndarray, K: np.ndarray, n_events: int) -> float:
        return hoeffding_radius(units(row.concentration_D), unit_range, n_events)

    return radius


def hoeffding_odd_cos_sin(row: Row, est: Any, Z: np.ndarray, K: np.ndarray, n_events: int):
    """cos_sin with odd ``D``: ``(2/D) [sum of L = D // 2 cosines + cos(a) cos(b)]``, ``L + 1``
    independent terms each in an interval of length ``4 / D``: Hoeffding's general form
    ``eps = sqrt(log(2 n / delta) sum(range^2) / 2)``."""
    D = row.concentration_D
    sum_sq = (D // 2 + 1) * (4.0 / D) ** 2
    return math.sqrt(math.log(2 * n_events / DELTA) * sum_sq / 2.0)


# -- random Maclaurin: exact one-feature variance and an almost sure bound --------------------

N_TERMS = 120  # terms of the series below; they converge geometrically on BALL


def _fourth_moment(x: np.ndarray, y: np.ndarray) -> float:
    """``E[(w . x)^2 (w . y)^2]`` for a Rademacher vector ``w``."""
    return float(x @ x * (y @ y) + 2 * (x @ y) ** 2 - 2 * np.sum(x**2 * y**2))


def _order_probability(n: int, p: float, min_order: int) -> float:
    return (p - 1.0) * p ** -(n - min_order + 1.0)


def one_feature_variance(
    kernel: DotProductKernel, x: np.ndarray, y: np.ndarray, p: float, min_order: int = 0
) -> float:
    """Exact variance of one random Maclaurin product ``T = z_i(x) z_i(y)`` (unscaled).

    ``E[T^2] = sum_n P[N = n] (a_n / P[N = n])^2 m^n`` with ``m`` the Rademacher fourth
    moment (independent vectors multiply); the mean is the part of the kernel of orders
    ``>= min_order``.
    """
    m, t = _fourth_moment(x, y), float(x @ y)
    second = mean = 0.0
    for n in range(min_order, N_TERMS):
        a = kernel.maclaurin_coefficient(n)
        second += a * a / _order_probability(n, p, min_order) * m**n
        mean += a * t**n
    return second - mean**2


def one_feature_deviation(
    kernel: DotProductKernel, x: np.ndarray, y: np.ndarray, p: float, min_order: int = 0
) -> float:
    """An almost sure bound on ``|T - E T|``: ``|w . x| <= |x|_1`` for Rademacher ``w``, so
    ``|T| <= max_n (a_n / P[N = n]) (|x|_1 |y|_1)^n``, and ``|E T| <= sum_n a_n |x.y|^n``."""
    c = float(np.abs(x).sum() * np.abs(y).sum())
    t = abs(float(x @ y))
    top = mean = 0.0
    for n in range(min_order, N_TERMS):
        a = kernel.maclaurin_coefficient(n)
        top = max(top, a / _order_probability(n, p, min_order) * c**n)
        mean += a * t**n
    return top + mean


def _pairwise(fn: Callable[[np.ndarray, np.ndarray], float], X: np.ndarray) -> np.ndarray:
    return np.array([[fn(x, y) for y in X] for x in X])


def _maclaurin_min_order(est: Any) -> int:
    return 2 if est.h01 else 0


def maclaurin_radius(row: Row, est: Any, Z: np.ndarray, K: np.ndarray, n_events: int):
    """The exact terms are exact; the rest is the mean of ``n_random_`` i.i.d. products of
    variance ``V`` (exact) deviating at most ``b`` from their mean: Bernstein."""
    lo = _maclaurin_min_order(est)
    V = _pairwise(lambda x, y: one_feature_variance(est.kernel_, x, y, est.p, lo), row.X)
    b = _pairwise(lambda x, y: one_feature_deviation(est.kernel_, x, y, est.p, lo), row.X)
    return bernstein_radius(est.n_random_, V, b, n_events)


def maclaurin_draw_variance(est: Any, X: np.ndarray) -> np.ndarray:
    lo = _maclaurin_min_order(est)
    V = _pairwise(lambda x, y: one_feature_variance(est.kernel_, x, y, est.p, lo), X)
    return V / est.n_random_


def crfm_draw_variance(est: Any, X: np.ndarray) -> np.ndarray:
    """Exact variance of the compact random features estimate (Gaussian projection).

    Given the up-projection ``a = z_L(x)``, ``b = z_L(y)``, the projection gives ``D``
    i.i.d. terms of mean ``a . b / D`` and conditional variance ``((a . b)^2 + |a|^2
    |b|^2) / D``; with ``V`` the one-feature variance, ``Var = V / L + (E[(a . b)^2] +
    E[|a|^2 |b|^2]) / D`` where ``E[(a . b)^2] = k^2 + V / L`` and ``E[|a|^2 |b|^2] =
    k(x, x) k(y, y) + (V + k^2 - k(x, x) k(y, y)) / L``.
    """
    V = _pairwise(lambda x, y: one_feature_variance(est.kernel_, x, y, est.p), X)
    K = est.kernel_(X)
    kk = np.outer(np.diag(K), np.diag(K))
    L, D = est.n_random_, est.n_components
    return V / L + (K**2 + V / L + kk + (V + K**2 - kk) / L) / D


def crfm_radius(row: Row, est: Any, Z: np.ndarray, K: np.ndarray, n_events: int):
    """Two stages, each at failure probability ``DELTA / 2``.

    Up-projection: ``a . b`` is the mean of ``L`` random Maclaurin products (Bernstein, as
    :func:`maclaurin_radius`), ``|a . b - k| <= r``, and so ``|a|^2 <= k(x, x) + r(x, x)``.
    Gaussian projection, given ``a, b``: ``(g . a)(g . b) = ((g . (a + b))^2 - (g . (a -
    b))^2) / 4`` and ``sum_j (g_j . u)^2 = |u|^2 chi^2_D``; Laurent & Massart (2000) give
    ``|chi^2_D / D - 1| <= 2 sqrt(x / D) + 2 x / D`` except with probability ``2 e^-x``,
    so ``|Z Z^T - a . b| <= (|a|^2 + |b|^2) / 2 (2 sqrt(x / D) + 2 x / D)`` with
    ``x = log(8 n_events / DELTA)`` (two chi-squares per pair).
    """
    V = _pairwise(lambda x, y: one_feature_variance(est.kernel_, x, y, est.p), row.X)
    b = _pairwise(lambda x, y: one_feature_deviation(est.kernel_, x, y, est.p), row.X)
    r_up = bernstein_radius(est.n_random_, V, b, n_events, DELTA / 2.0)
    sq = np.diag(K) + np.diag(r_up)
    D = est.n_components
    x = math.log(8.0 * n_events / DELTA)
    t = 2.0 * math.sqrt(x / D) + 2.0 * x / D
    return r_up + 0.5 * (sq[:, None] + sq[None, :]) * t


def tensor_sketch_draw_variance(est: Any, X: np.ndarray) -> np.ndarray:
    """``(2 + 3^p) |x|^(2p) |y|^(2p) / D`` (Avron, Nguyen & Woodruff 2014, Lemma 2), for a
    homogeneous polynomial of unit gamma."""
    degree = est.kernel_.degree
    sq = np.einsum("ij,ij->i", X, X) ** degree
    return (2 + 3**degree) * np.outer(sq, sq) / est.n_components


# -- SORF: its exact mean, by enumeration of the signs ----------------------------------------


def sorf_mean(X: np.ndarray, gamma: float, d: int) -> np.ndarray:
    """``E[z(x) . z(y)]`` of SORF with radial norms for the Gaussian kernel, exactly.

    One block's frequencies are ``w_i = r_i u_i``, ``u_i`` the rows of ``H D1 H D2 H D3 /
    d^1.5`` (unit vectors) and ``r_i ~ sqrt(2 gamma) chi_d`` independent of them, so
    ``E cos(w_i . delta) = E_u 1F1(d / 2; 1 / 2; -gamma (u_i . delta)^2)`` (the real part
    of the characteristic function of ``chi_d``), averaged over the ``2^(3d)`` equally
    likely sign patterns and the ``d`` rows.
    """
    n, n_features = X.shape
    P = np.zeros((n, d))
    P[:, :n_features] = X
    delta = P[:, None, :] - P[None, :, :]
    H = hadamard(d).astype(np.float64)
    signs = np.array(list(itertools.product((-1.0, 1.0), repeat=d)))
    HS = H[None, :, :] * signs[:, None, :]  # H diag(s), every s
    total = np.zeros((n, n))
    for A in HS:
        M = np.einsum("ij,sjk->sik", A, HS)
        M = np.einsum("sij,tjk->stik", M, HS).reshape(-1, d, d) / d**1.5
        proj = np.einsum("abk,mik->mabi", delta, M)
        total += hyp1f1(d / 2.0, 0.5, -gamma * proj**2).mean(axis=(0, 3))
    return total / len(HS)


def sorf_radius(row: Row, est: Any, Z: np.ndarray, K: np.ndarray, n_events: int):
    """Blocks are independent, each block's estimate (the mean of ``d`` cosines) lies in
    [-1, 1] and has mean :func:`sorf_mean`: Hoeffding around that mean, plus its exact
    distance to ``k`` (SORF's bias)."""
    mean = sorf_mean(row.X, est.kernel_.gamma, est.padded_dim_)
    return hoeffding_radius(est.n_blocks_, 2.0, n_events) + np.abs(mean - K)


# -- deterministic and spectral guarantees -----------------------------------------------------


def additive_chi2_radius(row: Row, est: Any, Z: np.ndarray, K: np.ndarray, n_events: int):
    """Deterministic: ``|z(x) . z(y) - k(x, y)| <= error_bound_ sum_i sqrt(x_i y_i)`` (the
    truncation and sampling error of the spectrum, per coordinate), plus float64 round-off
    of the sums (1e-12, far above ``n eps`` times the largest term here)."""
    root = np.sqrt(row.X)
    return est.error_bound_ * (root @ root.T) + 1e-12


def nystroem_radius(row: Row, est: Any, Z: np.ndarray, K: np.ndarray, n_events: int):
    """Deterministic: ``E = K - Z Z^T`` is positive semi-definite for any landmarks (a
    projection in feature space), so ``|E_ij| <= sqrt(E_ii E_jj)``.  Round-off of the
    eigendecomposition makes ``E + tol I`` PSD with ``tol = 1e-8 n max|K|``."""
    tol = 1e-8 * K.shape[0] * float(np.abs(K).max())
    r = np.diag(K) - np.einsum("ij,ij->i", Z, Z) + tol
    return np.sqrt(np.outer(r, r))


def ika_radius(row: Row, est: Any, Z: np.ndarray, K: np.ndarray, n_events: int):
    """Spectral: with every sample point a basis centre, ``Z Z^T`` is the truncated
    eigendecomposition of ``K`` (``P = K^2 / S``, ``M = K^3 / S^2``), so every entry of
    ``K - Z Z^T`` is at most its spectral norm ``lambda_(m+1)(K)``; plus round-off of the
    generalized eigenproblem, ``1e-8 n max|K|``."""
    m = est.n_components
    lam = np.linalg.eigvalsh(K)[::-1]
    return lam[m] + 1e-8 * K.shape[0] * float(np.abs(K).max())


# -- the table ---------------------------------------------------------------------------------

_QMC_OUT = (
    "the points of one quasi-Monte Carlo draw are dependent: no i.i.d. concentration bound "
    "applies; unbiasedness over independent randomizations is what is guaranteed"
)


#: A kernel given by its Maclaurin series only: sum_n (t / 4)^n.
_GEOMETRIC_SERIES = MaclaurinKernel(
    lambda n: 0.25**n, function=lambda t: 1.0 / (1.0 - t / 4.0), radius=4.0
)


def _mc_pairs(D: int) -> int:
    return D // 2


ROWS: list[Row] = [
    Row(
        "rff-mc-cos_sin-rbf",
        RandomFourierFeatures,
        {"kernel": Gaussian(gamma=0.5)},
        Gaussian(gamma=0.5),
        POINTS,
        draw_D=8,
        draw_range=2.0,  # the mean of D/2 cosines
        concentration_D=40_000,
        radius=hoeffding_units(2.0, _mc_pairs),  # a cos/sin pair gives cos(w . (x - y))
        wrong=Gaussian(gamma=1.0),
    ),
    Row(
        "rff-mc-cos_phase-laplacian",
        RandomFourierFeatures,
        {"kernel": Laplacian(gamma=0.5), "variant": "cos_phase"},
        Laplacian(gamma=0.5),
        POINTS,
        draw_D=8,
        draw_R=4000,
        draw_range=4.0,  # the mean of D products 2 cos(w.x + b) cos(w.y + b)
        concentration_D=80_000,
        radius=hoeffding_units(4.0, lambda D: D),
        wrong=Laplacian(gamma=1.0),
    ),
    Row(
        "rff-mc-cos_sin-odd-cauchy",
        RandomFourierFeatures,
        {"kernel": Cauchy(gamma=0.8)},
        Cauchy(gamma=0.8),
        POINTS,
        draw_D=9,
        draw_R=3000,
        draw_range=4.0 * 5 / 9,  # (2/9) (4 cosines + cos(a) cos(b))
        concentration_D=40_001,
        radius=hoeffding_odd_cos_sin,
        wrong=Cauchy(gamma=1.6),
        slow_draws=True,
    ),
    Row(
        "rff-orthogonal-matern2.5",
        RandomFourierFeatures,
        {"kernel": Matern(nu=2.5, gamma=0.5), "sampler": "orthogonal"},
        Matern(nu=2.5, gamma=0.5),
        POINTS,
        draw_D=6,  # one block of d = 3 orthogonal frequencies
        draw_R=3000,
        draw_range=2.0,
        concentration_D=24_000,
        # blocks of d = 3 frequencies are independent, each block's mean of cosines in [-1, 1]
        radius=hoeffding_units(2.0, lambda D: D // 6),
        wrong=Matern(nu=2.5, gamma=1.0),
        slow_draws=True,
    ),
    Row(
        "rff-sobol-shift-rbf",
        RandomFourierFeatures,
        {"kernel": Gaussian(gamma=0.5), "sampler": "sobol", "scramble": "shift", "rotate": False},
        Gaussian(gamma=0.5),
        POINTS,
        draw_D=16,
        draw_range=2.0,
        no_concentration=_QMC_OUT,
        wrong=Gaussian(gamma=1.0),
    ),
    Row(
        "rff-sobol-shift-rotated-matern1.5",
        RandomFourierFeatures,
        {"kernel": Matern(nu=1.5, gamma=0.2), "sampler": "sobol", "scramble": "shift"},
        Matern(nu=1.5, gamma=0.2),
        POINTS,
        draw_D=16,
        draw_R=3000,
        draw_range=2.0,
        no_concentration=_QMC_OUT,
        wrong=Matern(nu=1.5, gamma=0.4),
        slow_draws=True,
    ),
    Row(
        "rff-sobol-owen-rotated-rbf",
        RandomFourierFeatures,
        {"kernel": Gaussian(gamma=0.2), "sampler": "sobol", "scramble": True, "rotate": True},
        Gaussian(gamma=0.2),
        POINTS,
        draw_D=16,
        draw_range=2.0,
        no_concentration=_QMC_OUT,
        wrong=Gaussian(gamma=0.4),
        slow_draws=True,
    ),
    Row(
        "rff-halton-rotated-matern2.5",
        RandomFourierFeatures,
        {"kernel": Matern(nu=2.5, gamma=0.2), "sampler": "halton", "rotate": True},
        Matern(nu=2.5, gamma=0.2),
        POINTS,
        draw_D=16,
        draw_range=2.0,
        no_concentration=_QMC_OUT,
        wrong=Matern(nu=2.5, gamma=0.4),
        slow_draws=True,
    ),
    Row(
        "binning-laplacian",
        RandomBinningFeatures,
        {"kernel": Laplacian(gamma=0.5)},
        Laplacian(gamma=0.5),
        POINTS,
        size="n_grids",
        draw_D=4,
        draw_range=1.0,  # the mean of n_grids indicators "x and y share a bin"
        concentration_D=8000,
        radius=hoeffding_units(1.0, lambda D: D),
        wrong=Laplacian(gamma=1.0),
    ),
    Row(
        "fastfood-cos_sin-rbf",
        Fastfood,
        {"kernel": Gaussian(gamma=0.5)},
        Gaussian(gamma=0.5),
        POINTS,
        draw_D=8,  # one block of d = 4 (3 features padded)
        draw_range=2.0,
        concentration_D=2 * 4 * 50_000,
        # independent blocks (fresh B, Pi, G, r), every frequency with the spectral law
        radius=hoeffding_units(2.0, lambda D: D // 8),
        wrong=Gaussian(gamma=1.0),
    ),
    Row(
        "fastfood-cos_phase-matern1.5",
        Fastfood,
        {"kernel": Matern(nu=1.5, gamma=0.2), "variant": "cos_phase"},
        Matern(nu=1.5, gamma=0.2),
        POINTS,
        draw_D=8,  # two blocks
        draw_R=4000,
        draw_range=4.0,
        concentration_D=4 * 50_000,
        radius=hoeffding_units(4.0, lambda D: D // 4),
        wrong=Matern(nu=1.5, gamma=0.4),
        slow_draws=True,
    ),
    Row(
        "sorf-radial-rbf",
        StructuredOrthogonalFeatures,
        {"kernel": Gaussian(gamma=0.5)},
        Gaussian(gamma=0.5),
        POINTS,
        unbiased=(
            "biased: the rows of H D1 H D2 H D3 are not uniform on the sphere (Yu et al. "
            "2016); its exact mean is computed (sorf_mean) and its bias enters the radius"
        ),
        concentration_D=2 * 4 * 50_000,
        radius=sorf_radius,
        # no teeth check: at d = 4 the bias (up to 0.24 here) dominates the radius
    ),
    Row(
        "maclaurin-polynomial3",
        RandomMaclaurinFeatures,
        {"kernel": Polynomial(degree=3, gamma=1.0, coef0=1.0), "p": 2.0},
        Polynomial(degree=3, gamma=1.0, coef0=1.0),
        BALL,
        draw_D=500,
        draw_R=222,
        draw_variance=maclaurin_draw_variance,
        concentration_D=100_000,
        radius=maclaurin_radius,
        wrong=Polynomial(degree=3, gamma=2.0, coef0=1.0),
    ),
    Row(
        "maclaurin-h01-exponential",
        RandomMaclaurinFeatures,
        {"kernel": ExponentialDotProduct(gamma=1.0), "p": 3.0, "h01": True},
        ExponentialDotProduct(gamma=1.0),
        BALL,
        draw_D=500,
        draw_R=222,
        draw_variance=maclaurin_draw_variance,
        concentration_D=100_000,
        radius=maclaurin_radius,
        wrong=ExponentialDotProduct(gamma=2.0),
    ),
    Row(
        "maclaurin-series-1/(1-t/4)",
        RandomMaclaurinFeatures,
        {"kernel": _GEOMETRIC_SERIES, "p": 2.0},
        _GEOMETRIC_SERIES,
        BALL,
        draw_D=500,
        draw_R=222,
        draw_variance=maclaurin_draw_variance,
        concentration_D=100_000,
        radius=maclaurin_radius,
    ),
    Row(
        "crfm-polynomial2",
        CompactRandomFeatures,
        {"kernel": Polynomial(degree=2, gamma=1.0, coef0=1.0), "up_factor": 2},
        Polynomial(degree=2, gamma=1.0, coef0=1.0),
        BALL,
        draw_D=32,
        draw_R=444,
        draw_variance=crfm_draw_variance,
        concentration_D=2000,
        radius=crfm_radius,
        wrong=Polynomial(degree=2, gamma=2.0, coef0=1.0),
        # the chi-square bound at D = 2000 (the L x D projection is dense) is too wide
        # to tell gamma from 2 gamma; the unbiasedness test does
        concentration_teeth=False,
    ),
    Row(
        "tensor_sketch-homogeneous3",
        TensorSketch,
        {"kernel": HomogeneousPolynomial(3)},
        HomogeneousPolynomial(3),
        BALL * 1.5,
        draw_D=256,
        draw_R=222,
        draw_variance=tensor_sketch_draw_variance,
        no_concentration=(
            "only a variance bound is known for one sketch (Avron et al. 2014, Lemma 2); "
            "Chebyshev at DELTA would need D ~ 1e10: covered by the median of means over "
            "independent sketches of the unbiasedness test"
        ),
        wrong=HomogeneousPolynomial(2),
    ),
    Row(
        "skewed_chi2",
        SkewedChi2Sampler,
        {"skewedness": 0.5},
        SkewedChi2(skewedness=0.5),
        HIST,
        draw_D=8,
        draw_R=4000,
        draw_range=4.0,  # the mean of D products 2 cos(a) cos(b)
        concentration_D=40_000,
        radius=hoeffding_units(4.0, lambda D: D),
        wrong=SkewedChi2(skewedness=1.0),
    ),
    Row(
        "additive_chi2",
        AdditiveChi2Sampler,
        {"sample_steps": 2},
        AdditiveChi2(),
        HIST,
        size=None,
        unbiased="deterministic: a truncated and sampled spectrum, with a deterministic bound",
        radius=additive_chi2_radius,
    ),
    Row(
        "nystroem-uniform-rbf",
        Nystroem,
        {"kernel": Gaussian(gamma=0.5)},
        Gaussian(gamma=0.5),
        POINTS,
        unbiased="a projection: K - Z Z^T is PSD, so z(x) . z(x) <= k(x, x) (biased low)",
        concentration_D=3,
        radius=nystroem_radius,
    ),
    Row(
        "ika-all-centres-rbf",
        IKA,
        {"kernel": Gaussian(gamma=0.5), "n_basis": 6, "sample_size": 6},
        Gaussian(gamma=0.5),
        POINTS,
        unbiased="a truncated eigendecomposition: deterministic given the sample, biased",
        concentration_D=3,
        radius=ika_radius,
    ),
]
