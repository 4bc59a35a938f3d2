"""Candidate lists and their certificates for the weighted descent (CW, PW, CPW).

Every epoch of the descent needs, for each training row x, its nearest same-class and
different-class prototype under the current weights (W, v). The weights move little
from one epoch to the next, so the L nearest of each kind found under earlier
"reference" weights (W_r, v_r) usually still hold the nearest one. This module keeps
the search exact:

* :func:`nearest_lists` is the full search of :mod:`knnx._kernels.weighted` for a
  subset of rows, keeping the L + 1 nearest same-class and different-class prototypes
  of each (ordered by (dissimilarity, index)) instead of the first only. The first L
  are the row's candidates; the (L + 1)-th dissimilarity t is the threshold: every
  prototype outside the list is at D_r >= t.
* :func:`certified_nearest` evaluates the candidates exactly under (W, v), with the
  very arithmetic of ``_block_values`` (so the values are bit for bit the full
  search's), takes the best by (dissimilarity, index), and certifies it: a prototype p
  of class c outside the list has, with s = sqrt(D),

      s_true(x, p) >= rho_c * s_r_true(x, p),   rho_c = min_j |w_cj / w_r,cj| * min_{p in c} |v_p / v_r,p|

  (each feature's weight shrinks by at most the smallest ratio; features with
  w_r,cj = 0 add nothing under W_r and something >= 0 under W), and the computed values
  are within a relative (m + 10) 2^-52 and an absolute
  4 * 2^-52 * max|W| * max|v| * (|x| + max_p |p|) of the true ones (the rounding of the
  products w x, their differences, the sum and the factor v). The best candidate is
  certified when this lower bound on every outside prototype is strictly above it; a
  row whose certificate fails is searched in full by the caller.

The caller uses these kernels only when no dissimilarity can overflow (see
``CertifiedSearch``); the full search's behaviour on non-finite values is the
reference. As a second guard, a non-finite candidate value makes its row report ``-1``
in ``ok``, and the caller then falls back to the full search.

Each of the four kernels takes first the range u0, u1 of its units (query blocks of
QUERY_BLOCK rows for :func:`nearest_lists`, rows for the others) and releases the GIL;
:func:`knnx._kernels.launch` splits the units over threads. A unit writes only its own
outputs, so the results do not depend on the split.
"""

import numpy as np
from numba import njit

from knnx._kernels.weighted import BLOCK, QUERY_BLOCK, _block_values

EPS = 2.0**-52  # twice the unit roundoff of float64


@njit(cache=True, nogil=True)
def _insert(ind, dist, i, filled, val, idx):
    """Insert (val, idx) into row i of the sorted lists (ind, dist) holding ``filled``
    entries of at most ind.shape[1]; returns the new count. The caller has checked that
    the entry belongs in the list."""
    size = ind.shape[1]
    if filled == size:
        t = size - 1
    else:
        t = filled
        filled += 1
    while t > 0 and (dist[i, t - 1] > val or (dist[i, t - 1] == val and ind[i, t - 1] > idx)):
        dist[i, t] = dist[i, t - 1]
        ind[i, t] = ind[i, t - 1]
        t -= 1
    dist[i, t] = val
    ind[i, t] = idx
    return filled


@njit(cache=True, nogil=True)
def _lists_block(
    qb, X, y, W, PT, v_sorted, order, starts, l1, rows, ind_s, dist_s, ind_d, dist_d, class_min, finite
):
    """Block ``qb`` of QUERY_BLOCK rows of :func:`nearest_lists`."""
    n_rows = rows.shape[0]
    m = X.shape[1]
    size = ind_s.shape[1]
    n_classes = W.shape[0]
    i0 = qb * QUERY_BLOCK
    nq = min(n_rows, i0 + QUERY_BLOCK) - i0
    q = np.empty((nq, m))
    acc = np.empty(BLOCK)
    fs = np.zeros(nq, dtype=np.intp)
    fd = np.zeros(nq, dtype=np.intp)
    # the last entry of each list (inf and the largest index while it is not full)
    ws = np.full(nq, np.inf)
    wd = np.full(nq, np.inf)
    ks = np.full(nq, np.iinfo(np.intp).max, dtype=np.intp)
    kd = np.full(nq, np.iinfo(np.intp).max, dtype=np.intp)
    bad = np.zeros(nq, dtype=np.bool_)
    for a in range(nq):
        for t in range(size):
            ind_s[i0 + a, t] = -1
            ind_d[i0 + a, t] = -1
            dist_s[i0 + a, t] = np.inf
            dist_d[i0 + a, t] = np.inf
    for c in range(n_classes):
        s0, s1 = starts[c], starts[c + 1]
        for a in range(nq):
            class_min[i0 + a, c] = np.inf
        if s0 == s1:
            continue
        for a in range(nq):
            for j in range(m):
                q[a, j] = W[c, j] * X[rows[i0 + a], j]
        for p0 in range(s0, s1, BLOCK):
            p1 = min(p0 + BLOCK, s1)
            for a in range(nq):
                i = rows[i0 + a]
                r = i0 + a
                _block_values(q[a], PT, v_sorted, p0, p1, l1, acc)
                if y[i] == c:
                    for b in range(p1 - p0):
                        val = acc[b]
                        idx = order[p0 + b]
                        if not val < np.inf:
                            bad[a] = True
                        elif (val < ws[a] or (val == ws[a] and idx < ks[a])) and idx != i:
                            fs[a] = _insert(ind_s, dist_s, r, fs[a], val, idx)
                            if fs[a] == size:
                                ws[a], ks[a] = dist_s[r, size - 1], ind_s[r, size - 1]
                else:
                    for b in range(p1 - p0):
                        val = acc[b]
                        idx = order[p0 + b]
                        if val < class_min[r, c]:
                            class_min[r, c] = val
                        if not val < np.inf:
                            bad[a] = True
                        elif val < wd[a] or (val == wd[a] and idx < kd[a]):
                            fd[a] = _insert(ind_d, dist_d, r, fd[a], val, idx)
                            if fd[a] == size:
                                wd[a], kd[a] = dist_d[r, size - 1], ind_d[r, size - 1]
    for a in range(nq):
        finite[i0 + a] = not bad[a]


@njit(cache=True, nogil=True)
def nearest_lists(
    u0, u1, X, y, W, PT, v_sorted, order, starts, l1, rows, ind_s, dist_s, ind_d, dist_d, class_min, finite
):
    """The L1 = ind_s.shape[1] nearest same-class and different-class prototypes of each
    training row ``rows[a]`` (never itself), sorted by (dissimilarity, index); padded
    with index -1 and dissimilarity inf; ``class_min[a, c]`` is the smallest
    dissimilarity to a prototype of class c (inf for the row's own class and for an
    empty class). ``finite[a]`` is False when a dissimilarity seen for the row is not
    finite. Arguments as ``same_diff_neighbors``."""
    for qb in range(u0, u1):
        _lists_block(
            qb,
            X,
            y,
            W,
            PT,
            v_sorted,
            order,
            starts,
            l1,
            rows,
            ind_s,
            dist_s,
            ind_d,
            dist_d,
            class_min,
            finite,
        )


@njit(cache=True, nogil=True, inline="always")
def _sums(X, W, P, x, p0, p1, p2, p3, c0, c1, c2, c3, l1):
    """sum_j of (w_cj x_j - P[p, j])^2 (or |.|) for four candidates p of classes c: four
    independent sums side by side, each in feature order."""
    a0 = a1 = a2 = a3 = 0.0
    if l1:
        for j in range(X.shape[1]):
            xj = X[x, j]
            a0 += abs(W[c0, j] * xj - P[p0, j])
            a1 += abs(W[c1, j] * xj - P[p1, j])
            a2 += abs(W[c2, j] * xj - P[p2, j])
            a3 += abs(W[c3, j] * xj - P[p3, j])
    else:
        for j in range(X.shape[1]):
            xj = X[x, j]
            d0 = W[c0, j] * xj - P[p0, j]
            d1 = W[c1, j] * xj - P[p1, j]
            d2 = W[c2, j] * xj - P[p2, j]
            d3 = W[c3, j] * xj - P[p3, j]
            a0 += d0 * d0
            a1 += d1 * d1
            a2 += d2 * d2
            a3 += d3 * d3
    return a0, a1, a2, a3


@njit(cache=True, nogil=True, inline="always")
def _take(val, p, vp, l1, best, bidx):
    """The smaller of (best, bidx) and candidate p's (D, p), D from its sum ``val``."""
    if l1:
        s = vp * val
        d = s * s
    else:
        d = (vp * vp) * val
    if not d < np.inf:
        return np.nan, -2  # not finite: the caller falls back to the full search
    if bidx == -1 or d < best or (d == best and p < bidx):
        return d, p
    return best, bidx


@njit(cache=True, nogil=True)
def _best(X, y, W, v, P, x, cand, l1):
    """(dissimilarity, index) of the nearest candidate of row x under (W, v), ties to the
    smaller index; (inf, -1) for an empty list; nan when a value is not finite.

    ``P[p] = W[y[p]] * X[p]`` (the scaled prototypes, one product each). Each value is
    computed exactly as ``_block_values`` does (products w x rounded once, the sum in
    feature order, then the factor v); the minimum of (value, index) pairs does not
    depend on the order they are compared in."""
    size = 0
    while size < cand.shape[1] and cand[x, size] >= 0:
        size += 1
    best, bidx = np.inf, -1
    for t0 in range(0, size, 4):
        p0 = cand[x, t0]
        p1 = cand[x, t0 + 1] if t0 + 1 < size else p0
        p2 = cand[x, t0 + 2] if t0 + 2 < size else p0
        p3 = cand[x, t0 + 3] if t0 + 3 < size else p0
        s0, s1, s2, s3 = _sums(X, W, P, x, p0, p1, p2, p3, y[p0], y[p1], y[p2], y[p3], l1)
        best, bidx = _take(s0, p0, v[p0], l1, best, bidx)
        best, bidx = _take(s1, p1, v[p1], l1, best, bidx)
        best, bidx = _take(s2, p2, v[p2], l1, best, bidx)
        best, bidx = _take(s3, p3, v[p3], l1, best, bidx)
        if bidx == -2:
            return np.nan, -1
    return best, bidx


@njit(cache=True, nogil=True)
def _above(lb, best, g):
    """A lower bound ``lb`` on sqrt(D) certifies ``best`` when strictly above it."""
    return lb > 0.0 and lb * lb * (1.0 - g) > best


@njit(cache=True, nogil=True)
def _knapsack(T, X, x, a_sorted, a_order, w_ref, lo, hi, vmax2):
    """min sum_j a_j z_j over 0 <= z_j <= cap_j with sum_j z_j >= T (greedy on a_j
    ascending): a lower bound on sum_j (w_j / w_r,j)^2 z_j for any prototype p of the class
    with D_r(x, p) >= T, where z_j = v_r,p^2 (w_r,j (x_j - p_j))^2 and cap_j bounds it
    through the class's range of feature j and its largest |v_r|."""
    remaining = T
    total = 0.0
    last = 0.0
    for t in range(a_sorted.shape[0]):
        j = a_order[t]
        e = max(abs(X[x, j] - lo[j]), abs(X[x, j] - hi[j])) * abs(w_ref[j])
        cap = vmax2 * e * e * (1.0 + 1e-9)
        if cap == 0.0:
            continue  # z_j = 0 for every prototype (a_j may be inf here)
        last = a_sorted[t]
        if cap >= remaining:
            return total + last * remaining
        total += last * cap
        remaining -= cap
    return total + last * remaining  # caps cannot reach T: no such prototype, any bound holds


@njit(cache=True, nogil=True)
def _lower(
    X, x, c, k, root, best, rw, rv, vmax, a_sorted, a_order, W_ref, lo, hi, slack_ref, slack_new, norm, g, l1
):
    """A lower bound on the computed sqrt(D) under the new weights of every prototype of
    class c outside x's list, whose computed sqrt(D_r) under reference k is >= ``root``:
    inf when there is none, 0 when no bound holds. The ratio bound when it already clears
    ``best``, else the larger of it and the knapsack bound (Euclidean base)."""
    if root == np.inf:
        return np.inf
    base = root * (1.0 - g) - slack_ref[k] * norm  # exact sqrt(D_r) >= base
    if base <= 0.0:
        return 0.0
    cheap = max(0.0, (rw[k, c] * rv[k, c] * base - slack_new * norm) * (1.0 - g))
    if l1 or _above(cheap, best, g):
        return cheap
    K = _knapsack(
        base * base, X, x, a_sorted[k, c], a_order[k, c], W_ref[k, c], lo[c], hi[c], vmax[k, c] ** 2
    )
    return max(cheap, (rv[k, c] * np.sqrt(K) * (1.0 - g) - slack_new * norm) * (1.0 - g))


@njit(cache=True, nogil=True)
def _certified_nearest_one(
    x,
    X,
    y,
    W,
    v,
    P,
    cand_s,
    cand_d,
    root_s,
    root_d,
    slot,
    rw,
    rv,
    vmax,
    a_sorted,
    a_order,
    W_ref,
    lo,
    hi,
    slack_ref,
    slack_new,
    norms,
    g,
    l1,
    same,
    diff,
    d_same,
    d_diff,
    ok,
):
    """One x of :func:`certified_nearest`."""
    n_classes = root_d.shape[1]
    bs, js = _best(X, y, W, v, P, x, cand_s, l1)
    bd, jd = _best(X, y, W, v, P, x, cand_d, l1)
    same[x], diff[x], d_same[x], d_diff[x] = js, jd, bs, bd
    if bs != bs or bd != bd:
        ok[x] = -1
        return
    k, own = slot[x], y[x]
    lb = _lower(
        X, x, own, k, root_s[x], bs, rw, rv, vmax, a_sorted, a_order, W_ref, lo, hi, slack_ref, slack_new,
        norms[x], g, l1,
    )  # fmt: skip
    good = _above(lb, bs, g)
    # the ratio bound inline first (most classes are far); _lower adds the knapsack
    base_slack = slack_ref[k] * norms[x]
    new_slack = slack_new * norms[x]
    need = bd / (1.0 - g)
    c = 0
    while good and c < n_classes:
        root = root_d[x, c]
        if c != own and root < np.inf:
            cheap = (rw[k, c] * rv[k, c] * (root * (1.0 - g) - base_slack) - new_slack) * (1.0 - g)
            if cheap > 0.0 and cheap * cheap > need:
                c += 1
                continue
            lb = _lower(
                X, x, c, k, root_d[x, c], bd, rw, rv, vmax, a_sorted, a_order, W_ref, lo, hi, slack_ref,
                slack_new, norms[x], g, l1,
            )  # fmt: skip
            good = _above(lb, bd, g)
        c += 1
    ok[x] = 1 if good else 0


@njit(cache=True, nogil=True)
def certified_nearest(
    u0, u1, X, y, W, v, P, cand_s, cand_d, root_s, root_d, slot, rw, rv, vmax, a_sorted, a_order, W_ref, lo, hi,
    slack_ref, slack_new, norms, g, l1, same, diff, d_same, d_diff, ok,
):  # fmt: skip
    """The nearest same-class and different-class candidate of every row under (W, v)
    and whether both are certified exact: ok[x] = 1 (certified), 0 (not), -1 (a
    non-finite value). ``P[p] = W[y[p]] * X[p]``.

    ``slot[x]`` names the reference k of x's lists. ``root_s[x]``: computed sqrt(D_r) of
    every same-class prototype outside the list is >= it (inf: none outside);
    ``root_d[x, c]``: likewise for class c's prototypes outside the different-class
    list. Per reference k and class c: ``rw`` = min_j |w_cj / w_r,cj|, ``rv`` = min_p
    |v_p / v_r,p|, ``vmax`` = max_p |v_r,p|, ``a_sorted`` / ``a_order`` the ratios
    (w_cj / w_r,cj)^2 in ascending order and their features, ``W_ref`` the reference
    weights; ``lo`` / ``hi`` (C, m) each class's range of each feature. ``slack_ref[k]`` /
    ``slack_new`` times ``norms[x]`` bound the absolute rounding error of sqrt(D)."""
    for x in range(u0, u1):
        _certified_nearest_one(
            x,
            X,
            y,
            W,
            v,
            P,
            cand_s,
            cand_d,
            root_s,
            root_d,
            slot,
            rw,
            rv,
            vmax,
            a_sorted,
            a_order,
            W_ref,
            lo,
            hi,
            slack_ref,
            slack_new,
            norms,
            g,
            l1,
            same,
            diff,
            d_same,
            d_diff,
            ok,
        )


@njit(cache=True, nogil=True)
def _row_bounds_one(
    a,
    X,
    y,
    rows,
    root_s,
    root_d,
    slot,
    rw,
    rv,
    vmax,
    a_sorted,
    a_order,
    W_ref,
    lo,
    hi,
    slack_ref,
    slack_new,
    norms,
    g,
    l1,
    out,
):
    """One a of :func:`row_bounds`."""
    n_classes = root_d.shape[1]
    x = rows[a]
    k, own = slot[x], y[x]
    for c in range(n_classes):
        root = root_s[x] if c == own else root_d[x, c]
        out[a, c] = _lower(
            X, x, c, k, root, np.inf, rw, rv, vmax, a_sorted, a_order, W_ref, lo, hi, slack_ref, slack_new,
            norms[x], g, l1,
        )  # fmt: skip


@njit(cache=True, nogil=True)
def row_bounds(
    u0, u1, X, y, rows, root_s, root_d, slot, rw, rv, vmax, a_sorted, a_order, W_ref, lo, hi, slack_ref, slack_new,
    norms, g, l1, out,
):  # fmt: skip
    """out[a, c]: the bound of ``_lower`` (the larger of the two) for row rows[a] and
    class c: its own class through the same-class list, the others through the
    different-class list."""
    for a in range(u0, u1):
        _row_bounds_one(
            a,
            X,
            y,
            rows,
            root_s,
            root_d,
            slot,
            rw,
            rv,
            vmax,
            a_sorted,
            a_order,
            W_ref,
            lo,
            hi,
            slack_ref,
            slack_new,
            norms,
            g,
            l1,
            out,
        )


@njit(cache=True, nogil=True)
def _value(X, y, W, v, P, x, p, l1):
    """D(X[x], prototype p), computed as ``_block_values`` does."""
    w = W[y[p]]
    acc = 0.0
    for j in range(X.shape[1]):
        d = w[j] * X[x, j] - P[p, j]
        if l1:
            acc += abs(d)
        else:
            acc += d * d
    if l1:
        s = v[p] * acc
        return s * s
    return (v[p] * v[p]) * acc


@njit(cache=True, nogil=True)
def _scan_class(X, W, PT, v_sorted, order, starts, l1, x, c, q, acc, ind, dist, filled):
    """Insert every prototype of class c but x into the sorted list (ind[0], dist[0]);
    returns (entries filled, the smallest value seen)."""
    for j in range(X.shape[1]):
        q[j] = W[c, j] * X[x, j]
    size = ind.shape[1]
    cmin = np.inf
    for p0 in range(starts[c], starts[c + 1], BLOCK):
        p1 = min(p0 + BLOCK, starts[c + 1])
        _block_values(q, PT, v_sorted, p0, p1, l1, acc)
        for b in range(p1 - p0):
            idx = order[p0 + b]
            if idx == x:
                continue
            val = acc[b]
            if val < cmin:
                cmin = val
            if (
                filled < size
                or val < dist[0, size - 1]
                or (val == dist[0, size - 1] and idx < ind[0, size - 1])
            ):
                filled = _insert(ind, dist, 0, filled, val, idx)
    return filled, cmin


@njit(cache=True, nogil=True)
def _repair_one(
    a,
    X,
    y,
    W,
    v,
    P,
    PT,
    v_sorted,
    order,
    starts,
    l1,
    rows,
    lb,
    best_s,
    best_d,
    g,
    cand_s,
    cand_d,
    root_s,
    root_d,
    same,
    diff,
    d_same,
    d_diff,
    scanned,
):
    """One a of :func:`repair`."""
    m = X.shape[1]
    L = cand_s.shape[1]
    n_classes = root_d.shape[1]
    x = rows[a]
    own = y[x]
    q = np.empty(m)
    acc = np.empty(BLOCK)
    ind = np.full((1, L + 1), -1, dtype=np.intp)
    dist = np.full((1, L + 1), np.inf)
    count = 0
    if not _above(lb[a, own], best_s[x], g):
        filled, _ = _scan_class(X, W, PT, v_sorted, order, starts, l1, x, own, q, acc, ind, dist, 0)
        count += starts[own + 1] - starts[own]
        for t in range(L):
            cand_s[x, t] = ind[0, t]
        root_s[x] = np.sqrt(dist[0, L]) if filled == L + 1 else np.inf
        same[x], d_same[x] = ind[0, 0], dist[0, 0]
    else:
        root_s[x] = lb[a, own]
    ind[0, :] = -1
    dist[0, :] = np.inf
    filled = 0
    for t in range(L):
        p = cand_d[x, t]
        if p < 0:
            break
        if _above(lb[a, y[p]], best_d[x], g):  # its class is certified: keep the candidate
            val = _value(X, y, W, v, P, x, p, l1)
            if filled < L + 1 or val < dist[0, L] or (val == dist[0, L] and p < ind[0, L]):
                filled = _insert(ind, dist, 0, filled, val, p)
    cmin = np.full(n_classes, np.inf)
    for c in range(n_classes):
        if c != own and not _above(lb[a, c], best_d[x], g):
            filled, cmin[c] = _scan_class(
                X, W, PT, v_sorted, order, starts, l1, x, c, q, acc, ind, dist, filled
            )
            count += starts[c + 1] - starts[c]
    thr = np.sqrt(dist[0, L]) if filled == L + 1 else np.inf
    for t in range(L):
        cand_d[x, t] = ind[0, t]
    for c in range(n_classes):
        if c == own:
            root_d[x, c] = np.inf
        elif not _above(lb[a, c], best_d[x], g):
            root_d[x, c] = max(thr, np.sqrt(cmin[c]))
        else:
            root_d[x, c] = min(thr, lb[a, c])
    diff[x], d_diff[x] = ind[0, 0], dist[0, 0]
    scanned[a] = count


@njit(cache=True, nogil=True)
def repair(
    u0, u1, X, y, W, v, P, PT, v_sorted, order, starts, l1, rows, lb, best_s, best_d, g,
    cand_s, cand_d, root_s, root_d, same, diff, d_same, d_diff, scanned,
):  # fmt: skip
    """Search again, under the new weights, the classes whose bound fails for each row
    x = rows[a] (``lb[a, c]`` from :func:`row_bounds`, ``best_s`` / ``best_d`` the best
    candidates' values), and make x's lists and bounds relative to the new weights:

    * own class: if its bound fails, the class is scanned and the list rebuilt (root_s =
      sqrt of the (L+1)-th value); else the list stays and root_s = lb (already a bound
      under the new weights).
    * other classes: the new list is the L + 1 nearest of the old candidates of the
      classes whose bound holds and of every prototype of the classes scanned;
      root_d[c] = max(sqrt((L+1)-th value), sqrt(class c's nearest)) for a scanned class
      (all its prototypes were seen), min(sqrt((L+1)-th value), lb[a, c]) for the others
      (a prototype outside the new list is an old candidate left out, or was outside
      the old list).

    Writes x's neighbours into same / diff / d_same / d_diff (the same-class one when
    rebuilt) and the number of prototypes scanned into scanned[a]."""
    for a in range(u0, u1):
        _repair_one(
            a,
            X,
            y,
            W,
            v,
            P,
            PT,
            v_sorted,
            order,
            starts,
            l1,
            rows,
            lb,
            best_s,
            best_d,
            g,
            cand_s,
            cand_d,
            root_s,
            root_d,
            same,
            diff,
            d_same,
            d_diff,
            scanned,
        )
