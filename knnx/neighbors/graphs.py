"""Exact neighbour graphs, kept and handed over explicitly.

:func:`knnx.kneighbors` returns the k nearest references ordered by (distance, index),
exactly; so the graph for k is the first k columns of the graph for any k' >= k. A
:class:`GraphStore` keeps such graphs: ``kneighbors(X, k, queries, graphs=store)``
looks for a stored graph of the same reference and query arrays (compared by a
BLAKE2b digest of dtype, shape and bytes) with at least k columns and returns its
first k; on a miss it computes ``max(k, store.k_max)`` columns (capped at what the data
allows), stores them and returns the first k. Without a store nothing is kept: there
is no hidden or global graph cache anywhere in knnx.

Estimators that search neighbours take the store as their ``graphs`` parameter
(:class:`knnx.KNNClassifier`, :class:`knnx.UNNClassifier`, :class:`knnx.GNNBClassifier`, ...), as
scikit-learn's ``Pipeline`` takes a ``memory``: results are identical with or without
it, only the time differs. Copying an estimator (``sklearn.base.clone``, grid search)
shares its store rather than copying the graphs.

A graph computed elsewhere is given to an estimator by adding it to a store
(:meth:`GraphStore.add`), as scikit-learn's ``metric="precomputed"`` and
``KNeighborsTransformer`` take a precomputed graph::

    store = GraphStore()
    store.add(X_train, neigh_dist, neigh_ind)                # leave-one-out graph
    store.add(X_train, test_dist, test_ind, queries=X_test)  # test rows against it
    KNNClassifier(k=5, graphs=store).fit(X_train, y).predict(X_test)  # no search

The experiment runner keeps one store per worker process and hands it to every cell,
with ``k_max`` the largest neighbour count any cell of the spec asks of the dataset,
so the kNN, UNN, GNNB and LpO cells of one split share one leave-one-out graph and
one test graph per process. Stored graphs are kept most-recently-used first within
``max_bytes`` (default 512 MB).
"""

import hashlib
from collections import OrderedDict

import numpy as np

__all__ = ["GraphStore", "fingerprint"]


def fingerprint(a):
    """A digest of an array's dtype, shape and bytes (C order)."""
    a = np.ascontiguousarray(a)
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{a.dtype.str}{a.shape}".encode())
    h.update(a.data)
    return h.hexdigest()


class _Shelf:
    """The storage several views of one store share."""

    def __init__(self, max_bytes):
        self.max_bytes = max_bytes
        self.graphs = OrderedDict()
        self.nbytes = 0  # kept equal to the stored arrays' bytes (a sum per put is O(graphs))
        self.hits = 0
        self.misses = 0


class GraphStore:
    """Exact neighbour graphs for reuse, keyed by (reference array, query array or
    leave-one-out); see the module docstring.

    Parameters
    ----------
    k_max : int, default 0
        On a miss, a search for k neighbours computes ``max(k, k_max)`` columns (capped
        at what the data allows), so that later requests up to ``k_max`` are hits.
    max_bytes : int, default 512 MiB
        Graphs beyond this total are dropped, least recently used first (the last one
        stored is always kept).

    Attributes
    ----------
    hits, misses : int
        Requests answered from the store, and computed.

    Notes
    -----
    Graphs hold squared Euclidean distances and indices ordered by (distance, index),
    as :func:`knnx.kneighbors` returns them. ``copy.copy`` and ``copy.deepcopy`` (so
    scikit-learn's ``clone``) return the store itself: estimators cloned from one
    another share it. A pickled store (an estimator sent to a worker process) arrives
    empty: each process keeps its own graphs.
    """

    def __init__(self, k_max=0, max_bytes=512 * 2**20):
        self.k_max = int(k_max)
        self._shelf = _Shelf(max_bytes)

    # --- the protocol knnx.kneighbors uses ----------------------------------------------

    def key(self, X, queries, metric=None):
        """The store's key of a search of ``queries`` (None: leave-one-out) among ``X``
        under the fitted metric whose checksum is ``metric`` (None: squared Euclidean)."""
        key = fingerprint(X), ("loo" if queries is None else fingerprint(queries))
        return key if metric is None else (*key, metric)

    def get(self, key, k):
        """``(neigh_dist, neigh_ind)`` with k columns from a stored graph with at least k,
        or None (copies: a caller may modify them)."""
        entry = self._shelf.graphs.get(key)
        if entry is None or entry[0].shape[1] < k:
            self._shelf.misses += 1
            return None
        self._shelf.graphs.move_to_end(key)
        self._shelf.hits += 1
        dist, ind = entry
        return dist[:, :k].copy(), ind[:, :k].copy()

    def put(self, key, neigh_dist, neigh_ind):
        """Store a graph under ``key`` (see :meth:`key`), replacing any stored one."""
        shelf = self._shelf
        old = shelf.graphs.get(key)
        if old is not None:
            shelf.nbytes -= old[0].nbytes + old[1].nbytes
        shelf.graphs[key] = (neigh_dist, neigh_ind)
        shelf.graphs.move_to_end(key)
        shelf.nbytes += neigh_dist.nbytes + neigh_ind.nbytes
        while shelf.nbytes > shelf.max_bytes and len(shelf.graphs) > 1:
            _, (d, i) = shelf.graphs.popitem(last=False)
            shelf.nbytes -= d.nbytes + i.nbytes

    # --- public --------------------------------------------------------------------------

    def add(self, X, neigh_dist, neigh_ind, queries=None, metric=None):
        """Store a graph computed elsewhere: the k nearest rows of ``X`` to each row of
        ``queries`` (None: to each row of X, itself excluded). Returns self.

        ``metric``: the fitted :class:`knnx.neighbors.metrics.Metric` the graph is for
        (None: squared Euclidean). ``neigh_dist`` holds reduced distances (squared
        Euclidean by default), shape (n_queries, k); ``neigh_ind`` row
        indices into X, same shape; each row ordered by (distance, index). Checked: the
        shapes, that indices are valid (and, leave-one-out, no row lists itself) and the
        order; not checked: that they are the nearest (the store answers with what it is
        given, which lets a graph of another dissimilarity be used on purpose)."""
        X = np.asarray(X)
        dist = np.ascontiguousarray(neigh_dist, dtype=np.float64)
        ind = np.asarray(neigh_ind)
        m = X.shape[0] if queries is None else np.asarray(queries).shape[0]
        if dist.ndim != 2 or dist.shape[0] != m or ind.shape != dist.shape:
            raise ValueError(
                f"neigh_dist and neigh_ind: expected equal shapes (n_queries = {m}, k), got {dist.shape} and {ind.shape}"
            )
        if ind.dtype.kind not in "iu":
            raise ValueError(f"neigh_ind: expected integer indices, got dtype {ind.dtype}")
        ind = np.ascontiguousarray(ind, dtype=np.intp)
        if ind.size and (ind.min() < 0 or ind.max() >= X.shape[0]):
            raise ValueError(f"neigh_ind: indices must be in [0, {X.shape[0]}), X's rows")
        if queries is None and np.any(ind == np.arange(m)[:, None]):
            raise ValueError("neigh_ind: a leave-one-out graph lists a row among its own neighbours")
        if not np.all(np.isfinite(dist)) or (dist.size and dist.min() < 0):
            raise ValueError("neigh_dist: expected finite squared distances >= 0")
        step_d, step_i = np.diff(dist, axis=1), np.diff(ind, axis=1)
        if np.any((step_d < 0) | ((step_d == 0) & (step_i <= 0))):
            raise ValueError("neigh_dist and neigh_ind: each row must be ordered by (distance, index)")
        if metric is not None:  # the search looks the graph up by the rows it ranks
            X = metric.prepare(X, "X")
            queries = None if queries is None else metric.prepare(queries, "queries")
        else:
            X = np.ascontiguousarray(X, dtype=np.float64)
            queries = None if queries is None else np.ascontiguousarray(queries, dtype=np.float64)
        self.put(self.key(X, queries, None if metric is None else metric.checksum), dist, ind)
        return self

    def with_k_max(self, k_max):
        """A view of the same graphs whose misses compute ``k_max`` columns."""
        view = object.__new__(type(self))
        view.__dict__.update(self.__dict__)
        view.k_max = int(k_max)
        return view

    def overlay(self):
        """A store that reads this one's graphs and keeps what is put or added into it
        to itself: what the experiment runner hands an estimator outside knnx, whose
        graphs (:meth:`add` takes any ordered graph as given) must not reach the
        searches of other cells."""
        view = _Overlay(self.k_max, self._shelf.max_bytes)
        view._base = self._shelf
        return view

    def clear(self):
        """Drop every stored graph."""
        self._shelf.graphs.clear()
        self._shelf.nbytes = 0

    @property
    def hits(self):
        return self._shelf.hits

    @property
    def misses(self):
        return self._shelf.misses

    @property
    def nbytes(self):
        """Bytes held by the stored graphs."""
        return self._shelf.nbytes

    def __len__(self):
        return len(self._shelf.graphs)

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):  # a copy in another process starts empty
        return (GraphStore, (self.k_max, self._shelf.max_bytes))

    def __repr__(self):
        return f"GraphStore(k_max={self.k_max}, graphs={len(self)}, nbytes={self.nbytes})"


class _Overlay(GraphStore):
    """A :meth:`GraphStore.overlay`: its own graphs first, then its base's (read only)."""

    _base = None

    def get(self, key, k):
        found = super().get(key, k)
        entry = None if found is not None else self._base.graphs.get(key)
        if entry is None or entry[0].shape[1] < k:
            return found
        dist, ind = entry
        return dist[:, :k].copy(), ind[:, :k].copy()
