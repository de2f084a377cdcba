"""Experiments that compare the feature maps on real data.

* :class:`ExperimentConfig` (with :class:`DatasetConfig`, :class:`MethodConfig`): a
  declarative experiment, built in Python or read from TOML with :func:`load_config`;
  :func:`default_study` is the study ``kernelmaps compare`` runs by default, and
  :meth:`ExperimentConfig.with_options` derives a new one from it;
* :func:`run_experiment`: runs it into a tidy table (CSV/JSON with provenance), resumable;
* the method registry: :func:`method_names`, :func:`get_method`, :func:`register_method`,
  with each method's family (:data:`METHOD_FAMILIES`), label and kernel
  (:func:`kernel_label` names it in words) for figures;
* :func:`make_model` (with :func:`choose_gamma`): the ridge pipeline on a method's
  features that ``kernelmaps fit`` fits;
* :class:`SavedModel` with :func:`save_model` / :func:`load_model`: model files in the
  skops format, which cannot run code when read (:func:`trusted_model_types` is the
  allow-list of what they may hold);
* :func:`summarize` / :func:`format_table`: mean, median, quartiles and spread over seeds,
  as a text table;
  :func:`format_dimensions`: the statistical dimension of each data set of a run.
"""

from ._config import (
    MAX_CELLS,
    METRICS,
    DatasetConfig,
    ExperimentConfig,
    MethodConfig,
    default_study,
    load_config,
)
from ._dimension import format_dimensions
from ._executor import DescribedExecutor
from ._folder_lock import OutputFolderInUseError
from ._model_file import (
    MODEL_FORMAT_VERSION,
    ModelFileError,
    load_model,
    save_model,
    trusted_model_types,
)
from ._pipeline import (
    METHOD_ALIASES,
    FiniteStandardScaler,
    build_pipeline,
    choose_gamma,
    make_model,
    resolve_method,
)
from ._prepare import prepare_data
from ._registry import (
    KERNEL_LABELS,
    METHOD_FAMILIES,
    MethodSpec,
    get_method,
    kernel_label,
    method_names,
    register_method,
)
from ._runner import ExperimentResult, run_experiment
from ._saved_model import ColumnMismatchError, NonFinitePredictionError, SavedModel
from ._summary import format_table, metric_title, summarize
from ._tables import RESULT_COLUMNS, read_results
from ._verdicts import STUDY_PAIRS, format_verdicts, study_verdicts, write_verdicts

__all__ = [
    "KERNEL_LABELS",
    "MAX_CELLS",
    "METHOD_ALIASES",
    "METHOD_FAMILIES",
    "METRICS",
    "MODEL_FORMAT_VERSION",
    "RESULT_COLUMNS",
    "STUDY_PAIRS",
    "ColumnMismatchError",
    "DatasetConfig",
    "DescribedExecutor",
    "ExperimentConfig",
    "ExperimentResult",
    "FiniteStandardScaler",
    "MethodConfig",
    "MethodSpec",
    "ModelFileError",
    "NonFinitePredictionError",
    "OutputFolderInUseError",
    "SavedModel",
    "build_pipeline",
    "choose_gamma",
    "default_study",
    "format_dimensions",
    "format_table",
    "format_verdicts",
    "get_method",
    "kernel_label",
    "load_config",
    "load_model",
    "make_model",
    "method_names",
    "metric_title",
    "prepare_data",
    "read_results",
    "register_method",
    "resolve_method",
    "run_experiment",
    "save_model",
    "study_verdicts",
    "summarize",
    "trusted_model_types",
    "write_verdicts",
]
