"""Exact leave-p-out risk of kNN: the conditioning of Celisse & Mary-Huard (2011).

Notation for one held-out point i (its own class t) and its neighbours in the
full sample ordered by (distance, index): position 1 is the nearest. Among the
other p - 1 held-out points, a uniform random (p - 1)-subset of the n - 1 others,
let V be the position of i's k-th nearest *training* neighbour. Then V = k + q
with q the number of held-out points among positions 1 .. V - 1, and

    P(V = k + q) = C(k + q - 1, q) C(n - 1 - k - q, p - 1 - q) / C(n - 1, p - 1)

(Prop. 1, term A2). Given V = j = k + q, the k training neighbours are position j
and the first j - 1 positions minus a uniform random q-subset of them. The kernel
works with that *removed* q-subset: its class counts follow a multivariate
hypergeometric law over the class counts m of positions 1 .. j - 1, and q stays
small wherever P(V = j) is not negligible, whatever k.

Probability of a correct vote (uniform weights, the tie rule of ``lpo_risk``:
a tie among s classes including t scores 1/s): condition on a, the removals
from class t, so that t's vote is v = m_t - a + [y_j = t]. A class c != t whose
largest possible vote u_c = m_c + [y_j = c] is below v can never reach t. The
others ("competitive") must lose at least L_c = u_c - v members, and tie with
t when they lose exactly L_c. A small dynamic programme over the competitive
classes (state: removals used so far, number of ties) with sequential
hypergeometric laws gives the tie-weighted probability; the non-competitive
classes form one free pool that takes the remaining removals.
"""

import numpy as np
from numba import njit, prange

# Rows of held-out points summed together, in order, before the chunks' sums are
# added up in order: the estimate does not depend on the thread count.
CHUNK = 256


@njit(cache=True)
def log_binomial_table(n_max, q_max):
    """LC[N, y] = log C(N, y) for 0 <= N <= n_max, 0 <= y <= q_max (-inf if y > N).

    Built as sums of log((N - y + 1) / y) along y, so that an entry's absolute error
    stays near y * 1e-16 (a difference of log-factorials of large N would lose
    about 1e-11 to cancellation).
    """
    LC = np.full((n_max + 1, q_max + 1), -np.inf)
    for N in range(n_max + 1):
        LC[N, 0] = 0.0
        for y in range(1, min(N, q_max) + 1):
            LC[N, y] = LC[N, y - 1] + np.log((N - y + 1) / y)
    return LC


@njit(cache=True)
def rank_probabilities(n, p, k_max, q_max, floor):
    """PV[k - 1, q] = P(V = k + q | i held out) for k = 1 .. k_max, q = 0 .. q_max.

    Computed by the ratio P(q + 1) / P(q) = (k + q)(p - 1 - q) / ((q + 1)(n - 1 - k - q))
    from P(0) = prod_{s < k} (n - p - s) / (n - 1 - s), a relative error near
    (k + q) * 1e-16. Entries below ``floor`` are set to 0 (skipped by the caller).
    """
    PV = np.zeros((k_max, q_max + 1))
    for k in range(1, k_max + 1):
        pr = 1.0
        for s in range(k):
            pr *= (n - p - s) / (n - 1 - s)
        for q in range(0, min(q_max, p - 1) + 1):
            if q > 0:
                pr *= (k + q - 1) * (p - q) / (q * (n - k - q))
            if pr >= floor:
                PV[k - 1, q] = pr
    return PV


@njit(cache=True)
def _hyp(LC, K, rest, n, y):
    """P(Y = y) for Y hypergeometric: n draws from K marked and ``rest`` unmarked."""
    return np.exp(LC[K, y] + LC[rest, n - y] - LC[K + rest, n])


@njit(cache=True)
def p_correct_uniform(m, t, b, q, LC, thr, comp, dp, ndp):
    """P(correct plurality vote) given V = j: counts m of positions 1 .. j - 1,
    class b of position j, true class t, q removed among the first j - 1.

    A tie among s classes including t counts 1/s. Terms of probability below
    ``thr`` are skipped (the caller passes RANK_FLOOR / P(V = j), so that each
    skipped term moves the risk by less than the floor). comp : (n_classes,) intp
    scratch; dp, ndp : (q_max + 1, n_classes + 1) scratch.
    """
    C = m.shape[0]
    J = 0
    for c in range(C):
        J += m[c]
    Kt = m[t]
    rest = J - Kt
    total = 0.0
    a0 = max(0, q - rest)
    pa = _hyp(LC, Kt, rest, q, a0)
    for a in range(a0, min(q, Kt) + 1):
        if a > a0:
            # P(a) / P(a - 1) for the hypergeometric law of t's removals
            pa *= (Kt - a + 1) * (q - a + 1) / (a * (rest - q + a))
        if pa < thr:
            continue
        v = Kt - a + (1 if b == t else 0)
        if v == 0:
            continue  # k >= 1 votes go to other classes
        nc = 0
        for c in range(C):
            if c != t and m[c] + (1 if b == c else 0) >= v:
                comp[nc] = c
                nc += 1
        if nc == 0:
            total += pa
            continue
        r0 = q - a
        if nc == 1:
            # One class can reach t: a hypergeometric tail, the rest is free.
            c = comp[0]
            K = m[c]
            F = rest - K
            L = K + (1 if b == c else 0) - v
            y_lo = max(L, r0 - F)
            y_hi = min(K, r0)
            if F == 0:
                # two classes left: all r0 removals hit c
                if y_lo <= r0 <= y_hi:
                    total += pa * (0.5 if r0 == L else 1.0)
                continue
            acc = 0.0
            if y_lo <= y_hi:
                h = _hyp(LC, K, F, r0, y_lo)
                for y in range(y_lo, y_hi + 1):
                    acc += h * (0.5 if y == L else 1.0)
                    h *= (K - y) * (r0 - y) / ((y + 1) * (F - r0 + y + 1))
            total += pa * acc
            continue
        # Several classes can reach t: DP over them (removals used, ties).
        cut = thr / pa
        for s in range(r0 + 1):
            for u in range(nc + 1):
                dp[s, u] = 0.0
        dp[0, 0] = 1.0
        pool = rest
        for ci in range(nc):
            c = comp[ci]
            K = m[c]
            L = K + (1 if b == c else 0) - v
            for s in range(r0 + 1):
                for u in range(ci + 2):
                    ndp[s, u] = 0.0
            for s in range(r0 + 1):
                for u in range(ci + 1):
                    val = dp[s, u]
                    if val < cut:
                        continue
                    rem = r0 - s
                    y_lo = max(L, rem - (pool - K))
                    y_hi = min(K, rem)
                    if y_lo > y_hi:
                        continue
                    h = _hyp(LC, K, pool - K, rem, y_lo)
                    for y in range(y_lo, y_hi + 1):
                        ndp[s + y, u + (1 if y == L else 0)] += val * h
                        # P(y + 1) / P(y) for the hypergeometric law
                        h *= (K - y) * (rem - y) / ((y + 1) * (pool - K - rem + y + 1))
            for s in range(r0 + 1):
                for u in range(ci + 2):
                    dp[s, u] = ndp[s, u]
            pool -= K
        acc = 0.0
        for s in range(r0 + 1):
            for u in range(nc + 1):
                acc += dp[s, u] / (1 + u)
        total += pa * acc
    return total


@njit(parallel=True, cache=True)
def lpo_uniform_sums(neigh_ind, y, n_classes, p, k_max, PV, LC, floor):
    """Per-chunk sums over held-out points of P(error | i held out) for k = 1 .. k_max.

    neigh_ind : (n, k_max + p - 1) leave-one-out neighbours ordered by (distance, index).
    PV : (k_max, q_max + 1) rank probabilities, 0 where skipped; the non-zero
        entries of a row are contiguous (P(V = k + q) is unimodal in q).
    Returns (n_chunks, k_max); the LpO risk is the column sum divided by n.
    """
    n, width = neigh_ind.shape
    q_max = PV.shape[1] - 1
    q_lo = np.zeros(k_max, dtype=np.intp)
    q_hi = np.full(k_max, -1, dtype=np.intp)
    for k in range(k_max):
        for q in range(q_max + 1):
            if PV[k, q] > 0.0:
                if q_hi[k] < 0:
                    q_lo[k] = q
                q_hi[k] = q
    n_chunks = (n + CHUNK - 1) // CHUNK
    out = np.zeros((n_chunks, k_max))
    for ch in prange(n_chunks):
        # cum[j, c]: class-c count among the first j neighbours
        cum = np.zeros((width + 1, n_classes), dtype=np.intp)
        comp = np.empty(n_classes, dtype=np.intp)
        dp = np.empty((q_max + 1, n_classes + 1))
        ndp = np.empty((q_max + 1, n_classes + 1))
        acc = np.zeros(k_max)
        for i in range(ch * CHUNK, min(n, (ch + 1) * CHUNK)):
            t = y[i]
            last = min(width, k_max + q_max)
            for j in range(1, last + 1):
                for c in range(n_classes):
                    cum[j, c] = cum[j - 1, c]
                cum[j, y[neigh_ind[i, j - 1]]] += 1
            for k in range(1, k_max + 1):
                err = 0.0
                for q in range(q_lo[k - 1], q_hi[k - 1] + 1):
                    j = k + q
                    if j > width:
                        break
                    w = PV[k - 1, q]
                    b = y[neigh_ind[i, j - 1]]
                    pc = p_correct_uniform(cum[j - 1], t, b, q, LC, floor / w, comp, dp, ndp)
                    err += w * (1.0 - pc)
                acc[k - 1] += err
        out[ch] = acc
    return out
