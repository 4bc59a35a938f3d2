"""Search: selections found by a seeded search over subsets of the training rows
(Skalak 1994; García, Cano & Herrera 2008).

The search's moves and its acceptance are numba loops (:mod:`knnx._kernels.rmhc`)
that keep every row's nearest selected rows up to date, so a move costs one row's
distances and the rescans of the rows it concerns, not a refit.
"""

import numpy as np

from knnx._kernels import lazy
from knnx.estimators.knn import TIE_RULES
from knnx.estimators.params import AnyOf, Interval, Literal, Options
from knnx.limits import MAX_POPULATION, MAX_SEARCH, MAX_SEED
from knnx.reduction.base import SELECTION_METRIC, Selection, loo_graph
from knnx.reduction.condensing import _store
from knnx.reduction.generation import allocate

R = lazy("knnx._kernels.rmhc")
S = lazy("knnx._kernels.ssma")
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
    n_iter : int in [0, 100000], default 10000 (KEEL's; at most :data:`knnx.limits.MAX_SEARCH`)
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
        "n_iter": Interval(0, MAX_SEARCH, integer=True),
        "tie": Options(*(t for t in TIE_RULES if t != "random")),
        "random_state": AnyOf(Interval(0, MAX_SEED, integer=True), Literal(None)),
        **SELECTION_METRIC,
    }
    # k nearest selected rows, the row itself excluded: validation refuses k >= the
    # smallest training part (a larger k costs n x k arrays)
    _neighbor_param = ("k", 1)

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


class SSMA(Selection):
    """García, Cano and Herrera's steady-state memetic algorithm (García et al. 2008, "A
    memetic algorithm for evolutionary prototype selection: a scaling up approach").
    A chromosome is a subset of the training rows; its fitness is
    alpha * (100 x the share of training rows its 1-NN classifies correctly, each row
    not its own neighbour) + (1 - alpha) * (100 x the share of rows it removes).

    1. ``population`` chromosomes, each row in each with probability 1/2. A chromosome
       never lacks a class: one that would (here, or after a child's mutation) gets a
       row of that class drawn at random, and the local search never removes a class's
       last row (knnx's choice: the paper does not say; a subset without a class would
       have it put back whole by the rule every selection keeps).
    2. Each step: two parents by binary tournaments (two distinct chromosomes drawn, the
       fitter wins, the first drawn on a tie); uniform crossover (each gene from one
       parent or the other with probability 1/2, the second child taking the other's);
       each gene of each child flipped with probability ``p_mutation``; each child
       evaluated, then improved by the local search with probability 1 when it is
       fitter than the population's worst, ``p_meme`` otherwise; the two children and
       the two worst chromosomes: the fittest two stay (an incumbent first on a tie).
    3. The local search (the meme): passes over the child's rows in a random order,
       each tentatively removed; the rows whose nearest selected row it was take their
       next nearest, and the removal stays when the rows turned right minus those
       turned wrong reach the threshold; until a pass removes nothing. The threshold
       starts at 0; after 10 steps in a row without the best chromosome so far
       classifying more rows it rises by 1 (removals must gain more), after 10 without
       it keeping fewer rows it falls by 1 (removals may cost more); the two counts
       run apart, so when both stall the threshold holds.
    4. Until ``max_evaluations`` evaluations: a chromosome's counts as one (the initial
       population's included), a local search's trial as the rows it re-examines over
       n. The rows kept are the fittest chromosome's (the first on a tie).

    The choices the paper leaves open, and knnx's, are those above (the crossover's
    second child, the replacement, the threshold's schedule and the evaluations'
    count). A row's nearest selected row is searched in its 256 nearest other rows
    (knnx's exact leave-one-out graph), then by a scan of the selected rows: the same
    row as a full search, ties by row index. Draws come from
    ``np.random.default_rng(random_state)`` in this order: ``random((population, n))``
    and each chromosome's repairs; then each step: two ``choice(population, 2,
    replace=False)``, ``random(n)`` for the crossover, per child ``random(n)`` for the
    mutation and its repairs, then per child ``random()`` for the local search's
    chance and, when it runs, ``permutation(n)``.

    Parameters
    ----------
    population : int in [4, 1000], default 30 (at most :data:`knnx.limits.MAX_POPULATION`)
    max_evaluations : int in [1, 100000], default 10000 (at most :data:`knnx.limits.MAX_SEARCH`)
    alpha : float in [0, 1], default 0.5
    p_mutation : float in [0, 1], default 0.001
    p_meme : float in [0, 1], default 0.0625
    random_state : int or None, default None (counts as 0; the runner sets the seed)
    metric, metric_params, nominal : as :class:`knnx.reduction.ENN`'s.

    Attributes
    ----------
    sample_indices_, metric_ : as :class:`knnx.reduction.ENN`'s. fitness_ : float, the
    rows kept's fitness. n_evaluations_ : float, evaluations spent. threshold_ : int,
    the local search's threshold at the end.

    Notes
    -----
    KEEL's ``SSMA`` replaces the worst by the first child and the second worst by the
    second when strictly fitter, draws the children's genes independently, never lets
    the worst chromosome compete in a tournament, and its threshold schedule reduces to
    +1 when accuracy stalled, else -1 (docs/reduction.md).
    """

    _parameter_constraints = {
        "population": Interval(4, MAX_POPULATION, integer=True),
        "max_evaluations": Interval(1, MAX_SEARCH, integer=True),
        "alpha": Interval(0, 1),
        "p_mutation": Interval(0, 1),
        "p_meme": Interval(0, 1),
        "random_state": AnyOf(Interval(0, MAX_SEED, integer=True), Literal(None)),
        **SELECTION_METRIC,
    }

    def __init__(
        self,
        population=30,
        max_evaluations=10000,
        alpha=0.5,
        p_mutation=0.001,
        p_meme=0.0625,
        random_state=None,
        metric="euclidean",
        metric_params=None,
        nominal=None,
    ):
        self.population = population
        self.max_evaluations = max_evaluations
        self.alpha = alpha
        self.p_mutation = p_mutation
        self.p_meme = p_meme
        self.random_state = random_state
        self.metric = metric
        self.metric_params = metric_params
        self.nominal = nominal

    def _select(self, X, y, metric):
        n = len(y)
        if n < 2:
            return np.arange(n)
        _, graph = loo_graph(X, min(n - 1, GRAPH_WIDTH), metric)
        search = _Search(self, graph, X, y, metric)
        rng = np.random.default_rng(0 if self.random_state is None else self.random_state)
        pop = rng.random((self.population, n)) < 0.5
        for m in pop:
            _repair(m, y, rng)
        fit = np.array([search.evaluate(m)[0] for m in pop])
        self.n_evaluations_ = float(self.population)
        while self.n_evaluations_ < self.max_evaluations:
            parents = [pop[_tournament(rng, fit)], pop[_tournament(rng, fit)]]
            u = rng.random(n) < 0.5
            children = [np.where(u, parents[1], parents[0]), np.where(u, parents[0], parents[1])]
            for child in children:
                child ^= rng.random(n) < self.p_mutation
                _repair(child, y, rng)
            scores = [search.improve(child, rng, fit.min()) for child in children]
            _replace(pop, fit, children, scores)
            search.adapt(pop, fit)
        best = int(np.argmax(fit))
        self.fitness_, self.threshold_ = float(fit[best]), search.threshold
        return np.flatnonzero(pop[best])


# A row's nearest selected row is looked for among its GRAPH_WIDTH nearest other rows
# first (SSMA), then by a scan.
GRAPH_WIDTH = 256


def _repair(mask, y, rng):
    """A chromosome without a row of some class gets one, drawn among its rows (for each
    such class, in class order: ``integers(n_c)``)."""
    for c in np.flatnonzero(np.bincount(y[mask], minlength=int(y.max()) + 1) == 0):
        rows = np.flatnonzero(y == c)
        mask[rows[rng.integers(len(rows))]] = True


def _tournament(rng, fit):
    """A binary tournament: two distinct chromosomes drawn, the fitter (the first on a tie)."""
    a, b = rng.choice(len(fit), 2, replace=False)
    return a if fit[a] >= fit[b] else b


def _replace(pop, fit, children, scores):
    """The two children and the two worst chromosomes: the fittest two stay, in the
    worst ones' places (an incumbent first on a tie)."""
    worst = np.argsort(fit, kind="stable")[:2]
    pool = [(fit[w], 0, i, pop[w].copy()) for i, w in enumerate(worst)]
    pool += [(score, 1, i, child) for i, (child, score) in enumerate(zip(children, scores, strict=True))]
    pool.sort(key=lambda e: (-e[0], e[1], e[2]))
    for w, (score, _, _, mask) in zip(worst, pool[:2], strict=True):
        pop[w], fit[w] = mask, score


class _Search:
    """SSMA's evaluations, local search and threshold, on one training part."""

    def __init__(self, ssma, graph, X, y, metric):
        self.ssma, self.graph, self.y, self.n = ssma, graph, y, len(y)
        self.n_classes = int(y.max()) + 1
        self.R, _, self.fitted, _, _, _ = _store(X, metric, 1)
        self.code = metric.code
        self.nn, self.moved = np.empty(self.n, dtype=np.intp), np.empty(self.n, dtype=np.intp)
        self.threshold, self.stalled, self.kept_size, self.best = 0, [0, 0], None, None

    def fitness(self, right, size):
        a = self.ssma.alpha
        return a * 100.0 * right / self.n + (1 - a) * 100.0 * (self.n - size) / self.n

    def evaluate(self, mask):
        """(fitness, rows right) of ``mask``; ``nn``: each row's nearest selected row."""
        right = S.correct(mask, self.graph, self.code, self.R, self.y, *self.fitted, self.nn)
        return self.fitness(right, mask.sum()), right

    def improve(self, child, rng, worst):
        """The child's fitness after its evaluation and, by chance, its local search."""
        score, _ = self.evaluate(child)
        self.ssma.n_evaluations_ += 1
        chance = 1.0 if score > worst else self.ssma.p_meme
        if rng.random() < chance:
            order = rng.permutation(self.n)
            right, spent = S.meme(
                child,
                order,
                self.threshold,
                self.graph,
                self.code,
                self.R,
                self.y,
                self.n_classes,
                *self.fitted,
                self.nn,
                self.moved,
            )
            self.ssma.n_evaluations_ += spent
            score = self.fitness(right, child.sum())
        return score

    def adapt(self, pop, fit):
        """The threshold's schedule (the class docstring), after a step."""
        best = int(np.argmax(fit))
        right = S.correct(pop[best], self.graph, self.code, self.R, self.y, *self.fitted, self.nn)
        size = int(pop[best].sum())
        if self.best is not None:
            self.stalled[0] = self.stalled[0] + 1 if right <= self.best else 0
            self.stalled[1] = self.stalled[1] + 1 if size >= self.kept_size else 0
        self.best = right if self.best is None else max(self.best, right)
        self.kept_size = size if self.kept_size is None else min(self.kept_size, size)
        if self.stalled[0] >= 10:  # accuracy stalled: only removals that gain it
            self.threshold, self.stalled[0] = self.threshold + 1, 0
        if self.stalled[1] >= 10:  # reduction stalled: removals that cost a row more
            self.threshold, self.stalled[1] = self.threshold - 1, 0
