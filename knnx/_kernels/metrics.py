"""Exact top-k neighbour selection under the metrics other than (reduced) Euclidean.

These kernels import nothing from knnx but their sibling kernels. They assume validated
input: C-contiguous float64 arrays, references transposed (``RT``, shape (d, n_ref)),
nominal attributes as non-negative integer codes stored as floats, NaN for a missing
value only where the metric has a missing-value rule.

Each query row computes its reduced distance (the ranked quantity, see below) to
every reference, feature by feature across all references (the loop over references
vectorises; each distance is still accumulated in feature order), then keeps the k
smallest (distance, index) pairs exactly, as :func:`knnx._kernels.neighbors.select_rows`
does for squared Euclidean: a sampled threshold, the references under it, a stable
bucket sort. Ties are ordered by reference index.

Reduced distances, per metric code (``q``, ``r``: a query's and a reference's value of
attribute t; ``s_t``: the attribute's scale, fitted by the caller):

* MANHATTAN: sum |q - r|.  CHEBYSHEV: max |q - r|.
* MINKOWSKI: sum |q - r| ** power (the distance is its power-th root).
* HAMMING: the number of attributes with q != r (the distance divides it by d).
* HEOM: sum of d_t ** 2, d_t = 1 if q or r is missing, else (q != r) for a nominal
  attribute, |q - r| / s_t for a numeric one (s_t the training range).
* HVDM: sum of d_t ** 2, d_t = 1 if q or r is missing; a nominal attribute adds the
  table value ``vd[t][q, r]`` (Wilson & Martinez's normalized_vdm squared, fitted by the
  caller; codes at or above the table's last row read that row, the unseen value); a
  numeric one (|q - r| / s_t) ** 2, s_t = 4 sigma. VDM is HVDM on nominal attributes only.
* GOWER: sum_t delta_t d_t / sum_t delta_t, delta_t = 0 if q or r is missing, d_t =
  (q != r) for a nominal attribute, |q - r| / s_t for a numeric one; 1 if no attribute
  is present in both rows.
* PRECOMPUTED: ``Q[r, j]`` itself (the queries are rows of a distance matrix).
"""

import numpy as np
from numba import njit, prange

from knnx._kernels.neighbors import _select_kth, _sorted_candidates

MANHATTAN = 1
CHEBYSHEV = 2
MINKOWSKI = 3
HAMMING = 4
HEOM = 5
HVDM = 6
GOWER = 7
PRECOMPUTED = 8

# Attribute kinds (the ``kinds`` argument).
NUMERIC = 0
NOMINAL = 1

_SELECT_SAMPLE = 128


@njit(cache=True, inline="always")
def _numeric_sums(code, q, row, power, D, first):
    """Add attribute t's term of the numeric metrics (no missing values) to D."""
    n_ref = row.shape[0]
    if code == MANHATTAN:
        if first:
            for j in range(n_ref):
                D[j] = abs(q - row[j])
        else:
            for j in range(n_ref):
                D[j] += abs(q - row[j])
    elif code == CHEBYSHEV:
        if first:
            for j in range(n_ref):
                D[j] = abs(q - row[j])
        else:
            for j in range(n_ref):
                D[j] = max(D[j], abs(q - row[j]))
    elif code == MINKOWSKI:
        if first:
            for j in range(n_ref):
                D[j] = abs(q - row[j]) ** power
        else:
            for j in range(n_ref):
                D[j] += abs(q - row[j]) ** power
    else:  # HAMMING
        if first:
            for j in range(n_ref):
                D[j] = 1.0 if q != row[j] else 0.0
        else:
            for j in range(n_ref):
                D[j] += 1.0 if q != row[j] else 0.0


@njit(cache=True, inline="always")
def _vd_index(value, n_vals):
    """Row of a nominal code in its VDM table: the code, or the last (unseen) row."""
    if value < n_vals - 1:  # compared as a float: int() of a code >= 2**63 overflows
        return int(value)
    return n_vals - 1


@njit(cache=True, inline="always")
def _mixed_term(code, kind, q, row, s, vd, off, nv, D, W):
    """Add one attribute's term of HEOM, HVDM or GOWER to D (and GOWER's count to W)."""
    n_ref = row.shape[0]
    q_missing = np.isnan(q)
    if code == GOWER:
        if q_missing:
            return
        for j in range(n_ref):
            r = row[j]
            if not np.isnan(r):
                if kind == NOMINAL:
                    D[j] += 1.0 if q != r else 0.0
                else:
                    D[j] += abs(q - r) / s
                W[j] += 1.0
        return
    if q_missing:
        for j in range(n_ref):
            D[j] += 1.0
        return
    if kind == NUMERIC:
        for j in range(n_ref):
            r = row[j]
            if np.isnan(r):
                D[j] += 1.0
            else:
                t = abs(q - r) / s
                D[j] += t * t
    elif code == HEOM:
        for j in range(n_ref):
            r = row[j]
            D[j] += 1.0 if (np.isnan(r) or q != r) else 0.0
    else:  # HVDM's nominal term
        base = off + _vd_index(q, nv) * nv
        for j in range(n_ref):
            r = row[j]
            if np.isnan(r):
                D[j] += 1.0
            else:
                D[j] += vd[base + _vd_index(r, nv)]


@njit(cache=True, inline="always")
def _row_distances(code, Q, r, RT, power, kinds, scale, vd, vd_off, n_vals, D, W):
    """D[j] = reduced distance from Q[r] to reference j (see the module docstring)."""
    d, n_ref = RT.shape
    if code == PRECOMPUTED:
        for j in range(n_ref):
            D[j] = Q[r, j]
        return
    if code <= HAMMING:
        for t in range(d):
            _numeric_sums(code, Q[r, t], RT[t], power, D, t == 0)
        return
    for j in range(n_ref):
        D[j] = 0.0
        W[j] = 0.0
    for t in range(d):
        _mixed_term(code, kinds[t], Q[r, t], RT[t], scale[t], vd, vd_off[t], n_vals[t], D, W)
    if code == GOWER:
        for j in range(n_ref):
            D[j] = D[j] / W[j] if W[j] > 0.0 else 1.0


@njit(parallel=True, cache=True)
def metric_select_rows(
    code, Q, RT, rows, exclude_self, power, kinds, scale, vd, vd_off, n_vals, out_dist, out_ind
):
    """Exact top-k of the queries ``Q[rows]`` under metric ``code``.

    RT : (d, n_ref) references transposed (for PRECOMPUTED, shape (0, n_ref): the
    distances are the rows of Q). ``power``: MINKOWSKI's exponent. ``kinds``,
    ``scale``: per attribute, NUMERIC or NOMINAL and the numeric divisor.
    ``vd`` (flat), ``vd_off``, ``n_vals``: HVDM's tables, attribute t's at
    ``vd[vd_off[t]:vd_off[t] + n_vals[t] ** 2]``, row-major, its last row and column
    the unseen value. Outputs: the reduced distances and reference indices of the k
    nearest, ordered by (distance, index); self excluded when ``exclude_self``.
    """
    n_ref = RT.shape[1]
    k = out_ind.shape[1]
    n_rows = rows.shape[0]
    s = min(n_ref, _SELECT_SAMPLE)
    stride = n_ref // s
    target = k * s / n_ref
    rank = min(s - 1, int(target + 2.0 * np.sqrt(target) + 3.0))
    per_block = 16
    n_blocks = (n_rows + per_block - 1) // per_block
    for blk in prange(n_blocks):
        D = np.empty(n_ref)
        W = np.empty(n_ref)
        ci = np.empty(n_ref, dtype=np.intp)
        cd = np.empty(n_ref)
        sd = np.empty(n_ref)
        si = np.empty(n_ref, dtype=np.intp)
        cnt = np.empty(n_ref + 1, dtype=np.intp)
        sample = np.empty(s)
        for t in range(blk * per_block, min(n_rows, (blk + 1) * per_block)):
            r = rows[t]
            self_j = r if exclude_self else -1
            _row_distances(code, Q, r, RT, power, kinds, scale, vd, vd_off, n_vals, D, W)
            for u in range(s):
                sample[u] = np.inf if u * stride == self_j else D[u * stride]
            T = _select_kth(sample, s, rank)
            c = 0
            for j in range(n_ref):
                ci[c] = j
                c += (D[j] <= T) & (j != self_j)
            if c < k:  # the threshold was too low: keep every reference
                c = 0
                for j in range(n_ref):
                    ci[c] = j
                    c += j != self_j
            for u in range(c):
                cd[u] = D[ci[u]]
            _sorted_candidates(cd, ci, c, k, sd, si, cnt)
            for u in range(k):
                out_dist[r, u] = sd[u]
                out_ind[r, u] = si[u]


@njit(nogil=True, cache=True)
def vdm_table(codes, y, n_vals, n_classes):
    """Wilson & Martinez's normalized_vdm squared between the values of one nominal
    attribute: ``out[a, b] = sum_c (P(c | a) - P(c | b)) ** 2``, P(c | v) = N_vc / N_v
    counted over the training rows whose value is present (``codes`` NaN: missing),
    and P(c | v) = 0 for every c when N_v = 0 (a value not seen in training; row and
    column ``n_vals - 1`` are that unseen value, as are codes >= n_vals - 1).
    Summed over classes in increasing order."""
    counts = np.zeros((n_vals, n_classes))
    totals = np.zeros(n_vals)
    for i in range(codes.shape[0]):
        v = codes[i]
        if not np.isnan(v):
            a = _vd_index(v, n_vals)
            counts[a, y[i]] += 1.0
            totals[a] += 1.0
    probs = np.zeros((n_vals, n_classes))
    for a in range(n_vals):
        if totals[a] > 0.0:
            for c in range(n_classes):
                probs[a, c] = counts[a, c] / totals[a]
    out = np.empty((n_vals, n_vals))
    for a in range(n_vals):
        for b in range(n_vals):
            acc = 0.0
            for c in range(n_classes):
                diff = probs[a, c] - probs[b, c]
                acc += diff * diff
            out[a, b] = acc
    return out
