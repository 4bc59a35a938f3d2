"""The regression gate (knnx.papers.gate, knnx gate): its specs validate, every spec has a
committed reference, and the gate passes an unchanged run and fails a perturbed reference."""

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from knnx import cli
from knnx.papers import gate as G
from knnx.results import read_results, rows_to_csv
from knnx.spec import validate_spec

# Round trips through files: also run under each pandas of make test-pandas.
pytestmark = pytest.mark.pandas_io

ROOT = Path(__file__).resolve().parents[2]
SPECS = ROOT / "experiments" / "regress"
REFERENCE_DIR = ROOT / "results" / "reference"


@pytest.fixture(scope="module")
def regress():
    return G


def test_regress_specs_validate(regress):
    specs = regress.find_specs(SPECS)
    assert len(specs) >= 7
    for path in specs:
        assert len(validate_spec(path).cells) > 0


def test_every_spec_has_its_reference(regress):
    for path in regress.find_specs(SPECS):
        reference = REFERENCE_DIR / f"{path.stem}.csv"
        assert reference.exists(), f"{reference} missing: run knnx gate --update"
        frame = read_results(reference)
        assert len(frame) > 0
        assert frame["value"].notna().all()


def _perturb(src, dst, row=0, delta=1e-9):
    frame = read_results(src)
    frame.loc[row, "value"] = frame.loc[row, "value"] + delta
    Path(dst).write_text(rows_to_csv(frame.to_dict("records"), header=True))


def test_check_detects_a_perturbed_reference(regress, tmp_path):
    reference = REFERENCE_DIR / "regress_lpo_protocol.csv"
    ok, problems = regress.check(reference, reference, 0.0)
    assert ok and problems == []
    perturbed = tmp_path / "perturbed.csv"
    _perturb(reference, perturbed, row=3)
    ok, problems = regress.check(reference, perturbed, 0.0)
    assert not ok
    assert len(problems) == 1 and problems[0].startswith("moved:")
    # within a tolerance larger than the change, it passes
    assert regress.check(reference, perturbed, 1e-6)[0]


def test_third_party_baselines_have_a_small_tolerance_and_knnx_algorithms_none(regress, tmp_path):
    """A last-digit drift of svm_platt (its scipy/scikit-learn numerics) passes; the same drift
    of a knnx algorithm fails, printed with every digit."""
    from knnx.estimators.registry import ALGORITHMS

    assert set(regress.ALGORITHM_ATOL) <= set(ALGORITHMS)
    assert not {"knn", "knn_lpo", "unn", "unn_cv", "gnnb", "weighted_metric"} & set(regress.ALGORITHM_ATOL)
    assert all(tol == 1e-6 for tol in regress.ALGORITHM_ATOL.values())
    reference = REFERENCE_DIR / "regress_synthetic.csv"
    frame = read_results(reference)
    svm = int(frame.index[(frame.algorithm == "svm_platt") & (frame.metric == "sym_kl")][0])
    unn = int(frame.index[(frame.algorithm == "unn") & (frame.metric == "sym_kl")][0])
    drifted = tmp_path / "svm.csv"
    _perturb(reference, drifted, row=svm, delta=1e-12)
    assert regress.check(drifted, reference, 0.0) == (True, [])
    ok, problems = regress.check(drifted, reference, 0.0, atol_for={})  # exact everywhere: fails
    assert not ok and len(problems) == 1 and "svm_platt" in problems[0]
    _perturb(reference, drifted, row=svm, delta=2e-6)  # beyond the baseline tolerance
    assert not regress.check(drifted, reference, 0.0)[0]
    _perturb(reference, drifted, row=unn, delta=1e-12)
    ok, problems = regress.check(drifted, reference, 0.0)
    assert not ok and len(problems) == 1 and " unn " in problems[0]
    mean = frame.loc[unn, "value"]  # one row per group here: the group mean is the row
    assert f"vs reference {mean:.17g}" in problems[0] and "> 1e-15)" in problems[0]  # sym_kl's tolerance


def test_posterior_divergences_get_a_few_units_in_the_last_place(regress, tmp_path):
    """sym_kl and js of a knnx algorithm (compared with a posterior computed by scipy and
    numpy's CPU-dispatched exp and log) may move by a unit in the last place, as between an AVX-512 and an
    AVX2 machine; 1e-14 fails, and so does such a move of the same cell's Brier score."""
    reference = REFERENCE_DIR / "regress_synthetic.csv"
    frame = read_results(reference)
    assert regress.METRIC_ATOL == {"sym_kl": 1e-15, "js": 1e-15}

    def row(metric):
        return int(frame.index[(frame.algorithm == "unn") & (frame.metric == metric)][0])

    drifted = tmp_path / "unn.csv"
    for metric in ("sym_kl", "js"):
        _perturb(reference, drifted, row=row(metric), delta=2.3e-16)
        assert regress.check(drifted, reference, 0.0) == (True, [])
        assert not regress.check(drifted, reference, 0.0, atol_metric={})[0]  # exact: fails
        _perturb(reference, drifted, row=row(metric), delta=1e-14)
        assert not regress.check(drifted, reference, 0.0)[0]
    _perturb(reference, drifted, row=row("brier"), delta=2.3e-16)
    ok, problems = regress.check(drifted, reference, 0.0)
    assert not ok and " brier" in problems[0]


def test_check_fails_on_groups_missing_from_the_reference(regress, tmp_path):
    reference = REFERENCE_DIR / "regress_lpo_protocol.csv"
    frame = read_results(reference)
    short = tmp_path / "short.csv"
    short.write_text(rows_to_csv(frame.iloc[1:].to_dict("records"), header=True))
    ok, problems = regress.check(reference, short, 0.0)
    assert not ok
    assert any("reference incomplete" in p for p in problems)


TINY = """\
name: regress-tiny
seed: 0
datasets: [iris]
protocol: {kind: kfold, folds: 2, repeats: 1, stratified: true}
algorithms:
  - name: knn
    params: {k: [1, 5]}
metrics: [error]
"""


def test_gate_end_to_end(tmp_path):
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "regress_tiny.yaml").write_text(TINY)
    refs, out = tmp_path / "reference", tmp_path / "out"
    args = ["gate", "--specs", str(specs), "--reference-dir", str(refs), "--out", str(out), "--jobs", "1"]
    runner = CliRunner()

    result = runner.invoke(cli.app, args)
    assert result.exit_code == 1 and "no reference" in result.output  # no reference yet

    result = runner.invoke(cli.app, [*args, "--update"])
    assert result.exit_code == 0, result.output
    reference = refs / "regress_tiny.csv"
    assert reference.exists()
    assert (out / "regress_tiny" / "results.csv").read_bytes() == reference.read_bytes()

    result = runner.invoke(cli.app, args)
    assert result.exit_code == 0
    assert "PASS    regress_tiny" in result.output and "1 spec(s) passed" in result.output

    saved = tmp_path / "saved.csv"
    shutil.copyfile(reference, saved)
    _perturb(saved, reference, row=0, delta=0.01)
    result = runner.invoke(cli.app, args)
    assert result.exit_code == 1
    assert "FAIL    regress_tiny" in result.output and "moved:" in result.output
    assert "1 of 1 spec(s) failed" in result.output

    result = runner.invoke(cli.app, ["gate", "--specs", str(tmp_path / "none")])
    assert result.exit_code == 2 and result.output.startswith("error: --specs: no regress_*.yaml spec in ")


def test_the_main_job_equals_its_reference_exactly(tmp_path):
    """CI's last step, in the fast suite: a fresh run of experiments/ripley.yaml checked
    against results/reference/ripley.csv with atol 0 (group keys, params included, must
    match too: a parameter every row gains needs the reference regenerated)."""
    from knnx.reporting.summaries import check_against_reference

    out = tmp_path / "ripley"
    result = CliRunner().invoke(
        cli.app,
        ["run", str(ROOT / "experiments" / "ripley.yaml"), "--out", str(out), "--quiet", "--no-report"],
    )
    assert result.exit_code == 0, result.output
    assert check_against_reference(out / "results.csv", REFERENCE_DIR / "ripley.csv", atol=0.0) == []
    assert len(read_results(out / "results.csv")) == len(read_results(REFERENCE_DIR / "ripley.csv")) == 276
