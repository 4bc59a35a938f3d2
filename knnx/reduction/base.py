"""What every prototype selection of knnx shares: its parameters, the input it takes,
the metric it searches under and the rule for a class it would empty.

A selection is an imbalanced-learn-style sampler: ``fit_resample(X, y)`` returns the
rows it keeps, in their order in X, and their labels (``sample_indices_``: their
indices); ``fit`` does the same and returns self. Its neighbours are knnx's exact ones
(:func:`knnx.kneighbors`: ordered by (distance, row index), a row excluded from its
own list, its duplicates not) under ``metric``, fitted once on the rows given
(:func:`knnx.neighbors.metrics.fit_metric`: ranges, deviations and hvdm's tables of
those rows), so every metric of knnx works, nominal codes (``nominal``) and missing
values (heom, hvdm, vdm, gower) included; all but ``precomputed`` (a selection returns
rows of X, and rows of a distance matrix are not a smaller one).

A class the rule would empty keeps every row it has: a selection never removes a
class from the training part (the classifier after it still predicts every class).
"""

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from knnx.estimators.base import METRIC_CONSTRAINTS, metric_problems, search_metric
from knnx.estimators.params import Options, check_params
from knnx.neighbors.metrics import METRIC_NAMES, METRICS, fit_metric
from knnx.neighbors.search import kneighbors


class Selection(BaseEstimator):
    """Base of knnx's prototype selections (see the module docstring). A subclass sets
    ``_parameter_constraints`` (with :data:`METRIC_CONSTRAINTS`) and defines
    ``_select(X, y, metric) -> kept``: the indices of the rows kept (any order), from the
    validated rows X, their class codes y (intp, 0..C-1) and the fitted metric."""

    _parameter_constraints: dict = {}

    # A selection returns rows of X: its columns are the dataset's (the runner tells the
    # step after it the nominal columns, as it tells the first).
    keeps_columns = True

    def fit_resample(self, X, y):
        """The rows kept and their labels (``X[sample_indices_]``, ``y[sample_indices_]``)."""
        self._validate_params()
        finite = "allow-nan" if self._allows_nan() else True
        X, y = validate_data(self, X, y, dtype=np.float64, order="C", ensure_all_finite=finite)
        check_classification_targets(y)
        classes, codes = np.unique(y, return_inverse=True)
        codes = codes.astype(np.intp)
        self.metric_ = fit_metric(
            self.metric, X, codes, nominal=self.nominal, metric_params=self.metric_params
        )
        kept = np.zeros(len(codes), dtype=bool)
        kept[np.asarray(self._select(np.ascontiguousarray(X), codes, self.metric_), dtype=np.intp)] = True
        self.sample_indices_ = np.flatnonzero(keep_every_class(kept, codes))
        return X[self.sample_indices_], y[self.sample_indices_]

    def fit(self, X, y):
        """:meth:`fit_resample`, returning self."""
        self.fit_resample(X, y)
        return self

    def _validate_params(self):
        name = type(self).__name__
        check_params(name, self._parameter_constraints, self.get_params(), error=ValueError)
        problems = metric_problems(self.get_params())
        if problems:
            raise ValueError(f"{name}: {problems[0]}")

    def _allows_nan(self):
        return isinstance(self.metric, str) and self.metric in METRICS and METRICS[self.metric].missing

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        if isinstance(self.metric, str) and self.metric in METRICS:
            tags.input_tags.allow_nan = METRICS[self.metric].missing
        return tags


def keep_every_class(kept, y):
    """``kept`` (a boolean mask of rows) with every row of a class it keeps none of
    set back to True (see the module docstring)."""
    present = np.bincount(y[kept], minlength=int(y.max()) + 1) > 0
    return kept | ~present[y]


def loo_graph(X, k, metric, rows=None):
    """The k nearest other rows of each row of ``X[rows]`` among ``X[rows]`` (all rows
    by default) under the fitted ``metric``, as indices into X: (distances, indices)."""
    sub = X if rows is None else X[rows]
    dist, ind = kneighbors(sub, k, metric=search_metric(metric))
    return dist, (ind if rows is None else rows[ind])


# The metric parameters of a selection: every metric of knnx but "precomputed".
SELECTION_METRIC = {
    **METRIC_CONSTRAINTS,
    "metric": Options(*(m for m in METRIC_NAMES if m != "precomputed")),
}
