"""Shared machinery of the feature maps: validation, kernel checks and row-block transforms.

Every map is a scikit-learn transformer.  ``fit`` validates the parameters and the data,
draws the random quantities into attributes ending in ``_`` and records
``n_features_in_``; ``transform`` is deterministic and row-local, and works through the
rows in blocks whose temporaries stay within scikit-learn's ``working_memory`` budget
(``sklearn.set_config(working_memory=MiB)``, 1024 MiB by default), so that the memory of
a transform is the output plus one block.  Maps whose block work releases the GIL run
their blocks on one thread per core (BLAS limited to one thread meanwhile), and then
hold one block per core.  :meth:`BaseFeatureMap.transform` is the only transform: the
maps write the work of one block (see the class docstring for the contract).

Every output is finite or the call raises: :meth:`BaseFeatureMap.transform` checks each
block once it is written (a sum of the block, the element-wise check only when that sum is
not finite) and raises :class:`~kernelmaps.exceptions.NonFiniteOutputError` naming the
rows that overflowed and the fix; ``fit`` checks the fitted arrays the same way.  The
floating-point warnings of the work itself are silenced meanwhile, the check says what
went wrong.  Outputs and fitted arrays larger than 64 MiB are checked against the
available memory first (:func:`kernelmaps._memory.check_memory`).  Where each map's
limits are: ``docs/LIMITS.md``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin, clone
from sklearn.utils.validation import check_is_fitted, validate_data

from .. import _memory
from .._array_api import (
    check_place,
    device_of,
    float_dtypes,
    get_namespace,
    host_dtype,
    is_foreign,
    is_numpy,
    placed,
    to_numpy,
)
from .._estimator_repr import CompactArrayReprMixin
from .._memory import check_memory
from .._numerics import (
    LIMITS_PAGE,
    ignore_fp_warnings,
    is_finite,
    largest_magnitude,
    non_finite_rows,
    row_list,
)
from .._parallel import n_threads, run_blocks
from .._random import check_random_state
from .._row_blocks import row_blocks, stack_csr_rows
from .._rows import TILE_ROWS, Rows, RowwiseWork, rowwise, validated_rows
from .._validation import one_line_errors
from ..exceptions import NonFiniteOutputError
from ..kernels import Kernel

__all__ = ["BaseFeatureMap", "maps_supporting", "register_feature_map"]

#: The public feature maps, in registration order (see :func:`register_feature_map`).
_MAP_CLASSES: list[type[BaseFeatureMap]] = []

_MapT = TypeVar("_MapT", bound="type[BaseFeatureMap]")

FLOAT_DTYPES = (np.float64, np.float32)

#: Requests of at least this many bytes are checked against the available memory first.
_MEMORY_CHECK_BYTES = 1 << 26


def register_feature_map(cls: _MapT) -> _MapT:
    """Class decorator listing a public feature map for :func:`maps_supporting`.

    The map's ``_supports_kernel`` classmethod (inherited: any kernel) says which kernels
    it approximates.  Registering a class twice lists it once.

    Examples
    --------
    >>> from kernelmaps import RandomFourierFeatures
    >>> from kernelmaps.feature_maps import register_feature_map
    >>> register_feature_map(RandomFourierFeatures) is RandomFourierFeatures
    True
    """
    if cls not in _MAP_CLASSES:
        _MAP_CLASSES.append(cls)
    return cls


def maps_supporting(kernel: Kernel) -> list[str]:
    """Names of the feature maps of kernelmaps that can approximate ``kernel``.

    Examples
    --------
    >>> from kernelmaps.feature_maps import maps_supporting
    >>> from kernelmaps.kernels import Laplacian
    >>> maps_supporting(Laplacian(gamma=1.0))
    ['RandomBinningFeatures', 'RandomFourierFeatures', 'Nystroem', 'IKA']
    """
    return [cls.__name__ for cls in _MAP_CLASSES if cls._supports_kernel(kernel)]


class BaseFeatureMap(
    CompactArrayReprMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator
):
    """Base class of the explicit feature maps ``z(x)`` with ``z(x) . z(y) ~ k(x, y)``.

    ``fit`` and ``transform`` are written here once; a map supplies its own steps.

    Subclassing contract
    --------------------
    Required:

    ``_fit(X, rng)``
        Draw or learn the map from the validated ``X`` (``rng`` a
        :class:`numpy.random.Generator` from ``random_state``) and set
        ``_n_features_out``.
    ``_transform_block(X, out, constants)``
        Write the features of the validated row block ``X`` (a C-ordered array or CSR
        matrix of the transform's dtype) into ``out`` (``(len(X), n_out)``, same dtype).
        It may touch only ``out`` and temporaries of its own (no state on ``self``).
        Maps whose output is sparse (see ``_output_format``) write
        ``_transform_block_csr(X, constants) -> scipy.sparse.csr_matrix`` instead.

    Optional hooks:

    ``_transform_constants(X) -> Any``
        What every block needs and costs work to prepare (weights cast to the dtype of
        ``X``, a kernel closure, a phase vector), computed once per ``transform`` call
        and passed to every block.  It may use only the dtype and the type (dense or
        sparse) of ``X`` and the fitted state, never its values.  Default: None.
    ``_validate_transform_input(X) -> X``
        Validation of the input of ``transform`` (default: the fit's dtype and width
        checks, CSR for sparse input); a map taking something else than feature rows
        (e.g. kernel rows) says so here.
    ``_output_format(X) -> "dense" | "csr"``
        The output kind for this input (default: the class attribute ``_output``).
    ``_block_bytes_per_row(X)``, ``_max_block_rows``, ``_parallel_blocks``
        Temporaries per row (for the block size), a cap on the block length, and
        whether blocks may run on one thread per core (the block work then releases
        the GIL and ``constants`` is read-only).
    ``_supports_kernel(kernel)``
        The kernels the map approximates (default: any), for :func:`maps_supporting`;
        public maps are listed there by the :func:`register_feature_map` decorator.

    The arrays of other libraries (``_array_api = True``, array API dispatch on): the
    same ``_transform_block`` writes their blocks, ``X`` and ``out`` then arrays of that
    library on the device of the fitted arrays; it takes the namespace from its
    constants (``_transform_constants`` calls
    :func:`~kernelmaps._array_api.get_namespace` once per call) and keeps NumPy's
    in-place or compiled routes as ``is_numpy(xp)`` branches.  ``_check_array_values(X,
    xp)`` makes the checks of the values of the rows (in ``_fit`` and on rows of another
    library before a fit that sees none); ``_array_bytes_per_row(X)`` sizes their blocks.

    Running one block from outside ``transform``: ``_transform_rows(X_block,
    constants)`` allocates the block's output and fills it; with the constants of
    ``_transform_constants`` computed once, it can be mapped over the chunks of an
    already validated array, and ``transform(X)[a:b]`` equals ``transform(X[a:b])``.

    Examples
    --------
    A map needs only its fit and its block:

    >>> import numpy as np
    >>> from kernelmaps.feature_maps import BaseFeatureMap
    >>> class Doubled(BaseFeatureMap):
    ...     _parameter_constraints = {}
    ...     def _fit(self, X, rng):
    ...         self._n_features_out = 2 * X.shape[1]
    ...     def _transform_block(self, X, out, constants):
    ...         d = X.shape[1]
    ...         out[:, :d] = X
    ...         out[:, d:] = X
    >>> Doubled().fit_transform(np.eye(2))
    array([[1., 0., 1., 0.],
           [0., 1., 0., 1.]])
    """

    #: Whether sparse input is accepted (densified row block by row block if needed).
    _accepts_sparse: ClassVar[bool] = True
    #: Output kind: ``"dense"`` (ndarray) or ``"csr"`` (scipy.sparse.csr_matrix).
    _output: ClassVar[str] = "dense"
    #: Upper bound on the rows of a transform block (None: the memory budget decides).
    _max_block_rows: ClassVar[int | None] = None
    #: Whether row blocks may be transformed on several threads at once: the block work
    #: must release the GIL for its heavy parts and write only its own rows of ``out``.
    _parallel_blocks: ClassVar[bool] = False
    #: Human-readable requirement on the kernel, for error messages.
    _kernel_requirement: ClassVar[str] = "a kernel"
    #: Whether the map runs on the arrays of other libraries (array API dispatch): its
    #: ``_transform_block`` and fit are written over ``xp``.  Otherwise such input is
    #: refused, with the reason
    #: in ``_array_api_refusal``.
    _array_api: ClassVar[bool] = False
    _array_api_refusal: ClassVar[str] = "it has no array API path yet"

    @classmethod
    def _supports_kernel(cls, kernel: Kernel) -> bool:
        """Whether this map can approximate ``kernel`` (default: any kernel)."""
        return True

    def _check_kernel(self, kernel: Kernel) -> Kernel:
        """Refuse a kernel this map cannot approximate, naming the maps that can."""
        if not self._supports_kernel(kernel):
            others = [name for name in maps_supporting(kernel) if name != type(self).__name__]
            hint = (
                f" Use {' or '.join(others)} for it."
                if others
                else " No feature map of kernelmaps handles it."
            )
            raise ValueError(
                f"{type(self).__name__} needs {self._kernel_requirement}; got {kernel!r}.{hint}"
            )
        return kernel

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = self._accepts_sparse
        tags.array_api_support = self._array_api
        if tags.transformer_tags is not None:
            tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags

    # -- validation ---------------------------------------------------------------------

    def _validate_X(self, X: Any, *, reset: bool) -> Any:
        with one_line_errors(type(self).__name__):
            return validate_data(
                self,
                X,
                accept_sparse=("csr", "csc") if self._accepts_sparse else False,
                dtype=float_dtypes(X),
                reset=reset,
            )

    def _validate_transform_input(self, X: Any) -> Any:
        """The input of ``transform``, validated against the fit (CSR if sparse)."""
        X = self._validate_X(X, reset=False)
        return X.tocsr() if sp.issparse(X) else X

    # -- fit ----------------------------------------------------------------------------

    def fit(self, X: Any, y: Any = None) -> BaseFeatureMap:
        """Validate the parameters and ``X``, then draw (or learn) the map.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features)
            Training data; data-independent maps use only its shape and dtype (a Dask
            array is then not computed).
        y : None
            Ignored.

        Returns
        -------
        self
        """
        with ignore_fp_warnings(), one_line_errors(type(self).__name__):
            self._validate_params()
            self._check_array_api(X)
            rows = self._training_rows(X)
            self._fit_rows(rows, check_random_state(getattr(self, "random_state", None)))
        self._check_fitted_state(rows.dtype)
        self._place_fitted(*rows.fitted_place())
        return self

    def _check_array_api(self, X: Any) -> None:
        """Refuse the array of another library for a map without an array API path.

        An entry point: whether a user's array is taken as an array of its library is
        the ``array_api_dispatch`` switch's business (:func:`is_foreign`)."""
        if not self._array_api and is_foreign(X):
            raise TypeError(
                f"{type(self).__name__} does not run on {type(X).__module__} arrays: "
                f"{self._array_api_refusal}. Pass a NumPy array, or turn "
                "array_api_dispatch off."
            )

    def _place_fitted(self, xp: Any, device: Any) -> None:
        """Move the fitted arrays (attributes ending in ``_``) to ``xp`` on ``device``,
        where the training rows live: random quantities are drawn on the host with the
        estimator's NumPy generator, so the map equals the one fitted on NumPy (nothing
        moves for NumPy rows: :func:`placed` returns the arrays themselves)."""
        for name, value in list(vars(self).items()):
            if name.endswith("_") and not name.startswith("__"):
                setattr(self, name, placed(value, xp, device))

    def _training_rows(self, X: Any, *, reset: bool = True) -> Rows:
        """The rows of ``X`` validated for this map (:func:`kernelmaps._rows.validated_rows`)."""
        return validated_rows(
            self,
            X,
            reset=reset,
            validate=lambda X: self._validate_X(X, reset=reset),
            accept_sparse=self._accepts_sparse,
        )

    def _fit_rows(self, rows: Rows, rng: np.random.Generator) -> None:
        """Fit on the training ``rows`` (``kernelmaps._rows.Rows``).

        The default, for the maps that use only the shape and dtype of the data: ``_fit``
        on the rows in memory (whose values it may check), or on no rows of their width,
        kind and dtype where they are held elsewhere (their values are then checked by
        ``transform``, part by part; rows of another library by
        :meth:`_check_array_values` first).  The maps that learn from the data override it
        and read the rows they need through ``rows``.
        """
        X = rows.array()
        if X is None and not is_numpy(rows.xp) and not rows.rebuilt:  # rows of a library
            self._check_array_values(rows.X, rows.xp)
        self._fit(rows.empty() if X is None else X, rng)

    def _check_array_values(self, X: Any, xp: Any) -> None:
        """The checks that ``_fit`` makes of the values of NumPy rows, made on the rows
        ``X`` of another library (an array of ``xp``, on its device), with the same
        messages; ``_fit`` then sees no rows (default: no checks)."""

    def _fit(self, X: Any, rng: np.random.Generator) -> None:
        """Draw the map's random quantities; ``X`` is validated."""
        raise NotImplementedError(f"{type(self).__name__} writes _fit or _fit_rows.")

    # -- numerical guards ---------------------------------------------------------------

    #: Parameters whose values scale the computation (named in the fix of an overflow).
    _scale_parameters: ClassVar[tuple[str, ...]] = ("gamma",)

    def _overflow_fix(self, dtype: Any = None, *, capitalize: bool = True) -> str:
        """What to change when a result overflowed: rescale, smaller gamma, float64."""
        fixes = ["rescale the input (e.g. with sklearn.preprocessing.StandardScaler)"]
        fixes += [f"use a smaller {name}" for name in self._scale_parameters if hasattr(self, name)]
        if dtype is not None and np.dtype(dtype) == np.float32:
            fixes.append("pass float64 input")
        head = ", ".join(fixes[:-1])
        fix = f"{head} or {fixes[-1]}" if head else fixes[0]
        first = fix[0].upper() if capitalize else fix[0]
        return f"{first}{fix[1:]} (limits: {LIMITS_PAGE})"

    def _check_fitted_state(self, dtype: Any = None) -> None:
        """Refuse a fit whose arrays hold NaN or infinity (an overflow in the fit)."""
        for name, value in vars(self).items():
            if not name.endswith("_") or name.startswith("_"):
                continue
            arrays = value if isinstance(value, list) else [value]
            for array in arrays:
                if isinstance(array, tuple):  # (order, columns, matrix) groups
                    array = array[-1]
                if (isinstance(array, np.ndarray) or sp.issparse(array)) and not is_finite(array):
                    raise NonFiniteOutputError(
                        f"{type(self).__name__}.fit: the fitted {name} holds non-finite "
                        "values: the computation overflowed for this data and these "
                        f"parameters. {self._overflow_fix(dtype)}."
                    )

    def _cast_fitted(self, array: Any, dtype: Any, what: str) -> Any:
        """A fitted array (of any library, on its device) in the dtype ``dtype`` of the
        input, refused if the cast overflows.

        ``what`` names its values for the message (singular: ``"frequency"``).

        float32 input casts the fitted weights to float32; weights beyond its range
        (a large ``gamma``) would make every feature NaN.
        """
        if array.dtype == dtype:
            return array
        xp, _ = get_namespace(array)
        with ignore_fp_warnings():
            out = xp.astype(array, dtype)
        if not is_finite(out, xp):
            raise self._cast_overflow(largest_magnitude(array, xp), host_dtype(dtype), what)
        return out

    def _cast_overflow(self, largest: float, dtype: np.dtype, what: str) -> NonFiniteOutputError:
        """The error of a fitted array whose ``what`` values (up to ``largest`` in
        magnitude) overflow the input's ``dtype``."""
        limit = float(np.finfo(dtype).max)
        fixes = [f"use a smaller {name}" for name in self._scale_parameters if hasattr(self, name)]
        return NonFiniteOutputError(
            f"{type(self).__name__}.transform: {what} values up to {largest:.3g} in "
            f"magnitude exceed the {dtype.name} range (largest {limit:.3g}) of this input. "
            f"Pass float64 input{''.join(' or ' + f for f in fixes)} (limits: "
            f"{LIMITS_PAGE})."
        )

    def _check_memory(self, n_bytes: float, what: str, fix: str) -> None:
        """:func:`~kernelmaps._memory.check_memory` for requests of 64 MiB or more."""
        if n_bytes >= _MEMORY_CHECK_BYTES:
            check_memory(n_bytes, f"{type(self).__name__}: {what}", fix)

    def _output_bytes(self, X: Any) -> float:
        """Bytes of the output of ``transform(X)`` (dense: rows x n_out values)."""
        return float(X.shape[0]) * float(self._n_features_out) * np.dtype(X.dtype).itemsize

    def _finite_by_bound(self, X: Any, constants: Any) -> bool:
        """Whether the features of the rows ``X`` are finite for certain, by a bound.

        A map whose block work is cheap (a few operations per output value) proves it
        from ``max |x|`` and its fitted weights instead of summing the block it wrote;
        the default proves nothing and the block is checked.
        """
        return False

    def _check_block(self, X: Any, block: Any, offset: int | None, xp: Any = None) -> None:
        """Raise :class:`NonFiniteOutputError` if the features ``block`` of the rows ``X``
        (starting at row ``offset`` of the input, None if unknown; arrays of ``xp``, None
        for NumPy) are not all finite."""
        if is_finite(block, xp):
            return
        X, block = to_numpy(X), to_numpy(block)  # the error path reads them on the host
        bad = non_finite_rows(block)
        largest = largest_magnitude(X[bad]) if bad.size else largest_magnitude(X)
        raise NonFiniteOutputError(
            f"{type(self).__name__}.transform: the features of {row_list(bad, offset)} are "
            f"not finite: the computation overflowed (largest |x| in those rows: "
            f"{largest:.3g}). {self._overflow_fix(X.dtype)}."
        )

    # -- transform: the steps a map supplies ----------------------------------------------

    def _transform_block(self, X: Any, out: Any, constants: Any) -> None:
        """Write the features of the rows ``X`` (a block, validated) into ``out`` (arrays
        of one namespace: NumPy's or another library's)."""
        raise NotImplementedError(f"{type(self).__name__} writes no dense blocks.")

    def _transform_block_csr(self, X: Any, constants: Any) -> sp.csr_matrix:
        """The features of the rows ``X`` (a block, validated) as a CSR matrix."""
        raise NotImplementedError(f"{type(self).__name__} writes no sparse blocks.")

    def _transform_constants(self, X: Any) -> Any:
        """Per-call constants shared by the blocks of one transform (default: None)."""
        return None

    def _output_format(self, X: Any) -> str:
        """``"dense"`` or ``"csr"``: the output kind of ``transform`` for ``X``."""
        return self._output

    def _block_bytes_per_row(self, X: Any) -> float:
        """Bytes of temporaries per row of a transform block (output excluded)."""
        itemsize = np.dtype(X.dtype).itemsize
        dense_input = X.shape[1] * itemsize if sp.issparse(X) else 0
        return float(dense_input + self._n_features_out * itemsize)

    def _array_bytes_per_row(self, X: Any) -> float:
        """Bytes of temporaries per row of a block of another library than NumPy (``X``
        NumPy rows of the dtype and width of the input; default: those of a NumPy block)."""
        return self._block_bytes_per_row(X)

    # -- transform: the one path ----------------------------------------------------------

    def _transform_rows(self, X: Any, constants: Any = None) -> Any:
        """The features of one validated row block, in a new array (or CSR matrix).

        ``constants`` is what :meth:`_transform_constants` returns for an input of this
        dtype; None computes it here.  Used to run the block work outside
        :meth:`transform`, e.g. mapped over the chunks of a validated array.
        """
        xp, device = get_namespace(X)
        with ignore_fp_warnings():
            if constants is None:
                constants = self._transform_constants(X)
            if self._output_format(X) == "csr":
                block = self._transform_block_csr(X, constants)
                self._checked(X, block, constants, None, xp)
                return block
            block = xp.empty((X.shape[0], self._n_features_out), dtype=X.dtype, device=device)
            self._write_block(X, block, constants, None, xp)
        return block

    def _write_block(self, X: Any, out: Any, constants: Any, offset: int | None, xp: Any) -> None:
        """Write the features of the row block ``X`` into ``out`` (an array of ``xp`` of
        its rows) and check them (``offset``: the first row of ``X`` in the input)."""
        self._transform_block(X, out, constants)
        self._checked(X, out, constants, offset, xp)

    def _checked(self, X: Any, block: Any, constants: Any, offset: int | None, xp: Any) -> None:
        """The finiteness check of a written block, unless a bound proves it finite."""
        if not self._finite_by_bound(X, constants):
            self._check_block(X, block, offset, xp)

    def _memory_block_rows(self, bytes_per_row: float) -> int | None:
        """Rows per block such that the blocks running at once hold at most half of the
        available memory, for rows of 1 MiB of temporaries or more (``working_memory``
        bounds the others); a single row that does not fit is refused."""
        if bytes_per_row < 2**20:
            return None
        self._check_memory(
            bytes_per_row,
            "the temporaries of transform for a single row",
            "lower the size parameters of the map (n_components, degree, ...)",
        )
        available = _memory.available_memory()
        if available is None:
            return None
        workers = n_threads() if self._parallel_blocks else 1
        return max(1, int(available // 2 // (bytes_per_row * workers)))

    def _run_row_blocks(
        self, work: Callable[[slice], None], X: Any, n_elements: int, xp: Any
    ) -> None:
        """``work(rows)`` over the row blocks of ``X`` (an array of ``xp``).  On NumPy the
        blocks are cache-sized (``_max_block_rows``), bounded by the available memory and
        run on threads if the map allows it; other libraries take blocks as large as
        ``working_memory`` allows (few launches on a device), one after another."""
        if not is_numpy(xp):
            like = np.empty((0, X.shape[1]), dtype=host_dtype(X.dtype))
            for rows in row_blocks(X.shape[0], self._array_bytes_per_row(like)):
                work(rows)
            return
        bytes_per_row = self._block_bytes_per_row(X)
        max_rows = self._max_block_rows
        memory_rows = self._memory_block_rows(bytes_per_row)
        if memory_rows is not None:
            max_rows = memory_rows if max_rows is None else min(max_rows, memory_rows)
        blocks = list(row_blocks(X.shape[0], bytes_per_row, max_rows=max_rows))
        if self._parallel_blocks:
            run_blocks(work, blocks, n_elements)
        else:
            for rows in blocks:
                work(rows)

    def _rowwise_work(self, method: str, X: Any) -> tuple[RowwiseWork, Rows] | None:
        """``transform`` of rows held elsewhere: the validated transform of each part, its
        output stated (width, dtype, dense or CSR) without computing anything.  A map that
        needs no fit (``requires_fit`` False) transforms with a copy fitted on the rows'
        metadata."""
        if method != "transform":
            return None
        fitted = self
        if not self.__sklearn_tags__().requires_fit and not hasattr(self, "n_features_in_"):
            fitted = clone(self).fit(X)
        check_is_fitted(fitted)
        rows = fitted._training_rows(X, reset=False)
        work = RowwiseWork(
            fitted._prepare_transform,
            (int(fitted._n_features_out),),
            rows.dtype,
            sparse=fitted._output_format(rows.empty()) == "csr",
            tile=min(TILE_ROWS, fitted._max_block_rows or TILE_ROWS),
            name=f"{type(self).__name__.lower()}-transform",
        )
        return work, rows

    def _prepare_transform(self, X: Any) -> tuple[Any, Callable[[Any], Any]]:
        """A part's rows validated for ``transform``, and its block function (constants
        computed once for the part)."""
        X = self._validate_transform_input(X)
        return X, functools.partial(self._transform_rows, constants=self._transform_constants(X))

    @rowwise
    def transform(self, X: Any) -> Any:
        """Map ``X`` to the explicit features ``z(X)``.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features)

        Returns
        -------
        ndarray or scipy.sparse.csr_matrix of shape (n_samples, n_components)
            float32 for float32 input, float64 otherwise; CSR for the maps whose
            features are sparse.  For a Dask array, a lazy Dask array with the row
            chunks of ``X`` (blocks of CSR for sparse features).
        """
        check_is_fitted(self)
        self._check_array_api(X)
        check_place(self, X, "transform")
        return self._transform_validated(self._validate_transform_input(X))

    def _transform_validated(self, X: Any) -> Any:
        """``transform`` of validated rows ``X`` of any library (NumPy, or another one
        whose arrays hold the fitted ones): the one loop over the row blocks, each written
        by :meth:`_transform_block` and checked (:meth:`_checked`).  On NumPy, the output
        is checked against the available memory first and sparse output is stacked from
        CSR blocks."""
        xp, device = get_namespace(X)
        n_out = self._n_features_out
        if is_numpy(xp):
            self._check_memory(
                self._output_bytes(X),
                f"the output of transform for {X.shape[0]} rows ({n_out} features each)",
                "transform fewer rows at a time or use fewer output features",
            )
        with ignore_fp_warnings():
            constants = self._transform_constants(X)
            if self._output_format(X) == "csr":
                parts: dict[int, sp.csr_matrix] = {}

                def csr_work(rows: slice) -> None:
                    Xb = X[rows]
                    parts[rows.start] = part = self._transform_block_csr(Xb, constants)
                    self._checked(Xb, part, constants, rows.start, xp)

                self._run_row_blocks(csr_work, X, X.shape[0] * n_out, xp)
                return stack_csr_rows([parts[start] for start in sorted(parts)], n_out)
            out = xp.empty((X.shape[0], n_out), dtype=X.dtype, device=device)
            self._run_row_blocks(
                functools.partial(self._block_of, X, out, constants, xp), X, out.size, xp
            )
        return out

    def _block_of(self, X: Any, out: Any, constants: Any, xp: Any, rows: slice) -> None:
        """Write and check the features of ``X[rows]`` into ``out[rows]``: in place on
        NumPy (a view), through a block of their own on other libraries (whose slices
        need not be views) unless the block is the whole output."""
        if rows.start == 0 and rows.stop >= X.shape[0]:
            self._write_block(X, out, constants, 0, xp)
            return
        Xb = X[rows, :]
        if is_numpy(xp):
            self._write_block(Xb, out[rows], constants, rows.start, xp)
            return
        block = xp.empty((Xb.shape[0], out.shape[1]), dtype=out.dtype, device=device_of(out))
        self._write_block(Xb, block, constants, rows.start, xp)
        out[rows, :] = block
