"""Benchmark: exact kNN graphs under the other metrics, knnx against scikit-learn, distython and gower.

What it measures
----------------
1. Numeric metrics. The leave-one-out kNN graph (each point excluded from its own
   list), k = 10, of ``n`` standard-normal points (``hamming``: integer codes 0..3)
   in ``d`` dimensions, for every metric that both knnx and scikit-learn support:
   euclidean, manhattan, chebyshev, minkowski (p = 3), cosine, seuclidean,
   mahalanobis and hamming. Implementations:

   * ``knnx``: ``knnx.kneighbors(X, k, metric=...)`` (its statistics fitted on X);
   * ``brute``: ``NearestNeighbors(n_neighbors=k, algorithm="brute", metric=...)
     .fit(X).kneighbors()`` with the default ``n_jobs`` (the goal is stated against
     this one), and ``brute -1``: the same with ``n_jobs=-1``. scikit-learn >= 1.1
     runs euclidean, manhattan, chebyshev, minkowski and seuclidean through its
     OpenMP ``ArgKmin`` reduction (every core whatever ``n_jobs``); cosine,
     mahalanobis and hamming through ``pairwise_distances_chunked``, parallel only
     with ``n_jobs``;
   * ``ball_tree``: the same with ``algorithm="ball_tree"`` (default ``n_jobs``)
     where scikit-learn allows the metric (not cosine).

   seuclidean's ``V`` and mahalanobis's ``VI`` are given to scikit-learn as knnx
   fits them (``metric_params``): variances with ddof 1, and the inverse of the
   ddof-1 covariance, symmetrised. Per metric and d the script checks that knnx's
   neighbour indices agree with scikit-learn brute's: it counts the rows that
   differ and, for those, whether they differ only within ties: the two lists'
   distances, recomputed in float64 with NumPy, equal once sorted (to 1e-9
   relatively, scikit-learn's own distances being rounded differently).

2. Mixed data. ``--mixed-n`` rows (default 10,000) of 8 standard-normal and 8
   nominal attributes (5 categories), 5% of the values missing (NaN), 3 classes;
   knnx's ``kneighbors(X, 10, metric="heom" | "hvdm" | "gower", nominal=..., y=...)``
   against

   * ``distython`` (HEOM, HVDM callables through ``NearestNeighbors(metric=callable,
     algorithm="brute")``). The callable route costs a Python call per pair, so it
     is timed on the first ``--callable-queries`` queries (default 20) against all
     rows and its time extrapolated linearly to every row (fit time + query time x
     n / queries), as the output says. scikit-learn refuses NaN in X, so missing
     values are passed as a finite sentinel that distython is told is missing
     (``nan_equivalents``; its default also counts 0 as missing, which would turn
     category 0 into a missing value). distython's HVDM is a different formula
     (numeric |x - y| / (4 variance), nominal (sum_c |P(c|x) - P(c|y)|)^2) from
     knnx's (Wilson & Martinez: 4 standard deviations, sum_c (P(c|x) - P(c|y))^2),
     so only HEOM's neighbours are compared;
   * the ``gower`` package's ``gower_matrix`` (the full n x n matrix, float32) and
     ``argsort`` of each row, own index excluded. It gives a pair with a missing
     numeric value the distance NaN (knnx leaves the attribute out of both sums),
     so its neighbours are not compared.

   Memory per route, two figures: ``tracemalloc`` peak (Python and NumPy
   allocations during the call; numba kernels' own workspace is not traced), and
   ``peak RSS``, the process's resident-memory high-water mark during the call
   above what it held before (``/proc/self/clear_refs`` reset, ``VmHWM -
   VmRSS``), measured in a separate untimed call. Goal: knnx at least 100x faster
   than the callable route.

Each library runs in a spawned process of its own (knnx; scikit-learn and the
mixed-data peers), warmed up first (numba JIT, thread pools); the timed calls are
interleaved repeat by repeat, each after ``--pause`` seconds of rest (idle OpenMP
threads of the previous call would otherwise spin against the next). Tables give
medians of ``--repeats`` (default 3) calls and ``ratio`` = peer / knnx (above 1:
knnx is faster). A peer whose estimated call (from a probe on ``n / 50`` queries,
at least 200) exceeds ``--peer-budget / 3`` seconds is timed once, and one over
``--peer-budget`` (default 300 s) not at all at full size: its time is the probe's
(median of 3) extrapolated linearly to n queries plus its fit, marked ``~``, and its
neighbours are checked on the probe's queries.

How to run
----------
::

    make bench
    python benchmarks/metrics.py [--quick] [--n 20000] [--dims 16,64] [--k 10]
        [--metrics euclidean,...] [--repeats 3] [--peer-budget 300] [--pause 1]
        [--mixed-n 10000] [--callable-queries 20] [--skip-numeric] [--skip-mixed]
        [--seed 0] [--csv PATH]

``--quick``: n = 3000, mixed-n = 2000, 5 callable queries, peer budget 60 s.
Timings on shared or small machines are noisy: read them as ratios.
"""

import argparse
import csv
import gc
import importlib.metadata
import multiprocessing
import os
import platform
import statistics
import time

import numpy as np

SKLEARN_GOAL = 2.0  # knnx at least this many times faster than scikit-learn brute (default n_jobs)
CALLABLE_GOAL = 100.0  # knnx at least this many times faster than the distython callable route
PAUSE_S = 1.0
TIE_RTOL = 1e-9
NUMERIC_METRICS = (
    "euclidean",
    "manhattan",
    "chebyshev",
    "minkowski",
    "cosine",
    "seuclidean",
    "mahalanobis",
    "hamming",
)
NO_BALL_TREE = ("cosine",)
MINKOWSKI_P = 3
MIXED_NUMERIC, MIXED_NOMINAL, MIXED_CATEGORIES, MIXED_MISSING, MIXED_CLASSES = 8, 8, 5, 0.05, 3
MISSING_SENTINEL = -1.0e9
MEMORY_QUERIES = 2  # queries of the callable routes' (untimed) memory measurement  # distython's stand-in for NaN (scikit-learn refuses NaN)
MIB = 1024.0 * 1024.0


# ----------------------------------------------------------------------------- data


def numeric_data(metric, n, d, seed):
    rng = np.random.default_rng([seed, d, NUMERIC_METRICS.index(metric)])
    if metric == "hamming":
        return rng.integers(0, 4, (n, d)).astype(np.float64)
    return rng.standard_normal((n, d))


def fitted_params(metric, X):
    """scikit-learn's metric arguments, the statistics fitted as knnx fits them."""
    if metric == "minkowski":
        return {"p": MINKOWSKI_P}
    if metric == "seuclidean":
        V = np.var(X, axis=0, ddof=1)
        return {"metric_params": {"V": np.where(V > 0, V, 1.0)}}
    if metric == "mahalanobis":
        VI = np.linalg.inv(np.atleast_2d(np.cov(X, rowvar=False, ddof=1)))
        return {"metric_params": {"VI": (VI + VI.T) / 2.0}}
    return {}


def mixed_data(n, seed):
    """(X, y, nominal): 8 numeric then 8 nominal columns, 5% NaN, 3 classes."""
    rng = np.random.default_rng([seed, 1])
    num = rng.standard_normal((n, MIXED_NUMERIC))
    cat = rng.integers(0, MIXED_CATEGORIES, (n, MIXED_NOMINAL)).astype(np.float64)
    y = (cat[:, 0].astype(np.int64) + (num[:, 0] > 0)) % MIXED_CLASSES
    noise = rng.random(n) < 0.2
    y[noise] = rng.integers(0, MIXED_CLASSES, noise.sum())
    X = np.hstack([num, cat])
    X[rng.random(X.shape) < MIXED_MISSING] = np.nan
    nominal = list(range(MIXED_NUMERIC, MIXED_NUMERIC + MIXED_NOMINAL))
    return X, y.astype(np.intp), nominal


# ----------------------------------------------------------------------------- tasks (worker side)
# Each task imports its library itself: it runs in the worker process of that library.


def task_knnx(X, k, metric, params=None, nominal=None, y=None):
    from knnx import kneighbors

    return kneighbors(X, k, metric=metric, metric_params=params, nominal=nominal, y=y)[1]


def task_sklearn(X, k, metric, algorithm="brute", n_jobs=None, sk=None, queries=None):
    """The LOO graph (``queries`` None), or the lists of the first ``queries`` rows
    (searched with k + 1 neighbours, the row's own index dropped)."""
    from sklearn.neighbors import NearestNeighbors

    nn = NearestNeighbors(n_neighbors=k, algorithm=algorithm, metric=metric, n_jobs=n_jobs, **(sk or {}))
    t0 = time.perf_counter()
    nn.fit(X)
    fit_s = time.perf_counter() - t0
    if queries is None:
        return nn.kneighbors(return_distance=False), fit_s
    ind = nn.kneighbors(X[:queries], n_neighbors=k + 1, return_distance=False)
    return drop_own(ind, k), fit_s


def drop_own(ind, k):
    """Lists of k + 1 for the rows 0..m-1 of the references, each row's own index
    removed wherever it is (a duplicate may precede it), else its last entry."""
    own = np.arange(ind.shape[0])[:, None]
    keep = ind != own
    keep[keep.all(axis=1), -1] = False
    return ind[keep].reshape(ind.shape[0], k)


def task_distython(X, k, metric, y, nominal, queries):
    """distython's HEOM / HVDM through scikit-learn brute force, on the first
    ``queries`` rows: (lists, fit seconds, query seconds)."""
    import distython
    from sklearn.neighbors import NearestNeighbors

    t0 = time.perf_counter()
    Xs = np.where(np.isnan(X), MISSING_SENTINEL, X)
    if metric == "heom":
        obj = distython.HEOM(X, nominal, nan_equivalents=[MISSING_SENTINEL])
        func = obj.heom
    else:
        # HVDM reads the class from a column of the array it is built on; the class
        # column is then dropped from the attributes it measures (col_ix).
        Xn = X.copy()
        Xn[:, nominal] = np.where(np.isnan(Xn[:, nominal]), MISSING_SENTINEL, Xn[:, nominal])
        obj = distython.HVDM(
            np.hstack([Xn, y[:, None].astype(np.float64)]),
            [X.shape[1]],
            nominal,
            nan_equivalents=[MISSING_SENTINEL],
        )
        obj.col_ix = list(range(X.shape[1]))
        func = obj.hvdm
    nn = NearestNeighbors(n_neighbors=k + 1, algorithm="brute", metric=func).fit(Xs)
    fit_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    ind = nn.kneighbors(Xs[:queries], return_distance=False)
    return drop_own(ind, k), fit_s, time.perf_counter() - t0


def task_gower(X, k, nominal):
    """gower.gower_matrix of all rows, each row's own entry excluded, argsort."""
    import gower

    cat = np.zeros(X.shape[1], dtype=bool)
    cat[nominal] = True
    G = gower.gower_matrix(X, cat_features=cat)
    np.fill_diagonal(G, np.inf)
    return np.argsort(G, axis=1, kind="stable")[:, :k]


TASKS = {"knnx": task_knnx, "sklearn": task_sklearn, "distython": task_distython, "gower": task_gower}


# ----------------------------------------------------------------------------- worker processes


def _status_kib(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return None


def _reset_hwm():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _malloc_trim():
    import ctypes
    import ctypes.util

    try:
        ctypes.CDLL(ctypes.util.find_library("c")).malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _serve(conn):
    """Worker loop. ("data", dict): keep arrays; ("run", task, kwargs): run once,
    answer its seconds; ("memory", task, kwargs): run once untimed, answer
    (tracemalloc peak bytes, peak RSS bytes above the start or None); ("result",):
    answer the last run's result; None: stop."""
    data, result = {}, None
    while (msg := conn.recv()) is not None:
        if msg[0] == "data":
            data = msg[1]
            conn.send(None)
        elif msg[0] == "run":
            kwargs = {**data, **msg[2]}
            t0 = time.perf_counter()
            result = TASKS[msg[1]](**kwargs)
            conn.send(time.perf_counter() - t0)
        elif msg[0] == "memory":
            import tracemalloc

            kwargs = {**data, **msg[2]}
            result = None
            gc.collect()
            _malloc_trim()
            rss_before = _status_kib("VmRSS")
            reset = _reset_hwm()
            TASKS[msg[1]](**kwargs)
            rss_peak = (_status_kib("VmHWM") - rss_before) * 1024 if reset else None
            gc.collect()
            tracemalloc.start()
            TASKS[msg[1]](**kwargs)
            traced = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            conn.send((traced, rss_peak))
        else:
            conn.send(result)


class Worker:
    """Tasks in a spawned process of its own, driven over a pipe."""

    def __init__(self):
        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe()
        # Not a daemon: joblib refuses parallel loops in daemonic processes (n_jobs=-1).
        self.proc = ctx.Process(target=_serve, args=(child,), daemon=False)
        self.proc.start()

    def data(self, **arrays):
        self.conn.send(("data", arrays))
        self.conn.recv()

    def run(self, task, pause=0.0, **kwargs):
        time.sleep(pause)
        self.conn.send(("run", task, kwargs))
        return self.conn.recv()

    def memory(self, task, **kwargs):
        self.conn.send(("memory", task, kwargs))
        return self.conn.recv()

    def result(self):
        self.conn.send(("result",))
        return self.conn.recv()

    def close(self):
        self.conn.send(None)
        self.proc.join()


# ----------------------------------------------------------------------------- checks


def pair_distances(metric, X, rows, ind, sk):
    """float64 distances from X[rows[i]] to X[ind[i, j]] (NumPy, the metric's definition)."""
    A = X[rows][:, None, :]
    B = X[ind]
    diff = A - B
    if metric == "euclidean":
        return np.sqrt((diff**2).sum(-1))
    if metric == "manhattan":
        return np.abs(diff).sum(-1)
    if metric == "chebyshev":
        return np.abs(diff).max(-1)
    if metric == "minkowski":
        return (np.abs(diff) ** MINKOWSKI_P).sum(-1) ** (1.0 / MINKOWSKI_P)
    if metric == "cosine":
        na = np.linalg.norm(A, axis=-1)
        nb = np.linalg.norm(B, axis=-1)
        return 1.0 - (A * B).sum(-1) / (na * nb)
    if metric == "seuclidean":
        return np.sqrt((diff**2 / sk["metric_params"]["V"]).sum(-1))
    if metric == "mahalanobis":
        return np.sqrt(np.einsum("rkd,de,rke->rk", diff, sk["metric_params"]["VI"], diff))
    if metric == "hamming":
        return (diff != 0).mean(-1)
    if metric == "heom":
        return heom_distances(X, rows, ind, sk)
    raise ValueError(metric)


def heom_distances(X, rows, ind, nominal):
    """HEOM (squared, as distython returns it) with ranges over all rows."""
    rng = np.nanmax(X, axis=0) - np.nanmin(X, axis=0)
    A = X[rows][:, None, :]
    B = X[ind]
    is_nom = np.zeros(X.shape[1], dtype=bool)
    is_nom[nominal] = True
    term = np.where(is_nom, (A != B).astype(np.float64), np.abs(A - B) / rng)
    term = np.where(np.isnan(A) | np.isnan(B), 1.0, term)
    return (term**2).sum(-1)


def agreement(metric, X, ind_knnx, ind_peer, rows, sk):
    """(rows differing, of them differing only within ties), over ``rows``."""
    a = ind_knnx[rows]
    b = ind_peer[: len(rows)]
    differ = np.flatnonzero((a != b).any(axis=1))
    if differ.size == 0:
        return 0, 0
    da = np.sort(pair_distances(metric, X, rows[differ], a[differ], sk), axis=1)
    db = np.sort(pair_distances(metric, X, rows[differ], b[differ], sk), axis=1)
    ties = np.isclose(da, db, rtol=TIE_RTOL, atol=1e-12).all(axis=1)
    return int(differ.size), int(ties.sum())


def agreement_phrase(counts, n_rows):
    differ, ties = counts
    if differ == 0:
        return f"all {n_rows} rows equal"
    other = differ - ties
    text = f"{differ}/{n_rows} rows differ, {ties} only within ties"
    return text + (f", {other} NOT" if other else "")


# ----------------------------------------------------------------------------- numeric part


def peer_time(worker, args, n, pause, **kwargs):
    """(median seconds, how, lists, checked rows) of one scikit-learn configuration:
    a probe on the first queries estimates the full call; see the module doc."""
    m = min(n, max(200, n // 50))
    worker.run("sklearn", pause=pause, queries=m, **kwargs)
    ind_probe, fit_s = worker.result()
    probe = worker.run("sklearn", pause=pause, queries=m, **kwargs)
    _, fit_s = worker.result()
    estimate = fit_s + (probe - fit_s) * n / m
    if estimate > args.peer_budget:
        probes = [probe]
        for _ in range(2):
            probes.append(worker.run("sklearn", pause=pause, queries=m, **kwargs))
        ind_probe, fit_s = worker.result()
        q = statistics.median(probes)
        return fit_s + (q - fit_s) * n / m, f"~ from {m} queries", ind_probe, np.arange(m)
    repeats = args.repeats if estimate * args.repeats <= args.peer_budget else 1
    times = [worker.run("sklearn", pause=pause, **kwargs) for _ in range(repeats)]
    ind, _ = worker.result()
    return statistics.median(times), f"{repeats}x", ind, np.arange(n)


def numeric_cell(knnx_w, sk_w, metric, n, d, args):
    X = numeric_data(metric, n, d, args.seed)
    sk = fitted_params(metric, X)
    params = {"p": MINKOWSKI_P} if metric == "minkowski" else None
    Xw = X[: min(n, 9000)]  # warm-up: every knnx path (screened and seeded) compiles at 9000
    knnx_w.data(X=Xw, k=args.k)
    knnx_w.run("knnx", metric=metric, params=params)
    knnx_w.data(X=X, k=args.k)
    sk_w.data(X=X[:500], k=args.k)
    sk_w.run("sklearn", metric=metric, sk=fitted_params(metric, X[:500]))
    sk_w.data(X=X, k=args.k)
    times = [knnx_w.run("knnx", pause=args.pause, metric=metric, params=params) for _ in range(args.repeats)]
    ind_knnx = knnx_w.result()
    row = {"metric": metric, "d": d, "n": n, "k": args.k, "knnx_s": statistics.median(times)}
    configs = [("brute", "brute", None), ("brute_jobs", "brute", -1)]
    if metric not in NO_BALL_TREE:
        configs.append(("ball_tree", "ball_tree", None))
    for name, algorithm, n_jobs in configs:
        sec, how, ind, rows = peer_time(
            sk_w, args, n, args.pause, metric=metric, algorithm=algorithm, n_jobs=n_jobs, sk=sk
        )
        row[f"{name}_s"] = sec
        row[f"{name}_how"] = how
        row[f"{name}_ratio"] = sec / row["knnx_s"]
        if name == "brute":
            row["agree"] = agreement_phrase(agreement(metric, X, ind_knnx, ind, rows, sk), len(rows))
    for name in ("brute_jobs", "ball_tree"):
        row.setdefault(f"{name}_s", float("nan"))
        row.setdefault(f"{name}_how", "n/a")
        row.setdefault(f"{name}_ratio", float("nan"))
    return row


def fmt_s(sec, how):
    if not np.isfinite(sec):
        return "-"
    return ("~" if how.startswith("~") else "") + f"{sec:.2f}"


def print_table(header, lines, left=(0, 1)):
    """Columns in ``left`` left-aligned, the others right-aligned."""
    widths = [max(len(str(x)) for x in col) for col in zip(header, *lines, strict=True)]
    fmt = "  ".join(f"{{:<{w}}}" if i in left else f"{{:>{w}}}" for i, w in enumerate(widths))
    print(fmt.format(*header).rstrip())
    print("  ".join("-" * w for w in widths))
    for line in lines:
        print(fmt.format(*line).rstrip())


def print_numeric(rows):
    header = (
        "metric",
        "d",
        "knnx s",
        "brute s",
        "ratio",
        "brute -1 s",
        "ratio",
        "ball_tree s",
        "ratio",
        "repeats b/b-1/bt",
    )
    lines = []
    for r in rows:
        lines.append(
            (
                r["metric"], str(r["d"]), f"{r['knnx_s']:.3f}",
                fmt_s(r["brute_s"], r["brute_how"]), f"{r['brute_ratio']:.1f}",
                fmt_s(r["brute_jobs_s"], r["brute_jobs_how"]), f"{r['brute_jobs_ratio']:.1f}",
                fmt_s(r["ball_tree_s"], r["ball_tree_how"]),
                "-" if not np.isfinite(r["ball_tree_ratio"]) else f"{r['ball_tree_ratio']:.1f}",
                f"{r['brute_how']} / {r['brute_jobs_how']} / {r['ball_tree_how']}",
            )
        )  # fmt: skip
    print_table(header, lines, left=(0, 9))
    print()
    print("knnx vs scikit-learn brute (default n_jobs): neighbour indices")
    for r in rows:
        print(f"  {r['metric']:<12} d={r['d']:<3} {r['agree']}")
    print()
    below = [r for r in rows if not r["brute_ratio"] >= SKLEARN_GOAL]
    for r in rows:
        met = "met" if r["brute_ratio"] >= SKLEARN_GOAL else "NOT met"
        print(
            f"[{r['metric']} d={r['d']}] knnx vs sklearn brute: {r['brute_ratio']:.1f}x (goal >= {SKLEARN_GOAL:g}x) {met}"
        )
    print(
        f"Goal knnx >= {SKLEARN_GOAL:g}x faster than scikit-learn brute on every metric: "
        + ("met" if not below else f"NOT met ({len(below)} of {len(rows)} cells below)")
    )


# ----------------------------------------------------------------------------- mixed part


def mixed_part(knnx_w, peer_w, args):
    n, k, q = args.mixed_n, args.k, min(args.callable_queries, args.mixed_n)
    X, y, nominal = mixed_data(n, args.seed)
    for w in (knnx_w, peer_w):
        w.data(X=X, k=k)
    knnx_w.data(X=X[:500], k=k)
    for metric in ("heom", "hvdm", "gower"):  # warm-up (numba JIT)
        knnx_w.run("knnx", metric=metric, nominal=nominal, y=y[:500])
    knnx_w.data(X=X, k=k)
    peer_w.data(X=X[:50], k=k)
    peer_w.run("distython", metric="heom", y=y[:50], nominal=nominal, queries=2)
    peer_w.data(X=X, k=k)
    rows = []
    for metric in ("heom", "hvdm", "gower"):
        kw = {"metric": metric, "nominal": nominal, "y": y}
        times = [knnx_w.run("knnx", pause=args.pause, **kw) for _ in range(args.repeats)]
        ind_knnx = knnx_w.result()
        t_knnx = statistics.median(times)
        mem = knnx_w.memory("knnx", **kw)
        rows.append({"metric": metric, "route": "knnx", "seconds": t_knnx, "how": f"{args.repeats}x",
                     "ratio": 1.0, "traced": mem[0], "rss": mem[1], "check": ""})  # fmt: skip
        if metric in ("heom", "hvdm"):
            peer_w.run("distython", pause=args.pause, metric=metric, y=y, nominal=nominal, queries=q)
            ind, fit_s, query_s = peer_w.result()
            sec = fit_s + query_s * n / q
            mem = peer_w.memory(
                "distython", metric=metric, y=y, nominal=nominal, queries=min(q, MEMORY_QUERIES)
            )
            if metric == "heom":
                check = agreement_phrase(agreement("heom", X, ind_knnx, ind, np.arange(q), nominal), q)
            else:
                check = "not compared (distython's HVDM is another formula)"
            rows.append({"metric": metric, "route": "distython callable", "seconds": sec,
                         "how": f"~ {q} of {n} queries", "ratio": sec / t_knnx, "traced": mem[0],
                         "rss": mem[1], "check": check})  # fmt: skip
        else:
            times = [peer_w.run("gower", pause=args.pause, nominal=nominal) for _ in range(args.peer_repeats)]
            mem = peer_w.memory("gower", nominal=nominal)
            sec = statistics.median(times)
            rows.append({"metric": metric, "route": "gower_matrix+argsort", "seconds": sec,
                         "how": f"{args.peer_repeats}x", "ratio": sec / t_knnx, "traced": mem[0], "rss": mem[1],
                         "check": "not compared (gower: NaN distance for a missing numeric value, float32)"})  # fmt: skip
    return rows


def print_mixed(rows, args):
    header = (
        "metric",
        "route",
        "seconds",
        "how",
        "ratio",
        "traced MiB",
        "peak RSS MiB",
        "neighbours vs knnx",
    )
    lines = [
        (r["metric"], r["route"], f"{r['seconds']:.3f}", r["how"], f"{r['ratio']:.0f}", f"{r['traced'] / MIB:.1f}",
         "-" if r["rss"] is None else f"{r['rss'] / MIB:.1f}", r["check"])
        for r in rows
    ]  # fmt: skip
    print_table(header, lines, left=(0, 1, 3, 7))
    q = min(args.callable_queries, args.mixed_n)
    print(
        f"\ndistython callable routes: timed on the first {q} queries against all {args.mixed_n} rows "
        f"(fit once), extrapolated linearly to {args.mixed_n} queries; their memory measured on "
        f"{min(q, MEMORY_QUERIES)} queries (scikit-learn's chunk of distances and distython's tables; "
        "a Python call per pair allocates nothing that lasts)."
    )
    print(
        "traced MiB: tracemalloc peak during the call (Python and NumPy allocations; knnx's numba kernels' "
        "workspace is not traced); peak RSS MiB: VmHWM - VmRSS around the call, high-water mark reset."
    )
    for r in rows:
        if r["route"].startswith("distython"):
            met = "met" if r["ratio"] >= CALLABLE_GOAL else "NOT met"
            print(
                f"[{r['metric']}] knnx vs distython callable: {r['ratio']:.0f}x (goal >= {CALLABLE_GOAL:g}x) {met}"
            )


# ----------------------------------------------------------------------------- main


def print_environment():
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else "?"
    model = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            model = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    print(f"CPU: {model}; {os.cpu_count()} logical cores ({usable} usable); load {os.getloadavg()[0]:.2f}")
    versions = [f"python {platform.python_version()}"]
    for dist in ("numpy", "numba", "scikit-learn", "distython", "gower"):
        try:
            versions.append(f"{dist} {importlib.metadata.version(dist)}")
        except importlib.metadata.PackageNotFoundError:
            versions.append(f"{dist} not installed")
    print("Versions: " + ", ".join(versions))


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument(
        "--quick", action="store_true", help="small sizes (n 3000, mixed-n 2000, 5 callable queries)"
    )
    p.add_argument("--n", type=int, default=20000)
    p.add_argument("--dims", default="16,64")
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--metrics", default=",".join(NUMERIC_METRICS))
    p.add_argument("--repeats", type=int, default=3, help="timed calls per implementation (median)")
    p.add_argument("--peer-repeats", type=int, default=3, help="timed calls of the gower route")
    p.add_argument("--peer-budget", type=float, default=300.0, help="seconds; see the module doc")
    p.add_argument("--pause", type=float, default=PAUSE_S)
    p.add_argument("--mixed-n", type=int, default=10000)
    p.add_argument("--callable-queries", type=int, default=20)
    p.add_argument("--skip-numeric", action="store_true")
    p.add_argument("--skip-mixed", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--csv", metavar="PATH", help="also write the rows as CSV (mixed data: PATH-mixed.csv)")
    args = p.parse_args(argv)
    if args.quick:
        args.n, args.mixed_n, args.callable_queries, args.peer_budget = 3000, 2000, 5, 60.0
    args.dims = [int(x) for x in args.dims.split(",") if x.strip()]
    args.metrics = [m for m in args.metrics.split(",") if m]
    unknown = sorted(set(args.metrics) - set(NUMERIC_METRICS))
    if unknown:
        p.error(f"unknown metric {unknown[0]!r}; choose from {', '.join(NUMERIC_METRICS)}")
    return args


def main(argv=None):
    args = parse_args(argv)
    print_environment()
    knnx_w, peer_w = Worker(), Worker()
    numeric, mixed = [], []
    try:
        if not args.skip_numeric:
            print(
                f"\nLeave-one-out kNN graph, k={args.k}, n={args.n}, standard-normal data (hamming: integers "
                f"0..3), seed={args.seed}; medians (seconds), ratio = peer / knnx\n"
            )
            for d in args.dims:
                for metric in args.metrics:
                    numeric.append(numeric_cell(knnx_w, peer_w, metric, args.n, d, args))
                    r = numeric[-1]
                    print(
                        f"  measured {metric} d={d}: knnx {r['knnx_s']:.3f} s, brute {r['brute_s']:.2f} s",
                        flush=True,
                    )
            print()
            print_numeric(numeric)
        if not args.skip_mixed:
            print(
                f"\nMixed data: kNN graph (leave-one-out), k={args.k}, {args.mixed_n} rows x ({MIXED_NUMERIC} numeric "
                f"+ {MIXED_NOMINAL} nominal, {MIXED_CATEGORIES} categories), {MIXED_MISSING:.0%} missing, "
                f"{MIXED_CLASSES} classes\n"
            )
            mixed = mixed_part(knnx_w, peer_w, args)
            print_mixed(mixed, args)
    finally:
        knnx_w.close()
        peer_w.close()
    if args.csv:
        root, ext = os.path.splitext(args.csv)
        for rows, path in ((numeric, args.csv), (mixed, f"{root}-mixed{ext or '.csv'}")):
            if rows:
                with open(path, "w", newline="") as f:
                    writer = csv.DictWriter(f, fieldnames=list(rows[0]))
                    writer.writeheader()
                    writer.writerows(rows)
                print(f"Rows written to {path}")


if __name__ == "__main__":
    main()
