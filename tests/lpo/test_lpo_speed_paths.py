"""The table-based paths of knnx._kernels.lpo.lpo_uniform_sums.

For each held-out point and position j the kernel tabulates the law of the removals
from the point's class for every q at once (``_removal_rows``), sums a tail for two
classes, and for more classes runs one tie-weighted DP per removal count a for all
q (``_tie_weighted_dp``). Oracles: enumeration of every split (small n), exact
rational arithmetic (the helpers), and the term-by-term path through
``p_correct_uniform`` (``q_table_max=-1``) on larger problems.
"""

from fractions import Fraction
from itertools import product
from math import comb

import numba
import numpy as np
import pytest
from lpo_oracles import brute_lpo
from numpy.testing import assert_allclose, assert_array_equal

from knnx import kneighbors
from knnx._kernels import PARALLEL_LOCK
from knnx._kernels.lpo import (
    _removal_rows,
    _tie_weighted_dp,
    log_binomial_table,
    lpo_uniform_sums,
    rank_probabilities,
)

FLOOR = 1e-17


def kernel_risk(ind, y, p, k_max, q_table_max=600):
    """lpo_risk_from_graph with the kernel's path switch exposed."""
    n = ind.shape[0]
    width = k_max + p - 1
    ind = np.ascontiguousarray(ind[:, :width], dtype=np.intp)
    y = np.ascontiguousarray(y, dtype=np.intp)
    PV = rank_probabilities(n, p, k_max, p - 1, FLOOR)
    used = np.flatnonzero(PV.any(axis=0))
    q_max = int(used[-1]) if used.size else 0
    PV = np.ascontiguousarray(PV[:, : q_max + 1])
    LC = log_binomial_table(width, q_max)
    with PARALLEL_LOCK:
        sums = lpo_uniform_sums(ind, y, int(y.max()) + 1, p, k_max, PV, LC, FLOOR, q_table_max)
    total = np.zeros(k_max)
    for row in sums:
        total += row
    return total / n


def _check_enumeration(X, y, p, k_max):
    _, ind = kneighbors(X, k_max + p - 1)
    assert_allclose(kernel_risk(ind, y, p, k_max), brute_lpo(X, y, p, k_max), rtol=0, atol=1e-12)


@pytest.mark.parametrize("share", [0.15, 0.5, 0.85])
def test_two_classes_against_enumeration(share):
    # Unbalanced labels make one side of the tail much shorter for most points:
    # losses summed over the other class's removals, wins over t's, or neither
    # needed (t always or never wins at a position).
    rng = np.random.default_rng(int(100 * share))
    for _ in range(10):
        n = int(rng.integers(5, 11))
        p = int(rng.integers(1, min(4, n - 1) + 1))
        X = rng.integers(0, 4, size=(n, 2)).astype(float)
        y = (rng.random(n) < share).astype(int)
        y[:2] = [0, 1]
        _check_enumeration(X, y, p, n - p)


@pytest.mark.parametrize("n_classes", [3, 4, 5])
def test_several_classes_against_enumeration(n_classes):
    # A dominant class (t far ahead: the law of the other classes' removals is
    # tabulated), balanced classes (several competitive classes, ties) and
    # duplicated points.
    rng = np.random.default_rng(n_classes)
    for trial in range(10):
        n = int(rng.integers(n_classes + 2, 11))
        p = int(rng.integers(1, min(4, n - 1) + 1))
        X = rng.integers(0, 3, size=(n, 2)).astype(float)
        if trial % 3 == 0:
            X[n // 2 :] = X[: n - n // 2]
        weights = np.ones(n_classes) if trial % 2 else np.r_[6.0, np.ones(n_classes - 1)]
        y = rng.choice(n_classes, size=n, p=weights / weights.sum())
        y[:n_classes] = np.arange(n_classes)
        _check_enumeration(X, y, p, n - p)


def test_absent_class_code_and_single_class():
    rng = np.random.default_rng(8)
    X = rng.integers(0, 4, size=(9, 2)).astype(float)
    y = np.array([0, 2, 3, 0, 2, 0, 3, 3, 0])  # code 1 is never used
    _check_enumeration(X, y, 3, 6)
    _, ind = kneighbors(X, 8)
    assert_array_equal(kernel_risk(ind, np.zeros(9, dtype=int), 3, 6), 0.0)


@pytest.mark.parametrize("q_table_max", [-1, 2])
@pytest.mark.parametrize("n_classes", [2, 3, 6])
def test_tables_agree_with_term_by_term(q_table_max, n_classes):
    # q_table_max=-1: every position through p_correct_uniform, term by term;
    # q_table_max=2: positions whose q exceed 2 term by term, the others by the tables.
    rng = np.random.default_rng(10 * n_classes + q_table_max)
    for trial in range(6):
        n = int(rng.integers(40, 160))
        p = int(rng.integers(1, n // 2))
        k_max = int(rng.integers(1, min(40, n - p) + 1))
        if trial % 2:
            X = rng.integers(0, 5, size=(n, 2)).astype(float)
        else:
            X = rng.standard_normal((n, 3))
        y = rng.choice(n_classes, size=n, p=rng.dirichlet(np.full(n_classes, 0.8)))
        y[:n_classes] = np.arange(n_classes)
        _, ind = kneighbors(X, k_max + p - 1)
        fast = kernel_risk(ind, y, p, k_max)
        slow = kernel_risk(ind, y, p, k_max, q_table_max)
        assert_allclose(fast, slow, rtol=0, atol=1e-12)


@pytest.mark.parametrize("n_classes", [2, 5])
def test_result_does_not_depend_on_thread_count(n_classes):
    rng = np.random.default_rng(11)
    X = rng.random((1100, 2))
    y = rng.integers(0, n_classes, size=1100)
    _, ind = kneighbors(X, 79)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = kernel_risk(ind, y, 40, 40)
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        many = kernel_risk(ind, y, 40, 40)
    finally:
        numba.set_num_threads(before)
    assert_array_equal(one, many)


def test_removal_rows_are_hypergeometric():
    # H[q, r] = C(Kr, r) C(J - Kr, q - r) / C(J, q) for q_lo <= q <= q_hi and r up to
    # min(q, Kr, r_hi); row q_lo from the log binomials, later ones by recurrence.
    fa = np.arange(40).astype(np.float64)
    LC = log_binomial_table(30, 30)
    cases = [(12, 5, 9, 9), (12, 5, 9, 2), (20, 0, 7, 7), (20, 20, 7, 3), (30, 13, 25, 30), (10, 8, 9, 9)]
    for J, Kr, q_hi, r_hi in cases:
        for q_lo in (0, 1, q_hi // 2, q_hi):
            H = np.full((q_hi + 1, q_hi + 2), np.nan)
            _removal_rows(H, J, Kr, q_lo, q_hi, r_hi, LC, fa)
            for q in range(q_lo, q_hi + 1):
                for r in range(min(q, Kr, r_hi) + 1):
                    exact = Fraction(comb(Kr, r) * comb(J - Kr, q - r), comb(J, q))
                    assert H[q, r] == pytest.approx(float(exact), rel=1e-13, abs=1e-300)


def _dp_oracle(K, L, F, s):
    """Exact sum over removals y_c >= L_c of the competitive classes and s - sum y
    of the pool: prod_c C(K_c, y_c) C(F, s - sum y) / (1 + #{y_c == L_c})."""
    total = Fraction(0)
    for ys in product(*(range(lc, kc + 1) for kc, lc in zip(K, L, strict=True))):
        rest = s - sum(ys)
        if rest < 0 or rest > F:
            continue
        ways = comb(F, rest)
        for kc, yc in zip(K, ys, strict=True):
            ways *= comb(kc, yc)
        ties = sum(yc == lc for yc, lc in zip(ys, L, strict=True))
        total += Fraction(ways, 1 + ties)
    return total


def test_tie_weighted_dp_against_exact_sums():
    # G[s] / (C(J - m_t, s) lam^s) is the tie-weighted probability that t wins when
    # s of the non-t positions are removed uniformly.
    rng = np.random.default_rng(12)
    for _ in range(150):
        nc = int(rng.integers(1, 5))
        K = rng.integers(0, 7, size=nc)
        L = np.array([int(rng.integers(0, k + 1)) for k in K])
        F = int(rng.integers(0, 6))
        rest = int(K.sum()) + F
        sumL = int(L.sum())
        if sumL > rest:
            continue
        S = rest
        s_lo = int(rng.integers(sumL, S + 1))
        s_hi = int(rng.integers(s_lo, S + 1))
        lam = float(np.exp(-log_binomial_table(rest, S)[rest, S] / S)) if S else 1.0
        C = nc + 1
        m = np.zeros(C, dtype=np.intp)
        m[1:] = K  # class 0 plays t (not used by the DP)
        comp = np.arange(1, C, dtype=np.intp)
        coef = np.zeros((C, S + 1))
        for c in range(1, C):
            for y in range(min(m[c], S) + 1):
                coef[c, y] = comb(int(m[c]), y) * lam**y
        inv_int = np.r_[0.0, 1.0 / np.arange(1, S + C + 4)]
        G = np.full(S + 1, np.nan)
        bufs = [np.zeros((C, S + 1)) for _ in range(2)] + [np.zeros(S + 1) for _ in range(2)]
        _tie_weighted_dp(G, nc, comp, L.astype(np.intp), m, F, lam, coef, s_lo, s_hi, sumL, *bufs, inv_int)
        for s in range(s_lo, s_hi + 1):
            exact = _dp_oracle(K.tolist(), L.tolist(), F, s) / comb(rest, s)
            assert G[s] / (comb(rest, s) * lam**s) == pytest.approx(float(exact), rel=1e-12, abs=1e-300)
