"""One missing-value policy for every tabular source: a user's CSV (:mod:`knnx.datasets.tabular`)
and the benchmark suites (:mod:`knnx.datasets.suites`).

``missing`` (a dataset entry's option) says what an empty cell becomes:

* ``error`` refuses, naming the first missing value (the caller says where it is:
  a file's column and line, a suite attribute and row);
* ``drop_rows`` removes every row with a missing value, and refuses when none is left;
* ``fill`` writes ``fill_value`` into every missing cell; under ``categorical: keep`` a
  kept nominal column holds category codes, so the value must be a code of each such
  column that has a missing cell;
* ``keep`` leaves NaN, for a metric with a missing-value rule (heom, hvdm, vdm, gower).

``categorical`` says how a nominal attribute is encoded (``onehot``, ``ordinal``,
``keep``: :mod:`knnx.datasets.views`).
"""

import numpy as np

from knnx.errors import DataError

MISSING_CHOICES = ("error", "drop_rows", "fill", "keep")
CATEGORICAL_CHOICES = ("onehot", "ordinal", "keep")


def check_options(name, missing, fill_value, categorical):
    """Refuse an unknown ``missing`` or ``categorical``, and ``fill`` without a value."""
    if missing not in MISSING_CHOICES:
        raise DataError(f"{name}: missing must be one of {', '.join(MISSING_CHOICES)}, got {missing!r}")
    if categorical not in CATEGORICAL_CHOICES:
        raise DataError(
            f"{name}: categorical must be one of {', '.join(CATEGORICAL_CHOICES)}, got {categorical!r}"
        )
    if missing == "fill" and fill_value is None:
        raise DataError(f"{name}: missing: fill needs a numeric fill_value")


def check_fill_codes(where, names, n_codes, missing_cols, fill_value):
    """``fill`` under ``categorical: keep``: refuse a ``fill_value`` that is not a code of
    every kept nominal column with a missing cell (``names[j]``, ``n_codes[j]`` codes, for
    j in ``missing_cols``)."""
    value = float(fill_value)
    for j in missing_cols:
        m = n_codes[j]
        if not (value == int(value) and 0 <= value < m):
            raise DataError(
                f"{where}: missing: fill writes {fill_value!r} into nominal column '{names[j]}', whose "
                f"category codes are 0..{m - 1}; use missing: keep (a metric with a missing-value rule), "
                "drop_rows, or a fill_value that is a code"
            )


def treat(X, nan_rows, missing, fill_value, where, first_missing):
    """``(X, kept rows or None)`` once the rows ``nan_rows`` (a boolean mask) are treated
    as ``missing`` says; ``first_missing()`` is the error's text for ``error`` (where the
    first missing value is). The caller drops the same rows from what goes with X
    (labels, a split, partitions) when a mask is returned."""
    if missing == "keep" or not nan_rows.any():
        return X, None
    if missing == "error":
        raise DataError(f"{first_missing()} (set missing: drop_rows, or missing: fill with a fill_value)")
    if missing == "fill":
        return np.where(np.isnan(X), float(fill_value), X), None
    keep = ~nan_rows
    if not keep.any():
        raise DataError(
            f"{where}: missing: drop_rows removes every row (each has a missing value); fill them "
            "(missing: fill) or remove the emptiest columns"
        )
    return X[keep], keep
