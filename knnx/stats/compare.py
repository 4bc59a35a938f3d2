"""Compare configurations across datasets: ranks, Friedman, Iman-Davenport, Nemenyi,
pairwise Wilcoxon signed-rank tests with Holm's correction (Demšar 2006; García &
Herrera 2008).

Input: a results frame (see :func:`knnx.results.read_results`). One metric is
compared; each configuration (:func:`knnx.stats.configurations.configuration_labels`: the algorithm
id and the parameters that vary, seeds pooled) is summarised per dataset by its mean
over repeats, folds and seeds. Every configuration must have results on every
dataset (a complete block design).

Rules, all tested:

* Equal means: knnx's one tie rule (:mod:`knnx.stats.ties`): two means tie when they
  differ by at most 1e-12 relative (rounding, e.g. ``0.04`` and
  ``0.039999999999999994``). Ranks, Friedman's statistic, the win/tie/loss counts,
  Wilcoxon's differences (and their ranks) and the choice of ``best-test`` all see
  tying values as equal
  (each row's tying means snapped to one value, :func:`knnx.stats.ties.snap`);
  the means shown are the means as computed.
* Ranks per dataset: 1 is the best mean (the lowest for metrics where lower is
  better, :data:`knnx.evaluation.metrics.LOWER_IS_BETTER`); tying means share the average of
  their ranks (``scipy.stats.rankdata(method="average")``).
* Friedman: ``scipy.stats.friedmanchisquare`` on the per-dataset means (three or more
  configurations), chi² with k − 1 degrees of freedom; Iman-Davenport's
  F = (N − 1) chi² / (N (k − 1) − chi²) with k − 1 and (k − 1)(N − 1) degrees of
  freedom (F = inf, p_F = 0 when every dataset ranks the configurations alike;
  chi² = F = 0 and p = p_F = 1 when every dataset ties every configuration, where
  scipy's formula is 0/0).
* Nemenyi's critical difference at ``alpha``: q_alpha √(k (k + 1) / (6 N)), with q_alpha
  the studentized range quantile over √2 (``scipy.stats.studentized_range``; Demšar's
  Table 5a: 1.960, 2.343, 2.569, 2.728 for k = 2..5 at alpha = 0.05).
* Pairs: wins, ties and losses count datasets by their means (a tie: tying means);
  the two-sided Wilcoxon signed-rank test of ``scipy.stats.wilcoxon`` on the
  per-dataset means (zero differences dropped, scipy's default; p = 1 when every
  difference is zero); Holm's step-down adjustment over all pairs.
* Significance over the folds (:func:`significant_winners`): a pair's paired test
  at ``alpha`` finds the configuration with the better mean significantly better; a
  zero mean difference is never significant. :func:`significance_counts` (per
  configuration, Nock et al. 2014, Fig. 5) and :func:`pairwise_significance` (per
  pair, the report's table) count these verdicts.
* Seeds: settings that differ in a seed parameter alone (``seed``, ``random_state``)
  are one configuration, their values averaged within each fold; ``per_dataset``
  then says how many seeds each pools (``seeds``).
* Size: every pair is tested on every dataset, with array operations over all pairs
  (:mod:`knnx.stats.pairs`: the same numbers as pair by pair, to the bit); more than
  :data:`MAX_PAIRED_TESTS` tests is refused in one line naming ``select``.

:func:`compare` returns a :class:`CompareResult`; the tables, sentences and the
critical-difference diagram that show it are drawn by :mod:`knnx.reporting.comparison`.
"""

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from knnx.errors import ResultsError
from knnx.evaluation.metrics import LOWER_IS_BETTER, METRICS
from knnx.results import PARAM_PREFIX, TIMINGS
from knnx.stats.configurations import configuration_labels
from knnx.stats.control import ROPE, against_control, find_contestant
from knnx.stats.pairs import (  # noqa: F401 (re-exported: knnx.stats.compare's API)
    ROUNDING,
    holm,
    paired_table,
    paired_tests,
    pairwise_significance,
    significance_counts,
    significant_winners,
    wilcoxon_holm,
)
from knnx.stats.retention import retention_rows, row_retention
from knnx.stats.ties import best_mask, rank_rows, snap


def nemenyi_cd(k, n, alpha=0.05):
    """Nemenyi's critical difference of mean ranks for ``k`` configurations on ``n``
    datasets at level ``alpha``."""
    from scipy.stats import studentized_range

    q = studentized_range.ppf(1 - alpha, k, np.inf) / math.sqrt(2)
    return float(q * math.sqrt(k * (k + 1) / (6 * n)))


def iman_davenport(chi2, k, n):
    """Iman-Davenport's F and its p-value from Friedman's chi² (k configurations, n datasets).
    F is infinite (p = 0) when chi² is at its maximum n (k - 1), every dataset ranking
    the configurations alike, or within 1e-12 of it relative (knnx's tie rule: scipy's
    tie-corrected chi² of identical rankings can be 9.999999999999995 for 10, which
    gave F = 1.9e+15)."""
    from scipy.stats import f

    most = n * (k - 1)
    denominator = most - chi2
    if denominator <= 1e-12 * most:  # every dataset ranks the configurations alike
        return math.inf, 0.0
    value = (n - 1) * chi2 / denominator
    return float(value), float(f.sf(value, k - 1, (k - 1) * (n - 1)))


def means_table(frame, metric="error", select="all"):
    """Datasets x configurations: each configuration's mean ``metric`` per dataset.

    ``select``: "all" (every configuration a contestant), "best-test" (per dataset,
    each algorithm's configuration with the best mean on the test folds: optimistic),
    or None (refused when an algorithm has several configurations)."""
    return _contestants(frame, metric, select)["means"]


def _contestants(frame, metric, select, retention=None):
    """The contestants of a comparison: ``means`` (datasets x contestants), ``folds``
    (the per-fold values, rows (dataset, repeat, fold), seeds averaged within a fold),
    ``chosen`` (dataset, contestant, configuration: which configuration stands for
    the contestant), ``sizes`` (per dataset: mean n_train and n_test) and ``left_out``
    (contestant, reason: those without results on every dataset, or outside the band
    ``retention`` = (low, high) of mean retention, left out by name)."""
    if metric not in set(frame["metric"]):
        raise ResultsError(
            f"no rows for metric '{metric}'; present: {', '.join(map(repr, sorted(set(frame['metric']))))}",
            param="metric",
        )
    if select not in ("all", "best-test", None):
        raise ResultsError(f"expected all or best-test, got '{select}'", param="select")
    rows = frame[frame["metric"] == metric]
    if "configuration" not in rows.columns:  # labels given by the caller are kept
        rows = rows.assign(configuration=configuration_labels(rows))
    absent = [a for a in dict.fromkeys(frame["algorithm"]) if a not in set(rows["algorithm"])]
    rows, outside = _in_band(frame, rows, retention)
    per_algorithm = rows.groupby("algorithm", sort=False)["configuration"].nunique()
    several = per_algorithm[per_algorithm > 1]
    if select is None and len(several):
        name, count = several.index[0], int(several.iloc[0])
        raise ResultsError(
            f"algorithm '{name}' has {count} configurations; give {{select=all}} (each a contestant) or "
            "{select=best-test} (each algorithm's best on the test folds: optimistic), or choose them honestly "
            "with tune:",
            param="select",
            mentions=[("select", "all"), ("select", "best-test")],
        )
    means = rows.groupby(["dataset", "configuration"], sort=False)["value"].mean().unstack("configuration")
    folds = (
        rows.groupby(["dataset", "repeat", "fold", "configuration"], sort=False)["value"]
        .mean()
        .unstack("configuration")
    )
    at, of = np.nonzero(means.notna().to_numpy())  # datasets, then contestants, in order
    names = np.asarray(means.columns, dtype=object)[of].tolist()
    chosen = pd.DataFrame(
        {
            "dataset": np.asarray(means.index, dtype=object)[at].tolist(),
            "contestant": names,
            "configuration": names,
        }
    )
    if select == "best-test" and len(rows):  # none (every contestant outside --retention): refused below
        means, folds, chosen = _best_test(rows, means, folds)
        chosen["choices"] = chosen["contestant"].map(per_algorithm).astype(np.int64)
    left_out = pd.concat([_incomplete(means, metric, absent), outside], ignore_index=True)
    keep = [c for c in means.columns if c not in set(left_out["contestant"])]
    means, folds = means[keep], folds[keep]
    chosen = chosen[chosen["contestant"].isin(keep)].reset_index(drop=True)
    _check_enough(means, left_out)
    _check_size(means, select)
    sizes = rows.groupby("dataset", sort=False)[["n_train", "n_test"]].mean()
    return {
        "means": means,
        "folds": folds,
        "chosen": chosen,
        "sizes": sizes,
        "left_out": left_out,
        "seeds": _seeds(rows),
    }


def _seeds(rows):
    """How many seed settings (:data:`knnx.stats.configurations.SEED_PARAMS`) each
    configuration pools per dataset (a Series by dataset and configuration), or None
    when none pools more than one."""
    from knnx.stats.configurations import SEED_PARAMS

    columns = [
        c for c in rows.columns if c.startswith(PARAM_PREFIX) and c.removeprefix(PARAM_PREFIX) in SEED_PARAMS
    ]
    if not columns:
        return None
    keys = ["dataset", "configuration"]
    counts = rows.groupby([*keys, *columns], sort=False).size().groupby(level=[0, 1], sort=False).size()
    return counts if counts.max() > 1 else None


# The most paired tests (every pair of contestants on every dataset) a comparison makes:
# 2,000 contestants on 3 datasets make 5,997,000 (11 s and 1.6 GB on 2 cores here; 31 s
# and 2.6 GB with --out, which writes every test: docs/benchmarks.md); 1,000 on 12
# datasets, 340 on 100. Above it one line asks for fewer contestants.
MAX_PAIRED_TESTS = 6_000_000


def _check_size(means, select):
    """ResultsError when the contestants make more than :data:`MAX_PAIRED_TESTS` paired
    tests (every pair on every dataset), naming ``select``."""
    n, k = means.shape
    tests = k * (k - 1) // 2 * n
    if tests > MAX_PAIRED_TESTS:
        raise ResultsError(
            f"{k:,} contestants on {n:,} datasets make {tests:,} paired tests (every pair on every dataset), "
            f"more than the limit of {MAX_PAIRED_TESTS:,}; compare fewer configurations (e.g. "
            "{select=best-test}: each algorithm's best, or a results file of fewer settings) or fewer datasets",
            param="select",
            mentions=[("select", "best-test")],
        )


def _best_test(rows, means, folds):
    """``(means, folds, chosen)`` of each algorithm's configuration with the best mean per
    dataset (the first in file order among tying means, :mod:`knnx.stats.ties`); an
    algorithm without results on a dataset has NaN there (left out by :func:`_incomplete`)."""
    lower = LOWER_IS_BETTER.get(rows["metric"].iloc[0], False)
    best, best_folds, picks = {}, {}, []
    for alg in dict.fromkeys(rows["algorithm"]):
        configs = list(dict.fromkeys(rows.loc[rows["algorithm"] == alg, "configuration"]))
        sub = means[configs]
        # the first in file order among the means that tie the best (NaN where none)
        pick = pd.Series(
            [
                sub.columns[int(np.argmax(best_mask(row, lower)))] if not np.isnan(row).all() else None
                for row in sub.to_numpy(dtype=np.float64)
            ],
            index=sub.index,
            dtype=object,
        )
        best[alg] = pd.Series(
            [sub.loc[d, pick[d]] if pick[d] is not None else np.nan for d in sub.index],
            index=sub.index,
            dtype=np.float64,
        )
        best_folds[alg] = pd.Series(
            [folds.loc[key, pick[key[0]]] if pick[key[0]] is not None else np.nan for key in folds.index],
            index=folds.index,
            dtype=np.float64,
        )
        picks += [(d, alg, pick[d]) for d in means.index if isinstance(pick[d], str)]
    chosen = pd.DataFrame(picks, columns=["dataset", "contestant", "configuration"])
    return pd.DataFrame(best), pd.DataFrame(best_folds), chosen


def _in_band(frame, rows, retention):
    """``(rows, left out)``: the rows of the configurations whose mean retention over
    their cells (:func:`knnx.stats.retention.row_retention`) lies in ``retention`` =
    (low, high), and the others with their reason; every row when ``retention`` is
    None."""
    empty = pd.DataFrame([], columns=["contestant", "reason"])
    if retention is None:
        return rows, empty
    low, high = retention
    mean = (
        pd.Series(row_retention(frame, rows), index=rows.index)
        .groupby(rows["configuration"], sort=False)
        .mean()
    )
    inside = mean[(mean >= low) & (mean <= high)].index
    out = [
        (c, f"mean retention {r:.3f} outside [{low:g}, {high:g}]") for c, r in mean.items() if c not in inside
    ]
    if not out:
        return rows, empty
    return rows[rows["configuration"].isin(inside)], pd.DataFrame(out, columns=["contestant", "reason"])


def _incomplete(means, metric, absent=()):
    """The contestants without a mean on every dataset, each with its reason (a comparison
    across datasets needs a complete block design): a DataFrame contestant, reason.
    ``absent``: the algorithms of the results with no row of ``metric`` at all (a
    contestant that reduces nothing has no ``retained``), named first."""
    rows = [(a, f"no '{metric}' results on any dataset") for a in absent]
    for c in means.columns:
        absent = [str(d) for d in means.index[means[c].isna()]]
        if absent:
            shown = ", ".join(absent[:5]) + (f" and {len(absent) - 5} more" if len(absent) > 5 else "")
            rows.append(
                (c, f"no '{metric}' results on {len(absent)} of {len(means.index)} datasets ({shown})")
            )
    return pd.DataFrame(rows, columns=["contestant", "reason"])


def _check_band(retention):
    """ResultsError unless ``retention`` is None or (low, high), 0 <= low <= high."""
    if retention is None:
        return
    ok = isinstance(retention, tuple | list) and len(retention) == 2
    ok = ok and all(isinstance(v, int | float) and math.isfinite(v) for v in retention)
    if not ok or not 0 <= retention[0] <= retention[1]:
        raise ResultsError(
            f"expected a band low,high with 0 <= low <= high, got {retention!r}", param="retention"
        )


def _check_enough(means, left_out):
    """ResultsError unless two contestants and two datasets are left."""
    if len(means.columns) < 2 or len(means.index) < 2:
        named = "".join(f"; left out: {r.contestant} ({r.reason})" for r in left_out.itertuples(index=False))
        raise ResultsError(
            f"a comparison needs at least two configurations and two datasets; these results have "
            f"{len(means.columns)} and {len(means.index)}{named}"
        )


def rank_counts(means, metric="error", method="min"):
    """How many datasets rank each configuration 1st, 2nd, ... (configurations x ranks
    1..k). ``method``: how tying means (:mod:`knnx.stats.ties`) share ranks
    (``scipy.stats.rankdata``); "min" gives tied configurations the best of their ranks,
    as Nock et al. (2014, Fig. 4) count."""
    if method not in ("min", "max", "dense", "ordinal"):
        raise ResultsError(
            f"rank_counts: method must give whole ranks (min, max, dense, ordinal), got {method!r}"
        )
    values = means.to_numpy(dtype=np.float64)
    lower = LOWER_IS_BETTER.get(metric, False)
    ranks = rank_rows(values, lower, method=method).astype(np.int64)
    k = values.shape[1]
    counts = np.zeros((k, k), dtype=np.int64)
    np.add.at(counts, (np.broadcast_to(np.arange(k), ranks.shape), ranks - 1), 1)
    return pd.DataFrame(counts, index=means.columns, columns=range(1, k + 1))


@dataclass(frozen=True)
class CompareResult:
    """What :func:`compare` finds (tables as DataFrames):

    * ``metric``, ``select``, ``alpha``: what was compared, how the contestants were
      chosen, the level of the critical difference and of the significance counts;
    * ``means``: datasets x configurations, each configuration's mean; ``ranks``: the
      same shape, 1 the best, ties sharing the average rank;
    * ``mean_ranks``: configuration, mean_rank, n_datasets; best first;
    * ``friedman``: one row (n_datasets, n_configurations, chi2, df, p,
      iman_davenport_f, p_f, critical_difference); :attr:`friedman_row` is that row;
    * ``pairwise``: a, b, wins, ties, losses, statistic, p, p_holm (Wilcoxon-Holm);
    * ``per_dataset``: dataset, configuration, mean, std, n_folds, rank (and with
      best-test, the configuration chosen and the number of configurations it was
      chosen from, ``choices``; where a configuration pools several seeds, ``seeds``:
      how many, its per-fold values being their means);
    * ``paired``: the paired tests per dataset and pair (:func:`paired_tests`);
      ``folds``: the per-fold values they use;
    * ``rank_counts``: configuration and the datasets ranking it 1st, 2nd, ...
      (:func:`rank_counts`, ties sharing the best rank);
    * ``significance``: :func:`significance_counts` at ``alpha``;
    * ``left_out``: contestant, reason: the configurations (or with best-test, the
      algorithms) left out for want of results on some dataset, each named with why;
    * ``control``, ``rope``, ``control_tests``: with a control,
      :func:`knnx.stats.control.against_control`
      (None without)."""

    metric: str
    select: str | None
    alpha: float
    means: pd.DataFrame
    ranks: pd.DataFrame
    mean_ranks: pd.DataFrame
    pairwise: pd.DataFrame
    friedman: pd.DataFrame
    per_dataset: pd.DataFrame
    paired: pd.DataFrame
    folds: pd.DataFrame
    rank_counts: pd.DataFrame
    significance: pd.DataFrame
    left_out: pd.DataFrame
    control: str | None = None
    rope: float = 0.01
    control_tests: pd.DataFrame | None = None

    @property
    def friedman_row(self):
        """The one row of ``friedman`` (a Series)."""
        return self.friedman.iloc[0]


def _ranks(means, metric):
    lower = LOWER_IS_BETTER.get(metric, False)
    values = means.to_numpy(dtype=np.float64)
    ranks = pd.DataFrame(
        rank_rows(values, lower, method="average"),
        index=means.index,
        columns=means.columns,
    )
    mean_ranks = pd.DataFrame(
        {
            "configuration": means.columns,
            "mean_rank": ranks.mean(axis=0).to_numpy(),
            "n_datasets": len(values),
        }
    ).sort_values("mean_rank", kind="stable", ignore_index=True)
    return ranks, mean_ranks


def _friedman(values, alpha):
    """Friedman's and Iman-Davenport's tests and Nemenyi's critical difference, one row."""
    from scipy.stats import friedmanchisquare

    n, k = values.shape
    if k >= 3 and np.all(values == values[:, :1]):  # every dataset ties every configuration
        chi2, p, f_value, p_f = 0.0, 1.0, 0.0, 1.0  # scipy: 0/0
    elif k >= 3:
        chi2, p = friedmanchisquare(*values.T)
        f_value, p_f = iman_davenport(float(chi2), k, n)
    else:
        chi2 = p = f_value = p_f = math.nan
    row = {
        "n_datasets": n,
        "n_configurations": k,
        "chi2": float(chi2),
        "df": k - 1,
        "p": float(p),
        "iman_davenport_f": f_value,
        "p_f": p_f,
        "critical_difference": nemenyi_cd(k, n, alpha),
    }
    return pd.DataFrame([row])


def _fold_std(values):
    """Per row of ``values`` (contestants x folds, NaN where a fold is missing): the
    sample standard deviation (ddof 1) of the folds present, by pandas' two-pass formula
    (``Series.std``: the mean of the values present, then the mean squared deviation
    over count − 1), so the same bits as ``Series.std`` of each row; NaN below two."""
    missing = np.isnan(values)
    count = (~missing).sum(axis=1).astype(np.float64)
    filled = np.where(missing, 0.0, values)
    with np.errstate(divide="ignore", invalid="ignore"):
        average = filled.sum(axis=1, dtype=np.float64) / count
        squares = (average[:, None] - filled) ** 2
        squares[missing] = 0.0
        std = np.sqrt(squares.sum(axis=1, dtype=np.float64) / (count - 1))
    return np.where(count > 1, std, np.nan)


def _per_dataset(parts, ranks, select):
    """dataset, configuration, mean, std, n_folds, rank per (dataset, contestant),
    datasets then contestants in the order of ``means`` (and with best-test, the
    configuration chosen and the number of configurations it was chosen from)."""
    means, folds = parts["means"], parts["folds"]
    n, k = means.shape
    std, counts = [], []
    for d in means.index:
        values = np.ascontiguousarray(folds.loc[d][means.columns].to_numpy(dtype=np.float64).T)
        std.append(_fold_std(values))
        counts.append((~np.isnan(values)).sum(axis=1))
    per_dataset = pd.DataFrame(
        {
            "dataset": np.repeat(np.asarray(means.index, dtype=object), k).tolist(),
            "configuration": np.tile(np.asarray(means.columns, dtype=object), n).tolist(),
            "mean": means.to_numpy(dtype=np.float64).ravel(),
            "std": np.concatenate(std),
            "n_folds": np.concatenate(counts).astype(np.int64),
            "rank": ranks.loc[means.index, means.columns].to_numpy(dtype=np.float64).ravel(),
        }
    )
    if select == "best-test":
        chosen = parts["chosen"].set_index(["dataset", "contestant"])
        keys = pd.MultiIndex.from_arrays([per_dataset["dataset"], per_dataset["configuration"]])
        found = chosen.reindex(keys)
        per_dataset["chosen"] = found["configuration"].to_numpy()
        per_dataset["choices"] = found["choices"].to_numpy(dtype=np.int64)
    if parts.get("seeds") is not None:  # seeds pooled: how many, per dataset and contestant
        shown = per_dataset["chosen"] if "chosen" in per_dataset else per_dataset["configuration"]
        keys = pd.MultiIndex.from_arrays([per_dataset["dataset"], shown])
        per_dataset["seeds"] = parts["seeds"].reindex(keys).to_numpy(dtype=np.int64)
    return per_dataset


# The default half-width of the Bayesian signed-rank test's region of practical
# equivalence: one point of a score in [0, 1] (Benavoli et al. 2017 use 0.01 on accuracy).
def compare(frame, metric="error", select="all", alpha=0.05, control=None, rope=ROPE, retention=None):
    """The comparison of the module docstring, as a :class:`CompareResult`.

    ``control``: a contestant (its label, or an algorithm id that names one contestant)
    that every other is tested against (:func:`knnx.stats.control.against_control`); ``rope``: the
    Bayesian signed-rank test's region of practical equivalence, in the metric's units;
    ``retention``: (low, high), to compare only the configurations whose mean retention
    (the share of training rows fitted on, :mod:`knnx.stats.retention`; 1 for one that
    reduces nothing) lies in that band, the others left out by name."""
    if metric not in METRICS and metric not in LOWER_IS_BETTER:
        known = [*METRICS, *(m for m in LOWER_IS_BETTER if m not in METRICS)]
        raise ResultsError(f"'{metric}' is not a metric; known: {', '.join(known)}", param="metric")
    if not 0 < alpha < 1:
        raise ResultsError(f"expected a level in (0, 1), got {alpha}", param="alpha")
    if metric == "retained":  # every contestant's, 1 for one that reduces nothing
        frame = retention_rows(frame)
    elif metric in TIMINGS:  # a cell's time, once per cell
        frame = timing_rows(frame, metric)
    _one_protocol(frame, metric)
    _check_band(retention)
    parts = _contestants(frame, metric, select, retention)
    means = parts["means"]
    ranks, mean_ranks = _ranks(means, metric)
    paired = paired_table(means, parts["folds"], parts["sizes"])
    counts = rank_counts(means, metric, method="min")
    counts = counts.rename(columns=lambda r: f"rank_{r}").rename_axis("configuration").reset_index()
    if not (isinstance(rope, int | float) and math.isfinite(rope) and rope >= 0):
        raise ResultsError(f"expected a finite half-width >= 0, got {rope}", param="rope")
    if control is not None:
        control = find_contestant(means.columns, control, parts["left_out"])
    return CompareResult(
        metric=metric,
        select=select,
        alpha=alpha,
        means=means,
        ranks=ranks,
        mean_ranks=mean_ranks,
        pairwise=wilcoxon_holm(means, metric),
        friedman=_friedman(snap(means.to_numpy(dtype=np.float64), axis=1), alpha),
        per_dataset=_per_dataset(parts, ranks, select),
        paired=paired,
        folds=parts["folds"],
        rank_counts=counts,
        significance=significance_counts(paired, list(means.columns), metric, alpha),
        left_out=parts["left_out"],
        control=control,
        rope=float(rope),
        control_tests=None
        if control is None
        else against_control(means, mean_ranks, metric, control, alpha, rope),
    )


def timing_rows(frame, timing):
    """``frame`` with one row per cell whose ``metric`` is ``timing`` (a column of
    :data:`knnx.results.TIMINGS`) and whose value is the cell's time, on a copy of the
    cell's row of its first metric of knnx: what a comparison of times ranks (lower is
    better). A contestant that tunes nothing (``tune_seconds`` 0) has no tuning time,
    so a comparison of ``tune_seconds`` leaves it out by name."""
    first = next((m for m in dict.fromkeys(frame["metric"]) if m in METRICS), None)
    if first is None or timing not in frame.columns:
        return frame
    rows = frame[frame["metric"] == first]
    values = rows[timing].to_numpy(dtype=np.float64)
    if timing == "tune_seconds":  # 0: the cell tuned nothing, so it has no tuning time
        values = np.where(values == 0.0, np.nan, values)
    made = rows.assign(metric=timing, value=values)
    return pd.concat([frame[frame["metric"] != timing], made], ignore_index=True)


def _one_protocol(frame, metric):
    """ResultsError when a dataset's ``metric`` rows hold several protocols (a file that
    pools a 10-fold run and a holdout run): folds are paired by their index, and the
    corrected t-test reads one training/test ratio, which two protocols do not share."""
    if "protocol" not in frame.columns:
        return
    rows = frame[frame["metric"] == metric]
    counts = rows.groupby("dataset", sort=False)["protocol"].nunique()
    if len(counts) and counts.max() > 1:
        dataset = counts.index[int(np.argmax(counts.to_numpy() > 1))]
        shown = "; ".join(dict.fromkeys(rows.loc[rows["dataset"] == dataset, "protocol"]))
        raise ResultsError(
            f"dataset '{dataset}' has rows of {int(counts.max())} protocols ({shown}); a comparison pairs the folds "
            "of one protocol: compare each run's results apart"
        )
    if not len(rows):
        return
    seeds = rows.groupby("dataset", sort=False)["seed"].nunique() if "seed" in rows.columns else None
    if seeds is not None and seeds.max() > 1:  # other splits (holdout, kfold, ...) or other data (synthetic)
        dataset = seeds.index[int(np.argmax(seeds.to_numpy() > 1))]
        shown = ", ".join(map(str, sorted(set(rows.loc[rows["dataset"] == dataset, "seed"]))))
        raise ResultsError(
            f"dataset '{dataset}' has rows of {seeds[dataset]} spec seeds ({shown}); each seed draws its own splits "
            "(and a synthetic dataset's data), and a comparison pairs folds by their index: compare each seed's "
            "results apart (knnx table pools them)"
        )
    if "experiment" in rows.columns:
        runs = rows.groupby(["dataset", "algorithm", "params"], sort=False)["experiment"].nunique()
        if runs.max() > 1:
            dataset, algorithm, params = runs.index[int(np.argmax(runs.to_numpy() > 1))]
            of = rows.loc[(rows["dataset"] == dataset) & (rows["algorithm"] == algorithm), "experiment"]
            raise ResultsError(
                f"dataset '{dataset}': {algorithm} {params} has rows of {runs.max()} experiments "
                f"({', '.join(dict.fromkeys(of))}), which would be averaged as one contestant (their settings may "
                "differ outside params: preprocessing, data): compare each experiment apart, or give the algorithm "
                "another id in one of them"
            )


def nemenyi_pvalues(result):
    """Nemenyi's p-values for every pair (a DataFrame, configurations x configurations,
    1 on the diagonal) from the mean ranks: q = |R_a − R_b| / √(k (k + 1) / (6 N)) · √2
    against the studentized range with k groups and infinite degrees of freedom
    (``scipy.stats.studentized_range``), as scikit-posthocs'
    ``posthoc_nemenyi_friedman`` computes them (its tests check it). A pair is
    significant at alpha exactly when its ranks differ by more than the critical
    difference."""
    from scipy.stats import studentized_range

    ranks = result.ranks.mean(axis=0).to_numpy(dtype=np.float64)
    n, k = result.means.shape
    q = np.abs(ranks[:, None] - ranks[None, :]) / math.sqrt(k * (k + 1) / (6 * n)) * math.sqrt(2)
    # once per distinct q (the studentized range's sf integrates: 0.3 ms a value at k = 2000)
    distinct, where = np.unique(np.maximum(q, 1e-300), return_inverse=True)
    sf = studentized_range.sf(distinct, k, np.inf)[where.ravel()].reshape(q.shape)
    p = np.where(q > 0, sf, 1.0)
    names = result.means.columns
    return pd.DataFrame(np.minimum(p, 1.0), index=names, columns=names)
