"""``feature_budget``: how many features the data needs, by the bounds and as measured.

The statistical dimension of the data (``kernelmaps.models._budget._statistical_dimension``), the
counts the bounds of ``kernelmaps.models._budget._bounds`` give for it, and, with
``measure=True``, the count at which each map of the library reaches the error asked on a
sample of the rows.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.spatial.distance import pdist

from ..._random import check_random_state
from ...feature_maps import Nystroem, RandomFourierFeatures
from ...kernels import Cauchy, Gaussian, Kernel, Laplacian, Matern, ShiftInvariantKernel
from ...metrics import feature_map_error, kernel_errors_from_features
from . import _bounds as bounds
from ._statistical_dimension import (
    check_budget_arguments,
    resolve_budget_kernel,
    sample_rows,
    sample_spectrum,
)

__all__ = ["BUDGET_METHODS", "BudgetRow", "FeatureBudget", "feature_budget"]

#: The methods :func:`feature_budget` reports, each a map of the library.
BUDGET_METHODS = ("rff", "orf", "nystroem-uniform", "nystroem-leverage")
#: Largest number of random Fourier features tried by the measurement.
MEASURE_CAP = 8192
#: The measurement uses at most this many rows of the sample.
MEASURE_ROWS = 1000
#: First number of features of the measurement's doubling grid.
MEASURE_START = 16

_ERRORS = {"spectral": "spectral", "frobenius": "fro"}
_AVRON = "Avron et al. 2017 Thm 7"
_PAPERS = {
    "pointwise": "Rahimi & Recht 2007",
    "uniform": "Rahimi & Recht 2007 Cl. 1; Sutherland & Schneider 2015",
    "rff": _AVRON,
    "orf": f"{_AVRON}; Yu et al. 2016",
    "rff-leverage": "Avron et al. 2017 (modified RFF)",
    "nystroem-uniform": "Bach 2013; Rudi et al. 2015",
    "nystroem-leverage": "Alaoui & Mahoney 2015; Musco & Musco 2017",
}


@dataclasses.dataclass(frozen=True)
class BudgetRow:
    """One line of a :class:`FeatureBudget`: a method, a bound and the counts.

    Attributes
    ----------
    method : str
        ``"rff"``, ``"orf"``, ``"nystroem-uniform"``, ``"nystroem-leverage"``, or
        ``"rff-leverage (theory)"`` (frequencies sampled by the ridge leverage function:
        what the theory says an optimal sampler needs, not a map of the library).
    bound : str
        What the bound guarantees.
    bound_features : int or None
        The number of features (``D``, or landmarks ``m``) the bound asks for; None where
        it does not apply (the reason is in the budget's notes).
    measured_features : int or None
        The first ``D`` of the doubling grid where the measured error is at most
        ``epsilon``; None when not measured or not reached by the cap.
    paper : str
        Where the bound comes from.
    measured_errors : tuple of (int, float)
        Each ``D`` tried and its measured relative error, in order.

    Examples
    --------
    >>> from kernelmaps.models import BudgetRow
    >>> row = BudgetRow("rff", "pointwise", 1476, None, "Rahimi & Recht 2007")
    >>> row.bound_features, row.measured_errors
    (1476, ())
    """

    method: str
    bound: str
    bound_features: int | None
    measured_features: int | None
    paper: str
    measured_errors: tuple[tuple[int, float], ...] = ()


@dataclasses.dataclass(frozen=True)
class FeatureBudget:
    """The result of :func:`feature_budget`; ``str()`` prints it as a table.

    Attributes
    ----------
    statistical_dimension : float
        Estimate of ``s_alpha = tr(K (K + alpha I)^{-1})`` of the ``n`` rows.
    statistical_dimension_interval : tuple of float
        ``(lo, hi)``: it brackets the sample's ``s_{alpha n_s / n}(K_{n_s})`` (exact
        arithmetic; the sampling variability is not covered).
    n_rows, n_sample : int
        Rows of ``X`` and of the uniform sample.
    kernel : str
        The resolved kernel (its repr).
    gamma : float or None
        Its ``gamma`` (None for a kernel without one).
    alpha, epsilon, delta : float
        The ridge penalty, the error and the failure probability asked.
    error : str
        ``"spectral"`` or ``"frobenius"``: the norm of the measured error.
    rows : tuple of BudgetRow
    notes : tuple of str
        What the numbers mean and where a bound does not apply.
    nystroem_dimension : float
        The upper end of the interval of the statistical dimension at ``epsilon * alpha``,
        which the Nyström bounds use.
    rank : int
        Rank of the factor behind the interval (``n_sample``: exact eigenvalues).
    diameter : float or None
        Largest distance between two rows of the sample (a lower estimate of the
        diameter of the rows of ``X``) when the uniform bound used it.
    spectral_second_moment : float or None
        ``E |w|^2`` of the kernel's spectral measure (shift-invariant kernels).
    measure_rows : int
        Rows the errors were measured on (0 without ``measure``).
    measure_seed : int or None
        ``random_state`` of every map the measurement fitted.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models import feature_budget
    >>> X = np.random.default_rng(0).normal(size=(300, 3))
    >>> budget = feature_budget(X, measure=False, random_state=0)
    >>> [row["method"] for row in budget.as_table()][:3]
    ['rff', 'rff', 'rff']
    """

    statistical_dimension: float
    statistical_dimension_interval: tuple[float, float]
    n_rows: int
    n_sample: int
    kernel: str
    gamma: float | None
    alpha: float
    epsilon: float
    delta: float
    error: str
    rows: tuple[BudgetRow, ...]
    notes: tuple[str, ...]
    nystroem_dimension: float
    rank: int
    diameter: float | None
    spectral_second_moment: float | None
    measure_rows: int
    measure_seed: int | None

    def as_table(self) -> list[dict[str, Any]]:
        """The rows as dicts (``method, bound, bound_features, measured_features, paper``).

        Examples
        --------
        >>> from kernelmaps.models import BudgetRow, FeatureBudget
        >>> row = BudgetRow("rff", "pointwise", 1476, None, "Rahimi & Recht 2007")
        >>> budget = FeatureBudget(3.0, (2.9, 3.1), 100, 100, "Gaussian(gamma=1.0)", 1.0,
        ...                        1.0, 0.1, 0.05, "spectral", (row,), (), 30.0, 100, None,
        ...                        None, 0, None)
        >>> budget.as_table()[0]["bound_features"]
        1476
        """
        keys = ("method", "bound", "bound_features", "measured_features", "paper")
        return [{key: getattr(row, key) for key in keys} for row in self.rows]

    def __str__(self) -> str:
        lo, hi = self.statistical_dimension_interval
        sample = f"a uniform sample of {self.n_sample}" if self.n_sample < self.n_rows else "all"
        head = [
            f"feature budget: {self.n_rows} rows ({sample}), kernel {self.kernel}, "
            f"alpha = {self.alpha:.4g}, epsilon = {self.epsilon:g}, delta = {self.delta:g}",
            f"statistical dimension s_alpha = tr(K (K + alpha I)^-1) = "
            f"{self.statistical_dimension:.1f} (on the sample: {lo:.1f} .. {hi:.1f})",
            "",
        ]
        return "\n".join(head + _table_lines(self.rows) + ["", "notes:"] + _notes(self.notes))


def _table_lines(rows: Sequence[BudgetRow]) -> list[str]:
    titles = ("method", "bound", "D (bound)", "D (measured)", "paper")
    cells = [
        (
            row.method,
            row.bound,
            "-" if row.bound_features is None else str(row.bound_features),
            "-" if row.measured_features is None else str(row.measured_features),
            row.paper,
        )
        for row in rows
    ]
    widths = [max(len(t), *(len(c[i]) for c in cells)) for i, t in enumerate(titles)]

    def line(values: Sequence[str]) -> str:
        a, b, c, d, e = values
        w = widths
        return f"{a:<{w[0]}}  {b:<{w[1]}}  {c:>{w[2]}}  {d:>{w[3]}}  {e}".rstrip()

    return [line(titles), "-" * (sum(widths[:4]) + 8 + widths[4]), *map(line, cells)]


def _notes(notes: Sequence[str]) -> list[str]:
    return [f"  - {note}" for note in notes]


def spectral_second_moment(kernel: Kernel, d: int) -> float | None:
    """``sigma_p^2 = E |w|^2`` of the spectral measure of a shift-invariant kernel in ``d``
    dimensions (``inf`` where it diverges; None when not known for the kernel).

    Gaussian ``N(0, 2 gamma I)``: ``2 gamma d``; Cauchy (Laplace(0, sqrt(gamma)) per
    coordinate): ``2 gamma d``; Laplacian (Cauchy per coordinate): infinite; Matérn
    (multivariate t, ``2 nu`` degrees of freedom, scale ``1 / l``): ``d nu / ((nu - 1)
    l^2)`` for ``nu > 1``, infinite otherwise.

    Examples
    --------
    >>> from kernelmaps.kernels import Gaussian, Matern
    >>> from kernelmaps.models._budget._feature_budget import spectral_second_moment
    >>> spectral_second_moment(Gaussian(gamma=0.5), 3), spectral_second_moment(Matern(
    ...     nu=2.0, gamma=0.5), 3)
    (3.0, 6.0)
    """
    if isinstance(kernel, (Gaussian, Cauchy)) and kernel.gamma is not None:
        return 2.0 * float(kernel.gamma) * d
    if isinstance(kernel, Laplacian):
        return math.inf
    if isinstance(kernel, Matern):
        nu = float(kernel.nu)
        return d * nu / ((nu - 1.0) * kernel.scale**2) if nu > 1.0 else math.inf
    return None


def _check_methods(methods: Any) -> tuple[str, ...]:
    chosen = (methods,) if isinstance(methods, str) else tuple(methods)
    unknown = [m for m in chosen if m not in BUDGET_METHODS]
    if unknown or not chosen:
        raise ValueError(
            f"methods must be a non-empty list of {', '.join(map(repr, BUDGET_METHODS))}; "
            f"got {methods!r}."
        )
    return tuple(dict.fromkeys(chosen))


def _check_error(error: Any) -> str:
    if not isinstance(error, str) or error not in _ERRORS:
        raise ValueError(f"error must be 'spectral' or 'frobenius'; got {error!r}.")
    return _ERRORS[error]


@dataclasses.dataclass(frozen=True)
class _Setting:
    """What the bounds need: the problem (``n``, ``alpha``, ``epsilon``, ``delta``), the
    upper ends of the statistical dimensions at ``alpha`` and ``epsilon alpha``, the
    sample (for the diameter and ``kappa^2``) and the kernel."""

    n: int
    d: int
    alpha: float
    epsilon: float
    delta: float
    s_alpha: float
    s_nystroem: float
    kappa2: float
    kernel: Kernel
    sample: np.ndarray


def _rff_rows(
    setting: _Setting, methods: Sequence[str], notes: list[str]
) -> tuple[list[BudgetRow], float | None, float | None]:
    """The random Fourier rows (and the diameter and ``E |w|^2`` used)."""
    st = setting
    if not isinstance(st.kernel, ShiftInvariantKernel):
        notes.append(
            f"rff, orf: not applicable: {st.kernel!r} is not shift-invariant (random "
            "Fourier features need a kernel with a spectral measure)."
        )
        return [BudgetRow(m, "not applicable", None, None, "-") for m in methods], None, None
    spectral = None if st.epsilon > 0.5 else st.epsilon
    if spectral is None:
        notes.append("Avron et al.'s Theorem 7 needs Delta = epsilon <= 1/2: no spectral D.")
    sigma2 = spectral_second_moment(st.kernel, st.d)
    diameter = float(pdist(st.sample).max()) if sigma2 is not None else None
    rows: list[BudgetRow] = []
    if "rff" in methods:
        uniform = None
        if sigma2 is not None and diameter is not None:
            uniform = bounds.rff_uniform(st.epsilon, st.delta, st.d, sigma2, diameter)
        if uniform is None:
            notes.append("rff uniform bound: E|w|^2 of the kernel's spectral measure is "
                         "infinite or unknown, so it does not apply.")  # fmt: skip
        rows += [
            BudgetRow("rff", "pointwise (one pair)",
                      bounds.rff_pointwise(st.epsilon, st.delta), None, _PAPERS["pointwise"]),
            BudgetRow("rff", "uniform (all pairs of the sample)", uniform,
                      None, _PAPERS["uniform"]),
        ]  # fmt: skip
    spectral_d = (
        None if spectral is None
        else bounds.rff_spectral(spectral, st.delta, st.n, st.alpha, st.s_alpha)
    )  # fmt: skip
    what = "Delta-spectral"
    if "rff" in methods:
        rows.append(BudgetRow("rff", what, spectral_d, None, _PAPERS["rff"]))
    if "orf" in methods:
        if st.kernel.radial:
            rows.append(BudgetRow("orf", what + " (i.i.d. bound)", spectral_d, None,
                                  _PAPERS["orf"]))  # fmt: skip
        else:
            notes.append("orf: not applicable: orthogonal features need a radial spectral "
                         "measure (Gaussian, Matern).")  # fmt: skip
            rows.append(BudgetRow("orf", "not applicable", None, None, "-"))
    leverage = (
        None if spectral is None
        else bounds.rff_leverage_spectral(spectral, st.delta, st.s_alpha)
    )  # fmt: skip
    rows.append(BudgetRow("rff-leverage (theory)", what, leverage, None, _PAPERS["rff-leverage"]))
    return rows, diameter, sigma2


def _nystroem_rows(setting: _Setting, methods: Sequence[str]) -> list[BudgetRow]:
    st = setting
    what = "Delta-spectral (one-sided)"
    rows = []
    if "nystroem-uniform" in methods:
        m = bounds.nystroem_uniform(st.delta, st.n, st.epsilon * st.alpha, st.kappa2,
                                    st.s_nystroem)  # fmt: skip
        rows.append(BudgetRow("nystroem-uniform", what, m, None, _PAPERS["nystroem-uniform"]))
    if "nystroem-leverage" in methods:
        m = bounds.nystroem_leverage(st.delta, st.s_nystroem)
        rows.append(BudgetRow("nystroem-leverage", what, m, None, _PAPERS["nystroem-leverage"]))
    return rows


def _make_map(method: str, kernel: Kernel, D: int, seed: int) -> Any:
    if method in ("rff", "orf"):
        sampler = "mc" if method == "rff" else "orthogonal"
        return RandomFourierFeatures(kernel, n_components=D, sampler=sampler, random_state=seed)
    landmarks = method.removeprefix("nystroem-")
    return Nystroem(kernel, n_components=D, landmarks=landmarks, random_state=seed)


def measure_features(
    method: str,
    S: np.ndarray,
    kernel: Kernel,
    epsilon: float,
    norm: str,
    seed: int,
    scale: float | None = None,
) -> tuple[int | None, tuple[tuple[int, float], ...]]:
    """The first ``D`` of ``16, 32, 64, ...`` (up to :data:`MEASURE_CAP` features, or below
    the number of rows for Nyström) at which ``|K - Z Z^T| / |K|`` on the rows ``S`` is at
    most ``epsilon``, one map fitted on ``S`` per ``D`` with ``random_state=seed``; and
    every ``(D, error)`` tried.  No bisection between the last two ``D``.  ``scale``:
    ``|K|`` in ``norm`` when known (:func:`kernel_norm`).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import Gaussian
    >>> from kernelmaps.models._budget._feature_budget import measure_features
    >>> S = np.random.default_rng(0).normal(size=(200, 2))
    >>> D, trace = measure_features("nystroem-uniform", S, Gaussian(gamma=0.5), 0.1,
    ...                             "spectral", seed=0)
    >>> D == trace[-1][0], trace[-1][1] <= 0.1, all(e > 0.1 for _, e in trace[:-1])
    (True, True, True)
    """
    scale = kernel_norm(S, kernel, norm) if scale is None else scale
    cap = MEASURE_CAP if method in ("rff", "orf") else S.shape[0] - 1
    trace: list[tuple[int, float]] = []
    width = MEASURE_START
    while width <= cap:
        feature_map = _make_map(method, kernel, width, seed).fit(S)
        error = feature_map_error(feature_map, S, kernel=kernel, norm=norm, relative=False)
        trace.append((width, error / scale))
        if error / scale <= epsilon:
            return width, tuple(trace)
        width *= 2
    return None, tuple(trace)


def kernel_norm(S: np.ndarray, kernel: Kernel, norm: str) -> float:
    """``|K|`` of the rows ``S`` in ``norm``, by the metric itself (the error of zero
    features), once for all the errors of a measurement.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import Gaussian
    >>> from kernelmaps.models._budget._feature_budget import kernel_norm
    >>> round(kernel_norm(np.zeros((3, 2)), Gaussian(gamma=1.0), "spectral"), 12)  # all ones
    3.0
    """
    zero = np.zeros((S.shape[0], 1))
    return kernel_errors_from_features(kernel, S, zero, norms=(norm,), relative=False)[norm]


def _measured_rows(
    rows: list[BudgetRow], S: np.ndarray, kernel: Kernel, epsilon: float, norm: str, seed: int
) -> tuple[list[BudgetRow], list[str]]:
    """``rows`` with the measured counts of their method filled in, and the notes."""
    found: dict[str, tuple[int | None, tuple[tuple[int, float], ...]]] = {}
    notes = []
    scale = kernel_norm(S, kernel, norm)
    for row in rows:
        if (
            row.method in BUDGET_METHODS
            and row.bound != "not applicable"
            and row.method not in found
        ):
            found[row.method] = measure_features(row.method, S, kernel, epsilon, norm, seed, scale)
            width, trace = found[row.method]
            if width is None and trace:
                notes.append(
                    f"{row.method}: the error stayed above epsilon up to D = "
                    f"{trace[-1][0]} (the cap of the measurement): measured D is None."
                )
    measured = [
        dataclasses.replace(row, measured_features=found[row.method][0],
                            measured_errors=found[row.method][1])
        if row.method in found else row
        for row in rows
    ]  # fmt: skip
    return measured, notes


def _convention_notes(n: int, n_s: int, epsilon: float, measure_rows: int, norm: str,
                      seed: int | None) -> list[str]:  # fmt: skip
    notes = [
        f"alpha is the ridge penalty of min sum (y - f)^2 + alpha |f|^2 on the n = {n} rows "
        "(lambda = alpha in Avron et al.); s_alpha grows with n.",
        "Delta-spectral: (1 - Delta)(K + alpha I) <= Z Z^T + alpha I <= (1 + Delta)(K + alpha "
        "I) with Delta = epsilon; the bounds take the upper end of the interval of s (at "
        "epsilon * alpha for Nystroem); D counts output features (2 per frequency).",
    ]
    if n_s < n:
        notes.append(
            f"s_alpha(K_n) is estimated by s at alpha * {n_s} / {n} of the sample's kernel "
            "matrix; the interval covers the factorization's error on the sample, not the "
            "sampling variability."
        )
    if measure_rows:
        what = "spectral" if norm == "spectral" else "Frobenius"
        notes.append(
            f"measured D: the first D of 16, 32, 64, ... with relative {what} error "
            f"|K - Z Z^T| / |K| <= epsilon on {measure_rows} sample rows, one draw per D "
            f"(random_state={seed}); a different quantity from the bounds' guarantees."
        )
    return notes


def feature_budget(
    X: Any,
    *,
    kernel: str | Kernel = "rbf",
    gamma: float | None = None,
    kernel_params: dict[str, Any] | None = None,
    alpha: float = 1.0,
    epsilon: float = 0.05,
    delta: float = 0.05,
    n_samples: int = 2000,
    methods: Sequence[str] = BUDGET_METHODS,
    measure: bool = True,
    error: str = "spectral",
    random_state: Any = None,
) -> FeatureBudget:
    """How many features the data needs: the bounds, from the statistical dimension, and
    the counts measured on a sample.

    Reads at most ``n_samples`` rows of ``X`` drawn uniformly (never an ``n x n`` matrix):
    estimates the statistical dimension ``s_alpha = tr(K (K + alpha I)^{-1})`` of the
    ``n x n`` kernel matrix ``K`` of the rows (:func:`statistical_dimension`), then gives,
    for each method, the number of features each bound asks for at failure probability
    ``delta``, and, with ``measure``, the number at which the map reaches a relative
    error ``epsilon`` on the sample.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n, n_features)
        The rows (finite; NaN refused with scikit-learn's message).
    kernel : str or Kernel, default="rbf"
        Any kernel name of :mod:`kernelmaps.kernels` or a kernel object.  The random
        Fourier rows need a shift-invariant kernel; for the others they say "not
        applicable" and only Nyström is reported.
    gamma : float, default=None
        ``None``: the kernel's default, ``1 / n_features``, as every map of the library
        takes it (``kernelmaps budget`` passes the median heuristic of ``kernelmaps fit``).
    kernel_params : dict, default=None
        Other kernel parameters (``{"nu": 2.5}`` for ``"matern"``).
    alpha : float, default=1.0
        Ridge penalty ``> 0`` in the scale of :class:`FeatureRidge` and
        :class:`KernelRidge`: ``min sum_i (y_i - f(x_i))^2 + alpha |f|^2`` over the ``n``
        rows, ``(K + alpha I) c = y``.  That is Avron et al.'s ``K + lambda I``, so
        ``lambda = alpha``, and ``s_alpha`` grows with ``n``.
    epsilon : float in (0, 1), default=0.05
        The error: the ``eps`` of the entrywise bounds, ``Delta = epsilon`` of the spectral
        bounds, and the relative error the measurement aims at.
    delta : float in (0, 1), default=0.05
        Failure probability of the bounds.
    n_samples : int, default=2000
        Largest sample ``n_s >= 2``.  The statistical dimension of the ``n`` rows is
        estimated as ``s_{alpha n_s / n}(K_{n_s})``: the eigenvalues of ``K_n`` are about
        ``n / n_s`` times those of ``K_{n_s}`` (both ``n`` or ``n_s`` times those of the
        kernel's integral operator), so ``sum mu / (mu + alpha) ~ sum nu / (nu + alpha
        n_s / n)``.
    methods : sequence of str, default=("rff", "orf", "nystroem-uniform", "nystroem-leverage")
        ``"rff"`` (:class:`~kernelmaps.RandomFourierFeatures`, ``sampler="mc"``), ``"orf"``
        (``sampler="orthogonal"``), ``"nystroem-uniform"`` and ``"nystroem-leverage"``
        (:class:`~kernelmaps.Nystroem`, ``landmarks="uniform"`` / ``"leverage"``).
    measure : bool, default=True
        Measure the counts: for each method, maps with ``D = 16, 32, 64, ...`` (up to 8192
        random Fourier features; Nyström below the number of rows measured) fitted on
        ``min(n_s, 1000)`` rows of the sample, and the first ``D`` whose relative error
        ``|K - Z Z^T| / |K|`` on those rows is at most ``epsilon`` (one draw per ``D``, all
        with one seed drawn from ``random_state``; no bisection).  None where the cap is
        not enough.
    error : {"spectral", "frobenius"}, default="spectral"
        The norm of the measured error (:func:`kernelmaps.metrics.feature_map_error`).
    random_state : int, Generator or None, default=None
        The sample, the pivots and the seed of the measured maps.

    Returns
    -------
    FeatureBudget
        ``str()`` of it is a table; ``as_table()`` its rows as dicts.

    Notes
    -----
    The bounds (derivations in ``kernelmaps.models._budget._bounds``; ``D`` output
    features of the ``cos_sin`` map, ``L = D / 2`` frequencies; ``m`` landmarks; ``s`` the
    upper end of the interval of the statistical dimension):

    ======================  =========================================================
    rff, one pair           ``L >= 2 ln(2 / delta) / eps^2`` (Hoeffding)
    rff, all pairs          ``D >= 8 (d + 2) / eps^2 ln(C_d (sigma_p l / eps)^(2d/(d+2))
                            / delta)``, ``C_d <= 66``, ``sigma_p^2 = E |w|^2`` (``2 gamma
                            d`` for the Gaussian), ``l`` the sample's diameter (a lower
                            estimate of the data's)
    rff, orf: spectral      ``L >= (8/3) Delta^-2 (n / alpha) ln(16 s_alpha / delta)``
                            (Avron et al. 2017, Theorem 7; for orf the i.i.d. bound,
                            an upper estimate)
    rff-leverage (theory)   ``L >= (8/3) Delta^-2 s_alpha ln(16 s_alpha / delta)``
    nystroem-uniform        ``m >= (32/3) min(n, n kappa^2 / (eps alpha)) ln(16
                            s_{eps alpha} / delta)``
    nystroem-leverage       ``m >= (32/3) s_{eps alpha} ln(16 s_{eps alpha} / delta)``
    ======================  =========================================================

    A ``Delta``-spectral approximation means ``(1 - Delta)(K + alpha I) <= Z Z^T + alpha I
    <= (1 + Delta)(K + alpha I)``; it implies ``|K - Z Z^T|_2 <= Delta (|K|_2 + alpha)``.
    The measured count is of another quantity, the relative error on the sample.

    Cost: ``O(n_s r^2)`` for the statistical dimension (at most ``O(n_s^3)``), ``O(n_s^2
    d)`` for the diameter, and the maps on at most 1000 rows: a few seconds at the
    defaults.

    References
    ----------
    .. [1] A. Rahimi and B. Recht, "Random features for large-scale kernel machines", NIPS
       2007 (Hoeffding; Claim 1).
    .. [2] D. J. Sutherland and J. Schneider, "On the error of random Fourier features",
       UAI 2015 (Proposition 1).
    .. [3] H. Avron, M. Kapralov, C. Musco, C. Musco, A. Velingker and A. Zandieh, "Random
       Fourier features for kernel ridge regression: approximation bounds and statistical
       guarantees", ICML 2017 (Theorem 7; modified random Fourier features).
    .. [4] F. Bach, "Sharp analysis of low-rank kernel matrix approximations", COLT 2013.
    .. [5] A. Alaoui and M. W. Mahoney, "Fast randomized kernel ridge regression with
       statistical guarantees", NIPS 2015.
    .. [6] A. Rudi, R. Camoriano and L. Rosasco, "Less is more: Nyström computational
       regularization", NIPS 2015.
    .. [7] C. Musco and C. Musco, "Recursive sampling for the Nyström method", NIPS 2017
       (Theorem 3).
    .. [8] F. X. Yu et al., "Orthogonal random features", NIPS 2016.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.models import feature_budget
    >>> X = np.random.default_rng(0).normal(size=(400, 3))
    >>> budget = feature_budget(X, gamma=0.5, alpha=1.0, epsilon=0.2, random_state=0)
    >>> lo, hi = budget.statistical_dimension_interval
    >>> bool(lo <= budget.statistical_dimension <= hi), budget.n_sample
    (True, 400)
    >>> rows = {(r["method"], r["bound"]): r for r in budget.as_table()}
    >>> rows["rff", "pointwise (one pair)"]["bound_features"]  # 2 ceil(2 ln(40) / 0.2^2)
    370
    >>> measured = rows["nystroem-uniform", "Delta-spectral (one-sided)"]["measured_features"]
    >>> measured in (16, 32, 64, 128, 256)
    True
    >>> print(budget)  # doctest: +ELLIPSIS
    feature budget: 400 rows (all), kernel Gaussian(gamma=0.5), alpha = 1, epsilon = 0.2, ...
    statistical dimension s_alpha = tr(K (K + alpha I)^-1) = ...
    <BLANKLINE>
    method ...
    """
    alpha, n_samples, epsilon, delta = check_budget_arguments(alpha, n_samples, epsilon, delta)
    chosen, norm = _check_methods(methods), _check_error(error)
    X, kernel_ = resolve_budget_kernel(X, kernel, gamma, kernel_params, "feature_budget")
    rng = check_random_state(random_state)
    S = sample_rows(X, n_samples, rng)
    n, n_s = X.shape[0], S.shape[0]
    lam, lam_nystroem = alpha * n_s / n, epsilon * alpha * n_s / n
    spectrum = sample_spectrum(S, kernel_, [lam, lam_nystroem], rng)
    lo, hi = spectrum.interval(lam)
    setting = _Setting(
        n, X.shape[1], alpha, epsilon, delta, hi, spectrum.interval(lam_nystroem)[1],
        float(np.max(kernel_.diag(S))), kernel_, S,
    )  # fmt: skip
    notes: list[str] = []
    rff = [m for m in chosen if m in ("rff", "orf")]
    rows, diameter, sigma2 = _rff_rows(setting, rff, notes) if rff else ([], None, None)
    rows += _nystroem_rows(setting, chosen)
    vacuous = [
        r.method for r in rows if r.method.startswith("nystroem") and (r.bound_features or 0) >= n
    ]
    if vacuous:
        notes.append(f"{', '.join(vacuous)}: the bound asks for at least n = {n} landmarks: "
                     "vacuous here (every row a landmark is the exact kernel).")  # fmt: skip
    seed = int(rng.integers(2**31)) if measure else None
    measure_rows = min(n_s, MEASURE_ROWS) if measure else 0
    if seed is not None:
        rows, measure_notes = _measured_rows(rows, S[:measure_rows], kernel_, epsilon, norm, seed)
        notes += measure_notes
    notes = _convention_notes(n, n_s, epsilon, measure_rows, norm, seed) + notes
    if rff and float(np.max(spectrum.theta, initial=0.0)) * n / n_s < alpha:
        notes.append("|K|_2 (estimated) < alpha: outside Avron et al.'s Theorem 7 (|K|_2 >= "
                     "lambda); the spectral D is indicative only.")  # fmt: skip
    return FeatureBudget(
        0.5 * (lo + hi), (lo, hi), n, n_s, repr(kernel_), getattr(kernel_, "gamma", None),
        alpha, epsilon, delta, error, tuple(rows), tuple(notes), setting.s_nystroem,
        spectrum.rank, diameter, sigma2, measure_rows, seed,
    )  # fmt: skip
