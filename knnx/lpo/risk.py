"""Exact leave-p-out cross-validation of kNN (Celisse & Mary-Huard 2011) and the k it selects.

The leave-p-out (LpO) estimate averages, over all C(n, p) ways of holding out p
points, the error rate of kNN trained on the other n - p points and evaluated
on the p held out (eq. 1 of the paper). knnx computes it exactly, for every
k = 1 .. k_max at once, from one leave-one-out neighbour graph of k_max + p - 1
neighbours, by the conditioning of Prop. 1: never by enumerating splits. The
plurality vote has closed forms (Sec. 2.3); the distance-weighted vote (Sec. 2.2,
two classes) counts subsets of neighbours by the sign of their weighted sum.

**The rule, ties and cost** (of :func:`lpo_risk` and everything built on it):

* The kNN rule is :class:`knnx.KNNClassifier`'s: the neighbours of a held-out point
  among the n - p training points, ordered by (distance, row index), the distance
  being squared Euclidean by default or ``metric`` (see :mod:`knnx.neighbors.metrics`).
  A metric with fitted statistics (ranges, deviations, a covariance, hvdm's tables) is
  fitted once, on all n rows given: every split ranks its neighbours under the same
  distance, that of the whole training part (the closed form needs one leave-one-out
  graph; refitting on each split's n - p rows would change the distances from split
  to split).
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
  moves by less than p * 1e-17. Work: per (held-out point, neighbour position)
  one table of the true class's removal law over the W values of q = V - k
  with P(V = k + q) >= 1e-17 (W grows with p/n), then a tail sum (two
  classes) or one tie-weighted DP per removal count (more classes).

**Distance weights** (``weights="distance"``, Sec. 2.2 of the paper; two classes):

* Each of the k neighbours votes 1 / distance for its class, the weight being
  ``1.0 / d`` of the float64 distance ``d`` that :func:`knnx.kneighbors` returns
  with ``squared=False`` (the metric's distance: for Euclidean the correctly rounded
  square root of the squared distance), as :class:`knnx.KNNClassifier` does. If some
  of the k neighbours are at distance 0 from the held-out point, only those
  vote, weight 1 each (a plurality among them).
* **Tie**: the two classes' weight sums are equal as real numbers, i.e. the
  exact sums of the float64 weights, not their float-rounded sums. A tie costs
  1/2. Ties are decided exactly: one held-out point's weights, all float64, are
  integer multiples of 2^e (e their smallest unit in the last place); scaled by
  2^-e they are integers, summed and compared in 62-bit limbs with no rounding.
* Given V = j, the voters are neighbour j and a uniform random (k - 1)-subset of
  neighbours 1 .. j - 1, so P(error | V = j) is a count of subsets, of the
  voters or of the q = j - k held-out ones (whichever set is smaller), by the
  sign of their weighted sum. Zero-distance neighbours come first: conditioning
  on how many of them are voters gives hypergeometric plurality terms and,
  when none is, a count over the positive-distance neighbours only.
* The count builds the subsets neighbour by neighbour (largest weight first),
  keeping the distinct partial sums of each size with their probabilities.
  Partial sums whose every completion lands on one side of the threshold leave
  at once with their whole probability (the branch is counted without being
  enumerated); once the partial sums of a size c are about as many as the
  completions of the remaining neighbours, one pass against the sorted sums of
  those completions settles them all (meet in the middle, the meeting point
  chosen per size). With r = min(k - 1, q) <= p - 1 and m = j - 1 candidate
  neighbours, at most min(C(l, c), 4 C(m - l, r - c)) partial sums of size c
  are kept after l neighbours: a contested (j, k) costs about the square root
  of the C(m, r) subsets the paper's recursion visits, and a one-sided one
  almost nothing. Equal weights collapse (unit weights: one partial sum per
  size, O(m r)); r <= 2 is counted directly in O(m).
* Cost: exact LpO on Table 1 of the paper (n = 500, k <= 9, p <= 25) takes at
  most about 0.1 s per k, and ``select_k`` on Ripley's 250 training points with
  p = 10, k_max = 50 about 3 s (2 cores). It still grows exponentially with r on
  points whose vote is contested: there, p = 15 with k_max = 30 takes about 10 s,
  p = 12 with k_max = 50 about 30 s, p = 15 with k_max = 50 more than 10 minutes.
  A count that would need more than 2^24 partial sums raises
  :class:`knnx.errors.DataError` instead of exhausting memory.
* More than two classes raise :class:`knnx.errors.DataError`.
"""

import numbers
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from knnx._kernels import lazy
from knnx.errors import DataError
from knnx.limits import check_memory, lpo_bytes
from knnx.neighbors.metrics import fit_metric, float_2d
from knnx.neighbors.search import as_float_array, kneighbors

_LPO = lazy("knnx._kernels.lpo")
_LPO_WEIGHTED = lazy("knnx._kernels.lpo_weighted")

__all__ = ["lpo_risk", "lpo_risk_from_graph", "lpo_risk_from_weighted_graph", "select_k", "RANK_FLOOR"]

# Below this many (held-out point, V = j, q) terms the weighted risk runs on one thread.
# Measured here (2 cores, n = 500): k = 3, p = 5 (1.2e4 terms) 0.9 ms on one thread,
# 1.1 to 2.4 ms on two; k = 5, p = 10 (5e4 terms) 5.1 ms on one, 3.9 to 5.4 ms on two.
_POOL_MIN_TERMS = 50_000

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


def _rows(X, metric, name="X"):
    """X as a 2-D float64 array: finite for Euclidean; the metric checks the rest
    (missing values where it has a rule)."""
    if isinstance(metric, str) and metric == "euclidean":
        return as_float_array(X, name)
    return float_2d(X, name)


def graph_metric(metric, X, codes, nominal=None, metric_params=None):
    """What :func:`knnx.kneighbors` searches the LpO graph of (X, codes) with: the name
    "euclidean" for plain Euclidean (its search and graph keys exactly as without a
    metric), else the metric fitted on all of X (and codes: hvdm, vdm)."""
    if isinstance(metric, str) and metric == "euclidean" and not metric_params and nominal is None:
        return "euclidean"
    fitted = fit_metric(metric, X, codes, nominal=nominal, metric_params=metric_params)
    return "euclidean" if fitted.name == "euclidean" and not fitted.onehot else fitted


def lpo_risk(
    X, y, p, k_max, weights="uniform", *, graphs=None, metric="euclidean", metric_params=None, nominal=None
):
    """Exact leave-p-out risk of kNN for k = 1 .. k_max.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        (for ``metric="precomputed"``: the square matrix of their distances)
    y : array-like of shape (n_samples,)
        Class labels: any number of classes with ``weights="uniform"``, at most two
        with ``weights="distance"``.
    p : int
        Points held out per split, 1 <= p < n_samples.
    k_max : int
        Largest k, 1 <= k_max <= n_samples - p.
    weights : {"uniform", "distance"}
        ``uniform``: plurality vote. ``distance``: the vote of
        ``KNNClassifier(k, weights="distance")``, see the notes.
    graphs : knnx.GraphStore, optional
        Where the leave-one-out graph is looked up and kept (see :mod:`knnx.neighbors.graphs`).
    metric : str or knnx.neighbors.metrics.Metric, default "euclidean"
        The distance of the kNN rule (:mod:`knnx.neighbors.metrics`). A name is fitted
        on all of X (and y: hvdm, vdm), the whole training part, once: every split's
        neighbours are ranked under those statistics (see the module docstring).
    metric_params, nominal :
        The metric's parameters and the columns of X holding category codes.

    Returns
    -------
    risk : ndarray of shape (k_max,)
        ``risk[k - 1]`` = R_LpO(k), eq. (1) of Celisse & Mary-Huard (2011): the error
        rate on the held-out points averaged over all C(n, p) splits.

    Notes
    -----
    The rule, the cost of vote ties, the multiclass computation, distance weights and
    the cost in time are those of the module docstring (:mod:`knnx.lpo.risk`).
    """
    X = _rows(X, metric)
    n = X.shape[0]
    classes, codes = _labels(y, n)
    if n < 2:
        raise DataError(f"X: leave-p-out needs at least 2 samples, got {n}")
    p = _check_int("p", p, 1, n - 1, "1 <= p < n_samples")
    k_max = _check_int("k_max", k_max, 1, n - p, "1 <= k_max <= n_samples - p")
    if weights not in ("uniform", "distance"):
        raise DataError(f"weights: expected 'uniform' or 'distance', got {weights!r}")
    if weights == "distance" and len(classes) > 2:
        raise DataError(f"weights='distance': exact LpO supports two classes, y has {len(classes)}")
    check_memory(lpo_bytes(n, X.shape[1], p, k_max), f"exact leave-{p}-out for k up to {k_max} on {n} rows")
    searched = graph_metric(metric, X, codes, nominal, metric_params)
    weighted = weights == "distance"
    neigh_dist, neigh_ind = kneighbors(X, k_max + p - 1, metric=searched, squared=not weighted, graphs=graphs)
    if weighted:
        return lpo_risk_from_weighted_graph(neigh_ind, neigh_dist, codes, p, k_max)
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
    PV = _LPO.rank_probabilities(n, p, k_max, p - 1, RANK_FLOOR)
    used = np.flatnonzero(PV.any(axis=0))
    q_max = int(used[-1]) if used.size else 0
    PV = np.ascontiguousarray(PV[:, : q_max + 1])
    LC = _LPO.log_binomial_table(width, q_max)
    sums = _LPO.lpo_uniform_sums(ind, y_codes, n_classes, p, k_max, PV, LC, RANK_FLOOR)
    total = np.zeros(k_max)
    for row in sums:  # in chunk order: the same sum whatever the thread count
        total += row
    return total / n


def lpo_risk_from_weighted_graph(neigh_ind, neigh_dist, y_codes, p, k_max):
    """:func:`lpo_risk` with ``weights="distance"`` from a precomputed leave-one-out
    graph: neighbour indices and their distances (not squared: the weights are
    1 / distance; at least k_max + p - 1 per row, ordered by (distance, index), as
    :func:`knnx.kneighbors` returns them with ``squared=False``) and class codes 0 / 1."""
    return _weighted_risk(neigh_ind, neigh_dist, y_codes, p, 1, k_max)


def _weighted_risk(neigh_ind, neigh_dist, y_codes, p, k_min, k_max):
    """Weighted LpO risk for k = 1 .. k_max; entries below k_min are left at 0 (a single
    k costs one column of the work: the benchmark times Table 1 cells this way)."""
    n = neigh_ind.shape[0]
    width = k_max + p - 1
    if neigh_ind.shape[1] < width:
        raise DataError(
            f"neigh_ind: needs k_max + p - 1 = {width} neighbours per row, has {neigh_ind.shape[1]}"
        )
    if neigh_dist.shape[0] != n or neigh_dist.shape[1] < width:
        raise DataError(
            f"neigh_dist: expected shape ({n}, >= {width}) like neigh_ind, got {neigh_dist.shape}"
        )
    ind = np.ascontiguousarray(neigh_ind[:, :width], dtype=np.intp)
    dist = np.ascontiguousarray(neigh_dist[:, :width], dtype=np.float64)
    if not (np.isfinite(dist).all() and (dist >= 0).all()):
        raise DataError("neigh_dist: distances must be finite and non-negative")
    y_codes = np.ascontiguousarray(y_codes, dtype=np.intp)
    if y_codes.size and (y_codes.min() < 0 or y_codes.max() > 1):
        raise DataError(f"weights='distance': exact LpO supports two classes, y has {int(y_codes.max()) + 1}")
    PV = _LPO.rank_probabilities(n, p, k_max, p - 1, RANK_FLOOR)
    used = np.flatnonzero(PV.any(axis=0))
    q_max = int(used[-1]) if used.size else 0
    PV = np.ascontiguousarray(PV[:, : q_max + 1])
    w = min(width, k_max + q_max)
    LC = _LPO.log_binomial_table(w, w)
    # exact sums need this many 62-bit limbs (2 unless weights span more than ~2^59)
    n_limbs = _LPO_WEIGHTED.limbs_needed(ind, dist, y_codes, w)
    if n_limbs > 16:  # the scaled weights would overflow float64 before reaching limbs
        raise DataError(
            "neigh_dist: the distance weights of one point's neighbours span more than 2^900; "
            "exact weighted LpO cannot scale them"
        )
    mk = (0,) * n_limbs
    points = _LPO_WEIGHTED.point_values(ind, dist, y_codes, w, mk)  # (labels, w_float, w_exact, n_zero)
    CB = _LPO_WEIGHTED.saturated_binomials(w, max(1, min(q_max, w)), _LPO_WEIGHTED.LIST_CAP + 1)
    n_chunks = max(1, -(-n * (w - k_min + 1) // _LPO_WEIGHTED.UNITS_PER_CHUNK))
    sums = np.zeros((n_chunks, k_max))
    # Serial kernels without the GIL, one call per thread (thread t runs the chunks t,
    # t + n_threads, ...); a chunk's sum depends on the chunk alone, so the result
    # does not depend on the thread count (numba.get_num_threads()). Small problems
    # run on one thread: starting a pool costs more than they do.
    terms = n * (w - k_min + 1) * PV.shape[1]
    import numba  # here: importing this module imports no numba (knnx._kernels.lazy)

    n_threads = min(numba.get_num_threads(), n_chunks) if terms >= _POOL_MIN_TERMS else 1

    def run(first):
        _LPO_WEIGHTED.chunk_errors(first, n_threads, points, y_codes, k_min, (PV, LC, CB), sums, mk)

    if n_threads > 1:
        with ThreadPoolExecutor(n_threads) as pool:
            list(pool.map(run, range(n_threads)))
    else:
        run(0)
    total = np.zeros(k_max)
    for row in sums:  # in chunk order: the same sum whatever the thread count
        total += row
    if np.isnan(total).any():
        raise DataError(
            f"weights='distance': the exact count for p = {p}, k up to {k_max} needs more than "
            f"{_LPO_WEIGHTED.WORK_CAP} partial sums for some held-out point; use a smaller p or k_max"
        )
    return total / n


def select_k(
    X, y, p, k_max, weights="uniform", *, graphs=None, metric="euclidean", metric_params=None, nominal=None
):
    """k chosen by exact leave-p-out: the smallest k among those of minimal risk.

    Returns ``(k_p, risk)`` with ``risk`` as in :func:`lpo_risk` (``graphs`` and the
    metric too: fitted on all of X, the whole training part). Risks within 1e-12 of
    the minimum count as equal (the estimate is exact to about 1e-14).
    """
    risk = lpo_risk(
        X, y, p, k_max, weights, graphs=graphs, metric=metric, metric_params=metric_params, nominal=nominal
    )
    return _argmin_k(risk), risk


def _argmin_k(risk):
    return int(np.flatnonzero(risk <= risk.min() + 1e-12)[0]) + 1
