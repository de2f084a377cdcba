"""The :class:`Dataset` every loader returns, and what kind of target it holds."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from .._suggest import did_you_mean

__all__ = ["SUBSETS", "Dataset", "infer_task"]

#: The parts of a data set with a standard train/test split: its training rows, its test
#: rows, or both (training rows first).
SUBSETS = ("train", "test", "all")


@dataclasses.dataclass
class Dataset:
    """A data set: features, target and what they are.

    Attributes
    ----------
    name : str
        Short name (``"letter"``, or the file name for user data).
    X : ndarray or sparse matrix of shape (n_samples, n_features)
        Features, float64.
    y : ndarray of shape (n_samples,) or None
        Target; ``None`` for unlabelled data.
    task : {"classification", "regression", "unlabelled"}
        What ``y`` is.
    description : str
        Where the data comes from and what it holds.
    feature_names : list of str
        One name per column of ``X``.
    target_name : str or None
        Name of the target column.
    source : str
        The origin of the data (paper, archive, repository).
    licence : str
        The licence under which it is distributed.
    subset : {"train", "test", "all"} or None
        For a set with a standard train/test split, the part these rows are; ``None`` for
        a set without one (a user file, most bundled sets).
    n_train : int or None
        With ``subset="all"``, the number of training rows: rows ``[0, n_train)`` are the
        standard training part, the others the test part; ``None`` otherwise.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelmaps.datasets import Dataset
    >>> data = Dataset("toy", X=np.zeros((5, 3)), y=np.arange(5.0), task="regression")
    >>> X, y = data
    >>> data.shape, y.shape
    ((5, 3), (5,))
    """

    name: str
    X: Any
    y: np.ndarray | None
    task: str
    description: str = ""
    feature_names: list[str] = dataclasses.field(default_factory=list)
    target_name: str | None = None
    source: str = ""
    licence: str = ""
    subset: str | None = None
    n_train: int | None = None

    def __iter__(self) -> Iterator[Any]:
        """Unpack as ``X, y = dataset``."""
        yield self.X
        yield self.y

    @property
    def shape(self) -> tuple[int, int]:
        """``X.shape``."""
        return (int(self.X.shape[0]), int(self.X.shape[1]))


def check_subset(name: str, subset: str, has_split: bool) -> None:
    """Refuse a ``subset`` that is not one of :data:`SUBSETS`, or a part of a set without
    a standard split, in one line naming the fix."""
    if subset not in SUBSETS:
        raise ValueError(
            f"subset must be 'train', 'test' or 'all'; got {subset!r}."
            f"{did_you_mean(str(subset), SUBSETS)}"
        )
    if subset != "all" and not has_split:
        raise ValueError(
            f"{name!r} has no standard train/test split, so subset={subset!r} does not "
            "apply; use subset='all' (drop --subset on the command line)."
        )


def infer_task(y: np.ndarray, max_classes: int = 50) -> str:
    """``"classification"`` or ``"regression"`` for a target column.

    Text labels, booleans and integer-valued targets with at most ``max_classes`` distinct
    values (and fewer distinct values than half the rows) are classes; any other numeric
    target is a regression target.

    Examples
    --------
    >>> from kernelmaps.datasets import infer_task
    >>> infer_task([0, 1, 1, 0, 2, 2]), infer_task([0.5, 1.25, 3.0]), infer_task(["a", "b"])
    ('classification', 'regression', 'classification')
    """
    y = np.asarray(y)
    if y.dtype.kind in "OUSb":
        return "classification"
    finite = y[np.isfinite(y)]
    if finite.size == 0:
        return "regression"
    n_unique = np.unique(finite).size
    integral = bool(np.all(finite == np.round(finite)))
    if integral and n_unique <= max_classes and n_unique <= max(2, finite.size // 2):
        return "classification"
    return "regression"


def _file_dataset(
    path: Path,
    X: Any,
    y: np.ndarray | None,
    name: str | None,
    feature_names: list[str],
    target_name: str | None,
    kind: str = "",
) -> Dataset:
    """The :class:`Dataset` of a user file, its task inferred from ``y``.

    It is named after the file unless ``name`` is given, and described by its path and
    shape (and ``kind``, such as ``", svmlight"``); without ``y`` it is unlabelled.
    """
    return Dataset(
        name=name or path.name,
        X=X,
        y=y,
        task="unlabelled" if y is None else infer_task(y),
        description=f"{path} ({X.shape[0]} rows, {X.shape[1]} features{kind})",
        feature_names=feature_names,
        target_name=target_name,
    )
