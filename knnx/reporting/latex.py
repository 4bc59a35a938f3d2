"""The comparison table as LaTeX (:class:`knnx.reporting.wide.WideTable`), laid out to
fit the page of a paper, and the one LaTeX escape of knnx's tables.

A :class:`Layout` says how (``knnx compare --format latex --layout ... --columns ...``):

* ``float``: ``table`` (the column of a one- or two-column article), ``table*`` (both
  columns of a two-column article) or ``landscape`` (``sidewaystable``, package
  ``rotating``: the page turned);
* ``resize``: the tabular scaled down to the line's width where it is wider (never up;
  ``\\resizebox{\\linewidth}{!}``, package ``graphicx``; a landscape table always is, as
  LaTeX cannot place one wider than the page); ``size``: a font size command
  (``small``, ``footnotesize``, ``scriptsize``, ``tiny``);
* ``columns``: the characteristics (n, d, classes, columns) and contestants printed, in
  order; the ranks and tests stay those of every contestant (the caption says how many
  are not shown);
* ``transpose``: contestants as rows, datasets as columns (for many contestants), the
  average rank the last column;
* ``std``: False prints the means alone and the standard deviations in a second table
  of the same layout (label ``LABEL-std``);
* ``digits``, ``names`` (``short`` leaves suite prefixes out; a mapping renames),
  ``caption`` and ``label``.

The caption is sentences with their mathematics: what a cell is, bold, the marks
(``$^\\circ$`` significantly worse, ``$^\\bullet$`` significantly better than the control;
without one, ``$^\\circ$`` against the row's best), the average rank, Friedman's test
($\\chi^2_F$, Iman and Davenport's $F_F$, $p$), the tests against the control, and the
parameters set per dataset. The first line is a comment naming the packages the layout
needs. Every layout compiles with pdflatex (tested where pdflatex exists).
"""

import math
from dataclasses import dataclass, replace

from knnx.errors import ResultsError
from knnx.evaluation.metrics import LOWER_IS_BETTER
from knnx.reporting.wide_cells import body_cells, default_digits, shown_columns

FLOATS = {"table": "table", "table*": "table*", "landscape": "sidewaystable"}
SIZES = ("small", "footnotesize", "scriptsize", "tiny")
TESTS_TEX = {
    "corrected-t": "Nadeau and Bengio's corrected resampled $t$-test",
    "t": "paired $t$-test",
    "5x2cv-f": "Alpayd\\i{}n's $5\\times 2$cv $F$-test",
}
# Characters of knnx's own sentences that pdflatex's default encoding does not set: their
# LaTeX spelling (names in the data are escaped, not translated).
UNICODE_TEX = {"±": "$\\pm$", "α": "$\\alpha$", "–": "--", "×": "$\\times$", "š": "\\v{s}", "ı": "\\i{}"}
HEADS = {"n": "$n$", "d": "$d$", "classes": "classes", "columns": "cols"}


@dataclass(frozen=True)
class Layout:
    """How a comparison table is printed (see the module docstring); the default is
    the table as it is, in a ``table`` float."""

    float: str = "table"
    resize: bool = False
    size: str | None = None
    columns: tuple | None = None
    transpose: bool = False
    std: bool = True
    digits: int | None = None
    names: object = None
    caption: str | None = None
    label: str | None = None


def parse_layout(text):
    """``(float, resize, size)`` of ``--layout`` text: comma-separated, at most one of
    table, table*, landscape, and resize, a font size; ResultsError naming a word that is
    none of them."""
    words = [w.strip() for w in str(text).split(",") if w.strip()]
    known = [*FLOATS, "resize", *SIZES]
    for w in words:
        if w not in known:
            raise ResultsError(f"'{w}' is not a layout; known: {', '.join(known)}", param="layout")
    floats, sizes = [w for w in words if w in FLOATS], [w for w in words if w in SIZES]
    if len(floats) > 1 or len(sizes) > 1:
        raise ResultsError(f"one float and one size at most, got '{text}'", param="layout")
    return (floats or ["table"])[0], "resize" in words, (sizes or [None])[0]


# Characters LaTeX's text mode does not print as written: its specials, and < > | (the
# OT1 font encoding of a default pdflatex document prints them as ¡ ¿ and an em dash).
_LATEX = {
    "\\": "\\textbackslash{}",
    "~": "\\textasciitilde{}",
    "^": "\\textasciicircum{}",
    "<": "\\textless{}",
    ">": "\\textgreater{}",
    "|": "\\textbar{}",
    **{ch: "\\" + ch for ch in "_{}&%#$"},
}


def latex_escape(text):
    """``text`` with LaTeX's special characters escaped (every table cell and name), so
    that it prints as written in any font encoding; a text that starts with ``[`` or
    ``*`` is led by ``{}``, as a cell after ``\\\\`` or ``\\midrule`` would be read as
    their optional argument (``[d] first``: "Missing number") or star."""
    out = "".join(_LATEX.get(ch, ch) for ch in str(text))
    return "{}" + out if out.startswith(("[", "*")) else out


def prose(text):
    """knnx's own sentence ``text`` (names in it included) as LaTeX: escaped, with the
    characters of :data:`UNICODE_TEX` spelled for pdflatex."""
    out = latex_escape(text)
    for plain, tex in UNICODE_TEX.items():
        out = out.replace(plain, tex)
    return out


def tex_number(value, significant=4):
    """``value`` for math mode with ``significant`` digits: ``1.277\\times 10^{-11}`` for
    a small or large one; ``\\text{n/a}``-free: NaN is ``\\mathrm{NaN}``, an infinite
    value (Iman-Davenport's F when every dataset ranks alike) ``\\infty``."""
    if value is None or math.isnan(value):
        return "\\mathrm{NaN}"
    if math.isinf(value):
        return "\\infty" if value > 0 else "-\\infty"
    text = f"{value:.{significant}g}"
    if "e" in text:
        mantissa, exponent = text.split("e")
        return f"{mantissa}\\times 10^{{{int(exponent)}}}"
    return text


def _names(names):
    return ", ".join(prose(n) for n in names) or "none"


def caption_sentences(table, layout, hidden=0):
    """The caption of ``table`` as LaTeX sentences (see the module docstring)."""
    lower = LOWER_IS_BETTER.get(table.metric, False)
    label = layout.label or f"tab:{table.metric}"
    what = (
        "mean $\\pm$ standard deviation over the folds"
        if layout.std
        else f"mean over the folds (standard deviations in Table~\\ref{{{latex_escape(label)}-std}})"
    )
    test = f"{TESTS_TEX[table.test]}, two-sided, $\\alpha = {table.alpha:g}$"
    marks = (
        "No significance marks: times vary with the machine's load."
        if not table.marked
        else f"$^\\circ$: significantly worse than the row's best ({test})."
        if table.control is None
        else f"$^\\circ$ / $^\\bullet$: significantly worse / better than the control {prose(table.reference)} ({test})."
    )
    out = [
        f"{prose(table.metric)}: {what}.",
        f"Bold: the {'lowest' if lower else 'highest'} mean of each dataset (means within a relative $10^{{-12}}$ tie).",
        marks,
        f"{'Last column' if layout.transpose else 'Last row'}: average rank (1 is the best).",
    ]
    if hidden:
        out.append(f"Ranks and tests are over all {len(table.mean.columns)} contestants; {hidden} not shown.")
    out += friedman_tex(table.friedman, table.alpha)
    c = table.control
    if c is not None:
        out.append(
            f"Against the control {prose(c.name)} after Friedman's test (Holm's procedure, Dem\\v{{s}}ar 2006, "
            f"$\\alpha = {table.alpha:g}$): significantly worse: {_names(c.holm_worse)}; significantly better: "
            f"{_names(c.holm_better)}. Bonferroni--Dunn's critical difference is {tex_number(c.cd, 3)}; by it, "
            f"significantly worse: {_names(c.bd_worse)}."
        )
    out += [prose(n.removesuffix(".")) + "." for n in table.notes]
    return out


def friedman_tex(f, alpha):
    """Friedman's test and Nemenyi's critical difference in LaTeX sentences."""
    k, n = int(f.n_configurations), int(f.n_datasets)
    cd = (
        f"Nemenyi's critical difference at $\\alpha = {alpha:g}$ is ${tex_number(f.critical_difference)}$ "
        f"({k} contestants, {n} datasets)."
    )
    if k < 3:
        return ["Friedman's test needs three contestants or more; with two, see the Wilcoxon test.", cd]
    return [
        f"Friedman's test: $\\chi^2_F = {tex_number(f.chi2)}$ ({int(f.df)} degrees of freedom), "
        f"$p = {tex_number(f.p)}$; Iman and Davenport's $F_F = {tex_number(f.iman_davenport_f)}$, "
        f"$p = {tex_number(f.p_f)}$.",
        cd,
    ]


def _math_cell(text):
    return "--" if text == "–" else f"${text}$"


def _body(table, layout, digits, std_only=False):
    """(column heads, body rows, rank cells) of the table, each a list of LaTeX strings."""
    chars, contestants = shown_columns(table, layout.columns)
    if std_only:
        none = table.best & False
        plain = replace(table, mean=table.std, best=none, worse=none, better=none)
        rows = body_cells(plain, digits, None, str, ("", ""), layout.columns)
    else:
        pm = " \\pm " if layout.std else None
        rows = body_cells(
            table, digits, pm, lambda t: "\\mathbf{" + t + "}", ("^{\\circ}", "^{\\bullet}"), layout.columns
        )
    rows = [
        [
            latex_escape(r[0]),
            *(latex_escape(c).replace("–", "--") for c in r[1 : 1 + len(chars)]),
            *(_math_cell(c) for c in r[1 + len(chars) :]),
        ]
        for r in rows
    ]
    heads = [HEADS[c] for c in chars] + [latex_escape(c) for c in contestants]
    ranks = [f"{table.rank[c]:.2f}" for c in contestants]
    return chars, heads, rows, ranks


def _tabular(table, layout, digits, std_only):
    """The tabular's lines (booktabs), in the layout's orientation."""
    chars, heads, rows, ranks = _body(table, layout, digits, std_only)
    if not layout.transpose:
        lines = [
            "\\begin{tabular}{l" + "r" * len(heads) + "}",
            "\\toprule",
            " & ".join(["dataset", *heads]) + " \\\\",
        ]
        lines += ["\\midrule", *(" & ".join(r) + " \\\\" for r in rows)]
        if not std_only:
            lines += ["\\midrule", " & ".join(["average rank", *[""] * len(chars), *ranks]) + " \\\\"]
        return [*lines, "\\bottomrule", "\\end{tabular}"]
    datasets = [r[0] for r in rows]
    lines = [
        "\\begin{tabular}{l" + "r" * len(datasets) + ("" if std_only else "r") + "}",
        "\\toprule",
        " & ".join(["", *datasets, *([] if std_only else ["rank"])]) + " \\\\",
    ]
    for j, c in enumerate(chars):
        lines.append(" & ".join([HEADS[c], *(r[1 + j] for r in rows), *([] if std_only else [""])]) + " \\\\")
    lines.append("\\midrule")
    for i, head in enumerate(heads[len(chars) :]):
        cells = [r[1 + len(chars) + i] for r in rows]
        lines.append(" & ".join([head, *cells, *([] if std_only else [ranks[i]])]) + " \\\\")
    return [*lines, "\\bottomrule", "\\end{tabular}"]


def _shrinks(layout):
    """Whether the tabular is scaled down to the line's width when wider: asked
    (``resize``), or a landscape table, which LaTeX cannot place at all when too wide."""
    return layout.resize or layout.float == "landscape"


def _float(table, layout, digits, caption, label, std_only=False):
    env = FLOATS[layout.float]
    lines = [f"\\begin{{{env}}}" + ("" if env == "sidewaystable" else "[t]"), "\\centering"]
    if layout.size:
        lines.append(f"\\{layout.size}")
    short = f"{prose(table.metric)}{' standard deviations' if std_only else ''} per dataset"
    lines += [f"\\caption[{short}]{{{caption}}}", f"\\label{{{latex_escape(label)}}}"]
    tabular = _tabular(table, layout, digits, std_only)
    if _shrinks(layout):  # scaled down to the line's width when wider, never up (box 0: TeX's scratch box)
        tabular = [
            "\\sbox0{%",
            *tabular,
            "}%",
            "\\ifdim\\wd0>\\linewidth\\resizebox{\\linewidth}{!}{\\usebox0}\\else\\usebox0\\fi",
        ]
    return [*lines, *tabular, f"\\end{{{env}}}"]


def to_latex(table, layout=None):
    """The table as LaTeX in ``layout`` (a :class:`Layout`; see the module docstring):
    a comment naming the packages, the float, and with ``std=False`` a second float of
    the standard deviations."""
    layout = layout or Layout()
    if layout.float not in FLOATS or (layout.size is not None and layout.size not in SIZES):
        raise ResultsError(f"not a layout: {layout.float}, {layout.size}", param="layout")
    digits = default_digits(table, score=3) if layout.digits is None else layout.digits
    label = layout.label or f"tab:{table.metric}"
    hidden = len(table.mean.columns) - len(shown_columns(table, layout.columns)[1])
    caption = prose(layout.caption) if layout.caption else " ".join(caption_sentences(table, layout, hidden))
    packages = [
        "booktabs",
        *(["graphicx"] if _shrinks(layout) else []),
        *(["rotating"] if layout.float == "landscape" else []),
    ]
    lines = [f"% \\usepackage{{{','.join(packages)}}}", *_float(table, layout, digits, caption, label)]
    if not layout.std:
        std_caption = f"{prose(table.metric)}: standard deviation over the folds of each mean in Table~\\ref{{{latex_escape(label)}}}."
        lines += ["", *_float(table, layout, digits, std_caption, f"{label}-std", std_only=True)]
    return "\n".join(lines) + "\n"
