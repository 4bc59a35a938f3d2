"""Bundled datasets against the manifest; synthetic generators; user CSV errors."""

import csv

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from knnx import DataError
from knnx.datasets import (
    DATASETS,
    GENERATORS,
    data_dir,
    describe_bundled,
    load_bundled,
    load_dataset,
)
from knnx.datasets.bundled import BUNDLED, sha256

# Round trips through files: also run under each pandas of make test-pandas.
pytestmark = pytest.mark.pandas_io

MANIFEST = {row["name"]: row for row in csv.DictReader(open(data_dir() / "MANIFEST.csv"))}

# Loader options under which a dataset reproduces the manifest rows exactly (raw form).
RAW = {"cancer": {"missing": "fill", "fill_value": -1}, "german": {"categorical": "ordinal"}}


def _manifest_rows(name):
    files = BUNDLED[name].files
    return [MANIFEST[f.removesuffix(".csv")] for f in files]


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_bundled_matches_manifest(name):
    rows = _manifest_rows(name)
    ds = load_bundled(name, **RAW.get(name, {}))
    assert ds.n_samples == sum(int(r["n_rows"]) for r in rows)
    assert ds.n_features == int(rows[0]["n_features"])
    assert ds.n_classes == max(int(r["n_classes"]) for r in rows)
    total = {}
    for r in rows:
        for part in r["class_counts"].split(";"):
            label, count = part.split("=")
            total[label] = total.get(label, 0) + int(count)
    assert ds.class_counts() == total
    for r in rows:
        assert ds.metadata["sha256"][r["file"]] == r["sha256"] == sha256(data_dir() / r["file"])
    assert ds.X.flags.c_contiguous and ds.X.dtype == np.float64 and np.isfinite(ds.X).all()
    if len(rows) == 2:
        n_train = int(rows[0]["n_rows"])
        assert_array_equal(ds.split[0], np.arange(n_train))
        assert_array_equal(ds.split[1], np.arange(n_train, ds.n_samples))


def test_documented_treatments():
    cancer = load_bundled("cancer")
    assert cancer.n_samples == 683 and cancer.class_counts() == {"benign": 444, "malignant": 239}
    with pytest.raises(DataError, match=r"cancer.csv: column 'Bare.nuclei' line 25: missing value"):
        load_bundled("cancer", missing="error")
    vote = load_bundled("vote")
    assert vote.n_samples == 435 and set(np.unique(vote.X)) == {0.0, 0.5, 1.0}
    assert load_bundled("vote", missing="drop_rows").n_samples == 232
    german = load_bundled("german")
    assert german.n_features == 61  # 7 numeric + 54 one-hot columns
    assert_allclose(german.X[:, [n.startswith("A1=") or n == "A1" for n in german.feature_names]].sum(1), 1.0)
    australian = load_bundled("australian")  # Statlog's values, decimal points included
    assert_array_equal(australian.X[0, [1, 2, 6]], [22.08, 11.46, 1.585])
    with pytest.raises(DataError, match="australian: unknown option 'corrupted'"):
        load_bundled("australian", corrupted="drop")


def test_labels_keep_original_names():
    ds = load_bundled("ripley")
    assert list(ds.classes) == ["0", "1"]
    ctg = load_bundled("ctg")
    assert list(ctg.classes) == [str(i) for i in range(1, 11)]  # numeric order, not text order
    assert list(load_bundled("cancer").classes) == ["benign", "malignant"]


def test_describe_lists_every_dataset():
    rows = {r["name"]: r for r in describe_bundled()}
    assert set(rows) == set(DATASETS)
    assert rows["ripley"]["split"] == "250/1000" and rows["letter"]["n"] == 20000


def test_cached_loads_are_independent():
    a = load_bundled("iris")
    a.X[0, 0] = 1e9
    assert load_bundled("iris").X[0, 0] != 1e9


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_generators_are_seeded_and_posteriors_are_distributions(name):
    kwargs = {"gaussians": {"means": [[0, 0], [2, 1]], "covs": [1.0, 0.5], "n": 200}}.get(name, {})
    a = load_dataset({"synthetic": name, **kwargs}, seed=3)
    b = load_dataset({"synthetic": name, **kwargs}, seed=3)
    c = load_dataset({"synthetic": name, **kwargs}, seed=4)
    assert_array_equal(a.X, b.X) and not np.array_equal(a.X, c.X)
    P = a.posterior(a.X)
    assert P.shape == (a.n_samples, a.n_classes)
    assert_allclose(P.sum(1), 1.0)
    # The Bayes rule from the true posterior beats chance on its own sample.
    assert (P.argmax(1) == a.y).mean() > 1.0 / a.n_classes


def test_gaussian_posterior_hand_value():
    # Two classes N(-1, 1) and N(1, 1), equal priors: P(1 | x) = 1 / (1 + exp(-2x)).
    ds = load_dataset({"synthetic": "gaussians", "means": [[-1.0], [1.0]], "covs": [1.0, 1.0], "n": 10})
    x = np.array([[0.0], [0.5], [-2.0]])
    assert_allclose(ds.posterior(x)[:, 1], 1 / (1 + np.exp(-2 * x[:, 0])), rtol=1e-12)


def test_paredes_and_celisse_follow_the_papers():
    ds = load_dataset({"synthetic": "paredes2006", "n_per_class": 2000}, seed=0)
    for c, mean in enumerate([[2, 0.5], [0, 2], [0, -1]]):
        assert_allclose(ds.X[ds.y == c].mean(0), mean, atol=0.08)
    assert_allclose(np.cov(ds.X[ds.y == 1].T)[0, 1], 0.5, atol=0.08)
    cel = load_dataset({"synthetic": "celisse2011", "n": 20000, "q": 0.0}, seed=0)
    corner = ((cel.X[:, 0] < 0.2) & (cel.X[:, 1] < 0.2)) | ((cel.X[:, 0] > 0.8) & (cel.X[:, 1] > 0.8))
    assert_array_equal(cel.y, (~corner).astype(int))  # q = 0: labels are deterministic


def test_synthetic_test_split():
    ds = load_dataset({"synthetic": "paredes2006", "n_per_class": 8, "n_test": 500})
    assert ds.split_sizes() == (24, 500)


def _write(tmp_path, text, name="d.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    "text,kwargs,message",
    [
        (
            "a,b,y\n1,2,x\n",
            {"label": "label"},
            r"d.csv: no label column 'label' \(columns: a, b, y\)",
        ),
        ("a,label\n1,x\nfoo,y\n", {}, r"d.csv: column 'a' line 3: 'foo' is not a number"),
        ("a,label\n1,x\n,y\n", {}, r"d.csv: column 'a' line 3: missing value"),
        ("a,label\n1,x\ninf,y\n", {}, r"d.csv: column 'a' line 3: infinite value 'inf'"),
        ("", {}, r"d.csv: file is empty"),
        ("a,label\n", {}, r"d.csv: has a header but no data rows"),
    ],
)
def test_user_csv_errors(tmp_path, text, kwargs, message):
    path = _write(tmp_path, text)
    with pytest.raises(DataError, match=message):
        load_dataset({"csv": str(path), **kwargs})


def test_user_csv_loads_and_encodes(tmp_path):
    path = _write(tmp_path, "a,c,label\n1,red,no\n2,blue,yes\n3,red,no\n")
    # a text column is a nominal attribute: one-hot without categorical, as with onehot
    assert_array_equal(load_dataset({"csv": str(path)}).X, [[1, 0, 1], [2, 1, 0], [3, 0, 1]])
    stray = _write(tmp_path, "a,c,label\n1,red,no\n2,3,yes\n3,red,no\n", name="s.csv")
    with pytest.raises(DataError, match="'red' is not a number, while other cells of the column are"):
        load_dataset({"csv": str(stray)})
    ds = load_dataset({"csv": str(path), "categorical": "onehot"})
    assert ds.feature_names == ("a", "c=blue", "c=red")
    assert_array_equal(ds.X, [[1, 0, 1], [2, 1, 0], [3, 0, 1]])
    assert ds.name == "d" and list(ds.classes) == ["no", "yes"]


def test_unknown_dataset_names():
    with pytest.raises(DataError, match="unknown dataset 'ripely'; known: australian"):
        load_dataset("ripely")
    with pytest.raises(DataError, match="unknown synthetic generator 'nope'"):
        load_dataset({"synthetic": "nope"})
    with pytest.raises(DataError, match="synthetic paredes2006: unknown parameter 'n'"):
        load_dataset({"synthetic": "paredes2006", "n": 3})


@pytest.mark.parametrize(
    "entry",
    [
        {"synthetic": "paredes2006", "n_per_class": 10},
        {"synthetic": "celisse2011", "n": 40},
        {"synthetic": "dambrosio2012", "n": 60},
        {"synthetic": "blobs", "n": 50},
    ],
)
def test_asking_for_a_test_sample_keeps_the_training_sample(entry):
    alone = load_dataset(entry, seed=7)
    split = load_dataset({**entry, "n_test": 30}, seed=7)
    train = split.split[0]
    assert_array_equal(split.X[train], alone.X)
    assert_array_equal(split.y[train], alone.y)


def test_mixed_numeric_and_text_column_is_an_error(tmp_path):
    path = _write(tmp_path, "a,b,label\n1,2,x\n2,oops,y\n3,8,x\n")
    with pytest.raises(DataError, match="column 'b' line 3: 'oops' is not a number, while other cells"):
        load_dataset({"csv": str(path), "categorical": "onehot"})
