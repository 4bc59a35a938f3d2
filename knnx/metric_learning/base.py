"""What knnx's metric learners share: a linear map L fitted on labelled rows, applied to
any rows as ``x -> L x``.

A learner is a scikit-learn transformer that needs labels: ``fit(X, y)`` learns
``components_`` (r x d, r = ``n_components`` or d), ``transform(X)`` returns ``X @
components_.T`` (summed in feature order by a numba kernel, the same whatever the
thread count), so that the Euclidean distance between transformed rows is the learned
Mahalanobis distance ``(x - x')^T L^T L (x - x')``. Any classifier, selection or
metric after it works in the learned space. Each reports ``objective_``, its
criterion at the end, and ``n_iter_`` (a pipeline writes both beside the step's fit
time: :class:`knnx.steps.Chain`).

It works on numeric attributes: a nominal code or a missing value is refused (in a
spec, at validation: give it one-hot indicators or impute first).
"""

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from knnx._kernels import locked

K = locked("knnx._kernels.metric_learning")  # prange kernels: one launch at a time


class LinearMetric(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Base of knnx's metric learners (see the module docstring). A subclass sets
    ``_parameter_constraints`` and defines ``_learn(X, codes, n_out) -> (L, objective,
    n_iter)`` on validated rows with at least two classes."""

    _parameter_constraints: dict = {}

    def fit(self, X, y):
        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float64, order="C", ensure_min_samples=2)
        check_classification_targets(y)
        self.classes_, codes = np.unique(y, return_inverse=True)
        n_out = self._n_out(X.shape[1])
        if len(self.classes_) < 2:
            # nothing to separate: the map is the start (the identity, or its first rows)
            L, objective, n_iter = np.eye(n_out, X.shape[1]), np.nan, 0
        else:
            L, objective, n_iter = self._learn(np.ascontiguousarray(X), codes.astype(np.intp), n_out)
        self.components_ = np.ascontiguousarray(L, dtype=np.float64)
        self.objective_, self.n_iter_ = float(objective), int(n_iter)
        self._n_features_out = self.components_.shape[0]
        return self

    def transform(self, X):
        check_is_fitted(self, "components_")
        X = validate_data(self, X, dtype=np.float64, order="C", reset=False)
        return K.project(X, self.components_)

    def _n_out(self, d):
        problems = self._data_problems(self.get_params(), 0, d, 0)
        if problems:
            raise ValueError(f"{type(self).__name__}: {problems[0]}")
        n_components = self.get_params().get("n_components")
        return d if n_components is None else int(n_components)

    @classmethod
    def _data_problems(cls, params, n_samples, n_features, n_classes):
        """``n_components`` above the number of features (the spec's validation asks each
        step this of the features it is given of every training part:
        :mod:`knnx.steps.shapes`)."""
        r = params.get("n_components")
        if r is not None and r > n_features:
            return [f"n_components={r} exceeds the {n_features} features the step is given"]
        return []

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags


def class_rows_problem(name, codes, classes, need):
    """A ValueError's text when a class has fewer than ``need`` rows, else None."""
    counts = np.bincount(codes, minlength=len(classes))
    c = int(np.argmin(counts))
    if counts[c] >= need:
        return None
    label = classes[c].item() if hasattr(classes[c], "item") else classes[c]
    return f"{name}: class {label!r} has {counts[c]} rows; each class needs at least {need}"


def map_of_metric(A):
    """L with ``L^T L = A`` for a symmetric positive semi-definite A: the eigenvectors
    scaled by the square roots of their eigenvalues (negative rounding clipped to 0),
    largest first, each with its entry of largest magnitude positive."""
    w, V = np.linalg.eigh((A + A.T) / 2)
    order = np.argsort(-w, kind="stable")
    w, V = np.clip(w[order], 0.0, None), V[:, order]
    return sign_fixed(np.sqrt(w)[:, None] * V.T)


def sign_fixed(L):
    """Each row of L times -1 where its entry of largest magnitude is negative (a map is
    defined up to the sign of each row; this picks one)."""
    L = np.array(L, dtype=np.float64)
    top = np.abs(L).argmax(axis=1)
    flip = L[np.arange(L.shape[0]), top] < 0
    L[flip] *= -1
    return L
