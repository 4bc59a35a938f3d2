"""Run every cell of a spec and write tidy results, cell by cell.

``run_spec`` is the library call behind ``knnx run``. Output folder layout::

    OUT/results.csv      tidy rows (see knnx.results), sorted in cell order at the end
    OUT/curves.csv       with ``record_curves: true`` only: training curves, tidy rows
                         experiment, dataset, algorithm, params, repeat, fold,
                         iteration, series, value (sorted in cell order at the end)
    OUT/spec.yaml        the normalised spec (every default filled in)
    OUT/environment.json per run: knnx version, git commit, Python/numpy/numba versions,
                         CPU, seconds of warm-up (kernel compilation)
    OUT/summary.csv      mean, std, n per (dataset, algorithm, configuration, metric)
    OUT/summary.md       the same as Markdown tables, one per metric, best marked
    OUT/<metric>.png     every configuration of the run, one panel per dataset
    OUT/<metric>-<p>.png the metric against each numeric parameter p that varies
    OUT/report.html      one self-contained page: tables, comparison, figures, timings

Active learning: a spec with ``kind: active`` (:class:`knnx.spec.ActiveSpec`) runs
through the same validation, cache, resume, lock, executors, failures file, progress,
environment.json and report. Its cell is one loop of :func:`knnx.lpo.active.active_learning`
(a dataset, a strategy, a repeat; :func:`active_repeat_data` draws its start set and
pool); its rows carry a ``round`` column (see :func:`_active_rows`); summary.csv gives
mean, std and n per round and its figures are ``active.png`` and ``active_k.png``
(:func:`knnx.reporting.figures.active_figures`); report.html tabulates the last round.

Metrics: label metrics score ``predict``; ``predict_proba`` is called only when a
probability or posterior metric is asked, and its columns (in the estimator's
``classes_`` order) are placed on the dataset's class codes 0..C-1, a class missing
from the training part getting probability 0. Posterior metrics compare with the
dataset's true posterior at the raw test features (before standardisation).
``predict_seconds`` times ``predict`` alone.

Curves: with ``record_curves: true`` each fitted estimator that exposes ``curve_``
(a dict of equal-length 1-D arrays: ``iteration``, integers, and numeric series
such as ``surrogate_risk`` or ``train_error``) gives one row per (series,
iteration), at most ``curve_points`` evenly spaced iterations per curve, first and
last kept (see :func:`knnx.results.curve_rows`). Protocol lpo fits no estimator and
records none.

Cache and resume: every finished cell is recorded in ``OUT/cells.csv`` with a
content hash (:func:`cell_keys`) of everything that produced its rows: the cell's
normalised spec (experiment name, seed, dataset entry, algorithm, parameters,
protocol, repeat, fold, preprocessing, metrics, curve settings), a checksum of the
dataset's arrays and of the split's row indices, the knnx version, a checksum of
knnx's source files and the versions of the numeric libraries (numpy, scipy, numba,
llvmlite, scikit-learn, metric-learn: an upgrade can move a baseline's last digits,
so cells cached under another version are rerun, not mixed in). A rerun keeps
exactly the cells whose recorded hash equals the current one and runs the others,
so editing the spec (a new algorithm, another grid value), the data or the code
reruns what changed and nothing else; rows of cells no longer in the spec are
dropped. A cell's curve rows are appended first,
then its results rows, then its ledger row: a cell counts as done only once all
three are on disk, so a run killed at any point (even ``kill -9``) resumes with no
duplicate or partial cell. ``resume=False`` deletes every output first.

Failures: a cell whose algorithm raises is recorded in ``OUT/failures.csv`` (cell,
hash, the error's first line) and the run goes on; at the end, after the summaries
of the finished cells, a CellError says how many failed. Failed cells are never
cached: the next run retries them.

Lock: a run holds an exclusive lock on ``OUT/.knnx.lock`` (``fcntl.flock``) from
before its first write to the end; a second run on the same folder is refused with
a ResultsError naming the holder's pid, and writes nothing. The lock dies with its
process, so a killed run never leaves the folder locked.

With ``jobs > 1`` cells run in a pool of processes (each numba kernel
single-threaded there); results are identical to ``jobs=1``, only timings differ.

Warm-up: numba compiles a kernel (or loads it from its cache) at its first call, which
would otherwise land in the first timed cell of each setting (seconds, on a first run).
So every process that runs cells (this one, each pool or Dask worker) first fits and
predicts each setting it meets on a tiny synthetic problem shaped like the cell's
(:func:`_warm_up`); the progress says ``compiling kernels (first run only):
<algorithm>`` meanwhile. Results are identical with or without it (``WARM_UP``); the
seconds it took, per algorithm and summed over the processes, are added to this run's
entry of environment.json as ``warmup_seconds`` at the end of the run, and are no
part of any cell's times.
"""

import hashlib
import inspect
import json
import logging
import os
import platform
import signal
import subprocess
import threading
import time
import warnings
from collections import Counter
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from functools import lru_cache, partial
from multiprocessing import get_context
from pathlib import Path

import numpy as np
import yaml

from knnx._text import escape_control
from knnx._version import __version__
from knnx.datasets import REGISTERED, load_dataset
from knnx.errors import CellError, KnnxError, ResultsError, WriteError
from knnx.estimators.registry import LPO_RISK
from knnx.evaluation.metrics import LOWER_IS_BETTER, METRIC_INPUT, METRICS
from knnx.evaluation.preprocess import apply_standardizer, fit_standardizer, standardize
from knnx.experiment.outputs import finish_outputs
from knnx.limits import WORKER_BYTES, check_memory, format_bytes
from knnx.lpo.active import active_learning
from knnx.neighbors.graphs import GraphStore
from knnx.neighbors.search import search_paths
from knnx.plugins import add_import_dirs, import_object
from knnx.results import (
    CELL_COLUMNS,
    CURVE_COLUMNS,
    FAILURE_COLUMNS,
    LEDGER_COLUMNS,
    OUTPUT_FILES,
    ROUND,
    WARNING_COLUMNS,
    ResultsWriter,
    atomic_write_text,
    curve_rows,
    output_lock,
    param_names,
    prepare_output_folder,
    read_ledger,
    recover,
    recover_curves,
    results_columns,
    rows_to_csv,
    with_param_columns,
)
from knnx.spec import (
    SEED_DATA,
    SEED_SPLITS,
    canonical_json,
    dataset_seedseq,
    tune_seed,
    tuned_settings,
    validate_spec,
)


@dataclass(frozen=True)
class RunSummary:
    out: Path
    n_cells: int
    n_run: int
    n_skipped: int
    seconds: float
    n_warned: int = 0  # cells of this run that raised warnings (listed in OUT/warnings.csv)
    notes: tuple = ()  # one line per figure (or report) that could not be made, saying why


def _graph_k(vspec):
    """Per dataset index, the largest neighbour count (``k`` or ``k_max``) any cell asks:
    the width at which a run computes each neighbour graph once (see knnx.neighbors.graphs)."""
    out = {}
    for c in vspec.cells:
        ks = [
            v
            for name, value in c.params.items()
            if name in ("k", "k_max")
            for v in (value if isinstance(value, list) else [value])  # a tuned cell's grid
            if isinstance(v, int)
        ]
        out[c.dataset_index] = max([out.get(c.dataset_index, 0), *ks])
    return out


def _cell_payload(vspec, cell, splits, graph_k=None):
    if vspec.kind == "active":
        return _active_payload(vspec, cell)
    split = splits[(cell.dataset_index, cell.repeat, cell.fold)]
    ref = vspec.algorithms[cell.algorithm_index]
    tune = vspec.spec.algorithms[cell.algorithm_index].tune
    return {
        "tune": None
        if tune is None
        else {
            "cv": tune.cv,
            "metric": tune.metric,
            "settings": tuned_settings(cell.params),
            "seed": tune_seed(vspec.spec.seed, cell.dataset, cell.repeat, cell.fold),
        },
        # the class itself (pickled by reference), or its import path, imported again by a
        # worker with the spec's folder on its path
        "estimator": ref.path if ref.path is not None else ref.cls,
        "import_dirs": vspec.import_dirs,
        "registered": ref.name,
        "graph_k": (graph_k or {}).get(cell.dataset_index, 0),
        "warm_up": WARM_UP,
        "experiment": vspec.spec.name,
        "entry": vspec.entries[cell.dataset_index],
        "loaders": _registered_loaders(vspec.entries[cell.dataset_index]),
        "dataset": cell.dataset,
        "seed": vspec.spec.seed,
        "base_dir": str(vspec.base_dir),
        "algorithm": cell.algorithm,
        "params": cell.params,
        "protocol": vspec.protocol_json,
        "repeat": cell.repeat,
        "fold": cell.fold,
        "train": split.train,
        "test": split.test,
        "standardize": vspec.spec.preprocess.standardize,
        "metrics": list(vspec.spec.metrics),
        "record_curves": vspec.spec.record_curves,
        "curve_points": vspec.spec.curve_points,
        "index": cell.index,
    }


@lru_cache(maxsize=8)
def _load_cached(entry_json, label, seed, base_dir):
    return load_dataset(
        json.loads(entry_json), seed=dataset_seedseq(seed, label, SEED_DATA), base_dir=base_dir
    )


# Datasets that validate_spec loaded, lent to the cells a run executes in its own process
# (jobs = 1) for the length of that run, so each dataset is in memory once, not twice.
_VALIDATED = {}


@contextmanager
def _lend_validated(vspec, lend):
    keys = []
    if lend:
        for d, ds in enumerate(vspec.datasets):
            key = (canonical_json(vspec.entries[d]), ds.name, vspec.spec.seed, str(vspec.base_dir))
            _VALIDATED[key] = ds
            keys.append(key)
    try:
        yield
    finally:
        for key in keys:
            _VALIDATED.pop(key, None)


def _registered_loaders(entry):
    """{name: loader} for an entry naming a dataset registered in this process (see
    knnx.register_dataset): a worker process receives the function by reference."""
    name = entry if isinstance(entry, str) else entry.get("name") if isinstance(entry, dict) else None
    return {name: REGISTERED[name]} if name in REGISTERED else {}


def _dataset(payload):
    add_import_dirs(payload.get("import_dirs", ()))
    for name, loader in payload.get("loaders", {}).items():
        REGISTERED.setdefault(name, loader)
    key = (canonical_json(payload["entry"]), payload["dataset"], payload["seed"], payload["base_dir"])
    ds = _VALIDATED.get(key)
    return ds if ds is not None else _load_cached(*key)


# Share neighbour graphs between the cells a process runs (knnx.neighbors.graphs); results are
# identical either way (tested), only the time differs.
REUSE_GRAPHS = True

# The graphs this process keeps for its cells (a pool or Dask worker has its own): the
# runner hands it, explicitly, to every estimator that takes a ``graphs`` parameter
# (see :func:`with_graphs`) and to the exact LpO risk.
PROCESS_GRAPHS = GraphStore()

# Warm the numba kernels up before a process's first timed cell of each setting
# (:func:`_warm_up`); results are identical either way (tested), only the timings differ.
WARM_UP = True


def run_cell(payload, fit_progress=None):
    """Fit and evaluate one cell; return ``(index, rows, curve_rows, warnings, timing)``;
    with ``payload["graph_k"]`` > 0 its estimators are given the process's graph store
    (:data:`PROCESS_GRAPHS`) with that width (see :mod:`knnx.neighbors.graphs`).

    ``fit_progress(index, done, total, text=None)`` relays the progress of an estimator
    whose ``fit`` takes a ``progress`` callback, and (``text``) says when this process
    compiles kernels first. ``warnings``: what Python warnings the cell raised, as
    ``(category, message, count)`` in the order first seen (recorded, not printed).
    ``timing``: ``{"seconds": the cell's wall time, warm-up excluded, "warmup":
    {algorithm: seconds of warm-up}}`` (empty when this process had warmed up this
    cell's settings before). Before the cell, unless ``payload["warm_up"]`` is false,
    the process warms up the kernels of the cell's settings (:func:`_warm_up`); an
    exception of the cell carries that warm-up as its ``warmup_seconds`` attribute."""
    start = time.perf_counter()
    warm = _warm_up(payload, fit_progress) if payload.get("warm_up", WARM_UP) else 0.0
    spent = {payload["algorithm"]: warm} if warm > 0 else {}
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            k_max = payload.get("graph_k", 0)
            store = PROCESS_GRAPHS.with_k_max(k_max) if k_max > 0 else None
            result = _run_cell(payload, fit_progress, store)
    except (Exception, SystemExit) as exc:
        try:  # the warm-up was spent all the same: _checked passes it on with the CellError
            exc.warmup_seconds = spent
        except AttributeError:
            pass
        raise
    counts = Counter(
        (w.category.__name__, escape_control((str(w.message).strip().splitlines() or [""])[0])[:300])
        for w in caught
    )
    timing = {"seconds": time.perf_counter() - start - warm, "warmup": spent}
    return (*result, [(category, message, n) for (category, message), n in counts.items()], timing)


# --- warm-up ------------------------------------------------------------------------------

# What this process has warmed up (the one state the warm-up keeps): ("fit" or "lpo",
# estimator, setting as canonical JSON, number of classes) per setting and ("search",
# path) per neighbour-search path. Per process: a pool or Dask worker starts empty; an
# in-process run (jobs = 1) shares it with the runs before it in the same process,
# whose kernels are compiled already. A key enters it before its warm-up runs, so a
# warm-up that fails is not tried again.
_WARMED = set()

# The progress text while a process warms up.
WARMUP_TEXT = "compiling kernels (first run only): {}"

# A setting whose tiny problem would need more training rows than this is not warmed up.
MAX_WARMUP_ROWS = 2000

# Integer parameters that count neighbours (a tiny problem needs more rows than they say).
_NEIGHBOR_COUNTS = ("k", "k_max", "n_neighbors")


def _warm_up(payload, note=None):
    """Warm up the kernels a cell will use; return the seconds it took (0.0 if nothing
    was left to warm up in this process).

    numba compiles a kernel (or loads it from its cache) at its first call with each
    combination of argument types, and which kernels run depends on the parameters
    (weights, vote rules, base metric, protocol lpo) and, for neighbour search, on the
    sizes. So, the first time a process meets a setting (see :data:`_WARMED`), it fits
    and predicts (``predict_proba`` too if the spec's metrics need it) the cell's
    estimator with that setting, unchanged, on a tiny problem shaped like the cell's
    (:func:`_tiny_problem`: same features and classes, enough rows for the setting's
    neighbour counts); under protocol lpo it computes the LpO risk instead, as
    :func:`_lpo_rows` does. A tuned cell warms up every setting of its grid. The tiny
    fit's neighbour searches are answered by NumPy and recorded (:class:`_TinyGraphs`);
    the search kernels the cell's own sizes will take
    (:func:`knnx.neighbors.search.search_paths`) are then
    warmed up on small arrays (:func:`_warm_search`).

    Nothing of the cell changes: the warm-up runs with the global random states of
    ``random`` and NumPy saved and restored, its warnings discarded, and its neighbour
    graphs in a store of its own that keeps none (never the process's,
    :data:`PROCESS_GRAPHS`); a warm-up that fails for any reason is skipped, and the cell
    then compiles what it needs as it did before. ``note(index, 0, 0, text)``, if
    given, is told ``WARMUP_TEXT`` first.
    """
    try:
        plan = _warmup_plan(payload)
    except (Exception, SystemExit):
        return 0.0
    if not plan:
        return 0.0
    start = time.perf_counter()
    if note is not None:
        try:
            note(payload["index"], 0, 0, WARMUP_TEXT.format(payload["algorithm"]))
        except Exception:  # noqa: BLE001 - a display problem must not touch the cell
            pass
    recorder = _TinyGraphs()
    with _isolated():
        for key, run in plan:
            _WARMED.add(key)
            try:
                run(recorder)
            except (Exception, SystemExit):  # noqa: BLE001 - skipped: the cell runs as before
                continue
        try:
            paths = _cell_search_paths(payload, recorder.searches)
        except Exception:  # noqa: BLE001
            paths = []
        for path in paths:
            if ("search", path) not in _WARMED:
                _WARMED.add(("search", path))
                try:
                    _warm_search(path)
                except Exception:  # noqa: BLE001
                    continue
    return time.perf_counter() - start


def _warmup_plan(payload):
    """``[(key, run)]``: the settings of this cell not warmed up yet in this process, each
    with a function running its tiny fit (see :func:`_warm_up`)."""
    ds = _dataset(payload)
    n_classes, n_features = ds.n_classes, ds.X.shape[1]
    protocol = json.loads(payload["protocol"])
    tune = payload.get("tune")
    settings = tune["settings"] if tune else [payload["params"]]
    if protocol["kind"] == "lpo":
        kind, name, held_out = "lpo", payload["registered"], protocol["p"]
    else:
        cls = _estimator_class(payload)
        kind, name, held_out = "fit", f"{cls.__module__}:{cls.__qualname__}", 0
    kinds = {METRIC_INPUT[m] for m in payload["metrics"]}
    if tune:
        kinds.add(METRIC_INPUT.get(tune["metric"], "label"))
    proba = bool(kinds & {"proba", "posterior"})
    plan = []
    for setting in settings:
        key = (kind, name, canonical_json(setting), n_classes)
        need = _rows_needed(setting, held_out)
        if key in _WARMED or key in (k for k, _ in plan) or need > MAX_WARMUP_ROWS:
            continue
        X, y, X_test = _tiny_problem(n_classes, n_features, need)
        if kind == "lpo":
            run = partial(_tiny_lpo, LPO_RISK[name], setting, X, y, held_out)
        else:
            run = partial(_tiny_fit, cls, setting, X, y, X_test, proba)
        plan.append((key, run))
    return plan


def _tiny_lpo(risk, setting, X, y, held_out, store):
    risk(setting, X, y, held_out, graphs=store)


def _tiny_fit(cls, setting, X, y, X_test, proba, store):
    estimator = with_graphs(cls(**setting), store).fit(X, y)
    estimator.predict(X_test)
    if proba:
        estimator.predict_proba(X_test)


def _rows_needed(setting, held_out=0):
    """Training rows a setting needs at least: its largest neighbour count (``k``,
    ``k_max``, ``n_neighbors``; 1 if none), plus the points it holds out (a parameter
    ``p``, e.g. knn_lpo's, and ``held_out``, protocol lpo's p), plus one (a point is not
    its own leave-one-out neighbour)."""

    def count(value):
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    neighbors = max([1, *(count(setting.get(name)) for name in _NEIGHBOR_COUNTS)])
    return neighbors + count(setting.get("p")) + held_out + 1


def _tiny_problem(n_classes, n_features, need):
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


class _TinyGraphs(GraphStore):
    """The warm-up's graph store: it answers every neighbour search of a tiny fit itself
    (:func:`_brute_graph`) and notes it in ``searches`` as ``(leave-one-out?, k)``. So a
    tiny fit runs no search kernel at its own sizes (the cell's sizes choose those, see
    :func:`_warm_search`), and no graph is stored anywhere."""

    def __init__(self):
        super().__init__(0)
        self.searches = []

    def key(self, X, queries):
        return X, queries  # the arrays themselves, from which get answers

    def get(self, key, k):
        X, queries = key
        self.searches.append((queries is None, k))
        return _brute_graph(X, queries, k)

    def put(self, key, dist, ind):  # never called: get always answers
        pass


def _brute_graph(X, queries, k):
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
    import random

    # the legacy global state: what an estimator given no seed draws from
    py_state, np_state = random.getstate(), np.random.get_state()  # noqa: NPY002
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        random.setstate(py_state)
        np.random.set_state(np_state)  # noqa: NPY002


def _cell_search_paths(payload, searches):
    """The search paths (:func:`knnx.neighbors.search.search_paths`) of the cell's own searches,
    in first use order: each recorded search of the tiny fit, taken at the cell's sizes
    (a leave-one-out graph of the training part, or the test part against it) with its
    width raised to the run's graph width ``graph_k`` as a GraphStore does."""
    n_train, n_test = len(payload["train"]), len(payload["test"])
    d = _dataset(payload).X.shape[1]
    paths = []
    for loo, k in dict.fromkeys(searches):
        m, k_cap = (n_train, n_train - 1) if loo else (n_test, n_train)
        k = max(k, min(payload.get("graph_k", 0), k_cap))
        if m > 0 and 1 <= k <= k_cap:
            paths += [p for p in search_paths(m, n_train, d, k, loo) if p not in paths]
    return paths


def _warm_search(path):
    """Run the kernels of one search path (see :func:`knnx.neighbors.search.search_paths`) on small random
    arrays, k = 1, as ``knnx.neighbors.search._exact`` runs them (a few milliseconds once they
    are compiled; "seed" and "symmetric" need 8192 and 1025 rows to occur)."""
    from knnx._kernels import PARALLEL_LOCK
    from knnx._kernels.neighbors import brute_rows, select_rows
    from knnx.neighbors import search as N

    n_ref, m, d = {
        "select": (40, 8, 1),
        "brute": (40, 8, 1),
        "screen": (4 * N._candidate_capacity(1) + 1, 8, 1),
        "seed": (8 * N._SEED_SAMPLE, 8, 1),
        "symmetric": (N._SYMMETRIC_BLOCK + 1, None, N._SYMMETRIC_MIN_FEATURES),  # two blocks
    }[path]
    rng = np.random.default_rng(0)
    R = rng.standard_normal((n_ref, d))
    loo = m is None
    Q = R if loo else rng.standard_normal((m, d))
    rows = np.arange(Q.shape[0], dtype=np.intp)
    out_dist, out_ind = np.empty((Q.shape[0], 1)), np.empty((Q.shape[0], 1), dtype=np.intp)
    if path in ("select", "brute"):
        with PARALLEL_LOCK:
            if path == "select":
                select_rows(Q, np.ascontiguousarray(R.T), rows, loo, out_dist, out_ind)
            else:
                brute_rows(Q, R, rows, loo, out_dist, out_ind)
    else:
        N._screened_search(Q, R, 1, loo, N._centre(R, Q, loo), out_dist, out_ind)


def _fit_kwargs(estimator, index, fit_progress):
    """``{"progress": ...}`` for an estimator whose ``fit`` reports progress (e.g.
    WeightedMetricNN, quadratic in the training size), else {}."""
    if fit_progress is None or "progress" not in inspect.signature(estimator.fit).parameters:
        return {}
    return {"progress": lambda done, total: fit_progress(index, done, total)}


def with_graphs(estimator, store):
    """``estimator``, given ``store`` as its ``graphs`` parameter when it has one left at
    None (knnx's neighbour estimators; any estimator may opt in the same way) and
    ``store`` is not None; unchanged otherwise."""
    if store is not None:
        try:
            params = estimator.get_params(deep=False)
        except Exception:  # noqa: BLE001 - not ours to judge here: fit will say
            return estimator
        if "graphs" in params and params["graphs"] is None:
            estimator.set_params(graphs=store)
    return estimator


def _run_cell(payload, fit_progress=None, store=None):
    """Fit and evaluate one cell; return ``(index, rows, curve_rows)``; ``store``: the
    GraphStore its estimators and LpO risks search through, or None.

    ``rows``: one per metric of the spec, then one per entry of the fitted
    estimator's ``reported_`` dict, if any (``metric`` = the entry's name, e.g.
    ``chosen_k``). ``curve_rows``: the estimator's ``curve_`` as tidy rows when the
    spec sets ``record_curves`` and the estimator has one, else empty.
    """
    if payload.get("kind") == "active":
        return payload["index"], _active_rows(payload), []
    ds = _dataset(payload)
    tr, te = payload["train"], payload["test"]
    X_train, X_test = ds.X[tr], ds.X[te]
    if payload["standardize"]:
        X_train, X_test = standardize(X_train, X_test)
    protocol = json.loads(payload["protocol"])
    if protocol["kind"] == "lpo":
        return payload["index"], _lpo_rows(payload, X_train, ds.y[tr], protocol["p"], store), []
    cls = _estimator_class(payload)
    chosen = {}
    if payload.get("tune"):
        best, chosen = _tune(cls, payload, X_train, ds.y[tr], ds.n_classes, store)
        estimator = with_graphs(cls(**best), store)
    else:
        estimator = with_graphs(cls(**payload["params"]), store)
    fit_kwargs = _fit_kwargs(estimator, payload["index"], fit_progress)
    t0 = time.perf_counter()
    estimator.fit(X_train, ds.y[tr], **fit_kwargs)
    t1 = time.perf_counter()
    y_pred = estimator.predict(X_test)
    t2 = time.perf_counter()
    _check_predictions(y_pred, len(te), ds.n_classes)
    base = _base_row(payload, len(tr), len(te), t1 - t0, t2 - t1)
    kinds = {METRIC_INPUT[m] for m in payload["metrics"]}
    proba = posterior = None
    if kinds & {"proba", "posterior"}:
        proba = _proba_on_codes(estimator, X_test, ds.n_classes)
    if "posterior" in kinds:
        posterior = ds.posterior(ds.X[te])  # raw features: the model's own coordinates
    inputs = {
        "label": (ds.y[te], np.asarray(y_pred)),
        "proba": (ds.y[te], proba),
        "posterior": (posterior, proba),
    }
    rows = [
        {**base, "metric": m, "value": float(METRICS[m](*inputs[METRIC_INPUT[m]]))}
        for m in payload["metrics"]
    ]
    # Quantities the estimator reports about its fit (e.g. the k chosen by LpO).
    reported = getattr(estimator, "reported_", {})
    rows += [{**base, "metric": name, "value": float(value)} for name, value in reported.items()]
    rows += [{**base, "metric": f"chosen_{name}", "value": value} for name, value in chosen.items()]
    curves = []
    if payload["record_curves"] and getattr(estimator, "curve_", None) is not None:
        cell = {c: base[c] for c in ("experiment", "dataset", "algorithm", "params", "repeat", "fold")}
        curves = curve_rows(estimator.curve_, cell, payload["curve_points"])
    return payload["index"], rows, curves


def _tune(cls, payload, X, y, n_classes, store=None):
    """Choose a setting of a tuned cell on stratified inner folds of its training part.

    As scikit-learn's ``GridSearchCV(cls(), grid, cv=StratifiedKFold(cv, shuffle=True,
    random_state=seed))``: each setting is fitted on every inner training fold and
    scored on the held-out fold (``error`` and ``accuracy`` by accuracy, any other metric
    by its value, negated when lower is better); the setting with the highest mean score
    wins, the first in ParameterGrid order on a tie. Returns the setting and
    ``{name: chosen value}`` for the parameters that vary (a number as itself, another
    value by its position in the spec's list)."""
    from sklearn.metrics import accuracy_score
    from sklearn.model_selection import StratifiedKFold

    tune = payload["tune"]
    metric = tune["metric"]
    folds = list(StratifiedKFold(tune["cv"], shuffle=True, random_state=tune["seed"]).split(X, y))
    scores = np.empty((len(tune["settings"]), len(folds)))
    for i, setting in enumerate(tune["settings"]):
        for j, (inner, held) in enumerate(folds):
            est = with_graphs(cls(**setting), store).fit(X[inner], y[inner])
            if metric in ("error", "accuracy"):
                scores[i, j] = accuracy_score(y[held], est.predict(X[held]))
                continue
            if METRIC_INPUT[metric] == "proba":
                value = METRICS[metric](y[held], _proba_on_codes(est, X[held], n_classes))
            else:
                value = METRICS[metric](y[held], np.asarray(est.predict(X[held])))
            scores[i, j] = -value if LOWER_IS_BETTER.get(metric, False) else value
    means = np.average(scores, axis=1)
    best = tune["settings"][int(np.argmax(means))]  # argmax: the first of the best
    chosen = {}
    for name, values in payload["params"].items():
        if isinstance(values, list) and len(values) > 1:
            value = best[name]
            number = isinstance(value, int | float) and not isinstance(value, bool)
            chosen[name] = float(value) if number else float(values.index(value))
    return best, chosen


def _check_predictions(y_pred, n, n_classes):
    """ValueError (the cell fails) unless ``y_pred`` holds ``n`` class codes: an estimator
    outside knnx may return anything, and a label that is no class would be scored as an
    error silently."""
    y_pred = np.asarray(y_pred)
    if y_pred.shape != (n,):
        raise ValueError(f"predict returned shape {y_pred.shape}, expected ({n},)")
    if y_pred.dtype.kind not in "iu" and not (
        y_pred.dtype.kind in "fO"
        and all(isinstance(v, int | float | np.number) and float(v).is_integer() for v in y_pred)
    ):
        bad = next(
            (v for v in y_pred.tolist() if not isinstance(v, int | float) or not float(v).is_integer()), None
        )
        raise ValueError(f"predict returned {bad!r}, not a class code (the classes of fit's y)")
    codes = y_pred.astype(np.int64)
    if len(codes) and (codes.min() < 0 or codes.max() >= n_classes):
        bad = int(codes[(codes < 0) | (codes >= n_classes)][0])
        raise ValueError(f"predict returned {bad}, not a class code (the classes of fit's y)")


def _estimator_class(payload):
    """The class a cell fits: carried in the payload, or imported from its path."""
    estimator = payload["estimator"]
    add_import_dirs(payload.get("import_dirs", ()))
    return import_object(estimator, payload["base_dir"]) if isinstance(estimator, str) else estimator


def _proba_on_codes(estimator, X, n_classes):
    """``predict_proba(X)`` with column c the probability of class code c (0..n_classes-1).

    The estimator's columns follow its ``classes_`` (the codes seen in training); a
    class absent from the training part gets probability 0.
    """
    proba = np.asarray(estimator.predict_proba(X), dtype=np.float64)
    classes = np.asarray(estimator.classes_)
    if proba.shape != (X.shape[0], len(classes)):
        raise ValueError(f"predict_proba returned shape {proba.shape}, expected {(X.shape[0], len(classes))}")
    codes = classes.astype(np.intp)
    if (
        not np.array_equal(codes, classes)
        or len(np.unique(codes)) != len(codes)
        or (codes < 0).any()
        or (codes >= n_classes).any()
    ):
        raise ValueError(
            f"classes_ must be distinct class codes in 0..{n_classes - 1}, got {classes.tolist()}"
        )
    full = np.zeros((X.shape[0], n_classes))
    full[:, codes] = proba
    return full


def _base_row(payload, n_train, n_test, fit_seconds, predict_seconds):
    return {
        "experiment": payload["experiment"],
        "dataset": payload["dataset"],
        "algorithm": payload["algorithm"],
        "params": canonical_json(payload["params"]),
        "protocol": payload["protocol"],
        "repeat": payload["repeat"],
        "fold": payload["fold"],
        "seed": payload["seed"],
        "n_train": n_train,
        "n_test": n_test,
        "fit_seconds": fit_seconds,
        "predict_seconds": predict_seconds,
    }


def _lpo_rows(payload, X, y, p, store=None):
    """Protocol lpo: one ``error`` row, the exact leave-p-out estimate on all n rows
    (n_train = n - p, n_test = p, fit_seconds = time of the closed form)."""
    t0 = time.perf_counter()
    risk = LPO_RISK[payload["registered"]](payload["params"], X, y, p, graphs=store)
    base = _base_row(payload, len(y) - p, p, time.perf_counter() - t0, 0.0)
    return [{**base, "metric": "error", "value": risk}]


@contextmanager
def _single_threaded_children():
    """Environment for spawned workers: one process per core, each single-threaded.

    Set before the pool starts, because OpenBLAS and numba read it at import.
    """
    names = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")
    saved = {n: os.environ.get(n) for n in names}
    os.environ.update({n: "1" for n in names})
    try:
        yield
    finally:
        for n, v in saved.items():
            if v is None:
                os.environ.pop(n, None)
            else:
                os.environ[n] = v


def environment_info():
    """Versions, git commit and CPU of this run (written to environment.json)."""
    import numba
    import pandas
    import scipy
    import sklearn

    commit, dirty = None, None
    repo = Path(__file__).resolve().parents[1]

    def git(*args):
        return subprocess.run(
            ["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=5, check=True
        ).stdout.strip()

    try:
        # Only if knnx itself is the checkout (an installed copy inside another repo is not).
        if Path(git("rev-parse", "--show-toplevel")).resolve() == repo:
            commit = git("rev-parse", "HEAD")
            dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    except (OSError, subprocess.SubprocessError):
        pass
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next((ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")), cpu)
    except OSError:
        pass
    return {
        "knnx": __version__,
        "git_commit": commit,
        "git_dirty": dirty,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "numba": numba.__version__,
        "pandas": pandas.__version__,
        "scikit-learn": sklearn.__version__,
        "platform": platform.platform(),
        "cpu": cpu,
        "cpu_count": os.cpu_count(),
    }


@lru_cache(maxsize=1)
def code_checksum():
    """SHA-256 of knnx's own source files (relative path and bytes, in path order)."""
    root = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


# The libraries whose numerics reach a cell's rows (numba compiles the kernels; scikit-learn,
# scipy and metric-learn run the baselines): their versions are part of every cell's hash.
NUMERIC_LIBRARIES = ("numpy", "scipy", "numba", "llvmlite", "scikit-learn", "metric-learn")


@lru_cache(maxsize=1)
def library_versions():
    """{distribution: version or None if not installed} for :data:`NUMERIC_LIBRARIES`."""
    from importlib import metadata

    out = {}
    for name in NUMERIC_LIBRARIES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def _array_checksum(*arrays):
    digest = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(a)
        digest.update(f"{a.dtype.str}{a.shape}".encode() + a.tobytes())
    return digest.hexdigest()


def cell_keys(vspec):
    """{cell.key(): content hash} for every cell of a validated spec (see the module
    docstring for what the hash covers)."""
    if vspec.kind == "active":
        return _active_cell_keys(vspec)
    normalized = vspec.normalized()
    data = [_array_checksum(ds.X, ds.y) for ds in vspec.datasets]
    splits = {
        (d, s.repeat, s.fold): _array_checksum(s.train, s.test)
        for d, ds_splits in enumerate(vspec.splits)
        for s in ds_splits
    }
    common = {
        "knnx": __version__,
        "code": code_checksum(),
        "libraries": library_versions(),
        "experiment": vspec.spec.name,
        "seed": vspec.spec.seed,
        "preprocess": normalized.get("preprocess"),
        "protocol": vspec.protocol_json,
        "metrics": list(vspec.spec.metrics),
        "record_curves": vspec.spec.record_curves,
        "share_graphs": vspec.spec.share_graphs,  # the timings differ
        "curve_points": vspec.spec.curve_points,
    }
    keys = {}
    for c in vspec.cells:
        ref = vspec.algorithms[c.algorithm_index]
        outside = {"estimator": ref.source(), "version": ref.version} if ref.version is not None else {}
        tune = vspec.spec.algorithms[c.algorithm_index].tune
        if tune is not None:  # how the setting is chosen is part of what produced the cell
            outside["tune"] = tune.model_dump()
        material = {
            **common,
            **outside,  # a class outside knnx: its path and its package's version (or file's hash)
            "entry": vspec.entries[c.dataset_index],
            "data": data[c.dataset_index],
            "split": splits[(c.dataset_index, c.repeat, c.fold)],
            "cell": [c.dataset, c.algorithm, c.params_json, c.repeat, c.fold],
        }
        keys[c.key()] = hashlib.sha256(canonical_json(material).encode()).hexdigest()
    return keys


def run_spec(
    spec,
    *,
    out=None,
    jobs=1,
    resume=True,
    progress=None,
    executor="local",
    scheduler=None,
    overrides=(),
    report=True,
):
    """Validate and run an experiment spec; write results beside a copy of the spec.

    Parameters
    ----------
    spec : path or dict
        YAML file or an equivalent dict (see :mod:`knnx.spec`).
    out : path, optional
        Output folder; default ``results/<spec name>``.
    jobs : int
        Worker processes (1 runs in this process).
    resume : bool
        Skip cells already complete in ``out/results.csv``.
    progress : callable, optional
        Called as ``progress(done, total, description)`` after each cell and once at
        the start, and with the description of a long fit's progress or of a warm-up
        (``"compiling kernels (first run only): <algorithm>"``); the library is
        otherwise silent. A callback with an ``eta_seconds`` parameter (or
        ``**kwargs``) is also given ``eta_seconds=``: the seconds the run expects to
        take still (see :func:`eta_seconds`), or None until a cell has finished.
    executor : {"local", "dask"}
        "local": this process (``jobs`` = 1) or a pool of ``jobs`` processes. "dask":
        a Dask distributed cluster (``pip install 'knnx[dask]'``): the one at
        ``scheduler`` (e.g. "tcp://host:8786"), else a LocalCluster of ``jobs``
        single-threaded worker processes on loopback. Results are identical to
        ``jobs=1`` whatever the executor.
    scheduler : str, optional
        Address of a running Dask scheduler (executor "dask" only).
    overrides : sequence of str
        ``"PATH=VALUE"`` changes applied to the spec before validation (see
        :func:`knnx.spec.apply_overrides`); the spec.yaml written to ``out`` shows them.
    report : bool
        Write ``out/report.html`` at the end (:func:`knnx.reporting.html.write_report`).

    Returns
    -------
    RunSummary
    """
    start = time.perf_counter()
    if executor not in ("local", "dask"):
        raise KnnxError(f"--executor: {executor!r} is not an executor; use local or dask")
    if scheduler is not None and executor != "dask":
        raise KnnxError("--scheduler: only with --executor dask")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise KnnxError(f"--jobs: expected an integer >= 1, got {jobs!r}")
    vspec = validate_spec(spec, overrides)
    if scheduler is None and jobs > 1:
        # each worker process loads the datasets of its cells (about 4x their size at the peak)
        biggest = max(ds.X.nbytes for ds in vspec.datasets)
        held = sum(ds.X.nbytes for ds in vspec.datasets)
        check_memory(
            held + jobs * (WORKER_BYTES + 4 * biggest),
            f"--jobs {jobs}: {jobs} worker processes, each loading datasets of up to {format_bytes(biggest)}",
        )
    with _dask_client(jobs, scheduler) if executor == "dask" else nullcontext() as client:
        out = prepare_output_folder(
            out if out is not None else Path("results") / vspec.spec.name,
            source=None if isinstance(spec, dict) else spec,
        )
        with output_lock(out):
            try:
                return _run_locked(vspec, out, jobs, resume, progress, start, client, html_report=report)
            except WriteError as exc:
                raise WriteError(
                    f"{exc}; the cells finished before are saved: rerun the same command to resume"
                ) from None


def _run_locked(vspec, out, jobs, resume, progress, start, client, html_report=True):
    results_path = out / "results.csv"
    curves_path = out / "curves.csv"
    ledger_path = out / "cells.csv"
    failures_path = out / "failures.csv"
    warnings_path = out / "warnings.csv"
    normalized = yaml.safe_dump(vspec.normalized(), sort_keys=False)
    metrics = list(vspec.spec.metrics)
    keys = cell_keys(vspec)
    order = {c.key(): c.index for c in vspec.cells}
    names = param_names(c.params_json for c in vspec.cells)  # the file's param_<name> columns
    labels = progress_labels(vspec.cells) if progress else {}
    if progress and vspec.kind == "active":  # an active cell is a strategy's loop of one repeat
        labels = {c.index: f"{c.algorithm} repeat {c.repeat}" for c in vspec.cells}
    rounds = vspec.spec.rounds if vspec.kind == "active" else None  # rows per round
    columns = results_columns(names, rounds=rounds is not None)

    done_keys = set()
    if not resume:
        _clear_outputs(out)
    elif results_path.exists():
        # Cached cells: recorded in the ledger with the hash the current spec, data and
        # code give them. Anything else in results.csv is dropped and recomputed.
        if not ledger_path.exists():
            raise ResultsError(
                f"{out}: has a results.csv but no cells.csv ledger (an older knnx or another tool wrote it), so "
                "its rows cannot be matched to cells; rerun with --no-resume to start over, or use --out"
            )
        recorded = read_ledger(ledger_path)
        valid = {cell for cell, key in recorded.items() if keys.get(cell) == key}
        done_keys = recover(results_path, metrics, allowed=valid, columns=columns, rounds=rounds)
    if curves_path.exists():
        recover_curves(curves_path, done_keys)  # curves of complete cells only
    if warnings_path.exists():
        recover_curves(warnings_path, done_keys, WARNING_COLUMNS, "warnings")
    atomic_write_text(
        ledger_path,
        rows_to_csv(
            [dict(zip(LEDGER_COLUMNS, (keys[c], *c), strict=True)) for c in sorted(done_keys, key=order.get)],
            header=True,
            columns=LEDGER_COLUMNS,
        ),
    )
    atomic_write_text(out / "spec.yaml", normalized)
    _record_environment(out / "environment.json", len(vspec.cells) - len(done_keys))

    writer = ResultsWriter(results_path, columns)
    ledger = ResultsWriter(ledger_path, LEDGER_COLUMNS)
    curves_writer = ResultsWriter(curves_path, CURVE_COLUMNS) if vspec.spec.record_curves else None
    todo = [c for c in vspec.cells if c.key() not in done_keys]
    total, done = len(vspec.cells), len(vspec.cells) - len(todo)
    splits = {(d, s.repeat, s.fold): s for d, ds_splits in enumerate(vspec.splits) for s in ds_splits}
    by_index = {c.index: c for c in todo}
    failures = []
    warnings_writer = ResultsWriter(warnings_path, WARNING_COLUMNS) if warnings_path.exists() else None
    n_warned = 0
    in_process = client is None and (jobs <= 1 or len(todo) <= 1)
    report = _Progress(progress, todo, 1 if in_process else _workers(jobs, client))
    warmup = Counter()  # {algorithm: seconds of warm-up}, summed over the processes
    report(done, total, "")

    def finished(index, rows, curves, cell_warnings, timing):
        nonlocal done, warnings_writer, n_warned
        cell = by_index[index]
        warmup.update(timing["warmup"])
        if cell_warnings:  # first, like the curves: they count once the cell is in the ledger
            if warnings_writer is None:
                warnings_writer = ResultsWriter(warnings_path, WARNING_COLUMNS)
            base = dict(zip(CELL_COLUMNS, cell.key(), strict=True))
            warnings_writer.append(
                [{**base, "category": c, "message": m, "count": n} for c, m, n in cell_warnings]
            )
            n_warned += 1
        if curves:
            curves_writer.append(curves)  # first: a cell's curves count once it is in the ledger
        writer.append(with_param_columns(rows, names))
        ledger.append([dict(zip(LEDGER_COLUMNS, (keys[cell.key()], *cell.key()), strict=True))])
        done += 1
        report.cell_done(cell, timing["seconds"])
        report(done, total, f"{cell.dataset} {labels.get(cell.index, cell.algorithm)}")

    def failed(cell, exc):
        warmup.update(getattr(exc, "warmup_seconds", {}))
        report.cell_done(cell, None)
        failures.append(
            (cell.index, dict(zip(FAILURE_COLUMNS, (*cell.key(), keys[cell.key()], str(exc)), strict=True)))
        )

    graph_k = _graph_k(vspec) if REUSE_GRAPHS and getattr(vspec.spec, "share_graphs", True) else {}
    payloads = [(cell, _cell_payload(vspec, cell, splits, graph_k)) for cell in todo]

    def fit_progress(index, step, steps, text=None):
        cell = by_index[index]
        report(
            done, total, text or f"fit {step}/{steps} {cell.dataset} {labels.get(cell.index, cell.algorithm)}"
        )

    with _lend_validated(vspec, in_process):
        for cell, outcome in _execute(payloads, jobs, client, fit_progress if progress else None):
            if isinstance(outcome, CellError):
                failed(cell, outcome)
            else:
                finished(*outcome)
    _record_warmup(out / "environment.json", warmup)

    failures = [row for _, row in sorted(failures, key=lambda f: f[0])]
    if failures:
        atomic_write_text(failures_path, rows_to_csv(failures, header=True, columns=FAILURE_COLUMNS))
    else:
        failures_path.unlink(missing_ok=True)
    notes = finish_outputs(
        out,
        order=order,
        metrics=metrics,
        names=names,
        rounds=rounds is not None,
        curves=curves_writer is not None,
        html_report=html_report,
    )
    if failures:
        raise CellError(
            f"{len(failures)} of {total} cells failed and were not saved (listed in {failures_path}; "
            f"a rerun retries them); first: {failures[0]['error']}"
        )
    return RunSummary(
        out, total, len(todo), total - len(todo), time.perf_counter() - start, n_warned, tuple(notes)
    )


def eta_seconds(finished, remaining, workers=1):
    """Estimated seconds until the cells ``remaining`` are done; None before a cell finished.

    ``finished``: ``(dataset, algorithm, seconds)`` of the cells this run finished,
    ``seconds`` being the cell's wall time in its process, warm-up excluded;
    ``remaining``: ``(dataset, algorithm)`` of the cells not finished (running or
    queued). Each remaining cell is expected to take the mean time of the finished cells
    of its dataset and algorithm; if there are none, of its algorithm; if none, of all
    finished cells. The sum is shared by the workers that can share it:
    min(workers, number of remaining cells)."""
    finished = list(finished)
    if not finished:
        return None
    remaining = list(remaining)
    groups = {}
    for dataset, algorithm, seconds in finished:
        for key in ((dataset, algorithm), algorithm, None):
            groups.setdefault(key, []).append(seconds)
    means = {key: sum(times) / len(times) for key, times in groups.items()}
    total = sum(
        means.get((dataset, algorithm), means.get(algorithm, means[None])) for dataset, algorithm in remaining
    )
    return total / max(1, min(workers, len(remaining)))


def _takes_eta(progress):
    """Whether a progress callback accepts the ``eta_seconds`` keyword (see :func:`run_spec`)."""
    try:
        parameters = inspect.signature(progress).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == "eta_seconds" or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)


class _Progress:
    """A run's ``progress`` callback (or None: silent), with the ETA of :func:`eta_seconds`
    passed as ``eta_seconds`` to a callback that takes it: the estimate made when the last
    cell finished, less the seconds since."""

    def __init__(self, progress, todo, workers):
        self.progress, self.workers = progress, workers
        self.takes_eta = progress is not None and _takes_eta(progress)
        self.remaining = Counter((c.dataset, c.algorithm) for c in todo)
        self.times = []
        self.estimate = None  # (seconds, time.perf_counter() when estimated)

    def cell_done(self, cell, seconds):
        """A cell left the run: finished in ``seconds``, or failed (None: no time)."""
        self.remaining[(cell.dataset, cell.algorithm)] -= 1
        if seconds is not None:
            self.times.append((cell.dataset, cell.algorithm, seconds))
        eta = eta_seconds(self.times, self.remaining.elements(), self.workers)
        self.estimate = None if eta is None else (eta, time.perf_counter())

    def __call__(self, done, total, text):
        if self.progress is None:
            return
        if not self.takes_eta:
            self.progress(done, total, text)
            return
        eta = None
        if self.estimate is not None:
            eta = max(0.0, self.estimate[0] - (time.perf_counter() - self.estimate[1]))
        self.progress(done, total, text, eta_seconds=eta)


def progress_labels(cells):
    """Per cell index, the short label the progress shows: the algorithm id and the
    parameters that vary among that algorithm's cells, written as the summary tables
    write configurations (seeds too: a cell has one), never every default."""
    values = {}
    for c in cells:
        for name, value in c.params.items():
            values.setdefault((c.algorithm, name), set()).add(canonical_json(value))
    labels = {}
    for c in cells:
        shown = [
            f"{name}={value if isinstance(value, str) else canonical_json(value)}"
            for name, value in c.params.items()
            if len(values[(c.algorithm, name)]) > 1
        ]
        labels[c.index] = f"{c.algorithm} {', '.join(shown)}".strip()
    return labels


def _workers(jobs, client):
    """Processes running cells at once: ``jobs`` in a pool; a Dask cluster's threads."""
    if client is None:
        return jobs
    try:
        return max(1, sum(client.nthreads().values()))
    except Exception:  # noqa: BLE001 - only the ETA depends on it
        return max(1, jobs)


# Seconds to wait for a Dask scheduler given with --scheduler.
DASK_CONNECT_TIMEOUT = 10


# At most one fit-progress report per cell this often (seconds): the display needs no more.
FIT_PROGRESS_INTERVAL = 0.5


class _Throttled:
    """``fit_progress(index, done, total)`` passed on at most every FIT_PROGRESS_INTERVAL
    seconds per cell (the first and the last report of a cell always); a report with a
    ``text`` (the warm-up's, see :func:`run_cell`) always, as ``(index, done, total, text)``."""

    def __init__(self, report):
        self.report, self.last = report, {}

    def __call__(self, index, done, total, text=None):
        if text is not None:
            self.report(index, done, total, text)
            return
        now = time.monotonic()
        if done >= total or now - self.last.get(index, -1e9) >= FIT_PROGRESS_INTERVAL:
            self.last[index] = now
            self.report(index, done, total)


def _execute(payloads, jobs, client, fit_progress=None):
    """Run the cells; yield ``(cell, outcome)`` as each finishes, outcome being
    ``run_cell``'s result or the CellError of a failed cell. Other errors propagate.
    ``client``: a Dask Client (executor "dask"), else None (this process or a pool).

    ``fit_progress(index, done, total)``, if given, receives the progress of long fits
    (throttled; from pool workers through a queue; none from Dask workers), and
    ``fit_progress(index, 0, 0, text)`` the warm-up's text (see :func:`run_cell`)."""
    if client is not None:
        yield from _execute_dask(payloads, client)
        return
    relay = _Throttled(fit_progress) if fit_progress is not None else None
    if jobs <= 1 or len(payloads) <= 1:
        for cell, payload in payloads:
            yield cell, _checked(run_cell, payload, relay)
        return
    ctx = get_context("spawn")  # fork is unsafe once numba's thread pool has started
    reports = ctx.SimpleQueue() if fit_progress is not None else None
    with _single_threaded_children():
        pool = ProcessPoolExecutor(
            max_workers=jobs, mp_context=ctx, initializer=_start_worker, initargs=(os.getpid(), reports)
        )
    relay = _queued_fit_progress if reports is not None else None
    try:
        futures = {pool.submit(_checked, run_cell, payload, relay): cell for cell, payload in payloads}
        pending = set(futures)
        while pending:
            finished, pending = wait(pending, timeout=FIT_PROGRESS_INTERVAL, return_when=FIRST_COMPLETED)
            while reports is not None and not reports.empty():
                fit_progress(*reports.get())
            for fut in finished:
                yield futures[fut], fut.result()
    except BaseException:
        # Interrupted or a fatal error: drop queued cells instead of waiting for them.
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()


# In a pool worker: the queue its fit progress goes to (set by _start_worker).
_WORKER_REPORTS = None


def _start_worker(parent_pid, reports):
    """Pool worker initializer: die with the run (:func:`_die_with_parent`) and send fit
    progress to ``reports`` (a queue the run reads), if any."""
    global _WORKER_REPORTS
    _die_with_parent(parent_pid)
    if reports is not None:
        _WORKER_REPORTS = _Throttled(lambda *report: reports.put(report))


def _queued_fit_progress(index, done, total, text=None):
    if _WORKER_REPORTS is not None:
        _WORKER_REPORTS(index, done, total, text)


def _die_with_parent(parent_pid):
    """In a pool worker: end this worker as soon as the run that started it ends,
    even when the run is killed with SIGKILL (a pool's workers otherwise wait for work
    forever, keeping multiprocessing's resource tracker alive with them).

    Linux: the kernel sends SIGKILL on the parent's death (prctl PR_SET_PDEATHSIG);
    elsewhere, and as a fallback, a daemon thread checks every second that the parent
    is still ours. A parent that died before this ran is noticed at once.
    """
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent_pid:
        os._exit(1)

    def watch():
        while os.getppid() == parent_pid:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="knnx-parent-watch", daemon=True).start()


@contextmanager
def _dask_client(jobs, scheduler):
    """A Dask distributed Client for ``--executor dask`` (see :func:`run_spec`): to the
    scheduler at ``scheduler``, else to a LocalCluster of ``jobs`` single-threaded worker
    processes on loopback. Made before the output folder is touched, so that a scheduler
    that cannot be reached is one line with nothing written."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise KnnxError("--executor dask needs dask and distributed: pip install 'knnx[dask]'") from None
    cluster = None
    try:
        if scheduler is None:
            with _single_threaded_children():  # the nannies spawn workers with this environment
                cluster = LocalCluster(
                    n_workers=max(1, jobs),
                    threads_per_worker=1,
                    processes=True,
                    host="127.0.0.1",
                    dashboard_address=None,
                    # knnx reports every failure itself (failed cells as values, a lost worker
                    # as the error of fut.result()); distributed's own warnings and errors on
                    # a loaded machine (unresponsive event loop, a heartbeat missed while the
                    # cluster closes, with its traceback) are not the user's to read
                    silence_logs=logging.CRITICAL,
                )
            client = Client(cluster)
        else:
            try:
                client = Client(scheduler, timeout=DASK_CONNECT_TIMEOUT)
            except (OSError, TimeoutError, ValueError) as exc:
                first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
                raise KnnxError(f"--scheduler {scheduler}: cannot connect ({first})") from None
        try:
            yield client
        finally:
            client.close()
    finally:
        if cluster is not None:
            cluster.close()


def _execute_dask(payloads, client):
    """Cells as tasks on a Dask distributed cluster (see :func:`run_spec`).

    A payload carries the dataset's spec entry and the split's row indices, never the
    data: each worker process loads a dataset once (``_load_cached``) and reuses it for
    every cell of that dataset it runs. Bundled datasets come with the package; CSV
    files must be readable by the workers at the same path. A failed cell comes back as
    its CellError (a value, not an exception, so the workers log nothing).
    """
    from distributed import as_completed as dask_completed

    # No progress relay: a Dask worker warms up (run_cell) without a word to the display;
    # its warm-up seconds come back with the cell's result all the same.

    run_id = os.urandom(4).hex()  # task keys unique across runs sharing a scheduler
    futures = {}
    try:
        for cell, payload in payloads:
            key = f"knnx-{run_id}-cell-{payload['index']}"
            futures[client.submit(_checked, run_cell, payload, pure=False, key=key)] = cell
        for fut in dask_completed(futures):
            yield futures[fut], fut.result()
    except BaseException:
        client.cancel(list(futures))  # interrupted or a fatal error: drop queued cells
        raise


def _checked(func, payload, *args):
    """Run a cell; return its result, or for any failure one CellError (returned, not
    raised, so that pool and Dask workers pass it back as a value) naming the cell.

    Data errors found while running (a training part whose scale the kernels refuse,
    a count too large for exact LpO) fail their cell like any other error: the run
    goes on and lists it in failures.csv. What validation can see is refused before
    the run instead (see :func:`knnx.spec.validate_spec`).
    """
    try:
        return func(payload, *args)
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - any failure of an algorithm is reported per cell
        warmup = getattr(exc, "warmup_seconds", {})
        if isinstance(exc, SystemExit):  # user code that calls sys.exit() fails its cell, not the run
            exc = RuntimeError(f"the estimator or loader called sys.exit({exc.code!r})")
        what = f"{payload['dataset']} {payload['algorithm']} {canonical_json(payload['params'])}"
        first = escape_control((str(exc).strip().splitlines() or [""])[0])
        error = CellError(
            f"cell {what} repeat {payload['repeat']} fold {payload['fold']} failed: {type(exc).__name__}: {first}"
        )
        error.warmup_seconds = warmup  # the warm-up before the failure (see run_cell)
        return error


def _clear_outputs(out):
    """Remove what an earlier run wrote in ``out`` (results, summaries, plots)."""
    from knnx.reporting.figures import figure_files

    names = [name for name in OUTPUT_FILES if name not in (".knnx.lock", "spec.yaml")]  # both rewritten
    for name in names:
        (out / name).unlink(missing_ok=True)
    for path in figure_files(out):
        path.unlink(missing_ok=True)


def _record_environment(path, n_todo):
    """environment.json: one entry per invocation (a resumed run adds one), newest last."""
    runs = []
    if path.exists():
        try:
            runs = json.loads(path.read_text(encoding="utf-8")).get("runs", [])
        except (ValueError, AttributeError, OSError):
            runs = []
        if not isinstance(runs, list):  # a hand-edited file: start the record again
            runs = []
    entry = {"started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "cells_to_run": n_todo, **environment_info()}
    atomic_write_text(path, json.dumps({"runs": [*runs, entry]}, indent=2) + "\n")


def _record_warmup(path, seconds):
    """Add ``"warmup_seconds": {algorithm: seconds}`` (rounded to ms) to the newest entry of
    environment.json, this run's (the run holds the folder's lock), rewritten atomically."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        runs = doc["runs"]
        runs[-1]["warmup_seconds"] = {name: round(s, 3) for name, s in sorted(seconds.items())}
    except (ValueError, KeyError, IndexError, TypeError, AttributeError, OSError):
        return  # no entry of this run to complete (edited meanwhile): the results stand
    atomic_write_text(path, json.dumps(doc, indent=2) + "\n")


# --- active learning (kind: active, see knnx.spec.ActiveSpec) -----------------------------


def _active_payload(vspec, cell):
    """An active cell: the whole loop of one (dataset, strategy, repeat)."""
    spec = vspec.spec
    entry = vspec.entries[cell.dataset_index]
    return {
        "kind": "active",
        "index": cell.index,
        "experiment": spec.name,
        "entry": entry,
        "loaders": _registered_loaders(entry),
        "import_dirs": vspec.import_dirs,
        "base_dir": str(vspec.base_dir),
        "dataset": cell.dataset,
        "seed": spec.seed,
        "algorithm": cell.algorithm,
        "params": cell.params,
        "protocol": vspec.protocol_json,
        "repeat": cell.repeat,
        "fold": cell.fold,
        "start": spec.start,
        "pool": spec.pool,
        "standardize": spec.standardize,
        "loop": {
            "strategy": spec.strategies[cell.algorithm_index],
            "rounds": spec.rounds,
            "m": spec.m,
            "p_select": spec.p_select,
            "p_tune": spec.p_tune,
            "k_max": spec.k_max,
            "k_fixed": spec.k_fixed,
        },
        "warm_up": False,  # the loop's kernels compile in its first round (no tiny problem)
        "graph_k": 0,  # every round has a new training set: nothing to share
    }


def _repeat_seed(seed, label, purpose, repeat):
    base = dataset_seedseq(seed, label, purpose)
    return np.random.SeedSequence(base.entropy, spawn_key=(*base.spawn_key, repeat))


def active_repeat_data(entry, label, seed, repeat, start, pool=None, standardize=False, base_dir="."):
    """``(X_start, y_start, X_pool, y_pool, loop_seed)`` of one repeat of an active spec.

    The data is loaded with the child seed (seed, label, SEED_DATA) spawned once more with
    key ``repeat`` (a synthetic entry: a fresh sample per repeat); a generator seeded with
    (seed, label, SEED_SPLITS, repeat) draws a permutation of the rows, whose first
    ``start`` rows are the start set and the next ``pool`` (all others if None) the pool,
    and then the loop's seed, ``integers(2**63)``. ``standardize``: features scaled with
    the mean and std of the start set and pool rows (no labels used). ``y`` are class codes."""
    ds = load_dataset(entry, seed=_repeat_seed(seed, label, SEED_DATA, repeat), base_dir=base_dir)
    rng = np.random.default_rng(_repeat_seed(seed, label, SEED_SPLITS, repeat))
    order = rng.permutation(ds.n_samples)
    first = order[:start]
    rest = order[start:] if pool is None else order[start : start + pool]
    X = ds.X
    if standardize:
        used = np.concatenate([first, rest])
        X = apply_standardizer(fit_standardizer(X[used]), X, f"'{label}'")
    return X[first], ds.y[first], X[rest], ds.y[rest], int(rng.integers(2**63))


def _active_rows(payload):
    """Run one active loop (:func:`knnx.lpo.active.active_learning`); its rows: per round
    (``round`` 0..rounds), ``error`` on the remaining pool then ``chosen_k``, with
    ``n_train`` the labelled points, ``n_test`` the pool points left, ``fit_seconds``
    the round's wall time, ``fold`` 0."""
    add_import_dirs(payload.get("import_dirs", ()))
    for name, loader in payload.get("loaders", {}).items():
        REGISTERED.setdefault(name, loader)
    X0, y0, Xp, yp, loop_seed = active_repeat_data(
        payload["entry"],
        payload["dataset"],
        payload["seed"],
        payload["repeat"],
        payload["start"],
        payload["pool"],
        payload["standardize"],
        payload["base_dir"],
    )
    records = active_learning(X0, y0, Xp, yp, seed=loop_seed, **payload["loop"])
    rows = []
    for rec in records:
        base = {
            **_base_row(payload, rec.n_train, rec.n_pool, rec.seconds, 0.0),
            ROUND: rec.round,
        }
        rows.append({**base, "metric": "error", "value": rec.error})
        rows.append({**base, "metric": "chosen_k", "value": float(rec.k)})
    return rows


def _active_cell_keys(vspec):
    """cell_keys of an active spec: the hash covers the knnx version and source, the
    numeric libraries, the experiment name and seed, the dataset entry and a checksum of
    its arrays, the start/pool protocol, the loop's settings and strategy, and the
    repeat (not the number of repeats: a rerun with more keeps the earlier ones)."""
    spec = vspec.spec
    common = {
        "knnx": __version__,
        "code": code_checksum(),
        "libraries": library_versions(),
        "experiment": spec.name,
        "seed": spec.seed,
        "protocol": vspec.protocol_json,
        "import_dirs": list(vspec.import_dirs),
        "p_select": spec.p_select,  # passed to every loop (the passive one ignores it)
    }
    data = [_array_checksum(ds.X, ds.y) for ds in vspec.datasets]
    keys = {}
    for c in vspec.cells:
        material = {
            **common,
            "entry": vspec.entries[c.dataset_index],
            "data": data[c.dataset_index],
            "strategy": spec.strategies[c.algorithm_index],
            "cell": [c.dataset, c.algorithm, c.params_json, c.repeat, c.fold],
        }
        keys[c.key()] = hashlib.sha256(canonical_json(material).encode()).hexdigest()
    return keys
