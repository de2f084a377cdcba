"""Models that learn on kernels and on explicit feature maps.

* :class:`KernelRidge` -- exact kernel ridge regression (dual, Cholesky), the reference.
* :class:`FeatureRidge` -- ridge regression on any feature map, ``Z^T Z`` streamed over row
  blocks, leave-one-out / GCV choice of the penalty, ``partial_fit``.
* :class:`NystroemKernelRidge` -- Nyström kernel ridge regression by FALKON's
  preconditioned conjugate gradient, memory ``O(m^2 + block m)``.
* :class:`FalkonPreconditioner`, :class:`NystroemMatvec`, :class:`FalkonSolver` -- FALKON's
  preconditioner, the matvec ``K_nm^T (K_nm v)`` and their composition, which
  :class:`NystroemKernelRidge` solves with :func:`conjugate_gradient`.
* :class:`RidgeStatistics` -- the mergeable sufficient statistics of a primal ridge fit
  (the solves are pure functions of them, in ``kernelmaps.models._ridge._solvers``).
* :class:`FeatureRidgeCV`, :class:`FeatureRidgeClassifierCV` -- ``gamma``, ``alpha`` and
  the number of features chosen by GCV, leave-one-out, the evidence or exact K-fold, in
  one pass over the rows per batch of bandwidths.
* :func:`feature_budget` -- how many features the data needs: the statistical dimension
  (:func:`statistical_dimension`), the counts the bounds give for it and the counts measured.
* :class:`NystroemKernelRidgeCV` -- :class:`NystroemKernelRidge` with ``gamma``, ``alpha``
  and the number of landmarks chosen by that search (nested landmarks, one pass per batch
  of bandwidths), refitted by FALKON above ``max_exact_components`` landmarks.
* :class:`FeatureRidgeClassifier` -- one-vs-rest ridge classification on a feature map (the
  module ``kernelmaps.models._classifiers`` also gives the recipe with scikit-learn's
  linear classifiers).
* :class:`NystroemKernelRidgeClassifier` -- FALKON's classification: every class's
  indicator solved as one right-hand side of the same conjugate gradient, probabilities
  by temperature scaling of the decision values.
* :class:`FeatureLogisticRegression` -- L2 logistic regression (binomial, multinomial) on
  any feature map, scikit-learn's objective, by Newton-CG preconditioned by Böhning's bound,
  one pass over the rows per gradient or Hessian-vector product;
  :class:`FeatureLogisticRegressionCV` -- ``gamma``, ``C`` and ``n_components`` chosen by
  exact K-fold log-loss.
* :class:`PosteriorFunctions` -- the functions ``sample_functions`` of the regressors draws
  from their posterior, evaluated at any rows in blocks.
"""

from ._budget._feature_budget import BudgetRow, FeatureBudget, feature_budget
from ._budget._statistical_dimension import StatisticalDimension, statistical_dimension
from ._classifiers import FeatureRidgeClassifier
from ._falkon._cg import CGResult, conjugate_gradient
from ._falkon._solver import FalkonPreconditioner, FalkonSolver, NystroemMatvec
from ._feature_logistic import FeatureLogisticRegression
from ._feature_logistic_cv import FeatureLogisticRegressionCV
from ._feature_ridge import FeatureRidge
from ._feature_ridge_classifier_cv import FeatureRidgeClassifierCV
from ._feature_ridge_cv import FeatureRidgeCV
from ._kernel_ridge import KernelRidge
from ._nystroem_classifier import NystroemKernelRidgeClassifier
from ._nystroem_ridge import NystroemKernelRidge
from ._nystroem_ridge_cv import NystroemKernelRidgeCV
from ._posterior_functions import PosteriorFunctions
from ._ridge_statistics import RidgeStatistics

__all__ = [
    "BudgetRow",
    "CGResult",
    "FalkonPreconditioner",
    "FalkonSolver",
    "FeatureBudget",
    "FeatureLogisticRegression",
    "FeatureLogisticRegressionCV",
    "FeatureRidge",
    "FeatureRidgeCV",
    "FeatureRidgeClassifier",
    "FeatureRidgeClassifierCV",
    "KernelRidge",
    "NystroemKernelRidge",
    "NystroemKernelRidgeCV",
    "NystroemKernelRidgeClassifier",
    "NystroemMatvec",
    "PosteriorFunctions",
    "RidgeStatistics",
    "StatisticalDimension",
    "conjugate_gradient",
    "feature_budget",
    "statistical_dimension",
]
