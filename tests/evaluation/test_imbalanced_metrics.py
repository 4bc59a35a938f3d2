"""balanced_accuracy, g_mean, auc and mcc against scikit-learn, hand-worked values and a run."""

import warnings

import numpy as np
import pytest
from conftest import sk_g_mean
from numpy.testing import assert_allclose
from sklearn import metrics as skm

from knnx.evaluation.metrics import (
    LOWER_IS_BETTER,
    METRIC_INPUT,
    METRICS,
    auc,
    balanced_accuracy,
    g_mean,
    mcc,
)
from knnx.evaluation.scoring import needs_proba

TOL = 1e-12
NEW = ["balanced_accuracy", "g_mean", "auc", "mcc"]


def sk_auc(y_true, proba):
    """scikit-learn's binary AUC of column 1 for two columns; for more, its macro one-vs-rest
    AUC, taken over the classes present in ``y_true`` (the mean of its binary AUCs)."""
    if proba.shape[1] == 2:
        return skm.roc_auc_score(y_true, proba[:, 1])
    present = np.unique(y_true)
    if len(present) == proba.shape[1]:
        return skm.roc_auc_score(y_true, proba, multi_class="ovr", average="macro")
    return float(np.mean([skm.roc_auc_score(y_true == c, proba[:, c]) for c in present]))


SK_LABEL = {
    "balanced_accuracy": skm.balanced_accuracy_score,
    "g_mean": sk_g_mean,
    "mcc": skm.matthews_corrcoef,
}


def random_case(rng):
    """``(y_true, y_pred, proba)``: 2 to 5 classes, 2 to 80 points, of one of several
    shapes: uniform labels, a class absent from ``y_true`` (but predicted), a
    majority class, perfect or constant predictions; probabilities continuous
    (Dirichlet rows) or vote shares of k neighbours (many exact ties)."""
    n_classes, n = int(rng.integers(2, 6)), int(rng.integers(2, 81))
    shape = rng.choice(["uniform", "absent", "skewed", "perfect", "constant"])
    weights = np.ones(n_classes)
    if shape == "absent" and n_classes > 2:
        weights[rng.integers(n_classes)] = 0.0
    if shape == "skewed":
        weights[rng.integers(n_classes)] = 10.0
    y_true = rng.choice(n_classes, n, p=weights / weights.sum())
    y_pred = rng.integers(0, n_classes, n)
    if shape == "perfect":
        y_pred = y_true.copy()
    elif shape == "constant":
        y_pred = np.full(n, rng.integers(n_classes))
    if rng.random() < 0.5:
        proba = rng.dirichlet(np.ones(n_classes), size=n)
    else:
        k = int(rng.choice([1, 3, 5, 10]))
        proba = np.array([rng.multinomial(k, rng.dirichlet(np.ones(n_classes))) for _ in range(n)]) / k
    if shape == "perfect":  # the true class scores above every other
        proba = np.full((n, n_classes), 0.1 / max(n_classes - 1, 1))
        proba[np.arange(n), y_true] = 0.9
    elif shape == "constant":
        proba = np.full((n, n_classes), 1 / n_classes)
    return y_true, y_pred, proba


def test_the_four_are_registered_higher_is_better():
    assert set(NEW) <= set(METRICS)
    assert {m: METRIC_INPUT[m] for m in NEW} == {
        "balanced_accuracy": "label",
        "g_mean": "label",
        "auc": "proba",
        "mcc": "label",
    }
    assert not any(LOWER_IS_BETTER.get(m, False) for m in NEW)
    assert needs_proba(["auc"]) and not needs_proba(["balanced_accuracy", "g_mean", "mcc"])


@pytest.mark.parametrize("name", sorted(SK_LABEL))
def test_label_metrics_equal_sklearn_on_random_cases(name):
    rng = np.random.default_rng(20240611)
    for case in range(500):
        y_true, y_pred, _ = random_case(rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "y_pred contains classes not in y_true"
            expected = SK_LABEL[name](y_true, y_pred)
        assert_allclose(METRICS[name](y_true, y_pred), expected, rtol=0, atol=TOL, err_msg=f"case {case}")


def test_auc_equals_sklearn_on_random_cases():
    rng = np.random.default_rng(7)
    undefined = 0
    for case in range(500):
        y_true, _, proba = random_case(rng)
        if len(np.unique(y_true)) < 2:  # no ROC curve: NaN, as scikit-learn's
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                assert np.isnan(skm.roc_auc_score(y_true == y_true[0], proba[:, 0]))
            assert np.isnan(auc(y_true, proba))
            undefined += 1
            continue
        assert_allclose(auc(y_true, proba), sk_auc(y_true, proba), rtol=0, atol=TOL, err_msg=f"case {case}")
    assert 0 < undefined < 50  # the single-class case occurs, and rarely


def test_binary_auc_uses_column_one_even_when_rows_are_not_exact_complements():
    # column 0 is 1 - column 1 only to within 1e-7: scikit-learn's binary score reads column 1
    y_true = np.array([0, 1, 0, 1, 1, 0])
    p1 = np.array([0.2, 0.7, 0.7, 0.9, 0.4, 0.1])
    proba = np.column_stack([1 - p1 + np.array([1e-7, 0, -1e-7, 0, 0, 0]), p1])
    assert auc(y_true, proba) == skm.roc_auc_score(y_true, p1)


def test_hand_worked_balanced_accuracy_and_g_mean():
    y_true = np.array([0, 0, 0, 0, 1, 1])
    y_pred = np.array([0, 0, 0, 1, 1, 0])
    # recall of class 0: 3/4, of class 1: 1/2; balanced accuracy (3/4 + 1/2) / 2 = 0.625
    assert balanced_accuracy(y_true, y_pred) == 0.625
    # g_mean sqrt(3/4 · 1/2) = sqrt(0.375) = 0.6123724356957945
    assert_allclose(g_mean(y_true, y_pred), 0.6123724356957945, rtol=0, atol=TOL)
    # a class predicted but never true (2) has no recall and is left out of both:
    # recalls 1/2 (class 0) and 1 (class 1): balanced accuracy 0.75, g_mean sqrt(1/2) = 0.7071067811865476
    y_true, y_pred = np.array([0, 0, 1, 1]), np.array([0, 2, 1, 1])
    assert balanced_accuracy(y_true, y_pred) == 0.75
    assert_allclose(g_mean(y_true, y_pred), 0.7071067811865476, rtol=0, atol=TOL)
    # a true class never predicted right: its recall 0 makes g_mean 0 (balanced accuracy (1 + 0) / 2)
    y_true, y_pred = np.array([0, 0, 1, 1]), np.array([0, 0, 0, 0])
    assert (g_mean(y_true, y_pred), balanced_accuracy(y_true, y_pred)) == (0.0, 0.5)


def test_hand_worked_mcc():
    y_true = np.array([0, 0, 0, 0, 1, 1])
    y_pred = np.array([0, 0, 0, 1, 1, 0])
    # TP = 1, TN = 3, FP = 1, FN = 1: (1·3 - 1·1) / sqrt(2 · 2 · 4 · 4) = 2 / 8 = 0.25
    assert_allclose(mcc(y_true, y_pred), 0.25, rtol=0, atol=TOL)
    # three classes: C = [[2, 1, 0], [0, 1, 1], [0, 0, 1]], t = (3, 2, 1), p = (2, 2, 2), c = 4, s = 6:
    # (4·6 - (6 + 4 + 2)) / sqrt((36 - 12)(36 - 14)) = 12 / sqrt(528) = 0.5222329678670935
    y_true, y_pred = np.array([0, 0, 0, 1, 1, 2]), np.array([0, 0, 1, 1, 2, 2])
    assert_allclose(mcc(y_true, y_pred), 0.5222329678670935, rtol=0, atol=TOL)
    # a constant prediction (denominator 0) scores 0.0, as does a perfect one of a single class
    assert mcc(np.array([0, 1, 1]), np.array([1, 1, 1])) == 0.0
    assert mcc(np.array([1, 1, 1]), np.array([1, 1, 1])) == 0.0


def test_hand_worked_auc():
    # binary, with a tie: positives score 0.5, 0.8, 0.3 and negatives 0.1, 0.5; of the 6
    # (positive, negative) pairs the positive wins 4, ties 1 (0.5 against 0.5): (4 + 1/2) / 6 = 0.75
    y_true = np.array([0, 0, 1, 1, 1])
    p1 = np.array([0.1, 0.5, 0.5, 0.8, 0.3])
    assert_allclose(auc(y_true, np.column_stack([1 - p1, p1])), 0.75, rtol=0, atol=TOL)
    # three columns, class 2 absent from y_true: class 0 scores 0.6, 0.2 against 0.3, 0.4 (wins
    # 2 of 4: 0.5), class 1 scores 0.6, 0.4 against 0.3, 0.5 (wins 3 of 4: 0.75); class 2 has no
    # positive and is left out: auc (0.5 + 0.75) / 2 = 0.625
    y_true = np.array([0, 0, 1, 1])
    proba = np.array([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.3, 0.6, 0.1], [0.4, 0.4, 0.2]])
    assert_allclose(auc(y_true, proba), 0.625, rtol=0, atol=TOL)
    # perfect and constant scores
    assert auc(np.array([0, 1, 1]), np.array([[0.9, 0.1], [0.2, 0.8], [0.4, 0.6]])) == 1.0
    assert auc(np.array([0, 1, 2]), np.full((3, 3), 1 / 3)) == 0.5
    # undefined: a single class in y_true (in either shape of proba)
    assert np.isnan(auc(np.array([1, 1]), np.array([[0.5, 0.5], [0.1, 0.9]])))
    assert np.isnan(auc(np.array([2, 2]), np.full((2, 3), 1 / 3)))


def test_auc_checks_its_probabilities():
    with pytest.raises(ValueError, match="rows must sum to 1"):
        auc(np.array([0, 1]), np.array([[0.5, 0.6], [0.5, 0.5]]))
    with pytest.raises(ValueError, match="class codes 0..1"):
        auc(np.array([0, 2]), np.array([[0.5, 0.5], [0.5, 0.5]]))


def test_tuning_on_an_undefined_auc_fails_the_cell():
    from knnx import KNNClassifier
    from knnx.evaluation.tuning import TuneTask, tune

    X = np.arange(12, dtype=float)[:, None]
    y = np.array([0] * 10 + [1] * 2)  # 3 stratified folds: one holds no row of class 1
    task = TuneTask(cv=3, metric="auc", settings=({"k": 1}, {"k": 3}), seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "The least populated class in y has only 2 members"
        with pytest.raises(ValueError, match="tune.metric auc is undefined on inner fold"):
            tune(lambda s: KNNClassifier(**s), task, {"k": [1, 3]}, X, y, 2)


def test_a_run_writes_the_four_as_sklearn_computes_them_on_its_folds(tmp_path):
    from knnx import KNNClassifier
    from knnx.experiment.runner import run_spec
    from knnx.results import read_results
    from knnx.spec import validate_spec

    spec = {
        "name": "imbalanced",
        "seed": 5,
        "datasets": ["glass", "diabetes"],  # six classes (9 to 76 rows each); two (500 and 268)
        "protocol": {"kind": "kfold", "folds": 3},
        "algorithms": [{"name": "knn", "params": {"k": [7]}}],
        "metrics": NEW,
    }
    run_spec(spec, out=tmp_path, report=False, figures=False)
    frame = read_results(tmp_path / "results.csv")
    vspec = validate_spec(spec)
    checked = 0
    for ds, splits in zip(vspec.datasets, vspec.splits, strict=True):
        for s in splits:
            est = KNNClassifier(k=7).fit(ds.X[s.train], ds.y[s.train])
            y, y_pred = ds.y[s.test], est.predict(ds.X[s.test])
            proba = np.zeros((len(s.test), ds.n_classes))
            proba[:, est.classes_] = est.predict_proba(ds.X[s.test])
            expected = {name: SK_LABEL[name](y, y_pred) for name in SK_LABEL} | {"auc": sk_auc(y, proba)}
            rows = frame[(frame.dataset == ds.name) & (frame.fold == s.fold)]
            got = dict(zip(rows.metric, rows.value.astype(float), strict=True))
            assert list(got) == NEW
            for name in NEW:
                assert_allclose(
                    got[name], expected[name], rtol=0, atol=TOL, err_msg=f"{ds.name} {s.fold} {name}"
                )
            checked += 1
    assert checked == 6


def test_an_undefined_value_is_left_out_of_a_summary():
    import pandas as pd

    from knnx.reporting.summaries import summarize

    frame = pd.DataFrame(
        {
            "dataset": ["d"] * 4,
            "algorithm": ["knn"] * 4,
            "params": ["{}"] * 4,
            "metric": ["auc"] * 3 + ["mcc"],
            "value": [0.5, np.nan, 0.7, 0.2],  # auc of a fold whose test part has a single class: nan
        }
    )
    auc_row, mcc_row = summarize(frame).itertuples(index=False)
    assert_allclose([auc_row.mean, auc_row.std], [0.6, np.sqrt(0.02)], rtol=1e-12)
    assert (auc_row.n, mcc_row.n, mcc_row.std) == (2, 1, 0.0)


@pytest.mark.parametrize("metric", ["error", "accuracy"])
def test_the_inner_accuracy_is_scikit_learns_bit_for_bit(metric):
    """tune:'s inner score for error and accuracy counts equal codes itself: the same
    float as sklearn.metrics.accuracy_score, on folds of every length from 1 to 400."""
    from sklearn.metrics import accuracy_score

    from knnx.evaluation.tuning import _score

    class Fixed:
        def __init__(self, pred):
            self.pred = pred

        def predict(self, X):
            return self.pred

    rng = np.random.default_rng(0)
    for n in range(1, 401):
        y, pred = rng.integers(0, 3, n), rng.integers(0, 3, n)
        assert _score(Fixed(pred), metric, np.zeros((n, 1)), y, 3) == accuracy_score(y, pred)
