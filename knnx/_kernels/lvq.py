"""Kernel of Kohonen's learning vector quantisation (:mod:`knnx.reduction.generation`).

It imports nothing from knnx and takes validated input: the rows (C-contiguous
float64), their class codes, the codebook (prototypes, updated in place) and its
classes, and the presentation order. Distances are squared Euclidean summed in
feature order; the window compares Euclidean distances (their square roots).
"""

import numpy as np
from numba import njit

LVQ1 = 1
LVQ21 = 2
LVQ3 = 3


@njit(cache=True, inline="always")
def _move(P, m, X, i, rate):
    """Prototype m moves by ``rate`` times (x_i - m): towards x_i for rate > 0."""
    for f in range(P.shape[1]):
        P[m, f] += rate * (X[i, f] - P[m, f])


@njit(cache=True)
def lvq_train(P, plab, X, y, order, alpha0, variant, s, eps):
    """Kohonen's updates, one per entry of ``order`` (rows of X), at the learning rate
    alpha0 * (1 - t / T) for the t-th of T. The nearest and second nearest prototypes
    (ties by index): LVQ1 moves the nearest towards x if its class is x's, away from it
    otherwise; LVQ2.1 and LVQ3, when exactly one of the two is of x's class and x falls
    in the window (the smaller of d1/d2 and d2/d1 above ``s``), move that one towards x
    and the other away; LVQ3 also moves both towards x by ``eps`` times the rate when
    both are of x's class. Returns the number of updates made."""
    T = order.shape[0]
    M = P.shape[0]
    updates = 0
    for t in range(T):
        i = order[t]
        rate = alpha0 * (1.0 - t / T)
        b1, b2 = -1, -1
        d1, d2 = np.inf, np.inf
        for m in range(M):
            dist = 0.0
            for f in range(P.shape[1]):
                diff = X[i, f] - P[m, f]
                dist += diff * diff
            if dist < d1:
                b2, d2 = b1, d1
                b1, d1 = m, dist
            elif dist < d2:
                b2, d2 = m, dist
        right1 = plab[b1] == y[i]
        if variant == LVQ1:
            _move(P, b1, X, i, rate if right1 else -rate)
            updates += 1
            continue
        if b2 < 0:
            continue
        right2 = plab[b2] == y[i]
        if right1 != right2:
            near, far = np.sqrt(d1), np.sqrt(d2)  # near <= far
            if far == 0.0 or near / far > s:
                good, bad = (b1, b2) if right1 else (b2, b1)
                _move(P, good, X, i, rate)
                _move(P, bad, X, i, -rate)
                updates += 1
        elif variant == LVQ3 and right1:
            _move(P, b1, X, i, eps * rate)
            _move(P, b2, X, i, eps * rate)
            updates += 1
    return updates
