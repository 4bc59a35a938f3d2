"""Every pair of contestants at once: the paired tests over the folds of each dataset
(:func:`paired_table`), the Wilcoxon signed-rank tests over datasets with Holm's
adjustment (:func:`wilcoxon_holm`) and the verdicts and counts drawn from them
(:func:`significant_winners`, :func:`significance_counts`,
:func:`pairwise_significance`). The rules are those of :mod:`knnx.stats.compare`'s
docstring; this module computes them with array operations over all pairs, never a
Python loop over pairs, so that 2,000 contestants (2 million pairs) take seconds.

Exactness: every number is the one the pair-by-pair definition gives, to the bit (the
tests keep the pair-by-pair code as their oracle):

* the paired tests take their means, variances and p-values with the same numpy and
  scipy operations as :func:`paired_tests` (a row of an array reduced along its
  contiguous axis sums as the same row alone), pairs that do not share every fold
  with :func:`paired_tests` itself;
* the Wilcoxon test's statistic and p-value depend on the differences only through
  the signed ranks of the nonzero ones (the ranks, the ties among them, the zeros and
  which are positive: scipy's exact, permutation and normal methods all read nothing
  else), so each pair's differences are replaced by their signed ranks, sorted, and
  each distinct pattern (a few dozen on three datasets) is tested once: by
  ``scipy.stats.wilcoxon`` on many patterns at a time, grouped so that scipy picks
  for each group the method it picks for each pattern alone, and its permutation
  test (ties or zeros on at most 13 datasets: 2^n sign changes, 0.8 s a call at 13)
  by counting subset sums of the ranks exactly (:func:`_sign_flip_test`); pairs with
  a non-finite difference run as given."""

import math

import numpy as np
import pandas as pd

from knnx.evaluation.metrics import LOWER_IS_BETTER
from knnx.stats.ties import TIE_RTOL, snap

# Relative size below which two values' difference is rounding (e.g. the same mean summed
# in another order), not a difference between configurations: knnx's tie rule.
ROUNDING = TIE_RTOL

# Pairs per block of the paired tests: block x folds values per array (a few MB).
_BLOCK_VALUES = 1 << 21


def holm(pvalues):
    """Holm's step-down adjusted p-values, in the order given: the i-th smallest p is
    multiplied by (m − i + 1), the running maximum taken, and capped at 1."""
    p = np.asarray(pvalues, dtype=np.float64)
    m = len(p)
    order = np.argsort(p, kind="stable")
    # fmin: a NaN p counts as 1, as the running maximum of min(1, ...) over Python floats did
    scaled = np.fmin(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(scaled) if m else scaled
    return adjusted


def paired_tests(a, b, test_train_ratio):
    """Paired tests of two configurations over the folds they share on one dataset.

    ``a``, ``b``: their values on the same folds (repeat x fold, in the same order);
    ``test_train_ratio``: n_test / n_train of those folds. Returns the number of
    folds, the mean difference a − b, and two two-sided tests on the differences d_j,
    J folds, mean d̄, sample variance s² (ddof 1), J − 1 degrees of freedom:

    * the paired t-test, t = d̄ / √(s² / J) (``scipy.stats.ttest_rel``);
    * the corrected resampled t-test of Nadeau & Bengio (2003), t = d̄ / √((1/J +
      n_test/n_train) s²): the folds of repeated k-fold cross-validation share
      training rows, so their differences are correlated and the plain t-test is
      too liberal; the correction widens the variance by n_test/n_train.

    Rules where the statistic is undefined (s² = 0 up to rounding, :data:`ROUNDING`
    relative to the values): equal values (differences within rounding) give t = nan
    and p = 1; a constant nonzero difference gives t = ±inf and p = 0 (every fold
    agrees: Nock et al.'s Fig. 5 counts it as significant); a single fold gives
    t = p = nan.
    """
    from scipy.stats import t as student

    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    d = a - b
    j = len(d)
    mean = float(d.mean()) if j else math.nan
    out = {"n_folds": j, "mean_difference": mean}
    if j < 2:
        return {**out, "t": math.nan, "p": math.nan, "t_corrected": math.nan, "p_corrected": math.nan}
    # differences below this are rounding (values summed in another order), not a difference
    tol = ROUNDING * max(1.0, float(np.max(np.abs(a))), float(np.max(np.abs(b))))
    if float(d.max() - d.min()) <= tol:  # constant up to rounding: no variance
        if abs(mean) <= tol:
            return {**out, "t": math.nan, "p": 1.0, "t_corrected": math.nan, "p_corrected": 1.0}
        t = math.copysign(math.inf, mean)
        return {**out, "t": t, "p": 0.0, "t_corrected": t, "p_corrected": 0.0}
    var = float(d.var(ddof=1))
    t = mean / math.sqrt(var / j)
    t_c = mean / math.sqrt((1.0 / j + test_train_ratio) * var)
    return {
        **out,
        "t": t,
        "p": float(2 * student.sf(abs(t), j - 1)),
        "t_corrected": t_c,
        "p_corrected": float(2 * student.sf(abs(t_c), j - 1)),
    }


_PAIRED = ("n_folds", "mean_difference", "t", "p", "t_corrected", "p_corrected")


def _paired_block(a, b, ratio):
    """:func:`paired_tests` of every row of ``a`` against the same row of ``b`` (pairs x
    folds, every fold present), as arrays, to the bit."""
    from scipy.stats import t as student

    rows, j = a.shape
    d = a - b
    mean = d.mean(axis=1) if j else np.full(rows, np.nan)
    out = {"n_folds": np.full(rows, j, dtype=np.int64), "mean_difference": mean}
    if j < 2:
        return {**out, **{k: np.full(rows, np.nan) for k in _PAIRED[2:]}}
    tol = ROUNDING * np.maximum(1.0, np.maximum(np.abs(a).max(axis=1), np.abs(b).max(axis=1)))
    constant = (d.max(axis=1) - d.min(axis=1)) <= tol
    equal = constant & (np.abs(mean) <= tol)
    with np.errstate(divide="ignore", invalid="ignore"):
        var = d.var(axis=1, ddof=1)
        t = mean / np.sqrt(var / j)
        t_c = mean / np.sqrt((1.0 / j + ratio) * var)
    varied = ~constant
    p, p_c = np.empty(rows), np.empty(rows)
    p[varied] = _two_sided(student, np.abs(t[varied]), j - 1)
    p_c[varied] = _two_sided(student, np.abs(t_c[varied]), j - 1)
    shifted = constant & ~equal
    t[shifted] = t_c[shifted] = np.copysign(np.inf, mean[shifted])
    p[shifted] = p_c[shifted] = 0.0
    t[equal] = t_c[equal] = np.nan
    p[equal] = p_c[equal] = 1.0
    return {**out, "t": t, "p": p, "t_corrected": t_c, "p_corrected": p_c}


def _two_sided(student, statistic, df):
    """``2 * student.sf(statistic, df)``, the distribution evaluated once per distinct
    value (many pairs share a t on folds of few test rows)."""
    where, distinct = pd.factorize(statistic, use_na_sentinel=False)
    return (2 * student.sf(np.asarray(distinct, dtype=np.float64), df))[where]


def _paired_dataset(values, ratio, first, second):
    """The paired tests of the pairs (``first[i]``, ``second[i]``) of one dataset's
    per-fold ``values`` (contestants x folds), in blocks of pairs."""
    parts = {k: [] for k in _PAIRED}
    complete = ~np.isnan(values).any(axis=1)
    step = max(1, _BLOCK_VALUES // max(1, values.shape[1]))
    for start in range(0, len(first), step):
        i, j = first[start : start + step], second[start : start + step]
        block = _paired_block(values[i], values[j], ratio)
        for row in np.flatnonzero(~(complete[i] & complete[j])):  # some folds missing: the shared ones
            a, b = values[i[row]], values[j[row]]
            shared = ~(np.isnan(a) | np.isnan(b))
            for k, v in paired_tests(a[shared], b[shared], ratio).items():
                block[k][row] = v
        for k in _PAIRED:
            parts[k].append(block[k])
    return {k: np.concatenate(v) if v else np.empty(0) for k, v in parts.items()}


def paired_table(means, folds, sizes):
    """The paired tests (:func:`paired_tests`) of every pair of ``means``' columns on
    every dataset, over the folds they share (``folds``: rows (dataset, repeat, fold);
    ``sizes``: n_train and n_test per dataset). A DataFrame dataset, a, b, n_folds,
    mean_difference, t, p, t_corrected, p_corrected, test_train_ratio: datasets in
    ``means``' order, pairs (i < j) in column order within each."""
    n = len(means.index)
    first, second = np.triu_indices(len(means.columns), 1)
    tests, ratios = {k: [] for k in _PAIRED}, []
    for d in means.index:
        n_train, n_test = sizes.loc[d, ["n_train", "n_test"]]
        ratio = float(n_test) / float(n_train)
        values = np.ascontiguousarray(folds.loc[d][means.columns].to_numpy(dtype=np.float64).T)
        for k, v in _paired_dataset(values, ratio, first, second).items():
            tests[k].append(v)
        ratios.append(np.full(len(first), ratio))
    return pd.DataFrame(
        {
            "dataset": _labels(means.index, np.repeat(np.arange(n), len(first))),
            "a": _labels(means.columns, np.tile(first, n)),
            "b": _labels(means.columns, np.tile(second, n)),
            **{k: np.concatenate(v) for k, v in tests.items()},
            "test_train_ratio": np.concatenate(ratios),
        }
    )


def _labels(names, at):
    """``names[at]`` as a column of the dtype pandas gives a list of those names (text:
    its string dtype, as the tables built row by row had), without converting each."""
    return pd.Series(list(names)).array.take(at)


def _signed_rank_patterns(d):
    """Each row of ``d`` (pairs x datasets, finite) as the pattern the Wilcoxon test
    reads: the signed average ranks of its nonzero |d| (zeros stay 0), sorted."""
    from scipy.stats import rankdata

    zero = d == 0
    ranks = rankdata(np.where(zero, np.inf, np.abs(d)), axis=1, method="average")
    return np.sort(np.where(zero, 0.0, np.sign(d) * ranks), axis=1)


def _wilcoxon_rows(d):
    """(statistic, p) of ``scipy.stats.wilcoxon`` on each row of ``d`` (no row all
    zero): once per distinct signed-rank pattern (module docstring)."""
    from scipy.stats import wilcoxon

    statistic, p = np.empty(len(d)), np.empty(len(d))
    finite = np.isfinite(d).all(axis=1)
    for row in np.flatnonzero(~finite):  # inf or nan: the test as it is
        result = wilcoxon(d[row])
        statistic[row], p[row] = float(result.statistic), float(result.pvalue)
    if finite.any():
        patterns = _signed_rank_patterns(d[finite])
        first, inverse = np.unique(_pattern_codes(patterns), return_index=True, return_inverse=True)[1:]
        found_statistic, found_p = _wilcoxon_patterns(patterns[first])
        statistic[finite] = found_statistic[inverse.ravel()]
        p[finite] = found_p[inverse.ravel()]
    return statistic, p


def _wilcoxon_patterns(patterns):
    """(statistic, p) of ``scipy.stats.wilcoxon`` on each row of ``patterns`` (distinct
    signed-rank patterns). scipy chooses its method for a whole call (the exact
    distribution up to 50 datasets without ties or zeros; with them a permutation test
    up to 13, the normal approximation above; the normal approximation above 50), so
    rows are passed together only with rows it treats alike: each row's numbers are
    then those of a call of its own (sums of ranks are exact). The permutation test
    (2^n sign changes, 0.8 s a call at n = 13) is :func:`_sign_flip_test`."""
    from scipy.stats import wilcoxon

    statistic, p = np.empty(len(patterns)), np.empty(len(patterns))
    n = patterns.shape[1]
    magnitudes = np.sort(np.abs(patterns), axis=1)
    tied = (magnitudes == 0).any(axis=1) | (np.diff(magnitudes, axis=1) == 0).any(axis=1)
    flips = tied if n <= 13 else np.zeros(len(patterns), dtype=bool)
    if flips.any():
        statistic[flips], p[flips] = _sign_flip_test(patterns[flips])
    step = max(1, _BLOCK_VALUES // n)
    for group in (np.flatnonzero(~flips & tied), np.flatnonzero(~flips & ~tied)):
        for start in range(0, len(group), step):
            rows = group[start : start + step]
            result = wilcoxon(patterns[rows], axis=1)
            statistic[rows] = np.asarray(result.statistic, dtype=np.float64)
            p[rows] = np.asarray(result.pvalue, dtype=np.float64)
    return statistic, p


def _sign_flip_test(patterns):
    """scipy's permutation Wilcoxon test (``wilcoxon`` with ties or zeros on at most 13
    datasets: ``permutation_test`` over all 2^n sign changes), row by row of
    ``patterns``, computed exactly: the statistic is the sum r+ of the positive ranks
    (its two-sided form min(r+, r−)); under the sign changes r+ takes every subset sum
    of the nonzero ranks (each 2^zeros times), counted by a convolution per set of
    ranks; p = min(P(r+ <= observed), P(r+ >= observed)) · 2, capped at 1, as scipy
    counts them (its relative slack of 100 eps cannot reach the next half rank)."""
    doubled = np.rint(np.abs(patterns) * 2).astype(np.int64)  # ranks are halves: whole numbers
    positive = np.where(patterns > 0, doubled, 0).sum(axis=1)
    negative = np.where(patterns < 0, doubled, 0).sum(axis=1)
    statistic = np.minimum(positive, negative) / 2.0
    p = np.empty(len(patterns))
    ranks, which = np.unique(np.sort(doubled, axis=1), axis=0, return_inverse=True)
    for i, row in enumerate(ranks):
        nonzero = row[row > 0]
        counts = np.zeros(int(nonzero.sum()) + 1, dtype=np.int64)
        counts[0] = 1
        for v in nonzero:  # the number of subsets per sum
            counts[v:] += counts[:-v].copy()
        at = positive[which.ravel() == i]
        total = 2.0 ** len(nonzero)
        below, above = np.cumsum(counts)[at] / total, np.cumsum(counts[::-1])[::-1][at] / total
        p[which.ravel() == i] = np.clip(np.minimum(below, above) * 2, 0.0, 1.0)
    return statistic, p


def _pattern_codes(patterns):
    """One sortable key per row of ``patterns`` (signed ranks, multiples of 1/2 in
    [−N, N]), equal exactly when the rows are: an integer in base 4N + 1 when N digits
    fit in 62 bits, else the row's bytes."""
    n = patterns.shape[1]
    base = 4 * n + 1
    if n * math.log2(base) < 62:
        digits = np.rint(patterns * 2).astype(np.int64) + 2 * n  # 0 .. 4N
        return digits @ (base ** np.arange(n - 1, -1, -1, dtype=np.int64))
    rows = np.ascontiguousarray(patterns)
    return rows.view(np.dtype((np.void, rows.dtype.itemsize * n))).ravel()


def wilcoxon_holm(means, metric):
    """Per pair of ``means``' columns (i < j, in column order): wins, ties and losses over
    datasets and the Wilcoxon signed-rank test on the per-dataset means, Holm-adjusted
    (:mod:`knnx.stats.compare`'s rules). A DataFrame a, b, wins, ties, losses,
    statistic, p, p_holm."""
    lower = LOWER_IS_BETTER.get(metric, False)
    values = snap(means.to_numpy(dtype=np.float64), axis=1).T  # tying means are equal
    first, second = np.triu_indices(values.shape[0], 1)
    a, b = values[first], values[second]
    better = a < b if lower else a > b
    worse = a > b if lower else a < b
    same = a == b
    equal = same.all(axis=1)
    statistic, p = np.full(len(a), np.nan), np.ones(len(a))
    if (~equal).any():
        # the test ranks |a - b|: differences that tie (rounding) share a rank too
        d = a[~equal] - b[~equal]
        statistic[~equal], p[~equal] = _wilcoxon_rows(np.sign(d) * snap(np.abs(d), axis=1))
    return pd.DataFrame(
        {
            "a": _labels(means.columns, first),
            "b": _labels(means.columns, second),
            "wins": better.sum(axis=1),
            "ties": same.sum(axis=1),
            "losses": worse.sum(axis=1),
            "statistic": statistic,
            "p": p,
            "p_holm": holm(p),
        }
    )


def significant_winners(paired, metric="error", alpha=0.05):
    """Per row of ``paired`` (:class:`knnx.stats.compare.CompareResult`'s per-dataset
    tests), the configuration its test at ``alpha`` finds significantly better:
    ``winner`` under the paired t-test (``p``), ``winner_corrected`` under Nadeau and
    Bengio's corrected test (``p_corrected``); None where the test is not significant
    or the mean difference is zero (or nan). The better of the pair has the better mean
    (the lower for metrics where lower is better). The one significance rule of
    :func:`significance_counts`, :func:`pairwise_significance` and the report."""
    lower = LOWER_IS_BETTER.get(metric, False)
    difference = paired["mean_difference"].to_numpy(dtype=np.float64)
    # a mean difference within rounding (the tie rule) decides nothing
    decided = ~np.isnan(difference) & (np.abs(difference) > TIE_RTOL)
    a_better = difference < 0 if lower else difference > 0
    better = np.where(a_better, paired["a"].to_numpy(dtype=object), paired["b"].to_numpy(dtype=object))
    out = {}
    for column, key in (("p", "winner"), ("p_corrected", "winner_corrected")):
        significant = decided & (paired[column].to_numpy(dtype=np.float64) < alpha)
        out[key] = pd.Series(np.where(significant, better, None), index=paired.index, dtype=object)
    return paired.assign(**out)


def significance_counts(paired, configurations, metric="error", alpha=0.05):
    """Per configuration, how many (dataset, rival) pairs its paired test over the folds
    (``paired``: :class:`knnx.stats.compare.CompareResult`'s per-dataset tests) finds
    significant at ``alpha``, counted as ``better`` for the configuration with the better
    mean and ``worse`` for the other (Nock et al. 2014, Fig. 5), under the paired t-test
    (``better``, ``worse``) and under Nadeau and Bengio's corrected test
    (``better_corrected``, ``worse_corrected``). A zero mean difference is never counted
    (:func:`significant_winners`)."""
    configurations = pd.Index(list(configurations), name="configuration")
    verdicts = significant_winners(paired, metric, alpha)
    a, b = verdicts["a"].to_numpy(dtype=object), verdicts["b"].to_numpy(dtype=object)
    counts = {}
    for column, suffix in (("winner", ""), ("winner_corrected", "_corrected")):
        winner = verdicts[column].to_numpy(dtype=object)
        decided = np.flatnonzero(pd.notna(winner))
        loser = np.where(winner[decided] == a[decided], b[decided], a[decided])
        for name, who in (("better", winner[decided]), ("worse", loser)):
            index = configurations.get_indexer(who)
            if (index < 0).any():
                raise KeyError(who[int(np.flatnonzero(index < 0)[0])])
            counts[name + suffix] = np.bincount(index, minlength=len(configurations)).astype(np.int64)
    frame = pd.DataFrame(
        {k: counts[k] for k in ("better", "worse", "better_corrected", "worse_corrected")},
        index=configurations,
    )
    return frame.reset_index()


def pairwise_significance(paired, metric="error", alpha=0.05, corrected=True):
    """Per pair (a, b), on how many datasets the paired test over the folds
    (:func:`significant_winners`; Nadeau and Bengio's corrected test, or with
    ``corrected=False`` the paired t-test) finds ``a`` significantly better
    (``a_better``) and ``b`` significantly better (``b_better``), pairs in
    ``paired``'s order."""
    verdicts = significant_winners(paired, metric, alpha)
    winner = verdicts["winner_corrected" if corrected else "winner"]
    return (
        verdicts.assign(a_better=winner == verdicts["a"], b_better=winner == verdicts["b"])
        .groupby(["a", "b"], sort=False)[["a_better", "b_better"]]
        .sum()
        .reset_index()
    )
