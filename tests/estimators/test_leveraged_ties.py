"""The vote-tie rules of UNN and GNNB (``tie``) against a naive NumPy oracle, on data
built so that many queries tie: integer coordinates (exact distances, neighbour order
by (distance, index) is unambiguous) and one boosting iteration, so most queries'
neighbours have alpha = 0 and every score is 0."""

import numpy as np
import pytest

from knnx import GNNBClassifier, UNNClassifier
from knnx.estimators.gnnb import normalize_rows

RULES = ["frequent", "nearest", "lowest", "random"]


def _grid(seed, m, n_query, C):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 6, size=(m, 2)).astype(float)
    y = rng.choice(
        C, size=m, p=np.arange(1, C + 1) / np.arange(1, C + 1).sum()
    )  # the last code most frequent
    y[:C] = np.arange(C)
    Q = rng.integers(-1, 7, size=(n_query, 2)).astype(float)
    return X, y, Q


def naive_neighbours(ref, Q, k):
    """Indices of the k nearest rows of ``ref`` per query, by (squared distance, index)."""
    d2 = ((Q[:, None, :] - ref[None, :, :]) ** 2).sum(-1)
    return np.argsort(d2, axis=1, kind="stable")[:, :k]


def naive_scores(X, y, alpha, rows, Q, k):
    """Eq. (6) / (16) over the k nearest of X[rows]; also the neighbours' classes."""
    near = rows[naive_neighbours(X[rows], Q, k)]
    h = np.zeros((len(Q), alpha.shape[1]))
    for c in range(alpha.shape[1]):
        h[:, c] = (alpha[near, c] * np.where(y[near] == c, 1.0, -1.0)).sum(axis=1)
    return h, y[near]


def naive_tie_predict(scores, y_train, near_classes, rule, seed):
    C = scores.shape[1]
    counts = np.bincount(y_train, minlength=C)
    frequent = [c for c in np.lexsort((np.arange(C), -counts))]
    draws = np.random.default_rng(0 if seed is None else seed).random(len(scores))
    out = []
    for q, row in enumerate(scores):
        tied = np.flatnonzero(row == row.max())
        by_frequency = next(c for c in frequent if c in tied)
        if rule == "frequent" or len(tied) == 1:
            out.append(by_frequency)
        elif rule == "lowest":
            out.append(tied[0])
        elif rule == "nearest":
            out.append(next((c for c in near_classes[q] if c in tied), by_frequency))
        else:
            out.append(tied[min(int(np.floor(draws[q] * len(tied))), len(tied) - 1)])
    return np.array(out)


@pytest.mark.parametrize("C", [2, 4])
@pytest.mark.parametrize("prototypes", ["all", "leveraged"])
def test_unn_tie_rules_match_the_oracle(C, prototypes):
    X, y, Q = _grid(C, m=60, n_query=200, C=C)
    preds = {}
    for rule in RULES:
        model = UNNClassifier(k=5, n_iter=1, tie=rule, seed=11, prototypes=prototypes).fit(X, y)
        rows = np.arange(len(y)) if prototypes == "all" else model.prototypes_
        h, near = naive_scores(X, y, model.alpha_, rows, Q, min(5, len(rows)))
        np.testing.assert_allclose(model.decision_function(Q), h[:, 1] if C == 2 else h, atol=1e-14)
        preds[rule] = model.predict(Q)
        np.testing.assert_array_equal(preds[rule], naive_tie_predict(h, y, near, rule, 11))
    if prototypes == "all":  # the construction ties (one prototype per class does not), rules differ
        assert np.sum((h == h.max(axis=1, keepdims=True)).sum(axis=1) > 1) >= 20
        assert len({tuple(p) for p in preds.values()}) == 4


@pytest.mark.parametrize("n_splits", [1, 2])
@pytest.mark.parametrize("prototypes", ["all", "leveraged"])
def test_gnnb_tie_rules_match_the_oracle(n_splits, prototypes):
    X, y, Q = _grid(5, m=60, n_query=200, C=4)
    X = np.hstack([X, X[:, ::-1] + 1.0])  # four features for two blocks
    Q = np.hstack([Q, Q[:, ::-1] + 1.0])
    for rule in RULES:
        g = GNNBClassifier(k=5, n_iter=1, tie=rule, seed=3, n_splits=n_splits, prototypes=prototypes).fit(
            X, y
        )
        scores, near = 0.0, []
        for b, cols in enumerate(g.blocks_):
            Xb, Qb = normalize_rows(X[:, cols], g._norm()), normalize_rows(Q[:, cols], g._norm())
            alpha = g.alpha_[b]
            rows = np.arange(len(y)) if prototypes == "all" else np.flatnonzero(np.any(alpha != 0, axis=1))
            h, nb = naive_scores(Xb, y, alpha, rows, Qb, min(5, len(rows)))
            near.append(nb)
            if n_splits == 1:
                scores = h
            else:  # the logistic link, normalised, averaged over the blocks
                p = 1 / (1 + np.exp(-h))
                scores = scores + p / p.sum(axis=1, keepdims=True)
        if n_splits > 1:
            scores = scores / n_splits
            np.testing.assert_allclose(g.predict_proba(Q), scores, rtol=1e-12)
            scores = g.predict_proba(Q)  # the estimator's own floats decide exact ties
        else:
            np.testing.assert_allclose(g.decision_function(Q), scores, atol=1e-14)
        want = naive_tie_predict(scores, y, np.hstack(near), rule, 3)
        np.testing.assert_array_equal(g.predict(Q), want)
        if prototypes == "all":
            assert np.sum((scores == scores.max(axis=1, keepdims=True)).sum(axis=1) > 1) >= 20


def test_random_ties_are_deterministic_given_seed_and_queries():
    X, y, Q = _grid(4, m=60, n_query=300, C=4)
    a = UNNClassifier(k=5, n_iter=1, tie="random", seed=5, prototypes="all").fit(X, y)
    b = UNNClassifier(k=5, n_iter=1, tie="random", seed=5, prototypes="all").fit(X, y)
    c = UNNClassifier(k=5, n_iter=1, tie="random", seed=6, prototypes="all").fit(X, y)
    np.testing.assert_array_equal(a.predict(Q), b.predict(Q))
    np.testing.assert_array_equal(a.predict(Q), a.predict(Q))
    assert not np.array_equal(a.predict(Q), c.predict(Q))
    # uniform among the tied classes: all four classes come out for the all-tied rows
    h = a.decision_function(Q)
    all_tied = np.all(h == h[:, :1], axis=1)
    assert all_tied.sum() > 100
    assert set(a.predict(Q)[all_tied]) == {0, 1, 2, 3}


@pytest.mark.parametrize("estimator", [UNNClassifier, GNNBClassifier])
def test_tie_and_prototypes_are_validated(estimator):
    X, y, _ = _grid(0, m=30, n_query=1, C=3)
    with pytest.raises(
        ValueError, match=r"tie must be one of 'frequent', 'nearest', 'lowest', 'random', got 'first'"
    ):
        estimator(tie="first").fit(X, y)
    with pytest.raises(ValueError, match=r"prototypes must be one of 'all', 'leveraged', got 'kept'"):
        estimator(prototypes="kept").fit(X, y)
    assert estimator().get_params()["tie"] == "frequent"
    assert estimator().get_params()["prototypes"] == ("all" if estimator is GNNBClassifier else "leveraged")


def test_spec_validation_knows_tie_and_prototypes():
    import knnx
    from knnx.errors import SpecError

    spec = {
        "name": "t",
        "seed": 0,
        "datasets": ["iris"],
        "protocol": {"kind": "kfold", "folds": 2},
        "algorithms": [
            {"name": "unn", "params": {"tie": ["nearest", "random"], "prototypes": "all"}},
            {"name": "gnnb", "params": {"tie": "lowest", "prototypes": "leveraged"}},
            {"name": "unn_cv", "params": {"tie": "nearest", "prototypes": "all"}},
        ],
        "metrics": ["error"],
    }
    knnx.validate_spec(spec)
    spec["algorithms"][1]["params"]["tie"] = "first"
    with pytest.raises(
        SpecError, match=r"algorithms\[1\]\.params\.tie: must be one of 'frequent', 'nearest', "
    ):
        knnx.validate_spec(spec)
