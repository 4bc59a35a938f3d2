"""The Sec. 6.3 contenders of Nock et al. (2014) (knnx.estimators.baselines: SVMRBF, SVMLinear, SGDBudget,
AdaBoostTrees) and the ``max_rows`` dataset option (stratified subsample, Letter's m = 2561)."""

import numpy as np
import pytest
from numpy.testing import assert_array_equal
from sklearn.datasets import make_blobs

from knnx import DataError
from knnx.datasets import check_entry, dataset_label, load_bundled, load_dataset
from knnx.datasets.bundled import subsample_rows
from knnx.estimators.baselines import SVMRBF, AdaBoostTrees, SGDBudget, SVMLinear

# --- max_rows ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "max_rows"), [("letter", 2561), ("ctg", 500), ("wine", 100), ("satimage", 999)]
)
def test_max_rows_keeps_class_shares_within_one_row(name, max_rows):
    full = load_bundled(name)
    sub = load_bundled(name, max_rows=max_rows)
    assert sub.n_samples == max_rows and sub.split is None
    share = np.bincount(full.y, minlength=full.n_classes) * max_rows / full.n_samples
    counts = np.bincount(sub.y, minlength=full.n_classes)
    assert np.all(np.abs(counts - share) < 1)
    assert sub.metadata["rows_kept"] == max_rows
    # the rows kept are rows of the full dataset, in file order, without repeats
    rows = {tuple(r) for r in full.X}
    assert all(tuple(r) in rows for r in sub.X[:50])


def test_max_rows_letter_counts_as_measured():
    sub = load_dataset({"name": "letter", "max_rows": 2561})
    # Letter's 26 classes have 734..813 rows of 20000; the first five get 101, 98, 94, 103, 98.
    assert np.bincount(sub.y)[:5].tolist() == [101, 98, 94, 103, 98]
    assert sub.name == "letter(max_rows=2561)"


def test_max_rows_is_deterministic_and_seeded():
    a = load_dataset({"name": "letter", "max_rows": 300}, seed=1)
    b = load_dataset({"name": "letter", "max_rows": 300}, seed=1)
    c = load_dataset({"name": "letter", "max_rows": 300}, seed=2)
    assert_array_equal(a.X, b.X)
    assert_array_equal(a.y, b.y)
    assert not np.array_equal(a.X, c.X)
    assert_array_equal(np.bincount(a.y), np.bincount(c.y))  # same quotas, other rows
    seq = np.random.SeedSequence(5)
    assert_array_equal(
        load_bundled("wine", max_rows=50, seed=seq).X, subsample_rows(load_bundled("wine"), 50, seq).X
    )


def test_max_rows_at_least_n_keeps_every_row_and_drops_the_split():
    full = load_bundled("ripley")
    assert full.split is not None
    sub = load_bundled("ripley", max_rows=5000)
    assert sub.split is None
    assert_array_equal(sub.X, full.X)
    assert_array_equal(sub.y, full.y)


def test_max_rows_largest_remainders_break_ties_by_class_code():
    # wine: 59 / 71 / 48 rows of 178; 10 rows -> shares 3.31, 3.99, 2.70 -> 3, 4, 3
    sub = load_bundled("wine", max_rows=10)
    assert np.bincount(sub.y).tolist() == [3, 4, 3]


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"name": "letter", "max_rows": "many"}, "max_rows: expected an integer >= 1, got 'many'"),
        ({"name": "letter", "max_rows": 0}, "max_rows: expected an integer >= 1, got 0"),
        ({"name": "letter", "max_rows": 2.5}, "max_rows: expected an integer >= 1, got 2.5"),
        ({"name": "letter", "max_rows": True}, "max_rows: expected an integer >= 1, got True"),
    ],
)
def test_max_rows_bad_values_name_the_option(entry, message):
    with pytest.raises(DataError) as err:
        check_entry(entry)
    assert str(err.value) == message
    with pytest.raises(DataError) as err:
        load_dataset(entry)
    assert str(err.value) == message


def test_max_rows_below_the_class_count_is_an_error():
    with pytest.raises(DataError) as err:
        load_dataset({"name": "letter", "max_rows": 25})
    assert str(err.value) == "letter: max_rows must be an integer >= 26 (the number of classes), got 25"
    with pytest.raises(DataError, match=r"^iris: max_rows must be an integer >= 3"):
        load_bundled("iris", max_rows=2)


def test_bundled_entries_take_no_seed():
    with pytest.raises(DataError) as err:
        load_dataset({"name": "letter", "max_rows": 300, "seed": 3})
    assert str(err.value) == "letter: unknown option 'seed'; bundled datasets are seeded by the spec"


def test_label_and_id():
    assert dataset_label({"name": "letter", "max_rows": 2561}) == "letter(max_rows=2561)"
    assert load_dataset({"name": "letter", "max_rows": 2561, "id": "letter"}).name == "letter"


# --- baselines --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def blobs():
    X, y = make_blobs(n_samples=120, centers=3, cluster_std=2.5, random_state=0)
    return X * [1.0, 100.0], np.array(["a", "b", "c"])[y]


@pytest.mark.parametrize(("budget", "expected"), [("T", 120), ("Tk/m", 7), ("2m", 240), ("3m", 360)])
def test_sgd_makes_exactly_its_budget_of_updates(blobs, budget, expected):
    X, y = blobs
    model = SGDBudget(budget=budget, k=7, seed=3).fit(X, y)
    assert model.n_updates_ == expected
    assert model.reported_ == {"n_updates": float(expected)}
    # scikit-learn's t_ counts the single-example updates of each one-vs-rest model (+ 1)
    assert model._model[-1].t_ == expected + 1


def test_sgd_is_deterministic_given_seed(blobs):
    X, y = blobs
    a, b = SGDBudget(budget="2m", seed=1).fit(X, y), SGDBudget(budget="2m", seed=1).fit(X, y)
    c = SGDBudget(budget="2m", seed=2).fit(X, y)
    assert_array_equal(a._model[-1].coef_, b._model[-1].coef_)
    assert not np.array_equal(a._model[-1].coef_, c._model[-1].coef_)


@pytest.mark.parametrize(("base", "rounds"), [("cart2", 120), ("cart3", 120), ("random3", 120)])
def test_adaboost_makes_m_rounds_by_default(blobs, base, rounds):
    X, y = blobs
    model = AdaBoostTrees(base=base, seed=0).fit(X, y)
    assert model.reported_ == {"rounds": float(rounds)}
    assert model._model.n_estimators == 120
    tree = model._model.estimators_[0]
    assert tree.max_depth == {"cart2": 2, "cart3": 3, "random3": 3}[base]
    assert tree.splitter == ("random" if base == "random3" else "best")


def test_adaboost_caps_and_stops():
    X, y = make_blobs(n_samples=200, centers=2, cluster_std=3.0, random_state=1)
    assert AdaBoostTrees(base="cart2", n_rounds=30).fit(X, y).reported_["rounds"] == 30
    assert AdaBoostTrees(base="cart2", max_rounds=12).fit(X, y).reported_["rounds"] == 12
    assert AdaBoostTrees(base="cart2", n_rounds=30, max_rounds=12).fit(X, y)._model.n_estimators == 12
    # an unbounded random tree fits the training rows exactly: AdaBoost stops after one round
    full = AdaBoostTrees(base="random_full", seed=0).fit(X, y)
    assert full.reported_["rounds"] == 1.0
    assert full.score(X, y) == 1.0


def test_adaboost_random_trees_follow_the_seed(blobs):
    X, y = blobs
    a = AdaBoostTrees(base="random3", n_rounds=20, seed=4).fit(X, y).predict(X)
    b = AdaBoostTrees(base="random3", n_rounds=20, seed=4).fit(X, y).predict(X)
    assert_array_equal(a, b)


def test_svm_rbf_reports_a_grid_point_and_scales_inside(blobs):
    X, y = blobs
    model = SVMRBF(seed=0).fit(X, y)
    assert model.reported_["best_C"] in SVMRBF.C_GRID
    assert model.reported_["best_gamma_factor"] == pytest.approx(
        min(SVMRBF.GAMMA_FACTORS, key=lambda f: abs(f - model.reported_["best_gamma_factor"]))
    )
    assert model.best_params_["gamma"] == pytest.approx(
        model.reported_["best_gamma_factor"] / 2
    )  # 1/(d var), d = 2
    # standardised inside: rescaling a feature changes nothing
    assert model._model.steps[0][0] == "standardscaler"
    rescaled = SVMRBF(seed=0).fit(X / [1.0, 100.0], y)
    assert_array_equal(rescaled.predict(X / [1.0, 100.0]), model.predict(X))
    assert rescaled.reported_ == model.reported_
    assert_array_equal(SVMRBF(seed=0).fit(X, y).predict(X), model.predict(X))


def test_single_class_predicts_it():
    X = np.arange(12.0).reshape(6, 2)
    for est in (SVMRBF(), SVMLinear(), SGDBudget(), AdaBoostTrees()):
        assert est.fit(X, ["z"] * 6).predict(X).tolist() == ["z"] * 6


@pytest.mark.parametrize(
    ("estimator", "message"),
    [
        (SGDBudget(budget="4m"), "SGDBudget: budget must be one of 'T', 'Tk/m', '2m', '3m', got '4m'"),
        (SGDBudget(k=0), "SGDBudget: k must be an integer in [1, 1000000], got 0"),
        (
            AdaBoostTrees(base="c45"),
            "AdaBoostTrees: base must be one of 'cart2', 'cart3', 'random3', 'random_full'",
        ),
        (
            AdaBoostTrees(n_rounds=0),
            "AdaBoostTrees: n_rounds must be an integer in [1, 100000] or None, got 0",
        ),
        (SVMRBF(cv=1), "SVMRBF: cv must be an integer in [2, 1000], got 1"),
        (SVMLinear(C=0), "SVMLinear: C must be a number in [1e-12, 1000000000000.0], got 0"),
    ],
)
def test_parameters_are_validated(blobs, estimator, message):
    X, y = blobs
    with pytest.raises(ValueError) as err:
        estimator.fit(X, y)
    assert str(err.value).startswith(message)
