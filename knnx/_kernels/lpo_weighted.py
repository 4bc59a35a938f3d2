"""Exact leave-p-out risk of distance-weighted kNN, two classes.

Setting (as in :mod:`knnx._kernels.lpo`): a held-out point i of class t, its
leave-one-out neighbours at positions 1 .. W ordered by (squared distance, index),
V the position of its k-th nearest *training* neighbour, P(V = j) = PV[k - 1, j - k].
Given V = j the k voters are position j and S, a uniform random (k - 1)-subset of
positions 1 .. j - 1 (the complement of the q = j - k held-out ones).

Vote (``KNNClassifier(weights="distance")``): a voter at squared distance d > 0
votes 1 / sqrt(d) for its class; if some voters are at distance 0, only those vote,
weight 1 each. With class-1 weights counted positive and class-0 weights negative,
class 1 wins if the sum is > 0, class 0 if < 0, and a sum of exactly 0 (in real
numbers, not after float rounding) is a tie costing 1/2.

Zero distances: positions 1 .. z at distance 0 come first. If j <= z, or S holds
a >= 1 of them (a is hypergeometric), the vote is a plurality among them, a sum of
hypergeometric terms. Otherwise (probability C(j-1-z, k-1) / C(j-1, k-1)) S is a
uniform (k - 1)-subset of the m = j - 1 - z positive-distance positions before j,
and P(error) counts subsets by the sign of their weighted sum.

Exact sums: the weights of one held-out point are float64 numbers, so each is an
integer multiple of 2^e, e the smallest unit in the last place among them. Scaled by
2^-e they become integers, held in L limbs of 62 bits (int64, lowest first, top
limb signed). L = 2 unless a point's weights span more than about 2^59. Every sum,
comparison and tie below is exact integer arithmetic. The limb count reaches the
kernels as the length of a tuple ``mk`` (``(0,) * L``), so that numba compiles the
limb loops with a constant trip count (as fast as hand-unrolled code).

Counting (:func:`_subset_sign_probs`): the r-subsets of items 0 .. m - 1 (r the
smaller of |S| and its complement; the complement compares against the total
instead) are built item by item, largest weight first. After items 0 .. h - 1 the
states are the distinct partial sums of each size c, with the probability that a
uniform r-subset starts that way (equal sums merge: unit weights leave one state per
size, the uniform case in O(m r)). A state whose sum plus the smallest (largest)
possible completion is above (below) the threshold is decided and leaves with its
whole probability: the branch is counted without being enumerated. Once the states
of size c number at least a quarter of the (r - c)-subsets of the remaining items,
they meet in the middle: one merge-like pass against the sorted distinct sums of
those completions, with their probabilities, settles all of them. The completion
lists are built once per V = j (shared by every k) from those of shorter suffixes.
So the states of size c after item h number at most min(C(h, c), 4 C(m - h, r - c)):
a meet-in-the-middle whose meeting point adapts to each size c, which is what a
single split of the items cannot do (for r = 9 of m = 58 the sizes c = 0 or 9 of a
half split need lists of C(29, 9) = 1e7 sums, while no list here exceeds
C(29, 4) ~ 2e4 when the vote is contested). r <= 2 is counted directly in O(m)
(:func:`_small_sign_probs`).
"""

import math

import numpy as np
from numba import njit

# Work units (held-out point i, rank j of V: every k at once) per chunk. Chunk ch holds
# units ch, ch + n_chunks, ... (see :func:`chunk_errors`); the caller adds the chunk
# sums in chunk order, so the estimate does not depend on the thread count.
UNITS_PER_CHUNK = 32
# Largest completion list (distinct sums of the subsets of one size of one suffix)
# that the counter builds; above it the states grow until the list gets smaller.
LIST_CAP = 1 << 16
# Most partial sums (states of one size class layer, or completion-list rows of one
# V = j) one count may hold, about 400 MB: beyond it the count gives up (NaN) and the
# caller reports that the problem is too large, instead of exhausting memory.
WORK_CAP = 1 << 24
_BITS = 62
_BASE = np.int64(1) << _BITS
_MASK = _BASE - 1


@njit(cache=True)
def _add(A, i, B, j, out, o, mk):
    """out[o] = A[i] + B[j] in limbs (out may alias A or B)."""
    L = len(mk)
    carry = 0
    for t in range(L - 1):
        s = A[i, t] + B[j, t] + carry
        out[o, t] = s & _MASK
        carry = s >> _BITS
    out[o, L - 1] = A[i, L - 1] + B[j, L - 1] + carry


@njit(cache=True)
def _sub(A, i, B, j, out, o, mk):
    """out[o] = A[i] - B[j] in limbs (out may alias A or B)."""
    L = len(mk)
    borrow = 0
    for t in range(L - 1):
        s = A[i, t] - B[j, t] - borrow
        if s < 0:
            s += _BASE
            borrow = 1
        else:
            borrow = 0
        out[o, t] = s
    out[o, L - 1] = A[i, L - 1] - B[j, L - 1] - borrow


@njit(cache=True)
def _cmp(A, i, B, j, mk):
    """Sign of A[i] - B[j] (limbs)."""
    for t in range(len(mk) - 1, -1, -1):
        a = A[i, t]
        b = B[j, t]
        if a != b:
            return -1 if a < b else 1
    return 0


@njit(cache=True)
def _copy(A, i, out, o, mk):
    for t in range(len(mk)):
        out[o, t] = A[i, t]


@njit(cache=True, inline="always")  # on the hot path of both counters
def _merge_shifted(AV, AM, pa, na, pb, nb, VAL, h, S, s, DV, DM, w, fa, fb, mk):
    """Merge two sorted runs of sums into rows w, w + 1, ... of (DV, DM); return the next row.

    Run A is AV[pa : pa + na] with masses AM * fa; run B is AV[pb : pb + nb] + VAL[h]
    with masses AM * fb, formed one row at a time in the scratch row S[s]. Both runs
    strictly increase, so equal values can only pair across them: they become one
    row with the masses added. The output rows must not overlap the input rows.
    """
    if nb > 0:
        _add(AV, pb, VAL, h, S, s, mk)
    ia = 0
    ib = 0
    while ia < na or ib < nb:
        sg = 1 if ia >= na else (-1 if ib >= nb else _cmp(AV, pa + ia, S, s, mk))
        if sg <= 0:
            _copy(AV, pa + ia, DV, w, mk)
            DM[w] = AM[pa + ia] * fa
            if sg == 0:
                DM[w] += AM[pb + ib] * fb
            ia += 1
        else:
            _copy(S, s, DV, w, mk)
            DM[w] = AM[pb + ib] * fb
        if sg >= 0:
            ib += 1
            if ib < nb:
                _add(AV, pb + ib, VAL, h, S, s, mk)
        w += 1
    return w


@njit(cache=True)
def _grow2(buf, need):
    """``buf``, or a larger copy of it holding at least ``need`` rows."""
    if buf.shape[0] >= need:
        return buf
    out = np.empty((max(need, 2 * buf.shape[0]), buf.shape[1]), dtype=buf.dtype)
    for u in range(buf.shape[0]):  # loops compile much faster than slice assignment
        for t in range(buf.shape[1]):
            out[u, t] = buf[u, t]
    return out


@njit(cache=True)
def _grow1(buf, need):
    if buf.shape[0] >= need:
        return buf
    out = np.empty(max(need, 2 * buf.shape[0]), dtype=buf.dtype)
    for u in range(buf.shape[0]):
        out[u] = buf[u]
    return out


@njit(cache=True)
def _scale(v):
    """(e, bits): the smallest unit in the last place among the non-zero v is 2^e,
    and |v| < 2^(e + bits) for every v (bits = 0 if all are zero)."""
    e_lo = 1 << 30
    e_hi = -(1 << 30)
    for u in range(v.shape[0]):
        if v[u] != 0.0:
            _, e = math.frexp(v[u])
            e_lo = min(e_lo, e - 53)
            e_hi = max(e_hi, e)
    if e_lo > e_hi:
        return 0, 0
    return e_lo, e_hi - e_lo


@njit(cache=True)
def limb_count(bits, n_terms):
    """Limbs holding any sum or difference of sums of up to n_terms values below
    2^bits (in units of the scale), with a sign."""
    need = bits + 2
    terms = 2 * n_terms + 2
    while terms > 1:
        need += 1
        terms = (terms + 1) // 2
    return max(2, (need + _BITS - 1) // _BITS)


@njit(cache=True)
def exact_values(v, out, mk):
    """out[u] = v[u] * 2^-e as exact limbs, e from :func:`_scale` (the caller has
    checked with :func:`limb_count` that len(mk) limbs hold the sums it forms)."""
    L = len(mk)
    e_lo, _ = _scale(v)
    for u in range(v.shape[0]):
        a = math.ldexp(abs(v[u]), -e_lo)  # an integer, exactly
        for t in range(L - 1):
            hi = np.floor(a / 2.0**_BITS)  # a float: math.floor would return an int64
            out[u, t] = np.int64(a - hi * 2.0**_BITS)
            a = hi
        out[u, L - 1] = np.int64(a)
        if v[u] < 0.0:
            borrow = 0
            for t in range(L - 1):
                s = -out[u, t] - borrow
                if s < 0:
                    s += _BASE
                    borrow = 1
                else:
                    borrow = 0
                out[u, t] = s
            out[u, L - 1] = -out[u, L - 1] - borrow


@njit(cache=True)
def signed_weights(lab, d2, out):
    """out[u] = +-1 / sqrt(d2[u]) (+ for class 1) over the positive distances; returns
    z, the number of leading zero distances (out[:len(d2) - z] is filled)."""
    W = d2.shape[0]
    z = 0
    while z < W and d2[z] == 0.0:
        z += 1
    for u in range(W - z):
        w = 1.0 / np.sqrt(d2[z + u])
        out[u] = w if lab[z + u] == 1 else -w
    return z


@njit(cache=True)
def limbs_needed(neigh_ind, neigh_dist, y, width):
    """Limb count for the weights of every row's first ``width`` neighbours."""
    L = 1
    lab = np.empty(width, dtype=np.intp)
    vf = np.empty(width)
    for i in range(neigh_ind.shape[0]):
        for u in range(width):
            lab[u] = y[neigh_ind[i, u]]
        z = signed_weights(lab, neigh_dist[i, :width], vf)
        _, bits = _scale(vf[: width - z])
        L = max(L, limb_count(bits, width))
    return L


@njit(cache=True)
def suffix_bounds(VAL, VF, m, R, LO, HI, mk):
    """LO[h * (R + 1) + c], HI[...] = sum of the c smallest / largest of items h .. m - 1,
    for 0 <= h <= m, 0 <= c <= min(R, m - h). VF: the same values as floats (to sort)."""
    srt = np.empty(max(m, 1), dtype=np.intp)
    for h in range(m, -1, -1):
        ln = m - h
        if ln > 0:
            t = ln - 1
            while t > 0 and VF[srt[t - 1]] > VF[h]:
                srt[t] = srt[t - 1]
                t -= 1
            srt[t] = h
        base = h * (R + 1)
        for u in range(len(mk)):
            LO[base, u] = 0
            HI[base, u] = 0
        for c in range(1, min(R, ln) + 1):
            _add(LO, base + c - 1, VAL, srt[c - 1], LO, base + c, mk)
            _add(HI, base + c - 1, VAL, srt[ln - c], HI, base + c, mk)


@njit(cache=True)
def _build_list(VAL, m, l0, c0, LV, LPM, LOFF, LLEN, lpos, R, mk):
    """Make sure the completion list of (l0, c0) is built: the sorted distinct sums of
    the c0-subsets of items l0 .. m - 1 (LV) with their probabilities under a uniform
    c0-subset (LPM).

    LOFF/LLEN[l * (R + 1) + c] locate the list of (l, c) (LLEN = -1: not built). It is
    made from those of (l + 1, c) (item l left out, probability (m - l - c) / (m - l))
    and (l + 1, c - 1) shifted by item l (taken, probability c / (m - l)). lpos[0] is
    the first free row. Returns (LV, LPM), grown if needed. Lists that would take
    the storage past WORK_CAP rows are not built (LLEN stays -1).
    """
    for ll in range(m, l0 - 1, -1):
        for cc in range(max(0, c0 - (ll - l0)), min(c0, m - ll) + 1):
            key = ll * (R + 1) + cc
            if LLEN[key] >= 0:
                continue
            o = lpos[0]
            if cc == 0:
                LV = _grow2(LV, o + 1)
                LPM = _grow1(LPM, o + 1)
                for t in range(len(mk)):
                    LV[o, t] = 0
                LPM[o] = 1.0
                LOFF[key] = o
                LLEN[key] = 1
                lpos[0] = o + 1
                continue
            D = m - ll
            fa = (D - cc) / D
            fb = cc / D
            na = 0
            pa = 0
            if cc <= m - ll - 1:
                na = LLEN[key + R + 1]
                pa = LOFF[key + R + 1]
            nb = LLEN[key + R]  # (ll + 1, cc - 1)
            pb = LOFF[key + R]
            if na < 0 or nb < 0 or o + na + nb + 1 > WORK_CAP:
                return LV, LPM  # over the work cap: (l0, c0) stays unbuilt
            LV = _grow2(LV, o + na + nb + 1)
            LPM = _grow1(LPM, o + na + nb + 1)
            cur = o + na + nb  # scratch row past the output: the shifted value
            w = _merge_shifted(LV, LPM, pa, na, pb, nb, VAL, ll, LV, cur, LV, LPM, o, fa, fb, mk)
            LOFF[key] = o
            LLEN[key] = w - o
            lpos[0] = w
    return LV, LPM


@njit(cache=True)
def _subset_sign_probs(VAL, m, r, X, xi, LO, HI, R, LV, LPM, LOFF, LLEN, lpos, CB, mk):
    """P(sum < x), P(sum = x), P(sum > x) for the sum over a uniform random r-subset
    of items 0 .. m - 1 (values VAL, exact limbs), x = X[xi].

    LO, HI: from :func:`suffix_bounds` with this m and R >= r. LV, LPM, LOFF, LLEN,
    lpos: completion lists of this m (:func:`_build_list`), shared by the calls with
    the same items. CB[a, b] = min(C(a, b), LIST_CAP + 1). Returns
    (p_less, p_eq, p_greater, LV, LPM); the three probabilities sum to 1 up to
    rounding (about m 1e-16). They are NaN if the count needs more than WORK_CAP
    partial sums or list rows.
    """
    L = len(mk)
    # row numbers as non-literal ints: numba would compile a helper once per literal
    TB, TA, TY = np.int64(0), np.int64(1), np.int64(2)
    p_less = 0.0
    p_eq = 0.0
    p_greater = 0.0
    T = np.empty((3, L), dtype=np.int64)
    _sub(X, xi, HI, r, T, TB, mk)  # below this every sum is < x
    _sub(X, xi, LO, r, T, TA, mk)  # above this every sum is > x
    zero = np.zeros((1, L), dtype=np.int64)
    if _cmp(zero, TB, T, TB, mk) < 0:
        return 1.0, 0.0, 0.0, LV, LPM
    if _cmp(zero, TB, T, TA, mk) > 0:
        return 0.0, 0.0, 1.0, LV, LPM
    if _cmp(T, TB, T, TA, mk) == 0:
        return 0.0, 1.0, 0.0, LV, LPM
    cap = 64
    OV = np.empty((cap, L), dtype=np.int64)
    OM = np.empty(cap)
    NV = np.empty((cap, L), dtype=np.int64)
    NM = np.empty(cap)
    CUR = np.empty((1, L), dtype=np.int64)
    CM = np.empty(64)
    ooff = np.zeros(r + 2, dtype=np.intp)
    on = np.zeros(r + 2, dtype=np.intp)
    noff = np.zeros(r + 2, dtype=np.intp)
    nn = np.zeros(r + 2, dtype=np.intp)
    for t in range(L):
        OV[0, t] = 0
    OM[0] = 1.0
    on[0] = 1
    for h in range(m):  # item h decided: layer h -> h + 1
        D = m - h
        rem = D - 1  # items left after item h
        c_lo = max(0, r - rem)
        c_hi = min(r, h + 1)
        need = 0
        for c in range(c_lo, c_hi + 1):
            need += on[c] + (on[c - 1] if c >= 1 else 0)
        if need > WORK_CAP:
            return np.nan, np.nan, np.nan, LV, LPM
        NV = _grow2(NV, need)
        NM = _grow1(NM, need)
        base = 0
        alive = 0
        for c in range(c_lo, c_hi + 1):
            # merge the states of size c (item h left out) and c - 1 (item h taken)
            na = on[c] if c <= min(r, h) else 0
            nb = on[c - 1] if c >= 1 else 0
            pa = ooff[c]
            pb = ooff[c - 1] if c >= 1 else 0
            fe = (D - (r - c)) / D  # P(item h left out | c of r taken so far)
            fi = (r - c + 1) / D  # P(item h taken | c - 1 taken so far)
            w = _merge_shifted(OV, OM, pa, na, pb, nb, VAL, h, CUR, TB, NV, NM, base, fe, fi, mk)
            # decided states leave: every completion below, or above, the threshold
            rc = r - c
            bi = (h + 1) * (R + 1) + rc
            _sub(X, xi, HI, bi, T, TB, mk)
            _sub(X, xi, LO, bi, T, TA, mk)
            s = base
            e = w
            while s < e and _cmp(NV, s, T, TB, mk) < 0:
                p_less += NM[s]
                s += 1
            while e > s and _cmp(NV, e - 1, T, TA, mk) > 0:
                e -= 1
                p_greater += NM[e]
            if _cmp(T, TB, T, TA, mk) == 0:  # a single completion sum: the rest tie
                while s < e:
                    p_eq += NM[s]
                    s += 1
            # meet in the middle: enough states for the completion list to pay off
            nc = CB[rem, rc]
            if rc > 0 and 4 * (e - s) > nc and nc <= LIST_CAP:
                if LLEN[bi] < 0:
                    LV, LPM = _build_list(VAL, m, h + 1, rc, LV, LPM, LOFF, LLEN, lpos, R, mk)
                    if LLEN[bi] < 0:
                        return np.nan, np.nan, np.nan, LV, LPM
                off = LOFF[bi]
                nl = LLEN[bi]
                CM = _grow1(CM, nl + 1)
                CM[0] = 0.0
                for u in range(nl):  # CM[u]: probability of the completions below entry u
                    CM[u + 1] = CM[u] + LPM[off + u]
                ptr = nl
                for u in range(s, e):
                    # completions below y = x - S make S + sigma < x; one equal to y ties
                    _sub(X, xi, NV, u, T, TY, mk)
                    while ptr > 0 and _cmp(LV, off + ptr - 1, T, TY, mk) >= 0:
                        ptr -= 1
                    eqm = 0.0
                    if ptr < nl and _cmp(LV, off + ptr, T, TY, mk) == 0:
                        eqm = LPM[off + ptr]
                    p_less += NM[u] * CM[ptr]
                    p_eq += NM[u] * eqm
                    p_greater += NM[u] * (CM[nl] - CM[ptr] - eqm)
                e = s
            noff[c] = s
            nn[c] = e - s
            alive += e - s
            base = w
        for c in range(r + 2):
            if c < c_lo or c > c_hi:
                nn[c] = 0
        OV, NV = NV, OV
        OM, NM = NM, OM
        ooff, noff = noff, ooff
        on, nn = nn, on
        if alive == 0:
            break
    return p_less, p_eq, p_greater, LV, LPM


@njit(cache=True)
def saturated_binomials(n_max, r_max, sat):
    """CB[a, b] = min(C(a, b), sat) for 0 <= a <= n_max, 0 <= b <= r_max."""
    CB = np.zeros((n_max + 1, r_max + 1), dtype=np.int64)
    for a in range(n_max + 1):
        CB[a, 0] = 1
        for b in range(1, min(a, r_max) + 1):
            CB[a, b] = min(CB[a - 1, b - 1] + CB[a - 1, b], sat)
    return CB


def subset_sign_probs(v, vj, s):
    """Sign of vj + the sum over a uniform random s-subset of v: (P(< 0), P(= 0), P(> 0)).

    The counter of :func:`chunk_errors` on one problem, exact (a reference for tests):
    the direct count for 1 or 2 items (or complements), else the dynamic programme.
    v : (m,) float64, vj : float, 0 <= s <= m.
    """
    w = np.append(np.asarray(v, dtype=np.float64), float(vj))
    m = w.shape[0] - 1
    _, bits = _scale(w)
    mk = (0,) * limb_count(bits, m + 1)
    L = len(mk)
    VAL = np.empty((m + 1, L), dtype=np.int64)
    exact_values(w, VAL, mk)
    r = min(s, m - s)
    R = max(r, 1)
    LO = np.empty(((m + 1) * (R + 1), L), dtype=np.int64)
    HI = np.empty_like(LO)
    suffix_bounds(VAL, w, m, R, LO, HI, mk)
    X = np.zeros((2, L), dtype=np.int64)  # the threshold, and a scratch row
    if s <= m - s:  # chosen ones: vj + sum_S > 0  <=>  sum_S > -vj
        _sub(X, 0, VAL, m, X, 0, mk)
    else:  # left-out ones: total - sum_R > 0  <=>  sum_R < total
        for u in range(m + 1):
            _add(X, 0, VAL, u, X, 0, mk)
    if 1 <= r <= 2:  # as in chunk_errors: a direct count
        srt = np.argsort(w[:m], kind="stable").astype(np.intp)
        pl, pe, pg = _small_sign_probs(VAL, srt, m, r, X, 0, 1, mk)
    else:
        size = (m + 1) * (R + 1)
        LOFF = np.zeros(size, dtype=np.intp)
        LLEN = np.full(size, -1, dtype=np.intp)
        lpos = np.zeros(1, dtype=np.intp)
        LV = np.empty((64, L), dtype=np.int64)
        LPM = np.empty(64)
        CB = saturated_binomials(m, R, LIST_CAP + 1)
        pl, pe, pg, _, _ = _subset_sign_probs(VAL, m, r, X, 0, LO, HI, R, LV, LPM, LOFF, LLEN, lpos, CB, mk)
    return (pl, pe, pg) if s <= m - s else (pg, pe, pl)


@njit(cache=True)
def _hyp(LC, N, K, d, y):
    """P(Y = y), Y hypergeometric: d draws from N items of which K marked."""
    if y < 0 or y > K or d - y < 0 or d - y > N - K:
        return 0.0
    return np.exp(LC[K, y] + LC[N - K, d - y] - LC[N, d])


@njit(cache=True)
def _plurality_cost(ones, zeros, t):
    """Error of a two-class vote with these counts (tie: 1/2), true class t."""
    if ones == zeros:
        return 0.5
    return 0.0 if (1 if ones > zeros else 0) == t else 1.0


@njit(cache=True)
def _pairs_above(VAL, srt, m, X, xi, sr, strict, mk):
    """Pairs of items 0 .. m - 1 whose sum is > X[xi] (>= if not strict): two pointers
    over the items sorted by value (srt). X[sr]: scratch row."""
    count = 0
    lo = 0
    hi = m - 1
    while lo < hi:
        _add(VAL, srt[lo], VAL, srt[hi], X, sr, mk)
        c = _cmp(X, sr, X, xi, mk)
        if c > 0 or (c == 0 and not strict):
            count += hi - lo  # srt[hi] with every item from lo to hi - 1
            hi -= 1
        else:
            lo += 1
    return count


@njit(cache=True)
def _small_sign_probs(VAL, srt, m, r, X, xi, sr, mk):
    """(P(sum < x), P(sum = x), P(sum > x)) for a uniform r-subset, r = 1 or 2, of items
    0 .. m - 1 (x = X[xi]): a direct count, O(m)."""
    if r == 1:
        lt = 0
        eq = 0
        for u in range(m):
            c = _cmp(VAL, u, X, xi, mk)
            if c < 0:
                lt += 1
            elif c == 0:
                eq += 1
        return lt / m, eq / m, (m - lt - eq) / m
    total = m * (m - 1) // 2
    gt = _pairs_above(VAL, srt, m, X, xi, sr, True, mk)
    ge = _pairs_above(VAL, srt, m, X, xi, sr, False, mk)
    return (total - ge) / total, (ge - gt) / total, gt / total


@njit(cache=True)
def _unit_errors(j, lab, VF, VAL, z, t, k_min, k_max, PV, LC, CB, ws_i, ws_v, LV, LPM, acc, mk):
    """acc[k - 1] += P(V = j) P(error | V = j) for k_min <= k <= k_max, one held-out point.

    lab : (W,) class codes of its neighbours; VF, VAL : signed weights of the
    positive-distance ones (floats, exact limbs); z : leading zero distances; t : its
    class. ws_i : (2 nb + W + 1,) and ws_v : (2 nb + 5, L) workspaces, nb = (W + 1)(R + 1).
    Returns (LV, LPM), the list storage.
    """
    W = lab.shape[0]
    q_max = PV.shape[1] - 1
    # row numbers as non-literal ints (see _subset_sign_probs): thresholds x0, x1, a
    # scratch row, and the sums of the r smallest / largest items
    X0, X1, SR, RLO, RHI = np.int64(0), np.int64(1), np.int64(2), np.int64(3), np.int64(4)
    Wn = W - z
    R = CB.shape[1] - 1
    nb = (Wn + 1) * (R + 1)
    LOFF = ws_i[0:nb]
    LLEN = ws_i[nb : 2 * nb]
    srt = ws_i[2 * nb : 2 * nb + W]
    lpos = ws_i[2 * nb + W : 2 * nb + W + 1]
    LO = ws_v[0:nb]
    HI = ws_v[nb : 2 * nb]
    X = ws_v[2 * nb : 2 * nb + 5]
    m = j - 1 - z  # positive-distance positions before j (when j > z)
    ones_z = 0
    for u in range(min(z, j - 1)):
        ones_z += lab[u]
    sorted_ready = False  # thresholds and the items sorted by value
    tables_ready = False  # suffix bounds and a fresh list memo, for the counter
    for k in range(max(k_min, j - q_max), min(k_max, j) + 1):
        w = PV[k - 1, j - k]
        if w == 0.0:
            continue
        s = k - 1
        err = 0.0
        if j <= z:  # every voter at distance 0: a plurality of k
            bj = lab[j - 1]
            for o in range(0, s + 1):
                hp = _hyp(LC, j - 1, ones_z, s, o)
                if hp > 0.0:
                    err += hp * _plurality_cost(o + bj, k - o - bj, t)
            acc[k - 1] += w * err
            continue
        for a in range(1, min(z, s) + 1):  # a voters at distance 0: they alone vote
            pa = _hyp(LC, j - 1, z, s, a)
            if pa > 0.0:
                for o in range(0, a + 1):
                    hp = _hyp(LC, z, ones_z, a, o)
                    if hp > 0.0:
                        err += pa * hp * _plurality_cost(o, a - o, t)
        p0 = _hyp(LC, j - 1, z, s, X0) if z > 0 else 1.0
        if p0 > 0.0 and s <= m:
            r = min(s, m - s)
            xi = X0 if s <= m - s else X1
            if not sorted_ready:
                # x0: the chosen voters win for class 1 iff sum_S > -v_j; x1: the
                # held-out ones iff sum_R < v_1 + .. + v_j
                for u in range(len(mk)):
                    X[X0, u] = 0
                    X[X1, u] = 0
                _sub(X, X0, VAL, m, X, X0, mk)
                for u in range(m + 1):
                    _add(X, X1, VAL, u, X, X1, mk)
                for u in range(m):  # insertion sort by value (m is small)
                    v = u
                    while v > 0 and VF[srt[v - 1]] > VF[u]:
                        srt[v] = srt[v - 1]
                        v -= 1
                    srt[v] = u
                sorted_ready = True
            # decided by the bounds of all r-subsets? (sum of the r smallest / largest)
            for u in range(len(mk)):
                X[RLO, u] = 0
                X[RHI, u] = 0
            for u in range(r):
                _add(X, RLO, VAL, srt[u], X, RLO, mk)
                _add(X, RHI, VAL, srt[m - 1 - u], X, RHI, mk)
            below = _cmp(X, RHI, X, xi, mk) < 0  # every sum < x
            above = _cmp(X, RLO, X, xi, mk) > 0  # every sum > x
            if below or above or _cmp(X, RLO, X, RHI, mk) == 0:
                c0 = -1 if below else _cmp(X, RLO, X, xi, mk)
                pl = 1.0 if c0 < 0 else 0.0
                pe = 1.0 if c0 == 0 else 0.0
                pg = 1.0 if c0 > 0 else 0.0
            elif r <= 2:
                pl, pe, pg = _small_sign_probs(VAL, srt, m, r, X, xi, SR, mk)
            else:
                if not tables_ready:
                    suffix_bounds(VAL, VF, m, R, LO, HI, mk)
                    for u in range((m + 1) * (R + 1)):
                        LLEN[u] = -1
                    lpos[0] = 0
                    tables_ready = True
                pl, pe, pg, LV, LPM = _subset_sign_probs(
                    VAL, m, r, X, xi, LO, HI, R, LV, LPM, LOFF, LLEN, lpos, CB, mk
                )
            if xi == X0:
                p1 = pg
                p0w = pl
            else:
                p1 = pl
                p0w = pg
            err += p0 * ((p0w if t == 1 else p1) + 0.5 * pe)
        acc[k - 1] += w * err
    return LV, LPM


@njit(nogil=True, cache=True)
def point_values(neigh_ind, neigh_dist, y, W, mk):
    """Per held-out point: class codes of its first W neighbours (LAB), the signed
    weights of the positive-distance ones as floats (VF) and exact limbs (VAL), and
    the number of zero distances (Z). mk : (0,) * L, L from :func:`limbs_needed`."""
    n = neigh_ind.shape[0]
    LAB = np.empty((n, W), dtype=np.intp)
    VF = np.zeros((n, W))
    VAL = np.zeros((n, W, len(mk)), dtype=np.int64)
    Z = np.zeros(n, dtype=np.intp)
    for i in range(n):
        for u in range(W):
            LAB[i, u] = y[neigh_ind[i, u]]
        z = signed_weights(LAB[i], neigh_dist[i, :W], VF[i])
        exact_values(VF[i, : W - z], VAL[i], mk)
        Z[i] = z
    return LAB, VF, VAL, Z


@njit(nogil=True, cache=True)
def chunk_errors(first, step, LAB, VF, VAL, Z, y, k_min, PV, LC, CB, sums, mk):
    """sums[ch, k - 1] += P(V = j) P(error | V = j, i held out) over the work units of
    chunk ch, for the chunks ch = first, first + step, ... of sums.shape[0]: distance-
    weighted vote, two classes, k_min <= k <= sums.shape[1].

    Work unit u = (i, j): held-out point i = u // J and V = j = k_min + u % J, every k
    at once (J = W - k_min + 1). Chunk ch holds the units ch, ch + n_chunks, ...: the
    costly units (points near the class boundary, large j) spread over the chunks, and
    a chunk's sum depends on the chunk alone, so callers may run chunks on any threads.

    LAB, VF, VAL, Z : from :func:`point_values`. y : (n,) class codes 0 / 1. PV :
    (k_max, q_max + 1) rank probabilities (0 where skipped), W <= k_max + q_max. LC :
    log-binomials LC[N, y] for N, y <= W. CB : ``saturated_binomials(W, R, LIST_CAP + 1)``
    with R = max(1, min(q_max, W)). The risk is the sum of sums over the chunks, in
    chunk order, divided by n.
    """
    n, W = LAB.shape
    n_chunks, k_max = sums.shape
    L = len(mk)
    R = CB.shape[1] - 1
    nb = (W + 1) * (R + 1)
    ws_i = np.empty(2 * nb + W + 1, dtype=np.intp)
    ws_v = np.empty((2 * nb + 5, L), dtype=np.int64)
    LV = np.empty((256, L), dtype=np.int64)
    LPM = np.empty(256)
    J = W - k_min + 1
    for ch in range(first, n_chunks, step):
        for unit in range(ch, n * J, n_chunks):
            i = unit // J
            j = k_min + unit - i * J
            LV, LPM = _unit_errors(
                j,
                LAB[i],
                VF[i],
                VAL[i],
                Z[i],
                y[i],
                k_min,
                k_max,
                PV,
                LC,
                CB,
                ws_i,
                ws_v,
                LV,
                LPM,
                sums[ch],
                mk,
            )
