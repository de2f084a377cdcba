"""Real data: small sets bundled with the package, larger ones in a data home, user files.

Bundled (inside the installed package, no network needed; see :func:`list_datasets`):
``letter``, ``covtype`` (10 000 random rows), ``cpu_act``, ``california_housing`` and
``ijcnn1`` (a stratified 10 000-row sample).  Sources and licences are listed in the
docstring of ``kernelmaps.datasets._bundled`` and in ``datasets/README.md``.

Larger sets (USPS, MNIST, FSDD MFCC frames, flow cytometry, ...) are read from a data home
(``data_home=`` or ``$KERNELMAPS_DATA``) with :func:`load_from_home`; nothing is
downloaded.  User files (CSV with a header, svmlight/libsvm, ``.npy``, ``.npz``) are read
with :func:`load_file`.

:func:`resolve_dataset` finds what a name stands for (a file path, a bundled name or a
data-home name, in that order; see its documentation) and :func:`load_dataset` loads it:
the command line resolves every data argument through it.  Sets with a standard
train/test split (``letter``, ``usps``) keep it: ``subset="train"``, ``"test"`` or
``"all"`` (both, the training rows first; the default).
"""

from __future__ import annotations

from ._bundled import (
    BUNDLED,
    list_datasets,
    load_california_housing,
    load_covtype,
    load_cpu_act,
    load_ijcnn1,
    load_letter,
)
from ._csv import load_csv
from ._dataset import SUBSETS, Dataset, infer_task
from ._file_checks import DataFileError
from ._files import file_format, load_file
from ._home import DATA_HOME_SETS, get_data_home, list_data_home, load_from_home
from ._home import ENV_VAR as DATA_HOME_ENV
from ._numpy_files import load_npy, load_npz
from ._resolve import ResolvedDataset, load_dataset, resolve_dataset
from ._svmlight import load_svmlight

__all__ = [
    "BUNDLED",
    "DATA_HOME_ENV",
    "DATA_HOME_SETS",
    "SUBSETS",
    "DataFileError",
    "Dataset",
    "ResolvedDataset",
    "file_format",
    "get_data_home",
    "infer_task",
    "list_data_home",
    "list_datasets",
    "load_california_housing",
    "load_covtype",
    "load_cpu_act",
    "load_csv",
    "load_dataset",
    "load_file",
    "load_from_home",
    "load_ijcnn1",
    "load_letter",
    "load_npy",
    "load_npz",
    "load_svmlight",
    "resolve_dataset",
]
