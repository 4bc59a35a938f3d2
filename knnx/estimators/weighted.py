"""Learned class- and prototype-weighted dissimilarities for nearest-neighbour
classification: CW, PW and CPW (Paredes & Vidal 2006), with the L2 and CDM baselines.

The weights belong to the prototype (the asymmetric form of Sec. 3.1): prototype p of
class c is compared with any vector x through

    d^2(x, p) = v_p^2 sum_j w_cj^2 (x_j - x_pj)^2            (eq. 20; CW: v = 1, eq. 15;
                                                              PW: w fixed, eq. 17)

and the weights are learned by batch gradient descent on the sigmoid-smoothed leave-one-
out error J_T (eq. 7) of the training set, following Fig. 1. The kernels are in
knnx._kernels.weighted.
"""

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from knnx._kernels import launch, lazy
from knnx.estimators import weighted_search
from knnx.estimators.base import NeighborsClassifierBase
from knnx.estimators.params import AnyOf, Interval, Literal, Options
from knnx.estimators.weighted_search import CertifiedSearch, FullSearch
from knnx.estimators.weighted_search import Prototypes as _Prototypes
from knnx.limits import MAX_EPOCHS

V = lazy("knnx._kernels.vote")
K = lazy("knnx._kernels.weighted")

SCHEMES = ("l2", "cdm", "cw", "pw", "cpw")
BASES = ("euclidean", "l1")
PAPER_STEP_GRID = (0.0, 0.001, 0.01)  # Sec. 5.4: mu and rho probed in [0, 0.01]
# The (mu, rho) pairs of step_grid="paper", in the order that settles exact ties between
# probes: both weights learned first, then class weights only, then prototype weights only.
CPW_PROBE_PAIRS = (
    (0.001, 0.001),
    (0.001, 0.01),
    (0.01, 0.001),
    (0.01, 0.01),
    (0.001, 0.0),
    (0.01, 0.0),
    (0.0, 0.001),
    (0.0, 0.01),
)
DEFAULT_MAX_EPOCHS = 10_000  # a safety cap: Fig. 1 stops on epsilon (tol) alone


def best_probe(results):
    """Index of the probe that CPW continues (step_grid="paper").

    ``results`` lists, per probed pair in :data:`CPW_PROBE_PAIRS` order, (LOO error, J_T)
    of the weights reached after the probe epochs. The lowest LOO error wins (Sec. 5.4:
    "the combination with the best LOO error estimation after these initial
    iterations"); equal LOO errors go to the lower J_T (eq. 7, the smoothed index the
    descent minimises); pairs equal in both go to the first in CPW_PROBE_PAIRS order.
    """
    best = 0
    for i, (err, J) in enumerate(results):
        if (err, J) < results[best]:
            best = i
    return best


def cdm_weights(X, y_codes, n_classes):
    """Class-dependent Mahalanobis weights w_cj = 1 / sigma_cj and the CDM step factors
    1 / sigma_cj^2 (Sec. 5.3).

    sigma_cj is the population standard deviation (ddof = 0) of feature j over class c's
    training rows. A null class deviation (a constant feature within the class, a class
    of one row) backs off to the overall deviation of feature j, and to 1 when that is
    null too. A deviation counts as null also when it is too small for float64: below
    1e-150 (1 / sigma^2 would overflow), or below the feature's spread
    max |x_j - mean_j| times sqrt(m) / 1e150 (the weighted squared dissimilarities would
    overflow). Returns (W, mu), both (n_classes, m), finite.
    """
    n_features = X.shape[1]
    spread = np.abs(X - X.mean(axis=0)).max(axis=0) if len(X) else np.zeros(n_features)
    floor = np.maximum(1e-150, spread * (np.sqrt(n_features) / 1e150))

    def usable(s):
        return s > floor

    overall = X.std(axis=0)
    overall = np.where(usable(overall), overall, 1.0)
    sigma = np.empty((n_classes, n_features))
    for c in range(n_classes):
        rows = X[y_codes == c]
        s = rows.std(axis=0) if len(rows) else np.zeros(n_features)
        sigma[c] = np.where(usable(s), s, overall)
    return 1.0 / sigma, 1.0 / sigma**2


def loo_state(X, y_codes, W, v, beta, l1=False, learn_w=False, learn_v=False):
    """One evaluation of the weights (W, v) on the training set.

    Returns a dict: ``J`` (eq. 7, the mean of S_beta(r(x))), ``loo_error`` (eq. 6, the
    fraction of x with d(x, x=) >= d(x, x!=)), ``same`` / ``diff`` (the neighbours
    x= and x!=), and ``grad_w`` / ``grad_v``: n times the gradient of J_T with the
    neighbours held fixed (zeros for weights not learned). See
    :func:`knnx._kernels.weighted.loo_terms` for the cases r = 0, 1, inf.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    y_codes = np.ascontiguousarray(y_codes, dtype=np.intp)
    W = np.ascontiguousarray(W, dtype=np.float64)
    v = np.ascontiguousarray(v, dtype=np.float64)
    search = FullSearch(_Prototypes(X, y_codes, W.shape[0]), l1)
    return _evaluate(search, W, v, beta, l1, learn_w, learn_v)


def _evaluate(search, W, v, beta, l1, learn_w, learn_v):
    """One evaluation of (W, v) with ``search`` (a FullSearch or CertifiedSearch: the same
    neighbours and dissimilarities, bit for bit)."""
    W = np.ascontiguousarray(W, dtype=np.float64)
    v = np.ascontiguousarray(v, dtype=np.float64)
    same, diff, d_same, d_diff = search.same_diff(W, v)
    grad_w = np.zeros_like(W)
    grad_v = np.zeros_like(v)
    X, y = search.protos.X, search.protos.y
    total, errors = K.loo_terms(
        X, y, W, v, same, diff, d_same, d_diff, float(beta), l1, learn_w, learn_v, grad_w, grad_v
    )
    n = len(y)
    return {
        "J": total / n,
        "loo_error": errors / n,
        "same": same,
        "diff": diff,
        "d_same": d_same,
        "d_diff": d_diff,
        "grad_w": grad_w,
        "grad_v": grad_v,
    }


def _finite_state(state):
    """J, the gradients and every finite-set dissimilarity are finite (inf marks an empty set)."""
    d = np.concatenate([state["d_same"][state["same"] >= 0], state["d_diff"][state["diff"] >= 0]])
    return bool(
        np.isfinite(state["J"])
        and np.isfinite(d).all()
        and np.isfinite(state["grad_w"]).all()
        and np.isfinite(state["grad_v"]).all()
    )


class _Steps:
    """Counts a fit's evaluations of the weights for its ``progress(done, total)`` callback."""

    def __init__(self, progress, total):
        self.progress, self.total, self.done = progress, total, 0

    def __call__(self):
        self.done += 1
        if self.progress is not None:
            self.progress(min(self.done, self.total), self.total)

    def finish(self):
        if self.progress is not None:
            self.progress(self.total, self.total)


class WeightedMetricNN(NeighborsClassifierBase):
    """Nearest neighbours under a learned class- and/or prototype-weighted dissimilarity
    (Paredes & Vidal 2006): CW, PW, CPW, and the L2 and CDM baselines.

    Parameters
    ----------
    scheme : {"cpw", "cw", "pw", "l2", "cdm"}, default "cpw"
        "cw": class-and-feature weights w_cj learned (eq. 15-16), v = 1. "pw": one weight
        v_p per prototype learned on the initial metric (eq. 17-19). "cpw": both (eq.
        20-21). "l2": no learning, w = 1 (the unweighted base dissimilarity). "cdm": no
        learning, w_cj = 1 / sigma_cj (class-dependent diagonal Mahalanobis).
    beta : float > 0, default 8.0
        Slope of the sigmoid S_beta (eq. 2) that smooths the LOO error (the paper's
        choice after Table 2).
    mu : "auto" or float >= 0, default "auto"
        Step factor of the class weights, mu_cj in eq. (16). "auto" (Sec. 5.3): 0.001
        when the initial metric is Euclidean, 1 / sigma_cj^2 (the CDM variances, backed
        off as the weights) when it is CDM.
    rho : float >= 0, default 0.001
        Step factor of the prototype weights, rho_i in eq. (19) (Sec. 5.4).
    step_grid : None or "paper", default None
        For scheme "cpw": "paper" probes the pairs (mu, rho) of the paper's grid,
        {0, 0.001, 0.01} x {0, 0.001, 0.01} without (0, 0) (Sec. 5.4: mu, rho in
        [0, 0.01]), each for ``probe_epochs`` epochs from the initial weights, and
        continues the pair whose weights after those epochs have the lowest LOO error
        (eq. 6), as Sec. 5.4 does "during the first five iterations". ``mu`` and ``rho``
        are then not used (also not the CDM start's 1 / sigma^2). **Ties**: equal LOO
        errors go to the lower J_T (eq. 7) after the probe; pairs equal in both to the
        first in the order (0.001, 0.001), (0.001, 0.01), (0.01, 0.001), (0.01, 0.01),
        (0.001, 0), (0.01, 0), (0, 0.001), (0, 0.01): both weights learned, then class
        weights only, then prototype weights only (:func:`best_probe`).
    probe_epochs : int >= 1, default 5
        Epochs per probed pair.
    init : {"auto", "euclidean", "cdm"}, default "auto"
        Initial class weights: w = 1, or w_cj = 1 / sigma_cj; "auto" takes Euclidean if
        its LOO 1-NN error (eq. 6) on the training set is lower than CDM's, else CDM (so
        CDM on a tie: Sec. 5.3, "if the raw Euclidean (L2) metric outperforms CDM, then
        set all initial w = 1; otherwise" the CDM weights). Ignored by "l2" and "cdm".
        v starts at 1.
    max_epochs : int >= 0, default 10000
        Safety cap on the number of epochs (weight updates, probe epochs included).
        Fig. 1 has no cap: the descent stops on ``tol``. Reaching the cap before ``tol``
        is met sets ``stopped_by_ = "max_epochs"`` and warns (ConvergenceWarning).
    tol : float >= 0, default 1e-6
        Stop when the smoothed index J_T (eq. 7) changes by at most ``tol`` in an epoch
        (Fig. 1's loop ``while |lambda' - lambda| > epsilon``).
    k : int >= 1, default 1
        Neighbours voting at prediction (plurality, knnx's vote tie rule). Learning
        always optimises the 1-NN LOO error, as the paper; k > 1 is its suggested
        extension, applied at prediction only.
    base : {"euclidean", "l1"}, default "euclidean"
        Base dissimilarity. "l1": d(x, p) = v_p sum_j |w_cj x_j - w_cj x_pj| (eq. 18 with
        the L1 distance of the initial weighting); allowed with "pw", "l2" and "cdm",
        since the updates of w (16, 21) are derived for the Euclidean form.

    Attributes
    ----------
    class_weights_ : ndarray (n_classes, n_features)
        The returned w_cj (rows follow ``classes_``).
    prototype_weights_ : ndarray (n_samples,)
        The returned v_p of the training rows.
    init_ : str
        "euclidean" or "cdm", the initial class weights used.
    mu_, rho_ : float or ndarray
        The step factors used (after ``step_grid``).
    loo_error_, initial_loo_error_ : float
        LOO 1-NN error (eq. 6) of the returned and of the initial weights.
    best_epoch_, n_epochs_ : int
        Epoch of the returned weights (0 = the initial ones) and epochs run.
    stopped_by_ : str
        Why the descent stopped: "tol" (Fig. 1's rule), "max_epochs" (the safety cap,
        with a ConvergenceWarning), "non_finite" (the next update would overflow, see
        the notes) or "no_learning" (schemes "l2" and "cdm").
    curve_ : dict
        "iteration" (epoch 0..n_epochs_), "J" (eq. 7) and "loo_error" (eq. 6) of the
        weights at the start of each epoch; probe epochs are not included. "searched":
        the share of a full search's dissimilarity evaluations that the epoch's
        neighbour search made (1 = every row against every prototype; see Cost).
    reported_ : dict
        ``loo_error``, ``initial_loo_error``, ``epochs``, ``best_epoch``,
        ``init_cdm`` (1.0 if the CDM start was used), for the runner's tidy rows.

    Notes
    -----
    Learning (Fig. 1), one epoch: with the current weights, every training vector x
    finds its same-class nearest neighbour x= and different-class nearest neighbour x!=
    (never itself; ties to the smaller index), r(x) = d(x, x=) / d(x, x!=) (eq. 8), and
    Q = S'_beta(r) r; the weights of x= are moved to bring it closer and those of x!= to
    push it away, by the summed updates (16), (19), (21), all computed from the weights
    at the start of the epoch (the procedure updates copies V', W' and swaps them at the
    end of the epoch: batch gradient descent). The sums are not divided by n: the step
    factors absorb 1/n, as in the printed updates. J_T and the true LOO error are
    evaluated at every epoch start; the weights with the lowest LOO error seen are
    returned (ties: the earliest), so the LOO error never exceeds the initial metric's.

    Choices where the paper is silent: the stopping test uses J_T of eq. (7) (a LOO count
    changes by multiples of 1/n); a tie d(x, x=) = d(x, x!=) counts as a LOO error (eq.
    6, step(1) = 1); in eq. (21) the R_j denominator is the class-weighted part
    sum_l w_cl^2 (x_l - x~_l)^2 without v^2, which makes (21) the exact gradient of (7)
    for the squared form (20); x without a same-class partner is an error that moves no
    weight. Weights may change sign (they enter squared).

    Numeric extremes: data whose squared dissimilarities would overflow or underflow in
    float64 (``max |x - mean| * sqrt(d) > 1e150`` or ``0 < max |x - mean| < 1e-140``,
    as :func:`knnx.kneighbors`) is refused with a one-line
    :class:`knnx.errors.DataError` at ``fit``, and queries likewise at prediction; CDM
    deviations too small for float64 back off (:func:`cdm_weights`). If an update would
    make a weight or a dissimilarity non-finite, the descent stops before it (the
    weights and curve end at the last finite epoch). Identical rows: every LOO pair is
    at dissimilarity 0, r = 1, an error that moves no weight. A class of one row has no
    same-class partner (an error that moves no weight). k = n_samples is allowed at
    prediction, k > n_samples raises ValueError.

    Cost: every evaluation of the weights needs each training row's same-class and
    different-class nearest neighbour under the weighted dissimilarity among all n
    rows. The first is a full search, O(n^2 d) time and O(n d) memory (no n x n
    matrix); it keeps, per row, the 16 nearest of each kind and bounds on the rest.
    Later evaluations compute the candidates exactly and certify them through bounds on
    how far the weights moved (:mod:`knnx.estimators.weighted_search`); only the
    classes whose bound fails are searched again. Below n^2 d = 10^7 the full search
    runs at every epoch (the lists would cost more than they save). The neighbours, dissimilarities and
    weights are bit for bit those of a full search at every epoch (``_certified =
    False`` on a subclass runs the full search); only the work changes (``curve_
    ["searched"]``). ``fit`` makes one evaluation per epoch until J_T settles
    (``tol``), at most ``max_epochs + 3`` (``_n_evaluations()``; with
    ``step_grid="paper"`` 8 probes of ``probe_epochs + 1`` more). On the small Table 3
    sets the descent settles after a few hundred to a few thousand epochs
    (``benchmarks/weighted.py --table3`` prints the counts); a run that oscillates
    reaches the cap. docs/benchmarks.md has the measured seconds against the full
    search (``benchmarks/weighted.py --lists``) and against n (``--scaling``).
    ``fit(X, y, progress=callback)`` reports every evaluation; ``knnx run`` shows it
    beside the cell in its progress bar.
    """

    _parameter_constraints = {
        "scheme": Options(*SCHEMES),
        "beta": Interval(0, low_open=True),
        "mu": AnyOf(Options("auto"), Interval(0)),
        "rho": Interval(0),
        "step_grid": AnyOf(Options("paper"), Literal(None)),
        "probe_epochs": Interval(1, MAX_EPOCHS, integer=True),
        "init": Options("auto", "euclidean", "cdm"),
        "max_epochs": Interval(0, MAX_EPOCHS, integer=True),
        "tol": Interval(0),
        "k": Interval(1, integer=True),
        "base": Options(*BASES),
    }
    _certified = True  # False: the full search at every evaluation (tests compare the two)
    _neighbor_param = ("k", 0)
    _neighbor_counts = ("k",)
    # What a spec that sets a search metric on CW/PW/CPW is told (registry.parameter_problem):
    # their dissimilarity is learned, over the base norm.
    _parameter_hints = dict.fromkeys(
        ("metric", "metric_params", "nominal"),
        "CW, PW and CPW learn their own weighted dissimilarity; its norm is the parameter base "
        "('euclidean' or 'l1'), and they take numeric attributes only",
    )

    @classmethod
    def _setting_problems(cls, params):
        problems = []
        if params.get("base") == "l1" and params.get("scheme") in ("cw", "cpw"):
            problems.append(
                f"base='l1' is allowed with scheme 'pw', 'l2' or 'cdm'; the class-weight updates of scheme "
                f"{params['scheme']!r} need base='euclidean'"
            )
        if params.get("step_grid") is not None and params.get("scheme") != "cpw":
            problems.append("step_grid applies to scheme 'cpw' only")
        probes = len(CPW_PROBE_PAIRS) * params.get("probe_epochs", 5)  # the paper's grid: 8 step pairs
        if params.get("step_grid") == "paper" and probes > MAX_EPOCHS:
            problems.append(
                f"step_grid='paper' with probe_epochs={params['probe_epochs']} makes up to {probes} probe epochs, "
                f"more than the limit of {MAX_EPOCHS}"
            )
        return problems

    def __init__(
        self,
        scheme="cpw",
        beta=8.0,
        mu="auto",
        rho=0.001,
        step_grid=None,
        probe_epochs=5,
        init="auto",
        max_epochs=DEFAULT_MAX_EPOCHS,
        tol=1e-6,
        k=1,
        base="euclidean",
    ):
        self.scheme = scheme
        self.beta = beta
        self.mu = mu
        self.rho = rho
        self.step_grid = step_grid
        self.probe_epochs = probe_epochs
        self.init = init
        self.max_epochs = max_epochs
        self.tol = tol
        self.k = k
        self.base = base

    def fit(self, X, y, progress=None):
        """Learn the weights (Fig. 1) and keep the training rows as prototypes. Returns self.

        ``progress``, if given, is called as ``progress(done, total)`` after each
        evaluation of the weights on the training set (one O(n^2 d) pass, see Cost in the
        class notes); ``total`` counts every evaluation the settings allow (the
        descent may stop earlier, at ``tol``), and the last call is ``(total, total)``.
        """
        self._validate_params()
        X, y_codes = self._validate_fit_data(X, y)
        n, m = X.shape
        if self.k > n:
            raise ValueError(f"WeightedMetricNN: k={self.k} exceeds the training set size (n_samples = {n})")
        self._check_scale(X)
        n_classes = len(self.classes_)
        l1 = self.base == "l1"
        protos = _Prototypes(X, y_codes, n_classes)
        ones_w, ones_v = np.ones((n_classes, m)), np.ones(n)
        W_cdm, mu_cdm = cdm_weights(X, y_codes, n_classes)

        steps = _Steps(progress, self._n_evaluations())
        start, search = self._initial_weights(protos, ones_w, ones_v, W_cdm, l1, steps)
        W0 = W_cdm if start == "cdm" else ones_w
        mu_auto = mu_cdm if start == "cdm" else 0.001
        learn_w = self.scheme in ("cw", "cpw")
        learn_v = self.scheme in ("pw", "cpw")
        self.init_ = start

        if self.step_grid == "paper":
            runs = [
                self._descend(
                    search.copy(),
                    W0,
                    ones_v,
                    mu,
                    rho,
                    learn_w,
                    learn_v,
                    l1,
                    self.probe_epochs,
                    0.0,
                    steps=steps,
                )
                for mu, rho in CPW_PROBE_PAIRS
            ]
            pick = best_probe([(run["errors"][-1], run["J"][-1]) for run in runs])
            start_run = runs[pick]
            mu, rho = CPW_PROBE_PAIRS[pick]
        else:
            start_run = None
            mu = mu_auto if self.mu == "auto" else float(self.mu)
            rho = float(self.rho)
        self.mu_, self.rho_ = mu, rho

        if not (learn_w or learn_v):
            run = self._descend(search, W0, ones_v, mu, rho, False, False, l1, 0, self.tol, steps=steps)
        else:
            run = self._descend(
                search, W0, ones_v, mu, rho, learn_w, learn_v, l1, self.max_epochs, self.tol, start_run, steps
            )
        steps.finish()
        self._record_fit(run, learn_w or learn_v, start)
        self._fit_X = X
        self._protos = _Prototypes(X, y_codes, n_classes).prepare(
            self.class_weights_, self.prototype_weights_
        )
        self._y_codes = y_codes
        return self

    def _search(self, protos, l1):
        """The neighbour search of the descent: certified candidate lists when the full
        search's work n^2 m reaches ``weighted_search.LISTS_MIN_WORK`` (below it the lists
        cost more than they save), else, or when the class sets ``_certified = False``,
        the full search at every evaluation; both give the same neighbours, bit for bit."""
        n, m = protos.X.shape
        if self._certified and n * n * m >= weighted_search.LISTS_MIN_WORK:
            return CertifiedSearch(protos, l1)
        return FullSearch(protos, l1)

    def _initial_weights(self, protos, ones_w, ones_v, W_cdm, l1, steps):
        """Where the descent starts, "euclidean" or "cdm" (``init="auto"``: CDM unless the
        L2 weights give a lower leave-one-out error, Sec. 5.3; two evaluations), and a
        search whose lists were built at the starting weights."""
        if self.scheme in ("l2", "cdm") or self.init != "auto":
            start = {"l2": "euclidean", "cdm": "cdm"}.get(self.scheme, self.init)
            return start, self._search(protos, l1)
        searches = {"euclidean": self._search(protos, l1), "cdm": self._search(protos, l1)}
        err_l2 = _evaluate(searches["euclidean"], ones_w, ones_v, self.beta, l1, False, False)["loo_error"]
        steps()
        err_cdm = _evaluate(searches["cdm"], W_cdm, ones_v, self.beta, l1, False, False)["loo_error"]
        steps()
        start = "euclidean" if err_l2 < err_cdm else "cdm"  # Sec. 5.3: CDM unless L2 is better
        return start, searches[start]

    def _record_fit(self, run, learning, start):
        """The fitted attributes of a descent ``run`` (see fit), with a ConvergenceWarning if
        it stopped at max_epochs."""
        self.stopped_by_ = run["stopped_by"] if learning else "no_learning"
        if self.stopped_by_ == "max_epochs":
            warnings.warn(
                f"WeightedMetricNN: the descent reached max_epochs={self.max_epochs} before J_T changed by "
                f"at most tol={self.tol} in an epoch; the weights with the lowest LOO error seen are returned",
                ConvergenceWarning,
                stacklevel=3,  # the caller of fit
            )
        self.class_weights_ = run["best_W"]
        self.prototype_weights_ = run["best_v"]
        self.loo_error_ = run["best_error"]
        self.initial_loo_error_ = run["errors"][0]
        self.best_epoch_ = run["best_epoch"]
        self.n_epochs_ = len(run["errors"]) - 1
        self.curve_ = {
            "iteration": np.arange(len(run["errors"])),
            "J": np.array(run["J"]),
            "loo_error": np.array(run["errors"]),
            "searched": np.array(run["searched"]),
        }
        self.reported_ = {
            "loo_error": self.loo_error_,
            "initial_loo_error": self.initial_loo_error_,
            "epochs": self.n_epochs_,
            "best_epoch": self.best_epoch_,
            "init_cdm": float(start == "cdm"),
        }

    def _n_evaluations(self):
        """How many evaluations of the weights fit makes at most (see ``fit``'s progress)."""
        learning = self.scheme in ("cw", "pw", "cpw")
        n = 2 if learning and self.init == "auto" else 0
        if self.step_grid == "paper":
            n += len(CPW_PROBE_PAIRS) * (self.probe_epochs + 1)  # pairs probed
        return n + (self.max_epochs + 1 if learning else 1)

    def _descend(self, search, W, v, mu, rho, learn_w, learn_v, l1, max_epochs, tol, resume=None, steps=None):
        """Fig. 1 from (W, v), or continuing ``resume`` (a probe run) for the remaining epochs.

        Returns the per-epoch J and LOO errors, the best weights (lowest LOO error, the
        earliest on ties), their epoch, and the final weights."""
        if resume is None:
            W, v = W.copy(), v.copy()
            J, errors, searched = [], [], []
            best = (np.inf, 0, W, v)
        else:
            W, v = resume["W"].copy(), resume["v"].copy()
            J, errors, searched = list(resume["J"]), list(resume["errors"]), list(resume["searched"])
            search = resume["search"]
            best = (resume["best_error"], resume["best_epoch"], resume["best_W"], resume["best_v"])
        state = resume["state"] if resume is not None else None
        W_prev, v_prev, state_prev = W, v, state  # the last weights whose state was finite
        stopped_by = "tol"
        while True:
            if state is None:
                state = _evaluate(search, W, v, self.beta, l1, learn_w, learn_v)
                if steps is not None:
                    steps()
                if errors and not _finite_state(state):
                    # the last update overflowed a dissimilarity: stop with the weights before it
                    W, v, state = W_prev, v_prev, state_prev
                    stopped_by = "non_finite"
                    break
                J.append(state["J"])
                errors.append(state["loo_error"])
                searched.append(search.last_fraction)
                if state["loo_error"] < best[0]:
                    best = (state["loo_error"], len(errors) - 1, W.copy(), v.copy())
            epoch = len(errors) - 1
            if epoch >= 1 and abs(J[-1] - J[-2]) <= tol:  # Fig. 1: while |lambda' - lambda| > epsilon
                break
            if epoch >= max_epochs:
                stopped_by = "max_epochs"
                break
            W_prev, v_prev, state_prev = W, v, state
            if learn_w:
                W = W - mu * state["grad_w"]
            if learn_v:
                v = v - rho * state["grad_v"]
            if not (np.isfinite(W).all() and np.isfinite(v).all()):
                W, v = W_prev, v_prev  # an update overflowed: stop with the weights before it
                stopped_by = "non_finite"
                break
            state = None
        return {
            "W": W,
            "v": v,
            "J": J,
            "errors": errors,
            "best_error": best[0],
            "best_epoch": best[1],
            "best_W": best[2],
            "best_v": best[3],
            "state": state,
            "stopped_by": stopped_by,
            "searched": searched,
            "search": search,
        }

    def kneighbors(self, X, k=None):
        """(dissimilarities, training indices) of the k nearest prototypes of each row of
        X under the learned dissimilarity, ordered by (d^2, index); d^2 as in the module."""
        X = self._validate_query(X)
        self._check_scale(self._fit_X, X)
        ind, dist = self._protos.k_nearest(X, self.k if k is None else k, self.base == "l1")
        return dist, ind

    def _vote(self, X):
        dist, ind = self.kneighbors(X)
        n_classes = len(self.classes_)
        pred = np.empty(len(ind), dtype=np.intp)
        proba = np.empty((len(ind), n_classes))
        args = (ind, dist, self._y_codes, n_classes, False, V.TIE_NEAREST, np.empty(0), pred, proba)
        launch(V.vote, len(ind), len(ind) * (ind.shape[1] + n_classes), V.VOTE_PARALLEL_MIN_WORK, *args)
        return pred, proba

    def predict(self, X):
        """Plurality vote of the k nearest prototypes (k = 1: the nearest one's class)."""
        pred = self._vote(X)[0]
        return self.classes_[pred]

    def predict_proba(self, X):
        """Vote fractions among the k nearest prototypes."""
        return self._vote(X)[1]
