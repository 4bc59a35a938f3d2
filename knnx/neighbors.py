"""Exact k-nearest-neighbour search: the boundary between Python and the numba kernels.

Semantics (every algorithm in knnx relies on them):

* Distance is squared Euclidean, evaluated in float64 as ``sum_l (q_l - r_l)**2``
  in feature order. Rankings use that value exactly.
* Neighbours are ordered by (squared distance, reference index): of two references
  at the same distance the one with the smaller index comes first.
* ``queries=None`` asks for the leave-one-out graph of ``X``: each point is excluded
  from its own list, but its duplicates (other indices at distance 0) are not.
"""

import numpy as np

from knnx._kernels.neighbors import brute_rows, finalize_block, reciprocal_csr, screen_block, seed_thresholds
from knnx.errors import DataError

__all__ = ["kneighbors", "reciprocal_neighbors", "as_float_array"]

# Unit roundoffs of float32 and float64.
_U32 = 2.0**-24
_U64 = 2.0**-53
# Below this many distance evaluations the brute-force kernel is used directly.
_BRUTE_WORK = 2_000_000
# One float32 product block (query block x reference block) of 4 MiB stays in cache.
_REF_BLOCK = 2048
_SEED_SAMPLE = 1024
_BLOCK_ELEMENTS = 1 << 20


def as_float_array(X, name="X"):
    """Return ``X`` as a C-contiguous 2-D float64 array with finite values.

    Raises :class:`knnx.errors.DataError` naming ``name``, the row and the column of
    the first non-finite value.
    """
    try:
        A = np.ascontiguousarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise DataError(f"{name}: expected a numeric 2-D array ({exc})") from None
    if A.ndim != 2:
        raise DataError(f"{name}: expected a 2-D array (n_samples, n_features), got {A.ndim}-D")
    if A.shape[1] == 0:
        raise DataError(f"{name}: has no feature columns")
    finite = np.isfinite(A)
    if not finite.all():
        r, c = np.argwhere(~finite)[0]
        raise DataError(f"{name}: non-finite value {A[r, c]} at row {r}, column {c}")
    return A


def _screen_bound(n_features):
    """Relative bound ``gamma`` on |approximate - exact| / (|q|^2 + |r|^2).

    Covers: rounding the centred, power-of-two-scaled data to float32 (at most
    5 u32 S), the float32 inner product (at most d u32 S / 2 per term, doubled),
    the float64 norms and the float64 reference sum itself. The factor 2 on top
    is a safety margin; the bound only needs to be valid, not tight.
    """
    d = n_features
    return 2.0 * ((d + 8) * _U32 + (4 * d + 16) * _U64)


def kneighbors(X, n_neighbors, queries=None, *, squared=True):
    """Exact k nearest neighbours in squared Euclidean distance.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Reference points.
    n_neighbors : int
        Number of neighbours k, ``1 <= k <= n_samples`` (``n_samples - 1`` when
        ``queries is None``).
    queries : array-like of shape (n_queries, n_features), optional
        Query points. If None, the leave-one-out graph of ``X`` is returned: each
        point is excluded from its own list (its duplicates are not).
    squared : bool, default True
        Return squared distances (the ranked quantity). If False, their square roots.

    Returns
    -------
    neigh_dist : ndarray of shape (n_queries, n_neighbors), float64
        Distances, non-decreasing along each row.
    neigh_ind : ndarray of shape (n_queries, n_neighbors), intp
        Reference indices ordered by (distance, index).

    Notes
    -----
    Candidates are screened with a float32 BLAS product under a rigorous rounding
    bound, then their distances are recomputed in float64 and ranked exactly; the
    output equals a brute-force evaluation of every distance (see
    :mod:`knnx._kernels.neighbors`). Memory is O(block) and never n x n.
    """
    R = as_float_array(X, "X")
    loo = queries is None
    Q = R if loo else as_float_array(queries, "queries")
    n_ref, d = R.shape
    if Q.shape[1] != d:
        raise DataError(f"queries: has {Q.shape[1]} features, X has {d}")
    k = int(n_neighbors)
    k_max = n_ref - 1 if loo else n_ref
    if not 1 <= k <= k_max:
        what = "n_samples - 1 (leave-one-out)" if loo else "n_samples"
        raise DataError(f"n_neighbors: must be between 1 and {what} = {k_max}, got {k}")

    m = Q.shape[0]
    out_dist = np.empty((m, k), dtype=np.float64)
    out_ind = np.empty((m, k), dtype=np.intp)
    if m == 0:
        return out_dist, out_ind
    if m * n_ref <= _BRUTE_WORK:
        brute_rows(Q, R, np.arange(m, dtype=np.intp), loo, out_dist, out_ind)
    else:
        _screened_search(Q, R, k, loo, out_dist, out_ind)
    if not squared:
        np.sqrt(out_dist, out=out_dist)
    return out_dist, out_ind


def _scaled_float32(A, center, scale):
    return np.ascontiguousarray(((A - center) * scale).astype(np.float32))


def _screened_search(Q, R, k, loo, out_dist, out_ind):
    n_ref, d = R.shape
    m = Q.shape[0]
    center = R.mean(axis=0)
    max_abs = max(np.abs(R - center).max(), np.abs(Q - center).max())
    # A power of two keeps the scaling exact; afterwards every |coordinate| <= 1.
    scale = 2.0 ** -np.ceil(np.log2(max_abs)) if max_abs > 0 else 1.0
    Rs = _scaled_float32(R, center, scale)
    Qs = Rs if loo else _scaled_float32(Q, center, scale)
    r2 = np.einsum("ij,ij->i", Rs, Rs, dtype=np.float64)
    q2 = r2 if loo else np.einsum("ij,ij->i", Qs, Qs, dtype=np.float64)
    gamma = _screen_bound(d)
    hf = (r2 * (1.0 - gamma)).astype(np.float32)
    # |float32 prefilter - float64 test| <= 2 u32 (|hf| + 2|G| + |tau|) with every
    # term at most 4d on data scaled into [-1, 1]; 8x that is a safe slack.
    margin = np.float32(64.0 * (d + 1) * _U32)

    # Seeding: a guessed threshold from a fixed strided sample of references (see
    # seed_thresholds) spares most heap insertions while the heap would fill from +inf.
    n_sample = min(n_ref, _SEED_SAMPLE)
    seed = n_ref >= 8 * _SEED_SAMPLE and 16 * k <= n_ref
    if seed:
        sample = (np.arange(n_sample) * (n_ref // n_sample)).astype(np.intp)
        Rs_sample = np.ascontiguousarray(Rs[sample])
        r2_sample = r2[sample]
        # rank whose expected count of references below is about 4k
        rank = max(0, int(4 * k * n_sample / n_ref) - 1)
    ref_block = min(n_ref, _REF_BLOCK)
    query_block = max(64, min(m, _BLOCK_ELEMENTS // ref_block))
    cap = max(4 * k, k + 256)
    for row0 in range(0, m, query_block):
        row1 = min(m, row0 + query_block)
        b = row1 - row0
        heap = np.full((b, k), np.inf)
        n_real = np.zeros(b, dtype=np.intp)
        cand_lo = np.empty((b, cap))
        cand_ind = np.empty((b, cap), dtype=np.intp)
        cand_cnt = np.zeros(b, dtype=np.intp)
        overflow = np.zeros(b, dtype=np.uint8)
        Qb = Qs[row0:row1]
        if seed:
            seed_thresholds(Qb @ Rs_sample.T, q2[row0:row1], r2_sample, sample, row0, loo, gamma, rank, heap)
        for col0 in range(0, n_ref, ref_block):
            col1 = min(n_ref, col0 + ref_block)
            G = Qb @ Rs[col0:col1].T
            screen_block(
                G, q2[row0:row1], r2, hf, margin, row0, col0, loo, gamma,
                heap, n_real, cand_lo, cand_ind, cand_cnt, overflow,
            )  # fmt: skip
        overflow[n_real < k] = 1  # the guessed threshold was too low: recompute exactly
        finalize_block(Q[row0:row1], R, row0, heap, cand_lo, cand_ind, cand_cnt, overflow, out_dist, out_ind)
        if overflow.any():
            rows = (np.flatnonzero(overflow) + row0).astype(np.intp)
            brute_rows(Q, R, rows, loo, out_dist, out_ind)


def reciprocal_neighbors(neigh_ind, n_samples):
    """Inverse (reciprocal) neighbourhoods of a neighbour list, in CSR form.

    Parameters
    ----------
    neigh_ind : ndarray of shape (n_queries, k)
        Output of :func:`kneighbors`.
    n_samples : int
        Number of reference points.

    Returns
    -------
    indptr : ndarray of shape (n_samples + 1,)
    indices : ndarray of shape (n_queries * k,)
        ``indices[indptr[j]:indptr[j + 1]]`` are the queries that have ``j`` among
        their neighbours, in increasing order.
    """
    ind = np.ascontiguousarray(neigh_ind, dtype=np.intp)
    if ind.ndim != 2:
        raise DataError("neigh_ind: expected a 2-D array")
    if ind.size and (ind.min() < 0 or ind.max() >= n_samples):
        raise DataError(f"neigh_ind: indices must lie in [0, {n_samples})")
    return reciprocal_csr(ind, int(n_samples))
