"""What ``knnx compare`` shows of a :class:`knnx.stats.compare.CompareResult`: the table
of means and ranks (Markdown, CSV or LaTeX), the sentences on Friedman's test and on
the choice of contestants, the critical-difference diagram (drawn on a matplotlib
Axes, object API) and the files of ``knnx compare --out``."""

import warnings
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from knnx.errors import ResultsError
from knnx.reporting.figures import plain_text
from knnx.reporting.summaries import latex_escape
from knnx.results import atomic_write_text, save_figure
from knnx.stats.compare import nemenyi_pvalues


def comparison_table(result, fmt="md", digits=4):
    """Datasets x configurations, each cell "mean (rank)", then the average ranks, as
    Markdown, CSV or LaTeX (booktabs)."""
    means, ranks = result.means, result.ranks
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
        lines = [f"{selection_note(result)}\n"] if result.select == "best-test" else []
        lines += ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in [*body, footer]]
        return "\n".join(lines) + "\n"
    if fmt == "latex":
        esc = latex_escape
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
    """One line for the ``friedman`` row of a comparison (:attr:`CompareResult.friedman_row`)."""
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
    if result.select == "best-test":
        return (
            "Each algorithm is represented on each dataset by its configuration with the best mean on the test "
            "folds: optimistic, since the test folds chose it (use tune: for an honest choice)."
        )
    return "Each configuration (an algorithm and the parameters that vary) is a contestant."


def draw_cd_diagram(result, ax, metric=None, alpha=None):
    """Draw the critical-difference diagram (Demšar 2006, Fig. 1) of ``result`` on the
    matplotlib Axes ``ax``, by scikit-posthocs (``pip install 'knnx[stats]'``):
    configurations placed at their mean ranks, groups that Nemenyi's test at ``alpha``
    (default: the comparison's) does not tell apart joined by bars, and the critical
    difference drawn above the axis. ResultsError without scikit-posthocs."""
    pvalues = nemenyi_pvalues(result)
    import scikit_posthocs as sp

    metric = result.metric if metric is None else metric
    alpha = result.alpha if alpha is None else alpha
    f = result.friedman_row
    ranks = result.ranks.mean(axis=0)
    with plain_text():
        sp.critical_difference_diagram(ranks, pvalues, cd=float(f["critical_difference"]), alpha=alpha, ax=ax)
        ax.set_title(
            f"{metric}: mean ranks over {int(f['n_datasets'])} datasets (Nemenyi CD = "
            f"{f['critical_difference']:.3g} at alpha {alpha:g})",
            fontsize=9,
            pad=28,  # above the critical-difference bar that scikit-posthocs draws over the axis
        )


def cd_diagram(result, metric=None, alpha=None):
    """The critical-difference diagram (:func:`draw_cd_diagram`) on a Figure of its own, sized
    to the number of configurations; returns the Figure."""
    fig = Figure(figsize=(7, 1.8 + 0.4 * len(result.means.columns)))
    draw_cd_diagram(result, fig.subplots(), metric, alpha)
    with plain_text(), warnings.catch_warnings():
        # long configuration labels can leave tight_layout no room: the figure keeps
        # matplotlib's default margins then, which is all the warning says
        warnings.filterwarnings("ignore", message="Tight layout not applied", category=UserWarning)
        fig.tight_layout()
    return fig


def _csv(frame):
    return frame.to_csv(index=False, lineterminator="\n", float_format=lambda v: repr(float(v)))


def write_comparison(result, out, fmt="md", metric=None, alpha=None):
    """ranks.csv, pairwise.csv, friedman.csv, per_dataset.csv, paired.csv,
    rank_counts.csv, significance.csv, table.md (or .tex/.csv),
    and, with scikit-posthocs installed, nemenyi.csv, cd.png and cd.svg, in the folder
    ``out`` (each written atomically). Returns the names of the files written."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    tables = {
        "ranks.csv": result.mean_ranks,
        "pairwise.csv": result.pairwise,
        "friedman.csv": result.friedman,
        "per_dataset.csv": result.per_dataset,
        "paired.csv": result.paired,
        "rank_counts.csv": result.rank_counts,
        "significance.csv": result.significance,
    }
    for name, frame in tables.items():
        atomic_write_text(out / name, _csv(frame))
    suffix = {"md": "md", "latex": "tex", "csv": "csv"}[fmt]
    atomic_write_text(out / f"table.{suffix}", comparison_table(result, fmt))
    written = [*tables, f"table.{suffix}"]
    try:
        pvalues = nemenyi_pvalues(result)
    except ResultsError:
        return written  # no scikit-posthocs: the tables only
    atomic_write_text(
        out / "nemenyi.csv", pvalues.to_csv(lineterminator="\n", float_format=lambda v: repr(float(v)))
    )
    fig = cd_diagram(result, metric, alpha)
    save_figure(fig, out / "cd.png", dpi=150)
    save_figure(fig, out / "cd.svg", dpi=150)
    return [*written, "nemenyi.csv", "cd.png", "cd.svg"]
