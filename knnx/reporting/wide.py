"""The comparison table a paper prints: datasets as rows (with n, d and classes),
contestants as columns, mean ± std per cell, the best per row in bold, a dagger where a
contestant is significantly worse than the row's reference, an average-rank row and
the Friedman / post-hoc line under it. One table (:func:`wide_table`, a
:class:`WideTable`), three renderings from it: Markdown (:func:`to_markdown`), LaTeX
(:func:`to_latex`: booktabs, caption, label) and HTML (:func:`to_html`); ``knnx
compare`` and ``knnx report`` print the same table from this code.

Rules, all tested:

* Cells: the mean and the sample standard deviation (ddof 1) of the contestant's
  per-fold values on the dataset (seeds averaged within a fold), as
  :class:`knnx.stats.compare.CompareResult`'s ``per_dataset`` gives them; ``±`` is left
  out where there is one fold.
* Bold: every mean that ties the row's best (knnx's tie rule, :mod:`knnx.stats.ties`).
* Dagger: the contestant is significantly worse than the row's reference: the
  control when the comparison has one, else the row's best (the first in column order
  among tying bests). The test on the folds the two share, two-sided at the
  comparison's alpha: ``corrected-t`` (Nadeau and Bengio's corrected resampled t-test,
  the default: the folds' training sets overlap), ``t`` (the paired t-test) or
  ``5x2cv-f`` (Alpaydın's 5×2cv F-test; only for a protocol of 5 repeats of 2 folds).
  A contestant whose mean ties the reference's is never marked.
* Average rank: the mean over datasets of each contestant's rank (ties sharing the
  average rank), as ``knnx compare`` ranks.
"""

import html
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from knnx.errors import ResultsError
from knnx.evaluation.metrics import LOWER_IS_BETTER
from knnx.stats.ties import best_mask, ties

TESTS = {
    "corrected-t": "Nadeau and Bengio's corrected resampled t-test",
    "t": "paired t-test",
    "5x2cv-f": "Alpaydın's 5×2cv F-test",
}
DAGGER = "†"
# Characters of knnx's own sentences that pdflatex's default encoding does not set: their
# LaTeX spelling (names in the data are escaped, not translated).
UNICODE_TEX = {
    "±": "$\\pm$",
    "α": "$\\alpha$",
    DAGGER: "$^\\dagger$",
    "–": "--",
    "×": "$\\times$",
    "š": "\\v{s}",
    "ı": "\\i{}",
    "χ²": "$\\chi^2$",
}


@dataclass(frozen=True)
class WideTable:
    """A comparison as a paper prints it (see the module docstring). ``mean``, ``std``,
    ``best`` and ``worse`` are datasets x contestants; ``datasets`` holds n, d and
    classes per dataset (NaN where unknown); ``rank`` is the average rank per
    contestant; ``lines`` the sentences printed under the table."""

    metric: str
    datasets: pd.DataFrame
    mean: pd.DataFrame
    std: pd.DataFrame
    best: pd.DataFrame
    worse: pd.DataFrame
    rank: pd.Series
    reference: str  # "the row's best" or the control's name
    test: str
    alpha: float
    lines: tuple


def _p_values(result, dataset, reference, test):
    """{contestant: p} of each contestant against ``reference`` on ``dataset``."""
    if test == "5x2cv-f":
        from knnx.stats.control import five_by_two_f

        block = result.folds.loc[dataset]
        shape = (block.index.get_level_values(0).nunique(), block.index.get_level_values(1).nunique())
        if shape != (5, 2) or len(block) != 10:
            raise ResultsError(
                f"5x2cv-f needs 5 repeats of 2 folds; dataset '{dataset}' has {shape[0]} repeats of {shape[1]} folds",
                param="test",
            )
        ref = block[reference].to_numpy(dtype=np.float64).reshape(5, 2)
        out = {}
        for c in result.means.columns:
            values = block[c].to_numpy(dtype=np.float64).reshape(5, 2)
            if c != reference:  # a fold missing (a failed cell): no test, no dagger
                complete = np.isfinite(values).all() and np.isfinite(ref).all()
                out[c] = five_by_two_f(values, ref).p if complete else math.nan
        return out
    column = "p_corrected" if test == "corrected-t" else "p"
    paired = result.paired
    a, b = paired["a"].to_numpy(dtype=object), paired["b"].to_numpy(dtype=object)
    rows = np.flatnonzero(
        (paired["dataset"].to_numpy(dtype=object) == dataset) & ((a == reference) | (b == reference))
    )
    others = np.where(a[rows] == reference, b[rows], a[rows])
    return dict(zip(others.tolist(), paired[column].to_numpy()[rows].tolist(), strict=True))


def wide_table(result, characteristics=None, test="corrected-t"):
    """The :class:`WideTable` of a :class:`knnx.stats.compare.CompareResult`.
    ``characteristics``: a DataFrame indexed by dataset with columns n, d, classes
    (:func:`knnx.reporting.characteristics.read_datasets`), or None (n from the folds' sizes)."""
    from knnx.reporting.comparison import friedman_sentence

    if test not in TESTS:
        raise ResultsError(f"expected one of {', '.join(TESTS)}, got '{test}'", param="test")
    metric, means = result.metric, result.means
    lower = LOWER_IS_BETTER.get(metric, False)
    per = result.per_dataset
    std = per.pivot(index="dataset", columns="configuration", values="std").reindex(
        index=means.index, columns=means.columns
    )
    best = pd.DataFrame(
        [best_mask(row, lower) for row in means.to_numpy(dtype=np.float64)],
        index=means.index,
        columns=means.columns,
    )
    worse = np.zeros(means.shape, dtype=bool)
    position = {c: i for i, c in enumerate(means.columns)}
    for i, d in enumerate(means.index):
        reference = result.control or means.columns[int(np.argmax(best.loc[d].to_numpy()))]
        p_values = _p_values(result, d, reference, test)
        at = np.array([position[c] for c in p_values], dtype=np.int64)
        a = means.iloc[i].to_numpy(dtype=np.float64)[at]
        b = float(means.loc[d, reference])
        behind = (a > b) if lower else (a < b)
        worse[i, at] = (
            behind & ~ties(a, b) & (np.array(list(p_values.values()), dtype=np.float64) < result.alpha)
        )
    worse = pd.DataFrame(worse, index=means.index, columns=means.columns)
    datasets = _characteristics(result, characteristics)
    return WideTable(
        metric=metric,
        datasets=datasets,
        mean=means,
        std=std,
        best=best,
        worse=worse,
        rank=result.ranks.mean(axis=0),
        reference=result.control or "the row's best",
        test=test,
        alpha=result.alpha,
        lines=(friedman_sentence(result.friedman_row, result.alpha), *_control_lines(result)),
    )


def _characteristics(result, characteristics):
    """n, d, classes per dataset of the table (NaN where unknown)."""
    index = result.means.index
    if characteristics is not None:
        known = characteristics.reindex(index)[["n", "d", "classes"]]
        return known.astype(np.float64)
    return pd.DataFrame({"n": np.nan, "d": np.nan, "classes": np.nan}, index=index)


def _control_lines(result):
    """The post-hoc sentences against the control (none without one)."""
    if result.control_tests is None:
        return ()
    t = result.control_tests
    holm = [r.configuration for r in t.itertuples(index=False) if r.significant_holm and r.worse_than_control]
    bd = [
        r.configuration
        for r in t.itertuples(index=False)
        if r.significant_bonferroni_dunn and r.worse_than_control
    ]
    better = [
        r.configuration for r in t.itertuples(index=False) if r.significant_holm and not r.worse_than_control
    ]
    cd = float(t["bonferroni_dunn_cd"].iloc[0])
    return (
        f"Against the control {result.control} after Friedman (Demšar 2006), at alpha {result.alpha:g}: "
        f"significantly worse by Holm: {', '.join(holm) or 'none'}; by Bonferroni-Dunn (CD = {cd:.3g}): "
        f"{', '.join(bd) or 'none'}; significantly better by Holm: {', '.join(better) or 'none'}.",
    )


def _number(value, digits):
    return "–" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def _count(value):
    return "–" if value is None or math.isnan(value) else f"{int(value)}"


def _cells(table, digits, pm, bold, mark):
    """Body rows as lists of strings, the cells formatted by ``bold`` and ``mark``."""
    rows = []
    for d in table.mean.index:
        row = [str(d), *(_count(table.datasets.loc[d, c]) for c in ("n", "d", "classes"))]
        for c in table.mean.columns:
            mean, std = table.mean.loc[d, c], table.std.loc[d, c]
            text = _number(mean, digits) + ("" if math.isnan(std) else f"{pm}{_number(std, digits)}")
            text = bold(text) if table.best.loc[d, c] else text
            row.append(text + (mark if table.worse.loc[d, c] else ""))
        rows.append(row)
    return rows


def _legend(table):
    """The sentences that say what the marks mean."""
    better = "lowest" if LOWER_IS_BETTER.get(table.metric, False) else "highest"
    reference = table.reference if table.reference == "the row's best" else f"the control {table.reference}"
    return (
        f"{table.metric}: mean ± standard deviation over the folds. Bold: the {better} mean per dataset "
        f"(means within 1e-12 relative tie). {DAGGER}: significantly worse than {reference} "
        f"({TESTS[table.test]}, two-sided, alpha {table.alpha:g}). Last row: average rank (1 is the best)."
    )


def to_markdown(table, digits=4):
    """The table as Markdown (GitHub's pipe tables), its legend and the lines under it."""
    header = ["dataset", "n", "d", "classes", *table.mean.columns]
    esc = [h.replace("|", "\\|") for h in header]
    lines = ["| " + " | ".join(esc) + " |", "|" + "|".join(["---"] + ["--:"] * (len(header) - 1)) + "|"]
    for row in _cells(table, digits, " ± ", lambda t: f"**{t}**", DAGGER):
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in row) + " |")
    lines.append(
        "| average rank | | | | " + " | ".join(f"{table.rank[c]:.2f}" for c in table.mean.columns) + " |"
    )
    return "\n".join([*lines, "", _legend(table), "", *table.lines]) + "\n"


def latex_escape(text):
    """``text`` with LaTeX's special characters escaped."""
    specials = {"\\": "\\textbackslash{}", "~": "\\textasciitilde{}", "^": "\\textasciicircum{}"}
    out = "".join(specials.get(ch, "\\" + ch if ch in "_{}&%#$" else ch) for ch in str(text))
    for plain, tex in UNICODE_TEX.items():
        out = out.replace(plain, tex)
    return out


def to_latex(table, digits=3, caption=None, label=None):
    """The table as a LaTeX ``table`` float: booktabs rules (``\\usepackage{booktabs}``),
    ``\\pm``, bold best, ``$^\\dagger$`` marks, the average rank under a rule, the legend
    and the Friedman / post-hoc lines in the caption, and a label
    (default ``tab:<metric>``)."""
    k = len(table.mean.columns)
    caption = caption or " ".join([_legend(table), *table.lines])
    label = label or f"tab:{table.metric}"
    header = ["dataset", "$n$", "$d$", "classes", *(latex_escape(c) for c in table.mean.columns)]
    lines = [
        "\\begin{table}[t]",
        "\\centering",
        "\\caption{" + latex_escape(caption) + "}",
        "\\label{" + latex_escape(label) + "}",
        "\\begin{tabular}{l" + "r" * (3 + k) + "}",
        "\\toprule",
        " & ".join(header) + " \\\\",
        "\\midrule",
    ]
    for row in _cells(table, digits, " \\pm ", lambda t: "\\mathbf{" + t + "}", "^\\dagger"):
        cells = [*(latex_escape(c) for c in row[:4]), *(f"${c}$" for c in row[4:])]
        lines.append(" & ".join(cells) + " \\\\")
    lines += [
        "\\midrule",
        "average rank & & & & " + " & ".join(f"{table.rank[c]:.2f}" for c in table.mean.columns) + " \\\\",
        "\\bottomrule",
        "\\end{tabular}",
        "\\end{table}",
    ]
    return "\n".join(lines) + "\n"


def to_html(table, digits=4):
    """The table as an HTML ``<table class="wide">`` with its caption (the legend) and
    the lines under it as paragraphs; names escaped."""
    e = html.escape
    head = "".join(f"<th>{e(str(h))}</th>" for h in ["dataset", "n", "d", "classes", *table.mean.columns])
    body = []
    for row in _cells(table, digits, " ± ", lambda t: f"<strong>{t}</strong>", f"<sup>{DAGGER}</sup>"):
        cells = [f"<th scope='row'>{e(row[0])}</th>", *(f"<td class='num'>{c}</td>" for c in row[1:])]
        body.append("<tr>" + "".join(cells) + "</tr>")
    ranks = "".join(f"<td class='num'>{table.rank[c]:.2f}</td>" for c in table.mean.columns)
    foot = f"<tr><th scope='row'>average rank</th><td></td><td></td><td></td>{ranks}</tr>"
    lines = "".join(f"<p class='note'>{e(line)}</p>" for line in table.lines)
    return (
        f"<table class='wide'><caption class='note'>{e(_legend(table))}</caption><thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(body)}</tbody><tfoot>{foot}</tfoot></table>{lines}"
    )


def to_csv(table):
    """The table as tidy CSV: one row per (dataset, contestant) with n, d, classes,
    mean, std, best and significantly_worse; the average ranks are in ranks.csv."""
    rows = []
    for d in table.mean.index:
        for c in table.mean.columns:
            rows.append(
                {
                    "dataset": d,
                    **{k: table.datasets.loc[d, k] for k in ("n", "d", "classes")},
                    "contestant": c,
                    "mean": float(table.mean.loc[d, c]),
                    "std": float(table.std.loc[d, c]),
                    "best": bool(table.best.loc[d, c]),
                    "significantly_worse": bool(table.worse.loc[d, c]),
                }
            )
    return pd.DataFrame(rows).to_csv(index=False, lineterminator="\n", float_format=lambda v: repr(float(v)))


def render(table, fmt="md", digits=None):
    """The table in ``fmt``: md, latex, html or csv."""
    renderers = {"md": to_markdown, "latex": to_latex, "html": to_html}
    if fmt == "csv":
        return to_csv(table)
    if fmt not in renderers:
        raise ResultsError(f"expected md, csv, latex or html, got '{fmt}'", param="fmt")
    return renderers[fmt](table) if digits is None else renderers[fmt](table, digits=digits)
