"""The ``metric`` parameter of the neighbour estimators, against independent oracles.

* scikit-learn's estimator checks pass under non-default metrics;
* KNNClassifier equals scikit-learn's brute-force KNeighborsClassifier under the metrics
  both have (statistics given to scikit-learn explicitly from the training rows);
* kNN under heom and hvdm on mixed data with missing values equals a plain NumPy vote
  over a NumPy-computed distance matrix (the definitions of Wilson & Martinez written
  out below), statistics from the training rows only;
* KNNLpoClassifier's risk under a metric equals the enumeration of every leave-p-out
  split, the metric fitted on the whole training part;
* UNN and GNNB under a metric equal the Euclidean estimator handed, through a
  GraphStore, the graphs that kneighbors computes under that metric (GNNB: per feature
  block, on the block's rows as searched);
* the Euclidean default keeps its bits and its graph keys.
"""

from fractions import Fraction
from itertools import combinations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.neighbors import KNeighborsClassifier

from knnx import GNNBClassifier, GraphStore, KNNClassifier, UNNClassifier, kneighbors, lpo_risk
from knnx.estimators.baselines import SubsampledKNN
from knnx.estimators.gnnb import normalize_rows
from knnx.estimators.knn import KNNLpoClassifier
from knnx.estimators.registry import resolve_algorithm
from knnx.estimators.unn import UNNCVClassifier
from knnx.neighbors.metrics import fit_metric


def test_tags_follow_the_metric():
    assert KNNClassifier(metric="heom").__sklearn_tags__().input_tags.allow_nan
    assert not KNNClassifier(metric="manhattan").__sklearn_tags__().input_tags.allow_nan
    assert KNNClassifier(metric="precomputed").__sklearn_tags__().input_tags.pairwise
    assert not KNNClassifier().__sklearn_tags__().input_tags.pairwise
    assert UNNClassifier(metric="gower").__sklearn_tags__().input_tags.allow_nan


# ---------------------------------------------------------------------------
# scikit-learn's brute force


def _two_classes(seed, n=240, m=150, d=4):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * [1.0, 3.0, 0.5, 2.0][:d]
    y = (X[:, 0] + 0.3 * X[:, 1] + rng.standard_normal(n) > 0).astype(int)
    return X, y, rng.standard_normal((m, d)) * 2.0


def _sklearn_metric(metric, X):
    """scikit-learn's (metric, metric_params) with the statistics knnx fits on the
    training rows X given explicitly (scikit-learn's brute force would fit them on
    the training rows and the queries together)."""
    if metric == "seuclidean":
        return metric, {"V": X.var(axis=0, ddof=1)}
    if metric == "mahalanobis":
        return metric, {"VI": np.linalg.inv(np.cov(X, rowvar=False, ddof=1))}
    return metric, None


@pytest.mark.parametrize(
    "metric", ["manhattan", "chebyshev", "minkowski3", "seuclidean", "mahalanobis", "cosine"]
)
@pytest.mark.parametrize("k", [1, 5, 11])
def test_knn_equals_sklearn_brute_force(seed, metric, k):
    X, y, Q = _two_classes(seed)
    p = {"p": 3} if metric == "minkowski3" else None
    metric = "minkowski" if p else metric
    sk_metric, sk_params = _sklearn_metric(metric, X)
    ours = KNNClassifier(k=k, metric=metric, metric_params=p).fit(X, y)
    ref = KNeighborsClassifier(k, algorithm="brute", metric=sk_metric, metric_params=sk_params, **(p or {}))
    ref.fit(X, y)
    assert_array_equal(ours.predict(Q), ref.predict(Q))  # odd k, two classes: no vote tie
    assert_array_equal(ours.predict_proba(Q), ref.predict_proba(Q))
    # distance weights: 1 / the metric's distance
    ours.set_params(k=k + 1, weights="distance")
    ref.set_params(n_neighbors=k + 1, weights="distance")
    assert_array_equal(ours.predict(Q), ref.predict(Q))
    assert_allclose(ours.predict_proba(Q), ref.predict_proba(Q), rtol=1e-12, atol=1e-15)


def test_distance_weights_with_coincident_points_match_sklearn():
    X, y, Q = _two_classes(7, n=60, m=20)
    Q[:5] = X[:5]  # queries on training rows: the zero-distance rule
    for metric in ("manhattan", "chebyshev"):
        ours = KNNClassifier(k=4, weights="distance", metric=metric).fit(X, y)
        ref = KNeighborsClassifier(4, weights="distance", algorithm="brute", metric=metric).fit(X, y)
        assert_array_equal(ours.predict(Q), ref.predict(Q))
        assert_allclose(ours.predict_proba(Q), ref.predict_proba(Q), rtol=1e-12, atol=1e-15)


# ---------------------------------------------------------------------------
# heom and hvdm on mixed data with missing values: a NumPy oracle

NOMINAL = [1, 3]


def _mixed(seed, n=90, m=50):
    """Columns 0, 2, 4 numeric, 1 and 3 nominal codes; 12 % missing; three classes.
    Queries reach beyond the training ranges and hold a code never seen in training."""
    rng = np.random.default_rng(seed)
    X = np.column_stack(
        [
            rng.standard_normal(n),
            rng.integers(0, 4, n),
            rng.uniform(0, 10, n),
            rng.integers(0, 3, n),
            rng.standard_normal(n) * 0.1,
        ]
    ).astype(float)
    y = ((X[:, 0] > 0).astype(int) + (X[:, 1] >= 2)).astype(int)
    Q = np.column_stack(
        [
            rng.standard_normal(m) * 2,
            rng.integers(0, 6, m),
            rng.uniform(-5, 15, m),
            rng.integers(0, 3, m),
            rng.standard_normal(m) * 0.1,
        ]
    ).astype(float)
    X[rng.random(X.shape) < 0.12] = np.nan
    Q[rng.random(Q.shape) < 0.12] = np.nan
    return X, y, Q


def _attribute_distances(X, y, Q, metric):
    """d_a(q, r) for every query, reference and attribute (Wilson & Martinez 1997), the
    statistics from the training rows X (labels y) only: shape (m, n, d)."""
    n, d = X.shape
    out = np.empty((Q.shape[0], n, d))
    for a in range(d):
        q, r = Q[:, a][:, None], X[:, a][None, :]
        if a in NOMINAL and metric == "heom":
            da = (q != r).astype(float)
        elif a in NOMINAL:  # hvdm: sqrt of sum_c (P(c|x) - P(c|y))^2, P counted on training rows
            classes = np.unique(y)
            codes = np.unique(np.concatenate([X[:, a], Q[:, a]]))
            codes = codes[~np.isnan(codes)]
            P = {}
            for v in codes:
                rows = X[:, a] == v
                P[v] = np.array([np.sum(rows & (y == c)) for c in classes]) / max(rows.sum(), 1)
            da = np.zeros((Q.shape[0], n))
            for i in range(Q.shape[0]):
                for j in range(n):
                    if not (np.isnan(Q[i, a]) or np.isnan(X[j, a])):
                        da[i, j] = np.sqrt(np.sum((P[Q[i, a]] - P[X[j, a]]) ** 2))
        else:
            col = X[:, a][~np.isnan(X[:, a])]
            scale = col.max() - col.min() if metric == "heom" else 4 * col.std()
            da = np.abs(q - r) / (scale if scale > 0 else 1.0)
        da[np.isnan(q) | np.isnan(r)] = 1.0
        out[:, :, a] = da
    return out


def _oracle_vote(D, y, k, weighted):
    """Neighbours by (distance, index); plurality or 1/d (only zero distances if any);
    ties to the nearest tied neighbour's class. Returns (pred, proba, neighbours)."""
    n_classes = int(y.max()) + 1
    pred, proba, neigh = [], [], []
    for row in D:
        nb = np.lexsort((np.arange(len(row)), row))[:k]
        scores = np.zeros(n_classes)
        zero = weighted and (row[nb] == 0).any()
        for j in nb:
            if not weighted:
                scores[y[j]] += 1.0
            elif zero:
                scores[y[j]] += float(row[j] == 0)
            else:
                scores[y[j]] += 1.0 / row[j]
        tied = np.flatnonzero(scores == scores.max())
        pred.append(next(y[j] for j in nb if y[j] in tied))
        proba.append(scores / scores.sum())
        neigh.append(nb)
    return np.array(pred), np.array(proba), np.array(neigh)


@pytest.mark.parametrize("metric", ["heom", "hvdm"])
@pytest.mark.parametrize("weights", ["uniform", "distance"])
def test_knn_on_mixed_data_with_missing_values_equals_a_numpy_vote(metric, weights):
    X, y, Q = _mixed(3)
    D = np.sqrt((_attribute_distances(X, y, Q, metric) ** 2).sum(-1))
    clf = KNNClassifier(k=5, weights=weights, metric=metric, nominal=NOMINAL).fit(X, y)
    pred, proba, neigh = _oracle_vote(D, y, 5, weights == "distance")
    dist, ind = kneighbors(X, 5, Q, metric=clf.metric_, squared=False)
    assert_array_equal(ind, neigh)
    assert_allclose(dist, np.take_along_axis(D, neigh, 1), rtol=1e-12)
    assert_array_equal(clf.predict(Q), pred)
    assert_allclose(clf.predict_proba(Q), proba, rtol=1e-12)


def _onehot(A, X):
    """A with the NOMINAL columns replaced by indicators of the codes seen in X."""
    parts = []
    for j in range(A.shape[1]):
        if j in NOMINAL:
            parts.append((A[:, j, None] == np.arange(int(X[:, j].max()) + 1)).astype(float))
        else:
            parts.append(A[:, j, None])
    return np.hstack(parts)


@pytest.mark.parametrize("metric", ["euclidean", "manhattan"])
def test_a_numeric_metric_sees_nominal_columns_one_hot(metric):
    X, y, Q = _mixed(8)
    X, Q = np.nan_to_num(X), np.nan_to_num(Q)  # query codes 4, 5 unseen in training: no indicator
    y = y % 2
    ours = KNNClassifier(k=5, metric=metric, metric_params={"onehot": True}, nominal=NOMINAL).fit(X, y)
    ref = KNeighborsClassifier(5, algorithm="brute", metric=metric).fit(_onehot(X, X), y)
    assert_array_equal(ours.predict(Q), ref.predict(_onehot(Q, X)))
    assert_array_equal(ours.predict_proba(Q), ref.predict_proba(_onehot(Q, X)))
    unn = UNNClassifier(k=4, metric=metric, metric_params={"onehot": True}, nominal=NOMINAL).fit(X, y)
    assert_array_equal(unn.alpha_, UNNClassifier(k=4, metric=metric).fit(_onehot(X, X), y).alpha_)


def test_the_metric_is_fitted_on_the_training_rows_only():
    X, y, Q = _mixed(4)
    clf = KNNClassifier(k=3, metric="hvdm", nominal=NOMINAL).fit(X, y)
    assert clf.metric_.checksum == fit_metric("hvdm", X, y, nominal=NOMINAL).checksum
    before = clf.metric_.checksum
    clf.predict(Q)  # queries outside the ranges, an unseen code: nothing refitted
    assert clf.metric_.checksum == before


# ---------------------------------------------------------------------------
# exact LpO under a metric: every split enumerated


def _manhattan(X):
    D = np.zeros((len(X), len(X)))
    for f in range(X.shape[1]):  # summed feature by feature, as the kernel does
        D += np.abs(X[:, None, f] - X[None, :, f])
    return D


def _enumerate(D, y, p, k_max, cost):
    n = len(y)
    risk = np.zeros(k_max)
    splits = list(combinations(range(n), p))
    for held in splits:
        train = np.array([r for r in range(n) if r not in held])
        for i in held:
            order = train[np.lexsort((train, D[i, train]))]
            for k in range(1, k_max + 1):
                nb = order[:k]
                risk[k - 1] += cost(D[i, nb], y[nb], y[i]) / p
    return risk / len(splits)


def _plurality_cost(dist, labels, true):
    counts = np.bincount(labels)
    top = np.flatnonzero(counts == counts.max())
    return 1.0 - (1.0 / len(top) if true in top else 0.0)


def _weighted_cost(dist, labels, true):
    """1/d votes (exact sums; only zero distances vote if any), a tie costs 1/2."""
    zero = dist == 0.0
    if zero.any():
        total = Fraction(int(sum(1 if lab == 1 else -1 for lab in labels[zero])))
    else:
        total = sum(
            (Fraction(1.0 / d) * (1 if lab == 1 else -1) for d, lab in zip(dist, labels, strict=True)),
            Fraction(0),
        )
    if total == 0:
        return 0.5
    return 0.0 if int(total > 0) == true else 1.0


@pytest.mark.parametrize("p", [1, 2, 3])
def test_knn_lpo_risk_under_manhattan_equals_enumeration(p):
    rng = np.random.default_rng(p)
    X = rng.integers(0, 4, (10, 2)).astype(float)  # integer points: distance ties, ordered by index
    y = rng.integers(0, 3, 10)
    clf = KNNLpoClassifier(p=p, k_max=10 - p, metric="manhattan").fit(X, y)
    assert_allclose(
        clf.lpo_risk_, _enumerate(_manhattan(X), y, p, 10 - p, _plurality_cost), rtol=0, atol=1e-13
    )
    assert_array_equal(lpo_risk(X, y, p, 10 - p, metric="manhattan"), clf.lpo_risk_)
    params = {"k": 2, "weights": "uniform", "metric": "manhattan"}
    assert KNNClassifier._lpo_risk(params, X, y, p) == clf.lpo_risk_[1]


@pytest.mark.parametrize("p", [2, 3])
def test_weighted_lpo_risk_under_manhattan_weighs_by_one_over_the_distance(p):
    rng = np.random.default_rng(10 + p)
    X = rng.standard_normal((10, 3))
    X[4] = X[2]  # a zero distance
    y = rng.integers(0, 2, 10)
    clf = KNNLpoClassifier(p=p, k_max=10 - p, weights="distance", metric="manhattan").fit(X, y)
    assert_allclose(
        clf.lpo_risk_, _enumerate(_manhattan(X), y, p, 10 - p, _weighted_cost), rtol=0, atol=1e-13
    )


def test_lpo_risk_fits_the_metric_on_the_whole_training_part():
    # heom with missing values: the ranges of all n rows, the same in every split
    X, y, _ = _mixed(5, n=9)
    y = y % 2
    D = np.sqrt((_attribute_distances(X, y, X, "heom") ** 2).sum(-1))
    np.fill_diagonal(D, np.inf)
    risk = lpo_risk(X, y, 2, 6, metric="heom", nominal=NOMINAL)
    assert_allclose(risk, _enumerate(D, y, 2, 6, _plurality_cost), rtol=0, atol=1e-13)
    weighted = lpo_risk(X, y, 2, 6, "distance", metric="heom", nominal=NOMINAL)
    assert_allclose(weighted, _enumerate(D, y, 2, 6, _weighted_cost), rtol=0, atol=1e-13)


# ---------------------------------------------------------------------------
# UNN and GNNB: the metric's graphs are the ones used


def _preload(store, ref, Q, k, metric, loo=True):
    """Put the graphs kneighbors computes under ``metric`` into ``store`` under the
    Euclidean keys: a Euclidean estimator then searches with them."""
    if loo:
        store.add(ref, *kneighbors(ref, k, metric=metric))
    else:
        store.add(ref, *kneighbors(ref, k, Q, metric=metric), queries=Q)


@pytest.mark.parametrize("metric", ["manhattan", "hvdm"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_unn_under_a_metric_is_unn_on_that_metrics_graphs(metric, n_classes):
    rng = np.random.default_rng(n_classes)
    X = np.column_stack([rng.standard_normal((80, 2)), rng.integers(0, 3, 80)])
    y = (X[:, 0] > 0).astype(int) + (n_classes == 3) * (X[:, 2] == 2)
    Q = np.column_stack([rng.standard_normal((30, 2)), rng.integers(0, 3, 30)])
    nominal = [2] if metric == "hvdm" else None
    ours = UNNClassifier(k=5, metric=metric, nominal=nominal).fit(X, y)
    fitted = fit_metric(metric, X, y, nominal=nominal)  # on all the training rows
    store = GraphStore()
    _preload(store, X, None, 5, fitted)
    ref = UNNClassifier(k=5, graphs=store).fit(X, y)
    assert_array_equal(ref.alpha_, ours.alpha_)
    assert not np.array_equal(UNNClassifier(k=5).fit(X, y).alpha_, ours.alpha_)
    protos = X[ours.prototypes_]  # prototypes="leveraged": the search set at prediction
    _preload(store, protos, Q, min(5, len(protos)), fitted, loo=False)
    assert_array_equal(ref.predict_proba(Q), ours.predict_proba(Q))
    assert_array_equal(ref.predict(Q), ours.predict(Q))


def test_unn_cv_fits_the_metric_per_fit():
    X, y, Q = _mixed(6, n=70)
    clf = UNNCVClassifier(k=3, n_thetas=3, metric="gower", nominal=NOMINAL, seed=1).fit(X, y)
    final = UNNClassifier(k=3, theta=clf.theta_, metric="gower", nominal=NOMINAL, seed=1).fit(X, y)
    assert_array_equal(clf.alpha_, final.alpha_)
    assert_array_equal(clf.predict_proba(Q), final.predict_proba(Q))


@pytest.mark.parametrize("metric", ["manhattan", "seuclidean"])
def test_gnnb_blocks_search_under_the_metric_fitted_on_their_scaled_rows(metric):
    rng = np.random.default_rng(1)
    X, Q = rng.standard_normal((70, 5)) * [1, 5, 1, 2, 9], rng.standard_normal((25, 5))
    y = (X[:, 0] + X[:, 3] > 0).astype(int)
    ours = GNNBClassifier(k=4, n_splits=2, metric=metric).fit(X, y)  # l2-scaled blocks by default
    store = GraphStore()
    blocks = [normalize_rows(np.ascontiguousarray(A[:, cols]), "l2") for A in (X, Q) for cols in ours.blocks_]
    for b in range(2):
        fitted = fit_metric(metric, blocks[b])  # on the block's training rows as searched
        assert ours.block_metrics_[b].checksum == fitted.checksum
        _preload(store, blocks[b], None, 4, fitted)
        _preload(store, blocks[b], blocks[2 + b], 4, fitted, loo=False)
    ref = GNNBClassifier(k=4, n_splits=2, graphs=store).fit(X, y)
    assert_array_equal(ref.alpha_, ours.alpha_)
    assert_array_equal(ref.predict_proba(Q), ours.predict_proba(Q))
    assert not np.array_equal(GNNBClassifier(k=4, n_splits=2).fit(X, y).alpha_, ours.alpha_)


def test_gnnb_blocks_take_their_own_nominal_columns():
    rng = np.random.default_rng(2)
    X = np.column_stack(
        [rng.standard_normal(60), rng.integers(0, 3, 60), rng.standard_normal(60), rng.integers(0, 2, 60)]
    )
    y = (X[:, 0] > 0).astype(int)
    Q = X[:20] + [0.1, 0, 0.1, 0]
    ours = GNNBClassifier(k=3, n_splits=2, metric="hvdm", nominal=[1, 3], prototypes="leveraged").fit(X, y)
    assert ours._norm() == "none"  # nominal codes are not scaled
    store = GraphStore()
    for b, cols in enumerate(ours.blocks_):
        fitted = fit_metric("hvdm", X[:, cols], y, nominal=[1])  # columns 1 and 3 are each block's second
        assert ours.block_metrics_[b].checksum == fitted.checksum
        _preload(store, np.ascontiguousarray(X[:, cols]), None, 3, fitted)
        leveraged = np.flatnonzero(np.any(ours.alpha_[b] != 0, axis=1))
        ref_rows = np.ascontiguousarray(X[leveraged][:, cols])
        _preload(store, ref_rows, np.ascontiguousarray(Q[:, cols]), 3, fitted, loo=False)
    ref = GNNBClassifier(k=3, n_splits=2, block_norm="none", prototypes="leveraged", graphs=store).fit(X, y)
    assert_array_equal(ref.alpha_, ours.alpha_)
    assert_array_equal(ref.predict_proba(Q), ours.predict_proba(Q))


def test_precomputed_distances_equal_the_metric_they_hold():
    X, y, Q = _two_classes(3, n=80, m=30)
    D, DQ = _manhattan(X), np.abs(Q[:, None, :] - X[None, :, :]).sum(-1)
    for make in (
        lambda m: KNNClassifier(k=3, weights="distance", metric=m),
        lambda m: UNNClassifier(k=4, metric=m),
        lambda m: GNNBClassifier(k=4, metric=m, prototypes="leveraged", n_iter=30),
        lambda m: SubsampledKNN(k=3, fraction=0.6, metric=m),
    ):
        on_rows = make("manhattan").fit(X, y)
        on_matrix = make("precomputed").fit(D, y)
        assert_array_equal(on_matrix.predict(DQ), on_rows.predict(Q))
        assert_allclose(on_matrix.predict_proba(DQ), on_rows.predict_proba(Q), rtol=1e-12)


# ---------------------------------------------------------------------------
# settings, messages, the default


@pytest.mark.parametrize(
    "estimator,message",
    [
        (KNNClassifier(metric="minkowski", metric_params={"p": 0.5}), "minkowski's p must be a number >= 1"),
        (
            KNNClassifier(metric="manhattan", metric_params={"p": 3}),
            "metric 'manhattan' takes onehot, got 'p'",
        ),
        (KNNClassifier(nominal=[0]), "nominal: column 0 is nominal; metric 'euclidean' takes numeric"),
        (
            GNNBClassifier(metric="manhattan", metric_params={"onehot": True}, block_norm="l2", nominal=[0]),
            "category codes",
        ),
        (KNNClassifier(nominal="0"), "nominal must be None or a list of column indices"),
        (KNNClassifier(metric="l3"), "metric must be one of 'euclidean'"),
        (UNNClassifier(metric_params=[1]), "metric_params must be a dict or None"),
        (GNNBClassifier(metric="precomputed", n_splits=2), "has no feature blocks; set n_splits=1"),
        (GNNBClassifier(metric="hvdm", block_norm="l2"), "block_norm='l2' scales each row to unit norm"),
    ],
)
def test_settings_that_cannot_run_are_one_line_errors(estimator, message):
    X, y = np.arange(40.0).reshape(20, 2), np.arange(20) % 2
    with pytest.raises(ValueError, match=message):
        estimator.fit(X, y)


def test_missing_values_need_a_metric_with_a_rule():
    X, y = np.arange(40.0).reshape(20, 2), np.arange(20) % 2
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        KNNClassifier(metric="manhattan").fit(X, y)
    KNNClassifier(metric="gower").fit(X, y).predict(X)


def test_registry_points_weighted_metrics_to_base_and_nominal_to_the_runner():
    cpw = resolve_algorithm({"name": "cpw"})
    problem = cpw.parameter_problem("metric", "manhattan")
    assert problem.startswith("unknown parameter for cpw") and "the parameter base" in problem
    knn = resolve_algorithm({"name": "knn"})
    assert knn.parameter_problem("metric", "hvdm") is None
    assert "must be one of" in knn.parameter_problem("metric", "l3")
    assert knn.parameter_problem("nominal", [0, 2]) is None
    assert "must be None or a list of column indices" in knn.parameter_problem("nominal", "a")
    defaults = knn.defaults()
    assert (
        defaults["metric"] == "euclidean"
        and defaults["metric_params"] is None
        and defaults["nominal"] is None
    )
    assert knn.cls._setting_problems({**defaults, "metric": "minkowski", "metric_params": {"p": 0}})


def test_default_weighted_vote_keeps_its_bits():
    # the vote used to take squared distances and its own np.sqrt: same bits
    X, y, Q = _two_classes(8, n=200, m=100)
    y = y + (X[:, 2] > 0.5)
    d2, ind = kneighbors(X, 6, Q)
    proba = np.zeros((len(Q), 3))
    for i in range(len(Q)):
        for t in range(6):
            proba[i, y[ind[i, t]]] += 1.0 / np.sqrt(d2[i, t])
        proba[i] /= proba[i].sum()
    assert_array_equal(KNNClassifier(k=6, weights="distance").fit(X, y).predict_proba(Q), proba)


def test_default_metric_searches_with_the_euclidean_graph_keys():
    X, y, Q = _two_classes(9, n=50, m=10)
    store = GraphStore()
    fake = kneighbors(X, 3, Q, metric="chebyshev")  # stored without a metric: a Euclidean key
    store.add(X, *fake, queries=Q)
    clf = KNNClassifier(k=3, graphs=store).fit(X, y)
    assert_array_equal(
        clf.predict_proba(Q), KNNClassifier(k=3, metric="chebyshev").fit(X, y).predict_proba(Q)
    )
    assert store.hits == 1


def test_tuning_over_a_metric_grid():
    from sklearn.model_selection import StratifiedKFold

    from knnx.evaluation.tuning import TuneTask, tune

    X, y, _ = _mixed(7, n=120)
    X = np.nan_to_num(X)  # euclidean and manhattan have no missing-value rule
    settings = tuple({"k": 3, "metric": m, "nominal": None} for m in ("euclidean", "manhattan", "hvdm"))
    task = TuneTask(cv=3, metric="error", settings=settings, seed=0)
    best, chosen, failed = tune(
        lambda s: KNNClassifier(**s), task, {"metric": ["euclidean", "manhattan", "hvdm"]}, X, y, 3
    )
    folds = list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, y))
    means = [
        np.mean([np.mean(KNNClassifier(**s).fit(X[a], y[a]).predict(X[b]) == y[b]) for a, b in folds])
        for s in settings
    ]
    assert failed == 0
    assert best == settings[int(np.argmax(means))]
    assert chosen == {"metric": float(np.argmax(means))}


# ---------------------------------------------------------------------------
# LpO active learning under a metric


def test_committee_shares_under_manhattan_equal_the_enumerated_committee():
    from knnx.lpo.active import committee_shares

    rng = np.random.default_rng(11)
    X, Q = rng.standard_normal((12, 2)), rng.standard_normal((15, 2))
    y = rng.integers(0, 3, 12)
    k, p = 3, 2
    expected = np.zeros((len(Q), 3))
    members = list(combinations(range(12), 12 - p))
    for kept in members:  # each member: kNN on an (n - p)-subset, plurality ties shared
        kept = np.array(kept)
        dist = np.abs(Q[:, None, :] - X[None, kept, :]).sum(-1)
        for i, row in enumerate(dist):
            votes = np.bincount(y[kept][np.lexsort((kept, row))[:k]], minlength=3)
            top = votes == votes.max()
            expected[i] += top / top.sum() / len(members)
    assert_allclose(committee_shares(X, y, Q, k, p, metric="manhattan"), expected, rtol=0, atol=1e-12)


def test_active_learning_tunes_k_under_the_metric():
    from knnx.lpo.active import active_learning
    from knnx.lpo.risk import select_k

    X, y, _ = _mixed(12, n=80)
    records = active_learning(
        X[:30],
        y[:30],
        X[30:],
        y[30:],
        rounds=2,
        m=3,
        p_select=2,
        p_tune=2,
        k_max=8,
        metric="heom",
        nominal=NOMINAL,
    )
    assert records[0].k == select_k(X[:30], y[:30], 2, 8, metric="heom", nominal=NOMINAL)[0]
    assert [r.n_train for r in records] == [30, 33, 36]


# ---------------------------------------------------------------------------
# knnx select-k --metric


def _cli(*args):
    from typer.testing import CliRunner

    from knnx.cli import app

    return CliRunner().invoke(app, [str(a) for a in args])


def test_select_k_cli_metric_is_the_library_result():
    import json

    from knnx.datasets import load_dataset
    from knnx.lpo.risk import select_k

    res = _cli(
        "select-k",
        "--p",
        3,
        "--k-max",
        9,
        "--metric",
        "minkowski",
        "--metric-param",
        "p=3",
        "--format",
        "json",
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    ds = load_dataset("ripley")
    train = ds.split[0]
    k, risk = select_k(ds.X[train], ds.y[train], 3, 9, metric="minkowski", metric_params={"p": 3})
    assert doc["metric"] == "minkowski" and doc["metric_params"] == {"p": 3} and doc["selected_k"] == k
    assert_allclose(doc["lpo_risk"], risk, rtol=0, atol=0)
    assert not np.array_equal(risk, select_k(ds.X[train], ds.y[train], 3, 9)[1])


@pytest.mark.parametrize(
    "args,message",
    [
        (["--metric", "l3"], "error: --metric: expected one of euclidean"),
        (
            ["--metric", "minkowski", "--metric-param", "p=0.5"],
            "error: --metric-param: minkowski's p must be",
        ),
        (["--metric", "minkowski", "--metric-param", "p"], "error: --metric-param: expected KEY=VALUE"),
        (["--metric", "hvdm", "--metric-param", "p=2"], "error: --metric-param: metric 'hvdm' takes none"),
        (  # the last was kept silently
            ["--metric", "minkowski", "--metric-param", "p=3", "--metric-param", "p=4"],
            "error: --metric-param: 'p' given twice; give each once",
        ),
        # --format json wrote {"p": Infinity}, which is no JSON; p = inf is chebyshev, as in a spec
        *(
            (
                ["--metric", "minkowski", "--metric-param", f"p={v}", "--format", "json"],
                f"error: --metric-param: 'p={v}' is not a finite number; minkowski with p = inf is --metric chebyshev",
            )
            for v in ("inf", "Infinity", "1e400")
        ),
        (
            ["--metric", "minkowski", "--metric-param", "p=nan"],
            "error: --metric-param: 'p=nan' is not a finite number",
        ),
    ],
)
def test_select_k_cli_bad_metric_is_one_line_exit_2(args, message):
    res = _cli("select-k", "--p", 3, "--k-max", 5, *args)
    assert res.exit_code == 2
    assert res.stderr.strip().startswith(message) and len(res.stderr.strip().splitlines()) == 1
