"""UNN training and voting kernels (Piro et al. 2012; D'Ambrosio et al. 2012).

One class c at a time is a binary problem on the codes y_ic in {-1, +1}. The state
of class c is the vector of edges rho_i = y_ic h_c(x_i) over the training points,
each computed on the leave-one-out neighbour graph; the weights are
w_i = -psi'(rho_i) (so they are never stored apart from the edges, and never drift
from them). Leveraging example j by delta moves rho_i by delta * r_ij for the
points i of its reciprocal neighbourhood, r_ij = y_ic y_jc (eq. 8-11 of Piro et al.).

Every function here takes plain arrays and integer codes; knnx.unn holds the
Python objects. Loss codes (``psi`` is the surrogate, c_amari = (1 - alpha) / 2):

    EXP              psi(x) = exp(-x)
    SQUARED          psi(x) = (1 - x)^2
    LOGISTIC         psi(x) = ln(1 + exp(-x))
    BINARY_LOGISTIC  psi(x) = log2(1 + 2^-x)
    MATSUSHITA       psi(x) = -x + sqrt(1 + x^2)
    AMARI            psi(x) = (1 + c x)^(-(1 - c) / c) / (1 - c),  x > -1/c
"""

import numpy as np
from numba import njit, prange

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


@njit(cache=True)
def _before(key, a, b):
    """Heap order: larger key first, then smaller index."""
    return key[a] > key[b] or (key[a] == key[b] and a < b)


@njit(cache=True)
def _sift_up(heap, pos, key, p):
    j = heap[p]
    while p > 0:
        parent = (p - 1) >> 1
        q = heap[parent]
        if not _before(key, j, q):
            break
        heap[p] = q
        pos[q] = p
        p = parent
    heap[p] = j
    pos[j] = p


@njit(cache=True)
def _sift_down(heap, pos, key, p):
    n = heap.shape[0]
    j = heap[p]
    while True:
        child = 2 * p + 1
        if child >= n:
            break
        if child + 1 < n and _before(key, heap[child + 1], heap[child]):
            child += 1
        q = heap[child]
        if not _before(key, q, j):
            break
        heap[p] = q
        pos[q] = p
        p = child
    heap[p] = j
    pos[j] = p


@njit(cache=True)
def _set_key(heap, pos, key, j, value):
    old = key[j]
    key[j] = value
    if value > old:
        _sift_up(heap, pos, key, pos[j])
    elif value < old:
        _sift_down(heap, pos, key, pos[j])


@njit(cache=True)
def _argmax_class(h_row, tie_order):
    """Largest score; ties go to the class listed first in ``tie_order``."""
    best = tie_order[0]
    for q in range(1, tie_order.shape[0]):
        cls = tie_order[q]
        if h_row[cls] > h_row[best]:
            best = cls
    return best


@njit(cache=True)
def class_signs(ycode, train_classes):
    """(n_trained, m) one-against-the-rest codes: +1 for the class, -1 for the rest."""
    n_tc = train_classes.shape[0]
    m = ycode.shape[0]
    sign = np.empty((n_tc, m))
    for ci in range(n_tc):
        for i in range(m):
            sign[ci, i] = 1.0 if ycode[i] == train_classes[ci] else -1.0
    return sign


@njit(cache=True)
def merge_classes(risks, snaps_t):
    """Per-class runs to the fit's outputs: the risk averaged over the trained
    classes, (T + 1,), and the snapshots as (len(snap_at), m, n_trained)."""
    n_tc, n_snap, m = snaps_t.shape
    risk = np.zeros(risks.shape[1])
    for ci in range(n_tc):
        risk += risks[ci]
    risk /= n_tc
    snaps = np.zeros((n_snap, m, n_tc))
    for ci in range(n_tc):
        for s in range(n_snap):
            snaps[s, :, ci] = snaps_t[ci, s]
    return risk, snaps


@njit(cache=True)
def replay_errors(steps, chosen, sign, train_classes, n_classes, ycode, rptr, rind, tie_order):
    """Training error of the argmax rule after each iteration, replayed from the steps.

    The classes' steps are replayed in the interleaved order t = 1..T, c = 1..C:
    leveraging j by delta for class c adds delta y_jc to h_c(x_i) of every i in its
    reciprocal neighbourhood. ``steps`` and ``chosen`` are (n_trained, T); with two
    classes and one trained class (class 1), h_0 = -h_1. Returns (T + 1,) errors.
    """
    n_tc, n_iter = steps.shape
    m = ycode.shape[0]
    binary_mirror = n_tc == 1 and n_classes == 2
    scores = np.zeros((m, n_classes))
    pred = np.empty(m, dtype=np.intp)
    n_err = 0
    for i in range(m):
        pred[i] = _argmax_class(scores[i], tie_order)
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
                    pred[i] = _argmax_class(scores[i], tie_order)
                elif cls == was:
                    if vote < 0.0:  # the leader fell: rescan
                        pred[i] = _argmax_class(scores[i], tie_order)
                elif scores[i, cls] > scores[i, was]:
                    pred[i] = cls
                elif scores[i, cls] == scores[i, was]:  # a tie: the tie order decides
                    pred[i] = _argmax_class(scores[i], tie_order)
                n_err += (pred[i] != ycode[i]) - (was != ycode[i])
        errors[t + 1] = n_err / m
    return errors


@njit(cache=True)
def _train_class(
    nbr,
    rptr,
    rind,
    sign,
    n_iter,
    lazy,
    order,
    loss,
    c,
    step,
    smoothing,
    snap_at,
    alpha,
    risk,
    chosen,
    steps,
    snaps,
):
    """T iterations of Algorithm 1 for one class (codes ``sign`` in {-1, +1}).

    Writes alpha (m,), risk (T + 1,), chosen (T,), steps (T,) and snaps
    (len(snap_at), m) in place; returns the number of infinite steps skipped.
    """
    m, k = nbr.shape
    rho = np.zeros(m)
    wp = np.zeros(m)
    wm = np.zeros(m)
    w0 = weight(loss, c, 0.0)
    for j in range(m):
        for p in range(rptr[j], rptr[j + 1]):
            if sign[rind[p]] == sign[j]:
                wp[j] += w0
            else:
                wm[j] += w0
    wsum = m * w0
    risk_sum = m * loss_value(loss, c, 0.0)
    # Boosting chooser: a max-heap of |delta_j| (keys change only for the examples
    # whose reciprocal neighbourhood holds a point whose weight moved), unless the
    # smoothing changes with the total weight: every key moves, and a scan is exact.
    use_heap = (not lazy) and smoothing != SMOOTH_NORMALIZED
    # With exact steps the chooser ranks by the closed forms (exact for exp and squared).
    key_step = STEP_CLOSED_FORM if step == STEP_EXACT else step
    key = np.zeros(m)
    heap = np.zeros(m, dtype=np.intp)
    hpos = np.zeros(m, dtype=np.intp)
    if use_heap:
        eps = _smoothing_eps(smoothing, wsum, m)
        for j in range(m):
            d = closed_form_delta(loss, c, key_step, wp[j], wm[j], rptr[j + 1] - rptr[j], eps)
            key[j] = abs(d) if d == d else 0.0
        ordr = np.argsort(-key, kind="mergesort")
        for p in range(m):
            heap[p] = ordr[p]
            hpos[ordr[p]] = p
    risk[0] = risk_sum / m
    stamp = np.full(m, -1, dtype=np.intp)
    touched = np.empty(m, dtype=np.intp)
    max_nj = 1
    for j in range(m):
        max_nj = max(max_nj, rptr[j + 1] - rptr[j])
    r_buf = np.empty(max_nj)
    n_infinite = 0
    next_snap = 0
    for t in range(n_iter):
        eps = _smoothing_eps(smoothing, wsum, m)
        if lazy:
            j = order[t % m]
        elif use_heap:
            j = heap[0]
        else:
            j = 0
            best = -1.0
            for jj in range(m):
                d = closed_form_delta(loss, c, key_step, wp[jj], wm[jj], rptr[jj + 1] - rptr[jj], eps)
                a = abs(d) if d == d else 0.0
                if a > best:
                    best = a
                    j = jj
        chosen[t] = j
        steps[t] = 0.0
        p0, p1 = rptr[j], rptr[j + 1]
        # Fresh sums for the chosen example (no drift in the step actually taken).
        sp = 0.0
        sm = 0.0
        for p in range(p0, p1):
            i = rind[p]
            r = sign[i] * sign[j]
            r_buf[p - p0] = r
            if r > 0.0:
                sp += weight(loss, c, rho[i])
            else:
                sm += weight(loss, c, rho[i])
        wp[j] = sp
        wm[j] = sm
        delta = closed_form_delta(loss, c, key_step, sp, sm, p1 - p0, eps)
        if step == STEP_EXACT or (loss == AMARI and delta == delta):
            outside = False
            if loss == AMARI and step != STEP_EXACT:
                for p in range(p0, p1):
                    if 1.0 + c * (rho[rind[p]] + delta * r_buf[p - p0]) <= 0.0:
                        outside = True
            if step == STEP_EXACT or outside:
                delta = exact_delta(loss, c, p0, p1, rind, r_buf, rho, eps, delta)
        if delta != delta:
            n_infinite += 1
            delta = 0.0
        if delta == 0.0:
            if use_heap:
                _set_key(heap, hpos, key, j, 0.0)
        else:
            alpha[j] += delta
            steps[t] = delta
            n_touched = 0
            for p in range(p0, p1):
                i = rind[p]
                old = rho[i]
                new = old + delta * r_buf[p - p0]
                rho[i] = new
                dw = weight(loss, c, new) - weight(loss, c, old)
                risk_sum += loss_value(loss, c, new) - loss_value(loss, c, old)
                wsum += dw
                for q in range(k):
                    jj = nbr[i, q]
                    if sign[i] == sign[jj]:
                        wp[jj] += dw
                    else:
                        wm[jj] += dw
                    if stamp[jj] != t:
                        stamp[jj] = t
                        touched[n_touched] = jj
                        n_touched += 1
            if use_heap:
                for q in range(n_touched):
                    jj = touched[q]
                    d = closed_form_delta(loss, c, key_step, wp[jj], wm[jj], rptr[jj + 1] - rptr[jj], eps)
                    _set_key(heap, hpos, key, jj, abs(d) if d == d else 0.0)
        risk[t + 1] = risk_sum / m
        while next_snap < snap_at.shape[0] and snap_at[next_snap] == t + 1:
            snaps[next_snap] = alpha
            next_snap += 1
    return n_infinite


@njit(cache=True, parallel=True)
def unn_fit(
    nbr,
    rptr,
    rind,
    ycode,
    n_classes,
    train_classes,
    n_iter,
    lazy,
    order,
    loss,
    c,
    step,
    smoothing,
    tie_order,
    snap_at,
):
    """Algorithm 1 of Piro et al., one class against the rest, classes in parallel.

    Parameters
    ----------
    nbr : (m, k) leave-one-out neighbour graph; rptr, rind : its reciprocal CSR.
    ycode : (m,) class codes in [0, n_classes).
    train_classes : classes trained (all of them, or only class 1 for two classes:
        class 0 then has the same edges, alpha_0 = alpha_1 and h_0 = -h_1).
    n_iter : T, iterations per class. lazy : visit ``order`` cyclically, else the
        boosting chooser (largest |delta_j|, ties to the smallest j).
    tie_order : class priority used when training scores tie (curve only).
    snap_at : increasing iteration counts in [1, T] at which alpha is copied out
        (the rule after T' iterations is a prefix of the run, so one run serves
        every T' <= T).

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
    m = nbr.shape[0]
    n_tc = train_classes.shape[0]
    sign = class_signs(ycode, train_classes)
    alpha_t = np.zeros((n_tc, m))
    risks = np.zeros((n_tc, n_iter + 1))
    chosen_t = np.zeros((n_tc, n_iter), dtype=np.intp)
    steps = np.zeros((n_tc, n_iter))
    snaps_t = np.zeros((n_tc, snap_at.shape[0], m))
    n_inf = np.zeros(n_tc, dtype=np.intp)
    for ci in prange(n_tc):
        n_inf[ci] = _train_class(
            nbr,
            rptr,
            rind,
            sign[ci],
            n_iter,
            lazy,
            order,
            loss,
            c,
            step,
            smoothing,
            snap_at,
            alpha_t[ci],
            risks[ci],
            chosen_t[ci],
            steps[ci],
            snaps_t[ci],
        )
    errors = replay_errors(steps, chosen_t, sign, train_classes, n_classes, ycode, rptr, rind, tie_order)
    risk, snaps = merge_classes(risks, snaps_t)
    return alpha_t.T.copy(), risk, errors, chosen_t.T.copy(), n_inf.sum(), snaps


@njit(cache=True)
def unn_scores(neigh_ind, alpha, ycode, n_classes, binary_mirror):
    """h_c(x) = sum over the neighbours j of alpha_jc y_jc (eq. 6), shape (n, n_classes)."""
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
def unn_predict(h, tie_order):
    n = h.shape[0]
    out = np.empty(n, dtype=np.intp)
    for q in range(n):
        out[q] = _argmax_class(h[q], tie_order)
    return out


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
