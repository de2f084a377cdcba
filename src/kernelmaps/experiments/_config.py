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

A *cell* is one data set x method x n_components x seed; an experiment has at most
:data:`MAX_CELLS` of them (a larger one is refused when it is built: split it into several
experiments, each with its own output folder).  Every key is checked for its type and
range when the configuration is built, so that a mistake in a file is reported at once,
in one line naming the file, the key and the fix.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from .._suggest import did_you_mean
from ..bandwidth import BANDWIDTH_RULES
from ._config_checks import (
    check_keys,
    check_optional_str,
    check_table,
    distinct_ints,
    is_int,
    is_number,
)

__all__ = [
    "DOWNSTREAM_MODELS",
    "MAX_CELLS",
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

#: Most cells (data sets x methods x n_components x seeds) an experiment may have: the
#: plan, the records and the results table of a run are held in memory, and at even a
#: tenth of a second per cell this is about three hours of work.
MAX_CELLS = 100_000


_Entry = TypeVar("_Entry", "DatasetConfig", "MethodConfig")


def _check_cells(n_datasets: int, n_methods: int, n_components: int, n_seeds: int) -> None:
    n_cells = n_datasets * n_methods * n_components * n_seeds
    if n_cells > MAX_CELLS:
        raise ValueError(
            f"the experiment has {n_cells} cells ({n_datasets} data set(s) x {n_methods} "
            f"method(s) x {n_components} n_components x {n_seeds} seed(s)), more than the "
            f"limit of {MAX_CELLS}; use fewer seeds, methods, data sets or n_components, or "
            "split the study into several runs, each with its own output folder."
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
        where = f"datasets[{self.name!r}]"
        for key in ("n_fit", "n_eval"):
            value = getattr(self, key)
            if not is_int(value) or value < 2:
                raise ValueError(f"{where}: {key} must be an integer >= 2; got {value!r}.")
        if self.target is not None and not isinstance(self.target, str) and not is_int(self.target):
            raise ValueError(
                f"{where}: target must be a column name or index; got {self.target!r}."
            )
        check_optional_str(where, "label", self.label)
        if self.preprocess not in PREPROCESSING:
            raise ValueError(
                f"{where}: preprocess must be one of {PREPROCESSING}; got {self.preprocess!r}."
            )
        if not is_int(self.data_seed) or self.data_seed < 0:
            raise ValueError(f"{where}: data_seed must be an integer >= 0; got {self.data_seed!r}.")
        if not isinstance(self.in_sample, bool):
            raise ValueError(f"{where}: in_sample must be true or false; got {self.in_sample!r}.")

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

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"methods: name must be a non-empty string; got {self.name!r}.")
        where = f"methods[{self.name!r}]"
        check_optional_str(where, "label", self.label)
        check_optional_str(where, "kernel", self.kernel)
        check_table(where, "kernel_params", self.kernel_params)
        check_table(where, "params", self.params)

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
        self._check_entries()
        self._check_grid()
        self._check_metrics()
        self._check_bandwidth()
        self._check_downstream()
        self._check_names()

    def _check_entries(self) -> None:
        """The data sets and methods as lists of their configurations, at least one each."""
        for key in ("datasets", "methods"):
            entries = getattr(self, key)
            if isinstance(entries, (str, Mapping)) or not isinstance(entries, Sequence):
                raise ValueError(
                    f"{key} must be a list of names or [[{key}]] tables; got {entries!r}."
                )
        self.datasets = [_entry(DatasetConfig, d) for d in self.datasets]
        self.methods = [_entry(MethodConfig, m) for m in self.methods]
        if not self.datasets:
            raise ValueError("The experiment needs at least one data set.")
        if not self.methods:
            raise ValueError("The experiment needs at least one method.")

    def _check_grid(self) -> None:
        """``n_components`` and ``seeds`` as lists of distinct integers, within
        :data:`MAX_CELLS` cells."""
        if (
            isinstance(self.n_components, (str, Mapping))
            or not isinstance(self.n_components, Sequence)
            or not self.n_components
            or any(not is_int(d) or d < 1 for d in self.n_components)
        ):
            raise ValueError(
                f"n_components must be a non-empty list of positive integers; "
                f"got {self.n_components!r}."
            )
        self.n_components = distinct_ints("n_components", self.n_components, 1, "integers >= 1")
        counts = (len(self.datasets), len(self.methods), len(self.n_components))
        if isinstance(self.seeds, int) and not isinstance(self.seeds, bool):
            if self.seeds < 1:
                raise ValueError(f"seeds must be >= 1 (a count) or a list; got {self.seeds}.")
            _check_cells(*counts, self.seeds)  # before the list of seeds is made
            self.seeds = list(range(self.seeds))
        self.seeds = distinct_ints(
            "seeds", self.seeds, 0, "distinct integers >= 0 (or a number of seeds)"
        )
        _check_cells(*counts, len(self.seeds))

    def _check_metrics(self) -> None:
        """``metrics`` as a non-empty list of known metrics."""
        if isinstance(self.metrics, (str, Mapping)) or not isinstance(self.metrics, Sequence):
            raise ValueError(f"metrics must be a list of names; got {self.metrics!r}.")
        unknown = [m for m in self.metrics if m not in METRICS]
        if unknown:
            raise ValueError(f"Unknown metric(s) {unknown}; known metrics: {', '.join(METRICS)}.")
        if not self.metrics:
            raise ValueError(
                f"metrics must not be empty; give one or more of {', '.join(METRICS)}."
            )
        self.metrics = list(self.metrics)

    def _check_bandwidth(self) -> None:
        """``bandwidth`` a rule or a positive gamma; ``bandwidth_q`` a percentile."""
        if isinstance(self.bandwidth, str):
            if self.bandwidth not in BANDWIDTH_RULES:
                raise ValueError(
                    f"bandwidth must be one of {BANDWIDTH_RULES} or a positive number "
                    f"(gamma); got {self.bandwidth!r}."
                )
        elif not is_number(self.bandwidth) or not 0 < self.bandwidth < math.inf:
            raise ValueError(
                f"bandwidth as gamma must be a positive finite number; got {self.bandwidth!r}."
            )
        if not is_number(self.bandwidth_q) or not 0 < self.bandwidth_q < 100:
            raise ValueError(
                f"bandwidth_q (a percentile) must be a number in (0, 100); "
                f"got {self.bandwidth_q!r}."
            )

    def _check_downstream(self) -> None:
        """The downstream model and its regularisation."""
        if self.downstream_model not in DOWNSTREAM_MODELS:
            raise ValueError(
                f"downstream_model must be one of {DOWNSTREAM_MODELS}; "
                f"got {self.downstream_model!r}."
            )
        if not is_number(self.alpha) or not 0 < self.alpha < math.inf:
            raise ValueError(f"alpha must be a positive finite number; got {self.alpha!r}.")

    def _check_names(self) -> None:
        """The experiment's name, the data home, and distinct names of the data sets and
        of the methods."""
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"name must be a non-empty string; got {self.name!r}.")
        if self.data_home is not None and not isinstance(self.data_home, str):
            raise ValueError(f"data_home must be a folder name; got {self.data_home!r}.")
        for what, names in (
            ("data sets", [d.display for d in self.datasets]),
            ("methods", [m.display for m in self.methods]),
        ):
            if len(set(names)) != len(names):
                raise ValueError(
                    f"Two {what} share a name; give each a distinct label "
                    f"({what}: {', '.join(names)})."
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
        check_keys(where, data, cls)
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
        raise ValueError(
            f"unknown kernel {kernel!r}; known kernels: {', '.join(kernel_names())}."
            + did_you_mean(kernel, kernel_names())
        )
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
    check_keys(f"{where}: [[{table}]]", item, cls)
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
    text = _read_text(path)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: not valid TOML ({exc}); fix the file.") from None


def _read_text(path: Path) -> str:
    """The text of a configuration file, or one line saying why it cannot be read."""
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"{path}: not a text file in UTF-8 (byte {exc.start}); save it as UTF-8 text."
        ) from None
    except OSError as exc:
        raise ValueError(
            f"{path}: cannot be read ({exc.strerror or exc}); check the file and its permissions."
        ) from None


def load_config(path: str | os.PathLike[str]) -> ExperimentConfig:
    """Read an :class:`ExperimentConfig` from a TOML (or JSON) file.

    Raises
    ------
    FileNotFoundError
        When the file does not exist.
    ValueError
        For a file that cannot be read, invalid TOML, unknown keys, values of the wrong
        type or out of range, or more than :data:`MAX_CELLS` cells: one line naming the
        file and the fix.

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
    if path.is_dir():
        raise ValueError(f"{path}: is a folder; give the configuration file (TOML).")
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such configuration file.")
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(_read_text(path))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: not valid JSON ({exc}); fix the file.") from None
    else:
        data = _load_toml(path)
    if not isinstance(data, Mapping):
        raise ValueError(f"{path}: the configuration must be a table of keys (a JSON object).")
    try:
        return ExperimentConfig.from_dict(data, where=str(path))
    except (TypeError, ValueError) as exc:
        message = " ".join(str(exc).split())
        if not message.startswith(str(path)):
            message = f"{path}: {message}"
        raise ValueError(message) from None


def default_study(*, registered_only: bool = True) -> ExperimentConfig:
    """The default study of ``kernelmaps compare``, read from ``DEFAULT_STUDY``.

    Three bundled data sets (letter, covtype, ijcnn1); the method pairs of the kernel
    approximation study (RFF vs QMC RFF, Nyström uniform vs k-means, RMFM vs CRFM) with
    their successors (orthogonal RFF, leverage-score Nyström, TensorSketch, IKA, random
    binning); ``n_components`` 16, 64, 256; ten seeds.

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
    >>> [d.name for d in study.datasets], study.n_components, study.seeds == list(range(10))
    (['letter', 'covtype', 'ijcnn1'], [16, 64, 256], True)
    """
    config = load_config(DEFAULT_STUDY)
    if not registered_only:
        return config
    from ._registry import method_names

    names = method_names()
    return dataclasses.replace(config, methods=[m for m in config.methods if m.name in names])
