"""GNNB: gentle nearest-neighbour boosting over proper scoring rules (Nock et al. 2014).

The leveraged k-NN rule of UNN, h_c(x) = sum over j in NN_k(x) of alpha_jc y_jc
(eq. 16), trained by Algorithm 1 of Nock et al.: each leveraging step is a
Newton-Raphson step with an adaptive rate (Theorem 3), linear in the weighted edge
eta(c, j) of the example's inverse neighbourhood (eq. 9-10), and the weights follow
eq. (11). Training runs one class against the rest on the leave-one-out neighbour
graph and its reciprocal CSR (knnx.neighbors.search), classes in parallel (numba prange).

With ``metric``, each feature block is its own space: the metric is fitted on the
block's training rows as they are searched (its columns, after ``block_norm``), and
ranks that block's neighbours, training graph and prediction alike (see
:class:`GNNBClassifier`).
"""

import numpy as np

from knnx._kernels import Codes, lazy
from knnx.errors import DataError
from knnx.estimators.base import GRAPHS, METRIC_CONSTRAINTS
from knnx.estimators.leveraged import PROTOTYPES, TIES, LeveragedNNClassifier
from knnx.estimators.params import AnyOf, Interval, Literal, Options
from knnx.limits import MAX_ITERATIONS, MAX_SEED
from knnx.neighbors.metrics import METRICS

G = lazy("knnx._kernels.gnnb")
K = lazy("knnx._kernels.unn")

PHIS = Codes(
    K, squared="SQUARED", logistic="LOGISTIC", binary_logistic="BINARY_LOGISTIC", matsushita="MATSUSHITA"
)
BLOCK_NORMS = ("l2", "l1", "none")


def _has_nominal(nominal):
    return nominal is not None and len(nominal) > 0


def scales_rows(metric):
    """Whether ``block_norm`` may scale the rows searched under ``metric``: the metrics
    of numeric attributes only (not those taking nominal codes or missing values, whose
    attributes the metric normalises itself, nor precomputed distances)."""
    info = METRICS.get(metric)
    return info is not None and not (info.nominal or info.missing) and metric != "precomputed"


def balanced_loss(phi, x):
    """psi_phi(x), the balanced convex loss of a permissible phi (eq. 4), elementwise."""
    code = PHIS[phi]
    return np.array([G.bcl_value(code, float(v)) for v in np.ravel(x)]).reshape(np.shape(x))


def normalize_rows(X, norm):
    """Rows scaled to unit L1 or L2 norm (``norm`` = "l1" / "l2"; "none": unchanged).
    All-zero rows stay zero. Each row is first divided by its largest |value|, so that
    norms of rows near the float64 limits (1e-300, 1e300) neither overflow nor underflow."""
    if norm == "none":
        return X
    top = np.abs(X).max(axis=1) if X.shape[1] else np.zeros(X.shape[0])
    top[top == 0.0] = 1.0
    X = X / top[:, None]
    scale = np.abs(X).sum(axis=1) if norm == "l1" else np.sqrt(np.einsum("ij,ij->i", X, X))
    scale[scale == 0.0] = 1.0
    return np.ascontiguousarray(X / scale[:, None])


class GNNBClassifier(LeveragedNNClassifier):
    """Gentle Nearest Neighbours Boosting (GNNB and GNNB*), with the divide-and-conquer
    scheme of Sec. 6.4.

    Parameters
    ----------
    k : int, default 5
        Neighbours in the rule, 1 <= k < n_samples.
    phi : {"logistic", "squared", "binary_logistic", "matsushita"}, default "logistic"
        Permissible function of Table 1 (rows B, A, C, D); GNNB minimises its balanced
        convex loss psi_phi: log2(1 + e^-x), (1 - x)^2, log2(1 + 2^-x),
        -x + sqrt(1 + x^2).
    epsilon : float in (0, 1), default 0.5
        delta_j = 2 (1 - epsilon) eta(c, j) / (H*_psi n_j) (eq. 10).
    n_iter : int or None, default None
        T, iterations per class; None: T = n_samples (the paper's setting).
    chooser : {"lazy", "largest_delta"}, default "lazy"
        Weak index chooser. ``lazy``: each example in turn, in index order or in a
        permutation drawn from ``seed``, cycling if T > m (with T = m each example is
        leveraged exactly once, as in Sec. 6.3; the paper does not give the order).
        ``largest_delta`` (GNNB*, Sec. 4.4 and 6.6): at every iteration the example of
        largest current |delta_j| (an example may come back); exact ties (equal
        float64 keys) go to the smallest training index. The key of j is
        |delta_j| = 2 (1 - epsilon) |eta_j| / (H* n_j) with eta_j the correctly
        rounded sum of its terms w_i y_ic y_jc (a function of their multiset, whatever
        the order). Each eta_j is held exactly, as an unevaluated sum of two doubles to
        which the exact change of every moved weight is added (taken afresh when it
        no longer fits in two doubles), and after every step the keys of the examples
        whose inverse neighbourhood holds a point whose weight moved are rounded from
        it: the keys equal a from-scratch computation bit for bit. The keys sit in
        blocks of about sqrt(m) indices that keep their maximum, so a choice costs a
        scan of the block maxima plus a rescan of the blocks whose leader fell. The
        step taken sums eta afresh in increasing i (it can differ from the key in the
        last bit).
    n_splits : int, default 1
        s: the features are split into s regular blocks (``numpy.array_split`` of the
        column indices: sizes differ by at most one), one GNNB is trained per block,
        and the blocks' posteriors are averaged arithmetically (Sec. 6.4).
    block_norm : {"l2", "l1", "none"} or None, default None
        Each block's rows are scaled to unit norm before the neighbour search (fit
        and predict alike). None: "l2" when n_splits > 1, the metric takes numeric
        attributes only and no column is ``nominal``; "none" otherwise. "l1" and "l2"
        are refused with the metrics that take nominal codes or missing values (heom,
        hvdm, vdm, gower, hamming: scaling a row would change its codes, and a missing
        value would spread to the whole row), with ``nominal`` columns (a numeric
        metric's ``onehot`` encoding reads codes) and with precomputed distances.
    seed : int or None, default None
        Order of the ``lazy`` chooser (None: index order).
    prototypes : {"all", "leveraged"}, default "all"
        Training rows searched at prediction. ``all``: the k nearest of all training
        rows, eq. (16) exactly; rows with alpha_j = 0 take a neighbour slot and vote 0.
        ``leveraged``: only the rows with a non-zero leveraging vector in the block
        (UNN's filtering; fewer than k if fewer are kept, every score 0 if none).
    tie : {"frequent", "nearest", "lowest", "random"}, default "frequent"
        Which class ``predict`` returns when several share the top score (exact
        float64 equality). ``frequent``: the tied class most frequent in the training
        set, then the smallest class code. ``nearest``: the class of the nearest searched
        training row (neighbour order: distance, then index; with n_splits > 1 block 0's
        neighbours first, then block 1's, ...) that belongs to a tied class; if none
        does (or nothing is searched), ``frequent``. ``lowest``: the smallest class code
        (the first in ``classes_``). ``random``: uniform among the tied classes: with
        u_q the q-th of ``numpy.random.default_rng(seed).random(n_queries)`` (seed None
        counts as 0), the tied class at position min(floor(u_q s), s - 1) of the s tied
        classes in ``classes_`` order, so the same seed and query array give the same
        predictions. The training curve's ``train_error`` always uses ``frequent``.
    metric : str, default "euclidean"
        The distance of the neighbour searches, one of
        :data:`knnx.neighbors.metrics.METRIC_NAMES`. Each feature block is searched
        under its own fitted copy: the metric is fitted (``block_metrics_[b]``) on
        block b's training rows exactly as they are searched, i.e. the block's
        columns after ``block_norm`` (ranges, deviations, covariance, hvdm's tables
        from those rows only), and ranks block b's training graph and its
        neighbours at prediction. With one block and no row scaling this is the
        metric fitted on all the training columns, ``metric_``. ``nominal`` columns
        are those of X; each block takes the ones among its columns. heom, hvdm,
        vdm and gower accept NaN (with ``block_norm="none"``); ``"precomputed"``
        takes the square training distance matrix at fit and the (n_queries,
        n_train) distances at prediction, with ``n_splits=1`` and no row scaling
        (a distance matrix has no feature blocks).
    metric_params : dict or None, default None
        The metric's parameters (minkowski ``p``, seuclidean ``V``, mahalanobis
        ``VI``: a V or VI given here must fit every block, so with n_splits > 1 leave
        them to be fitted).
    nominal : list of int or None, default None
        Columns of X holding category codes (heom, hvdm, gower, hamming); set by the
        experiment runner for a dataset loaded with ``categorical: keep``.
    graphs : knnx.GraphStore or None, default None
        Neighbour graphs to reuse or a precomputed graph to use (see
        :mod:`knnx.neighbors.graphs`); results are the same with or without.

    Attributes
    ----------
    alpha_ : ndarray of shape (n_splits, n_samples, n_classes)
        Leveraging coefficients, one matrix per feature block.
    weights_ : ndarray of shape (n_splits, n_samples, n_classes)
        Final weights w_i of Algorithm 1 (per class; with two classes both columns
        are class 1's).
    weight_updates_ : ndarray of shape (n_splits, n_classes)
        l(T, c), the number of weight updates per class (the sum of n_j over the
        leveraged examples, Theorem 4).
    prototypes_ : ndarray of int
        Training indices with a non-zero leveraging vector in some block (whatever
        ``prototypes`` searches); ``prototype_fraction_`` = len(prototypes_) / n_samples.
    blocks_ : list of ndarray
        Column indices of each block.
    metric_ : knnx.neighbors.metrics.Metric
        The metric fitted on all the training columns (unscaled).
    block_metrics_ : list of knnx.neighbors.metrics.Metric
        The metric each block is searched under, fitted on that block's training
        rows as searched (see ``metric``).
    n_iter_ : int
    curve_ : dict of ndarrays
        ``iteration`` (0..T); ``surrogate_risk`` (eq. 1); ``train_error`` (argmax
        rule on the leave-one-out neighbourhoods of the training set);
        ``weight_updates`` (l(t, c), mean over classes). With n_splits > 1 each is
        the mean over the blocks' own runs.
    reported_ : dict
        ``{"prototype_fraction": ...}``, recorded by the experiment runner.
    classes_, n_features_in_

    Notes
    -----
    * Weights start at 1 / (2 Z), Z = phi(0) - phi(1/2) (Table 1's phi are convex,
      so Z > 0), and are updated by eq. (11) in the closed form of each row of
      Table 1 (:func:`knnx._kernels.gnnb.weight_update`). Row B as printed,
      w e^delta / (w ln 2 + (1 - w) ln 2), is not eq. (11); knnx uses
      w / (w ln 2 + (1 - w ln 2) e^(delta y_ic y_jc)). Row D's square root covers
      the whole denominator. Row C's pi* (blank in Table 1) is ln 2 / 8. With the
      squared phi weights can become negative (eq. 11 is linear for it).
    * n_j = 0 (an example in nobody's neighbourhood): delta_j = 0/0, taken as 0.
    * Training neighbourhoods exclude the point itself; alpha_j in R^C starts at 0.
      Two classes: class 1 is trained and class 0 mirrors it (alpha_j0 = alpha_j1,
      h_0 = -h_1), as in UNN.
    * Prediction (``prototypes="all"``, eq. 16) takes the k nearest training rows,
      alpha = 0 or not; ``"leveraged"`` searches only the rows with alpha_j != 0, as
      UNN does (with T = m and the lazy chooser nearly every example is one). Ties:
      see ``tie`` (default: the class most frequent in the training set, then the
      smallest class code).
    * ``predict_proba``: p_c = (nabla phi)^-1 (h_c) (eq. 5), clipped to [0, 1] (the
      squared phi's link is linear), normalised over classes; with n_splits > 1 the
      average of the blocks' normalised posteriors, and ``predict`` is its argmax.
    * Numeric extremes. delta_j is bounded (|eta| <= n_j max w), so pure reciprocal
      neighbourhoods (well-separated classes) need no smoothing and every output is
      finite. With ``block_norm="none"`` data whose squared distances would overflow
      or underflow in float64 is refused by :func:`knnx.kneighbors` with a one-line
      :class:`knnx.errors.DataError` (at fit, and for queries at prediction); with
      "l1"/"l2" each block's rows are unit vectors, so any finite scale is accepted
      (:func:`normalize_rows` avoids overflow). A block of one feature normalises to
      sign(x): use ``block_norm="none"`` or fewer splits for such blocks. k < n_samples
      (k = n_samples - 1 is allowed), n_splits <= n_features; else ValueError.
      Identical rows and a class of one example train and predict with finite values.
    """

    _parameter_constraints = {
        "k": Interval(1, integer=True),
        "phi": Options(*PHIS),
        "epsilon": Interval(0, 1, low_open=True, high_open=True),
        "n_iter": AnyOf(Interval(1, MAX_ITERATIONS, integer=True), Literal(None)),
        "chooser": Options("lazy", "largest_delta"),
        "n_splits": Interval(1, integer=True),
        "block_norm": AnyOf(Options(*BLOCK_NORMS), Literal(None)),
        "seed": AnyOf(Interval(0, MAX_SEED, integer=True), Literal(None)),
        "prototypes": Options(*PROTOTYPES),
        "tie": Options(*TIES),
        **METRIC_CONSTRAINTS,
        "graphs": GRAPHS,
    }
    _neighbor_param = ("k", 1)
    _neighbor_counts = ("k",)

    @classmethod
    def _setting_problems(cls, params):
        problems = super()._setting_problems(params)
        metric, norm = params.get("metric", "euclidean"), params.get("block_norm")
        if metric == "precomputed" and params.get("n_splits", 1) != 1:
            problems.append(
                "metric='precomputed' takes a distance matrix, which has no feature blocks; set n_splits=1"
            )
        elif norm in ("l1", "l2") and metric in METRICS and not scales_rows(metric):
            why = (
                "precomputed distances are not features"
                if metric == "precomputed"
                else "its nominal codes and missing values are not numbers to scale"
            )
            problems.append(
                f"block_norm={norm!r} scales each row to unit norm, which metric {metric!r} does not allow "
                f"({why}); use block_norm='none'"
            )
        elif norm in ("l1", "l2") and _has_nominal(params.get("nominal")):
            problems.append(
                f"block_norm={norm!r} scales each row to unit norm, which would change the category codes of "
                "the nominal columns; use block_norm='none'"
            )
        return problems

    @classmethod
    def _data_problems(cls, params, n_samples, n_features, n_classes):
        problems = []
        if params.get("n_splits", 1) > n_features:
            problems.append(f"n_splits={params['n_splits']} exceeds the number of features ({n_features})")
        if params.get("n_iter") is None and n_samples > MAX_ITERATIONS:
            problems.append(
                f"n_iter=None gives T = {n_samples} iterations per class (one per training row), more than the "
                f"limit of {MAX_ITERATIONS}; set n_iter"
            )
        return problems

    def __init__(
        self,
        k=5,
        phi="logistic",
        epsilon=0.5,
        n_iter=None,
        chooser="lazy",
        n_splits=1,
        block_norm=None,
        seed=None,
        prototypes="all",
        tie="frequent",
        metric="euclidean",
        metric_params=None,
        nominal=None,
        graphs=None,
    ):
        self.k = k
        self.phi = phi
        self.epsilon = epsilon
        self.n_iter = n_iter
        self.chooser = chooser
        self.n_splits = n_splits
        self.block_norm = block_norm
        self.seed = seed
        self.prototypes = prototypes
        self.tie = tie
        self.metric = metric
        self.metric_params = metric_params
        self.nominal = nominal
        self.graphs = graphs

    def fit(self, X, y):
        """Train the leveraging coefficients by Algorithm 1 (one run per block). Returns self."""
        self._validate_params()
        X, y_codes = self._validate_fit_data(X, y)
        self._fit(X, y_codes, [])
        return self

    def _norm(self):
        if self.block_norm is not None:
            return self.block_norm
        scaled = self.n_splits > 1 and scales_rows(self.metric) and not _has_nominal(self.nominal)
        return "l2" if scaled else "none"

    def _fit_block_metrics(self, X, y_codes):
        """``block_metrics_``: per block, the metric fitted on the block's training rows
        as searched (``metric_`` itself for one unscaled block); the nominal columns of
        X become the block's own positions."""
        nominal = () if self.nominal is None else np.asarray(self.nominal, dtype=np.intp)
        self.block_metrics_ = []
        for b, cols in enumerate(self.blocks_):
            if len(cols) == X.shape[1] and self._norm() == "none":
                self.block_metrics_.append(self.metric_)
                continue
            plain = self.metric == "euclidean" and not self.metric_params and not len(nominal)
            rows = np.empty((0, len(cols))) if plain else self._block(X, b)  # plain: no statistics to fit
            try:
                fitted = self._fit_metric(rows, y_codes, nominal=np.flatnonzero(np.isin(cols, nominal)))
            except DataError as exc:
                raise DataError(f"block {b} (columns {cols[0]}..{cols[-1]}): {exc}") from None
            self.block_metrics_.append(fitted)

    def _block(self, X, b):
        """Block b's features, row-normalised. A single block covering every feature is
        ``X`` itself (no copy; nothing writes into it): at n = 1e5, d = 512 the copy
        was 391 MiB of GNNB's training peak."""
        cols = self.blocks_[b]
        Xb = X if len(cols) == X.shape[1] else X[:, cols]
        return normalize_rows(np.ascontiguousarray(Xb), self._norm())

    def _fit(self, X, y_codes, snap_at):
        """Algorithm 1 on validated data; returns, per count in ``snap_at``, the list
        of the blocks' alpha after that many iterations. The final state is stored."""
        m, d = X.shape
        if self.k >= m:
            raise ValueError(
                f"GNNBClassifier: k={self.k} must be below the training set size (n_samples = {m})"
            )
        if self.n_splits > d:
            raise ValueError(f"GNNBClassifier: n_splits={self.n_splits} exceeds the number of features ({d})")
        n_classes = len(self.classes_)
        T = self.n_iter if self.n_iter is not None else m
        self.n_iter_ = T
        self.blocks_ = np.array_split(np.arange(d), self.n_splits)
        self._fit_block_metrics(X, y_codes)
        phi = PHIS[self.phi]
        train_classes, schedule = self._prepare_fit(y_codes, T, snap_at)
        snap_at = schedule.snap_at
        s = self.n_splits
        self.alpha_ = np.zeros((s, m, n_classes))
        self.weights_ = np.full((s, m, n_classes), 0.5 / G.z_norm(phi))
        self.weight_updates_ = np.zeros((s, n_classes), dtype=np.int64)
        curve = {
            "iteration": np.arange(T + 1),
            "surrogate_risk": np.zeros(T + 1),
            "train_error": np.zeros(T + 1),
            "weight_updates": np.zeros(T + 1),
        }
        snaps = [[np.zeros((m, n_classes)) for _ in range(s)] for _ in snap_at]

        full = self._mirror
        for b in range(s):
            if n_classes == 1:  # nothing to learn: every edge stays 0
                curve["surrogate_risk"] += G.bcl_value(phi, 0.0) / s
                continue
            graph = self._graph(
                self._block(X, b), self.block_metrics_[b]
            )  # the block is freed before the kernel
            alpha, w, risk, errors, _, _, updates, snap = G.gnnb_fit(
                graph,
                y_codes,
                n_classes,
                train_classes,
                schedule,
                phi,
                float(self.epsilon),
                self._tie_order,
            )
            self.alpha_[b] = full(alpha)
            self.weights_[b] = full(w)
            self.weight_updates_[b] = full(updates[-1:])[0]
            curve["surrogate_risk"] += risk / s
            curve["train_error"] += errors / s
            curve["weight_updates"] += updates.mean(axis=1) / s
            for q in range(len(snap_at)):
                snaps[q][b] = full(snap[q])
        self.curve_ = curve
        self._set_prototypes(X, y_codes)
        return snaps

    def _set_prototypes(self, X, y_codes):
        """Per block: the rows searched at prediction (see ``prototypes``), their block
        features, codes and alpha."""
        self._set_search_sets(
            ((self._block(X, b), self.alpha_[b], self.block_metrics_[b]) for b in range(self.n_splits)),
            y_codes,
        )

    def _block_h(self, X, b, with_classes=False):
        return self._search_scores(self._block(X, b), b, with_classes)

    def _scores(self, X, with_classes=False):
        """h for one block; the averaged posteriors for several. With ``with_classes``
        also the neighbours' class codes, block 0's first."""
        X = self._validate_query(X)
        if self.n_splits == 1:
            return self._block_h(X, 0, with_classes)
        phi = PHIS[self.phi]
        total, near = 0.0, []
        for b in range(self.n_splits):
            h, classes = self._block_h(X, b, True)
            total = total + G.gnnb_proba(h, phi)
            near.append(classes)
        scores = total / self.n_splits
        return (scores, np.hstack(near)) if with_classes else scores

    def decision_function(self, X):
        """h(x) (n_splits = 1) or the averaged posteriors (n_splits > 1); for two
        classes the score of classes_[1] (h_1, or p_1 - p_0), shape (n,)."""
        scores = self._scores(X)
        if len(self.classes_) == 2:
            return scores[:, 1] if self.n_splits == 1 else scores[:, 1] - scores[:, 0]
        return scores

    def predict(self, X):
        """argmax_c of h_c(x), or of the averaged posteriors (ties: see Notes)."""
        return self._vote(*self._scores(X, with_classes=True))

    def predict_proba(self, X):
        """Matching posterior estimates (eq. 5), rows summing to 1 (see Notes)."""
        scores = self._scores(X)
        if self.n_splits == 1:
            return G.gnnb_proba(scores, PHIS[self.phi])
        return scores


def gnnb_path(estimator, X, y, X_query, iterations):
    """Posteriors on ``X_query`` of the GNNB rule after each count in ``iterations``.

    One run of T = max(iterations) iterations per class and block (the rule after
    T' iterations is a prefix of the run, so this equals separate fits with
    n_iter = T'). ``estimator`` is a :class:`GNNBClassifier` whose ``n_iter`` is
    ignored; it is left fitted with T = max(iterations). Returns a list of
    (n_query, n_classes) arrays.
    """
    iterations = sorted(int(t) for t in iterations)
    estimator.set_params(n_iter=iterations[-1])
    estimator._validate_params()
    X, y_codes = estimator._validate_fit_data(X, y)
    snaps = estimator._fit(X, y_codes, iterations)
    final = estimator.alpha_.copy()
    out = []
    for snap in snaps:
        estimator.alpha_ = np.stack(snap)
        estimator._set_prototypes(X, y_codes)
        out.append(estimator.predict_proba(X_query))
    estimator.alpha_ = final
    estimator._set_prototypes(X, y_codes)
    return out
