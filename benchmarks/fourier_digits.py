"""Relative Frobenius error of random Fourier features on scikit-learn's digits.

Every sampler (Monte Carlo, orthogonal, scrambled Halton, scrambled Sobol') and variant
(cos/sin pairs, cos + phase) of :class:`kernelmaps.RandomFourierFeatures` for the Gaussian
kernel with the bandwidth set by the mean distance of the points to their mean (the rule of
Deshmukh's study), on all 1797 images, averaged over seeds.

Usage: python benchmarks/fourier_digits.py [--seeds 10] [--n-components 256 1024]
"""

from __future__ import annotations

import argparse

import numpy as np
from sklearn.datasets import load_digits

from kernelmaps import RandomFourierFeatures, feature_map_error
from kernelmaps.bandwidth import gamma_from_data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--n-components", type=int, nargs="+", default=[256, 1024])
    args = parser.parse_args()

    X = load_digits().data / 16.0
    gamma = gamma_from_data(X, "mean_distance")
    print(f"digits {X.shape}, Gaussian kernel, gamma = {gamma:.5f} (mean-distance rule)")
    print(f"relative Frobenius error |K - ZZ^T|_F / |K|_F, mean ± std over {args.seeds} seeds\n")
    header = "| sampler | variant | " + " | ".join(f"D = {d}" for d in args.n_components) + " |"
    print(header)
    print("|" + "---|" * (2 + len(args.n_components)))
    for sampler in ("mc", "orthogonal", "halton", "sobol"):
        for variant in ("cos_sin", "cos_phase"):
            cells = []
            for d in args.n_components:
                errors = [
                    feature_map_error(
                        RandomFourierFeatures(
                            gamma=gamma,
                            n_components=d,
                            variant=variant,
                            sampler=sampler,
                            random_state=seed,
                        ).fit(X),
                        X,
                    )
                    for seed in range(args.seeds)
                ]
                cells.append(f"{np.mean(errors):.4f} ± {np.std(errors):.4f}")
            print(f"| {sampler} | {variant} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
