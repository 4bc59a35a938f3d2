"""The HTML pieces the report's modules share: escaping (:func:`escape`), numbers
(:func:`number`), a DataFrame as a table (:func:`html_table`) and a collapsed section
(:func:`collapsed`)."""

import html
import math

import numpy as np


def escape(text):
    return html.escape(str(text), quote=True)


def number(value, digits=4):
    if isinstance(value, float | np.floating):
        if math.isnan(value):
            return "–"
        if math.isinf(value):
            return "∞" if value > 0 else "−∞"
        return (
            f"{value:.{digits}g}"
            if abs(value) >= 10**digits or (value and abs(value) < 1e-3)
            else f"{value:.{digits}f}"
        )
    return str(value)


def html_table(frame, numeric_digits=4, bold=None):
    """A DataFrame as an HTML table (escaped); ``bold``: a boolean Series of rows to mark."""
    head = "".join(f"<th>{escape(c)}</th>" for c in frame.columns)
    rows = []
    for i, row in enumerate(frame.itertuples(index=False)):
        cls = ' class="best"' if bold is not None and bool(bold.iloc[i]) else ""
        cells = []
        for value in row:
            numeric = isinstance(value, int | float | np.integer | np.floating) and not isinstance(
                value, bool
            )
            text = number(value, numeric_digits) if numeric else escape(value)
            cells.append(f'<td class="num">{text}</td>' if numeric else f"<td>{text}</td>")
        rows.append(f"<tr{cls}>{''.join(cells)}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def collapsed(summary, parts, open_=False):
    """``parts`` inside a <details> element whose summary line is ``summary``."""
    flag = " open" if open_ else ""
    return f"<details{flag}><summary>{escape(summary)}</summary>{''.join(parts)}</details>"
