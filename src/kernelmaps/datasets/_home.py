"""Larger data sets kept in a *data home*: a folder outside the package.

Nothing is downloaded.  The data home is the ``data_home`` argument, else the
``KERNELMAPS_DATA`` environment variable.  Inside it each data set lives at the relative
paths listed in :data:`DATA_HOME_SETS` (the layout of the benchmark data folder); a missing
file raises :class:`FileNotFoundError` naming it.

Some of these sets carry share-alike licences (MNIST: CC BY-SA 3.0; the FSDD MFCC frames:
CC BY-SA 4.0) or none stated (USPS), which is why they are not bundled with the package.
"""

from __future__ import annotations

import dataclasses
import os
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from .._suggest import did_you_mean
from ._csv import load_csv
from ._dataset import Dataset, check_subset, infer_task
from ._file_checks import DataFileError, _cause, _reading
from ._svmlight import load_svmlight

__all__ = [
    "DATA_HOME_SETS",
    "HomeInfo",
    "get_data_home",
    "home_files",
    "list_data_home",
    "load_from_home",
]

ENV_VAR = "KERNELMAPS_DATA"


def get_data_home(data_home: str | os.PathLike[str] | None = None) -> Path:
    """The data home: ``data_home`` if given, else ``$KERNELMAPS_DATA``.

    Raises
    ------
    ValueError
        When neither is set, saying how to set one.
    FileNotFoundError
        When the folder does not exist.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from kernelmaps.datasets import get_data_home
    >>> home = tempfile.mkdtemp()
    >>> get_data_home(home) == pathlib.Path(home)
    True
    """
    value = data_home if data_home is not None else os.environ.get(ENV_VAR)
    if not value:
        raise ValueError(
            f"No data home is set: pass data_home= (--data-home on the command line) or set "
            f"the {ENV_VAR} environment variable to the folder holding the larger data sets."
        )
    path = Path(value).expanduser()
    if not path.is_dir():
        source = "data_home" if data_home is not None else ENV_VAR
        raise FileNotFoundError(f"The data home {path} (from {source}) is not a folder.")
    return path


@dataclasses.dataclass(frozen=True)
class HomeInfo:
    """One data set of the data home: its files (relative paths) and loader."""

    name: str
    files: tuple[str, ...]
    task: str
    description: str
    licence: str
    #: ``reader(paths)``: ``(X, y)``; for a set with a ``split``, ``reader(paths, subset)``:
    #: the parts of ``subset``, ``[(X, y), ...]``, training part first.
    reader: Callable[..., Any]
    #: The rows of the standard training and test parts, for a set that has them.
    split: tuple[int, int] | None = None


def _headerless(path: Path, target_col: int | None) -> tuple[np.ndarray, np.ndarray | None]:
    with _reading(path):
        try:
            A = np.loadtxt(path, delimiter=",", dtype=np.float64, ndmin=2)
        except ValueError as exc:
            raise DataFileError(
                path, f"could not be read ({_cause(exc)}); copy the file again."
            ) from None
    if target_col is None:
        return A, None
    return np.delete(A, target_col, axis=1), A[:, target_col]


def _arrays(path: Path, *keys: str) -> list[np.ndarray]:
    """The arrays ``keys`` of the .npz archive ``path``; a damaged file is one clear line."""
    with _reading(path):
        try:
            with np.load(path, allow_pickle=False) as archive:
                missing = [k for k in keys if k not in archive.files]
                if missing:
                    raise DataFileError(
                        path,
                        f"no array named {missing[0]!r} in the archive (it holds "
                        f"{archive.files}); copy the original file again.",
                    )
                return [archive[k] for k in keys]
        except DataFileError:
            raise
        except (ValueError, zipfile.BadZipFile) as exc:
            raise DataFileError(
                path,
                f"is not a readable .npz archive ({_cause(exc)}); copy the original file again.",
            ) from None


def _read_usps(paths: list[Path], subset: str) -> list[tuple[np.ndarray, np.ndarray]]:
    parts = ("train", "test") if subset == "all" else (subset,)
    arrays = _arrays(paths[0], *[f"{a}_{part}" for part in parts for a in ("X", "y")])
    return [
        (X.astype(np.float64), y.astype(np.float64))
        for X, y in zip(arrays[::2], arrays[1::2], strict=True)
    ]


def _stacked(paths: list[Path], y_key: str) -> tuple[np.ndarray, np.ndarray]:
    """The arrays ``X`` and ``y_key`` of the .npz archives ``paths``, stacked as float64."""
    parts = [_arrays(p, "X", y_key) for p in paths]
    X = np.vstack([X for X, _ in parts]).astype(np.float64)
    return X, np.concatenate([y for _, y in parts]).astype(np.float64)


def _read_mnist(paths: list[Path]) -> tuple[np.ndarray, np.ndarray | None]:
    X, y = _stacked(paths, "y")
    return X / 255.0, y


def _read_fsdd(paths: list[Path]) -> tuple[np.ndarray, np.ndarray | None]:
    return _stacked(paths, "y_digit")


def _read_flow(paths: list[Path]) -> tuple[np.ndarray, np.ndarray | None]:
    (X,) = _arrays(paths[0], "X")
    return X[:, :6].astype(np.float64), None


def _read_patches(paths: list[Path]) -> tuple[np.ndarray, np.ndarray | None]:
    (X,) = _arrays(paths[0], "X")
    return X.astype(np.float64) / 255.0, None


def _read_svm(
    n_features: int, zero_based: bool | str = "auto"
) -> Callable[[list[Path]], tuple[np.ndarray, np.ndarray | None]]:
    def read(paths: list[Path]) -> tuple[np.ndarray, np.ndarray | None]:
        ds = load_svmlight(paths[0], n_features=n_features, zero_based=zero_based)
        return ds.X, ds.y

    return read


def _read_csv_target(target: str) -> Callable[[list[Path]], tuple[np.ndarray, np.ndarray | None]]:
    def read(paths: list[Path]) -> tuple[np.ndarray, np.ndarray | None]:
        ds = load_csv(paths[0], target)
        return ds.X, None if ds.y is None else np.asarray(ds.y, dtype=np.float64)

    return read


def _read_headerless(
    col: int | None,
) -> Callable[[list[Path]], tuple[np.ndarray, np.ndarray | None]]:
    def read(paths: list[Path]) -> tuple[np.ndarray, np.ndarray | None]:
        return _headerless(paths[0], col)

    return read


_FSDD = ("george", "jackson", "lucas", "nicolas", "theo", "yweweler")
_UCI = ("kin40k", "protein", "keggdirected", "elevators", "pol", "bike", "pumadyn32nm")

DATA_HOME_SETS: dict[str, HomeInfo] = {
    info.name: info
    for info in [
        HomeInfo("usps", ("usps/usps.npz",), "classification",
                 "USPS handwritten digits, 9298 x 256 in [0, 1]; standard split 7291 train, "
                 "2007 test", "none stated", _read_usps, split=(7291, 2007)),
        HomeInfo("mnist", tuple(f"mnist/mnist_train_part{k}.npz" for k in range(6)),
                 "classification", "MNIST training digits, 60000 x 784 scaled to [0, 1]",
                 "CC BY-SA 3.0", _read_mnist),
        HomeInfo("fsdd_mfcc39", tuple(f"fsdd_mfcc39/fsdd_mfcc39_{s}.npz" for s in _FSDD),
                 "classification",
                 "39-d MFCC frames of the Free Spoken Digit Dataset, 128200 x 39 (a TIMIT "
                 "stand-in); target the spoken digit", "CC BY-SA 4.0", _read_fsdd),
        HomeInfo("flow_cytometry", ("flow_cytometry/facscalibur_hts_A02.npz",), "unlabelled",
                 "FACSCalibur recording, 37395 events x 6 channels (FSC-H, SSC-H, FL1-H, "
                 "FL2-H, FL3-H, FL2-A)", "MIT (fcsparser test data)", _read_flow),
        HomeInfo("image_patches", ("image_patches/natural_patches_7x7x3.npz",), "unlabelled",
                 "32000 random 7x7x3 patches of natural photographs, 147-d in [0, 1]",
                 "CC BY 2.0 / public domain", _read_patches),
        HomeInfo("ijcnn1_full", ("ijcnn1/ijcnn1.trn.bz2",), "classification",
                 "ijcnn1 training rows, 49990 x 22, labels -1/+1", "BSD-3-Clause (copy)",
                 _read_svm(22)),
        HomeInfo("ijcnn1_test", ("ijcnn1/ijcnn1.tst.bz2",), "classification",
                 "ijcnn1 test rows, 91701 x 22, labels -1/+1", "BSD-3-Clause (copy)",
                 _read_svm(22)),
        HomeInfo("adult", ("adult/adult.trn.bz2",), "classification",
                 "UCI Adult in LIBSVM's a9a encoding, 32561 x 123", "BSD-3-Clause (copy)",
                 _read_svm(123, zero_based=True)),
        HomeInfo("covtype_20k", ("covtype/covtype.20k.data.gz",), "classification",
                 "the first 20000 rows of UCI Covertype, 20000 x 54 (classes 3-7 "
                 "over-represented)", "Apache-2.0 (copy)", _read_headerless(-1)),
        HomeInfo("house_16h", ("house_16h/house_16h.csv.gz",), "regression",
                 "Delve census-house house_16H, 22784 x 16", "none stated",
                 _read_csv_target("y")),
        HomeInfo("msd_subset", ("msd_subset/millionsong.txt.gz",), "regression",
                 "Million Song subset: year from 12 timbre averages, 6719 x 12", "none stated",
                 _read_headerless(0)),
        HomeInfo("german", ("german/german_fixed.csv",), "classification",
                 "Statlog German credit (numeric), 1000 x 24", "CC BY 4.0 (UCI)",
                 _read_csv_target("CLASSIFICACAO")),
    ]
    + [
        HomeInfo(name, (f"uci_regression/{name}/data.csv.gz",), "regression",
                 f"{name} (UCI regression suite, standardised); the last column is the target",
                 "MIT (copy)", _read_headerless(-1))
        for name in _UCI
    ]
}  # fmt: skip


def list_data_home(data_home: str | os.PathLike[str] | None = None) -> dict[str, bool]:
    """For each data-home set, whether all its files are present in the data home.

    Parameters
    ----------
    data_home : str or path-like, default=None
        The folder; default ``$KERNELMAPS_DATA``.

    Returns
    -------
    dict of str to bool
        One entry per name of :data:`DATA_HOME_SETS`.

    Examples
    --------
    >>> import tempfile
    >>> from kernelmaps.datasets import list_data_home
    >>> present = list_data_home(tempfile.mkdtemp())
    >>> present["usps"], present["mnist"]
    (False, False)
    """
    home = get_data_home(data_home)
    return {
        name: all((home / f).is_file() for f in info.files) for name, info in DATA_HOME_SETS.items()
    }


def home_files(name: str, data_home: str | os.PathLike[str] | None = None) -> list[Path]:
    """The files of the data-home set ``name``, each checked to be present.

    Raises
    ------
    ValueError
        For a name that is not one of :data:`DATA_HOME_SETS` (with the closest one), or
        when no data home is set.
    FileNotFoundError
        Naming the first missing file and the data home searched.
    """
    if name not in DATA_HOME_SETS:
        raise ValueError(
            f"unknown data-home set {name!r}.{did_you_mean(name, DATA_HOME_SETS)} "
            f"Known: {', '.join(DATA_HOME_SETS)}."
        )
    info = DATA_HOME_SETS[name]
    home = get_data_home(data_home)
    paths = [home / f for f in info.files]
    for p in paths:
        if not p.is_file():
            raise FileNotFoundError(
                f"{p}: missing. The data set {name!r} needs {', '.join(info.files)} inside "
                f"the data home {home}; copy the files there (nothing is downloaded)."
            )
    return paths


def _read(info: HomeInfo, paths: list[Path], subset: str) -> tuple[Any, Any, int | None]:
    """``X``, ``y`` and the training rows of ``subset="all"`` (``None`` without a split)."""
    try:
        if info.split is None:
            X, y = info.reader(paths)
            return X, y, None
        parts = info.reader(paths, subset)
    except ValueError as exc:
        if isinstance(exc, DataFileError):
            raise
        raise DataFileError(paths[0], f"could not be read ({_cause(exc)}).") from None
    X = np.vstack([X for X, _ in parts])
    y = np.concatenate([y for _, y in parts])
    return X, y, int(parts[0][0].shape[0]) if subset == "all" else None


def load_from_home(
    name: str,
    data_home: str | os.PathLike[str] | None = None,
    *,
    subset: str = "all",
    return_X_y: bool = False,
) -> Any:
    """Load the data-home set ``name`` (see :data:`DATA_HOME_SETS`).

    Parameters
    ----------
    name : str
        For example ``"usps"``, ``"mnist"``, ``"fsdd_mfcc39"``, ``"flow_cytometry"``.
    data_home : str or path-like, default=None
        The folder; default ``$KERNELMAPS_DATA``.
    subset : {"all", "train", "test"}, default="all"
        For a set with a standard train/test split (``DATA_HOME_SETS[name].split``:
        ``usps``), its training rows, its test rows, or both, the training rows first
        (``Dataset.n_train`` says where the test rows begin).  ``"all"`` is the default
        so that every set loads whole, as compare's studies (which draw their own fit and
        held-out rows) expect; a set without a split takes only ``"all"``.
    return_X_y : bool, default=False
        Return ``(X, y)`` instead of a :class:`Dataset`.

    Returns
    -------
    Dataset or tuple of ndarray

    Raises
    ------
    FileNotFoundError
        Naming the first missing file and the data home searched.
    ValueError
        For an unknown name or subset, with the closest one.

    Examples
    --------
    A data home holding a (tiny) USPS file, ``usps/usps.npz``:

    >>> import pathlib, tempfile
    >>> import numpy as np
    >>> from kernelmaps.datasets import load_from_home
    >>> home = pathlib.Path(tempfile.mkdtemp())
    >>> (home / "usps").mkdir()
    >>> rng = np.random.default_rng(0)
    >>> np.savez(home / "usps" / "usps.npz", X_train=rng.random((6, 256)),
    ...          y_train=np.arange(6) % 3, X_test=rng.random((4, 256)), y_test=np.arange(4) % 3)
    >>> data = load_from_home("usps", home)
    >>> data.shape, data.task, data.n_train
    ((10, 256), 'classification', 6)
    >>> load_from_home("usps", home, subset="test").shape
    (4, 256)
    """
    paths = home_files(name, data_home)
    info = DATA_HOME_SETS[name]
    check_subset(name, subset, has_split=info.split is not None)
    X, y, n_train = _read(info, paths, subset)
    ds = Dataset(
        name=name,
        X=X,
        y=y,
        task=info.task if y is not None else "unlabelled",
        description=info.description,
        feature_names=[f"x{j}" for j in range(X.shape[1])],
        target_name=None if y is None else "target",
        source=", ".join(info.files),
        licence=info.licence,
        subset=None if info.split is None else subset,
        n_train=n_train,
    )
    if y is not None and info.task == "classification" and infer_task(y) != "classification":
        ds.task = "regression"  # pragma: no cover - defensive
    return (ds.X, ds.y) if return_X_y else ds
