"""Paredes & Vidal (2006), Sec. 5.1 (make cpw-synthetic): the Bayes error of the model
(knnx.datasets.synthetic.bayes_error_2d) against a grid, Monte Carlo and closed forms; the
plain spec; and the declared target (knnx/papers/targets/cpw-synthetic.yaml) on a small run
against a direct computation of every number and verdict."""

import shutil
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from scipy.stats import multivariate_normal

import knnx
from knnx.datasets import load_dataset
from knnx.datasets.synthetic import bayes_error_2d, paredes2006

# Computed once by bayes_error_2d (quad error bound 5e-13), and agreeing to 4e-8 with a
# midpoint grid of step 0.01: the Bayes error of the paredes2006 distribution.
BAYES = 0.1265335012
EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"


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


def test_bayes_error_value_and_bound():
    value, bound = paredes2006(1, seed=0).posterior.bayes_error()
    assert value == pytest.approx(BAYES, abs=1e-9)
    assert bound < 1e-9


def test_bayes_error_against_a_coarse_grid():
    value, _ = paredes2006(1, seed=0).posterior.bayes_error()
    assert abs(_grid_bayes(0.04) - value) < 2e-5


def test_bayes_error_against_monte_carlo():
    # E[1 - max_c P(c | X)] = Bayes error, X from the mixture (the generator's test sample).
    ds = paredes2006(1, n_test=1_000_000, seed=20260101)
    _, test = ds.split
    loss = 1.0 - ds.posterior(ds.X[test]).max(axis=1)
    se = loss.std(ddof=1) / np.sqrt(len(loss))
    value, _ = paredes2006(1, seed=0).posterior.bayes_error()
    assert abs(loss.mean() - value) < 3 * se
    assert se < 2e-4  # the check has teeth: 3 se is below 0.06 percentage points


def test_bayes_error_closed_forms():
    # Two equiprobable classes N(0, s^2 I) and N((D, 0), s^2 I): Phi(-D / (2 s)); the quadratic
    # terms cancel (linear boundary, x2 ignored).
    value, _ = bayes_error_2d([[0.0, 0.0], [1.5, 0.0]], [np.eye(2) * 0.49] * 2, [0.5, 0.5])
    assert value == pytest.approx(stats.norm.cdf(-1.5 / (2 * 0.7)), abs=1e-10)
    # Same along a diagonal boundary with unequal priors: Bayes error of a 1-D problem along the
    # mean difference, pi0 Phi(-D/2 + t / D) + pi1 Phi(-D/2 - t / D) with t = log(pi1 / pi0) (unit variance).
    D, p0 = 2.0, 0.3
    m1 = np.array([1.0, 1.0]) * D / np.sqrt(2)
    value, _ = bayes_error_2d([[0.0, 0.0], m1], [np.eye(2)] * 2, [p0, 1 - p0])
    t = np.log((1 - p0) / p0)
    expected = p0 * stats.norm.cdf(-D / 2 + t / D) + (1 - p0) * stats.norm.cdf(-D / 2 - t / D)
    assert value == pytest.approx(expected, abs=1e-10)


def test_spec_is_a_grid_of_sizes_and_seeds_with_the_paper_s_settings():
    vspec = knnx.validate_spec(EXPERIMENTS / "cpw_synthetic.yaml")
    assert len(vspec.cells) == 6 * 100 * 4
    (entry,) = vspec.normalized()["datasets"]
    assert entry["n_per_class"] == [8, 16, 32, 64, 128, 256] and entry["seed"] == list(range(100))
    assert entry["n_test"] == 5000 and entry["synthetic"] == "paredes2006"
    (algo,) = vspec.normalized()["algorithms"]
    assert algo["params"]["scheme"] == ["l2", "cw", "pw", "cpw"]
    assert {k: algo["params"][k] for k in ("beta", "mu", "rho", "init", "k")} == {
        "beta": 10.0,
        "mu": 0.001,
        "rho": 0.01,
        "init": "euclidean",
        "k": 1,
    }


def test_declared_target_on_a_small_run_matches_direct_computation(tmp_path):
    """Two sizes x three seeds: the comparison rows' means, Student-t intervals, paired
    differences and claim verdicts equal a direct computation from fresh fits."""
    from knnx.papers import load_target
    from knnx.papers.comparison import comparison_rows

    shutil.copytree(EXPERIMENTS / "paper_values", tmp_path / "experiments" / "paper_values")
    overrides = [
        "datasets.0.n_per_class=[8, 16]",
        "datasets.0.seed=[0, 1, 2]",
        "algorithms.0.params.scheme=[l2, cw]",
    ]
    knnx.run_spec(
        EXPERIMENTS / "cpw_synthetic.yaml",
        out=tmp_path / "results" / "cpw-synthetic",
        overrides=overrides,
        figures=False,
    )
    errors = {}
    for n in (8, 16):
        for s in (0, 1, 2):
            ds = load_dataset({"synthetic": "paredes2006", "n_per_class": n, "n_test": 5000, "seed": s})
            train, test = ds.split
            Xtr, ytr, Xte, yte = ds.X[train], ds.y[train], ds.X[test], ds.y[test]
            l2 = knnx.KNNClassifier(k=1).fit(Xtr, ytr).predict(Xte)
            cw = knnx.WeightedMetricNN(scheme="cw", beta=10, mu=0.001, rho=0.01, init="euclidean").fit(
                Xtr, ytr
            )
            errors[n, s] = {"L2": np.mean(l2 != yte), "CW": np.mean(cw.predict(Xte) != yte)}
    rows = comparison_rows(load_target("cpw-synthetic", root=tmp_path), tmp_path).set_index(
        ["table", "row", "column"]
    )
    for n in (8, 16):
        for method in ("L2", "CW"):
            e = 100 * np.array([errors[n, s][method] for s in range(3)])
            cell = rows.loc[("fig2", f"n = {n}", method)]
            assert cell["n"] == 3 and cell["ours_mean"] == pytest.approx(e.mean(), rel=1e-12)
            low, high = stats.t.interval(0.95, 2, loc=e.mean(), scale=stats.sem(e))
            assert (cell["ci_low"], cell["ci_high"]) == pytest.approx((low, high), rel=1e-10)
        assert rows.loc[("fig2", f"n = {n}", "PW")]["n"] == 0  # not run here
    d = 100 * np.array([errors[8, s]["CW"] - errors[8, s]["L2"] for s in range(3)])
    claim = rows.loc[("sec51", "cw_worse_than_l2_small, n = 8", "CW - L2")]
    assert claim["ours_mean"] == pytest.approx(d.mean(), rel=1e-10, abs=1e-12) and claim["n"] == 3
    low, high = (
        stats.t.interval(0.95, 2, loc=d.mean(), scale=stats.sem(d)) if d.std() > 0 else (d.mean(),) * 2
    )
    assert claim["ci_low"] == pytest.approx(low, rel=1e-9, abs=1e-12)
    assert claim["claim"] == "> 0" and claim["claim_holds"] is bool(low > 0)
    assert (
        rows.loc[("sec51", "cw_as_good_as_l2_large, n = 256", "CW - L2")]["claim_holds"] is None
    )  # no 256 here
