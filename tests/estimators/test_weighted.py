"""WeightedMetricNN (Paredes & Vidal 2006): the weighted neighbour kernels against NumPy
brute force (ties included), the updates against finite differences of J_T, a hand-worked
epoch, the best-LOO guarantee, and scikit-learn's estimator checks."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import check_estimator

from knnx import WeightedMetricNN
from knnx.datasets import load_dataset
from knnx.estimators.weighted import CPW_PROBE_PAIRS, best_probe, cdm_weights, loo_state


# --------------------------------------------------------------------------- oracles
def brute_dissimilarities(Q, X, y, W, v, l1=False):
    """D[i, p] written as the kernel defines it: products w x rounded once, sum in feature order."""
    D = np.empty((len(Q), len(X)))
    for p in range(len(X)):
        w = W[y[p]]
        diff = w * Q - w * X[p]  # (n_q, m)
        acc = np.zeros(len(Q))
        for j in range(X.shape[1]):
            acc += np.abs(diff[:, j]) if l1 else diff[:, j] * diff[:, j]
        D[:, p] = (v[p] * acc) ** 2 if l1 else (v[p] * v[p]) * acc
    return D


def brute_same_diff(X, y, W, v, l1=False):
    D = brute_dissimilarities(X, X, y, W, v, l1)
    n = len(X)
    same, diff = np.full(n, -1), np.full(n, -1)
    for i in range(n):
        for target, mask in ((same, y == y[i]), (diff, y != y[i])):
            mask = mask.copy()
            mask[i] = False
            cand = np.flatnonzero(mask)
            if len(cand):
                target[i] = cand[np.lexsort((cand, D[i, cand]))[0]]
    return same, diff, D


def fixed_neighbour_J(X, y, W, v, same, diff, beta):
    """J_T (eq. 7) with the neighbours fixed, from scratch in NumPy (Euclidean)."""
    total = 0.0
    for x in range(len(X)):
        i, k = same[x], diff[x]
        ds = v[i] ** 2 * np.sum(W[y[i]] ** 2 * (X[x] - X[i]) ** 2)
        dd = v[k] ** 2 * np.sum(W[y[k]] ** 2 * (X[x] - X[k]) ** 2)
        r = np.sqrt(ds / dd)
        total += 1.0 / (1.0 + np.exp(beta * (1.0 - r)))
    return total / len(X)


def random_problem(seed, n=40, m=3, C=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, m))
    y = np.arange(n) % C
    W = rng.uniform(0.5, 2.0, size=(C, m))
    v = rng.uniform(0.5, 2.0, size=n)
    return X, y, W, v


# --------------------------------------------------------------------------- kernels
@pytest.mark.parametrize("l1", [False, True])
@pytest.mark.parametrize("seed", [0, 1])
def test_same_diff_neighbours_match_brute_force_on_random_data(seed, l1):
    X, y, W, v = random_problem(seed, n=300, m=5, C=4)
    state = loo_state(X, y, W, v, beta=8.0, l1=l1)
    same, diff, D = brute_same_diff(X, y, W, v, l1)
    np.testing.assert_array_equal(state["same"], same)
    np.testing.assert_array_equal(state["diff"], diff)
    np.testing.assert_array_equal(state["d_same"], D[np.arange(len(X)), same])
    np.testing.assert_array_equal(state["d_diff"], D[np.arange(len(X)), diff])


@pytest.mark.parametrize("l1", [False, True])
def test_same_diff_neighbours_with_ties_and_duplicates(l1):
    """Integer grid, power-of-two weights, duplicated rows: exact ties everywhere; the
    smaller index wins, a row is never its own neighbour but its duplicates are."""
    rng = np.random.default_rng(3)
    X = rng.integers(0, 3, size=(120, 2)).astype(float)
    X[60:] = X[:60]
    y = rng.integers(0, 3, size=120)
    W = rng.choice([0.5, 1.0, 2.0], size=(3, 2))
    v = rng.choice([1.0, 2.0], size=120)
    state = loo_state(X, y, W, v, beta=8.0, l1=l1)
    same, diff, D = brute_same_diff(X, y, W, v, l1)
    np.testing.assert_array_equal(state["same"], same)
    np.testing.assert_array_equal(state["diff"], diff)
    assert (state["same"] != np.arange(120)).all()
    # the ties were real: many rows have several prototypes at the winning dissimilarity
    n_tied = sum(np.sum(D[i, y != y[i]] == D[i, diff[i]]) > 1 for i in range(120))
    assert n_tied > 30


def test_single_member_class_and_single_class():
    X = np.array([[0.0], [1.0], [5.0]])
    state = loo_state(X, np.array([0, 0, 1]), np.ones((2, 1)), np.ones(3), beta=8.0)
    assert list(state["same"]) == [1, 0, -1] and list(state["diff"]) == [2, 2, 1]
    assert state["loo_error"] == pytest.approx(1 / 3)  # the lone class-1 row
    one = loo_state(X, np.zeros(3, dtype=int), np.ones((1, 1)), np.ones(3), beta=8.0)
    assert list(one["diff"]) == [-1, -1, -1] and one["loo_error"] == 0.0


@pytest.mark.parametrize("l1", [False, True])
@pytest.mark.parametrize("k", [1, 4, 9])
def test_k_nearest_matches_brute_force_with_ties(k, l1):
    rng = np.random.default_rng(5)
    X = rng.integers(0, 4, size=(80, 2)).astype(float)
    y = rng.integers(0, 3, size=80)
    W = rng.choice([0.5, 1.0, 2.0], size=(3, 2))
    v = rng.choice([1.0, 0.5], size=80)
    Q = rng.integers(0, 4, size=(50, 2)).astype(float)
    clf = WeightedMetricNN(scheme="l2", k=k, base="l1" if l1 else "euclidean").fit(X, y)
    clf._protos.prepare(W, v)
    dist, ind = clf.kneighbors(Q)
    D = brute_dissimilarities(Q, X, y, W, v, l1)
    for i in range(len(Q)):
        expect = np.lexsort((np.arange(80), D[i]))[:k]
        np.testing.assert_array_equal(ind[i], expect)
        np.testing.assert_array_equal(dist[i], D[i, expect])


# --------------------------------------------------------------------------- gradient
@pytest.mark.parametrize("learn_w, learn_v", [(True, False), (False, True), (True, True)])
def test_updates_are_the_gradient_of_J_with_neighbours_fixed(learn_w, learn_v):
    """CW (w only), PW (v only), CPW (both): n dJ_T/dw and n dJ_T/dv by central differences
    of eq. (7) with x= and x!= held fixed equal the summed terms of (16), (19), (21)."""
    X, y, W, v = random_problem(7, n=30, m=3, C=3)
    beta = 2.0
    state = loo_state(X, y, W, v, beta, learn_w=learn_w, learn_v=learn_v)
    same, diff = state["same"], state["diff"]
    n, h = len(X), 1e-6
    assert state["J"] == pytest.approx(fixed_neighbour_J(X, y, W, v, same, diff, beta), rel=1e-12)
    if learn_w:
        fd = np.zeros_like(W)
        for c in range(W.shape[0]):
            for j in range(W.shape[1]):
                Wp, Wm = W.copy(), W.copy()
                Wp[c, j] += h
                Wm[c, j] -= h
                fd[c, j] = (fixed_neighbour_J(X, y, Wp, v, same, diff, beta) - fixed_neighbour_J(X, y, Wm, v, same, diff, beta)) / (2 * h)  # fmt: skip
        np.testing.assert_allclose(state["grad_w"], n * fd, rtol=1e-5, atol=1e-8)
        assert np.abs(state["grad_w"]).max() > 0.1
    else:
        assert not state["grad_w"].any()
    if learn_v:
        fd = np.zeros_like(v)
        for p in range(n):
            vp, vm = v.copy(), v.copy()
            vp[p] += h
            vm[p] -= h
            fd[p] = (fixed_neighbour_J(X, y, W, vp, same, diff, beta) - fixed_neighbour_J(X, y, W, vm, same, diff, beta)) / (2 * h)  # fmt: skip
        np.testing.assert_allclose(state["grad_v"], n * fd, rtol=1e-5, atol=1e-8)
        assert np.abs(state["grad_v"]).max() > 0.1
    else:
        assert not state["grad_v"].any()


def test_one_cw_epoch_by_hand():
    """1-D, x = 0, 1 (class 0) and 3 (class 1), w = 1, beta = 1, mu = 0.1, one epoch.

    x=0: x= = 1 (d 1), x!= = 3 (d 3), r = 1/3.  x=1: x= = 0 (d 1), x!= = 3 (d 2), r = 1/2.
    x=3: x= none (r = inf, an error, no update).  R_1 = 1 for every pair (one feature).
    grad_w[0] = Q(1/3) + Q(1/2), grad_w[1] = -(Q(1/3) + Q(1/2)), Q(r) = S(r)(1 - S(r)) r.
    """
    X = np.array([[0.0], [1.0], [3.0]])
    y = np.array([0, 0, 1])

    def Q(r):
        s = 1.0 / (1.0 + np.exp(1.0 - r))
        return s * (1 - s) * r

    g = Q(1 / 3) + Q(1 / 2)
    state = loo_state(X, y, np.ones((2, 1)), np.ones(3), beta=1.0, learn_w=True)
    np.testing.assert_allclose(state["grad_w"], [[g], [-g]], rtol=1e-14)
    assert state["loo_error"] == pytest.approx(1 / 3)
    S = lambda r: 1.0 / (1.0 + np.exp(1.0 - r))  # noqa: E731
    assert state["J"] == pytest.approx((S(1 / 3) + S(1 / 2) + 1.0) / 3, rel=1e-14)
    clf = WeightedMetricNN(scheme="cw", beta=1.0, mu=0.1, init="euclidean", max_epochs=1, tol=0.0).fit(X, y)
    assert clf.n_epochs_ == 1 and clf.curve_["J"][0] == pytest.approx(state["J"])
    # the epoch-1 weights are the update; the returned (best-LOO) ones are epoch 0's on a tie
    after = loo_state(X, y, np.array([[1 - 0.1 * g], [1 + 0.1 * g]]), np.ones(3), beta=1.0)
    assert clf.curve_["J"][1] == pytest.approx(after["J"], rel=1e-14)
    assert clf.best_epoch_ == 0 and clf.loo_error_ == pytest.approx(1 / 3)


# --------------------------------------------------------------------------- estimator
def test_cdm_weights_back_off():
    X = np.array([[1.0, 5.0, 2.0], [3.0, 5.0, 2.0], [0.0, 7.0, 2.0], [0.0, 9.0, 2.0]])
    y = np.array([0, 0, 1, 1])
    W, mu = cdm_weights(X, y, 2)
    # class 0: sd (1, 0 -> overall sd(5,5,7,9)=1.6583, 0 -> overall 0 -> 1); class 1: (0 -> overall, 1, 1)
    overall = X.std(axis=0)
    np.testing.assert_allclose(W[0], [1.0, 1 / overall[1], 1.0])
    np.testing.assert_allclose(W[1], [1 / overall[0], 1.0, 1.0])
    np.testing.assert_allclose(mu, W**2)


@pytest.mark.parametrize("name", ["iris", "wine", "glass", "liver", "balance", "vehicle"])
def test_returned_weights_never_worse_in_loo_than_the_initial_metric(name):
    ds = load_dataset(name)
    for scheme in ("cw", "pw", "cpw"):
        clf = WeightedMetricNN(scheme=scheme, max_epochs=30).fit(ds.X, ds.y)
        assert clf.loo_error_ <= clf.initial_loo_error_
        assert clf.loo_error_ == clf.curve_["loo_error"].min()
        assert clf.curve_["loo_error"][clf.best_epoch_] == clf.loo_error_
        # the returned weights really have that LOO error
        codes = np.searchsorted(clf.classes_, ds.y)
        check = loo_state(ds.X, codes, clf.class_weights_, clf.prototype_weights_, 8.0)
        assert check["loo_error"] == clf.loo_error_


def test_learning_lowers_the_loo_error_on_wine():
    """Wine's raw features span five orders of magnitude: CDM starts far below L2, and CW
    learns below CDM (the paper's Table 3: L2 24.14 %, CDM 2.60 %, CW 1.44 %)."""
    ds = load_dataset("wine")
    l2 = WeightedMetricNN(scheme="l2").fit(ds.X, ds.y)
    cdm = WeightedMetricNN(scheme="cdm").fit(ds.X, ds.y)
    cw = WeightedMetricNN(scheme="cw").fit(ds.X, ds.y)
    assert cw.init_ == "cdm"
    assert cdm.loo_error_ < l2.loo_error_ / 3
    assert cw.loo_error_ < cdm.loo_error_


def test_auto_init_takes_the_lower_loo_start():
    ds = load_dataset("wine")
    for init in ("euclidean", "cdm"):
        clf = WeightedMetricNN(scheme="cw", init=init, max_epochs=0).fit(ds.X, ds.y)
        assert clf.init_ == init
    e = WeightedMetricNN(scheme="l2").fit(ds.X, ds.y).loo_error_
    c = WeightedMetricNN(scheme="cdm").fit(ds.X, ds.y).loo_error_
    auto = WeightedMetricNN(scheme="cw", max_epochs=0).fit(ds.X, ds.y)
    assert auto.init_ == ("cdm" if c < e else "euclidean")
    assert auto.initial_loo_error_ == min(c, e)


def test_l2_and_cdm_predict_like_brute_force_one_nn():
    ds = load_dataset("ripley")
    train, test = ds.split
    Xtr, ytr, Xte = ds.X[train], ds.y[train], ds.X[test]
    D = ((Xte[:, None, :] - Xtr[None, :, :]) ** 2).sum(axis=2)
    pred = WeightedMetricNN(scheme="l2").fit(Xtr, ytr).predict(Xte)
    np.testing.assert_array_equal(pred, ytr[np.argmin(D, axis=1)])
    W, _ = cdm_weights(Xtr, ytr, 2)
    Dc = np.stack([((W[ytr[p]] * (Xte - Xtr[p])) ** 2).sum(axis=1) for p in range(len(Xtr))], axis=1)
    pred = WeightedMetricNN(scheme="cdm").fit(Xtr, ytr).predict(Xte)
    np.testing.assert_array_equal(pred, ytr[np.argmin(Dc, axis=1)])


def test_cpw_step_grid_probes_pairs_and_continues_the_best():
    ds = load_dataset("glass")
    clf = WeightedMetricNN(scheme="cpw", step_grid="paper", max_epochs=12).fit(ds.X, ds.y)
    assert clf.loo_error_ <= clf.initial_loo_error_
    assert clf.n_epochs_ <= 12 and clf.curve_["iteration"][-1] == clf.n_epochs_
    with pytest.raises(ValueError, match="step_grid applies to scheme 'cpw'"):
        WeightedMetricNN(scheme="cw", step_grid="paper").fit(ds.X, ds.y)


def test_l1_base_refused_for_class_weight_learning():
    with pytest.raises(ValueError, match="base='l1' is allowed with scheme 'pw'"):
        WeightedMetricNN(scheme="cw", base="l1").fit([[0.0], [1.0]], [0, 1])


def test_deterministic():
    ds = load_dataset("vehicle")
    a = WeightedMetricNN(scheme="cpw", max_epochs=10).fit(ds.X, ds.y)
    b = WeightedMetricNN(scheme="cpw", max_epochs=10).fit(ds.X, ds.y)
    np.testing.assert_array_equal(a.class_weights_, b.class_weights_)
    np.testing.assert_array_equal(a.prototype_weights_, b.prototype_weights_)


def test_k_vote_under_the_learned_weights():
    """k = 5: the vote among the 5 nearest prototypes under the learned (w, v), checked
    against brute force; ties between classes go to the class of the nearest of them."""
    ds = load_dataset("glass")
    rng = np.random.default_rng(0)
    test = rng.choice(ds.n_samples, 60, replace=False)
    train = np.setdiff1d(np.arange(ds.n_samples), test)
    clf = WeightedMetricNN(scheme="cpw", k=5, max_epochs=20).fit(ds.X[train], ds.y[train])
    codes = np.searchsorted(clf.classes_, ds.y[train])
    D = brute_dissimilarities(ds.X[test], ds.X[train], codes, clf.class_weights_, clf.prototype_weights_)
    proba = clf.predict_proba(ds.X[test])
    pred = clf.predict(ds.X[test])
    for i in range(len(test)):
        near = np.lexsort((np.arange(len(train)), D[i]))[:5]
        votes = np.bincount(codes[near], minlength=len(clf.classes_))
        np.testing.assert_allclose(proba[i], votes / 5)
        tied = np.flatnonzero(votes == votes.max())
        winner = next(codes[p] for p in near if codes[p] in tied)
        assert pred[i] == clf.classes_[winner]


@pytest.mark.parametrize("scheme", ["cpw", "cw", "pw", "l2", "cdm"])
def test_check_estimator(scheme):
    check_estimator(WeightedMetricNN(scheme=scheme))


# ---------------------------------------------------------------------------
# Fig. 1's stopping rule: tol only; max_epochs is a reported safety cap


def test_default_descent_stops_on_tol_not_on_an_epoch_cap():
    ds = load_dataset("glass")
    clf = WeightedMetricNN(scheme="pw").fit(ds.X, ds.y)
    assert clf.get_params()["max_epochs"] == 10_000
    assert clf.stopped_by_ == "tol"
    J = clf.curve_["J"]
    steps = np.abs(np.diff(J))
    # Fig. 1: while |lambda' - lambda| > epsilon: every epoch but the last moved J_T by more
    assert steps[-1] <= clf.tol and (steps[:-1] > clf.tol).all()
    assert clf.n_epochs_ == len(J) - 1 > 100  # the old default cap of 100 cut this descent short
    # the same descent capped at 100 epochs is its prefix
    capped = WeightedMetricNN(scheme="pw", max_epochs=100)
    with pytest.warns(
        ConvergenceWarning, match=r"reached max_epochs=100 before J_T changed by at most tol=1e-06"
    ):
        capped.fit(ds.X, ds.y)
    assert capped.stopped_by_ == "max_epochs" and capped.n_epochs_ == 100
    np.testing.assert_array_equal(capped.curve_["J"], J[:101])
    np.testing.assert_array_equal(capped.curve_["loo_error"], clf.curve_["loo_error"][:101])


def test_reaching_the_cap_warns_and_tol_stops_silently():
    ds = load_dataset("wine")
    with pytest.warns(ConvergenceWarning):
        clf = WeightedMetricNN(scheme="cw", max_epochs=3, tol=0.0).fit(ds.X, ds.y)
    assert (clf.stopped_by_, clf.n_epochs_) == ("max_epochs", 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf = WeightedMetricNN(scheme="cw", max_epochs=10_000, tol=1.0).fit(ds.X, ds.y)  # J_T moves < 1
        assert (clf.stopped_by_, clf.n_epochs_) == ("tol", 1)
        for scheme in ("l2", "cdm"):
            assert WeightedMetricNN(scheme=scheme).fit(ds.X, ds.y).stopped_by_ == "no_learning"


# ---------------------------------------------------------------------------
# CPW's step probing (step_grid="paper"): the paper's grid, and its tie rule


def test_best_probe_tie_rule_by_hand():
    # lowest LOO error; then lowest J_T; then the first pair in CPW_PROBE_PAIRS order
    assert best_probe([(0.2, 0.5), (0.1, 0.9), (0.1, 0.4), (0.3, 0.1)]) == 2
    assert best_probe([(0.1, 0.4), (0.2, 0.1), (0.1, 0.4), (0.1, 0.4)]) == 0
    assert best_probe([(0.2, 0.4)] * 5 + [(0.1, 0.4)] * 3) == 5


def test_probe_grid_is_the_papers():
    assert set(CPW_PROBE_PAIRS) == {(a, b) for a in (0.0, 0.001, 0.01) for b in (0.0, 0.001, 0.01)} - {
        (0.0, 0.0)
    }
    assert CPW_PROBE_PAIRS[:4] == ((0.001, 0.001), (0.001, 0.01), (0.01, 0.001), (0.01, 0.01))
    assert CPW_PROBE_PAIRS[4:] == ((0.001, 0.0), (0.01, 0.0), (0.0, 0.001), (0.0, 0.01))


@pytest.mark.parametrize("name", ["glass", "wine", "balance"])
def test_cpw_probing_picks_as_the_separate_probe_runs_say(name):
    """Oracle: each pair run on its own for probe_epochs epochs (same start) gives the LOO
    error and J_T after the probe; the pick is the lowest (error, J_T), first in order on
    ties, and the probed fit continues exactly that run."""
    ds = load_dataset(name)
    grid = WeightedMetricNN(scheme="cpw", step_grid="paper", probe_epochs=5, max_epochs=12, tol=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        grid.fit(ds.X, ds.y)
        probes = [
            WeightedMetricNN(scheme="cpw", init=grid.init_, mu=a, rho=b, max_epochs=5, tol=0.0).fit(
                ds.X, ds.y
            )
            for a, b in CPW_PROBE_PAIRS
        ]
        keys = [(p.curve_["loo_error"][-1], p.curve_["J"][-1]) for p in probes]
        expect = min(range(len(keys)), key=lambda i: (keys[i], i))
        assert (grid.mu_, grid.rho_) == CPW_PROBE_PAIRS[expect]
        assert 0.0 <= grid.mu_ <= 0.01 and 0.0 <= grid.rho_ <= 0.01  # never the CDM 1 / sigma^2
        same = WeightedMetricNN(
            scheme="cpw", init=grid.init_, mu=grid.mu_, rho=grid.rho_, max_epochs=12, tol=0.0
        )
        same.fit(ds.X, ds.y)
    np.testing.assert_array_equal(grid.curve_["J"], same.curve_["J"])
    np.testing.assert_array_equal(grid.class_weights_, same.class_weights_)
    np.testing.assert_array_equal(grid.prototype_weights_, same.prototype_weights_)


def test_cpw_probes_that_all_tie_take_the_first_pair():
    # identical rows: every LOO pair at dissimilarity 0 (r = 1, an error that moves no
    # weight), so every probe ends with the same LOO error and J_T
    X = np.ones((8, 2))
    y = np.array([0, 1] * 4)
    clf = WeightedMetricNN(scheme="cpw", step_grid="paper", max_epochs=8).fit(X, y)
    assert (clf.mu_, clf.rho_) == (0.001, 0.001)


# ---------------------------------------------------------------------------
# Sec. 5.3's start: L2 if it outperforms CDM, otherwise CDM (so CDM on a tie)


def brute_loo_error(X, codes, W):
    """Eq. (6) by brute force: x errs if its nearest same-class row is not strictly nearer
    than its nearest other-class row under d^2 = sum_j W[class(p), j]^2 (x_j - p_j)^2."""
    dd = (((X[:, None, :] - X[None, :, :]) * W[codes][None]) ** 2).sum(axis=2)
    np.fill_diagonal(dd, np.inf)
    same = codes[:, None] == codes[None, :]
    return np.mean(np.where(same, dd, np.inf).min(axis=1) >= np.where(~same, dd, np.inf).min(axis=1))


def test_auto_init_takes_cdm_on_a_tie_in_loo_error():
    # every class deviation is 1 in every feature: CDM's weights are 1, a tie by construction
    X = np.array([[0, 0], [2, 0], [0, 2], [2, 2], [1, 1], [3, 1], [1, 3], [3, 3]], dtype=float)
    y = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    clf = WeightedMetricNN(scheme="cw", max_epochs=0).fit(X, y)
    assert clf.init_ == "cdm"
    np.testing.assert_array_equal(clf.mu_, np.ones((2, 2)))  # CDM's step factors 1 / sigma^2, not 0.001


def test_auto_init_on_random_ties_and_strict_wins():
    """Small random sets with unequal class deviations: wherever the brute-force LOO errors
    of L2 and CDM are equal the start is CDM; elsewhere the lower one."""
    seen = {"tie": 0, "l2": 0, "cdm": 0}
    rng = np.random.default_rng(5)
    for _ in range(60):
        X = rng.standard_normal((10, 2)) * np.array([1.0, 3.0])
        y = np.array([0] * 5 + [1] * 5)
        X[y == 1] *= rng.uniform(0.5, 2.0, 2)
        W, _ = cdm_weights(X, y, 2)
        e, c = brute_loo_error(X, y, np.ones_like(W)), brute_loo_error(X, y, W)
        clf = WeightedMetricNN(scheme="cw", max_epochs=0).fit(X, y)
        assert clf.initial_loo_error_ == pytest.approx(min(e, c))
        assert clf.init_ == ("euclidean" if e < c else "cdm")
        seen["tie" if e == c else "l2" if e < c else "cdm"] += 1
    assert min(seen.values()) >= 5  # each case occurs
