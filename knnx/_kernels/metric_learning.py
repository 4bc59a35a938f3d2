"""Kernels of the metric learners (:mod:`knnx.metric_learning`): LMNN's impostor search,
objective and gradient, and ITML's Bregman projections.

They import nothing from knnx and take validated input: C-contiguous float64 rows,
intp class codes and index arrays. Every sum is taken in a fixed order by one thread
(the parallel loops give each thread whole output rows), so the results do not depend
on the number of threads.
"""

import numpy as np
from numba import njit, prange


@njit(cache=True, parallel=True)
def project(X, L):
    """The rows of X mapped by L: ``X @ L.T`` (n x r), each entry summed in feature order."""
    n, d = X.shape
    r = L.shape[0]
    out = np.empty((n, r))
    for i in prange(n):
        for a in range(r):
            s = 0.0
            for f in range(d):
                s += L[a, f] * X[i, f]
            out[i, a] = s
    return out


@njit(cache=True, inline="always")
def _sq(Z, i, j):
    s = 0.0
    for f in range(Z.shape[1]):
        t = Z[i, f] - Z[j, f]
        s += t * t
    return s


@njit(cache=True, parallel=True)
def target_distances(Z, targets):
    """Squared distances in Z from each row to its target neighbours (n x k)."""
    n, k = targets.shape
    out = np.empty((n, k))
    for i in prange(n):
        for j in range(k):
            out[i, j] = _sq(Z, i, targets[i, j])
    return out


@njit(cache=True, parallel=True)
def impostor_counts(Z, y, radius):
    """Per row i, the rows l of another class with ||z_i - z_l||^2 < radius[i]."""
    n = Z.shape[0]
    counts = np.zeros(n, dtype=np.int64)
    for i in prange(n):
        c = 0
        for m in range(n):
            if y[m] != y[i] and _sq(Z, i, m) < radius[i]:
                c += 1
        counts[i] = c
    return counts


@njit(cache=True, parallel=True)
def impostor_fill(Z, y, radius, ptr, others):
    """The rows counted by :func:`impostor_counts`, row i's in ``others[ptr[i]:ptr[i+1]]``
    in increasing order."""
    n = Z.shape[0]
    for i in prange(n):
        p = ptr[i]
        for m in range(n):
            if y[m] != y[i] and _sq(Z, i, m) < radius[i]:
                others[p] = m
                p += 1


@njit(cache=True, parallel=True)
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
    for i in prange(n):
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


@njit(cache=True, parallel=True)
def _weighted_sums(X, targets, tw, ptr, others, iw):
    """Per row i: ``s[i]``, the sum of its pair weights, and ``m[i]``, the sum of its
    partners' rows weighted by them."""
    n, d = X.shape
    k = targets.shape[1]
    s = np.zeros(n)
    M = np.zeros((n, d))
    for i in prange(n):
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
def lmnn_gradient(X, targets, tw, ptr, others, iw):
    """``sum_p w_p (x_a - x_b)(x_a - x_b)^T`` over the target pairs (weights ``tw``) and
    the impostor pairs (``iw``): the gradient of LMNN's objective with respect to the
    matrix M = L^T L (d x d). Written as ``X^T diag(s + c) X - X^T M - M^T X`` with s and
    M of :func:`_weighted_sums` and c each row's weight as a partner (no n x n matrix)."""
    n, d = X.shape
    k = targets.shape[1]
    s, M = _weighted_sums(X, targets, tw, ptr, others, iw)
    u = s.copy()
    for i in range(n):  # a row's weight as a partner: a serial scatter, in row order
        for j in range(k):
            u[targets[i, j]] += tw[i, j]
        for p in range(ptr[i], ptr[i + 1]):
            u[others[p]] += iw[p]
    G = np.empty((d, d))
    for f in prange(d):
        for g in range(d):
            acc = 0.0
            for i in range(n):
                acc += u[i] * X[i, f] * X[i, g] - X[i, f] * M[i, g] - M[i, f] * X[i, g]
            G[f, g] = acc
    return G


@njit(cache=True)
def itml_passes(A, V, similar, bound, lam, gamma, max_passes, tol):
    """Davis et al.'s cyclic Bregman projections (the order of their reference code),
    updating A, ``bound`` (the slack-adjusted targets) and ``lam`` (the dual variables)
    in place. Constraint c asks ``v_c^T A v_c`` to be at most ``bound[c]`` (similar) or
    at least (dissimilar); each pass visits them in order. Stops after a pass whose
    change of the duals, ``sum|lam - lam_before| / (||lam|| + ||lam_before||)``, is below
    ``tol``, or after ``max_passes``. A constraint whose v has ``v^T A v = 0`` (two equal
    rows) is skipped. Returns ``(passes, change)``."""
    m, d = V.shape
    gamma_proj = 1.0 if np.isinf(gamma) else gamma / (gamma + 1.0)
    before = lam.copy()
    Av = np.empty(d)
    change = np.inf
    passes = 0
    for it in range(max_passes):
        passes = it + 1
        for c in range(m):
            wtw = 0.0
            for f in range(d):
                s = 0.0
                for g in range(d):
                    s += A[f, g] * V[c, g]
                Av[f] = s
                wtw += V[c, f] * s
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
            for f in range(d):
                for g in range(d):
                    A[f, g] += beta * Av[f] * Av[g]
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
