"""The ``kernel=`` argument of the estimators: its constraints, its resolution, and the
check of the kernel matrices a user callable or a precomputed input provides.

Every estimator taking a kernel splices :func:`kernel_parameter_constraints` into its
``_parameter_constraints`` and calls :func:`resolve_estimator_kernel` in ``fit``; every
place that receives a kernel matrix it did not compute itself checks it with
:func:`check_kernel_matrix`.  A kernel name therefore means one formula with one set of
defaults (those of the kernel class, e.g. :class:`~kernelmaps.kernels.Polynomial`'s
``degree=3, gamma=1/n_features, coef0=1``) in every estimator.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Mapping
from numbers import Integral, Real
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import InvalidParameterError, StrOptions

from .._array_api import get_namespace, host_dtype, supports_float64
from .._numerics import is_finite
from .._suggest import did_you_mean
from .._validation import StrictInterval
from ..exceptions import NonFiniteOutputError
from ._base import (
    AMBIGUOUS_NAMES,
    Kernel,
    get_kernel_class,
    kernel_names,
    resolve_kernel,
)

__all__ = [
    "CallableKernel",
    "PairCallableKernel",
    "StrictInterval",
    "check_data_gamma",
    "check_kernel_matrix",
    "kernel_from_params",
    "kernel_parameter_constraints",
    "refuse_named_with_precomputed",
    "resolve_estimator_kernel",
    "scale_gamma",
]


#: The named kernel parameters an estimator may take, with their constraints.  They are
#: those of the kernel classes (``Polynomial``: a real degree > 0; every ``gamma`` > 0),
#: so that a bad value is refused before ``fit`` does any work.  ``coef0`` is any finite
#: number here (the sigmoid kernel takes negative ones); a negative ``coef0`` for another
#: kernel is refused by :func:`resolve_estimator_kernel` with the same kind of message.
_NAMED_CONSTRAINTS: dict[str, list[Any]] = {
    "gamma": [StrictInterval(Real, 0.0, None, closed="neither"), None],
    "degree": [StrictInterval(Real, 0.0, None, closed="neither"), None],
    "coef0": [StrictInterval(Real, None, None, closed="neither"), None],
}


class IntegerDegree(StrictInterval):
    """The ``degree`` of a map that expands the kernel into integer powers: an int >= 1.

    Its description names the fix for a non-integer degree, in the one-line
    ``InvalidParameterError`` of scikit-learn's parameter validation.

    Examples
    --------
    >>> from kernelmaps.kernels._argument import IntegerDegree
    >>> IntegerDegree().is_satisfied_by(3), IntegerDegree().is_satisfied_by(3.5)
    (True, False)
    """

    def __init__(self) -> None:
        super().__init__(Integral, 1, None, closed="left")

    def __str__(self) -> str:
        return (
            f"{super().__str__()} (this map expands the kernel into integer powers; "
            "Nystroem takes a non-integer degree)"
        )


class KernelNameOptions(StrOptions):
    """The kernel names of the registry (read when checked, so later registrations count).

    Names are matched case-insensitively, as :func:`~kernelmaps.kernels.make_kernel`
    does.  An unknown name is refused with the list of known names.

    Parameters
    ----------
    extra : collection of str, default=()
        Further accepted strings (``"precomputed"``), matched exactly.

    Examples
    --------
    >>> from kernelmaps.kernels._argument import KernelNameOptions
    >>> KernelNameOptions().is_satisfied_by("RBF")
    True
    """

    def __init__(self, extra: Collection[str] = ()) -> None:
        self.extra = tuple(extra)
        super().__init__(set(self.extra))

    @property
    def options(self) -> Any:
        return dict.fromkeys([*kernel_names(), *self.extra]).keys()

    @options.setter
    def options(self, value: Any) -> None:  # set by the base class; the registry decides
        pass

    def is_satisfied_by(self, val: Any) -> bool:
        if not isinstance(val, str):
            return False
        if val in self.extra or val.lower() in kernel_names():
            return True
        if val.lower() in AMBIGUOUS_NAMES:
            raise InvalidParameterError(AMBIGUOUS_NAMES[val.lower()])
        if val == "precomputed":
            raise InvalidParameterError(
                "kernel='precomputed' is accepted by Nystroem only: this estimator evaluates "
                "the kernel on new points, so it needs a kernel name, a Kernel object or a "
                "callable; use Nystroem(kernel='precomputed') for a precomputed matrix."
            )
        extra = "".join(f", {name!r}" for name in self.extra)
        raise InvalidParameterError(
            f"Unknown kernel {val!r}. Known kernels: {', '.join(kernel_names())}{extra}; "
            "or pass a kernel object from kernelmaps.kernels."
            + did_you_mean(val, [*kernel_names(), *self.extra])
        )

    def __str__(self) -> str:
        return f"a kernel name among {{{', '.join(repr(o) for o in self.options)}}}"


def kernel_parameter_constraints(
    *,
    named: Iterable[str] = ("gamma",),
    kernel_params: bool = True,
    callable_ok: bool = False,
    precomputed_ok: bool = False,
    gamma_scale: bool = False,
    integer_degree: bool = False,
) -> dict[str, list[Any]]:
    """The ``_parameter_constraints`` entries of an estimator's kernel arguments.

    Parameters
    ----------
    named : iterable of {"gamma", "degree", "coef0"}, default=("gamma",)
        The kernel parameters the estimator takes as keyword arguments.
    kernel_params : bool, default=True
        Whether the estimator takes a ``kernel_params`` dict.
    callable_ok : bool, default=False
        Whether ``kernel`` may be a callable returning the kernel matrix.
    precomputed_ok : bool, default=False
        Whether ``kernel="precomputed"`` is accepted.
    gamma_scale : bool, default=False
        Whether ``gamma="scale"`` is accepted (the estimator then passes its training
        data to :func:`resolve_estimator_kernel`, see :func:`scale_gamma`).
    integer_degree : bool, default=False
        Whether ``degree`` must be an int >= 1 (``IntegerDegree``: the maps that
        expand the kernel into integer powers) rather than a real > 0.

    Returns
    -------
    dict
        ``{"kernel": [...], <named>: [...], "kernel_params": [dict, None]}``.

    Examples
    --------
    >>> from kernelmaps.kernels import kernel_parameter_constraints
    >>> sorted(kernel_parameter_constraints(named=("gamma", "degree")))
    ['degree', 'gamma', 'kernel', 'kernel_params']
    """
    kernel: list[Any] = [KernelNameOptions(("precomputed",) if precomputed_ok else ()), Kernel]
    if callable_ok:
        kernel.append(callable)
    constraints: dict[str, list[Any]] = {"kernel": kernel}
    for name in named:
        constraints[name] = list(_NAMED_CONSTRAINTS[name])
        if name == "gamma" and gamma_scale:
            constraints[name].append(StrOptions({"scale"}))
        if name == "degree" and integer_degree:
            constraints[name] = [IntegerDegree(), None]
    if kernel_params:
        constraints["kernel_params"] = [dict, None]
    return constraints


def check_kernel_matrix(
    K: Any,
    n_rows: int,
    n_cols: int | None,
    *,
    source: str = "The kernel callable",
    what: str = "kernel matrix k(X, Y)",
    finite: bool = True,
) -> np.ndarray:
    """``K`` as a dense float64 array of shape ``(n_rows, n_cols)`` with finite values, or
    a clear error (:class:`~kernelmaps.exceptions.NonFiniteOutputError` for NaN or inf).

    Parameters
    ----------
    K : array-like or sparse matrix
        What a user callable (or a precomputed input) returned.
    n_rows, n_cols : int
        The expected shape; ``n_cols=None`` accepts any number of columns of a 2D array.
    source : str, default="The kernel callable"
        What returned ``K``, for the message.
    what : str, default="kernel matrix k(X, Y)"
        What it must return, for the message.
    finite : bool, default=True
        Refuse NaN and inf; ``False`` leaves them to a caller that explains them better
        (an overflow of the data it knows about).

    Returns
    -------
    ndarray of shape (n_rows, n_cols)

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import check_kernel_matrix
    >>> check_kernel_matrix(np.eye(2), 2, 2).shape
    (2, 2)
    >>> check_kernel_matrix(np.eye(2), 2, 3)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: The kernel callable returned an array of shape (2, 2) for inputs with 2 and 3 ...
    """
    if sp.issparse(K):
        K = K.toarray()
    K = np.asarray(K, dtype=np.float64)
    if K.ndim != 2 or K.shape[0] != n_rows or (n_cols is not None and K.shape[1] != n_cols):
        if n_cols is None:
            inputs, expected = f"{n_rows} rows", f"a 2D array with {n_rows} rows, the {what}"
        else:
            inputs = f"inputs with {n_rows} and {n_cols} rows"
            expected = f"the {n_rows} x {n_cols} {what}"
        raise ValueError(
            f"{source} returned an array of shape {K.shape} for {inputs}; it must return "
            f"{expected}."
        )
    if finite and not is_finite(K):
        raise NonFiniteOutputError(
            f"{source} returned NaN or infinite values in the {what} ({K.shape[0]} x "
            f"{K.shape[1]}); a kernel must give finite values: check the kernel and the "
            "scale of the data (limits: docs/LIMITS.md)."
        )
    return K


class CallableKernel:
    """A user callable ``k(X, Y, **params)``, checked to return a matrix of the right shape.

    Picklable whenever ``func`` is (a module-level function, not a lambda).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import CallableKernel
    >>> k = CallableKernel(lambda X, Y, c: X @ Y.T + c, {"c": 1.0})
    >>> k(np.ones((2, 3)), np.ones((4, 3))).shape
    (2, 4)
    """

    def __init__(self, func: Callable[..., Any], params: Mapping[str, Any] | None) -> None:
        self.func = func
        self.params = dict(params or {})

    def __call__(self, X: Any, Y: Any) -> np.ndarray:
        return check_kernel_matrix(self.func(X, Y, **self.params), X.shape[0], Y.shape[0])

    def __repr__(self) -> str:
        return f"callable kernel {getattr(self.func, '__name__', self.func)!r}"


class PairCallableKernel:
    """A user callable ``k(x, y, **params) -> float`` on one pair of rows, scikit-learn's
    convention for a callable kernel, evaluated pair by pair into the kernel matrix.

    ``x`` and ``y`` are 1D float64 rows (a sparse row is made dense).  When ``Y`` is
    ``X`` (the same object) only the pairs ``i <= j`` are evaluated and mirrored, as
    scikit-learn does: ``n (n + 1) / 2`` calls.  Otherwise ``n_X * n_Y`` Python calls:
    about a microsecond each at best, so a map over ``n`` rows and ``m`` landmarks costs
    ``n m`` calls; prefer a callable on whole matrices (or a kernel name) when speed
    matters.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import PairCallableKernel
    >>> k = PairCallableKernel(lambda x, y, c: x @ y + c, {"c": 1.0})
    >>> k(np.ones((2, 3)), np.ones((4, 3))).tolist()[0]
    [4.0, 4.0, 4.0, 4.0]
    """

    def __init__(self, func: Callable[..., Any], params: Mapping[str, Any] | None) -> None:
        self.func = func
        self.params = dict(params or {})

    def _rows(self, X: Any) -> np.ndarray:
        if sp.issparse(X):
            return np.asarray(X.toarray(), dtype=np.float64)
        return np.asarray(X, dtype=np.float64)

    def _value(self, x: np.ndarray, y: np.ndarray) -> float:
        value = self.func(x, y, **self.params)
        try:
            return float(value)
        except (TypeError, ValueError):
            shape = getattr(value, "shape", None)
            raise ValueError(
                f"The kernel callable {getattr(self.func, '__name__', self.func)!r} "
                f"returned {type(value).__name__}"
                f"{'' if shape is None else f' of shape {shape}'} for one pair of rows; with "
                "kernel_call='pair' it must return one number k(x, y)."
            ) from None

    def __call__(self, X: Any, Y: Any) -> np.ndarray:
        same = Y is X
        A = self._rows(X)
        B = A if same else self._rows(Y)
        K = np.empty((A.shape[0], B.shape[0]))
        if same:
            for i in range(A.shape[0]):
                for j in range(i, A.shape[0]):
                    K[i, j] = K[j, i] = self._value(A[i], A[j])
        else:
            for i in range(A.shape[0]):
                for j in range(B.shape[0]):
                    K[i, j] = self._value(A[i], B[j])
        return check_kernel_matrix(K, A.shape[0], B.shape[0])

    def __repr__(self) -> str:
        return f"pairwise callable kernel {getattr(self.func, '__name__', self.func)!r}"


#: Margin of a data-driven ``gamma`` inside the dtype's range of normal numbers.
_GAMMA_MARGIN = 2.0**20


def check_data_gamma(gamma: float, rule: str, largest: float, dtype: Any = np.float64) -> float:
    """``gamma`` from a data-driven rule, or a clear error where the data's scale breaks it.

    The rules (``gamma="scale"``, :func:`kernelmaps.bandwidth.gamma_from_data`) give
    ``gamma ~ 1 / s^2``, ``s`` a typical distance of the data.  ``gamma`` is accepted in
    ``[tiny * 2^20, max / 2^20]``, ``tiny`` the smallest normal number of ``dtype`` (float32
    or float64) and ``max`` its largest: a ``gamma`` below ``tiny`` is subnormal (fewer
    significant bits, so maps scaled by it lose their row-locality), and since
    ``tiny * max ~ 4``, a ``gamma`` below ``tiny * 2^20`` means typical squared distances
    above ``max / 2^22``: those of rows ``2^11`` times farther apart than typical, and the
    squared norms of the rows, overflow.  The upper bound is the mirror image (squared
    distances below ``2^20 tiny``, near underflow).

    Parameters
    ----------
    gamma : float
        The rule's ``gamma``, computed in float64.
    rule : str
        The rule, for the message (``"gamma='scale'"``).
    largest : float
        ``max |x|`` of the data, for the message.
    dtype : numpy dtype, default=numpy.float64
        The data's float dtype (float32 data has the narrower range).

    Returns
    -------
    float

    Raises
    ------
    NonFiniteOutputError
        ``gamma`` is outside that range (a ``ValueError``), naming the fix: rescale the
        data or give ``gamma`` explicitly.

    Examples
    --------
    >>> from kernelmaps.kernels._argument import check_data_gamma
    >>> check_data_gamma(0.5, "gamma='scale'", 1.0)
    0.5
    >>> check_data_gamma(3e-309, "gamma='scale'", 1e154)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    kernelmaps.exceptions.NonFiniteOutputError: gamma='scale' gives gamma = 3e-309 ...
    """
    info = np.finfo(np.float32 if np.dtype(dtype) == np.float32 else np.float64)
    low = float(info.tiny) * _GAMMA_MARGIN
    high = float(info.max) / _GAMMA_MARGIN
    if not low <= gamma <= high:  # NaN too
        raise NonFiniteOutputError(
            f"{rule} gives gamma = {gamma:.3g} for data of magnitude {largest:.3g}, outside "
            f"[{low:.3g}, {high:.3g}] where the {info.dtype.name} kernel computations keep "
            "their precision and range; rescale the data (e.g. with "
            "sklearn.preprocessing.StandardScaler) or give gamma explicitly."
        )
    return gamma


def scale_gamma(X: Any) -> float:
    """``gamma="scale"``: ``1 / (n_features * X.var())``, as scikit-learn's ``SVC`` and
    ``RBFSampler`` compute it (``1.0`` when ``X`` has zero variance).

    The variance is over every entry of ``X`` (zeros included for sparse input).  It is
    computed on ``X / max|x|`` so that it does not overflow; a ``gamma`` outside the
    range :func:`check_data_gamma` accepts (float64 data beyond about ``1e150`` or below
    about ``1e-150``) is refused with the fix.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.kernels import scale_gamma
    >>> scale_gamma(np.array([[0.0], [1.0]]))
    4.0
    """
    xp, device = get_namespace(X)
    values = X.data if sp.issparse(X) else xp.asarray(X)
    top = float(xp.max(xp.abs(values))) if math.prod(values.shape) else 0.0
    if top == 0.0 or not np.isfinite(top):
        return 1.0
    if sp.issparse(X):
        Xs = sp.csr_matrix(X, dtype=np.float64) / top
        mean = float(Xs.mean())
        var = float(Xs.multiply(Xs).mean()) - mean * mean
    else:  # in float64 where the device has it (NumPy does)
        work = xp.float64 if supports_float64(xp, device) else xp.float32
        var = float(xp.var(xp.asarray(values, dtype=work) / top))
    if not var > 0.0:
        return 1.0
    with np.errstate(over="ignore", under="ignore"):
        gamma = 1.0 / (int(X.shape[1]) * var) / top / top
    rule = "gamma='scale' = 1 / (n_features * X.var())"
    return check_data_gamma(gamma, rule, top, host_dtype(values.dtype))


def kernel_from_params(
    owner: str,
    kernel: str | Kernel | Callable[..., Any],
    n_features: int,
    kernel_params: Mapping[str, Any] | None,
    *,
    kernel_call: str = "matrix",
    **named: Any,
) -> Kernel | CallableKernel | PairCallableKernel:
    """The kernel an estimator evaluates: a resolved :class:`Kernel` or the user's callable.

    A callable that is not a :class:`Kernel` takes two 2D arrays and returns their kernel
    matrix (``kernel_call="matrix"``), or, with ``kernel_call="pair"``, two 1D rows and
    returns one number (scikit-learn's convention, :class:`PairCallableKernel`);
    ``kernel_params`` are passed to it as keyword arguments, and the named parameters
    (``gamma``, ``degree``, ``coef0``) are refused with it.

    Examples
    --------
    >>> from kernelmaps.kernels import kernel_from_params
    >>> kernel_from_params("KernelRidge", "rbf", 4, None, gamma=None)
    Gaussian(gamma=0.25)
    """
    if isinstance(kernel, (str, Kernel)):
        if kernel_call != "matrix":
            raise ValueError(
                f"{owner}: kernel_call={kernel_call!r} applies to a callable kernel only; "
                f"got kernel={kernel!r}. Leave kernel_call='matrix'."
            )
        return resolve_kernel(kernel, n_features, kernel_params, **named)
    if callable(kernel):
        given = sorted(key for key, value in named.items() if value is not None)
        if given:
            raise ValueError(
                f"{owner}: {given} cannot be used with a callable kernel. Don't pass gamma, "
                f"coef0 or degree to {owner} if using a callable kernel; pass the "
                "callable's own arguments in kernel_params instead."
            )
        if kernel_call == "pair":
            return PairCallableKernel(kernel, kernel_params)
        return CallableKernel(kernel, kernel_params)
    raise TypeError(
        f"{owner}: kernel must be a kernel name, a kernelmaps.kernels.Kernel object or a "
        f"callable returning the kernel matrix; got {kernel!r}."
    )


def refuse_named_with_precomputed(estimator: Any) -> None:
    """Refuse ``gamma``, ``degree`` or ``coef0`` given with ``kernel="precomputed"``.

    The kernel matrix is given, so they would be ignored; scikit-learn refuses them too.

    Examples
    --------
    >>> from kernelmaps import Nystroem
    >>> from kernelmaps.kernels._argument import refuse_named_with_precomputed
    >>> refuse_named_with_precomputed(Nystroem("precomputed"))  # passes
    """
    owner = type(estimator).__name__
    given = sorted(
        name for name in _NAMED_CONSTRAINTS if getattr(estimator, name, None) is not None
    )
    if given:
        raise ValueError(
            f"{owner}: {given} cannot be used with kernel='precomputed' (the kernel matrix "
            f"is given). Don't pass gamma, coef0 or degree to {owner} if using a "
            "precomputed kernel; leave them None."
        )


def _refuse_negative_coef0(owner: str, kernel: Any, coef0: Any) -> None:
    """Refuse a negative ``coef0`` for a kernel that needs ``coef0 >= 0`` (every kernel
    with a ``coef0`` but the sigmoid), as a parameter error of the estimator."""
    if coef0 is None or isinstance(coef0, str) or not coef0 < 0:
        return
    cls = get_kernel_class(kernel) if isinstance(kernel, str) else type(kernel)
    if getattr(cls, "negative_coef0", False):
        return
    raise InvalidParameterError(
        f"The 'coef0' parameter of {owner} must be >= 0 for kernel {kernel!r} (a negative "
        f"coef0 gives a kernel that is not positive definite); got {coef0!r}. Only the "
        "sigmoid kernel takes a negative coef0."
    )


def resolve_estimator_kernel(
    estimator: Any, n_features: int, X: Any = None
) -> Kernel | CallableKernel | PairCallableKernel:
    """The kernel of an estimator, from its ``kernel``, ``kernel_params`` and named parameters.

    Reads ``estimator.kernel``, ``estimator.kernel_params`` (when the estimator has it),
    ``estimator.kernel_call`` (when it has it) and whichever of ``gamma``, ``degree`` and
    ``coef0`` it has (``None``: the kernel class's default), fills in the defaults that
    depend on the data from ``n_features`` (and ``gamma="scale"`` from the training data
    ``X``, :func:`scale_gamma`), and, for a feature map, refuses a kernel the map cannot
    approximate (naming the maps that can).

    Parameters
    ----------
    estimator : estimator
        Holds the kernel arguments as attributes.
    n_features : int
        Number of input features.
    X : array-like or sparse matrix, default=None
        The training data, needed only for ``gamma="scale"``.

    Returns
    -------
    Kernel or CallableKernel or PairCallableKernel

    Examples
    --------
    >>> from kernelmaps import TensorSketch
    >>> from kernelmaps.kernels import resolve_estimator_kernel
    >>> resolve_estimator_kernel(TensorSketch(degree=2), 4)
    Polynomial(degree=2, gamma=0.25, coef0=1.0)
    """
    owner = type(estimator).__name__
    if isinstance(estimator.kernel, str) and estimator.kernel == "precomputed":
        raise ValueError(
            f"{owner} evaluates the kernel on new points, so it needs the kernel itself, "
            "not a precomputed matrix; use Nystroem(kernel='precomputed')."
        )
    named = {
        name: getattr(estimator, name) for name in _NAMED_CONSTRAINTS if hasattr(estimator, name)
    }
    _refuse_negative_coef0(owner, estimator.kernel, named.get("coef0"))
    if isinstance(named.get("gamma"), str) and named["gamma"] == "scale":
        if X is None or X.shape[0] == 0:
            raise ValueError(
                f"{owner}: gamma='scale' needs the training data, which this fit does not "
                "read (e.g. a Dask array); give gamma as a number, such as "
                "kernelmaps.kernels.scale_gamma(X) on a sample of the data."
            )
        if not callable(estimator.kernel) or isinstance(estimator.kernel, (str, Kernel)):
            named["gamma"] = scale_gamma(X)
    kernel = kernel_from_params(
        owner,
        estimator.kernel,
        n_features,
        getattr(estimator, "kernel_params", None),
        kernel_call=getattr(estimator, "kernel_call", "matrix"),
        **named,
    )
    check = getattr(estimator, "_check_kernel", None)
    if check is not None and isinstance(kernel, Kernel):
        return check(kernel)
    return kernel
