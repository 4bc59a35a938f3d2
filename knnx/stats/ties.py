"""The one tie rule of knnx's comparisons: two values are equal when they differ by
rounding only.

Two means of the same predictions summed in another order differ in their last bits
(``0.04`` and ``0.039999999999999994``); ranking, bolding or counting a win on that
difference is noise. Every place that ranks, marks the best or counts wins, ties and
losses (``knnx table``, ``knnx compare``, the report, the paper tables and their
figures) uses this rule:

    a and b tie when |a − b| <= TIE_RTOL · max(1, |a|, |b|),  TIE_RTOL = 1e-12

(relative to the larger magnitude, absolute below 1: a score in [0, 1] ties within
1e-12). NaN ties nothing. Within a row, values are grouped by :func:`snap`: sorted
in increasing order, each joins the group before it when it ties that group's
smallest value, and every value of a group takes the group's smallest value; ranks, best marks and win counts are then
computed on the snapped values, so a group shares one rank.
"""

import numpy as np

TIE_RTOL = 1e-12


def tie_tolerance(a, b):
    """The largest difference at which ``a`` and ``b`` tie (elementwise)."""
    return TIE_RTOL * np.maximum(1.0, np.maximum(np.abs(a), np.abs(b)))


def ties(a, b):
    """Whether ``a`` and ``b`` tie under the rule of the module docstring (elementwise;
    NaN ties nothing)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return np.abs(a - b) <= tie_tolerance(a, b)


def snap(values, axis=-1):
    """``values`` with every group of tying values (per row along ``axis``) replaced by
    the group's smallest value; NaN stays NaN. A copy, float64.

    Vectorised over rows: each row is sorted (NaN last), then position by position
    each value takes the value before it when the two tie (that value being its
    group's smallest already), for all rows at once; the same comparisons and
    assignments as a row by row loop, so the same bits."""
    values = np.array(values, dtype=np.float64)
    moved = np.moveaxis(values, axis, -1)
    flat = moved.reshape(-1, moved.shape[-1]) if moved.ndim else moved.reshape(1, 1)
    order = np.argsort(flat, axis=1, kind="stable")
    ordered = np.take_along_axis(flat, order, axis=1)
    for j in range(1, ordered.shape[1]):
        join = ties(ordered[:, j - 1], ordered[:, j])
        ordered[join, j] = ordered[join, j - 1]
    np.put_along_axis(flat, order, ordered, axis=1)
    return np.moveaxis(flat.reshape(moved.shape), -1, axis)


def best_mask(values, lower):
    """Boolean mask of the values that tie the best (the lowest if ``lower``, else the
    highest) among the non-NaN ``values`` (one-dimensional)."""
    values = np.asarray(values, dtype=np.float64)
    present = ~np.isnan(values)
    if not present.any():
        return np.zeros(values.shape, dtype=bool)
    target = np.nanmin(values) if lower else np.nanmax(values)
    return present & ties(values, target)


def rank_rows(values, lower, method="average"):
    """Ranks per row of a 2-D array (1 = best: the lowest if ``lower``), tying values
    (:func:`snap`) sharing ranks as ``scipy.stats.rankdata(method=method)`` shares them."""
    from scipy.stats import rankdata

    snapped = snap(values, axis=1)
    return rankdata(snapped if lower else -snapped, axis=1, method=method)
