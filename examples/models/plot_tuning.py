"""
Choosing the bandwidth, the penalty and the number of features
==============================================================

A model on random features has three settings: the kernel's bandwidth ``gamma``, the
ridge penalty ``alpha`` and the number of features ``D``.
:class:`~kernelmaps.FeatureRidgeCV` chooses all three from one pass over the rows per
batch of bandwidths: every ``D`` of ``n_components_grid`` is a block of the statistics of
the largest map, and every ``alpha`` comes from one eigendecomposition. Its default
criterion is the exact leave-one-out error. :func:`~kernelmaps.feature_budget` then says
how many features the theory asks for at the chosen ``gamma`` and ``alpha``, next to the
statistical dimension of the data and the number of features measured to reach a given
kernel error.

The data is the bundled cpu_act (8192 rows, 21 activity counters of a computer, the
target the share of time in user mode), standardised, with 2000 rows held out.
"""

import time

import matplotlib.pyplot as plt
import numpy as np
from sklearn.preprocessing import StandardScaler

from kernelmaps import FeatureRidge, FeatureRidgeCV, RandomFourierFeatures, feature_budget
from kernelmaps.bandwidth import gamma_from_data
from kernelmaps.datasets import load_california_housing, load_cpu_act

# %%
# The data
# --------
X, y = load_cpu_act(return_X_y=True)
rng = np.random.default_rng(0)
order = rng.permutation(len(y))
test, train = order[:2000], order[2000:]
X = StandardScaler().fit(X[train]).transform(X)
X_train, y_train, X_test, y_test = X[train], y[train], X[test], y[test]

# %%
# The search
# ----------
# ``gammas="auto"`` (the default) starts from nine bandwidths spanning two decades either
# side of the data's bandwidth rule, extends the grid past an end where the best lies, and
# refines it by golden-section steps; ``alphas="auto"`` spans thirteen decades relative to
# the largest eigenvalue of each Gram matrix. ``search="exhaustive"`` scores every
# bandwidth on every row, to draw the whole curve below; the default search, successive
# halving, is at the end.
search = FeatureRidgeCV(
    RandomFourierFeatures(n_components=512, random_state=0),
    n_components_grid=[64, 128, 256, 512],
    search="exhaustive",
).fit(X_train, y_train)
print(f"candidates scored: {len(search.cv_results_['params'])}")
print(
    f"chosen: gamma = {search.gamma_:.3g}, alpha = {search.alpha_:.3g}, D = {search.n_components_}"
)
print(f"leave-one-out mean squared error: {-search.best_score_:.3f}")
print(f"test R^2 of the chosen model:     {search.score(X_test, y_test):.4f}")

# %%
# For comparison, the untuned bandwidth: the median heuristic, with only ``alpha`` chosen
# (by leave-one-out, among the same thirteen decades) at the largest ``D``.
gamma_median = gamma_from_data(X_train, "median")
untuned = FeatureRidge(
    RandomFourierFeatures(gamma=gamma_median, n_components=512, random_state=0),
    alphas=np.logspace(-9, 3, 13),
).fit(X_train, y_train)
print(f"median heuristic: gamma = {gamma_median:.3g}, alpha = {untuned.alpha_:.3g}")
print(f"test R^2 with the median heuristic: {untuned.score(X_test, y_test):.4f}")

# %%
# The curves
# ----------
# ``cv_results_`` holds every candidate, as the table of scikit-learn's ``GridSearchCV``.
# The score is minus the leave-one-out error, drawn here as the error: on the left the
# best over ``alpha`` for each ``gamma`` and ``D``, on the right every ``alpha`` at the
# chosen ``gamma`` and ``D``.
results = search.cv_results_
gammas = np.asarray(results["param_gamma"], dtype=float)
alphas = np.asarray(results["param_alpha"], dtype=float)
widths = np.asarray(results["param_n_components"], dtype=int)
errors = -np.asarray(results["mean_test_score"], dtype=float)

fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4), layout="constrained")
for D in sorted(set(widths)):
    grid = np.unique(gammas[widths == D])
    best = [errors[(widths == D) & (gammas == g)].min() for g in grid]
    left.plot(grid, best, marker="o", markersize=3, label=f"D = {D}")
left.axvline(gamma_median, color="gray", linestyle=":", label="median heuristic")
left.set_xlabel("gamma")
left.legend(fontsize="small")
chosen = (gammas == search.gamma_) & (widths == search.n_components_)
order_alpha = np.argsort(alphas[chosen])
right.plot(alphas[chosen][order_alpha], errors[chosen][order_alpha], marker="o", markersize=3)
right.set_xlabel(f"alpha (gamma = {search.gamma_:.3g}, D = {search.n_components_})")
for ax in (left, right):
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylabel("leave-one-out mean squared error")
    ax.grid(True, which="major", alpha=0.3)
fig.suptitle("cpu_act: FeatureRidgeCV on random Fourier features")

# %%
# How many features?
# ------------------
# :func:`~kernelmaps.feature_budget` estimates the statistical dimension
# ``s = tr(K (K + alpha I)^{-1})`` of the training rows' kernel matrix at the chosen
# ``gamma`` and ``alpha`` (from a sample of 2000 rows), the number of features each bound
# of the literature asks for, and the number each map needs to reach a relative spectral
# error of 5 % on a sample, measured.
budget = feature_budget(
    X_train, gamma=search.gamma_, alpha=search.alpha_, epsilon=0.05, random_state=0
)
print(f"statistical dimension: {budget.statistical_dimension:.1f}")
print(f"{'method':<24}{'bound':<36}{'D (bound)':>18}{'D (measured)':>14}")
for row in budget.rows:
    bound = "-" if row.bound_features is None else f"{row.bound_features:.3g}"
    measured = "-" if row.measured_features is None else str(row.measured_features)
    print(f"{row.method:<24}{row.bound:<36}{bound:>18}{measured:>14}")

# %%
# The error falls with ``D`` at every bandwidth, and the best bandwidth lies far below
# the median heuristic, where the Gaussian kernel is smooth over the whole data set and
# a small penalty fits this data best; the held-out rows confirm the choice. The bounds
# ask for far more features than the largest ``D`` of the grid, where the error is still
# falling, and the measured kernel error is a different target again: it is reached with
# a handful of features at so smooth a kernel, while the prediction still improves with
# ``D``. Take the
# statistical dimension as the order of magnitude of ``D`` worth trying, and the
# cross-validation curve to settle it.

# %%
# The default search: successive halving
# --------------------------------------
# Most of those bandwidths are far from the best, and where the best lies moves little
# with the number of rows and of features on most data. The default,
# ``search="halving"``, scores every bandwidth on a uniform sample of the rows with a map
# of fewer features, the best and its neighbours on more, refines the best there, and
# scores only the best bandwidth on every row with every ``D`` of the grid, where
# ``alpha`` and ``D`` are chosen. Data of fewer than 9000 rows (cpu_act above) are
# searched exhaustively: there a sample's curve need not keep the full one's shape. On
# California housing (20 640 rows, 4000 held out) ``cv_results_`` records each
# candidate's rung, rows and ``fidelity`` (its cost as a share of a full pass).
Xc, yc = load_california_housing(return_X_y=True)
order = np.random.default_rng(0).permutation(len(yc))
test_c, train_c = order[:4000], order[4000:]
Xc = StandardScaler().fit(Xc[train_c]).transform(Xc)
fits = {}
for how in ("exhaustive", "halving"):
    start = time.perf_counter()
    fits[how] = FeatureRidgeCV(
        RandomFourierFeatures(n_components=512, random_state=0),
        n_components_grid=[128, 256, 512],
        search=how,
    ).fit(Xc[train_c], yc[train_c])
    seconds = time.perf_counter() - start
    fitted = fits[how]
    print(
        f"{how:<11} {seconds:5.1f} s  gamma = {fitted.gamma_:.3g}, alpha = {fitted.alpha_:.3g}, "
        f"D = {fitted.n_components_}, test R^2 {fitted.score(Xc[test_c], yc[test_c]):.4f}"
    )
rungs = fits["halving"].cv_results_
for r in np.unique(rungs["rung"]):
    mine = rungs["rung"] == r
    print(
        f"rung {r}: {rungs['param_n_rows'][mine][0]} rows, "
        f"{len(set(rungs['param_gamma'][mine]))} bandwidths, fidelity "
        f"{rungs['fidelity'][mine][0]:.3f}"
    )

fig, ax = plt.subplots(figsize=(6, 4), layout="constrained")
full = fits["exhaustive"].cv_results_
curves = [("exhaustive, every row", full, np.ones(len(full["params"]), dtype=bool))]
for r in np.unique(rungs["rung"]):
    mine = rungs["rung"] == r
    curves.append((f"rung {r}: {rungs['param_n_rows'][mine][0]} rows", rungs, mine))
for name, res, mask in curves:
    g = np.asarray(res["param_gamma"][mask], dtype=float)
    e = -np.asarray(res["mean_test_score"][mask], dtype=float)
    grid = np.unique(g)
    ax.plot(grid, [e[g == x].min() for x in grid], marker="o", markersize=4, label=name)
ax.set_xscale("log")
ax.set_yscale("log")
ax.set_xlabel("gamma")
ax.set_ylabel("leave-one-out mean squared error")
ax.legend(fontsize="small")
ax.set_title("California housing: the rungs of the halving search")

# %%
# The low rungs' errors are higher (fewer rows, fewer features) but their minimum lies
# near the full curve's, so the full size is spent on one bandwidth.
