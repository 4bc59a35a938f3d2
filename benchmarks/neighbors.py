"""Benchmark: exact leave-one-out kNN graph, knnx against scikit-learn and faiss.

What it measures
----------------
Wall-clock seconds to build the leave-one-out k-nearest-neighbour graph (each
point excluded from its own list) of ``n`` standard-normal points in ``d``
dimensions, for three exact implementations timed in the same process:

* ``knnx``    -- ``knnx.kneighbors(X, k)`` on float64 data;
* ``sklearn`` -- ``NearestNeighbors(algorithm="brute", n_jobs=-1).fit(X).kneighbors()``
  on float64 data;
* ``faiss``   -- ``faiss.IndexFlatL2`` on **float32** data, searching ``k + 1``
  neighbours and dropping each point's own entry.

Each implementation runs in a process of its own (loading faiss slowed
scikit-learn down 1.9x in a shared process), is warmed up once on a small problem
(numba JIT, BLAS and OpenMP thread pools), then timed ``--repeats`` times with
:func:`time.perf_counter` inside its process, the implementations interleaved
repeat by repeat, with ``--pause`` seconds of rest before each call (idle
OpenMP/BLAS threads of the previous call spin for a while and would slow the next
implementation down). The table reports the median and the minimum, and the
ratio ``peer_median / knnx_median`` (above 1 means knnx is faster). Per shape it
also checks that knnx's neighbour indices agree position by position with
scikit-learn's on at least 99.9% of entries (exact ties and float rounding may
reorder a few), and states the two performance goals: at least 2x faster than
scikit-learn brute force, and within 1.5x of faiss ``IndexFlatL2``.

How to run
----------
From the repository root, with the ``bench`` extra (faiss-cpu) installed::

    make bench
    python benchmarks/neighbors.py [--n 20000] [--dims 16,256] [--k 50]
                                   [--repeats 7] [--seed 0] [--pause 1]
                                   [--csv PATH]

If faiss cannot be imported it is skipped with a note. Timings on shared or
small machines are noisy: read them as ratios, not absolute figures.
"""

import argparse
import csv
import importlib.metadata
import importlib.util
import multiprocessing
import os
import platform
import statistics
import time

import numpy as np

AGREEMENT_GOAL = 0.999
SKLEARN_GOAL = 2.0  # knnx at least this many times faster than sklearn brute
FAISS_GOAL = 1.5  # knnx at most this many times slower than faiss IndexFlatL2
# Seconds of rest before each timed call: OpenMP and BLAS threads keep spinning for a
# while after a call (libgomp, OpenBLAS), which would bill one implementation's idle
# threads to the next one.
PAUSE_S = 1.0
WARMUP_N = 9000  # large enough for every knnx path (screened and seeded)
HAVE_FAISS = importlib.util.find_spec("faiss") is not None


# Each run_* function imports its library itself: it runs in a process of its own
# (see Worker), because loading one library can slow another down. Importing faiss
# (its own OpenBLAS and libgomp) made scikit-learn's brute force 1.9x slower in the
# same process here (0.94 s -> 1.79 s at n=20000, d=16).


def run_knnx(X, k):
    from knnx import kneighbors

    return kneighbors(X, k)[1]


def run_sklearn(X, k):
    from sklearn.neighbors import NearestNeighbors

    nn = NearestNeighbors(n_neighbors=k, algorithm="brute", n_jobs=-1).fit(X)
    return nn.kneighbors(return_distance=False)


def run_faiss(X32, k):
    """Leave-one-out kNN with faiss: search k + 1, drop each row's own index.

    In float32 a point is not always first in its own list (ties with
    duplicates, rounding of the norm expansion), so the own index is removed
    wherever it is; a row where it is missing loses its last column instead.
    """
    import faiss

    n, d = X32.shape
    index = faiss.IndexFlatL2(d)
    index.add(X32)
    _, ind = index.search(X32, k + 1)
    keep = ind != np.arange(n)[:, None]
    keep[keep.all(axis=1), -1] = False
    return ind[keep].reshape(n, k)


def implementations():
    """(name, dtype, function) of every implementation available here."""
    impls = [("knnx", np.float64, run_knnx), ("sklearn", np.float64, run_sklearn)]
    if HAVE_FAISS:
        impls.append(("faiss", np.float32, run_faiss))
    return impls


def _serve(conn, func):
    """Worker loop: ("data", X, k) stores the problem, ("time",) runs it once and
    answers the seconds, ("result",) answers the last result, None stops."""
    X = k = result = None
    while (msg := conn.recv()) is not None:
        if msg[0] == "data":
            X, k = msg[1], msg[2]
        elif msg[0] == "time":
            t0 = time.perf_counter()
            result = func(X, k)
            conn.send(time.perf_counter() - t0)
        else:
            conn.send(result)


class Worker:
    """One implementation in a spawned process of its own, driven over a pipe."""

    def __init__(self, func):
        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe()
        # Not a daemon: joblib refuses parallel loops in daemonic processes, which would
        # quietly run scikit-learn with n_jobs=1.
        self.proc = ctx.Process(target=_serve, args=(child, func), daemon=False)
        self.proc.start()

    def set_data(self, X, k):
        self.conn.send(("data", X, k))

    def time(self):
        self.conn.send(("time",))
        return self.conn.recv()

    def result(self):
        self.conn.send(("result",))
        return self.conn.recv()

    def close(self):
        self.conn.send(None)
        self.proc.join()


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def print_environment():
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else "?"
    print(f"CPU: {cpu_model()}; {os.cpu_count()} logical cores ({usable} usable)")
    versions = [f"python {platform.python_version()}"]
    for dist in ("numpy", "numba", "scikit-learn", "faiss-cpu"):
        try:
            versions.append(f"{dist} {importlib.metadata.version(dist)}")
        except importlib.metadata.PackageNotFoundError:
            versions.append(f"{dist} not installed")
    print("Versions: " + ", ".join(versions))
    if not HAVE_FAISS:
        print("NOTE: faiss is not importable (pip install faiss-cpu); it is skipped.")
    else:
        print("NOTE: faiss runs in float32; knnx and sklearn run in float64.")


def bench_shape(workers, n, d, k, repeats, rng, pause=PAUSE_S):
    """Time every implementation on one shape; return one row dict per implementation.

    Repeats are interleaved (knnx, sklearn, faiss, knnx, ...) so that a slow spell
    of the machine affects every implementation alike rather than one of them.
    """
    X = rng.standard_normal((n, d))
    X_small = rng.standard_normal((WARMUP_N, d))
    impls = implementations()
    for name, dtype, _ in impls:  # warm-up: JIT, thread pools
        workers[name].set_data(np.ascontiguousarray(X_small, dtype=dtype), k)
        workers[name].time()
        workers[name].set_data(np.ascontiguousarray(X, dtype=dtype), k)
    times = {name: [] for name, _, _ in impls}
    for _ in range(repeats):
        for name, _, _ in impls:
            time.sleep(pause)  # let the previous implementation's idle threads go to sleep
            times[name].append(workers[name].time())
    rows = [
        {
            "shape": f"{n}x{d}", "n": n, "d": d, "k": k, "impl": name, "dtype": np.dtype(dtype).name,
            "repeats": repeats, "median_s": statistics.median(times[name]), "min_s": min(times[name]),
        }
        for name, dtype, _ in impls
    ]  # fmt: skip
    knnx_median = rows[0]["median_s"]
    for row in rows:
        row["ratio_vs_knnx"] = row["median_s"] / knnx_median
    agreement = float(np.mean(workers["knnx"].result() == workers["sklearn"].result()))
    return rows, agreement


def speed_phrase(ratio):
    """'2.10x faster' for ratio 2.1, '1.25x slower' for ratio 0.8 (knnx's view)."""
    return f"{ratio:.2f}x faster" if ratio >= 1 else f"{1 / ratio:.2f}x slower"


def print_table(rows):
    header = ("shape", "impl", "median_s", "min_s", "ratio vs knnx")
    lines = [
        (r["shape"], r["impl"], f"{r['median_s']:.3f}", f"{r['min_s']:.3f}",
         f"{r['ratio_vs_knnx']:.2f}")
        for r in rows
    ]  # fmt: skip
    widths = [max(len(x) for x in col) for col in zip(header, *lines, strict=True)]
    fmt = "  ".join(f"{{:<{w}}}" if i < 2 else f"{{:>{w}}}" for i, w in enumerate(widths))
    print(fmt.format(*header))
    print("  ".join("-" * w for w in widths))
    for line in lines:
        print(fmt.format(*line))


def print_goals(shape_rows, agreement):
    shape = shape_rows[0]["shape"]
    ratio = {r["impl"]: r["ratio_vs_knnx"] for r in shape_rows}
    ok = "PASS" if agreement >= AGREEMENT_GOAL else "FAIL"
    print(f"[{shape}] index agreement knnx vs sklearn: {agreement:.6f} "
          f"(goal >= {AGREEMENT_GOAL}) {ok}")  # fmt: skip
    met = "met" if ratio["sklearn"] >= SKLEARN_GOAL else "NOT met"
    print(f"[{shape}] knnx vs sklearn brute: {speed_phrase(ratio['sklearn'])} "
          f"(goal >= {SKLEARN_GOAL:g}x) {met}")  # fmt: skip
    if "faiss" in ratio:
        met = "met" if ratio["faiss"] >= 1 / FAISS_GOAL else "NOT met"
        print(f"[{shape}] knnx vs faiss IndexFlatL2: {speed_phrase(ratio['faiss'])} "
              f"(goal: within {FAISS_GOAL:g}x) {met}")  # fmt: skip
    else:
        print(f"[{shape}] knnx vs faiss IndexFlatL2: skipped (faiss not installed)")


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--n", type=int, default=20000, help="number of points (default 20000)")
    p.add_argument("--dims", default="16,256", help="comma-separated dimensions (default 16,256)")
    p.add_argument("--k", type=int, default=50, help="neighbours per point (default 50)")
    p.add_argument("--repeats", type=int, default=7, help="timed repeats (default 7)")
    p.add_argument("--seed", type=int, default=0, help="seed of numpy's default_rng (default 0)")
    p.add_argument(
        "--pause",
        type=float,
        default=PAUSE_S,
        help=f"seconds of rest before each timed call (default {PAUSE_S:g})",
    )
    p.add_argument("--csv", metavar="PATH", help="also write the table rows as CSV")
    args = p.parse_args(argv)
    args.dims = [int(x) for x in args.dims.split(",") if x.strip()]
    return args


def main(argv=None):
    args = parse_args(argv)
    rng = np.random.default_rng(args.seed)
    print_environment()
    print(f"Leave-one-out kNN graph, k={args.k}, standard-normal data, seed={args.seed}, "
          f"median/min of {args.repeats} repeats (seconds)\n")  # fmt: skip
    all_rows, checks = [], []
    workers = {name: Worker(func) for name, _, func in implementations()}
    try:
        for d in args.dims:
            rows, agreement = bench_shape(workers, args.n, d, args.k, args.repeats, rng, args.pause)
            all_rows += rows
            checks.append((rows, agreement))
    finally:
        for worker in workers.values():
            worker.close()
    print_table(all_rows)
    print()
    for rows, agreement in checks:
        print_goals(rows, agreement)
    if args.csv:
        write_csv(args.csv, all_rows)
        print(f"\nRows written to {args.csv}")


if __name__ == "__main__":
    main()
