"""The cells of the comparison table (:class:`knnx.reporting.wide.WideTable`) as every
rendering prints them: which columns are shown (:func:`shown_columns`), each body cell
as text (:func:`body_cells`) and how many decimals (:func:`default_digits`). Markdown,
HTML (:mod:`knnx.reporting.wide`) and LaTeX (:mod:`knnx.reporting.latex`) read them
from here, so that the three print the same numbers."""

import math

import numpy as np

from knnx.errors import ResultsError
from knnx.results import TIMINGS

CHARACTERISTICS = ("n", "d", "classes", "columns")


def shown_columns(table, columns=None):
    """(characteristics, contestants) printed, in order: ``columns`` (names among n, d,
    classes, columns and the contestants) or by default n, d, classes (columns too
    where a dataset's encoded columns differ from its attributes) and every contestant."""
    if columns is None:
        chars = ["n", "d", "classes"]
        d, encoded = table.datasets["d"], table.datasets["columns"]
        if (encoded.notna() & d.notna() & (encoded != d)).any():
            chars.append("columns")
        return chars, list(table.mean.columns)
    known = [*CHARACTERISTICS, *table.mean.columns]
    columns = _rejoined(columns, set(map(str, known)))
    for i, name in enumerate(columns):
        if name not in known:
            quoted = ", ".join(f"'{k}'" for k in known)  # a contestant's label may hold ", "
            raise ResultsError(f"'{name}' is not a column; known: {quoted}", param="columns")
        if name in columns[:i]:
            raise ResultsError(f"'{name}' is given twice", param="columns")
    return [c for c in columns if c in CHARACTERISTICS], [c for c in columns if c not in CHARACTERISTICS]


def _rejoined(pieces, known):
    """``--columns`` split at every comma, with the pieces of a name that holds ``, `` (a
    contestant ``knn k=1, weights=uniform``) joined again: at each piece, the longest run
    of pieces that joins into a known name, else the piece alone."""
    out, i = [], 0
    while i < len(pieces):
        j = next((j for j in range(len(pieces), i + 1, -1) if ", ".join(pieces[i:j]) in known), i + 1)
        out.append(", ".join(pieces[i:j]))
        i = j
    return out


def fixed_text(value, digits):
    return "–" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def count_text(value):
    return "–" if value is None or math.isnan(value) else f"{int(value)}"


def body_cells(table, digits, pm, bold, marks, columns=None):
    """Body rows as lists of strings, the cells formatted by ``bold`` and ``marks``
    (``(worse, better)``); ``pm`` None: the means alone."""
    chars, contestants = shown_columns(table, columns)
    rows = []
    for d in table.mean.index:
        row = [str(d), *(count_text(table.datasets.loc[d, c]) for c in chars)]
        for c in contestants:
            mean, std = table.mean.loc[d, c], table.std.loc[d, c]
            text = fixed_text(mean, digits)
            text += "" if pm is None or math.isnan(std) else f"{pm}{fixed_text(std, digits)}"
            text = bold(text) if table.best.loc[d, c] else text
            row.append(
                text + (marks[0] if table.worse.loc[d, c] else marks[1] if table.better.loc[d, c] else "")
            )
        rows.append(row)
    return rows


def default_digits(table, score=4):
    """Decimals of the means: ``score`` for a score; for a time, enough to show the
    smallest mean with two significant digits (2 to 6)."""
    if table.metric not in TIMINGS:
        return score
    values = table.mean.to_numpy(dtype=np.float64)
    positive = values[np.isfinite(values) & (values > 0)]
    if not positive.size:
        return score
    return int(min(6, max(2, math.ceil(-math.log10(positive.min())) + 1)))
