"""What ``knnx compare`` shows of a :class:`knnx.stats.compare.CompareResult`: the
comparison table (:mod:`knnx.reporting.wide`: Markdown, LaTeX, HTML or CSV), the
sentences on Friedman's test and on the choice of contestants, the critical-difference
diagram (:mod:`knnx.reporting.cd`, matplotlib alone: every install draws it) and the
files of ``knnx compare --out``."""

from pathlib import Path

from knnx.reporting.cd import cd_figure, nemenyi_cliques
from knnx.reporting.cd import draw_cd_diagram as _draw
from knnx.reporting.figures import plain_text
from knnx.results import atomic_write_text, save_figure
from knnx.stats.compare import nemenyi_pvalues
from knnx.stats.control import five_by_two_pairs


def comparison_table(result, fmt="md", characteristics=None, test="corrected-t", digits=None):
    """The comparison table of ``result`` (:func:`knnx.reporting.wide.wide_table`) in
    ``fmt`` (md, latex, html or csv); Markdown starts with the sentence on how the
    contestants were chosen and names every contestant left out."""
    from knnx.reporting.wide import render, wide_table

    text = render(wide_table(result, characteristics, test), fmt, digits)
    if fmt == "md":
        return "\n".join([selection_note(result), *left_out_lines(result), "", text])
    return text


def left_out_lines(result):
    """One line per contestant the comparison left out, with why."""
    return [f"Left out: {r.contestant}: {r.reason}." for r in result.left_out.itertuples(index=False)]


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
    """One sentence saying how the contestants were chosen (with best-test: which
    algorithms had a choice to make, the only ones the choice flatters)."""
    if result.select == "best-test":
        per = result.per_dataset
        several = (
            list(dict.fromkeys(per.loc[per["choices"] > 1, "configuration"])) if "choices" in per else []
        )
        flattered = (
            f"optimistic for {', '.join(several)}, whose test folds chose among several configurations"
            if several
            else "no algorithm had more than one configuration to choose from here, so nothing is flattered"
        )
        return (
            "Each algorithm is represented on each dataset by its configuration with the best mean on the test "
            f"folds: {flattered} (use tune: for an honest choice)."
        )
    return "Each configuration (an algorithm and the parameters that vary) is a contestant."


def _diagram(result, metric):
    """(mean ranks, critical difference, keyword arguments) of ``result``'s diagram:
    Bonferroni-Dunn's CD around the control if it has one, else Nemenyi's with its groups."""
    ranks = result.ranks.mean(axis=0)
    n = int(result.friedman_row["n_datasets"])
    if result.control_tests is not None:
        cd, kind, cliques = float(result.control_tests["bonferroni_dunn_cd"].iloc[0]), "Bonferroni-Dunn", None
    else:
        cd, kind = float(result.friedman_row["critical_difference"]), "Nemenyi"
        cliques = nemenyi_cliques(ranks, cd)
    title = f"{metric}: mean ranks over {n} datasets ({kind} CD = {cd:.3g} at alpha {result.alpha:g})"
    return ranks, cd, {"cliques": cliques, "control": result.control, "title": title}


def draw_cd_diagram(result, ax, metric=None, alpha=None):
    """Draw the critical-difference diagram (Demšar 2006) of ``result`` on the matplotlib
    Axes ``ax`` (:func:`knnx.reporting.cd.draw_cd_diagram`): configurations at their
    mean ranks; without a control, the groups Nemenyi's test at the comparison's alpha
    does not tell apart joined by bars; with one (``result.control``), the interval of
    Bonferroni-Dunn's critical difference around it. ``alpha`` is the comparison's."""
    ranks, cd, kwargs = _diagram(result, result.metric if metric is None else metric)
    with plain_text():
        return _draw(ax, ranks, cd, **kwargs)


def cd_diagram(result, metric=None, alpha=None):
    """The critical-difference diagram (:func:`draw_cd_diagram`) on a Figure of its own,
    sized to the number of configurations; returns the Figure."""
    ranks, cd, kwargs = _diagram(result, result.metric if metric is None else metric)
    with plain_text():
        return cd_figure(ranks, cd, **kwargs)


def _csv(frame, index=False):
    return frame.to_csv(index=index, lineterminator="\n", float_format=lambda v: repr(float(v)))


SUFFIX = {"md": "md", "latex": "tex", "csv": "csv", "html": "html"}


def write_comparison(
    result, out, fmt="md", metric=None, alpha=None, characteristics=None, test="corrected-t"
):
    """ranks.csv, pairwise.csv, friedman.csv, per_dataset.csv, paired.csv,
    rank_counts.csv, significance.csv, left_out.csv, nemenyi.csv, with a control
    control.csv, for a protocol of 5 repeats of 2 folds five_by_two.csv (every pair on
    every dataset by the 5×2cv F- and t-tests), then table.md (or .tex, .html, .csv), cd.png and cd.svg, and the
    figures across datasets (:func:`knnx.reporting.summary_figures.write_summary_figures`:
    METRIC-summary-ranks.png, -win_tie_loss.png, -mean_ranks.png), in the folder ``out``
    (each written atomically). Returns the names of the files written."""
    from knnx.reporting.summary_figures import write_summary_figures

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
        "left_out.csv": result.left_out,
    }
    for name, frame in tables.items():
        atomic_write_text(out / name, _csv(frame))
    atomic_write_text(out / "nemenyi.csv", _csv(nemenyi_pvalues(result), index=True))
    written = [*tables, "nemenyi.csv"]
    if result.control_tests is not None:
        atomic_write_text(out / "control.csv", _csv(result.control_tests))
        written.append("control.csv")
    five_by_two = five_by_two_pairs(result.means, result.folds)
    if five_by_two is not None:  # a protocol of 5 repeats of 2 folds
        atomic_write_text(out / "five_by_two.csv", _csv(five_by_two))
        written.append("five_by_two.csv")
    name = f"table.{SUFFIX[fmt]}"
    atomic_write_text(out / name, comparison_table(result, fmt, characteristics, test))
    fig = cd_diagram(result, metric, alpha)
    save_figure(fig, out / "cd.png", dpi=150)
    save_figure(fig, out / "cd.svg", dpi=150)
    return [*written, name, "cd.png", "cd.svg", *write_summary_figures(result, out)]


__all__ = [
    "comparison_table",
    "write_comparison",
    "cd_diagram",
    "draw_cd_diagram",
    "friedman_sentence",
    "selection_note",
    "left_out_lines",
]
