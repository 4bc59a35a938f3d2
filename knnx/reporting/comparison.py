"""What ``knnx compare`` shows of a :class:`knnx.stats.compare.CompareResult`: the
comparison table (:mod:`knnx.reporting.wide`: Markdown, LaTeX, HTML or CSV), the
sentences on Friedman's test and on the choice of contestants, the critical-difference
diagram (:mod:`knnx.reporting.cd`, matplotlib alone: every install draws it) and the
files of ``knnx compare --out``."""

from pathlib import Path

from knnx._text import markdown_text
from knnx.reporting.cd import MAX_CONFIGURATIONS, cd_figure, nemenyi_cliques
from knnx.reporting.cd import draw_cd_diagram as _draw
from knnx.reporting.figures import plain_text
from knnx.reporting.wide import friedman_sentence, render, wide_table
from knnx.results import atomic_write_text, save_figure
from knnx.stats.compare import nemenyi_pvalues
from knnx.stats.control import five_by_two_pairs


def comparison_table(
    result, fmt="md", characteristics=None, test="corrected-t", digits=None, layout=None, notes=(), marks=None
):
    """The comparison table of ``result`` (:func:`knnx.reporting.wide.wide_table`) in
    ``fmt`` (md, latex, html or csv), laid out by ``layout`` (a
    :class:`knnx.reporting.latex.Layout`: columns, names, and LaTeX's float, size,
    orientation); ``notes`` are sentences on the parameters set per dataset, printed
    under it (in LaTeX's caption); ``marks``: whether significant differences are marked
    (None: for a score, not for a time). Markdown starts with the sentence on how the
    contestants were chosen and names every contestant left out."""

    text = render(wide_table(result, characteristics, test, notes, marks), fmt, digits, layout)
    if fmt == "md":
        prose = [selection_note(result, markdown_text), *left_out_lines(result, markdown_text)]
        return "\n".join([*prose, *figures_lines(result), "", text])
    return text


def drawn(result):
    """Whether the comparison's figures (the critical-difference diagram, the figures
    across datasets) can show its contestants: at most
    :data:`knnx.reporting.cd.MAX_CONFIGURATIONS`."""
    return len(result.means.columns) <= MAX_CONFIGURATIONS


def figures_lines(result):
    """The line saying the figures are not drawn, when there are too many contestants
    for them (none otherwise)."""
    if drawn(result):
        return []
    return [
        f"Figures: not drawn for {len(result.means.columns):,} contestants (the critical-difference diagram and "
        f"the figures across datasets show at most {MAX_CONFIGURATIONS}); the tables hold every contestant."
    ]


def left_out_lines(result, name=str):
    """One line per contestant the comparison left out, with why, and one per dataset on
    which the contestants' folds differ (a fold missing from some): each mean is then
    over other folds, which the table would not show otherwise. ``name`` writes a name
    for the format (:func:`knnx._text.markdown_text` under a Markdown table)."""
    lines = [
        f"Left out: {name(r.contestant)}: {name(r.reason)}." for r in result.left_out.itertuples(index=False)
    ]
    for dataset, part in result.folds.groupby(level="dataset", sort=False):
        counts = part.notna().sum()
        short = [f"{name(c)} ({int(n)} of {len(part)})" for c, n in counts.items() if n < len(part)]
        if short:
            lines.append(
                f"Uneven folds on {name(dataset)}: {', '.join(short)}; each mean is over its contestant's own folds, "
                "the paired tests over the folds shared."
            )
    return lines


def selection_note(result, name=str):
    """One sentence saying how the contestants were chosen (with best-test: which
    algorithms had a choice to make, the only ones the choice flatters), and where
    contestants pool several seeds, a second saying which and how many; ``name``
    writes a contestant for the format."""
    if result.select == "best-test":
        per = result.per_dataset
        several = (
            list(dict.fromkeys(per.loc[per["choices"] > 1, "configuration"])) if "choices" in per else []
        )
        flattered = (
            f"optimistic for {', '.join(map(name, several))}, whose test folds chose among several configurations"
            if several
            else "no algorithm had more than one configuration to choose from here, so nothing is flattered"
        )
        note = (
            "Each algorithm is represented on each dataset by its configuration with the best mean on the test "
            f"folds: {flattered} (use tune: for an honest choice)."
        )
    else:
        note = "Each configuration (an algorithm and the parameters that vary) is a contestant."
    return note + _seeds_note(result.per_dataset, name)


def _seeds_note(per, name):
    """The sentence on pooled seeds (empty when no contestant pools several)."""
    if "seeds" not in per or not (per["seeds"] > 1).any():
        return ""
    most = per[per["seeds"] > 1].groupby("configuration", sort=False)["seeds"].max()
    named = [f"{name(c)}: {n} seeds" for c, n in most.items()]
    shown = ", ".join(named[:5]) + (f" and {len(named) - 5} more" if len(named) > 5 else "")
    return (
        " Seed parameters (seed, random_state) are pooled, as repeats and folds are: a contestant's value on a "
        f"fold is the mean over its seeds ({shown})."
    )


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
    """``frame.to_csv(index=index, lineterminator="\\n", float_format=repr)``, byte for
    byte (every float round-trip exact, NaN and None empty, text quoted as the csv
    module quotes it), made a column and a block of rows at a time: pandas formats
    value by value (65 s for the 6 million rows of paired.csv at 2,000 contestants),
    this formats each distinct value once."""
    import csv
    import io

    header = [*([_name(frame.index.name)] if index else []), *(_name(c) for c in frame.columns)]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    if len(header) < 2:  # one column: the csv module's own rules (a lone empty cell is quoted)
        plain = _texts(frame.index if index else frame.iloc[:, 0], quote=False)
        writer.writerows([v] for v in plain)
        return buffer.getvalue()
    parts = [buffer.getvalue()]
    for start in range(0, len(frame), _CSV_ROWS):  # a block at a time: few objects alive
        block = frame.iloc[start : start + _CSV_ROWS]
        columns = [*([_texts(block.index)] if index else []), *(_texts(block[c]) for c in block.columns)]
        parts.append("\n".join(map(",".join, zip(*columns, strict=True))) + "\n")
    return "".join(parts)


_CSV_ROWS = 200_000


def _name(name):
    return "" if name is None else str(name)


def _quoted(text):
    """``text`` as the csv module writes it as a cell of a row of several (quoted when
    it holds a comma, a quote or a line end, as this Python's csv rules say)."""
    import csv
    import io

    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow([text, ""])
    return buffer.getvalue()[: -len(",\n")]


def _texts(values, quote=True):
    """The cells of one column as pandas' to_csv writes them with ``float_format=repr``
    (text quoted as a csv cell unless not ``quote``), each distinct value formatted once."""
    import numpy as np
    import pandas as pd

    values = pd.Series(values)
    if values.dtype.kind == "f":
        floats = values.to_numpy(dtype=np.float64)
        where, bits = pd.factorize(floats.view(np.int64))  # by their bits: -0.0 is not 0.0
        shown = [
            "" if v != v else repr(v) for v in np.asarray(bits, dtype=np.int64).view(np.float64).tolist()
        ]
        return np.asarray(shown, dtype=object)[where].tolist()
    if values.dtype.kind in "iub":
        return [str(v) for v in values.to_numpy().tolist()]
    codes, distinct = pd.factorize(values, use_na_sentinel=True)
    shown = ["" if v is None or (isinstance(v, float) and v != v) else str(v) for v in distinct]
    shown = [_quoted(v) for v in shown] if quote else shown
    return np.asarray([*shown, ""], dtype=object)[codes].tolist()  # code -1 (missing): the last, ""


SUFFIX = {"md": "md", "latex": "tex", "csv": "csv", "html": "html"}


def write_comparison(
    result,
    out,
    fmt="md",
    metric=None,
    alpha=None,
    characteristics=None,
    test="corrected-t",
    layout=None,
    notes=(),
    marks=None,
):
    """ranks.csv, pairwise.csv, friedman.csv, per_dataset.csv, paired.csv,
    rank_counts.csv, significance.csv, left_out.csv, nemenyi.csv, with a control
    control.csv, for a protocol of 5 repeats of 2 folds five_by_two.csv (every pair on
    every dataset by the 5×2cv F- and t-tests), then table.md (or .tex, .html, .csv), cd.png and cd.svg, and the
    figures across datasets (:func:`knnx.reporting.summary_figures.write_summary_figures`:
    METRIC-summary-ranks.png, -win_tie_loss.png, -mean_ranks.png), in the folder ``out``
    (each written atomically). Above :data:`knnx.reporting.cd.MAX_CONFIGURATIONS`
    contestants no figure is drawn (those of an earlier comparison in ``out`` are
    removed) and the table says so (:func:`figures_lines`). Returns the names of the
    files written."""
    from knnx.reporting.summary_figures import summary_names, write_summary_figures

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
    atomic_write_text(
        out / name,
        comparison_table(result, fmt, characteristics, test, layout=layout, notes=notes, marks=marks),
    )
    figures = ["cd.png", "cd.svg", *summary_names(result.metric)]
    if not drawn(result):  # too many contestants to show: no figure, none of an earlier comparison
        for figure in figures:
            (out / figure).unlink(missing_ok=True)
        return [*written, name]
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
    "figures_lines",
]
