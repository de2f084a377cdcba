"""Model files: a :class:`SavedModel` written to disk and read back, safely.

A model file (``kernelmaps fit -o model.skops``) is a zip archive in the format of
:mod:`skops.io`, which stores objects as JSON and ``.npy`` arrays and rebuilds them
without :mod:`pickle`, so loading a file cannot run code:

* ``schema.json`` and the arrays: the fitted scikit-learn pipeline, written by
  :func:`skops.io.dumps`;
* ``kernelmaps-model.json``: what ``kernelmaps predict`` needs to check new data (format
  and its version, feature names, target, task, training file format, and a description
  of the fit), as plain JSON.

Reading a file (:func:`load_model`) refuses, before anything is built:

* a pickle or joblib file, without unpickling it (a pickle can run any code);
* a file that is not such a zip archive, or lacks ``kernelmaps-model.json``;
* an archive that names any type outside :func:`trusted_model_types`: kernelmaps' own
  estimators and kernels, scikit-learn's ``Pipeline`` and ``StandardScaler``, and the
  numpy, scipy and Python types their fitted state holds.  The list is checked on the
  archive's whole schema, then :func:`skops.io.loads` is given the same list.

:func:`save_model` checks the same list before writing, so every file it writes can be
read back; it writes the file whole or not at all (``kernelmaps._atomic.atomic_write``).
See ``docs/MODEL_FILES.md``.
"""

from __future__ import annotations

import bz2
import functools
import gzip
import io
import json
import lzma
import os
import pickletools
import zipfile
import zlib
from pathlib import Path
from typing import Any

from .._atomic import atomic_write
from .._memory import check_memory
from ._saved_model import SavedModel

__all__ = [
    "MODEL_FORMAT_VERSION",
    "ModelFileError",
    "load_model",
    "save_model",
    "trusted_model_types",
]

#: Version of the layout of ``kernelmaps-model.json``; a newer file is refused by name.
MODEL_FORMAT_VERSION = 1
_FORMAT = "kernelmaps-model"
_METADATA = "kernelmaps-model.json"
_SCHEMA = "schema.json"
_REFIT = "refit with 'kernelmaps fit'"

#: The skops node kinds a kernelmaps model uses; a file with another kind is refused.
_LOADERS = frozenset(
    {
        "CachedNode",
        "DictNode",
        "DTypeNode",
        "JsonNode",
        "ListNode",
        "NdArrayNode",
        "ObjectNode",
        "SparseMatrixNode",
        "TupleNode",
        "TypeNode",
    }
)


class ModelFileError(ValueError):
    """A model file that cannot be written or read; the message names the file and the fix.

    Examples
    --------
    >>> from kernelmaps.experiments import ModelFileError
    >>> issubclass(ModelFileError, ValueError)
    True
    """


def _type_path(cls: type) -> str:
    return f"{cls.__module__}.{cls.__name__}"


@functools.cache
def trusted_model_types() -> tuple[str, ...]:
    """The types a model file may hold, by their full names (the allow-list).

    Computed from kernelmaps' public estimators (every feature map and model class) and
    registered kernels, with the internal state they keep when fitted
    (``RidgeStatistics``, and the types an estimator names in ``_state_types``),
    :class:`FiniteStandardScaler`, scikit-learn's ``Pipeline``,
    ``StandardScaler`` and ``LabelBinarizer``, scipy's CSR matrix, numpy arrays, dtypes
    and scalars, and Python's containers and scalars.  Nothing else is loaded.

    Returns
    -------
    tuple of str
        Sorted ``module.Class`` names, as ``skops.io.get_untrusted_types`` gives them.

    Examples
    --------
    >>> from kernelmaps.experiments import trusted_model_types
    >>> "kernelmaps.models._feature_ridge.FeatureRidge" in trusted_model_types()
    True
    >>> "builtins.eval" in trusted_model_types()
    False
    """
    import numpy as np
    from scipy.sparse import csr_matrix
    from sklearn.base import BaseEstimator
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import LabelBinarizer, StandardScaler

    from .. import feature_maps, models
    from ..kernels import get_kernel_class, kernel_names
    from ._pipeline import FiniteStandardScaler

    classes: set[type] = set()
    for module in (feature_maps, models):
        for name in module.__all__:
            obj = getattr(module, name)
            concrete = obj is not feature_maps.BaseFeatureMap
            if isinstance(obj, type) and issubclass(obj, BaseEstimator) and concrete:
                classes.add(obj)
    classes.add(models.RidgeStatistics)
    # the internal types an estimator's fitted state holds, as it declares them
    classes.update(t for cls in list(classes) for t in getattr(cls, "_state_types", ()))
    classes.update(get_kernel_class(name) for name in kernel_names())
    classes.update({FiniteStandardScaler, Pipeline, StandardScaler, LabelBinarizer})
    classes.update({csr_matrix, np.ndarray, np.dtype})
    classes.update({np.float64, np.float32, np.int64, np.int32, np.bool_})
    classes.update({dict, list, tuple, str, int, float, bool, type(None)})
    return tuple(sorted(_type_path(cls) for cls in classes))


def save_model(saved: SavedModel, path: str | os.PathLike[str]) -> None:
    """Write ``saved`` to ``path`` as a model file, whole or not at all.

    Parameters
    ----------
    saved : SavedModel
        The fitted pipeline and the description of its training data.
    path : str or path-like
        The file to write (suffix ``.skops`` by convention); its folder must exist.  An
        existing file is replaced only once the new one is completely written.

    Raises
    ------
    ModelFileError
        When the model holds an object a model file cannot hold (a type outside
        :func:`trusted_model_types`, e.g. a kernel given as a Python function); nothing
        is written.
    kernelmaps.exceptions.OutputWriteError
        When the file cannot be written (full disk, read-only folder); a previous file
        of that name is unchanged.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import numpy as np
    >>> from kernelmaps.experiments import SavedModel, load_model, make_model, save_model
    >>> X = np.random.default_rng(0).random((40, 2))
    >>> pipeline = make_model("rff", n_components=16, gamma=1.0).fit(X, X.sum(axis=1))
    >>> path = Path(tempfile.mkdtemp()) / "model.skops"
    >>> save_model(SavedModel(pipeline, ["a", "b"], "y", "regression", "csv"), path)
    >>> bool(np.array_equal(load_model(path).predict(X), pipeline.predict(X)))
    True
    """
    blob = _model_bytes(saved, Path(path))
    with atomic_write(path, "wb") as fh:
        fh.write(blob)


def _model_bytes(saved: SavedModel, path: Path) -> bytes:
    """The content of the model file of ``saved``: skops archive plus metadata member."""
    import skops.io

    pipeline = saved.pipeline
    try:
        blob = skops.io.dumps(pipeline)
    except Exception as exc:  # skops refuses objects it cannot store without pickle
        raise ModelFileError(
            f"{path}: the model cannot be saved: {_first_line(exc)}; fit it with the "
            "built-in kernels and methods."
        ) from None
    with zipfile.ZipFile(io.BytesIO(blob)) as archive:
        untrusted = _untrusted(json.loads(archive.read(_SCHEMA)))
    if untrusted:
        raise ModelFileError(
            f"{path}: the model holds {_names(untrusted)}, which a model file cannot hold "
            "(only kernelmaps' estimators and kernels, scikit-learn's Pipeline and "
            "StandardScaler, and arrays are read back); fit it with the built-in kernels "
            "and methods."
        )
    metadata = _metadata(saved)
    buffer = io.BytesIO(blob)
    with zipfile.ZipFile(buffer, "a") as archive:
        archive.writestr(_METADATA, metadata)
    return buffer.getvalue()


def _metadata(saved: SavedModel) -> str:
    """``kernelmaps-model.json``: the description of the data, as JSON."""
    from .. import __version__

    content = {
        "format": _FORMAT,
        "format_version": MODEL_FORMAT_VERSION,
        "written_by": f"kernelmaps {__version__}",
        "feature_names": [str(name) for name in saved.feature_names],
        "target": None if saved.target is None else str(saved.target),
        "task": saved.task,
        "data_format": saved.data_format,
        "info": saved.info,
    }
    return json.dumps(content, indent=2, default=_plain)


def _plain(value: Any) -> Any:
    """A numpy scalar or array as a Python value (``json.dumps``' fallback)."""
    if hasattr(value, "tolist"):
        return value.tolist()
    return str(value)


def load_model(path: str | os.PathLike[str]) -> SavedModel:
    """The model in the file ``path``, written by :func:`save_model` (``kernelmaps fit``).

    Nothing in the file is run: a pickle (joblib) file is refused without unpickling it,
    and an archive naming a type outside :func:`trusted_model_types` is refused before
    any object is built.

    Parameters
    ----------
    path : str or path-like
        The model file.

    Returns
    -------
    SavedModel

    Raises
    ------
    FileNotFoundError
        When there is no such file.
    ModelFileError
        For a folder, a pickle or joblib file, a file that is not a model file, a damaged
        one, one written by a newer kernelmaps, or one holding a type not allowed; the
        message names the file and the fix.
    kernelmaps.exceptions.InsufficientMemoryError
        When the file would not fit in the available memory.

    Examples
    --------
    >>> import pickle, tempfile
    >>> from pathlib import Path
    >>> from kernelmaps.experiments import load_model
    >>> path = Path(tempfile.mkdtemp()) / "model.joblib"
    >>> _ = path.write_bytes(pickle.dumps({"any": "object"}))
    >>> load_model(path)
    Traceback (most recent call last):
    ...
    kernelmaps.experiments._model_file.ModelFileError: ...model.joblib: a pickle (joblib) file; ...
    """
    path = Path(path)
    data = _read(path)
    is_zip = zipfile.is_zipfile(io.BytesIO(data))
    if not is_zip and _is_pickle(data):
        raise ModelFileError(
            f"{path}: a pickle (joblib) file; kernelmaps reads only model files written by "
            "'kernelmaps fit' (skops format), which cannot run code. Refit with kernelmaps "
            "fit."
        )
    if not is_zip:
        raise ModelFileError(
            f"{path}: not a model file written by 'kernelmaps fit' (not a skops zip "
            "archive); give the file written by 'kernelmaps fit -o FILE'."
        )
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = set(archive.namelist())
            check_memory(
                sum(info.file_size for info in archive.infolist()),
                f"{path}: unpacking the model file",
                "give a model file written by 'kernelmaps fit'",
            )
            if _METADATA not in names:
                raise ModelFileError(
                    f"{path}: a zip archive but not a model file written by 'kernelmaps fit' "
                    f"(it lacks {_METADATA}); {_REFIT}."
                )
            if _SCHEMA not in names:
                raise ModelFileError(f"{path}: a damaged model file (no {_SCHEMA}); {_REFIT}.")
            metadata = json.loads(archive.read(_METADATA))
            schema = json.loads(archive.read(_SCHEMA))
    except (ModelFileError, MemoryError):
        raise
    except Exception as exc:  # any failure to unpack: bad zip, compression, JSON, nesting
        raise ModelFileError(
            f"{path}: a damaged model file ({type(exc).__name__}: {_first_line(exc)}); {_REFIT}."
        ) from None
    fields = _check_metadata(path, metadata)
    untrusted = _untrusted(schema)
    if untrusted:
        raise ModelFileError(
            f"{path}: holds {_names(untrusted)}, which kernelmaps does not load (a model "
            "file written by 'kernelmaps fit' holds only kernelmaps' estimators and "
            f"kernels, scikit-learn's Pipeline and StandardScaler, and arrays); {_REFIT}."
        )
    pipeline = _load_pipeline(path, data)
    _check_pipeline(path, pipeline, fields)
    return SavedModel(pipeline=pipeline, **fields)


def _read(path: Path) -> bytes:
    """The bytes of the model file ``path``, with one-line errors."""
    if path.is_dir():
        raise ModelFileError(
            f"{path}: is a folder, not a model file; give the file written by "
            "'kernelmaps fit -o FILE'."
        )
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such model file. Check the path and its spelling.")
    try:
        size = path.stat().st_size
        check_memory(size, f"{path}: reading the model file", "give a smaller model file")
        return path.read_bytes()
    except OSError as exc:
        raise ModelFileError(
            f"{path}: cannot be read ({exc.strerror or exc}); check its permissions."
        ) from None


def _is_pickle(data: bytes) -> bool:
    """Whether ``data`` is a pickle, plain or compressed as joblib does; never unpickles."""
    head = _decompressed_head(data)
    if len(head) >= 2 and head[0] == 0x80 and 2 <= head[1] <= 5:
        return True  # PROTO opcode: protocol 2 to 5 (pickle's and joblib's default)
    # Protocols 0 and 1 have no header: parse the opcodes (pickletools does not run them).
    count = 0
    try:
        for opcode, _, _ in pickletools.genops(io.BytesIO(head)):
            count += 1
            if opcode.name == "STOP":
                return count > 1
    except Exception:  # not a valid opcode sequence
        return False
    return False


def _decompressed_head(data: bytes, size: int = 1 << 16) -> bytes:
    """The first ``size`` bytes of ``data``, decompressed when joblib could have compressed it.

    joblib compresses with zlib, gzip, bz2, lzma or xz; only a bounded prefix is
    decompressed.
    """
    try:
        if data[:2] == b"\x1f\x8b":
            with gzip.GzipFile(fileobj=io.BytesIO(data)) as fh:
                return fh.read(size)
        if data[:3] == b"BZh":
            return bz2.BZ2Decompressor().decompress(data[: 1 << 20], max_length=size)
        if data[:6] == b"\xfd7zXZ\x00" or data[:3] == b"\x5d\x00\x00":
            return lzma.LZMADecompressor().decompress(data[: 1 << 20], max_length=size)
        if len(data) >= 2 and data[0] == 0x78 and (data[0] * 256 + data[1]) % 31 == 0:
            return zlib.decompressobj().decompress(data[: 1 << 20], size)
    except (OSError, EOFError, ValueError, lzma.LZMAError, zlib.error):
        return data[:size]
    return data[:size]


def _untrusted(schema: Any) -> set[str]:
    """The types (and node kinds) named anywhere in a skops schema but not allowed."""
    allowed = set(trusted_model_types())
    found: set[str] = set()
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if "__loader__" in node:
                loader = node.get("__loader__")
                module, name = node.get("__module__"), node.get("__class__")
                if not (isinstance(module, str) and isinstance(name, str)):
                    found.add(f"an unnamed type ({loader})")
                elif f"{module}.{name}" not in allowed:
                    found.add(f"{module}.{name}")
                if loader not in _LOADERS:
                    found.add(f"skops node {loader}")
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return found


def _names(types: set[str]) -> str:
    shown = sorted(types)
    return ", ".join(shown[:5]) + (f" and {len(shown) - 5} more" if len(shown) > 5 else "")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0].strip() if text else type(exc).__name__


def _check_metadata(path: Path, metadata: Any) -> dict[str, Any]:
    """The fields of :class:`SavedModel` from ``kernelmaps-model.json``, checked."""

    def damaged(what: str) -> ModelFileError:
        return ModelFileError(f"{path}: a damaged model file ({_METADATA}: {what}); {_REFIT}.")

    if not isinstance(metadata, dict) or metadata.get("format") != _FORMAT:
        raise damaged(f"not a {_FORMAT} description")
    version = metadata.get("format_version")
    if not isinstance(version, int) or version < 1:
        raise damaged(f"format_version {version!r}")
    if version > MODEL_FORMAT_VERSION:
        raise ModelFileError(
            f"{path}: model format {version}, written by a newer kernelmaps "
            f"({metadata.get('written_by', 'unknown')}); this version reads format "
            f"{MODEL_FORMAT_VERSION}. Upgrade kernelmaps or refit with this version."
        )
    names = metadata.get("feature_names")
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise damaged("feature_names is not a list of names")
    target = metadata.get("target")
    if target is not None and not isinstance(target, str):
        raise damaged("target is not a name")
    task = metadata.get("task")
    if task not in ("regression", "classification"):
        raise damaged(f"task {task!r}")
    data_format = metadata.get("data_format")
    if not isinstance(data_format, str):
        raise damaged("data_format is not a name")
    info = metadata.get("info", {})
    if not isinstance(info, dict):
        raise damaged("info is not a table")
    return {
        "feature_names": names,
        "target": target,
        "task": task,
        "data_format": data_format,
        "info": info,
    }


def _load_pipeline(path: Path, data: bytes) -> Any:
    """The pipeline of an archive whose types were checked: :func:`skops.io.loads`."""
    import skops.io
    from sklearn.pipeline import Pipeline

    try:
        pipeline = skops.io.loads(data, trusted=list(trusted_model_types()))
    except MemoryError:
        raise
    except Exception as exc:  # a damaged archive: any error of the rebuild
        raise ModelFileError(
            f"{path}: a damaged model file ({type(exc).__name__}: {_first_line(exc)}); {_REFIT}."
        ) from None
    if not isinstance(pipeline, Pipeline):
        raise ModelFileError(
            f"{path}: holds a {type(pipeline).__name__}, not the pipeline 'kernelmaps fit' "
            f"writes; {_REFIT}."
        )
    return pipeline


def _check_pipeline(path: Path, pipeline: Any, fields: dict[str, Any]) -> None:
    """Refuse a pipeline that cannot serve the description (a hand-made archive)."""
    needed = ["predict"] + (["decision_function"] if fields["task"] == "classification" else [])
    missing = [name for name in needed if not hasattr(pipeline, name)]
    if missing:
        raise ModelFileError(
            f"{path}: its pipeline has no {' or '.join(missing)}, unlike the pipelines "
            f"'kernelmaps fit' writes; {_REFIT}."
        )
    n_features = getattr(pipeline, "n_features_in_", None)
    if n_features is not None and n_features != len(fields["feature_names"]):
        raise ModelFileError(
            f"{path}: a damaged model file (its pipeline takes {n_features} features but "
            f"{_METADATA} names {len(fields['feature_names'])}); {_REFIT}."
        )
