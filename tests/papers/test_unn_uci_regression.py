"""Regression check of the UNN Table 2 job (experiments/unn_uci.yaml, make unn-uci): its spec
validates with each dataset's paper k, and one of its cells gives the numbers measured when the
job was set up."""

from pathlib import Path

import numpy as np

import knnx
from knnx.estimators.unn import UNNCVClassifier

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"
PAPER_K = {"iris": 4, "balance": 4, "ionosphere": 4, "glass": 1, "liver": 8, "cancer": 6, "diabetes": 5}


def test_spec_covers_the_paper_k_of_every_dataset():
    """UNN and kNN run the union of the paper's k on every dataset; ITML+kNN runs each
    dataset's own k only (params_for), 10 folds each: 8 x 10 x (5 + 5 + 1) cells."""
    vspec = knnx.validate_spec(EXPERIMENTS / "unn_uci.yaml")
    assert vspec.spec.protocol.kind == "5x2" and not vspec.spec.preprocess.standardize
    names = [d if isinstance(d, str) else d["name"] for d in vspec.spec.datasets]
    assert set(PAPER_K) | {"wdbc"} == set(names)
    for entry in vspec.spec.algorithms[:2]:
        assert set(PAPER_K.values()) <= set(entry.params["k"])
    itml = {(c.dataset, c.params["k"]) for c in vspec.cells if c.algorithm == "itml_knn"}
    assert itml == set({**PAPER_K, "wdbc": 6}.items())
    assert len(vspec.cells) == 8 * 10 * (5 + 5 + 1)


def test_unn_cv_iris_first_fold_as_measured():
    """unn_cv at the paper's k = 4 on iris, repeat 0 fold 0 of the spec's 5x2 split (75/75
    rows). Measured when the job was set up (the runner's results.csv holds the same row):
    7 of 75 test points wrong, theta 0.2 chosen, 19 of 75 training points kept."""
    vspec = knnx.validate_spec(EXPERIMENTS / "unn_uci.yaml")
    d = [ds.name for ds in vspec.datasets].index("iris")
    ds, split = vspec.datasets[d], vspec.splits[d][0]
    assert (split.repeat, split.fold, len(split.train), len(split.test)) == (0, 0, 75, 75)
    model = UNNCVClassifier(k=4, n_thetas=10, cv=2).fit(ds.X[split.train], ds.y[split.train])
    wrong = int(np.sum(model.predict(ds.X[split.test]) != ds.y[split.test]))
    assert wrong == 7  # measured: error 7/75 = 0.0933
    assert model.theta_ == 0.2  # measured
    assert len(model.prototypes_) == 19  # measured: prototype fraction 0.2533
