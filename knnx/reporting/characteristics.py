"""OUT/datasets.csv: the characteristics of a run's datasets, which the comparison
table prints beside each dataset (n, d, classes) and the report lists (nominal
attributes, missing values too). Written at the start of a run from the loaded
datasets (:func:`dataset_row`), read by ``knnx compare`` and ``knnx report``
(:func:`read_datasets`)."""

from pathlib import Path

import numpy as np
import pandas as pd

from knnx.errors import ResultsError
from knnx.results import read_table

# Rows, attributes (before encoding; empty for a precomputed distance matrix), classes,
# nominal attributes and missing values.
DATASET_COLUMNS = ["dataset", "n", "d", "classes", "nominal", "missing"]
# After them: the columns of the encoded matrix (one-hot indicators each a column), where
# d counts attributes; absent from the datasets.csv of an older knnx.
ENCODED_COLUMN = "columns"
# After them, where some contestants read another view of a dataset (knnx.spec.views):
# what each saw of its nominal attributes (``knn_hvdm: nominal codes; rf: one-hot``).
VIEWS_COLUMN = "views"


def dataset_row(label, ds):
    """The :data:`DATASET_COLUMNS` of a loaded dataset ``ds`` (knnx.datasets.Dataset)."""
    if ds.attributes:
        d, nominal = len(ds.attributes), sum(a.kind == "nominal" for a in ds.attributes)
    else:  # a loader's: its own columns, before knnx's one-hot encoding of its codes
        meta = ds.metadata if isinstance(ds.metadata, dict) else {}
        d = meta.get("n_attributes", ds.n_features)
        nominal = len(meta.get("nominal_attributes", ds.nominal))
    values = ds.values if ds.values is not None else ds.X
    return {
        "dataset": label,
        "n": ds.n_samples,
        "d": "" if ds.precomputed else d,
        "classes": ds.n_classes,
        "nominal": nominal,
        "missing": int(np.isnan(values).sum()),
        ENCODED_COLUMN: encoded_columns(ds),
    }


def encoded_columns(ds):
    """The columns of ``ds`` with each nominal attribute as one-hot indicators (what a
    contestant reading one-hot sees, whichever view the dataset holds): one per
    category of a nominal column of codes (its declared categories, else codes 0 ..
    max), one per other column; empty for a precomputed distance matrix."""
    if ds.precomputed:
        return ""
    categories = {a.name: len(a.categories) for a in ds.attributes if a.kind == "nominal"}
    width = ds.n_features - len(ds.nominal)
    for j in ds.nominal:
        known = categories.get(ds.feature_names[j])
        if known:
            width += known
            continue
        present = ds.X[:, j][~np.isnan(ds.X[:, j])]
        width += int(present.max()) + 1 if present.size else 0
    return width


def read_datasets(path, frame=None):
    """The characteristics of a run's datasets (:data:`DATASET_COLUMNS`, indexed by
    dataset, numbers as floats, NaN where unknown) from ``path`` (a datasets.csv); None
    when there is no such file. Without one, ``frame`` (results) gives n alone, as
    n_train + n_test of a dataset's first fold (a protocol that tests every row once:
    k-fold, holdout)."""
    path = Path(path)
    if path.is_file():
        table = read_table(path, path, DATASET_COLUMNS, "datasets")
        _check_table(table, path)
        out = table.set_index("dataset")[DATASET_COLUMNS[1:]]
        out = out.apply(lambda col: pd.to_numeric(col.replace("", np.nan), errors="coerce"))
        if ENCODED_COLUMN in table.columns:
            out[ENCODED_COLUMN] = pd.to_numeric(
                table[ENCODED_COLUMN].replace("", np.nan), errors="coerce"
            ).to_numpy()
        if VIEWS_COLUMN in table.columns:
            out[VIEWS_COLUMN] = table[VIEWS_COLUMN].to_numpy()
        return out
    if frame is None or frame.empty:
        return None
    first = frame.drop_duplicates("dataset").set_index("dataset")
    out = pd.DataFrame(index=first.index, columns=DATASET_COLUMNS[1:], dtype=np.float64)
    out["n"] = (first["n_train"] + first["n_test"]).astype(np.float64)
    return out


def _check_table(table, path):
    """ResultsError, one line naming the line and column, for a datasets.csv that knnx
    did not write so: a dataset given twice, a count that is not an integer >= 0 (an
    empty cell: not known)."""
    names = table["dataset"].tolist()
    seen = {}
    for i, name in enumerate(names):
        if name in seen:
            raise ResultsError(f"{path}: line {i + 2} repeats the dataset '{name}' of line {seen[name] + 2}")
        seen[name] = i
    for column in DATASET_COLUMNS[1:]:
        for i, text in enumerate(table[column].tolist()):
            if text != "" and not (text.isascii() and text.isdigit()):
                raise ResultsError(
                    f"{path}: column '{column}' line {i + 2}: '{text[:40]}' is not an integer >= 0"
                )
