"""One way to name data: a file path, a bundled name or a data-home name.

:func:`resolve_dataset` is the resolution every command of the command line and
:func:`load_dataset` go through.  In order:

1. a name written as a path (holding a folder separator, or a file suffix such as
   ``.csv``) is a file, which must exist;
2. a bundled name (:data:`BUNDLED`), then a data-home name (:data:`DATA_HOME_SETS`);
   the two lists share no name;
3. any other existing file;
4. else an error naming the closest known name.

A bare name that is both a data-set name and a file in the current folder is ambiguous,
and refused (``./letter`` names the file).  The data is read only when
:attr:`ResolvedDataset.dataset` is first asked for, so that resolving checks a name (and
that the files of a data-home set are present) before any work.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

from .._suggest import did_you_mean
from ._bundled import BUNDLED
from ._dataset import Dataset, check_subset
from ._files import file_format, load_file
from ._home import DATA_HOME_SETS, get_data_home, home_files, load_from_home

__all__ = ["ResolvedDataset", "load_dataset", "resolve_dataset"]

#: What :attr:`ResolvedDataset.kind` names.
KINDS = ("file", "bundled", "data home")

_PARTS = {"train": "training part", "test": "test part", "all": "training and test parts"}


class ResolvedDataset:
    """A data set found by :func:`resolve_dataset`: where it comes from, and its rows.

    Attributes
    ----------
    name : str
        The name or path as given.
    kind : {"file", "bundled", "data home"}
        Where the data comes from.
    format : str
        ``"csv"``, ``"svmlight"``, ``"npy"`` or ``"npz"`` for a file; ``"bundled"`` or
        ``"data home"`` for a named set.
    path : pathlib.Path or None
        The file, or the data home of a data-home set; ``None`` for a bundled set.
    subset : {"train", "test", "all"} or None
        The part of a set with a standard train/test split; ``None`` for one without.
    target : str or int or None
        The target column of a file.

    Examples
    --------
    >>> from kernelmaps.datasets import resolve_dataset
    >>> found = resolve_dataset("letter", subset="test")
    >>> found.kind, found.has_split, found.dataset.X.shape
    ('bundled', True, (5000, 16))
    """

    def __init__(
        self,
        name: str,
        kind: str,
        fmt: str,
        path: Path | None,
        subset: str | None,
        target: str | int | None,
    ) -> None:
        self.name, self.kind, self.format, self.path = name, kind, fmt, path
        self.subset, self.target = subset, target

    def __repr__(self) -> str:
        """The provenance, e.g. ``ResolvedDataset('usps', kind='data home', subset='train')``."""
        return f"ResolvedDataset({self.name!r}, kind={self.kind!r}, subset={self.subset!r})"

    @property
    def has_split(self) -> bool:
        """Whether the set has a standard train/test split (``subset`` is then not None)."""
        return self.subset is not None

    @property
    def label(self) -> str:
        """The name for a message, with the part and the data home where they apply.

        ``"usps (training part; data home /data)"``, ``"letter (test part)"``, or the name
        as given.
        """
        notes = [] if self.subset is None else [_PARTS[self.subset]]
        if self.kind == "data home":
            notes.append(f"data home {self.path}")
        return f"{self.name} ({'; '.join(notes)})" if notes else self.name

    @functools.cached_property
    def dataset(self) -> Dataset:
        """The rows, read on first use."""
        if self.kind == "bundled":
            info = BUNDLED[self.name]
            ds: Dataset = info.loader() if self.subset is None else info.loader(subset=self.subset)
            return ds
        if self.kind == "data home":
            home_ds: Dataset = load_from_home(self.name, self.path, subset=self.subset or "all")
            return home_ds
        return load_file(self.name, self.target)


def _named(name: str, target: str | int | None, subset: str) -> str | None:
    """The part ``subset`` of the named set (``None`` without a split), or an error for a
    target or a subset it cannot take."""
    has_split = (BUNDLED[name] if name in BUNDLED else DATA_HOME_SETS[name]).split is not None
    if target is not None:
        where = "bundled data set" if name in BUNDLED else "data-home set"
        raise ValueError(
            f"the {where} {name!r} has its own target; drop --target (target= in Python)."
        )
    check_subset(name, subset, has_split=has_split)
    return subset if has_split else None


def _written_as_path(name: str) -> bool:
    """Whether ``name`` can only be a file: a folder separator, or a suffix."""
    seps = {os.sep, "/"} | ({os.altsep} if os.altsep else set())
    return any(sep in name for sep in seps) or "." in Path(name).name


def _no_such_file(name: str) -> FileNotFoundError | ValueError:
    """The error for a path that is not a file, with the closest file of its folder."""
    path = Path(name)
    if path.is_dir():
        return ValueError(f"{name}: is a folder; give a data file (or a data-set name).")
    folder = path.parent
    siblings = [p.name for p in folder.iterdir() if p.is_file()] if folder.is_dir() else []
    return FileNotFoundError(
        f"{name}: no such file.{did_you_mean(path.name, siblings)} Check the path and its spelling."
    )


def _unknown(name: str) -> ValueError:
    names = [*BUNDLED, *DATA_HOME_SETS]
    hint = did_you_mean(name, names)
    known = "" if hint else f" The names: {', '.join(names)}."
    return ValueError(
        f"unknown data set {name!r}: not a file, a bundled set or a data-home set.{hint}"
        f"{known} See 'kernelmaps datasets' (list_datasets and list_data_home in Python)."
    )


def resolve_dataset(
    name_or_path: str | os.PathLike[str],
    *,
    target: str | int | None = None,
    data_home: str | os.PathLike[str] | None = None,
    subset: str = "all",
) -> ResolvedDataset:
    """Find the data a name stands for: a file, a bundled set or a data-home set.

    The order (see the module's text): a name written as a path (a folder separator or a
    suffix) is a file; else a bundled name, then a data-home name, then any other
    existing file.  A bare set name that is also a file in the current folder is refused
    as ambiguous (``./NAME`` reads the file).  Resolving checks the name, the target,
    the subset and that the files of a data-home set are present; the rows are read on
    first use of :attr:`ResolvedDataset.dataset`.

    Parameters
    ----------
    name_or_path : str or path-like
        A file (CSV with a header, svmlight/libsvm, ``.npy``, ``.npz``, optionally
        compressed), a bundled name (``"letter"``) or a data-home name (``"usps"``).
    target : str or int, default=None
        The target column of a file (see :func:`load_file`); a named set carries its own,
        so a target is refused there.
    data_home : str or path-like, default=None
        The data home of the data-home sets (default ``$KERNELMAPS_DATA``).
    subset : {"all", "train", "test"}, default="all"
        The part of a set with a standard train/test split (``letter``, ``usps``): its
        training rows, its test rows, or both (training rows first).  A file or a set
        without a split takes only ``"all"``.

    Returns
    -------
    ResolvedDataset
        Its ``kind``, ``format``, ``path`` and ``subset``, and the rows as ``dataset``.

    Raises
    ------
    FileNotFoundError
        For a missing file (with the closest file of its folder) or a data-home file.
    ValueError
        For an unknown or ambiguous name (with the closest known one), a target given to
        a named set, a subset the set does not have, or an unset data home.

    Examples
    --------
    >>> from kernelmaps.datasets import resolve_dataset
    >>> found = resolve_dataset("letter", subset="train")
    >>> found.kind, found.label, found.dataset.shape
    ('bundled', 'letter (training part)', (15000, 16))
    >>> resolve_dataset("leter")
    Traceback (most recent call last):
    ...
    ValueError: unknown data set 'leter': not a file, a bundled set or a data-home set. Did you mean 'letter'? See 'kernelmaps datasets' (list_datasets and list_data_home in Python).
    """  # noqa: E501
    name = os.fspath(name_or_path)
    if _written_as_path(name) or name not in {*BUNDLED, *DATA_HOME_SETS}:
        if not Path(name).is_file():
            raise _no_such_file(name) if _written_as_path(name) else _unknown(name)
        check_subset(name, subset, has_split=False)
        return ResolvedDataset(name, "file", file_format(name) or "", Path(name), None, target)
    if Path(name).is_file():
        raise ValueError(
            f"{name!r} names both a data set and the file {name} in the current folder; "
            f"write ./{name} to read the file, or rename the file to use the data set."
        )
    part = _named(name, target, subset)
    if name in BUNDLED:
        return ResolvedDataset(name, "bundled", "bundled", None, part, None)
    home_files(name, data_home)  # the files are present
    return ResolvedDataset(name, "data home", "data home", get_data_home(data_home), part, None)


def load_dataset(
    name: str,
    *,
    target: str | int | None = None,
    data_home: str | os.PathLike[str] | None = None,
    subset: str = "all",
) -> Dataset:
    """Load a data set by bundled name, data-home name or file path.

    The name is resolved by :func:`resolve_dataset`; unlike there, a ``target`` given
    with a named set is ignored (a study may give one target for all its data sets).

    Parameters
    ----------
    name : str
        A bundled name (``"letter"``), a data-home name (``"usps"``), or the path of a
        CSV / svmlight / ``.npy`` / ``.npz`` file.
    target : str or int, default=None
        Target column of a user file (see :func:`load_file`).
    data_home : str or path-like, default=None
        Data home for the data-home sets (default ``$KERNELMAPS_DATA``).
    subset : {"all", "train", "test"}, default="all"
        The part of a set with a standard train/test split (see :func:`resolve_dataset`).

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
    named = not _written_as_path(name) and name in {*BUNDLED, *DATA_HOME_SETS}
    found = resolve_dataset(
        name, target=None if named else target, data_home=data_home, subset=subset
    )
    return found.dataset
