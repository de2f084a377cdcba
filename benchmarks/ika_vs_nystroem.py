"""IKA against Nyström on 7x7 natural-image patches (the experiment of the IKA paper).

Protocol (Ronchetti 2018, section 4): Gaussian kernel ``exp(-|x - y|^2 / (2 sigma^2))``
with ``sigma^2`` the 10th percentile of squared distances; ``n = 128`` filters chosen at
random among the training patches or by mini-batch k-means (normalized to unit length);
IKA with a sample of ``S`` training patches (the paper's best, 15 000); ``m`` from 16 to
128 eigenfunctions; the error is the mean absolute kernel error over pairs of held-out
patches (80/20 split).  Nyström is reported two ways: rank-``m`` Nyström from the same
128 filters (the top-``m`` eigenvectors of ``K_mm``) and Nyström with the first ``m``
filters only.  The relative reduction is ``1 - err_IKA / err_Nystroem``; the paper
reports 18.6 % (random filters) and 9.1 % (k-means filters) on STL-10 patches.

Preprocessing as in the paper, on the 32 000 7x7x3 patches of
``image_patches/natural_patches_7x7x3.npz`` (the paper used STL-10 patches; its images
are normalized per image before extraction, ours per patch since only patches are
stored): per-patch normalization ``(p - mean(p)) / sqrt(var(p) + 10)``, PCA whitening
(``x -> diag(1/sqrt(v + eps)) U^T x`` with ``eps`` = 1 % of the mean variance, which
keeps the null direction left by the mean removal from blowing up), unit length.

Usage: ``python benchmarks/ika_vs_nystroem.py [--data-home DIR] [--sample-size S]
[--seeds 3] [--n-test-pairs-points 2000]``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from kernelmaps import IKA, Nystroem
from kernelmaps.kernels import Gaussian
from kernelmaps.sampling import select_landmarks

REPO = Path(__file__).resolve().parents[1]
PAPER = {"random": 18.6, "kmeans": 9.1}


def load_patches(data_home: Path) -> np.ndarray:
    data = np.load(data_home / "image_patches" / "natural_patches_7x7x3.npz")
    return data["X"].astype(np.float64)


def preprocess(X: np.ndarray) -> np.ndarray:
    X = X - X.mean(axis=1, keepdims=True)
    X /= np.sqrt(X.var(axis=1, keepdims=True) + 10.0)
    X -= X.mean(axis=0)
    cov = X.T @ X / X.shape[0]
    v, U = np.linalg.eigh(cov)
    v = np.maximum(v, 0.0)
    X = (X @ U) / np.sqrt(v + 0.01 * v.mean())
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    return X


def mean_abs_error(kernel: Gaussian, X: np.ndarray, Z: np.ndarray) -> float:
    """Mean of |k(x, y) - z(x).z(y)| over all pairs of rows, in row blocks."""
    total, count = 0.0, 0
    for start in range(0, X.shape[0], 500):
        block = slice(start, start + 500)
        K = kernel(X[block], X)
        total += float(np.abs(K - Z[block] @ Z.T).sum())
        count += K.size
    return total / count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-home", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--sample-size", type=int, default=15000)
    parser.add_argument("--n-filters", type=int, default=128)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--n-test-points", type=int, default=2000)
    args = parser.parse_args()

    try:
        from threadpoolctl import threadpool_info

        blas = [(i["internal_api"], i.get("num_threads")) for i in threadpool_info()]
    except ImportError:  # pragma: no cover
        blas = "threadpoolctl not installed"
    print(f"BLAS: {blas}")

    X = preprocess(load_patches(args.data_home))
    split = np.random.default_rng(12345).permutation(X.shape[0])
    n_train = int(0.8 * X.shape[0])
    X_train, X_test = X[split[:n_train]], X[split[n_train:]][: args.n_test_points]
    rng = np.random.default_rng(0)
    a = X_train[rng.integers(0, n_train, 20000)]
    b = X_train[rng.integers(0, n_train, 20000)]
    sigma2 = float(np.percentile(((a - b) ** 2).sum(axis=1), 10))
    kernel = Gaussian(gamma=1.0 / (2.0 * sigma2))
    print(
        f"patches: train {X_train.shape}, held-out points {X_test.shape[0]} "
        f"({X_test.shape[0] ** 2} pairs); sigma^2 = {sigma2:.4f}; S = {args.sample_size}; "
        f"n = {args.n_filters} filters; {args.seeds} seeds"
    )
    ms = [m for m in (16, 32, 48, 64, 96, 128) if m <= args.n_filters]
    n = args.n_filters
    for filters in ("random", "kmeans"):
        rows = {m: {"ika": [], "nys_rank": [], "nys_first": []} for m in ms}
        t0 = time.perf_counter()
        for seed in range(args.seeds):
            srng = np.random.default_rng(seed)
            if filters == "random":
                F, _ = select_landmarks(X_train, n, "uniform", rng=srng)
            else:
                F, _ = select_landmarks(X_train, n, "kmeans", rng=srng, minibatch=True)
                F /= np.linalg.norm(F, axis=1, keepdims=True)
            ika = IKA(
                kernel,
                n_components=n,
                basis=lambda Y, F=F: kernel(Y, F),
                sample_size=args.sample_size,
                random_state=seed,
            ).fit(X_train)
            Z_ika = ika.transform(X_test)
            Z_nys = Nystroem(kernel, landmarks=F).fit(X_train).transform(X_test)
            for m in ms:
                rows[m]["ika"].append(mean_abs_error(kernel, X_test, Z_ika[:, :m]))
                rows[m]["nys_rank"].append(mean_abs_error(kernel, X_test, Z_nys[:, :m]))
                Z_first = Nystroem(kernel, landmarks=F[:m]).fit(X_train).transform(X_test)
                rows[m]["nys_first"].append(mean_abs_error(kernel, X_test, Z_first))
        print(f"\nfilters: {filters}   ({time.perf_counter() - t0:.0f} s)")
        print(
            f"{'m':>4} {'IKA':>10} {'Nys rank-m':>11} {'Nys m filt':>11} "
            f"{'red. vs rank-m':>15} {'red. vs m filt':>15}"
        )
        reds_rank, reds_first = [], []
        for m in ms:
            e_i, e_r, e_f = (float(np.mean(rows[m][k])) for k in ("ika", "nys_rank", "nys_first"))
            reds_rank.append(1 - e_i / e_r)
            reds_first.append(1 - e_i / e_f)
            print(
                f"{m:>4} {e_i:>10.5f} {e_r:>11.5f} {e_f:>11.5f} "
                f"{100 * reds_rank[-1]:>14.1f}% {100 * reds_first[-1]:>14.1f}%"
            )
        print(
            f"mean relative reduction: {100 * np.mean(reds_rank):.1f} % vs rank-m Nystroem, "
            f"{100 * np.mean(reds_first):.1f} % vs m-filter Nystroem "
            f"(paper: {PAPER[filters]} %)"
        )


if __name__ == "__main__":
    main()
