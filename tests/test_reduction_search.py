"""Skalak's RMHC (knnx.reduction.RMHC) against a plain-Python version written from its
docstring: every mutation evaluated from scratch (each row's k nearest selected rows,
itself excluded, recomputed over the whole subset), the same draws, the same
acceptance; under NumPy's distances and under knnx's own for the mixed metrics."""

import numpy as np
import pytest
from reduction_oracles import blobs, distances, grid, l1, sq, vote

from knnx.datasets import load_dataset
from knnx.reduction import RMHC
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
