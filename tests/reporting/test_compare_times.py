"""Times in the comparison: ``knnx compare --metric fit_seconds|predict_seconds|
tune_seconds`` ranks each cell's time once (not once per metric row), lower is better,
marks nothing unless asked, leaves out a contestant that tunes nothing from a
comparison of tuning times, and shows small times with enough decimals."""

import numpy as np
import pandas as pd
import pytest
from test_compare import _fold_results
from typer.testing import CliRunner

from knnx.cli import app
from knnx.reporting.wide import default_digits, render, wide_table
from knnx.results import rows_to_csv
from knnx.stats.compare import compare, paired_tests

runner = CliRunner()


@pytest.fixture
def frame():
    """Two datasets, three contestants, five folds; each cell has two metric rows
    (error and brier) carrying the cell's one fit time; b and c tune, a does not."""
    rng = np.random.default_rng(4)
    values = {(d, c): 0.1 + 0.1 * rng.random(5) for d in ("d1", "d2") for c in ("a", "b", "c")}
    errors = _fold_results(values)
    times = {"a": 0.001, "b": 0.004, "c": 0.02}
    errors["fit_seconds"] = [times[c] * (1 + 0.1 * (i % 5)) for i, c in enumerate(errors["algorithm"])]
    errors["tune_seconds"] = [
        0.5 + 0.01 * (i % 5) if c != "a" else 0.0 for i, c in enumerate(errors["algorithm"])
    ]
    return pd.concat([errors, errors.assign(metric="brier")], ignore_index=True)


def test_a_cells_time_is_counted_once(frame):
    result = compare(frame, "fit_seconds")
    error_rows = frame[frame["metric"] == "error"]
    expected = error_rows.groupby(["dataset", "algorithm"])["fit_seconds"].mean().unstack()
    pd.testing.assert_frame_equal(
        result.means.sort_index(axis=1), expected, check_names=False, check_exact=False, rtol=1e-15
    )
    assert result.ranks.mean(axis=0).tolist() == [1.0, 2.0, 3.0]  # lower is better


def test_times_are_not_marked_unless_asked(frame):
    result = compare(frame, "fit_seconds")
    plain = wide_table(result)
    assert not plain.worse.to_numpy().any() and not plain.marked
    assert "No significance marks: times vary with the machine's load" in render(plain, "md")
    asked = wide_table(result, marks=True)
    times = frame[frame["metric"] == "error"].set_index(["dataset", "algorithm"])["fit_seconds"]
    for d in ("d1", "d2"):
        for c in ("b", "c"):
            p = paired_tests(times[(d, c)].to_numpy(), times[(d, "a")].to_numpy(), 20 / 80)["p_corrected"]
            assert asked.worse.loc[d, c] == (p < 0.05), (d, c, p)
    assert asked.worse.to_numpy().any()


def test_tuning_times_leave_out_what_tunes_nothing(frame):
    result = compare(frame, "tune_seconds", select="all")
    assert list(result.means.columns) == ["b", "c"]
    assert result.left_out["contestant"].tolist() == ["a"]


def test_small_times_get_the_decimals_they_need(frame):
    table = wide_table(compare(frame, "fit_seconds"))
    assert default_digits(table) == 4  # the smallest mean, 0.0012, with two significant digits
    assert "| d1 | – | – | – | **0.0012 ± 0.0002** |" in render(table, "md")
    assert default_digits(wide_table(compare(frame, "error"))) == 4


def test_compare_cli_on_times(frame, tmp_path):
    path = tmp_path / "results.csv"
    path.write_text(rows_to_csv(frame.to_dict("records"), header=True))
    for timing in ("fit_seconds", "predict_seconds", "tune_seconds"):
        done = runner.invoke(app, ["compare", str(path), "--metric", timing])
        assert done.exit_code == 0, done.output
        assert f"{timing}: mean ± standard deviation over the folds" in done.stdout
    marked = runner.invoke(app, ["compare", str(path), "--metric", "fit_seconds", "--marks"])
    assert "▼: significantly worse than the row's best" in marked.stdout


def test_the_report_has_the_time_table(frame, tmp_path):
    from knnx.reporting.html import write_report

    (tmp_path / "results.csv").write_text(rows_to_csv(frame.to_dict("records"), header=True))
    text = write_report(tmp_path).read_text(encoding="utf-8")
    section = text[text.index("<h3>fit_seconds per dataset and contestant</h3>") :]
    section = section[: section.index("</table>")]
    means = compare(frame, "fit_seconds").means
    for d in means.index:
        row = section[section.index(f"<th scope='row'>{d}</th>") :].split("</tr>", 1)[0]
        digits = default_digits(wide_table(compare(frame, "fit_seconds")))
        assert [f"{means.loc[d, c]:.{digits}f}" in row for c in means.columns] == [True] * 3
    assert "No significance marks" in section and "▼" not in section
    assert "<h3>predict_seconds per dataset and contestant</h3>" in text
