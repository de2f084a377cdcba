"""Real data: small sets bundled with the package, larger ones in a data home, user files.

Bundled (inside the installed package, no network needed; see :func:`list_datasets`):
``letter``, ``covtype`` (10 000 random rows), ``cpu_act``, ``california_housing`` and
``ijcnn1`` (a stratified 10 000-row sample).  Sources and licences are listed in the
docstring of ``kernelmaps.datasets._bundled`` and in ``datasets/README.md``.

Larger sets (USPS, MNIST, FSDD MFCC frames, flow cytometry, ...) are read from a data home
(``data_home=`` or ``$KERNELMAPS_DATA``) with :func:`load_from_home`; nothing is
downloaded.  User files (CSV with a header, svmlight/libsvm, ``.npy``, ``.npz``) are read
with :func:`load_file`.

:func:`load_dataset` takes any of these: a bundled name, a data-home name or a file path.
"""

from __future__ import annotations

import os
from pathlib import Path

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
from ._dataset import Dataset, infer_task
from ._file_checks import DataFileError
from ._files import file_format, load_file
from ._home import DATA_HOME_SETS, get_data_home, list_data_home, load_from_home
from ._home import ENV_VAR as DATA_HOME_ENV
from ._numpy_files import load_npy, load_npz
from ._svmlight import load_svmlight

__all__ = [
    "BUNDLED",
    "DATA_HOME_ENV",
    "DATA_HOME_SETS",
    "DataFileError",
    "Dataset",
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
]


def load_dataset(
    name: str,
    *,
    target: str | int | None = None,
    data_home: str | os.PathLike[str] | None = None,
) -> Dataset:
    """Load a data set by bundled name, data-home name or file path.

    Parameters
    ----------
    name : str
        A bundled name (``"letter"``), a data-home name (``"usps"``), or the path of a
        CSV / svmlight / ``.npy`` / ``.npz`` file.
    target : str or int, default=None
        Target column of a user file (see :func:`load_file`).
    data_home : str or path-like, default=None
        Data home for the data-home sets (default ``$KERNELMAPS_DATA``).

    Returns
    -------
    Dataset

    Examples
    --------
    >>> from kernelmaps.datasets import load_dataset
    >>> data = load_dataset("letter")
    >>> data.name, data.shape, data.task
    ('letter', (20000, 16), 'classification')
    """
    if name in BUNDLED:
        ds: Dataset = BUNDLED[name].loader()
        return ds
    if name in DATA_HOME_SETS:
        home_ds: Dataset = load_from_home(name, data_home)
        return home_ds
    if os.sep in name or "." in Path(name).name or Path(name).exists():
        return load_file(name, target)
    raise ValueError(
        f"Unknown data set {name!r}: not a bundled set ({', '.join(BUNDLED)}), not a "
        f"data-home set ({', '.join(DATA_HOME_SETS)}) and not a file path."
    )
