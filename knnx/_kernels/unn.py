"""UNN training kernels (Piro et al. 2012; D'Ambrosio et al. 2012); the shared
pieces (graph, schedule, scores, vote) are in knnx._kernels.leveraged.

One class c at a time is a binary problem on the codes y_ic in {-1, +1}. The state
of class c is the vector of edges rho_i = y_ic h_c(x_i) over the training points,
each computed on the leave-one-out neighbour graph; the weights are
w_i = -psi'(rho_i), recomputed from its edge whenever the edge moves (so they never
drift from the edges). Leveraging example j by delta moves rho_i by delta * r_ij for the
points i of its reciprocal neighbourhood, r_ij = y_ic y_jc (eq. 8-11 of Piro et al.).

Every function here takes plain arrays, integer codes and the named tuples of
knnx._kernels.leveraged (Graph, Schedule, ClassRun) and UNNRule / MaxHeap below;
knnx.estimators.unn holds the Python objects. Loss codes (``psi`` is the surrogate, c_amari = (1 - alpha) / 2):

    EXP              psi(x) = exp(-x)
    SQUARED          psi(x) = (1 - x)^2
    LOGISTIC         psi(x) = ln(1 + exp(-x))
    BINARY_LOGISTIC  psi(x) = log2(1 + 2^-x)
    MATSUSHITA       psi(x) = -x + sqrt(1 + x^2)
    AMARI            psi(x) = (1 + c x)^(-(1 - c) / c) / (1 - c),  x > -1/c
"""

from collections import namedtuple

import numpy as np
from numba import njit

from knnx._kernels import launch
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

EXP, SQUARED, LOGISTIC, BINARY_LOGISTIC, MATSUSHITA, AMARI = 0, 1, 2, 3, 4, 5
STEP_CLOSED_FORM, STEP_FAST, STEP_EXACT = 0, 1, 2
SMOOTH_NONE, SMOOTH_RAW, SMOOTH_NORMALIZED = 0, 1, 2
LN2 = np.log(2.0)


@njit(cache=True)
def _softplus(x):
    """ln(1 + exp(x)) without overflow."""
    if x > 0.0:
        return x + np.log1p(np.exp(-x))
    return np.log1p(np.exp(x))


@njit(cache=True)
def loss_value(loss, c, x):
    """psi(x); +inf outside the domain (Amari)."""
    if loss == EXP:
        return np.exp(-x)
    if loss == SQUARED:
        return (1.0 - x) * (1.0 - x)
    if loss == LOGISTIC:
        return _softplus(-x)
    if loss == BINARY_LOGISTIC:
        return _softplus(-x * LN2) / LN2
    if loss == MATSUSHITA:
        s = np.sqrt(1.0 + x * x)
        if x > 0.0:
            return 1.0 / (x + s)  # = s - x without cancellation
        return s - x
    base = 1.0 + c * x
    if base <= 0.0:
        return np.inf
    return base ** (-(1.0 - c) / c) / (1.0 - c)


@njit(cache=True)
def weight(loss, c, x):
    """w = -psi'(x) (> 0 for every loss but the squared one, where it is 2(1 - x))."""
    if loss == EXP:
        return np.exp(-x)
    if loss == SQUARED:
        return 2.0 * (1.0 - x)
    if loss == LOGISTIC:
        if x > 0.0:
            e = np.exp(-x)
            return e / (1.0 + e)
        return 1.0 / (1.0 + np.exp(x))
    if loss == BINARY_LOGISTIC:
        y = x * LN2
        if y > 0.0:
            e = np.exp(-y)
            return e / (1.0 + e)
        return 1.0 / (1.0 + np.exp(y))
    if loss == MATSUSHITA:
        s = np.sqrt(1.0 + x * x)
        if x > 0.0:
            return 1.0 / (s * (s + x))  # = 1 - x / s without cancellation
        return 1.0 - x / s
    base = 1.0 + c * x
    if base <= 0.0:
        return np.inf
    return base ** (-1.0 / c)


@njit(cache=True)
def curvature(loss, c, x):
    """psi''(x) = -dw/dx."""
    if loss == EXP:
        return np.exp(-x)
    if loss == SQUARED:
        return 2.0
    if loss == LOGISTIC or loss == BINARY_LOGISTIC:
        scale = 1.0 if loss == LOGISTIC else LN2
        w = weight(loss, c, x)
        return scale * w * (1.0 - w)
    if loss == MATSUSHITA:
        return (1.0 + x * x) ** -1.5
    base = 1.0 + c * x
    if base <= 0.0:
        return np.inf
    return base ** (-1.0 / c - 1.0)


@njit(cache=True)
def edge_of_weight(loss, c, w):
    """The edge x with weight(x) = w (the inverse of -psi')."""
    if loss == EXP:
        return -np.log(w)
    if loss == SQUARED:
        return 1.0 - 0.5 * w
    if loss == LOGISTIC:
        return np.log((1.0 - w) / w)
    if loss == BINARY_LOGISTIC:
        return np.log2((1.0 - w) / w)
    if loss == MATSUSHITA:
        return (1.0 - w) / np.sqrt(w * (2.0 - w))
    return (w ** (-c) - 1.0) / c


@njit(cache=True)
def posterior_link(loss, c, h):
    """p(y_c = 1 | h_c = h) = psi'(-h) / (psi'(h) + psi'(-h)) (eq. 11 of D'Ambrosio et al.)."""
    if loss == EXP:
        return 1.0 / (1.0 + np.exp(-2.0 * h))
    if loss == SQUARED:
        return min(1.0, max(0.0, 0.5 * (1.0 + h)))
    if loss == LOGISTIC:
        return 1.0 / (1.0 + np.exp(-h))
    if loss == BINARY_LOGISTIC:
        return 1.0 / (1.0 + np.exp(-h * LN2))
    if loss == MATSUSHITA:
        return 0.5 * (1.0 + h / np.sqrt(1.0 + h * h))
    if c * h >= 1.0:
        return 1.0
    if c * h <= -1.0:
        return 0.0
    return 1.0 / (1.0 + np.exp((np.log1p(-c * h) - np.log1p(c * h)) / c))


@njit(cache=True)
def closed_form_delta(loss, c, step, wp, wm, nj, eps):
    """delta_j from the reciprocal-neighbourhood sums w+ and w- (eq. 12).

    ``step == STEP_CLOSED_FORM``: Table 1 of Piro et al. for exp (exact), squared
    (exact: (w+ - w-) / (2 n_j)) and logistic; eq. (26) / Table 2 of D'Ambrosio et
    al. for the other losses. ``STEP_FAST``: eq. (26) for every loss (for squared:
    2W - 1). ``eps`` is the smoothing (13) added to w+ and w- (not for squared).
    NaN means "infinite" (a pure neighbourhood without smoothing).
    """
    if nj == 0:
        return 0.0
    if loss == SQUARED:
        if step == STEP_CLOSED_FORM:
            return (wp - wm) / (2.0 * nj)
        if wp + wm == 0.0:
            return 0.0
        return 2.0 * wp / (wp + wm) - 1.0
    a = wp + eps
    b = wm + eps
    if a <= 0.0 or b <= 0.0:
        if a <= 0.0 and b <= 0.0:
            return 0.0
        return np.nan
    if loss == EXP:
        return 0.5 * np.log(a / b)
    if loss == LOGISTIC:
        return np.log(a / b)
    if loss == BINARY_LOGISTIC:
        return np.log2(a / b)
    if loss == MATSUSHITA:
        # (2W - 1) / (2 sqrt(W (1 - W))) with W = a / (a + b)
        return (a - b) / (2.0 * np.sqrt(a * b))
    ac = a**c
    bc = b**c
    return (ac - bc) / (c * (ac + bc))


@njit(cache=True)
def _edge_slope(loss, c, ptr0, ptr1, rind, r_of, rho, delta, eps_edge, smooth):
    """g(delta) = sum_i r_i psi'(rho_i + delta r_i) (+ smoothing pair) and g'(delta)."""
    g = 0.0
    dg = 0.0
    for p in range(ptr0, ptr1):
        i = rind[p]
        r = r_of[p - ptr0]
        x = rho[i] + delta * r
        g -= r * weight(loss, c, x)
        dg += curvature(loss, c, x)
    if smooth:
        g -= weight(loss, c, eps_edge + delta) - weight(loss, c, eps_edge - delta)
        dg += curvature(loss, c, eps_edge + delta) + curvature(loss, c, eps_edge - delta)
    return g, dg


@njit(cache=True)
def exact_delta(loss, c, ptr0, ptr1, rind, r_of, rho, eps, guess):
    """Root of eq. (10) (plus the smoothing pair) by bracketed Newton; NaN if infinite
    (without smoothing: a pure neighbourhood, every r_ij of one sign, or a root beyond 1e12).

    Smoothing adds two phantom examples of weight ``eps`` at the same edge, one that
    agrees with j and one that does not: for exp this reproduces (13) exactly, and for
    every loss the step stays between 0 and the unsmoothed root, so the surrogate
    risk still decreases.
    """
    smooth = eps > 0.0 and loss != SQUARED
    if not smooth and loss != SQUARED and ptr1 > ptr0:
        # A pure neighbourhood (every r of one sign) has no finite root: psi' keeps one
        # sign. Say so, rather than stop where the weights underflow to 0.
        pure = True
        for p in range(ptr0 + 1, ptr1):
            if r_of[p - ptr0] != r_of[0]:
                pure = False
                break
        if pure:
            return np.nan
    eps_edge = edge_of_weight(loss, c, eps) if smooth else 0.0
    g0, _ = _edge_slope(loss, c, ptr0, ptr1, rind, r_of, rho, 0.0, eps_edge, smooth)
    if g0 == 0.0:
        return 0.0
    sign = 1.0 if g0 < 0.0 else -1.0
    # Amari: the edges must stay above -1/c; g -> +-inf at that bound.
    bound = np.inf
    if loss == AMARI:
        for p in range(ptr0, ptr1):
            r = r_of[p - ptr0]
            if r * sign < 0.0:
                bound = min(bound, rho[rind[p]] + 1.0 / c)
        if smooth:
            bound = min(bound, eps_edge + 1.0 / c)
    lo = 0.0
    hi = abs(guess) if guess == guess and guess * sign > 0.0 else 1.0
    if hi >= bound:
        hi = 0.5 * bound
    for _ in range(200):
        g, _ = _edge_slope(loss, c, ptr0, ptr1, rind, r_of, rho, sign * hi, eps_edge, smooth)
        if g * sign >= 0.0:
            break
        lo = hi
        hi = min(2.0 * hi, 0.5 * (hi + bound))
        if hi > 1e12:
            return np.nan
    x = 0.5 * (lo + hi)
    for _ in range(200):
        g, dg = _edge_slope(loss, c, ptr0, ptr1, rind, r_of, rho, sign * x, eps_edge, smooth)
        if g == 0.0:
            return sign * x
        if g * sign < 0.0:
            lo = x
        else:
            hi = x
        newton = x - sign * g / dg if dg > 0.0 else -1.0
        x = newton if lo < newton < hi else 0.5 * (lo + hi)
        if hi - lo <= 1e-15 * hi:
            break
    return sign * x


@njit(cache=True)
def _smoothing_eps(smoothing, total_weight, m):
    """Offset (13) added to w+ and w-: 1/m as printed, or 1/m of the normalised weights."""
    if smoothing == SMOOTH_RAW:
        return 1.0 / m
    if smoothing == SMOOTH_NORMALIZED:
        return total_weight / m
    return 0.0


MaxHeap = namedtuple("MaxHeap", ["key", "items", "pos"])
"""The boosting chooser's keys: key (m,) |delta_j|; items (m,) a binary max-heap of
indices ordered by (larger key, smaller index); pos (m,) each index's heap slot."""

UNNRule = namedtuple("UNNRule", ["loss", "amari_c", "step", "smoothing"])
"""Loss code, Amari c = (1 - alpha) / 2, STEP_* code, SMOOTH_* code."""


@njit(cache=True)
def _before(key, a, b):
    """Heap order: larger key first, then smaller index."""
    return key[a] > key[b] or (key[a] == key[b] and a < b)


@njit(cache=True)
def _sift_up(heap, p):
    key, items, pos = heap
    j = items[p]
    while p > 0:
        parent = (p - 1) >> 1
        q = items[parent]
        if not _before(key, j, q):
            break
        items[p] = q
        pos[q] = p
        p = parent
    items[p] = j
    pos[j] = p


@njit(cache=True)
def _sift_down(heap, p):
    key, items, pos = heap
    n = items.shape[0]
    j = items[p]
    while True:
        child = 2 * p + 1
        if child >= n:
            break
        if child + 1 < n and _before(key, items[child + 1], items[child]):
            child += 1
        q = items[child]
        if not _before(key, q, j):
            break
        items[p] = q
        pos[q] = p
        p = child
    items[p] = j
    pos[j] = p


@njit(cache=True)
def _set_key(heap, j, value):
    old = heap.key[j]
    heap.key[j] = value
    if value > old:
        _sift_up(heap, heap.pos[j])
    elif value < old:
        _sift_down(heap, heap.pos[j])


@njit(cache=True)
def _build_heap(key):
    """A MaxHeap over ``key`` (stable sort: equal keys in increasing index)."""
    m = key.shape[0]
    items = np.zeros(m, dtype=np.intp)
    pos = np.zeros(m, dtype=np.intp)
    ordr = np.argsort(-key, kind="mergesort")
    for p in range(m):
        items[p] = ordr[p]
        pos[ordr[p]] = p
    return MaxHeap(key, items, pos)


@njit(cache=True)
def _chooser_key(rule, w_agree, w_disagree, n_j, eps):
    """|delta_j| ranked by the boosting chooser: the closed form (exact for exp and
    squared) even when the steps are exact; an infinite step ranks as 0."""
    key_step = STEP_CLOSED_FORM if rule.step == STEP_EXACT else rule.step
    d = closed_form_delta(rule.loss, rule.amari_c, key_step, w_agree, w_disagree, n_j, eps)
    return abs(d) if d == d else 0.0


@njit(cache=True)
def _reciprocal_sums(graph, sign, w, j):
    """w+_j and w-_j of eq. (12): the weights of the points i of R(j) whose label
    agrees (y_ic = y_jc) and disagrees with j's, each summed in increasing i."""
    sp = 0.0
    sm = 0.0
    for p in range(graph.reverse_ptr[j], graph.reverse_ptr[j + 1]):
        i = graph.reverse_ind[p]
        if sign[i] == sign[j]:
            sp += w[i]
        else:
            sm += w[i]
    return sp, sm


@njit(cache=True)
def _exact_reciprocal_sums(graph, sign, w, j, agree_buf, disagree_buf):
    """w+_j and w-_j of eq. (12) correctly rounded (:func:`fsum_value`): functions of
    the multisets of the current weights only, whatever the order of R(j), so that
    examples whose sums are equal in exact arithmetic get equal chooser keys."""
    p0, p1 = graph.reverse_ptr[j], graph.reverse_ptr[j + 1]
    # Fast path: each sum kept as hi + lo (TwoSum); if adding the rounding errors into
    # lo never rounds, hi + lo is the exact sum and fl(hi + lo) its correct rounding.
    agree_hi = agree_lo = disagree_hi = disagree_lo = 0.0
    exact = True
    for p in range(p0, p1):
        i = graph.reverse_ind[p]
        if sign[i] == sign[j]:
            agree_hi, e = two_sum(agree_hi, w[i])
            agree_lo, e = two_sum(agree_lo, e)
        else:
            disagree_hi, e = two_sum(disagree_hi, w[i])
            disagree_lo, e = two_sum(disagree_lo, e)
        if e != 0.0:
            exact = False
    if exact:
        return agree_hi + agree_lo, disagree_hi + disagree_lo
    n_agree = np.intp(0)  # np.intp: not a literal (no second compile of fsum_add)
    n_disagree = np.intp(0)
    for p in range(p0, p1):
        i = graph.reverse_ind[p]
        if sign[i] == sign[j]:
            n_agree = fsum_add(agree_buf, n_agree, w[i])
        else:
            n_disagree = fsum_add(disagree_buf, n_disagree, w[i])
    return fsum_value(agree_buf, n_agree), fsum_value(disagree_buf, n_disagree)


@njit(cache=True)
def _step(graph, sign, rule, j, edge, w, eps, r_buf):
    """delta_j for leveraging example j: the closed form from the sums w+ and w- of
    eq. (12) taken afresh (:func:`_reciprocal_sums`), or the root of eq. (10) (``STEP_EXACT``, or an Amari
    step that would leave the loss's domain). Fills r_buf[:n_j] with r_ij = y_ic y_jc.
    Returns delta, NaN if infinite."""
    loss, c = rule.loss, rule.amari_c
    p0, p1 = graph.reverse_ptr[j], graph.reverse_ptr[j + 1]
    rind = graph.reverse_ind
    for p in range(p0, p1):
        r_buf[p - p0] = sign[rind[p]] * sign[j]
    sp, sm = _reciprocal_sums(graph, sign, w, j)
    key_step = STEP_CLOSED_FORM if rule.step == STEP_EXACT else rule.step
    delta = closed_form_delta(loss, c, key_step, sp, sm, p1 - p0, eps)
    if rule.step == STEP_EXACT or (loss == AMARI and delta == delta):
        outside = False
        if loss == AMARI and rule.step != STEP_EXACT:
            for p in range(p0, p1):
                if 1.0 + c * (edge[rind[p]] + delta * r_buf[p - p0]) <= 0.0:
                    outside = True
        if rule.step == STEP_EXACT or outside:
            delta = exact_delta(loss, c, p0, p1, rind, r_buf, edge, eps, delta)
    return delta


@njit(cache=True)
def _train_class(graph, sign, schedule, rule, run):
    """T iterations of Algorithm 1 of Piro et al. for one class (codes ``sign`` = y_ic).

    State: the edges rho_i = y_ic h_c(x_i) (eq. 4's arguments), moved by delta r_ij
    when j is leveraged, and their weights w_i = -psi'(rho_i) (eq. 11). The step taken
    uses w+_j, w-_j (eq. 12) summed afresh in increasing i. The boosting chooser ranks
    by |delta_j| from the same sums correctly rounded (:func:`_exact_reciprocal_sums`):
    after each step the sums of every example whose reciprocal neighbourhood holds a
    moved point are recomputed, never updated by differences, so the keys equal a
    from-scratch computation bit for bit, examples whose sums are equal in exact
    arithmetic tie, and ties go to the smallest index. ``SMOOTH_NORMALIZED``'s total
    weight is likewise summed afresh (correctly rounded) at each iteration.
    Writes ``run`` (a ClassRun) in place; returns the number of infinite steps skipped.
    """
    loss, c, smoothing = rule.loss, rule.amari_c, rule.smoothing
    rptr = graph.reverse_ptr
    lazy = schedule.lazy
    m = graph.neighbors.shape[0]
    edge = np.zeros(m)
    w = np.full(m, weight(loss, c, 0.0))
    max_nj = 1
    for j in range(m):
        max_nj = max(max_nj, rptr[j + 1] - rptr[j])
    r_buf = np.empty(max_nj)
    agree_buf = np.empty(max_nj + 1)
    disagree_buf = np.empty(max_nj + 1)
    w_agree = np.zeros(m)
    w_disagree = np.zeros(m)
    if not lazy:
        for j in range(m):
            w_agree[j], w_disagree[j] = _exact_reciprocal_sums(graph, sign, w, j, agree_buf, disagree_buf)
    total_weight = m * w[0] if m > 0 else 0.0
    risk_sum = m * loss_value(loss, c, 0.0)
    # Boosting chooser: a max-heap of |delta_j| (keys change only for the examples
    # whose reciprocal neighbourhood holds a point whose weight moved), unless the
    # smoothing changes with the total weight: every key moves, and a scan is exact.
    use_heap = (not lazy) and smoothing != SMOOTH_NORMALIZED
    key = np.zeros(m)
    if use_heap:
        eps = _smoothing_eps(smoothing, total_weight, m)
        for j in range(m):
            key[j] = _chooser_key(rule, w_agree[j], w_disagree[j], rptr[j + 1] - rptr[j], eps)
    heap = _build_heap(key)
    run.risk[0] = risk_sum / m
    stamp = np.full(m, -1, dtype=np.intp)
    touched = np.empty(m, dtype=np.intp)
    total_buf = np.empty(m + 1 if smoothing == SMOOTH_NORMALIZED else 0)
    n_infinite = 0
    next_snap = np.intp(0)
    for t in range(schedule.n_iter):
        if smoothing == SMOOTH_NORMALIZED:  # the total weight, correctly rounded
            n_part = np.intp(0)
            for i in range(m):
                n_part = fsum_add(total_buf, n_part, w[i])
            total_weight = fsum_value(total_buf, n_part)
        eps = _smoothing_eps(smoothing, total_weight, m)
        if lazy:
            j = lazy_index(schedule, t)
        elif use_heap:
            j = heap.items[0]
        else:
            j = 0
            best = -1.0
            for jj in range(m):
                a = _chooser_key(rule, w_agree[jj], w_disagree[jj], rptr[jj + 1] - rptr[jj], eps)
                if a > best:
                    best = a
                    j = jj
        run.chosen[t] = j
        run.steps[t] = 0.0
        p0, p1 = rptr[j], rptr[j + 1]
        delta = _step(graph, sign, rule, j, edge, w, eps, r_buf)
        if delta != delta:
            n_infinite += 1
            delta = 0.0
        if delta == 0.0:
            if use_heap:
                _set_key(heap, j, 0.0)
        else:
            run.alpha[j] += delta
            run.steps[t] = delta
            for p in range(p0, p1):
                i = graph.reverse_ind[p]
                old = edge[i]
                new = old + delta * r_buf[p - p0]
                edge[i] = new
                w[i] = weight(loss, c, new)
                risk_sum += loss_value(loss, c, new) - loss_value(loss, c, old)
            if not lazy:
                n_touched = collect_touched(graph, p0, p1, t, stamp, touched)
                for q in range(n_touched):
                    jj = touched[q]
                    w_agree[jj], w_disagree[jj] = _exact_reciprocal_sums(
                        graph, sign, w, jj, agree_buf, disagree_buf
                    )
                    if use_heap:
                        _set_key(
                            heap,
                            jj,
                            _chooser_key(rule, w_agree[jj], w_disagree[jj], rptr[jj + 1] - rptr[jj], eps),
                        )
        run.risk[t + 1] = risk_sum / m
        next_snap = record_snapshots(schedule, t, next_snap, run.alpha, run.snaps)
    return n_infinite


@njit(nogil=True, cache=True)
def unn_train(c0, c1, graph, sign, schedule, rule, alpha_t, risks, chosen_t, steps, snaps_t, n_inf):
    """Train the classes c0 .. c1 - 1 of :func:`unn_fit` (each alone, into its own rows
    of the outputs: :func:`knnx._kernels.launch` splits them over threads)."""
    for ci in range(c0, c1):
        run = ClassRun(alpha_t[ci], risks[ci], chosen_t[ci], steps[ci], snaps_t[ci])
        n_inf[ci] = _train_class(graph, sign[ci], schedule, rule, run)


def unn_fit(graph, ycode, n_classes, train_classes, schedule, rule, tie_order):
    """Algorithm 1 of Piro et al., one class against the rest, classes in parallel
    (:func:`unn_train` on threads).

    Parameters
    ----------
    graph : Graph (leave-one-out k-NN graph and its reciprocal CSR).
    ycode : (m,) class codes in [0, n_classes).
    train_classes : classes trained (all of them, or only class 1 for two classes:
        class 0 then has the same edges, alpha_0 = alpha_1 and h_0 = -h_1).
    schedule : Schedule; not lazy: the boosting chooser (largest |delta_j|, ties to
        the smallest j).
    rule : UNNRule (loss, Amari c, step and smoothing codes).
    tie_order : class priority used when training scores tie (curve only).

    Returns
    -------
    alpha : (m, len(train_classes)) leveraging coefficients.
    risk : (T + 1,) surrogate risk (4) averaged over the trained classes, after each
        iteration (index 0 = before any).
    errors : (T + 1,) training error of the argmax rule (neighbourhoods of the
        leave-one-out graph) after each iteration of every class, replayed from the
        recorded steps.
    chosen : (T, len(train_classes)) index leveraged at each iteration.
    n_infinite : steps skipped because delta was infinite (pure neighbourhood, no
        smoothing).
    snaps : (len(snap_at), m, len(train_classes)) alpha after snap_at[s] iterations.
    """
    m = graph.neighbors.shape[0]
    n_tc = train_classes.shape[0]
    sign = class_signs(ycode, train_classes)
    alpha_t, risks, chosen_t, steps, snaps_t = new_runs(n_tc, m, schedule.n_iter, schedule.snap_at.shape[0])
    n_inf = np.zeros(n_tc, dtype=np.intp)
    args = (graph, sign, schedule, rule, alpha_t, risks, chosen_t, steps, snaps_t, n_inf)
    launch(unn_train, n_tc, n_tc, 2, *args)
    errors = replay_errors(steps, chosen_t, sign, train_classes, n_classes, ycode, graph, tie_order)
    risk, snaps = merge_classes(risks, snaps_t)
    return alpha_t.T.copy(), risk, errors, chosen_t.T.copy(), n_inf.sum(), snaps


@njit(cache=True)
def unn_proba(h, loss, c):
    """Per-class posterior estimates, normalised over classes (uniform if all are 0)."""
    n, C = h.shape
    out = np.empty((n, C))
    for q in range(n):
        s = 0.0
        for cls in range(C):
            v = posterior_link(loss, c, h[q, cls])
            out[q, cls] = v
            s += v
        for cls in range(C):
            out[q, cls] = out[q, cls] / s if s > 0.0 else 1.0 / C
    return out
