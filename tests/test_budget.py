"""``feature_budget`` and ``statistical_dimension``: the interval, the bounds, the
measured counts, ``kernelmaps budget`` and the statistical dimension of ``compare``.

The interval of the statistical dimension is a theorem (Rotfel'd's trace inequality and
Weyl's monotonicity, see :mod:`kernelmaps.models._budget._statistical_dimension`) that holds for
every draw of the pivots, so it is asserted for every seed with a rounding tolerance only:
each eigenvalue computed by a backward-stable eigensolver (or through the factor of
RPCholesky) is within ``n eps |K|_2`` of the exact one, and moves ``t / (t + lam)`` by at
most that over ``lam``; over ``n`` eigenvalues, ``n^2 eps |K|_2 / lam`` (times 16 for the
two computations compared and the accumulated sums).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from kernelmaps import Nystroem, RandomFourierFeatures, feature_budget, feature_map_error
from kernelmaps._random import check_random_state
from kernelmaps.kernels import Gaussian
from kernelmaps.models import statistical_dimension
from kernelmaps.models._budget import _bounds as bounds
from kernelmaps.models._budget._statistical_dimension import sample_rows, sample_spectrum

EPS = float(np.finfo(np.float64).eps)


def _points(n: int, d: int, seed: int) -> np.ndarray:
    return np.random.default_rng(1000 + seed).normal(size=(n, d))


def _exact(K: np.ndarray, lam: float) -> tuple[float, float]:
    """``tr(K (K + lam I)^-1)`` from the eigenvalues, and its rounding tolerance."""
    ev = np.clip(np.linalg.eigvalsh(K), 0.0, None)
    norm = float(ev.max())
    n = K.shape[0]
    return float(np.sum(ev / (ev + lam))), 16.0 * n * n * EPS * norm / lam


@pytest.mark.parametrize("lam", [0.05, 1.0, 20.0])
def test_interval_of_a_low_rank_factor_contains_the_exact_value(seed, lam):
    """RPCholesky stopped at its first rank (64 of 300 rows), whatever the width: the
    interval still brackets the exact statistical dimension."""
    X = _points(300, 3, seed)
    kernel = Gaussian(gamma=0.3)
    spectrum = sample_spectrum(X, kernel, [lam], np.random.default_rng(seed), rtol=math.inf)
    assert spectrum.rank == 64 and not spectrum.exact
    lo, hi = spectrum.interval(lam)
    exact, tol = _exact(kernel(X), lam)
    assert lo - tol <= exact <= hi + tol


@pytest.mark.parametrize(("n", "alpha"), [(60, 0.5), (400, 2.0), (400, 0.01)])
def test_statistical_dimension_of_all_rows_contains_the_exact_value(seed, n, alpha):
    """``n <= n_samples``: the sample is every row, the interval is for ``s_alpha(K_n)``
    itself (the exact path below 128 rows, RPCholesky or exact above)."""
    X = _points(n, 2, seed)
    s = statistical_dimension(X, gamma=0.5, alpha=alpha, random_state=seed)
    assert (s.n_rows, s.n_sample, s.lambda_sample) == (n, n, alpha)
    exact, tol = _exact(Gaussian(gamma=0.5)(X), alpha)
    assert s.interval[0] - tol <= exact <= s.interval[1] + tol
    assert s.interval[0] <= s.value <= s.interval[1]
    if s.exact:
        assert s.interval[0] == s.interval[1]
    else:  # stopped because the interval was narrow enough
        assert s.interval[1] - s.interval[0] <= 0.05 * s.interval[0]


def test_statistical_dimension_of_a_sample_brackets_the_sample_value(seed):
    """``n > n_samples``: what is provable is the interval of the sample's own
    ``s_{alpha n_s / n}(K_{n_s})``; the sample is the one the function draws."""
    X = _points(1500, 3, seed)
    s = statistical_dimension(X, gamma=0.2, alpha=3.0, n_samples=300, random_state=seed)
    assert s.n_sample == 300 and s.lambda_sample == pytest.approx(3.0 * 300 / 1500)
    S = sample_rows(X, 300, check_random_state(seed))
    exact, tol = _exact(Gaussian(gamma=0.2)(S), s.lambda_sample)
    assert s.interval[0] - tol <= exact <= s.interval[1] + tol


def test_bound_formulas_by_hand():
    eps, delta = 0.05, 0.05
    assert bounds.rff_pointwise(eps, delta) == 2 * math.ceil(2 * math.log(2 / delta) / eps**2)
    # the uniform bound: C_d (sigma l / eps)^(2d/(d+2)) exp(-D eps^2 / (8 (d+2))) = delta
    d, sigma2, ell = 3, 2 * 0.5 * 3, 4.0
    c_d = (1 + 2 / d) * d ** (2 / (d + 2)) * 64 ** (d / (d + 2))
    D = 8 * (d + 2) / eps**2 * math.log(c_d * (math.sqrt(sigma2) * ell / eps) ** (6 / 5) / delta)
    assert bounds.rff_uniform(eps, delta, d, sigma2, ell) == 2 * math.ceil(D / 2)
    assert bounds.rff_uniform(eps, delta, d, math.inf, ell) is None
    # C_d peaks at d = 64: (66 / 64) 64^(2/66 + 64/66) = 66, Sutherland & Schneider's constant
    assert max(bounds.uniform_constant(k) for k in range(1, 500)) <= 66.0 * (1 + 8 * EPS)
    n, lam, s = 5000, 2.0, 80.0
    L = 8 / 3 / eps**2 * (n / lam) * math.log(16 * s / delta)
    assert bounds.rff_spectral(eps, delta, n, lam, s) == 2 * math.ceil(L)
    L = 8 / 3 / eps**2 * s * math.log(16 * s / delta)
    assert bounds.rff_leverage_spectral(eps, delta, s) == 2 * math.ceil(L)
    m = 32 / 3 * min(n, n * 1.0 / (eps * lam)) * math.log(16 * s / delta)
    assert bounds.nystroem_uniform(delta, n, eps * lam, 1.0, s) == math.ceil(m)
    assert bounds.nystroem_leverage(delta, s) == math.ceil(32 / 3 * s * math.log(16 * s / delta))


def test_feature_budget_rows_follow_the_formulas(seed):
    X = _points(700, 3, seed)
    eps, delta, alpha = 0.1, 0.02, 4.0
    budget = feature_budget(
        X, gamma=0.25, alpha=alpha, epsilon=eps, delta=delta, n_samples=350, measure=False,
        random_state=seed,
    )  # fmt: skip
    assert (budget.n_rows, budget.n_sample, budget.gamma) == (700, 350, 0.25)
    assert budget.spectral_second_moment == pytest.approx(2 * 0.25 * 3)
    S = sample_rows(X, 350, check_random_state(seed))
    diameter = max(np.linalg.norm(S[i] - S, axis=1).max() for i in range(len(S)))
    assert budget.diameter == pytest.approx(diameter, rel=1e-12)
    hi, s_nys = budget.statistical_dimension_interval[1], budget.nystroem_dimension
    expected = {
        ("rff", "pointwise (one pair)"): bounds.rff_pointwise(eps, delta),
        ("rff", "uniform (all pairs of the sample)"): bounds.rff_uniform(
            eps, delta, 3, 1.5, budget.diameter
        ),
        ("rff", "Delta-spectral"): bounds.rff_spectral(eps, delta, 700, alpha, hi),
        ("orf", "Delta-spectral (i.i.d. bound)"): bounds.rff_spectral(eps, delta, 700, alpha, hi),
        ("rff-leverage (theory)", "Delta-spectral"): bounds.rff_leverage_spectral(eps, delta, hi),
        ("nystroem-uniform", "Delta-spectral (one-sided)"): bounds.nystroem_uniform(
            delta, 700, eps * alpha, 1.0, s_nys
        ),
        ("nystroem-leverage", "Delta-spectral (one-sided)"): bounds.nystroem_leverage(delta, s_nys),
    }
    table = {(r["method"], r["bound"]): r for r in budget.as_table()}
    assert {k: r["bound_features"] for k, r in table.items()} == expected
    assert all(r["measured_features"] is None for r in table.values())
    # the Nyström dimension is at the smaller ridge epsilon * alpha: a larger s
    assert s_nys >= budget.statistical_dimension_interval[0]
    text = str(budget)
    assert "feature budget: 700 rows (a uniform sample of 350)" in text
    assert "s_alpha(K_n) is estimated by s at alpha * 350 / 700" in text


def test_measured_counts_are_the_first_that_reach_epsilon(seed):
    """The error of the reported ``D`` is at most ``epsilon`` and the one before is above
    it, recomputed here from maps fitted with the seed the budget reports."""
    X = _points(150, 2, seed)
    eps = 0.25
    budget = feature_budget(X, gamma=0.5, alpha=1.0, epsilon=eps, random_state=seed)
    S = sample_rows(X, 2000, check_random_state(seed))
    assert budget.measure_rows == 150
    kernel, seed_ = Gaussian(gamma=0.5), budget.measure_seed
    makers = {
        "rff": lambda D: RandomFourierFeatures(kernel, n_components=D, random_state=seed_),
        "orf": lambda D: RandomFourierFeatures(
            kernel, n_components=D, sampler="orthogonal", random_state=seed_
        ),
        "nystroem-uniform": lambda D: Nystroem(kernel, n_components=D, random_state=seed_),
        "nystroem-leverage": lambda D: Nystroem(
            kernel, n_components=D, landmarks="leverage", random_state=seed_
        ),
    }
    tol = 64 * 150 * EPS
    seen = set()
    for row in budget.rows:
        if row.method not in makers or row.method in seen:
            continue
        seen.add(row.method)
        widths = [D for D, _ in row.measured_errors]
        assert widths == [16 * 2**k for k in range(len(widths))]
        D = row.measured_features
        if D is None:  # the cap: every error above epsilon, the last at the cap
            assert all(e > eps for _, e in row.measured_errors), row
            continue
        assert widths[-1] == D
        assert feature_map_error(makers[row.method](D).fit(S), S, norm="spectral") <= eps + tol
        if D > 16:
            before = feature_map_error(makers[row.method](D // 2).fit(S), S, norm="spectral")
            assert before > eps - tol
    assert seen == set(makers)


def test_kernels_the_bounds_do_not_apply_to():
    X = _points(120, 3, 0)
    poly = feature_budget(X, kernel="poly", alpha=1.0, measure=False, random_state=0)
    rows = {(r.method, r.bound): r.bound_features for r in poly.rows}
    assert rows[("rff", "not applicable")] is None and rows[("orf", "not applicable")] is None
    assert rows[("nystroem-leverage", "Delta-spectral (one-sided)")] > 0
    assert any("not shift-invariant" in note for note in poly.notes)
    lap = feature_budget(X, kernel="laplacian", epsilon=0.6, measure=False, random_state=0)
    rows = {(r.method, r.bound): r.bound_features for r in lap.rows}
    assert rows[("rff", "uniform (all pairs of the sample)")] is None  # E|w|^2 infinite
    assert rows[("rff", "Delta-spectral")] is None  # Delta > 1/2
    assert rows[("orf", "not applicable")] is None  # not radial
    assert rows[("rff", "pointwise (one pair)")] == bounds.rff_pointwise(0.6, 0.05)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"epsilon": 0.0}, "epsilon must be a number in (0, 1)"),
        ({"epsilon": 1.0}, "epsilon must be a number in (0, 1)"),
        ({"delta": 1.5}, "delta must be a number in (0, 1)"),
        ({"alpha": 0.0}, "alpha must be a finite number > 0"),
        ({"alpha": math.inf}, "alpha must be a finite number > 0"),
        ({"n_samples": 1}, "n_samples must be an integer >= 2"),
        ({"n_samples": True}, "n_samples must be an integer >= 2"),
        ({"methods": ["rff", "fastfood"]}, "'rff', 'orf', 'nystroem-uniform', 'nystroem-leverage'"),
        ({"methods": []}, "methods must be a non-empty list"),
        ({"error": "max"}, "error must be 'spectral' or 'frobenius'"),
    ],
)
def test_arguments_refused_in_one_line(kwargs, message):
    with pytest.raises(ValueError) as info:
        feature_budget(np.ones((5, 2)), measure=False, **kwargs)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_data_refused_with_scikit_learns_message():
    X = np.ones((5, 2))
    X[1, 0] = np.nan
    with pytest.raises(ValueError, match="Input X contains NaN") as info:
        feature_budget(X)
    assert "\n" not in str(info.value)
    with pytest.raises(ValueError, match="minimum of 2 is required"):
        statistical_dimension(np.ones((1, 2)))
    with pytest.raises(TypeError, match="kernel must be a kernel name"):
        statistical_dimension(np.ones((3, 2)), kernel=len)


def test_budget_command_on_cpu_act(capsys):
    from kernelmaps.cli import main

    code = main(["budget", "cpu_act", "--samples", "150", "--epsilon", "0.3", "--seed", "3"])
    out = capsys.readouterr()
    assert code == 0, out.err
    lines = out.out.splitlines()
    assert lines[0] == "data: cpu_act: 8192 rows, 21 features, standardised"
    assert lines[1].startswith("kernel: rbf, gamma = ") and "median heuristic" in lines[1]
    assert lines[2].startswith("feature budget: 8192 rows (a uniform sample of 150)")
    header = next(i for i, line in enumerate(lines) if line.startswith("method "))
    methods = [line.split()[0] for line in lines[header + 2 : header + 9]]
    assert methods == ["rff", "rff", "rff", "orf", "rff-leverage", "nystroem-uniform",
                       "nystroem-leverage"]  # fmt: skip
    for command, message in (
        (["--epsilon", "1.5"], "epsilon must be a number in (0, 1)"),
        (["--target", "x"], "has its own target; drop --target"),
    ):
        code = main(["budget", "cpu_act", "--no-measure", *command])
        err = capsys.readouterr().err
        assert code == 2 and message in err and "Traceback" not in err


def test_compare_records_and_prints_the_statistical_dimension(tmp_path, capsys):
    from kernelmaps.cli import main
    from kernelmaps.experiments import DatasetConfig, ExperimentConfig, prepare_data, run_experiment

    dataset = DatasetConfig("cpu_act", n_fit=80, n_eval=30)
    config = ExperimentConfig(datasets=[dataset], methods=["rff-mc"], n_components=[8], seeds=1)
    result = run_experiment(config)
    dims = result.provenance["statistical_dimension"]["cpu_act"]
    gamma = result.provenance["gamma"]["cpu_act/rbf"]
    assert (dims["kernel"], dims["gamma"], dims["alpha"], dims["n_rows"]) == (
        "rbf", gamma, config.alpha, 80
    )  # fmt: skip
    X = prepare_data(dataset).X_fit
    exact, tol = _exact(Gaussian(gamma=gamma)(X), config.alpha)
    assert dims["interval"][0] - tol <= exact <= dims["interval"][1] + tol
    code = main(["compare", "--datasets", "cpu_act", "--methods", "rff-mc", "--n-components",
                 "8", "--seeds", "1", "--n-fit", "80", "--n-eval", "30", "--no-plot",
                 "--output", str(tmp_path)])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    assert "statistical dimension tr(K (K + alpha I)^-1) of the fit rows, Gaussian kernel" in out
    assert f"  cpu_act: {dims['value']:.1f} of 80 rows" in out
