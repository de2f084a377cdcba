"""Relative Frobenius error of the dot-product kernel maps on real data (USPS or MNIST).

Random Maclaurin (RMFM, Kar & Karnick 2012), compact random features (CRFM, Hamid et al.
2013, up-projection 4 D) and TensorSketch (Pham & Pagh 2013) at equal output dimension D,
on rows normalized to unit length, for the report's polynomial kernel of degree 2,
``(x . y)^2``, and for Hamid et al.'s ``(1 + x . y)^7``; mean ± std over seeds of
``|K - Z Z^T|_F / |K|_F`` on ``n`` rows (the exact K is formed: n x n).

Usage:
    python benchmarks/dot_product_maps.py [--data-home ../shared/data] [--dataset usps]
        [--n-samples 2000] [--seeds 5] [--n-components 256 512 1024 2048 4096]
"""

from __future__ import annotations

import argparse
import gzip
import time
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.preprocessing import normalize

from kernelmaps import CompactRandomFeatures, RandomMaclaurinFeatures, TensorSketch
from kernelmaps.kernels import HomogeneousPolynomial, Kernel, Polynomial

DEFAULT_DATA_HOME = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"


def load(dataset: str, data_home: Path, n_samples: int, seed: int = 0) -> np.ndarray:
    """``n_samples`` rows drawn without replacement from the training set, as float64."""
    if dataset == "usps":
        with np.load(data_home / "usps" / "usps.npz") as f:
            X = np.asarray(f["X_train"], dtype=np.float64)
    elif dataset == "mnist":
        path = data_home / "mnist" / "t10k-images-idx3-ubyte.gz"
        with gzip.open(path) as f:
            raw = f.read()
        X = np.frombuffer(raw, np.uint8, offset=16).reshape(-1, 784).astype(np.float64)
    else:
        raise ValueError(f"dataset must be 'usps' or 'mnist'; got {dataset!r}.")
    rng = np.random.default_rng(seed)
    rows = rng.choice(X.shape[0], size=min(n_samples, X.shape[0]), replace=False)
    return X[np.sort(rows)]


def methods(kernel: Kernel) -> dict[str, Any]:
    return {
        "RMFM": lambda D, s: RandomMaclaurinFeatures(kernel, n_components=D, random_state=s),
        "RMFM H0/1": lambda D, s: RandomMaclaurinFeatures(
            kernel, n_components=D, h01=True, random_state=s
        ),
        "CRFM": lambda D, s: CompactRandomFeatures(kernel, n_components=D, random_state=s),
        "CRFM H0/1": lambda D, s: CompactRandomFeatures(
            kernel, n_components=D, h01=True, random_state=s
        ),
        "TensorSketch": lambda D, s: TensorSketch(kernel, n_components=D, random_state=s),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data-home", type=Path, default=DEFAULT_DATA_HOME)
    parser.add_argument("--dataset", choices=["usps", "mnist"], default="usps")
    parser.add_argument("--n-samples", type=int, default=2000)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--n-components", type=int, nargs="+", default=[256, 512, 1024, 2048, 4096])
    args = parser.parse_args()

    X = normalize(load(args.dataset, args.data_home, args.n_samples))
    print(f"{args.dataset}: {X.shape[0]} rows x {X.shape[1]} features, rows normalized")
    print(f"relative Frobenius error, mean ± std over {args.seeds} seeds\n")
    kernels: list[tuple[str, Kernel]] = [
        ("(x.y)^2", HomogeneousPolynomial(2)),
        ("(1 + x.y)^7", Polynomial(degree=7, gamma=1.0, coef0=1.0)),
    ]
    for label, kernel in kernels:
        K = kernel(X)
        norm_K = np.linalg.norm(K)
        print(f"### {label}\n")
        print("| method | " + " | ".join(f"D = {d}" for d in args.n_components) + " |")
        print("|" + "---|" * (1 + len(args.n_components)))
        for name, make in methods(kernel).items():
            if "H0/1" in name and kernel.maclaurin_coefficient(1) == 0:
                continue  # nothing to compute exactly for (x.y)^2
            cells = []
            start = time.perf_counter()
            for D in args.n_components:
                up = 4 * D if name.startswith("CRFM") else D
                if "H0/1" in name and up <= X.shape[1] + 1:
                    cells.append("n/a")
                    continue
                errors = []
                for seed in range(args.seeds):
                    Z = make(D, seed).fit_transform(X)
                    errors.append(np.linalg.norm(K - Z @ Z.T) / norm_K)
                cells.append(f"{np.mean(errors):.4f} ± {np.std(errors):.4f}")
            elapsed = time.perf_counter() - start
            print(f"| {name} | " + " | ".join(cells) + f" |  ({elapsed:.0f} s)", flush=True)
        print()


if __name__ == "__main__":
    main()
