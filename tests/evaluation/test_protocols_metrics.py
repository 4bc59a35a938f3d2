"""Protocols partition rows as documented; metrics equal scikit-learn's."""

import warnings

import numpy as np
import pytest
from conftest import sk_g_mean
from numpy.testing import assert_allclose, assert_array_equal
from sklearn import metrics as skm

from knnx.datasets import load_bundled, load_dataset
from knnx.errors import SpecError
from knnx.evaluation.metrics import METRIC_INPUT, METRICS
from knnx.evaluation.protocols import PROTOCOLS, make_splits

PARAMS = {
    "predefined": {},
    "partitions": {"scheme": "10-fold"},
    "holdout": {"test_size": 0.25, "repeats": 3},
    "kfold": {"folds": 4, "repeats": 2},
    "5x2": {},
    "subsample": {"train_per_class": 10, "repeats": 3},
    "lpo": {"p": 10},
}


@pytest.mark.parametrize("kind", sorted(PROTOCOLS))
def test_splits_partition_and_are_deterministic(kind, seed):
    ds = {"predefined": load_bundled("ripley"), "partitions": load_dataset("keel.wine")}.get(kind)
    ds = load_bundled("wine") if ds is None else ds
    a = make_splits(ds, np.random.SeedSequence(seed), kind, **PARAMS[kind])
    b = make_splits(ds, np.random.SeedSequence(seed), kind, **PARAMS[kind])
    for s, t in zip(a, b, strict=True):
        assert_array_equal(s.train, t.train) and assert_array_equal(s.test, t.test)
        assert len(np.intersect1d(s.train, s.test)) == 0
        assert len(s.train) + len(s.test) == ds.n_samples
    if kind in ("kfold", "5x2", "partitions"):
        for r in {s.repeat for s in a}:
            tests = np.concatenate([s.test for s in a if s.repeat == r])
            assert_array_equal(np.sort(tests), np.arange(ds.n_samples))  # every row tested once


def test_lpo_protocol_is_one_split_of_every_row():
    ds = load_bundled("wine")
    (split,) = make_splits(ds, np.random.SeedSequence(0), "lpo", p=3)
    assert_array_equal(split.train, np.arange(ds.n_samples)) and len(split.test) == 0
    with pytest.raises(SpecError, match="protocol.p: 178 must be below the 178 rows of dataset 'wine'"):
        make_splits(ds, np.random.SeedSequence(0), "lpo", p=178)


def test_stratified_kfold_balances_classes():
    ds = load_bundled("wine")  # 59 / 71 / 48
    splits = make_splits(ds, np.random.SeedSequence(0), "kfold", folds=5, repeats=1, stratified=True)
    for s in splits:
        counts = np.bincount(ds.y[s.test], minlength=3)
        assert (np.abs(counts - np.bincount(ds.y) / 5) <= 1).all()
    assert [len(s.test) for s in splits] == [36, 36, 36, 35, 35]


def test_five_by_two_and_subsample_shapes():
    ds = load_bundled("iris")
    five = make_splits(ds, np.random.SeedSequence(0), "5x2")
    assert [(s.repeat, s.fold) for s in five] == [(r, f) for r in range(5) for f in range(2)]
    sub = make_splits(ds, np.random.SeedSequence(0), "subsample", train_per_class=7, repeats=2)
    assert all((np.bincount(ds.y[s.train]) == 7).all() for s in sub)
    with pytest.raises(SpecError, match="class 'setosa' of dataset 'iris' has 50"):
        make_splits(ds, np.random.SeedSequence(0), "subsample", train_per_class=50, repeats=1)


SK = {
    "error": lambda t, p: 1 - skm.accuracy_score(t, p),
    "accuracy": skm.accuracy_score,
    "f1_macro": lambda t, p: skm.f1_score(t, p, average="macro", zero_division=0),
    "recall_macro": lambda t, p: skm.recall_score(t, p, average="macro", zero_division=0),
    "precision_macro": lambda t, p: skm.precision_score(t, p, average="macro", zero_division=0),
    "balanced_accuracy": skm.balanced_accuracy_score,  # over the classes of y_true (warns on class 4)
    "mcc": skm.matthews_corrcoef,
    "g_mean": sk_g_mean,
}


@pytest.mark.parametrize("name", sorted(n for n in METRICS if METRIC_INPUT[n] == "label"))
def test_metrics_equal_sklearn(name, seed):
    rng = np.random.default_rng(seed)
    y_true, y_pred = rng.integers(0, 4, 200), rng.integers(0, 5, 200)  # class 4 never true
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # balanced_accuracy_score: "y_pred contains classes not in y_true"
        expected = SK[name](y_true, y_pred)
    assert_allclose(METRICS[name](y_true, y_pred), expected, rtol=1e-12)


def test_metrics_hand_example():
    y_true, y_pred = np.array([0, 0, 1, 1]), np.array([0, 1, 1, 1])
    assert METRICS["error"](y_true, y_pred) == 0.25
    # class 0: P=1, R=.5, F=2/3; class 1: P=2/3, R=1, F=.8
    assert_allclose(METRICS["f1_macro"](y_true, y_pred), (2 / 3 + 0.8) / 2)
