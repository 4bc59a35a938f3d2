"""Metric learners as steps of a spec: each cell equals the step and the classifier fitted
by hand, the learner's objective, iterations and fit time are rows beside its results
(one fit shared by a grid over the classifier's k; its time in the cell's fit_seconds), and what validation can see of
them is refused in one line."""

import numpy as np
import pytest
from conftest import refused_by_cli

from knnx import KNNClassifier
from knnx.experiment.runner import run_spec
from knnx.metric_learning import ITML, LFDA, LMNN, NCA
from knnx.results import read_results
from knnx.spec import validate_spec
from knnx.steps.builtin import Scale

SPEC = {
    "name": "learned",
    "seed": 5,
    "datasets": ["iris", "keel.wine"],
    "protocol": {"kind": "kfold", "folds": 3},
    "algorithms": [
        {"name": "knn", "id": "lmnn_knn", "steps": ["scale", {"name": "lmnn", "params": {"max_iter": 150}}],
         "params": {"k": [1, 3]}},
        {"name": "knn", "id": "itml_knn3", "steps": ["scale", "itml"], "params": {"k": 3}},
        {"name": "knn", "id": "lfda_knn", "steps": ["scale", {"name": "lfda", "params": {"n_components": 2}}],
         "params": {"k": 3}},
        {"name": "knn", "id": "nca_knn", "steps": ["scale", {"name": "nca", "params": {"max_iter": 20}}],
         "params": {"k": 3}},
    ],
    "metrics": ["error"],
}  # fmt: skip

LEARNERS = {
    "lmnn_knn": ("lmnn", lambda seed: LMNN(max_iter=150)),
    "itml_knn3": ("itml", lambda seed: ITML(random_state=seed)),
    "lfda_knn": ("lfda", lambda seed: LFDA(n_components=2)),
    "nca_knn": ("nca", lambda seed: NCA(max_iter=20, random_state=seed)),
}


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    out = tmp_path_factory.mktemp("learned") / "out"
    run_spec(SPEC, out=out, report=False, figures=False)
    return read_results(out / "results.csv")


def test_each_cell_is_the_learner_then_knn_fitted_by_hand(results):
    vspec = validate_spec(SPEC)
    checked = 0
    for cell in vspec.cells:
        if cell.fold != 2:
            continue
        sid, make = LEARNERS[cell.algorithm]
        ds = vspec.dataset_of(cell)
        split = next(s for s in vspec.splits[cell.dataset_index] if s.fold == 2)
        scale = Scale().fit(ds.X[split.train])
        learner = make(SPEC["seed"]).fit(scale.transform(ds.X[split.train]), ds.y[split.train])
        k = cell.params["k"]
        knn = KNNClassifier(k=k).fit(learner.transform(scale.transform(ds.X[split.train])), ds.y[split.train])
        error = np.mean(knn.predict(learner.transform(scale.transform(ds.X[split.test]))) != ds.y[split.test])
        rows = results[
            (results.algorithm == cell.algorithm)
            & (results.dataset == cell.dataset)
            & (results.fold == 2)
            & (results.params == cell.params_json)
        ]
        got = dict(zip(rows.metric, rows.value, strict=True))
        assert got["error"] == error
        assert got[f"{sid}.objective"] == learner.objective_ and got[f"{sid}.n_iter"] == learner.n_iter_
        assert set(got) == {"error", f"{sid}.objective", f"{sid}.n_iter"}  # times: in fit_seconds, not values
        assert rows.fit_seconds.iloc[0] > 0
        checked += 1
    assert checked == 2 * 5


def test_one_fit_is_shared_by_the_grid_over_k(results):
    """k = 1 and k = 3 behind one LMNN: the same objective and iterations."""
    rows = results[(results.algorithm == "lmnn_knn") & results.metric.str.startswith("lmnn.")]
    by_k = {k: part.sort_values(["dataset", "fold", "metric"]) for k, part in rows.groupby(rows.params)}
    one, three = (by_k[p] for p in sorted(by_k))
    assert len(by_k) == 2 and len(one) == 2 * 3 * 2
    assert one.metric.tolist() == three.metric.tolist() and one.value.tolist() == three.value.tolist()


def _spec(tmp_path, text):
    path = tmp_path / "s.yaml"
    path.write_text("name: s\nprotocol: {kind: kfold, folds: 3}\n" + text)
    return path


def test_a_learner_on_nominal_codes_is_refused(tmp_path):
    spec = _spec(
        tmp_path, "datasets: [{name: heart, categorical: keep}]\nalgorithms: [{name: knn, steps: [lmnn]}]\n"
    )
    refused_by_cli(
        tmp_path,
        spec,
        "datasets[0]: algorithms[0] (lmnn>knn) on 'heart(categorical='keep')': column 'sex' holds nominal category "
        "codes (categorical: keep), which step lmnn would read as numbers; put an encode step first (its file stores "
        "the nominal attributes as numbers, which an entry without categorical gives as filed, not as one-hot "
        "indicators)",
    )


def test_n_components_above_the_features_is_refused(tmp_path):
    spec = _spec(
        tmp_path,
        "datasets: [iris]\nalgorithms: [{name: knn, steps: [{name: lfda, params: {n_components: 5}}]}]\n",
    )
    refused_by_cli(
        tmp_path,
        spec,
        "datasets[0]: algorithms[0] (lfda>knn) on 'iris': step lfda: n_components=5 exceeds the 4 features the step "
        "is given",
    )


def test_a_class_without_k_plus_one_rows_in_a_training_part_is_refused(tmp_path):
    rows = "\n".join(f"{i % 7}.5,{i * 0.3:.1f},{'b' if i < 3 else 'a'}" for i in range(30))
    (tmp_path / "few.csv").write_text("x1,x2,class\n" + rows + "\n")
    spec = _spec(
        tmp_path, "datasets: [{csv: few.csv, label: class}]\nalgorithms: [{name: knn, steps: [lmnn]}]\n"
    )
    refused_by_cli(
        tmp_path,
        spec,
        "datasets[0]: algorithms[0] (lmnn>knn) on 'few': step lmnn: class 'b' has 2 rows in a training part; the step "
        "needs 4 of each class (k = 3 target neighbours and the row itself)",
    )


@pytest.mark.parametrize(
    "params, message",
    [
        ("{prior: [[[1, 0], [0, 1]]]}", "prior must be a symmetric 4 x 4 matrix, got shape (2, 2)"),
        (
            "{prior: [[[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, -1]]]}",
            "prior must be positive definite",
        ),
        ("{bounds: [[8.0, 0.5]]}", "bounds must be [u, l] with 0 < u < l, got [8.0, 0.5]"),
    ],
)
def test_an_itml_prior_or_bounds_that_cannot_run_is_refused(tmp_path, params, message):
    spec = _spec(
        tmp_path,
        f"datasets: [iris]\nalgorithms: [{{name: knn, steps: [{{name: itml, params: {params}}}]}}]\n",
    )
    refused_by_cli(tmp_path, spec, f"datasets[0]: algorithms[0] (itml>knn) on 'iris': step itml: {message}")
