"""Benchmark: nested tuning (``tune:``) of kNN's k against scikit-learn's GridSearchCV.

What it measures
----------------
Choosing k in {1, 3, ..., 29} (15 values) by 5-fold stratified inner CV on one training
part, then refitting the chosen k: knnx's tuned cell (``knnx.evaluation.tuning.tune`` inside the
graph store a run opens, so each inner fold computes one neighbour graph, at k = 29,
that every k of the grid reads) against ``GridSearchCV(KNeighborsClassifier(
algorithm="brute"), cv=StratifiedKFold(5, shuffle=True, random_state=0))``, the best
peer for exact kNN on one core, which searches the neighbours once per (k, fold).
Both use the same inner folds. Printed: medians in seconds of ``--repeats`` runs after
a warm-up, the ratio, and each one's chosen k (they may differ: on a vote tie knnx
predicts the nearest tied class, scikit-learn the first in class order).

Datasets, as bundled: satimage's training part (4435 x 36) and the first 8000 rows of
letter's training part (16 features).

How to run
----------
    make bench
    python benchmarks/tune.py [--repeats 5]
"""

import argparse

from _timing import timed

from knnx.datasets import load_dataset
from knnx.estimators.knn import KNNClassifier
from knnx.evaluation.tuning import TuneTask, tune
from knnx.experiment.cells import with_graphs
from knnx.neighbors.graphs import GraphStore
from knnx.spec import tuned_settings

KS = list(range(1, 30, 2))
CV, SEED = 5, 0


def knnx_tune(X, y, n_classes):
    grid = {**KNNClassifier().get_params(), "k": KS}
    task = TuneTask(CV, "error", tuple(tuned_settings(grid)), SEED)
    store = GraphStore(max(KS))
    best, _, _ = tune(lambda s: with_graphs(KNNClassifier(**s), store), task, grid, X, y, n_classes)
    return with_graphs(KNNClassifier(**best), store).fit(X, y), best["k"]


def sklearn_tune(X, y):
    from sklearn.model_selection import GridSearchCV, StratifiedKFold
    from sklearn.neighbors import KNeighborsClassifier

    inner = StratifiedKFold(CV, shuffle=True, random_state=SEED)
    search = GridSearchCV(KNeighborsClassifier(algorithm="brute"), {"n_neighbors": KS}, cv=inner, n_jobs=1)
    search.fit(X, y)
    return search.best_estimator_, search.best_params_["n_neighbors"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    cases = []
    ds = load_dataset("satimage")
    cases.append(("satimage", ds.X[ds.split[0]], ds.y[ds.split[0]], ds.n_classes))
    ds = load_dataset("letter")
    train = ds.split[0][:8000]
    cases.append(("letter[:8000]", ds.X[train], ds.y[train], ds.n_classes))
    print(f"tune k in {KS[0]}..{KS[-1]} ({len(KS)} values) by {CV}-fold stratified inner CV, then refit")
    print(
        f"  {'data':<14s} {'n x d':>10s} {'knnx s':>8s} {'sklearn s':>9s} {'ratio':>6s} {'k knnx':>6s} {'k skl':>6s}"
    )
    knnx_tune(cases[0][1][:300], cases[0][2][:300], cases[0][3])  # warm-up (numba)
    for name, X, y, n_classes in cases:
        ours, (_, k_ours) = timed(lambda X=X, y=y, c=n_classes: knnx_tune(X, y, c), args.repeats)
        peer, (_, k_peer) = timed(lambda X=X, y=y: sklearn_tune(X, y), args.repeats)
        shape = f"{X.shape[0]}x{X.shape[1]}"
        print(
            f"  {name:<14s} {shape:>10s} {ours:8.2f} {peer:9.2f} {peer / ours:5.1f}x {k_ours:6d} {k_peer:6d}"
        )


if __name__ == "__main__":
    main()
