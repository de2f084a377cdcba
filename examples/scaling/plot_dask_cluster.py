"""
Fitting on a Dask cluster
=========================

:class:`~kernelmaps.FeatureRidge` and :class:`~kernelmaps.FeatureRidgeCV` accept a
:class:`dask.array.Array`: one task per chunk of rows computes the chunk's features and
reduces them at once to the ridge statistics (``Z^T Z``, ``Z^T y`` and the means), which
are merged in a fixed pairwise tree. The ``n x D`` feature matrix is never held whole,
so the rows may be larger than the memory of any one machine; the fitted model is small
and in memory, and ``predict`` on a Dask array is lazy.

This example starts a local cluster of two workers, fits on the bundled California
housing data as a Dask array, and checks the result against the same fit in memory.
"""

import time

import dask.array as da
import numpy as np
from distributed import Client, LocalCluster
from sklearn.preprocessing import StandardScaler

from kernelmaps import FeatureRidge, FeatureRidgeCV, RandomFourierFeatures
from kernelmaps.datasets import load_california_housing

# %%
# A local cluster
# ---------------
# Two workers of one thread each. ``processes=False`` runs them as threads of this
# process, which is enough for the numerical work here (NumPy releases the GIL). Worker
# processes (``processes=True``) start with the ``spawn`` method, which imports the main
# script again: a script that starts them must keep its code under
# ``if __name__ == "__main__":``.
cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None)
client = Client(cluster)
print(f"workers: {len(client.scheduler_info()['workers'])}")

# %%
# The data as Dask arrays
# -----------------------
# Here the rows come from memory, cut into chunks of 4096 rows; with data larger than
# memory they would come from files (``dask.array.from_zarr``, ``dask.dataframe``, ...).
X, y = load_california_housing(return_X_y=True)
rng = np.random.default_rng(0)
order = rng.permutation(len(y))
test, train = order[:4000], order[4000:]
X = StandardScaler().fit(X[train]).transform(X)
X_train = da.from_array(X[train], chunks=(4096, -1))
y_train = da.from_array(y[train], chunks=4096)
X_test = da.from_array(X[test], chunks=(4096, -1))
print(X_train)


# %%
# A fit on the cluster
# --------------------
# ``alphas`` are compared by exact leave-one-out, which on a Dask array is a second pass
# over the chunks. The target is not centred: ``FeatureRidge`` fits an intercept.
def make_model():
    features = RandomFourierFeatures(gamma=0.3, n_components=512, random_state=0)
    return FeatureRidge(features, alphas=np.logspace(-4, 2, 7))


start = time.perf_counter()
on_cluster = make_model().fit(X_train, y_train)
print(f"fit on the cluster: {time.perf_counter() - start:.2f} s, alpha = {on_cluster.alpha_:g}")

# %%
# ``predict`` on a Dask array returns a Dask array: nothing is computed until asked.
lazy = on_cluster.predict(X_test)
print(lazy)
predicted = lazy.compute()
rmse = np.sqrt(np.mean((predicted - y[test]) ** 2))
print(f"test RMSE: {rmse:.4f} (100 000 dollars)")

# %%
# The same fit in memory
# ----------------------
# The statistics of the chunks add up to those of all the rows, so the in-memory fit
# chooses the same penalty and finds the same weights, up to the rounding of sums taken
# in another order.
start = time.perf_counter()
in_memory = make_model().fit(X[train], y[train])
print(f"fit in memory: {time.perf_counter() - start:.2f} s, alpha = {in_memory.alpha_:g}")
coef_gap = np.max(np.abs(on_cluster.coef_ - in_memory.coef_)) / np.max(np.abs(in_memory.coef_))
prediction_gap = np.max(np.abs(predicted - in_memory.predict(X[test])))
print(f"largest difference of the weights, relative: {coef_gap:.1e}")
print(f"largest difference of the predictions:       {prediction_gap:.1e}")

# %%
# The search on the cluster
# -------------------------
# :class:`~kernelmaps.FeatureRidgeCV` runs on the same chunks: every candidate
# ``gamma`` is a map fitted from the array's shape, the statistics of all the
# candidates of a batch come from one pass, and ``cv=5`` makes its folds from a hash of
# the global row index, so that the result does not depend on the chunking.
search = FeatureRidgeCV(
    RandomFourierFeatures(n_components=256, random_state=0),
    gammas=[0.03, 0.1, 0.3, 1.0],
    n_components_grid=[64, 128, 256],
    cv=5,
).fit(X_train, y_train)
print(f"chosen: gamma = {search.gamma_:g}, alpha = {search.alpha_:.3g}, D = {search.n_components_}")
print(f"5-fold R^2: {search.best_score_:.4f}, test R^2: {search.score(X_test, y[test]):.4f}")

# %%
# Closing the cluster
# -------------------
client.close()
cluster.close()

# %%
# The cluster's fit chose the same penalty as the fit in memory, and its weights and
# predictions agree with those of the fit in memory to rounding. The model itself is a
# plain in-memory estimator whichever way it was fitted.
