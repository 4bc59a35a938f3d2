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
from numba import njit

from knnx._kernels import launch
from knnx._kernels.leveraged import (
    ClassRun,
    class_signs,
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
def signed_sum(graph, sign, w, j, buf, acc):
    """S_j = sum over i in R(j) of w_i y_ic, correctly rounded (:func:`fsum_value`): a
    function of the multiset of terms only, whatever the order of R(j). eta(c, j) of
    eq. (9) is y_jc S_j, so |delta_j| depends on |S_j| only (rounding is symmetric).

    Also resets the exact accumulator of j: acc[j] = (hi, lo) with hi + lo = S_j
    exactly, or lo = NaN when the sum does not fit in two doubles (see :func:`acc_add`).
    """
    p0, p1 = graph.reverse_ptr[j], graph.reverse_ptr[j + 1]
    # Fast path: the sum kept as hi + lo (TwoSum); if adding the rounding errors into
    # lo never rounds, hi + lo is the exact sum and fl(hi + lo) its correct rounding.
    hi = lo = 0.0
    exact = True
    for p in range(p0, p1):
        i = graph.reverse_ind[p]
        hi, e = two_sum(hi, w[i] * sign[i])
        lo, e = two_sum(lo, e)
        if e != 0.0:
            exact = False
    if exact:
        acc[j, 0] = hi
        acc[j, 1] = lo
        return hi + lo
    acc[j, 0] = 0.0
    acc[j, 1] = np.nan
    n = np.intp(0)
    for p in range(p0, p1):
        i = graph.reverse_ind[p]
        n = fsum_add(buf, n, w[i] * sign[i])
    return fsum_value(buf, n)


@njit(cache=True)
def acc_add(acc, j, d_hi, d_lo):
    """acc[j] += d_hi + d_lo in exact arithmetic (two or three TwoSums). The accumulator
    stays usable while hi + lo is exactly the sum of its terms, which holds as long as
    no TwoSum into lo rounds; else lo becomes NaN (and stays NaN: a NaN lo makes every
    later error NaN) and the sum must be taken afresh (:func:`signed_sum`). An overflow
    or a non-finite term also leaves a NaN error, hence a NaN lo. (On letter, k = 10,
    T = 3m, no accumulator ever needed it.)"""
    hi, e1 = two_sum(acc[j, 0], d_hi)
    lo, e2 = two_sum(acc[j, 1], e1)
    e3 = 0.0
    if d_lo != 0.0:  # usually 0: new - old is exact for weights within a factor 2
        lo, e3 = two_sum(lo, d_lo)
    acc[j, 0] = hi
    acc[j, 1] = lo if e2 == 0.0 and e3 == 0.0 else np.nan


@njit(cache=True)
def delta_of(factor, eta, nj):
    """delta_j = 2 (1 - epsilon) eta / (H* n_j) (eq. 10), factor = 2 (1 - epsilon) / H*;
    n_j = 0 (nobody's neighbour): 0/0, taken as 0."""
    return factor * eta / nj if nj > 0 else 0.0


@njit(cache=True)
def _block_update(key, width, bmax, barg, dirty, dirty_list, j, value):
    """key[j] = value in a blocked maximum: blocks of ``width`` consecutive indices keep
    their largest key (bmax) and its smallest index (barg). A rise is O(1); the fall
    of a block's leader marks the block dirty and lists it (dirty_list[:n], n in its
    last slot), rescanned at the next query.

    Written with unconditional stores (no branch holds an array access): with the
    stores in branches a call cost ~47 ns (numba kept reference-count updates of the
    arrays), ~4 ns this way (1.77e6 calls, numba 0.68)."""
    b = j // width
    key[j] = value
    was_dirty = dirty[b]
    top, arg = bmax[b], barg[b]
    rise = not was_dirty and (value > top or (value == top and j < arg))
    fall = not was_dirty and not rise and j == arg and value < top
    bmax[b] = value if rise else top
    barg[b] = j if rise else arg
    dirty[b] = was_dirty or fall
    last = dirty_list.shape[0] - 1
    n = dirty_list[last]
    dirty_list[n] = b  # kept only if the block fell (n < last: a block is listed once)
    dirty_list[last] = n + fall


@njit(cache=True)
def _block_argmax(key, width, bmax, barg, dirty, dirty_list):
    """Index of the largest key, ties to the smallest index: O(m / width + width x
    dirty blocks). The listed blocks are rescanned, then the block maxima scanned in
    index order, with strict comparisons. (Listing the dirty blocks rather than
    scanning m / width flags took the chooser from 0.040 to 0.032 s per class on
    letter, T = 3m.)"""
    m = key.shape[0]
    last = dirty_list.shape[0] - 1
    for q in range(dirty_list[last]):
        b = dirty_list[q]
        lo = b * width
        top = lo
        top_key = key[lo]
        for j in range(lo + 1, min(m, lo + width)):
            if key[j] > top_key:
                top = j
                top_key = key[j]
        bmax[b] = top_key
        barg[b] = top
        dirty[b] = False
    dirty_list[last] = 0
    best = 0
    best_key = bmax[0]
    for b in range(1, bmax.shape[0]):
        if bmax[b] > best_key:
            best = b
            best_key = bmax[b]
    return barg[best]


GNNBRun = namedtuple("GNNBRun", ["run", "weights", "updates"])
"""One class's outputs: the ClassRun, the final weights w (m,) and the cumulative
weight updates l(t, c) after each iteration (T + 1,) int64."""

Chooser = namedtuple(
    "Chooser",
    ["key", "width", "bmax", "barg", "dirty", "dirty_list", "acc", "stamp", "touched", "buf", "moved"],
)
"""GNNB*'s state: the keys |delta_j| in a blocked maximum (key, width, bmax, barg,
dirty, dirty_list: :func:`_block_update`), the exact accumulators of S_j (acc (m, 2):
:func:`acc_add`), the examples touched at an iteration (stamp, touched: as
:func:`knnx._kernels.leveraged.collect_touched`), fsum's buffer (buf) and the weights
of the leveraged example's R(j) before the step (moved)."""


@njit(cache=True)
def _new_chooser(graph, sign, w, factor, lazy):
    """GNNB*'s chooser with every key computed afresh (empty arrays for the lazy chooser)."""
    rptr = graph.reverse_ptr
    m = 0 if lazy else graph.neighbors.shape[0]
    width = max(16, int(np.sqrt(m)))
    n_blocks = (m + width - 1) // width
    max_nj = 1
    for j in range(m):
        max_nj = max(max_nj, rptr[j + 1] - rptr[j])
    star = Chooser(
        np.zeros(m),
        width,
        np.full(n_blocks, -1.0),
        np.zeros(n_blocks, dtype=np.intp),
        np.ones(n_blocks, dtype=np.bool_),
        np.append(np.arange(n_blocks + 1), n_blocks),  # every block listed
        np.zeros((m, 2)),
        np.full(m, -1, dtype=np.intp),
        np.empty(m, dtype=np.intp),
        np.empty(max_nj + 1),
        np.empty(max_nj),
    )
    for j in range(m):
        star.key[j] = abs(
            delta_of(factor, signed_sum(graph, sign, w, j, star.buf, star.acc), rptr[j + 1] - rptr[j])
        )
    return star


@njit(cache=True)
def _move_terms(nbr, rind, sign, w, star, t, p0, p1):
    """Iteration t moved the weights of R(j) = rind[p0:p1] (from ``star.moved``): the
    change of each term w_i y_ic, exactly as two doubles, is added to the accumulator
    of every S_j' with i in R(j'), i.e. j' in NN_k(i). Those j' are listed in
    ``star.touched`` in order of first appearance (as collect_touched); returns their
    number."""
    acc, stamp, touched, moved = star.acc, star.stamp, star.touched, star.moved
    n_touched = 0
    for p in range(p0, p1):
        i = rind[p]
        d_hi, d_lo = two_sum(w[i] * sign[i], -(moved[p - p0] * sign[i]))
        for q in range(nbr.shape[1]):
            jj = nbr[i, q]
            acc_add(acc, jj, d_hi, d_lo)
            touched[n_touched] = jj  # kept if jj is new at iteration t (branch-free)
            n_touched += stamp[jj] != t
            stamp[jj] = t
    return n_touched


@njit(cache=True)
def _train_class(graph, sign, schedule, phi, epsilon, out):
    """T iterations of Algorithm 1 of Nock et al. for one class (codes ``sign`` = y_ic).

    State: the weights w_i (eq. 11), the edges y_ic h_c(x_i) and their losses (for the
    surrogate risk, eq. 1) and, for GNNB*, the chooser (keys |delta_j|, eq. 10).
    Writes ``out`` (a GNNBRun) in place.
    """
    run, w, updates = out
    nbr, rptr, rind = graph
    m = nbr.shape[0]
    lazy = schedule.lazy
    factor = 2.0 * (1.0 - epsilon) / h_star(phi)
    w[:] = 0.5 / z_norm(phi)
    edge = np.zeros(m)
    loss = np.full(m, bcl_value(phi, 0.0))  # psi(edge_i), kept to update the risk
    risk_sum = m * bcl_value(phi, 0.0)
    run.risk[0] = risk_sum / m
    updates[0] = 0
    # GNNB* (largest |delta_j| first): the key of j is |delta_j| from S_j = y_jc eta(c, j)
    # correctly rounded, so the keys equal a from-scratch computation bit for bit,
    # examples whose eta are equal in exact arithmetic tie, and ties go to the smallest
    # index. S_j is kept exactly as hi + lo (acc_add): a moved weight adds its exact
    # change to the S_j of the j in NN_k(i) (_move_terms) and only their keys are
    # recomputed, from fl(hi + lo) (afresh, signed_sum, when the sum no longer fits in
    # two doubles). Summing each touched S_j afresh read ~4 times as many terms (letter,
    # k = 10, T = 3m: ~37 keys of ~11 terms per step against ~10 moved weights x k).
    # The key loop stays in this function: with the arrays bound once here a key costs
    # a few ns; behind a call that takes arrays it cost 50-180 ns (reference counting,
    # numba 0.68), most of the 0.43 s a class took serially (now ~0.095 s, 2026-11-27:
    # accumulators 0.035, blocked maximum 0.034, steps and weights 0.020, keys 0.006).
    # Keys sit in a blocked maximum (_block_argmax); the step taken sums eta afresh in
    # increasing i (eta_of).
    star = _new_chooser(graph, sign, w, factor, lazy)
    key, width, bmax, barg, dirty, dirty_list, acc, _, touched, buf, moved = star
    next_snap = np.intp(0)
    for t in range(schedule.n_iter):
        j = lazy_index(schedule, t) if lazy else _block_argmax(key, width, bmax, barg, dirty, dirty_list)
        run.chosen[t] = j
        p0, p1 = rptr[j], rptr[j + 1]
        nj = p1 - p0
        delta = delta_of(factor, eta_of(graph, sign, w, j), nj)  # eq. (9)-(10), from scratch
        run.steps[t] = delta
        updates[t + 1] = updates[t] + nj
        if delta == 0.0:
            if not lazy:
                _block_update(key, width, bmax, barg, dirty, dirty_list, j, 0.0)
        else:
            run.alpha[j] += delta
            for p in range(p0, p1):
                i = rind[p]
                a = delta * sign[i] * sign[j]
                if not lazy:
                    moved[p - p0] = w[i]
                w[i] = weight_update(phi, w[i], a)  # eq. (11)
                edge[i] += a
                new_loss = bcl_value(phi, edge[i])
                risk_sum += new_loss - loss[i]
                loss[i] = new_loss
            n_touched = 0 if lazy else _move_terms(nbr, rind, sign, w, star, t, p0, p1)
            for q in range(n_touched):
                jj = touched[q]
                lo = acc[jj, 1]
                s = acc[jj, 0] + lo if lo == lo else signed_sum(graph, sign, w, jj, buf, acc)
                value = abs(delta_of(factor, s, rptr[jj + 1] - rptr[jj]))
                _block_update(key, width, bmax, barg, dirty, dirty_list, jj, value)
        run.risk[t + 1] = risk_sum / m
        next_snap = record_snapshots(schedule, t, next_snap, run.alpha, run.snaps)


@njit(nogil=True, cache=True)
def gnnb_train(
    c0, c1, graph, sign, schedule, phi, epsilon, alpha_t, risks, chosen_t, steps, snaps_t, w_t, updates
):
    """Train the classes c0 .. c1 - 1 of :func:`gnnb_fit` (each alone, into its own rows
    of the outputs: :func:`knnx._kernels.launch` splits them over threads)."""
    for ci in range(c0, c1):
        run = ClassRun(alpha_t[ci], risks[ci], chosen_t[ci], steps[ci], snaps_t[ci])
        _train_class(graph, sign[ci], schedule, phi, epsilon, GNNBRun(run, w_t[ci], updates[ci]))


def gnnb_fit(graph, ycode, n_classes, train_classes, schedule, phi, epsilon, tie_order):
    """Algorithm 1 of Nock et al. (2014), one class against the rest, classes in parallel
    (:func:`gnnb_train` on threads).

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
    args = (graph, sign, schedule, phi, epsilon, alpha_t, risks, chosen_t, steps, snaps_t, w_t, updates)
    launch(gnnb_train, n_tc, n_tc, 2, *args)
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
