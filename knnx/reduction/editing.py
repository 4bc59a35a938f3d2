"""Editing: removing the rows their neighbours contradict (Wilson 1972; Tomek 1976).

Each method's votes are knnx's kNN vote (:class:`knnx.KNNClassifier`'s plurality and
``tie`` rule) over a row's k nearest *other* rows (:func:`knnx.kneighbors`'s
leave-one-out graph: the row itself excluded, its duplicates not), under the fitted
metric. So "misclassified by its k nearest neighbours" means: knnx's kNN fitted on
every other row predicts another class.
"""

import numpy as np

from knnx._kernels import lazy
from knnx.estimators.base import search_metric
from knnx.estimators.knn import _TIE_CODES, TIE_RULES
from knnx.estimators.params import AnyOf, Interval, Literal, Options
from knnx.limits import MAX_PATIENCE, MAX_SEED
from knnx.neighbors.search import kneighbors
from knnx.reduction.base import SELECTION_METRIC, Selection, keep_every_class, loo_graph

V = lazy("knnx._kernels.vote")

_EDIT_CONSTRAINTS = {
    "k": Interval(1, integer=True),
    "tie": Options(*(t for t in TIE_RULES if t != "random")),
    **SELECTION_METRIC,
}


def agrees(neigh_ind, y, n_classes, tie, own):
    """Whether the plurality vote of each row's neighbours (``neigh_ind``: ordered rows
    of which ``y`` gives the classes; a tie broken by ``tie``) is the row's own class
    ``own``: a boolean per row."""
    m = neigh_ind.shape[0]
    pred = np.empty(m, dtype=np.intp)
    proba = np.empty((m, n_classes))
    no_dist, no_draws = np.empty((m, 0)), np.empty(0)
    V.vote(0, m, neigh_ind, no_dist, y, n_classes, False, _TIE_CODES[tie], no_draws, pred, proba)
    return pred == own


def _k_within(k, rows):
    """``k``, or ValueError when there are not k other rows to vote."""
    if k >= rows:
        raise ValueError(
            f"k={k} needs more than {k} rows (each row's k nearest others), got n_samples = {rows}"
        )
    return k


class Voting(Selection):
    """A selection whose rule is a vote of each row's k nearest other rows: the
    parameters (``k``, ``tie``, the metric) and their checks that :class:`ENN`,
    :class:`knnx.reduction.DROP3` and :class:`knnx.reduction.ICF` share."""

    _parameter_constraints = _EDIT_CONSTRAINTS
    # k nearest *other* rows: validation refuses k >= the smallest training part
    _neighbor_param = ("k", 1)

    def __init__(self, k=3, tie="nearest", metric="euclidean", metric_params=None, nominal=None):
        self.k = k
        self.tie = tie
        self.metric = metric
        self.metric_params = metric_params
        self.nominal = nominal


class ENN(Voting):
    """Wilson's edited nearest neighbour rule (Wilson 1972, "Asymptotic properties of
    nearest neighbor rules using edited data"): a row is removed when the plurality of
    its k nearest other rows, all of them searched among the rows given, is another
    class; every decision is made on the rows as given (one pass, then the removals).

    Parameters
    ----------
    k : int, default 3
        Neighbours that vote (Wilson: k = 3). Must be below the number of rows.
    tie : {"nearest", "lowest"}, default "nearest"
        A tie between classes at the top of a vote goes to the class of the nearest
        neighbour among them (``nearest``) or the lowest class code (``lowest``, which is
        imbalanced-learn's ``kind_sel="mode"``), as :class:`knnx.KNNClassifier`'s
        ``tie``. A row kept by a tie is kept only if the tie goes to its class.
    metric, metric_params, nominal :
        The distance, as :class:`knnx.KNNClassifier`'s, fitted on the rows given.

    Attributes
    ----------
    sample_indices_ : ndarray of int, the rows kept (increasing).
    metric_ : the fitted metric.

    Notes
    -----
    imbalanced-learn's ``EditedNearestNeighbours(kind_sel="mode",
    sampling_strategy="all")`` keeps the same rows on data without distance ties at
    the k-th neighbour and with ``tie="lowest"`` (its default ``kind_sel="all"``
    removes a row any neighbour of another class disagrees with, and its default
    strategy edits every class but the smallest). A class every row of which would be
    removed keeps its rows (:mod:`knnx.reduction.base`).
    """

    def _select(self, X, y, metric):
        return np.flatnonzero(_edit(X, y, metric, np.arange(len(y)), self.k, self.tie))


def _edit(X, y, metric, rows, k, tie):
    """One ENN pass on ``X[rows]``: the mask (over ``rows``) of the rows it keeps, a class
    it would empty kept whole."""
    _, ind = loo_graph(X, _k_within(k, len(rows)), metric, rows)
    keep = agrees(ind, y, int(y.max()) + 1, tie, y[rows])
    return keep_every_class(keep, y[rows])


class RENN(ENN):
    """Repeated ENN (Tomek 1976, "An experiment with the edited nearest-neighbor
    rule"): :class:`ENN` applied to the rows the previous application kept, until one
    removes nothing (or k rows or fewer are left, too few for a vote of k others);
    each application searches among the rows it is given only. The
    metric is fitted once, on every row given (its ranges and tables do not move
    between applications).

    Parameters are :class:`ENN`'s, plus ``max_iter`` (default 100: applications at most;
    each removes a row at least, so n - 1 always suffice).

    Attributes
    ----------
    sample_indices_, metric_ : as :class:`ENN`'s. n_iter_ : int, the applications made
    (the last removed nothing, unless ``max_iter`` stopped it).

    Notes
    -----
    imbalanced-learn's ``RepeatedEditedNearestNeighbours(kind_sel="mode",
    sampling_strategy="all")`` applies the same rule and stops, besides, when a class
    other than the smallest becomes smaller than the smallest was, or one disappears;
    where neither happens it keeps the same rows.
    """

    _parameter_constraints = {**_EDIT_CONSTRAINTS, "max_iter": Interval(1, integer=True)}

    def __init__(
        self, k=3, tie="nearest", metric="euclidean", metric_params=None, nominal=None, max_iter=100
    ):
        super().__init__(k, tie, metric, metric_params, nominal)
        self.max_iter = max_iter

    def _select(self, X, y, metric):
        rows = np.arange(len(y))
        _k_within(self.k, len(rows))
        self.n_iter_ = 0
        while self.n_iter_ < self.max_iter and len(rows) > self.k:
            keep = _edit(X, y, metric, rows, self.k, self.tie)
            self.n_iter_ += 1
            if keep.all():
                break
            rows = rows[keep]
        return rows


class AllKNN(ENN):
    """All k-NN (Tomek 1976): a row is removed when, for some i in 1..k, the vote of its
    i nearest other rows is another class; every vote is taken among the rows given
    (one neighbour graph of width k, its first i columns for each i), as KEEL's
    ``AllKNN`` does.

    Parameters are :class:`ENN`'s (``k``: the largest neighbourhood, default 3).

    Notes
    -----
    imbalanced-learn's ``AllKNN`` edits successively (i = 2 votes among the rows i = 1
    kept, and so on) and stops when a class becomes smaller than the smallest was: it
    removes fewer rows, which :mod:`tests.test_reduction` shows on data where the
    two differ.
    """

    def _select(self, X, y, metric):
        _, ind = loo_graph(X, _k_within(self.k, len(y)), metric)
        n_classes = int(y.max()) + 1
        keep = np.ones(len(y), dtype=bool)
        for i in range(1, self.k + 1):
            keep &= agrees(np.ascontiguousarray(ind[:, :i]), y, n_classes, self.tie, y)
        return np.flatnonzero(keep)


class TomekLinks(Selection):
    """Tomek links (Tomek 1976, "Two modifications of CNN"): two rows of different
    classes each of which is the other's nearest neighbour (under knnx's order, ties by
    row index) form a link; both are removed (imbalanced-learn's
    ``TomekLinks(sampling_strategy="all")``, which keeps the same rows on data without
    ties at the nearest neighbour).

    Parameters
    ----------
    metric, metric_params, nominal : as :class:`ENN`'s.

    Attributes
    ----------
    sample_indices_, metric_ : as :class:`ENN`'s. links_ : ndarray (n_links, 2), the
    links found (each pair once, lower row first).
    """

    _parameter_constraints = dict(SELECTION_METRIC)

    def __init__(self, metric="euclidean", metric_params=None, nominal=None):
        self.metric = metric
        self.metric_params = metric_params
        self.nominal = nominal

    def _select(self, X, y, metric):
        _, ind = loo_graph(X, _k_within(1, len(y)), metric)
        nearest = ind[:, 0]
        rows = np.arange(len(y))
        linked = (nearest[nearest] == rows) & (y[nearest] != y)
        pairs = np.column_stack([rows[linked], nearest[linked]])
        self.links_ = pairs[pairs[:, 0] < pairs[:, 1]]
        return np.flatnonzero(~linked)


class NCR(ENN):
    """Laurikkala's neighbourhood cleaning rule (Laurikkala 2001, "Improving
    identification of difficult small classes by balancing class distribution"): with C
    the class of interest and O the other classes, remove

    * A1: the rows of O that :class:`ENN`'s vote (their k nearest other rows) misclassifies;
    * A2: the rows of O among the k nearest other rows of a row of C that the same vote
      misclassifies, when their class Ci is not small: ``|Ci| >= threshold * |C|``.

    Every vote is taken among the rows given (one neighbour graph). The choices the paper
    leaves open, and knnx's: C is the smallest class (the lowest class code on a tie in
    size); the vote is :class:`ENN`'s (k = 3, as the paper; ties by ``tie``).

    Parameters
    ----------
    k, tie, metric, metric_params, nominal : as :class:`ENN`'s.
    threshold : float, default 0.5
        The size, relative to C, from which a class is cleaned in A2 (the paper's 0.5).

    Attributes
    ----------
    sample_indices_, metric_ : as :class:`ENN`'s. target_ : int, the class code of C
    (an index into the sorted class labels).

    Notes
    -----
    imbalanced-learn's ``NeighbourhoodCleaningRule(sampling_strategy="all")`` differs in
    three ways: its A1 edits every class, C included; the vote that decides A2 counts the
    row itself among its k neighbours; and it cleans a class larger than
    ``threshold * |C|``, C included (docs/reduction.md shows both results).
    """

    _parameter_constraints = {**_EDIT_CONSTRAINTS, "threshold": Interval(0.0, None)}

    def __init__(
        self, k=3, tie="nearest", metric="euclidean", metric_params=None, nominal=None, threshold=0.5
    ):
        super().__init__(k, tie, metric, metric_params, nominal)
        self.threshold = threshold

    def _select(self, X, y, metric):
        _, ind = loo_graph(X, _k_within(self.k, len(y)), metric)
        counts = np.bincount(y)
        target = self.target_ = int(np.argmin(counts))
        wrong = ~agrees(ind, y, len(counts), self.tie, y)
        remove = wrong & (y != target)  # A1
        cleaned = (counts >= self.threshold * counts[target]) & (np.arange(len(counts)) != target)
        near = ind[wrong & (y == target)].ravel()
        remove[near[cleaned[y[near]]]] = True  # A2
        return np.flatnonzero(~remove)


class Multiedit(Selection):
    """Devijver and Kittler's multiedit (Devijver & Kittler 1980, "On the edited nearest
    neighbor rule"): repeat

    1. diffusion: the rows left are split at random into ``n_blocks`` blocks;
    2. classification: each row of block i is classified by 1-NN among the rows of block
       (i + 1) mod ``n_blocks``;
    3. editing: the rows misclassified are removed (all decisions of a round are made
       before any removal);

    until ``patience`` rounds in a row remove nothing, or fewer rows than blocks are
    left (a block would be empty).

    Draws come from ``np.random.default_rng(random_state)``: one ``permutation(m)`` of
    the m rows left per round, cut into blocks of sizes as equal as possible
    (``np.array_split``). 1-NN ties by (distance, row index).

    Parameters
    ----------
    n_blocks : int, default 3
        The paper's b (at least 3 for the asymptotic guarantee; 2 is allowed).
    patience : int in [1, 1000], default 2
        The paper's I: rounds in a row without a removal that stop it (at most
        :data:`knnx.limits.MAX_PATIENCE`).
    random_state : int or None, default None
        The seed of the draws; None counts as 0 (the runner sets the spec's seed).
    metric, metric_params, nominal : as :class:`ENN`'s.

    Attributes
    ----------
    sample_indices_, metric_ : as :class:`ENN`'s. n_rounds_ : int, the rounds made.
    """

    _parameter_constraints = {
        "n_blocks": Interval(2, integer=True),
        "patience": Interval(1, MAX_PATIENCE, integer=True),
        "random_state": AnyOf(Interval(0, MAX_SEED, integer=True), Literal(None)),
        **SELECTION_METRIC,
    }

    def __init__(
        self, n_blocks=3, patience=2, random_state=None, metric="euclidean", metric_params=None, nominal=None
    ):
        self.n_blocks = n_blocks
        self.patience = patience
        self.random_state = random_state
        self.metric = metric
        self.metric_params = metric_params
        self.nominal = nominal

    def _select(self, X, y, metric):
        rng = np.random.default_rng(0 if self.random_state is None else self.random_state)
        rows, quiet = np.arange(len(y)), 0
        self.n_rounds_ = 0
        while quiet < self.patience and len(rows) >= self.n_blocks:
            self.n_rounds_ += 1
            blocks = [np.sort(b) for b in np.array_split(rows[rng.permutation(len(rows))], self.n_blocks)]
            wrong = np.concatenate(
                [
                    block[y[_nearest_in(X, blocks[(i + 1) % self.n_blocks], block, metric)] != y[block]]
                    for i, block in enumerate(blocks)
                ]
            )
            quiet = quiet + 1 if wrong.size == 0 else 0
            rows = np.setdiff1d(rows, wrong)
        return rows


def _nearest_in(X, reference, queries, metric):
    """The nearest row of ``X[reference]`` (increasing row indices) to each row of
    ``X[queries]``, ties by row index, as an index into X."""
    _, ind = kneighbors(X[reference], 1, X[queries], metric=search_metric(metric))
    return reference[ind[:, 0]]
