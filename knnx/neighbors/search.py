"""Exact k-nearest-neighbour search: the boundary between Python and the numba kernels.

Semantics (every algorithm in knnx relies on them):

* Distance is squared Euclidean by default, evaluated in float64 as
  ``sum_l (q_l - r_l)**2`` in feature order; rankings use that value exactly. Every
  other metric (``metric=``, see :mod:`knnx.neighbors.metrics`) ranks its reduced
  distance, also exact in float64.
* Neighbours are ordered by (reduced distance, reference index): of two references
  at the same distance the one with the smaller index comes first.
* ``queries=None`` asks for the leave-one-out graph of ``X``: each point is excluded
  from its own list, but its duplicates (other indices at distance 0) are not.
* Data whose scale makes float64 squared distances overflow or underflow
  (``max |x - mean| * sqrt(d) > 1e150``, or ``0 < max |x - mean| < 1e-140``) is
  refused with a DataError: such distances are inf or 0 and rank nothing.
"""

import numbers

import numpy as np

from knnx._kernels import SEARCH_MIN_WORK, launch, lazy
from knnx.errors import DataError
from knnx.limits import check_memory, graph_bytes
from knnx.neighbors.metrics import check_distances, fit_metric, float_2d
from knnx.neighbors.screen import (
    _CHUNK_ROWS,
    _SEED_SAMPLE,
    _SYMMETRIC_BLOCK,
    _SYMMETRIC_MIN_FEATURES,
    _candidate_capacity,
    _screened_search,
    _seeded,
    _symmetric,
)

_METRICS = lazy("knnx._kernels.metrics")
_NEIGHBORS = lazy("knnx._kernels.neighbors")

__all__ = ["kneighbors", "reciprocal_neighbors", "search_paths", "as_float_array", "check_scale"]

# Below this many distance evaluations the brute-force kernel is used directly.
_BRUTE_WORK = 2_000_000
# Selection (select_rows: every float64 distance, a sampled threshold, a bucket sort
# of the references under it) replaces screening and brute force when
# _SELECT_FACTOR * k >= n_ref * d: its cost per query grows with n_ref * d,
# screening's with k (heap and candidate buffer of max(4k, k + 256)). Measured one
# thread, standard normal LOO graphs (select / screened seconds): n=5000, d=2, k=10
# 0.028 / 0.029, k=250 0.044 / 0.394; n=20000, d=2, k=30 0.38 / 0.27, k=100 0.40 /
# 0.63; d=8, k=100 0.79 / 0.69, k=250 0.79 / 1.51; d=32, k=250 2.6 / 2.0, k=1000
# 3.1 / 6.9; n=2000, d=16, k=10 0.013 / 0.011, k=30 0.014 / 0.029.
_SELECT_FACTOR = 1000
# float64 range in which squared distances neither overflow nor underflow (see module doc).
_MAX_SPREAD = 1e150
_MIN_SPREAD = 1e-140


def as_float_array(X, name="X"):
    """Return ``X`` as a C-contiguous 2-D float64 array with finite values.

    Raises :class:`knnx.errors.DataError` naming ``name``, the row and the column of
    the first non-finite value.
    """
    A = float_2d(X, name)
    finite = np.isfinite(A)
    if not finite.all():
        r, c = np.argwhere(~finite)[0]
        raise DataError(f"{name}: non-finite value {A[r, c]} at row {r}, column {c}")
    return A


def _max_abs_dev(A, center):
    """max |A - center| over every entry of a non-empty A, row chunk by row chunk; inf
    when the centre or a difference is not finite (the mean or x - mean overflowed:
    Python's max() would otherwise skip a NaN and report a spread of 0)."""
    if not np.isfinite(center).all():
        return np.inf
    spread = 0.0
    with np.errstate(over="ignore", invalid="ignore"):
        for r0 in range(0, A.shape[0], _CHUNK_ROWS):
            block = A[r0 : r0 + _CHUNK_ROWS] - center
            np.abs(block, out=block)
            top = float(block.max())
            if not top <= np.inf:  # NaN
                return np.inf
            spread = max(spread, top)
    return spread


def _mean(A):
    """Column means without floating-point warnings (an overflow gives inf or NaN, which
    the range rule then refuses)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return A.mean(axis=0)


def _centre(R, Q, loo):
    """(center, spread): the reference mean and the max |coordinate - center| of R and Q.

    Refuses data whose squared distances would overflow or underflow in float64.
    """
    center = _mean(R)
    spread = _max_abs_dev(R, center)
    if not loo:
        spread = max(spread, _max_abs_dev(Q, center))
    _check_spread(spread, R.shape[1])
    return center, spread


def check_scale(X, queries=None):
    """Refuse data whose float64 squared distances would overflow or underflow.

    The check :func:`kneighbors` applies (see the module doc), for estimators that
    compute their own distances: ``X`` and ``queries`` (optional) are centred on the
    mean of ``X``; :class:`knnx.errors.DataError` (one line, asking to rescale) if
    ``max |x - mean| * sqrt(d) > 1e150`` or ``0 < max |x - mean| < 1e-140``.
    Both arrays must be 2-D float64 with finite values and the same columns.
    """
    center = _mean(X)
    spread = _max_abs_dev(X, center) if X.size else 0.0
    if queries is not None and queries.size:
        spread = max(spread, _max_abs_dev(queries, center))
    _check_spread(spread, X.shape[1])


def _check_spread(spread, d):
    if not np.isfinite(spread):
        raise DataError(
            "X: values too far apart for float64 squared distances (their mean or their differences "
            f"overflow float64; needs max |x - mean| * sqrt(d) <= {_MAX_SPREAD:g}); rescale the data"
        )
    if spread * np.sqrt(d) > _MAX_SPREAD:
        raise DataError(
            f"X: values too far apart for float64 squared distances (max |x - mean| = {spread:.3g} over "
            f"{d} features; needs max |x - mean| * sqrt(d) <= {_MAX_SPREAD:g}); rescale the data"
        )
    if 0 < spread < _MIN_SPREAD:
        raise DataError(
            f"X: values too close together for float64 squared distances (max |x - mean| = {spread:.3g}; "
            f"needs >= {_MIN_SPREAD:g} or all equal); rescale the data"
        )


def kneighbors(
    X,
    n_neighbors,
    queries=None,
    *,
    metric="euclidean",
    metric_params=None,
    nominal=None,
    y=None,
    squared=True,
    graphs=None,
):
    """Exact k nearest neighbours, squared Euclidean by default.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Reference points (for ``metric="precomputed"``: the square matrix of their
        distances).
    n_neighbors : int
        Number of neighbours k, ``1 <= k <= n_samples`` (``n_samples - 1`` when
        ``queries is None``).
    queries : array-like of shape (n_queries, n_features), optional
        Query points (precomputed: their distances to the references, shape
        (n_queries, n_samples)). If None, the leave-one-out graph of ``X`` is returned:
        each point is excluded from its own list (its duplicates are not).
    metric : str or knnx.neighbors.metrics.Metric, default "euclidean"
        The distance (see :mod:`knnx.neighbors.metrics`): a name, fitted here on ``X``
        (and ``y``), or a metric already fitted on a training part.
    metric_params, nominal, y :
        For a metric given by name: its parameters, the nominal columns, and the class
        codes of ``X`` (hvdm and vdm fit their tables on them).
    squared : bool, default True
        Return the reduced distances (the ranked quantity: squared Euclidean distances
        by default). If False, the distances.
    graphs : knnx.GraphStore, optional
        Where to look for the graph first and keep it after (see :mod:`knnx.neighbors.graphs`):
        the result is the same, only the time differs. Without it nothing is kept.

    Returns
    -------
    neigh_dist : ndarray of shape (n_queries, n_neighbors), float64
        Distances, non-decreasing along each row.
    neigh_ind : ndarray of shape (n_queries, n_neighbors), intp
        Reference indices ordered by (distance, index).

    Notes
    -----
    Squared Euclidean (and the metrics reduced to it by a map of the rows:
    seuclidean, mahalanobis, cosine): candidates are screened with a float32 BLAS
    product under a rigorous rounding bound, then their distances are recomputed in
    float64 and ranked exactly; the output equals a brute-force evaluation of every
    distance (see :mod:`knnx._kernels.neighbors`). When k is large relative to
    n_samples * n_features (see ``_SELECT_FACTOR``), every float64 distance is
    evaluated instead and the k smallest are selected and sorted (``select_rows``):
    the same output. The other metrics select the same way from every float64 reduced
    distance (:mod:`knnx._kernels.metrics`). Memory: the float32 copy of the data, the
    outputs, and O(block) working space; never n x n.
    """
    M, R0, Q0 = _prepared(X, queries, metric, metric_params, nominal, y)
    loo = queries is None
    n_ref = R0.shape[0]
    k = _check_k(n_neighbors, n_ref - 1 if loo else n_ref, loo)

    def search(k_search):
        if M is None or M.euclidean_path:
            return _exact(R0, Q0, loo, k_search)
        return _metric_exact(M, R0, Q0, loo, k_search)

    if graphs is None or Q0.shape[0] == 0:
        return _finish(*search(k), squared, M)
    # The k-graph is the first k columns of any larger one (neighbours are ordered by
    # (distance, index)), so a store computes once at its k_max.
    key = graphs.key(R0, None if loo else Q0, None if M is None else M.checksum)
    hit = graphs.get(key, k)
    if hit is None:
        full = search(max(k, min(graphs.k_max, n_ref - 1 if loo else n_ref)))
        graphs.put(key, *full)
        hit = full[0][:, :k].copy(), full[1][:, :k].copy()
    return _finish(*hit, squared, M)


def _prepared(X, queries, metric, metric_params, nominal, y):
    """``(fitted metric or None for plain squared Euclidean, references, queries)``: the
    validated (and, for a mapped metric, mapped) arrays the search ranks; queries are
    the references themselves for a leave-one-out search."""
    if isinstance(metric, str) and metric == "euclidean" and not metric_params and not _any(nominal):
        M = None
    else:
        M = fit_metric(metric, X, y, nominal=nominal, metric_params=metric_params)
    R0 = as_float_array(X, "X") if M is None else M.prepare(X, "X")
    if queries is None:
        Q0 = R0
    else:
        Q0 = as_float_array(queries, "queries") if M is None else M.prepare(queries, "queries")
    if Q0.shape[1] != R0.shape[1]:
        raise DataError(f"queries: has {Q0.shape[1]} features, X has {R0.shape[1]}")
    if M is not None and M.name == "precomputed":
        if R0.shape[0] != R0.shape[1]:
            raise DataError(
                f"X: metric 'precomputed' needs the square training distance matrix, got {R0.shape}"
            )
        check_distances(Q0, "queries")  # X: by fit_metric
    return M, R0, Q0


def _any(nominal):
    """Whether ``nominal`` (None, column indices or a boolean mask) names a column."""
    if nominal is None:
        return False
    arr = np.asarray(nominal)
    return bool(arr.any()) if arr.dtype == bool else arr.size > 0


def _check_k(n_neighbors, k_max, loo):
    if isinstance(n_neighbors, bool) or not isinstance(n_neighbors, numbers.Integral):
        raise DataError(f"n_neighbors: expected an integer, got {n_neighbors!r}")
    k = int(n_neighbors)
    if not 1 <= k <= k_max:
        what = "n_samples - 1 (leave-one-out)" if loo else "n_samples"
        raise DataError(f"n_neighbors: must be between 1 and {what} = {k_max}, got {k}")
    return k


def _metric_exact(M, R, Q, loo, k):
    """Reduced distances and indices of the k nearest under a kernel metric."""
    m, (n_ref, d) = Q.shape[0], R.shape
    check_memory(
        graph_bytes(m, k, n_ref, d), f"a neighbour graph of {m} queries x {k} neighbours among {n_ref} rows"
    )
    out_dist = np.empty((m, k), dtype=np.float64)
    out_ind = np.empty((m, k), dtype=np.intp)
    if m == 0:
        return out_dist, out_ind
    if M.code in (_METRICS.MANHATTAN, _METRICS.CHEBYSHEV, _METRICS.MINKOWSKI):
        check_power_scale(R, None if loo else Q, M.power if M.code == _METRICS.MINKOWSKI else 1.0)
    if M.code == _METRICS.PRECOMPUTED:
        R, RT = np.empty((n_ref, 0)), np.empty((0, n_ref))
    else:
        RT = np.ascontiguousarray(R.T)
    rows = np.arange(m, dtype=np.intp)
    _METRICS.metric_select_rows(
        M.code, Q, R, RT, rows, loo, M.power, M.kinds, M.scale, M.vd, M.vd_off, M.n_vals, 0, out_dist, out_ind
    )
    return out_dist, out_ind


def check_power_scale(R, Q, power):
    """Refuse data whose sums of |differences| ** ``power`` would overflow or underflow
    (manhattan and chebyshev: power 1; minkowski: its p): DataError asking to rescale.
    ``R``: the reference rows, centred on their mean; ``Q``: the query rows (None: the
    references themselves, leave-one-out). Validation checks a spec's minkowski settings
    with it on each training part (:mod:`knnx.spec.checks`)."""
    center = _mean(R)
    spread = _max_abs_dev(R, center)
    if Q is not None:
        spread = max(spread, _max_abs_dev(Q, center))
    d = R.shape[1]
    if spread == 0:
        return
    log_top = power * np.log10(2.0 * spread) + np.log10(d) if np.isfinite(spread) else np.inf
    if not log_top < 300:
        raise DataError(
            f"X: values too far apart for float64 sums of |x - y|^{power:g} (max |x - mean| = {spread:.3g} over "
            f"{d} features); rescale the data"
        )
    if power * np.log10(spread) < -300:
        raise DataError(
            f"X: values too close together for float64 sums of |x - y|^{power:g} (max |x - mean| = "
            f"{spread:.3g}); rescale the data"
        )


def _exact(R, Q, loo, k):
    """Squared distances and indices of the k nearest (validated float64 arrays)."""
    m, (n_ref, d) = Q.shape[0], R.shape
    check_memory(
        graph_bytes(m, k, n_ref, d), f"a neighbour graph of {m} queries x {k} neighbours among {n_ref} rows"
    )
    out_dist = np.empty((m, k), dtype=np.float64)
    out_ind = np.empty((m, k), dtype=np.intp)
    if m == 0:
        return out_dist, out_ind
    centred = _centre(R, Q, loo)  # refuses data whose distances would overflow, on every path
    _run_path(search_paths(m, n_ref, d, k, loo)[0], Q, R, k, loo, centred, out_dist, out_ind)
    return out_dist, out_ind


def _run_path(path, Q, R, k, loo, centred, out_dist, out_ind):
    """Fill the outputs by the first kernel path of a search: "select", "brute", or the
    screened search ("screen"; it takes "seed" and "symmetric" by itself where its sizes
    call for them), which falls back to "brute" when the data defeats float32 screening.
    :func:`_exact` and the warm-up (:func:`warm_up_path`) both search through here."""
    rows = np.arange(Q.shape[0], dtype=np.intp)
    work = len(rows) * R.shape[0] * max(R.shape[1], 1)
    if path == "select":
        RT = np.ascontiguousarray(R.T)
        launch(_NEIGHBORS.select_rows, len(rows), work, SEARCH_MIN_WORK, Q, RT, rows, loo, out_dist, out_ind)
        return
    if path == "brute" or not _screened_search(Q, R, k, loo, centred, out_dist, out_ind):
        launch(_NEIGHBORS.brute_rows, len(rows), work, SEARCH_MIN_WORK, Q, R, rows, loo, out_dist, out_ind)


def search_paths(m, n_ref, d, k, loo):
    """The kernel paths :func:`kneighbors` takes for ``m`` queries (``loo``: the
    leave-one-out graph) among ``n_ref`` rows of ``d`` features, ``k`` neighbours, the
    first deciding: ["select"] (every float64 distance, the k smallest selected),
    ["brute"], or "screen" then "brute" (for rows whose candidates overflow) and, at
    large sizes, "seed" (a sampled first threshold) and "symmetric" (leave-one-out by
    block pairs). The search itself follows this list (:func:`_run_path`); the runner's
    warm-up compiles the kernels it names before a cell is timed (:func:`search_plan`,
    :func:`warm_up_path`)."""
    if _SELECT_FACTOR * k >= n_ref * d:
        return ["select"]
    if m * n_ref <= _BRUTE_WORK or n_ref <= 4 * _candidate_capacity(k):
        return ["brute"]
    paths = ["screen", "brute"]
    if _seeded(n_ref, k):
        paths.append("seed")
    if _symmetric(n_ref, d, k, loo):
        paths.append("symmetric")
    return paths


def search_plan(searches, n_train, n_test, d, k_max=0):
    """The kernel paths (:func:`search_paths`, in first use order) of a cell's searches:
    each of ``searches``, ``(leave-one-out?, k)`` (a third item, under a metric other than
    squared Euclidean, adds "metric", the kernel of :mod:`knnx._kernels.metrics`), taken at the cell's sizes (the
    leave-one-out graph of its ``n_train`` training rows, or its ``n_test`` test rows
    against them, ``d`` features) with its width raised to ``k_max`` as a
    :class:`knnx.GraphStore` of that width raises it (capped at what the data allows)."""
    paths = []
    if any(len(s) > 2 for s in searches):
        paths.append("metric")  # a metric other than squared Euclidean: its kernel too
    for loo, k, *_ in dict.fromkeys(searches):
        m, k_cap = (n_train, n_train - 1) if loo else (n_test, n_train)
        k = max(k, min(k_max, k_cap))
        if m > 0 and 1 <= k <= k_cap:
            paths += [p for p in search_paths(m, n_train, d, k, loo) if p not in paths]
    return paths


def warm_sizes(path):
    """``(n_ref, m, d, loo)``: the smallest sizes at which a search with k = 1 runs the
    kernels of ``path`` (see :func:`search_paths`): "seed" and "symmetric" need 8192 and
    1025 rows to occur."""
    return {
        "metric": (40, 8, 2, False),
        "select": (40, 8, 1, False),
        "brute": (40, 8, 1, False),
        "screen": (4 * _candidate_capacity(1) + 1, 8, 1, False),
        "seed": (8 * _SEED_SAMPLE, 8, 1, False),
        "symmetric": (_SYMMETRIC_BLOCK + 1, None, _SYMMETRIC_MIN_FEATURES, True),  # two blocks
    }[path]


def warm_up_path(path):
    """Compile (or load from numba's cache) the kernels of one search path on small random
    arrays (:func:`warm_sizes`), through the code :func:`_exact` runs (a few milliseconds
    once they are compiled)."""
    n_ref, m, d, loo = warm_sizes(path)
    rng = np.random.default_rng(0)
    R = rng.standard_normal((n_ref, d))
    Q = R if loo else rng.standard_normal((m, d))
    if path == "metric":  # one compilation serves every metric code
        _metric_exact(fit_metric("manhattan", R), R, Q, loo, 1)
        return
    out_dist, out_ind = np.empty((Q.shape[0], 1)), np.empty((Q.shape[0], 1), dtype=np.intp)
    first = "screen" if path in ("seed", "symmetric") else path
    _run_path(first, Q, R, 1, loo, _centre(R, Q, loo), out_dist, out_ind)


def _finish(out_dist, out_ind, squared, metric=None):
    if not squared:
        if metric is None:
            np.sqrt(out_dist, out=out_dist)
        else:
            out_dist = metric.distance(out_dist)
    return out_dist, out_ind


def reciprocal_neighbors(neigh_ind, n_samples):
    """Inverse (reciprocal) neighbourhoods of a neighbour list, in CSR form.

    Parameters
    ----------
    neigh_ind : ndarray of shape (n_queries, k)
        Output of :func:`kneighbors`.
    n_samples : int
        Number of reference points.

    Returns
    -------
    indptr : ndarray of shape (n_samples + 1,)
    indices : ndarray of shape (n_queries * k,)
        ``indices[indptr[j]:indptr[j + 1]]`` are the queries that have ``j`` among
        their neighbours, in increasing order.
    """
    ind = np.ascontiguousarray(neigh_ind, dtype=np.intp)
    if ind.ndim != 2:
        raise DataError("neigh_ind: expected a 2-D array")
    if ind.size and (ind.min() < 0 or ind.max() >= n_samples):
        raise DataError(f"neigh_ind: indices must lie in [0, {n_samples})")
    return _NEIGHBORS.reciprocal_csr(ind, int(n_samples))
