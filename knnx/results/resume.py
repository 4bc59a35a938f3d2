"""Resuming after an interruption (see :mod:`knnx.results`'s crash safety): the rows of
the cells complete in the ledger are kept, a partial last line and the rows of
unfinished cells are dropped, and the file is rewritten atomically."""

import io
from pathlib import Path

import numpy as np

from knnx.results.read import parse_results, read_table, read_text
from knnx.results.schema import (
    CELL_COLUMNS,
    COLUMNS,
    CURVE_COLUMNS,
    PARAM_PREFIX,
    ROUND,
    CellId,
    with_param_columns,
)
from knnx.results.write import rows_to_csv
from knnx.writing import (
    atomic_write_text,
)


def _whole_lines(path, columns):
    """The text of the file ``path`` without a partial last line, or None when nothing is
    left (the file then rewritten as a header of ``columns`` alone)."""
    text = read_text(path, "results file")
    if text and not text.endswith("\n"):
        text = text[: text.rfind("\n") + 1]  # drop a partial last line
    if not text.strip():
        atomic_write_text(path, rows_to_csv([], header=True, columns=columns))
        return None
    return text


def recover(path, metrics, allowed=None, columns=COLUMNS, rounds=None):
    """Keep only complete cells of an existing results file; return their keys.

    A cell is complete when it has one row for every metric in ``metrics`` (with
    ``rounds``, an active run's file: for every metric at each round 0..``rounds``); its
    other rows (quantities reported by the estimator) are kept with it. With ``allowed``
    (a set of cells), the rows of every other cell are dropped too (e.g. cells whose
    cached result no longer matches the spec, the code or the data). The file is
    rewritten with ``columns`` (the run's parameter columns, derived from ``params``).
    Of rows that repeat a cell's metric (which the runner never writes) the last is
    kept; what else :func:`read_results` refuses, this refuses too.
    """
    path = Path(path)
    text = _whole_lines(path, columns)
    if text is None:
        return set()
    frame = parse_results(io.StringIO(text), path, repeats=False)
    unit = CELL_COLUMNS + ([ROUND] if rounds is not None else [])
    if rounds is not None and ROUND not in frame.columns:
        frame = frame.iloc[:0].assign(**{ROUND: []})  # not an active run's rows: none kept
    frame = frame[COLUMNS + unit[len(CELL_COLUMNS) :]]
    frame = frame.drop_duplicates(subset=unit + ["metric"], keep="last")
    if allowed is not None:
        cells = list(
            zip(
                frame["dataset"],
                frame["algorithm"],
                frame["params"],
                frame["repeat"].astype(int),
                frame["fold"].astype(int),
                strict=True,
            )
        )
        frame = frame[
            np.array([c in allowed for c in cells], dtype=bool)
        ]  # a list of none would pick no column
    scored = frame[frame["metric"].isin(metrics)]
    per_cell = len(metrics)
    if rounds is not None:  # every metric at each round 0..rounds
        scored = scored[(scored[ROUND] >= 0) & (scored[ROUND] <= rounds)]
        per_cell *= rounds + 1
    counts = scored.groupby(CELL_COLUMNS, sort=False)["metric"].transform("size")
    complete = scored[counts == per_cell][CELL_COLUMNS].drop_duplicates()
    # Keep every row of a complete cell, reported extras (e.g. chosen_k) included.
    frame = frame.merge(complete, on=CELL_COLUMNS, how="inner")
    names = [c.removeprefix(PARAM_PREFIX) for c in columns if c.startswith(PARAM_PREFIX)]
    rows = with_param_columns(frame[COLUMNS + unit[len(CELL_COLUMNS) :]].to_dict("records"), names)
    atomic_write_text(path, rows_to_csv(rows, header=True, columns=columns))
    return set(CellId.of_frame(complete))


def recover_curves(path, complete, columns=CURVE_COLUMNS, what="curves"):
    """Keep only the rows of cells in ``complete`` (keys as returned by :func:`recover`:
    dataset, algorithm, params, repeat, fold) of a curves file (or, with ``columns`` and
    ``what``, of another per-cell file such as warnings.csv); rewrite atomically."""
    path = Path(path)
    text = _whole_lines(path, columns)
    if text is None:
        return
    frame = read_table(io.StringIO(text), path, columns, what)
    keep = [cell in complete for cell in CellId.of_frame(frame)]
    frame = frame[np.asarray(keep, dtype=bool)]
    atomic_write_text(path, rows_to_csv(frame[columns].to_dict("records"), header=True, columns=columns))
