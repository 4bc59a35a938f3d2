"""Compare configurations across datasets: ranks, Friedman, Iman-Davenport, Nemenyi,
pairwise Wilcoxon signed-rank tests with Holm's correction (Demšar 2006; García &
Herrera 2008).

Input: a results frame (see :func:`knnx.results.read_results`). One metric is
compared; each configuration (:func:`knnx.reporting.summaries.configuration_labels`: the algorithm
id and the parameters that vary, seeds pooled) is summarised per dataset by its mean
over repeats, folds and seeds. Every configuration must have results on every
dataset (a complete block design).

Rules, all tested:

* Ranks per dataset: 1 is the best mean (the lowest for metrics where lower is
  better, :data:`knnx.evaluation.metrics.LOWER_IS_BETTER`); equal means share the average of
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
* Pairs: wins, ties and losses count datasets by their means (a tie is equal means);
  the two-sided Wilcoxon signed-rank test of ``scipy.stats.wilcoxon`` on the
  per-dataset means (zero differences dropped, scipy's default; p = 1 when every
  difference is zero); Holm's step-down adjustment over all pairs.
"""

import itertools
import math
import warnings

import numpy as np
import pandas as pd

from knnx.errors import ResultsError
from knnx.evaluation.metrics import LOWER_IS_BETTER, METRICS


def holm(pvalues):
    """Holm's step-down adjusted p-values, in the order given: the i-th smallest p is
    multiplied by (m − i + 1), the running maximum taken, and capped at 1."""
    p = np.asarray(pvalues, dtype=np.float64)
    m = len(p)
    order = np.argsort(p, kind="stable")
    adjusted = np.empty(m)
    running = 0.0
    for i, j in enumerate(order):
        running = max(running, min(1.0, (m - i) * p[j]))
        adjusted[j] = running
    return adjusted


def nemenyi_cd(k, n, alpha=0.05):
    """Nemenyi's critical difference of mean ranks for ``k`` configurations on ``n``
    datasets at level ``alpha``."""
    from scipy.stats import studentized_range

    q = studentized_range.ppf(1 - alpha, k, np.inf) / math.sqrt(2)
    return float(q * math.sqrt(k * (k + 1) / (6 * n)))


def iman_davenport(chi2, k, n):
    """Iman-Davenport's F and its p-value from Friedman's chi² (k configurations, n datasets)."""
    from scipy.stats import f

    denominator = n * (k - 1) - chi2
    if denominator <= 0:  # every dataset ranks the configurations alike
        return math.inf, 0.0
    value = (n - 1) * chi2 / denominator
    return float(value), float(f.sf(value, k - 1, (k - 1) * (n - 1)))


def means_table(frame, metric="error", select="all"):
    """Datasets x configurations: each configuration's mean ``metric`` per dataset.

    ``select``: "all" (every configuration a contestant), "best-test" (per dataset,
    each algorithm's configuration with the best mean on the test folds: optimistic),
    or None (refused when an algorithm has several configurations)."""
    return _contestants(frame, metric, select)["means"]


def _contestants(frame, metric, select):
    """The contestants of a comparison: ``means`` (datasets x contestants), ``folds``
    (the per-fold values, rows (dataset, repeat, fold), seeds averaged within a fold),
    ``chosen`` (dataset, contestant, configuration: which configuration stands for
    the contestant) and ``sizes`` (per dataset: mean n_train and n_test)."""
    from knnx.reporting.summaries import configuration_labels

    if metric not in set(frame["metric"]):
        raise ResultsError(
            f"no rows for metric '{metric}'; present: {', '.join(sorted(set(frame['metric'])))}",
            param="metric",
        )
    if select not in ("all", "best-test", None):
        raise ResultsError(f"expected all or best-test, got '{select}'", param="select")
    rows = frame[frame["metric"] == metric]
    if "configuration" not in rows.columns:  # labels given by the caller are kept
        rows = rows.assign(configuration=configuration_labels(rows))
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
    chosen = pd.DataFrame(
        [(d, c, c) for d in means.index for c in means.columns if not pd.isna(means.loc[d, c])],
        columns=["dataset", "contestant", "configuration"],
    )
    if select == "best-test":
        lower = LOWER_IS_BETTER.get(metric, False)
        best, best_folds, picks = {}, {}, []
        for alg in dict.fromkeys(rows["algorithm"]):
            configs = list(dict.fromkeys(rows.loc[rows["algorithm"] == alg, "configuration"]))
            sub = means[configs]
            absent = sub.isna().all(axis=1)
            if absent.any():
                raise ResultsError(
                    f"algorithm '{alg}' has no '{metric}' results on dataset '{absent.index[absent][0]}'; a "
                    "comparison across datasets needs every algorithm on every dataset"
                )
            # the first configuration (in file order) among those with the best mean
            pick = sub.idxmin(axis=1) if lower else sub.idxmax(axis=1)
            best[alg] = sub.min(axis=1) if lower else sub.max(axis=1)
            best_folds[alg] = pd.Series(
                [folds.loc[key, pick[key[0]]] for key in folds.index], index=folds.index, dtype=np.float64
            )
            picks += [(d, alg, pick[d]) for d in means.index if isinstance(pick[d], str)]
        means, folds = pd.DataFrame(best), pd.DataFrame(best_folds)
        chosen = pd.DataFrame(picks, columns=["dataset", "contestant", "configuration"])
    missing = means.isna()
    if missing.any().any():
        d, c = next((d, c) for d in means.index for c in means.columns if missing.loc[d, c])
        raise ResultsError(
            f"configuration '{c}' has no '{metric}' results on dataset '{d}'; a comparison across datasets needs "
            "every configuration on every dataset"
        )
    if len(means.columns) < 2 or len(means.index) < 2:
        raise ResultsError(
            f"a comparison needs at least two configurations and two datasets; these results have "
            f"{len(means.columns)} and {len(means.index)}"
        )
    sizes = rows.groupby("dataset", sort=False)[["n_train", "n_test"]].mean()
    return {"means": means, "folds": folds, "chosen": chosen, "sizes": sizes}


# Relative size below which two values' difference is rounding (e.g. the same mean summed
# in another order), not a difference between configurations.
ROUNDING = 1e-12


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


def rank_counts(means, metric="error", method="min"):
    """How many datasets rank each configuration 1st, 2nd, ... (configurations x ranks
    1..k). ``method``: how ties share ranks (``scipy.stats.rankdata``); "min" gives tied
    configurations the best of their ranks, as Nock et al. (2014, Fig. 4) count."""
    from scipy.stats import rankdata

    if method not in ("min", "max", "dense", "ordinal"):
        raise ResultsError(
            f"rank_counts: method must give whole ranks (min, max, dense, ordinal), got {method!r}"
        )
    values = means.to_numpy(dtype=np.float64)
    lower = LOWER_IS_BETTER.get(metric, False)
    ranks = rankdata(values if lower else -values, axis=1, method=method).astype(np.int64)
    k = values.shape[1]
    counts = np.zeros((k, k), dtype=np.int64)
    for row in ranks:
        for c, r in enumerate(row):
            counts[c, r - 1] += 1
    return pd.DataFrame(counts, index=means.columns, columns=range(1, k + 1))


def significance_counts(paired, configurations, metric="error", alpha=0.05):
    """Per configuration, how many (dataset, rival) pairs its paired test over the folds
    (``paired``: :func:`compare`'s per-dataset tests) finds significant at ``alpha``,
    counted as ``better`` for the configuration with the better mean and ``worse`` for the
    other (Nock et al. 2014, Fig. 5), under the paired t-test (``better``, ``worse``) and
    under Nadeau and Bengio's corrected test (``better_corrected``, ``worse_corrected``).
    A zero mean difference is never counted."""
    lower = LOWER_IS_BETTER.get(metric, False)
    counts = {
        c: dict.fromkeys(("better", "worse", "better_corrected", "worse_corrected"), 0)
        for c in configurations
    }
    for row in paired.itertuples(index=False):
        if not row.mean_difference or math.isnan(row.mean_difference):
            continue
        a_better = (row.mean_difference < 0) if lower else (row.mean_difference > 0)
        winner, loser = (row.a, row.b) if a_better else (row.b, row.a)
        for column, suffix in (("p", ""), ("p_corrected", "_corrected")):
            if getattr(row, column) < alpha:
                counts[winner]["better" + suffix] += 1
                counts[loser]["worse" + suffix] += 1
    frame = pd.DataFrame.from_dict(counts, orient="index")
    return frame.rename_axis("configuration").reset_index()


def compare(frame, metric="error", select="all", alpha=0.05):
    """The comparison of the module docstring. Returns a dict of DataFrames: ``means``
    (datasets x configurations), ``ranks`` (same shape), ``mean_ranks`` (configuration,
    mean_rank, n_datasets; best first), ``pairwise`` (a, b, wins, ties, losses,
    statistic, p, p_holm), ``friedman`` (one row), ``per_dataset``, ``paired`` (the paired
    tests per dataset and pair, :func:`paired_tests`), ``rank_counts`` (configuration and
    the datasets ranking it 1st, 2nd, ...: :func:`rank_counts`, ties sharing the best
    rank) and ``significance`` (:func:`significance_counts` at ``alpha``)."""
    from scipy.stats import friedmanchisquare, rankdata, wilcoxon

    if metric not in METRICS:
        raise ResultsError(f"'{metric}' is not a metric; known: {', '.join(METRICS)}", param="metric")
    if not 0 < alpha < 1:
        raise ResultsError(f"expected a level in (0, 1), got {alpha}", param="alpha")
    parts = _contestants(frame, metric, select)
    means = parts["means"]
    lower = LOWER_IS_BETTER.get(metric, False)
    values = means.to_numpy(dtype=np.float64)
    ranks = pd.DataFrame(
        rankdata(values if lower else -values, axis=1, method="average"),
        index=means.index,
        columns=means.columns,
    )
    n, k = values.shape
    mean_ranks = pd.DataFrame(
        {"configuration": means.columns, "mean_rank": ranks.mean(axis=0).to_numpy(), "n_datasets": n}
    ).sort_values("mean_rank", kind="stable", ignore_index=True)
    if k >= 3 and np.all(values == values[:, :1]):  # every dataset ties every configuration
        chi2, p, f_value, p_f = 0.0, 1.0, 0.0, 1.0  # scipy: 0/0
    elif k >= 3:
        chi2, p = friedmanchisquare(*values.T)
        f_value, p_f = iman_davenport(float(chi2), k, n)
    else:
        chi2 = p = f_value = p_f = math.nan
    friedman = pd.DataFrame(
        [
            {
                "n_datasets": n,
                "n_configurations": k,
                "chi2": float(chi2),
                "df": k - 1,
                "p": float(p),
                "iman_davenport_f": f_value,
                "p_f": p_f,
                "critical_difference": nemenyi_cd(k, n, alpha),
            }
        ]
    )
    pairs = []
    for i, j in itertools.combinations(range(k), 2):
        a, b = values[:, i], values[:, j]
        better = a < b if lower else a > b
        worse = a > b if lower else a < b
        if np.all(a == b):
            statistic, p_value = math.nan, 1.0
        else:
            result = wilcoxon(a, b)
            statistic, p_value = float(result.statistic), float(result.pvalue)
        pairs.append(
            {
                "a": means.columns[i],
                "b": means.columns[j],
                "wins": int(better.sum()),
                "ties": int((a == b).sum()),
                "losses": int(worse.sum()),
                "statistic": statistic,
                "p": p_value,
            }
        )
    pairwise = pd.DataFrame(pairs)
    pairwise["p_holm"] = holm(pairwise["p"])
    folds = parts["folds"]
    per_dataset = []
    for d in means.index:
        for c in means.columns:
            n_folds = int(folds.loc[d, c].notna().sum())
            std = float(folds.loc[d, c].std(ddof=1)) if n_folds > 1 else math.nan
            per_dataset.append(
                {
                    "dataset": d,
                    "configuration": c,
                    "mean": float(means.loc[d, c]),
                    "std": std,
                    "n_folds": n_folds,
                }
            )
    per_dataset = pd.DataFrame(per_dataset)
    per_dataset["rank"] = [ranks.loc[r.dataset, r.configuration] for r in per_dataset.itertuples()]
    if select == "best-test":
        chosen = parts["chosen"].set_index(["dataset", "contestant"])["configuration"]
        per_dataset["chosen"] = [chosen[(r.dataset, r.configuration)] for r in per_dataset.itertuples()]
    paired = []
    for d in means.index:
        block = folds.loc[d]
        n_train, n_test = parts["sizes"].loc[d, ["n_train", "n_test"]]
        ratio = float(n_test) / float(n_train)
        for i, j in itertools.combinations(range(k), 2):
            a, b = block[means.columns[i]].to_numpy(), block[means.columns[j]].to_numpy()
            shared = ~(np.isnan(a) | np.isnan(b))
            paired.append(
                {
                    "dataset": d,
                    "a": means.columns[i],
                    "b": means.columns[j],
                    **paired_tests(a[shared], b[shared], ratio),
                    "test_train_ratio": ratio,
                }
            )
    paired = pd.DataFrame(paired)
    counts = rank_counts(means, metric, method="min")
    counts = counts.rename(columns=lambda r: f"rank_{r}").rename_axis("configuration").reset_index()
    return {
        "metric": metric,
        "select": select,
        "means": means,
        "ranks": ranks,
        "mean_ranks": mean_ranks,
        "pairwise": pairwise,
        "friedman": friedman,
        "per_dataset": per_dataset,
        "paired": paired,
        "folds": folds,
        "rank_counts": counts,
        "significance": significance_counts(paired, list(means.columns), metric, alpha),
    }


def comparison_table(result, fmt="md", digits=4):
    """Datasets x configurations, each cell "mean (rank)", then the average ranks, as
    Markdown, CSV or LaTeX (booktabs)."""
    means, ranks = result["means"], result["ranks"]
    header = ["dataset", *means.columns]
    body = [
        [str(d), *(f"{means.loc[d, c]:.{digits}f} ({ranks.loc[d, c]:g})" for c in means.columns)]
        for d in means.index
    ]
    average = ranks.mean(axis=0)
    footer = ["average rank", *(f"{average[c]:.2f}" for c in means.columns)]
    if fmt == "csv":
        return pd.DataFrame([*body, footer], columns=header).to_csv(index=False, lineterminator="\n")
    if fmt == "md":
        lines = [f"{selection_note(result)}\n"] if result.get("select") == "best-test" else []
        lines += ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in [*body, footer]]
        return "\n".join(lines) + "\n"
    if fmt == "latex":
        from knnx.reporting.summaries import latex_escape as esc

        lines = ["\\begin{tabular}{l" + "r" * len(means.columns) + "}", "\\toprule"]
        lines.append(" & ".join(esc(h) for h in header) + " \\\\")
        lines.append("\\midrule")
        lines += [" & ".join(esc(c) for c in row) + " \\\\" for row in body]
        lines.append("\\midrule")
        lines.append(" & ".join(esc(c) for c in footer) + " \\\\")
        lines += ["\\bottomrule", "\\end{tabular}"]
        return "\n".join(lines) + "\n"
    raise ResultsError(f"expected md, csv or latex, got '{fmt}'", param="fmt")


def friedman_sentence(f, alpha=0.05):
    """One line for the ``friedman`` row of :func:`compare`."""
    tail = (
        f"Nemenyi critical difference at alpha {alpha:g} = {f.critical_difference:.4g} "
        f"({int(f.n_configurations)} configurations, {int(f.n_datasets)} datasets)"
    )
    if int(f.n_configurations) < 3:
        return f"Friedman's test needs three configurations or more; with two, see the Wilcoxon test. {tail}"
    return (
        f"Friedman chi2 = {f.chi2:.4g} (df {int(f.df)}), p = {f.p:.4g}; Iman-Davenport F = "
        f"{f.iman_davenport_f:.4g}, p = {f.p_f:.4g}; {tail}"
    )


def selection_note(result):
    """One sentence saying how the contestants were chosen."""
    if result.get("select") == "best-test":
        return (
            "Each algorithm is represented on each dataset by its configuration with the best mean on the test "
            "folds: optimistic, since the test folds chose it (use tune: for an honest choice)."
        )
    return "Each configuration (an algorithm and the parameters that vary) is a contestant."


def write_comparison(result, out, fmt="md", metric="error", alpha=0.05):
    """ranks.csv, pairwise.csv, friedman.csv, per_dataset.csv, paired.csv,
    rank_counts.csv, significance.csv, table.md (or .tex/.csv),
    and, with scikit-posthocs installed, nemenyi.csv, cd.png and cd.svg, in the folder
    ``out`` (each written atomically). Returns the names of the files written."""
    from pathlib import Path

    from knnx.results import atomic_write_text

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)

    def csv(frame):
        return frame.to_csv(index=False, lineterminator="\n", float_format=lambda v: repr(float(v)))

    atomic_write_text(out / "ranks.csv", csv(result["mean_ranks"]))
    atomic_write_text(out / "pairwise.csv", csv(result["pairwise"]))
    atomic_write_text(out / "friedman.csv", csv(result["friedman"]))
    atomic_write_text(out / "per_dataset.csv", csv(result["per_dataset"]))
    atomic_write_text(out / "paired.csv", csv(result["paired"]))
    atomic_write_text(out / "rank_counts.csv", csv(result["rank_counts"]))
    atomic_write_text(out / "significance.csv", csv(result["significance"]))
    suffix = {"md": "md", "latex": "tex", "csv": "csv"}[fmt]
    atomic_write_text(out / f"table.{suffix}", comparison_table(result, fmt))
    written = [
        "ranks.csv",
        "pairwise.csv",
        "friedman.csv",
        "per_dataset.csv",
        "paired.csv",
        "rank_counts.csv",
        "significance.csv",
        f"table.{suffix}",
    ]
    try:
        pvalues = nemenyi_pvalues(result)
    except ResultsError:
        return written  # no scikit-posthocs: the tables only
    import matplotlib.pyplot as plt

    from knnx.results import save_figure

    atomic_write_text(
        out / "nemenyi.csv", pvalues.to_csv(lineterminator="\n", float_format=lambda v: repr(float(v)))
    )
    fig = cd_diagram(result, metric, alpha)
    try:
        save_figure(fig, out / "cd.png", dpi=150)
        save_figure(fig, out / "cd.svg", dpi=150)
    finally:
        plt.close(fig)
    return [*written, "nemenyi.csv", "cd.png", "cd.svg"]


def nemenyi_pvalues(result):
    """Nemenyi's p-values for every pair (a DataFrame, configurations x configurations)
    from scikit-posthocs (``pip install 'knnx[stats]'``), on the per-dataset means."""
    try:
        import scikit_posthocs as sp
    except ImportError:
        raise ResultsError(
            "the critical-difference diagram needs scikit-posthocs: pip install 'knnx[stats]'"
        ) from None
    means = result["means"]
    table = sp.posthoc_nemenyi_friedman(means.to_numpy(dtype=np.float64))
    table.index = table.columns = means.columns
    return table


def cd_diagram(result, metric="error", alpha=0.05):
    """The critical-difference diagram (Demšar 2006, Fig. 1) as a matplotlib Figure, drawn
    by scikit-posthocs: configurations placed at their mean ranks, groups that
    Nemenyi's test at ``alpha`` does not tell apart joined by bars, and the critical
    difference drawn above the axis."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import scikit_posthocs as sp

    from knnx.reporting.figures import plain_text

    pvalues = nemenyi_pvalues(result)
    ranks = result["ranks"].mean(axis=0)
    f = result["friedman"].iloc[0]
    with plain_text():
        fig, ax = plt.subplots(figsize=(7, 1.8 + 0.4 * len(ranks)))
        sp.critical_difference_diagram(ranks, pvalues, cd=float(f["critical_difference"]), alpha=alpha, ax=ax)
        ax.set_title(
            f"{metric}: mean ranks over {int(f['n_datasets'])} datasets (Nemenyi CD = "
            f"{f['critical_difference']:.3g} at alpha {alpha:g})",
            fontsize=9,
            pad=28,  # above the critical-difference bar that scikit-posthocs draws over the axis
        )
        with warnings.catch_warnings():
            # long configuration labels can leave tight_layout no room: the figure keeps
            # matplotlib's default margins then, which is all the warning says
            warnings.filterwarnings("ignore", message="Tight layout not applied", category=UserWarning)
            fig.tight_layout()
    return fig
