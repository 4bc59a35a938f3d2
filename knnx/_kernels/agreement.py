"""Vote shares of the leave-p-out committee of kNN classifiers at new points.

The committee (Celisse & Mary-Huard 2011, Sec. 4.2) holds one kNN classifier per
(n - p)-subset of the n training points. For a query x outside the training set,
let V be the position, in x's neighbour order over all n training points, of its
k-th neighbour within a member's training subset. A member is a uniform random
(n - p)-subset, so

    P(V = k + q) = C(k + q - 1, q) C(n - k - q, p - q) / C(n, p),   q = 0 .. p,

which is the held-out law of :func:`knnx._kernels.lpo.rank_probabilities` with
(n + 1, p + 1) in place of (n, p): x plays the role of a held-out point with the
n training points as its "others" and p of them removed. Given V = j the k voters
are position j and the first j - 1 positions minus a uniform q-subset, exactly as
in the risk computation, so the share of class c is the probability that a
fictitious point of class c is classified correctly: ``p_correct_uniform`` with
t = c. A tie among s classes gives each of them 1/s, so the shares sum to one.
"""

import numpy as np
from numba import njit

from knnx._kernels.lpo import p_correct_uniform


@njit(nogil=True, cache=True)
def committee_shares(lo, hi, neigh_ind, y, n_classes, k, PV, LC, floor, out):
    """out[i, c] = fraction of the LpO committee voting c at query i, for the queries
    lo .. hi - 1 (:func:`knnx._kernels.launch` splits them over threads).

    neigh_ind : (m, k + p) neighbours of each query among the training points,
        ordered by (squared distance, index).
    y : (n,) intp class codes of the training points, 0 .. n_classes - 1.
    PV : (p + 1,) P(V = k + q), zero where below ``floor`` (skipped).
    LC : log-binomial table with at least k + p rows and p + 1 columns.
    """
    width = neigh_ind.shape[1]
    q_max = PV.shape[0] - 1
    for i in range(lo, hi):
        cum = np.zeros((width + 1, n_classes), dtype=np.intp)
        comp = np.empty(n_classes, dtype=np.intp)
        dp = np.empty((q_max + 1, n_classes + 1))
        ndp = np.empty((q_max + 1, n_classes + 1))
        for j in range(1, width + 1):
            for c in range(n_classes):
                cum[j, c] = cum[j - 1, c]
            cum[j, y[neigh_ind[i, j - 1]]] += 1
        for q in range(q_max + 1):
            w = PV[q]
            j = k + q
            if w == 0.0 or j > width:
                continue
            b = y[neigh_ind[i, j - 1]]
            for c in range(n_classes):
                out[i, c] += w * p_correct_uniform(cum[j - 1], c, b, q, LC, floor / w, comp, dp, ndp)
