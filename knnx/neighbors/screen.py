"""Float32 screening, the exact search's fast path for large problems.

The data, centred and scaled by a power of two, is rounded to float32; a float32 matrix
product gives every approximate squared distance of a block of queries, and a bound on
its error (:func:`_screen_bound`) keeps, per query, every reference that may be among
the k nearest; their exact float64 distances then decide. Rows whose candidates
overflow the buffer, or data that screening cannot separate, fall back to the exact
kernel. The answer is the exact one (see :mod:`knnx.neighbors.search`); only the time
differs. :func:`knnx.neighbors.search.search_paths` says when this path is taken.
"""

import contextlib
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from threadpoolctl import ThreadpoolController

from knnx._kernels import SEARCH_MIN_WORK, launch, lazy

_NEIGHBORS = lazy("knnx._kernels.neighbors")


# Unit roundoffs of float32 and float64.
_U32 = 2.0**-24
_U64 = 2.0**-53
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
# If 1% of the points lie this close to the centre (squared, in units of the largest
# coordinate), float32 screening cannot separate them: use the exact kernel throughout.
_MIN_SCALED_NORM = 2.0**-80


# Rows per chunk when centring, measuring and casting the data: temporaries of a few MB
# instead of float64 copies of X (at n = 10^5, d = 512 those were 400 MB each).
_CHUNK_ROWS = 2048


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


def _seeded(n_ref, k):
    """Whether the screened search starts from a seeded threshold (see _SEED_SAMPLE)."""
    return n_ref >= 8 * _SEED_SAMPLE and 16 * k <= n_ref


def _symmetric(n_ref, d, k, loo):
    """Whether the screened leave-one-out search runs by block pairs (_symmetric_loo)."""
    return (
        loo and d >= _SYMMETRIC_MIN_FEATURES and n_ref * _candidate_capacity(k) * 16 <= _SYMMETRIC_MAX_STATE
    )


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
            _NEIGHBORS.seed_thresholds(
                Gs,
                self.q2[row0:row1],
                self.r2_sample,
                self.sample,
                row0,
                self.loo,
                self.gamma,
                self.eps,
                self.rank,
                st.heap[row0 - st.row0 : row1 - st.row0],
            )

    def screen(self, G, st, row0, col0, transposed=False):
        """Screen rows row0.. of state ``st`` against references col0.. given G.

        ``transposed``: the rows are G's columns (see ``screen_block_t``).
        """
        if transposed:
            a, b = row0 - st.row0, row0 - st.row0 + G.shape[1]
            _NEIGHBORS.screen_block_t(
                G,
                self.q2[row0 : row0 + G.shape[1]],
                self.r2,
                self.hf,
                self.eps,
                row0,
                col0,
                self.gamma,
                st.heap[a:b],
                st.n_real[a:b],
                st.cand_lo[a:b],
                st.cand_ind[a:b],
                st.cand_cnt[a:b],
                st.overflow[a:b],
            )
            return
        a, b = row0 - st.row0, row0 - st.row0 + G.shape[0]
        _NEIGHBORS.screen_block(
            G,
            self.q2[row0 : row0 + G.shape[0]],
            self.r2,
            self.hf,
            self.eps,
            row0,
            col0,
            self.loo,
            self.gamma,
            st.heap[a:b],
            st.n_real[a:b],
            st.cand_lo[a:b],
            st.cand_ind[a:b],
            st.cand_cnt[a:b],
            st.overflow[a:b],
        )


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
        _NEIGHBORS.finalize_block(
            Q[row0:row1],
            R,
            row0,
            self.heap[a:b],
            self.cand_lo[a:b],
            self.cand_ind[a:b],
            self.cand_cnt[a:b],
            overflow,
            out_dist,
            out_ind,
            in_order,
        )
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
    import numba  # here: importing this module imports no numba (knnx._kernels.lazy)

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
        work = len(rows) * n_ref * d
        launch(_NEIGHBORS.brute_rows, len(rows), work, SEARCH_MIN_WORK, Q, R, rows, loo, out_dist, out_ind)
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
