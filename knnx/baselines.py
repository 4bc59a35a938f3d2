"""Comparison baselines of the papers, wrapped as knnx estimators.

* :class:`SubsampledKNN`: kNN on a random fraction of the training set (the
  "random sampling" curve of Piro et al. 2012, Fig. 2).
* :class:`LinearSVMPlatt`: linear SVM with Platt's sigmoid posteriors (D'Ambrosio
  et al. 2012, eq. 27), scikit-learn's ``LinearSVC`` calibrated one class against the
  rest by ``CalibratedClassifierCV(method="sigmoid", cv=5, ensemble=False)``: the
  sigmoid's a and b are fitted on five-fold cross-validated decision values, then
  the SVM is refitted on all the data, as the paper describes; the per-class
  posteriors are normalised over classes.
* :class:`ITMLKNN`: kNN after an ITML metric (Davis et al. 2007) learned by the
  optional ``metric-learn`` package (``pip install 'knnx[itml]'``), the third column
  of Piro et al.'s Table 2.
"""

import functools

import numpy as np

from knnx._params import Interval
from knnx.base import NeighborsClassifierBase
from knnx.errors import DataError
from knnx.knn import KNNClassifier


class SubsampledKNN(NeighborsClassifierBase):
    """Plurality kNN on max(k, round(fraction * n)) training rows drawn without
    replacement (``seed``); the rows kept are ``sample_``."""

    _parameter_constraints = {
        "k": Interval(1, integer=True),
        "fraction": Interval(0, 1, low_open=True),
        "seed": Interval(0, integer=True),
    }

    def __init__(self, k=5, fraction=1.0, seed=0):
        self.k = k
        self.fraction = fraction
        self.seed = seed

    def fit(self, X, y):
        self._validate_params()
        X, y_codes = self._validate_fit_data(X, y)
        n = X.shape[0]
        if self.k > n:
            raise ValueError(f"SubsampledKNN: k={self.k} exceeds the training set size (n_samples = {n})")
        size = min(n, max(self.k, int(round(self.fraction * n))))
        self.sample_ = np.sort(np.random.default_rng(self.seed).choice(n, size=size, replace=False))
        self._knn = KNNClassifier(k=self.k).fit(X[self.sample_], y_codes[self.sample_])
        self._codes_seen = self._knn.classes_
        self.reported_ = {"prototype_fraction": size / n}
        return self

    def predict(self, X):
        X = self._validate_query(X)
        return self.classes_[self._knn.predict(X)]

    def predict_proba(self, X):
        X = self._validate_query(X)
        proba = np.zeros((X.shape[0], len(self.classes_)))
        proba[:, self._codes_seen] = self._knn.predict_proba(X)
        return proba


class LinearSVMPlatt(NeighborsClassifierBase):
    """Linear SVM (``LinearSVC(C=C)``) with Platt-scaled one-vs-rest posteriors.

    The sigmoid is fitted on min(5, smallest class count) folds; with a single class,
    or a class of one row, the posteriors are the training class frequencies.
    """

    _parameter_constraints = {"C": Interval(0, None, low_open=True), "seed": Interval(0, integer=True)}

    def __init__(self, C=1.0, seed=0):
        self.C = C
        self.seed = seed

    def fit(self, X, y):
        from sklearn.calibration import CalibratedClassifierCV
        from sklearn.svm import LinearSVC

        self._validate_params()
        X, y_codes = self._validate_fit_data(X, y)
        svm = LinearSVC(C=self.C, random_state=self.seed)
        # Five folds as Platt's method in the paper; fewer if a class has fewer rows.
        folds = int(min(5, np.bincount(y_codes).min()))
        if len(self.classes_) == 1 or folds < 2:
            self._model = None  # nothing to separate: the class frequencies
            self._prior = np.bincount(y_codes, minlength=len(self.classes_)) / len(y_codes)
            return self
        self._model = CalibratedClassifierCV(svm, method="sigmoid", cv=folds, ensemble=False).fit(X, y_codes)
        return self

    def predict_proba(self, X):
        X = self._validate_query(X)
        if self._model is None:
            return np.tile(self._prior, (X.shape[0], 1))
        proba = np.zeros((X.shape[0], len(self.classes_)))
        proba[:, self._model.classes_] = self._model.predict_proba(X)
        return proba

    def predict(self, X):
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]


def _metric_learn():
    """Import metric-learn, adapting it to the installed scikit-learn.

    metric-learn 0.7.0 (its latest release) passes ``force_all_finite`` to
    scikit-learn's validation helpers; scikit-learn 1.8 renamed it
    ``ensure_all_finite``. The keyword is translated; nothing else is changed.
    """
    try:
        import metric_learn
        import metric_learn._util as util
    except ImportError:
        raise DataError(
            "itml_knn needs the optional package metric-learn: pip install 'knnx[itml]'"
        ) from None

    def renamed(func):
        if getattr(func, "_knnx_renamed", False):
            return func

        @functools.wraps(func)
        def call(*args, **kwargs):
            if "force_all_finite" in kwargs:
                kwargs["ensure_all_finite"] = kwargs.pop("force_all_finite")
            return func(*args, **kwargs)

        call._knnx_renamed = True
        return call

    util.check_X_y = renamed(util.check_X_y)
    util.check_array = renamed(util.check_array)
    return metric_learn


class ITMLKNN(NeighborsClassifierBase):
    """kNN in the space of an ITML Mahalanobis metric (metric-learn's
    ``ITML_Supervised`` with its defaults, seeded), plurality vote."""

    _parameter_constraints = {"k": Interval(1, integer=True), "seed": Interval(0, integer=True)}

    def __init__(self, k=5, seed=0):
        self.k = k
        self.seed = seed

    def fit(self, X, y):
        self._validate_params()
        X, y_codes = self._validate_fit_data(X, y)
        if self.k > X.shape[0]:
            raise ValueError(f"ITMLKNN: k={self.k} exceeds the training set size (n_samples = {X.shape[0]})")
        if len(self.classes_) == 1:
            self._itml = None  # ITML needs two classes; one class is predicted everywhere
        else:
            self._itml = _metric_learn().ITML_Supervised(random_state=self.seed).fit(X, y_codes)
        self._knn = KNNClassifier(k=self.k).fit(self._map(X), y_codes)
        return self

    def _map(self, X):
        return X if self._itml is None else self._itml.transform(X)

    def predict(self, X):
        X = self._validate_query(X)
        return self.classes_[self._knn.predict(self._map(X))]

    def predict_proba(self, X):
        X = self._validate_query(X)
        proba = np.zeros((X.shape[0], len(self.classes_)))
        proba[:, self._knn.classes_] = self._knn.predict_proba(self._map(X))
        return proba
