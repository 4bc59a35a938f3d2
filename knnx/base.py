"""Common base of knnx classifiers (scikit-learn conventions).

``__init__`` stores keyword parameters only; ``fit`` validates them against the
class's ``_parameter_constraints`` and the data, and returns self; fitted state ends
in ``_``. Input validation uses scikit-learn's ``validate_data`` so that knnx
estimators behave like any other in pipelines and pass ``check_estimator``; the
computation itself is knnx's own.
"""

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from knnx._params import check_params


class NeighborsClassifierBase(ClassifierMixin, BaseEstimator):
    """Shared fit-time validation for knnx's nearest-neighbour classifiers."""

    _parameter_constraints: dict = {}

    def _validate_params(self):
        check_params(type(self).__name__, self._parameter_constraints, self.get_params(), error=ValueError)

    def _validate_fit_data(self, X, y):
        X, y = validate_data(self, X, y, dtype=np.float64, order="C", y_numeric=False)
        check_classification_targets(y)
        self.classes_, y_codes = np.unique(y, return_inverse=True)
        return np.ascontiguousarray(X), y_codes.astype(np.intp)

    def _validate_query(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, order="C", reset=False)
        return np.ascontiguousarray(X)
