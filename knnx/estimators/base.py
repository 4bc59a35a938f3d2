"""Common base of knnx classifiers (scikit-learn conventions).

``__init__`` stores keyword parameters only; ``fit`` validates them against the
class's ``_parameter_constraints`` and the data, and returns self; fitted state ends
in ``_``. Input validation uses scikit-learn's ``validate_data`` so that knnx
estimators behave like any other in pipelines and pass ``check_estimator``; the
computation itself is knnx's own.

Metric: the estimators whose neighbours come from :func:`knnx.kneighbors` take
``metric`` (a name of :data:`knnx.neighbors.metrics.METRIC_NAMES`, default
"euclidean"), ``metric_params`` and ``nominal`` (:data:`METRIC_CONSTRAINTS`). ``fit``
fits the metric on the training rows it is given (:func:`knnx.neighbors.metrics.fit_metric`:
ranges, deviations, covariances and hvdm's tables from those rows only, never from
the queries) and keeps it as ``metric_``; every search of the estimator, at fit and at
prediction, ranks neighbours under that fitted metric. The Euclidean default searches
exactly as before the parameter existed (same graphs, same bits). Metrics with a
missing-value rule (heom, hvdm, vdm, gower) let NaN through input validation (and set
scikit-learn's ``allow_nan`` tag); ``metric="precomputed"`` takes the square matrix
of training distances at fit and the (n_queries, n_train) distances at prediction
(scikit-learn's ``pairwise`` tag).

Range: every estimator refuses data whose float64 squared distances would overflow
or underflow (:func:`knnx.neighbors.search.check_scale`: ``max |x - mean| * sqrt(d) >
1e150`` or ``0 < max |x - mean| < 1e-140``) with a one-line
:class:`knnx.errors.DataError` (a ValueError) asking to rescale: at fit for the
training rows, at prediction for the queries together with them. Estimators that
search with :func:`knnx.kneighbors` get the check from it (under their metric: for
manhattan, chebyshev and minkowski the sums of |differences| ** p); the others call
``_check_scale``, which checks the squared-Euclidean range of the rows the metric
searches (euclidean, and seuclidean, mahalanobis, cosine after their map) and leaves
the other metrics to the search.
"""

import weakref

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from knnx.errors import DataError
from knnx.estimators.params import ColumnIndices, InstanceOf, Options, check_params
from knnx.neighbors.graphs import GraphStore
from knnx.neighbors.metrics import METRIC_NAMES, METRICS, check_metric_params, data_problem, fit_metric
from knnx.neighbors.search import check_scale, kneighbors

# The ``graphs`` parameter of the estimators that search neighbours: a GraphStore the
# searches go through (see knnx.neighbors.graphs), or None. Supplied by the experiment runner (or
# by a user with a precomputed graph); never part of a spec's setting.
GRAPHS = InstanceOf(GraphStore, "knnx.GraphStore")

# The ``metric``, ``metric_params`` and ``nominal`` parameters of the estimators whose
# neighbours come from knnx.kneighbors (see the module docstring). ``nominal``: the
# columns holding category codes 0, 1, ... (filled by the experiment runner for a
# dataset loaded with ``categorical: keep``), for the metrics that take them.
METRIC_CONSTRAINTS = {
    "metric": Options(*METRIC_NAMES),
    "metric_params": InstanceOf(dict, "dict"),
    "nominal": ColumnIndices(),
}


def metric_problems(params):
    """Why a setting's ``metric``, ``metric_params`` and ``nominal`` cannot run together,
    whatever the data: one line each ([] if none, or if the metric is not a known name:
    its own constraint reports that)."""
    metric = params.get("metric", "euclidean")
    if not isinstance(metric, str) or metric not in METRICS:
        return []
    problems = []
    nominal, metric_params = params.get("nominal"), params.get("metric_params")
    try:
        if metric_params is None or isinstance(metric_params, dict):  # else its constraint says
            check_metric_params(metric, metric_params)
    except DataError as exc:
        problems.append(str(exc))
    if ColumnIndices().check(nominal) is None and nominal is not None and len(nominal):
        given = metric_params if isinstance(metric_params, dict) else None
        problem = data_problem(metric, [int(j) for j in nominal], None, "nominal", metric_params=given)
        if problem:
            problems.append(problem)
    return problems


def plain_euclidean(metric):
    """Whether a fitted metric is squared Euclidean on the rows as given (no map, no
    one-hot encoding): None counts as such."""
    return metric is None or (metric.name == "euclidean" and not getattr(metric, "onehot", ()))


def search_metric(metric):
    """What :func:`knnx.kneighbors` is given for a fitted metric: the name "euclidean"
    for plain Euclidean (the search, its graph keys and its bits exactly as without a
    metric), else the fitted :class:`knnx.neighbors.metrics.Metric`."""
    return "euclidean" if plain_euclidean(metric) else metric


# Each class's parameter names (scikit-learn reads them from the signature of __init__,
# about 0.1 ms each time; get_params is called three times per fit).
_PARAM_NAMES = weakref.WeakKeyDictionary()


def _plain_rows(X):
    """Whether X is already what scikit-learn's ``validate_data`` would return for a knnx
    estimator: a C-ordered float64 ndarray (not a subclass) with at least one row and one
    column, every value finite. Such input skips that call (0.2-0.4 ms, most of a small
    fit's time) and gives the same fit; anything else goes through it."""
    return (
        type(X) is np.ndarray
        and X.dtype == np.float64
        and X.ndim == 2
        and X.flags.c_contiguous
        and X.shape[0] > 0
        and X.shape[1] > 0
        and bool(np.isfinite(X).all())
    )


class NeighborsClassifierBase(ClassifierMixin, BaseEstimator):
    """Shared fit-time validation for knnx's nearest-neighbour classifiers."""

    _parameter_constraints: dict = {}

    @classmethod
    def _get_param_names(cls):
        names = _PARAM_NAMES.get(cls)
        if names is None:
            names = _PARAM_NAMES[cls] = super()._get_param_names()
        return names

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
    # The parameters whose values the closed form computes whatever they are set to: under
    # protocol lpo a spec's cells record them, and another value is refused (kNN's closed
    # form charges a vote tie its expected cost under a uniform random choice: tie random).
    _lpo_rule: dict = {}

    @classmethod
    def _setting_problems(cls, params):
        """Why a full setting (every parameter, defaults included) cannot run whatever the
        data: combinations that no single value's constraint shows. One line each, []
        if none. ``fit`` raises the first as a ValueError; spec validation reports them
        before any work. Here: the metric's (:func:`metric_problems`), for the classes
        that take ``metric``; a subclass adding its own extends this list."""
        return metric_problems(params) if cls._takes_metric() else []

    @classmethod
    def _takes_metric(cls):
        return "metric" in cls._parameter_constraints

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        metric = getattr(self, "metric", None) if self._takes_metric() else None
        if isinstance(metric, str) and metric in METRICS:
            tags.input_tags.allow_nan = METRICS[metric].missing
            tags.input_tags.pairwise = metric == "precomputed"
            tags.input_tags.positive_only = metric == "precomputed"  # distances: refused below 0 at fit
        return tags

    def _allows_nan(self):
        metric = getattr(self, "metric", None) if self._takes_metric() else None
        return isinstance(metric, str) and metric in METRICS and METRICS[metric].missing

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
        """Validated (X, y codes); for a class taking ``metric``, also ``metric_``, the
        metric fitted on these rows (and labels: hvdm, vdm)."""
        plain_y = type(y) is np.ndarray and y.ndim == 1 and y.dtype.kind in "iu"
        if plain_y and _plain_rows(X) and len(y) == X.shape[0]:
            self.n_features_in_ = X.shape[1]  # what validate_data sets (and unsets) here
            if hasattr(self, "feature_names_in_"):
                del self.feature_names_in_
        else:
            finite = "allow-nan" if self._allows_nan() else True
            X, y = validate_data(
                self, X, y, dtype=np.float64, order="C", y_numeric=False, ensure_all_finite=finite
            )
            check_classification_targets(y)
        self.classes_, y_codes = np.unique(y, return_inverse=True)
        problems = self._data_problems(self.get_params(), X.shape[0], X.shape[1], len(self.classes_))
        if problems:
            raise ValueError(f"{type(self).__name__}: {problems[0]}")
        X, y_codes = np.ascontiguousarray(X), y_codes.astype(np.intp)
        if self._takes_metric():
            self.metric_ = self._fit_metric(X, y_codes)
        return X, y_codes

    def _fit_metric(self, X, y_codes, nominal=None):
        """``metric`` fitted on the training rows X (class codes y_codes); ``nominal``:
        the nominal columns (default: the ``nominal`` parameter)."""
        nominal = self.nominal if nominal is None else nominal
        return fit_metric(self.metric, X, y_codes, nominal=nominal, metric_params=self.metric_params)

    def _validate_query(self, X):
        check_is_fitted(self)
        if _plain_rows(X) and X.shape[1] == self.n_features_in_ and not hasattr(self, "feature_names_in_"):
            return X
        finite = "allow-nan" if self._allows_nan() else True
        X = validate_data(self, X, dtype=np.float64, order="C", reset=False, ensure_all_finite=finite)
        return np.ascontiguousarray(X)

    def _kneighbors(self, X, n_neighbors, queries=None, *, squared=True, metric=None):
        """:func:`knnx.kneighbors` through this estimator's ``graphs`` store, if any, under
        ``metric`` (a fitted Metric; default ``metric_``, Euclidean for a class without
        one). ``squared``: reduced distances (True) or the metric's distances."""
        metric = getattr(self, "metric_", None) if metric is None else metric
        return kneighbors(
            X,
            n_neighbors,
            queries,
            metric=search_metric(metric),
            squared=squared,
            graphs=getattr(self, "graphs", None),
        )

    def _check_scale(self, X, queries=None):
        """DataError (one line) if squared distances of X (and queries) would overflow or
        underflow, on the rows the fitted metric searches by squared Euclidean distance
        (euclidean; seuclidean, mahalanobis and cosine after their map); the other
        metrics' ranges are checked by the search itself."""
        metric = getattr(self, "metric_", None)
        if plain_euclidean(metric):
            check_scale(X, queries)
        elif metric.euclidean_path:
            check_scale(
                metric.prepare(X, "X"), None if queries is None else metric.prepare(queries, "queries")
            )
