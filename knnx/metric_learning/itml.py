"""Information-theoretic metric learning (Davis, Kulis, Jain, Sra & Dhillon 2007, ICML)."""

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions

from knnx.limits import MAX_CONSTRAINTS, MAX_LEARNER_ITERATIONS, MAX_SEED
from knnx.metric_learning.base import K, LinearMetric, map_of_metric

# Rounds of draws for the constraints (a draw that repeats a pair is drawn again).
_ROUNDS = 10


class ITML(LinearMetric):
    """Davis et al.'s ITML: the Mahalanobis matrix A closest to a prior A0 in LogDet
    divergence under similarity constraints ``d_A(x_i, x_j) <= u`` and dissimilarity
    constraints ``d_A(x_i, x_j) >= l`` (``d_A(x, x') = (x - x')^T A (x - x')``), with
    slack weighted by gamma, solved by cyclic Bregman projections (Algorithm 1, as the
    authors' code computes it: the projection ``alpha = min(lambda, gamma / (gamma + 1)
    (1 / p - 1 / xi))`` for a similarity, with the signs swapped for a dissimilarity).
    ``components_`` is L with ``L^T L = A``.

    The constraints, drawn from class pairs with ``np.random.default_rng(random_state)``:
    ``n_constraints`` similar pairs (a row drawn at random, then another row of its
    class) and as many dissimilar ones (a row, then a row of another class), a pair
    drawn twice drawn again (10 rounds at most); every similar pair, then every
    dissimilar one, in the order drawn, visited in that order at each pass. The bounds u
    and l: the 5th and 95th percentiles of the squared distances under A0 of the pairs
    drawn (as in the authors' experiments), unless given.

    Parameters
    ----------
    gamma : float > 0, default 1.0
        Weight of the slack (larger: the constraints held more strictly).
    n_constraints : int in [1, 100000] or None, default None
        Similar pairs, and dissimilar pairs, drawn; None: 20 C^2 for C classes (the
        authors' code). At most :data:`knnx.limits.MAX_CONSTRAINTS`.
    prior : "identity", "covariance" or a d x d matrix (list of rows), default "identity"
        A0: the Euclidean metric, the inverse covariance of the training rows, or the
        matrix given (symmetric positive definite).
    bounds : [u, l] or None, default None
        The similarity and dissimilarity bounds on squared distances (u < l).
    max_iter : int in [1, 10000], default 1000
        Passes over the constraints at most (:data:`knnx.limits.MAX_LEARNER_ITERATIONS`
        at most).
    tol : float, default 1e-3
        The change of the dual variables (sum |lambda - lambda_before| over ||lambda|| +
        ||lambda_before||) below which a pass ends the projections.
    random_state : int or None, default None (counts as 0; the runner sets the seed)

    Attributes
    ----------
    components_ : ndarray (d, d). metric_ : ndarray (d, d), A.
    objective_ : float, ``D_ld(A, A0) + gamma D_ld(diag(xi), diag(xi0))``, the slack
        targets xi against the bounds they started from.
    n_iter_ : int, the passes made. bounds_ : (u, l). pairs_ : ndarray (m, 2), the rows
    of each constraint; similar_ : ndarray (m,) of bool.
    """

    _parameter_constraints = {
        "gamma": [Interval(Real, 0, None, closed="neither")],
        "n_constraints": [Interval(Integral, 1, MAX_CONSTRAINTS, closed="both"), None],
        "prior": [StrOptions({"identity", "covariance"}), "array-like"],
        "bounds": ["array-like", None],
        "max_iter": [Interval(Integral, 1, MAX_LEARNER_ITERATIONS, closed="both")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "random_state": [Interval(Integral, 0, MAX_SEED, closed="both"), None],
    }

    def __init__(
        self,
        gamma=1.0,
        n_constraints=None,
        prior="identity",
        bounds=None,
        max_iter=1000,
        tol=1e-3,
        random_state=None,
    ):
        self.gamma = gamma
        self.n_constraints = n_constraints
        self.prior = prior
        self.bounds = bounds
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    @classmethod
    def _data_problems(cls, params, n_samples, n_features, n_classes):
        """A matrix prior that is not a symmetric positive definite d x d matrix, bounds
        that are not [u, l] with 0 < u < l, or the default ``n_constraints`` (20 C^2)
        above :data:`knnx.limits.MAX_CONSTRAINTS` (the spec's validation asks this of
        each dataset)."""
        prior, bounds = params.get("prior", "identity"), params.get("bounds")
        if params.get("n_constraints") is None and 20 * n_classes**2 > MAX_CONSTRAINTS:
            return [
                f"n_constraints=None draws 20 C^2 = {20 * n_classes**2} pairs of each kind for the "
                f"{n_classes} classes, more than the limit of {MAX_CONSTRAINTS}; set n_constraints"
            ]
        if not isinstance(prior, str):
            A0 = np.asarray(prior, dtype=np.float64)
            if A0.shape != (n_features, n_features) or not np.allclose(A0, A0.T):
                return [f"prior must be a symmetric {n_features} x {n_features} matrix, got shape {A0.shape}"]
            if not np.all(np.isfinite(A0)) or np.linalg.eigvalsh(A0).min() <= 0:
                return ["prior must be positive definite"]
        if bounds is not None:
            b = np.asarray(bounds, dtype=np.float64).ravel()
            if b.shape != (2,) or not (np.isfinite(b).all() and 0 < b[0] < b[1]):
                return [f"bounds must be [u, l] with 0 < u < l, got {list(bounds)!r}"]
        return []

    def _learn(self, X, y, n_out):
        A0 = self._prior(X)
        m = 20 * len(self.classes_) ** 2 if self.n_constraints is None else self.n_constraints
        rng = np.random.default_rng(0 if self.random_state is None else self.random_state)
        similar_pairs = draw_pairs(y, m, True, rng)
        other_pairs = draw_pairs(y, m, False, rng)
        pairs = np.vstack([similar_pairs, other_pairs])
        similar = np.repeat([True, False], [len(similar_pairs), len(other_pairs)])
        V = np.ascontiguousarray(X[pairs[:, 0]] - X[pairs[:, 1]])
        upper, lower = self._bounds(V, A0)
        bound = np.where(similar, upper, lower)
        start = bound.copy()
        A, lam = A0.copy(), np.zeros(len(V))
        passes, _ = K.itml_passes(A, V, similar, bound, lam, float(self.gamma), self.max_iter, self.tol)
        self.metric_, self.bounds_ = A, (upper, lower)
        self.pairs_, self.similar_ = pairs, similar
        ratio = bound / start
        objective = logdet_divergence(A, A0) + self.gamma * float(np.sum(ratio - np.log(ratio) - 1.0))
        return map_of_metric(A), objective, passes

    def _prior(self, X):
        d = X.shape[1]
        if isinstance(self.prior, str):
            if self.prior == "identity":
                return np.eye(d)
            cov = np.atleast_2d(np.cov(X, rowvar=False))
            if np.linalg.matrix_rank(cov) < d:
                raise ValueError(
                    "ITML: prior 'covariance': the covariance of the training rows is singular (a constant "
                    "column, or more features than rows); use prior 'identity'"
                )
            inverse = np.linalg.inv(cov)
            return (inverse + inverse.T) / 2  # exactly symmetric, as the projections keep it
        A0 = np.asarray(self.prior, dtype=np.float64)  # checked by _data_problems
        return (A0 + A0.T) / 2

    def _bounds(self, V, A0):
        if self.bounds is not None:  # checked by _data_problems
            upper, lower = (float(b) for b in np.asarray(self.bounds, dtype=np.float64).ravel())
            return upper, lower
        d2 = np.einsum("ij,jk,ik->i", V, A0, V)
        upper, lower = np.percentile(d2, (5, 95))
        return max(upper, 1e-9), max(lower, 1e-9)


def draw_pairs(y, m, same, rng):
    """Up to m distinct pairs (i, j) of rows, i drawn uniformly, j uniformly among the
    other rows of i's class (``same``) or among the rows of the other classes: rounds of
    draws until m are found (a round draws as many as are missing), 10 rounds at most."""
    n = len(y)
    by_class = [np.flatnonzero(y == c) for c in range(int(y.max()) + 1)]
    others = [np.flatnonzero(y != c) for c in range(len(by_class))]
    seen, pairs = set(), []
    for _ in range(_ROUNDS):
        need = m - len(pairs)
        if need == 0:
            break
        for i in rng.integers(n, size=need):
            c = y[i]
            if same:
                rows = by_class[c]
                if len(rows) < 2:
                    continue
                j = rows[rng.integers(len(rows) - 1)]
                j = rows[-1] if j == i else j  # the anchor's place holds the class's last row
            else:
                j = others[c][rng.integers(len(others[c]))]
            if (i, j) not in seen:
                seen.add((int(i), int(j)))
                pairs.append((int(i), int(j)))
    return np.array(pairs, dtype=np.intp).reshape(-1, 2)


def logdet_divergence(A, A0):
    """``tr(A A0^-1) - log det(A A0^-1) - d``."""
    P = np.linalg.solve(A0, A)
    sign, logdet = np.linalg.slogdet(P)
    return float(np.trace(P) - logdet - A.shape[0]) if sign > 0 else np.inf
