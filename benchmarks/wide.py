"""Benchmark: wide data, a CSV of 20 rows and up to 100,000 numeric columns.

What it measures
----------------
For each width d (default 1,000, 10,000 and 100,000 columns; 20 rows, two classes,
values drawn with a fixed seed and written with 4 decimals), in one process:

* ``validate``: :func:`knnx.spec.validate_spec` of a spec naming the CSV (reading,
  typing and checking every column, the splits, the settings): what ``knnx validate``
  does after its imports;
* ``run``: :func:`knnx.experiment.runner.run_spec` of the same spec (2-fold kNN, k = 1,
  no figures) into a new folder;
* the peer: ``pandas.read_csv`` of the same file (pandas' C parser, types guessed),
  the least any loader of a CSV pays.

Each is timed ``--rounds`` times (default 3), alternating; the table gives medians and
``validate / read_csv``. Loading, validating and running should grow linearly with the
columns: the seconds per 1,000 columns are printed for each width. The goal: a
20 x 100,000 CSV validates in under 10 s.

How to run
----------
    python benchmarks/wide.py [--widths 1000,10000,100000] [--rounds 3]
"""

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

ROWS = 20
GOAL_S = 10.0


def write_csv(path, d, seed=0):
    rng = np.random.default_rng(seed)
    values = rng.random((ROWS, d))
    with open(path, "w") as f:
        f.write(",".join(f"g{j}" for j in range(d)) + ",label\n")
        for i in range(ROWS):
            f.write(",".join(f"{v:.4f}" for v in values[i]) + f",{i % 2}\n")


def timed(func):
    start = time.perf_counter()
    func()
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--widths", default="1000,10000,100000")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    import pandas as pd

    from knnx.experiment.runner import run_spec
    from knnx.spec import validate_spec

    widths = [int(w) for w in args.widths.split(",")]
    print(f"{ROWS} rows x d numeric columns; medians of {args.rounds} rounds")
    print(
        f"{'d':>8} {'read_csv':>9} {'validate':>9} {'run':>8} {'validate/read_csv':>18} {'validate s/1k cols':>19}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for d in widths:
            csv = tmp / f"wide{d}.csv"
            write_csv(csv, d)
            spec = tmp / f"wide{d}.yaml"
            spec.write_text(
                f"name: wide{d}\ndatasets: [{{csv: {csv.name}, label: label}}]\n"
                "protocol: {kind: kfold, folds: 2}\nalgorithms: [{name: knn}]\n"
            )
            found = {"read_csv": [], "validate": [], "run": []}
            for r in range(args.rounds):
                found["read_csv"].append(timed(lambda csv=csv: pd.read_csv(csv)))
                found["validate"].append(timed(lambda spec=spec: validate_spec(spec)))
                out = tmp / f"out{d}-{r}"
                found["run"].append(timed(lambda spec=spec, out=out: run_spec(spec, out=out, figures=False)))
            m = {k: statistics.median(v) for k, v in found.items()}
            print(
                f"{d:>8} {m['read_csv']:>9.2f} {m['validate']:>9.2f} {m['run']:>8.2f} "
                f"{m['validate'] / m['read_csv']:>18.1f} {1000 * m['validate'] / d:>19.3f}"
            )
            if d == 100_000:
                verdict = "met" if m["validate"] < GOAL_S else "not met"
                print(f"goal: validate a 20 x 100,000 CSV in under {GOAL_S:g} s: {verdict}")


if __name__ == "__main__":
    main()
