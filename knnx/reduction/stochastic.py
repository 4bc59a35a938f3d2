"""Search: selections found by a seeded search over subsets of the training rows
(Skalak 1994).

The search's moves and its acceptance are numba loops (:mod:`knnx._kernels.rmhc`)
that keep every row's nearest selected rows up to date, so a move costs one row's
distances and the rescans of the rows it concerns, not a refit.
"""

import numpy as np

from knnx._kernels import lazy
from knnx.estimators.knn import TIE_RULES
from knnx.estimators.params import AnyOf, Interval, Literal, Options
from knnx.limits import MAX_SEED
from knnx.reduction.base import SELECTION_METRIC, Selection
from knnx.reduction.condensing import _store
from knnx.reduction.generation import allocate

R = lazy("knnx._kernels.rmhc")
H = lazy("knnx._kernels.hybrid")


class RMHC(Selection):
    """Skalak's random mutation hill climbing (Skalak 1994, "Prototype and feature
    selection by sampling and random mutation hill climbing algorithms"): a subset of
    ``round(fraction * n)`` rows is drawn, then each of ``n_iter`` mutations swaps one
    selected row for one unselected row, drawn at random, and is kept when the training
    rows the subset classifies correctly (each row by the vote of its k nearest selected
    rows, itself excluded) are as many as before or more (Mitchell and Holland's RMHC,
    which Skalak applies, keeps equal fitness).

    The choices the paper leaves open, and knnx's: the size (``fraction``: 10 %, KEEL's
    default) and its start, every class's share by largest remainders (one row at least)
    drawn among its rows; a mutation that would leave a class without a selected row is
    not made (it counts as one of ``n_iter``); a row does not vote for itself; the vote
    is knnx's (``tie``). Draws come from ``np.random.default_rng(random_state)``: each
    class's start rows in class order (``choice(n_c, m_c, replace=False)``), then the
    positions of every swap (``integers(m, size=n_iter)``, ``integers(n - m,
    size=n_iter)``) in the lists of selected and unselected rows as they stand.

    Parameters
    ----------
    k : int, default 1
    fraction : float in (0, 1), default 0.1
    n_iter : int, default 10000 (KEEL's)
    tie : {"nearest", "lowest"}, default "nearest"
    random_state : int or None, default None (counts as 0; the runner sets the seed)
    metric, metric_params, nominal : as :class:`knnx.reduction.ENN`'s.

    Attributes
    ----------
    sample_indices_, metric_ : as :class:`knnx.reduction.ENN`'s. n_correct_ : int, the
    training rows the final subset classifies correctly. n_kept_ : int, mutations kept.

    Notes
    -----
    KEEL's ``RMHC`` keeps a mutation only when it classifies more rows (strictly), skips
    every neighbour at distance 0, and its draws never reach the last position of
    either list (docs/reduction.md).
    """

    _parameter_constraints = {
        "k": Interval(1, integer=True),
        "fraction": Interval(0, 1, low_open=True, high_open=True),
        "n_iter": Interval(0, integer=True),
        "tie": Options(*(t for t in TIE_RULES if t != "random")),
        "random_state": AnyOf(Interval(0, MAX_SEED, integer=True), Literal(None)),
        **SELECTION_METRIC,
    }

    def __init__(
        self,
        k=1,
        fraction=0.1,
        n_iter=10000,
        tie="nearest",
        random_state=None,
        metric="euclidean",
        metric_params=None,
        nominal=None,
    ):
        self.k = k
        self.fraction = fraction
        self.n_iter = n_iter
        self.tie = tie
        self.random_state = random_state
        self.metric = metric
        self.metric_params = metric_params
        self.nominal = nominal

    def _select(self, X, y, metric):
        n, n_classes = len(y), int(y.max()) + 1
        counts = np.bincount(y, minlength=n_classes)
        rng = np.random.default_rng(0 if self.random_state is None else self.random_state)
        shares = allocate(counts, max(n_classes, int(round(self.fraction * n))))
        chosen = np.concatenate(
            [
                np.flatnonzero(y == c)[rng.choice(counts[c], shares[c], replace=False)]
                for c in range(n_classes)
            ]
        )
        others = np.setdiff1d(np.arange(n), chosen)
        if others.size == 0:
            return chosen
        draws_a = rng.integers(len(chosen), size=self.n_iter)
        draws_b = rng.integers(len(others), size=self.n_iter)
        R_, RT, fitted, _, top_d, top_i = _store(X, metric, self.k)
        R.nearest_chosen(chosen, metric.code, R_, *fitted, top_d, top_i)
        tie = H.TIE_NEAREST if self.tie == "nearest" else H.TIE_LOWEST
        self.n_correct_, self.n_kept_ = R.rmhc(
            chosen, others, draws_a, draws_b, metric.code, R_, RT, y, n_classes, tie, *fitted, top_d, top_i
        )
        return chosen
