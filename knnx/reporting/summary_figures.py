"""Figures that summarise a comparison across datasets and stay readable for a hundred
datasets and more (the per-dataset panels of :mod:`knnx.reporting.figures` do not):

* :func:`rank_heatmap`: each configuration's rank on each dataset, a row per dataset
  (the figure grows 0.12 to 0.2 inch a dataset, its labels shrink from 8 to 5 points);
* :func:`win_tie_loss`: a control against each other configuration, one stacked bar
  each: the datasets where the control is better, ties, is worse, counts written;
* :func:`mean_ranks`: each configuration's mean rank with the critical difference
  the comparison's text and its critical-difference diagram use: Nemenyi's, an
  interval ± CD/2 around each (two configurations whose intervals do not overlap
  differ by more than CD), or, with a control, Bonferroni-Dunn's, a band ± CD around
  the control's mean rank (the configurations outside it differ from the control by
  more than CD; Demšar 2006, Sec. 3.2.2).

:func:`write_summary_figures` writes the three as PNG files (for the report and the
docs).

Input (``result``): a :class:`knnx.stats.compare.CompareResult` (its ``means``,
``metric``, ``alpha`` and Nemenyi critical difference), or a DataFrame of means,
datasets x configurations, with ``metric`` given. Every mean must be present (a
complete block design, as :func:`knnx.stats.compare.compare` requires).

Ties: the one rule of knnx (:mod:`knnx.stats.ties`): means equal up to rounding share
their rank (the average of the ranks they span, :func:`knnx.stats.ties.rank_rows`) and
count as a tie (:func:`knnx.stats.ties.ties`); ranks are recomputed from the means under
that rule. 1 is the best rank: the lowest mean for metrics where lower is better
(:data:`knnx.evaluation.metrics.LOWER_IS_BETTER`), the highest otherwise.
"""

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from knnx._text import escape_control
from knnx.errors import ResultsError
from knnx.evaluation.metrics import LOWER_IS_BETTER
from knnx.reporting.cd import MAX_CONFIGURATIONS
from knnx.reporting.figures import FIGURE_TAG, plain_text
from knnx.results import save_figure
from knnx.stats.ties import rank_rows, ties

WIN, TIE, LOSS = "#3b8a3e", "0.75", "#c0392b"


@dataclass(frozen=True)
class SummaryInput:
    """A comparison's means as the summary figures read them: ``means`` (datasets x
    configurations, float64, complete), ``metric``, ``lower`` (whether lower is
    better), ``ranks`` (the same shape, under the tie rule), ``mean_ranks``
    (configuration -> mean rank, best first, ties in column order), ``alpha``,
    ``critical_difference`` (Nemenyi's, at ``alpha``) and ``control`` (the comparison's
    control, :func:`knnx.stats.compare.compare`'s ``control``, or None)."""

    means: pd.DataFrame
    metric: str
    lower: bool
    ranks: pd.DataFrame
    mean_ranks: pd.Series
    alpha: float
    critical_difference: float
    control: str | None = None


def summary_input(result, metric=None):
    """The :class:`SummaryInput` of ``result``: a CompareResult (``metric`` None or its
    own) or a DataFrame of means (``metric`` required). ResultsError for a missing mean,
    fewer than two configurations, more than
    :data:`knnx.reporting.cd.MAX_CONFIGURATIONS` or no dataset."""
    from knnx.stats.compare import nemenyi_cd

    if isinstance(result, pd.DataFrame):
        if metric is None:
            raise ResultsError("a table of means needs its metric (e.g. metric='error')", param="metric")
        means, alpha, cd, control = result, 0.05, None, None
    else:
        if metric is not None and metric != result.metric:
            raise ResultsError(f"the comparison is of '{result.metric}', not '{metric}'", param="metric")
        means, metric, alpha = result.means, result.metric, float(result.alpha)
        cd = float(result.friedman_row["critical_difference"])
        control = getattr(result, "control", None)
    values = means.to_numpy(dtype=np.float64)
    if values.ndim != 2 or values.shape[0] < 1 or values.shape[1] < 2:
        raise ResultsError(
            f"a summary needs one dataset and two configurations at least; the means have "
            f"{means.shape[0]} and {means.shape[1] if values.ndim == 2 else 0}"
        )
    if values.shape[1] > MAX_CONFIGURATIONS:
        raise ResultsError(
            f"{values.shape[1]:,} configurations: the figures across datasets show at most "
            f"{MAX_CONFIGURATIONS} (a row or column each)"
        )
    missing = np.argwhere(np.isnan(values))
    if len(missing):
        d, c = missing[0]
        raise ResultsError(
            f"configuration '{means.columns[c]}' has no mean on dataset '{means.index[d]}'; the summary "
            "figures need every configuration on every dataset"
        )
    lower = LOWER_IS_BETTER.get(metric, False)
    ranks = pd.DataFrame(rank_rows(values, lower), index=means.index, columns=means.columns)
    average = ranks.mean(axis=0)
    order = np.argsort(average.to_numpy(), kind="stable")
    if cd is None:
        cd = nemenyi_cd(values.shape[1], values.shape[0], alpha)
    frame = pd.DataFrame(values, index=means.index, columns=means.columns)
    control = control if control in frame.columns else None
    return SummaryInput(frame, metric, lower, ranks, average.iloc[order], alpha, float(cd), control)


def _control_of(summary, control):
    """``control``, else the comparison's own, else the best mean rank."""
    if control is None:
        return summary.control if summary.control is not None else summary.mean_ranks.index[0]
    if control not in summary.means.columns:
        shown = ", ".join(escape_control(str(c)) for c in summary.means.columns)
        raise ResultsError(
            f"no configuration '{escape_control(str(control))}' in the comparison; configurations: {shown}",
            param="control",
        )
    return control


def win_tie_loss_counts(result, control=None, metric=None):
    """Per configuration other than ``control`` (default: the comparison's control, else
    the best mean rank), on how many datasets the control's mean is better (``wins``),
    ties it (equal up to rounding, :func:`knnx.stats.ties.ties`: ``ties``) or is worse
    (``losses``). A DataFrame (configuration, wins, ties, losses), configurations by
    mean rank, best first."""
    summary = summary_input(result, metric)
    control = _control_of(summary, control)
    ours = summary.means[control].to_numpy()
    rows = []
    for other in summary.mean_ranks.index:
        if other == control:
            continue
        theirs = summary.means[other].to_numpy()
        tied = ties(ours, theirs)
        better = ~tied & ((ours < theirs) if summary.lower else (ours > theirs))
        rows.append((other, int(better.sum()), int(tied.sum()), int((~tied & ~better).sum())))
    return pd.DataFrame(rows, columns=["configuration", "wins", "ties", "losses"])


def _label_size(n):
    """Tick label size (points) and row height (inches) for ``n`` rows."""
    size = 8 if n <= 40 else 6 if n <= 100 else 5
    return size, max(0.12, size * 1.8 / 72)


def _sorted_datasets(summary, sort):
    means = summary.means
    if sort == "given":
        return list(means.index)
    if sort == "name":
        return sorted(means.index, key=str)
    if sort == "value":  # by the best configuration's mean, its best datasets first
        best = means[summary.mean_ranks.index[0]]
        keys = best.to_numpy() if summary.lower else -best.to_numpy()
        names = np.array([str(d) for d in means.index], dtype=object)
        return list(means.index[np.lexsort((names, keys))])
    raise ResultsError(f"expected value, name or given, got '{sort}'", param="sort")


def rank_heatmap(result, metric=None, sort="value"):
    """A heatmap of ranks: a row per dataset, a column per configuration (best mean rank
    first), each cell the configuration's rank on the dataset (1 = best, ties sharing
    their mean rank; written in the cell up to 1500 cells). Rows sorted by ``sort``:
    ``value`` (the best configuration's mean, its best datasets on top, then by name),
    ``name`` or ``given`` (the order of the means). Readable up to 150 datasets and more:
    the figure grows with the rows, the labels shrink. Returns the Figure."""
    summary = summary_input(result, metric)
    order = list(summary.mean_ranks.index)
    datasets = _sorted_datasets(summary, sort)
    ranks = summary.ranks.loc[datasets, order].to_numpy(dtype=np.float64)
    n, k = ranks.shape
    size, row = _label_size(n)
    longest = max(len(str(d)) for d in datasets)
    longest_config = max(len(str(c)) for c in order)
    width = max(5.0, 1.2 + 0.06 * longest + 0.5 * k + 0.03 * longest_config)
    height = 2.2 + 0.045 * longest_config + row * n
    with plain_text():
        fig = Figure(figsize=(width, height), layout="constrained")
        ax = fig.add_subplot()
        image = ax.imshow(ranks, aspect="auto", cmap="viridis_r", vmin=1, vmax=k, interpolation="nearest")
        ax.set_yticks(range(n), [str(d) for d in datasets], fontsize=size)
        ax.set_xticks(range(k), [str(c) for c in order], fontsize=8, rotation=40, ha="right")
        ax.tick_params(length=0)
        if n * k <= 1500:
            middle = (1 + k) / 2
            for i in range(n):
                for j in range(k):
                    colour = "white" if ranks[i, j] > middle else "black"
                    ax.text(
                        j, i, f"{ranks[i, j]:g}", ha="center", va="center", fontsize=size - 1, color=colour
                    )
        fig.colorbar(image, ax=ax, shrink=min(0.8, 4.0 / height), aspect=20, label="rank (1 = best)")
        by = {
            "value": f"by {order[0]}'s {summary.metric}",
            "name": "by name",
            "given": "as given",
        }[sort]
        ax.set_title(f"{summary.metric}: rank per dataset\n({n} datasets, sorted {by})", fontsize=9)
    return fig


def win_tie_loss(result, control=None, metric=None):
    """``control`` (default: the comparison's control, else the best mean rank) against
    each other configuration: one horizontal stacked bar each (configurations by mean
    rank, best on top), the datasets where the control is better (green), ties it
    (grey, equal up to rounding) and is worse (red), each count written in its part
    (:func:`win_tie_loss_counts`). Returns the Figure."""
    summary = summary_input(result, metric)
    control = _control_of(summary, control)
    counts = win_tie_loss_counts(summary.means, control, summary.metric)
    n = len(summary.means)
    size, row = _label_size(len(counts))
    ys = np.arange(len(counts))
    longest = max(len(str(c)) for c in counts["configuration"])
    with plain_text():
        fig = Figure(
            figsize=(max(6.0, 3.5 + 0.06 * longest), 1.8 + max(row, 0.3) * len(counts)), layout="constrained"
        )
        ax = fig.add_subplot()
        left = np.zeros(len(counts))
        parts = (
            ("wins", WIN, f"{control} better"),
            ("ties", TIE, "tie (equal up to rounding)"),
            ("losses", LOSS, f"{control} worse"),
        )
        for column, colour, label in parts:
            widths = counts[column].to_numpy(dtype=float)
            bars = ax.barh(ys, widths, left=left, color=colour, label=label, height=0.7)
            ax.bar_label(
                bars, labels=[str(int(w)) if w else "" for w in widths], label_type="center", fontsize=size
            )
            left = left + widths
        ax.set_yticks(ys, [str(c) for c in counts["configuration"]], fontsize=size)
        ax.set_ylim(len(counts) - 0.5, -0.5)
        ax.set_xlim(0, n)
        ax.axvline(n / 2, color="0.3", linewidth=0.8, linestyle=":")
        ax.set_xlabel(f"datasets (of {n})")
        ax.set_title(f"{control} against each configuration\n({summary.metric}, {n} datasets)", fontsize=9)
        fig.legend(fontsize=7, loc="outside lower center", ncols=3, frameon=False)
    return fig


def mean_ranks(result, control=None, metric=None):
    """A dot per configuration at its mean rank (best on top) with the critical
    difference CD the comparison's text and diagram use, at its alpha: without
    ``control``, Nemenyi's CD as an interval ± CD/2 around each dot (intervals that do
    not overlap: the pair differs by more than CD); with ``control`` (or a comparison
    made with one), Bonferroni-Dunn's CD (Demšar 2006, Sec. 3.2.2: every other against
    the control) as a band ± CD around the control's mean rank (a dot outside it differs
    from the control by more than CD). Returns the Figure."""
    from knnx.stats.control import bonferroni_dunn_cd

    summary = summary_input(result, metric)
    if control is not None or summary.control is not None:
        control = _control_of(summary, control)
    average = summary.mean_ranks
    k, n = len(average), len(summary.means)
    cd, test = summary.critical_difference, "Nemenyi"
    if control is not None:
        cd, test = float(bonferroni_dunn_cd(k, n, summary.alpha)), "Bonferroni-Dunn"
    ys = np.arange(k)
    xs = average.to_numpy(dtype=np.float64)
    size, row = _label_size(k)
    longest = max(len(str(c)) for c in average.index)
    with plain_text():
        fig = Figure(figsize=(max(6.0, 3.5 + 0.06 * longest), 1.6 + max(row, 0.28) * k), layout="constrained")
        ax = fig.add_subplot()
        if control is None:
            ax.errorbar(xs, ys, xerr=cd / 2, fmt="o", ms=5, capsize=3, color="C0", label="mean rank ± CD/2")
            low, high = xs.min() - cd / 2, xs.max() + cd / 2
        else:
            centre = float(average[control])
            ax.axvspan(centre - cd, centre + cd, color="C0", alpha=0.15, label=f"{control} ± CD")
            others = average.index != control
            ax.plot(xs[others], ys[others], "o", ms=5, color="0.25", label="mean rank")
            ax.plot([centre], [ys[~others][0]], "D", ms=6, color="C0", label=f"{control} (control)")
            low, high = min(xs.min(), centre - cd), max(xs.max(), centre + cd)
        ax.set_yticks(ys, [str(c) for c in average.index], fontsize=size)
        ax.set_ylim(k - 0.5, -0.5)
        ax.set_xlim(min(1.0, low) - 0.2, max(float(k), high) + 0.2)
        ax.set_xlabel("mean rank (1 = best)")
        ax.grid(axis="x", alpha=0.3)
        ax.set_title(
            f"{summary.metric}: mean rank, {test} CD = {cd:.3g} at alpha {summary.alpha:g}\n"
            f"({k} configurations, {n} datasets)",
            fontsize=9,
        )
        fig.legend(fontsize=7, loc="outside lower center", ncols=3, frameon=False)
    return fig


def summary_names(metric):
    """The file names :func:`write_summary_figures` gives the figures of ``metric``:
    ``METRIC-summary-ranks.png``, ``METRIC-summary-win_tie_loss.png``,
    ``METRIC-summary-mean_ranks.png`` (characters other than letters, digits and ``_.``
    of the metric as ``_``: never the name of another automatic figure)."""
    safe = re.sub(r"[^A-Za-z0-9_.]", "_", metric)
    return [f"{safe}-summary-{what}.png" for what in ("ranks", "win_tie_loss", "mean_ranks")]


def write_summary_figures(result, out_dir, control=None, metric=None):
    """Write :func:`rank_heatmap`, :func:`win_tie_loss` (against ``control``; default the
    comparison's control, else the best mean rank) and :func:`mean_ranks` (with the
    control's band when there is one: ``control`` or the comparison's) of ``result``
    (a CompareResult, or a DataFrame of means with ``metric``) in the folder ``out_dir``
    (PNG at 110 dpi, each atomically, tagged as a run's automatic figures:
    :data:`knnx.reporting.figures.FIGURE_TAG`); returns the file names written
    (:func:`summary_names`), in that order."""
    out_dir = Path(out_dir)
    if not out_dir.is_dir():
        raise ResultsError(f"{out_dir} is not a folder to write the figures in", param="out_dir")
    summary = summary_input(result, metric)
    against = _control_of(summary, control)
    # a table of means is read with its metric; a CompareResult brings its own CD and alpha
    named = metric if isinstance(result, pd.DataFrame) else None
    figures = (
        lambda: rank_heatmap(result, named),
        lambda: win_tie_loss(result, against, named),
        lambda: mean_ranks(result, control, named),
    )
    names = summary_names(summary.metric)
    for name, draw in zip(names, figures, strict=True):
        fig = draw()
        save_figure(fig, out_dir / name, dpi=110, metadata={"Software": FIGURE_TAG})
        fig.clear()
    return names
