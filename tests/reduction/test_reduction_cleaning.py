"""Laurikkala's NCR, Kubat and Matwin's OSS and Devijver and Kittler's multiedit
(knnx.reduction), each against a plain-Python version written from its docstring (every
distance in NumPy, or knnx's own distances under the mixed metrics, neighbours by
(distance, row index), the same draws), and against imbalanced-learn: OSS keeps its rows
from the same start row; NCR keeps the rows of imbalanced-learn's own rule, which
differs from the paper's in the three ways NCR's docstring names."""

import numpy as np
import pytest
from reduction_oracles import blobs, distances, grid, l1, neighbour_order, sq, vote

from knnx.datasets import load_dataset
from knnx.reduction import NCR, OSS, Multiedit
from knnx.reduction.condensing import one_sided


def _imbalanced(seed, n=160, classes=3):
    """Three overlapping classes of sizes about 1:2:5, so NCR's smallest class is
    outvoted and its neighbours cleaned."""
    rng = np.random.default_rng(seed)
    y = rng.choice(classes, n, p=[0.12, 0.28, 0.6][:classes] / np.sum([0.12, 0.28, 0.6][:classes]))
    X = rng.normal(size=(n, 2)) + y[:, None] * 0.9
    return X, y


def _brute_ncr(y, D, k, tie, threshold, imblearn=False):
    """NCR from its docstring; ``imblearn``: imbalanced-learn's rule instead (A1 edits
    every class, the row itself votes in A2's vote, classes larger than the threshold,
    C included, are cleaned)."""
    order = neighbour_order(D)
    n_classes = y.max() + 1
    counts = np.bincount(y, minlength=n_classes)
    target = int(np.argmin(counts))
    remove = set()
    for i in range(len(y)):
        wrong = vote(y[order[i][:k]], n_classes, tie) != y[i]
        if wrong and (imblearn or y[i] != target):
            remove.add(i)  # A1
        if y[i] != target:
            continue
        voters = [i, *order[i][: k - 1]] if imblearn else order[i][:k]
        if vote(y[voters], n_classes, tie) != y[i]:
            for j in order[i][:k]:  # A2
                big = (
                    counts[y[j]] > threshold * counts[target]
                    if imblearn
                    else counts[y[j]] >= threshold * counts[target]
                )
                if big and (imblearn or y[j] != target):
                    remove.add(j)
    kept = np.array(sorted(set(range(len(y))) - remove))
    if not imblearn:  # a class the rule would empty keeps its rows
        kept = np.union1d(kept, [i for i in range(len(y)) if not np.isin(y[i], y[kept])])
    return kept.tolist()


@pytest.mark.parametrize("metric", ["euclidean", "manhattan"])
@pytest.mark.parametrize("k", [3, 5])
@pytest.mark.parametrize("threshold", [0.5, 2.0])
@pytest.mark.parametrize("data", [_imbalanced, grid])
def test_ncr_removes_a1_and_a2_as_laurikkala_defines_them(data, threshold, k, metric):
    for seed in range(3):
        X, y = data(seed)
        D = l1(X) if metric == "manhattan" else sq(X)
        ncr = NCR(k=k, threshold=threshold, metric=metric).fit(X, y)
        assert ncr.sample_indices_.tolist() == _brute_ncr(y, D, k, "nearest", threshold)
        assert ncr.target_ == np.argmin(np.bincount(y))


def test_ncr_removes_more_than_enn_on_the_other_classes_and_nothing_of_c():
    X, y = _imbalanced(0, n=400)
    ncr = NCR().fit(X, y)
    removed = np.setdiff1d(np.arange(len(y)), ncr.sample_indices_)
    assert removed.size > 0 and (y[removed] != ncr.target_).all()
    assert np.bincount(y[ncr.sample_indices_])[ncr.target_] == np.bincount(y)[ncr.target_]


def test_imbalanced_learns_ncr_is_the_rule_its_three_differences_make():
    """imbalanced-learn's NeighbourhoodCleaningRule(sampling_strategy="all") keeps
    exactly the rows of the paper's rule with NCR's three documented differences, and
    other rows than knnx's NCR."""
    from imblearn.under_sampling import NeighbourhoodCleaningRule

    differs = 0
    for seed in range(4):
        X, y = _imbalanced(seed, n=300)
        theirs = NeighbourhoodCleaningRule(sampling_strategy="all")
        theirs.fit_resample(X, y)
        assert np.sort(theirs.sample_indices_).tolist() == _brute_ncr(
            y, sq(X), 3, "lowest", 0.5, imblearn=True
        )
        differs += np.sort(theirs.sample_indices_).tolist() != NCR().fit(X, y).sample_indices_.tolist()
    assert differs == 4


def _brute_oss(y, D, seed):
    """OSS from its docstring, with its draws, in plain Python."""
    rng = np.random.default_rng(seed)
    counts = np.bincount(y)
    target = int(np.argmin(counts))
    starts = [int(np.flatnonzero(y == c)[rng.integers(counts[c])]) for c in range(len(counts)) if c != target]
    start = sorted(set(np.flatnonzero(y == target).tolist()) | set(starts))
    store = list(start)
    for i in range(len(y)):
        if i not in start and y[min(start, key=lambda j, i=i: (D[i, j], j))] != y[i]:
            store.append(i)
    store.sort()
    nearest = {i: min((j for j in store if j != i), key=lambda j, i=i: (D[i, j], j)) for i in store}
    return [i for i in store if not (nearest[nearest[i]] == i and y[nearest[i]] != y[i] and y[i] != target)]


@pytest.mark.parametrize("metric", ["euclidean", "manhattan"])
@pytest.mark.parametrize("data", [_imbalanced, grid, blobs])
def test_oss_is_kubat_and_matwins_rule(data, metric):
    for seed in range(3):
        X, y = data(seed)
        D = l1(X) if metric == "manhattan" else sq(X)
        assert OSS(random_state=seed, metric=metric).fit(X, y).sample_indices_.tolist() == _brute_oss(
            y, D, seed
        )


def test_oss_keeps_imbalanced_learns_rows_from_the_same_start_row():
    """Two classes, no ties: from the start row imbalanced-learn draws, knnx's rule keeps
    its rows (a different seed-to-row draw is the only difference)."""
    from imblearn.under_sampling import OneSidedSelection

    for seed in range(4):
        rng = np.random.default_rng(seed)
        y = np.repeat([0, 1], [60, 240])
        X = rng.normal(size=(300, 3)) + y[:, None] * 1.0
        theirs = OneSidedSelection(random_state=seed)
        theirs.fit_resample(X, y)
        start = np.flatnonzero(y == 1)[np.random.RandomState(seed).randint(0, 240, size=1)]
        metric = OSS().fit(X, y).metric_
        ours = one_sided(X, y, metric, 0, start.astype(np.intp))
        assert ours.tolist() == np.sort(theirs.sample_indices_).tolist()
        assert 60 < len(ours) < 300


def _brute_multiedit(y, D, n_blocks, patience, seed):
    """Multiedit from its docstring, with its draws, in plain Python."""
    rng = np.random.default_rng(seed)
    rows, quiet, rounds = np.arange(len(y)), 0, 0
    while quiet < patience and len(rows) >= n_blocks:
        rounds += 1
        blocks = np.array_split(rows[rng.permutation(len(rows))], n_blocks)
        wrong = []
        for i, block in enumerate(blocks):
            ref = blocks[(i + 1) % n_blocks]
            wrong += [q for q in block if y[min(ref, key=lambda j, q=q: (D[q, j], j))] != y[q]]
        quiet = quiet + 1 if not wrong else 0
        rows = np.setdiff1d(rows, wrong)
    kept = set(rows.tolist())
    kept |= {i for i in range(len(y)) if y[i] not in y[list(kept)]}
    return sorted(kept), rounds


@pytest.mark.parametrize("metric", ["euclidean", "manhattan"])
@pytest.mark.parametrize(("n_blocks", "patience"), [(3, 2), (2, 1), (5, 3)])
@pytest.mark.parametrize("data", [blobs, grid])
def test_multiedit_is_devijver_and_kittlers_rule(data, n_blocks, patience, metric):
    for seed in range(3):
        X, y = data(seed)
        D = l1(X) if metric == "manhattan" else sq(X)
        me = Multiedit(n_blocks=n_blocks, patience=patience, random_state=seed, metric=metric).fit(X, y)
        assert (me.sample_indices_.tolist(), me.n_rounds_) == _brute_multiedit(y, D, n_blocks, patience, seed)


@pytest.mark.parametrize("metric", ["hvdm", "heom", "gower"])
def test_the_rules_on_nominal_codes_and_missing_values(metric):
    """keel.crx as codes, 3 % of its cells missing: each rule keeps the rows of its
    plain-Python version on knnx's distances under the fitted metric."""
    ds = load_dataset({"name": "keel.crx", "categorical": "keep"})
    X, y, nominal = ds.X[:240].copy(), ds.y[:240], list(ds.nominal)
    X[np.random.default_rng(0).random(X.shape) < 0.03] = np.nan
    ncr = NCR(metric=metric, nominal=nominal).fit(X, y)
    D = distances(X, ncr.metric_)
    assert ncr.sample_indices_.tolist() == _brute_ncr(y, D, 3, "nearest", 0.5)
    oss = OSS(random_state=2, metric=metric, nominal=nominal).fit(X, y)
    assert oss.sample_indices_.tolist() == _brute_oss(y, D, 2)
    me = Multiedit(random_state=2, metric=metric, nominal=nominal).fit(X, y)
    assert me.sample_indices_.tolist() == _brute_multiedit(y, D, 3, 2, 2)[0]
    assert all(0 < len(s.sample_indices_) < len(y) for s in (ncr, oss, me))
