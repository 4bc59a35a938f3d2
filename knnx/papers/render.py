"""The one renderer of comparison rows: markdown and LaTeX tables, and REPORT.md.

Everything here reads the rows of :func:`knnx.papers.comparison.comparison_rows` (or the
``comparison.csv`` written from them); every count in REPORT.md is an aggregation of
those rows (:func:`headline`).
"""

import math

import pandas as pd

from knnx.papers.declaration import PAPERS

MISSING = "-"


def headline(rows):
    """Counts over comparison rows: cells, with our result, with a paper number, with an
    interval and a paper number (``judged``), among those the paper's inside ours, the
    judged claims and those holding, by the interval and by the point estimate."""
    ours = rows["ours_mean"].notna()
    paper = rows["paper"].notna()
    judged = rows["paper_in_ci"].notna() & ours & paper
    inside = rows["paper_in_ci"].where(judged, False).astype(bool)
    claims = rows["claim_holds"].notna() if "claim_holds" in rows else pd.Series(False, index=rows.index)
    holds = rows["claim_holds"].where(claims, False).astype(bool) if "claim_holds" in rows else claims
    on_mean = (
        rows["claim_holds_mean"].where(claims, False).fillna(False).astype(bool)
        if "claim_holds_mean" in rows
        else claims & False
    )
    return {
        "cells": int(len(rows)),
        "ours": int(ours.sum()),
        "paper": int((ours & paper).sum()),
        "judged": int(judged.sum()),
        "inside": int(inside.sum()),
        "claims": int(claims.sum()),
        "holding": int(holds.sum()),
        "holding_mean": int(on_mean.sum()),
    }


def headline_text(counts):
    """One line from :func:`headline`'s counts."""
    if counts["cells"] == 0:
        return "no cells"
    parts = []
    if counts["judged"] or not counts.get("claims"):
        parts.append(f"paper's number inside our 95 % interval: {counts['inside']}/{counts['judged']}")
    if counts.get("claims"):
        parts.append(
            f"claims holding: {counts['holding']}/{counts['claims']} by the interval,"
            f" {counts.get('holding_mean', 0)}/{counts['claims']} on the mean"
        )
    text = "; ".join(parts)
    missing = counts["cells"] - counts["ours"]
    if missing:
        text += f"; {missing} of {counts['cells']} cells without our result"
    return text


def _number(value, digits):
    return (
        MISSING
        if value is None or (isinstance(value, float) and math.isnan(value))
        else f"{value:.{digits}f}"
    )


def _paper(row, digits):
    if math.isnan(row["paper"]):
        return MISSING
    if row["paper_high"] != row["paper"]:
        return f"{row['paper']:.{digits}f}-{row['paper_high']:.{digits}f}"
    return _number(row["paper"], digits)


def _inside(value):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING
    return "yes" if bool(value) else "**no**"


def table_cells(rows, digits=2):
    """The display cells of one table's comparison rows (list of lists, header first);
    the claim columns only when a row states a claim."""
    header = ["row", "column", "ours", "sd", "n", "95 % CI", "paper", "ours - paper", "paper in CI"]
    claims = "claim" in rows and rows["claim"].fillna("").astype(str).str.len().gt(0).any()
    if claims:
        header += ["claim", "holds (interval)", "holds (mean)"]
    body = []
    for _, r in rows.iterrows():
        ci = (
            MISSING
            if math.isnan(r["ci_low"])
            else f"[{_number(r['ci_low'], digits)}, {_number(r['ci_high'], digits)}]"
        )
        body.append(
            [
                str(r["row"]),
                str(r["column"]),
                _number(r["ours_mean"], digits),
                _number(r["ours_sd"], digits),
                str(int(r["n"])),
                ci,
                _paper(r, digits),
                _number(r["diff"], digits),
                _inside(r["paper_in_ci"]),
            ]
            + (
                [str(r["claim"] or MISSING), _inside(r["claim_holds"]), _inside(r.get("claim_holds_mean"))]
                if claims
                else []
            )
        )
    return [header, *body]


def markdown_table(rows, digits=2):
    cells = table_cells(rows, digits)
    lines = ["| " + " | ".join(cells[0]) + " |", "|" + "---|" * len(cells[0])]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in cells[1:]]
    return "\n".join(lines)


def latex_table(rows, digits=2):
    """A booktabs tabular of one table's rows (escaped)."""
    cells = table_cells(rows, digits)

    def esc(text):
        for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("_", r"\_"), ("#", r"\#")):
            text = text.replace(a, b)
        return text.replace("**", "")

    lines = [r"\begin{tabular}{ll" + "r" * (len(cells[0]) - 2) + "}", r"\toprule"]
    lines.append(" & ".join(esc(c) for c in cells[0]) + r" \\")
    lines.append(r"\midrule")
    lines += [" & ".join(esc(c) for c in row) + r" \\" for row in cells[1:]]
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines)


def target_markdown(target, rows, level=2):
    """A target's section: its title, headline, and one table per declared table."""
    hashes = "#" * level
    out = [f"{hashes} {target.target}: {target.title}", ""]
    mine = rows[rows["target"] == target.target]
    if not target.tables:
        out += [
            "No paper table declared as data: see "
            + (", ".join(f"[{link}]({link})" for link in target.links) or "its run's files")
            + ".",
            "",
        ]
        return "\n".join(out)
    out += [headline_text(headline(mine)) + ".", ""]
    for table in target.tables:
        part = mine[mine["table"] == table.id]
        out += [f"{hashes}# {table.title}", "", markdown_table(part, table.digits), ""]
    return "\n".join(out)


def report_markdown(targets, rows, times=None):
    """REPORT.md: a summary table (target, paper, wall time, status, headline) and one
    section per paper with its targets' tables. ``targets``: loaded declarations;
    ``times``: {target: {"seconds", "status"}}."""
    times = times or {}
    lines = [
        "# knnx beside the papers",
        "",
        "Every number below is read from `comparison.csv` (written by `knnx reproduce`"
        " from the result files); intervals are 95 %, by the policy each table states.",
        "",
        "| target | paper | wall time | status | agreement |",
        "|---|---|---|---|---|",
    ]
    for t in targets:
        mine = rows[rows["target"] == t.target]
        timing = times.get(t.target, {})
        seconds = timing.get("seconds")
        wall = MISSING if seconds is None else f"{seconds:.0f} s"
        agreement = headline_text(headline(mine)) if t.tables else "no table declared as data"
        lines.append(f"| {t.target} | {t.paper} | {wall} | {timing.get('status', 'not run')} | {agreement} |")
    lines.append("")
    for key, paper in PAPERS.items():
        mine = [t for t in targets if t.paper == key]
        if not mine:
            continue
        lines += [f"## {paper}", ""]
        lines += [target_markdown(t, rows, level=3) for t in mine]
    return "\n".join(lines).rstrip() + "\n"


def read_comparison(path):
    """comparison.csv back as written: every cell read as text, numbers parsed with
    Python's float() (exactly what was written, whatever the pandas version; "" is NaN),
    ``n`` as int, ``paper_in_ci``, ``claim_holds`` and ``claim_holds_mean`` as True, False
    or None (a file written before ``claim_holds_mean`` existed reads it as None)."""
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    for column in ("ours_mean", "ours_sd", "ci_low", "ci_high", "paper", "paper_high", "diff"):
        frame[column] = [float(v) if v != "" else math.nan for v in frame[column]]
    frame["n"] = [int(v) for v in frame["n"]]
    if "claim_holds_mean" not in frame:
        frame["claim_holds_mean"] = ""
    for column in ("paper_in_ci", "claim_holds", "claim_holds_mean"):
        frame[column] = pd.Series(
            [{"True": True, "False": False}.get(v) for v in frame[column]], dtype=object
        )
    return frame
