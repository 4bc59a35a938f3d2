"""Property tests (hypothesis): the kernel and the classifier against their oracles
on arbitrary small inputs, including duplicates and ties."""

import numpy as np
from conftest import brute_kneighbors
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from numpy.testing import assert_array_equal

from knnx import KNNClassifier, kneighbors
from knnx.neighbors import search as nb_module

# Small integer coordinates: distances are exact in float64 and ties are frequent.
points = st.integers(2, 40).flatmap(
    lambda n: st.integers(1, 4).flatmap(lambda d: arrays(np.float64, (n, d), elements=st.integers(-3, 3)))
)


@settings(max_examples=60, deadline=None)
@given(X=points, data=st.data())
def test_kneighbors_equals_brute_force_on_both_paths(X, data):
    k = data.draw(st.integers(1, X.shape[0] - 1))
    ref_dist, ref_ind = brute_kneighbors(X, k)
    for work in (10**12, 0):  # brute kernel, then the screened path
        old = nb_module._BRUTE_WORK
        nb_module._BRUTE_WORK = work
        try:
            dist, ind = kneighbors(X, k)
        finally:
            nb_module._BRUTE_WORK = old
        assert_array_equal(ind, ref_ind)
        assert_array_equal(dist, ref_dist)


@settings(max_examples=60, deadline=None)
@given(X=points, data=st.data())
def test_knn_vote_follows_the_tie_rule(X, data):
    n = X.shape[0]
    y = np.array(data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)))
    k = data.draw(st.integers(1, n))
    q = X[:1] + 0.5
    pred = KNNClassifier(k=k).fit(X, y).predict(q)[0]
    # Oracle: counts over the k nearest by (distance, index); among the top classes,
    # the class of the first neighbour in that order wins.
    _, ind = brute_kneighbors(X, k, q)
    labels = y[ind[0]]
    counts = np.bincount(labels, minlength=3)
    top = np.flatnonzero(counts == counts.max())
    expected = next(c for c in labels if c in top)
    assert pred == expected
