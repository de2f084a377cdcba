"""
A classifier on random features against the exact kernel machine
=================================================================

A linear model on features ``z(x)`` with ``z(x)^T z(y) ~ k(x, y)`` is a kernel machine
with the approximate kernel. This example fits
:class:`~kernelmaps.FeatureRidgeClassifier` (one-vs-rest ridge regression on the
features) on :class:`~kernelmaps.RandomFourierFeatures` and on
:class:`~kernelmaps.Nystroem` features of the Gaussian kernel, for a growing number of
features ``D``, and compares its test accuracy and fit time with two exact kernel
machines on the same kernel: :class:`sklearn.svm.SVC` and kernel ridge classification
(:class:`~kernelmaps.KernelRidge` on the ``-1 / +1`` labels, the sign as prediction).

The data is the bundled ijcnn1 sample (10 000 rows, 22 features, 2 classes, about 9
in 10 rows in the negative class): 4000 random rows for training, 3000 others for
testing.
"""

import time

import matplotlib.pyplot as plt
import numpy as np
from sklearn.svm import SVC

from kernelmaps import FeatureRidgeClassifier, KernelRidge, Nystroem, RandomFourierFeatures
from kernelmaps.datasets import load_ijcnn1

# %%
# The data
# --------
X, y = load_ijcnn1(return_X_y=True)
rng = np.random.default_rng(0)
order = rng.permutation(len(y))
train, test = order[:4000], order[4000:7000]
X_train, y_train, X_test, y_test = X[train], y[train], X[test], y[test]
print(f"training rows {len(train)}, test rows {len(test)}")
print(f"accuracy of always predicting the majority class: {np.mean(y_test == -1):.4f}")

# %%
# The exact kernel machines
# -------------------------
# Every model below uses the same Gaussian kernel ``exp(-gamma |x - y|^2)`` with
# ``gamma = 1`` and, for the ridge models, the penalty ``alpha = 0.01`` (on the scale of
# the sum of squared errors); ``C = 10`` for the SVC. Kernel ridge regression has no
# intercept, so the labels are centred before the fit.
GAMMA, ALPHA = 1.0, 1e-2


def timed_fit(model, X, y):
    """``model`` fitted on ``(X, y)``, and the seconds the fit took."""
    start = time.perf_counter()
    model.fit(X, y)
    return model, time.perf_counter() - start


# One small fit of each kind of model first, so that one-off costs (imports,
# compilation) stay out of the timings.
for model in [
    SVC(gamma=GAMMA),
    KernelRidge(gamma=GAMMA),
    FeatureRidgeClassifier(RandomFourierFeatures(gamma=GAMMA, n_components=64)),
    FeatureRidgeClassifier(Nystroem(gamma=GAMMA, n_components=64)),
]:
    model.fit(X_train[:500], y_train[:500])

svc, svc_time = timed_fit(SVC(C=10.0, gamma=GAMMA), X_train, y_train)
svc_accuracy = svc.score(X_test, y_test)

offset = y_train.mean()
krr, krr_time = timed_fit(KernelRidge(gamma=GAMMA, alpha=ALPHA), X_train, y_train - offset)
krr_accuracy = np.mean(np.where(krr.predict(X_test) + offset >= 0, 1.0, -1.0) == y_test)
print(f"SVC (exact)                  accuracy {svc_accuracy:.4f}   fit {svc_time:6.2f} s")
print(f"kernel ridge (exact)         accuracy {krr_accuracy:.4f}   fit {krr_time:6.2f} s")

# %%
# Ridge classification on features
# --------------------------------
# The features are computed and reduced to ``Z^T Z`` block by block; the fit is one
# pass over the rows and a ``D x D`` solve.
sizes = [128, 256, 512, 1024]
maps = {
    "random Fourier features": lambda D: RandomFourierFeatures(
        gamma=GAMMA, n_components=D, random_state=0
    ),
    "Nyström (uniform)": lambda D: Nystroem(gamma=GAMMA, n_components=D, random_state=0),
}
scores = {name: [] for name in maps}
times = {name: [] for name in maps}
print(f"{'D':>5}" + "".join(f"{name:>34}" for name in maps))
for D in sizes:
    cells = []
    for name, make_map in maps.items():
        model, seconds = timed_fit(
            FeatureRidgeClassifier(make_map(D), alpha=ALPHA), X_train, y_train
        )
        scores[name].append(model.score(X_test, y_test))
        times[name].append(seconds)
        cells.append(f"accuracy {scores[name][-1]:.4f}, {seconds:5.2f} s")
    print(f"{D:>5}" + "".join(f"{c:>34}" for c in cells))

# %%
# The figure
# ----------
# The times are single fits on the machine that built this page.
fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4), layout="constrained")
for name, marker in zip(maps, "os", strict=True):
    left.plot(sizes, scores[name], marker=marker, label=f"{name} + ridge")
    right.plot(sizes, times[name], marker=marker, label=f"{name} + ridge")
for ax, svc_value, krr_value in [
    (left, svc_accuracy, krr_accuracy),
    (right, svc_time, krr_time),
]:
    ax.axhline(svc_value, color="black", linestyle="--", label="SVC (exact)")
    ax.axhline(krr_value, color="gray", linestyle=":", label="kernel ridge (exact)")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("number of features D (landmarks m)")
    ax.grid(True, alpha=0.3)
left.set_ylabel("test accuracy")
right.set_ylabel("fit time (s)")
right.set_yscale("log")
left.legend(fontsize="small")
fig.suptitle("ijcnn1, Gaussian kernel: 4000 training rows")

# %%
# The accuracy of both feature models rises with ``D`` towards that of the exact
# machines, and Nyström features get there with fewer features than random Fourier
# features, as their smaller kernel error on this data predicts. At 4000 rows every
# fit is quick; the costs part as the rows grow: exact kernel ridge regression
# factorises the ``n x n`` kernel matrix in ``O(n^3)`` operations, the SVC's solver
# needs between ``O(n^2)`` and ``O(n^3)``, and the feature models ``O(n D^2)``, linear
# in the number of rows (see
# :ref:`sphx_glr_auto_examples_models_plot_ridge_vs_exact_growing_n.py`).
