"""Neighbour graphs travel explicitly: GraphStore, precomputed graphs, the search paths.

Oracles: knnx.kneighbors without a store, a brute-force NumPy search, scikit-learn's
NearestNeighbors, and a naive NumPy kNN vote under another dissimilarity.
"""

import copy
import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.neighbors import NearestNeighbors

import knnx._kernels.neighbors as KN
from knnx import GNNBClassifier, GraphStore, KNNClassifier, UNNClassifier, kneighbors
from knnx.estimators.knn import KNNLpoClassifier
from knnx.lpo.risk import lpo_risk
from knnx.neighbors import screen
from knnx.neighbors import search as N


@pytest.fixture
def exact_calls(monkeypatch):
    """(leave-one-out?, k) of every exact search actually computed."""
    calls = []
    real = N._exact

    def counting(R, Q, loo, k):
        calls.append((loo, k))
        return real(R, Q, loo, k)

    monkeypatch.setattr(N, "_exact", counting)
    return calls


def _data(n=120, d=3, seed=0, classes=3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = rng.integers(0, classes, n)
    return X, y


def _brute(X, Q, k, loo):
    """Every squared distance, sum_l (q_l - x_l)^2 in feature order (64 query rows at a
    time), ordered by (distance, index)."""
    out_d, out_i = [], []
    for r0 in range(0, Q.shape[0], 64):
        D = ((Q[r0 : r0 + 64, None, :] - X[None, :, :]) ** 2).sum(-1)
        if loo:
            D[np.arange(D.shape[0]), r0 + np.arange(D.shape[0])] = np.inf
        ind = np.lexsort((np.broadcast_to(np.arange(X.shape[0]), D.shape), D), axis=1)[:, :k]
        out_d.append(np.take_along_axis(D, ind, axis=1))
        out_i.append(ind)
    return np.vstack(out_d), np.vstack(out_i)


def test_a_store_returns_what_a_search_returns_and_searches_once(exact_calls):
    X, _ = _data()
    Q = _data(30, seed=1)[0]
    store = GraphStore(k_max=9)
    requests = [(k, queries) for k in (1, 4, 9, 3) for queries in (None, Q)]
    got = [kneighbors(X, k, queries, graphs=store) for k, queries in requests]
    assert exact_calls == [(True, 9), (False, 9)]  # each graph searched once, at k_max
    assert (store.hits, store.misses, len(store)) == (6, 2, 2)
    for (k, queries), (dist, ind) in zip(requests, got, strict=True):
        plain = kneighbors(X, k, queries)
        np.testing.assert_array_equal(dist, plain[0])
        np.testing.assert_array_equal(ind, plain[1])
    # a request beyond the stored width computes a wider graph and replaces it
    kneighbors(X, 12, graphs=store)
    assert exact_calls[-1] == (True, 12) and len(store) == 2


def test_a_store_drops_the_least_recently_used_graph_beyond_max_bytes():
    X, _ = _data(50)
    one = 50 * 4 * (8 + 8)  # (dist, ind) of 50 rows x 4 columns
    store = GraphStore(k_max=4, max_bytes=2 * one)
    queries = [_data(50, seed=s)[0] for s in (1, 2, 3)]
    for Q in queries[:2]:
        kneighbors(X, 4, Q, graphs=store)
    kneighbors(X, 4, queries[0], graphs=store)  # the first is now the most recent
    kneighbors(X, 4, queries[2], graphs=store)  # evicts the second
    assert store.nbytes == 2 * one
    assert set(store._shelf.graphs) == {store.key(X, queries[0]), store.key(X, queries[2])}
    # the byte count is kept, not summed: it equals the stored arrays' bytes after a
    # replacement by a wider graph (X's rows to queries[0] at 8 columns) and after clear()
    kneighbors(X, 8, queries[0], graphs=store.with_k_max(8))
    assert store.nbytes == sum(d.nbytes + i.nbytes for d, i in store._shelf.graphs.values()) == 2 * one
    assert set(store._shelf.graphs) == {store.key(X, queries[0])}  # 2 one's worth: the 4-wide one left
    store.clear()
    assert store.nbytes == 0 and len(store) == 0


def test_views_share_graphs_and_copies_share_the_store():
    X, y = _data()
    store = GraphStore()
    wide = store.with_k_max(7)
    kneighbors(X, 2, graphs=wide)
    assert store.get(store.key(X, None), 7)[0].shape == (120, 7)  # computed at the view's width
    assert copy.copy(store) is store and copy.deepcopy(store) is store
    est = KNNClassifier(k=3, graphs=store)
    assert clone(est).graphs is store  # grid search shares one store
    travelled = pickle.loads(pickle.dumps(est))  # another process starts empty
    assert isinstance(travelled.graphs, GraphStore) and len(travelled.graphs) == 0 and len(store) == 1


def test_estimators_give_the_same_results_with_a_store_and_share_its_graphs(exact_calls):
    X, y = _data(150)
    Xt = _data(40, seed=2)[0]
    store = GraphStore(k_max=11)
    for make in (
        lambda g: KNNClassifier(k=5, graphs=g),
        lambda g: KNNClassifier(k=7, weights="distance", graphs=g),
        lambda g: UNNClassifier(k=5, theta=0.5, graphs=g),
        lambda g: GNNBClassifier(k=5, graphs=g),
        lambda g: KNNLpoClassifier(p=3, k_max=9, graphs=g),
    ):
        plain = make(None).fit(X, y)
        shared = make(store).fit(X, y)
        np.testing.assert_array_equal(shared.predict(Xt), plain.predict(Xt))
        np.testing.assert_array_equal(shared.predict_proba(Xt), plain.predict_proba(Xt))
    # one leave-one-out graph and one test graph (k_max = 11) for all (GNNB votes over the
    # whole training set, eq. 16); UNN searches its prototypes at prediction (another
    # reference array): each graph computed once
    assert store.misses == len(store) == 3
    assert exact_calls.count((True, 11)) == 2  # the store once, the plain KNNLpoClassifier once
    assert store.get(store.key(X, None), 11) is not None and store.get(store.key(X, Xt), 11) is not None
    assert lpo_risk(X, y == 0, 2, 9, graphs=store).tolist() == lpo_risk(X, y == 0, 2, 9).tolist()
    assert store.misses == 3  # the LpO risk's leave-one-out graph (width 10) was a hit


def test_a_precomputed_graph_is_used_without_any_search(exact_calls):
    """scikit-learn's graph (Euclidean distances, squared here) given to KNN, UNN and
    GNNB: the predictions equal a fit that searched itself, and nothing is searched."""
    X, y = _data(150)
    Xt = _data(40, seed=3)[0]
    nn = NearestNeighbors(n_neighbors=8).fit(X)
    loo_dist, loo_ind = nn.kneighbors(None)
    test_dist, test_ind = nn.kneighbors(Xt)
    store = GraphStore()
    store.add(X, loo_dist**2, loo_ind).add(X, test_dist**2, test_ind, queries=Xt)
    expected = KNNClassifier(k=5).fit(X, y).predict(Xt)
    alphas = [UNNClassifier(k=5).fit(X, y).alpha_, GNNBClassifier(k=5).fit(X, y).alpha_]
    exact_calls.clear()
    np.testing.assert_array_equal(KNNClassifier(k=5, graphs=store).fit(X, y).predict(Xt), expected)
    # UNN and GNNB train on the leave-one-out graph from the store
    np.testing.assert_array_equal(UNNClassifier(k=5, graphs=store).fit(X, y).alpha_, alphas[0])
    np.testing.assert_array_equal(GNNBClassifier(k=5, graphs=store).fit(X, y).alpha_, alphas[1])
    assert exact_calls == []


def test_a_graph_of_another_dissimilarity_gives_that_dissimilarity_s_knn():
    """A Manhattan graph in the store: KNNClassifier votes as a naive NumPy kNN under
    Manhattan distance, with knnx's tie rule (nearest neighbour's class among the tied)."""
    rng = np.random.default_rng(0)
    X = rng.integers(0, 4, (80, 3)).astype(float)  # many equal distances and vote ties (5)
    y = rng.integers(0, 3, 80)
    Xt = rng.integers(0, 4, (30, 3)).astype(float) + np.array([0.5, 0.25, 0.0])
    D = np.abs(Xt[:, None, :] - X[None, :, :]).sum(-1)
    k = 4
    ind = np.lexsort((np.broadcast_to(np.arange(80), D.shape), D), axis=1)[:, :k]
    store = GraphStore().add(X, np.take_along_axis(D, ind, axis=1), ind, queries=Xt)
    got = KNNClassifier(k=k, graphs=store).fit(X, y).predict(Xt)
    expected = []
    for row in ind:
        votes = np.bincount(y[row], minlength=3)
        tied = set(np.flatnonzero(votes == votes.max()))
        expected.append(next(y[j] for j in row if y[j] in tied))
    np.testing.assert_array_equal(got, expected)
    assert np.sum(got != KNNClassifier(k=k).fit(X, y).predict(Xt)) == 4  # not Euclidean's


@pytest.mark.parametrize(
    "change,message",
    [
        (lambda d, i: (d[:, :3], i), "expected equal shapes"),
        (lambda d, i: (d, i + 1), "indices must be in [0, 30)"),
        (
            lambda d, i: (d, np.where(np.arange(4) == 0, np.arange(30)[:, None], i)),
            "lists a row among its own",
        ),
        (lambda d, i: (d[:, ::-1], i[:, ::-1]), "ordered by (distance, index)"),
        (lambda d, i: (-d, i), "squared distances >= 0"),
        (lambda d, i: (d, i.astype(float)), "expected integer indices"),
    ],
)
def test_a_bad_precomputed_graph_is_refused_in_one_line(change, message):
    X, _ = _data(30)
    dist, ind = kneighbors(X, 4)
    bad_dist, bad_ind = change(dist, ind)
    store = GraphStore()
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        store.add(X, bad_dist, bad_ind)
    assert len(store) == 0


def test_an_estimator_refuses_a_graphs_value_that_is_no_store():
    X, y = _data(30)
    with pytest.raises(ValueError, match="graphs must be a knnx.GraphStore or None, got 'yes'"):
        KNNClassifier(graphs="yes").fit(X, y)


@pytest.mark.parametrize(
    "m,n_ref,d,k,loo",
    [
        (1000, 250, 2, 1, False),  # select: 1000 k >= n d
        (100, 500, 13, 1, True),  # brute: little work
        (3000, 3000, 16, 5, True),  # screened
        (2500, 3000, 16, 5, False),
        (9000, 9000, 4, 3, True),  # screened, seeded
        (1100, 1100, 130, 2, True),  # screened, symmetric leave-one-out
    ],
)
def test_the_search_takes_the_paths_search_paths_names(monkeypatch, m, n_ref, d, k, loo):
    """search_paths (which the runner's warm-up compiles) is the choice the search
    makes: the first kernel run is the first path named, the seeded and symmetric
    variants run exactly when named; the graph equals brute force."""
    ran = []

    def spy(name, real):
        def wrapped(*args, **kwargs):
            ran.append(name)
            return real(*args, **kwargs)

        return wrapped

    # the search and screen modules read the kernel module's attributes at each call
    monkeypatch.setattr(KN, "select_rows", spy("select", KN.select_rows))
    monkeypatch.setattr(KN, "brute_rows", spy("brute", KN.brute_rows))
    monkeypatch.setattr(N, "_screened_search", spy("screen", N._screened_search))
    monkeypatch.setattr(KN, "seed_thresholds", spy("seed", KN.seed_thresholds))
    monkeypatch.setattr(screen, "_symmetric_loo", spy("symmetric", screen._symmetric_loo))
    rng = np.random.default_rng(m + d)
    X = rng.standard_normal((n_ref, d))
    Q = None if loo else rng.standard_normal((m, d))
    dist, ind = kneighbors(X, k, Q)
    paths = N.search_paths(m, n_ref, d, k, loo)
    assert ran[0] == paths[0]
    for variant in ("seed", "symmetric"):
        assert (variant in ran) == (variant in paths)
    if n_ref * (n_ref if loo else m) <= 9_000_000:
        np.testing.assert_array_equal(ind, _brute(X, X if loo else Q, k, loo)[1])
