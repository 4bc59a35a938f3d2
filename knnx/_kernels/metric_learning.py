"""Kernels of the metric learners (:mod:`knnx.metric_learning`): LMNN's impostor search,
objective and gradient, and ITML's Bregman projections.

They import nothing from knnx and take validated input: C-contiguous float64 rows,
intp class codes and index arrays. Every sum is taken in a fixed order by one thread
(the parallel loops give each thread whole output rows), so the results do not depend
on the number of threads. Only the loops that cost O(n^2) or O(n d^2) are parallel (a
parallel kernel takes seconds longer to compile).
"""

import numpy as np
from numba import njit, prange


@njit(cache=True, parallel=True)
def project(X, L):
    """The rows of X mapped by L: ``X @ L.T`` (n x r), each entry summed in feature order
    (the inner loop runs over the output's columns, which the compiler vectorises)."""
    n, d = X.shape
    r = L.shape[0]
    LT = np.ascontiguousarray(L.T)
    out = np.zeros((n, r))
    for i in prange(n):
        for f in range(d):
            x = X[i, f]
            for a in range(r):
                out[i, a] += x * LT[f, a]
    return out


@njit(cache=True, inline="always")
def _sq(Z, i, j):
    s = 0.0
    for f in range(Z.shape[1]):
        t = Z[i, f] - Z[j, f]
        s += t * t
    return s


@njit(cache=True)
def target_distances(Z, targets):
    """Squared distances in Z from each row to its target neighbours (n x k)."""
    n, k = targets.shape
    out = np.empty((n, k))
    for i in range(n):
        for j in range(k):
            out[i, j] = _sq(Z, i, targets[i, j])
    return out


@njit(cache=True, parallel=True)
def _inside(Z, ZT, y, radius, start, stop, mask):
    """``mask[i - start, m] = 1`` for the rows m of another class than row i with
    ``||z_i - z_m||^2 < radius[i]``, rows i in [start, stop); their counts. The squared
    distance is summed in feature order (as :func:`_sq`), over every m at once."""
    n, r = Z.shape
    counts = np.zeros(stop - start, dtype=np.int64)
    for b in prange(stop - start):
        i = start + b
        dist = np.zeros(n)
        for f in range(r):
            zf = Z[i, f]
            for m in range(n):
                t = ZT[f, m] - zf
                dist[m] += t * t
        c = 0
        for m in range(n):
            if y[m] != y[i] and dist[m] < radius[i]:
                mask[b, m] = 1
                c += 1
        counts[b] = c
    return counts


@njit(cache=True)
def _gather(mask, ptr, others):
    """Row b's marked columns into ``others[ptr[b]:ptr[b+1]]``, increasing."""
    for b in range(mask.shape[0]):
        p = ptr[b]
        for m in range(mask.shape[1]):
            if mask[b, m]:
                others[p] = m
                p += 1


def impostors(Z, y, radius, max_pairs, block_bytes=2**24):
    """``(ptr, others)``: for each row i, the rows l of another class with
    ``||z_i - z_l||^2 < radius[i]`` in ``others[ptr[i]:ptr[i+1]]``, increasing; None once
    more than ``max_pairs`` are found. Every pair of rows is compared, a block of rows at
    a time (a mask of at most ``block_bytes`` bytes, gathered before the next: never an
    n x n array for large n)."""
    n = Z.shape[0]
    ZT = np.ascontiguousarray(Z.T)
    rows = max(1, min(n, block_bytes // max(n, 1)))
    counts, parts = np.zeros(n, dtype=np.int64), []
    for start in range(0, n, rows):
        stop = min(n, start + rows)
        mask = np.zeros((stop - start, n), dtype=np.uint8)
        block = _inside(Z, ZT, y, radius, start, stop, mask)
        local = np.zeros(stop - start + 1, dtype=np.int64)
        np.cumsum(block, out=local[1:])
        part = np.empty(local[-1], dtype=np.intp)
        _gather(mask, local, part)
        counts[start:stop] = block
        parts.append(part)
        if counts[:stop].sum() > max_pairs:
            return None
    ptr = np.zeros(n + 1, dtype=np.intp)
    np.cumsum(counts, out=ptr[1:])
    return ptr, (np.concatenate(parts) if parts else np.empty(0, dtype=np.intp))


@njit(cache=True)
def lmnn_terms(Z, targets, ptr, others, mu):
    """LMNN's objective on the stored impostor pairs, its active triples and the weight of
    each pair in the gradient (see :func:`lmnn_gradient`).

    For row i, target j and impostor l the hinge is ``1 + d_ij - d_il`` where positive.
    Returns ``(pull, hinge, active, tw, iw)``: per row, the sum of its target distances,
    of its positive hinges and their number, and the weights: ``tw[i, j] = (1 - mu) +
    mu * (active triples through (i, j))``, ``iw[p] = -mu * (active triples through
    the pair p = (i, others[p]))``."""
    n, k = targets.shape
    pull = np.zeros(n)
    hinge = np.zeros(n)
    active = np.zeros(n, dtype=np.int64)
    tw = np.empty((n, k))
    iw = np.zeros(others.shape[0])
    for i in range(n):
        t = np.empty(k)
        s = 0.0
        for j in range(k):
            t[j] = _sq(Z, i, targets[i, j])
            s += t[j]
            tw[i, j] = 1.0 - mu
        pull[i] = s
        h = 0.0
        a = 0
        for p in range(ptr[i], ptr[i + 1]):
            dl = _sq(Z, i, others[p])
            for j in range(k):
                if dl < 1.0 + t[j]:
                    h += 1.0 + t[j] - dl
                    a += 1
                    tw[i, j] += mu
                    iw[p] -= mu
        hinge[i] = h
        active[i] = a
    return pull, hinge, active, tw, iw


@njit(cache=True)
def _weighted_sums(X, targets, tw, ptr, others, iw):
    """Per row i: ``s[i]``, the sum of its pair weights, and ``m[i]``, the sum of its
    partners' rows weighted by them."""
    n, d = X.shape
    k = targets.shape[1]
    s = np.zeros(n)
    M = np.zeros((n, d))
    for i in range(n):
        for j in range(k):
            w = tw[i, j]
            s[i] += w
            b = targets[i, j]
            for f in range(d):
                M[i, f] += w * X[b, f]
        for p in range(ptr[i], ptr[i + 1]):
            w = iw[p]
            if w != 0.0:
                s[i] += w
                b = others[p]
                for f in range(d):
                    M[i, f] += w * X[b, f]
    return s, M


@njit(cache=True, parallel=True)
def _cross(X, Y, w):
    """``sum_i w_i x_i y_i^T`` (d x d), summed over the rows in order, one output row per
    thread (the inner loop over its columns vectorised)."""
    n, d = X.shape
    out = np.zeros((d, Y.shape[1]))
    for f in prange(d):
        for i in range(n):
            a = w[i] * X[i, f]
            for g in range(Y.shape[1]):
                out[f, g] += a * Y[i, g]
    return out


@njit(cache=True)
def _halved_less(X, u, M):
    """``diag(u / 2) X - M`` (halving is exact)."""
    R = np.empty_like(X)
    for i in range(X.shape[0]):
        h = 0.5 * u[i]
        for f in range(X.shape[1]):
            R[i, f] = h * X[i, f] - M[i, f]
    return R


@njit(cache=True)
def _partner_weights(s, targets, tw, ptr, others, iw):
    """s plus each row's weights as a partner: a serial scatter, in row order."""
    u = s.copy()
    for i in range(targets.shape[0]):
        for j in range(targets.shape[1]):
            u[targets[i, j]] += tw[i, j]
        for p in range(ptr[i], ptr[i + 1]):
            u[others[p]] += iw[p]
    return u


def lmnn_gradient(X, targets, tw, ptr, others, iw):
    """``sum_p w_p (x_a - x_b)(x_a - x_b)^T`` over the target pairs (weights ``tw``) and
    the impostor pairs (``iw``): the gradient of LMNN's objective with respect to the
    matrix M = L^T L (d x d). Written as ``P + P^T`` with ``P = X^T (diag(u / 2) X -
    M)``, M the rows' weighted partner sums (:func:`_weighted_sums`) and u each row's
    weights as anchor and as partner: one product over the rows, no n x n matrix, and
    exactly symmetric."""
    s, M = _weighted_sums(X, targets, tw, ptr, others, iw)
    u = _partner_weights(s, targets, tw, ptr, others, iw)
    P = _cross(X, _halved_less(X, u, M), np.ones(X.shape[0]))  # 1.0 * x is x: one signature
    return P + P.T


@njit(cache=True)
def itml_passes(A, V, similar, bound, lam, gamma, max_passes, tol):
    """Davis et al.'s cyclic Bregman projections (the order of their reference code),
    updating A, ``bound`` (the slack-adjusted targets) and ``lam`` (the dual variables)
    in place. Constraint c asks ``v_c^T A v_c`` to be at most ``bound[c]`` (similar) or
    at least (dissimilar); each pass visits them in order. Stops after a pass whose
    change of the duals, ``sum|lam - lam_before| / (||lam|| + ||lam_before||)``, is below
    ``tol``, or after ``max_passes``. A constraint whose v has ``v^T A v = 0`` (two equal
    rows) is skipped. A must be exactly symmetric, and stays so. Returns ``(passes, change)``."""
    m, d = V.shape
    gamma_proj = 1.0 if np.isinf(gamma) else gamma / (gamma + 1.0)
    before = lam.copy()
    Av = np.empty(d)
    change = np.inf
    passes = 0
    for it in range(max_passes):
        passes = it + 1
        for c in range(m):
            Av[:] = 0.0
            for g in range(d):  # A v as a sum of A's rows (A is symmetric): vectorised
                vg = V[c, g]
                for f in range(d):
                    Av[f] += vg * A[g, f]
            wtw = 0.0
            for f in range(d):
                wtw += V[c, f] * Av[f]
            if wtw <= 0.0:
                continue
            if similar[c]:
                alpha = min(lam[c], gamma_proj * (1.0 / wtw - 1.0 / bound[c]))
                beta = alpha / (1.0 - alpha * wtw)
                bound[c] = 1.0 / (1.0 / bound[c] + alpha / gamma)
            else:
                alpha = min(lam[c], gamma_proj * (1.0 / bound[c] - 1.0 / wtw))
                beta = -alpha / (1.0 + alpha * wtw)
                bound[c] = 1.0 / (1.0 / bound[c] - alpha / gamma)
            lam[c] -= alpha
            for f in range(d):  # beta (Av_f Av_g): A stays exactly symmetric
                for g in range(d):
                    A[f, g] += beta * (Av[f] * Av[g])
        norm = np.sqrt(np.sum(lam * lam)) + np.sqrt(np.sum(before * before))
        if norm == 0.0:
            change = np.inf
            break
        change = np.sum(np.abs(before - lam)) / norm
        if change < tol:
            break
        before[:] = lam
    return passes, change


@njit(cache=True, parallel=True)
def lfda_class_scatter(Xc, sigma):
    """``Xc^T (D - A) Xc`` (d x d) for one class's rows, A the local-scaling affinity
    ``A_ij = exp(-||x_i - x_j||^2 / (sigma_i sigma_j))`` (0 where sigma_i sigma_j = 0)
    and D its row sums: written as ``sum_i a_i x_i x_i^T - sum_i x_i m_i^T`` with
    ``a_i = sum_j A_ij`` and ``m_i = sum_j A_ij x_j``, one row of A at a time."""
    n, d = Xc.shape
    a = np.zeros(n)
    M = np.zeros((n, d))
    for i in prange(n):
        for j in range(n):
            scale = sigma[i] * sigma[j]
            if scale == 0.0:
                continue
            w = np.exp(-_sq(Xc, i, j) / scale)
            a[i] += w
            for f in range(d):
                M[i, f] += w * Xc[j, f]
    G = np.empty((d, d))
    for f in prange(d):
        for g in range(d):
            acc = 0.0
            for i in range(n):
                acc += a[i] * Xc[i, f] * Xc[i, g] - Xc[i, f] * M[i, g]
            G[f, g] = acc
    return G


@njit(cache=True, parallel=True)
def nca_scores(Z, y):
    """Per row i, NCA's probability of a correct stochastic neighbour: the share of
    ``exp(-||z_i - z_j||^2)`` over j != i held by the rows of i's class (stabilised by
    the smallest distance; a row alone in its class scores 0)."""
    n = Z.shape[0]
    out = np.zeros(n)
    for i in prange(n):
        low = np.inf
        for j in range(n):
            if j != i:
                low = min(low, _sq(Z, i, j))
        total = 0.0
        same = 0.0
        for j in range(n):
            if j != i:
                w = np.exp(-(_sq(Z, i, j) - low))
                total += w
                if y[j] == y[i]:
                    same += w
        out[i] = same / total if total > 0.0 else 0.0
    return out
