"""Exact leave-p-out risk of distance-weighted kNN, two classes.

Setting (as in :mod:`knnx._kernels.lpo`): a held-out point i of class t, its
leave-one-out neighbours at positions 1 .. W ordered by (distance, index),
V the position of its k-th nearest *training* neighbour, P(V = j) = rank_prob[k - 1, j - k].
Given V = j the k voters are position j and S, a uniform random (k - 1)-subset of
positions 1 .. j - 1 (the complement of the q = j - k held-out ones).

Vote (``KNNClassifier(weights="distance")``): a voter at distance d > 0 (the metric's
distance, not a reduced one: for Euclidean the square root of the squared distance)
votes 1 / d for its class; if some voters are at distance 0, only those vote,
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
kernels as the length of a tuple ``limb_tag`` (``(0,) * L``), so that numba compiles the
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
def _add(A, i, B, j, out, o, limb_tag):
    """out[o] = A[i] + B[j] in limbs (out may alias A or B)."""
    L = len(limb_tag)
    carry = 0
    for t in range(L - 1):
        s = A[i, t] + B[j, t] + carry
        out[o, t] = s & _MASK
        carry = s >> _BITS
    out[o, L - 1] = A[i, L - 1] + B[j, L - 1] + carry


@njit(cache=True)
def _sub(A, i, B, j, out, o, limb_tag):
    """out[o] = A[i] - B[j] in limbs (out may alias A or B)."""
    L = len(limb_tag)
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
def _cmp(A, i, B, j, limb_tag):
    """Sign of A[i] - B[j] (limbs)."""
    for t in range(len(limb_tag) - 1, -1, -1):
        a = A[i, t]
        b = B[j, t]
        if a != b:
            return -1 if a < b else 1
    return 0


@njit(cache=True)
def _copy(A, i, out, o, limb_tag):
    for t in range(len(limb_tag)):
        out[o, t] = A[i, t]


@njit(cache=True, inline="always")  # on the hot path of both counters
def _merge_shifted(AV, AM, pa, na, pb, nb, w_exact, h, S, s, DV, DM, w, fa, fb, limb_tag):
    """Merge two sorted runs of sums into rows w, w + 1, ... of (DV, DM); return the next row.

    Run A is AV[pa : pa + na] with masses AM * fa; run B is AV[pb : pb + nb] + w_exact[h]
    with masses AM * fb, formed one row at a time in the scratch row S[s]. Both runs
    strictly increase, so equal values can only pair across them: they become one
    row with the masses added. The output rows must not overlap the input rows.
    """
    if nb > 0:
        _add(AV, pb, w_exact, h, S, s, limb_tag)
    ia = 0
    ib = 0
    while ia < na or ib < nb:
        sg = 1 if ia >= na else (-1 if ib >= nb else _cmp(AV, pa + ia, S, s, limb_tag))
        if sg <= 0:
            _copy(AV, pa + ia, DV, w, limb_tag)
            DM[w] = AM[pa + ia] * fa
            if sg == 0:
                DM[w] += AM[pb + ib] * fb
            ia += 1
        else:
            _copy(S, s, DV, w, limb_tag)
            DM[w] = AM[pb + ib] * fb
        if sg >= 0:
            ib += 1
            if ib < nb:
                _add(AV, pb + ib, w_exact, h, S, s, limb_tag)
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
def exact_values(v, out, limb_tag):
    """out[u] = v[u] * 2^-e as exact limbs, e from :func:`_scale` (the caller has
    checked with :func:`limb_count` that len(limb_tag) limbs hold the sums it forms)."""
    L = len(limb_tag)
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
def signed_weights(lab, dist, out):
    """out[u] = +-1 / dist[u] (+ for class 1) over the positive distances; returns
    z, the number of leading zero distances (out[:len(dist) - z] is filled)."""
    W = dist.shape[0]
    z = 0
    while z < W and dist[z] == 0.0:
        z += 1
    for u in range(W - z):
        w = 1.0 / dist[z + u]
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
def suffix_bounds(w_exact, w_float, m, R, low_sums, high_sums, limb_tag):
    """low_sums[h * (R + 1) + c], high_sums[...] = sum of the c smallest / largest of items h .. m - 1,
    for 0 <= h <= m, 0 <= c <= min(R, m - h). w_float: the same values as floats (to sort)."""
    srt = np.empty(max(m, 1), dtype=np.intp)
    for h in range(m, -1, -1):
        ln = m - h
        if ln > 0:
            t = ln - 1
            while t > 0 and w_float[srt[t - 1]] > w_float[h]:
                srt[t] = srt[t - 1]
                t -= 1
            srt[t] = h
        base = h * (R + 1)
        for u in range(len(limb_tag)):
            low_sums[base, u] = 0
            high_sums[base, u] = 0
        for c in range(1, min(R, ln) + 1):
            _add(low_sums, base + c - 1, w_exact, srt[c - 1], low_sums, base + c, limb_tag)
            _add(high_sums, base + c - 1, w_exact, srt[ln - c], high_sums, base + c, limb_tag)


@njit(cache=True)
def _build_list(w_exact, m, l0, c0, store, index, R, limb_tag):
    """Make sure the completion list of (l0, c0) is built: the sorted distinct sums of
    the c0-subsets of items l0 .. m - 1 with their probabilities under a uniform
    c0-subset.

    store = (list_sums, list_probs): the rows of every list, sums (exact limbs) and
    probabilities. index = (list_first, list_len, list_end): list_first/list_len[l *
    (R + 1) + c] locate the list of (l, c) (list_len = -1: not built), list_end[0] is
    the first free row of the store. The list of (l, c) is made from those of (l + 1, c)
    (item l left out, probability (m - l - c) / (m - l)) and (l + 1, c - 1) shifted by
    item l (taken, probability c / (m - l)). Returns the store, grown if needed. Lists
    that would take the store past WORK_CAP rows are not built (list_len stays -1).
    """
    list_sums, list_probs = store
    list_first, list_len, list_end = index
    for ll in range(m, l0 - 1, -1):
        for cc in range(max(0, c0 - (ll - l0)), min(c0, m - ll) + 1):
            key = ll * (R + 1) + cc
            if list_len[key] >= 0:
                continue
            o = list_end[0]
            if cc == 0:
                list_sums = _grow2(list_sums, o + 1)
                list_probs = _grow1(list_probs, o + 1)
                for t in range(len(limb_tag)):
                    list_sums[o, t] = 0
                list_probs[o] = 1.0
                list_first[key] = o
                list_len[key] = 1
                list_end[0] = o + 1
                continue
            D = m - ll
            fa = (D - cc) / D
            fb = cc / D
            na = 0
            pa = 0
            if cc <= m - ll - 1:
                na = list_len[key + R + 1]
                pa = list_first[key + R + 1]
            nb = list_len[key + R]  # (ll + 1, cc - 1)
            pb = list_first[key + R]
            if na < 0 or nb < 0 or o + na + nb + 1 > WORK_CAP:
                return (list_sums, list_probs)  # over the work cap: (l0, c0) stays unbuilt
            list_sums = _grow2(list_sums, o + na + nb + 1)
            list_probs = _grow1(list_probs, o + na + nb + 1)
            cur = o + na + nb  # scratch row past the output: the shifted value
            w = _merge_shifted(
                list_sums,
                list_probs,
                pa,
                na,
                pb,
                nb,
                w_exact,
                ll,
                list_sums,
                cur,
                list_sums,
                list_probs,
                o,
                fa,
                fb,
                limb_tag,
            )
            list_first[key] = o
            list_len[key] = w - o
            list_end[0] = w
    return (list_sums, list_probs)


@njit(cache=True)
def _subset_sign_probs(w_exact, m, r, thr, xi, bounds, store, index, binom_sat, limb_tag):
    """P(sum < x), P(sum = x), P(sum > x) for the sum over a uniform random r-subset
    of items 0 .. m - 1 (values w_exact, exact limbs), x = thr[xi].

    bounds = (low_sums, high_sums): from :func:`suffix_bounds` with this m and
    R = binom_sat.shape[1] - 1 >= r. store, index: the completion lists of this m
    (:func:`_build_list`), shared by the calls with the same items. binom_sat[a, b] =
    min(C(a, b), LIST_CAP + 1). Returns (p_less, p_eq, p_greater, store); the three
    probabilities sum to 1 up to rounding (about m 1e-16). They are NaN if the count
    needs more than WORK_CAP partial sums or list rows.
    """
    low_sums, high_sums = bounds
    list_first, list_len, _ = index
    R = binom_sat.shape[1] - 1
    L = len(limb_tag)
    # row numbers as non-literal ints: numba would compile a helper once per literal
    TB, TA, TY = np.int64(0), np.int64(1), np.int64(2)
    p_less = 0.0
    p_eq = 0.0
    p_greater = 0.0
    T = np.empty((3, L), dtype=np.int64)
    _sub(thr, xi, high_sums, r, T, TB, limb_tag)  # below this every sum is < x
    _sub(thr, xi, low_sums, r, T, TA, limb_tag)  # above this every sum is > x
    zero = np.zeros((1, L), dtype=np.int64)
    if _cmp(zero, TB, T, TB, limb_tag) < 0:
        return 1.0, 0.0, 0.0, store
    if _cmp(zero, TB, T, TA, limb_tag) > 0:
        return 0.0, 0.0, 1.0, store
    if _cmp(T, TB, T, TA, limb_tag) == 0:
        return 0.0, 1.0, 0.0, store
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
        need = np.intp(0)
        for c in range(c_lo, c_hi + 1):
            need += on[c] + (on[c - 1] if c >= 1 else 0)
        if need > WORK_CAP:
            return np.nan, np.nan, np.nan, store
        NV = _grow2(NV, need)
        NM = _grow1(NM, need)
        base = np.intp(0)
        alive = np.intp(0)
        for c in range(c_lo, c_hi + 1):
            # merge the states of size c (item h left out) and c - 1 (item h taken)
            na = on[c] if c <= min(r, h) else 0
            nb = on[c - 1] if c >= 1 else 0
            pa = ooff[c]
            pb = ooff[c - 1] if c >= 1 else 0
            fe = (D - (r - c)) / D  # P(item h left out | c of r taken so far)
            fi = (r - c + 1) / D  # P(item h taken | c - 1 taken so far)
            w = _merge_shifted(OV, OM, pa, na, pb, nb, w_exact, h, CUR, TB, NV, NM, base, fe, fi, limb_tag)
            # decided states leave: every completion below, or above, the threshold
            rc = r - c
            bi = (h + 1) * (R + 1) + rc
            _sub(thr, xi, high_sums, bi, T, TB, limb_tag)
            _sub(thr, xi, low_sums, bi, T, TA, limb_tag)
            s = base
            e = w
            while s < e and _cmp(NV, s, T, TB, limb_tag) < 0:
                p_less += NM[s]
                s += 1
            while e > s and _cmp(NV, e - 1, T, TA, limb_tag) > 0:
                e -= 1
                p_greater += NM[e]
            if _cmp(T, TB, T, TA, limb_tag) == 0:  # a single completion sum: the rest tie
                while s < e:
                    p_eq += NM[s]
                    s += 1
            # meet in the middle: enough states for the completion list to pay off
            nc = binom_sat[rem, rc]
            if rc > 0 and 4 * (e - s) > nc and nc <= LIST_CAP:
                if list_len[bi] < 0:
                    store = _build_list(w_exact, m, h + 1, rc, store, index, R, limb_tag)
                    if list_len[bi] < 0:
                        return np.nan, np.nan, np.nan, store
                list_sums, list_probs = store
                off = list_first[bi]
                nl = list_len[bi]
                CM = _grow1(CM, nl + 1)
                CM[0] = 0.0
                for u in range(nl):  # CM[u]: probability of the completions below entry u
                    CM[u + 1] = CM[u] + list_probs[off + u]
                ptr = nl
                for u in range(s, e):
                    # completions below y = x - S make S + sigma < x; one equal to y ties
                    _sub(thr, xi, NV, u, T, TY, limb_tag)
                    while ptr > 0 and _cmp(list_sums, off + ptr - 1, T, TY, limb_tag) >= 0:
                        ptr -= 1
                    eqm = 0.0
                    if ptr < nl and _cmp(list_sums, off + ptr, T, TY, limb_tag) == 0:
                        eqm = list_probs[off + ptr]
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
    return p_less, p_eq, p_greater, store


@njit(cache=True)
def saturated_binomials(n_max, r_max, sat):
    """binom_sat[a, b] = min(C(a, b), sat) for 0 <= a <= n_max, 0 <= b <= r_max."""
    binom_sat = np.zeros((n_max + 1, r_max + 1), dtype=np.int64)
    for a in range(n_max + 1):
        binom_sat[a, 0] = 1
        for b in range(1, min(a, r_max) + 1):
            binom_sat[a, b] = min(binom_sat[a - 1, b - 1] + binom_sat[a - 1, b], sat)
    return binom_sat


def subset_sign_probs(v, vj, s):
    """Sign of vj + the sum over a uniform random s-subset of v: (P(< 0), P(= 0), P(> 0)).

    The counter of :func:`chunk_errors` on one problem, exact (a reference for tests):
    the direct count for 1 or 2 items (or complements), else the dynamic programme.
    v : (m,) float64, vj : float, 0 <= s <= m.
    """
    w = np.append(np.asarray(v, dtype=np.float64), float(vj))
    m = w.shape[0] - 1
    _, bits = _scale(w)
    limb_tag = (0,) * limb_count(bits, m + 1)
    L = len(limb_tag)
    w_exact = np.empty((m + 1, L), dtype=np.int64)
    exact_values(w, w_exact, limb_tag)
    r = min(s, m - s)
    R = max(r, 1)
    low_sums = np.empty(((m + 1) * (R + 1), L), dtype=np.int64)
    high_sums = np.empty_like(low_sums)
    suffix_bounds(w_exact, w, m, R, low_sums, high_sums, limb_tag)
    thr = np.zeros((2, L), dtype=np.int64)  # the threshold, and a scratch row
    if s <= m - s:  # chosen ones: vj + sum_S > 0  <=>  sum_S > -vj
        _sub(thr, 0, w_exact, m, thr, 0, limb_tag)
    else:  # left-out ones: total - sum_R > 0  <=>  sum_R < total
        for u in range(m + 1):
            _add(thr, 0, w_exact, u, thr, 0, limb_tag)
    if 1 <= r <= 2:  # as in chunk_errors: a direct count
        srt = np.argsort(w[:m], kind="stable").astype(np.intp)
        pl, pe, pg = _small_sign_probs(w_exact, srt, m, r, thr, 0, 1, limb_tag)
    else:
        size = (m + 1) * (R + 1)
        list_first = np.zeros(size, dtype=np.intp)
        list_len = np.full(size, -1, dtype=np.intp)
        list_end = np.zeros(1, dtype=np.intp)
        list_sums = np.empty((64, L), dtype=np.int64)
        list_probs = np.empty(64)
        binom_sat = saturated_binomials(m, R, LIST_CAP + 1)
        store = (list_sums, list_probs)
        index = (list_first, list_len, list_end)
        bounds = (low_sums, high_sums)
        pl, pe, pg, _ = _subset_sign_probs(w_exact, m, r, thr, 0, bounds, store, index, binom_sat, limb_tag)
    return (pl, pe, pg) if s <= m - s else (pg, pe, pl)


@njit(cache=True)
def _hyp(log_binom, N, K, d, y):
    """P(Y = y), Y hypergeometric: d draws from N items of which K marked."""
    if y < 0 or y > K or d - y < 0 or d - y > N - K:
        return 0.0
    return np.exp(log_binom[K, y] + log_binom[N - K, d - y] - log_binom[N, d])


@njit(cache=True)
def _plurality_cost(ones, zeros, t):
    """Error of a two-class vote with these counts (tie: 1/2), true class t."""
    if ones == zeros:
        return 0.5
    return 0.0 if (1 if ones > zeros else 0) == t else 1.0


@njit(cache=True)
def _pairs_above(w_exact, srt, m, thr, xi, sr, strict, limb_tag):
    """Pairs of items 0 .. m - 1 whose sum is > thr[xi] (>= if not strict): two pointers
    over the items sorted by value (srt). thr[sr]: scratch row."""
    count = 0
    lo = 0
    hi = m - 1
    while lo < hi:
        _add(w_exact, srt[lo], w_exact, srt[hi], thr, sr, limb_tag)
        c = _cmp(thr, sr, thr, xi, limb_tag)
        if c > 0 or (c == 0 and not strict):
            count += hi - lo  # srt[hi] with every item from lo to hi - 1
            hi -= 1
        else:
            lo += 1
    return count


@njit(cache=True)
def _small_sign_probs(w_exact, srt, m, r, thr, xi, sr, limb_tag):
    """(P(sum < x), P(sum = x), P(sum > x)) for a uniform r-subset, r = 1 or 2, of items
    0 .. m - 1 (x = thr[xi]): a direct count, O(m)."""
    if r == 1:
        lt = 0
        eq = 0
        for u in range(m):
            c = _cmp(w_exact, u, thr, xi, limb_tag)
            if c < 0:
                lt += 1
            elif c == 0:
                eq += 1
        return lt / m, eq / m, (m - lt - eq) / m
    total = m * (m - 1) // 2
    gt = _pairs_above(w_exact, srt, m, thr, xi, sr, np.bool_(True), limb_tag)  # np.bool_: not a literal
    ge = _pairs_above(w_exact, srt, m, thr, xi, sr, np.bool_(False), limb_tag)
    return (total - ge) / total, (ge - gt) / total, gt / total


@njit(cache=True)
def _unit_errors(point, j, k_min, tables, work, store, acc, limb_tag):
    """acc[k - 1] += P(V = j) P(error | V = j) for k_min <= k <= k_max = len(acc), one
    held-out point (Prop. 1 of Celisse & Mary-Huard with the weighted vote of Sec. 2.2).

    point = (lab, w_float, w_exact, z, t): lab (W,) class codes of its neighbours;
    w_float, w_exact the signed weights of the positive-distance ones (floats, exact
    limbs); z its leading zero distances; t its class. tables = (rank_prob, log_binom,
    binom_sat) as in :func:`chunk_errors`. work = (work_int, work_limbs): workspaces of
    (2 nb + W + 1,) intp and (2 nb + 5, L) limbs, nb = (W + 1)(R + 1). store =
    (list_sums, list_probs): the completion-list storage (:func:`_build_list`).
    Returns the store (grown if needed).
    """
    lab, w_float, w_exact, z, t = point
    rank_prob, log_binom, binom_sat = tables
    work_int, work_limbs = work
    k_max = acc.shape[0]
    W = lab.shape[0]
    q_max = rank_prob.shape[1] - 1
    # row numbers as non-literal ints (see _subset_sign_probs): thresholds x0, x1, a
    # scratch row, and the sums of the r smallest / largest items
    X0, X1, SR, RLO, RHI = np.int64(0), np.int64(1), np.int64(2), np.int64(3), np.int64(4)
    Wn = W - z
    R = binom_sat.shape[1] - 1
    nb = (Wn + 1) * (R + 1)
    list_first = work_int[0:nb]
    list_len = work_int[nb : 2 * nb]
    srt = work_int[2 * nb : 2 * nb + W]
    list_end = work_int[2 * nb + W : 2 * nb + W + 1]
    index = (list_first, list_len, list_end)
    low_sums = work_limbs[0:nb]
    high_sums = work_limbs[nb : 2 * nb]
    bounds = (low_sums, high_sums)
    thr = work_limbs[2 * nb : 2 * nb + 5]
    m = j - 1 - z  # positive-distance positions before j (when j > z)
    ones_z = np.intp(0)
    for u in range(min(z, j - 1)):
        ones_z += lab[u]
    sorted_ready = False  # thresholds and the items sorted by value
    tables_ready = False  # suffix bounds and a fresh list memo, for the counter
    for k in range(max(k_min, j - q_max), min(k_max, j) + 1):
        w = rank_prob[k - 1, j - k]
        if w == 0.0:
            continue
        s = k - 1
        err = 0.0
        if j <= z:  # every voter at distance 0: a plurality of k
            bj = lab[j - 1]
            for o in range(0, s + 1):
                hp = _hyp(log_binom, j - 1, ones_z, s, o)
                if hp > 0.0:
                    err += hp * _plurality_cost(o + bj, k - o - bj, t)
            acc[k - 1] += w * err
            continue
        for a in range(1, min(z, s) + 1):  # a voters at distance 0: they alone vote
            pa = _hyp(log_binom, j - 1, z, s, a)
            if pa > 0.0:
                for o in range(0, a + 1):
                    hp = _hyp(log_binom, z, ones_z, a, o)
                    if hp > 0.0:
                        err += pa * hp * _plurality_cost(o, a - o, t)
        p0 = _hyp(log_binom, j - 1, z, s, X0) if z > 0 else 1.0
        if p0 > 0.0 and s <= m:
            r = min(s, m - s)
            xi = X0 if s <= m - s else X1
            if not sorted_ready:
                # x0: the chosen voters win for class 1 iff sum_S > -v_j; x1: the
                # held-out ones iff sum_R < v_1 + .. + v_j
                for u in range(len(limb_tag)):
                    thr[X0, u] = 0
                    thr[X1, u] = 0
                _sub(thr, X0, w_exact, m, thr, X0, limb_tag)
                for u in range(m + 1):
                    _add(thr, X1, w_exact, u, thr, X1, limb_tag)
                for u in range(m):  # insertion sort by value (m is small)
                    v = u
                    while v > 0 and w_float[srt[v - 1]] > w_float[u]:
                        srt[v] = srt[v - 1]
                        v -= 1
                    srt[v] = u
                sorted_ready = True
            # decided by the bounds of all r-subsets? (sum of the r smallest / largest)
            for u in range(len(limb_tag)):
                thr[RLO, u] = 0
                thr[RHI, u] = 0
            for u in range(r):
                _add(thr, RLO, w_exact, srt[u], thr, RLO, limb_tag)
                _add(thr, RHI, w_exact, srt[m - 1 - u], thr, RHI, limb_tag)
            below = _cmp(thr, RHI, thr, xi, limb_tag) < 0  # every sum < x
            above = _cmp(thr, RLO, thr, xi, limb_tag) > 0  # every sum > x
            if below or above or _cmp(thr, RLO, thr, RHI, limb_tag) == 0:
                c0 = -1 if below else _cmp(thr, RLO, thr, xi, limb_tag)
                pl = 1.0 if c0 < 0 else 0.0
                pe = 1.0 if c0 == 0 else 0.0
                pg = 1.0 if c0 > 0 else 0.0
            elif r <= 2:
                pl, pe, pg = _small_sign_probs(w_exact, srt, m, r, thr, xi, SR, limb_tag)
            else:
                if not tables_ready:
                    suffix_bounds(w_exact, w_float, m, R, low_sums, high_sums, limb_tag)
                    for u in range((m + 1) * (R + 1)):
                        list_len[u] = -1
                    list_end[0] = 0
                    tables_ready = True
                pl, pe, pg, store = _subset_sign_probs(
                    w_exact, m, r, thr, xi, bounds, store, index, binom_sat, limb_tag
                )
            if xi == X0:
                p1 = pg
                p0w = pl
            else:
                p1 = pl
                p0w = pg
            err += p0 * ((p0w if t == 1 else p1) + 0.5 * pe)
        acc[k - 1] += w * err
    return store


@njit(nogil=True, cache=True)
def point_values(neigh_ind, neigh_dist, y, W, limb_tag):
    """Per held-out point: class codes of its first W neighbours (labels), the signed
    weights of the positive-distance ones as floats (w_float) and exact limbs (w_exact), and
    the number of zero distances (n_zero). limb_tag : (0,) * L, L from :func:`limbs_needed`."""
    n = neigh_ind.shape[0]
    labels = np.empty((n, W), dtype=np.intp)
    w_float = np.zeros((n, W))
    w_exact = np.zeros((n, W, len(limb_tag)), dtype=np.int64)
    n_zero = np.zeros(n, dtype=np.intp)
    for i in range(n):
        for u in range(W):
            labels[i, u] = y[neigh_ind[i, u]]
        z = signed_weights(labels[i], neigh_dist[i, :W], w_float[i])
        exact_values(w_float[i, : W - z], w_exact[i], limb_tag)
        n_zero[i] = z
    return labels, w_float, w_exact, n_zero


@njit(nogil=True, cache=True)
def chunk_errors(first, step, points, y, k_min, tables, sums, limb_tag):
    """sums[ch, k - 1] += P(V = j) P(error | V = j, i held out) over the work units of
    chunk ch, for the chunks ch = first, first + step, ... of sums.shape[0]: distance-
    weighted vote, two classes, k_min <= k <= sums.shape[1].

    Work unit u = (i, j): held-out point i = u // J and V = j = k_min + u % J, every k
    at once (J = W - k_min + 1). Chunk ch holds the units ch, ch + n_chunks, ...: the
    costly units (points near the class boundary, large j) spread over the chunks, and
    a chunk's sum depends on the chunk alone, so callers may run chunks on any threads.

    points = (labels, w_float, w_exact, n_zero): from :func:`point_values`. y : (n,)
    class codes 0 / 1. tables = (rank_prob, log_binom, binom_sat): rank_prob (k_max,
    q_max + 1) the rank probabilities P(V = k + q) (0 where skipped), W <= k_max +
    q_max; log_binom[N, y] = log C(N, y) for N, y <= W; binom_sat =
    ``saturated_binomials(W, R, LIST_CAP + 1)`` with R = max(1, min(q_max, W)). The risk
    is the sum of sums over the chunks, in chunk order, divided by n.
    """
    labels, w_float, w_exact, n_zero = points
    binom_sat = tables[2]
    n, W = labels.shape
    n_chunks, k_max = sums.shape
    L = len(limb_tag)
    R = binom_sat.shape[1] - 1
    nb = (W + 1) * (R + 1)
    work_int = np.empty(2 * nb + W + 1, dtype=np.intp)
    work_limbs = np.empty((2 * nb + 5, L), dtype=np.int64)
    work = (work_int, work_limbs)
    store = (np.empty((256, L), dtype=np.int64), np.empty(256))
    J = W - k_min + 1
    for ch in range(first, n_chunks, step):
        for unit in range(ch, n * J, n_chunks):
            i = unit // J
            j = k_min + unit - i * J
            point = (labels[i], w_float[i], w_exact[i], n_zero[i], y[i])
            store = _unit_errors(point, j, k_min, tables, work, store, sums[ch], limb_tag)
