"""Reading CSV tables (bundled or the user's) into Datasets.

The file must be UTF-8 (a byte-order mark is ignored), comma-separated with
standard double quotes, with a header row naming every column once; blank lines
are skipped. Every problem is one DataError naming the file, and the column and
line (line 1 is the header) where there is one: a file that is missing, empty,
header-only, not UTF-8 or not CSV; a row with more or fewer fields than the
header; a header with an empty or repeated name (an unnamed first column is often
a saved row index); no label column, or nothing besides it; a text cell in a
numeric column; a missing-value marker (``nan``, ``NaN``, ``NA``, ``N/A``,
``null``, ``None``, ``?``) in a numeric column, since only an empty cell is a
missing value; an infinite value (``inf``, ``-inf``, ``1e400``); an empty label
cell, a blank one, or a label spelled ``nan`` (the missing-label rule of every source,
:func:`knnx.datasets._base.label_problem`); a label column holding a single class.

Accepted as they are: duplicate rows (kept: they count as separate points, at
distance 0 from each other), zero-variance (constant) columns (kept: they add 0 to
every distance, and ``preprocess: {standardize: true}`` leaves them unscaled,
scale 1, so values stay finite), surrounding spaces in numeric cells, Windows
line ends. Label cells are class names taken verbatim (``NA`` is a class name;
``x`` and `` x`` are two classes), except that two spellings of one number (``1``,
``01``, ``1.0``) are refused; classes are ordered numbers first, in numeric order,
then text (:func:`knnx.datasets.encode_labels`). Very large finite values load; the
kernels refuse data whose squared distances would overflow (README, *Semantics*).

Treatments, applied in this order and recorded in ``metadata["options"]``:

* ``drop_columns``: columns removed before anything else.
* ``categorical``: columns holding text are categorical. ``onehot`` (default) writes
  one 0/1 column per category, categories in sorted order, named ``col=value``;
  ``ordinal`` writes the sorted category's code 0..m-1. One-hot columns replace the
  original column in place. Categories come from the whole file; no label is used,
  so this is not fitted on the test part. ``keep`` writes the codes as ``ordinal``
  does and types the data: each nominal attribute is one column of category codes,
  listed in ``Dataset.nominal`` (its index in X) and ``Dataset.attributes`` (with its
  categories), for a metric that takes nominal attributes (heom, hvdm, gower, vdm,
  hamming: :mod:`knnx.neighbors.metrics`). Columns a loader declares nominal
  (``nominal``: the bundled datasets whose nominal attributes are stored as numbers)
  are nominal under ``keep`` only, their categories as declared (or their values'
  sorted); under ``onehot`` and ``ordinal`` they stay the numbers they are.
* ``missing``: empty cells. ``error`` (default for user CSVs) refuses, naming the
  first column and line; ``drop_rows`` removes rows with any missing feature (a
  predefined split is re-indexed accordingly); ``fill`` writes ``fill_value`` (into a
  kept nominal column only if it is one of its codes); ``keep`` leaves them NaN, for
  a metric with a missing-value rule (heom, hvdm, vdm, gower).
"""

import csv
import io
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

import knnx.datasets.missing as missing_values
from knnx._paths import path_problem
from knnx.datasets._base import Attribute, encode_labels, label_problem, make_dataset
from knnx.errors import DataError
from knnx.limits import check_memory

# Spellings of a missing value that other tools write; knnx reads only empty cells as missing.
MISSING_MARKERS = frozenset({"nan", "na", "n/a", "null", "none", "?"})


# The most one-hot indicators one nominal attribute may have (its categories): a column
# of identifiers or raw ids would otherwise make as many columns as rows or ids.
MAX_CATEGORIES = 2**16
# A text cell that starts with a number ('94kg', '1,5', '12 %'): a number with its unit.
_NUMBER_FIRST = re.compile(r"\s*[-+]?(\d|[.,]\d)")


def check_onehot_width(n_rows, width, what):
    """DataError when ``what`` (one nominal attribute, ``width`` categories) would be
    more one-hot indicators than :data:`MAX_CATEGORIES` or than memory holds."""
    if width > MAX_CATEGORIES:
        raise DataError(
            f"{what} would be {width:,} one-hot indicators; a nominal attribute has at most {MAX_CATEGORIES:,} "
            "categories"
        )
    check_memory(8 * n_rows * width, f"{what}: {n_rows:,} rows x {width:,} one-hot indicators")


def _guessed_text_problem(text, at, col):
    """Why a text column of a CSV that does not say ``categorical`` is not read as a
    nominal attribute, or None: every cell starts with a number ('94kg': numbers with
    their units), or every row has a text of its own (an identifier)."""
    cells = text.dropna()
    say = "or say categorical: onehot (or keep) to read them as categories all the same"
    if cells.str.match(_NUMBER_FIRST).all():
        row = int(np.flatnonzero(text.notna().to_numpy())[0])
        return f"{at(row, col)}: {_cell(cells.iloc[0])} is a number written with text; write the column as numbers, {say}"
    if len(cells) >= 20 and cells.nunique() == len(cells):
        return (
            f"{at(0, col).rsplit(' line ', 1)[0]}: each of the column's {len(cells)} texts is different (an identifier?); remove the "
            f"column, {say}"
        )
    return None


def _cell(value, limit=40):
    text = str(value)
    return repr(text if len(text) <= limit else text[:limit] + "...")


def read_table(path, label="label"):
    """Read a CSV file; return (features DataFrame, label Series), both indexed by the
    file's line numbers (the header is line 1). Cells are strings, empty cells NaN.
    Errors name the file, and the line and column where there is one."""
    path = Path(path)
    problem = path_problem(path)
    if problem == "a folder":
        raise DataError(f"{path}: is a folder, not a CSV file")
    if problem is not None:
        raise DataError(f"{path}: {problem}")
    try:
        # Parsed into Python strings first: about 12 bytes of memory per byte of file
        # (measured: a 40 MB file of numbers peaks at 460 MB); 16 is the estimate.
        check_memory(16 * path.stat().st_size, f"{path}: a CSV file of {path.stat().st_size} bytes")
        raw = path.read_bytes()
    except OSError as exc:
        raise DataError(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise DataError(
            f"{path}: line {line}: byte 0x{raw[exc.start]:02x} is not UTF-8 text (save the file as UTF-8)"
        ) from None
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    header, rows, lines = None, [], []
    try:
        for fields in reader:
            if not fields:
                continue  # a blank line
            if header is None:
                header = fields
                _check_header(path, header)
                continue
            if len(fields) != len(header):
                raise DataError(
                    f"{path}: line {reader.line_num}: {len(fields)} fields, while the header has {len(header)}"
                )
            rows.append(fields)
            lines.append(reader.line_num)
    except csv.Error as exc:
        raise DataError(f"{path}: line {reader.line_num}: not readable as CSV ({exc})") from None
    if header is None:
        raise DataError(f"{path}: file is empty (expected a header row and data rows)")
    if label not in header:
        cols = ", ".join(header[:12]) + (", ..." if len(header) > 12 else "")
        raise DataError(f"{path}: no label column '{label}' (columns: {cols})")
    if not rows:
        raise DataError(f"{path}: has a header but no data rows")
    frame = pd.DataFrame(rows, columns=header, index=pd.Index(lines, name="line"), dtype=object)
    frame = frame.where(frame != "", np.nan)
    features = frame.drop(columns=[label])
    if features.shape[1] == 0:
        raise DataError(f"{path}: no feature columns besides the label column '{label}'")
    return features, frame[label]


def _check_header(path, header):
    seen = {}
    for i, name in enumerate(header):
        if not name.strip():
            raise DataError(
                f"{path}: line 1: column {i + 1} has no name (name it, or remove it if it is a saved row index)"
            )
        if name in seen:
            raise DataError(
                f"{path}: line 1: column name '{name}' appears twice (columns {seen[name]} and {i + 1})"
            )
        seen[name] = i + 1


# A number in a CSV cell: decimal digits, an optional sign, point and exponent, spaces
# around (ASCII digits only: Python's float() also reads "1_0", "nan" and non-ASCII digits).
_DECIMAL = re.compile(r"\s*[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\s*")
_INFINITY = re.compile(r"\s*[+-]?inf(?:inity)?\s*", re.IGNORECASE)


def parse_numbers(cells):
    """Floats of the cells (str, or NaN for an empty cell) that are numbers, NaN elsewhere.

    Parsed with Python's float(), correctly rounded, so a file loads to the same bits
    whatever the pandas version (pandas' own parser rounds some 17-digit decimals to a
    neighbouring float before 3.1). ``1e400`` and ``inf`` parse to infinity."""
    out = np.full(len(cells), np.nan)
    for i, cell in enumerate(cells):
        if isinstance(cell, str) and (_DECIMAL.fullmatch(cell) or _INFINITY.fullmatch(cell)):
            out[i] = float(cell)
    return out


def _numeric_or_text(column, at, name, categorical):
    """Return (float array with NaN for missing, is_text). Text needs categorical encoding.

    ``at(row, column)`` gives "FILE: column 'c' line N" for the row-th cell."""
    values = pd.Series(parse_numbers(column.tolist()), index=column.index)
    bad = (column.notna() & values.isna()).to_numpy()
    if bad.any():
        markers = column.str.strip().str.lower().isin(MISSING_MARKERS).to_numpy() & bad
        if markers.any() and (categorical is None or values.notna().any()):
            row = int(np.flatnonzero(markers)[0])
            raise DataError(
                f"{at(row, name)}: {_cell(column.iloc[row])} is not a number; a missing value is an empty cell "
                "(then set missing: drop_rows, or missing: fill with a fill_value)"
            )
    if not bad.any():
        floats = values.to_numpy(dtype=np.float64)
        inf = np.isinf(floats)
        if inf.any():
            row = int(np.flatnonzero(inf)[0])
            raise DataError(
                f"{at(row, name)}: infinite value {_cell(column.iloc[row])} (only finite numbers are allowed)"
            )
        return floats, False
    numeric_cells = values.notna()
    row = int(np.flatnonzero(bad)[0])
    if categorical is not None and numeric_cells.any():
        # Mostly numbers with a stray text cell is a data error, not a categorical column.
        raise DataError(
            f"{at(row, name)}: {_cell(column.iloc[row])} is not a number, while other cells "
            "of the column are (a categorical column holds text only)"
        )
    if categorical is None:
        raise DataError(
            f"{at(row, name)}: {_cell(column.iloc[row])} is not a number "
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
    nominal=None,
    guessed=False,
):
    """Load one CSV, or a (train, test) pair forming a predefined split, as a Dataset.

    Parameters
    ----------
    name : str
    paths : list of path
        One file, or two files (train then test) whose rows are concatenated.
    label : str
        Name of the class column.
    missing : {"error", "drop_rows", "fill", "keep"}
    fill_value : float, required with ``missing="fill"``
    categorical : {"onehot", "ordinal", "keep"}
    drop_columns : sequence of str
    allow_text : bool
        If False, a text column is an error even when ``categorical`` is set.
    nominal : dict, optional
        Columns declared nominal (column name -> its categories as the file writes
        them, in code order, or None for its values sorted); used by ``keep`` only.
    guessed : bool
        The user did not say ``categorical``: a text column is a nominal attribute
        unless it reads as numbers with units or identifiers (then an error).
    """
    missing_values.check_options(name, missing, fill_value, categorical)
    features, labels, sizes, where, at = _read_parts(paths, label)
    for col in drop_columns:
        if col not in features.columns:
            raise DataError(f"{where}: cannot drop unknown column '{col}'")
    features = features.drop(columns=list(drop_columns))
    declared = dict(nominal or {})
    unknown = sorted(set(declared) - set(features.columns))
    if unknown:
        raise DataError(f"{where}: column '{unknown[0]}' is declared nominal but is not in the file")
    _check_labels(labels, label, at)
    X, names, attributes = _encode_features(
        features, at, categorical if allow_text else None, categorical, declared, guessed
    )
    kept = tuple(j for j, a in enumerate(attributes) if a.kind == "nominal")
    split = None
    if len(sizes) == 2:
        split = (np.arange(sizes[0]), np.arange(sizes[0], sizes[0] + sizes[1]))
    treated = _treat_missing(X, labels, split, (attributes, kept), names, missing, fill_value, where, at)
    X, labels, split, n_dropped = treated
    y, classes = encode_labels(labels.to_numpy(dtype=object), where)
    if len(classes) < 2:
        raise DataError(
            f"{where}: column '{label}': every row has class '{classes[0]}'; a classifier needs at least two classes"
        )
    meta = {**(metadata or {}), **_attribute_facts(features.columns, attributes, declared)}
    meta.setdefault("files", [str(p) for p in paths])
    meta["options"] = {
        "missing": missing,
        "fill_value": fill_value,
        "categorical": categorical,
        "drop_columns": list(drop_columns),
        "rows_dropped": n_dropped,
    }
    ds = make_dataset(name, X, y, classes, names, split=split, metadata=meta)
    if categorical == "keep":
        ds = replace(ds, attributes=tuple(attributes), nominal=kept)
    return ds


def _attribute_facts(columns, attributes, declared):
    """The metadata on the file's attributes (its ``columns``, each one attribute, before
    any one-hot encoding: datasets.csv's d): ``n_attributes``, and ``nominal_attributes``,
    those the source types as nominal, whichever way they are written: text columns
    (one-hot encoded: those without an Attribute; or as codes) and the ``declared`` ones
    (kept as codes, or as the file writes them)."""
    described = {a.name: a.kind for a in attributes}
    typed = [c for c in columns if described.get(c, "nominal") == "nominal"]
    return {
        "nominal_attributes": typed + [c for c in declared if c not in typed],
        "n_attributes": len(columns),
    }


def _read_parts(paths, label):
    """``(features, labels, sizes, where, at)``: the files' rows concatenated, the rows per
    file, the files in words, and ``at(row, column)`` naming a cell's file and line."""
    parts = [read_table(p, label) for p in paths]
    columns = list(parts[0][0].columns)
    for p, (feat, _) in zip(paths[1:], parts[1:], strict=True):
        if list(feat.columns) != columns:
            raise DataError(f"{p}: columns differ from {paths[0]}")
    # File and line of every row, for messages.
    row_file = np.concatenate([np.full(len(f), i) for i, (f, _) in enumerate(parts)])
    row_line = np.concatenate([f.index.to_numpy() for f, _ in parts])

    def at(row, col):
        return f"{paths[row_file[row]]}: column '{col}' line {row_line[row]}"

    features = pd.concat([f for f, _ in parts], ignore_index=True)
    labels = pd.concat([lab for _, lab in parts], ignore_index=True)
    where = str(paths[0]) if len(paths) == 1 else f"{paths[0]} + {paths[1]}"
    return features, labels, [len(f) for f, _ in parts], where, at


def _check_labels(labels, label, at):
    """DataError naming the line of the first missing label (an empty cell is NaN here;
    the rule of every source, :func:`knnx.datasets._base.label_problem`)."""
    for row, value in enumerate(labels):
        problem = label_problem(value)
        if problem is not None:
            raise DataError(f"{at(row, label)}: {problem}")


def _encode_features(features, at, text_allowed, categorical, declared=None, guessed=False):
    """``(X, names, attributes)``: numeric columns as they are, text columns one-hot
    (``categorical`` onehot, one column ``name=category`` per category, sorted) or as
    codes (ordinal, keep); ``text_allowed``: the encoding text columns may take, None
    if they are an error. ``attributes``: one Attribute per column of X under ``keep``
    (the columns of ``declared``, name -> categories or None, are nominal then).
    ``guessed``: the entry does not say ``categorical``, so a text column that reads as
    numbers with units or identifiers is an error (:func:`_guessed_text_problem`)."""
    declared = declared or {}
    keep = categorical == "keep"
    numbers, clean = _clean_numeric(features)
    blocks, names, attributes = [], [], []
    for j, col in enumerate(features.columns):
        if keep and col in declared:
            codes, cats = _declared_codes(features[col], declared[col], at, col)
            blocks.append(codes[:, None])
            names.append(col)
            attributes.append(Attribute(col, "nominal", cats))
            continue
        if clean[j]:  # numbers or empty cells only, all finite: nothing to say of it
            blocks.append(numbers[:, j : j + 1])
            names.append(col)
            attributes.append(Attribute(col, "numeric"))
            continue
        values, is_text = _numeric_or_text(features[col], at, col, text_allowed)
        if not is_text:
            blocks.append(values[:, None])
            names.append(col)
            attributes.append(Attribute(col, "numeric"))
            continue
        text = features[col]
        problem = _guessed_text_problem(text, at, col) if guessed else None
        if problem:
            raise DataError(problem)
        cats = sorted(text.dropna().unique())
        if categorical in ("ordinal", "keep"):
            codes = text.map({c: float(i) for i, c in enumerate(cats)}).to_numpy(dtype=np.float64)
            blocks.append(codes[:, None])
            names.append(col)
            attributes.append(Attribute(col, "nominal", tuple(cats)))
        else:
            check_onehot_width(len(text), len(cats), f"{at(0, col)}".rsplit(" line ", 1)[0])
            onehot = np.stack([(text == c).to_numpy(dtype=np.float64) for c in cats], axis=1)
            onehot[text.isna().to_numpy()] = np.nan
            blocks.append(onehot)
            names.extend(f"{col}={c}" for c in cats)
    return np.hstack(blocks), names, attributes


def _clean_numeric(features):
    """``(numbers, clean)``: every cell parsed at once (:func:`parse_numbers`, one pass
    over the table instead of a pandas Series per column: a 100,000-column file took
    minutes), and per column whether each of its cells is an empty one or a finite
    number. The other columns go through :func:`_numeric_or_text`, which says what is
    wrong with them, in column order."""
    n, d = features.shape
    cells = features.to_numpy(dtype=object)
    numbers = parse_numbers(cells.ravel().tolist()).reshape(n, d)
    present = ~pd.isna(cells)
    clean = ~(present & ~np.isfinite(numbers)).any(axis=0)
    return numbers, clean


def _declared_codes(column, categories, at, name):
    """``(codes, categories)`` of a column declared nominal: each cell's position among
    ``categories`` (the values as the file writes them; a number matches a category of
    equal value, so ``1.0`` is ``1``), or, for None, among its values sorted (numbers in
    numeric order, else text order). NaN for an empty cell; DataError naming the
    first cell that is not a category."""
    present = column.notna().to_numpy()
    cells = column.tolist()
    numbers = parse_numbers(cells)
    numeric = bool(np.isfinite(numbers[present]).all())
    if categories is None:
        if numeric:
            values = sorted(set(numbers[present].tolist()))
            categories = tuple(_number_text(v) for v in values)
        else:
            categories = tuple(sorted(column.dropna().unique()))
    categories = tuple(str(c) for c in categories)
    if numeric:
        lookup = {}
        for i, c in enumerate(categories):
            value = parse_numbers([c])[0]
            if not np.isnan(value):
                lookup.setdefault(value, i)
        keys = numbers
    else:
        lookup = {c: i for i, c in enumerate(categories)}
        keys = cells
    codes = np.full(len(cells), np.nan)
    for row in np.flatnonzero(present):
        code = lookup.get(keys[row])
        if code is None:
            shown = ", ".join(categories[:12]) + (", ..." if len(categories) > 12 else "")
            raise DataError(
                f"{at(row, name)}: {_cell(cells[row])} is not one of the declared categories of nominal "
                f"column '{name}' ({shown})"
            )
        codes[row] = code
    return codes, categories


def _number_text(value):
    """A category name for a number: ``1`` for 1.0, else its shortest repr."""
    return str(int(value)) if value == int(value) and abs(value) < 2**53 else repr(value)


def _treat_missing(X, labels, split, nominal, names, missing, fill_value, where, at):
    """``(X, labels, split, rows dropped)`` once missing values are treated
    (:func:`knnx.datasets.missing.treat`; the split's indices renumbered). ``nominal``:
    (the attributes, the indices of the nominal ones), for ``fill``'s code rule."""
    attributes, kept = nominal
    if missing == "fill" and kept:
        holes = [j for j in kept if np.isnan(X[:, j]).any()]
        n_codes = {j: len(attributes[j].categories) for j in kept}
        missing_values.check_fill_codes(where, [a.name for a in attributes], n_codes, holes, fill_value)
    nan_rows = np.isnan(X).any(axis=1)

    def first_missing():
        row, col = np.argwhere(np.isnan(X))[0]
        return f"{at(row, names[col].split('=')[0])}: missing value"

    X, keep = missing_values.treat(X, nan_rows, missing, fill_value, where, first_missing)
    if keep is None:
        return X, labels, split, 0
    if split is not None and not all(keep[s].any() for s in split):
        part = "training" if not keep[split[0]].any() else "test"
        raise DataError(
            f"{where}: missing: drop_rows removes every row of the {part} file (each has a missing value)"
        )
    new_index = np.cumsum(keep) - 1
    if split is not None:
        split = tuple(new_index[s[keep[s]]] for s in split)
    return X, labels[keep], split, int(nan_rows.sum())


def load_csv(path, label="label", *, name=None, missing="error", fill_value=None, categorical=None):
    """Load a user's CSV file as a Dataset (no predefined split).

    A feature column of text only is a nominal attribute: one-hot indicators
    (``categorical`` None or ``onehot``: what a spec entry that does not say
    ``categorical`` gives, each contestant of a run then reading the view it takes,
    :mod:`knnx.datasets.views`), codes as numbers (``ordinal``) or codes typed as nominal
    (``keep``: one column of codes per text column, recorded in ``Dataset.nominal``). A
    column of numbers with a text cell is an error, and so, when ``categorical`` is not
    given, is a text column whose every cell starts with a number ('94kg') or whose
    every row (20 or more) has a text of its own (an identifier). Missing values are an
    error unless ``missing`` says otherwise (``keep``: NaN).
    """
    path = Path(path)
    return table_to_dataset(
        name or path.stem,
        [path],
        label=label,
        missing=missing,
        fill_value=fill_value,
        categorical=categorical or "onehot",
        guessed=categorical is None,
        metadata={"source": f"user CSV {path}", "citation": "", "notes": ""},
    )
