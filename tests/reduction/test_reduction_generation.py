"""Kohonen's LVQ1, LVQ2.1 and LVQ3 (knnx.reduction.LVQ) against a plain NumPy version
written from the docstring (the same draws, the same rate schedule, distances summed
feature by feature), its codebook's shares per class by hand, and as a step and a
named algorithm in a run (the prototypes a cell's 1-NN is fitted on, fold by fold), and
its refusal of nominal attributes."""

import numpy as np
import pandas as pd
import pytest
from conftest import refused_by_cli
from reduction_oracles import blobs, grid

from knnx import KNNClassifier
from knnx.experiment.runner import run_spec
from knnx.reduction import LVQ
from knnx.reduction.generation import allocate
from knnx.spec import validate_spec


def _brute_lvq(X, y, variant, fraction, n_iter, alpha0, window, epsilon, seed):
    rng = np.random.default_rng(seed)
    classes, codes = np.unique(y, return_inverse=True)
    counts = np.bincount(codes)
    shares = allocate(counts, max(len(classes), int(round(fraction * len(codes)))))
    start = np.concatenate(
        [
            np.flatnonzero(codes == c)[rng.choice(counts[c], shares[c], replace=False)]
            for c in range(len(classes))
        ]
    )
    P, plab = X[start].copy(), codes[start]
    T = 50 * len(start) if n_iter is None else n_iter
    order = np.concatenate([rng.permutation(len(codes)) for _ in range(-(-T // len(codes)))])[:T]
    s = (1 - window) / (1 + window)
    for t, i in enumerate(order):
        rate = alpha0 * (1.0 - t / T)
        dist = np.zeros(len(P))
        for f in range(X.shape[1]):  # summed feature by feature, as the kernel
            dist += (X[i, f] - P[:, f]) ** 2
        b1, b2 = np.lexsort((np.arange(len(P)), dist))[:2]
        right1, right2 = plab[b1] == codes[i], plab[b2] == codes[i]
        if variant == "lvq1":
            P[b1] += (rate if right1 else -rate) * (X[i] - P[b1])
        elif right1 != right2:
            near, far = np.sqrt(dist[b1]), np.sqrt(dist[b2])
            if far == 0 or near / far > s:
                good, bad = (b1, b2) if right1 else (b2, b1)
                P[good] += rate * (X[i] - P[good])
                P[bad] += -rate * (X[i] - P[bad])
        elif variant == "lvq3" and right1:
            P[b1] += epsilon * rate * (X[i] - P[b1])
            P[b2] += epsilon * rate * (X[i] - P[b2])
    return P, classes[plab], start


@pytest.mark.parametrize("variant", ["lvq1", "lvq2.1", "lvq3"])
@pytest.mark.parametrize(
    ("fraction", "n_iter", "alpha0", "window", "epsilon"),
    [(0.1, None, 0.1, 0.2, 0.1), (0.25, 700, 0.3, 0.4, 0.5)],
)
@pytest.mark.parametrize("data", [blobs, grid])
def test_lvq_is_kohonens_rule(data, fraction, n_iter, alpha0, window, epsilon, variant):
    for seed in range(2):
        X, y = data(seed)
        lvq = LVQ(variant, fraction, n_iter, alpha0, window, epsilon, random_state=seed)
        P, labels = lvq.fit_resample(X, y)
        P_ref, labels_ref, start = _brute_lvq(X, y, variant, fraction, n_iter, alpha0, window, epsilon, seed)
        assert np.array_equal(P, P_ref) and np.array_equal(labels, labels_ref)
        assert np.array_equal(lvq.start_indices_, start) and not np.array_equal(P, X[start])


def test_the_codebook_is_shared_by_largest_remainders():
    assert allocate([50, 30, 20], 10).tolist() == [5, 3, 2]
    assert allocate([7, 2, 1], 3).tolist() == [2, 1, 1]  # one per class at least
    assert allocate([5, 5, 5], 4).tolist() == [2, 1, 1]  # equal remainders: the lower class first
    assert allocate([3, 1], 10).tolist() == [3, 1]  # never more than a class's rows


def test_lvq_prototypes_classify_separated_classes():
    """Two far Gaussian classes: LVQ1's prototypes stay in their class's cloud and 1-NN
    on them classifies every row."""
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 200)
    X = rng.normal(size=(400, 2)) + y[:, None] * 8.0
    P, labels = LVQ("lvq1", random_state=0).fit_resample(X, y)
    assert len(P) == 40 and np.bincount(labels).tolist() == [20, 20]
    assert (KNNClassifier().fit(P, labels).predict(X) == y).all()


def test_lvq_in_a_run_is_the_codebook_then_1nn(tmp_path):
    """{name: lvq, params: {lvq__variant: lvq1}} on iris: each fold's error and retained
    equal LVQ (seeded with the spec's seed) then 1-NN fitted by hand."""
    spec = {
        "name": "lvq",
        "seed": 5,
        "datasets": ["iris"],
        "protocol": {"kind": "kfold", "folds": 3},
        "algorithms": [{"name": "lvq", "params": {"lvq__variant": "lvq1", "lvq__fraction": 0.2}}],
        "metrics": ["error"],
    }
    run_spec(spec, out=tmp_path / "out", report=False, figures=False)
    rows = pd.read_csv(tmp_path / "out" / "results.csv")
    vspec = validate_spec(spec)
    ds = vspec.datasets[0]
    for split in vspec.splits[0]:
        P, labels = LVQ("lvq1", 0.2, random_state=5).fit_resample(ds.X[split.train], ds.y[split.train])
        error = np.mean(KNNClassifier().fit(P, labels).predict(ds.X[split.test]) != ds.y[split.test])
        mine = rows[rows.fold == split.fold]
        got = dict(zip(mine.metric, mine.value, strict=True))
        assert got["error"] == error and got["retained"] == len(P) / len(split.train) and got["n_fit"] == 20
    assert set(rows.algorithm) == {"lvq>knn"}


def test_lvq_on_nominal_codes_is_refused(tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text(
        "name: s\nprotocol: {kind: kfold, folds: 3}\n"
        "datasets: [{name: keel.breast, categorical: keep, id: b}]\nalgorithms: [{name: lvq}]\n"
    )
    refused_by_cli(
        tmp_path,
        spec,
        "datasets[0]: algorithms[0] (lvq>knn) on 'b': column 'A1' holds nominal category codes (categorical: keep), "
        "which step lvq would read as numbers; put an encode step first, or leave categorical out of the dataset "
        "entry to give it one-hot indicators",
    )


def test_a_classifier_that_reads_codes_after_a_step_given_indicators_is_refused_of_the_steps(tmp_path):
    """The refusal names the step that was given one-hot indicators, not the dataset
    entry (which does not say categorical)."""
    spec = tmp_path / "s.yaml"
    spec.write_text(
        "name: s\nprotocol: {kind: kfold, folds: 3}\n"
        "datasets: [keel.breast]\nalgorithms: [{name: knn, steps: [enn], params: {metric: hvdm}}]\n"
    )
    refused_by_cli(
        tmp_path,
        spec,
        "datasets[0]: algorithms[0] (enn>knn) on 'keel.breast': step enn reads nominal attribute 'A1' as one-hot "
        "indicators, and the classifier after it reads the same columns, which metric 'hvdm' would read as numbers; "
        "give it a metric that reads category codes (heom, hvdm, gower), or give the classifier a numeric metric",
    )
