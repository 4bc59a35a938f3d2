"""KNNClassifier: scikit-learn agreement, the tie rule by hand, estimator checks."""

import numpy as np
import pytest
from conftest import RTOL
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.neighbors import KNeighborsClassifier

from knnx import KNNClassifier, kneighbors
from knnx.datasets import load_bundled


@pytest.mark.parametrize("k", [1, 3, 5, 7, 9, 15, 31])
def test_ripley_matches_sklearn_for_odd_k(k):
    ds = load_bundled("ripley")
    tr, te = ds.split
    ours = KNNClassifier(k=k).fit(ds.X[tr], ds.y[tr])
    ref = KNeighborsClassifier(n_neighbors=k, algorithm="brute").fit(ds.X[tr], ds.y[tr])
    assert_array_equal(ours.predict(ds.X[te]), ref.predict(ds.X[te]))
    assert_allclose(ours.predict_proba(ds.X[te]), ref.predict_proba(ds.X[te]), rtol=RTOL)


@pytest.mark.parametrize("k", [1, 4, 10])
def test_distance_weights_match_sklearn(seed, k):
    rng = np.random.default_rng(seed)
    X, y = rng.standard_normal((300, 4)), rng.integers(0, 3, 300)
    Q = rng.standard_normal((200, 4))
    ours = KNNClassifier(k=k, weights="distance").fit(X, y)
    ref = KNeighborsClassifier(n_neighbors=k, weights="distance", algorithm="brute").fit(X, y)
    assert_array_equal(ours.predict(Q), ref.predict(Q))
    assert_allclose(ours.predict_proba(Q), ref.predict_proba(Q), rtol=1e-9)


def test_tie_goes_to_the_class_of_the_nearest_tied_neighbour():
    # Query at 0. Neighbours by distance: x=1 (class b), x=-2 (class a), x=3 (class a),
    # x=-4 (class b). k=4 gives a 2-2 tie between a and b; the nearest neighbour is b.
    X = np.array([[1.0], [-2.0], [3.0], [-4.0]])
    y = np.array(["b", "a", "a", "b"])
    clf = KNNClassifier(k=4).fit(X, y)
    assert clf.predict([[0.0]])[0] == "b"
    assert_array_equal(clf.predict_proba([[0.0]]), [[0.5, 0.5]])
    # Moving the query next to x=-2 makes that a-neighbour the nearest: a wins.
    assert clf.predict([[-1.9]])[0] == "a"


def test_three_way_tie_ignores_classes_below_the_top():
    # k=5: classes p, q, r get 2, 2, 1 votes; nearest neighbour is r (not tied), then q.
    X = np.array([[1.0], [2.0], [3.0], [4.0], [5.0]])
    y = np.array(["r", "q", "p", "q", "p"])
    assert KNNClassifier(k=5).fit(X, y).predict([[0.0]])[0] == "q"


def test_equidistant_neighbours_are_ordered_by_training_index():
    # Both training points are at distance 1 from the query; index 0 comes first.
    X = np.array([[1.0], [-1.0]])
    clf = KNNClassifier(k=1).fit(X, ["left", "right"][::-1])
    assert clf.predict([[0.0]])[0] == "right"


def test_zero_distance_neighbours_take_the_whole_weighted_vote():
    X = np.array([[0.0], [0.1], [0.2]])
    clf = KNNClassifier(k=3, weights="distance").fit(X, [1, 2, 2])
    assert_array_equal(clf.predict_proba([[0.0]]), [[1.0, 0.0]])


def test_invalid_parameters_and_k_too_large():
    X, y = np.zeros((3, 1)), [0, 1, 0]
    with pytest.raises(ValueError, match="KNNClassifier: k must be an integer >= 1, got 0"):
        KNNClassifier(k=0).fit(X, y)
    with pytest.raises(ValueError, match="weights must be one of 'uniform', 'distance', got 'x'"):
        KNNClassifier(weights="x").fit(X, y)
    with pytest.raises(ValueError, match=r"k=4 exceeds the training set size \(n_samples = 3\)"):
        KNNClassifier(k=4).fit(X, y)


# knnx's vote tie rule (the nearest neighbour's class among the tied ones) differs from
# scikit-learn's convention that predict equals argmax(predict_proba) (the smallest
# tied class): test_estimator_checks.py expects check_classifiers_train to fail where
# it meets such ties. The test below shows that every disagreement is such a tie.
def test_predict_differs_from_argmax_proba_only_on_vote_ties():
    # The data of check_classifiers_train: three blobs, KNNClassifier with k = 2.
    from sklearn.datasets import make_blobs

    X, y = make_blobs(n_samples=300, random_state=0)
    X -= X.min()
    clf = KNNClassifier(k=2).fit(X, y)
    pred, proba = clf.predict(X), clf.predict_proba(X)
    differ = np.flatnonzero(pred != proba.argmax(1))
    assert differ.size > 0
    neigh = kneighbors(X, 2, X)[1]
    for i in differ:
        top = np.flatnonzero(proba[i] == proba[i].max())
        assert len(top) > 1 and pred[i] in top
        # the nearest neighbour among the tied classes decides
        first_tied = next(y[j] for j in neigh[i] if y[j] in top)
        assert pred[i] == first_tied


# ---------------------------------------------------------------------------
# the vote tie parameter: every rule against a naive NumPy vote


def naive_tie_vote(X, y_codes, Q, k, weights, tie, seed):
    """Brute-force kNN vote: neighbours by (squared distance, index), scores by plain
    loops, the tie rule written out; returns class codes."""
    draws = np.random.default_rng(0 if seed is None else seed).random(len(Q))
    n_classes = int(y_codes.max()) + 1
    out = []
    for i, q in enumerate(Q):
        d2 = ((X - q) ** 2).sum(axis=1)
        order = np.lexsort((np.arange(len(X)), d2))[:k]
        scores = np.zeros(n_classes)
        zero = [j for j in order if d2[j] == 0.0]
        for j in order:
            if weights == "uniform":
                scores[y_codes[j]] += 1.0
            elif zero:
                scores[y_codes[j]] += 1.0 if d2[j] == 0.0 else 0.0
            else:
                scores[y_codes[j]] += 1.0 / np.sqrt(d2[j])
        tied = [c for c in range(n_classes) if scores[c] == scores.max()]
        if tie == "nearest":
            out.append(next(y_codes[j] for j in order if y_codes[j] in tied))
        elif tie == "lowest":
            out.append(tied[0])
        else:
            out.append(tied[int(np.floor(draws[i] * len(tied)))])
    return np.array(out)


def _tied_problem(seed):
    # integer grid points, 4 classes, even k: many equal distances and tied votes
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 4, (60, 2)).astype(float)
    y = rng.integers(0, 4, 60)
    Q = rng.integers(0, 4, (150, 2)).astype(float) + rng.choice([0.0, 0.5], (150, 2))
    return X, y, Q


@pytest.mark.parametrize("tie", ["nearest", "lowest", "random"])
@pytest.mark.parametrize("weights", ["uniform", "distance"])
@pytest.mark.parametrize("k", [2, 4, 6])
def test_each_tie_rule_matches_the_naive_vote(seed, tie, weights, k):
    X, y, Q = _tied_problem(seed)
    clf = KNNClassifier(k=k, weights=weights, tie=tie, seed=seed).fit(X, y)
    expect = naive_tie_vote(X, y, Q, k, weights, tie, seed)
    assert_array_equal(clf.predict(Q), clf.classes_[expect])
    proba = clf.predict_proba(Q)
    n_tied = (proba == proba.max(1, keepdims=True)).sum(1)
    if weights == "uniform":
        assert (n_tied > 1).sum() >= 20  # the problem does exercise the rule


def test_tie_rules_differ_only_on_ties_and_predict_proba_is_unchanged():
    X, y, Q = _tied_problem(3)
    fits = {t: KNNClassifier(k=4, tie=t, seed=5).fit(X, y) for t in ("nearest", "lowest", "random")}
    proba = fits["nearest"].predict_proba(Q)
    tied = (proba == proba.max(1, keepdims=True)).sum(1) > 1
    preds = {t: f.predict(Q) for t, f in fits.items()}
    for t in ("lowest", "random"):
        assert_array_equal(fits[t].predict_proba(Q), proba)
        assert_array_equal(preds[t][~tied], preds["nearest"][~tied])
        assert (preds[t][tied] != preds["nearest"][tied]).any()
    # "lowest" is argmax(predict_proba) (first maximum in classes_ order)
    assert_array_equal(preds["lowest"], fits["lowest"].classes_[proba.argmax(1)])


def test_hand_worked_tie_rules():
    # Query at 0: neighbours x=1 (b), x=-2 (a), x=3 (a), x=-4 (b); k=4 ties a and b 2-2.
    X = np.array([[1.0], [-2.0], [3.0], [-4.0]])
    y = np.array(["b", "a", "a", "b"])
    assert KNNClassifier(k=4, tie="nearest").fit(X, y).predict([[0.0]])[0] == "b"
    assert KNNClassifier(k=4, tie="lowest").fit(X, y).predict([[0.0]])[0] == "a"
    # random: draw u = default_rng(seed).random(1)[0]; two tied classes -> a if u < 1/2
    for s in range(6):
        u = np.random.default_rng(s).random(1)[0]
        got = KNNClassifier(k=4, tie="random", seed=s).fit(X, y).predict([[0.0]])[0]
        assert got == ("a" if u < 0.5 else "b")


def test_random_ties_are_uniform_and_reproducible():
    # three classes at the same distance from the query: a 3-way tie on every row
    X = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0]])
    clf = KNNClassifier(k=3, tie="random", seed=7).fit(X, ["p", "q", "r"])
    Q = np.zeros((6000, 2))
    pred = clf.predict(Q)
    assert_array_equal(pred, clf.predict(Q))  # same seed, same query array: same draws
    assert_array_equal(pred, KNNClassifier(k=3, tie="random", seed=7).fit(X, ["p", "q", "r"]).predict(Q))
    freq = np.array([(pred == c).mean() for c in "pqr"])
    assert np.abs(freq - 1 / 3).max() < 0.025  # 4 standard errors of 6000 draws
    other = KNNClassifier(k=3, tie="random", seed=8).fit(X, ["p", "q", "r"]).predict(Q)
    assert (other != pred).mean() > 0.5  # a different seed draws differently
    assert_array_equal(
        KNNClassifier(k=3, tie="random").fit(X, ["p", "q", "r"]).predict(Q),
        KNNClassifier(k=3, tie="random", seed=0).fit(X, ["p", "q", "r"]).predict(Q),
    )


@pytest.mark.parametrize("tie", ["nearest", "lowest", "random"])
def test_odd_k_two_classes_match_sklearn_whatever_the_tie_rule(tie):
    ds = load_bundled("ripley")
    tr, te = ds.split
    for k in (1, 5, 15):
        ours = KNNClassifier(k=k, tie=tie, seed=1).fit(ds.X[tr], ds.y[tr])
        ref = KNeighborsClassifier(n_neighbors=k, algorithm="brute").fit(ds.X[tr], ds.y[tr])
        assert_array_equal(ours.predict(ds.X[te]), ref.predict(ds.X[te]))


def test_lpo_classifier_votes_with_the_tie_rule():
    from knnx.estimators.knn import KNNLpoClassifier

    X, y, Q = _tied_problem(4)
    for tie in ("nearest", "lowest", "random"):
        lpo = KNNLpoClassifier(p=2, k_max=8, tie=tie, seed=3).fit(X, y)
        knn = KNNClassifier(k=lpo.k_, tie=tie, seed=3).fit(X, y)
        assert_array_equal(lpo.predict(Q), knn.predict(Q))
    # the selected k does not depend on the rule (LpO charges ties their expected cost)
    ks = {KNNLpoClassifier(p=2, k_max=8, tie=t).fit(X, y).k_ for t in ("nearest", "lowest", "random")}
    assert len(ks) == 1


def test_tie_and_seed_constraints():
    from knnx.errors import SpecError
    from knnx.estimators.knn import KNNLpoClassifier
    from knnx.estimators.params import check_params

    X, y = np.zeros((3, 1)), [0, 1, 0]
    with pytest.raises(ValueError, match="tie must be one of 'nearest', 'lowest', 'random', got 'first'"):
        KNNClassifier(tie="first").fit(X, y)
    with pytest.raises(ValueError, match=r"seed must be an integer in \[0, 4294967295\] or None, got -1"):
        KNNClassifier(seed=-1).fit(X, y)
    for cls in (KNNClassifier, KNNLpoClassifier):
        with pytest.raises(
            SpecError, match="^knn: tie must be one of 'nearest', 'lowest', 'random', got 'x'$"
        ):
            check_params("knn", cls._parameter_constraints, {"tie": "x"})
        check_params("knn", cls._parameter_constraints, {"tie": "random", "seed": 3})
