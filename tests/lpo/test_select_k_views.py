"""``knnx select-k --metric`` reads a dataset's nominal attributes as a kNN under that
metric reads them in a run (knnx.spec.views.wanted_view): category codes, with the
``nominal`` columns passed, for a metric that takes them (heom, hvdm, gower, vdm,
hamming); one-hot indicators for the others. Its risks are those of ``knnx run`` with
``protocol: {kind: lpo}`` for the same k, metric and data, and of a brute-force
leave-one-out oracle on the codes (tests/metric_oracles.py)."""

import json

import numpy as np
import pytest
from lpo_oracles import vote_cost
from metric_oracles import mixed_reduced, stable_knn
from numpy.testing import assert_allclose

from knnx.datasets import load_dataset
from knnx.lpo.risk import select_k


def _cli(*args):
    from typer.testing import CliRunner

    from knnx.cli import app

    return CliRunner().invoke(app, [str(a) for a in args])


def _select_k(*args):
    res = _cli("select-k", *args, "--format", "json")
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def _mixed_csv(path, text_only=False, n=30, seed=0):
    """A CSV with three numeric columns of few values (unless ``text_only``), two text
    columns and a label ``cls`` that depends on the first text column and the first
    numeric one (with 20 % noise)."""
    rng = np.random.default_rng(seed)
    colour = rng.choice(["red", "green", "blue"], n)
    shape = rng.choice(["a", "b"], n)
    x = rng.integers(0, 4, (n, 3)) * 0.5
    y = np.where(((colour == "red") | (x[:, 0] > 1)) ^ (rng.random(n) < 0.2), "p", "q")
    head = ["colour", "shape", "cls"] if text_only else ["x1", "x2", "x3", "colour", "shape", "cls"]
    rows = [
        ([] if text_only else [repr(v) for v in xs]) + [c, s, lab]
        for xs, c, s, lab in zip(x.tolist(), colour, shape, y, strict=True)
    ]
    path.write_text("".join(",".join(r) + "\n" for r in [head, *rows]))
    return path


def _loo_oracle(metric, X, y, nominal, k_max):
    """Leave-one-out risk of the plurality kNN (a tie among s classes that includes the
    truth costs 1 - 1/s) under ``metric`` fitted on all rows, neighbours by (distance,
    index)."""
    codes = np.unique(y, return_inverse=True)[1]
    D = mixed_reduced(metric, X, X, nominal, codes)
    _, ind = stable_knn(D, k_max, loo=True)
    return np.array(
        [
            np.mean([vote_cost(codes[ind[i, :k]], codes[i]) for i in range(len(y))])
            for k in range(1, k_max + 1)
        ]
    )


CASES = [("heom", False), ("hvdm", False), ("gower", False), ("hamming", False), ("vdm", True)]


@pytest.mark.parametrize("metric,text_only", CASES)
def test_select_k_reads_the_codes_as_protocol_lpo_does(tmp_path, metric, text_only):
    from knnx.experiment.runner import run_spec

    path = _mixed_csv(tmp_path / "mixed.csv", text_only)
    entry = {"csv": str(path), "label": "cls"}
    doc = _select_k("--p", 2, "--csv", path, "--label", "cls", "--k-max", 4, "--metric", metric)
    spec = {
        "name": "lp",
        "datasets": [entry],
        "protocol": {"kind": "lpo", "p": 2},
        "algorithms": [{"name": "knn", "params": {"k": [1, 2, 3, 4], "metric": metric}}],
    }
    run_spec(spec, out=tmp_path / "out", report=False, figures=False)
    import pandas as pd

    rows = pd.read_csv(tmp_path / "out" / "results.csv")
    run_risk = {json.loads(r.params)["k"]: r.value for r in rows.itertuples()}
    assert_allclose(doc["lpo_risk"], [run_risk[k] for k in (1, 2, 3, 4)], rtol=0, atol=1e-12)
    codes = load_dataset(entry, view="keep")
    k, risk = select_k(codes.X, codes.y, 2, 4, metric=metric, nominal=list(codes.nominal))
    assert_allclose(doc["lpo_risk"], risk, rtol=0, atol=0)
    assert doc["selected_k"] == k
    if not text_only:  # what select-k read before, the indicators as numbers, ranks otherwise
        onehot = load_dataset(entry)
        assert not np.allclose(doc["lpo_risk"], select_k(onehot.X, onehot.y, 2, 4, metric=metric)[1])


@pytest.mark.parametrize("metric", ["heom", "hvdm", "gower"])
def test_select_k_p1_is_the_leave_one_out_oracle_on_the_codes(tmp_path, metric):
    path = _mixed_csv(tmp_path / "mixed.csv", seed=1)
    doc = _select_k("--p", 1, "--csv", path, "--label", "cls", "--k-max", 5, "--metric", metric)
    ds = load_dataset({"csv": str(path), "label": "cls"}, view="keep")
    assert ds.nominal == (3, 4)
    assert_allclose(doc["lpo_risk"], _loo_oracle(metric, ds.X, ds.y, ds.nominal, 5), rtol=0, atol=1e-12)


def test_select_k_on_a_bundled_dataset_with_nominal_attributes():
    """The hostile tester's case (keel.breast, hvdm, p = 1): the codes' risks, which knnx
    run gives (0.2996 / 0.3285 / 0.2996), not the one-hot indicators' (0.3394 / ...)."""
    doc = _select_k("--p", 1, "--dataset", "keel.breast", "--k-max", 3, "--metric", "hvdm")
    ds = load_dataset("keel.breast", view="keep")
    assert ds.nominal
    _, risk = select_k(ds.X, ds.y, 1, 3, metric="hvdm", nominal=list(ds.nominal))
    assert_allclose(doc["lpo_risk"], risk, rtol=0, atol=0)
    assert_allclose(doc["lpo_risk"], [83 / 277, 91 / 277, 83 / 277], rtol=0, atol=1e-12)


@pytest.mark.parametrize(
    "args,metric",
    [
        (["--dataset", "ripley", "--p", 3, "--k-max", 6], "hvdm"),  # numeric: no view to take
        (["--dataset", "ripley", "--p", 3, "--k-max", 6], "gower"),
        (["--dataset", "keel.breast", "--p", 1, "--k-max", 3], "euclidean"),  # a numeric metric: one-hot
        (["--dataset", "keel.breast", "--p", 1, "--k-max", 3], "manhattan"),
    ],
)
def test_select_k_unchanged_where_the_metric_reads_numbers_or_the_data_has_no_nominal(args, metric):
    doc = _select_k(*args, "--metric", metric)
    name, p, k_max = args[1], args[3], args[5]
    ds = load_dataset(name)  # the entry as loaded (bundled: one-hot indicators)
    idx = ds.split[0] if ds.split is not None else slice(None)
    assert not ds.nominal
    k, risk = select_k(ds.X[idx], ds.y[idx], p, k_max, metric=metric)
    assert_allclose(doc["lpo_risk"], risk, rtol=0, atol=0)
    assert doc["selected_k"] == k
