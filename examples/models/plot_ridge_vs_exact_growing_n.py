"""
Ridge on features against exact kernel ridge regression as the rows grow
========================================================================

Exact kernel ridge regression (:class:`~kernelmaps.KernelRidge`) solves
``(K + alpha I) c = y`` with the ``n x n`` kernel matrix: ``O(n^2)`` memory and
``O(n^3)`` time. Two approximations of the same model scale linearly in ``n``:

* :class:`~kernelmaps.FeatureRidge` on ``D`` random Fourier features: ``O(n D^2)`` time,
  ``O(D^2)`` memory;
* :class:`~kernelmaps.NystroemKernelRidge` with ``m`` landmarks, solved by FALKON's
  preconditioned conjugate gradient: ``O(n m)`` per iteration, ``O(m^2)`` memory.

This example fits all three on a growing number of rows of the bundled California
housing data and measures the fit time and the error on 4000 held-out rows. The exact
model stops at 4000 rows, where its kernel matrix already takes 128 MB.
"""

import time

import matplotlib.pyplot as plt
import numpy as np
from sklearn.preprocessing import StandardScaler

from kernelmaps import FeatureRidge, KernelRidge, NystroemKernelRidge, RandomFourierFeatures
from kernelmaps.datasets import load_california_housing

# %%
# The data
# --------
# The features are standardised with the statistics of the training pool; the target
# (median house value, in 100 000 dollars) is centred for each fit, since
# ``KernelRidge`` and ``NystroemKernelRidge`` have no intercept.
X, y = load_california_housing(return_X_y=True)
rng = np.random.default_rng(0)
order = rng.permutation(len(y))
test, pool = order[:4000], order[4000:]
scaler = StandardScaler().fit(X[pool])
X = scaler.transform(X)
print(f"{len(pool)} rows to train on, {len(test)} test rows, {X.shape[1]} features")

# %%
# The models
# ----------
# All three use the Gaussian kernel with ``gamma = 0.3`` and the penalty
# ``alpha = 1e-4 n``, which keeps the penalty of the mean squared error fixed as ``n``
# grows. ``D = 1000`` random features, ``m = 500`` landmarks.
GAMMA = 0.3


def make_models(n):
    alpha = 1e-4 * n
    return {
        "KernelRidge (exact)": KernelRidge(gamma=GAMMA, alpha=alpha),
        "FeatureRidge, RFF D = 1000": FeatureRidge(
            RandomFourierFeatures(gamma=GAMMA, n_components=1000, random_state=0), alpha=alpha
        ),
        "NystroemKernelRidge, m = 500": NystroemKernelRidge(
            gamma=GAMMA, n_components=500, alpha=alpha, random_state=0
        ),
    }


# One small fit of each model first, so that one-off costs (imports, compilation)
# stay out of the timings.
for model in make_models(600).values():
    model.fit(X[pool[:600]], y[pool[:600]])

# %%
# Fits on 1000 to 16 000 rows
# ---------------------------
sizes = [1000, 2000, 4000, 8000, 16000]
fit_time = {name: {} for name in make_models(1)}
rmse = {name: {} for name in make_models(1)}
for n in sizes:
    train = pool[:n]
    offset = y[train].mean()
    for name, model in make_models(n).items():
        if name.startswith("KernelRidge") and n > 4000:
            continue
        start = time.perf_counter()
        model.fit(X[train], y[train] - offset)
        fit_time[name][n] = time.perf_counter() - start
        residual = model.predict(X[test]) + offset - y[test]
        rmse[name][n] = float(np.sqrt(np.mean(residual**2)))

print(f"{'n':>6}" + "".join(f"{name:>32}" for name in fit_time))
for n in sizes:
    cells = [
        f"{rmse[name][n]:.4f} / {fit_time[name][n]:6.3f} s" if n in rmse[name] else "-"
        for name in fit_time
    ]
    print(f"{n:>6}" + "".join(f"{c:>32}" for c in cells))

# %%
# The figure
# ----------
# Fit time on log-log axes (a slope of 1 is linear in ``n``, 3 cubic) and the test
# root mean squared error. The times are single fits on the machine that built this
# page.
fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4), layout="constrained")
for (name, times), marker in zip(fit_time.items(), "osD", strict=True):
    ns = sorted(times)
    left.plot(ns, [times[n] for n in ns], marker=marker, label=name)
    right.plot(ns, [rmse[name][n] for n in ns], marker=marker, label=name)
left.set_xscale("log")
left.set_yscale("log")
left.set_ylabel("fit time (s)")
right.set_xscale("log")
right.set_ylabel("test RMSE (100 000 dollars)")
for ax in (left, right):
    ax.set_xlabel("training rows n")
    ax.grid(True, which="both", alpha=0.3)
right.legend(fontsize="small")
fig.suptitle("California housing, Gaussian kernel")

# %%
# Where all three run, the exact model has the smallest error and the approximations
# are a little above it, the price of 1000 features or 500 landmarks. With the rows the
# exact model cannot afford, their error keeps falling, to about the exact model's at
# 4000 rows. The exact fit time climbs steeply, its ``O(n^3)`` factorisation dominating
# from a few thousand rows, while the fit times of the approximations grow slowly, at
# most linearly in ``n``.
