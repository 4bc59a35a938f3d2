"""1-NN on every suite dataset with the source's partitions: knnx against scikit-learn.

For each KEEL dataset that comes with its source's folds (KEEL's 10-fold partition of
the standard sets, 5-fold of the imbalanced ones), loaded with the default treatments
(nominal attributes one-hot, rows with a missing value dropped) and standardised on
each fold's training part, fits ``knnx.KNNClassifier(k=1)`` and scikit-learn's
``KNeighborsClassifier(1, algorithm="brute")`` on the same folds and compares:

* the test predictions, fold by fold; where they differ, whether every differing test
  row has two or more training rows at its nearest distance up to rounding (within
  1e-9 of it, relatively): a tie, where knnx takes the smallest training index and
  scikit-learn's brute search its own order, and where scikit-learn's distances
  (computed as |x|^2 - 2 x.y + |y|^2) may order rows whose exact distances are equal
  (datasets of integer attributes have many), so that the difference is the tie rule
  and rounding, not the neighbours;
* the time of fit + predict over all folds, median of ``--repeats`` runs, and the ratio
  scikit-learn / knnx (above 1: knnx is faster).

Usage: ``python benchmarks/suites.py [--repeats 3] [--csv results/bench/suites.csv]``.
"""

import argparse
import csv
import statistics
import sys
from pathlib import Path

import numpy as np
from _timing import timed
from sklearn.neighbors import KNeighborsClassifier

from knnx import KNNClassifier
from knnx.datasets import load_dataset
from knnx.datasets.suites import manifest


def folds_of(ds):
    scheme = sorted(ds.partitions)[0]
    fold = ds.partitions[scheme]
    for f in range(int(fold.max()) + 1):
        yield np.flatnonzero(fold != f), np.flatnonzero(fold == f)


def standardised(X, train):
    mu, sd = X[train].mean(0), X[train].std(0)
    sd[sd == 0] = 1.0
    return (X - mu) / sd


def run(make, ds):
    preds = []
    for train, test in folds_of(ds):
        Z = standardised(ds.X, train)
        preds.append(make().fit(Z[train], ds.y[train]).predict(Z[test]))
    return preds


def tied(ds, train, row, Z):
    d = ((Z[train] - Z[row]) ** 2).sum(1)
    return np.count_nonzero(d <= d.min() * (1 + 1e-9) + 1e-12) > 1


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--csv", type=Path)
    args = parser.parse_args(argv)
    rows = []
    ids = [i for i, d in manifest().items() if "partitions" in d]
    KNNClassifier(k=1).fit(np.eye(3), [0, 1, 1]).predict(np.eye(3))  # numba warm-up
    for i in ids:
        ds = load_dataset(i)
        t_knnx, p_knnx = timed(lambda: run(lambda: KNNClassifier(k=1), ds), args.repeats)  # noqa: B023
        t_sk, p_sk = timed(
            lambda: run(lambda: KNeighborsClassifier(1, algorithm="brute"), ds),  # noqa: B023
            args.repeats,
        )
        differ = ties = 0
        for (train, test), a, b in zip(folds_of(ds), p_knnx, p_sk, strict=True):
            Z = standardised(ds.X, train)
            for r in np.flatnonzero(a != b):
                differ += 1
                ties += tied(ds, train, test[r], Z)
        errors = [float(np.mean(p != ds.y[test])) for (_, test), p in zip(folds_of(ds), p_knnx, strict=True)]
        rows.append(
            {
                "dataset": i,
                "n": ds.n_samples,
                "d": ds.n_features,
                "folds": len(errors),
                "error": round(statistics.mean(errors), 4),
                "rows_differ": differ,
                "differ_on_ties": ties,
                "knnx_s": round(t_knnx, 4),
                "sklearn_s": round(t_sk, 4),
                "ratio": round(t_sk / t_knnx, 2),
            }
        )
        print(",".join(str(v) for v in rows[-1].values()), flush=True)
    same = sum(r["rows_differ"] == 0 for r in rows)
    only_ties = sum(r["rows_differ"] == r["differ_on_ties"] for r in rows)
    print(
        f"{len(rows)} datasets: predictions equal on every fold for {same}; every difference an exact "
        f"distance tie for {only_ties}; median time ratio sklearn/knnx {statistics.median(r['ratio'] for r in rows):.2f}",
        file=sys.stderr,
    )
    if args.csv:
        args.csv.parent.mkdir(parents=True, exist_ok=True)
        with open(args.csv, "w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    return 0 if only_ties == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
