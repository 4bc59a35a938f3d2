"""The k-nearest-neighbour baseline: plurality and distance-weighted votes."""

import numpy as np

from knnx._kernels import Codes, launch, lazy
from knnx.estimators.base import GRAPHS, METRIC_CONSTRAINTS, NeighborsClassifierBase
from knnx.estimators.params import AnyOf, Interval, Literal, Options
from knnx.limits import MAX_SEED, lpo_bytes, memory_problem
from knnx.lpo.risk import _argmin_k, lpo_risk, lpo_risk_from_graph, lpo_risk_from_weighted_graph

V = lazy("knnx._kernels.vote")

TIE_RULES = ("nearest", "lowest", "random")
_TIE_CODES = Codes(V, nearest="TIE_NEAREST", lowest="TIE_LOWEST", random="TIE_RANDOM")

# Constraints shared by the voting classifiers: the vote's tie rule and the seed of its draws.
_TIE_CONSTRAINTS = {
    "tie": Options(*TIE_RULES),
    "seed": AnyOf(Interval(0, MAX_SEED, integer=True), Literal(None)),
}


def _metric_args(params):
    """The metric arguments of :func:`knnx.lpo_risk` in a setting ``params``."""
    return {
        "metric": params.get("metric", "euclidean"),
        "metric_params": params.get("metric_params"),
        "nominal": params.get("nominal"),
    }


def tie_draws(tie, seed, n_queries):
    """The uniform draws on [0, 1) of ``tie="random"``, one per query row, in row order:
    ``np.random.default_rng(seed).random(n_queries)`` (seed None counts as 0). Empty for
    the other rules."""
    if tie != "random":
        return np.empty(0)
    return np.random.default_rng(0 if seed is None else seed).random(n_queries)


class _VotingClassifier(NeighborsClassifierBase):
    """predict / predict_proba from the vote of the ``_vote_k()`` nearest training points.

    Subclasses define ``_vote_k`` (the k in force) and the ``weights``, ``tie`` and
    ``seed`` parameters.
    """

    def _scores(self, X):
        X = self._validate_query(X)
        weighted = self.weights == "distance"
        # the weighted vote reads the metric's distances; the plurality vote none
        neigh_dist, neigh_ind = self._kneighbors(self._fit_X, self._vote_k(), X, squared=not weighted)
        pred = np.empty(X.shape[0], dtype=np.intp)
        proba = np.empty((X.shape[0], len(self.classes_)))
        draws = tie_draws(self.tie, self.seed, X.shape[0])
        codes = _TIE_CODES[self.tie]
        work = X.shape[0] * (neigh_ind.shape[1] + len(self.classes_))
        args = (neigh_ind, neigh_dist, self._fit_y, len(self.classes_), weighted, codes, draws, pred, proba)
        launch(V.vote, X.shape[0], work, V.VOTE_PARALLEL_MIN_WORK, *args)
        return pred, proba

    def predict(self, X):
        """Predicted class of each row of X (tie rule in the class docstring)."""
        pred, _ = self._scores(X)
        return self.classes_[pred]

    def predict_proba(self, X):
        """Vote shares, shape (n_samples, n_classes), columns in ``classes_`` order."""
        return self._scores(X)[1]


class KNNClassifier(_VotingClassifier):
    """k-nearest-neighbour classifier on exact neighbours (squared Euclidean by default).

    Parameters
    ----------
    k : int, default 1
        Number of neighbours, 1 <= k <= n_samples of the training set.
    weights : {"uniform", "distance"}, default "uniform"
        ``uniform``: plurality vote. ``distance``: each neighbour votes with weight
        1 / distance, the distance of ``metric`` (Euclidean by default; manhattan's
        sum of |differences|, hvdm's square root of its sum, ...: ``Metric.distance``,
        not the reduced distance the search ranks); if some neighbours are at
        distance 0 from the query, only those vote, with weight 1 each (as
        scikit-learn does).
    tie : {"nearest", "lowest", "random"}, default "nearest"
        Rule among the classes sharing the top score (equal float64 vote scores):
        ``nearest``: the class of the nearest neighbour (first in neighbour order)
        belonging to one of them; ``lowest``: the first of them in ``classes_``;
        ``random``: one of them, uniformly, drawn from ``seed`` (see Notes).
        ``predict_proba`` does not depend on it.
    seed : int or None, default None
        Seed of the ``tie="random"`` draws (None counts as 0); unused by the other rules.
    metric : str, default "euclidean"
        The distance neighbours are ranked by, one of
        :data:`knnx.neighbors.metrics.METRIC_NAMES` (see :mod:`knnx.neighbors.metrics`),
        fitted at ``fit`` on the training rows only (ranges, deviations, covariance,
        hvdm's class-conditional tables) and kept as ``metric_``. heom, hvdm, vdm and
        gower accept missing values (NaN) in X at fit and prediction.
        ``"precomputed"``: X is the square matrix of training distances at fit and the
        (n_queries, n_train) distances at prediction.
    metric_params : dict or None, default None
        The metric's parameters (minkowski ``p``, seuclidean ``V``, mahalanobis ``VI``).
    nominal : list of int or None, default None
        Columns of X holding category codes 0, 1, ... (the metrics that take nominal
        attributes: heom, hvdm, gower, hamming; vdm treats every column so); set by the
        experiment runner for a dataset loaded with ``categorical: keep``.
    graphs : knnx.GraphStore or None, default None
        Neighbour graphs to reuse or a precomputed graph to use (see
        :mod:`knnx.neighbors.graphs`); predictions are the same with or without.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    metric_ : knnx.neighbors.metrics.Metric
        The metric fitted on the training rows.
    n_features_in_ : int

    Notes
    -----
    Neighbours are ordered by (reduced distance, training index), see
    :func:`knnx.kneighbors`. For a two-class problem with odd k and uniform weights
    no tie can occur, and predictions equal scikit-learn's
    ``KNeighborsClassifier(algorithm="brute")`` (whatever ``tie``), under the same
    metric where scikit-learn has it (euclidean, manhattan, chebyshev, minkowski, ...).

    ``tie="random"``: every call of ``predict`` draws u_i = the i-th value of
    ``np.random.default_rng(seed).random(n_queries)`` for query row i and, if s
    classes tie at the top for that row, picks the one at position floor(u_i s) in
    ``classes_`` order. So the same seed and the same query array give the same
    predictions, and a row's draw depends on its position in the array.

    Numeric extremes: k = n_samples is allowed (every training point votes), k >
    n_samples raises ValueError. Data whose squared distances would overflow or
    underflow in float64 (``max |x - mean| * sqrt(d) > 1e150`` or ``0 < max |x -
    mean| < 1e-140``) is refused at ``fit`` (and queries at prediction) with a
    one-line :class:`knnx.errors.DataError` (under manhattan, chebyshev and
    minkowski the search refuses sums of |differences| ** p that would, at
    prediction). Identical rows are fine: they are
    ordered by index; with ``weights="distance"`` coincident neighbours take the
    vote alone, so every score stays finite.
    """

    _parameter_constraints = {
        "k": Interval(1, integer=True),
        "weights": Options("uniform", "distance"),
        **_TIE_CONSTRAINTS,
        **METRIC_CONSTRAINTS,
        "graphs": GRAPHS,
    }
    _neighbor_param = ("k", 0)
    _neighbor_counts = ("k",)

    _lpo_rule = {"tie": "random"}  # the expected cost of a vote tie: the closed form's rule

    @classmethod
    def _lpo_risk(cls, params, X, y, p, graphs=None):
        """Exact R_LpO of KNNClassifier(**params) on (X, y): Celisse & Mary-Huard's closed
        form (:func:`knnx.lpo_risk` at k = params["k"], under params' metric fitted on
        all of (X, y)); ``graphs``: a knnx.GraphStore."""
        return float(
            lpo_risk(X, y, p, params["k"], params["weights"], graphs=graphs, **_metric_args(params))[-1]
        )

    def __init__(
        self,
        k=1,
        weights="uniform",
        tie="nearest",
        seed=None,
        metric="euclidean",
        metric_params=None,
        nominal=None,
        graphs=None,
    ):
        self.k = k
        self.weights = weights
        self.tie = tie
        self.seed = seed
        self.metric = metric
        self.metric_params = metric_params
        self.nominal = nominal
        self.graphs = graphs

    def fit(self, X, y):
        """Store the training set. Returns self."""
        self._validate_params()
        X, y_codes = self._validate_fit_data(X, y)
        if self.k > X.shape[0]:
            raise ValueError(
                f"KNNClassifier: k={self.k} exceeds the training set size (n_samples = {X.shape[0]})"
            )
        self._check_scale(X)
        self._fit_X, self._fit_y = X, y_codes
        return self

    def _vote_k(self):
        return self.k


class KNNLpoClassifier(_VotingClassifier):
    """kNN whose k is chosen on the training data by exact leave-p-out (Celisse & Mary-Huard 2011).

    ``fit`` computes R_LpO(k) for k = 1 .. k_max on the training data
    (:func:`knnx.lpo_risk`, with this estimator's ``weights``) and keeps k_p, the
    smallest k of minimal risk; prediction is then
    ``KNNClassifier(k_p, weights=weights, metric=metric)``. The leave-one-out graph
    the risk is computed from ranks neighbours under the metric fitted on all the
    training rows given to ``fit`` (not refitted on each split's n - p rows: the
    statistics are those of the whole training part).

    Parameters
    ----------
    p : int, default 1
        Points held out per split; must be below the number of training samples.
        p = 1 is leave-one-out selection. Under label noise the paper finds that
        p > 1 chooses better k (Sec. 3.2; its experiments use p = 10): set it.
    k_max : int, default 50
        Largest k considered. Capped at n_train - p, so that small training parts
        still work; the cap in force is ``k_max_``.
    weights : {"uniform", "distance"}, default "uniform"
        Vote of the selected kNN, and the rule whose LpO risk selects k.
        ``uniform``: plurality vote, any number of classes. ``distance``: weights
        1 / distance (only the neighbours at distance 0 vote, if any), two classes
        only; the exact weighted LpO risk (ties of real-valued weight sums cost 1/2)
        is counted as :func:`knnx.lpo_risk` describes, and its cost grows with p for
        points whose vote is contested.
    tie : {"nearest", "lowest", "random"}, default "nearest"
        Vote tie rule of the selected kNN at prediction, as :class:`KNNClassifier`.
        The selection of k does not use it: exact LpO charges a vote tie its expected
        cost under a uniform random choice among the tied classes (its documented
        rule, :func:`knnx.lpo_risk`), which is the expected error of ``tie="random"``;
        the closed forms cannot follow the nearest-neighbour or lowest-class rule.
    seed : int or None, default None
        Seed of the ``tie="random"`` draws at prediction, as :class:`KNNClassifier`.
    metric, metric_params, nominal :
        The distance, as :class:`KNNClassifier`: fitted on the training rows, it ranks
        the neighbours of the LpO graph and of the prediction; ``weights="distance"``
        weighs by its distances.
    graphs : knnx.GraphStore or None, default None
        Neighbour graphs to reuse (see :mod:`knnx.neighbors.graphs`); results are the same.

    Attributes
    ----------
    k_ : int
        The selected k.
    lpo_risk_ : ndarray of shape (k_max_,)
        R_LpO(k) for k = 1 .. k_max_.
    k_max_ : int
    reported_ : dict
        ``{"chosen_k": k_}``: recorded by the experiment runner as extra rows.
    metric_ : knnx.neighbors.metrics.Metric
    classes_, n_features_in_
    """

    _parameter_constraints = {
        "p": Interval(1, integer=True),
        "k_max": Interval(1, integer=True),
        "weights": Options("uniform", "distance"),
        **_TIE_CONSTRAINTS,
        **METRIC_CONSTRAINTS,
        "graphs": GRAPHS,
    }
    _neighbor_param = ("p", 1)
    _neighbor_counts = ("k_max",)

    @classmethod
    def _data_problems(cls, params, n_samples, n_features, n_classes):
        problems = []
        if params.get("weights") == "distance" and n_classes > 2:
            problems.append(
                f"weights='distance' selects k by exact LpO for two classes only, the data has {n_classes}"
            )
        p = params.get("p", 1)
        if p < n_samples:
            k_max = min(params.get("k_max", 50), n_samples - p)
            what = f"exact leave-{p}-out for k up to {k_max} on {n_samples} training rows"
            problem = memory_problem(lpo_bytes(n_samples, n_features, p, k_max), what)
            if problem:
                problems.append(problem)
        return problems

    def __init__(
        self,
        p=1,
        k_max=50,
        weights="uniform",
        tie="nearest",
        seed=None,
        metric="euclidean",
        metric_params=None,
        nominal=None,
        graphs=None,
    ):
        self.p = p
        self.k_max = k_max
        self.weights = weights
        self.tie = tie
        self.seed = seed
        self.metric = metric
        self.metric_params = metric_params
        self.nominal = nominal
        self.graphs = graphs

    def fit(self, X, y):
        """Select k by exact LpO on (X, y), then store the training set. Returns self."""
        self._validate_params()
        X, y_codes = self._validate_fit_data(X, y)
        n = X.shape[0]
        if self.p >= n:
            raise ValueError(
                f"KNNLpoClassifier: p={self.p} must be below the training set size (n_samples = {n})"
            )
        self.k_max_ = min(self.k_max, n - self.p)
        weighted = self.weights == "distance"
        neigh_dist, neigh_ind = self._kneighbors(X, self.k_max_ + self.p - 1, squared=not weighted)
        if weighted:
            self.lpo_risk_ = lpo_risk_from_weighted_graph(neigh_ind, neigh_dist, y_codes, self.p, self.k_max_)
        else:
            self.lpo_risk_ = lpo_risk_from_graph(neigh_ind, y_codes, self.p, self.k_max_)
        self.k_ = _argmin_k(self.lpo_risk_)
        self.reported_ = {"chosen_k": float(self.k_)}
        self._fit_X, self._fit_y = X, y_codes
        return self

    def _vote_k(self):
        return self.k_
