"""Selection path of kneighbors (select_rows) against a naive NumPy oracle.

select_rows computes every float64 distance, keeps those under a threshold taken
from a strided sample (all of them if fewer than k pass), and bucket-sorts the kept
ones by (distance, index). The oracle is ``lexsort((index, distance))`` over all
references.
"""

import numpy as np
import pytest
from conftest import brute_kneighbors
from numpy.testing import assert_array_equal

from knnx import kneighbors
from knnx._kernels.neighbors import _select_kth, _sorted_candidates
from knnx.neighbors import search as nb_module


@pytest.fixture
def select(monkeypatch):
    """Force the selection path whatever n, d and k."""
    monkeypatch.setattr(nb_module, "_SELECT_FACTOR", 10**12)


def _check(X, k, queries=None):
    dist, ind = kneighbors(X, k, queries)
    ref_dist, ref_ind = brute_kneighbors(X, k, queries)
    assert_array_equal(ind, ref_ind)
    assert_array_equal(dist, ref_dist)
    return dist, ind


@pytest.mark.parametrize("n,d,k", [(60, 2, 1), (60, 2, 59), (300, 2, 7), (500, 3, 100), (700, 1, 250)])
def test_integer_grid_ties_are_ordered_by_index(select, n, d, k):
    # Integer coordinates: distances are exact in float64 (the oracle's sums equal
    # knnx's) and ties abound, inside buckets and across the threshold.
    X = np.random.default_rng(n + k).integers(0, 5, size=(n, d)).astype(float)
    _check(X, k)


def test_duplicates_stay_neighbours_and_self_is_excluded(select):
    rng = np.random.default_rng(1)
    X = rng.integers(0, 3, size=(400, 2)).astype(float)
    X[200:] = X[:200]  # every point twice
    dist, ind = _check(X, 30)
    assert not (ind == np.arange(400)[:, None]).any()
    assert (dist[:, 0] == 0.0).all()  # the duplicate comes first


def test_queries_mode_has_no_self_exclusion(select):
    rng = np.random.default_rng(2)
    X = rng.integers(0, 6, size=(900, 2)).astype(float)
    Q = np.vstack([X[:50], rng.integers(0, 6, size=(50, 2)).astype(float) + 0.5])
    dist, ind = _check(X, 120, Q)
    assert (dist[:50, 0] == 0.0).all()


def test_all_points_identical(select):
    # Every distance is 0: a zero threshold, one bucket, index order.
    X = np.ones((300, 3))
    dist, ind = _check(X, 40)
    assert_array_equal(ind[5], [j for j in range(41) if j != 5])


def test_sampled_threshold_too_low_keeps_every_reference(select):
    # The strided sample (every 2nd of 256 references) is a tight cluster of 128
    # points, the others are far: for a cluster row any sampled threshold keeps at
    # most the 127 other cluster points, fewer than k = 200, so every such row must
    # fall back to keeping every reference.
    rng = np.random.default_rng(3)
    X = rng.integers(50, 100, size=(256, 2)).astype(float)
    X[::2] = rng.integers(-3, 4, size=(128, 2)) * 2.0**-10
    _check(X, 200)


def test_subnormal_distances_and_large_buckets(select):
    # A 1-D cluster spaced by 1e-160 (squared distances ~1e-320, subnormal) and far
    # points: a cluster row keeps only cluster points, whose largest distance is
    # subnormal (no bucket scale: one bucket, merge-sorted), and far rows see the
    # whole cluster in their first bucket (more than 16: merge-sorted).
    X = np.concatenate([np.arange(60) * 1e-160, 5.0 + np.arange(40)])[:, None]
    dist, ind = _check(X, 10)
    assert 0.0 < dist[0, -1] < 2.2e-308
    _check(X, 80)


def test_clustered_references_fill_one_bucket(select):
    rng = np.random.default_rng(4)
    X = np.vstack([rng.integers(0, 3, size=(300, 2)) * 2.0**-20, rng.integers(100, 200, size=(100, 2))])
    _check(X.astype(float), 250)


def test_large_problem_takes_selection_by_default():
    # n=5000, d=2, k=249 (the leave-p-out benchmark's graph) is selected by the rule.
    assert nb_module._SELECT_FACTOR * 249 >= 5000 * 2
    rng = np.random.default_rng(5)
    X = rng.integers(0, 40, size=(5000, 2)).astype(float)
    dist, ind = kneighbors(X, 249)
    rows = np.arange(0, 5000, 97)
    D = ((X[rows, None, :] - X[None, :, :]) ** 2).sum(-1)
    D[np.arange(len(rows)), rows] = np.inf
    order = np.lexsort((np.broadcast_to(np.arange(5000), D.shape), D), axis=1)[:, :249]
    assert_array_equal(ind[rows], order)
    assert_array_equal(dist[rows], np.take_along_axis(D, order, 1))


def test_select_kth_matches_partition():
    rng = np.random.default_rng(6)
    for _ in range(300):
        n = int(rng.integers(1, 60))
        a = rng.integers(0, 6, size=n).astype(float)  # many duplicates
        a[rng.random(n) < 0.1] = np.inf
        kth = int(rng.integers(0, n))
        b = a.copy()
        assert _select_kth(b, n, kth) == np.sort(a)[kth]
        assert_array_equal(np.sort(b), np.sort(a))  # a permutation


def test_sorted_candidates_matches_lexsort():
    rng = np.random.default_rng(7)
    for _ in range(200):
        c = int(rng.integers(1, 200))
        k = int(rng.integers(1, c + 1))
        scale = 10.0 ** rng.integers(-5, 5)
        cd = rng.integers(0, 8, size=c) * scale * rng.choice([1.0, 1.3], size=c)
        ci = np.sort(rng.choice(1000, size=c, replace=False))
        sd, si = np.empty(c), np.empty(c, dtype=np.intp)
        _sorted_candidates(cd, ci, c, k, sd, si, np.empty(c + 1, dtype=np.intp))
        order = np.lexsort((ci, cd))[:k]
        assert_array_equal(si[:k], ci[order])
        assert_array_equal(sd[:k], cd[order])
