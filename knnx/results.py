"""Tidy result files: one row per (cell, metric), written cell by cell.

Schema (fixed column order)::

    experiment, dataset, algorithm, params, protocol, repeat, fold, seed,
    metric, value, n_train, n_test, fit_seconds, predict_seconds

``params`` and ``protocol`` are canonical JSON (sorted keys). ``seed`` is the
spec's seed. A cell is identified by (dataset, algorithm, params, repeat, fold).

Crash safety: each finished cell is appended with a single write, flushed and
fsync'ed. On resume, a trailing partial line and the rows of any cell missing some
of its metrics are discarded (the file is rewritten atomically: a temporary file
then ``os.replace``), so an interrupted run loses at most the cell in flight.
"""

import csv
import io
import os
from pathlib import Path

import pandas as pd

from knnx.errors import ResultsError

COLUMNS = [
    "experiment",
    "dataset",
    "algorithm",
    "params",
    "protocol",
    "repeat",
    "fold",
    "seed",
    "metric",
    "value",
    "n_train",
    "n_test",
    "fit_seconds",
    "predict_seconds",
]
CELL_COLUMNS = ["dataset", "algorithm", "params", "repeat", "fold"]


def rows_to_csv(rows, header=False):
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    if header:
        writer.writeheader()
    for row in rows:
        writer.writerow({c: _fmt(row[c]) for c in COLUMNS})
    return buf.getvalue()


def _fmt(value):
    if isinstance(value, float):
        return repr(value)  # shortest repr that round-trips exactly
    return value


def atomic_write_text(path, text):
    """Write ``text`` to ``path`` via a temporary file and ``os.replace``."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "w", encoding="utf-8", newline="") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


class ResultsWriter:
    """Appends finished cells to a results file; see the module docstring."""

    def __init__(self, path):
        self.path = Path(path)
        if not self.path.exists():
            atomic_write_text(self.path, rows_to_csv([], header=True))

    def append(self, rows):
        """Append one cell's rows with a single write() on an O_APPEND descriptor.

        A killed process cannot interrupt one write() to a regular file part-way,
        so the file holds whole cells only; ``recover`` still handles a machine
        crash (a torn last line) on the next run.
        """
        data = rows_to_csv(rows).encode("utf-8")
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        try:
            written = os.write(fd, data)
            while written < len(data):  # only on a full disk or similar
                written += os.write(fd, data[written:])
            os.fsync(fd)
        finally:
            os.close(fd)


_TEXT = {c: str for c in ("experiment", "dataset", "algorithm", "params", "protocol", "metric")}


def _parse(source, path):
    """Parse results CSV text or a file; names such as "NA" or "null" stay text."""
    try:
        frame = pd.read_csv(source, dtype=_TEXT, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError, UnicodeDecodeError) as exc:
        raise ResultsError(f"{path}: not a readable knnx results file ({str(exc).splitlines()[0]})") from None
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise ResultsError(f"{path}: not a knnx results file (missing columns: {', '.join(missing)})")
    return frame


def read_results(path):
    """Read a results file as a DataFrame (text columns kept as text)."""
    return _parse(path, path)


def recover(path, metrics):
    """Keep only complete cells of an existing results file; return their keys.

    A cell is complete when it has one row for every metric in ``metrics``; its other
    rows (quantities reported by the estimator) are kept with it.
    """
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    if text and not text.endswith("\n"):
        text = text[: text.rfind("\n") + 1]  # drop a partial last line
    if not text.strip():
        atomic_write_text(path, rows_to_csv([], header=True))
        return set()
    frame = _parse(io.StringIO(text), path)
    frame = frame.drop_duplicates(subset=CELL_COLUMNS + ["metric"], keep="last")
    scored = frame[frame["metric"].isin(metrics)]
    counts = scored.groupby(CELL_COLUMNS, sort=False)["metric"].transform("size")
    complete = scored[counts == len(metrics)][CELL_COLUMNS].drop_duplicates()
    # Keep every row of a complete cell, reported extras (e.g. chosen_k) included.
    frame = frame.merge(complete, on=CELL_COLUMNS, how="inner")
    atomic_write_text(path, rows_to_csv(frame[COLUMNS].to_dict("records"), header=True))
    return {(r.dataset, r.algorithm, r.params, int(r.repeat), int(r.fold)) for r in complete.itertuples()}
