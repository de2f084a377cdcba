"""Experiments that compare the feature maps on real data.

* :class:`ExperimentConfig` (with :class:`DatasetConfig`, :class:`MethodConfig`): a
  declarative experiment, built in Python or read from TOML with :func:`load_config`;
* :func:`run_experiment`: runs it into a tidy table (CSV/JSON with provenance), resumable;
* the method registry: :func:`method_names`, :func:`get_method`, :func:`register_method`;
* :func:`summarize` / :func:`format_table`: mean and spread over seeds, as a text table.
"""

from ._config import METRICS, DatasetConfig, ExperimentConfig, MethodConfig, load_config
from ._registry import MethodSpec, get_method, method_names, register_method
from ._runner import RESULT_COLUMNS, ExperimentResult, prepare_data, read_results, run_experiment
from ._summary import format_table, summarize

__all__ = [
    "METRICS",
    "RESULT_COLUMNS",
    "DatasetConfig",
    "ExperimentConfig",
    "ExperimentResult",
    "MethodConfig",
    "MethodSpec",
    "format_table",
    "get_method",
    "load_config",
    "method_names",
    "prepare_data",
    "read_results",
    "register_method",
    "run_experiment",
    "summarize",
]
