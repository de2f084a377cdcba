"""
On a GPU with PyTorch
=====================

kernelmaps runs on GPUs through the Python array API standard, as scikit-learn does:
with scikit-learn's array API switch on, every estimator but random binning runs where
its input lives, and a PyTorch tensor on ``"cuda"`` is fitted on the GPU. Nothing of
kernelmaps is compiled for it.

This example fits random Fourier features, :class:`~kernelmaps.FeatureRidge` and
:class:`~kernelmaps.NystroemKernelRidge` on tensors on the GPU, moves a fitted model to
NumPy with :func:`~kernelmaps.move_to`, and streams NumPy rows through the GPU with
``device=``.

.. note::

   This example is not run when the documentation is built, which has no GPU: it is
   shown without its output. It needs PyTorch with CUDA (``pip install kernelmaps
   torch``); with ``DEVICE = "cpu"`` it runs on PyTorch's CPU, as a check.
"""

# %%
# The switch
# ----------
# scikit-learn's array API dispatch needs ``SCIPY_ARRAY_API=1`` in the environment
# before scipy or scikit-learn is imported; then ``array_api_dispatch=True`` makes
# everything follow the input: its namespace and device decide where the work runs, and
# the fitted arrays and outputs live there.
import os

os.environ["SCIPY_ARRAY_API"] = "1"

import numpy as np
import sklearn
import torch
from sklearn.preprocessing import StandardScaler

from kernelmaps import FeatureRidge, NystroemKernelRidge, RandomFourierFeatures, move_to
from kernelmaps.datasets import load_california_housing

sklearn.set_config(array_api_dispatch=True)
# TF32 products keep 10 bits of mantissa, too few for the phases w . x of random
# Fourier features: keep float32 products exact.
torch.set_float32_matmul_precision("highest")
DEVICE = "cuda"

# %%
# The data on the GPU
# -------------------
# California housing, standardised on the host, then copied to the GPU in float32 (the
# GPU's native width; float64 works too).
X_np, y_np = load_california_housing(return_X_y=True)
rng = np.random.default_rng(0)
order = rng.permutation(len(y_np))
test, train = order[:4000], order[4000:]
X_np = StandardScaler().fit(X_np[train]).transform(X_np)
y_mean = y_np[train].mean()

X = torch.as_tensor(X_np[train], dtype=torch.float32, device=DEVICE)
y = torch.as_tensor(y_np[train], dtype=torch.float32, device=DEVICE)
X_test = torch.as_tensor(X_np[test], dtype=torch.float32, device=DEVICE)
y_test = torch.as_tensor(y_np[test], dtype=torch.float32, device=DEVICE)

# %%
# Features on the GPU
# -------------------
# The frequencies are drawn on the host with the estimator's NumPy generator and moved to
# the GPU, so the map has the same parameters as a NumPy fit with the same seed; the
# product ``X W`` and the cosines and sines are computed on the GPU.
rff = RandomFourierFeatures(gamma=0.3, n_components=4096, random_state=0)
Z = rff.fit_transform(X)
print(type(Z).__name__, Z.dtype, Z.device, tuple(Z.shape))

# %%
# Ridge regression on the features
# --------------------------------
# ``Z^T Z`` and ``Z^T y`` are accumulated on the GPU block by block (products in float32,
# sums in float64); only the ``D x D`` statistics come to the host, where the penalty is
# chosen by leave-one-out and the system solved. ``coef_`` lives on the GPU, and so do
# the predictions.
ridge = FeatureRidge(
    RandomFourierFeatures(gamma=0.3, n_components=4096, random_state=0),
    alphas=[1e-2, 1e-1, 1.0, 10.0],
).fit(X, y)
predicted = ridge.predict(X_test)
rmse = torch.sqrt(torch.mean((predicted - y_test) ** 2))
print(f"alpha = {ridge.alpha_:g}, coef_ on {ridge.coef_.device}, test RMSE {float(rmse):.4f}")

# %%
# Nyström kernel ridge regression
# -------------------------------
# :class:`~kernelmaps.NystroemKernelRidge` solves the Nyström model by FALKON's
# preconditioned conjugate gradient: each iteration's kernel blocks ``K_nm`` and their
# products run on the GPU. It has no intercept, so the target is centred.
krr = NystroemKernelRidge(gamma=0.3, n_components=4000, alpha=1.0, random_state=0)
krr.fit(X, y - y_mean)
rmse = torch.sqrt(torch.mean((krr.predict(X_test) + y_mean - y_test) ** 2))
print(f"Nyström, {krr.n_components} landmarks: test RMSE {float(rmse):.4f}")

# %%
# Moving a fitted model
# ---------------------
# A fitted estimator takes only arrays of the namespace and device it was fitted on.
# :func:`~kernelmaps.move_to` returns a copy whose fitted arrays live elsewhere: a NumPy
# copy to save, or to serve on a machine without a GPU.
on_host = move_to(ridge, "numpy")
host_predicted = on_host.predict(X_np[test].astype(np.float32))
gap = np.max(np.abs(host_predicted - predicted.cpu().numpy()))
print(f"{type(on_host.coef_).__name__} weights; largest difference of the predictions {gap:.1e}")

# %%
# Rows larger than the GPU: ``device=``
# -------------------------------------
# With ``device=``, NumPy (or Dask) rows are copied to the GPU block by block, each block
# reduced there while the next one is copied; the GPU holds a few blocks and the
# ``D x D`` sums whatever the number of rows. The fitted arrays are NumPy, as the input.
streamed = FeatureRidge(
    RandomFourierFeatures(gamma=0.3, n_components=4096, random_state=0),
    alphas=[1e-2, 1e-1, 1.0, 10.0],
    device=DEVICE,
).fit(X_np[train], y_np[train])
rmse = np.sqrt(np.mean((streamed.predict(X_np[test]) - y_np[test]) ** 2))
print(f"streamed through {DEVICE}: alpha = {streamed.alpha_:g}, test RMSE {rmse:.4f}")
