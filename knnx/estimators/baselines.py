"""Comparison baselines of the papers, wrapped as knnx estimators.

* :class:`SubsampledKNN`: kNN on a random fraction of the training set (the
  "random sampling" curve of Piro et al. 2012, Fig. 2).
* :class:`LinearSVMPlatt`: linear SVM with Platt's sigmoid posteriors (D'Ambrosio
  et al. 2012, eq. 27), scikit-learn's ``LinearSVC`` calibrated one class against the
  rest by ``CalibratedClassifierCV(method="sigmoid", cv=5, ensemble=False)``: the
  sigmoid's a and b are fitted on five-fold cross-validated decision values, then
  the SVM is refitted on all the data, as the paper describes; the per-class
  posteriors are normalised over classes.
* :class:`ITMLKNN`: kNN after an ITML metric (Davis et al. 2007) learned by knnx's
  :class:`~knnx.metric_learning.ITML`, the third column of Piro et al.'s Table 2.
"""

import numpy as np

from knnx.estimators.base import METRIC_CONSTRAINTS, NeighborsClassifierBase
from knnx.estimators.knn import KNNClassifier
from knnx.estimators.params import AnyOf, Interval, Literal, Options
from knnx.limits import C_RANGE, MAX_GRID, MAX_ITERATIONS, MAX_ROUNDS, MAX_SEED
from knnx.metric_learning.itml import ITML


class SubsampledKNN(NeighborsClassifierBase):
    """Plurality kNN on max(k, round(fraction * n)) training rows drawn without
    replacement (``seed``); the rows kept are ``sample_``.

    ``metric``, ``metric_params``, ``nominal``: the distance, as
    :class:`knnx.KNNClassifier`'s, fitted on the rows kept (the training set of the
    kNN that predicts: ``metric_``; X is first checked against the metric on all
    rows). ``"precomputed"``: X is the square training distance matrix at fit, the
    (n_queries, n_train) distances at prediction; the rows and columns of the rows
    kept are used.

    Parameters
    ----------
    k : int, default 5
        Number of neighbours of the plurality vote.
    fraction : float, default 1.0
        Share of the training rows kept (at least k), in (0, 1].
    seed : int, default 0
        Seed of the rows drawn.
    metric : str, default "euclidean"
        The distance, as :class:`knnx.KNNClassifier`'s.
    metric_params : dict or None, default None
        The metric's parameters, as :class:`knnx.KNNClassifier`'s.
    nominal : list of int or None, default None
        Columns of category codes, as :class:`knnx.KNNClassifier`'s.
    """

    _parameter_constraints = {
        "k": Interval(1, integer=True),
        "fraction": Interval(0, 1, low_open=True),
        "seed": Interval(0, MAX_SEED, integer=True),
        **METRIC_CONSTRAINTS,
    }
    _neighbor_param = ("k", 0)
    _neighbor_counts = ("k",)

    def __init__(self, k=5, fraction=1.0, seed=0, metric="euclidean", metric_params=None, nominal=None):
        self.k = k
        self.fraction = fraction
        self.seed = seed
        self.metric = metric
        self.metric_params = metric_params
        self.nominal = nominal

    def _columns(self, X):
        """The query columns the inner kNN takes (precomputed: the rows kept)."""
        return np.ascontiguousarray(X[:, self.sample_]) if self.metric == "precomputed" else X

    def fit(self, X, y):
        self._validate_params()
        X, y_codes = self._validate_fit_data(X, y)
        n = X.shape[0]
        if self.k > n:
            raise ValueError(f"SubsampledKNN: k={self.k} exceeds the training set size (n_samples = {n})")
        size = min(n, max(self.k, int(round(self.fraction * n))))
        self.sample_ = np.sort(np.random.default_rng(self.seed).choice(n, size=size, replace=False))
        metric = {"metric": self.metric, "metric_params": self.metric_params, "nominal": self.nominal}
        self._knn = KNNClassifier(k=self.k, **metric).fit(
            self._columns(X[self.sample_]), y_codes[self.sample_]
        )
        self.metric_ = self._knn.metric_  # fitted on the rows kept (the fit on all rows checked X)
        self._codes_seen = self._knn.classes_
        self.reported_ = {"prototype_fraction": size / n}
        return self

    def predict(self, X):
        X = self._validate_query(X)
        return self.classes_[self._knn.predict(self._columns(X))]

    def predict_proba(self, X):
        X = self._validate_query(X)
        proba = np.zeros((X.shape[0], len(self.classes_)))
        proba[:, self._codes_seen] = self._knn.predict_proba(self._columns(X))
        return proba


class LinearSVMPlatt(NeighborsClassifierBase):
    """Linear SVM (``LinearSVC(C=C)``) with Platt-scaled one-vs-rest posteriors.

    The sigmoid is fitted on min(5, smallest class count) folds; with a single class,
    or a class of one row, the posteriors are the training class frequencies.

    Parameters
    ----------
    C : float, default 1.0
        Inverse of the regularisation strength of ``LinearSVC``.
    seed : int, default 0
        ``random_state`` of the SVM and of the Platt folds.
    """

    _warm_up = False  # scikit-learn underneath: no numba kernel to compile before timing

    _parameter_constraints = {
        "C": Interval(*C_RANGE),
        "seed": Interval(0, MAX_SEED, integer=True),
    }

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


class ITMLKNN(NeighborsClassifierBase):
    """kNN in the space of an ITML Mahalanobis metric (:class:`knnx.metric_learning.ITML`
    with its defaults, ``random_state=seed``), plurality vote. It used to wrap
    metric-learn's ``ITML_Supervised``, which draws its pairs and sets its bounds
    otherwise (docs/metric-learning.md): the same seed gives another map than then.

    Parameters
    ----------
    k : int, default 5
        Number of neighbours of the plurality vote in the learned space.
    seed : int, default 0
        ``random_state`` of ITML (the constraint pairs drawn).
    """

    _parameter_constraints = {"k": Interval(1, integer=True), "seed": Interval(0, MAX_SEED, integer=True)}
    _neighbor_param = ("k", 0)
    _neighbor_counts = ("k",)

    def __init__(self, k=5, seed=0):
        self.k = k
        self.seed = seed

    def fit(self, X, y):
        self._validate_params()
        X, y_codes = self._validate_fit_data(X, y)
        if self.k > X.shape[0]:
            raise ValueError(f"ITMLKNN: k={self.k} exceeds the training set size (n_samples = {X.shape[0]})")
        self._itml = ITML(random_state=self.seed).fit(X, y_codes)  # one class: the identity
        self._knn = KNNClassifier(k=self.k).fit(self._map(X), y_codes)
        return self

    def _map(self, X):
        return self._itml.transform(X)

    def predict(self, X):
        X = self._validate_query(X)
        return self.classes_[self._knn.predict(self._map(X))]

    def predict_proba(self, X):
        X = self._validate_query(X)
        proba = np.zeros((X.shape[0], len(self.classes_)))
        proba[:, self._knn.classes_] = self._knn.predict_proba(self._map(X))
        return proba


# --- Sec. 6.3 of Nock et al. (2014): the small-domain contenders of GNNB -----------------
#
# scikit-learn estimators wrapped so that the runner and spec validation treat them like
# knnx's own: parameters checked against ``_parameter_constraints``, seeded by ``seed``,
# classes encoded as codes 0..C-1 internally and decoded in ``predict``.


class _SklearnBaseline(NeighborsClassifierBase):
    """Common fit/predict of the wrapped scikit-learn baselines.

    Subclasses implement ``_build(X, y_codes)`` returning a fitted scikit-learn
    classifier (on class codes). With a single class in the training data the class is
    predicted everywhere (the scikit-learn models refuse one class).
    """

    _warm_up = False  # scikit-learn underneath: no numba kernel to compile before timing

    def fit(self, X, y):
        self._validate_params()
        X, y_codes = self._validate_fit_data(X, y)
        self.reported_ = {}
        self._model = None if len(self.classes_) == 1 else self._build(X, y_codes)
        return self

    def predict(self, X):
        X = self._validate_query(X)
        if self._model is None:
            return np.full(X.shape[0], self.classes_[0])
        return self.classes_[np.asarray(self._model.predict(X), dtype=np.intp)]


def _inner_folds(y_codes, wanted=5):
    """Stratified inner folds: ``wanted``, fewer if the smallest class has fewer rows."""
    return int(min(wanted, np.bincount(y_codes).min()))


class SVMRBF(_SklearnBaseline):
    """SVM with a Gaussian (RBF) kernel, C and gamma tuned by inner cross-validation
    (Nock et al. 2014, Sec. 6.3: "SVM_RBF").

    Runs ``Pipeline(StandardScaler(), SVC(kernel="rbf", C, gamma))``: the features are
    standardised inside, on the training rows of each fit. C and gamma are chosen by
    ``GridSearchCV`` (accuracy, refit on all training rows) over stratified 5-fold
    cross-validation of the training part (``StratifiedKFold(5, shuffle=True,
    random_state=seed)``; fewer folds if the smallest class has fewer than 5 rows; no
    tuning, C = 1 and gamma = "scale", with fewer than 2):

    * C in {1, 10, 100, 1000},
    * gamma in {0.1, 1, 10} x gamma_scale, gamma_scale = 1 / (d * Var(X)) computed on the
      standardised training rows (scikit-learn's ``gamma="scale"``; 1/d unless a
      feature is constant).

    The paper says only "SVM with RBF kernel"; the grid and the scaling are ours. The
    chosen values are reported as ``best_C`` and ``best_gamma_factor`` (gamma /
    gamma_scale). Multi-class: SVC's one-against-one. Ties of the grid search: the
    first best cell in the order above (scikit-learn's rule).

    Parameters
    ----------
    cv : int, default 5
        Folds of the inner stratified cross-validation that tunes C and gamma.
    seed : int, default 0
        ``random_state`` of the inner folds.
    """

    C_GRID = (1.0, 10.0, 100.0, 1000.0)
    GAMMA_FACTORS = (0.1, 1.0, 10.0)

    _parameter_constraints = {
        "cv": Interval(2, MAX_GRID, integer=True),
        "seed": Interval(0, MAX_SEED, integer=True),
    }

    def __init__(self, cv=5, seed=0):
        self.cv = cv
        self.seed = seed

    def _build(self, X, y_codes):
        from sklearn.model_selection import GridSearchCV, StratifiedKFold
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler
        from sklearn.svm import SVC

        Xs = StandardScaler().fit_transform(X)
        var = float(Xs.var())
        scale = 1.0 / (X.shape[1] * var) if var > 0 else 1.0
        pipe = make_pipeline(StandardScaler(), SVC(kernel="rbf", gamma=scale))
        folds = _inner_folds(y_codes, self.cv)
        if folds < 2:
            self.reported_ = {"best_C": 1.0, "best_gamma_factor": 1.0}
            return pipe.fit(X, y_codes)
        grid = {"svc__C": list(self.C_GRID), "svc__gamma": [f * scale for f in self.GAMMA_FACTORS]}
        cv = StratifiedKFold(folds, shuffle=True, random_state=self.seed)
        search = GridSearchCV(pipe, grid, cv=cv, scoring="accuracy", n_jobs=None).fit(X, y_codes)
        best = search.best_params_
        self.best_params_ = {"C": best["svc__C"], "gamma": best["svc__gamma"]}
        self.reported_ = {"best_C": float(best["svc__C"]), "best_gamma_factor": best["svc__gamma"] / scale}
        return search.best_estimator_


class SVMLinear(_SklearnBaseline):
    """Linear SVM (Nock et al. 2014, Sec. 6.3: "SVM_L").

    Runs ``Pipeline(StandardScaler(), LinearSVC(C=C, max_iter=10000,
    random_state=seed))``: features standardised inside; squared hinge loss, L2
    penalty, one-vs-rest (scikit-learn's defaults). The paper gives no C; C = 1, not
    tuned. max_iter is raised from 1000 so that liblinear converges on the paper's
    domains.

    Parameters
    ----------
    C : float, default 1.0
        Inverse of the regularisation strength of ``LinearSVC`` (not tuned).
    seed : int, default 0
        ``random_state`` of ``LinearSVC``.
    """

    _parameter_constraints = {
        "C": Interval(*C_RANGE),
        "seed": Interval(0, MAX_SEED, integer=True),
    }

    def __init__(self, C=1.0, seed=0):
        self.C = C
        self.seed = seed

    def _build(self, X, y_codes):
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler
        from sklearn.svm import LinearSVC

        svm = LinearSVC(C=self.C, max_iter=10000, random_state=self.seed)
        return make_pipeline(StandardScaler(), svm).fit(X, y_codes)


SGD_BUDGETS = ("T", "Tk/m", "2m", "3m")


class SGDBudget(_SklearnBaseline):
    """Linear SVM trained by stochastic gradient descent for a fixed number of updates
    (Nock et al. 2014, Sec. 6.3: SGD_1 .. SGD_4).

    Runs scikit-learn's ``SGDClassifier(loss="hinge", shuffle=False,
    random_state=seed)`` (L2 penalty alpha = 1e-4, the "optimal" learning-rate
    schedule, one-vs-rest) on standardised features (a ``StandardScaler`` fitted on the
    training rows), fed by ``partial_fit`` so that it makes exactly ``n_updates_``
    single-example updates. One "iteration" of SGD is read as one single-example update,
    because the paper argues that "each iteration of SGD contributes to classify all
    examples in the training sample" while one boosting iteration of GNNB/UNN (one
    example leveraged) affects Theta(k) examples. With m training rows and T = m
    boosting iterations (the setting of GNNB and UNN in the paper):

    * ``budget="T"`` (SGD_1): T = m updates, one epoch;
    * ``budget="Tk/m"`` (SGD_2): T k / m = k updates ("the equivalent" of GNNB's T
      iterations); k is the parameter ``k`` (the paper does not say which of its k);
    * ``budget="2m"`` (SGD_3) and ``budget="3m"`` (SGD_4): 2 m and 3 m updates.

    The updates are made epoch by epoch: each full epoch visits the training rows in a
    fresh seeded random order; a final partial epoch of r < m updates visits r rows
    drawn without replacement. In the multi-class case every example updates each of
    the one-vs-rest linear models once (the count is per model). The learning-rate
    schedule continues across epochs (scikit-learn's ``t_``).

    Parameters
    ----------
    budget : {"T", "Tk/m", "2m", "3m"}, default "T"
        The number of single-example updates (SGD_1 .. SGD_4, see above).
    k : int, default 5
        The k of ``budget="Tk/m"``.
    seed : int, default 0
        ``random_state`` of the SGD and of the epochs' orders.
    """

    _parameter_constraints = {
        "budget": Options(*SGD_BUDGETS),
        "k": Interval(1, MAX_ITERATIONS, integer=True),  # budget "Tk/m" makes k updates
        "seed": Interval(0, MAX_SEED, integer=True),
    }

    def __init__(self, budget="T", k=5, seed=0):
        self.budget = budget
        self.k = k
        self.seed = seed

    def n_updates(self, m):
        """Updates made on m training rows."""
        return {"T": m, "Tk/m": self.k, "2m": 2 * m, "3m": 3 * m}[self.budget]

    def _build(self, X, y_codes):
        from sklearn.linear_model import SGDClassifier
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        m = X.shape[0]
        scaler = StandardScaler().fit(X)
        Xs = scaler.transform(X)
        sgd = SGDClassifier(loss="hinge", shuffle=False, random_state=self.seed)
        rng = np.random.default_rng(self.seed)
        classes = np.arange(len(self.classes_))
        self.n_updates_ = self.n_updates(m)
        epochs, rest = divmod(self.n_updates_, m)
        for _ in range(epochs):
            order = rng.permutation(m)
            sgd.partial_fit(Xs[order], y_codes[order], classes=classes)
        if rest:
            order = rng.choice(m, size=rest, replace=False)
            sgd.partial_fit(Xs[order], y_codes[order], classes=classes)
        self.reported_ = {"n_updates": float(self.n_updates_)}
        return make_pipeline(scaler, sgd)


ADABOOST_BASES = ("cart2", "cart3", "random3", "random_full")


class AdaBoostTrees(_SklearnBaseline):
    """AdaBoost with decision trees (Nock et al. 2014, Sec. 6.3: ADABOOST_c2, _c3, _r3, _ru).

    Runs scikit-learn's ``AdaBoostClassifier`` (SAMME, the multi-class discrete
    AdaBoost; learning rate 1) on the raw features (trees are invariant to feature
    scaling), with the weak learner ``base``:

    * ``"cart2"``, ``"cart3"``: ``DecisionTreeClassifier(max_depth=2 or 3)``, the
      optimised trees of the paper's ADABOOST+C4.5. scikit-learn's CART stands in for
      C4.5: binary splits chosen by the Gini index (``criterion="gini"``) instead of
      C4.5's gain ratio, no pruning (depth-bounded trees);
    * ``"random3"``, ``"random_full"``: the paper's "non-optimized weak learner, which
      returns random trees", read as ``DecisionTreeClassifier(splitter="random",
      max_features=1)``: at every node one feature drawn at random and a threshold
      drawn uniformly between its minimum and maximum over the node's rows; depth 3 or
      unbounded (grown until the leaves are pure). The leaf predictions are the
      weighted majority class, as in any AdaBoost weak learner.

    Rounds: ``n_rounds``, None = the number of training rows m ("In all four flavors
    of ADABOOST, the number of boosting rounds equals that of GNNB and UNN", T = m).
    ``max_rounds`` caps it (None: no cap). scikit-learn stops early when a weak
    learner fits the weighted training data perfectly (its weight is then 1 and it
    decides alone) or has error >= 1 - 1/C; the rounds actually made are reported as
    ``rounds``. Trees are seeded from ``seed`` (``random_state``).

    Parameters
    ----------
    base : {"cart2", "cart3", "random3", "random_full"}, default "cart3"
        The weak learner (see above).
    n_rounds : int or None, default None
        Boosting rounds; None: the number of training rows m.
    max_rounds : int or None, default None
        A cap on the rounds (None: no cap).
    seed : int, default 0
        ``random_state`` of the trees and of the boosting.
    """

    _parameter_constraints = {
        "base": Options(*ADABOOST_BASES),
        "n_rounds": AnyOf(Interval(1, MAX_ROUNDS, integer=True), Literal(None)),
        "max_rounds": AnyOf(Interval(1, integer=True), Literal(None)),
        "seed": Interval(0, MAX_SEED, integer=True),
    }

    @classmethod
    def _data_problems(cls, params, n_samples, n_features, n_classes):
        rounds = n_samples if params.get("n_rounds") is None else params["n_rounds"]
        if params.get("max_rounds") is not None:
            rounds = min(rounds, params["max_rounds"])
        if rounds > MAX_ROUNDS:
            return [
                f"n_rounds=None gives {rounds} rounds (one per training row), more than the limit of "
                f"{MAX_ROUNDS}; set n_rounds or max_rounds"
            ]
        return []

    def __init__(self, base="cart3", n_rounds=None, max_rounds=None, seed=0):
        self.base = base
        self.n_rounds = n_rounds
        self.max_rounds = max_rounds
        self.seed = seed

    def _build(self, X, y_codes):
        from sklearn.ensemble import AdaBoostClassifier
        from sklearn.tree import DecisionTreeClassifier

        depth = {"cart2": 2, "cart3": 3, "random3": 3, "random_full": None}[self.base]
        if self.base.startswith("cart"):
            tree = DecisionTreeClassifier(max_depth=depth)
        else:
            tree = DecisionTreeClassifier(max_depth=depth, splitter="random", max_features=1)
        rounds = X.shape[0] if self.n_rounds is None else self.n_rounds
        if self.max_rounds is not None:
            rounds = min(rounds, self.max_rounds)
        model = AdaBoostClassifier(tree, n_estimators=rounds, random_state=self.seed).fit(X, y_codes)
        self.reported_ = {"rounds": float(len(model.estimators_))}
        return model
