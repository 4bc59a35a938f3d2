"""Paper tables as declared data: intervals, comparison rows, REPORT.md's counts, knnx reproduce.

Oracles: scipy's t and binomial intervals, means and differences worked by hand on a
small results file; every shipped declaration is loaded against its paper CSV.
"""

import json
import math

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy import stats
from typer.testing import CliRunner

from knnx import cli
from knnx.datasets import load_dataset
from knnx.errors import SpecError
from knnx.papers import assemble, load_target, target_names
from knnx.papers import intervals as I
from knnx.papers.comparison import COMPARISON_COLUMNS, comparison_rows, parse_paper
from knnx.papers.render import headline, read_comparison
from knnx.results import COLUMNS


def test_student_t_interval_equals_scipy():
    values = np.array([0.12, 0.18, 0.15, 0.11, 0.2])
    low, high = I.student_t(values)
    ref = stats.t.interval(0.95, 4, loc=values.mean(), scale=stats.sem(values))
    assert (low, high) == pytest.approx(ref, rel=1e-14)
    assert all(math.isnan(v) for v in I.student_t([0.3]))
    assert I.student_t([0.25, 0.25, 0.25]) == (0.25, 0.25)


def test_clopper_pearson_interval_by_hand():
    # 0 errors in 10: [0, 1 - 0.025^(1/10)]; 5 in 10: the beta quantiles
    low, high = I.clopper(0.0, 10)
    assert low == 0.0 and high == pytest.approx(1 - 0.025 ** (1 / 10), rel=1e-12)
    low, high = I.clopper(0.5, 10)
    assert low == pytest.approx(stats.beta.ppf(0.025, 5, 6), rel=1e-10)
    assert high == pytest.approx(stats.beta.ppf(0.975, 6, 5), rel=1e-10)
    assert all(math.isnan(v) for v in I.interval("clopper", [0.1, 0.2], n_test=10))  # one test set only
    assert all(math.isnan(v) for v in I.interval("none", [0.1, 0.2]))


def test_paper_values_parse_numbers_and_printed_ranges():
    assert parse_paper(3.07) == (3.07, 3.07)
    assert parse_paper("17-15") == (15.0, 17.0)
    assert all(math.isnan(v) for v in parse_paper(""))
    assert all(math.isnan(v) for v in parse_paper(None))


def _results(folder, rows):
    folder.mkdir(parents=True, exist_ok=True)
    frame = pd.DataFrame(
        [
            {
                "experiment": "t",
                "protocol": "{}",
                "seed": 0,
                "n_train": 90,
                "n_test": 30,
                "fit_seconds": 0.0,
                "predict_seconds": 0.0,
                **r,
                "params": json.dumps(r["params"], separators=(",", ":"), sort_keys=True),
            }
            for r in rows
        ],
        columns=COLUMNS,
    )
    frame.to_csv(folder / "results.csv", index=False)


A_ERRORS = [0.10, 0.12, 0.17]  # method a, k = 1, folds 0-2 on iris
B_ERRORS = [0.20, 0.21, 0.25]  # method b


@pytest.fixture
def project(tmp_path):
    """A project folder with results of two methods on two datasets, paper values, and a
    declaration of three tables (a wide CV table, a one-test-set table, a paired one)."""
    rows = []
    for fold in range(3):
        for alg, errors in (("a", A_ERRORS), ("b", B_ERRORS)):
            common = {"dataset": "iris", "algorithm": alg, "repeat": 0, "fold": fold, "metric": "error"}
            rows.append({**common, "params": {"k": 1}, "value": errors[fold]})
            rows.append({**common, "params": {"k": 3}, "value": 0.5})
    _results(tmp_path / "results" / "cv", rows)
    _results(
        tmp_path / "results" / "split",
        [
            {
                "dataset": "dna",
                "algorithm": "a",
                "repeat": 0,
                "fold": 0,
                "metric": "error",
                "params": {"k": 1},
                "value": 0.1,
            }
        ],
    )
    (tmp_path / "paper.csv").write_text(
        "dataset,k,a,b,note\niris,1,14.0,30.0,x\nwine,1,5.0,,\ndna,1,12-20,,\naverage,,1,1,\n"
    )
    declaration = {
        "target": "demo",
        "paper": "piro2012",
        "title": "a demo",
        "runs": [],
        "tables": [
            {
                "id": "cv",
                "title": "CV",
                "results": ["results/cv"],
                "paper_values": "paper.csv",
                "where": {"dataset": ["iris", "wine"]},
                "add_rows": [{"dataset": "iris", "k": 3, "label": "k3", "paper_row": {"dataset": "iris"}}],
                "row": "{dataset} k={k}",
                "select": {"dataset": "{dataset}", "metric": "error", "params": {"k": "{k}"}},
                "columns": [
                    {"label": "A", "paper": "a", "select": {"algorithm": "a"}},
                    {"label": "B", "paper": "b", "select": {"algorithm": "b"}},
                ],
                "scale": 100,
            },
            {
                "id": "split",
                "title": "one test set",
                "results": ["results/split", "results/missing"],
                "paper_values": "paper.csv",
                "where": {"dataset": "dna"},
                "row": "{dataset}",
                "select": {"dataset": "{dataset}", "metric": "error"},
                "columns": [{"label": "A", "paper": "a", "select": {"algorithm": "a"}}],
                "interval": "clopper",
                "scale": 100,
            },
            {
                "id": "paired",
                "title": "b - a",
                "results": ["results/cv"],
                "paper_values": "paper.csv",
                "where": {"dataset": "iris"},
                "row": "{dataset}",
                "select": {"dataset": "{dataset}", "metric": "error", "params": {"k": 1}},
                "columns": [
                    {
                        "label": "B - A",
                        "select": {"algorithm": "b"},
                        "minus": {"algorithm": "a"},
                        "claim": {"op": ">", "value": 0},
                    }
                ],
                "statistic": "mean_difference",
                "interval": "paired_t",
            },
        ],
    }
    path = tmp_path / "demo.yaml"
    path.write_text(yaml.safe_dump(declaration))
    return tmp_path, path


def test_comparison_rows_by_hand(project):
    root, path = project
    frame = comparison_rows(load_target(path, root=root), root)
    assert list(frame.columns) == COMPARISON_COLUMNS
    rows = frame.set_index(["table", "row", "column"])

    a = rows.loc[("cv", "iris k=1", "A")]
    assert a["ours_mean"] == pytest.approx(100 * np.mean(A_ERRORS), rel=1e-15)
    assert a["ours_sd"] == pytest.approx(100 * np.std(A_ERRORS, ddof=1), rel=1e-14)
    assert a["n"] == 3
    low, high = stats.t.interval(0.95, 2, loc=np.mean(A_ERRORS), scale=stats.sem(A_ERRORS))
    assert (a["ci_low"], a["ci_high"]) == pytest.approx((100 * low, 100 * high), rel=1e-13)
    assert a["paper"] == a["paper_high"] == 14.0
    assert a["diff"] == pytest.approx(100 * np.mean(A_ERRORS) - 14.0, rel=1e-14)
    assert a["paper_in_ci"] is True  # 13.0 +- 9.0 holds 14

    b = rows.loc[("cv", "iris k=1", "B")]
    assert b["ours_mean"] == pytest.approx(22.0, rel=1e-14) and b["paper"] == 30.0
    assert b["ci_high"] == pytest.approx(
        100 * stats.t.interval(0.95, 2, loc=0.22, scale=stats.sem(B_ERRORS))[1]
    )
    assert b["ci_high"] < 30 and b["paper_in_ci"] is False  # 22 +- 6.6 leaves 30 out

    # a paper row without our results: NaN, n = 0, no verdict; a blank paper cell: no paper
    wine = rows.loc[("cv", "wine k=1", "A")]
    assert wine["n"] == 0 and math.isnan(wine["ours_mean"]) and wine["paper"] == 5.0
    assert wine["paper_in_ci"] is None and math.isnan(wine["diff"])
    assert math.isnan(rows.loc[("cv", "wine k=1", "B")]["paper"])
    # add_rows: k = 3 beside the iris paper row; a constant value has a zero-width interval
    k3 = rows.loc[("cv", "iris k=3", "A")]
    assert k3["ours_mean"] == pytest.approx(50.0) and k3["ci_low"] == k3["ci_high"] == pytest.approx(50.0)
    assert k3["paper"] == 14.0 and k3["paper_in_ci"] is False and k3["diff"] == pytest.approx(36.0)
    assert "average" not in rows.reset_index()["row"].str.split().str[0].tolist()  # where kept it out

    # one test set of 30 rows: Clopper-Pearson on 3 errors; the paper's range 12-20 meets it
    dna = rows.loc[("split", "dna", "A")]
    ref = stats.binomtest(3, 30).proportion_ci(method="exact")
    assert (dna["ci_low"], dna["ci_high"]) == pytest.approx((100 * ref.low, 100 * ref.high), rel=1e-12)
    assert (dna["paper"], dna["paper_high"]) == (12.0, 20.0)
    assert dna["diff"] == pytest.approx(10.0 - 12.0) and dna["paper_in_ci"] is True

    # paired: b - a per fold
    d = np.subtract(B_ERRORS, A_ERRORS)
    paired = rows.loc[("paired", "iris", "B - A")]
    assert paired["ours_mean"] == pytest.approx(d.mean(), rel=1e-14) and paired["n"] == 3
    assert (paired["ci_low"], paired["ci_high"]) == pytest.approx(
        stats.t.interval(0.95, 2, loc=d.mean(), scale=stats.sem(d)), rel=1e-13
    )
    assert math.isnan(paired["paper"]) and paired["paper_in_ci"] is None


def test_headline_counts_are_aggregations_of_the_rows(project):
    root, path = project
    rows = comparison_rows(load_target(path, root=root), root)
    counts = headline(rows)
    # cells: cv 3 rows x 2 + split 1 + paired 1; ours: all but wine's two; paper numbers
    # beside ours: iris A, B, k3 A, k3 B, dna A, all judged; inside: iris A and dna A
    # one claim (b - a > 0, holding: see test_claims...)
    assert counts == {
        "cells": 8,
        "ours": 6,
        "paper": 5,
        "judged": 5,
        "inside": 2,
        "claims": 1,
        "holding": 1,
        "holding_mean": 1,
    }


def test_comparison_csv_round_trips_and_report_md_is_written(project, monkeypatch):
    root, path = project
    from knnx.papers import declaration

    monkeypatch.setattr(declaration, "TARGETS_DIR", path.parent)
    import knnx.papers as P

    monkeypatch.setattr(P, "target_names", lambda: ["demo"])
    written = assemble(root=root)
    again = read_comparison(root / "results" / "comparison.csv")
    pd.testing.assert_frame_equal(written, again)
    fresh = comparison_rows(load_target(path), root)
    for column in ("ours_mean", "ours_sd", "ci_low", "ci_high", "paper", "diff"):
        np.testing.assert_array_equal(again[column].to_numpy(), fresh[column].to_numpy())  # bit for bit
    assert (root / "results" / "REPORT.md").is_file()


@pytest.mark.parametrize("name", target_names())
def test_every_declared_target_loads_against_its_paper_values(name):
    target = load_target(name, root=".")
    assert target.tables or target.runs
    for run in target.runs:
        assert run.command is not None or (run.spec and run.out)


def test_a_declaration_naming_a_missing_paper_column_is_refused_in_one_line(project):
    root, path = project
    data = yaml.safe_load(path.read_text())
    data["tables"][0]["columns"][0]["paper"] = "nope"
    bad = root / "bad.yaml"
    bad.write_text(yaml.safe_dump(data))
    with pytest.raises(SpecError, match=r"cv: paper.csv has no column 'nope'; it has dataset, k, a, b, note"):
        load_target(bad, root=root)


def test_cli_reproduce_refuses_unknown_targets_and_variables(tmp_path):
    runner = CliRunner()
    result = runner.invoke(cli.app, ["reproduce", "nope", "--root", str(tmp_path)])
    assert result.exit_code == 2
    assert result.output.strip().startswith("error: unknown target 'nope'; known: ")
    result = runner.invoke(cli.app, ["reproduce", "--var", "X=1", "--root", str(tmp_path), "--assemble-only"])
    assert result.exit_code == 2 and "unknown variable X" in result.output
    assert not (tmp_path / "results").exists()  # nothing written


def test_one_number_per_paper_row_with_columns_told_apart_by_when(tmp_path):
    """A long paper CSV (metric, k, algorithm, value): each kind of row gets the column
    whose ``when`` it meets; an empty k shows as "-" in the label and selects nothing."""
    rows = [
        {
            "dataset": f"d{s}",
            "algorithm": alg,
            "repeat": 0,
            "fold": 0,
            "metric": "js",
            "params": params,
            "value": v,
        }
        for s, (a, b) in enumerate([(0.1, 0.3), (0.2, 0.5)])
        for alg, params, v in (("unn", {"k": 10, "loss": "exp"}, a), ("svm", {"C": 1.0}, b))
    ]
    _results(tmp_path / "results" / "r", rows)
    (tmp_path / "long.csv").write_text("metric,k,algorithm,paper_value\njs,10,unn_exp,0.2\njs,,svm,0.9\n")
    declaration = {
        "target": "long",
        "paper": "dambrosio2012",
        "title": "t",
        "tables": [
            {
                "id": "js",
                "title": "js",
                "results": ["results/r"],
                "paper_values": "long.csv",
                "row": "k = {k}",
                "select": {"metric": "{metric}"},
                "columns": [
                    {
                        "label": "UNN(exp)",
                        "paper": "paper_value",
                        "when": {"algorithm": "unn_exp"},
                        "select": {"algorithm": "unn", "params": {"loss": "exp", "k": "{k}"}},
                    },
                    {
                        "label": "SVM",
                        "paper": "paper_value",
                        "when": {"algorithm": "svm"},
                        "select": {"algorithm": "svm"},
                    },
                ],
                "interval": "none",
                "digits": 3,
            }
        ],
    }
    path = tmp_path / "long.yaml"
    path.write_text(yaml.safe_dump(declaration))
    out = comparison_rows(load_target(path, root=tmp_path), tmp_path)
    assert out[["row", "column", "n", "paper"]].values.tolist() == [
        ["k = 10", "UNN(exp)", 2, 0.2],
        ["k = -", "SVM", 2, 0.9],
    ]
    assert out["ours_mean"].tolist() == pytest.approx([0.15, 0.4], rel=1e-15)
    assert out["ci_low"].isna().all() and out["paper_in_ci"].isna().all()  # policy none: no verdict
    assert out["diff"].tolist() == pytest.approx([-0.05, -0.5], rel=1e-12)


def test_claims_hold_when_the_interval_lies_on_the_stated_side(project):
    """b - a per fold is 0.10, 0.09, 0.08: the Student-t interval [0.065, 0.115] lies above
    0 (a claim "> 0" holds) but not above 0.07; a single value (one test set, policy
    none) is judged by itself; mean_difference averages each side within a pair first."""
    from knnx.papers.comparison import judge

    root, path = project
    rows = comparison_rows(load_target(path, root=root), root).set_index(["table", "row", "column"])
    paired = rows.loc[("paired", "iris", "B - A")]
    assert paired["claim"] == "> 0" and paired["claim_holds"] is True
    cell = {"ours_mean": paired["ours_mean"], "ci_low": paired["ci_low"], "ci_high": paired["ci_high"]}
    from knnx.papers.declaration import Claim

    assert paired["ci_low"] == pytest.approx(0.09 - stats.t.ppf(0.975, 2) * 0.01 / 3**0.5, rel=1e-12)
    assert judge(cell, Claim(op=">", value=0.07))["claim_holds"] is False  # 0.065 < 0.07
    assert judge(cell, Claim(op="<", value=0.2))["claim_holds"] is True
    single = {"ours_mean": 0.05, "ci_low": math.nan, "ci_high": math.nan}
    assert judge(single, Claim(op="<", value=0.08)) == {
        "claim": "< 0.08",
        "claim_holds": True,
        "claim_holds_mean": True,
    }
    assert (
        judge({"ours_mean": math.nan, "ci_low": math.nan, "ci_high": math.nan}, Claim(op="<"))["claim_holds"]
        is None
    )
    # pairs with several rows on one side (five seeds of one size) pool into their mean first
    frame = pd.DataFrame(
        {"dataset": ["r"] * 6, "algorithm": ["u"] + ["s"] * 5, "value": [0.10, 0.2, 0.3, 0.1, 0.2, 0.2]}
    )
    from knnx.papers.comparison import compute_cell
    from knnx.papers.declaration import Column, Table

    table = Table(
        id="t",
        title="t",
        results=[],
        paper_values="x",
        row="r",
        columns=[],
        pair=["dataset"],
        statistic="mean_difference",
        interval="none",
    )
    column = Column(label="u - s", select={"algorithm": "u"}, minus={"algorithm": "s"})
    out = compute_cell(frame, table, column, {})
    assert out["n"] == 1 and out["ours_mean"] == pytest.approx(0.10 - 0.2, rel=1e-12)


def test_reproduce_runs_a_spec_with_its_overrides_records_times_and_a_failing_command(tmp_path, monkeypatch):
    """A declared target runs its spec with the declared --set overrides (a variable
    substituted: 3 folds instead of the spec's 5), its cell is the mean of that run's
    fold errors, the wall time and status go to reproduce-times.json, and a failing command
    step marks only its own target as failed."""
    import knnx.papers as P
    from knnx.papers import declaration, reproduce

    (tmp_path / "iris.yaml").write_text(
        "name: tiny\nseed: 0\ndatasets: [iris]\nprotocol: {kind: kfold, folds: 5, repeats: 1, stratified: true}\n"
        "algorithms:\n  - {name: knn, params: {k: 1}}\nmetrics: [error]\n"
    )
    (tmp_path / "paper.csv").write_text("dataset,knn\niris,4.0\n")
    targets = tmp_path / "targets"
    targets.mkdir()
    (targets / "tiny.yaml").write_text(
        yaml.safe_dump(
            {
                "target": "tiny",
                "paper": "piro2012",
                "title": "t",
                "variables": {"FOLDS": 5},
                "runs": [{"spec": "iris.yaml", "out": "results/tiny", "set": {"protocol.folds": "{FOLDS}"}}],
                "tables": [
                    {
                        "id": "t",
                        "title": "t",
                        "results": ["results/tiny"],
                        "paper_values": "paper.csv",
                        "row": "{dataset}",
                        "select": {"dataset": "{dataset}", "metric": "error"},
                        "columns": [{"label": "kNN", "paper": "knn", "select": {"algorithm": "knn"}}],
                        "scale": 100,
                    }
                ],
            }
        )
    )
    (targets / "broken.yaml").write_text(
        yaml.safe_dump(
            {"target": "broken", "paper": "piro2012", "title": "b", "runs": [{"command": "exit 3"}]}
        )
    )
    monkeypatch.setattr(declaration, "TARGETS_DIR", targets)
    monkeypatch.setattr(P, "target_names", lambda: ["broken", "tiny"])
    monkeypatch.setattr(declaration, "target_names", lambda: ["broken", "tiny"])
    rows, times = reproduce(["tiny", "broken"], root=tmp_path, variables={"FOLDS": "3"})
    assert times["tiny"]["status"] == "ok" and times["broken"]["status"].startswith("failed: ")
    assert json.loads((tmp_path / "results" / "reproduce-times.json").read_text()) == times
    results = pd.read_csv(tmp_path / "results" / "tiny" / "results.csv")
    assert sorted(results["fold"].unique()) == [0, 1, 2]  # the override: 3 folds, not 5
    spec = yaml.safe_load((tmp_path / "results" / "tiny" / "spec.yaml").read_text())
    assert spec["protocol"]["folds"] == 3
    errors = results["value"].to_numpy()
    cell = rows.set_index(["target", "column"]).loc[("tiny", "kNN")]
    assert cell["n"] == 3 and cell["ours_mean"] == pytest.approx(100 * errors.mean(), rel=1e-14)
    fold_sizes = results["n_test"].to_numpy()
    assert fold_sizes.sum() == len(load_dataset("iris").y)  # the three folds cover iris once
    assert cell["paper"] == 4.0 and (tmp_path / "results" / "REPORT.md").is_file()
    # the command exits 1 when a target failed (it exited 0), as a run whose cells failed
    done = CliRunner().invoke(cli.app, ["reproduce", "tiny", "broken", "--root", str(tmp_path)])
    assert done.exit_code == 1
    assert done.stderr.splitlines()[-1] == "error: 1 of 2 targets failed: broken"
    # a variable's value of another kind than its default is refused before anything runs
    before = (tmp_path / "results" / "reproduce-times.json").read_text()
    for value in ("abc", "-1", "0", "2.5"):
        done = CliRunner().invoke(
            cli.app, ["reproduce", "tiny", "--var", f"FOLDS={value}", "--root", str(tmp_path)]
        )
        assert (done.exit_code, done.stderr) == (
            2,
            f"error: --var FOLDS: expected an integer >= 1 (its default is 5), got {value!r}\n",
        )
    assert (tmp_path / "results" / "reproduce-times.json").read_text() == before


def test_group_within_median_mean_ratio_and_templated_claims_by_hand(tmp_path):
    """``group: [dataset]`` averages each dataset's folds first (n = datasets); ``mean_ratio``
    with ``within: median`` divides the per-dataset median times; a claim's op and bound
    come from the paper CSV's row; a bad op there is one line naming the CSV and row."""
    from knnx.papers.comparison import compute_cell
    from knnx.papers.declaration import Column, Table

    # d1: three folds, d2: two folds (an unbalanced design: the grouped mean differs from the pooled one)
    frame = pd.DataFrame(
        {
            "dataset": ["d1"] * 6 + ["d2"] * 4,
            "algorithm": ["s", "s", "s", "g", "g", "g", "s", "s", "g", "g"],
            "fold": [0, 1, 2, 0, 1, 2, 0, 1, 0, 1],
            "value": [0.9, 0.8, 0.7, 0.6, 0.6, 0.9, 0.5, 0.7, 0.4, 0.4],
            "fit_seconds": [10.0, 30.0, 20.0, 1.0, 2.0, 9.0, 8.0, 4.0, 2.0, 2.0],
        }
    )
    base = dict(id="t", title="t", results=[], paper_values="x", row="r", columns=[])
    grouped = Table(**base, group=["dataset"])
    out = compute_cell(frame, grouped, Column(label="s", select={"algorithm": "s"}), {})
    # per dataset: d1 (0.9 + 0.8 + 0.7) / 3 = 0.8, d2 (0.5 + 0.7) / 2 = 0.6 -> mean 0.7 over n = 2
    assert out["n"] == 2 and out["ours_mean"] == pytest.approx(0.7, rel=1e-12)
    assert (out["ci_low"], out["ci_high"]) == pytest.approx(I.student_t([0.8, 0.6]), rel=1e-12)
    pooled = compute_cell(frame, Table(**base), Column(label="s", select={"algorithm": "s"}), {})
    assert pooled["n"] == 5 and pooled["ours_mean"] == pytest.approx(3.6 / 5, rel=1e-12)
    # a column's group replaces the table's: per fold, (0.9 + 0.5) / 2, (0.8 + 0.7) / 2, 0.7
    by_fold = compute_cell(frame, grouped, Column(label="s", select={"algorithm": "s"}, group=["fold"]), {})
    assert by_fold["n"] == 3 and by_fold["ours_mean"] == pytest.approx((0.7 + 0.75 + 0.7) / 3, rel=1e-12)
    absent = compute_cell(
        frame, grouped, Column(label="s", select={"algorithm": "s"}, group=["param_beta"]), {}
    )
    assert absent["n"] == 0 and math.isnan(absent["ours_mean"])  # a group column not in the results
    ratio = Table(**base, statistic="mean_ratio", within="median", pair=["dataset"], interval="none")
    column = Column(label="s/g", value="fit_seconds", select={"algorithm": "s"}, minus={"algorithm": "g"})
    out = compute_cell(frame, ratio, column, {})
    # medians: d1 s 20, g 2 -> 10; d2 s (8 + 4) / 2 = 6, g 2 -> 3; mean ratio 6.5
    assert out["n"] == 2 and out["ours_mean"] == pytest.approx(6.5, rel=1e-12)
    assert math.isnan(out["ci_low"])
    # a contrast: weighted per-dataset means (d1: s 0.8, g 0.7; d2: s 0.6, g 0.4)
    contrast = Table(**base, statistic="contrast", pair=["dataset"], interval="paired_t")
    terms = [{"weight": 2.0, "select": {"algorithm": "s"}}, {"weight": -1.0, "select": {"algorithm": "g"}}]
    out = compute_cell(frame, contrast, Column(label="2s - g", terms=terms), {})
    assert out["n"] == 2 and out["ours_mean"] == pytest.approx((0.9 + 0.8) / 2, rel=1e-12)
    assert (out["ci_low"], out["ci_high"]) == pytest.approx(I.student_t([0.9, 0.8]), rel=1e-12)
    terms[1]["select"] = {"algorithm": "nobody"}
    assert compute_cell(frame, contrast, Column(label="x", terms=terms), {})["n"] == 0
    # the same through a declaration whose claims are templates on the paper CSV
    _results(
        tmp_path / "res",
        [
            {"dataset": r.dataset, "algorithm": r.algorithm, "repeat": 0, "fold": r.fold, "metric": "error"}
            | {"params": {}, "value": r.value, "fit_seconds": r.fit_seconds}
            for r in frame.itertuples()
        ],
    )
    (tmp_path / "paper.csv").write_text("a,b,op,bound,ratio\ns,g,>,5,7.0\ns,g,<,5,\n")
    declaration = {
        "target": "demo",
        "paper": "nock2014",
        "title": "t",
        "tables": [
            {
                "id": "times",
                "title": "t",
                "results": ["res"],
                "paper_values": "paper.csv",
                "row": "{a}/{b} {op} {bound}",
                "statistic": "mean_ratio",
                "within": "median",
                "interval": "none",
                "pair": ["dataset"],
                "columns": [
                    {
                        "label": "fit",
                        "paper": "ratio",
                        "value": "fit_seconds",
                        "select": {"algorithm": "{a}"},
                        "minus": {"algorithm": "{b}"},
                        "claim": {"op": "{op}", "value": "{bound}"},
                    }
                ],
            }
        ],
    }
    path = tmp_path / "demo.yaml"
    path.write_text(yaml.safe_dump(declaration))
    rows = comparison_rows(load_target(path, root=tmp_path), tmp_path).set_index("row")
    assert rows.loc["s/g > 5", "ours_mean"] == pytest.approx(6.5, rel=1e-12)
    assert rows.loc["s/g > 5", "diff"] == pytest.approx(6.5 - 7.0, rel=1e-12)
    assert rows["claim"].tolist() == ["> 5", "< 5"] and rows["claim_holds"].tolist() == [True, False]
    (tmp_path / "paper.csv").write_text("a,b,op,bound,ratio\ns,g,>=,5,7.0\n")
    with pytest.raises(
        SpecError,
        match=r"^paper.csv: row s/g >= 5: claim op: expected one of <, >, within, not_below, got '>='$",
    ):
        comparison_rows(load_target(path, root=tmp_path), tmp_path)


def test_two_verdicts_per_claim_interval_and_point_estimate():
    """Hand-worked cells: mean -0.068 with interval [-0.124, -0.012] (the GNNB - SVM shape
    of Nock et al.'s "on par"), mean 0.01 with interval [-0.03, 0.05], and one value."""
    from knnx.papers.comparison import judge
    from knnx.papers.declaration import Claim

    below = {"ours_mean": -0.068, "ci_low": -0.124, "ci_high": -0.012}
    wide = {"ours_mean": 0.01, "ci_low": -0.03, "ci_high": 0.05}
    point = {"ours_mean": 0.015, "ci_low": math.nan, "ci_high": math.nan}

    def verdicts(cell, op, value):
        out = judge(cell, Claim(op=op, value=value))
        return out["claim"], out["claim_holds"], out["claim_holds_mean"]

    # a sign: the mean says yes, the interval (n = 8) does not
    assert verdicts(wide, ">", 0) == ("> 0", False, True)
    assert verdicts(below, ">", 0) == ("> 0", False, False)
    assert verdicts(below, "<", 0) == ("< 0", True, True)
    # equivalence: inside (-d, d), strictly
    assert verdicts(wide, "within", 0.06) == ("within ±0.06", True, True)
    assert verdicts(wide, "within", 0.05) == ("within ±0.05", False, True)  # 0.05 is not < 0.05
    assert verdicts(wide, "within", 0.005) == ("within ±0.005", False, False)
    assert verdicts(below, "within", 0.02) == ("within ±0.02", False, False)
    # not significantly below: the interval reaches the bound
    assert verdicts(wide, "not_below", 0) == ("not below 0", True, True)
    assert verdicts(below, "not_below", 0) == ("not below 0", False, False)
    assert verdicts(below, "not_below", -0.012) == ("not below -0.012", True, False)
    # one value: both verdicts on it
    assert verdicts(point, "within", 0.02) == ("within ±0.02", True, True)
    assert verdicts(point, "not_below", 0.02) == ("not below 0.02", False, False)


def test_a_within_claim_needs_a_positive_half_width(tmp_path):
    from knnx.papers.comparison import _filled_claim
    from knnx.papers.declaration import Claim

    with pytest.raises(
        SpecError, match=r"^p.csv: row r: claim value: a 'within' band needs a positive half-width, got -0.1$"
    ):
        _filled_claim(Claim(op="within", value="{d}"), {"d": -0.1}, "p.csv: row r")
    assert _filled_claim(Claim(op="{op}", value="{d}"), {"op": "within", "d": "0.02"}, "w").value == 0.02


def test_argmin_takes_the_parameter_of_least_mean_value_per_group():
    """Per dataset, the k whose folds have the least mean error (not the single lowest
    fold); equal means go to the smallest k."""
    from knnx.papers.comparison import compute_cell
    from knnx.papers.declaration import ArgMin, Column, Table

    frame = pd.DataFrame(
        {
            "dataset": ["d1"] * 4 + ["d2"] * 2,
            "param_k": ["1", "1", "3", "3", "3", "1"],
            "value": [0.1, 0.5, 0.2, 0.3, 0.2, 0.2],
        }
    )
    table = Table(id="t", title="t", results=[], paper_values="x", row="r", columns=[], interval="none")
    out = compute_cell(frame, table, Column(label="k", argmin=ArgMin(param="k")), {})
    # d1: k = 1 mean 0.3 (though its fold 0.1 is the lowest row), k = 3 mean 0.25 -> 3; d2: a tie -> 1
    assert out["n"] == 2 and out["ours_mean"] == pytest.approx((3 + 1) / 2)


def test_dataset_grid_coordinates_become_columns_and_pair_a_ratio_of_means():
    """posteriors[sigma=0.1,seed=0] gives dataset_sigma 0.1 and dataset_seed 0; a ratio
    paired on dataset_sigma is the ratio of the means over the seeds (hand-worked:
    (1 + 3) / 2 over (1 + 1) / 2 = 2 at sigma 0.1; at sigma 0.3, (9 + 1) / 2 over
    (1 + 9) / 2 = 1, where the mean of per-seed ratios would be (9 + 1/9) / 2 = 4.56)."""
    from knnx.papers.comparison import compute_cell, with_grid_columns
    from knnx.papers.declaration import Column, Table

    names = [f"p[sigma={s},seed={i}]" for s in (0.1, 0.3) for i in (0, 1)]
    frame = pd.DataFrame(
        {
            "dataset": names * 2 + ["plain"],
            "algorithm": ["a"] * 4 + ["b"] * 4 + ["a"],
            "value": [1.0, 3.0, 9.0, 1.0, 1.0, 1.0, 1.0, 9.0, 5.0],
        }
    )
    out = with_grid_columns(frame)
    assert out["dataset_sigma"].tolist()[:4] == [0.1, 0.1, 0.3, 0.3]
    assert out["dataset_seed"].tolist()[:4] == [0, 1, 0, 1] and out["dataset_sigma"].iloc[-1] is None
    table = Table(
        id="t", title="t", results=[], paper_values="p.csv", row="r", columns=[],
        statistic="mean_ratio", interval="none", pair=["dataset_sigma"],
    )  # fmt: skip
    for sigma, ratio in ((0.1, 2.0), (0.3, 1.0)):
        column = Column(
            label="c",
            select={"algorithm": "a", "dataset_sigma": sigma},
            minus={"algorithm": "b", "dataset_sigma": sigma},
        )
        cell = compute_cell(out, table, column, {})
        assert cell["n"] == 1 and cell["ours_mean"] == ratio


def test_lpo_active_sets_the_papers_simulated_numbers_and_claim_at_q_0_2_only():
    """Celisse & Mary-Huard's 21.5 % / 23 % belong to q = 0.2 (the q of Fig. 3; the model's
    Bayes error is q): the other q are knnx's own rows, without a paper number or a claim."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    rows = comparison_rows(load_target("lpo-active", root=root), root).fillna({"claim": ""})
    sec43 = rows[rows["table"] == "sec43"].set_index(["row", "column"])
    assert sec43.loc[("celisse2011-q0.2", "LpO-QbC"), "paper"] == 0.215
    assert sec43.loc[("celisse2011-q0.2", "passive LpO"), "paper"] == 0.23
    assert sec43.loc[("spambase", "LpO-QbC"), "paper"] == 0.202
    others = sec43.loc[
        [r for r in sec43.index if r[0].startswith("celisse2011-q") and r[0] != "celisse2011-q0.2"]
    ]
    assert len(others) == 8 and others["paper"].isna().all()
    paired = rows[rows["table"] == "sec43-paired"].set_index("row")
    assert paired["claim"].to_dict() == {
        "spambase": "< 0",
        "celisse2011-q0.0": "",
        "celisse2011-q0.1": "",
        "celisse2011-q0.2": "< 0",
        "celisse2011-q0.3": "",
        "celisse2011-q0.4": "",
    }
