"""LpO committee agreement against enumeration of the committee, and the active-learning loop."""

import io
import json
from dataclasses import replace
from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

from knnx import DataError
from knnx.lpo.active import active_learning, agreement_from_shares, committee_shares, lpo_agreement


def brute_shares(X, y, Q, k, p):
    """Every (n - p)-subset as a kNN classifier; ties split 1/s among the s tied classes."""
    n = len(X)
    classes = np.unique(y)
    codes = np.searchsorted(classes, y)
    shares = np.zeros((len(Q), len(classes)))
    members = list(combinations(range(n), n - p))
    for train in members:
        train = np.array(train)
        for i, x in enumerate(Q):
            d = ((X[train] - x) ** 2).sum(1)
            order = train[np.lexsort((train, d))]
            counts = np.bincount(codes[order[:k]], minlength=len(classes))
            top = np.flatnonzero(counts == counts.max())
            shares[i, top] += 1.0 / len(top)
    return shares / len(members)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_shares_match_enumeration_of_the_committee(n_classes):
    rng = np.random.default_rng(n_classes)
    for _ in range(10):
        n = int(rng.integers(4, 11))
        p = int(rng.integers(0, min(4, n - 1) + 1))
        X = rng.integers(0, 4, size=(n, 2)).astype(float)  # grid: distance ties, duplicates
        y = rng.integers(0, n_classes, size=n)
        y[:n_classes] = np.arange(n_classes)
        Q = rng.integers(0, 4, size=(7, 2)).astype(float)  # may coincide with training points
        for k in range(1, n - p + 1):
            got = committee_shares(X, y, Q, k, p)
            assert_allclose(got, brute_shares(X, y, Q, k, p), rtol=0, atol=1e-12)
            assert_allclose(got.sum(1), 1.0, rtol=0, atol=1e-12)


def test_hand_worked_agreement():
    # Training points on a line: classes 0 0 1 at x = 0, 1, 3; query at x = 0.4.
    # k = 1, p = 1: three members. Dropping x=0 -> nearest is x=1 (class 0); dropping x=1
    # or x=3 -> nearest is x=0 (class 0). Unanimous: agreement 1.
    X = np.array([[0.0], [1.0], [3.0]])
    y = np.array([0, 0, 1])
    assert_allclose(lpo_agreement(X, y, [[0.4]], 1, 1), [1.0])
    # Query at x = 2.2 (nearer 3 than 1): members without x=3 vote 0 (1 of 3), others vote 1.
    # share_1 = 2/3, agreement = 2 |2/3 - 1/2| = 1/3.
    assert_allclose(lpo_agreement(X, y, [[2.2]], 1, 1), [1.0 / 3.0], atol=1e-15)
    # k = 2, p = 1: members {0,1} vote 0 0; {0,3} and {1,3} tie 0-1 (1/2 each): share_0 = 2/3.
    assert_allclose(committee_shares(X, y, [[2.2]], 2, 1), [[2.0 / 3.0, 1.0 / 3.0]], atol=1e-15)


def test_agreement_map():
    shares = np.array([[0.5, 0.5], [1.0, 0.0], [0.8, 0.2]])
    assert_allclose(agreement_from_shares(shares), [0.0, 1.0, 0.6])
    assert_allclose(agreement_from_shares(np.array([[1 / 3, 1 / 3, 1 / 3], [0.0, 1.0, 0.0]])), [0.0, 1.0])


def test_bad_committee_arguments():
    X = np.zeros((5, 2))
    y = np.array([0, 1, 0, 1, 0])
    with pytest.raises(DataError, match="k: must be between 1 and 3"):
        committee_shares(X, y, X, 3 + 1, 2)
    with pytest.raises(DataError, match="p: must be between 0 and 4"):
        committee_shares(X, y, X, 1, 5)
    with pytest.raises(DataError, match="X_query: expected 2 features"):
        committee_shares(X, y, np.zeros((1, 3)), 1, 1)


def _two_blobs(rng, n):
    y = rng.integers(0, 2, size=n)
    X = rng.standard_normal((n, 2)) + 2.0 * y[:, None]
    return X, y


def test_qbc_queries_the_lowest_agreement_points_and_records_rounds():
    rng = np.random.default_rng(0)
    X, y = _two_blobs(rng, 400)
    recs = active_learning(
        X[:30], y[:30], X[30:], y[30:], strategy="qbc", rounds=4, m=3, p_select=2, p_tune=3, seed=1
    )
    assert [r.round for r in recs] == [0, 1, 2, 3, 4]
    assert [r.n_train for r in recs] == [30, 33, 36, 39, 42]
    assert [r.n_pool for r in recs] == [370, 367, 364, 361, 358]
    # Round 1 queries the 3 pool points of lowest agreement under the round-0 committee.
    k0 = recs[0].k
    agreement = lpo_agreement(X[:30], y[:30], X[30:], k0, 2)
    assert recs[1].mean_agreement == pytest.approx(np.sort(agreement)[:3].mean(), abs=1e-12)
    # The reported errors are those of kNN(k) on what is left of the pool.
    from knnx import KNNClassifier

    err0 = np.mean(KNNClassifier(k=k0).fit(X[:30], y[:30]).predict(X[30:]) != y[30:])
    assert recs[0].error == pytest.approx(err0)


def test_active_learning_is_deterministic_and_passive_has_no_agreement():
    rng = np.random.default_rng(5)
    X, y = _two_blobs(rng, 300)
    a = active_learning(X[:20], y[:20], X[20:], y[20:], rounds=3, m=2, p_select=1, p_tune=2, seed=3)
    b = active_learning(X[:20], y[:20], X[20:], y[20:], rounds=3, m=2, p_select=1, p_tune=2, seed=3)
    untimed = [repr(replace(r, seconds=0.0)) for r in a]  # repr: nan-safe equality
    assert untimed == [repr(replace(r, seconds=0.0)) for r in b]
    c = active_learning(X[:20], y[:20], X[20:], y[20:], strategy="passive", rounds=3, m=2, p_tune=2, seed=3)
    assert all(np.isnan(r.mean_agreement) for r in c)
    assert [r.n_train for r in c] == [20, 22, 24, 26]


def test_active_learning_errors():
    X = np.zeros((10, 2))
    y = np.arange(10) % 2
    with pytest.raises(DataError, match="strategy"):
        active_learning(X, y, X, y, strategy="random")
    with pytest.raises(DataError, match="rounds \\* m"):
        active_learning(X, y, X, y, rounds=3, m=4)


SMALL = {
    "kind": "active",
    "name": "act",
    "seed": 3,
    "datasets": [{"synthetic": "celisse2011", "n": 400, "q": 0.1, "id": "sim"}, "wdbc"],
    "start": 20,
    "m": 2,
    "rounds": 3,
    "p_select": 2,
    "p_tune": 3,
    "k_max": 10,
    "repeats": 2,
    "standardize": True,
}
TIMES = ["fit_seconds"]  # the one column that differs between two runs


def _old_runner_rows(spec):
    """The rows the former ``knnx active`` runner wrote for a spec (fold = round), rebuilt
    from knnx.lpo.active directly with its seed scheme: repeat r loads the data with the child
    seed (seed, dataset id, SEED_DATA) spawned with key r, and draws the start set, pool
    and loop seed from a generator seeded (seed, dataset id, SEED_SPLITS) spawned with key r."""
    from knnx.datasets import dataset_label, load_dataset
    from knnx.evaluation.preprocess import apply_standardizer, fit_standardizer
    from knnx.spec import SEED_DATA, SEED_SPLITS, canonical_json, dataset_seedseq

    def child(label, purpose, r):
        base = dataset_seedseq(spec["seed"], label, purpose)
        return np.random.SeedSequence(base.entropy, spawn_key=(*base.spawn_key, r))

    protocol = canonical_json(
        {
            "kind": "active",
            "start": spec["start"],
            "pool": None,
            "rounds": spec["rounds"],
            "standardize": True,
        }
    )
    rows = []
    for entry in spec["datasets"]:
        label = dataset_label(entry)
        for r in range(spec["repeats"]):
            ds = load_dataset(entry, seed=child(label, SEED_DATA, r))
            rng = np.random.default_rng(child(label, SEED_SPLITS, r))
            order = rng.permutation(ds.n_samples)
            start, pool = order[: spec["start"]], order[spec["start"] :]
            X = apply_standardizer(fit_standardizer(ds.X[order]), ds.X, label)
            loop_seed = int(rng.integers(2**63))
            for strategy, algorithm in (("qbc", "lpo_qbc"), ("passive", "passive_lpo")):
                params = {"m": 2, "p_tune": 3, "k_max": 10, "k_fixed": None}
                if strategy == "qbc":
                    params["p_select"] = 2
                records = active_learning(
                    X[start], ds.y[start], X[pool], ds.y[pool], strategy=strategy, rounds=3, m=2,
                    p_select=2, p_tune=3, k_max=10, seed=loop_seed,
                )  # fmt: skip
                for rec in records:
                    base = [spec["name"], label, algorithm, canonical_json(params), protocol, r, rec.round]
                    base += [spec["seed"], rec.n_train, rec.n_pool]
                    rows.append((*base, "error", rec.error))
                    rows.append((*base, "chosen_k", float(rec.k)))
    return rows


def test_active_spec_rows_equal_the_former_runner_recomputed_from_the_loop(tmp_path):
    from knnx.experiment.runner import run_spec
    from knnx.reporting.figures import figure_files
    from knnx.results import read_results

    summary = run_spec(SMALL, out=tmp_path)
    assert (summary.n_cells, summary.n_run) == (2 * 2 * 2, 8)  # datasets x repeats x strategies
    frame = read_results(tmp_path / "results.csv")
    assert (frame["fold"] == 0).all() and (frame["predict_seconds"] == 0.0).all()
    cols = ["experiment", "dataset", "algorithm", "params", "protocol", "repeat", "round", "seed"]
    cols += ["n_train", "n_test", "metric", "value"]
    got = [tuple(row) for row in frame[cols].itertuples(index=False)]
    assert got == _old_runner_rows(SMALL)  # exact floats, and the former order of the rows
    # Both strategies of a repeat start from the same set (same round-0 error and k).
    r0 = frame[frame["round"] == 0]
    assert (r0.groupby(["dataset", "repeat", "metric"]).value.nunique() == 1).all()
    # The per-round summary, from the rows.
    summ = pd.read_csv(tmp_path / "summary.csv")
    assert list(summ.columns) == ["dataset", "algorithm", "round", "n_train", "metric", "mean", "std", "n"]
    last = frame[(frame["round"] == 3) & (frame.metric == "error") & (frame.algorithm == "lpo_qbc")]
    row = summ[(summ["round"] == 3) & (summ.metric == "error") & (summ.algorithm == "lpo_qbc")]
    assert_allclose(row["mean"], last.groupby("dataset", sort=False).value.mean(), rtol=1e-12)
    assert row["n"].tolist() == [2, 2] and row["n_train"].tolist() == [26, 26]
    # The figures are the run's automatic figures (replaced by a rerun, removed by --no-resume).
    assert [p.name for p in figure_files(tmp_path)] == ["active.png", "active_k.png"]
    assert "kind: active" in (tmp_path / "spec.yaml").read_text()
    # report.html: the tables give the last round's values, the timings a loop's whole time.
    page = (tmp_path / "report.html").read_text()
    for (dataset, algorithm), part in frame[(frame["round"] == 3) & (frame.metric == "error")].groupby(
        ["dataset", "algorithm"]
    ):
        mean, std = part.value.mean(), part.value.std()
        assert f"<td>{dataset}</td><td>{algorithm}</td><td>{mean:.4f} ± {std:.4f}</td>" in page
        md = (tmp_path / "summary.md").read_text().split("## chosen_k")[0]
        line = next(ln for ln in md.splitlines() if ln.startswith(f"| {dataset} | {algorithm} |"))
        assert line.replace("**", "") == f"| {dataset} | {algorithm} | {mean:.4f} ± {std:.4f} | 2 |"
    rounds = frame.drop_duplicates(["dataset", "algorithm", "repeat", "round"])
    total = rounds[rounds.algorithm == "lpo_qbc"].fit_seconds.sum()
    assert '<td>lpo_qbc</td><td class="num">4</td>' in page and f"{total:.4f}</td></tr>" in page


@pytest.mark.pandas_io
def test_table_compare_and_plot_of_an_active_run_use_its_last_round(tmp_path):
    """knnx table / compare / plot on an active run's results.csv: the last round's rows
    (averaging over every round would mix 10 and 26 labelled points), said on stderr."""
    from typer.testing import CliRunner

    from knnx.cli import app
    from knnx.experiment.runner import run_spec
    from knnx.results import last_round, read_results
    from knnx.stats.compare import compare

    run_spec(SMALL, out=tmp_path)
    path = tmp_path / "results.csv"
    frame = read_results(path)
    last, r = last_round(frame)
    assert r == 3 and (last["round"] == 3).all() and len(last) == len(frame) // 4
    runner = CliRunner()
    done = runner.invoke(app, ["table", str(path), "--format", "csv"])
    assert done.exit_code == 0, done.output
    assert done.stderr == "note: active-learning results: round 3 (the last) only\n"
    table = pd.read_csv(io.StringIO(done.stdout))
    want = last[last.metric == "error"].groupby(["dataset", "algorithm"], sort=False).value.mean()
    assert_allclose(table["mean"], want.to_numpy(), rtol=1e-12)
    done = runner.invoke(app, ["compare", str(path), "--out", str(tmp_path / "cmp")])
    assert done.exit_code == 0, done.output
    per = pd.read_csv(tmp_path / "cmp" / "per_dataset.csv").set_index(["dataset", "configuration"])
    expected = compare(last).per_dataset.set_index(["dataset", "configuration"])
    assert_allclose(per["mean"], expected["mean"], rtol=1e-15)
    assert_allclose(per["mean"], want.reindex(per.index).to_numpy(), rtol=1e-12)
    done = runner.invoke(app, ["plot", str(path), "--x", "configuration", "--out", str(tmp_path / "p.png")])
    assert done.exit_code == 0 and "round 3 (the last)" in done.stderr
    assert (tmp_path / "p.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.pandas_io
def test_active_resume_after_an_interruption_gives_the_same_file(tmp_path, monkeypatch):
    from knnx.experiment import runner
    from knnx.results import read_results

    small = {**SMALL, "datasets": ["wdbc"]}
    runner.run_spec(small, out=tmp_path / "whole", figures=False)
    calls = []
    from knnx.experiment import cells

    real = cells.active_learning

    def interrupted(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(cells, "active_learning", interrupted)
    with pytest.raises(KeyboardInterrupt):
        runner.run_spec(small, out=tmp_path / "cut", figures=False)
    assert len(read_results(tmp_path / "cut" / "results.csv")) == 2 * 4 * 2  # two loops saved
    with open(tmp_path / "cut" / "results.csv", "a") as fh:
        fh.write("act,wdbc,lpo_qbc,{")  # a torn line, as a kill in mid-write leaves
    monkeypatch.setattr(cells, "active_learning", real)
    summary = runner.run_spec(small, out=tmp_path / "cut", figures=False)
    assert (summary.n_run, summary.n_skipped) == (2, 2)
    whole = read_results(tmp_path / "whole" / "results.csv").drop(columns=TIMES)
    cut = read_results(tmp_path / "cut" / "results.csv").drop(columns=TIMES)
    pd.testing.assert_frame_equal(cut, whole)
    assert (tmp_path / "cut" / "summary.csv").read_text().splitlines()[:3] == (
        (tmp_path / "whole" / "summary.csv").read_text().splitlines()[:3]
    )
    # Rerun: nothing recomputed, the file unchanged; more repeats keep the earlier ones.
    before = (tmp_path / "cut" / "results.csv").read_text()
    assert runner.run_spec(small, out=tmp_path / "cut", figures=False).n_run == 0
    assert (tmp_path / "cut" / "results.csv").read_text() == before
    summary = runner.run_spec(small, out=tmp_path / "cut", overrides=["repeats=3"], figures=False)
    assert (summary.n_run, summary.n_skipped) == (2, 4)
    grown = read_results(tmp_path / "cut" / "results.csv")
    assert grown[grown.repeat < 2].drop(columns=TIMES).reset_index(drop=True).equals(cut)
    # an entry per invocation that ran cells: the rerun with nothing to do wrote nothing
    assert len(json.loads((tmp_path / "cut" / "environment.json").read_text())["runs"]) == 3


@pytest.mark.parametrize(
    "executor", ["local", pytest.param("dask", marks=[pytest.mark.slow, pytest.mark.xdist_group("dask")])]
)
def test_active_with_workers_gives_the_rows_of_one_process(tmp_path, executor):
    from knnx.experiment.runner import run_spec
    from knnx.results import read_results

    if executor == "dask":
        pytest.importorskip("distributed")
    small = {**SMALL, "datasets": ["wdbc"], "repeats": 1}
    run_spec(small, out=tmp_path / "one", figures=False)
    run_spec(small, out=tmp_path / "two", jobs=2, executor=executor, figures=False)
    one = read_results(tmp_path / "one" / "results.csv").drop(columns=TIMES)
    two = read_results(tmp_path / "two" / "results.csv").drop(columns=TIMES)
    pd.testing.assert_frame_equal(one, two)


ACTIVE_KEYS = [
    "kind",
    "name",
    "seed",
    "datasets",
    "start",
    "pool",
    "m",
    "rounds",
    "p_select",
    "p_tune",
    "k_max",
    "k_fixed",
    "strategies",
    "repeats",
    "standardize",
    "python_path",
]


@pytest.mark.parametrize(
    "text, args, line",
    [
        (
            "kind: active\nname: a\ndatasets: [iris]\nrounds: 100\nm: 5\nstart: 50\nstrategy: [qbc]\n",
            [],
            "strategy: unknown key; known: " + ", ".join(ACTIVE_KEYS),
        ),
        (
            "kind: active\nname: a\ndatasets: [iris]\nrounds: 100\nm: 5\nstart: 50\n",
            [],
            "datasets[0]: 'iris' has 150 rows; start 50 + a pool of at least 500 are needed",
        ),
        (
            "kind: active\nname: a\ndatasets: [iris]\nrounds: 1\nstart: 20\n",
            ["--set", "repeats=0"],
            "--set 'repeats=0': repeats: input should be greater than or equal to 1 (got 0)",
        ),
        (
            "kind: active\nname: a\ndatasets: [iris]\nrounds: 1\nstart: 20\nstrategies: [qbc, qbc]\n",
            [],
            "strategies: each strategy once",
        ),
        (
            "name: a\ndatasets: [iris]\nrounds: 1\nstart: 20\nstrategies: [qbc]\n",
            [],
            "kind: required key is missing; a spec with start, rounds, strategies is an active-learning spec: "
            "add 'kind: active'",
        ),
        (
            "kind: activ\nname: a\ndatasets: [iris]\n",
            [],
            "kind: unknown experiment kind 'activ'; known: active (a spec without 'kind' runs its protocol "
            "and algorithms)",
        ),
    ],
)
def test_a_bad_active_spec_is_one_line_exit_2(tmp_path, text, args, line):
    from typer.testing import CliRunner

    from knnx.cli import app

    spec = tmp_path / "a.yaml"
    spec.write_text(text)
    result = CliRunner().invoke(app, ["run", str(spec), "--out", str(tmp_path / "out"), *args])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [f"error: {spec}: {line}"]
    assert not (tmp_path / "out").exists()


def test_knnx_run_sets_the_repeats_of_an_active_spec(tmp_path):
    from typer.testing import CliRunner

    from knnx.cli import app
    from knnx.results import read_results

    spec = tmp_path / "a.yaml"
    spec.write_text("kind: active\nname: a\ndatasets: [iris]\nrepeats: 10\nrounds: 2\nm: 3\nstart: 20\n")
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["run", str(spec), "--out", str(out), "--quiet", "--set", "repeats=1"])
    assert result.exit_code == 0, result.output
    frame = read_results(out / "results.csv")
    assert sorted(set(frame.repeat)) == [0] and frame.groupby("algorithm")["round"].max().tolist() == [2, 2]
    assert frame[frame.metric == "error"].n_train.tolist() == [20, 23, 26] * 2
    assert "repeats: 1\n" in (out / "spec.yaml").read_text()


def test_active_progress_names_each_loop(tmp_path):
    from knnx.experiment.runner import run_spec

    seen = []
    small = {**SMALL, "datasets": ["wdbc"], "repeats": 2}
    run_spec(
        small,
        out=tmp_path,
        progress=lambda done, total, text: seen.append((done, total, text)),
        figures=False,
    )
    assert seen[0] == (0, 4, "")
    assert [s for s in seen if s[2].startswith("wdbc")] == [
        (1, 4, "wdbc lpo_qbc repeat 0"),
        (2, 4, "wdbc passive_lpo repeat 0"),
        (3, 4, "wdbc lpo_qbc repeat 1"),
        (4, 4, "wdbc passive_lpo repeat 1"),
    ]


def test_two_datasets_of_one_name_are_one_line_in_both_spec_kinds():
    """Plain and active specs load their datasets by one helper: the same label twice is
    refused naming both entries."""
    import knnx
    from knnx.errors import SpecError

    plain = {"name": "x", "datasets": ["iris", "iris"], "protocol": {"kind": "kfold", "folds": 2}}
    with pytest.raises(
        SpecError, match=r"^<spec>: datasets\[1\]: same name as datasets\[0\] \('iris'\); give"
    ):
        knnx.validate_spec({**plain, "algorithms": [{"name": "knn"}]})
    active = {**SMALL, "datasets": ["wdbc", {"name": "wdbc"}]}
    with pytest.raises(
        SpecError, match=r"datasets\[1\]: same name as datasets\[0\] \('wdbc'\); give one an 'id'"
    ):
        knnx.validate_spec(active)


def test_two_dataset_ids_written_alike_are_refused_in_both_spec_kinds():
    """'irés' with é as one code point and as e + combining accent were two datasets that
    every table and figure showed as one label; Unicode normalisation (NFC) makes them one."""
    import knnx
    from knnx.errors import SpecError

    composed, decomposed = "ir\u00e9s", "ire\u0301s"
    entries = [{"name": "iris", "id": composed}, {"name": "iris", "id": decomposed}]
    plain = {"name": "x", "datasets": entries, "protocol": {"kind": "kfold", "folds": 2}}
    expected = (
        r"datasets\[1\]: same name as datasets\[0\] once Unicode-normalised \(NFC: 'ire\\u0301s' and "
        r"'ir\\xe9s' are written alike\); give one another 'id'$"
    )
    with pytest.raises(SpecError, match=expected):
        knnx.validate_spec({**plain, "algorithms": [{"name": "knn"}]})
    with pytest.raises(SpecError, match=expected):
        knnx.validate_spec({**SMALL, "datasets": entries})
    one_each = [{"name": "iris", "id": composed}, {"name": "iris", "id": "ires"}]
    checked = knnx.validate_spec({**plain, "datasets": one_each, "algorithms": [{"name": "knn"}]})
    assert [ds.name for ds in checked.datasets] == [composed, "ires"]
