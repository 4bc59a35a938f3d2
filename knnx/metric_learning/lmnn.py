"""Large margin nearest neighbour metric learning (Weinberger & Saul 2009, JMLR 10)."""

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from knnx.limits import MAX_LEARNER_ITERATIONS
from knnx.metric_learning.base import K, LinearMetric, class_rows_problem
from knnx.neighbors.search import kneighbors

# Impostor pairs kept at most (8 bytes each): beyond, the margin holds most pairs of
# rows of different classes, and the data want rescaling.
MAX_PAIRS = 2**27

# Below this step size the search has stalled: the objective cannot decrease further.
_MIN_RATE = 1e-30


class LMNN(LinearMetric):
    """Weinberger & Saul's LMNN: a linear map L (``components_``) minimising

        eps(L) = (1 - mu) sum_{i, j~>i} d(i, j)
                 + mu sum_{i, j~>i} sum_{l: y_l != y_i} [1 + d(i, j) - d(i, l)]_+

    with ``d(i, j) = ||L (x_i - x_j)||^2`` and j ~> i the k target neighbours of row i:
    its k nearest rows of its class under the Euclidean distance of the input, fixed at
    the start (knnx's exact search: ties by row index).

    Gradient descent on L as in the reference implementation (Weinberger's ``lmnn``, and
    metric-learn's port of it): a step ``L - rate * grad``; if the objective rises the
    step is undone and the rate halved, else it is kept and the rate multiplied by 1.01;
    stop after ``max_iter`` steps, or once more than ``min_iter`` steps are made and the
    objective moved by less than ``tol``.

    The active set (the paper's Sec. 5.1): the pairs (i, l) of rows of different
    classes with ``d(i, l) < 1 + max_j d(i, j)`` (every pair that can have a positive
    hinge) are found exactly, by comparing every pair of rows in blocks (no n x n
    matrix), at the start and every ``recompute`` steps; between two searches the hinge
    is evaluated on those pairs. When the search has converged the pairs are found again:
    if an active triple was missed the descent goes on, so the map returned is a
    converged one of the objective itself. ``objective_`` is the objective at the end,
    on the exact active set.

    Parameters
    ----------
    k : int, default 3
        Target neighbours per row (each class needs k + 1 rows).
    mu : float in [0, 1], default 0.5
        Weight of the push (impostor) term; 1 - mu weighs the pull term.
    n_components : int or None, default None
        Rows of L (the learned space's dimension); None: the number of features.
    init : {"auto", "identity", "pca"}, default "auto"
        The start: the identity (its first rows when n_components < d; the paper's
        Euclidean start), or the leading principal axes (scikit-learn's PCA, the rows
        centred only to find them). "auto": the identity at full rank, PCA below.
    max_iter : int in [1, 10000], default 1000
        Steps at most (:data:`knnx.limits.MAX_LEARNER_ITERATIONS` at most).
    min_iter : int, default 50
        Steps before the descent may stop on ``tol`` (above ``max_iter``: it never does).
    learn_rate : float, default 1e-7
        The first step size (the reference implementation's).
    tol : float, default 1e-3
        The change of the objective below which the descent has converged (absolute, as
        in metric-learn).
    recompute : int, default 10
        Steps between two searches of the active set (the paper recomputes it every
        10-20 iterations); 0: a search before every evaluation of the objective, as
        metric-learn does (no active set: slower, and its steps are metric-learn's).

    Attributes
    ----------
    components_ : ndarray (r, d). objective_ : float. n_iter_ : int, the steps made.
    targets_ : ndarray (n, k), the target neighbours of the training rows.
    n_active_ : int, the active triples (positive hinges) at the end.
    n_searches_ : int, the searches of the active set made.
    """

    _parameter_constraints = {
        "k": [Interval(Integral, 1, None, closed="left")],
        "mu": [Interval(Real, 0, 1, closed="both")],
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "init": [StrOptions({"auto", "identity", "pca"})],
        "max_iter": [Interval(Integral, 1, MAX_LEARNER_ITERATIONS, closed="both")],
        "min_iter": [Interval(Integral, 0, None, closed="left")],  # max_iter stops the descent
        "learn_rate": [Interval(Real, 0, None, closed="neither")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "recompute": [Interval(Integral, 0, None, closed="left")],
    }

    def __init__(
        self,
        k=3,
        mu=0.5,
        n_components=None,
        init="auto",
        max_iter=1000,
        min_iter=50,
        learn_rate=1e-7,
        tol=1e-3,
        recompute=10,
    ):
        self.k = k
        self.mu = mu
        self.n_components = n_components
        self.init = init
        self.max_iter = max_iter
        self.min_iter = min_iter
        self.learn_rate = learn_rate
        self.tol = tol
        self.recompute = recompute

    # Each class needs k + 1 rows: the spec's validation checks the training parts.
    @classmethod
    def _class_rows(cls, params):
        return int(params.get("k", 3)) + 1

    def _learn(self, X, y, n_out):
        problem = class_rows_problem("LMNN", y, self.classes_, self.k + 1)
        if problem:
            raise ValueError(problem + f" (its k={self.k} target neighbours and itself)")
        self.targets_ = targets = target_neighbours(X, y, self.k)
        L = self._start(X, n_out)
        state = _Descent(X, y, targets, self.mu, always=self.recompute == 0)
        state.search(L)
        obj, grad = state.evaluate(L)
        rate, it, since = self.learn_rate, 0, 0
        while it < self.max_iter:
            if since == self.recompute:
                state.search(L)
                obj, grad = state.evaluate(L)
                since = 0
            while True:
                L_next = L - rate * grad
                obj_next, grad_next = state.evaluate(L_next)
                if obj_next <= obj or rate < _MIN_RATE:
                    break
                rate /= 2
            if obj_next > obj:  # stalled: no step size decreases the objective
                break
            delta, L, obj, grad = obj_next - obj, L_next, obj_next, grad_next
            rate *= 1.01
            it, since = it + 1, since + 1
            if it > self.min_iter and abs(delta) < self.tol:
                active = state.active
                state.search(L)
                obj, grad = state.evaluate(L)
                since = 0
                if state.active == active:  # no active triple was missed: converged
                    break
        state.search(L)
        obj, _ = state.evaluate(L)
        self.n_active_, self.n_searches_ = state.active, state.searches
        return L, obj, it

    def _start(self, X, n_out):
        init = self.init
        if init == "auto":
            init = "identity" if n_out == X.shape[1] else "pca"
        if init == "identity":
            return np.eye(n_out, X.shape[1])
        from sklearn.decomposition import PCA

        return np.ascontiguousarray(PCA(n_components=n_out, svd_solver="full").fit(X).components_)


def target_neighbours(X, y, k):
    """Each row's k nearest rows of its class (indices into X), by knnx's exact search
    under the Euclidean distance (ordered by (distance, index); a row is not its own
    target, its duplicates are)."""
    targets = np.empty((len(y), k), dtype=np.intp)
    for c in np.unique(y):
        rows = np.flatnonzero(y == c)
        _, ind = kneighbors(X[rows], k)
        targets[rows] = rows[ind]
    return targets


class _Descent:
    """LMNN's objective and gradient on the rows X with fixed targets, over the active
    set found by the last :meth:`search`."""

    def __init__(self, X, y, targets, mu, always=False):
        self.X, self.y, self.targets, self.mu, self.always = X, y, targets, mu, always
        self.ptr = self.others = None
        self.active, self.searches = 0, 0

    def search(self, L):
        """Every pair (i, l) of rows of different classes inside row i's margin under L."""
        Z = K.project(self.X, L)
        radius = 1.0 + K.target_distances(Z, self.targets).max(axis=1)
        found = K.impostors(Z, self.y, radius, MAX_PAIRS)
        if found is None:
            raise ValueError(
                f"LMNN: more than {MAX_PAIRS:,} pairs of rows of different classes lie within the margin; the "
                "margin is 1 in squared distance: scale the data so that distances between neighbours are well "
                "above 1"
            )
        self.ptr, self.others = found
        self.searches += 1

    def evaluate(self, L):
        """``(objective, gradient with respect to L)``; sets ``active``."""
        if self.always:
            self.search(L)
        Z = K.project(self.X, L)
        pull, hinge, active, tw, iw = K.lmnn_terms(Z, self.targets, self.ptr, self.others, self.mu)
        self.active = int(active.sum())
        objective = (1.0 - self.mu) * float(np.sum(pull)) + self.mu * float(np.sum(hinge))
        G = K.lmnn_gradient(self.X, self.targets, tw, self.ptr, self.others, iw)
        return objective, 2.0 * K.project(np.ascontiguousarray(L), G)
