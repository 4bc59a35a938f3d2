"""Exact leave-p-out cross-validation of kNN (Celisse & Mary-Huard 2011) and the k it selects.

The leave-p-out (LpO) estimate averages, over all C(n, p) ways of holding out p
points, the error rate of kNN trained on the other n - p points and evaluated
on the p held out (eq. 1 of the paper). knnx computes it exactly, for every
k = 1 .. k_max at once, from one leave-one-out neighbour graph of k_max + p - 1
neighbours, by the conditioning of Prop. 1: never by enumerating splits.
"""

import numbers

import numpy as np

from knnx._kernels import PARALLEL_LOCK
from knnx._kernels.lpo import log_binomial_table, lpo_uniform_sums, rank_probabilities
from knnx.errors import DataError
from knnx.neighbors import as_float_array, kneighbors

__all__ = ["lpo_risk", "lpo_risk_from_graph", "select_k", "RANK_FLOOR"]

RANK_FLOOR = 1e-17
"""Terms whose rank probability P(V = j) is below this are skipped (each term is at
most that probability, so the estimate moves by less than p * 1e-17)."""


def _check_int(name, value, low, high, what):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise DataError(f"{name}: expected an integer, got {value!r}")
    if not low <= value <= high:
        raise DataError(f"{name}: must be between {low} and {high} ({what}), got {value}")
    return int(value)


def _labels(y, n):
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != n:
        raise DataError(f"y: expected {n} labels (one per row of X), got shape {y.shape}")
    classes, codes = np.unique(y, return_inverse=True)
    return classes, codes.astype(np.intp)


def lpo_risk(X, y, p, k_max, weights="uniform"):
    """Exact leave-p-out risk of kNN for k = 1 .. k_max.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Class labels, any number of classes.
    p : int
        Points held out per split, 1 <= p < n_samples.
    k_max : int
        Largest k, 1 <= k_max <= n_samples - p.
    weights : {"uniform"}
        ``uniform``: plurality vote.

    Returns
    -------
    risk : ndarray of shape (k_max,)
        ``risk[k - 1]`` = R_LpO(k), eq. (1) of Celisse & Mary-Huard (2011): the error
        rate on the held-out points averaged over all C(n, p) splits.

    Notes
    -----
    * The kNN rule is :class:`knnx.KNNClassifier`'s: the neighbours of a held-out point
      among the n - p training points, ordered by (squared Euclidean distance, row
      index).
    * **Vote ties** are charged their expected cost under a uniform random choice
      among the tied classes: a tie among s classes that includes the true class
      costs 1 - 1/s, a tie that excludes it costs 1 (two classes, even k: a tie
      costs 1/2). KNNClassifier itself breaks ties deterministically (nearest
      neighbour's class), so the two agree wherever no tie occurs.
    * Multiclass, not only the paper's binary case: given the rank V = j of the
      k-th training neighbour, the error probability is a multivariate
      hypergeometric plurality probability, computed exactly by a dynamic
      programme over the classes that can still reach the true class's vote.
    * Terms with P(V = j) < :data:`RANK_FLOOR` (1e-17) are skipped; the estimate
      moves by less than p * 1e-17. Work is about n * k_max * W * W operations,
      W the range of q = V - k where P(V = k + q) >= 1e-17 (W grows with p/n).
    """
    X = as_float_array(X, "X")
    n = X.shape[0]
    _, codes = _labels(y, n)
    if n < 2:
        raise DataError(f"X: leave-p-out needs at least 2 samples, got {n}")
    p = _check_int("p", p, 1, n - 1, "1 <= p < n_samples")
    k_max = _check_int("k_max", k_max, 1, n - p, "1 <= k_max <= n_samples - p")
    if weights != "uniform":
        raise DataError(f"weights: expected 'uniform', got {weights!r}")
    _, neigh_ind = kneighbors(X, k_max + p - 1)
    return lpo_risk_from_graph(neigh_ind, codes, p, k_max)


def lpo_risk_from_graph(neigh_ind, y_codes, p, k_max):
    """:func:`lpo_risk` from a precomputed leave-one-out graph (at least k_max + p - 1
    neighbours per row, ordered by (distance, index)) and class codes 0 .. C - 1."""
    n = neigh_ind.shape[0]
    width = k_max + p - 1
    if neigh_ind.shape[1] < width:
        raise DataError(
            f"neigh_ind: needs k_max + p - 1 = {width} neighbours per row, has {neigh_ind.shape[1]}"
        )
    ind = np.ascontiguousarray(neigh_ind[:, :width], dtype=np.intp)
    y_codes = np.ascontiguousarray(y_codes, dtype=np.intp)
    n_classes = int(y_codes.max()) + 1
    PV = rank_probabilities(n, p, k_max, p - 1, RANK_FLOOR)
    used = np.flatnonzero(PV.any(axis=0))
    q_max = int(used[-1]) if used.size else 0
    PV = np.ascontiguousarray(PV[:, : q_max + 1])
    LC = log_binomial_table(width, q_max)
    with PARALLEL_LOCK:
        sums = lpo_uniform_sums(ind, y_codes, n_classes, p, k_max, PV, LC, RANK_FLOOR)
    total = np.zeros(k_max)
    for row in sums:  # in chunk order: the same sum whatever the thread count
        total += row
    return total / n


def select_k(X, y, p, k_max, weights="uniform"):
    """k chosen by exact leave-p-out: the smallest k among those of minimal risk.

    Returns ``(k_p, risk)`` with ``risk`` as in :func:`lpo_risk`. Risks within
    1e-12 of the minimum count as equal (the estimate is exact to about 1e-14).
    """
    risk = lpo_risk(X, y, p, k_max, weights)
    return _argmin_k(risk), risk


def _argmin_k(risk):
    return int(np.flatnonzero(risk <= risk.min() + 1e-12)[0]) + 1
