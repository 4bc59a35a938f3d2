"""``knnx run`` with a metric, end to end: kNN under hvdm on german with its nominal
attributes kept, and on a CSV with missing values. Every cell's error is recomputed from the validated splits with the
NumPy oracles of tests/metric_oracles.py (the papers' formulas) and a plain vote."""

import json
import textwrap

import numpy as np
import pandas as pd
from metric_oracles import mixed_reduced, stable_knn

from knnx.experiment.parts import split_parts
from knnx.experiment.runner import run_spec
from knnx.spec import validate_spec


def _plurality(neigh_labels, n_classes):
    """The plain kNN vote: most votes, ties to the class of the nearest among the tied."""
    out = []
    for row in neigh_labels:
        counts = np.bincount(row, minlength=n_classes)
        tied = set(np.flatnonzero(counts == counts.max()))
        out.append(next(c for c in row if c in tied))
    return np.array(out)


def _check_errors(path, out, metric, k, nominal_of):
    vspec = validate_spec(path)
    rows = pd.read_csv(out / "results.csv")
    rows = rows[rows.metric == "error"]
    assert len(rows) == len(vspec.splits[0])
    ds = vspec.datasets[0]
    for s in vspec.splits[0]:
        X_train, y_train, X_test, y_test = split_parts(ds, s.train, s.test, False)
        D = mixed_reduced(metric, X_train, X_test, nominal_of(ds), y_train)
        _, ind = stable_knn(D, k, loo=False)
        pred = _plurality(y_train[ind], ds.n_classes)
        [value] = rows[rows.fold == s.fold].value.tolist()
        assert value == float(np.mean(pred != y_test))
        assert json.loads(rows[rows.fold == s.fold].params.iloc[0])["metric"] == metric


def test_hvdm_knn_runs_on_german_with_its_nominal_attributes(tmp_path):
    path = tmp_path / "g.yaml"
    path.write_text(
        textwrap.dedent(
            """
            name: g
            seed: 3
            datasets: [{name: german, categorical: keep}]
            protocol: {kind: kfold, folds: 3}
            algorithms: [{name: knn, params: {k: 5, metric: hvdm}}]
            metrics: [error]
            """
        )
    )
    run_spec(path, out=tmp_path / "out", figures=False)
    ds = validate_spec(path).datasets[0]
    assert len(ds.nominal) == 13
    _check_errors(path, tmp_path / "out", "hvdm", 5, lambda ds: ds.nominal)


def test_hvdm_knn_runs_on_a_csv_with_missing_values(tmp_path):
    rng = np.random.default_rng(5)
    n = 90
    frame = pd.DataFrame(
        {
            "size": rng.integers(0, 6, n).astype(float),
            "colour": rng.choice(["red", "green", "blue"], n),
            "weight": rng.normal(size=n).round(2),
            "label": rng.choice(["a", "b"], n),
        }
    )
    frame.loc[rng.random(n) < 0.15, "size"] = np.nan
    frame.loc[rng.random(n) < 0.15, "colour"] = None
    frame.to_csv(tmp_path / "data.csv", index=False)
    path = tmp_path / "c.yaml"
    path.write_text(
        textwrap.dedent(
            """
            name: c
            seed: 0
            datasets: [{csv: data.csv, label: label, categorical: keep, missing: keep}]
            protocol: {kind: kfold, folds: 3}
            algorithms: [{name: knn, params: {k: 3, metric: hvdm}}]
            metrics: [error]
            """
        )
    )
    run_spec(path, out=tmp_path / "out", figures=False)
    ds = validate_spec(path).datasets[0]
    assert np.isnan(ds.X).sum() == frame[["size", "colour"]].isna().sum().sum() > 0
    _check_errors(path, tmp_path / "out", "hvdm", 3, lambda ds: ds.nominal)
