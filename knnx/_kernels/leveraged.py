"""Kernels shared by the leveraged nearest-neighbour rules, UNN and GNNB.

Both learn one leveraging coefficient alpha_jc per (training example, class) and
predict with h_c(x) = sum over j in NN_k(x) of alpha_jc y_jc (eq. 6 of Piro et al.
2012, eq. 16 of Nock et al. 2014), y_jc = +1 if example j is of class c, else -1.
Training runs one class against the rest on the leave-one-out neighbour graph of
the training set and its reciprocal neighbourhoods; the state grouped here:

``Graph(neighbors, reverse_ptr, reverse_ind)``
    neighbors (m, k) intp: the leave-one-out k-NN graph, rows ordered by
    (distance, index). reverse_ind[reverse_ptr[j]:reverse_ptr[j + 1]] is the
    reciprocal neighbourhood R(j) = {i : j in NN_k(i)}, in increasing i
    (:func:`knnx.reciprocal_neighbors`); n_j = |R(j)|.
``Schedule(n_iter, lazy, order, snap_at)``
    T iterations per class; ``lazy``: leverage ``order[t % m]`` at iteration t,
    else the kernel's largest-|delta| chooser; ``snap_at`` (increasing counts in
    [1, T]): alpha is copied out after that many iterations (the rule after T'
    iterations is a prefix of the run, so one run serves every T' <= T).
``ClassRun(alpha, risk, chosen, steps, snaps)``
    The outputs of one class, filled in place: alpha (m,), surrogate risk after
    each iteration (T + 1,), index leveraged (T,), delta taken (T,), alpha after
    each snap_at count (len(snap_at), m).

Vote ties at prediction (:func:`predict_with_ties`) follow one of the rules
TIE_FREQUENT, TIE_NEAREST, TIE_LOWEST, TIE_RANDOM (see there).
"""

from collections import namedtuple

import numpy as np
from numba import njit

Graph = namedtuple("Graph", ["neighbors", "reverse_ptr", "reverse_ind"])
Schedule = namedtuple("Schedule", ["n_iter", "lazy", "order", "snap_at"])
ClassRun = namedtuple("ClassRun", ["alpha", "risk", "chosen", "steps", "snaps"])

TIE_FREQUENT, TIE_NEAREST, TIE_LOWEST, TIE_RANDOM = 0, 1, 2, 3


@njit(cache=True)
def class_signs(ycode, train_classes):
    """(n_trained, m) one-against-the-rest codes y_jc: +1 for the class, -1 for the rest."""
    n_tc = train_classes.shape[0]
    m = ycode.shape[0]
    sign = np.empty((n_tc, m))
    for ci in range(n_tc):
        for i in range(m):
            sign[ci, i] = 1.0 if ycode[i] == train_classes[ci] else -1.0
    return sign


@njit(cache=True)
def new_runs(n_trained, m, n_iter, n_snaps):
    """Zeroed per-class outputs: alpha (n_trained, m), risk (n_trained, T + 1), chosen and
    steps (n_trained, T), snaps (n_trained, n_snaps, m); row ci is class ci's ClassRun."""
    return (
        np.zeros((n_trained, m)),
        np.zeros((n_trained, n_iter + 1)),
        np.zeros((n_trained, n_iter), dtype=np.intp),
        np.zeros((n_trained, n_iter)),
        np.zeros((n_trained, n_snaps, m)),
    )


@njit(cache=True)
def lazy_index(schedule, t):
    """Example leveraged at iteration t by the lazy chooser: order[t mod m] (cycling if T > m)."""
    return schedule.order[t % schedule.order.shape[0]]


@njit(cache=True)
def record_snapshots(schedule, t, next_snap, alpha, snaps):
    """After iteration t (0-based), copy alpha into every snapshot due at t + 1; returns
    the index of the next snapshot due."""
    while next_snap < schedule.snap_at.shape[0] and schedule.snap_at[next_snap] == t + 1:
        row = snaps[next_snap]
        for i in range(alpha.shape[0]):  # a loop: an array assignment compiles a 2 s shape check
            row[i] = alpha[i]
        next_snap += 1
    return next_snap


@njit(cache=True)
def collect_touched(graph, moved_lo, moved_hi, t, stamp, touched):
    """The examples whose reciprocal neighbourhood holds a point that moved at iteration t.

    The points that moved are reverse_ind[moved_lo:moved_hi] (the leveraged example's
    R(j)); an example jj is touched when jj in NN_k(i) for one of them. ``stamp``
    (m,) marks the examples already listed at iteration t; they are written to
    ``touched`` in order of first appearance. Returns their number.
    """
    nbr = graph.neighbors
    k = nbr.shape[1]
    n_touched = 0
    for p in range(moved_lo, moved_hi):
        i = graph.reverse_ind[p]
        for q in range(k):
            jj = nbr[i, q]
            if stamp[jj] != t:
                stamp[jj] = t
                touched[n_touched] = jj
                n_touched += 1
    return n_touched


def merge_classes(risks, snaps_t):
    """Per-class runs to the fit's outputs: the risk averaged over the trained
    classes, (T + 1,), and the snapshots as (len(snap_at), m, n_trained). NumPy, called
    after the kernels (the classes' risks added in class order)."""
    n_tc = snaps_t.shape[0]
    risk = np.zeros(risks.shape[1])
    for ci in range(n_tc):
        risk += risks[ci]
    risk /= n_tc
    return risk, np.ascontiguousarray(np.transpose(snaps_t, (1, 2, 0)))


@njit(cache=True)
def argmax_class(h_row, tie_order):
    """Largest score; ties go to the class listed first in ``tie_order``."""
    best = tie_order[0]
    for q in range(1, tie_order.shape[0]):
        cls = tie_order[q]
        if h_row[cls] > h_row[best]:
            best = cls
    return best


@njit(cache=True)
def replay_errors(steps, chosen, sign, train_classes, n_classes, ycode, graph, tie_order):
    """Training error of the argmax rule after each iteration, replayed from the steps.

    The classes' steps are replayed in the interleaved order t = 1..T, c = 1..C:
    leveraging j by delta for class c adds delta y_jc to h_c(x_i) of every i in its
    reciprocal neighbourhood. ``steps`` and ``chosen`` are (n_trained, T); with two
    classes and one trained class (class 1), h_0 = -h_1. Score ties go to the class
    listed first in ``tie_order``. Returns (T + 1,) errors.
    """
    rptr, rind = graph.reverse_ptr, graph.reverse_ind
    n_tc, n_iter = steps.shape
    m = ycode.shape[0]
    binary_mirror = n_tc == 1 and n_classes == 2
    scores = np.zeros((m, n_classes))
    pred = np.empty(m, dtype=np.intp)
    n_err = 0
    for i in range(m):
        pred[i] = argmax_class(scores[i], tie_order)
        if pred[i] != ycode[i]:
            n_err += 1
    errors = np.empty(n_iter + 1)
    errors[0] = n_err / m
    for t in range(n_iter):
        for ci in range(n_tc):
            delta = steps[ci, t]
            if delta == 0.0:
                continue
            j = chosen[ci, t]
            cls = train_classes[ci]
            vote = delta * sign[ci, j]
            for p in range(rptr[j], rptr[j + 1]):
                i = rind[p]
                scores[i, cls] += vote
                was = pred[i]
                if binary_mirror:
                    scores[i, 0] = -scores[i, 1]
                    pred[i] = argmax_class(scores[i], tie_order)
                elif cls == was:
                    if vote < 0.0:  # the leader fell: rescan
                        pred[i] = argmax_class(scores[i], tie_order)
                elif scores[i, cls] > scores[i, was]:
                    pred[i] = cls
                elif scores[i, cls] == scores[i, was]:  # a tie: the tie order decides
                    pred[i] = argmax_class(scores[i], tie_order)
                n_err += (pred[i] != ycode[i]) - (was != ycode[i])
        errors[t + 1] = n_err / m
    return errors


@njit(cache=True)
def leveraged_scores(neigh_ind, alpha, ycode, n_classes, binary_mirror):
    """h_c(x) = sum over the neighbours j of alpha_jc y_jc (eq. 6 of Piro et al., eq. 16
    of Nock et al.), shape (n, n_classes). With ``binary_mirror`` alpha is (n_ref, 1),
    class 1's, and h_0 = -h_1."""
    n, kk = neigh_ind.shape
    h = np.zeros((n, n_classes))
    for q in range(n):
        for a in range(kk):
            j = neigh_ind[q, a]
            if binary_mirror:
                v = alpha[j, 0] if ycode[j] == 1 else -alpha[j, 0]
                h[q, 1] += v
                h[q, 0] -= v
            else:
                for cls in range(n_classes):
                    if ycode[j] == cls:
                        h[q, cls] += alpha[j, cls]
                    else:
                        h[q, cls] -= alpha[j, cls]
    return h


@njit(cache=True)
def predict_with_ties(scores, tie, tie_order, neigh_class, draws):
    """argmax_c scores[q, c] per row, ties broken by rule ``tie``.

    Among the classes sharing the row's top score (exact float64 equality):

    * TIE_FREQUENT: the class listed first in ``tie_order`` (classes by decreasing
      training frequency, then increasing code);
    * TIE_NEAREST: the class of the first neighbour in ``neigh_class[q]`` (class
      codes of the row's neighbours in search order, (distance, index); -1 pads)
      that is one of the tied classes; if none is, TIE_FREQUENT;
    * TIE_LOWEST: the smallest class code;
    * TIE_RANDOM: the tied class at position min(floor(draws[q] s), s - 1) of the s
      tied classes in increasing code (draws[q] uniform on [0, 1)).

    ``neigh_class`` is read only by TIE_NEAREST and ``draws`` only by TIE_RANDOM.
    """
    n, C = scores.shape
    out = np.empty(n, dtype=np.intp)
    for q in range(n):
        best = argmax_class(scores[q], tie_order)
        if tie == TIE_FREQUENT:
            out[q] = best
            continue
        top = scores[q, best]
        n_tied = 0
        lowest = -1
        for cls in range(C):
            if scores[q, cls] == top:
                if lowest < 0:
                    lowest = cls
                n_tied += 1
        if n_tied == 1 or tie == TIE_LOWEST:
            out[q] = lowest if n_tied > 1 else best
        elif tie == TIE_NEAREST:
            out[q] = best
            for a in range(neigh_class.shape[1]):
                cls = neigh_class[q, a]
                if cls >= 0 and scores[q, cls] == top:
                    out[q] = cls
                    break
        else:
            pick = min(int(np.floor(draws[q] * n_tied)), n_tied - 1)
            for cls in range(C):
                if scores[q, cls] == top:
                    if pick == 0:
                        out[q] = cls
                        break
                    pick -= 1
    return out


@njit(cache=True)
def two_sum(a, b):
    """(s, e) with s = fl(a + b) and s + e = a + b exactly (Knuth's TwoSum)."""
    s = a + b
    bp = s - a
    return s, (a - (s - bp)) + (b - bp)


@njit(cache=True)
def fsum_add(partials, n, x):
    """Add x to the exact sum held as ``n`` non-overlapping ``partials`` (Shewchuk's
    algorithm, as Python's math.fsum); returns the new count. ``partials`` needs one
    slot per term added."""
    i = 0
    for q in range(n):
        y = partials[q]
        if abs(x) < abs(y):
            x, y = y, x
        hi = x + y
        lo = y - (hi - x)
        if lo != 0.0:
            partials[i] = lo
            i += 1
        x = hi
    partials[i] = x
    return i + 1


@njit(cache=True)
def fsum_value(partials, n):
    """The exact sum of the partials rounded once to float64 (half to even), as
    math.fsum: it depends on the multiset of terms only, not on their order."""
    if n == 0:
        return 0.0
    n -= 1
    hi = partials[n]
    lo = 0.0
    while n > 0:
        x = hi
        n -= 1
        y = partials[n]
        hi = x + y
        yr = hi - x
        lo = y - yr
        if lo != 0.0:
            break
    if n > 0 and ((lo < 0.0 and partials[n - 1] < 0.0) or (lo > 0.0 and partials[n - 1] > 0.0)):
        y = lo * 2.0
        x = hi + y
        yr = x - hi
        if y == yr:
            hi = x
    return hi
