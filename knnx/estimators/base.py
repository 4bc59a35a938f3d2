"""Common base of knnx classifiers (scikit-learn conventions).

``__init__`` stores keyword parameters only; ``fit`` validates them against the
class's ``_parameter_constraints`` and the data, and returns self; fitted state ends
in ``_``. Input validation uses scikit-learn's ``validate_data`` so that knnx
estimators behave like any other in pipelines and pass ``check_estimator``; the
computation itself is knnx's own.

Range: every estimator refuses data whose float64 squared distances would overflow
or underflow (:func:`knnx.neighbors.search.check_scale`: ``max |x - mean| * sqrt(d) >
1e150`` or ``0 < max |x - mean| < 1e-140``) with a one-line
:class:`knnx.errors.DataError` (a ValueError) asking to rescale: at fit for the
training rows, at prediction for the queries together with them. Estimators that
search with :func:`knnx.kneighbors` get the check from it; the others call
``_check_scale``.
"""

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from knnx.estimators.params import InstanceOf, check_params
from knnx.neighbors.graphs import GraphStore
from knnx.neighbors.search import check_scale, kneighbors

# The ``graphs`` parameter of the estimators that search neighbours: a GraphStore the
# searches go through (see knnx.neighbors.graphs), or None. Supplied by the experiment runner (or
# by a user with a precomputed graph); never part of a spec's setting.
GRAPHS = InstanceOf(GraphStore, "knnx.GraphStore")


class NeighborsClassifierBase(ClassifierMixin, BaseEstimator):
    """Shared fit-time validation for knnx's nearest-neighbour classifiers."""

    _parameter_constraints: dict = {}

    # The parameter that counts training points, checked by spec validation against each
    # training part: (name, slack) requires value <= n_train - slack; None: no such parameter.
    _neighbor_param: tuple[str, int] | None = None

    # The parameters whose values are numbers of neighbours searched per query (the width
    # of the neighbour graphs a run shares, see knnx.estimators.registry.neighbor_counts).
    _neighbor_counts: tuple[str, ...] = ()

    # ``_lpo_risk(params, X, y, p, graphs=None) -> float``: the exact leave-p-out risk of
    # the estimator with parameters ``params`` on (X, y), in closed form (used by
    # ``protocol: {kind: lpo, p: P}``); None for a class without a closed form.
    _lpo_risk = None

    @classmethod
    def _setting_problems(cls, params):
        """Why a full setting (every parameter, defaults included) cannot run whatever the
        data: combinations that no single value's constraint shows. One line each, []
        if none. ``fit`` raises the first as a ValueError; spec validation reports them
        before any work."""
        return []

    @classmethod
    def _data_problems(cls, params, n_samples, n_features, n_classes):
        """Why the setting cannot run on training data of this shape (iteration counts,
        memory, feature splits): one line each, [] if it can. ``fit`` raises the first as
        a ValueError; spec validation checks each dataset's smallest training part."""
        return []

    def _validate_params(self):
        check_params(type(self).__name__, self._parameter_constraints, self.get_params(), error=ValueError)
        problems = self._setting_problems(self.get_params())
        if problems:
            raise ValueError(f"{type(self).__name__}: {problems[0]}")

    def _validate_fit_data(self, X, y):
        X, y = validate_data(self, X, y, dtype=np.float64, order="C", y_numeric=False)
        check_classification_targets(y)
        self.classes_, y_codes = np.unique(y, return_inverse=True)
        problems = self._data_problems(self.get_params(), X.shape[0], X.shape[1], len(self.classes_))
        if problems:
            raise ValueError(f"{type(self).__name__}: {problems[0]}")
        return np.ascontiguousarray(X), y_codes.astype(np.intp)

    def _validate_query(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, order="C", reset=False)
        return np.ascontiguousarray(X)

    def _kneighbors(self, X, n_neighbors, queries=None):
        """:func:`knnx.kneighbors` through this estimator's ``graphs`` store, if any."""
        return kneighbors(X, n_neighbors, queries, graphs=getattr(self, "graphs", None))

    @staticmethod
    def _check_scale(X, queries=None):
        """DataError (one line) if squared distances of X (and queries) would overflow or underflow."""
        check_scale(X, queries)
