"""GNNB*'s exact incremental keys give the from-scratch answer.

The chooser keeps every S_j = sum over i in R(j) of w_i y_ic exactly (two doubles,
moved weights added as exact differences) and rounds its keys from it; these tests hold
it to exact rational arithmetic (``fractions.Fraction``) and ``math.fsum`` on weights of
wildly different magnitudes (where the two doubles run out and the sum is taken afresh),
and a whole GNNB* fit, bit for bit, to a plain-Python one that recomputes every key from
scratch at every step, on data full of exact ties.
"""

import math
from fractions import Fraction

import numpy as np
import pytest

from knnx import GNNBClassifier, kneighbors
from knnx._kernels import gnnb as G
from knnx._kernels import leveraged as L
from knnx.estimators.gnnb import PHIS
from knnx.neighbors.search import reciprocal_neighbors


def _graph(X, k):
    _, nbr = kneighbors(X, k)
    rptr, rind = reciprocal_neighbors(nbr, len(X))
    return L.Graph(nbr, rptr, rind)


def _extreme_weights(rng, n):
    """Signed weights, some zero, a quarter spread over 2^-90 .. 2^90 (their sums often
    do not fit in two doubles), the rest within a factor 8."""
    spread = np.where(rng.random(n) < 0.25, rng.integers(-90, 91, n), rng.integers(-1, 2, n))
    w = rng.uniform(1, 2, n) * np.exp2(spread) * rng.choice([-1.0, 1.0], n)
    w[rng.random(n) < 0.1] = 0.0
    return w


def _terms(graph, sign, w, j):
    return [float(w[i] * sign[i]) for i in graph.reverse_ind[graph.reverse_ptr[j] : graph.reverse_ptr[j + 1]]]


def _key(factor, graph, terms, j):
    nj = graph.reverse_ptr[j + 1] - graph.reverse_ptr[j]
    return abs(factor * math.fsum(terms) / nj) if nj > 0 else 0.0


def test_accumulators_hold_the_exact_sums_and_keys_round_them():
    rng = np.random.default_rng(3)
    m, k = 60, 4
    X = rng.integers(0, 3, size=(m, 2)).astype(float)
    graph = _graph(X, k)
    sign = rng.choice([-1.0, 1.0], m)
    w = _extreme_weights(rng, m)
    factor = 0.7
    star = G._new_chooser(graph, sign, w, factor, False)
    key, acc, touched, buf, moved = star.key, star.acc, star.touched, star.buf, star.moved
    for j in range(m):
        assert key[j] == _key(factor, graph, _terms(graph, sign, w, j), j)
    n_exact = n_afresh = 0
    for t in range(400):
        j = int(rng.integers(m))
        p0, p1 = graph.reverse_ptr[j], graph.reverse_ptr[j + 1]
        moved[: p1 - p0] = w[graph.reverse_ind[p0:p1]]
        w[graph.reverse_ind[p0:p1]] = _extreme_weights(rng, p1 - p0)
        n = G._move_terms(graph.neighbors, graph.reverse_ind, sign, w, star, t, p0, p1)
        expect = list(dict.fromkeys(int(q) for i in graph.reverse_ind[p0:p1] for q in graph.neighbors[i]))
        assert touched[:n].tolist() == expect
        for jj in expect:
            terms = _terms(graph, sign, w, jj)
            hi, lo = acc[jj]
            if lo == lo:  # usable: exactly the sum of the current terms
                assert Fraction(hi) + Fraction(lo) == sum(map(Fraction, terms), Fraction(0))
                s = hi + lo
                n_exact += 1
            else:  # does not fit in two doubles: taken afresh, which resets the accumulator
                s = G.signed_sum(graph, sign, w, jj, buf, acc)
                n_afresh += 1
            assert s == math.fsum(terms)
    assert n_exact > 100 and n_afresh > 100  # both paths ran


def _naive_star(X, y, k, phi, eps, T):
    """GNNB* in plain Python: every key |factor fsum(eta_j) / n_j| recomputed at every
    step, the largest taken (ties to the smallest j), the step eta summed in increasing
    i. Returns chosen (T, n_trained), alpha and weights (m, n_trained)."""
    m = len(y)
    graph = _graph(X, k)
    R = [graph.reverse_ind[graph.reverse_ptr[j] : graph.reverse_ptr[j + 1]].tolist() for j in range(m)]
    code = PHIS[phi]
    factor = 2 * (1 - eps) / G.h_star(code)
    classes = [1] if len(np.unique(y)) == 2 else sorted(np.unique(y))
    chosen, alpha, weights = [], [], []
    for cls in classes:
        s = [1.0 if v == cls else -1.0 for v in y]
        w = [0.5 / G.z_norm(code)] * m
        a = [0.0] * m
        picks = []
        for _ in range(T):
            keys = [_key(factor, graph, [w[i] * s[i] * s[j] for i in R[j]], j) for j in range(m)]
            j = keys.index(max(keys))
            picks.append(j)
            e = 0.0
            for i in R[j]:
                e += w[i] * s[i] * s[j]
            d = factor * e / len(R[j]) if R[j] else 0.0
            if d != 0.0:
                a[j] += d
                for i in R[j]:
                    w[i] = G.weight_update(code, w[i], d * s[i] * s[j])
        chosen.append(picks)
        alpha.append(a)
        weights.append(w)
    return np.array(chosen).T, np.array(alpha).T, np.array(weights).T


@pytest.mark.parametrize("phi", list(PHIS))
@pytest.mark.parametrize(("C", "k", "seed"), [(2, 1, 0), (3, 3, 1), (4, 5, 2)])
def test_largest_delta_fit_equals_the_from_scratch_chooser_bit_for_bit(phi, C, k, seed):
    """Integer features in {0, 1, 2}: duplicate rows and many exactly tied keys."""
    rng = np.random.default_rng(seed)
    m = 48
    X = rng.integers(0, 3, size=(m, 3)).astype(float)
    y = rng.integers(0, C, m)
    T = 3 * m
    g = GNNBClassifier(k=k, phi=phi, chooser="largest_delta", n_iter=T).fit(X, y)
    chosen, alpha, weights = _naive_star(X, y, k, phi, 0.5, T)
    cols = [1] if C == 2 else list(range(C))
    np.testing.assert_array_equal(g.alpha_[0][:, cols], alpha)  # exact, not approximate
    np.testing.assert_array_equal(g.weights_[0][:, cols], weights)
    tc = np.array(cols, dtype=np.intp)
    schedule = L.Schedule(T, False, np.arange(m, dtype=np.intp), np.array([], dtype=np.intp))
    out = G.gnnb_fit(
        _graph(X, k), y.astype(np.intp), C, tc, schedule, PHIS[phi], 0.5, np.arange(C, dtype=np.intp)
    )
    np.testing.assert_array_equal(out[4], chosen)
    assert len(np.unique(chosen)) < chosen.size  # examples come back, ties were broken
