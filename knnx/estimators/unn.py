"""UNN: boosted leveraging of nearest neighbours (Piro et al. 2012) and its posteriors
(D'Ambrosio et al. 2012).

The leveraged k-NN rule is h_c(x) = sum over j in NN_k(x) of alpha_jc y_jc (eq. 6),
one coefficient per (example, class). Training is Algorithm 1 of Piro et al., one
class against the rest at a time, on the leave-one-out neighbour graph of the
training set and its reciprocal neighbourhoods (CSR, never the m x m matrix).
"""

import numpy as np

from knnx._kernels import Codes, lazy
from knnx.estimators.base import GRAPHS, METRIC_CONSTRAINTS
from knnx.estimators.leveraged import PROTOTYPES, TIES, LeveragedNNClassifier
from knnx.estimators.params import AnyOf, Interval, Literal, Options
from knnx.limits import MAX_GRID, MAX_ITERATIONS, MAX_SEED

K = lazy("knnx._kernels.unn")

LOSSES = Codes(
    K,
    exp="EXP",
    squared="SQUARED",
    logistic="LOGISTIC",
    binary_logistic="BINARY_LOGISTIC",
    matsushita="MATSUSHITA",
    amari="AMARI",
)
STEPS = Codes(K, closed_form="STEP_CLOSED_FORM", fast="STEP_FAST", exact="STEP_EXACT")
SMOOTHINGS = Codes(K, raw="SMOOTH_RAW", normalized="SMOOTH_NORMALIZED")


def surrogate_loss(loss, x, amari_alpha=0.5):
    """psi(x) of a UNN loss, elementwise (for plots, tests and reports)."""
    c = (1.0 - amari_alpha) / 2.0
    return np.array([K.loss_value(LOSSES[loss], c, float(v)) for v in np.ravel(x)]).reshape(np.shape(x))


class UNNClassifier(LeveragedNNClassifier):
    """Universal Nearest Neighbours: a k-NN rule whose votes are learned by boosting.

    Parameters
    ----------
    k : int, default 5
        Neighbours in the rule, 1 <= k < n_samples.
    loss : str, default "exp"
        Surrogate psi minimised by Algorithm 1 (x is the edge y_c h_c):

        ``exp`` exp(-x); ``squared`` (1 - x)^2; ``logistic`` ln(1 + e^-x) (Table 1 of
        Piro et al.); and the balanced losses of D'Ambrosio et al. (Table 1 there):
        ``binary_logistic`` log2(1 + 2^-x), ``matsushita`` -x + sqrt(1 + x^2), and
        ``amari`` (see ``amari_alpha``). The logistic loss of D'Ambrosio et al.,
        log2(1 + e^-x), is ``logistic`` up to a factor: same steps, same posteriors.
    theta : float, default 1.0
        T = max(1, round(theta * n_samples)) iterations per class, when ``n_iter`` is
        None (the papers' theta = T/m).
    n_iter : int or None, default None
        T, iterations per class (overrides ``theta``).
    chooser : {"boosting", "lazy"}, default "boosting"
        Weak index chooser. ``boosting`` [I.0.b]: at every iteration the example with
        the largest |delta_j| under the current weights (an example may come back);
        exact ties (equal float64 keys) go to the smallest training index. The key
        of j is the closed form of ``step`` (for ``exact``: ``closed_form``) from
        w+_j and w-_j, each the correctly rounded sum of the current weights in R(j)
        (a function of their multiset, whatever the order), recomputed from scratch
        after every step for the examples whose reciprocal neighbourhood holds a
        moved point, never updated by differences: the keys equal a from-scratch
        computation bit for bit. The step taken sums w+ and w- afresh in increasing
        i (it can differ from the key in the last bit). ``lazy`` [I.0.a]: each
        example in turn (index order, or a permutation drawn from ``seed``), cycling
        if T > m.
    smoothing : True, False, "raw" or "normalized", default True (= "raw")
        Offset eps added to w+ and w- before computing delta (eq. 13), so that a pure
        reciprocal neighbourhood gets a finite step. ``raw``: eps = 1/m on the
        unnormalised weights, as eq. (13) is printed (weights start at -psi'(0), e.g.
        1 for exp). ``normalized``: eps = 1/m on weights normalised to sum 1, i.e.
        eps = (sum of the current weights, correctly rounded) / m, Schapire and
        Singer's choice; it
        changes every iteration, so the boosting chooser then scans all m examples
        per step (O(T m) instead of O(T k n_j log m)). ``False``: no smoothing; an
        example whose step is infinite is skipped (delta = 0, counted in
        ``n_infinite_``). Never applied to the squared loss, whose step is finite.
    step : {"closed_form", "fast", "exact"}, default "closed_form"
        How delta_j solves eq. (10). ``closed_form``: Table 1 of Piro et al. for exp
        and squared (exact) and logistic (exact while the neighbourhood's weights are
        equal); eq. (26) with Table 2 of D'Ambrosio et al. for the other losses.
        ``fast``: eq. (26) for every loss (squared: delta = 2W - 1). ``exact``: the
        root of (10) by bracketed Newton for every loss, so every iteration lowers the
        surrogate risk; the chooser still ranks examples by the closed form.
    amari_alpha : float in (-1, 1), default 0.5
        Parameter of the ``amari`` loss, psi(x) = (1 + c x)^(-(1 - c)/c) / (1 - c)
        with c = (1 - alpha)/2, defined for x > -1/c; alpha -> 1 gives exp(-x).
    seed : int or None, default None
        Order of the ``lazy`` chooser (None: index order, the paper's WIC(t) = t).
    prototypes : {"leveraged", "all"}, default "leveraged"
        Training rows searched at prediction. ``leveraged``: the prototypes only
        (alpha_j != 0), Piro et al.'s filtering and knnx's documented reading of it
        (voting among all rows with alpha = 0 for the others leaves many test points
        without a vote at small theta); fewer than k neighbours if fewer are kept,
        every score 0 if none. ``all``: the k nearest of all training rows, rows with
        alpha_j = 0 taking a neighbour slot and voting 0 (eq. 6 taken literally).
    tie : {"frequent", "nearest", "lowest", "random"}, default "frequent"
        Which class ``predict`` returns when several share the top score (exact
        float64 equality). ``frequent``: the tied class most frequent in the training
        set, then the smallest class code. ``nearest``: the class of the nearest searched
        training row (neighbour order: distance, then index) that belongs to a tied class; if none
        does (or nothing is searched), ``frequent``. ``lowest``: the smallest class code
        (the first in ``classes_``). ``random``: uniform among the tied classes: with
        u_q the q-th of ``numpy.random.default_rng(seed).random(n_queries)`` (seed None
        counts as 0), the tied class at position min(floor(u_q s), s - 1) of the s tied
        classes in ``classes_`` order, so the same seed and query array give the same
        predictions. The training curve's ``train_error`` always uses ``frequent``.
    metric : str, default "euclidean"
        The distance of every neighbourhood, training graph and prediction alike: one
        of :data:`knnx.neighbors.metrics.METRIC_NAMES`, fitted at ``fit`` on the
        training rows only (``metric_``). heom, hvdm, vdm and gower accept NaN;
        ``"precomputed"``: X is the square training distance matrix at fit and the
        (n_queries, n_train) distances at prediction (with ``prototypes="leveraged"``
        the prototypes' columns are searched).
    metric_params : dict or None, default None
        The metric's parameters (minkowski ``p``, seuclidean ``V``, mahalanobis ``VI``).
    nominal : list of int or None, default None
        Columns of X holding category codes (heom, hvdm, gower, hamming); set by the
        experiment runner for a dataset loaded with ``categorical: keep``.
    graphs : knnx.GraphStore or None, default None
        Neighbour graphs to reuse or a precomputed graph to use (see
        :mod:`knnx.neighbors.graphs`); results are the same with or without.

    Attributes
    ----------
    alpha_ : ndarray of shape (n_samples, n_classes)
        Leveraging coefficients alpha_jc of the training examples.
    metric_ : knnx.neighbors.metrics.Metric
        The metric fitted on the training rows.
    prototypes_ : ndarray of int
        Training indices with a non-zero leveraging vector (the only points searched
        at prediction with ``prototypes="leveraged"``).
    prototype_fraction_ : float
        len(prototypes_) / n_samples: the fraction actually kept. With the boosting
        chooser an example can be chosen again, so it can be below theta; with
        several classes the union over classes can exceed it.
    n_iter_ : int
        T used per class.
    curve_ : dict of ndarrays
        ``iteration`` (0..T), ``surrogate_risk`` (eq. 4, averaged over classes) and
        ``train_error`` (argmax rule on the leave-one-out neighbourhoods of the
        training set) after each iteration of every class.
    n_infinite_ : int
        Steps skipped because delta_j was infinite (only without smoothing).
    reported_ : dict
        ``{"prototype_fraction": ...}``, recorded by the experiment runner.
    classes_, n_features_in_

    Notes
    -----
    * Training neighbourhoods exclude the point itself (:func:`knnx.kneighbors`
      leave-one-out graph under ``metric_``; duplicates are kept), ordered by
      (distance, index).
    * alpha_j in R^C, initialised to 0 (Algorithm 1 prints R^m: a typo).
    * Two classes: class 1 is trained; class 0 has the same edges, so
      alpha_j0 = alpha_j1 and h_0 = -h_1 (identical to training both).
    * Logistic weight update: Table 1 prints
      w exp(-delta r) / (1 - w (1 + exp(-delta r))); eq. (11) gives
      w exp(-delta r) / (1 - w (1 - exp(-delta r))). knnx stores edges and evaluates
      w = -psi'(edge) (eq. 11 itself), so no table update is needed.
    * Prediction (``prototypes="leveraged"``) votes among the k nearest prototypes
      (fewer if fewer are kept; with no prototype every score is 0). Ties of h: see
      ``tie`` (default: the class most frequent in the training set, then the
      smallest class code).
    * ``predict_proba``: p_c = psi'(-h_c) / (psi'(h_c) + psi'(-h_c)) (eq. 11 of
      D'Ambrosio et al.; for exp 1 / (1 + exp(-2 h)), for the balanced losses their
      link (25)), normalised over the classes.
    * Numeric extremes. Pure reciprocal neighbourhoods (well-separated classes) would
      need delta = +-inf: smoothing (the default) makes every step finite and such
      data is classified perfectly. With ``smoothing=False`` these steps are skipped
      (``n_infinite_``, for every ``step``, including ``exact``): if all are, alpha is
      0, no prototype is kept, every score is 0, ``predict`` returns the most frequent
      training class and ``predict_proba`` is uniform, all finite. Data whose squared
      distances would overflow or underflow in float64 is refused by
      :func:`knnx.kneighbors` with a one-line :class:`knnx.errors.DataError` (at fit,
      and for queries at prediction). k < n_samples (k = n_samples - 1 is allowed),
      else ValueError. Identical rows, a class of one example and string labels give
      finite scores, posteriors and curves. ``step="fast"`` with the squared loss
      (delta = 2W - 1) can keep leveraging one example (documented in the README):
      finite, but not a descent.
    """

    _parameter_constraints = {
        "k": Interval(1, integer=True),
        "loss": Options(*LOSSES),
        "theta": Interval(0, None, low_open=True),
        "n_iter": AnyOf(Interval(1, MAX_ITERATIONS, integer=True), Literal(None)),
        "chooser": Options("boosting", "lazy"),
        "smoothing": AnyOf(Literal(True, False), Options(*SMOOTHINGS)),
        "step": Options(*STEPS),
        "amari_alpha": Interval(-1, 1, low_open=True, high_open=True),
        "seed": AnyOf(Interval(0, MAX_SEED, integer=True), Literal(None)),
        "prototypes": Options(*PROTOTYPES),
        "tie": Options(*TIES),
        **METRIC_CONSTRAINTS,
        "graphs": GRAPHS,
    }
    _neighbor_param = ("k", 1)
    _neighbor_counts = ("k",)

    @classmethod
    def _data_problems(cls, params, n_samples, n_features, n_classes):
        if params.get("n_iter") is not None or "theta" not in params:
            return []
        T = params["theta"] * n_samples  # a float: theta may be as large as float64 goes
        if T > MAX_ITERATIONS:
            return [
                f"theta={params['theta']!r} gives T = theta x {n_samples} training rows = {T:.4g} iterations "
                f"per class, more than the limit of {MAX_ITERATIONS}"
            ]
        return []

    def __init__(
        self,
        k=5,
        loss="exp",
        theta=1.0,
        n_iter=None,
        chooser="boosting",
        smoothing=True,
        step="closed_form",
        amari_alpha=0.5,
        seed=None,
        prototypes="leveraged",
        tie="frequent",
        metric="euclidean",
        metric_params=None,
        nominal=None,
        graphs=None,
    ):
        self.k = k
        self.loss = loss
        self.theta = theta
        self.n_iter = n_iter
        self.chooser = chooser
        self.smoothing = smoothing
        self.step = step
        self.amari_alpha = amari_alpha
        self.seed = seed
        self.prototypes = prototypes
        self.tie = tie
        self.metric = metric
        self.metric_params = metric_params
        self.nominal = nominal
        self.graphs = graphs

    def _codes(self):
        smoothing = "raw" if self.smoothing is True else self.smoothing
        smooth_code = K.SMOOTH_NONE if smoothing is False else SMOOTHINGS[smoothing]
        return LOSSES[self.loss], (1.0 - self.amari_alpha) / 2.0, STEPS[self.step], smooth_code

    def fit(self, X, y):
        """Train the leveraging coefficients by Algorithm 1. Returns self."""
        self._validate_params()
        X, y_codes = self._validate_fit_data(X, y)
        self._fit_path(X, y_codes, [])
        return self

    def _fit_path(self, X, y_codes, snap_at):
        """Algorithm 1 on validated data; the full-size alpha after each count in
        ``snap_at`` (increasing, <= T) is returned, the final state is stored."""
        m = X.shape[0]
        if self.k >= m:
            raise ValueError(
                f"UNNClassifier: k={self.k} must be below the training set size (n_samples = {m})"
            )
        n_classes = len(self.classes_)
        T = self.n_iter if self.n_iter is not None else max(1, int(round(self.theta * m)))
        self.n_iter_ = T
        train_classes, schedule = self._prepare_fit(y_codes, T, snap_at)
        loss, c, step, smoothing = self._codes()
        if n_classes == 1:
            self.alpha_ = np.zeros((m, 1))
            self.curve_ = {
                "iteration": np.arange(T + 1),
                "surrogate_risk": np.full(T + 1, K.loss_value(loss, c, 0.0)),
                "train_error": np.zeros(T + 1),
            }
            self.n_infinite_ = 0
            self._set_prototypes(X, y_codes)
            return [self.alpha_.copy() for _ in snap_at]
        graph = self._graph(X)
        alpha, risk, errors, _, n_inf, snaps = K.unn_fit(
            graph,
            y_codes,
            n_classes,
            train_classes,
            schedule,
            K.UNNRule(loss, c, step, smoothing),
            self._tie_order,
        )
        self.alpha_ = self._mirror(alpha)
        self.curve_ = {"iteration": np.arange(T + 1), "surrogate_risk": risk, "train_error": errors}
        self.n_infinite_ = int(n_inf)
        self._set_prototypes(X, y_codes)
        return [self._mirror(a) for a in snaps]

    def _predict_path(self, X, y, snap_at, X_query):
        """Predictions on ``X_query`` of the rules after each count in ``snap_at``."""
        self._validate_params()
        X, y_codes = self._validate_fit_data(X, y)
        alphas = self._fit_path(X, y_codes, snap_at)
        final = self.alpha_
        out = []
        for a in alphas:
            self.alpha_ = a
            self._set_prototypes(X, y_codes)
            out.append(self.predict(X_query))
        self.alpha_ = final
        self._set_prototypes(X, y_codes)
        return out

    def _set_prototypes(self, X, y_codes):
        self._set_search_sets([(X, self.alpha_, None)], y_codes)

    def _h(self, X):
        return self._search_scores(self._validate_query(X), 0)

    def decision_function(self, X):
        """h(x): shape (n,) for two classes (the score of classes_[1]), else (n, n_classes)."""
        h = self._h(X)
        return h[:, 1] if len(self.classes_) == 2 else h

    def predict(self, X):
        """argmax_c h_c(x) (ties: see Notes)."""
        return self._vote(*self._search_scores(self._validate_query(X), 0, with_classes=True))

    def predict_proba(self, X):
        """Posterior estimates (eq. 11 / 25 of D'Ambrosio et al.), rows summing to 1."""
        loss, c, _, _ = self._codes()
        return K.unn_proba(self._h(X), loss, c)


def stratified_folds(y_codes, n_folds, seed):
    """Fold number of each row: every class's rows are shuffled (``seed``) and dealt
    round-robin, so each fold holds each class's rows to within one."""
    rng = np.random.default_rng(seed)
    fold = np.empty(len(y_codes), dtype=np.intp)
    start = 0
    for cls in np.unique(y_codes):
        rows = rng.permutation(np.flatnonzero(y_codes == cls))
        fold[rows] = (start + np.arange(len(rows))) % n_folds
        start += len(rows)
    return fold


class UNNCVClassifier(UNNClassifier):
    """UNN whose theta is chosen by inner cross-validation on the training data.

    theta runs over {1/n_thetas, 2/n_thetas, ..., 1} (default 0.1, ..., 1.0, as in
    Piro et al.'s experiments). For each inner fold one UNN run of T = m_fold
    iterations is made and its leveraging coefficients are read off after
    round(theta * m_fold) iterations (the rule after T' iterations is a prefix of the
    run, so this equals separate fits). The theta of least mean inner error wins
    (ties: the smallest theta, fewer prototypes); UNN is then refitted on all the
    training data with that theta. When an inner training fold would hold k rows
    or fewer (or y has one class), there is no selection: theta = 1 and
    ``cv_error_`` is inf for the other thetas and 0 for theta = 1.

    Parameters
    ----------
    n_thetas : int, default 10
    cv : int, default 2
        Inner folds, stratified, drawn from ``seed`` (0 if None).
    k, loss, chooser, smoothing, step, amari_alpha, seed, prototypes, tie, metric,
    metric_params, nominal, graphs : as :class:`UNNClassifier` (inner folds and the
        final fit alike: each inner fit fits the metric on its inner training fold,
        the final fit on all the training rows).

    Attributes
    ----------
    theta_ : float
        The chosen theta.
    cv_error_ : ndarray of shape (n_thetas,)
        Mean inner error per theta.
    reported_ : dict
        ``{"chosen_theta": ..., "prototype_fraction": ...}``.
    """

    _parameter_constraints = {
        **{k: v for k, v in UNNClassifier._parameter_constraints.items() if k not in ("theta", "n_iter")},
        "n_thetas": Interval(1, MAX_GRID, integer=True),
        "cv": Interval(2, MAX_GRID, integer=True),
    }

    def __init__(
        self,
        k=5,
        loss="exp",
        n_thetas=10,
        cv=2,
        chooser="boosting",
        smoothing=True,
        step="closed_form",
        amari_alpha=0.5,
        seed=None,
        prototypes="leveraged",
        tie="frequent",
        metric="euclidean",
        metric_params=None,
        nominal=None,
        graphs=None,
    ):
        self.k = k
        self.loss = loss
        self.n_thetas = n_thetas
        self.cv = cv
        self.chooser = chooser
        self.smoothing = smoothing
        self.step = step
        self.amari_alpha = amari_alpha
        self.seed = seed
        self.prototypes = prototypes
        self.tie = tie
        self.metric = metric
        self.metric_params = metric_params
        self.nominal = nominal
        self.graphs = graphs

    def fit(self, X, y):
        """Choose theta by inner CV, then fit UNN on all of (X, y). Returns self."""
        self._validate_params()
        X, y_codes = self._validate_fit_data(X, y)
        thetas = np.arange(1, self.n_thetas + 1) / self.n_thetas
        fold = stratified_folds(y_codes, self.cv, 0 if self.seed is None else self.seed)
        errors = np.zeros(len(thetas))
        sizes = np.bincount(fold, minlength=self.cv)
        if len(self.classes_) == 1 or np.any(len(y_codes) - sizes <= self.k) or np.any(sizes == 0):
            # Too few rows for inner folds with k neighbours (or nothing to learn):
            # no selection, theta = 1.
            errors[:-1] = np.inf
            folds = []
        else:
            folds = range(self.cv)
        for f in folds:
            tr, te = np.flatnonzero(fold != f), np.flatnonzero(fold == f)
            snaps = [max(1, int(round(t * len(tr)))) for t in thetas]
            inner = UNNClassifier(**self._unn_params(n_iter=snaps[-1]))
            for s, pred in enumerate(inner._predict_path(X[tr], y_codes[tr], snaps, X[te])):
                errors[s] += np.mean(pred != y_codes[te]) / self.cv
        self.cv_error_ = errors
        self.theta_ = float(thetas[int(np.argmin(errors))])
        final = UNNClassifier(**self._unn_params(theta=self.theta_)).fit(X, y_codes)
        for name in ("alpha_", "prototypes_", "prototype_fraction_", "n_iter_", "curve_", "n_infinite_"):
            setattr(self, name, getattr(final, name))
        self._tie_order, self._search = final._tie_order, final._search
        self.reported_ = {"chosen_theta": self.theta_, "prototype_fraction": float(self.prototype_fraction_)}
        return self

    def _unn_params(self, **extra):
        keep = (
            "k",
            "loss",
            "chooser",
            "smoothing",
            "step",
            "amari_alpha",
            "seed",
            "prototypes",
            "tie",
            "metric",
            "metric_params",
            "nominal",
            "graphs",
        )
        return {**{name: getattr(self, name) for name in keep}, **extra}
