"""The spec's ``report:`` and ``figures:`` settings: kept by every run and rerun of
report.html (``knnx report --control`` still overrides), checked at validation in one
line; the diagnostics a spec asks for drawn; a tuned choice at its grid's edge said
in the run's last lines and in the report."""

import pytest
import yaml
from conftest import refused_by_cli
from typer.testing import CliRunner

from knnx.cli import app
from knnx.experiment.runner import run_spec
from knnx.reporting.html import report_options

runner = CliRunner()

SPEC = {
    "name": "settings",
    "seed": 0,
    "datasets": ["iris", "wine", "glass"],
    "protocol": {"kind": "kfold", "folds": 3},
    "algorithms": [
        {"name": "knn", "id": "tuned", "params": {"k": [15, 20, 25]}, "tune": {"cv": 3}},
        {"name": "knn", "params": {"k": 3}},
        {"name": "cw", "params": {"max_epochs": 5}},
    ],
    "report": {"control": "knn"},
    "figures": ["loo_error"],
}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("settings") / "out"
    summary = run_spec(SPEC, out=out)
    return out, summary


def _control_of(html):
    """The control the report's table compares with, from its legend."""
    marker = "significantly worse / better than the control "
    return html.split(marker, 1)[1].split(" ", 1)[0] if marker in html else None


def test_the_spec_control_is_kept_by_the_run_and_by_knnx_report(run):
    out, _ = run
    assert _control_of((out / "report.html").read_text()) == "knn"
    assert yaml.safe_load((out / "spec.yaml").read_text())["report"]["control"] == "knn"
    assert report_options(out).control == "knn"
    done = runner.invoke(app, ["report", str(out)])
    assert done.exit_code == 0, done.output
    assert _control_of((out / "report.html").read_text()) == "knn"
    done = runner.invoke(app, ["report", str(out), "--control", "cw"])  # an option overrides
    assert done.exit_code == 0 and _control_of((out / "report.html").read_text()) == "cw"
    assert report_options(out, control="cw", alpha=0.1).alpha == 0.1


def test_a_rerun_keeps_the_spec_control(run, tmp_path):
    out, _ = run
    again = run_spec({**SPEC}, out=out)
    assert again.n_run == 0
    assert _control_of((out / "report.html").read_text()) == "knn"


def test_the_diagnostics_asked_for_are_drawn_and_no_others(run):
    out, _ = run
    pngs = {p.name for p in out.glob("*.png")}
    assert "loo_error.png" in pngs and "tuned-choices.png" in pngs
    assert not any(name.startswith(("epochs", "initial_loo_error", "chosen_k")) for name in pngs)


def test_a_choice_at_the_grid_edge_is_said(run):
    out, summary = run
    html = (out / "report.html").read_text()
    assert summary.advice, "a grid of 15, 20, 25 on these small sets: the smallest k is chosen most"
    for line in summary.advice:
        assert line.startswith("tuned chose k = 15, the smallest value of its grid") and f"{line}." in html


@pytest.mark.parametrize(
    ("report", "line"),
    [
        (
            {"metric": "accuracy"},
            "report.metric: 'accuracy' is not a metric of this spec; its metrics: error",
        ),
        (
            {"control": "nope"},
            "report.control: 'nope' names no algorithm of this spec; its ids: tuned, knn, cw",
        ),
        (
            {"control": "knn k=7"},
            "report.control: 'knn k=7' is not a contestant; contestants: tuned, knn, cw",
        ),
        ({"select": "best"}, "report.select: "),
        ({"alpha": 1.5}, "report.alpha: "),
    ],
)
def test_bad_report_settings_are_one_line(tmp_path, report, line):
    spec = tmp_path / "s.yaml"
    spec.write_text(yaml.safe_dump({**SPEC, "report": report}))
    done = runner.invoke(app, ["validate", str(spec)])
    assert done.exit_code == 2 and done.output.count("\n") == 1, done.output
    assert done.output.startswith(f"error: {spec}: {line}")


@pytest.mark.parametrize(
    ("control", "line"),
    [
        ("knn k=7", "'knn k=7' is not a contestant; contestants: knn k=1, knn k=3"),
        ("knn", "'knn' names 2 contestants; give one of: knn k=1, knn k=3"),
    ],
)
def test_a_control_that_names_no_contestant_or_several_is_refused_before_the_run(tmp_path, control, line):
    """Validation said ok; the run printed 'report in out/report.html', then 'no report:
    ...', and wrote none. The contestants are the labels the comparison gives the cells."""
    spec = tmp_path / "s.yaml"
    one = {**SPEC, "datasets": ["iris"], "algorithms": [{"name": "knn", "params": {"k": [1, 3]}}]}
    spec.write_text(yaml.safe_dump({**one, "report": {"control": control}}))
    refused_by_cli(tmp_path, spec, f"report.control: {line}")
    spec.write_text(yaml.safe_dump({**one, "report": {"control": "knn k=3"}}))
    assert runner.invoke(app, ["validate", str(spec)]).exit_code == 0


def test_the_run_says_the_grid_edge_in_its_last_lines(tmp_path):
    spec = tmp_path / "s.yaml"
    one = {**SPEC, "datasets": ["iris"], "algorithms": SPEC["algorithms"][:1], "report": {}}
    spec.write_text(yaml.safe_dump(one))
    done = runner.invoke(app, ["run", str(spec), "--out", str(tmp_path / "out"), "--no-report"])
    assert done.exit_code == 0, done.output
    last = done.stdout.strip().splitlines()[-1]
    assert last == (
        "note: tuned chose k = 15, the smallest value of its grid, in 2 of 3 folds (67 %): the best may lie "
        "beyond; widen the grid"
    )
