"""knnx's one tie rule (knnx.stats.ties): means one ulp apart are equal in every command
that ranks, bolds or counts wins: ``knnx table``, ``knnx compare``, the report and the
paper tables. The oracle: the same results with the two means exactly equal."""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import rankdata
from test_compare import _results
from typer.testing import CliRunner

from knnx.cli import app
from knnx.stats.compare import compare
from knnx.stats.ties import TIE_RTOL, best_mask, rank_rows, snap, ties

runner = CliRunner()

ULP_BELOW = float(np.nextafter(0.04, 0.0))  # 0.039999999999999994, as a different summation order gives


def test_the_rule_by_hand():
    assert ULP_BELOW == 0.039999999999999994
    assert ties(0.04, ULP_BELOW) and ties(0.3565217391304347, 0.3565217391304348)
    assert ties(0.265, 0.26499999999999996)
    assert not ties(0.04, 0.04 + 1e-9) and not ties(np.nan, np.nan)
    # relative above 1: 1e6 and 1e6 + 1e-7 tie (1e-13 relative), 1e6 + 1e-5 does not
    assert ties(1e6, 1e6 + 1e-7) and not ties(1e6, 1e6 + 1e-5)
    assert TIE_RTOL == 1e-12
    # snapping: a group takes its smallest value; no chaining beyond the group's smallest
    row = np.array([0.3, ULP_BELOW, 0.04, np.nan, 0.04 + 5e-13, 0.04 + 1.5e-12])
    snapped = snap(row)
    assert snapped[[1, 2, 4]].tolist() == [ULP_BELOW] * 3
    assert snapped[5] == 0.04 + 1.5e-12 and snapped[0] == 0.3 and np.isnan(snapped[3])
    assert best_mask(row, lower=True).tolist() == [False, True, True, False, True, False]
    assert best_mask(row, lower=False).tolist() == [True, False, False, False, False, False]


@pytest.mark.parametrize("method", ["average", "min", "max", "dense"])
def test_ranks_of_values_one_ulp_apart_equal_the_ranks_of_equal_values(method):
    near = np.array([[0.3, ULP_BELOW, 0.04, 0.1], [0.2, 0.2, np.nextafter(0.2, 1), 0.5]])
    exact = np.array([[0.3, 0.04, 0.04, 0.1], [0.2, 0.2, 0.2, 0.5]])
    assert (
        rank_rows(near, lower=True, method=method).tolist() == rankdata(exact, axis=1, method=method).tolist()
    )
    assert (
        rank_rows(near, lower=False, method=method).tolist()
        == rankdata(-exact, axis=1, method=method).tolist()
    )


# iris-like: cmdw's mean is 0.039999999999999994 where svc's is 0.04
NEAR = pd.DataFrame(
    {
        "cmdw": [ULP_BELOW, 0.30, 0.26499999999999996, 0.10],
        "svc": [0.04, 0.35, 0.265, 0.12],
        "rf": [0.05, 0.30, 0.27, 0.09],
    },
    index=["iris", "liver", "german", "cancer"],
)
EXACT = NEAR.assign(cmdw=[0.04, 0.30, 0.265, 0.10])


def test_compare_ranks_counts_and_tests_see_one_ulp_as_a_tie():
    near, exact = compare(_results(NEAR)), compare(_results(EXACT))
    assert near.ranks.loc["iris"].tolist() == [1.5, 1.5, 3.0] == exact.ranks.loc["iris"].tolist()
    assert near.ranks.loc["german"].tolist() == [1.5, 1.5, 3.0]
    pd.testing.assert_frame_equal(near.ranks, exact.ranks)
    pd.testing.assert_frame_equal(near.mean_ranks, exact.mean_ranks)
    pd.testing.assert_frame_equal(near.friedman, exact.friedman)
    pd.testing.assert_frame_equal(near.pairwise, exact.pairwise)
    pd.testing.assert_frame_equal(near.rank_counts, exact.rank_counts)
    pair = near.pairwise.set_index(["a", "b"]).loc[("cmdw", "svc")]
    assert [pair.wins, pair.ties, pair.losses] == [2, 2, 0]
    # the means shown are the means as computed
    assert near.means.loc["iris", "cmdw"] == ULP_BELOW


def test_best_test_takes_the_first_of_tying_configurations():
    frame = _results(
        pd.DataFrame({"k1": [0.04, 0.2], "k3": [ULP_BELOW, 0.1], "o": [0.5, 0.5]}, index=["a", "b"]),
        algorithms={"k1": ("knn", '{"k":1}'), "k3": ("knn", '{"k":3}'), "o": ("o", "{}")},
    )
    result = compare(frame, select="best-test")
    chosen = result.per_dataset.set_index(["dataset", "configuration"])["chosen"]
    assert chosen[("a", "knn")] == "knn k=1"  # first in file order among the tying means
    assert chosen[("b", "knn")] == "knn k=3"


def test_table_bolds_and_compare_ranks_the_same_ties(tmp_path):
    path = _results(NEAR, tmp_path)
    table = runner.invoke(app, ["table", str(path)])
    assert table.exit_code == 0, table.output
    iris = [line for line in table.output.splitlines() if line.startswith("| iris ")]
    bold = {line.split("|")[2].strip() for line in iris if "**" in line}
    assert bold == {"cmdw", "svc"}
    done = runner.invoke(app, ["compare", str(path), "--select", "all", "--out", str(tmp_path / "c")])
    assert done.exit_code == 0, done.output
    iris = next(line for line in done.output.splitlines() if line.startswith("| iris "))
    assert iris == "| iris | 15 | – | – | **0.0400** | **0.0400** | 0.0500 |"  # both bold
    per = pd.read_csv(tmp_path / "c" / "per_dataset.csv").set_index(["dataset", "configuration"])
    assert per.loc[("iris", "cmdw"), "rank"] == per.loc[("iris", "svc"), "rank"] == 1.5


def test_paper_tables_take_the_smallest_parameter_among_tying_means():
    from knnx.papers.comparison import _argmins
    from knnx.papers.declaration import ArgMin

    rows = pd.DataFrame(
        {
            "dataset": ["d"] * 3,
            "param_k": ["5", "3", "7"],
            "value": [0.04, ULP_BELOW, 0.05],
        }
    )
    assert _argmins(rows, ArgMin(param="k", by=["dataset"])).tolist() == [3.0]
    rows["value"] = [ULP_BELOW, 0.04, 0.05]
    assert _argmins(rows, ArgMin(param="k", by=["dataset"])).tolist() == [3.0]
