"""Typed data: nominal attributes kept as category codes (``categorical: keep``), missing
values kept as NaN (``missing: keep``) and precomputed distance matrices, from the
loaders through the runner to the estimators, and what ``knnx validate`` refuses of
them. The estimators here are a stand-in of this file (a 1-NN under knnx's metrics
with ``metric``, ``metric_params`` and ``nominal`` parameters), named by import path."""

import csv
import hashlib
import textwrap
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from conftest import refused_by_cli
from numpy.testing import assert_array_equal
from typer.testing import CliRunner

from knnx import DataError
from knnx.cli import app
from knnx.datasets import BUNDLED, load_bundled, load_dataset
from knnx.datasets.bundled import data_dir
from knnx.experiment.parts import split_parts
from knnx.experiment.runner import run_spec
from knnx.spec import validate_spec

runner = CliRunner()

LAB = '''\
import numpy as np
from dataclasses import replace
from sklearn.base import BaseEstimator, ClassifierMixin

from knnx.datasets import load_dataset, make_dataset
from knnx.neighbors.search import kneighbors


class MetricNN(ClassifierMixin, BaseEstimator):
    """1-NN under a knnx metric; reports the nominal columns it was given (as the sum of
    2**j), the NaN cells and the columns of its training part."""

    def __init__(self, metric="euclidean", metric_params=None, nominal=None, require_nominal=False):
        self.metric = metric
        self.metric_params = metric_params
        self.nominal = nominal
        self.require_nominal = require_nominal

    def fit(self, X, y):
        if self.require_nominal and self.nominal is None:
            raise ValueError("nominal was not given")
        self.X_, self.y_ = np.asarray(X, dtype=float), np.asarray(y)
        self.classes_ = np.unique(y)
        nominal = [] if self.nominal is None else list(self.nominal)
        self.reported_ = {
            "nominal_mask": float(sum(2.0 ** j for j in nominal)),
            "train_nan": float(np.isnan(self.X_).sum()),
            "train_columns": float(self.X_.shape[1]),
        }
        return self

    def predict(self, X):
        _, ind = kneighbors(self.X_, 1, np.asarray(X, dtype=float), metric=self.metric,
                            metric_params=self.metric_params, nominal=self.nominal, y=self.y_)
        return self.y_[ind[:, 0]]


class MetricOnly(MetricNN):
    """A metric but no nominal parameter."""

    def __init__(self, metric="euclidean"):
        self.metric = metric

    nominal = None
    metric_params = None
    require_nominal = False


def balance_distances():
    """balance's squared Euclidean distances (integers: exact), as a precomputed dataset."""
    ds = load_dataset("balance")
    D = ((ds.X[:, None, :] - ds.X[None, :, :]) ** 2).sum(-1)
    names = [f"d{j}" for j in range(len(D))]
    return replace(make_dataset("balanceD", D, ds.y, ds.classes, names), precomputed=True)
'''


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lab")
    (folder / "typedlab.py").write_text(LAB)
    return folder


def _spec_text(lab, datasets, algorithms, extra=""):
    return textwrap.dedent(
        f"""\
        name: typed
        python_path: ["{lab}"]
        datasets: {datasets}
        protocol: {{kind: kfold, folds: 3}}
        algorithms: {algorithms}
        """
    ) + textwrap.dedent(extra)


def _write(tmp_path, text, name="s.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


# --- CSV files ---------------------------------------------------------------------------

CSV = """\
colour,size,shape,label
red,1.5,round,a
blue,,square,b
green,2.5,,a
blue,0.5,round,b
red,3.0,square,a
,1.0,oval,b
"""


def _cells(path):
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    return {c: [r[c] for r in rows] for c in rows[0] if c != "label"}


def test_keep_gives_the_sorted_categories_positions_and_the_nominal_columns(tmp_path):
    path = _write(tmp_path, CSV, "t.csv")
    ds = load_dataset({"csv": str(path), "categorical": "keep", "missing": "keep"})
    cells = _cells(path)
    assert ds.feature_names == ("colour", "size", "shape")
    assert ds.nominal == (0, 2)
    for j, col in enumerate(ds.feature_names):
        if j in ds.nominal:
            cats = sorted({v for v in cells[col] if v != ""})
            expected = [cats.index(v) if v else np.nan for v in cells[col]]
            assert ds.attributes[j] == (col, "nominal", tuple(cats))
        else:
            expected = [float(v) if v else np.nan for v in cells[col]]
            assert ds.attributes[j] == (col, "numeric", ())
        assert_array_equal(ds.X[:, j], expected)
    # missing: keep -> NaN exactly at the empty cells
    empty = np.array([[v == "" for v in cells[c]] for c in ds.feature_names]).T
    assert_array_equal(np.isnan(ds.X), empty)
    assert ds.numeric_columns().tolist() == [False, True, False]
    # keep writes the codes ordinal writes, typed
    ordinal = load_dataset({"csv": str(path), "categorical": "ordinal", "missing": "keep"})
    assert_array_equal(ordinal.X, ds.X) and ordinal.nominal == () and ordinal.attributes == ()


def test_missing_keep_with_one_hot_columns_and_the_other_treatments(tmp_path):
    path = _write(tmp_path, CSV, "t.csv")
    ds = load_dataset({"csv": str(path), "categorical": "onehot", "missing": "keep"})
    assert ds.nominal == () and ds.X.shape == (6, 3 + 1 + 3)
    blocks = {c: [j for j, f in enumerate(ds.feature_names) if f.split("=")[0] == c] for c in _cells(path)}
    for c, values in _cells(path).items():
        rows = [i for i, v in enumerate(values) if v == ""]
        assert np.isnan(ds.X[np.ix_(rows, blocks[c])]).all()
    assert np.isnan(ds.X).sum() == 3 + 1 + 3  # colour's 3 columns, size, shape's 3
    assert load_dataset({"csv": str(path), "categorical": "keep", "missing": "drop_rows"}).n_samples == 3
    with pytest.raises(DataError, match=r"t.csv: column 'size' line 3: missing value"):
        load_dataset({"csv": str(path), "categorical": "keep"})
    # fill writes into a kept nominal column only a code of it
    filled = load_dataset({"csv": str(path), "categorical": "keep", "missing": "fill", "fill_value": 1})
    assert filled.X[5, 0] == 1 and filled.X[2, 2] == 1 and filled.X[1, 1] == 1
    with pytest.raises(DataError) as err:
        load_dataset({"csv": str(path), "categorical": "keep", "missing": "fill", "fill_value": 3})
    assert str(err.value) == (
        f"{path}: missing: fill writes 3 into nominal column 'colour', whose category codes are 0..2; use "
        "missing: keep (a metric with a missing-value rule), drop_rows, or a fill_value that is a code"
    )


# --- bundled datasets ---------------------------------------------------------------------

# sha256 (first 16 hex digits) of X, y and the feature names as main's loaders gave them
# before categorical/missing keep existed (commit b3bab98): the defaults stay bit for bit.
BEFORE = {
    "australian": "a6d0a41a22abfa7a",
    "balance": "e008212969e3c034",
    "cancer": "7b12016ae8f60abb",
    "ctg": "f3c7679007a43455",
    "ctg_nsp": "e88fb3b765b7779e",
    "diabetes": "eb8406a4773826b7",
    "dna": "c3d9f7ccc1c16713",
    "german": "181ea5cf4a6105c4",
    "glass": "05280c391f8d335f",
    "heart": "f01c974df4ffc8b7",
    "ionosphere": "8680a57279bbd591",
    "iris": "ea1adb4b1db09d1c",
    "letter": "989a1401960799cd",
    "liver": "b724ad39afd59f0c",
    "optdigits": "d22685cf59e3fc30",
    "pima_ripley": "6034e94610d149e0",
    "ripley": "059d940baff0eff2",
    "satimage": "08e3d48879515f60",
    "segment": "ce4f6b579ac3995f",
    "sonar": "c436b6a73f11a421",
    "spambase": "d0831479eba2aa39",
    "vehicle": "6258333c45682643",
    "vote": "7c189a204d209079",
    "vowel": "0d274e79423f4f25",
    "wdbc": "e75033fecd4e6ec4",
    "wine": "57a98ce190db4baf",
    "german(categorical='ordinal')": "911a8f64df1e8af3",
    "vote(missing='drop_rows')": "c51f7370e4e1c6e4",
    "cancer(fill_value=-1,missing='fill')": "6b117bcfa77ff93f",
    "keel.crx": "ae92be2e52c0f9cc",
    "keel.crx(categorical='ordinal')": "f7e9db32fe2b2c2b",
    "keel.cleveland": "82ba1130453565b7",
    "keel.cleveland(fill_value=0.0,missing='fill')": "1f1d72bc33906024",
    "keel.german": "181ea5cf4a6105c4",
}
# The same of the standardised parts (training rows the even ones, test rows the odd
# ones): preprocess standardize true, then numeric.
BEFORE_STANDARDISED = {
    "german": ("f98dc62112ae94d9", "8a587c17c5d3db66"),
    "keel.crx": ("f2b713f4bbf9c4aa", "4d412b092850b884"),
    "vote": ("bb0e3180ccc2032c", "ea34a766ef63358e"),
    "heart": ("c03c82cc9bcc7fd7", "794219ee37522fe2"),
    "australian": ("22596ee5556c50a1", "b05a9fe99cc52483"),
}


def _digest(*arrays, names=()):
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    h.update("|".join(names).encode())
    return h.hexdigest()[:16]


def _entry(label):
    if "(" not in label:
        return label
    name, args = label[:-1].split("(")
    entry = {"name": name}
    for part in args.split(","):
        key, value = part.split("=")
        entry[key] = (
            value.strip("'") if value.startswith("'") else float(value) if "." in value else int(value)
        )
    return entry


@pytest.mark.parametrize("label", sorted(BEFORE))
def test_the_default_arrays_are_those_before_keep(label):
    ds = load_dataset(_entry(label))
    assert _digest(ds.X, ds.y, names=ds.feature_names) == BEFORE[label]
    assert ds.nominal == () and not ds.precomputed


@pytest.mark.parametrize("name", sorted(BEFORE_STANDARDISED))
def test_the_standardised_defaults_are_those_before_keep(name):
    ds = load_dataset(name)
    train, test = np.arange(0, ds.n_samples, 2), np.arange(1, ds.n_samples, 2)
    got = tuple(_digest(*split_parts(ds, train, test, how)[::2]) for how in (True, "numeric"))
    assert got == BEFORE_STANDARDISED[name]


# The declared types (datasets/README.md): each nominal attribute and its categories.
DECLARED = {
    "german": {a: None for a in ("A1", "A3", "A4", "A6", "A7", "A9", "A10", "A12", "A14", "A15", "A17", "A19", "A20")},
    "australian": {
        "A1": (0, 1), "A4": (1, 2, 3), "A5": tuple(range(1, 15)), "A6": tuple(range(1, 10)),
        "A8": (0, 1), "A9": (0, 1), "A11": (0, 1), "A12": (1, 2, 3),
    },
    "heart": {
        "sex": (0, 1), "chest_pain": (1, 2, 3, 4), "fasting_bs": (0, 1), "rest_ecg": (0, 1, 2),
        "ex_angina": (0, 1), "slope": (1, 2, 3), "thal": (3, 6, 7),
    },
    "vote": {f"V{i}": (0, 1, "?") for i in range(1, 17)},  # "?": the empty cell, a category under keep
}  # fmt: skip


def _file_columns(name):
    frames = [pd.read_csv(data_dir() / f, dtype=str, keep_default_na=False) for f in BUNDLED[name].files]
    return pd.concat(frames, ignore_index=True).drop(columns=["label"])


@pytest.mark.parametrize("name", sorted(DECLARED))
def test_keep_gives_the_declared_nominal_columns_and_their_codes(name):
    ds = load_bundled(name, categorical="keep", missing="keep")
    cells = _file_columns(name)
    declared = DECLARED[name]
    assert list(ds.feature_names) == list(cells.columns)
    assert [ds.feature_names[j] for j in ds.nominal] == [c for c in cells.columns if c in declared]
    for j, col in enumerate(ds.feature_names):
        values = cells[col].tolist()
        if col not in declared:
            assert ds.attributes[j].kind == "numeric"
            assert_array_equal(ds.X[:, j], [float(v) if v else np.nan for v in values])
            continue
        cats = declared[col]
        if cats is None:  # text codes: their sorted order
            cats = sorted({v for v in values if v})
            codes = [cats.index(v) for v in values]
        else:
            codes = [cats.index(int(float(v))) if v else np.nan for v in values]  # missing: keep
        assert ds.attributes[j] == (col, "nominal", tuple(str(c) for c in cats))
        assert_array_equal(ds.X[:, j], codes)
    assert ds.numeric_columns().tolist() == [c not in declared for c in ds.feature_names]


@pytest.mark.parametrize("name", sorted(DECLARED))
def test_the_default_is_the_kept_codes_encoded_as_before(name):
    """The kept codes decoded (their category's value) or one-hot encoded give the
    default X: german one-hot; the others their numbers, vote's missing votes filled with
    0.5 (the documented defaults)."""
    kept = load_bundled(name, categorical="keep", missing="keep")
    default = load_bundled(name)
    blocks, names = [], []
    for j, attr in enumerate(kept.attributes):
        col = kept.X[:, j]
        if attr.kind == "nominal" and name == "german":
            blocks.append((col[:, None] == np.arange(len(attr.categories))).astype(float))
            names += [f"{attr.name}={c}" for c in attr.categories]
            continue
        if attr.kind == "nominal":
            values = np.array(
                [np.nan if c == "?" else float(c) for c in attr.categories]
            )  # vote's "?": no cell
            col = np.where(np.isnan(col), np.nan, values[np.nan_to_num(col).astype(int)])
        blocks.append(np.where(np.isnan(col), 0.5, col)[:, None])
        names.append(attr.name)
    assert_array_equal(np.hstack(blocks), default.X)
    assert tuple(names) == default.feature_names and default.nominal == ()


def test_bundled_german_keeps_the_codes_of_keel_german():
    bundled, suite = (load_dataset({"name": n, "categorical": "keep"}) for n in ("german", "keel.german"))
    assert_array_equal(bundled.X, suite.X)
    assert bundled.nominal == suite.nominal and bundled.attributes == suite.attributes


def test_vote_keeps_an_abstention_as_a_third_category():
    """UCI's "?" is "neither yea nor nay": the numbers' 0.5 halfway between n and y is,
    under categorical: keep, the category '?' (code 2) of each vote; the other rules
    are still the entry's to say."""
    kept, filled = load_bundled("vote", categorical="keep"), load_bundled("vote")
    assert kept.nominal == tuple(range(16))
    assert {a.categories for a in kept.attributes} == {("0", "1", "?")}
    assert_array_equal(kept.X == 2, filled.X == 0.5)
    assert_array_equal(np.where(kept.X == 2, 0.5, kept.X), filled.X)
    assert (kept.X == 2).sum() == 392
    assert load_bundled("vote", categorical="keep", missing="drop_rows").n_samples == 232
    blank = load_bundled("vote", categorical="keep", missing="keep")
    assert np.isnan(blank.X).sum() == 392 and blank.n_samples == 435
    with pytest.raises(DataError, match=r"vote.csv: missing: fill writes 0.5 into nominal column 'V1'"):
        load_bundled("vote", categorical="keep", fill_value=0.5)  # said: no code


def test_dna_declares_no_nominal_attribute():
    # its 180 columns are Statlog's 0/1 indicators of 60 nucleotides (keel.splice has those)
    dna = load_bundled("dna", categorical="keep")
    assert dna.nominal == () and _digest(dna.X, dna.y, names=dna.feature_names) == BEFORE["dna"]


# --- suite datasets ------------------------------------------------------------------------


def test_suite_keep_types_the_codes_and_keeps_the_missing_values():
    from knnx.datasets.missing import check_fill_codes

    ds = load_dataset({"name": "keel.crx", "categorical": "keep"})
    assert_array_equal(ds.X, ds.values)
    assert ds.nominal == tuple(j for j, a in enumerate(ds.attributes) if a.kind == "nominal")
    assert len(ds.nominal) == 9 and ds.numeric_columns().sum() == 6
    assert ds.feature_names == tuple(a.name for a in ds.attributes)
    cleveland = load_dataset({"name": "keel.cleveland", "missing": "keep"})
    assert_array_equal(np.isnan(cleveland.X), np.isnan(cleveland.values))
    assert np.isnan(cleveland.X).sum() == 6 and cleveland.n_samples == 303
    # no suite dataset has a nominal attribute with a missing value: the rule on its own
    # (column b: codes 0..2, a missing cell), as every source applies it
    check_fill_codes("s", ["a", "b"], {1: 3}, [1], 2)
    for bad in (0.5, 3, -1):
        with pytest.raises(
            DataError, match=rf"^s: missing: fill writes {bad} into nominal column 'b', whose category"
        ):
            check_fill_codes("s", ["a", "b"], {1: 3}, [1], bad)


# --- the parts a cell fits on ---------------------------------------------------------------


def test_standardisation_skips_nominal_codes_and_leaves_out_missing_values():
    ds = load_dataset({"name": "keel.crx", "categorical": "keep"})
    ds = replace(ds, X=ds.X.copy())
    ds.X[::7, 1] = np.nan  # missing values in a numeric column (crx has none left)
    train, test = np.arange(0, ds.n_samples, 2), np.arange(1, ds.n_samples, 2)
    for how in (True, "numeric"):
        X_train, _, X_test, _ = split_parts(ds, train, test, how)
        for j in range(ds.n_features):
            if j in ds.nominal:
                assert_array_equal(X_train[:, j], ds.X[train, j])
                assert_array_equal(X_test[:, j], ds.X[test, j])
                continue
            present = ds.X[train, j][~np.isnan(ds.X[train, j])]
            mean, std = present.mean(), present.std()
            np.testing.assert_allclose(X_train[:, j], (ds.X[train, j] - mean) / std, rtol=1e-12)
            np.testing.assert_allclose(X_test[:, j], (ds.X[test, j] - mean) / std, rtol=1e-12)
        assert_array_equal(np.isnan(X_train), np.isnan(ds.X[train]))


def test_a_precomputed_matrix_is_sliced_on_both_axes_and_never_standardised(lab, monkeypatch):
    from knnx.datasets import as_dataset

    monkeypatch.syspath_prepend(str(lab))
    ds = load_dataset({"loader": "typedlab:balance_distances"})
    assert ds.precomputed and ds.numeric_columns().sum() == 0
    train, test = np.array([4, 0, 7]), np.array([2, 9])
    for how in (False, True, "numeric"):
        X_train, y_train, X_test, y_test = split_parts(ds, train, test, how)
        assert_array_equal(X_train, ds.X[train][:, train])
        assert_array_equal(X_test, ds.X[test][:, train])
        assert_array_equal(y_train, ds.y[train])
        assert_array_equal(y_test, ds.y[test])
    with pytest.raises(
        DataError, match=r"^loader b: precomputed: X must be the square matrix .* \(625, 4\)$"
    ):
        as_dataset(replace(ds, X=np.ones((625, 4))), "b", "loader b")
    with pytest.raises(
        DataError, match=r"^loader b: precomputed: X row 0 column 1 is -1.0; distances are >= 0$"
    ):
        as_dataset(replace(ds, X=-ds.X), "b", "loader b")
    with pytest.raises(
        DataError, match=r"^loader b: nominal column 1 holds 0.5 at row 0; expected a category"
    ):
        as_dataset(replace(ds, X=ds.X[:, :3] / 2, precomputed=False, nominal=(1,)), "b", "loader b")


def test_the_cell_hash_covers_the_types():
    from knnx.experiment.provenance import array_checksum, data_checksum

    ordinal = load_dataset({"name": "german", "categorical": "ordinal"})
    kept = load_dataset({"name": "german", "categorical": "keep"})
    assert_array_equal(ordinal.X, kept.X)  # the same codes, typed or not
    # the arrays and which columns standardize: numeric scales (an ordinal column is numeric)
    assert data_checksum(ordinal) == array_checksum(ordinal.X, ordinal.y, ordinal.numeric_columns())
    assert data_checksum(kept) != data_checksum(ordinal)
    assert ordinal.numeric_columns().all() and not kept.numeric_columns().all()


# --- the runner ------------------------------------------------------------------------------


def _rows(out, metric):
    frame = pd.read_csv(out / "results.csv")
    return frame[frame.metric == metric]


def test_the_runner_gives_the_estimators_the_nominal_columns(lab, tmp_path):
    spec = _spec_text(
        lab,
        "[{name: german, categorical: keep, id: g}, iris]",
        """
          - {id: mixed, estimator: "typedlab:MetricNN", params: {metric: [heom, hvdm]}, params_for: {iris: {metric: [euclidean]}}}
          - {id: tuned, estimator: "typedlab:MetricNN", params: {metric: [heom, gower], require_nominal: true},
             params_for: {iris: {metric: [euclidean], require_nominal: false}}, tune: {cv: 3}}
        """,
        "metrics: [error]\npreprocess: {standardize: true}\n",
    )
    path = _write(tmp_path, spec)
    run_spec(path, out=tmp_path / "out", figures=False)
    german = load_dataset({"name": "german", "categorical": "keep"})
    rows = _rows(tmp_path / "out", "nominal_mask")
    expected = {"g": float(sum(2**j for j in german.nominal)), "iris": 0.0}
    assert len(rows) == 2 * 3 + 1 * 3 + 2 * 3 and set(rows.dataset) == {"g", "iris"}
    for _, row in rows.iterrows():
        assert row.value == expected[row.dataset]
    assert (_rows(tmp_path / "out", "train_nan").value == 0).all()
    # the cells' errors are the stand-in's own on the validated parts (nominal codes unscaled)
    vspec = validate_spec(path)
    errors = _rows(tmp_path / "out", "error")
    for s in vspec.splits[0]:
        X_train, y_train, X_test, y_test = split_parts(vspec.datasets[0], s.train, s.test, True)
        assert_array_equal(X_train[:, german.nominal], german.X[s.train][:, german.nominal])
        from knnx.neighbors.search import kneighbors

        _, ind = kneighbors(X_train, 1, X_test, metric="hvdm", nominal=german.nominal, y=y_train)
        error = float(np.mean(y_train[ind[:, 0]] != y_test))
        cell = errors[(errors.dataset == "g") & (errors.fold == s.fold) & errors.params.str.contains("hvdm")]
        assert cell.value.tolist() == [error]


def test_missing_values_reach_a_metric_with_a_missing_value_rule(lab, tmp_path):
    from knnx.neighbors.search import kneighbors

    spec = _spec_text(
        lab,
        "[{name: vote, categorical: keep, missing: keep, id: v}]",
        '[{estimator: "typedlab:MetricNN", params: {metric: [heom, gower]}}]',
    )
    path = _write(tmp_path, spec)
    run_spec(path, out=tmp_path / "out", figures=False)
    vspec = validate_spec(path)
    vote = vspec.datasets[0]
    expected = {s.fold: float(np.isnan(vote.X[s.train]).sum()) for s in vspec.splits[0]}
    nan = _rows(tmp_path / "out", "train_nan")
    assert len(nan) == 6 and all(row.value == expected[row.fold] > 0 for _, row in nan.iterrows())
    errors = _rows(tmp_path / "out", "error")
    for s in vspec.splits[0]:
        _, ind = kneighbors(vote.X[s.train], 1, vote.X[s.test], metric="gower", nominal=vote.nominal)
        error = float(np.mean(vote.y[s.train][ind[:, 0]] != vote.y[s.test]))
        cell = errors[(errors.fold == s.fold) & errors.params.str.contains("gower")]
        assert cell.value.tolist() == [error]


def test_a_precomputed_dataset_runs_as_its_features_do(lab, tmp_path):
    """balance's squared Euclidean distances (exact integers), precomputed, give the
    errors of the Euclidean 1-NN on balance's features, fold by fold (one id, so the
    same splits); its training parts are n_train x n_train."""
    algorithm = '[{{id: nn, estimator: "typedlab:MetricNN", params: {{metric: {}}}}}]'
    pre = _spec_text(lab, '[{loader: "typedlab:balance_distances", id: b}]', algorithm.format("precomputed"))
    feat = _spec_text(lab, "[{name: balance, id: b}]", algorithm.format("euclidean"))
    run_spec(_write(tmp_path, pre, "pre.yaml"), out=tmp_path / "pre", figures=False)
    run_spec(_write(tmp_path, feat, "feat.yaml"), out=tmp_path / "feat", figures=False)
    a, b = (_rows(tmp_path / d, "error").sort_values("fold") for d in ("pre", "feat"))
    assert a.value.tolist() == b.value.tolist() and a.n_train.tolist() == b.n_train.tolist()
    columns = _rows(tmp_path / "pre", "train_columns").sort_values("fold")
    assert columns.value.tolist() == columns.n_train.astype(float).tolist()


# --- knnx validate --------------------------------------------------------------------------


def _refused(tmp_path, text, message):
    """``knnx validate`` and ``knnx run``: exit 2, the one line ``error: SPEC: message``,
    nothing written."""
    refused_by_cli(tmp_path, _write(tmp_path, text), message)


STAND_IN = '[{estimator: "typedlab:MetricNN", params: {metric: METRIC}}]'

REFUSED = [
    (
        "[{name: german, categorical: keep, id: g}]",
        STAND_IN.replace("METRIC", "euclidean"),
        "datasets[0]: algorithms[0] (MetricNN) on 'g': column 'A1' is nominal; metric 'euclidean' takes numeric "
        "attributes only (use heom, hvdm, gower or hamming, metric_params: {onehot: true}, or categorical: onehot)",
    ),
    (
        "[{name: german, categorical: keep, id: g}]",
        STAND_IN.replace("METRIC", "[hvdm, mahalanobis]"),
        "datasets[0]: algorithms[0] (MetricNN) on 'g': column 'A1' is nominal; metric 'mahalanobis' takes numeric "
        "attributes only (use heom, hvdm, gower or hamming, metric_params: {onehot: true}, or categorical: onehot)",
    ),
    (
        "[{name: vote, missing: keep, id: v}]",
        STAND_IN.replace("METRIC", "manhattan"),
        "datasets[0]: algorithms[0] (MetricNN) on 'v': column 'V1' has missing values; metric 'manhattan' has no "
        "missing-value rule (use heom, hvdm or gower, or missing: drop_rows)",
    ),
    (
        "[{name: vote, categorical: keep, missing: keep, id: v}]",
        STAND_IN.replace("METRIC", "hamming"),
        "datasets[0]: algorithms[0] (MetricNN) on 'v': column 'V1' has missing values; metric 'hamming' has no "
        "missing-value rule (use heom, hvdm or gower, or missing: drop_rows)",
    ),
    (
        "[{name: german, categorical: keep, id: g}]",
        "[{name: cpw, params: {max_epochs: 2}}]",
        "datasets[0]: algorithms[0] (cpw) on 'g': column 'A1' holds nominal category codes (categorical: keep), "
        "which cpw would read as numbers (it has no metric that takes nominal attributes); give it steps: [encode], "
        "or leave categorical out of the dataset entry to give it one-hot indicators",
    ),
    (
        "[{name: heart, categorical: keep, id: h}]",
        '[{estimator: "sklearn.tree:DecisionTreeClassifier"}]',
        "datasets[0]: algorithms[0] (DecisionTreeClassifier) on 'h': column 'sex' holds nominal category codes "
        "(categorical: keep), which DecisionTreeClassifier would read as numbers (it has no metric that takes "
        "nominal attributes); give it steps: [encode] (its file stores the nominal attributes as numbers, which an "
        "entry without categorical gives as filed, not as one-hot indicators)",  # it advised leaving categorical out
    ),
    (
        "[{name: vote, missing: keep, id: v}]",
        "[{name: pw, params: {max_epochs: 2}}]",
        "datasets[0]: algorithms[0] (pw) on 'v': column 'V1' has missing values (missing: keep), which pw does "
        "not take (its scikit-learn tags do not allow NaN); use missing: drop_rows or fill",
    ),
    (
        "[{name: vote, missing: keep, id: v}]",
        '[{estimator: "sklearn.svm:SVC"}]',
        "datasets[0]: algorithms[0] (SVC) on 'v': column 'V1' has missing values (missing: keep), which SVC does "
        "not take (its scikit-learn tags do not allow NaN); use missing: drop_rows or fill",
    ),
    (
        "[iris]",
        STAND_IN.replace("METRIC", "precomputed"),
        "datasets[0]: algorithms[0] (MetricNN) on 'iris': metric 'precomputed' needs a dataset of distances (a "
        "loader's Dataset with precomputed=True); 'iris' holds features",
    ),
    (
        '[{loader: "typedlab:balance_distances", id: d}]',
        STAND_IN.replace("METRIC", "euclidean"),
        "datasets[0]: algorithms[0] (MetricNN) on 'd': 'd' is a precomputed distance matrix; MetricNN runs under "
        "metric 'euclidean' (set metric: precomputed)",
    ),
    (
        '[{loader: "typedlab:balance_distances", id: d}]',
        "[{name: svm_linear}]",
        "datasets[0]: algorithms[0] (svm_linear) on 'd': 'd' is a precomputed distance matrix, and svm_linear has "
        "no metric parameter (it would read the distances as features); use an algorithm with metric: precomputed",
    ),
    (
        '[{loader: "typedlab:balance_distances", id: d}]',
        "[{name: knn, params: {k: 1}}]",
        "datasets[0]: algorithms[0] (knn) on 'd': 'd' is a precomputed distance matrix; knn runs under metric "
        "'euclidean' (set metric: precomputed)",
    ),
    (
        "[segment]",
        STAND_IN.replace("METRIC", "mahalanobis"),
        "datasets[0]: algorithms[0] (MetricNN) on 'segment': metric 'mahalanobis' fitted on all its rows: X: the "
        "training part's covariance is singular (rank 14 < 19 features); mahalanobis needs it invertible (drop "
        "collinear or constant columns, or give VI in metric_params)",
    ),
    (
        "[iris]",
        '[{estimator: "typedlab:MetricNN", params: {metric: seuclidean, metric_params: [{V: [1, 1, 1, 1]}, {V: [1, 2]}]}}]',
        "datasets[0]: algorithms[0] (MetricNN) on 'iris': metric 'seuclidean' fitted on all its rows: "
        "metric_params: seuclidean's V must hold 4 positive variances, got [1, 2]",
    ),
]


REFUSED.append(
    (
        "[{name: heart, categorical: keep, id: h}]",
        STAND_IN.replace("METRIC", "[hvdm, vdm]"),
        "datasets[0]: algorithms[0] (MetricNN) on 'h': column 'age' is numeric; metric 'vdm' reads every column as "
        "nominal (use hvdm, heom or gower for numeric and nominal attributes)",
    )
)
REFUSED.append(
    (
        "[{name: german, categorical: keep, id: g}]",
        '[{estimator: "typedlab:MetricOnly", params: {metric: heom}}]',
        "datasets[0]: algorithms[0] (MetricOnly) on 'g': column 'A1' holds nominal category codes, and MetricOnly "
        "has no nominal parameter to tell metric 'heom' which columns they are; use categorical: onehot",
    )
)


@pytest.mark.parametrize(("datasets", "algorithms", "message"), REFUSED)
def test_validate_refuses_data_the_algorithm_cannot_take(lab, tmp_path, datasets, algorithms, message):
    _refused(tmp_path, _spec_text(lab, datasets, algorithms), message)


@pytest.mark.parametrize(
    ("datasets", "algorithms"),
    [
        (
            "[{name: german, categorical: keep}]",
            STAND_IN.replace("METRIC", "[heom, hvdm, gower, hamming]"),
        ),
        (
            "[{name: vote, categorical: keep, missing: keep}]",
            STAND_IN.replace("METRIC", "[heom, hvdm, gower, vdm]"),
        ),
        ("[{name: vote, missing: keep}]", '[{estimator: "sklearn.ensemble:HistGradientBoostingClassifier"}]'),
        (
            "[{name: german, categorical: keep}]",
            '[{estimator: "typedlab:MetricNN", params: {metric: [euclidean, manhattan], metric_params: {onehot: true}}}]',
        ),
        ("[german, {name: german, categorical: ordinal}]", "[{name: cpw, params: {max_epochs: 2}}]"),
        ("[iris]", STAND_IN.replace("METRIC", "[mahalanobis, seuclidean, cosine, chebyshev]")),
        ('[{loader: "typedlab:balance_distances"}]', STAND_IN.replace("METRIC", "precomputed")),
        (
            "[iris]",
            '[{estimator: "typedlab:MetricNN", params: {metric: minkowski, metric_params: [{p: 3}, {p: 1.5}]}}]',
        ),
    ],
)
def test_validate_accepts_what_the_metric_takes(lab, tmp_path, datasets, algorithms):
    result = runner.invoke(app, ["validate", str(_write(tmp_path, _spec_text(lab, datasets, algorithms)))])
    assert result.exit_code == 0, result.output


def test_active_learning_refuses_kept_nominal_codes(tmp_path):
    text = textwrap.dedent(
        """\
        name: act
        kind: active
        datasets: [{name: german, categorical: keep, id: g}]
        start: 50
        rounds: 2
        m: 5
        """
    )
    _refused(
        tmp_path,
        text,
        "datasets[0]: 'g': column 'A1' holds nominal category codes (categorical: keep); active learning reads "
        "every column as a number: use categorical: onehot",
    )


def test_metric_params_grids_of_mappings_expand(lab, tmp_path):
    spec = _spec_text(
        lab,
        "[iris]",
        '[{estimator: "typedlab:MetricNN", params: {metric: minkowski, metric_params: [{p: 3}, {p: 1.5}]}}]',
    )
    path = _write(tmp_path, spec)
    vspec = validate_spec(path)
    assert sorted({c.params_json for c in vspec.cells}) == [
        '{"metric":"minkowski","metric_params":{"p":1.5},"nominal":null,"require_nominal":false}',
        '{"metric":"minkowski","metric_params":{"p":3},"nominal":null,"require_nominal":false}',
    ]
    run_spec(path, out=tmp_path / "out", figures=False)
    assert len(_rows(tmp_path / "out", "error")) == 6
