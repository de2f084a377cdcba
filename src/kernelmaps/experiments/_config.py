"""Declarative experiments: data sets x methods x n_components x seeds x metrics.

An :class:`ExperimentConfig` is built in Python or read from a TOML file with
:func:`load_config`::

    name = "seed-study"
    n_components = [16, 64, 256]
    seeds = 5                      # or a list: [0, 1, 2, 3, 4]
    metrics = ["fro_error", "fit_time", "transform_time"]
    bandwidth = "mean_distance"    # or "median", "percentile", or a number (gamma)

    [[datasets]]
    name = "letter"                # bundled name, data-home name or file path
    n_fit = 1000
    n_eval = 1000

    [[methods]]
    name = "rff-mc"                # a registered method (see ``kernelmaps compare --help``)

    [[methods]]
    name = "nystroem-kmeans"
    label = "Nyström k-means"      # shown in tables and figures
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from ..bandwidth import BANDWIDTH_RULES

__all__ = [
    "DOWNSTREAM_MODELS",
    "METRICS",
    "PREPROCESSING",
    "DatasetConfig",
    "ExperimentConfig",
    "MethodConfig",
    "default_study",
    "load_config",
]

#: The study that ``kernelmaps compare`` runs by default, in the format of :func:`load_config`.
DEFAULT_STUDY = Path(__file__).parent / "studies" / "default.toml"

#: Metrics a runner can record.  ``*_error`` are relative kernel approximation errors on
#: the held-out rows; times are in seconds, memory in bytes; ``accuracy`` (classification)
#: and ``rmse`` (regression) score a linear model trained on the features of the fit rows
#: and tested on the held-out rows (``downstream`` asks for whichever fits the task).
METRICS = (
    "fro_error",
    "spectral_error",
    "max_error",
    "fit_time",
    "transform_time",
    "peak_memory",
    "n_features_out",
    "accuracy",
    "rmse",
    "downstream",
)
PREPROCESSING = ("minmax", "standard", "none")
DOWNSTREAM_MODELS = ("ridge", "linear_svc")


_Entry = TypeVar("_Entry", "DatasetConfig", "MethodConfig")


def _check_keys(where: str, data: Mapping[str, Any], cls: type) -> None:
    known = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValueError(
            f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; "
            f"known keys are {', '.join(sorted(known))}."
        )


@dataclasses.dataclass
class DatasetConfig:
    """One data set of an experiment and how its rows are used.

    Parameters
    ----------
    name : str
        A bundled name (``"letter"``), a data-home name (``"usps"``) or a file path.
    target : str or int, default=None
        Target column of a user file.
    label : str, default=None
        Name shown in tables (default: ``name``, or the file's stem).
    n_fit : int, default=1000
        Rows the maps are fitted on (a random subset of the data).
    n_eval : int, default=500
        Held-out rows on which the kernel matrix is compared (and downstream scores are
        measured); drawn from the rows not used for fitting.
    preprocess : {"minmax", "standard", "none"}, default="minmax"
        Scaling learned on the fit rows: to the unit hypercube, to zero mean and unit
        variance, or none.
    data_seed : int, default=0
        Seed of the choice of fit and held-out rows (the same for every method and seed,
        so that methods are compared on the same rows).
    in_sample : bool, default=False
        Measure the kernel error on the fit rows themselves (the kernel matrix of the data
        the map was fitted on, as in Deshmukh's study) instead of held-out rows;
        ``n_eval`` is then unused (downstream scores still use held-out rows).

    Examples
    --------
    >>> from kernelmaps.experiments import DatasetConfig
    >>> DatasetConfig("data/my_rows.csv", target="y", n_fit=200).display
    'my_rows'
    """

    name: str
    target: str | int | None = None
    label: str | None = None
    n_fit: int = 1000
    n_eval: int = 500
    preprocess: str = "minmax"
    data_seed: int = 0
    in_sample: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"datasets: name must be a non-empty string; got {self.name!r}.")
        for key in ("n_fit", "n_eval"):
            value = getattr(self, key)
            if not isinstance(value, int) or isinstance(value, bool) or value < 2:
                raise ValueError(f"datasets[{self.name!r}]: {key} must be an integer >= 2.")
        if self.preprocess not in PREPROCESSING:
            raise ValueError(
                f"datasets[{self.name!r}]: preprocess must be one of {PREPROCESSING}; "
                f"got {self.preprocess!r}."
            )

    @property
    def display(self) -> str:
        """The name shown in tables."""
        if self.label:
            return self.label
        if os.sep in self.name or "/" in self.name:
            return Path(self.name).name.split(".")[0]
        return self.name

    def key(self) -> str:
        """A digest of the settings that change results."""
        return _digest(dataclasses.asdict(self) | {"label": None})


@dataclasses.dataclass
class MethodConfig:
    """One method of an experiment: a registered name with optional settings.

    Parameters
    ----------
    name : str
        A registered method (:func:`kernelmaps.experiments.method_names`).
    label : str, default=None
        Name shown in tables and figures (default: ``name``).
    kernel : str, default=None
        Kernel to approximate (default: the method's own).
    kernel_params : dict, default={}
        Kernel parameters overriding the defaults (e.g. ``{"degree": 3}``); an explicit
        ``gamma`` here overrides the bandwidth rule.
    params : dict, default={}
        Estimator parameters set on the map after construction (``set_params``).

    Examples
    --------
    >>> from kernelmaps.experiments import MethodConfig
    >>> MethodConfig("rff-sobol", label="QMC RFF", kernel="laplacian").display
    'QMC RFF'
    """

    name: str
    label: str | None = None
    kernel: str | None = None
    kernel_params: dict[str, Any] = dataclasses.field(default_factory=dict)
    params: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def display(self) -> str:
        """The name shown in tables."""
        return self.label or self.name

    def key(self) -> str:
        """A digest of the settings that change results."""
        return _digest(dataclasses.asdict(self) | {"label": None})


def _digest(obj: Any) -> str:
    text = json.dumps(obj, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclasses.dataclass
class ExperimentConfig:
    """A full experiment.

    Parameters
    ----------
    datasets : list of DatasetConfig
    methods : list of MethodConfig
    n_components : list of int
        The grid of output dimensions (for random binning: the number of grids).
    seeds : list of int
        Seeds of the maps; each (data set, method, n_components) cell runs once per seed.
    metrics : list of str, default=["fro_error", "fit_time", "transform_time"]
        See :data:`METRICS`.
    bandwidth : str or float, default="mean_distance"
        Rule choosing ``gamma`` of the shift-invariant kernels from the fit rows
        (:func:`kernelmaps.bandwidth.gamma_from_data`): ``"mean_distance"`` (the kernel
        approximation study's rule), ``"median"``, ``"percentile"``; or a number, used as
        ``gamma`` itself.
    bandwidth_q : float, default=10.0
        Percentile for ``bandwidth="percentile"`` (the IKA paper's 10th).
    downstream_model : {"ridge", "linear_svc"}, default="ridge"
        Linear model trained on the features for the downstream metrics.
    alpha : float, default=1e-3
        Its regularisation (ridge ``alpha``; ``C = 1 / alpha`` for the linear SVC).
    name : str, default="experiment"
        Recorded in the results.
    data_home : str, default=None
        Data home for the data-home sets (default ``$KERNELMAPS_DATA``).

    Examples
    --------
    >>> from kernelmaps.experiments import ExperimentConfig
    >>> config = ExperimentConfig(datasets=["letter"], methods=["rff-mc", "rff-sobol"],
    ...                           n_components=[16, 64], seeds=2)
    >>> config.seeds, [m.display for m in config.methods]
    ([0, 1], ['rff-mc', 'rff-sobol'])
    """

    datasets: list[DatasetConfig]
    methods: list[MethodConfig]
    n_components: list[int]
    seeds: list[int] = dataclasses.field(default_factory=lambda: [0, 1, 2])
    metrics: list[str] = dataclasses.field(
        default_factory=lambda: ["fro_error", "fit_time", "transform_time"]
    )
    bandwidth: str | float = "mean_distance"
    bandwidth_q: float = 10.0
    downstream_model: str = "ridge"
    alpha: float = 1e-3
    name: str = "experiment"
    data_home: str | None = None

    def __post_init__(self) -> None:
        self.datasets = [_entry(DatasetConfig, d) for d in self.datasets]
        self.methods = [_entry(MethodConfig, m) for m in self.methods]
        if isinstance(self.seeds, int) and not isinstance(self.seeds, bool):
            if self.seeds < 1:
                raise ValueError(f"seeds must be >= 1 (a count) or a list; got {self.seeds}.")
            self.seeds = list(range(self.seeds))
        self.seeds = [int(s) for s in self.seeds]
        if not self.datasets:
            raise ValueError("The experiment needs at least one data set.")
        if not self.methods:
            raise ValueError("The experiment needs at least one method.")
        if not self.n_components or any(
            not isinstance(d, int) or isinstance(d, bool) or d < 1 for d in self.n_components
        ):
            raise ValueError(
                f"n_components must be a non-empty list of positive integers; "
                f"got {self.n_components!r}."
            )
        if not self.seeds:
            raise ValueError("seeds must not be empty.")
        unknown = [m for m in self.metrics if m not in METRICS]
        if unknown:
            raise ValueError(f"Unknown metric(s) {unknown}; known metrics: {', '.join(METRICS)}.")
        if isinstance(self.bandwidth, str):
            if self.bandwidth not in BANDWIDTH_RULES:
                raise ValueError(
                    f"bandwidth must be one of {BANDWIDTH_RULES} or a positive number "
                    f"(gamma); got {self.bandwidth!r}."
                )
        elif not isinstance(self.bandwidth, (int, float)) or self.bandwidth <= 0:
            raise ValueError(f"bandwidth as gamma must be positive; got {self.bandwidth!r}.")
        if self.downstream_model not in DOWNSTREAM_MODELS:
            raise ValueError(
                f"downstream_model must be one of {DOWNSTREAM_MODELS}; "
                f"got {self.downstream_model!r}."
            )
        labels = [m.display for m in self.methods]
        if len(set(labels)) != len(labels):
            raise ValueError(
                "Two methods share a name; give each a distinct label "
                f"(methods: {', '.join(labels)})."
            )

    def settings_key(self) -> str:
        """A digest of the settings shared by all cells that change their results."""
        return _digest(
            {
                "bandwidth": self.bandwidth,
                "bandwidth_q": self.bandwidth_q,
                "downstream_model": self.downstream_model,
                "alpha": self.alpha,
            }
        )

    def to_dict(self) -> dict[str, Any]:
        """A plain dict (JSON/TOML-able; ``None`` values dropped)."""
        return _drop_none(dataclasses.asdict(self))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, where: str = "config") -> ExperimentConfig:
        """Build from a dict shaped like the TOML file."""
        data = dict(data)
        _check_keys(where, data, cls)
        for key in ("datasets", "methods", "n_components"):
            if key not in data:
                raise ValueError(f"{where}: missing key {key!r}.")
        if not isinstance(data["datasets"], list) or not isinstance(data["methods"], list):
            raise ValueError(f"{where}: datasets and methods must be lists ([[datasets]] tables).")
        data["datasets"] = [_entry(DatasetConfig, d, where) for d in data["datasets"]]
        data["methods"] = [_entry(MethodConfig, m, where) for m in data["methods"]]
        return cls(**data)

    def with_options(
        self,
        *,
        datasets: Sequence[str] | None = None,
        target: str | int | None = None,
        methods: Sequence[str] | None = None,
        kernel: str | None = None,
        n_components: Sequence[int] | None = None,
        seeds: int | None = None,
        metrics: Sequence[str] | None = None,
        bandwidth: str | float | None = None,
        n_fit: int | None = None,
        n_eval: int | None = None,
        data_home: str | None = None,
    ) -> ExperimentConfig:
        """A new, validated configuration with the given settings replaced.

        Each option left at ``None`` keeps the value of this configuration, which is not
        changed.

        Parameters
        ----------
        datasets : sequence of str, default=None
            Names or files replacing the data sets (each with ``target``).
        target : str or int, default=None
            Target column of the files given with ``datasets``.
        methods : sequence of str, default=None
            Registered method names replacing the methods.
        kernel : str, default=None
            A kernel name: the methods that can approximate it are kept and set to it, the
            others are left out (an error when none can).
        n_components : sequence of int, default=None
        seeds : int, default=None
            A number of seeds, ``0 .. seeds - 1``.
        metrics : sequence of str, default=None
        bandwidth : str or float, default=None
        n_fit, n_eval : int, default=None
            Set on every data set.
        data_home : str, default=None

        Returns
        -------
        ExperimentConfig
            Validated like any configuration; ``self`` is left as it was.

        Examples
        --------
        >>> from kernelmaps.experiments import default_study
        >>> study = default_study().with_options(
        ...     datasets=["letter"], methods=["rff-mc", "binning"], kernel="laplacian",
        ...     n_components=[8], seeds=2, n_fit=100)
        >>> [(m.name, m.kernel) for m in study.methods], study.seeds, study.datasets[0].n_fit
        ([('rff-mc', 'laplacian'), ('binning', 'laplacian')], [0, 1], 100)
        """
        if target is not None and datasets is None:
            raise ValueError("target applies to the data files given with datasets.")
        changes: dict[str, Any] = {
            key: list(value)
            for key, value in [("n_components", n_components), ("metrics", metrics)]
            if value is not None
        }
        changes |= {
            key: value
            for key, value in [("seeds", seeds), ("bandwidth", bandwidth), ("data_home", data_home)]
            if value is not None
        }
        new_datasets = (
            [DatasetConfig(d, target=target) for d in datasets] if datasets else self.datasets
        )
        sizes: dict[str, Any] = {
            key: v for key, v in [("n_fit", n_fit), ("n_eval", n_eval)] if v is not None
        }
        changes["datasets"] = [dataclasses.replace(d, **sizes) for d in new_datasets]
        changes["methods"] = _methods_for(
            [_registered(m) for m in methods] if methods else self.methods, kernel
        )
        return dataclasses.replace(self, **changes)


def _registered(name: str) -> MethodConfig:
    from ._registry import get_method

    get_method(name)  # an error naming the known methods
    return MethodConfig(name)


def _methods_for(methods: list[MethodConfig], kernel: str | None) -> list[MethodConfig]:
    """The methods that can approximate ``kernel``, set to it (all of them when ``None``)."""
    if kernel is None:
        return list(methods)
    from ..kernels import kernel_names
    from ._registry import get_method

    if kernel not in kernel_names():
        raise ValueError(f"unknown kernel {kernel!r}; known kernels: {', '.join(kernel_names())}.")
    kept = [
        dataclasses.replace(m, kernel=kernel)
        for m in methods
        if get_method(m.name).supports(kernel)
    ]
    if not kept:
        raise ValueError(f"none of the chosen methods can approximate the {kernel!r} kernel.")
    return kept


def _drop_none(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _drop_none(v) for k, v in obj.items() if v is not None}
    if isinstance(obj, list):
        return [_drop_none(v) for v in obj]
    return obj


def _entry(cls: type[_Entry], item: Any, where: str = "config") -> _Entry:
    """A data set or method of an experiment from its name, its table or itself."""
    if isinstance(item, cls):
        return item
    if isinstance(item, str):
        return cls(item)
    table, what = ("datasets", "data set") if cls is DatasetConfig else ("methods", "method")
    if not isinstance(item, Mapping):
        raise ValueError(f"{where}: each {what} must be a name or a table; got {item!r}.")
    _check_keys(f"{where}: [[{table}]]", item, cls)
    if "name" not in item:
        raise ValueError(f"{where}: a [[{table}]] table has no 'name'.")
    return cls(**item)


def _load_toml(path: Path) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        try:
            import tomli as tomllib
        except ImportError as exc:
            raise ImportError(
                "Reading TOML files on Python 3.10 needs the tomli package: pip install tomli"
            ) from exc
    with open(path, "rb") as fh:
        try:
            return tomllib.load(fh)
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"{path}: not valid TOML ({exc}).") from None


def load_config(path: str | os.PathLike[str]) -> ExperimentConfig:
    """Read an :class:`ExperimentConfig` from a TOML (or JSON) file.

    Raises
    ------
    FileNotFoundError
        When the file does not exist.
    ValueError
        For invalid TOML, unknown keys or invalid values, naming the file.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from kernelmaps.experiments import load_config
    >>> path = Path(tempfile.mkdtemp()) / "study.toml"
    >>> lines = ["n_components = [8]", 'datasets = ["letter"]', 'methods = ["rff-mc"]']
    >>> _ = path.write_text("\\n".join(lines))
    >>> load_config(path).n_components
    [8]
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such configuration file.")
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: not valid JSON ({exc}).") from None
    else:
        data = _load_toml(path)
    try:
        return ExperimentConfig.from_dict(data, where=str(path))
    except (TypeError, ValueError) as exc:
        message = str(exc)
        if not message.startswith(str(path)):
            message = f"{path}: {message}"
        raise ValueError(message) from None


def default_study(*, registered_only: bool = True) -> ExperimentConfig:
    """The default study of ``kernelmaps compare``, read from :data:`DEFAULT_STUDY`.

    Three bundled data sets (letter, covtype, ijcnn1); the method pairs of the kernel
    approximation study (RFF vs QMC RFF, Nyström uniform vs k-means, RMFM vs CRFM) with
    their successors (orthogonal RFF, leverage-score Nyström, TensorSketch, IKA, random
    binning); ``n_components`` 16, 64, 256; three seeds.

    Parameters
    ----------
    registered_only : bool, default=True
        Leave out the methods that are not registered (their maps are unavailable).

    Returns
    -------
    ExperimentConfig

    Examples
    --------
    >>> from kernelmaps.experiments import default_study
    >>> study = default_study()
    >>> [d.name for d in study.datasets], study.n_components, study.seeds
    (['letter', 'covtype', 'ijcnn1'], [16, 64, 256], [0, 1, 2])
    """
    config = load_config(DEFAULT_STUDY)
    if not registered_only:
        return config
    from ._registry import method_names

    names = method_names()
    return dataclasses.replace(config, methods=[m for m in config.methods if m.name in names])
