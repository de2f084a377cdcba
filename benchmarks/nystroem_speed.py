"""Nyström fit and transform, and Nyström kernel ridge, against scikit-learn, side by side.

For each dtype (float64, float32), in one process and alternating ours / scikit-learn's
(``sklearn.kernel_approximation.Nystroem``), with the median of ``--repeats`` runs:

* fit time (landmarks, ``K_mm`` and its factorization: our symmetric eigendecomposition,
  scikit-learn's SVD plus the ``m x m`` product that forms its normalization);
* transform time on ``n`` rows, and the fraction of the GEMM peak it reaches: the time of
  the bare GEMM ``(n x m) @ (m x m)`` in the same dtype divided by our transform time
  (transform = kernel block + that GEMM, so 100 % is the limit), with the GEMM writing
  into a preallocated output and, in brackets, into a new one (as a transform must:
  the first touch of the ``n x m`` output's pages is part of its cost), and in square
  brackets from the fastest of the repeats of each (robust to other processes' load);
* peak memory of the transform (tracemalloc; numpy's allocations are traced), next to the
  size of the output;
* the kernel approximation error of both on the same held-out rows,
  ``|K - Z Z^T|_F / |K|_F`` with ``K`` the exact float64 Gaussian kernel.

Data: ``n + n_test`` rows ``x = A u + 0.1 e`` with ``u ~ N(0, I_8)``, ``A`` a fixed
``d x 8`` Gaussian matrix scaled by ``1/sqrt(8)``, ``e ~ N(0, I_d)`` (a low-dimensional
structure, so that ``K_mm`` is ill-conditioned and the Nyström error is small: where
float32 rounding would show); Gaussian kernel with ``gamma = 1 / median |x - y|^2``.

``--drivers`` also times ``scipy.linalg.eigh`` with the LAPACK drivers evd / evr / ev and
``scipy.linalg.svd`` on the benchmark's ``K_mm``, with the reconstruction error
``|K_mm - V diag(w) V^T|_F / |K_mm|_F`` and the orthogonality error ``max |V^T V - I|``.

The ridge part: :class:`kernelmaps.NystroemKernelRidge` with the ``K_nm`` cache at its
default (``cache_size="auto"``: half of the available memory), within the former default
of 2048 MiB (the rows beyond it evaluated again at every iteration) and without a cache
(``cache_size=0``), against ``make_pipeline(Nystroem(m), Ridge)`` (which forms the
``n x m`` features and solves the dense normal equations), all with the same ``alpha``
and scikit-learn's default ``gamma = 1 / d``, on Friedman #1
(:func:`sklearn.datasets.make_friedman1`, ``d = 10``, noise 1, float64), alternated in
one process (``--repeats`` rounds, median): fit time, its ratio to the pipeline's, test
MSE and the conjugate-gradient iterations.  ``--ridge-float32`` fits float32 rows
(FALKON's ``K_nm`` blocks then float32, ``tol = 1e-5``).

The machine is shared and timings are noisy: read the ratios, not the seconds.

Usage: python benchmarks/nystroem_speed.py [--n 100000] [--d 64] [--m 4096]
    [--dtypes float64 float32] [--repeats 3] [--drivers] [--skip-ridge] [--quick]
    [--skip-maps --ridge-n 200000 --ridge-m 2048 --ridge-alpha 1e-3 --ridge-variants 1]
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
import scipy.linalg
from _harness import kernel_error, machine_line, peak_memory, time_alternating, timed
from sklearn.datasets import make_friedman1
from sklearn.kernel_approximation import Nystroem as SkNystroem
from sklearn.linear_model import Ridge
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.pipeline import make_pipeline

from kernelmaps import Nystroem, NystroemKernelRidge
from kernelmaps.kernels import Gaussian


def make_data(n: int, d: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((d, 8)) / np.sqrt(8.0)
    return rng.standard_normal((n, 8)) @ A.T + 0.1 * rng.standard_normal((n, d))


def median_gamma(X: np.ndarray, seed: int = 1) -> float:
    rng = np.random.default_rng(seed)
    S = X[rng.choice(X.shape[0], size=min(1000, X.shape[0]), replace=False)]
    D2 = ((S[:, None, :] - S[None, :, :]) ** 2).sum(-1)
    return float(1.0 / np.median(D2[np.triu_indices(S.shape[0], 1)]))


def bench_maps(args: argparse.Namespace) -> list[dict[str, Any]]:
    X_all = make_data(args.n + args.n_test, args.d)
    gamma = median_gamma(X_all)
    X64, X_test64 = X_all[: args.n], X_all[args.n :]
    kernel = Gaussian(gamma=gamma)
    rows = []
    for name in args.dtypes:
        dtype = np.dtype(name)
        X, X_test = X64.astype(dtype), X_test64.astype(dtype)
        ours = Nystroem(gamma=gamma, n_components=args.m, random_state=0)
        sk = SkNystroem(gamma=gamma, n_components=args.m, random_state=0)
        fits = {"fit": partial(ours.fit, X), "sk_fit": partial(sk.fit, X)}
        times = time_alternating(fits, args.repeats, warm_up=False)
        out_bytes = args.n * args.m * dtype.itemsize
        rng = np.random.default_rng(2)
        C = np.empty((args.n, args.m), dtype=dtype)
        A = rng.standard_normal((args.n, args.m)).astype(dtype)
        N = rng.standard_normal((args.m, args.m)).astype(dtype)
        transforms = {"tr": partial(ours.transform, X), "sk_tr": partial(sk.transform, X)}
        # The first transform of each, under tracemalloc, is the warm-up.
        peaks = {key: peak_memory(call)[0] for key, call in transforms.items()}
        gemms = {"gemm": partial(np.matmul, A, N, out=C), "gemm_new": partial(np.matmul, A, N)}
        times |= time_alternating(transforms | gemms, args.repeats, warm_up=False)
        A = C = N = np.empty(0)  # release the GEMM operands
        med = {k: t.median for k, t in times.items()}
        err = kernel_error(ours, X_test, kernel)
        sk_err = kernel_error(sk, X_test, kernel)
        assert ours.transform(X_test).dtype == dtype
        rows.append(
            {
                "dtype": name,
                "fit": med["fit"],
                "sk_fit": med["sk_fit"],
                "tr": med["tr"],
                "sk_tr": med["sk_tr"],
                "gemm": med["gemm"],
                "gemm_new": med["gemm_new"],
                "gemm_gflops": 2.0 * args.n * args.m**2 / med["gemm"] / 1e9,
                "peak": peaks["tr"] / 2**20,
                "sk_peak": peaks["sk_tr"] / 2**20,
                "out": out_bytes / 2**20,
                "err": err,
                "sk_err": sk_err,
                "rank": ours.rank_,
                "best_fraction": times["gemm"].min / times["tr"].min,
                "spread": {k: (t.min, t.max) for k, t in times.items()},
            }
        )
        print(f"  done {name}: {rows[-1]}", flush=True)
    return rows


def bench_drivers(args: argparse.Namespace) -> list[tuple[str, str, float, float, float]]:
    X = make_data(args.n, args.d)
    gamma = median_gamma(X)
    L = X[np.sort(np.random.default_rng(0).choice(args.n, size=args.m, replace=False))]
    K = rbf_kernel(L, gamma=gamma)
    norm = np.linalg.norm(K)
    out = []
    for name in args.dtypes:
        Kd = K.astype(name)
        for driver in args.driver_list:
            if driver == "svd":
                seconds, (U, s, _) = timed(partial(scipy.linalg.svd, Kd, check_finite=False))
                w, V = s, U
            else:
                seconds, (w, V) = timed(
                    partial(scipy.linalg.eigh, Kd, driver=driver, check_finite=False)
                )
            V64 = V.astype(np.float64)
            rec = float(np.linalg.norm(K - (V64 * w) @ V64.T) / norm)
            orth = float(np.abs(V64.T @ V64 - np.eye(args.m)).max())
            out.append((name, driver, seconds, rec, orth))
            print(f"  {name} {driver}: {seconds:.2f} s, rec {rec:.1e}, orth {orth:.1e}", flush=True)
    return out


def bench_ridge(args: argparse.Namespace) -> list[tuple[str, float, float, float, str]]:
    n, m, alpha = args.ridge_n, args.ridge_m, args.ridge_alpha
    X, y = make_friedman1(n + 10_000, n_features=args.ridge_d, noise=1.0, random_state=0)
    dtype = np.float32 if args.ridge_float32 else np.float64
    X, Xt, y, yt = X[:n].astype(dtype), X[n:].astype(dtype), y[:n], y[n:]
    tol = 1e-5 if args.ridge_float32 else 1e-6

    def ours(cache_size: float | str) -> Callable[[], Any]:
        return lambda: NystroemKernelRidge(
            n_components=m,
            alpha=alpha,
            tol=tol,
            max_iter=300,
            cache_size=cache_size,
            random_state=0,
        )

    makers: dict[str, Callable[[], Any]] = {
        "sklearn Nystroem + Ridge": lambda: make_pipeline(
            SkNystroem(n_components=m, random_state=0), Ridge(alpha=alpha)
        ),
        'NystroemKernelRidge (cache_size="auto")': ours("auto"),
        "NystroemKernelRidge (cache_size=2048)": ours(2048),
        "NystroemKernelRidge (cache_size=0)": ours(0),
    }
    makers = {k: v for i, (k, v) in enumerate(makers.items()) if i < 2 + args.ridge_variants}
    times: dict[str, list[float]] = {k: [] for k in makers}
    mse: dict[str, float] = {}
    extra: dict[str, str] = {}
    for _ in range(args.repeats):
        for key, make in makers.items():
            seconds, model = timed(partial(make().fit, X, y))
            times[key].append(seconds)
            mse[key] = float(np.mean((model.predict(Xt) - yt) ** 2))
            if isinstance(model, NystroemKernelRidge):
                extra[key] = f"{model.n_iter_} CG iterations, {model.n_cached_rows_} rows cached"
            del model
            print(f"  {key}: {seconds:.2f} s", flush=True)
    base = statistics.median(times["sklearn Nystroem + Ridge"])
    return [
        (k, statistics.median(v), statistics.median(v) / base, mse[k], extra.get(k, ""))
        for k, v in times.items()
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--d", type=int, default=64)
    parser.add_argument("--m", type=int, default=4096)
    parser.add_argument("--n-test", type=int, default=1000)
    parser.add_argument("--dtypes", nargs="+", default=["float64", "float32"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--drivers", action="store_true", help="compare the eigh drivers")
    parser.add_argument("--driver-list", nargs="+", default=["evd", "evr", "ev", "svd"])
    parser.add_argument("--skip-maps", action="store_true")
    parser.add_argument("--skip-ridge", action="store_true")
    parser.add_argument("--ridge-n", type=int, default=100_000)
    parser.add_argument("--ridge-d", type=int, default=10)
    parser.add_argument("--ridge-m", type=int, default=2048)
    parser.add_argument("--ridge-alpha", type=float, default=1e-3)
    parser.add_argument("--ridge-float32", action="store_true")
    parser.add_argument(
        "--ridge-variants",
        type=int,
        default=2,
        help="FALKON's cache variants after the default: 0, 1 (2048 MiB) or 2 (and none)",
    )
    parser.add_argument("--quick", action="store_true", help="tiny sizes (smoke test)")
    args = parser.parse_args(argv)
    if args.quick:
        args.n, args.d, args.m, args.n_test, args.repeats = 3000, 16, 256, 200, 1
        args.ridge_n, args.ridge_m = 3000, 128

    print(f"machine: {machine_line()}")
    print(f"n = {args.n}, d = {args.d}, m = {args.m}, repeats = {args.repeats} (median)\n")
    if args.drivers:
        drivers = bench_drivers(args)
        print("\n| dtype | driver | seconds | rel. recon. error | max orth. error |")
        print("|---|---|---|---|---|")
        for name, driver, seconds, rec, orth in drivers:
            print(f"| {name} | {driver} | {seconds:.2f} | {rec:.1e} | {orth:.1e} |")
        print()
    if not args.skip_maps:
        rows = bench_maps(args)
        print(
            "\n| dtype | fit ours (s) | fit sklearn (s) | fit speed-up | transform ours (s) "
            "| transform sklearn (s) | transform speed-up | GEMM (s, GFLOP/s) "
            "| GEMM-peak fraction (fresh output) [best of repeats] "
            "| peak MiB ours / sklearn (output) "
            "| kernel error ours / sklearn | rank |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for r in rows:
            print(
                f"| {r['dtype']} | {r['fit']:.2f} | {r['sk_fit']:.2f} | "
                f"{r['sk_fit'] / r['fit']:.1f}x | {r['tr']:.2f} | {r['sk_tr']:.2f} | "
                f"{r['sk_tr'] / r['tr']:.2f}x | {r['gemm']:.2f} ({r['gemm_gflops']:.0f}) | "
                f"{r['gemm'] / r['tr']:.0%} ({r['gemm_new'] / r['tr']:.0%}) "
                f"[{r['best_fraction']:.0%}] | "
                f"{r['peak']:.0f} / {r['sk_peak']:.0f} "
                f"({r['out']:.0f}) | {r['err']:.2e} / {r['sk_err']:.2e} | {r['rank']} |"
            )
    if not args.skip_ridge:
        dtype = "float32" if args.ridge_float32 else "float64"
        print(
            f"\nRidge: Friedman #1, n = {args.ridge_n}, d = {args.ridge_d}, m = {args.ridge_m}, "
            f"alpha = {args.ridge_alpha:g}, {dtype}\n"
        )
        rows = bench_ridge(args)
        print("\n| method | fit (s) | fit / pipeline's | test MSE | notes |")
        print("|---|---|---|---|---|")
        for key, seconds, ratio, err, note in rows:
            print(f"| {key} | {seconds:.2f} | {ratio:.2f} | {err:.4f} | {note} |")


if __name__ == "__main__":
    main()
