"""Exact top-k neighbour selection under the metrics other than (reduced) Euclidean.

These kernels import nothing from knnx but their sibling kernels. They assume validated
input: C-contiguous float64 arrays, references transposed (``RT``, shape (d, n_ref)),
nominal attributes as non-negative integer codes stored as floats, NaN for a missing
value only where the metric has a missing-value rule.

The search (:func:`metric_select_rows`) is exact: it returns the k smallest
(reduced distance, index) pairs of every query, ties ordered by reference index, the
distances each accumulated in feature order (bit for bit what a loop over the
features gives). Queries go in blocks of _QUERY_BLOCK, run on Python threads by
:func:`knnx._kernels.run_blocks` (one kernel per scan mode, :func:`_make_block`); a
block walks the references tile by tile (a tile of the transposed references spans
about _TILE_BYTES, so it stays in cache while every query of the block uses it), and
each query computes its distances to the tile feature by feature across the tile
(the loop over references vectorises). A query keeps as candidates, in increasing
index order, the references that pass its threshold T: at first the k-th smallest
distance to a strided sample of the references (k distinct references lie within it,
so it bounds the k-th nearest distance), then, whenever more than k + max(k, 64)
candidates are held, the k-th distance of the k smallest (distance, index) among
them, which it keeps (``_compact``); from then on a reference must be strictly below
T, since one at T comes after k candidates of smaller index. At the end the
candidates are bucket-sorted by (distance, index) as in
:func:`knnx._kernels.neighbors.select_rows`.

MINKOWSKI first bounds each distance from below with integer powers of |q - r|
(products, no libm power), a bound proved to stay below the reduced distance despite
rounding (``_cheap_limit``), and computes the distance itself (libm power, feature
order) only for the references the bound does not exclude; for powers above
_CHEAP_MAX_POWER it abandons a reference once its partial sum passes T. Early
abandoning of the other metrics was measured slower (see ``_tile_abandon``).

The reduced distances, per metric code, are those of :mod:`knnx._kernels.metric_terms`.
"""

import numpy as np
from numba import njit

from knnx._kernels.metric_codes import (  # noqa: F401 (the kernels' codes, re-exported)
    CHEBYSHEV,
    GOWER,
    HAMMING,
    HEOM,
    HVDM,
    MANHATTAN,
    MINKOWSKI,
    NOMINAL,
    NUMERIC,
    PRECOMPUTED,
)
from knnx._kernels.metric_terms import exact_mixed, exact_numeric, numeric_sums, tile_mixed, tile_numeric
from knnx._kernels.neighbors import _select_kth, _sorted_candidates

# References sampled per query for a first threshold (the k-th smallest of their
# distances); query rows per block; bytes of the transposed references a
# tile spans (its references: this / 8d, within [_TILE_MIN, _TILE_MAX]).
_SAMPLE = 128
_QUERY_BLOCK = 32
_TILE_BYTES = 1 << 17
_TILE_MIN = 64
_TILE_MAX = 4096
# MINKOWSKI powers up to this are screened by integer powers (_tile_cheap); above
# it, early abandoning (_tile_abandon): features for every reference of a tile
# before the first test, then features per test.
_CHEAP_MAX_POWER = 32.0
# Scan modes (:func:`scan_mode`).
NUMERIC_SCAN, MIXED_SCAN, CHEAP, ABANDON = 0, 1, 2, 3
_ABANDON_FIRST = 4
_ABANDON_CHUNK = 4


@njit(cache=True)
def _compact(bd, bi, c, k, scratch):
    """Keep the k smallest (distance, index) of the c candidates bd, bi (in increasing
    index order; kept in that order); returns the k-th smallest distance."""
    for u in range(c):
        scratch[u] = bd[u]
    T = _select_kth(scratch, c, k - 1)
    less = 0
    for u in range(c):
        less += bd[u] < T
    eq = k - less
    w = 0
    for u in range(c):
        v = bd[u]
        if v < T:
            bd[w] = v
            bi[w] = bi[u]
            w += 1
        elif v == T and eq > 0:
            eq -= 1
            bd[w] = v
            bi[w] = bi[u]
            w += 1
    return T


@njit(cache=True)
def _tile_cheap(Q, r, RT, j0, w, mlo, mhi, S, A, P):
    """S[u] = a float64 sum (feature order) of c_t <= |q_t - r_t| ** power up to the
    rounding bounded in :func:`_cheap_limit`, a = |q_t - r_t|: c_t = a ** m by m - 1
    multiplications, m = ceil(power) where a < 1, else floor(power). (A tighter bound
    for a fractional power, a ** floor(power) * a / (a (1 - f) + f), f its fraction:
    the division made the screen slower at d = 16, measured.)"""
    d = RT.shape[0]
    for t in range(d):
        q = Q[r, t]
        row = RT[t, j0 : j0 + w]
        first = t == 0
        if mlo == 3 and mhi == 3:  # the usual integer power, in one pass
            for u in range(w):
                a = abs(q - row[u])
                c = a * a * a
                S[u] = c if first else S[u] + c
            continue
        for u in range(w):
            A[u] = abs(q - row[u])
            P[u] = A[u]
        for _ in range(mlo - 1):
            for u in range(w):
                P[u] *= A[u]
        if mhi > mlo:
            for u in range(w):
                P[u] = P[u] * A[u] if A[u] < 1.0 else P[u]
        if first:
            for u in range(w):
                S[u] = P[u]
        else:
            for u in range(w):
                S[u] += P[u]


@njit(cache=True)
def _cheap_limit(T, d, mhi):
    """A bound B such that a sum S of :func:`_tile_cheap` above B proves the MINKOWSKI
    reduced distance E (sum of |q_t - r_t| ** power, feature order) above T.

    Per term, c_t = a^m (1 + e), |e| <= (m - 1) u (u = 2^-53; below the normal range an
    absolute m 2^-1075 more), a^m <= a^power, and the libm power p_t >= a^power (1 - 2u)
    - 2^-1074 (within 1 ulp): p_t >= c_t (1 - (m + 17) u) - 64 * 2^-1074 (with margin,
    m <= 32). The float64 sums of d non-negative terms are within (d - 1) u relative
    of the exact sums, so E >= S (1 - (2d + m + 17) u) - 64 d 2^-1074 (first order),
    and B = (T + 64 d 2^-1074)(1 + (4d + 4m + 128) u) covers that and the rounding
    of B itself. Partial sums of non-negative terms never decrease, so the bound holds
    for every prefix of the features as well."""
    if not T < np.inf:
        return np.inf
    return (T + d * 64 * 2.0**-1074) * (1.0 + (4.0 * d + 4.0 * mhi + 128.0) * 2.0**-53)


@njit(cache=True)
def _minkowski_pair(Q, r, R, j, power):
    """MINKOWSKI's reduced distance from Q[r] to R[j], summed as :func:`knnx._kernels.metric_terms.exact_numeric` does."""
    acc = 0.0
    for t in range(R.shape[1]):
        v = abs(Q[r, t] - R[j, t]) ** power
        acc = v if t == 0 else acc + v
    return acc


@njit(cache=True)
def _minkowski_upto(Q, r, R, j, power, T, strict):
    """MINKOWSKI's reduced distance from Q[r] to R[j] as :func:`knnx._kernels.metric_terms.exact_numeric` sums it,
    or, once a partial sum is past T (>= T when ``strict``, else > T), that partial
    sum: the reference is then excluded all the same (sums of non-negative terms
    never decrease)."""
    acc = 0.0
    for t in range(R.shape[1]):
        v = abs(Q[r, t] - R[j, t]) ** power
        acc = v if t == 0 else acc + v
        if acc > T or (strict and acc == T):
            break
    return acc


@njit(cache=True)
def _tile_abandon(Q, r, RT, j0, w, power, T, strict, D, SU):
    """MINKOWSKI unscreened (power above _CHEAP_MAX_POWER), with early abandoning: the
    first _ABANDON_FIRST features for every reference of the tile, then the next
    _ABANDON_CHUNK at a time only for the references whose partial sum can still pass
    T (< T, or <= T when not ``strict``): a partial sum of non-negative terms never
    decreases, so a reference past T stays past it. The survivors' distances are
    complete, the same operations in the same order as :func:`knnx._kernels.metric_terms.tile_numeric`; returns their
    count, their tile positions in SU[:count] (increasing). Measured (one thread, n =
    20000, 300 queries): power 40 3.5x (d = 16) and 4.6x (d = 64) faster than every
    term. For the cheap terms it is slower (manhattan and hamming 1.7-4.9x, chebyshev
    0.8-1.25x at d = 16 and 64): the survivors' terms are gathered, not vectorised."""
    d = RT.shape[0]
    f = min(d, _ABANDON_FIRST)
    for t in range(f):
        numeric_sums(MINKOWSKI, Q[r, t], RT[t, j0 : j0 + w], power, D, t == 0)
    ns = 0
    for u in range(w):
        SU[ns] = u
        ns += (D[u] < T) if strict else (D[u] <= T)
    t = f
    while t < d and ns > 0:
        t1 = min(d, t + _ABANDON_CHUNK)
        for tt in range(t, t1):
            q = Q[r, tt]
            row = RT[tt, j0 : j0 + w]
            for v in range(ns):
                u = SU[v]
                D[u] += abs(q - row[u]) ** power
        t = t1
        kept = 0
        for v in range(ns):
            u = SU[v]
            SU[kept] = u
            kept += (D[u] < T) if strict else (D[u] <= T)
        ns = kept
    return ns


@njit(cache=True)
def _append_within(D, w, j0, self_j, Ti, strict, c, bdi, bii):
    """Append to ``bdi``/``bii`` (``c`` held) the tile's references whose distance D[u]
    is within ``Ti`` (< Ti when ``strict``), the query itself excepted (``self_j``);
    returns the new count."""
    # Branches, not a branch-free append: after the first compaction few references
    # pass (measured 23-28% faster at d = 16).
    if strict:
        for u in range(w):
            if D[u] < Ti:
                j = j0 + u
                if j != self_j:
                    bdi[c] = D[u]
                    bii[c] = j
                    c += 1
    else:
        for u in range(w):
            if D[u] <= Ti:
                j = j0 + u
                if j != self_j:
                    bdi[c] = D[u]
                    bii[c] = j
                    c += 1
    return c


@njit(cache=True)
def _query_abandon(Q, r, RT, j0, w, self_j, power, Ti, strict, c, bdi, bii, D, SU):
    """:func:`_append_within` for MINKOWSKI with early abandoning (:func:`_tile_abandon`)."""
    ns = _tile_abandon(Q, r, RT, j0, w, power, Ti, strict, D, SU)
    for v in range(ns):
        j = j0 + SU[v]
        if j != self_j:
            bdi[c] = D[SU[v]]
            bii[c] = j
            c += 1
    return c


@njit(cache=True)
def _query_cheap(
    Q, r, R, RT, j0, w, self_j, power, mlo, mhi, k, i, T, strict, c, bdi, bii, D, W, P, SU, scratch
):
    """:func:`_append_within` for MINKOWSKI screened by a lower bound S of each distance
    (:func:`_cheap_limit`): the distance itself only where S does not exclude the
    reference. Updates T[i] and strict[i] (it may compact early)."""
    d = RT.shape[0]
    Ti = T[i]
    cheap_limit = k + max(k, 8)
    _tile_cheap(Q, r, RT, j0, w, mlo, mhi, D, W, P)
    Tc = _cheap_limit(Ti, d, mhi)
    ns = 0
    for u in range(w):
        if D[u] <= Tc:
            SU[ns] = u
            ns += (j0 + u) != self_j
    if ns > 2 * k:
        # Many pass (T is still loose): the distances of the k of smallest S bound the
        # k-th nearest (k distinct references) and may lower T.
        for v in range(ns):
            scratch[v] = D[SU[v]]
        Sk = _select_kth(scratch, ns, k - 1)
        top = 0.0
        taken = 0
        for v in range(ns):
            P[v] = np.nan
            if taken < k and D[SU[v]] <= Sk:
                P[v] = _minkowski_pair(Q, r, R, j0 + SU[v], power)
                top = max(top, P[v])
                taken += 1
        if top < Ti:
            Ti = top
            strict[i] = 0
            Tc = _cheap_limit(Ti, d, mhi)
    else:
        for v in range(ns):
            P[v] = np.nan
    for v in range(ns):
        u = SU[v]
        if D[u] <= Tc:
            e = P[v]
            if np.isnan(e):
                e = _minkowski_upto(Q, r, R, j0 + u, power, Ti, strict[i])
            if e < Ti or (e == Ti and not strict[i]):
                bdi[c] = e
                bii[c] = j0 + u
                c += 1
                if c > cheap_limit:  # compact early: T then excludes more by S
                    Ti = _compact(bdi, bii, c, k, scratch)
                    strict[i] = 1
                    c = k
                    Tc = _cheap_limit(Ti, d, mhi)
    T[i] = Ti
    return c


def _make_block(mode):
    """The kernel of one block of queries for scan ``mode`` (NUMERIC_SCAN, MIXED_SCAN, CHEAP or ABANDON;
    :func:`scan_mode`), a compile-time constant: numba prunes the other modes' branches
    before typing, so a metric compiles only its own mode's code (the metric ``code``
    is an argument: the metrics of one mode share one compiled kernel)."""

    @njit(nogil=True, cache=True)
    def block(
        code, Q, R, RT, rows, b0, nb, exclude_self, power, kinds, scale, vd, vd_off, n_vals, tile, out_dist,
        out_ind,
    ):  # fmt: skip
        """The queries rows[b0 : b0 + nb], reference tile by reference tile.

        Per query: ``bd``/``bi`` hold, in increasing index order, every reference seen
        so far that can still be among its k nearest: those with distance <= T
        (``strict`` 0) or < T (``strict`` 1). When more than ``limit`` are held, the k
        smallest (distance, index) are kept, T becomes the k-th distance and the test
        strict: a later reference (larger index) at distance T ranks after those k."""
        n_ref = RT.shape[1]
        k = out_ind.shape[1]
        s = min(n_ref, _SAMPLE)
        limit = k + max(k, 64)
        cap = limit + tile + 1
        D, W, P, SU = np.empty(tile), np.empty(tile), np.empty(tile), np.empty(tile, dtype=np.intp)
        bd, bi = np.empty((nb, cap)), np.empty((nb, cap), dtype=np.intp)
        scratch = np.empty(cap + k)
        T = np.empty(nb)
        strict = np.zeros(nb, dtype=np.uint8)
        cnt = np.zeros(nb, dtype=np.intp)
        sv = np.empty(s)
        mlo = mhi = 1
        if mode == CHEAP:  # MINKOWSKI's screen finds its first threshold in the first tile
            mlo, mhi = int(np.floor(power)), int(np.ceil(power))
            T[:] = np.inf
        else:
            # A first threshold per query: the k-th smallest distance to the sampled references
            # j = 0, stride, 2 stride, ... (itself excluded): k distinct references lie
            # within it, so it bounds the k-th nearest distance (inf when fewer are sampled).
            stride = n_ref // s
            for i in range(nb):
                r = rows[b0 + i]
                c = 0
                for u in range(s):
                    j = u * stride
                    if not (exclude_self and j == r):
                        if mode == MIXED_SCAN:
                            sv[c] = exact_mixed(code, Q, r, R, j, kinds, scale, vd, vd_off, n_vals)
                        else:
                            sv[c] = exact_numeric(code, Q, r, R, j, power)
                        c += 1
                T[i] = _select_kth(sv, c, k - 1) if c >= k else np.inf
        which = np.arange(nb)
        n_which = nb
        for _ in range(2):  # a second pass for the queries left with fewer than k (see below)
            for j0 in range(0, n_ref, tile):
                w = min(tile, n_ref - j0)
                for v in range(n_which):
                    i = which[v]
                    r = rows[b0 + i]
                    self_j = r if exclude_self else -1
                    if mode == CHEAP:
                        c = _query_cheap(
                            Q, r, R, RT, j0, w, self_j, power, mlo, mhi, k, i, T, strict, cnt[i], bd[i], bi[i],
                            D, W, P, SU, scratch,
                        )  # fmt: skip
                    elif mode == ABANDON:
                        c = _query_abandon(
                            Q, r, RT, j0, w, self_j, power, T[i], strict[i], cnt[i], bd[i], bi[i], D, SU
                        )
                    else:
                        if mode == MIXED_SCAN:
                            tile_mixed(code, Q, r, RT, j0, w, kinds, scale, vd, vd_off, n_vals, D, W)
                        else:
                            tile_numeric(code, Q, r, RT, j0, w, power, D)
                        c = _append_within(D, w, j0, self_j, T[i], strict[i], cnt[i], bd[i], bi[i])
                    if c > limit:
                        T[i] = _compact(bd[i], bi[i], c, k, scratch)
                        strict[i] = 1
                        c = k
                    cnt[i] = c
            # Not expected (T bounds the k-th distance): such a query scans again, no threshold.
            n_left = 0
            for v in range(n_which):
                i = which[v]
                if cnt[i] < k:
                    T[i] = np.inf
                    strict[i] = 0
                    cnt[i] = 0
                    which[n_left] = i
                    n_left += 1
            n_which = n_left
        _write_sorted(rows, b0, nb, k, bd, bi, cnt, out_dist, out_ind)

    return block


@njit(cache=True)
def _write_sorted(rows, b0, nb, k, bd, bi, cnt, out_dist, out_ind):
    """The k smallest (distance, index) of each query's candidates, in that order, into
    its row of the outputs."""
    cap = bd.shape[1]
    sd = np.empty(cap)
    si = np.empty(cap, dtype=np.intp)
    counts = np.empty(cap + 1, dtype=np.intp)
    for i in range(nb):
        r = rows[b0 + i]
        _sorted_candidates(bd[i], bi[i], cnt[i], k, sd, si, counts)
        for u in range(k):
            out_dist[r, u] = sd[u]
            out_ind[r, u] = si[u]


# One kernel per scan mode (module globals: numba's cache finds them by name).
_BLOCK_NUMERIC = _make_block(NUMERIC_SCAN)
_BLOCK_MIXED = _make_block(MIXED_SCAN)
_BLOCK_CHEAP = _make_block(CHEAP)
_BLOCK_ABANDON = _make_block(ABANDON)
_BLOCKS = {
    NUMERIC_SCAN: _BLOCK_NUMERIC,
    MIXED_SCAN: _BLOCK_MIXED,
    CHEAP: _BLOCK_CHEAP,
    ABANDON: _BLOCK_ABANDON,
}


def metric_tile(d):
    """References per tile for d features: the tile of the transposed references
    spans about _TILE_BYTES."""
    return min(_TILE_MAX, max(_TILE_MIN, _TILE_BYTES // (8 * max(d, 1)) // 8 * 8))


def scan_mode(code, power):
    """How a block finds candidates (:func:`_make_block`): CHEAP for MINKOWSKI with
    power <= _CHEAP_MAX_POWER (screened by integer powers), ABANDON above it, MIXED_SCAN
    for HEOM, HVDM and GOWER, NUMERIC_SCAN for the other codes."""
    if code == MINKOWSKI:
        return CHEAP if power <= _CHEAP_MAX_POWER else ABANDON
    return MIXED_SCAN if code in (HEOM, HVDM, GOWER) else NUMERIC_SCAN


def metric_select_rows(
    code, Q, R, RT, rows, exclude_self, power, kinds, scale, vd, vd_off, n_vals, tile, out_dist, out_ind
):
    """Exact top-k of the queries ``Q[rows]`` under metric ``code``.

    R : (n_ref, d) references, RT : (d, n_ref) the same transposed (for PRECOMPUTED,
    shapes (n_ref, 0) and (0, n_ref): the distances are the rows of Q). ``power``:
    MINKOWSKI's exponent. ``kinds``, ``scale``: per attribute, NUMERIC or NOMINAL and
    the numeric divisor. ``vd`` (flat), ``vd_off``, ``n_vals``: HVDM's tables,
    attribute t's at ``vd[vd_off[t]:vd_off[t] + n_vals[t] ** 2]``, row-major, its
    last row and column the unseen value. Outputs: the reduced distances and
    reference indices of the k nearest, ordered by (distance, index); self excluded
    when ``exclude_self``. ``tile`` <= 0: :func:`metric_tile`.

    Blocks of _QUERY_BLOCK queries run on numba's thread count of Python threads
    (:func:`knnx._kernels.run_blocks`; the block kernel releases the GIL); each row's
    result depends on that row alone, so the output does not depend on the thread count.
    """
    from knnx._kernels import run_blocks

    code, power, exclude_self = int(code), float(power), bool(exclude_self)
    block = _BLOCKS[scan_mode(code, power)]
    tile = int(tile) if tile > 0 else metric_tile(RT.shape[0])
    n_rows = rows.shape[0]

    metric = (power, kinds, scale, vd, vd_off, n_vals)

    def one(b0):
        nb = min(n_rows, b0 + _QUERY_BLOCK) - b0
        block(code, Q, R, RT, rows, b0, nb, exclude_self, *metric, tile, out_dist, out_ind)

    run_blocks(one, range(0, n_rows, _QUERY_BLOCK))
