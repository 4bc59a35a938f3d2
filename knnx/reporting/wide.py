"""The comparison table a paper prints: datasets as rows (with n, d, classes, and the
one-hot columns where they differ from d), contestants as columns, mean ± std per cell,
the best per row in bold, marks where a contestant is significantly worse (▼) or better
(▲) than the row's reference, an average-rank row and the Friedman / post-hoc sentences
under it. One table (:func:`wide_table`, a :class:`WideTable`), four renderings from
it: Markdown (:func:`to_markdown`), LaTeX (:func:`knnx.reporting.latex.to_latex`: laid
out for the page), HTML (:func:`to_html`) and CSV (:func:`to_csv`); ``knnx compare``
and ``knnx report`` print the same table from this code. :func:`renamed` prints
shorter or mapped names, :func:`shown_columns` a choice of columns.

Rules, all tested:

* Cells: the mean and the sample standard deviation (ddof 1) of the contestant's
  per-fold values on the dataset (seeds averaged within a fold), as
  :class:`knnx.stats.compare.CompareResult`'s ``per_dataset`` gives them; ``±`` is left
  out where there is one fold.
* Bold: every mean that ties the row's best (knnx's tie rule, :mod:`knnx.stats.ties`).
* Marks: the contestant is significantly worse (▼) or better (▲) than the row's
  reference: the control when the comparison has one, else the row's best (the first
  in column order among tying bests; nothing is better than it). The test on the folds
  the two share, two-sided at the comparison's alpha: ``corrected-t`` (Nadeau and
  Bengio's corrected resampled t-test, the default: the folds' training sets overlap),
  ``t`` (the paired t-test) or ``5x2cv-f`` (Alpaydın's 5×2cv F-test; only for a
  protocol of 5 repeats of 2 folds). A contestant whose mean ties the reference's is
  never marked. A comparison of times (:data:`knnx.results.TIMINGS`) is not marked
  unless asked (``marks=True``): their fold-to-fold noise is the machine's load.
* Average rank: the mean over datasets of each contestant's rank (ties sharing the
  average rank), as ``knnx compare`` ranks.
"""

import html
import math
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from knnx._text import markdown_text
from knnx.errors import ResultsError
from knnx.evaluation.metrics import LOWER_IS_BETTER
from knnx.reporting.latex import Layout, to_latex
from knnx.reporting.wide_cells import (  # noqa: F401 (shown_columns, default_digits: wide's API)
    CHARACTERISTICS,
    body_cells,
    count_text,
    default_digits,
    fixed_text,
    shown_columns,
)
from knnx.results import TIMINGS
from knnx.stats.ties import best_mask, ties

TESTS = {
    "corrected-t": "Nadeau and Bengio's corrected resampled t-test",
    "t": "paired t-test",
    "5x2cv-f": "Alpaydın's 5×2cv F-test",
}


@dataclass(frozen=True)
class ControlSummary:
    """The post-hoc tests against a control after Friedman (Demšar 2006): who is
    significantly worse or better by Holm, who is worse by Bonferroni-Dunn, and
    Bonferroni-Dunn's critical difference."""

    name: str
    holm_worse: tuple
    holm_better: tuple
    bd_worse: tuple
    cd: float


@dataclass(frozen=True)
class WideTable:
    """A comparison as a paper prints it (see the module docstring). ``mean``, ``std``,
    ``best``, ``worse`` and ``better`` are datasets x contestants; ``datasets`` holds n,
    d (attributes), classes and columns (encoded columns) per dataset (NaN where
    unknown); ``rank`` is the average rank per contestant; ``friedman`` the comparison's
    Friedman row, ``control`` its :class:`ControlSummary` (None without a control);
    ``notes`` the sentences on parameters set per dataset (``params_for``)."""

    metric: str
    datasets: pd.DataFrame
    mean: pd.DataFrame
    std: pd.DataFrame
    best: pd.DataFrame
    worse: pd.DataFrame
    better: pd.DataFrame
    rank: pd.Series
    reference: str  # "the row's best" or the control's name
    test: str
    alpha: float
    friedman: pd.Series
    control: ControlSummary | None = None
    notes: tuple = ()
    marked: bool = True  # whether significant differences are marked

    @property
    def lines(self):
        """The sentences printed under the table: Friedman's test, the tests against the
        control, the parameters set per dataset."""
        return (friedman_sentence(self.friedman, self.alpha), *_control_lines(self), *self.notes)


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
            if c != reference:  # a fold missing (a failed cell): no test, no mark
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


def friedman_sentence(f, alpha=0.05):
    """One line for the ``friedman`` row of a comparison (:attr:`CompareResult.friedman_row`)."""
    tail = (
        f"Nemenyi critical difference at alpha {alpha:g} = {f.critical_difference:.4g} "
        f"({int(f.n_configurations)} configurations, {int(f.n_datasets)} datasets)."
    )
    if int(f.n_configurations) < 3:
        return f"Friedman's test needs three configurations or more; with two, see the Wilcoxon test. {tail}"
    return (
        f"Friedman chi2 = {f.chi2:.4g} (df {int(f.df)}), p = {f.p:.4g}; Iman-Davenport F = "
        f"{f.iman_davenport_f:.4g}, p = {f.p_f:.4g}; {tail}"
    )


def wide_table(result, characteristics=None, test="corrected-t", notes=(), marks=None):
    """The :class:`WideTable` of a :class:`knnx.stats.compare.CompareResult`.
    ``marks``: whether to mark significant differences (None: yes for a score, no for a
    time, :data:`knnx.results.TIMINGS`, whose fold-to-fold noise is the machine's).
    ``characteristics``: a DataFrame indexed by dataset with columns n, d, classes (and
    columns) (:func:`knnx.reporting.characteristics.read_datasets`), or None (n from the
    folds' sizes); ``notes``: sentences printed under the table (the parameters set per
    dataset, :func:`knnx.stats.configurations.dataset_dependent_lines`)."""
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
    worse, better = np.zeros(means.shape, dtype=bool), np.zeros(means.shape, dtype=bool)
    position = {c: i for i, c in enumerate(means.columns)}
    for i, d in enumerate(means.index):
        reference = result.control or means.columns[int(np.argmax(best.loc[d].to_numpy()))]
        p_values = _p_values(result, d, reference, test)
        at = np.array([position[c] for c in p_values], dtype=np.int64)
        a = means.iloc[i].to_numpy(dtype=np.float64)[at]
        b = float(means.loc[d, reference])
        significant = ~ties(a, b) & (np.array(list(p_values.values()), dtype=np.float64) < result.alpha)
        worse[i, at] = significant & ((a > b) if lower else (a < b))
        better[i, at] = significant & ((a < b) if lower else (a > b))
    if not (metric not in TIMINGS if marks is None else marks):
        worse[:], better[:] = False, False
    return WideTable(
        metric=metric,
        datasets=_characteristics(result, characteristics),
        mean=means,
        std=std,
        best=best,
        worse=pd.DataFrame(worse, index=means.index, columns=means.columns),
        better=pd.DataFrame(better, index=means.index, columns=means.columns),
        rank=result.ranks.mean(axis=0),
        reference=result.control or "the row's best",
        test=test,
        alpha=result.alpha,
        friedman=result.friedman_row,
        control=_control_summary(result),
        notes=tuple(notes),
        marked=bool(metric not in TIMINGS if marks is None else marks),
    )


def _characteristics(result, characteristics):
    """n, d, classes and columns per dataset of the table (NaN where unknown)."""
    index = result.means.index
    if characteristics is not None:
        known = characteristics.reindex(index)
        for name in CHARACTERISTICS:
            if name not in known:
                known[name] = np.nan
        return known[list(CHARACTERISTICS)].astype(np.float64)
    return pd.DataFrame({name: np.nan for name in CHARACTERISTICS}, index=index)


def _control_summary(result):
    """The :class:`ControlSummary` of ``result`` (None without a control)."""
    if result.control_tests is None:
        return None
    t = list(result.control_tests.itertuples(index=False))
    return ControlSummary(
        name=result.control,
        holm_worse=tuple(r.configuration for r in t if r.significant_holm and r.worse_than_control),
        holm_better=tuple(r.configuration for r in t if r.significant_holm and not r.worse_than_control),
        bd_worse=tuple(r.configuration for r in t if r.significant_bonferroni_dunn and r.worse_than_control),
        cd=float(result.control_tests["bonferroni_dunn_cd"].iloc[0]),
    )


def _control_lines(table):
    """The post-hoc sentences against the control (none without one)."""
    c = table.control
    if c is None:
        return ()
    return (
        f"Against the control {c.name} after Friedman (Demšar 2006), at alpha {table.alpha:g}: "
        f"significantly worse by Holm: {', '.join(c.holm_worse) or 'none'}; by Bonferroni-Dunn (CD = {c.cd:.3g}): "
        f"{', '.join(c.bd_worse) or 'none'}; significantly better by Holm: {', '.join(c.holm_better) or 'none'}.",
    )


# The marks of a contestant significantly worse / better than the row's reference.
WORSE, BETTER = "▼", "▲"
# Suite dataset ids' prefixes, which ``names="short"`` leaves out (knnx.datasets.suites).
SUITE_PREFIXES = ("keel-imb.", "keel.")


def renamed(table, names=None):
    """``table`` with its datasets and contestants printed under other names: ``None``
    or ``"full"`` (as they are), ``"short"`` (suite prefixes left out: ``keel.iris`` ->
    ``iris``) or a mapping {id or contestant: printed name} (others kept). Two rows or
    two columns printed alike: a ResultsError naming both."""
    if names is None or names == "full":
        return table
    if names == "short":
        rows = {
            d: next((d[len(p) :] for p in SUITE_PREFIXES if d.startswith(p)), d) for d in table.mean.index
        }
        columns = {c: c for c in table.mean.columns}
    elif isinstance(names, Mapping):
        rows = {d: str(names.get(d, d)) for d in table.mean.index}
        columns = {c: str(names.get(c, c)) for c in table.mean.columns}
    else:
        raise ResultsError(f"expected full, short or a mapping of names, got {names!r}", param="names")
    headings = {"datasets": ("average rank",), "contestants": ("dataset", *CHARACTERISTICS)}
    for what, mapping in (("datasets", rows), ("contestants", columns)):
        taken = next((new for new in mapping.values() if new in headings[what]), None)
        if taken is not None:  # a row or column of the table's own would be printed twice
            raise ResultsError(
                f"{what[:-1]} printed as '{taken}', a heading of the table's own", param="names"
            )
        seen = {}
        for old, new in mapping.items():
            printed = unicodedata.normalize("NFC", new)  # 'é' as one code point and as e + accent print alike
            if printed in seen:
                raise ResultsError(
                    f"two {what} would print as '{new}': {seen[printed]} and {old}", param="names"
                )
            seen[printed] = old

    def frame(f):
        return f.rename(index=rows, columns=columns)

    control = table.control
    if control is not None:
        control = replace(
            control,
            name=columns[control.name],
            **{
                k: tuple(columns[c] for c in getattr(control, k))
                for k in ("holm_worse", "holm_better", "bd_worse")
            },
        )
    return replace(
        table,
        datasets=table.datasets.rename(index=rows),
        **{k: frame(getattr(table, k)) for k in ("mean", "std", "best", "worse", "better")},
        rank=table.rank.rename(index=columns),
        reference=columns.get(table.reference, table.reference),
        control=control,
    )


def mark_sentence(table):
    """What the marks mean, in words (``WORSE`` and ``BETTER`` standing for the marks)."""
    if not table.marked:
        return "No significance marks: times vary with the machine's load (--marks adds them)."
    test = f"{TESTS[table.test]}, two-sided, alpha {table.alpha:g}"
    if table.control is None:
        return f"{WORSE}: significantly worse than the row's best ({test})."
    return f"{WORSE} / {BETTER}: significantly worse / better than the control {table.reference} ({test})."


def _legend(table, columns=None, what="mean ± standard deviation over the folds"):
    """The sentences that say what the cells and the marks mean."""
    better = "lowest" if LOWER_IS_BETTER.get(table.metric, False) else "highest"
    hidden = len(table.mean.columns) - len(shown_columns(table, columns)[1])
    shown = (
        f" Ranks and tests over all {len(table.mean.columns)} contestants, {hidden} not shown."
        if hidden
        else ""
    )
    return (
        f"{table.metric}: {what}. Bold: the {better} mean per dataset "
        f"(means within 1e-12 relative tie). {mark_sentence(table)} Last row: average rank (1 is the best).{shown}"
    )


def _header(table, columns):
    chars, contestants = shown_columns(table, columns)
    return ["dataset", *chars, *contestants]


def to_markdown(table, digits=4, columns=None):
    """The table as Markdown (GitHub's pipe tables), its legend and the lines under it."""
    header = _header(table, columns)
    chars, contestants = shown_columns(table, columns)
    esc = [markdown_text(str(h)) for h in header]  # names as written: <b>, *x*, a|b, x\\
    lines = ["| " + " | ".join(esc) + " |", "|" + "|".join(["---"] + ["--:"] * (len(header) - 1)) + "|"]
    for dataset, *cells in body_cells(table, digits, " ± ", lambda t: f"**{t}**", (WORSE, BETTER), columns):
        lines.append("| " + " | ".join([markdown_text(dataset), *cells]) + " |")
    blanks = " |" * len(chars)
    lines.append(
        f"| average rank |{blanks} " + " | ".join(f"{table.rank[c]:.2f}" for c in contestants) + " |"
    )
    return "\n".join([*lines, "", _legend(table, columns), "", *table.lines]) + "\n"


def to_html(table, digits=4, columns=None):
    """The table as an HTML ``<table class="wide">`` with its caption (the legend) and
    the lines under it as paragraphs; names escaped."""
    e = html.escape
    chars, contestants = shown_columns(table, columns)
    head = "".join(f"<th>{e(str(h))}</th>" for h in _header(table, columns))
    body = []
    marks = (f"<sup>{WORSE}</sup>", f"<sup>{BETTER}</sup>")
    for row in body_cells(table, digits, " ± ", lambda t: f"<strong>{t}</strong>", marks, columns):
        cells = [f"<th scope='row'>{e(row[0])}</th>", *(f"<td class='num'>{c}</td>" for c in row[1:])]
        body.append("<tr>" + "".join(cells) + "</tr>")
    ranks = "".join(f"<td class='num'>{table.rank[c]:.2f}</td>" for c in contestants)
    foot = f"<tr><th scope='row'>average rank</th>{'<td></td>' * len(chars)}{ranks}</tr>"
    lines = "".join(f"<p class='note'>{e(line)}</p>" for line in table.lines)
    return (
        f"<table class='wide'><caption class='note'>{e(_legend(table, columns))}</caption><thead><tr>{head}</tr>"
        f"</thead><tbody>{''.join(body)}</tbody><tfoot>{foot}</tfoot></table>{lines}"
    )


def to_compact_html(table, toggle, digits=3):
    """The table as the report's first screen shows it: the means alone (``digits``
    decimals), each cell's standard deviation in its title (on hover) and in a span the
    checkbox of id ``toggle`` shows (CSS alone: the page has no script), the marks and
    the average rank; each dataset's n, d and classes in its title. No cell breaks a
    number or a name (``white-space: nowrap``). The legend comes from
    :func:`compact_legend`."""
    e = html.escape
    contestants = list(table.mean.columns)
    head = "<th>dataset</th>" + "".join(f"<th>{e(str(c))}</th>" for c in contestants)
    body = []
    for d in table.mean.index:
        facts = [f"{k} = {count_text(table.datasets.loc[d, k])}" for k in ("n", "d", "classes")]
        cells = [f"<th scope='row' title='{e(', '.join(facts))}'>{e(str(d))}</th>"]
        for c in contestants:
            mean, std = table.mean.loc[d, c], table.std.loc[d, c]
            spread = "" if math.isnan(std) else f" ± {fixed_text(std, digits)}"
            inner = f"{fixed_text(mean, digits)}<span class='sd'>{spread}</span>"
            inner = f"<strong>{inner}</strong>" if table.best.loc[d, c] else inner
            mark = WORSE if table.worse.loc[d, c] else BETTER if table.better.loc[d, c] else ""
            mark = f"<sup>{mark}</sup>" if mark else ""
            cells.append(f"<td class='num' title='{e(spread.strip())}'>{inner}{mark}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    ranks = "".join(f"<td class='num'>{table.rank[c]:.2f}</td>" for c in contestants)
    return (
        f"<table class='wide compact' id='{e(toggle)}-table'><thead><tr>{head}</tr></thead><tbody>{''.join(body)}"
        f"</tbody><tfoot><tr><th scope='row'>average rank</th>{ranks}</tr></tfoot></table>"
    )


def compact_legend(table):
    """The legend of :func:`to_compact_html`."""
    return _legend(
        table, what="mean over the folds (its standard deviation on hover, or every one with the box above)"
    )


def to_csv(table):
    """The table as tidy CSV: one row per (dataset, contestant) with n, d, classes,
    columns, mean, std, best, significantly_worse and significantly_better; the average
    ranks are in ranks.csv."""
    rows = []
    for d in table.mean.index:
        for c in table.mean.columns:
            rows.append(
                {
                    "dataset": d,
                    **{k: _count(table.datasets.loc[d, k]) for k in CHARACTERISTICS},
                    "contestant": c,
                    "mean": float(table.mean.loc[d, c]),
                    "std": float(table.std.loc[d, c]),
                    "best": bool(table.best.loc[d, c]),
                    "significantly_worse": bool(table.worse.loc[d, c]),
                    "significantly_better": bool(table.better.loc[d, c]),
                }
            )
    return pd.DataFrame(rows).to_csv(index=False, lineterminator="\n", float_format=lambda v: repr(float(v)))


def _count(value):
    """A count of rows, features or classes as an integer (an empty cell when unknown)."""
    return None if value is None or math.isnan(value) else int(value)


def render(table, fmt="md", digits=None, layout=None):
    """The table in ``fmt``: md, latex, html or csv; ``layout`` (a
    :class:`knnx.reporting.latex.Layout`) says which columns to print and how (its
    LaTeX options apply to LaTeX alone)."""
    layout = layout or Layout()
    if fmt == "csv":
        return to_csv(renamed(table, layout.names))
    if fmt not in ("md", "latex", "html"):
        raise ResultsError(f"expected md, csv, latex or html, got '{fmt}'", param="fmt")
    table = renamed(table, layout.names)
    if fmt == "latex":
        return to_latex(table, layout if digits is None else replace(layout, digits=digits))
    digits = layout.digits if digits is None else digits
    digits = default_digits(table) if digits is None else digits
    return (to_markdown if fmt == "md" else to_html)(table, digits, layout.columns)
