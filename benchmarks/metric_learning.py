"""Benchmark: knnx's metric learners against metric-learn 0.7.0's, in one run.

What it measures
----------------
One fold of scikit-learn's digits (1,797 x 64; the first of a stratified 5-fold split,
seed 0: 1,437 training rows, 360 test rows), standardised with the training rows'
statistics (``--raw``: LMNN on the unscaled pixels as well). For
each learner, knnx's fit seconds (median of ``--repeats`` fits, its numba kernels
compiled beforehand) and metric-learn's (one fit), their ratio, the iterations each
made, and the 3-NN accuracy (scikit-learn's ``KNeighborsClassifier``) on the fold's
test rows in each learned space:

* LMNN, k = 3 target neighbours, both with their defaults (learning rate 1e-7, at most
  1,000 steps, at least 50, tolerance 1e-3 on the objective's change): knnx searches
  the active set every 10 steps, metric-learn searches every impostor at every
  evaluation; with ``recompute=0`` knnx takes metric-learn's steps (tested), timed
  here too;
* ITML: knnx's ``ITML(random_state=0)`` against ``ITML_Supervised(random_state=0)``
  (20 C^2 pairs of each kind, 1,000 passes at most), and knnx against metric-learn's
  ``ITML`` given knnx's own pairs and bounds: the same projections (the same matrix,
  tested), so the like-for-like time;
* LFDA (k = 7, weighted), closed form on both sides (metric-learn's gives complex numbers
  and NaN rows on digits, whose within-class scatter is singular: said in one line).

metric-learn 0.7.0 is imported through ``knnx.metric_learning._peer`` (its keyword
``force_all_finite`` renamed for scikit-learn >= 1.8; nothing else changed).

Targets: LMNN under 30 s on the fold and at least 10x metric-learn's; ITML at least 5x.

How to run
----------
    make bench
    python benchmarks/metric_learning.py [--repeats 3] [--skip-peer-lmnn] [--raw]
"""

import argparse
import time
import warnings

import numpy as np
from _timing import timed
from sklearn.datasets import load_digits
from sklearn.model_selection import StratifiedKFold
from sklearn.neighbors import KNeighborsClassifier
from sklearn.preprocessing import StandardScaler

from knnx.metric_learning import ITML, LFDA, LMNN
from knnx.metric_learning._peer import metric_learn


def fold(raw=False):
    X, y = load_digits(return_X_y=True)
    X = X.astype(np.float64)
    train, test = next(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))
    if raw:
        return X[train], y[train], X[test], y[test]
    scaler = StandardScaler().fit(X[train])
    return scaler.transform(X[train]), y[train], scaler.transform(X[test]), y[test]


def accuracy(model, X, y, X_test, y_test):
    knn = KNeighborsClassifier(n_neighbors=3).fit(model.transform(X), y)
    return float(np.mean(knn.predict(model.transform(X_test)) == y_test))


def once(make, X, y):
    t0 = time.perf_counter()
    model = make().fit(X, y)
    return time.perf_counter() - t0, model


def row(name, ours_s, ours, theirs_s, theirs, data):
    ours_it = getattr(ours, "n_iter_", "-")
    theirs_it = getattr(theirs, "n_iter_", "-") if theirs is not None else "-"
    acc = f"{accuracy(ours, *data):.4f}"
    if theirs is None:
        print(f"{name:<26} {ours_s:>9.2f} {ours_it!s:>7} {acc:>8} {'-':>11} {'-':>7} {'-':>8} {'-':>7}")
        return
    print(
        f"{name:<26} {ours_s:>9.2f} {ours_it!s:>7} {acc:>8} {theirs_s:>11.2f} {theirs_it!s:>7} "
        f"{accuracy(theirs, *data):>8.4f} {theirs_s / ours_s:>6.1f}x"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-peer-lmnn", action="store_true", help="do not time metric-learn's LMNN")
    parser.add_argument("--raw", action="store_true", help="LMNN on the unscaled pixels too")
    args = parser.parse_args()
    warnings.filterwarnings("ignore", category=FutureWarning)
    ml = metric_learn()
    data = fold()
    X, y = data[0], data[1]
    small = (X[:200], y[:200])
    for model in (LMNN(max_iter=3), LMNN(max_iter=3, recompute=0), ITML(max_iter=2), LFDA()):
        model.fit(*small)  # compile the kernels before any timing
    print(f"digits, one fold: {X.shape[0]} training rows x {X.shape[1]} features, {len(data[3])} test rows")
    print(
        f"{'learner':<26} {'knnx s':>9} {'iters':>7} {'3-NN acc':>8} {'metric-learn s':>11} {'iters':>7} "
        f"{'3-NN acc':>8} {'ratio':>7}"
    )
    lmnn_s, lmnn = timed(lambda: LMNN(k=3).fit(X, y), args.repeats)
    peer = (None, None) if args.skip_peer_lmnn else once(lambda: ml.LMNN(n_neighbors=3, random_state=0), X, y)
    row("lmnn", lmnn_s, lmnn, *peer, data)
    exact_s, exact = timed(lambda: LMNN(k=3, recompute=0).fit(X, y), 1)
    row("lmnn, recompute=0", exact_s, exact, *peer, data)
    if args.raw:
        raw = fold(raw=True)
        raw_s, raw_model = timed(lambda: LMNN(k=3).fit(raw[0], raw[1]), args.repeats)
        peer_raw = once(lambda: ml.LMNN(n_neighbors=3, random_state=0), raw[0], raw[1])
        row("lmnn, unscaled pixels", raw_s, raw_model, *peer_raw, raw)
    itml_s, itml = timed(lambda: ITML(random_state=0).fit(X, y), args.repeats)
    theirs_s, theirs = once(lambda: ml.ITML_Supervised(random_state=0), X, y)
    row("itml", itml_s, itml, theirs_s, theirs, data)
    pairs = np.stack([X[itml.pairs_[:, 0]], X[itml.pairs_[:, 1]]], axis=1)
    signs = np.where(itml.similar_, 1, -1)
    t0 = time.perf_counter()
    same = ml.ITML(prior="identity").fit(pairs, signs, bounds=np.array(itml.bounds_))
    same_s = time.perf_counter() - t0
    row("itml, the same constraints", itml_s, itml, same_s, same, data)
    gap = np.abs(itml.metric_ - same.get_mahalanobis_matrix()).max()
    print(f"  largest |A_knnx - A_metric-learn| on the same constraints: {gap:.2e}")
    lfda_s, lfda = timed(lambda: LFDA(k=7).fit(X, y), args.repeats)
    theirs_s, theirs = once(lambda: ml.LFDA(k=7), X, y)
    try:
        row("lfda", lfda_s, lfda, theirs_s, theirs, data)
    except ValueError as error:  # its map of a singular S_w: complex numbers and NaN rows
        row("lfda", lfda_s, lfda, None, None, data)
        print(f"  metric-learn's LFDA ({theirs_s:.2f} s) gives no usable map: {str(error).splitlines()[0]}")


if __name__ == "__main__":
    main()
