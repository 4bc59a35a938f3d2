"""Exact leave-p-out risk against brute-force enumeration of every split."""

import numpy as np
import pytest
from lpo_oracles import brute_lpo, write_labelled_csv
from numpy.testing import assert_allclose

from knnx import DataError, KNNClassifier
from knnx.lpo.risk import lpo_risk, select_k

# Round trips through files: also run under each pandas of make test-pandas.
pytestmark = pytest.mark.pandas_io


def _tiny_problem(rng, n, n_classes, duplicates):
    X = rng.integers(0, 4, size=(n, 2)).astype(float)  # integer grid: many distance ties
    if duplicates:
        X[n // 2 :] = X[: n - n // 2]
    y = rng.integers(0, n_classes, size=n)
    y[:n_classes] = np.arange(n_classes)
    return X, y


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("duplicates", [False, True])
def test_matches_enumeration_of_all_splits(n_classes, duplicates):
    rng = np.random.default_rng(10 * n_classes + duplicates)
    for _ in range(12):
        n = int(rng.integers(5, 11))
        p = int(rng.integers(1, min(4, n - 1) + 1))
        k_max = n - p
        X, y = _tiny_problem(rng, n, n_classes, duplicates)
        assert_allclose(lpo_risk(X, y, p, k_max), brute_lpo(X, y, p, k_max), rtol=0, atol=1e-12)


def test_four_classes_and_continuous_features():
    rng = np.random.default_rng(3)
    for _ in range(6):
        n, p = 10, int(rng.integers(1, 4))
        X = rng.standard_normal((n, 3))
        y = rng.integers(0, 4, size=n)
        assert_allclose(lpo_risk(X, y, p, n - p), brute_lpo(X, y, p, n - p), rtol=0, atol=1e-12)


def test_twelve_points_p4_three_classes():
    # The largest enumeration in the suite: C(12, 4) = 495 splits.
    rng = np.random.default_rng(7)
    X, y = _tiny_problem(rng, 12, 3, duplicates=True)
    assert_allclose(lpo_risk(X, y, 4, 8), brute_lpo(X, y, 4, 8), rtol=0, atol=1e-12)


def test_p1_equals_leave_one_out_of_knnclassifier_without_ties():
    # Odd k on two classes: no vote tie, so the LpO estimate with p = 1 is the plain
    # leave-one-out error of KNNClassifier.
    rng = np.random.default_rng(5)
    X = rng.standard_normal((60, 2))
    y = (X[:, 0] + 0.5 * rng.standard_normal(60) > 0).astype(int)
    risk = lpo_risk(X, y, 1, 15)
    for k in range(1, 16, 2):
        errors = 0
        for i in range(60):
            mask = np.arange(60) != i
            clf = KNNClassifier(k=k).fit(X[mask], y[mask])
            errors += clf.predict(X[i : i + 1])[0] != y[i]
        assert risk[k - 1] == pytest.approx(errors / 60, abs=1e-12)


def test_hand_worked_example():
    # Points 0, 1, 2, 3 on a line, classes 0, 0, 1, 1; p = 1 (leave-one-out), k = 1:
    # the nearest neighbour of 0 is 1 (class 0, right), of 1 is 0 (distance 1 to both
    # 0 and 2: the smaller index wins, right), of 2 is 1 (distance 1 to 1 and 3, index
    # 1 first: wrong), of 3 is 2 (right). Risk 1/4. k = 2 (p = 1): neighbours of 0
    # are {1, 2}: a tie, cost 1/2; of 1: {0, 2}, 1/2; of 2: {1, 3}, 1/2; of 3: {2, 1},
    # 1/2. Risk 1/2.
    X = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([0, 0, 1, 1])
    assert_allclose(lpo_risk(X, y, 1, 2), [0.25, 0.5], atol=1e-15)


def test_labels_of_any_type_and_select_k():
    rng = np.random.default_rng(1)
    X, y = _tiny_problem(rng, 9, 2, duplicates=False)
    names = np.array(["no", "yes"])[y]
    risk = lpo_risk(X, names, 2, 7)
    assert_allclose(risk, lpo_risk(X, y, 2, 7), atol=0)
    k, risk2 = select_k(X, names, 2, 7)
    assert_allclose(risk2, risk)
    assert k == int(np.flatnonzero(risk <= risk.min() + 1e-12)[0]) + 1


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"p": 0, "k_max": 1}, "p: must be between 1 and 9"),
        ({"p": 10, "k_max": 1}, "p: must be between 1 and 9"),
        ({"p": 3, "k_max": 8}, "k_max: must be between 1 and 7"),
        ({"p": 2.5, "k_max": 1}, "p: expected an integer"),
        ({"p": 2, "k_max": 2, "weights": "gaussian"}, "weights: expected"),
    ],
)
def test_bad_arguments(kwargs, match):
    X = np.arange(20.0).reshape(10, 2)
    y = np.arange(10) % 2
    with pytest.raises(DataError, match=match):
        lpo_risk(X, y, **kwargs)


def test_label_count_must_match_rows():
    with pytest.raises(DataError, match="y: expected 10 labels"):
        lpo_risk(np.zeros((10, 2)), np.zeros(9), 1, 1)


def _cli(*args):
    from typer.testing import CliRunner

    from knnx.cli import app

    return CliRunner().invoke(app, [str(a) for a in args])


def test_select_k_cli_csv_is_the_library_result():
    from knnx.datasets import load_dataset

    res = _cli("select-k", "--p", 10, "--k-max", 20, "--format", "csv")
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines[0] == "k,lpo_risk" and len(lines) == 21
    ds = load_dataset("ripley")
    train = ds.split[0]
    risk = lpo_risk(ds.X[train], ds.y[train], 10, 20)
    assert [int(line.split(",")[0]) for line in lines[1:]] == list(range(1, 21))
    assert_allclose([float(line.split(",")[1]) for line in lines[1:]], risk, rtol=0, atol=0)


def test_select_k_cli_json_and_csv_input(tmp_path):
    import json

    rng = np.random.default_rng(4)
    X = rng.standard_normal((40, 2))
    y = np.where(X[:, 0] > 0, "a", "b")
    path = tmp_path / "data.csv"
    write_labelled_csv(path, X, y)
    res = _cli("select-k", "--p", 3, "--csv", path, "--label", "cls", "--k-max", 9, "--format", "json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    k, risk = select_k(X, y, 3, 9)
    assert doc["selected_k"] == k and doc["n"] == 40 and doc["part"] == "all rows"
    assert_allclose(doc["lpo_risk"], risk, rtol=0, atol=0)


@pytest.mark.parametrize(
    "args,message",
    [
        (["--p", 250], "error: p: must be between 1 and 249"),
        (["--p", 5, "--k-max", 246], "error: --k-max 246: at most n - p = 245 on these 250 rows with --p 5"),
        (["--p", 5, "--dataset", "nope"], "error: unknown dataset 'nope'"),
        (["--p", 5, "--dataset", "iris", "--csv", "x.csv"], "error: --dataset and --csv: give one of them"),
    ],
)
def test_select_k_cli_bad_input_is_one_line_exit_2(args, message):
    res = _cli("select-k", *args)
    assert res.exit_code == 2
    assert res.stderr.strip().startswith(message) and len(res.stderr.strip().splitlines()) == 1
    assert "Traceback" not in res.output
