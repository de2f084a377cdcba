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

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager
from numbers import Integral, Real
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, InvalidParameterError, StrOptions

from ..exceptions import NonFiniteOutputError
from ._base import Kernel, _all_finite, kernel_names, resolve_kernel

__all__ = [
    "CallableKernel",
    "StrictInterval",
    "check_kernel_matrix",
    "kernel_from_params",
    "kernel_parameter_constraints",
    "one_line_errors",
    "resolve_estimator_kernel",
]


@contextmanager
def one_line_errors(owner: str | None = None) -> Iterator[None]:
    """Re-raise scikit-learn's multi-line ``ValueError`` of input validation as one line.

    ``check_array`` explains NaN input and 1D input over several lines (the second one
    printing the whole array); every bad input of kernelmaps gets one line naming the
    problem and the fix.  ``owner`` names the estimator in the NaN message.  numpy's
    floating-point warnings are silenced inside (the finiteness check sums the input
    first, and ``inf + -inf`` warns before the input is refused with its message).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.utils import check_array
    >>> from kernelmaps.kernels import one_line_errors
    >>> with one_line_errors():
    ...     check_array(np.arange(3.0))
    Traceback (most recent call last):
    ...
    ValueError: Expected 2D array, got 1D array instead. Reshape your data either ...
    """
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            yield
    except ValueError as error:
        message = str(error)
        if type(error) is not ValueError or "\n" not in message.strip():
            raise
        lines = [line.strip() for line in message.strip().splitlines()]
        first = lines[0].rstrip(".:")
        if "contains NaN" in first:
            who = f"{owner} does" if owner else "kernelmaps does"
            text = (
                f"{first}: {who} not accept missing values; impute them (e.g. with "
                "sklearn.impute.SimpleImputer) or drop those rows."
            )
        else:
            rest = [line for line in lines[1:] if line and not line.startswith("array=")]
            text = ". ".join([first, " ".join(rest)]) if rest else f"{first}."
        raise ValueError(text) from None


class StrictInterval(Interval):
    """scikit-learn's :class:`~sklearn.utils._param_validation.Interval`, refusing booleans.

    ``True`` is an ``Integral`` (and a ``Real``) to Python, so scikit-learn's interval
    accepts ``n_components=True`` as 1; every estimator of kernelmaps refuses it with the
    usual "must be an int in the range ..." message.

    Examples
    --------
    >>> from numbers import Integral
    >>> from kernelmaps.kernels import StrictInterval
    >>> constraint = StrictInterval(Integral, 1, None, closed="left")
    >>> constraint.is_satisfied_by(3), constraint.is_satisfied_by(True)
    (True, False)
    """

    def is_satisfied_by(self, val: Any) -> bool:
        if isinstance(val, (bool, np.bool_)):
            return False
        return bool(super().is_satisfied_by(val))


#: The named kernel parameters an estimator may take, with their constraints.  They are
#: those of the kernel classes (``Polynomial``: integer degree >= 1, coef0 >= 0; every
#: ``gamma`` > 0), so that a bad value is refused before ``fit`` does any work.
_NAMED_CONSTRAINTS: dict[str, list[Any]] = {
    "gamma": [StrictInterval(Real, 0.0, None, closed="neither"), None],
    "degree": [StrictInterval(Integral, 1, None, closed="left"), None],
    "coef0": [StrictInterval(Real, 0.0, None, closed="left"), None],
}


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
        )

    def __str__(self) -> str:
        return f"a kernel name among {{{', '.join(repr(o) for o in self.options)}}}"


def kernel_parameter_constraints(
    *,
    named: Iterable[str] = ("gamma",),
    kernel_params: bool = True,
    callable_ok: bool = False,
    precomputed_ok: bool = False,
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
    if finite and not _all_finite(K):
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


def kernel_from_params(
    owner: str,
    kernel: str | Kernel | Callable[..., Any],
    n_features: int,
    kernel_params: Mapping[str, Any] | None,
    **named: Any,
) -> Kernel | CallableKernel:
    """The kernel an estimator evaluates: a resolved :class:`Kernel` or the user's callable.

    A callable that is not a :class:`Kernel` must take two 2D arrays and return their kernel
    matrix; ``kernel_params`` are passed to it as keyword arguments, and the named
    parameters (``gamma``, ``degree``, ``coef0``) are refused with it.

    Examples
    --------
    >>> from kernelmaps.kernels import kernel_from_params
    >>> kernel_from_params("KernelRidge", "rbf", 4, None, gamma=None)
    Gaussian(gamma=0.25)
    """
    if isinstance(kernel, (str, Kernel)):
        return resolve_kernel(kernel, n_features, kernel_params, **named)
    if callable(kernel):
        given = sorted(key for key, value in named.items() if value is not None)
        if given:
            raise ValueError(
                f"{owner}: {given} cannot be used with a callable kernel; pass the "
                "callable's own arguments in kernel_params instead."
            )
        return CallableKernel(kernel, kernel_params)
    raise TypeError(
        f"{owner}: kernel must be a kernel name, a kernelmaps.kernels.Kernel object or a "
        f"callable returning the kernel matrix; got {kernel!r}."
    )


def resolve_estimator_kernel(estimator: Any, n_features: int) -> Kernel | CallableKernel:
    """The kernel of an estimator, from its ``kernel``, ``kernel_params`` and named parameters.

    Reads ``estimator.kernel``, ``estimator.kernel_params`` (when the estimator has it) and
    whichever of ``gamma``, ``degree`` and ``coef0`` it has (``None``: the kernel class's
    default), fills in the defaults that depend on the data from ``n_features``, and, for
    a feature map, refuses a kernel the map cannot approximate (naming the maps that can).

    Parameters
    ----------
    estimator : estimator
        Holds the kernel arguments as attributes.
    n_features : int
        Number of input features.

    Returns
    -------
    Kernel or CallableKernel

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
    kernel = kernel_from_params(
        owner, estimator.kernel, n_features, getattr(estimator, "kernel_params", None), **named
    )
    check = getattr(estimator, "_check_kernel", None)
    if check is not None and isinstance(kernel, Kernel):
        return check(kernel)
    return kernel
