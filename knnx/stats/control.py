"""The tests a paper proposing one method reports: the method against a control after
Friedman, the Bayesian signed-rank test over datasets, and the 5×2cv tests on one
dataset. Plain functions on arrays and pandas objects; rules, all tested:

* **Against a control after Friedman** (Demšar 2006, JMLR 7:1-30, Sec. 3.2.2;
  :func:`control_tests`, :func:`bonferroni_dunn_cd`). ``k`` configurations ranked on
  ``N`` datasets (rank 1 the best, as :mod:`knnx.stats.compare` ranks); for every
  configuration i other than the control c, z = (R_i − R_c) / √(k (k + 1) / (6 N))
  and the two-sided p = 2 (1 − Φ(|z|)). The k − 1 p-values are adjusted by Holm's
  step-down procedure (:func:`knnx.stats.pairs.holm`) and by Bonferroni-Dunn's,
  min(1, (k − 1) p); a comparison is significant when its adjusted p is below
  ``alpha`` (strictly). Bonferroni-Dunn's critical difference is
  q_alpha √(k (k + 1) / (6 N)) with q_alpha = Φ⁻¹(1 − alpha / (2 (k − 1))) (Demšar's
  Table 5b); a configuration is significant under Bonferroni-Dunn exactly when its
  mean rank differs from the control's by more than it. Mean ranks that tie under
  knnx's tie rule (:mod:`knnx.stats.ties`: equal up to rounding) differ by 0: z = 0,
  p = 1, not worse than the control.
* **Bayesian signed-rank test** (Benavoli, Corani, Demšar & Zaffalon 2017, "Time for
  a change", JMLR 18(77); the sampler of baycomp's ``SignedRankTest``, by the same
  authors; :func:`bayesian_signed_rank`). On the per-dataset differences x − y, a
  Dirichlet process posterior with a pseudo-observation at 0 of weight ``prior``:
  each posterior sample draws weights w ~ Dirichlet(prior, 1, ..., 1) over
  (0, d_1, ..., d_n) and gives each region the weight of the Walsh averages
  (d_i + d_j) / 2 over all ordered pairs (i, j), i = j included, falling in it:
  θ_region = Σ_ij w_i w_j [(d_i + d_j) / 2 in region]. Regions: x − y > rope
  ("left", x greater: baycomp's convention, which takes differences y − x),
  |x − y| < rope ("rope"), x − y < −rope ("right", y greater). A Walsh average on a
  boundary (equal to ±rope up to rounding) counts half to each side, and with
  rope = 0 an average of 0 counts half left, half right (baycomp's Heaviside rule;
  a rope that is 0 up to rounding is 0). p_left, p_rope, p_right are the fractions of
  posterior samples in which that region has the largest θ (baycomp's
  ``Posterior.probs``); a sample in which several regions share the largest θ is
  shared equally among them (baycomp gives it to the first of left, rope, right, so
  identical x and y with rope = 0 give baycomp (1, 0) and knnx (0.5, 0, 0.5)).
* **5×2cv tests** on one dataset (:func:`five_by_two_f`, :func:`five_by_two_t`):
  ``a``, ``b`` of shape (5, 2), the metric of two configurations on the two folds of
  five repeats of 2-fold cross-validation (the same splits for both);
  p_ij = a_ij − b_ij, p̄_i = (p_i1 + p_i2) / 2, s_i² = (p_i1 − p̄_i)² + (p_i2 − p̄_i)².
  Alpaydın's (1999, Neural Computation 11(8):1885-1892) combined F =
  Σ_ij p_ij² / (2 Σ_i s_i²) ~ F(10, 5), p = P(F > f). Dietterich's (1998, Neural
  Computation 10(7):1895-1923) t = p_11 / √(Σ_i s_i² / 5) ~ t(5), two-sided p
  (mlxtend's ``combined_ftest_5x2cv`` and ``paired_ttest_5x2cv`` compute the same).
  Where the statistic is undefined (Σ s_i² = 0: p_i1 = p_i2 up to rounding in every
  repeat, rounding as in :func:`knnx.stats.compare.paired_tests`, relative to the
  values): F is nan with p = 1 when every difference is 0 (up to rounding), inf with
  p = 0 otherwise; t is nan with p = 1 when p_11 is 0, ±inf (the sign of p_11) with
  p = 0 otherwise.

Bad input raises :class:`knnx.errors.ResultsError` naming the parameter.
"""

import math
import numbers
from dataclasses import dataclass

import numpy as np
import pandas as pd

from knnx.errors import ResultsError
from knnx.evaluation.metrics import LOWER_IS_BETTER
from knnx.stats.pairs import holm
from knnx.stats.ties import TIE_RTOL, ties

# Posterior samples are processed in blocks of at most this many weights (block size x
# (n + 1)), so memory stays O(n² + block x n), never n_samples x n².
_BLOCK_ELEMENTS = 1 << 20


# The region of practical equivalence of the Bayesian signed-rank test against the control:
# differences of means within +-ROPE count as equal (knnx compare --rope).
ROPE = 0.01


def _level(alpha):
    if not (isinstance(alpha, numbers.Real) and 0 < alpha < 1):
        raise ResultsError(f"expected a level in (0, 1), got {alpha!r}", param="alpha")
    return float(alpha)


def _count(value, param, minimum):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ResultsError(f"expected a whole number >= {minimum}, got {value!r}", param=param)
    return int(value)


def bonferroni_dunn_cd(k, n, alpha=0.05):
    """Bonferroni-Dunn's critical difference of mean ranks for ``k`` configurations
    (the control included) on ``n`` datasets at level ``alpha``:
    q_alpha √(k (k + 1) / (6 n)), q_alpha = Φ⁻¹(1 − alpha / (2 (k − 1))) (Demšar 2006,
    Table 5b: 1.960, 2.241, 2.394, 2.498 for k = 2..5 at alpha = 0.05). A float."""
    from scipy.stats import norm

    k, n, alpha = _count(k, "k", 2), _count(n, "n", 1), _level(alpha)
    q = norm.isf(alpha / (2 * (k - 1)))
    return float(q * math.sqrt(k * (k + 1) / (6 * n)))


def control_tests(mean_ranks, n_datasets, control, alpha=0.05):
    """Every configuration against ``control`` after Friedman's test (module docstring).

    ``mean_ranks``: a pandas Series, configuration name -> mean rank over
    ``n_datasets`` datasets (rank 1 the best; k = its length, at least 2, names
    unique); ``control``: one of its names.

    Returns a DataFrame with one row per configuration other than the control, in the
    Series' order, columns: ``configuration``, ``mean_rank``, ``rank_difference``
    (R_i − R_control; positive: ranked worse than the control), ``z``, ``p``
    (two-sided, unadjusted), ``p_holm``, ``p_bonferroni_dunn`` (adjusted over the
    k − 1 comparisons), ``significant_holm``, ``significant_bonferroni_dunn`` (adjusted
    p < ``alpha``) and ``worse_than_control`` (R_i > R_control: rank 1 is the best)."""
    from scipy.stats import norm

    if not isinstance(mean_ranks, pd.Series):
        raise ResultsError(
            f"expected a pandas Series (configuration -> mean rank), got {type(mean_ranks).__name__}",
            param="mean_ranks",
        )
    names = list(mean_ranks.index)
    if len(names) < 2:
        raise ResultsError(f"expected at least two configurations, got {len(names)}", param="mean_ranks")
    if len(set(names)) != len(names):
        repeated = next(c for c in names if names.count(c) > 1)
        raise ResultsError(f"configuration '{repeated}' appears more than once", param="mean_ranks")
    ranks = pd.to_numeric(mean_ranks, errors="coerce").to_numpy(dtype=np.float64)
    if not np.all(np.isfinite(ranks)):
        bad = names[int(np.flatnonzero(~np.isfinite(ranks))[0])]
        raise ResultsError(f"configuration '{bad}' has no finite mean rank", param="mean_ranks")
    n = _count(n_datasets, "n_datasets", 1)
    alpha = _level(alpha)
    if control not in names:
        raise ResultsError(
            f"'{control}' is not one of the configurations: {', '.join(map(str, names))}", param="control"
        )

    k = len(names)
    c = names.index(control)
    others = [i for i in range(k) if i != c]
    difference = ranks[others] - ranks[c]
    difference[ties(ranks[others], ranks[c])] = 0.0
    z = difference / math.sqrt(k * (k + 1) / (6 * n))
    p = 2 * norm.sf(np.abs(z))
    p_holm = holm(p)
    p_bd = np.minimum(1.0, (k - 1) * p)
    return pd.DataFrame(
        {
            "configuration": [names[i] for i in others],
            "mean_rank": ranks[others],
            "rank_difference": difference,
            "z": z,
            "p": p,
            "p_holm": p_holm,
            "p_bonferroni_dunn": p_bd,
            "significant_holm": p_holm < alpha,
            "significant_bonferroni_dunn": p_bd < alpha,
            "worse_than_control": difference > 0,
        }
    )


@dataclass(frozen=True)
class BayesianSignedRank:
    """The Bayesian signed-rank test's three probabilities (:func:`bayesian_signed_rank`),
    summing to 1:

    * ``p_left``: the posterior probability that x is greater than y by more than the
      rope (x − y > rope; named after x, as baycomp does);
    * ``p_rope``: that x and y are practically equivalent (|x − y| < rope);
    * ``p_right``: that y is greater than x by more than the rope (x − y < −rope).

    Whether greater is better depends on the metric (accuracy: x better when left;
    error: y better when left)."""

    p_left: float
    p_rope: float
    p_right: float


def _paired_vectors(x, y):
    out = []
    for name, v in (("x", x), ("y", y)):
        v = np.asarray(v, dtype=np.float64)
        if v.ndim != 1 or len(v) == 0:
            raise ResultsError(f"expected a non-empty one-dimensional array, got shape {v.shape}", param=name)
        if not np.all(np.isfinite(v)):
            raise ResultsError("expected finite values, got nan or inf", param=name)
        out.append(v)
    if len(out[0]) != len(out[1]):
        raise ResultsError(
            f"x has {len(out[0])} values and y {len(out[1])}; expected one per dataset each", param="y"
        )
    return out


def bayesian_signed_rank(x, y, rope, prior=0.5, n_samples=50000, seed=0):
    """Benavoli et al.'s (2017) Bayesian signed-rank test of x against y over datasets
    (module docstring: the sampler, the regions and the tie rules).

    ``x``, ``y``: shape (n_datasets,), each configuration's score (its mean over the
    folds) per dataset, paired by position; ``rope``: the half-width (>= 0) of the region
    of practical equivalence, in the metric's units; ``prior``: the weight (> 0) of the
    pseudo-observation at 0 (baycomp's default 0.5); ``n_samples``: posterior samples;
    ``seed``: for ``np.random.default_rng`` (the same seed gives the same numbers).

    Returns a :class:`BayesianSignedRank`: p_left = P(x − y > rope), p_rope =
    P(|x − y| < rope), p_right = P(x − y < −rope), in baycomp's sense (the fraction of
    posterior samples in which that region is the most probable)."""
    x, y = _paired_vectors(x, y)
    prior, n_samples = _sampler_options(rope, prior, n_samples)
    regions = _walsh_regions(x - y, rope)
    return _posterior(regions, _Draws(len(x) + 1, prior, n_samples, seed))


def _sampler_options(rope, prior, n_samples):
    if not (isinstance(rope, numbers.Real) and math.isfinite(rope) and rope >= 0):
        raise ResultsError(f"expected a finite width >= 0, got {rope!r}", param="rope")
    if not (isinstance(prior, numbers.Real) and math.isfinite(prior) and prior > 0):
        raise ResultsError(f"expected a finite weight > 0, got {prior!r}", param="prior")
    return prior, _count(n_samples, "n_samples", 1)


def _walsh_regions(differences, rope):
    """The (n + 1) x 3 (n + 1) matrix of the regions each Walsh sum falls in (x greater,
    within the rope, y greater; a sum on a boundary half to each side), the
    pseudo-observation at 0 first: all a posterior sample's θ depends on."""
    bound = 0.0 if ties(rope, 0.0) else 2.0 * float(rope)  # Walsh sums, twice the averages
    d = np.concatenate(([0.0], differences))  # the pseudo-observation first
    sums = d[:, None] + d[None, :]
    on_upper, on_lower = ties(sums, bound), ties(sums, -bound)
    x_greater = np.where(on_upper, 0.5, (sums > bound).astype(np.float64))
    y_greater = np.where(on_lower, 0.5, (sums < -bound).astype(np.float64))
    within = 1.0 - x_greater - y_greater
    return np.hstack((x_greater, within, y_greater))  # (n + 1) x 3 (n + 1)


class _Draws:
    """The Dirichlet weights of the posterior samples, in blocks of at most
    :data:`_BLOCK_ELEMENTS` weights from ``np.random.default_rng(seed)``; with ``keep``
    drawn once and kept (n_samples x m floats): every test against one control draws
    the same weights (same seed, same number of datasets), so a comparison draws them
    once. Without, drawn block by block each time (memory: one block)."""

    def __init__(self, m, prior, n_samples, seed, keep=False):
        self.m, self.prior, self.n_samples, self.seed = m, prior, n_samples, seed
        self._kept = [] if keep else None

    def _draw(self):
        alpha = np.ones(self.m)
        alpha[0] = self.prior
        rng = np.random.default_rng(self.seed)
        block = max(1, _BLOCK_ELEMENTS // self.m)
        for done in range(0, self.n_samples, block):
            yield rng.dirichlet(alpha, size=min(block, self.n_samples - done))

    def blocks(self):
        if self._kept is None:
            return self._draw()
        if not self._kept:
            self._kept.extend(self._draw())
        return self._kept


def _posterior(regions, draws):
    """The :class:`BayesianSignedRank` of the Walsh ``regions`` under the posterior
    samples ``draws``: per sample, θ of each region, and the region(s) with the largest."""
    m = draws.m
    wins = np.zeros(3)
    for w in draws.blocks():
        size = len(w)
        theta = np.einsum("srj,sj->sr", (w @ regions).reshape(size, 3, m), w)
        top = theta == theta.max(axis=1, keepdims=True)
        wins += (top / top.sum(axis=1, keepdims=True)).sum(axis=0)
    p_left, p_rope, p_right = (float(v) for v in wins / draws.n_samples)
    return BayesianSignedRank(p_left=p_left, p_rope=p_rope, p_right=p_right)


@dataclass(frozen=True)
class FiveByTwoF:
    """Alpaydın's combined 5×2cv F-test (:func:`five_by_two_f`): the statistic ``f``
    (F(10, 5) under the null) and its p-value ``p``."""

    f: float
    p: float


@dataclass(frozen=True)
class FiveByTwoT:
    """Dietterich's 5×2cv paired t-test (:func:`five_by_two_t`): the statistic ``t``
    (t(5) under the null; positive when a_11 > b_11) and its two-sided p-value ``p``."""

    t: float
    p: float


def _five_by_two(a, b):
    """The differences p (5 x 2), Σ s_i², and the rounding tolerance of the values."""
    arrays = []
    for name, v in (("a", a), ("b", b)):
        v = np.asarray(v, dtype=np.float64)
        if v.shape != (5, 2):
            raise ResultsError(
                f"expected shape (5, 2) (5 repeats x 2 folds of 2-fold cross-validation), got {v.shape}",
                param=name,
            )
        if not np.all(np.isfinite(v)):
            raise ResultsError("expected finite values, got nan or inf", param=name)
        arrays.append(v)
    a, b = arrays
    p = a - b
    s2 = ((p - p.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
    tol = TIE_RTOL * max(1.0, float(np.max(np.abs(a))), float(np.max(np.abs(b))))
    no_variance = bool(np.all(np.abs(p[:, 0] - p[:, 1]) <= tol))
    return p, float(s2.sum()), tol, no_variance


def five_by_two_f(a, b):
    """Alpaydın's (1999) combined 5×2cv F-test of ``a`` against ``b`` (module docstring).

    ``a``, ``b``: shape (5, 2), rows the repeats, columns the two folds, the same
    splits for both. Returns a :class:`FiveByTwoF` (f, p)."""
    from scipy.stats import f as fisher

    p, s2_sum, tol, no_variance = _five_by_two(a, b)
    if no_variance:
        if np.all(np.abs(p) <= tol):
            return FiveByTwoF(f=math.nan, p=1.0)
        return FiveByTwoF(f=math.inf, p=0.0)
    f = float((p**2).sum() / (2 * s2_sum))
    return FiveByTwoF(f=f, p=float(fisher.sf(f, 10, 5)))


def five_by_two_t(a, b):
    """Dietterich's (1998) 5×2cv paired t-test of ``a`` against ``b`` (module docstring).

    ``a``, ``b``: shape (5, 2), rows the repeats, columns the two folds, the same
    splits for both. Returns a :class:`FiveByTwoT` (t, p)."""
    from scipy.stats import t as student

    p, s2_sum, tol, no_variance = _five_by_two(a, b)
    first = float(p[0, 0])
    if no_variance:
        if abs(first) <= tol:
            return FiveByTwoT(t=math.nan, p=1.0)
        return FiveByTwoT(t=math.copysign(math.inf, first), p=0.0)
    t = first / math.sqrt(s2_sum / 5)
    return FiveByTwoT(t=t, p=float(2 * student.sf(abs(t), 5)))


def find_contestant(contestants, name, left_out=None):
    """The contestant ``name`` names: a contestant's label, or an algorithm id that is the
    first word of exactly one contestant's label. ResultsError otherwise, naming the
    contestants (and, if it was left out, why)."""
    contestants = [str(c) for c in contestants]
    if name in contestants:
        return name
    matches = [c for c in contestants if c.split(" ", 1)[0] == name]
    if len(matches) == 1:
        return matches[0]
    if left_out is not None and name in set(left_out["contestant"]):
        reason = left_out.set_index("contestant").loc[name, "reason"]
        raise ResultsError(f"'{name}' was left out of the comparison: {reason}", param="control")
    known = ", ".join(contestants)
    if matches:
        raise ResultsError(
            f"'{name}' names {len(matches)} contestants; give one of: {known}", param="control"
        )
    raise ResultsError(f"'{name}' is not a contestant; contestants: {known}", param="control")


def against_control(means, mean_ranks, metric, control, alpha=0.05, rope=ROPE):
    """Every contestant against ``control``, one row each (in ``means``' column order):
    Holm's and Bonferroni-Dunn's tests of the mean ranks after Friedman
    (:func:`control_tests`: configuration, mean_rank,
    rank_difference, z, p, p_holm, p_bonferroni_dunn, significant_holm,
    significant_bonferroni_dunn, worse_than_control), and Benavoli et al.'s Bayesian
    signed-rank test on the per-dataset means (:func:`bayesian_signed_rank`,
    seed 0, 50,000 samples) read in the metric's direction: ``p_control_better``,
    ``p_rope`` (the two differ by less than ``rope``), ``p_control_worse``; and
    ``bonferroni_dunn_cd``, the critical difference of the control tests."""
    ranks = mean_ranks.set_index("configuration")["mean_rank"].reindex(means.columns)
    n, k = means.shape
    table = control_tests(ranks, n, control, alpha)
    lower = LOWER_IS_BETTER.get(metric, False)
    x = means[control].to_numpy(dtype=np.float64)
    _sampler_options(rope, 0.5, 50000)
    draws = _Draws(n + 1, 0.5, 50000, 0, keep=True)  # bayesian_signed_rank's defaults, drawn once
    found, bayes = {}, []
    for c in table["configuration"]:
        x_, y_ = _paired_vectors(x, means[c].to_numpy(dtype=np.float64))
        regions = _walsh_regions(x_ - y_, rope)
        key = regions.tobytes()  # the test reads nothing else: equal regions, equal answer
        if key not in found:
            found[key] = _posterior(regions, draws)
        out = found[key]
        # p_left: control's value greater; better when higher is better
        better, worse = (out.p_right, out.p_left) if lower else (out.p_left, out.p_right)
        bayes.append((better, out.p_rope, worse))
    table[["p_control_better", "p_rope", "p_control_worse"]] = np.asarray(bayes, dtype=np.float64).reshape(
        -1, 3
    )
    table["bonferroni_dunn_cd"] = bonferroni_dunn_cd(k, n, alpha)
    return table


def five_by_two_pairs(means, folds):
    """Every pair of contestants on every dataset by the 5×2cv F- and t-tests, when every
    dataset has 5 repeats of 2 folds (``folds``: :class:`knnx.stats.compare.CompareResult`'s
    per-fold values, rows (dataset, repeat, fold)); None otherwise. A DataFrame dataset,
    a, b, f, p_f, t, p_t, differences a − b: :func:`five_by_two_f` and
    :func:`five_by_two_t` of each pair (i < j in column order), computed for all pairs of
    a dataset at once with the same operations, so the same bits; nan for a pair where
    either lacks one of the ten folds (a failed cell: the tests need all ten)."""
    names = pd.Series(list(means.columns)).array
    first, second = np.triu_indices(len(names), 1)
    parts = []
    for d in means.index:
        block = folds.loc[d]
        repeats = block.index.get_level_values(0).nunique()
        if (repeats, block.index.get_level_values(1).nunique(), len(block)) != (5, 2, 10):
            return None
        values = block[means.columns].to_numpy(dtype=np.float64).T.reshape(-1, 5, 2)
        finite = np.isfinite(values).all(axis=(1, 2))
        with np.errstate(invalid="ignore"):
            f, p_f, t, p_t = _five_by_two_all(values[first], values[second])
        lacking = ~(finite[first] & finite[second])
        for column in (f, p_f, t, p_t):
            column[lacking] = np.nan
        part = pd.DataFrame(
            {"a": names.take(first), "b": names.take(second), "f": f, "p_f": p_f, "t": t, "p_t": p_t}
        )
        part.insert(0, "dataset", pd.Series([d] * len(first)).array)
        parts.append(part)
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def _five_by_two_all(a, b):
    """(f, p_f, t, p_t) arrays of :func:`five_by_two_f` and :func:`five_by_two_t` of each
    ``a[i]`` against ``b[i]`` (pairs x 5 x 2, finite)."""
    from scipy.stats import f as fisher
    from scipy.stats import t as student

    p = a - b
    s2_sum = ((p - p.mean(axis=2, keepdims=True)) ** 2).sum(axis=2).sum(axis=1)
    largest = np.maximum(np.abs(a).reshape(len(a), -1).max(axis=1), np.abs(b).reshape(len(b), -1).max(axis=1))
    tol = TIE_RTOL * np.maximum(1.0, largest)
    no_variance = (np.abs(p[:, :, 0] - p[:, :, 1]) <= tol[:, None]).all(axis=1)
    zero = (np.abs(p).reshape(len(p), -1) <= tol[:, None]).all(axis=1)
    first = p[:, 0, 0]
    varied = ~no_variance
    f, p_f, t, p_t = (np.empty(len(p)) for _ in range(4))
    with np.errstate(divide="ignore", invalid="ignore"):
        f[varied] = (p**2).reshape(len(p), -1).sum(axis=1)[varied] / (2 * s2_sum[varied])
        t[varied] = first[varied] / np.sqrt(s2_sum[varied] / 5)
    p_f[varied] = fisher.sf(f[varied], 10, 5)
    p_t[varied] = 2 * student.sf(np.abs(t[varied]), 5)
    f[no_variance & zero], p_f[no_variance & zero] = np.nan, 1.0
    f[no_variance & ~zero], p_f[no_variance & ~zero] = np.inf, 0.0
    level = no_variance & (np.abs(first) <= tol)
    t[level], p_t[level] = np.nan, 1.0
    t[no_variance & ~level] = np.copysign(np.inf, first[no_variance & ~level])
    p_t[no_variance & ~level] = 0.0
    return f, p_f, t, p_t
