"""The reduced distances of the metric kernels: per pair of rows, and from one query to a
tile of references (the same operations in the same order, so bit for bit the same
value). Imports nothing from knnx but sibling kernels; validated input as in
:mod:`knnx._kernels.metrics`.

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
  numeric one (|q - r| / s_t) ** 2, s_t = 4 sigma (1 where sigma is 0). VDM is HVDM on nominal attributes only.
* GOWER: sum_t delta_t d_t / sum_t delta_t, delta_t = 0 if q or r is missing, d_t =
  (q != r) for a nominal attribute, |q - r| / s_t for a numeric one; 1 if no attribute
  is present in both rows.
* PRECOMPUTED: ``Q[r, j]`` itself (the queries are rows of a distance matrix).
"""

import numpy as np
from numba import njit

from knnx._kernels.metric_codes import (
    CHEBYSHEV,
    GOWER,
    HAMMING,
    HEOM,
    MANHATTAN,
    MINKOWSKI,
    NOMINAL,
    NUMERIC,
    PRECOMPUTED,
)


@njit(cache=True, inline="always")
def numeric_sums(code, q, row, power, D, first):
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
            # np.maximum vectorises (max() and a select compile to scalar maxsd here);
            # without NaN all three give the same value.
            for j in range(n_ref):
                D[j] = np.maximum(D[j], abs(q - row[j]))
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


@njit(cache=True)
def tile_numeric(code, Q, r, RT, j0, w, power, D):
    """D[u] = reduced distance from Q[r] to reference j0 + u, u < w, under a numeric code
    (MANHATTAN, CHEBYSHEV, MINKOWSKI, HAMMING) or PRECOMPUTED: the terms are added
    feature by feature across the tile (the loop over references vectorises)."""
    if code == PRECOMPUTED:
        for u in range(w):
            D[u] = Q[r, j0 + u]
        return
    for t in range(RT.shape[0]):
        numeric_sums(code, Q[r, t], RT[t, j0 : j0 + w], power, D, t == 0)


@njit(cache=True)
def tile_mixed(code, Q, r, RT, j0, w, kinds, scale, vd, vd_off, n_vals, D, W):
    """:func:`tile_numeric` for HEOM, HVDM and GOWER (W: GOWER's counts, scratch)."""
    for u in range(w):
        D[u] = 0.0
        W[u] = 0.0
    for t in range(RT.shape[0]):
        _mixed_term(code, kinds[t], Q[r, t], RT[t, j0 : j0 + w], scale[t], vd, vd_off[t], n_vals[t], D, W)
    if code == GOWER:
        for u in range(w):
            D[u] = D[u] / W[u] if W[u] > 0.0 else 1.0


@njit(cache=True)
def exact_pair(code, Q, r, R, j, power, kinds, scale, vd, vd_off, n_vals):
    """The reduced distance from Q[r] to reference j (row R[j]) under any code."""
    if code == PRECOMPUTED or code <= HAMMING:
        return exact_numeric(code, Q, r, R, j, power)
    return exact_mixed(code, Q, r, R, j, kinds, scale, vd, vd_off, n_vals)


@njit(cache=True)
def exact_numeric(code, Q, r, R, j, power):
    """:func:`exact_pair` under a numeric code or PRECOMPUTED: the same operations in the
    same order as :func:`tile_numeric`, so the same float64 value bit for bit."""
    if code == PRECOMPUTED:
        return Q[r, j]
    acc = 0.0
    for t in range(R.shape[1]):
        q = Q[r, t]
        x = R[j, t]
        if code == HAMMING:
            v = 1.0 if q != x else 0.0
        elif code == MINKOWSKI:
            v = abs(q - x) ** power
        else:
            v = abs(q - x)
        if t == 0:
            acc = v
        elif code == CHEBYSHEV:
            acc = v if v > acc else acc
        else:
            acc += v
    return acc


@njit(cache=True)
def exact_mixed(code, Q, r, R, j, kinds, scale, vd, vd_off, n_vals):
    """:func:`exact_pair` under HEOM, HVDM or GOWER: the operations of :func:`tile_mixed`."""
    D = 0.0
    W = 0.0
    for t in range(R.shape[1]):
        q = Q[r, t]
        x = R[j, t]
        nominal = kinds[t] == NOMINAL
        if code == GOWER:
            if not (np.isnan(q) or np.isnan(x)):
                if nominal:
                    D += 1.0 if q != x else 0.0
                else:
                    D += abs(q - x) / scale[t]
                W += 1.0
        elif np.isnan(q) or np.isnan(x):
            D += 1.0
        elif not nominal:
            a = abs(q - x) / scale[t]
            D += a * a
        elif code == HEOM:
            D += 1.0 if q != x else 0.0
        else:
            nv = n_vals[t]
            D += vd[vd_off[t] + _vd_index(q, nv) * nv + _vd_index(x, nv)]
    if code == GOWER:
        return D / W if W > 0.0 else 1.0
    return D


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
