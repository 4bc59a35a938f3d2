"""The checks every dataset passes before any cell.

:func:`check_dataset` is the one check of a loaded Dataset, whatever its source (a
CSV file, a bundled or suite dataset, a generator, a loader's ``(X, y)`` or Dataset,
a registered or plugin dataset: :func:`knnx.datasets.load_dataset` calls it on each),
so that what the kernels and protocols index never fails a cell: shapes, finite
values, class codes within ``classes``, class names (the missing-label rule of
:func:`knnx.datasets._base.label_problem`, each once, no number spelled two ways), the
predefined split's and the partitions' row indices, the column types. :func:`as_dataset`
turns a loader's result into the arrays it checks, each wrong type one line."""

import re
from collections.abc import Mapping

import numpy as np

from knnx.datasets._base import SAME_NUMBER, Dataset, encode_labels, label_problem, make_dataset, same_number
from knnx.errors import DataError, KnnxError, describe, exit_guard, user_fault

# A partition scheme's name: its number of folds (``10-fold``), as the protocol reads it.
SCHEME = re.compile(r"[1-9][0-9]*-fold")


def check_dataset(ds, where, *, missing_ok=False):
    """Return ``ds`` once checked; else raise DataError, one line starting with ``where``.

    ``ds`` holds arrays as :func:`knnx.datasets.make_dataset` makes them (X float64,
    y, split and partitions integer arrays). Checked: X 2-D with a row and a column,
    its values finite (NaN, a missing value, only with ``missing_ok``: a CSV, bundled
    or suite dataset loaded with ``missing: keep``); y one code per row, each 0 .. n_classes - 1, two classes
    present at least; ``classes`` 1-D, no name missing (:func:`label_problem`), given
    twice, or a number another name spells another way (``1`` and ``1.0``: the rule of
    a loader's ``y``, :func:`knnx.datasets._base.same_number`); one feature name per
    column; the split's training and test parts each non-empty, their rows rows of X,
    none listed twice nor in both; each partition named ``K-fold`` with one fold 0 .. K-1 per row; the nominal columns
    columns of X holding codes 0, 1, ...; a precomputed X square and >= 0, without
    nominal columns; ``posterior`` a function or None."""
    X = ds.X
    _check_X(X, where, missing_ok)
    _check_classes(ds, where)
    _check_types(ds, where, missing_ok)
    if len(ds.feature_names) != X.shape[1]:
        raise DataError(
            f"{where}: feature_names has {len(ds.feature_names)} name(s) for the {X.shape[1]} columns of X"
        )
    _check_feature_names(ds.feature_names, where)
    if ds.split is not None:
        _check_split(ds.split, X.shape[0], where)
    _check_partitions(ds.partitions, X.shape[0], where)
    if ds.posterior is not None and not callable(ds.posterior):
        raise DataError(
            f"{where}: posterior must be a function of X or None, got {type(ds.posterior).__name__}"
        )
    return ds


def _check_X(X, where, missing_ok=False):
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise DataError(
            f"{where}: X must be a 2-D array with at least one row and one column, got shape {X.shape}"
        )
    bad = np.isinf(X) if missing_ok else ~np.isfinite(X)
    if bad.any():
        r, c = (int(v) for v in np.argwhere(bad)[0])
        raise DataError(f"{where}: X row {r} column {c} is {X[r, c]}; values must be finite numbers")


def _check_classes(ds, where):
    """The class names and the codes of y against them."""
    classes, y, n = ds.classes, ds.y, ds.X.shape[0]
    if classes.ndim != 1:
        raise DataError(f"{where}: classes must list the class names, got shape {classes.shape}")
    seen = {}
    for j, name in enumerate(classes):
        problem = label_problem(name)
        if problem is not None:
            raise DataError(f"{where}: classes[{j}]: {problem}")
        if str(name) in seen:
            raise DataError(
                f"{where}: classes[{j}] repeats classes[{seen[str(name)]}] ({str(name)!r}); name each class once"
            )
        seen[str(name)] = j
    texts = list(seen)  # each class's name, in the order of classes
    clash = same_number(texts)
    if clash is not None:
        i, j = clash
        raise DataError(f"{where}: classes[{i}] ({texts[i]!r}) and classes[{j}] ({texts[j]!r}) {SAME_NUMBER}")
    if y.shape != (n,):
        raise DataError(f"{where}: y must hold one label per row of X ({n}), got shape {y.shape}")
    outside = np.flatnonzero((y < 0) | (y >= len(classes)))
    if len(outside):
        _bad_code(int(y[outside[0]]), int(outside[0]), len(classes), where)
    present = np.unique(y)
    if len(present) < 2:
        raise DataError(f"{where}: a single class ('{classes[int(y[0])]}'); a classifier needs at least two")


def _bad_code(value, i, n_classes, where):
    codes = f"0..{n_classes - 1}" if n_classes else "none (classes is empty)"
    raise DataError(f"{where}: y[{i}] is {value!r}; y holds class codes {codes}, one per entry of classes")


def _check_split(split, n, where):
    for name, part in zip(("training", "test"), split, strict=True):
        if len(part) == 0:
            raise DataError(
                f"{where}: split: the {name} part is empty; a predefined split needs rows in both parts"
            )
        outside = part[(part < 0) | (part >= n)]
        if len(outside):
            raise DataError(
                f"{where}: split: the {name} part holds row {outside[0]}, not a row of X (0..{n - 1})"
            )
        rows, counts = np.unique(part, return_counts=True)
        if (counts > 1).any():
            row, count = rows[counts > 1][0], counts[counts > 1][0]
            times = "twice" if count == 2 else f"{count} times"
            raise DataError(f"{where}: split: the {name} part lists row {row} {times}")
    both = np.intersect1d(*split)
    if len(both):
        raise DataError(f"{where}: split: row {both[0]} is in both the training and the test part")


def _check_partitions(partitions, n, where):
    for scheme, folds in partitions.items():
        if not isinstance(scheme, str) or not SCHEME.fullmatch(scheme):
            raise DataError(f"{where}: partitions: {scheme!r} is not a scheme name such as '10-fold'")
        if folds.shape != (n,):
            raise DataError(
                f"{where}: partitions[{scheme!r}] must hold one fold per row of X ({n}), got shape {folds.shape}"
            )
        k = int(scheme.split("-")[0])
        outside = np.flatnonzero((folds < 0) | (folds >= k))
        if len(outside):
            i = int(outside[0])
            raise DataError(
                f"{where}: partitions[{scheme!r}][{i}] is {folds[i]}; the folds of {scheme} are 0..{k - 1}"
            )


def _check_types(ds, where, missing_ok):
    """The column types (``nominal``, ``precomputed``) against X: nominal columns in
    range holding codes 0, 1, ... (NaN for a missing value with ``missing_ok``); a
    distance matrix square and non-negative, without nominal columns."""
    X = ds.X
    if ds.precomputed:
        if ds.nominal:
            raise DataError(f"{where}: a precomputed distance matrix has no nominal columns")
        if X.shape[0] != X.shape[1]:
            raise DataError(
                f"{where}: precomputed: X must be the square matrix of the distances between the rows, "
                f"got shape {X.shape}"
            )
        if (X < 0).any():
            r, c = (int(v) for v in np.argwhere(X < 0)[0])
            raise DataError(f"{where}: precomputed: X row {r} column {c} is {X[r, c]}; distances are >= 0")
    for j in ds.nominal:
        if not 0 <= j < X.shape[1]:
            raise DataError(f"{where}: nominal column {j} is not a column of X ({X.shape[1]} columns)")
        col = X[:, j]
        bad = ((col < 0) | (col != np.floor(col))) & ~np.isnan(col)
        if bad.any():
            r = int(np.flatnonzero(bad)[0])
            raise DataError(
                f"{where}: nominal column {j} holds {col[r]} at row {r}; expected a category code 0, 1, 2, ..."
            )


# --- a loader's result as the arrays check_dataset checks ----------------------------------


def as_dataset(result, name, where, missing_ok=False):
    """A loader's result (``(X, y)`` or a Dataset) as a checked Dataset named ``name``
    (:func:`check_dataset`; missing values only with ``missing_ok``). ``(X, y)``: X a 2-D array of
    numbers, y one label per row (classes ordered by
    :func:`knnx.datasets.encode_labels`). A Dataset keeps its classes, split,
    partitions, posterior, metadata and column types (``nominal``, ``precomputed``).

    The result is the loader's: reading it may run its code (an ``__array__``, a class
    name's ``__str__``, an iterator). A fault of that code (any exception but Ctrl-C's
    KeyboardInterrupt, ``sys.exit`` and ``os._exit`` included) is a DataError:
    ``WHERE: reading the loader's result failed: SystemExit: sys.exit(3) called``."""
    with exit_guard():
        try:
            return _as_dataset(result, name, where, missing_ok)
        except KnnxError:
            raise
        except BaseException as exc:  # noqa: BLE001 - the loader's code: sys.exit and os._exit too
            if not user_fault(exc):
                raise
            cause = describe(exc, 200)  # its __str__ is the loader's code too: under the guard
    raise DataError(f"{where}: reading the loader's result failed: {cause}")


def _as_dataset(result, name, where, missing_ok=False):
    if not isinstance(result, Dataset) and not (isinstance(result, tuple | list) and len(result) == 2):
        raise DataError(f"{where}: a loader returns (X, y) or a knnx Dataset, got {type(result).__name__}")
    X = _numbers(result.X if isinstance(result, Dataset) else result[0], where)
    _check_X(X, where, missing_ok)
    n = X.shape[0]
    if isinstance(result, Dataset):
        classes = np.asarray(result.classes if result.classes is not None else [], dtype=object)
        ds = Dataset(
            name=name,
            X=X,
            y=_codes(result.y, n, len(classes) if classes.ndim == 1 else 0, where),
            classes=classes,
            feature_names=_names(result.feature_names, where),
            split=_split(result.split, where),
            posterior=result.posterior,
            metadata=_metadata(result.metadata, where),
            partitions=_partitions(result.partitions, where),
            nominal=_nominal(result.nominal, where),
            precomputed=_precomputed(result.precomputed, where),
        )
        return check_dataset(ds, where, missing_ok=missing_ok)
    labels = np.asarray(result[1], dtype=object)
    if labels.ndim != 1 or len(labels) != n:
        raise DataError(f"{where}: y must hold one label per row of X ({n}), got shape {labels.shape}")
    codes, classes = encode_labels(labels, where)
    ds = make_dataset(
        name, X, codes, classes, [f"x{j}" for j in range(X.shape[1])], metadata={"source": where}
    )
    return check_dataset(ds, where, missing_ok=missing_ok)


def _numbers(X, where):
    """X as float64; DataError unless it holds numbers (int, float or bool)."""
    if hasattr(X, "toarray") and hasattr(X, "nnz"):  # scipy.sparse: asarray makes one object of it
        raise DataError(
            f"{where}: X must be a dense array of numbers, got a sparse {type(X).__name__}; "
            "return X.toarray()"
        )
    try:
        raw = np.asarray(X)
    except (TypeError, ValueError, OverflowError) as exc:  # ragged rows, an object refusing conversion
        raise DataError(
            f"{where}: X must be a 2-D array of numbers (int, float or bool), got a {type(X).__name__} "
            f"that numpy cannot read as one array (rows of different lengths?: {type(exc).__name__})"
        ) from None
    if raw.dtype.kind not in "biuf":  # text or objects: a loader returns numbers, as a CSV file holds
        raise DataError(f"{where}: X must hold numbers (int, float or bool), got values of dtype {raw.dtype}")
    try:
        return np.ascontiguousarray(raw, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        raise DataError(
            f"{where}: X must hold numbers (int, float or bool), got values of dtype {raw.dtype}"
        ) from None


def _codes(y, n, n_classes, where):
    """A Dataset's y as intp class codes: integers, or floats that are whole numbers."""
    try:
        codes = np.asarray(y)
    except (TypeError, ValueError):
        codes = np.asarray(None)
    if codes.shape != (n,):
        raise DataError(f"{where}: y must hold one label per row of X ({n}), got shape {codes.shape}")
    if codes.dtype.kind not in "iu":
        for i, value in enumerate(codes):
            number = isinstance(value, int | np.integer | float | np.floating)
            if not (
                number
                and not isinstance(value, bool | np.bool_)
                and np.isfinite(value)
                and value == int(value)
            ):
                _bad_code(value.item() if isinstance(value, np.generic) else value, i, n_classes, where)
    outside = np.flatnonzero((codes < 0) | (codes >= n_classes))  # before a cast that would wrap them
    if len(outside):
        value = codes[outside[0]]
        _bad_code(value.item() if isinstance(value, np.generic) else value, int(outside[0]), n_classes, where)
    return codes.astype(np.intp)


def _check_feature_names(names, where):
    """DataError for a feature name that is blank, holds a control character or is given
    twice: names head tables and select columns (``attr=category``), as a CSV header's."""
    seen = set()
    for j, name in enumerate(names):
        if not name.strip() or any(ord(c) < 32 or ord(c) == 127 for c in name):
            raise DataError(
                f"{where}: feature_names[{j}] is {name!r}; a name is text without control characters"
            )
        if name in seen:  # a set: a 100,000-column CSV is checked in linear time
            raise DataError(
                f"{where}: feature_names[{j}] {name!r} is given twice; each column has a name of its own"
            )
        seen.add(name)


def _names(names, where):
    if isinstance(names, str) or not hasattr(names, "__iter__"):
        raise DataError(f"{where}: feature_names must list the columns' names, got {type(names).__name__}")
    return tuple(str(f) for f in names)


def _metadata(metadata, where):
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise DataError(f"{where}: metadata must be a mapping, got {type(metadata).__name__}")
    return dict(metadata)


def _indices(values, what, where):
    """A 1-D intp array of the integers ``values`` (an empty list is one)."""
    try:
        arr = np.asarray(values)
    except (TypeError, ValueError):
        arr = np.asarray(None)
    if arr.ndim == 1 and (arr.dtype.kind in "iu" or arr.size == 0):
        return arr.astype(np.intp)
    raise DataError(
        f"{where}: {what} must be a 1-D array of integer row indices, got dtype {arr.dtype} and shape {arr.shape}"
    )


def _split(split, where):
    if split is None:
        return None
    if not isinstance(split, tuple | list) or len(split) != 2:
        got = (
            f"a {type(split).__name__} of {len(split)}"
            if isinstance(split, tuple | list)
            else type(split).__name__
        )
        raise DataError(f"{where}: split must be (training row indices, test row indices) or None, got {got}")
    return (
        _indices(split[0], "split: the training part", where),
        _indices(split[1], "split: the test part", where),
    )


def _partitions(partitions, where):
    if partitions is None:
        return {}
    if not isinstance(partitions, Mapping):
        raise DataError(
            f"{where}: partitions must map a scheme (10-fold) to each row's fold, got "
            f"{type(partitions).__name__}"
        )
    out = {}
    for scheme, folds in partitions.items():
        try:
            arr = np.asarray(folds)
        except (TypeError, ValueError):
            arr = np.asarray(None)
        if arr.dtype.kind not in "iu":
            raise DataError(f"{where}: partitions[{scheme!r}] must hold integer folds, got dtype {arr.dtype}")
        out[scheme] = arr.astype(np.intp)
    return out


def _nominal(nominal, where):
    try:
        if any(not isinstance(j, int | np.integer) or isinstance(j, bool) for j in nominal):
            raise TypeError
        return tuple(sorted({int(j) for j in nominal}))
    except TypeError:
        raise DataError(f"{where}: nominal must list column indices of X, got {nominal!r}") from None


def _precomputed(precomputed, where):
    if not isinstance(precomputed, bool | np.bool_):
        raise DataError(f"{where}: precomputed must be True or False, got {precomputed!r}")
    return bool(precomputed)
