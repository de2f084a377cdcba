"""The rows of a data set as an experiment uses them: loaded, split and scaled.

The rows are a random choice (``data_seed``) of fit rows and disjoint held-out rows, the
same for every method and seed of an experiment, so that methods are compared on the
same rows; the scaling (``preprocess``) is learned on the fit rows.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ._config import DatasetConfig

__all__ = ["PreparedData", "prepare_data"]


@dataclasses.dataclass
class PreparedData:
    """The rows of one data set as an experiment uses them."""

    name: str
    X_fit: np.ndarray
    X_eval: np.ndarray
    y_fit: np.ndarray | None
    y_eval: np.ndarray | None
    task: str
    in_sample: bool
    n_rows: int
    n_features: int


def _scale(how: str, X_fit: np.ndarray, X_eval: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The fit and held-out rows scaled as ``how`` says, learned on the fit rows."""
    if how == "minmax":
        lo, hi = X_fit.min(axis=0), X_fit.max(axis=0)
        span = np.where(hi > lo, hi - lo, 1.0)
        return (X_fit - lo) / span, (X_eval - lo) / span
    if how == "standard":
        mu, sd = X_fit.mean(axis=0), X_fit.std(axis=0)
        sd = np.where(sd > 0, sd, 1.0)
        return (X_fit - mu) / sd, (X_eval - mu) / sd
    return X_fit, X_eval


def _scaled(
    config: DatasetConfig, X_fit: np.ndarray, X_eval: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The fit and held-out rows scaled by ``config.preprocess``, finite or a clear error.

    Both scalings are invariant under a common factor, so data whose differences or sums
    of squares overflow (values near the float64 limit) is divided first by a power of
    two (exactly) and scaled again; the ordinary case is computed as written.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        A, B = _scale(config.preprocess, X_fit, X_eval)
        if np.isfinite(A).all() and np.isfinite(B).all():
            return A, B
        if config.preprocess != "none":
            top = float(max(np.abs(X_fit).max(initial=0.0), np.abs(X_eval).max(initial=0.0)))
            unit = math.ldexp(1.0, math.frexp(top)[1] - 1) if top > 0 else 1.0
            A, B = _scale(config.preprocess, X_fit / unit, X_eval / unit)
            if np.isfinite(A).all() and np.isfinite(B).all():
                return A, B
    raise ValueError(
        f"{config.display}: the {config.preprocess} scaling of the rows overflows float64 "
        "(values near the float limit, or held-out rows far outside the fit rows); "
        "rescale the data."
    )


def prepare_data(config: DatasetConfig, data_home: str | None = None) -> PreparedData:
    """Load a data set, draw its fit and held-out rows and scale them.

    The rows are a random choice (``config.data_seed``) of ``n_fit`` fit rows and
    ``n_eval`` held-out rows, disjoint; when the data set is smaller, the held-out rows
    are a third of it.  The scaling (``config.preprocess``) is learned on the fit rows.

    Examples
    --------
    >>> from kernelmaps.experiments import DatasetConfig, prepare_data
    >>> data = prepare_data(DatasetConfig("cpu_act", n_fit=100, n_eval=40))
    >>> data.X_fit.shape, data.X_eval.shape, data.task
    ((100, 21), (40, 21), 'regression')
    """
    from ..datasets import load_dataset

    ds = load_dataset(config.name, target=config.target, data_home=data_home)
    X = ds.X.toarray() if hasattr(ds.X, "toarray") else np.asarray(ds.X, dtype=np.float64)
    n = X.shape[0]
    if n < 4:
        raise ValueError(f"{config.display}: {n} rows; at least 4 are needed.")
    n_eval = min(config.n_eval, n // 3) if config.n_fit + config.n_eval > n else config.n_eval
    n_fit = min(config.n_fit, n - n_eval)
    rng = np.random.default_rng(config.data_seed)
    order = rng.permutation(n)
    fit_rows, eval_rows = order[:n_fit], order[n_fit : n_fit + n_eval]
    X_fit, X_eval = _scaled(config, X[fit_rows], X[eval_rows])
    y = None if ds.y is None else np.asarray(ds.y)
    return PreparedData(
        name=config.display,
        X_fit=np.ascontiguousarray(X_fit),
        X_eval=np.ascontiguousarray(X_eval),
        y_fit=None if y is None else y[fit_rows],
        y_eval=None if y is None else y[eval_rows],
        task=ds.task,
        in_sample=config.in_sample,
        n_rows=n,
        n_features=X.shape[1],
    )
