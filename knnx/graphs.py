"""Reuse of exact neighbour graphs across the cells of a run.

:func:`knnx.neighbors.kneighbors` returns the k nearest references ordered by
(distance, index), exactly; so the graph for k is the first k columns of the graph for
any k' >= k. Inside ``with reuse_graphs(k_max):`` a call ``kneighbors(X, k, queries)``
looks for a stored graph of the same reference and query arrays (compared by a
BLAKE2b digest of dtype, shape and bytes) with at least k columns and returns its
first k; on a miss it computes max(k, k_max) columns (capped at what the data allows),
stores them and returns the first k. Outside the context nothing is stored, so the
library's behaviour and memory are unchanged.

The runner enters the context around each cell with k_max = the largest neighbour
count any cell of the spec asks of that dataset, using one store per process
(:data:`PROCESS_CACHE`), so the kNN, UNN, GNNB and LpO cells of one split share one
leave-one-out graph and one test graph per worker process. Stored graphs are kept
most-recently-used first within ``max_bytes`` (default 512 MB).
"""

import hashlib
from collections import OrderedDict
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np

_ACTIVE = ContextVar("knnx_graph_cache", default=None)


def fingerprint(a):
    """A digest of an array's dtype, shape and bytes (C order)."""
    a = np.ascontiguousarray(a)
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{a.dtype.str}{a.shape}".encode())
    h.update(a.data)
    return h.hexdigest()


class GraphCache:
    """Stored graphs keyed by (reference digest, query digest or "loo")."""

    def __init__(self, k_max=0, max_bytes=512 * 2**20):
        self.k_max = int(k_max)
        self.max_bytes = max_bytes
        self._store = OrderedDict()
        self.hits = 0
        self.misses = 0

    def key(self, X, queries):
        return fingerprint(X), ("loo" if queries is None else fingerprint(queries))

    def get(self, key, k):
        """(dist, ind) with k columns from a stored graph with at least k, or None."""
        entry = self._store.get(key)
        if entry is None or entry[0].shape[1] < k:
            self.misses += 1
            return None
        self._store.move_to_end(key)
        self.hits += 1
        dist, ind = entry
        return dist[:, :k].copy(), ind[:, :k].copy()

    def put(self, key, dist, ind):
        self._store[key] = (dist, ind)
        self._store.move_to_end(key)
        total = sum(d.nbytes + i.nbytes for d, i in self._store.values())
        while total > self.max_bytes and len(self._store) > 1:
            _, (d, i) = self._store.popitem(last=False)
            total -= d.nbytes + i.nbytes


def active():
    """The GraphCache of the current context, or None."""
    return _ACTIVE.get()


# The process's store: it outlives each ``with`` block, so consecutive cells of a run in
# one (worker) process share their graphs.
PROCESS_CACHE = GraphCache()


@contextmanager
def reuse_graphs(k_max=0, cache=None):
    """Store and reuse neighbour graphs inside the block (see the module docstring).

    ``cache``: a GraphCache; default the process-wide one, whose graphs persist from
    one block to the next. ``k_max`` applies inside this block."""
    cache = PROCESS_CACHE if cache is None else cache
    previous_k, cache.k_max = cache.k_max, int(k_max)
    token = _ACTIVE.set(cache)
    try:
        yield cache
    finally:
        _ACTIVE.reset(token)
        cache.k_max = previous_k
