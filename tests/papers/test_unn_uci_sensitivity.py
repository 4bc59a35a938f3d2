"""experiments/unn_uci_sensitivity.py: the summary of UNN's sensitivity study, checked on a
hand-worked results frame (two settings, four folds)."""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location(
    "unn_uci_sensitivity", ROOT / "experiments" / "unn_uci_sensitivity.py"
)
S = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(S)


def _params(metric, loss, theta, k=4, smoothing="raw"):
    return json.dumps(
        {"k": k, "loss": loss, "metric": metric, "smoothing": smoothing, "theta": theta}, sort_keys=True
    )


def test_summary_by_hand():
    a = _params("euclidean", "exp", 0.5)
    b = _params("seuclidean", "logistic", 0.2)
    errors = {a: [0.10, 0.12, 0.14, 0.16], b: [0.05, 0.07, 0.05, 0.07]}
    # kept proportions: a keeps 40 % on average (within the paper's "no more than 40 %"), b 60 %
    fractions = {a: [0.3, 0.5, 0.3, 0.5], b: [0.6, 0.6, 0.6, 0.6]}
    sens = pd.DataFrame(
        [
            {"dataset": "iris", "algorithm": "unn", "params": p, "fold": f, "metric": "error", "value": v}
            for p, vs in errors.items()
            for f, v in enumerate(vs)
        ]
        + [
            {
                "dataset": "iris",
                "algorithm": "unn",
                "params": p,
                "fold": f,
                "metric": "prototype_fraction",
                "value": v,
            }
            for p, vs in fractions.items()
            for f, v in enumerate(vs)
        ]
    )
    t2 = pd.DataFrame(
        [
            {
                "dataset": "iris",
                "algorithm": "knn",
                "params": json.dumps({"k": 4}),
                "metric": "error",
                "value": v,
            }
            for v in (0.04, 0.06)
        ]
        + [
            {
                "dataset": "iris",
                "algorithm": "knn",
                "params": json.dumps({"k": 5}),
                "metric": "error",
                "value": 0.5,
            }
        ]
    )
    paper = pd.DataFrame([{"dataset": "iris", "k": 4, "unn": 5.5, "knn": 5.73}])
    row = S.summarize(sens, t2, paper).iloc[0]
    assert (
        row["best"] == pytest.approx(6.0)
        and row["best_setting"] == "seuclidean, logistic, smoothing raw, theta 0.2, k 4"
    )
    low, high = stats.t.interval(0.95, 3, loc=6.0, scale=stats.sem([5.0, 7.0, 5.0, 7.0]))
    assert (row["best_low"], row["best_high"]) == pytest.approx((low, high))
    assert row["knn"] == pytest.approx(5.0) and np.isnan(row["unn_cv"])  # k = 4 only
    # a's interval: mean 13, far above 5.5; b's reaches it (low 4.16 <= 5.5)
    assert row["reach"] == 1 and row["n_settings"] == 2 and bool(row["reaches"]) is True
    assert row["best_metric_euclidean"] == pytest.approx(13.0) and row[
        "best_metric_seuclidean"
    ] == pytest.approx(6.0)
    assert row["best_loss_exp"] == pytest.approx(13.0) and row["best_k_4"] == pytest.approx(6.0)
    # theta as the proportion retained: the best (b) keeps 60 %; among the settings
    # keeping at most 40 %, only a (13 %)
    assert row["best_fraction"] == pytest.approx(0.6) and row["max_fraction"] == pytest.approx(0.6)
    assert row["best_retained_40"] == pytest.approx(13.0)


def test_readings_by_hand():
    """The oracle over theta per reading, at the dataset's paper k only."""

    def p(metric, loss, smoothing, theta, k):
        return json.dumps({"k": k, "loss": loss, "metric": metric, "smoothing": smoothing, "theta": theta})

    errors = {
        p("euclidean", "exp", "raw", 0.1, 4): [0.06, 0.08],  # 7 %
        p("euclidean", "exp", "raw", 0.2, 4): [0.04, 0.04],  # 4 %: the reading's best at k = 4
        p("euclidean", "exp", "raw", 0.2, 6): [0.00, 0.00],  # another k: not counted
        p("seuclidean", "exp", False, 0.5, 4): [0.10, 0.12],  # 11 %
    }
    sens = pd.DataFrame(
        [
            {"dataset": "iris", "params": q, "fold": f, "metric": "error", "value": v}
            for q, vs in errors.items()
            for f, v in enumerate(vs)
        ]
    )
    paper = pd.DataFrame([{"dataset": "iris", "k": 4, "unn": 5.0, "knn": 6.0}])
    t = S.readings(sens, paper)
    assert list(t["metric"]) == ["euclidean", "seuclidean", "paper"]
    assert t["iris"].tolist() == pytest.approx([4.0, 11.0, 5.0])
    assert t["smoothing"].tolist()[:2] == ["raw", "false"]
    assert t["at_or_below_paper"].tolist()[:2] == [1, 0] and t["of"].tolist()[:2] == [1, 1]
