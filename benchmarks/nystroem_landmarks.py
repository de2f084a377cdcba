"""Nyström landmarks: uniform vs k-means vs ridge leverage scores on real data.

For each data set (a random subset of ``n`` rows, standardized features), a Gaussian
kernel with ``sigma^2`` the median squared distance, and ``m`` from 2 % to 10 % of ``n``:
the relative Frobenius error ``|K - Z Z^T|_F / |K|_F`` and the relative spectral error
``|K - Z Z^T|_2 / |K|_2`` of Nyström features with uniform, k-means and leverage-score
landmarks, averaged over seeds (mean and standard deviation), next to the best rank-m
errors from the eigendecomposition of ``K``, and the fit time.

Data sets: USPS digits (256-d, pixels in [0, 1]) and the California housing data
(8-d), from ``--data-home`` (default: ``../shared/data`` next to the repository).

Usage: ``python benchmarks/nystroem_landmarks.py [--data-home DIR] [--n 4000]
[--seeds 5]``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.sparse.linalg import eigsh
from sklearn.metrics.pairwise import euclidean_distances

from kernelmaps import Nystroem
from kernelmaps.kernels import Gaussian

REPO = Path(__file__).resolve().parents[1]


def load(name: str, data_home: Path) -> np.ndarray:
    if name == "usps":
        return np.load(data_home / "usps" / "usps.npz")["X_train"].astype(np.float64)
    if name == "cal_housing":
        df = pd.read_csv(data_home / "cal_housing" / "cal_housing.data.gz")
        X = df.drop(columns=["median_house_value"]).to_numpy(dtype=np.float64)
        return (X - X.mean(axis=0)) / X.std(axis=0)
    raise ValueError(name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-home", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--n", type=int, default=4000)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--datasets", nargs="+", default=["usps", "cal_housing"])
    args = parser.parse_args()
    methods = ("uniform", "kmeans", "leverage")
    for name in args.datasets:
        X_all = load(name, args.data_home)
        X = X_all[np.random.default_rng(0).choice(X_all.shape[0], args.n, replace=False)]
        d2 = euclidean_distances(X[:2000], squared=True)[np.triu_indices(2000, 1)]
        gamma = 1.0 / (2.0 * float(np.median(d2)))
        kernel = Gaussian(gamma=gamma)
        K = kernel(X)
        w = np.linalg.eigvalsh(K)[::-1]
        nK_F, nK_2 = float(np.linalg.norm(K)), float(w[0])
        print(f"\n{name}: n = {X.shape[0]}, d = {X.shape[1]}, gamma = {gamma:.4g}")
        print(
            f"{'m':>5} {'best F':>8} "
            + " ".join(f"{meth + ' F':>17}" for meth in methods)
            + f" {'best 2':>8} "
            + " ".join(f"{meth + ' 2':>17}" for meth in methods)
            + "  fit s (u/k/l)"
        )
        for frac in (0.02, 0.04, 0.06, 0.08, 0.10):
            m = round(frac * X.shape[0])
            F = {meth: [] for meth in methods}
            S = {meth: [] for meth in methods}
            T = {meth: [] for meth in methods}
            for seed in range(args.seeds):
                for meth in methods:
                    t0 = time.perf_counter()
                    model = Nystroem(kernel, n_components=m, landmarks=meth, random_state=seed)
                    model.fit(X)
                    T[meth].append(time.perf_counter() - t0)
                    Z = model.transform(X)
                    E = K - Z @ Z.T
                    F[meth].append(float(np.linalg.norm(E)) / nK_F)
                    S[meth].append(float(eigsh(E, k=1, which="LA")[0][0]) / nK_2)
            best_F = float(np.sqrt(np.sum(w[m:] ** 2))) / nK_F
            best_2 = float(w[m]) / nK_2
            cells_F = " ".join(f"{np.mean(F[k]):>9.5f}±{np.std(F[k]):<7.5f}" for k in methods)
            cells_S = " ".join(f"{np.mean(S[k]):>9.5f}±{np.std(S[k]):<7.5f}" for k in methods)
            times = "/".join(f"{np.mean(T[k]):.2f}" for k in methods)
            print(f"{m:>5} {best_F:>8.5f} {cells_F} {best_2:>8.5f} {cells_S}  {times}")


if __name__ == "__main__":
    main()
