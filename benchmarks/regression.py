"""Kernel ridge regression at scale: exact, random features, Nyström/FALKON, scikit-learn.

Part 1 (real data, side by side in one run): California housing (20,640 x 8, target in
units of $100,000, a random 80/20 split) and kin40k (40,000 x 8, the first of the ten
fixed test masks of the benchmark suite), features standardized on the training rows,
targets centred by the training mean.  Gaussian kernel with ``gamma`` from the
median-distance rule (:func:`kernelmaps.bandwidth.gamma_from_data`); every method gets the
same regularization ``lambda`` on the scale of the mean squared error, i.e. ``alpha =
lambda * n_fit`` in the ``(K + alpha I)`` / ``(Z^T Z + alpha I)`` convention.  Methods:

* ``KernelRidge`` (exact) on a random subsample of ``--n-exact`` training rows;
* ``FeatureRidge(RandomFourierFeatures(D))``;
* ``NystroemKernelRidge(m)`` (FALKON, uniform landmarks);
* ``make_pipeline(Nystroem(m), Ridge)`` and ``make_pipeline(RBFSampler(D), Ridge)`` from
  scikit-learn, with ``m = D = --m``.

Reported: test RMSE and fit time (``time.perf_counter``, one run each, alternating methods
within one process).

Part 2 (``--synthetic``): ``n = 1,000,000`` rows, ``d = 10``, ``y = sum_j sin(x_j) + noise``,
``m = 4096``: NystroemKernelRidge against ``make_pipeline(Nystroem(m), Ridge)``, each in its
own subprocess, reporting fit time and the peak resident set size
(``VmHWM``, ``benchmarks/_harness.py``) minus the one after generating the data.
scikit-learn's pipeline materializes the ``n x m`` float64 features (``8 n m`` bytes, 33 GB
for the defaults), so its subprocess runs under an address-space limit of
``--memory-limit-gb`` and fails cleanly with ``MemoryError`` when that is not enough; it is
also run at ``--n-small`` rows where it fits, next to ours.

The machine and its BLAS configuration (threadpoolctl) are printed first: note that
``OPENBLAS_CORETYPE`` may be pinned, and that other processes on the machine slow every
method alike.

Usage: python benchmarks/regression.py [--data-home ../shared/data] [--m 1024]
    [--n-exact 5000] [--synthetic] [--n-synthetic 1000000] [--m-synthetic 4096]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
from _harness import limit_address_space, machine_line, peak_rss, timed
from sklearn.kernel_approximation import Nystroem, RBFSampler
from sklearn.linear_model import Ridge
from sklearn.pipeline import make_pipeline

from kernelmaps import FeatureRidge, KernelRidge, NystroemKernelRidge, RandomFourierFeatures
from kernelmaps.bandwidth import gamma_from_data

SYNTHETIC_LAMBDA = 1e-5

DEFAULT_DATA_HOME = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"


# -- data ------------------------------------------------------------------------------


def load_cal_housing(home: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    raw = np.loadtxt(home / "cal_housing" / "cal_housing.data.gz", delimiter=",", skiprows=1)
    X, y = raw[:, :-1], raw[:, -1] / 1e5
    rng = np.random.default_rng(0)
    test = np.zeros(X.shape[0], dtype=bool)
    test[rng.choice(X.shape[0], size=X.shape[0] // 5, replace=False)] = True
    return X[~test], y[~test], X[test], y[test]


def load_kin40k(home: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    base = home / "uci_regression" / "kin40k"
    raw = np.loadtxt(base / "data.csv.gz", delimiter=",")
    mask = np.loadtxt(base / "test_mask.csv.gz", delimiter=",")[:, 0].astype(bool)
    X, y = raw[:, :-1], raw[:, -1]
    return X[~mask], y[~mask], X[mask], y[mask]


def prepare(
    X: np.ndarray, y: np.ndarray, Xt: np.ndarray, yt: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    mu, sd = X.mean(axis=0), X.std(axis=0)
    sd[sd == 0] = 1.0
    y_mean = y.mean()
    return (X - mu) / sd, y - y_mean, (Xt - mu) / sd, yt - y_mean


# -- part 1 ----------------------------------------------------------------------------


def methods(gamma: float, lam: float, m: int, n: int, n_exact: int) -> dict[str, Any]:
    return {
        f"KernelRidge exact (n={n_exact})": KernelRidge(gamma=gamma, alpha=lam * n_exact),
        f"FeatureRidge+RFF (D={m})": FeatureRidge(
            RandomFourierFeatures(gamma=gamma, n_components=m, random_state=0), alpha=lam * n
        ),
        f"NystroemKernelRidge (m={m})": NystroemKernelRidge(
            gamma=gamma, n_components=m, alpha=lam * n, random_state=0, max_iter=200
        ),
        f"sklearn Nystroem+Ridge (m={m})": make_pipeline(
            Nystroem(gamma=gamma, n_components=m, random_state=0), Ridge(alpha=lam * n)
        ),
        f"sklearn RBFSampler+Ridge (D={m})": make_pipeline(
            RBFSampler(gamma=gamma, n_components=m, random_state=0), Ridge(alpha=lam * n)
        ),
    }


def run_real(name: str, data: tuple[np.ndarray, ...], args: argparse.Namespace) -> list[dict]:
    X, y, Xt, yt = prepare(*data)
    gamma = gamma_from_data(X, "median")
    n = X.shape[0]
    n_exact = min(args.n_exact, n)
    sub = np.random.default_rng(1).choice(n, size=n_exact, replace=False)
    rows = []
    print(
        f"\n{name}: n_train={n}, n_test={Xt.shape[0]}, d={X.shape[1]}, gamma={gamma:.4g}, "
        f"lambda={args.lam:g}",
        flush=True,
    )
    for label, model in methods(gamma, args.lam, args.m, n, n_exact).items():
        Xf, yf = (X[sub], y[sub]) if label.startswith("KernelRidge") else (X, y)
        fit_time, _ = timed(lambda model=model, Xf=Xf, yf=yf: model.fit(Xf, yf))
        rmse = float(np.sqrt(np.mean((model.predict(Xt) - yt) ** 2)))
        extra = ""
        if isinstance(model, NystroemKernelRidge):
            extra = f"  (CG iterations {model.n_iter_}, residual {model.residual_:.1e})"
        print(f"  {label:36s} RMSE {rmse:8.4f}   fit {fit_time:8.2f} s{extra}", flush=True)
        rows.append({"data": name, "method": label, "rmse": rmse, "fit_seconds": fit_time})
    return rows


# -- part 2 ----------------------------------------------------------------------------


def synthetic(n: int, d: int = 10) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.uniform(-2.0, 2.0, size=(n, d))
    y = np.sin(X).sum(axis=1) + 0.1 * rng.standard_normal(n)
    return X, y - y.mean()


def child(method: str, n: int, m: int, limit_gb: float, tol: float, max_iter: int) -> None:
    """Run one fit in this (sub)process and print a JSON line with time and memory."""
    X, y = synthetic(n)
    Xt, yt = synthetic(10_000)
    X, Xt = X.astype(np.float32), Xt.astype(np.float32)
    gamma = 1.0 / X.shape[1]
    lam = SYNTHETIC_LAMBDA
    base = peak_rss()
    if method == "nystroem_kernel_ridge":
        model: Any = NystroemKernelRidge(
            gamma=gamma, n_components=m, alpha=lam * n, random_state=0, max_iter=max_iter, tol=tol
        )
    else:
        limit_address_space(limit_gb)
        model = make_pipeline(
            Nystroem(gamma=gamma, n_components=m, random_state=0), Ridge(alpha=lam * n)
        )
    out: dict[str, Any] = {"method": method, "n": n, "m": m, "dtype": "float32"}
    try:
        out["fit_seconds"], _ = timed(lambda: model.fit(X, y))
    except MemoryError:
        out.update(error=f"MemoryError under a {limit_gb:g} GB address-space limit")
    else:
        out["rmse"] = float(np.sqrt(np.mean((model.predict(Xt) - yt) ** 2)))
        if isinstance(model, NystroemKernelRidge):
            out.update(n_iter=model.n_iter_, residual=model.residual_)
    peak = peak_rss()
    out["peak_rss_gb"] = peak / 2**30
    out["peak_rss_above_data_gb"] = (peak - base) / 2**30
    print(json.dumps(out), flush=True)


def run_synthetic(args: argparse.Namespace) -> list[dict]:
    rows = []
    configs = [(args.n_synthetic, args.m_synthetic, args.max_iter_synthetic)]
    if args.n_small:
        configs.insert(0, (args.n_small, args.m_small, args.max_iter_small))
    for n, m, max_iter in configs:
        for method in ("nystroem_kernel_ridge", "sklearn_nystroem_ridge"):
            cmd = [
                sys.executable,
                __file__,
                "--child",
                method,
                "--n-synthetic",
                str(n),
                "--m-synthetic",
                str(m),
                "--memory-limit-gb",
                str(args.memory_limit_gb),
                "--tol-synthetic",
                str(args.tol_synthetic),
                "--max-iter-synthetic",
                str(max_iter),
            ]
            proc = subprocess.run(cmd, capture_output=True, text=True, env=os.environ.copy())
            lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
            if lines:
                row = json.loads(lines[-1])
            else:
                tail = proc.stderr.strip().splitlines()[-1:] or ["no output"]
                row = {
                    "method": method,
                    "n": n,
                    "m": m,
                    "error": f"exit {proc.returncode}: {tail[0]}",
                }
            print("  " + json.dumps(row), flush=True)
            rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-home", type=Path, default=DEFAULT_DATA_HOME)
    parser.add_argument("--m", type=int, default=1024, help="landmarks m = features D")
    parser.add_argument("--n-exact", type=int, default=5000)
    parser.add_argument("--lam", type=float, default=1e-4)
    parser.add_argument("--skip-real", action="store_true")
    parser.add_argument("--synthetic", action="store_true")
    parser.add_argument("--n-synthetic", type=int, default=1_000_000)
    parser.add_argument("--n-small", type=int, default=100_000)
    parser.add_argument("--m-synthetic", type=int, default=4096)
    parser.add_argument("--memory-limit-gb", type=float, default=16.0)
    parser.add_argument("--tol-synthetic", type=float, default=1e-4)
    parser.add_argument("--max-iter-synthetic", type=int, default=25)
    parser.add_argument("--m-small", type=int, default=1024)
    parser.add_argument("--max-iter-small", type=int, default=50)
    parser.add_argument("--child", choices=["nystroem_kernel_ridge", "sklearn_nystroem_ridge"])
    parser.add_argument("--out", type=Path, default=None, help="write the rows as JSON")
    args = parser.parse_args(argv)

    if args.child:
        child(
            args.child,
            args.n_synthetic,
            args.m_synthetic,
            args.memory_limit_gb,
            args.tol_synthetic,
            args.max_iter_synthetic,
        )
        return

    print(f"machine: {machine_line()}")
    print("load average", os.getloadavg())

    rows: list[dict] = []
    if not args.skip_real:
        home = args.data_home.resolve()
        rows += run_real("California housing", load_cal_housing(home), args)
        rows += run_real("kin40k", load_kin40k(home), args)
    if args.synthetic:
        print(
            f"\nSynthetic: d=10, m={args.m_synthetic}, lambda={SYNTHETIC_LAMBDA:g}, gamma=1/d, "
            f"tol={args.tol_synthetic:g}, max_iter={args.max_iter_synthetic}",
            flush=True,
        )
        rows += run_synthetic(args)
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
