"""Feature maps of kernelmaps against their scikit-learn counterparts: time, memory, error.

For each map and dtype, in one process:

* time: ``transform`` of all ``n`` rows (the map fitted beforehand), median of
  ``--repeats`` runs, ours and scikit-learn's alternated (A/B/A/B), ``time.perf_counter``.
  scikit-learn's PolynomialCountSketch cannot transform 100 000 rows with D = 4096 in one
  call (it holds ``degree D`` complex128 values per row at once, > 6 GiB), so it is timed
  on chunks of ``--chunk`` rows written into one output array (which only helps it);
* peak memory: one more transform under ``tracemalloc`` (numpy reports its buffers to
  it), the output included;
* error: relative Frobenius error ``|K - Z Z^T|_F / |K|_F`` of the features of the first
  ``--error-rows`` rows (same rows, same fitted maps) against the exact kernel.

Maps without a scikit-learn counterpart (random Maclaurin, compact random features,
random binning, IKA) get our time and throughput only.  The ratio is scikit-learn's time
over ours (> 1: we are faster).

Data (seeded): unit-norm Gaussian rows for the polynomial maps, uniform [0, 1) for the
chi-squared maps ("sparse": the same with the entries below 0.9 set to zero, CSR),
standard normal rows for the shift-invariant ones.

Usage: python benchmarks/maps_vs_sklearn.py [--n-samples 100000] [--n-features 64]
    [--n-components 4096] [--repeats 3] [--quick]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn import kernel_approximation as ska

import kernelmaps
from kernelmaps import (
    IKA,
    AdditiveChi2Sampler,
    CompactRandomFeatures,
    RandomBinningFeatures,
    RandomMaclaurinFeatures,
    SkewedChi2Sampler,
    TensorSketch,
)
from kernelmaps.kernels import AdditiveChi2, Gaussian, HomogeneousPolynomial, Laplacian, SkewedChi2


@dataclass
class Case:
    name: str
    dtype: str
    data: Callable[[], Any]
    ours: Callable[[], Any]
    theirs: Callable[[], Any] | None
    kernel: Callable[[Any], np.ndarray]
    chunk: int | None = None  # scikit-learn's transform in row chunks
    time_fit: bool = False  # time fit + transform (maps whose columns depend on the data)


def _dense(X: Any) -> np.ndarray:
    return np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)


def make_cases(args: argparse.Namespace) -> list[Case]:
    n, d, D = args.n_samples, args.n_features, args.n_components
    cases: list[Case] = []
    poly = HomogeneousPolynomial(2)
    skewed = SkewedChi2(skewedness=1.0)
    additive = AdditiveChi2()
    Dc = max(D // 4, 1)
    gamma = 1.0 / d
    laplacian = Laplacian(gamma=gamma)
    rbf = Gaussian(gamma=0.5 / d)
    nb = min(512, max(n // 4, 1))
    for dtype in ("float64", "float32"):
        dt = np.dtype(dtype)

        def unit_rows(dt: np.dtype = dt) -> np.ndarray:
            X = np.random.default_rng(0).standard_normal((n, d))
            return (X / np.linalg.norm(X, axis=1, keepdims=True)).astype(dt)

        def histograms(dt: np.dtype = dt) -> np.ndarray:
            return np.random.default_rng(1).uniform(0.0, 1.0, (n, d)).astype(dt)

        def sparse_histograms(dt: np.dtype = dt) -> sp.csr_matrix:
            X = histograms(dt)
            X[X < 0.9] = 0.0
            return sp.csr_matrix(X)

        def gaussian(dt: np.dtype = dt) -> np.ndarray:
            return np.random.default_rng(2).standard_normal((n, d)).astype(dt)

        cases.append(
            Case(
                "TensorSketch / PolynomialCountSketch (degree 2)",
                dtype,
                unit_rows,
                lambda: TensorSketch(
                    degree=2, gamma=1.0, coef0=0.0, n_components=D, random_state=0
                ),
                lambda: ska.PolynomialCountSketch(degree=2, n_components=D, random_state=0),
                lambda X: poly(_dense(X)),
                chunk=args.chunk,
            )
        )
        cases.append(
            Case(
                "SkewedChi2Sampler",
                dtype,
                histograms,
                lambda: SkewedChi2Sampler(skewedness=1.0, n_components=D, random_state=0),
                lambda: ska.SkewedChi2Sampler(skewedness=1.0, n_components=D, random_state=0),
                lambda X: skewed(_dense(X)),
            )
        )
        cases.append(
            Case(
                "SkewedChi2Sampler (sparse input; sklearn refuses it)",
                dtype,
                sparse_histograms,
                lambda: SkewedChi2Sampler(skewedness=1.0, n_components=D, random_state=0),
                None,
                lambda X: skewed(_dense(X)),
            )
        )
        for steps in (2, 3):
            for kind, data in (("dense", histograms), ("sparse", sparse_histograms)):
                cases.append(
                    Case(
                        f"AdditiveChi2Sampler (steps {steps}, {kind})",
                        dtype,
                        data,
                        lambda s=steps: AdditiveChi2Sampler(sample_steps=s),
                        lambda s=steps: ska.AdditiveChi2Sampler(sample_steps=s),
                        lambda X: additive(_dense(X)),
                    )
                )
        cases.append(
            Case(
                "RandomMaclaurinFeatures (degree 2)",
                dtype,
                unit_rows,
                lambda: RandomMaclaurinFeatures(
                    degree=2, gamma=1.0, coef0=0.0, n_components=D, random_state=0
                ),
                None,
                lambda X: poly(_dense(X)),
            )
        )
        cases.append(
            Case(
                f"CompactRandomFeatures (degree 2, D = {Dc}, up 4)",
                dtype,
                unit_rows,
                lambda: CompactRandomFeatures(
                    degree=2, gamma=1.0, coef0=0.0, n_components=Dc, random_state=0
                ),
                None,
                lambda X: poly(_dense(X)),
            )
        )
        cases.append(
            Case(
                "RandomBinningFeatures (100 grids, fit + transform)",
                dtype,
                gaussian,
                lambda: RandomBinningFeatures(gamma=gamma, n_grids=100, random_state=0),
                None,
                lambda X: laplacian(_dense(X)),
                time_fit=True,
            )
        )
        cases.append(
            Case(
                f"IKA transform (kernel basis, {nb} centres)",
                dtype,
                gaussian,
                lambda: IKA(
                    gamma=0.5 / d,
                    n_components=nb // 2,
                    n_basis=nb,
                    sample_size=min(n, 4 * nb),
                    random_state=0,
                ),
                None,
                lambda X: rbf(_dense(X)),
            )
        )
    return cases


def _time(func: Callable[[], Any]) -> float:
    start = time.perf_counter()
    func()
    return time.perf_counter() - start


def _transform(est: Any, X: Any, chunk: int | None) -> Any:
    if chunk is None or chunk >= X.shape[0]:
        return est.transform(X)
    first = est.transform(X[:chunk])
    out = np.empty((X.shape[0], first.shape[1]), dtype=first.dtype)
    out[:chunk] = first
    for i in range(chunk, X.shape[0], chunk):
        out[i : i + chunk] = est.transform(X[i : i + chunk])
    return out


def _peak(func: Callable[[], Any]) -> int:
    gc.collect()
    tracemalloc.start()
    result = func()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del result
    return peak


def _error(est: Any, X: Any, kernel: Callable[[Any], np.ndarray], rows: int) -> float:
    Xs = X[:rows]
    Z = est.transform(Xs)
    Z = _dense(Z)
    K = kernel(Xs)
    return float(np.linalg.norm(K - Z @ Z.T) / np.linalg.norm(K))


def run_case(case: Case, args: argparse.Namespace) -> dict[str, Any]:
    X = case.data()
    ours = case.ours().fit(X)
    theirs = case.theirs().fit(X) if case.theirs is not None else None

    def run_ours() -> Any:
        if case.time_fit:
            return case.ours().fit(X).transform(X)
        return ours.transform(X)

    def run_theirs() -> Any:
        return _transform(theirs, X, case.chunk)

    run_ours()  # warm-up (compilation, caches); not timed
    times: dict[str, list[float]] = {"ours": [], "theirs": []}
    for _ in range(args.repeats):
        times["ours"].append(_time(run_ours))
        if theirs is not None:
            times["theirs"].append(_time(run_theirs))
    Z = run_ours()
    row: dict[str, Any] = {
        "map": case.name,
        "dtype": case.dtype,
        "out_dtype": str(Z.dtype),
        "ours": statistics.median(times["ours"]),
        "ours_spread": max(times["ours"]) - min(times["ours"]),
        "ours_peak": _peak(run_ours),
        "ours_err": _error(ours, X, case.kernel, args.error_rows),
        "rows_per_s": X.shape[0] / statistics.median(times["ours"]),
    }
    del Z
    if theirs is not None:
        row["theirs"] = statistics.median(times["theirs"])
        row["theirs_peak"] = _peak(run_theirs)
        row["theirs_err"] = _error(theirs, X, case.kernel, args.error_rows)
    return row


def _mib(n_bytes: float) -> str:
    return f"{n_bytes / 2**20:.0f}"


def format_table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| map | dtype (out) | ours (s) | sklearn (s) | ratio | ours peak (MiB) "
        "| sklearn peak (MiB) | ours error | sklearn error | ours rows/s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        has = "theirs" in r
        cells = [
            r["map"],
            f"{r['dtype']} ({r['out_dtype']})",
            f"{r['ours']:.3f}",
            f"{r['theirs']:.3f}" if has else "-",
            f"{r['theirs'] / r['ours']:.2f}x" if has else "-",
            _mib(r["ours_peak"]),
            _mib(r["theirs_peak"]) if has else "-",
            f"{r['ours_err']:.4f}",
            f"{r['theirs_err']:.4f}" if has else "-",
            f"{r['rows_per_s']:,.0f}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def environment() -> str:
    parts = [f"engine = {kernelmaps.get_config()['engine']}"]
    try:
        import numba

        parts.append(f"numba {numba.__version__} ({numba.get_num_threads()} threads)")
    except ImportError:  # pragma: no cover - optional
        parts.append("numba not installed")
    try:
        from threadpoolctl import threadpool_info

        pools = ", ".join(
            f"{p['internal_api']} {p.get('version')} ({p['num_threads']} threads)"
            for p in threadpool_info()
        )
        parts.append(f"thread pools: {pools}")
    except ImportError:  # pragma: no cover - optional
        pass
    return "; ".join(parts)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--n-samples", type=int, default=100_000)
    parser.add_argument("--n-features", type=int, default=64)
    parser.add_argument("--n-components", type=int, default=4096)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--chunk", type=int, default=10_000, help="sklearn's TensorSketch rows")
    parser.add_argument("--error-rows", type=int, default=2000)
    parser.add_argument("--only", default=None, help="run the maps whose name contains this")
    parser.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test")
    args = parser.parse_args(argv)
    if args.quick:
        args.n_samples, args.n_components, args.repeats = 1000, 128, 1
        args.chunk, args.error_rows = 500, 200
    args.error_rows = min(args.error_rows, args.n_samples)
    print(
        f"n = {args.n_samples}, d = {args.n_features}, D = {args.n_components}, "
        f"median of {args.repeats}; {environment()}\n"
    )
    header, rule = format_table([]).splitlines()
    print(header, rule, sep="\n", flush=True)
    for case in make_cases(args):
        if args.only is not None and args.only.lower() not in case.name.lower():
            continue
        print(format_table([run_case(case, args)]).splitlines()[-1], flush=True)
        gc.collect()


if __name__ == "__main__":
    main()
