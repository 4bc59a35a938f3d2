"""make reproduce (experiments/reproduce.py): assembling REPORT.md from a results tree."""

import json
from pathlib import Path

import pytest
from conftest import load_experiment

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def reproduce():
    return load_experiment("reproduce")


UNN_TABLE2 = """\
# UNN on UCI data: Table 2 of Piro et al. (2012)

## UNN

| dataset | k | n | ours | CI | paper | ours - paper | paper in CI |
|---|---|---|---|---|---|---|---|
| iris | 4 | 150 | 5.20 ± 1.72 | 2.2-10.1 | 3.07 | +2.13 | yes |
| glass | 1 | 214 | 40.37 ± 3.14 | 33.7-47.3 | 3.83 | +36.54 | **no** |

## kNN

| dataset | k | n | ours | CI | paper | ours - paper | paper in CI |
|---|---|---|---|---|---|---|---|
| iris | 4 | 150 | 4.40 ± 1.26 | 1.7-9.0 | 5.73 | -1.33 | yes |

See ![the figure](table2.png).
"""

GNNB_PAPER = """\
# Nock et al. (2014), Sec. 6.3-6.5: the paper's claims against this run

| paper's claim | our numbers | verdict |
|---|---|---|
| GNNB on par with SVM_RBF | -0.071 | not reproduced |
| Boosting dampens the degradation with k | NN +0.075 | reproduced |
| training time SVM_RBF / GNNB >= 50 | 185 | **reproduced** |
"""

CPW_BETA = """\
# CW error against beta

## Difference ours - paper (percentage points); * = the paper's number is outside our 95 % CI

| dataset | beta=0.125 | beta=8 | 95 % CI half-width (beta=8) |
|---|---|---|---|
| balance | -0.44 | -5.37* | 2.82 |
| wine | +0.11 | +0.59 | 1.00 |
| average | -0.43 | -0.41 | - |
"""


@pytest.fixture()
def tree(tmp_path):
    results = tmp_path / "results"
    (results / "unn-uci-table2").mkdir(parents=True)
    (results / "unn-uci-table2" / "table2.md").write_text(UNN_TABLE2)
    (results / "unn-uci-table2" / "table2.png").write_bytes(b"\x89PNG\r\n")
    (results / "gnnb-small-report").mkdir()
    (results / "gnnb-small-report" / "paper.md").write_text(GNNB_PAPER)
    (results / "gnnb-small-report" / "fig3.md").write_text("# Fig. 3\n")
    (results / "gnnb-small-report" / "fig3.png").write_bytes(b"\x89PNG\r\n")
    (results / "cpw-beta-report").mkdir()
    (results / "cpw-beta-report" / "table2.md").write_text(CPW_BETA)
    (results / "lpo-timing").mkdir()
    (results / "lpo-timing" / "fig1.csv").write_text(
        "n,p,k_max,seconds_median\n5000,200,50,0.06\n1000,100,50,0.01\n"
    )
    times = {"unn-uci": {"seconds": 65.0, "returncode": 0, "finished": "2026-01-01 10:00", "log": "x.log"}}
    (results / "reproduce-times.json").write_text(json.dumps(times))
    return results


def _row(text, target):
    return next(line for line in text.splitlines() if line.startswith(f"| [`{target}`]"))


def test_assemble_only(reproduce, tree):
    assert reproduce.main(["--assemble-only", "--results", str(tree)]) == 0
    text = (tree / "REPORT.md").read_text()
    # one summary row per target, in the Makefile's order
    rows = [line for line in text.splitlines() if line.startswith("| [`")]
    assert [r.split("`")[1] for r in rows] == reproduce.TARGET_NAMES
    unn = _row(text, "unn-uci")
    assert "1 min 05 s" in unn and "| ok |" in unn and "paper in our 95 % CI: 2/3" in unn
    gnnb = _row(text, "gnnb-small")
    assert "ok (existing results)" in gnnb and "claims reproduced: 2/3" in gnnb
    assert "paper in our 95 % CI: 3/4" in _row(text, "cpw-beta")  # the average row is not counted
    assert "1000×" in _row(text, "lpo-timing")  # 60 s (paper) / 0.06 s
    assert "missing outputs" in _row(text, "unn-ripley") and "missing outputs" in _row(text, "cpw-uci")
    # one section per paper, holding its targets
    for title in reproduce.PAPERS.values():
        assert f"## {title}" in text
    assert text.index("## Piro et al.") < text.index('<a id="unn-uci"></a>') < text.index("## Nock et al.")
    # the target's own report is included with demoted headings and rebased links
    assert "#### UNN on UCI data: Table 2 of Piro et al. (2012)" in text
    assert "| glass | 1 | 214 | 40.37 ± 3.14 |" in text
    assert "![the figure](unn-uci-table2/table2.png)" in text
    assert "![unn-uci-table2/table2.png](unn-uci-table2/table2.png)" in text
    assert "[`gnnb-small-report/fig3.md`](gnnb-small-report/fig3.md)" in text
    assert "**Missing:** `results/unn-ripley/paper.md`" in text
    assert "| 5000 | 200 | 50 | 0.0600 | 60 | 1000× |" in text


def test_run_records_times_and_failures(reproduce, tree, monkeypatch):
    calls = []

    def fake_run(name, variables, log_dir):
        calls.append((name, variables["CPW_RUNS"]))
        return (2 if name == "gnnb-large" else 0), 12.0

    monkeypatch.setattr(reproduce, "run_target", fake_run)
    args = ["--results", str(tree), "--only", "gnnb-small", "gnnb-large", "--var", "CPW_RUNS=7"]
    assert reproduce.main(args) == 1
    assert calls == [("gnnb-small", "7"), ("gnnb-large", "7")]
    times = json.loads((tree / "reproduce-times.json").read_text())
    assert times["gnnb-small"]["seconds"] == 12.0 and times["unn-uci"]["seconds"] == 65.0
    text = (tree / "REPORT.md").read_text()
    assert "| 12 s | ok | claims reproduced: 2/3 |" in _row(text, "gnnb-small")
    assert "failed (exit 2)" in _row(text, "gnnb-large")
    assert "CPW_RUNS=7" in text


SIDE_TABLE = """\
# Active learning

| dataset | knnx qbc | paper qbc | knnx k | paper k |
|---|---|---|---|---|
| a | 0.5 ± 0.1 (n=10) | 0.45 | 13 | 21 |
| b | 0.5 ± 0.1 (n=10) | 0.60 | 18 | 17-15 |
| c | **0.5 ± 0.1 (n=10)** | 0.55-0.58 | 12 | 13-9 |
| d | 0.5 ± 0.1 (n=1) | 0.45 | 7 | n/a |
"""


def test_side_by_side_difference_and_student_t_interval(reproduce):
    """Hand-worked: mean 0.5, std 0.1 over n = 10 gives 0.5 ± t(0.975, 9) 0.1 / sqrt(10) =
    0.5 ± 2.2622 * 0.031623 = [0.42846, 0.57154]."""
    pairs = [
        reproduce.Pair("^Active", "knnx qbc", "paper qbc", ("dataset",), "error"),
        reproduce.Pair("^Active", "knnx k", "paper k", ("dataset",), "k"),
        reproduce.Pair("^Nothing", "knnx qbc", "paper qbc", ("dataset",), "never"),
    ]
    rows, inside, with_ci = reproduce.side_by_side([SIDE_TABLE], pairs)
    assert rows == [
        "| error | dataset a | 0.5 ± 0.1 (n=10) | 0.45 | +0.05 | yes [0.4285, 0.5715] |",
        "| error | dataset b | 0.5 ± 0.1 (n=10) | 0.60 | -0.1 | no [0.4285, 0.5715] |",
        "| error | dataset c | **0.5 ± 0.1 (n=10)** | 0.55-0.58 | -0.05 | yes [0.4285, 0.5715] |",
        "| error | dataset d | 0.5 ± 0.1 (n=1) | 0.45 | +0.05 | - |",
        "| k | dataset a | 13 | 21 | -8 | - |",
        "| k | dataset b | 18 | 17-15 | +1 | - |",
        "| k | dataset c | 12 | 13-9 | +0 | - |",
    ]
    assert (inside, with_ci) == (2, 3)
    lo, hi = reproduce.ci95(0.5, 0.1, 10)
    assert lo == pytest.approx(0.5 - 2.2621571627 * 0.1 / 10**0.5, rel=1e-9) and hi == pytest.approx(1 - lo)
    assert reproduce.parse_paper("17-15") == (15.0, 17.0) and reproduce.parse_paper("n/a") is None
    assert reproduce.parse_ours("−0.25 ± 0.5 (n = 3)") == (-0.25, 0.5, 3)
    block, headline = reproduce.side_by_side_section([SIDE_TABLE], pairs)
    assert headline == "paper in our 95 % CI: 2/3" and block.count("\n| ") == 8
