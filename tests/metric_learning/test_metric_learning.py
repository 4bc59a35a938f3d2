"""The metric learners (knnx.metric_learning) against their definitions and references:
LMNN's objective and gradient against the paper's formula written out in NumPy and
finite differences, its active set against brute force at every search, its steps
against metric-learn's; ITML's projections against a plain NumPy loop and metric-learn
on the same constraints; LFDA's scatter matrices against their n x n definition and its
map against metric-learn's; NCA's objective against its definition."""

import numba
import numpy as np
import pytest
from sklearn.datasets import load_iris, load_wine
from sklearn.preprocessing import StandardScaler

from knnx.metric_learning import ITML, LFDA, LMNN, NCA
from knnx.metric_learning._peer import metric_learn
from knnx.metric_learning.lfda import scatters
from knnx.metric_learning.lmnn import _Descent, target_neighbours


def _wine():
    X, y = load_wine(return_X_y=True)
    return np.ascontiguousarray(StandardScaler().fit_transform(X)), y.astype(np.intp)


def _tied(seed=0, n=30, d=3):
    """Rows on an integer grid (many equal distances) with a duplicated row."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 4, size=(n, d)).astype(np.float64)
    X[5] = X[4]
    y = rng.integers(0, 3, size=n).astype(np.intp)
    y[:9] = np.repeat([0, 1, 2], 3)
    return X, y


def _paper_lmnn(X, y, L, k, mu):
    """Weinberger & Saul's objective and its gradient in L, from the definition: targets
    by (distance, index) among the other rows of the class, every triple visited."""
    n = len(y)
    D = np.array([[float(np.sum((L @ (X[i] - X[j])) ** 2)) for j in range(n)] for i in range(n)])
    E = np.array([[float(np.sum((X[i] - X[j]) ** 2)) for j in range(n)] for i in range(n)])
    obj, G = 0.0, np.zeros((X.shape[1], X.shape[1]))
    for i in range(n):
        same = [j for j in range(n) if j != i and y[j] == y[i]]
        targets = sorted(same, key=lambda j: (E[i, j], j))[:k]
        for j in targets:
            vij = np.outer(X[i] - X[j], X[i] - X[j])
            obj += (1 - mu) * D[i, j]
            G += (1 - mu) * vij
            for m in range(n):
                if y[m] != y[i] and 1 + D[i, j] - D[i, m] > 0:
                    obj += mu * (1 + D[i, j] - D[i, m])
                    G += mu * (vij - np.outer(X[i] - X[m], X[i] - X[m]))
    return obj, 2 * L @ G


def test_lmnn_objective_and_gradient_are_the_papers_on_tied_rows():
    X, y = _tied()
    rng = np.random.default_rng(1)
    L = np.eye(3) + 0.3 * rng.standard_normal((3, 3))
    state = _Descent(X, y, target_neighbours(X, y, 2), 0.4)
    state.search(L)
    obj, grad = state.evaluate(L)
    want_obj, want_grad = _paper_lmnn(X, y, L, 2, 0.4)
    assert obj == pytest.approx(want_obj, rel=1e-12)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-10, atol=1e-10)
    for a, b in ((0, 1), (2, 0), (1, 2)):  # central differences (no hinge at its kink here)
        E = np.zeros_like(L)
        E[a, b] = 1e-6
        up, down = state.evaluate(L + E)[0], state.evaluate(L - E)[0]
        assert (up - down) / 2e-6 == pytest.approx(grad[a, b], rel=1e-5)


def test_lmnn_targets_are_the_nearest_of_the_class_ties_by_index():
    X, y = _tied()
    T = target_neighbours(X, y, 2)
    E = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    for i in range(len(y)):
        same = [j for j in range(len(y)) if j != i and y[j] == y[i]]
        assert T[i].tolist() == sorted(same, key=lambda j: (E[i, j], j))[:2]
    assert y[4] == y[5] and T[4, 0] == 5 and T[5, 0] == 4  # a duplicate is its copy's nearest target


def test_lmnn_active_set_never_misses_an_impostor(monkeypatch):
    """At every search the stored pairs are exactly those a brute-force scan finds."""
    X, y = _tied(seed=2, n=40)
    searches = []
    original = _Descent.search

    def checked(self, L):
        original(self, L)
        Z = X @ L.T
        T = ((Z[:, None, :] - Z[self.targets]) ** 2).sum(-1)
        radius = 1 + T.max(axis=1)
        for i in range(len(y)):
            d = ((Z - Z[i]) ** 2).sum(-1)
            want = np.flatnonzero((y != y[i]) & (d < radius[i]))
            assert self.others[self.ptr[i] : self.ptr[i + 1]].tolist() == want.tolist()
        searches.append(int(self.ptr[-1]))

    monkeypatch.setattr(_Descent, "search", checked)
    model = LMNN(k=2, max_iter=80, min_iter=5, recompute=7, learn_rate=1e-3).fit(X, y)
    assert model.n_searches_ == len(searches) >= 3 and searches[0] > 0


def test_lmnn_takes_metric_learns_steps():
    """recompute=0 (a search before every evaluation, as metric-learn does): the same
    maps as metric-learn's LMNN step for step (wine, standardised: no tied targets)."""
    pytest.importorskip("metric_learn")
    ml = metric_learn()
    X, y = _wine()
    for steps in (5, 60):
        theirs = ml.LMNN(init="identity", n_neighbors=3, max_iter=steps + 2, min_iter=10**6, learn_rate=1e-3)
        mine = LMNN(k=3, max_iter=steps, min_iter=10**6, recompute=0, learn_rate=1e-3)
        np.testing.assert_allclose(mine.fit(X, y).components_, theirs.fit(X, y).components_, atol=1e-12)


def test_lmnn_converges_on_the_exact_active_set_and_is_the_same_whatever_the_threads():
    X, y = _wine()
    runs = []
    for threads in (1, numba.config.NUMBA_NUM_THREADS):
        numba.set_num_threads(threads)
        try:
            runs.append(LMNN(k=3, learn_rate=1e-3, max_iter=300).fit(X, y))
        finally:
            numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    assert np.array_equal(runs[0].components_, runs[1].components_)
    model = runs[0]
    want, _ = _paper_lmnn(X[::4], y[::4], model.components_, 3, 0.5)  # a subset: the formula is O(n^3)
    sub = _Descent(X[::4].copy(), y[::4].copy(), target_neighbours(X[::4], y[::4], 3), 0.5)
    sub.search(model.components_)
    assert sub.evaluate(model.components_)[0] == pytest.approx(want, rel=1e-12)
    full = _Descent(X, y, target_neighbours(X, y, 3), 0.5)
    full.search(model.components_)
    assert full.evaluate(model.components_)[0] == model.objective_
    assert model.objective_ < _Descent.evaluate(_searched(full, np.eye(13)), np.eye(13))[0]


def _searched(state, L):
    state.search(L)
    return state


def test_lmnn_refuses_a_class_without_k_plus_one_rows():
    X, y = _tied()
    y = y.copy()
    y[0] = 7
    with pytest.raises(ValueError, match=r"^LMNN: class 7 has 1 rows; each class needs at least 4 \(its k=3"):
        LMNN(k=3).fit(X, y)
    with pytest.raises(ValueError, match="n_components=4 exceeds the 3 features"):
        LMNN(n_components=4).fit(*_tied())


def _plain_itml(A, V, similar, bound, gamma, passes, tol):
    """Davis et al.'s Algorithm 1 as their code computes it, in NumPy."""
    lam = np.zeros(len(V))
    before = lam.copy()
    g = gamma / (gamma + 1)
    for _ in range(passes):
        for c, v in enumerate(V):
            p = v @ A @ v
            if similar[c]:
                alpha = min(lam[c], g * (1 / p - 1 / bound[c]))
                beta = alpha / (1 - alpha * p)
                bound[c] = 1 / (1 / bound[c] + alpha / gamma)
            else:
                alpha = min(lam[c], g * (1 / bound[c] - 1 / p))
                beta = -alpha / (1 + alpha * p)
                bound[c] = 1 / (1 / bound[c] - alpha / gamma)
            lam[c] -= alpha
            A = A + beta * np.outer(A @ v, A @ v)
        if np.abs(before - lam).sum() / (np.linalg.norm(lam) + np.linalg.norm(before)) < tol:
            break
        before = lam.copy()
    return A


def test_itml_is_the_papers_projections_on_its_drawn_pairs():
    X, y = load_iris(return_X_y=True)
    model = ITML(random_state=4).fit(X, y)
    pairs, similar = model.pairs_, model.similar_
    assert len(pairs) == 2 * 20 * 9 and similar.sum() == 180
    assert len({tuple(p) for p in pairs[similar]}) == 180 and len({tuple(p) for p in pairs[~similar]}) == 180
    assert np.all((y[pairs[:, 0]] == y[pairs[:, 1]]) == similar) and np.all(pairs[:, 0] != pairs[:, 1])
    V = X[pairs[:, 0]] - X[pairs[:, 1]]
    d2 = (V**2).sum(1)
    upper, lower = np.percentile(d2, (5, 95))
    assert model.bounds_ == (upper, lower)
    A = _plain_itml(np.eye(4), V, similar, np.where(similar, upper, lower), 1.0, model.n_iter_, 1e-3)
    np.testing.assert_allclose(model.metric_, A, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(model.components_.T @ model.components_, A, rtol=1e-9, atol=1e-12)
    again = ITML(random_state=4).fit(X, y)
    assert np.array_equal(again.components_, model.components_)
    assert not np.array_equal(ITML(random_state=5).fit(X, y).pairs_, pairs)


def test_itml_equals_metric_learn_on_the_same_constraints():
    pytest.importorskip("metric_learn")
    ml = metric_learn()
    X, y = _wine()
    model = ITML(random_state=0, max_iter=200).fit(X, y)
    pairs = np.stack([X[model.pairs_[:, 0]], X[model.pairs_[:, 1]]], axis=1)
    signs = np.where(model.similar_, 1, -1)
    theirs = ml.ITML(max_iter=200, prior="identity").fit(pairs, signs, bounds=np.array(model.bounds_))
    np.testing.assert_allclose(model.metric_, theirs.get_mahalanobis_matrix(), rtol=1e-8, atol=1e-10)


def _plain_scatters(X, y, k):
    n = len(y)
    E = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    sigma = np.zeros(n)
    for c in np.unique(y):
        rows = np.flatnonzero(y == c)
        sub = np.sort(E[np.ix_(rows, rows)], axis=1)
        sigma[rows] = np.sqrt(sub[:, min(k, len(rows) - 1)])
    Ww, Wb = np.zeros((n, n)), np.full((n, n), 1 / n)
    for i in range(n):
        for j in range(n):
            if y[i] == y[j]:
                n_c = np.sum(y == y[i])
                A = np.exp(-E[i, j] / (sigma[i] * sigma[j])) if sigma[i] * sigma[j] > 0 else 0.0
                Ww[i, j], Wb[i, j] = A / n_c, A * (1 / n - 1 / n_c)

    def S(W):
        return 0.5 * sum(W[i, j] * np.outer(X[i] - X[j], X[i] - X[j]) for i in range(n) for j in range(n))

    return S(Wb), S(Ww)


def test_lfda_scatters_are_the_papers():
    X, y = _tied(seed=3, n=25)
    X = X + np.random.default_rng(0).normal(scale=0.1, size=X.shape)
    for k, got in ((2, scatters(X, y, 2)), (7, scatters(X, y, 7))):
        want = _plain_scatters(X, y, k)
        np.testing.assert_allclose(got[0], want[0], atol=1e-12)
        np.testing.assert_allclose(got[1], want[1], atol=1e-12)


def _their_sigma(Xc, k, squared=False):
    """metric-learn 0.7.0's local scale: ``np.partition(dist, k, axis=0)[:, k]``, column k
    of the partitioned matrix (the distances of row k), not each row's k-th neighbour."""
    dist = ((Xc[:, None, :] - Xc[None, :, :]) ** 2).sum(-1)
    return np.sqrt(np.partition(dist, k, axis=0)[:, k])[:, None], None


def test_lfda_map_equals_metric_learns_up_to_sign_and_scale_given_its_local_scale(monkeypatch):
    """metric-learn's LFDA departs from the paper twice: its local scale (above) and
    ``S_b + 2 S_w`` for S_b (the same eigenvectors). Given its scale, knnx's map has its
    directions; with the paper's scale it does not."""
    import knnx.metric_learning.lfda as lfda_module

    pytest.importorskip("metric_learn")
    ml = metric_learn()
    X, y = _wine()
    theirs = ml.LFDA(k=7, embedding_type="plain", n_components=4).fit(X, y).components_

    def cosines(mine):
        return np.abs(
            np.sum(mine * theirs, axis=1) / np.linalg.norm(mine, axis=1) / np.linalg.norm(theirs, axis=1)
        )

    papers = LFDA(k=7, embedding="plain", n_components=4).fit(X, y).components_
    assert cosines(papers).min() < 0.9
    monkeypatch.setattr(lfda_module, "kneighbors", _their_sigma)
    np.testing.assert_allclose(cosines(LFDA(k=7, embedding="plain", n_components=4).fit(X, y).components_), 1.0,
                               atol=1e-8)  # fmt: skip
    weighted = LFDA(k=7, n_components=4).fit(X, y)
    S_b, S_w = scatters(X, y, 7)
    L = weighted.components_  # weighted: v^T S_w v = 1, each row scaled by sqrt(lambda)
    np.testing.assert_allclose(L @ S_w @ L.T, np.diag(weighted.eigenvalues_), atol=1e-8)
    np.testing.assert_allclose(L @ S_b @ L.T, np.diag(weighted.eigenvalues_**2), atol=1e-7)
    assert weighted.objective_ == pytest.approx(weighted.eigenvalues_.sum(), rel=1e-15)


def test_nca_is_scikit_learns_with_its_objective():
    from sklearn.neighbors import NeighborhoodComponentsAnalysis

    X, y = _wine()
    mine = NCA(random_state=0, max_iter=30).fit(X, y)
    theirs = NeighborhoodComponentsAnalysis(random_state=0, max_iter=30).fit(X, y)
    assert np.array_equal(mine.components_, theirs.components_)
    Z = X @ mine.components_.T
    D = ((Z[:, None, :] - Z[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(D, np.inf)
    P = np.exp(-(D - D.min(axis=1, keepdims=True)))
    P /= P.sum(axis=1, keepdims=True)
    assert mine.objective_ == pytest.approx(np.sum(P * (y[:, None] == y[None, :])), rel=1e-12)


def test_metric_learners_fit_from_several_threads_at_once():
    # Their kernels are numba-parallel (prange): numba's workqueue layer aborts the process
    # when two threads launch one at once, so each call holds knnx's lock; the maps are
    # those of fits one after the other.
    from concurrent.futures import ThreadPoolExecutor

    X, y = load_wine(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    makers = [lambda: LMNN(k=2, max_iter=5), lambda: NCA(max_iter=5), LFDA, lambda: ITML(max_iter=5)]
    alone = [make().fit(X, y).components_ for make in makers]
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(lambda make: make().fit(X, y).components_, makers * 2))
    for got, want in zip(together, alone * 2, strict=True):
        np.testing.assert_array_equal(got, want)
