"""A data view per contestant (knnx.datasets.views, knnx.spec.views): one dataset entry
without ``categorical``, each contestant reading the view it takes (kNN under a mixed
metric the nominal codes, every other classifier one-hot indicators), on the same rows
and folds under one id -- checked bit for bit against the same contestants run on the
entry with ``categorical: keep`` and with ``categorical: onehot``; loader entries with
``categorical``/``missing``; the views recorded in datasets.csv and the report; bad
input refused in one line."""

import textwrap

import numpy as np
import pandas as pd
import pytest
from conftest import refused_by_cli
from sklearn.preprocessing import OneHotEncoder

from knnx.datasets import Dataset, load_dataset, make_dataset
from knnx.datasets.views import onehot_of_codes, treat_missing
from knnx.experiment.runner import run_spec
from knnx.reporting.characteristics import dataset_row, read_datasets

KEY = ["dataset", "algorithm", "params", "repeat", "fold", "metric"]

CONTESTANTS = {
    "knn_hvdm": {"name": "knn", "id": "knn_hvdm", "params": {"k": 3, "metric": "hvdm"}},
    "knn_heom_tuned": {
        "name": "knn",
        "id": "knn_heom_tuned",
        "params": {"k": [1, 5], "metric": "heom"},
        "tune": {"cv": 3},
    },
    "encode_knn": {"name": "knn", "id": "encode_knn", "steps": ["encode"], "params": {"k": 3}},
    "knn_euclidean": {"name": "knn", "id": "knn_euclidean", "params": {"k": 3}},
    "scale_knn": {"name": "knn", "id": "scale_knn", "steps": ["scale"], "params": {"k": 3}},
    "tree": {"estimator": "sklearn.tree:DecisionTreeClassifier", "id": "tree", "params": {"random_state": 0}},
}
CODES = ("knn_hvdm", "knn_heom_tuned", "encode_knn")  # their first consumer takes nominal codes


def _spec(datasets, algorithms, name="views"):
    return {
        "name": name,
        "seed": 3,
        "datasets": datasets,
        "protocol": {"kind": "kfold", "folds": 4},
        "algorithms": algorithms,
        "metrics": ["error"],
    }


def _rows(out):
    frame = pd.read_csv(out / "results.csv", dtype=str, keep_default_na=False)
    return frame.sort_values(KEY).reset_index(drop=True)


@pytest.fixture(scope="module")
def mixed_csv(tmp_path_factory):
    """A CSV file with two text columns, a numeric one and a class."""
    rng = np.random.default_rng(5)
    n = 90
    frame = pd.DataFrame(
        {
            "colour": rng.choice(["red", "green", "blue"], n),
            "size": rng.normal(size=n).round(3),
            "shape": rng.choice(["round", "square"], n),
            "label": rng.choice(["a", "b"], n),
        }
    )
    path = tmp_path_factory.mktemp("csv") / "mixed.csv"
    frame.to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def three_runs(tmp_path_factory, mixed_csv):
    """The contestants on entries without ``categorical`` (one run), and on the same
    entries with ``categorical: keep`` (the code readers) and ``categorical: onehot``
    (the others), given the same ids."""
    base = tmp_path_factory.mktemp("views")
    entries = [
        {"name": "keel.breast"},
        {"name": "heart"},
        {"csv": str(mixed_csv), "label": "label", "id": "mixed"},
    ]

    def ids(entry, how):
        label = entry.get("id", entry.get("name"))
        return {**entry, "categorical": how, "id": label}

    run_spec(_spec(entries, list(CONTESTANTS.values())), out=base / "auto", report=True)
    kept = [CONTESTANTS[c] for c in CODES]
    onehot = [v for c, v in CONTESTANTS.items() if c not in CODES]
    run_spec(_spec([ids(e, "keep") for e in entries], kept), out=base / "keep", report=False, figures=False)
    run_spec(
        _spec([ids(e, "onehot") for e in entries], onehot), out=base / "onehot", report=False, figures=False
    )
    return base


def test_each_contestant_reads_its_view_bit_for_bit(three_runs):
    """Every row of the one run equals the row of the same cell run on the entry with
    categorical: keep (kNN under hvdm/heom, tuned too, and encode > kNN) or categorical:
    onehot (kNN under euclidean, scale > kNN, a decision tree): value, params, n_train,
    n_test -- and the dataset ids are the plain ones, so the rows join."""
    auto = _rows(three_runs / "auto")
    other = pd.concat([_rows(three_runs / "keep"), _rows(three_runs / "onehot")])
    other = other.sort_values(KEY).reset_index(drop=True)
    assert set(auto["dataset"]) == {"keel.breast", "heart", "mixed"}
    assert len(auto) == len(other) == 3 * 6 * 4 + 3 * 4  # the tuned entry's chosen_k rows too
    columns = ["value", "n_train", "n_test", "seed"]
    pd.testing.assert_frame_equal(auto[KEY + columns], other[KEY + columns])


def test_the_views_differ_where_the_dataset_has_nominal_attributes(three_runs):
    """The views are not the same data: kNN under euclidean on one-hot indicators and on
    codes read as numbers would give other errors, and the two views of keel.breast
    have 9 columns (codes) and 41 (indicators)."""
    seed = np.random.SeedSequence(0)
    keep = load_dataset("keel.breast", seed=seed, view="keep")
    onehot = load_dataset("keel.breast", seed=seed, view="onehot")
    plain = load_dataset("keel.breast", seed=seed)
    assert keep.name == onehot.name == plain.name == "keel.breast"
    assert keep.X.shape == (277, 9) and len(keep.nominal) == 8
    assert np.array_equal(onehot.X, plain.X) and onehot.X.shape[1] > 9 and onehot.nominal == ()
    assert np.array_equal(keep.y, plain.y)
    # datasets.csv: d counts attributes, columns the one-hot indicators, whichever view is read
    rows = [dataset_row("keel.breast", ds) for ds in (keep, onehot)]
    assert [(r["d"], r["nominal"], r["columns"]) for r in rows] == [(9, 8, onehot.X.shape[1])] * 2


@pytest.mark.parametrize("source", ["csv", "german"])
def test_datasets_csv_counts_the_attributes_of_a_one_hot_view_as_of_the_codes(tmp_path, source):
    """A CSV's text column and bundled german's 13 nominal attributes were not counted
    in the one-hot view an entry without categorical gives: d = 2 and 7 (the numeric
    attributes only) and nominal 0 for the CSV, where categorical: keep says 3 and 20.
    Oracle: the file's columns, and the view of codes."""
    if source == "csv":
        rng = np.random.default_rng(4)
        pd.DataFrame(
            {
                "a": rng.normal(size=40),
                "c": rng.choice(["r", "g", "b"], 40),
                "b": rng.normal(size=40),
                "label": rng.choice(["y", "n"], 40),
            }
        ).to_csv(tmp_path / "m.csv", index=False)
        entry = {"csv": str(tmp_path / "m.csv")}
        expected = (3, 1, 5)  # a, c, b; c nominal; a, b and c's three indicators
    else:
        entry, expected = {"name": "german"}, (20, 13, 61)
    onehot, keep = load_dataset(entry), load_dataset({**entry, "categorical": "keep"})
    assert onehot.nominal == () and len(keep.nominal) == expected[1] and keep.X.shape[1] == expected[0]
    rows = [dataset_row("x", ds) for ds in (onehot, keep)]
    assert [(r["d"], r["nominal"], r["columns"]) for r in rows] == [expected] * 2
    typed = [keep.feature_names[j] for j in keep.nominal]
    assert onehot.metadata["nominal_attributes"] == typed


def test_datasets_csv_and_the_report_say_what_each_contestant_read(three_runs):
    out = three_runs / "auto"
    table = read_datasets(out / "datasets.csv")
    said = "knn_hvdm, knn_heom_tuned, encode_knn: nominal codes; knn_euclidean, scale_knn, tree: one-hot"
    assert table.loc["keel.breast", "views"] == said
    # bundled heart's number readers read thal 3/6/7 and the others as its file holds them
    assert table.loc["heart", "views"] == said.replace("one-hot", "numbers as filed")
    assert table.loc["mixed", "views"] == said
    html = (out / "report.html").read_text()
    section = html[html.index("id='datasets'") :]
    assert said in section[: section.index("</table>")]


def test_a_rerun_of_the_views_has_nothing_to_do(three_runs, tmp_path):
    """OUT/spec.yaml run again into its folder: every cell (each in its view) is done."""
    spec = tmp_path / "again.yaml"
    spec.write_text((three_runs / "auto" / "spec.yaml").read_text())
    summary = run_spec(spec, out=three_runs / "auto", report=False, figures=False)
    assert (summary.n_run, summary.n_skipped) == (0, summary.n_cells)


def test_a_worker_loads_the_view_its_cell_reads(three_runs):
    """A worker process finds a cell's dataset through its DataRef: in the cell's view,
    with the checksum of the data validation loaded (no lending here: loaded anew)."""
    from knnx.experiment.cells import data_ref
    from knnx.experiment.context import ProcessContext
    from knnx.spec import validate_spec

    vspec = validate_spec(three_runs / "auto" / "spec.yaml")
    for cell in vspec.cells[:: len(vspec.cells) // 40]:
        ref = data_ref(vspec, cell)
        ds = ProcessContext().dataset(ref)
        expected = vspec.dataset_of(cell)
        assert ref.view == ("keep" if cell.algorithm in CODES else "")
        assert np.array_equal(ds.X, expected.X, equal_nan=True) and ds.nominal == expected.nominal


def test_onehot_of_codes_equals_scikit_learn():
    """A loader's nominal codes as indicators: scikit-learn's OneHotEncoder with the
    categories 0..max of each column, in place; NaN in each indicator of a missing
    value."""
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.integers(0, 4, 50), rng.normal(size=50), rng.integers(0, 3, 50)]).astype(float)
    ds = make_dataset("t", X, rng.integers(0, 2, 50), np.array(["a", "b"], dtype=object), ["c1", "x", "c2"])
    from dataclasses import replace

    ds = replace(ds, nominal=(0, 2))
    got = onehot_of_codes(ds)
    enc = OneHotEncoder(categories=[np.arange(4), np.arange(3)], sparse_output=False)
    ind = enc.fit_transform(X[:, [0, 2]])
    assert np.array_equal(got.X, np.column_stack([ind[:, :4], X[:, 1], ind[:, 4:]]))
    assert got.feature_names == ("c1=0", "c1=1", "c1=2", "c1=3", "x", "c2=0", "c2=1", "c2=2")
    X[3, 0] = np.nan
    got = onehot_of_codes(replace(ds, X=X))
    assert np.isnan(got.X[3, :4]).all() and not np.isnan(got.X[3, 4:]).any()


def _loader_module(tmp_path):
    (tmp_path / "viewlab.py").write_text(
        textwrap.dedent(
            """\
            import numpy as np
            from knnx.datasets import make_dataset
            from dataclasses import replace

            def load(n=60, seed=0):
                rng = np.random.default_rng(seed)
                colour = rng.integers(0, 3, n).astype(float)
                size = rng.normal(size=n)
                colour[[4, 9]] = np.nan
                y = (colour == 1).astype(int) ^ (rng.random(n) < 0.2)
                ds = make_dataset("lab", np.column_stack([colour, size]), y, np.array(["no", "yes"], dtype=object),
                                  ["colour", "size"])
                return replace(ds, nominal=(0,), partitions={"3-fold": np.arange(n) % 3})
            """
        )
    )


@pytest.mark.parametrize(
    ("options", "n", "columns"),
    [
        ({"missing": "drop_rows"}, 58, ("colour", "size")),
        ({"missing": "fill", "fill_value": 2}, 60, ("colour", "size")),
        ({"missing": "keep"}, 60, ("colour", "size")),
        ({"missing": "drop_rows", "categorical": "onehot"}, 58, ("colour=0", "colour=1", "colour=2", "size")),
    ],
)
def test_a_loader_entry_takes_categorical_and_missing(tmp_path, options, n, columns):
    _loader_module(tmp_path)
    ds = load_dataset({"loader": "viewlab:load", **options}, base_dir=tmp_path)
    assert ds.n_samples == n and ds.feature_names == columns
    raw = load_dataset({"loader": "viewlab:load", "missing": "keep"}, base_dir=tmp_path)
    if options["missing"] == "drop_rows":  # the rows left and their partition folds
        keep = ~np.isnan(raw.X).any(axis=1)
        assert np.array_equal(ds.y, raw.y[keep])
        assert np.array_equal(ds.partitions["3-fold"], (np.arange(60) % 3)[keep])
    if options["missing"] == "fill":
        assert ds.X[4, 0] == 2.0 and ds.X[9, 0] == 2.0
    if options.get("categorical") == "onehot":
        assert np.array_equal(ds.X[:, :3], (raw.X[:, [0]][keep] == np.arange(3)).astype(float))
    # datasets.csv: 2 attributes (1 nominal) and 4 one-hot columns, codes or indicators alike
    row = dataset_row("lab", ds)
    assert (row["d"], row["nominal"], row["columns"]) == (2, 1, 4)


def test_a_loader_entry_without_categorical_gives_each_contestant_its_view(tmp_path):
    """A loader's nominal codes: kNN under hvdm reads them, a decision tree reads the
    one-hot indicators (before: refused), both on the entry's rows and folds."""
    _loader_module(tmp_path)
    entry = {"loader": "viewlab:load", "missing": "drop_rows", "id": "lab"}
    spec = _spec([entry], [CONTESTANTS["knn_hvdm"], CONTESTANTS["tree"]])
    spec["protocol"] = {"kind": "partitions", "scheme": "3-fold"}
    spec["python_path"] = ["."]
    (tmp_path / "s.yaml").write_text(__import__("yaml").safe_dump(spec))
    run_spec(tmp_path / "s.yaml", out=tmp_path / "out", report=False, figures=False)
    rows = _rows(tmp_path / "out")
    from sklearn.tree import DecisionTreeClassifier

    from knnx.spec import SEED_DATA, dataset_seedseq

    seed = dataset_seedseq(spec["seed"], "lab", SEED_DATA)  # the loader's seed in the run
    ds = load_dataset({**entry, "categorical": "onehot"}, seed=seed, base_dir=tmp_path)
    folds = ds.partitions["3-fold"]
    tree = rows[(rows.algorithm == "tree") & (rows.metric == "error")].sort_values("fold")
    for fold, value in zip(tree["fold"].astype(int), tree["value"].astype(float), strict=True):
        train, test = folds != fold, folds == fold
        pred = DecisionTreeClassifier(random_state=0).fit(ds.X[train], ds.y[train]).predict(ds.X[test])
        assert value == np.mean(pred != ds.y[test])
    assert read_datasets(tmp_path / "out" / "datasets.csv").loc["lab", "views"] == (
        "knn_hvdm: nominal codes; tree: one-hot"
    )


def test_treat_missing_error_names_the_cell():
    ds = make_dataset(
        "t",
        np.array([[1.0, np.nan], [2.0, 3.0]]),
        np.array([0, 1]),
        np.array(["a", "b"], dtype=object),
        ["u", "v"],
    )
    with pytest.raises(Exception, match=r"^w: column 'v' row 1 is missing"):
        treat_missing(ds, "error", None, "w")
    assert isinstance(treat_missing(ds, "keep", None, "w")[0], Dataset)


def _ids_module(tmp_path):
    """A loader whose nominal column holds raw ids (codes up to 1,200,000)."""
    (tmp_path / "idlab.py").write_text(
        textwrap.dedent(
            """\
            import numpy as np
            from knnx.datasets import make_dataset
            from dataclasses import replace

            def load():
                X = np.column_stack([np.arange(40) * 30000.0, np.arange(40) % 7])
                ds = make_dataset("ids", X, np.arange(40) % 2, np.array(["a", "b"], dtype=object), ["id", "v"])
                return replace(ds, nominal=(0,))
            """
        )
    )


def _text_csv(tmp_path, cells):
    lines = ["w,v,label"] + [f"{c},{i % 5},{'ab'[i % 2]}" for i, c in enumerate(cells)]
    (tmp_path / "t.csv").write_text("\n".join(lines) + "\n")


def _mixed_metric_on(entry):
    return f"datasets: [{entry}]\nalgorithms: [{{name: knn, params: {{k: 1, metric: hvdm}}}}]\n"


REFUSED = {
    "a mixed metric on explicit one-hot indicators": (
        "datasets: [{name: keel.breast, categorical: onehot, id: b}]\n"
        "algorithms: [{name: knn, params: {k: 1, metric: hvdm}}]\n",
        "datasets[0]: algorithms[0] (knn) on 'b': 'b' gives nominal attribute 'A1' as one-hot indicators "
        "(categorical: onehot), which metric 'hvdm' would read as numbers; leave categorical out of the dataset "
        "entry and knn reads its category codes",
    ),
    "a mixed metric on heart's filed numbers": (
        _mixed_metric_on("{name: heart, categorical: ordinal, id: h}"),
        "datasets[0]: algorithms[0] (knn) on 'h': 'h' gives nominal attribute 'sex' as numbers (categorical: "
        "ordinal), which metric 'hvdm' would read as numbers; leave categorical out of the dataset entry and knn "
        "reads its category codes",
    ),
    "a mixed metric on heart's explicit onehot (its filed numbers too)": (
        _mixed_metric_on("{name: heart, categorical: onehot, id: h}"),
        "datasets[0]: algorithms[0] (knn) on 'h': 'h' gives nominal attribute 'sex' as numbers "
        "(categorical: onehot), which metric 'hvdm' would read as numbers; leave categorical out of the dataset "
        "entry and knn reads its category codes",
    ),
    "a mixed metric on german's ordinal codes": (
        _mixed_metric_on("{name: german, categorical: ordinal, id: g}"),
        "datasets[0]: algorithms[0] (knn) on 'g': 'g' gives nominal attribute 'A1' as numbers "
        "(categorical: ordinal), which metric 'hvdm' would read as numbers; leave categorical out of the dataset "
        "entry and knn reads its category codes",
    ),
    "a mixed metric on a loader's ordinal codes": (
        _mixed_metric_on("{loader: 'viewlab:load', categorical: ordinal, missing: keep, id: lab}"),
        "datasets[0]: algorithms[0] (knn) on 'lab': 'lab' gives nominal attribute 'colour' as numbers (categorical: "
        "ordinal), which metric 'hvdm' would read as numbers; leave categorical out of the dataset entry and knn "
        "reads its category codes",
    ),
    "a loader's raw ids as a one-hot view (said once)": (
        "datasets: [{loader: 'idlab:load', id: ids}]\n"
        "algorithms: [{id: tree, estimator: 'sklearn.tree:DecisionTreeClassifier'}]\n",
        "datasets[0]: its onehot view: ids: nominal column 'id' (codes 0..1170000) would be 1,170,001 one-hot "
        "indicators; a nominal attribute has at most 65,536 categories",
    ),
    "a tuned grid over metrics of two views": (
        "datasets: [keel.breast]\n"
        "algorithms: [{name: knn, params: {k: [1, 3], metric: [hvdm, euclidean]}, tune: {cv: 3}}]\n",
        "datasets[0]: algorithms[0] (knn) on 'keel.breast': its tune: grid holds metrics that take different views "
        "of the nominal attributes (codes and one-hot indicators); tune them in two algorithm entries",
    ),
    "a loader's unknown categorical": (
        "datasets: [{loader: 'viewlab:load', categorical: dummies}]\nalgorithms: [{name: knn}]\n",
        "datasets[0]: categorical: expected one of keep, onehot, ordinal, got 'dummies'",
    ),
    "a loader's fill without a value": (
        "datasets: [{loader: 'viewlab:load', missing: fill}]\nalgorithms: [{name: knn}]\n",
        "datasets[0]: missing: fill needs a numeric fill_value",
    ),
    "a loader's fill that is not a code": (
        "datasets: [{loader: 'viewlab:load', missing: fill, fill_value: 7}]\nalgorithms: [{name: knn}]\n",
        "datasets[0]: loader viewlab:load: missing: fill writes 7 into nominal column 'colour', whose category "
        "codes are 0..2; use missing: keep (a metric with a missing-value rule), drop_rows, or a fill_value that "
        "is a code",
    ),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_bad_views_are_refused_in_one_line(tmp_path, case):
    _loader_module(tmp_path)
    _ids_module(tmp_path)
    body, message = REFUSED[case]
    spec = tmp_path / "s.yaml"
    spec.write_text("name: bad\npython_path: ['.']\nprotocol: {kind: kfold, folds: 3}\n" + body)
    refused_by_cli(tmp_path, spec, message)


def test_a_class_of_ones_own_with_a_nominal_parameter_reads_the_codes(tmp_path):
    """A class with a ``nominal`` parameter and no ``metric`` declares that it takes
    codes: on an entry without ``categorical`` it reads them (and is told which columns
    hold them); a class without one reads the one-hot indicators."""
    (tmp_path / "codelab.py").write_text(
        textwrap.dedent(
            """\
            import numpy as np
            from sklearn.base import BaseEstimator, ClassifierMixin

            class Seen(ClassifierMixin, BaseEstimator):
                def __init__(self, nominal=None):
                    self.nominal = nominal

                def fit(self, X, y):
                    self.classes_ = np.unique(y)
                    self.reported_ = {"columns": float(X.shape[1]), "told": float(len(getattr(self, "nominal", None) or []))}
                    return self

                def predict(self, X):
                    return np.full(len(X), self.classes_[0])

            class Plain(Seen):
                def __init__(self):
                    pass
            """
        )
    )
    spec = _spec(
        ["keel.breast"],
        [{"estimator": "codelab:Seen", "id": "seen"}, {"estimator": "codelab:Plain", "id": "plain"}],
    )
    spec["python_path"] = ["."]
    (tmp_path / "s.yaml").write_text(__import__("yaml").safe_dump(spec))
    run_spec(tmp_path / "s.yaml", out=tmp_path / "out", report=False)
    rows = _rows(tmp_path / "out")
    got = rows[rows.metric.isin(["columns", "told"])].groupby(["algorithm", "metric"])["value"].unique()
    onehot = load_dataset("keel.breast").n_features
    assert {k: [float(v) for v in vs] for k, vs in got.items()} == {
        ("plain", "columns"): [float(onehot)],
        ("plain", "told"): [0.0],
        ("seen", "columns"): [9.0],
        ("seen", "told"): [8.0],
    }


@pytest.mark.parametrize(
    ("cells", "message"),
    [
        (
            [f"{90 + i % 4}kg" for i in range(24)],
            "datasets[0]: {csv}: column 'w' line 2: '90kg' is a number written with text; write the column as "
            "numbers, or say categorical: onehot (or keep) to read them as categories all the same",
        ),
        (
            [f"id{i}" for i in range(24)],
            "datasets[0]: {csv}: column 'w': each of the column's 24 texts is different (an identifier?); remove "
            "the column, or say categorical: onehot (or keep) to read them as categories all the same",
        ),
    ],
)
def test_a_csv_text_column_that_is_no_attribute_is_refused(tmp_path, cells, message):
    """A CSV entry that does not say categorical reads a text column as a nominal
    attribute, but not numbers with units nor identifiers (a column of 24 ids would be
    24 one-hot indicators, 100,000 ids 100,000): said in one line; with categorical the
    column is read as categories all the same."""
    _text_csv(tmp_path, cells)
    spec = tmp_path / "s.yaml"
    spec.write_text(
        "name: t\nprotocol: {kind: kfold, folds: 3}\ndatasets: [{csv: t.csv}]\nalgorithms: [{name: knn}]\n"
    )
    refused_by_cli(tmp_path, spec, message.format(csv=tmp_path / "t.csv"))
    said = load_dataset({"csv": str(tmp_path / "t.csv"), "categorical": "onehot"})
    assert said.X.shape == (24, len(set(cells)) + 1)


def test_text_columns_that_are_categories_load_as_nominal(tmp_path):
    """Categories named by text, digits inside ('A11', 'A12') included, stay nominal
    attributes; 20 rows with a category each is not an identifier below 20 rows."""
    _text_csv(tmp_path, [f"A1{i % 4}" for i in range(30)])
    ds = load_dataset({"csv": str(tmp_path / "t.csv")})
    assert ds.feature_names == ("w=A10", "w=A11", "w=A12", "w=A13", "v")
    assert np.array_equal(ds.X[:, :4], (np.arange(30)[:, None] % 4 == np.arange(4)).astype(float))
    _text_csv(tmp_path, [f"id{i}" for i in range(19)])
    assert load_dataset({"csv": str(tmp_path / "t.csv")}).X.shape == (19, 20)


def test_plain_vote_gives_hvdm_the_abstention_as_a_category(tmp_path):
    """Bundled vote without categorical: kNN under hvdm reads each vote as n, y or '?'
    (code 2), kNN under euclidean its filed 0/1 with 0.5 for '?' -- the same cells."""
    spec = _spec(["vote"], [CONTESTANTS["knn_hvdm"], CONTESTANTS["knn_euclidean"]])
    run_spec(spec, out=tmp_path / "out", report=False)
    rows = _rows(tmp_path / "out")
    kept = {**spec, "datasets": [{"name": "vote", "categorical": "keep", "id": "vote"}]}
    kept["algorithms"] = [CONTESTANTS["knn_hvdm"]]
    run_spec(kept, out=tmp_path / "keep", report=False)
    hvdm = rows[rows.algorithm == "knn_hvdm"].reset_index(drop=True)
    pd.testing.assert_frame_equal(hvdm[KEY + ["value"]], _rows(tmp_path / "keep")[KEY + ["value"]])
    assert read_datasets(tmp_path / "out" / "datasets.csv").loc["vote", "views"] == (
        "knn_hvdm: nominal codes; knn_euclidean: numbers as filed"
    )
