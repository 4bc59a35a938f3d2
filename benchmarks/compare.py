"""Benchmark: ``knnx compare`` on many configurations (issue 33, item 15).

What it measures
----------------
For each size in ``--sizes`` (default 10, 100, 1000, 2000 configurations), a results
file written as ``knnx run`` writes it (the columns of :data:`knnx.results.COLUMNS`
and ``param_k``): knn with k = 1 .. size on ``--datasets`` datasets (default 3),
``--folds`` folds (default 5), an error on a grid of 1/30 per fold (ties and zero
differences, as test folds of 30 rows give). Timed, median of ``--repeats`` (default
3), each in a fresh process (imports included):

* ``compare``: ``knnx compare RESULTS --select all`` (the Markdown table on stdout);
* ``--out``: the same with ``--out DIR`` (every table as CSV: paired.csv holds
  every pair on every dataset, 6 million rows at 2,000; no figure above 300
  contestants).

``--tree PATH`` runs another copy of knnx (``PYTHONPATH=PATH``), e.g. one before the
change, to compare; ``--timeout`` (seconds, default 600) stops a call that takes
longer and reports it as such.

How to run
----------
    python benchmarks/compare.py [--sizes 10,100,1000,2000] [--datasets 3] [--folds 5] [--repeats 3]
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

import numpy as np


def results_text(n_configs, n_datasets, folds, seed=0):
    """A results file of ``n_configs`` settings of knn (k = 1 ..) on ``n_datasets``
    datasets of 150 rows, ``folds`` folds each."""
    from knnx.results import results_columns, rows_to_csv, with_param_columns

    rng = np.random.default_rng(seed)
    n_test = 150 // folds
    rows = []
    for d in range(n_datasets):
        for k in range(1, n_configs + 1):
            for fold in range(folds):
                rows.append(
                    {
                        "experiment": "compare-bench",
                        "dataset": f"set{d}",
                        "algorithm": "knn",
                        "params": json.dumps({"k": k}, separators=(",", ":")),
                        "protocol": json.dumps({"folds": folds, "kind": "kfold"}, separators=(",", ":")),
                        "repeat": 0,
                        "fold": fold,
                        "seed": 0,
                        "metric": "error",
                        "value": float(rng.integers(0, n_test)) / n_test,
                        "n_train": 150 - n_test,
                        "n_test": n_test,
                        "fit_seconds": 0.0,
                        "predict_seconds": 0.0,
                        "tune_seconds": 0.0,
                    }
                )
    rows = with_param_columns(rows, ["k"])
    return rows_to_csv(rows, header=True, columns=results_columns(["k"]))


def _timed_command(args, tree, timeout, cwd):
    """Seconds of one ``knnx`` call in a fresh process run in ``cwd`` (``python -m`` puts
    the working folder first on the path: never a checkout's), None past ``timeout``."""
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = str(Path(tree).resolve())
    start = time.perf_counter()
    try:
        subprocess.run(
            [sys.executable, "-m", "knnx.cli", *args],
            env=env,
            cwd=cwd,
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return None
    return time.perf_counter() - start


def _median(times):
    return None if None in times else statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10,100,1000,2000")
    parser.add_argument("--datasets", type=int, default=3)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tree", default=None, help="another copy of knnx to time (its PYTHONPATH)")
    parser.add_argument("--timeout", type=float, default=600.0)
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores; {args.datasets} datasets, {args.folds} folds; median of {args.repeats}")
    print(f"knnx from {args.tree or 'the installed package'}")
    print("| configurations | pairs | paired tests | compare (s) | compare --out (s) |")
    print("|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            path = Path(tmp) / f"results-{size}.csv"
            path.write_text(results_text(size, args.datasets, args.folds))
            command = ["compare", str(path), "--select", "all"]
            plain, written = [], []
            for _ in range(args.repeats):
                plain.append(_timed_command(command, args.tree, args.timeout, tmp))
                out = Path(tmp) / f"out-{size}"
                written.append(_timed_command([*command, "--out", str(out)], args.tree, args.timeout, tmp))
                shutil.rmtree(out, ignore_errors=True)  # 0.8 GB of CSV at 2,000
            pairs = size * (size - 1) // 2
            cells = [
                f"{_median(t):.2f}" if _median(t) is not None else f"> {args.timeout:g}"
                for t in (plain, written)
            ]
            print(
                f"| {size:,} | {pairs:,} | {pairs * args.datasets:,} | {cells[0]} | {cells[1]} |", flush=True
            )


if __name__ == "__main__":
    main()
