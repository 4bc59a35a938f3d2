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
``p_correct_uniform`` does this for one (j, q).

``lpo_uniform_sums`` shares the work across q instead: for a held-out point and a
position j, the counts m, the class of position j, and for each a the vote v, the
competitive classes and their L_c are the same for every q (k = j - q). So it
tabulates the law of a for all q at once (a one-removal-more recurrence), and
runs one DP per (j, a) over s = q - a, the removals from the other classes, with
*unnormalised* counts (products of binomials, scaled to stay in range) so that
every s, hence every q, comes out of the same DP. Two classes need no DP: a tail
of the removal law, summed from whichever end is shorter.
"""

import numpy as np
from numba import njit

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


# Largest q (removals among the first j - 1 positions) for which lpo_uniform_sums
# builds its tables of removal laws (memory (Q_TABLE_MAX + 1)^2 floats per thread);
# positions j whose q reach beyond it take p_correct_uniform term by term. Its
# scaled binomial coefficients stay within float64 up to q near 1800 (see
# _tie_weighted_dp).
Q_TABLE_MAX = 600


@njit(cache=True)
def _q_windows(PV, k_max, last):
    """qa[j] .. qb[j]: the q with P(V = j) > 0, k = j - q in 1 .. k_max (qb < qa: none)."""
    q_max = PV.shape[1] - 1
    qa = np.zeros(last + 1, dtype=np.intp)
    qb = np.full(last + 1, -1, dtype=np.intp)
    for j in range(1, last + 1):
        for q in range(max(0, j - k_max), min(q_max, j - 1) + 1):
            if PV[j - q - 1, q] > 0.0:
                if qb[j] < 0:
                    qa[j] = q
                qb[j] = q
    return qa, qb


@njit(cache=True, inline="always")
def _removal_rows(H, J, Kr, q_lo, q_hi, r_hi, LC, fa):
    """H[q, r] = P(exactly r of q uniform removals among J positions fall on a given
    Kr of them), for q_lo <= q <= q_hi and r <= min(q, Kr, r_hi); other entries
    untouched.

    Row q_lo is the hypergeometric law from its first non-zero entry (from the log
    binomials LC, then ratios); later rows draw one more removal,
    H[q + 1, r] = (H[q, r] (J - Kr - q + r) + H[q, r - 1] (Kr - r + 1)) / (J - q):
    sums of non-negative terms, no exp, a relative error near q ulp. An entry r
    only needs entries <= r of the row before, so stopping at r_hi is exact.
    """
    other = J - Kr
    row = H[q_lo]
    top = min(q_lo, Kr, r_hi)
    r0 = max(0, q_lo - other)
    for r in range(min(r0, top + 1)):
        row[r] = 0.0
    if r0 <= top:
        h = np.exp(LC[Kr, r0] + LC[other, q_lo - r0] - LC[J, q_lo])
        for r in range(r0, top + 1):
            row[r] = h
            h *= (Kr - r) * (q_lo - r) / ((r + 1) * (other - q_lo + r + 1))
    for q in range(q_lo, q_hi):
        inv = 1.0 / (J - q)
        al = (other - q) * inv
        be = (Kr + 1) * inv
        cur = H[q]
        nxt = H[q + 1]
        top = min(q, Kr, r_hi)
        prev = 0.0
        for r in range(top + 1):
            c = cur[r]
            nxt[r] = c * (al + fa[r] * inv) + prev * (be - fa[r] * inv)
            prev = c
        if top < min(Kr, r_hi):
            nxt[top + 1] = prev * (be - fa[top + 1] * inv)


@njit(cache=True, inline="always")
def _binary_errors(acc, PV, j, q0, q1, J, Kt, bt, H, LC, fa):
    """Add P(V = j) P(error | V = j) to acc[k - 1] (k = j - q) for two classes.

    With a of the q removals on class t and s = q - a on the other class, t's vote
    is Kt + bt - a and the other's J - Kt + (1 - bt) - s: t loses iff 2a > q - D,
    ties (cost 1/2) iff 2a = q - D, D = the other's lead before removals. The
    shorter side is summed: the losses over s <= (q + D) / 2, or the wins over
    a <= (q - D) / 2 (the error is then one minus them).
    """
    rest = J - Kt
    D = rest + (1 - bt) - Kt - bt
    R_s = min(rest, (q1 + D) // 2)
    R_a = min(Kt, (q1 - D) // 2)
    if R_s < 0:
        return  # t wins whatever the removals
    if R_a < 0:
        for q in range(q0, q1 + 1):
            acc[j - q - 1] += PV[j - q - 1, q]  # t loses whatever the removals
        return
    by_s = R_s <= R_a
    R = R_s if by_s else R_a
    if by_s:
        _removal_rows(H, J, rest, q0, q1, R, LC, fa)
    else:
        _removal_rows(H, J, Kt, q0, q1, R, LC, fa)
    for q in range(q0, q1 + 1):
        w = PV[j - q - 1, q]
        if w == 0.0:
            continue
        hrow = H[q]
        x = q + D if by_s else q - D
        top = min(q, R)
        s = 0.0
        for r in range(min(top, (x - 1) // 2) + 1):
            s += hrow[r]
        if x >= 0 and x % 2 == 0 and x // 2 <= top:
            s += 0.5 * hrow[x // 2]
        acc[j - q - 1] += w * (s if by_s else 1.0 - s)


@njit(cache=True, inline="always")
def _tie_weighted_dp(G, nc, comp, Lc, m, F, lam, coef, s_lo, s_hi, sumL, fbuf, gbuf, r1, r2, inv_int):
    """G[s] for s_lo <= s <= s_hi (0 where t cannot win): sum over the ways of
    removing s of the non-t positions of prod_c C(m_c, y_c) lam^y_c / (1 + ties),
    where each competitive class comp[ci] must lose y >= Lc[ci] (a tie when equal)
    and the F non-competitive positions (the pool) take the rest freely.

    The caller divides by C(J - m_t, s) lam^s. Scaling every coefficient by
    lam^y, with lam = C(J - m_t, S)^(-1/S) for the largest s = S, keeps all terms
    between about 1e-308 and e^(S/e) (C(N, s)^(1/s) decreases in s): no overflow
    for S below about 1800, and what underflows is below 1e-300 of the result.
    The DP runs over classes (pool first), its state the removals used and the
    number of ties; the last class is added after collapsing the tie count.
    """
    f = fbuf
    g = gbuf
    hi = min(F, s_hi - sumL)
    lo = 0
    f0 = f[0]
    f0[0] = 1.0
    for s in range(hi):
        f0[s + 1] = f0[s] * ((F - s) * lam * inv_int[s + 1])
    Lrem = sumL
    for ci in range(nc - 1):
        c = comp[ci]
        K = m[c]
        L = Lc[ci]
        cc = coef[c]
        Lrem -= L
        new_lo = lo + L
        new_hi = min(hi + K, s_hi - Lrem)
        for u in range(ci + 2):
            gu = g[u]
            for s in range(new_lo, new_hi + 1):
                gu[s] = 0.0
        for u in range(ci + 1):
            fu = f[u]
            gu = g[u]
            gu1 = g[u + 1]
            for s in range(lo, min(hi, new_hi - L) + 1):
                val = fu[s]
                gu1[s + L] += val * cc[L]
                for yy in range(L + 1, min(K, new_hi - s) + 1):
                    gu[s + yy] += val * cc[yy]
        f, g = g, f
        lo = new_lo
        hi = new_hi
    for s in range(lo, hi + 1):
        t1 = 0.0
        t2 = 0.0
        for u in range(nc):
            t1 += f[u, s] * inv_int[u + 1]
            t2 += f[u, s] * inv_int[u + 2]
        r1[s] = t1  # weight of the states if the last class does not tie
        r2[s] = t2  # ... if it ties
    c = comp[nc - 1]
    K = m[c]
    L = Lc[nc - 1]
    cc = coef[c]
    for s in range(s_lo, s_hi + 1):
        tot = 0.0
        if lo <= s - L <= hi:
            tot = r2[s - L] * cc[L]
        for yy in range(max(L + 1, s - hi), min(K, s - lo) + 1):
            tot += r1[s - yy] * cc[yy]
        G[s] = tot


def lpo_uniform_sums(neigh_ind, y, n_classes, p, k_max, PV, LC, floor, q_table_max=Q_TABLE_MAX):
    """Per-chunk sums over held-out points of P(error | i held out) for k = 1 .. k_max.

    neigh_ind : (n, k_max + p - 1) leave-one-out neighbours ordered by (distance, index).
    PV : (k_max, q_max + 1) rank probabilities, 0 where skipped.
    LC : log_binomial_table(k_max + p - 1, q_max).
    q_table_max : positions j whose q go beyond it are done term by term with
        p_correct_uniform (a test hook; the default keeps the tables small).
    Returns (n_chunks, k_max); the LpO risk is the column sum divided by n.

    For each held-out point i and position j = k + q, all q at once (the counts m
    of the first j - 1 positions and the class of position j do not depend on q):

    * the law of a, the removals from t's class, for every q: ``_removal_rows``;
    * two classes: a hypergeometric tail per q (``_binary_errors``);
    * more classes: for each a, t's vote v and hence which classes can reach it
      (competitive: they must lose L_c >= 0 members, tie at exactly L_c) do not
      depend on q either; ``_tie_weighted_dp`` gives the tie-weighted probability
      that t wins for every number s = q - a of the other removals at once. The
      a for which t can still win form a range (a_w, a_f]: a <= a_w leaves no
      class able to reach t (t wins), a > a_f needs more removals than q allows
      (t loses). The law of a is tabulated over a <= a_f, or over s = q - a <
      q - a_w (removals from the other classes) when that is shorter.

    Terms whose weight P(V = j) P(a | q) is below ``floor`` are skipped (counted
    as errors), as in p_correct_uniform: the risk moves by less than the floor
    per term.

    Chunks of CHUNK held-out points run on Python threads (:func:`knnx._kernels.run_blocks`,
    the chunk kernel :func:`_uniform_chunk` releases the GIL); a chunk's row depends on the
    chunk alone, so the sums do not depend on the thread count.
    """
    from knnx._kernels import run_blocks

    n, width = neigh_ind.shape
    q_max = PV.shape[1] - 1
    last = min(width, k_max + q_max)
    qa, qb = _q_windows(PV, k_max, last)
    qcap = min(q_max, q_table_max)
    inv_int = np.empty(max(q_max, max(n_classes, 2)) + 3)  # 1 / u for tie counts and binomial steps
    inv_int[0] = 0.0
    inv_int[1:] = 1.0 / np.arange(1, inv_int.shape[0])
    fa = np.arange(q_max + 2).astype(np.float64)
    out = np.zeros(((n + CHUNK - 1) // CHUNK, k_max))

    def chunk(ch):
        _uniform_chunk(
            ch, neigh_ind, y, n_classes, k_max, PV, LC, floor, last, qa, qb, qcap, inv_int, fa, out
        )

    run_blocks(chunk, range(out.shape[0]))
    return out


@njit(nogil=True, cache=True)
def _uniform_chunk(ch, neigh_ind, y, n_classes, k_max, PV, LC, floor, last, qa, qb, qcap, inv_int, fa, out):
    """out[ch]: the sums of :func:`lpo_uniform_sums` over the held-out points of chunk ch."""
    n = neigh_ind.shape[0]
    q_max = PV.shape[1] - 1
    C = max(n_classes, 2)
    acc = np.zeros(k_max)
    m = np.zeros(C, dtype=np.intp)
    H = np.empty((qcap + 1, qcap + 2))
    win = np.zeros(q_max + 1)
    coef = np.empty((C, qcap + 1))
    have = np.empty(C, dtype=np.intp)
    Z = np.empty(qcap + 1)
    G = np.empty(qcap + 1)
    fbuf = np.empty((C, qcap + 1))
    gbuf = np.empty((C, qcap + 1))
    r1 = np.empty(qcap + 1)
    r2 = np.empty(qcap + 1)
    comp = np.empty(C, dtype=np.intp)
    Lc = np.empty(C, dtype=np.intp)
    dp = np.empty((q_max + 1, C + 1))
    ndp = np.empty((q_max + 1, C + 1))
    for i in range(ch * CHUNK, min(n, (ch + 1) * CHUNK)):
        t = y[i]
        m[:] = 0
        for j in range(1, last + 1):
            b = y[neigh_ind[i, j - 1]]
            q0 = qa[j]
            q1 = qb[j]
            if q1 < q0:
                m[b] += 1
                continue
            J = j - 1
            Kt = m[t]
            rest = J - Kt
            bt = 1 if b == t else 0
            if q1 > qcap:
                for q in range(q0, q1 + 1):
                    w = PV[j - q - 1, q]
                    if w > 0.0:
                        pc = p_correct_uniform(m, t, b, q, LC, floor / w, comp, dp, ndp)
                        acc[j - q - 1] += w * (1.0 - pc)
            elif n_classes <= 2:
                _binary_errors(acc, PV, j, q0, q1, J, Kt, bt, H, LC, fa)
            else:
                # the largest vote among the other classes, position j included
                umax = 0
                for c in range(n_classes):
                    if c != t:
                        umax = max(umax, m[c] + (1 if b == c else 0))
                # a <= a_w: t strictly ahead of every class whatever the rest (a_w <= Kt)
                a_w = min(Kt + bt - umax - 1, q1)
                a_f = a_w
                for a in range(max(a_w, -1) + 1, min(q1, Kt) + 1):
                    v = Kt - a + bt
                    if v == 0:
                        break
                    sumL = 0
                    for c in range(n_classes):
                        if c != t:
                            sumL += max(m[c] + (1 if b == c else 0) - v, 0)
                    if sumL > q1 - a:
                        break  # sumL - (q1 - a) only grows with a
                    a_f = a
                if a_f < 0:
                    for q in range(q0, q1 + 1):
                        acc[j - q - 1] += PV[j - q - 1, q]  # t never wins
                    m[b] += 1
                    continue
                if a_w >= min(q1, Kt):
                    m[b] += 1
                    continue  # t always wins (at most min(q, Kt) removals hit t)
                # tabulate the law of a over a <= a_f, or of s = q - a over s <= R_s
                R_s = q1 - a_w - 1
                by_s = a_w >= 0 and R_s < a_f
                if by_s:
                    _removal_rows(H, J, rest, q0, q1, R_s, LC, fa)
                else:
                    _removal_rows(H, J, Kt, q0, q1, a_f, LC, fa)
                for q in range(q0, q1 + 1):
                    win[q] = 0.0
                S = min(q1, rest)
                lam = 1.0
                if S >= 1:
                    lam = np.exp(-LC[rest, S] / S)
                z_len = -1
                for c in range(n_classes):
                    have[c] = -1
                for a in range(max(a_w, -1) + 1, a_f + 1):
                    v = Kt - a + bt
                    nc = 0
                    sumL = 0
                    Kc = 0
                    for c in range(n_classes):
                        if c != t:
                            L = m[c] + (1 if b == c else 0) - v
                            if L >= 0:
                                comp[nc] = c
                                Lc[nc] = L
                                nc += 1
                                sumL += L
                                Kc += m[c]
                    # the s = q - a whose weight reaches the floor
                    s_lo = q1 + 1
                    s_hi = -1
                    for q in range(max(q0, a + sumL), min(q1, a + rest) + 1):
                        h = H[q, q - a] if by_s else H[q, a]
                        if h * PV[j - q - 1, q] >= floor:
                            if s_hi < 0:
                                s_lo = q - a
                            s_hi = q - a
                    if s_hi < 0:
                        continue
                    if z_len < s_hi:
                        if z_len < 0:
                            Z[0] = 1.0
                            z_len = 0
                        for s in range(z_len, s_hi):
                            Z[s + 1] = Z[s] * ((rest - s) * lam * inv_int[s + 1])
                        z_len = s_hi
                    for ci in range(nc):
                        c = comp[ci]
                        K = m[c]
                        need = min(K, S)
                        if have[c] < need:
                            cc = coef[c]
                            if have[c] < 0:
                                cc[0] = 1.0
                                have[c] = 0
                            for s in range(have[c], need):
                                cc[s + 1] = cc[s] * ((K - s) * lam * inv_int[s + 1])
                            have[c] = need
                    _tie_weighted_dp(
                        G,
                        nc,
                        comp,
                        Lc,
                        m,
                        rest - Kc,
                        lam,
                        coef,
                        s_lo,
                        s_hi,
                        sumL,
                        fbuf,
                        gbuf,
                        r1,
                        r2,
                        inv_int,
                    )
                    for s in range(s_lo, s_hi + 1):
                        h = H[a + s, s] if by_s else H[a + s, a]
                        win[a + s] += h * (G[s] / Z[s])
                for q in range(q0, q1 + 1):
                    w = PV[j - q - 1, q]
                    if w == 0.0:
                        continue
                    hrow = H[q]
                    base = 0.0
                    if by_s:
                        # P(a > a_w) = P(s < q - a_w): t can lose
                        for s in range(min(q - a_w - 1, rest) + 1):
                            base += hrow[s]
                        acc[j - q - 1] += w * (base - win[q])
                    else:
                        # P(a <= a_w): t wins for sure
                        for a in range(min(a_w, q) + 1):
                            base += hrow[a]
                        acc[j - q - 1] += w * (1.0 - base - win[q])
            m[b] += 1
    out[ch] = acc
