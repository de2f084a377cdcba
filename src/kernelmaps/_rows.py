"""One interface over the rows of a fit, wherever they are held.

Every ``fit`` of kernelmaps reads its training rows through a :class:`Rows` object, made
by :func:`as_rows` (or :func:`validated_rows`, which validates first), and through nothing
else.  A fit needs few operations of its rows:

* their shape, dtype and kind (dense or CSR): :attr:`Rows.n_rows`, :attr:`Rows.n_features`,
  :attr:`Rows.dtype`, :attr:`Rows.sparse`;
* some global rows, named by index (landmarks, samples, rotation rows):
  :meth:`Rows.read`, every request of a call in one pass;
* a function over the parts of the rows, with row-aligned companions (targets, weights),
  the results merged in a fixed binary tree (:func:`tree_reduce`): :meth:`Rows.map_reduce`
  (occupied bins, ridge statistics, leave-one-out sums);
* objects built once per part and kept for several passes (FALKON's ``K_nm`` blocks), each
  pass a map over them reduced in the same tree: :meth:`Rows.persist`, then
  :meth:`Parts.map_reduce`.

:class:`InMemoryRows` holds an array in memory as one part: a map is one call on the whole
array, which the functions split into row blocks themselves (bounded memory), so a fit in
memory is the computation it always was.  ``kernelmaps._dask`` holds the other
implementation, for a :class:`dask.array.Array`: one part per row chunk, every map one
``dask.compute`` whose tasks run under the caller's settings, the read rows gathered in
one compute.  The fits are written once, against this interface.

The row-wise methods (``transform``, ``predict``, ...) are row-local: :func:`rowwise`
sends a Dask array to the same place, with what the estimator does to a block of rows
(:class:`RowwiseWork`), and the Dask module maps it over the chunks.

This module and ``_array_types`` are the one place where the layers reach the Dask support
(the *dispatch*, see ``docs/ARCHITECTURE.md``); the Dask module is imported only when an
input is a Dask array.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import numpy as np
import scipy.sparse as sp

from ._array_api import (
    get_namespace,
    host_dtype,
    is_foreign,
    numpy_namespace,
    to_namespace,
    to_numpy,
)
from ._array_types import is_dask_array

__all__ = [
    "TILE_ROWS",
    "ArrayRows",
    "InMemoryRows",
    "Parts",
    "Rows",
    "RowwiseWork",
    "as_rows",
    "pick_rows",
    "picked_parts",
    "rowwise",
    "stacked_pairs",
    "tree_reduce",
    "tree_reduce_stream",
    "validated_rows",
]

_Method = TypeVar("_Method", bound=Callable[..., Any])

#: Rows of a tile of the global grid of a row-wise method on chunked rows (a multiple of
#: every BLAS kernel's row unrolling); see ``kernelmaps._dask``.
TILE_ROWS = 256


def tree_reduce(items: Sequence[Any], combine: Callable[[Any, Any], Any]) -> Any:
    """``items`` combined pairwise in a fixed binary tree.

    Neighbours ``(0, 1), (2, 3), ...`` are combined in order, level after level (an odd
    last item goes up unchanged), so the shape of the tree, and with it the order of the
    floating-point operations, depends only on the number of items: a reduction gives the
    same result on any scheduler and any number of workers.  ``combine`` is any function
    of two items, or a :func:`dask.delayed` one to build a graph.

    Examples
    --------
    >>> from kernelmaps._rows import tree_reduce
    >>> tree_reduce(list("abcde"), lambda a, b: f"({a}{b})")
    '(((ab)(cd))e)'
    """
    level = list(items)
    if not level:
        raise ValueError("Nothing to reduce: no parts.")
    while len(level) > 1:
        paired = [combine(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            paired.append(level[-1])
        level = paired
    return level[0]


def tree_reduce_stream(items: Iterable[Any], combine: Callable[[Any, Any], Any]) -> Any:
    """:func:`tree_reduce` of items that arrive one at a time, holding ``O(log n)`` of them.

    A binary counter: the stack holds one combined item per set bit of the count so far,
    each new item combined with its equal-sized neighbours as it lands; at the end the
    stack folds from the right.  The tree, and so the order of the floating-point
    operations, is :func:`tree_reduce`'s for the same number of items.

    Examples
    --------
    >>> from kernelmaps._rows import tree_reduce_stream
    >>> tree_reduce_stream(iter("abcde"), lambda a, b: f"({a}{b})")
    '(((ab)(cd))e)'
    """
    stack: list[tuple[int, Any]] = []  # (number of items combined, item)
    for item in items:
        size, value = 1, item
        while stack and stack[-1][0] == size:
            left = stack.pop()[1]
            size, value = 2 * size, combine(left, value)
        stack.append((size, value))
    if not stack:
        raise ValueError("Nothing to reduce: no parts.")
    value = stack.pop()[1]
    while stack:
        value = combine(stack.pop()[1], value)
    return value


class Parts(Protocol):
    """Objects built once per part of the rows (:meth:`Rows.persist`), kept for passes."""

    def map_reduce(
        self, function: Callable[..., Any], merge: Callable[[Any, Any], Any], *args: Any
    ) -> Any:
        """``function(part, *args)`` for every part, merged by ``merge`` in the fixed tree."""
        ...

    def release(self) -> None:
        """Let the parts go (their memory, or the workers' copies)."""
        ...


class Rows(Protocol):
    """The training rows of a fit: what every ``fit`` reads them through.

    A map function receives a part's rows, the same part of each aligned companion (from
    :meth:`align`) and the part's first global row, ``function(X_part, *companions,
    start)``; it checks the values it needs unless :attr:`checked` says that they were
    checked on the way in.
    """

    #: Whether the rows are held in memory in this process (one part).
    in_memory: bool
    #: Whether the map functions run here, in this thread, one part after another (they
    #: may then be handed a progress callback; Dask's tasks run elsewhere).
    local: bool
    #: Whether the values were checked (finite) when the rows were made; when False, a
    #: map function checks the values of its part (with the in-memory path's messages).
    checked: bool
    #: The rows as given, validated: an in-memory array or sparse matrix, or a Dask array.
    X: Any
    #: The array namespace the map functions compute in (the arrays they are handed are
    #: its arrays): NumPy's (``_array_api.numpy_namespace()``) for rows on the host, the
    #: library's for an array of another library or rows streamed through a device.
    xp: Any
    #: The device of the arrays the map functions are handed (``"cpu"`` on the host).
    device: Any
    #: Whether objects persisted beside the parts (:meth:`persist`) are rebuilt from their
    #: rows at every pass (rows streamed through a device), so that they cannot keep what
    #: one pass gave them.
    rebuilt: bool

    @property
    def n_rows(self) -> int: ...

    @property
    def n_features(self) -> int: ...

    @property
    def dtype(self) -> np.dtype: ...

    @property
    def sparse(self) -> bool: ...

    def array(self) -> Any:
        """The rows as one in-memory array, or None where they are held elsewhere."""
        ...

    @property
    def held(self) -> Rows:
        """The rows where they are held: the host rows of rows streamed through a device,
        the rows themselves otherwise (what a selection made on the host reads)."""
        ...

    def fitted_place(self) -> tuple[Any, Any]:
        """``(xp, device)`` of the fitted arrays of a fit on these rows: ``X``'s namespace
        and device (NumPy's for host rows, streamed or not)."""
        ...

    def empty(self, n_rows: int = 0) -> Any:
        """``n_rows`` rows of zeros of the kind (dense or CSR) and dtype of the rows."""
        ...

    def cache_budget(self) -> int | None:
        """Bytes that parts persisted beside the rows may take where they are held (the
        share of a cluster's memory), None where no limit is known."""
        ...

    def read(self, requests: Sequence[np.ndarray | None]) -> list[Any]:
        """For each request (global row indices, or None for every row) its rows, in one
        pass; the rows read are checked to be finite where :attr:`checked` is False."""
        ...

    def take_rows(self, index: np.ndarray, aligned: Sequence[Any]) -> tuple[Rows, tuple]:
        """The rows ``index`` (sorted global indices) and the same entries of the aligned
        companions (targets, weights, labels), read in one pass, as rows of the same kind
        held in memory (a Dask array's as NumPy rows, whose values are checked where they
        are used); what a search on a sample of the rows reads."""
        ...

    def align(self, values: Any, what: str = "y") -> Any:
        """``values`` (targets, weights: an array of one entry per row, a number or None)
        split as the rows are, for :meth:`map_reduce` and :meth:`persist`; its length is
        checked (``what`` names it in the message)."""
        ...

    def distinct(self, values: Any) -> np.ndarray:
        """The sorted distinct values of an aligned companion (class labels), in one pass
        over it alone."""
        ...

    def map_reduce(
        self, function: Callable[..., Any], merge: Callable[[Any, Any], Any], *aligned: Any
    ) -> Any:
        """``function(X_part, *aligned_parts, start)`` over the parts, merged in the fixed
        tree by ``merge``."""
        ...

    def persist(self, build: Callable[..., Any], *aligned: Any) -> Parts:
        """``build(X_part, *aligned_parts, start)`` for every part, kept for later passes."""
        ...

    def map_rows(self, work: RowwiseWork) -> Any:
        """A row-wise method over the rows, in their kind of array (lazy where they are)."""
        ...


@dataclass(frozen=True)
class RowwiseWork:
    """What a row-wise method does to a block of rows, for rows held elsewhere.

    Attributes
    ----------
    prepare : callable
        ``prepare(rows) -> (rows, function)``: called once on every part of the rows, it
        returns them checked (and converted where needed) and the function, holding the
        constants every block of them needs, that maps a block of those rows to its output
        rows.  Picklable (sent to other processes).
    shape : tuple of int
        The trailing shape of the output (``(n_out,)``, or ``()`` for one value a row).
    dtype : numpy.dtype
        The output dtype.
    sparse : bool, default=False
        Whether the output blocks are CSR matrices.
    tile : int, default=TILE_ROWS
        The rows of a tile of the global grid the blocks are computed in.
    name : str, default="rows"
        The prefix of the keys of the output (``"estimator-method"``).
    """

    prepare: Callable[[Any], tuple[Any, Callable[[Any], Any]]]
    shape: tuple[int, ...]
    dtype: np.dtype
    sparse: bool = False
    tile: int = TILE_ROWS
    name: str = "rows"


def pick_rows(values: Any, index: np.ndarray) -> Any:
    """The entries ``index`` of a part's rows or companion (a number or None as is)."""
    if values is None or not np.ndim(values):
        return values
    if sp.issparse(values) or isinstance(values, np.ndarray):
        return values[index]
    xp, device = get_namespace(values)
    return xp.take(values, to_namespace(np.asarray(index, dtype=np.int64), xp, device), axis=0)


def picked_parts(index: np.ndarray) -> Callable[..., tuple[Any, ...]]:
    """The map function of :meth:`Rows.take_rows` over parts: a part's rows of ``index``
    and the same entries of its companions."""

    def part(X: Any, *rest: Any) -> tuple[Any, ...]:
        *companions, start = rest
        local = index[(index >= start) & (index < start + X.shape[0])] - start
        return tuple(pick_rows(a, local) for a in (X, *companions))

    return part


def stacked_pairs(a: tuple[Any, ...], b: tuple[Any, ...]) -> tuple[Any, ...]:
    """Two parts' picks one after the other (numbers and None as they are)."""
    pairs = zip(a, b, strict=True)
    return tuple(x if x is None or not np.ndim(x) else _stack([x, z]) for x, z in pairs)


def _stack(parts: Sequence[Any]) -> Any:
    if len(parts) == 1:
        return parts[0]
    if sp.issparse(parts[0]):
        return sp.vstack(parts, format="csr")
    return np.concatenate(parts, axis=0)


class _InMemoryParts:
    """:class:`Parts` in this process: a list."""

    def __init__(self, parts: list[Any]) -> None:
        self.parts = parts

    def map_reduce(
        self, function: Callable[..., Any], merge: Callable[[Any, Any], Any], *args: Any
    ) -> Any:
        return tree_reduce([function(part, *args) for part in self.parts], merge)

    def release(self) -> None:
        self.parts = []


class InMemoryRows:
    """:class:`Rows` of an array in memory (dense or sparse), validated by the caller.

    One part, the whole array: a map is one call, which splits the rows into blocks of
    bounded memory itself.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._rows import as_rows
    >>> rows = as_rows(np.arange(8.0).reshape(4, 2))
    >>> some, every = rows.read([np.array([1, 3]), None])
    >>> some.tolist(), every.shape
    ([[2.0, 3.0], [6.0, 7.0]], (4, 2))
    >>> rows.map_reduce(lambda X, start: float(X.sum()), max)
    28.0
    """

    in_memory = True
    local = True
    rebuilt = False
    device: Any = "cpu"

    def __init__(self, X: Any, *, checked: bool = True) -> None:
        self.X = X
        self.checked = checked
        self.xp = numpy_namespace()

    @property
    def held(self) -> Rows:
        return self

    def fitted_place(self) -> tuple[Any, Any]:
        return self.xp, self.device

    @property
    def n_rows(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.X.shape[1])

    @property
    def dtype(self) -> np.dtype:
        return host_dtype(getattr(self.X, "dtype", np.float64))

    @property
    def sparse(self) -> bool:
        return bool(sp.issparse(self.X))

    def array(self) -> Any:
        return self.X

    def empty(self, n_rows: int = 0) -> Any:
        shape = (n_rows, self.n_features)
        if self.sparse:
            return sp.csr_matrix(shape, dtype=self.dtype)
        return np.zeros(shape, dtype=self.dtype)

    def cache_budget(self) -> int | None:
        return None

    def read(self, requests: Sequence[np.ndarray | None]) -> list[Any]:
        return [self.X if rows is None else self.X[rows] for rows in requests]

    def take_rows(self, index: np.ndarray, aligned: Sequence[Any]) -> tuple[Rows, tuple]:
        picked = tuple(pick_rows(a, index) for a in aligned)
        return self._like(self.read([index])[0]), picked

    def _like(self, X: Any) -> Rows:
        """Rows of this kind holding ``X``."""
        return InMemoryRows(X, checked=self.checked)

    def align(self, values: Any, what: str = "y") -> Any:
        if values is None or not np.ndim(values):
            return values
        # the arrays of some libraries (array-api-strict) have no len()
        n_values = int(values.shape[0]) if hasattr(values, "shape") else len(values)
        if n_values != self.n_rows:
            raise ValueError(
                "Found input variables with inconsistent numbers of samples: "
                f"[{self.n_rows}, {n_values}]"
            )
        return values

    def distinct(self, values: Any) -> np.ndarray:
        return np.unique(to_numpy(values))

    def map_reduce(
        self, function: Callable[..., Any], merge: Callable[[Any, Any], Any], *aligned: Any
    ) -> Any:
        return function(self.X, *aligned, 0)

    def persist(self, build: Callable[..., Any], *aligned: Any) -> Parts:
        return _InMemoryParts([build(self.X, *aligned, 0)])

    def map_rows(self, work: RowwiseWork) -> Any:
        X, function = work.prepare(self.X)
        return function(X)


class ArrayRows(InMemoryRows):
    """:class:`Rows` of an array of another library than NumPy (a tensor, a CuPy array),
    with scikit-learn's ``array_api_dispatch`` on: the work runs in its namespace, on its
    device.

    One part, like :class:`InMemoryRows`, held where ``X`` lives: :meth:`read`,
    :meth:`map_reduce` and :meth:`persist` give the functions arrays of ``X``'s namespace
    (``xp``) on its device, and :meth:`align` moves targets and weights there.
    :meth:`array` is None (the rows are not NumPy arrays in this process: the fits that
    work on the host read what they need with :meth:`read` and move it), and
    :meth:`empty` gives NumPy rows of the dtype, for the draws made on the host.
    """

    def __init__(self, X: Any) -> None:
        super().__init__(X)
        self.xp, self.device = get_namespace(X)

    def array(self) -> Any:
        return None

    def read(self, requests: Sequence[np.ndarray | None]) -> list[Any]:
        return [self.X if rows is None else self.take(rows) for rows in requests]

    def _like(self, X: Any) -> Rows:
        return ArrayRows(X)

    def take(self, rows: Any) -> Any:
        """The rows of ``X`` at the indices ``rows`` (NumPy or ``xp`` integers)."""
        index = to_namespace(np.asarray(rows, dtype=np.int64), self.xp, self.device)
        return self.xp.take(self.X, index, axis=0)

    def align(self, values: Any, what: str = "y") -> Any:
        values = super().align(values, what)
        if values is None or isinstance(values, (int, float)):
            return values
        if isinstance(values, np.ndarray) and values.dtype.kind not in "biuf":
            return values  # labels that are not numbers (strings) stay on the host
        return to_namespace(values, self.xp, self.device)


def _foreign(X: Any) -> bool:
    """Whether ``X`` is an array of another library, with array API dispatch on."""
    return not (isinstance(X, np.ndarray) or sp.issparse(X)) and is_foreign(X)


def as_rows(X: Any, *, checked: bool = True, name: str | None = None) -> Rows:
    """The :class:`Rows` of ``X``: a Dask array's (chunk by chunk, on its scheduler), or an
    in-memory array's.

    ``checked`` says whether the values of an in-memory ``X`` were checked already; a Dask
    array's values are checked where its chunks are read, with ``name`` (the estimator)
    in the messages.
    """
    if is_dask_array(X):
        from ._dask import DaskRows

        return DaskRows(X, name)
    if _foreign(X):
        return ArrayRows(X)
    return InMemoryRows(X, checked=checked)


def validated_rows(
    estimator: Any,
    X: Any,
    *,
    reset: bool,
    validate: Callable[[Any], Any],
    accept_sparse: bool = True,
) -> Rows:
    """The rows of ``X`` checked for ``estimator``: ``validate(X)`` for an in-memory ``X``
    (scikit-learn's checks of the values), the metadata of a Dask array (its values are
    checked chunk by chunk where they are read) with the same messages, float32 kept and
    other dtypes made float64; ``n_features_in_`` set with ``reset``."""
    if is_dask_array(X):
        from ._dask import DaskRows, check_dask_array

        X = check_dask_array(estimator, X, reset=reset, accept_sparse=accept_sparse)
        return DaskRows(X, type(estimator).__name__)
    if _foreign(X):
        return ArrayRows(validate(X))
    return InMemoryRows(validate(X))


def _method_of(
    estimator: Any, name: str, options: dict[str, Any], rows: Any
) -> tuple[Any, Callable[[Any], Any]]:
    method = getattr(estimator, name)
    return rows, functools.partial(method, **options) if options else method


def _probe_work(
    estimator: Any, name: str, rows: Rows, options: dict[str, Any] | None = None
) -> RowwiseWork:
    """The :class:`RowwiseWork` of a method that states nothing of its output: run once
    on one row of zeros (with the keyword ``options``) for the trailing shape and dtype,
    applied to every block."""
    options = options or {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        probe = getattr(estimator, name)(rows.empty(1), **options)
    return RowwiseWork(
        functools.partial(_method_of, estimator, name, options),
        tuple(probe.shape[1:]),
        np.dtype(probe.dtype),
        sparse=bool(sp.issparse(probe)),
        name=f"{type(estimator).__name__.lower()}-{name.replace('_', '-')}",
    )


def rowwise(method: _Method) -> _Method:
    """Decorator of a row-wise method ``method(self, X)`` (``transform``, ``predict``, ...).

    In-memory input goes to ``method`` itself.  For rows held elsewhere (a Dask array) it
    returns the method over their parts (a lazy Dask array): what the method does to a
    block comes from the estimator's ``_rowwise_work(name, X) -> (RowwiseWork, Rows)`` when
    it has one and it returns one (the feature maps: their transform, validated once a
    part, and its stated output), else from the method itself, called on each block.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps._rows import rowwise
    >>> class Twice:
    ...     @rowwise
    ...     def predict(self, X):
    ...         return 2 * np.asarray(X)
    >>> Twice().predict([1, 2])
    array([2, 4])
    """

    @functools.wraps(method)
    def dispatched(self: Any, X: Any, *args: Any, **kwargs: Any) -> Any:
        if not is_dask_array(X):
            return method(self, X, *args, **kwargs)
        if args:
            raise TypeError(f"{method.__name__} takes only X (and keywords) for a Dask array.")
        stated = getattr(self, "_rowwise_work", None)
        planned = None if stated is None or kwargs else stated(method.__name__, X)
        if planned is None:
            from sklearn.utils.validation import check_is_fitted

            check_is_fitted(self)
            rows = validated_rows(self, X, reset=False, validate=lambda X: X)
            work = _probe_work(self, method.__name__, rows, kwargs)
        else:
            work, rows = planned
        return rows.map_rows(work)

    return dispatched  # type: ignore[return-value]
