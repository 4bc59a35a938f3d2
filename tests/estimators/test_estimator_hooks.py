"""Neighbour-count parameters and closed-form LpO risks come from the estimator classes
(``_neighbor_param``, ``_neighbor_counts``, ``_lpo_risk``), not from tables kept by name."""

import numpy as np
import pytest

from knnx.estimators.knn import KNNClassifier
from knnx.estimators.registry import (
    ALGORITHMS,
    BUILTIN,
    LPO_RISK,
    lpo_risk_of,
    neighbor_counts,
    register_algorithm,
    resolve_algorithm,
)
from knnx.lpo.risk import lpo_risk

# The hand-written tables the class attributes replace (registry.py before the hooks).
OLD_NEIGHBOR_PARAMS = {
    "knn": ("k", 0),
    "knn_lpo": ("p", 1),
    "unn": ("k", 1),
    "unn_cv": ("k", 1),
    "gnnb": ("k", 1),
    "weighted_metric": ("k", 0),
    "knn_sample": ("k", 0),
    "itml_knn": ("k", 0),
}


def test_the_classes_give_the_old_neighbour_parameter_table():
    derived = {
        name: ALGORITHMS[name]._neighbor_param
        for name in sorted(BUILTIN)
        if ALGORITHMS[name]._neighbor_param is not None
    }
    assert derived == OLD_NEIGHBOR_PARAMS


@pytest.mark.parametrize("name", sorted(BUILTIN))
def test_a_resolved_entry_reads_its_class(name):
    ref = resolve_algorithm({"name": name})
    assert ref.neighbor_param == OLD_NEIGHBOR_PARAMS.get(name)
    assert ref.lpo_risk == (KNNClassifier._lpo_risk if name == "knn" else None)
    # the neighbour counts are the values of k (k_max for knn_lpo), where the class has one
    defaults = ref.defaults()
    expected = (
        [defaults["k_max"]] if name == "knn_lpo" else [defaults["k"]] if name in OLD_NEIGHBOR_PARAMS else []
    )
    assert ref.neighbor_counts(defaults) == expected


def test_lpo_risk_is_derived_from_the_classes_and_keeps_its_mapping_form():
    assert dict(LPO_RISK) == {"knn": KNNClassifier._lpo_risk}
    assert list(LPO_RISK) == ["knn"] and len(LPO_RISK) == 1 and "knn" in LPO_RISK
    assert "knn_lpo" not in LPO_RISK and "nope" not in LPO_RISK
    with pytest.raises(KeyError):
        LPO_RISK["unn"]
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 2)), rng.integers(0, 2, 30)
    params = {"k": 3, "weights": "uniform"}
    assert LPO_RISK["knn"](params, X, y, 4, graphs=None) == float(lpo_risk(X, y, 4, 3, "uniform")[-1])


def test_a_registered_class_with_the_hook_joins_lpo_risk(monkeypatch):
    monkeypatch.setattr("knnx.estimators.registry.ALGORITHMS", dict(ALGORITHMS))

    class MyKNN(KNNClassifier):
        _lpo_risk = KNNClassifier._lpo_risk  # the same rule: kNN's closed form, said again

    register_algorithm("my_knn", MyKNN)
    assert list(LPO_RISK) == ["knn", "my_knn"]
    ref = resolve_algorithm({"name": "my_knn"})
    assert ref.lpo_risk == MyKNN._lpo_risk and ref.neighbor_param == ("k", 0)
    # an import path of a knnx class: its neighbour count is checked; lpo runs registered names only
    ref = resolve_algorithm({"estimator": "knnx.estimators.knn:KNNClassifier"})
    assert ref.lpo_risk is None and ref.neighbor_param == ("k", 0)


def test_neighbor_counts_of_knnx_and_foreign_classes():
    from sklearn.neighbors import KNeighborsClassifier

    from knnx.estimators.baselines import SGDBudget
    from knnx.estimators.knn import KNNLpoClassifier

    assert neighbor_counts(KNNClassifier, {"k": 7, "weights": "uniform"}) == [7]
    assert neighbor_counts(KNNClassifier, {"k": [1, 9, 3]}) == [1, 9, 3]  # a tuned cell's grid
    assert neighbor_counts(KNNLpoClassifier, {"p": 10, "k_max": 50}) == [50]
    assert neighbor_counts(SGDBudget, {"k": 5, "budget": "T"}) == []  # no neighbour search
    assert neighbor_counts(KNeighborsClassifier, {"n_neighbors": 4, "k": "x"}) == [4]
    assert lpo_risk_of(KNeighborsClassifier) is None and lpo_risk_of(KNNLpoClassifier) is None


def test_a_knnx_class_by_import_path_has_its_neighbour_count_checked():
    """validate refuses k beyond the training parts for a knnx class named by import path
    as for its registered name (the fit would fail at run time)."""
    from knnx.errors import SpecError
    from knnx.spec import validate_spec

    for entry in ({"name": "knn"}, {"estimator": "knnx.estimators.knn:KNNClassifier"}):
        spec = {
            "name": "t",
            "datasets": ["iris"],
            "protocol": {"kind": "kfold", "folds": 3},
            "algorithms": [{**entry, "params": {"k": 101}}],
        }
        with pytest.raises(SpecError) as info:
            validate_spec(spec)
        assert str(info.value) == (
            "<spec>: algorithms[0].params.k: k=101 exceeds the 100 training samples of dataset 'iris' "
            "under protocol kfold"
        )


def test_a_subclass_does_not_inherit_the_closed_form(monkeypatch, tmp_path):
    """A subclass of KNNClassifier may change the rule (here: predict always class 0), so
    kNN's leave-p-out closed form is not its risk: it has no lpo_risk unless it sets the
    hook itself, and protocol lpo refuses it in one line, as before the hooks existed."""
    from knnx import run_spec
    from knnx.errors import SpecError

    monkeypatch.setattr("knnx.estimators.registry.ALGORITHMS", dict(ALGORITHMS))

    class AlwaysZero(KNNClassifier):
        def predict(self, X):
            return np.zeros(len(X), dtype=int)

    register_algorithm("always_zero", AlwaysZero)
    assert lpo_risk_of(AlwaysZero) is None and "always_zero" not in LPO_RISK
    assert resolve_algorithm({"name": "always_zero"}).lpo_risk is None
    spec = {
        "name": "sub",
        "datasets": ["iris"],
        "protocol": {"kind": "lpo", "p": 2},
        "algorithms": [{"name": "always_zero", "params": {"k": 3}}],
    }
    with pytest.raises(
        SpecError, match=r"always_zero has no closed-form leave-p-out risk; protocol lpo supports: knn$"
    ):
        run_spec(spec, out=tmp_path / "o", figures=False)
    assert not (tmp_path / "o").exists()
