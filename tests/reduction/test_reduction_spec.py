"""Prototype selections in a spec beyond steps: an algorithm named after a selection
(the selection, then kNN, sharing its metric) and the comparison of contestants by the
share of the training rows they keep (``knnx compare --metric retained``)."""

import numpy as np
import pandas as pd
import pytest
from conftest import refused_by_cli
from scipy.stats import rankdata

from knnx import KNNClassifier
from knnx.experiment.runner import run_spec
from knnx.reduction import DROP3, ENN
from knnx.results import read_results
from knnx.spec import validate_spec
from knnx.stats.compare import compare

SPEC = {
    "name": "named",
    "seed": 3,
    "datasets": ["iris", "keel.wine", "keel.glass"],
    "protocol": {"kind": "kfold", "folds": 3},
    "algorithms": [
        {"name": "knn", "params": {"k": 1}},
        {"name": "drop3", "params": {"metric": "manhattan"}},
        {"name": "enn", "params": {"k": 3, "enn__k": 5}},
        {"name": "knn", "id": "drop3_steps", "steps": [{"name": "drop3", "params": {"metric": "manhattan"}}],
         "params": {"metric": "manhattan"}},
    ],
    "metrics": ["error"],
}  # fmt: skip


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    out = tmp_path_factory.mktemp("named") / "out"
    run_spec(SPEC, out=out, report=False)
    return read_results(out / "results.csv"), out


def test_a_named_selection_is_the_selection_then_knn_with_its_metric(results):
    """{name: drop3, params: {metric: manhattan}} is drop3 under manhattan then 1-NN
    under manhattan (the steps form's rows, value for value, and a fold by hand, its
    retention per class included); the kNN's own parameters stay its own ({name: enn,
    params: {k: 3, enn__k: 5}}). Per-class retention has rows, no figures."""
    frame, out = results
    assert (out / "retained.png").exists() and not list(out.glob("retained.*.png"))
    named = frame[frame.algorithm == "drop3>knn"].reset_index(drop=True)
    steps = frame[frame.algorithm == "drop3_steps"].reset_index(drop=True)
    classes = 3 + 3 + 6  # iris, wine, glass: one retained.<c> row each per fold
    assert len(named) == 3 * 3 * 3 + 3 * classes  # datasets x folds x (error, n_fit, retained)
    assert named["value"].tolist() == steps["value"].tolist()
    assert named["metric"].tolist() == steps["metric"].tolist()
    vspec = validate_spec(SPEC)
    for a, selection, clf in ((1, DROP3(metric="manhattan"), KNNClassifier(metric="manhattan")),
                              (2, ENN(k=5), KNNClassifier(k=3))):  # fmt: skip
        cell = next(
            c for c in vspec.cells if c.algorithm_index == a and c.dataset == "keel.glass" and c.fold == 1
        )
        ds = vspec.dataset_of(cell)
        split = next(s for s in vspec.splits[cell.dataset_index] if s.fold == 1)
        X_fit, y_fit = selection.fit_resample(ds.X[split.train], ds.y[split.train])
        error = np.mean(clf.fit(X_fit, y_fit).predict(ds.X[split.test]) != ds.y[split.test])
        mine = frame[
            (frame.algorithm == cell.algorithm) & (frame.dataset == "keel.glass") & (frame.fold == 1)
        ]
        got = dict(zip(mine.metric, mine.value, strict=True))
        assert got["error"] == error and got["retained"] == len(y_fit) / len(split.train)
        y_train = ds.y[split.train]
        for c in range(ds.n_classes):  # per-class retention beside the results
            assert got[f"retained.{c}"] == np.sum(y_fit == c) / np.sum(y_train == c)
    assert {c.algorithm for c in vspec.cells} == {"knn", "drop3>knn", "enn>knn", "drop3_steps"}


def test_a_grid_of_metrics_on_a_named_selection_is_refused(tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text(
        "name: s\nprotocol: {kind: kfold, folds: 3}\ndatasets: [iris]\n"
        "algorithms: [{name: cnn, params: {metric: [euclidean, manhattan]}}]\n"
    )
    refused_by_cli(
        tmp_path,
        spec,
        "algorithms[0].params.metric: cnn (a named selection) gives one metric to the selection and to its kNN; "
        "for several, write an entry for each, or give the selection's as cnn__metric",
    )


def test_compare_ranks_the_contestants_by_retention_lower_is_better(results):
    """compare(metric="retained"): the means are the per-dataset means of the folds'
    retention (plain kNN, which fits on every row: 1), ranked with the lowest first
    (scipy's average ranks); nobody is left out."""
    frame, _ = results
    result = compare(frame, metric="retained")
    rows = frame[frame.metric == "retained"]
    expected = rows.groupby(["dataset", "algorithm"])["value"].mean().unstack().assign(knn=1.0)
    means = result.means.loc[expected.index, expected.columns]
    assert np.array_equal(means.to_numpy(), expected.to_numpy())
    ranks = np.vstack([rankdata(row) for row in expected.to_numpy()])
    mean_ranks = result.mean_ranks.set_index("configuration")["mean_rank"]
    assert np.allclose(mean_ranks[expected.columns].to_numpy(), ranks.mean(axis=0))
    assert mean_ranks["drop3>knn"] == 1.5 and mean_ranks["enn>knn"] == 3.0 and mean_ranks["knn"] == 4.0
    assert result.left_out.empty


def test_a_contestant_without_rows_of_the_metric_is_left_out_by_name(results):
    frame, _ = results
    result = compare(frame[~((frame.algorithm == "enn>knn") & (frame.metric == "error"))], metric="error")
    assert result.left_out.values.tolist() == [["enn>knn", "no 'error' results on any dataset"]]
    assert "enn>knn" not in result.means.columns


def test_knnx_compare_takes_retained(results):
    """The command writes the comparison of retention: the lowest mean in bold, plain
    kNN at 1."""
    from typer.testing import CliRunner

    from knnx.cli import app

    frame, out = results
    args = ["compare", str(out / "results.csv"), "--metric", "retained", "--out", str(out / "cmp")]
    outcome = CliRunner().invoke(app, args)
    assert outcome.exit_code == 0, outcome.output
    assert "Left out" not in outcome.output
    iris = frame[(frame.metric == "retained") & (frame.dataset == "iris") & (frame.algorithm == "drop3>knn")]
    table = (out / "cmp" / "table.md").read_text().splitlines()
    header = next(x for x in table if x.startswith("| dataset |")).split(" | ")
    line = next(x for x in table if x.startswith("| iris |")).split(" | ")
    assert line[header.index("drop3>knn")] == f"**{iris.value.mean():.4f} ± {iris.value.std():.4f}**"
    assert line[header.index("knn")].startswith("1.0000 ± 0.0000")


def test_retention_table_is_each_contestants_fold_means_and_its_pareto_front(results):
    """Per dataset and contestant: the mean and standard deviation over the folds of
    retained and of error (plain kNN: retention 1, it fits on every training row), and
    the Pareto front by its definition; the run drew the per-dataset and suite figures."""
    from knnx.reporting.retention import retention_table

    frame, out = results
    table = retention_table(frame, "error")
    for row in table.itertuples(index=False):
        algo = row.configuration  # nothing varies within an algorithm here
        mine = frame[(frame.dataset == row.dataset) & (frame.algorithm == algo)]
        error = mine[mine.metric == "error"].sort_values("fold")["value"]
        kept = mine[mine.metric == "retained"].sort_values("fold")["value"]
        assert row.y == pytest.approx(error.mean(), rel=1e-15) and row.y_std == pytest.approx(
            error.std(), rel=1e-12
        )
        if algo == "knn":
            assert (row.x, row.x_std) == (1.0, 0.0)
        else:
            assert row.x == pytest.approx(kept.mean(), rel=1e-15) and row.folds == 3
    for _, part in table.groupby("dataset"):
        points = list(zip(part.x, part.y, strict=True))
        front = [not any(a <= x and b <= y and (a < x or b < y) for a, b in points) for x, y in points]
        assert part.pareto.tolist() == front
    assert (out / "error-retention.png").exists() and (out / "error-retention-suite.png").exists()


def test_pareto_front_with_ties_and_a_higher_is_better_metric():
    from knnx.reporting.retention import pareto_front

    x = np.array([0.1, 0.5, 0.5, 1.0, 0.1])
    y = np.array([0.3, 0.2, 0.25, 0.2, 0.3])
    assert pareto_front(x, y, lower=True).tolist() == [True, True, False, False, True]
    assert pareto_front(x, 1 - y, lower=False).tolist() == [True, True, False, False, True]


def test_retention_falls_back_to_the_prototype_fraction_then_to_every_row():
    """UNN's prototype_fraction is its retention; a contestant with neither row keeps
    every training row."""
    from knnx.reporting.retention import retention_table

    rows = []
    for fold in range(2):
        for algo, extra in (
            ("unn", ("prototype_fraction", 0.2 + 0.1 * fold)),
            ("knn", None),
            ("cnn>knn", ("retained", 0.3)),
        ):
            cell = {"dataset": "d", "algorithm": algo, "params": "{}", "repeat": 0, "fold": fold, "seed": 0}
            rows.append({**cell, "metric": "error", "value": 0.1 * (fold + 1)})
            if extra:
                rows.append({**cell, "metric": extra[0], "value": extra[1]})
    table = retention_table(pd.DataFrame(rows), "error").set_index("configuration")
    assert table.loc["unn", "x"] == pytest.approx(0.25) and table.loc["unn", "x_std"] == pytest.approx(
        np.std([0.2, 0.3], ddof=1)
    )
    assert table.loc["knn", "x"] == 1.0 and table.loc["cnn>knn", "x"] == 0.3
    assert table.loc["knn", "y"] == pytest.approx(0.15)


def test_compare_within_a_band_of_retention(results, tmp_path):
    """--retention 0,0.5: the configurations whose mean retention over their cells lies
    in the band are compared, on the metric asked for; the others are left out with
    their mean retention (plain kNN: 1); a band that is not LOW,HIGH with 0 <= LOW <=
    HIGH is one line, exit 2."""
    from typer.testing import CliRunner

    from knnx.cli import app

    frame, out = results
    result = compare(frame, metric="error", retention=(0, 0.5))
    assert list(result.means.columns) == ["drop3>knn", "drop3_steps"]
    enn = frame[(frame.algorithm == "enn>knn") & (frame.metric == "retained")]["value"].mean()
    assert result.left_out.values.tolist() == [
        ["knn", "mean retention 1.000 outside [0, 0.5]"],
        ["enn>knn", f"mean retention {enn:.3f} outside [0, 0.5]"],
    ]
    errors = frame[(frame.algorithm == "drop3>knn") & (frame.metric == "error")]
    assert result.means.loc["iris", "drop3>knn"] == pytest.approx(
        errors[errors.dataset == "iris"]["value"].mean()
    )
    for band, line in (
        ("0.5", "error: --retention: expected LOW,HIGH (two numbers), got '0.5'\n"),
        ("0.6,0.2", "error: --retention: expected a band low,high with 0 <= low <= high, got (0.6, 0.2)\n"),
    ):
        outcome = CliRunner().invoke(app, ["compare", str(out / "results.csv"), "--retention", band])
        assert (outcome.exit_code, outcome.output) == (2, line)
    # a band that holds no contestant: one line under either selection (best-test was a traceback)
    lines = set()
    for select in ("all", "best-test"):
        args = ["compare", str(out / "results.csv"), "--retention", "0,0.01", "--select", select]
        outcome = CliRunner().invoke(app, args)
        assert outcome.exit_code == 2, outcome.output
        assert outcome.output.startswith(
            "error: a comparison needs at least two configurations and two datasets; these results have 0 and 0; "
            "left out: knn (mean retention 1.000 outside [0, 0.01]);"
        )
        lines.add(outcome.output)
    assert len(lines) == 1


def test_the_study_spec_is_valid_and_names_every_method():
    """experiments/prototype_reduction.yaml: every built-in selection and generation
    (but the ones it runs under another id) is a contestant, on 20 KEEL sets x 10 folds."""
    from pathlib import Path

    from knnx.steps.resolve import SELECTIONS

    vspec = validate_spec(Path(__file__).resolve().parents[2] / "experiments" / "prototype_reduction.yaml")
    names = {c.algorithm for c in vspec.cells}
    assert {f"{s}>knn" for s in SELECTIONS if s != "lvq"} <= names and {"lvq1", "lvq2.1", "lvq3"} <= names
    assert len(vspec.datasets) == 20 and len(vspec.cells) == 5600
