"""Neighbourhood components analysis (Goldberger et al. 2005): scikit-learn's, as a
step that reports its objective."""

from numbers import Integral

import numpy as np
from sklearn.neighbors import NeighborhoodComponentsAnalysis
from sklearn.utils._param_validation import Interval

from knnx.limits import MAX_LEARNER_ITERATIONS
from knnx.metric_learning.base import K


class NCA(NeighborhoodComponentsAnalysis):
    """scikit-learn's ``NeighborhoodComponentsAnalysis`` (its parameters and fit, bit for
    bit), with ``objective_``: NCA's criterion at the end, the expected number of rows
    classified correctly by the stochastic nearest neighbour rule,
    ``sum_i sum_{j in class of i} p_ij`` with ``p_ij`` the softmax of
    ``-||L x_i - L x_j||^2`` over j != i (one row at a time: no n x n matrix). Its
    ``max_iter`` is at most :data:`knnx.limits.MAX_LEARNER_ITERATIONS`."""

    _parameter_constraints = {
        **NeighborhoodComponentsAnalysis._parameter_constraints,
        "max_iter": [Interval(Integral, 1, MAX_LEARNER_ITERATIONS, closed="both")],
    }

    def fit(self, X, y):
        super().fit(X, y)
        X = np.ascontiguousarray(np.asarray(X, dtype=np.float64))
        codes = np.unique(np.asarray(y), return_inverse=True)[1].astype(np.intp)
        Z = K.project(X, np.ascontiguousarray(self.components_))
        self.objective_ = float(np.sum(K.nca_scores(Z, codes)))
        return self

    @classmethod
    def _data_problems(cls, params, n_samples, n_features, n_classes):
        r = params.get("n_components")
        if r is not None and r > n_features:
            return [f"n_components={r} exceeds the {n_features} features the step is given"]
        return []
