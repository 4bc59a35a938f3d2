"""Hybrid selections: editing, then removing the rows the others make redundant
(Wilson & Martinez 2000; Brighton & Mellish 2002).

Both start with :class:`knnx.reduction.ENN`'s noise filter and then remove rows on
counts taken over neighbour sets, in numba kernels (:mod:`knnx._kernels.hybrid`) that
keep no n x n matrix: a row's distances are made when its counts need them.
"""

import numpy as np

from knnx._kernels import lazy
from knnx.reduction.condensing import _store
from knnx.reduction.editing import Voting, _edit

H = lazy("knnx._kernels.hybrid")


class DROP3(Voting):
    """Wilson and Martinez's DROP3 (Wilson & Martinez 2000, "Reduction techniques for
    instance-based learning algorithms"):

    1. noise filter: S is the rows :class:`knnx.reduction.ENN` keeps (their k nearest
       other rows vote for their class);
    2. the rows of S are visited from the farthest from its nearest enemy (the nearest
       row of S of another class) to the nearest;
    3. every row given (S's and the filtered ones: DROP2's associates come from the
       original set) keeps its k + 1 nearest other rows in S; the associates of p are
       the rows whose list holds p. p leaves S when at least as many of its associates
       are classified correctly without p as with p (the vote of the first k of their
       list, p included or skipped); each associate's list then drops p and takes the
       next nearest row of S.

    The choices the paper leaves open, and knnx's: the filter's k and tie are the
    selection's; nearest enemies are searched in S after the filter; distance ties by
    row index everywhere, so the visiting order is by (enemy distance decreasing, row
    index); an associate's vote is knnx's kNN vote (``tie``), and a list with no other
    row votes for no class (its row counts as misclassified).

    Parameters
    ----------
    k : int, default 3
        The neighbours that vote, in the filter and in the removal rule (the paper's
        k = 3).
    tie, metric, metric_params, nominal : as :class:`knnx.reduction.ENN`'s.

    Attributes
    ----------
    sample_indices_, metric_ : as :class:`knnx.reduction.ENN`'s. filtered_ : ndarray of
    int, the rows the noise filter kept.

    Notes
    -----
    KEEL's ``DROP3`` differs: its filter and enemy distances use every row (its
    default k is 1), and its removal test classifies p's own k + 1 neighbours, not its
    associates (docs/reduction.md).
    """

    def _select(self, X, y, metric):
        n, n_classes = len(y), int(y.max()) + 1
        in_s = _edit(X, y, metric, np.arange(n), self.k, self.tie)
        self.filtered_ = np.flatnonzero(in_s)
        R, RT, fitted, _, top_d, top_i = _store(X, metric, self.k + 1)
        enemy, D = np.empty(n), np.empty(n)
        H.drop_lists(in_s, metric.code, R, RT, y, *fitted, top_d, top_i, enemy, D)
        s = self.filtered_
        order = s[np.lexsort((s, -enemy[s]))]
        tie = H.TIE_NEAREST if self.tie == "nearest" else H.TIE_LOWEST
        H.drop_pass(order, in_s, metric.code, R, RT, y, n_classes, tie, *fitted, top_d, top_i)
        return np.flatnonzero(in_s)


class ICF(Voting):
    """Brighton and Mellish's iterative case filtering (Brighton & Mellish 2002,
    "Advances in instance selection for instance-based learning algorithms"):

    1. Wilson's editing (:class:`knnx.reduction.ENN`: k, tie);
    2. repeat on the rows left: a row's local set is the rows of its class strictly
       nearer to it than its nearest row of another class (itself excluded; every row of
       its class when no other class is left); its reachable set is its local set, its
       coverage set the rows whose local set holds it; every row whose reachable set is
       larger than its coverage set is removed (all at once); until a round removes
       nothing.

    The choices the paper leaves open, and knnx's: local sets and nearest enemies are
    recomputed on the rows left at every round; distances compare on the search's
    reduced distance (ties: "strictly nearer" leaves a row at the enemy's distance out).

    Parameters
    ----------
    k : int, default 3
        The editing's neighbours.
    tie, metric, metric_params, nominal : as :class:`knnx.reduction.ENN`'s.

    Attributes
    ----------
    sample_indices_, metric_ : as :class:`knnx.reduction.ENN`'s. filtered_ : the rows
    the editing kept. n_iter_ : int, the rounds made (the last removed nothing).

    Notes
    -----
    KEEL's ``ICF`` differs: it computes nearest enemies once, on every row before the
    editing, and removes a row when its coverage is larger than its reachable set (the
    opposite comparison; docs/reduction.md).
    """

    def _select(self, X, y, metric):
        rows = np.flatnonzero(_edit(X, y, metric, np.arange(len(y)), self.k, self.tie))
        self.filtered_ = rows
        R = metric.prepare(X)
        fitted = (metric.power, metric.kinds, metric.scale, metric.vd, metric.vd_off, metric.n_vals)
        self.n_iter_ = 0
        while True:
            self.n_iter_ += 1
            sub = np.ascontiguousarray(R[rows])
            subT = np.ascontiguousarray(sub.T) if metric.code == 0 else np.empty((0, 0))
            m = len(rows)
            reach, cover = np.zeros(m, dtype=np.intp), np.zeros(m, dtype=np.intp)
            H.icf_counts(
                metric.code, sub, subT, np.ascontiguousarray(y[rows]), *fitted, reach, cover, np.empty(m)
            )
            drop = reach > cover
            if not drop.any():
                return rows
            rows = rows[~drop]
