"""Kernels of the steady-state memetic algorithm SSMA (:class:`knnx.reduction.SSMA`).

They import nothing from knnx but their sibling kernels. A chromosome is a boolean
mask over the training rows; a row's nearest selected row is the first selected one
in its list of nearest other rows (``graph``, by (reduced distance, index): knnx's
leave-one-out graph), else, when none of them is selected, the nearest selected row
found by a scan (:func:`knnx._kernels.reduction.pair`, ties by index).
"""

import numpy as np
from numba import njit

from knnx._kernels.reduction import pair


@njit(cache=True)
def nearest_selected(i, mask, graph, code, X, power, kinds, scale, vd, vd_off, n_vals, start):
    """Row i's nearest selected other row, searched from position ``start`` of its list
    (-1 when none is selected)."""
    for t in range(start, graph.shape[1]):
        j = graph[i, t]
        if mask[j]:
            return j
    best, bd = -1, np.inf
    for j in range(X.shape[0]):  # none of its listed neighbours: a scan
        if mask[j] and j != i:
            d = pair(code, X, i, j, power, kinds, scale, vd, vd_off, n_vals)
            if d < bd:
                best, bd = j, d
    return best


@njit(cache=True)
def correct(mask, graph, code, X, y, power, kinds, scale, vd, vd_off, n_vals, nn):
    """Rows whose nearest selected other row is of their class; ``nn`` gets each row's."""
    right = 0
    for i in range(X.shape[0]):
        nn[i] = nearest_selected(i, mask, graph, code, X, power, kinds, scale, vd, vd_off, n_vals, np.intp(0))
        right += nn[i] >= 0 and y[nn[i]] == y[i]
    return right


@njit(cache=True)
def _position(graph, i, j):
    """The position of j in row i's list (its length when absent: searched by a scan)."""
    for t in range(graph.shape[1]):
        if graph[i, t] == j:
            return t
    return graph.shape[1]


@njit(cache=True)
def meme(
    mask, order, threshold, graph, code, X, y, n_classes, power, kinds, scale, vd, vd_off, n_vals, nn, moved
):
    """SSMA's local search on ``mask`` (in place): passes over the selected rows in the
    order ``order`` (a permutation of every row), each tentatively removed; the rows
    whose nearest selected row it was take their next one, and the removal stays when
    the rows it turns right minus those it turns wrong reach ``threshold``; the passes
    end with one that removes nothing; a class's last selected row is never removed.
    ``nn``: each row's nearest selected row on entry,
    kept up to date. Returns (rows classified correctly, evaluations spent: rows
    re-examined over n)."""
    n = X.shape[0]
    right = 0
    for i in range(n):
        right += nn[i] >= 0 and y[nn[i]] == y[i]
    spent = 0.0
    per_class = np.zeros(n_classes, dtype=np.intp)
    for i in range(n):
        if mask[i]:
            per_class[y[i]] += 1
    removed = True
    while removed:
        removed = False
        for g in order:
            if not mask[g] or per_class[y[g]] <= 1:
                continue
            mask[g] = False
            gain, count = 0, 0
            for u in range(n):
                if nn[u] == g:
                    after = nearest_selected(
                        u,
                        mask,
                        graph,
                        code,
                        X,
                        power,
                        kinds,
                        scale,
                        vd,
                        vd_off,
                        n_vals,
                        _position(graph, u, g),
                    )
                    moved[count] = after
                    count += 1
                    gain += (after >= 0 and y[after] == y[u]) - (y[g] == y[u])
            spent += count / n
            if gain >= threshold:
                count = 0
                for u in range(n):
                    if nn[u] == g:
                        nn[u] = moved[count]
                        count += 1
                right += gain
                per_class[y[g]] -= 1
                removed = True
            else:
                mask[g] = True
    return right, spent
