"""Voting among ordered neighbours: plurality or inverse-distance weighted."""

import numpy as np
from numba import njit, prange


@njit(parallel=True, cache=True)
def vote(neigh_ind, neigh_dist, y, n_classes, weighted, pred, proba):
    """Class scores of each query from its k neighbours, and the winning class.

    neigh_ind, neigh_dist : (m, k) neighbours ordered by (squared distance, index).
    y : (n_ref,) intp class codes. weighted : use weights 1 / distance (Euclidean);
        if some neighbours are at distance 0, only they vote, with weight 1 each.
    pred : (m,) intp output; proba : (m, n_classes) float64 output (scores / total).

    Tie rule: among classes sharing the top score, the class of the nearest
    neighbour (first in neighbour order) belonging to one of them wins.
    """
    m, k = neigh_ind.shape
    for i in prange(m):
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
                scores[c] += 1.0 / np.sqrt(neigh_dist[i, t])
        best = scores.max()
        winner = -1
        for t in range(k):
            c = y[neigh_ind[i, t]]
            if scores[c] == best:
                winner = c
                break
        pred[i] = winner
        total = scores.sum()
        for c in range(n_classes):
            proba[i, c] = scores[c] / total
