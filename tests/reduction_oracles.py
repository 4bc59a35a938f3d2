"""Brute-force pieces the prototype-selection tests share: small datasets (one with
many distance ties and duplicates), every distance in NumPy, neighbour lists ordered by
(distance, row index) and knnx's plurality vote with its tie rule."""

import numpy as np


def blobs(seed, n=120, d=3, classes=3, noise=1.0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, classes, n)
    X = rng.normal(size=(n, d)) * noise + y[:, None] * 1.2
    return X, y


def grid(seed, n=90):
    """Small integer coordinates: many distance ties, duplicates included."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 4, (n, 2)).astype(float)
    y = (X[:, 0] + rng.integers(0, 2, n) > 2).astype(int) + (X[:, 1] > 2)
    return X, y


def neighbour_order(D):
    """Each row's other rows by (distance, index): a brute-force neighbour list."""
    n = len(D)
    out = []
    for i in range(n):
        others = [j for j in range(n) if j != i]
        out.append(sorted(others, key=lambda j: (D[i, j], j)))
    return out


def vote(labels, n_classes, tie):
    """knnx's plurality vote over ordered neighbour labels (tie: nearest or lowest)."""
    counts = np.bincount(labels, minlength=n_classes)
    top = np.flatnonzero(counts == counts.max())
    if tie == "lowest":
        return top[0]
    return next(c for c in labels if c in top)


def l1(X):
    """Manhattan distances, summed in feature order (d <= 8: NumPy sums in order)."""
    return np.abs(X[:, None, :] - X[None, :, :]).sum(-1)


def sq(X):
    return ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)


def distances(X, metric):
    """Every distance between rows of X under a fitted knnx metric, from knnx's own
    search (each row's whole ordered list, itself included): the matrix a brute-force
    rule reads under the metrics NumPy has no formula for here."""
    from knnx import kneighbors

    n = len(X)
    dist, ind = kneighbors(X, n, X, metric=metric)
    D = np.empty((n, n))
    np.put_along_axis(D, ind, dist, axis=1)
    return D
