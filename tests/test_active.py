"""LpO committee agreement against enumeration of the committee, and the active-learning loop."""

from dataclasses import replace
from itertools import combinations

import numpy as np
import pytest
from numpy.testing import assert_allclose

from knnx import DataError
from knnx.active import active_learning, agreement_from_shares, committee_shares, lpo_agreement


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


def test_active_experiment_rows_resume_and_pairing(tmp_path):
    from knnx.active_experiment import _repeat_data, run_active, validate_active_spec
    from knnx.datasets import load_dataset
    from knnx.results import read_results

    run_active(SMALL, out=tmp_path)
    frame = read_results(tmp_path / "results.csv")
    # 2 datasets x 2 repeats x 2 strategies x 4 rounds x (error, chosen_k)
    assert len(frame) == 2 * 2 * 2 * 4 * 2
    assert sorted(set(frame.algorithm)) == ["lpo_qbc", "passive_lpo"]
    # Each stored run equals a direct call of the library loop on the same data.
    spec, _, base = validate_active_spec(SMALL)
    X0, y0, Xp, yp, seed = _repeat_data(spec, "wdbc", "wdbc", base, 1)
    recs = active_learning(
        X0, y0, Xp, yp, strategy="qbc", rounds=3, m=2, p_select=2, p_tune=3, k_max=10, seed=seed
    )
    run = frame[(frame.dataset == "wdbc") & (frame.algorithm == "lpo_qbc") & (frame.repeat.astype(int) == 1)]
    assert run[run.metric == "error"].value.astype(float).tolist() == [r.error for r in recs]
    assert run[run.metric == "chosen_k"].value.astype(float).tolist() == [float(r.k) for r in recs]
    # Both strategies of a repeat start from the same set (same round-0 error and k).
    r0 = frame[(frame.fold.astype(int) == 0) & (frame.metric == "error")]
    assert (r0.groupby(["dataset", "repeat"]).value.nunique() == 1).all()
    # Standardisation uses start + pool features only; wdbc's own scale differs.
    assert abs(X0.mean()) < 1.0 and load_dataset("wdbc").X.max() > 100
    # Rerun: nothing recomputed; a torn run (a missing round) is redone.
    before = (tmp_path / "results.csv").read_text()
    run_active(SMALL, out=tmp_path)
    assert (tmp_path / "results.csv").read_text() == before
    lines = before.splitlines(keepends=True)
    (tmp_path / "results.csv").write_text("".join(lines[:-3]))  # drop the last rounds of the last run
    run_active(SMALL, out=tmp_path)
    again = read_results(tmp_path / "results.csv")
    assert len(again) == len(frame)
    assert (tmp_path / "active.png").exists() and (tmp_path / "active_k.png").exists()


def test_active_cli_bad_spec_is_one_line_exit_2(tmp_path):
    from typer.testing import CliRunner

    from knnx.cli import app

    spec = tmp_path / "a.yaml"
    spec.write_text("name: a\ndatasets: [iris]\nrounds: 100\nm: 5\nstart: 50\nstrategy: [qbc]\n")
    result = CliRunner().invoke(app, ["active", str(spec), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        f"error: {spec}: strategy: unknown key; known: "
        + ", ".join(
            [
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
            ]
        )
    ]
    spec.write_text("name: a\ndatasets: [iris]\nrounds: 100\nm: 5\nstart: 50\n")
    result = CliRunner().invoke(app, ["active", str(spec), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "datasets[0]: 'iris' has 150 rows; start 50 + a pool of at least 500 are needed" in result.output
    assert not (tmp_path / "out").exists()
