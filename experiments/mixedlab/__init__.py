"""A classifier of one's own for experiments/mixed_data.yaml: the local mean-based
k-nearest-neighbour rule (Mitani & Hamamoto 2006, Pattern Recognition 39(3)).

For each class, the k training rows of that class nearest to the query (Euclidean)
are averaged; the query gets the class whose local mean is nearest (ties: the first
class in ``classes_`` order). k = 1 is the 1-NN rule; a class with fewer than k rows
averages all of them. Written as a researcher would write their own method: plain
scikit-learn API, nothing of knnx.
"""

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.neighbors import NearestNeighbors
from sklearn.utils.validation import check_is_fitted, validate_data


class LocalMeanKNN(ClassifierMixin, BaseEstimator):
    """Local mean-based kNN: the class whose mean of the query's k nearest rows of that
    class is nearest."""

    def __init__(self, k=3):
        self.k = k

    def fit(self, X, y):
        X, y = validate_data(self, X, y)
        self.classes_, codes = np.unique(y, return_inverse=True)
        self.rows_ = [X[codes == c] for c in range(len(self.classes_))]
        self.searches_ = [NearestNeighbors(n_neighbors=min(self.k, len(r))).fit(r) for r in self.rows_]
        return self

    def predict(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        gaps = np.empty((X.shape[0], len(self.classes_)))
        for c, (rows, search) in enumerate(zip(self.rows_, self.searches_, strict=True)):
            _, idx = search.kneighbors(X)
            means = rows[idx].mean(axis=1)
            gaps[:, c] = ((X - means) ** 2).sum(axis=1)
        return self.classes_[np.argmin(gaps, axis=1)]
