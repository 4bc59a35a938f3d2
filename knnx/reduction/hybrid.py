"""Hybrid selections: editing, then removing the rows the others make redundant
(Wilson & Martinez 2000; Brighton & Mellish 2002), and Aha et al.'s IB3 (1991), which
grows a store and drops its noisy members by their records.

Both start with :class:`knnx.reduction.ENN`'s noise filter and then remove rows on
counts taken over neighbour sets, in numba kernels (:mod:`knnx._kernels.hybrid`) that
keep no n x n matrix: a row's distances are made when its counts need them.
"""

import numpy as np

from knnx._kernels import lazy
from knnx.estimators.params import AnyOf, Interval, Literal
from knnx.limits import MAX_SEED
from knnx.reduction.base import SELECTION_METRIC, Selection
from knnx.reduction.condensing import _store
from knnx.reduction.editing import Voting, _edit

H = lazy("knnx._kernels.hybrid")
IB = lazy("knnx._kernels.ib3")


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


class IB3(Selection):
    """Aha, Kibler and Albert's IB3 (Aha et al. 1991, "Instance-based learning
    algorithms"). The rows are processed one by one, in a random order; for each row x,
    with CD the concept description so far (empty at first):

    1. ymax is the most similar acceptable member of CD, else the r-th most similar
       member, r drawn uniformly (similarity: the distance, ties by row index);
    2. x joins CD when its class is not ymax's (the first row always joins);
    3. every member at least as similar to x as ymax (x itself excluded, having no
       similarity yet) records whether its class is x's; a member whose record is
       significantly poor leaves CD.

    A member is acceptable when the lower end of the confidence interval of its
    accuracy (its right records over its records) exceeds the upper end of the one of
    its class's observed frequency (the rows of its class over the rows processed so
    far, x included), at level ``accept_level``; it is significantly poor when the upper
    end of its accuracy's interval falls below the lower end of its class frequency's,
    at level ``drop_level``. Intervals are Wilson's score intervals of a proportion, the
    form the paper uses, at the normal quantile z = Phi^-1((1 + level) / 2). The rows
    kept are the members of CD acceptable at the end (IB3 classifies with those only),
    and, for a class none of whose members is acceptable, its members (knnx's choice:
    the class rule of every selection would otherwise bring back all its rows).

    The choices the paper leaves open, and knnx's: the order (a random permutation:
    a file sorted by class would be pathological); the levels, 0.9 and 0.7 (Wilson and
    Martinez's and KEEL's); ties by row index. Draws come from
    ``np.random.default_rng(random_state)``: ``permutation(n)``, then ``random(n)``
    (row t's r is floor(u_t |CD|)).

    Parameters
    ----------
    accept_level, drop_level : float in (0, 1), defaults 0.9 and 0.7
    random_state : int or None, default None (counts as 0; the runner sets the seed)
    metric, metric_params, nominal : as :class:`knnx.reduction.ENN`'s.

    Attributes
    ----------
    sample_indices_, metric_ : as :class:`knnx.reduction.ENN`'s. used_, right_ : ndarray
    of int, each row's classification record at the end.

    Notes
    -----
    KEEL's ``IB3`` replaces the interval tests with accuracy × 0.9 > frequency (accept)
    and accuracy < 0.7 × frequency (drop), counts a member's class frequency from the
    row it joined, updates the row just added, and keeps every member at the end,
    acceptable or not (docs/reduction.md).
    """

    _parameter_constraints = {
        "accept_level": Interval(0, 1, low_open=True, high_open=True),
        "drop_level": Interval(0, 1, low_open=True, high_open=True),
        "random_state": AnyOf(Interval(0, MAX_SEED, integer=True), Literal(None)),
        **SELECTION_METRIC,
    }

    def __init__(
        self,
        accept_level=0.9,
        drop_level=0.7,
        random_state=None,
        metric="euclidean",
        metric_params=None,
        nominal=None,
    ):
        self.accept_level = accept_level
        self.drop_level = drop_level
        self.random_state = random_state
        self.metric = metric
        self.metric_params = metric_params
        self.nominal = nominal

    def _select(self, X, y, metric):
        from scipy.stats import norm

        n = len(y)
        rng = np.random.default_rng(0 if self.random_state is None else self.random_state)
        order, u = rng.permutation(n), rng.random(n)
        R = metric.prepare(X)
        fitted = (metric.power, metric.kinds, metric.scale, metric.vd, metric.vd_off, metric.n_vals)
        z_accept, z_drop = (
            float(norm.ppf((1 + level) / 2)) for level in (self.accept_level, self.drop_level)
        )
        self.used_, self.right_ = np.zeros(n, dtype=np.intp), np.zeros(n, dtype=np.intp)
        keep = IB.ib3(
            order, u, metric.code, R, y, int(y.max()) + 1, z_accept, z_drop, *fitted, self.used_, self.right_
        )
        return np.flatnonzero(keep)


class HMNEI(Selection):
    """Marchiori's hit-miss network iterative editing (Marchiori 2008, "Hit miss networks
    with applications to instance selection", JMLR 9; Marchiori's 2010 paper on
    class-conditional selection is another method, CCIS). On the rows S left (all at first), each row points to its nearest other row
    of every class; a row's hits and misses are the rows pointing to it from its own
    class and from another. With w the share of a row's class in S and n_c its rows:

    * R1: a row is removed when w * misses + ``epsilon`` > (1 - w) * hits;
    * R2: a class left with fewer than 4 rows gets back its removed rows with a hit or a
      miss;
    * R3: with more than 3 classes, a removed row with a hit or a miss and fewer misses
      than floor(C / 2) comes back;
    * R4: a removed row with at least floor(n_c / 4) hits comes back.

    The edit is repeated while it removes rows and the training rows classified
    correctly (each by its nearest other row of S, ties by row index) do not decrease;
    the rows kept are S before the last edit that failed either test.

    The rules are stated here as KEEL's ``HMNEI`` applies them: the paper was not at
    hand to check them against. knnx's choices: the nearest rows and the training
    accuracy count duplicates (KEEL skips neighbours at distance 0 in the accuracy).

    Parameters
    ----------
    epsilon : float >= 0, default 0.1
    metric, metric_params, nominal : as :class:`knnx.reduction.ENN`'s.

    Attributes
    ----------
    sample_indices_, metric_ : as :class:`knnx.reduction.ENN`'s. n_iter_ : int, the
    edits made (the last one undone). n_correct_ : int, the training rows the rows kept
    classify correctly.
    """

    _parameter_constraints = {"epsilon": Interval(0, None), **SELECTION_METRIC}

    def __init__(self, epsilon=0.1, metric="euclidean", metric_params=None, nominal=None):
        self.epsilon = epsilon
        self.metric = metric
        self.metric_params = metric_params
        self.nominal = nominal

    def _select(self, X, y, metric):
        n, n_classes = len(y), int(y.max()) + 1
        R_, RT, fitted, _, _, _ = _store(X, metric, 1)
        D = np.empty(n)
        in_s = np.ones(n, dtype=np.bool_)
        right = H.nearest_member_right(in_s, metric.code, R_, RT, y, *fitted, D)
        self.n_iter_ = 0
        while True:
            self.n_iter_ += 1
            rows = np.flatnonzero(in_s)
            edited = np.zeros(n, dtype=np.bool_)
            edited[rows[self._edit(R_, y[rows], rows, metric, fitted, n_classes)]] = True
            new_right = H.nearest_member_right(edited, metric.code, R_, RT, y, *fitted, D)
            if edited.sum() == len(rows) or new_right < right:
                self.n_correct_ = right
                return rows
            in_s, right = edited, new_right

    def _edit(self, R_, y, rows, metric, fitted, n_classes):
        """One edit of the rows ``rows`` (their classes ``y``): the positions kept."""
        sub = np.ascontiguousarray(R_[rows])
        subT = np.ascontiguousarray(sub.T) if metric.code == 0 else np.empty((0, 0))
        hit, miss = np.zeros(len(rows), dtype=np.intp), np.zeros(len(rows), dtype=np.intp)
        H.hit_miss(metric.code, sub, subT, y, n_classes, *fitted, hit, miss, np.empty(len(rows)))
        counts = np.bincount(y, minlength=n_classes)
        w = counts[y] / len(rows)
        removed = w * miss + self.epsilon > (1 - w) * hit  # R1
        linked = hit + miss > 0
        kept_per_class = np.bincount(y[~removed], minlength=n_classes)
        back = linked & (kept_per_class[y] < 4)  # R2
        if n_classes > 3:
            back |= linked & (miss < n_classes // 2)  # R3
        back |= hit >= counts[y] // 4  # R4
        return np.flatnonzero(~(removed & ~back))
