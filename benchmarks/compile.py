"""Benchmark: what numba compiles, and how long a fresh clone waits for it.

What it measures
----------------
Each workload runs in a process of its own with an empty numba cache (a new
``NUMBA_CACHE_DIR``: what a fresh clone has), then again on the cache it filled:

* ``ripley``: ``knnx run experiments/ripley.yaml`` (the README's main job), whole
  process, wall time;
* ``select-k``: ``knnx select-k`` on ripley with ``--p 10`` (the README's second command);
* ``knn-METRIC``: the first kNN under each distance (``KNNClassifier(metric=...)``,
  fit and predict on 300 rows of 4 numeric and 2 nominal columns; heom, hvdm and gower
  read the nominal ones as categories, vdm and hamming take those two alone);
* ``estimators``: fitting knnx's six estimators (knn, knn_lpo, unn, unn_cv, gnnb,
  weighted_metric) with their defaults on the same rows, then predicting;
* ``all``: every workload above in turn on one cache (its seconds are their sums).

For each: the wall and CPU seconds cold and warm, and the compile seconds numba reports
(its ``numba:compile`` events, which fire on cache misses only: a kernel loaded from
the cache is not counted), split by kernel family (the module of the outermost kernel
being compiled; a kernel's callees compile inside it and count with it). Medians of
``--rounds`` rounds.

How to run
----------
    python benchmarks/compile.py [--rounds 1] [--workload ripley ...] [--families]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
METRICS = ["euclidean", "manhattan", "chebyshev", "minkowski", "seuclidean", "mahalanobis", "cosine"]
METRICS += ["hamming", "heom", "hvdm", "vdm", "gower"]
ESTIMATORS = ["knn", "knn_lpo", "unn", "unn_cv", "gnnb", "weighted_metric"]

# The child: installs a listener on numba's compile events, runs the workload, prints
# one JSON line (compile seconds per family and in all).
CHILD = r"""
import json, os, sys, time, resource
from numba.core import event

class Compiles(event.Listener):
    def __init__(self):
        self.stack, self.families, self.count = [], {}, 0
    def on_start(self, ev):
        self.stack.append(time.perf_counter())
    def on_end(self, ev):
        start = self.stack.pop()
        if not self.stack:  # outermost: the kernel a caller asked for, its callees inside
            fn = ev.data["dispatcher"].py_func
            family = fn.__module__.removeprefix("knnx._kernels.")
            self.families[family] = self.families.get(family, 0.0) + time.perf_counter() - start
            self.count += 1

listener = Compiles()
event.register("numba:compile", listener)

def report():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print("COMPILE-JSON " + json.dumps({"families": listener.families, "kernels": listener.count,
          "cpu": usage.ru_utime + usage.ru_stime}), file=sys.__stderr__, flush=True)

import atexit
atexit.register(report)
workload, args = sys.argv[1], sys.argv[2:]
if workload == "cli":
    from knnx.cli import main
    sys.argv = ["knnx", *args]
    main()
else:
    import numpy as np
    from knnx.estimators.registry import ALGORITHMS
    rng = np.random.default_rng(0)
    X = np.hstack([rng.normal(size=(300, 4)), rng.integers(0, 3, size=(300, 2)).astype(float)])
    y = (X[:, 0] + X[:, 4] > 1).astype(int)
    for kind in args:
        if kind.startswith("knn-"):
            metric = kind.removeprefix("knn-")
            # vdm and hamming compare category codes: the two nominal columns alone
            data = X[:, 4:] if metric in ("vdm", "hamming") else X
            nominal = [4, 5] if metric in ("heom", "hvdm", "gower") else None
            params = {"metric": metric, **({"nominal": nominal} if nominal else {})}
            ALGORITHMS["knn"](**params).fit(data, y).predict(data[:50])
        else:
            ALGORITHMS[kind]().fit(X[:, :4], y).predict(X[:50, :4])
"""


def workloads(out):
    ripley = ["cli", "run", str(ROOT / "experiments/ripley.yaml"), "--out", str(out / "ripley"), "--quiet"]
    select = ["cli", "select-k", "--p", "10"]
    knn = {f"knn-{m}": ["py", f"knn-{m}"] for m in METRICS}
    return {"ripley": ripley, "select-k": select, **knn, "estimators": ["py", *ESTIMATORS], "all": None}


def run_child(argv, cache, out):
    """(wall seconds, child's JSON) of one process running ``argv`` on numba cache ``cache``."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    kind, *args = argv
    cmd = [sys.executable, "-c", CHILD, "cli" if kind == "cli" else "py", *args]
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=out)
    wall = time.perf_counter() - start
    line = next((ln for ln in done.stderr.splitlines() if ln.startswith("COMPILE-JSON ")), None)
    if line is None or done.returncode != 0:  # a failed workload compiles little: not a figure
        raise SystemExit(f"{' '.join(argv)} failed:\n{done.stderr[-2000:]}")
    return wall, json.loads(line.removeprefix("COMPILE-JSON "))


def measure(name, rounds, tmp):
    """Medians over ``rounds`` of cold and warm runs of one workload, each round in a
    folder of its own (the run's ``--out`` inside it, removed before the warm run)."""
    cold, warm = [], []
    for r in range(rounds):
        cache, out = Path(tmp) / f"cache-{name}-{r}", Path(tmp) / f"out-{name}-{r}"
        out.mkdir(parents=True)
        argv = workloads(out)[name]
        if argv is None:  # every workload in turn, one cache: what the README's commands and a study reach
            results = [run_child(a, cache, out) for a in workloads(out).values() if a is not None]
            cold.append(_sum(results))
            shutil.rmtree(out / "ripley", ignore_errors=True)
            results = [run_child(a, cache, out) for a in workloads(out).values() if a is not None]
            warm.append(_sum(results))
            continue
        cold.append(run_child(argv, cache, out))
        shutil.rmtree(out / "ripley", ignore_errors=True)  # the warm run computes its cells again
        warm.append(run_child(argv, cache, out))
    return cold, warm


def _sum(results):
    families = {}
    for _, doc in results:
        for f, s in doc["families"].items():
            families[f] = families.get(f, 0.0) + s
    return sum(w for w, _ in results), {
        "families": families,
        "kernels": sum(d["kernels"] for _, d in results),
        "cpu": sum(d["cpu"] for _, d in results),
    }


def median(values):
    return statistics.median(values) if values else float("nan")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--workload", nargs="*", help="workloads to time (default: every one)")
    parser.add_argument("--families", action="store_true", help="print the compile seconds per family")
    parser.add_argument("--json", type=Path, help="write the medians as JSON here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        names = args.workload or list(workloads(Path(tmp)))
        print(
            f"{'workload':<18}{'cold wall':>10}{'cold cpu':>10}{'compile':>9}{'kernels':>8}{'warm wall':>10}"
        )
        table = {}
        for name in names:
            cold, warm = measure(name, args.rounds, tmp)
            compile_s = [sum(d["families"].values()) for _, d in cold]
            row = {
                "cold_wall": median([w for w, _ in cold]),
                "cold_cpu": median([d["cpu"] for _, d in cold]),
                "compile": median(compile_s),
                "kernels": median([d["kernels"] for _, d in cold]),
                "warm_wall": median([w for w, _ in warm]),
                "families": {
                    f: median([d["families"].get(f, 0.0) for _, d in cold])
                    for f in sorted({f for _, d in cold for f in d["families"]})
                },
            }
            table[name] = row
            print(
                f"{name:<18}{row['cold_wall']:>10.1f}{row['cold_cpu']:>10.1f}{row['compile']:>9.1f}"
                f"{row['kernels']:>8.0f}{row['warm_wall']:>10.1f}",
                flush=True,
            )
            if args.families:
                for f, s in sorted(row["families"].items(), key=lambda kv: -kv[1]):
                    print(f"    {f:<40}{s:>8.2f}")
        if args.json:
            args.json.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
