"""Hostile plugin datasets and tuning (issue 33, items 6-9): a loader's Dataset checked as
a CSV dataset is, one missing-label rule for every source, ``tune.cv`` checked on every
training part, and a tuned grid whose settings fail as scikit-learn's GridSearchCV
scores them (``error_score=np.nan``)."""

import sys
import textwrap
import warnings
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from conftest import fresh_package
from sklearn.base import BaseEstimator, ClassifierMixin
from typer.testing import CliRunner

from knnx.cli import app
from knnx.datasets import load_dataset, make_dataset
from knnx.errors import DataError

runner = CliRunner()


@pytest.fixture(autouse=True)
def _fresh_mylab(monkeypatch):
    """Each test writes its own ``mylab`` package beside its spec: forget the last one."""
    yield from fresh_package(monkeypatch, "mylab")


DATA = """\
import numpy as np
import pandas as pd
from dataclasses import replace
from knnx.datasets import make_dataset

X = np.arange(40, dtype=float).reshape(20, 2)
Y = np.array([0, 1] * 10)


def ds(y=Y, classes=("a", "b"), split=None, names=("f0", "f1"), X=X, **more):
    d = make_dataset("d", X, y, list(classes), list(names), split=split)
    return replace(d, **more) if more else d


def split_past():
    return ds(split=(np.arange(10), np.arange(10, 25)))


def split_negative():
    return ds(split=(np.arange(10), np.array([-1, 12, 13])))


def split_twice():
    return ds(split=(np.array([0, 1, 2, 2, 3]), np.arange(10, 20)))


def split_overlap():
    return ds(split=(np.arange(12), np.arange(10, 20)))


def split_empty_test():
    return ds(split=(np.arange(20), np.arange(0)))


def split_empty_train():
    return ds(split=(np.arange(0), np.arange(20)))


def split_floats():
    return replace(ds(), split=(np.arange(10) + 0.5, np.arange(10, 20)))


def split_not_a_pair():
    return replace(ds(), split=(np.arange(10),))


def code_past():
    y = Y.copy()
    y[3] = 5
    return ds(y=y)


def code_negative():
    y = Y.copy()
    y[3] = -1
    return ds(y=y)


def code_fraction():
    return replace(ds(), y=np.where(Y == 1, 0.5, 0.0))


def code_text():
    return replace(ds(), y=np.array(["a", "b"] * 10, dtype=object))


def codes_short():
    return replace(ds(), y=Y[:5])


def classes_twice():
    return ds(classes=("a", "a"))


def classes_nan():
    return ds(classes=("a", "nan"))


def classes_none():
    return ds(classes=("a", None))


def classes_pd_na():
    return ds(classes=("a", pd.NA))


def names_short():
    return replace(ds(), feature_names=("f0",))


def names_twice():
    return ds(names=("f", "f"))


def names_blank():
    return ds(names=("f0", " "))


def names_newline():
    return ds(names=("f0", "a\\nb"))


def posterior_not_callable():
    return replace(ds(), posterior=3)


def partitions_out_of_range():
    return replace(ds(), partitions={"2-fold": np.array([0, 1] * 9 + [2, 0])})


def partitions_bad_name():
    return replace(ds(), partitions={"halves": np.array([0, 1] * 10)})


def partitions_short():
    return replace(ds(), partitions={"2-fold": np.array([0, 1] * 5)})


def partitions_ok():
    return replace(ds(), partitions={"2-fold": np.array([0] * 10 + [1] * 10)})


def split_ok():
    return ds(split=(np.array([5, 0, 1, 2, 3, 4]), np.arange(6, 20)))


def label_text_nan():
    return X, np.where(Y == 0, "a", "nan")


def label_empty():
    return X, np.where(Y == 0, "a", "")


def label_blank():
    return X, np.where(Y == 0, "a", "  ")


def label_pd_na():
    labels = pd.array(["a", "b"] * 10, dtype="string")
    labels[3] = pd.NA
    return X, labels


def label_none():
    labels = ["a", "b"] * 10
    labels[3] = None
    return X, labels


def label_float_nan():
    labels = [0.0, 1.0] * 10
    labels[3] = float("nan")
    return X, np.array(labels)


def label_float32_nan():
    labels = [np.float32(0.0), np.float32(1.0)] * 10
    labels[3] = np.float32("nan")
    return X, labels


def label_minus_nan():
    return X, np.where(Y == 0, "a", " -NaN ")


def exits():
    import sys

    sys.exit(3)


class Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("no text")


def unprintable():
    raise Unprintable()


def rare(n=40, n_rare=12):
    rng = np.random.default_rng(1)
    return rng.standard_normal((n, 2)), np.array(["b"] * n_rare + ["a"] * (n - n_rare))
"""


def _write_data(tmp_path):
    (tmp_path / "mylab").mkdir(exist_ok=True)
    (tmp_path / "mylab" / "__init__.py").write_text("")
    (tmp_path / "mylab" / "data.py").write_text(DATA)


def _refused(tmp_path, text, message):
    """``knnx validate`` and ``knnx run`` on the YAML ``text``: exit 2, the one line
    ``error: SPEC: message``, nothing written."""
    spec = tmp_path / "s.yaml"
    spec.write_text(textwrap.dedent(text))
    before = sorted(p.name for p in tmp_path.rglob("*") if "__pycache__" not in p.parts)
    for args in (["validate", str(spec)], ["run", str(spec), "--quiet", "--out", str(tmp_path / "out")]):
        result = runner.invoke(app, args)
        assert (result.exit_code, result.output) == (2, f"error: {spec}: {message}\n")
    assert sorted(p.name for p in tmp_path.rglob("*") if "__pycache__" not in p.parts) == before


def _spec(loader, protocol="{kind: kfold, folds: 2}"):
    return (
        f"name: t\ndatasets: [{{loader: 'mylab.data:{loader}'}}]\nprotocol: {protocol}\n"
        "algorithms: [{name: knn}]\n"
    )


# --- item 6: a loader's Dataset passes the checks a CSV dataset passes ------------------

L = "datasets[0]: loader mylab.data:"
BAD_DATASETS = [
    ("split_past", f"{L}split_past: split: the test part holds row 20, not a row of X (0..19)"),
    ("split_negative", f"{L}split_negative: split: the test part holds row -1, not a row of X (0..19)"),
    ("split_twice", f"{L}split_twice: split: the training part lists row 2 twice"),
    ("split_overlap", f"{L}split_overlap: split: row 10 is in both the training and the test part"),
    (
        "split_empty_test",
        f"{L}split_empty_test: split: the test part is empty; a predefined split needs rows in both parts",
    ),
    (
        "split_empty_train",
        f"{L}split_empty_train: split: the training part is empty; a predefined split needs rows in both parts",
    ),
    (
        "split_floats",
        f"{L}split_floats: split: the training part must be a 1-D array of integer row indices, "
        "got dtype float64 and shape (10,)",
    ),
    (
        "split_not_a_pair",
        f"{L}split_not_a_pair: split must be (training row indices, test row indices) or None, got a tuple of 1",
    ),
    ("code_past", f"{L}code_past: y[3] is 5; y holds class codes 0..1, one per entry of classes"),
    ("code_negative", f"{L}code_negative: y[3] is -1; y holds class codes 0..1, one per entry of classes"),
    ("code_fraction", f"{L}code_fraction: y[1] is 0.5; y holds class codes 0..1, one per entry of classes"),
    ("code_text", f"{L}code_text: y[0] is 'a'; y holds class codes 0..1, one per entry of classes"),
    ("codes_short", f"{L}codes_short: y must hold one label per row of X (20), got shape (5,)"),
    ("classes_twice", f"{L}classes_twice: classes[1] repeats classes[0] ('a'); name each class once"),
    (
        "classes_nan",
        f"{L}classes_nan: classes[1]: class label 'nan' reads as a missing label; give the class",
    ),
    ("classes_none", f"{L}classes_none: classes[1]: missing class label"),
    ("classes_pd_na", f"{L}classes_pd_na: classes[1]: missing class label"),
    ("names_short", f"{L}names_short: feature_names has 1 name(s) for the 2 columns of X"),
    (
        "names_twice",
        f"{L}names_twice: feature_names[1] 'f' is given twice; each column has a name of its own",
    ),
    ("names_blank", f"{L}names_blank: feature_names[1] is ' '; a name is text without control characters"),
    (
        "names_newline",
        f"{L}names_newline: feature_names[1] is 'a\\nb'; a name is text without control characters",
    ),
    (
        "posterior_not_callable",
        f"{L}posterior_not_callable: posterior must be a function of X or None, got int",
    ),
    (
        "partitions_out_of_range",
        f"{L}partitions_out_of_range: partitions['2-fold'][18] is 2; the folds of 2-fold are 0..1",
    ),
    (
        "partitions_bad_name",
        f"{L}partitions_bad_name: partitions: 'halves' is not a scheme name such as '10-fold'",
    ),
    (
        "partitions_short",
        f"{L}partitions_short: partitions['2-fold'] must hold one fold per row of X (20), got shape (10,)",
    ),
]


@pytest.mark.parametrize(("loader", "message"), BAD_DATASETS, ids=[c[0] for c in BAD_DATASETS])
def test_a_bad_loader_dataset_is_one_line_before_any_cell(tmp_path, loader, message):
    _write_data(tmp_path)
    protocol = "{kind: predefined}" if loader.startswith("split") else "{kind: kfold, folds: 2}"
    _refused(tmp_path, _spec(loader, protocol), message)


@pytest.mark.parametrize(
    ("loader", "message"),
    [
        ("exits", "the loader raised SystemExit: sys.exit(3) called"),
        ("unprintable", "the loader raised Unprintable: (its message cannot be printed)"),
    ],
)
def test_a_loader_that_exits_or_cannot_print_its_error_is_one_line(tmp_path, loader, message):
    _write_data(tmp_path)
    _refused(tmp_path, _spec(loader), f"{L}{loader}: {message}")


def test_a_good_loader_dataset_keeps_its_split_and_partitions(tmp_path, monkeypatch):
    from knnx.spec import validate_spec

    _write_data(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    ds = load_dataset({"loader": "mylab.data:split_ok"})
    assert ds.split[0].tolist() == [5, 0, 1, 2, 3, 4] and ds.split[1].tolist() == list(range(6, 20))
    spec = tmp_path / "s.yaml"
    spec.write_text(_spec("split_ok", "{kind: predefined}"))
    (s,) = validate_spec(spec).splits[0]
    assert (s.train.tolist(), s.test.tolist()) == ([0, 1, 2, 3, 4, 5], list(range(6, 20)))
    spec.write_text(_spec("partitions_ok", "{kind: partitions, scheme: 2-fold}"))
    first, second = validate_spec(spec).splits[0]
    assert (first.train.tolist(), first.test.tolist()) == (list(range(10, 20)), list(range(10)))
    assert (second.train.tolist(), second.test.tolist()) == (list(range(10)), list(range(10, 20)))


def test_every_source_goes_through_one_check(monkeypatch, tmp_path):
    """The check of :func:`knnx.datasets.checks.check_dataset` runs on the Dataset of every
    form of entry (here: refusing everything, it names each source)."""
    from knnx.datasets import checks

    real = checks.check_dataset
    seen = []

    def spy(ds, where, **kw):
        seen.append(where)
        return real(ds, where, **kw)

    monkeypatch.setattr(checks, "check_dataset", spy)
    _write_data(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "d.csv").write_text("a,label\n1,x\n2,y\n")
    load_dataset("iris")
    load_dataset("keel.iris")
    load_dataset({"csv": str(tmp_path / "d.csv")})
    load_dataset({"synthetic": "blobs", "n": 20})
    load_dataset({"loader": "mylab.data:split_ok"})
    assert seen == [
        "dataset 'iris'",
        "dataset 'keel.iris'",
        str(tmp_path / "d.csv"),
        "synthetic blobs",
        "loader mylab.data:split_ok",
    ]


def test_an_empty_partition_fold_is_refused_by_the_protocol():
    from knnx.errors import SpecError
    from knnx.evaluation.protocols import partitions

    ds = make_dataset("d", np.zeros((6, 1)), [0, 1] * 3, ["a", "b"], ["f"])
    ds = replace(ds, partitions={"3-fold": np.array([0, 0, 0, 2, 2, 2])})
    with pytest.raises(SpecError) as err:
        partitions(ds, None, "3-fold")
    assert str(err.value) == (
        "protocol.kind partitions: fold 1 of the 3-fold partition of dataset 'd' tests no row; use kfold"
    )
    ds = replace(ds, partitions={"1-fold": np.zeros(6, dtype=int)})
    with pytest.raises(SpecError) as err:
        partitions(ds, None, "1-fold")
    assert str(err.value) == (
        "protocol.kind partitions: fold 0 of the 1-fold partition of dataset 'd' trains on no row; use kfold"
    )


# --- item 7: one missing-label rule for every source ------------------------------------

LABELS = [
    ("label_text_nan", "y[1]: class label 'nan' reads as a missing label; give the class"),
    ("label_minus_nan", "y[1]: class label ' -NaN ' reads as a missing label; give the class"),
    ("label_empty", "y[1]: missing class label"),
    ("label_blank", "y[1]: missing class label"),
    ("label_pd_na", "y[3]: missing class label"),
    ("label_none", "y[3]: missing class label"),
    ("label_float_nan", "y[3]: missing class label"),
    ("label_float32_nan", "y[3]: missing class label"),
]


@pytest.mark.parametrize(("loader", "message"), LABELS, ids=[c[0] for c in LABELS])
def test_a_missing_label_from_a_loader_is_refused_as_in_a_csv_file(tmp_path, loader, message):
    _write_data(tmp_path)
    _refused(tmp_path, _spec(loader), f"{L}{loader}: {message}")


def test_a_registered_dataset_follows_the_same_label_rule(monkeypatch):
    from knnx import datasets

    monkeypatch.setattr(datasets, "REGISTERED", {})
    datasets.register_dataset("nanlab", lambda: (np.zeros((4, 1)), ["a", "NaN", "a", "NaN"]))
    with pytest.raises(DataError) as err:
        load_dataset("nanlab")
    assert (
        str(err.value) == "dataset 'nanlab': y[1]: class label 'NaN' reads as a missing label; give the class"
    )


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (None, "missing class label"),
        (float("nan"), "missing class label"),
        (np.float32("nan"), "missing class label"),
        (pd.NA, "missing class label"),
        (pd.NaT, "missing class label"),
        ("", "missing class label"),
        (" \t", "missing class label"),
        ("nan", "class label 'nan' reads as a missing label; give the class"),
        ("+NaN", "class label '+NaN' reads as a missing label; give the class"),
        ("NA", None),
        ("x", None),
        (0, None),
        (1.5, None),
        ("nana", None),
    ],
)
def test_the_missing_label_rule(value, problem):
    from knnx.datasets._base import label_problem

    assert label_problem(value) == problem


def test_a_blank_label_in_a_csv_file_is_missing(tmp_path):
    (tmp_path / "d.csv").write_text("a,label\n1,x\n2, \n3,y\n")
    with pytest.raises(DataError) as err:
        load_dataset({"csv": str(tmp_path / "d.csv")})
    assert str(err.value) == f"{tmp_path / 'd.csv'}: column 'label' line 3: missing class label"


# --- item 8: tune.cv checked on every training part -------------------------------------


def test_tune_cv_is_checked_on_every_repeat(tmp_path):
    """Unstratified folds, seed 2: repeat 0's training parts hold 7 and 5 rows of class
    'b', repeat 1's first only 4, fewer than the 5 inner folds."""
    _write_data(tmp_path)
    text = (
        "name: t\nseed: 2\ndatasets: [{loader: 'mylab.data:rare', id: rare}]\n"
        "protocol: {kind: kfold, folds: 2, repeats: 3, stratified: false}\n"
        "algorithms: [{name: knn, params: {k: [1, 3]}, tune: {cv: 5}}]\n"
    )
    _refused(
        tmp_path,
        text,
        "algorithms[0].tune.cv: 5 stratified inner folds need 5 rows of each class in every "
        "training part; the training part of repeat 1 fold 0 of 'rare' has 4 of class 'b'",
    )


# --- item 9: a failing setting of a tuned grid scores NaN, as in GridSearchCV -----------


def _failing(k_fails=(), predict_fails=()):
    from knnx import KNNClassifier

    class Fragile(KNNClassifier):
        def fit(self, X, y):
            if self.k in k_fails:
                raise RuntimeError(f"no fit for k={self.k}")
            return super().fit(X, y)

        def predict(self, X):
            if self.k in predict_fails:
                raise ArithmeticError("no predict\nsecond line")
            return super().predict(X)

    return Fragile


def _grid_search(cls, grid, X, y, cv, seed):
    from sklearn.exceptions import FitFailedWarning
    from sklearn.model_selection import GridSearchCV, StratifiedKFold

    search = GridSearchCV(
        cls(), grid, cv=StratifiedKFold(cv, shuffle=True, random_state=seed), error_score=np.nan, refit=False
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FitFailedWarning)
        warnings.simplefilter("ignore", UserWarning)
        search.fit(X, y)
    return search.best_params_, int(np.isnan(search.cv_results_["mean_test_score"]).sum())


@pytest.mark.parametrize(("k_fails", "predict_fails"), [((1,), ()), ((), (1,)), ((1, 9), (3,))])
def test_a_failing_setting_is_skipped_as_grid_search_does(k_fails, predict_fails):
    from sklearn.datasets import make_classification
    from sklearn.exceptions import FitFailedWarning

    from knnx.evaluation.tuning import TuneTask, tune
    from knnx.spec.grids import tuned_settings

    X, y = make_classification(n_samples=90, n_features=4, random_state=3)
    grid = {"k": [1, 3, 5, 9]}
    cls = _failing(k_fails, predict_fails)
    task = TuneTask(cv=3, metric="error", settings=tuple(tuned_settings(grid)), seed=11)
    with pytest.warns(FitFailedWarning) as caught:
        best, chosen, failed = tune(lambda s: cls(**s), task, grid, X, y, 2)
    expected, n_failed = _grid_search(cls, grid, X, y, 3, 11)
    assert best == expected and chosen == {"k": float(expected["k"])}
    assert failed == n_failed == len(set(k_fails) | set(predict_fails))
    errors = {k: f"RuntimeError: no fit for k={k}" for k in k_fails}
    errors.update({k: "ArithmeticError: no predict" for k in predict_fails if k not in k_fails})
    assert [str(w.message) for w in caught] == [
        f"tune: setting (k={k}) failed on an inner fold and scores NaN: {errors[k]}" for k in sorted(errors)
    ]


def test_a_setting_whose_scoring_fails_is_skipped():
    from sklearn.exceptions import FitFailedWarning

    from knnx import KNNClassifier
    from knnx.evaluation.tuning import TuneTask, tune

    class NoProba(KNNClassifier):
        def predict_proba(self, X):
            if self.k == 1:
                raise ValueError("no probabilities")
            return super().predict_proba(X)

    X = np.r_[np.zeros((10, 1)), np.ones((10, 1))] + np.linspace(0, 0.5, 20)[:, None]
    y = np.array([0] * 10 + [1] * 10)
    task = TuneTask(cv=2, metric="log_loss", settings=({"k": 1}, {"k": 3}), seed=0)
    with pytest.warns(
        FitFailedWarning, match=r"^tune: setting \(k=1\) failed .*: ValueError: no probabilities$"
    ):
        best, chosen, failed = tune(lambda s: NoProba(**s), task, {"k": [1, 3]}, X, y, 2)
    assert (best, chosen, failed) == ({"k": 3}, {"k": 3.0}, 1)


class _Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("cannot print")


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.FitFailedWarning")
def test_every_setting_failing_fails_the_cell_with_the_first_error():
    from knnx import KNNClassifier
    from knnx.evaluation.tuning import TuneTask, tune

    class Broken(KNNClassifier):
        def fit(self, X, y):
            raise (_Unprintable() if self.k == 1 else RuntimeError("boom\nmore"))

    X, y = np.arange(20.0)[:, None], np.array([0, 1] * 10)
    task = TuneTask(cv=2, metric="error", settings=({"k": 3}, {"k": 1}), seed=0)
    with pytest.raises(ValueError) as err:
        tune(lambda s: Broken(**s), task, {"k": [3, 1]}, X, y, 2)
    assert str(err.value) == (
        "tune: every setting failed on the inner folds (2 of 2); first (k=3): RuntimeError: boom"
    )
    task = TuneTask(cv=2, metric="error", settings=({"k": 1},), seed=0)
    with pytest.raises(ValueError) as err:
        tune(lambda s: Broken(**s), task, {"k": [1]}, X, y, 2)
    assert str(err.value) == (
        "tune: every setting failed on the inner folds (1 of 1); first: _Unprintable: (its message cannot be printed)"
    )


def test_an_undefined_metric_still_fails_the_cell_and_is_not_a_failed_setting():
    from knnx.evaluation.tuning import TuneTask, tune

    X = np.arange(12, dtype=float)[:, None]
    y = np.array([0] * 10 + [1] * 2)  # 3 stratified folds: one holds no row of class 1
    cls = _failing(k_fails=(1,))
    task = TuneTask(cv=3, metric="auc", settings=({"k": 1}, {"k": 3}), seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="^tune.metric auc is undefined on inner fold"):
            tune(lambda s: cls(**s), task, {"k": [1, 3]}, X, y, 2)


def test_a_setting_that_exits_fails_alone_and_memory_errors_propagate():
    from sklearn.exceptions import FitFailedWarning

    from knnx import KNNClassifier
    from knnx.evaluation.tuning import TuneTask, tune

    class Exits(KNNClassifier):
        def fit(self, X, y):
            if self.k == 1:
                sys.exit(4)
            if self.k == 7:
                raise MemoryError
            return super().fit(X, y)

    X, y = np.arange(20.0)[:, None], np.array([0] * 10 + [1] * 10)
    task = TuneTask(cv=2, metric="error", settings=({"k": 1}, {"k": 3}), seed=0)
    with pytest.warns(
        FitFailedWarning, match=r"^tune: setting \(k=1\) .*: SystemExit: sys.exit\(4\) called$"
    ):
        assert tune(lambda s: Exits(**s), task, {"k": [1, 3]}, X, y, 2) == ({"k": 3}, {"k": 3.0}, 1)
    task = TuneTask(cv=2, metric="error", settings=({"k": 3}, {"k": 7}), seed=0)
    with pytest.raises(MemoryError):
        tune(lambda s: Exits(**s), task, {"k": [3, 7]}, X, y, 2)


class _Threshold(ClassifierMixin, BaseEstimator):
    """Predicts ``X[:, 0] > 0`` when ``cut`` is set, else class 0."""

    def __init__(self, cut=None):
        self.cut = cut

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        return (X[:, 0] > 0).astype(int) if self.cut is not None else np.zeros(len(X), dtype=int)


@pytest.mark.parametrize(
    ("grid", "expected"),
    [
        ([1, None], 0.0),  # 1 chosen, at position 0 (it read 1.0, as None at position 1 would)
        ([None, 1], 1.0),
        ([None, "a"], 1.0),
        ([2, 1], 2.0),  # numbers alone: by value (both are right: the first wins)
    ],
)
def test_a_chosen_value_reads_one_way_per_grid(grid, expected):
    """``chosen_cut`` of ``[1, None]`` read 1.0 whichever was chosen (1 as itself, None by
    its position): a grid holding a value that is no number is read by position."""
    from knnx.evaluation.tuning import TuneTask, tune
    from knnx.spec.grids import tuned_settings

    X = np.linspace(-1, 1, 60).reshape(-1, 1)
    y = (X[:, 0] > 0).astype(int)
    params = {"cut": grid}
    task = TuneTask(cv=3, metric="error", settings=tuple(tuned_settings(params)), seed=4)
    best, chosen, failed = tune(lambda s: _Threshold(**s), task, params, X, y, 2)
    assert best["cut"] is not None
    assert (chosen, failed) == ({"cut": expected}, 0)
