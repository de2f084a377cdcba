"""Kernel approximation error metrics, and their block-wise evaluation."""

from __future__ import annotations

import numpy as np
import pytest

from kernelmaps import RandomFourierFeatures, feature_map_error, kernel_approximation_error
from kernelmaps.kernels import Gaussian

RNG = np.random.default_rng(0)
X = RNG.normal(size=(300, 5))
Y = RNG.normal(size=(40, 5))


def _direct(rff, A, B, norm):
    K = Gaussian(0.2)(A, B)
    E = K - rff.transform(A) @ rff.transform(B).T
    if norm == "fro":
        return np.linalg.norm(E) / np.linalg.norm(K)
    if norm == "max":
        return np.abs(E).max() / np.abs(K).max()
    return np.linalg.norm(E, 2) / np.linalg.norm(K, 2)


@pytest.mark.parametrize("norm", ["fro", "max", "spectral"])
@pytest.mark.parametrize("block_rows", [None, 32])
def test_feature_map_error_matches_direct_computation(norm, block_rows) -> None:
    rff = RandomFourierFeatures(gamma=0.2, n_components=64, random_state=0).fit(X)
    direct = _direct(rff, X, X, norm)
    blocked = feature_map_error(rff, X, norm=norm, block_rows=block_rows)
    np.testing.assert_allclose(blocked, direct, rtol=1e-5 if norm == "spectral" else 1e-10)
    rect = feature_map_error(rff, X, Y, norm=norm, block_rows=block_rows)
    rtol = 1e-5 if norm == "spectral" else 1e-10
    np.testing.assert_allclose(rect, _direct(rff, X, Y, norm), rtol=rtol)


def test_absolute_errors_and_explicit_kernel() -> None:
    rff = RandomFourierFeatures(gamma=0.2, n_components=32, random_state=0).fit(X)
    K = Gaussian(0.2)(X[:50])
    Z = rff.transform(X[:50])
    absolute = feature_map_error(rff, X[:50], relative=False, kernel=Gaussian(0.2))
    np.testing.assert_allclose(absolute, np.linalg.norm(K - Z @ Z.T))
    np.testing.assert_allclose(kernel_approximation_error(K, Z @ Z.T, relative=False), absolute)


def test_kernel_approximation_error_norms() -> None:
    K = np.array([[2.0, 1.0], [1.0, 2.0]])
    A = np.array([[2.0, 0.0], [0.0, 2.0]])
    assert kernel_approximation_error(K, A, norm="max") == pytest.approx(0.5)
    assert kernel_approximation_error(K, A, norm="fro") == pytest.approx(np.sqrt(2) / np.sqrt(10))
    assert kernel_approximation_error(K, A, norm="spectral") == pytest.approx(1 / 3)
    assert kernel_approximation_error(K, K) == 0.0


def test_metric_errors() -> None:
    K = np.eye(3)
    with pytest.raises(ValueError, match=r"norm must be one of"):
        kernel_approximation_error(K, K, norm="nuclear")
    with pytest.raises(ValueError, match=r"K has shape"):
        kernel_approximation_error(K, np.eye(2))
    with pytest.raises(ValueError, match=r"use relative=False"):
        kernel_approximation_error(np.zeros((2, 2)), np.eye(2))
    with pytest.raises(ValueError, match=r"K_approx contains NaN"):
        kernel_approximation_error(K, np.full((3, 3), np.nan))

    class NoKernel:
        def transform(self, X):
            return X

    with pytest.raises(ValueError, match=r"no fitted kernel_; pass kernel="):
        feature_map_error(NoKernel(), X[:5])


@pytest.mark.parametrize("block_rows", [None, 7, 32])
@pytest.mark.parametrize("rectangular", [False, True])
@pytest.mark.parametrize("relative", [True, False])
def test_errors_from_features_equal_feature_map_error_exactly(block_rows, rectangular, relative):
    from kernelmaps.metrics import kernel_errors_from_features

    A = X[:60]
    B = Y if rectangular else None
    rff = RandomFourierFeatures(gamma=0.2, n_components=32, random_state=0).fit(A)
    Zb = None if B is None else rff.transform(B)
    norms = ("max", "spectral", "fro")
    errors = kernel_errors_from_features(
        rff.kernel_, A, rff.transform(A), B, Zb, norms=norms, relative=relative,
        block_rows=block_rows,
    )  # fmt: skip
    assert list(errors) == list(norms)
    for norm in norms:
        one = feature_map_error(rff, A, B, norm=norm, relative=relative, block_rows=block_rows)
        assert errors[norm] == one  # the same arithmetic, not merely close


def test_errors_from_features_input_errors():
    from kernelmaps.metrics import kernel_errors_from_features

    rff = RandomFourierFeatures(gamma=0.2, n_components=8, random_state=0).fit(X[:10])
    Z = rff.transform(X[:10])
    with pytest.raises(ValueError, match="without its features Z_y"):
        kernel_errors_from_features(rff.kernel_, X[:10], Z, Y[:5])
    with pytest.raises(ValueError, match="without its rows Y"):
        kernel_errors_from_features(rff.kernel_, X[:10], Z, Z_y=Z)
    with pytest.raises(ValueError, match="norm must be one of"):
        kernel_errors_from_features(rff.kernel_, X[:10], Z, norms=("fro", "nuclear"))


# -- calibration -------------------------------------------------------------------------


def _brute_force_ece(y, P, edges, columns):
    """The binned gap by loops over the rows, straight from the definition: bin ``b`` is
    ``(edges[b], edges[b + 1]]``, the first one closed on the left."""
    n, gaps = len(y), []
    for column in columns:
        total = 0.0
        for b in range(len(edges) - 1):
            rows, hits, confidences = 0, 0.0, 0.0
            for i in range(n):
                p = max(P[i]) if column is None else P[i][column]
                chosen = list(P[i]).index(max(P[i])) if column is None else column
                low_ok = p > edges[b] or (b == 0 and p >= edges[0])
                if low_ok and (p <= edges[b + 1] or b == len(edges) - 2):
                    rows += 1
                    confidences += p
                    hits += float(y[i] == chosen)
            if rows:
                total += rows / n * abs(hits / rows - confidences / rows)
        gaps.append(total)
    return sum(gaps) / len(gaps)


def test_ece_hand_computed_cases():
    from kernelmaps.metrics import expected_calibration_error as ece

    y = [0, 1, 1, 0]
    P = [[0.9, 0.1], [0.2, 0.8], [0.4, 0.6], [0.7, 0.3]]
    # top label: every row right, mean confidence (0.9 + 0.8 + 0.6 + 0.7) / 4 = 0.75
    assert ece(y, P, n_bins=2) == pytest.approx(0.25, abs=1e-15)
    assert ece(y, P, n_bins=1) == pytest.approx(0.25, abs=1e-15)
    # classwise, class 1: bins {0.1, 0.3} (0.2 vs 0) and {0.8, 0.6} (0.7 vs 1): 0.25
    assert ece(y, P, n_bins=2, kind="classwise") == pytest.approx(0.25, abs=1e-15)
    # 1-D P(classes[1]) is the two-column form
    assert ece(y, [0.1, 0.8, 0.6, 0.3], n_bins=2) == ece(y, P, n_bins=2)
    # weights: the row weighted 3 counts three times
    repeated = ece([0, 1, 1, 0, 0, 0], P + [[0.7, 0.3]] * 2, n_bins=5)
    assert ece(y, P, n_bins=5, sample_weight=[1, 1, 1, 3]) == pytest.approx(repeated, abs=1e-15)
    # string classes and a class with no row (labels=)
    P3 = [[0.5, 0.3, 0.2], [0.1, 0.1, 0.8]]
    value = ece(["a", "c"], P3, n_bins=10, labels=["a", "b", "c"])
    assert value == pytest.approx((0.5 + 0.2) / 2, abs=1e-15)  # bins 0.5 and 0.8, both right


def test_equal_mass_bins_hold_equal_counts():
    from kernelmaps.metrics import reliability_bins

    confidence = np.linspace(0.05, 0.95, 100)
    bins = reliability_bins(np.ones(100, int), confidence, n_bins=4, strategy="quantile",
                            labels=[0, 1], column=1)  # fmt: skip
    np.testing.assert_array_equal(bins.weight, [0.25] * 4)
    np.testing.assert_allclose(bins.edges[1:-1], np.quantile(confidence, [0.25, 0.5, 0.75],
                                                             method="inverted_cdf"))  # fmt: skip
    assert np.all(bins.accuracy == 1.0)


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
@pytest.mark.parametrize("kind", ["top_label", "classwise"])
def test_ece_agrees_with_a_brute_force_loop(seed, strategy, kind):
    from kernelmaps.metrics import expected_calibration_error, reliability_bins

    rng = np.random.default_rng(seed)
    P = rng.dirichlet([0.5, 1.0, 2.0], size=200)
    y = rng.integers(0, 3, size=200)
    n_bins = 7
    columns = [None] if kind == "top_label" else [0, 1, 2]
    expected = 0.0
    for column in columns:
        edges = reliability_bins(y, P, n_bins=n_bins, strategy=strategy, column=column).edges
        expected += _brute_force_ece(y, P.tolist(), edges.tolist(), [column]) / len(columns)
    value = expected_calibration_error(y, P, n_bins=n_bins, strategy=strategy, kind=kind)
    # the same sums in another order: within rounding, eps times the number of terms
    assert value == pytest.approx(expected, abs=200 * np.finfo(float).eps)


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_calibrated_probabilities_have_a_small_ece(seed, strategy):
    """Labels drawn from the probabilities themselves: given the confidences, the hits
    of bin ``b`` are independent Bernoulli(confidence) draws, so by Hoeffding and a union
    bound over the bins, with probability at least 1 - DELTA every bin's gap is at most
    ``sqrt(log(2 B / DELTA) / (2 n_b))`` and the ECE at most the weighted sum of those.
    The bins depend on the confidences only, not on the labels."""
    from kernelmaps.metrics import expected_calibration_error, reliability_bins
    from tests._bounds import DELTA, hoeffding_radius

    rng = np.random.default_rng(seed)
    n, n_bins = 20_000, 15
    P = rng.dirichlet([1.0, 1.0, 1.0, 1.0], size=n)
    y = (rng.random(n)[:, None] > np.cumsum(P, axis=1)).sum(axis=1)  # y ~ Categorical(P)
    bins = reliability_bins(y, P, n_bins=n_bins, strategy=strategy)
    counts = np.rint(bins.weight * n).astype(int)
    bound = sum(c / n * hoeffding_radius(c, 1.0, n_bins, DELTA) for c in counts if c)
    assert expected_calibration_error(y, P, n_bins=n_bins, strategy=strategy) <= bound
    assert bound < 0.1  # the bound itself says something at this n


def test_ece_input_errors():
    from kernelmaps.metrics import expected_calibration_error as ece

    P = [[0.9, 0.1], [0.2, 0.8]]
    for bad, message in [
        ({"y_prob": [[0.9, 0.2], [0.2, 0.8]]}, "sum to 1 only within"),
        ({"y_prob": [[1.2, -0.2], [0.2, 0.8]]}, r"outside \[0, 1\]"),
        ({"y_prob": [[0.5], [0.5]]}, "one column per class"),
        ({"y_prob": [0.5, 0.5, 0.5]}, "y_true has 2 rows but y_prob has 3"),
        ({"n_bins": 0}, "n_bins must be an integer >= 1"),
        ({"strategy": "equal"}, "strategy must be one of"),
        ({"kind": "marginal"}, "kind must be one of"),
        ({"labels": [0, 2]}, "the class 1, not among labels"),
        ({"y_prob": [[0.5, 0.3, 0.2], [0.2, 0.2, 0.6]]}, "give every class"),
        ({"sample_weight": [-1, 1]}, "non-negative"),
    ]:
        kwargs = {"y_prob": P} | bad
        with pytest.raises(ValueError, match=message) as info:
            ece([0, 1], **kwargs)
        assert "\n" not in str(info.value)


def test_ece_float32_and_binary_column_agree():
    from kernelmaps.metrics import expected_calibration_error as ece

    rng = np.random.default_rng(0)
    p = rng.random(500)
    y = (rng.random(500) < p).astype(int)
    P = np.column_stack([1 - p, p])
    assert ece(y, P.astype(np.float32)) == pytest.approx(ece(y, P), abs=1e-6)
    assert ece(y, p, kind="classwise") == pytest.approx(ece(y, P, kind="classwise"), abs=1e-15)
