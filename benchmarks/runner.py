"""Benchmark: the runner's own cost per cell, against scikit-learn's cross-validation loop.

What it measures
----------------
A 2,000-cell spec: iris, stratified 10-fold cross-validation repeated 10 times, kNN
with k = 1..20, metric error (written to a temporary folder). Each measurement runs in
a process of its own, from a cold start (interpreter, imports, numba's on-disk cache):

* ``knnx --help`` and ``knnx validate SPEC``: start-up alone;
* ``knnx run SPEC --out NEW``: the whole run, wall time;
* the same run through the library in one process, split into
  - start-up: the imports ``knnx run`` makes before it validates,
  - validation: :func:`knnx.spec.validate_spec`,
  - warm-up: the seconds environment.json records (numba kernels loaded from the cache),
  - fit + predict: the sum of the cells' ``fit_seconds`` and ``predict_seconds``,
  - bookkeeping: the rest of the run (resume, splits, tasks, scores, writing rows,
    the ledger), and
  - end of run: sorting results.csv, the summaries, the figures and report.html;
  the goal is bookkeeping plus end of run <= 0.5 ms per cell;
* ``knnx run SPEC --out SAME``: a rerun with every cell done (no-op resume), wall time;
* scikit-learn: ``cross_val_score(KNeighborsClassifier(k, algorithm="brute"), X, y,
  cv=RepeatedStratifiedKFold(n_splits=10, n_repeats=10, random_state=0))`` for
  k = 1..20 (the same 2,000 fits), and the plain loop of ``fit`` and ``predict`` over
  the same splits; wall time of the process (imports included) and of the loop alone.

``--before TREE`` times another checkout of knnx (e.g. a ``git worktree`` of an
earlier commit) the same way in the same run, its processes alternating with this
tree's, and prints the ratios before / after. Medians of ``--rounds`` rounds (default
3); the machine is shared: quote medians and ratios.

How to run
----------
    make bench
    python benchmarks/runner.py [--rounds 3] [--before /tmp/knnx-before]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SPEC = """\
name: runner-cost
seed: 0
datasets: [iris]
protocol: {kind: kfold, folds: 10, repeats: 10}
algorithms:
  - name: knn
    params: {k: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]}
metrics: [error]
"""
N_CELLS = 2000
BOOKKEEPING_GOAL_MS = 0.5
SKLEARN_RATIO_GOAL = 3.0
HELP_GOAL_S = 0.5
NOOP_GOAL_S = 1.0

# The library run, phase by phase: the runner's validate_spec and finish_outputs wrapped
# in timers (they are looked up in the runner's namespace at call time).
PHASES = r"""
import json, sys, time
t0 = time.perf_counter()
import knnx.experiment.runner as runner
startup = time.perf_counter() - t0
phases = {"validation": 0.0, "end": 0.0}

def timer(name, func):
    def timed(*args, **kwargs):
        start = time.perf_counter()
        try:
            return func(*args, **kwargs)
        finally:
            phases[name] += time.perf_counter() - start
    return timed

runner.validate_spec = timer("validation", runner.validate_spec)
runner.finish_outputs = timer("end", runner.finish_outputs)
start = time.perf_counter()
runner.run_spec(sys.argv[1], out=sys.argv[2])
phases["run"] = time.perf_counter() - start
phases["startup"] = startup
print(json.dumps(phases))
"""

SKLEARN = r"""
import json, sys, time
t0 = time.perf_counter()
import numpy as np
from sklearn.datasets import load_iris
from sklearn.model_selection import RepeatedStratifiedKFold, cross_val_score
from sklearn.neighbors import KNeighborsClassifier
X, y = load_iris(return_X_y=True)
cv = RepeatedStratifiedKFold(n_splits=10, n_repeats=10, random_state=0)
start = time.perf_counter()
if sys.argv[1] == "cross_val_score":
    for k in range(1, 21):
        cross_val_score(KNeighborsClassifier(n_neighbors=k, algorithm="brute"), X, y, cv=cv)
else:
    splits = list(cv.split(X, y))
    for k in range(1, 21):
        for train, test in splits:
            model = KNeighborsClassifier(n_neighbors=k, algorithm="brute").fit(X[train], y[train])
            model.predict(X[test])
print(json.dumps({"loop": time.perf_counter() - start}))
"""


def _env(tree):
    return {**os.environ, "PYTHONPATH": str(tree)}


def _wall(args, tree, cwd):
    """Wall seconds of one process and its last stdout line."""
    start = time.perf_counter()
    done = subprocess.run(args, env=_env(tree), cwd=cwd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(
            f"{' '.join(map(str, args))} failed ({done.returncode}): {done.stderr.strip()[-500:]}"
        )
    lines = done.stdout.strip().splitlines()
    return seconds, lines[-1] if lines else ""


def _fit_predict_seconds(out):
    import pandas as pd

    frame = pd.read_csv(out / "results.csv")
    return float(frame["fit_seconds"].sum() + frame["predict_seconds"].sum())


def _warmup_seconds(out):
    runs = json.loads((out / "environment.json").read_text())["runs"]
    return float(sum(runs[-1].get("warmup_seconds", {}).values()))


def measure_knnx(tree, spec, work, tag):
    """One round of every knnx measurement for the checkout ``tree``."""
    cli = [sys.executable, "-m", "knnx.cli"]
    row = {}
    row["help"] = statistics.median(_wall([*cli, "--help"], tree, tree)[0] for _ in range(5))
    row["validate"] = statistics.median(_wall([*cli, "validate", spec], tree, tree)[0] for _ in range(3))
    out = work / f"{tag}-cli-{time.monotonic_ns()}"
    row["run"] = _wall([*cli, "run", spec, "--out", out], tree, tree)[0]
    row["noop"] = _wall([*cli, "run", spec, "--out", out], tree, tree)[0]
    lib = work / f"{tag}-lib-{time.monotonic_ns()}"
    wall, line = _wall([sys.executable, "-c", PHASES, spec, lib], tree, tree)
    phases = json.loads(line)
    fit = _fit_predict_seconds(lib)
    warm = _warmup_seconds(lib)
    row.update(
        process=wall,
        startup=wall - phases["run"],  # interpreter and imports, before run_spec
        validation=phases["validation"],
        warmup=warm,
        fit_predict=fit,
        bookkeeping=phases["run"] - phases["validation"] - phases["end"] - fit - warm,
        end=phases["end"],
    )
    return row


def measure_sklearn(tree, which):
    wall, line = _wall([sys.executable, "-c", SKLEARN, which], tree, tree)
    return {"process": wall, "loop": json.loads(line)["loop"]}


def _median(rows, key):
    return statistics.median(r[key] for r in rows)


def report(name, rows):
    per_cell = lambda s: 1e3 * s / N_CELLS  # noqa: E731
    m = {key: _median(rows, key) for key in rows[0]}
    print(f"\n## {name} (medians of {len(rows)} rounds)")
    print(f"knnx --help             {m['help']:7.2f} s   (goal <= {HELP_GOAL_S} s)")
    print(f"knnx validate           {m['validate']:7.2f} s")
    print(f"knnx run (2,000 cells)  {m['run']:7.2f} s")
    print(f"no-op resume            {m['noop']:7.2f} s   (goal <= {NOOP_GOAL_S} s)")
    print(f"library run, process    {m['process']:7.2f} s, of which:")
    for key, label in [
        ("startup", "start-up (imports)"),
        ("validation", "validation"),
        ("warmup", "warm-up (kernel cache)"),
        ("fit_predict", "fit + predict"),
        ("bookkeeping", "bookkeeping"),
        ("end", "end of run"),
    ]:
        print(f"  {label:24s}{m[key]:7.2f} s  {per_cell(m[key]):6.3f} ms/cell")
    cost = per_cell(m["bookkeeping"] + m["end"])
    print(f"bookkeeping + end of run {cost:.3f} ms/cell (goal <= {BOOKKEEPING_GOAL_MS} ms)")
    return m


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before", type=Path, help="another checkout of knnx, timed the same way")
    args = parser.parse_args()
    here = Path(__file__).resolve().parents[1]
    trees = {"after": here}
    if args.before is not None:
        trees = {"before": args.before.resolve(), **trees}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        spec = work / "spec.yaml"
        spec.write_text(SPEC)
        for tree in trees.values():  # numba's cache filled, .pyc written: not timed
            _wall([sys.executable, "-m", "knnx.cli", "run", spec, "--out", work / "warm"], tree, tree)
            subprocess.run(["rm", "-rf", work / "warm"], check=True)
        rows = {name: [] for name in trees}
        peers = {"cross_val_score": [], "fit/predict loop": []}
        for r in range(args.rounds):
            for name, tree in trees.items():
                rows[name].append(measure_knnx(tree, spec, work, name))
            for which in peers:
                peers[which].append(measure_sklearn(here, which))
            print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    print(
        f"{N_CELLS} cells: iris, 10 x 10-fold, kNN k = 1..20, metric error; Python {sys.version.split()[0]}"
    )
    medians = {name: report(name, found) for name, found in rows.items()}
    print("\n## scikit-learn, the same 2,000 fits (medians)")
    for which, found in peers.items():
        process, loop = _median(found, "process"), _median(found, "loop")
        ratios = ", ".join(f"{process / m['run']:.2f}x knnx run ({name})" for name, m in medians.items())
        print(f"{which:18s} process {process:6.2f} s, loop {loop:6.2f} s; process / knnx run: {ratios}")
    print(f"(goal: knnx run at least {SKLEARN_RATIO_GOAL}x faster than the cross_val_score process)")
    if "before" in medians:
        print("\n## before / after")
        for key in ("help", "validate", "run", "noop", "bookkeeping", "end"):
            b, a = medians["before"][key], medians["after"][key]
            print(f"{key:12s} {b:7.2f} s -> {a:7.2f} s  ({b / a:.1f}x)")


if __name__ == "__main__":
    main()
