"""Kernel base classes, the name registry and the resolution of ``kernel=`` arguments.

A kernel is a small frozen dataclass: it evaluates ``k(X, Y)`` exactly and declares, by
the base classes it derives from, what the feature maps need from it:

* :class:`ShiftInvariantKernel` -- a spectral measure (Bochner's theorem): frequencies
  can be sampled (Monte Carlo), produced from points of the unit cube by an inverse CDF
  (quasi-Monte Carlo) and, when the measure is radial, split into a uniform direction and
  a norm (orthogonal random features).
* :class:`BinnableKernel` -- a product of one-dimensional kernels that are convex on
  ``[0, inf)``, with the law of the grid pitch used by random binning features.
"""

from __future__ import annotations

import dataclasses
import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from numbers import Integral
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.utils import gen_batches

from .._array_api import device_of, get_namespace, host_dtype, is_numpy, on_host, warn_if_tf32
from .._numerics import is_finite, largest_magnitude
from .._suggest import did_you_mean
from ..exceptions import NonFiniteOutputError

__all__ = [
    "BinnableKernel",
    "Kernel",
    "ShiftInvariantKernel",
    "get_kernel_class",
    "kernel_names",
    "make_kernel",
    "register_kernel",
    "resolve_kernel",
]

_REGISTRY: dict[str, type[Kernel]] = {}

#: Names refused because they mean another kernel in scikit-learn than the one
#: kernelmaps gave them: name -> the one-line message naming both kernels.
AMBIGUOUS_NAMES: dict[str, str] = {
    "additive_chi2": (
        "kernel 'additive_chi2' is ambiguous: scikit-learn's pairwise additive_chi2 is "
        "-sum (x - y)^2 / (x + y) (not positive semidefinite; here "
        "'sklearn_additive_chi2'), while AdditiveChi2Sampler approximates the positive "
        "definite sum 2 x y / (x + y) (here 'additive_chi2_pd'); choose one of those names."
    ),
}


def register_kernel(*names: str) -> Callable[[type[Kernel]], type[Kernel]]:
    """Class decorator registering a kernel class under one or more names.

    Examples
    --------
    >>> import dataclasses
    >>> from kernelmaps.kernels import Gaussian, register_kernel
    >>> @register_kernel("my_rbf")
    ... @dataclasses.dataclass(frozen=True)
    ... class MyRBF(Gaussian):
    ...     pass
    >>> MyRBF.names
    ('my_rbf',)
    >>> from kernelmaps.kernels._base import _REGISTRY
    >>> del _REGISTRY["my_rbf"]  # (keeps this example without side effect)
    """

    def decorator(cls: type[Kernel]) -> type[Kernel]:
        for name in names:
            key = name.lower()
            if key in AMBIGUOUS_NAMES:
                raise ValueError(f"kernel name {name!r} is reserved: {AMBIGUOUS_NAMES[key]}")
            if key in _REGISTRY and _REGISTRY[key] is not cls:
                raise ValueError(f"kernel name {name!r} is already registered.")
            _REGISTRY[key] = cls
        cls.names = tuple(n.lower() for n in names)
        return cls

    return decorator


def kernel_names() -> list[str]:
    """Names accepted by ``kernel=`` (and by :func:`make_kernel`).

    Examples
    --------
    >>> from kernelmaps.kernels import kernel_names
    >>> kernel_names()[:4]
    ['additive_chi2_pd', 'cauchy', 'chi2', 'cosine']
    """
    return sorted(_REGISTRY)


def get_kernel_class(name: str) -> type[Kernel]:
    """Kernel class registered under ``name`` (case-insensitive).

    Examples
    --------
    >>> from kernelmaps.kernels import get_kernel_class
    >>> get_kernel_class("RBF").__name__
    'Gaussian'
    """
    if name.lower() in AMBIGUOUS_NAMES:
        raise ValueError(AMBIGUOUS_NAMES[name.lower()])
    try:
        return _REGISTRY[name.lower()]
    except KeyError:
        raise ValueError(
            f"Unknown kernel {name!r}. Known kernels: {', '.join(kernel_names())}; "
            f"or pass a kernel object from kernelmaps.kernels.{did_you_mean(name, kernel_names())}"
        ) from None


def _as_float_array(X: Any, name: str = "X") -> np.ndarray | sp.spmatrix:
    """``X`` as a float64 array or CSR matrix with finite values, or a clear error."""
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        # scikit-learn's sparse distance kernels take 32-bit indices only.
        if X.nnz < np.iinfo(np.int32).max and X.indices.dtype != np.int32:
            X = sp.csr_matrix(
                (X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32)), shape=X.shape
            )
    else:
        X = np.asarray(X, dtype=np.float64)
    _check_finite_input(X.data if sp.issparse(X) else X, name)
    return X


def _check_finite_input(values: Any, name: str) -> None:
    """Refuse NaN or infinite input values (any library), with the one message."""
    if is_finite(values):
        return
    xp, _ = get_namespace(values)
    what = "NaN" if bool(xp.any(xp.isnan(values))) else "infinity"
    raise ValueError(
        f"Input {name} contains {what}; kernels are defined on finite values only: "
        "impute the missing values (e.g. with sklearn.impute.SimpleImputer) or drop "
        "those rows."
    )


def _as_input(xp: Any, X: Any, name: str = "X") -> Any:
    """``X`` validated for a kernel evaluating in ``xp``: on NumPy, a float64 array or CSR
    matrix (:func:`_as_float_array`); otherwise an array of ``xp`` itself (in its dtype, on
    its device), with finite values."""
    if is_numpy(xp):
        return _as_float_array(X, name)
    if get_namespace(X)[0] is not xp:
        raise ValueError(
            f"{name} is not an array of {xp.__name__} while the other input is: a kernel "
            "matrix takes X and Y of one library on one device; move them to one place."
        )
    _check_finite_input(X, name)
    return X


def _diag_input(xp: Any, X: Any) -> Any:
    """The rows of ``kernel.diag(X)``: 2D and finite (:func:`_as_input`), or a clear error."""
    X_ = _as_input(xp, X)
    if X_.ndim != 2:
        raise ValueError(
            f"Expected a 2D array of rows (n_samples, n_features), got shape "
            f"{tuple(X_.shape)}; reshape your data, e.g. with array.reshape(1, -1) for a "
            "single row."
        )
    return X_


def _check_pair(kernel: Kernel, X: Any, Y: Any) -> None:
    """Refuse inputs that do not form a kernel matrix (the one set of messages)."""
    if X.ndim != 2 or Y.ndim != 2:
        raise ValueError(
            f"Expected 2D arrays, got X with shape {tuple(X.shape)} and Y with shape "
            f"{tuple(Y.shape)}."
        )
    if X.shape[1] != Y.shape[1]:
        raise ValueError(f"X has {X.shape[1]} features but Y has {Y.shape[1]}; they must match.")
    if X.shape[0] == 0 or Y.shape[0] == 0:
        raise ValueError(
            f"{kernel!r}: X has {X.shape[0]} rows and Y has {Y.shape[0]}; a kernel matrix "
            "needs at least one row in each."
        )


def _result_dtype(X: Any, Y: Any) -> type[np.floating]:
    if getattr(X, "dtype", None) == np.float32 and getattr(Y, "dtype", None) == np.float32:
        return np.float32
    return np.float64


def _per_row(xp: Any, X: Any, value: float) -> Any:
    """``value`` once per row of the validated ``X`` (dense or sparse), in its namespace,
    dtype and device."""
    return xp.full(int(X.shape[0]), value, dtype=X.dtype, device=get_namespace(X)[1])


#: Values of the three-dimensional temporaries of one block of
#: :func:`coordinatewise_sum` (32 MiB in float64).
ARRAY_BLOCK_ELEMENTS = 1 << 22

#: Rows of X per block of the NumPy route of :func:`coordinatewise_sum`.
_BLOCK = 256


def coordinatewise_sum(xp: Any, X: Any, Y: Any, term: Callable[[Any, Any], Any]) -> Any:
    """``S[a, b] = sum_i term(X[a, i], Y[b, i])`` for arrays of ``xp``, in their dtype: the
    kernels that are not a function of a matrix product (the Laplacian's L1 distance, the
    Cauchy product, the chi-squared sums).

    On NumPy (``X`` and ``Y`` dense or sparse float64) ``term`` takes a column of a row
    block of ``X`` (``(rows, 1)``) and a row of ``Y``'s column (``(1, m)``), and the
    coordinates are added one after the other, in place.  Otherwise ``term`` takes
    broadcast arrays (``(rows, 1, c)`` and ``(1, m, c)``) and is applied to blocks of
    ``rows x m x c <= ARRAY_BLOCK_ELEMENTS`` values (``c`` coordinates of ``rows`` rows of
    ``X`` against every row of ``Y``; one row and one coordinate at least), so that the
    memory stays that of the output plus a block whatever ``n``, ``m`` and ``d``.

    Examples
    --------
    >>> import array_api_strict as xp
    >>> from kernelmaps.kernels._base import coordinatewise_sum
    >>> X = xp.asarray([[0.0, 1.0], [2.0, 2.0]])
    >>> S = coordinatewise_sum(xp, X, X, lambda x, y: xp.abs(x - y))
    >>> [[float(v) for v in row] for row in (S[0, :], S[1, :])]
    [[0.0, 3.0], [3.0, 0.0]]
    """
    if is_numpy(xp):
        Yd = Y.toarray() if sp.issparse(Y) else np.asarray(Y)
        K = np.zeros((X.shape[0], Yd.shape[0]))
        for rows in gen_batches(X.shape[0], _BLOCK):
            Xb = X[rows].toarray() if sp.issparse(X) else X[rows]
            acc = K[rows]
            for j in range(Xb.shape[1]):
                acc += term(Xb[:, j][:, None], Yd[:, j][None, :])
        return K
    n, d = int(X.shape[0]), int(X.shape[1])
    m = int(Y.shape[0])
    width = max(1, min(d, ARRAY_BLOCK_ELEMENTS // max(m, 1)))
    step = max(1, ARRAY_BLOCK_ELEMENTS // (max(m, 1) * width))
    out = xp.empty((n, m), dtype=X.dtype, device=device_of(X))
    for start in range(0, n, step):
        stop = min(start + step, n)
        Xb = X[start:stop, :]
        total = None
        for j in range(0, d, width):
            part = xp.sum(term(Xb[:, None, j : j + width], Y[None, :, j : j + width]), axis=2)
            total = part if total is None else total + part
        out[start:stop, :] = total
    return out


def on_host_float64(evaluate: Callable[..., Any], X: Any, Y: Any) -> Any:
    """``evaluate(X, Y)`` for a function of float64 NumPy arrays (SciPy's, scikit-learn's):
    NumPy input (validated float64, dense or sparse) goes to it as it is; arrays of another
    library are computed on the host in float64 and the result moved back, in their dtype
    (:func:`~kernelmaps._array_api.on_host`).  ``Y is X`` stays so."""

    def host(A: Any, B: Any = None) -> Any:
        A = A.astype(np.float64, copy=False)
        return evaluate(A, A if B is None else B.astype(np.float64, copy=False))

    return on_host(host, X) if Y is X else on_host(host, X, Y)


@dataclasses.dataclass(frozen=True)
class Kernel(ABC):
    """A positive-definite kernel ``k(x, y)`` evaluated exactly.

    Subclasses are frozen dataclasses whose fields are the kernel's parameters.  A
    ``gamma`` of ``None`` means ``1 / n_features``, as in ``sklearn.metrics.pairwise``;
    :meth:`resolve` fills it in once the number of features is known.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import Gaussian
    >>> k = Gaussian(gamma=0.5)
    >>> np.round(k(np.array([[0.0, 1.0], [1.0, 1.0]])), 4).tolist()
    [[1.0, 0.6065], [0.6065, 1.0]]
    >>> k.params
    {'gamma': 0.5}
    """

    names: ClassVar[tuple[str, ...]] = ()

    def __call__(self, X: Any, Y: Any = None) -> Any:
        """Kernel matrix ``K[i, j] = k(X[i], Y[j])`` (``Y = X`` when omitted).

        NumPy input (and lists, sparse matrices) is computed in float64 and returned as
        float32 only when both inputs are float32.  Arrays of another library (a tensor, a
        CuPy array) give an array of theirs, on their device, computed in their dtype.
        """
        xp, _ = get_namespace(X, Y)
        X_ = _as_input(xp, X)
        Y_ = X_ if Y is None else _as_input(xp, Y, "Y")
        _check_pair(self, X_, Y_)
        kernel = self.resolve(int(X_.shape[1]))
        if is_numpy(xp):
            dtype = _result_dtype(X, X if Y is None else Y)
        else:
            dtype = X_.dtype
            warn_if_tf32(X_, "the kernel matrices k(X, Y)")
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            K = kernel._evaluate(xp, X_, Y_)
            if is_numpy(xp):
                K = K.astype(dtype, copy=False)
        if not is_finite(K):
            kernel._refuse_overflow(X_, Y_, dtype)
        return K

    def _refuse_overflow(self, X: Any, Y: Any, dtype: Any = np.float64) -> None:
        """Raise :class:`~kernelmaps.exceptions.NonFiniteOutputError` for a kernel matrix
        that overflowed on the inputs ``X`` and ``Y`` (of any library)."""
        largest = max(largest_magnitude(X), largest_magnitude(Y))
        dtype = host_dtype(dtype)
        fixes = "rescale the data"
        if hasattr(self, "gamma"):
            fixes += " or use a smaller gamma"
        if dtype == np.float32:
            fixes += " or pass float64 data"
        raise NonFiniteOutputError(
            f"{self!r}: the kernel matrix has non-finite values, the computation overflowed "
            f"{dtype.name} for inputs up to |x| = {largest:.3g}; {fixes} "
            "(limits: docs/LIMITS.md)."
        )

    @abstractmethod
    def _evaluate(self, xp: Any, X: Any, Y: Any) -> Any:
        """Kernel matrix of validated inputs (resolved parameters) in the namespace ``xp``:
        float64 NumPy arrays or CSR matrices, or arrays of another library (computed in
        their dtype, on their device)."""

    def diag(self, X: Any) -> Any:
        """``k(x, x)`` for every row of ``X``, without forming the kernel matrix.

        In float64 for NumPy input; an array of another library gives an array of its own,
        on its device, in its dtype.
        """
        xp, _ = get_namespace(X)
        X_ = _diag_input(xp, X)
        kernel = self.resolve(int(X_.shape[1]))
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            out = kernel._diag(xp, X_)
        if not is_finite(out):
            kernel._refuse_overflow(X_, X_, X_.dtype)
        return out

    def _diag(self, xp: Any, X: Any) -> Any:
        """``k(x, x)`` of validated rows ``X`` (:meth:`diag`; resolved parameters).  This
        generic version evaluates 128 x 128 diagonal blocks of ``K``; kernels with a closed
        form override it."""
        out = _per_row(xp, X, 0.0)
        for start in range(0, int(X.shape[0]), 128):
            block = X[start : start + 128, :]
            out[start : start + block.shape[0]] = xp.linalg.diagonal(
                self._evaluate(xp, block, block)
            )
        return out

    def resolve(self, n_features: int) -> Kernel:
        """Copy with data-dependent defaults (``gamma=None``) filled in."""
        _check_n_features(self, n_features)
        if getattr(self, "gamma", 0.0) is None:
            return dataclasses.replace(self, gamma=1.0 / n_features)  # type: ignore[call-arg]
        return self

    @property
    def _g(self) -> float:
        """The resolved ``gamma`` as a float (after :meth:`resolve`)."""
        gamma = getattr(self, "gamma", None)
        if gamma is None:
            raise ValueError(f"{self!r}: gamma is not resolved; call resolve(n_features) first.")
        return float(gamma)

    @property
    def params(self) -> dict[str, Any]:
        """The kernel's parameters as a dictionary."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


def _finite_number(value: Any) -> bool:
    """Whether the real number ``value`` is finite as a float (a Python int beyond
    float64's range, such as ``10**400``, is not; ``2**64`` is)."""
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def _finite_real(value: Any) -> bool:
    """Whether ``value`` is a finite int or float (NumPy's too), not a bool."""
    return (
        not isinstance(value, bool)
        and isinstance(value, (int, float, np.integer, np.floating))
        and _finite_number(value)
    )


def _check_n_features(kernel: Kernel, n_features: Any) -> None:
    """Refuse a number of input columns that is not an int >= 1 (``resolve``)."""
    if isinstance(n_features, bool) or not isinstance(n_features, Integral) or n_features < 1:
        raise ValueError(
            f"{kernel!r}: n_features must be an int >= 1 (the number of columns of the "
            f"data); got {n_features!r}."
        )


def _check_positive(owner: str, name: str, value: Any, allow_none: bool = True) -> None:
    if value is None and allow_none:
        return
    if not _finite_real(value) or value <= 0:
        raise ValueError(f"{owner}: {name} must be a positive finite number; got {value!r}.")


class ShiftInvariantKernel(Kernel):
    """A kernel ``k(x, y) = k(x - y)`` with ``k(0) = 1``, the Fourier transform of a
    probability measure ``p(w)`` (Bochner's theorem; Rahimi & Recht 2007):

    .. math:: k(x - y) = \\mathbb{E}_{w \\sim p}[\\cos(w^T (x - y))].

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import Gaussian
    >>> W = Gaussian(gamma=0.5).sample_frequencies(3, 2, np.random.default_rng(0))
    >>> W.shape
    (3, 2)
    """

    #: True when p(w) depends on ``|w|`` only (orthogonal random features apply).
    radial: ClassVar[bool] = False

    def _diag(self, xp: Any, X: Any) -> Any:
        return _per_row(xp, X, 1.0)

    @abstractmethod
    def sample_frequencies(
        self, n_frequencies: int, n_features: int, rng: np.random.Generator
    ) -> np.ndarray:
        """``n_frequencies`` i.i.d. draws from the spectral measure, shape (n, n_features)."""

    @abstractmethod
    def n_uniforms(self, n_features: int) -> int:
        """Dimension of the unit cube that :meth:`frequencies_from_uniform` maps from."""

    @abstractmethod
    def frequencies_from_uniform(self, U: np.ndarray, n_features: int) -> np.ndarray:
        """Map points ``U`` of ``(0, 1)^n_uniforms`` to frequencies (inverse CDF).

        If ``U`` is uniform on the cube the result has the law of the spectral measure, so
        low-discrepancy points give quasi-Monte Carlo frequencies (Yang et al. 2014).
        Callers keep ``U`` away from 0 and 1 (the inverse CDFs are infinite there).
        """

    def sample_frequency_norms(
        self, n_frequencies: int, n_features: int, rng: np.random.Generator
    ) -> np.ndarray:
        """Norms ``|w|`` of i.i.d. frequencies, for radial measures only."""
        raise NotImplementedError(
            f"{self!r} has a spectral measure that is not radial; orthogonal random "
            "features need a radial one (Gaussian or Matern)."
        )


class BinnableKernel(Kernel):
    """``k(x, y) = prod_j k_j(|x_j - y_j|)`` with each ``k_j`` convex on ``[0, inf)``.

    Random binning (Rahimi & Recht 2007, Algorithm 2) draws a grid pitch ``delta`` with
    density ``delta * k_j''(delta)``: two points fall into the same randomly shifted bin
    with probability ``k(x, y)``.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import Laplacian
    >>> Laplacian(gamma=0.5).sample_bin_pitch(4, 2, np.random.default_rng(0)).shape
    (4, 2)
    """

    @abstractmethod
    def sample_bin_pitch(
        self, n_grids: int, n_features: int, rng: np.random.Generator
    ) -> np.ndarray:
        """Grid pitches, shape (n_grids, n_features), from the pitch law above."""


def make_kernel(kernel: str | Kernel, **params: Any) -> Kernel:
    """Build a kernel from its name and parameters (``make_kernel("rbf", gamma=0.1)``).

    A kernel object is returned unchanged; passing parameters with it is an error.

    Examples
    --------
    >>> from kernelmaps.kernels import make_kernel
    >>> make_kernel("rbf", gamma=0.1)
    Gaussian(gamma=0.1)
    """
    if isinstance(kernel, Kernel):
        given = {k: v for k, v in params.items() if v is not None}
        if given:
            raise ValueError(
                f"Kernel parameters {sorted(given)} were given together with the kernel "
                f"object {kernel!r}; set them on the object instead."
            )
        return kernel
    if not isinstance(kernel, str):
        raise TypeError(
            f"kernel must be a kernel name ({', '.join(kernel_names())}) or a "
            f"kernelmaps.kernels.Kernel object; got {kernel!r}."
        )
    cls = get_kernel_class(kernel)
    accepted = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(k for k, v in params.items() if k not in accepted and v is not None)
    if unknown:
        raise ValueError(
            f"Kernel {kernel!r} does not take parameter(s) {unknown}; it takes "
            f"{sorted(accepted) or 'no parameters'}."
        )
    given = {k: v for k, v in params.items() if k in accepted and v is not None}
    missing = [
        f.name
        for f in dataclasses.fields(cls)
        if f.name not in given
        and f.default is dataclasses.MISSING
        and f.default_factory is dataclasses.MISSING
    ]
    if missing:
        raise ValueError(
            f"Kernel {kernel!r} needs parameter(s) {missing}, which have no default; give "
            f"them (e.g. kernel_params={{{missing[0]!r}: ...}}) or pass a "
            f"{cls.__name__}(...) object as the kernel."
        )
    return cls(**given)


def resolve_kernel(
    kernel: str | Kernel,
    n_features: int,
    kernel_params: Mapping[str, Any] | None = None,
    **named: Any,
) -> Kernel:
    """Kernel object for an estimator's ``kernel=``, named parameters and ``kernel_params``.

    ``named`` holds the estimator's own keyword parameters (``gamma=...``); ``None`` means
    not given.  Defaults depending on the data (``gamma=None``) are filled in from
    ``n_features``.

    Examples
    --------
    >>> from kernelmaps.kernels import resolve_kernel
    >>> resolve_kernel("poly", 4, {"degree": 2})
    Polynomial(degree=2, gamma=0.25, coef0=1.0)
    """
    params = dict(kernel_params or {})
    for key, value in named.items():
        if value is None:
            continue
        if key in params and params[key] != value:
            raise ValueError(
                f"{key} is given both as a parameter ({value!r}) and in kernel_params "
                f"({params[key]!r}); give it once."
            )
        params[key] = value
    return make_kernel(kernel, **params).resolve(n_features)
