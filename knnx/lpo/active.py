"""Leave-p-out query-by-committee active learning with kNN (Celisse & Mary-Huard 2011, Sec. 4).

The LpO committee of a training set of n points is the set of the C(n, p) kNN
classifiers trained on its (n - p)-subsets. Its vote shares at a new point have a
closed form (:func:`committee_shares`), and so does its agreement
(:func:`lpo_agreement`). :func:`active_learning` runs the pool-based loop of
Sec. 4.3: at each round pick the m pool points of lowest agreement, add them with
their labels, re-tune k by exact LpO, and measure the error on the remaining pool;
``strategy="passive"`` adds m random pool points instead (the paper's p-LpO).

Every function takes ``metric``, ``metric_params`` and ``nominal`` (see
:mod:`knnx.neighbors.metrics`; default squared Euclidean): the kNN committee, the
LpO tuning and the evaluated kNN rank neighbours under the metric fitted on the
labelled training set in force (in :func:`active_learning`, refitted each round on
the enlarged set; never on the pool or the queries).
"""

import time
from dataclasses import dataclass

import numpy as np

from knnx._kernels import SEARCH_MIN_WORK, launch
from knnx._kernels.agreement import committee_shares as _committee_shares_kernel
from knnx._kernels.lpo import log_binomial_table, rank_probabilities
from knnx.errors import DataError
from knnx.estimators.knn import KNNClassifier
from knnx.lpo.risk import RANK_FLOOR, _argmin_k, _check_int, _rows, graph_metric, lpo_risk_from_graph
from knnx.neighbors.search import kneighbors

__all__ = ["committee_shares", "lpo_agreement", "active_learning", "RoundRecord", "STRATEGIES"]

STRATEGIES = ("qbc", "passive")


def _metric_args(metric, metric_params, nominal):
    return {"metric": metric, "metric_params": metric_params, "nominal": nominal}


def _shares_from_codes(X_train, codes, n_classes, X_query, k, p, distance=None):
    """Committee shares; ``distance``: :func:`_metric_args` (None: Euclidean), fitted on
    the training set."""
    n = X_train.shape[0]
    searched = "euclidean" if distance is None else graph_metric(X=X_train, codes=codes, **distance)
    _, ind = kneighbors(X_train, k + p, X_query, metric=searched)
    PV = np.ascontiguousarray(rank_probabilities(n + 1, p + 1, k, p, RANK_FLOOR)[k - 1])
    LC = log_binomial_table(k + p, p)
    ind = np.ascontiguousarray(ind, dtype=np.intp)
    out = np.zeros((ind.shape[0], n_classes))
    work = ind.shape[0] * ind.shape[1] * (p + 1) * n_classes
    launch(
        _committee_shares_kernel,
        ind.shape[0],
        work,
        SEARCH_MIN_WORK,
        ind,
        codes,
        n_classes,
        k,
        PV,
        LC,
        RANK_FLOOR,
        out,
    )
    return out


def _check_committee(X_train, y_train, X_query, k, p, metric="euclidean"):
    X_train = _rows(X_train, metric, "X_train")
    X_query = _rows(X_query, metric, "X_query")
    n = X_train.shape[0]
    y_train = np.asarray(y_train)
    if y_train.ndim != 1 or y_train.shape[0] != n:
        raise DataError(f"y_train: expected {n} labels (one per row of X_train), got shape {y_train.shape}")
    if X_query.shape[1] != X_train.shape[1]:
        raise DataError(f"X_query: expected {X_train.shape[1]} features (as X_train), got {X_query.shape[1]}")
    if n < 2:
        raise DataError(f"X_train: a leave-p-out committee needs at least 2 training points, got {n}")
    p = _check_int("p", p, 0, n - 1, "0 <= p < n_train")
    k = _check_int("k", k, 1, n - p, "1 <= k <= n_train - p")
    classes, codes = np.unique(y_train, return_inverse=True)
    return X_train, codes.astype(np.intp), classes, X_query, k, p


def committee_shares(
    X_train, y_train, X_query, k, p, *, metric="euclidean", metric_params=None, nominal=None
):
    """Fraction of the LpO committee voting each class at each query point.

    Parameters
    ----------
    X_train, y_train : the n labelled points.
    X_query : array of shape (m, n_features), points outside the training set.
    k : int, 1 <= k <= n - p
    p : int, 0 <= p < n (p = 0: the single kNN classifier on all n points).

    Returns
    -------
    shares : ndarray of shape (m, n_classes), columns in ``np.unique(y_train)`` order.
        ``shares[i, c]`` = C(n, p)^-1 * sum over the committee of [member votes c at
        query i], where a member whose plurality vote is tied among s classes counts
        1/s for each (a uniform random tie break, as in :func:`knnx.lpo_risk`); rows
        sum to one. Exact (terms below 1e-17 are skipped), computed from the k + p
        nearest training neighbours of each query, never by enumerating members.
        Neighbours are ordered by (distance, training index), as in
        :class:`knnx.KNNClassifier`, under ``metric`` fitted on (X_train, y_train)
        (see the module docstring).
    """
    X_train, codes, classes, X_query, k, p = _check_committee(X_train, y_train, X_query, k, p, metric)
    distance = _metric_args(metric, metric_params, nominal)
    return _shares_from_codes(X_train, codes, len(classes), X_query, k, p, distance)


def agreement_from_shares(shares):
    """(C * max_c share - 1) / (C - 1): 1 when the committee is unanimous, 0 when split evenly.

    For two classes this is the paper's A(x) = 2 |share_1 - 1/2| (Sec. 4.2); the
    multiclass form is the same affine map of the largest share (a choice of knnx).
    """
    n_classes = shares.shape[1]
    if n_classes < 2:
        return np.ones(shares.shape[0])
    return (n_classes * shares.max(axis=1) - 1.0) / (n_classes - 1.0)


def lpo_agreement(X_train, y_train, X_query, k, p, *, metric="euclidean", metric_params=None, nominal=None):
    """Agreement A_LpO(x) of the leave-p-out kNN committee at each query (Sec. 4.2).

    See :func:`committee_shares` for the committee, the tie rule and the metric, and
    :func:`agreement_from_shares` for the map from shares to agreement.
    """
    distance = _metric_args(metric, metric_params, nominal)
    return agreement_from_shares(committee_shares(X_train, y_train, X_query, k, p, **distance))


@dataclass(frozen=True)
class RoundRecord:
    """State after round ``round`` (0 = the start set, before any query)."""

    round: int
    n_train: int
    k: int
    error: float  # error of kNN(k) trained on the current set, on the remaining pool
    n_pool: int
    mean_agreement: float  # of the points queried in this round (nan at round 0 and for passive)
    seconds: float  # wall time of the round (selection, tuning, evaluation)


def _tune_k(X, codes, p, k_max, distance=None):
    n = X.shape[0]
    if n - p < 1:
        raise DataError(f"p_tune: {p} leaves no training point in a set of {n}")
    k_cap = min(k_max, n - p)
    searched = "euclidean" if distance is None else graph_metric(X=X, codes=codes, **distance)
    _, ind = kneighbors(X, k_cap + p - 1, metric=searched)
    return _argmin_k(lpo_risk_from_graph(ind, codes, p, k_cap))


def active_learning(
    X_start,
    y_start,
    X_pool,
    y_pool,
    *,
    strategy="qbc",
    rounds=60,
    m=5,
    p_select=10,
    p_tune=10,
    k_max=50,
    k_fixed=None,
    seed=0,
    metric="euclidean",
    metric_params=None,
    nominal=None,
):
    """Pool-based active learning with the LpO committee of kNN (Sec. 4.1, 4.3).

    Round 0 tunes k on the start set and measures the error on the pool. Each round
    l = 1 .. ``rounds`` then

    1. *point selection*: ``qbc`` computes the agreement of the leave-``p_select``-out
       committee of kNN(k) (k from the previous round) at every pool point and
       queries the m points of lowest agreement; ``passive`` queries m pool points
       uniformly at random;
    2. *tuning*: k = the smallest minimiser of the exact leave-``p_tune``-out risk
       over k = 1 .. min(k_max, n - p_tune) on the enlarged training set (or
       ``k_fixed`` if given, as in the paper's Sec. 4.4);
    3. *evaluation*: error of :class:`knnx.KNNClassifier` (k, plurality) trained on
       the training set, on the points still in the pool (the paper's P^(l)).

    Ties in agreement: the pool is first put in a random order drawn from ``seed``,
    and among equal agreements the earlier point in that order is queried first
    (a stable sort), so the choice is deterministic given the seed. The committee
    size ``p_select`` is capped at n - k so that every member still has k points.

    Labels may be of any type; classes absent from the start set but present in the
    pool are handled (they get a zero committee share until queried). The metric
    (``metric``, ``metric_params``, ``nominal``): see the module docstring.

    Returns
    -------
    list of :class:`RoundRecord`, rounds 0 .. ``rounds``.
    """
    checked = _checked_inputs(X_start, y_start, X_pool, y_pool, strategy, rounds, m, metric)
    X_start, y_start, X_pool, y_pool, rounds, m = checked
    distance = _metric_args(metric, metric_params, nominal)
    classes, codes = np.unique(np.concatenate([y_start, y_pool]), return_inverse=True)
    codes, n_classes = codes.astype(np.intp), len(classes)
    rng = np.random.default_rng(seed)
    order = rng.permutation(X_pool.shape[0])
    pool_X = X_pool[order]
    pool_y = codes[X_start.shape[0] :][order]
    train_X = X_start.copy()
    train_y = codes[: X_start.shape[0]].copy()
    in_pool = np.ones(pool_X.shape[0], dtype=bool)

    def evaluate(k, mean_agreement, r, t0):
        clf = KNNClassifier(k=k, **distance).fit(train_X, train_y)
        rest = np.flatnonzero(in_pool)
        err = float(np.mean(clf.predict(pool_X[rest]) != pool_y[rest]))
        return RoundRecord(r, train_X.shape[0], k, err, len(rest), mean_agreement, time.perf_counter() - t0)

    t0 = time.perf_counter()
    k = int(k_fixed) if k_fixed is not None else _tune_k(train_X, train_y, p_tune, k_max, distance)
    records = [evaluate(k, float("nan"), 0, t0)]
    for r in range(1, rounds + 1):
        t0 = time.perf_counter()
        rest = np.flatnonzero(in_pool)
        train = (train_X, train_y, n_classes)
        pick, mean_agreement = _pick(strategy, rng, train, pool_X[rest], k, p_select, m, distance)
        chosen = rest[pick]
        in_pool[chosen] = False
        train_X = np.vstack([train_X, pool_X[chosen]])
        train_y = np.concatenate([train_y, pool_y[chosen]])
        k = int(k_fixed) if k_fixed is not None else _tune_k(train_X, train_y, p_tune, k_max, distance)
        records.append(evaluate(k, mean_agreement, r, t0))
    return records


def _checked_inputs(X_start, y_start, X_pool, y_pool, strategy, rounds, m, metric="euclidean"):
    """active_learning's arguments checked (DataError naming the first bad one) and
    converted: float arrays, label arrays, rounds and m as ints."""
    if strategy not in STRATEGIES:
        raise DataError(f"strategy: expected one of {', '.join(STRATEGIES)}, got {strategy!r}")
    X_start = _rows(X_start, metric, "X_start")
    X_pool = _rows(X_pool, metric, "X_pool")
    if X_pool.shape[1] != X_start.shape[1]:
        raise DataError(f"X_pool: expected {X_start.shape[1]} features (as X_start), got {X_pool.shape[1]}")
    y_start, y_pool = np.asarray(y_start), np.asarray(y_pool)
    if y_start.shape != (X_start.shape[0],) or y_pool.shape != (X_pool.shape[0],):
        raise DataError("y_start, y_pool: expected one label per row of X_start and X_pool")
    rounds = _check_int("rounds", rounds, 0, 10**6, "rounds >= 0")
    m = _check_int("m", m, 1, 10**9, "m >= 1")
    if rounds * m > X_pool.shape[0]:
        raise DataError(
            f"rounds * m: {rounds} x {m} queries need a pool of at least {rounds * m}, got {X_pool.shape[0]}"
        )
    return X_start, y_start, X_pool, y_pool, rounds, m


def _pick(strategy, rng, train, candidates, k, p_select, m, distance):
    """``(positions, mean agreement)`` of one round's queries among ``candidates``:
    ``qbc``'s committee of p = min(p_select, n - k) (:func:`_query_by_committee`), or
    ``passive``'s m uniform draws (mean agreement nan); ``train``: (X, codes, n_classes)."""
    if strategy == "passive":
        return rng.choice(len(candidates), size=m, replace=False), float("nan")
    p = min(p_select, train[0].shape[0] - k)
    return _query_by_committee(*train, candidates, k, p, m, distance)


def _query_by_committee(train_X, train_y, n_classes, candidates, k, p, m, distance=None):
    """``(positions, mean agreement)`` of the ``m`` candidates of lowest agreement of the
    leave-``p``-out committee of kNN(k), the earlier first among equals (stable sort)."""
    shares = _shares_from_codes(train_X, train_y, n_classes, candidates, k, p, distance)
    agreement = agreement_from_shares(shares)
    pick = np.argsort(agreement, kind="stable")[:m]
    return pick, float(agreement[pick].mean())
