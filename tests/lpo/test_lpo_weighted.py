"""Exact leave-p-out risk of distance-weighted kNN against brute-force enumeration."""

from fractions import Fraction
from itertools import combinations

import numpy as np
import pytest
from lpo_oracles import enumerate_lpo, sq_dist, write_labelled_csv
from numpy.testing import assert_allclose

from knnx import DataError, KNNClassifier, kneighbors
from knnx._kernels.lpo_weighted import subset_sign_probs
from knnx.estimators.knn import KNNLpoClassifier
from knnx.lpo.risk import lpo_risk, lpo_risk_from_graph, lpo_risk_from_weighted_graph, select_k

# ---------------------------------------------------------------------------
# the counter: sign of vj + a uniform random s-subset sum, against enumeration


def naive_sign_probs(v, vj, s):
    """(P(< 0), P(= 0), P(> 0)) of vj + sum of an s-subset, every subset, exact rationals."""
    F = [Fraction(float(x)) for x in v]
    counts = [0, 0, 0]
    for S in combinations(range(len(v)), s):
        total = Fraction(float(vj)) + sum((F[u] for u in S), Fraction(0))
        counts[(total > 0) - (total < 0) + 1] += 1
    n = sum(counts)
    return [c / n for c in counts]


def _random_values(rng, m, kind):
    if kind == "normal":
        return rng.standard_normal(m)
    if kind == "integers":  # many exact ties
        return rng.integers(-3, 4, m).astype(float)
    if kind == "mixed":  # zeros, repeats, inexact decimals
        return rng.choice([-1.0, 1.0, 0.5, -0.5, 0.0, 1 / 3, -1 / 3, 0.1, 0.2, -0.3], m)
    # weights 1 / sqrt(d2) of either sign: equal weights and opposite equal ones
    return np.sign(rng.standard_normal(m) + 0.1) / np.sqrt(rng.integers(1, 5, m).astype(float))


@pytest.mark.parametrize("kind", ["normal", "integers", "mixed", "inverse_roots"])
def test_counter_matches_enumeration(kind):
    rng = np.random.default_rng(["normal", "integers", "mixed", "inverse_roots"].index(kind))
    for _ in range(150):
        m = int(rng.integers(0, 13))
        v = _random_values(rng, m, kind)
        vj = float(rng.choice(v)) if m and rng.random() < 0.5 else float(rng.standard_normal())
        if m >= 2 and rng.random() < 0.25:
            vj = -float(v[0] + v[1])  # a tie for the subsets holding items 0 and 1
        s = int(rng.integers(0, m + 1))
        assert_allclose(subset_sign_probs(v, vj, s), naive_sign_probs(v, vj, s), rtol=0, atol=1e-12)


def test_counter_on_larger_problems_with_ties():
    # 16 to 20 items: the completion lists (meet in the middle) are in play.
    rng = np.random.default_rng(11)
    for trial in range(12):
        m = int(rng.integers(16, 21))
        if trial % 2:
            v = rng.integers(-4, 5, m).astype(float)
            vj = float(rng.choice(v))
        else:
            v = np.sign(rng.standard_normal(m)) / np.sqrt(np.sort(rng.random(m)))
            vj = float(rng.standard_normal())
        s = int(rng.integers(1, m))
        combos = np.array(list(combinations(range(m), s)))
        totals = vj + v[combos].sum(1)  # integers: exact; continuous: no sum near 0
        assert np.all((totals == 0) | (np.abs(totals) > 1e-9))
        expect = [np.mean(totals < 0), np.mean(totals == 0), np.mean(totals > 0)]
        assert_allclose(subset_sign_probs(v, vj, s), expect, rtol=0, atol=1e-12)


def test_ties_are_exact_not_float_rounded():
    # 1 + 2^-53 rounds to 1, so a left-to-right float sum of 1, 2^-53, -1, -2^-53
    # gives -2^-53, but the real sum is 0: a tie.
    e = 2.0**-53
    assert subset_sign_probs([1.0, e, -1.0], -e, 3) == (0.0, 1.0, 0.0)
    # The real sum 1 + 2^-54 + 2^-54 - 1 is 2^-53 > 0, although float rounding says 0.
    f = 2.0**-54
    assert subset_sign_probs([1.0, f, f], -1.0, 3) == (0.0, 0.0, 1.0)


@pytest.mark.slow  # compiles the counter for three limbs (about 10 s on a cold cache)
def test_weights_spanning_more_than_two_limbs_stay_exact():
    # A span of 2^160 between weights needs three 62-bit limbs.
    assert subset_sign_probs([2.0**100, 1.0, -(2.0**100)], -1.0, 3) == (0.0, 1.0, 0.0)
    # pairs: 2^100 + 2^-60 > 0, 2^100 - 2^100 = 0, 2^-60 - 2^100 < 0
    assert_allclose(subset_sign_probs([2.0**100, 2.0**-60, -(2.0**100)], 0.0, 2), [1 / 3] * 3, rtol=1e-15)
    # and the risk: squared distances from 1e-80 to about 1 (weights up to 1e40)
    X = np.array([[0.0], [1e-40], [2e-40], [0.5], [1.0], [1.5]])
    y = np.array([0, 1, 0, 1, 0, 1])
    assert_allclose(lpo_risk(X, y, 2, 4, "distance"), brute_weighted_lpo(X, y, 2, 4), rtol=0, atol=1e-12)


# ---------------------------------------------------------------------------
# leave-p-out risk: every split enumerated


def weighted_vote_cost(d2, labels, true):
    """Error of KNNClassifier(weights="distance")'s vote, ties (exact sums) costing 1/2."""
    zero = [lab for d, lab in zip(d2, labels, strict=True) if d == 0.0]
    if zero:
        total = Fraction(sum(1 if lab == 1 else -1 for lab in zero))
    else:
        total = sum(
            (
                Fraction(float(1.0 / np.sqrt(d))) * (1 if lab == 1 else -1)
                for d, lab in zip(d2, labels, strict=True)
            ),
            Fraction(0),
        )
    if total == 0:
        return 0.5
    return 0.0 if (1 if total > 0 else 0) == true else 1.0


def brute_weighted_lpo(X, y, p, k_max):
    """Eq. (1) by enumeration: every p-subset held out, weighted kNN on the rest."""
    return enumerate_lpo(
        X, y, p, k_max, lambda d2, labels, true: weighted_vote_cost(d2.tolist(), labels.tolist(), true)
    )


def _problem(rng, n, kind):
    if kind == "continuous":
        X = rng.standard_normal((n, 2))
    elif kind == "grid":  # many equal distances, hence equal weights
        X = rng.integers(0, 4, size=(n, 2)).astype(float)
    elif kind == "duplicates":  # zero distances
        X = rng.integers(0, 3, size=(n, 2)).astype(float)
        X[n // 2 :] = X[: n - n // 2]
    else:  # "symmetric": points on a line at +-1, +-2: opposite equal weights, exact ties
        X = rng.choice([-2.0, -1.0, 0.0, 1.0, 2.0], size=(n, 1))
    y = rng.integers(0, 2, size=n)
    y[:2] = [0, 1]
    return X, y


@pytest.mark.parametrize("kind", ["continuous", "grid", "duplicates", "symmetric"])
def test_matches_enumeration_of_all_splits(kind):
    rng = np.random.default_rng(["continuous", "grid", "duplicates", "symmetric"].index(kind))
    for _ in range(8):
        n = int(rng.integers(4, 11))
        p = int(rng.integers(1, min(4, n - 1) + 1))
        X, y = _problem(rng, n, kind)
        assert_allclose(
            lpo_risk(X, y, p, n - p, weights="distance"),
            brute_weighted_lpo(X, y, p, n - p),
            rtol=0,
            atol=1e-12,
        )


def test_twelve_points_p4_with_duplicates():
    # C(12, 4) = 495 splits, k up to 8.
    rng = np.random.default_rng(7)
    X, y = _problem(rng, 12, "duplicates")
    assert_allclose(lpo_risk(X, y, 4, 8, "distance"), brute_weighted_lpo(X, y, 4, 8), rtol=0, atol=1e-12)


@pytest.mark.parametrize("kind", ["continuous", "grid"])
def test_twelve_points_p5(kind):
    # C(12, 5) = 792 splits: up to 4 of the k - 1 chosen voters held out, the counter's
    # dynamic programme rather than its direct count of one or two items.
    rng = np.random.default_rng(9)
    X, y = _problem(rng, 12, kind)
    assert_allclose(lpo_risk(X, y, 5, 7, "distance"), brute_weighted_lpo(X, y, 5, 7), rtol=0, atol=1e-12)


def test_symmetric_points_tie_by_hand():
    # Query 0 between a class-0 point at -1 and a class-1 point at +1 (and a far one
    # at 3): with p = 1, k = 2 the vote of 0 is 1 - 1 = 0 exactly, a tie (1/2).
    X = np.array([[0.0], [-1.0], [1.0], [3.0]])
    y = np.array([0, 0, 1, 1])
    risk = lpo_risk(X, y, 1, 2, "distance")
    assert_allclose(risk, brute_weighted_lpo(X, y, 1, 2), atol=1e-15)
    D = sq_dist(X)
    assert weighted_vote_cost([D[0, 1], D[0, 2]], [0, 1], 0) == 0.5


def test_equal_distances_give_the_plurality_risk():
    # The vertices of a simplex are all at the same distance: every weight is the same
    # 1 / sqrt(2), so the weighted rule is the plurality vote (ties cost 1/2 in both).
    rng = np.random.default_rng(2)
    n = 12
    X = np.eye(n)
    y = rng.integers(0, 2, n)
    assert_allclose(lpo_risk(X, y, 3, 9, "distance"), lpo_risk(X, y, 3, 9), rtol=0, atol=1e-12)


def test_unit_weights_equal_the_uniform_closed_form_at_scale():
    # Unit distances make every weight 1: the weighted counter (one state per size)
    # must reproduce the plurality closed form on a problem far beyond enumeration.
    rng = np.random.default_rng(3)
    X = rng.standard_normal((300, 2))
    y = (X[:, 0] + rng.standard_normal(300) > 0).astype(np.intp)
    dist, ind = kneighbors(X, 30 + 10 - 1)
    weighted = lpo_risk_from_weighted_graph(ind, np.ones_like(dist), y, 10, 30)
    assert_allclose(weighted, lpo_risk_from_graph(ind, y, 10, 30), rtol=0, atol=1e-12)


def test_p1_equals_leave_one_out_of_weighted_knnclassifier():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((60, 2))
    y = (X[:, 0] + 0.5 * rng.standard_normal(60) > 0).astype(int)
    risk = lpo_risk(X, y, 1, 12, "distance")
    D = sq_dist(X)
    for k in range(1, 13):
        errors = 0.0
        for i in range(60):
            mask = np.arange(60) != i
            train = np.flatnonzero(mask)
            order = train[np.lexsort((train, D[i, train]))][:k]
            cost = weighted_vote_cost(D[i, order].tolist(), y[order].tolist(), y[i])
            assert cost != 0.5  # continuous data: no exact tie
            pred = KNNClassifier(k=k, weights="distance").fit(X[mask], y[mask]).predict(X[i : i + 1])[0]
            errors += pred != y[i]
        assert risk[k - 1] == pytest.approx(errors / 60, abs=1e-12)


def test_risk_does_not_depend_on_the_thread_count(monkeypatch):
    import numba

    import knnx.lpo.risk

    monkeypatch.setattr(knnx.lpo.risk, "_POOL_MIN_TERMS", 0)  # use the thread pool even here
    rng = np.random.default_rng(8)
    X = rng.standard_normal((150, 2))
    y = (X[:, 1] + rng.standard_normal(150) > 0).astype(int)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = lpo_risk(X, y, 5, 15, "distance")
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        two = lpo_risk(X, y, 5, 15, "distance")
    finally:
        numba.set_num_threads(before)
    assert np.array_equal(one, two)


def test_three_classes_raise_one_line():
    X = np.arange(20.0).reshape(10, 2)
    y = np.arange(10) % 3
    with pytest.raises(DataError, match=r"^weights='distance': exact LpO supports two classes, y has 3$"):
        lpo_risk(X, y, 2, 3, "distance")
    with pytest.raises(ValueError, match="two classes only, the data has 3$"):
        KNNLpoClassifier(p=2, k_max=3, weights="distance").fit(X, y)


def test_one_class_has_zero_risk():
    X = np.random.default_rng(0).standard_normal((8, 2))
    assert_allclose(lpo_risk(X, np.ones(8), 2, 6, "distance"), 0.0, atol=0)


def test_knnlpoclassifier_distance_selects_the_argmin_and_votes_weighted():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((80, 2))
    y = np.where(X[:, 0] + 0.7 * rng.standard_normal(80) > 0, "yes", "no")
    clf = KNNLpoClassifier(p=4, k_max=15, weights="distance").fit(X, y)
    k, risk = select_k(X, y, 4, 15, "distance")
    assert_allclose(clf.lpo_risk_, risk, rtol=0, atol=0)
    assert clf.k_ == k == int(np.flatnonzero(risk <= risk.min() + 1e-12)[0]) + 1
    Q = rng.standard_normal((40, 2))
    ref = KNNClassifier(k=clf.k_, weights="distance").fit(X, y)
    assert np.array_equal(clf.predict(Q), ref.predict(Q))
    assert_allclose(clf.predict_proba(Q), ref.predict_proba(Q), rtol=0, atol=0)


def test_bad_weights_and_graph_shapes():
    X = np.arange(20.0).reshape(10, 2)
    y = np.arange(10) % 2
    with pytest.raises(DataError, match="weights: expected 'uniform' or 'distance', got 'gaussian'"):
        lpo_risk(X, y, 2, 2, "gaussian")
    dist, ind = kneighbors(X, 3, squared=False)
    with pytest.raises(DataError, match="needs k_max \\+ p - 1 = 4 neighbours per row, has 3"):
        lpo_risk_from_weighted_graph(ind, dist, y, 2, 3)
    with pytest.raises(DataError, match="neigh_dist: distances must be finite and non-negative"):
        lpo_risk_from_weighted_graph(ind, -dist, y, 2, 2)


def test_a_count_over_the_work_cap_is_one_data_error(monkeypatch):
    # The kernel marks counts beyond WORK_CAP partial sums with NaN; the boundary
    # turns them into one DataError rather than a NaN risk.
    import knnx._kernels.lpo_weighted

    def over_cap(first, step, points, y, k_min, tables, sums, limb_tag):
        sums[first::step] = np.nan

    # knnx.lpo.risk reads the kernel module's attribute at each call (knnx._kernels.lazy)
    monkeypatch.setattr(knnx._kernels.lpo_weighted, "chunk_errors", over_cap)
    X = np.random.default_rng(0).standard_normal((12, 2))
    y = np.arange(12) % 2
    with pytest.raises(
        DataError, match=r"needs more than 16777216 partial sums .* use a smaller p or k_max$"
    ):
        lpo_risk(X, y, 3, 5, "distance")


def test_select_k_cli_distance_csv(tmp_path):
    from typer.testing import CliRunner

    from knnx.cli import app

    rng = np.random.default_rng(6)
    X = rng.standard_normal((30, 2))
    y = np.where(X[:, 0] > 0, "a", "b")
    path = tmp_path / "data.csv"
    write_labelled_csv(path, X, y)
    args = ["select-k", "--p", "3", "--csv", str(path), "--label", "cls", "--k-max", "9"]
    res = CliRunner().invoke(app, [*args, "--weights", "distance", "--format", "csv"])
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines[0] == "k,lpo_risk" and len(lines) == 10
    risk = lpo_risk(X, y, 3, 9, "distance")
    assert [int(line.split(",")[0]) for line in lines[1:]] == list(range(1, 10))
    assert_allclose([float(line.split(",")[1]) for line in lines[1:]], risk, rtol=0, atol=0)
    # three classes: one line, exit code 2
    path.write_text("x1,cls\n" + "".join(f"{i}.0,{'abc'[i % 3]}\n" for i in range(12)))
    res = CliRunner().invoke(app, [*args[:-2], "--k-max", "3", "--weights", "distance"])
    assert res.exit_code == 2
    assert res.stderr.strip() == "error: weights='distance': exact LpO supports two classes, y has 3"
