"""knnx compare: ranks, Friedman, Iman-Davenport, Nemenyi, Wilcoxon-Holm, against hand
computations and scipy."""

import math

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from knnx.cli import app
from knnx.results import read_results, rows_to_csv
from knnx.stats.compare import compare, holm, iman_davenport, nemenyi_cd

runner = CliRunner()


def _results(means, tmp_path=None, metric="error", algorithms=None):
    """A results frame (or file) with one fold per (dataset, configuration) holding ``means``
    (a DataFrame datasets x configurations); ``algorithms`` maps a column to (algorithm, params)."""
    rows = []
    for d in means.index:
        for c in means.columns:
            algorithm, params = (algorithms or {}).get(c, (c, "{}"))
            rows.append(
                {
                    "experiment": "e",
                    "dataset": d,
                    "algorithm": algorithm,
                    "params": params,
                    "protocol": '{"kind":"kfold"}',
                    "repeat": 0,
                    "fold": 0,
                    "seed": 0,
                    "metric": metric,
                    "value": float(means.loc[d, c]),
                    "n_train": 10,
                    "n_test": 5,
                    "fit_seconds": 0.0,
                    "predict_seconds": 0.0,
                }
            )
    text = rows_to_csv(rows, header=True)
    if tmp_path is None:
        import io

        return read_results(io.StringIO(text))
    path = tmp_path / "results.csv"
    path.write_text(text)
    return path


HAND = pd.DataFrame(
    {"A": [0.1, 0.2, 0.1, 0.3], "B": [0.2, 0.1, 0.1, 0.2], "C": [0.3, 0.3, 0.2, 0.1]},
    index=["d1", "d2", "d3", "d4"],
)


def test_ranks_friedman_and_iman_davenport_on_a_hand_worked_table():
    result = compare(_results(HAND))
    assert result.ranks.to_numpy().tolist() == [[1, 2, 3], [2, 1, 3], [1.5, 1.5, 3], [3, 2, 1]]
    ranks = result.mean_ranks
    assert ranks["configuration"].tolist() == ["B", "A", "C"]
    assert ranks["mean_rank"].tolist() == [1.625, 1.875, 2.5] and set(ranks["n_datasets"]) == {4}
    f = result.friedman_row
    # Demsar's chi2 = 12N/(k(k+1)) (sum R^2 - k(k+1)^2/4) = 1.625, over the tie correction
    # 1 - sum(t^3 - t)/(N k (k^2 - 1)) = 0.9375 (one tie of two on d3): 26/15
    assert f["chi2"] == pytest.approx(26 / 15, rel=1e-15) and f["df"] == 2
    assert f["iman_davenport_f"] == pytest.approx(78 / 94, rel=1e-15)  # (N-1) chi2 / (N(k-1) - chi2)
    assert f["critical_difference"] == pytest.approx(
        2.343 * math.sqrt(12 / 24), rel=5e-4
    )  # the table gives q to three decimals
    pairs = result.pairwise.set_index(["a", "b"])
    assert pairs.loc[("A", "B"), ["wins", "ties", "losses"]].tolist() == [1, 1, 2]
    assert pairs.loc[("A", "C"), ["wins", "ties", "losses"]].tolist() == [3, 0, 1]


def test_holm_by_hand():
    # sorted 0.005 x4 = 0.02, 0.01 x3 = 0.03, 0.03 x2 = 0.06, 0.04 x1 = 0.04 -> max 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]).tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02], abs=1e-15)
    assert holm([0.5, 0.9]).tolist() == [1.0, 1.0]


@pytest.mark.parametrize(("k", "q"), [(2, 1.960), (3, 2.343), (4, 2.569), (5, 2.728), (10, 3.164)])
def test_nemenyi_critical_values_match_demsars_table(k, q):
    assert nemenyi_cd(k, 6) == pytest.approx(
        q * math.sqrt(k * (k + 1) / 36), rel=5e-4
    )  # the table gives q to three decimals


def test_iman_davenport_when_every_dataset_agrees():
    assert iman_davenport(8.0, 3, 4) == (math.inf, 0.0)


def test_iman_davenport_is_infinite_for_identical_rankings_whatever_the_last_bit():
    """Two datasets ranking six contestants alike (two tied): scipy's tie-corrected chi²
    is 10 less one rounding (9.999999999999995), and F was printed as 1.876e+15, p =
    3.6e-38, where the exact 10 gives inf, p = 0. Oracle: the chi² from scipy itself."""
    from scipy.stats import friedmanchisquare

    ranks = [[1, 1], [2, 2], [3, 3], [4, 4], [5.5, 5.5], [5.5, 5.5]]
    chi2 = friedmanchisquare(*ranks).statistic
    assert chi2 == pytest.approx(10, rel=1e-14)
    assert iman_davenport(chi2, 6, 2) == (math.inf, 0.0)
    assert iman_davenport(10 * (1 - 1e-9), 6, 2)[0] == pytest.approx(1e9, rel=1e-6)  # near, not at: finite

    # end to end: every dataset ranks six contestants alike, two tied last
    means = pd.DataFrame(
        [[0.1, 0.2, 0.3, 0.4, 0.5, 0.5], [0.11, 0.21, 0.31, 0.41, 0.52, 0.52]],
        index=["d1", "d2"],
        columns=list("abcdef"),
    )
    result = compare(_results(means), select="all")
    assert result.friedman_row["chi2"] == pytest.approx(10, rel=1e-14)
    assert (result.friedman_row["iman_davenport_f"], result.friedman_row["p_f"]) == (math.inf, 0.0)
    from knnx.reporting.comparison import comparison_table

    assert "Iman-Davenport F = inf, p = 0;" in comparison_table(result, "md")
    assert "Iman and Davenport's $F_F = \\infty$" in comparison_table(result, "latex")  # was \mathrm{NaN}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_friedman_and_wilcoxon_agree_with_scipy_on_random_tables(seed):
    from scipy.stats import friedmanchisquare, wilcoxon

    rng = np.random.default_rng(seed)
    counts = pd.DataFrame(
        rng.integers(0, 20, (12, 4)), index=[f"d{i}" for i in range(12)], columns=list("wxyz")
    )
    means = counts / 20
    result = compare(_results(means), metric="error")
    f = result.friedman_row
    expected = friedmanchisquare(*means.to_numpy().T)
    assert f["chi2"] == expected.statistic and f["p"] == expected.pvalue
    pairs = result.pairwise.set_index(["a", "b"])
    for a, b in [("w", "x"), ("y", "z"), ("w", "z")]:
        if (means[a] == means[b]).all():
            continue
        # scipy on the exact differences (counts): 0.15 - 0.1 and 0.1 - 0.05 differ by
        # rounding in floats, and tie under knnx's rule as they do in counts
        ref = wilcoxon(counts[a], counts[b])
        assert pairs.loc[(a, b), "statistic"] == ref.statistic and pairs.loc[(a, b), "p"] == ref.pvalue
    assert pairs["p_holm"].tolist() == holm(pairs["p"]).tolist()


def test_higher_is_better_metrics_rank_the_highest_first():
    result = compare(_results(HAND, metric="accuracy"), metric="accuracy")
    assert result.ranks.iloc[0].tolist() == [3, 2, 1]


def test_the_command_writes_its_files_and_refuses_ambiguous_contestants(tmp_path):
    path = _results(HAND, tmp_path)
    result = runner.invoke(app, ["compare", str(path), "--out", str(tmp_path / "cmp")])
    assert result.exit_code == 0, result.output
    # one fold per cell: means without ± std; no datasets.csv beside: n from the fold's sizes
    assert result.output.splitlines()[4] == "| d1 | 15 | – | – | **0.1000** | 0.2000 | 0.3000 |"
    files = {"friedman.csv", "pairwise.csv", "per_dataset.csv", "paired.csv", "ranks.csv", "table.md"}
    files |= {"rank_counts.csv", "significance.csv", "left_out.csv", "nemenyi.csv", "cd.png", "cd.svg"}
    files |= {f"error-summary-{name}.png" for name in ("ranks", "win_tie_loss", "mean_ranks")}
    assert {p.name for p in (tmp_path / "cmp").iterdir()} == files  # every install: no extra needed
    friedman = pd.read_csv(tmp_path / "cmp" / "friedman.csv")
    assert list(friedman.columns) == [
        "n_datasets",
        "n_configurations",
        "chi2",
        "df",
        "p",
        "iman_davenport_f",
        "p_f",
        "critical_difference",
    ]
    assert friedman["chi2"].iloc[0] == 26 / 15  # written round-trip exact
    pairwise = pd.read_csv(tmp_path / "cmp" / "pairwise.csv")
    assert list(pairwise.columns) == ["a", "b", "wins", "ties", "losses", "statistic", "p", "p_holm"]
    # two configurations of one algorithm: the command asks how to treat them
    algorithms = {"A": ("knn", '{"k":1}'), "B": ("knn", '{"k":3}'), "C": ("unn", "{}")}
    path = _results(HAND, tmp_path, algorithms=algorithms)
    result = runner.invoke(app, ["compare", str(path)])
    assert result.exit_code == 2
    assert result.output == (
        "error: --select: algorithm 'knn' has 2 configurations; give --select all (each a contestant) or "
        "--select best-test (each algorithm's best on the test folds: optimistic), or choose them honestly "
        "with tune:\n"
    )
    result = runner.invoke(app, ["compare", str(path), "--select", "best-test"])
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert lines[0].startswith(
        "Each algorithm is represented on each dataset by its configuration with the best mean"
    )
    assert "optimistic for knn, whose test folds chose among several configurations" in lines[0]
    assert lines[2] == "| dataset | n | d | classes | knn | unn |"
    assert lines[4] == "| d1 | 15 | – | – | **0.1000** | 0.3000 |"
    result = runner.invoke(app, ["compare", str(path), "--select", "all"])
    assert result.output.splitlines()[2] == "| dataset | n | d | classes | knn k=1 | knn k=3 | unn |"


def test_nemenyi_pvalues_agree_with_the_critical_difference_and_scikit_posthocs():
    from knnx.stats.compare import nemenyi_pvalues

    rng = np.random.default_rng(7)
    # five configurations of increasing error on 30 datasets: some pairs differ, some do not
    means = pd.DataFrame(
        rng.random((30, 5)) * 0.2 + np.arange(5) * 0.03,
        index=[f"d{i}" for i in range(30)],
        columns=list("abcde"),
    )
    result = compare(_results(means))
    pvalues = nemenyi_pvalues(result)
    sp = pytest.importorskip("scikit_posthocs")  # the reference: the package's own computation
    reference = sp.posthoc_nemenyi_friedman(means.to_numpy())
    np.testing.assert_allclose(pvalues.to_numpy(), reference.to_numpy(), rtol=1e-6, atol=1e-12)
    cd = result.friedman["critical_difference"].iloc[0]
    mean_ranks = result.ranks.mean(axis=0)
    verdicts = set()
    for a in means.columns:
        for b in means.columns:
            if a < b:
                apart = abs(mean_ranks[a] - mean_ranks[b]) > cd
                assert apart == (pvalues.loc[a, b] < 0.05), (a, b)
                verdicts.add(apart)
    assert verdicts == {True, False}


def test_the_cd_diagram_shows_every_configuration_without_scikit_posthocs(tmp_path, monkeypatch):
    import sys

    from knnx.reporting.comparison import cd_diagram, write_comparison

    monkeypatch.setitem(sys.modules, "scikit_posthocs", None)  # not installed: drawn all the same
    result = compare(_results(HAND))
    fig = cd_diagram(result)
    texts = " ".join(t.get_text() for t in fig.findobj(lambda o: hasattr(o, "get_text")))
    assert all(name in texts for name in ("A (1.88)", "B (1.62)", "C (2.50)"))
    assert "Nemenyi CD = 1.66 at alpha 0.05" in texts
    written = write_comparison(result, tmp_path / "a")
    assert written[-7:] == [
        "nemenyi.csv",
        "table.md",
        "cd.png",
        "cd.svg",
        "error-summary-ranks.png",
        "error-summary-win_tie_loss.png",
        "error-summary-mean_ranks.png",
    ]
    assert (tmp_path / "a" / "cd.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = (tmp_path / "a" / "cd.svg").read_text()
    assert svg.startswith("<?xml") and "</svg>" in svg
    with_control = compare(_results(HAND), control="A")
    assert write_comparison(with_control, tmp_path / "b")[-8:-3] == [
        "nemenyi.csv",
        "control.csv",
        "table.md",
        "cd.png",
        "cd.svg",
    ]


def _fold_results(values, n_train=80, n_test=20, metric="error"):
    """A results frame from ``values``: {(dataset, configuration): [value per fold]}, one
    repeat of len(folds) folds, each configuration its own algorithm."""
    import io

    rows = []
    for (d, c), folds in values.items():
        for fold, v in enumerate(folds):
            rows.append(
                {
                    "experiment": "e",
                    "dataset": d,
                    "algorithm": c,
                    "params": "{}",
                    "protocol": '{"kind":"kfold"}',
                    "repeat": fold // 5,
                    "fold": fold % 5,
                    "seed": 0,
                    "metric": metric,
                    "value": float(v),
                    "n_train": n_train,
                    "n_test": n_test,
                    "fit_seconds": 0.0,
                    "predict_seconds": 0.0,
                }
            )
    return read_results(io.StringIO(rows_to_csv(rows, header=True)))


def test_corrected_resampled_t_test_by_hand():
    from knnx.stats.compare import paired_tests

    # d = 1, 2, 3, 4: mean 2.5, s^2 = 5/3, J = 4; n_test/n_train = 1/4
    out = paired_tests([2.0, 4.0, 6.0, 8.0], [1.0, 2.0, 3.0, 4.0], 0.25)
    assert out["n_folds"] == 4 and out["mean_difference"] == 2.5
    assert out["t"] == pytest.approx(2.5 / math.sqrt(5 / 12), rel=1e-15)  # 3.8729833462074170
    # Nadeau-Bengio: 2.5 / sqrt((1/4 + 1/4) 5/3) = 2.5 sqrt(1.2)
    assert out["t_corrected"] == pytest.approx(2.7386127875258306, rel=1e-15)
    # two-sided p with 3 degrees of freedom, from the t distribution's closed form for df = 3:
    # P(|T| > t) = 1 - (2/pi) (atan(t/sqrt3) + sqrt3 t / (3 + t^2))
    for t, p in ((out["t"], out["p"]), (out["t_corrected"], out["p_corrected"])):
        closed = 1 - (2 / math.pi) * (math.atan(t / math.sqrt(3)) + math.sqrt(3) * t / (3 + t * t))
        assert p == pytest.approx(closed, rel=1e-12)
    assert out["p_corrected"] > out["p"]  # the correction is more conservative
    # without overlap between training sets (ratio 0) the correction changes nothing
    plain = paired_tests([2.0, 4.0, 6.0, 8.0], [1.0, 2.0, 3.0, 4.0], 0.0)
    assert plain["t_corrected"] == pytest.approx(plain["t"], rel=1e-15)


def test_paired_t_agrees_with_scipy_and_undefined_cases_follow_the_rules():
    from scipy.stats import ttest_rel

    from knnx.stats.compare import paired_tests

    rng = np.random.default_rng(3)
    for _ in range(20):
        a, b = rng.random(10), rng.random(10)
        out = paired_tests(a, b, 1 / 9)
        ref = ttest_rel(a, b)
        assert out["t"] == pytest.approx(ref.statistic, rel=1e-12)
        assert out["p"] == pytest.approx(ref.pvalue, rel=1e-9)
    same = paired_tests([0.1, 0.2, 0.3], [0.1, 0.2, 0.3], 0.5)
    assert math.isnan(same["t"]) and same["p"] == 1.0 and same["p_corrected"] == 1.0
    shifted = paired_tests([0.3, 0.4, 0.5], [0.1, 0.2, 0.3], 0.5)
    assert shifted["t"] == math.inf and shifted["p"] == 0.0
    one = paired_tests([0.3], [0.1], 0.5)
    assert one["n_folds"] == 1 and math.isnan(one["p"])


def test_per_dataset_tests_pair_the_shared_folds():
    from scipy.stats import ttest_rel

    rng = np.random.default_rng(11)
    values = {(d, c): rng.integers(0, 20, 10) / 20 for d in ("d1", "d2", "d3") for c in ("A", "B", "C")}
    result = compare(_fold_results(values, n_train=90, n_test=10))
    paired = result.paired.set_index(["dataset", "a", "b"])
    assert len(paired) == 3 * 3
    for d in ("d1", "d2", "d3"):
        a, b = values[(d, "A")], values[(d, "C")]
        row = paired.loc[(d, "A", "C")]
        assert row["n_folds"] == 10 and row["test_train_ratio"] == 10 / 90
        assert row["mean_difference"] == pytest.approx(np.mean(a - b), abs=1e-15)
        assert row["p"] == pytest.approx(ttest_rel(a, b).pvalue, rel=1e-9)
        d_ = a - b
        t_c = d_.mean() / math.sqrt((1 / 10 + 10 / 90) * d_.var(ddof=1))
        assert row["t_corrected"] == pytest.approx(t_c, rel=1e-12)
    per = result.per_dataset.set_index(["dataset", "configuration"])
    assert per.loc[("d2", "B"), "mean"] == pytest.approx(values[("d2", "B")].mean(), abs=1e-15)
    assert per.loc[("d2", "B"), "std"] == pytest.approx(values[("d2", "B")].std(ddof=1), rel=1e-12)
    assert per.loc[("d2", "B"), "n_folds"] == 10
    assert per.loc[("d2", "B"), "rank"] == result.ranks.loc["d2", "B"]


def test_best_test_selection_names_the_chosen_configuration_and_pairs_its_folds():
    algorithms = {"A": ("knn", '{"k":1}'), "B": ("knn", '{"k":3}'), "C": ("unn", "{}")}
    means = HAND
    result = compare(_results(means, algorithms=algorithms), select="best-test")
    per = result.per_dataset.set_index(["dataset", "configuration"])
    # d1: A 0.1 < B 0.2; d2: B 0.1 < A 0.2; d3: tie 0.1, the first (k=1) is kept
    assert [per.loc[(d, "knn"), "chosen"] for d in ("d1", "d2", "d3", "d4")] == [
        "knn k=1",
        "knn k=3",
        "knn k=1",
        "knn k=3",
    ]
    assert per.loc[("d4", "unn"), "chosen"] == "unn"
    assert result.folds["knn"].tolist() == [0.1, 0.1, 0.1, 0.2]


def test_rank_counts_give_ties_the_best_rank():
    from knnx.stats.compare import rank_counts

    counts = rank_counts(HAND, metric="error")
    # ranks (min): d1 1,2,3; d2 2,1,3; d3 1,1,3; d4 3,2,1
    assert counts.loc["A"].tolist() == [2, 1, 1]
    assert counts.loc["B"].tolist() == [2, 2, 0]
    assert counts.loc["C"].tolist() == [1, 0, 3]


def test_compare_carries_rank_counts_and_significance_counts_by_hand(tmp_path):
    # error (lower is better), 5 folds on two datasets:
    # d1: A = B - 0.1 on every fold (constant difference: p = 0, significant), C noisy
    # d2: A and B equal (p = 1); C worse than both by a varying margin
    values = {
        ("d1", "A"): [0.1, 0.2, 0.1, 0.2, 0.1],
        ("d1", "B"): [0.2, 0.3, 0.2, 0.3, 0.2],
        ("d1", "C"): [0.1, 0.5, 0.0, 0.4, 0.3],
        ("d2", "A"): [0.1, 0.1, 0.2, 0.1, 0.1],
        ("d2", "B"): [0.1, 0.1, 0.2, 0.1, 0.1],
        ("d2", "C"): [0.5, 0.6, 0.6, 0.7, 0.5],
    }
    from scipy.stats import ttest_rel

    result = compare(_fold_results(values), alpha=0.1)
    # d1 means A 0.14, B 0.24, C 0.26 -> ranks A 1, B 2, C 3; d2: A = B = 0.12, C 0.58 -> (min) 1, 1, 3
    counts = result.rank_counts.set_index("configuration")
    assert counts.loc["A"].tolist() == [2, 0, 0]
    assert counts.loc["B"].tolist() == [1, 1, 0]
    assert counts.loc["C"].tolist() == [0, 0, 2]
    # the paired t-tests by scipy, counted at p < 0.1 for the better mean
    p = {
        (d, a, b): ttest_rel(values[(d, a)], values[(d, b)]).pvalue
        for d in ("d1", "d2")
        for a, b in (("A", "C"), ("B", "C"))
    }
    assert p[("d1", "A", "C")] > 0.1 and p[("d1", "B", "C")] > 0.1  # C's folds too noisy on d1
    assert p[("d2", "A", "C")] < 0.1 and p[("d2", "B", "C")] < 0.1
    sig = result.significance.set_index("configuration")
    # A: beats B on d1 (constant), beats C on d2; B: loses to A on d1, beats C on d2; C: loses twice
    assert sig.loc["A", ["better", "worse"]].tolist() == [2, 0]
    assert sig.loc["B", ["better", "worse"]].tolist() == [1, 1]
    assert sig.loc["C", ["better", "worse"]].tolist() == [0, 2]
    # the corrected test is more conservative: never more significant pairs
    assert (sig["better_corrected"] <= sig["better"]).all() and (sig["worse_corrected"] <= sig["worse"]).all()
    assert sig.loc["A", "better_corrected"] >= 1  # a constant difference stays significant
    from knnx.reporting.comparison import write_comparison

    write_comparison(result, tmp_path / "x", metric="error", alpha=0.1)
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "x" / "significance.csv"), result.significance)
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "x" / "rank_counts.csv"), result.rank_counts)


def test_rounding_is_no_difference_and_a_missing_algorithm_is_one_line():
    from knnx.stats.compare import paired_tests

    a = np.array([0.1, 0.2, 0.3, 0.4, 0.5])
    b = a.copy()
    b[2] = np.nextafter(b[2], 1.0)  # one ulp on one fold: summation order, not a difference
    out = paired_tests(a, b, 0.25)
    assert out["p"] == 1.0 and out["p_corrected"] == 1.0 and math.isnan(out["t"])
    # every dataset ties every configuration: Friedman is 0 and p 1 (scipy's formula is 0/0)
    flat = pd.DataFrame({"A": [0.2, 0.3], "B": [0.2, 0.3], "C": [0.2, 0.3]}, index=["d1", "d2"])
    f = compare(_results(flat)).friedman_row
    assert (f["chi2"], f["p"], f["iman_davenport_f"], f["p_f"]) == (0.0, 1.0, 0.0, 1.0)
    # best-test when an algorithm has nothing on a dataset: the one-line error, no traceback
    algorithms = {"A": ("knn", '{"k":1}'), "B": ("knn", '{"k":3}'), "C": ("unn", "{}")}
    frame = _results(HAND, algorithms=algorithms)
    frame = frame[~((frame["dataset"] == "d2") & (frame["algorithm"] == "knn"))]
    # knn is left out by name; one contestant is no comparison
    with pytest.raises(Exception, match=r"left out: knn \(no 'error' results on 1 of 4 datasets \(d2\)\)"):
        compare(frame, select="best-test")


def test_compare_returns_a_typed_frozen_result():
    import dataclasses

    from knnx.stats.compare import CompareResult

    result = compare(_results(HAND), alpha=0.1)
    assert isinstance(result, CompareResult) and (result.metric, result.select, result.alpha) == (
        "error",
        "all",
        0.1,
    )
    assert [f.name for f in dataclasses.fields(result)] == [
        "metric",
        "select",
        "alpha",
        "means",
        "ranks",
        "mean_ranks",
        "pairwise",
        "friedman",
        "per_dataset",
        "paired",
        "folds",
        "rank_counts",
        "significance",
        "left_out",
        "control",
        "rope",
        "control_tests",
    ]
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.alpha = 0.05
    pd.testing.assert_series_equal(result.friedman_row, result.friedman.iloc[0])


def test_one_significance_rule_counts_per_configuration_and_per_pair():
    """significant_winners decides; significance_counts (compare, the papers) and
    pairwise_significance (the report) count the same verdicts, by hand on five folds."""
    from knnx.stats.compare import pairwise_significance, significant_winners

    values = {
        ("d1", "A"): [0.1, 0.2, 0.1, 0.2, 0.1],  # B - 0.1 on every fold: p = 0
        ("d1", "B"): [0.2, 0.3, 0.2, 0.3, 0.2],
        ("d1", "C"): [0.1, 0.5, 0.0, 0.4, 0.3],
        ("d2", "A"): [0.1, 0.1, 0.2, 0.1, 0.1],  # A = B: never counted
        ("d2", "B"): [0.1, 0.1, 0.2, 0.1, 0.1],
        ("d2", "C"): [0.5, 0.6, 0.6, 0.7, 0.5],
    }
    for metric, flip in (("error", False), ("accuracy", True)):  # lower or higher is better
        flipped = {key: [1 - v if flip else v for v in vals] for key, vals in values.items()}
        result = compare(_fold_results(flipped, metric=metric), metric=metric, alpha=0.1)
        verdicts = significant_winners(result.paired, metric, 0.1)
        # pairs in order (A, B), (A, C), (B, C) on d1, then on d2; accuracies 1 - error: the same winners
        assert verdicts["winner"].tolist() == ["A", None, None, None, "A", "B"]
        pairs = pairwise_significance(result.paired, metric, 0.1, corrected=False)
        assert pairs.to_dict("list") == {
            "a": ["A", "A", "B"],
            "b": ["B", "C", "C"],
            "a_better": [1, 1, 1],
            "b_better": [0, 0, 0],
        }
        sig = result.significance.set_index("configuration")
        assert sig["better"].tolist() == [2, 1, 0] and sig["worse"].tolist() == [0, 1, 2]
        corrected = pairwise_significance(result.paired, metric, 0.1)
        assert corrected["a_better"].sum() == sig["better_corrected"].sum() == sig["worse_corrected"].sum()
        assert corrected["a_better"].tolist()[0] == 1  # a constant difference stays significant


def test_the_cd_diagram_draws_on_a_given_axes_without_pyplot():
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

    from knnx.reporting.comparison import cd_diagram, draw_cd_diagram

    plt.close("all")
    result = compare(_results(HAND))
    fig = Figure()
    left, right = fig.subplots(1, 2)
    diagram = draw_cd_diagram(result, right)
    fig.canvas.draw() if hasattr(fig.canvas, "draw") else None
    assert "Nemenyi CD = 1.66 at alpha 0.05" in diagram.title_text.get_text() and left.get_title() == ""
    assert not left.texts and {"A (1.88)", "B (1.62)", "C (2.50)"} == {
        t.get_text() for t in diagram.labels.values()
    }
    assert isinstance(cd_diagram(result), Figure)
    assert plt.get_fignums() == []  # no pyplot figure left open
