"""
Calibrated probabilities on random features: the reliability diagram
=====================================================================

A ridge classifier's decision values are least-squares fits of ``-1 / +1`` labels, not
probabilities. :class:`~kernelmaps.FeatureRidgeClassifier` turns them into probabilities
with a temperature fitted on the exact leave-one-out decision values of its training rows
(each row's value from the model fitted without it), which its fit computes anyway: no
refit. This example compares its probabilities with those of
:class:`~kernelmaps.FeatureLogisticRegression` (the log-loss minimised directly), of
scikit-learn's :class:`~sklearn.calibration.CalibratedClassifierCV` around a
:class:`~sklearn.linear_model.RidgeClassifier` (five refits), and with the naive
probabilities of a sigmoid of the ridge's raw decision values, on the same random Fourier
features: test log-loss, Brier score, expected calibration error
(:func:`kernelmaps.metrics.expected_calibration_error`), fit time, and the reliability
diagram (:func:`kernelmaps.plotting.plot_reliability_diagram`).

The data is the bundled ijcnn1 sample (10 000 rows, 22 features, about 9 in 10 rows in the
negative class): 6000 random rows for training, the other 4000 for testing.
"""

import time

import numpy as np
from matplotlib.figure import Figure
from sklearn.calibration import CalibratedClassifierCV
from sklearn.linear_model import RidgeClassifier
from sklearn.metrics import brier_score_loss, log_loss

from kernelmaps import FeatureLogisticRegression, FeatureRidgeClassifier, RandomFourierFeatures
from kernelmaps.datasets import load_ijcnn1
from kernelmaps.metrics import expected_calibration_error
from kernelmaps.plotting import plot_reliability_diagram

# %%
# The data and the features
# -------------------------
# Every model sees the same features: the Gaussian kernel with ``gamma = 0.5``, ``D = 1024``
# random Fourier features, one random seed.
X, y = load_ijcnn1(return_X_y=True)
order = np.random.default_rng(0).permutation(len(y))
train, test = order[:6000], order[6000:]
X_train, y_train, X_test, y_test = X[train], y[train], X[test], y[test]


def features():
    return RandomFourierFeatures(gamma=0.5, n_components=1024, random_state=0)


rff = features().fit(X_train)
Z_train, Z_test = rff.transform(X_train), rff.transform(X_test)

# %%
# The classifiers
# ---------------
# The ridge classifiers choose their penalty by leave-one-out error; scikit-learn's ridge
# takes the one ours chose. Each fit is timed once.
ALPHAS = np.logspace(-4, 2, 7)


def timed_fit(model, X, y):
    start = time.perf_counter()
    model.fit(X, y)
    return model, time.perf_counter() - start


ridge, ridge_time = timed_fit(FeatureRidgeClassifier(features(), alphas=ALPHAS), X_train, y_train)
plain, plain_time = timed_fit(
    FeatureRidgeClassifier(features(), alphas=ALPHAS, calibration=None), X_train, y_train
)
logit, logit_time = timed_fit(FeatureLogisticRegression(features(), C=10.0), X_train, y_train)
sk_ridge, sk_time = timed_fit(
    CalibratedClassifierCV(RidgeClassifier(alpha=ridge.alpha_), cv=5), Z_train, y_train
)


def sigmoid_of_decision(model, X):
    """The naive probabilities: a sigmoid of the raw decision values, ``[P(-1), P(+1)]``."""
    p = 1.0 / (1.0 + np.exp(-model.decision_function(X)))
    return np.column_stack([1.0 - p, p])


probabilities = {
    "ridge, raw sigmoid": sigmoid_of_decision(plain, X_test),
    "ridge, leave-one-out calibration": ridge.predict_proba(X_test),
    "FeatureLogisticRegression": logit.predict_proba(X_test),
    "CalibratedClassifierCV(ridge), 5 folds": sk_ridge.predict_proba(Z_test),
}
times = [plain_time, ridge_time, logit_time, sk_time]
print(f"{'':40}{'log-loss':>9}{'Brier':>8}{'ECE':>8}{'fit s':>8}")
for (name, P), seconds in zip(probabilities.items(), times, strict=True):
    print(
        f"{name:40}{log_loss(y_test, P):9.4f}"
        f"{brier_score_loss(y_test, P[:, 1], pos_label=1):8.4f}"
        f"{expected_calibration_error(y_test, P):8.4f}{seconds:8.2f}"
    )
print(f"fit with probabilities / without: {ridge_time / plain_time:.2f}")

# %%
# The reliability diagram
# -----------------------
# Each point is a bin of test rows with about the same predicted probability of the
# positive class: its observed frequency against its mean probability. Calibrated
# probabilities lie on the diagonal; the bars give each bin's share of the rows (most rows
# are confidently negative). The ECE in the legends is that of the positive class's
# column, the curve drawn; the table's is top-label.
fig = Figure(figsize=(9.5, 4.4), layout="constrained")
left, right = fig.subplots(1, 2)
for name, P in probabilities.items():
    ax = left if name.startswith("ridge,") else right
    plot_reliability_diagram(y_test, P, n_bins=10, column=1, ax=ax, label=name)
left.set_title("ridge: raw sigmoid against leave-one-out calibration", fontsize=9)
right.set_title("log-loss fit and scikit-learn's five refits", fontsize=9)

# %%
# The sigmoid of the raw decision values is far from the diagonal: least-squares scores of
# ``-1 / +1`` labels are not log-odds. Calibrated on the leave-one-out decision values, the
# same ridge fit lies near the diagonal, and its fit costs about what the fit without
# probabilities costs (the ratio printed above: the temperature is fitted on ``n`` numbers
# the fit computed anyway), where ``CalibratedClassifierCV`` fits the ridge five more times.
