"""Voting among ordered neighbours: plurality or inverse-distance weighted."""

import numpy as np
from numba import njit

# Vote tie rules (the ``tie`` argument of :func:`vote`).
TIE_NEAREST = 0
TIE_LOWEST = 1
TIE_RANDOM = 2

# Callers vote on the calling thread below this many element operations, m (k + C)
# (:func:`knnx._kernels.launch`). ms parallel / serial (2 cores, one busy): m = 15,
# k = 5, C = 3: 0.046 / 0.007; 1,000 x (10 + 10): 0.31 / 0.30; 5,000 x 20: 1.19 / 1.48;
# 20,000 x 36: 6.1 / 6.8.
VOTE_PARALLEL_MIN_WORK = 50_000


@njit(nogil=True, cache=True)
def vote(lo, hi, neigh_ind, neigh_dist, y, n_classes, weighted, tie, draws, pred, proba):
    """Class scores of the queries lo .. hi - 1 from their k neighbours, and the winning
    class (:func:`knnx._kernels.launch` splits the queries over threads; each row is
    computed alone, so the outputs do not depend on the split).

    neigh_ind, neigh_dist : (m, k) neighbours ordered by (distance, index) and their
        distances (the metric's distances, not reduced ones: for Euclidean the square
        roots of the squared distances; read only when ``weighted``).
    y : (n_ref,) intp class codes. weighted : use weights 1 / distance; if some
        neighbours are at distance 0, only they vote, with weight 1 each.
    tie : rule among the classes sharing the top score (equal float64 scores):
        TIE_NEAREST (0): the class of the nearest neighbour (first in neighbour
        order) belonging to one of them; TIE_LOWEST (1): the lowest class code;
        TIE_RANDOM (2): the class at position floor(draws[i] * s) among the s tied
        classes in increasing code order (uniform if draws[i] is uniform on [0, 1)).
    draws : (m,) float64 in [0, 1), read only with TIE_RANDOM (may be empty otherwise).
    pred : (m,) intp output; proba : (m, n_classes) float64 output (scores / total).
    """
    for i in range(lo, hi):
        _vote_row(i, neigh_ind, neigh_dist, y, n_classes, weighted, tie, draws, pred, proba)


@njit(cache=True)
def _vote_row(i, neigh_ind, neigh_dist, y, n_classes, weighted, tie, draws, pred, proba):
    k = neigh_ind.shape[1]
    scores = np.zeros(n_classes)
    zero = False
    if weighted:
        for t in range(k):
            if neigh_dist[i, t] == 0.0:
                zero = True
                break
    for t in range(k):
        c = y[neigh_ind[i, t]]
        if not weighted:
            scores[c] += 1.0
        elif zero:
            if neigh_dist[i, t] == 0.0:
                scores[c] += 1.0
        else:
            scores[c] += 1.0 / neigh_dist[i, t]
    best = scores[0]
    for c in range(1, n_classes):  # loops, not numpy's max and sum: they compiled in 0.7 s
        best = max(best, scores[c])
    winner = -1
    if tie == TIE_NEAREST:
        for t in range(k):
            c = y[neigh_ind[i, t]]
            if scores[c] == best:
                winner = c
                break
    else:
        n_tied = 0
        for c in range(n_classes):
            if scores[c] == best:
                n_tied += 1
        pick = 0
        if tie == TIE_RANDOM:
            pick = min(int(np.floor(draws[i] * n_tied)), n_tied - 1)
        for c in range(n_classes):
            if scores[c] == best:
                if pick == 0:
                    winner = c
                    break
                pick -= 1
    pred[i] = winner
    total = 0.0
    for c in range(n_classes):  # numba's sum adds in this order too
        total += scores[c]
    for c in range(n_classes):
        proba[i, c] = scores[c] / total
