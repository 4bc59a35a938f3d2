"""UNNClassifier against hand-worked values, a naive dense NumPy UNN, numerical roots
of eq. (10), finite differences of the losses and scikit-learn's estimator checks."""

import math

import numpy as np
import pytest
from scipy.optimize import brentq

from knnx import UNNClassifier, kneighbors, reciprocal_neighbors
from knnx._kernels import leveraged as L
from knnx._kernels import unn as K
from knnx.datasets.synthetic import dambrosio2012
from knnx.estimators.unn import LOSSES, STEPS

ALPHA = 0.5  # Amari parameter used below
C_AMARI = (1 - ALPHA) / 2

# The losses, written out independently of the kernel: psi and -psi'.
PSI = {
    "exp": (lambda x: np.exp(-x), lambda x: np.exp(-x)),
    "squared": (lambda x: (1 - x) ** 2, lambda x: 2 * (1 - x)),
    "logistic": (lambda x: np.log1p(np.exp(-x)), lambda x: 1 / (1 + np.exp(x))),
    "binary_logistic": (lambda x: np.log2(1 + 2.0**-x), lambda x: 1 / (1 + 2.0**x)),
    "matsushita": (lambda x: -x + np.sqrt(1 + x * x), lambda x: 1 - x / np.sqrt(1 + x * x)),
    "amari": (
        lambda x: (2 / (1 + ALPHA)) * (1 + (1 - ALPHA) * x / 2) ** (-(1 + ALPHA) / (1 - ALPHA)),
        lambda x: (1 + (1 - ALPHA) * x / 2) ** (-2 / (1 - ALPHA)),
    ),
}


def table_delta(loss, step, wp, wm, nj, eps):
    """delta_j as printed: Table 1 of Piro et al. / Table 2 of D'Ambrosio et al. (W form)."""
    if nj == 0:
        return 0.0
    if loss == "squared":
        return (wp - wm) / (2 * nj) if step == "closed_form" else 2 * wp / (wp + wm) - 1
    a, b = wp + eps, wm + eps
    W = a / (a + b)
    if loss == "exp":
        return 0.5 * np.log(a / b)
    if loss == "logistic":
        return np.log(W / (1 - W))
    if loss == "binary_logistic":
        return np.log2(W / (1 - W))
    if loss == "matsushita":
        return (2 * W - 1) / (2 * np.sqrt(W * (1 - W)))
    e = (1 - ALPHA) / 2
    return (2 / (1 - ALPHA)) * (W**e - (1 - W) ** e) / (W**e + (1 - W) ** e)


def naive_unn(X, y, k, loss, T, chooser, smoothing, step, chosen_by_kernel):
    """Algorithm 1 with dense edge matrices R^(c) (eq. 7), one class after another.

    For the boosting chooser every |delta_j| is recomputed from scratch; the index the
    kernel chose must reach the maximum (to 1e-12), and is then replayed so that exact
    ties broken by rounding cannot desynchronise the two.
    """
    m = len(y)
    classes = np.unique(y)
    trained = [1] if len(classes) == 2 else list(classes)
    _, nbr = kneighbors(X, k)
    alpha = np.zeros((m, len(trained)))
    risks = []
    for ci, cls in enumerate(trained):
        yc = np.where(y == cls, 1.0, -1.0)
        R = np.zeros((m, m))
        for i in range(m):
            R[i, nbr[i]] = yc[i] * yc[nbr[i]]
        rho = np.zeros(m)
        psi, wfun = PSI[loss]
        risk = [psi(rho).mean()]
        for t in range(T):
            w = wfun(rho)
            eps = {"raw": 1 / m, "normalized": w.sum() / m, False: 0.0}[smoothing]
            deltas = np.array(
                [
                    table_delta(
                        loss, step, w[R[:, j] > 0].sum(), w[R[:, j] < 0].sum(), np.abs(R[:, j]).sum(), eps
                    )
                    for j in range(m)
                ]
            )
            j = chosen_by_kernel[t, ci]
            if chooser == "lazy":
                assert j == t % m
            else:
                assert abs(deltas[j]) >= np.abs(deltas).max() - 1e-12
            alpha[j, ci] += deltas[j]
            rho = rho + deltas[j] * R[:, j]
            risk.append(psi(rho).mean())
        risks.append(risk)
    return alpha, np.mean(risks, axis=0)


def kernel_fit(X, y, k, loss, T, chooser, smoothing, step):
    m = len(y)
    _, nbr = kneighbors(X, k)
    rptr, rind = reciprocal_neighbors(nbr, m)
    C = len(np.unique(y))
    trained = np.array([1] if C == 2 else range(C), dtype=np.intp)
    smooth = {"raw": K.SMOOTH_RAW, "normalized": K.SMOOTH_NORMALIZED, False: K.SMOOTH_NONE}[smoothing]
    return K.unn_fit(
        L.Graph(nbr, rptr, rind),
        y.astype(np.intp),
        C,
        trained,
        L.Schedule(T, chooser == "lazy", np.arange(m, dtype=np.intp), np.array([T], dtype=np.intp)),
        K.UNNRule(LOSSES[loss], C_AMARI, STEPS[step], smooth),
        np.arange(C, dtype=np.intp),
    )


def _data(seed, m=36, C=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, 2))
    y = rng.integers(0, C, size=m)
    y[:C] = np.arange(C)
    X[y == 1] += 0.8
    return X, y


@pytest.mark.parametrize("loss", list(LOSSES))
@pytest.mark.parametrize("chooser", ["boosting", "lazy"])
@pytest.mark.parametrize("smoothing", ["raw", "normalized", False])
def test_kernel_matches_naive_dense_unn(loss, chooser, smoothing):
    if smoothing is False and loss != "squared":
        smoothing = "raw"  # unsmoothed steps are infinite here; covered separately
    X, y = _data(1)
    T = 50
    alpha, risk, errors, chosen, n_inf, snaps = kernel_fit(
        X, y, 4, loss, T, chooser, smoothing, "closed_form"
    )
    ref_alpha, ref_risk = naive_unn(X, y, 4, loss, T, chooser, smoothing, "closed_form", chosen)
    np.testing.assert_allclose(alpha, ref_alpha, rtol=1e-9, atol=1e-11)
    np.testing.assert_array_equal(snaps[0], alpha)
    np.testing.assert_allclose(risk, ref_risk, rtol=1e-9, atol=1e-12)
    assert n_inf == 0


def test_binary_mirror_equals_training_both_classes():
    X, y = _data(2, C=2)
    _, nbr = kneighbors(X, 3)
    rptr, rind = reciprocal_neighbors(nbr, len(y))
    graph = L.Graph(nbr, rptr, rind)
    args = (
        L.Schedule(40, False, np.arange(len(y), dtype=np.intp), np.zeros(0, dtype=np.intp)),
        K.UNNRule(K.EXP, 0.25, 0, K.SMOOTH_RAW),
        np.arange(2, dtype=np.intp),
    )
    one = K.unn_fit(graph, y.astype(np.intp), 2, np.array([1], dtype=np.intp), *args)
    both = K.unn_fit(graph, y.astype(np.intp), 2, np.array([0, 1], dtype=np.intp), *args)
    np.testing.assert_array_equal(both[0][:, 0], both[0][:, 1])
    np.testing.assert_array_equal(one[0][:, 0], both[0][:, 1])
    np.testing.assert_allclose(one[1], both[1], rtol=1e-12)
    np.testing.assert_array_equal(one[2], both[2])


# Four points on a line, k = 1. Leave-one-out 1-NN: NN(0) = 1, NN(1) = 0 (tie with 2 at
# distance 1: smaller index), NN(2) = 1 (1 < 1.5), NN(3) = 2; reciprocal sets
# RNN(0) = {1}, RNN(1) = {0, 2}, RNN(2) = {3}, RNN(3) = {}. Class 1 is trained:
# y_c = (-1, -1, +1, +1); weights start at 1; eps = 1/m = 1/4.
HAND_X = np.array([[0.0], [1.0], [2.0], [3.5]])
HAND_Y = np.array([0, 0, 1, 1])


def test_hand_worked_exp_lazy():
    # t = 1, j = 0: r_10 = +1, w+ = 1, w- = 0 -> delta = 1/2 ln(1.25 / 0.25) = 1/2 ln 5;
    #   rho_1 = 1/2 ln 5, w_1 = 1/sqrt(5).
    # t = 2, j = 1: r_01 = +1 (w_0 = 1), r_21 = -1 (w_2 = 1) -> delta = 0.
    # t = 3, j = 2: r_32 = +1, w_3 = 1 -> delta = 1/2 ln 5.
    # t = 4, j = 3: nobody's neighbour -> delta = 0.
    model = UNNClassifier(k=1, chooser="lazy", theta=1.0).fit(HAND_X, HAND_Y)
    half_ln5 = 0.5 * np.log(5.0)
    np.testing.assert_allclose(model.alpha_[:, 1], [half_ln5, 0, half_ln5, 0], rtol=1e-15)
    np.testing.assert_array_equal(model.alpha_[:, 0], model.alpha_[:, 1])
    np.testing.assert_array_equal(model.prototypes_, [0, 2])
    assert model.prototype_fraction_ == 0.5
    # Risk (1/m) sum exp(-rho_i): 1, then (3 + 1/sqrt 5)/4, unchanged, (2 + 2/sqrt 5)/4, unchanged.
    s5 = 1 / np.sqrt(5.0)
    np.testing.assert_allclose(
        model.curve_["surrogate_risk"], [1, (3 + s5) / 4, (3 + s5) / 4, (2 + 2 * s5) / 4, (2 + 2 * s5) / 4]
    )
    # Training error: all scores 0 -> class 0 (equal counts: smaller code) -> 1/2;
    # point 1 becomes h_1 < 0 (still right); point 3 gets h_1 > 0 -> 1/4.
    np.testing.assert_allclose(model.curve_["train_error"], [0.5, 0.5, 0.5, 0.25, 0.25])
    # x = 0.4: nearest prototype is 0 (class 0): h_1 = -1/2 ln 5, p_1 = 1/(1 + e^{ln 5}) = 1/6.
    # x = 1.5: nearest prototype is 2 (class 1): h_1 = +1/2 ln 5, p_1 = 5/6.
    Q = np.array([[0.4], [1.5]])
    np.testing.assert_allclose(model.decision_function(Q), [-half_ln5, half_ln5], rtol=1e-15)
    np.testing.assert_allclose(model.predict_proba(Q), [[5 / 6, 1 / 6], [1 / 6, 5 / 6]], rtol=1e-14)
    np.testing.assert_array_equal(model.predict(Q), [0, 1])


def test_hand_worked_boosting_chooser_and_tie_rule():
    # Keys at the start: |delta_0| = |delta_2| = 1/2 ln 5, |delta_1| = |delta_3| = 0: the tie
    # goes to j = 0. Leveraging 0 lowers w_1 to 1/sqrt 5, so delta_0 becomes
    # 1/2 ln((1/sqrt 5 + 1/4) / (1/4)) = 0.5128154... and j = 2 is next; after it both
    # keys equal that value and j = 0 wins the tie again.
    X, y = HAND_X, HAND_Y
    _, _, _, chosen, _, _ = kernel_fit(X, y, 1, "exp", 3, "boosting", "raw", "closed_form")
    np.testing.assert_array_equal(chosen[:, 0], [0, 2, 0])
    model = UNNClassifier(k=1, n_iter=3).fit(X, y)
    second = 0.5 * np.log((1 / np.sqrt(5) + 0.25) / 0.25)
    assert second == pytest.approx(0.5128154, abs=1e-7)
    np.testing.assert_allclose(
        model.alpha_[:, 1], [0.5 * np.log(5) + second, 0, 0.5 * np.log(5), 0], rtol=1e-14
    )


@pytest.mark.parametrize("loss", ["exp", "squared"])
def test_closed_form_delta_is_the_root_of_eq10(loss):
    rng = np.random.default_rng(3)
    psi_w = PSI[loss][1]
    for _ in range(20):
        n = rng.integers(2, 9)
        rho = rng.normal(scale=0.7, size=n)
        r = rng.choice([-1.0, 1.0], size=n)
        r[:2] = [1.0, -1.0]
        w = psi_w(rho)
        wp, wm = w[r > 0].sum(), w[r < 0].sum()
        d = K.closed_form_delta(LOSSES[loss], 0.25, K.STEP_CLOSED_FORM, wp, wm, n, 0.0)

        def eq10(delta, r=r, rho=rho):  # sum_i r_i psi'(delta r_i + rho_i) = -sum_i r_i w(...)
            return -np.sum(r * psi_w(delta * r + rho))

        root = brentq(eq10, -50, 50, xtol=1e-14)
        assert d == pytest.approx(root, abs=1e-11)
        ex = K.exact_delta(LOSSES[loss], 0.25, 0, n, np.arange(n), r, rho, 0.0, 0.3)
        assert ex == pytest.approx(root, abs=1e-11)


@pytest.mark.parametrize("loss", list(LOSSES))
def test_exact_step_solves_eq10_with_smoothing_pair(loss):
    rng = np.random.default_rng(4)
    psi_w = PSI[loss][1]
    c = C_AMARI
    for _ in range(10):
        n = rng.integers(2, 8)
        rho = rng.normal(scale=0.5, size=n)
        r = rng.choice([-1.0, 1.0], size=n)
        eps = 0.05
        smooth = loss != "squared"
        e = K.edge_of_weight(LOSSES[loss], c, eps) if smooth else 0.0
        assert psi_w(e) == pytest.approx(eps, rel=1e-12) if smooth else True

        def g(delta, r=r, rho=rho, smooth=smooth, e=e):
            val = -np.sum(r * psi_w(delta * r + rho))
            if smooth:
                val -= psi_w(e + delta) - psi_w(e - delta)
            return val

        lo, hi = -30, 30
        if loss == "amari":  # stay inside the domain 1 + c x > 0
            lim = [rho[r > 0] + 1 / c, rho[r < 0] + 1 / c, [e + 1 / c]]
            lo = -min(np.min(v) if len(v) else np.inf for v in lim[:1] + lim[2:]) * (1 - 1e-12)
            hi = min(np.min(v) if len(v) else np.inf for v in lim[1:]) * (1 - 1e-12)
        root = brentq(g, lo, hi, xtol=1e-14)
        got = K.exact_delta(LOSSES[loss], c, 0, n, np.arange(n), r, rho, eps if smooth else 0.0, 0.1)
        assert got == pytest.approx(root, abs=1e-9)
    if loss == "exp":  # the smoothing pair reproduces eq. (13) exactly
        rho = np.array([0.3, -0.2, 0.1])
        r = np.array([1.0, 1.0, -1.0])
        w = np.exp(-rho)
        expected = 0.5 * np.log((w[:2].sum() + 0.1) / (w[2] + 0.1))
        assert K.exact_delta(K.EXP, c, 0, 3, np.arange(3), r, rho, 0.1, 0.0) == pytest.approx(
            expected, abs=1e-13
        )


@pytest.mark.parametrize(
    "loss,step",
    [("exp", "closed_form"), ("squared", "closed_form")] + [(name, "exact") for name in LOSSES],
)
@pytest.mark.parametrize("smoothing", [True, "normalized"])
def test_surrogate_risk_never_increases(loss, step, smoothing):
    """Exact line steps (closed forms for exp and squared, numerical roots otherwise),
    with the smoothing pair keeping the step between 0 and the root (eq. A.2)."""
    for seed in range(3):
        X, y = _data(10 + seed, m=60, C=3)
        model = UNNClassifier(k=5, loss=loss, step=step, smoothing=smoothing, theta=3.0).fit(X, y)
        risk = model.curve_["surrogate_risk"]
        assert np.all(np.diff(risk) <= 1e-12 * risk[:-1])
        assert risk[-1] < risk[0]


@pytest.mark.parametrize("loss", list(LOSSES))
def test_loss_derivatives_and_links(loss):
    code, c = LOSSES[loss], C_AMARI
    psi, psi_w = PSI[loss]
    xs = np.linspace(-1.2, 3.0, 23)
    h = 1e-6
    for x in xs:
        assert K.loss_value(code, c, x) == pytest.approx(psi(x), rel=1e-12)
        assert K.weight(code, c, x) == pytest.approx(psi_w(x), rel=1e-12)
        fd = (psi(x + h) - psi(x - h)) / (2 * h)
        assert -K.weight(code, c, x) == pytest.approx(fd, rel=1e-6, abs=1e-9)
        fd2 = -(psi_w(x + h) - psi_w(x - h)) / (2 * h)
        assert K.curvature(code, c, x) == pytest.approx(fd2, rel=1e-6, abs=1e-9)
        w = K.weight(code, c, x)
        if loss != "squared" or w > 0:
            assert K.edge_of_weight(code, c, w) == pytest.approx(x, rel=1e-9, abs=1e-9)
        # eq. (11): p = psi'(-x) / (psi'(x) + psi'(-x)), clipped to [0, 1] for squared
        eq11 = psi_w(-x) / (psi_w(x) + psi_w(-x))
        if loss == "squared":
            eq11 = min(1.0, max(0.0, eq11)) if abs(x) <= 1 else float(x > 0)
        assert K.posterior_link(code, c, x) == pytest.approx(eq11, rel=1e-12, abs=1e-15)


def test_posteriors_sum_to_one_and_approach_truth():
    ds = dambrosio2012(n=600, sigma=0.25, n_test=1000, seed=1)
    tr, te = ds.split
    truth = ds.posterior(ds.X[te])
    gaps = []
    for T in (3, 30, 600):
        model = UNNClassifier(k=10, n_iter=T).fit(ds.X[tr], ds.y[tr])
        P = model.predict_proba(ds.X[te])
        assert P.shape == truth.shape and np.all(P >= 0) and np.all(P <= 1)
        np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
        gaps.append(np.abs(P - truth).mean())
    # Three rounds leave most test points without a confident vote; 30 and m rounds
    # put the estimate within 1e-3 of the true posterior on average.
    assert gaps[0] > 0.3 and max(gaps[1:]) < 1e-3


def test_prediction_votes_among_prototypes_only():
    X, y = _data(5, m=80)
    model = UNNClassifier(k=4, theta=0.3).fit(X, y)
    keep = np.flatnonzero(np.any(model.alpha_ != 0, axis=1))
    np.testing.assert_array_equal(model.prototypes_, keep)
    Q = np.random.default_rng(0).normal(size=(50, 2))
    d2 = ((Q[:, None, :] - X[keep][None]) ** 2).sum(-1)
    nn = np.argsort(d2, axis=1, kind="stable")[:, :4]
    codes = np.where(y[keep][:, None] == np.arange(3), 1.0, -1.0)  # y_jc
    h = np.stack([(model.alpha_[keep][n] * codes[n]).sum(0) for n in nn])
    np.testing.assert_allclose(model.decision_function(Q), h, rtol=1e-12, atol=1e-14)
    assert model.prototype_fraction_ == len(keep) / 80


def test_prototypes_all_votes_among_every_training_row():
    """``prototypes="all"``: eq. (6) over the k nearest of all training rows (alpha = 0
    rows vote 0); the default searches the prototypes only."""
    X, y = _data(5, m=80)
    Q = np.random.default_rng(0).normal(size=(50, 2))
    model = UNNClassifier(k=4, theta=0.3, prototypes="all").fit(X, y)
    default = UNNClassifier(k=4, theta=0.3).fit(X, y)
    np.testing.assert_array_equal(model.alpha_, default.alpha_)
    np.testing.assert_array_equal(model.prototypes_, default.prototypes_)
    assert len(model.prototypes_) < 80
    d2 = ((Q[:, None, :] - X[None]) ** 2).sum(-1)
    nn = np.argsort(d2, axis=1, kind="stable")[:, :4]
    codes = np.where(y[:, None] == np.arange(3), 1.0, -1.0)
    h = np.stack([(model.alpha_[n] * codes[n]).sum(0) for n in nn])
    np.testing.assert_allclose(model.decision_function(Q), h, rtol=1e-12, atol=1e-14)
    assert not np.allclose(default.decision_function(Q), h)


def test_no_smoothing_skips_infinite_steps():
    X = np.array([[0.0], [0.1], [0.2], [5.0], [5.1], [5.2]])
    y = np.array([0, 0, 0, 1, 1, 1])
    model = UNNClassifier(k=2, smoothing=False, chooser="lazy").fit(X, y)
    assert model.n_infinite_ == 6 and not model.alpha_.any()
    np.testing.assert_allclose(model.predict_proba(X), 0.5)
    smoothed = UNNClassifier(k=2, chooser="lazy").fit(X, y)
    assert np.all(np.isfinite(smoothed.alpha_)) and np.all(smoothed.predict(X) == y)


def test_parameters_are_validated():
    X, y = _data(6)
    for bad in (
        dict(loss="hinge"),
        dict(theta=0.0),
        dict(amari_alpha=1.0),
        dict(smoothing="yes"),
        dict(n_iter=0),
    ):
        with pytest.raises(ValueError, match="UNNClassifier: "):
            UNNClassifier(**bad).fit(X, y)
    with pytest.raises(ValueError, match="n_samples = 36"):
        UNNClassifier(k=36).fit(X, y)


def test_lazy_seed_permutes_the_order():
    X, y = _data(7, m=50)
    a = UNNClassifier(chooser="lazy", seed=3).fit(X, y)
    b = UNNClassifier(chooser="lazy", seed=3).fit(X, y)
    c = UNNClassifier(chooser="lazy").fit(X, y)
    np.testing.assert_array_equal(a.alpha_, b.alpha_)
    assert not np.array_equal(a.alpha_, c.alpha_)


def naive_boosting_chosen(X, y, k, loss, T, smoothing):
    """The boosting chooser [I.0.b] from scratch, in plain Python: at every iteration
    each |delta_j| from w+_j and w-_j summed afresh (math.fsum: correctly rounded, so
    equal multisets of weights give equal sums) over R(j) from the current weights
    -psi'(rho_i); the largest, exact ties to the smallest j. The step taken sums w+ and
    w- in increasing i. Returns the chosen indices (T, n_trained)."""
    m = len(y)
    _, nbr = kneighbors(X, k)
    R = [[i for i in range(m) if j in nbr[i]] for j in range(m)]
    code = LOSSES[loss]
    classes = np.unique(y)
    out = []
    for cls in [1] if len(classes) == 2 else list(classes):
        s = [1.0 if v == cls else -1.0 for v in y]
        rho = [0.0] * m
        picks = []
        for _ in range(T):
            w = [K.weight(code, C_AMARI, r) for r in rho]
            eps = {"raw": 1 / m, "normalized": math.fsum(w) / m, False: 0.0}[smoothing]
            keys = []
            for j in range(m):
                sp = math.fsum(w[i] for i in R[j] if s[i] == s[j])
                sm = math.fsum(w[i] for i in R[j] if s[i] != s[j])
                d = K.closed_form_delta(code, C_AMARI, K.STEP_CLOSED_FORM, sp, sm, len(R[j]), eps)
                keys.append(abs(d) if d == d else 0.0)
            j = int(np.argmax(keys))  # the first maximal key
            picks.append(j)
            sp = sm = 0.0
            for i in R[j]:
                if s[i] == s[j]:
                    sp += w[i]
                else:
                    sm += w[i]
            d = K.closed_form_delta(code, C_AMARI, K.STEP_CLOSED_FORM, sp, sm, len(R[j]), eps)
            if d == d:
                for i in R[j]:
                    rho[i] = rho[i] + d * (s[i] * s[j])
        out.append(picks)
    return np.array(out).T


@pytest.mark.parametrize("loss", ["exp", "logistic", "matsushita", "amari"])
@pytest.mark.parametrize("smoothing", ["raw", "normalized", False])
@pytest.mark.parametrize("grid", [False, True])
def test_boosting_chooser_equals_a_from_scratch_chooser(loss, smoothing, grid):
    """Same chosen sequence as :func:`naive_boosting_chosen`, on continuous data and on
    integer-grid data (duplicates, many exact ties)."""
    rng = np.random.default_rng(3 + grid)
    m = 40
    X = rng.integers(0, 4, size=(m, 2)).astype(float) if grid else rng.normal(size=(m, 2))
    y = rng.integers(0, 3, m)
    T = 2 * m
    chosen = kernel_fit(X, y, 4, loss, T, "boosting", smoothing, "closed_form")[3]
    np.testing.assert_array_equal(chosen, naive_boosting_chosen(X, y, 4, loss, T, smoothing))


# Found by search: at iteration 4 (t = 3) examples 5, 6 and 10 have the same |delta_j|
# from scratch, 0.8602496136398551, but the sums w+ and w- kept incrementally (by
# differences, as knnx did before) give 6 a key one ulp above the others, so 6 was chosen.
TIE_X = np.array(
    [[11, 0], [11, 0], [10, 1], [1, 1], [10, 1], [11, 0], [2, 0], [2, 1], [12, 0], [11, 0], [11, 1]],
    dtype=float,
)
TIE_Y = np.array([1, 1, 0, 0, 0, 1, 1, 0, 1, 1, 0])


def test_boosting_chooser_exact_ties_go_to_the_smallest_index():
    X, y = TIE_X, TIE_Y
    m = len(y)
    chosen = kernel_fit(X, y, 2, "exp", 8, "boosting", "raw", "closed_form")[3][:, 0]
    np.testing.assert_array_equal(chosen, [5, 6, 10, 5, 6, 3, 10, 6])
    np.testing.assert_array_equal(chosen, naive_boosting_chosen(X, y, 2, "exp", 8, "raw")[:, 0])
    # The tie at t = 3, and the drift that broke it: replay the first three steps.
    _, nbr = kneighbors(X, 2)
    R = [[i for i in range(m) if j in nbr[i]] for j in range(m)]
    s = np.where(y == 1, 1.0, -1.0)
    rho = np.zeros(m)
    inc_p = np.array([float(sum(s[i] == s[j] for i in R[j])) for j in range(m)])  # weights start at 1
    inc_m = np.array([float(sum(s[i] != s[j] for i in R[j])) for j in range(m)])
    for j in chosen[:3]:
        w = np.exp(-rho)
        sp = sm = 0.0
        for i in R[j]:
            sp, sm = (sp + w[i], sm) if s[i] == s[j] else (sp, sm + w[i])
        inc_p[j], inc_m[j] = sp, sm
        d = 0.5 * np.log((sp + 1 / m) / (sm + 1 / m))
        for i in R[j]:
            old = rho[i]
            rho[i] = old + d * s[i] * s[j]
            for jj in nbr[i]:
                dw = np.exp(-rho[i]) - np.exp(-old)
                if s[i] == s[jj]:
                    inc_p[jj] += dw
                else:
                    inc_m[jj] += dw
    w = np.exp(-rho)

    def key(sp, sm):
        return abs(0.5 * np.log((sp + 1 / m) / (sm + 1 / m)))

    fresh = [
        key(math.fsum(w[i] for i in R[j] if s[i] == s[j]), math.fsum(w[i] for i in R[j] if s[i] != s[j]))
        for j in (5, 6, 10)
    ]
    drifted = [key(inc_p[j], inc_m[j]) for j in (5, 6, 10)]
    assert fresh == [0.8602496136398551] * 3
    assert drifted[1] > drifted[0] == drifted[2]  # by differences, 6 would have won
