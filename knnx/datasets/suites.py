"""Benchmark suites: KEEL's standard and imbalanced classification sets, vendored.

The data live in ``datasets/suites/`` (``knnx/_bundled_data/suites/`` in a wheel):
``MANIFEST.json`` describes every dataset (source file and its sha256, licence,
citation, counts, per-attribute types and categories, partitions, treatments), and
``data/ID.csv.xz`` / ``data/ID.partitions.csv.xz`` hold its rows and its source's
partitions. ``datasets/suites/build.py`` rebuilds every file from its source and
says which source wins where two disagree; ``datasets/suites/README.md`` lists the
datasets.

Dataset ids are stable: ``keel.NAME`` for the standard suite, ``keel-imb.NAME`` for
the imbalanced one, NAME as KEEL spells it. Suite ``bundled`` lists the datasets of
``datasets/`` under their own names, described in the same manifest (types read from
the values); they load as bundled datasets, with their documented treatments. A spec names one (``keel.iris``) or a
whole suite, filtered (:func:`select`)::

    datasets:
      - {suite: keel-standard, max_rows: 5000, has_partitions: 10-fold}

In a suite entry, ``min_rows`` / ``max_rows``, ``min_features`` / ``max_features``,
``min_classes`` / ``max_classes``, ``min_imbalance`` / ``max_imbalance`` and
``min_minority`` / ``max_minority`` keep the datasets within those bounds (the rows
and attributes as filed, before any treatment; the imbalance ratio is the largest
class over the smallest; the minority is the smallest class's rows, which stratified
folds need);
``has_nominal`` and ``has_missing`` (true or false) keep those with (or without)
nominal attributes or missing values, ``has_partitions`` (a scheme such as
``10-fold``, or true for any) those with the source's partitions. The treatment
options ``categorical``, ``missing`` and ``fill_value`` apply to every dataset.

Loading (:func:`load_suite_dataset`): the file's sha256 is checked against the
manifest; nominal attributes are encoded for a Euclidean method as ``categorical``
says (``onehot``, default: one 0/1 column per category, named ``attr=category``;
``ordinal``: the category's code), categories in the manifest's order (the KEEL
header's, or sorted where the types were read from the values), or kept
(``keep``: the category's code, the column listed in ``Dataset.nominal``, for a
metric that takes nominal attributes); missing values are treated as ``missing``
says (``drop_rows``, default, removes the rows with any missing value and renumbers
the partitions; ``fill`` writes ``fill_value``, into a kept nominal column only if it
is one of its codes; ``keep`` leaves them NaN, for a metric with a missing-value
rule; ``error`` refuses). The Dataset keeps the attributes' types (``attributes``)
and their values before encoding, missing values as NaN (``values``).
"""

import hashlib
import json
import lzma
from dataclasses import replace
from functools import lru_cache

import numpy as np

import knnx.datasets.missing as missing_values
from knnx.datasets._base import Attribute, encode_labels, make_dataset
from knnx.errors import DataError

SUITES = {
    "keel-standard": "KEEL's standard classification sets (KEEL's 10-fold partitions where available)",
    "keel-imbalanced": "KEEL's imbalanced binary sets (KEEL's 5-fold partitions where available)",
    "bundled": "the datasets of datasets/ (knnx's own loaders, predefined train/test splits where they have one)",
}
BOUNDS = {
    "rows": "n_rows",
    "features": None,  # numeric + nominal
    "classes": "n_classes",
    "imbalance": "imbalance_ratio",
    "minority": None,  # rows of the smallest class
}
FILTERS = tuple(f"{side}_{b}" for b in BOUNDS for side in ("min", "max")) + (
    "has_nominal",
    "has_missing",
    "has_partitions",
)
TREATMENTS = ("categorical", "missing", "fill_value")


def suites_dir():
    from knnx.datasets.bundled import data_dir

    return data_dir() / "suites"


@lru_cache(maxsize=1)
def _manifest_cached(path):
    try:
        with open(path, encoding="utf-8") as fh:
            manifest = json.load(fh)
    except FileNotFoundError:
        raise DataError(f"{path}: suite manifest not found (rebuild with datasets/suites/build.py)") from None
    except (OSError, ValueError) as exc:
        raise DataError(f"{path}: suite manifest not readable ({exc})") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("datasets"), list):
        raise DataError(f"{path}: suite manifest has no 'datasets' list")
    return {d["id"]: d for d in manifest["datasets"]}


def manifest():
    """{dataset id: its manifest entry}, in the manifest's order."""
    return _manifest_cached(suites_dir() / "MANIFEST.json")


def is_suite_dataset(name):
    """Whether ``name`` is a dataset of the vendored suite files (not a bundled one,
    which its own loader reads)."""
    try:
        return "file" in manifest().get(name, {})
    except DataError:
        if name.startswith(("keel.", "keel-imb.")):  # a suite id: the manifest's own error says why
            raise
        return False


def n_features(entry):
    return entry["n_numeric"] + entry["n_nominal"]


def check_suite_entry(entry):
    """DataError naming the key unless ``entry`` is a valid suite entry."""
    suite = entry["suite"]
    if suite not in SUITES:
        raise DataError(f"suite: unknown suite '{suite}'; known: {', '.join(SUITES)}")
    for key, value in entry.items():
        if key == "suite":
            continue
        if key not in FILTERS + TREATMENTS:
            raise DataError(
                f"suite {suite}: unknown key '{key}'; filters: {', '.join(FILTERS)}; "
                f"treatments: {', '.join(TREATMENTS)}"
            )
        if key.startswith(("min_", "max_")):
            number = isinstance(value, int | float) and not isinstance(value, bool) and np.isfinite(value)
            if not number or value < 0:
                raise DataError(f"suite {suite}: {key} must be a number >= 0, got {value!r}")
        elif key in ("has_nominal", "has_missing") and not isinstance(value, bool):
            raise DataError(f"suite {suite}: {key} must be true or false, got {value!r}")
        elif key == "has_partitions" and not isinstance(value, bool | str):
            raise DataError(
                f"suite {suite}: has_partitions must be true, false or a scheme (10-fold), got {value!r}"
            )
    # the treatments once for the suite, not once per dataset it keeps
    given = {k: entry[k] for k in ("missing", "fill_value", "categorical") if k in entry}
    missing_values.check_options(
        f"suite {suite}",
        given.get("missing", "error"),
        given.get("fill_value"),
        given.get("categorical", "onehot"),
    )


def _value(entry, bound):
    if bound == "features":
        return n_features(entry)
    if bound == "minority":
        return min(entry["class_counts"].values())
    return entry[BOUNDS[bound]]


def partition_schemes(entry):
    """{scheme: folds} of a manifest entry: KEEL's partitions, or a bundled dataset's
    predefined split (``{"train/test": 1}``), which the listing shows and the
    ``has_partitions`` filter keeps alike."""
    if entry.get("split"):
        return {entry["split"]: 1}
    return entry.get("partitions", {}).get("schemes", {})


def _keeps(entry, filters):
    for bound in BOUNDS:
        value = _value(entry, bound)
        if f"min_{bound}" in filters and value < filters[f"min_{bound}"]:
            return False
        if f"max_{bound}" in filters and value > filters[f"max_{bound}"]:
            return False
    if "has_nominal" in filters and (entry["n_nominal"] > 0) != filters["has_nominal"]:
        return False
    if "has_missing" in filters and (entry["missing_cells"] > 0) != filters["has_missing"]:
        return False
    want = filters.get("has_partitions")
    schemes = partition_schemes(entry)
    if isinstance(want, str):
        return want in schemes
    return want is None or bool(schemes) == want


def select(entry):
    """The dataset ids a suite entry stands for, in manifest order (sorted by id).

    DataError for an unknown suite or key, or a filter that keeps no dataset."""
    check_suite_entry(entry)
    filters = {k: v for k, v in entry.items() if k in FILTERS}
    ids = [i for i, d in manifest().items() if d["suite"] == entry["suite"] and _keeps(d, filters)]
    if not ids:
        described = ", ".join(f"{k}: {v}" for k, v in filters.items())
        raise DataError(f"suite {entry['suite']}: the filters ({described}) keep no dataset")
    return ids


def expand_suite(entry):
    """A suite entry as one ``{"name": id, **treatments}`` entry per dataset; under a
    treatment the entry keeps its id (``"id": "keel.breast"``), the stable name results,
    ``params_for`` and the listing use, instead of a label naming the treatment."""
    treatments = {k: v for k, v in entry.items() if k in TREATMENTS}
    if not treatments:
        return [{"name": i} for i in select(entry)]
    return [{"name": i, **treatments, "id": i} for i in select(entry)]


def describe_suite(suite=None):
    """One dict per dataset of ``suite`` (every suite if None), from the manifest:
    name, suite, n, d (numeric + nominal), classes, imbalance ratio, missing cells,
    partitions, source."""
    if suite is not None and suite not in SUITES:
        raise DataError(f"--suite: unknown suite '{suite}'; known: {', '.join(SUITES)}")
    rows = []
    for i, d in manifest().items():
        if suite is not None and d["suite"] != suite:
            continue
        src = d["source"]
        where = (
            f"{src['package']} {src['version']}"
            if "package" in src
            else f"{src['repository']}@{src['commit'][:7]}"
        )
        schemes = partition_schemes(d)
        rows.append(
            {
                "name": i,
                "suite": d["suite"],
                "n": d["n_rows"],
                "d": n_features(d),
                "numeric": d["n_numeric"],
                "nominal": d["n_nominal"],
                "classes": d["n_classes"],
                "imbalance": d["imbalance_ratio"],
                "missing": d["missing_cells"],
                "partitions": ",".join(schemes) or "-",
                "source": where,
            }
        )
    return rows


# ----------------------------------------------------------------------------- loading


def _read_checked(rel, sha, what):
    path = suites_dir() / rel
    try:
        text = lzma.decompress(path.read_bytes())
    except FileNotFoundError:
        raise DataError(f"{path}: {what} file missing (rebuild with datasets/suites/build.py)") from None
    except (OSError, lzma.LZMAError) as exc:
        raise DataError(f"{path}: {what} file not readable as xz ({exc})") from None
    if hashlib.sha256(text).hexdigest() != sha:
        raise DataError(
            f"{path}: sha256 differs from MANIFEST.json (a damaged or edited file; "
            "rebuild with datasets/suites/build.py)"
        )
    return text.decode("utf-8"), path


def _parse(text, path, entry):
    lines = text.splitlines()
    attributes = [
        Attribute(a["name"], a["type"], tuple(a.get("categories", ()))) for a in entry["attributes"]
    ]
    n_attr = len(attributes)
    rows = [line.split(",") for line in lines[1:]]
    if len(rows) != entry["n_rows"] or any(len(r) != n_attr + 1 for r in rows):
        raise DataError(
            f"{path}: rows or columns differ from MANIFEST.json ({entry['n_rows']} x {n_attr + 1})"
        )
    values = np.full((len(rows), n_attr), np.nan)
    for j, attr in enumerate(attributes):
        column = [r[j] for r in rows]
        if attr.kind == "nominal":
            codes = {c: float(i) for i, c in enumerate(attr.categories)}
            try:
                values[:, j] = [codes[v] if v != "" else np.nan for v in column]
            except KeyError as exc:
                raise DataError(
                    f"{path}: attribute '{attr.name}' holds {exc}, not one of its categories"
                ) from None
        else:
            try:
                values[:, j] = [float(v) if v != "" else np.nan for v in column]
            except ValueError:
                raise DataError(
                    f"{path}: attribute '{attr.name}' holds a value that is not a number"
                ) from None
    labels = np.array([r[-1] for r in rows], dtype=object)
    return attributes, values, labels


def _encode(attributes, values, categorical):
    blocks, names = [], []
    for j, attr in enumerate(attributes):
        col = values[:, j]
        if attr.kind == "nominal" and categorical == "onehot":
            block = (col[:, None] == np.arange(len(attr.categories))[None, :]).astype(np.float64)
            block[np.isnan(col)] = np.nan
            blocks.append(block)
            names += [f"{attr.name}={c}" for c in attr.categories]
        else:
            blocks.append(col[:, None])
            names.append(attr.name)
    return np.hstack(blocks), names


@lru_cache(maxsize=32)
def _load_cached(folder, name, categorical, missing, fill_value):
    # ``folder`` keys the cache: KNNX_DATA may name another copy of the data later.
    entry = manifest()[name]
    text, path = _read_checked(entry["file"], entry["sha256"], "data")
    attributes, values, labels = _parse(text, path, entry)
    partitions = {}
    if "partitions" in entry:
        ptext, ppath = _read_checked(entry["partitions"]["file"], entry["partitions"]["sha256"], "partitions")
        plines = ptext.splitlines()
        schemes = plines[0].split(",")
        folds = np.array([[int(v) for v in line.split(",")] for line in plines[1:]], dtype=np.intp)
        if folds.shape != (len(labels), len(schemes)):
            raise DataError(f"{ppath}: {folds.shape[0]} rows, while the data file has {len(labels)}")
        partitions = {s: folds[:, i] for i, s in enumerate(schemes)}
    X, names = _encode(attributes, values, categorical)
    nominal = ()
    if categorical == "keep":  # X's columns are the attributes
        nominal = tuple(j for j, a in enumerate(attributes) if a.kind == "nominal")
    nan_rows = np.isnan(values).any(axis=1)

    def first_missing():
        row, col = np.argwhere(np.isnan(values))[0]
        return f"{name}: attribute '{attributes[col].name}' row {row + 1} is missing"

    if missing == "fill" and nominal:
        holes = [j for j in nominal if np.isnan(values[:, j]).any()]
        n_codes = {j: len(attributes[j].categories) for j in nominal}
        missing_values.check_fill_codes(name, [a.name for a in attributes], n_codes, holes, fill_value)
    X, keep = missing_values.treat(X, nan_rows, missing, fill_value, name, first_missing)
    dropped = 0
    if keep is not None:
        values, labels = values[keep], labels[keep]
        partitions = {s: f[keep] for s, f in partitions.items()}
        dropped = int(nan_rows.sum())
    y, classes = encode_labels(labels, name)
    src = entry["source"]
    meta = {
        "source": src,
        "citation": entry["citation"],
        "licence": entry["licence"],
        "notes": "; ".join(entry.get("treatments", [])),
        "sha256": {entry["file"]: entry["sha256"]},
        "options": {
            "categorical": categorical,
            "missing": missing,
            "fill_value": fill_value,
            "rows_dropped": dropped,
        },
    }
    ds = make_dataset(name, X, y, classes, names, metadata=meta)
    return replace(ds, attributes=tuple(attributes), values=values, partitions=partitions, nominal=nominal)


def load_suite_dataset(name, *, categorical="onehot", missing="drop_rows", fill_value=None, **options):
    """Load suite dataset ``name`` (``keel.iris``) as a Dataset; see the module docstring."""
    if options:
        key = sorted(options)[0]
        raise DataError(f"{name}: unknown option '{key}'; known: {', '.join(TREATMENTS)}")
    if name not in manifest():
        raise DataError(f"unknown suite dataset '{name}'")
    missing_values.check_options(name, missing, fill_value, categorical)
    ds = _load_cached(str(suites_dir()), name, categorical, missing, fill_value)
    # The cache is shared: hand out arrays the caller may modify freely.
    return replace(
        ds,
        X=ds.X.copy(),
        y=ds.y.copy(),
        values=ds.values.copy(),
        partitions={s: f.copy() for s, f in ds.partitions.items()},
    )
