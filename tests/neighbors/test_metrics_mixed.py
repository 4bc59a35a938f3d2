"""heom, hvdm, gower and vdm against the papers' formulas (tests/metric_oracles.py):
neighbour indices exactly those of a stable sort of the oracle's distance matrix, and
distances to 1e-12, for queries and the leave-one-out graph, on mixed numeric and
nominal data with missing values and many ties; the graph store under these metrics;
determinism across thread counts."""

import functools

import numba
import numpy as np
import pytest
from metric_oracles import mixed_data, mixed_distance, mixed_reduced, stable_knn
from numpy.testing import assert_allclose, assert_array_equal

from knnx import GraphStore, kneighbors
from knnx.errors import DataError
from knnx.neighbors.metrics import MAX_CATEGORIES, fit_metric

MIXED = ["heom", "hvdm", "gower", "vdm"]
N, M = 260, 70  # more than 128 training rows: the kernel's sampled threshold strides


def _columns(metric, A, nominal):
    """vdm takes the nominal columns only (every attribute is nominal)."""
    return A[:, list(nominal)] if metric == "vdm" else A


@functools.cache
def _case(metric, seed, loo):
    """(X, y, queries or None, nominal, oracle reduced matrix)."""
    X, y, Q, nominal = mixed_data(seed, N, M)
    X, Q = _columns(metric, X, nominal), _columns(metric, Q, nominal)
    kw = {} if metric == "vdm" else {"nominal": nominal}
    reduced = mixed_reduced(metric, X, X if loo else Q, y=y, **kw)
    return X, y, None if loo else Q, kw, reduced


def _search(metric, X, y, Q, kw, k, squared, **extra):
    return kneighbors(X, k, Q, metric=metric, y=y, squared=squared, **kw, **extra)


@pytest.mark.parametrize("loo", [True, False], ids=["loo", "queries"])
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("metric", MIXED)
def test_mixed_metric_matches_paper_oracle(metric, seed, loo):
    X, y, Q, kw, reduced = _case(metric, seed, loo)
    for k in (1, 5, 40, N - 1 if loo else N):
        ref_red, ref_ind = stable_knn(reduced, k, loo)
        red, ind = _search(metric, X, y, Q, kw, k, squared=True)
        assert_array_equal(ind, ref_ind)  # ties (many: integer data, NaNs) ordered by index
        assert_allclose(red, ref_red, rtol=1e-12, atol=0)
        dist, ind2 = _search(metric, X, y, Q, kw, k, squared=False)
        assert_array_equal(ind2, ref_ind)
        assert_allclose(dist, mixed_distance(metric, ref_red), rtol=1e-12, atol=0)
        if loo:
            assert not (ind == np.arange(N)[:, None]).any()


def test_data_holds_the_special_cases():
    """The oracle runs over what the brief asks: unseen codes, all-missing columns,
    duplicates, pairs without a common attribute (each checked on the data)."""
    X, y, Q, nominal = mixed_data(0, N, M)
    assert np.isnan(X[:, 5]).all() and np.isnan(X[:, 6]).all()
    assert not np.isnan(Q[3:, 5]).all()
    assert set(np.unique(Q[:, 1][~np.isnan(Q[:, 1])])) - set(np.unique(X[:, 1][~np.isnan(X[:, 1])]))
    assert 2.0 not in X[:, 3]
    assert (np.isnan(X[0]) == np.isnan(X[1])).all()
    assert np.nanmin(Q[:, 0]) < np.nanmin(X[:, 0]) and np.nanmax(Q[:, 0]) > np.nanmax(X[:, 0])
    assert 0.1 < np.isnan(X[:, :5]).mean() < 0.2


def test_duplicate_rows_stay_neighbours():
    # Training rows 0 and 1 are equal (NaNs included). Under gower each is the other's
    # first neighbour at distance 0 (their common attributes are equal); under heom an
    # attribute missing in both still counts 1, so their distance is sqrt(#missing).
    X, y, _, nominal = mixed_data(0, N, M)
    dist, ind = kneighbors(X, 1, metric="gower", nominal=nominal, squared=False)
    assert ind[0, 0] == 1 and ind[1, 0] == 0 and dist[0, 0] == dist[1, 0] == 0.0
    red, ind = kneighbors(X, N - 1, metric="heom", nominal=nominal)
    assert red[0][ind[0] == 1] == [np.isnan(X[0]).sum()]


def test_gower_pair_without_common_attribute_is_one():
    X, y, Q, nominal = mixed_data(1, N, M)
    dist, ind = kneighbors(X, N, Q[:2], metric="gower", nominal=nominal, squared=False)
    assert_array_equal(dist[0], np.ones(N))  # query 0 entirely missing: distance 1 to all
    assert_array_equal(ind[0], np.arange(N))  # ... ties ordered by index
    assert dist[1][np.flatnonzero(ind[1] == 0)[0]] == 1.0  # query 1 shares no attribute with row 0


def test_unseen_nominal_value_has_zero_probabilities():
    # One nominal attribute, two classes. Training: value 0 -> classes (0, 0, 1), value
    # 1 -> (1, 1). Query value 2 is unseen: P(c | 2) = 0, so its squared vdm to value 0
    # is (2/3)^2 + (1/3)^2 = 5/9 and to value 1 is 0 + 1 = 1; a numeric column adds 0.
    X = np.array([[0.0, 1.0], [0.0, 1.0], [0.0, 1.0], [1.0, 1.0], [1.0, 1.0]])
    y = np.array([0, 0, 1, 1, 1])
    red, ind = kneighbors(X, 5, np.array([[2.0, 1.0]]), metric="hvdm", nominal=[0], y=y)
    assert_array_equal(ind, [[0, 1, 2, 3, 4]])
    assert_allclose(red, [[5 / 9] * 3 + [1.0] * 2], rtol=1e-15)
    # A code between the seen ones but never seen (codes {0, 2}, query 1): also P = 0.
    X2 = np.array([[0.0], [0.0], [2.0], [2.0]])
    red2, _ = kneighbors(X2, 4, np.array([[1.0]]), metric="vdm", y=np.array([0, 1, 1, 1]))
    assert_allclose(red2, [[0.5, 0.5, 1.0, 1.0]], rtol=1e-15)


def test_vdm_category_codes_up_to_the_table_limit():
    # hvdm and vdm keep a (codes + 1)^2 table per attribute: codes below MAX_CATEGORIES
    top = MAX_CATEGORIES - 1
    X = np.array([[0.0], [1.0], [float(top)]])
    dist, ind = kneighbors(X, 2, metric="vdm", y=[0, 1, 1])
    # P(.|0) = (1, 0), P(.|1) = P(.|top) = (0, 1)
    assert_array_equal(ind, [[1, 2], [2, 0], [1, 0]])
    assert_array_equal(dist, [[2.0, 2.0], [0.0, 2.0], [0.0, 2.0]])
    X[2, 0] = 1e6
    for metric in ("vdm", "hvdm"):
        with pytest.raises(
            DataError,
            match=rf"^X: nominal column 0 holds the code 1e\+06; {metric}'s tables take codes below {MAX_CATEGORIES}",
        ) as err:
            kneighbors(X, 2, metric=metric, nominal=[0], y=[0, 1, 1])
        assert "\n" not in str(err.value)
    # heom and gower compare codes: any code
    assert_array_equal(kneighbors(X, 1, metric="heom", nominal=[0])[1], [[1], [0], [0]])


def test_zero_spread_divisor_is_one():
    # A constant training column: range 0 and sigma 0 count as a divisor of 1 (knnx's
    # _scales; see the report on the module docstring's wording for hvdm).
    X = np.array([[0.0, 5.0], [1.0, 5.0], [2.0, 5.0], [3.0, 5.0]])
    y = np.array([0, 1, 0, 1])
    q = np.array([[0.0, 8.0]])
    for metric, expect in [("heom", 9.0), ("gower", 3.0 / 2), ("hvdm", 9.0)]:
        red, ind = kneighbors(X, 1, q, metric=metric, y=y)
        assert ind[0, 0] == 0 and red[0, 0] == expect, metric


def test_statistics_come_from_training_rows_only():
    X, y, Q, nominal = mixed_data(2, N, M)
    for metric in ["heom", "hvdm", "gower"]:
        fitted = fit_metric(metric, X, y, nominal=nominal)
        with_queries = fit_metric(metric, np.vstack([X, Q]), np.r_[y, np.zeros(M, int)], nominal=nominal)
        assert fitted.checksum != with_queries.checksum
        both = kneighbors(X, 5, np.vstack([Q, Q * 3]), metric=metric, y=y, nominal=nominal)
        alone = kneighbors(X, 5, Q, metric=metric, y=y, nominal=nominal)
        assert_array_equal(both[1][:M], alone[1])
        assert_array_equal(both[0][:M], alone[0])


# --- the graph store --------------------------------------------------------------------


def test_store_keys_by_metric_and_labels():
    X, y, Q, nominal = mixed_data(0, 150, 20)
    store = GraphStore()
    a = kneighbors(X, 4, metric="heom", nominal=nominal, graphs=store)
    b = kneighbors(X, 4, metric="gower", nominal=nominal, graphs=store)
    assert store.misses == 2 and store.hits == 0
    assert_array_equal(a[1], kneighbors(X, 4, metric="heom", nominal=nominal)[1])
    assert_array_equal(b[1], kneighbors(X, 4, metric="gower", nominal=nominal)[1])
    kneighbors(X, 4, metric="heom", nominal=nominal, graphs=store)
    assert store.misses == 2 and store.hits == 1
    # hvdm fitted on other labels is another distance: another graph
    y2 = np.roll(y, 1)
    h1 = kneighbors(X, 4, metric="hvdm", nominal=nominal, y=y, graphs=store)
    h2 = kneighbors(X, 4, metric="hvdm", nominal=nominal, y=y2, graphs=store)
    assert store.misses == 4
    assert_array_equal(h2[1], kneighbors(X, 4, metric="hvdm", nominal=nominal, y=y2)[1])
    assert_array_equal(h1[1], kneighbors(X, 4, metric="hvdm", nominal=nominal, y=y)[1])
    kneighbors(X, 4, metric="hvdm", nominal=nominal, y=y2, graphs=store)
    assert store.hits == 2
    # other nominal columns: another graph
    kneighbors(X, 4, metric="heom", nominal=nominal[:2], graphs=store)
    assert store.misses == 5


@pytest.mark.parametrize("metric", MIXED)
def test_store_results_equal_direct_search(metric):
    X, y, _, kw, _ = _case(metric, 0, True)
    _, _, Q, _, _ = _case(metric, 0, False)
    store = GraphStore(k_max=30)
    for queries in (None, Q):
        for k in (3, 30, 7):
            for squared in (True, False):
                got = _search(metric, X, y, queries, kw, k, squared, graphs=store)
                ref = _search(metric, X, y, queries, kw, k, squared)
                assert_array_equal(got[0], ref[0])
                assert_array_equal(got[1], ref[1])
    assert store.misses == 2 and store.hits == 10


def test_added_graph_is_used_under_its_metric_only():
    X, y, _, nominal = mixed_data(0, 60, 5)
    M = fit_metric("hvdm", X, y, nominal=nominal)
    # a graph that is not the hvdm graph (each row's next rows), valid and ordered
    ind = (np.arange(60)[:, None] + np.arange(1, 4)[None, :]) % 60
    dist = np.tile([1.0, 2.0, 3.0], (60, 1))
    store = GraphStore().add(X, dist, ind, metric=M)
    got = kneighbors(X, 3, metric="hvdm", nominal=nominal, y=y, graphs=store)
    assert store.hits == 1
    assert_array_equal(got[1], ind)
    assert_array_equal(got[0], dist)
    got = kneighbors(X, 3, metric=M, graphs=store)  # the fitted metric itself
    assert store.hits == 2 and (got[1] == ind).all()
    # another distance on the same rows (heom; hvdm on other labels): not this graph
    for kw in ({"metric": "heom"}, {"metric": "hvdm", "y": y[::-1]}):
        before = store.misses
        got = kneighbors(X, 3, nominal=nominal, graphs=store, **kw)
        assert store.misses == before + 1
        assert_array_equal(got[1], kneighbors(X, 3, nominal=nominal, **kw)[1])


# --- determinism ------------------------------------------------------------------------


def test_hvdm_same_result_on_one_and_two_threads():
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("numba has one thread")
    X, y, Q, nominal = mixed_data(3, 3000, 400)
    before = numba.get_num_threads()
    try:
        out = []
        for threads in (1, 2):
            numba.set_num_threads(threads)
            out.append(
                (
                    kneighbors(X, 15, metric="hvdm", nominal=nominal, y=y),
                    kneighbors(X, 15, Q, metric="hvdm", nominal=nominal, y=y),
                )
            )
    finally:
        numba.set_num_threads(before)
    for a, b in zip(out[0], out[1], strict=True):
        assert_array_equal(a[0], b[0])
        assert_array_equal(a[1], b[1])
