"""The k-nearest-neighbour baseline: plurality and distance-weighted votes."""

import numpy as np

from knnx._kernels import PARALLEL_LOCK
from knnx._kernels.vote import vote
from knnx._params import Interval, Options
from knnx.base import NeighborsClassifierBase
from knnx.neighbors import kneighbors


class KNNClassifier(NeighborsClassifierBase):
    """k-nearest-neighbour classifier on exact squared Euclidean neighbours.

    Parameters
    ----------
    k : int, default 1
        Number of neighbours, 1 <= k <= n_samples of the training set.
    weights : {"uniform", "distance"}, default "uniform"
        ``uniform``: plurality vote. ``distance``: each neighbour votes with weight
        1 / Euclidean distance; if some neighbours coincide with the query (distance
        0), only those vote, with weight 1 each (as scikit-learn does).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_features_in_ : int

    Notes
    -----
    Neighbours are ordered by (squared distance, training index), see
    :func:`knnx.kneighbors`. Tie rule for the vote: among the classes sharing the
    top score, the class of the nearest neighbour belonging to one of them wins.
    For a two-class problem with odd k and uniform weights no tie can occur, and
    predictions equal scikit-learn's ``KNeighborsClassifier(algorithm="brute")``.
    """

    _parameter_constraints = {
        "k": Interval(1, integer=True),
        "weights": Options("uniform", "distance"),
    }

    def __init__(self, k=1, weights="uniform"):
        self.k = k
        self.weights = weights

    def fit(self, X, y):
        """Store the training set. Returns self."""
        self._validate_params()
        X, y_codes = self._validate_fit_data(X, y)
        if self.k > X.shape[0]:
            raise ValueError(
                f"KNNClassifier: k={self.k} exceeds the training set size (n_samples = {X.shape[0]})"
            )
        self._fit_X, self._fit_y = X, y_codes
        return self

    def _scores(self, X):
        X = self._validate_query(X)
        neigh_dist, neigh_ind = kneighbors(self._fit_X, self.k, X)
        pred = np.empty(X.shape[0], dtype=np.intp)
        proba = np.empty((X.shape[0], len(self.classes_)))
        with PARALLEL_LOCK:
            vote(
                neigh_ind,
                neigh_dist,
                self._fit_y,
                len(self.classes_),
                self.weights == "distance",
                pred,
                proba,
            )
        return pred, proba

    def predict(self, X):
        """Predicted class of each row of X (tie rule in the class docstring)."""
        pred, _ = self._scores(X)
        return self.classes_[pred]

    def predict_proba(self, X):
        """Vote shares, shape (n_samples, n_classes), columns in ``classes_`` order."""
        return self._scores(X)[1]
