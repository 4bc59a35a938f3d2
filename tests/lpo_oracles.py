"""Brute-force oracles shared by the leave-p-out tests (not a test module).

Each enumerates all C(n, p) held-out sets, orders the remaining points of every
held-out point by (squared distance, index) and charges a vote cost to each k.
"""

from itertools import combinations

import numpy as np


def sq_dist(X):
    """Squared distances summed feature by feature from 0.0, as knnx does."""
    n = len(X)
    D = np.zeros((n, n))
    for f in range(X.shape[1]):
        D += (X[:, None, f] - X[None, :, f]) ** 2
    return D


def vote_cost(labels, true):
    """Expected error of a plurality vote with ties broken uniformly at random."""
    counts = np.bincount(labels)
    top = np.flatnonzero(counts == counts.max())
    return 1.0 - (1.0 / len(top) if true in top else 0.0)


def enumerate_lpo(X, y, p, k_max, cost):
    """Eq. (1) by enumeration; ``cost(d2, labels, true)`` is the error of one vote
    given the voters' squared distances and labels, in neighbour order."""
    n = len(X)
    D = sq_dist(X)
    risk = np.zeros(k_max)
    splits = list(combinations(range(n), p))
    for held in splits:
        train = np.array([r for r in range(n) if r not in held])
        for i in held:
            order = train[np.lexsort((train, D[i, train]))]
            for k in range(1, k_max + 1):
                nb = order[:k]
                risk[k - 1] += cost(D[i, nb], y[nb], y[i]) / p
    return risk / len(splits)


def brute_lpo(X, y, p, k_max):
    """Plurality kNN: eq. (1) by enumeration of every split."""
    return enumerate_lpo(X, y, p, k_max, lambda d2, labels, true: vote_cost(labels, true))


def write_labelled_csv(path, X, y):
    """A two-feature CSV with label column ``cls`` (floats written exactly)."""
    path.write_text(
        "x1,x2,cls\n" + "".join(f"{a!r},{b!r},{c}\n" for (a, b), c in zip(X.tolist(), y, strict=True))
    )
