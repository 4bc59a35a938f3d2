"""Kernels of the hybrid prototype selections DROP3 and ICF (:mod:`knnx.reduction.hybrid`).

They import nothing from knnx but their sibling kernels and take what
:mod:`knnx._kernels.reduction` takes: the rows as the neighbour search reads them,
class codes 0..C-1 and the metric's fitted arrays. Every distance is the search's own
reduced distance (:func:`knnx._kernels.reduction.pair`, or the same bits vectorised
for code 0), so neighbours are ordered by (reduced distance, row index) as
:func:`knnx.kneighbors` orders them; no n x n matrix is made.
"""

import numpy as np
from numba import njit

from knnx._kernels.neighbors import _row_distances
from knnx._kernels.reduction import _offer, pair

TIE_NEAREST = 0
TIE_LOWEST = 1


@njit(cache=True)
def _distances_from(a, code, X, XT, power, kinds, scale, vd, vd_off, n_vals, D):
    """D[j] = the reduced distance from row a to row j of X, for every j."""
    if code == 0:
        _row_distances(X, a, XT, D)
    else:
        for j in range(X.shape[0]):
            D[j] = pair(code, X, a, j, power, kinds, scale, vd, vd_off, n_vals)


@njit(cache=True)
def icf_counts(code, X, XT, y, power, kinds, scale, vd, vd_off, n_vals, reach, cover, D):
    """Brighton & Mellish's counts on the rows of X: row a's local set is the rows of
    its class (a itself excluded) strictly nearer to a than a's nearest row of another
    class (every row of its class when there is none); ``reach[a]`` = the size of a's
    local set, ``cover[j]`` = the number of rows whose local set holds j."""
    n = X.shape[0]
    reach[:] = 0
    cover[:] = 0
    for a in range(n):
        _distances_from(a, code, X, XT, power, kinds, scale, vd, vd_off, n_vals, D)
        enemy = np.inf
        for j in range(n):
            if y[j] != y[a] and D[j] < enemy:
                enemy = D[j]
        for j in range(n):
            if j != a and y[j] == y[a] and D[j] < enemy:
                reach[a] += 1
                cover[j] += 1


@njit(cache=True)
def drop_lists(in_s, code, X, XT, y, power, kinds, scale, vd, vd_off, n_vals, top_d, top_i, enemy, D):
    """Each row's k + 1 nearest other rows among the rows of S (``in_s``), sorted by
    (distance, index), -1 past the end (``top_d``/``top_i``, n x (k + 1), filled with
    inf/-1 on entry); ``enemy[a]``: a's distance to its nearest row of S of another
    class (inf when there is none)."""
    n = X.shape[0]
    for a in range(n):
        _distances_from(a, code, X, XT, power, kinds, scale, vd, vd_off, n_vals, D)
        ne = np.inf
        for j in range(n):
            if in_s[j] and j != a:
                _offer(top_d, top_i, a, D[j], j)
                if y[j] != y[a] and D[j] < ne:
                    ne = D[j]
        enemy[a] = ne


@njit(cache=True)
def _vote_without(a, top_i, y, n_classes, tie, skip, k, counts):
    """The class the first k rows of a's list other than ``skip`` vote for: the
    plurality, a tie to the class of the nearest of them (``tie`` 0) or the lowest class
    (1); -1 when none is left."""
    counts[:] = 0
    voters = np.empty(k, dtype=np.intp)  # their classes, nearest first
    n_voters = 0
    for t in range(top_i.shape[1]):
        j = top_i[a, t]
        if j < 0 or n_voters == k:
            break
        if j != skip:
            voters[n_voters] = y[j]
            counts[y[j]] += 1
            n_voters += 1
    if n_voters == 0:
        return -1
    best = counts.max()
    for t in range(n_classes if tie == TIE_LOWEST else n_voters):
        c = t if tie == TIE_LOWEST else voters[t]
        if counts[c] == best:
            return c
    return -1


@njit(cache=True)
def _replace(a, p, in_s, code, X, XT, power, kinds, scale, vd, vd_off, n_vals, top_d, top_i, D):
    """Row p has left S: it leaves a's list, and the nearest row of S after a's last
    (by (distance, index); a itself excluded) takes the free place at the end."""
    m = top_i.shape[1]
    last_d, last_i = top_d[a, m - 1], top_i[a, m - 1]
    t = 0
    while top_i[a, t] != p:
        t += 1
    while t < m - 1:
        top_d[a, t] = top_d[a, t + 1]
        top_i[a, t] = top_i[a, t + 1]
        t += 1
    top_d[a, m - 1] = np.inf
    top_i[a, m - 1] = -1
    if last_i < 0:  # the list was not full: S has no other row
        return
    _distances_from(a, code, X, XT, power, kinds, scale, vd, vd_off, n_vals, D)
    for j in range(X.shape[0]):
        if in_s[j] and j != a and (D[j] > last_d or (D[j] == last_d and j > last_i)):
            _offer(top_d, top_i, a, D[j], j)


@njit(cache=True)
def drop_pass(
    order, in_s, code, X, XT, y, n_classes, tie, power, kinds, scale, vd, vd_off, n_vals, top_d, top_i
):
    """Wilson & Martinez's removal pass: each row p of ``order`` (all in S) leaves S when
    at least as many of its associates (the rows, of every row given, whose list holds
    p) are classified correctly by their k nearest without p as with it; the lists of
    its associates are then refilled from S. Returns the number of rows removed."""
    n = X.shape[0]
    k = top_i.shape[1] - 1
    counts = np.zeros(n_classes, dtype=np.intp)
    assoc = np.empty(n, dtype=np.intp)
    D = np.empty(n)
    removed = 0
    for p in order:
        na = 0
        for a in range(n):
            for t in range(k + 1):
                if top_i[a, t] == p:
                    assoc[na] = a
                    na += 1
                    break
        with_p = 0
        without_p = 0
        for s in range(na):
            a = assoc[s]
            with_p += _vote_without(a, top_i, y, n_classes, tie, np.intp(-1), k, counts) == y[a]
            without_p += _vote_without(a, top_i, y, n_classes, tie, p, k, counts) == y[a]
        if without_p >= with_p:
            in_s[p] = False
            removed += 1
            for s in range(na):
                _replace(
                    assoc[s], p, in_s, code, X, XT, power, kinds, scale, vd, vd_off, n_vals, top_d, top_i, D
                )
    return removed


@njit(cache=True)
def hit_miss(code, X, XT, y, n_classes, power, kinds, scale, vd, vd_off, n_vals, hit, miss, D):
    """Marchiori's hit-miss network on the rows of X: each row points to its nearest
    other row of every class (ties by index); ``hit[j]``/``miss[j]``: the rows pointing
    to j from its own class / from another."""
    n = X.shape[0]
    hit[:] = 0
    miss[:] = 0
    nearest = np.empty(n_classes, dtype=np.intp)
    best = np.empty(n_classes)
    for a in range(n):
        _distances_from(a, code, X, XT, power, kinds, scale, vd, vd_off, n_vals, D)
        nearest[:] = -1
        best[:] = np.inf
        for j in range(n):
            c = y[j]
            if j != a and (nearest[c] < 0 or D[j] < best[c]):
                nearest[c], best[c] = j, D[j]
        for c in range(n_classes):
            if nearest[c] >= 0:
                if c == y[a]:
                    hit[nearest[c]] += 1
                else:
                    miss[nearest[c]] += 1


@njit(cache=True)
def nearest_member_right(in_s, code, X, XT, y, power, kinds, scale, vd, vd_off, n_vals, D):
    """The rows (all of X) whose nearest other row of S (``in_s``; ties by index) is of
    their class."""
    right = 0
    for a in range(X.shape[0]):
        _distances_from(a, code, X, XT, power, kinds, scale, vd, vd_off, n_vals, D)
        best, bd = -1, np.inf
        for j in range(X.shape[0]):
            if in_s[j] and j != a and D[j] < bd:
                best, bd = j, D[j]
        right += best >= 0 and y[best] == y[a]
    return right
