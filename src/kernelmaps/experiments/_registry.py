"""Registry of named methods: a name -> a factory building a feature map.

A method is a feature map with fixed settings (``"rff-sobol"`` is random Fourier features
with randomly shifted Sobol' frequencies).  Its factory takes the number of output features, the
kernel parameters and a random state, and returns an unfitted estimator::

    factory(n_components, kernel_params, random_state) -> estimator

``kernel_params`` may hold the key ``"kernel"`` (a kernel name) to approximate another
kernel than the method's default; the other keys are the kernel's parameters
(``gamma``, ``degree``, ...).

Methods for the maps of :mod:`kernelmaps.feature_maps` are registered when those maps are
available.  Each built-in method also says how figures and tables show it: its family
(:data:`METHOD_FAMILIES`: the methods that share a construction, drawn in one colour) and
a short label; :func:`kernel_label` names its kernel in words.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable
from typing import Any

from .. import feature_maps as _fm
from .._suggest import did_you_mean
from ..kernels import Kernel, ShiftInvariantKernel, get_kernel_class, kernel_names

__all__ = [
    "KERNEL_LABELS",
    "METHOD_FAMILIES",
    "MethodSpec",
    "get_method",
    "kernel_label",
    "method_names",
    "register_method",
]

#: The families of methods, in the order figures list them: key -> name in words.  The
#: methods of a family share a construction (and a colour in the figures); a study's
#: pairs mostly compare two members of one family.
METHOD_FAMILIES: dict[str, str] = {
    "fourier": "Fourier features",
    "nystroem": "Nyström",
    "ika": "IKA",
    "dot-product": "dot-product maps",
    "binning": "random binning",
    "chi2": "χ² samplers",
}

#: Kernel registry names -> their names in words, for legends and captions.
KERNEL_LABELS: dict[str, str] = {
    "rbf": "Gaussian",
    "gaussian": "Gaussian",
    "laplacian": "Laplacian",
    "matern": "Matérn",
    "cauchy": "Cauchy",
    "polynomial": "polynomial",
    "poly": "polynomial",
    "homogeneous_polynomial": "homogeneous polynomial",
    "exp_dot": "exponential dot product",
    "exponential_dot_product": "exponential dot product",
    "maclaurin": "Maclaurin series",
    "linear": "linear",
    "cosine": "cosine",
    "sigmoid": "sigmoid",
    "chi2": "exponentiated χ²",
    "exponentiated_chi2": "exponentiated χ²",
    "skewed_chi2": "skewed χ²",
    "additive_chi2_pd": "additive χ²",
    "sklearn_additive_chi2": "additive χ² (negative)",
    "histogram_intersection": "histogram intersection",
    "intersection": "histogram intersection",
}


def kernel_label(kernel: str) -> str:
    """The name in words of the kernel registered as ``kernel`` (a name it does not know is
    given back as it is).

    Examples
    --------
    >>> from kernelmaps.experiments import kernel_label
    >>> kernel_label("rbf"), kernel_label("polynomial"), kernel_label("my_kernel")
    ('Gaussian', 'polynomial', 'my_kernel')
    """
    return KERNEL_LABELS.get(str(kernel).lower(), str(kernel))


def _bandwidth_kernels() -> frozenset[str]:
    """Names of the shift-invariant kernels with a ``gamma``: ``gamma`` is a bandwidth."""
    return frozenset(
        name
        for name in kernel_names()
        if issubclass(get_kernel_class(name), ShiftInvariantKernel)
        and "gamma" in {f.name for f in dataclasses.fields(get_kernel_class(name))}
    )


#: Kernels whose ``gamma`` is a bandwidth (set by a bandwidth rule when not given).
BANDWIDTH_KERNELS = _bandwidth_kernels()


@dataclasses.dataclass(frozen=True)
class _UnknownKernel(Kernel):
    """A kernel of no family: accepted only by the maps that take any kernel."""

    def _evaluate(self, xp: Any, X: Any, Y: Any) -> Any:  # pragma: no cover - never evaluated
        raise NotImplementedError


@functools.cache
def _prototype(name: str) -> Kernel:
    """A kernel of the class registered as ``name``, for the maps' ``_supports_kernel``.

    Built with the default parameters; a kernel class that cannot be built without
    parameters (``MaclaurinKernel`` needs its coefficients) gives an instance without
    fields, enough for the class tests that ``_supports_kernel`` makes.
    """
    cls = get_kernel_class(name)
    try:
        return cls()
    except TypeError:
        return object.__new__(cls)


@dataclasses.dataclass(frozen=True)
class MethodSpec:
    """A registered method.

    Attributes
    ----------
    name : str
        Registry key.
    kernel : str
        Name of the kernel the method approximates by default.
    factory : callable
        ``factory(n_components, kernel_params, random_state) -> estimator``.
    description : str
        One line for tables and ``--help``.
    kernel_params : dict, default={}
        Default kernel parameters (e.g. ``{"degree": 2}`` for the polynomial maps).
    estimator_class : type or None, default=None
        The class the factory builds (found on factories made by the registry when not
        given); it answers which kernels the method handles.  ``None``: any kernel.
    family : str, default=""
        A key of :data:`METHOD_FAMILIES` (or a new one): the methods that share a
        construction, one colour in the figures.  ``""``: a family of its own, drawn in
        the colour of methods the registry does not know.
    label : str, default=""
        Short name in figure legends (``"RFF, Monte Carlo"``); ``""``: the name.

    Examples
    --------
    >>> from kernelmaps.experiments import get_method
    >>> spec = get_method("sorf")
    >>> spec.supported_kernels(), spec.supports("laplacian")
    (('gaussian', 'matern', 'rbf'), False)
    >>> spec.family, spec.display_label
    ('fourier', 'SORF')
    """

    name: str
    kernel: str
    factory: Callable[[int, dict[str, Any], Any], Any]
    description: str
    kernel_params: dict[str, Any] = dataclasses.field(default_factory=dict)
    estimator_class: type | None = None
    family: str = ""
    label: str = ""

    @property
    def display_label(self) -> str:
        """The label of the method in legends: ``label``, or the name without one."""
        return self.label or self.name

    def map_class(self) -> type | None:
        """The class of the estimator the factory builds, when known."""
        return self.estimator_class or getattr(self.factory, "estimator_class", None)

    def supports(self, kernel: str) -> bool:
        """Whether the method can approximate the kernel registered as ``kernel``.

        The map class answers (``_supports_kernel``).  A name the registry does not know
        is supported only by the maps that take any kernel (Nyström, IKA), as before:
        building it then fails with the list of known names.
        """
        if kernel == self.kernel:
            return True
        check = getattr(self.map_class(), "_supports_kernel", None)
        if check is None:
            return True
        if kernel.lower() not in kernel_names():
            return bool(check(_UnknownKernel()))
        return bool(check(_prototype(kernel)))

    def supported_kernels(self) -> tuple[str, ...]:
        """The registry names of the kernels the method can approximate, sorted."""
        return tuple(name for name in kernel_names() if self.supports(name))


_METHODS: dict[str, MethodSpec] = {}


def register_method(spec: MethodSpec) -> MethodSpec:
    """Add ``spec`` to the registry (names are unique).

    Examples
    --------
    >>> from kernelmaps import RandomFourierFeatures
    >>> from kernelmaps.experiments import MethodSpec, get_method, register_method
    >>> from kernelmaps.experiments._registry import _METHODS
    >>> spec = register_method(MethodSpec(
    ...     "rff-example", "rbf",
    ...     lambda D, params, seed: RandomFourierFeatures(n_components=D, random_state=seed),
    ...     "random Fourier features (example)", estimator_class=RandomFourierFeatures))
    >>> get_method("rff-example").supports("laplacian")
    True
    >>> del _METHODS["rff-example"]  # (keeps this example without side effect)
    """
    if spec.name in _METHODS:
        raise ValueError(f"method {spec.name!r} is already registered.")
    _METHODS[spec.name] = spec
    return spec


def get_method(name: str) -> MethodSpec:
    """The method registered as ``name``.

    Examples
    --------
    >>> from kernelmaps.experiments import get_method
    >>> get_method("binning").kernel
    'laplacian'
    """
    try:
        return _METHODS[name]
    except KeyError:
        raise unknown_method(name) from None


def unknown_method(name: str, aliases: dict[str, str] | None = None) -> ValueError:
    """The error on an unknown method ``name``: the known methods, the ``aliases`` accepted
    where the name was given, and the closest of them all.

    Examples
    --------
    >>> from kernelmaps.experiments._registry import unknown_method
    >>> print(unknown_method("nystrom", {"nystroem": "nystroem-kmeans"}))  # doctest: +ELLIPSIS
    Unknown method 'nystrom'. Known methods: rff-mc, ... Did you mean 'nystroem'?
    """
    aliases = aliases or {}
    known = ", ".join(method_names())
    if aliases:
        known += "; aliases: " + ", ".join(f"{k} (= {v})" for k, v in aliases.items())
    hint = did_you_mean(name, [*aliases, *method_names()])
    return ValueError(f"Unknown method {name!r}. Known methods: {known}.{hint}")


def method_names() -> list[str]:
    """Names of the registered methods, in registration order.

    Examples
    --------
    >>> from kernelmaps.experiments import method_names
    >>> method_names()[:2]
    ['rff-mc', 'rff-orthogonal']
    """
    return list(_METHODS)


def _generic(
    cls: type, default_kernel: str, size_param: str = "n_components", **fixed: Any
) -> Callable[[int, dict[str, Any], Any], Any]:
    """A factory for ``cls(kernel, kernel_params=..., <size_param>=D, **fixed)``."""
    accepted = set(inspect.signature(cls).parameters)

    def factory(n_components: int, kernel_params: dict[str, Any], random_state: Any) -> Any:
        params = dict(kernel_params)
        kernel = params.pop("kernel", default_kernel)
        kwargs: dict[str, Any] = {size_param: n_components, **fixed}
        if "random_state" in accepted:
            kwargs["random_state"] = random_state
        if "kernel_params" in accepted:
            kwargs["kernel_params"] = params or None
        else:  # pragma: no cover - maps without kernel_params take named parameters
            kwargs.update(params)
        return cls(kernel, **kwargs)

    factory.estimator_class = cls  # type: ignore[attr-defined]
    return factory


#: The polynomial methods' default kernel, ``(x . y)^2`` (scikit-learn's
#: PolynomialCountSketch), given explicitly: a map left with None takes the Polynomial
#: kernel's own defaults (degree 3, gamma 1 / n_features, coef0 1).
_POLY = {"degree": 2, "gamma": 1.0, "coef0": 0.0}

_RFF = "random Fourier features"
#: The built-in methods, in registration order: (name, map class name, default kernel,
#: fixed constructor arguments, description, default kernel parameters, family, label).
_BUILT_IN: list[tuple[str, str, str, dict[str, Any], str, dict[str, Any], str, str]] = [
    *[
        (
            f"rff-{sampler}",
            "RandomFourierFeatures",
            "rbf",
            {"variant": "cos_sin", "sampler": sampler},
            f"{_RFF}, cos/sin pairs, {description} frequencies",
            {},
            "fourier",
            label,
        )
        for sampler, description, label in [
            ("mc", "Monte Carlo", "RFF, Monte Carlo"),
            ("orthogonal", "orthogonal", "RFF, orthogonal"),
            ("halton", "scrambled Halton", "QMC RFF, Halton"),
            ("sobol", "randomly shifted Sobol'", "QMC RFF, Sobol'"),
        ]
    ],
    (
        "rff-cos-phase",
        "RandomFourierFeatures",
        "rbf",
        {"variant": "cos_phase", "sampler": "mc"},
        f"{_RFF}, cos + random phase (Rahimi & Recht)",
        {},
        "fourier",
        "RFF, cos + phase",
    ),
    # Structured maps: O(D log d) per row instead of O(D d); radial spectral measures only.
    (
        "fastfood",
        "Fastfood",
        "rbf",
        {"variant": "cos_sin"},
        "Fastfood (Le, Sarlós & Smola), Hadamard-Gaussian products, cos/sin pairs",
        {},
        "fourier",
        "Fastfood",
    ),
    (
        "sorf",
        "StructuredOrthogonalFeatures",
        "rbf",
        {"variant": "cos_sin"},
        "structured orthogonal random features (Yu et al.), cos/sin pairs",
        {},
        "fourier",
        "SORF",
    ),
    # The output width of random binning depends on the data; each row holds one non-zero
    # per grid, so n_grids = n_components gives the same cost per dot product as a dense
    # map of n_components features.
    (
        "binning",
        "RandomBinningFeatures",
        "laplacian",
        {"size_param": "n_grids"},
        "random binning on the Laplacian kernel, n_grids = n_components",
        {},
        "binning",
        "random binning",
    ),
    *[
        (
            f"nystroem-{lm}",
            "Nystroem",
            "rbf",
            {"landmarks": lm},
            f"Nyström, landmarks: {description}",
            {},
            "nystroem",
            f"Nyström, {label}",
        )
        for lm, description, label in [
            ("uniform", "uniformly sampled rows (Williams & Seeger)", "uniform"),
            ("kmeans", "k-means centres (Zhang, Tsang & Kwok)", "k-means"),
            ("leverage", "recursive ridge leverage scores (Musco & Musco)", "leverage scores"),
            (
                "rpcholesky",
                "randomly pivoted Cholesky (Chen, Epperly, Tropp & Webber)",
                "RPCholesky",
            ),
        ]
    ],
    *[
        (
            "ika" if centers == "uniform" else f"ika-{centers}",
            "IKA",
            "rbf",
            {"centers": centers},
            f"IKA (Ronchetti), Gaussian basis centred at {description}",
            {},
            "ika",
            label,
        )
        for centers, description, label in [
            ("uniform", "sampled rows", "IKA"),
            ("kmeans", "k-means centres", "IKA, k-means"),
        ]
    ],
    *[
        (
            name,
            cls_name,
            "polynomial",
            {},
            f"{description}, polynomial kernel (x.y)^2 by default",
            _POLY,
            "dot-product",
            label,
        )
        for name, cls_name, description, label in [
            (
                "rmfm",
                "RandomMaclaurinFeatures",
                "random Maclaurin features (Kar & Karnick)",
                "RMFM",
            ),
            ("crfm", "CompactRandomFeatures", "compact random features (Hamid et al.)", "CRFM"),
            ("tensorsketch", "TensorSketch", "TensorSketch (Pham & Pagh)", "TensorSketch"),
        ]
    ],
]

for _name, _cls_name, _kernel, _fixed, _description, _params, _family, _label in _BUILT_IN:
    _cls = getattr(_fm, _cls_name, None)
    if _cls is not None:
        register_method(
            MethodSpec(
                _name,
                _kernel,
                _generic(_cls, _kernel, **_fixed),
                _description,
                kernel_params=dict(_params),
                family=_family,
                label=_label,
            )
        )

_Skewed = getattr(_fm, "SkewedChi2Sampler", None)
if _Skewed is not None:
    _skewed_cls = _Skewed

    def _skewed_chi2(n_components: int, kernel_params: dict[str, Any], random_state: Any) -> Any:
        params = dict(kernel_params)
        params.pop("kernel", None)
        return _skewed_cls(
            skewedness=params.pop("skewedness", 1.0),
            n_components=n_components,
            random_state=random_state,
        )

    register_method(
        MethodSpec(
            "skewed-chi2",
            "skewed_chi2",
            _skewed_chi2,
            "random Fourier features of the skewed chi-squared kernel (Li et al.), "
            "skewedness 1; inputs above -1",
            kernel_params={"skewedness": 1.0},
            estimator_class=_skewed_cls,
            family="chi2",
            label="skewed χ² RFF",
        )
    )
