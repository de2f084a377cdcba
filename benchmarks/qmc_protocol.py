"""Quasi-Monte Carlo against Monte Carlo random Fourier features in the study's protocol.

The protocol of Deshmukh's kernel approximation study as docs/RESULTS.md section 1 runs it
(``experiments/seed_study.toml``): its six data sets and sizes (1000 rows; covtype 2000;
USPS 400), scaled to the unit hypercube (min-max), Gaussian kernel with ``sigma`` the mean
distance of the points to their mean, ``D = 16 ... 256`` output features (cos/sin pairs,
``D / 2`` frequencies), the relative Frobenius error ``|K - Z Z^T|_F / |K|_F`` of the
kernel matrix of the n points, ``--seeds`` runs (10).

Constructions (``--variants``):

* ``mc``: ``RandomFourierFeatures(sampler="mc")``, i.i.d. Gaussian frequencies;
* ``sobol-default``: ``RandomFourierFeatures(sampler="sobol")`` with its default options;
* reference constructions built here from scipy's points (independent of the library's
  options, to separate the two causes): ``sobol-lms`` (scipy's default scrambling, linear
  matrix scrambling plus a digital shift), ``sobol-shift`` (the unscrambled Joe-Kuo net,
  origin included, XOR one uniform random shift), ``sobol-skip`` (the unscrambled points
  without the origin, deterministic, as the library's ``scramble=False`` did), each also
  with ``-rot`` (the frequencies rotated onto the principal axes of the data: ``W = M V^T``,
  ``V`` the eigenvectors of the covariance of the rows sorted by decreasing variance).

A (data set, D) point is a **significant** win of a construction over ``mc`` when its mean
error is lower by more than two standard errors of the difference of the means,
``2 sqrt(s_mc^2 / n + s_q^2 / n)`` (n seeds, independent runs); a significant loss the other
way round.  Accuracy only, no timing.  Run from the repository root::

    python benchmarks/qmc_protocol.py [--data-home ../shared/data] [--seeds 10]
        [--variants mc sobol-default ...] [--out docs/results/qmc_protocol] [--quick]

Writes ``<out>/results.csv`` (one row per data set, D, variant, seed) and ``<out>/table.md``
(means, standard errors and the win/loss count of every variant against ``mc``).
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
from scipy import special
from scipy.stats import qmc

from kernelmaps import RandomFourierFeatures
from kernelmaps.bandwidth import gamma_from_data
from kernelmaps.experiments import load_config, prepare_data
from kernelmaps.kernels import Gaussian

REPO = Path(__file__).resolve().parents[1]
GRID = [16, 32, 64, 128, 256]


def principal_axes(X: np.ndarray) -> np.ndarray:
    """Eigenvectors of the covariance of the rows of ``X``, by decreasing variance."""
    Xc = X - X.mean(axis=0)
    values, vectors = np.linalg.eigh(Xc.T @ Xc / X.shape[0])
    return vectors[:, np.argsort(values)[::-1]]


def sobol_uniforms(n: int, d: int, how: str, rng: np.random.Generator) -> np.ndarray:
    """``n`` Sobol' points of ``(0, 1)^d`` randomized by ``how`` (reference construction)."""
    if how == "lms":
        return qmc.Sobol(d, scramble=True, rng=rng).random(n)
    engine = qmc.Sobol(d, scramble=False)
    if how == "skip":
        engine.fast_forward(1)
        return engine.random(n)
    # digital shift: XOR the 30-bit integers with one random integer per coordinate, and
    # add the random digits beyond the 30th (the points have none), so each point is U(0,1)^d
    ints = np.round(engine.random(n) * 2.0**30).astype(np.uint64)
    u = rng.random(d) * 2.0**30
    hi = np.floor(u)
    return ((ints ^ hi.astype(np.uint64)).astype(np.float64) + (u - hi)) * 2.0**-30


def reference_features(
    X: np.ndarray, gamma: float, D: int, how: str, rotate: bool, seed: int
) -> np.ndarray:
    rng = np.random.default_rng(seed)
    L = D // 2
    U = np.clip(sobol_uniforms(L, X.shape[1], how, rng), 2.0**-53, 1.0 - 2.0**-53)
    W = special.ndtri(U) * math.sqrt(2.0 * gamma)
    if rotate:
        W = W @ principal_axes(X).T
    P = X @ W.T
    return np.hstack([np.cos(P), np.sin(P)]) / math.sqrt(L)


def _library(**params: object) -> Callable[[np.ndarray, float, int, int], np.ndarray]:
    def features(X: np.ndarray, gamma: float, D: int, seed: int) -> np.ndarray:
        rff = RandomFourierFeatures(gamma=gamma, n_components=D, random_state=seed, **params)
        return rff.fit_transform(X)

    return features


def _reference(how: str, rotate: bool) -> Callable[[np.ndarray, float, int, int], np.ndarray]:
    return lambda X, g, D, s: reference_features(X, g, D, how, rotate, s)


VARIANTS: dict[str, Callable[[np.ndarray, float, int, int], np.ndarray]] = {
    "mc": _library(sampler="mc"),
    "sobol-default": _library(sampler="sobol"),
    **{
        f"sobol-{how}{'-rot' if rotate else ''}": _reference(how, rotate)
        for how in ("lms", "shift", "skip")
        for rotate in (False, True)
    },
}


def relative_fro_error(K: np.ndarray, Z: np.ndarray) -> float:
    return float(np.linalg.norm(K - Z @ Z.T) / np.linalg.norm(K))


def compare(rows: list[dict], variant: str, base: str = "mc") -> dict[tuple[str, int], dict]:
    """Per (data set, D): means, the standard error of their difference, the verdict."""
    cells: dict[tuple[str, int, str], list[float]] = {}
    for r in rows:
        cells.setdefault((r["dataset"], r["D"], r["variant"]), []).append(r["fro_error"])
    out = {}
    for ds, D, v in cells:
        if v != variant:
            continue
        a, b = np.array(cells[(ds, D, base)]), np.array(cells[(ds, D, v)])
        se = math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
        diff = a.mean() - b.mean()  # > 0: the variant is better
        verdict = "WIN" if diff > 2 * se else ("LOSS" if diff < -2 * se else "tie")
        out[(ds, D)] = {
            "base": a.mean(),
            "base_se": a.std(ddof=1) / math.sqrt(a.size),
            "mean": b.mean(),
            "se": b.std(ddof=1) / math.sqrt(b.size),
            "better": diff > 0,
            "verdict": verdict,
        }
    return out


def write_table(rows: list[dict], variants: list[str], path: Path, n_seeds: int) -> str:
    lines = [
        f"Relative Frobenius error of the kernel matrix, mean ± standard error over {n_seeds} "
        "seeds; each QMC construction against Monte Carlo (`mc`).  **WIN** / LOSS: lower / "
        "higher mean by more than two standard errors of the difference; tie otherwise.",
        "",
    ]
    summary = []
    for v in variants:
        if v == "mc":
            continue
        res = compare(rows, v)
        if not res:
            continue
        datasets = list(dict.fromkeys(ds for ds, _ in res))
        grid = sorted({D for _, D in res})
        lines += [f"### {v} vs mc", "", "| data set | " + " | ".join(f"D={D}" for D in grid) + " |"]
        lines.append("|---|" + "---|" * len(grid))
        for ds in datasets:
            cells = []
            for D in grid:
                c = res[(ds, D)]
                mark = {"WIN": "**WIN**", "LOSS": "LOSS", "tie": "tie"}[c["verdict"]]
                cells.append(
                    f"{c['mean']:.4f}±{c['se']:.4f} vs {c['base']:.4f}±{c['base_se']:.4f} {mark}"
                )
            lines.append(f"| {ds} | " + " | ".join(cells) + " |")
        n = len(res)
        wins = sum(c["verdict"] == "WIN" for c in res.values())
        losses = sum(c["verdict"] == "LOSS" for c in res.values())
        better = sum(c["better"] for c in res.values())
        line = (
            f"{v}: lower mean at {better}/{n}, significantly better at {wins}/{n} "
            f"({100 * wins / n:.0f} %), significantly worse at {losses}/{n}"
        )
        summary.append(line)
        lines += ["", line, ""]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return "\n".join(summary)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-home", default=str(REPO.parent / "shared" / "data"))
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--n-components", type=int, nargs="+", default=GRID)
    parser.add_argument("--variants", nargs="+", default=["mc", "sobol-default"])
    parser.add_argument("--datasets", nargs="+", default=None, help="names in seed_study.toml")
    parser.add_argument("--out", default=str(REPO / "docs" / "results" / "qmc_protocol"))
    parser.add_argument(
        "--quick", action="store_true", help="2 seeds, D = 16 and 64, 200 rows: a smoke test"
    )
    args = parser.parse_args(argv)
    unknown = [v for v in args.variants if v not in VARIANTS]
    if unknown:
        parser.error(f"unknown variants {unknown}; choose from {sorted(VARIANTS)}")
    if "mc" not in args.variants:
        args.variants.insert(0, "mc")
    grid, n_seeds = args.n_components, args.seeds
    if args.quick:
        grid, n_seeds = [16, 64], 2
    config = load_config(REPO / "experiments" / "seed_study.toml")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []
    for dcfg in config.datasets:
        if args.datasets and dcfg.name not in args.datasets:
            continue
        if args.quick:
            dcfg.n_fit = min(dcfg.n_fit, 200)
        data = prepare_data(dcfg, args.data_home)
        X = data.X_fit
        gamma = gamma_from_data(X, config.bandwidth)
        K = Gaussian(gamma=gamma)(X)
        print(f"{data.name}: n={X.shape[0]}, d={X.shape[1]}, gamma={gamma:.4g}", flush=True)
        for D in grid:
            for v in args.variants:
                for seed in range(n_seeds):
                    Z = VARIANTS[v](X, gamma, D, seed)
                    err = relative_fro_error(K, Z)
                    rows.append(
                        {"dataset": data.name, "D": D, "variant": v, "seed": seed, "fro_error": err}
                    )
    with open(out / "results.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(write_table(rows, args.variants, out / "table.md", n_seeds))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
