"""Views of one dataset entry: its nominal attributes kept as category codes, or
written as one-hot indicators, on the same rows under the same id.

An entry that does not say ``categorical`` (a suite, bundled, CSV or ``loader:``
entry) lets each contestant of a run see the view it takes
(:func:`knnx.spec.views.wanted_view`): the runner loads the entry again with
``categorical`` set to that view (:func:`view_entry`), and the rows, classes, split
and partitions are the entry's whatever the view (the missing-value rule is the
entry's: rows dropped for a missing value are dropped in both). An entry that says
``categorical`` has that one view for every contestant.

The one-hot view of a suite, bundled or CSV entry is the loader's ``categorical:
onehot``, from the categories the source declares (its indicators are today's
default encoding, bit for bit). A ``loader:`` entry's Dataset types its nominal
columns itself (``nominal``: codes 0, 1, ...); its one-hot view
(:func:`onehot_of_codes`) writes one indicator per code from 0 to the largest code of
the column, in place, a missing value as NaN in each indicator of its attribute (at
most 65,536 a column: a column of raw ids is refused, :func:`check_onehot_width`).
"""

import numpy as np

import knnx.datasets.missing as missing_values
from knnx.datasets.tabular import check_onehot_width
from knnx.errors import DataError

VIEWS = ("keep", "onehot")

# A loader's Dataset types its nominal columns itself: kept as codes (default), one-hot
# indicators, or read as numbers (ordinal); its missing values are refused unless
# ``missing`` says how to treat them.
LOADER_CATEGORICAL = ("keep", "onehot", "ordinal")
LOADER_MISSING = ("error", "drop_rows", "fill", "keep")

# The entry forms whose loader writes either view (registered names pass their
# options to the user's function, synthetic data have no nominal attributes).
_FORMS_WITH_VIEWS = ("csv", "loader")


def default_view(entry):
    """The view an entry gives when it does not say ``categorical``: ``keep`` for a
    ``loader:`` entry (its Dataset's own types), ``onehot`` for the others."""
    return "keep" if isinstance(entry, dict) and "loader" in entry else "onehot"


def view_entry(entry, view):
    """``entry`` with its nominal attributes as ``view`` says (``keep`` or ``onehot``),
    or None where the entry fixes its encoding (it says ``categorical``) or its form
    has no views (synthetic data, a name a loader function was registered under)."""
    from knnx.datasets.bundled import BUNDLED
    from knnx.datasets.suites import is_suite_dataset

    if view not in VIEWS:
        raise ValueError(f"view must be one of {VIEWS}, got {view!r}")
    if isinstance(entry, str):
        entry = {"name": entry}
    if not isinstance(entry, dict) or "categorical" in entry:
        return None
    named = isinstance(entry.get("name"), str) and (
        entry["name"] in BUNDLED or is_suite_dataset(entry["name"])
    )
    if not (named or any(form in entry for form in _FORMS_WITH_VIEWS)):
        return None
    return {**entry, "categorical": view}


def onehot_of_codes(ds):
    """A Dataset whose ``nominal`` columns hold category codes, with each such column
    replaced in place by one indicator per code ``0 .. max`` (named ``name=code``);
    a missing value (NaN) is NaN in each indicator of its column. Other columns, the
    rows and everything else are kept."""
    from dataclasses import replace

    if not ds.nominal:
        return ds
    blocks, names = [], []
    for j, name in enumerate(ds.feature_names):
        col = ds.X[:, j]
        if j not in ds.nominal:
            blocks.append(col[:, None])
            names.append(name)
            continue
        present = col[~np.isnan(col)]
        m = int(present.max()) + 1 if present.size else 0
        check_onehot_width(len(col), m, f"{ds.name}: nominal column '{name}' (codes 0..{m - 1})")
        block = (col[:, None] == np.arange(m)[None, :]).astype(np.float64)
        block[np.isnan(col)] = np.nan
        blocks.append(block)
        names += [f"{name}={c}" for c in range(m)]
    X = np.ascontiguousarray(np.hstack(blocks))
    attributes = ds.metadata.get("n_attributes", ds.n_features)  # before encoding, for datasets.csv's d
    return replace(
        ds, X=X, feature_names=tuple(names), nominal=(), metadata={**ds.metadata, "n_attributes": attributes}
    )


def treat_missing(ds, missing, fill_value, where):
    """A loader's Dataset with its missing values (NaN) treated as ``missing`` says:
    ``error`` (one line naming the first), ``drop_rows`` (rows with any removed, the
    split's and partitions' indices renumbered), ``fill`` (``fill_value`` written, a
    nominal column's value a code of it), ``keep`` (left NaN). Returns
    ``(dataset, rows dropped)``."""
    from dataclasses import replace

    missing_at = np.isnan(ds.X)

    def first_missing():
        row, col = np.argwhere(missing_at)[0]
        return f"{where}: column '{ds.feature_names[col]}' row {row + 1} is missing"

    if missing == "fill" and ds.nominal:
        holes = [j for j in ds.nominal if missing_at[:, j].any()]
        n_codes = {j: int(np.nanmax(ds.X[:, j], initial=0)) + 1 for j in ds.nominal}  # the codes seen
        missing_values.check_fill_codes(where, ds.feature_names, n_codes, holes, fill_value)
    X, keep = missing_values.treat(ds.X, missing_at.any(axis=1), missing, fill_value, where, first_missing)
    if keep is None:
        return (ds if X is ds.X else replace(ds, X=X)), 0
    renumber = np.cumsum(keep) - 1
    split = None
    if ds.split is not None:
        split = tuple(renumber[part[keep[part]]] for part in ds.split)
    out = replace(
        ds,
        X=np.ascontiguousarray(X),
        y=ds.y[keep],
        split=split,
        partitions={s: f[keep] for s, f in ds.partitions.items()},
    )
    return out, int((~keep).sum())


def check_loader_treatments(entry):
    """A loader entry's ``categorical``, ``missing`` and ``fill_value``: DataError naming
    the key."""
    for key, choices in (("categorical", LOADER_CATEGORICAL), ("missing", LOADER_MISSING)):
        if key in entry and entry[key] not in choices:
            raise DataError(f"{key}: expected one of {', '.join(choices)}, got {entry[key]!r}")
    if "fill_value" in entry and not finite_number(entry["fill_value"]):
        raise DataError(f"fill_value: expected a finite number, got {entry['fill_value']!r}")
    if entry.get("missing") == "fill" and "fill_value" not in entry:
        raise DataError("missing: fill needs a numeric fill_value")


def treat_loaders(ds, entry, where):
    """A loader's Dataset with the entry's ``missing`` and ``categorical`` applied
    (:mod:`knnx.datasets.views`); recorded in its metadata's ``options``."""
    from dataclasses import replace

    from knnx.datasets.checks import check_dataset

    if "missing" not in entry and "categorical" not in entry:
        return ds  # as the loader gave it, checked by as_dataset
    missing, categorical = entry.get("missing", "error"), entry.get("categorical", "keep")
    ds, dropped = treat_missing(ds, missing, entry.get("fill_value"), where)
    typed = [ds.feature_names[j] for j in ds.nominal]
    if categorical == "onehot":
        ds = onehot_of_codes(ds)
    elif categorical == "ordinal":
        ds = replace(ds, nominal=())
    options = {"categorical": categorical, "missing": missing, "rows_dropped": dropped}
    if "fill_value" in entry:
        options["fill_value"] = entry["fill_value"]
    ds = replace(ds, metadata={**ds.metadata, "options": options, "nominal_attributes": typed})
    return check_dataset(ds, where, missing_ok=missing == "keep")


def finite_number(value):
    """A finite int or float (an int as large as float64 can hold: 2^64 and beyond are
    fine, 10^400 is not)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return bool(np.isfinite(float(value)))
    except OverflowError:
        return False
