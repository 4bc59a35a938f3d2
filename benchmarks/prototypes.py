"""Benchmark: knnx's prototype selections against imbalanced-learn's, in one run.

What it measures
----------------
Two overlapping Gaussian classes in 20 dimensions (the class is the sign of the sum of
the first two coordinates plus unit noise), n rows. For each method, knnx's seconds
(median of ``--repeats`` runs, its numba kernels compiled beforehand) and
imbalanced-learn 0.14's (one run: its CNN takes about a minute at 2,000 rows), their
ratio, the rows each keeps, and whether the kept rows are the same:

* ENN (``kind_sel="mode"``, ``sampling_strategy="all"``; knnx's ``tie="lowest"``),
  RENN, AllKNN and Tomek links, where imbalanced-learn defines the same rule (ENN,
  Tomek links; RENN and AllKNN differ by their extra stops and successive editing,
  see docs/reduction.md);
* CNN, where imbalanced-learn's ``CondensedNearestNeighbour`` is another rule (it
  keeps the smallest class whole and makes one pass per class): its time is the one a
  researcher pays for "CNN" in Python today;
* NCR and OSS, where imbalanced-learn's ``NeighbourhoodCleaningRule(sampling_strategy=
  "all")`` and ``OneSidedSelection`` are near rules (NCR: three differences; OSS: another
  start row for the same seed; see docs/reduction.md);
* RNN, FCNN, multiedit, DROP3, ICF, IB3, HMN-EI, RMHC (10 % of the rows, 10,000 mutations), SSMA (10,000 evaluations) and LVQ3 (knnx's default codebook: 10 % of the rows,
  50 updates per prototype), which imbalanced-learn does not have.

Targets: CNN and FCNN at 10,000 x 20 under 2 s; ENN, RENN and AllKNN at 100,000 x
20 under 30 s; DROP3 and ICF at 10,000 x 20 under 30 s; every method at least 20x
faster than imbalanced-learn's.

How to run
----------
    make bench
    python benchmarks/prototypes.py [--sizes 2000 10000 100000] [--repeats 3] [--peer-max 10000] [--store-max 10000]
"""

import argparse
import time

import numpy as np
from _timing import timed

from knnx.reduction import (
    CNN,
    DROP3,
    ENN,
    FCNN,
    HMNEI,
    IB3,
    ICF,
    LVQ,
    NCR,
    OSS,
    RENN,
    RMHC,
    RNN,
    SSMA,
    AllKNN,
    Multiedit,
    TomekLinks,
)


def data(n, d=20, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + X[:, 1] + rng.normal(size=n) > 0).astype(np.intp)
    return X, y


def peers():
    from imblearn.under_sampling import (
        AllKNN as ImbAllKNN,
    )
    from imblearn.under_sampling import (
        CondensedNearestNeighbour,
        EditedNearestNeighbours,
        NeighbourhoodCleaningRule,
        OneSidedSelection,
        RepeatedEditedNearestNeighbours,
    )
    from imblearn.under_sampling import (
        TomekLinks as ImbTomek,
    )

    return {
        "enn": (ENN(k=3, tie="lowest"), EditedNearestNeighbours(kind_sel="mode", sampling_strategy="all")),
        "renn": (
            RENN(k=3, tie="lowest"),
            RepeatedEditedNearestNeighbours(kind_sel="mode", sampling_strategy="all"),
        ),
        "allknn": (AllKNN(k=3, tie="lowest"), ImbAllKNN(kind_sel="mode", sampling_strategy="all")),
        "tomek_links": (TomekLinks(), ImbTomek(sampling_strategy="all")),
        "ncr": (NCR(tie="lowest"), NeighbourhoodCleaningRule(sampling_strategy="all")),
        "multiedit": (Multiedit(random_state=0), None),
        "cnn": (CNN(random_state=0), CondensedNearestNeighbour(random_state=0)),
        "rnn": (RNN(random_state=0), None),  # imbalanced-learn has none
        "fcnn": (FCNN(), None),
        "oss": (OSS(random_state=0), OneSidedSelection(random_state=0)),
        "drop3": (DROP3(), None),
        "icf": (ICF(), None),
        "ib3": (IB3(random_state=0), None),
        "hmnei": (HMNEI(), None),
        "rmhc": (RMHC(random_state=0), None),
        "ssma": (SSMA(random_state=0), None),
        "lvq": (LVQ(random_state=0), None),  # the Python LVQ packages fail on scikit-learn 1.9
    }


# The methods whose work grows with n x (rows kept), timed up to --store-max rows.
STORES = ("cnn", "rnn", "fcnn", "oss", "multiedit", "drop3", "icf", "ib3", "hmnei", "rmhc", "ssma", "lvq")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 10000, 100000])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--peer-max", type=int, default=10000, help="largest n imbalanced-learn is timed at")
    parser.add_argument("--cnn-peer-max", type=int, default=2000, help="largest n its CNN is timed at")
    parser.add_argument(
        "--store-max",
        type=int,
        default=10000,
        help="largest n the condensing and hybrid methods are timed at",
    )
    args = parser.parse_args()

    X, y = data(300)
    for ours, _ in peers().values():  # compile the kernels before any timing
        ours.fit(X, y)
    print(
        f"{'method':<12} {'n':>7} {'knnx s':>8} {'kept':>7} {'imblearn s':>11} {'kept':>7} {'ratio':>7}  same rows"
    )
    for n in args.sizes:
        X, y = data(n)
        for name, (ours, theirs) in peers().items():
            if name in STORES and n > args.store_max:
                continue
            seconds, fitted = timed(lambda ours=ours, X=X, y=y: ours.fit(X, y), args.repeats)
            kept = getattr(fitted, "sample_indices_", getattr(fitted, "prototypes_", None))
            peer_max = args.cnn_peer_max if name == "cnn" else args.peer_max
            if theirs is None or n > peer_max:
                print(f"{name:<12} {n:>7} {seconds:>8.3f} {len(kept):>7} {'-':>11} {'-':>7} {'-':>7}  -")
                continue
            t0 = time.perf_counter()
            theirs.fit_resample(X, y)
            peer = time.perf_counter() - t0
            same = np.array_equal(np.sort(theirs.sample_indices_), kept)
            print(
                f"{name:<12} {n:>7} {seconds:>8.3f} {len(kept):>7} {peer:>11.3f} {len(theirs.sample_indices_):>7} "
                f"{peer / seconds:>6.0f}x  {'yes' if same else 'no'}"
            )


if __name__ == "__main__":
    main()
