"""Benchmark: how the exact kNN graph and GNNB training scale with n (issue 7).

What it measures
----------------
On the ``blobs`` stand-in of ``experiments/gnnb_large.py``
(:func:`knnx.datasets.synthetic.blobs`: 100 classes N(mu_c, I) in d = 512
dimensions, means uniform in [-0.40, 0.40]^d, seed 0), for n in {10^4, 3 10^4, 10^5}:

* ``knnx``: the exact leave-one-out kNN graph, ``knnx.kneighbors(X, k)``, k = 10, float64;
* ``gnnb``: ``knnx.GNNBClassifier(k=10).fit(X, y)`` (lazy chooser, T = m), neighbour
  graph included; ``gnnb-graph`` is the same fit without the graph it builds (the
  seconds spent inside ``knnx.estimators.gnnb.kneighbors`` during that very fit are subtracted);
* peers on the same data: ``sklearn``, ``NearestNeighbors(n_neighbors=k,
  algorithm="brute", n_jobs=-1).fit(X).kneighbors()`` (float64; scikit-learn's
  chunked ``ArgKmin`` reduction, OpenMP-parallel, whose working memory is a few row
  chunks), and ``faiss``, ``faiss.IndexFlatL2`` searching k + 1 on **float32** data,
  own index dropped (both exactly as ``benchmarks/neighbors.py`` runs them).

Every measurement runs in a fresh child process (``python scale.py --child ...``)
that imports its library, warms it up on a small problem (numba, BLAS and OpenMP
thread pools), builds the data, and then times one call with ``perf_counter``.

Memory: the reported figure, ``peak MiB``, is the call's peak resident memory above
what the process held just before it: the child resets the kernel's RSS high-water
mark (``echo 5 > /proc/self/clear_refs``) right before the call, after returning the
C heap's free pages to the system (glibc ``malloc_trim(0)``: otherwise pages freed by
the warm-up stay resident and the call reuses them unseen), and reports
``VmHWM - VmRSS(before)`` from ``/proc/self/status``. So the input data, the
interpreter and the libraries are excluded, and the outputs (n x k indices and
distances) are included. The CSV also holds the cruder figure
``ru_maxrss(child) - ru_maxrss(baseline child)``, where the baseline child only
imports, warms up and builds the data; since building the data itself peaks at
about two copies of X, that difference under-counts a call that needs less than
one extra copy of X (it is 0 then). Where ``clear_refs`` is not writable, the
crude figure is the only one.

Repeats: medians of ``--repeats`` (default 3) calls, each in its own child, the
methods interleaved repeat by repeat; sizes of at least ``--single-from`` (default
10^5) get one call unless it took under ``FAST_S`` seconds. The 1-minute load
average is read at the start of every call; the table gives its median.

Printed: a Markdown table (seconds, peak MiB, ratio peer / knnx, load), the growth
exponent of every cost in n (least squares of log cost on log n over the sizes,
:func:`fit_exponent`), the position-by-position agreement of the peers' neighbour
indices with knnx's, and an exact check of knnx's graph on 200 random rows against
NumPy float64 distances at every size.

How to run
----------
    python benchmarks/scale.py [--sizes 10000,30000,100000] [--d 512] [--repeats 3]
                               [--peer-max-n 100000] [--csv PATH] [--quick]

``--quick``: sizes 2000, 6000, 20000 (a smoke run of a couple of minutes).
"""

import argparse
import csv
import gc
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from neighbors import run_faiss, run_sklearn  # the peers exactly as benchmarks/neighbors.py runs them

SIZES = (10_000, 30_000, 100_000)
QUICK_SIZES = (2_000, 6_000, 20_000)
N_CLASSES = 100
SPREAD = 0.40  # experiments/gnnb_large.py: kNN (k = 10) top-1 about 31 % at d = 512
K = 10
FAST_S = 10.0  # at sizes >= --single-from, repeat only calls faster than this
WARMUP_N = 9000  # large enough for every knnx path (as benchmarks/neighbors.py)
CHECK_ROWS = 200
METHODS = ("knnx", "gnnb", "sklearn", "faiss")
ROW_ORDER = ("knnx", "gnnb", "gnnb-graph", "sklearn", "faiss")
MIB = 1024.0 * 1024.0


# ----------------------------------------------------------------------------- child side


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
    """Return the C heap's free pages to the system (glibc), so that memory freed by the warm-up
    and by building the data is not reused unseen by the timed call; False where unavailable."""
    import ctypes
    import ctypes.util

    try:
        return bool(ctypes.CDLL(ctypes.util.find_library("c")).malloc_trim(0) or True)
    except (OSError, AttributeError):
        return False


def _maxrss_kib():
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux


def make_data(n, d, seed=0, n_classes=N_CLASSES, spread=SPREAD):
    """The benchmark's data: ``blobs`` (X float64 of shape (n, d), y)."""
    from knnx.datasets.synthetic import blobs

    ds = blobs(n, n_features=d, n_classes=n_classes, spread=spread, seed=seed)
    return np.ascontiguousarray(ds.X, dtype=np.float64), ds.y


def _prepare(method, d, k):
    """Import and warm up ``method``; return ``call(X, y) -> (indices or None, extra dict)``."""
    rng = np.random.default_rng(12345)
    Xw = rng.standard_normal((WARMUP_N, d))
    yw = rng.integers(0, 5, WARMUP_N)
    if method in ("knnx", "baseline"):
        import knnx

        knnx.kneighbors(Xw, k)

        def call(X, y):
            return knnx.kneighbors(X, k)[1], {}

    elif method == "gnnb":
        import knnx
        import knnx.estimators.gnnb as gnnb_module

        knnx.GNNBClassifier(k=k).fit(Xw, yw)
        inner = gnnb_module.kneighbors
        spent = []

        def timed_kneighbors(*args, **kwargs):
            t0 = time.perf_counter()
            out = inner(*args, **kwargs)
            spent.append(time.perf_counter() - t0)
            return out

        def call(X, y):
            spent.clear()
            gnnb_module.kneighbors = timed_kneighbors
            try:
                knnx.GNNBClassifier(k=k).fit(X, y)
            finally:
                gnnb_module.kneighbors = inner
            return None, {"graph_seconds": sum(spent), "graph_calls": len(spent)}

    elif method == "sklearn":
        run_sklearn(Xw, k)

        def call(X, y):
            return run_sklearn(X, k), {}

    elif method == "faiss":
        run_faiss(Xw.astype(np.float32), k)

        def call(X, y):
            return run_faiss(X, k), {}

    else:
        raise ValueError(f"unknown method {method!r}")
    return call


def child(spec):
    """One measurement in this (fresh) process; returns a JSON-able dict."""
    method, n, d, k, seed = spec["method"], spec["n"], spec["d"], spec["k"], spec["seed"]
    call = _prepare(method, d, k)
    X, y = make_data(n, d, seed, spec.get("n_classes", N_CLASSES), spec.get("spread", SPREAD))
    if method == "faiss":
        X = X.astype(np.float32)
    gc.collect()
    trimmed = _malloc_trim()
    out = {"method": method, "n": n, "d": d, "load1": os.getloadavg()[0]}
    if method == "baseline":
        out.update(seconds=float("nan"), maxrss_kib=_maxrss_kib())
        return out
    rss_before = _status_kib("VmRSS")
    hwm_reset = _reset_hwm()
    t0 = time.perf_counter()
    ind, extra = call(X, y)
    seconds = time.perf_counter() - t0
    out.update(
        seconds=seconds,
        maxrss_kib=_maxrss_kib(),
        rss_before_kib=rss_before,
        hwm_kib=_status_kib("VmHWM"),
        hwm_reset=hwm_reset,
        malloc_trim=trimmed,
        **extra,
    )
    if hwm_reset:
        out["peak_kib"] = out["hwm_kib"] - rss_before
    if ind is not None and spec.get("save"):
        np.save(spec["save"], np.asarray(ind, dtype=np.int64))
    return out


# ---------------------------------------------------------------------------- parent side


def fit_exponent(ns, values):
    """Growth exponent b of ``values ~ a n^b``: least-squares slope of log(values) on log(ns).

    Pairs with a missing (None/nan) or non-positive value are dropped; nan if fewer
    than two distinct sizes remain.
    """
    pairs = [
        (float(n), float(v)) for n, v in zip(ns, values, strict=True) if v is not None and v == v and v > 0
    ]
    if len({n for n, _ in pairs}) < 2:
        return float("nan")
    x = np.log([n for n, _ in pairs])
    z = np.log([v for _, v in pairs])
    x = x - x.mean()
    return float(np.dot(x, z - z.mean()) / np.dot(x, x))


def run_child(spec, timeout):
    """Run one measurement in a fresh interpreter; a dict, or ``{"error": ...}``."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", json.dumps(spec)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["(no message)"])[-1]
        return {"error": f"exit code {proc.returncode}: {tail}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _median(xs):
    xs = [x for x in xs if x is not None and x == x]
    return statistics.median(xs) if xs else float("nan")


def check_rows(X, ind, rows):
    """True if ``ind[rows]`` equals the exact float64 leave-one-out neighbours of those rows."""
    k = ind.shape[1]
    for r in rows:
        dist = ((X - X[r]) ** 2).sum(axis=1)
        dist[r] = np.inf
        order = np.lexsort((np.arange(len(X)), dist))[:k]
        if not np.array_equal(order, ind[r]):
            return False
    return True


def _fmt(x, spec):
    return "—" if x is None or x != x else format(x, spec)


def measure(args, workdir):
    """Every measurement; returns (summary rows, raw records, notes)."""
    methods = [m for m in METHODS if m in args.methods]
    raw, notes = [], []
    base = {"d": args.d, "k": args.k, "seed": args.seed, "n_classes": args.classes, "spread": args.spread}
    for n in args.sizes:
        active = [m for m in methods if m in ("knnx", "gnnb") or n <= args.peer_max_n]
        skipped = [m for m in methods if m not in active]
        if skipped:
            notes.append(f"n = {n}: {', '.join(skipped)} skipped (--peer-max-n {args.peer_max_n})")
        if not args.no_baseline:
            b = run_child({**base, "method": "baseline", "n": n}, args.timeout)
            raw.append({**b, "method": "baseline", "n": n, "repeat": 0})
        repeats = args.repeats if n < args.single_from else 1
        r = 0
        while r < repeats:
            for m in list(active):
                save = str(Path(workdir) / f"{m}_{n}.npy") if r == 0 else None
                rec = run_child({**base, "method": m, "n": n, "save": save}, args.timeout)
                rec.update(method=m, n=n, repeat=r)
                raw.append(rec)
                if "error" in rec:
                    notes.append(f"n = {n}: {m} failed ({rec['error']})")
                    active.remove(m)
                    print(f"  n={n:>7} {m:<8} FAILED: {rec['error']}", flush=True)
                    continue
                if r == 0 and n >= args.single_from and rec["seconds"] < FAST_S:
                    repeats = args.repeats
                peak = rec.get("peak_kib")
                print(
                    f"  n={n:>7} {m:<8} repeat {r}: {rec['seconds']:8.3f} s, peak "
                    f"{_fmt(None if peak is None else peak / 1024, '.0f')} MiB, load {rec['load1']:.2f}",
                    flush=True,
                )
            r += 1
        _agreement(args, workdir, n, notes)
    return raw, notes


def _agreement(args, workdir, n, notes):
    path = Path(workdir) / f"knnx_{n}.npy"
    if not path.exists():
        return
    ref = np.load(path)
    X, _ = make_data(n, args.d, args.seed, args.classes, args.spread)
    rows = np.random.default_rng(n).choice(n, size=min(CHECK_ROWS, n), replace=False)
    ok = check_rows(X, ref, rows)
    notes.append(
        f"n = {n}: knnx graph exact on {len(rows)} random rows (NumPy float64): {'yes' if ok else 'NO'}"
    )
    for m in ("sklearn", "faiss"):
        p = Path(workdir) / f"{m}_{n}.npy"
        if p.exists():
            notes.append(
                f"n = {n}: {m} indices equal to knnx's position by position: {np.mean(np.load(p) == ref):.4%}"
            )


def summarise(raw, sizes):
    """Summary rows (one per n and method) and exponent rows (one per method and cost)."""
    base_rss = {r["n"]: r.get("maxrss_kib") for r in raw if r["method"] == "baseline" and "error" not in r}
    rows = []
    for n in sizes:
        for m in ROW_ORDER:
            src = "gnnb" if m == "gnnb-graph" else m
            recs = [r for r in raw if r["n"] == n and r["method"] == src and "error" not in r]
            if not recs:
                continue
            if m == "gnnb-graph":
                secs = [r["seconds"] - r["graph_seconds"] for r in recs]
                peak = crude = float("nan")
            else:
                secs = [r["seconds"] for r in recs]
                peak = _median([r["peak_kib"] / 1024 if "peak_kib" in r else None for r in recs])
                b = base_rss.get(n)
                crude = _median([(r["maxrss_kib"] - b) / 1024 if b else None for r in recs])
            rows.append(
                {
                    "n": n,
                    "method": m,
                    "seconds": statistics.median(secs),
                    "runs": len(secs),
                    "peak_mib": peak,
                    "maxrss_minus_baseline_mib": crude,
                    "load1": _median([r["load1"] for r in recs]),
                }
            )
    knnx_s = {r["n"]: r["seconds"] for r in rows if r["method"] == "knnx"}
    for r in rows:
        r["vs_knnx"] = r["seconds"] / knnx_s[r["n"]] if r["n"] in knnx_s else float("nan")
    exps = []
    for m in ROW_ORDER:
        sel = [r for r in rows if r["method"] == m]
        if not sel:
            continue
        ns = [r["n"] for r in sel]
        exps.append(
            {
                "method": m,
                "seconds_exponent": fit_exponent(ns, [r["seconds"] for r in sel]),
                "memory_exponent": fit_exponent(ns, [r["peak_mib"] for r in sel]),
                "sizes": ",".join(str(n) for n in ns),
            }
        )
    return rows, exps


LABELS = {
    "knnx": "knnx kneighbors (graph)",
    "gnnb": "GNNB fit, graph included",
    "gnnb-graph": "GNNB fit, graph excluded",
    "sklearn": "scikit-learn brute",
    "faiss": "faiss IndexFlatL2 (float32)",
}


def markdown(rows, exps):
    lines = [
        "| n | method | seconds (median) | runs | peak MiB above input | seconds / knnx graph | load (1 min) |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['n']} | {LABELS[r['method']]} | {r['seconds']:.3f} | {r['runs']} | {_fmt(r['peak_mib'], '.0f')}"
            f" | {_fmt(r['vs_knnx'], '.2f')} | {r['load1']:.2f} |"
        )
    lines += ["", "| method | exponent, seconds | exponent, peak memory | sizes |", "|---|---|---|---|"]
    for e in exps:
        lines.append(
            f"| {LABELS[e['method']]} | {_fmt(e['seconds_exponent'], '.2f')}"
            f" | {_fmt(e['memory_exponent'], '.2f')} | {e['sizes']} |"
        )
    return "\n".join(lines)


def write_csv(path, rows, exps):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fields = ["n", "method", "seconds", "runs", "peak_mib", "maxrss_minus_baseline_mib", "vs_knnx", "load1"]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    epath = path.with_name(path.stem + "_exponents.csv")
    with open(epath, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["method", "seconds_exponent", "memory_exponent", "sizes"])
        w.writeheader()
        w.writerows(exps)
    return epath


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sizes", type=lambda s: [int(float(x)) for x in s.split(",")], default=None)
    p.add_argument("--d", type=int, default=512)
    p.add_argument("--k", type=int, default=K)
    p.add_argument("--classes", type=int, default=N_CLASSES)
    p.add_argument("--spread", type=float, default=SPREAD)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument(
        "--single-from", type=int, default=100_000, help="sizes from here get one call unless fast"
    )
    p.add_argument("--peer-max-n", type=int, default=100_000, help="largest n for scikit-learn and faiss")
    p.add_argument("--methods", default=",".join(METHODS))
    p.add_argument("--timeout", type=float, default=1800.0, help="seconds per child process")
    p.add_argument("--quick", action="store_true", help="sizes 2000, 6000, 20000")
    p.add_argument("--no-baseline", action="store_true", help="skip the baseline child (no ru_maxrss column)")
    p.add_argument("--csv", default=None)
    p.add_argument("--save-graphs", default=None, help="keep each method's first graph as DIR/METHOD_N.npy")
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.sizes is None:
        args.sizes = list(QUICK_SIZES if args.quick else SIZES)
    args.methods = [m.strip() for m in args.methods.split(",")]
    unknown = set(args.methods) - set(METHODS)
    if unknown:
        p.error(f"unknown methods {sorted(unknown)}; known: {', '.join(METHODS)}")
    # find_spec, not import: loading faiss (its own OpenBLAS and libgomp) slows other libraries in
    # the same process (benchmarks/neighbors.py), and every child parses these arguments.
    if "faiss" in args.methods and importlib.util.find_spec("faiss") is None:
        print("faiss not importable: skipped")
        args.methods.remove("faiss")
    return args


def main(argv=None):
    args = parse_args(argv)
    if args.child is not None:
        print(json.dumps(child(json.loads(args.child))))
        return None
    import numba
    import sklearn

    t_start = time.perf_counter()
    print(
        f"blobs: {args.classes} classes, d = {args.d}, spread {args.spread}, seed {args.seed}; k = {args.k}; "
        f"sizes {args.sizes}; {os.cpu_count()} CPUs; numpy {np.__version__}, numba {numba.__version__}, "
        f"scikit-learn {sklearn.__version__}"
    )
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.save_graphs or tmp
        Path(workdir).mkdir(parents=True, exist_ok=True)
        raw, notes = measure(args, workdir)
    rows, exps = summarise(raw, args.sizes)
    print()
    print(markdown(rows, exps))
    print()
    for note in notes:
        print(note)
    if not any("peak_kib" in r for r in raw):
        print("note: /proc/self/clear_refs not writable; only ru_maxrss - baseline is available (CSV)")
    if args.csv:
        epath = write_csv(args.csv, rows, exps)
        print(f"wrote {args.csv} and {epath}")
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"wall time {time.perf_counter() - t_start:.0f} s")
    return rows, exps, raw


if __name__ == "__main__":
    main()
