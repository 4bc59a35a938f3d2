"""Reading CSV tables (bundled or the user's) into Datasets.

Treatments, applied in this order and recorded in ``metadata["options"]``:

* ``drop_columns``: columns removed before anything else (e.g. australian's
  corrupted A2, A3, A7 with ``corrupted: drop``).
* ``categorical``: columns holding text are categorical. ``onehot`` (default) writes
  one 0/1 column per category, categories in sorted order, named ``col=value``;
  ``ordinal`` writes the sorted category's code 0..m-1. One-hot columns replace the
  original column in place. Categories come from the whole file; no label is used,
  so this is not fitted on the test part.
* ``missing``: empty cells. ``error`` (default for user CSVs) refuses, naming the
  first column and line; ``drop_rows`` removes rows with any missing feature (a
  predefined split is re-indexed accordingly); ``fill`` writes ``fill_value``.
"""

from pathlib import Path

import numpy as np
import pandas as pd

from knnx.datasets._base import encode_labels, make_dataset
from knnx.errors import DataError

MISSING_CHOICES = ("error", "drop_rows", "fill")
CATEGORICAL_CHOICES = ("onehot", "ordinal")


def read_table(path, label="label"):
    """Read a CSV file; return (features DataFrame, label Series). Errors name the file."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: file not found")
    try:
        frame = pd.read_csv(path, keep_default_na=False, na_values=[""], dtype=str)
    except pd.errors.EmptyDataError:
        raise DataError(f"{path}: file is empty (expected a header row and data rows)") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        first = str(exc).strip().splitlines()[0]
        raise DataError(f"{path}: not a readable CSV file ({first})") from None
    if label not in frame.columns:
        cols = ", ".join(map(str, frame.columns[:12])) + (", ..." if frame.shape[1] > 12 else "")
        raise DataError(f"{path}: no label column '{label}' (columns: {cols})")
    if frame.shape[0] == 0:
        raise DataError(f"{path}: has a header but no data rows")
    features = frame.drop(columns=[label])
    if features.shape[1] == 0:
        raise DataError(f"{path}: no feature columns besides the label column '{label}'")
    return features, frame[label]


def _numeric_or_text(column, path, name, categorical):
    """Return (float array with NaN for missing, is_text). Text needs categorical encoding."""
    values = pd.to_numeric(column, errors="coerce")
    bad = column.notna() & values.isna()
    if not bad.any():
        floats = values.to_numpy(dtype=np.float64)
        inf = np.isinf(floats)
        if inf.any():
            line = int(np.flatnonzero(inf)[0]) + 2
            raise DataError(f"{path}: column '{name}' line {line}: infinite value '{column.iloc[line - 2]}'")
        return floats, False
    numeric_cells = values.notna()
    if categorical is not None and numeric_cells.any():
        # Mostly numbers with a stray text cell is a data error, not a categorical column.
        line = int(np.flatnonzero(bad.to_numpy())[0]) + 2
        raise DataError(
            f"{path}: column '{name}' line {line}: '{column.iloc[line - 2]}' is not a number, while other cells "
            "of the column are (a categorical column holds text only)"
        )
    if categorical is None:
        line = int(np.flatnonzero(bad.to_numpy())[0]) + 2
        raise DataError(
            f"{path}: column '{name}' line {line}: '{column.iloc[line - 2]}' is not a number "
            "(set categorical: onehot or ordinal to encode text columns)"
        )
    return None, True


def table_to_dataset(
    name,
    paths,
    *,
    label="label",
    missing="error",
    fill_value=None,
    categorical="onehot",
    drop_columns=(),
    metadata=None,
    allow_text=True,
):
    """Load one CSV, or a (train, test) pair forming a predefined split, as a Dataset.

    Parameters
    ----------
    name : str
    paths : list of path
        One file, or two files (train then test) whose rows are concatenated.
    label : str
        Name of the class column.
    missing : {"error", "drop_rows", "fill"}
    fill_value : float, required with ``missing="fill"``
    categorical : {"onehot", "ordinal"}
    drop_columns : sequence of str
    allow_text : bool
        If False, a text column is an error even when ``categorical`` is set.
    """
    if missing not in MISSING_CHOICES:
        raise DataError(f"{name}: missing must be one of {', '.join(MISSING_CHOICES)}, got '{missing}'")
    if categorical not in CATEGORICAL_CHOICES:
        raise DataError(
            f"{name}: categorical must be one of {', '.join(CATEGORICAL_CHOICES)}, got '{categorical}'"
        )
    if missing == "fill" and fill_value is None:
        raise DataError(f"{name}: missing: fill needs a numeric fill_value")
    parts = [read_table(p, label) for p in paths]
    columns = list(parts[0][0].columns)
    for p, (feat, _) in zip(paths[1:], parts[1:], strict=True):
        if list(feat.columns) != columns:
            raise DataError(f"{p}: columns differ from {paths[0]}")
    features = pd.concat([f for f, _ in parts], ignore_index=True)
    labels = pd.concat([lab for _, lab in parts], ignore_index=True)
    sizes = [len(f) for f, _ in parts]
    where = str(paths[0]) if len(paths) == 1 else f"{paths[0]} + {paths[1]}"
    for col in drop_columns:
        if col not in features.columns:
            raise DataError(f"{where}: cannot drop unknown column '{col}'")
    features = features.drop(columns=list(drop_columns))

    blocks, names = [], []
    for col in features.columns:
        values, is_text = _numeric_or_text(features[col], where, col, categorical if allow_text else None)
        if not is_text:
            blocks.append(values[:, None])
            names.append(col)
            continue
        text = features[col]
        cats = sorted(text.dropna().unique())
        if categorical == "ordinal":
            codes = text.map({c: float(i) for i, c in enumerate(cats)}).to_numpy(dtype=np.float64)
            blocks.append(codes[:, None])
            names.append(col)
        else:
            onehot = np.stack([(text == c).to_numpy(dtype=np.float64) for c in cats], axis=1)
            onehot[text.isna().to_numpy()] = np.nan
            blocks.append(onehot)
            names.extend(f"{col}={c}" for c in cats)
    X = np.hstack(blocks)

    split = None
    if len(sizes) == 2:
        split = (np.arange(sizes[0]), np.arange(sizes[0], sizes[0] + sizes[1]))
    nan_rows = np.isnan(X).any(axis=1)
    n_dropped = 0
    if nan_rows.any():
        if missing == "error":
            row, col = np.argwhere(np.isnan(X))[0]
            raise DataError(
                f"{where}: column '{names[col].split('=')[0]}' line {row + 2}: missing value "
                "(set missing: drop_rows, or missing: fill with a fill_value)"
            )
        if missing == "fill":
            X = np.where(np.isnan(X), float(fill_value), X)
        else:
            keep = ~nan_rows
            n_dropped = int(nan_rows.sum())
            new_index = np.cumsum(keep) - 1
            if split is not None:
                split = tuple(new_index[s[keep[s]]] for s in split)
            X, labels = X[keep], labels[keep]
    y, classes = encode_labels(labels.to_numpy(dtype=object), where)
    meta = dict(metadata or {})
    meta.setdefault("files", [str(p) for p in paths])
    meta["options"] = {
        "missing": missing,
        "fill_value": fill_value,
        "categorical": categorical,
        "drop_columns": list(drop_columns),
        "rows_dropped": n_dropped,
    }
    return make_dataset(name, X, y, classes, names, split=split, metadata=meta)


def load_csv(path, label="label", *, name=None, missing="error", fill_value=None, categorical=None):
    """Load a user's CSV file as a Dataset (no predefined split).

    Text feature columns are an error unless ``categorical`` is ``onehot`` or
    ``ordinal``; missing values are an error unless ``missing`` says otherwise.
    """
    path = Path(path)
    return table_to_dataset(
        name or path.stem,
        [path],
        label=label,
        missing=missing,
        fill_value=fill_value,
        categorical=categorical or "onehot",
        allow_text=categorical is not None,
        metadata={"source": f"user CSV {path}", "citation": "", "notes": ""},
    )
