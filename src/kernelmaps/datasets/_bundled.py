"""Small real data sets shipped inside the package (``kernelmaps/datasets/data``).

=======================  ============  ===============  =========================================
name                     rows x cols   task             source and licence
=======================  ============  ===============  =========================================
``letter``               20000 x 16    26 classes       UCI Letter Recognition (Frey & Slate
                                                        1991), LIBSVM's ``letter.scale`` and
                                                        ``letter.scale.t``; CC BY 4.0
``covtype``              10000 x 54    7 classes        UCI Covertype (Blackard & Dean 1999), a
                                                        10 000-row random sample; reuse
                                                        unlimited with retention of the
                                                        copyright notice for Jock A. Blackard
                                                        and Colorado State University
``cpu_act``              8192 x 21     regression       Delve comp-activ ``cpuAct`` (Rasmussen
                                                        et al., University of Toronto); Delve
                                                        data are distributed freely
``california_housing``   20640 x 8     regression       StatLib ``houses`` (Pace & Barry 1997),
                                                        the file scikit-learn's
                                                        ``fetch_california_housing`` builds on;
                                                        public
``ijcnn1``               10000 x 22    2 classes        IJCNN 2001 challenge (Prokhorov), the
                                                        LIBSVM copy; a stratified 10 000-row
                                                        sample of the 49 990 training rows;
                                                        the copy is BSD-3-Clause
=======================  ============  ===============  =========================================

The files are the original compressed files, unchanged, except ``ijcnn1`` (the sample,
written in svmlight format).  See ``kernelmaps/datasets/README.md`` for the exact
origins and checksums.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from ._csv import load_csv
from ._dataset import Dataset, check_subset
from ._svmlight import load_svmlight

__all__ = [
    "BUNDLED",
    "BundledInfo",
    "list_datasets",
    "load_california_housing",
    "load_covtype",
    "load_cpu_act",
    "load_ijcnn1",
    "load_letter",
]


def _data_path(filename: str) -> Path:
    return Path(str(resources.files("kernelmaps.datasets") / "data" / filename))


@dataclasses.dataclass(frozen=True)
class BundledInfo:
    """What :func:`list_datasets` reports about one bundled data set."""

    name: str
    shape: tuple[int, int]
    task: str
    n_classes: int | None
    files: tuple[str, ...]
    source: str
    licence: str
    loader: Callable[..., Any]
    #: The rows of the standard training and test parts, for a set that has them.
    split: tuple[int, int] | None = None


def _result(ds: Dataset, return_X_y: bool) -> Any:
    return (ds.X, ds.y) if return_X_y else ds


def _described(ds: Dataset, description: str) -> Dataset:
    """``ds`` with the task, source and licence of its :data:`BUNDLED` entry."""
    info = BUNDLED[ds.name]
    ds.task = info.task
    ds.description = description
    ds.source, ds.licence = info.source, info.licence
    return ds


_LETTER_NAMES = [
    "x-box", "y-box", "width", "high", "onpix", "x-bar", "y-bar", "x2bar", "y2bar",
    "xybar", "x2ybr", "xy2br", "x-ege", "xegvy", "y-ege", "yegvx",
]  # fmt: skip


def load_letter(*, subset: str = "all", return_X_y: bool = False) -> Any:
    """The letter recognition data: 20000 x 16, 26 classes (0 = 'A' ... 25 = 'Z').

    Features are LIBSVM's scaling of the 16 integer attributes to [-1, 1].  The standard
    split is LIBSVM's: the 15000 rows of ``letter.scale`` for training, the 5000 of
    ``letter.scale.t`` for testing.

    Parameters
    ----------
    subset : {"all", "train", "test"}, default="all"
        The training rows, the test rows, or all 20000, the training rows first
        (``Dataset.n_train`` says where the test rows begin).
    return_X_y : bool, default=False
        Return ``(X, y)`` (the 16 features and the letter 0-25) instead of a :class:`Dataset`.

    Returns
    -------
    Dataset or tuple of ndarray
        The rows of ``subset``, or ``(X, y)``.

    Examples
    --------
    >>> from kernelmaps.datasets import load_letter
    >>> X, y = load_letter(return_X_y=True)
    >>> X.shape, int(y.min()), int(y.max())
    ((20000, 16), 0, 25)
    >>> load_letter(subset="train").shape, load_letter(subset="test").shape
    ((15000, 16), (5000, 16))
    """
    check_subset("letter", subset, has_split=True)
    files = BUNDLED["letter"].files
    chosen = {"train": files[:1], "test": files[1:], "all": files}[subset]
    parts = [load_svmlight(_data_path(f), n_features=16) for f in chosen]
    X = np.vstack([p.X for p in parts])
    y = np.concatenate([np.asarray(p.y) for p in parts]) - 1.0
    ds = Dataset("letter", X, y, "classification", feature_names=list(_LETTER_NAMES),
                 target_name="letter", subset=subset,
                 n_train=parts[0].shape[0] if subset == "all" else None)  # fmt: skip
    description = (
        "UCI Letter Recognition: 16 statistics of images of capital letters in 20 fonts; "
        "LIBSVM scaling to [-1, 1]. Target 0-25 = A-Z."
    )
    return _result(_described(ds, description), return_X_y)


def load_covtype(*, return_X_y: bool = False) -> Any:
    """A 10 000-row random sample of the forest covertype data: 10000 x 54, 7 classes.

    Ten cartographic variables, 4 wilderness-area and 40 soil-type indicators; target
    ``Cover_Type`` 1-7.  The class mix matches that of the full 581 012 rows.

    Parameters
    ----------
    return_X_y : bool, default=False
        Return ``(X, y)`` (the 54 features and the cover type 1-7) instead of a :class:`Dataset`.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.datasets import load_covtype
    >>> data = load_covtype()
    >>> data.shape, data.task, np.unique(data.y).astype(int).tolist()
    ((10000, 54), 'classification', [1, 2, 3, 4, 5, 6, 7])
    """
    ds = load_csv(_data_path(BUNDLED["covtype"].files[0]), "Cover_Type", name="covtype")
    description = (
        "UCI Covertype, 10 000 random rows: forest cover type (7 classes) from "
        "cartographic variables."
    )
    return _result(_described(ds, description), return_X_y)


_CPU_ACT_NAMES = [
    "lread", "lwrite", "scall", "sread", "swrite", "fork", "exec", "rchar", "wchar",
    "pgout", "ppgout", "pgfree", "pgscan", "atch", "pgin", "ppgin", "pflt", "vflt",
    "runqsz", "freemem", "freeswap",
]  # fmt: skip


def load_cpu_act(*, return_X_y: bool = False) -> Any:
    """Delve's cpuAct: 8192 x 21 system activity measures; target ``usr``, the percentage
    of time the CPUs ran in user mode (regression).

    Parameters
    ----------
    return_X_y : bool, default=False
        Return ``(X, y)`` (the 21 counters and ``usr``) instead of a :class:`Dataset`.

    Examples
    --------
    >>> from kernelmaps.datasets import load_cpu_act
    >>> data = load_cpu_act()
    >>> data.shape, data.task, data.target_name
    ((8192, 21), 'regression', 'usr')
    """
    ds = load_csv(_data_path(BUNDLED["cpu_act"].files[0]), "22", name="cpu_act")
    ds.feature_names = list(_CPU_ACT_NAMES)
    ds.target_name = "usr"
    description = (
        "Delve comp-activ cpuAct: activity counters of a Sun SPARCstation; target usr, "
        "the percentage of time in user mode."
    )
    return _result(_described(ds, description), return_X_y)


_CALIFORNIA_NAMES = [
    "MedInc", "HouseAge", "AveRooms", "AveBedrms", "Population", "AveOccup", "Latitude",
    "Longitude",
]  # fmt: skip


def load_california_housing(*, return_X_y: bool = False) -> Any:
    """California housing: 20640 block groups x 8 features; target the median house
    value in units of 100 000 dollars (regression).

    The features are those of scikit-learn's ``fetch_california_housing``, derived from
    the StatLib file: MedInc, HouseAge, AveRooms, AveBedrms, Population, AveOccup,
    Latitude, Longitude.

    Parameters
    ----------
    return_X_y : bool, default=False
        Return ``(X, y)`` (8 features, value in 100 000 dollars) instead of a :class:`Dataset`.

    Examples
    --------
    >>> from kernelmaps.datasets import load_california_housing
    >>> data = load_california_housing()
    >>> data.shape, data.feature_names[:2], data.target_name
    ((20640, 8), ['MedInc', 'HouseAge'], 'MedHouseVal')
    """
    raw = load_csv(_data_path(BUNDLED["california_housing"].files[0]), "median_house_value")
    cols = {name: raw.X[:, j] for j, name in enumerate(raw.feature_names)}
    households = cols["households"]
    X = np.column_stack(
        [
            cols["median_income"],
            cols["housing_median_age"],
            cols["total_rooms"] / households,
            cols["total_bedrooms"] / households,
            cols["population"],
            cols["population"] / households,
            cols["latitude"],
            cols["longitude"],
        ]
    )
    y = np.asarray(raw.y, dtype=np.float64) / 100_000.0
    ds = Dataset("california_housing", X, y, "regression",
                 feature_names=list(_CALIFORNIA_NAMES), target_name="MedHouseVal")  # fmt: skip
    description = (
        "California housing (1990 census block groups): median house value "
        "(100 000 dollars) from income, age, rooms, occupancy and location."
    )
    return _result(_described(ds, description), return_X_y)


def load_ijcnn1(*, return_X_y: bool = False) -> Any:
    """A stratified 10 000-row sample of ijcnn1: 10000 x 22, labels -1 / +1 (9029 / 971).

    Parameters
    ----------
    return_X_y : bool, default=False
        Return ``(X, y)`` (the 22 features and the labels -1 / +1) instead of a :class:`Dataset`.

    Examples
    --------
    >>> from kernelmaps.datasets import load_ijcnn1
    >>> X, y = load_ijcnn1(return_X_y=True)
    >>> X.shape, int((y == 1).sum()), int((y == -1).sum())
    ((10000, 22), 971, 9029)
    """
    ds = load_svmlight(_data_path(BUNDLED["ijcnn1"].files[0]), n_features=22, name="ijcnn1")
    description = (
        "IJCNN 2001 neural network challenge (engine misfire detection), LIBSVM copy; "
        "a stratified 10 000-row sample of the training rows."
    )
    return _result(_described(ds, description), return_X_y)


BUNDLED: dict[str, BundledInfo] = {
    "letter": BundledInfo(
        "letter",
        (20000, 16),
        "classification",
        26,
        ("letter.scale.bz2", "letter.scale.t.bz2"),
        "UCI Letter Recognition (P. W. Frey and D. J. Slate, 1991), LIBSVM copy",
        "CC BY 4.0",
        load_letter,
        split=(15000, 5000),
    ),
    "covtype": BundledInfo(
        "covtype",
        (10000, 54),
        "classification",
        7,
        ("covtype_small.csv.gz",),
        "UCI Covertype (J. A. Blackard and D. J. Dean, 1999), 10 000 random rows",
        "reuse unlimited with retention of the copyright notice for Jock A. Blackard "
        "and Colorado State University",
        load_covtype,
    ),
    "cpu_act": BundledInfo(
        "cpu_act",
        (8192, 21),
        "regression",
        None,
        ("cpu_act.csv.gz",),
        "Delve comp-activ cpuAct (C. E. Rasmussen et al., University of Toronto)",
        "freely distributed Delve data; no licence stated",
        load_cpu_act,
    ),
    "california_housing": BundledInfo(
        "california_housing",
        (20640, 8),
        "regression",
        None,
        ("cal_housing.data.gz",),
        "StatLib houses.zip (R. K. Pace and R. Barry, 1997)",
        "public (StatLib); no licence stated",
        load_california_housing,
    ),
    "ijcnn1": BundledInfo(
        "ijcnn1",
        (10000, 22),
        "classification",
        2,
        ("ijcnn1_10k.svm.bz2",),
        "IJCNN 2001 challenge (D. Prokhorov), LIBSVM copy via X-DataInitiative/tick-datasets; "
        "stratified 10 000-row sample",
        "BSD-3-Clause (the copy); data from the LIBSVM collection",
        load_ijcnn1,
    ),
}


def list_datasets() -> list[str]:
    """Names of the data sets bundled with the package.

    Returns
    -------
    list of str
        Keys of :data:`BUNDLED`, each loadable with :func:`kernelmaps.datasets.load_dataset`.

    Examples
    --------
    >>> from kernelmaps.datasets import list_datasets
    >>> list_datasets()
    ['letter', 'covtype', 'cpu_act', 'california_housing', 'ijcnn1']
    """
    return list(BUNDLED)
