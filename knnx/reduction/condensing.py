"""Condensing: keeping a subset that classifies the rest (Hart 1968)."""

import numpy as np

from knnx._kernels import lazy
from knnx.estimators.base import search_metric
from knnx.estimators.params import AnyOf, Interval, Literal
from knnx.limits import MAX_SEED
from knnx.neighbors.search import kneighbors
from knnx.reduction.base import SELECTION_METRIC, Selection

K = lazy("knnx._kernels.reduction")


class CNN(Selection):
    """Hart's condensed nearest neighbour rule (Hart 1968, "The condensed nearest
    neighbor rule"), as KEEL's ``CNN`` runs it: the store starts with one row of each
    class; then, pass after pass, the rows outside the store are visited in a random
    order and each joins the store when the k nearest store members (the store as it
    is at that moment) vote for another class; the passes end with one that adds
    nothing. Every row outside the store is then classified correctly by the store.

    The choices Hart leaves open, and knnx's:

    * the start: one row of each class, drawn uniformly among its rows (Hart: the
      first row; KEEL: a random row of each class);
    * the order: a fresh random permutation of the rows at every pass (Hart: the
      given order);
    * the vote: the plurality of the k nearest store members (ties by (distance, row
      index)), a tie between classes going to the class of the nearest member among
      them; with fewer than k members, all of them vote. Hart's rule is k = 1.

    Draws come from ``np.random.default_rng(random_state)``: first the start row of each
    class in class order (``integers(n_c)``), then one ``permutation(n)`` per pass.

    Parameters
    ----------
    k : int, default 1
    random_state : int or None, default None
        The seed of the draws; None counts as 0 (the experiment runner sets it to the
        spec's seed).
    metric, metric_params, nominal : the distance, as :class:`knnx.KNNClassifier`'s.

    Attributes
    ----------
    sample_indices_ : ndarray of int, the store (increasing row order).
    n_passes_ : int, passes made (the last added nothing).
    metric_ : the fitted metric.

    Notes
    -----
    imbalanced-learn's ``CondensedNearestNeighbour`` is another rule: it keeps the
    smallest class whole, makes one pass per other class and refits a classifier
    after every addition (see docs/reduction.md).
    """

    _parameter_constraints = {
        "k": Interval(1, integer=True),
        "random_state": AnyOf(Interval(0, MAX_SEED, integer=True), Literal(None)),
        **SELECTION_METRIC,
    }
    # k nearest store members: validation refuses k >= the smallest training part (every
    # member but the row votes at k = n - 1; a larger k costs n x k arrays and changes nothing)
    _neighbor_param = ("k", 1)

    def __init__(self, k=1, random_state=None, metric="euclidean", metric_params=None, nominal=None):
        self.k = k
        self.random_state = random_state
        self.metric = metric
        self.metric_params = metric_params
        self.nominal = nominal

    def _select(self, X, y, metric):
        R, RT, fitted, in_store, top_d, top_i = _store(X, metric, self.k)
        n, n_classes = len(y), int(y.max()) + 1
        rng = np.random.default_rng(0 if self.random_state is None else self.random_state)
        scratch = np.empty(n)
        for c in range(n_classes):
            rows = np.flatnonzero(y == c)
            if rows.size:
                start = rows[rng.integers(rows.size)]
                K.store_add(start, in_store, metric.code, R, RT, *fitted, top_d, top_i, scratch)
        self.n_passes_ = 0
        while True:
            self.n_passes_ += 1
            order = rng.permutation(n)
            added = K.condense_pass(order, in_store, metric.code, R, RT, y, n_classes, *fitted, top_d, top_i)
            if added == 0:
                return np.flatnonzero(in_store)


class FCNN(Selection):
    """The fast condensed nearest neighbour rule (Angiulli 2007, "Fast nearest neighbor
    condensation for large data sets classification", FCNN1), as KEEL's ``FCNN`` runs
    it: the store starts with the row of each class nearest to the class's centre;
    then, round after round, the rows outside the store that its k nearest members
    misvote are each offered to those members, every member takes the nearest row
    offered to it (its representative: the nearest enemy in its Voronoi cell), and the
    representatives join the store; the rounds end when no member has one. Every row
    outside the store is then classified correctly by the store. Order-independent and
    without draws: the same rows give the same store.

    The choices the paper leaves open, and knnx's:

    * a class's centre: the mean of its rows as the metric searches them (after its map:
      seuclidean, mahalanobis, cosine, one-hot), except that a nominal attribute (every
      attribute under hamming) takes its most frequent value (the lowest on a tie) and a
      missing value is left out;
    * the vote: the plurality of the k nearest store members, a tie going to the class
      of the nearest among them (KEEL: the lowest class); k = 1 is the paper's FCNN1;
    * ties in distance: by row index (the nearest row to a centre, a member's
      representative).

    Parameters
    ----------
    k : int, default 1
    metric, metric_params, nominal : the distance, as :class:`knnx.KNNClassifier`'s.

    Attributes
    ----------
    sample_indices_ : ndarray of int, the store (increasing row order).
    n_rounds_ : int, the rounds made (the last found no representative).
    metric_ : the fitted metric.
    """

    _parameter_constraints = {"k": Interval(1, integer=True), **SELECTION_METRIC}
    # k nearest store members: validation refuses k >= the smallest training part (every
    # member but the row votes at k = n - 1; a larger k costs n x k arrays and changes nothing)
    _neighbor_param = ("k", 1)

    def __init__(self, k=1, metric="euclidean", metric_params=None, nominal=None):
        self.k = k
        self.metric = metric
        self.metric_params = metric_params
        self.nominal = nominal

    def _select(self, X, y, metric):
        R, RT, fitted, in_store, top_d, top_i = _store(X, metric, self.k)
        n, n_classes = len(y), int(y.max()) + 1
        delta = np.array(
            [
                K.nearest_row(_centre(R[y == c], metric), np.flatnonzero(y == c), metric.code, R, *fitted)
                for c in range(n_classes)
                if (y == c).any()
            ],
            dtype=np.intp,
        )
        rep = np.empty(n, dtype=np.intp)
        self.n_rounds_ = 0
        while delta.size:
            self.n_rounds_ += 1
            K.fcnn_round(delta, in_store, metric.code, R, RT, y, n_classes, *fitted, top_d, top_i, rep)
            delta = np.unique(rep[rep >= 0])
        return np.flatnonzero(in_store)


def _store(X, metric, k):
    """What a condensing kernel works on: the rows as the metric searches them (``R``),
    ``R`` transposed for code 0 (the Euclidean path takes every distance to a row at
    once), the metric's fitted arrays, and an empty store (membership, and each row's
    k nearest members: distances and indices, -1 for none yet)."""
    R = metric.prepare(X)
    n = R.shape[0]
    RT = np.ascontiguousarray(R.T) if metric.code == 0 else np.empty((0, 0))
    fitted = (metric.power, metric.kinds, metric.scale, metric.vd, metric.vd_off, metric.n_vals)
    top_d, top_i = np.full((n, k), np.inf), np.full((n, k), -1, dtype=np.intp)
    return R, RT, fitted, np.zeros(n, dtype=np.bool_), top_d, top_i


def _centre(rows, metric):
    """A class's centre, one row (see :class:`FCNN`): column means without the missing
    values, the most frequent value of a nominal column (every column under hamming)."""
    with np.errstate(all="ignore"):
        centre = np.nanmean(rows, axis=0) if np.isnan(rows).any() else rows.mean(axis=0)
    nominal = (
        range(rows.shape[1]) if metric.name == "hamming" else np.flatnonzero(metric.kinds == 1)
    )  # NOMINAL
    if metric.code != 0:
        for t in nominal:
            values, counts = np.unique(rows[:, t][~np.isnan(rows[:, t])], return_counts=True)
            if values.size:  # the most frequent value, the lowest on a tie (hamming: any numbers)
                centre[t] = values[np.argmax(counts)]
    return np.ascontiguousarray(centre[None, :])


class RNN(CNN):
    """Gates' reduced nearest neighbour rule (Gates 1972, "The reduced nearest neighbor
    rule"): Hart's store (:class:`CNN`, k = 1, its draws from ``random_state``), then
    each member in turn, in increasing row order, leaves the store when every training
    row it classifies correctly by 1-NN (its nearest member, ties by row index) is still
    classified correctly by the members that remain. Hart's store classifies every
    training row correctly (but a member whose duplicate of another class comes first),
    so this is Gates' rule: a member leaves when no row of the training part becomes
    misclassified.

    Parameters
    ----------
    random_state, metric, metric_params, nominal : as :class:`CNN`'s.

    Attributes
    ----------
    sample_indices_ : ndarray of int, the reduced store (increasing row order).
    cnn_indices_ : ndarray of int, Hart's store it started from.
    n_passes_, metric_ : as :class:`CNN`'s.

    Notes
    -----
    KEEL's ``RNN`` is another rule: it starts from every training row (not Hart's store)
    and removes a row when the training accuracy of the rows left is no lower than the
    leave-one-out accuracy of all of them.
    """

    _parameter_constraints = {
        "random_state": AnyOf(Interval(0, MAX_SEED, integer=True), Literal(None)),
        **SELECTION_METRIC,
    }
    _neighbor_param = None  # k is 1

    def __init__(self, random_state=None, metric="euclidean", metric_params=None, nominal=None):
        super().__init__(1, random_state, metric, metric_params, nominal)

    def _select(self, X, y, metric):
        store = super()._select(X, y, metric)
        self.cnn_indices_ = store
        in_store = np.zeros(len(y), dtype=np.bool_)
        in_store[store] = True
        # each row's nearest member (a member's is itself, or a duplicate of lower index),
        # searched among the rows as the kernel reads them: code 0 on the mapped rows R
        # themselves (a map such as mahalanobis's product, made on a subset, could round
        # otherwise), the other metrics (which map no row) under the fitted metric
        R = metric.prepare(X)
        if metric.code == 0:
            _, ind = kneighbors(R[store], 1, R)
        else:
            _, ind = kneighbors(X[store], 1, X, metric=search_metric(metric))
        nearest = np.ascontiguousarray(store[ind[:, 0]])
        fitted = (metric.power, metric.kinds, metric.scale, metric.vd, metric.vd_off, metric.n_vals)
        K.reduce_store(in_store, store, nearest, metric.code, R, y, *fitted)
        return np.flatnonzero(in_store)


class OSS(Selection):
    """Kubat and Matwin's one-sided selection (Kubat & Matwin 1997, "Addressing the curse
    of imbalanced training sets: one-sided selection"), with C the smallest class:

    1. the store starts with every row of C and one row of each other class, drawn
       uniformly among its rows;
    2. every other row is classified by 1-NN among that store, and the rows
       misclassified join it (one pass; the store classifies as it was at the start);
    3. the rows of the store of a class other than C that form a Tomek link within the
       store (:class:`knnx.reduction.TomekLinks`) are removed.

    The choices the paper (two classes) leaves open, and knnx's: C is the smallest class
    (the lowest class code on a tie in size); with more classes, the store starts with a
    row of each other class and step 3 removes the links' rows of every class but C.
    1-NN ties by (distance, row index). Draws come from
    ``np.random.default_rng(random_state)``: the start row of each class but C, in class
    order (``integers(n_c)``).

    Parameters
    ----------
    random_state : int or None, default None
        The seed of the draws; None counts as 0 (the runner sets the spec's seed).
    metric, metric_params, nominal : the distance, as :class:`knnx.KNNClassifier`'s.

    Attributes
    ----------
    sample_indices_, metric_ : as :class:`CNN`'s. target_ : int, the class code of C.

    Notes
    -----
    imbalanced-learn's ``OneSidedSelection`` is the same rule on two classes (its start
    row drawn by ``RandomState(random_state).randint``, so another row for the same
    seed); with more classes it classifies each class against C and its own start row
    only, and it keeps step 2's one-pass 1-NN from scikit-learn (ties by its search).
    """

    _parameter_constraints = {
        "random_state": AnyOf(Interval(0, MAX_SEED, integer=True), Literal(None)),
        **SELECTION_METRIC,
    }

    def __init__(self, random_state=None, metric="euclidean", metric_params=None, nominal=None):
        self.random_state = random_state
        self.metric = metric
        self.metric_params = metric_params
        self.nominal = nominal

    def _select(self, X, y, metric):
        counts = np.bincount(y)
        target = self.target_ = int(np.argmin(counts))
        rng = np.random.default_rng(0 if self.random_state is None else self.random_state)
        starts = [np.flatnonzero(y == c)[rng.integers(counts[c])] for c in range(len(counts)) if c != target]
        return one_sided(X, y, metric, target, np.array(starts, dtype=np.intp))


def one_sided(X, y, metric, target, starts):
    """:class:`OSS`'s steps 1-3 from the start rows ``starts`` (one per class but
    ``target``): the rows kept, increasing."""
    store = np.union1d(np.flatnonzero(y == target), starts)
    rest = np.setdiff1d(np.arange(len(y)), store)
    if rest.size:
        _, ind = kneighbors(X[store], 1, X[rest], metric=search_metric(metric))
        store = np.union1d(store, rest[y[store[ind[:, 0]]] != y[rest]])
    if store.size < 2:
        return store
    _, ind = kneighbors(X[store], 1, metric=search_metric(metric))
    nearest = ind[:, 0]
    own = np.arange(store.size)
    linked = (nearest[nearest] == own) & (y[store[nearest]] != y[store]) & (y[store] != target)
    return store[~linked]
