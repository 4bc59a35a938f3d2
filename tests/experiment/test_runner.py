"""The runner end to end: results against scikit-learn, resume, interruption, jobs, reports."""

import json

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import RTOL
from numpy.testing import assert_allclose
from sklearn.neighbors import KNeighborsClassifier
from typer.testing import CliRunner

from knnx.cli import app
from knnx.datasets import load_bundled
from knnx.errors import ResultsError
from knnx.evaluation.protocols import make_splits
from knnx.experiment.runner import run_spec
from knnx.results import COLUMNS, read_results

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
    return frame.drop(columns=["fit_seconds", "predict_seconds", "tune_seconds"]).reset_index(drop=True)


def test_ripley_errors_match_sklearn(tmp_path):
    summary = run_spec(RIPLEY, out=tmp_path)
    frame = read_results(tmp_path / "results.csv")
    assert list(frame.columns) == [
        *COLUMNS,
        "param_k",
        "param_metric",
        "param_metric_params",
        "param_nominal",
        "param_seed",
        "param_tie",
        "param_weights",
    ]
    assert summary.n_cells == 6 and len(frame) == 18
    ds = load_bundled("ripley")
    tr, te = ds.split
    for k in [1, 3, 5, 7, 9, 15]:
        ref = KNeighborsClassifier(n_neighbors=k, algorithm="brute").fit(ds.X[tr], ds.y[tr])
        ref_error = float(np.mean(ref.predict(ds.X[te]) != ds.y[te]))
        row = frame[
            (
                frame.params
                == f'{{"k":{k},"metric":"euclidean","metric_params":null,"nominal":null,"seed":null,"tie":"nearest","weights":"uniform"}}'
            )
            & (frame.metric == "error")
        ]
        assert row.value.item() == ref_error
    assert (tmp_path / "summary.md").read_text().count("**") >= 2
    summary_csv = pd.read_csv(tmp_path / "summary.csv")
    assert set(summary_csv.columns) == {
        "dataset",
        "algorithm",
        "configuration",
        "metric",
        "mean",
        "std",
        "n",
        "best",
    }
    best = summary_csv[summary_csv.best & (summary_csv.metric == "error")]
    assert best.configuration.tolist() == ["knn k=15"]
    env = json.loads((tmp_path / "environment.json").read_text())["runs"]
    assert len(env) == 1 and env[0]["cells_to_run"] == 6
    assert {"knnx", "git_commit", "git_dirty", "numpy", "numba", "cpu", "started"} <= set(env[0])
    files = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.name != ".knnx.lock"}
    assert run_spec(RIPLEY, out=tmp_path).n_run == 0  # nothing to do: nothing written, no entry
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.name != ".knnx.lock"} == files
    (tmp_path / "report.html").unlink()  # an output missing: the end of the run is made again
    run_spec(RIPLEY, out=tmp_path)
    assert (tmp_path / "report.html").is_file()
    env = json.loads((tmp_path / "environment.json").read_text())["runs"]
    assert [e["cells_to_run"] for e in env] == [6, 0]


@pytest.mark.pandas_io
def test_rerun_skips_finished_cells_and_partial_rows_are_redone(tmp_path):
    run_spec(KFOLD, out=tmp_path, figures=False)
    full = read_results(tmp_path / "results.csv")
    assert run_spec(KFOLD, out=tmp_path, figures=False).n_run == 0
    # Simulate a crash: drop the last cell entirely, leave half of the one before, and
    # a partial line at the end of the file.
    lines = (tmp_path / "results.csv").read_text().splitlines(keepends=True)
    (tmp_path / "results.csv").write_text("".join(lines[:-3]) + lines[-3][:20])
    summary = run_spec(KFOLD, out=tmp_path, figures=False)
    assert summary.n_run == 2 and summary.n_skipped == summary.n_cells - 2
    again = read_results(tmp_path / "results.csv")
    pd.testing.assert_frame_equal(values(again), values(full))


@pytest.mark.pandas_io
def test_no_resume_starts_over(tmp_path):
    run_spec(RIPLEY, out=tmp_path, figures=False)
    summary = run_spec(RIPLEY, out=tmp_path, resume=False, figures=False)
    assert summary.n_run == 6 and len(read_results(tmp_path / "results.csv")) == 18


@pytest.mark.pandas_io
def test_an_edited_spec_reruns_exactly_the_cells_that_changed(tmp_path):
    """The cache keys on content: a new grid value or algorithm runs only the new cells,
    a dropped one leaves results.csv, and changing what every cell depends on (the
    metrics) reruns everything. Values equal those of a fresh run."""
    run_spec(RIPLEY, out=tmp_path, figures=False)
    grown = {**RIPLEY, "algorithms": [{"name": "knn", "params": {"k": [1, 3, 5, 7, 9, 15, 21]}}]}
    summary = run_spec(grown, out=tmp_path, figures=False)
    assert (summary.n_run, summary.n_skipped) == (1, 6)
    fresh = run_spec(grown, out=tmp_path / "fresh", figures=False)
    pd.testing.assert_frame_equal(
        values(read_results(tmp_path / "results.csv")), values(read_results(fresh.out / "results.csv"))
    )
    shrunk = {**RIPLEY, "algorithms": [{"name": "knn", "params": {"k": [1, 3]}}]}
    summary = run_spec(shrunk, out=tmp_path, figures=False)
    assert summary.n_run == 0
    assert len(read_results(tmp_path / "results.csv")) == 6  # 2 cells x 3 metrics
    assert summary.notes == (  # said, not silent: another spec into one folder replaces its rows
        f"5 cells of an earlier spec are not in this one: their rows left {tmp_path}/results.csv "
        "(run it with another --out to keep both)",
    )
    again = run_spec({**shrunk, "metrics": ["error"]}, out=tmp_path, figures=False)
    assert again.n_run == 2 and again.notes == ()  # rerun (their hash changed), none removed


def test_changed_data_or_code_invalidates_the_cache(tmp_path, monkeypatch):
    from knnx.experiment import provenance as R

    csv = tmp_path / "d.csv"
    csv.write_text("a,b,label\n" + "".join(f"{i},{i % 3},{i % 2}\n" for i in range(30)))
    spec = {**KFOLD, "datasets": [{"csv": str(csv), "label": "label"}], "preprocess": {"standardize": False}}
    out = tmp_path / "out"
    n = run_spec(spec, out=out, figures=False).n_cells
    assert run_spec(spec, out=out, figures=False).n_run == 0
    csv.write_text(csv.read_text().replace("\n7,1,1\n", "\n7,2,1\n"))  # one value changes
    assert run_spec(spec, out=out, figures=False).n_run == n
    monkeypatch.setattr(R, "code_checksum", lambda: "edited")  # as if knnx's code changed
    assert run_spec(spec, out=out, figures=False).n_run == n
    assert run_spec(spec, out=out, figures=False).n_run == 0
    upgraded = {**R.library_versions(), "scikit-learn": "99.0"}  # as if a library were upgraded
    monkeypatch.setattr(R, "library_versions", lambda: upgraded)
    assert run_spec(spec, out=out, figures=False).n_run == n
    assert run_spec(spec, out=out, figures=False).n_run == 0


def test_library_versions_are_the_installed_ones():
    import numpy
    import scipy
    import sklearn

    from knnx.experiment.provenance import library_versions

    v = library_versions()
    assert (v["numpy"], v["scipy"], v["scikit-learn"]) == (
        numpy.__version__,
        scipy.__version__,
        sklearn.__version__,
    )
    assert set(v) == {"numpy", "scipy", "numba", "llvmlite", "scikit-learn", "metric-learn"}


def test_jobs_give_identical_results(tmp_path, shared_run):
    one = shared_run(KFOLD, jobs=1, figures=False)
    run_spec(KFOLD, out=tmp_path / "b", jobs=2, figures=False)
    a, b = read_results(one / "results.csv"), read_results(tmp_path / "b" / "results.csv")
    pd.testing.assert_frame_equal(values(a), values(b))


def test_same_seed_same_results_and_standardize_fits_on_train(tmp_path, shared_run):
    first = shared_run(KFOLD, jobs=1, figures=False)
    run_spec(KFOLD, out=tmp_path / "b", figures=False)
    a, b = read_results(first / "results.csv"), read_results(tmp_path / "b" / "results.csv")
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
        & (
            a.params
            == json.dumps(
                {
                    "k": 5,
                    "metric": "euclidean",
                    "metric_params": None,
                    "nominal": None,
                    "seed": None,
                    "tie": "nearest",
                    "weights": "uniform",
                }
            ).replace(" ", "")
        )
        & (a.repeat == split.repeat)
        & (a.fold == split.fold)
        & (a.metric == "error")
    ]
    assert_allclose(row.value.item(), expected, rtol=0, atol=0)


@pytest.mark.pandas_io
def test_table_and_check_commands(tmp_path, shared_run):
    results = shared_run(RIPLEY, figures=False) / "results.csv"
    md = runner.invoke(app, ["table", str(results), "--metric", "error"])
    assert md.exit_code == 0
    # one value per configuration (a predefined split): the mean alone, its count beside it
    assert "| ripley | knn k=15 | **0.0950** | 1 |" in md.stdout.splitlines()
    assert md.stdout.splitlines()[-1] == (
        "Bold: the lowest mean per dataset among these rows. It is the best on the test folds, an optimistic "
        "choice; to choose a setting honestly, tune it on inner folds (tune: in the spec)."
    )
    csv_out = runner.invoke(app, ["table", str(results), "--format", "csv", "--by", "dataset,algorithm"])
    assert (
        csv_out.exit_code == 0
        and csv_out.stdout.splitlines()[0] == "dataset,algorithm,metric,configurations,mean,std,n,best"
        and csv_out.stdout.splitlines()[1].startswith("ripley,knn,error,6,")  # the six k, pooled and counted
    )
    latex = runner.invoke(app, ["table", str(results), "--format", "latex"])
    lines = latex.stdout.splitlines()
    assert lines[0].startswith("% Bold: the lowest mean per dataset")
    assert lines[1:5] == [
        "\\begin{tabular}{llrr}",
        "\\toprule",
        "dataset & configuration & mean $\\pm$ std & $n$ \\\\",
        "\\midrule",
    ]
    assert "ripley & knn k=15 & \\textbf{0.0950} & 1 \\\\" in lines and lines[-2:] == [
        "\\bottomrule",
        "\\end{tabular}",
    ]
    ok = runner.invoke(app, ["check", str(results), "--reference", str(results)])
    assert ok.exit_code == 0
    moved = pd.read_csv(results)
    moved.loc[
        (moved.metric == "error")
        & (
            moved.params
            == '{"k":1,"metric":"euclidean","metric_params":null,"nominal":null,"seed":null,"tie":"nearest","weights":"uniform"}'
        ),
        "value",
    ] += 0.02
    moved.to_csv(tmp_path / "moved.csv", index=False)
    bad = runner.invoke(
        app, ["check", str(tmp_path / "moved.csv"), "--reference", str(results), "--atol", "0.01"]
    )
    assert bad.exit_code == 1
    assert (
        'moved: ripley knn {"k":1,"metric":"euclidean","metric_params":null,"nominal":null,"seed":null,"tie":"nearest","weights":"uniform"} error: 0.170000 vs reference 0.150000'
        in bad.stdout
    )
    # --atol-for: the moved knn group passes under its own larger tolerance, and only then
    args = ["check", str(tmp_path / "moved.csv"), "--reference", str(results), "--atol", "0.01"]
    assert runner.invoke(app, args + ["--atol-for", "knn=0.03"]).exit_code == 0
    assert runner.invoke(app, args + ["--atol-for", "knn=0.01"]).exit_code == 1
    # an algorithm the reference lacks (a misspelt name would leave knn at --atol)
    unknown = runner.invoke(app, args + ["--atol-for", "unn=0.03"])
    assert (unknown.exit_code, unknown.stderr) == (
        2,
        f"error: --atol-for: no algorithm 'unn' in {results} (its algorithms: knn)\n",
    )
    for bad_value in ("knn", "knn=x", "=0.1", "knn=-1", "knn=inf", "knn=nan"):
        bad_tol = runner.invoke(app, args + ["--atol-for", bad_value])
        assert bad_tol.exit_code == 2
        assert bad_tol.stderr.strip() == (
            f"error: --atol-for: expected ALGORITHM=TOL with a finite TOL >= 0, got '{bad_value}'"
        )
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
    from knnx.reporting.figures import plot_metric

    run_spec(KFOLD, out=tmp_path)
    assert (tmp_path / "error.png").is_file() and (tmp_path / "accuracy.png").is_file()
    frame = read_results(tmp_path / "results.csv")
    fig = plot_metric(frame, "error", x="k")
    iris_ax = next(ax for ax in fig.axes if ax.get_title() == "iris")
    lines = {c.get_label(): c.lines[0] for c in iris_ax.containers}  # errorbar containers
    uniform = lines["knn weights=uniform"]
    sub = frame[(frame.dataset == "iris") & (frame.metric == "error")]
    expected = [
        sub[
            sub.params
            == f'{{"k":{k},"metric":"euclidean","metric_params":null,"nominal":null,"seed":null,"tie":"nearest","weights":"uniform"}}'
        ].value.mean()
        for k in (1, 5)
    ]
    assert list(uniform.get_xdata()) == [1, 5]
    assert_allclose(uniform.get_ydata(), expected, rtol=1e-12)


def test_plot_labels_name_only_the_parameters_that_vary(shared_run):
    """Ripley's spec fixes weights=uniform: the line is labelled "knn", not with every
    parameter (a long label used to squeeze the axes to nothing)."""
    from knnx.reporting.figures import plot_metric

    fig = plot_metric(read_results(shared_run(RIPLEY, figures=False) / "results.csv"), "error", x="k")
    assert [c.get_label() for c in fig.axes[0].containers] == ["knn"]


def test_plot_command_and_its_errors(tmp_path, shared_run):
    results = shared_run(RIPLEY, figures=False) / "results.csv"
    ok = runner.invoke(app, ["plot", str(results), "--metric", "f1_macro", "--out", str(tmp_path / "f1.pdf")])
    assert ok.exit_code == 0 and (tmp_path / "f1.pdf").stat().st_size > 1000
    bad_x = runner.invoke(app, ["plot", str(results), "--x", "kk"])
    assert (
        bad_x.exit_code == 2
        and bad_x.stderr
        == "error: --x: no parameter 'kk' in the 'error' rows; parameters that vary within an algorithm: k (or --x configuration: "
        "every configuration side by side)\n"
    )


def test_output_folder_guards(tmp_path):
    (tmp_path / "afile").write_text("x")
    with pytest.raises(ResultsError, match="--out: .*afile is a file, not a folder"):
        run_spec(RIPLEY, out=tmp_path / "afile", figures=False)
    run_spec(RIPLEY, out=tmp_path / "o", figures=False)
    (tmp_path / "o" / "cells.csv").unlink()
    with pytest.raises(ResultsError, match="has a results.csv but no cells.csv ledger"):
        run_spec(RIPLEY, out=tmp_path / "o", figures=False)
    (tmp_path / "g").mkdir()
    (tmp_path / "g" / "results.csv").write_text("garbage,line\n")
    run_spec(RIPLEY, out=tmp_path / "g", resume=False, figures=False)  # --no-resume starts over
    assert len(read_results(tmp_path / "g" / "results.csv")) == 18


def test_no_resume_clears_old_plots(tmp_path):
    run_spec(RIPLEY, out=tmp_path)
    assert (tmp_path / "f1_macro.png").exists()
    run_spec({**RIPLEY, "metrics": ["error"]}, out=tmp_path, resume=False)
    assert (tmp_path / "error.png").exists() and not (tmp_path / "f1_macro.png").exists()


def test_a_failing_cell_is_one_line(tmp_path, monkeypatch):
    from knnx.errors import CellError
    from knnx.estimators.knn import KNNClassifier
    from knnx.estimators.registry import ALGORITHMS

    class Broken(KNNClassifier):
        def fit(self, X, y):
            raise RuntimeError("boom\nsecond line")

    monkeypatch.setitem(ALGORITHMS, "broken", Broken)
    spec = {
        **RIPLEY,
        "algorithms": [{"name": "knn", "params": {"k": 1}}, {"name": "broken", "params": {"k": 3}}],
    }
    with pytest.raises(CellError) as info:
        run_spec(spec, out=tmp_path, figures=False)
    message = 'cell ripley broken {"k":3,"metric":"euclidean","metric_params":null,"nominal":null,"seed":null,"tie":"nearest","weights":"uniform"} repeat 0 fold 0 failed: RuntimeError: boom'
    assert str(info.value) == (
        f"1 of 2 cells failed and were not saved (listed in {tmp_path / 'failures.csv'}; a rerun retries them); "
        f"first: {message}"
    )
    assert "\n" not in str(info.value)
    assert len(read_results(tmp_path / "results.csv")) == 3  # the finished knn cell is kept
    failures = pd.read_csv(tmp_path / "failures.csv", keep_default_na=False)
    assert failures.to_dict("records") == [
        {
            "dataset": "ripley",
            "algorithm": "broken",
            "params": '{"k":3,"metric":"euclidean","metric_params":null,"nominal":null,"seed":null,"tie":"nearest","weights":"uniform"}',
            "repeat": 0,
            "fold": 0,
            "cell_key": failures.cell_key[0],
            "error": message,
        }
    ]
    assert len(failures.cell_key[0]) == 64
    # the CLI: exit code 1 (the spec was fine, an algorithm failed), one line
    spec_file = tmp_path / "s.yaml"
    spec_file.write_text(yaml.safe_dump(spec))
    result = CliRunner().invoke(app, ["run", str(spec_file), "--out", str(tmp_path / "cli"), "--quiet"])
    assert result.exit_code == 1 and result.stderr.count("\n") == 1
    assert result.stderr.startswith("error: 1 of 2 cells failed and were not saved")
    # the failure is not cached: once the algorithm works, the next run retries that cell only
    monkeypatch.setitem(ALGORITHMS, "broken", KNNClassifier)
    summary = run_spec(spec, out=tmp_path, figures=False)
    assert (summary.n_run, summary.n_skipped) == (1, 1) and not (tmp_path / "failures.csv").exists()
    assert len(read_results(tmp_path / "results.csv")) == 6


@pytest.mark.pandas_io
def test_names_like_na_survive_resume(tmp_path):
    spec = {**KFOLD, "datasets": [{"name": "iris", "id": "NA"}]}
    run_spec(spec, out=tmp_path, figures=False)
    assert run_spec(spec, out=tmp_path, figures=False).n_run == 0
    assert set(read_results(tmp_path / "results.csv").dataset) == {"NA"}


def test_defaults_are_written_into_params(tmp_path):
    run_spec({**RIPLEY, "algorithms": [{"name": "knn", "params": {"k": 3}}]}, out=tmp_path, figures=False)
    assert set(read_results(tmp_path / "results.csv").params) == {
        '{"k":3,"metric":"euclidean","metric_params":null,"nominal":null,"seed":null,"tie":"nearest","weights":"uniform"}'
    }


LPO_SPEC = {
    "name": "lpo",
    "seed": 0,
    "datasets": ["ripley"],
    "protocol": {"kind": "kfold", "folds": 3, "repeats": 1},
    "algorithms": [{"name": "knn_lpo", "params": {"p": [1, 5], "k_max": 15}}],
    "metrics": ["error"],
}


@pytest.mark.pandas_io
def test_knn_lpo_records_the_chosen_k_and_resume_keeps_it(tmp_path):
    from knnx.lpo.risk import select_k
    from knnx.spec import SEED_SPLITS, dataset_seedseq

    run_spec(LPO_SPEC, out=tmp_path, figures=False)
    frame = read_results(tmp_path / "results.csv")
    assert len(frame) == 2 * 3 * 2  # (p) x (folds) x (error, chosen_k)
    ds = load_bundled("ripley")
    splits = make_splits(
        ds, dataset_seedseq(0, "ripley", SEED_SPLITS), "kfold", folds=3, repeats=1, stratified=True
    )
    for s in splits:
        for p in (1, 5):
            params = f'{{"k_max":15,"metric":"euclidean","metric_params":null,"nominal":null,"p":{p},"seed":null,"tie":"nearest","weights":"uniform"}}'
            rows = frame[(frame.params == params) & (frame.fold.astype(int) == s.fold)]
            k, _ = select_k(ds.X[s.train], ds.y[s.train], p, 15)
            assert float(rows[rows.metric == "chosen_k"].value.item()) == k
            ref = KNeighborsClassifier(n_neighbors=k, algorithm="brute").fit(ds.X[s.train], ds.y[s.train])
            if k % 2:  # odd k, two classes: no vote tie, scikit-learn's rule is the same
                err = float(np.mean(ref.predict(ds.X[s.test]) != ds.y[s.test]))
                assert float(rows[rows.metric == "error"].value.item()) == err
    before = (tmp_path / "results.csv").read_text()
    again = run_spec(LPO_SPEC, out=tmp_path, figures=False)
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
        run_spec(bad, out=tmp_path, figures=False)


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
    from knnx.lpo.risk import lpo_risk
    from knnx.spec import SEED_DATA, dataset_seedseq

    run_spec(LPO_PROTOCOL, out=tmp_path, figures=False)
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
            row = rows[
                rows.params
                == f'{{"k":{k},"metric":"euclidean","metric_params":null,"nominal":null,"seed":null,"tie":"random","weights":"uniform"}}'
            ]
            assert float(row.value.item()) == risk[k - 1]
            assert int(row.n_train.item()) == len(ds.y) - 7 and int(row.n_test.item()) == 7
    assert json.loads(frame.protocol.iloc[0]) == {"kind": "lpo", "p": 7}
    again = run_spec(LPO_PROTOCOL, out=tmp_path, figures=False)
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
        (  # the closed form is the error of tie: random; the row said tie: nearest
            {"algorithms": [{"name": "knn", "params": {"k": 2, "tie": ["random", "lowest"]}}]},
            r"algorithms\[0\]\.params\.tie: 'lowest' under protocol lpo, whose closed form computes tie: random",
        ),
        (
            {"algorithms": [{"name": "knn", "params": {"k": 2}, "params_for": {"iris": {"tie": "nearest"}}}]},
            r"algorithms\[0\]\.params_for\.iris\.tie: 'nearest' under protocol lpo",
        ),
    ],
)
def test_lpo_protocol_spec_errors(tmp_path, change, message):
    from knnx.errors import SpecError

    bad = {**LPO_PROTOCOL, "datasets": ["iris"], **change}
    with pytest.raises(SpecError, match=message):
        run_spec(bad, out=tmp_path, figures=False)
    assert not (tmp_path / "results.csv").exists()


def test_lpo_protocol_records_and_computes_the_random_tie_rule(tmp_path):
    """kNN's closed form charges a vote tie its expected cost under a uniform random
    choice: the rows said tie: nearest (the default) while holding that value (10 rows,
    p = 3, k = 2: 0.5694, where nearest's own LpO error is 0.6556). The rows record
    tie: random, and equal a brute-force enumeration of all C(10, 3) splits with the
    random-tie cost (the oracle); an explicit tie: random is the same setting."""
    from lpo_oracles import brute_lpo, write_labelled_csv

    rng = np.random.default_rng(5)
    X = rng.integers(0, 3, (10, 2)).astype(float)
    y = np.array([0, 1] * 5)
    write_labelled_csv(tmp_path / "d.csv", X, y)
    spec = {
        "name": "ties",
        "datasets": [{"csv": str(tmp_path / "d.csv"), "label": "cls"}],
        "protocol": {"kind": "lpo", "p": 3},
        "algorithms": [{"name": "knn", "params": {"k": [1, 2, 3]}}],
        "metrics": ["error"],
    }
    run_spec(spec, out=tmp_path / "a", figures=False, report=False)
    frame = read_results(tmp_path / "a" / "results.csv")
    assert set(frame["param_tie"]) == {"random"}
    np.testing.assert_allclose(frame.sort_values("param_k")["value"], brute_lpo(X, y, 3, 3), rtol=1e-12)
    spec["algorithms"][0]["params"]["tie"] = "random"
    run_spec(spec, out=tmp_path / "b", figures=False, report=False)
    again = read_results(tmp_path / "b" / "results.csv")
    assert (
        again["params"].tolist() == frame["params"].tolist()
        and again["value"].tolist() == frame["value"].tolist()
    )


def test_a_metric_whose_rows_have_no_varying_parameter_gets_its_comparison_only(tmp_path):
    # knn varies k; knn_lpo's chosen_k rows come from a single setting (a quantity the
    # estimator reports, drawn when the spec asks): no curve of chosen_k, only its figure.
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
        "figures": ["chosen_k"],
    }
    summary = run_spec(spec, out=tmp_path)
    assert sorted(p.name for p in tmp_path.glob("*.png")) == ["chosen_k.png", "error-k.png", "error.png"]
    assert summary.notes == ()


# -- probability and posterior metrics, training curves ---------------------------------

POSTERIOR = {
    "name": "posterior",
    "seed": 3,
    "datasets": [{"synthetic": "paredes2006", "n_per_class": 30, "n_test": 400}],
    "preprocess": {"standardize": True},
    "protocol": {"kind": "predefined"},
    "algorithms": [{"name": "knn", "params": {"k": [1, 7]}}],
    "metrics": ["error", "log_loss", "brier", "f_measure_auc", "rejection_auc", "sym_kl", "js"],
}


def test_probability_and_posterior_metrics_match_oracles(tmp_path):
    from scipy.spatial.distance import jensenshannon
    from scipy.special import rel_entr
    from sklearn import metrics as skm

    from knnx.datasets import dataset_label, load_dataset
    from knnx.evaluation.metrics import KAPPAS
    from knnx.spec import SEED_DATA, dataset_seedseq

    run_spec(POSTERIOR, out=tmp_path, figures=False)
    frame = read_results(tmp_path / "results.csv")
    entry = POSTERIOR["datasets"][0]
    ds = load_dataset(entry, seed=dataset_seedseq(3, dataset_label(entry), SEED_DATA))
    tr, te = ds.split
    mean, std = ds.X[tr].mean(0), ds.X[tr].std(0)
    y = ds.y[te]
    truth = ds.posterior(ds.X[te])  # raw features: standardising must not move the posterior
    for k in (1, 7):
        ref = KNeighborsClassifier(k, algorithm="brute").fit((ds.X[tr] - mean) / std, ds.y[tr])
        proba = ref.predict_proba((ds.X[te] - mean) / std)  # vote shares, as knnx's
        floor = np.clip(proba, 1e-15, None) / np.clip(proba, 1e-15, None).sum(1, keepdims=True)
        f_curve, r_curve = [], []
        for kappa in KAPPAS:
            y_pred = np.where(proba.max(1) > kappa, proba.argmax(1), -1)
            labels = np.union1d(y, y_pred[y_pred >= 0])
            f_curve.append(skm.f1_score(y, y_pred, labels=labels, average="macro", zero_division=0))
            r_curve.append(np.mean(y_pred == -1))
        expected = {
            "error": float(np.mean(ref.predict((ds.X[te] - mean) / std) != y)),
            "log_loss": -np.mean(np.log(np.clip(proba[np.arange(len(y)), y], 1e-15, None))),
            "brier": skm.brier_score_loss(y, proba, labels=[0, 1, 2], scale_by_half=False),
            "f_measure_auc": np.mean(f_curve),
            "rejection_auc": np.mean(r_curve),
            "sym_kl": np.mean(
                0.5 * (rel_entr(truth, floor).sum(1) + rel_entr(proba, truth).sum(1))
            ),  # the true posterior of paredes2006 has no zeros
            "js": np.mean(jensenshannon(truth, proba, axis=1) ** 2),
        }
        rows = frame[
            frame.params
            == f'{{"k":{k},"metric":"euclidean","metric_params":null,"nominal":null,"seed":null,"tie":"nearest","weights":"uniform"}}'
        ]
        got = dict(zip(rows.metric, rows.value.astype(float), strict=True))
        assert list(got) == POSTERIOR["metrics"]
        for name, value in expected.items():
            assert_allclose(got[name], value, rtol=1e-9, err_msg=f"k={k} {name}")
    summary = pd.read_csv(tmp_path / "summary.csv")
    best = summary[summary.best].set_index("metric").configuration.to_dict()
    assert best["sym_kl"] == "knn k=7" and best["log_loss"] == "knn k=7"


def test_predict_proba_is_called_only_for_probability_metrics(tmp_path, monkeypatch):
    from knnx.errors import CellError
    from knnx.estimators.knn import KNNClassifier
    from knnx.estimators.registry import ALGORITHMS

    class NoProba(KNNClassifier):
        def predict_proba(self, X):
            raise RuntimeError("predict_proba called")

    monkeypatch.setitem(ALGORITHMS, "noproba", NoProba)
    spec = {**RIPLEY, "algorithms": [{"name": "noproba", "params": {"k": 3}}], "metrics": ["error"]}
    run_spec(spec, out=tmp_path / "a", figures=False)
    with pytest.raises(CellError, match="RuntimeError: predict_proba called"):
        run_spec({**spec, "metrics": ["error", "brier"]}, out=tmp_path / "b", figures=False)


def test_a_class_missing_from_training_gets_probability_zero():
    from knnx.estimators.knn import KNNClassifier
    from knnx.evaluation.scoring import proba_on_codes as _proba_on_codes

    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((40, 2)), np.repeat([0, 2], 20)  # code 1 never seen
    queries = rng.standard_normal((25, 2))
    proba = _proba_on_codes(KNNClassifier(k=5).fit(X, y), queries, 3)
    ref = KNeighborsClassifier(5, algorithm="brute").fit(X, y).predict_proba(queries)
    assert_allclose(proba[:, [0, 2]], ref, rtol=1e-12)
    assert (proba[:, 1] == 0).all()


def test_curve_rows_thin_to_evenly_spaced_iterations():
    from knnx.results import curve_rows, thin_indices

    assert thin_indices(10, 4).tolist() == [0, 3, 6, 9]
    assert thin_indices(11, 4).tolist() == [0, 3, 7, 10]  # 0, 3.33, 6.67, 10 rounded
    assert thin_indices(3, 200).tolist() == [0, 1, 2]
    keep = thin_indices(1001, 200)
    assert len(keep) == 200 and keep[0] == 0 and keep[-1] == 1000 and set(np.diff(keep)) == {5, 6}
    base = {"experiment": "e", "dataset": "d", "algorithm": "a", "params": "{}", "repeat": 0, "fold": 1}
    curve = {"iteration": np.arange(1, 11), "risk": np.arange(10) / 10, "train_error": np.zeros(10)}
    rows = curve_rows(curve, base, 4)
    assert [(r["series"], r["iteration"], r["value"]) for r in rows] == [
        ("risk", 1, 0.0),
        ("risk", 4, 0.3),
        ("risk", 7, 0.6),
        ("risk", 10, 0.9),
        ("train_error", 1, 0.0),
        ("train_error", 4, 0.0),
        ("train_error", 7, 0.0),
        ("train_error", 10, 0.0),
    ]
    assert all(r["fold"] == 1 and r["experiment"] == "e" for r in rows)
    with pytest.raises(ValueError, match="'iteration' entry"):
        curve_rows({"risk": np.zeros(3)}, base, 4)
    with pytest.raises(ValueError, match=r"curve_\['risk'\] has shape \(2,\)"):
        curve_rows({"iteration": np.arange(3), "risk": np.zeros(2)}, base, 4)
    with pytest.raises(ValueError, match="integers"):
        curve_rows({"iteration": np.linspace(0, 1, 3), "risk": np.zeros(3)}, base, 4)


@pytest.mark.pandas_io
def test_recover_curves_keeps_complete_cells_only(tmp_path):
    from knnx.results import CURVE_COLUMNS, ResultsWriter, read_curves, recover_curves

    path = tmp_path / "curves.csv"
    writer = ResultsWriter(path, CURVE_COLUMNS)

    def cell(dataset, fold, n):
        base = {"experiment": "e", "dataset": dataset, "algorithm": "unn", "params": '{"k":3}', "repeat": 0}
        return [{**base, "fold": fold, "iteration": i, "series": "risk", "value": i / 7} for i in range(n)]

    writer.append(cell("NA", 0, 3))
    writer.append(cell("NA", 1, 2))
    writer.append(cell("iris", 0, 4))
    with open(path, "a") as fh:
        fh.write("e,iris,unn,")  # torn last line
    assert path.read_text().splitlines()[0] == ",".join(CURVE_COLUMNS)
    recover_curves(path, {("NA", "unn", '{"k":3}', 0, 0), ("iris", "unn", '{"k":3}', 0, 0)})
    frame = read_curves(path)
    assert list(frame.columns) == CURVE_COLUMNS
    assert list(zip(frame.dataset, frame.fold, frame.iteration, strict=True)) == [
        ("NA", 0, 0),
        ("NA", 0, 1),
        ("NA", 0, 2),
        ("iris", 0, 0),
        ("iris", 0, 1),
        ("iris", 0, 2),
        ("iris", 0, 3),
    ]
    assert frame.value.tolist() == [0.0, 1 / 7, 2 / 7, 0.0, 1 / 7, 2 / 7, 3 / 7]  # repr round-trips
    recover_curves(path, set())
    assert path.read_text() == ",".join(CURVE_COLUMNS) + "\n"


CURVED = {
    "name": "curved",
    "seed": 0,
    "datasets": ["iris"],
    "protocol": {"kind": "kfold", "folds": 3, "repeats": 1},
    "algorithms": [{"name": "curved", "params": {"k": [1, 5]}}],
    "metrics": ["error"],
    "record_curves": True,
    "curve_points": 50,
}


@pytest.fixture
def curved_algorithm(monkeypatch):
    """kNN with a made-up training curve of 301 iterations: risk = k / (1 + t)."""
    from knnx.estimators.knn import KNNClassifier
    from knnx.estimators.registry import ALGORITHMS

    class Curved(KNNClassifier):
        def fit(self, X, y):
            super().fit(X, y)
            t = np.arange(301)
            self.curve_ = {
                "iteration": t,
                "surrogate_risk": self.k / (1 + t),
                "train_error": np.full(301, 0.5),
            }
            return self

    monkeypatch.setitem(ALGORITHMS, "curved", Curved)


@pytest.mark.pandas_io
def test_curves_are_written_thinned_and_survive_a_crash(tmp_path, curved_algorithm):
    from knnx.results import CURVE_COLUMNS, read_curves

    run_spec(CURVED, out=tmp_path, figures=False)
    curves = read_curves(tmp_path / "curves.csv")
    assert list(curves.columns) == CURVE_COLUMNS and len(curves) == 2 * 3 * 2 * 50
    one = curves[
        (
            curves.params
            == '{"k":5,"metric":"euclidean","metric_params":null,"nominal":null,"seed":null,"tie":"nearest","weights":"uniform"}'
        )
        & (curves.fold == 2)
    ]
    risk = one[one.series == "surrogate_risk"]
    iterations = np.rint(np.linspace(0, 300, 50)).astype(int)  # 0, 6, 12, ..., 300
    assert risk.iteration.tolist() == iterations.tolist()
    assert_allclose(risk.value, 5 / (1 + iterations), rtol=RTOL)
    assert set(one[one.series == "train_error"].value) == {0.5}
    assert set(curves.experiment) == {"curved"} and set(curves.dataset) == {"iris"}
    full_curves = (tmp_path / "curves.csv").read_text()
    full_results = read_results(tmp_path / "results.csv")

    # Crash after the last cell's curves were written but before its results row.
    lines = (tmp_path / "results.csv").read_text().splitlines(keepends=True)
    (tmp_path / "results.csv").write_text("".join(lines[:-1]))
    summary = run_spec(CURVED, out=tmp_path, figures=False)
    assert summary.n_run == 1
    assert (tmp_path / "curves.csv").read_text() == full_curves  # not twice, same order
    pd.testing.assert_frame_equal(values(read_results(tmp_path / "results.csv")), values(full_results))

    run_spec({**CURVED, "record_curves": False}, out=tmp_path, resume=False, figures=False)
    assert not (tmp_path / "curves.csv").exists()


def test_without_record_curves_no_curves_file(tmp_path, curved_algorithm):
    run_spec({**CURVED, "record_curves": False}, out=tmp_path, figures=False)
    assert not (tmp_path / "curves.csv").exists()


def test_unn_curves_end_to_end(tmp_path):
    from knnx.estimators.registry import ALGORITHMS
    from knnx.results import read_curves

    if "unn" not in ALGORITHMS:
        pytest.skip("the unn algorithm is not registered yet")
    spec = {
        "name": "unn-curves",
        "seed": 0,
        "datasets": ["ripley"],
        "protocol": {"kind": "predefined"},
        "algorithms": [{"name": "unn", "params": {"k": 5}}],
        "metrics": ["error", "log_loss", "brier"],
        "record_curves": True,
        "curve_points": 20,
    }
    run_spec(spec, out=tmp_path, figures=False)
    est = ALGORITHMS["unn"](k=5)
    ds = load_bundled("ripley")
    tr, _ = ds.split
    est.fit(ds.X[tr], ds.y[tr])
    curves = read_curves(tmp_path / "curves.csv")
    series = [name for name in est.curve_ if name != "iteration"]
    assert list(dict.fromkeys(curves.series)) == series
    for name in series:
        rows = curves[curves.series == name]
        keep = np.rint(np.linspace(0, len(est.curve_["iteration"]) - 1, 20)).astype(int)
        assert rows.iteration.tolist() == est.curve_["iteration"][keep].tolist()
        assert_allclose(rows.value, est.curve_[name][keep], rtol=RTOL)


@pytest.mark.pandas_io
def test_a_resume_leaves_the_side_files_a_fresh_run_would(tmp_path):
    """A resume whose cells no longer raise warnings, or that no longer records curves,
    kept a header-only warnings.csv and curves.csv, where a fresh run writes neither."""
    spec = {
        "name": "s",
        "seed": 0,
        "datasets": ["iris"],
        "protocol": {"kind": "kfold", "folds": 2},
        "record_curves": True,
        "algorithms": [
            {
                "id": "lr",
                "estimator": "sklearn.linear_model:LogisticRegression",
                "params": {"max_iter": [1, 500]},
            },
            {"name": "cpw", "params": {"max_epochs": 2}},
        ],
        "metrics": ["error"],
    }
    run_spec(spec, out=tmp_path / "out", report=False)
    assert (tmp_path / "out" / "warnings.csv").exists() and (tmp_path / "out" / "curves.csv").exists()
    quiet = {
        **spec,
        "record_curves": False,
        "algorithms": [{**spec["algorithms"][0], "params": {"max_iter": [500]}}],  # cpw warns at 2 epochs
    }
    run_spec(quiet, out=tmp_path / "out", report=False)
    run_spec(quiet, out=tmp_path / "fresh", report=False)
    names = [sorted(p.name for p in (tmp_path / d).iterdir()) for d in ("out", "fresh")]
    assert names[0] == names[1] and "warnings.csv" not in names[0] and "curves.csv" not in names[0]
