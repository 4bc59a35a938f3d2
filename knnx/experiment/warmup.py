"""Warm-up: the numba kernels a cell will use, compiled before it is timed.

numba compiles a kernel (or loads it from its cache) at its first call with each
combination of argument types, and which kernels run depends on the parameters
(weights, vote rules, base metric, protocol lpo) and, for neighbour search, on the
sizes. So, the first time a process meets a setting (``ctx.warmed``), it fits and
predicts (``predict_proba`` too if the spec's metrics need it) the cell's estimator with
that setting, unchanged, on a tiny problem shaped like the cell's (:func:`tiny_problem`:
same features and classes, enough rows for the setting's neighbour counts); under
protocol lpo it computes the LpO risk instead. A tuned cell warms up every setting of
its grid (the cell kind says what to fit: :meth:`knnx.experiment.cells.CellKind.warm_runs`).
The tiny fit's neighbour searches are answered by NumPy and recorded
(:class:`TinyGraphs`); the search then says which of its kernel paths the cell's own
sizes take and warms them up (:func:`knnx.neighbors.search.search_plan`,
:func:`knnx.neighbors.search.warm_up_path`).

Only classes that may run numba kernels are warmed up (:func:`warms_up`): knnx's estimators (a
class of the knnx package or derived from one), a class with a ``graphs`` parameter (its
neighbour searches run knnx's kernels), and any class whose ``_warm_up`` attribute is
true; ``_warm_up = False`` leaves a class out. Any other class (a scikit-learn
estimator, a plain estimator of the user's) has nothing to compile: it is not fitted on
a tiny problem, its cells run as without warm-up, and it has no entry in
environment.json's ``warmup_seconds`` (``{algorithm: seconds}``: the seconds each
algorithm's warm-ups took, summed over the processes). The kernels knnx's classes share
(neighbour search, votes) compile in the warm-up of the first of them that a process
meets, and count as its seconds.

Nothing of the cell changes: the warm-up runs with the global random states of
``random`` and NumPy saved and restored, its warnings discarded, and its neighbour
graphs in a store of its own that keeps none (never the process's); a warm-up that
fails for any reason is skipped, and the cell then compiles what it needs as it would
have without it.
"""

import inspect
import random
import time
import warnings
from contextlib import contextmanager

import numpy as np

from knnx.estimators.registry import neighbor_counts
from knnx.neighbors.graphs import GraphStore
from knnx.neighbors.search import search_plan, warm_up_path

# The progress text while a process warms up.
WARMUP_TEXT = "compiling kernels (first run only): {}"

# A setting whose tiny problem would need more training rows than this is not warmed up.
MAX_WARMUP_ROWS = 2000


def warm_up(task, ds, ctx, note=None):
    """Warm up the kernels of ``task`` (its dataset ``ds``) not warmed up yet in the
    process of context ``ctx``; return the seconds it took (0.0 if there was nothing
    left to warm up). ``note(index, 0, 0, text)``, if given, is told ``WARMUP_TEXT``
    first. See the module docstring."""
    seen = task.kind.warm_key(task, ds)
    if seen is not None and seen in ctx.warmed:
        return 0.0  # a cell like one met before: nothing left (saves ~0.2 ms per cell)
    try:
        plan = _plan(task, ds, ctx.warmed)
    except (Exception, SystemExit):
        return 0.0
    if seen is not None:
        ctx.warmed.add(seen)
    if not plan:
        return 0.0
    start = time.perf_counter()
    if note is not None:
        try:
            note(task.index, 0, 0, WARMUP_TEXT.format(task.cell.algorithm))
        except Exception:  # noqa: BLE001 - a display problem must not touch the cell
            pass
    recorder = TinyGraphs()
    with _isolated():
        for key, need, run in plan:
            ctx.warmed.add(key)
            try:
                run(*tiny_problem(ds.n_classes, ds.X.shape[1], need), recorder)
            except (Exception, SystemExit):  # noqa: BLE001 - skipped: the cell runs as before
                continue
        try:
            paths = search_plan(
                recorder.searches, len(task.train), len(task.test), ds.X.shape[1], task.graph_k
            )
        except Exception:  # noqa: BLE001
            paths = []
        for path in paths:
            if ("search", path) not in ctx.warmed:
                ctx.warmed.add(("search", path))
                try:
                    warm_up_path(path)
                except Exception:  # noqa: BLE001
                    continue
    return time.perf_counter() - start


def warms_up(cls):
    """Whether the warm-up fits estimator class ``cls``, i.e. whether its fit runs numba
    kernels: its ``_warm_up`` attribute if it sets one (True or False), else whether it
    or a class it derives from is defined in the knnx package, or it takes a ``graphs``
    parameter (knnx's neighbour-graph store, whose searches are knnx's kernels)."""
    declared = getattr(cls, "_warm_up", None)
    if declared is not None:
        return bool(declared)
    if any(_in_knnx(getattr(c, "__module__", None)) for c in getattr(cls, "__mro__", ())):
        return True
    try:
        return "graphs" in inspect.signature(cls).parameters
    except (TypeError, ValueError):  # no signature to read: nothing says it has kernels
        return False


def _in_knnx(module):
    return isinstance(module, str) and (module == "knnx" or module.startswith("knnx."))


def _plan(task, ds, warmed):
    """``[(key, rows needed, run)]``: the settings of ``task`` not warmed up yet (none
    for a class without kernels, see :func:`warms_up`)."""
    estimator_class = getattr(task, "estimator_class", None)  # a cell that fits a class
    if estimator_class is not None and not warms_up(estimator_class()):
        return []
    plan = []
    for key, need, run in task.kind.warm_runs(task, ds):
        if key in warmed or key in (k for k, _, _ in plan) or need > MAX_WARMUP_ROWS:
            continue
        plan.append((key, need, run))
    return plan


def rows_needed(setting, held_out=0, cls=None):
    """Training rows a setting of class ``cls`` needs at least: its largest neighbour count
    (:func:`knnx.estimators.registry.neighbor_counts`: for a class that does not say,
    ``k``, ``k_max`` and ``n_neighbors``; 1 if none), plus the points it holds out (a
    parameter ``p``, e.g. knn_lpo's, and ``held_out``, protocol lpo's p), plus one (a
    point is not its own leave-one-out neighbour)."""

    def count(value):
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    neighbors = max([1, *(count(v) for v in neighbor_counts(cls, setting))])
    return neighbors + count(setting.get("p")) + held_out + 1


def tiny_problem(n_classes, n_features, need):
    """``(X, y, X_test)``: a small synthetic problem with ``n_classes`` classes (codes
    0..C-1) and ``n_features`` features: max(6, ceil(max(24, need) / C)) training rows
    and 2 test rows per class. Class c is centred at 6 (1 + c // d) on feature c mod d,
    with standard normal noise: classes well apart, so that no vote is close (exact
    weighted LpO counts close votes at a cost exponential in p: at spacing 3, knn_lpo
    with p = 15, k_max = 50 took 22 s, at 6 0.13 s). Drawn from its own generator
    (seed 0): the global random states are not touched."""
    per_class = max(6, -(-max(24, need) // n_classes))
    rng = np.random.default_rng(0)
    y = np.repeat(np.arange(n_classes, dtype=np.intp), per_class + 2)
    X = rng.standard_normal((len(y), n_features))
    X[np.arange(len(y)), y % n_features] += 6.0 * (1 + y // n_features)
    test = np.tile(np.arange(per_class + 2) >= per_class, n_classes)
    return X[~test], y[~test], X[test]


class TinyGraphs(GraphStore):
    """The warm-up's graph store: it answers every neighbour search of a tiny fit itself
    (:func:`brute_graph`, squared Euclidean whatever the metric: the answer only feeds the
    tiny fit) and notes it in ``searches`` as ``(leave-one-out?, k)``, with a third item
    ``"metric"`` for a search under another metric. So a
    tiny fit runs no search kernel at its own sizes (the cell's sizes choose those), and
    no graph is stored anywhere."""

    def __init__(self):
        super().__init__(0)
        self.searches = []

    def key(self, X, queries, metric=None):
        return X, queries, metric  # the arrays themselves, from which get answers

    def get(self, key, k):
        X, queries, metric = key
        self.searches.append((queries is None, k) if metric is None else (queries is None, k, "metric"))
        return brute_graph(X, queries, k)

    def put(self, key, dist, ind):  # never called: get always answers
        pass


def brute_graph(X, queries, k):
    """``(squared distances, indices)`` of the k nearest rows of X to each query (each row
    of X, itself excluded, if ``queries`` is None), ordered by (distance, index): NumPy,
    for the warm-up's tiny problems (no rounding guarantee, none needed there)."""
    Q = X if queries is None else queries
    D = np.einsum("ij,ij->i", Q, Q)[:, None] + np.einsum("ij,ij->i", X, X)[None, :] - 2.0 * (Q @ X.T)
    np.maximum(D, 0.0, out=D)
    if queries is None:
        np.fill_diagonal(D, np.inf)
    ind = np.argsort(D, axis=1, kind="stable")[:, :k]
    return np.ascontiguousarray(np.take_along_axis(D, ind, axis=1)), np.ascontiguousarray(ind, dtype=np.intp)


@contextmanager
def _isolated():
    """The warm-up's context: global random states restored at the end, warnings
    discarded."""
    # the legacy global state: what an estimator given no seed draws from
    py_state, np_state = random.getstate(), np.random.get_state()  # noqa: NPY002
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        random.setstate(py_state)
        np.random.set_state(np_state)  # noqa: NPY002
