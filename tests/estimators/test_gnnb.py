"""GNNBClassifier against Table 1 re-derived, the generic eq. (11), a hand-worked
example, a naive dense NumPy Algorithm 1, brute-force GNNB* choices, Theorems 3-4 and
scikit-learn's estimator checks."""

import math

import numpy as np
import pytest

from knnx import GNNBClassifier, kneighbors
from knnx._kernels import gnnb as G
from knnx._kernels import leveraged as L
from knnx.estimators.gnnb import PHIS, balanced_loss, gnnb_path, normalize_rows

LN2 = np.log(2.0)


def _xlx(x):
    x = np.asarray(x, dtype=float)
    return np.where(x > 0, x * np.log(np.where(x > 0, x, 1.0)), 0.0)


# Table 1 written out independently of the kernel: phi, nabla phi, its inverse.
PHI = {
    "squared": (lambda x: -x * (1 - x), lambda x: 2 * x - 1, lambda u: (u + 1) / 2),
    "logistic": (
        lambda x: _xlx(x) + _xlx(1 - x),
        lambda x: np.log(x / (1 - x)),
        lambda u: 1 / (1 + np.exp(-u)),
    ),
    "binary_logistic": (
        lambda x: (_xlx(x) + _xlx(1 - x)) / LN2,
        lambda x: np.log2(x / (1 - x)),
        lambda u: 1 / (1 + 2.0**-u),
    ),
    "matsushita": (
        lambda x: -np.sqrt(x * (1 - x)),
        lambda x: (2 * x - 1) / (2 * np.sqrt(x * (1 - x))),
        lambda u: (1 + u / np.sqrt(1 + u * u)) / 2,
    ),
}
# Table 1's psi_phi column and pi* column (row C's pi* is blank in the paper: ln 2 / 8).
PSI = {
    "squared": lambda x: (1 - x) ** 2,
    "logistic": lambda x: np.log2(1 + np.exp(-x)),
    "binary_logistic": lambda x: np.log2(1 + 2.0**-x),
    "matsushita": lambda x: -x + np.sqrt(1 + x * x),
}
PI_STAR = {"squared": 1 / 16, "logistic": LN2 / 8, "binary_logistic": LN2 / 8, "matsushita": 1 / 8}
# delta_j(1/2) column of Table 1, as a multiple of eta / n_j.
DELTA_HALF = {"squared": 0.5, "logistic": 4 * LN2, "binary_logistic": 4 / LN2, "matsushita": 1.0}


def z_of(phi):
    f = PHI[phi][0]
    return float(f(0.0) - f(0.5))


def generic_update(phi, w, a):
    """Eq. (11) with the test's own phi: (nabla phi)^-1 (-a + nabla phi (Z w)) / Z."""
    _, grad, inv = PHI[phi]
    z = z_of(phi)
    return inv(-a + grad(z * w)) / z


@pytest.mark.parametrize("phi", list(PHIS))
def test_table1_constants(phi):
    code = PHIS[phi]
    z = z_of(phi)
    assert G.z_norm(code) == pytest.approx(z, rel=1e-14)
    # H* = sup psi'' = psi''(0) (eq. 8), found on a grid from finite differences of psi
    x = np.linspace(-6, 6, 2401)
    h = 1e-4
    fd = (PSI[phi](x + h) - 2 * PSI[phi](x) + PSI[phi](x - h)) / h**2
    assert G.h_star(code) == pytest.approx(fd.max(), rel=1e-5)
    assert fd.argmax() == 1200 or phi == "squared"  # attained at 0
    assert z * z * G.h_star(code) / 2 == pytest.approx(PI_STAR[phi], rel=1e-12)  # eq. (43)
    assert 2 * (1 - 0.5) / G.h_star(code) == pytest.approx(DELTA_HALF[phi], rel=1e-12)
    # initial weight 1 / (2Z) = -psi'(0)
    assert G.bcl_weight(code, 0.0) == pytest.approx(0.5 / z, rel=1e-14)


@pytest.mark.parametrize("phi", list(PHIS))
def test_balanced_loss_is_eq4_and_weights_are_its_slope(phi):
    """psi_phi(x) = (phi*(-x) + phi(0)) / Z (eq. 4) with phi*(u) = u p - phi(p),
    p = (nabla phi)^-1 (u); -psi' = (nabla phi)^-1 (-x) / Z; psi'' by finite differences."""
    f, _, inv = PHI[phi]
    code = PHIS[phi]
    z = z_of(phi)
    x = np.linspace(-5, 5, 41)
    p = inv(-x)
    conj = -x * p - f(p)
    np.testing.assert_allclose(balanced_loss(phi, x), (conj + f(0.0)) / z, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(balanced_loss(phi, x), PSI[phi](x), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose([G.bcl_weight(code, v) for v in x], inv(-x) / z, rtol=1e-12)
    h = 1e-5
    slope = -(PSI[phi](x + h) - PSI[phi](x - h)) / (2 * h)
    np.testing.assert_allclose([G.bcl_weight(code, v) for v in x], slope, rtol=1e-7, atol=1e-9)
    h = 1e-3
    curv = (PSI[phi](x + h) - 2 * PSI[phi](x) + PSI[phi](x - h)) / h**2
    np.testing.assert_allclose([G.bcl_curvature(code, v) for v in x], curv, rtol=1e-5, atol=1e-7)
    for u in (-3.0, -0.2, 0.0, 0.7, 4.0):  # the kernel's phi, its gradient and inverse
        assert G.phi_grad_inv(code, u) == pytest.approx(inv(u), rel=1e-13)
    for v in (0.05, 0.3, 0.5, 0.8):
        assert G.phi_value(code, v) == pytest.approx(f(v), rel=1e-13)
        assert G.phi_grad(code, v) == pytest.approx(PHI[phi][1](v), rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("phi", list(PHIS))
def test_table1_weight_updates_equal_generic_eq11(phi):
    """Every closed form of Table 1 (rows B and D as corrected) against eq. (11)."""
    code = PHIS[phi]
    z = z_of(phi)
    ws = np.linspace(0.01, 0.99, 25) / z  # weights lie in (0, 1/Z)
    for w in ws:
        for a in np.linspace(-6, 6, 49):
            want = generic_update(phi, w, a)
            assert G.weight_update(code, w, a) == pytest.approx(want, rel=1e-9, abs=1e-12)
            assert G.weight_update_generic(code, w, a) == pytest.approx(want, rel=1e-9, abs=1e-12)
    # row B as printed, w e^a / (w ln 2 + (1 - w) ln 2), is not eq. (11)
    if phi == "logistic":
        w, a = 0.9, 0.5
        printed = w * np.exp(a) / (w * LN2 + (1 - w) * LN2)
        assert abs(printed - generic_update(phi, w, a)) > 0.5


@pytest.mark.parametrize("phi", list(PHIS))
def test_weight_update_is_the_weight_of_the_moved_edge(phi):
    """Eq. (11) moves w = -psi'(x) to -psi'(x + a): the weights and edges never part."""
    code = PHIS[phi]
    for x in (-2.0, 0.0, 0.4, 3.0):
        for a in (-1.5, -0.1, 0.2, 2.5):
            w = G.bcl_weight(code, x)
            assert G.weight_update(code, w, a) == pytest.approx(
                G.bcl_weight(code, x + a), rel=1e-9, abs=1e-13
            )


def test_hand_worked_squared_half():
    """phi = squared, epsilon = 1/2, k = 2, lazy index order, on five 1-D points.

    X = 0, 1, 3, 4, 6 with y = 0, 1, 1, 0, 1 (class 1 is trained; s = -1, 1, 1, -1, 1).
    Leave-one-out 2-NN: 0:{1,2} 1:{0,2} 2:{3,1} 3:{2,4} 4:{3,2}, so the inverse
    neighbourhoods are R(0)={1} R(1)={0,2} R(2)={0,1,3,4} R(3)={2,4} R(4)={3}.
    w starts at 1/(2Z) = 2, delta = eta / (2 n_j), w_i <- w_i - 2 delta s_i s_j.
      j=0: eta = -w1 = -2, delta = -1, w1 = 0
      j=1: eta = -w0 + w2 = 0, delta = 0
      j=2: eta = -w0 + w1 - w3 + w4 = -2, delta = -1/4; w0 = 3/2, w1 = 1/2, w3 = 3/2, w4 = 5/2
      j=3: eta = -w2 - w4 = -9/2, delta = -9/8; w2 = -1/4 (negative), w4 = 1/4
      j=4: eta = -w3 = -3/2, delta = -3/4; w3 = 0
    The risk is mean (1 - edge)^2 = mean (w/2)^2 = 21/160.
    """
    X = np.array([[0.0], [1.0], [3.0], [4.0], [6.0]])
    y = np.array([0, 1, 1, 0, 1])
    g = GNNBClassifier(k=2, phi="squared", epsilon=0.5).fit(X, y)
    alpha = np.array([-1.0, 0.0, -0.25, -9 / 8, -0.75])
    np.testing.assert_allclose(g.alpha_[0][:, 1], alpha, atol=1e-15)
    np.testing.assert_allclose(g.alpha_[0][:, 0], alpha, atol=1e-15)  # mirror
    np.testing.assert_allclose(g.weights_[0][:, 1], [1.5, 0.5, -0.25, 0.0, 0.25], atol=1e-15)
    assert g.curve_["surrogate_risk"][-1] == pytest.approx(21 / 160, abs=1e-15)
    np.testing.assert_array_equal(g.curve_["weight_updates"], [0, 1, 3, 7, 9, 10])
    np.testing.assert_array_equal(g.weight_updates_, [[10, 10]])
    np.testing.assert_array_equal(g.prototypes_, [0, 2, 3, 4])  # alpha_1 = 0 is dropped


def naive_gnnb(X, y, k, phi, eps, T, chooser, order=None, replay=None):
    """Algorithm 1 with a dense neighbourhood matrix and the test's own eq. (11).

    GNNB* recomputes every |delta_j| from scratch, eta_j as the correctly rounded sum
    of its terms (math.fsum), and takes the first maximal one (exact float64 ties go
    to the smallest index), unless ``replay`` (T, n_trained) gives the indices to
    leverage: then each must reach the maximum |delta_j| to 1e-10. Returns alpha
    (m, n_trained), the weights, the risk after every iteration (from alpha, via the
    edges) and the chosen indices.
    """
    m = len(y)
    classes = np.unique(y)
    trained = [1] if len(classes) == 2 else list(classes)
    _, nbr = kneighbors(X, k)
    N = np.zeros((m, m))  # N[i, j] = 1 iff j ~k i
    for i in range(m):
        N[i, nbr[i]] = 1.0
    n = N.sum(axis=0)
    z = z_of(phi)
    factor = 2 * (1 - eps) / G.h_star(PHIS[phi])
    order = np.arange(m) if order is None else order
    alpha = np.zeros((m, len(trained)))
    weights = np.zeros((m, len(trained)))
    risks, chosen = [], []
    for ci, cls in enumerate(trained):
        s = np.where(y == cls, 1.0, -1.0)
        w = np.full(m, 0.5 / z)
        a = np.zeros(m)
        risk = [PSI[phi](np.zeros(m)).mean()]
        picks = []
        for t in range(T):
            eta = (N * (w * s)[:, None]).sum(axis=0) * s
            delta = np.where(n > 0, factor * eta / np.maximum(n, 1), 0.0)
            if chooser == "lazy":
                j = order[t % m]
            else:
                keys = [
                    abs(factor * math.fsum(w[i] * s[i] * s[jj] for i in np.flatnonzero(N[:, jj])) / n[jj])
                    if n[jj] > 0
                    else 0.0
                    for jj in range(m)
                ]
                j = int(np.argmax(keys))  # the first maximal key
                top = np.abs(delta).max()
                if replay is not None:
                    j = int(replay[t, ci])
                    assert abs(delta[j]) >= top * (1 - 1e-10)
            picks.append(j)
            inv = np.flatnonzero(N[:, j])
            w[inv] = generic_update(phi, w[inv], delta[j] * s[inv] * s[j])
            a[j] += delta[j]
            edges = s * (N @ (a * s))
            risk.append(PSI[phi](edges).mean())
        alpha[:, ci], weights[:, ci] = a, w
        risks.append(risk)
        chosen.append(picks)
    return alpha, weights, np.mean(risks, axis=0), np.array(chosen).T


def _data(seed, m=40, C=3, d=2):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, C, m)
    X = rng.standard_normal((m, d)) + 0.8 * y[:, None]
    return X, y


@pytest.mark.parametrize("phi", list(PHIS))
@pytest.mark.parametrize("chooser", ["lazy", "largest_delta"])
@pytest.mark.parametrize("C", [2, 3])
def test_kernel_matches_naive_dense_gnnb(phi, chooser, C):
    X, y = _data(1 + C, C=C)
    m = len(y)
    T = m if chooser == "lazy" else 2 * m
    order = np.random.default_rng(5).permutation(m)
    g = GNNBClassifier(k=4, phi=phi, epsilon=0.3, n_iter=T, chooser=chooser, seed=5).fit(X, y)
    chosen = _fit_raw(X, y, 4, phi, 0.3, T, chooser == "lazy", order)[4]
    alpha, w, risk, picks = naive_gnnb(X, y, 4, phi, 0.3, T, chooser, order, replay=chosen)
    np.testing.assert_array_equal(picks, chosen)
    cols = [1] if C == 2 else list(range(C))
    np.testing.assert_allclose(g.alpha_[0][:, cols], alpha, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(g.weights_[0][:, cols], w, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(g.curve_["surrogate_risk"], risk, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("phi", list(PHIS))
def test_largest_delta_picks_the_brute_force_maximum(phi):
    """GNNB* (blocked maximum) chooses, at every step, the example of largest |delta_j|
    in a full recomputation, ties (many at the start, where all weights are equal) to
    the smallest index."""
    X, y = _data(7, m=60, C=3)
    T = 3 * len(y)
    chosen = _fit_raw(X, y, 5, phi, 0.5, T, lazy=False)[4]
    picks = naive_gnnb(X, y, 5, phi, 0.5, T, "largest_delta")[3]
    np.testing.assert_array_equal(chosen, picks)
    assert len(np.unique(chosen[:, 0])) < T  # examples come back


def _fit_raw(X, y, k, phi, eps, T, lazy, order=None):
    from knnx.neighbors.search import reciprocal_neighbors

    m = len(y)
    C = len(np.unique(y))
    _, nbr = kneighbors(X, k)
    rptr, rind = reciprocal_neighbors(nbr, m)
    tc = np.array([1] if C == 2 else range(C), dtype=np.intp)
    order = np.arange(m, dtype=np.intp) if order is None else order.astype(np.intp)
    tie = np.arange(C, dtype=np.intp)
    schedule = L.Schedule(T, lazy, order, np.array([], dtype=np.intp))
    return G.gnnb_fit(L.Graph(nbr, rptr, rind), y.astype(np.intp), C, tc, schedule, PHIS[phi], eps, tie)


@pytest.mark.parametrize("phi", list(PHIS))
@pytest.mark.parametrize("chooser", ["lazy", "largest_delta"])
@pytest.mark.parametrize("eps", [0.1, 0.5, 0.9])
def test_surrogate_risk_never_increases(phi, chooser, eps):
    """Theorem 4's mechanism: every step lowers the risk by >= 2 eps (1 - eps) eta^2 / (H* n m) (eq. 32)."""
    X, y = _data(11, m=120, C=3, d=3)
    g = GNNBClassifier(k=6, phi=phi, epsilon=eps, n_iter=3 * len(y), chooser=chooser, seed=2).fit(X, y)
    risk = g.curve_["surrogate_risk"]
    assert np.all(np.diff(risk) <= 1e-13)
    assert risk[-1] < 0.8 * risk[0]


@pytest.mark.parametrize("phi", list(PHIS))
@pytest.mark.parametrize("eps", [0.2, 0.5])
def test_adaptive_rate_of_theorem3(phi, eps):
    """rho(c, j, eps) = 2 (1 - eps) sum_i H_psi(edge_i) / (H* n_j) (eq. 18), replayed from
    the run, lies in (0, 2 (1 - eps)] and makes delta the Newton step rho eta / sum H (eq. 17).

    Theorem 3 prints 0 < rho < 2 (1 - eps); the upper bound is reached when every edge of
    the inverse neighbourhood is 0 (H_psi(0) = H*: the first step) and always for the
    squared phi (H_psi = 2 = H*), so knnx tests rho <= 2 (1 - eps), and < for the other
    phi once an edge has moved.
    """
    X, y = _data(3, m=50, C=2)
    m = len(y)
    code = PHIS[phi]
    _, _, _, _, chosen, steps, _, _ = _fit_raw(X, y, 4, phi, eps, 2 * m, lazy=False)
    _, nbr = kneighbors(X, 4)
    s = np.where(y == 1, 1.0, -1.0)
    edges = np.zeros(m)
    hs = G.h_star(code)
    strict = 0
    for j, delta in zip(chosen[:, 0], steps[:, 0], strict=True):
        inv = np.flatnonzero((nbr == j).any(axis=1))
        if len(inv) == 0:
            assert delta == 0.0
            continue
        H = np.array([G.bcl_curvature(code, e) for e in edges[inv]])
        w = np.array([G.bcl_weight(code, e) for e in edges[inv]])
        eta = np.sum(w * s[inv] * s[j])
        rho = 2 * (1 - eps) * H.sum() / (hs * len(inv))
        assert 0 < rho <= 2 * (1 - eps) * (1 + 1e-12)
        assert delta == pytest.approx(rho * eta / H.sum(), rel=1e-9, abs=1e-15)
        if phi != "squared" and np.any(edges[inv] != 0):
            assert rho < 2 * (1 - eps)
            strict += 1
        edges[inv] += delta * s[inv] * s[j]
    assert phi == "squared" or strict > 0


def test_binary_logistic_is_logistic_rescaled():
    """Rows B and C give the same rule: alpha_C = alpha_B / ln 2, same risk and posteriors."""
    X, y = _data(4, m=60, C=3)
    b = GNNBClassifier(k=5, phi="logistic").fit(X, y)
    c = GNNBClassifier(k=5, phi="binary_logistic").fit(X, y)
    np.testing.assert_allclose(c.alpha_, b.alpha_ / LN2, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(c.curve_["surrogate_risk"], b.curve_["surrogate_risk"], rtol=1e-10)
    np.testing.assert_allclose(c.predict_proba(X), b.predict_proba(X), rtol=1e-9)


def test_binary_mirror_equals_training_both_classes():
    X, y = _data(8, m=50, C=2)
    m = len(y)
    from knnx.neighbors.search import reciprocal_neighbors

    _, nbr = kneighbors(X, 4)
    rptr, rind = reciprocal_neighbors(nbr, m)
    args = (L.Graph(nbr, rptr, rind), y.astype(np.intp), 2)
    tail = (
        L.Schedule(m, True, np.arange(m, dtype=np.intp), np.array([], dtype=np.intp)),
        PHIS["logistic"],
        0.5,
        np.arange(2, dtype=np.intp),
    )
    both = G.gnnb_fit(*args, np.array([0, 1], dtype=np.intp), *tail)
    one = G.gnnb_fit(*args, np.array([1], dtype=np.intp), *tail)
    np.testing.assert_allclose(both[0][:, 0], one[0][:, 0], rtol=1e-12)
    np.testing.assert_allclose(both[0][:, 1], one[0][:, 0], rtol=1e-12)
    np.testing.assert_allclose(both[3], one[3])  # training error curves


@pytest.mark.parametrize("phi", list(PHIS))
def test_posteriors_are_the_link_of_h(phi):
    X, y = _data(9, m=80, C=3)
    g = GNNBClassifier(k=5, phi=phi).fit(X, y)
    Xq = _data(10, m=30, C=3)[0]
    h = g.decision_function(Xq)
    p = np.clip(PHI[phi][2](h), 0, 1)
    np.testing.assert_allclose(g.predict_proba(Xq), p / p.sum(axis=1, keepdims=True), rtol=1e-12)
    np.testing.assert_array_equal(g.predict(Xq), np.argmax(h, axis=1))  # no ties on continuous data


def _eq16(X, y, alpha, rows, Xq, k):
    """h_c(x) = sum over the k nearest of X[rows] (by (distance, index)) of alpha_jc y_jc."""
    d2 = ((Xq[:, None, :] - X[rows][None]) ** 2).sum(-1)
    near = rows[np.argsort(d2, axis=1, kind="stable")[:, :k]]
    h = np.zeros((len(Xq), alpha.shape[1]))
    for c in range(alpha.shape[1]):
        h[:, c] = (alpha[near, c] * np.where(y[near] == c, 1.0, -1.0)).sum(axis=1)
    return h


def test_prediction_votes_among_prototypes():
    X, y = _data(12, m=80, C=3)
    Xq = _data(13, m=25, C=3)[0]
    g = GNNBClassifier(k=5, chooser="largest_delta", n_iter=30, prototypes="leveraged").fit(X, y)
    P = g.prototypes_
    assert 0 < len(P) < len(y)
    np.testing.assert_allclose(g.decision_function(Xq), _eq16(X, y, g.alpha_[0], P, Xq, 5), atol=1e-12)


def test_prediction_takes_neighbours_from_the_whole_training_set_by_default():
    """Eq. (16): the k nearest training rows, those with alpha = 0 voting 0."""
    X, y = _data(12, m=80, C=3)
    Xq = _data(13, m=25, C=3)[0]
    g = GNNBClassifier(k=5, chooser="largest_delta", n_iter=30).fit(X, y)
    assert 0 < len(g.prototypes_) < len(y)  # many rows have alpha = 0 ...
    h = _eq16(X, y, g.alpha_[0], np.arange(len(y)), Xq, 5)
    np.testing.assert_allclose(g.decision_function(Xq), h, atol=1e-12)  # ... and still take a slot
    assert not np.allclose(h, _eq16(X, y, g.alpha_[0], g.prototypes_, Xq, 5))
    np.testing.assert_array_equal(g.predict(Xq), np.argmax(h, axis=1))


def test_divide_and_conquer_averages_block_posteriors():
    """n_splits = s: one GNNB per regular block of L2-normalised columns, posteriors averaged."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 90)
    X = rng.standard_normal((90, 10)) + y[:, None] * 0.5
    Xq = rng.standard_normal((20, 10))
    g = GNNBClassifier(k=5, n_splits=3).fit(X, y)
    assert [list(b) for b in g.blocks_] == [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]
    probas = []
    for cols in g.blocks_:
        Xb = X[:, cols] / np.linalg.norm(X[:, cols], axis=1, keepdims=True)
        Xqb = Xq[:, cols] / np.linalg.norm(Xq[:, cols], axis=1, keepdims=True)
        probas.append(GNNBClassifier(k=5).fit(Xb, y).predict_proba(Xqb))
    mean = np.mean(probas, axis=0)
    np.testing.assert_allclose(g.predict_proba(Xq), mean, rtol=1e-12)
    np.testing.assert_array_equal(g.predict(Xq), np.argmax(mean, axis=1))
    l1 = GNNBClassifier(k=5, n_splits=2, block_norm="l1").fit(X, y)
    Xb = X[:, :5] / np.abs(X[:, :5]).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(l1.alpha_[0], GNNBClassifier(k=5).fit(Xb, y).alpha_[0])
    np.testing.assert_allclose(normalize_rows(np.zeros((2, 3)), "l2"), 0.0)


def test_single_block_uses_the_data_without_copy_and_leaves_it_unchanged():
    """One block over every feature (block_norm "none") is X itself: the 391 MiB copy at
    n = 1e5, d = 512 is gone. Several blocks or a norm still get their own arrays, and
    the caller's X is never written to."""
    rng = np.random.default_rng(3)
    y = rng.integers(0, 3, 60)
    X = rng.standard_normal((60, 6)) + y[:, None]
    before = X.copy()
    g = GNNBClassifier(k=4).fit(X, y)
    assert g._block(X, 0) is X
    np.testing.assert_array_equal(X, before)
    np.testing.assert_array_equal(GNNBClassifier(k=4).fit(X.copy(), y).alpha_, g.alpha_)
    two = GNNBClassifier(k=4, n_splits=2).fit(X, y)
    assert not np.shares_memory(two._block(X, 0), X)
    l2 = GNNBClassifier(k=4, block_norm="l2").fit(X, y)
    assert not np.shares_memory(l2._block(X, 0), X)
    np.testing.assert_array_equal(X, before)


def test_path_equals_separate_fits():
    X, y = _data(14, m=70, C=3)
    Xq = _data(15, m=20, C=3)[0]
    for params in ({}, {"chooser": "largest_delta"}, {"n_splits": 2}):
        path = gnnb_path(GNNBClassifier(k=4, **params), X, y, Xq, [5, 40, 140])
        for T, p in zip([5, 40, 140], path, strict=True):
            np.testing.assert_allclose(p, GNNBClassifier(k=4, n_iter=T, **params).fit(X, y).predict_proba(Xq))


def test_lazy_visits_each_example_once_with_T_m():
    X, y = _data(16, m=40, C=3)
    order = np.random.default_rng(3).permutation(40)
    chosen = _fit_raw(X, y, 4, "logistic", 0.5, 40, True, order)[4]
    for c in range(3):
        np.testing.assert_array_equal(chosen[:, c], order)
    g = GNNBClassifier(k=4, seed=3).fit(X, y)
    assert not np.allclose(g.alpha_, GNNBClassifier(k=4).fit(X, y).alpha_)


def test_parameters_are_validated():
    X, y = _data(17, m=20, C=2)
    for bad in ({"epsilon": 0.0}, {"epsilon": 1.0}, {"phi": "exp"}, {"chooser": "boosting"}, {"n_splits": 0}):
        with pytest.raises(ValueError):
            GNNBClassifier(**bad).fit(X, y)
    with pytest.raises(ValueError, match="n_splits=3 exceeds the number of features"):
        GNNBClassifier(n_splits=3).fit(X, y)
    with pytest.raises(ValueError, match="k=20 must be below"):
        GNNBClassifier(k=20).fit(X, y)


def test_accuracy_on_ripley():
    """Measured: test error of GNNB(log), k = 5, T = m, on Ripley's split (kNN: 0.130):
    0.124 voting among all training rows (eq. 16), 0.127 among the leveraged ones."""
    from knnx.datasets import load_dataset

    ds = load_dataset("ripley")
    tr, te = ds.split
    err = np.mean(GNNBClassifier(k=5).fit(ds.X[tr], ds.y[tr]).predict(ds.X[te]) != ds.y[te])
    assert err == pytest.approx(0.124, abs=1e-9)
    g = GNNBClassifier(k=5, prototypes="leveraged").fit(ds.X[tr], ds.y[tr])
    assert np.mean(g.predict(ds.X[te]) != ds.y[te]) == pytest.approx(0.127, abs=1e-9)


def naive_star_chosen(X, y, k, phi, eps, T):
    """GNNB* from scratch in plain Python (every |delta_j| from the correctly rounded sum
    of its terms at every step, the largest taken, exact ties to the smallest j; see
    :func:`test_gnnb_speed_equivalence._naive_star`): the chosen indices (T, n_trained)."""
    from test_gnnb_speed_equivalence import _naive_star

    return _naive_star(X, y, k, phi, eps, T)[0]


@pytest.mark.parametrize("phi", list(PHIS))
@pytest.mark.parametrize("grid", [False, True])
def test_largest_delta_equals_a_from_scratch_chooser(phi, grid):
    """Exactly the chosen sequence of :func:`naive_star_chosen`, also on integer-grid data
    (duplicates, many exact ties of |delta_j|)."""
    rng = np.random.default_rng(7 + grid)
    m = 45
    X = rng.integers(0, 4, size=(m, 2)).astype(float) if grid else rng.normal(size=(m, 2))
    y = rng.integers(0, 3, m)
    T = 3 * m
    out = _fit_raw(X, y, 4, phi, 0.5, T, lazy=False)
    np.testing.assert_array_equal(out[4], naive_star_chosen(X, y, 4, phi, 0.5, T))
