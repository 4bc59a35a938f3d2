"""Exact k-nearest-neighbour search: the boundary between Python and the numba kernels.

Semantics (every algorithm in knnx relies on them):

* Distance is squared Euclidean, evaluated in float64 as ``sum_l (q_l - r_l)**2``
  in feature order. Rankings use that value exactly.
* Neighbours are ordered by (squared distance, reference index): of two references
  at the same distance the one with the smaller index comes first.
* ``queries=None`` asks for the leave-one-out graph of ``X``: each point is excluded
  from its own list, but its duplicates (other indices at distance 0) are not.
* Data whose scale makes float64 squared distances overflow or underflow
  (``max |x - mean| * sqrt(d) > 1e150``, or ``0 < max |x - mean| < 1e-140``) is
  refused with a DataError: such distances are inf or 0 and rank nothing.
"""

import contextlib
import numbers
import threading
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np
from threadpoolctl import ThreadpoolController

from knnx._kernels import PARALLEL_LOCK
from knnx._kernels.neighbors import (
    brute_rows,
    finalize_block,
    reciprocal_csr,
    screen_block,
    screen_block_t,
    seed_thresholds,
    select_rows,
)
from knnx.errors import DataError
from knnx.limits import check_memory, graph_bytes

__all__ = ["kneighbors", "reciprocal_neighbors", "search_paths", "as_float_array", "check_scale"]

# Unit roundoffs of float32 and float64.
_U32 = 2.0**-24
_U64 = 2.0**-53
# Below this many distance evaluations the brute-force kernel is used directly.
_BRUTE_WORK = 2_000_000
# Selection (select_rows: every float64 distance, a sampled threshold, a bucket sort
# of the references under it) replaces screening and brute force when
# _SELECT_FACTOR * k >= n_ref * d: its cost per query grows with n_ref * d,
# screening's with k (heap and candidate buffer of max(4k, k + 256)). Measured one
# thread, standard normal LOO graphs (select / screened seconds): n=5000, d=2, k=10
# 0.028 / 0.029, k=250 0.044 / 0.394; n=20000, d=2, k=30 0.38 / 0.27, k=100 0.40 /
# 0.63; d=8, k=100 0.79 / 0.69, k=250 0.79 / 1.51; d=32, k=250 2.6 / 2.0, k=1000
# 3.1 / 6.9; n=2000, d=16, k=10 0.013 / 0.011, k=30 0.014 / 0.029.
_SELECT_FACTOR = 1000
# One float32 product block (query block x reference block) of 4 MiB stays in cache.
_REF_BLOCK = 2048
# Seeded threshold: a strided sample of _SEED_SAMPLE references, rank chosen so that
# about _SEED_TARGET * k references are expected below it. Measured at n=20000, k=50
# (7 interleaved runs, medians, with the O(n log k) fallback): (1024, 4) 0.72 / 1.75 s
# at d=16 / 256; (1024, 2) 0.80 / 2.63; (2048, 2) 0.77 / 2.17; (2048, 3) 0.75 / 1.86.
_SEED_SAMPLE = 1024
_SEED_TARGET = 4
# Query rows per block: one block is one unit of work for one thread. A 256 x 2048
# float32 product (2 MiB) stays in the core's L2 cache between the BLAS call and the
# screening. Measured at n=20000, d=16, k=50 (7 interleaved runs, medians): query x
# reference blocks 256 x 2048 0.43 s, 512 x 2048 0.47, 512 x 1024 0.42, 1024 x 1024 0.55.
_QUERY_BLOCK = 256
# Symmetric leave-one-out (each product of a block pair serves both directions) where
# the product dominates, if the state of all rows (candidate buffers) fits in this
# many bytes. Measured at n=20000, k=50 (5 interleaved runs, medians), symmetric vs
# plain: d=16 0.60 vs 0.46 s, 32 0.63 vs 0.51, 64 0.62 vs 0.61, 128 0.92 vs 0.95,
# 256 1.52 vs 1.72 (blocks of 512); at d=256 blocks of 512 / 1024 / 2048 took
# 1.19 / 1.14 / 1.30 s (plain 1.53).
_SYMMETRIC_MIN_FEATURES = 128
_SYMMETRIC_MAX_STATE = 2 << 30
_SYMMETRIC_BLOCK = 1024
# Per-block candidate state (cap slots of 16 bytes per query row) stays below this.
_STATE_BYTES = 64 << 20
# float64 range in which squared distances neither overflow nor underflow (see module doc).
_MAX_SPREAD = 1e150
_MIN_SPREAD = 1e-140
# If 1% of the points lie this close to the centre (squared, in units of the largest
# coordinate), float32 screening cannot separate them: use the exact kernel throughout.
_MIN_SCALED_NORM = 2.0**-80


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
    """Bound on |approximate - exact| squared distance: ``gamma * (|q|^2 + |r|^2) + eps``.

    Relative part ``gamma`` covers rounding the centred, power-of-two-scaled data to
    float32 (at most 5 u32 S), the float32 inner product in any summation order (at
    most d u32 S / 2 per term, doubled), the float64 norms and the float64 reference
    sum itself, with a factor 2 of safety. Absolute part ``eps`` covers float32
    underflow, which no relative bound does: subnormal coordinates (2^-150 each)
    and products that underflow in the GEMM (2^-150 per term), again doubled.
    Distances are in units where every |coordinate| <= 1.
    """
    d = n_features
    gamma = 2.0 * ((d + 8) * _U32 + (4 * d + 16) * _U64)
    eps = 16.0 * (d + 2) * 2.0**-149
    return gamma, eps


# Rows per chunk when centring, measuring and casting the data: temporaries of a few MB
# instead of float64 copies of X (at n = 10^5, d = 512 those were 400 MB each).
_CHUNK_ROWS = 2048


def _max_abs_dev(A, center):
    """max |A - center| over every entry of a non-empty A, row chunk by row chunk; inf
    when the centre or a difference is not finite (the mean or x - mean overflowed:
    Python's max() would otherwise skip a NaN and report a spread of 0)."""
    if not np.isfinite(center).all():
        return np.inf
    spread = 0.0
    with np.errstate(over="ignore", invalid="ignore"):
        for r0 in range(0, A.shape[0], _CHUNK_ROWS):
            block = A[r0 : r0 + _CHUNK_ROWS] - center
            np.abs(block, out=block)
            top = float(block.max())
            if not top <= np.inf:  # NaN
                return np.inf
            spread = max(spread, top)
    return spread


def _mean(A):
    """Column means without floating-point warnings (an overflow gives inf or NaN, which
    the range rule then refuses)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return A.mean(axis=0)


def _centre(R, Q, loo):
    """(center, spread): the reference mean and the max |coordinate - center| of R and Q.

    Refuses data whose squared distances would overflow or underflow in float64.
    """
    center = _mean(R)
    spread = _max_abs_dev(R, center)
    if not loo:
        spread = max(spread, _max_abs_dev(Q, center))
    _check_spread(spread, R.shape[1])
    return center, spread


def check_scale(X, queries=None):
    """Refuse data whose float64 squared distances would overflow or underflow.

    The check :func:`kneighbors` applies (see the module doc), for estimators that
    compute their own distances: ``X`` and ``queries`` (optional) are centred on the
    mean of ``X``; :class:`knnx.errors.DataError` (one line, asking to rescale) if
    ``max |x - mean| * sqrt(d) > 1e150`` or ``0 < max |x - mean| < 1e-140``.
    Both arrays must be 2-D float64 with finite values and the same columns.
    """
    center = _mean(X)
    spread = _max_abs_dev(X, center) if X.size else 0.0
    if queries is not None and queries.size:
        spread = max(spread, _max_abs_dev(queries, center))
    _check_spread(spread, X.shape[1])


def _check_spread(spread, d):
    if not np.isfinite(spread):
        raise DataError(
            "X: values too far apart for float64 squared distances (their mean or their differences "
            f"overflow float64; needs max |x - mean| * sqrt(d) <= {_MAX_SPREAD:g}); rescale the data"
        )
    if spread * np.sqrt(d) > _MAX_SPREAD:
        raise DataError(
            f"X: values too far apart for float64 squared distances (max |x - mean| = {spread:.3g} over "
            f"{d} features; needs max |x - mean| * sqrt(d) <= {_MAX_SPREAD:g}); rescale the data"
        )
    if 0 < spread < _MIN_SPREAD:
        raise DataError(
            f"X: values too close together for float64 squared distances (max |x - mean| = {spread:.3g}; "
            f"needs >= {_MIN_SPREAD:g} or all equal); rescale the data"
        )


def kneighbors(X, n_neighbors, queries=None, *, squared=True, graphs=None):
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
    graphs : knnx.GraphStore, optional
        Where to look for the graph first and keep it after (see :mod:`knnx.neighbors.graphs`):
        the result is the same, only the time differs. Without it nothing is kept.

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
    :mod:`knnx._kernels.neighbors`). When k is large relative to n_samples * n_features
    (see ``_SELECT_FACTOR``), every float64 distance is evaluated instead and the k
    smallest are selected and sorted (``select_rows``): the same output. Memory: the
    float32 copy of the data (4 bytes an entry; no float64 copy is made), the outputs,
    and O(block) working space; never n x n.
    """
    R = as_float_array(X, "X")
    loo = queries is None
    Q = R if loo else as_float_array(queries, "queries")
    n_ref, d = R.shape
    if Q.shape[1] != d:
        raise DataError(f"queries: has {Q.shape[1]} features, X has {d}")
    if isinstance(n_neighbors, bool) or not isinstance(n_neighbors, numbers.Integral):
        raise DataError(f"n_neighbors: expected an integer, got {n_neighbors!r}")
    k = int(n_neighbors)
    k_max = n_ref - 1 if loo else n_ref
    if not 1 <= k <= k_max:
        what = "n_samples - 1 (leave-one-out)" if loo else "n_samples"
        raise DataError(f"n_neighbors: must be between 1 and {what} = {k_max}, got {k}")

    if graphs is None or Q.shape[0] == 0:
        return _finish(*_exact(R, Q, loo, k), squared)
    # The k-graph is the first k columns of any larger one (neighbours are ordered by
    # (distance, index)), so a store computes once at its k_max.
    key = graphs.key(R, None if loo else Q)
    hit = graphs.get(key, k)
    if hit is None:
        full = _exact(R, Q, loo, max(k, min(graphs.k_max, k_max)))
        graphs.put(key, *full)
        hit = full[0][:, :k].copy(), full[1][:, :k].copy()
    return _finish(*hit, squared)


def _exact(R, Q, loo, k):
    """Squared distances and indices of the k nearest (validated float64 arrays)."""
    m, (n_ref, d) = Q.shape[0], R.shape
    check_memory(
        graph_bytes(m, k, n_ref, d), f"a neighbour graph of {m} queries x {k} neighbours among {n_ref} rows"
    )
    out_dist = np.empty((m, k), dtype=np.float64)
    out_ind = np.empty((m, k), dtype=np.intp)
    if m == 0:
        return out_dist, out_ind
    centred = _centre(R, Q, loo)
    path = search_paths(m, n_ref, d, k, loo)[0]
    if path == "select":
        with PARALLEL_LOCK:
            select_rows(Q, np.ascontiguousarray(R.T), np.arange(m, dtype=np.intp), loo, out_dist, out_ind)
        return out_dist, out_ind
    if path == "brute" or not _screened_search(Q, R, k, loo, centred, out_dist, out_ind):
        with PARALLEL_LOCK:
            brute_rows(Q, R, np.arange(m, dtype=np.intp), loo, out_dist, out_ind)
    return out_dist, out_ind


def search_paths(m, n_ref, d, k, loo):
    """The kernel paths :func:`kneighbors` takes for ``m`` queries (``loo``: the
    leave-one-out graph) among ``n_ref`` rows of ``d`` features, ``k`` neighbours, the
    first deciding: ["select"] (every float64 distance, the k smallest selected),
    ["brute"], or "screen" then "brute" (for rows whose candidates overflow) and, at
    large sizes, "seed" (a sampled first threshold) and "symmetric" (leave-one-out by
    block pairs). The search itself follows this list; the runner's warm-up compiles
    the kernels it names before a cell is timed."""
    if _SELECT_FACTOR * k >= n_ref * d:
        return ["select"]
    if m * n_ref <= _BRUTE_WORK or n_ref <= 4 * _candidate_capacity(k):
        return ["brute"]
    paths = ["screen", "brute"]
    if _seeded(n_ref, k):
        paths.append("seed")
    if _symmetric(n_ref, d, k, loo):
        paths.append("symmetric")
    return paths


def _seeded(n_ref, k):
    """Whether the screened search starts from a seeded threshold (see _SEED_SAMPLE)."""
    return n_ref >= 8 * _SEED_SAMPLE and 16 * k <= n_ref


def _symmetric(n_ref, d, k, loo):
    """Whether the screened leave-one-out search runs by block pairs (_symmetric_loo)."""
    return (
        loo and d >= _SYMMETRIC_MIN_FEATURES and n_ref * _candidate_capacity(k) * 16 <= _SYMMETRIC_MAX_STATE
    )


def _finish(out_dist, out_ind, squared):
    if not squared:
        np.sqrt(out_dist, out=out_dist)
    return out_dist, out_ind


def _to_float32(A, center, scale):
    """float32 copy of (A - center) * scale, built row chunk by row chunk.

    Centred and scaled in float64 first (a float32 cast of unscaled data could
    overflow); elementwise, so the values equal those of the whole-array expression.
    """
    out = np.empty(A.shape, dtype=np.float32)
    for r0 in range(0, A.shape[0], _CHUNK_ROWS):
        block = A[r0 : r0 + _CHUNK_ROWS] - center
        np.multiply(block, scale, out=block)
        out[r0 : r0 + _CHUNK_ROWS] = block
    return out


class _Screen:
    """Everything the screening kernels share for one search, computed once."""

    def __init__(self, Q, R, k, loo, centred):
        n_ref, d = R.shape
        self.k, self.loo = k, loo
        center, max_abs = centred
        # A power of two keeps the scaling exact; afterwards every |coordinate| <= 1.
        scale = 2.0 ** -np.ceil(np.log2(max_abs)) if max_abs > 0 else 1.0
        self.Rs = _to_float32(R, center, scale)
        self.Qs = self.Rs if loo else _to_float32(Q, center, scale)
        self.r2 = np.einsum("ij,ij->i", self.Rs, self.Rs, dtype=np.float64)
        self.q2 = self.r2 if loo else np.einsum("ij,ij->i", self.Qs, self.Qs, dtype=np.float64)
        self.gamma, self.eps = _screen_bound(d)
        # The prefilter's reference term, lowered by 8 u32 r2 (see _tau32 in the kernels).
        self.hf = (self.r2 * (1.0 - self.gamma - 8.0 * _U32)).astype(np.float32)
        self.cap = _candidate_capacity(k)
        # float32 cannot resolve points this close to the centre relative to the spread.
        low = min(_quantile(self.r2, 0.01), _quantile(self.q2, 0.01))
        self.usable = not (0.0 < low < _MIN_SCALED_NORM) and max_abs > 0
        # Seeding: a guessed threshold from a fixed strided sample of references (see
        # seed_thresholds) spares most heap insertions while a heap would fill from +inf.
        n_sample = min(n_ref, _SEED_SAMPLE)
        self.seed = _seeded(n_ref, k)
        if self.seed:
            self.sample = (np.arange(n_sample) * (n_ref // n_sample)).astype(np.intp)
            self.Rs_sample = np.ascontiguousarray(self.Rs[self.sample])
            self.r2_sample = self.r2[self.sample]
            # Rank r with about 4k references expected below it, and r >= 3: the count
            # below the (r+1)-th smallest of the sample is ~ n Beta(r+1, s-r), and for
            # r + 1 >= 4 it falls under k for only ~2% of rows (r = 0 gave ~40%).
            self.rank = max(4, int(np.ceil(_SEED_TARGET * k * n_sample / n_ref))) - 1

    def seed_rows(self, st, row0, row1):
        if self.seed:
            Gs = self.Qs[row0:row1] @ self.Rs_sample.T
            seed_thresholds(
                Gs, self.q2[row0:row1], self.r2_sample, self.sample, row0, self.loo, self.gamma, self.eps, self.rank,
                st.heap[row0 - st.row0 : row1 - st.row0],
            )  # fmt: skip

    def screen(self, G, st, row0, col0, transposed=False):
        """Screen rows row0.. of state ``st`` against references col0.. given G.

        ``transposed``: the rows are G's columns (see ``screen_block_t``).
        """
        if transposed:
            a, b = row0 - st.row0, row0 - st.row0 + G.shape[1]
            screen_block_t(
                G, self.q2[row0 : row0 + G.shape[1]], self.r2, self.hf, self.eps, row0, col0, self.gamma,
                st.heap[a:b], st.n_real[a:b], st.cand_lo[a:b], st.cand_ind[a:b], st.cand_cnt[a:b],
                st.overflow[a:b],
            )  # fmt: skip
            return
        a, b = row0 - st.row0, row0 - st.row0 + G.shape[0]
        screen_block(
            G, self.q2[row0 : row0 + G.shape[0]], self.r2, self.hf, self.eps, row0, col0, self.loo,
            self.gamma, st.heap[a:b], st.n_real[a:b], st.cand_lo[a:b], st.cand_ind[a:b], st.cand_cnt[a:b],
            st.overflow[a:b],
        )  # fmt: skip


class _RowState:
    def __init__(self, b, k, cap, row0=0):
        self.row0 = row0
        self.heap = np.full((b, k), np.inf)
        self.n_real = np.zeros(b, dtype=np.intp)
        self.cand_lo = np.empty((b, cap))
        self.cand_ind = np.empty((b, cap), dtype=np.intp)
        self.cand_cnt = np.zeros(b, dtype=np.intp)
        self.overflow = np.zeros(b, dtype=np.uint8)

    def finish(self, Q, R, out_dist, out_ind, row0=None, row1=None, in_order=True):
        """Exact ranking of rows row0..row1 (all by default); returns the rows left to
        the exact fallback: those whose buffer overflowed or whose guess was too low.

        ``in_order``: candidates were stored in increasing reference order.
        """
        row0 = self.row0 if row0 is None else row0
        row1 = self.row0 + self.heap.shape[0] if row1 is None else row1
        a, b = row0 - self.row0, row1 - self.row0
        k = self.heap.shape[1]
        overflow = self.overflow[a:b]
        overflow[self.n_real[a:b] < k] = 1
        finalize_block(
            Q[row0:row1], R, row0, self.heap[a:b], self.cand_lo[a:b], self.cand_ind[a:b],
            self.cand_cnt[a:b], overflow, out_dist, out_ind, in_order,
        )  # fmt: skip
        return (np.flatnonzero(overflow) + row0).astype(np.intp)


def _candidate_capacity(k):
    return max(4 * k, k + 256)


def _quantile(values, q):
    kth = int(q * (len(values) - 1))
    return float(np.partition(values, kth)[kth])


_blas_controller = None


def _single_threaded_blas():
    """Context limiting BLAS to one thread (process-wide, restored on exit).

    Each worker thread runs its own products; a multi-threaded BLAS would leave its
    threads spinning between calls, on the cores the kernels need. Measured with the
    earlier single-threaded driver (multi-threaded BLAS, parallel kernels) at n=20000,
    d=16, k=50: 0.65 s by default, 0.47 s with OPENBLAS_THREAD_TIMEOUT=4 (medians of 7).
    """
    global _blas_controller
    if _blas_controller is None:
        _blas_controller = ThreadpoolController()
    return _blas_controller.limit(limits=1, user_api="blas")


def _screened_search(Q, R, k, loo, centred, out_dist, out_ind):
    """Fill the outputs via screening; False if the data defeats float32 screening.

    Query blocks (block pairs in the symmetric case, see :func:`_symmetric_loo`) are
    the units of work, run on ``numba.get_num_threads()`` threads (so
    ``NUMBA_NUM_THREADS`` and ``numba.set_num_threads`` apply). Every row's
    result depends on that row alone: the output is the same for any thread count.
    """
    sc = _Screen(Q, R, k, loo, centred)
    if not sc.usable:
        return False
    m = Q.shape[0]
    n_ref, d = R.shape
    ref_block = min(n_ref, _REF_BLOCK)
    query_block = max(16, min(_QUERY_BLOCK, _STATE_BYTES // (16 * sc.cap)))

    def search_block(row0):
        row1 = min(m, row0 + query_block)
        st = _RowState(row1 - row0, k, sc.cap, row0)
        sc.seed_rows(st, row0, row1)
        Qb = sc.Qs[row0:row1]
        for col0 in range(0, n_ref, ref_block):
            sc.screen(Qb @ sc.Rs[col0 : col0 + ref_block].T, st, row0, col0)
        return st.finish(Q, R, out_dist, out_ind)

    starts = range(0, m, query_block)
    n_threads = min(numba.get_num_threads(), len(starts))
    symmetric = _symmetric(n_ref, d, k, loo)
    pool = ThreadPoolExecutor(n_threads) if n_threads > 1 else contextlib.nullcontext()
    with _single_threaded_blas(), pool:

        def run(func, items):
            return list(pool.map(func, items)) if n_threads > 1 else [func(x) for x in items]

        if symmetric:
            fallback = _symmetric_loo(sc, R, out_dist, out_ind, run, n_threads)
        else:
            fallback = run(search_block, starts)
    rows = np.concatenate(fallback)
    if rows.size:
        with PARALLEL_LOCK:
            brute_rows(Q, R, rows, loo, out_dist, out_ind)
    return True


def _round_robin(n_blocks):
    """Rounds of disjoint block pairs (I <= J) covering every pair once.

    Round 0 holds the diagonal pairs; the others come from the circle method of
    round-robin tournaments (a dummy block completes an odd count). Within a round
    no two pairs share a block; consecutive pairs in this order rarely do.
    """
    rounds = [[(b, b) for b in range(n_blocks)]]
    players = n_blocks + n_blocks % 2
    for r in range(players - 1):
        pairs = [(r, players - 1)]
        for t in range(1, players // 2):
            pairs.append(((r + t) % (players - 1), (r - t) % (players - 1)))
        rounds.append([(min(a, b), max(a, b)) for a, b in pairs if max(a, b) < n_blocks])
    return rounds


class _PairQueue:
    """Hands out block pairs so that no two running pairs share a block.

    ``take`` returns the first pending pair (in round-robin order) whose blocks are
    both free, waiting while every pending pair conflicts with a running one, and
    None when nothing is pending. Unlike a barrier after each round, a thread never
    idles while a compatible pair is left.
    """

    def __init__(self, pairs):
        self.pending = list(pairs)
        self.busy = set()
        self.cond = threading.Condition()

    def take(self):
        with self.cond:
            while self.pending:
                for pos, (a, b) in enumerate(self.pending):
                    if a not in self.busy and b not in self.busy:
                        del self.pending[pos]
                        self.busy.update((a, b))
                        return a, b
                self.cond.wait()
            return None

    def release(self, pair):
        with self.cond:
            self.busy.difference_update(pair)
            self.cond.notify_all()

    def drain(self, func):
        """Run ``func`` on pairs until none is pending (one call per worker thread)."""
        while (pair := self.take()) is not None:
            try:
                func(pair)
            finally:
                self.release(pair)


def _symmetric_loo(sc, R, out_dist, out_ind, run, n_threads):
    """Leave-one-out graph from one product per block pair (distances are symmetric).

    Pair (I, J), I < J, is multiplied once; rows of I are screened against the
    references of J and rows of J against those of I (the transposed product).
    ``n_threads`` workers take pairs from a :class:`_PairQueue`, so two threads never
    touch the same row state. A row receives its reference blocks in no fixed
    order: the exact ranking sorts candidates by index itself, and a row whose
    buffer overflowed in one order and not in another gets the same exact result
    from the fallback. Holds every row's state at once, hence the memory cap in the
    caller. Returns the lists of rows left to the exact fallback.
    """
    n = R.shape[0]
    st = _RowState(n, sc.k, sc.cap)
    B = _SYMMETRIC_BLOCK
    starts = list(range(0, n, B))
    run(lambda row0: sc.seed_rows(st, row0, min(n, row0 + B)), starts)

    def pair(ij):
        i0, j0 = starts[ij[0]], starts[ij[1]]
        G = sc.Rs[i0 : i0 + B] @ sc.Rs[j0 : j0 + B].T
        sc.screen(G, st, i0, j0)
        if j0 != i0:
            sc.screen(G, st, j0, i0, transposed=True)

    queue = _PairQueue(p for r in _round_robin(len(starts)) for p in r)
    run(lambda _: queue.drain(pair), range(n_threads))
    return run(
        lambda row0: st.finish(R, R, out_dist, out_ind, row0, min(n, row0 + B), in_order=False), starts
    )


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
