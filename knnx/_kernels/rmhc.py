"""Kernel of Skalak's random mutation hill climbing (:mod:`knnx.reduction.stochastic`).

It imports nothing from knnx but its sibling kernels and takes what
:mod:`knnx._kernels.reduction` takes. Each row keeps its k nearest selected rows other
than itself, sorted by (reduced distance, index); a mutation is evaluated on copies of
those lists and kept or dropped whole.
"""

import numpy as np
from numba import njit

from knnx._kernels.hybrid import _vote_without
from knnx._kernels.neighbors import _row_distances
from knnx._kernels.reduction import _offer, pair


@njit(cache=True)
def _distances_to(q, code, X, XT, power, kinds, scale, vd, vd_off, n_vals, D):
    """D[i] = the reduced distance from row i to row q (row i's view), for every i."""
    if code == 0:  # symmetric, bit for bit
        _row_distances(X, q, XT, D)
    else:
        for i in range(X.shape[0]):
            D[i] = pair(code, X, i, q, power, kinds, scale, vd, vd_off, n_vals)


@njit(cache=True)
def _rescan(i, members, code, X, power, kinds, scale, vd, vd_off, n_vals, top_d, top_i):
    """Row i's k nearest among ``members`` (itself excluded), from scratch."""
    top_d[i, :] = np.inf
    top_i[i, :] = -1
    for j in members:
        if j != i:
            _offer(top_d, top_i, i, pair(code, X, i, j, power, kinds, scale, vd, vd_off, n_vals), j)


@njit(cache=True)
def _correct(top_i, y, n_classes, tie, counts):
    """Rows whose k nearest selected rows vote for their class."""
    k = top_i.shape[1]
    right = 0
    for i in range(top_i.shape[0]):
        right += _vote_without(i, top_i, y, n_classes, tie, np.intp(-1), k, counts) == y[i]
    return right


@njit(cache=True)
def rmhc(
    chosen,
    others,
    draws_a,
    draws_b,
    code,
    X,
    XT,
    y,
    n_classes,
    tie,
    power,
    kinds,
    scale,
    vd,
    vd_off,
    n_vals,
    top_d,
    top_i,
):
    """Skalak's hill climbing from the selected rows ``chosen`` (the others: ``others``):
    mutation t swaps chosen[draws_a[t]] with others[draws_b[t]] and is kept when as many
    training rows or more are classified correctly by their k nearest selected rows
    (themselves excluded); a swap that would leave a class without a selected row is
    not made. ``top_d``/``top_i`` (n x k): every row's k nearest chosen rows on entry,
    kept up to date. Returns (rows classified correctly, mutations kept)."""
    n = X.shape[0]
    counts = np.zeros(n_classes, dtype=np.intp)
    per_class = np.zeros(n_classes, dtype=np.intp)
    for p in chosen:
        per_class[y[p]] += 1
    right = _correct(top_i, y, n_classes, tie, counts)
    D = np.empty(n)
    new_d, new_i = top_d.copy(), top_i.copy()
    kept = 0
    for t in range(draws_a.shape[0]):
        a, b = draws_a[t], draws_b[t]
        p, q = chosen[a], others[b]
        if y[p] != y[q] and per_class[y[p]] == 1:
            continue
        chosen[a] = q  # the selection after the swap, for the rescans
        _distances_to(q, code, X, XT, power, kinds, scale, vd, vd_off, n_vals, D)
        for i in range(n):
            new_d[i, :] = top_d[i, :]
            new_i[i, :] = top_i[i, :]
            holds_p = False
            for s in range(top_i.shape[1]):
                holds_p = holds_p or top_i[i, s] == p
            if holds_p:
                _rescan(i, chosen, code, X, power, kinds, scale, vd, vd_off, n_vals, new_d, new_i)
            elif i != q:
                _offer(new_d, new_i, i, D[i], q)
        right_new = _correct(new_i, y, n_classes, tie, counts)
        if right_new >= right:
            right = right_new
            others[b] = p
            per_class[y[p]] -= 1
            per_class[y[q]] += 1
            top_d[:, :] = new_d
            top_i[:, :] = new_i
            kept += 1
        else:
            chosen[a] = p
    return right, kept


@njit(cache=True)
def nearest_chosen(chosen, code, X, power, kinds, scale, vd, vd_off, n_vals, top_d, top_i):
    """Every row's k nearest rows of ``chosen`` (itself excluded), from scratch."""
    for i in range(X.shape[0]):
        _rescan(i, chosen, code, X, power, kinds, scale, vd, vd_off, n_vals, top_d, top_i)
