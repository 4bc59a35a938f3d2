"""Kernel of Aha, Kibler and Albert's IB3 (:class:`knnx.reduction.IB3`).

It imports nothing from knnx but its sibling kernels and takes what
:mod:`knnx._kernels.reduction` takes. Confidence intervals of proportions are Wilson's
score intervals, the form Aha et al. use.
"""

import numpy as np
from numba import njit

from knnx._kernels.reduction import pair


@njit(cache=True, inline="always")
def _bounds(hits, n, z):
    """Wilson's score interval of a proportion hits / n at the normal quantile z
    ((0, 1) when n is 0)."""
    if n == 0:
        return 0.0, 1.0
    p = hits / n
    z2 = z * z
    centre = p + z2 / (2.0 * n)
    half = z * np.sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n))
    den = 1.0 + z2 / n
    return (centre - half) / den, (centre + half) / den


@njit(cache=True, inline="always")
def _acceptable(j, y, used, right, seen, processed, z):
    """Accuracy significantly above its class's observed frequency."""
    low, _ = _bounds(right[j], used[j], z)
    _, high = _bounds(seen[y[j]], processed, z)
    return used[j] > 0 and low > high


@njit(cache=True, inline="always")
def _poor(j, y, used, right, seen, processed, z):
    """Accuracy significantly below its class's observed frequency."""
    _, high = _bounds(right[j], used[j], z)
    low, _ = _bounds(seen[y[j]], processed, z)
    return used[j] > 0 and high < low


@njit(cache=True)
def ib3(
    order, u, code, X, y, n_classes, z_accept, z_drop, power, kinds, scale, vd, vd_off, n_vals, used, right
):
    """IB3 over the rows in ``order``; ``u``: one uniform draw in [0, 1) per row (the
    rank of the random member taken when none is acceptable: floor(u * |CD|)).
    ``used``/``right`` (n, zeros on entry): each row's classification record. Returns
    the final concept description's acceptable rows, and every member of a class none
    of whose members is acceptable (a boolean mask over the rows)."""
    n = X.shape[0]
    cd = np.empty(n, dtype=np.intp)
    D = np.empty(n)
    seen = np.zeros(n_classes, dtype=np.intp)
    processed = 0
    size = 0
    for t in range(n):
        x = order[t]
        processed += 1
        seen[y[x]] += 1
        best, bd = -1, np.inf
        for s in range(size):
            j = cd[s]
            D[s] = pair(code, X, x, j, power, kinds, scale, vd, vd_off, n_vals)
            if _acceptable(j, y, used, right, seen, processed, z_accept):
                if D[s] < bd or (D[s] == bd and j < best):
                    best, bd = j, D[s]
        if size == 0:
            cd[0] = x
            size = 1
            continue
        if best < 0:  # none acceptable: the r-th most similar, by (distance, row index)
            by_row = np.argsort(cd[:size])
            ranked = by_row[np.argsort(D[:size][by_row], kind="mergesort")]
            pick = ranked[min(int(u[t] * size), size - 1)]
            best, bd = cd[pick], D[pick]
        add = y[x] != y[best]
        kept = 0
        for s in range(size):
            j = cd[s]
            stays = True
            if D[s] <= bd:
                used[j] += 1
                right[j] += y[j] == y[x]
                stays = not _poor(j, y, used, right, seen, processed, z_drop)
            if stays:
                cd[kept] = j
                kept += 1
        size = kept
        if add:
            cd[size] = x
            size += 1
    keep = np.zeros(n, dtype=np.bool_)
    accepted = np.zeros(n_classes, dtype=np.bool_)
    for s in range(size):
        if _acceptable(cd[s], y, used, right, seen, processed, z_accept):
            keep[cd[s]] = True
            accepted[y[cd[s]]] = True
    for s in range(size):  # a class without an acceptable member keeps its members
        if not accepted[y[cd[s]]]:
            keep[cd[s]] = True
    return keep
