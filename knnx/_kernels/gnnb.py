"""GNNB training kernels: gentle Newton-Raphson boosting of nearest neighbours
(Nock et al. 2014, Algorithm 1).

One class c at a time is a binary problem on the codes y_ic in {-1, +1}, as in UNN
(knnx._kernels.unn, whose loss functions this module reuses, and knnx._kernels.leveraged). The
state of class c is the weight vector w (updated by eq. 11) and, for the surrogate
risk and the training curve, the edges y_ic h_c(x_i).

Permissible functions phi (Table 1, rows A-D) are coded by the UNN code of their
balanced convex loss psi_phi; Z = phi(0) - phi(1/2) and H* = sup psi_phi'':

    code             row  phi(x)                          psi_phi(x)            Z       H*
    SQUARED          A    -x (1 - x)                      (1 - x)^2             1/4     2
    LOGISTIC         B    x ln x + (1 - x) ln(1 - x)      log2(1 + e^-x)        ln 2    1 / (4 ln 2)
    BINARY_LOGISTIC  C    x log2 x + (1 - x) log2(1 - x)  log2(1 + 2^-x)        1       ln 2 / 4
    MATSUSHITA       D    -sqrt(x (1 - x))                -x + sqrt(1 + x^2)    1/2     1

psi_B is UNN's logistic loss ln(1 + e^-x) divided by ln 2 (psi_phi(0) = 1 for
every row), so its values, weights and curvature are UNN's times 1/ln 2.
"""

from collections import namedtuple

import numpy as np
from numba import njit, prange

from knnx._kernels.leveraged import (
    ClassRun,
    class_signs,
    collect_touched,
    fsum_add,
    fsum_value,
    lazy_index,
    merge_classes,
    new_runs,
    record_snapshots,
    replay_errors,
    two_sum,
)
from knnx._kernels.unn import (
    BINARY_LOGISTIC,
    LN2,
    LOGISTIC,
    MATSUSHITA,
    SQUARED,
    curvature,
    loss_value,
    weight,
)

PHIS = (SQUARED, LOGISTIC, BINARY_LOGISTIC, MATSUSHITA)


@njit(cache=True)
def z_norm(phi):
    """Z = phi(0) - phi(1/2) > 0."""
    if phi == SQUARED:
        return 0.25
    if phi == LOGISTIC:
        return LN2
    if phi == BINARY_LOGISTIC:
        return 1.0
    return 0.5


@njit(cache=True)
def h_star(phi):
    """H*_psi = sup of psi_phi'' = psi_phi''(0) = 1 / (Z H_phi(1/2)) (eq. 8)."""
    if phi == SQUARED:
        return 2.0
    if phi == LOGISTIC:
        return 1.0 / (4.0 * LN2)
    if phi == BINARY_LOGISTIC:
        return LN2 / 4.0
    return 1.0


@njit(cache=True)
def _xlogx(x):
    return x * np.log(x) if x > 0.0 else 0.0


@njit(cache=True)
def phi_value(phi, x):
    """phi(x) on [0, 1] (Table 1)."""
    if phi == SQUARED:
        return -x * (1.0 - x)
    if phi == LOGISTIC:
        return _xlogx(x) + _xlogx(1.0 - x)
    if phi == BINARY_LOGISTIC:
        return (_xlogx(x) + _xlogx(1.0 - x)) / LN2
    return -np.sqrt(x * (1.0 - x))


@njit(cache=True)
def phi_grad(phi, x):
    """nabla phi (x)."""
    if phi == SQUARED:
        return 2.0 * x - 1.0
    if phi == LOGISTIC:
        return np.log(x / (1.0 - x))
    if phi == BINARY_LOGISTIC:
        return np.log2(x / (1.0 - x))
    return (2.0 * x - 1.0) / (2.0 * np.sqrt(x * (1.0 - x)))


@njit(cache=True)
def _sigmoid(u):
    if u >= 0.0:
        return 1.0 / (1.0 + np.exp(-u))
    e = np.exp(u)
    return e / (1.0 + e)


@njit(cache=True)
def phi_grad_inv(phi, u):
    """(nabla phi)^-1 (u); also the matching posterior estimate p = (nabla phi)^-1 (h) (eq. 5)."""
    if phi == SQUARED:
        return 0.5 * (u + 1.0)
    if phi == LOGISTIC:
        return _sigmoid(u)
    if phi == BINARY_LOGISTIC:
        return _sigmoid(u * LN2)
    return 0.5 * (1.0 + u / np.sqrt(1.0 + u * u))


@njit(cache=True)
def _loss_scale(phi):
    return 1.0 / LN2 if phi == LOGISTIC else 1.0


@njit(cache=True)
def bcl_value(phi, x):
    """psi_phi(x), the balanced convex loss (eq. 4); psi_phi(0) = 1."""
    return loss_value(phi, 0.0, x) * _loss_scale(phi)


@njit(cache=True)
def bcl_weight(phi, x):
    """-psi_phi'(x) = (nabla phi)^-1 (-x) / Z: the weight of an example of edge x."""
    return weight(phi, 0.0, x) * _loss_scale(phi)


@njit(cache=True)
def bcl_curvature(phi, x):
    """psi_phi''(x) (H_psi in eq. 17-18)."""
    return curvature(phi, 0.0, x) * _loss_scale(phi)


@njit(cache=True)
def weight_update_generic(phi, w, a):
    """Eq. (11) as printed: w' = (nabla phi)^-1 (-a + nabla phi (Z w)) / Z, a = delta_j y_ic y_jc."""
    z = z_norm(phi)
    return phi_grad_inv(phi, -a + phi_grad(phi, z * w)) / z


@njit(cache=True)
def weight_update(phi, w, a):
    """Eq. (11) in closed form, per row of Table 1 (a = delta_j y_ic y_jc).

    A: w - 2a. B: w / (w ln 2 + (1 - w ln 2) e^a) (Table 1 prints
    w e^a / (w ln 2 + (1 - w) ln 2): not eq. 11). C: w / (w + (1 - w) 2^a).
    D: 1 - u / sqrt(u^2 + r^2) with r = sqrt(w (2 - w)), u = 1 - w + r a, i.e.
    1 - (1 - w + r a) / sqrt(1 + a^2 r^2 + 2 (1 - w) r a) (Table 1's radical must
    cover the whole denominator). Each form is rearranged to avoid overflow and
    cancellation; tests check them against :func:`weight_update_generic`.
    """
    if phi == SQUARED:
        return w - 2.0 * a
    if phi == LOGISTIC or phi == BINARY_LOGISTIC:
        zw = w * LN2 if phi == LOGISTIC else w  # Z w, the probability
        if phi == BINARY_LOGISTIC:
            a = a * LN2
        if a > 0.0:
            e = np.exp(-a)
            return w * e / (zw * e + (1.0 - zw))
        return w / (zw + (1.0 - zw) * np.exp(a))
    r = np.sqrt(max(0.0, w * (2.0 - w)))
    u = 1.0 - w + r * a
    s = np.sqrt(u * u + r * r)
    if s == 0.0:
        return w
    if u > 0.0:
        return r * r / (s * (s + u))  # = 1 - u / s without cancellation
    return 1.0 - u / s


@njit(cache=True)
def eta_of(graph, sign, w, j):
    """eta(c, j) = sum over i in R(j) of w_i y_ic y_jc (eq. 9), from scratch, in increasing i."""
    s = 0.0
    for p in range(graph.reverse_ptr[j], graph.reverse_ptr[j + 1]):
        i = graph.reverse_ind[p]
        s += w[i] * sign[i] * sign[j]
    return s


@njit(cache=True)
def exact_eta(graph, sign, w, j, buf):
    """eta(c, j) of eq. (9) correctly rounded (:func:`fsum_value`): a function of the
    multiset of terms w_i y_ic y_jc only, whatever the order of R(j)."""
    p0, p1 = graph.reverse_ptr[j], graph.reverse_ptr[j + 1]
    # Fast path: the sum kept as hi + lo (TwoSum); if adding the rounding errors into
    # lo never rounds, hi + lo is the exact sum and fl(hi + lo) its correct rounding.
    hi = lo = 0.0
    exact = True
    for p in range(p0, p1):
        i = graph.reverse_ind[p]
        hi, e = two_sum(hi, w[i] * sign[i] * sign[j])
        lo, e = two_sum(lo, e)
        if e != 0.0:
            exact = False
    if exact:
        return hi + lo
    n = 0
    for p in range(p0, p1):
        i = graph.reverse_ind[p]
        n = fsum_add(buf, n, w[i] * sign[i] * sign[j])
    return fsum_value(buf, n)


@njit(cache=True)
def delta_of(factor, eta, nj):
    """delta_j = 2 (1 - epsilon) eta / (H* n_j) (eq. 10), factor = 2 (1 - epsilon) / H*;
    n_j = 0 (nobody's neighbour): 0/0, taken as 0."""
    return factor * eta / nj if nj > 0 else 0.0


@njit(cache=True)
def _block_update(key, width, bmax, barg, dirty, j, value):
    """key[j] = value in a blocked maximum: blocks of ``width`` consecutive indices keep
    their largest key (bmax) and its smallest index (barg). A rise is O(1); the fall
    of a block's leader marks the block dirty, rescanned at the next query."""
    b = j // width
    key[j] = value
    if dirty[b]:
        return
    if value > bmax[b] or (value == bmax[b] and j < barg[b]):
        bmax[b] = value
        barg[b] = j
    elif j == barg[b] and value < bmax[b]:
        dirty[b] = True


@njit(cache=True)
def _block_argmax(key, width, bmax, barg, dirty):
    """Index of the largest key, ties to the smallest index: O(m / width + width x
    dirty blocks). Blocks are scanned in index order with strict comparisons."""
    m = key.shape[0]
    best = -1
    for b in range(bmax.shape[0]):
        if dirty[b]:
            lo = b * width
            hi = min(m, lo + width)
            top = lo
            for j in range(lo + 1, hi):
                if key[j] > key[top]:
                    top = j
            bmax[b] = key[top]
            barg[b] = top
            dirty[b] = False
        if best < 0 or bmax[b] > bmax[best]:
            best = b
    return barg[best]


GNNBRun = namedtuple("GNNBRun", ["run", "weights", "updates"])
"""One class's outputs: the ClassRun, the final weights w (m,) and the cumulative
weight updates l(t, c) after each iteration (T + 1,) int64."""


@njit(cache=True)
def _train_class(graph, sign, schedule, phi, epsilon, out):
    """T iterations of Algorithm 1 of Nock et al. for one class (codes ``sign`` = y_ic).

    State: the weights w_i (eq. 11), the edges y_ic h_c(x_i) (for the surrogate risk,
    eq. 1) and, for GNNB*, the chooser keys |delta_j| (eq. 10). Writes ``out`` (a
    GNNBRun) in place.
    """
    run, w, updates = out
    rptr = graph.reverse_ptr
    rind = graph.reverse_ind
    m, k = graph.neighbors.shape
    lazy = schedule.lazy
    factor = 2.0 * (1.0 - epsilon) / h_star(phi)
    w0 = 0.5 / z_norm(phi)
    for i in range(m):
        w[i] = w0
    edge = np.zeros(m)
    risk_sum = m * bcl_value(phi, 0.0)
    run.risk[0] = risk_sum / m
    updates[0] = 0
    # GNNB* (largest |delta_j| first): the key |delta_j| of every j is kept and, after
    # each step, recomputed from scratch for the examples j' whose inverse
    # neighbourhood holds a point whose weight moved (j' in NN_k(i) for i in the
    # leveraged example's inverse neighbourhood), never updated by differences, from
    # eta correctly rounded (exact_eta): the keys equal a from-scratch computation bit
    # for bit, examples whose eta are equal in exact arithmetic tie, and ties go to
    # the smallest index. The keys sit in a blocked maximum (_block_update /
    # _block_argmax). The step taken sums eta afresh in increasing i (eta_of).
    key = np.zeros(m)
    width = max(16, int(np.sqrt(m)))
    n_blocks = (m + width - 1) // width
    bmax = np.full(n_blocks, -1.0)
    barg = np.zeros(n_blocks, dtype=np.intp)
    dirty = np.ones(n_blocks, dtype=np.bool_)
    stamp = np.full(m, -1, dtype=np.intp)
    touched = np.empty(m, dtype=np.intp)
    max_nj = 1
    for j in range(m):
        max_nj = max(max_nj, rptr[j + 1] - rptr[j])
    buf = np.empty(max_nj + 1)
    if not lazy:
        for j in range(m):
            key[j] = abs(delta_of(factor, exact_eta(graph, sign, w, j, buf), rptr[j + 1] - rptr[j]))
    next_snap = 0
    for t in range(schedule.n_iter):
        if lazy:
            j = lazy_index(schedule, t)
        else:
            j = _block_argmax(key, width, bmax, barg, dirty)
        run.chosen[t] = j
        p0, p1 = rptr[j], rptr[j + 1]
        nj = p1 - p0
        delta = delta_of(factor, eta_of(graph, sign, w, j), nj)  # eq. (9)-(10), from scratch
        run.steps[t] = delta
        updates[t + 1] = updates[t] + nj
        if delta != 0.0:
            run.alpha[j] += delta
            for p in range(p0, p1):
                i = rind[p]
                a = delta * sign[i] * sign[j]
                w[i] = weight_update(phi, w[i], a)  # eq. (11)
                old = edge[i]
                edge[i] = old + a
                risk_sum += bcl_value(phi, edge[i]) - bcl_value(phi, old)
            if not lazy:
                n_touched = collect_touched(graph, p0, p1, t, stamp, touched)
                for q in range(n_touched):
                    jj = touched[q]
                    new_key = abs(
                        delta_of(factor, exact_eta(graph, sign, w, jj, buf), rptr[jj + 1] - rptr[jj])
                    )
                    _block_update(key, width, bmax, barg, dirty, jj, new_key)
        elif not lazy:
            _block_update(key, width, bmax, barg, dirty, j, 0.0)
        run.risk[t + 1] = risk_sum / m
        next_snap = record_snapshots(schedule, t, next_snap, run.alpha, run.snaps)


@njit(cache=True, parallel=True)
def gnnb_fit(graph, ycode, n_classes, train_classes, schedule, phi, epsilon, tie_order):
    """Algorithm 1 of Nock et al. (2014), one class against the rest, classes in parallel.

    Parameters as :func:`knnx._kernels.unn.unn_fit`; ``schedule.lazy`` visits
    ``schedule.order`` cyclically, else GNNB* (largest |delta_j|, ties to the
    smallest j). phi : code of the permissible function; epsilon : eq. (10).

    Returns
    -------
    alpha : (m, n_trained) leveraging coefficients.
    weights : (m, n_trained) final weights.
    risk : (T + 1,) surrogate risk (eq. 1) averaged over the trained classes.
    errors : (T + 1,) training error of the argmax rule (replayed).
    chosen, steps : (T, n_trained) index leveraged and delta_j at each iteration.
    updates : (T + 1, n_trained) cumulative weight updates l(t, c) = sum of n_e(t).
    snaps : (len(snap_at), m, n_trained) alpha after snap_at[s] iterations.
    """
    m = graph.neighbors.shape[0]
    n_tc = train_classes.shape[0]
    n_iter = schedule.n_iter
    sign = class_signs(ycode, train_classes)
    alpha_t, risks, chosen_t, steps, snaps_t = new_runs(n_tc, m, n_iter, schedule.snap_at.shape[0])
    w_t = np.zeros((n_tc, m))
    updates = np.zeros((n_tc, n_iter + 1), dtype=np.int64)
    for ci in prange(n_tc):
        run = ClassRun(alpha_t[ci], risks[ci], chosen_t[ci], steps[ci], snaps_t[ci])
        _train_class(graph, sign[ci], schedule, phi, epsilon, GNNBRun(run, w_t[ci], updates[ci]))
    errors = replay_errors(steps, chosen_t, sign, train_classes, n_classes, ycode, graph, tie_order)
    risk, snaps = merge_classes(risks, snaps_t)
    return (
        alpha_t.T.copy(),
        w_t.T.copy(),
        risk,
        errors,
        chosen_t.T.copy(),
        steps.T.copy(),
        updates.T.copy(),
        snaps,
    )


@njit(cache=True)
def gnnb_proba(h, phi):
    """p_c = (nabla phi)^-1 (h_c) (eq. 5), clipped to [0, 1] (only the squared phi
    can leave it), normalised over classes (uniform if all are 0)."""
    n, C = h.shape
    out = np.empty((n, C))
    for q in range(n):
        s = 0.0
        for cls in range(C):
            v = min(1.0, max(0.0, phi_grad_inv(phi, h[q, cls])))
            out[q, cls] = v
            s += v
        for cls in range(C):
            out[q, cls] = out[q, cls] / s if s > 0.0 else 1.0 / C
    return out
