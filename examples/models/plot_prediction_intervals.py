"""
Prediction intervals without refits: jackknife+ against split conformal
=======================================================================

:meth:`~kernelmaps.FeatureRidge.predict_interval` gives conformal intervals by jackknife+
(Barber, Candès, Ramdas & Tibshirani 2021): the interval of a new row is made of the
predictions of the models fitted without each scored training row, widened by that row's
leave-one-out residual. A ridge fit has those models in closed form (the leave-one-out
update of the factor it has already computed), so no model is refitted. Split conformal
(Lei et al. 2018) fits the model on one half of the rows and takes the quantile of the
other half's residuals: no refit either, but half the rows for the model and a width
that is the same at every row.

This example fits :class:`~kernelmaps.FeatureRidge` on random Fourier features to the
bundled California housing data (8 features, median house values in 100 000 $) and
compares, on the held-out rows, the coverage and width of jackknife+, of split conformal
and of the Gaussian bands ``mean ± z std`` of ``predict(X, return_std=True)``.
"""

import numpy as np
from matplotlib.figure import Figure
from scipy.stats import norm

from kernelmaps import FeatureRidge, RandomFourierFeatures
from kernelmaps.bandwidth import gamma_from_data
from kernelmaps.datasets import load_california_housing

# %%
# The data and the model
# ----------------------
# 8000 random rows for training, the other 12 640 held out; the features standardized
# with the training rows' means and deviations. The Gaussian kernel's ``gamma`` is the
# median heuristic's, the penalty is chosen by exact leave-one-out.
X, y = load_california_housing(return_X_y=True)
order = np.random.default_rng(0).permutation(len(y))
train, test = order[:8000], order[8000:]
mu, sd = X[train].mean(axis=0), X[train].std(axis=0)
X = (X - mu) / sd
X_train, y_train, X_test, y_test = X[train], y[train], X[test], y[test]


def model():
    features = RandomFourierFeatures(
        gamma=gamma_from_data(X_train, "median"), n_components=1024, random_state=0
    )
    return FeatureRidge(features, alphas=np.logspace(-4, 2, 7))


ridge = model().fit(X_train, y_train)
mean, std = ridge.predict(X_test, return_std=True)
print(f"alpha {ridge.alpha_:g}, noise variance {ridge.noise_variance_:.3f}, "
      f"test RMSE {np.sqrt(np.mean((y_test - mean) ** 2)):.3f}")  # fmt: skip

# %%
# Split conformal, on the same model
# ----------------------------------
# Fitted on a random half of the training rows; the other half's absolute residuals give
# the half-width, their ``ceil(c (m + 1))``-th smallest for coverage ``c``.
half = np.random.default_rng(1).permutation(len(y_train))
fit_rows, cal_rows = half[:4000], half[4000:]
split_model = model().fit(X_train[fit_rows], y_train[fit_rows])
scores = np.sort(np.abs(y_train[cal_rows] - split_model.predict(X_train[cal_rows])))
split_centre = split_model.predict(X_test)


def split_interval(coverage):
    q = scores[int(np.ceil(coverage * (len(scores) + 1))) - 1]
    return split_centre - q, split_centre + q


def gaussian_interval(coverage):
    z = norm.ppf(0.5 + coverage / 2)
    return mean - z * std, mean + z * std


methods = {
    "jackknife+ (predict_interval)": lambda c: ridge.predict_interval(X_test, coverage=c),
    "split conformal, 50 %": split_interval,
    "Gaussian, mean ± z std": gaussian_interval,
}

# %%
# Coverage and width
# ------------------
nominal = np.array([0.5, 0.6, 0.7, 0.8, 0.9, 0.95])
coverage, width = {}, {}
for name, interval in methods.items():
    bounds = [interval(c) for c in nominal]
    coverage[name] = [np.mean((y_test >= lo) & (y_test <= hi)) for lo, hi in bounds]
    width[name] = [np.mean(hi - lo) for lo, hi in bounds]
print(f"{'':32}" + "".join(f"{f'{c:.0%}':>14}" for c in nominal[-3:]))
for name in methods:
    pairs = zip(coverage[name][-3:], width[name][-3:], strict=True)
    cells = "".join(f"{c:8.1%} {w:5.2f}" for c, w in pairs)
    print(f"{name:32}{cells}   (coverage, mean width)")

# %%
# Marginal, not conditional
# -------------------------
# The guarantee is over new rows drawn like the training rows, not for every ``x``: by the
# quintile of the predicted value, the 90 % intervals cover some groups more than others.
lower, upper = ridge.predict_interval(X_test, coverage=0.9)
quintile = np.searchsorted(np.quantile(mean, [0.2, 0.4, 0.6, 0.8]), mean)
covered = (y_test >= lower) & (y_test <= upper)
print("90 % jackknife+ coverage by quintile of the prediction:",
      " ".join(f"{covered[quintile == k].mean():.1%}" for k in range(5)))  # fmt: skip

# %%
# The figure
# ----------
# Left: the empirical coverage of each method against the nominal one (the diagonal is
# exact). Right: 60 held-out rows sorted by their prediction, with the 90 % jackknife+
# interval and the 90 % Gaussian band.
fig = Figure(figsize=(10, 4.2), layout="constrained")
left, right = fig.subplots(1, 2)
for name in methods:
    left.plot(nominal, coverage[name], marker="o", label=name)
left.plot([0.45, 1.0], [0.45, 1.0], color="grey", linestyle=":", label="exact")
left.set_xlabel("nominal coverage")
left.set_ylabel("coverage of the held-out rows")
left.grid(True, alpha=0.3)
left.legend(fontsize=8)

shown = np.sort(np.random.default_rng(2).choice(len(y_test), size=60, replace=False))
shown = shown[np.argsort(mean[shown])]
at = np.arange(len(shown))
g_low, g_high = gaussian_interval(0.9)
right.fill_between(at, g_low[shown], g_high[shown], color="C2", alpha=0.25,
                   label="Gaussian 90 % band")  # fmt: skip
right.errorbar(at, mean[shown], yerr=[mean[shown] - lower[shown], upper[shown] - mean[shown]],
               fmt="none", ecolor="C0", alpha=0.7, label="jackknife+ 90 %")  # fmt: skip
right.plot(at, y_test[shown], "k.", label="observed")
right.set_xlabel("held-out rows, by prediction")
right.set_ylabel("median house value (100 000 $)")
right.legend(fontsize=8)

# %%
# Both conformal methods cover close to the nominal rate at every level, as their
# guarantees (at least ``1 - 2 (1 - c)`` for jackknife+, ``c`` for split conformal) and the
# exchangeability of random rows lead one to expect; each is off by about its sampling
# error, about ``sqrt(c (1 - c) / m)`` for ``m`` scores: jackknife+ scores a fixed sample of
# 1024 training rows here (a tenth of the rows, at least 1024 and at most 4096), split
# conformal the 4000 rows of its second half, so its coverage is the closer one and its
# width the smaller one on this data; jackknife+'s model is the one fitted on every row,
# the model the user keeps. The Gaussian bands assume Gaussian noise of one variance:
# they cover far too much at 80 % and a little too little at 95 %, as heavy-tailed
# residuals make them (the values are capped at 5, and the noise grows with the price).
# And the coverage is
# marginal: by quintile of the prediction, the 90 % intervals cover the cheap houses more
# and the dear ones less, since their width hardly varies with ``x`` while the noise does.
