"""Feature maps for histogram kernels: additive (deterministic) and skewed chi-squared."""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.validation import _check_feature_names_in, check_is_fitted

from .._array_api import (
    accumulator_dtype,
    get_namespace,
    is_numpy,
    numpy_namespace,
    to_namespace,
    to_numpy,
    warn_if_tf32,
)
from .._numerics import below_overflow, largest_magnitude
from .._parallel import parallel_rows
from .._row_blocks import cache_block_rows
from .._rows import as_rows
from .._validation import StrictInterval, check_above, check_non_negative
from ..kernels import AdditiveChi2, Kernel, SkewedChi2
from ._base import BaseFeatureMap, register_feature_map
from ._trig import cos_shifted_into, cos_sin_into

__all__ = ["AdditiveChi2Sampler", "SkewedChi2Sampler"]

#: Default sampling intervals for 1, 2, 3 steps (Vedaldi & Zisserman 2010, Fig. 2c;
#: the values scikit-learn uses).
_DEFAULT_INTERVALS = {1: 0.8, 2: 0.5, 3: 0.4}

#: Dense blocks with at least this fraction of non-zeros are transformed entry by entry
#: in place; sparser ones through their non-zeros only.
_DENSE_FRACTION = 0.5

#: Sparse blocks denser than this go through a dense GEMM: scipy's sparse-dense product
#: runs at about 1 multiply-add per ns on one thread, the GEMM at 50-100 or more.
_SPARSE_PRODUCT_DENSITY = 0.01


#: The spectrum ``sech(pi w)`` of the additive chi2 kernel is below 1e-16 beyond this
#: frequency: samples past it give features that are zero to float64 precision.
_MAX_SAMPLED_FREQUENCY = 12.0

#: Terms ``2 L sech(pi j L)`` of the sampled spectrum with ``pi j L`` above this are below
#: 3e-20 L each and are bounded in total instead of summed (see the error bound).
_NEGLIGIBLE_PHASE = 46.0

#: Largest ``grid points x terms`` evaluated numerically by the error bound (about 0.2 s);
#: beyond it the analytic bound alone is used.
_MAX_BOUND_EVALUATIONS = 20_000_000


def _lowest(X: Any, xp: Any) -> Any:
    """What the value checks read of the rows ``X`` of ``xp``: NumPy rows (dense or
    sparse) themselves, the smallest value of another library's rows (reduced on their
    device) as a host array of one value."""
    if is_numpy(xp):
        return X
    return to_numpy(xp.reshape(xp.min(X), (1, 1)))


def _sech(t: Any) -> np.ndarray:
    """``1 / cosh(t)`` for ``t >= 0`` without overflow (``2 e^-t / (1 + e^-2t)``)."""
    e = np.exp(-np.asarray(t, dtype=np.float64))
    return 2.0 * e / (1.0 + e * e)


def _geometric_tail(L: float, start: int) -> float:
    """``4 L sum_{j >= start} e^(-pi j L)``, bounding ``2 L sum_{j >= start} sech(pi j L)``."""
    if start * math.pi * L > 700.0:
        return 0.0
    return 4.0 * L * math.exp(-math.pi * start * L) / -math.expm1(-math.pi * L)


def additive_chi2_error_bound(
    sample_steps: int, sample_interval: float, max_log_ratio: float = math.inf
) -> float:
    """Upper bound on ``sup_{|l| <= max_log_ratio} |g(l) - sech(l / 2)|`` for the additive chi2 map.

    The map gives ``z(x) . z(y) = sum_i sqrt(x_i y_i) g(log x_i - log y_i)`` (terms with
    ``x_i y_i = 0`` are exactly 0, as in the kernel) with
    ``g(l) = L [1 + 2 sum_{j=1}^{n-1} sech(pi j L) cos(j L l)]`` (``L`` the interval, ``n``
    the steps), while ``k = sum_i sqrt(x_i y_i) sech((log x_i - log y_i) / 2)``.  Both are
    even in ``l``.  With ``Lambda = max_log_ratio``:

    * on ``[0, min(Lambda, 80)]`` the gap is evaluated on a grid of step ``h``, plus
      ``h / 2`` times a Lipschitz constant of the gap (and the total of the terms with
      ``pi j L > 46``, left out), or, when that grid would cost more than
      ``2e7`` evaluations, bounded analytically: by Poisson summation the untruncated sum
      is ``sum_k sech((l - 2 pi k / L) / 2)``, so the gap is at most the aliasing
      ``4 e^(Lambda / 2) e^(-pi / L) / (1 - e^(-pi / L))`` plus the truncation
      ``4 L e^(-pi n L) / (1 - e^(-pi L))``; the smaller of the two is used;
    * beyond 80, ``sech(l / 2) < 1e-17`` and ``|g| <= g(0)``, a value ``g`` reaches once
      per period ``2 pi / L``: the gap there is ``g(0)`` up to ``sech(40)``.

    The result is an upper bound, not an estimate, and costs at most about ``2e7``
    cosines whatever the parameters.

    Parameters
    ----------
    sample_steps, sample_interval
        The map's ``n`` and ``L``.
    max_log_ratio : float, default=inf
        Largest ``|log(x_i / y_i)|`` over the non-zero pairs of interest; for data whose
        non-zero values lie in ``[a, b]`` it is ``log(b / a)``.

    Examples
    --------
    >>> import math
    >>> from kernelmaps.feature_maps._chi2 import additive_chi2_error_bound
    >>> round(additive_chi2_error_bound(2, 0.5), 3)  # any data
    0.899
    >>> round(additive_chi2_error_bound(2, 0.5, max_log_ratio=math.log(16)), 3)
    0.103
    """
    n, L = int(sample_steps), float(sample_interval)
    if not (n >= 1 and math.isfinite(L) and L > 0.0):
        raise ValueError(
            f"additive_chi2_error_bound needs sample_steps >= 1 and a finite "
            f"sample_interval > 0; got {sample_steps!r} and {sample_interval!r}."
        )
    Lambda = max(float(max_log_ratio), 0.0)
    near = min(Lambda, 80.0)
    slack = 2.0 / math.cosh(40.0)
    # the terms kept (pi j L <= 46), and a bound on the total of the others
    n_kept = min(n - 1, int(_NEGLIGIBLE_PHASE / (math.pi * L)))
    left_out = _geometric_tail(L, n_kept + 1) if n_kept < n - 1 else 0.0
    # g(0) = L + sum_j 2 L sech(pi j L), bounded by L + 2 int_0^((n-1) L) sech(pi w) dw
    if n_kept <= 1_000_000:
        j = np.arange(1, n_kept + 1)
        g0 = L + float(np.sum(2.0 * L * _sech(np.pi * j * L))) + left_out
    else:
        g0 = L + (4.0 / math.pi) * math.atan(math.tanh(math.pi * (n - 1) * L / 2.0))
    # analytic bound on [0, near]: aliasing + truncation
    if 2.0 * math.pi / L > near and math.pi / L < 700.0:
        q = math.exp(-math.pi / L)
        aliasing = 4.0 * math.exp(near / 2.0) * q / (1.0 - q)
    elif 2.0 * math.pi / L > near:
        aliasing = 0.0
    else:
        aliasing = math.inf
    analytic = aliasing + _geometric_tail(L, n)
    # numerical bound on [0, near], when affordable
    h = min(1e-3, max(near, 1e-3) / 2e5)
    n_points = int(near / h) + 2
    numerical = math.inf
    if n_points * max(n_kept, 1) <= _MAX_BOUND_EVALUATIONS:
        grid = np.arange(0.0, near + h, h)
        g = np.full_like(grid, L)
        lipschitz = 0.25
        for jj in range(1, n_kept + 1):
            a = 2.0 * L * float(_sech(np.pi * jj * L))
            g += a * np.cos(jj * L * grid)
            lipschitz += a * jj * L
        gap = float(np.max(np.abs(g - _sech(grid / 2.0))))
        numerical = gap + lipschitz * h / 2.0 + left_out
    bound = min(analytic, numerical)
    if Lambda > 80.0:
        bound = max(bound, g0)
    return bound + slack


@register_feature_map
class AdditiveChi2Sampler(BaseFeatureMap):
    """Deterministic feature map of the additive chi-squared kernel (Vedaldi & Zisserman 2010).

    ``k(x, y) = sum_i 2 x_i y_i / (x_i + y_i)`` on non-negative data.  Each input
    coordinate gives ``2 n - 1`` features (``n = sample_steps``), sampling the kernel's
    spectrum at the regular points ``0, L, ..., (n - 1) L`` (``L = sample_interval``):

    ``sqrt(L x)``, ``sqrt(2 x L sech(pi j L)) cos(j L log x)`` and
    ``sqrt(2 x L sech(pi j L)) sin(j L log x)`` for ``j = 1 .. n - 1``

    (0 where ``x = 0``), in the column order of scikit-learn's
    :class:`sklearn.kernel_approximation.AdditiveChi2Sampler`, whose output it equals.

    Parameters
    ----------
    sample_steps : int, default=2
        Number of sampling points ``n >= 1``.
    sample_interval : float, default=None
        Sampling interval ``L > 0``; ``None`` means 0.8, 0.5, 0.4 for 1, 2, 3 steps and is
        an error for more steps.

    Attributes
    ----------
    sample_interval_ : float
        The interval used.
    spectrum_weights_ : array of shape (sample_steps,)
        Only when fitted on the arrays of another library (an array of theirs, on their
        device, recording where the map was fitted): the weights ``sqrt(L)`` and
        ``sqrt(2 L sech(pi j L))`` of the features of each sample.
    error_bound_ : float
        ``eps`` with ``|z(x) . z(y) - k(x, y)| <= eps * sum_i sqrt(x_i y_i)
        <= eps * sqrt(sum(x) sum(y))`` for all non-negative ``x, y`` (see Notes).  This
        worst case is dominated by the aliasing at very unequal ``x_i / y_i`` (about 0.9
        for the defaults); ``additive_chi2_error_bound`` with ``max_log_ratio``
        gives the much smaller bound for data whose non-zero values span a bounded
        ratio (about 0.10 for ``n = 2`` and values in ``[1, 16]``, 0.05 for ``n = 3``).
    n_features_in_ : int

    Notes
    -----
    With ``x = e^a``, ``y = e^b``: ``2 x y / (x + y) = sqrt(x y) sech((a - b) / 2)`` and
    ``sech(l / 2) = int sech(pi w) e^(i w l) dw``.  The map replaces the integral by the
    truncated Riemann sum ``g(l) = L sum_{|j| < n} sech(pi j L) e^(i j L l)``, so each
    coordinate's error is ``sqrt(x y) |g(l) - sech(l / 2)|``: periodization (aliasing)
    plus truncation.  ``error_bound_`` is the supremum of ``|g - sech(./2)|`` over
    ``l``, computed at fit (``additive_chi2_error_bound``).  It is deterministic: no
    variance.  Cost ``O(nnz(X) (2 n - 1))``; sparse input gives sparse CSR output with
    ``2 n - 1`` times the non-zeros, dense input dense output, dtype kept.

    Numerical limits: the features are finite for every finite non-negative input;
    ``(sample_steps - 1) * sample_interval > 12`` (samples where the spectrum is below
    1e-16) is refused.  See docs/LIMITS.md.

    References
    ----------
    Vedaldi, A. and Zisserman, A. (2010). Efficient additive kernels via explicit feature
    maps. CVPR (IEEE TPAMI 34(3), 2012).

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from kernelmaps import AdditiveChi2Sampler
    >>> X = load_digits().data
    >>> Z = AdditiveChi2Sampler(sample_steps=2).fit_transform(X)
    >>> Z.shape
    (1797, 192)
    """

    _kernel_requirement: ClassVar[str] = "the additive chi-squared kernel"

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "sample_steps": [StrictInterval(Integral, 1, None, closed="left")],
        "sample_interval": [StrictInterval(Real, 0.0, None, closed="neither"), None],
    }

    def __init__(self, *, sample_steps: int = 2, sample_interval: float | None = None) -> None:
        self.sample_steps = sample_steps
        self.sample_interval = sample_interval

    @classmethod
    def _supports_kernel(cls, kernel: Kernel) -> bool:
        return isinstance(kernel, AdditiveChi2)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True
        # stateless, as scikit-learn's: transform works without fit
        tags.requires_fit = False
        return tags

    def __sklearn_is_fitted__(self) -> bool:
        # stateless: the map depends on the parameters and the number of columns only
        return True

    def _validate_transform_input(self, X: Any) -> Any:
        """``X`` validated; without a fit, the map is first fitted on ``X`` (its width),
        so that ``transform`` works without ``fit``, as scikit-learn's stateless
        sampler's does."""
        if not hasattr(self, "sample_interval_"):
            self._validate_params()
            X = self._validate_X(X, reset=True)
            # draws nothing; the rows of another library are checked on their device
            self._fit_rows(as_rows(X), np.random.default_rng(0))
            return X.tocsr() if sp.issparse(X) else X
        return super()._validate_transform_input(X)

    def _fit(self, X: Any, rng: np.random.Generator) -> None:
        self._check_array_values(X, numpy_namespace())
        if self.sample_interval is None:
            if self.sample_steps not in _DEFAULT_INTERVALS:
                raise ValueError(
                    "If sample_steps is not in [1, 2, 3], you need to provide "
                    f"sample_interval: AdditiveChi2Sampler has no default interval for "
                    f"sample_steps={self.sample_steps}; give sample_interval (e.g. 0.4)."
                )
            interval = _DEFAULT_INTERVALS[self.sample_steps]
        else:
            interval = float(self.sample_interval)
        highest = (self.sample_steps - 1) * interval
        if highest > _MAX_SAMPLED_FREQUENCY:
            useful = 1 + int(_MAX_SAMPLED_FREQUENCY / interval)
            raise ValueError(
                f"AdditiveChi2Sampler: sample_steps={self.sample_steps} with "
                f"sample_interval={interval:g} samples the kernel's spectrum sech(pi w) up to "
                f"w = (sample_steps - 1) * sample_interval = {highest:.4g}, but it is below "
                f"1e-16 beyond w = {_MAX_SAMPLED_FREQUENCY:g}, where the features are zero; "
                f"use sample_steps <= {useful} for this sample_interval, or a smaller "
                "sample_interval."
            )
        self._n_features_out = X.shape[1] * (2 * self.sample_steps - 1)
        self.__dict__.pop("spectrum_weights_", None)  # of a fit on another library's arrays
        self.sample_interval_ = interval
        self.error_bound_ = additive_chi2_error_bound(self.sample_steps, interval)

    def _factors(self) -> np.ndarray:
        L = self.sample_interval_
        j = np.arange(1, self.sample_steps)
        return np.sqrt(2.0 * L * _sech(np.pi * j * L))

    def _output_bytes(self, X: Any) -> float:
        if not sp.issparse(X):
            return super()._output_bytes(X)
        # CSR: a value and a column index per feature of each non-zero
        per_value = np.dtype(X.dtype).itemsize + 8
        return float(X.nnz) * (2 * self.sample_steps - 1) * per_value

    def _finite_by_bound(self, X: Any, constants: Any) -> bool:
        # every feature is at most sqrt(2 L x) in magnitude (sech <= 1, |cos| <= 1)
        largest = largest_magnitude(X, constants[0])
        bound = math.sqrt(2.0 * self.sample_interval_) * math.sqrt(largest)
        return below_overflow(bound, X.dtype)

    def _features_of_values(self, x: np.ndarray) -> list[np.ndarray]:
        """Features of positive values ``x``: [sqrt, cos_1, sin_1, ...], each like ``x``.

        The operations and their order are those of :meth:`_dense_rows`, so that a value
        gets the same features bit for bit through either.
        """
        dtype = x.dtype
        L = self.sample_interval_
        root = np.sqrt(x)
        out = [root * dtype.type(math.sqrt(L))]
        log_x = np.log(x)
        pair = np.empty((1, 2 * x.size), dtype=dtype)
        for j, factor in enumerate(self._factors(), start=1):
            phase = (log_x * dtype.type(j * L)).reshape(1, -1)
            cos_sin_into(phase, pair, factor)
            out.append(pair[0, : x.size] * root)
            out.append(pair[0, x.size :] * root)
        return out

    def _output_format(self, X: Any) -> str:
        """Sparse input gives CSR output (the non-zeros' features), dense input dense."""
        return "csr" if sp.issparse(X) else "dense"

    def _transform_constants(self, X: Any) -> tuple[Any, Any]:
        """The namespace of ``X`` and, for another library than NumPy, the weights of the
        spectrum's samples there (:meth:`_spectrum_weights`) in the dtype of ``X``."""
        xp, _ = get_namespace(X)
        if is_numpy(xp):
            return xp, None
        weights = getattr(self, "spectrum_weights_", None)
        if weights is None:  # fitted on NumPy arrays, or transforming without a fit
            weights = to_namespace(self._spectrum_weights(), xp, X.device)
        return xp, xp.astype(weights, X.dtype)

    def _transform_block(self, X: Any, out: Any, constants: tuple[Any, Any]) -> None:
        xp, weights = constants
        self._check_array_values(X, xp)
        if not is_numpy(xp):
            self._weighted_rows(X, out, weights, xp)
            return
        X = np.asarray(X)
        if np.count_nonzero(X) < _DENSE_FRACTION * X.size:
            self._gathered_block(X, out)
        else:
            parallel_rows(lambda rows: self._dense_rows(X[rows], out[rows]), X.shape[0], out.size)

    def _gathered_block(self, X: np.ndarray, out: np.ndarray) -> None:
        """Mostly-zero rows: the features of the non-zeros only, scattered into ``out``."""
        d = X.shape[1]
        out[:] = 0.0
        nz = X > 0
        for b, feature in enumerate(self._features_of_values(X[nz])):
            out[:, b * d : (b + 1) * d][nz] = feature

    def _dense_rows(self, X: np.ndarray, out: np.ndarray) -> None:
        """Mostly-positive rows: every entry at once, written in place (0 gives 0)."""
        dtype = out.dtype
        d = X.shape[1]
        L = self.sample_interval_
        root = np.sqrt(X)
        np.multiply(root, dtype.type(math.sqrt(L)), out=out[:, :d])
        if self.sample_steps == 1:
            return
        positive = X > 0
        log_x = np.zeros_like(X)
        np.log(X, out=log_x, where=positive)
        phase = np.empty_like(X)
        for j, factor in enumerate(self._factors(), start=1):
            # [cos | sin] of one frequency are adjacent column blocks of the output
            pair = out[:, (2 * j - 1) * d : (2 * j + 1) * d]
            np.multiply(log_x, dtype.type(j * L), out=phase)
            cos_sin_into(phase, pair, factor)
            pair.reshape(X.shape[0], 2, d)[:] *= root[:, None, :]

    def _transform_block_csr(self, X: Any, constants: Any) -> sp.csr_matrix:
        """Sparse rows: the features of the non-zeros, one CSR block per feature kind."""
        check_non_negative(X, "X in AdditiveChi2Sampler")
        if not np.all(X.data):  # explicit zeros would give log(0)
            X = X.copy()
            X.eliminate_zeros()
        blocks = [
            sp.csr_matrix((values, X.indices, X.indptr), shape=X.shape)
            for values in self._features_of_values(X.data)
        ]
        return sp.hstack(blocks, format="csr")

    _array_api: ClassVar[bool] = True

    def _check_array_values(self, X: Any, xp: Any) -> None:
        check_non_negative(_lowest(X, xp), "X in AdditiveChi2Sampler")

    def _array_bytes_per_row(self, X: Any) -> float:
        # the features before they are written, and the log and phase
        itemsize = np.dtype(X.dtype).itemsize
        return float((2 * self._n_features_out + 4 * X.shape[1]) * itemsize)

    def _spectrum_weights(self) -> np.ndarray:
        """``[sqrt(L), sqrt(2 L sech(pi j L)) for j = 1 .. n - 1]``: the weights of the
        features of each sample of the spectrum."""
        return np.concatenate(([math.sqrt(self.sample_interval_)], self._factors()))

    def _place_fitted(self, xp: Any, device: Any) -> None:
        # Stateless, but fitted where X lives, as every map: on another library, the
        # weights of the samples go there, so that a later transform of arrays of
        # another place is refused.
        if not is_numpy(xp):
            self.spectrum_weights_ = self._spectrum_weights()
        super()._place_fitted(xp, device)

    def _weighted_rows(self, X: Any, out: Any, weights: Any, xp: Any) -> None:
        """The features of :meth:`_dense_rows` for the rows of another library, in the
        same operations and order: ``sqrt(L x)``, then ``sqrt(x) sqrt(2 L sech(pi j L))
        [cos, sin](j L log x)``, each written into its columns of ``out``."""
        d = X.shape[1]
        L = self.sample_interval_
        root = xp.sqrt(X)
        out[:, :d] = root * weights[0]
        # log 1 = 0 where x = 0, whose features are 0 through the root
        log_x = xp.log(xp.where(X > 0, X, xp.ones_like(X)))
        for j in range(1, self.sample_steps):
            phase = log_x * (j * L)
            out[:, (2 * j - 1) * d : 2 * j * d] = xp.cos(phase) * weights[j] * root
            out[:, 2 * j * d : (2 * j + 1) * d] = xp.sin(phase) * weights[j] * root

    def get_feature_names_out(self, input_features: Any = None) -> np.ndarray:
        """Output names ``<name>_sqrt``, ``<name>_cos<j>``, ``<name>_sin<j>`` per input feature.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Only used to validate feature names with the names seen in :meth:`fit`.

        Returns
        -------
        ndarray of str objects
        """
        check_is_fitted(self, "n_features_in_")
        names = _check_feature_names_in(self, input_features, generate_names=True)
        prefix = type(self).__name__.lower()
        out = [f"{prefix}_{name}_sqrt" for name in names]
        for j in range(1, self.sample_steps):
            out += [f"{prefix}_{name}_cos{j}" for name in names]
            out += [f"{prefix}_{name}_sin{j}" for name in names]
        return np.asarray(out, dtype=object)


@register_feature_map
class SkewedChi2Sampler(BaseFeatureMap):
    """Random Fourier features of the skewed chi-squared kernel (Li, Ionescu & Sminchisescu 2010).

    ``k(x, y) = prod_i 2 sqrt(x_i + c) sqrt(y_i + c) / (x_i + y_i + 2c)`` for ``x, y > -c``.
    With ``u = log(x + c)`` it is the shift-invariant ``prod_i sech((u_i - v_i) / 2)``,
    whose spectral measure has the density ``prod_i sech(pi w_i)``; so
    ``z(x) = sqrt(2 / D) cos(W^T log(x + c) + b)`` with ``W`` from that law (inverse CDF
    ``w = log(tan(pi u / 2)) / pi``) and ``b ~ U[0, 2 pi)``.

    Parameters
    ----------
    skewedness : float, default=1.0
        The offset ``c > 0``.
    n_components : int, default=100
        Output dimension ``D``.
    random_state : int, Generator, SeedSequence, RandomState or None, default=None

    Attributes
    ----------
    kernel_ : SkewedChi2
    random_weights_ : ndarray of shape (n_features_in, n_components)
    random_offset_ : ndarray of shape (n_components,)
    n_features_in_ : int

    Notes
    -----
    Sparse input is accepted (scikit-learn's sampler refuses it): since
    ``log(x + c) = log c + log1p(x / c)``, ``W^T log(x + c) = W^T log1p(x / c) + log(c)
    W^T 1`` and only the non-zeros of ``X`` enter the product.  The output is dense.

    Variance: the estimate is unbiased with variance
    ``(1 / D) [1 + k_2(x, y) / 2 - k(x, y)^2]``, where ``k_2 = prod_i sech(u_i - v_i)`` is
    the kernel at twice the log-offset, and each product of features lies in
    ``[-2, 2]``, so ``P(|z(x) . z(y) - k| >= eps) <= 2 exp(-D eps^2 / 8)`` (Hoeffding).
    Cost ``O(nnz(X) D)``.

    Numerical limits: the features are finite for every finite input above ``-c``.  See
    docs/LIMITS.md.

    References
    ----------
    Li, F., Ionescu, C. and Sminchisescu, C. (2010). Random Fourier approximations for
    skewed multiplicative histogram kernels. DAGM.
    Rahimi, A. and Recht, B. (2007). Random features for large-scale kernel machines. NIPS.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from kernelmaps import SkewedChi2Sampler
    >>> X = load_digits().data / 16.0
    >>> Z = SkewedChi2Sampler(skewedness=0.5, n_components=256, random_state=0).fit_transform(X)
    >>> Z.shape
    (1797, 256)
    """

    _kernel_requirement: ClassVar[str] = "the skewed chi-squared kernel"

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "skewedness": [StrictInterval(Real, 0.0, None, closed="neither")],
        "n_components": [StrictInterval(Integral, 1, None, closed="left")],
        "random_state": ["random_state", np.random.Generator, np.random.SeedSequence],
    }

    def __init__(
        self, *, skewedness: float = 1.0, n_components: int = 100, random_state: Any = None
    ) -> None:
        self.skewedness = skewedness
        self.n_components = n_components
        self.random_state = random_state

    @classmethod
    def _supports_kernel(cls, kernel: Kernel) -> bool:
        return isinstance(kernel, SkewedChi2)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True
        return tags

    # Blocks of about 4 MiB of projections stay in cache from the product to the cosine,
    # and run on one thread per core.
    _parallel_blocks: ClassVar[bool] = True

    @property
    def _max_block_rows(self) -> int:  # type: ignore[override]
        return cache_block_rows(self.n_components, n_features=self.random_weights_.shape[0])

    def _check_array_values(self, X: Any, xp: Any) -> None:
        lowest = _lowest(X, xp)
        check_above(lowest, -float(self.skewedness), type(self).__name__, "skewedness")

    def _fit(self, X: Any, rng: np.random.Generator) -> None:
        self._check_array_values(X, numpy_namespace())
        d, D = X.shape[1], self.n_components
        self._check_memory(4.0 * 8.0 * d * D, f"the {d} x {D} weight matrix", "lower n_components")
        u = rng.random((d, D))
        u = np.clip(u, np.finfo(np.float64).tiny, None)
        self.kernel_ = SkewedChi2(skewedness=float(self.skewedness))
        # drawn in float64 (the same stream for either dtype), kept in the dtype of X as
        # scikit-learn does
        self.random_weights_ = (np.log(np.tan(0.5 * np.pi * u)) / np.pi).astype(X.dtype, copy=False)
        self.random_offset_ = rng.uniform(0.0, 2.0 * np.pi, size=D).astype(X.dtype, copy=False)
        self._n_features_out = D

    def _transform_constants(self, X: Any) -> tuple[Any, Any, Any, float]:
        """The namespace of ``X``, the weights in its dtype, the phase and ``sqrt(2 / D)``.

        The phase folds the ``log c`` of ``log(x + c) = log c + log1p(x / c)`` into the
        offsets: ``log(c) W^T 1 + b``, summed in the widest float of the device.
        """
        xp, device = get_namespace(X)
        if not is_numpy(xp):
            warn_if_tf32(X, "the phases of skewed chi-squared features")
        wide = accumulator_dtype(xp, device)
        phase = math.log(self.skewedness) * xp.sum(self.random_weights_, axis=0, dtype=wide)
        phase = phase + xp.astype(self.random_offset_, wide)
        W = xp.astype(self.random_weights_, X.dtype, copy=False)
        return xp, W, xp.astype(phase, X.dtype), math.sqrt(2.0 / self.n_components)

    def _transform_block(self, X: Any, out: Any, constants: tuple[Any, Any, Any, float]) -> None:
        xp, W, shift, scale = constants
        self._check_array_values(X, xp)
        if not is_numpy(xp):
            out[...] = xp.cos(xp.log1p(X / float(self.skewedness)) @ W + shift) * scale
            return
        c = out.dtype.type(self.skewedness)
        if sp.issparse(X):
            logs = X.copy()
            logs.data = np.log1p(logs.data / c)
            if logs.nnz <= _SPARSE_PRODUCT_DENSITY * logs.shape[0] * logs.shape[1]:
                out[:] = safe_sparse_dot(logs, W, dense_output=True)
            else:  # log1p(0) = 0: the densified block goes through the GEMM
                np.matmul(logs.toarray(), W, out=out)
        else:
            logs = np.divide(X, c)
            np.log1p(logs, out=logs)
            np.matmul(logs, W, out=out)
        cos_shifted_into(out, shift, scale)

    _array_api: ClassVar[bool] = True

    def _array_bytes_per_row(self, X: Any) -> float:
        # the projections, their phases and cosines, and the logs
        itemsize = np.dtype(X.dtype).itemsize
        return float((3 * self.n_components + 2 * X.shape[1]) * itemsize)
