"""The runner end to end: results against scikit-learn, resume, interruption, jobs, reports."""

import json

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from sklearn.neighbors import KNeighborsClassifier
from typer.testing import CliRunner

from knnx.cli import app
from knnx.datasets import load_bundled
from knnx.errors import ResultsError
from knnx.protocols import make_splits
from knnx.results import COLUMNS, read_results
from knnx.runner import run_spec

runner = CliRunner()
RIPLEY = {
    "name": "ripley",
    "seed": 0,
    "datasets": ["ripley"],
    "protocol": {"kind": "predefined"},
    "algorithms": [{"name": "knn", "params": {"k": [1, 3, 5, 7, 9, 15]}}],
    "metrics": ["error", "f1_macro", "recall_macro"],
}
KFOLD = {
    "name": "kf",
    "seed": 7,
    "datasets": ["iris", {"synthetic": "paredes2006", "n_per_class": 20}],
    "preprocess": {"standardize": True},
    "protocol": {"kind": "kfold", "folds": 3, "repeats": 2},
    "algorithms": [{"name": "knn", "params": {"k": [1, 5], "weights": ["uniform", "distance"]}}],
    "metrics": ["error", "accuracy"],
}


def values(frame):
    return frame.drop(columns=["fit_seconds", "predict_seconds"]).reset_index(drop=True)


def test_ripley_errors_match_sklearn(tmp_path):
    summary = run_spec(RIPLEY, out=tmp_path)
    frame = read_results(tmp_path / "results.csv")
    assert list(frame.columns) == COLUMNS and summary.n_cells == 6 and len(frame) == 18
    ds = load_bundled("ripley")
    tr, te = ds.split
    for k in [1, 3, 5, 7, 9, 15]:
        ref = KNeighborsClassifier(n_neighbors=k, algorithm="brute").fit(ds.X[tr], ds.y[tr])
        ref_error = float(np.mean(ref.predict(ds.X[te]) != ds.y[te]))
        row = frame[(frame.params == f'{{"k":{k},"weights":"uniform"}}') & (frame.metric == "error")]
        assert row.value.item() == ref_error
    assert (tmp_path / "summary.md").read_text().count("**") >= 2
    summary_csv = pd.read_csv(tmp_path / "summary.csv")
    assert set(summary_csv.columns) == {
        "dataset",
        "algorithm",
        "params",
        "metric",
        "mean",
        "std",
        "n",
        "best",
    }
    best = summary_csv[summary_csv.best & (summary_csv.metric == "error")]
    assert best.params.tolist() == ['{"k":15,"weights":"uniform"}']
    env = json.loads((tmp_path / "environment.json").read_text())["runs"]
    assert len(env) == 1 and env[0]["cells_to_run"] == 6
    assert {"knnx", "git_commit", "git_dirty", "numpy", "numba", "cpu", "started"} <= set(env[0])
    run_spec(RIPLEY, out=tmp_path)  # a resumed run adds an entry
    env = json.loads((tmp_path / "environment.json").read_text())["runs"]
    assert [e["cells_to_run"] for e in env] == [6, 0]


def test_rerun_skips_finished_cells_and_partial_rows_are_redone(tmp_path):
    run_spec(KFOLD, out=tmp_path)
    full = read_results(tmp_path / "results.csv")
    assert run_spec(KFOLD, out=tmp_path).n_run == 0
    # Simulate a crash: drop the last cell entirely, leave half of the one before, and
    # a partial line at the end of the file.
    lines = (tmp_path / "results.csv").read_text().splitlines(keepends=True)
    (tmp_path / "results.csv").write_text("".join(lines[:-3]) + lines[-3][:20])
    summary = run_spec(KFOLD, out=tmp_path)
    assert summary.n_run == 2 and summary.n_skipped == summary.n_cells - 2
    again = read_results(tmp_path / "results.csv")
    pd.testing.assert_frame_equal(values(again), values(full))


def test_no_resume_starts_over_and_a_different_spec_is_refused(tmp_path):
    run_spec(RIPLEY, out=tmp_path)
    changed = {**RIPLEY, "metrics": ["error"]}
    with pytest.raises(ResultsError, match="holds results of a different spec"):
        run_spec(changed, out=tmp_path)
    summary = run_spec(changed, out=tmp_path, resume=False)
    assert summary.n_run == 6 and len(read_results(tmp_path / "results.csv")) == 6


def test_jobs_give_identical_results(tmp_path):
    run_spec(KFOLD, out=tmp_path / "a", jobs=1)
    run_spec(KFOLD, out=tmp_path / "b", jobs=2)
    a, b = read_results(tmp_path / "a" / "results.csv"), read_results(tmp_path / "b" / "results.csv")
    pd.testing.assert_frame_equal(values(a), values(b))


def test_same_seed_same_results_and_standardize_fits_on_train(tmp_path):
    run_spec(KFOLD, out=tmp_path / "a")
    run_spec(KFOLD, out=tmp_path / "b")
    a, b = read_results(tmp_path / "a" / "results.csv"), read_results(tmp_path / "b" / "results.csv")
    pd.testing.assert_frame_equal(values(a), values(b))
    # Recompute one iris cell by hand: scaler fitted on the training part only.
    from knnx.spec import SEED_SPLITS, dataset_seedseq

    ds = load_bundled("iris")
    split = make_splits(
        ds, dataset_seedseq(7, "iris", SEED_SPLITS), "kfold", folds=3, repeats=2, stratified=True
    )[4]
    mean, std = ds.X[split.train].mean(0), ds.X[split.train].std(0)
    ref = KNeighborsClassifier(5, algorithm="brute").fit((ds.X[split.train] - mean) / std, ds.y[split.train])
    expected = float(np.mean(ref.predict((ds.X[split.test] - mean) / std) != ds.y[split.test]))
    row = a[
        (a.dataset == "iris")
        & (a.params == json.dumps({"k": 5, "weights": "uniform"}).replace(" ", ""))
        & (a.repeat == split.repeat)
        & (a.fold == split.fold)
        & (a.metric == "error")
    ]
    assert_allclose(row.value.item(), expected, rtol=0, atol=0)


def test_table_and_check_commands(tmp_path):
    run_spec(RIPLEY, out=tmp_path)
    results = tmp_path / "results.csv"
    md = runner.invoke(app, ["table", str(results), "--metric", "error"])
    assert md.exit_code == 0
    assert '| ripley | knn | {"k":15,"weights":"uniform"} | **0.0950 ± 0.0000** | 1 |' in md.stdout
    csv_out = runner.invoke(app, ["table", str(results), "--format", "csv", "--by", "dataset,algorithm"])
    assert (
        csv_out.exit_code == 0
        and csv_out.stdout.splitlines()[0] == "dataset,algorithm,metric,mean,std,n,best"
    )
    latex = runner.invoke(app, ["table", str(results), "--format", "latex"])
    assert "\\textbf{0.0950 $\\pm$ 0.0000}" in latex.stdout
    ok = runner.invoke(app, ["check", str(results), "--reference", str(results)])
    assert ok.exit_code == 0
    moved = pd.read_csv(results)
    moved.loc[(moved.metric == "error") & (moved.params == '{"k":1,"weights":"uniform"}'), "value"] += 0.02
    moved.to_csv(tmp_path / "moved.csv", index=False)
    bad = runner.invoke(
        app, ["check", str(tmp_path / "moved.csv"), "--reference", str(results), "--atol", "0.01"]
    )
    assert bad.exit_code == 1
    assert 'moved: ripley knn {"k":1,"weights":"uniform"} error: 0.170000 vs reference 0.150000' in bad.stdout
    missing = runner.invoke(app, ["check", str(tmp_path / "nope.csv"), "--reference", str(results)])
    assert missing.exit_code == 2 and "RESULTS: file not found" in missing.stderr
    bad_metric = runner.invoke(app, ["table", str(results), "--metric", "auc"])
    assert bad_metric.exit_code == 2 and "--metric: no rows for metric 'auc'" in bad_metric.stderr


def test_cli_run_writes_the_three_outputs(tmp_path):
    spec = tmp_path / "r.yaml"
    import yaml

    spec.write_text(yaml.safe_dump(RIPLEY))
    result = runner.invoke(app, ["run", str(spec), "--out", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    for name in ("results.csv", "summary.md", "summary.csv", "spec.yaml", "environment.json"):
        assert (tmp_path / "o" / name).is_file()
    assert "6 cells run, 0 already done" in result.stdout


def test_plot_lines_carry_the_group_means(tmp_path):
    from knnx.plots import plot_metric

    run_spec(KFOLD, out=tmp_path)
    assert (tmp_path / "error.png").is_file() and (tmp_path / "accuracy.png").is_file()
    frame = read_results(tmp_path / "results.csv")
    fig = plot_metric(frame, "error", x="k")
    iris_ax = next(ax for ax in fig.axes if ax.get_title() == "iris")
    lines = {c.get_label(): c.lines[0] for c in iris_ax.containers}  # errorbar containers
    uniform = lines["knn weights=uniform"]
    sub = frame[(frame.dataset == "iris") & (frame.metric == "error")]
    expected = [sub[sub.params == f'{{"k":{k},"weights":"uniform"}}'].value.mean() for k in (1, 5)]
    assert list(uniform.get_xdata()) == [1, 5]
    assert_allclose(uniform.get_ydata(), expected, rtol=1e-12)


def test_plot_command_and_its_errors(tmp_path):
    run_spec(RIPLEY, out=tmp_path)
    results = tmp_path / "results.csv"
    ok = runner.invoke(app, ["plot", str(results), "--metric", "f1_macro", "--out", str(tmp_path / "f1.pdf")])
    assert ok.exit_code == 0 and (tmp_path / "f1.pdf").stat().st_size > 1000
    bad_x = runner.invoke(app, ["plot", str(results), "--x", "kk"])
    assert (
        bad_x.exit_code == 2
        and "--x: no parameter 'kk' in these results; numeric ones that vary: k" in bad_x.stderr
    )


def test_output_folder_guards(tmp_path):
    (tmp_path / "afile").write_text("x")
    with pytest.raises(ResultsError, match="--out: .*afile is a file, not a folder"):
        run_spec(RIPLEY, out=tmp_path / "afile")
    run_spec(RIPLEY, out=tmp_path / "o")
    (tmp_path / "o" / "spec.yaml").unlink()
    with pytest.raises(ResultsError, match="has a results.csv but no spec.yaml"):
        run_spec(RIPLEY, out=tmp_path / "o")
    (tmp_path / "g").mkdir()
    (tmp_path / "g" / "results.csv").write_text("garbage,line\n")
    run_spec(RIPLEY, out=tmp_path / "g", resume=False)  # --no-resume starts over
    assert len(read_results(tmp_path / "g" / "results.csv")) == 18


def test_no_resume_clears_old_plots(tmp_path):
    run_spec(RIPLEY, out=tmp_path)
    assert (tmp_path / "f1_macro.png").exists()
    run_spec({**RIPLEY, "metrics": ["error"]}, out=tmp_path, resume=False)
    assert (tmp_path / "error.png").exists() and not (tmp_path / "f1_macro.png").exists()


def test_a_failing_cell_is_one_line(tmp_path, monkeypatch):
    from knnx.algorithms import ALGORITHMS
    from knnx.errors import CellError
    from knnx.knn import KNNClassifier

    class Broken(KNNClassifier):
        def fit(self, X, y):
            raise RuntimeError("boom\nsecond line")

    monkeypatch.setitem(ALGORITHMS, "broken", Broken)
    spec = {
        **RIPLEY,
        "algorithms": [{"name": "knn", "params": {"k": 1}}, {"name": "broken", "params": {"k": 3}}],
    }
    with pytest.raises(CellError) as info:
        run_spec(spec, out=tmp_path)
    assert str(info.value) == (
        'cell ripley broken {"k":3,"weights":"uniform"} repeat 0 fold 0 failed: RuntimeError: boom'
    )
    assert len(read_results(tmp_path / "results.csv")) == 3  # the finished knn cell is kept


def test_names_like_na_survive_resume(tmp_path):
    spec = {**KFOLD, "datasets": [{"name": "iris", "id": "NA"}]}
    run_spec(spec, out=tmp_path)
    assert run_spec(spec, out=tmp_path).n_run == 0
    assert set(read_results(tmp_path / "results.csv").dataset) == {"NA"}


def test_defaults_are_written_into_params(tmp_path):
    run_spec({**RIPLEY, "algorithms": [{"name": "knn", "params": {"k": 3}}]}, out=tmp_path)
    assert set(read_results(tmp_path / "results.csv").params) == {'{"k":3,"weights":"uniform"}'}


LPO_SPEC = {
    "name": "lpo",
    "seed": 0,
    "datasets": ["ripley"],
    "protocol": {"kind": "kfold", "folds": 3, "repeats": 1},
    "algorithms": [{"name": "knn_lpo", "params": {"p": [1, 5], "k_max": 15}}],
    "metrics": ["error"],
}


def test_knn_lpo_records_the_chosen_k_and_resume_keeps_it(tmp_path):
    from knnx.lpo import select_k
    from knnx.spec import SEED_SPLITS, dataset_seedseq

    run_spec(LPO_SPEC, out=tmp_path)
    frame = read_results(tmp_path / "results.csv")
    assert len(frame) == 2 * 3 * 2  # (p) x (folds) x (error, chosen_k)
    ds = load_bundled("ripley")
    splits = make_splits(
        ds, dataset_seedseq(0, "ripley", SEED_SPLITS), "kfold", folds=3, repeats=1, stratified=True
    )
    for s in splits:
        for p in (1, 5):
            params = f'{{"k_max":15,"p":{p},"weights":"uniform"}}'
            rows = frame[(frame.params == params) & (frame.fold.astype(int) == s.fold)]
            k, _ = select_k(ds.X[s.train], ds.y[s.train], p, 15)
            assert float(rows[rows.metric == "chosen_k"].value.item()) == k
            ref = KNeighborsClassifier(n_neighbors=k, algorithm="brute").fit(ds.X[s.train], ds.y[s.train])
            if k % 2:  # odd k, two classes: no vote tie, scikit-learn's rule is the same
                err = float(np.mean(ref.predict(ds.X[s.test]) != ds.y[s.test]))
                assert float(rows[rows.metric == "error"].value.item()) == err
    before = (tmp_path / "results.csv").read_text()
    again = run_spec(LPO_SPEC, out=tmp_path)
    assert again.n_run == 0 and (tmp_path / "results.csv").read_text() == before
    summary = pd.read_csv(tmp_path / "summary.csv")
    assert not summary[summary.metric == "chosen_k"].best.any()
    assert "## chosen_k" in (tmp_path / "summary.md").read_text()


def test_knn_lpo_p_must_be_below_the_training_size(tmp_path):
    from knnx.errors import SpecError

    bad = {**LPO_SPEC, "algorithms": [{"name": "knn_lpo", "params": {"p": 833}}]}
    with pytest.raises(
        SpecError, match=r"algorithms\[0\]\.params\.p: p=833 must be below the 833 training samples"
    ):
        run_spec(bad, out=tmp_path)


LPO_PROTOCOL = {
    "name": "lpo-protocol",
    "seed": 0,
    "datasets": ["iris", {"synthetic": "celisse2011", "n": 60, "q": 0.2}],
    "protocol": {"kind": "lpo", "p": 7},
    "algorithms": [{"name": "knn", "params": {"k": [1, 4, 9]}}],
    "metrics": ["error"],
}


def test_lpo_protocol_writes_the_exact_estimate_once_per_setting(tmp_path):
    from knnx.datasets import load_dataset
    from knnx.lpo import lpo_risk
    from knnx.spec import SEED_DATA, dataset_seedseq

    run_spec(LPO_PROTOCOL, out=tmp_path)
    frame = read_results(tmp_path / "results.csv")
    assert len(frame) == 2 * 3  # one row per (dataset, k): no folds, no repeats
    assert set(frame.metric) == {"error"} and set(frame.fold.astype(int)) == {0}
    for entry in LPO_PROTOCOL["datasets"]:
        from knnx.datasets import dataset_label

        label = dataset_label(entry)
        ds = load_dataset(entry, seed=dataset_seedseq(0, label, SEED_DATA))
        risk = lpo_risk(ds.X, ds.y, 7, 9)
        rows = frame[frame.dataset == label]
        for k in (1, 4, 9):
            row = rows[rows.params == f'{{"k":{k},"weights":"uniform"}}']
            assert float(row.value.item()) == risk[k - 1]
            assert int(row.n_train.item()) == len(ds.y) - 7 and int(row.n_test.item()) == 7
    assert json.loads(frame.protocol.iloc[0]) == {"kind": "lpo", "p": 7}
    again = run_spec(LPO_PROTOCOL, out=tmp_path)
    assert again.n_run == 0


@pytest.mark.parametrize(
    "change, message",
    [
        ({"metrics": ["error", "f1_macro"]}, r"metrics: protocol lpo gives the exact leave-p-out estimate"),
        (
            {"algorithms": [{"name": "knn_lpo", "params": {"p": 2}}]},
            r"algorithms\[0\]: knn_lpo has no closed-form leave-p-out risk; protocol lpo supports: knn",
        ),
        (
            {"protocol": {"kind": "lpo", "p": 150}},
            r"protocol.p: 150 must be below the 150 rows of dataset 'iris'",
        ),
        (
            {"protocol": {"kind": "lpo", "p": 145}, "algorithms": [{"name": "knn", "params": {"k": 6}}]},
            r"algorithms\[0\]\.params\.k: k=6 exceeds the 5 training samples",
        ),
        ({"protocol": {"kind": "lpo", "p": 0}}, r"protocol\.p: input should be greater than or equal to 1"),
    ],
)
def test_lpo_protocol_spec_errors(tmp_path, change, message):
    from knnx.errors import SpecError

    bad = {**LPO_PROTOCOL, "datasets": ["iris"], **change}
    with pytest.raises(SpecError, match=message):
        run_spec(bad, out=tmp_path)
    assert not (tmp_path / "results.csv").exists()


def test_plots_skip_a_metric_whose_rows_have_no_varying_parameter(tmp_path):
    # knn varies k; knn_lpo's chosen_k rows come from a single setting: error.png only.
    spec = {
        "name": "mixed",
        "seed": 0,
        "datasets": ["ripley"],
        "protocol": {"kind": "predefined"},
        "algorithms": [
            {"name": "knn", "params": {"k": [1, 3]}},
            {"name": "knn_lpo", "params": {"p": 2, "k_max": 5}},
        ],
        "metrics": ["error"],
    }
    run_spec(spec, out=tmp_path)
    assert (tmp_path / "error.png").exists() and not (tmp_path / "chosen_k.png").exists()
