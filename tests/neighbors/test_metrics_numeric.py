"""The numeric metrics against scipy.spatial.distance.cdist and the documented reduced
forms: neighbour indices exactly those of a stable argsort (ties by index), distances
to 1e-12; seuclidean, mahalanobis and cosine as squared Euclidean on the mapped rows,
statistics fitted on the training rows only; precomputed distances; the graph store
under these metrics; refused input; determinism across thread counts."""

import numba
import numpy as np
import pytest
from metric_oracles import stable_knn
from numpy.testing import assert_allclose, assert_array_equal
from scipy.spatial.distance import cdist

from knnx import GraphStore, kneighbors
from knnx.errors import DataError
from knnx.neighbors import search as search_module
from knnx.neighbors.metrics import fit_metric

N, M, D = 300, 60, 4  # more than 128 rows: the selection kernel's sampled threshold strides

# name, metric_params, scipy's name and keywords, reduced distance from scipy's distance
NUMERIC = {
    "euclidean": (None, "euclidean", {}, lambda s, d: s**2),
    "manhattan": (None, "cityblock", {}, lambda s, d: s),
    "cityblock": (None, "cityblock", {}, lambda s, d: s),
    "chebyshev": (None, "chebyshev", {}, lambda s, d: s),
    "minkowski-3": ({"p": 3}, "minkowski", {"p": 3}, lambda s, d: s**3),
    "minkowski-1.5": ({"p": 1.5}, "minkowski", {"p": 1.5}, lambda s, d: s**1.5),
    "minkowski-1": ({"p": 1}, "minkowski", {"p": 1}, lambda s, d: s),
    "minkowski-2": ({"p": 2}, "minkowski", {"p": 2}, lambda s, d: s**2),
    "minkowski-inf": ({"p": np.inf}, "chebyshev", {}, lambda s, d: s),
    "hamming": (None, "hamming", {}, lambda s, d: s * d),
}


def _name(key):
    return key.split("-")[0]


def _integer_data(seed, n=N, m=M, d=D, top=4):
    """Values 0..top-1: every difference is an exact integer, ties (and duplicates) abound."""
    rng = np.random.default_rng(seed)
    return rng.integers(0, top, (n, d)).astype(float), rng.integers(0, top, (m, d)).astype(float)


def _power_sums(Q, X, p):
    """minkowski's reduced distance as documented: sum_t |q_t - r_t|^p, feature order."""
    out = np.zeros((Q.shape[0], X.shape[0]))
    for t in range(X.shape[1]):
        out += np.abs(Q[:, t][:, None] - X[:, t][None, :]) ** p
    return out


@pytest.mark.parametrize("loo", [True, False], ids=["loo", "queries"])
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("key", list(NUMERIC))
def test_numeric_metric_matches_cdist(key, seed, loo):
    params, sp_name, sp_kw, to_reduced = NUMERIC[key]
    X, Q = _integer_data(seed)
    S = cdist(X if loo else Q, X, sp_name, **sp_kw)
    # p = 1.5: |x - y|^1.5 is inexact, and two rows with the same differences in another
    # feature order can have reduced distances an ulp apart whose p-th roots (scipy's
    # distances) are equal: the ranking is the reduced form's, sum |q - r|^p in feature
    # order. Every other metric here is exact on integers: scipy's order itself.
    R = _power_sums(X if loo else Q, X, 1.5) if key == "minkowski-1.5" else None
    for k in (1, 6, 50, N - 1 if loo else N):
        ref_dist, ref_ind = stable_knn(S, k, loo)
        dist, ind = kneighbors(
            X, k, None if loo else Q, metric=_name(key), metric_params=params, squared=False
        )
        red, ind2 = kneighbors(X, k, None if loo else Q, metric=_name(key), metric_params=params)
        assert_array_equal(ind, ind2)
        assert_allclose(dist, ref_dist, rtol=1e-12, atol=0)
        assert_allclose(red, to_reduced(ref_dist, D), rtol=1e-12, atol=0)
        if loo:
            assert not (ind == np.arange(N)[:, None]).any()  # self excluded
        if R is None:
            assert_array_equal(ind, ref_ind)
            continue
        ref_red, ref_red_ind = stable_knn(R, k, loo)
        assert_array_equal(ind, ref_red_ind)
        assert_array_equal(red, ref_red)
        # ... and where scipy's stable order differs, its distances tie within 4 ulp
        differ = ind != ref_ind
        np.testing.assert_array_max_ulp(np.take_along_axis(S, ind, 1)[differ], ref_dist[differ], maxulp=4)


def test_minkowski_routes_to_the_named_metrics():
    X, _ = _integer_data(0)
    for p, name in [(1, "manhattan"), (1.0, "manhattan"), (2, "euclidean"), (np.inf, "chebyshev")]:
        routed = fit_metric("minkowski", X, metric_params={"p": p})
        assert routed.name == name
        assert routed.checksum == fit_metric(name, X).checksum
    assert fit_metric("minkowski", X, metric_params={"p": 3}).name == "minkowski"
    assert fit_metric("minkowski", X).name == "euclidean"  # p defaults to 2, as scipy's
    assert fit_metric("cityblock", X).checksum == fit_metric("manhattan", X).checksum


def test_hamming_on_non_integer_values_and_nominal_columns():
    rng = np.random.default_rng(5)
    X = rng.choice([0.5, 1.25, -3.0], (200, 5))
    Q = rng.choice([0.5, 1.25, 7.0], (30, 5))
    dist, ind = kneighbors(X, 200, Q, metric="hamming", squared=False)
    ref_dist, ref_ind = stable_knn(cdist(Q, X, "hamming"), 200, False)
    assert_array_equal(ind, ref_ind)
    assert_allclose(dist, ref_dist, rtol=1e-12)
    C = rng.integers(0, 3, (200, 5)).astype(float)
    with_nominal = kneighbors(C, 10, metric="hamming", nominal=[0, 2])
    assert_array_equal(with_nominal[1], stable_knn(cdist(C, C, "hamming"), 10, True)[1])


# --- metrics reduced to squared Euclidean on mapped rows --------------------------------


@pytest.fixture(params=["brute", "screened", "select"])
def path(request, monkeypatch):
    """Each Euclidean-path search through the brute-force kernel, the screened fast path
    and selection (as tests/neighbors/test_neighbors.py does)."""
    monkeypatch.setattr(search_module, "_SELECT_FACTOR", 10**12 if request.param == "select" else 0)
    monkeypatch.setattr(search_module, "_BRUTE_WORK", 0 if request.param == "screened" else 10**12)
    return request.param


def _documented_map(metric, X, params=None):
    """The map of the module docstring, statistics from X (the training rows) only."""
    params = params or {}
    if metric == "seuclidean":
        V = np.asarray(params["V"], float) if "V" in params else np.var(X, axis=0, ddof=1)
        V = np.where(V > 0, V, 1.0)
        return lambda A: A / np.sqrt(V)
    if metric == "mahalanobis":
        if "VI" in params:
            VI = np.asarray(params["VI"], float)
        else:
            VI = np.linalg.inv(np.cov(X, rowvar=False, ddof=1))
            VI = (VI + VI.T) / 2  # symmetric as the inverse of a symmetric matrix is
        L = np.linalg.cholesky(VI)
        return lambda A: A @ L
    return lambda A: A / np.sqrt(np.einsum("ij,ij->i", A, A))[:, None]  # cosine


def _scipy(metric, Q, X, params=None):
    params = params or {}
    if metric == "seuclidean":
        return cdist(Q, X, "seuclidean", V=params.get("V", np.var(X, axis=0, ddof=1)))
    if metric == "mahalanobis":
        return cdist(Q, X, "mahalanobis", VI=params.get("VI", np.linalg.inv(np.cov(X, rowvar=False))))
    return cdist(Q, X, "cosine")


MAPPED = ["seuclidean", "mahalanobis", "cosine"]


@pytest.mark.parametrize("loo", [True, False], ids=["loo", "queries"])
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("metric", MAPPED)
def test_mapped_metric_equals_sqeuclidean_on_mapped_rows(path, metric, seed, loo):
    X, Q = _integer_data(seed, top=4)
    if metric == "cosine":  # no zero row
        X, Q = X + (X.sum(1) == 0)[:, None], Q + (Q.sum(1) == 0)[:, None]
    f = _documented_map(metric, X)
    for k in (1, 9, N - 1 if loo else N):
        ref_red, ref_ind = stable_knn(cdist(f(X) if loo else f(Q), f(X), "sqeuclidean"), k, loo)
        red, ind = kneighbors(X, k, None if loo else Q, metric=metric)
        assert_array_equal(ind, ref_ind)
        assert_allclose(red, ref_red, rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("loo", [True, False], ids=["loo", "queries"])
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("metric", MAPPED)
def test_mapped_metric_agrees_with_scipy_on_continuous_data(path, metric, seed, loo):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((5, 5))
    X = rng.standard_normal((400, 5)) @ A + 1.0  # correlated, unequal variances
    Q = rng.standard_normal((80, 5)) @ A + 1.0
    k = 25
    ref_dist, ref_ind = stable_knn(_scipy(metric, X if loo else Q, X), k, loo)
    dist, ind = kneighbors(X, k, None if loo else Q, metric=metric, squared=False)
    assert_array_equal(ind, ref_ind)
    assert_allclose(dist, ref_dist, rtol=1e-9)


def test_given_V_and_VI_are_used():
    rng = np.random.default_rng(7)
    X, Q = rng.standard_normal((250, 3)), rng.standard_normal((40, 3))
    V = np.array([0.25, 4.0, 9.0])
    B = rng.standard_normal((3, 3))
    VI = B @ B.T + np.eye(3)
    for metric, params in [("seuclidean", {"V": V}), ("mahalanobis", {"VI": VI})]:
        fitted = fit_metric(metric, X, metric_params=params)
        if metric == "seuclidean":
            assert_array_equal(fitted.divisor, np.sqrt(V))
        else:
            assert_allclose(fitted.L @ fitted.L.T, VI, rtol=1e-12)
        f = _documented_map(metric, X, params)
        ref_red, ref_ind = stable_knn(cdist(f(Q), f(X), "sqeuclidean"), 20, False)
        red, ind = kneighbors(X, 20, Q, metric=metric, metric_params=params)
        assert_array_equal(ind, ref_ind)
        assert_allclose(red, ref_red, rtol=1e-12)
        dist, ind = kneighbors(X, 20, Q, metric=metric, metric_params=params, squared=False)
        assert_allclose(dist, np.take_along_axis(_scipy(metric, Q, X, params), ind, 1), rtol=1e-9)
        # not the fitted statistic
        assert not np.array_equal(ind, kneighbors(X, 20, Q, metric=metric)[1])


def test_statistics_are_fitted_on_training_rows_only():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((200, 3)) * [1.0, 3.0, 0.2]
    Q = rng.standard_normal((50, 3)) * 50  # would change the pooled statistics a lot
    se = fit_metric("seuclidean", X)
    assert_array_equal(se.divisor, np.sqrt(np.var(X, axis=0, ddof=1)))
    ma = fit_metric("mahalanobis", X)
    assert_allclose(ma.L @ ma.L.T, np.linalg.inv(np.cov(X, rowvar=False)), rtol=1e-10)
    for metric in MAPPED:
        few = kneighbors(X, 7, Q[:10], metric=metric)
        many = kneighbors(X, 7, Q, metric=metric)
        assert_array_equal(few[1], many[1][:10])
        assert_array_equal(few[0], many[0][:10])
        # the same distances as a store key: the checksum ignores the queries
        assert fit_metric(metric, X).checksum == fit_metric(metric, X.copy()).checksum
    assert fit_metric("seuclidean", np.vstack([X, Q])).checksum != se.checksum
    # a zero-variance training column counts as variance 1
    Xc = np.c_[X, np.full(200, 4.0)]
    assert fit_metric("seuclidean", Xc).divisor[-1] == 1.0


def test_singular_covariance_is_refused():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 3))
    X = np.c_[X, X[:, 0] + X[:, 1]]  # a collinear column
    with pytest.raises(DataError) as err:
        kneighbors(X, 3, metric="mahalanobis")
    assert "singular" in str(err.value) and "\n" not in str(err.value)
    # with VI given there is no covariance to invert
    kneighbors(X, 3, metric="mahalanobis", metric_params={"VI": np.eye(4)})
    with pytest.raises(DataError, match="positive definite"):
        kneighbors(X, 3, metric="mahalanobis", metric_params={"VI": -np.eye(4)})


def test_zero_row_is_refused_under_cosine():
    X = np.array([[1.0, 2.0], [0.0, 0.0], [3.0, 1.0]])
    with pytest.raises(DataError, match=r"^X: row 1 is all zeros") as err:
        kneighbors(X, 1, metric="cosine")
    assert "\n" not in str(err.value)
    with pytest.raises(DataError, match=r"^queries: row 0 is all zeros"):
        kneighbors(X[[0, 2]], 1, np.zeros((1, 2)), metric="cosine")


def test_cosine_distance_is_one_minus_cos():
    X = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 2.0], [-1.0, 0.0]])
    dist, ind = kneighbors(X, 4, np.array([[2.0, 0.0]]), metric="cosine", squared=False)
    assert_array_equal(ind, [[0, 1, 2, 3]])
    assert_allclose(dist, [[0.0, 1 - np.sqrt(0.5), 1.0, 2.0]], rtol=1e-15, atol=1e-16)


# --- one-hot nominal columns under a numeric metric -------------------------------------


def _onehot_documented(X, A, nominal):
    """A with each nominal column replaced, in place, by the indicators of the categories
    present in that column of the training rows X (a category absent from X: every
    indicator 0), as the module docstring defines metric_params={"onehot": True}."""
    blocks = []
    for c in range(A.shape[1]):
        if c in nominal:
            blocks.append((A[:, c][:, None] == np.unique(X[:, c])[None, :]).astype(float))
        else:
            blocks.append(A[:, c][:, None])
    return np.hstack(blocks)


ONEHOT = {
    "euclidean": ("sqeuclidean", {}),
    "manhattan": ("cityblock", {}),
    "chebyshev": ("chebyshev", {}),
    "minkowski": ("minkowski", {"p": 3}),
    "seuclidean": (None, {}),
    "cosine": (None, {}),
}


@pytest.mark.parametrize("loo", [True, False], ids=["loo", "queries"])
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("metric", list(ONEHOT))
def test_onehot_equals_the_metric_on_documented_indicators(metric, seed, loo):
    rng = np.random.default_rng(seed)
    nominal = (1, 3)
    X = np.c_[rng.integers(1, 4, N), rng.integers(0, 4, N), rng.integers(1, 4, N), rng.integers(0, 3, N)]
    X = X.astype(float)
    X[:4, 1], X[:3, 3] = np.arange(4), np.arange(3)  # every code 0..max present in training
    Q = np.c_[
        rng.integers(0, 5, M), rng.choice([0, 1, 2, 3, 6], M), rng.integers(1, 4, M), rng.integers(0, 5, M)
    ]
    Q = Q.astype(float)  # codes 6 (column 1), 3 and 4 (column 3): absent from training
    sp_name, sp_kw = ONEHOT[metric]
    params = {"onehot": True, **sp_kw}
    EX = _onehot_documented(X, X, nominal)
    EQ = EX if loo else _onehot_documented(X, Q, nominal)
    if sp_name is None:  # reduced to squared Euclidean on mapped rows
        f = _documented_map(metric, EX)
        S = cdist(f(EQ), f(EX), "sqeuclidean")
    else:
        S = cdist(EQ, EX, sp_name, **sp_kw)
        S = S**3 if metric == "minkowski" else S
    for k in (1, 12, N - 1 if loo else N):
        ref_red, ref_ind = stable_knn(S, k, loo)
        red, ind = kneighbors(X, k, None if loo else Q, metric=metric, metric_params=params, nominal=nominal)
        assert_array_equal(ind, ref_ind)
        assert_allclose(red, ref_red, rtol=1e-12, atol=1e-300)


def test_onehot_is_fitted_on_training_rows_and_keyed_apart():
    rng = np.random.default_rng(4)
    X = np.c_[rng.standard_normal(100), rng.integers(0, 3, 100)]
    X[:3, 1] = [0, 1, 2]
    Q = np.c_[rng.standard_normal(10), rng.integers(0, 6, 10)]
    a = fit_metric("seuclidean", X, nominal=[1], metric_params={"onehot": True})
    b = fit_metric("seuclidean", np.vstack([X, Q]), nominal=[1], metric_params={"onehot": True})
    assert a.checksum != b.checksum  # the queries' categories and variances are not the training part's
    EX = _onehot_documented(X, X, (1,))
    assert_array_equal(a.divisor, np.sqrt(np.var(EX, axis=0, ddof=1)))
    store = GraphStore()
    kneighbors(X[:, :1], 3, graphs=store)
    kneighbors(X, 3, nominal=[1], metric_params={"onehot": True}, graphs=store)
    kneighbors(X, 3, metric="heom", nominal=[1], graphs=store)
    assert store.misses == 3
    with pytest.raises(DataError, match=r"^metric_params: onehot must be true or false, got 1$"):
        kneighbors(X, 3, nominal=[1], metric_params={"onehot": 1})


# --- precomputed -------------------------------------------------------------------------


def test_precomputed_queries_are_ranked_as_given():
    rng = np.random.default_rng(11)
    D_train = rng.integers(0, 5, (150, 150)).astype(float)  # ties; need not be a metric
    D_test = rng.integers(0, 5, (30, 150)).astype(float)
    for k in (1, 10, 150):
        for squared in (True, False):
            dist, ind = kneighbors(D_train, k, D_test, metric="precomputed", squared=squared)
            ref_dist, ref_ind = stable_knn(D_test, k, False)
            assert_array_equal(ind, ref_ind)
            assert_array_equal(dist, ref_dist)


def test_precomputed_loo_excludes_the_diagonal():
    rng = np.random.default_rng(12)
    D = rng.integers(1, 5, (200, 200)).astype(float)
    np.fill_diagonal(D, 0.0)  # smallest of its row, yet never its own neighbour
    for k in (1, 13, 199):
        dist, ind = kneighbors(D, k, metric="precomputed")
        ref_dist, ref_ind = stable_knn(D, k, True)
        assert_array_equal(ind, ref_ind)
        assert_array_equal(dist, ref_dist)
        assert not (ind == np.arange(200)[:, None]).any()


@pytest.mark.parametrize("where", ["X", "queries"])
def test_a_negative_precomputed_distance_is_refused_as_a_dataset_refuses_it(where):
    """A negative entry ranked first (no distance is below 0); a dataset of distances
    refused it, knnx.kneighbors did not. Zero is a distance."""
    rng = np.random.default_rng(13)
    D = rng.integers(0, 5, (20, 20)).astype(float)
    Q = rng.integers(0, 5, (4, 20)).astype(float)
    (D if where == "X" else Q)[2, 7] = -0.25
    with pytest.raises(DataError) as error:
        kneighbors(D, 3, Q, metric="precomputed")
    assert str(error.value) == (
        f"{where}: precomputed: Negative values in data: row 2 column 7 is -0.25; distances are >= 0"
    )
    (D if where == "X" else Q)[2, 7] = 0.0
    dist, ind = kneighbors(D, 3, Q, metric="precomputed")
    ref_dist, ref_ind = stable_knn(Q, 3, False)
    assert_array_equal(ind, ref_ind) and assert_array_equal(dist, ref_dist)


def test_precomputed_equals_the_metric_it_was_computed_from():
    X, Q = _integer_data(4)
    red, ind = kneighbors(X, 20, Q, metric="manhattan")
    p_red, p_ind = kneighbors(cdist(X, X, "cityblock"), 20, cdist(Q, X, "cityblock"), metric="precomputed")
    assert_array_equal(ind, p_ind)
    assert_array_equal(red, p_red)


def test_precomputed_non_square_training_matrix_is_refused():
    D = np.ones((5, 4))
    for queries in (None, np.ones((2, 4))):
        with pytest.raises(DataError, match=r"square training distance matrix") as err:
            kneighbors(D, 2, queries, metric="precomputed")
        assert "\n" not in str(err.value)
    with pytest.raises(DataError, match=r"queries: has 3 features"):
        kneighbors(np.ones((4, 4)), 2, np.ones((2, 3)), metric="precomputed")


# --- the graph store ---------------------------------------------------------------------


def test_store_does_not_share_graphs_across_metrics():
    X, Q = _integer_data(0)
    store = GraphStore()
    names = ["euclidean", "seuclidean", "cosine", "manhattan", "chebyshev", "hamming"]
    Xc = X + 1.0  # no zero row (cosine)
    for i, metric in enumerate(names):
        got = kneighbors(Xc, 5, metric=metric, graphs=store)
        assert store.misses == i + 1 and store.hits == 0
        assert_array_equal(got[1], kneighbors(Xc, 5, metric=metric)[1])
    kneighbors(Xc, 5, metric="minkowski", metric_params={"p": 3}, graphs=store)
    kneighbors(Xc, 5, metric="minkowski", metric_params={"p": 1.5}, graphs=store)
    assert store.misses == len(names) + 2
    for metric in names:
        kneighbors(Xc, 4, metric=metric, graphs=store)
    assert store.hits == len(names) and store.misses == len(names) + 2
    # minkowski p = 1 is manhattan: the same graph
    kneighbors(Xc, 5, metric="minkowski", metric_params={"p": 1}, graphs=store)
    assert store.hits == len(names) + 1


@pytest.mark.parametrize("key", [*NUMERIC, *MAPPED])
def test_store_results_equal_direct_search(key):
    params = NUMERIC[key][0] if key in NUMERIC else None
    X, Q = _integer_data(1)
    X, Q = X + 1.0, Q + 1.0
    store = GraphStore(k_max=40)
    for queries in (None, Q):
        for k in (2, 40, 11):
            for squared in (True, False):
                kw = {"metric": _name(key), "metric_params": params, "squared": squared}
                got = kneighbors(X, k, queries, graphs=store, **kw)
                ref = kneighbors(X, k, queries, **kw)
                assert_array_equal(got[0], ref[0])
                assert_array_equal(got[1], ref[1])
    assert store.misses == 2 and store.hits == 10


@pytest.mark.parametrize("metric", ["manhattan", "cosine", "seuclidean"])
def test_added_graph_is_used_under_its_metric_not_euclidean(metric):
    X, Q = _integer_data(2, n=50, m=8)
    X, Q = X + 1.0, Q + 1.0
    fitted = fit_metric(metric, X)
    ind = np.tile(np.arange(3), (8, 1))  # rows 0, 1, 2 for every query: not the nearest
    dist = np.tile([0.5, 1.5, 2.5], (8, 1))
    store = GraphStore().add(X, dist, ind, queries=Q, metric=fitted)
    got = kneighbors(X, 2, Q, metric=metric, graphs=store)
    assert store.hits == 1 and store.misses == 0
    assert_array_equal(got[1], ind[:, :2])
    assert_array_equal(got[0], dist[:, :2])
    got = kneighbors(X, 2, Q, graphs=store)  # squared Euclidean: not that graph
    assert store.hits == 1 and store.misses == 1
    assert_array_equal(got[1], kneighbors(X, 2, Q)[1])
    other = "chebyshev" if metric != "chebyshev" else "manhattan"
    kneighbors(X, 2, Q, metric=other, graphs=store)
    assert store.misses == 2


# --- refused input -----------------------------------------------------------------------


def _refused(match, *args, **kwargs):
    with pytest.raises(DataError, match=match) as err:
        kneighbors(*args, **kwargs)
    assert "\n" not in str(err.value)
    return str(err.value)


def test_bad_metric_input_is_a_one_line_data_error():
    X, Q = _integer_data(0, n=20, m=3)
    msg = _refused(r"^metric: expected one of euclidean, .*got 'canberra'", X, 2, metric="canberra")
    assert "hvdm" in msg and "precomputed" in msg
    _refused(
        r"minkowski's p must be a number >= 1 \(or inf\), got 0.5",
        X,
        2,
        metric="minkowski",
        metric_params={"p": 0.5},
    )
    _refused(
        r"minkowski's p must be a number >= 1", X, 2, metric="minkowski", metric_params={"p": float("nan")}
    )
    _refused(r"minkowski's p must be a number >= 1", X, 2, metric="minkowski", metric_params={"p": "3"})
    _refused(
        r"^metric_params: metric 'manhattan' takes .*, got 'p'$",
        X,
        2,
        metric="manhattan",
        metric_params={"p": 1},
    )
    _refused(
        r"^metric_params: metric 'seuclidean' takes V\b.*, got 'VI'$",
        X,
        2,
        metric="seuclidean",
        metric_params={"VI": 1},
    )
    _refused(r"^metric_params: metric 'euclidean' takes .*got 'p'$", X, 2, metric_params={"p": 2})
    _refused(
        r"^metric_params: metric 'hamming' takes none, got 'onehot'$",
        X,
        2,
        metric="hamming",
        metric_params={"onehot": True},
    )
    _refused(
        r"^metric_params: metric 'heom' takes none, got 'V'$",
        X,
        2,
        metric="heom",
        metric_params={"V": [1, 1, 1, 1]},
    )
    _refused(
        r"seuclidean's V must hold 4 positive variances",
        X,
        2,
        metric="seuclidean",
        metric_params={"V": [1, 1, 0, 1]},
    )
    _refused(
        r"mahalanobis's VI must be a symmetric 4 x 4 matrix",
        X,
        2,
        metric="mahalanobis",
        metric_params={"VI": np.eye(3)},
    )


def test_missing_value_under_manhattan_names_row_and_column():
    X, Q = _integer_data(0, n=20, m=3)
    X[7, 2] = np.nan
    msg = _refused(
        r"^X: missing value \(NaN\) at row 7, column 2; metric 'manhattan'", X, 2, metric="manhattan"
    )
    assert "heom, hvdm or gower" in msg
    Q[1, 3] = np.nan
    _refused(
        r"^queries: missing value \(NaN\) at row 1, column 3; metric 'chebyshev'",
        X[:7],
        2,
        Q,
        metric="chebyshev",
    )
    for metric in ["seuclidean", "mahalanobis", "cosine", "hamming", "minkowski"]:
        _refused(r"^X: missing value \(NaN\) at row 7, column 2", X, 2, metric=metric)


def test_nominal_columns_are_refused_by_numeric_metrics():
    X, _ = _integer_data(0, n=20, m=3)
    for metric in ["euclidean", "seuclidean", "mahalanobis", "cosine", "manhattan", "chebyshev", "minkowski"]:
        with pytest.raises(
            DataError, match=rf"^nominal: column 1 is nominal; metric '{metric}' takes numeric"
        ) as err:
            fit_metric(metric, X, nominal=[3, 1])
        assert "\n" not in str(err.value)
    for metric in ["euclidean", "manhattan", "seuclidean"]:
        _refused(rf"^nominal: column 1 is nominal; metric '{metric}'", X, 2, metric=metric, nominal=[1])
    # no column named: nothing to refuse
    assert_array_equal(kneighbors(X, 2, nominal=[])[1], kneighbors(X, 2, nominal=[False] * 4)[1])
    # a boolean mask names the same columns
    _refused(r"^nominal: column 1 is nominal", X, 2, metric="manhattan", nominal=[False, True, False, False])


def test_non_integer_nominal_code_is_refused():
    X, Q = _integer_data(0, n=20, m=3)
    X[4, 2] = 1.5
    for metric in ["heom", "gower", "hamming"]:
        _refused(
            r"^X: nominal column 2 holds .*1.5.* at row 4; expected a category code",
            X,
            2,
            metric=metric,
            nominal=[2],
        )
    y = np.arange(20) % 2
    _refused(r"^X: nominal column 2 holds .*1.5.* at row 4", X, 2, metric="hvdm", nominal=[0, 2], y=y)
    _refused(r"^X: nominal column 2 holds .*1.5.* at row 4", X, 2, metric="vdm", y=y)
    X[4, 2] = 1.0
    Q[2, 0] = -1.0
    _refused(r"^queries: nominal column 0 holds .*-1.0.* at row 2", X, 2, Q, metric="heom", nominal=[0])
    _refused(
        r"^y: metric 'hvdm' fits its tables on the class labels; none given", X, 2, metric="hvdm", nominal=[0]
    )


# --- determinism -------------------------------------------------------------------------


def test_manhattan_same_result_on_one_and_two_threads():
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("numba has one thread")
    X, Q = _integer_data(9, n=3000, m=500, d=5, top=6)
    before = numba.get_num_threads()
    try:
        out = []
        for threads in (1, 2):
            numba.set_num_threads(threads)
            out.append((kneighbors(X, 20, metric="manhattan"), kneighbors(X, 20, Q, metric="manhattan")))
    finally:
        numba.set_num_threads(before)
    for a, b in zip(out[0], out[1], strict=True):
        assert_array_equal(a[0], b[0])
        assert_array_equal(a[1], b[1])
