"""Skalak's RMHC (knnx.reduction.RMHC) against a plain-Python version written from its
docstring: every mutation evaluated from scratch (each row's k nearest selected rows,
itself excluded, recomputed over the whole subset), the same draws, the same
acceptance; under NumPy's distances and under knnx's own for the mixed metrics."""

import numpy as np
import pytest
from reduction_oracles import blobs, distances, grid, l1, sq, vote

from knnx.datasets import load_dataset
from knnx.reduction import RMHC, SSMA
from knnx.reduction.generation import allocate


def _brute_rmhc(y, D, k, fraction, n_iter, tie, seed):
    n, n_classes = len(y), y.max() + 1
    counts = np.bincount(y, minlength=n_classes)
    rng = np.random.default_rng(seed)
    shares = allocate(counts, max(n_classes, int(round(fraction * n))))
    chosen = list(
        np.concatenate(
            [
                np.flatnonzero(y == c)[rng.choice(counts[c], shares[c], replace=False)]
                for c in range(n_classes)
            ]
        )
    )
    others = list(np.setdiff1d(np.arange(n), chosen))
    draws_a, draws_b = rng.integers(len(chosen), size=n_iter), rng.integers(len(others), size=n_iter)

    def correct(members):
        right = 0
        for i in range(n):
            near = sorted((j for j in members if j != i), key=lambda j: (D[i, j], j))[:k]
            right += bool(near) and vote(y[near], n_classes, tie) == y[i]
        return right

    right, kept = correct(chosen), 0
    for a, b in zip(draws_a, draws_b, strict=True):
        p, q = chosen[a], others[b]
        if y[p] != y[q] and sum(y[j] == y[p] for j in chosen) == 1:
            continue
        trial = chosen.copy()
        trial[a] = q
        new = correct(trial)
        if new >= right:
            chosen, right, kept = trial, new, kept + 1
            others[b] = p
    return sorted(int(j) for j in chosen), right, kept


@pytest.mark.parametrize("metric", ["euclidean", "manhattan"])
@pytest.mark.parametrize(
    ("k", "fraction", "tie"), [(1, 0.1, "nearest"), (3, 0.2, "nearest"), (2, 0.15, "lowest")]
)
@pytest.mark.parametrize("data", [blobs, grid])
def test_rmhc_is_skalaks_hill_climbing(data, k, fraction, tie, metric):
    for seed in range(2):
        X, y = data(seed, n=70)
        D = l1(X) if metric == "manhattan" else sq(X)
        rmhc = RMHC(k=k, fraction=fraction, n_iter=150, tie=tie, random_state=seed, metric=metric).fit(X, y)
        expected = _brute_rmhc(y, D, k, fraction, 150, tie, seed)
        assert (rmhc.sample_indices_.tolist(), rmhc.n_correct_, rmhc.n_kept_) == expected
        assert 0 < rmhc.n_kept_ < 150


@pytest.mark.parametrize("metric", ["hvdm", "gower"])
def test_rmhc_on_nominal_codes_and_missing_values(metric):
    ds = load_dataset({"name": "keel.crx", "categorical": "keep"})
    X, y, nominal = ds.X[:80].copy(), ds.y[:80], list(ds.nominal)
    X[np.random.default_rng(2).random(X.shape) < 0.03] = np.nan
    rmhc = RMHC(n_iter=120, random_state=1, metric=metric, nominal=nominal).fit(X, y)
    D = distances(X, rmhc.metric_)
    assert (rmhc.sample_indices_.tolist(), rmhc.n_correct_, rmhc.n_kept_) == _brute_rmhc(
        y, D, 1, 0.1, 120, "nearest", 1
    )


def test_rmhc_climbs_and_keeps_every_class():
    """On three overlapping classes the subset ends classifying more training rows than
    it started with, its size fixed, every class kept."""
    X, y = blobs(0, n=300, noise=1.3)
    start = RMHC(n_iter=0, random_state=0).fit(X, y)
    end = RMHC(n_iter=3000, random_state=0).fit(X, y)
    assert end.n_correct_ > start.n_correct_ + 20
    assert len(end.sample_indices_) == len(start.sample_indices_) == 30
    assert set(y[end.sample_indices_]) == {0, 1, 2}


def _brute_ssma(y, D, population, max_evaluations, alpha, p_mutation, p_meme, seed):
    """SSMA from its docstring, in plain Python (each row's nearest selected row by a
    full search over the distances D)."""
    n = len(y)
    rng = np.random.default_rng(seed)

    def nearest(mask, i):
        chosen = [j for j in range(n) if mask[j] and j != i]
        return min(chosen, key=lambda j: (D[i, j], j)) if chosen else -1

    def fitness(right, size):
        return alpha * 100.0 * right / n + (1 - alpha) * 100.0 * (n - size) / n

    def evaluate(mask):
        nn = [nearest(mask, i) for i in range(n)]
        right = sum(j >= 0 and y[j] == y[i] for i, j in enumerate(nn))
        return fitness(right, mask.sum()), right, nn

    def repair(mask):
        for c in range(y.max() + 1):
            if not (mask & (y == c)).any():
                rows = np.flatnonzero(y == c)
                mask[rows[rng.integers(len(rows))]] = True

    def meme(mask, order, threshold, nn):
        right = sum(j >= 0 and y[j] == y[i] for i, j in enumerate(nn))
        spent, removed = 0.0, True
        while removed:
            removed = False
            for g in order:
                if not mask[g] or (mask & (y == y[g])).sum() <= 1:
                    continue
                mask[g] = False
                users = [u for u in range(n) if nn[u] == g]
                after = [nearest(mask, u) for u in users]
                gain = sum(
                    int(a >= 0 and y[a] == y[u]) - int(y[g] == y[u])
                    for u, a in zip(users, after, strict=True)
                )
                spent += len(users) / n
                if gain >= threshold:
                    for u, a in zip(users, after, strict=True):
                        nn[u] = a
                    right, removed = right + gain, True
                else:
                    mask[g] = True
        return right, spent

    pop = rng.random((population, n)) < 0.5
    for m in pop:
        repair(m)
    fit = np.array([evaluate(m)[0] for m in pop])
    evals, threshold, stalled, best_right, best_size = float(population), 0, [0, 0], None, None
    while evals < max_evaluations:
        parents = []
        for _ in range(2):
            a, b = rng.choice(population, 2, replace=False)
            parents.append(pop[a] if fit[a] >= fit[b] else pop[b])
        u = rng.random(n) < 0.5
        children = [np.where(u, parents[1], parents[0]), np.where(u, parents[0], parents[1])]
        for child in children:
            child ^= rng.random(n) < p_mutation
            repair(child)
        scores = []
        for child in children:
            score, _, nn = evaluate(child)
            evals += 1
            if rng.random() < (1.0 if score > fit.min() else p_meme):
                right, spent = meme(child, rng.permutation(n), threshold, nn)
                evals += spent
                score = fitness(right, child.sum())
            scores.append(score)
        worst = list(np.argsort(fit, kind="stable")[:2])
        pool = sorted(
            [(fit[w], 0, i, pop[w].copy()) for i, w in enumerate(worst)]
            + [(s, 1, i, c) for i, (c, s) in enumerate(zip(children, scores, strict=True))],
            key=lambda e: (-e[0], e[1], e[2]),
        )
        for w, entry in zip(worst, pool[:2], strict=True):
            pop[w], fit[w] = entry[3], entry[0]
        top = int(np.argmax(fit))
        _, right, _ = evaluate(pop[top])
        size = int(pop[top].sum())
        if best_right is not None:
            stalled = [
                stalled[0] + 1 if right <= best_right else 0,
                stalled[1] + 1 if size >= best_size else 0,
            ]
        best_right = right if best_right is None else max(best_right, right)
        best_size = size if best_size is None else min(best_size, size)
        if stalled[0] >= 10:
            threshold, stalled[0] = threshold + 1, 0
        if stalled[1] >= 10:
            threshold, stalled[1] = threshold - 1, 0
    top = int(np.argmax(fit))
    assert set(y[pop[top]]) == set(y)  # every class kept: the class rule never fires
    return np.flatnonzero(pop[top]).tolist(), float(fit[top]), evals, threshold


@pytest.mark.parametrize("metric", ["euclidean", "manhattan"])
@pytest.mark.parametrize(("population", "p_mutation", "p_meme"), [(6, 0.001, 0.0625), (8, 0.05, 0.5)])
@pytest.mark.parametrize("data", [blobs, grid])
def test_ssma_is_the_steady_state_memetic_algorithm(data, population, p_mutation, p_meme, metric):
    for seed in range(2):
        X, y = data(seed, n=60)
        D = l1(X) if metric == "manhattan" else sq(X)
        ssma = SSMA(population, 260, 0.5, p_mutation, p_meme, random_state=seed, metric=metric).fit(X, y)
        kept, fitness, evals, threshold = _brute_ssma(y, D, population, 260, 0.5, p_mutation, p_meme, seed)
        assert ssma.sample_indices_.tolist() == _every_class(kept, y)
        assert (ssma.fitness_, ssma.n_evaluations_, ssma.threshold_) == (fitness, evals, threshold)


def test_ssma_with_rows_beyond_its_neighbour_lists(monkeypatch):
    """Lists of 8 neighbours and a tiny subset: the scans find the nearest selected
    rows a full search finds."""
    import knnx.reduction.stochastic

    monkeypatch.setattr(knnx.reduction.stochastic, "GRAPH_WIDTH", 8)
    X, y = blobs(3, n=150)
    kept, fitness, evals, _ = _brute_ssma(y, sq(X), 4, 40, 0.9, 0.02, 1.0, 1)
    ssma = SSMA(4, 40, 0.9, 0.02, 1.0, random_state=1).fit(X, y)
    assert (ssma.sample_indices_.tolist(), ssma.fitness_, ssma.n_evaluations_) == (
        _every_class(kept, y),
        fitness,
        evals,
    )
    assert len(ssma.sample_indices_) < 20


def _every_class(kept, y):
    kept = set(kept)
    return sorted(kept | {i for i in range(len(y)) if y[i] not in {y[j] for j in kept}})
