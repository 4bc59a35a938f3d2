"""experiments/gnnb_large.py --quick: outputs, measured values, determinism."""

import numpy as np
import pandas as pd
import pytest
from conftest import load_experiment


def _load():
    return load_experiment("gnnb_large")


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    module = _load()
    out = tmp_path_factory.mktemp("gnnb_large")
    module.main([str(out), "--quick"])
    return module, out, pd.read_csv(out / "results.csv")


def _value(df, method, s, t, metric, k=5):
    sel = df[(df.method == method) & (df.n_splits == s) & (df.t == t) & (df.metric == metric)]
    v = sel[sel.k == (0 if method in ("SGD", "SGD_20ep", "Bayes") else k)].value
    assert len(v) == 1
    return float(v.iloc[0])


def test_outputs_written(quick):
    _, out, df = quick
    for name in ("table3.md", "iterations.md", "results.csv", "iterations.png", "splits.png"):
        assert (out / name).stat().st_size > 0
    assert set(df.method) == {"NN", "GNNB", "GNNB*", "UNN", "SGD", "SGD_20ep", "Bayes"}
    assert sorted(set(df[df.method == "GNNB"].n_splits)) == [1, 4, 8]
    assert "19.21" in (out / "table3.md").read_text()  # the paper's values sit beside ours


def test_measured_values(quick):
    _, _, df = quick
    m = 100  # 10 classes x 10 training points: t = 100 = m
    assert _value(df, "GNNB", 1, m, "top1") == pytest.approx(0.34, abs=0.02)
    assert _value(df, "GNNB", 8, m, "top1") == pytest.approx(0.46, abs=0.02)
    assert _value(df, "NN", 1, m, "top1") == pytest.approx(0.43, abs=0.02)
    assert _value(df, "UNN", 1, m, "top1") == pytest.approx(0.33, abs=0.02)
    assert _value(df, "GNNB", 1, m, "top1", k=10) == pytest.approx(0.41, abs=0.02)
    assert _value(df, "NN", 1, m, "top1", k=10) == pytest.approx(0.44, abs=0.02)
    assert _value(df, "Bayes", 1, m, "top1") == pytest.approx(0.89, abs=0.02)
    # one iteration per class: every test score ties except near the one leveraged point
    assert _value(df, "GNNB", 1, 1, "top1") == pytest.approx(0.10, abs=0.02)
    # GNNB* leverages exactly one new example per iteration at first
    assert _value(df, "GNNB*", 1, 10, "leveraged_mean") == pytest.approx(0.10)


def test_top5_at_least_top1(quick):
    _, _, df = quick
    wide = df[df.metric.isin(["top1", "top5"])].pivot_table(
        index=["method", "n_splits", "t"], columns="metric", values="value"
    )
    assert (wide.top5 >= wide.top1).all()
    assert ((wide.top1 >= 0) & (wide.top5 <= 1)).all()


def test_gnnb_accuracy_grows_with_t(quick):
    _, _, df = quick
    for s in (1, 4, 8):
        acc = [_value(df, "GNNB", s, t, "top1") for t in (1, 10, 100)]
        assert acc[-1] > acc[0]


def test_deterministic(quick, tmp_path):
    module, _, df = quick
    module.main([str(tmp_path), "--quick"])
    again = pd.read_csv(tmp_path / "results.csv")
    pd.testing.assert_frame_equal(df, again)


def test_balanced_design():
    module = _load()
    Xtr, ytr, Xte, yte, means = module.balanced_data(module.QUICK)
    assert Xtr.shape == (100, 64) and Xte.shape == (100, 64)
    assert np.all(np.bincount(ytr) == 10) and np.all(np.bincount(yte) == 10)
    assert means.shape == (10, 64)


def test_knn_scores_match_knn_classifier():
    from knnx import KNNClassifier

    module = _load()
    Xtr, ytr, Xte, _, _ = module.balanced_data(module.QUICK)
    scores = module.knn_scores(Xtr, ytr, Xte, 5, 10)
    pred = KNNClassifier(k=5).fit(Xtr, ytr).predict(Xte)
    np.testing.assert_array_equal(np.argmax(scores, axis=1), pred)
