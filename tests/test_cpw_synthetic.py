"""experiments/cpw_synthetic.py (make cpw-synthetic, Paredes & Vidal 2006, Sec. 5.1): the
numerical Bayes error, the generated spec, and the report on a small real run."""

import json

import numpy as np
import pandas as pd
import pytest
from conftest import load_experiment
from scipy import stats
from scipy.stats import multivariate_normal

import knnx
from knnx.datasets import load_dataset
from knnx.datasets.synthetic import paredes2006
from knnx.spec import SEED_DATA, dataset_seedseq


@pytest.fixture(scope="module")
def cpw():
    return load_experiment("cpw_synthetic")


# Computed once by cpw.bayes_error() (quad error bound 5e-13), and agreeing to 4e-8 with a
# midpoint grid of step 0.01: the Bayes error of the paredes2006 distribution.
BAYES = 0.1265335012


def _grid_bayes(step):
    """Midpoint rule for 1 - integral max_c pi_c f_c on a box holding all but ~1e-20 of the mass."""
    post = paredes2006(1, seed=0).posterior
    xs = np.arange(-10.0, 12.0, step) + step / 2
    ys = np.arange(-11.0, 13.0, step) + step / 2
    total = 0.0
    for chunk in np.array_split(ys, 8):
        X = np.array(np.meshgrid(xs, chunk)).reshape(2, -1).T
        dens = np.column_stack(
            [
                p * multivariate_normal(m, c).pdf(X)
                for m, c, p in zip(post.means, post.covs, post.priors, strict=True)
            ]
        )
        total += dens.max(axis=1).sum() * step * step
    return 1.0 - total


def test_bayes_error_value_and_bound(cpw):
    value, bound = cpw.bayes_error()
    assert value == pytest.approx(BAYES, abs=1e-9)
    assert bound < 1e-9


def test_bayes_error_against_a_coarse_grid(cpw):
    value, _ = cpw.bayes_error()
    assert abs(_grid_bayes(0.04) - value) < 2e-5


def test_bayes_error_against_monte_carlo(cpw):
    # E[1 - max_c P(c | X)] = Bayes error, X from the mixture (the generator's test sample).
    ds = paredes2006(1, n_test=1_000_000, seed=20260101)
    _, test = ds.split
    loss = 1.0 - ds.posterior(ds.X[test]).max(axis=1)
    se = loss.std(ddof=1) / np.sqrt(len(loss))
    value, _ = cpw.bayes_error()
    assert abs(loss.mean() - value) < 3 * se
    assert se < 2e-4  # the check has teeth: 3 se is below 0.06 percentage points


def test_bayes_error_closed_forms(cpw):
    # Two equiprobable classes N(0, s^2 I) and N((D, 0), s^2 I): Phi(-D / (2 s)); the quadratic
    # terms cancel (linear boundary, x2 ignored).
    value, _ = cpw.bayes_error([[0.0, 0.0], [1.5, 0.0]], [np.eye(2) * 0.49] * 2, [0.5, 0.5])
    assert value == pytest.approx(stats.norm.cdf(-1.5 / (2 * 0.7)), abs=1e-10)
    # Same along a diagonal boundary with unequal priors: Bayes error of a 1-D problem along the
    # mean difference, pi0 Phi(-D/2 + t / D) + pi1 Phi(-D/2 - t / D) with t = log(pi1 / pi0) (unit variance).
    D, p0 = 2.0, 0.3
    m1 = np.array([1.0, 1.0]) * D / np.sqrt(2)
    value, _ = cpw.bayes_error([[0.0, 0.0], m1], [np.eye(2)] * 2, [p0, 1 - p0])
    t = np.log((1 - p0) / p0)
    expected = p0 * stats.norm.cdf(-D / 2 + t / D) + (1 - p0) * stats.norm.cdf(-D / 2 - t / D)
    assert value == pytest.approx(expected, abs=1e-10)


def test_spec_lists_every_size_run_and_scheme(cpw, tmp_path):
    path = cpw.write_spec(3, tmp_path / "s.yaml", sizes=(8, 16))
    vspec = knnx.validate_spec(path)
    assert len(vspec.cells) == 2 * 3 * 4
    spec = vspec.normalized()
    ids = [d["id"] for d in spec["datasets"]]
    assert ids == ["n8-r0", "n8-r1", "n8-r2", "n16-r0", "n16-r1", "n16-r2"]
    assert all(d["n_test"] == 5000 and d["synthetic"] == "paredes2006" for d in spec["datasets"])
    assert [d["n_per_class"] for d in spec["datasets"]] == [8, 8, 8, 16, 16, 16]
    (algo,) = spec["algorithms"]
    assert algo["name"] == "weighted_metric"
    params = algo["params"]
    assert params["scheme"] == ["l2", "cw", "pw", "cpw"]
    assert (params["beta"], params["mu"], params["rho"], params["init"], params["k"]) == (
        10,
        0.001,
        0.01,
        "euclidean",
        1,
    )
    # The default is the paper's six sizes; run r is the same entry whatever RUNS is.
    full = cpw.spec_dict(5)
    assert sorted({d["n_per_class"] for d in full["datasets"]}) == [8, 16, 32, 64, 128, 256]
    assert cpw.spec_dict(2, sizes=(8,))["datasets"] == full["datasets"][:2]


def test_report_on_a_small_run_matches_direct_computation(cpw, tmp_path):
    runs, sizes = 3, (8, 16)
    spec = cpw.spec_dict(runs, sizes=sizes)
    knnx.run_spec(spec, out=tmp_path / "res", jobs=1)
    cpw.report([tmp_path / "res"], tmp_path / "out")

    # Direct computation on the same samples (the spec's seed and each dataset's id).
    errors = {}
    for entry in spec["datasets"]:
        ds = load_dataset(entry, seed=dataset_seedseq(spec["seed"], entry["id"], SEED_DATA))
        train, test = ds.split
        assert len(test) == 5000 and np.bincount(ds.y[train]).tolist() == [entry["n_per_class"]] * 3
        Xtr, ytr, Xte, yte = ds.X[train], ds.y[train], ds.X[test], ds.y[test]
        l2 = knnx.KNNClassifier(k=1).fit(Xtr, ytr).predict(Xte)
        cw = knnx.WeightedMetricNN(
            scheme="cw",
            beta=10,
            mu=0.001,
            rho=0.01,
            init="euclidean",
            max_epochs=cpw.PAPER_PARAMS["max_epochs"],
        ).fit(Xtr, ytr)
        errors[entry["id"]] = {"L2": np.mean(l2 != yte), "CW": np.mean(cw.predict(Xte) != yte)}

    table = pd.read_csv(tmp_path / "out" / "table.csv")
    assert len(table) == len(sizes) * 4
    assert table["bayes_error"].to_numpy() == pytest.approx(BAYES, abs=1e-6)
    for n in sizes:
        for method in ("L2", "CW"):
            e = np.array([errors[f"n{n}-r{r}"][method] for r in range(runs)])
            row = table[(table["size"] == n) & (table["method"] == method)].iloc[0]
            half = stats.t.ppf(0.975, runs - 1) * e.std(ddof=1) / np.sqrt(runs)
            assert row["runs"] == runs
            assert row["mean"] == pytest.approx(e.mean(), abs=1e-9)
            assert row["std"] == pytest.approx(e.std(ddof=1), abs=1e-6)
            assert (row["ci_low"], row["ci_high"]) == pytest.approx(
                (e.mean() - half, e.mean() + half), abs=1e-6
            )

    # Claim 1 reads the paired CW - L2 difference at the smallest size.
    claims = pd.read_csv(tmp_path / "out" / "claims.csv")
    assert len(claims) == 6
    d = np.array([errors[f"n8-r{r}"]["CW"] - errors[f"n8-r{r}"]["L2"] for r in range(runs)])
    assert claims.loc[0, "knnx"].startswith(f"n = 8: {100 * d.mean():+.2f} pp")
    half = stats.t.ppf(0.975, runs - 1) * d.std(ddof=1) / np.sqrt(runs)
    expected = (
        "reproduced" if d.mean() - half > 0 else ("not reproduced" if d.mean() <= 0 else "direction only")
    )
    assert claims.loc[0, "verdict"].startswith(expected)
    md = (tmp_path / "out" / "table.md").read_text(encoding="utf-8")
    assert f"| 8 | {runs} | {100 * np.mean([errors[f'n8-r{r}']['L2'] for r in range(runs)]):.2f} ± " in md
    assert (tmp_path / "out" / "fig2.png").stat().st_size > 10_000
    assert json.loads(pd.read_csv(tmp_path / "res" / "results.csv")["params"].iloc[0])["beta"] == 10


def _frame(effects, sizes=(8, 256), runs=30, seed=0):
    """Test errors per (size, run, method): a shared run effect plus effects[method](size) and small noise."""
    rng = np.random.default_rng(seed)
    rows = []
    for n in sizes:
        for r in range(runs):
            base = 0.2 + rng.normal(0, 0.02)
            for method in ("L2", "CW", "PW", "CPW"):
                value = base + effects.get(method, lambda n: 0.0)(n) + rng.normal(0, 0.001)
                rows.append({"size": n, "run": r, "method": method, "metric": "error", "value": value})
    return pd.DataFrame(rows)


def test_claim_verdicts_follow_the_numbers(cpw):
    # The paper's picture: CW worse at n = 8 only, PW/CPW better everywhere and more so at 256.
    paper_like = {
        "CW": lambda n: 0.003 if n == 8 else 0.0,
        "PW": lambda n: -0.004 if n == 8 else -0.015,
        "CPW": lambda n: -0.003 if n == 8 else -0.016,
    }
    assert cpw.claims(_frame(paper_like))["verdict"].tolist() == ["reproduced"] * 6
    # The opposite picture: CW better at n = 8 and worse by 1 pp at 256, PW worse at 8 and
    # better at 256 only, CPW's gain shrinking with n.
    opposite = {
        "CW": lambda n: -0.003 if n == 8 else 0.01,
        "PW": lambda n: 0.004 if n == 8 else -0.015,
        "CPW": lambda n: -0.02 if n == 8 else -0.005,
    }
    assert cpw.claims(_frame(opposite))["verdict"].tolist() == [
        "not reproduced",
        "not reproduced",
        "partly reproduced",
        "reproduced",
        "reproduced",
        "not reproduced",
    ]
