"""The statistical dimension ``s_lambda = tr(K (K + lambda I)^{-1})`` of a kernel matrix,
estimated on a uniform sample of the rows by randomly pivoted Cholesky, with an interval.

Convention.  ``alpha`` is the ridge penalty of :class:`~kernelmaps.models.FeatureRidge` and
:class:`~kernelmaps.models.KernelRidge`: the problem ``min sum_i (y_i - f(x_i))^2 +
alpha |f|^2`` over the ``n`` rows of ``X``, whose solution solves ``(K + alpha I) c = y``
with ``K`` the ``n x n`` kernel matrix.  That is the ``K + lambda I`` of Avron et al. (2017),
so ``lambda = alpha`` and ``s_lambda = tr(K (K + alpha I)^{-1}) = sum_i mu_i / (mu_i +
alpha)``, ``mu_i`` the eigenvalues of ``K``.  It grows with ``n`` at a fixed ``alpha``.

Sample.  From ``n_s`` rows drawn uniformly without replacement, ``K_{n_s}``'s eigenvalues
``nu_i`` approximate ``n_s`` times those of the kernel's integral operator on the data's law,
and ``K_n``'s ``n`` times: ``mu_i ~ (n / n_s) nu_i`` for the leading ones.  Then
``s_alpha(K_n) = sum mu_i / (mu_i + alpha) ~ sum nu_i / (nu_i + alpha n_s / n)``: the
estimate is ``s_{lambda_s}(K_{n_s})`` with ``lambda_s = alpha n_s / n`` (exact when
``n_s = n``).  The tail eigenvalues, below ``lambda_s``, add little to either sum.

Interval.  Randomly pivoted Cholesky (:func:`kernelmaps.sampling.rpcholesky`) gives a factor
``F`` (``n_s x r``) with ``F F^T`` the Nyström approximation of the pivots, so ``0 <= E =
K - F F^T`` (Loewner order).  With ``f(t) = t / (t + lambda)``, increasing, concave,
``f(0) = 0`` and ``s_lambda(A) = sum_i f(lambda_i(A))``:

* lower: ``F F^T <= K`` gives ``lambda_i(F F^T) <= lambda_i(K)`` for every ``i`` (Weyl), so
  ``lo = s_lambda(F F^T) <= s_lambda(K)``; ``s_lambda(F F^T) = sum_j f(theta_j)``,
  ``theta_j`` the eigenvalues of the ``r x r`` matrix ``F^T F``;
* upper: ``f`` concave with ``f(0) = 0`` gives Rotfel'd's trace inequality ``tr f(A + B) <=
  tr f(A) + tr f(B)`` for ``A, B >= 0``, so ``s_lambda(K) <= lo + s_lambda(E)``; the
  diagonal of ``E`` is majorized by its eigenvalues (Schur) and ``sum f`` is Schur-concave,
  so ``s_lambda(E) <= sum_i f(E_ii)``: ``hi = lo + sum_i d_i / (d_i + lambda)`` with ``d =
  diag(K) - rowsum(F * F)``, the residual diagonal of RPCholesky.  By Jensen, ``hi - lo <=
  n_s T / (T + lambda n_s) <= T / lambda``, ``T = tr(K - F F^T)`` the residual trace.

The rank ``r`` doubles from 64 until ``hi - lo <= rtol * lo`` for every ``lambda`` asked (or
the residual vanishes), the last rank ``n_s / 2``; past it the eigenvalues of ``K_{n_s}``
itself are computed (``O(n_s^3)``, exact: ``lo = hi``).  The interval is exact
arithmetic's; the computed ends carry a rounding error of about ``n_s eps |K|_2 / lambda``.
It covers the error of the factorization on the sample only, not the sampling variability
of ``s_{lambda_s}(K_{n_s})`` around ``s_alpha(K_n)`` (not bounded here): when ``n <=
n_samples`` the sample is all of ``X`` and the interval holds for ``s_alpha(K_n)`` itself.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from numbers import Integral, Real
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_array

from ..._random import check_random_state
from ..._validation import one_line_errors
from ...kernels import Kernel, kernel_from_params
from ...sampling import rpcholesky

__all__ = [
    "SampleSpectrum",
    "StatisticalDimension",
    "check_budget_arguments",
    "resolve_budget_kernel",
    "sample_rows",
    "sample_spectrum",
    "statistical_dimension",
]

#: Relative width of the interval at which the rank stops growing.
DIMENSION_RTOL = 0.05
#: First rank of the factorization.
FIRST_RANK = 64


@dataclasses.dataclass(frozen=True)
class SampleSpectrum:
    """What the statistical dimension of the sample needs: the eigenvalues ``theta`` of
    ``F^T F`` (or of ``K`` when ``exact``), the residual diagonal ``d = diag(K - F F^T)``
    (zeros when ``exact``), the sample size ``n_s`` and the rank ``r`` of the factor."""

    theta: np.ndarray
    residual: np.ndarray
    n_sample: int
    rank: int
    exact: bool

    def interval(self, lam: float) -> tuple[float, float]:
        """``(lo, hi)`` with ``lo <= s_lam(K_{n_s}) <= hi`` (module docstring).

        Examples
        --------
        >>> import numpy as np
        >>> from kernelmaps.models._budget._statistical_dimension import SampleSpectrum
        >>> SampleSpectrum(np.array([3.0, 1.0]), np.zeros(2), 2, 2, True).interval(1.0)
        (1.25, 1.25)
        """
        lo = float(np.sum(self.theta / (self.theta + lam)))
        return lo, lo + float(np.sum(self.residual / (self.residual + lam)))


@dataclasses.dataclass(frozen=True)
class StatisticalDimension:
    """The estimate of :func:`statistical_dimension`.

    Attributes
    ----------
    value : float
        The midpoint of ``interval``: the estimate of ``s_alpha(K_n)``.
    interval : tuple of float
        ``(lo, hi)`` bracketing ``s_{lambda_s}(K_{n_s})`` of the sample (exact arithmetic).
    n_rows, n_sample : int
        ``n`` (rows of ``X``) and ``n_s`` (rows of the sample).
    alpha, lambda_sample : float
        ``alpha`` and ``lambda_s = alpha n_s / n``.
    rank : int
        Rank of the factor (``n_s`` when the eigenvalues of ``K_{n_s}`` were computed).
    exact : bool
        Whether the eigenvalues of ``K_{n_s}`` were computed (then ``lo == hi``).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models import statistical_dimension
    >>> X = np.random.default_rng(0).normal(size=(300, 3))
    >>> s = statistical_dimension(X, gamma=0.5, alpha=1.0, random_state=0)
    >>> s.n_rows, s.n_sample, s.interval[0] <= s.value <= s.interval[1]
    (300, 300, True)
    """

    value: float
    interval: tuple[float, float]
    n_rows: int
    n_sample: int
    alpha: float
    lambda_sample: float
    rank: int
    exact: bool


def _check_fraction(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, Real) or not 0.0 < float(value) < 1.0:
        raise ValueError(f"{name} must be a number in (0, 1); got {value!r}. Give e.g. 0.05.")
    return float(value)


def check_budget_arguments(
    alpha: Any, n_samples: Any, epsilon: Any = 0.5, delta: Any = 0.5
) -> tuple[float, int, float, float]:
    """``alpha``, ``n_samples``, ``epsilon`` and ``delta`` checked, each refused in one line.

    Examples
    --------
    >>> from kernelmaps.models._budget._statistical_dimension import check_budget_arguments
    >>> check_budget_arguments(1, 100)
    (1.0, 100, 0.5, 0.5)
    """
    if isinstance(alpha, bool) or not isinstance(alpha, Real) or not 0.0 < float(alpha) < math.inf:
        raise ValueError(
            f"alpha must be a finite number > 0 (the ridge penalty); got {alpha!r}. "
            "Give e.g. alpha=1.0."
        )
    if isinstance(n_samples, bool) or not isinstance(n_samples, Integral) or n_samples < 2:
        raise ValueError(f"n_samples must be an integer >= 2; got {n_samples!r}. Give e.g. 2000.")
    return (
        float(alpha),
        int(n_samples),
        _check_fraction(epsilon, "epsilon"),
        _check_fraction(delta, "delta"),
    )


def resolve_budget_kernel(
    X: Any, kernel: Any, gamma: Any, kernel_params: Any, owner: str
) -> tuple[np.ndarray | sp.csr_matrix, Kernel]:
    """``X`` validated (finite, 2D, at least 2 rows; scikit-learn's messages in one line)
    and the kernel resolved as the estimators resolve it (``gamma=None``: the kernel's
    default, ``1 / n_features`` for those with a ``gamma``).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models._budget._statistical_dimension import resolve_budget_kernel
    >>> resolve_budget_kernel(np.zeros((3, 4)), "rbf", None, None, "f")[1]
    Gaussian(gamma=0.25)
    """
    with one_line_errors():
        X = check_array(
            X, accept_sparse="csr", dtype=(np.float64, np.float32), ensure_min_samples=2,
            input_name="X",
        )  # fmt: skip
    if not isinstance(kernel, (str, Kernel)):
        raise TypeError(
            f"{owner}: kernel must be a kernel name such as 'rbf' or a kernelmaps.kernels."
            f"Kernel object; got {kernel!r}."
        )
    resolved = kernel_from_params(owner, kernel, X.shape[1], kernel_params, gamma=gamma)
    assert isinstance(resolved, Kernel)
    return X, resolved


def sample_rows(X: Any, n_samples: int, rng: np.random.Generator) -> np.ndarray:
    """``min(n, n_samples)`` rows of ``X`` drawn uniformly without replacement, in a random
    order (so that any prefix is a uniform sample too), dense float64.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models._budget._statistical_dimension import sample_rows
    >>> sample_rows(np.arange(20.0).reshape(10, 2), 4, np.random.default_rng(0)).shape
    (4, 2)
    """
    n = X.shape[0]
    rows = rng.permutation(n)[: min(n, n_samples)]
    S = X[rows]
    S = S.toarray() if sp.issparse(S) else S
    return np.ascontiguousarray(S, dtype=np.float64)


def sample_spectrum(
    S: np.ndarray,
    kernel: Kernel,
    lambdas: Sequence[float],
    rng: np.random.Generator,
    rtol: float = DIMENSION_RTOL,
) -> SampleSpectrum:
    """The :class:`SampleSpectrum` of the rows ``S``: RPCholesky of growing rank until the
    interval of every ``lambda`` in ``lambdas`` is narrower than ``rtol`` times its lower
    end, else the exact eigenvalues of ``K`` (module docstring).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import Gaussian
    >>> from kernelmaps.models._budget._statistical_dimension import sample_spectrum
    >>> S = np.random.default_rng(0).normal(size=(400, 2))
    >>> spectrum = sample_spectrum(S, Gaussian(gamma=0.1), [1.0], np.random.default_rng(0))
    >>> lo, hi = spectrum.interval(1.0)
    >>> bool(hi - lo <= 0.05 * lo), spectrum.rank < 400
    (True, True)
    """
    n_s = S.shape[0]
    diagonal = kernel.diag(S)
    for rank in _ranks(n_s):
        F = rpcholesky(S, rank, kernel, rng).factor
        theta = np.clip(np.linalg.eigvalsh(F.T @ F), 0.0, None)
        residual = np.clip(diagonal - np.einsum("ij,ij->i", F, F), 0.0, None)
        spectrum = SampleSpectrum(theta, residual, n_s, F.shape[1], exact=False)
        if F.shape[1] < rank or all(_narrow(spectrum.interval(lam), rtol) for lam in lambdas):
            return spectrum
    K = kernel(S)
    theta = np.clip(np.linalg.eigvalsh(0.5 * (K + K.T)), 0.0, None)
    return SampleSpectrum(theta, np.zeros(n_s), n_s, n_s, exact=True)


def _ranks(n_s: int) -> list[int]:
    """``64, 128, 256, ...`` below ``n_s / 2``, then ``n_s // 2`` (none when ``n_s < 128``)."""
    ranks = []
    rank = FIRST_RANK
    while 2 * rank < n_s:
        ranks.append(rank)
        rank *= 2
    return [*ranks, n_s // 2] if ranks else []


def _narrow(interval: tuple[float, float], rtol: float) -> bool:
    lo, hi = interval
    return hi - lo <= rtol * lo


def statistical_dimension(
    X: Any,
    *,
    kernel: str | Kernel = "rbf",
    gamma: float | None = None,
    kernel_params: dict[str, Any] | None = None,
    alpha: float = 1.0,
    n_samples: int = 2000,
    random_state: Any = None,
) -> StatisticalDimension:
    """Statistical dimension ``s_alpha = tr(K (K + alpha I)^{-1})`` of the rows of ``X``.

    ``K`` is the ``n x n`` kernel matrix of the ``n`` rows of ``X`` and ``alpha`` the ridge
    penalty in the scale of :class:`KernelRidge` (``min sum (y - f)^2 + alpha |f|^2``, the
    ``lambda`` of Avron et al. 2017).  Estimated on a uniform sample of ``n_s = min(n,
    n_samples)`` rows as ``s_{alpha n_s / n}(K_{n_s})``, bracketed by randomly pivoted
    Cholesky; see ``kernelmaps.models._budget._statistical_dimension`` for the scaling, the
    interval and its proof.  Cost ``O(n_s r^2)`` for a factor of rank ``r``, at most
    ``O(n_s^3)``; never ``n x n``.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n, n_features)
    kernel : str or Kernel, default="rbf"
        A kernel name of :mod:`kernelmaps.kernels` or a kernel object.
    gamma : float, default=None
        The kernel's ``gamma``; ``None``: the kernel's default (``1 / n_features``), as
        in every estimator of the library.
    kernel_params : dict, default=None
        Other kernel parameters (e.g. ``{"nu": 2.5}`` for ``"matern"``).
    alpha : float, default=1.0
        Ridge penalty ``> 0``.
    n_samples : int, default=2000
        Largest sample, ``>= 2``.
    random_state : int, Generator or None, default=None
        The sample and the pivots.

    Returns
    -------
    StatisticalDimension

    References
    ----------
    .. [1] H. Avron, M. Kapralov, C. Musco, C. Musco, A. Velingker and A. Zandieh, "Random
       Fourier features for kernel ridge regression: approximation bounds and statistical
       guarantees", ICML 2017 (the statistical dimension ``s_lambda``).
    .. [2] Y. Chen, E. N. Epperly, J. A. Tropp and R. J. Webber, "Randomly pivoted
       Cholesky", Comm. Pure Appl. Math. 78 (2025).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models import statistical_dimension
    >>> X = np.random.default_rng(0).normal(size=(500, 2))
    >>> s = statistical_dimension(X, gamma=0.5, alpha=1.0, random_state=0)
    >>> K = np.exp(-0.5 * ((X[:, None] - X[None]) ** 2).sum(-1))
    >>> exact = np.trace(np.linalg.solve(K + np.eye(500), K))
    >>> bool(s.interval[0] - 1e-6 <= exact <= s.interval[1] + 1e-6)
    True
    """
    alpha, n_samples, _, _ = check_budget_arguments(alpha, n_samples)
    X, kernel_ = resolve_budget_kernel(X, kernel, gamma, kernel_params, "statistical_dimension")
    rng = check_random_state(random_state)
    S = sample_rows(X, n_samples, rng)
    n, n_s = X.shape[0], S.shape[0]
    lam = alpha * n_s / n
    spectrum = sample_spectrum(S, kernel_, [lam], rng)
    lo, hi = spectrum.interval(lam)
    return StatisticalDimension(
        0.5 * (lo + hi), (lo, hi), n, n_s, alpha, lam, spectrum.rank, spectrum.exact
    )
