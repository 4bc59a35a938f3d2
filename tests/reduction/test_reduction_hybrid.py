"""Wilson and Martinez's DROP3 and Brighton and Mellish's ICF (knnx.reduction.hybrid)
against plain-Python versions written from the papers' definitions as the docstrings
state them: every list recomputed from scratch over an ordered neighbour list (no
incremental update), every distance in NumPy (or knnx's own distances under the mixed
metrics), neighbours by (distance, row index), knnx's vote and tie rule."""

import numpy as np
import pytest
from reduction_oracles import blobs, distances, grid, l1, neighbour_order, sq, vote

from knnx.datasets import load_dataset
from knnx.reduction import DROP3, ENN, HMNEI, IB3, ICF


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


def _wilson(hits, n, z):
    if n == 0:
        return 0.0, 1.0
    p = hits / n
    centre, half = p + z * z / (2 * n), z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - half) / (1 + z * z / n), (centre + half) / (1 + z * z / n)


def _brute_ib3(y, D, seed, accept=0.9, drop=0.7):
    """IB3 from its docstring, in plain Python (scipy's normal quantiles)."""
    from scipy.stats import norm

    za, zd = norm.ppf((1 + accept) / 2), norm.ppf((1 + drop) / 2)
    rng = np.random.default_rng(seed)
    order, u = rng.permutation(len(y)), rng.random(len(y))
    used, right, seen = np.zeros(len(y), int), np.zeros(len(y), int), np.zeros(y.max() + 1, int)
    cd = []

    def acceptable(j, n):
        return used[j] > 0 and _wilson(right[j], used[j], za)[0] > _wilson(seen[y[j]], n, za)[1]

    def poor(j, n):
        return used[j] > 0 and _wilson(right[j], used[j], zd)[1] < _wilson(seen[y[j]], n, zd)[0]

    for t, x in enumerate(order):
        n = t + 1
        seen[y[x]] += 1
        if not cd:
            cd.append(x)
            continue
        ranked = sorted(cd, key=lambda j: (D[x, j], j))
        good = [j for j in ranked if acceptable(j, n)]
        ymax = good[0] if good else ranked[min(int(u[t] * len(cd)), len(cd) - 1)]
        stays = []
        for j in cd:
            if D[x, j] <= D[x, ymax]:
                used[j] += 1
                right[j] += y[j] == y[x]
                if poor(j, n):
                    continue
            stays.append(j)
        cd = stays + ([x] if y[x] != y[ymax] else [])
    good = [j for j in cd if acceptable(j, len(y))]
    return _every_class(good + [j for j in cd if y[j] not in {y[g] for g in good}], y)


@pytest.mark.parametrize("metric", ["euclidean", "manhattan"])
@pytest.mark.parametrize("levels", [(0.9, 0.7), (0.75, 0.6)])
@pytest.mark.parametrize("data", [blobs, grid])
def test_ib3_is_aha_kibler_and_alberts_rule(data, levels, metric):
    for seed in range(3):
        X, y = data(seed, n=150)
        D = l1(X) if metric == "manhattan" else sq(X)
        ib3 = IB3(*levels, random_state=seed, metric=metric).fit(X, y)
        assert ib3.sample_indices_.tolist() == _brute_ib3(y, D, seed, *levels)
        assert len(ib3.sample_indices_) < 0.6 * len(y)


def test_ib3_on_nominal_codes_and_missing_values():
    ds = load_dataset({"name": "keel.crx", "categorical": "keep"})
    X, y, nominal = ds.X[:300].copy(), ds.y[:300], list(ds.nominal)
    X[np.random.default_rng(3).random(X.shape) < 0.03] = np.nan
    ib3 = IB3(random_state=4, metric="hvdm", nominal=nominal).fit(X, y)
    assert ib3.sample_indices_.tolist() == _brute_ib3(y, distances(X, ib3.metric_), 4)
    assert 0 < len(ib3.sample_indices_) < 0.3 * len(y)


def _brute_hmnei(y, D, epsilon=0.1):
    """HMN-EI from its docstring, in plain Python."""
    n, n_classes = len(y), y.max() + 1

    def right(S):
        count = 0
        for a in range(n):
            others = [j for j in S if j != a]
            count += bool(others) and y[min(others, key=lambda j: (D[a, j], j))] == y[a]
        return count

    def edit(S):
        hit, miss = dict.fromkeys(S, 0), dict.fromkeys(S, 0)
        for a in S:
            for c in range(n_classes):
                of_c = [j for j in S if j != a and y[j] == c]
                if of_c:
                    j = min(of_c, key=lambda j, a=a: (D[a, j], j))
                    (hit if c == y[a] else miss)[j] += 1
        counts = np.bincount(y[S], minlength=n_classes)
        removed = {
            a for a in S if counts[y[a]] / len(S) * miss[a] + epsilon > (1 - counts[y[a]] / len(S)) * hit[a]
        }
        left = np.bincount([y[a] for a in S if a not in removed], minlength=n_classes)
        back = set()
        for a in removed:
            linked = hit[a] + miss[a] > 0
            if (linked and left[y[a]] < 4) or (n_classes > 3 and linked and miss[a] < n_classes // 2):
                back.add(a)
            if hit[a] >= counts[y[a]] // 4:
                back.add(a)
        return [a for a in S if a not in removed - back]

    S, score, edits = list(range(n)), None, 0
    score = right(S)
    while True:
        edits += 1
        new = edit(S)
        new_score = right(new)
        if len(new) == len(S) or new_score < score:
            return S, edits, score
        S, score = new, new_score


@pytest.mark.parametrize("metric", ["euclidean", "manhattan"])
@pytest.mark.parametrize("epsilon", [0.1, 0.0, 1.0])
@pytest.mark.parametrize("data", [blobs, grid])
def test_hmnei_is_the_hit_miss_network_editing(data, epsilon, metric):
    for seed in range(3):
        X, y = data(seed, n=110)
        D = l1(X) if metric == "manhattan" else sq(X)
        hmnei = HMNEI(epsilon=epsilon, metric=metric).fit(X, y)
        kept, edits, correct = _brute_hmnei(y, D, epsilon)
        assert (hmnei.sample_indices_.tolist(), hmnei.n_iter_, hmnei.n_correct_) == (
            _every_class(kept, y),
            edits,
            correct,
        )


def test_hmnei_with_more_than_three_classes_on_nominal_codes():
    """Five classes (R3 applies), hvdm on crx's codes with missing values."""
    ds = load_dataset({"name": "keel.crx", "categorical": "keep"})
    X, nominal = ds.X[:150].copy(), list(ds.nominal)
    y = np.random.default_rng(0).integers(0, 5, 150) * (ds.y[:150] + 1) % 5
    X[np.random.default_rng(5).random(X.shape) < 0.03] = np.nan
    hmnei = HMNEI(metric="hvdm", nominal=nominal).fit(X, y)
    kept, edits, _ = _brute_hmnei(y, distances(X, hmnei.metric_))
    assert hmnei.sample_indices_.tolist() == _every_class(kept, y) and edits >= 2


def test_ib3_keeps_the_members_of_a_class_none_of_which_is_acceptable():
    """keel.bupa's classes overlap so much that one class ends without an acceptable
    member: its stored members stay (not all its rows, which the class rule would
    give), as the plain-Python version says."""
    ds = load_dataset("keel.bupa")
    X = (ds.X - ds.X.mean(axis=0)) / ds.X.std(axis=0)
    for seed in range(3):
        ib3 = IB3(random_state=seed).fit(X, ds.y)
        assert ib3.sample_indices_.tolist() == _brute_ib3(ds.y, sq(X), seed)
        per_class = np.bincount(ds.y[ib3.sample_indices_], minlength=2) / np.bincount(ds.y)
        assert (per_class > 0).all() and (per_class < 0.5).all()
