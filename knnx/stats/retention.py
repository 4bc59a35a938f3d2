"""Retention: the share of its training rows a contestant's classifier is fitted on,
cell by cell, read from a results frame.

A cell's retention is its ``retained`` row (a selection or sampler before the
classifier: rows fitted on over training rows), else its ``prototype_fraction`` (UNN,
GNNB, ``knn_sample``: the share of training rows kept as prototypes), else 1 (it fits
on every training row). Used by the accuracy-against-reduction figures
(:mod:`knnx.reporting.retention`) and by comparisons within a band of retention
(:func:`knnx.stats.compare.compare`'s ``retention``).
"""

import numpy as np
import pandas as pd

# What a cell's retention is read from, in order.
RETENTION_ROWS = ("retained", "prototype_fraction")
# The columns a cell's rows share.
_CELL = ("dataset", "algorithm", "params", "repeat", "fold", "seed")


def row_retention(frame, rows):
    """The retention of the cell of each row of ``rows`` (rows of ``frame``, any
    metric), as a float array in their order."""
    cell = [c for c in _CELL if c in frame.columns]
    keys = rows[cell].reset_index(drop=True)
    retention = pd.Series(np.nan, index=keys.index)
    for name in RETENTION_ROWS:  # the first found wins
        found = frame[frame["metric"] == name][[*cell, "value"]].drop_duplicates(cell)
        retention = retention.fillna(keys.merge(found, on=cell, how="left")["value"])
    return retention.fillna(1.0).to_numpy(dtype=np.float64)


def has_retention(frame):
    """Whether some cell of ``frame`` reduces (has a retention row)."""
    return bool(frame["metric"].isin(RETENTION_ROWS).any())


def retention_rows(frame):
    """``frame`` with its ``retained`` rows replaced by one per cell of every contestant:
    the cell's retention (:func:`row_retention`), on a copy of the cell's row of its first
    metric of knnx (a contestant that reduces nothing has 1, UNN its prototype
    fraction). What a comparison by retention ranks."""
    from knnx.evaluation.metrics import METRICS

    first = next((m for m in dict.fromkeys(frame["metric"]) if m in METRICS), None)
    if first is None:
        return frame
    rows = frame[frame["metric"] == first]
    made = rows.assign(metric="retained", value=row_retention(frame, rows))
    return pd.concat([frame[frame["metric"] != "retained"], made], ignore_index=True)
