"""Wilson and Martinez's DROP3 and Brighton and Mellish's ICF (knnx.reduction.hybrid)
against plain-Python versions written from the papers' definitions as the docstrings
state them: every list recomputed from scratch over an ordered neighbour list (no
incremental update), every distance in NumPy (or knnx's own distances under the mixed
metrics), neighbours by (distance, row index), knnx's vote and tie rule."""

import numpy as np
import pytest
from reduction_oracles import blobs, distances, grid, l1, neighbour_order, sq, vote

from knnx.datasets import load_dataset
from knnx.reduction import DROP3, ENN, ICF


def _every_class(kept, y):
    """The class rule: a class with no row kept keeps them all."""
    kept = set(kept)
    return sorted(kept | {i for i in range(len(y)) if y[i] not in {y[j] for j in kept}})


def _enn(y, order, k, tie):
    return _every_class([i for i in range(len(y)) if vote(y[order[i][:k]], y.max() + 1, tie) == y[i]], y)


def _brute_drop3(y, D, k, tie):
    n, n_classes = len(y), y.max() + 1
    order = neighbour_order(D)
    S = set(_enn(y, order, k, tie))
    lists = {a: [j for j in order[a] if j in S][: k + 1] for a in range(n)}
    enemy = {p: min((D[p, j] for j in S if y[j] != y[p]), default=np.inf) for p in S}

    def right(a, skip):
        voters = [j for j in lists[a] if j != skip][:k]
        return bool(voters) and vote(y[voters], n_classes, tie) == y[a]

    for p in sorted(S, key=lambda p: (-enemy[p], p)):
        assoc = [a for a in range(n) if p in lists[a]]
        if sum(right(a, p) for a in assoc) >= sum(right(a, None) for a in assoc):
            S.discard(p)
            for a in assoc:
                lists[a] = [j for j in order[a] if j in S][: k + 1]
    return _every_class(S, y)


def _brute_icf(y, D, k, tie):
    rows = _enn(y, neighbour_order(D), k, tie)
    rounds = 0
    while True:
        rounds += 1
        reach, cover = {}, dict.fromkeys(rows, 0)
        for a in rows:
            enemy = min((D[a, j] for j in rows if y[j] != y[a]), default=np.inf)
            local = [j for j in rows if j != a and y[j] == y[a] and D[a, j] < enemy]
            reach[a] = len(local)
            for j in local:
                cover[j] += 1
        drop = {a for a in rows if reach[a] > cover[a]}
        if not drop:
            return _every_class(rows, y), rounds
        rows = [a for a in rows if a not in drop]


@pytest.mark.parametrize("metric", ["euclidean", "manhattan"])
@pytest.mark.parametrize(("k", "tie"), [(3, "nearest"), (1, "nearest"), (4, "lowest")])
@pytest.mark.parametrize("data", [blobs, grid])
def test_drop3_is_wilson_and_martinezs_rule(data, k, tie, metric):
    for seed in range(3):
        X, y = data(seed, n=100)
        D = l1(X) if metric == "manhattan" else sq(X)
        drop3 = DROP3(k=k, tie=tie, metric=metric).fit(X, y)
        assert drop3.sample_indices_.tolist() == _brute_drop3(y, D, k, tie)
        assert drop3.filtered_.tolist() == ENN(k=k, tie=tie, metric=metric).fit(X, y).sample_indices_.tolist()
        assert set(drop3.sample_indices_) <= set(drop3.filtered_) or len(set(y)) > len(
            set(y[drop3.filtered_])
        )


@pytest.mark.parametrize("metric", ["euclidean", "manhattan"])
@pytest.mark.parametrize(("k", "tie"), [(3, "nearest"), (1, "nearest"), (4, "lowest")])
@pytest.mark.parametrize("data", [blobs, grid])
def test_icf_is_brighton_and_mellishs_rule(data, k, tie, metric):
    for seed in range(3):
        X, y = data(seed, n=100)
        D = l1(X) if metric == "manhattan" else sq(X)
        icf = ICF(k=k, tie=tie, metric=metric).fit(X, y)
        assert (icf.sample_indices_.tolist(), icf.n_iter_) == _brute_icf(y, D, k, tie)


@pytest.mark.parametrize("metric", ["hvdm", "heom", "gower"])
def test_drop3_and_icf_on_nominal_codes_and_missing_values(metric):
    """keel.crx as codes, 3 % of its cells missing: both keep the rows of their
    plain-Python versions on knnx's distances under the fitted metric, and few of them."""
    ds = load_dataset({"name": "keel.crx", "categorical": "keep"})
    X, y, nominal = ds.X[:200].copy(), ds.y[:200], list(ds.nominal)
    X[np.random.default_rng(1).random(X.shape) < 0.03] = np.nan
    drop3 = DROP3(metric=metric, nominal=nominal).fit(X, y)
    D = distances(X, drop3.metric_)
    assert drop3.sample_indices_.tolist() == _brute_drop3(y, D, 3, "nearest")
    icf = ICF(metric=metric, nominal=nominal).fit(X, y)
    assert icf.sample_indices_.tolist() == _brute_icf(y, D, 3, "nearest")[0]
    assert 0 < len(drop3.sample_indices_) < 0.5 * len(y) and 0 < len(icf.sample_indices_) < 0.5 * len(y)


def test_drop3_keeps_the_border_and_icf_removes_the_interior():
    """Two well separated Gaussian classes: both keep a small fraction of the rows, and
    the rows they keep lie nearer to the other class than the rows they remove."""
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 300)
    X = rng.normal(size=(600, 2)) + y[:, None] * np.array([2.5, 0.0])
    for selection in (DROP3(), ICF()):
        kept = selection.fit(X, y).sample_indices_
        assert len(kept) < 0.25 * len(y)
        gap = np.abs(X[:, 0] - 1.25)
        removed = np.setdiff1d(np.arange(len(y)), kept)
        assert np.median(gap[kept]) < np.median(gap[removed])
