"""Class- and prototype-weighted dissimilarities (Paredes & Vidal 2006).

Prototype p (class c) carries the feature weights w_c (row c of W) and its own weight
v_p. The squared dissimilarity from a vector x to p is, exactly as computed here,

    Euclidean base:  D(x, p) = (v_p * v_p) * sum_j (w_cj x_j - w_cj x_pj)^2
    L1 base:         D(x, p) = (v_p * sum_j |w_cj x_j - w_cj x_pj|)^2

with each product w_cj x_j rounded once and the sum taken in feature order, so that a
NumPy oracle written the same way reproduces every value bit for bit. Prototypes are
scanned in blocks of one class (sorted by class, stable), the prototype side pre-scaled
and stored feature-major (``PT``, m x n) so that the inner loop runs over a block of
prototypes and vectorises without reassociating any sum.

Tie rule: of two prototypes at the same dissimilarity the smaller training index wins,
everywhere (same-class and different-class neighbours, k nearest).
"""

import numpy as np
from numba import njit

BLOCK = 128  # prototypes per inner block (one class)
QUERY_BLOCK = 32  # queries per unit of parallel work


@njit(cache=True, nogil=True)
def _block_values(q, PT, v, p0, p1, l1, acc):
    """acc[b] = D(q, prototype at sorted position p0 + b), b < p1 - p0; q is pre-scaled."""
    nb = p1 - p0
    for b in range(nb):
        acc[b] = 0.0
    for j in range(q.shape[0]):
        qj = q[j]
        row = PT[j, p0:p1]  # a slice, not an offset: lets LLVM vectorise the loop (2x here)
        if l1:
            for b in range(nb):
                acc[b] += abs(qj - row[b])
        else:
            for b in range(nb):
                t = qj - row[b]
                acc[b] += t * t
    for b in range(nb):
        vb = v[p0 + b]
        if l1:
            s = vb * acc[b]
            acc[b] = s * s
        else:
            acc[b] = (vb * vb) * acc[b]


@njit(cache=True, nogil=True)
def _scale_queries(Q, w, i0, q):
    """q[a] = w * Q[i0 + a] for the rows of one query block (one class's weights)."""
    for a in range(q.shape[0]):
        for j in range(q.shape[1]):
            q[a, j] = w[j] * Q[i0 + a, j]


@njit(cache=True)
def scaled_prototypes(X, y, W, order):
    """PT[j, s] = W[y[p], j] * X[p, j] for p = order[s] (m x n, feature-major)."""
    n, m = X.shape
    PT = np.empty((m, n))
    for s in range(n):
        p = order[s]
        c = y[p]
        for j in range(m):
            PT[j, s] = W[c, j] * X[p, j]
    return PT


@njit(cache=True, nogil=True)
def _same_diff_block(qb, X, y, W, PT, v_sorted, order, starts, l1, same, diff, d_same, d_diff):
    """Block ``qb`` of QUERY_BLOCK rows of :func:`same_diff_neighbors`."""
    n, m = X.shape
    n_classes = W.shape[0]
    i0 = qb * QUERY_BLOCK
    nq = min(n, i0 + QUERY_BLOCK) - i0
    q = np.empty((nq, m))
    acc = np.empty(BLOCK)
    bs = np.full(nq, np.inf)
    bd = np.full(nq, np.inf)
    js = np.full(nq, -1, dtype=np.intp)
    jd = np.full(nq, -1, dtype=np.intp)
    for c in range(n_classes):
        s0, s1 = starts[c], starts[c + 1]
        if s0 == s1:
            continue
        _scale_queries(X, W[c], i0, q)
        for p0 in range(s0, s1, BLOCK):
            p1 = min(p0 + BLOCK, s1)
            for a in range(nq):
                i = i0 + a
                _block_values(q[a], PT, v_sorted, p0, p1, l1, acc)
                own = y[i] == c
                for b in range(p1 - p0):
                    idx = order[p0 + b]
                    if idx == i:
                        continue
                    val = acc[b]
                    if own:
                        if js[a] < 0 or val < bs[a] or (val == bs[a] and idx < js[a]):
                            bs[a], js[a] = val, idx
                    elif jd[a] < 0 or val < bd[a] or (val == bd[a] and idx < jd[a]):
                        bd[a], jd[a] = val, idx
    for a in range(nq):
        same[i0 + a], diff[i0 + a], d_same[i0 + a], d_diff[i0 + a] = js[a], jd[a], bs[a], bd[a]


@njit(cache=True, nogil=True)
def same_diff_neighbors(lo, hi, X, y, W, PT, v_sorted, order, starts, l1, same, diff, d_same, d_diff):
    """Leave-one-out same-class and different-class nearest prototype of the training
    rows of query blocks lo .. hi - 1 (QUERY_BLOCK rows each; :func:`knnx._kernels.launch`
    splits the blocks over threads).

    X : (n, m) training rows, y : (n,) class codes, W : (C, m), PT / v_sorted / order /
    starts : prototypes sorted by class (``starts[c]:starts[c+1]`` is class c).
    Outputs (n,): ``same`` / ``diff`` training indices (-1 when the set is empty) and
    their dissimilarities ``d_same`` / ``d_diff`` (inf when empty). A row is never its
    own neighbour; its duplicates may be. A block of queries visits each block of
    prototypes in turn, so that the block stays in cache for all of them.
    """
    for qb in range(lo, hi):
        _same_diff_block(qb, X, y, W, PT, v_sorted, order, starts, l1, same, diff, d_same, d_diff)


@njit(cache=True, nogil=True)
def k_nearest(lo, hi, Q, W, PT, v_sorted, order, starts, k, l1, ind, dist):
    """The k nearest prototypes of the query rows of blocks lo .. hi - 1 (QUERY_BLOCK
    rows each), ordered by (dissimilarity, index).

    Q : (n_q, m). Outputs ind (n_q, k) training indices, dist (n_q, k) dissimilarities.
    """
    n_q, m = Q.shape
    n_classes = W.shape[0]
    for qb in range(lo, hi):
        i0 = qb * QUERY_BLOCK
        nq = min(n_q, i0 + QUERY_BLOCK) - i0
        q = np.empty((nq, m))
        acc = np.empty(BLOCK)
        filled = np.zeros(nq, dtype=np.intp)
        for c in range(n_classes):
            s0, s1 = starts[c], starts[c + 1]
            if s0 == s1:
                continue
            _scale_queries(Q, W[c], i0, q)
            for p0 in range(s0, s1, BLOCK):
                p1 = min(p0 + BLOCK, s1)
                for a in range(nq):
                    i = i0 + a
                    _block_values(q[a], PT, v_sorted, p0, p1, l1, acc)
                    for b in range(p1 - p0):
                        val = acc[b]
                        idx = order[p0 + b]
                        if filled[a] == k:
                            if val > dist[i, k - 1] or (val == dist[i, k - 1] and idx > ind[i, k - 1]):
                                continue
                            t = k - 1
                        else:
                            t = filled[a]
                            filled[a] += 1
                        # insertion: shift the larger entries right
                        while t > 0 and (
                            dist[i, t - 1] > val or (dist[i, t - 1] == val and ind[i, t - 1] > idx)
                        ):
                            dist[i, t] = dist[i, t - 1]
                            ind[i, t] = ind[i, t - 1]
                            t -= 1
                        dist[i, t] = val
                        ind[i, t] = idx


@njit(cache=True, nogil=True)
def sigmoid(r, beta):
    """S_beta(r) = 1 / (1 + e^{beta (1 - r)}) (eq. 2); r = inf gives 1."""
    if r == np.inf:
        return 1.0
    return 1.0 / (1.0 + np.exp(beta * (1.0 - r)))


@njit(cache=True, nogil=True)
def window(r, beta):
    """Q = S'_beta(r) r (eq. 3 times r), with S' = beta S (1 - S); 0 at r = 0 and r = inf."""
    if r == np.inf or r == 0.0:
        return 0.0
    s = sigmoid(r, beta)
    return beta * s * (1.0 - s) * r


@njit(cache=True, nogil=True)
def loo_terms(X, y, W, v, same, diff, d_same, d_diff, beta, l1, learn_w, learn_v, grad_w, grad_v):
    """The smoothed index and the true LOO error of the current weights, and the gradient.

    Returns (sum over x of S_beta(r(x)), number of LOO errors). ``grad_w`` (C, m) and
    ``grad_v`` (n,) receive n times the gradient of J_T (eq. 7) with every x's
    neighbours held fixed, i.e. the bracketed sums of eqs. (16), (19), (21):

        grad_w[c, j] += Q R_j(x, x=) w_cj   for class(x=) = c
        grad_w[l, j] -= Q R_j(x, x!=) w_lj  for class(x!=) = l
        grad_v[i]    += Q / v_i              for x= = prototype i
        grad_v[k]    -= Q / v_k              for x!= = prototype k

    with Q = S'_beta(r) r and R_j(x, p) = (x_j - p_j)^2 / sum_l (w_cl x_l - w_cl p_l)^2:
    the denominator is the class-weighted part of d^2 without v_p^2, which is what makes
    (21) the exact derivative when v_p != 1 (with it, the printed R_j of eq. 12 would
    need an extra factor v_p^2). ``learn_w`` needs the Euclidean base.

    Cases: r = d(x, x=) / d(x, x!=). An error is d(x, x=) >= d(x, x!=) (eq. 6: step(1) = 1).
    No same-class partner: r = inf (an error, S = 1, no update). A single class (no
    different-class prototype): r = 0 (S_beta(0), no update). Both dissimilarities 0:
    r = 1 (an error, S = 1/2) and no update, since no weight can separate coincident
    points. d(x, x!=) = 0 < d(x, x=): r = inf.
    """
    n, m = X.shape
    total = 0.0
    errors = 0
    for x in range(n):
        i, k = same[x], diff[x]
        if i < 0:
            errors += 1
            total += 1.0
            continue
        if k < 0:
            total += sigmoid(0.0, beta)
            continue
        a, b = d_same[x], d_diff[x]
        if a >= b:
            errors += 1
        if b == 0.0:
            total += 0.5 if a == 0.0 else 1.0
            continue
        r = np.sqrt(a / b)
        total += sigmoid(r, beta)
        q = window(r, beta)
        if q == 0.0:
            continue
        if learn_v:
            grad_v[i] += q / v[i]
            grad_v[k] -= q / v[k]
        if learn_w:
            c, o = y[i], y[k]
            den_s = 0.0
            den_d = 0.0
            for j in range(m):
                t = W[c, j] * X[x, j] - W[c, j] * X[i, j]
                den_s += t * t
                t = W[o, j] * X[x, j] - W[o, j] * X[k, j]
                den_d += t * t
            for j in range(m):
                t = X[x, j] - X[i, j]
                grad_w[c, j] += q * (t * t / den_s) * W[c, j]
                t = X[x, j] - X[k, j]
                grad_w[o, j] -= q * (t * t / den_d) * W[o, j]
    return total, errors
