"""Kernels of the prototype selection methods (:mod:`knnx.reduction`).

They import nothing from knnx but their sibling kernels and take validated input: the
rows as the neighbour search takes them (C-contiguous float64, mapped by the metric),
class codes 0..C-1. Every distance is the search's own reduced distance, computed by
the same operations in the same order (:func:`pair`), so a selection's nearest
neighbours are those :func:`knnx.kneighbors` finds, ties included: ordered by
(reduced distance, row index).
"""

import numpy as np
from numba import njit

from knnx._kernels.metric_terms import exact_pair
from knnx._kernels.neighbors import _row_distances, _sq_dist


@njit(cache=True, inline="always")
def pair(code, X, i, j, power, kinds, scale, vd, vd_off, n_vals):
    """The reduced distance between rows i and j of X: the squared Euclidean distance
    summed in feature order for code 0 (the Euclidean search path), else the metric
    kernel's (:func:`knnx._kernels.metric_terms.exact_pair`); bit for bit the search's."""
    if code == 0:
        return _sq_dist(X, i, X, j)
    return exact_pair(code, X, i, X, j, power, kinds, scale, vd, vd_off, n_vals)


@njit(cache=True, inline="always")
def _offer(top_d, top_i, i, d, j):
    """Put (d, j) among row i's kept nearest (sorted by (distance, index)) if it is
    nearer than the last of them; -1 marks an empty place."""
    k = top_d.shape[1]
    last = k - 1
    if top_i[i, last] >= 0 and (d > top_d[i, last] or (d == top_d[i, last] and j > top_i[i, last])):
        return
    t = last
    while t > 0 and (
        top_i[i, t - 1] < 0 or d < top_d[i, t - 1] or (d == top_d[i, t - 1] and j < top_i[i, t - 1])
    ):
        top_d[i, t] = top_d[i, t - 1]
        top_i[i, t] = top_i[i, t - 1]
        t -= 1
    top_d[i, t] = d
    top_i[i, t] = j


@njit(cache=True)
def store_add(p, in_store, code, X, XT, power, kinds, scale, vd, vd_off, n_vals, top_d, top_i, D):
    """Row p joins the store: the kept nearest store members of every row outside it
    are updated (a member is never asked again). ``XT``: X transposed, for code 0 (its
    distances to every row at once, vectorised, :func:`_row_distances`: the same bits
    as :func:`pair`); ``D``: scratch of n."""
    in_store[p] = True
    if code == 0:
        _row_distances(X, p, XT, D)
        for i in range(X.shape[0]):
            if not in_store[i]:
                _offer(top_d, top_i, i, D[i], p)
        return
    for i in range(X.shape[0]):
        if not in_store[i]:
            _offer(top_d, top_i, i, pair(code, X, i, p, power, kinds, scale, vd, vd_off, n_vals), p)


@njit(cache=True)
def store_vote(i, top_i, y, n_classes, counts):
    """The class row i's kept nearest store members vote for: the plurality, a tie
    going to the class of the nearest member among the tied classes."""
    counts[:] = 0
    best = 0
    for t in range(top_i.shape[1]):
        j = top_i[i, t]
        if j < 0:
            break
        counts[y[j]] += 1
        if counts[y[j]] > best:
            best = counts[y[j]]
    for t in range(top_i.shape[1]):
        j = top_i[i, t]
        if j < 0:
            break
        if counts[y[j]] == best:
            return y[j]
    return -1


@njit(cache=True)
def condense_pass(
    order, in_store, code, X, XT, y, n_classes, power, kinds, scale, vd, vd_off, n_vals, top_d, top_i
):
    """One pass of Hart's rule: each row of ``order`` not in the store, in that order,
    joins it when the store's vote misclassifies it (the store as it is then, the
    rows added earlier in the pass included). Returns the number of rows added."""
    counts = np.zeros(n_classes, dtype=np.intp)
    D = np.empty(X.shape[0])
    added = 0
    for i in order:
        if in_store[i]:
            continue
        if store_vote(i, top_i, y, n_classes, counts) != y[i]:
            store_add(i, in_store, code, X, XT, power, kinds, scale, vd, vd_off, n_vals, top_d, top_i, D)
            added += 1
    return added


@njit(cache=True)
def nearest_row(centre, rows, code, X, power, kinds, scale, vd, vd_off, n_vals):
    """The row of ``rows`` nearest to the point ``centre`` (a row of its own, shape (1,
    d)): smallest (reduced distance, row index)."""
    best, best_d = -1, np.inf
    for j in rows:
        if code == 0:
            d = _sq_dist(centre, np.intp(0), X, j)
        else:
            d = exact_pair(code, centre, np.intp(0), X, j, power, kinds, scale, vd, vd_off, n_vals)
        if best < 0 or d < best_d or (d == best_d and j < best):
            best, best_d = j, d
    return best


@njit(cache=True)
def fcnn_round(
    delta, in_store, code, X, XT, y, n_classes, power, kinds, scale, vd, vd_off, n_vals, top_d, top_i, rep
):
    """One round of FCNN: the rows of ``delta`` join the store; then each row outside it
    that its k nearest store members misvote (a tie: the nearest member's class among
    the tied) is offered to each of those members as its representative, a member
    keeping the nearest row offered (ties: the lowest row index, rows being visited in
    increasing order). ``rep``: out, -1 where a member has none."""
    D = np.empty(X.shape[0])
    for p in delta:
        store_add(p, in_store, code, X, XT, power, kinds, scale, vd, vd_off, n_vals, top_d, top_i, D)
    rep[:] = -1
    rep_d = np.full(X.shape[0], np.inf)
    counts = np.zeros(n_classes, dtype=np.intp)
    for q in range(X.shape[0]):
        if in_store[q] or store_vote(q, top_i, y, n_classes, counts) == y[q]:
            continue
        for t in range(top_i.shape[1]):
            p = top_i[q, t]
            if p < 0:
                break
            if rep[p] < 0 or top_d[q, t] < rep_d[p]:
                rep[p] = q
                rep_d[p] = top_d[q, t]


@njit(cache=True)
def reduce_store(in_store, members, nearest, code, X, y, power, kinds, scale, vd, vd_off, n_vals):
    """Gates' reduction of a store (``in_store``; ``members``: its rows, increasing):
    each member in turn leaves it when every row whose nearest member it is and which
    it classifies correctly (the same class) finds its nearest remaining member in its
    own class. ``nearest``: each row's nearest member by (reduced distance, row index),
    updated as members leave."""
    n = X.shape[0]
    head = np.full(n, -1, dtype=np.intp)
    nxt = np.full(n, -1, dtype=np.intp)
    for i in range(n):  # the rows of each member, as linked lists
        nxt[i] = head[nearest[i]]
        head[nearest[i]] = i
    rows = np.empty(n, dtype=np.intp)
    new = np.empty(n, dtype=np.intp)
    for x in members:
        count, ok = 0, True
        i = head[x]
        while i >= 0:
            best, best_d = -1, np.inf
            for j in members:
                if in_store[j] and j != x:
                    d = pair(code, X, i, j, power, kinds, scale, vd, vd_off, n_vals)
                    if best < 0 or d < best_d or (d == best_d and j < best):
                        best, best_d = j, d
            if y[x] == y[i] and (best < 0 or y[best] != y[i]):
                ok = False
                break
            rows[count] = i
            new[count] = best
            count += 1
            i = nxt[i]
        if not ok:
            continue
        in_store[x] = False
        for t in range(count):
            i, b = rows[t], new[t]
            nearest[i] = b
            nxt[i] = head[b]
            head[b] = i
        head[x] = -1
