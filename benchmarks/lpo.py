"""Benchmark: exact leave-p-out risk of kNN for every k, against scikit-learn's K-fold answer.

What it measures
----------------
Wall-clock seconds for R_LpO(k), k = 1 .. k_max, on n points uniform in [0, 1]^2
(the setting of Celisse & Mary-Huard 2011, Fig. 1), timed in one process:

* ``knnx``    -- ``knnx.lpo_risk(X, y, p, k_max)``: the exact estimate, neighbour
  graph included (the graph alone is reported too);
* ``sklearn`` -- ``cross_val_score(KNeighborsClassifier(k, algorithm="brute"), X, y,
  cv=KFold(n / p))`` for every k: the usual K-fold approximation of the same
  question, with K = n / p folds of p points.

Two label settings: two classes drawn Bernoulli(q = 0.1) independently of X (the
paper's Fig. 1), and five classes drawn uniformly. Each implementation is warmed
up, then timed ``--repeats`` times (median reported; scikit-learn once by default
as it is slow). Goals from issue 3: two classes at n = 5000, p = 200, k_max = 50
in at most 0.25 s; five classes in at most 2 s; exact LpO faster than the K-fold
approximation.

How to run
----------
    make bench
    python benchmarks/lpo.py [--n 5000] [--p 200] [--k-max 50] [--repeats 5] [--seed 0]
"""

import argparse

import numpy as np
from _timing import timed

BINARY_GOAL_S = 0.25
MULTICLASS_GOAL_S = 2.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--p", type=int, default=200)
    parser.add_argument("--k-max", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sklearn-repeats", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    from sklearn.model_selection import KFold, cross_val_score
    from sklearn.neighbors import KNeighborsClassifier

    import knnx

    rng = np.random.default_rng(args.seed)
    X = rng.random((args.n, 2))
    settings = {
        "2 classes, Bernoulli(0.1)": (rng.random(args.n) < 0.1).astype(int),
        "5 classes, uniform": rng.integers(0, 5, args.n),
    }
    knnx.lpo_risk(X[:400], settings["5 classes, uniform"][:400], 20, 10)  # JIT warm-up
    print(
        f"Exact LpO, n={args.n} (2-D uniform), p={args.p}, k=1..{args.k_max}; median of {args.repeats} (seconds)"
    )
    print(f"{'labels':28s} {'knnx':>8s} {'graph':>8s} {'sklearn KCV':>12s} {'ratio':>7s}  goal")
    folds = args.n // args.p
    for name, y in settings.items():
        t_knnx, _ = timed(lambda y=y: knnx.lpo_risk(X, y, args.p, args.k_max), args.repeats)
        t_graph, _ = timed(lambda: knnx.kneighbors(X, args.k_max + args.p - 1), args.repeats)

        def kcv(y=y):
            cv = KFold(folds)
            return [
                cross_val_score(KNeighborsClassifier(n_neighbors=k, algorithm="brute"), X, y, cv=cv).mean()
                for k in range(1, args.k_max + 1)
            ]

        t_skl, _ = timed(kcv, args.sklearn_repeats)
        goal = BINARY_GOAL_S if len(np.unique(y)) == 2 else MULTICLASS_GOAL_S
        verdict = "met" if t_knnx <= goal else "NOT met"
        print(
            f"{name:28s} {t_knnx:8.3f} {t_graph:8.3f} {t_skl:12.3f} {t_skl / t_knnx:6.1f}x  "
            f"<= {goal} s: {verdict}"
        )
    print(
        f"sklearn KCV: cross_val_score over k = 1..{args.k_max} with K = n/p = {folds} folds (an approximation)."
    )
    print("ratio = sklearn / knnx (above 1: exact LpO is faster than the K-fold approximation).")


if __name__ == "__main__":
    main()
