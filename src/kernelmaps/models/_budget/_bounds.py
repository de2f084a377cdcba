"""How many features each bound asks for: the formulas of :func:`feature_budget`.

Every function returns the smallest count the bound guarantees, at failure probability
``delta``.  The random Fourier counts are output widths ``D`` of
:class:`~kernelmaps.RandomFourierFeatures` (``variant="cos_sin"``): ``L = D / 2``
frequencies, each giving a cosine and a sine weighted ``sqrt(2 / D)``, so that ``z(x) .
z(y) = (1 / L) sum_j cos(w_j . (x - y))``; the bounds are stated on ``L`` and doubled.  The
Nyström counts are numbers of landmarks ``m``.

``rff_pointwise``
    Hoeffding (Rahimi & Recht 2007): each ``cos(w_j . (x - y))`` lies in ``[-1, 1]`` (range
    2), so ``P(|z(x) . z(y) - k(x, y)| >= eps) <= 2 exp(-2 L eps^2 / 4) = 2 exp(-D eps^2 /
    4)``: ``L >= 2 ln(2 / delta) / eps^2``.
``rff_uniform``
    The covering argument of Rahimi & Recht 2007 (Claim 1) with the constants of Sutherland
    & Schneider 2015 (Proposition 1, the ``cos_sin`` form): over a set ``M`` of diameter
    ``l`` in ``R^d``, an ``r``-net of ``M - M`` has at most ``(4 l / r)^d`` points;
    Hoeffding at each (at ``eps / 2``) and Markov on the Lipschitz constant (``E L_f^2 <=
    sigma_p^2 = E |w|^2``) give ``P(sup |z(x) . z(y) - k| >= eps) <= 2 (4 l / r)^d
    exp(-D eps^2 / 16) + (2 r sigma_p / eps)^2``, whose minimum over ``r`` is ``C_d
    (sigma_p l / eps)^(2d / (d + 2)) exp(-D eps^2 / (8 (d + 2)))`` with ``C_d = (1 + 2 /
    d) d^(2 / (d + 2)) 64^(d / (d + 2))`` (at most 66, Sutherland & Schneider's constant);
    ``D`` solves it equal to ``delta`` (at least the pointwise ``D``).
``rff_spectral`` (Avron et al. 2017, Theorem 7)
    ``L >= (8 / 3) Delta^-2 (n / lambda) ln(16 s_lambda / delta)`` frequencies make ``Z Z^T
    + lambda I`` a ``Delta``-spectral approximation of ``K + lambda I``, ``(1 - Delta) (K +
    lambda I) <= Z Z^T + lambda I <= (1 + Delta) (K + lambda I)``, for ``Delta <= 1/2`` and
    ``|K|_2 >= lambda``; ``n / lambda`` bounds the ridge leverage function of a kernel with
    ``k(0) = 1``.  The theorem is for complex features ``exp(-i w . x)``; the real part of
    their ``Z Z^*`` is the ``cos_sin`` map's ``Z Z^T`` and satisfies the same inequalities
    on real vectors.
``rff_leverage_spectral`` (Avron et al. 2017, modified random Fourier features)
    Frequencies drawn from the ridge leverage function (whose integral is ``s_lambda``)
    need ``L >= (8 / 3) Delta^-2 s_lambda ln(16 s_lambda / delta)``: what an optimal
    sampler of frequencies needs, not a map of the library.
``nystroem_uniform``, ``nystroem_leverage``
    The same matrix Bernstein sampling bound, applied to the columns of ``K^{1/2}``
    (Nyström's columns), at ``Delta' = 1/2`` and ``lambda' = Delta lambda``: ``m >= (32 / 3)
    M ln(16 s_{lambda'} / delta)`` columns drawn with probabilities ``q_i`` such that
    ``tau_i(lambda') / q_i <= M`` give a ``1/2``-spectral approximation, and then the
    Nyström approximation of the columns drawn has ``0 <= K - K_m <= lambda' Delta' / (1 -
    Delta') I = Delta lambda I``, so ``K_m + lambda I`` is a ``Delta``-spectral (one-sided)
    approximation of ``K + lambda I``.  Ridge leverage scores ``tau_i`` (Alaoui & Mahoney
    2015; Musco & Musco 2017, Theorem 3, where the constant is left in ``O(.)``):
    ``M = s_{lambda'}``.  Uniform columns (Bach 2013; Rudi, Camoriano & Rosasco 2015):
    ``M = n max_i tau_i = d_inf <= min(n, n kappa^2 / lambda')``, ``kappa^2 = max k(x, x)``.
"""

from __future__ import annotations

import math

__all__ = [
    "nystroem_leverage",
    "nystroem_uniform",
    "rff_leverage_spectral",
    "rff_pointwise",
    "rff_spectral",
    "rff_uniform",
    "uniform_constant",
]


def _even(frequencies: float) -> int:
    """The output width ``D = 2 L`` of ``L = ceil(frequencies)`` frequencies (at least 2)."""
    return 2 * max(1, math.ceil(frequencies))


def _log16(s: float, delta: float) -> float:
    """``ln(16 s / delta)``, at least ``ln(16)`` (``s_lambda >= 1`` is assumed when smaller:
    the intrinsic dimension of the matrix Bernstein bound is at least 1)."""
    return math.log(16.0 * max(s, 1.0) / delta)


def rff_pointwise(epsilon: float, delta: float) -> int:
    """``D = 2 ceil(2 ln(2 / delta) / eps^2)`` (Hoeffding, one pair of points).

    Examples
    --------
    >>> from kernelmaps.models._budget._bounds import rff_pointwise
    >>> rff_pointwise(0.1, 0.05)
    1476
    """
    return _even(2.0 * math.log(2.0 / delta) / epsilon**2)


def uniform_constant(d: int) -> float:
    """``C_d = (1 + 2 / d) d^(2 / (d + 2)) 64^(d / (d + 2))`` of :func:`rff_uniform`.

    Examples
    --------
    >>> from kernelmaps.models._budget._bounds import uniform_constant
    >>> round(uniform_constant(1), 6), round(max(uniform_constant(d) for d in range(1, 999)), 1)
    (12.0, 66.0)
    """
    return (1.0 + 2.0 / d) * d ** (2.0 / (d + 2.0)) * 64.0 ** (d / (d + 2.0))


def rff_uniform(
    epsilon: float, delta: float, d: int, second_moment: float, diameter: float
) -> int | None:
    """``D`` with ``P(sup over the set |z(x) . z(y) - k| >= eps) <= delta``; None when
    ``E |w|^2`` is infinite (Laplacian kernel, Matérn with ``nu <= 1``).

    ``D = 8 (d + 2) / eps^2 ln(C_d (sigma_p l / eps)^(2d / (d + 2)) / delta)``, at least
    :func:`rff_pointwise`.

    Examples
    --------
    >>> from kernelmaps.models._budget._bounds import rff_uniform
    >>> rff_uniform(0.1, 0.05, 2, 4.0, 3.0)
    32670
    """
    if not math.isfinite(second_moment):
        return None
    ratio = math.sqrt(second_moment) * diameter / epsilon
    if ratio <= 0.0:
        return rff_pointwise(epsilon, delta)
    log_term = math.log(uniform_constant(d) / delta) + (2.0 * d / (d + 2.0)) * math.log(ratio)
    D = 8.0 * (d + 2.0) / epsilon**2 * log_term
    return max(_even(D / 2.0), rff_pointwise(epsilon, delta))


def rff_spectral(epsilon: float, delta: float, n: int, lam: float, s: float) -> int:
    """``D = 2 ceil((8 / 3) eps^-2 (n / lambda) ln(16 s_lambda / delta))`` (Avron et al.
    2017, Theorem 7, with ``Delta = eps``).

    Examples
    --------
    >>> from kernelmaps.models._budget._bounds import rff_spectral
    >>> rff_spectral(0.5, 0.1, 1000, 10.0, 20.0)
    17218
    """
    return _even(8.0 / 3.0 / epsilon**2 * (n / lam) * _log16(s, delta))


def rff_leverage_spectral(epsilon: float, delta: float, s: float) -> int:
    """``D = 2 ceil((8 / 3) eps^-2 s_lambda ln(16 s_lambda / delta))``: frequencies drawn
    from the ridge leverage function (Avron et al. 2017), a bound of the theory only.

    Examples
    --------
    >>> from kernelmaps.models._budget._bounds import rff_leverage_spectral
    >>> rff_leverage_spectral(0.5, 0.1, 20.0)
    3444
    """
    return _even(8.0 / 3.0 / epsilon**2 * s * _log16(s, delta))


def nystroem_uniform(delta: float, n: int, lam_nystroem: float, kappa2: float, s: float) -> int:
    """``m = ceil((32 / 3) min(n, n kappa^2 / lambda') ln(16 s_{lambda'} / delta))``
    uniform landmarks, ``lambda' = eps lambda`` (the module docstring).

    Examples
    --------
    >>> from kernelmaps.models._budget._bounds import nystroem_uniform
    >>> nystroem_uniform(0.1, 1000, 2.0, 1.0, 20.0)
    43045
    """
    d_inf = min(float(n), n * kappa2 / lam_nystroem)
    return max(1, math.ceil(32.0 / 3.0 * d_inf * _log16(s, delta)))


def nystroem_leverage(delta: float, s: float) -> int:
    """``m = ceil((32 / 3) s_{lambda'} ln(16 s_{lambda'} / delta))`` landmarks drawn by
    ridge leverage scores at ``lambda' = eps lambda``.

    Examples
    --------
    >>> from kernelmaps.models._budget._bounds import nystroem_leverage
    >>> nystroem_leverage(0.1, 20.0)
    1722
    """
    return max(1, math.ceil(32.0 / 3.0 * s * _log16(s, delta)))
