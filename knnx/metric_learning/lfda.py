"""Local Fisher discriminant analysis (Sugiyama 2007, JMLR 8)."""

from numbers import Integral

import numpy as np
import scipy.linalg
from sklearn.utils._param_validation import Interval, StrOptions

from knnx.metric_learning.base import K, LinearMetric, sign_fixed
from knnx.neighbors.search import kneighbors


class LFDA(LinearMetric):
    """Sugiyama's LFDA, in closed form: the generalised symmetric eigenvectors of
    ``S_b v = lambda S_w v`` (scipy's ``eigh``) with the largest eigenvalues, where

        S_w = 1/2 sum_ij W^w_ij (x_i - x_j)(x_i - x_j)^T,  W^w_ij = A_ij / n_c
        S_b = 1/2 sum_ij W^b_ij (x_i - x_j)(x_i - x_j)^T,  W^b_ij = A_ij (1/n - 1/n_c)

    for i, j of one class c (n_c rows), ``W^w_ij = 0`` and ``W^b_ij = 1/n`` for rows of
    two classes, and the local scaling affinity ``A_ij = exp(-||x_i - x_j||^2 /
    (sigma_i sigma_j))``, sigma_i the distance from x_i to its k-th nearest other row of
    its class (knnx's exact search; A_ij = 0 where sigma_i sigma_j = 0). Each class's
    affinities are summed one row at a time (no n x n matrix).

    ``embedding``: ``weighted`` (the paper's: each eigenvector, normalised to
    ``v^T S_w v = 1``, times the square root of its eigenvalue, 0 for a negative one),
    ``orthonormalized`` (the eigenvectors' orthonormal basis, ``numpy.linalg.qr``) or
    ``plain``; each row's sign with its entry of largest magnitude positive. When S_w
    is singular (a constant column, fewer rows than features) 1e-9 times its mean
    diagonal is added to its diagonal.

    Parameters
    ----------
    n_components : int or None, default None (the number of features)
    k : int, default 7
        The neighbour of the local scaling (the paper's 7; a class of fewer rows uses
        its last one).
    embedding : {"weighted", "orthonormalized", "plain"}, default "weighted"

    Attributes
    ----------
    components_ : ndarray (r, d). eigenvalues_ : ndarray (r,).
    objective_ : float, the sum of the r eigenvalues (the LFDA criterion
    ``tr((L S_w L^T)^-1 L S_b L^T)`` at the solution). n_iter_ : 0 (closed form).

    Notes
    -----
    metric-learn's LFDA (0.7.0) subtracts ``-S_w`` where S_w is due, solving
    ``(S_b + 2 S_w) v = lambda S_w v``: the same eigenvectors, eigenvalues larger by 2,
    so its ``weighted`` map scales each direction by sqrt(lambda + 2) for knnx's
    sqrt(lambda); its default k is min(7, d - 1).
    """

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "k": [Interval(Integral, 1, None, closed="left")],
        "embedding": [StrOptions({"weighted", "orthonormalized", "plain"})],
    }

    def __init__(self, n_components=None, k=7, embedding="weighted"):
        self.n_components = n_components
        self.k = k
        self.embedding = embedding

    def _learn(self, X, y, n_out):
        S_b, S_w = scatters(X, y, self.k)
        try:
            w, V = scipy.linalg.eigh(S_b, S_w)
        except np.linalg.LinAlgError:
            ridge = 1e-9 * max(np.trace(S_w) / len(S_w), np.finfo(float).tiny)
            w, V = scipy.linalg.eigh(S_b, S_w + ridge * np.eye(len(S_w)))
        order = np.argsort(-w, kind="stable")[:n_out]
        w, V = w[order], V[:, order]
        if self.embedding == "weighted":
            V = V * np.sqrt(np.clip(w, 0.0, None))
        elif self.embedding == "orthonormalized":
            V, _ = np.linalg.qr(V)
        self.eigenvalues_ = w
        return sign_fixed(V.T), float(np.sum(w)), 0


def scatters(X, y, k):
    """``(S_b, S_w)`` of :class:`LFDA` for rows X, class codes y and scaling neighbour k."""
    n, d = X.shape
    S_w = np.zeros((d, d))
    local = np.zeros((d, d))  # sum_c G_c / n - sum_c (n_c X_c^T X_c - s_c s_c^T) / n
    for c in np.unique(y):
        Xc = np.ascontiguousarray(X[y == c])
        n_c = len(Xc)
        if n_c > 1:
            dist, _ = kneighbors(Xc, min(k, n_c - 1), squared=False)
            sigma = np.ascontiguousarray(dist[:, -1])
        else:
            sigma = np.zeros(1)
        G = K.lfda_class_scatter(Xc, sigma)
        G = (G + G.T) / 2
        S_w += G / n_c
        s_c = Xc.sum(axis=0)
        local += (G - (n_c * Xc.T @ Xc - np.outer(s_c, s_c))) / n
    s = X.sum(axis=0)
    S_m = (n * X.T @ X - np.outer(s, s)) / n + local
    S_b = S_m - S_w
    return (S_b + S_b.T) / 2, (S_w + S_w.T) / 2
